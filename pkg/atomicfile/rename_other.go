//go:build !linux

package atomicfile

import "errors"

// renameNoReplace: no one-step form here (see rename_linux.go).
func renameNoReplace(_, _ string) error { return errors.ErrUnsupported }
