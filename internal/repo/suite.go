package repo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ProtonMail/go-crypto/openpgp/clearsign"

	"github.com/updeb/updeb/internal/aptname"
	"github.com/updeb/updeb/internal/dirglob"
	"github.com/updeb/updeb/pkg/debversion"
)

// generation is one written generation of a suite, read back: its Release
// and settings. Its components are read only when an operation needs them.
type generation struct {
	suite    string
	n        int
	dir      string
	release  *parsedRelease
	settings Settings
}

func (r *Repo) distsDir() string { return filepath.Join(r.root, "dists") }

func (r *Repo) suiteGenDir(suite string) string {
	return filepath.Join(r.distsDir(), ".gen", suite)
}

func (r *Repo) genDir(suite string, n int) string {
	return filepath.Join(r.suiteGenDir(suite), strconv.Itoa(n))
}

// liveGeneration returns the number of suite's live generation, 0 when the
// suite does not exist.
func (r *Repo) liveGeneration(suite string) (int, error) {
	link := filepath.Join(r.distsDir(), suite)
	target, err := os.Readlink(link)
	if errors.Is(err, os.ErrNotExist) {
		if _, serr := os.Lstat(link); serr == nil {
			return 0, fmt.Errorf("%w: %s is not a symbolic link to a generation", ErrNotManaged, link)
		}
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("%w: %s is not a symbolic link to a generation (%v)", ErrNotManaged, link, err)
	}
	prefix := path.Join(".gen", suite) + "/"
	n, err := strconv.Atoi(strings.TrimPrefix(target, prefix))
	if !strings.HasPrefix(target, prefix) || err != nil || n < 1 {
		return 0, fmt.Errorf("%w: %s points to %q, expected %s<n>", ErrNotManaged, link, target, prefix)
	}
	return n, nil
}

// readGeneration reads generation n of suite (its Release and settings).
func (r *Repo) readGeneration(suite string, n int) (*generation, error) {
	g := &generation{suite: suite, n: n, dir: r.genDir(suite, n)}
	name := filepath.Join(g.dir, "Release")
	data, err := readFile(name)
	if err != nil {
		return nil, err
	}
	if err := checkSignedText(g.dir, data); err != nil {
		return nil, err
	}
	if g.release, err = parseRelease(data, name); err != nil {
		return nil, err
	}
	for _, c := range g.release.comps {
		if err := validListedComponent(c); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	for _, a := range g.release.archs {
		if aptname.Architecture(a) != nil {
			return nil, fmt.Errorf("%w: %s: architecture %q", ErrInvalid, name, a)
		}
	}
	if g.settings, err = readSettings(g.dir, suite, g.release); err != nil {
		return nil, err
	}
	return g, nil
}

// checkSignedText refuses a generation whose Release is not the text its
// InRelease signs (updeb writes the two together): the next write starts
// from what the Release lists, so with a Release truncated or edited by hand
// it signed a generation without what it no longer lists (a truncated one:
// every package). A missing InRelease is refused too (ErrInvalid, exit 2):
// not a failure that goes away when tried again.
func checkSignedText(dir string, release []byte) error {
	name := filepath.Join(dir, "InRelease")
	data, err := readFile(name)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%w: %s is missing: the generation was changed outside updeb, and nothing is written from it; restore it from a backup", ErrInvalid, name)
	}
	if err != nil {
		return err
	}
	if b, _ := clearsign.Decode(data); b == nil || !bytes.Equal(b.Plaintext, release) {
		return fmt.Errorf("%w: %s is not the text %s signs: the generation was changed outside updeb, and nothing is written from it; restore them from a backup (an intact InRelease gives the Release it signs: 'gpgv --keyring %s --output - %s | head -c -1 > %s')",
			ErrInvalid, filepath.Join(dir, "Release"), name, filepath.Join(dir, keysFile), name, filepath.Join(dir, "Release"))
	}
	return nil
}

// live returns suite's live generation, nil when the suite does not exist.
// A reader takes no lock: a write may switch the suite and remove the
// generation read as live before it is read; the new live one is read then,
// not reported as removed outside updeb.
func (r *Repo) live(suite string) (*generation, error) {
	for try := 0; ; try++ {
		n, err := r.liveGeneration(suite)
		if err != nil || n == 0 {
			return nil, err
		}
		r.hook("live")
		g, err := r.readGeneration(suite, n)
		r.hook("read")
		if _, serr := os.Stat(r.genDir(suite, n)); err != nil && errors.Is(serr, os.ErrNotExist) {
			if m, _ := r.liveGeneration(suite); m != n && try < switchRetries {
				continue
			}
			return nil, r.missingLive(suite, n)
		}
		return g, err
	}
}

