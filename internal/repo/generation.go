package repo

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"

	"github.com/updeb/updeb/internal/dirglob"
	"github.com/updeb/updeb/internal/diskfull"
	"github.com/updeb/updeb/internal/signkey"
	"github.com/updeb/updeb/pkg/atomicfile"
)

// ErrClock is wrapped when the live generation is dated too far ahead of this
// machine's clock for a new generation to follow it.
var ErrClock = errors.New("repo: clock behind the live generation")

// maxClockWait is the longest a write waits for the clock to pass the live
// generation's Date. Two writes in the same second wait less than a second;
// a longer wait means the clock was set back.
const maxClockWait = 30 * time.Second

// releaseDate is the Date of a new generation: the current second, once the
// clock has passed the live generation's Date. Never ahead of the clock:
// apt refuses a Release dated in the future ("not valid yet"). Always after
// the live one: apt asks for InRelease with If-Modified-Since set to the
// Last-Modified it got (the file's mtime, which is the Date, in whole
// seconds), so a generation in the same second as the one a client fetched
// would be answered 304 and missed until the next; and apt keeps the Release
// it has when a newer-fetched one carries an older Date. So a write in the
// same second as the last one waits for the next second.
func (r *Repo) releaseDate(ctx context.Context, live *generation) (time.Time, error) {
	deadline := time.Now().Add(maxClockWait)
	for {
		now := r.opts.Now()
		date := now.UTC().Truncate(time.Second)
		if live == nil || live.release.date.IsZero() || date.After(live.release.date) {
			return date, nil
		}
		next := live.release.date.Add(time.Second)
		wait := next.Sub(now)
		if time.Now().Add(wait).After(deadline) {
			return time.Time{}, fmt.Errorf("%w: suite %s's live generation %d is dated %s, %s ahead of this machine's clock (%s): a generation dated earlier would be ignored by clients that have the live one, and one dated later refused as not valid yet; correct the clock (timedatectl) or wait until then",
				ErrClock, live.suite, live.n, live.release.date.Format(dateFormat), live.release.date.Sub(date), date.Format(dateFormat))
		}
		r.opts.Logger.Debug("waiting for the next second: the live generation has this second's Date", "suite", live.suite, "wait", wait)
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(wait):
		}
	}
}

// writeGeneration writes st as the suite's next generation, records rec
// (with st's settings changes) in the suite's history and makes the
// generation live. See the package documentation for the order of
// operations and why.
func (r *Repo) writeGeneration(ctx context.Context, st *suiteState, rec Record) (int, error) {
	next, err := r.render(ctx, st)
	if err != nil {
		return 0, err
	}
	rec.Settings = st.changed
	if err := r.install(ctx, st, next, rec); err != nil {
		return 0, err
	}
	r.opts.Logger.Info(rec.Operation, "suite", st.suite, "generation", next.n, "components", next.set.Components, "architectures", next.set.Architectures)
	return next.n, nil
}

// nextGeneration is a generation made in memory, before it is written.
type nextGeneration struct {
	n     int
	set   Settings
	all   bool        // the Release lists Architecture all (contents.go)
	files []indexFile // the indexes
	meta  []indexFile // Release, InRelease, Release.gpg
	date  time.Time
}

// render makes st's next generation in memory: what it lists, its indexes,
// its Date and its signed Release.
func (r *Repo) render(ctx context.Context, st *suiteState) (*nextGeneration, error) {
	next := &nextGeneration{n: st.generation() + 1}
	st.contents.ctx = ctx
	var err error
	if next.set, err = st.layout(st.set); err != nil {
		return nil, err
	}
	if next.files, err = st.indexes(next.set); err != nil {
		return nil, err
	}
	next.all = st.all
	if next.date, err = r.releaseDate(ctx, st.live); err != nil {
		return nil, err
	}
	if next.meta, err = r.signRelease(next.set, next.all, next.date, next.files); err != nil {
		return nil, err
	}
	var until time.Time
	if next.set.ValidFor > 0 {
		until = next.date.Add(time.Duration(next.set.ValidFor))
	}
	r.warnKeyEnds(st.suite, next.date, until)
	return next, ctx.Err()
}

