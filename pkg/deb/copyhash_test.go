package deb

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"testing/iotest"
)

// fileHasher copies every file whole and in order whatever the reads return,
// and hashes each on its own: many files to a batch, files across batches,
// files that end just as a batch fills, empty files, files without their
// sha256 between files with it; a read or write error is returned as it is.
func TestFileHasher(t *testing.T) {
	data := wordsPayload(3*hashBatchSize + 777)
	readers := map[string]func([]byte) io.Reader{
		"whole":         func(b []byte) io.Reader { return bytes.NewReader(b) },
		"one byte":      func(b []byte) io.Reader { return iotest.OneByteReader(bytes.NewReader(b)) },
		"half reads":    func(b []byte) io.Reader { return iotest.HalfReader(bytes.NewReader(b)) },
		"data with EOF": func(b []byte) io.Reader { return iotest.DataErrReader(bytes.NewReader(b)) },
	}
	// Sizes that fall on and beside the batches' ends.
	sizes := []int{0, 1, 4 << 10, hashBatchSize - 1, hashBatchSize, 1, hashBatchSize + 1, 0, 3000, hashBatchSize - 3001, 2*hashBatchSize + 5, 0}
	for name, r := range readers {
		for _, total := range []int64{-1, 1000, int64(len(data))} { // the buffers' size
			if name == "one byte" && total != 1000 {
				continue // slow; the batches' ends are the same
			}
			fh := newFileHasher(len(sizes), total)
			var out, want bytes.Buffer
			off := 0
			var parts [][]byte
			for i, n := range sizes {
				part := data[off : off+n]
				off = (off + n) % (len(data) - 3*hashBatchSize)
				parts = append(parts, part)
				want.Write(part)
				if k, err := fh.copy(&out, i, i%3 != 2, r(part)); k != int64(n) || err != nil {
					t.Fatalf("%s, buffers for %d: file %d: %d bytes, %v; want %d", name, total, i, k, err, n)
				}
			}
			fh.close()
			if !bytes.Equal(out.Bytes(), want.Bytes()) {
				t.Errorf("%s, buffers for %d: the bytes written differ", name, total)
			}
			for i, part := range parts {
				wm, ws := md5.Sum(part), sha256.Sum256(part)
				wantSHA := hex.EncodeToString(ws[:])
				if i%3 == 2 {
					wantSHA = ""
				}
				if m, s := fh.result(i); m != hex.EncodeToString(wm[:]) || s != wantSHA {
					t.Errorf("%s, buffers for %d: file %d (%d bytes): digests %s %q, want %x %q", name, total, i, len(part), m, s, wm, wantSHA)
				}
			}
		}
	}

	boom := errors.New("boom")
	// A read error after some data: the data is copied, the error returned
	// (io.ErrUnexpectedEOF of a truncated archive too, not taken for the end).
	for _, rerr := range []error{boom, io.ErrUnexpectedEOF} {
		fh := newFileHasher(1, -1)
		var out bytes.Buffer
		r := io.MultiReader(bytes.NewReader(data[:hashBatchSize+10]), iotest.ErrReader(rerr))
		n, err := fh.copy(&out, 0, true, r)
		fh.close()
		if !errors.Is(err, rerr) || n != hashBatchSize+10 || out.Len() != hashBatchSize+10 {
			t.Errorf("read error %v: %d bytes, %v; want %d bytes and the error", rerr, n, err, hashBatchSize+10)
		}
	}
	// A write error stops the copy, and close still returns.
	fh := newFileHasher(1, -1)
	if _, err := fh.copy(&failAfter{n: hashBatchSize + 5, err: boom}, 0, true, bytes.NewReader(data)); !errors.Is(err, boom) {
		t.Errorf("write error: %v, want %v", err, boom)
	}
	fh.close()
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

// Result.Files has every regular file and hardlink with its
// content's size and digests; NoSHA256 leaves out a file's sha256 (and its
// hardlinks'), nothing else, and the package's bytes do not change.
func TestResultFiles(t *testing.T) {
	contents := map[string]string{
		"/usr/bin/sample":                       "#!/bin/sh\necho sample\n",
		"/etc/sample/sample.conf":               "key = value\n",
		"/usr/share/doc/updeb-sample/copyright": "Copyright: nobody\n",
		"/usr/lib/sample/a/data":                strings.Repeat("x", 3000),
		"/usr/lib/sample/a-b":                   strings.Repeat("x", 3000), // the hardlink
		"/usr/lib/sample/a.b":                   "",
	}
	var debs [2][]byte
	for i, without := range []map[string]bool{{}, {"/usr/lib/sample/a/data": true, "/usr/bin/sample": true}} {
		p := samplePackage()
		for j := range p.Entries {
			p.Entries[j].NoSHA256 = without[p.Entries[j].Path]
		}
		path, res := writeTemp(t, p)
		var err error
		if debs[i], err = os.ReadFile(path); err != nil {
			t.Fatal(err)
		}
		if len(res.Files) != len(contents) {
			t.Errorf("NoSHA256 on %v: %d files in Result, want %d", without, len(res.Files), len(contents))
		}
		for _, f := range res.Files {
			c, ok := contents[f.Path]
			m, s := md5.Sum([]byte(c)), sha256.Sum256([]byte(c))
			wantSHA := hex.EncodeToString(s[:])
			if without[f.Path] || f.Path == "/usr/lib/sample/a-b" && without["/usr/lib/sample/a/data"] {
				wantSHA = ""
			}
			if !ok || f.Size != int64(len(c)) || f.MD5 != hex.EncodeToString(m[:]) || f.SHA256 != wantSHA {
				t.Errorf("NoSHA256 on %v: %+v; want %d bytes, md5 %x, sha256 %q", without, f, len(c), m, wantSHA)
			}
		}
	}
	if !bytes.Equal(debs[0], debs[1]) {
		t.Error("NoSHA256 changed the package's bytes")
	}
}