// missingLive is the error for a live generation whose folder was removed
// outside updeb: clients get 404 for the suite, and no write can start from
// it. It says how to point the suite at the newest generation still there.
func (r *Repo) missingLive(suite string, n int) error {
	link := filepath.Join(r.distsDir(), suite)
	err := fmt.Errorf("%w: the live generation %d of suite %s is missing: %s points to %s, which was removed outside updeb (clients get 404 for the suite)", ErrInvalid, n, suite, link, r.genDir(suite, n))
	gens, _ := r.keptGenerations(suite, n)
	if len(gens) == 0 {
		return fmt.Errorf("%w; no other generation of it is left: restore %s from a backup", err, r.genDir(suite, n))
	}
	return fmt.Errorf("%w; make the newest generation left live, %s, check its packages ('updeb repo list --suite %s'), then sign it anew with 'updeb repo refresh %s' (clients that had the missing one ignore an older Release)", err, r.restoreLink(suite, gens[0]), suite, suite)
}

// lostLink refuses to start suite anew (its generation 1) when its
// generations folder holds a generation: its link dists/SUITE was lost (a
// copy or backup that leaves symbolic links out) or removed by hand.
// Written anew, the suite listed the new packages only, every version
// published before gone for clients, and its old generations were pruned
// as never live. A lone generation 1 is a new suite's first write killed
// before its switch only when the link that write made to switch with is
// there beside it (makeLink), and is then replaced; taken for one without,
// a suite published once was started anew (a killed first publish's
// generation goes with its pool files anyway: recoverPublish).
func (r *Repo) lostLink(suite string) error {
	n, err := r.lostLinkTo(suite)
	if err != nil || n == 0 {
		return err
	}
	link := filepath.Join(r.distsDir(), suite)
	return fmt.Errorf("%w: suite %s has no link %s, but %s holds its generations up to %d: the link was lost (a copy or backup that leaves symbolic links out), removed by hand, and a write would start the suite anew without the packages it lists; restore it, %s, or remove %s to start the suite anew",
		ErrInvalid, suite, link, r.suiteGenDir(suite), n, r.restoreLink(suite, n), r.suiteGenDir(suite))
}

// lostLinkTo returns the newest generation of suite when its link
// dists/SUITE is lost (see lostLink), the one the link makes live again
// once restored; 0 when the suite has none, or only the generation 1 of a
// first write killed before its switch.
func (r *Repo) lostLinkTo(suite string) (int, error) {
	gens, err := r.keptGenerations(suite, math.MaxInt)
	if errors.Is(err, fs.ErrNotExist) || err == nil && (len(gens) == 0 || slices.Equal(gens, []int{1}) && r.firstLinkMade(suite)) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return gens[0], nil
}

// restoreLink is the command that makes generation n of suite live again
// where its link dists/SUITE is lost.
func (r *Repo) restoreLink(suite string, n int) string {
	return fmt.Sprintf("'ln -sfn .gen/%s/%d %s'", suite, n, filepath.Join(r.distsDir(), suite))
}

// firstLinkMade reports whether suite's nextLink is there, to generation
// 1: the suite's first write was killed before its switch (a later write
// killed so links a later generation).
func (r *Repo) firstLinkMade(suite string) bool {
	target, err := os.Readlink(r.nextLink(suite))
	return err == nil && target == path.Join(".gen", suite, "1")
}

// component reads every package of comp in g (empty when g does not list it).
func (g *generation) component(comp string) (component, error) {
	c := component{}
	if g == nil || !slices.Contains(g.release.comps, comp) {
		return c, nil
	}
	for _, arch := range g.release.archs {
		rel := comp + "/binary-" + arch + "/Packages"
		if _, ok := g.release.file("SHA256", rel); !ok {
			continue
		}
		data, err := g.listedFile(rel)
		if err != nil {
			return nil, err
		}
		entries, err := scanPackages(data, filepath.ToSlash(filepath.Join(g.dir, filepath.FromSlash(rel))), g.suite, comp)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			c[e.key()] = e
		}
	}
	return c, nil
}

