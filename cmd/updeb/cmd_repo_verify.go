package main

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/updeb/updeb/internal/repo"
	"github.com/updeb/updeb/pkg/plural"
)

func newRepoVerifyCmd(g *globalOptions) *cobra.Command {
	o := &repoOptions{}
	var keyring string
	cmd := &cobra.Command{
		Use:   "verify [SUITE]",
		Short: "Check what clients get: signatures, dates, every index and every pool file against what is signed",
		Long: `verify checks a suite (every suite when none is named) as apt, aptly and reprepro read it,
and changes nothing: InRelease and Release.gpg signed by a key of the keyring (--keyring, the
key your clients trust; default: the repository's own archive-keyring.gpg), InRelease's text
the Release, its Date not ahead of this machine's clock and its Valid-Until not passed, every
file the Release lists (size, SHA256 and SHA512, its by-hash names, each .gz and .xz against
the uncompressed index), the earlier generations' indexes it still serves by hash to clients
in the middle of an update (updeb-by-hash-kept) against their names, and every pool file a
Packages index names (size, MD5sum, SHA256, SHA512). A suite whose link dists/SUITE is lost
(clients get 404 for it) is a finding too, with the ln -sfn that restores it. Each finding names the file and what to do. Exit 0 when everything matches, 1 when
something does not, 2 for a suite that does not exist or an unreadable keyring. It takes no lock: a
publish that switches a suite while it is checked (and removes the generation checked) is no
finding, the new live generation is checked instead.`,
		Example: `  updeb repo verify --repo /srv/apt
  updeb repo verify --repo /srv/apt --keyring /etc/apt/keyrings/internal.gpg production`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// --keyring "" (an unset variable) would check the repository
			// against its own key, not the clients'.
			if keyring == "" && cmd.Flags().Changed("keyring") {
				return emptyFlag("keyring")
			}
			r, cfg, err := o.openReadOnly(g)
			if err != nil {
				return err
			}
			suite, err := suiteOf(o.suite, args, cfg.Repo.Suite)
			if err != nil {
				return err
			}
			own := keyring == ""
			if own {
				keyring = filepath.Join(o.dir, "archive-keyring.gpg")
			}
			kr, err := loadKeyring(cmd.Context(), keyring)
			if own && errors.Is(err, fs.ErrNotExist) {
				return invalidInput(err, "updeb publish writes archive-keyring.gpg into the repository: is --repo (or repo: dir:) its folder? Else give the keyring clients trust with --keyring")
			}
			if err != nil {
				return err
			}
			checks, err := r.Verify(cmd.Context(), suite, kr, time.Now())
			if err != nil {
				return err
			}
			findings := 0
			for _, c := range checks {
				findings += len(c.Findings)
			}
			if g.json {
				err = printJSON(cmd.OutOrStdout(), cmd, struct {
					Suites []repo.SuiteCheck `json:"suites"`
				}{checks})
			} else {
				err = printRepoChecks(cmd, checks)
			}
			if err != nil {
				return err
			}
			if findings > 0 {
				return checkFailed(fmt.Errorf("%d finding(s) in %s", findings, o.dir), "see the findings above")
			}
			return nil
		},
	}
	o.addFlags(cmd, false)
	cmd.Flags().Lookup("suite").Usage = "only this suite (or as an argument; default: config repo.suite, else every suite)"
	cmd.Flags().StringVar(&keyring, "keyring", "", "the keyring clients verify the repository with (default: the repository's archive-keyring.gpg)")
	return jsonOutput(cmd, 1)
}

// printRepoChecks prints a line per suite, then its findings.
func printRepoChecks(cmd *cobra.Command, checks []repo.SuiteCheck) error {
	out := cmd.OutOrStdout()
	for _, c := range checks {
		verdict := "OK"
		if n := len(c.Findings); n > 0 {
			verdict = fmt.Sprintf("%d finding(s)", n)
		}
		signer := "no good signature"
		if c.Signer != "" {
			signer = "signed by " + c.Signer
		}
		if _, err := fmt.Fprintf(out, "%s: generation %d, %s, %s, %s, %s (%s): %s\n",
			c.Suite, c.Generation, signer, plural.Count(c.Indexes, "index file", "index files"), plural.Count(c.Packages, "package", "packages"),
			plural.Count(c.PoolFiles, "pool file", "pool files"), plural.Count(c.PoolBytes, "byte", "bytes"), verdict); err != nil {
			return err
		}
		for _, f := range c.Findings {
			if _, err := fmt.Fprintf(out, "  %s: %s\n", f.Path, f.Problem); err != nil {
				return err
			}
		}
	}
	return nil
}
