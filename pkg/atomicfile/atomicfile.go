// Package atomicfile writes files so that readers (and a crash, even kill -9)
// only ever see the old content or the complete new content: a temporary file
// in the same directory, fsync, rename over the target, fsync the directory.
//
// The contract: the permission bits given are applied exactly, whatever the
// umask; the target changes only in Commit (WriteFile and WriteFrom commit
// when all was written); on any failure, and on Abort, the temporary file is
// removed and the target is as it was. A crash may leave a temporary file
// (".NAME.tmp-*") beside the target, never a partial target.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/updeb/updeb/pkg/utf8cut"
)

// File is a pending write to Path. Write to it, then Commit; Abort (safe to
// defer after Commit) removes the temporary file.
type File struct {
	*os.File
	path string
	done bool
}

// Create starts an atomic write of path with the given permission bits (applied
// exactly, whatever the umask). A temporary file that cannot be made is an
// error naming path (*fs.PathError, op "create"), not the temporary's
// random name, which nobody asked for.
func Create(path string, perm os.FileMode) (*File, error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, TempPrefix(filepath.Base(path))+"*")
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return nil, &fs.PathError{Op: "create", Path: path, Err: pe.Err}
	}
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return &File{File: f, path: path}, nil
}

// TempPrefix is the start of the name of a temporary file that will be
// renamed to name: ".NAME.tmp-", NAME cut to its first 128 bytes (on a
// character boundary) so that the temporary name of a file whose name is
// near the file system's limit (255 bytes) stays under it.
func TempPrefix(name string) string {
	return "." + utf8cut.Prefix(name, 128) + ".tmp-"
}

// Commit flushes the data to disk and renames the file into place.
func (f *File) Commit() error {
	return f.commit(func(tmp string) error {
		if err := notFolder(f.path); err != nil {
			return err
		}
		return os.Rename(tmp, f.path)
	})
}

// notFolder refuses a target that is a folder, which no rename replaces:
// os.Rename's error, "file exists", named the temporary file.
func notFolder(path string) error {
	if fi, err := os.Lstat(path); err == nil && fi.IsDir() {
		return &fs.PathError{Op: "replace", Path: path, Err: syscall.EISDIR}
	}
	return nil
}

// commit flushes the data to disk and moves the file into place with rename.
func (f *File) commit(rename func(tmp string) error) error {
	if f.done {
		return fmt.Errorf("atomicfile: %s already committed or aborted", f.path)
	}
	f.done = true
	tmp := f.File.Name()
	if err := f.File.Sync(); err != nil {
		f.File.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.File.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := rename(tmp); err != nil {
		os.Remove(tmp)
		return err
	}
	return SyncDir(filepath.Dir(f.path))
}

// CommitAll commits files together, as nearly as several files can be: each
// is flushed to disk and each target checked (a folder, which no rename
// replaces, fails it) before the first rename; then every file is renamed
// into place, and each folder synced once. So a failure before the renames
// (a full disk) leaves every target as it was, and a crash (even kill -9) a
// mix of old and new targets only in the microseconds of the renames. The
// temporary files not renamed are removed.
func CommitAll(files []*File) error {
	var err error
	for _, f := range files {
		if f.done {
			err = fmt.Errorf("atomicfile: %s already committed or aborted", f.path)
		} else if err = notFolder(f.path); err == nil {
			if err = f.File.Sync(); err == nil {
				err = f.File.Close()
			}
		}
		if err != nil {
			break
		}
	}
	dirs := map[string]bool{}
	for _, f := range files {
		if f.done {
			continue
		}
		f.done = true
		tmp := f.File.Name()
		if err == nil {
			if err = os.Rename(tmp, f.path); err == nil {
				dirs[filepath.Dir(f.path)] = true
				continue
			}
		}
		f.File.Close()
		os.Remove(tmp)
	}
	for d := range dirs {
		if serr := SyncDir(d); err == nil {
			err = serr
		}
	}
	return err
}

// CommitNew is Commit for a path that must not exist: it fails, wrapping
// fs.ErrExist, when something is there, even something that appeared a
// moment before (on Linux, renameat2 RENAME_NOREPLACE; on a file system
// without that flag, or another system, the check and the rename are two
// steps).
func (f *File) CommitNew() error {
	return f.commit(func(tmp string) error {
		err := renameNoReplace(tmp, f.path)
		if errors.Is(err, errors.ErrUnsupported) {
			if _, err := os.Lstat(f.path); !errors.Is(err, fs.ErrNotExist) {
				return &os.LinkError{Op: "rename", Old: tmp, New: f.path, Err: fs.ErrExist}
			}
			return os.Rename(tmp, f.path)
		}
		return err
	})
}

// Abort discards the pending write; it does nothing after Commit.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.File.Close()
	os.Remove(f.File.Name())
}

