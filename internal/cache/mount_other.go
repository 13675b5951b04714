//go:build !linux

package cache

import (
	"os"
	"syscall"
)

// mountOf returns path's file system (the device): see mount_linux.go.
func mountOf(path string) ([2]uint64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return [2]uint64{}, err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return [2]uint64{uint64(st.Dev)}, nil //nolint:unconvert // Dev is not uint64 on every platform
	}
	return [2]uint64{}, nil
}
