// Package repo publishes .deb packages into a signed apt repository that keeps
// every published version, never changes the bytes of one, is never seen
// half-written, and lives for years: suites keep their settings, are
// re-signed before they expire (Refresh), receive exactly the bytes tested in
// another suite (Promote), go back to an earlier generation (Rollback) and
// give back the disk nothing refers to any more (GC).
//
// On disk, REPO/pool/<component>/<prefix>/<source>/<file>.deb holds the
// packages (added before any metadata refers to them, never overwritten), and
// each suite's metadata is a generation directory REPO/dists/.gen/<suite>/<n>/
// (Packages{,.gz,.xz}, Release, InRelease, Release.gpg, by-hash/, and the
// suite's settings, updeb-suite.json). The live suite REPO/dists/<suite> is a
// symbolic link to its current generation. REPO/.updeb/history/<suite>.jsonl
// records what each generation changed.
//
// Atomicity. Every write takes an exclusive flock on REPO/.updeb-lock, writes
// the pool files (temporary name, fsync, link(2) to the final name, so a file
// is never replaced), then writes generation n+1 completely in a staging
// directory, fsyncs it, records it in the history, renames it to
// .gen/<suite>/<n+1>, and finally renames a new symbolic link over
// dists/<suite>. rename(2) replaces the link atomically: an HTTP server
// resolving dists/<suite>/... sees either the whole generation n or the whole
// generation n+1, never a Release of one with the Packages of the other. A
// write killed at any point leaves dists/<suite> pointing at a complete
// generation; its leftovers (temporary pool files, staging directories, a
// never-live generation and its history record, an old generation renamed
// aside to be removed, the pool files of a publish that never went live,
// recorded in .updeb/publishing/<suite>.json before they are linked) are
// cleaned, replaced or reused by the next write. Generation n+1's by-hash
// directories also carry the index files of generation n, and of every
// earlier generation that stopped being live less than byHashGrace ago, so
// a client that read an old InRelease just before a switch still finds every
// file it asks for by hash, whatever writes follow meanwhile.
//
// Dates. Every generation's Release Date is the second it was written,
// strictly after the previous generation's and never ahead of the clock (see
// releaseDate); its files' mtimes are that Date, which web servers send as
// Last-Modified and apt compares with If-Modified-Since.
//
// State. A generation's Packages files and settings are the suite's state: a
// write reads the live generation's, changes them and writes the next
// generation. Components a write does not touch are carried over by link,
// unread, so the cost of a publish is the size of the component it changes.
package repo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/updeb/updeb/internal/aptname"
	"github.com/updeb/updeb/internal/confined"
	"github.com/updeb/updeb/internal/signkey"
	"github.com/updeb/updeb/pkg/atomicfile"
	"github.com/updeb/updeb/pkg/lockfile"
)

// Options are a repository's collaborators and configuration.
type Options struct {
	// Settings are the changes an operation asks of the suites it writes (nil
	// fields keep each suite's stored settings): the operator's flags.
	Settings SettingsChange
	// Defaults are the settings a new suite starts with where Settings says
	// nothing: the config file's. They never change a suite that stores its
	// settings already: a stored setting (given by an earlier flag) wins over
	// the config, and a config value that differs from it is warned about
	// through Logger, naming both and the flag that changes it.
	Defaults SettingsChange
	Signer   *Signer          // required to write
	Actor    string           // who writes (user@host), recorded in the history
	Now      func() time.Time // the Release Date and signature time; time.Now when nil
	Logger   *slog.Logger     // nil discards, as in every library of updeb
	// Hook, when set, is called at each step of a write, by name: "pool"
	// (new packages linked into the pool), "staged" (next generation complete,
	// not live), "switched" (next generation live, old ones not yet cleaned),
	// "gc" (garbage collection about to remove its first file), "aside" (a
	// generation directory renamed aside, not yet removed), and of a read:
	// "live" (a suite's live generation number read, not the generation),
	// "read" (a suite's live generation read, not its packages),
	// "verify" (Verify read the generation it checks), "pool" (Verify about
	// to read a pool file), "suites" (Suites read every suite). Tests use it
	// to kill a write at a known point, or to write in the middle of a read.
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
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Repo{root: root, opts: opts}
}

func (r *Repo) hook(step string) {
	if r.opts.Hook != nil {
		r.opts.Hook(step)
	}
}

