// Package plan answers the operator's monthly question: for each product the
// support data tracks (Kubernetes, etcd, containerd, Calico, Istio), which
// minors are supported today and until when, which of them have recipes,
// which must be added (a supported minor newer than every recipe), which
// recipes are end-of-life and can be retired, and the newest patch of each
// recipe. Make computes it from the recipes and the support data; the
// newest patches come from Options.Newest (the recipes' watch, as updeb
// outdated finds them) or, without it, from the data's latest release of each
// cycle. Render and HTML write it; the JSON form is the Plan itself.
package plan

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/supportdata"
	"github.com/updeb/updeb/internal/track"
	"github.com/updeb/updeb/pkg/debversion"
)

// Schema names the JSON form; it changes when a field changes meaning.
const Schema = "updeb/plan/v1"

// Newest sources, as Plan.NewestFrom says.
const (
	FromWatch = "watch"        // the recipes' watch (GitHub releases, a listing)
	FromData  = "support-data" // the support data's latest release of each cycle
)

// Action kinds.
const (
	ActAdd    = "add"    // a supported minor newer than every recipe
	ActBump   = "bump"   // a newer patch in the recipe's minor, or an end-of-life single recipe to move
	ActRetire = "retire" // a recipe of a versioned series whose minor is end-of-life
)

// Plan is what Make finds. Its JSON keys are snake_case.
type Plan struct {
	Schema       string    `json:"schema"`
	Now          string    `json:"now"` // the day it was made for, YYYY-MM-DD
	Data         Data      `json:"data"`
	NewestFrom   string    `json:"newest_from"` // FromWatch or FromData
	Products     []Product `json:"products"`
	Actions      []Action  `json:"actions"`
	ActionNeeded bool      `json:"action_needed"`
}

// Data says which copy of the support data the plan used.
type Data struct {
	Copy    string `json:"copy"`           // "bundled", "refreshed" or "repository" (supportdata.Copy.Kind)
	Path    string `json:"path,omitempty"` // the refreshed copy's file
	AsOf    string `json:"as_of,omitempty"`
	AgeDays int    `json:"age_days"`
}

// Product is one tracked product.
type Product struct {
	Name      string   `json:"name"`
	Supported []Minor  `json:"supported"` // minors not end-of-life today, newest first
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
	Add                bool     `json:"add"`     // newer than every recipe: must be added
}

// Recipe is one recipe of a product.
type Recipe struct {
	Name        string `json:"name"`
	Version     string `json:"version"`
	Cycle       string `json:"cycle,omitempty"` // "" when the data has no cycle for it
	State       string `json:"state"`           // supported, security-only, eol or unknown
	Support     string `json:"support"`         // "supported until 2027-04-28"
	NewestPatch string `json:"newest_patch,omitempty"`
	NewestError string `json:"newest_error,omitempty"` // why the newest patch is unknown
	Action      string `json:"action"`                 // "", ActBump or ActRetire
}

// Action is one thing to do, with the command that does it when there is one.
type Action struct {
	Kind    string `json:"kind"`
	Product string `json:"product"`
	Recipe  string `json:"recipe,omitempty"`
	Minor   string `json:"minor,omitempty"`
	Version string `json:"version,omitempty"` // the version to move to
	Reason  string `json:"reason"`
	Command string `json:"command,omitempty"`
}

// Options of Make.
type Options struct {
	Now time.Time
	// Newest returns the newest complete release in a recipe's track (nil:
	// the data's latest release of the recipe's cycle).
	Newest func(r *recipe.Recipe) (string, error)
}

// Make computes the plan of every product of rs that the data tracks.
func Make(rs []*recipe.Recipe, data *supportdata.Copy, o Options) *Plan {
	p := &Plan{Schema: Schema, Now: o.Now.UTC().Format(time.DateOnly), NewestFrom: FromData, Products: []Product{}, Actions: []Action{}}
	if o.Newest != nil {
		p.NewestFrom = FromWatch
	}
	p.Data = Data{Copy: data.Kind(), Path: data.Path}
	if !data.Data.AsOf.IsZero() {
		p.Data.AsOf = data.Data.AsOf.Format(time.DateOnly)
		p.Data.AgeDays, _ = data.Age(o.Now)
	}
	byProduct := map[string][]*recipe.Recipe{}
	for _, r := range rs {
		prod := supportdata.ProductOf(track.Component(r))
		if len(data.Data.Cycles(prod)) > 0 {
			byProduct[prod] = append(byProduct[prod], r)
		}
	}
	names := make([]string, 0, len(byProduct))
	for n := range byProduct {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		prod, acts := product(name, byProduct[name], data.Data, o)
		p.Products = append(p.Products, prod)
		p.Actions = append(p.Actions, acts...)
	}
	p.ActionNeeded = len(p.Actions) > 0
	return p
}

