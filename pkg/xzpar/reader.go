package xzpar

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"hash/crc64"
	"io"
)

// MaxReadDictCap is the largest LZMA2 dictionary the reader allocates for a
// block: 64 MiB, xz -9's. The reader never allocates more than a block's
// uncompressed size when its header records it (this package's writer always
// does), so only blocks without that size and with a larger dictionary are
// refused, and a hostile header cannot make it allocate gigabytes.
const MaxReadDictCap = 64 << 20

var (
	// ErrFormat is wrapped by every error about data that is not valid xz:
	// bad magic, a check or CRC32 that does not match, sizes that disagree
	// with the headers or the index, truncation (which also wraps
	// io.ErrUnexpectedEOF), data after the last stream.
	ErrFormat = errors.New("xzpar: corrupt xz data")
	// ErrUnsupported is wrapped by errors about valid xz data this reader
	// cannot decode: filters other than x86 BCJ and LZMA2, unknown check
	// types, reserved flags, dictionaries above MaxReadDictCap.
	ErrUnsupported = errors.New("xzpar: unsupported xz data")
)

// NewReader returns a reader of the uncompressed data of the xz file r: one
// or more streams (concatenated, with stream padding between them, as xz -d
// accepts), each of any number of blocks whose filter chain is LZMA2, possibly
// after x86 BCJ filters (what this package's writer, `xz --x86` and every
// plain xz, including multi-threaded xz and dpkg-deb, write). It verifies
// every header CRC32, each block's check (none, CRC32, CRC64 or SHA-256), the
// sizes recorded in block headers, the index and the footer, and reads to the
// end of r: any data after the last stream that is not stream padding is an
// error.
//
// Data is returned as it is decoded, before its block's check is verified: a
// caller must read to io.EOF before it trusts any of it. Errors about the
// data wrap ErrFormat or ErrUnsupported and name the byte offset; errors
// reading r are wrapped as they are. NewReader reads and checks the first
// stream header.
func NewReader(r io.Reader) (io.Reader, error) {
	x := &reader{in: input{r: bufio.NewReaderSize(r, 64<<10)}}
	if err := x.readStreamHeader(nil); err != nil {
		return nil, err
	}
	return x, nil
}

// input counts the bytes read from the compressed data and keeps the first
// error of the underlying reader, to tell I/O errors from bad data.
type input struct {
	r   *bufio.Reader
	n   int64
	err error
}

func (in *input) Read(p []byte) (int, error) {
	n, err := in.r.Read(p)
	in.n += int64(n)
	if err != nil && err != io.EOF && in.err == nil {
		in.err = err
	}
	return n, err
}

func (in *input) ReadByte() (byte, error) {
	b, err := in.r.ReadByte()
	if err == nil {
		in.n++
	} else if err != io.EOF && in.err == nil {
		in.err = err
	}
	return b, err
}

// reader is what NewReader returns.
type reader struct {
	in      input
	flags   [2]byte // stream flags of the current stream
	check   byte    // its check ID
	records []indexRecord
	blk     *blockReader
	lzma2   lzma2Reader // the current block's decoder; its buffers serve every block
	x86     [][]byte    // the x86 filters' buffers, one per filter of a chain, serving every block
	err     error       // sticky, io.EOF at the end
}

func (x *reader) Read(p []byte) (int, error) {
	for x.err == nil {
		if x.blk == nil {
			x.err = x.nextBlock()
			continue
		}
		if len(p) == 0 {
			return 0, nil
		}
		n, done, err := x.blk.read(p)
		if err != nil {
			x.err = x.blockErr(err)
			return n, x.err
		}
		if done {
			if err := x.endBlock(); err != nil {
				x.err = err
				return n, err
			}
			x.blk = nil
		}
		if n > 0 {
			return n, nil
		}
	}
	return 0, x.err
}

// errAt returns an error of kind (ErrFormat or ErrUnsupported) about the
// data at byte offset off of the input.
func errAt(kind error, off int64, format string, args ...any) error {
	return fmt.Errorf("%w at byte %d: %s", kind, off, fmt.Sprintf(format, args...))
}

// corrupt returns an ErrFormat error at the current offset.
func (x *reader) corrupt(format string, args ...any) error {
	return errAt(ErrFormat, x.in.n, format, args...)
}

