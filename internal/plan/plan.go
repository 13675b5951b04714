// Package plan answers the operator's monthly question for every recipe:
// what upstream released in the recipe's watch track, which recipes are
// behind (bump), which minors a versioned series (kubernetes-1.36,
// cri-tools-1.36) lacks (add), which single recipes (calicoctl, etcd) can
// move to a new minor (bump with --new-minor), which recipes are end-of-life
// (retire: the recipe's end-of-life: mark), and what each action does to the
// release sets compat checks: the violations it brings (breaks) or removes
// (fixes), and those no action removes (compat: something for a person).
//
// Make computes it from the recipes, the support data, the release set file
// and Options.Newest (the recipes' watch, as updeb outdated finds it; without
// it, offline, the support data's latest release of each cycle, for the
// products it covers). Render and HTML write it; the JSON form is the Plan
// itself. Apply carries it out (updeb plan --apply).
package plan

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/updeb/updeb/internal/compat"
	"github.com/updeb/updeb/internal/compatdata"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/supportdata"
	"github.com/updeb/updeb/internal/track"
	"github.com/updeb/updeb/pkg/debversion"
)

// Schema names the JSON form; it changes when a field changes meaning.
const Schema = "updeb/plan/v2"

// Where the newest releases come from, as Plan.NewestFrom says.
const (
	FromWatch = "watch"        // the recipes' watch (GitHub releases, a listing)
	FromData  = "support-data" // the support data's latest release of each cycle (offline)
)

// Action kinds.
const (
	// ActAdd: a minor newer than every recipe of a versioned series: a new
	// recipe (bump --new-minor) and its release set.
	ActAdd = "add"
	// ActBump: a newer release for a recipe: in its watch track, or, for a
	// recipe not of a series, of a newer minor (bump --new-minor moves its
	// track).
	ActBump = "bump"
	// ActRetire: a recipe whose version line is end-of-life and that nothing
	// replaces in place: its end-of-life: mark.
	ActRetire = "retire"
	// ActCompat: a release set violation that no other action removes: for a
	// person to resolve.
	ActCompat = "compat"
)

// Plan is what Make finds. Its JSON keys are snake_case.
type Plan struct {
	Schema     string      `json:"schema"`
	Now        string      `json:"now"` // the day it was made for, YYYY-MM-DD
	Data       Data        `json:"data"`
	NewestFrom string      `json:"newest_from"` // FromWatch or FromData
	Components []Component `json:"components"`
	SetsFile   string      `json:"sets_file,omitempty"`
	Sets       []Set       `json:"sets"`
	Actions    []Action    `json:"actions"`
	// ActionNeeded is set when there is any action.
	ActionNeeded bool `json:"action_needed"`
}

// Data says which copy of the support data the plan used.
type Data struct {
	Copy    string `json:"copy"`           // "bundled", "refreshed" or "repository" (supportdata.Copy.Kind)
	Path    string `json:"path,omitempty"` // the refreshed copy's file
	AsOf    string `json:"as_of,omitempty"`
	AgeDays int    `json:"age_days"`
}

// Component is the recipes of one component (the recipe name without a
// -MAJOR.MINOR suffix).
type Component struct {
	Name string `json:"name"`
	// Product is the support data's product for it ("" when the data does
	// not cover it).
	Product string `json:"product,omitempty"`
	// Series is set for a versioned series: one recipe per minor.
	Series    bool     `json:"series"`
	Supported []Minor  `json:"supported"` // the data's minors not end-of-life today, newest first
	Recipes   []Recipe `json:"recipes"`   // newest first
}

// Minor is a supported release cycle.
type Minor struct {
	Cycle              string   `json:"cycle"`
	State              string   `json:"state"` // supported or security-only
	EndOfActiveSupport string   `json:"end_of_active_support,omitempty"`
	EndOfLife          string   `json:"end_of_life,omitempty"`
	Latest             string   `json:"latest"`
	Recipes            []string `json:"recipes"` // the recipes that ship it
	Add                bool     `json:"add"`     // newer than every recipe of a series: to add
	// Bump names the single recipe that moves to it (bump --new-minor).
	Bump string `json:"bump,omitempty"`
}

