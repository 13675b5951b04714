package repo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Place is a suite, or one component of it ("" for every component).
type Place struct {
	Suite, Component string
}

func (p Place) String() string { return joinNonEmpty(p.Suite, "/", p.Component) }

// ParsePlace reads SUITE or SUITE/COMPONENT (components may hold slashes:
// component/kubernetes131).
func ParsePlace(s string) (Place, error) {
	suite, comp, _ := strings.Cut(s, "/")
	p := Place{Suite: suite, Component: comp}
	if err := validSuite(suite); err != nil {
		return p, err
	}
	if comp != "" {
		if err := validComponent(comp); err != nil {
			return p, err
		}
	}
	return p, nil
}

// Selector picks packages by name, and by version unless Version is empty.
type Selector struct {
	Name, Version string
}

func (s Selector) String() string { return joinNonEmpty(s.Name, "=", s.Version) }

// joinNonEmpty returns a+sep+b, or a when b is empty.
func joinNonEmpty(a, sep, b string) string {
	if b == "" {
		return a
	}
	return a + sep + b
}

func (s Selector) matches(k key) bool {
	return k.name == s.Name && (s.Version == "" || k.version == s.Version)
}

// PromoteResult says what a promotion did.
type PromoteResult struct {
	Added      []Entry `json:"added"`      // now listed in the target
	Unchanged  []Entry `json:"unchanged"`  // already there with the same bytes
	Generation int     `json:"generation"` // the target's live generation afterwards
}

// Promote lists in to exactly the packages published in from: the same pool
// file, so the same bytes and digests, never rebuilt or copied. Packages are
// picked by sel (every package of from when sel is empty); each goes to
// to.Component, or to the component it comes from when to names none. A new
// target suite starts with the source's settings under its own name, with
// the Codename a publish would give it (Options.Settings', else
// Options.Defaults', else its name). A version the target already lists
// with other bytes, in the target component or another, makes the whole
// promotion fail with *ConflictError before anything changes. The target's
// history records each package and where it came from.
func (r *Repo) Promote(ctx context.Context, from, to Place, sel []Selector) (*PromoteResult, error) {
	if from.Suite == to.Suite && (to.Component == "" || from.Component == to.Component) {
		return nil, fmt.Errorf("%w: promoting from %s to %s changes nothing: name another suite or component", ErrInvalid, from, to)
	}
	unlock, st, err := r.begin(ctx, to.Suite)
	if err != nil {
		return nil, err
	}
	defer unlock()
	src, err := r.live(from.Suite)
	if err != nil {
		return nil, err
	}
	if src == nil {
		all, _ := r.managedSuites()
		return nil, r.noSuite(from.Suite, all)
	}
	picked, err := pick(src, from, sel)
	if err != nil {
		return nil, err
	}
	if st.live == nil {
		// A new target starts with the source's settings (Origin, Label,
		// valid-for, ...), under its own name, and with the Codename a
		// publish would have given it (prepare settled it: the flag's, else
		// the config's, else the suite's name): named after the suite, it
		// missed clients pinning the config's codename, and every later
		// write warned that the config's was not applied, advising the
		// --codename it refuses.
		inherit := src.settings
		inherit.Suite, inherit.Codename, inherit.Components = to.Suite, st.set.Codename, nil
		if err := r.settle(st, inherit, false); err != nil {
			return nil, err
		}
	}
	res := &PromoteResult{Generation: st.generation()}
	if err := r.checkPromotion(st, picked, to, res); err != nil {
		return nil, err
	}
	origin := map[string]string{}
	for _, e := range picked {
		origin[e.Filename] = promotedFrom(e)
	}
	if err := r.checkOneBuild(ctx, st, res.Added, origin); err != nil {
		return nil, err
	}
	if len(res.Added) == 0 && len(st.changed) == 0 {
		r.opts.Logger.Info("nothing to promote: every package is already in the target with the same bytes", "from", from, "to", to)
		r.keepKeyring()
		return res, nil
	}
	for _, e := range res.Added {
		c, err := st.edit(e.Component)
		if err != nil {
			return nil, err
		}
		c[e.key()] = e
	}
	rec := Record{Operation: "promote", From: fmt.Sprintf("%s generation %d", from, src.n), Added: res.Added}
	if res.Generation, err = r.writeGeneration(ctx, st, rec); err != nil {
		return nil, err
	}
	return res, nil
}

