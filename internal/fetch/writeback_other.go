//go:build !linux

package fetch

import "os"

// startWriteback is a no-op where sync_file_range does not exist: the kernel
// writes the download back on its own schedule.
func startWriteback(*os.File, int64, int64) {}