// begin starts a change of suite (and checks the components named): it
// checks there is a signing key, takes the publishers' lock and prepares the
// suite (beginAll). Call unlock when done.
func (r *Repo) begin(ctx context.Context, suite string, comps ...string) (unlock func(), st *suiteState, err error) {
	if err := r.mustExist(); err != nil {
		return nil, nil, err
	}
	if unlock, err = r.beginAll(ctx, map[string][]string{suite: comps}); err != nil {
		return nil, nil, err
	}
	if st, err = r.prepare(suite); err != nil {
		unlock()
		return nil, nil, err
	}
	return unlock, st, nil
}

// beginAll starts a change of several suites (suite -> the components
// named): it checks their names and that there is a signing key, and takes
// the publishers' lock. Call unlock when done.
func (r *Repo) beginAll(ctx context.Context, targets map[string][]string) (unlock func(), err error) {
	for _, suite := range slices.Sorted(maps.Keys(targets)) {
		if err := validSuite(suite); err != nil {
			return nil, err
		}
		for _, c := range targets[suite] {
			if err := validComponent(c); err != nil {
				return nil, err
			}
		}
	}
	if r.opts.Signer == nil {
		return nil, fmt.Errorf("%w: no signing key", ErrKey)
	}
	// A key that cannot sign (expired, revoked, a stub) is refused before
	// anything is written: found when the Release is signed, it left the
	// folders of the pool files staged meanwhile.
	if _, err := r.opts.Signer.signingKeys(r.opts.Now()); err != nil {
		return nil, err
	}
	if unlock, err = r.lock(ctx); err != nil {
		return nil, err
	}
	r.recoverPublish(ctx)
	return unlock, nil
}

// prepare loads suite's live generation and the settings of its next one:
// the stored settings changed as Options.Settings asks and signed by
// Options.Signer's keys. A change clients reject is a *FieldChangeError.
func (r *Repo) prepare(suite string) (*suiteState, error) {
	st, err := r.loadSuite(suite)
	if err != nil {
		return nil, err
	}
	if st.live == nil {
		if err := r.lostLink(suite); err != nil {
			return nil, err
		}
	}
	return st, r.settle(st, st.settings(), st.live == nil)
}

// settle sets st's next settings: old changed as Options.Settings asks, and,
// when fresh (a new suite, nothing stored), as Options.Defaults asks where
// Settings is silent.
func (r *Repo) settle(st *suiteState, old Settings, fresh bool) error {
	change := r.opts.Settings
	if fresh {
		change = change.withDefaults(r.opts.Defaults)
	} else {
		r.warnDefaults(old, change)
		change.Architectures = append(slices.Clone(change.Architectures), r.opts.Defaults.Architectures...) // a list only grows
	}
	set, err := old.apply(change, r.opts.Signer, st.live != nil)
	if err != nil {
		return err
	}
	if st.live != nil && !change.AllowFieldChange {
		if c := r.opts.Signer.newSigningSubkeys(st.live.keys(r.archiveKeyring()), r.opts.Now()); len(c) > 0 {
			return &FieldChangeError{Suite: st.suite, Changes: c}
		}
	}
	// apt reads a pin's fields split at commas (Pin: release o=A,l=B): an
	// Origin or Label with a comma is one no pin can name as it is. And it
	// matches each field as a shell pattern (fnmatch): one with [...] or a
	// backslash is matched by its escaped form only. Said when it is set,
	// while no client may have it yet.
	for _, f := range []struct{ name, now, was string }{{"Origin", set.Origin, old.Origin}, {"Label", set.Label, old.Label}} {
		letter := strings.ToLower(f.name)[:1]
		switch {
		case f.now == f.was:
		case strings.Contains(f.now, ","):
			r.opts.Logger.Warn(fmt.Sprintf("suite %s: its %s %q holds a comma: apt splits a pin's fields at commas (Pin: release o=...,l=...), so a pin that names it never matches and apt says nothing; "+
				"only a pattern matches it (%s=/.../). Choose a %s without a comma before clients pin the suite", st.suite, f.name, f.now, letter, f.name),
				"suite", st.suite, "field", f.name)
		case pinPattern(f.now) != f.now:
			pin := letter + "=" + pinPattern(f.now)
			r.opts.Logger.Warn(fmt.Sprintf("suite %s: its %s %q holds [...] or a backslash: apt matches a pin's fields as shell patterns, so a pin that names it as it is (%s=%s) never matches and apt says nothing; "+
				"name it escaped, 'Pin: release %s', or choose a %s without them before clients pin the suite", st.suite, f.name, f.now, letter, f.now, pin, f.name),
				"suite", st.suite, "field", f.name, "pin", pin)
		}
	}
	// A key joins the signers of a suite only on purpose (a rotation's
	// first step); a config that still names a key dropped earlier puts it
	// back unasked, undoing the rotation: either way, say so.
	if st.live != nil && len(old.SigningKeys) > 0 {
		var added []string
		for _, k := range set.SigningKeys {
			if !slices.Contains(old.SigningKeys, k) {
				added = append(added, k)
			}
		}
		if len(added) > 0 {
			r.opts.Logger.Warn("the suite is now also signed by keys it was not signed by: clients trust the suite with any of them; if one is a key dropped in a rotation, the config still names it (key:, keys:)",
				"suite", st.suite, "added", strings.Join(added, " "), "was", strings.Join(old.SigningKeys, " "))
		}
	}
	st.set, st.changed = set, settingsDiff(old, set)
	return nil
}

