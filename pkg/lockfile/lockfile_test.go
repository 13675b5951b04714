package lockfile

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/testkit/testenv"
)

func TestExclusiveAndReleasedOnExit(t *testing.T) {
	// a lock file, and a folder's own lock (which puts nothing in it)
	dir, file := t.TempDir(), filepath.Join(t.TempDir(), "lock")
	for name, acquire := range map[string]func(context.Context) (*Lock, error){
		"file":   func(ctx context.Context) (*Lock, error) { return Acquire(ctx, file, 5*time.Millisecond) },
		"folder": func(ctx context.Context) (*Lock, error) { return AcquireDir(ctx, dir, 5*time.Millisecond) },
	} {
		l, err := acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		if _, err := acquire(ctx); err == nil || !strings.Contains(err.Error(), "another updeb process") {
			t.Fatalf("%s: second lock = %v, want a timeout naming the holder", name, err)
		}
		cancel()
		l.Unlock()
		l2, err := acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		l2.Unlock()
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("the locked folder holds %v", ents)
	}
	if _, err := AcquireDir(context.Background(), filepath.Join(dir, "missing"), 0); err == nil {
		t.Error("AcquireDir of a missing folder: no error")
	}
}

// A process killed with SIGKILL while holding the lock must not leave it held.
func TestLockDiesWithProcess(t *testing.T) {
	if os.Getenv("LOCKFILE_HOLD") != "" {
		Acquire(context.Background(), os.Getenv("LOCKFILE_HOLD"), 0)
		os.Stdout.WriteString("held\n")
		time.Sleep(time.Minute)
		return
	}
	p := filepath.Join(t.TempDir(), "lock")
	cmd := exec.Command(os.Args[0], "-test.run", "^TestLockDiesWithProcess$")
	cmd.Env = append(os.Environ(), "LOCKFILE_HOLD="+p)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	out.Read(buf)
	cmd.Process.Kill()
	cmd.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	l, err := Acquire(ctx, p, 5*time.Millisecond)
	if err != nil {
		t.Fatalf("lock still held after the holder was killed: %v", err)
	}
	l.Unlock()
}

// holdTempDir, in a helper process, makes a TempDir in $LOCKFILE_TEMPDIR with
// a file in it, prints its path and waits to be killed.
func holdTempDir(parent string) {
	d, err := TempDir(parent, "x-", nil)
	if err != nil {
		os.Stdout.WriteString("error: " + err.Error() + "\n")
		os.Exit(1)
	}
	os.WriteFile(filepath.Join(d.Path, "build.deb"), []byte("work"), 0o644)
	os.Stdout.WriteString(d.Path + "\n")
	time.Sleep(time.Minute)
	os.Exit(0)
}

// startHolder starts a helper process holding a TempDir in parent and
// returns it with the folder's path.
func startHolder(t *testing.T, parent string) (*exec.Cmd, string) {
	t.Helper()
	cmd, path := testenv.StartHelper(t, "TestTempDirSweepsOnlyTheDead", "LOCKFILE_TEMPDIR="+parent)
	if !strings.HasPrefix(path, parent) {
		t.Fatalf("helper: %q", path)
	}
	return cmd, path
}

// TestTempDirSweepsOnlyTheDead: the folder of a process killed with SIGKILL
// is removed by the next TempDir of its prefix; the folders of a running
// process and of this one are not.
func TestTempDirSweepsOnlyTheDead(t *testing.T) {
	if p := os.Getenv("LOCKFILE_TEMPDIR"); p != "" {
		holdTempDir(p)
	}
	parent := t.TempDir()
	killed, dead := startHolder(t, parent)
	_, alive := startHolder(t, parent)
	mine, err := TempDir(parent, "x-", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(mine.Swept) != 0 {
		t.Fatalf("swept %v while every maker runs", mine.Swept)
	}
	killed.Process.Kill()
	killed.Wait()
	d, err := TempDir(parent, "x-", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Swept, []string{dead}) {
		t.Errorf("swept %v, want the killed process's %s alone", d.Swept, dead)
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("the killed process's folder is still there: %v", err)
	}
	for _, p := range []string{filepath.Join(alive, "build.deb"), mine.Path} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("a live folder was touched: %v", err)
		}
	}
	// Sweep's reap sees the dead process's folder whole, before it goes.
	killed2, dead2 := startHolder(t, parent)
	killed2.Process.Kill()
	killed2.Wait()
	var reaped []string
	swept := Sweep(parent, "x-", func(dir string) {
		if _, err := os.Stat(filepath.Join(dir, "build.deb")); err == nil {
			reaped = append(reaped, dir)
		}
	})
	if !slices.Equal(swept, []string{dead2}) || !slices.Equal(reaped, swept) {
		t.Errorf("swept %v, reaped %v: want the second killed process's %s", swept, reaped, dead2)
	}
	if err := d.Remove(); err != nil {
		t.Fatal(err)
	}
	if err := d.Remove(); err != nil {
		t.Errorf("second Remove: %v", err)
	}
	if _, err := os.Stat(d.Path); !os.IsNotExist(err) {
		t.Errorf("Remove left %s: %v", d.Path, err)
	}
}

