package plan

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/updeb/updeb/internal/compat"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/track"
	"github.com/updeb/updeb/internal/yamlfile"
)

// ApplyOptions say how Apply carries a plan out.
type ApplyOptions struct {
	// Bump fetches, verifies and pins as updeb bump does. Its To and Date
	// are set per action; Operator and TrustOnFirstUse must stay empty:
	// nothing is pinned that nothing vouches for.
	Bump track.BumpOptions
	// SetsFile is the release set file that follows the recipes ("" for
	// none; a file that does not exist is skipped).
	SetsFile string
	// Only limits Apply to the actions on this recipe ("" for all).
	Only string
	// DryRun says what would be done, writing nothing.
	DryRun bool
}

// Change is one thing Apply did (or, dry, would do).
type Change struct {
	Kind      string `json:"kind"`   // ActAdd, ActBump or ActRetire
	Recipe    string `json:"recipe"` // the recipe changed (for add: the new one)
	From      string `json:"from,omitempty"`
	To        string `json:"to,omitempty"`
	File      string `json:"file"`
	DerivedOf string `json:"derived_of,omitempty"` // add: the recipe it was derived from
	Track     string `json:"track,omitempty"`      // the watch track moved to
	// ReleaseDate is the new version's day, EndOfLife the mark written.
	ReleaseDate  string   `json:"release_date,omitempty"`
	EndOfLife    string   `json:"end_of_life,omitempty"`
	VerifiedBy   []string `json:"verified_by,omitempty"` // what vouched for the new bytes
	ReleaseNotes string   `json:"release_notes,omitempty"`
	Sets         string   `json:"sets,omitempty"` // what the release set file learnt
	// Warns is the compat warnings the change brings to sets that were
	// there, "SET: COMPONENT: MESSAGE" (SetEffect.Warns): a range a table
	// does not know yet, checked by nobody.
	Warns []string `json:"warns,omitempty"`
	// SetOnly: an add whose recipe was there; only its release set was added.
	SetOnly bool `json:"set_only,omitempty"`
	DryRun  bool `json:"dry_run,omitempty"`
}

// Skipped is an action Apply did not carry out, and why.
type Skipped struct {
	Action Action `json:"action"`
	Why    string `json:"why"`
}

// Failure is an action that failed; the others went on.
type Failure struct {
	Action Action `json:"action"`
	Error  string `json:"error"`
	// Written: it failed after its recipe was written (the release set file
	// could not take a new minor's recipe, the written recipe does not load): the change stays,
	// and is in the result's Changes too.
	Written bool `json:"written,omitempty"`
	err     error
}

// Err is the failure's error, for the caller to tell its kind.
func (f Failure) Err() error { return f.err }

// ApplyResult is what Apply did.
type ApplyResult struct {
	Changes  []Change  `json:"changes"`
	Skipped  []Skipped `json:"skipped"`
	Failures []Failure `json:"failures"`
	// Open are the compat actions: violations for a person to resolve.
	Open   []Action `json:"open"`
	DryRun bool     `json:"dry_run"`
}

// Errors are the failures' errors.
func (r *ApplyResult) Errors() []error {
	var out []error
	for _, f := range r.Failures {
		out = append(out, fmt.Errorf("%s: %w", f.Action.Recipe, f.err))
	}
	return out
}

