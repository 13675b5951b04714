package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/updeb/updeb/internal/repo"
)

func newRepoCmd(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "repo",
		Short: "Inspect and maintain the apt repository",
		Example: `  updeb repo list --repo /srv/apt
  updeb repo remove --repo /srv/apt --key repo.secret.asc kubernetes-client=1.30.0-1
  updeb repo refresh --repo /srv/apt --key repo.secret.asc
  updeb repo promote --repo /srv/apt --key repo.secret.asc --from staging --to production kubernetes-client=1.31.4-1
  updeb repo history --repo /srv/apt production
  updeb repo rollback --repo /srv/apt --key repo.secret.asc production
  updeb repo gc --repo /srv/apt --dry-run
  updeb repo verify --repo /srv/apt`,
	}
	cmd.AddCommand(newRepoListCmd(g), newRepoRemoveCmd(g), newRepoRefreshCmd(g), newRepoPromoteCmd(g),
		newRepoHistoryCmd(g), newRepoRollbackCmd(g), newRepoGCCmd(g), newRepoVerifyCmd(g))
	return cmd
}

func newRepoListCmd(g *globalOptions) *cobra.Command {
	o := &repoOptions{}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the published packages",
		Example: `  updeb repo list --repo /srv/apt
  updeb repo list --repo /srv/apt --suite bookworm-wikimedia --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, cfg, err := o.openReadOnly(g)
			if err != nil {
				return err
			}
			suite := first(o.suite, cfg.Repo.Suite) // every suite unless --suite or the config names one
			entries, err := r.List(suite)
			if err != nil {
				return err
			}
			if g.json {
				if entries == nil {
					entries = []repo.Entry{}
				}
				return printJSON(cmd.OutOrStdout(), cmd, struct {
					Packages []repo.Entry `json:"packages"`
				}{entries})
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "SUITE\tCOMPONENT\tPACKAGE\tVERSION\tARCH\tSIZE")
			for _, e := range entries {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\n", e.Suite, e.Component, e.Package, e.Version, e.Architecture, e.Size)
			}
			return tw.Flush()
		},
	}
	o.addFlags(cmd, false)
	cmd.Flags().Lookup("suite").Usage = "only this suite (default: every suite)"
	return jsonOutput(cmd, 1)
}

func newRepoRemoveCmd(g *globalOptions) *cobra.Command {
	o := &repoOptions{}
	var arch string
	cmd := &cobra.Command{
		Use:   "remove NAME[=VERSION]...",
		Short: "Retire packages from a suite's component (their pool files stay)",
		Long: `remove retires packages from a suite: every version of NAME, or NAME=VERSION, on
every architecture or --arch's. Without --component it finds the component that holds
each package itself; a package in several components is refused (exit 2) with the list,
and --component picks one. Every package named is removed, as one generation, or none is
(one not published: exit 2). Their pool files stay until 'updeb repo gc'.`,
		Example: `  updeb repo remove --key repo.secret.asc kubernetes-client=1.30.0-1
  updeb repo remove --suite bookworm-wikimedia --component component/kubernetes136 --arch arm64 kubernetes-client136`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := o.open(g)
			if err != nil {
				return err
			}
			// the suite as publish finds it; the component named, else the
			// one that holds each package (repo.Repo.RemoveAll)
			suite, _, _ := o.target("", "")
			sel, err := parseSelectors(args)
			if err != nil {
				return err
			}
			removed, err := r.RemoveAll(cmd.Context(), suite, o.component, sel, arch)
			if err != nil {
				return err
			}
			if g.json {
				if removed == nil {
					removed = []repo.Entry{}
				}
				return printJSON(cmd.OutOrStdout(), cmd, struct {
					Removed []repo.Entry `json:"removed"`
				}{removed})
			}
			for _, e := range removed {
				if _, err := fmt.Fprintf(cmd.OutOrStdout(), "removed %s %s %s from %s/%s\n", e.Package, e.Version, e.Architecture, e.Suite, e.Component); err != nil {
					return err
				}
			}
			return nil
		},
	}
	o.addFlags(cmd, true)
	cmd.Flags().Lookup("component").Usage = "the component to remove from (default: the one that holds the package; several are refused, listed)"
	cmd.Flags().StringVar(&arch, "arch", "", "only this architecture (default: every one)")
	return jsonOutput(cmd, 1)
}

// parseSelectors reads NAME or NAME=VERSION arguments. An empty name, or
// an empty VERSION after "=" ("NAME=$VERSION" with VERSION unset, which
// would name every version), is refused.
func parseSelectors(args []string) ([]repo.Selector, error) {
	sel := make([]repo.Selector, 0, len(args))
	for _, a := range args {
		name, version, eq := strings.Cut(a, "=")
		if name == "" || eq && version == "" {
			return nil, usageErrorf("%q: want NAME or NAME=VERSION", a)
		}
		sel = append(sel, repo.Selector{Name: name, Version: version})
	}
	return sel, nil
}
