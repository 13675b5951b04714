// Package cache is updeb's download cache: a content-addressed store of verified
// files, named by their sha256 (DIR/sha256/ab/abcdef...), and an index from a
// download's identity (URL and recipe key) to the digests of what it returned.
//
// Every write goes to a temporary file in DIR/tmp and is renamed into place, so
// a process killed at any moment never leaves a partial file at a final path.
// Every read re-hashes the file: a blob whose bytes no longer match its name,
// or that is no longer a regular file (a folder, a FIFO), is evicted and
// reported as a miss (ErrCorrupt), never returned, and an index entry that
// cannot be read is a miss. A new copy takes the place of what is there,
// folders included.
//
// Nothing here is fsynced. What only a power cut could leave behind (an empty
// or zero-filled blob, an empty index entry) is what every read already
// refuses, so durability would only save a download after one, and it costs
// one: a blob's fsync waits for the device to persist the whole download (on
// the test VM 0.2-0.5 s per 200 MB, a fifth of the download's time; a small
// index entry's fsync behind it as long), which curl, the peer, never waits.
// The fetcher asks the kernel to start writing a download back as it arrives,
// so a power cut soon after finds most of it on disk all the same. What
// updeb publishes (packages, the repository) is fsynced (pkg/atomicfile).
//
// Cross-process safety comes from flock(2) lock files (DIR/locks), one per
// download identity; blobs and index entries themselves are replaced
// atomically, so readers never need a lock to read one. A hit marks what it
// read as used (its modification time), so that GC, which removes what no
// run used for a while, keeps it, and so does a commit: the mark (and a
// commit's rename) and the removal of a blob (GC's, or a read's eviction of
// a corrupt one) exclude each other with one more lock (markUsed, Commit,
// evictIf).
package cache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/updeb/updeb/internal/confined"
	"github.com/updeb/updeb/internal/diskfull"
	"github.com/updeb/updeb/pkg/ctxio"
	"github.com/updeb/updeb/pkg/lockfile"

	"github.com/updeb/updeb/pkg/digest"
)

// ErrCorrupt is wrapped when a cached blob no longer matches its own name; the
// blob has been removed by the time the error is returned.
var ErrCorrupt = errors.New("cache: corrupt entry evicted")

// ErrMiss is returned by Lookup when the cache does not hold what was asked for.
var ErrMiss = errors.New("cache: not cached")

// Cache is a cache folder. Its methods are safe for concurrent use by several
// goroutines and several processes.
type Cache struct {
	dir string
}

// Open creates (when needed) and opens the cache in dir.
func Open(dir string) (*Cache, error) {
	if dir == "" {
		return nil, errors.New("cache: no cache folder given")
	}
	for _, sub := range []string{"sha256", "index", "tmp", "locks"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return nil, fmt.Errorf("cache: %w", err)
		}
	}
	if err := oneFileSystem(dir); err != nil {
		return nil, err
	}
	return &Cache{dir: dir}, nil
}

// oneFileSystem refuses a cache whose blob or index folder is on another
// file system than its tmp folder (a subfolder linked to another disk), or
// on another mount of it (a bind mount, see mountOf): every download and
// index entry is renamed from tmp into place, and each would fail at its
// end (EXDEV), after the whole download.
func oneFileSystem(dir string) error {
	dev := func(sub string) ([2]uint64, error) {
		id, err := mountOf(filepath.Join(dir, sub))
		if err != nil {
			return id, fmt.Errorf("cache: %w", err)
		}
		return id, nil
	}
	tmp, err := dev("tmp")
	if err != nil {
		return err
	}
	for _, sub := range []string{"sha256", "index"} {
		d, err := dev(sub)
		if err != nil {
			return err
		}
		if d != tmp {
			return fmt.Errorf("cache: %s is on another file system than %s (or on another mount of it, a bind mount): downloads are renamed from tmp into place, so the cache's folders must share one file system (link the cache folder itself to another disk, not its subfolders)",
				filepath.Join(dir, sub), filepath.Join(dir, "tmp"))
		}
	}
	return nil
}

// Dir returns the cache folder.
func (c *Cache) Dir() string { return c.dir }

// isSHA256 says whether s is a sha256 as the cache names blobs: 64
// lowercase hex digits, nothing a path could be made of.
func isSHA256(s string) bool {
	return len(s) == 64 && strings.Trim(s, "0123456789abcdef") == ""
}

