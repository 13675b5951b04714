package repo

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/updeb/updeb/pkg/archive"
	"github.com/updeb/updeb/pkg/atomicfile"
	"github.com/updeb/updeb/pkg/deb"
)

// PublishResult says what a publish did.
type PublishResult struct {
	Added     []Entry `json:"added"`     // newly listed
	Unchanged []Entry `json:"unchanged"` // already published with the same bytes (a no-op)
	// Restored are unchanged packages whose pool file was missing or had
	// other bytes than the indexes list (damaged outside updeb): the pool
	// file holds the published bytes again.
	Restored   []Entry `json:"restored,omitempty"`
	Generation int     `json:"generation"` // the live generation after the publish
}

// Publish adds packages to suite/component: each .deb is copied into the pool
// (filling its Filename, Size and digests), then the suite's next generation is
// written, signed and switched in. A package already published with the same
// bytes is left as it is; one published (or in the pool, or collected from
// it) with other bytes, in this component or another of the suite, makes the
// whole publish fail with *ConflictError, before anything is changed. With nothing new and no settings to change, no
// generation is written.
func (r *Repo) Publish(ctx context.Context, suite, comp string, pkgs []Package) (*PublishResult, error) {
	return r.PublishComponents(ctx, suite, map[string][]Package{comp: pkgs})
}

// PublishComponents is Publish into several components of suite at once, as
// one generation: the packages appear together or not at all.
func (r *Repo) PublishComponents(ctx context.Context, suite string, pkgs map[string][]Package) (*PublishResult, error) {
	res, err := r.PublishSuites(ctx, map[string]map[string][]Package{suite: pkgs})
	if err != nil {
		return nil, err
	}
	return res[suite], nil
}

// PublishSuites is PublishComponents into several suites (suite ->
// component -> packages), each as its own generation, under one lock: every
// suite's packages are copied and checked before any suite is written, so a
// package refused for one suite leaves every suite as it was. Two builds of
// one pool file given for two suites are refused too. A failure while the
// generations are written (a full disk) leaves the suites written before it
// published: their results are returned with the error.
func (r *Repo) PublishSuites(ctx context.Context, pkgs map[string]map[string][]Package) (map[string]*PublishResult, error) {
	targets := map[string][]string{}
	for suite, byComp := range pkgs {
		comps := slices.Sorted(maps.Keys(byComp))
		for _, comp := range comps {
			if len(byComp[comp]) == 0 {
				return nil, fmt.Errorf("%w: no packages to publish in component %s", ErrInvalid, comp)
			}
		}
		if len(comps) > 0 {
			targets[suite] = comps
		}
	}
	if len(targets) == 0 {
		return nil, fmt.Errorf("%w: no packages to publish", ErrInvalid)
	}
	unlock, err := r.beginAll(ctx, targets)
	if err != nil {
		return nil, err
	}
	defer unlock()
	var staged []*publishPlan
	cleaned := map[string]bool{}      // the pool folders staged into
	pooled := map[string]Entry{}      // pool path -> the entry added for it, in any suite
	pooledFrom := map[string]string{} // and its .deb
	for _, suite := range slices.Sorted(maps.Keys(targets)) {
		st, err := r.prepare(suite)
		if err != nil {
			return nil, err
		}
		p := &publishPlan{st: st, res: &PublishResult{Generation: st.generation()}, lists: map[string][]string{}}
		origin := map[string]string{}
		for _, comp := range targets[suite] {
			c, err := st.component(comp)
			if err != nil {
				return nil, err
			}
			files, cleanup, err := r.stagePackages(ctx, suite, comp, c, pkgs[suite][comp], p.res, origin, p.lists, cleaned)
			defer cleanup()
			if err != nil {
				return nil, err
			}
			p.toLink = append(p.toLink, files...)
		}
		if err := r.checkOneBuild(ctx, st, p.res.Added, origin); err != nil {
			return nil, err
		}
		for _, e := range p.res.Added {
			if old, ok := pooled[e.Filename]; ok && old.SHA256 != e.SHA256 {
				if old.key() != e.key() {
					return nil, epochClash(e.key().String(), origin[e.Filename], old.key().String(), pooledFrom[e.Filename], e.Filename)
				}
				return nil, &ConflictError{Package: e.key().String(), Filename: e.Filename, Have: old.SHA256, New: e.SHA256, Path: origin[e.Filename],
					Given: pooledFrom[e.Filename], Suite: old.Suite, Component: old.Component, Into: e.Component}
			}
			pooled[e.Filename], pooledFrom[e.Filename] = e, origin[e.Filename]
		}
		staged = append(staged, p)
	}
	out := map[string]*PublishResult{}
	for _, p := range staged {
		if err := r.publishStaged(ctx, p); err != nil {
			return out, err
		}
		out[p.st.suite] = p.res
	}
	return out, nil
}