// warnKeyEnds warns about each key whose signature made at date stops
// verifying within signkey.ExpiresSoon, or before until, the Release's
// Valid-Until (zero: none). Once the key that signed (the primary key, or
// the signing subkey go-crypto picked, which may end before another one)
// has expired, gpgv reports its signatures as EXPKEYSIG and apt refuses the
// suite, whatever Valid-Until says, so a refresh timer set for Valid-Until
// comes too late; and an extended key helps only once every client has it.
//
// It also warns about a key bound by a SHA-1 self-signature: gpgv takes its
// signatures, sqv (newer apt's verifier) refuses them. A warning, not a
// refusal: a repository signed with one for years keeps its refresh timer
// (its gpgv clients keep working) while the key is re-signed.
func (r *Repo) warnKeyEnds(suite string, date, until time.Time) {
	for _, e := range r.opts.Signer.entities {
		if signer, ok := e.SigningKey(date); ok {
			if err := signkey.WeakBinding(e, signer); err != nil {
				r.opts.Logger.Warn(fmt.Sprintf("suite %s: %v", suite, err))
			}
		}
		end, key, ok := signkey.SigningEnd(e, date)
		if !ok {
			continue
		}
		when := fmt.Sprintf("within %d days", int(signkey.ExpiresSoon.Hours()/24))
		switch {
		case end.Before(until):
			when = "before this Release's Valid-Until, " + until.UTC().Format(time.RFC3339)
		case !end.Before(date.Add(signkey.ExpiresSoon)):
			continue
		}
		which := ""
		if key != fingerprint(e) {
			which = " (its signing subkey " + key + ")"
		}
		r.opts.Logger.Warn(fmt.Sprintf("suite %s: the signing key %s%s expires on %s, %s: apt refuses the suite (EXPKEYSIG) from then on; %s",
			suite, fingerprint(e), which, end.UTC().Format(time.RFC3339), when, signkey.Renew))
	}
}

// install writes next and switches it in: the public keys, the staged
// generation, its history record, the rename to its number, the switch of
// the suite's link, and the pruning of generations no longer kept.
func (r *Repo) install(ctx context.Context, st *suiteState, next *nextGeneration, rec Record) error {
	// The keyring at the root holds every live suite's keys: written once
	// before the switch (the keys of the generation going live and of the
	// one it replaces), and once after (without a key no suite uses any
	// longer).
	if err := r.writeKeyring(); err != nil {
		return err
	}
	staging, err := r.stage(st, next.files, next.meta, next.set, next.date)
	if err != nil {
		return err
	}
	defer os.RemoveAll(staging) // a no-op once renamed
	if err := r.appendHistory(rec.complete(st.suite, next.n, next.date, next.set, r.opts.Actor)); err != nil {
		return err
	}
	if err := r.makeLink(st.suite, next.n); err != nil {
		return err
	}
	if err := r.commit(st.suite, next.n, staging); err != nil {
		return err
	}
	r.hook("staged")
	if err := r.switchTo(st.suite); err != nil {
		return err
	}
	r.hook("switched")
	r.keepKeyring()
	r.prune(st.suite, next.n, next.set.Keep)
	return nil
}

// keepKeyring writes archive-keyring.gpg (and .asc) again for the suites as
// they are now, warning when it cannot. Every write calls it, also one that
// writes no generation (a publish or promote of what is already there): a
// keyring that a write failed to rewrite after its switch (a full disk, kill
// -9) is missing, or lacks the keys the suites are signed by now, and every
// new client given it refuses them; 'repo verify' sends the operator to
// publish, which left it so when there was nothing new.
func (r *Repo) keepKeyring() {
	if err := r.writeKeyring(); err != nil {
		r.opts.Logger.Warn("cannot rewrite the repository's keyring; the next write does", "err", err)
	}
}

// layout completes set with what the next generation lists: every component
// and architecture listed before (never fewer: a client configured for one
// would warn on every update), those of base (a rollback target), and those
// of the changed components' packages.
func (st *suiteState) layout(set Settings) (Settings, error) {
	for _, g := range []*generation{st.live, st.base} {
		if g == nil {
			continue
		}
		for _, c := range g.release.comps {
			set.Components = addSorted(set.Components, c)
		}
		for _, a := range g.release.archs {
			if a == "all" {
				st.all = true // listed once, listed for good (as every architecture)
				continue
			}
			set.Architectures = addSorted(set.Architectures, a)
		}
	}
	set.Architectures = slices.DeleteFunc(set.Architectures, func(a string) bool { return a == "all" })
	for comp := range st.dirty {
		set.Components = addSorted(set.Components, comp)
		for k := range st.comps[comp] {
			if k.arch != "all" {
				set.Architectures = addSorted(set.Architectures, k.arch)
			}
		}
	}
	if len(set.Architectures) == 0 {
		return set, fmt.Errorf("%w: suite %s has only Architecture: all packages and no configured architecture: say which binary-<arch> indexes to write", ErrInvalid, st.suite)
	}
	return set, nil
}

