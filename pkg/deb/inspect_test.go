package deb

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/updeb/updeb/pkg/archive"
)

func sampleBytes(t *testing.T, c Compression) []byte {
	t.Helper()
	p := samplePackage()
	p.Compression = c
	path, _ := writeTemp(t, p)
	return mustRead(t, path)
}

func inspectBytes(b []byte) (*Info, error) {
	return Inspect(context.Background(), bytes.NewReader(b), int64(len(b)), archive.Limits{})
}

// Malformed archives are refused with ErrMalformed and a message that says
// what was expected and what was found.
func TestInspectMalformed(t *testing.T) {
	good := sampleBytes(t, CompressionGzip)
	dataHdr := bytes.Index(good, []byte("data.tar.gz"))
	replace := func(old, new string) []byte { return bytes.Replace(good, []byte(old), []byte(new), 1) }
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, `not an ar archive: expected "!<arch>\n" at offset 0, found ""`},
		{"not ar", []byte("PK\x03\x04 zip"), `not an ar archive: expected "!<arch>\n" at offset 0, found "PK\x03\x04 zip"`},
		{"ar only", []byte("!<arch>\n"), `empty ar archive`},
		{"truncated header", good[:8+30], `ar: truncated member header at offset 8 (30 bytes left)`},
		{"truncated data", good[:len(good)-100], `ar: member "data.tar.gz" of`},
		{"bad terminator", append(append([]byte{}, good[:8+58]...), append([]byte("x\n"), good[8+60:]...)...), "ar: bad header terminator \"x\\n\" at offset 66"},
		{"bad size", replace("4         `", "-4        `"), `ar: member "debian-binary": bad size field "-4        "`},
		{"wrong first member", replace("debian-binary", "debian-binarz"), `first ar member is "debian-binarz", expected debian-binary`},
		{"debian-binary 3.0", replace("2.0\n", "3.0\n"), `debian-binary is "3.0\n", expected "2.0\n"`},
		{"bzip2 control", replace("control.tar.gz", "control.tar.bz"), `ar member "control.tar.bz": unsupported compression: expected control.tar, control.tar.gz, control.tar.xz or control.tar.zst`},
		{"data before control", replace("control.tar.gz", "data.tar.gz   "), `unexpected ar member "data.tar.gz" at position 2`},
		{"not gzip", append(append([]byte{}, good[:8+60+4+60]...), append([]byte("XX"), good[8+60+4+62:]...)...), `control.tar.gz: gzip: the header of member 1: not gzip (it starts with "XX\b\x00")`},
		{"corrupt data", append(append([]byte{}, good[:dataHdr+60+40]...), append(bytes.Repeat([]byte{0xff}, 40), good[dataHdr+60+80:]...)...), `data.tar.gz:`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := inspectBytes(tt.in)
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v, want ErrMalformed", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error:\n%v\nwant it to contain:\n%s", err, tt.want)
			}
		})
	}
}

func TestInspectRoundTrip(t *testing.T) {
	for _, c := range []Compression{CompressionXZ, CompressionGzip, CompressionZstd, CompressionNone} {
		info, err := inspectBytes(sampleBytes(t, c))
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		if info.Members[1].Compression != c || info.Members[2].Compression != c {
			t.Errorf("%s: members %+v", c, info.Members)
		}
		if info.Control.Value("Package") != "updeb-sample" || len(info.Scripts) != 2 || info.Triggers != "interest-noawait /usr/lib/sample\n" ||
			len(info.Conffiles) != 1 || len(info.Files) != 21 {
			t.Errorf("%s: %+v", c, info)
		}
	}
}

func FuzzInspect(f *testing.F) {
	for _, c := range []Compression{CompressionXZ, CompressionGzip, CompressionZstd, CompressionNone} {
		b := fuzzSeed(f, c)
		f.Add(b)
		f.Add(b[:len(b)/2])
		f.Add(bytes.Replace(b, []byte("2.0\n"), []byte("2.9\n"), 1))
	}
	f.Add([]byte("!<arch>\ndebian-binary   0           0     0     100644  4         `\n2.0\n"))
	f.Add([]byte("!<arch>\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		info, err := inspectBytes(b)
		if err == nil && (info.Control.Fields == nil || len(info.Members) < 3) {
			t.Fatalf("accepted without control or members: %+v", info)
		}
		if err != nil && !errors.Is(err, ErrMalformed) {
			t.Fatalf("error not ErrMalformed on in-memory input: %v", err)
		}
	})
}

