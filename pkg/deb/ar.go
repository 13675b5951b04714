package deb

import (
	"time"

	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/blakesmith/ar"
)

// The ar container of a .deb. Members are written with github.com/blakesmith/ar
// behind a small adapter that guards its pitfalls: the library truncates names
// over 16 bytes and sizes over 10 digits without a word, and pads after EVERY
// odd-length Write (returning n+1), so content is fed to it in even-length
// chunks and only the last chunk may be odd. Reading uses the strict reader
// below, which checks every header field and refuses rather than guesses.

const (
	arMagic      = "!<arch>\n"
	arHeaderSize = 60
	arMaxSize    = 9999999999 // ten decimal digits
	arChunk      = 64 << 10   // even, so that only a member's last write can be odd
)

// arWriter writes the members of one ar archive.
type arWriter struct{ w *ar.Writer }

func newArWriter(w io.Writer) (*arWriter, error) {
	aw := ar.NewWriter(w)
	return &arWriter{w: aw}, aw.WriteGlobalHeader()
}

// member writes a header the way dpkg-deb does (uid 0, gid 0, mode 100644,
// the given mtime), exactly size bytes from r, and the padding byte that keeps
// members at even offsets.
func (a *arWriter) member(name string, mtime time.Time, size int64, r io.Reader) error {
	if len(name) > 15 {
		return fmt.Errorf("ar member name %q is longer than 15 characters", name)
	}
	if size < 0 || size > arMaxSize {
		return fmt.Errorf("ar member %s: size %d does not fit in 10 digits", name, size)
	}
	if mtime.Unix() < 0 || mtime.Unix() > 999999999999 {
		return fmt.Errorf("ar member %s: mtime %d does not fit in 12 digits", name, mtime.Unix())
	}
	if err := a.w.WriteHeader(&ar.Header{Name: name, ModTime: mtime, Mode: 0o644, Size: size}); err != nil {
		return err
	}
	buf := make([]byte, arChunk)
	var written int64
	for written < size {
		n, err := io.ReadFull(r, buf[:min(int64(len(buf)), size-written)])
		if n > 0 {
			// The library adds the padding byte itself when this (last) chunk is odd.
			if _, werr := a.w.Write(buf[:n]); werr != nil {
				return werr
			}
			written += int64(n)
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return err
		}
	}
	if written != size {
		return fmt.Errorf("ar member %s: wrote %d bytes, expected %d", name, written, size)
	}
	return nil
}

// arMember is one member found by readAr.
type arMember struct {
	name   string
	offset int64 // of the content
	size   int64
	mtime  int64 // 0 when the field is not a decimal number of seconds (dpkg reads none)
}

// readAr lists the members of an ar archive of total length size. Every header
// field is checked: a .deb is refused rather than guessed at.
func readAr(r io.ReaderAt, size int64) ([]arMember, error) {
	magic := make([]byte, len(arMagic))
	if n, _ := r.ReadAt(magic, 0); string(magic[:n]) != arMagic {
		if v, ok := oldFormat(r); ok {
			return nil, malformed("the old .deb format %s (deb-old(5)), not an ar archive: dpkg-deb still reads it, apt does not, so no repository can serve it; rebuild it: dpkg-deb --raw-extract FILE DIR && dpkg-deb --build DIR", v)
		}
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
		// Decimal, padded with spaces; dpkg and ar also skip leading ones.
		sizeField := strings.Trim(string(hdr[48:58]), " ")
		n, err := strconv.ParseInt(sizeField, 10, 64)
		if err != nil || n < 0 || sizeField == "" || sizeField[0] == '+' {
			return nil, malformed("ar: member %q: bad size field %q", name, hdr[48:58])
		}
		off += arHeaderSize
		if n > size-off {
			return nil, malformed("ar: member %q of %d bytes at offset %d runs past the end of the file (%d bytes)", name, n, off, size)
		}
		mtime, err := strconv.ParseInt(strings.Trim(string(hdr[16:28]), " "), 10, 64)
		if err != nil || mtime < 0 {
			mtime = 0
		}
		members = append(members, arMember{name: name, offset: off, size: n, mtime: mtime})
		off += n + n%2
	}
	return members, nil
}

// oldFormat returns the version of a .deb in the format before ar
// (deb-old(5): "0.939000\n", the control.tar.gz's size, the two
// archives), as dpkg-deb tells it: "0.93" and a decimal number ending in
// a newline.
func oldFormat(r io.ReaderAt) (string, bool) {
	b := make([]byte, 16)
	n, _ := r.ReadAt(b, 0)
	line, _, ok := bytes.Cut(b[:n], []byte("\n"))
	whole, frac, dot := bytes.Cut(line, []byte("."))
	if !ok || !dot || !bytes.HasPrefix(line, []byte("0.93")) || !allDigits(whole) || !allDigits(frac) {
		return "", false
	}
	return string(line), true
}
