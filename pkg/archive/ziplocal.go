package archive

import (
	"archive/zip"
	"bufio"
	"bytes"
	"cmp"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"slices"
)

// zipLocal is an entry's local header: where it is, and its fixed part.
type zipLocal struct {
	f        *zip.File
	at, data int64 // the header's offset and its data's
	end      int64 // the end of its data
	hdr      [zipLocalLen]byte
}

// checkLocalHeaders refuses a zip whose local headers say otherwise than
// its central directory. archive/zip takes an entry's name, flags, method,
// CRC-32 and sizes from the central directory, and the local header only
// to find the data; unzip takes the method, CRC-32 and sizes from the
// local header, streaming readers (bsdtar, Java's ZipInputStream) take
// everything from it, and Python refuses another name. A zip whose two
// headers of an entry disagree would show a reviewer something else than
// what updeb packages. Each entry's local header and data must also lie
// before the central directory, apart from every other entry's (unzip
// refuses overlapping entries): which bounds what is read here by the
// file's size.
func (s *scan) checkLocalHeaders(r io.ReaderAt, end int64, files []*zip.File) error {
	dir, base, err := s.centralDirectory(r, end)
	if err != nil {
		return err
	}
	locals, err := s.localOffsets(dir, base, files)
	if err != nil {
		return err
	}
	_, dirStart, _ := dir.Outer()
	for i := range locals {
		if err := s.readLocal(r, &locals[i], dirStart); err != nil {
			return err
		}
	}
	byOffset := slices.SortedFunc(slices.Values(locals), func(a, b zipLocal) int { return cmp.Compare(a.at, b.at) })
	for i := 1; i < len(byOffset); i++ {
		if a, b := byOffset[i-1], byOffset[i]; b.at < a.end {
			return s.errorf(ErrUnsafe, b.f.Name, nil, "its local header, at byte %d, lies inside the local header or data of entry %s (bytes %d to %d): unzip refuses overlapping entries", b.at, quoteEntry(a.f.Name), a.at, a.end)
		}
	}
	if err := s.checkUnlisted(r, byOffset, dirStart); err != nil {
		return err
	}
	for i := range locals {
		if err := s.checkStoredDescriptor(r, &locals[i]); err != nil {
			return err
		}
	}
	for i := range locals {
		if err := s.compareLocal(r, &locals[i]); err != nil {
			return err
		}
	}
	for i := range locals {
		if err := s.checkDeflateEnd(r, &locals[i]); err != nil {
			return err
		}
	}
	return nil
}

// checkDeflateEnd refuses a deflated entry whose deflate stream ends before
// its compressed size does. archive/zip stops reading at the stream's end
// and never looks at the bytes after it; streaming readers (bsdtar reading
// a pipe) read the entry's data descriptor, or its next entry's local
// header, right after the stream's end: a local header hidden there is an
// entry they extract that unzip, Python and updeb do not list. So every
// deflated entry, wanted or not, is inflated here (through the Budget) to
// find where its stream ends.
func (s *scan) checkDeflateEnd(r io.ReaderAt, l *zipLocal) error {
	if l.f.Method != zip.Deflate || l.f.Flags&0x1 != 0 {
		return nil
	}
	// flate reads a source that is an io.ByteReader byte by byte, with no
	// read-ahead: what it counts is what the stream took.
	src := &consumed{r: bufio.NewReader(io.NewSectionReader(r, l.data, int64(l.f.CompressedSize64)))}
	zr := flate.NewReader(src)
	defer zr.Close()
	if _, err := io.Copy(io.Discard, &budget{s: s, src: zr, entry: l.f.Name}); err != nil {
		return s.wrapRead(l.f.Name, err)
	}
	if src.n != int64(l.f.CompressedSize64) {
		return s.errorf(ErrUnsafe, l.f.Name, nil, "its deflate stream ends after %d of its %d compressed bytes: streaming zip readers (bsdtar reading a pipe) read what follows it as the next records, entries that unzip, Python and updeb do not list",
			src.n, l.f.CompressedSize64)
	}
	return nil
}

// consumed counts the bytes read from r.
type consumed struct {
	r *bufio.Reader
	n int64
}

func (c *consumed) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *consumed) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.n++
	}
	return b, err
}