// BlobPath returns where the blob with this sha256 (lowercase hex) lives.
func (c *Cache) BlobPath(sha256Hex string) string {
	return filepath.Join(c.dir, "sha256", sha256Hex[:2], sha256Hex)
}

// Entry is what the index records about one download.
type Entry struct {
	URL    string `json:"url"`
	Key    string `json:"key,omitempty"`
	SHA256 string `json:"sha256"`
	SHA512 string `json:"sha512,omitempty"`
	Size   int64  `json:"size"`
}

// Digests returns the entry's digests as a set.
func (e Entry) Digests() digest.Set {
	s := digest.Set{digest.SHA256: e.SHA256}
	if e.SHA512 != "" {
		s[digest.SHA512] = e.SHA512
	}
	return s
}

// ID returns the identity of a download (URL and key) as a file-name-safe hex string.
func ID(url, key string) string {
	sum := sha256.Sum256([]byte(url + "\n" + key))
	return hex.EncodeToString(sum[:])
}

func (c *Cache) indexPath(id string) string {
	return filepath.Join(c.dir, "index", id[:2], id+".json")
}

// Index returns the index entry for (url, key), or ErrMiss. Call it holding
// Lock(ID(url, key)): it marks the entry as used (see GC), and gc removes
// an entry only while holding that lock.
func (c *Cache) Index(url, key string) (Entry, error) {
	p := c.indexPath(ID(url, key))
	e, err := readEntry(p)
	if err != nil {
		return Entry{}, err
	}
	if e.URL != url || e.Key != key {
		return Entry{}, ErrMiss
	}
	touch(p)
	return e, nil
}

// readEntry reads the index entry at p; ErrMiss when there is none or it
// cannot be read.
func readEntry(p string) (Entry, error) {
	b, err := confined.ReadFile(p, maxIndexEntry)
	if absent(err) || errors.Is(err, confined.ErrRefused) {
		return Entry{}, ErrMiss
	}
	if err != nil {
		return Entry{}, fmt.Errorf("cache: %w", err)
	}
	var e Entry
	if err := json.Unmarshal(b, &e); err != nil || !isSHA256(e.SHA256) {
		// An unreadable index entry is only a miss: the blob it named is
		// re-verified anyway. A sha256 that is no lowercase hex would name
		// a path out of the cache ("../..") that a failed check removes.
		return Entry{}, ErrMiss
	}
	return e, nil
}

// SetIndex records e (atomically replacing any previous entry for e.URL, e.Key).
// Call it holding Lock(ID(e.URL, e.Key)): its temporary file is named after
// the lock, so that Sweep can tell a killed writer's leftover from a live one.
func (c *Cache) SetIndex(e Entry) error {
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Join(c.dir, "tmp"), indexPrefix+ID(e.URL, e.Key)+"-*")
	if err != nil {
		return c.writeError(err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		discard(f)
		return c.writeError(err)
	}
	// The entry is the lock holder's alone: what is at its path stays
	// what was found there.
	return c.place(f, c.indexPath(ID(e.URL, e.Key)), evict)
}

// DropIndex removes the index entry for (url, key), if any: the next lookup
// misses. The blob stays (others may name it).
func (c *Cache) DropIndex(url, key string) error {
	err := os.Remove(c.indexPath(ID(url, key)))
	if err != nil && !absent(err) {
		return fmt.Errorf("cache: %w", err)
	}
	return nil
}

// TempFile returns a new empty file in the cache's tmp folder, on the same file
// system as the final paths so that Commit can rename it.
func (c *Cache) TempFile() (*os.File, error) {
	f, err := os.CreateTemp(filepath.Join(c.dir, "tmp"), "part-*")
	if err != nil {
		return nil, c.writeError(err)
	}
	return f, nil
}

// writeError is a failed write into the cache; a full disk names the
// cache's folder, whichever of its subfolders the write was in.
func (c *Cache) writeError(err error) error {
	return fmt.Errorf("cache: %w", diskfull.Wrap(err, c.dir))
}

// Temporary files named after a download identity (its lock): partial
// downloads, part-ID (the bytes so far) and part-ID.json (what a resume
// needs, the fetcher's business), and index entries being written,
// index-ID-RANDOM.
const (
	partPrefix  = "part-"
	indexPrefix = "index-"
)

