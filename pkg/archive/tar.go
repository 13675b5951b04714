package archive

import (
	"archive/tar"
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/updeb/updeb/pkg/multigzip"
	"github.com/updeb/updeb/pkg/xzpar"
)

// readBufferSize is the read size on the compressed file.
const readBufferSize = 256 << 10

func (s *scan) selectTarFile(kind Kind) error {
	f, fi, err := s.open("the archive")
	if err != nil {
		return err
	}
	defer f.Close()
	s.bud = NewBudget(s.ctx, s.lim, fi.Size())
	br := bufio.NewReaderSize(s.pinned(f), readBufferSize)
	head, _ := br.Peek(512)
	head = bytes.Clone(head)
	if err := s.selectTar(kind, br); err != nil {
		return s.withFormat(err, kind, head)
	}
	if err := s.checkPin(br); err != nil {
		return err
	}
	if err := s.finish(); err != nil {
		return err
	}
	for len(s.hardlinks) > 0 {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("archive: %w", err)
		}
		br := bufio.NewReaderSize(s.pinned(f), readBufferSize)
		if err := s.hardlinkPass(kind, br); err != nil {
			return err
		}
		if err := s.checkPin(br); err != nil {
			return err
		}
	}
	return nil
}

// hardlinkPass reads the archive again and hands out, for each regular
// file that wanted hardlinks point to, the first of them with the file's
// content. Every entry passed its checks in the first read; this one
// checks only that the archive still has the same files, and its gzip or
// xz checksums.
func (s *scan) hardlinkPass(kind Kind, r io.Reader) error {
	pending := map[string]hardlink{} // target -> the hardlink handed out by this pass
	var later []hardlink
	for _, h := range s.hardlinks {
		if _, taken := pending[h.target.raw]; taken {
			later = append(later, h)
			continue
		}
		pending[h.target.raw] = h
	}
	s.hardlinks = later
	err := s.eachTarEntry(kind, r, func(hdr *tar.Header, tr *tar.Reader) error {
		name, _ := cleanName(hdr.Name)
		h, ok := pending[name]
		if !ok || tarEntry(hdr).typ != typeFile {
			return nil
		}
		delete(pending, name)
		if hdr.Size != h.target.size {
			return s.errorf(ErrCorrupt, hdr.Name, nil, "changed while it was read: %d bytes, %d the first time", hdr.Size, h.target.size)
		}
		return s.deliver(Member{Name: h.name, Size: h.target.size, Mode: h.target.mode}, hdr.Name, tr)
	})
	if err != nil {
		return err
	}
	for target, h := range pending {
		return s.errorf(ErrCorrupt, h.raw, nil, "the archive changed while it was read: the file %q this hardlink points to is gone", target)
	}
	return nil
}

// eachTarEntry decompresses r as kind says and calls fn for each header of
// the tar stream, with the reader of its data; then it checks what follows
// the end-of-archive marker (drainTail).
func (s *scan) eachTarEntry(kind Kind, r io.Reader, fn func(*tar.Header, *tar.Reader) error) error {
	dec, err := s.decompressor(kind, r)
	if err != nil {
		return err
	}
	b := &budget{s: s, src: dec}
	s.tap = &headerTap{r: b, metaAt: -1, endAt: -1}
	tr := tar.NewReader(s.tap)
	var from int64 // where the headers the next call of Next reads begin, or -1: somewhere after what was read
	for {
		s.tap.next(from)
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if errors.Is(err, tar.ErrInsecurePath) {
			err = nil // only with GODEBUG=tarinsecurepath=0; check() decides
		}
		if err != nil {
			return s.tarError(b.entry, err)
		}
		b.entry = hdr.Name
		from = s.tap.afterData(hdr)
		if err := fn(hdr, tr); err != nil {
			return err
		}
	}
	return s.drainTail(b)
}

