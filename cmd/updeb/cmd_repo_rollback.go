package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newRepoRollbackCmd(g *globalOptions) *cobra.Command {
	o := &repoOptions{}
	var to int
	cmd := &cobra.Command{
		Use:   "rollback SUITE [--to GENERATION]",
		Short: "Make an earlier generation's packages live again, as a new generation",
		Long: `rollback makes the packages of a kept generation live again (default: the newest kept
generation whose packages differ from the live ones, which undoes the last change). It is
written as a new generation, dated now and signed with the current keys and settings, and
switched in atomically: a client that already updated accepts it with no warning and sees
the earlier packages. Nodes keep what they installed: apt never downgrades on its own, so
a node that upgraded to a withdrawn version stays on it until told the earlier version
(Puppet's ensure => VERSION, or apt-get install --allow-downgrades NAME=VERSION).
'updeb repo history SUITE' lists the kept generations.`,
		Example: `  updeb repo rollback --key repo.secret.asc bookworm-wikimedia
  updeb repo rollback --key repo.secret.asc bookworm-wikimedia --to 41`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("to") && to < 1 {
				return usageErrorf("--to %d: generations are numbered from 1 (see 'updeb repo history %s')", to, args[0])
			}
			r, err := o.open(g)
			if err != nil {
				return err
			}
			res, err := r.Rollback(cmd.Context(), args[0], to)
			if err != nil {
				return err
			}
			if g.json {
				return printJSON(cmd.OutOrStdout(), cmd, res)
			}
			out := cmd.OutOrStdout()
			for _, e := range res.Removed {
				fmt.Fprintf(out, "withdrawn %s %s %s (%s)\n", e.Package, e.Version, e.Architecture, e.Component)
			}
			for _, e := range res.Added {
				fmt.Fprintf(out, "restored  %s %s %s (%s)\n", e.Package, e.Version, e.Architecture, e.Component)
			}
			_, err = fmt.Fprintf(out, "suite %s: the packages of generation %d are live as generation %d\n", res.Suite, res.To, res.Generation)
			return err
		},
	}
	o.addFlags(cmd, true)
	cmd.Flags().IntVar(&to, "to", 0, "the generation to return to (default: the newest kept one with other packages than the live one)")
	notTaken(cmd, "the suite is its argument, and every component of it is rolled back", "suite", "component")
	return jsonOutput(cmd, 1)
}
