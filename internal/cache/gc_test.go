package cache

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/updeb/updeb/pkg/digest"
	"github.com/updeb/updeb/pkg/lockfile"
)

const day = 24 * time.Hour

// age sets p's modification time to d ago, as if no run had used it since.
func age(t *testing.T, p string, d time.Duration) {
	t.Helper()
	then := time.Now().Add(-d)
	if err := os.Chtimes(p, then, then); err != nil {
		t.Fatal(err)
	}
}

// rel is p relative to the cache folder, as GCResult lists it.
func rel(t *testing.T, c *Cache, p string) string {
	t.Helper()
	r, err := filepath.Rel(c.dir, p)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.ToSlash(r)
}

func gc(t *testing.T, c *Cache, o GCOptions) *GCResult {
	t.Helper()
	res, err := GC(context.Background(), c.dir, o)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// GC removes the index entries and blobs no run used within MaxAge, and what
// interrupted runs left in tmp, and nothing else: a blob a kept index entry
// names stays however old, and so does an entry whose download is running
// (its lock held), with its blob. --dry-run lists the same and removes
// nothing.
func TestGCRemovesWhatNoRunUsed(t *testing.T) {
	c, _ := Open(t.TempDir())
	entry := func(url, data string, d time.Duration) (index, blob string) {
		blob, sums := put(t, c, data)
		e := Entry{URL: url, SHA256: sums[digest.SHA256], Size: int64(len(data))}
		if err := c.SetIndex(e); err != nil {
			t.Fatal(err)
		}
		index = c.indexPath(ID(url, ""))
		age(t, index, d)
		return index, blob
	}
	oldBlob, _ := put(t, c, "unused for 40 days")
	age(t, oldBlob, 40*day)
	youngBlob, _ := put(t, c, "used yesterday")
	age(t, youngBlob, day)
	youngIndex, namedBlob := entry("https://h/young", "named by an entry used today", 0)
	age(t, namedBlob, 90*day)
	oldIndex, itsBlob := entry("https://h/old", "named by an old entry", 40*day)
	age(t, itsBlob, 40*day)
	busyIndex, busyBlob := entry("https://h/busy", "being fetched", 40*day)
	age(t, busyBlob, 40*day)
	notOurs := filepath.Join(filepath.Dir(oldBlob), "README")
	os.WriteFile(notOurs, []byte("not a blob"), 0o644)
	age(t, notOurs, 400*day)
	partial, _, err := c.Partial(ID("https://h/killed", ""))
	if err != nil {
		t.Fatal(err)
	}
	partial.WriteString("half a download")
	partial.Close()
	age(t, partial.Name(), 2*day)
	resumable, _, _ := c.Partial(ID("https://h/resumable", ""))
	resumable.Close()

	unlock, err := c.Lock(context.Background(), ID("https://h/busy", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	// index entries first, then blobs, then tmp: each in name order
	blobs := []string{rel(t, c, itsBlob), rel(t, c, oldBlob)}
	slices.Sort(blobs)
	want := slices.Concat([]string{rel(t, c, oldIndex)}, blobs, []string{rel(t, c, partial.Name())})
	size := func(ps ...string) (n int64) {
		for _, p := range ps {
			fi, _ := os.Stat(p)
			n += fi.Size()
		}
		return n
	}
	wantBytes := size(oldIndex, itsBlob, oldBlob, partial.Name())
	kept := []string{youngBlob, youngIndex, namedBlob, busyIndex, busyBlob, notOurs, resumable.Name()}

	o := GCOptions{MaxAge: 30 * day, PartialAge: day, DryRun: true}
	dry := gc(t, c, o)
	if !slices.Equal(dry.Files, want) || dry.Bytes != wantBytes || !dry.DryRun {
		t.Errorf("dry run: %v (%d bytes), want %v (%d bytes)", dry.Files, dry.Bytes, want, wantBytes)
	}
	for _, p := range want {
		if _, err := os.Lstat(filepath.Join(c.dir, p)); err != nil {
			t.Errorf("dry run removed %s", p)
		}
	}
	o.DryRun = false
	res := gc(t, c, o)
	if !slices.Equal(res.Files, want) || res.Bytes != wantBytes || res.DryRun {
		t.Errorf("gc: %v (%d bytes), want %v (%d bytes)", res.Files, res.Bytes, want, wantBytes)
	}
	for _, p := range want {
		if _, err := os.Lstat(filepath.Join(c.dir, p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s not removed: %v", p, err)
		}
	}
	for _, p := range kept {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s removed: %v", rel(t, c, p), err)
		}
	}
	if _, err := c.Index("https://h/young", ""); err != nil {
		t.Errorf("the kept entry: %v", err)
	}
	if again := gc(t, c, o); len(again.Files) != 0 || again.Bytes != 0 {
		t.Errorf("a second gc removed %v", again.Files)
	}
}

// A hit marks what it read as used: a source built every day keeps its
// index entry and blob however long ago they were downloaded.
func TestHitMarksUsed(t *testing.T) {
	c, _ := Open(t.TempDir())
	blob, sums := put(t, c, "built every day")
	e := Entry{URL: "https://h/daily", SHA256: sums[digest.SHA256], Size: 15}
	if err := c.SetIndex(e); err != nil {
		t.Fatal(err)
	}
	index := c.indexPath(ID(e.URL, ""))
	age(t, blob, 400*day)
	age(t, index, 400*day)
	if _, err := c.Index(e.URL, ""); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := c.Verify(e.SHA256); err != nil {
		t.Fatal(err)
	}
	if res := gc(t, c, GCOptions{MaxAge: 30 * day}); len(res.Files) != 0 {
		t.Errorf("gc removed what a hit just read: %v", res.Files)
	}
}

// gc removing a blob while a reader hashes it: the reader's hash still
// matches (its open file), but the path it would return names nothing
// now. It is a miss (the fetcher downloads again), never a path to nothing.
func TestBlobRemovedUnderReaderIsAMiss(t *testing.T) {
	c, _ := Open(t.TempDir())
	blob, sums := put(t, c, "read while gc runs")
	age(t, blob, 40*day)
	var res *GCResult
	_, _, _, err := c.VerifyReporting(context.Background(), sums[digest.SHA256], func(done, total int64) {
		if res == nil {
			res = gc(t, c, GCOptions{MaxAge: 30 * day})
		}
	})
	if res == nil || !slices.Equal(res.Files, []string{rel(t, c, blob)}) {
		t.Fatalf("gc beside the reader removed %v, want the blob", res)
	}
	if !errors.Is(err, ErrMiss) {
		t.Errorf("Verify of a blob removed under it: %v, want ErrMiss", err)
	}
}

// GC makes no cache and removes nothing through a symlink: a folder that
// does not exist, one that is no cache, and a cache whose sha256 folder is
// a symlink are refused; a symlink inside, named as a blob or as a fan-out
// folder, is left alone with what it points at.
func TestGCRefusesWhatIsNoCache(t *testing.T) {
	dir := t.TempDir()
	if _, err := GC(context.Background(), filepath.Join(dir, "missing"), GCOptions{}); !errors.Is(err, ErrNoCache) {
		t.Errorf("a missing folder: %v, want ErrNoCache", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "missing")); err == nil {
		t.Error("gc made the missing folder")
	}
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	if _, err := GC(context.Background(), file, GCOptions{}); !errors.Is(err, ErrNotCache) {
		t.Errorf("a file: %v, want ErrNotCache", err)
	}
	home := filepath.Join(dir, "home")
	os.MkdirAll(filepath.Join(home, "sha256"), 0o755)
	if _, err := GC(context.Background(), home, GCOptions{}); !errors.Is(err, ErrNotCache) || !strings.Contains(err.Error(), home+" is no updeb cache: it has no index folder") {
		t.Errorf("a folder that is no cache: %v", err)
	}

	// Old files outside, named as blobs and index entries are.
	outside := filepath.Join(dir, "outside")
	sha := strings.Repeat("ab", 32)
	for _, p := range []string{filepath.Join(outside, "ab", sha), filepath.Join(outside, "ab", sha+".json")} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("someone else's"), 0o644)
		age(t, p, 400*day)
	}
	linked := filepath.Join(dir, "linked")
	os.MkdirAll(filepath.Join(linked, "index"), 0o755)
	os.Symlink(outside, filepath.Join(linked, "sha256"))
	if _, err := GC(context.Background(), linked, GCOptions{}); !errors.Is(err, ErrNotCache) || !strings.Contains(err.Error(), filepath.Join(linked, "sha256")+" is no folder") {
		t.Errorf("a symlinked sha256 folder: %v", err)
	}

	c, _ := Open(filepath.Join(dir, "cache"))
	blobLink := c.BlobPath(sha)
	os.MkdirAll(filepath.Dir(blobLink), 0o755)
	os.Symlink(filepath.Join(outside, "ab", sha), blobLink)
	os.Symlink(filepath.Join(outside, "ab"), filepath.Join(c.dir, "index", "ab"))
	if res := gc(t, c, GCOptions{}); len(res.Files) != 0 {
		t.Errorf("gc removed %v", res.Files)
	}
	for _, p := range []string{blobLink, filepath.Join(outside, "ab", sha), filepath.Join(outside, "ab", sha+".json")} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// A gc killed (kill -9) in the middle, here after it removed the old index
// entries and while it waits to remove their blobs (a hit holds gcLock),
// leaves a cache the next runs use: no lock stays held, the entries it
// removed are misses, nothing is left in tmp, and the next gc removes the
// blobs.
func TestGCKilled(t *testing.T) {
	if dir := os.Getenv("CACHE_GC_HELPER"); dir != "" {
		GC(context.Background(), dir, GCOptions{MaxAge: 30 * day})
		os.Exit(0)
	}
	c, _ := Open(t.TempDir())
	var urls, blobs []string
	for _, u := range []string{"https://h/a", "https://h/b", "https://h/c"} {
		blob, sums := put(t, c, "old "+u)
		if err := c.SetIndex(Entry{URL: u, SHA256: sums[digest.SHA256], Size: int64(len(u) + 4)}); err != nil {
			t.Fatal(err)
		}
		age(t, blob, 40*day)
		age(t, c.indexPath(ID(u, "")), 40*day)
		urls, blobs = append(urls, u), append(blobs, rel(t, c, blob))
	}
	hit, err := lockfile.AcquireShared(context.Background(), c.gcLock(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer hit.Unlock()
	cmd := exec.Command(os.Args[0], "-test.run", "^TestGCKilled$")
	cmd.Env = append(os.Environ(), "CACHE_GC_HELPER="+c.dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	gone := func() bool {
		for _, u := range urls {
			if _, err := os.Lstat(c.indexPath(ID(u, ""))); err == nil {
				return false
			}
		}
		return true
	}
	for i := 0; !gone(); i++ { // then gc waits for gcLock, to remove the blobs
		if i == 3000 {
			cmd.Process.Kill()
			t.Fatal("the gc removed the old index entries not within 30 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	hit.Unlock()

	for _, u := range urls {
		if _, err := c.Index(u, ""); !errors.Is(err, ErrMiss) {
			t.Errorf("%s: the entry the killed gc removed: %v, want ErrMiss", u, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		unlock, err := c.Lock(ctx, ID(u, ""))
		cancel()
		if err != nil {
			t.Fatalf("%s: the lock after a killed gc: %v", u, err)
		}
		unlock()
	}
	res := gc(t, c, GCOptions{MaxAge: 30 * day})
	slices.Sort(blobs)
	if !slices.Equal(res.Files, blobs) {
		t.Errorf("the gc after the killed one removed %v, want the blobs %v", res.Files, blobs)
	}
	if ents, _ := os.ReadDir(filepath.Join(c.dir, "tmp")); len(ents) != 0 {
		t.Errorf("tmp holds %v", ents)
	}
}

// A fetch commits a blob in the moment between gc finding the copy there
// old (no run used it for MaxAge: a pinned download is looked up by its
// digest, and its index entry went at an earlier gc) and gc removing it:
// gc removed the new copy, and the build handed its path failed to read
// it. A commit waits for that removal (here it is refused at once, its
// context done), then puts its copy in place, where it stays.
func TestGCSparesABlobCommittedMeanwhile(t *testing.T) {
	c, _ := Open(t.TempDir())
	const data = "downloaded again while gc runs"
	blob, sums := put(t, c, data)
	sha := sums[digest.SHA256]
	age(t, blob, 40*day)
	w := commitWhenRemoving(t, c, blob, data)
	res := gc(t, c, GCOptions{MaxAge: 30 * day})
	if !w.ran {
		t.Fatalf("gc never decided to remove the old blob: it removed %v", res.Files)
	}
	if w.err == nil {
		_, err := os.Stat(blob)
		t.Fatalf("a commit went through between gc's decision and its removal, and gc removed %v: the committed blob: %v", res.Files, err)
	}
	if !errors.Is(w.err, lockfile.ErrHeld) {
		t.Fatalf("the commit beside gc's removal: %v, want it to wait for the lock", w.err)
	}
	if !slices.Equal(res.Files, []string{rel(t, c, blob)}) {
		t.Errorf("gc removed %v, want the old copy", res.Files)
	}
	if ents, _ := os.ReadDir(filepath.Join(c.dir, "tmp")); len(ents) != 0 {
		t.Errorf("the refused commit left %v in tmp", ents)
	}
	// The commit once gc let go of the lock: its copy stays.
	if p, _ := put(t, c, data); p != blob {
		t.Fatalf("committed to %s, want %s", p, blob)
	}
	if res := gc(t, c, GCOptions{MaxAge: 30 * day}); len(res.Files) != 0 {
		t.Errorf("gc removed the copy just committed: %v", res.Files)
	}
	if _, _, _, err := c.Verify(sha); err != nil {
		t.Errorf("the copy committed after gc: %v", err)
	}
}

// A download is committed as the temporary file it was written to, with
// the time of its last write: one resumed from the partial file a killed
// run left (whose bytes the server said were all there) was a blob gc took
// for unused at once, and removed while the build read it if no index
// entry named it yet. A commit marks the blob as used, as a hit does.
func TestCommitMarksUsed(t *testing.T) {
	c, _ := Open(t.TempDir())
	f, sums := written(t, c, "finished by a run killed before its commit")
	age(t, f.Name(), 2*day)
	p, err := c.Commit(context.Background(), f, sums[digest.SHA256])
	if err != nil {
		t.Fatal(err)
	}
	if res := gc(t, c, GCOptions{MaxAge: day}); len(res.Files) != 0 {
		t.Errorf("gc removed the blob just committed: %v", res.Files)
	}
	if _, err := os.Stat(p); err != nil {
		t.Error(err)
	}
}

// Many fetches commit blobs gc finds old, or hit them, while two gcs run:
// every path a commit or a hit handed out is there afterwards, whatever gc
// removed meanwhile (a hit on a blob gc took is a miss, and downloads it
// again).
func TestGCBesideManyFetches(t *testing.T) {
	c, _ := Open(t.TempDir())
	const n = 48
	shas := make([]string, n)
	for i := range n {
		p, sums := put(t, c, fmt.Sprint("blob ", i))
		shas[i] = sums[digest.SHA256]
		age(t, p, 40*day)
	}
	errs := make(chan error, n+2)
	stop := make(chan struct{})
	var gcs sync.WaitGroup
	for range 2 {
		gcs.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := GC(context.Background(), c.dir, GCOptions{MaxAge: 30 * day}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	handed := make([]string, n)
	var fetches sync.WaitGroup
	for i := range n {
		fetches.Go(func() {
			if i%2 == 1 { // a hit, unless gc took the blob first
				p, _, _, err := c.Verify(shas[i])
				if err == nil {
					handed[i] = p
					return
				}
				if !errors.Is(err, ErrMiss) {
					errs <- err
					return
				}
			}
			f, err := c.TempFile()
			if err == nil {
				_, err = f.WriteString(fmt.Sprint("blob ", i))
			}
			if err == nil {
				handed[i], err = c.Commit(context.Background(), f, shas[i])
			}
			if err != nil {
				errs <- err
			}
		})
	}
	fetches.Wait()
	close(stop)
	gcs.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i, p := range handed {
		if got, err := os.ReadFile(p); err != nil || string(got) != fmt.Sprint("blob ", i) {
			t.Errorf("blob %d, handed out as %s: %q, %v", i, p, got, err)
		}
	}
}

// A folder or a symlink where an old index entry's lock file goes (a fetch
// of that URL replaces it, see lockAt) made gc fail whole, every time,
// until a fetch of that URL ran: gc replaces it as a fetch does (and gc
// --dry-run, which removes nothing, leaves it).
func TestGCRepairsALockFile(t *testing.T) {
	for _, broken := range []string{"folder", "symlink"} {
		t.Run(broken, func(t *testing.T) {
			c, _ := Open(t.TempDir())
			_, sums := put(t, c, "old")
			const u = "https://h/old.tgz"
			if err := c.SetIndex(Entry{URL: u, SHA256: sums[digest.SHA256], Size: 3}); err != nil {
				t.Fatal(err)
			}
			index := c.indexPath(ID(u, ""))
			age(t, index, 40*day)
			lock := filepath.Join(c.dir, "locks", ID(u, "")+".lock")
			var err error
			if broken == "folder" {
				err = os.Mkdir(lock, 0o755)
			} else {
				err = os.Symlink(filepath.Join(c.dir, "elsewhere"), lock)
			}
			if err != nil {
				t.Fatal(err)
			}
			res := gc(t, c, GCOptions{MaxAge: 30 * day, DryRun: true})
			if !slices.Contains(res.Files, rel(t, c, index)) {
				t.Errorf("gc --dry-run lists %v, want the old index entry", res.Files)
			}
			if fi, err := os.Lstat(lock); err != nil || fi.Mode().IsRegular() {
				t.Errorf("what is in the lock file's place after gc --dry-run: %v, %v; want it left", fi, err)
			}
			res = gc(t, c, GCOptions{MaxAge: 30 * day})
			if !slices.Contains(res.Files, rel(t, c, index)) {
				t.Errorf("gc removed %v, want the old index entry", res.Files)
			}
			if fi, err := os.Lstat(lock); err != nil || !fi.Mode().IsRegular() {
				t.Errorf("the lock file after gc: %v, %v", fi, err)
			}
		})
	}
}