// checkUnlisted refuses bytes before the central directory (at dirStart)
// that a streaming reader would read as entries the directory does not
// list. Streaming readers (bsdtar reading a pipe, Java's ZipInputStream)
// read a zip from its first byte, one local header after another, and
// never see the directory: a local header hidden between two entries, or
// at the start of a file whose directory places its first entry later,
// is an entry they extract (the last of a name wins) that unzip, Python
// and updeb do not list. So after each entry's data only its data
// descriptor may follow (flag bit 3), and bytes before the first entry (a
// self-extracting stub) must not start as a zip record does.
func (s *scan) checkUnlisted(r io.ReaderAt, byOffset []zipLocal, dirStart int64) error {
	const unlisted = "streaming zip readers (bsdtar reading a pipe) read entries there that unzip, Python and updeb do not list"
	first := dirStart
	if len(byOffset) > 0 {
		first = byOffset[0].at
	}
	head := make([]byte, 2)
	if n, _ := r.ReadAt(head, 0); first >= 2 && n == 2 && string(head) == "PK" {
		return s.errorf(ErrUnsafe, "", nil, "its first %d bytes, before the first entry its central directory lists, start as a zip record (\"PK\"): %s", first, unlisted)
	}
	for i, l := range byOffset {
		next, what := dirStart, "the central directory"
		if i+1 < len(byOffset) {
			next, what = byOffset[i+1].at, "the local header of entry "+quoteEntry(byOffset[i+1].f.Name)
		}
		gap := next - l.end
		if l.f.Flags&0x8 == 0 {
			if gap > 0 {
				return s.errorf(ErrUnsafe, l.f.Name, nil, "the %d bytes after its data (bytes %d to %d, before %s) belong to no entry: %s", gap, l.end, next, what, unlisted)
			}
			continue
		}
		d := make([]byte, min(gap, zipDescriptorMax+1))
		n, _ := r.ReadAt(d, l.end)
		crc, csize, usize, ok := zipDescriptor(d[:n])
		if n < len(d) || !ok {
			return s.errorf(ErrUnsafe, l.f.Name, nil, "the %d bytes after its data (bytes %d to %d, before %s) are not the data descriptor its flags announce (%d to %d bytes: an optional signature, the CRC-32 and the sizes): %s",
				gap, l.end, next, what, zipDescriptorMin, zipDescriptorMax, unlisted)
		}
		// archive/zip checks the descriptor's CRC-32 only when it reads
		// the entry, and never its sizes; bsdtar reading a pipe fails
		// the entry on either.
		if err := s.compareSums(l.f, "its data descriptor", crc, csize, usize); err != nil {
			return err
		}
	}
	return nil
}

// checkStoredDescriptor refuses a stored entry with a data descriptor
// whose data holds what a streaming reader takes for that descriptor: the
// descriptor's signature, then the CRC-32 of the data before it. A stored
// entry's data has no end of its own, and libarchive (bsdtar reading a
// pipe) ends it at the first such signature, then reads what follows as
// the next local headers: entries unzip, Python and updeb do not list, and
// the entry cut short. Data that holds the signature by chance also holds
// the CRC-32 after it once in 2^32.
func (s *scan) checkStoredDescriptor(r io.ReaderAt, l *zipLocal) error {
	if l.f.Method != zip.Store || l.f.Flags&0x8 == 0 {
		return nil
	}
	const look = 8 // the signature and the CRC-32
	sig := binary.LittleEndian.AppendUint32(nil, zipDescriptorSig)
	data := io.NewSectionReader(r, l.data, l.end-l.data)
	buf := make([]byte, 64<<10)
	var (
		crc   uint32 // of the data before buf[done]
		done  int    // how much of buf crc covers
		kept  int    // bytes at buf's start carried over from the last read
		start int64  // the offset of buf[0] in the data
	)
	for {
		if err := s.ctx.Err(); err != nil {
			return err
		}
		n, err := io.ReadFull(data, buf[kept:])
		n += kept
		for i := 0; ; {
			j := bytes.Index(buf[i:n], sig)
			if j < 0 || i+j+look > n {
				break
			}
			p := i + j
			crc, done = crc32.Update(crc, crc32.IEEETable, buf[done:p]), p
			if binary.LittleEndian.Uint32(buf[p+4:]) == crc {
				return s.errorf(ErrUnsafe, l.f.Name, nil, "is stored with a data descriptor, and its data holds one at byte %d of it (the signature and the CRC-32 of the data before it): streaming zip readers (bsdtar reading a pipe) end its data there, and read what follows as entries that unzip, Python and updeb do not list", start+int64(p))
			}
			i = p + 1
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil
		}
		if err != nil {
			return s.errorf(ErrCorrupt, l.f.Name, err, "cannot read its data")
		}
		// The last look-1 bytes may start a signature the next read ends.
		keep := n - (look - 1)
		crc = crc32.Update(crc, crc32.IEEETable, buf[done:keep])
		kept = copy(buf, buf[keep:n])
		start += int64(keep)
		done = 0
	}
}