// decompressor opens the compression layer of a tar archive. gzip and xz
// both read concatenated streams as one, like GNU tar; after the last
// stream only zero bytes may follow (xz's stream padding; gzip's, see
// multigzip.ZeroPadding); anything else is an error.
func (s *scan) decompressor(kind Kind, r io.Reader) (io.Reader, error) {
	var (
		dec    io.Reader
		err    error
		format string
	)
	switch kind {
	case TarGz, Tgz:
		format = "gzip"
		dec, err = multigzip.NewReader(s.ctx, r, multigzip.ZeroPadding)
	case TarXz:
		format = "xz"
		// Our reader: it checks every CRC, caps the dictionary at 64 MiB
		// whatever a hostile header asks for, and undoes x86 BCJ filters.
		dec, err = xzpar.NewReader(r)
	default:
		return r, nil
	}
	if err == io.EOF || err == multigzip.ErrEmpty {
		return nil, s.errorf(ErrCorrupt, "", nil, "empty file, expected %s data", format)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, s.errorf(ErrCorrupt, "", err, "truncated: the file ends inside the %s header", format)
	}
	if errors.Is(err, xzpar.ErrUnsupported) {
		return nil, s.errorf(ErrCorrupt, "", err, "%s", unsupportedXz)
	}
	if errors.Is(err, gzip.ErrHeader) && !errors.Is(err, multigzip.ErrNotGzip) {
		return nil, s.errorf(ErrCorrupt, "", err, "a gzip header updeb's reader does not take")
	}
	if err != nil {
		return nil, s.errorf(ErrCorrupt, "", err, "not %s data", format)
	}
	return dec, nil
}

func (s *scan) selectTar(kind Kind, r io.Reader) error {
	return s.eachTarEntry(kind, r, func(hdr *tar.Header, tr *tar.Reader) error {
		if hdr.Typeflag == tar.TypeXGlobalHeader {
			// pax_global_header (git archive writes one): metadata, not a member;
			// counted so a flood of them still meets MaxEntries.
			if err := s.checkGlobalAfterMeta(hdr); err != nil {
				return err
			}
			s.entries++
			if s.entries > s.lim.MaxEntries {
				return s.errorf(ErrLimit, hdr.Name, nil, "more than %d entries (Limits.MaxEntries)", s.lim.MaxEntries)
			}
			for _, k := range slices.Sorted(maps.Keys(hdr.PAXRecords)) {
				if k == "path" || k == "linkpath" || k == "size" || strings.HasPrefix(k, "GNU.sparse.") {
					// GNU tar applies them to every later entry,
					// archive/tar ignores them: each would read
					// other names, links or entries.
					return s.errorf(ErrUnsafe, "", nil, "a pax global header sets %s to %s, which GNU tar applies to every later entry and updeb's reader ignores", k, quoteEntry(hdr.PAXRecords[k]))
				}
			}
			return nil
		}
		if hdr.Typeflag == typeSolarisExtended {
			// archive/tar knows no such header: it reads it as an
			// entry, and the next entry as it stands.
			return s.errorf(ErrUnsafe, hdr.Name, nil, "is a Solaris extended header (type X), whose records GNU tar, bsdtar and Python apply to the entry after it, as a pax header's, and updeb's reader (archive/tar) does not: they would not read the entry updeb checks")
		}
		if err := s.checkRepeatedMeta(hdr); err != nil {
			return err
		}
		if err := s.checkPAXNames(hdr); err != nil {
			return err
		}
		if err := s.checkPrefix(hdr); err != nil {
			return err
		}
		if err := s.checkV7Prefix(hdr); err != nil {
			return err
		}
		if err := s.checkSizeField(hdr); err != nil {
			return err
		}
		e := tarEntry(hdr)
		name, wanted, err := s.check(e)
		if err == nil && hdr.Size != 0 && headerOnly(e.typ) {
			// archive/tar and dpkg read no data for these, GNU tar skips
			// a symlink's, libarchive a hardlink's: the same bytes would
			// be other entries to each.
			err = s.errorf(ErrUnsafe, hdr.Name, nil, "is %s with a size of %d bytes: tar readers disagree on whether data follows it, and would read different entries after it", e.typ, hdr.Size)
		}
		if err != nil || !wanted {
			return err
		}
		return s.deliver(Member{Name: name, Size: e.size, Mode: e.mode}, hdr.Name, tr)
	})
}

