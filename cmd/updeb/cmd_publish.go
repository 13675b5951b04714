package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/updeb/updeb/internal/config"
	"github.com/updeb/updeb/internal/confined"
	"github.com/updeb/updeb/internal/pipeline"
	"github.com/updeb/updeb/internal/repo"
	"github.com/updeb/updeb/internal/signkey"
	"github.com/updeb/updeb/pkg/archive"
	"github.com/updeb/updeb/pkg/control"
	"github.com/updeb/updeb/pkg/deb"
	"github.com/updeb/updeb/pkg/dsse"
)

// readControl returns a .deb's control paragraph, read by our own reader,
// which refuses a package that dpkg would refuse or that would break the
// repository's index (see deb.Inspect).
func readControl(ctx context.Context, path string) (control.Paragraph, error) {
	info, err := deb.InspectFile(ctx, path, archive.Limits{})
	if err != nil {
		return control.Paragraph{}, err
	}
	return info.Control, nil
}

// repoOptions are the flags every command that works on the repository shares.
// Each falls back to the config file's repo: section, then to a default (see
// resolve); for publish, a package's own recipe may name its suite and
// component (recorded in its provenance record) and wins over the config.
// Suite settings (origin, label, ...) given by a flag are changes asked of
// the suite; the config's only set up a new suite (a suite's stored setting
// wins over the config, with a warning when they differ); neither keeps what
// the suite stores.
type repoOptions struct {
	dir              string
	suite            string
	component        string
	keyFiles         []string
	origin           string
	label            string
	codename         string
	description      string
	architectures    []string
	validFor         time.Duration
	keep             int
	allowFieldChange bool

	changed                func(flag string) bool // nil for commands that do not write
	cfgSuite, cfgComponent string                 // from the config, filled by resolve
	settings               repo.SettingsChange
	defaults               repo.SettingsChange // the config's: a new suite's settings only
}

func (o *repoOptions) addFlags(cmd *cobra.Command, writes bool) {
	f := cmd.Flags()
	f.StringVar(&o.dir, "repo", "", "repository folder (pool/ and dists/ live here; default: config repo.dir, else ./repo)")
	f.StringVar(&o.suite, "suite", "", "suite (dists/<suite>; default: the recipe's, else config repo.suite, else stable)")
	if !writes {
		return
	}
	o.changed = f.Changed
	f.StringVar(&o.component, "component", "", "component, for example component/kubernetes131 (default: the recipe's, else config repo.component, else main)")
	f.StringArrayVar(&o.keyFiles, "key", nil, "armored secret signing key (from 'updeb keys generate'), repeatable: every suite written is signed by each (a key rotation); default: config repo.key and repo.keys, else $UPDEB_SIGNING_KEY")
	f.StringVar(&o.origin, "origin", "", "Release Origin field (stored with the suite; default: the suite's)")
	f.StringVar(&o.label, "label", "", "Release Label field (stored with the suite; default: the suite's)")
	f.StringVar(&o.codename, "codename", "", "Release Codename field (stored with the suite; default: the suite's, at creation the suite name)")
	f.StringVar(&o.description, "description", "", "Release Description field (stored with the suite)")
	f.StringSliceVar(&o.architectures, "architectures", nil, "architectures that always get an index, added to the suite's (Architecture: all packages go to each)")
	f.DurationVar(&o.validFor, "valid-for", 0, "Valid-Until = Date + this duration, stored with the suite (0: none); renew with 'updeb repo refresh'")
	f.IntVar(&o.keep, "keep", 0, fmt.Sprintf("generations with distinct packages kept for rollback, stored with the suite (default: the suite's, at creation %d)", repo.DefaultKeep))
	f.BoolVar(&o.allowFieldChange, "allow-field-change", false, "make a change apt clients refuse until an administrator accepts it on each (Origin, Label, Codename) or that drops a signing key")
}

// resolve fills what no flag gave from the config's repo: section and the
// defaults. Suite and component stay empty when neither names them, so that
// publish can use each package's recipe first (see target).
func (o *repoOptions) resolve(c *config.Config) {
	r := c.Repo
	o.dir = first(o.dir, r.Dir, "repo")
	if len(o.keyFiles) == 0 {
		for _, k := range append([]string{r.Key}, r.Keys...) {
			if k != "" {
				o.keyFiles = append(o.keyFiles, k)
			}
		}
	}
	if len(o.keyFiles) == 0 && getenv("UPDEB_SIGNING_KEY") != "" {
		o.keyFiles = []string{getenv("UPDEB_SIGNING_KEY")}
	}
	o.cfgSuite, o.cfgComponent = r.Suite, r.Component
	if o.changed == nil {
		return // a command that does not write
	}
	// A flag changes the suite; the config's values only set up a new suite
	// (repo.Options.Defaults): a suite's stored settings win over them, with
	// a warning when they differ.
	s, d := &o.settings, &o.defaults
	s.Origin, d.Origin = o.flag("origin", o.origin), nonEmpty(r.Origin)
	s.Label, d.Label = o.flag("label", o.label), nonEmpty(r.Label)
	s.Codename, d.Codename = o.flag("codename", o.codename), nonEmpty(r.Codename)
	s.Description, d.Description = o.flag("description", o.description), nonEmpty(r.Description)
	s.Architectures, d.Architectures = o.architectures, r.Architectures
	if o.changed("valid-for") {
		s.ValidFor = &o.validFor
	}
	if v := time.Duration(r.ValidFor); v > 0 {
		d.ValidFor = &v
	}
	if o.changed("keep") {
		s.Keep = &o.keep
	}
	if r.Keep > 0 {
		d.Keep = &r.Keep
	}
	s.AllowFieldChange = o.allowFieldChange
}