// Recipe is one recipe and what upstream has for it.
type Recipe struct {
	Name    string `json:"name"` // as the command line names it (the file's name)
	File    string `json:"file"`
	Version string `json:"version"`
	Track   string `json:"track,omitempty"` // its watch track
	Cycle   string `json:"cycle,omitempty"` // "" when the data has no cycle for it
	State   string `json:"state"`           // supported, security-only, eol or unknown
	Support string `json:"support"`         // "supported until 2027-04-28"
	// EndOfLife is the recipe's own end-of-life: mark, YYYY-MM-DD.
	EndOfLife string `json:"end_of_life,omitempty"`
	// Newest is the newest complete release in its watch track (its own
	// version when none is newer), NewestDate its day when known.
	Newest     string `json:"newest,omitempty"`
	NewestDate string `json:"newest_date,omitempty"`
	// Latest is the newest complete release in any track.
	Latest      string `json:"latest,omitempty"`
	NewestError string `json:"newest_error,omitempty"` // why upstream's releases are unknown
	// Withdrawn says that the recipe's own release is gone upstream
	// (deleted, or made a draft again: track.Candidates.Withdrawn).
	Withdrawn string `json:"withdrawn,omitempty"`
	// MarkedButSupported is what the support data says of the cycle of a
	// recipe whose end-of-life: mark is reached when the data does not call
	// it end-of-life (endoflife.date moved the day later after the mark was
	// written): the mark stops the line's bumps, so its patches wait for a
	// person to remove it. Empty otherwise.
	MarkedButSupported string `json:"marked_but_supported,omitempty"`
	// NoWatch: the recipe has no watch, so there is nothing upstream to check.
	NoWatch bool   `json:"no_watch,omitempty"`
	Behind  bool   `json:"behind"` // Newest is newer than Version
	Action  string `json:"action"` // the kind of its action, "" for none
}

// Action is one thing to do, with the command that does it when there is one.
type Action struct {
	Kind      string `json:"kind"`
	Component string `json:"component"`
	Product   string `json:"product,omitempty"`
	// Recipe is the recipe acted on (for add, the one the new recipe is
	// derived from); NewRecipe the recipe add writes.
	Recipe    string `json:"recipe,omitempty"`
	NewRecipe string `json:"new_recipe,omitempty"`
	Minor     string `json:"minor,omitempty"`
	From      string `json:"from,omitempty"`    // the version it moves from
	Version   string `json:"version,omitempty"` // the version it moves to
	// ReleaseDate is Version's day when the release source gives one.
	ReleaseDate string `json:"release_date,omitempty"`
	// Track is the watch track a recipe moves to (bump of a single recipe
	// to a new minor), "" when it stays.
	Track string `json:"track,omitempty"`
	// EndOfLife is the day retire writes.
	EndOfLife string `json:"end_of_life,omitempty"`
	// ReleaseNotes is upstream's page of the release moved to.
	ReleaseNotes string `json:"release_notes,omitempty"`
	// SetOnly marks an add whose recipe is there but in no release set
	// (an apply cut short, a recipe added by hand): only its release set
	// is added, as bump --new-minor would have.
	SetOnly bool   `json:"set_only,omitempty"`
	Reason  string `json:"reason"`
	Command string `json:"command,omitempty"`
	// Sets says what the action does to the release sets.
	Sets []SetEffect `json:"sets,omitempty"`
}

// Breaks names the release sets that exist before a bump or add and that it
// brings a violation to (apply holds such an action back).
func (a Action) Breaks() []string {
	if a.Kind != ActBump && a.Kind != ActAdd {
		return nil
	}
	var out []string
	for _, e := range a.Sets {
		if !e.New && len(e.Breaks) > 0 {
			out = append(out, e.Set)
		}
	}
	return out
}

// Options of Make.
type Options struct {
	Now time.Time
	// Newest returns a recipe's newest complete releases upstream (nil:
	// offline, the support data's latest release of the recipe's cycle).
	Newest func(r *recipe.Recipe) (*track.Candidates, error)
	// Sets is the release set file's content (nil: no release sets), named
	// SetsFile in messages.
	Sets     []byte
	SetsFile string
	// Derive returns the recipe a new minor of a series would be, for what
	// it requires (nil, or an error: its requires are unknown).
	Derive func(r *recipe.Recipe, minor, version string) (*recipe.Recipe, error)
	// Tables are the compatibility tables the release sets are checked
	// against (nil: the bundled copy).
	Tables *compatdata.Tables

	// followers are the series the release sets name by Kubernetes minor
	// (compat.FollowsKubernetes), set by Make.
	followers map[string]bool
}

