package plan

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/updeb/updeb/internal/compat"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/supportdata"
)

// Set is a release set as the plan sees it: its violations today and once
// every action is done.
type Set struct {
	Name       string   `json:"name"`
	Kubernetes string   `json:"kubernetes"`
	New        bool     `json:"new"`        // the plan adds it
	Violations []string `json:"violations"` // today (none for a new set)
	After      []string `json:"after"`      // once every action is done
}

// SetEffect is what one action does to one release set.
type SetEffect struct {
	Set    string   `json:"set"`
	New    bool     `json:"new,omitempty"`    // the action adds the set
	Breaks []string `json:"breaks,omitempty"` // violations it brings
	Fixes  []string `json:"fixes,omitempty"`  // violations it removes
}

// world is the recipes and the release set file as they would be after
// some of the actions.
type world struct {
	text    []byte
	recipes []*recipe.Recipe
}

// verdicts is compat's answer on a world: each set's violations, and the
// sets' order and Kubernetes versions.
type verdicts struct {
	order      []string
	kubernetes map[string]string
	violations map[string][]string
}

// effects fills in p.Sets, each action's Sets and the compat actions: the
// actions are played in order on a copy of the recipes and the release set
// file, and compat evaluates each state.
func effects(p *Plan, rs []*recipe.Recipe, data *supportdata.Data, o Options) error {
	file := o.SetsFile
	if file == "" {
		file = "release-sets.yaml"
	}
	w := &world{text: o.Sets, recipes: rs}
	before, err := w.evaluate(file, data, o)
	if err != nil {
		return err
	}
	cur := before
	for i := range p.Actions {
		a := &p.Actions[i]
		next, err := w.play(file, *a, o)
		if err != nil {
			a.Reason += fmt.Sprintf(" (what it does to %s is unknown: %v)", file, err)
			continue
		}
		after, err := next.evaluate(file, data, o)
		if err != nil {
			a.Reason += fmt.Sprintf(" (what it does to %s is unknown: %v)", file, err)
			continue
		}
		a.Sets = diff(cur, after)
		w, cur = next, after
	}
	for _, name := range cur.order {
		s := Set{Name: name, Kubernetes: cur.kubernetes[name], After: nonNil(cur.violations[name]), Violations: []string{}}
		if _, ok := before.kubernetes[name]; ok {
			s.Violations = nonNil(before.violations[name])
		} else {
			s.New = true
		}
		p.Sets = append(p.Sets, s)
		for _, v := range cur.violations[name] {
			comp, _, _ := strings.Cut(v, ": ")
			p.Actions = append(p.Actions, Action{Kind: ActCompat, Component: comp, Reason: fmt.Sprintf("release set %s: %s; no action of the plan resolves it", name, v),
				Sets: []SetEffect{{Set: name, Breaks: []string{v}}}})
		}
	}
	return nil
}

// diff is what changed from one state's verdicts to the next's.
func diff(from, to verdicts) []SetEffect {
	var out []SetEffect
	for _, name := range to.order {
		_, existed := from.kubernetes[name]
		e := SetEffect{Set: name, New: !existed}
		for _, v := range to.violations[name] {
			if !slices.Contains(from.violations[name], v) {
				e.Breaks = append(e.Breaks, v)
			}
		}
		for _, v := range from.violations[name] {
			if !slices.Contains(to.violations[name], v) {
				e.Fixes = append(e.Fixes, v)
			}
		}
		if e.New || len(e.Breaks) > 0 || len(e.Fixes) > 0 {
			out = append(out, e)
		}
	}
	return out
}

// evaluate runs compat on the world (as updeb compat would on the files).
func (w *world) evaluate(file string, data *supportdata.Data, o Options) (verdicts, error) {
	v := verdicts{kubernetes: map[string]string{}, violations: map[string][]string{}}
	sets, err := compat.ParseReleaseSets(file, w.text)
	if err != nil {
		return v, err
	}
	rep, err := compat.Check(sets, w.recipes, compat.Inputs{Now: o.Now, Tables: o.Tables, EOL: data})
	if err != nil {
		return v, fmt.Errorf("%s: %w", file, err)
	}
	for _, s := range rep.Sets {
		v.order = append(v.order, s.Name)
		v.kubernetes[s.Name] = s.Kubernetes
	}
	for _, f := range rep.Findings {
		msg := f.Component + ": " + f.Message
		if f.Severity == compat.Violation && !slices.Contains(v.violations[f.Set], msg) {
			v.violations[f.Set] = append(v.violations[f.Set], msg)
		}
	}
	return v, nil
}

// play returns the world after action a (the world itself is not changed).
func (w *world) play(file string, a Action, o Options) (*world, error) {
	next := &world{text: w.text, recipes: slices.Clone(w.recipes)}
	i := slices.IndexFunc(next.recipes, func(r *recipe.Recipe) bool { return r.Ref() == a.Recipe })
	if i < 0 {
		return w, nil // a compat action, or a recipe of an add not played
	}
	r := *next.recipes[i]
	switch a.Kind {
	case ActBump:
		text, _, err := compat.SyncBump(file, w.text, a.Component, r.Version, a.Version)
		if err != nil {
			return nil, err
		}
		r.Version = a.Version
		next.recipes[i], next.text = &r, text
	case ActRetire:
		day, err := time.Parse(time.DateOnly, a.EndOfLife)
		if err != nil {
			return nil, err
		}
		r.EndOfLife = day
		next.recipes[i] = &r
	case ActAdd:
		if !slices.ContainsFunc(next.recipes, func(r *recipe.Recipe) bool { return r.Ref() == a.NewRecipe }) { // not a SetOnly add
			next.recipes = append(next.recipes, derived(&r, a, o))
		}
		text, _, err := compat.AddMinor(file, w.text, compat.NewMinor{Component: a.Component, From: a.Recipe, To: a.NewRecipe, Minor: a.Minor,
			Versions: compat.RecipeVersions(next.recipes)})
		if err != nil {
			return nil, err
		}
		next.text = text
	}
	return next, nil
}

// derived is the recipe an add writes, as far as compat cares: its name,
// version and requires (o.Derive's, else none known).
func derived(from *recipe.Recipe, a Action, o Options) *recipe.Recipe {
	if o.Derive != nil {
		if r, err := o.Derive(from, a.Minor, a.Version); err == nil && r != nil {
			return r
		}
	}
	return &recipe.Recipe{Name: a.NewRecipe, Path: filepath.Join(filepath.Dir(from.Path), a.NewRecipe+filepath.Ext(from.Path)), Version: a.Version}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
