package deb

import (
	"os"
	"syscall"
)

// punchHole gives the disk blocks of f's bytes [off, off+n) back to the file
// system, keeping f's size (fallocate FALLOC_FL_PUNCH_HOLE). It is only a
// saving: where the file system cannot, the blocks stay until f is removed.
func punchHole(f *os.File, off, n int64) {
	_ = syscall.Fallocate(int(f.Fd()), 0x1|0x2 /* FALLOC_FL_KEEP_SIZE|FALLOC_FL_PUNCH_HOLE */, off, n)
}