// Partial opens (creating it when needed) the partial download of identity
// id in the tmp folder, keeping what an earlier, interrupted run left in it.
// It also returns the path of its metadata file. Call it only while holding
// Lock(id): the lock is what makes the partial file one process's.
//
// The partial file is the cache's own, written to and chmodded: anything else
// in its place (a symlink planted there, a FIFO, a folder) is removed and a
// new file made, never written through.
func (c *Cache) Partial(id string) (f *os.File, meta string, err error) {
	p := filepath.Join(c.dir, "tmp", partPrefix+id)
	f, err = openPartial(p, 0)
	// Only what is no regular file is replaced: one that cannot be opened
	// for a reason of this process (no file descriptor left, no right to
	// write it) holds the bytes of an earlier run.
	if err != nil {
		if fi, lerr := os.Lstat(p); lerr == nil && !fi.Mode().IsRegular() {
			if err = os.RemoveAll(p); err == nil {
				f, err = openPartial(p, os.O_EXCL)
			}
		}
	}
	if err != nil {
		return nil, "", c.writeError(err)
	}
	return f, p + ".json", nil
}

// openPartial opens (or creates) the regular file at p for reading and
// writing, without following a symlink or blocking on a FIFO.
func openPartial(p string, flag int) (*os.File, error) {
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|flag, 0o644)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: not a regular file", p)
	}
	return f, nil
}

// Sweep removes what interrupted runs left in the tmp folder: a partial
// download (Partial) whose file and resume record were not touched for
// partialAge and not in use (its lock is free, and it is still old once
// sweep holds it), an index entry being written whose lock is free (its
// writer died), and any other temporary file older than an hour (they
// live for milliseconds). It returns how many files it removed.
func (c *Cache) Sweep(partialAge time.Duration) int {
	removed := 0
	c.sweep(partialAge, false, func(string, int64) { removed++ })
	return removed
}

// sweep is Sweep, calling gone with the name and size of each file it
// removes or, dryRun, would remove.
func (c *Cache) sweep(partialAge time.Duration, dryRun bool, gone func(name string, size int64)) {
	dir := filepath.Join(c.dir, "tmp")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	now := time.Now()
	remove := func(name string, fi fs.FileInfo, rm func(string) error) {
		if dryRun || rm(filepath.Join(dir, name)) == nil {
			gone(name, fi.Size())
		}
	}
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			continue
		}
		name := e.Name()
		id := lockOf(name)
		if id == "" {
			if now.Sub(fi.ModTime()) > time.Hour {
				remove(name, fi, os.RemoveAll)
			}
			continue
		}
		partial := strings.HasPrefix(name, partPrefix)
		if partial && now.Sub(partialUsed(dir, id)) <= partialAge {
			continue // kept for a resume
		}
		sweeping(filepath.Join(dir, name))
		l, busy, err := c.tryLock(id, dryRun)
		if busy || err != nil && !dryRun {
			continue // a download is using it, or a clean-up cannot tell
		}
		// Decided again under the lock: a fetch may have resumed the
		// partial since it was listed, and let go of the lock with the
		// bytes it added kept for the next run.
		fi, err = os.Lstat(filepath.Join(dir, name))
		if err == nil && (!partial || time.Since(partialUsed(dir, id)) > partialAge) {
			remove(name, fi, os.Remove)
		}
		l.Unlock()
	}
}

// partialUsed returns when the partial download id in the folder dir was
// last written: the newer of its file's time and its resume record's (a
// resume by a 206 adds to the file and leaves the record as it was, and
// the one is no use without the other).
func partialUsed(dir, id string) time.Time {
	var last time.Time
	for _, name := range []string{partPrefix + id, partPrefix + id + ".json"} {
		if fi, err := os.Lstat(filepath.Join(dir, name)); err == nil && fi.ModTime().After(last) {
			last = fi.ModTime()
		}
	}
	return last
}

// sweeping is called with the path of a temporary file that sweep found
// old, before it takes the lock that says whether it is in use: a test
// resumes the partial download in that window.
var sweeping = func(p string) {}

// tryLock takes the lock of download identity id if it is free at once,
// replacing what is no lock file there as Lock does, unless dryRun (which
// removes nothing). It returns nil and busy when another process holds
// it, and nil and the error when the lock file cannot be opened (a cache
// the user may read but not write: enough for a dry run). Unlocking a nil
// lock does nothing.
func (c *Cache) tryLock(id string, dryRun bool) (l *lockfile.Lock, busy bool, err error) {
	done, cancel := context.WithCancel(context.Background())
	cancel() // try the lock once, without waiting
	p := filepath.Join(c.dir, "locks", id+".lock")
	if dryRun {
		l, err = lockfile.Acquire(done, p, 0)
	} else {
		l, err = lockAt(done, p, lockfile.Acquire)
	}
	if errors.Is(err, lockfile.ErrHeld) {
		return nil, true, nil
	}
	return l, false, err
}