// indexes returns the Packages and Contents files of the next generation:
// rendered for the components the operation changed (and for a
// component's new architectures), carried over unchanged from base for
// every other, so that a publish costs the size of the component it
// touches, not of the suite. Every component gets binary-all and
// Contents-all too once the suite has an Architecture: all package (see
// contents.go).
func (st *suiteState) indexes(set Settings) ([]indexFile, error) {
	var files []indexFile
	add := func(comp, arch string) error {
		fs, err := st.packagesIndex(comp, arch)
		if err != nil {
			return err
		}
		files = append(files, fs...)
		fs, err = st.contentsIndex(comp, arch)
		files = append(files, fs...)
		return err
	}
	for _, comp := range set.Components {
		for _, arch := range set.Architectures {
			if err := add(comp, arch); err != nil {
				return nil, err
			}
		}
	}
	// Every component that was read may have Architecture: all packages;
	// one that was not has its Contents carried over from a generation
	// that read it (and listed "all" if it had them).
	for _, c := range st.comps {
		st.all = st.all || slices.ContainsFunc(slices.Collect(maps.Keys(c)), func(k key) bool { return k.arch == "all" })
	}
	if st.all {
		for _, comp := range set.Components {
			if err := add(comp, "all"); err != nil {
				return nil, err
			}
		}
	}
	return files, nil
}

// packagesIndex returns comp's Packages files for arch: base's when the
// operation did not change comp, else rendered.
func (st *suiteState) packagesIndex(comp, arch string) ([]indexFile, error) {
	dir := comp + "/binary-" + arch
	if !st.dirty[comp] {
		if fs, ok := st.base.carried(dir); ok {
			return fs, nil
		}
	}
	c, err := st.component(comp)
	if err != nil {
		return nil, err
	}
	return compressed(dir, c.packagesFor(arch), st.base.previous(dir))
}

// contentsIndex returns comp's Contents files for arch: base's when the
// operation did not change comp, else rendered from the stored file lists.
func (st *suiteState) contentsIndex(comp, arch string) ([]indexFile, error) {
	plain, gz := contentsPaths(comp, arch)
	if !st.dirty[comp] {
		if fs, ok := st.base.carriedFiles(plain, gz); ok {
			fs[0].src, fs[0].listedOnly = "", true
			return fs, nil
		}
	}
	c, err := st.component(comp)
	if err != nil {
		return nil, err
	}
	return st.contents.contentsFiles(comp, c, arch)
}

// carried returns g's index files of dir (every form, with the sizes and
// digests g's Release lists), or false when g does not have them all.
func (g *generation) carried(dir string) ([]indexFile, bool) {
	paths := make([]string, len(indexForms))
	for i, form := range indexForms {
		paths[i] = dir + "/" + form
	}
	return g.carriedFiles(paths...)
}

// carriedFiles returns g's index files at these paths (with the sizes and
// digests g's Release lists), or false when g does not list them all.
func (g *generation) carriedFiles(paths ...string) ([]indexFile, bool) {
	if g == nil {
		return nil, false
	}
	var out []indexFile
	for _, p := range paths {
		f := indexFile{path: p, src: filepath.Join(g.dir, filepath.FromSlash(p)), sums: map[string]string{}}
		for _, h := range hashAlgorithms {
			e, ok := g.release.file(h.field, f.path)
			if !ok {
				return nil, false
			}
			f.sums[h.field], f.size = e.hex, e.size
		}
		out = append(out, f)
	}
	return out, true
}

// previous returns g's Packages and Packages.xz of dir when both are there
// with the digests g's Release lists (nil otherwise), for reusing blocks.
func (g *generation) previous(dir string) *prevIndex {
	if g == nil {
		return nil
	}
	read := func(form string) []byte {
		data, err := g.listedFile(dir + "/" + form)
		if err != nil {
			return nil
		}
		return data
	}
	p := &prevIndex{plain: read(indexForms[0]), xz: read(indexForms[2])}
	if p.plain == nil || p.xz == nil {
		return nil
	}
	return p
}

