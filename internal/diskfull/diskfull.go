// Package diskfull names a full disk as what it is. A write that fails with
// ENOSPC (no space left) or EDQUOT (quota exceeded) will fail again at once:
// it is never retried, never blamed on the network or a proxy, and the
// message names the folder that could not be written, so the operator knows
// which disk to free. updeb's CLI maps it to exit 3 (an I/O failure) with a
// hint (cmd/updeb/exit.go).
package diskfull

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"
)

// Error is a write that failed because the disk holding Dir is full or its
// quota is spent.
type Error struct {
	Dir string // the folder that could not be written
	Err error  // the write's error (wrapping ENOSPC or EDQUOT)
}

func (e *Error) Error() string {
	what := "full"
	if errors.Is(e.Err, syscall.EDQUOT) {
		what = "over its quota"
	}
	return fmt.Sprintf("the disk holding %s is %s: %v", e.Dir, what, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Is reports whether err is a full disk or a spent quota.
func Is(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// Wrap returns err as an *Error naming dir when it is a full disk (Is), and
// err itself otherwise (nil stays nil). An *Error already in err is kept.
func Wrap(err error, dir string) error {
	if err == nil || !Is(err) {
		return err
	}
	if _, ok := errors.AsType[*Error](err); ok {
		return err
	}
	return &Error{Dir: dir, Err: err}
}

// Dir is the folder a full-disk error names: an *Error's Dir, else the
// folder of the path of an *fs.PathError in err; "" when err is not a full
// disk.
func Dir(err error) string {
	if !Is(err) {
		return ""
	}
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Dir
	}
	if pe, ok := errors.AsType[*fs.PathError](err); ok && pe.Path != "" {
		return filepath.Dir(pe.Path)
	}
	return ""
}
