package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/updeb/updeb/internal/build"
	"github.com/updeb/updeb/internal/config"
	"github.com/updeb/updeb/internal/repo"
	"github.com/updeb/updeb/pkg/control"
	"github.com/updeb/updeb/pkg/deb"
	"github.com/updeb/updeb/pkg/dsse"
)

// readControl returns a .deb's control paragraph, read by our own reader.
func readControl(path string) (control.Paragraph, error) {
	info, err := deb.InspectFile(path)
	if err != nil {
		return control.Paragraph{}, err
	}
	return info.Control, nil
}

// repoOptions are the flags every command that works on the repository shares.
// Each falls back to the config file's repo: section, then to a default (see
// resolve); for publish, a package's own recipe may name its suite and
// component (recorded in its provenance record) and wins over the config.
type repoOptions struct {
	dir           string
	suite         string
	component     string
	keyFile       string
	origin        string
	label         string
	codename      string
	description   string
	architectures []string
	validFor      time.Duration

	cfgSuite, cfgComponent string // from the config, filled by resolve
}

func (o *repoOptions) addFlags(cmd *cobra.Command, writes bool) {
	f := cmd.Flags()
	f.StringVar(&o.dir, "repo", "", "repository folder (pool/ and dists/ live here; default: config repo.dir, else ./repo)")
	f.StringVar(&o.suite, "suite", "", "suite (dists/<suite>; default: the recipe's, else config repo.suite, else stable)")
	if !writes {
		return
	}
	f.StringVar(&o.component, "component", "", "component, for example component/kubernetes131 (default: the recipe's, else config repo.component, else main)")
	f.StringVar(&o.keyFile, "key", "", "armored secret signing key (from 'updeb keys generate'); default $UPDEB_SIGNING_KEY")
	f.StringVar(&o.origin, "origin", "", "Release Origin field")
	f.StringVar(&o.label, "label", "", "Release Label field")
	f.StringVar(&o.codename, "codename", "", "Release Codename field (default: the suite)")
	f.StringVar(&o.description, "description", "", "Release Description field")
	f.StringSliceVar(&o.architectures, "architectures", nil, "architectures that always get an index (Architecture: all packages go to each)")
	f.DurationVar(&o.validFor, "valid-for", 0, "add Valid-Until = Date + this duration (0: none)")
}

// resolve fills what no flag gave from the config's repo: section and the
// defaults. Suite and component stay empty when neither names them, so that
// publish can use each package's recipe first (see target).
func (o *repoOptions) resolve(c *config.Config) {
	r := c.Repo
	o.dir = first(o.dir, r.Dir, "repo")
	o.keyFile = first(o.keyFile, r.Key, getenv("UPDEB_SIGNING_KEY"))
	o.origin = first(o.origin, r.Origin)
	o.label = first(o.label, r.Label)
	o.codename = first(o.codename, r.Codename)
	o.description = first(o.description, r.Description)
	if len(o.architectures) == 0 {
		o.architectures = r.Architectures
	}
	if o.validFor == 0 {
		o.validFor = time.Duration(r.ValidFor)
	}
	o.cfgSuite, o.cfgComponent = r.Suite, r.Component
}

// target is where one .deb goes: the flag, else the suite and component its
// recipe names (from the provenance record build wrote beside it), else the
// config's, else stable/main.
func (o *repoOptions) target(deb string) (suite, component string) {
	var st struct {
		Predicate struct {
			BuildDefinition struct {
				ExternalParameters struct {
					Component string `json:"component"`
					Suite     string `json:"suite"`
				} `json:"externalParameters"`
			} `json:"buildDefinition"`
		} `json:"predicate"`
	}
	if data, err := os.ReadFile(deb + build.ProvenanceSuffix); err == nil {
		if env, err := dsse.Parse(data); err == nil {
			data = env.Payload // (records of updeb before 2026-11 are the bare statement)
		}
		json.Unmarshal(data, &st) //nolint:errcheck // no record means no recipe preference
	}
	p := st.Predicate.BuildDefinition.ExternalParameters
	return first(o.suite, p.Suite, o.cfgSuite, "stable"), first(o.component, p.Component, o.cfgComponent, "main")
}

// open loads the config and signing key and returns the repository.
func (o *repoOptions) open(g *globalOptions) (*repo.Repo, error) {
	cfg, err := g.loadConfig()
	if err != nil {
		return nil, err
	}
	o.resolve(cfg)
	keyFile := o.keyFile
	if keyFile == "" {
		return nil, usageErrorf("no signing key: pass --key FILE or set UPDEB_SIGNING_KEY")
	}
	f, err := os.Open(keyFile)
	if err != nil {
		return nil, invalidInput(err, "create one with 'updeb keys generate'")
	}
	defer f.Close()
	signer, err := repo.ReadSigner(f, keyFile)
	if err != nil {
		return nil, err
	}
	return repo.Open(o.dir, repo.Options{
		Release: repo.ReleaseConfig{Origin: o.origin, Label: o.label, Codename: o.codename, Description: o.description,
			Architectures: o.architectures, ValidFor: o.validFor},
		Signer: signer,
		Now:    time.Now,
		Logger: g.logger(),
	}), nil
}

func newPublishCmd(g *globalOptions) *cobra.Command {
	o := &repoOptions{}
	cmd := &cobra.Command{
		Use:   "publish DEB...",
		Short: "Add packages to the apt repository and re-sign it",
		Long: `publish copies .deb files into the repository's pool and switches in a new signed
generation of the suite's metadata atomically. Every version stays listed. A package
already published with the same bytes is left as it is; with other bytes the publish is
refused (exit 1) and the repository is unchanged.`,
		Example: `  updeb publish --repo /srv/apt --key repo.secret.asc out/*.deb
  updeb publish --suite bookworm-wikimedia --component component/kubernetes131 \
      --origin Wikimedia --architectures amd64,arm64 kubernetes-client_1.31.4-1_amd64.deb`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := o.open(g)
			if err != nil {
				return err
			}
			// One generation per suite and component; each is atomic.
			type dest struct{ suite, component string }
			groups := map[dest][]repo.Package{}
			var order []dest
			for _, path := range args {
				ctl, err := readControl(path)
				if err != nil {
					return invalidInput(err, "")
				}
				s, c := o.target(path)
				d := dest{s, c}
				if groups[d] == nil {
					order = append(order, d)
				}
				groups[d] = append(groups[d], repo.Package{Path: path, Control: ctl})
			}
			res := &repo.PublishResult{}
			var summary []string
			for _, d := range order {
				one, err := r.Publish(cmd.Context(), d.suite, d.component, groups[d])
				if err != nil {
					return err
				}
				res.Added = append(res.Added, one.Added...)
				res.Unchanged = append(res.Unchanged, one.Unchanged...)
				res.Generation = one.Generation
				summary = append(summary, fmt.Sprintf("suite %s component %s: generation %d in %s", d.suite, d.component, one.Generation, strings.TrimSuffix(o.dir, "/")))
			}
			if g.json {
				return writeJSON(cmd.OutOrStdout(), res)
			}
			out := cmd.OutOrStdout()
			for _, e := range res.Added {
				fmt.Fprintf(out, "added     %s %s %s -> %s\n", e.Package, e.Version, e.Architecture, e.Filename)
			}
			for _, e := range res.Unchanged {
				fmt.Fprintf(out, "unchanged %s %s %s (already published with the same bytes)\n", e.Package, e.Version, e.Architecture)
			}
			_, err = fmt.Fprintln(out, strings.Join(summary, "\n"))
			return err
		},
	}
	o.addFlags(cmd, true)
	return cmd
}