// readErr explains a failed read of what: an I/O error of the underlying
// reader, or truncated data.
func (x *reader) readErr(what string) error {
	if x.in.err != nil {
		return fmt.Errorf("xzpar: reading %s: %w", what, x.in.err)
	}
	return fmt.Errorf("%w at byte %d: truncated in %s: %w", ErrFormat, x.in.n, what, io.ErrUnexpectedEOF)
}

// full reads len(p) bytes of what.
func (x *reader) full(p []byte, what string) error {
	if _, err := io.ReadFull(&x.in, p); err != nil {
		return x.readErr(what)
	}
	return nil
}

// readStreamHeader reads a stream header whose first bytes, if any, were
// already read into start.
func (x *reader) readStreamHeader(start []byte) error {
	off := x.in.n - int64(len(start))
	var h [streamHeaderSize]byte
	n := copy(h[:], start)
	if err := x.full(h[n:], "the stream header"); err != nil {
		return err
	}
	if !bytes.Equal(h[:len(headerMagic)], headerMagic) {
		return errAt(ErrFormat, off, "stream header magic % x, expected % x", h[:len(headerMagic)], headerMagic)
	}
	flags := h[6:8]
	if got, want := binary.LittleEndian.Uint32(h[8:]), crc32.ChecksumIEEE(flags); got != want {
		return errAt(ErrFormat, off, "stream header CRC32 %#08x, computed %#08x", got, want)
	}
	if flags[0] != 0 || flags[1]&0xf0 != 0 {
		return errAt(ErrUnsupported, off, "reserved stream flags % x", flags)
	}
	switch flags[1] {
	case checkNone, checkCRC32, checkCRC64, checkSHA256:
	default:
		return errAt(ErrUnsupported, off, "check type %#02x: this reader verifies none (0x00), CRC32 (0x01), CRC64 (0x04) and SHA-256 (0x0a)", flags[1])
	}
	x.flags = [2]byte(flags)
	x.check = flags[1]
	x.records = x.records[:0]
	return nil
}

// nextBlock reads the next block header and starts its decoder, or reads the
// index, the footer and what follows the stream.
func (x *reader) nextBlock() error {
	num := len(x.records) + 1
	start := x.in.n
	b, err := x.in.ReadByte()
	if err != nil {
		return x.readErr(fmt.Sprintf("block %d header or the index", num))
	}
	if b == 0 {
		return x.readIndex()
	}
	h := make([]byte, (int(b)+1)*4)
	h[0] = b
	what := fmt.Sprintf("block %d header", num)
	if err := x.full(h[1:], what); err != nil {
		return err
	}
	body := h[:len(h)-4]
	if got, want := binary.LittleEndian.Uint32(h[len(h)-4:]), crc32.ChecksumIEEE(body); got != want {
		return errAt(ErrFormat, start, "block %d header: CRC32 %#08x, computed %#08x", num, got, want)
	}
	blk, err := x.parseBlockHeader(body, num, start)
	if err != nil {
		return err
	}
	x.blk = blk
	return nil
}

