package deb

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// copyHashing copies and hashes every byte whatever the reads return, and
// returns a read or write error as it is; one hashAside serves every copy,
// large and small, after errors too (data.tar's writer reuses one).
func TestCopyHashing(t *testing.T) {
	var a hashAside
	data := wordsPayload(3*hashChunk + 777)
	wantMD5, wantSHA := md5.Sum(data), sha256.Sum256(data)
	for name, r := range map[string]func() io.Reader{
		"whole":         func() io.Reader { return bytes.NewReader(data) },
		"one byte":      func() io.Reader { return iotest.OneByteReader(bytes.NewReader(data[:5000])) },
		"half reads":    func() io.Reader { return iotest.HalfReader(bytes.NewReader(data)) },
		"data with EOF": func() io.Reader { return iotest.DataErrReader(bytes.NewReader(data)) },
		"empty":         func() io.Reader { return bytes.NewReader(nil) },
	} {
		in := data
		if name == "one byte" {
			in = data[:5000]
		} else if name == "empty" {
			in = nil
		}
		wm, ws := md5.Sum(in), sha256.Sum256(in)
		if len(in) == len(data) {
			wm, ws = wantMD5, wantSHA
		}
		// The size sets the chunks; one too small only makes more of them.
		for _, size := range []int64{int64(len(in)), 1000} {
			var out bytes.Buffer
			m, s := md5.New(), sha256.New()
			n, err := copyHashing(&a, &out, m, s, r(), size)
			if err != nil || n != int64(len(in)) || !bytes.Equal(out.Bytes(), in) {
				t.Errorf("%s, size %d: %d bytes, %v; want %d bytes copied", name, size, n, err, len(in))
				continue
			}
			if !bytes.Equal(m.Sum(nil), wm[:]) || !bytes.Equal(s.Sum(nil), ws[:]) {
				t.Errorf("%s, size %d: digests differ", name, size)
			}
		}
	}

	boom := errors.New("boom")
	// A read error after some data: the data is copied, the error returned
	// (io.ErrUnexpectedEOF of a truncated archive too, not taken for the end).
	for _, rerr := range []error{boom, io.ErrUnexpectedEOF} {
		var out bytes.Buffer
		r := io.MultiReader(bytes.NewReader(data[:hashChunk+10]), iotest.ErrReader(rerr))
		n, err := copyHashing(&a, &out, md5.New(), sha256.New(), r, int64(len(data)))
		if !errors.Is(err, rerr) || n != hashChunk+10 || out.Len() != hashChunk+10 {
			t.Errorf("read error %v: %d bytes, %v; want %d bytes and the error", rerr, n, err, hashChunk+10)
		}
	}
	// A write error stops the copy.
	w := &failAfter{n: hashChunk + 5, err: boom}
	if _, err := copyHashing(&a, w, md5.New(), sha256.New(), bytes.NewReader(data), int64(len(data))); !errors.Is(err, boom) {
		t.Errorf("write error: %v, want %v", err, boom)
	}
	// The next copy through it starts clean.
	var out bytes.Buffer
	m := md5.New()
	if n, err := copyHashing(&a, &out, m, sha256.New(), bytes.NewReader(data), int64(len(data))); err != nil || n != int64(len(data)) ||
		!bytes.Equal(out.Bytes(), data) || !bytes.Equal(m.Sum(nil), wantMD5[:]) {
		t.Errorf("a copy after the write error: %d bytes, %v; want the %d bytes and their md5", n, err, len(data))
	}
}

// failAfter accepts n bytes, then fails.
type failAfter struct {
	n   int
	err error
}

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		k := f.n
		f.n = 0
		return k, f.err
	}
	f.n -= len(p)
	return len(p), nil
}

// hashAside's writes of any size, across its chunks, reach w whole and in
// order and hash to the same digest once flushed; a write error is kept.
func TestHashAsideWrites(t *testing.T) {
	data := wordsPayload(3*hashChunk + 777)
	want := sha256.Sum256(data)
	for _, size := range []int{1, 4093, 64 << 10, hashChunk - 1, hashChunk, hashChunk + 1, len(data)} {
		var out bytes.Buffer
		h := sha256.New()
		a := newHashAside(&out, h, hashChunk)
		for rest := data; len(rest) > 0; {
			k := min(size, len(rest))
			if n, err := a.Write(rest[:k]); n != k || err != nil {
				t.Fatalf("writes of %d: Write = %d, %v", size, n, err)
			}
			rest = rest[k:]
		}
		if err := a.Flush(); err != nil {
			t.Fatalf("writes of %d: Flush: %v", size, err)
		}
		if !bytes.Equal(out.Bytes(), data) || !bytes.Equal(h.Sum(nil), want[:]) {
			t.Errorf("writes of %d: %d bytes out; the bytes or the digest differ", size, out.Len())
		}
	}

	boom := errors.New("boom")
	a := newHashAside(&failAfter{n: hashChunk + 5, err: boom}, sha256.New(), hashChunk)
	_, err := a.Write(data)
	if !errors.Is(err, boom) {
		t.Errorf("write error: Write returned %v, want %v", err, boom)
	}
	if _, err := a.Write([]byte("more")); !errors.Is(err, boom) {
		t.Errorf("a write after the error returned %v, want %v", err, boom)
	}
	if err := a.Flush(); !errors.Is(err, boom) {
		t.Errorf("Flush after a write error returned %v, want %v", err, boom)
	}
}
