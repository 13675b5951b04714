package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/updeb/updeb/internal/compatdata"
	"github.com/updeb/updeb/internal/plan"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/track"
	"github.com/updeb/updeb/internal/yamlfile"
	"github.com/updeb/updeb/pkg/termtext"
)

type planCmdOptions struct {
	trackFlags
	setFile  string
	exitCode bool
	apply    bool
	only     string
	dryRun   bool
	message  string
	base     string
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
          'updeb bump NEWEST --new-minor MINOR', which writes its release set too;
          or a recipe of a series in no release set: its release set only
  retire  a recipe whose line is end-of-life with nothing to move it to: its
          end-of-life: mark ('updeb plan --apply --only RECIPE')
  compat  a release set violation no other action removes (a Helm that does not
          support the newest Kubernetes minor shipped, say): for a person

Each action says which release sets it breaks or fixes: the plan plays the actions in
order on a copy of the recipes and the release set file and runs compat on each state.
It says which copy of the support data it used and how old.

--apply carries the plan out in the working tree: every add and bump is fetched,
verified and pinned exactly as 'updeb bump' does (a source nothing vouches for is not
pinned: that recipe fails, with the digests upstream serves, and the others go on), the
release set file follows, and each retire writes the recipe's end-of-life: mark. A bump
or add that would break a release set that exists is held back and said why; a bump in
a recipe's track gives way to its move to a newer minor; an add whose minor has no
complete release upstream yet waits (not done, no failure). --only RECIPE limits it to one
recipe's actions (or those of the recipe an add writes), --dry-run says what it would do. Run it again and it does nothing.
--message FILE writes a change description beside the edits (a commit message: a
summary line, then per recipe the old and new version, release date, what vouched for
the new bytes and the release notes, what was held back or failed, the release set
violations left for a person, and 'updeb verify --base' on the changed recipes with
every REVIEW line, run in-process against --base, HEAD by default). updeb never commits
or pushes: the scheduled job does, with the site's own tooling (docs/tracking.md).

Exit codes of --apply: 0 nothing to do; 1 changes written (or a recipe refused by a
check: a signature, a source nothing vouches for, re-uploaded bytes, a failed check of
the verify; the description says which); 2 invalid input (a recipe, the release set
file, the flags, a --base that is no commit); 3 a download failed. A failure's code wins
over "changes written"; the changes stay written.

GITHUB_TOKEN, when set, is sent to the GitHub API (higher rate limit), over https only
(or http to this machine).`,
		Example: `  updeb plan
  updeb plan --offline --json
  updeb plan --exit-code          # exit 1 when there is an action
  updeb plan --now 2027-03-01     # the plan as of another day
  updeb plan --apply --message change.txt
  updeb plan --apply --only kubernetes-1.36 --dry-run`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runPlan(cmd, g, o) },
	}
	o.trackFlags.add(cmd)
	cmd.Flags().StringVar(&o.setFile, "set", "release-sets.yaml", "release set file whose sets the actions break or fix (skipped when the default is absent)")
	cmd.Flags().BoolVar(&o.exitCode, "exit-code", false, "exit 1 when an action is needed")
	cmd.Flags().BoolVar(&o.apply, "apply", false, "carry the plan out in the working tree: bumps, new minors with their release sets, end-of-life marks")
	cmd.Flags().StringVar(&o.only, "only", "", "with --apply: only the actions on this recipe")
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "with --apply: say what would be done, write nothing")
	cmd.Flags().StringVar(&o.message, "message", "", "with --apply: write the change description (a commit message) to this file (never one plan reads: a recipe, the release sets, the config)")
	cmd.Flags().StringVar(&o.base, "base", "HEAD", "with --apply --message: the git revision the changed recipes are verified against")
	return jsonOutput(cmd, 2)
}

func runPlan(cmd *cobra.Command, g *globalOptions, o *planCmdOptions) error {
	if !o.apply {
		for _, f := range []string{"only", "dry-run", "message"} {
			if cmd.Flags().Changed(f) {
				return usageErrorf("--%s goes with --apply", f)
			}
		}
	}
	if cmd.Flags().Changed("base") && !cmd.Flags().Changed("message") {
		// Only the description's verify reads it: left alone, it would
		// verify nothing while saying nothing.
		return usageErrorf("--base goes with --apply --message: the changed recipes are verified against it for the description")
	}
	s, err := g.openSession(cmd.Context(), nil, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	if o.message != "" {
		// Written last, it replaced a recipe the plan had just changed.
		if err := notAnInput("message", o.message, g.inputFiles(s.cfg, o.setFile, s.recipes)...); err != nil {
			return err
		}
	}
	p, _, errs, err := makePlan(cmd, g, s, &o.trackFlags, o.setFile)
	if err != nil {
		return err
	}
	if o.apply {
		return applyPlan(cmd, g, s, o, p, errs)
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
// default may be absent), checked against the data tables in use. It
// returns the plan, the data it used, the errors of the recipes whose
// releases could not be listed (the plan says "unknown" for them), or an
// error when there is no plan at all.
func makePlan(cmd *cobra.Command, g *globalOptions, s *session, tf *trackFlags, setFile string) (*plan.Plan, *compatdata.Set, []error, error) {
	opts, err := tf.options(g, s.cfg, s.fetcher)
	if err != nil {
		return nil, nil, nil, err
	}
	now := opts.Now()
	data, err := g.dataSet(s.cfg, now, true)
	if err != nil {
		return nil, nil, nil, err
	}
	po := plan.Options{Now: now, Derive: track.Derive, SetsFile: setFile, Tables: data.Tables}
	po.Sets, err = yamlfile.ReadFile(setFile, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !cmd.Flags().Changed("set"):
		po.Sets, po.SetsFile = nil, ""
	case err != nil:
		return nil, nil, nil, invalidInput(err, "name the release set file with --set")
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
			if c != nil && c.Stopped != "" {
				g.warnf("%s: %s", r.Name, c.Stopped)
			}
			if c != nil && c.Withdrawn != "" {
				g.warnf("%s", c.Withdrawn)
			}
			return c, err
		}
	}
	p, err := plan.Make(cmd.Context(), s.recipes, data.EOL, po)
	// A signal while the releases were listed left the later recipes'
	// newest "unknown", and one while the release sets were evaluated
	// stopped Make: no such plan is printed, applied or reported.
	if err := cmd.Context().Err(); err != nil {
		return nil, nil, nil, err
	}
	if err != nil {
		return nil, nil, nil, invalidInput(err, "fix the release set file (updeb compat checks it)")
	}
	return p, data, errs, nil
}

// applyPlan is plan --apply: plan.Apply, the change description, the exit
// code (see the command's help).
func applyPlan(cmd *cobra.Command, g *globalOptions, s *session, o *planCmdOptions, p *plan.Plan, listErrs []error) error {
	if o.only != "" && !slices.ContainsFunc(s.recipes, func(r *recipe.Recipe) bool { return r.Ref() == o.only }) &&
		!slices.ContainsFunc(p.Actions, func(a plan.Action) bool { return a.NewRecipe == o.only }) {
		return usageErrorf("--only %s: no such recipe in %s, nor one the plan adds", o.only, g.recipesDir)
	}
	opts, err := o.options(g, s.cfg, s.fetcher)
	if err != nil {
		return err
	}
	if opts.Sigstore, err = s.sigstore(); err != nil {
		return err
	}
	ao := plan.ApplyOptions{Bump: track.BumpOptions{Options: opts}, Only: o.only, DryRun: o.dryRun}
	if p.SetsFile != "" {
		ao.SetsFile = o.setFile
	}
	// Stopped (a signal), Apply still says what it did: that is printed
	// and described before the error, so that the changes already written
	// are not left unexplained.
	res, stopped := plan.Apply(cmd.Context(), p, s.recipes, ao)
	if res == nil {
		return stopped
	}
	var (
		verification *plan.Verification
		verifyErr    error
	)
	switch {
	case o.message == "" || o.dryRun:
	case stopped != nil:
		verification = &plan.Verification{Base: o.base, Err: fmt.Sprintf("plan --apply was stopped (%v) after %d change(s), before updeb verify ran: review every change", stopped, len(res.Changes))}
	default:
		verification, verifyErr = verifyChanges(cmd, s, res, o.base)
	}
	out := cmd.OutOrStdout()
	if g.json {
		err = printJSON(out, cmd, struct {
			*plan.Plan
			Apply  *plan.ApplyResult  `json:"apply"`
			Verify *plan.Verification `json:"verify,omitempty"`
		}{p, res, verification})
	} else {
		err = printApply(out, p, res)
	}
	// The description is written whether or not the report reached
	// stdout: the changes are in the tree, and the description is what
	// they are committed with ('updeb plan --apply --message m | head -1'
	// ended with the changes written and no description).
	if o.message != "" && !o.dryRun {
		if werr := writeOutput(cmd.Context(), o.message, plan.Describe(p, res, verification)); werr != nil {
			return errors.Join(err, werr)
		}
	}
	if err != nil {
		return err
	}
	errs := append(listErrs, res.Errors()...)
	if stopped != nil {
		errs = append(errs, fmt.Errorf("plan --apply stopped after %d change(s): %w", len(res.Changes), stopped))
	}
	if verifyErr != nil {
		// The description says what the gate found, or why it could not
		// run; the exit code is verify's: a failed check 1, an unreadable
		// --base invalid input, a download that failed 3.
		errs = append(errs, fmt.Errorf("updeb verify --base %s on the changed recipes (see the description): %w", o.base, verifyErr))
	}
	written := 0
	for _, c := range res.Changes {
		if !c.DryRun {
			written++
		}
	}
	if len(errs) > 0 {
		err := errors.Join(errs...)
		if written > 0 || errors.Is(err, plan.ErrSetsFollowed) {
			return &halfDoneError{err, "what plan --apply wrote before it stopped stays (the changes it lists; a release set file that followed a bump whose recipe was not written): review it (git diff), then run plan --apply again to finish"}
		}
		return err
	}
	if written > 0 {
		return &changedError{n: written, message: o.message}
	}
	return nil
}

// verifyChanges runs the gate on the recipes the apply changed, against
// base, in-process, for the description; the error is the gate's verdict
// (rep.Err: failed checks, an unreadable base) or why it could not run.
func verifyChanges(cmd *cobra.Command, s *session, res *plan.ApplyResult, base string) (*plan.Verification, error) {
	v := &plan.Verification{Base: base}
	var rs []*recipe.Recipe
	seen := map[string]bool{}
	for _, c := range res.Changes {
		if seen[c.File] || c.DryRun {
			continue
		}
		seen[c.File] = true
		r, err := recipe.Load(c.File, recipe.LoadOptions{})
		if err != nil {
			v.Err = err.Error()
			return v, err
		}
		rs = append(rs, r)
	}
	if len(rs) == 0 {
		v.Text = "no recipe changed"
		return v, nil
	}
	rep, err := runGate(cmd, s, rs, nil, base)
	if err != nil {
		v.Err = err.Error()
		return v, err
	}
	var b strings.Builder
	printVerifyReport(&b, rep)
	v.Text, v.Failed, v.Reviews = b.String(), rep.Failed, rep.Warnings
	return v, rep.Err()
}

// printApply says what plan --apply did.
func printApply(w io.Writer, p *plan.Plan, res *plan.ApplyResult) error {
	var b strings.Builder
	verb := "done"
	if res.DryRun {
		verb = "would do (dry run)"
	}
	fmt.Fprintf(&b, "%s\n", p.Summary())
	switch {
	case len(res.Changes) == 0 && len(res.Failures)+len(res.Skipped)+len(res.Open) == 0:
		fmt.Fprintf(&b, "Nothing to do.\n")
	case len(res.Changes) == 0:
		fmt.Fprintf(&b, "Nothing done:\n")
	default:
		fmt.Fprintf(&b, "%s:\n", verb)
	}
	for _, c := range res.Changes {
		switch {
		case c.SetOnly:
			fmt.Fprintf(&b, "  add    %s's release set (the recipe was in none): %s\n", c.Recipe, c.File)
		case c.Kind == plan.ActAdd:
			fmt.Fprintf(&b, "  add    %s (from %s) at %s: %s\n", c.Recipe, c.DerivedOf, dashed(c.To), c.File)
		case c.Kind == plan.ActRetire:
			fmt.Fprintf(&b, "  retire %s: end-of-life: %s\n", c.Recipe, c.EndOfLife)
		default:
			fmt.Fprintf(&b, "  bump   %s %s -> %s\n", c.Recipe, c.From, c.To)
		}
		if c.Sets != "" {
			fmt.Fprintf(&b, "         release sets: %s\n", c.Sets)
		}
		if len(c.Warns) > 0 {
			fmt.Fprintf(&b, "         new compat warnings: %s\n", strings.Join(c.Warns, "; "))
		}
	}
	for _, k := range res.Skipped {
		fmt.Fprintf(&b, "  not done: %s %s %s: %s\n", k.Action.Kind, k.Action.Recipe, k.Action.Version, k.Why)
	}
	for _, f := range res.Failures {
		fmt.Fprintf(&b, "  FAILED %s %s %s: %s\n", f.Action.Kind, f.Action.Recipe, f.Action.Version, strings.ReplaceAll(f.Error, "\n", "\n    "))
	}
	for _, a := range res.Open {
		fmt.Fprintf(&b, "  for a person: %s\n", a.Reason)
	}
	// Upstream's words (a failed bump's GitHub API message) reach the
	// terminal, as the plan's text and the description escape them: their
	// escape sequences do not.
	_, err := io.WriteString(w, termtext.EscapeLines(b.String()))
	return err
}

func dashed(s string) string {
	if s == "" {
		return "the newest release of the minor"
	}
	return s
}