// Make computes the plan of every recipe of rs. It fails only when the
// release set file does not parse or names recipes that do not exist, or
// when ctx is done (a signal): the release sets are evaluated again after
// each action, which takes seconds for a file of thousands of sets.
func Make(ctx context.Context, rs []*recipe.Recipe, data *supportdata.Copy, o Options) (*Plan, error) {
	p := &Plan{Schema: Schema, Now: o.Now.UTC().Format(time.DateOnly), NewestFrom: FromData, Components: []Component{}, Sets: []Set{}, Actions: []Action{}, SetsFile: o.SetsFile}
	if o.Newest != nil {
		p.NewestFrom = FromWatch
	}
	p.Data = Data{Copy: data.Kind(), Path: data.Path}
	if !data.Data.AsOf.IsZero() {
		p.Data.AsOf = data.Data.AsOf.Format(time.DateOnly)
		p.Data.AgeDays, _ = data.Age(o.Now)
	}
	byComponent := map[string][]*recipe.Recipe{}
	for _, r := range rs {
		c := track.Component(r)
		byComponent[c] = append(byComponent[c], r)
	}
	names := slices.Sorted(maps.Keys(byComponent))
	o.followers = followers(names, rs, o)
	var acts []Action
	for _, name := range names {
		comp, a := component(name, byComponent[name], data.Data, o)
		p.Components = append(p.Components, comp)
		acts = append(acts, a...)
	}
	acts = append(acts, setAdds(names, byComponent, rs, data.Data, o)...)
	p.Actions = order(acts)
	if o.Sets != nil {
		if err := effects(ctx, p, rs, data.Data, o); err != nil {
			return nil, err
		}
	}
	p.ActionNeeded = len(p.Actions) > 0
	return p, nil
}

// order puts adds first (Kubernetes' first, whose new minor brings its
// release set, which the other series' new minors then join; the oldest
// minor first, as a chain of them derives each from the one before), then
// bumps, retires and what compat finds; within a kind, by component and
// recipe.
func order(acts []Action) []Action {
	rank := map[string]int{ActAdd: 0, ActBump: 1, ActRetire: 2, ActCompat: 3}
	sort.SliceStable(acts, func(i, j int) bool {
		a, b := acts[i], acts[j]
		if rank[a.Kind] != rank[b.Kind] {
			return rank[a.Kind] < rank[b.Kind]
		}
		if a.Component != b.Component {
			if a.Kind == ActAdd && (a.Component == "kubernetes" || b.Component == "kubernetes") {
				return a.Component == "kubernetes"
			}
			return a.Component < b.Component
		}
		if a.Kind == ActAdd {
			return compare(a.Minor, b.Minor) < 0
		}
		return a.Recipe < b.Recipe
	})
	if acts == nil {
		return []Action{}
	}
	return acts
}

// upstream is what is known of a recipe's releases: the newest in its
// watch track, of its major (where a recipe not of a series moves), and
// overall.
type upstream struct {
	newest, major, latest track.Release
	err                   string
	withdrawn             string // the recipe's own release is gone upstream
}