// listedFile reads g's index file at rel, checked against the size and
// SHA256 g's Release lists: an index changed outside updeb (edited,
// truncated) is refused, so that no write signs what it lists into a new
// generation.
func (g *generation) listedFile(rel string) ([]byte, error) {
	name := filepath.Join(g.dir, filepath.FromSlash(rel))
	e, ok := g.release.file("SHA256", rel)
	if !ok {
		return nil, fmt.Errorf("%w: %s: its Release does not list it", ErrInvalid, name)
	}
	data, err := readFile(name)
	if err != nil {
		return nil, err
	}
	if sum := sha256.Sum256(data); int64(len(data)) != e.size || hex.EncodeToString(sum[:]) != e.hex {
		return nil, fmt.Errorf("%w: %s: %d bytes with SHA256 %x, its Release lists %d bytes with SHA256 %s: the generation was changed outside updeb, and nothing is written from it; %s",
			ErrInvalid, name, len(data), sum, e.size, e.hex, restoreFromByHash(name, e.hex))
	}
	return data, nil
}

// restoreFromByHash says how to restore the index file name of a
// generation, whose Release lists it with SHA256 hex: from its by-hash
// name, a link to the same bytes, which an edit in place changed too.
func restoreFromByHash(name, hex string) string {
	byHash := filepath.Join(filepath.Dir(name), "by-hash", "SHA256", hex)
	return fmt.Sprintf("restore the file: %s has the listed bytes unless it was edited in place ('cp -p %s %s'; 'updeb repo verify' checks every file)", byHash, byHash, name)
}

// signRelease renders the Release for files and signs it: Release, InRelease
// and Release.gpg.
func (r *Repo) signRelease(set Settings, all bool, date time.Time, files []indexFile) ([]indexFile, error) {
	release := releaseFile(set, all, date, files)
	inRelease, err := r.opts.Signer.ClearSign(release, date)
	if err != nil {
		return nil, err
	}
	detached, err := r.opts.Signer.DetachSign(release, date)
	if err != nil {
		return nil, err
	}
	return []indexFile{{path: "Release", data: release}, {path: "InRelease", data: inRelease}, {path: "Release.gpg", data: detached}}, nil
}

// stage writes the next generation complete in a staging directory beside
// the generations and fsyncs it: the index files, the signed Release, the
// settings, and by-hash/ with this generation's indexes and the live
// generation's, so a client holding the live InRelease finds what it lists.
func (r *Repo) stage(st *suiteState, files, meta []indexFile, set Settings, date time.Time) (string, error) {
	keys, _, err := r.opts.Signer.PublicKey()
	if err != nil {
		return "", err
	}
	parent := r.suiteGenDir(st.suite)
	if err := atomicfile.MkdirAll(parent, 0o755); err != nil {
		return "", err
	}
	staging, err := os.MkdirTemp(parent, ".staging-")
	if err != nil {
		return "", err
	}
	dirs := map[string]bool{staging: true}
	err = os.Chmod(staging, 0o755)
	all := append(append(append([]indexFile(nil), files...), meta...),
		indexFile{path: settingsFile, data: set.marshal()}, indexFile{path: keysFile, data: keys})
	for _, f := range all {
		if err == nil && !f.listedOnly {
			err = placeFile(staging, f, date, st.copyBase, dirs)
		}
	}
	if err == nil {
		err = linkByHash(staging, files, dirs)
	}
	if err == nil && st.live != nil {
		err = carryByHash(staging, st.live, date, dirs)
	}
	if err == nil {
		err = syncDirs(dirs)
	}
	if err != nil {
		os.RemoveAll(staging)
		// A full disk is the repository's: the staging folder, which the
		// error names, is gone when it is read.
		return "", diskfull.Wrap(err, r.root)
	}
	return staging, nil
}

