package deb

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/updeb/updeb/pkg/multigzip"
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
// the output must be byte-identical on every machine.
type codec struct {
	compression Compression
	suffix      string // appended to "control.tar" and "data.tar"
	newWriter   func(w io.Writer, o writerOptions) (io.WriteCloser, error)
	newReader   func(r io.Reader) (io.ReadCloser, error)
}

// writerOptions are a package's compression settings: workers is how many
// goroutines may compress (xz and zstd), which never changes the bytes;
// xzMode is the xz encoder's mode, which does.
type writerOptions struct {
	// ctx stops a compression that is cancelled midway (xz: within one
	// LZMA2 chunk of each block in flight); nil means never.
	ctx     context.Context
	workers int
	// pool, when set, compresses data.tar's xz blocks (and sets zstd's
	// workers) instead of workers.
	pool   *Pool
	xzMode XZMode
}

var codecs = []codec{
	{CompressionXZ, ".xz", newXZWriter, newXZReader},
	{CompressionGzip, ".gz", newGzipWriter, newGzipReader},
	{CompressionZstd, ".zst", newZstdWriter, newZstdReader},
	{CompressionNone, "", func(w io.Writer, _ writerOptions) (io.WriteCloser, error) { return nopCloser{w}, nil }, func(r io.Reader) (io.ReadCloser, error) { return io.NopCloser(r), nil }},
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
	var names []string
	for _, k := range Compressions() {
		names = append(names, string(k))
	}
	return codec{}, fmt.Errorf("%w: compression %q: expected one of %s", ErrInvalid, c, strings.Join(names, ", "))
}

// Compressions lists the compressions Write knows, the default (xz) first:
// the one list of them that the configuration, the flags and their shell
// completion use.
func Compressions() []Compression {
	out := make([]Compression, len(codecs))
	for i, k := range codecs {
		out[i] = k.compression
	}
	return out
}

// XZModes lists the xz encoder's modes, the default (fast) first.
func XZModes() []XZMode { return []XZMode{XZFast, XZBest} }

// memberCodec finds the codec of a member named base+suffix
// ("data.tar.xz"); a suffix dpkg does not read is refused with
// ErrMalformed. data.tar may also be bzip2 or lzma (dataOnlyCodecs),
// which dpkg reads and dpkg-deb no longer writes; control.tar may not.
func memberCodec(name, base string) (codec, error) {
	known := codecs
	if base == "data.tar" {
		known = append(known[:len(known):len(known)], dataOnlyCodecs...)
	}
	for _, k := range known {
		if name == base+k.suffix {
			return k, nil
		}
	}
	if base == "data.tar" {
		return codec{}, malformed("ar member %q: unsupported compression: expected %s, %s.gz, %s.xz, %s.zst, %s.bz2 or %s.lzma", name, base, base, base, base, base, base)
	}
	// No explicit argument index: malformed puts ErrMalformed first.
	return codec{}, malformed("ar member %q: unsupported compression: expected %s, %s.gz, %s.xz or %s.zst (dpkg-deb reads no other control.tar)", name, base, base, base, base)
}

// XZ settings of data.tar and control.tar, per mode. They determine the bytes,
// so they are constants, never derived from the machine; Package.XZWorkers
// only changes how many blocks are compressed at once. A package smaller than
// a block is one block whose dictionary is the package's size (the encoder
// never uses more); larger ones are cut into blocks that compress in
// parallel. Memory: see xzpar.Config (measurements in cmd/updeb-bench/README.md).
var xzLayouts = map[XZMode]struct{ blockSize, dictCap int }{
	XZFast: {32 << 20, 16 << 20},
	XZBest: {32 << 20, 16 << 20},
}

// DefaultXZWorkers is the number of xz blocks (and zstd jobs) compressed at
// once when Package.XZWorkers is 0.
const DefaultXZWorkers = 2

// xzModeOf maps a package's XZMode to the encoder's.
func xzModeOf(m XZMode) (xzpar.Mode, error) {
	switch m {
	case "", XZFast:
		return xzpar.ModeFast, nil
	case XZBest:
		return xzpar.ModeBest, nil
	}
	return 0, invalidf("xz mode %q: expected %s or %s", m, XZFast, XZBest)
}

// xzConfig is the xzpar configuration of one member: one stream of
// independent blocks with CRC64 checks, after the x86 BCJ filter if x86.
func xzConfig(o writerOptions, x86 bool) (xzpar.Config, error) {
	mode, err := xzModeOf(o.xzMode)
	if err != nil {
		return xzpar.Config{}, err
	}
	if o.xzMode == "" {
		o.xzMode = XZFast
	}
	l := xzLayouts[o.xzMode]
	workers := o.workers
	if workers <= 0 {
		workers = DefaultXZWorkers
	}
	cfg := xzpar.Config{BlockSize: l.blockSize, DictCap: l.dictCap, Workers: workers, Mode: mode, X86: x86}
	if o.pool != nil {
		cfg.Pool = o.pool.xz
	}
	return cfg, nil
}

