package fetch

import (
	"os"
	"syscall"
)

// startWriteback asks the kernel to start writing f's bytes [off, off+n) to
// disk now, without waiting (sync_file_range SYNC_FILE_RANGE_WRITE), so that
// the disk works while the download goes on and the fsync before the file is
// committed has little left to wait for. It is only a hint: errors are
// ignored, the fsync reports them.
func startWriteback(f *os.File, off, n int64) {
	_ = syscall.SyncFileRange(int(f.Fd()), off, n, 0x2 /* SYNC_FILE_RANGE_WRITE */)
}
