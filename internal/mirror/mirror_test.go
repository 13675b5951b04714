package mirror

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const hex64 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestParseManifest(t *testing.T) {
	good := `{"schema":"updeb/mirror/v1","files":[{"url":"https://h/a","path":"h/a","size":1,"sha256":"` + hex64 + `"}]}`
	if _, err := ParseManifest([]byte(good)); err != nil {
		t.Fatalf("good manifest: %v", err)
	}
	// A URL whose origin is spelled otherwise is filed in the origin's
	// folder, or, by updeb before 2026-12, at its host as written.
	for _, p := range []string{"h/a", "H:443/a"} {
		if _, err := ParseManifest([]byte(strings.NewReplacer(`"https://h/a"`, `"https://H:443/a"`, `"h/a"`, `"`+p+`"`).Replace(good))); err != nil {
			t.Errorf("https://H:443/a at %s: %v", p, err)
		}
	}
	for name, bad := range map[string]string{
		"schema":      `{"schema":"updeb/mirror/v2","files":[]}`,
		"unknown key": `{"schema":"updeb/mirror/v1","files":[],"extra":1}`,
		"two values":  `{"schema":"updeb/mirror/v1","files":[]} {}`,
		"traversal":   strings.Replace(good, `"h/a"`, `"../etc/passwd"`, 1),
		"inner dots":  strings.Replace(good, `"h/a"`, `"h/../../a"`, 1),
		"absolute":    strings.Replace(good, `"h/a"`, `"/etc/passwd"`, 1),
		"no host":     strings.Replace(good, `"h/a"`, `"a"`, 1),
		"manifest":    strings.Replace(good, `"h/a"`, `"updeb-mirror.json"`, 1),
		"twice":       strings.Replace(good, `}]}`, `},{"url":"https://h/a","path":"h/a","size":1,"sha256":"`+hex64+`"}]}`, 1),
		"short hex":   strings.Replace(good, hex64, "abc", 1),
		"upper hex":   strings.Replace(good, hex64, strings.ToUpper(hex64), 1),
		"negative":    strings.Replace(good, `"size":1`, `"size":-1`, 1),
		"not json":    `schema: updeb/mirror/v1`,
		"truncated":   good[:len(good)/2],
		// A manifest that lies: the file it checks for a URL is not the
		// one a build reads for it (which it would call unlisted, not checked).
		"another path":                  strings.Replace(good, `"h/a"`, `"h/b"`, 1),
		"another host":                  strings.Replace(good, `"h/a"`, `"g/a"`, 1),
		"host as written, another path": strings.Replace(strings.Replace(good, `"https://h/a"`, `"https://H/a"`, 1), `"h/a"`, `"H/b"`, 1),
		"no URL":                        strings.Replace(good, `"https://h/a"`, `""`, 1),
		"bad URL":                       strings.Replace(good, `"https://h/a"`, `"https://h/a\u001b]0;x\u0007"`, 1),
		"dot segment":                   strings.Replace(strings.Replace(good, `"https://h/a"`, `"https://h/x/../a"`, 1), `"h/a"`, `"h/x/../a"`, 1),
		"URL not a file":                strings.Replace(good, `"https://h/a"`, `"https://h/"`, 1),
	} {
		if _, err := ParseManifest([]byte(bad)); !errors.Is(err, ErrManifest) {
			t.Errorf("%s: err = %v, want ErrManifest", name, err)
		}
	}
}

// TestVerifyStaysInside: a listed file that is a symlink out of the folder
// is refused, never read.
func TestVerifyStaysInside(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("x"), 0o600)
	os.MkdirAll(filepath.Join(dir, "h"), 0o755)
	os.Symlink(secret, filepath.Join(dir, "h", "a"))
	m := &Manifest{Files: []Entry{{URL: "https://h/a", Path: "h/a", Size: 1, SHA256: hex64}, {URL: "https://h/b", Path: "h/b", Size: 1, SHA256: hex64}}}
	root := openRoot(t, dir)
	if err := writeManifest(root, dir, m); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "h", "extra"), []byte("y"), 0o644)
	rep, err := Verify(context.Background(), dir)
	if !errors.Is(err, ErrFailed) || rep.Files[0].Status != Refused || rep.Files[1].Status != Missing || len(rep.Unlisted) != 1 || rep.Unlisted[0] != "h/extra" {
		t.Fatalf("err %v, report %+v", err, rep)
	}
}

