package plan

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/updeb/updeb/internal/compat"
	"github.com/updeb/updeb/internal/compatdata"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/supportdata"
	"github.com/updeb/updeb/pkg/debversion"
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
	// Warns is the warnings it brings, such as a version a compatibility
	// table has no row for yet: what the set was checked against is then
	// unknown, which the reviewer must be told of (no action is held back
	// for a warning).
	Warns []string `json:"warns,omitempty"`
}

// world is the recipes and the release set file as they would be after
// some of the actions: the file's text and what it reads as (sets, recipe:NAME
// unresolved). A bump played in place changes the sets at once and the
// text only when a later action needs it (pending).
type world struct {
	text    []byte
	sets    []compat.ReleaseSet
	recipes []*recipe.Recipe
	pending []compat.Bump
}

// verdicts is compat's answer on a world: each set's violations, and the
// sets' order and Kubernetes versions.
type verdicts struct {
	order      []string
	kubernetes map[string]string
	violations map[string][]string
	// rules is, per set, which rule each violation breaks between which
	// components (in violations' order): what tells a violation an action
	// brings from one the set had, whose words name the versions the action
	// moves ("the set has kubernetes 1.37.1" after a patch of Kubernetes).
	rules map[string][]string
	// warnings and warnRules are the same of each set's warnings.
	warnings, warnRules map[string][]string
}