// placeFile puts f into the staging directory: new bytes are written with
// mtime date (a web server's Last-Modified, which must move forward with
// every generation: see releaseDate); an unchanged file is linked from its
// generation (keeping the mtime it got when its content was new), or copied
// with mtime date when copy is set.
func placeFile(staging string, f indexFile, date time.Time, copyFile bool, dirs map[string]bool) error {
	name := filepath.Join(staging, filepath.FromSlash(f.path))
	if err := atomicfile.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	dirs[filepath.Dir(name)] = true
	if f.src != "" {
		st, err := os.Stat(f.src)
		if err == nil && st.Size() != f.size {
			err = fmt.Errorf("it has %d", st.Size())
		}
		if err != nil {
			return fmt.Errorf("%w: %s: expected %d bytes as its Release lists (%v): the generation was changed outside updeb, and nothing is written from it; %s",
				ErrInvalid, f.src, f.size, err, restoreFromByHash(f.src, f.sums["SHA256"]))
		}
		if !copyFile && os.Link(f.src, name) == nil {
			return nil
		}
		data, err := readFile(f.src)
		if err != nil {
			return err
		}
		f.data = data
	}
	if err := writeFileSync(name, f.data); err != nil {
		return err
	}
	return os.Chtimes(name, date, date)
}

// linkByHash links each index file under by-hash/<algorithm>/<digest>.
func linkByHash(staging string, files []indexFile, dirs map[string]bool) error {
	for _, f := range files {
		if f.listedOnly {
			continue
		}
		for _, h := range hashAlgorithms {
			dir := filepath.Join(staging, filepath.FromSlash(path.Dir(f.path)), "by-hash", h.field)
			if err := linkOrCopy(filepath.Join(staging, filepath.FromSlash(f.path)), filepath.Join(dir, f.sums[h.field])); err != nil {
				return err
			}
			dirs[dir] = true
		}
	}
	return nil
}

// byHashGrace is how long a generation's indexes stay served by hash after
// it stops being live: a client that read its InRelease just before the
// switch fetches the indexes it lists by hash, however many writes (a
// publish per package, a refresh) follow it meanwhile.
const byHashGrace = time.Hour

// byHashKeptFile lists, in a generation, the by-hash files of earlier
// generations it serves: one "UNTIL PATH" line each, UNTIL in RFC 3339 (the
// Date of the write that stopped listing it, plus byHashGrace), PATH
// relative to the generation (COMPONENT/binary-ARCH/by-hash/SHA256/HEX).
const byHashKeptFile = "updeb-by-hash-kept"

// carryByHash links into the staging by-hash directories the live
// generation's index files, and the earlier generations' that the live one
// still serves by hash and whose grace has not passed at date (the new
// generation's), for clients that read an older InRelease just before a
// switch; it records them in byHashKeptFile. A live generation without that
// file (written before updeb kept it) passes on only its own indexes.
func carryByHash(staging string, live *generation, date time.Time, dirs map[string]bool) error {
	until := map[string]time.Time{}
	for rel, t := range readByHashKept(live.dir) {
		if t.After(date) {
			until[rel] = t
		}
	}
	for _, e := range live.release.files {
		if rel := path.Join(path.Dir(e.path), "by-hash", e.algorithm, e.hex); validByHashPath(rel) {
			until[rel] = date.Add(byHashGrace)
		}
	}
	var kept []byte
	for _, rel := range slices.Sorted(maps.Keys(until)) {
		src := filepath.Join(live.dir, filepath.FromSlash(rel))
		if _, err := os.Stat(src); err != nil {
			continue // not served by the live generation either
		}
		dst := filepath.Join(staging, filepath.FromSlash(rel))
		if err := linkOrCopy(src, dst); err != nil {
			return err
		}
		dirs[filepath.Dir(dst)] = true
		kept = fmt.Appendf(kept, "%s %s\n", until[rel].UTC().Format(time.RFC3339), rel)
	}
	return writeFileSync(filepath.Join(staging, byHashKeptFile), kept)
}

// readByHashKept reads a generation's byHashKeptFile: PATH -> UNTIL. A
// missing or damaged file, or a line that is not a by-hash path, gives
// nothing (the indexes the generation lists are carried all the same).
func readByHashKept(dir string) map[string]time.Time {
	out := map[string]time.Time{}
	data, err := readFile(filepath.Join(dir, byHashKeptFile))
	if err != nil {
		return out
	}
	for line := range strings.Lines(string(data)) {
		when, rel, ok := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
		t, err := time.Parse(time.RFC3339, when)
		if ok && err == nil && validByHashPath(rel) {
			out[rel] = t
		}
	}
	return out
}