// checkPAXNames refuses an entry whose pax header gives its path or link
// target otherwise than the header archive/tar took it from. archive/tar
// lets a GNU long name or long link header (types L and K) override the
// pax record, and keeps the ustar field for an empty record; GNU tar and
// bsdtar take the pax record (after the GNU header, GNU tar alone): the
// entry updeb checks and packages as "bin/tool", or its symlink to "x",
// would be "../evil", or a symlink to "/etc/shadow", to them. A PAX
// sparse file's name is its GNU.sparse.name record, where all of them
// take it.
func (s *scan) checkPAXNames(hdr *tar.Header) error {
	for _, f := range []struct{ key, got, what, gnu string }{{"path", hdr.Name, "path", "long name"}, {"linkpath", hdr.Linkname, "link target", "long link"}} {
		pax, ok := hdr.PAXRecords[f.key]
		if sparse := hdr.PAXRecords["GNU.sparse.name"]; f.key == "path" && sparse != "" {
			pax, ok = sparse, true
		}
		if ok && pax != f.got {
			return s.errorf(ErrUnsafe, hdr.Name, nil, "its pax header gives its %s as %s, its GNU %s or ustar header as %s: tar readers differ on which they take (GNU tar the pax one, updeb's reader the other), so they would not all read the entry updeb checks",
				f.what, quoteEntry(pax), f.gnu, quoteEntry(f.got))
		}
	}
	return nil
}

// headerTap passes the tar stream to archive/tar and keeps what it needs
// of the headers archive/tar reads but does not report: the last block
// with the ustar or GNU magic, which is the header of the entry Next
// returned when that entry's header has one (checkPrefix), where the
// last local pax or GNU long name or link header was
// (checkGlobalAfterMeta), and a second one of a kind before one entry
// (checkRepeatedMeta).
type headerTap struct {
	r      io.Reader
	off    int64           // bytes read so far
	part   [blockSize]byte // the block being read, when reads end inside it
	last   [blockSize]byte // the last whole block with the ustar or GNU magic
	seen   bool            // last holds one
	metaAt int64           // the offset of the last pax (x), long name (L) or long link (K) header; -1: none
	// from is where the headers read by the current call of Next begin
	// (or where the call began, when that is not known): the data of the
	// entry before, which Next skips first, may be a tar of its own, whose
	// headers are not this archive's.
	from     int64
	firstAt  [len(metaTypes)]int64 // per type of metaTypes, its first header since from; -1: none
	repeatAt int64                 // a second header of one of metaTypes since from; -1: none
	repeatOf int64                 // the first one of its type
	repeated byte                  // its type
	end      [blockSize]byte       // the last whole block read, when a read ended at a block's end
	endAt    int64                 // its offset; -1: none
}

// metaTypes are the local headers that say something about the entry
// after them: a pax header (x), a GNU long name (L) or long link (K).
const metaTypes = "xLK"

// next readies the tap for a call of Next whose headers begin at from
// (-1: somewhere after the bytes read so far).
func (t *headerTap) next(from int64) {
	t.from = max(from, t.off)
	t.repeatAt, t.repeatOf = -1, -1
	for i := range t.firstAt {
		t.firstAt[i] = -1
	}
}

// afterData returns where the headers after the entry Next just returned
// begin, as archive/tar finds them: after its data in the archive and
// the padding to a whole block; -1 for a sparse file, whose data in the
// archive is not hdr.Size bytes long.
func (t *headerTap) afterData(hdr *tar.Header) int64 {
	switch tarEntry(hdr).typ {
	case typeDir, typeSymlink, typeHardlink, typeSpecial:
		return t.off // no data, whatever the header says (archive/tar's isHeaderOnlyType)
	case typeSparse:
		return -1
	}
	// A pax global header comes back with a size of 0: archive/tar read its data.
	return t.off + hdr.Size + (-hdr.Size & (blockSize - 1))
}

const blockSize = 512