// effects fills in p.Sets, each action's Sets and the compat actions: the
// actions are played in order on a copy of the recipes and the release set
// file, and compat evaluates each state. An action that moves one component
// (a bump or retire of a recipe that no Kubernetes binary's verdicts depend
// on) is evaluated on the components whose verdicts it can change only, so
// that a plan of n actions on n recipes costs about n steps, not n².
func effects(ctx context.Context, p *Plan, rs []*recipe.Recipe, data *supportdata.Data, o Options) error {
	file := o.SetsFile
	if file == "" {
		file = "release-sets.yaml"
	}
	sets, err := compat.ParseReleaseSets(file, o.Sets)
	if err != nil {
		return err
	}
	if o.Tables == nil { // read once, not at each evaluation
		if t, err := compatdata.Bundled(); err == nil {
			o.Tables = t
		}
	}
	w := &world{text: o.Sets, sets: sets, recipes: slices.Clone(rs)}
	before, err := w.evaluate(file, data, o, nil)
	if err != nil {
		return err
	}
	cur, fresh := before, true // fresh: cur is the world's verdicts (not stale after an action played in place)
	var ix *index
	for i := range p.Actions {
		// Each action is a step, an evaluation of every set at most.
		if err := ctx.Err(); err != nil {
			return err
		}
		a := &p.Actions[i]
		if ix == nil {
			ix = w.index()
		}
		if effect, ok := w.playInPlace(file, *a, data, o, ix); ok {
			a.Sets, fresh = effect, false
			continue
		}
		if !fresh {
			if cur, err = w.evaluate(file, data, o, nil); err != nil {
				return err
			}
			fresh = true
		}
		next, err := w.play(file, *a, o)
		if err != nil {
			a.Reason += fmt.Sprintf(" (what it does to %s is unknown: %v)", file, err)
			continue
		}
		after, err := next.evaluate(file, data, o, nil)
		if err != nil {
			a.Reason += fmt.Sprintf(" (what it does to %s is unknown: %v)", file, err)
			continue
		}
		a.Sets = diff(cur, after)
		w, cur, ix = next, after, nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if !fresh {
		if cur, err = w.evaluate(file, data, o, nil); err != nil {
			return err
		}
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
		e.Breaks = beyond(to.violations[name], to.rules[name], from.rules[name])
		e.Fixes = beyond(from.violations[name], from.rules[name], to.rules[name])
		if existed { // a new set's warnings are its own, not the action's
			e.Warns = beyond(to.warnings[name], to.warnRules[name], from.warnRules[name])
		}
		if e.New || len(e.Breaks) > 0 || len(e.Fixes) > 0 || len(e.Warns) > 0 {
			out = append(out, e)
		}
	}
	return out
}

// beyond is the findings of one state (msgs, their rules) that another
// state (its rules) lacks: those of a rule between components that it has
// fewer of. A finding that stays, its words changed with the versions an
// action moved, is in neither.
func beyond(msgs, rules, other []string) []string {
	left := map[string]int{}
	for _, r := range other {
		left[r]++
	}
	var out []string
	for i, r := range rules {
		if left[r] > 0 {
			left[r]--
			continue
		}
		out = append(out, msgs[i])
	}
	return out
}

// evaluate runs compat on the world (as updeb compat would on the files),
// or, with only, on the recipes and sets given instead, keeping the verdicts
// on the components of only.
func (w *world) evaluate(file string, data *supportdata.Data, o Options, only *scope) (verdicts, error) {
	v := verdicts{kubernetes: map[string]string{}, violations: map[string][]string{}, rules: map[string][]string{},
		warnings: map[string][]string{}, warnRules: map[string][]string{}}
	var sets []compat.ReleaseSet
	var rs []*recipe.Recipe
	if only != nil {
		sets, rs = only.sets, only.recipes
	} else {
		sets, rs = compat.CloneSets(w.sets), w.recipes
	}
	rep, err := compat.Check(sets, rs, compat.Inputs{Now: o.Now, Tables: o.Tables, EOL: data})
	if err != nil {
		return v, fmt.Errorf("%s: %w", file, err)
	}
	for _, s := range rep.Sets {
		v.order = append(v.order, s.Name)
		v.kubernetes[s.Name] = s.Kubernetes
	}
	seen := map[string]bool{}
	for _, f := range rep.Findings {
		msg := f.Component + ": " + f.Message
		if only != nil && !only.comps[f.Component] || seen[f.Set+"\x00"+msg] {
			continue
		}
		seen[f.Set+"\x00"+msg] = true
		rule := f.Rule + "\x00" + f.Component + "\x00" + f.Other
		switch f.Severity {
		case compat.Violation:
			v.violations[f.Set] = append(v.violations[f.Set], msg)
			v.rules[f.Set] = append(v.rules[f.Set], rule)
		case compat.Warning:
			v.warnings[f.Set] = append(v.warnings[f.Set], msg)
			v.warnRules[f.Set] = append(v.warnRules[f.Set], rule)
		}
	}
	return v, nil
}

// play returns the world after action a (the world itself is not changed).
func (w *world) play(file string, a Action, o Options) (*world, error) {
	text, err := w.flush(file)
	if err != nil {
		return nil, err
	}
	next := &world{text: text, sets: w.sets, recipes: slices.Clone(w.recipes)}
	i := slices.IndexFunc(next.recipes, func(r *recipe.Recipe) bool { return r.Ref() == a.Recipe })
	if i < 0 {
		return next, nil // a compat action, or a recipe of an add not played
	}
	r := next.recipes[i]
	switch a.Kind {
	case ActBump:
		text, _, err := compat.SyncBump(file, next.text, a.Component, r.Version, a.Version)
		if err != nil {
			return nil, err
		}
		next.text = text
		fallthrough
	case ActRetire:
		moved, err := played(r, a)
		if err != nil {
			return nil, err
		}
		next.recipes[i] = moved
	case ActAdd:
		if !slices.ContainsFunc(next.recipes, func(r *recipe.Recipe) bool { return r.Ref() == a.NewRecipe }) { // not a SetOnly add
			next.recipes = append(next.recipes, derived(r, a, o))
		}
		text, _, err := compat.AddMinor(file, next.text, compat.NewMinor{Component: a.Component, From: a.Recipe, To: a.NewRecipe, Minor: a.Minor,
			Versions: compat.RecipeVersions(next.recipes)})
		if err != nil {
			return nil, err
		}
		next.text = text
	}
	if !bytes.Equal(next.text, text) {
		if next.sets, err = compat.ParseReleaseSets(file, next.text); err != nil {
			return nil, err
		}
	}
	return next, nil
}

// played is recipe r once bump or retire a is done (r is not changed).
func played(r *recipe.Recipe, a Action) (*recipe.Recipe, error) {
	moved := *r
	switch a.Kind {
	case ActBump:
		moved.Version = a.Version
	case ActRetire:
		day, err := time.Parse(time.DateOnly, a.EndOfLife)
		if err != nil {
			return nil, err
		}
		moved.EndOfLife = day
	}
	return &moved, nil
}

// flush is the world's text with the bumps played in place written to it.
func (w *world) flush(file string) ([]byte, error) {
	if len(w.pending) == 0 {
		return w.text, nil
	}
	text, _, err := compat.SyncBumps(file, w.text, w.pending)
	return text, err
}

// index is what playInPlace looks up in a world: each recipe by name and
// by component, the components whose recipes require each component, the
// components whose values name each recipe, and each set's Kubernetes
// binaries and ranges.
type index struct {
	byRef      map[string]int
	byComp     map[string][]int
	requiredBy map[string][]string
	naming     map[string][]string // recipe -> the components set values name it for (recipe:NAME)
	kube       [][]string          // per set, its Kubernetes binaries
	ranged     []string            // per set, a component with a range ("" for none)
}

func (w *world) index() *index {
	ix := &index{byRef: map[string]int{}, byComp: map[string][]int{}, requiredBy: map[string][]string{}, naming: map[string][]string{}}
	for i, r := range w.recipes {
		ix.byRef[r.Ref()] = i
		c := recipe.Component(r.Name)
		ix.byComp[c] = append(ix.byComp[c], i)
		for _, t := range slices.Sorted(maps.Keys(r.Requires)) {
			ix.requiredBy[t] = append(ix.requiredBy[t], c)
		}
	}
	for _, s := range w.sets {
		for c, ref := range s.Recipes {
			for _, n := range []string{ref.From, ref.To} {
				ix.naming[n] = append(ix.naming[n], c)
			}
		}
		var kube []string
		for _, c := range slices.Sorted(maps.Keys(s.Components)) {
			if kubernetes(c) {
				kube = append(kube, c)
			}
		}
		ix.kube = append(ix.kube, kube)
		ranged := ""
		if len(s.Upgrades) > 0 {
			ranged = slices.Sorted(maps.Keys(s.Upgrades))[0]
		}
		ix.ranged = append(ix.ranged, ranged)
	}
	return ix
}

// kubernetes reports whether c is Kubernetes or one of its binaries, whose
// verdicts depend on each other and on every set's other components.
func kubernetes(c string) bool { return supportdata.ProductOf(c) == "kubernetes" }

// scope is part of a world: the sets with only some components, the
// recipes those need, and the components whose verdicts it decides.
type scope struct {
	sets    []compat.ReleaseSet
	recipes []*recipe.Recipe
	comps   map[string]bool
}

// playInPlace plays a bump or retire of a recipe on the world itself when
// the verdicts it can change are those of a few components: the recipe's
// own and the components that name it (recipe:NAME) or require them, none of
// them Kubernetes'. A verdict of compat on a component depends on its own
// value, Kubernetes' values and those of what it requires, nothing else; so
// the action's effect is the difference on those components, evaluated on
// the sets cut down to them and what they depend on. ok is false, and the
// world unchanged, when the action must be played the full way: an add,
// a Kubernetes recipe, or a bump whose edit of the release set file is not
// a plain version replacing a plain version (a range's end; a version that
// the file might not take as written), which only the file itself can tell.
func (w *world) playInPlace(file string, a Action, data *supportdata.Data, o Options, ix *index) ([]SetEffect, bool) {
	at, found := ix.byRef[a.Recipe]
	if fullWay || !found || (a.Kind != ActBump && a.Kind != ActRetire) {
		return nil, false
	}
	r := w.recipes[at]
	comp := recipe.Component(r.Name)
	if comp != a.Component || kubernetes(comp) {
		return nil, false
	}
	var edits []edit
	changed := map[string]bool{comp: true}
	for _, c := range ix.naming[a.Recipe] {
		changed[c] = true
	}
	for i, s := range w.sets {
		if a.Kind != ActBump {
			continue
		}
		from, ok := s.Components[comp]
		to, ranged := s.Upgrades[comp]
		e := edit{set: i, from: ok && s.Recipes[comp].From == "" && compat.FollowsBump(from, r.Version, a.Version), to: ranged && s.Recipes[comp].To == "" && compat.FollowsBump(to, r.Version, a.Version)}
		if !e.from && !e.to {
			continue
		}
		if _, err := debversion.FromUpstream(a.Version); err != nil || !plainVersion.MatchString(a.Version) {
			return nil, false
		}
		if e.from {
			from = a.Version
		}
		if e.to {
			to = a.Version
		}
		if compat.GoesBackwards(from, to) {
			return nil, false
		}
		edits = append(edits, e)
	}
	k := maps.Clone(changed)
	for c := range changed {
		for _, d := range ix.requiredBy[c] {
			k[d] = true
		}
	}
	for c := range k {
		if kubernetes(c) {
			return nil, false
		}
	}
	before, err := w.evaluate(file, data, o, w.scope(k, ix))
	if err != nil {
		return nil, false
	}
	old := w.recipes[at]
	moved, err := played(old, a)
	if err != nil {
		return nil, false
	}
	w.recipes[at] = moved
	undo := w.apply(comp, edits, a.Version)
	after, err := w.evaluate(file, data, o, w.scope(k, ix))
	if err != nil {
		w.recipes[at] = old
		undo()
		return nil, false
	}
	if a.Kind == ActBump {
		w.pending = append(w.pending, compat.Bump{Component: comp, From: old.Version, To: a.Version})
	}
	return diff(before, after), true
}

// edit is a bump's change to a set: its value of the component, or a
// range's ends, become the new version.
type edit struct {
	set      int
	from, to bool
}

// apply makes the edits of comp's values in place, and returns what undoes
// them.
func (w *world) apply(comp string, edits []edit, version string) (undo func()) {
	var was []string
	for _, e := range edits {
		s := w.sets[e.set]
		was = append(was, s.Components[comp], s.Upgrades[comp])
		if e.from {
			s.Components[comp] = version
		}
		if e.to {
			s.Upgrades[comp] = version
		}
	}
	return func() {
		for i, e := range edits {
			s := w.sets[e.set]
			s.Components[comp] = was[2*i]
			if e.to {
				s.Upgrades[comp] = was[2*i+1]
			}
		}
	}
}

// fullWay plays every action the full way (tests compare the two).
var fullWay bool

// plainVersion is a version a release set file takes as written, as a plain
// scalar and in a flow mapping alike.
var plainVersion = regexp.MustCompile(`^v?[0-9][0-9A-Za-z.+~-]*$`)

// scope is the world cut down to the components comps: each set with those
// components and what their verdicts depend on (Kubernetes' values, what
// they require, and one range, which makes compat check every stage of the
// upgrade), and the recipes of all these and those the sets name.
func (w *world) scope(comps map[string]bool, ix *index) *scope {
	sc := &scope{comps: comps}
	need := map[int]bool{}
	for i, s := range w.sets {
		keep := slices.Clone(ix.kube[i])
		if ix.ranged[i] != "" {
			keep = append(keep, ix.ranged[i])
		}
		for c := range comps {
			keep = append(keep, c)
			for _, at := range ix.byComp[c] {
				keep = append(keep, slices.Collect(maps.Keys(w.recipes[at].Requires))...)
			}
		}
		cut := compat.ReleaseSet{Name: s.Name, Components: map[string]string{}}
		for _, c := range keep {
			v, ok := s.Components[c]
			if !ok {
				continue
			}
			cut.Components[c] = v
			if to, ok := s.Upgrades[c]; ok {
				if cut.Upgrades == nil {
					cut.Upgrades = map[string]string{}
				}
				cut.Upgrades[c] = to
			}
			if ref, ok := s.Recipes[c]; ok {
				if cut.Recipes == nil {
					cut.Recipes = map[string]compat.RecipeRef{}
				}
				cut.Recipes[c] = ref
				for _, n := range []string{ref.From, ref.To} {
					if at, ok := ix.byRef[n]; ok {
						need[at] = true
					}
				}
			}
			for _, at := range ix.byComp[c] {
				need[at] = true
			}
		}
		sc.sets = append(sc.sets, cut)
	}
	for _, at := range slices.Sorted(maps.Keys(need)) {
		sc.recipes = append(sc.recipes, w.recipes[at])
	}
	return sc
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
