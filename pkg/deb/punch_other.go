//go:build !linux

package deb

import "os"

// punchHole is a no-op where fallocate does not exist: the temporary file's
// blocks stay until it is removed.
func punchHole(*os.File, int64, int64) {}
