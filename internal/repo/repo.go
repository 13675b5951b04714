// Package repo publishes .deb packages into a signed apt repository that keeps
// every published version, never changes the bytes of one, and is never seen
// half-written.
//
// On disk, REPO/pool/<component>/<prefix>/<source>/<file>.deb holds the
// packages (added before any metadata refers to them, never overwritten), and
// each suite's metadata is a generation directory REPO/dists/.gen/<suite>/<n>/
// (Packages{,.gz,.xz}, Release, InRelease, Release.gpg, by-hash/). The live
// suite REPO/dists/<suite> is a symbolic link to its current generation.
//
// Atomicity. A publish takes an exclusive flock on REPO/.updeb-lock, writes the
// pool files (temporary name, fsync, link(2) to the final name, so a file is
// never replaced), then writes generation n+1 completely in a staging
// directory, fsyncs it, renames it to .gen/<suite>/<n+1>, and finally renames a
// new symbolic link over dists/<suite>. rename(2) replaces the link atomically:
// an HTTP server resolving dists/<suite>/... sees either the whole generation n
// or the whole generation n+1, never a Release of one with the Packages of the
// other. A publish killed at any point leaves dists/<suite> pointing at a
// complete generation; its leftovers (temporary pool files, staging
// directories, an unreferenced pool file) are cleaned or reused by the next
// publish. Generation n is kept after the switch (n-1 is deleted), and n+1's
// by-hash directories also carry the index files of generation n, so a client
// that read the old InRelease just before the switch still finds every file
// it asks for by hash.
//
// State. The live generation's Packages files are the repository's state: a
// publish parses them, adds to them and writes the next generation. There is no
// separate state file to get out of step.
package repo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/updeb/updeb/internal/lockfile"
)

// Options are a repository's collaborators and configuration.
type Options struct {
	Release ReleaseConfig
	Signer  *Signer          // required to publish or remove
	Now     func() time.Time // the Release Date and signature time; time.Now when nil
	Logger  *slog.Logger     // slog.Default() when nil
	// Hook, when set, is called at each step of a write, by name: "pool"
	// (new packages linked into the pool), "staged" (next generation complete,
	// not live), "switched" (next generation live, old ones not yet cleaned).
	// Tests use it to kill a publish at a known point.
	Hook func(step string)
}

// Repo is an apt repository rooted at a folder.
type Repo struct {
	root string
	opts Options
}

// ErrNotFound is wrapped when a suite or the packages to remove do not exist.
var ErrNotFound = errors.New("repo: not found")

// ErrNotManaged is wrapped when dists/<suite> exists but is not a generation
// link this package made (a repository written by another tool).
var ErrNotManaged = errors.New("repo: suite not managed by updeb")

// Open returns the repository at root (created on first publish).
func Open(root string, opts Options) *Repo {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Repo{root: root, opts: opts}
}

func (r *Repo) hook(step string) {
	if r.opts.Hook != nil {
		r.opts.Hook(step)
	}
}

// begin starts a change of suite: it checks there is a signing key, takes the
// publishers' lock and loads the live state. Call unlock when done.
func (r *Repo) begin(ctx context.Context, suite string) (unlock func(), st *suiteState, err error) {
	if r.opts.Signer == nil {
		return nil, nil, fmt.Errorf("%w: no signing key", ErrKey)
	}
	unlock, err = r.lock(ctx)
	if err != nil {
		return nil, nil, err
	}
	if st, err = r.loadSuite(suite); err != nil {
		unlock()
		return nil, nil, err
	}
	return unlock, st, nil
}

// lock takes the publishers' exclusive lock; the returned function releases it.
// The kernel releases a flock when its process dies, so a killed publish never
// leaves the repository locked.
func (r *Repo) lock(ctx context.Context) (func(), error) {
	if err := os.MkdirAll(r.root, 0o755); err != nil {
		return nil, err
	}
	l, err := lockfile.Acquire(ctx, filepath.Join(r.root, ".updeb-lock"), 100*time.Millisecond)
	if err != nil {
		return nil, err
	}
	return func() { l.Unlock() }, nil
}