// lockOf returns the download identity a temporary file is named after, or "".
func lockOf(name string) string {
	var id string
	switch {
	case strings.HasPrefix(name, partPrefix):
		id, _, _ = strings.Cut(name[len(partPrefix):], ".")
	case strings.HasPrefix(name, indexPrefix):
		id, _, _ = strings.Cut(name[len(indexPrefix):], "-")
	}
	if !isSHA256(id) {
		return ""
	}
	return id
}

// Commit moves the fully written temp file f, whose sha256 is sha256Hex, to its
// blob path, marked as used, and returns that path. f is closed; on error
// (ctx done while gc removes a blob) it is removed.
//
// A commit is a use, as a hit is (markUsed): the blob gets this moment's
// time, not that of f's last write (a partial file an earlier run left, its
// bytes all there), and the mark and the rename hold gcLock shared. Without
// it gc, finding an earlier copy old, removed the copy committed in the
// moment before its removal, and the build handed its path failed.
func (c *Cache) Commit(ctx context.Context, f *os.File, sha256Hex string) (string, error) {
	if !isSHA256(sha256Hex) {
		discard(f)
		return "", fmt.Errorf("cache: bad sha256 %q", sha256Hex)
	}
	l, err := c.lockGC(ctx, true)
	if err != nil {
		discard(f)
		return "", err
	}
	defer func() { l.Unlock() }()
	touch(f.Name())
	p := c.BlobPath(sha256Hex)
	// A folder found where the blob goes is removed as a corrupt blob is,
	// holding gcLock exclusive (evictIf), not beside another commit of the
	// same bytes (two URLs, a pinned download beside another), which may
	// have removed it and put its copy there since: that copy was removed,
	// and the path it was handed named nothing until this commit's rename.
	evictFolder := func(p string) error {
		l.Unlock()
		err := c.evictIf(ctx, p, fs.FileInfo.IsDir)
		if err == nil {
			l, err = c.lockGC(ctx, true)
		}
		return err
	}
	return p, c.place(f, p, evictFolder)
}

// discard closes and removes the temporary file f, which will not be put
// in place.
func discard(f *os.File) {
	f.Close()
	os.Remove(f.Name())
}

// place closes f and renames it to dst (without fsync: see the package doc),
// removing a folder found at dst with evictFolder.
func (c *Cache) place(f *os.File, dst string, evictFolder func(dst string) error) error {
	fail := func(err error) error {
		discard(f)
		return c.writeError(err)
	}
	if err := f.Chmod(0o644); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		return fail(err)
	}
	dir := filepath.Dir(dst)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		// A file where the folder goes (sha256/ab) is none of ours. It is
		// unlinked, which never removes a folder: another commit that
		// found it too may have removed it, made the folder and put its
		// blob there since, and a removal of what is there removed the
		// folder, that blob and every other blob in it.
		if fi, lerr := os.Lstat(dir); lerr != nil {
			return fail(err)
		} else if !fi.IsDir() {
			removing(dir)
			uerr := syscall.Unlink(dir)
			if uerr != nil && !absent(uerr) && !errors.Is(uerr, syscall.EISDIR) {
				return fail(err)
			}
			if merr := os.Mkdir(dir, 0o755); merr != nil && !errors.Is(merr, fs.ErrExist) {
				return fail(err)
			}
		}
	}
	err := os.Rename(f.Name(), dst)
	if fi, lerr := os.Lstat(dst); err != nil && lerr == nil && fi.IsDir() {
		// A folder where a blob or an index entry goes is none of ours.
		if err = evictFolder(dst); err == nil {
			err = os.Rename(f.Name(), dst)
		}
	}
	if err != nil {
		return fail(err)
	}
	return nil
}

// Verify re-hashes the blob named sha256Hex and returns its path, size and
// digests: sha256 and the algorithms in algs, computed in one pass, and marks
// it as used (markUsed). It returns ErrMiss when there is no such blob (or GC
// removed it while it was hashed), and an error wrapping ErrCorrupt (after
// removing the blob) when its bytes do not match its name.
func (c *Cache) Verify(sha256Hex string, algs ...digest.Algorithm) (path string, size int64, sums digest.Set, err error) {
	return c.VerifyReporting(context.Background(), sha256Hex, nil, algs...)
}