// suiteState is what an operation changes in a suite: the live generation,
// the generation whose indexes the next one starts from (base: the live one,
// or for a rollback the one rolled back to), and the components it loaded
// and changed. Indexes of components it did not change are carried over
// from base without being read.
type suiteState struct {
	suite    string
	live     *generation // nil: the suite does not exist yet
	base     *generation // nil: nothing to carry over
	copyBase bool        // copy base's files rather than link them (see Rollback)
	comps    map[string]component
	dirty    map[string]bool
	set      Settings // the next generation's settings
	changed  []string // how they differ from the live ones, for the history
	all      bool     // the next generation lists Architecture all (contents.go)
	contents *contentsStore
}

// loadSuite reads suite's live generation (nothing else) for a change.
func (r *Repo) loadSuite(suite string) (*suiteState, error) {
	live, err := r.live(suite)
	if err != nil {
		return nil, err
	}
	return &suiteState{suite: suite, live: live, base: live, comps: map[string]component{}, dirty: map[string]bool{},
		contents: &contentsStore{root: r.root, ctx: context.Background()}}, nil
}

// generation returns the live generation number (0 for a new suite).
func (st *suiteState) generation() int {
	if st.live == nil {
		return 0
	}
	return st.live.n
}

// component returns comp's packages as the next generation starts from them.
func (st *suiteState) component(comp string) (component, error) {
	if c, ok := st.comps[comp]; ok {
		return c, nil
	}
	c, err := st.base.component(comp)
	if err != nil {
		return nil, err
	}
	st.comps[comp] = c
	return c, nil
}

// edit returns comp's packages for changing: its indexes are written anew.
func (st *suiteState) edit(comp string) (component, error) {
	c, err := st.component(comp)
	if err == nil {
		st.dirty[comp] = true
	}
	return c, err
}

// checkOneBuild refuses an added entry whose package, version and
// architecture another component of the suite lists, or another added entry
// brings into another component, with other bytes: a client of both
// components would see two builds of one version. So does one whose pool
// file in another component holds other bytes that no suite lists any
// longer, or was collected with other bytes (Repo.poolDigest): a version
// that left the suite never comes back with other bytes, whichever
// component it comes back to, whether gc has collected its pool file yet
// or not.
// The same bytes in two components are allowed. Other components are read as
// any state is (scanPackages: six fields a stanza, no pool file), and only
// when something is added. origin names where each added entry comes from,
// by Filename, for the message.
func (r *Repo) checkOneBuild(ctx context.Context, st *suiteState, added []Entry, origin map[string]string) error {
	if len(added) == 0 {
		return nil
	}
	conflict := func(old, e Entry) *ConflictError {
		return &ConflictError{Package: e.key().String(), Filename: old.Filename, Have: old.SHA256, New: e.SHA256,
			Path: origin[e.Filename], Suite: st.suite, Component: old.Component, Into: e.Component}
	}
	comps := map[string]bool{}
	if st.base != nil {
		for _, c := range st.base.release.comps {
			comps[c] = true
		}
	}
	batch := component{}.finder()
	for _, e := range added {
		comps[e.Component] = true
		if old, ok := batch.find(e.key()); ok && old.SHA256 != e.SHA256 {
			ce := sameVersionConflict(conflict(old, e), old, e.key())
			ce.Given = origin[old.Filename]
			return ce
		}
		batch.add(e)
	}
	for _, comp := range slices.Sorted(maps.Keys(comps)) {
		c, err := st.component(comp)
		if err != nil {
			return err
		}
		listed := c.finder()
		for _, e := range added {
			if e.Component != comp {
				if old, ok := listed.find(e.key()); ok {
					if old.SHA256 != e.SHA256 {
						return sameVersionConflict(conflict(old, e), old, e.key())
					}
					continue
				}
			}
			// A promoted entry keeps its source's pool file, so the
			// component it goes to is checked here too.
			rest, ok := poolRest(e.Filename)
			rel := "pool/" + comp + "/" + rest
			if !ok || rel == e.Filename {
				continue
			}
			have, collected, err := r.poolDigest(ctx, rel)
			if err != nil {
				return err
			}
			if have == "" || have == e.SHA256 {
				continue
			}
			ce := conflict(Entry{Filename: rel, SHA256: have, Component: comp}, e)
			if ce.Collected = collected; !collected {
				if poolHolder(ctx, filepath.Join(r.root, filepath.FromSlash(rel)), e.key()) != "" {
					continue // another epoch of it: another version
				}
				// Another suite's build of the version (staging's), which
				// gc never collects while that suite lists it.
				live, err := r.listedLive(rel)
				if err != nil {
					return err
				}
				if live {
					continue
				}
				ce.Pooled = true
			}
			return ce
		}
	}
	if err := r.checkSameVersionPooled(ctx, st, added, origin); err != nil {
		return err
	}
	return r.checkListedBefore(st, added, origin)
}

