// Package confined opens files that must lie inside a folder and be regular
// files: a recipe's own files, keyrings, the artifacts of a file:// mirror
// (Open); and files a user names anywhere that must be regular files of a
// bounded size: keys, certificate bundles, config files (OpenFile, ReadFile).
//
// The walk is done by the kernel relative to an open folder (os.Root: openat
// with O_NOFOLLOW on every component), so no spelling of the name and no
// symlink on the way, even one swapped in while the file is opened, reaches a
// file outside the folder; symlinks that stay inside are followed. The opened
// file itself is checked (fstat), never the name, so what is checked is what
// is read: a device, FIFO, socket or folder is refused without reading from
// it, and opening a FIFO never blocks (O_NONBLOCK).
package confined

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ErrRefused is wrapped when a name resolves outside its folder or is not a
// regular file.
var ErrRefused = errors.New("refused")

// ErrFolder is wrapped (besides ErrRefused) when what was opened is a folder,
// for callers to whom a folder means "look elsewhere" (git's refs/heads/a
// when refs/heads/a/b exists).
var ErrFolder = errors.New("a folder")

// refusal is a refusal; a folder is also ErrFolder.
type refusal struct {
	msg    string
	folder bool
}

func (e *refusal) Error() string { return e.msg }

func (e *refusal) Is(target error) bool {
	return target == ErrRefused || (e.folder && target == ErrFolder)
}

// Open opens for reading the regular file reached from dir by names: each
// name but the last is a folder that becomes the new confinement (so
// Open(recipes, "helm", "etc/helm.conf") keeps helm/ inside recipes/ and
// etc/helm.conf inside helm/), the last is the file. Names are
// slash-separated and relative. A file that does not exist is an error
// wrapping fs.ErrNotExist; one that escapes or is not a regular file wraps
// ErrRefused. The caller closes the file.
func Open(dir string, names ...string) (*os.File, fs.FileInfo, error) {
	if len(names) == 0 {
		return nil, nil, errors.New("confined: no file name")
	}
	display := filepath.Join(append([]string{dir}, names...)...)
	refuse := func(format string, args ...any) error {
		return fmt.Errorf("%s: %w: %s", display, ErrRefused, fmt.Sprintf(format, args...))
	}
	root, err := OpenRoot(dir)
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	for i, n := range names {
		if err := checkName(n); err != nil {
			return nil, nil, refuse("%v", err)
		}
		if i == len(names)-1 {
			break
		}
		sub, err := root.OpenRoot(n)
		if err != nil {
			return nil, nil, classify(err, refuse, "folder "+n)
		}
		root.Close()
		root = sub
	}
	last := names[len(names)-1]
	f, err := root.OpenFile(last, openFlags, 0)
	if err != nil {
		return nil, nil, classify(err, refuse, last)
	}
	return regular(f, refuse)
}

// OpenRoot opens the folder dir (a path the caller trusts: symlinks in it
// are followed) as an os.Root, without blocking. os.OpenRoot opens its
// argument as a file first, without O_NONBLOCK or O_DIRECTORY, so a FIFO in
// place of the folder (a "gitdir:" or "commondir" naming one, a mirror
// folder replaced by one) would block that open(2) until a writer came,
// deaf to signals. Here the folder is opened with O_DIRECTORY, which fails
// at once on anything but a folder (an error wrapping ErrRefused naming
// what it is), and the root is opened through that descriptor
// (/proc/self/fd), so nothing swapped in between is opened.
func OpenRoot(dir string) (*os.Root, error) {
	var (
		fd  int
		err error = syscall.EINTR
	)
	for err == syscall.EINTR {
		fd, err = syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	}
	if err != nil {
		if err == syscall.ENOTDIR {
			if fi, serr := os.Stat(filepath.Clean(dir)); serr == nil && !fi.IsDir() {
				return nil, &refusal{msg: fmt.Sprintf("%s: %v: not a folder (%s)", dir, ErrRefused, Kind(fi.Mode()))}
			}
		}
		return nil, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	defer syscall.Close(fd)
	root, err := os.OpenRoot("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil {
		// no /proc: open the path itself (the folder was one a moment ago)
		return os.OpenRoot(dir)
	}
	return root, nil
}

// openFlags open for reading without blocking on a FIFO (and without making
// a terminal the controlling one): the file is checked before it is read.
const openFlags = os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY

// regular returns f and its fstat when it is a regular file, or closes it.
func regular(f *os.File, refuse func(string, ...any) error) (*os.File, fs.FileInfo, error) {
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		err := refuse("not a regular file (%s)", Kind(fi.Mode()))
		return nil, nil, &refusal{msg: err.Error(), folder: fi.IsDir()}
	}
	return f, fi, nil
}