// pick returns the packages of src (one component or all) that sel names;
// a selector that names nothing is ErrNotFound.
func pick(src *generation, from Place, sel []Selector) ([]Entry, error) {
	comps := sortedCopy(src.release.comps)
	if from.Component != "" {
		// A mistyped component lists nothing: said as "lists no
		// packages", it read as an empty one.
		if !slices.Contains(comps, from.Component) {
			return nil, fmt.Errorf("%w: suite %s has no component %s (its components: %s)", ErrNotFound, from.Suite, from.Component, strings.Join(comps, ", "))
		}
		comps = []string{from.Component}
	}
	used := make([]bool, len(sel))
	var out []Entry
	for _, comp := range comps {
		c, err := src.component(comp)
		if err != nil {
			return nil, err
		}
		for _, e := range c.sortedEntries() {
			ok := len(sel) == 0
			for i, s := range sel {
				if s.matches(e.key()) {
					ok, used[i] = true, true
				}
			}
			if ok {
				out = append(out, e)
			}
		}
	}
	for i, s := range sel {
		if !used[i] {
			return nil, fmt.Errorf("%w: %s is not published in %s (see 'updeb repo list --suite %s')", ErrNotFound, s, from, from.Suite)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: %s lists no packages to promote", ErrNotFound, from)
	}
	return out, nil
}

// promotedFrom names where a picked entry comes from, for messages.
func promotedFrom(e Entry) string {
	return fmt.Sprintf("%s/%s's %s", e.Suite, e.Component, e.Filename)
}

// checkPromotion sorts the picked entries into res.Added and res.Unchanged
// for the target, refusing other bytes for a listed version, and checks each
// added pool file is still there with its size.
func (r *Repo) checkPromotion(st *suiteState, picked []Entry, to Place, res *PromoteResult) error {
	type target struct {
		comp string
		key  key
	}
	batch := map[target]Entry{}
	finders := map[string]*finder{} // the target's components
	for _, e := range picked {
		comp := to.Component
		if comp == "" {
			comp = e.Component
		}
		listed, ok := finders[comp]
		if !ok {
			c, err := st.component(comp)
			if err != nil {
				return err
			}
			listed = c.finder()
			finders[comp] = listed
		}
		old, ok := listed.find(e.key())
		if !ok {
			old, ok = batch[target{comp, e.key()}]
		}
		if ok {
			if old.SHA256 != e.SHA256 {
				return sameVersionConflict(&ConflictError{Package: e.key().String(), Filename: old.Filename, Have: old.SHA256, New: e.SHA256, Path: promotedFrom(e)}, old, e.key())
			}
			res.Unchanged = append(res.Unchanged, old)
			continue
		}
		if err := r.checkListedAgain(e.Suite, e); err != nil {
			return err
		}
		batch[target{comp, e.key()}] = e
		e.Suite, e.Component = st.suite, comp
		res.Added = append(res.Added, e)
	}
	sort.Slice(res.Added, func(i, j int) bool { return res.Added[i].Filename < res.Added[j].Filename })
	return nil
}

// checkListedAgain refuses to list e again (a promotion, a rollback) when its
// pool file, which where lists, is missing or has another size: changed
// outside updeb, every client would get 404 or a Hash Sum mismatch for it.
func (r *Repo) checkListedAgain(where string, e Entry) error {
	fi, err := os.Stat(filepath.Join(r.root, filepath.FromSlash(e.Filename)))
	if err != nil || fi.Size() != e.Size {
		return fmt.Errorf("%w: %s lists %s (%d bytes), but the pool file is missing or has another size (%v): the repository was changed outside updeb; restore the file (publishing the same .deb again restores a missing one), 'updeb repo verify' names every such file",
			ErrInvalid, where, e.Filename, e.Size, err)
	}
	return nil
}