// flag returns the flag's value when it was given (even empty), else nil:
// keep what the suite stores.
func (o *repoOptions) flag(flag, value string) *string {
	if o.changed(flag) {
		return &value
	}
	return nil
}

// nonEmpty is a config value, nil when unset.
func nonEmpty(v string) *string {
	if v == "" {
		return nil
	}
	return &v
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
	if data, err := confined.ReadFile(deb+pipeline.ProvenanceSuffix, dsse.MaxSize); err == nil {
		if env, err := dsse.Parse(data); err == nil {
			data = env.Payload // (records of updeb before 2026-11 are the bare statement)
		}
		json.Unmarshal(data, &st) //nolint:errcheck // no record means no recipe preference
	}
	p := st.Predicate.BuildDefinition.ExternalParameters
	return first(o.suite, p.Suite, o.cfgSuite, "stable"), first(o.component, p.Component, o.cfgComponent, "main")
}

// open loads the config and the signing keys and returns the repository.
func (o *repoOptions) open(g *globalOptions) (*repo.Repo, error) {
	cfg, err := g.loadConfig()
	if err != nil {
		return nil, err
	}
	o.resolve(cfg)
	if len(o.keyFiles) == 0 {
		return nil, usageErrorf("no signing key: pass --key FILE or set UPDEB_SIGNING_KEY")
	}
	var signers []*repo.Signer
	for _, keyFile := range o.keyFiles {
		data, err := confined.ReadFile(keyFile, signkey.MaxFileSize)
		if err != nil {
			return nil, invalidInput(err, "create one with 'updeb keys generate'")
		}
		s, err := repo.ReadSigner(bytes.NewReader(data), keyFile)
		if err != nil {
			return nil, err
		}
		signers = append(signers, s)
	}
	signer, err := repo.JoinSigners(signers...)
	if err != nil {
		return nil, err
	}
	return repo.Open(o.dir, repo.Options{Settings: o.settings, Defaults: o.defaults, Signer: signer, Actor: actor(), Now: time.Now, Logger: g.logger()}), nil
}

// actor names who runs updeb, user@host, for the repository's history.
func actor() string {
	name := getenv("USER")
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	host, _ := os.Hostname()
	return name + "@" + host
}

// openReadOnly loads the config and returns the repository for commands that
// do not sign (list, history, gc).
func (o *repoOptions) openReadOnly(g *globalOptions) (*repo.Repo, *config.Config, error) {
	cfg, err := g.loadConfig()
	if err != nil {
		return nil, nil, err
	}
	o.resolve(cfg)
	return repo.Open(o.dir, repo.Options{Logger: g.logger()}), cfg, nil
}

func newPublishCmd(g *globalOptions) *cobra.Command {
	o := &repoOptions{}
	cmd := &cobra.Command{
		Use:   "publish DEB...",
		Short: "Add packages to the apt repository and re-sign it",
		Long: `publish copies .deb files into the repository's pool and switches in a new signed
generation of the suite's metadata atomically. Every version stays listed. A package
already published with the same bytes is left as it is; with other bytes the publish is
refused (exit 1) and the repository is unchanged.

A suite keeps its settings (Origin, Label, Codename, Description, architectures, signing
keys, valid-for, keep): a flag changes them; the config's repo: values set up a new suite
only and never override what a suite stores (a warning names any that differ, and the
flag that changes it); nothing given keeps them. A change apt clients refuse (Origin, Label, Codename, dropping a signing key) is refused
(exit 1) unless --allow-field-change.`,
		Example: `  updeb publish --repo /srv/apt --key repo.secret.asc out/*.deb
  updeb publish --suite bookworm-wikimedia --component component/kubernetes131 \
      --origin Wikimedia --architectures amd64,arm64 kubernetes-client_1.31.4-1_amd64.deb`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := o.open(g)
			if err != nil {
				return err
			}
			// One generation per suite, with every component of it: atomic.
			groups := map[string]map[string][]repo.Package{}
			var order []string
			for _, path := range args {
				if dir := filepath.Dir(path); pipeline.PendingCommit(dir) {
					return invalidInput(fmt.Errorf("%s: the build that wrote %s was killed while it moved a recipe's packages in; some may be missing", path, dir),
						"run 'updeb build' with the same output folder (it finishes the move), then publish again")
				}
				ctl, err := readControl(cmd.Context(), path)
				if err != nil {
					return invalidInput(err, "the repository is unchanged; nothing is published when one package is refused")
				}
				s, c := o.target(path)
				if groups[s] == nil {
					groups[s] = map[string][]repo.Package{}
					order = append(order, s)
				}
				groups[s][c] = append(groups[s][c], repo.Package{Path: path, Control: ctl})
			}
			res := &repo.PublishResult{}
			var summary []string
			for _, suite := range order {
				one, err := r.PublishComponents(cmd.Context(), suite, groups[suite])
				if err != nil {
					return err
				}
				res.Added = append(res.Added, one.Added...)
				res.Unchanged = append(res.Unchanged, one.Unchanged...)
				res.Generation = one.Generation
				for _, c := range slices.Sorted(maps.Keys(groups[suite])) {
					summary = append(summary, fmt.Sprintf("suite %s component %s: generation %d in %s", suite, c, one.Generation, strings.TrimSuffix(o.dir, "/")))
				}
			}
			if g.json {
				return printJSON(cmd.OutOrStdout(), cmd, res)
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
	return jsonOutput(cmd, 1)
}