// A data descriptor is an optional signature, then the CRC-32 and the
// compressed and uncompressed sizes, of 4 bytes each or, in a zip64 entry,
// 8 (APPNOTE.TXT 4.3.9): 12 to 24 bytes, too few to hide a local header in.
const (
	zipDescriptorSig = 0x08074b50
	zipDescriptorMin = 12
	zipDescriptorMax = 24
)

// zipDescriptor reads d as one data descriptor, 12 or 20 bytes after a
// signature or not, and returns its CRC-32 and sizes; false if d is no
// descriptor.
func zipDescriptor(d []byte) (crc uint32, csize, usize uint64, ok bool) {
	if len(d) >= 4 && binary.LittleEndian.Uint32(d) == zipDescriptorSig {
		d = d[4:]
	}
	switch len(d) {
	case 12:
		return binary.LittleEndian.Uint32(d), uint64(binary.LittleEndian.Uint32(d[4:])), uint64(binary.LittleEndian.Uint32(d[8:])), true
	case 20:
		return binary.LittleEndian.Uint32(d), binary.LittleEndian.Uint64(d[4:]), binary.LittleEndian.Uint64(d[12:]), true
	}
	return 0, 0, 0, false
}

// readRecord reads len(b) bytes at off and reports whether they start with
// the record signature sig.
func readRecord(r io.ReaderAt, b []byte, off int64, sig uint32) bool {
	n, _ := r.ReadAt(b, off)
	return n == len(b) && binary.LittleEndian.Uint32(b) == sig
}

// centralDirectory returns the central directory as the end record at end
// places it (through the zip64 end record just before its locator, where
// Python reads it), and the base its local header offsets are relative to:
// the length of data before the zip (a self-extracting stub), or 0.
func (s *scan) centralDirectory(r io.ReaderAt, end int64) (*io.SectionReader, int64, error) {
	rec := make([]byte, zipEnd64Len)
	if !readRecord(r, rec[:zipEndLen], end, zipEndSig) {
		return nil, 0, s.errorf(ErrCorrupt, "", nil, "cannot read its end-of-central-directory record")
	}
	dirSize, dirOffset := uint64(binary.LittleEndian.Uint32(rec[12:])), uint64(binary.LittleEndian.Uint32(rec[16:]))
	if loc := rec[:zipLocator64Len]; end >= zipLocator64Len+zipEnd64Len && readRecord(r, loc, end-zipLocator64Len, zipLocator64Sig) {
		end -= zipLocator64Len + zipEnd64Len
		if binary.LittleEndian.Uint64(loc[8:]) != uint64(end) || !readRecord(r, rec, end, zipEnd64Sig) {
			return nil, 0, s.errorf(ErrCorrupt, "", nil, "its zip64 end-of-central-directory record is not just before its locator, where the locator places it")
		}
		dirSize, dirOffset = binary.LittleEndian.Uint64(rec[40:]), binary.LittleEndian.Uint64(rec[48:])
	}
	if dirSize > uint64(end) || dirOffset > uint64(end)-dirSize {
		return nil, 0, s.errorf(ErrCorrupt, "", nil, "its end record places the central directory (%d bytes at offset %d) outside the %d bytes before it", dirSize, dirOffset, end)
	}
	start := end - int64(dirSize)
	base := start - int64(dirOffset)
	// archive/zip reads a directory at the offset the end record gives,
	// with no base, if it finds one there.
	if base > 0 && readRecord(r, rec[:4], int64(dirOffset), zipCentralSig) {
		return nil, 0, s.errorf(ErrCorrupt, "", nil, "its end record places the central directory at byte %d (the zip starting at byte %d), but a central directory record is at byte %d, where archive/zip reads it: zip readers would read different directories", start, base, dirOffset)
	}
	return io.NewSectionReader(r, start, int64(dirSize)), base, nil
}

