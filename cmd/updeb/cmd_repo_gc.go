package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/updeb/updeb/pkg/plural"
)

func newRepoGCCmd(g *globalOptions) *cobra.Command {
	o := &repoOptions{}
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "gc [--dry-run]",
		Short: "Remove old generations and the pool files no kept generation refers to",
		Long: `gc removes every generation a suite no longer keeps (its keep setting), leftovers of
interrupted writes, and every pool file that no kept generation of any suite lists: neither
in its own indexes nor in those of the generations it replaced within the last hour, which it
serves by hash to clients in the middle of an update. The digest of each removed package stays recorded, so its version
can never come back with other bytes. --dry-run lists what would go and removes nothing
(a user who may read the repository but not write it can run it).
A repository with a suite updeb does not manage, or with something in pool/ that no index lists
and updeb never writes there (a symlink: keep a pool on another disk by mounting it), is
refused (exit 2): nothing is removed.`,
		Example: `  updeb repo gc --repo /srv/apt --dry-run
  updeb repo gc --repo /srv/apt`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, _, err := o.openReadOnly(g)
			if err != nil {
				return err
			}
			res, err := r.GC(cmd.Context(), dryRun)
			if err != nil {
				return err
			}
			if g.json {
				return printJSON(cmd.OutOrStdout(), cmd, res)
			}
			out := cmd.OutOrStdout()
			verb := "removed"
			if dryRun {
				verb = "would remove"
			}
			for _, gen := range res.Generations {
				fmt.Fprintf(out, "%s generation %s\n", verb, gen)
			}
			for _, f := range res.PoolFiles {
				fmt.Fprintf(out, "%s %s\n", verb, f)
			}
			_, err = fmt.Fprintf(out, "%s %s, %s (%s)\n", verb, plural.Count(len(res.Generations), "generation", "generations"),
				plural.Count(len(res.PoolFiles), "pool file", "pool files"), plural.Count(res.Bytes, "byte", "bytes"))
			return err
		},
	}
	o.addFlags(cmd, false)
	notTaken(cmd, "it collects the generations and pool files of every suite", "suite")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "list what would be removed; remove nothing")
	return jsonOutput(cmd, 1)
}