func (t *headerTap) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	for q := p[:n]; len(q) > 0; {
		at := int(t.off % blockSize)
		if at == 0 && len(q) >= blockSize {
			t.keep(q[:blockSize], t.off)
			q, t.off = q[blockSize:], t.off+blockSize
			continue
		}
		c := copy(t.part[at:], q)
		q, t.off = q[c:], t.off+int64(c)
		if at+c == blockSize {
			t.keep(t.part[:], t.off-blockSize)
		}
	}
	// archive/tar reads each header whole, so the last block of the
	// read that ends a call of Next is the header of the entry it
	// returns (checkV7Prefix), with or without the ustar magic.
	if n > 0 && t.off%blockSize == 0 {
		if n >= blockSize {
			copy(t.end[:], p[n-blockSize:n])
		} else {
			t.end = t.part
		}
		t.endAt = t.off - blockSize
	}
	return n, err
}

func (t *headerTap) keep(b []byte, at int64) {
	if string(b[257:262]) != "ustar" {
		return
	}
	copy(t.last[:], b)
	t.seen = true
	i := strings.IndexByte(metaTypes, b[156])
	if i < 0 || !checksumOK(b) {
		return
	}
	t.metaAt = at
	switch {
	case at < t.from:
	case t.firstAt[i] < 0:
		t.firstAt[i] = at
	case t.repeatAt < 0:
		t.repeatAt, t.repeatOf, t.repeated = at, t.firstAt[i], b[156]
	}
}

// checkRepeatedMeta refuses an entry before which two local pax headers,
// or two GNU long name or two long link headers, come: GNU tar and
// archive/tar take the last, Python's tarfile the first (and bsdtar
// lists what GNU tar lists). Long names "bin/tool", then "junk", before
// an entry "junk" are "junk" to updeb and a second "bin/tool" to
// Python, which replaces the first when extracted. No tar writer
// repeats one.
func (s *scan) checkRepeatedMeta(hdr *tar.Header) error {
	t := s.tap
	if t.repeatAt < 0 {
		return nil
	}
	what := map[byte]string{tar.TypeXHeader: "local pax header", tar.TypeGNULongName: "GNU long name header", tar.TypeGNULongLink: "GNU long link header"}[t.repeated]
	return s.errorf(ErrUnsafe, hdr.Name, nil, "a second %s, at byte %d, follows the one at byte %d before this entry: GNU tar and updeb's reader (archive/tar) take the last, Python's tarfile the first, so they would not all read the entry updeb checks",
		what, t.repeatAt, t.repeatOf)
}

// checksumOK reports whether the header block b holds its checksum, as
// an unsigned or (as old tars wrote it) signed sum of its bytes with the
// checksum field taken for spaces.
func checksumOK(b []byte) bool {
	want, err := strconv.ParseInt(strings.Trim(string(b[148:156]), " \x00"), 8, 64)
	if err != nil {
		return false
	}
	var unsigned, signed int64
	for i, c := range b {
		if 148 <= i && i < 156 {
			c = ' '
		}
		unsigned += int64(c)
		signed += int64(int8(c))
	}
	return want == unsigned || want == signed
}

// checkGlobalAfterMeta refuses a pax global header that follows a local
// pax header or a GNU long name or link header among the headers of the
// same call of Next (not in the data of the entry before, which may be a
// tar of its own): archive/tar returns the global header at once and drops what the local
// one said, where GNU tar, bsdtar and Python apply it to the next entry.
// A long name "bin/tool" and a global header before an entry "junk" are
// "junk" to updeb and a second "bin/tool", which replaces the first, to
// them.
func (s *scan) checkGlobalAfterMeta(hdr *tar.Header) error {
	if s.tap.metaAt < s.tap.from {
		return nil
	}
	return s.errorf(ErrUnsafe, hdr.Name, nil, "a pax global header follows the local pax or GNU long name or link header at byte %d: GNU tar, bsdtar and Python apply that header to the entry after the global one, updeb's reader (archive/tar) drops it, so they would not read the entry updeb checks", s.tap.metaAt)
}

