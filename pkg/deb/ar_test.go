package deb

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// The adapter must give exactly one padding byte per odd member, whatever the
// chunking, and refuse what the library would silently truncate.
func TestArWriterAdapter(t *testing.T) {
	sizes := []int{0, 1, 2, arChunk - 1, arChunk, arChunk + 1, 3*arChunk + 7}
	var buf bytes.Buffer
	aw, err := newArWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	mtime := time.Unix(1773446400, 0)
	contents := make([][]byte, len(sizes))
	want := int64(len(arMagic))
	for i, n := range sizes {
		contents[i] = make([]byte, n)
		for j := range contents[i] {
			contents[i][j] = byte(rand.IntN(256))
		}
		if err := aw.member("m"+strings.Repeat("x", i), mtime, int64(n), bytes.NewReader(contents[i])); err != nil {
			t.Fatal(err)
		}
		want += arHeaderSize + int64(n) + int64(n%2)
	}
	if int64(buf.Len()) != want {
		t.Fatalf("archive is %d bytes, want %d (padding wrong)", buf.Len(), want)
	}
	members, err := readAr(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range members {
		if got := buf.Bytes()[m.offset : m.offset+m.size]; !bytes.Equal(got, contents[i]) {
			t.Errorf("member %d (%d bytes) content differs", i, sizes[i])
		}
	}
	if h := string(buf.Bytes()[8:68]); h != "m               1773446400  0     0     100644  0         `\n" {
		t.Errorf("header %q, want dpkg-deb's layout", h)
	}
	for _, tc := range []struct {
		name string
		size int64
		r    string
		want string
	}{
		{"control.tar.zst.x", 1, "x", "longer than 15"},
		{"big", arMaxSize + 1, "", "does not fit in 10 digits"},
		{"short", 5, "abc", "wrote 3 bytes, expected 5"},
	} {
		if err := aw.member(tc.name, mtime, tc.size, strings.NewReader(tc.r)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("member(%q, %d) = %v, want %q", tc.name, tc.size, err, tc.want)
		}
	}
}
