package cache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/testkit/testenv"
	"github.com/updeb/updeb/pkg/digest"
	"github.com/updeb/updeb/pkg/lockfile"
)

func put(t *testing.T, c *Cache, data string) (string, digest.Set) {
	t.Helper()
	f, sums := written(t, c, data)
	p, err := c.Commit(context.Background(), f, sums[digest.SHA256])
	if err != nil {
		t.Fatal(err)
	}
	return p, sums
}

// written returns a temporary file of c holding data, as a download leaves
// it for Commit, and its digests.
func written(t *testing.T, c *Cache, data string) (*os.File, digest.Set) {
	t.Helper()
	f, err := c.TempFile()
	if err != nil {
		t.Fatal(err)
	}
	h := digest.NewHasher()
	if _, err := f.WriteString(data); err != nil {
		t.Fatal(err)
	}
	h.Write([]byte(data))
	return f, h.Sum()
}

func TestCommitVerifyEvict(t *testing.T) {
	c, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p, sums := put(t, c, "hello")
	sha := sums[digest.SHA256]
	if p != c.BlobPath(sha) {
		t.Fatalf("committed to %s, want %s", p, c.BlobPath(sha))
	}
	got, size, gs, err := c.Verify(sha, digest.SHA512)
	if err != nil || got != p || size != 5 || !maps.Equal(gs, sums) {
		t.Fatalf("Verify(sha512): %v %s %d %v, want %v", err, got, size, gs, sums)
	}
	// Only sha256 (the blob's name) unless more is asked for.
	if _, _, gs, err := c.Verify(sha); err != nil || !maps.Equal(gs, digest.Set{digest.SHA256: sha}) {
		t.Fatalf("Verify: %v %v, want only sha256", err, gs)
	}
	os.WriteFile(p, []byte("hellO"), 0o644)
	if _, _, _, err := c.Verify(sha); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("corrupt blob: err = %v, want ErrCorrupt", err)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("corrupt blob still there: %v", err)
	}
	if _, _, _, err := c.Verify(sha); !errors.Is(err, ErrMiss) {
		t.Errorf("after eviction: err = %v, want ErrMiss", err)
	}
	entries, _ := os.ReadDir(c.dir + "/tmp")
	if len(entries) != 0 {
		t.Errorf("tmp not empty: %v", entries)
	}
}

func TestIndex(t *testing.T) {
	c, _ := Open(t.TempDir())
	if _, err := c.Index("https://a/x", "k"); !errors.Is(err, ErrMiss) {
		t.Fatalf("empty index: %v", err)
	}
	e := Entry{URL: "https://a/x", Key: "k", SHA256: "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789", Size: 3}
	if err := c.SetIndex(e); err != nil {
		t.Fatal(err)
	}
	got, err := c.Index("https://a/x", "k")
	if err != nil || got != e {
		t.Fatalf("Index = %+v, %v; want %+v", got, err, e)
	}
	if _, err := c.Index("https://a/x", "other"); !errors.Is(err, ErrMiss) {
		t.Errorf("another key: %v, want ErrMiss", err)
	}
}

func TestLockExcludes(t *testing.T) {
	c, _ := Open(t.TempDir())
	var inside, maxInside atomic.Int32
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			unlock, err := c.Lock(context.Background(), ID("u", ""))
			if err != nil {
				t.Error(err)
				return
			}
			n := inside.Add(1)
			if n > maxInside.Load() {
				maxInside.Store(n)
			}
			time.Sleep(20 * time.Millisecond)
			inside.Add(-1)
			unlock()
		})
	}
	wg.Wait()
	if maxInside.Load() != 1 {
		t.Errorf("%d holders at once, want 1", maxInside.Load())
	}
	unlock, _ := c.Lock(context.Background(), ID("u", ""))
	defer unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := c.Lock(ctx, ID("u", "")); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("waiting on a held lock: %v, want the context's deadline", err)
	}
}