// checkPrefix refuses an entry archive/tar names otherwise than GNU tar
// and bsdtar from the prefix field of its header (bytes 345 to 500 of a
// ustar header). A GNU header has no prefix field: those bytes hold the
// access and change times. Go's writer before Go 1.8 wrote a prefix
// there, and archive/tar, reading a GNU header whose times do not parse,
// takes those bytes for a prefix of the name; GNU tar and bsdtar read the
// name field alone. "bin/tool" with "x" in the times is "x/bin/tool" to
// updeb and "bin/tool" to them: a second "bin/tool", which replaces the
// first when extracted, past the duplicate check. Likewise archive/tar
// reads a header with star's trailer ("tar" at byte 508) with star's
// shorter prefix, 131 bytes and then times, where GNU tar and bsdtar read
// the ustar prefix whole.
func (s *scan) checkPrefix(hdr *tar.Header) error {
	if !s.tap.seen {
		return nil
	}
	b := s.tap.last[:]
	name, prefix := cString(b[:100]), cString(b[345:500])
	switch {
	case string(b[257:265]) == "ustar  \x00":
		if prefix == "" || hdr.Name != prefix+"/"+name {
			return nil
		}
		return s.errorf(ErrUnsafe, hdr.Name, nil, "its GNU header names it %s, and holds %s where GNU headers hold its access and change times: updeb's reader (archive/tar) takes that for a prefix of the name (as Go's writer before 1.8 wrote one), GNU tar and bsdtar do not, so they would not read the entry updeb checks",
			quoteEntry(name), quoteEntry(prefix))
	case string(b[508:512]) == "tar\x00":
		star := cString(b[345:476])
		if star == prefix || hdr.Name != star+"/"+name {
			return nil
		}
		return s.errorf(ErrUnsafe, hdr.Name, nil, "its header, with star's trailer, has the name prefix %s: updeb's reader (archive/tar) takes only its first 131 bytes, as star's prefix field, GNU tar and bsdtar take it whole, so they would not read the entry updeb checks",
			quoteEntry(prefix))
	}
	return nil
}

// checkV7Prefix refuses an entry whose header has no ustar or GNU magic
// (archive/tar reads it as a V7 tar header) and holds a name prefix all
// the same, in the bytes where a ustar header has its prefix field: GNU
// tar and archive/tar read none in a V7 header, Python's tarfile
// prepends those bytes to the name whatever the magic, and bsdtar when
// the magic's first five bytes are "ustar". "tool" with "bin" there is
// "tool" to updeb and a second "bin/tool" to them, which replaces the
// first when extracted. A sparse entry's header (GNU's) has the magic; a
// pax or GNU long name, which they apply after the prefix, leaves no
// doubt.
func (s *scan) checkV7Prefix(hdr *tar.Header) error {
	t := s.tap
	if t.endAt != t.off-blockSize || tarEntry(hdr).typ == typeSparse {
		return nil // a sparse file's header has the magic (GNU's), and its map may follow it
	}
	b := t.end[:]
	name, prefix := cString(b[:100]), cString(b[345:500])
	if string(b[257:263]) == "ustar\x00" || string(b[257:265]) == "ustar  \x00" || prefix == "" || hdr.Name != name {
		return nil
	}
	none, some := "GNU tar, bsdtar and updeb's reader (archive/tar)", "Python's tarfile reads"
	if string(b[257:262]) == "ustar" {
		none, some = "GNU tar and updeb's reader (archive/tar)", "bsdtar and Python's tarfile read"
	}
	return s.errorf(ErrUnsafe, hdr.Name, nil, "its header has no ustar or GNU magic (a V7 tar header to updeb's reader) and holds %s where a ustar header's name prefix is: %s read no prefix there, %s the name as %s, so they would not all read the entry updeb checks",
		quoteEntry(prefix), none, some, quoteEntry(prefix+"/"+name))
}