func newXZWriter(w io.Writer, o writerOptions) (io.WriteCloser, error) {
	return newXZWriterFilter(w, o, false)
}

func newXZX86Writer(w io.Writer, o writerOptions) (io.WriteCloser, error) {
	return newXZWriterFilter(w, o, true)
}

func newXZWriterFilter(w io.Writer, o writerOptions, x86 bool) (io.WriteCloser, error) {
	cfg, err := xzConfig(o, x86)
	if err != nil {
		return nil, err
	}
	ctx := o.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	return xzpar.NewWriterContext(ctx, w, cfg)
}

// x86Architectures are the Debian architectures whose binaries are x86 code,
// for which the x86 BCJ filter makes data.tar.xz about 5% smaller (28.1 MB
// instead of 29.6 MB on 86 MB of Go binaries). On other code it makes the
// output larger, so it is used for these only.
var x86Architectures = map[string]bool{"amd64": true, "i386": true}

// forData returns the codec of data.tar in a package of architecture arch:
// for xz on amd64 and i386, with the x86 BCJ filter, as `xz --x86` does.
// control.tar is text and keeps the plain codec. liblzma (dpkg, xz) and
// newXZReader decode the filter.
func (c codec) forData(arch string) codec {
	if c.compression == CompressionXZ && x86Architectures[arch] {
		c.newWriter = newXZX86Writer
	}
	return c
}

// newXZReader reads xz with pkg/xzpar's reader, which handles what dpkg-deb,
// xz (several blocks, several streams) and our writer (the x86 BCJ filter)
// produce, verifies every check, and refuses LZMA2 dictionaries above 64 MiB
// (xz -9's) unless the block is smaller, so a hostile header cannot make it
// allocate gigabytes.
func newXZReader(r io.Reader) (io.ReadCloser, error) {
	zr, err := xzpar.NewReader(r)
	if err != nil {
		return nil, err
	}
	return io.NopCloser(zr), nil
}

// gzip level 9 (dpkg-deb's default), no name, mtime 0.
func newGzipWriter(w io.Writer, _ writerOptions) (io.WriteCloser, error) {
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	// klauspost's writer stores ModTime.Unix() as it is: a ModTime left
	// zero (year 1) would be written as 2042-07-14. The epoch gives 0.
	zw.ModTime = time.Unix(0, 0)
	return zw, nil
}

// newGzipReader reads the gzip members of a .deb member one after the
// other, as zlib's gzread (dpkg) does; nothing may follow the last one.
func newGzipReader(r io.Reader) (io.ReadCloser, error) {
	return multigzip.NewReader(context.Background(), r, multigzip.Nothing)
}

// zstd at the default level (dpkg-deb's 3), with the input cut into jobs of
// four windows compressed in parallel (each primed with the end of the job
// before it). The job layout depends only on the window, never on the worker
// count: klauspost's encoder runs jobs only with a concurrency of two or more
// (with one it writes other bytes), so the concurrency is never below two;
// workers beyond two only run more jobs at once.
const zstdWindow = 4 << 20

// zstdWorkerMemory is what a zstd encoder holds per worker (a 16 MiB job's
// input and output; measured: about 16 MiB of peak RSS per worker more).
const zstdWorkerMemory = 32 << 20

// newZstdWriter writes zstd with the package's workers; with a pool, its
// workers, and it reserves their memory in the pool for as long as it is
// open, so that zstd packages written at once stay within the pool's bound.
func newZstdWriter(w io.Writer, o writerOptions) (io.WriteCloser, error) {
	workers := o.workers
	if o.pool != nil {
		workers = o.pool.Workers()
	}
	if workers <= 0 {
		workers = DefaultXZWorkers
	}
	workers = max(workers, 2)
	release := func() {}
	if o.pool != nil {
		ctx := o.ctx
		if ctx == nil {
			ctx = context.Background()
		}
		var err error
		if release, err = o.pool.xz.Reserve(ctx, int64(workers)*zstdWorkerMemory); err != nil {
			return nil, err
		}
	}
	zw, err := zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(workers),
		zstd.WithConcurrentBlocks(true), zstd.WithEncoderCRC(true), zstd.WithWindowSize(zstdWindow))
	if err != nil {
		release()
		return nil, err
	}
	return &releasingWriter{WriteCloser: zw, release: release}, nil
}

// releasingWriter calls release once its writer is closed.
type releasingWriter struct {
	io.WriteCloser
	release func()
}

func (r *releasingWriter) Close() error {
	defer r.release()
	return r.WriteCloser.Close()
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
