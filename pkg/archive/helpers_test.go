package archive

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/ulikunitz/xz"
)

// tent is one tar entry a test builds.
type tent struct {
	name string
	typ  byte
	body string
	link string
	mode int64
}

func file(name, body string) tent { return tent{name: name, typ: tar.TypeReg, body: body} }

// tarBytes writes entries with archive/tar.
func tarBytes(t testing.TB, ents ...tent) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range ents {
		h := &tar.Header{Name: e.name, Typeflag: e.typ, Linkname: e.link, Size: int64(len(e.body)), Mode: e.mode}
		if h.Mode == 0 {
			h.Mode = 0o644
		}
		if e.typ != tar.TypeReg {
			h.Size = 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if e.body != "" {
			if _, err := tw.Write([]byte(e.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func gzBytes(t testing.TB, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func xzBytes(t testing.TB, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, err := xz.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// zent is one zip entry a test builds; raw entries are written with CreateRaw
// so their header fields can lie.
type zent struct {
	name  string
	body  string
	mode  os.FileMode
	extra []byte // the extra fields, in both headers
	raw   *zip.FileHeader
}

func zipBytes(t testing.TB, ents ...zent) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range ents {
		var w io.Writer
		var err error
		if e.raw != nil {
			w, err = zw.CreateRaw(e.raw)
		} else {
			h := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Extra: e.extra}
			mode := e.mode
			if mode == 0 {
				mode = 0o644
			}
			h.SetMode(mode)
			w, err = zw.CreateHeader(h)
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func writeTemp(t testing.TB, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// got is what one Select handed out, in order.
type got struct {
	m    Member
	body string
}

// collect runs Select and records every member fn saw, checking that each
// reader yields exactly Size bytes.
func collect(t testing.TB, path string, kind Kind, want []string, lim Limits) ([]got, error) {
	t.Helper()
	var out []got
	err := Select(context.Background(), path, kind, want, lim, func(m Member, r io.Reader) error {
		b, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		if int64(len(b)) != m.Size {
			t.Errorf("member %q: reader gave %d bytes, Size is %d", m.Name, len(b), m.Size)
		}
		out = append(out, got{m, string(b)})
		return nil
	})
	return out, err
}

// msg returns err's text with the archive's temp path replaced by ARCHIVE.
func msg(err error, path string) string {
	if err == nil {
		return "<nil>"
	}
	return strings.ReplaceAll(err.Error(), path, "ARCHIVE")
}

// slashName writes one tar entry whose stored name has a "/" appended, a
// name archive/tar's writer refuses for anything but a directory.
func slashName(t testing.TB, e tent) []byte {
	t.Helper()
	b := tarBytes(t, e)
	b[len(e.name)] = '/'
	resum(b[:512])
	return b
}

// withData writes one tar entry of a header-only type (a symlink, a
// directory) whose header declares data, followed by data as that data: a
// header archive/tar's writer makes with no data after it.
func withData(t testing.TB, e tent, data []byte) []byte {
	t.Helper()
	h := tarBytes(t, e)[:512]
	copy(h[124:136], fmt.Sprintf("%011o\x00", len(data)))
	resum(h)
	return append(append(h, data...), make([]byte, 1024)...)
}

// resum recomputes a tar header's checksum after a test changed it.
func resum(h []byte) {
	copy(h[148:156], "        ")
	sum := 0
	for _, c := range h {
		sum += int(c)
	}
	copy(h[148:156], fmt.Sprintf("%06o\x00 ", sum))
}

// paxGlobal writes a pax global header with records, and no end of
// archive: tar entries follow it.
func paxGlobal(t testing.TB, records map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: "pax_global_header", PAXRecords: records}); err != nil {
		t.Fatal(err)
	}
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// unicodePathField is an Info-ZIP Unicode path extra field (0x7075) naming
// an entry stored as stored.
func unicodePathField(stored, name string) []byte {
	b := binary.LittleEndian.AppendUint16(nil, 0x7075)
	b = binary.LittleEndian.AppendUint16(b, uint16(5+len(name)))
	b = append(b, 1)
	b = binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE([]byte(stored)))
	return append(b, name...)
}

// patchZip returns a copy of a zip archive whose record of the entry named
// name, local (sig "PK\x03\x04") or central ("PK\x01\x02"), patch changed:
// a header archive/zip's writer never makes. patch gets the record from its
// signature to the end of the archive.
func patchZip(t testing.TB, data []byte, sig, name string, patch func(rec []byte)) []byte {
	t.Helper()
	data = bytes.Clone(data)
	lenAt, nameAt := 26, 30
	if sig == "PK\x01\x02" {
		lenAt, nameAt = 28, 46
	}
	for i := 0; ; i++ {
		j := bytes.Index(data[i:], []byte(sig))
		if j < 0 {
			t.Fatalf("no %q record of %q", sig, name)
		}
		i += j
		if n := int(binary.LittleEndian.Uint16(data[i+lenAt:])); string(data[i+nameAt:i+nameAt+n]) == name {
			patch(data[i:])
			return data
		}
	}
}

// storedEnt is a stored zip entry with its sizes and CRC-32 in its local
// header (no data descriptor), and extra in both headers.
func storedEnt(name, body string, extra []byte) zent {
	return zent{raw: &zip.FileHeader{Name: name, Method: zip.Store, CRC32: crc32.ChecksumIEEE([]byte(body)),
		CompressedSize64: uint64(len(body)), UncompressedSize64: uint64(len(body)), Extra: extra}, body: body}
}

// zip64SizesField is a zip64 extra field (0x0001) with an uncompressed and
// a compressed size, as a local header holds them.
func zip64SizesField(usize, csize uint64) []byte {
	b := binary.LittleEndian.AppendUint16(nil, 0x0001)
	b = binary.LittleEndian.AppendUint16(b, 16)
	b = binary.LittleEndian.AppendUint64(b, usize)
	return binary.LittleEndian.AppendUint64(b, csize)
}

// zipDir is a stored zip entry with a directory's mode bits and body as
// its data.
func zipDir(name, body string) zent {
	e := storedEnt(name, body, nil)
	e.raw.SetMode(os.ModeDir | 0o755)
	return e
}
