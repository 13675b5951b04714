package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/cache"
)

// fetchHelper is the child process of the kill tests (see TestMain): it
// downloads HELPER_URL into the cache HELPER_CACHE through HELPER_PROXY.
func fetchHelper() int {
	proxy, _ := url.Parse(os.Getenv("HELPER_PROXY"))
	f, err := New(os.Getenv("HELPER_CACHE"), Options{Proxy: proxy, Retries: -1, IdleTimeout: time.Minute})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, err := f.Fetch(context.Background(), Request{URL: os.Getenv("HELPER_URL"), Pinned: pin(os.Getenv("HELPER_SHA256"))}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// slowServe serves body with ETag and ranges (http.ServeContent), the first
// full answer throttled so that a test can kill the client mid-download.
func slowServe(body []byte, ranges bool) func(http.ResponseWriter, *http.Request, int) {
	return func(w http.ResponseWriter, r *http.Request, n int) {
		if !ranges {
			w.Header().Set("Content-Length", fmt.Sprint(len(body)))
			w.WriteHeader(http.StatusOK)
			for i := 0; i < len(body); i += 64 << 10 {
				if _, err := w.Write(body[i:min(i+64<<10, len(body))]); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				if n == 1 {
					time.Sleep(20 * time.Millisecond)
				}
			}
			return
		}
		w.Header().Set("ETag", `"v1"`)
		if n == 1 {
			w = &throttled{ResponseWriter: w}
		}
		http.ServeContent(w, r, "f", time.Unix(1700000000, 0), bytes.NewReader(body))
	}
}

type throttled struct{ http.ResponseWriter }

func (t *throttled) Write(b []byte) (int, error) {
	n := 0
	for len(b) > 0 {
		k := min(len(b), 64<<10)
		m, err := t.ResponseWriter.Write(b[:k])
		n += m
		if err != nil {
			return n, err
		}
		t.ResponseWriter.(http.Flusher).Flush()
		time.Sleep(20 * time.Millisecond)
		b = b[k:]
	}
	return n, nil
}

// killMidDownload starts the helper on u and kills it with SIGKILL once its
// partial file holds at least 512 KiB; it returns the cache folder.
func killMidDownload(t *testing.T, u, sha string) string {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "UPDEB_FETCH_HELPER=1", "HELPER_CACHE="+dir, "HELPER_URL="+u, "HELPER_SHA256="+sha, "HELPER_PROXY="+requireSquid(t).String())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		parts, _ := filepath.Glob(filepath.Join(dir, "tmp", "part-*[0-9a-f]"))
		if len(parts) == 1 {
			if fi, err := os.Stat(parts[0]); err == nil && fi.Size() >= 512<<10 {
				break
			}
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the helper never got half way: %s", stderr.String())
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	return dir
}

// A download killed with SIGKILL leaves its partial file; the next run
// resumes it (Range + If-Range) when the server allows, and the cache's tmp
// folder is empty afterwards.
func TestResumeAfterKill(t *testing.T) {
	body, sha := payload(4<<20, 31)
	up := newUpstream(t, false, slowServe(body, true))
	dir := killMidDownload(t, up.URL+"/big.tgz", sha)
	if m, _ := filepath.Glob(filepath.Join(dir, "tmp", "part-*.json")); len(m) != 1 {
		t.Fatalf("no resume record after the kill: %v", m)
	}
	refetch(t, dir, testOptions(t), up.URL+"/big.tgz", sha, body)
	last := up.header(up.count() - 1)
	if !strings.HasPrefix(last.Get("Range"), "bytes=") || last.Get("Range") == "bytes=0-" || last.Get("If-Range") != `"v1"` {
		t.Errorf("second run asked Range %q If-Range %q, want a resume", last.Get("Range"), last.Get("If-Range"))
	}
}

// refetch downloads u into the cache dir a killed run left, with o, checks
// the bytes and that the cache's tmp folder is empty afterwards.
func refetch(t *testing.T, dir string, o Options, u, sha string, body []byte) {
	t.Helper()
	f, err := New(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.Fetch(context.Background(), Request{URL: u, Pinned: pin(sha)})
	if err != nil {
		t.Fatal(err)
	}
	checkFile(t, res, body)
	if tmp, _ := os.ReadDir(filepath.Join(dir, "tmp")); len(tmp) != 0 {
		t.Errorf("tmp holds %d files after the download", len(tmp))
	}
}

// When the server cannot resume, or the file changed (If-Range fails), the
// partial bytes are dropped and the file is downloaded whole.
func TestKilledDownloadWithoutResume(t *testing.T) {
	body, sha := payload(4<<20, 32)
	up := newUpstream(t, false, slowServe(body, false))
	dir := killMidDownload(t, up.URL+"/big.tgz", sha)
	refetch(t, dir, testOptions(t), up.URL+"/big.tgz", sha, body)
	if r := up.header(up.count() - 1).Get("Range"); r != "" {
		t.Errorf("asked Range %q of a server without ranges", r)
	}

	// The file changed upstream since the kill: If-Range gets the whole new one.
	body2, sha2 := payload(4<<20, 33)
	var changed atomic.Bool
	up2 := newUpstream(t, false, func(w http.ResponseWriter, r *http.Request, n int) {
		if changed.Load() {
			w.Header().Set("ETag", `"v2"`)
			http.ServeContent(w, r, "f", time.Unix(1700000001, 0), bytes.NewReader(body2))
			return
		}
		slowServe(body, true)(w, r, n)
	})
	dir = killMidDownload(t, up2.URL+"/big.tgz", sha2)
	changed.Store(true)
	refetch(t, dir, testOptions(t), up2.URL+"/big.tgz", sha2, body2)
}

// New sweeps the tmp folder: partial downloads older than PartialMaxAge and
// not in use, and stray temporary files older than an hour; a young partial
// (kept for a resume) and one whose lock is held stay.
func TestSweep(t *testing.T) {
	dir := t.TempDir()
	c, err := cache.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-PartialMaxAge - time.Hour)
	idOld, idYoung, idBusy := cache.ID("https://h/old", ""), cache.ID("https://h/young", ""), cache.ID("https://h/busy", "")
	touch := func(name string, mtime time.Time) string {
		p := filepath.Join(dir, "tmp", name)
		os.WriteFile(p, []byte("x"), 0o644)
		os.Chtimes(p, mtime, mtime)
		return p
	}
	gone := []string{touch("part-"+idOld, old), touch("part-"+idOld+".json", old), touch("part-123456", time.Now().Add(-2*time.Hour)),
		touch("index-"+idYoung+"-42", time.Now())} // a killed index writer: its lock is free
	stay := []string{touch("part-"+idYoung, time.Now()), touch("part-"+idBusy, old), touch("part-654321", time.Now()),
		touch("index-"+idBusy+"-43", time.Now())}
	unlock, err := c.Lock(context.Background(), idBusy)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if _, err := New(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, p := range gone {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s not swept", filepath.Base(p))
		}
	}
	for _, p := range stay {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s swept: %v", filepath.Base(p), err)
		}
	}
}

// A signal stops the re-hash of what an interrupted run left (seconds for
// a partial file of gigabytes: it ran to the end, deaf to SIGINT and
// SIGTERM), and the partial file and its resume record stay for the next
// run.
func TestResumeRehashStops(t *testing.T) {
	dir := t.TempDir()
	c, err := cache.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	u := "https://h.example/big.tgz"
	part, meta, err := c.Partial(cache.ID(u, ""))
	if err != nil {
		t.Fatal(err)
	}
	const size = 2 << 30 // sparse: no disk, but as long to hash as 2 GiB of bytes
	if err := part.Truncate(size); err != nil {
		t.Fatal(err)
	}
	part.Close()
	if err := os.WriteFile(meta, fmt.Appendf(nil, `{"target":%q,"validator":"\"v1\"","total":%d}`, u, size+1), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := New(dir, Options{Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	stopped, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if _, err := f.Fetch(stopped, Request{URL: u, Pinned: pin(strings.Repeat("0", 64))}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want the context's", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("the stopped resume returned after %s: the 2 GiB partial file was re-hashed to its end", d.Round(time.Millisecond))
	}
	if fi, err := os.Stat(part.Name()); err != nil || fi.Size() != size {
		t.Errorf("partial file after the stop: %v, %v; want it kept, %d bytes", fi, err, size)
	}
	if _, err := os.Stat(meta); err != nil {
		t.Errorf("resume record after the stop: %v", err)
	}
}

// leavePartial returns a cache folder holding what an interrupted run left
// of u, a file of total bytes with the ETag "v1": its partial file, which
// write fills, and its resume record.
func leavePartial(t *testing.T, u string, total int, write func(part *os.File) error) string {
	t.Helper()
	dir := t.TempDir()
	c, err := cache.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	part, meta, err := c.Partial(cache.ID(u, ""))
	if err != nil {
		t.Fatal(err)
	}
	if err := write(part); err != nil {
		t.Fatal(err)
	}
	part.Close()
	if err := os.WriteFile(meta, fmt.Appendf(nil, `{"target":%q,"validator":"\"v1\"","total":%d}`, u, total), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A run killed after the last byte arrived, before the file was checked and
// stored, leaves a partial file that holds the whole file. The next run's
// Range from its end gets 416 with the same size (Content-Range bytes */N):
// the bytes are complete and are checked as they are, not downloaded again,
// and with retries: 0 the fetch does not fail.
func TestResumeOfCompletePartial(t *testing.T) {
	body, sha := payload(256<<10, 34)
	up := newUpstream(t, false, slowServe(body, true))
	u := up.URL + "/whole.tgz"
	dir := leavePartial(t, u, len(body), func(part *os.File) error {
		_, err := part.Write(body)
		return err
	})
	o := testOptions(t)
	o.Retries = -1 // retries: 0
	refetch(t, dir, o, u, sha, body)
	if n := up.count(); n != 1 || up.header(0).Get("Range") != fmt.Sprintf("bytes=%d-", len(body)) {
		t.Errorf("%d request(s), the first with Range %q: want one, from the partial file's end", n, up.header(0).Get("Range"))
	}
}

// A partial file an interrupted run left whose bytes are not what the
// server sent (a power cut's zero-filled tail, or the first part of another
// version the validator did not tell apart) makes the resumed download fail
// its pin: the file is then downloaded whole, once, and only a mismatch of
// those bytes is reported. The resumed run failed with a digest mismatch,
// a false alarm of tampering, which the run after it did not repeat.
func TestDamagedPartialIsDownloadedWhole(t *testing.T) {
	body, sha := payload(256<<10, 35)
	up := newUpstream(t, false, slowServe(body, true))
	u := up.URL + "/damaged.tgz"
	dir := leavePartial(t, u, len(body), func(part *os.File) error {
		return part.Truncate(int64(len(body) / 2)) // zeros where the first half should be
	})
	o := testOptions(t)
	o.Retries = -1 // retries: 0, the whole download is no retry
	var dones atomic.Int32
	o.Progress = func(p Progress) {
		if p.Done {
			dones.Add(1)
		}
	}
	refetch(t, dir, o, u, sha, body)
	if n := up.count(); n != 2 || up.header(0).Get("Range") == "" || up.header(1).Get("Range") != "" {
		t.Errorf("%d request(s): want a resume, then the whole file", n)
	}
	if n := dones.Load(); n != 1 {
		t.Errorf("%d Done reports, want one: the last", n)
	}
}

// A resume the server answers with no usable part (a 206 of another
// version, from a server or CDN edge that ignores If-Range, or a 416 for a
// range inside the file) is followed at once by a request for the whole
// file, within the same attempt: the server answered, and nothing is left
// to wait for. With retries: 0 the download failed ('the part sent is of
// another version', 'refused the range'), though a plain download would
// have succeeded; with retries, it cost a retry and its backoff.
func TestUnusableResumeAnswerDownloadsWhole(t *testing.T) {
	old, _ := payload(256<<10, 36)
	body, sha := payload(256<<10, 37)
	for name, part := range map[string]func(w http.ResponseWriter){
		"206 of another version": func(w http.ResponseWriter) {
			w.Header().Set("Etag", `"v2"`)
			w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", len(old)/2, len(body)-1, len(body)))
			w.WriteHeader(http.StatusPartialContent)
			w.Write(body[len(old)/2:])
		},
		"416 inside the file": func(w http.ResponseWriter) {
			w.Header().Set("Content-Range", "bytes */0")
			w.WriteHeader(http.StatusRequestedRangeNotSatisfiable)
		},
	} {
		t.Run(name, func(t *testing.T) {
			up := newUpstream(t, false, func(w http.ResponseWriter, r *http.Request, _ int) {
				if r.Header.Get("Range") != "" {
					part(w)
					return
				}
				w.Header().Set("Etag", `"v2"`)
				w.Write(body)
			})
			u := up.URL + "/tool.tgz"
			dir := leavePartial(t, u, len(old), func(part *os.File) error {
				_, err := part.Write(old[:len(old)/2]) // the first half of the version before
				return err
			})
			o := testOptions(t)
			o.Retries = -1 // retries: 0
			refetch(t, dir, o, u, sha, body)
			if n := up.count(); n != 2 || up.header(1).Get("Range") != "" {
				t.Errorf("%d request(s): want the resume, then the whole file", n)
			}
		})
	}
}

// A download cut mid-file is resumed (Range) only when the bytes so far and
// the rest are known to be of one version: the server gave a validator for
// If-Range, or a pin checks the joined bytes (and has the file downloaded
// whole when they fail it). An unpinned file (a signature, a checksums file)
// from a server without ETag or Last-Modified, published again between two
// attempts, was resumed with a bare Range: the first version's head joined
// to the second's tail reached verification, a false alarm of a bad
// signature.
func TestResumeWithoutValidator(t *testing.T) {
	old, _ := payload(256<<10, 38)
	body, sha := payload(256<<10, 39)
	for name, tc := range map[string]struct {
		req    Request
		ranged bool // whether the second request may ask for a range
		wantN  int
	}{
		"unpinned is downloaded whole": {Request{AllowUnpinned: true, Key: "x 1"}, false, 2},
		// the resume fails the pin, and the file is downloaded whole
		"pinned resumes": {Request{Pinned: pin(sha)}, true, 3},
	} {
		t.Run(name, func(t *testing.T) {
			// The first answer (of old) is cut half way; the file is body
			// afterwards, ranges honoured, never with a validator.
			up := newUpstream(t, false, func(w http.ResponseWriter, r *http.Request, n int) {
				if n == 1 {
					abortAfter(w, old, len(old)/2, http.Header{"Accept-Ranges": {"bytes"}})
				}
				http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
			})
			f := newTestFetcher(t, testOptions(t))
			tc.req.URL = up.URL + "/SHA256SUMS"
			res, err := f.Fetch(context.Background(), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			checkFile(t, res, body)
			if n := up.count(); n != tc.wantN {
				t.Errorf("upstream saw %d requests, want %d", n, tc.wantN)
			}
			if rg := up.header(1).Get("Range"); (rg != "") != tc.ranged {
				t.Errorf("second request has Range %q; want one: %v", rg, tc.ranged)
			}
		})
	}
}

// TestResumeOnLastModifiedOfTheSameSecond: a Last-Modified no earlier than a
// second before the answer's Date is no validator (RFC 9110 8.8.2.2): the
// file, replaced within that second, kept its date, and a resume with
// If-Range on it joined the two versions' bytes. An unpinned file is
// downloaded whole again.
func TestResumeOnLastModifiedOfTheSameSecond(t *testing.T) {
	old, _ := payload(256<<10, 40)
	body, _ := payload(256<<10, 41)
	now := time.Now().UTC().Truncate(time.Second)
	up := newUpstream(t, false, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Date", now.Format(http.TimeFormat))
		if n == 1 {
			abortAfter(w, old, len(old)/2, http.Header{"Accept-Ranges": {"bytes"}, "Last-Modified": {now.Format(http.TimeFormat)}})
		}
		// Replaced in the same second: the same Last-Modified, and
		// ServeContent honours an If-Range of that date.
		http.ServeContent(w, r, "", now, bytes.NewReader(body))
	})
	f := newTestFetcher(t, testOptions(t))
	res, err := f.Fetch(context.Background(), Request{URL: up.URL + "/SHA256SUMS", AllowUnpinned: true, Key: "x 1"})
	if err != nil {
		t.Fatal(err)
	}
	checkFile(t, res, body)
	if rg := up.header(1).Get("Range"); rg != "" {
		t.Errorf("second request has Range %q; want the file whole", rg)
	}
}