// checkSizeField refuses an entry whose header's size field archive/tar
// reads otherwise than bsdtar and Python's tarfile: archive/tar skips
// the NULs and spaces around the digits, bsdtar (libarchive) and Python
// stop at a NUL before them and read 0. "\x00" then 2000 (octal) is 1024
// bytes of data to updeb (and GNU tar, which skips one NUL), and none to
// them: they read the data as the next headers, where a "bin/tool"
// hidden in it replaces the one updeb packaged. A pax size record, which
// they all take, leaves no doubt; a sparse file's size is another.
func (s *scan) checkSizeField(hdr *tar.Header) error {
	t := s.tap
	if t.endAt != t.off-blockSize || tarEntry(hdr).typ == typeSparse || hdr.PAXRecords["size"] != "" {
		return nil
	}
	field := t.end[124:136]
	if field[0]&0x80 != 0 {
		return nil // base-256, which they all read alike
	}
	n := leadingOctal(field)
	if n == hdr.Size {
		return nil
	}
	return s.errorf(ErrUnsafe, hdr.Name, nil, "the size field of its header, %q, is %d bytes to updeb's reader (archive/tar) and %d to bsdtar and Python's tarfile, which stop at a NUL before its digits: tar readers would not agree on where its data ends, and would read different entries after it",
		field, hdr.Size, n)
}

// leadingOctal reads a tar number field as bsdtar and Python's tarfile
// read it: the octal digits after any spaces, up to the first other byte.
func leadingOctal(field []byte) int64 {
	field = bytes.TrimLeft(field, " \t")
	var n int64
	for _, c := range field {
		if c < '0' || c > '7' || n > math.MaxInt64>>3 {
			break
		}
		n = n<<3 | int64(c-'0')
	}
	return n
}

// cString is b up to its first NUL, as tar header fields are read.
func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// tarError classifies an error from tar.Reader.Next: the entry named is the
// last one read, since the failing header has no trustworthy name.
func (s *scan) tarError(last string, err error) error {
	e := s.wrapRead("", err)
	var own *Error
	if errors.As(e, &own) && own.Entry == "" && last != "" {
		own.Msg += " (after entry " + fmt.Sprintf("%q", last) + ")"
	}
	return e
}

// drainTail reads what follows the tar end-of-archive marker: zero padding is
// normal; anything else is hidden data and refused. Reading to the end also
// makes gzip and xz check the final stream's checksum.
func (s *scan) drainTail(b *budget) error {
	b.entry = ""
	buf := make([]byte, 32<<10)
	for {
		n, err := b.Read(buf)
		for _, c := range buf[:n] {
			if c != 0 {
				return s.errorf(ErrCorrupt, "", nil, "non-zero data after the tar end-of-archive marker")
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return s.wrapRead("", err)
		}
	}
}

func tarEntry(h *tar.Header) entry {
	e := entry{raw: h.Name, size: h.Size, link: h.Linkname, mode: modeBits(h.FileInfo().Mode())}
	switch h.Typeflag {
	case tar.TypeReg, '\x00': // '\x00' is the pre-POSIX regular file (TypeRegA)
		e.typ = typeFile
		if isPAXSparse(h) {
			e.typ = typeSparse
		}
	case tar.TypeDir:
		e.typ = typeDir
	case tar.TypeSymlink:
		e.typ = typeSymlink
	case tar.TypeLink:
		e.typ = typeHardlink
	case tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
		e.typ = typeSpecial
	case tar.TypeGNUSparse:
		e.typ = typeSparse
	default:
		e.typ = typeOther
		e.detail = fmt.Sprintf("tar type flag %q", h.Typeflag)
	}
	return e
}

// typeSolarisExtended is the type of Solaris tar's extended header (tar
// -E), a pax extended header under another type flag.
const typeSolarisExtended = 'X'

// headerOnly reports a type that holds no data in the archive.
func headerOnly(t entryType) bool {
	return t == typeDir || t == typeSymlink || t == typeHardlink || t == typeSpecial
}

// isPAXSparse reports a GNU sparse file in PAX format, which archive/tar
// presents as a regular file with its holes filled in, a star sparse
// file: a SCHILY.realsize record, which archive/tar ignores and bsdtar
// takes for the file's size, its data then cut or padded with zeros to
// it, or a Solaris one: a SUN.holesdata record, which archive/tar and
// GNU tar ignore and bsdtar takes for a map of holes, zeros in place of
// the data there.
func isPAXSparse(h *tar.Header) bool {
	for k := range h.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") || k == "SCHILY.realsize" || k == "SUN.holesdata" {
			return true
		}
	}
	return false
}

// modeBits keeps the permission bits and setuid, setgid and sticky.
func modeBits(m fs.FileMode) fs.FileMode {
	return m & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
}
