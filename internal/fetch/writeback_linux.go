package fetch

import (
	"os"

	"golang.org/x/sys/unix"
)

// startWriteback asks the kernel to start writing f's bytes [off, off+n) to
// disk now, without waiting (sync_file_range SYNC_FILE_RANGE_WRITE), so that
// the disk works while the download goes on: a large download does not pile
// up as dirty memory, and most of it is on disk soon after it arrived,
// although the cache never fsyncs it (internal/cache's doc says why). It is
// only a hint: errors are ignored (a blob the disk lost fails the re-hash of
// its next read).
func startWriteback(f *os.File, off, n int64) {
	_ = unix.SyncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE)
}
