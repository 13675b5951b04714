package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/updeb/updeb/internal/repo"
)

func newRepoPromoteCmd(g *globalOptions) *cobra.Command {
	o := &repoOptions{}
	var from, to string
	cmd := &cobra.Command{
		Use:   "promote --from SUITE[/COMPONENT] --to SUITE[/COMPONENT] [NAME[=VERSION]...]",
		Short: "List in another suite exactly the packages published in one (every package when none is named)",
		Long: `promote lists in the target suite the very packages published in the source: the same
pool file, so the same bytes and SHA256, never rebuilt. Without names, every package of the
source (component) is promoted; NAME promotes every version of a package, NAME=VERSION one.
Packages go to the target's component when --to names one, else to the component they come
from. A version the target already lists with other bytes is refused (exit 1) and nothing
changes; one it lists with the same bytes is left as it is. The target's history records
each package and where it came from ('updeb repo history').`,
		Example: `  updeb repo promote --key repo.secret.asc --from staging --to production
  updeb repo promote --key repo.secret.asc --from staging/component/kubernetes136 \
      --to bookworm-wikimedia kubernetes-client=1.36.0-3 kubernetes-node=1.36.0-3`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if from == "" || to == "" {
				return usageErrorf("promote needs --from SUITE[/COMPONENT] and --to SUITE[/COMPONENT]")
			}
			src, err := repo.ParsePlace(from)
			if err != nil {
				return &inputError{err: fmt.Errorf("--from: %w", err)}
			}
			dst, err := repo.ParsePlace(to)
			if err != nil {
				return &inputError{err: fmt.Errorf("--to: %w", err)}
			}
			sel, err := parseSelectors(args)
			if err != nil {
				return err
			}
			r, err := o.open(g)
			if err != nil {
				return err
			}
			res, err := r.Promote(cmd.Context(), src, dst, sel)
			if err != nil {
				return err
			}
			if g.json {
				return printJSON(cmd.OutOrStdout(), cmd, res)
			}
			out := cmd.OutOrStdout()
			for _, e := range res.Added {
				fmt.Fprintf(out, "promoted  %s %s %s -> %s/%s (%s, sha256 %s)\n", e.Package, e.Version, e.Architecture, e.Suite, e.Component, e.Filename, e.SHA256)
			}
			for _, e := range res.Unchanged {
				fmt.Fprintf(out, "unchanged %s %s %s (already in %s/%s with the same bytes)\n", e.Package, e.Version, e.Architecture, e.Suite, e.Component)
			}
			_, err = fmt.Fprintf(out, "suite %s: generation %d\n", dst.Suite, res.Generation)
			return err
		},
	}
	o.addFlags(cmd, true)
	f := cmd.Flags()
	f.StringVar(&from, "from", "", "source SUITE or SUITE/COMPONENT (required)")
	f.StringVar(&to, "to", "", "target SUITE or SUITE/COMPONENT (required; without a component, each package keeps its own)")
	notTaken(cmd, "--from and --to name the suites and components", "suite", "component")
	return jsonOutput(cmd, 1)
}