// OpenFile opens for reading the regular file at name, a path the user gave
// (no folder confines it: symlinks are followed). As with Open, a FIFO does
// not block the open and is refused, like a device (/dev/zero would never
// end), a socket or a folder: the error wraps ErrRefused. A file that does
// not exist is an error wrapping fs.ErrNotExist. The null device (os.DevNull,
// or a link to it) is the one device allowed: it reads as an empty file, as
// in the common `--config /dev/null`. The caller closes the file.
func OpenFile(name string) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(name, openFlags, 0)
	if err != nil {
		return nil, nil, err
	}
	if fi, err := f.Stat(); err == nil && fi.Mode()&fs.ModeCharDevice != 0 {
		if null, err := os.Stat(os.DevNull); err == nil && os.SameFile(fi, null) {
			return f, fi, nil
		}
	}
	return regular(f, func(format string, args ...any) error {
		return fmt.Errorf("%s: %w: %s", name, ErrRefused, fmt.Sprintf(format, args...))
	})
}

// ReadFile reads the regular file at name (OpenFile), refusing one of more
// than limit bytes (an error wrapping ErrRefused that names the file and the
// limit) after reading at most limit+1 bytes of it.
func ReadFile(name string, limit int64) ([]byte, error) {
	f, _, err := OpenFile(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(f, name, limit)
}

// ReadAtMost reads at most n bytes of the regular file at name (OpenFile),
// for a caller that refuses a larger one in its own words (one with n-1
// bytes or more may be larger).
func ReadAtMost(name string, n int64) ([]byte, error) {
	f, _, err := OpenFile(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAtMost(f, name, n)
}

// ReadIn reads the regular file reached from dir by names (see Open),
// refusing one of more than limit bytes after reading at most limit+1 bytes
// of it.
func ReadIn(dir string, limit int64, names ...string) ([]byte, error) {
	f, _, err := Open(dir, names...)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(f, filepath.Join(append([]string{dir}, names...)...), limit)
}

// readAll reads f, named name in messages, up to limit bytes.
func readAll(f io.Reader, name string, limit int64) ([]byte, error) {
	data, err := readAtMost(f, name, limit+1)
	if err == nil && int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: %w: larger than %d bytes", name, ErrRefused, limit)
	}
	return data, err
}

// readAtMost reads at most n bytes of f, named name in messages.
func readAtMost(f io.Reader, name string, n int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(f, n))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return data, nil
}

// Check is Open without keeping the file: what lint uses.
func Check(dir string, names ...string) error {
	f, _, err := Open(dir, names...)
	if err != nil {
		return err
	}
	return f.Close()
}

func checkName(n string) error {
	switch {
	case n == "":
		return errors.New("empty name")
	case strings.HasPrefix(n, "/"):
		return fmt.Errorf("%q is not a relative path", n)
	case strings.ContainsRune(n, 0):
		return fmt.Errorf("%q contains NUL", n)
	case path.Clean(n) == "..", strings.HasPrefix(path.Clean(n), "../"):
		return fmt.Errorf("%q climbs out with \"..\"", n)
	}
	return nil
}

// classify keeps "does not exist" and "permission denied" as they are (the
// caller's message says so) and reports anything else os.Root refuses (a
// path that escapes through a symlink or "..", a symlink loop) as a refusal.
func classify(err error, refuse func(string, ...any) error, what string) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		return err
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if errors.Is(err, syscall.ENOTDIR) {
		return refuse("%s: a path component is not a folder", what)
	}
	return refuse("%s resolves outside the folder (%v)", what, err)
}

// Kind names what a file of mode m is, for messages: "a folder", "a FIFO",
// "a symlink", "a character device", ...
func Kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m.IsRegular():
		return "a regular file"
	}
	return m.Type().String()
}