// VerifyReporting is Verify that calls report (when not nil) as the blob is
// re-hashed, with the bytes hashed so far and the blob's size, and stops
// reading once ctx is done (returning an error that wraps ctx's).
func (c *Cache) VerifyReporting(ctx context.Context, sha256Hex string, report func(done, total int64), algs ...digest.Algorithm) (path string, size int64, sums digest.Set, err error) {
	if !isSHA256(sha256Hex) {
		return "", 0, nil, ErrMiss // no blob's name, and a path out of the cache a mismatch would remove
	}
	p := c.BlobPath(sha256Hex)
	f, _, err := confined.OpenFile(p)
	if absent(err) {
		return "", 0, nil, ErrMiss
	}
	if errors.Is(err, confined.ErrRefused) {
		notFile := func(now fs.FileInfo) bool { return !now.Mode().IsRegular() }
		return "", 0, nil, errors.Join(fmt.Errorf("%w: %w", ErrCorrupt, err), c.evictIf(ctx, p, notFile))
	}
	if err != nil {
		return "", 0, nil, fmt.Errorf("cache: %w", err)
	}
	defer f.Close()
	h := digest.NewHasher(digest.Needed(nil, algs...)...)
	// struct{ io.Reader } hides *os.File's WriteTo, which would copy in 32 KiB
	// writes: too small for the hasher to run its algorithms in parallel.
	var r io.Reader = struct{ io.Reader }{ctxio.Reader(ctx, f)}
	if report != nil {
		r = &reportingReader{r: ctxio.Reader(ctx, f), report: report, total: -1}
		if fi, err := f.Stat(); err == nil {
			r.(*reportingReader).total = fi.Size()
		}
	}
	if _, err := io.CopyBuffer(h, r, make([]byte, readBuffer)); err != nil {
		return "", 0, nil, fmt.Errorf("cache: reading %s: %w", p, err)
	}
	sums = h.Sum()
	if sums[digest.SHA256] != sha256Hex {
		// Removed only if p still names the file hashed: another process
		// that found it corrupt too may have put a good copy there since.
		var rmErr error
		if was, err := f.Stat(); err == nil {
			rmErr = c.evictIf(ctx, p, func(now fs.FileInfo) bool { return os.SameFile(was, now) })
		}
		return "", 0, nil, errors.Join(fmt.Errorf("%w: %s hashes to sha256:%s", ErrCorrupt, p, sums[digest.SHA256]), rmErr)
	}
	if err := c.markUsed(ctx, f, p); err != nil {
		return "", 0, nil, err
	}
	return p, h.Size(), sums, nil
}

// markUsed marks the blob f, just verified, as used now (its modification
// time: gc removes what no run wrote or read for its max age, so that a
// source built every day stays however old it is), and returns ErrMiss when
// p no longer names f: gc removed it while it was hashed, and the caller
// must download it again, never be handed a path to nothing. The touch and
// the check hold gcLock shared, and gc removes a blob holding it exclusive:
// a blob gc finds old has not been handed out since, and one handed out is
// new to any later gc.
func (c *Cache) markUsed(ctx context.Context, f *os.File, p string) error {
	l, err := c.lockGC(ctx, true)
	if err != nil {
		return err
	}
	defer l.Unlock()
	touch(p)
	was, err := f.Stat()
	now, lerr := os.Lstat(p)
	if err != nil || lerr != nil || !os.SameFile(was, now) {
		return ErrMiss
	}
	return nil
}

// touch sets p's modification time to now, never through a symlink. It is
// only a mark for gc: a file the user may read but not touch (someone
// else's cache) is used all the same.
func touch(p string) {
	now := unix.NsecToTimespec(time.Now().UnixNano())
	_ = unix.UtimesNanoAt(unix.AT_FDCWD, p, []unix.Timespec{now, now}, unix.AT_SYMLINK_NOFOLLOW)
}

// gcLock is the lock file a cache hit holds shared while it marks its blob
// as used (markUsed), a commit while it puts one in place (Commit), and gc
// exclusive while it checks a blob is old and removes it.
func (c *Cache) gcLock() string { return filepath.Join(c.dir, "locks", "gc.lock") }

