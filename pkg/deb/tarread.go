package deb

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
)

// A tar reader that sees a .deb's control.tar and data.tar exactly as dpkg's
// own (lib/dpkg/tarfn.c, which unpacks data.tar at install) does, so that no
// archive dpkg refuses gets past it: 512-byte headers with a valid checksum
// (unsigned sum), octal or base-256 numbers, the ustar prefix, GNU long
// names and long links, and only the entry types dpkg extracts. PAX headers
// (but in control.tar: tarpax.go), sparse files and every other type are
// refused, as dpkg refuses them. The first header block whose checksum
// fails and whose name is empty ends the archive (dpkg's end-of-archive
// test); what follows it must be zeros.
// Stricter than dpkg: a regular file whose name ends in "/" in data.tar (GNU
// tar reads a directory, dpkg a file; in control.tar, which dpkg-deb
// extracts with GNU tar, it is a directory).
// archive/tar is not used because it merges PAX headers and sparse maps that
// dpkg refuses, and accepts headers dpkg does not.

const tarBlock = 512

// maxLongName bounds a GNU long name or link (dpkg's is unbounded; Linux
// paths stop at 4096 bytes).
const maxLongName = 4096

// Entry types dpkg extracts ('\x00' is read as a regular file).
const (
	tarReg     = '0'
	tarLink    = '1'
	tarSymlink = '2'
	tarChar    = '3'
	tarBlockDv = '4'
	tarDir     = '5'
	tarFifo    = '6'
	tarLongNm  = 'L'
	tarLongLk  = 'K'
)

// tarEntry is one entry as dpkg decodes it.
type tarEntry struct {
	Name, Linkname string
	Type           byte // tarReg, tarLink, tarSymlink, tarChar, tarBlockDv, tarDir, tarFifo
	Mode           int64
	UID, GID       int64
	Uname, Gname   string
	Size           int64
	MTime          int64
}

// errTarEnd is the end-of-archive block.
var errTarEnd = errors.New("end of tar archive")

// tarReader reads entries; Read reads the current entry's data.
type tarReader struct {
	r         io.Reader
	off       int64 // of the next byte of r, for messages
	remaining int64 // data bytes of the current entry not yet read
	pad       int64 // padding after them
	block     [tarBlock]byte
	// gnuTar reads what GNU tar reads and dpkg's reader does not: a
	// regular file whose name ends in "/" as a directory, and PAX headers
	// (tarpax.go); for control.tar, which dpkg-deb extracts with GNU tar.
	gnuTar bool
	// global are the keywords of the PAX global headers read so far.
	global paxGlobal
}

func newTarReader(r io.Reader) *tarReader { return &tarReader{r: r} }

func (t *tarReader) read(p []byte) error {
	n, err := io.ReadFull(t.r, p)
	t.off += int64(n)
	return err
}