// validByHashPath reports whether rel is DIR/by-hash/ALGORITHM/HEX inside a
// generation, with a digest of at least 64 hex digits.
func validByHashPath(rel string) bool {
	parts := strings.Split(rel, "/")
	n := len(parts)
	if n < 4 || path.Clean(rel) != rel || path.IsAbs(rel) || slices.Contains(parts, "..") || parts[n-3] != "by-hash" {
		return false
	}
	if len(parts[n-1]) < 64 || strings.Trim(parts[n-1], "0123456789abcdef") != "" {
		return false
	}
	for _, h := range hashAlgorithms {
		if h.field == parts[n-2] {
			return true
		}
	}
	return false
}

// commit renames the staging directory to generation n. A leftover
// generation n can only come from a write killed before its switch: it was
// never live, so it is replaced.
func (r *Repo) commit(suite string, n int, staging string) error {
	final := r.genDir(suite, n)
	if err := r.removeAside(final); err != nil {
		return err
	}
	if err := os.Rename(staging, final); err != nil {
		return err
	}
	return atomicfile.SyncDir(filepath.Dir(final))
}

// nextLink is the symbolic link switchTo renames over dists/<suite>.
func (r *Repo) nextLink(suite string) string {
	return filepath.Join(r.distsDir(), "."+suite+".link")
}

// makeLink makes suite's nextLink, to generation n, before generation n is
// in place: a new suite's first write killed before its switch leaves it
// beside the suite's generation 1, which tells that generation, never
// live, from the one of a suite whose link was lost (lostLink).
func (r *Repo) makeLink(suite string, n int) error {
	tmpLink := r.nextLink(suite)
	if err := os.Remove(tmpLink); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return os.Symlink(path.Join(".gen", suite, strconv.Itoa(n)), tmpLink)
}

// switchTo makes the generation of suite's nextLink live: the link renamed
// over dists/<suite>, which replaces it atomically.
func (r *Repo) switchTo(suite string) error {
	if err := os.Rename(r.nextLink(suite), filepath.Join(r.distsDir(), suite)); err != nil {
		return err
	}
	return atomicfile.SyncDir(r.distsDir())
}

// generationsToKeep returns the generations of suite to keep: the live one
// and, newest first, the newest generation of each of the keep most recent
// distinct sets of packages (a refresh only re-signs, or adds an
// architecture's empty indexes: it does not push a rollback target out). A
// generation that cannot be read is kept, for an operator to look at.
func (r *Repo) generationsToKeep(suite string, live, keep int) (map[int]bool, error) {
	gens, err := r.keptGenerations(suite, live)
	if err != nil {
		return nil, err
	}
	kept := map[int]bool{}
	var seen []*keptContent
	for _, n := range gens {
		g, err := r.readGeneration(suite, n)
		if err != nil {
			r.opts.Logger.Warn("cannot read a generation; keeping it", "suite", suite, "generation", n, "err", err)
			kept[n] = true
			continue
		}
		c := &keptContent{g: g, id: g.release.contentID(), files: g.release.fileList()}
		if n != live {
			same, err := c.sameAsOne(seen)
			switch {
			case err != nil:
				r.opts.Logger.Warn("cannot read a generation's packages; keeping it", "suite", suite, "generation", n, "err", err)
				kept[n] = true
				continue
			case same:
				continue // an older copy of a kept set of packages
			case len(seen) >= keep:
				return kept, nil
			}
		}
		kept[n] = true
		seen = append(seen, c)
	}
	return kept, nil
}

// keptContent is a generation that generationsToKeep keeps, with what it is
// compared by: its index files by digest (id) and by name (files), and, read
// only when needed, its packages.
type keptContent struct {
	g         *generation
	id, files string
	pkgs      map[string]Entry
}

// sameAsOne reports whether c serves the packages of one of seen. The same
// index files serve the same packages, and the same index file names with
// other digests other packages; only index files of other names (an
// architecture or component added, Contents written for the first time)
// need the packages read.
func (c *keptContent) sameAsOne(seen []*keptContent) (bool, error) {
	for _, k := range seen {
		if c.id == k.id {
			return true, nil
		}
		if c.files == k.files {
			continue
		}
		a, err := c.packages()
		if err != nil {
			return false, err
		}
		b, err := k.packages()
		if err != nil {
			return false, err
		}
		if maps.EqualFunc(a, b, func(Entry, Entry) bool { return true }) {
			return true, nil
		}
	}
	return false, nil
}