// localOffsets reads the central directory's records, which must be those
// archive/zip read (files), fill it, and nothing more, and returns where
// each entry's local header is.
func (s *scan) localOffsets(dir *io.SectionReader, base int64, files []*zip.File) ([]zipLocal, error) {
	br := bufio.NewReader(dir)
	locals := make([]zipLocal, len(files))
	var rec [zipCentralLen]byte
	var vars []byte
	for i, f := range files {
		_, err := io.ReadFull(br, rec[:])
		n, m, k := int(binary.LittleEndian.Uint16(rec[28:])), int(binary.LittleEndian.Uint16(rec[30:])), int(binary.LittleEndian.Uint16(rec[32:]))
		same := err == nil && binary.LittleEndian.Uint32(rec[:]) == zipCentralSig && n == len(f.Name) && m == len(f.Extra) && k == len(f.Comment)
		if same {
			vars = slices.Grow(vars[:0], n+m+k)[:n+m+k]
			_, err = io.ReadFull(br, vars)
			same = err == nil && string(vars[:n]) == f.Name && bytes.Equal(vars[n:n+m], f.Extra) && string(vars[n+m:]) == f.Comment
		}
		usize, csize, off := uint64(f.UncompressedSize), uint64(f.CompressedSize), uint64(binary.LittleEndian.Uint32(rec[42:]))
		if !same || !zip64Values(f.Extra, &usize, &csize, &off) || off > math.MaxInt64-uint64(base) {
			return nil, s.errorf(ErrCorrupt, "", nil, "its central directory is not the %d bytes before its end record, as that record says: zip readers would list different entries", dir.Size())
		}
		locals[i] = zipLocal{f: f, at: base + int64(off)}
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return nil, s.errorf(ErrCorrupt, "", nil, "its central directory is not the %d bytes before its end record, as that record says: zip readers would list different entries", dir.Size())
	}
	return locals, nil
}

// readLocal reads the fixed part of l's local header and checks that it is
// where archive/zip found l's data, and that the data ends before the
// central directory (at dirStart).
func (s *scan) readLocal(r io.ReaderAt, l *zipLocal, dirStart int64) error {
	if l.at > dirStart-zipLocalLen || !readRecord(r, l.hdr[:], l.at, zipLocalSig) {
		return s.errorf(ErrCorrupt, l.f.Name, nil, "no local header at byte %d, where the central directory places it", l.at)
	}
	l.data = l.at + zipLocalLen + int64(binary.LittleEndian.Uint16(l.hdr[26:])) + int64(binary.LittleEndian.Uint16(l.hdr[28:]))
	if off, err := l.f.DataOffset(); err != nil || off != l.data {
		return s.errorf(ErrCorrupt, l.f.Name, err, "archive/zip reads its data elsewhere than after its local header at byte %d", l.at)
	}
	if l.f.CompressedSize64 > uint64(dirStart-l.data) || l.data > dirStart {
		return s.errorf(ErrCorrupt, l.f.Name, nil, "its %d bytes of data, at byte %d, run past the start of the central directory (byte %d)", l.f.CompressedSize64, l.data, dirStart)
	}
	l.end = l.data + int64(l.f.CompressedSize64)
	return nil
}

// compareLocal checks that l's local header says what its central
// directory entry says: the name, the flags, the method and, without a
// data descriptor (flag bit 3: they follow the data, and the local header
// may hold zeros), the CRC-32 and sizes, those of a zip64 entry in its
// local zip64 extra field; and that a Unicode path field in it, which
// readers of local headers take for the name, repeats the name.
func (s *scan) compareLocal(r io.ReaderAt, l *zipLocal) error {
	h := l.hdr[:]
	vars := make([]byte, l.data-l.at-zipLocalLen)
	if _, err := r.ReadAt(vars, l.at+zipLocalLen); err != nil {
		return s.errorf(ErrCorrupt, l.f.Name, err, "cannot read its local header")
	}
	name, extra := vars[:binary.LittleEndian.Uint16(h[26:])], vars[binary.LittleEndian.Uint16(h[26:]):]
	if string(name) != l.f.Name {
		return s.disagree(l.f, "its local header", "the name", quoteEntry(string(name)), quoteEntry(l.f.Name))
	}
	f := l.f
	mask := uint16(zipReadFlags)
	if !isASCII(l.f.Name) {
		mask |= zipFlagUTF8 // how the name's bytes are read
	}
	if flags := binary.LittleEndian.Uint16(h[6:]); flags&mask != f.Flags&mask {
		return s.disagree(f, "its local header", "the flags", fmt.Sprintf("%#04x", flags), fmt.Sprintf("%#04x", f.Flags))
	}
	if method := binary.LittleEndian.Uint16(h[8:]); method != f.Method {
		return s.disagree(f, "its local header", "the compression method", method, f.Method)
	}
	if f.Flags&0x8 == 0 {
		crc, csize, usize := binary.LittleEndian.Uint32(h[14:]), uint64(binary.LittleEndian.Uint32(h[18:])), uint64(binary.LittleEndian.Uint32(h[22:]))
		zip64Values(extra, &usize, &csize)
		if err := s.compareSums(f, "its local header", crc, csize, usize); err != nil {
			return err
		}
	}
	if u, ok := unicodePath(extra); ok && u != f.Name {
		return s.errorf(ErrUnsafe, f.Name, nil, "the Info-ZIP Unicode path field of its local header names it %s: readers that go by local headers (bsdtar) extract it under that name, updeb reads the entry's own", quoteEntry(u))
	}
	for _, x := range []struct {
		record string
		extra  []byte
	}{{"the xl field of its local header", extra}, {"the xl field of its central directory entry", f.Extra}} {
		if err := s.compareXL(f, x.record, x.extra); err != nil {
			return err
		}
	}
	return nil
}

