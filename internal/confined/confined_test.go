package confined

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestOpen(t *testing.T) {
	top := t.TempDir()
	dir := filepath.Join(top, "recipes")
	write(t, filepath.Join(dir, "helm", "etc", "helm.conf"), "inside")
	write(t, filepath.Join(dir, "other", "x"), "sibling")
	write(t, filepath.Join(top, "secret"), "outside")
	links := map[string]string{
		"helm/abs":         "/etc/passwd",
		"helm/rel-out":     "../../secret",
		"helm/sibling":     "../other/x",
		"helm/inner":       "etc/helm.conf",
		"helm/chain":       "inner",
		"helm/loop":        "loop",
		"helm/devnull":     "/dev/null",
		"helm/dirlink-out": "/etc",
		"linked-out":       "/etc",
		"linked-in":        "helm",
	}
	for l, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, l)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "helm", "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mknod(filepath.Join(dir, "helm", "zero"), syscall.S_IFCHR|0o644, 1<<8|5); err != nil && os.Getuid() == 0 {
		t.Fatal(err)
	}

	accepted := []struct {
		names []string
		want  string
	}{
		{[]string{"helm", "etc/helm.conf"}, "inside"},
		{[]string{"helm", "inner"}, "inside"},
		{[]string{"helm", "chain"}, "inside"},
		{[]string{"linked-in", "etc/helm.conf"}, "inside"}, // files-dir a symlink inside recipes/
		{[]string{"helm/etc", "helm.conf"}, "inside"},
	}
	for _, tc := range accepted {
		f, fi, err := Open(dir, tc.names...)
		if err != nil {
			t.Errorf("Open(%q) = %v", tc.names, err)
			continue
		}
		b, _ := io.ReadAll(f)
		f.Close()
		if string(b) != tc.want || fi.Size() != int64(len(tc.want)) {
			t.Errorf("Open(%q) read %q (size %d)", tc.names, b, fi.Size())
		}
	}

	refused := [][]string{
		{"helm", "abs"},
		{"helm", "rel-out"},
		{"helm", "sibling"}, // inside recipes/, outside helm/
		{"helm", "loop"},
		{"helm", "devnull"},
		{"helm", "dirlink-out/passwd"},
		{"helm", "../other/x"},
		{"helm", "etc/../../other/x"},
		{"helm", "/etc/passwd"},
		{"helm", "fifo"},
		{"helm", "etc"},
		{"helm", "etc/helm.conf/x"},
		{"linked-out", "passwd"},
		{"..", "secret"},
		{"helm", "a\x00b"},
	}
	if os.Getuid() == 0 {
		refused = append(refused, []string{"helm", "zero"})
	}
	for _, names := range refused {
		done := make(chan error, 1)
		go func() {
			f, _, err := Open(dir, names...)
			if f != nil {
				f.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, ErrRefused) {
				t.Errorf("Open(%q) = %v, want a refusal", names, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("Open(%q) blocked", names)
		}
	}
	if _, _, err := Open(dir, "helm", "missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want not-exist", err)
	}
}

// A symlink swapped back and forth between a file inside and one outside,
// while the file is opened over and over: what is read is never the outside.
func TestSymlinkSwapRace(t *testing.T) {
	top := t.TempDir()
	dir := filepath.Join(top, "files")
	write(t, filepath.Join(dir, "real"), "inside")
	write(t, filepath.Join(top, "secret"), "outside")
	link := filepath.Join(dir, "f")
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			target := "real"
			if i%2 == 1 {
				target = filepath.Join(top, "secret")
			}
			tmp := link + ".new"
			os.Remove(tmp)
			os.Symlink(target, tmp)
			os.Rename(tmp, link)
		}
	}()
	opened := 0
	for deadline := time.Now().Add(300 * time.Millisecond); time.Now().Before(deadline); {
		f, _, err := Open(dir, "f")
		if err != nil {
			continue
		}
		b, _ := io.ReadAll(f)
		f.Close()
		opened++
		if string(b) != "inside" {
			t.Fatalf("read %q through a swapped symlink", b)
		}
	}
	stop.Store(true)
	wg.Wait()
	if opened == 0 {
		t.Fatal("never opened the file inside")
	}
}

// TestOpenFile: a file the user names is read when it is a regular file (a
// symlink to one included) of at most the limit, and refused at once, without
// reading, when it is a FIFO (whose open would block for ever), a device that
// never ends, a folder, or larger than the limit.
func TestOpenFile(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "key.asc")
	write(t, ok, "0123456789")
	link := filepath.Join(dir, "link.asc")
	if err := os.Symlink(ok, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{ok, link} {
		if b, err := ReadFile(name, 10); err != nil || string(b) != "0123456789" {
			t.Errorf("ReadFile(%s, 10) = %q, %v; want the content", name, b, err)
		}
	}
	// The null device, or a link to it, is an empty file (--config /dev/null).
	null := filepath.Join(dir, "null")
	if err := os.Symlink(os.DevNull, null); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{os.DevNull, null} {
		if b, err := ReadFile(name, 10); err != nil || len(b) != 0 {
			t.Errorf("ReadFile(%s) = %q, %v; want empty", name, b, err)
		}
	}
	refused := map[string]string{
		fifo:        "a FIFO",
		"/dev/zero": "a character device",
		dir:         "a folder",
		ok:          "larger than 9 bytes",
	}
	for name, want := range refused {
		done := make(chan error, 1)
		go func() {
			_, err := ReadFile(name, 9)
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), name) {
				t.Errorf("ReadFile(%s): %v; want ErrRefused naming the file and %q", name, err, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("ReadFile(%s) blocked", name)
		}
	}
	if _, _, err := OpenFile(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("OpenFile(missing): %v; want fs.ErrNotExist", err)
	}
}

// TestOpenRoot: a folder opens as a root (through a symlink too); a FIFO,
// a device or a file in its place is refused at once, naming what it is,
// and the open never blocks (os.OpenRoot's blocks on a FIFO until a writer
// comes).
func TestOpenRoot(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "folder", "f"), "x")
	write(t, filepath.Join(dir, "file"), "x")
	os.Symlink("folder", filepath.Join(dir, "link"))
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Symlink("fifo", filepath.Join(dir, "fifo-link"))
	for _, ok := range []string{"folder", "link"} {
		root, err := OpenRoot(filepath.Join(dir, ok))
		if err != nil {
			t.Fatalf("%s: %v", ok, err)
		}
		if _, err := root.Stat("f"); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
		root.Close()
	}
	for name, want := range map[string]string{
		"fifo":      "not a folder (a FIFO)",
		"fifo-link": "not a folder (a FIFO)",
		"file":      "not a folder (a regular file)",
		"/dev/null": "not a folder (a character device)",
	} {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, name)
		}
		done := make(chan error, 1)
		go func() {
			_, err := OpenRoot(p)
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %v, want a refusal saying %q", name, err, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: OpenRoot blocked", name)
		}
		// and every Open through it
		if _, _, err := Open(p, "x"); !errors.Is(err, ErrRefused) {
			t.Errorf("Open(%s, x): %v", name, err)
		}
	}
	if _, err := OpenRoot(filepath.Join(dir, "none")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing folder: %v", err)
	}
}
