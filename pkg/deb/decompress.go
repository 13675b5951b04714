package deb

import (
	"bufio"
	"compress/bzip2"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/ulikunitz/xz/lzma"

	"github.com/updeb/updeb/pkg/xzpar"
)

// Compressions of data.tar that dpkg still reads and installs (dpkg-deb(1):
// data.tar may be bzip2 or lzma too) but that dpkg-deb --build no longer
// writes: Inspect (and so publish) reads them, Write never writes them.
const (
	CompressionBzip2 Compression = "bzip2"
	CompressionLZMA  Compression = "lzma"
)

// dataOnlyCodecs are the codecs of those compressions: read-only, and for
// data.tar alone (dpkg-deb reads control.tar uncompressed, gzip, xz or zstd).
var dataOnlyCodecs = []codec{
	{CompressionBzip2, ".bz2", nil, newBzip2Reader},
	{CompressionLZMA, ".lzma", nil, newLZMAReader},
}

// newBzip2Reader reads bzip2 with Go's decoder, which checks every block's
// CRC and the stream's, and holds one block (at most 900 kB, and its
// tables). dpkg (libbz2's BZ2_bzread) reads only the first stream, and Go's
// decoder all of them: bzip2OneStream refuses a member of several first.
func newBzip2Reader(r io.Reader) (io.ReadCloser, error) {
	return io.NopCloser(bzip2.NewReader(r)), nil
}

// bzip2Stream is how a bzip2 stream starts: "BZh", the block size digit
// ('1' to '9'), then the first block's magic (pi) or, for a stream of no
// blocks, the end-of-stream magic (sqrt(pi)); streams are byte-aligned.
var bzip2BlockMagic, bzip2EndMagic = []byte{0x31, 0x41, 0x59, 0x26, 0x53, 0x59}, []byte{0x17, 0x72, 0x45, 0x38, 0x50, 0x90}

// bzip2OneStream refuses a bzip2 member (r, size bytes) that holds a second
// stream after the first: dpkg unpacks the first alone (measured with dpkg
// 1.21.23: data.tar.bz2 of two streams unpacks as the first, cut where it
// ends), Go's decoder reads on. The stream ends on a bit, not a byte, so
// the check looks for the next stream's start, ten bytes that compressed
// data holds by chance once in 2^77 positions. pbzip2 and lbzip2 write such
// members; bzip2 and dpkg-deb one stream.
func bzip2OneStream(r io.ReaderAt, size int64) error {
	const sig = 10
	buf := make([]byte, 256<<10)
	// Each read starts sig-1 bytes before the last one ended, so that a
	// start split between two reads is found.
	for off := int64(1); off < size; off += int64(len(buf) - (sig - 1)) {
		n, err := r.ReadAt(buf, off)
		if err != nil && err != io.EOF {
			return err
		}
		b := buf[:n]
		for i := 0; i+sig <= len(b); i++ {
			if b[i] == 'B' && b[i+1] == 'Z' && b[i+2] == 'h' && b[i+3] >= '1' && b[i+3] <= '9' &&
				(string(b[i+4:i+sig]) == string(bzip2BlockMagic) || string(b[i+4:i+sig]) == string(bzip2EndMagic)) {
				return malformed("a second bzip2 stream at byte %d: dpkg reads only the first", off+int64(i))
			}
		}
		if err == io.EOF || off+int64(n) >= size {
			break
		}
	}
	return nil
}

// errLZMATrailing is data after the end of an lzma stream.
var errLZMATrailing = errors.New("lzma: bytes after the end of the stream (dpkg ignores them; stricter than dpkg, as nothing would check them)")

// newLZMAReader reads the lzma ("LZMA alone") format, as xz --format=lzma
// and the old lzma-utils write it and dpkg reads it with liblzma's
// lzma_alone_decoder. The dictionary is bounded as xz's (xzpar's reader):
// at most xzpar.MaxReadDictCap (64 MiB, xz -9's) unless the header gives
// a smaller uncompressed size, the most the decoder then allocates; a
// hostile header cannot make it allocate gigabytes. Nothing may follow the
// stream's end. The format has no checksum (neither has dpkg one): the
// decoder's errors, the end marker or the size in the header, and the tar
// headers' checksums are what find a corrupt stream.
func newLZMAReader(r io.Reader) (io.ReadCloser, error) {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReader(r)
	}
	h, err := br.Peek(lzma.HeaderLen)
	if err != nil {
		return nil, fmt.Errorf("lzma: header: %w", unexpectedEOF(err))
	}
	dict, size := int64(binary.LittleEndian.Uint32(h[1:5])), binary.LittleEndian.Uint64(h[5:13])
	if dict > xzpar.MaxReadDictCap && size > xzpar.MaxReadDictCap {
		return nil, fmt.Errorf("lzma: a dictionary of %d bytes, more than the %d (xz -9's) this reader allocates", dict, xzpar.MaxReadDictCap)
	}
	zr, err := lzma.ReaderConfig{DictCap: int(max(dict, lzma.MinDictCap))}.NewReader(br)
	if err != nil {
		return nil, err
	}
	return io.NopCloser(&lzmaEnd{r: zr, after: br}), nil
}

// lzmaEnd reads r, and at its end checks that after, what r reads from,
// is at its end too.
type lzmaEnd struct {
	r     io.Reader
	after *bufio.Reader
}

func (l *lzmaEnd) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	switch {
	case err == nil, errors.Is(err, io.ErrUnexpectedEOF):
		// A truncated stream, which readTar names as such.
	case err != io.EOF:
		// The decoder's errors do not all say they are lzma's; the
		// format has no checksum, so they are what finds corruption.
		err = fmt.Errorf("lzma data invalid: %w", err)
	default:
		if _, perr := l.after.Peek(1); perr != io.EOF {
			if perr != nil {
				return n, perr
			}
			return n, errLZMATrailing
		}
	}
	return n, err
}