// libarchive's xl extra field (0x6c78) repeats an entry's "version made
// by" and external attributes, which hold its Unix mode, so that a
// streaming reader knows them; bsdtar takes them from the field when it
// has one, in a local header or a central directory entry, over the
// central directory's own fields, which archive/zip and unzip read: an
// entry that is a regular file to updeb would be a symlink to bsdtar.
const xlFieldID = 0x6c78

// compareXL refuses f if the xl field in extra (record: where it is) gives
// another system or other external attributes than its central directory
// entry.
func (s *scan) compareXL(f *zip.File, record string, extra []byte) error {
	d, ok := extraField(extra, xlFieldID, 1)
	if !ok {
		return nil
	}
	// The bitmap of the fields that follow runs on while a byte's high
	// bit is set; libarchive reads the first byte's bits.
	bitmap := d[0]
	for last := bitmap; last&0x80 != 0 && len(d) > 1; {
		d, last = d[1:], d[1]
	}
	d = d[1:]
	if bitmap&1 != 0 {
		if len(d) < 2 {
			return nil
		}
		if system := binary.LittleEndian.Uint16(d) >> 8; system != f.CreatorVersion>>8 {
			return s.disagree(f, record, "the system that made it", system, f.CreatorVersion>>8)
		}
		d = d[2:]
	}
	if bitmap&2 != 0 {
		if len(d) < 2 {
			return nil
		}
		d = d[2:]
	}
	if bitmap&4 != 0 && len(d) >= 4 {
		if attrs := binary.LittleEndian.Uint32(d); attrs != f.ExternalAttrs {
			return s.disagree(f, record, "the external attributes (a Unix mode in the high half)", fmt.Sprintf("%#08x", attrs), fmt.Sprintf("%#08x", f.ExternalAttrs))
		}
	}
	return nil
}

// The general purpose flags that change what a reader reads: encryption
// (bits 0 and 6), a data descriptor after the data (3), a masked local
// header (13); and UTF-8 names (11), for a name that is not ASCII. The
// others (the deflate level in bits 1 and 2, ...) change nothing read, and
// writers set them in one header alone.
const (
	zipReadFlags = 0x0001 | 0x0008 | 0x0040 | 0x2000
	zipFlagUTF8  = 0x0800
)

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// compareSums refuses f if the CRC-32 and sizes its local header or data
// descriptor (record) holds are not those of its central directory entry.
func (s *scan) compareSums(f *zip.File, record string, crc uint32, csize, usize uint64) error {
	switch {
	case crc != f.CRC32:
		return s.disagree(f, record, "the CRC-32", fmt.Sprintf("%08x", crc), fmt.Sprintf("%08x", f.CRC32))
	case csize != f.CompressedSize64:
		return s.disagree(f, record, "the compressed size", csize, f.CompressedSize64)
	case usize != f.UncompressedSize64:
		return s.disagree(f, record, "the size", usize, f.UncompressedSize64)
	}
	return nil
}

// disagree refuses f, whose local header or data descriptor (record) says
// local where its central directory entry says central.
func (s *scan) disagree(f *zip.File, record, what string, local, central any) error {
	return s.errorf(ErrUnsafe, f.Name, nil, "%s and its central directory entry disagree on %s (%v and %v): zip tools differ on which one they trust, so they would not all read what updeb packages", record, what, local, central)
}

// zip64Values replaces each value that is 0xFFFFFFFF with the next one of
// the zip64 extra field in extra, in order, as archive/zip reads a central
// directory entry's; false if the field is missing or too short.
func zip64Values(extra []byte, vals ...*uint64) bool {
	d, _ := extraField(extra, zip64ExtraID, 0)
	for _, v := range vals {
		if *v != math.MaxUint32 {
			continue
		}
		if len(d) < 8 {
			return false
		}
		*v, d = binary.LittleEndian.Uint64(d), d[8:]
	}
	return true
}