// component plans one component's recipes.
func component(name string, rs []*recipe.Recipe, data *supportdata.Data, o Options) (Component, []Action) {
	sort.SliceStable(rs, func(i, j int) bool { return compare(rs[i].Version, rs[j].Version) > 0 })
	out := Component{Name: name, Supported: []Minor{}, Recipes: []Recipe{}}
	product := supportdata.ProductOf(name)
	tracked := len(data.Cycles(product)) > 0
	if tracked {
		out.Product = product
	}
	for _, r := range rs {
		out.Series = out.Series || versioned(r)
	}
	var acts []Action
	ups := map[*recipe.Recipe]upstream{}
	for _, r := range rs {
		up := releases(r, product, tracked, data, o)
		ups[r] = up
		rec, a := recipeStatus(name, product, r, up, data, o)
		out.Recipes = append(out.Recipes, rec)
		acts = append(acts, a...)
	}
	if tracked {
		for _, c := range data.Cycles(product) {
			st := c.Status(o.Now)
			if st.State == supportdata.EndOfLife || !released(c, o.Now) {
				continue
			}
			m := Minor{Cycle: c.Name, State: st.State.String(), EndOfActiveSupport: day(c.EOAS), EndOfLife: day(c.EOL), Latest: c.Latest, Recipes: []string{}}
			for _, r := range rs {
				if sameCycle(cycleMinor(c.Name), r.Version) {
					m.Recipes = append(m.Recipes, r.Ref())
				}
			}
			out.Supported = append(out.Supported, m)
		}
	}
	if out.Series {
		adds := seriesAdds(name, product, rs, ups[rs[0]], data, o)
		for i := range out.Supported {
			for _, a := range adds {
				out.Supported[i].Add = out.Supported[i].Add || a.Minor == cycleMinor(out.Supported[i].Cycle)
			}
		}
		acts = append(adds, acts...)
	}
	for i, m := range out.Supported {
		for _, a := range acts {
			if a.Kind == ActBump && a.Minor == cycleMinor(m.Cycle) && len(m.Recipes) == 0 {
				out.Supported[i].Bump = a.Recipe
			}
		}
	}
	for i, r := range out.Recipes {
		for _, a := range acts {
			if a.Recipe == r.Name && a.Kind != ActAdd {
				out.Recipes[i].Action = a.Kind
			}
		}
	}
	return out, acts
}

// releases finds a recipe's newest releases: from its watch, or offline from
// the support data's cycles (for the products it covers).
func releases(r *recipe.Recipe, product string, tracked bool, data *supportdata.Data, o Options) upstream {
	var up upstream
	if o.Newest != nil {
		c, err := o.Newest(r)
		if err != nil {
			up.err = err.Error()
			return up
		}
		up.newest, up.major, up.latest, up.withdrawn = c.InTrack, c.InMajor, c.Latest, c.Withdrawn
		return up
	}
	if !tracked {
		up.err = "offline, and the support data does not cover " + product
		return up
	}
	up.newest, up.latest = track.Release{Version: r.Version}, track.Release{Version: r.Version}
	if c, ok := data.Cycle(product, r.Version); ok && compare(c.Latest, r.Version) > 0 && inWatchTrack(r, c.Latest) && follows(r, c.Latest) {
		up.newest = track.Release{Version: c.Latest, Published: c.LatestReleaseDate}
	}
	up.major, up.latest = up.newest, up.newest
	for _, major := range []bool{true, false} {
		if c := newestSupported(data, product, r, major, o.Now); c != nil && compare(c.Latest, up.latest.Version) > 0 {
			up.latest = track.Release{Version: c.Latest, Published: c.LatestReleaseDate}
			if major {
				up.major = up.latest
			}
		}
	}
	return up
}

