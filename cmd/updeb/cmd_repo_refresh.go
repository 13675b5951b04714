package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/updeb/updeb/internal/repo"
)

func newRepoRefreshCmd(g *globalOptions) *cobra.Command {
	o := &repoOptions{}
	cmd := &cobra.Command{
		Use:   "refresh [SUITE...]",
		Short: "Re-sign suites with a new Date and Valid-Until (every suite when none is named)",
		Long: `refresh writes each suite (every suite when none is named) as a new generation with
the same packages, a new Date and, for a suite with a valid-for, a new Valid-Until, signed
with the keys given (--key, repeatable: during a key rotation sign with the old and the new
key, so clients trusting either accept the repository). It reads no package and recompresses
no index, so it is cheap to run from a timer; clients that already updated pick up the new
signature with no warning. A suite that cannot be refreshed (exit 1 or 2, with the reason)
does not stop the others: every other suite is refreshed. Settings flags change the suites' stored settings as in publish.`,
		Example: `  updeb repo refresh --repo /srv/apt --key /etc/updeb/repo-signing.secret.asc
  updeb repo refresh --repo /srv/apt --valid-for 336h bookworm-wikimedia
  updeb repo refresh --repo /srv/apt --key old.secret.asc --key new.secret.asc`,
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := o.open(g)
			if err != nil {
				return err
			}
			if o.suite != "" {
				args = append(args, o.suite)
			}
			// One suite that fails does not stop the others (see
			// repo.Refresh): those refreshed are printed, then the failures.
			res, err := r.Refresh(cmd.Context(), args)
			if len(res) == 0 && err != nil {
				return err
			}
			if g.json {
				if perr := printJSON(cmd.OutOrStdout(), cmd, struct {
					Suites []repo.RefreshResult `json:"suites"`
				}{res}); perr != nil {
					return perr
				}
				return err
			}
			for _, s := range res {
				if _, perr := fmt.Fprintf(cmd.OutOrStdout(), "refreshed suite %s: generation %d\n", s.Suite, s.Generation); perr != nil {
					return perr
				}
			}
			return err
		},
	}
	o.addFlags(cmd, true)
	cmd.Flags().Lookup("suite").Usage = "a suite to refresh (as an argument)"
	notTaken(cmd, "it refreshes whole suites, every component of each", "component")
	return jsonOutput(cmd, 1)
}
