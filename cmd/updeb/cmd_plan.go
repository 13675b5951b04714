package main

import (
	"errors"
	"fmt"
	"sync"

	"github.com/spf13/cobra"

	"github.com/updeb/updeb/internal/plan"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/track"
)

type planCmdOptions struct {
	trackFlags
	exitCode bool
}

func newPlanCmd(g *globalOptions) *cobra.Command {
	o := &planCmdOptions{}
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Show which minors to add, which patches to bump and which recipes to retire today",
		Long: `plan reads every recipe and the support data (see 'updeb data') and lists, for each
product the data tracks (Kubernetes, etcd, containerd, Calico, Istio): the minors
supported today with their end dates, which recipes ship them, the supported minors
newer than every recipe (to add: 'updeb bump RECIPE --new-minor MINOR'), the recipes
whose minor is end-of-life (to retire), and each recipe's newest patch, from its watch
through the GitHub API like 'updeb outdated' (with --offline: from the support data's
latest release of the cycle). It says which copy of the support data it used and how old.

GITHUB_TOKEN, when set, is sent to the GitHub API (higher rate limit).`,
		Example: `  updeb plan
  updeb plan --offline --json
  updeb plan --exit-code          # exit 1 when something must be added, bumped or retired
  updeb plan --now 2027-03-01     # the plan as of another day`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runPlan(cmd, g, o) },
	}
	o.trackFlags.add(cmd)
	cmd.Flags().BoolVar(&o.exitCode, "exit-code", false, "exit 1 when an action is needed (a minor to add, a patch to bump, a recipe to retire)")
	return jsonOutput(cmd, 1)
}

func runPlan(cmd *cobra.Command, g *globalOptions, o *planCmdOptions) error {
	s, err := g.openSession(nil, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	opts, err := o.options(g, s.cfg, s.fetcher)
	if err != nil {
		return err
	}
	now := opts.Now()
	data, err := g.supportData(s.cfg, now)
	if err != nil {
		return err
	}
	po := plan.Options{Now: now}
	var (
		mu   sync.Mutex
		errs []error
	)
	if !g.offline {
		po.Newest = func(r *recipe.Recipe) (string, error) {
			c, err := track.Newest(cmd.Context(), r, opts)
			if err != nil {
				if !errors.Is(err, track.ErrNoWatch) {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
				return "", err
			}
			return c.InTrack.Version, nil
		}
	}
	p := plan.Make(s.recipes, data, po)
	out := cmd.OutOrStdout()
	if g.json {
		err = printJSON(out, cmd, p)
	} else {
		err = plan.Render(out, p)
	}
	if err != nil {
		return err
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if o.exitCode && p.ActionNeeded {
		return checkFailed(fmt.Errorf("%d action(s) needed", len(p.Actions)), "see the actions above")
	}
	return nil
}
