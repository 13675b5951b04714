package digest

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
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

// sums returns the sha256 and sha512 of data as a Set.
func sums(data []byte) Set {
	s256, s512 := sha256.Sum256(data), sha512.Sum512(data)
	return Set{SHA256: hex.EncodeToString(s256[:]), SHA512: hex.EncodeToString(s512[:])}
}

func fill(data []byte, r *rand.Rand) {
	for i := range data {
		data[i] = byte(r.Uint32())
	}
}

// writeInPieces writes data to h in pieces whose lengths come from r (0 to
// max bytes each, so empty writes too).
func writeInPieces(h *Hasher, data []byte, r *rand.Rand, max int) {
	for rest := data; len(rest) > 0; {
		k := min(r.IntN(max+1), len(rest))
		h.Write(rest[:k])
		rest = rest[k:]
	}
}

// Writes of any size, below, at and above parallelMin, give the digests of
// the whole, whatever the algorithms.
func TestHasherChunking(t *testing.T) {
	data := make([]byte, 3*parallelMin+17)
	for i := range data {
		data[i] = byte(i * 7 / 5)
	}
	want := sums(data)
	for _, piece := range []int{1, 1000, 16 << 10, parallelMin - 1, parallelMin, parallelMin + 1, 2*parallelMin + 5, len(data)} {
		for _, algs := range [][]Algorithm{{SHA256}, {SHA512}, {SHA256, SHA512}} {
			h := NewHasher(algs...)
			for rest := data; len(rest) > 0; {
				k := min(piece, len(rest))
				h.Write(rest[:k])
				rest = rest[k:]
			}
			got := h.Sum()
			for _, a := range algs {
				if got[a] != want[a] {
					t.Errorf("pieces of %d, %v: %s = %s, want %s", piece, algs, a, got[a], want[a])
				}
			}
			if len(got) != len(algs) || h.Size() != int64(len(data)) {
				t.Errorf("pieces of %d, %v: got %v, size %d", piece, algs, got, h.Size())
			}
		}
	}
}

// The hasher does not keep p: a caller reusing its buffer at once (as a read
// loop does) changes nothing, for small and parallel writes.
func TestHasherDoesNotRetain(t *testing.T) {
	data := make([]byte, 5*parallelMin/2)
	fill(data, rand.New(rand.NewPCG(1, 1)))
	h := NewHasher()
	buf := make([]byte, parallelMin+48<<10)
	for i, rest := 0, data; len(rest) > 0; i++ {
		k := copy(buf[:len(buf)>>(i%2*4)], rest) // 112 KiB and 7 KiB writes in turn
		h.Write(buf[:k])
		clear(buf)
		rest = rest[k:]
	}
	if got, want := h.Sum(), sums(data); got[SHA256] != want[SHA256] || got[SHA512] != want[SHA512] {
		t.Errorf("got %v, want %v", got, want)
	}
}

// Sum in the middle gives the digests so far, and writing goes on after it.
func TestHasherSumMidway(t *testing.T) {
	data := make([]byte, 2*parallelMin+99)
	fill(data, rand.New(rand.NewPCG(2, 2)))
	h := NewHasher()
	cut := parallelMin + 12345
	h.Write(data[:cut])
	if got, want := h.Sum(), sums(data[:cut]); got[SHA512] != want[SHA512] {
		t.Errorf("midway: got %v, want %v", got, want)
	}
	h.Write(data[cut:])
	if got, want := h.Sum(), sums(data); got[SHA256] != want[SHA256] || got[SHA512] != want[SHA512] {
		t.Errorf("end: got %v, want %v", got, want)
	}
}

// FuzzHasherShortWrites: whatever the lengths of the writes (a socket's
// short reads), the digests are those of the bytes in order.
func FuzzHasherShortWrites(f *testing.F) {
	f.Add(uint64(1), uint32(3*parallelMin/2), uint16(64<<10-1))
	f.Add(uint64(2), uint32(parallelMin), uint16(1))
	f.Add(uint64(3), uint32(0), uint16(100))
	f.Fuzz(func(t *testing.T, seed uint64, size uint32, maxPiece uint16) {
		size %= 4 * parallelMin
		data := make([]byte, size)
		r := rand.New(rand.NewPCG(seed, 7))
		fill(data, r)
		h := NewHasher()
		writeInPieces(h, data, r, int(maxPiece)+1)
		if got, want := h.Sum(), sums(data); got[SHA256] != want[SHA256] || got[SHA512] != want[SHA512] || h.Size() != int64(size) {
			t.Fatalf("%d bytes in pieces up to %d: got %v (size %d), want %v", size, maxPiece, got, h.Size(), want)
		}
	})
}

// BenchmarkHasher: sha256 and sha512 of 16 KiB writes (what a read from a
// socket returns) and of 256 KiB writes (cache.Verify's reads).
func BenchmarkHasher(b *testing.B) {
	for _, size := range []int{16 << 10, 256 << 10} {
		b.Run(fmt.Sprint(size>>10, "KiB"), func(b *testing.B) {
			buf := make([]byte, size)
			b.SetBytes(int64(len(buf)))
			h := NewHasher()
			for b.Loop() {
				h.Write(buf)
			}
		})
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
		// A pin of an algorithm this package does not know (JSON read into a
		// Set can hold any key) cannot be computed: it is left out, not
		// passed on to NewHasher.
		{Set{"md5": "5d41402abc4b2a76b9719d911017c592", SHA512: "x"}, []Algorithm{"sha1"}, "[sha256 sha512]"},
	} {
		if got := fmt.Sprint(Needed(tc.pinned, tc.also...)); got != tc.want {
			t.Errorf("Needed(%v, %v) = %s, want %s", tc.pinned, tc.also, got, tc.want)
		}
	}
}

// An algorithm the package does not know is never a reason to panic: the
// hasher does not compute it, Check does not count it as compared, and File
// refuses it.
func TestUnknownAlgorithm(t *testing.T) {
	h := NewHasher(Needed(Set{"md5": "5d41402abc4b2a76b9719d911017c592"})...)
	h.Write([]byte("hello"))
	if err := h.Check("x", Set{"md5": "5d41402abc4b2a76b9719d911017c592"}); !errors.Is(err, ErrNoPin) {
		t.Errorf("Check of an md5 pin = %v, want ErrNoPin", err)
	}
	h = NewHasher("md5", SHA256)
	h.Write([]byte("hello"))
	if got := fmt.Sprint(h.Sum()); got != fmt.Sprint(Set{SHA256: helloSHA256}) {
		t.Errorf("Sum = %s, want only sha256", got)
	}
	if err := h.Check("x", Set{"md5": "00", SHA256: helloSHA256}); err != nil {
		t.Errorf("Check = %v, want the sha256 pin to pass", err)
	}
	if _, err := File(filepath.Join(t.TempDir(), "missing"), "md5"); !errors.Is(err, ErrMalformed) {
		t.Errorf("File(md5) = %v, want ErrMalformed", err)
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