// product plans one product.
func product(name string, rs []*recipe.Recipe, data *supportdata.Data, o Options) (Product, []Action) {
	sort.SliceStable(rs, func(i, j int) bool { return compare(rs[i].Version, rs[j].Version) > 0 })
	out := Product{Name: name, Supported: []Minor{}}
	var acts, adds []Action
	for _, r := range rs {
		rec, act := recipeStatus(name, r, data, o)
		out.Recipes = append(out.Recipes, rec)
		if act != nil {
			acts = append(acts, *act)
		}
	}
	newest := rs[0] // the recipe of the newest version
	for _, c := range data.Cycles(name) {
		st := c.Status(o.Now)
		if st.State == supportdata.EndOfLife || !released(c, o.Now) {
			continue
		}
		m := Minor{Cycle: c.Name, State: st.State.String(), EndOfActiveSupport: day(c.EOAS), EndOfLife: day(c.EOL), Latest: c.Latest, Recipes: []string{}}
		for _, r := range rs {
			if sameCycle(c.Name, r.Version) {
				m.Recipes = append(m.Recipes, RecipeName(r))
			}
		}
		if len(m.Recipes) == 0 && newerCycle(c.Name, newest.Version) {
			m.Add = true
			if !movesTo(acts, c.Latest) { // an end-of-life single recipe already moves there
				adds = append(adds, addAction(name, newest, c))
			}
		}
		out.Supported = append(out.Supported, m)
	}
	return out, append(adds, acts...)
}

// movesTo reports whether an action already bumps to version.
func movesTo(acts []Action, version string) bool {
	for _, a := range acts {
		if a.Kind == ActBump && a.Version == version {
			return true
		}
	}
	return false
}

// addAction is the action for a supported minor newer than every recipe:
// --new-minor from the newest recipe of a versioned series (NAME-MAJOR.MINOR),
// else a bump of the single recipe to the minor's latest release.
func addAction(product string, newest *recipe.Recipe, c supportdata.Cycle) Action {
	a := Action{Kind: ActAdd, Product: product, Minor: c.Name, Version: c.Latest}
	n := RecipeName(newest)
	if versioned(newest) {
		a.Reason = fmt.Sprintf("%s %s is supported and newer than every recipe (newest: %s %s)", product, c.Name, n, newest.Version)
		a.Command = fmt.Sprintf("updeb bump %s --new-minor %s", n, c.Name)
	} else {
		a.Reason = fmt.Sprintf("%s %s is supported and newer than %s %s; move its watch track to %s.x", product, c.Name, n, newest.Version, c.Name)
		a.Command = fmt.Sprintf("updeb bump %s --to %s", n, c.Latest)
	}
	return a
}

// recipeStatus is a recipe's support status, newest patch and action.
func recipeStatus(product string, r *recipe.Recipe, data *supportdata.Data, o Options) (Recipe, *Action) {
	n := RecipeName(r)
	rec := Recipe{Name: n, Version: r.Version, State: "unknown", Support: "unknown"}
	c, ok := data.Cycle(product, r.Version)
	if ok {
		st := c.Status(o.Now)
		rec.Cycle, rec.State, rec.Support = c.Name, st.State.String(), st.String()
		if st.State == supportdata.EndOfLife {
			rec.Action = ActRetire
			a := &Action{Kind: ActRetire, Product: product, Recipe: n, Minor: c.Name,
				Reason: fmt.Sprintf("%s %s is end-of-life (%s)", product, c.Name, st)}
			if !versioned(r) {
				// The product's only recipe: move it rather than retire it.
				to := newestSupported(data, product, o.Now)
				rec.Action, a.Kind = ActBump, ActBump
				if to != nil {
					a.Version, a.Reason = to.Latest, a.Reason+fmt.Sprintf("; move it to %s (and its watch track to %s.x)", to.Name, to.Name)
					a.Command = fmt.Sprintf("updeb bump %s --to %s", n, to.Latest)
				}
			}
			return rec, a
		}
	}
	switch {
	case o.Newest != nil:
		v, err := o.Newest(r)
		if err != nil {
			rec.NewestError = err.Error()
			return rec, nil
		}
		rec.NewestPatch = v
	case ok:
		rec.NewestPatch = c.Latest
	default:
		rec.NewestError = "no " + product + " cycle for it in the support data"
		return rec, nil
	}
	if compare(rec.NewestPatch, r.Version) <= 0 {
		rec.NewestPatch = r.Version // the data may be older than the recipe
		return rec, nil
	}
	rec.Action = ActBump
	return rec, &Action{Kind: ActBump, Product: product, Recipe: n, Minor: rec.Cycle, Version: rec.NewestPatch,
		Reason:  fmt.Sprintf("%s %s has a newer patch: %s", n, r.Version, rec.NewestPatch),
		Command: fmt.Sprintf("updeb bump %s --to %s", n, rec.NewestPatch)}
}

// newestSupported is the product's newest cycle that is not end-of-life.
func newestSupported(data *supportdata.Data, product string, now time.Time) *supportdata.Cycle {
	for _, c := range data.Cycles(product) {
		if c.Status(now).State != supportdata.EndOfLife && released(c, now) {
			return &c
		}
	}
	return nil
}

// released reports whether the cycle was released by now's day (a plan for a
// past day does not list the minors that came later).
func released(c supportdata.Cycle, now time.Time) bool {
	y, m, d := now.UTC().Date()
	return !c.ReleaseDate.After(time.Date(y, m, d, 0, 0, 0, 0, time.UTC))
}

// versioned reports whether the recipe is one of a series, one per minor
// (its name ends in -MAJOR.MINOR).
func versioned(r *recipe.Recipe) bool { return track.Component(r) != r.Name }

// RecipeName is the name a recipe goes by on the command line and in
// release sets (recipe:NAME): its file's name without .yaml.
func RecipeName(r *recipe.Recipe) string {
	return strings.TrimSuffix(filepath.Base(r.Path), filepath.Ext(r.Path))
}

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

func day(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.DateOnly)
}