// checkListedBefore refuses an added entry whose version the suite listed
// before with other bytes, in any component and under any pool file: in a
// generation it keeps for rollback, or one its history records (added or
// removed). The pool checks above look at the pool paths of the suite's
// present components, and a promoted entry keeps its source's pool file
// (pool/main/... in component extra), so a version promoted into the suite,
// removed, then published again with other bytes went in: its pool file was
// in no component the suite had, or another suite still listed it as its
// own build. apt installed the new build over the old under one version,
// and a rollback swapped them back. The live generation is left to the
// checks above, which name it better.
func (r *Repo) checkListedBefore(st *suiteState, added []Entry, origin map[string]string) error {
	if len(added) == 0 || st.live == nil {
		return nil
	}
	before := component{}.finder()
	gen := map[key]int{} // the generation that listed each, for the message
	note := func(e Entry, n int) {
		if old, ok := before.c[e.key()]; !ok || old.SHA256 != e.SHA256 {
			before.add(e)
			gen[e.key()] = n
		}
	}
	// The history is only a record: one that cannot be read (not a file,
	// a line that is no record) leaves the kept generations to the check,
	// and the write refuses it itself when it appends (appendHistory), with
	// what to do.
	recs, _ := r.readHistory(st.suite, st.live.n)
	recorded := map[int]bool{}
	for _, rec := range recs {
		recorded[rec.Generation] = true
		for _, e := range slices.Concat(rec.Added, rec.Removed) {
			note(e, rec.Generation)
		}
	}
	kept, err := r.keptGenerations(st.suite, st.live.n)
	if err != nil {
		return err
	}
	for _, n := range kept {
		if recorded[n] || n == st.live.n {
			continue // what its record added, it listed
		}
		g, err := r.readGeneration(st.suite, n)
		if err != nil {
			return err
		}
		pkgs, err := g.packages()
		if err != nil {
			return err
		}
		for _, e := range pkgs {
			note(e, n)
		}
	}
	for _, e := range added {
		old, ok := before.find(e.key())
		if !ok || old.SHA256 == e.SHA256 {
			continue
		}
		return sameVersionConflict(&ConflictError{Package: e.key().String(), Have: old.SHA256, New: e.SHA256, Path: origin[e.Filename],
			Suite: st.suite, Component: old.Component, Into: e.Component, Earlier: gen[old.key()]}, old, e.key())
	}
	return nil
}

// checkSameVersionPooled refuses an added entry when the pool of the
// component it goes to holds, or held (a collected digest), other bytes of
// its version under another pool file name than its own: another spelling
// of the version ("1.00-1" for "1.0-1"), a build for all where it is for an
// architecture or the other way round, or another source's folder (a Source
// field added or changed). The checks above look at the entry's own pool
// path only, so a version removed from the suite came back with other bytes
// under another name, and one the pool holds for another suite went into
// this one with other bytes. Each component's pool is listed once.
func (r *Repo) checkSameVersionPooled(ctx context.Context, st *suiteState, added []Entry, origin map[string]string) error {
	byComp := map[string][]Entry{}
	for _, e := range added {
		byComp[e.Component] = append(byComp[e.Component], e)
	}
	for _, comp := range slices.Sorted(maps.Keys(byComp)) {
		pooled, err := r.poolFileNames(comp)
		if err != nil {
			return err
		}
		for _, e := range byComp[comp] {
			rest, ok := poolRest(e.Filename)
			if !ok {
				continue
			}
			for _, rel := range sameVersion(pooled[e.Package], e.key(), "pool/"+comp+"/"+rest) {
				have, collected, err := r.poolDigest(ctx, rel)
				if err != nil {
					return err
				}
				if have == "" || have == e.SHA256 {
					continue
				}
				return &ConflictError{Package: e.key().String(), Filename: rel, Have: have, New: e.SHA256, Path: origin[e.Filename],
					Suite: st.suite, Component: comp, Into: comp, Collected: collected, Pooled: !collected}
			}
		}
	}
	return nil
}