// publishPlan is a suite's part of a publish, staged and checked.
type publishPlan struct {
	st     *suiteState
	res    *PublishResult
	toLink []*stagedFile
	lists  map[string][]string // pool path -> the paths it installs
}

// publishStaged links p's pool files and writes p's suite's next generation
// (none when nothing is new and no setting changes).
func (r *Repo) publishStaged(ctx context.Context, p *publishPlan) error {
	st, res := p.st, p.res
	if len(res.Added) == 0 && len(st.changed) == 0 {
		r.opts.Logger.Info("nothing to publish: every package is already published with the same bytes", "suite", st.suite)
		r.keepKeyring()
		return nil
	}
	noted, err := r.notePublish(st.suite, st.generation(), p.toLink)
	if err != nil {
		return err
	}
	created, err := linkAll(p.toLink)
	published := false
	defer func() {
		if !published {
			r.unlinkUnpublished(st.suite, st.generation(), created)
		}
		if noted != "" {
			os.Remove(noted)
		}
	}()
	if err != nil {
		return err
	}
	// The file lists the Contents indices are made of: stored once, now
	// (a list that fails to be stored is read from the pool file later).
	for _, e := range res.Added {
		if err := st.contents.store(e, p.lists[e.Filename]); err != nil {
			return err
		}
	}
	r.hook("pool")
	for _, e := range res.Added {
		c, err := st.edit(e.Component)
		if err != nil {
			return err
		}
		c[e.key()] = e
	}
	if res.Generation, err = r.writeGeneration(ctx, st, Record{Operation: "publish", Added: res.Added}); err != nil {
		return err
	}
	published = true
	return nil
}

// stagePackages copies each package into its pool directory under a
// temporary name and checks it against what the component, the pool and the
// collected files say about its name, version and architecture. It fills
// res.Added and res.Unchanged (and origin: each added pool path's .deb) and
// returns the files to link; cleanup removes the temporary files that remain
// and the pool folders left empty (those of a refused publish).
func (r *Repo) stagePackages(ctx context.Context, suite, comp string, c component, pkgs []Package, res *PublishResult, origin map[string]string, lists map[string][]string, cleaned map[string]bool) (toLink []*stagedFile, cleanup func(), err error) {
	var staged []*stagedFile
	cleanup = func() {
		for _, s := range staged {
			s.discard()
		}
		removeEmptyDirs(r.root, cleaned)
	}
	batch, listed := component{}.finder(), c.finder()
	given := map[key]string{} // the .deb each entry of batch comes from
	for i := range pkgs {
		if err := ctx.Err(); err != nil {
			return nil, cleanup, err
		}
		p := &pkgs[i]
		for _, f := range poolFields {
			if _, ok := p.Control.Get(f); ok {
				return nil, cleanup, fmt.Errorf("%w: %s: control file has a %s field, which only a repository index may have", ErrInvalid, p.Path, f)
			}
		}
		s, err := stageIntoPool(ctx, r.root, comp, p, cleaned)
		if err != nil {
			return nil, cleanup, err
		}
		staged = append(staged, s)
		sp := stanza(p)
		e, err := entryFromStanza(suite, comp, sp, p.Path)
		if err != nil {
			return nil, cleanup, err
		}
		e.raw = sp.Bytes()
		conflict := func(have string) *ConflictError {
			return &ConflictError{Package: e.key().String(), Filename: e.Filename, Have: have, New: e.SHA256, Path: p.Path}
		}
		if old, ok := batch.find(e.key()); ok {
			if old.SHA256 != e.SHA256 {
				ce := sameVersionConflict(conflict(old.SHA256), old, e.key())
				ce.Given = given[old.key()]
				return nil, cleanup, ce
			}
			continue
		}
		batch.add(e)
		given[e.key()] = p.Path
		if old, ok := listed.find(e.key()); ok {
			if old.SHA256 != e.SHA256 {
				return nil, cleanup, sameVersionConflict(conflict(old.SHA256), old, e.key())
			}
			res.Unchanged = append(res.Unchanged, old)
			if err := r.restorePoolFile(ctx, s, old, res); err != nil {
				return nil, cleanup, err
			}
			continue
		}
		have, collected, err := r.poolDigest(ctx, e.Filename)
		if err != nil {
			return nil, cleanup, err
		}
		if have != "" && have != e.SHA256 {
			ce := conflict(have)
			ce.Suite, ce.Component, ce.Into = suite, comp, comp
			if ce.Collected = collected; !collected {
				ce.Held = poolHolder(ctx, s.final, e.key())
				ce.Pooled = ce.Held == ""
			}
			return nil, cleanup, ce
		}
		if other, ok := origin[e.Filename]; ok {
			return nil, cleanup, epochClash(e.key().String(), p.Path, addedAs(res.Added, e.Filename), other, e.Filename)
		}
		paths := p.Contents
		if paths == nil {
			info, err := deb.InspectFile(ctx, p.Path, archive.Limits{})
			if err != nil {
				return nil, cleanup, fmt.Errorf("%s: listing its files for the Contents index: %w", p.Path, err)
			}
			paths = ContentsOf(info)
		}
		if err := checkContentsList(p.Path, paths); err != nil {
			return nil, cleanup, err
		}
		toLink = append(toLink, s)
		res.Added = append(res.Added, e)
		origin[e.Filename] = p.Path
		lists[e.Filename] = paths
	}
	return toLink, cleanup, nil
}

