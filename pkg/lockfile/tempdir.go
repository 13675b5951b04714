package lockfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// dirLock is the lock file inside a TempDir folder. It only ever appears
// there held: it is made as dirLockNew, locked, then renamed. Remove renames
// it dirLockGone, still held, before it removes anything else.
const (
	dirLock     = ".lock"
	dirLockNew  = ".lock.new"
	dirLockGone = ".lock.removing"
)

// orphanAge is how old a folder without its lock must be before a sweep takes
// it for a maker killed between making the folder and renaming its lock into
// place (a few microseconds): a younger one may still be in that window.
const orphanAge = time.Minute

// Dir is a temporary folder made by TempDir, locked while its maker runs.
type Dir struct {
	Path  string   // the folder
	Swept []string // leftovers of killed processes that TempDir removed first
	lock  *os.File
}

// TempDir makes a folder parent/prefix<random> (parent "" is os.TempDir())
// that holds a lock for as long as this process keeps it, so that a later
// TempDir with the same prefix can tell whether its maker still runs. First it
// removes the leftovers of that prefix: a process killed before it could
// remove its folder (kill -9, the OOM killer, a CI runner's timeout) leaves it
// behind, possibly hundreds of MB of builds, and nothing else ever would. A
// folder is removed only when it is a real folder (not a link) owned by this
// user and its lock is free: the kernel drops a flock(2) lock when its holder
// dies, however it dies. A folder without a lock (made by an updeb before this
// one, or not by updeb) is left alone, except one that holds nothing but a
// lock still being made and is older than a minute (a maker killed in that
// window). reap, when not nil, is Sweep's: called with each dead folder
// before it goes. Remove deletes the folder, then releases the lock. An empty
// prefix is refused: it would make every folder of parent a leftover.
func TempDir(parent, prefix string, reap func(dir string)) (*Dir, error) {
	if prefix == "" {
		return nil, errors.New("lockfile: TempDir needs a prefix (an empty one would sweep every folder of its parent)")
	}
	if parent == "" {
		parent = os.TempDir()
	}
	swept := Sweep(parent, prefix, reap)
	path, err := os.MkdirTemp(parent, prefix+"*")
	if err != nil {
		return nil, err
	}
	f, err := lockNew(path)
	if err != nil {
		os.RemoveAll(path)
		return nil, err
	}
	return &Dir{Path: path, Swept: swept, lock: f}, nil
}

// lockNew makes the held lock of the new folder path.
func lockNew(path string) (*os.File, error) {
	tmp := filepath.Join(path, dirLockNew)
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, filepath.Join(path, dirLock)); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Remove deletes the folder and releases its lock (in that order: a sweep
// never sees the folder unlocked while it still holds anything). The lock
// file goes last, renamed dirLockGone first: a Remove stopped half way
// (kill -9 while it removes the gigabytes of a verify's builds, an entry it
// cannot remove) leaves a folder the next sweep removes without reaping it
// (its maker was done with it). Removed in the folder's order, the lock
// often went first, and the lockless rest was left alone for good.
func (d *Dir) Remove() error {
	if d == nil || d.lock == nil {
		return nil
	}
	err := os.Rename(filepath.Join(d.Path, dirLock), filepath.Join(d.Path, dirLockGone))
	if err == nil {
		err = removeAllBut(d.Path, dirLockGone)
	}
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		err = os.RemoveAll(d.Path)
	}
	if cerr := d.lock.Close(); err == nil {
		err = cerr
	}
	d.lock = nil
	return err
}

// removeAllBut removes everything in dir but the entry keep, going on past
// what it cannot remove.
func removeAllBut(dir, keep string) error {
	des, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, de := range des {
		if de.Name() != keep {
			errs = append(errs, os.RemoveAll(filepath.Join(dir, de.Name())))
		}
	}
	return errors.Join(errs...)
}

// Sweep removes the folders parent/prefix* that TempDir made in processes
// that have since died (see TempDir) and returns their paths. reap, when
// not nil, is called with each folder before it goes, its lock held: to stop
// what the dead process started there and left running (a daemon whose
// pid file or socket is in the folder). Sweep removes what it can and
// reports no errors: a folder it cannot read or lock is not one it may
// remove. An empty prefix sweeps nothing: no folder of parent is known to be
// TempDir's then (another program's lock file may be called ".lock" too).
func Sweep(parent, prefix string, reap func(dir string)) []string {
	if prefix == "" {
		return nil
	}
	entries, err := os.ReadDir(parent)
	if err != nil {
		return nil
	}
	var swept []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), prefix) || !e.IsDir() {
			continue
		}
		p := filepath.Join(parent, e.Name())
		if sweepOne(p, reap) {
			swept = append(swept, p)
		}
	}
	return swept
}

// sweepOne removes the folder p when its maker is gone.
func sweepOne(p string, reap func(string)) bool {
	fi, err := os.Lstat(p)
	if err != nil || !fi.IsDir() {
		return false
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Getuid() {
		return false
	}
	f, err := os.OpenFile(filepath.Join(p, dirLock), os.O_RDWR|syscall.O_NOFOLLOW, 0)
	removing := false
	if errors.Is(err, fs.ErrNotExist) {
		f, err = os.OpenFile(filepath.Join(p, dirLockGone), os.O_RDWR|syscall.O_NOFOLLOW, 0)
		removing = err == nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		if !orphan(p, fi) {
			return false
		}
		return os.RemoveAll(p) == nil
	}
	if err != nil {
		return false
	}
	defer f.Close()
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return false // its maker runs
	}
	if reap != nil && !removing {
		reap(p)
	}
	return os.RemoveAll(p) == nil
}

// orphan reports whether the lockless folder p holds nothing but a lock being
// made and is older than orphanAge.
func orphan(p string, fi fs.FileInfo) bool {
	if time.Since(fi.ModTime()) < orphanAge {
		return false
	}
	names, err := os.ReadDir(p)
	if err != nil {
		return false
	}
	for _, n := range names {
		if n.Name() != dirLockNew {
			return false
		}
	}
	return true
}
