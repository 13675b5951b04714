package atomicfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"
)

func TestWriteReplacesAndLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.txt")
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	if err := WriteFile(p, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	st, _ := os.Stat(p)
	if string(b) != "two" || st.Mode().Perm() != 0o644 {
		t.Fatalf("content %q mode %v", b, st.Mode())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("left behind: %v", entries)
	}
}

func TestFailedFillKeepsOldContent(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.txt")
	WriteFile(p, []byte("old"), 0o600)
	boom := errors.New("boom")
	err := WriteFrom(p, 0o600, func(w io.Writer) error {
		w.Write([]byte("partial"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	b, _ := os.ReadFile(p)
	entries, _ := os.ReadDir(dir)
	if string(b) != "old" || len(entries) != 1 {
		t.Fatalf("content %q, entries %v", b, entries)
	}
}

// TestLongName: a file whose name is near the file system's limit (255
// bytes) is written: the temporary name beside it is cut, not the target's.
func TestLongName(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{strings.Repeat("a", 255), strings.Repeat("é", 127)} {
		p := filepath.Join(dir, name)
		if err := WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatalf("%d bytes: %v", len(name), err)
		}
		if b, _ := os.ReadFile(p); string(b) != "x" {
			t.Errorf("%d bytes: read %q", len(name), b)
		}
	}
	if !utf8.ValidString(TempPrefix(strings.Repeat("é", 127))) {
		t.Error("the cut name is not valid UTF-8")
	}
}

// CommitNew puts a new file in place, and refuses (fs.ErrExist) when
// something is there, leaving it and no temporary file.
func TestCommitNew(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "new.yaml")
	for i, want := range []error{nil, fs.ErrExist} {
		f, err := Create(p, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(strings.Repeat("x", i+1))
		if err := f.CommitNew(); !errors.Is(err, want) {
			t.Fatalf("CommitNew %d: %v, want %v", i, err, want)
		}
	}
	if b, _ := os.ReadFile(p); string(b) != "x" {
		t.Errorf("the file holds %q, want the first one's x", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
}