// fuzzSeed writes a small package for the corpus; the fuzz target only has a
// *testing.F, so it writes into the F's temp dir.
func fuzzSeed(f *testing.F, c Compression) []byte {
	p := samplePackage()
	p.Compression = c
	path := f.TempDir() + "/seed.deb"
	if _, err := Write(context.Background(), path, p); err != nil {
		f.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	return b
}

// TestGzipMembersHaveNoTimestamp: control.tar.gz and data.tar.gz carry mtime
// 0 in their gzip headers, as gzip -n writes, not a time (the standard
// library's reader sets ModTime only for a non-zero mtime).
func TestGzipMembersHaveNoTimestamp(t *testing.T) {
	b := sampleBytes(t, CompressionGzip)
	members, err := readAr(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range members {
		if !strings.HasSuffix(m.name, ".gz") {
			continue
		}
		n++
		zr, err := gzip.NewReader(bytes.NewReader(b[m.offset : m.offset+m.size]))
		if err != nil {
			t.Fatalf("%s: %v", m.name, err)
		}
		if !zr.ModTime.IsZero() || zr.Name != "" {
			t.Errorf("%s: gzip header has mtime %v and name %q, want neither", m.name, zr.ModTime.UTC(), zr.Name)
		}
	}
	if n != 2 {
		t.Fatalf("%d gzip members, want 2", n)
	}
}

// TestInspectFoldersBounded: the folders data.tar's entries lie below are
// bounded as its entries are (Limits.MaxEntries, DefaultMaxEntries). 250
// entries of 2,040 folders each name 510,000 folders; 13,000 of them, 64
// MiB of tar from a file of 100 KB, made Inspect hold 26 million (over 1 GB).
func TestInspectFoldersBounded(t *testing.T) {
	entries := []tent{{name: "./", typ: tarDir}}
	for i := range DefaultMaxEntries/2040 + 5 {
		entries = append(entries, tent{name: fmt.Sprintf("./%03d/", i) + strings.Repeat("a/", 2040) + "f"})
	}
	_, err := inspectBytes(withData(t, false, entries...))
	if want := fmt.Sprintf("lie below more than %d folders (Limits.MaxEntries)", DefaultMaxEntries); !errors.Is(err, ErrMalformed) || !errors.Is(err, archive.ErrLimit) || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v: want ErrMalformed and archive.ErrLimit, %q", err, want)
	}
}

// TestInspectManyEntries: a package of more entries than the 100,000 of
// archive.DefaultLimits, which bound an upstream archive, is read: Debian's
// papirus-icon-theme holds 116,148 (icons in 1,000 folders here), and
// inspect and publish refused it ("more than 100000 entries").
func TestInspectManyEntries(t *testing.T) {
	entries := []tent{{name: "./", typ: tarDir}, {name: "./usr/", typ: tarDir}, {name: "./usr/share/", typ: tarDir}}
	for i := range 1000 {
		entries = append(entries, tent{name: fmt.Sprintf("./usr/share/%03d/", i), typ: tarDir})
	}
	for i := range 115_145 {
		entries = append(entries, tent{name: fmt.Sprintf("./usr/share/%03d/icon-%06d.svg", i%1000, i), data: []byte("<svg/>\n")})
	}
	info, err := inspectBytes(withData(t, false, entries...))
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Files) != 116_148 {
		t.Fatalf("%d entries listed, want 116148", len(info.Files))
	}
}

// TestInspectHighRatio: a package whose data.tar is over 100 times its
// compressed size (archive.DefaultLimits' MaxRatio, for upstream archives)
// plus 64 MiB is read: Debian's atlc-examples decompresses to 228 times
// its size (132 MB), libjs-moment-timezone to 178, and inspect and publish
// refused both as decompression bombs. 128 MiB of time zone rules here,
// gzip's limit of about 1,000 times.
func TestInspectHighRatio(t *testing.T) {
	line := []byte("Europe/Berlin|CET CEST CEMT|-10 -20 -30|0101010121010121010101010101010101010101010101010101\n")
	rules := bytes.Repeat(line, 128<<20/len(line))
	deb := withData(t, false, dataEntries(tent{name: "./usr/share/hostile/zones", data: rules})...)
	if len(rules) < 100*len(deb)+archive.RatioFloor {
		t.Fatalf("%d bytes from %d: the case must be past 100 times its size plus 64 MiB", len(rules), len(deb))
	}
	info, err := inspectBytes(deb)
	if err != nil {
		t.Fatal(err)
	}
	if f := info.Files[len(info.Files)-1]; f.Size != int64(len(rules)) {
		t.Fatalf("%s: %d bytes, want %d", f.Path, f.Size, len(rules))
	}
}

// TestInspectFileOver2GiB: a file of data.tar larger than the 2 GiB of
// archive.DefaultLimits (for a wanted file of an upstream archive) is read,
// and hashed as it streams: Debian's unidic-mecab installs a matrix.def of
// 3,741,799,827 bytes, and inspect and publish refused it. Here 2 GiB and
// 1 MiB of zeros, in a .deb padded to keep it within DefaultMaxRatio.
func TestInspectFileOver2GiB(t *testing.T) {
	const size = 2<<30 + 1<<20
	pad := make([]byte, 2300<<10)
	if _, err := rand.Read(pad); err != nil {
		t.Fatal(err)
	}
	deb := buildAr(arMem{name: "debian-binary", data: []byte("2.0\n")}, arMem{name: "control.tar.gz", data: gz(t, hCtlTar(hostileControl))},
		arMem{name: "data.tar.zst", data: bombZstd(t, size)}, arMem{name: "_padding", data: pad})
	info, err := inspectBytes(deb)
	if err != nil {
		t.Fatal(err)
	}
	// md5 of 2 GiB and 1 MiB of zeros (head -c 2148532224 /dev/zero | md5sum).
	if f := info.Files[0]; f.Size != size || f.MD5 != "4555da35a7064cc499ba1e3f6fa1993a" {
		t.Fatalf("%s: %d bytes, md5 %s", f.Path, f.Size, f.MD5)
	}
}