// recipeStatus is a recipe's support status and its own actions: a bump in
// its watch track, then, for a recipe not of a series, a move to a newer
// minor; or a retire when its line is end-of-life and nothing replaces it.
func recipeStatus(comp, product string, r *recipe.Recipe, up upstream, data *supportdata.Data, o Options) (Recipe, []Action) {
	n := r.Ref()
	rec := Recipe{Name: n, File: r.Path, Version: r.Version, State: "unknown", Support: "unknown", NewestError: up.err, Withdrawn: up.withdrawn,
		Newest: up.newest.Version, NewestDate: day(up.newest.Published), Latest: up.latest.Version}
	if r.Watch != nil {
		rec.Track = r.Watch.Track
	} else {
		rec.NoWatch = true
	}
	cyc, covered := data.Cycle(product, r.Version)
	eol := false
	if covered {
		st := cyc.Status(o.Now)
		rec.Cycle, rec.State, rec.Support = cyc.Name, st.State.String(), st.String()
		eol = st.State == supportdata.EndOfLife
	}
	led := false // eol because its Kubernetes minor is (followedEOL)
	if !covered {
		if k, ok := followedEOL(comp, r, data, o); ok {
			cyc, led, eol = k, true, true
			rec.Cycle, rec.State = k.Name, supportdata.EndOfLife.String()
			rec.Support = fmt.Sprintf("follows kubernetes %s, end of life since %s", k.Name, retireDay(k, o.Now))
		}
	}
	base := Action{Component: comp, Product: productOf(product, data), Recipe: n, From: r.Version, Minor: rec.Cycle}
	if !r.EndOfLife.IsZero() {
		rec.EndOfLife = day(r.EndOfLife)
		if !r.EndOfLife.After(o.Now) {
			dataSays := ""
			if covered && !eol {
				dataSays = rec.Support
			}
			rec.State, rec.Support = supportdata.EndOfLife.String(), track.MarkedSupport(rec.EndOfLife, dataSays)
			if dataSays != "" {
				// The patches the mark holds back are shown (behind), for
				// the person who removes it.
				rec.MarkedButSupported = dataSays
				rec.Behind = up.err == "" && compare(up.newest.Version, r.Version) > 0
			}
			// A recipe not of a series marked because its cycle ended
			// in the support data and no newer minor was out (retire)
			// still moves once one is, as an unmarked one does: bump
			// --new-minor drops the mark. Else it stayed at its
			// end-of-life minor for good, with nothing said. A mark the
			// data does not account for is a person's: it stays.
			if !versioned(r) && up.err == "" && eol {
				if to, ok := newerMinor(r, up, product, covered, data, o.Now); ok {
					a := moveAction(base, r, to)
					a.Reason = fmt.Sprintf("%s is marked end-of-life (since %s); %s", n, rec.EndOfLife, a.Reason)
					return rec, []Action{a}
				}
			}
			return rec, nil // marked: nothing more to do with it
		}
	}
	rec.Behind = up.err == "" && compare(up.newest.Version, r.Version) > 0
	var acts []Action
	if rec.Behind && !eol {
		a := base
		a.Kind, a.Version, a.ReleaseDate, a.ReleaseNotes = ActBump, up.newest.Version, day(up.newest.Published), releaseNotes(r, up.newest)
		a.Reason = fmt.Sprintf("%s %s is behind its watch track: %s", n, r.Version, up.newest.Version)
		a.Command = fmt.Sprintf("updeb bump %s --to %s", n, up.newest.Version)
		acts = append(acts, a)
		base.From = up.newest.Version
	}
	// A single recipe moves to a newer minor when upstream has one (and the
	// support data, where it covers the product, does not call it end of
	// life); a recipe of a series never does: the series adds a recipe.
	if !versioned(r) && up.err == "" {
		if to, ok := newerMinor(r, up, product, covered, data, o.Now); ok && to.Version != base.From {
			a := moveAction(base, r, to)
			if eol {
				a.Reason = fmt.Sprintf("%s %s is end-of-life (%s); %s", product, cyc.Name, rec.Support, a.Reason)
			}
			return rec, append(acts, a)
		}
	}
	if eol {
		a := base
		a.Kind, a.EndOfLife = ActRetire, retireDay(cyc, o.Now)
		a.Reason = fmt.Sprintf("%s %s is end-of-life (%s)", product, cyc.Name, rec.Support)
		if led {
			a.Reason = n + " " + rec.Support
		}
		if versioned(r) {
			a.Reason += "; mark " + n + " end-of-life (it stays to rebuild, not to deploy)"
		} else {
			a.Reason += "; no newer supported release to move " + n + " to: mark it end-of-life"
		}
		a.Command = "updeb plan --apply --only " + n
		acts = append(acts, a)
	}
	return rec, acts
}

// newerMinor is the release a single recipe can move to in a newer minor of
// its own major: upstream's newest of that major (or, offline, the data's
// newest supported cycle's latest of that major), unless the data calls that
// minor end-of-life. Upstream's newest overall may be of a newer major
// (Helm 4 beside a recipe tracking 3.21.x), which is no move.
func newerMinor(r *recipe.Recipe, up upstream, product string, covered bool, data *supportdata.Data, now time.Time) (track.Release, bool) {
	to := up.major
	if to.Version == "" {
		to = up.latest
	}
	if compare(up.newest.Version, to.Version) >= 0 {
		to = up.newest
	}
	v, c := numbers(r.Version), numbers(to.Version)
	if len(v) < 2 || len(c) < 2 || c[0] != v[0] || c[1] <= v[1] {
		return track.Release{}, false
	}
	if covered {
		if cyc, ok := data.Cycle(product, to.Version); ok && cyc.Status(now).State == supportdata.EndOfLife {
			return track.Release{}, false
		}
	}
	return to, true
}

