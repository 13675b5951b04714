package repo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// RefreshResult is one suite re-signed by Refresh.
type RefreshResult struct {
	Suite      string `json:"suite"`
	Generation int    `json:"generation"`
}

// Refresh re-signs suites (every suite when none is named) with a new Date,
// and Valid-Until when the suite has a valid-for, each as a new generation
// that carries every index over unchanged: cheap, and safe to run from a
// timer as often as wanted. The signing keys are Options.Signer's (two during
// a key rotation); Options.Settings may change settings as for any write.
// A suite that does not exist is ErrNotFound, before anything is written.
// A suite that cannot be refreshed (a refused settings change, a damaged
// generation) does not stop the others: a timer refreshing every suite keeps
// each healthy suite's Valid-Until ahead of the clock whatever happens to
// one. The result lists the suites refreshed; the error joins every
// failure, each naming its suite.
func (r *Repo) Refresh(ctx context.Context, suites []string) ([]RefreshResult, error) {
	if r.opts.Signer == nil {
		return nil, fmt.Errorf("%w: no signing key", ErrKey)
	}
	if err := r.mustExist(); err != nil {
		return nil, err
	}
	unlock, err := r.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	r.recoverPublish(ctx)
	all, err := r.managedSuites()
	if err != nil {
		return nil, err
	}
	if len(suites) == 0 {
		// A suite whose link is lost is none of all: said, not skipped
		// without a word while its Release runs out (Valid-Until).
		if _, err := r.unlinkedGenerations(all); err != nil {
			return nil, err
		}
		if suites = all; len(suites) == 0 {
			return nil, fmt.Errorf("%w: %s has no published suite to refresh", ErrNotFound, r.root)
		}
	}
	for _, s := range suites {
		// "" names no suite (suitesOrAll reads it as every suite).
		if err := validSuite(s); err != nil {
			return nil, err
		}
		if _, err := r.suitesOrAll(s); err != nil {
			return nil, err
		}
	}
	var out []RefreshResult
	var failed []error
	for _, s := range suites {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		n, err := r.refreshSuite(ctx, s)
		if err != nil {
			if ctx.Err() != nil {
				return out, err
			}
			failed = append(failed, err)
			continue
		}
		out = append(out, RefreshResult{Suite: s, Generation: n})
	}
	return out, errors.Join(failed...)
}

// refreshSuite writes suite's refresh generation; an error names the suite.
func (r *Repo) refreshSuite(ctx context.Context, suite string) (int, error) {
	st, err := r.prepare(suite)
	if err == nil {
		var n int
		if n, err = r.writeGeneration(ctx, st, Record{Operation: "refresh"}); err == nil {
			return n, nil
		}
	}
	if _, named := errors.AsType[*FieldChangeError](err); named {
		return 0, err // its message names the suite
	}
	return 0, fmt.Errorf("suite %s not refreshed: %w", suite, err)
}

// RollbackResult says what a rollback did.
type RollbackResult struct {
	Suite      string  `json:"suite"`
	To         int     `json:"to"`         // the generation whose packages are live again
	Generation int     `json:"generation"` // the new live generation
	Added      []Entry `json:"added"`      // listed again
	Removed    []Entry `json:"removed"`    // no longer listed
}

