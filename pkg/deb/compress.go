package deb

import (
	"fmt"
	"io"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"

	"github.com/updeb/updeb/pkg/xzpar"
)

// Compression names the compressor of control.tar and data.tar (dpkg-deb uses
// the same one for both members).
type Compression string

const (
	CompressionXZ   Compression = "xz" // the default, as dpkg-deb's
	CompressionGzip Compression = "gzip"
	CompressionZstd Compression = "zstd" // needs dpkg >= 1.21.18 (bookworm) to install
	CompressionNone Compression = "none"
)

// codec is one compression format: its member-name suffix and how to write and
// read it. The settings are pinned, because compressed bytes depend on them and
// the output must be byte-identical on every machine. workers is how many
// goroutines may compress (xz only); it never changes the bytes.
type codec struct {
	compression Compression
	suffix      string // appended to "control.tar" and "data.tar"
	newWriter   func(w io.Writer, workers int) (io.WriteCloser, error)
	newReader   func(r io.Reader) (io.ReadCloser, error)
}

var codecs = []codec{
	{CompressionXZ, ".xz", newXZWriter, newXZReader},
	{CompressionGzip, ".gz", newGzipWriter, newGzipReader},
	{CompressionZstd, ".zst", newZstdWriter, newZstdReader},
	{CompressionNone, "", func(w io.Writer, _ int) (io.WriteCloser, error) { return nopCloser{w}, nil }, func(r io.Reader) (io.ReadCloser, error) { return io.NopCloser(r), nil }},
}

func codecFor(c Compression) (codec, error) {
	if c == "" {
		c = CompressionXZ
	}
	for _, k := range codecs {
		if k.compression == c {
			return k, nil
		}
	}
	names := make([]string, len(codecs))
	for i, k := range codecs {
		names[i] = string(k.compression)
	}
	return codec{}, fmt.Errorf("%w: compression %q: expected one of %s", ErrInvalid, c, strings.Join(names, ", "))
}

// codecForMember finds the codec of a member named base+suffix ("data.tar.xz").
func codecForMember(name, base string) (codec, bool) {
	for _, k := range codecs {
		if name == base+k.suffix {
			return k, true
		}
	}
	return codec{}, false
}

// XZ settings of data.tar and control.tar. They determine the bytes, so they
// are constants, never derived from the machine; Package.XZWorkers only
// changes how many blocks are compressed at once. Chosen for "peak RSS <= 128
// MB for any payload size" with two workers (measurements in the package doc):
// each worker's encoder holds about 5*xzDictCap (ulikunitz's hash-table matcher:
// a 4-byte entry per dictionary byte, an 8 MiB head table and the window) and
// the writer up to workers+1 input blocks.
const (
	xzBlockSize = 8 << 20
	xzDictCap   = 4 << 20
	// DefaultXZWorkers is the number of xz blocks compressed at once when
	// Package.XZWorkers is 0.
	DefaultXZWorkers = 2
	// xzX86 is off: github.com/ulikunitz/xz's reader (newXZReader, updeb
	// inspect) cannot decode the x86 BCJ filter.
	xzX86 = false
)

// xzConfig is the xzpar configuration of one member: one stream of
// independent blocks with CRC64 checks.
func xzConfig(workers int) xzpar.Config {
	if workers <= 0 {
		workers = DefaultXZWorkers
	}
	return xzpar.Config{BlockSize: xzBlockSize, DictCap: xzDictCap, Workers: workers, Matcher: xzpar.DefaultMatcher, X86: xzX86}
}

func newXZWriter(w io.Writer, workers int) (io.WriteCloser, error) {
	return xzpar.NewWriter(w, xzConfig(workers))
}

func newXZReader(r io.Reader) (io.ReadCloser, error) {
	// Refuse dictionaries beyond xz -9's 64 MiB: a hostile header must not make
	// the reader allocate gigabytes.
	zr, err := xz.ReaderConfig{DictCap: 64 << 20}.NewReader(r)
	if err != nil {
		return nil, err
	}
	return io.NopCloser(zr), nil
}

// gzip level 9 (dpkg-deb's default), no name, mtime 0.
func newGzipWriter(w io.Writer, _ int) (io.WriteCloser, error) {
	return gzip.NewWriterLevel(w, gzip.BestCompression)
}

func newGzipReader(r io.Reader) (io.ReadCloser, error) { return gzip.NewReader(r) }

// zstd at the default level (dpkg-deb's 3) with one encoder goroutine, so that the
// block layout does not depend on the CPU count.
func newZstdWriter(w io.Writer, _ int) (io.WriteCloser, error) {
	return zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1),
		zstd.WithEncoderCRC(true), zstd.WithWindowSize(8<<20))
}

func newZstdReader(r io.Reader) (io.ReadCloser, error) {
	d, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(1<<30),
		zstd.WithDecoderMaxWindow(128<<20))
	if err != nil {
		return nil, err
	}
	return d.IOReadCloser(), nil
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