// moveAction is the bump of a single recipe to a release of a newer minor:
// a plain bump when its watch track allows it, else bump --new-minor, which
// moves the track.
func moveAction(a Action, r *recipe.Recipe, to track.Release) Action {
	n := a.Recipe
	minor := minorOf(to.Version)
	a.Kind, a.Version, a.ReleaseDate, a.ReleaseNotes = ActBump, to.Version, day(to.Published), releaseNotes(r, to)
	a.Minor = minor
	if inWatchTrack(r, to.Version) {
		a.Reason = fmt.Sprintf("%s %s can move to %s, of the newer minor %s (its watch track allows it)", n, r.Version, to.Version, minor)
		a.Command = fmt.Sprintf("updeb bump %s --to %s", n, to.Version)
		return a
	}
	if moved, err := track.MovedTrack(r, minor); err == nil {
		a.Track = moved
		a.Reason = fmt.Sprintf("%s %s can move to %s, of the newer minor %s; its watch track moves from %q to %q", n, r.Version, to.Version, minor, r.Watch.Track, moved)
	} else {
		a.Reason = fmt.Sprintf("%s %s can move to %s, of the newer minor %s; its watch track %q must move (%v)", n, r.Version, to.Version, minor, r.Watch.Track, err)
	}
	a.Command = fmt.Sprintf("updeb bump %s --new-minor %s --to %s", n, minor, to.Version)
	return a
}

// seriesAdds are the minors a versioned series lacks: the supported ones
// (support data) newer than its newest recipe, and the minor of upstream's
// newest release when that is newer; each derived from the one before.
func seriesAdds(comp, product string, rs []*recipe.Recipe, up upstream, data *supportdata.Data, o Options) []Action {
	newest := rs[0]
	for _, r := range rs { // the newest recipe of the series itself (a single recipe may share the component)
		if versioned(r) {
			newest = r
			break
		}
	}
	// A newer major is no action (bump --new-minor refuses it): only
	// minors of the newest recipe's own major are added.
	minors := map[string]track.Release{}
	for _, c := range data.Cycles(product) {
		if c.Status(o.Now).State != supportdata.EndOfLife && released(c, o.Now) && newerCycle(c.Name, newest.Version) && sameMajor(newest.Version, c.Name) && follows(newest, c.Latest) {
			minors[cycleMinor(c.Name)] = track.Release{Version: c.Latest, Published: c.LatestReleaseDate}
		}
	}
	rel := up.major
	if rel.Version == "" {
		rel = up.latest
	}
	if up.err == "" && rel.Version != "" && newerCycle(minorOf(rel.Version), newest.Version) && sameMajor(newest.Version, rel.Version) {
		if c, ok := data.Cycle(product, rel.Version); !ok || c.Status(o.Now).State != supportdata.EndOfLife {
			minors[minorOf(rel.Version)] = rel
		}
	}
	keys := make([]string, 0, len(minors))
	for k := range minors {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return compare(keys[i], keys[j]) < 0 })
	var out []Action
	from := newest.Ref()
	for _, m := range keys {
		rel := minors[m]
		to := comp + "-" + m
		a := Action{Kind: ActAdd, Component: comp, Product: productOf(product, data), Recipe: from, NewRecipe: to, Minor: m,
			Version: rel.Version, ReleaseDate: day(rel.Published), ReleaseNotes: releaseNotes(newest, rel),
			Reason:  fmt.Sprintf("%s %s is out and newer than every recipe of the series (newest: %s %s): add %s", comp, m, newest.Ref(), newest.Version, to),
			Command: fmt.Sprintf("updeb bump %s --new-minor %s", from, m)}
		out = append(out, a)
		from = to
	}
	return out
}