func (c *keptContent) packages() (map[string]Entry, error) {
	if c.pkgs == nil {
		p, err := c.g.packages()
		if err != nil {
			return nil, err
		}
		c.pkgs = p
	}
	return c.pkgs, nil
}

// prunable returns the names, in suite's generations folder, of what prune
// removes: generations not in kept (see generationsToKeep), generations after
// the live one (never live: written by a killed write), and the dot-named
// leftovers of killed writes (staging directories, generations renamed aside).
func (r *Repo) prunable(suite string, kept map[int]bool) ([]string, error) {
	des, err := os.ReadDir(r.suiteGenDir(suite))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, de := range des {
		if n, err := strconv.Atoi(de.Name()); err == nil && kept[n] {
			continue
		}
		out = append(out, de.Name())
	}
	// Newest generation first, as history lists them; leftovers last.
	slices.SortFunc(out, func(a, b string) int {
		na, errA := strconv.Atoi(a)
		nb, errB := strconv.Atoi(b)
		switch {
		case errA == nil && errB == nil:
			return nb - na
		case errA == nil:
			return -1
		case errB == nil:
			return 1
		}
		return strings.Compare(a, b)
	})
	return out, nil
}

// prune removes what prunable lists and returns the numbers of the
// generations it removed. Failures are only logged: the repository is already
// consistent.
func (r *Repo) prune(suite string, live, keep int) []int {
	kept, err := r.generationsToKeep(suite, live, keep)
	if err != nil {
		r.opts.Logger.Warn("cannot list old generations", "suite", suite, "err", err)
		return nil
	}
	names, err := r.prunable(suite, kept)
	if err != nil {
		r.opts.Logger.Warn("cannot list old generations", "suite", suite, "err", err)
		return nil
	}
	var removed []int
	for _, name := range names {
		dir := filepath.Join(r.suiteGenDir(suite), name)
		remove := r.removeAside
		if strings.HasPrefix(name, ".") {
			remove = os.RemoveAll // already aside: nothing reads it
		}
		if err := remove(dir); err != nil {
			r.opts.Logger.Warn("cannot remove an old generation", "dir", dir, "err", err)
			continue
		}
		if n, err := strconv.Atoi(name); err == nil && n > 0 {
			removed = append(removed, n)
		}
	}
	return removed
}

// asidePrefix starts the name a generation directory is renamed to before it
// is removed.
const asidePrefix = ".removing-"

// removeAside removes a generation directory without it ever being seen
// half-removed: it is renamed to a dot name first, which history, rollback
// and gc ignore (they read numbered directories only), and removed from
// there. A removal killed after the rename leaves a dot directory that the
// next prune of the suite (its next write, or gc) removes; a numbered
// directory is always whole. A directory that does not exist is removed.
func (r *Repo) removeAside(dir string) error {
	aside := filepath.Join(filepath.Dir(dir), asidePrefix+filepath.Base(dir))
	if err := os.RemoveAll(aside); err != nil { // a leftover of an earlier removal
		return err
	}
	err := os.Rename(dir, aside)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := atomicfile.SyncDir(filepath.Dir(dir)); err != nil {
		return err
	}
	r.hook("aside")
	return os.RemoveAll(aside)
}

// keysFile is the public signing keys of a generation, beside its settings:
// what the repository's keyring is assembled from.
const keysFile = "updeb-keys.gpg"

// keys are the public keys g is signed by: its keysFile's or, for a
// generation without one (written by an older updeb), those of archive
// (the repository's keyring as it was) that its settings name.
func (g *generation) keys(archive openpgp.EntityList) openpgp.EntityList {
	if data, err := readFile(filepath.Join(g.dir, keysFile)); err == nil {
		if list, err := openpgp.ReadKeyRing(bytes.NewReader(data)); err == nil {
			return list
		}
	}
	var out openpgp.EntityList
	for _, e := range archive {
		if slices.ContainsFunc(g.settings.SigningKeys, (&Signer{entities: []*openpgp.Entity{e}}).signs) {
			out = append(out, e)
		}
	}
	return out
}