// TestSweepLeavesOthersAlone: what a sweep must not remove (a link, a file, a
// folder without a lock that holds work, a lockless folder younger than a
// minute, another prefix) stays; a lockless folder holding nothing but a lock
// being made, older than a minute, goes.
func TestSweepLeavesOthersAlone(t *testing.T) {
	parent := t.TempDir()
	elsewhere := t.TempDir()
	mk := func(dir string, files ...string) string {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	old := time.Now().Add(-2 * orphanAge)
	age := func(p string) {
		t.Helper()
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	target := mk(filepath.Join(elsewhere, "target"), dirLock, "precious")
	if err := os.Symlink(target, filepath.Join(parent, "x-link")); err != nil {
		t.Fatal(err)
	}
	age(mk(filepath.Join(parent, "x-older-updeb"), "build-1"))
	mk(filepath.Join(parent, "x-being-made"), dirLockNew)
	age(mk(filepath.Join(parent, "x-killed-while-made"), dirLockNew))
	age(mk(filepath.Join(parent, "x-killed-at-once")))
	mk(filepath.Join(parent, "y-other"), dirLock)
	if err := os.WriteFile(filepath.Join(parent, "x-file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got := Sweep(parent, "x-", nil)
	want := []string{filepath.Join(parent, "x-killed-at-once"), filepath.Join(parent, "x-killed-while-made")}
	if !slices.Equal(got, want) {
		t.Errorf("swept %v, want %v", got, want)
	}
	left, _ := os.ReadDir(parent)
	var names []string
	for _, e := range left {
		names = append(names, e.Name())
	}
	if w := []string{"x-being-made", "x-file", "x-link", "x-older-updeb", "y-other"}; !slices.Equal(names, w) {
		t.Errorf("left %v, want %v", names, w)
	}
	if _, err := os.Stat(filepath.Join(target, "precious")); err != nil {
		t.Errorf("the link's target was touched: %v", err)
	}
}

// TestEmptyPrefixSweepsNothing: with no prefix every folder of parent would
// be a candidate, and another program's folder whose unheld lock file is
// called ".lock", or any empty folder over a minute old, would be removed
// with its contents. TempDir refuses an empty prefix; Sweep sweeps nothing.
func TestEmptyPrefixSweepsNothing(t *testing.T) {
	parent := t.TempDir()
	other := filepath.Join(parent, "someone-elses")
	empty := filepath.Join(parent, "empty")
	for _, d := range []string{other, empty} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{dirLock, "precious"} {
		if err := os.WriteFile(filepath.Join(other, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * orphanAge)
	if err := os.Chtimes(empty, old, old); err != nil {
		t.Fatal(err)
	}
	if got := Sweep(parent, "", nil); got != nil {
		t.Errorf("Sweep with no prefix removed %v", got)
	}
	if d, err := TempDir(parent, "", nil); err == nil {
		d.Remove()
		t.Error("TempDir with no prefix: no error")
	}
	for _, p := range []string{filepath.Join(other, "precious"), empty} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
}

// TestAcquireRefusesALink: a symbolic link in the lock file's place is
// refused, and nothing is created where it points.
func TestAcquireRefusesALink(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	target := filepath.Join(elsewhere, "planted")
	p := filepath.Join(dir, "lock")
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
	if l, err := Acquire(context.Background(), p, 0); err == nil || !strings.Contains(err.Error(), p) {
		l.Unlock()
		t.Errorf("Acquire through a link: %v, want an error naming %s", err, p)
	}
	if _, err := os.Lstat(target); !os.IsNotExist(err) {
		t.Errorf("the link's target was created: %v", err)
	}
}

// AcquireFile locks a file that exists, and a second holder waits; a file
// that does not exist is not created, and a link is not followed.
func TestAcquireFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "recipe.yaml")
	if _, err := AcquireFile(context.Background(), p, 0); err == nil {
		t.Fatal("AcquireFile of a missing file succeeded")
	}
	if _, err := os.Lstat(p); !os.IsNotExist(err) {
		t.Fatalf("AcquireFile created the file: %v", err)
	}
	if err := os.WriteFile(p, nil, 0o444); err != nil {
		t.Fatal(err)
	}
	l, err := AcquireFile(context.Background(), p, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := AcquireFile(ctx, p, 10*time.Millisecond); err == nil {
		t.Error("a second AcquireFile took the lock held")
	}
	l.Unlock()
	if err := os.Symlink("recipe.yaml", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if l, err := AcquireFile(context.Background(), filepath.Join(dir, "link"), 0); err == nil {
		l.Unlock()
		t.Error("AcquireFile followed a link")
	}
}

// TestWaitNotice: under WithWaitNotice a lock held by someone else is
// noticed once, after NoticeAfter; a free lock, or no notice asked, says
// nothing.
func TestWaitNotice(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	var noticed []string
	ctx := WithWaitNotice(context.Background(), func(p, _ string, _ time.Duration) { noticed = append(noticed, p) })
	l, err := Acquire(ctx, path, 5*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if len(noticed) != 0 {
		t.Fatalf("a free lock was noticed: %v", noticed)
	}
	go func() {
		time.Sleep(NoticeAfter + 300*time.Millisecond)
		l.Unlock()
	}()
	start := time.Now()
	l2, err := Acquire(ctx, path, 5*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	l2.Unlock()
	if !slices.Equal(noticed, []string{path}) {
		t.Errorf("noticed %v after waiting %v, want [%s] once", noticed, time.Since(start), path)
	}
}

// TestWaitNamesTheHolder: a wait for a lock whose holder is stuck (a
// process stopped with SIGSTOP or Ctrl-Z, which holds it until someone
// looks) names that process, its pid and command line, in the notice and
// in the error of the wait given up: "another updeb process" alone left
// the user to guess which of the updeb processes running it was.
func TestWaitNamesTheHolder(t *testing.T) {
	if p := os.Getenv("LOCKFILE_HOLD_STOPPED"); p != "" {
		take := Acquire
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			take = AcquireDir
		}
		if _, err := take(context.Background(), p, 0); err != nil {
			os.Stdout.WriteString("error: " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Stdout.WriteString("held\n")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	dir := t.TempDir()
	for _, p := range []string{filepath.Join(dir, "lock"), dir} {
		holder, line := testenv.StartHelper(t, "TestWaitNamesTheHolder", "LOCKFILE_HOLD_STOPPED="+p)
		if line != "held" {
			t.Fatalf("helper: %s", line)
		}
		if err := holder.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		// The wait is given up once the notice is out.
		ctx, cancel := context.WithCancel(context.Background())
		var noticed string
		ctx = WithWaitNotice(ctx, func(_, h string, _ time.Duration) { noticed = h; cancel() })
		take := Acquire
		if p == dir {
			take = AcquireDir
		}
		_, err := take(ctx, p, 5*time.Millisecond)
		want := fmt.Sprintf("pid %d (%s -test.run ^TestWaitNamesTheHolder$)", holder.Process.Pid, os.Args[0])
		if noticed != want {
			t.Errorf("%s: the notice names the holder %q, want %q", p, noticed, want)
		}
		if !errors.Is(err, ErrHeld) || !strings.Contains(err.Error(), "another updeb process holds it: "+want) {
			t.Errorf("%s: a wait given up: %v, want the holder named: %s", p, err, want)
		}
	}
}

// TestLongWaitNoticedAgain: a wait that goes on (its holder stuck, or a
// long publish) is noticed again and again, after WarnAfter, a minute, and
// at gaps that double up to ten minutes, each notice naming the holder and
// how long the wait has lasted: one notice after a second, at info level,
// left a cron job's log, which shows warnings only, without a line saying
// why the job never ended. The clock runs a second per look, so that the
// wait's first 26 minutes pass in no time.
func TestLongWaitNoticedAgain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	l, err := Acquire(context.Background(), path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	want := []time.Duration{NoticeAfter, WarnAfter, time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute, 16 * time.Minute, 26 * time.Minute}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The wait is given up after the last notice, or once the clock is
	// past it, whichever comes first.
	start := time.Now()
	clock := start
	now = func() time.Time {
		if clock = clock.Add(time.Second); clock.Sub(start) > want[len(want)-1]+time.Minute {
			cancel()
		}
		return clock
	}
	defer func() { now = time.Now }()
	var waited []time.Duration
	self := describe(os.Getpid())
	ctx = WithWaitNotice(ctx, func(p, holder string, d time.Duration) {
		if p != path || holder != self {
			t.Errorf("notice of %s held by %q, want %s held by %q", p, holder, path, self)
		}
		if waited = append(waited, d); len(waited) == len(want) {
			cancel()
		}
	})
	if _, err := Acquire(ctx, path, time.Microsecond); !errors.Is(err, ErrHeld) {
		t.Fatalf("a wait given up: %v, want %v", err, ErrHeld)
	}
	if !slices.Equal(waited, want) {
		t.Errorf("notices after %v, want %v", waited, want)
	}
}

// Shared locks are held by many at once and exclude the exclusive lock, and
// the exclusive lock excludes them: a cache hit marking its file as used and
// the gc that removes unused files never run side by side.
func TestSharedLock(t *testing.T) {
	p := filepath.Join(t.TempDir(), "lock")
	s1, err := AcquireShared(context.Background(), p, 5*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := AcquireShared(context.Background(), p, 5*time.Millisecond)
	if err != nil {
		t.Fatalf("a second shared lock beside the first: %v", err)
	}
	held := func(acquire func(context.Context, string, time.Duration) (*Lock, error)) bool {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		defer cancel()
		l, err := acquire(ctx, p, 5*time.Millisecond)
		if err == nil {
			l.Unlock()
		}
		return err != nil
	}
	if !held(Acquire) {
		t.Error("the exclusive lock was taken beside shared ones")
	}
	s1.Unlock()
	s2.Unlock()
	x, err := Acquire(context.Background(), p, 5*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if !held(AcquireShared) {
		t.Error("a shared lock was taken beside the exclusive one")
	}
	x.Unlock()
}

// TestRemoveStoppedHalfWaySwept: a Remove stopped before the folder is
// gone (here by a subfolder it cannot remove, a read-only mount; kill -9
// while it removes the gigabytes of a verify's builds stops it the same
// way) leaves a folder the next sweep removes, without reaping it (its
// maker finished with it). The lock went with whatever Remove reached
// first, and the lockless folder, holding the rest, was left alone for
// good.
func TestRemoveStoppedHalfWaySwept(t *testing.T) {
	parent := t.TempDir()
	d, err := TempDir(parent, "x-", nil)
	if err != nil {
		t.Fatal(err)
	}
	ro := filepath.Join(d.Path, "build")
	if err := os.MkdirAll(ro, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(ro, "app.deb"), []byte("a build"), 0o644)
	// Once the mount is gone (cleanups run last registered first), what
	// Remove left is swept.
	t.Cleanup(func() {
		var reaped []string
		swept := Sweep(parent, "x-", func(dir string) { reaped = append(reaped, dir) })
		if !slices.Equal(swept, []string{d.Path}) || len(reaped) != 0 {
			t.Errorf("swept %v, reaped %v: want %s swept, not reaped", swept, reaped, d.Path)
		}
		if _, err := os.Stat(d.Path); !os.IsNotExist(err) {
			t.Errorf("the folder a stopped Remove left is still there: %v", err)
		}
	})
	testenv.ReadOnlyBindMount(t, ro, ro)
	if err := d.Remove(); err == nil {
		t.Fatal("Remove of a folder holding a read-only mount succeeded: the test misses its point")
	}
}

// A lock file removed (by a holder done with it, or by hand) after a
// waiter opened it, and made again by another process that locked it: the
// waiter took the lock of the file removed, which no one else would ever
// ask for, and two held the lock of path at once. A lock taken is checked
// to be still the one of the file at path, and taken again if not.
func TestLockOfARemovedFileIsTakenAgain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	var other *Lock
	var otherErr error
	ran := false
	opened = func(p string) {
		if p != path || ran {
			return
		}
		ran = true // the other process: removes the lock file and makes its own
		if err := os.Remove(path); err != nil {
			t.Error(err)
		}
		other, otherErr = Acquire(context.Background(), path, 0)
	}
	t.Cleanup(func() { opened = func(string) {} })
	done, cancel := context.WithCancel(context.Background())
	cancel()
	l, err := Acquire(done, path, 0)
	if !ran {
		t.Fatal("the lock file was never opened")
	}
	if otherErr != nil {
		t.Fatal(otherErr)
	}
	if err == nil {
		l.Unlock()
		t.Fatal("two hold the lock at once: one of the file removed, one of the file made in its place")
	}
	if !errors.Is(err, ErrHeld) {
		t.Fatalf("the lock beside the other's: %v, want it held", err)
	}
	other.Unlock()
	if l, err := Acquire(done, path, 0); err != nil {
		t.Fatalf("the lock once let go: %v", err)
	} else {
		l.Unlock()
	}
}