// setAdds are the release sets a versioned series lacks: a recipe of the
// series (not end-of-life) that the release set file does not cover where
// bump --new-minor would have added it (compat.AddMinor from the recipe of
// the minor before it would change the file), for an apply cut short
// between the recipe and its set, or a recipe added by hand. Without them
// compat checks nothing for that minor, and no later plan would say so.
//
// Kubernetes' series goes first, whose sets the other series then join, as
// the adds are ordered and carried out.
func setAdds(names []string, byComponent map[string][]*recipe.Recipe, all []*recipe.Recipe, data *supportdata.Data, o Options) []Action {
	if o.Sets == nil {
		return nil
	}
	file := o.SetsFile
	if file == "" {
		file = "release-sets.yaml"
	}
	comps := slices.Clone(names)
	sort.SliceStable(comps, func(i, j int) bool { return comps[i] == "kubernetes" && comps[j] != "kubernetes" })
	text := o.Sets
	var out []Action
	for _, comp := range comps {
		var rs []*recipe.Recipe
		for _, r := range byComponent[comp] {
			if versioned(r) {
				rs = append(rs, r)
			}
		}
		sort.SliceStable(rs, func(i, j int) bool { return compare(rs[i].Version, rs[j].Version) < 0 })
		product := supportdata.ProductOf(comp)
		for i := 1; i < len(rs); i++ {
			r, from := rs[i], rs[i-1]
			if !r.EndOfLife.IsZero() && !r.EndOfLife.After(o.Now) {
				continue
			}
			if c, ok := data.Cycle(product, r.Version); ok && c.Status(o.Now).State == supportdata.EndOfLife {
				continue
			}
			if _, ok := followedEOL(comp, r, data, o); ok {
				continue
			}
			minor := minorOf(r.Version)
			next, note, err := compat.AddMinor(file, text, compat.NewMinor{Component: comp, From: from.Ref(), To: r.Ref(), Minor: minor, Versions: compat.RecipeVersions(all)})
			if err != nil || bytes.Equal(next, text) {
				continue // covered, or the set it would come from is missing too: the next plan says so
			}
			text = next
			out = append(out, Action{Kind: ActAdd, Component: comp, Product: productOf(product, data), Recipe: from.Ref(), NewRecipe: r.Ref(), Minor: minor,
				Version: r.Version, SetOnly: true,
				Reason:  fmt.Sprintf("%s is in no release set of %s, so compat checks nothing for it: %s, as bump --new-minor would have", r.Ref(), file, note),
				Command: "updeb plan --apply --only " + r.Ref()})
		}
	}
	return out
}

// releaseNotes is upstream's page of a release: the GitHub release of the
// recipe's watch, or the watch's listing.
func releaseNotes(r *recipe.Recipe, rel track.Release) string {
	if r.Watch == nil || rel.Version == "" {
		return ""
	}
	if r.Watch.GitHub != "" {
		tag := rel.Tag
		if tag == "" {
			tag = r.Watch.TagPrefix + rel.Version
		}
		return "https://github.com/" + r.Watch.GitHub + "/releases/tag/" + tag
	}
	return r.Watch.URL
}

// inWatchTrack reports whether version is in the recipe's watch track (no
// track: every version).
func inWatchTrack(r *recipe.Recipe, version string) bool {
	if r.Watch == nil || r.Watch.Track == "" {
		return true
	}
	c, err := debversion.ParseConstraint(r.Watch.Track)
	if err != nil {
		return false
	}
	ok, err := c.Allows(version)
	return ok && err == nil
}

// followers are the series among names, other than Kubernetes and the
// products the support data covers, that the release sets (o.Sets) name by
// Kubernetes minor, as cri-tools: their minors live as long as Kubernetes'.
func followers(names []string, rs []*recipe.Recipe, o Options) map[string]bool {
	if o.Sets == nil {
		return nil
	}
	sets, err := compat.ParseReleaseSets(o.SetsFile, o.Sets)
	if err != nil {
		return nil // effects fails on it, naming the file
	}
	_ = compat.Resolve(sets, compat.RecipeVersions(rs), "") // an unknown recipe keeps its empty version: it follows nothing
	out := map[string]bool{}
	for _, name := range names {
		if name != "kubernetes" && compat.FollowsKubernetes(name, sets) {
			out[name] = true
		}
	}
	return out
}

// followedEOL is the end-of-life Kubernetes cycle of r's minor when r is a
// recipe of a series that follows Kubernetes minors (o.followers) whose own
// product the support data does not cover: endoflife.date has no cycles
// for cri-tools, whose minor is Kubernetes' and ends with it. A recipe with
// an end-of-life: mark of its own (a day to come) says otherwise.
func followedEOL(comp string, r *recipe.Recipe, data *supportdata.Data, o Options) (supportdata.Cycle, bool) {
	if !o.followers[comp] || !versioned(r) || !r.EndOfLife.IsZero() || len(data.Cycles(supportdata.ProductOf(comp))) > 0 {
		return supportdata.Cycle{}, false
	}
	c, ok := data.Cycle("kubernetes", r.Version)
	if !ok || c.Status(o.Now).State != supportdata.EndOfLife {
		return supportdata.Cycle{}, false
	}
	return c, true
}