// A cache whose blob or index folder is linked to another file system than
// its tmp folder is refused when opened, naming the folder: every download
// was renamed from tmp into place at its end and failed there ("invalid
// cross-device link"), after the whole download, on every run.
func TestOpenRefusesFoldersOnTwoFileSystems(t *testing.T) {
	dir := t.TempDir()
	other := otherFileSystem(t, dir)
	for _, sub := range []string{"sha256", "index"} {
		t.Run(sub, func(t *testing.T) {
			cdir := filepath.Join(dir, sub)
			os.MkdirAll(cdir, 0o755)
			target, err := os.MkdirTemp(other, "cache-"+sub+"-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(target) })
			if err := os.Symlink(target, filepath.Join(cdir, sub)); err != nil {
				t.Fatal(err)
			}
			_, err = Open(cdir)
			if err == nil || !strings.Contains(err.Error(), filepath.Join(cdir, sub)+" is on another file system") {
				t.Errorf("Open: %v, want a refusal naming %s", err, sub)
			}
		})
	}
	// The whole cache linked to another disk is one file system.
	target, err := os.MkdirTemp(other, "cache-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(target) })
	link := filepath.Join(dir, "linked")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	c, err := Open(link)
	if err != nil {
		t.Fatal(err)
	}
	put(t, c, "hello")
}

// A blob or index folder bind-mounted (a second mount of the same file
// system, so the same device number) passed the check of one file system
// and every download failed at its end, renamed from tmp into place:
// "invalid cross-device link", exit 3, on every run.
func TestOpenRefusesABindMountedFolder(t *testing.T) {
	for _, sub := range []string{"sha256", "index"} {
		t.Run(sub, func(t *testing.T) {
			dir := t.TempDir()
			cdir, src := filepath.Join(dir, "cache"), filepath.Join(dir, "elsewhere")
			for _, d := range []string{filepath.Join(cdir, sub), src} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			testenv.BindMount(t, src, filepath.Join(cdir, sub))
			_, err := Open(cdir)
			if err == nil || !strings.Contains(err.Error(), filepath.Join(cdir, sub)+" is on another file system") {
				t.Errorf("Open: %v, want a refusal naming %s", err, sub)
			}
		})
	}
}

// otherFileSystem returns a folder on another file system than dir: the
// shared memory folder or the working folder (one of them is, on every
// Linux this runs on).
func otherFileSystem(t *testing.T, dir string) string {
	t.Helper()
	dev := func(p string) uint64 {
		fi, err := os.Stat(p)
		if err != nil {
			return 0
		}
		return uint64(fi.Sys().(*syscall.Stat_t).Dev) //nolint:unconvert // Dev is not uint64 on every platform
	}
	wd, _ := os.Getwd()
	for _, p := range []string{"/dev/shm", wd} {
		if d := dev(p); d != 0 && d != dev(dir) {
			return p
		}
	}
	t.Fatalf("no folder on another file system than %s (tried /dev/shm and %s)", dir, wd)
	return ""
}

// Two processes (or two downloads of other URLs with the same bytes) find
// one blob corrupt: the first evicts it and commits a good copy while the
// second still hashes the corrupt one. The second's eviction leaves the good
// copy: it removed it, and the first's Result named a file that was gone.
func TestEvictionSparesANewCopy(t *testing.T) {
	c, _ := Open(t.TempDir())
	p, sums := put(t, c, "hello")
	if err := os.WriteFile(p, []byte("hellO"), 0o644); err != nil { // corrupt, in place
		t.Fatal(err)
	}
	replaced := false
	_, _, _, err := c.VerifyReporting(context.Background(), sums[digest.SHA256], func(done, total int64) {
		if !replaced { // the other process: evicts, downloads, commits
			replaced = true
			os.Remove(p)
			put(t, c, "hello")
		}
	})
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("err = %v, want ErrCorrupt for the copy hashed", err)
	}
	if got, err := os.ReadFile(p); err != nil || string(got) != "hello" {
		t.Errorf("the good copy committed meanwhile: %q, %v; want it kept", got, err)
	}
}

// A read finds a blob corrupt (or no regular file: a FIFO) and evicts it,
// while another download of the same bytes (another URL, or a process
// that evicted it first) commits a good copy: one committed between the
// eviction's check that the path still names what was found bad and its
// removal was removed, and the download that committed it handed a path to
// nothing. A commit waits for the eviction (here it is refused at once,
// its context done), then puts its copy in place, where it stays.
func TestEvictionWaitsForNoCommit(t *testing.T) {
	for _, bad := range []string{"corrupt", "fifo"} {
		t.Run(bad, func(t *testing.T) {
			c, _ := Open(t.TempDir())
			p, sums := put(t, c, "hello")
			sha := sums[digest.SHA256]
			os.Remove(p)
			if bad == "fifo" {
				if err := syscall.Mkfifo(p, 0o644); err != nil {
					t.Fatal(err)
				}
			} else if err := os.WriteFile(p, []byte("hellO"), 0o644); err != nil {
				t.Fatal(err)
			}
			w := commitWhenRemoving(t, c, p, "hello")
			if _, _, _, err := c.Verify(sha); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("err = %v, want ErrCorrupt", err)
			}
			if !w.ran {
				t.Fatal("the read never decided to evict the bad blob")
			}
			if w.err == nil {
				got, err := os.ReadFile(p)
				t.Fatalf("a commit went through between the eviction's check and its removal: the good copy: %q, %v", got, err)
			}
			if !errors.Is(w.err, lockfile.ErrHeld) {
				t.Fatalf("the commit beside the eviction: %v, want it to wait for the lock", w.err)
			}
			// The commit once the eviction let go of the lock: its copy stays.
			put(t, c, "hello")
			if got, _, _, err := c.Verify(sha); err != nil || got != p {
				t.Errorf("the copy committed after the eviction: %s, %v", got, err)
			}
		})
	}
}

