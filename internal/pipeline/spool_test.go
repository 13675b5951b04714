package pipeline

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/iotest"
	"time"

	"github.com/updeb/updeb/internal/confined"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/source"
	"github.com/updeb/updeb/pkg/archive"
)

func testFeed(t *testing.T) *feed {
	return &feed{name: "src", dir: t.TempDir(), log: slog.New(slog.DiscardHandler), spooled: map[string]member{},
		vs: &source.Verified{Source: recipe.ResolvedSource{URL: "https://example.org/src.tar.gz"}}}
}

func readAllClose(t *testing.T, rc io.ReadCloser) []byte {
	t.Helper()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.Close(); err != nil {
		t.Fatal(err)
	}
	if err := rc.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	return b
}

// A spooled member takes less disk than its size when it compresses, reads
// back whole (in short reads too), and its file goes at its last use while
// the open reader still has its bytes.
func TestSpoolCompressedAndRemovedAtLastUse(t *testing.T) {
	f := testFeed(t)
	content := []byte(strings.Repeat("a Go binary is not this repetitive\n", 60000)) // 2 MiB
	if err := f.spool(archive.Member{Name: "bin/tool", Size: int64(len(content))}, iotest.HalfReader(bytes.NewReader(content))); err != nil {
		t.Fatal(err)
	}
	m := f.spooled["bin/tool"]
	st, err := os.Stat(m.path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() >= int64(len(content))/4 {
		t.Errorf("spool file holds %d bytes for a member of %d: not compressed", st.Size(), len(content))
	}
	rc, size, err := openMember(m, false)
	if err != nil || size != int64(len(content)) {
		t.Fatalf("open: size %d, %v", size, err)
	}
	if got := readAllClose(t, rc); !bytes.Equal(got, content) {
		t.Fatalf("read back %d bytes, not the member", len(got))
	}
	rc, _, err = openMember(m, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(m.path); !os.IsNotExist(err) {
		t.Errorf("spool file still there after its last open: %v", err)
	}
	if got, err := io.ReadAll(iotest.OneByteReader(io.LimitReader(rc, 1000))); err != nil || !bytes.Equal(got, content[:1000]) {
		t.Fatalf("reading the removed file: %v", err)
	}
	if got := readAllClose(t, rc); !bytes.Equal(got, content[1000:]) {
		t.Fatalf("read back %d bytes, not the rest of the member", len(got))
	}
	if left, _ := os.ReadDir(f.dir); len(left) != 0 {
		t.Errorf("spool folder holds %d files", len(left))
	}
}

// A member shorter or longer than its header says leaves no spool file; a
// spool file damaged on disk is an error, never other bytes.
func TestSpoolErrors(t *testing.T) {
	for _, tt := range []struct {
		name    string
		size    int64
		content string
	}{
		{"short", 10, "12345"},
		{"long", 3, "12345"},
	} {
		f := testFeed(t)
		err := f.spool(archive.Member{Name: "x", Size: tt.size}, strings.NewReader(tt.content))
		if err == nil || !strings.Contains(err.Error(), "header says") {
			t.Errorf("%s: err = %v, want a size error", tt.name, err)
		}
		if left, _ := os.ReadDir(f.dir); len(left) != 0 {
			t.Errorf("%s: left %d spool files", tt.name, len(left))
		}
	}

	f := testFeed(t)
	content := bytes.Repeat([]byte("0123456789abcdef"), 1<<14)
	if err := f.spool(archive.Member{Name: "x", Size: int64(len(content))}, bytes.NewReader(content)); err != nil {
		t.Fatal(err)
	}
	m := f.spooled["x"]
	b, err := os.ReadFile(m.path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x40
	if err := os.WriteFile(filepath.Join(m.path), b, 0o600); err != nil {
		t.Fatal(err)
	}
	rc, _, err := openMember(m, false)
	if err == nil {
		var got []byte
		got, err = io.ReadAll(rc)
		rc.Close()
		if err == nil && bytes.Equal(got, content) {
			t.Fatal("damaged spool file read back as the member")
		}
	}
	if err == nil {
		t.Error("a damaged spool file read without an error")
	}
}

// A raw source's cache file swapped for a FIFO after it was verified is
// refused when the package opens it, never waited for in open(2).
func TestRawMemberFIFORefused(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := openMember(member{path: p, size: 1}, false)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, confined.ErrRefused) {
			t.Errorf("open a FIFO as a raw source: %v, want a refusal", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("opening a FIFO as a raw source blocked")
	}
}
