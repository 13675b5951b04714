package pipeline

import (
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/updeb/updeb/internal/confined"
	"github.com/updeb/updeb/pkg/archive"
)

// The spool holds the archive members a package cannot take as they stream
// (see select.go). It is written zstd-compressed at the fastest level (Go
// binaries to about a third, at several hundred MB/s: little next to the xz
// the members go into), and a spool file is removed as soon as the writer
// opens it for the last time, so that the spool holds only members still to
// be written. The measurements are in cmd/updeb-bench/README.md ("Streaming
// vs spooling").

// spoolWindow is the zstd window of spool files: larger windows gain nothing
// at the fastest level on binaries, and it bounds a decoder's memory.
const spoolWindow = 1 << 20

var spoolEncoderOptions = []zstd.EOption{zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
	zstd.WithWindowSize(spoolWindow), zstd.WithEncoderCRC(true)}

// spool writes member m, read from r, into a new spool file and records it.
func (f *feed) spool(m archive.Member, r io.Reader) error {
	// Named by the build, never by the source: a source's name has no
	// length limit, and a file's name has one (255 bytes on ext4, 143 on
	// eCryptfs). CreateTemp makes it 0600, O_EXCL, beside the other
	// feeds' spool files.
	out, err := os.CreateTemp(f.dir, "spool-*.zst")
	if err != nil {
		return err
	}
	p := out.Name()
	if f.enc == nil {
		if f.enc, err = zstd.NewWriter(nil, spoolEncoderOptions...); err != nil {
			out.Close()
			return err
		}
	}
	f.enc.ResetContentSize(out, m.Size)
	written, err := io.Copy(f.enc, r)
	if cerr := f.enc.Close(); err == nil && written == m.Size {
		err = cerr
	}
	var stored int64
	if st, serr := out.Stat(); serr == nil {
		stored = st.Size()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && written != m.Size {
		err = fmt.Errorf("%s: %s: read %d bytes, header says %d", f.vs.Source.URL, m.Name, written, m.Size)
	}
	if err != nil {
		os.Remove(p)
		return err
	}
	f.log.Debug("spooled", "source", f.name, "member", m.Name, "size", m.Size, "stored", stored)
	f.spooled[m.Name] = member{path: p, size: m.Size, spooled: true}
	return nil
}

// openMember opens a member's file: a raw source's cache file as it is, a
// spool file through its decoder. On the last use of a spool file the file
// is removed at once: the open descriptor keeps its bytes until Close.
func openMember(m member, last bool) (io.ReadCloser, int64, error) {
	if !m.spooled {
		// Opened as every cache file is: a FIFO put in its place since
		// it was verified is refused, never waited for.
		f, _, err := confined.OpenFile(m.path)
		return f, m.size, err
	}
	f, err := os.Open(m.path)
	if err != nil {
		return nil, 0, err
	}
	if last {
		os.Remove(m.path)
	}
	d, err := zstd.NewReader(f, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true), zstd.WithDecoderMaxWindow(spoolWindow))
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return &spoolReader{d: d, f: f}, m.size, nil
}

// spoolReader reads a spool file; Close may be called more than once.
type spoolReader struct {
	d    *zstd.Decoder
	f    *os.File
	once sync.Once
	err  error
}

func (s *spoolReader) Read(p []byte) (int, error) { return s.d.Read(p) }

func (s *spoolReader) Close() error {
	s.once.Do(func() {
		s.d.Close()
		s.err = s.f.Close()
	})
	return s.err
}