// writeKeyring writes, at the repository root, the public keys a client of
// any suite needs, binary (archive-keyring.gpg, for signed-by) and armored
// (archive-keyring.asc): the keys of this write's signer and of every suite's
// live generation. Suites signed by different keys (a staging key and a
// production key) then all verify with the one keyring clients are told to
// fetch, whichever suite was written last. Of a key held in two copies
// (one suite signed before the key was extended, one after) it holds the
// one stated last (signkey.Stated). A live generation written before
// generations kept their keys contributes the keys of the existing keyring
// that its settings name. Leftover temporary files of a killed write of the
// keyring are removed.
func (r *Repo) writeKeyring() error {
	existing := r.archiveKeyring()
	var es []*openpgp.Entity
	at := map[string]int{} // fingerprint -> index in es
	add := func(e *openpgp.Entity) {
		fp := fingerprint(e)
		i, seen := at[fp]
		switch {
		case !seen:
			at[fp] = len(es)
			es = append(es, e)
		case signkey.Stated(e).After(signkey.Stated(es[i])):
			// Two copies of a key: a suite not written since the key was
			// extended holds it as it was. The keyring took the first
			// copy met, and a client given it refused every suite of the
			// key once its old expiry passed (EXPKEYSIG).
			es[i] = e
		}
	}
	addAll := func(list openpgp.EntityList) {
		for _, e := range list {
			add(e)
		}
	}
	addAll(r.opts.Signer.entities)
	suites, err := r.managedSuites()
	if err != nil {
		return err
	}
	for _, suite := range suites {
		g, err := r.live(suite)
		if err != nil {
			// A damaged suite is named by the operations on it; which keys
			// it is signed by cannot be read, so the keyring's all stay:
			// dropped, a client given the keyring meanwhile refused the
			// suite (NO_PUBKEY) once it was repaired.
			addAll(existing)
			continue
		}
		if g != nil {
			addAll(g.keys(existing))
		}
	}
	// A suite whose link dists/SUITE is lost (a copy that leaves symbolic
	// links out) keeps the keys of its newest generation, the one the
	// 'ln -sfn' every command gives makes live again: dropped, a client
	// given the keyring meanwhile refused the suite (NO_PUBKEY) once the
	// link was restored. Unreadable, it keeps the keyring's all, as a
	// damaged suite does.
	linkless, err := r.linklessSuites(suites)
	if err != nil {
		return err
	}
	for _, suite := range linkless {
		n, err := r.lostLinkTo(suite)
		if err != nil || n == 0 {
			continue // none, or a new suite's first write killed before its switch, never live
		}
		if g, err := r.readGeneration(suite, n); err != nil {
			addAll(existing)
		} else {
			addAll(g.keys(existing))
		}
	}
	bin, asc, err := publicKey(es...)
	if err != nil {
		return err
	}
	leftovers, _ := dirglob.Glob(r.root, ".archive-keyring.*.tmp-*")
	for _, f := range leftovers {
		os.Remove(f)
	}
	for name, data := range map[string][]byte{"archive-keyring.gpg": bin, "archive-keyring.asc": asc} {
		if r.intact(name, data) {
			continue // a write with nothing new leaves it as it is
		}
		// 0644: a new client fetches the key from the same web server.
		if err := atomicfile.WriteFile(filepath.Join(r.root, name), data, 0o644); err != nil {
			return err
		}
	}
	return atomicfile.SyncDir(r.root)
}

// archiveKeyring reads the keyring at the repository's root (none when it
// cannot be read).
// intact reports whether the file name at the root is data, a regular
// file of mode 0644 (a web server running as another user reads it): one
// of another mode (a restore under umask 077) is written again.
func (r *Repo) intact(name string, data []byte) bool {
	file := filepath.Join(r.root, name)
	fi, err := os.Lstat(file)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o644 {
		return false
	}
	have, err := readFile(file)
	return err == nil && bytes.Equal(have, data)
}

func (r *Repo) archiveKeyring() openpgp.EntityList {
	data, _ := readFile(filepath.Join(r.root, "archive-keyring.gpg"))
	list, _ := openpgp.ReadKeyRing(bytes.NewReader(data))
	return list
}

// linkOrCopy hard-links src to dst (creating dst's directory), copying when
// the file system refuses links. An existing dst is the same content by name.
func linkOrCopy(src, dst string) error {
	if err := atomicfile.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	err := os.Link(src, dst)
	if err == nil || errors.Is(err, os.ErrExist) {
		return nil
	}
	data, rerr := readFile(src)
	if rerr != nil {
		return rerr
	}
	return writeFileSync(dst, data)
}

func syncDirs(dirs map[string]bool) error {
	for d := range dirs {
		if err := atomicfile.SyncDir(d); err != nil {
			return err
		}
	}
	return nil
}