// absent reports whether err says there is nothing at a path: no such
// file, or a file where one of its folders goes (sha256/ab; no blob or
// index entry is below it, and place puts a folder there).
func absent(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// evictIf evicts the blob p if it still is what was found wrong with it
// (still says). The check and the removal hold gcLock exclusive, as gc's
// do: a commit (which holds it shared) of a good copy lands before the
// check, which spares it, or after the removal, never between the two,
// where it went and the commit's caller was handed a path to nothing.
func (c *Cache) evictIf(ctx context.Context, p string, still func(fs.FileInfo) bool) error {
	l, err := c.lockGC(ctx, false)
	if err != nil {
		return err
	}
	defer l.Unlock()
	if fi, err := os.Lstat(p); err != nil || !still(fi) {
		return nil // gone, or a new copy
	}
	removing(p)
	return evict(p)
}

// removing is called with the path of what the cache has decided to remove
// (gc: an unused index entry or blob; a read: a corrupt blob, under the
// lock that keeps a commit from it; a commit: a file where a fan-out
// folder goes), just before the removal: a test commits a copy there, in
// the window between the two.
var removing = func(p string) {}

// evict removes an entry that is no regular file (a folder, a FIFO): nothing
// of the cache's own, and (a folder) in the way of the rename that would put
// a new copy there.
func evict(p string) error {
	if err := os.RemoveAll(p); err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	return nil
}

// reportingReader calls report with the bytes read so far.
type reportingReader struct {
	r      io.Reader
	report func(done, total int64)
	n      int64
	total  int64
}

func (r *reportingReader) Read(b []byte) (int, error) {
	n, err := r.r.Read(b)
	r.n += int64(n)
	r.report(r.n, r.total)
	return n, err
}

// readBuffer is Verify's read size: large enough for the hasher to compute
// several algorithms in parallel (see digest.Hasher.Write).
const readBuffer = 256 << 10

// maxIndexEntry bounds an index entry (a URL, a key and digests: a few
// hundred bytes); a larger one is no entry of ours.
const maxIndexEntry = 64 << 10

// Lock takes an exclusive flock on the lock file for id (see ID), waiting until
// it is free or ctx is done. The returned function releases it.
func (c *Cache) Lock(ctx context.Context, id string) (unlock func(), err error) {
	l, err := lockAt(ctx, filepath.Join(c.dir, "locks", id+".lock"), lockfile.Acquire)
	if err != nil {
		return nil, err
	}
	return func() { l.Unlock() }, nil
}

// lockGC takes gcLock, shared (a hit's mark, a commit) or exclusive (a
// removal), waiting until ctx is done.
func (c *Cache) lockGC(ctx context.Context, shared bool) (*lockfile.Lock, error) {
	if shared {
		return lockAt(ctx, c.gcLock(), lockfile.AcquireShared)
	}
	return lockAt(ctx, c.gcLock(), lockfile.Acquire)
}

// repairing is called with the path of a lock file that lockAt found no
// regular file, holding the lock of the locks folder, before it removes
// what is there: a test tries the repair from another process in that
// window.
var repairing = func(p string) {}

// lockAt takes the lock file p with take (lockfile.Acquire or
// AcquireShared), waiting until ctx is done.
func lockAt(ctx context.Context, p string, take func(context.Context, string, time.Duration) (*lockfile.Lock, error)) (*lockfile.Lock, error) {
	l, err := take(ctx, p, 10*time.Millisecond)
	if err != nil {
		// A folder or a symlink where the lock file goes holds no lock
		// (lock files are regular files, opened without following links):
		// a lock file takes its place, not a lasting error for every fetch
		// of this download (or, gcLock, of every download and hit).
		if fi, lerr := os.Lstat(p); lerr == nil && !fi.Mode().IsRegular() {
			if err = repairLock(ctx, p); err == nil {
				l, err = take(ctx, p, 10*time.Millisecond)
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	return l, nil
}

// repairLock removes what is at the lock file path p if it still is no
// regular file, holding the lock of the locks folder. Two processes that
// found it broken at once each removed it and made a lock file, the later
// one removing the file the earlier had made and locked, and both held
// the lock. One at a time, the later one finds the lock file made, and a
// lock file is never removed.
func repairLock(ctx context.Context, p string) error {
	dl, err := lockfile.AcquireDir(ctx, filepath.Dir(p), 10*time.Millisecond)
	if err != nil {
		return err
	}
	defer dl.Unlock()
	fi, err := os.Lstat(p)
	if err != nil || fi.Mode().IsRegular() {
		return nil // repaired by another process meanwhile
	}
	repairing(p)
	if err := os.RemoveAll(p); err != nil {
		return fmt.Errorf("%s is no lock file (%s) and cannot be removed: %w (remove it)", p, fi.Mode().Type(), err)
	}
	return nil
}
