package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/updeb/updeb/pkg/control"
	"github.com/updeb/updeb/pkg/deb"
	"github.com/updeb/updeb/pkg/repo"
)

// readControl returns a .deb's control paragraph, read by our own reader.
func readControl(path string) (control.Paragraph, error) {
	info, err := deb.InspectFile(path)
	if err != nil {
		return control.Paragraph{}, err
	}
	return info.Control, nil
}

// repoOptions are the flags every command that writes the repository shares.
// They map one to one onto the config file's repo: section once it exists.
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
}

func (o *repoOptions) addFlags(cmd *cobra.Command, writes bool) {
	f := cmd.Flags()
	f.StringVar(&o.dir, "repo", "repo", "repository folder (pool/ and dists/ live here)")
	f.StringVar(&o.suite, "suite", "stable", "suite (dists/<suite>)")
	if !writes {
		return
	}
	f.StringVar(&o.component, "component", "main", "component, for example component/kubernetes131")
	f.StringVar(&o.keyFile, "key", "", "armored secret signing key (from 'updeb keys generate'); default $UPDEB_SIGNING_KEY")
	f.StringVar(&o.origin, "origin", "", "Release Origin field")
	f.StringVar(&o.label, "label", "", "Release Label field")
	f.StringVar(&o.codename, "codename", "", "Release Codename field (default: the suite)")
	f.StringVar(&o.description, "description", "", "Release Description field")
	f.StringSliceVar(&o.architectures, "architectures", nil, "architectures that always get an index (Architecture: all packages go to each)")
	f.DurationVar(&o.validFor, "valid-for", 0, "add Valid-Until = Date + this duration (0: none)")
}

// open loads the signing key and returns the repository.
func (o *repoOptions) open(g *globalOptions) (*repo.Repo, error) {
	keyFile := o.keyFile
	if keyFile == "" {
		keyFile = getenv("UPDEB_SIGNING_KEY")
	}
	if keyFile == "" {
		return nil, usageErrorf("no signing key: pass --key FILE or set UPDEB_SIGNING_KEY")
	}
	f, err := os.Open(keyFile)
	if err != nil {
		return nil, withCode(exitUsage, err, "create one with 'updeb keys generate'")
	}
	defer f.Close()
	signer, err := repo.ReadSigner(f, keyFile)
	if err != nil {
		return nil, classifyRepoError(err)
	}
	return repo.Open(o.dir, repo.Options{
		Release: repo.ReleaseConfig{Origin: o.origin, Label: o.label, Codename: o.codename, Description: o.description,
			Architectures: o.architectures, ValidFor: o.validFor},
		Signer: signer,
		Now:    time.Now,
		Logger: g.logger(),
	}), nil
}

// classifyRepoError maps pkg/repo errors onto exit codes.
func classifyRepoError(err error) error {
	var conflict *repo.ConflictError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &conflict):
		return withCode(exitCheck, err, "the repository is unchanged; give the new build a new version or revision")
	case errors.Is(err, repo.ErrWeakKey):
		return withCode(exitUsage, err, "generate an Ed25519 key with 'updeb keys generate'")
	case errors.Is(err, repo.ErrInvalid), errors.Is(err, repo.ErrKey), errors.Is(err, repo.ErrNotFound), errors.Is(err, repo.ErrNotManaged):
		return withCode(exitUsage, err, "")
	}
	return withCode(exitNetwork, err, "")
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
			pkgs := make([]repo.Package, 0, len(args))
			for _, path := range args {
				ctl, err := readControl(path)
				if err != nil {
					return withCode(exitUsage, err, "")
				}
				pkgs = append(pkgs, repo.Package{Path: path, Control: ctl})
			}
			res, err := r.Publish(cmd.Context(), o.suite, o.component, pkgs)
			if err != nil {
				return classifyRepoError(err)
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
			_, err = fmt.Fprintf(out, "suite %s generation %d in %s\n", o.suite, res.Generation, strings.TrimSuffix(o.dir, "/"))
			return err
		},
	}
	o.addFlags(cmd, true)
	return cmd
}