// windowCommit is a commit tried in the window between the cache's decision
// to remove a blob and the removal (commitWhenRemoving).
type windowCommit struct {
	ran bool
	err error
}

// commitWhenRemoving tries, once, a commit of data over the blob p at the
// moment the cache has decided to remove p, with its context done: a
// commit that would wait for the removal is refused at once.
func commitWhenRemoving(t *testing.T, c *Cache, p, data string) *windowCommit {
	w := &windowCommit{}
	removing = func(r string) {
		if r != p || w.ran {
			return
		}
		w.ran = true
		f, sums := written(t, c, data)
		done, cancel := context.WithCancel(context.Background())
		cancel()
		_, w.err = c.Commit(done, f, sums[digest.SHA256])
	}
	t.Cleanup(func() { removing = func(string) {} })
	return w
}

// partialWith returns the paths of the partial download id of c, holding
// data as an interrupted run leaves it, and of its resume record (not made).
func partialWith(t *testing.T, c *Cache, id, data string) (part, meta string) {
	t.Helper()
	f, meta, err := c.Partial(id)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(data); err != nil {
		t.Fatal(err)
	}
	return f.Name(), meta
}

// Sweep found a partial download old and, before it took its lock, a fetch
// took the lock, resumed the partial (its bytes grew; a resume by a 206
// leaves the resume record as it was) and let go of it (the network failed
// again: the bytes are kept for the next run). Sweep removed the partial
// just resumed, or its resume record, and the next run downloaded it all
// again. What sweep decides from the listing is checked again under the
// lock, and a partial is as young as the newer of its file and its record.
func TestSweepSparesAPartialResumedMeanwhile(t *testing.T) {
	c, _ := Open(t.TempDir())
	id := ID("https://h/big.tgz", "")
	part, meta := partialWith(t, c, id, "first half ")
	if err := os.WriteFile(meta, []byte(`{"target":"https://h/big.tgz","validator":"\"v1\"","total":22}`), 0o644); err != nil {
		t.Fatal(err)
	}
	age(t, part, 2*day)
	age(t, meta, 2*day)
	resumed := false
	sweeping = func(p string) {
		if p != part || resumed {
			return
		}
		resumed = true // the other process: resumes, and is stopped again
		unlock, err := c.Lock(context.Background(), id)
		if err != nil {
			t.Error(err)
			return
		}
		defer unlock()
		f, _, err := c.Partial(id)
		if err == nil {
			_, err = f.WriteAt([]byte("second half"), int64(len("first half ")))
			f.Close()
		}
		if err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(func() { sweeping = func(string) {} })
	if n := c.Sweep(day); n != 0 {
		t.Errorf("Sweep removed %d files, want none", n)
	}
	if !resumed {
		t.Fatal("sweep never found the partial old")
	}
	if got, err := os.ReadFile(part); err != nil || string(got) != "first half second half" {
		t.Errorf("the partial resumed meanwhile: %q, %v", got, err)
	}
	if _, err := os.Stat(meta); err != nil {
		t.Errorf("the resume record of the partial resumed meanwhile: %v", err)
	}
}

// Two processes found a folder where a download's lock file goes, and both
// replaced it: the first made the lock file and took the lock, and the
// second, which had found the folder before, removed that lock file and
// took the lock on one of its own, and both downloaded into the same
// partial file at once. A repair waits for any other (here it is refused
// at once, its context done), which finds the lock file made and takes it.
func TestLockRepairedOnce(t *testing.T) {
	for _, broken := range []string{"folder", "symlink"} {
		t.Run(broken, func(t *testing.T) {
			c, _ := Open(t.TempDir())
			id := ID("https://h/a.tgz", "")
			p := filepath.Join(c.dir, "locks", id+".lock")
			var err error
			if broken == "folder" {
				err = os.MkdirAll(filepath.Join(p, "sub"), 0o755)
			} else {
				err = os.Symlink(filepath.Join(c.dir, "elsewhere"), p)
			}
			if err != nil {
				t.Fatal(err)
			}
			var other error
			ran := false
			repairing = func(string) {
				if ran {
					return
				}
				ran = true // the other process: finds it broken too, repairs it, holds it
				done, cancel := context.WithCancel(context.Background())
				cancel()
				var unlock func()
				if unlock, other = c.Lock(done, id); other == nil {
					t.Cleanup(unlock)
				}
			}
			t.Cleanup(func() { repairing = func(string) {} })
			unlock, err := c.Lock(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			if !ran {
				t.Fatal("the lock was never repaired")
			}
			if other == nil {
				t.Fatal("two processes hold the lock at once")
			}
			if !errors.Is(other, lockfile.ErrHeld) {
				t.Fatalf("the repair beside another: %v, want it to wait for the other", other)
			}
			done, cancel := context.WithCancel(context.Background())
			cancel()
			if _, err := c.Lock(done, id); !errors.Is(err, lockfile.ErrHeld) {
				t.Fatalf("the lock once repaired and held: %v, want it held", err)
			}
			unlock()
			if unlock, err := c.Lock(done, id); err != nil {
				t.Fatalf("the lock once let go: %v", err)
			} else {
				unlock()
			}
		})
	}
}

// Two commits of blobs whose names start alike found a file where their
// fan-out folder goes (sha256/ab: a stray copy): the first removed it, made
// the folder and put its blob there, and the second, which had found the
// file before, removed the folder with the blob in it (and every other
// blob there), and the first download was handed a path to nothing. The
// file is removed as no folder can be, and the folder made stays.
func TestFanFolderRepairedOnce(t *testing.T) {
	c, _ := Open(t.TempDir())
	first, sums := written(t, c, "first")
	sha := sums[digest.SHA256]
	var second string
	for i := 0; ; i++ { // other bytes whose sha256 starts alike
		second = fmt.Sprint("second ", i)
		h := sha256.Sum256([]byte(second))
		if hex.EncodeToString(h[:])[:2] == sha[:2] {
			break
		}
	}
	fan := filepath.Dir(c.BlobPath(sha))
	os.Remove(fan)
	if err := os.WriteFile(fan, []byte("a stray file"), 0o644); err != nil {
		t.Fatal(err)
	}
	var other string
	ran := false
	removing = func(p string) {
		if p != fan || ran {
			return
		}
		ran = true // the other download: finds the file too, and commits first
		other, _ = put(t, c, second)
	}
	t.Cleanup(func() { removing = func(string) {} })
	p, err := c.Commit(context.Background(), first, sha)
	if err != nil {
		t.Fatal(err)
	}
	if !ran {
		t.Fatal("the commit never found the file in the folder's place")
	}
	for blob, data := range map[string]string{p: "first", other: second} {
		if got, err := os.ReadFile(blob); err != nil || string(got) != data {
			t.Errorf("%s: %q, %v; want %q", blob, got, err, data)
		}
	}
}

// Two downloads of the same bytes (two URLs, or a pinned one beside
// another) found a folder where their blob goes: the first removed it and
// put its copy there, and the second, which had found the folder before,
// removed that copy: the first download's path named nothing until the
// second's rename. The folder is removed as a corrupt blob is, holding
// gcLock exclusive: a commit beside it waits (here it is refused at once,
// its context done), then puts its copy in place.
func TestFolderAtBlobPathRemovedOnce(t *testing.T) {
	c, _ := Open(t.TempDir())
	f, sums := written(t, c, "hello")
	p := c.BlobPath(sums[digest.SHA256])
	if err := os.MkdirAll(filepath.Join(p, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	w := commitWhenRemoving(t, c, p, "hello")
	if got, err := c.Commit(context.Background(), f, sums[digest.SHA256]); err != nil || got != p {
		t.Fatalf("Commit: %s, %v", got, err)
	}
	if !w.ran {
		t.Fatal("the commit never decided to remove the folder")
	}
	if w.err == nil {
		t.Fatal("a commit went through between the decision to remove the folder and its removal")
	}
	if !errors.Is(w.err, lockfile.ErrHeld) {
		t.Fatalf("the commit beside the removal: %v, want it to wait for the lock", w.err)
	}
	if got, _, _, err := c.Verify(sums[digest.SHA256]); err != nil || got != p {
		t.Errorf("the blob committed in the folder's place: %s, %v", got, err)
	}
}

// A partial download that could not be opened for a reason of the process
// (no file descriptor left: many downloads at once under a low ulimit -n)
// was taken for no file of the cache's and removed, with the bytes an
// earlier run had downloaded. Only what is no regular file is replaced.
func TestPartialKeptWhenItCannotBeOpened(t *testing.T) {
	c, _ := Open(t.TempDir())
	id := ID("https://h/big.tgz", "")
	partialWith(t, c, id, "bytes of an earlier run")
	next, err := os.Open(os.DevNull) // the lowest descriptor free
	if err != nil {
		t.Fatal(err)
	}
	free := next.Fd()
	next.Close()
	var was syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &was); err != nil {
		t.Fatal(err)
	}
	low := was
	low.Cur = uint64(free) // no new descriptor
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	_, _, err = c.Partial(id)
	if rerr := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &was); rerr != nil {
		t.Fatal(rerr)
	}
	if !errors.Is(err, syscall.EMFILE) {
		t.Fatalf("Partial with no file descriptor left: %v, want EMFILE", err)
	}
	if got, err := os.ReadFile(filepath.Join(c.dir, "tmp", partPrefix+id)); err != nil || string(got) != "bytes of an earlier run" {
		t.Errorf("the partial download: %q, %v; want it kept", got, err)
	}
}
