package fetch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/cache"
	"github.com/updeb/updeb/pkg/digest"
)

// shortReader returns at most a random 0..max bytes per Read, like a socket.
type shortReader struct {
	r   io.Reader
	rnd *rand.Rand
	max int
}

func (s *shortReader) Read(p []byte) (int, error) {
	return s.r.Read(p[:min(len(p), s.rnd.IntN(s.max+1))])
}

func bothDigests(b []byte) digest.Set {
	s256, s512 := sha256.Sum256(b), sha512.Sum512(b)
	return digest.Set{digest.SHA256: hex.EncodeToString(s256[:]), digest.SHA512: hex.EncodeToString(s512[:])}
}

// FuzzCopyBodyShortReads: whatever the sizes of the reads (a socket's short
// reads, a resumed partial of any length), the file holds the bytes in order
// and the hasher has their sha256 and sha512.
func FuzzCopyBodyShortReads(f *testing.F) {
	f.Add(uint64(1), uint32(3<<20), uint16(16<<10), uint32(0))
	f.Add(uint64(2), uint32(1<<20), uint16(1), uint32(1<<20-1))
	f.Add(uint64(3), uint32(2<<20+5), uint16(65535), uint32(1<<20+3))
	f.Fuzz(func(t *testing.T, seed uint64, size uint32, maxRead uint16, resumeAt uint32) {
		size %= 5 << 20
		body, _ := payload(int(size), seed)
		resumeAt %= size + 1
		fe, err := New(t.TempDir(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		tmp, meta, err := fe.cache.Partial(cache.ID("https://h/f", ""))
		if err != nil {
			t.Fatal(err)
		}
		defer tmp.Close()
		p := &partial{file: tmp, hasher: digest.NewHasher(digest.SHA256, digest.SHA512), total: -1, meta: meta}
		target := "https://h/f"
		if resumeAt > 0 {
			// An earlier run left resumeAt bytes: resumeFrom re-hashes them.
			tmp.Write(body[:resumeAt])
			p.validator, p.ranges, p.total = `"v1"`, true, int64(size)
			p.saveMeta(target)
			p.validator, p.ranges = "", false
			if err := fe.resumeFrom(context.Background(), p, target, target); err != nil {
				t.Fatal(err)
			}
			if p.written != int64(resumeAt) {
				t.Fatalf("resumed at %d, want %d", p.written, resumeAt)
			}
		}
		rnd := rand.New(rand.NewPCG(seed, 9))
		n, err := fe.copyBody(p, &shortReader{r: bytes.NewReader(body[resumeAt:]), rnd: rnd, max: int(maxRead) + 1}, target)
		if err != nil || n != int64(size-resumeAt) {
			t.Fatalf("copyBody: %d bytes, %v", n, err)
		}
		if got, want := p.hasher.Sum(), bothDigests(body); got[digest.SHA256] != want[digest.SHA256] || got[digest.SHA512] != want[digest.SHA512] {
			t.Fatalf("%d bytes (resumed at %d) in reads up to %d: digests %v, want %v", size, resumeAt, maxRead, got, want)
		}
		if got, _ := os.ReadFile(tmp.Name()); !bytes.Equal(got, body) {
			t.Fatalf("partial file holds %d bytes, not the body", len(got))
		}
	})
}

// A sha512-pinned download cancelled half way leaves nothing in the cache
// but a partial file kept for a resume; the next run resumes it and checks
// both digests over the whole file. A partial file changed on disk in
// between fails the pin: its bytes are never cached, and the file is
// downloaded whole.
func TestCancelledDownloadThenResume(t *testing.T) {
	body, _ := payload(6<<20, 41)
	pinned := digest.Set{digest.SHA512: bothDigests(body)[digest.SHA512]}
	for _, tamper := range []bool{false, true} {
		t.Run(map[bool]string{false: "resumed", true: "tampered partial"}[tamper], func(t *testing.T) {
			up := newUpstream(t, false, slowServe(body, true))
			dir := t.TempDir()
			f, err := New(dir, testOptions(t))
			if err != nil {
				t.Fatal(err)
			}
			u := up.URL + "/big.tgz"
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				for ctx.Err() == nil {
					if parts, _ := filepath.Glob(filepath.Join(dir, "tmp", "part-*[0-9a-f]")); len(parts) == 1 {
						if fi, err := os.Stat(parts[0]); err == nil && fi.Size() >= 2<<20 {
							cancel()
						}
					}
					time.Sleep(5 * time.Millisecond)
				}
			}()
			_, err = f.Fetch(ctx, Request{URL: u, Pinned: pinned})
			cancel()
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			if b := blobs(t, f); len(b) != 0 {
				t.Fatalf("a cancelled download left %v in the cache", b)
			}
			if _, err := f.cache.Index(u, ""); !errors.Is(err, cache.ErrMiss) {
				t.Fatalf("a cancelled download left an index entry: %v", err)
			}
			parts, _ := filepath.Glob(filepath.Join(dir, "tmp", "part-*[0-9a-f]"))
			if len(parts) != 1 {
				t.Fatalf("no partial file kept for a resume: %v", parts)
			}
			if tamper {
				pf, err := os.OpenFile(parts[0], os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				pf.WriteAt([]byte{body[1000] ^ 1}, 1000)
				pf.Close()
			}
			before := up.count()
			res, err := f.Fetch(context.Background(), Request{URL: u, Pinned: pinned})
			resume := up.header(before)
			if resume.Get("Range") == "" || resume.Get("Range") == "bytes=0-" {
				t.Errorf("second run asked Range %q, want a resume", resume.Get("Range"))
			}
			if tamper && (up.count() != before+2 || up.header(before+1).Get("Range") != "") {
				t.Errorf("after the resume %d request(s), want 1 for the whole file", up.count()-before-1)
			}
			if err != nil {
				t.Fatal(err)
			}
			checkFile(t, res, body)
			if want := bothDigests(body); res.Digests[digest.SHA256] != want[digest.SHA256] || res.Digests[digest.SHA512] != want[digest.SHA512] {
				t.Errorf("digests %v, want %v", res.Digests, want)
			}
		})
	}
}

// Without ranges a cancelled download leaves nothing at all.
func TestCancelledDownloadWithoutRanges(t *testing.T) {
	body, _ := payload(4<<20, 42)
	up := newUpstream(t, false, func(w http.ResponseWriter, r *http.Request, n int) { slowServe(body, false)(w, r, 1) })
	dir := t.TempDir()
	f, err := New(dir, testOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = f.Fetch(ctx, Request{URL: up.URL + "/f", Pinned: digest.Set{digest.SHA512: bothDigests(body)[digest.SHA512]}})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the deadline", err)
	}
	if tmp, _ := os.ReadDir(filepath.Join(dir, "tmp")); len(tmp) != 0 || len(blobs(t, f)) != 0 {
		t.Errorf("left %d files in tmp and %v in the cache", len(tmp), blobs(t, f))
	}
}