// poolFileNames lists by package the pool paths of comp's pool
// (pool/COMP/PREFIX/SOURCE/NAME_VERSION_ARCH.deb) that hold a pool file or
// held one whose digest gc kept (.updeb/removed/).
func (r *Repo) poolFileNames(comp string) (map[string][]string, error) {
	out := map[string][]string{}
	for _, where := range []struct{ dir, suffix string }{
		{filepath.Join(r.root, "pool", filepath.FromSlash(comp)), ".deb"},
		{filepath.Join(r.root, ".updeb", "removed", "pool", filepath.FromSlash(comp)), ".deb.sha256"},
	} {
		found, err := dirglob.Glob(where.dir, filepath.Join("*", "*", "*_*_*"+where.suffix))
		if err != nil {
			return nil, err
		}
		for _, f := range found {
			rel, err := filepath.Rel(where.dir, strings.TrimSuffix(f, where.suffix)+".deb")
			if err != nil {
				return nil, err
			}
			name, _, _ := strings.Cut(filepath.Base(rel), "_")
			if rel = path.Join("pool", comp, filepath.ToSlash(rel)); !slices.Contains(out[name], rel) {
				out[name] = append(out[name], rel)
			}
		}
	}
	return out, nil
}

// sameVersion returns the pool paths of rels, other than skip, whose file
// name says they hold a build of k's version for dpkg and apt: k's
// package, a version that compares equal to k's and k's architecture, or
// all for any (as finder matches them). Pool file names leave the epoch
// out, so versions are compared without it, as versions that differ only
// in their epoch share one pool file name.
func sameVersion(rels []string, k key, skip string) []string {
	v, err := debversion.Parse(k.version)
	if err != nil {
		return nil // identity refused it before
	}
	var out []string
	for _, rel := range rels {
		// NAME_VERSION_ARCH: none of the three holds an underscore.
		parts := strings.Split(strings.TrimSuffix(path.Base(rel), ".deb"), "_")
		if rel == skip || len(parts) != 3 || parts[0] != k.name || (parts[2] != k.arch && parts[2] != "all" && k.arch != "all") {
			continue
		}
		if n, err := debversion.CompareStrings(parts[1], v.WithoutEpoch()); err == nil && n == 0 {
			out = append(out, rel)
		}
	}
	return out
}

// poolRest returns what follows the component in the pool path filename
// (prefix/source/file, as PoolPath makes it; components may hold slashes).
func poolRest(filename string) (string, bool) {
	parts := strings.Split(filename, "/")
	if len(parts) < 5 || parts[0] != "pool" {
		return "", false
	}
	return path.Join(parts[len(parts)-3:]...), true
}

// listedLive reports whether the live generation of a suite lists the pool
// file rel, in any component.
func (r *Repo) listedLive(rel string) (bool, error) {
	entries, err := r.list("")
	return slices.ContainsFunc(entries, func(e Entry) bool { return e.Filename == rel }), err
}

// settings returns the live settings, or a new suite's defaults.
func (st *suiteState) settings() Settings {
	if st.live == nil {
		return defaultSettings(st.suite)
	}
	return st.live.settings
}

// managedSuites returns the suites under dists/ that updeb manages, sorted.
func (r *Repo) managedSuites() ([]string, error) {
	return suiteNames(r.distsDir(), func(de os.DirEntry) bool { return de.Type()&os.ModeSymlink != 0 })
}

// suiteNames returns the names of the entries of dir that are suite names
// and that keep accepts, sorted; none when dir does not exist.
func suiteNames(dir string, keep func(os.DirEntry) bool) ([]string, error) {
	des, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, de := range des {
		if keep(de) && validSuite(de.Name()) == nil {
			out = append(out, de.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

// keptGenerations returns the numbers of suite's generation directories up
// to the live one, newest first.
func (r *Repo) keptGenerations(suite string, live int) ([]int, error) {
	des, err := os.ReadDir(r.suiteGenDir(suite))
	if err != nil {
		return nil, err
	}
	var out []int
	for _, de := range des {
		if n, err := strconv.Atoi(de.Name()); err == nil && n >= 1 && n <= live && de.IsDir() {
			out = append(out, n)
		}
	}
	sort.Sort(sort.Reverse(sort.IntSlice(out)))
	return out, nil
}
