package mirror

import (
	"context"
	"errors"
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
	if err := writeManifest(dir, m); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "h", "extra"), []byte("y"), 0o644)
	rep, err := Verify(context.Background(), dir)
	if !errors.Is(err, ErrFailed) || rep.Files[0].Status != Refused || rep.Files[1].Status != Missing || len(rep.Unlisted) != 1 || rep.Unlisted[0] != "h/extra" {
		t.Fatalf("err %v, report %+v", err, rep)
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
	if _, _, err := hashFile(ctx, big, e.algorithms()); !errors.Is(err, context.Canceled) {
		t.Errorf("hashFile with a stopped context: %v; want context.Canceled", err)
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
