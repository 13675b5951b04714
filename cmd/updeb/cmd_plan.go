package main

import (
	"errors"
	"fmt"
	"io/fs"
	"sync"

	"github.com/spf13/cobra"

	"github.com/updeb/updeb/internal/plan"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/track"
	"github.com/updeb/updeb/internal/yamlfile"
)

type planCmdOptions struct {
	trackFlags
	setFile  string
	exitCode bool
}

func newPlanCmd(g *globalOptions) *cobra.Command {
	o := &planCmdOptions{}
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Show what to add, bump and retire for every recipe, and what it does to the release sets",
		Long: `plan reads every recipe, the support data (see 'updeb data') and the release set file,
and lists for each recipe its newest release in its watch track (through the GitHub API
like 'updeb outdated'; with --offline, the support data's latest release of its cycle,
for the products the data covers) and what to do:

  bump    a recipe behind its watch track: 'updeb bump RECIPE --to VERSION'; a recipe
          not of a series (calicoctl, etcd) whose upstream has a newer minor moves to
          it: 'updeb bump RECIPE --new-minor MINOR --to VERSION' (its track moves)
  add     a minor newer than every recipe of a versioned series (kubernetes-1.36,
          cri-tools-1.36), supported by the support data or released upstream:
          'updeb bump NEWEST --new-minor MINOR', which writes its release set too
  retire  a recipe whose line is end-of-life with nothing to move it to: its
          end-of-life: mark ('updeb plan --apply --only RECIPE')
  compat  a release set violation no other action removes (a Helm that does not
          support the newest Kubernetes minor shipped, say): for a person

Each action says which release sets it breaks or fixes: the plan plays the actions in
order on a copy of the recipes and the release set file and runs compat on each state.
It says which copy of the support data it used and how old.

GITHUB_TOKEN, when set, is sent to the GitHub API (higher rate limit).`,
		Example: `  updeb plan
  updeb plan --offline --json
  updeb plan --exit-code          # exit 1 when there is an action
  updeb plan --now 2027-03-01     # the plan as of another day`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runPlan(cmd, g, o) },
	}
	o.trackFlags.add(cmd)
	cmd.Flags().StringVar(&o.setFile, "set", "release-sets.yaml", "release set file whose sets the actions break or fix (skipped when the default is absent)")
	cmd.Flags().BoolVar(&o.exitCode, "exit-code", false, "exit 1 when an action is needed")
	return jsonOutput(cmd, 2)
}

func runPlan(cmd *cobra.Command, g *globalOptions, o *planCmdOptions) error {
	s, err := g.openSession(nil, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	p, errs, err := makePlan(cmd, g, s, &o.trackFlags, o.setFile)
	if err != nil {
		return err
	}
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

// makePlan makes the plan of the session's recipes (plan, plan --apply,
// report): the support data by the config, each recipe's newest releases
// from its watch (unless --offline), the release set file setFile (the
// default may be absent). It returns the plan, the errors of the recipes
// whose releases could not be listed (the plan says "unknown" for them), or
// an error when there is no plan at all.
func makePlan(cmd *cobra.Command, g *globalOptions, s *session, tf *trackFlags, setFile string) (*plan.Plan, []error, error) {
	opts, err := tf.options(g, s.cfg, s.fetcher)
	if err != nil {
		return nil, nil, err
	}
	now := opts.Now()
	data, err := g.supportData(s.cfg, now)
	if err != nil {
		return nil, nil, err
	}
	po := plan.Options{Now: now, Derive: track.Derive, SetsFile: setFile}
	po.Sets, err = yamlfile.ReadFile(setFile, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !cmd.Flags().Changed("set"):
		po.Sets, po.SetsFile = nil, ""
	case err != nil:
		return nil, nil, invalidInput(err, "name the release set file with --set")
	}
	var (
		mu   sync.Mutex
		errs []error
	)
	if !g.offline {
		po.Newest = func(r *recipe.Recipe) (*track.Candidates, error) {
			c, err := track.Newest(cmd.Context(), r, opts)
			if err != nil && !errors.Is(err, track.ErrNoWatch) {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
			return c, err
		}
	}
	p, err := plan.Make(s.recipes, data, po)
	if err != nil {
		return nil, nil, invalidInput(err, "fix the release set file (updeb compat checks it)")
	}
	return p, errs, nil
}