// productOf is product when the data covers it, else "".
func productOf(product string, data *supportdata.Data) string {
	if len(data.Cycles(product)) > 0 {
		return product
	}
	return ""
}

// newestSupported is the product's newest cycle that is not end-of-life (of
// r's major, with ofMajor) and whose latest release r follows.
func newestSupported(data *supportdata.Data, product string, r *recipe.Recipe, ofMajor bool, now time.Time) *supportdata.Cycle {
	for _, c := range data.Cycles(product) {
		if ofMajor && !sameMajor(r.Version, c.Name) {
			continue
		}
		if c.Status(now).State != supportdata.EndOfLife && released(c, now) && follows(r, c.Latest) {
			return &c
		}
	}
	return nil
}

// follows reports whether r's watch takes version, offline as online
// (track.Releases): a pre-release (the support data's latest of a cycle
// may be a release candidate) only with watch: prereleases: true.
func follows(r *recipe.Recipe, version string) bool {
	return !track.IsPrerelease(version) || r.Watch != nil && r.Watch.Prereleases
}

// released reports whether the cycle was released by now's day (a plan for a
// past day does not list the minors that came later).
func released(c supportdata.Cycle, now time.Time) bool {
	y, m, d := now.UTC().Date()
	return !c.ReleaseDate.After(time.Date(y, m, d, 0, 0, 0, 0, time.UTC))
}

// versioned reports whether the recipe is one of a series, one per minor
// (its file is named NAME-MAJOR.MINOR).
func versioned(r *recipe.Recipe) bool { return recipe.Component(r.Ref()) != r.Ref() }

// sameCycle reports whether version belongs to cycle ("1.36" or "3").
func sameCycle(cycle, version string) bool {
	c, v := numbers(cycle), numbers(version)
	if len(c) == 0 || len(v) < len(c) {
		return false
	}
	for i := range c {
		if c[i] != v[i] {
			return false
		}
	}
	return true
}

// sameMajor reports whether other (a version or a cycle) is of version's major.
func sameMajor(version, other string) bool {
	v, o := numbers(version), numbers(other)
	return len(v) > 0 && len(o) > 0 && v[0] == o[0]
}

// newerCycle reports whether cycle is newer than version's own cycle.
func newerCycle(cycle, version string) bool {
	c, v := numbers(cycle), numbers(version)
	for i := range c {
		if i >= len(v) || c[i] != v[i] {
			return i < len(v) && c[i] > v[i]
		}
	}
	return false
}

// cycleMinor is the MAJOR.MINOR a cycle's name stands for, as lookups
// (supportdata.Data.Cycle) and bump --new-minor read it: endoflife.date may
// name cycle 1.37 "1.37.0", "01.37" or "v1.37". A cycle named by its major
// alone ("3") stays as it is.
func cycleMinor(name string) string {
	if m := minorOf(name); m != "" {
		return m
	}
	return name
}

// minorOf is a version's MAJOR.MINOR ("" when it has none).
func minorOf(v string) string {
	n := numbers(v)
	if len(n) < 2 {
		return ""
	}
	return fmt.Sprintf("%d.%d", n[0], n[1])
}

func numbers(v string) []int {
	d, err := debversion.FromUpstream(v)
	if err != nil {
		return nil
	}
	return debversion.LeadingNumbers(d)
}

// compare orders upstream versions as Debian would order the packages.
func compare(a, b string) int {
	da, ea := debversion.FromUpstream(a)
	db, eb := debversion.FromUpstream(b)
	if ea != nil || eb != nil {
		return strings.Compare(a, b)
	}
	c, err := debversion.CompareStrings(da, db)
	if err != nil {
		return strings.Compare(a, b)
	}
	return c
}

// retireDay is the end-of-life day a retire writes: the support data's, or,
// where upstream records only that the cycle has ended (endoflife.date's
// `eol: true`), the day of its last release (the last day it is known to
// have been supported), so that runs on later days write the same mark; the
// run's day only when the data has neither.
func retireDay(c supportdata.Cycle, now time.Time) string {
	for _, t := range []time.Time{c.Status(now).Date, c.LatestReleaseDate} {
		if !t.IsZero() {
			return day(t)
		}
	}
	return day(now)
}

func day(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.DateOnly)
}
