package deb

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/testkit/testenv"
	"github.com/updeb/updeb/pkg/archive"
)

// TestRecompress: from every compression to every other, the copy holds the
// same control.tar and data.tar, byte for byte, as dpkg-deb extracts them,
// dpkg-deb reads it, and only the members' suffixes change: debian-binary,
// a _ member and their order and mtimes are kept. A package already in the
// compression asked for is copied as it is.
func TestRecompress(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	ctx := context.Background()
	for _, from := range Compressions() {
		p := samplePackage()
		p.Control.Architecture = "amd64" // xz: data.tar with the x86 filter
		p.Compression = from
		orig, _ := writeTemp(t, p)
		// A signature member after data.tar (debsigs' _gpgorigin) is kept.
		f, err := os.OpenFile(orig, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.Write(buildAr(arMem{name: "_gpgorigin", data: []byte("sig")})[len(arMagic):])
		f.Close()
		ctl, data := testenv.Run(t, "dpkg-deb", "--ctrl-tarfile", orig), testenv.Run(t, "dpkg-deb", "--fsys-tarfile", orig)
		origMembers := arMembers(t, orig)
		for _, to := range Compressions() {
			t.Run(string(from)+"-to-"+string(to), func(t *testing.T) {
				cp := filepath.Join(t.TempDir(), "copy.deb")
				if err := Recompress(ctx, cp, orig, to); err != nil {
					t.Fatal(err)
				}
				if from == to && !bytes.Equal(mustRead(t, cp), mustRead(t, orig)) {
					t.Errorf("a package already in %s is not copied as it is", to)
				}
				if got := testenv.Run(t, "dpkg-deb", "--ctrl-tarfile", cp); !bytes.Equal(got, ctl) {
					t.Errorf("control.tar differs: %d bytes, the original's %d", len(got), len(ctl))
				}
				if got := testenv.Run(t, "dpkg-deb", "--fsys-tarfile", cp); !bytes.Equal(got, data) {
					t.Errorf("data.tar differs: %d bytes, the original's %d", len(got), len(data))
				}
				if info := string(testenv.Run(t, "dpkg-deb", "-I", cp)); !strings.Contains(info, "Package: updeb-sample") {
					t.Errorf("dpkg-deb -I:\n%s", info)
				}
				suffix := map[Compression]string{CompressionXZ: ".xz", CompressionGzip: ".gz", CompressionZstd: ".zst"}[to]
				want := []string{"debian-binary", "control.tar" + suffix, "data.tar" + suffix, "_gpgorigin"}
				members := arMembers(t, cp)
				if len(members) != len(want) {
					t.Fatalf("members %+v, want %q", members, want)
				}
				for i, m := range members {
					// The package's mtimes: SourceDateEpoch, and 0 for _gpgorigin.
					if m.name != want[i] || m.mtime != origMembers[i].mtime {
						t.Errorf("member %d: %s of mtime %d, want %s of mtime %d", i+1, m.name, m.mtime, want[i], origMembers[i].mtime)
					}
				}
				if _, err := InspectFile(ctx, cp, archive.Limits{}); err != nil {
					t.Error(err)
				}
			})
		}
	}
}

// TestRecompressRefuses: a member in a compression dpkg-deb does not write,
// an xz member of two streams (dpkg reads the first alone) and a member
// that does not decompress are refused, when they are to be recompressed,, and leave neither the copy nor a
// temporary file.
func TestRecompressRefuses(t *testing.T) {
	ctl, data := hCtlTar(hostileControl), buildTar(false, dataEntries()...)
	bin := arMem{name: "debian-binary", data: []byte("2.0\n")}
	ctlM := arMem{name: "control.tar.zst", data: zst(t, ctl)}
	tests := []struct {
		name  string
		deb   []byte
		want  string
		isBad bool // wraps ErrMalformed
	}{
		{"bzip2", buildAr(bin, arMem{name: "control.tar.bz2", data: ctl}, arMem{name: "data.tar", data: data}), `ar member "control.tar.bz2": unsupported compression`, true},
		{"two xz streams", buildAr(bin, ctlM, arMem{name: "data.tar.xz", data: append(xzData(t, data), xzData(t, data)...)}), "several xz streams", true},
		{"corrupt zstd", buildAr(bin, ctlM, arMem{name: "data.tar.zst", data: flipLast(zst(t, data), 2)}), "data.tar.zst", false},
		{"not ar", []byte("PK\x03\x04"), "not an ar archive", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			src, dst := filepath.Join(dir, "in.deb"), filepath.Join(dir, "out.deb")
			if err := os.WriteFile(src, tt.deb, 0o644); err != nil {
				t.Fatal(err)
			}
			err := Recompress(context.Background(), dst, src, CompressionGzip)
			if err == nil || !strings.Contains(err.Error(), tt.want) || errors.Is(err, ErrMalformed) != tt.isBad {
				t.Fatalf("%v, want an error naming %q (ErrMalformed: %v)", err, tt.want, tt.isBad)
			}
			if left := dirEntries(t, dir); !slices.Equal(left, []string{"in.deb"}) {
				t.Errorf("left in the folder: %q", left)
			}
		})
	}
}

// TestRecompressStops: a stopped context stops the copy, which leaves
// nothing behind.
func TestRecompressStops(t *testing.T) {
	p := samplePackage()
	p.Compression = CompressionZstd
	orig, _ := writeTemp(t, p)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Recompress(ctx, filepath.Join(dir, "out.deb"), orig, CompressionXZ); !errors.Is(err, context.Canceled) {
		t.Fatalf("%v, want context.Canceled", err)
	}
	if left := dirEntries(t, dir); len(left) > 0 {
		t.Errorf("left in the folder: %q", left)
	}
}

// arMembers lists the ar members of the package at path.
func arMembers(t *testing.T, path string) []arMember {
	t.Helper()
	b := mustRead(t, path)
	members, err := readAr(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if members[0].mtime != testEpoch.Unix() {
		t.Fatalf("%s: debian-binary's mtime %d, want SourceDateEpoch (%d)", path, members[0].mtime, testEpoch.Unix())
	}
	return members
}

// A package whose file name is as long as CheckFileNameLength allows (255
// bytes, the file systems' limit) is written and recompressed under that
// name: the temporary files beside it are named from its first 128 bytes,
// as atomicfile's are. ".NAME.data-" and a random number went past the
// limit from a name of 239 bytes on, and failed with "file name too long"
// (up to 247 bytes only for some random numbers: the same package was
// written or not by chance).
func TestWriteLongestFileName(t *testing.T) {
	p := samplePackage()
	p.Control.Version, p.Control.Architecture = "1.0-1", "amd64"
	name := strings.Repeat("n", 255-len("_1.0-1_amd64.deb"))
	p.Control.Package = name
	p.Entries = slices.DeleteFunc(p.Entries, func(e Entry) bool { return strings.HasPrefix(e.Path, "/usr/share/doc/") })
	base := name + "_1.0-1_amd64.deb"
	if len(base) != 255 || CheckFileNameLength(name, "1.0-1", "amd64") != nil {
		t.Fatalf("%d bytes: not the longest name allowed", len(base))
	}
	dir := t.TempDir()
	path := filepath.Join(dir, base)
	for range 3 { // the temporary names are random: three tries
		if _, err := Write(context.Background(), path, p); err != nil {
			t.Fatalf("Write: %v", err)
		}
	}
	other := filepath.Join(t.TempDir(), base)
	if err := Recompress(context.Background(), other, path, CompressionGzip); err != nil {
		t.Fatalf("Recompress: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("left beside the package: %v", entries)
	}
}
