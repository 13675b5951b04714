package deb

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/testkit/testenv"
	"github.com/updeb/updeb/pkg/archive"
)

// xzFilters returns xz -lvv's filter chain of each block of an xz file.
func xzFilters(t *testing.T, path string) []string {
	t.Helper()
	var chains []string
	for _, line := range strings.Split(string(testenv.Run(t, "xz", "--robot", "-lvv", path)), "\n") {
		if f := strings.Split(line, "\t"); f[0] == "block" {
			chains = append(chains, f[len(f)-1])
		}
	}
	return chains
}

// extractMember writes ar member name of the .deb at path to a file.
func extractMember(t *testing.T, path, name string) string {
	t.Helper()
	b := mustRead(t, path)
	members, err := readAr(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range members {
		if m.name == name {
			out := filepath.Join(t.TempDir(), name)
			if err := os.WriteFile(out, b[m.offset:m.offset+m.size], 0o644); err != nil {
				t.Fatal(err)
			}
			return out
		}
	}
	t.Fatalf("%s has no member %s", path, name)
	return ""
}

// data.tar.xz of amd64 and i386 packages has the x86 BCJ filter, which
// liblzma (xz, dpkg-deb) and InspectFile decode; other architectures and
// control.tar.xz do not have it. The test binary itself is the x86 payload.
func TestX86FilterByArchitecture(t *testing.T) {
	testenv.RequireTool(t, "xz", "dpkg-deb")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	code := mustRead(t, exe)
	if len(code) > 3<<20 {
		code = code[:3<<20] // enough to measure, quick to compress
	}
	sum := md5.Sum(code)
	sizes := map[string]int64{}
	for _, tc := range []struct {
		arch string
		x86  bool
	}{{"amd64", true}, {"i386", true}, {"arm64", false}, {"all", false}} {
		t.Run(tc.arch, func(t *testing.T) {
			p := samplePackage()
			p.Control.Architecture = tc.arch
			p.Entries = append(p.Entries, Entry{Path: "/usr/bin/tool", Type: TypeFile, Mode: 0o755, Size: int64(len(code)),
				Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(code)), nil }})
			path, _ := writeTemp(t, p)

			data := extractMember(t, path, "data.tar.xz")
			testenv.Run(t, "xz", "-t", data)
			want := "--lzma2=dict=4MiB"
			if tc.x86 {
				want = "--x86 --lzma2=dict=4MiB"
			}
			chains := xzFilters(t, data)
			if len(chains) == 0 {
				t.Fatal("xz -l lists no blocks in data.tar.xz")
			}
			for i, c := range chains {
				if c != want {
					t.Errorf("data.tar.xz block %d: filters %q, want %q", i+1, c, want)
				}
			}
			// control.tar.xz is text: never the x86 filter (its dictionary is the block's size).
			for i, c := range xzFilters(t, extractMember(t, path, "control.tar.xz")) {
				if !strings.HasPrefix(c, "--lzma2=") {
					t.Errorf("control.tar.xz block %d: filters %q, want LZMA2 only", i+1, c)
				}
			}
			st, err := os.Stat(data)
			if err != nil {
				t.Fatal(err)
			}
			sizes[tc.arch] = st.Size()

			if list := string(testenv.Run(t, "dpkg-deb", "-c", path)); !strings.Contains(list, " ./usr/bin/tool\n") {
				t.Fatalf("dpkg-deb -c does not list ./usr/bin/tool:\n%s", list)
			}
			tarData := testenv.Run(t, "dpkg-deb", "--fsys-tarfile", path)
			if !bytes.Contains(tarData, code[:4096]) {
				t.Fatalf("dpkg-deb --fsys-tarfile: the binary's first page is not in the tar")
			}
			info, err := InspectFile(context.Background(), path, archive.Limits{})
			if err != nil {
				t.Fatalf("InspectFile: %v", err)
			}
			found := false
			for _, f := range info.Files {
				if f.Path == "./usr/bin/tool" {
					found = true
					if f.MD5 != hex.EncodeToString(sum[:]) || f.Size != int64(len(code)) || info.MD5Sums["usr/bin/tool"] != f.MD5 {
						t.Errorf("InspectFile: ./usr/bin/tool md5 %s size %d, md5sums %s; want %x and %d", f.MD5, f.Size, info.MD5Sums["usr/bin/tool"], sum, len(code))
					}
				}
			}
			if !found {
				t.Fatal("InspectFile: no ./usr/bin/tool")
			}
		})
	}
	// The filter is worth it on x86 code: at least 2% smaller.
	t.Logf("data.tar.xz of %d bytes of x86 code: %v", len(code), sizes)
	if sizes["amd64"] == 0 || sizes["arm64"] == 0 || sizes["amd64"] > sizes["arm64"]*98/100 {
		t.Errorf("data.tar.xz: %d bytes with the x86 filter, %d without: want at least 2%% smaller", sizes["amd64"], sizes["arm64"])
	}
}
