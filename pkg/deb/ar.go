package deb

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// The ar container of a .deb, written and read here rather than with
// github.com/blakesmith/ar: that library truncates long names and sizes silently
// and pads on every odd-length Write, and a .deb needs only 60-byte headers.

const (
	arMagic      = "!<arch>\n"
	arHeaderSize = 60
	arMaxSize    = 9999999999 // ten decimal digits
)

// arHeader formats one member header the way dpkg-deb does: name padded to 16
// (no trailing "/"), mtime, uid 0, gid 0, mode 100644, size, "`\n".
func arHeader(name string, mtime, size int64) ([]byte, error) {
	if len(name) > 15 {
		return nil, fmt.Errorf("ar member name %q is longer than 15 characters", name)
	}
	if size < 0 || size > arMaxSize {
		return nil, fmt.Errorf("ar member %s: size %d does not fit in 10 digits", name, size)
	}
	h := fmt.Sprintf("%-16s%-12d%-6d%-6d%-8s%-10d`\n", name, mtime, 0, 0, "100644", size)
	if len(h) != arHeaderSize {
		return nil, fmt.Errorf("ar member %s: header of %d bytes (mtime %d)", name, len(h), mtime)
	}
	return []byte(h), nil
}

// writeArMember writes a header, exactly size bytes from r, and the padding byte
// that keeps members at even offsets.
func writeArMember(w io.Writer, name string, mtime, size int64, r io.Reader) error {
	h, err := arHeader(name, mtime, size)
	if err != nil {
		return err
	}
	if _, err := w.Write(h); err != nil {
		return err
	}
	n, err := io.Copy(w, io.LimitReader(r, size))
	if err != nil {
		return err
	}
	if n != size {
		return fmt.Errorf("ar member %s: wrote %d bytes, expected %d", name, n, size)
	}
	if size%2 == 1 {
		_, err = w.Write([]byte{'\n'})
	}
	return err
}

// arMember is one member found by readAr.
type arMember struct {
	name   string
	offset int64 // of the content
	size   int64
}

// readAr lists the members of an ar archive of total length size. Every header
// field is checked: a .deb is refused rather than guessed at.
func readAr(r io.ReaderAt, size int64) ([]arMember, error) {
	magic := make([]byte, len(arMagic))
	if n, _ := r.ReadAt(magic, 0); string(magic[:n]) != arMagic {
		return nil, malformed("not an ar archive: expected %q at offset 0, found %q", arMagic, magic[:n])
	}
	var members []arMember
	off := int64(len(arMagic))
	hdr := make([]byte, arHeaderSize)
	for off < size {
		if size-off < arHeaderSize {
			return nil, malformed("ar: truncated member header at offset %d (%d bytes left)", off, size-off)
		}
		if _, err := r.ReadAt(hdr, off); err != nil {
			return nil, err
		}
		if !bytes.Equal(hdr[58:60], []byte("`\n")) {
			return nil, malformed("ar: bad header terminator %q at offset %d", hdr[58:60], off+58)
		}
		name := strings.TrimRight(string(hdr[0:16]), " ")
		name = strings.TrimSuffix(name, "/") // GNU ar
		if name == "" {
			return nil, malformed("ar: empty member name at offset %d", off)
		}
		sizeField := strings.TrimRight(string(hdr[48:58]), " ")
		n, err := strconv.ParseInt(sizeField, 10, 64)
		if err != nil || n < 0 || sizeField == "" || sizeField[0] == '+' {
			return nil, malformed("ar: member %q: bad size field %q", name, hdr[48:58])
		}
		off += arHeaderSize
		if n > size-off {
			return nil, malformed("ar: member %q of %d bytes at offset %d runs past the end of the file (%d bytes)", name, n, off, size)
		}
		members = append(members, arMember{name: name, offset: off, size: n})
		off += n + n%2
	}
	return members, nil
}