// restorePoolFile puts the staged bytes s of the published entry old (the
// same SHA256) in its pool file when that is missing or holds other bytes:
// damaged outside updeb, it made apt fail with a Hash Sum mismatch, and
// publishing the same .deb again is how an operator repairs it ('updeb repo
// verify' says so). The file is replaced in one rename, under the lock. It
// is the pool file the suite lists, which is not s's own pool path for an
// entry promoted into another component (it lists its source's pool file,
// pool/main/... for component extra): restoring s.final instead left the
// listed file damaged, the package taken as unchanged.
func (r *Repo) restorePoolFile(ctx context.Context, s *stagedFile, old Entry, res *PublishResult) error {
	have, err := existingDigest(ctx, r.root, old.Filename)
	if err != nil || have == old.SHA256 {
		return err
	}
	listed := filepath.Join(r.root, filepath.FromSlash(old.Filename))
	if err := atomicfile.MkdirAll(filepath.Dir(listed), 0o755); err != nil {
		return err
	}
	if err := os.Rename(s.tmp, listed); err != nil {
		return err
	}
	if err := syncDirs(map[string]bool{filepath.Dir(listed): true}); err != nil {
		return err
	}
	was := "missing"
	if have != "" {
		was = "sha256 " + have
	}
	r.opts.Logger.Warn("restored a damaged pool file: it now holds the published bytes again", "file", listed, "was", was, "sha256", old.SHA256)
	res.Restored = append(res.Restored, old)
	return nil
}

// poolDigest returns the SHA256 of the bytes the pool path rel holds
// (existingDigest) or, once collected, held (collectedDigest, collected
// true); "" when it never held any.
func (r *Repo) poolDigest(ctx context.Context, rel string) (have string, collected bool, err error) {
	have, err = existingDigest(ctx, r.root, rel)
	if err == nil && have == "" {
		have, err = r.collectedDigest(rel)
		collected = have != ""
	}
	return have, collected, err
}

// poolHolder names the package the pool file final holds when it is not
// want: another epoch of it, as pool file names leave the epoch out. It is
// "" when the file holds want, is gone (collected) or cannot be read.
func poolHolder(ctx context.Context, final string, want key) string {
	info, err := deb.InspectFile(ctx, final, archive.Limits{})
	if err != nil {
		return ""
	}
	k, err := identity(info.Control, final)
	if err != nil || k == want {
		return ""
	}
	return k.String()
}

// addedAs names the added entry stored as the pool file filename.
func addedAs(added []Entry, filename string) string {
	for _, e := range added {
		if e.Filename == filename {
			return e.key().String()
		}
	}
	return filename
}

// epochClash refuses a (from the .deb aPath) and b (from bPath), two
// versions that would be the one pool file filename.
func epochClash(a, aPath, b, bPath, filename string) error {
	return fmt.Errorf("%w: %s (%s) and %s (%s) would both be the pool file %s: pool file names leave the epoch out, as Debian's do, so versions that differ only in their epoch cannot both be published; publish one of them",
		ErrInvalid, a, aPath, b, bPath, filename)
}

