package digest

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

const helloSHA256 = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"

func TestParse(t *testing.T) {
	d, err := Parse("sha256:" + strings.ToUpper(helloSHA256))
	if err != nil || d.Hex != helloSHA256 || d.Algorithm != SHA256 {
		t.Fatalf("Parse = %v, %v", d, err)
	}
	for _, bad := range []string{"", "sha256", "md5:d41d8cd98f00b204e9800998ecf8427e", "sha256:abc", "sha256:" + strings.Repeat("g", 64), "sha512:" + helloSHA256} {
		if _, err := Parse(bad); !errors.Is(err, ErrMalformed) {
			t.Errorf("Parse(%q) = %v, want ErrMalformed", bad, err)
		}
	}
}

func TestHasherCheck(t *testing.T) {
	h := NewHasher()
	io.Copy(h, strings.NewReader("hello"))
	if err := h.Check("x", Set{SHA256: helloSHA256}); err != nil {
		t.Fatal(err)
	}
	var me *MismatchError
	err := h.Check("https://example/x", Set{SHA256: strings.Repeat("0", 64)})
	if !errors.As(err, &me) || !strings.Contains(err.Error(), helloSHA256) || !strings.Contains(err.Error(), "https://example/x") {
		t.Fatalf("mismatch error = %v", err)
	}
	if err := h.Check("x", Set{}); !errors.Is(err, ErrNoPin) {
		t.Fatalf("empty pin = %v", err)
	}
	if err := NewHasher(SHA512).Check("x", Set{SHA256: helloSHA256}); !errors.Is(err, ErrNoPin) {
		t.Fatalf("uncomparable pin = %v", err)
	}
	s := Set{}
	if err := s.Add(Digest{SHA256, helloSHA256}); err != nil {
		t.Fatal(err)
	}
	if err := s.Add(Digest{SHA256, strings.Repeat("1", 64)}); err == nil {
		t.Fatal("conflicting pins accepted")
	}
}

// Writes below and above parallelMin, mixed, give the digests of the whole.
func TestHasherParallelWrites(t *testing.T) {
	data := make([]byte, 3*parallelMin+17)
	for i := range data {
		data[i] = byte(i * 7 / 5)
	}
	s256, s512 := sha256.Sum256(data), sha512.Sum512(data)
	for _, chunk := range []int{1000, parallelMin - 1, parallelMin, 2*parallelMin + 5, len(data)} {
		h := NewHasher()
		for rest := data; len(rest) > 0; {
			k := min(chunk, len(rest))
			h.Write(rest[:k])
			rest = rest[k:]
		}
		got := h.Sum()
		if got[SHA256] != hex.EncodeToString(s256[:]) || got[SHA512] != hex.EncodeToString(s512[:]) || h.Size() != int64(len(data)) {
			t.Errorf("chunks of %d: got %v, size %d", chunk, got, h.Size())
		}
	}
}

// BenchmarkHasher is the fetcher's hashing: sha256 and sha512 of 256 KiB writes.
func BenchmarkHasher(b *testing.B) {
	buf := make([]byte, 256<<10)
	b.SetBytes(int64(len(buf)))
	h := NewHasher()
	for b.Loop() {
		h.Write(buf)
	}
}

func TestNeeded(t *testing.T) {
	for _, tc := range []struct {
		pinned Set
		also   []Algorithm
		want   string
	}{
		{nil, nil, "[sha256]"},
		{Set{SHA256: helloSHA256}, nil, "[sha256]"},
		{Set{SHA512: "x"}, nil, "[sha256 sha512]"},
		{Set{SHA256: helloSHA256}, []Algorithm{SHA512, SHA512, SHA256}, "[sha256 sha512]"},
	} {
		if got := fmt.Sprint(Needed(tc.pinned, tc.also...)); got != tc.want {
			t.Errorf("Needed(%v, %v) = %s, want %s", tc.pinned, tc.also, got, tc.want)
		}
	}
}

// Reset starts over with the same algorithms (a download restarted from byte 0).
func TestHasherReset(t *testing.T) {
	h := NewHasher(SHA256)
	h.Write([]byte("partial download"))
	h.Reset()
	h.Write([]byte("hello"))
	if got := h.Sum(); len(got) != 1 || got[SHA256] != helloSHA256 || h.Size() != 5 {
		t.Errorf("after Reset: %v, size %d; want only sha256 of hello, size 5", got, h.Size())
	}
}
