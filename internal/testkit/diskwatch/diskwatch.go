// Package diskwatch measures the peak disk use of a folder while something
// writes into it: the disk blocks of the regular files under it (a sparse
// file counts what it holds, not its size), summed every few milliseconds. A
// file removed while still open (a spool file being read for the last time)
// is not seen, so the peak can be short by one such file.
package diskwatch

import (
	"io/fs"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// Every is the sampling interval.
const Every = 20 * time.Millisecond

// Start samples the bytes under dir until the returned function is called,
// which returns the largest sum seen (including one last sample).
func Start(dir string) (stop func() int64) {
	var (
		mu   sync.Mutex
		peak int64
	)
	quit := make(chan struct{})
	done := make(chan struct{})
	sample := func() {
		n := Usage(dir)
		mu.Lock()
		peak = max(peak, n)
		mu.Unlock()
	}
	go func() {
		defer close(done)
		t := time.NewTicker(Every)
		defer t.Stop()
		for {
			sample()
			select {
			case <-quit:
				return
			case <-t.C:
			}
		}
	}()
	return func() int64 {
		close(quit)
		<-done
		sample()
		mu.Lock()
		defer mu.Unlock()
		return peak
	}
}

// Usage is the disk use of the regular files under dir now (a file linked
// twice counts twice).
func Usage(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, e fs.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() {
			if info, err := e.Info(); err == nil {
				n += used(info)
			}
		}
		return nil
	})
	return n
}

func used(info fs.FileInfo) int64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return st.Blocks * 512
	}
	return info.Size()
}
