package archive

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/updeb/updeb/pkg/digest"
)

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestSelectPinned: an archive read with the sha256 it was verified to have
// hands out its members when its bytes still hash to it, in every format and
// in the second pass a wanted hardlink takes; bytes that hash otherwise (the
// file replaced after it was verified) are refused, ErrCorrupt wrapping a
// mismatch that names both digests.
func TestSelectPinned(t *testing.T) {
	plain := tarBytes(t, file("a", "first"), file("b", "second"), tent{name: "c", typ: tar.TypeLink, link: "a"})
	for _, tc := range []struct {
		name string
		kind Kind
		data []byte
		want []string
	}{
		{"tar.gz", TarGz, gzBytes(t, plain), []string{"a", "c"}},
		{"tar.xz", TarXz, xzBytes(t, plain), []string{"b", "c"}},
		{"tar", Tar, plain, []string{"a", "b"}},
		{"zip", Zip, zipBytes(t, zent{name: "a", body: "first"}, zent{name: "b", body: "second"}), []string{"a", "b"}},
		{"raw", Raw, []byte("a binary"), []string{""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := writeTemp(t, "x", tc.data)
			var n int
			count := func(m Member, r io.Reader) error { n++; return nil }
			if err := SelectPinned(context.Background(), p, sha256Hex(tc.data), tc.kind, tc.want, Limits{}, count); err != nil || n != len(tc.want) {
				t.Fatalf("the verified bytes: %v after %d members, want nil after %d", err, n, len(tc.want))
			}
			other := sha256Hex([]byte("other bytes"))
			err := SelectPinned(context.Background(), p, other, tc.kind, tc.want, Limits{}, count)
			var me *digest.MismatchError
			if !errors.Is(err, ErrCorrupt) || !errors.As(err, &me) || me.Want != other || me.Got != sha256Hex(tc.data) {
				t.Errorf("bytes that hash otherwise: %v, want ErrCorrupt and a mismatch naming both digests", err)
			}
			if err := Select(context.Background(), p, tc.kind, tc.want, Limits{}, count); err != nil {
				t.Errorf("Select checks no pin: %v", err)
			}
		})
	}
}

// TestSelectPinnedRewrittenWhileRead: a tar archive rewritten in place while
// it is read (past what was read ahead) hands out the new bytes to fn, and
// the pin refuses them at the end.
func TestSelectPinnedRewrittenWhileRead(t *testing.T) {
	late := strings.Repeat("x", 2*readBufferSize)
	data := tarBytes(t, file("a", "first"), file("b", late))
	p := writeTemp(t, "a.tar", data)
	at := int64(bytes.LastIndex(data, []byte(late)) + len(late) - 10)
	err := SelectPinned(context.Background(), p, sha256Hex(data), Tar, []string{"a", "b"}, Limits{}, func(m Member, r io.Reader) error {
		if m.Name != "a" {
			return nil
		}
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = f.WriteAt([]byte("yyyyyyyyyy"), at)
		return err
	})
	var me *digest.MismatchError
	if !errors.Is(err, ErrCorrupt) || !errors.As(err, &me) || me.Want != sha256Hex(data) {
		t.Errorf("rewritten while read: %v, want ErrCorrupt and a mismatch", err)
	}
}

// TestSelectFIFORefused: a FIFO in the place of the file (a cache file
// swapped after its check) is refused at once, in every format, never
// waited for in open(2), where no context reaches.
func TestSelectFIFORefused(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []Kind{TarGz, Zip, Raw} {
		done := make(chan error, 1)
		go func() {
			want := []string{"a"}
			if kind == Raw {
				want = []string{""}
			}
			done <- Select(context.Background(), p, kind, want, Limits{}, func(Member, io.Reader) error { return nil })
		}()
		select {
		case err := <-done:
			if !errors.Is(err, ErrNotRegular) {
				t.Errorf("%s: %v, want ErrNotRegular", kind, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: Select blocked on a FIFO", kind)
		}
	}
}