// TestVerifyThroughASymlink: a folder named by a symlink to it
// (/srv/mirror -> /media/usb/updeb-mirror) is verified as the folder
// itself: its files the manifest does not name are listed as unlisted.
// Verify walked the symlink itself, listed "." as the one unlisted file, and
// said nothing of a file added to the folder.
func TestVerifyThroughASymlink(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "updeb-mirror")
	body := []byte("x")
	sum := sha256.Sum256(body)
	os.MkdirAll(filepath.Join(dir, "h"), 0o755)
	os.WriteFile(filepath.Join(dir, "h", "a"), body, 0o644)
	os.WriteFile(filepath.Join(dir, "h", "extra"), []byte("y"), 0o644)
	root := openRoot(t, dir)
	m := &Manifest{Files: []Entry{{URL: "https://h/a", Path: "h/a", Size: 1, SHA256: hex.EncodeToString(sum[:])}}}
	if err := writeManifest(root, dir, m); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "mirror")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	rep, err := Verify(context.Background(), link)
	if err != nil || rep.Count(OK) != 1 || len(rep.Unlisted) != 1 || rep.Unlisted[0] != "h/extra" {
		t.Fatalf("verify %s: %v, report %+v; want h/a ok and h/extra unlisted", link, err, rep)
	}
}

// TestManifestReadBack: a manifest larger than a reader takes (very many
// files) is refused when written, and the folder keeps the one it had,
// which verify and the next export read. It was written: the export said
// it succeeded, and the folder was one neither mirror verify nor a later
// export would read ("larger than 16777216 bytes", exit 2).
func TestManifestReadBack(t *testing.T) {
	dir := t.TempDir()
	root := openRoot(t, dir)
	e := func(i int) Entry {
		name := fmt.Sprintf("%0200d", i)
		return Entry{URL: "https://h/" + name, Path: "h/" + name, Size: 1, SHA256: hex64}
	}
	if err := writeManifest(root, dir, &Manifest{Files: []Entry{e(0)}}); err != nil {
		t.Fatal(err)
	}
	big := &Manifest{}
	for i := range 40000 {
		big.Files = append(big.Files, e(i))
	}
	if err := writeManifest(root, dir, big); !errors.Is(err, ErrManifest) || !strings.Contains(err.Error(), filepath.Join(dir, ManifestName)) {
		t.Errorf("a manifest of %d files: %v, want ErrManifest naming it", len(big.Files), err)
	}
	if m, err := readManifest(dir, false); err != nil || len(m.Files) != 1 {
		t.Errorf("the manifest read back: %v", err)
	}
}

// TestVerifyReadsAsTheBuild: a listed file is checked inside its host's
// folder, the folder a mirrors: entry reads (to: file:///DIR/HOST/): a
// symlink to another host's folder of DIR, which the build refuses as
// outside its mirror, is refused, while one that stays in the host's folder
// passes, as the build reads it.
func TestVerifyReadsAsTheBuild(t *testing.T) {
	dir := t.TempDir()
	body := []byte("x")
	sum := sha256.Sum256(body)
	os.MkdirAll(filepath.Join(dir, "h"), 0o755)
	os.MkdirAll(filepath.Join(dir, "g"), 0o755)
	os.WriteFile(filepath.Join(dir, "g", "a"), body, 0o644)
	os.WriteFile(filepath.Join(dir, "h", "c"), body, 0o644)
	os.Symlink("../g/a", filepath.Join(dir, "h", "a"))
	os.Symlink("c", filepath.Join(dir, "h", "b"))
	for name, want := range map[string]string{"a": Refused, "b": OK} {
		e := Entry{URL: "https://h/" + name, Path: "h/" + name, Size: 1, SHA256: hex.EncodeToString(sum[:])}
		if c, err := check(context.Background(), dir, e); err != nil || c.Status != want {
			t.Errorf("h/%s: %+v, %v; want %s", name, c, err, want)
		}
	}
}