// pinPattern is the shell pattern (fnmatch, as apt matches a pin's
// fields) that matches v alone: a backslash escaped, and a '[' that opens a
// bracket expression (a ']' follows it) written as "[[]". v itself when it
// holds neither, as a '*' or '?' matches itself too.
func pinPattern(v string) string {
	var b strings.Builder
	for i, c := range v {
		switch {
		case c == '\\':
			b.WriteString(`\\`)
		case c == '[' && strings.Contains(v[i+1:], "]"):
			b.WriteString("[[]")
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

// mustExist refuses a repository folder that does not exist (a mistyped
// --repo) to an operation on what the repository holds: only a publish
// makes one. Taking the lock made the folder and its lock file, and the
// error said the suite does not exist.
func (r *Repo) mustExist() error {
	if _, err := os.Stat(r.root); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %s does not exist: no repository there (check --repo, or repo: dir: in the config)", ErrNotFound, r.root)
	}
	return nil
}

// lock takes the publishers' exclusive lock; the returned function releases it.
// The kernel releases a flock when its process dies, so a killed publish never
// leaves the repository locked.
func (r *Repo) lock(ctx context.Context) (func(), error) {
	if err := atomicfile.MkdirAll(r.root, 0o755); err != nil {
		return nil, err
	}
	l, err := lockfile.Acquire(ctx, filepath.Join(r.root, ".updeb-lock"), 100*time.Millisecond)
	if err != nil {
		return nil, err
	}
	return func() { l.Unlock() }, nil
}

// lockToRead takes the publishers' lock for a command that writes nothing
// (gc --dry-run) through a read-only open of the lock file: a user who may
// read the repository but not write it (a monitoring account) can run it.
// Without a lock file (no publish made the folder) there is no publisher to
// wait for.
func (r *Repo) lockToRead(ctx context.Context) (func(), error) {
	l, err := lockfile.AcquireFile(ctx, filepath.Join(r.root, ".updeb-lock"), 100*time.Millisecond)
	if errors.Is(err, fs.ErrNotExist) {
		return func() {}, nil
	}
	if err != nil {
		return nil, err
	}
	return func() { l.Unlock() }, nil
}

// invalid wraps a refusal of internal/aptname as ErrInvalid.
func invalid(err error) error {
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return nil
}

func validSuite(suite string) error { return invalid(aptname.Suite(suite)) }

func validComponent(comp string) error { return invalid(aptname.Component(comp)) }

// validListedComponent checks a component a suite lists (aptname.ListedComponent).
func validListedComponent(comp string) error { return invalid(aptname.ListedComponent(comp)) }

// List returns what is published in suite, or in every suite when suite is
// empty, sorted by suite, component, package, version (dpkg's order, oldest
// first: apt's candidate last) and architecture.
func (r *Repo) List(suite string) ([]Entry, error) {
	var out []Entry
	err := r.readConsistent(func() (err error) {
		out, err = r.list(suite)
		return err
	})
	if err == nil && suite == "" {
		err = r.warnLostLinks()
	}
	return out, err
}

func (r *Repo) list(suite string) ([]Entry, error) {
	suites, err := r.suitesOrAll(suite)
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, s := range suites {
		g, err := r.live(s)
		if err != nil {
			return nil, err
		}
		for _, comp := range sortedCopy(g.release.comps) {
			c, err := g.component(comp)
			if err != nil {
				return nil, err
			}
			out = append(out, c.listedEntries()...)
		}
	}
	return out, nil
}

// Suite is a suite's live Release, as a status page shows it.
type Suite struct {
	Name          string    `json:"name"`
	Generation    int       `json:"generation"`
	Date          time.Time `json:"date"`
	ValidUntil    time.Time `json:"valid_until,omitzero"` // zero when the Release has none
	Components    []string  `json:"components"`
	Architectures []string  `json:"architectures"`
	// SigningKeys are the keys that signed the Release (its generation's
	// updeb-keys.gpg, as archive-keyring.gpg holds them).
	SigningKeys []SigningKey `json:"signing_keys"`
}

// SigningKey is a key that signed a suite's Release.
type SigningKey struct {
	Fingerprint string `json:"fingerprint"` // the primary key's
	// Signer is the key that signed: the signing subkey's fingerprint, or
	// the primary's.
	Signer string `json:"signer"`
	// Expires is when the signature stops verifying, the expiry of Signer
	// or of the primary key, whichever comes first: apt refuses the suite
	// from then on (EXPKEYSIG). Zero when neither expires.
	Expires time.Time `json:"expires,omitzero"`
}

// Suites returns every suite's live Release, sorted by name.
func (r *Repo) Suites() ([]Suite, error) {
	names, err := r.managedSuites()
	if err != nil {
		return nil, err
	}
	out := []Suite{}
	archive := r.archiveKeyring()
	for _, s := range names {
		g, err := r.live(s)
		if err != nil {
			return nil, err
		}
		if g == nil {
			continue
		}
		su := Suite{Name: s, Generation: g.n, Date: g.release.date, ValidUntil: g.release.validUntil,
			Components: sortedCopy(g.release.comps), Architectures: sortedCopy(g.release.archs), SigningKeys: []SigningKey{}}
		for _, e := range g.keys(archive) {
			end, signer, _ := signkey.SigningEnd(e, g.release.date)
			su.SigningKeys = append(su.SigningKeys, SigningKey{Fingerprint: fingerprint(e), Signer: signer, Expires: end})
		}
		out = append(out, su)
	}
	r.hook("suites")
	return out, nil
}

// Contents returns Suites and List("") read from the same live generations:
// a write that switches a suite between the two reads (or removes the
// generation being read) makes them read again, so that each suite's
// generation, components and packages agree (a status page never shows one
// generation's number with the next one's packages).
func (r *Repo) Contents() (suites []Suite, entries []Entry, err error) {
	err = r.readConsistent(func() error {
		if suites, err = r.Suites(); err == nil {
			entries, err = r.list("")
		}
		return err
	})
	if err == nil {
		err = r.warnLostLinks()
	}
	return suites, entries, err
}

// readConsistent runs read, which reads live generations without the
// publishers' lock, again when a write switched a suite while it ran (at
// most switchRetries more times): what it read is then of one moment, and
// a generation removed under it (no longer live) is no error.
func (r *Repo) readConsistent(read func() error) error {
	for try := 0; ; try++ {
		before, err := r.liveGenerations()
		if err != nil {
			return err
		}
		err = read()
		after, aerr := r.liveGenerations()
		if aerr == nil && maps.Equal(before, after) || try == switchRetries {
			return err
		}
	}
}

// liveGenerations returns the live generation of every suite.
func (r *Repo) liveGenerations() (map[string]int, error) {
	names, err := r.managedSuites()
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, s := range names {
		if out[s], err = r.liveGeneration(s); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// maxRepoFile bounds a file of the repository's own read whole (an index,
// a Release, settings, the history): the largest, a Packages index of a big
// repository, is tens of MiB.
const maxRepoFile = 512 << 20

// readFile reads a file of the repository: a regular file (a FIFO or device
// planted in the folder is refused without blocking, confined.ReadFile) of
// at most maxRepoFile bytes.
func readFile(name string) ([]byte, error) {
	return confined.ReadFile(name, maxRepoFile)
}