// Apply carries out the plan's actions on the recipes rs (the plan's own,
// loaded from their files), in the plan's order: each add writes its new
// recipe with track.NewMinor and adds or extends its release set; each
// bump moves its recipe with track.Bump (or track.NewMinor when its watch
// track moves) and the release set file follows; each retire writes the
// recipe's end-of-life mark. Every download is fetched and verified as
// updeb bump does, and nothing nothing vouches for is pinned: such a recipe
// fails (track.ErrUnvouched) with the digests upstream serves now.
//
// A bump or add that would break a release set that exists is skipped
// (the plan says which and why), and so is a bump within a recipe's track
// when the same recipe moves to a newer minor, and an add whose minor has
// no complete release upstream yet (track.ErrNoRelease: it waits). One action that fails is
// reported and the others go on; the error is for a broken plan only (a
// cancelled context stops it, what was done stays done). Running Apply on
// the plan of its own result does nothing.
func Apply(ctx context.Context, p *Plan, rs []*recipe.Recipe, o ApplyOptions) (*ApplyResult, error) {
	if o.Bump.Operator != nil || o.Bump.TrustOnFirstUse {
		return nil, errors.New("plan: apply pins only what upstream vouches for: no operator digests, no trust on first use")
	}
	res := &ApplyResult{Changes: []Change{}, Skipped: []Skipped{}, Failures: []Failure{}, Open: []Action{}, DryRun: o.DryRun}
	byName := map[string]*recipe.Recipe{}
	for _, r := range rs {
		byName[r.Ref()] = r
	}
	moved := map[string]bool{}   // recipes a move to a newer minor carried
	waiting := map[string]bool{} // new recipes whose add waits for upstream
	acts := movesFirst(p.Actions)
	for _, a := range acts {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if o.Only != "" && a.Recipe != o.Only && a.NewRecipe != o.Only {
			continue
		}
		if a.Kind == ActCompat {
			res.Open = append(res.Open, a)
			continue
		}
		if broken := a.Breaks(); len(broken) > 0 {
			res.Skipped = append(res.Skipped, Skipped{a, "held back: it would break release set " + strings.Join(broken, ", ") + " (" + strings.Join(breakMessages(a), "; ") + ")"})
			continue
		}
		if a.Kind == ActBump && a.Track == "" && moved[a.Recipe] {
			res.Skipped = append(res.Skipped, Skipped{a, "superseded: " + a.Recipe + " moved to a newer minor"})
			continue
		}
		r := byName[a.Recipe]
		if r == nil && waiting[a.Recipe] {
			res.Skipped = append(res.Skipped, Skipped{a, "waits for upstream: the add of " + a.Recipe + " waits"})
			continue
		}
		if r == nil {
			res.Failures = append(res.Failures, fail(a, fmt.Errorf("%w: no recipe %s (an add before it failed?)", recipe.ErrInvalid, a.Recipe)))
			continue
		}
		// A change that failed half-way (its recipe written, its release
		// set not) is both: what was written is listed, and verified, with
		// the rest.
		c, err := applyOne(ctx, a, r, byName, o)
		if errors.Is(err, errDone) {
			res.Skipped = append(res.Skipped, Skipped{a, err.Error()})
			continue
		}
		if c == nil && a.Kind == ActAdd && errors.Is(err, track.ErrNoRelease) {
			// The minor is announced (the support data lists it) but
			// upstream has not finished its first release: nothing is
			// wrong, the next run adds it.
			res.Skipped = append(res.Skipped, Skipped{a, "waits for upstream: " + err.Error()})
			waiting[a.NewRecipe] = true
			continue
		}
		if c != nil {
			c.Warns = warnMessages(a)
			if a.Kind == ActBump && a.Track != "" {
				moved[a.Recipe] = true
			}
			res.Changes = append(res.Changes, *c)
		}
		if err != nil {
			f := fail(a, err)
			f.Written = c != nil
			res.Failures = append(res.Failures, f)
		}
	}
	return res, nil
}

// ErrSetsFollowed is wrapped by the failure of a bump whose release set
// file followed it, the recipe not being written: half done.
var ErrSetsFollowed = errors.New("follows")

// errDone is an action found done when it was to be carried out: nothing
// was written, and it is no change.
var errDone = errors.New("done already")

func fail(a Action, err error) Failure { return Failure{Action: a, Error: err.Error(), err: err} }

func breakMessages(a Action) []string {
	return setMessages(a, func(e SetEffect) []string { return e.Breaks })
}

func warnMessages(a Action) []string {
	return setMessages(a, func(e SetEffect) []string { return e.Warns })
}

// setMessages is what of each of a's effects on a set that was there
// (SetEffect.Breaks, Warns) says, each after its set's name.
func setMessages(a Action, what func(SetEffect) []string) []string {
	var out []string
	for _, e := range a.Sets {
		if !e.New {
			for _, m := range what(e) {
				out = append(out, e.Set+": "+m)
			}
		}
	}
	return out
}

// movesFirst puts each move of a single recipe to a newer minor before the
// bump within its track that the plan lists first: when the move succeeds,
// the bump is superseded; when it fails or is held back, the bump still
// brings the newest patch.
func movesFirst(acts []Action) []Action {
	out := append([]Action(nil), acts...)
	for i := range out {
		if out[i].Kind != ActBump || out[i].Track != "" {
			continue
		}
		for j := i + 1; j < len(out); j++ {
			if out[j].Kind == ActBump && out[j].Track != "" && out[j].Recipe == out[i].Recipe {
				out[i], out[j] = out[j], out[i]
				break
			}
		}
	}
	return out
}