// TestStopsInsideAFile: hashing a listed file (verify) or one already in the
// export folder stops with the context's error as soon as it is done, inside
// the file rather than at its end (a mirror's files run to gigabytes, and a
// signal must stop updeb mirror verify within a moment).
func TestStopsInsideAFile(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "h"), 0o755)
	big := filepath.Join(dir, "h", "a")
	if err := os.WriteFile(big, make([]byte, 4<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	e := Entry{URL: "https://h/a", Path: "h/a", Size: 4 << 20, SHA256: hex64}
	if c, err := check(ctx, dir, e); !errors.Is(err, context.Canceled) {
		t.Errorf("check with a stopped context: %+v, %v; want context.Canceled", c, err)
	}
	root := openRoot(t, dir)
	if _, _, err := hashIn(ctx, root, "h/a", e.algorithms()); !errors.Is(err, context.Canceled) {
		t.Errorf("hashIn with a stopped context: %v; want context.Canceled", err)
	}
	if c, err := check(context.Background(), dir, e); err != nil || c.Status != Corrupt || c.GotSize != 4<<20 {
		t.Errorf("check: %+v, %v; want the whole file read, and corrupt", c, err)
	}
}

func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(`{"schema":"updeb/mirror/v1","files":[{"url":"https://h/a","path":"h/a","size":1,"sha256":"` + hex64 + `"}]}`))
	f.Add([]byte(`{"schema":"updeb/mirror/v1","files":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseManifest(data)
		if err != nil {
			return
		}
		for _, e := range m.Files {
			if strings.HasPrefix(e.Path, "/") || strings.Contains("/"+e.Path+"/", "/../") || !isHex(e.SHA256, 64) {
				t.Errorf("accepted %+v", e)
			}
		}
	})
}

// TestWriteInStaysInside: export's writes never go through a symlink planted
// in its folder: a folder on the way that is a symlink (out, or in) is
// refused, a file that is a symlink is replaced by the file, and the target
// outside is untouched.
func TestWriteInStaysInside(t *testing.T) {
	outside := t.TempDir()
	victim := filepath.Join(outside, "a")
	os.WriteFile(victim, []byte("outside"), 0o644)
	write := func(dir, rel string) error {
		root := openRoot(t, dir)
		return writeIn(root, dir, rel, func(w io.Writer) error { _, err := w.Write([]byte("new")); return err })
	}
	// a host folder that is a symlink out of the folder
	dir := t.TempDir()
	os.Symlink(outside, filepath.Join(dir, "h"))
	if err := write(dir, "h/a"); !errors.Is(err, ErrOutside) || !strings.Contains(err.Error(), "is a symlink") {
		t.Errorf("through a folder symlink out: %v", err)
	}
	// a folder symlink pointing inside is refused too: no symlink is followed
	dir = t.TempDir()
	os.MkdirAll(filepath.Join(dir, "real"), 0o755)
	os.Symlink("real", filepath.Join(dir, "h"))
	if err := write(dir, "h/a"); !errors.Is(err, ErrOutside) {
		t.Errorf("through a folder symlink inside: %v", err)
	}
	// the file itself a symlink out: replaced, the target untouched
	dir = t.TempDir()
	os.MkdirAll(filepath.Join(dir, "h"), 0o755)
	os.Symlink(victim, filepath.Join(dir, "h", "a"))
	if err := write(dir, "h/a"); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "h", "a")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("the planted link was not replaced by a file: %v %v", fi, err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "outside" {
		t.Errorf("the file outside was written: %q", b)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "h", ".*")); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestWriteInLongName: a file whose name is near the file system's limit
// (255 bytes) is exported: the temporary name beside it is cut.
func TestWriteInLongName(t *testing.T) {
	dir := t.TempDir()
	root := openRoot(t, dir)
	rel := "h/" + strings.Repeat("a", 255)
	if err := writeIn(root, dir, rel, func(w io.Writer) error { _, err := w.Write([]byte("x")); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, rel)); string(b) != "x" {
		t.Errorf("read %q", b)
	}
}

// openRoot opens dir as an os.Root, closed when the test ends.
func openRoot(t *testing.T, dir string) *os.Root {
	t.Helper()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return root
}