// Rollback makes the packages of generation to live again in suite (to 0:
// the newest kept generation whose packages differ from the live ones). It
// writes them as a new generation, dated now and signed with the current
// keys and settings: a client that has the live Release accepts it (apt
// ignores a Release older than the one it has), and sees the packages of
// generation to. Components and architectures added since stay listed, empty.
func (r *Repo) Rollback(ctx context.Context, suite string, to int) (*RollbackResult, error) {
	unlock, st, err := r.begin(ctx, suite)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if st.live == nil {
		all, _ := r.managedSuites()
		return nil, r.noSuite(suite, all)
	}
	if st.base, err = r.rollbackTarget(st.live, to); err != nil {
		return nil, err
	}
	st.copyBase = true // the old files get this generation's mtime: see placeFile
	for _, c := range st.live.release.comps {
		if !slices.Contains(st.base.release.comps, c) {
			if _, err := st.edit(c); err != nil { // empty in the target
				return nil, err
			}
		}
	}
	res := &RollbackResult{Suite: suite, To: st.base.n}
	if res.Added, res.Removed, err = diffGenerations(st.live, st.base); err != nil {
		return nil, err
	}
	// gc keeps the pool files of every kept generation: one missing was
	// removed outside updeb, and listing it again made its package 404.
	for _, e := range res.Added {
		if err := r.checkListedAgain(fmt.Sprintf("generation %d of suite %s", st.base.n, suite), e); err != nil {
			return nil, err
		}
	}
	rec := Record{Operation: "rollback", From: "generation " + strconv.Itoa(st.base.n), Added: res.Added, Removed: res.Removed}
	if res.Generation, err = r.writeGeneration(ctx, st, rec); err != nil {
		return nil, err
	}
	return res, nil
}

// rollbackTarget returns kept generation to of live's suite, or with to 0 the
// newest kept one whose packages differ from live's (the packages, read: not
// the index files, which also change when an architecture is added).
func (r *Repo) rollbackTarget(live *generation, to int) (*generation, error) {
	gens, err := r.keptGenerations(live.suite, live.n)
	if err != nil {
		return nil, err
	}
	kept := make([]string, 0, len(gens))
	for _, n := range gens {
		kept = append(kept, strconv.Itoa(n))
	}
	see := fmt.Sprintf("kept generations of %s: %s; see 'updeb repo history %s'", live.suite, strings.Join(kept, ", "), live.suite)
	if to == live.n {
		return nil, fmt.Errorf("%w: generation %d is the live generation of %s (%s)", ErrInvalid, to, live.suite, see)
	}
	liveID := live.release.contentID()
	for _, n := range gens {
		if n == live.n || (to != 0 && n != to) {
			continue
		}
		g, err := r.readGeneration(live.suite, n)
		if err != nil {
			return nil, err
		}
		if to != 0 {
			return g, nil
		}
		if g.release.contentID() == liveID {
			continue
		}
		// Other index files may list the same packages: a write that added
		// an architecture (its Packages) or a suite's first Contents.
		added, removed, err := diffGenerations(live, g)
		if err != nil {
			return nil, err
		}
		if len(added)+len(removed) > 0 {
			return g, nil
		}
	}
	if to != 0 {
		return nil, fmt.Errorf("%w: suite %s has no kept generation %d (%s)", ErrNotFound, live.suite, to, see)
	}
	return nil, fmt.Errorf("%w: suite %s has no kept generation with other packages than the live one to roll back to (%s)", ErrNotFound, live.suite, see)
}

// packages lists every package g serves, by component, name, version,
// architecture and digest: what two generations are compared by.
func (g *generation) packages() (map[string]Entry, error) {
	out := map[string]Entry{}
	for _, comp := range g.release.comps {
		c, err := g.component(comp)
		if err != nil {
			return nil, err
		}
		for k, e := range c {
			out[comp+" "+k.String()+" "+e.SHA256] = e
		}
	}
	return out, nil
}

// diffGenerations returns the packages to lists and from does not, and the
// other way round.
func diffGenerations(from, to *generation) (added, removed []Entry, err error) {
	a, err := from.packages()
	if err != nil {
		return nil, nil, err
	}
	b, err := to.packages()
	if err != nil {
		return nil, nil, err
	}
	for k, e := range b {
		if _, ok := a[k]; !ok {
			added = append(added, e)
		}
	}
	for k, e := range a {
		if _, ok := b[k]; !ok {
			removed = append(removed, e)
		}
	}
	byName := func(list []Entry) {
		sort.Slice(list, func(i, j int) bool {
			return list[i].Component+list[i].key().String() < list[j].Component+list[j].key().String()
		})
	}
	byName(added)
	byName(removed)
	return added, removed, nil
}