// WriteFile atomically replaces path with data.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return WriteFrom(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteFrom atomically replaces path with what fill writes.
func WriteFrom(path string, perm os.FileMode, fill func(io.Writer) error) error {
	f, err := Create(path, perm)
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := fill(f); err != nil {
		return err
	}
	return f.Commit()
}

// MkdirAll is os.MkdirAll with the permission bits of every folder it makes
// applied exactly, whatever the umask (os.MkdirAll's are masked by it: 0700
// under umask 077); the setgid bit a folder takes from a setgid parent
// stays. Folders that exist are left as they are. The folder that holds each
// folder made is synced, as SyncDir does for a rename: a file renamed into a
// new folder (and its folder synced) would otherwise be lost with that
// folder in a power cut, the run that wrote it having reported success.
func MkdirAll(path string, perm os.FileMode) error { return mkdirAll(path, perm, true) }

// MkdirAllUmask is MkdirAll with the umask applied to perm, as os.MkdirAll
// applies it: for a folder of the user's own (a state folder), which umask
// 077 keeps private. Each folder made is synced into its parent as
// MkdirAll's are.
func MkdirAllUmask(path string, perm os.FileMode) error { return mkdirAll(path, perm, false) }

// mkdirAll is MkdirAll, which gives the folders it makes perm exactly, and
// MkdirAllUmask, which leaves them as os.Mkdir made them.
func mkdirAll(path string, perm os.FileMode, exact bool) error {
	if fi, err := os.Stat(path); err == nil {
		if fi.IsDir() {
			return nil
		}
		return &fs.PathError{Op: "mkdir", Path: path, Err: syscall.ENOTDIR}
	}
	if parent := filepath.Dir(path); parent != path {
		if err := mkdirAll(parent, perm, exact); err != nil {
			return err
		}
	}
	if err := os.Mkdir(path, perm); err != nil {
		if fi, serr := os.Lstat(path); serr == nil && fi.IsDir() {
			return nil // made meanwhile by another writer
		}
		return err
	}
	if exact {
		// A folder made under a setgid folder is setgid too (its files
		// take the folder's group): the chmod keeps that.
		fi, err := os.Lstat(path)
		if err != nil {
			return err
		}
		if err := os.Chmod(path, perm|fi.Mode()&os.ModeSetgid); err != nil {
			return err
		}
	}
	return syncDir(filepath.Dir(path))
}

// syncDir is SyncDir; a test sees through it which folders MkdirAll syncs.
var syncDir = SyncDir

// SyncDir fsyncs a directory so that a rename in it survives a crash.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// RemoveLeftovers removes from dir the temporary files (".NAME.tmp-*",
// regular files only) that writes of names left when they were killed
// before Commit or Abort, and returns how many went. Only for a caller that
// holds a lock which every writer of those names holds while its temporary
// file exists: otherwise another process's pending write may be among them.
func RemoveLeftovers(dir string, names ...string) int {
	des, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, de := range des {
		for _, name := range names {
			if strings.HasPrefix(de.Name(), TempPrefix(name)) && de.Type().IsRegular() {
				if os.Remove(filepath.Join(dir, de.Name())) == nil {
					n++
				}
				break
			}
		}
	}
	return n
}