// skip discards n bytes.
func (t *tarReader) skip(n int64) error {
	m, err := io.CopyN(io.Discard, t.r, n)
	t.off += m
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Next returns the next entry, or errTarEnd at the end-of-archive block or
// at the end of the data on a block boundary (dpkg accepts both).
func (t *tarReader) Next() (*tarEntry, error) {
	if err := t.skip(t.remaining + t.pad); err != nil {
		return nil, fmt.Errorf("tar: entry data: %w", err)
	}
	t.remaining, t.pad = 0, 0
	var longName, longLink *string
	var ext []paxRecord // the entry's PAX extended header
	for {
		start := t.off
		if err := t.read(t.block[:]); err != nil {
			if err == io.EOF && longName == nil && longLink == nil && ext == nil {
				return nil, errTarEnd
			}
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, fmt.Errorf("tar: header at offset %d: %w", start, err)
		}
		h, err := decodeTarHeader(&t.block)
		if err != nil {
			if h.Name == "" && ext != nil {
				return nil, fmt.Errorf("tar: the end of the archive at offset %d, after a PAX header for an entry", start)
			}
			if h.Name == "" {
				return nil, errTarEnd
			}
			return nil, fmt.Errorf("tar: header %q at offset %d: %w", h.Name, start, err)
		}
		if (h.Type == tarPAX || h.Type == tarPAXGlobal) && !t.gnuTar {
			return nil, fmt.Errorf("tar: entry %q: type %q, a PAX header, which dpkg refuses where it unpacks data.tar (\"unsupported PAX tar header type\"), though GNU tar (dpkg-deb --contents) reads it: write data.tar in GNU or ustar format (tar --format=gnu)", h.Name, h.Type)
		}
		if h.Type == tarPAX || h.Type == tarPAXGlobal {
			recs, err := t.readPAX(h, start)
			switch {
			case err != nil:
				return nil, err
			case h.Type == tarPAXGlobal:
				if t.global == nil {
					t.global = paxGlobal{}
				}
				if err := t.global.add(recs); err != nil {
					return nil, fmt.Errorf("tar: PAX global header at offset %d: %w", start, err)
				}
			case ext != nil:
				return nil, fmt.Errorf("tar: a second PAX extended header for one entry at offset %d (stricter than GNU tar)", start)
			default:
				ext = recs
			}
			continue
		}
		if h.Type == tarLongNm || h.Type == tarLongLk {
			if h.Size > maxLongName {
				return nil, fmt.Errorf("tar: GNU long name or link at offset %d of %d bytes: more than %d", start, h.Size, maxLongName)
			}
			buf := make([]byte, (h.Size+tarBlock-1)/tarBlock*tarBlock)
			if err := t.read(buf); err != nil {
				return nil, fmt.Errorf("tar: GNU long name at offset %d: %w", start, unexpectedEOF(err))
			}
			s := string(buf[:h.Size])
			if i := strings.IndexByte(s, 0); i >= 0 {
				s = s[:i]
			}
			if h.Type == tarLongNm {
				longName = &s
			} else {
				longLink = &s
			}
			continue
		}
		if longName != nil {
			h.Name = *longName
		}
		if longLink != nil {
			h.Linkname = *longLink
		}
		if (longName != nil || longLink != nil) && ext != nil {
			return nil, fmt.Errorf("tar: header %q at offset %d: both a GNU long name or link and a PAX header (stricter than GNU tar: which of them names the entry depends on the reader)", h.Name, start)
		}
		for k, v := range t.global {
			if err := applyPAX(h, paxRecord{k, v}); err != nil {
				return nil, fmt.Errorf("tar: header %q at offset %d: %w", h.Name, start, err)
			}
		}
		for _, r := range ext {
			if err := applyPAX(h, r); err != nil {
				return nil, fmt.Errorf("tar: header %q at offset %d: %w", h.Name, start, err)
			}
		}
		if h.Name == "" {
			return nil, fmt.Errorf("tar: header at offset %d: empty name", start)
		}
		switch h.Type {
		case tarReg:
			// GNU tar (dpkg-deb --contents and -x) reads a pre-POSIX
			// directory here; dpkg, unpacking data.tar, a regular file
			// named without the slash, with the entry's data.
			if strings.HasSuffix(h.Name, "/") && t.gnuTar {
				h.Type = tarDir
			} else if strings.HasSuffix(h.Name, "/") {
				return nil, fmt.Errorf("tar: entry %q: a regular file whose name ends in \"/\": GNU tar (dpkg-deb --contents) lists a directory, dpkg installs a file; write it as a directory (type 5)", h.Name)
			}
		case tarLink, tarSymlink, tarChar, tarBlockDv, tarDir, tarFifo:
		default:
			return nil, fmt.Errorf("tar: entry %q: type %q is not one dpkg unpacks (regular file, hardlink, symlink, device, directory, fifo, GNU long name)", h.Name, h.Type)
		}
		if h.Type == tarReg {
			t.remaining = h.Size
		} else if h.Size != 0 {
			// dpkg reads no data for these; a size would make tar
			// implementations that skip it see other entries than dpkg.
			return nil, fmt.Errorf("tar: entry %q: a %s with %d bytes of data", h.Name, tarTypeName(h.Type), h.Size)
		}
		t.pad = (tarBlock - t.remaining%tarBlock) % tarBlock
		return h, nil
	}
}

// readPAX reads the data of h, a PAX header at offset start, and its
// records.
func (t *tarReader) readPAX(h *tarEntry, start int64) ([]paxRecord, error) {
	if h.Size > maxPAXHeader {
		return nil, fmt.Errorf("tar: PAX header at offset %d of %d bytes: more than %d (stricter than GNU tar)", start, h.Size, maxPAXHeader)
	}
	buf := make([]byte, (h.Size+tarBlock-1)/tarBlock*tarBlock)
	if err := t.read(buf); err != nil {
		return nil, fmt.Errorf("tar: PAX header at offset %d: %w", start, unexpectedEOF(err))
	}
	recs, err := parsePAX(buf[:h.Size])
	if err != nil {
		return nil, fmt.Errorf("tar: PAX header at offset %d: %w", start, err)
	}
	return recs, nil
}

func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Read reads the current entry's data.
func (t *tarReader) Read(p []byte) (int, error) {
	if t.remaining == 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > t.remaining {
		p = p[:t.remaining]
	}
	n, err := t.r.Read(p)
	t.off += int64(n)
	t.remaining -= int64(n)
	if err == io.EOF && t.remaining > 0 {
		err = io.ErrUnexpectedEOF
	} else if err == io.EOF {
		err = nil
	}
	return n, err
}

// drain reads what follows the end-of-archive block; anything but zeros is
// refused (dpkg stops reading there; GNU tar may list entries after a lone
// zero block, so data there could be seen by one tool and not another).
func (t *tarReader) drain() error {
	buf := make([]byte, 32<<10)
	for {
		n, err := t.r.Read(buf)
		if i := bytes.IndexFunc(buf[:n], func(r rune) bool { return r != 0 }); i >= 0 {
			return fmt.Errorf("tar: non-zero data at offset %d, after the end-of-archive block", t.off+int64(i))
		}
		t.off += int64(n)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func tarTypeName(typ byte) string {
	return map[byte]string{tarReg: "file", tarDir: "dir", tarSymlink: "symlink", tarLink: "hardlink",
		tarChar: "char", tarBlockDv: "block", tarFifo: "fifo"}[typ]
}

// decodeTarHeader decodes a header block as dpkg's tar_header_decode does.
// On error the returned header still carries the name, which tells the end
// of the archive (a zero block) from a broken header.
func decodeTarHeader(b *[tarBlock]byte) (*tarEntry, error) {
	h := &tarEntry{Type: b[156]}
	if h.Type == 0 {
		h.Type = tarReg
	}
	magic := string(b[257:263])
	name := cString(b[0:100])
	if prefix := cString(b[345:500]); magic == "ustar\x00" && prefix != "" {
		name = prefix + "/" + name
	}
	h.Name = name
	h.Linkname = cString(b[157:257])
	h.Uname, h.Gname = cString(b[265:297]), cString(b[297:329])
	fields := []struct {
		what   string
		b      []byte
		dst    *int64
		signed bool
	}{
		{"mode", b[100:108], &h.Mode, false},
		{"size", b[124:136], &h.Size, false},
		{"mtime", b[136:148], &h.MTime, true},
		{"uid", b[108:116], &h.UID, false},
		{"gid", b[116:124], &h.GID, false},
	}
	for _, f := range fields {
		v, err := tarNumber(f.b)
		if err != nil || v < 0 && !f.signed {
			return h, fmt.Errorf("invalid %s field %q", f.what, f.b)
		}
		*f.dst = v
	}
	// dpkg's uid_t and gid_t have 32 bits; it refuses more ("out of
	// range"), where a reader without the bound showed an owner that is
	// never installed.
	if h.UID > math.MaxUint32 || h.GID > math.MaxUint32 {
		return h, fmt.Errorf("uid %d or gid %d out of range: dpkg takes at most %d", h.UID, h.GID, uint32(math.MaxUint32))
	}
	sum, err := tarNumber(b[148:156])
	if err != nil || b[148] >= 0x80 {
		return h, fmt.Errorf("invalid checksum field %q", b[148:156])
	}
	var computed int64 = ' ' * 8
	for i, c := range b {
		if i < 148 || i >= 156 {
			computed += int64(c)
		}
	}
	if sum != computed {
		return h, fmt.Errorf("checksum %d, computed %d", sum, computed)
	}
	return h, nil
}

func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// tarNumber decodes a numeric field: octal digits after optional spaces,
// ended by NUL or space and followed only by NULs and spaces; or base-256
// (first byte 0x80 positive, 0xff negative), as dpkg's tar_atol.
func tarNumber(b []byte) (int64, error) {
	if b[0] == 0x80 || b[0] == 0xff {
		neg := b[0] == 0xff
		var n uint64
		if neg {
			n = ^uint64(0)
		}
		rest := b[1:]
		for len(rest) > 8 { // leading bytes must be sign extension
			if neg && rest[0] != 0xff || !neg && rest[0] != 0 {
				return 0, errors.New("base-256 number out of range")
			}
			rest = rest[1:]
		}
		for _, c := range rest {
			n = n<<8 | uint64(c)
		}
		v := int64(n)
		if neg != (v < 0) {
			return 0, errors.New("base-256 number out of range")
		}
		return v, nil
	}
	i := 0
	for i < len(b) && b[i] == ' ' {
		i++
	}
	if i == len(b) {
		return 0, errors.New("empty number")
	}
	var n int64
	for ; i < len(b) && b[i] != 0 && b[i] != ' '; i++ {
		if b[i] < '0' || b[i] > '7' {
			return 0, fmt.Errorf("%q is not an octal digit", b[i])
		}
		if n > (1<<63-1)>>3 {
			return 0, errors.New("number out of range")
		}
		n = n<<3 | int64(b[i]-'0')
	}
	for ; i < len(b); i++ {
		if b[i] != 0 && b[i] != ' ' {
			return 0, fmt.Errorf("%q after the number", b[i])
		}
	}
	return n, nil
}