// Remove retires packages from suite/component (comp "" finds the one
// component that holds them; several are an error listing them): every version of name when
// version is empty, on every architecture when arch is empty. Their pool files
// stay (other suites, kept generations and clients mid-update may still fetch
// them) until GC finds nothing refers to them; a removed version can never
// come back with other bytes.
func (r *Repo) Remove(ctx context.Context, suite, comp, name, version, arch string) ([]Entry, error) {
	return r.RemoveAll(ctx, suite, comp, []Selector{{Name: name, Version: version}}, arch)
}

// RemoveAll is Remove of every package sel names, as one generation: all of
// them are removed, or, when one is not published (or is in several
// components and comp is ""), none.
func (r *Repo) RemoveAll(ctx context.Context, suite, comp string, sel []Selector, arch string) ([]Entry, error) {
	comps := []string{comp}
	named := comp != ""
	if !named {
		comps = nil
	}
	unlock, st, err := r.begin(ctx, suite, comps...)
	if err != nil {
		return nil, err
	}
	defer unlock()
	var removed []Entry
	for _, s := range sel {
		name, version := s.Name, s.Version
		// named twice (hello hello=1.0-1): what is left of it, if any
		twice := slices.ContainsFunc(removed, func(e Entry) bool { return s.matches(e.key()) && (arch == "" || e.Architecture == arch) })
		comp := comp
		if !named {
			if comp, err = st.holding(name, version, arch); err != nil {
				if twice && errors.Is(err, ErrNotFound) {
					continue
				}
				return nil, err
			}
		}
		c, err := st.edit(comp)
		if err != nil {
			return nil, err
		}
		n := len(removed)
		for k, e := range c {
			if s.matches(k) && (arch == "" || k.arch == arch) {
				removed = append(removed, e)
				delete(c, k)
			}
		}
		if len(removed) == n && !twice {
			// say where it is, when another component holds it
			where := ""
			if held, err := st.holding(name, version, arch); err == nil {
				where = fmt.Sprintf(" (it is in component %s: give --component %s, or leave --component out)", held, held)
			} else if errors.Is(err, ErrInvalid) {
				where = " (" + strings.TrimPrefix(err.Error(), ErrInvalid.Error()+": ") + ")"
			} else {
				where = st.publishedForAll(name, version, arch)
			}
			return nil, fmt.Errorf("%w: %s is not published in suite %s component %s%s", ErrNotFound, packageWhat(name, version, arch), suite, comp, where)
		}
	}
	sort.Slice(removed, func(i, j int) bool { return removed[i].key().String() < removed[j].key().String() })
	if _, err := r.writeGeneration(ctx, st, Record{Operation: "remove", Removed: removed}); err != nil {
		return nil, err
	}
	return removed, nil
}

// packageWhat names a package for messages: NAME[=VERSION][ (ARCH)].
func packageWhat(name, version, arch string) string {
	what := name
	if version != "" {
		what += "=" + version
	}
	if arch != "" {
		what += " (" + arch + ")"
	}
	return what
}

// holding returns the one component of the suite's live generation that
// holds name (at version and arch, when given): what remove works on when
// no component is named. None is ErrNotFound; several are ErrInvalid,
// listing them.
func (st *suiteState) holding(name, version, arch string) (string, error) {
	what := packageWhat(name, version, arch)
	if st.live == nil {
		return "", fmt.Errorf("%w: suite %s has no packages", ErrNotFound, st.suite)
	}
	var found []string
	for _, comp := range sortedCopy(st.live.release.comps) {
		c, err := st.component(comp)
		if err != nil {
			return "", err
		}
		for k := range c {
			if k.name == name && (version == "" || k.version == version) && (arch == "" || k.arch == arch) {
				found = append(found, comp)
				break
			}
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("%w: %s is not published in any component of suite %s%s", ErrNotFound, what, st.suite, st.publishedForAll(name, version, arch))
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("%w: %s is published in %d components of suite %s: %s; name one with --component", ErrInvalid, what, len(found), st.suite, strings.Join(found, ", "))
}

// publishedForAll says, for a package not published for arch, that it is
// published for architecture all when it is ("" when not, or when arch
// names none or all): --arch amd64 of an Architecture: all package, which
// every architecture installs, found nothing and said only that.
func (st *suiteState) publishedForAll(name, version, arch string) string {
	if arch == "" || arch == "all" {
		return ""
	}
	comp, err := st.holding(name, version, "all")
	if err != nil && !errors.Is(err, ErrInvalid) {
		return ""
	}
	in := "component " + comp
	if comp == "" {
		in = "several components"
	}
	return fmt.Sprintf(" (it is published in %s as Architecture: all, which every architecture installs: give --arch all, or leave --arch out)", in)
}
