package archive

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"context"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

var fuzzWant = []string{"a", "bin/tool"}

var fuzzLimits = Limits{MaxFileSize: 1 << 20, MaxTotal: 4 << 20, MaxEntries: 1000}

// fuzzCallback checks the per-member contract: only wanted names, never more
// than Size bytes, exactly Size bytes when the read ended cleanly.
func fuzzCallback(t *testing.T) func(Member, io.Reader) error {
	return func(m Member, r io.Reader) error {
		if m.Name != "a" && m.Name != "bin/tool" {
			t.Fatalf("callback got unwanted member %q", m.Name)
		}
		if m.Mode&^(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != 0 {
			t.Fatalf("member %q has type bits in mode %v", m.Name, m.Mode)
		}
		n, err := io.Copy(io.Discard, r)
		if n > m.Size {
			t.Fatalf("member %q: read %d bytes, Size %d", m.Name, n, m.Size)
		}
		if err == nil && n != m.Size {
			t.Fatalf("member %q: clean end after %d bytes, Size %d", m.Name, n, m.Size)
		}
		return err
	}
}

// localName is the fuzz tests' own idea of a safe name, from the standard
// library rather than this package's cleanName (a backslash is a character
// of the name, as dpkg reads it; a newline is what dpkg refuses).
func localName(name string) bool {
	return filepath.IsLocal(name) && !strings.Contains(name, "\n")
}

func localLink(name, target string) bool {
	return target != "" && !path.IsAbs(target) && localName(path.Join(path.Dir(path.Clean(name)), target))
}

func FuzzSelectTar(f *testing.F) {
	f.Add(tarBytes(f, file("a", "x"), file("bin/tool", "tool")))
	f.Add(tarBytes(f, file("./a", "x"), tent{name: "bin/", typ: tar.TypeDir}, file("bin/tool", "tool"), tent{name: "l", typ: tar.TypeSymlink, link: "bin/tool"}))
	f.Add(tarBytes(f, file("../a", "x")))
	f.Add(tarBytes(f, file("a", "x"), tent{name: "l", typ: tar.TypeSymlink, link: "../x"}))
	f.Add(tarBytes(f, file("a", "x"), tent{name: "h", typ: tar.TypeLink, link: "a"}, file("bin/tool", "y")))
	f.Add(tarBytes(f, file("a", "1"), file("a", "2")))
	f.Add(tarBytes(f, tent{name: "bin/tool", typ: tar.TypeLink, link: "a"}, file("a", "1")))
	f.Add(tarBytes(f, file(`a\x2db`, "1"), tent{name: "bin/tool", typ: tar.TypeLink, link: `a\x2db`}))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := newScan(context.Background(), "fuzz.tar", fuzzWant, fuzzLimits, fuzzCallback(t))
		if err != nil {
			t.Fatal(err)
		}
		err = s.selectTar(Tar, bytes.NewReader(data))
		if err == nil {
			err = s.finish()
		}
		if err != nil {
			return
		}
		// Accepted: every entry, wanted or not, must be safe.
		tr := tar.NewReader(bytes.NewReader(data))
		regular := map[string]bool{}
		for {
			h, err := tr.Next()
			if err != nil {
				break
			}
			if h.Typeflag == tar.TypeXGlobalHeader {
				continue
			}
			if !localName(h.Name) {
				t.Fatalf("accepted an archive with unsafe name %q", h.Name)
			}
			switch h.Typeflag {
			case tar.TypeSymlink:
				if !localLink(h.Name, h.Linkname) {
					t.Fatalf("accepted symlink %q -> %q", h.Name, h.Linkname)
				}
			case tar.TypeLink:
				if !localName(h.Linkname) || !regular[path.Clean(h.Linkname)] {
					t.Fatalf("accepted hardlink %q -> %q, not to an earlier regular file", h.Name, h.Linkname)
				}
			case tar.TypeReg:
				regular[path.Clean(h.Name)] = true
			case tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
				t.Fatalf("accepted special file %q", h.Name)
			}
		}
	})
}

func FuzzSelectZip(f *testing.F) {
	f.Add(zipBytes(f, zent{name: "a", body: "x"}, zent{name: "bin/tool", body: "tool", mode: 0o755}))
	f.Add(zipBytes(f, zent{name: "a", body: "x"}, zent{name: "bin/tool", body: "a", mode: fs.ModeSymlink | 0o777}))
	f.Add(zipBytes(f, zent{name: `..\a`, body: "x"}))
	f.Add(zipBytes(f, zent{raw: zipBadHeader("a", "hello"), body: "hello"}))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := newScan(context.Background(), "fuzz.zip", fuzzWant, fuzzLimits, fuzzCallback(t))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.selectZipReader(bytes.NewReader(data), int64(len(data))); err != nil {
			return
		}
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if zr == nil {
			t.Fatalf("accepted an archive archive/zip cannot open: %v", err)
		}
		for _, zf := range zr.File {
			if !localName(zf.Name) {
				t.Fatalf("accepted an archive with unsafe name %q", zf.Name)
			}
			if zf.Mode()&(fs.ModeDevice|fs.ModeCharDevice|fs.ModeNamedPipe|fs.ModeSocket) != 0 {
				t.Fatalf("accepted special file %q", zf.Name)
			}
		}
	})
}