func validSuite(suite string) error {
	if !suitePattern.MatchString(suite) {
		return fmt.Errorf("%w: suite %q (want letters, digits and . + _ -, not starting with a dot)", ErrInvalid, suite)
	}
	return nil
}

func validComponent(comp string) error {
	if !componentPattern.MatchString(comp) {
		return fmt.Errorf("%w: component %q (want letters, digits, . + _ - and / between parts)", ErrInvalid, comp)
	}
	return nil
}

// suiteState is a suite's live generation, parsed.
type suiteState struct {
	suite      string
	generation int    // 0: the suite does not exist yet
	dir        string // the live generation's directory
	release    *parsedRelease
	comps      map[string]component
}

func (r *Repo) distsDir() string { return filepath.Join(r.root, "dists") }

func (r *Repo) genDir(suite string, n int) string {
	return filepath.Join(r.distsDir(), ".gen", suite, strconv.Itoa(n))
}

// loadSuite reads the live generation of suite.
func (r *Repo) loadSuite(suite string) (*suiteState, error) {
	st := &suiteState{suite: suite, comps: map[string]component{}}
	link := filepath.Join(r.distsDir(), suite)
	target, err := os.Readlink(link)
	if errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s is not a symbolic link to a generation (%v)", ErrNotManaged, link, err)
	}
	prefix := path.Join(".gen", suite) + "/"
	n, err := strconv.Atoi(strings.TrimPrefix(target, prefix))
	if !strings.HasPrefix(target, prefix) || err != nil || n < 1 {
		return nil, fmt.Errorf("%w: %s points to %q, expected %s<n>", ErrNotManaged, link, target, prefix)
	}
	st.generation, st.dir = n, r.genDir(suite, n)
	rel, err := os.ReadFile(filepath.Join(st.dir, "Release"))
	if err != nil {
		return nil, err
	}
	if st.release, err = parseRelease(rel, filepath.Join(link, "Release")); err != nil {
		return nil, err
	}
	for _, comp := range st.release.comps {
		if err := validComponent(comp); err != nil {
			return nil, err
		}
		c := component{}
		for _, arch := range st.release.archs {
			if !archPattern.MatchString(arch) {
				return nil, fmt.Errorf("%w: %s/Release: architecture %q", ErrInvalid, link, arch)
			}
			entries, err := readPackages(filepath.Join(st.dir, comp, "binary-"+arch, "Packages"), suite, comp)
			if err != nil {
				return nil, err
			}
			for _, e := range entries {
				c[e.key()] = e
			}
		}
		st.comps[comp] = c
	}
	return st, nil
}

// PublishResult says what a publish did.
type PublishResult struct {
	Added      []Entry // newly listed
	Unchanged  []Entry // already published with the same bytes (a no-op)
	Generation int     // the live generation after the publish
}