// parseBlockHeader parses a block header (size byte to padding, CRC32
// excluded) whose CRC32 matched and sets up the block's decoder.
func (x *reader) parseBlockHeader(h []byte, num int, start int64) (*blockReader, error) {
	bad := func(format string, args ...any) error {
		return errAt(ErrFormat, start, "block %d header: %s", num, fmt.Sprintf(format, args...))
	}
	flags := h[1]
	if flags&0x3c != 0 {
		return nil, errAt(ErrUnsupported, start, "block %d header: reserved block flags %#02x", num, flags)
	}
	p := h[2:]
	next := func(what string) (uint64, error) {
		v, n, err := vli(p)
		if err != nil {
			return 0, bad("%s: %v", what, err)
		}
		p = p[n:]
		return v, nil
	}
	blk := &blockReader{num: num, headerSize: len(h) + 4, compressed: -1, uncompressed: -1, check: newCheck(x.check)}
	if flags&0x40 != 0 {
		c, err := next("compressed size")
		if err != nil {
			return nil, err
		}
		// Unpadded size (header + data + check) must fit in a VLI.
		if c == 0 || c > maxVLI-uint64(blk.headerSize+checkSizes[x.check]) {
			return nil, bad("compressed size %d out of range", c)
		}
		blk.compressed = int64(c)
	}
	if flags&0x80 != 0 {
		u, err := next("uncompressed size")
		if err != nil {
			return nil, err
		}
		if u > maxVLI {
			return nil, bad("uncompressed size %d out of range", u)
		}
		blk.uncompressed = int64(u)
	}
	type filter struct {
		id    uint64
		props []byte
	}
	chain := make([]filter, int(flags&3)+1)
	for i := range chain {
		id, err := next(fmt.Sprintf("filter %d ID", i+1))
		if err != nil {
			return nil, err
		}
		size, err := next(fmt.Sprintf("filter %d properties size", i+1))
		if err != nil {
			return nil, err
		}
		if size > uint64(len(p)) {
			return nil, bad("filter %d (%s): %d bytes of properties, only %d left in the header", i+1, filterName(id), size, len(p))
		}
		chain[i] = filter{id, p[:size]}
		p = p[size:]
	}
	if !allZero(p) {
		return nil, bad("non-zero header padding % x", p)
	}
	for i, f := range chain {
		last := i == len(chain)-1
		if _, known := filterNames[f.id]; !known {
			return nil, errAt(ErrUnsupported, start, "block %d header: filter %s is not one this reader knows (it decodes x86 BCJ (0x04) and LZMA2 (0x21))", num, filterName(f.id))
		}
		switch {
		case f.id == filterLZMA2 && last:
			if len(f.props) != 1 || f.props[0] > 40 {
				return nil, bad("LZMA2 properties % x, expected one byte of at most 40", f.props)
			}
		case f.id == filterLZMA2 || last:
			return nil, bad("filter %d of %d is %s: LZMA2 must be the last filter, and only it", i+1, len(chain), filterName(f.id))
		case f.id == filterX86:
			if len(f.props) != 0 && len(f.props) != 4 {
				return nil, bad("x86 BCJ properties % x, expected none or a 4-byte start offset", f.props)
			}
		default:
			return nil, errAt(ErrUnsupported, start, "block %d header: filter %s: this reader decodes only x86 BCJ (0x04) and LZMA2 (0x21)", num, filterName(f.id))
		}
	}
	dictCap := decodeDictCap(chain[len(chain)-1].props[0])
	if blk.uncompressed >= 0 {
		dictCap = min(dictCap, max(blk.uncompressed, lzmaMinDict))
	}
	if dictCap > MaxReadDictCap {
		return nil, errAt(ErrUnsupported, start, "block %d header: LZMA2 dictionary of %d bytes, more than this reader's limit of %d", num, dictCap, MaxReadDictCap)
	}
	// The data flows from the compressed input through the last filter
	// (LZMA2) back to the first.
	var in io.Reader = &x.in
	if blk.compressed >= 0 {
		blk.limit = &io.LimitedReader{R: &x.in, N: blk.compressed}
		in = blk.limit
	}
	blk.dataStart = x.in.n
	x.lzma2.reset(in, dictCap)
	var r io.Reader = &x.lzma2
	for i := len(chain) - 2; i >= 0; i-- {
		var startOffset uint32
		if props := chain[i].props; len(props) == 4 {
			startOffset = binary.LittleEndian.Uint32(props)
		}
		if i >= len(x.x86) {
			x.x86 = append(x.x86, make([][]byte, i+1-len(x.x86))...)
		}
		if x.x86[i] == nil {
			x.x86[i] = make([]byte, 64<<10)
		}
		r = &x86Reader{r: r, f: newX86Filter(startOffset), buf: x.x86[i]}
	}
	blk.r = r
	return blk, nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// blockErr explains an error decoding the current block.
func (x *reader) blockErr(err error) error {
	blk := x.blk
	var le *lzma2Error
	switch {
	case errors.As(err, &le):
		return errAt(ErrFormat, blk.dataStart+le.off, "block %d: %v", blk.num, err)
	case x.in.err != nil:
		return x.readErr(fmt.Sprintf("block %d", blk.num))
	case err == errTooLong:
		return x.corrupt("block %d: more than the %d uncompressed bytes its header records", blk.num, blk.uncompressed)
	case err == io.ErrUnexpectedEOF && blk.limit != nil && blk.limit.N == 0:
		return x.corrupt("block %d: LZMA2 data runs past the %d compressed bytes its header records", blk.num, blk.compressed)
	case err == io.ErrUnexpectedEOF:
		return x.readErr(fmt.Sprintf("block %d", blk.num))
	}
	return x.corrupt("block %d: LZMA2 data: %v", blk.num, err)
}

// endBlock checks the sizes, padding and check of the block just decoded.
func (x *reader) endBlock() error {
	blk := x.blk
	data := x.in.n - blk.dataStart
	if blk.compressed >= 0 && data != blk.compressed {
		return x.corrupt("block %d: LZMA2 data ends after %d bytes, its header says %d", blk.num, data, blk.compressed)
	}
	if blk.uncompressed >= 0 && blk.n != blk.uncompressed {
		return x.corrupt("block %d: %d bytes uncompressed, its header says %d", blk.num, blk.n, blk.uncompressed)
	}
	pad := make([]byte, (4-data%4)%4+int64(checkSizes[x.check]))
	what := fmt.Sprintf("block %d padding and check", blk.num)
	if err := x.full(pad, what); err != nil {
		return err
	}
	padding, sum := pad[:len(pad)-checkSizes[x.check]], pad[len(pad)-checkSizes[x.check]:]
	if !allZero(padding) {
		return x.corrupt("block %d: non-zero block padding % x", blk.num, padding)
	}
	if want := blk.check.sum(); !bytes.Equal(sum, want) {
		return x.corrupt("block %d: check % x, computed % x from the uncompressed data", blk.num, sum, want)
	}
	x.records = append(x.records, indexRecord{unpadded: uint64(int64(blk.headerSize) + data + int64(len(sum))), uncompressed: uint64(blk.n)})
	return nil
}

// readIndex reads the index (its indicator byte already read) and the stream
// footer, compares them with the blocks read, and reads what follows: stream
// padding, another stream, or the end.
func (x *reader) readIndex() error {
	start := x.in.n - 1
	idx := []byte{0}
	readVLI := func(what string) (uint64, error) {
		from := len(idx)
		for {
			b, err := x.in.ReadByte()
			if err != nil {
				return 0, x.readErr("the index")
			}
			idx = append(idx, b)
			if b&0x80 == 0 || len(idx)-from == maxVLILen {
				break
			}
		}
		v, _, err := vli(idx[from:])
		if err != nil {
			return 0, errAt(ErrFormat, start, "index: %s: %v", what, err)
		}
		return v, nil
	}
	count, err := readVLI("number of records")
	if err != nil {
		return err
	}
	if count != uint64(len(x.records)) {
		return errAt(ErrFormat, start, "index lists %d blocks, the stream has %d", count, len(x.records))
	}
	for i, want := range x.records {
		var got indexRecord
		if got.unpadded, err = readVLI(fmt.Sprintf("record %d", i+1)); err != nil {
			return err
		}
		if got.uncompressed, err = readVLI(fmt.Sprintf("record %d", i+1)); err != nil {
			return err
		}
		if got != want {
			return errAt(ErrFormat, start, "index record %d: unpadded size %d and uncompressed size %d, block %d has %d and %d",
				i+1, got.unpadded, got.uncompressed, i+1, want.unpadded, want.uncompressed)
		}
	}
	tail := make([]byte, (4-len(idx)%4)%4+4)
	if err := x.full(tail, "the index"); err != nil {
		return err
	}
	padding := tail[:len(tail)-4]
	if !allZero(padding) {
		return x.corrupt("non-zero index padding % x", padding)
	}
	idx = append(idx, padding...)
	if got, want := binary.LittleEndian.Uint32(tail[len(tail)-4:]), crc32.ChecksumIEEE(idx); got != want {
		return errAt(ErrFormat, start, "index: CRC32 %#08x, computed %#08x", got, want)
	}
	indexSize := len(idx) + 4

	off := x.in.n
	var f [streamFooterSize]byte
	if err := x.full(f[:], "the stream footer"); err != nil {
		return err
	}
	if got, want := binary.LittleEndian.Uint32(f[:4]), crc32.ChecksumIEEE(f[4:10]); got != want {
		return errAt(ErrFormat, off, "stream footer CRC32 %#08x, computed %#08x", got, want)
	}
	if !bytes.Equal(f[10:], footerMagic) {
		return errAt(ErrFormat, off, "stream footer magic % x, expected % x", f[10:], footerMagic)
	}
	if got := (int64(binary.LittleEndian.Uint32(f[4:8])) + 1) * 4; got != int64(indexSize) {
		return errAt(ErrFormat, off, "stream footer gives an index of %d bytes, it has %d", got, indexSize)
	}
	if [2]byte(f[8:10]) != x.flags {
		return errAt(ErrFormat, off, "stream footer flags % x differ from the header's % x", f[8:10], x.flags)
	}
	return x.nextStream()
}

// nextStream reads the stream padding and the next stream header, or
// returns io.EOF at the end of the input.
func (x *reader) nextStream() error {
	for {
		var b [4]byte
		off := x.in.n
		n, err := io.ReadFull(&x.in, b[:])
		switch {
		case n == 0 && err == io.EOF:
			if x.in.err != nil {
				return x.readErr("the end of the stream")
			}
			return io.EOF
		case err != nil:
			if x.in.err != nil {
				return x.readErr("stream padding")
			}
			return errAt(ErrFormat, off, "%d bytes after the stream, expected stream padding (groups of four zero bytes) or another stream", n)
		case b == [4]byte{}:
			continue
		case bytes.Equal(b[:], headerMagic[:4]):
			return x.readStreamHeader(b[:])
		default:
			return errAt(ErrFormat, off, "data after the stream (% x), expected stream padding or another stream", b)
		}
	}
}

// errTooLong reports more uncompressed data than the block header records.
var errTooLong = errors.New("block too long")

// blockReader decodes one block.
type blockReader struct {
	num          int // 1-based, in its stream
	headerSize   int
	compressed   int64 // from the header, -1 if absent
	uncompressed int64 // from the header, -1 if absent
	dataStart    int64 // offset of the compressed data
	limit        *io.LimitedReader
	r            io.Reader // the uncompressed data
	n            int64     // bytes of it read so far
	check        *check
}

// read reads uncompressed data; done reports the end of the block's data.
func (b *blockReader) read(p []byte) (n int, done bool, err error) {
	n, err = b.r.Read(p)
	b.n += int64(n)
	if b.uncompressed >= 0 && b.n > b.uncompressed {
		return 0, false, errTooLong
	}
	b.check.write(p[:n])
	switch err {
	case io.EOF:
		return n, true, nil
	case nil:
		return n, false, nil
	}
	return 0, false, err
}

// check computes a block's check of the uncompressed data.
type check struct {
	id  byte
	c32 uint32
	c64 uint64
	sha hash.Hash
}

var crc64Table = crc64.MakeTable(crc64.ECMA)

func newCheck(id byte) *check {
	c := &check{id: id}
	if id == checkSHA256 {
		c.sha = sha256.New()
	}
	return c
}

func (c *check) write(p []byte) {
	switch c.id {
	case checkCRC32:
		c.c32 = crc32.Update(c.c32, crc32.IEEETable, p)
	case checkCRC64:
		c.c64 = crc64.Update(c.c64, crc64Table, p)
	case checkSHA256:
		c.sha.Write(p)
	}
}

// sum returns the check field as stored: CRCs little-endian.
func (c *check) sum() []byte {
	switch c.id {
	case checkCRC32:
		return binary.LittleEndian.AppendUint32(nil, c.c32)
	case checkCRC64:
		return binary.LittleEndian.AppendUint64(nil, c.c64)
	case checkSHA256:
		return c.sha.Sum(nil)
	}
	return nil
}

// x86Reader undoes the x86 BCJ filter on the data of r.
type x86Reader struct {
	r   io.Reader
	f   x86Filter
	buf []byte
	// buf[start:done] is decoded and not yet returned; buf[done:end] waits
	// for more bytes before it can be decoded.
	start, done, end int
	err              error // of r, once it was returned
}

func (x *x86Reader) Read(p []byte) (int, error) {
	for {
		if x.start < x.done {
			n := copy(p, x.buf[x.start:x.done])
			x.start += n
			return n, nil
		}
		if x.err != nil {
			return 0, x.err
		}
		x.end = copy(x.buf, x.buf[x.done:x.end])
		x.start, x.done = 0, 0
		n, err := x.r.Read(x.buf[x.end:])
		x.end += n
		x.done = x.f.code(x.buf[:x.end], false)
		if err == io.EOF {
			x.done = x.end // the last bytes stay as they are
		}
		if err != nil {
			x.err = err
		}
	}
}