// applyOne carries out one action on r and updates byName. It returns the
// change whenever a file was written, with the error of what failed after
// that; nil when nothing was.
func applyOne(ctx context.Context, a Action, r *recipe.Recipe, byName map[string]*recipe.Recipe, o ApplyOptions) (*Change, error) {
	c := &Change{Kind: a.Kind, Recipe: a.Recipe, File: r.Path, From: r.Version, To: a.Version, Track: a.Track, ReleaseNotes: a.ReleaseNotes, ReleaseDate: a.ReleaseDate, DryRun: o.DryRun}
	bo := o.Bump
	switch a.Kind {
	case ActRetire:
		c.From, c.To, c.EndOfLife = "", "", a.EndOfLife
		if o.DryRun {
			return c, nil
		}
		day, err := time.Parse(time.DateOnly, a.EndOfLife)
		if err != nil {
			return nil, fmt.Errorf("%w: end-of-life day %q", recipe.ErrInvalid, a.EndOfLife)
		}
		changed, err := track.MarkEndOfLife(ctx, r, day)
		if err != nil {
			return nil, err
		}
		if !changed {
			// Another run that planned the same marked it first.
			return nil, fmt.Errorf("%w: the recipe is marked end-of-life %s (by another run?)", errDone, a.EndOfLife)
		}
		return c, reload(c.File, a.Recipe, r.Root, byName)
	case ActAdd:
		c.Recipe, c.DerivedOf = a.NewRecipe, a.Recipe
		if path, err := track.NewMinorPath(r, a.Minor); err == nil {
			c.File = path
		}
		c.From = ""
		if have := byName[a.NewRecipe]; have != nil {
			// The recipe is there (an apply cut short, a recipe added by
			// hand): only its release set is added.
			c.File, c.To, c.SetOnly, c.ReleaseNotes, c.ReleaseDate = have.Path, have.Version, true, "", ""
			if o.DryRun {
				return c, nil
			}
			var err error
			if c.Sets, err = followNewMinor(ctx, o.SetsFile, a, byName); err != nil {
				return nil, err // nothing was written
			}
			return c, nil
		}
		if o.DryRun {
			return c, nil
		}
		// The newest complete release of the minor, found anew: the plan's
		// version may come from the support data.
		res, err := track.NewMinor(ctx, r, a.Minor, bo)
		if err != nil {
			return nil, err
		}
		c.File, c.To, c.ReleaseDate, c.VerifiedBy = res.File, res.To, res.ReleaseDate, res.VerifiedBy
		if err := reload(c.File, a.NewRecipe, r.Root, byName); err != nil {
			return c, err
		}
		c.Sets, err = followNewMinor(ctx, o.SetsFile, a, byName)
		return c, err
	}
	// A bump: in its track, or to a newer minor (its track moves).
	if o.DryRun {
		return c, nil
	}
	bo.To = a.Version
	// The release set file follows before the recipe is written, so that
	// an apply killed between the two bumps the recipe when run again.
	if o.SetsFile != "" {
		bo.BeforeWrite = func(res *track.BumpResult) error {
			n, err := compat.FollowBump(ctx, o.SetsFile, a.Component, res.From, res.To)
			switch {
			case compat.IsNotExist(err):
			case err != nil:
				return fmt.Errorf("%s could not follow the bump (%s was not written): %w", o.SetsFile, a.Recipe, err)
			case n > 0:
				c.Sets = fmt.Sprintf("%d version(s) %s -> %s", n, res.From, res.To)
			}
			return nil
		}
	}
	var (
		res *track.BumpResult
		err error
	)
	if a.Track != "" {
		res, err = track.NewMinor(ctx, r, a.Minor, bo)
	} else {
		res, err = track.Bump(ctx, r, bo)
	}
	if err != nil {
		if c.Sets != "" {
			return nil, fmt.Errorf("%s %w %s %s, but the recipe was not written: %w; run plan --apply again", o.SetsFile, ErrSetsFollowed, a.Recipe, a.Version, err)
		}
		if errors.Is(err, yamlfile.ErrChanged) && reload(c.File, a.Recipe, r.Root, byName) == nil && byName[a.Recipe].Version == a.Version {
			// Another run that planned the same bumped it first.
			return nil, fmt.Errorf("%w: the recipe is at %s (by another run?)", errDone, a.Version)
		}
		return nil, err
	}
	c.From, c.To, c.ReleaseDate, c.VerifiedBy = res.From, res.To, res.ReleaseDate, res.VerifiedBy
	return c, reload(c.File, a.Recipe, r.Root, byName)
}

// followNewMinor adds or extends the release set of an add's new minor.
func followNewMinor(ctx context.Context, file string, a Action, byName map[string]*recipe.Recipe) (string, error) {
	if file == "" {
		return "", nil
	}
	versions := map[string]string{}
	for n, r := range byName {
		versions[n] = r.Version
	}
	note, err := compat.FollowNewMinor(ctx, file, compat.NewMinor{Component: a.Component, From: a.Recipe, To: a.NewRecipe, Minor: a.Minor, Versions: versions})
	if compat.IsNotExist(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("%s was written, but %s was not updated: %w", a.NewRecipe, file, err)
	}
	return note, nil
}

// reload loads the recipe file path (as lint would) into byName[name].
func reload(path, name, root string, byName map[string]*recipe.Recipe) error {
	r, err := recipe.Load(path, recipe.LoadOptions{Root: root})
	if err != nil {
		return err
	}
	if r.Ref() != name && filepath.Base(path) != name+filepath.Ext(path) {
		return fmt.Errorf("%s: not recipe %s", path, name)
	}
	byName[name] = r
	return nil
}