// Publish adds packages to suite/component: each .deb is copied into the pool
// (filling its Filename, Size and digests), then the suite's next generation is
// written, signed and switched in. A package already published with the same
// bytes is left as it is; one published (or in the pool) with other bytes makes
// the whole publish fail with *ConflictError, before anything is changed.
func (r *Repo) Publish(ctx context.Context, suite, comp string, pkgs []Package) (*PublishResult, error) {
	if err := validSuite(suite); err != nil {
		return nil, err
	}
	if err := validComponent(comp); err != nil {
		return nil, err
	}
	if len(pkgs) == 0 {
		return nil, fmt.Errorf("%w: no packages to publish", ErrInvalid)
	}
	unlock, st, err := r.begin(ctx, suite)
	if err != nil {
		return nil, err
	}
	defer unlock()

	var staged []*stagedFile
	defer func() {
		for _, s := range staged {
			s.discard()
		}
	}()
	res := &PublishResult{Generation: st.generation}
	c := st.comps[comp]
	if c == nil {
		c = component{}
	}
	batch := map[key]Entry{}
	var toLink []*stagedFile
	cleaned := map[string]bool{}
	for i := range pkgs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		p := &pkgs[i]
		for _, f := range poolFields {
			if _, ok := p.Control.Get(f); ok {
				return nil, fmt.Errorf("%w: %s: control file has a %s field, which only a repository index may have", ErrInvalid, p.Path, f)
			}
		}
		s, err := stageIntoPool(r.root, comp, p, cleaned)
		if err != nil {
			return nil, err
		}
		staged = append(staged, s)
		e, err := entryFromStanza(suite, comp, stanza(p), p.Path)
		if err != nil {
			return nil, err
		}
		conflict := func(have string) error {
			return &ConflictError{Package: e.key().String(), Filename: e.Filename, Have: have, New: e.SHA256, Path: p.Path}
		}
		if old, ok := batch[e.key()]; ok {
			if old.SHA256 != e.SHA256 {
				return nil, conflict(old.SHA256)
			}
			continue
		}
		batch[e.key()] = e
		if old, ok := c[e.key()]; ok {
			if old.SHA256 != e.SHA256 {
				return nil, conflict(old.SHA256)
			}
			res.Unchanged = append(res.Unchanged, old)
			continue
		}
		have, err := existingDigest(s.final)
		if err != nil {
			return nil, err
		}
		if have != "" && have != e.SHA256 {
			return nil, conflict(have)
		}
		toLink = append(toLink, s)
		res.Added = append(res.Added, e)
	}
	if len(res.Added) == 0 {
		r.opts.Logger.Info("nothing to publish: every package is already published with the same bytes", "suite", suite, "component", comp)
		return res, nil
	}
	for _, s := range toLink {
		if err := s.link(); err != nil {
			return nil, err
		}
	}
	r.hook("pool")
	for _, e := range res.Added {
		c[e.key()] = e
	}
	st.comps[comp] = c
	if res.Generation, err = r.writeGeneration(ctx, st); err != nil {
		return nil, err
	}
	return res, nil
}

// Remove retires packages from suite/component: every version of name when
// version is empty, on every architecture when arch is empty. Their pool files
// stay (other suites, and clients mid-update, may still fetch them; a removed
// version can never come back with other bytes).
func (r *Repo) Remove(ctx context.Context, suite, comp, name, version, arch string) ([]Entry, error) {
	if err := validSuite(suite); err != nil {
		return nil, err
	}
	if err := validComponent(comp); err != nil {
		return nil, err
	}
	unlock, st, err := r.begin(ctx, suite)
	if err != nil {
		return nil, err
	}
	defer unlock()
	var removed []Entry
	for k, e := range st.comps[comp] {
		if k.name == name && (version == "" || k.version == version) && (arch == "" || k.arch == arch) {
			removed = append(removed, e)
			delete(st.comps[comp], k)
		}
	}
	if len(removed) == 0 {
		what := name
		if version != "" {
			what += "=" + version
		}
		if arch != "" {
			what += " (" + arch + ")"
		}
		return nil, fmt.Errorf("%w: %s is not published in suite %s component %s", ErrNotFound, what, suite, comp)
	}
	sort.Slice(removed, func(i, j int) bool { return removed[i].key().String() < removed[j].key().String() })
	if _, err := r.writeGeneration(ctx, st); err != nil {
		return nil, err
	}
	return removed, nil
}

// List returns what is published in suite, or in every suite when suite is
// empty, sorted by suite, component, package, version and architecture.
func (r *Repo) List(suite string) ([]Entry, error) {
	suites := []string{suite}
	if suite == "" {
		suites = nil
		des, err := os.ReadDir(r.distsDir())
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		for _, de := range des {
			if de.Type()&os.ModeSymlink != 0 && validSuite(de.Name()) == nil {
				suites = append(suites, de.Name())
			}
		}
	} else if err := validSuite(suite); err != nil {
		return nil, err
	}
	var out []Entry
	for _, s := range suites {
		st, err := r.loadSuite(s)
		if err != nil {
			return nil, err
		}
		if st.generation == 0 {
			return nil, fmt.Errorf("%w: suite %s has never been published in %s", ErrNotFound, s, r.root)
		}
		comps := make([]string, 0, len(st.comps))
		for c := range st.comps {
			comps = append(comps, c)
		}
		sort.Strings(comps)
		for _, c := range comps {
			out = append(out, st.comps[c].sortedEntries()...)
		}
	}
	return out, nil
}
