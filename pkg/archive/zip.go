package archive

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"math"
	"path"
	"slices"
	"strings"

	"golang.org/x/text/encoding/charmap"
)

// maxLinkTarget bounds a zip symlink's target (stored as the entry's data).
const maxLinkTarget = 4096

// selectZip checks the whole central directory (names, types, links, missing
// members) before fn is called, then delivers the wanted members in
// central-directory order.
func (s *scan) selectZip() error {
	f, fi, err := s.open("the archive")
	if err != nil {
		return err
	}
	defer f.Close()
	s.bud = NewBudget(s.ctx, s.lim, fi.Size())
	// The directory and members are read at their offsets: the pin is
	// checked on the whole file first, from the file that is then read.
	if err := s.checkPin(s.pinned(io.NewSectionReader(f, 0, fi.Size()))); err != nil {
		return err
	}
	return s.selectZipReader(f, fi.Size())
}

func (s *scan) selectZipReader(r io.ReaderAt, size int64) error {
	// zip.NewReader reads every central-directory record into memory
	// (about 250 bytes each, from 46 in the file) before check() can count
	// them: it reads through a bound that keeps a directory far past
	// MaxEntries from being taken in at all.
	dir := &dirBound{r: r, left: dirAllowance(s.lim.MaxEntries)}
	zr, err := zip.NewReader(dir, size)
	dir.left = -1 // members are read through zr with no bound of this kind
	if errors.Is(err, errDirBound) {
		return s.errorf(ErrLimit, "", nil, "the central directory is larger than %d bytes, more than %d entries need (Limits.MaxEntries, %d bytes each, plus %d KiB): refusing it before it is read into memory",
			dirAllowance(s.lim.MaxEntries), s.lim.MaxEntries, dirBytesPerEntry, dirSlack>>10)
	}
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) { // ErrInsecurePath only with GODEBUG=zipinsecurepath=0; check() decides
		head := make([]byte, 512)
		n, _ := r.ReadAt(head, 0)
		return s.withFormat(s.errorf(ErrCorrupt, "", err, "not a readable zip archive"), Zip, head[:n])
	}
	end, err := s.zipEnd(r, size, zr.Comment)
	if err != nil {
		return err
	}
	b := &budget{s: s}
	type pick struct {
		f *zip.File
		m Member
	}
	var picks []pick
	python := map[string]string{} // each entry's name as Python's zipfile reads it, cleaned -> the name
	for _, f := range zr.File {
		b.entry = f.Name
		e := zipEntry(f)
		if e.typ == typeSymlink {
			if e.link, err = s.zipLinkTarget(f, b); err != nil {
				return err
			}
		}
		name, wanted, err := s.check(e)
		if err != nil {
			return err
		}
		if strings.Contains(f.Name, `\`) && !strings.Contains(f.Name, "/") {
			return s.errorf(ErrUnsafe, f.Name, nil, "its name holds a backslash and no \"/\": bsdtar, and unzip for a zip made on MS-DOS or Windows, take its backslashes for folder separators (%s), updeb for part of the name",
				quoteEntry(strings.ReplaceAll(f.Name, `\`, "/")))
		}
		py := path.Clean(pythonName(f))
		if other, ok := python[py]; ok {
			return s.errorf(ErrUnsafe, f.Name, nil, "Python's zipfile reads its name and that of entry %s alike, as %s (a name without the UTF-8 flag is code page 437 to it): its extraction would write one over the other",
				quoteEntry(other), quoteEntry(py))
		}
		python[py] = f.Name
		if u, ok := unicodePath(f.Extra); ok && u != f.Name {
			return s.errorf(ErrUnsafe, f.Name, nil, "its Info-ZIP Unicode path field names it %s: unzip extracts it under that name, updeb reads the entry's own", quoteEntry(u))
		}
		// archive/zip takes the mode bits for a directory; unzip and
		// Python a name ending in "/", and unzip drops the data of one.
		switch {
		case e.typ == typeDir && !strings.HasSuffix(f.Name, "/"):
			return s.errorf(ErrUnsafe, f.Name, nil, "is a directory by its mode, but its name does not end in \"/\": unzip and Python extract it as a regular file")
		case e.typ == typeDir && f.UncompressedSize64 != 0:
			return s.errorf(ErrUnsafe, f.Name, nil, "is a directory with %d bytes of data: unzip extracts the directory without them, Python reads them", f.UncompressedSize64)
		}
		if wanted {
			picks = append(picks, pick{f, Member{Name: name, Size: e.size, Mode: e.mode}})
		}
	}
	if err := s.checkLocalHeaders(r, end, zr.File); err != nil {
		return err
	}
	if err := s.finish(); err != nil {
		return err
	}
	for _, p := range picks {
		b.entry = p.f.Name
		if err := s.deliverZip(p.f, p.m, b); err != nil {
			return err
		}
	}
	return nil
}

func (s *scan) deliverZip(f *zip.File, m Member, b *budget) error {
	rc, err := f.Open()
	if err != nil {
		return s.openError(f, err, "cannot open")
	}
	defer rc.Close()
	b.src = rc
	return s.deliver(m, f.Name, b)
}

func (s *scan) zipLinkTarget(f *zip.File, b *budget) (string, error) {
	rc, err := f.Open()
	if err != nil {
		return "", s.openError(f, err, "cannot open symlink")
	}
	defer rc.Close()
	b.src = rc
	target, err := io.ReadAll(io.LimitReader(b, maxLinkTarget+1))
	if err != nil {
		return "", s.wrapRead(f.Name, err)
	}
	if len(target) > maxLinkTarget {
		return "", s.errorf(ErrUnsafe, f.Name, nil, "symlink target longer than %d bytes", maxLinkTarget)
	}
	return string(target), nil
}

// pythonName is f's name as Python's zipfile reads it: UTF-8 with the
// flag (bit 11) that says so, else code page 437, which archive/zip
// leaves as the bytes (and unzip, from a zip made on Unix, too).
func pythonName(f *zip.File) string {
	if f.Flags&zipFlagUTF8 != 0 || isASCII(f.Name) {
		return f.Name
	}
	name, err := charmap.CodePage437.NewDecoder().String(f.Name)
	if err != nil {
		return f.Name
	}
	return name
}

// zipMethods names the compression methods other than stored and
// deflated that zip tools write (APPNOTE.TXT 4.4.5): unzip reads bzip2,
// 7-Zip the others, archive/zip none of them.
var zipMethods = map[uint16]string{9: "deflate64", 12: "bzip2", 14: "LZMA", 93: "zstd", 95: "xz", 98: "PPMd"}

// openError is the refusal of f, which archive/zip could not open (what
// says what for): a method it does not read is a valid zip updeb does not
// unpack, not a corrupt one.
func (s *scan) openError(f *zip.File, err error, what string) error {
	if !errors.Is(err, zip.ErrAlgorithm) {
		return s.errorf(ErrCorrupt, f.Name, err, "%s", what)
	}
	method := zipMethods[f.Method]
	if method == "" {
		method = "an unknown method"
	}
	return s.errorf(ErrCorrupt, f.Name, err, "is compressed with %s (zip method %d), which updeb's reader (archive/zip: stored and deflated entries only) does not read: a valid zip (unzip reads bzip2, 7-Zip the others), not a corrupt download: take the release's .tar.gz or .tar.xz, or a zip of deflated entries", method, f.Method)
}

func zipEntry(f *zip.File) entry {
	mode := f.Mode()
	size := int64(math.MaxInt64)
	if f.UncompressedSize64 < math.MaxInt64 {
		size = int64(f.UncompressedSize64)
	}
	e := entry{raw: f.Name, size: size, mode: modeBits(mode)}
	switch {
	case f.Flags&0x1 != 0:
		e.typ, e.detail = typeOther, "an encrypted zip entry"
	case mode&fs.ModeSymlink != 0 || unzipSymlink(f):
		e.typ = typeSymlink
	case mode.IsDir():
		e.typ = typeDir
	case mode&(fs.ModeDevice|fs.ModeCharDevice|fs.ModeNamedPipe|fs.ModeSocket) != 0:
		e.typ = typeSpecial
	case mode.IsRegular():
		e.typ = typeFile
	default:
		e.typ, e.detail = typeOther, "zip mode "+mode.String()
	}
	return e
}

// unzip extracts as a symlink an entry whose Unix mode says symlink, from
// a zip made on one of these systems (SYMLINK_HOST in Info-ZIP's unix.c:
// VMS, Unix, Atari, BeOS, AtheOS). The mode is the high half of its
// external attributes or, where that is 0, the mode in the ASi Unix extra
// field of its central directory entry. archive/zip reads the attributes
// only, and only for Unix and macOS: it takes the others for regular files
// of mode 0, whose data is the target.
var unzipSymlinkHosts = map[uint16]bool{2: true, 3: true, 5: true, 16: true, 30: true}

const (
	unixTypeMask, unixSymlink = 0o170000, 0o120000
	asiUnixID                 = 0x756e // CRC-32, mode, size of a device, uid, gid, link target
)

func unzipSymlink(f *zip.File) bool {
	if !unzipSymlinkHosts[f.CreatorVersion>>8] {
		return false
	}
	mode := f.ExternalAttrs >> 16
	if d, ok := extraField(f.Extra, asiUnixID, 6); ok && mode == 0 {
		mode = uint32(binary.LittleEndian.Uint16(d[4:]))
	}
	return mode&unixTypeMask == unixSymlink
}

// Zip record signatures, the lengths of their fixed parts, and extra field
// ids (APPNOTE.TXT 4.3, 4.5).
const (
	zipLocalSig     = 0x04034b50
	zipCentralSig   = 0x02014b50
	zipEndSig       = 0x06054b50
	zipEnd64Sig     = 0x06064b50
	zipLocator64Sig = 0x07064b50
	zipLocalLen     = 30
	zipCentralLen   = 46
	zipEndLen       = 22
	zipLocator64Len = 20
	zipEnd64Len     = 56
	zip64ExtraID    = 0x0001
	unicodePathID   = 0x7075

	zipEndSearch = 65 << 10 // how far from the end archive/zip looks for the end record
)

// zipEnd returns the offset of the end-of-central-directory record that
// archive/zip read, the last one in the file's last 65 KiB, given the
// comment it read there. Only zeros may follow the record and its comment
// (bsdtar pads a zip it writes to a pipe to whole blocks): archive/zip,
// unzip and Python ignore what follows them, so other bytes there would be
// in the pinned artifact but shown by no zip tool (7-Zip only warns of
// them), like non-zero data after a tar's end.
func (s *scan) zipEnd(r io.ReaderAt, size int64, comment string) (int64, error) {
	tail := make([]byte, min(size, zipEndSearch))
	at := size - int64(len(tail))
	if n, err := r.ReadAt(tail, at); n < len(tail) {
		return 0, s.errorf(ErrCorrupt, "", err, "cannot read its end-of-central-directory record")
	}
	i := bytes.LastIndex(tail[:max(len(tail)-zipEndLen+4, 0)], []byte{'P', 'K', 5, 6})
	if i < 0 || int(binary.LittleEndian.Uint16(tail[i+20:])) != len(comment) {
		return 0, s.errorf(ErrCorrupt, "", nil, "its end-of-central-directory record is not where archive/zip found one")
	}
	if slices.ContainsFunc(tail[i+zipEndLen+len(comment):], func(c byte) bool { return c != 0 }) {
		return 0, s.errorf(ErrCorrupt, "", nil, "non-zero data after the zip end-of-central-directory record and its comment, where zip tools do not look")
	}
	return at + int64(i), nil
}

// unicodePath returns the name in the Info-ZIP Unicode path extra field
// (0x7075: version, CRC-32 of the header's name, UTF-8 name) of a header's
// extra data, which unzip prefers to the header's name and archive/zip
// ignores.
func unicodePath(extra []byte) (string, bool) {
	d, ok := extraField(extra, unicodePathID, 5)
	if !ok {
		return "", false
	}
	return string(d[5:]), true
}

// extraField returns the data of the first field with the given id and at
// least least bytes in a zip header's extra data, as far as the fields
// before it are whole.
func extraField(extra []byte, id uint16, least int) ([]byte, bool) {
	for len(extra) >= 4 {
		fid, size := binary.LittleEndian.Uint16(extra), int(binary.LittleEndian.Uint16(extra[2:]))
		extra = extra[4:]
		if size > len(extra) {
			return nil, false
		}
		if fid == id && size >= least {
			return extra[:size], true
		}
		extra = extra[size:]
	}
	return nil, false
}

// What zip.NewReader may read of an archive: the end-of-directory search
// (the last 66 KiB) and the zip64 records within dirSlack, and
// dirBytesPerEntry for each of MaxEntries central-directory records (46
// bytes, the name, extra fields and comment: some 100 to 300 bytes in
// release archives).
const (
	dirSlack         = 1 << 20
	dirBytesPerEntry = 512
)

func dirAllowance(maxEntries int) int64 {
	return dirSlack + int64(maxEntries)*dirBytesPerEntry
}

var errDirBound = errors.New("archive: zip central directory over its bound")

// dirBound serves ReadAt from r until left bytes were served, then fails
// with errDirBound; a negative left means no bound.
type dirBound struct {
	r    io.ReaderAt
	left int64
}

func (d *dirBound) ReadAt(p []byte, off int64) (int, error) {
	if d.left < 0 {
		return d.r.ReadAt(p, off)
	}
	if int64(len(p)) > d.left {
		return 0, errDirBound
	}
	n, err := d.r.ReadAt(p, off)
	d.left -= int64(n)
	return n, err
}
