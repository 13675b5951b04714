package deb

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

var testEpoch = time.Date(2024, 8, 14, 12, 0, 0, 0, time.UTC)

func content(s string) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(s)), nil }
}

func fileEntry(p string, mode fs.FileMode, s string) Entry {
	return Entry{Path: p, Type: TypeFile, Mode: mode, Size: int64(len(s)), Open: content(s)}
}

// samplePackage has nested and implicit directories, an executable, a
// conffile, symlinks, a hardlink, scripts and triggers.
func samplePackage() *Package {
	return &Package{
		Control: Control{
			Package: "updeb-sample", Version: "1:1.30.0~rc.1-1", Architecture: "all",
			Maintainer: "updeb tests <tests@updeb.invalid>", Depends: []string{"libc6 (>= 2.36)", "adduser | passwd"},
			Section: "admin", Priority: "optional", Homepage: "https://updeb.invalid/",
			Summary:     "sample package for updeb's tests",
			Description: "A package that exercises the writer.\n\nSecond paragraph:\n  verbatim line\n",
		},
		Entries: []Entry{
			fileEntry("/usr/bin/sample", 0o700, "#!/bin/sh\necho sample\n"),
			fileEntry("/etc/sample/sample.conf", 0o600, "key = value\n"),
			{Path: "/usr/share/doc/updeb-sample", Type: TypeDir, Mode: 0o700},
			fileEntry("/usr/share/doc/updeb-sample/copyright", 0o644, "Copyright: nobody\n"),
			{Path: "/usr/bin/sample-link", Type: TypeSymlink, Linkname: "sample"},
			{Path: "/usr/lib/sample/a-b", Type: TypeHardlink, Linkname: "/usr/lib/sample/a/data"},
			fileEntry("/usr/lib/sample/a/data", 0o644, strings.Repeat("x", 3000)),
			fileEntry("/usr/lib/sample/a.b", 0o644, ""),
			{Path: "/var/lib/sample", Type: TypeDir},
		},
		Scripts: []Script{
			{Name: "postinst", Content: []byte("#!/bin/sh\nset -e\nexit 0\n")},
			{Name: "prerm", Content: []byte("#!/bin/sh\nset -e\nexit 0\n"), Mode: 0o555},
		},
		Conffiles:       []string{"/etc/sample/sample.conf"},
		Triggers:        "interest-noawait /usr/lib/sample",
		SourceDateEpoch: testEpoch,
	}
}

func writeTemp(t *testing.T, p *Package) (string, *Result) {
	t.Helper()
	path := filepath.Join(t.TempDir(), p.Control.Package+".deb")
	res, err := Write(context.Background(), path, p)
	if err != nil {
		t.Fatalf("Write: %v", err)
	}
	checkResultDigest(t, path, res)
	return path, res
}

// checkResultDigest checks Result's size and sha256 against the file written.
func checkResultDigest(t testing.TB, path string, res *Result) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); n != res.Size || got != res.SHA256 {
		t.Errorf("%s: Result says %d bytes, sha256 %s; the file has %d bytes, sha256 %s", path, res.Size, res.SHA256, n, got)
	}
}

// dirEntries lists a directory's names (the writer must leave nothing else).
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

// treeEntries turns a directory on disk into entries, in the order the
// filesystem lists them (not sorted: the writer must not depend on it).
func treeEntries(t testing.TB, root string) []Entry {
	t.Helper()
	var out []Entry
	inodes := map[uint64]string{}
	var walk func(dir string)
	walk = func(dir string) {
		f, err := os.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		names, err := f.Readdirnames(-1)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			full := filepath.Join(dir, n)
			rel := "/" + filepath.ToSlash(strings.TrimPrefix(full, root+"/"))
			if rel == "/DEBIAN" {
				continue
			}
			st, err := os.Lstat(full)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case st.IsDir():
				out = append(out, Entry{Path: rel, Type: TypeDir, Mode: st.Mode().Perm(), ModTime: st.ModTime()})
				walk(full)
			case st.Mode()&fs.ModeSymlink != 0:
				target, err := os.Readlink(full)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, Entry{Path: rel, Type: TypeSymlink, Linkname: target, ModTime: st.ModTime()})
			case st.Sys().(*syscall.Stat_t).Nlink > 1 && inodes[st.Sys().(*syscall.Stat_t).Ino] != "":
				out = append(out, Entry{Path: rel, Type: TypeHardlink, Linkname: inodes[st.Sys().(*syscall.Stat_t).Ino]})
			default:
				inodes[st.Sys().(*syscall.Stat_t).Ino] = rel
				out = append(out, Entry{Path: rel, Type: TypeFile, Mode: st.Mode().Perm(), Size: st.Size(),
					ModTime: st.ModTime(), Open: func() (io.ReadCloser, error) { return os.Open(full) }})
			}
		}
	}
	walk(root)
	return out
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
