package fetch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/updeb/updeb/internal/confined"
	"github.com/updeb/updeb/internal/diskfull"
	"github.com/updeb/updeb/internal/srcurl"
	"github.com/updeb/updeb/pkg/atomicfile"
	"github.com/updeb/updeb/pkg/ctxio"
	"github.com/updeb/updeb/pkg/digest"
)

// writebackEvery is how many downloaded bytes are written to the temp file
// before the kernel is asked to start writing them to disk.
const writebackEvery = 8 << 20

// maxBackoff caps one retry delay.
const maxBackoff = 30 * time.Second

// partial is what a download has so far, carried from one attempt to the next.
type partial struct {
	file      *os.File
	hasher    *digest.Hasher
	written   int64  // bytes in file, all of them hashed
	flushed   int64  // bytes in file whose writeback was started
	total     int64  // full size when a response announced it, else -1
	validator string // ETag (strong) or Last-Modified, for If-Range
	ranges    bool   // the server said Accept-Ranges: bytes
	// pinned: a pin checks the bytes after a resume (get), so that one
	// may go without a validator.
	pinned bool
	meta   string // where what a resume needs is saved ("" for none)
	// resumed: the bytes did not all come in one answer; some came before
	// it (an earlier run's or attempt's), and a 206 or 416 continued them.
	resumed  bool
	encoding string // a Content-Encoding other than identity the bytes came with
	// cached: a cache on the way (a caching proxy) answered with some of
	// the bytes, not the origin (the answer had an Age header, RFC 9111 5.1).
	cached bool
}

// partialMeta is what the next run needs to resume an interrupted download
// (saved beside the partial file): the same URL, and a validator for If-Range
// so that a changed file is sent whole instead of being spliced.
type partialMeta struct {
	Target    string `json:"target"`
	Validator string `json:"validator"`
	Total     int64  `json:"total"`
}

// saveMeta records what a later run needs to resume into p, once the server
// said it can (ranges and a validator); otherwise it removes the record.
func (p *partial) saveMeta(target string) {
	if p.meta == "" {
		return
	}
	if !p.ranges || p.validator == "" {
		os.Remove(p.meta)
		return
	}
	b, _ := json.Marshal(partialMeta{Target: target, Validator: p.validator, Total: p.total})
	atomicfile.WriteFile(p.meta, b, 0o644) // a new temporary file: nothing planted is written through
}

// keep says whether p is worth keeping after a download failed with err: the
// bytes are good so far (the failure was the network, or the user stopping
// it) and the server can resume them. A digest mismatch or a size error
// never keeps them.
func (p *partial) keep(err error) bool {
	var ne *NetworkError
	stopped := errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
	return (errors.As(err, &ne) || stopped) && p.written > 0 && p.ranges && p.validator != ""
}

// resumeFrom prepares p for downloading target: what an interrupted run left
// in p's file is kept (re-hashed) when that run recorded the same target and
// a validator, and dropped otherwise. The re-hash (seconds for gigabytes)
// stops at ctx's end, and the file is then kept as it was for the next run.
func (f *Fetcher) resumeFrom(ctx context.Context, p *partial, upstream, target string) error {
	var m partialMeta
	b, err := confined.ReadFile(p.meta, 64<<10)
	fi, serr := p.file.Stat()
	if err != nil || serr != nil || json.Unmarshal(b, &m) != nil || m.Target != target || m.Validator == "" ||
		fi.Size() == 0 || fi.Size() > f.o.MaxSize || (m.Total >= 0 && fi.Size() > m.Total) {
		os.Remove(p.meta)
		return p.reset()
	}
	if _, err := p.file.Seek(0, io.SeekStart); err != nil {
		return err
	}
	// What keep needs to keep the file if the re-hash is stopped.
	p.written, p.flushed, p.validator, p.ranges, p.total = fi.Size(), fi.Size(), m.Validator, true, m.Total
	n, err := io.CopyBuffer(p.hasher, struct{ io.Reader }{ctxio.Reader(ctx, p.file)}, make([]byte, copyBuffer))
	if err != nil {
		return err
	}
	p.written, p.flushed = n, n
	f.log.Info("resuming a download an earlier run left unfinished", "url", upstream, "have", n)
	return nil
}

// reset drops what was received (the server sent the whole body again).
func (p *partial) reset() error {
	if _, err := p.file.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if err := p.file.Truncate(0); err != nil {
		return err
	}
	p.hasher.Reset()
	p.written, p.flushed, p.resumed, p.encoding, p.cached = 0, 0, false, "", false
	return nil
}

// get downloads target (the mirror-mapped form of upstream) into p with
// retries, resuming where the server allows it. An unpinned file (no
// pinned digests) is asked for with caches on the way (a caching proxy)
// revalidating their copy with the origin; a pinned one is too, once the
// bytes a caching proxy answered with failed the pin.
func (f *Fetcher) get(ctx context.Context, upstream, target string, p *partial, pinned digest.Set) error {
	tu, err := url.Parse(target)
	if err != nil {
		return fmt.Errorf("fetch: %q: %w", target, err)
	}
	f.progress(Progress{URL: upstream, Received: p.written, Total: p.total})
	revalidate := len(pinned) == 0
	attempt := func(ctx context.Context) (bool, time.Duration, error) {
		return f.attempt(ctx, upstream, target, p, revalidate)
	}
	err = f.retry(ctx, upstream, tu, attempt)
	if err == nil && !revalidate && p.cached && f.ProxyOf(tu) != nil && p.hasher.Check(upstream, pinned) != nil {
		// A caching proxy may serve the copy it holds of a file that
		// upstream published again under the same URL (and kept fresh
		// for days by its heuristics): the pin names the new bytes. The
		// origin's copy, asked for past the caches, tells the two apart;
		// it fails the pin in turn if the upstream's bytes are wrong.
		f.log.Warn("a download the proxy answered from its cache does not match its pin; asking the origin past the cache", "url", upstream)
		revalidate = true
		if err = p.reset(); err == nil {
			err = f.retry(ctx, upstream, tu, attempt)
		}
	}
	if err == nil && p.resumed && len(pinned) > 0 && p.hasher.Check(upstream, pinned) != nil {
		// Bytes from before the last answer (an interrupted run's partial
		// file, an earlier attempt's) joined to the rest fail the pin: they
		// may be damaged (a power cut leaves a zero-filled tail) or of
		// another version (a validator that did not tell the two apart).
		// Only the whole file, downloaded afresh, says whether the
		// upstream's bytes are wrong: a mismatch is a security failure.
		f.log.Warn("a resumed download does not match its pin; downloading it whole", "url", upstream)
		if err = p.reset(); err == nil {
			err = f.retry(ctx, upstream, tu, attempt)
		}
	}
	if err == nil {
		f.progress(Progress{URL: upstream, Received: p.written, Total: p.written, Done: true})
		return nil
	}
	if ctx.Err() == nil {
		f.progress(Progress{URL: upstream, Received: p.written, Total: p.total, Done: true, Err: err})
	}
	return err
}

// retry runs attempt until it succeeds, fails for good, or the retry count or
// time budget runs out, sleeping with backoff (or the server's Retry-After) in
// between. The budget (MaxRetryTime) bounds the whole: attempt gets a context
// that ends when it is spent, even in the middle of a transfer. Failures come
// back as *NetworkError, except *SizeError and the caller's context's error.
func (f *Fetcher) retry(parent context.Context, upstream string, tu *url.URL, attempt func(context.Context) (retry bool, after time.Duration, err error)) error {
	ctx, cancel := context.WithTimeoutCause(parent, f.o.MaxRetryTime, ErrRetryTime)
	defer cancel()
	target := tu.String()
	// What errors and the log print: a URL a library asks for (Transport)
	// may be pre-signed, its signature hidden.
	shown := srcurl.Redact(upstream)
	netErr := func(attempts int, err error) error {
		ne := &NetworkError{URL: shown, Proxy: f.proxyFor(failedAt(err, tu)), Attempts: attempts, Err: err}
		if target != upstream {
			ne.Target = srcurl.Redact(target)
		}
		return ne
	}
	start := f.now()
	outOfTime := func(n int, err error) error {
		return netErr(n, fmt.Errorf("%w (fetch: retry-time: %s, %d attempt(s)); last error: %v", ErrRetryTime, f.o.MaxRetryTime, n, err))
	}
	for n := 1; ; n++ {
		retry, after, err := attempt(ctx)
		if err == nil {
			return nil
		}
		if parent.Err() != nil {
			return parent.Err()
		}
		if diskfull.Is(err) {
			// the cache's disk is full: the next attempt would fail the
			// same way, and it is no network failure
			return diskfull.Wrap(err, f.cache.Dir())
		}
		if ctx.Err() != nil {
			return outOfTime(n, err)
		}
		if proxyNotTLS(err) {
			return netErr(n, fmt.Errorf("%w: %w", ErrProxyNotTLS, err))
		}
		if !retry {
			var se *SizeError
			if errors.As(err, &se) {
				return err
			}
			return netErr(n, err)
		}
		delay := f.backoff(n)
		if proxyUnreachable(err) {
			// Nothing listens at the proxy: a proxy being restarted comes
			// back in a moment, a stopped or mistyped one never does. A few
			// quick tries tell them apart in seconds, not the full budget.
			if n >= proxyAttempts || n > f.o.Retries {
				return netErr(n, fmt.Errorf("%w: %w", ErrProxyUnreachable, err))
			}
			delay = f.o.Backoff << (n - 1)
		} else if n > f.o.Retries {
			return netErr(n, err)
		}
		if after > 0 {
			delay = after
		}
		if spent := f.now().Sub(start); delay > f.o.MaxRetryTime-spent { // not spent+delay: a huge Retry-After would wrap around
			return netErr(n, fmt.Errorf("%w (giving up: retrying in %s would pass the %s retry budget)", err, delay.Round(time.Millisecond), f.o.MaxRetryTime))
		}
		f.log.Warn("request failed; retrying", "url", shown, "attempt", n, "in", delay.Round(time.Millisecond), "err", err)
		if serr := f.sleep(ctx, delay); serr != nil {
			if parent.Err() != nil {
				return parent.Err()
			}
			return outOfTime(n, err)
		}
	}
}

// failedAt is the URL of the request that failed with err: where the
// redirects from tu led, which may go another way than tu (a host that
// no-proxy lists redirecting to one through the proxy), else tu.
func failedAt(err error, tu *url.URL) *url.URL {
	where := ""
	if se, ok := errors.AsType[*StatusError](err); ok {
		where = se.URL
	} else if ue, ok := errors.AsType[*url.Error](err); ok {
		where = ue.URL
	}
	if u, perr := url.Parse(where); where != "" && perr == nil && u.Host != "" {
		return u
	}
	return tu
}

// backoff is the delay before retry n (1-based): exponential with full jitter
// in [d/2, d], so that parallel clients do not retry in step.
func (f *Fetcher) backoff(n int) time.Duration {
	d := f.o.Backoff << min(n-1, 20)
	if d > maxBackoff || d <= 0 {
		d = maxBackoff
	}
	return d/2 + rand.N(d/2+1)
}

// askFresh has the caches on a request's way (a caching proxy) ask the
// origin for its current copy (revalidate theirs) instead of answering from
// what they hold.
func askFresh(h http.Header) { h.Set("Cache-Control", "no-cache") }

// asIs asks for a file's (or a document's) bytes as the upstream
// publishes them, as wget does: a request without Accept-Encoding takes
// any content coding (RFC 9110 12.5.3), and a file that a server or proxy
// compressed on the way failed its pin, a JSON answer its parse.
func asIs(h http.Header) { h.Set("Accept-Encoding", "identity") }

// attempt makes one request and appends what it receives to p. It reports
// whether a failure is worth retrying and how long the server asked us to wait.
func (f *Fetcher) attempt(ctx context.Context, upstream, target string, p *partial, revalidate bool) (retry bool, after time.Duration, err error) {
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	req, err := http.NewRequestWithContext(actx, http.MethodGet, target, nil)
	if err != nil {
		return false, 0, err
	}
	req.Header.Set("User-Agent", f.o.UserAgent)
	asIs(req.Header)
	if revalidate {
		askFresh(req.Header)
	}
	// Parts of two versions (a release published again, a CDN edge holding
	// another) must not be joined: without a validator for If-Range only
	// a pin tells, so an unpinned file (a signature, a checksums file),
	// whose joined bytes would reach its verification as a false alarm,
	// is downloaded whole again.
	resuming := p.written > 0 && p.ranges && (p.validator != "" || p.pinned)
	if resuming {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", p.written))
		if p.validator != "" {
			req.Header.Set("If-Range", p.validator)
		}
	} else if p.written > 0 {
		if err := p.reset(); err != nil {
			return false, 0, err
		}
	}
	resp, err := f.do(req)
	if err != nil {
		return isRetryable(err), 0, err
	}
	defer resp.Body.Close()

	switch {
	case resp.StatusCode == http.StatusPartialContent && resuming:
		if err := p.checkContentRange(resp); err != nil {
			// The server's idea of the range is not ours: start over.
			return f.whole(ctx, upstream, target, p, revalidate, resp, err)
		}
		f.log.Info("resuming download", "url", upstream, "from", p.written)
		p.resumed = true
	case resp.StatusCode == http.StatusOK:
		if p.written > 0 {
			if err := p.reset(); err != nil {
				return false, 0, err
			}
		}
		p.total = resp.ContentLength
		p.ranges = resp.Header.Get("Accept-Ranges") == "bytes"
		p.validator = validator(resp.Header)
		p.saveMeta(target)
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable && resuming:
		if p.holdsAll(resp) {
			// An earlier run was stopped after the last byte: the bytes
			// are checked as they are.
			f.log.Info("the partial file an earlier run left holds the whole file", "url", upstream, "have", p.written)
			p.resumed = true
			return false, 0, nil
		}
		return f.whole(ctx, upstream, target, p, revalidate, resp, fmt.Errorf("%s refused the range from byte %d", target, p.written))
	default:
		return f.statusFailure(resp, func() { cancel(errIdle) })
	}
	if p.total > f.o.MaxSize {
		return false, 0, &SizeError{URL: upstream, Limit: f.o.MaxSize, Size: p.total}
	}
	p.cached = p.cached || resp.Header.Get("Age") != ""
	if ce := resp.Header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
		p.encoding = ce // kept as it is (a .tar.gz served as gzip is the file), but named if the pin fails
	}

	// The idle timer cancels the attempt when no byte arrives for
	// IdleTimeout, the rate watch when too few arrive over MinRateTime.
	idle := time.AfterFunc(f.o.IdleTimeout, func() { cancel(errIdle) })
	defer idle.Stop()
	body := &idleReader{r: resp.Body, timer: idle, d: f.o.IdleTimeout}
	defer f.watchRate(actx, body, cancel)()
	want := resp.ContentLength // bytes this response announced, -1 when chunked
	n, err := f.copyBody(p, body, upstream)
	switch cause := context.Cause(actx); {
	case errors.Is(cause, errIdle):
		return true, 0, fmt.Errorf("%s: %w (%s)", target, errIdle, f.o.IdleTimeout)
	case errors.Is(cause, errSlow):
		return true, 0, fmt.Errorf("%s: %w", target, cause)
	}
	if err != nil {
		var se *SizeError
		if errors.As(err, &se) {
			return false, 0, err
		}
		return true, 0, fmt.Errorf("%s: body cut after %d bytes: %w", target, p.written, err)
	}
	if want >= 0 && n != want {
		return true, 0, fmt.Errorf("%s: Content-Length announced %d bytes, body had %d", target, want, n)
	}
	if p.total >= 0 && p.written != p.total {
		return true, 0, fmt.Errorf("%s: expected %d bytes in total, have %d", target, p.total, p.written)
	}
	return false, 0, nil
}

// whole follows a resume that resp answered with no usable part (why) with
// a request for the whole file, in the same attempt: the server answered,
// and a retry would wait its backoff for nothing, or fail the download
// with retries: 0.
func (f *Fetcher) whole(ctx context.Context, upstream, target string, p *partial, revalidate bool, resp *http.Response, why error) (bool, time.Duration, error) {
	resp.Body.Close()
	f.log.Info("the answer to a resume is no usable part; downloading the file whole", "url", upstream, "why", why)
	p.ranges = false // the next request asks for the whole file
	return f.attempt(ctx, upstream, target, p, revalidate)
}

// copyBody appends body to p's file and hasher, enforcing the size limit. One
// goroutine reads into a copyBuffer-sized chunk until it is full (a socket
// read returns 13-36 KB on average), then writes the chunk and hashes it:
// a write of a chunk lets digest.Hasher compute sha256 and sha512 at once,
// one goroutine each, where each socket read's bytes were hashed one
// algorithm after the other; and one write per chunk, not per read, saves
// system calls. The kernel's socket buffer is the read-ahead meanwhile.
// Writing and hashing each chunk on a second goroutine while the next is
// read took as long for a sha512 pin and longer for a sha256 pin (0.82x
// curl against 0.98x), at more CPU: the chunk's bytes are hashed on another
// core instead of from this one's cache. Every writebackEvery bytes the
// kernel is told to start writing them to disk (startWriteback). The
// measurements are in cmd/updeb-bench/README.md ("Download
// loop").
func (f *Fetcher) copyBody(p *partial, body io.Reader, upstream string) (n int64, err error) {
	buf := make([]byte, copyBuffer)
	fill := 0 // bytes of buf read and not yet written
	last := time.Time{}
	// flush writes and hashes what buf holds: p.written bytes are in the
	// file and the hasher, whatever ends the copy.
	flush := func() error {
		k, err := p.file.Write(buf[:fill])
		p.hasher.Write(buf[:k])
		p.written += int64(k)
		fill = 0
		if p.written-p.flushed >= writebackEvery {
			startWriteback(p.file, p.flushed, p.written-p.flushed)
			p.flushed = p.written
		}
		if f.o.Progress != nil {
			if now := time.Now(); now.Sub(last) >= progressEvery {
				last = now
				f.progress(Progress{URL: upstream, Received: p.written, Total: p.total})
			}
		}
		return err
	}
	defer func() {
		if ferr := flush(); err == nil {
			err = ferr
		}
	}()
	for {
		k, rerr := body.Read(buf[fill:])
		if k > 0 {
			if size := p.written + int64(fill+k); size > f.o.MaxSize {
				return n, &SizeError{URL: upstream, Limit: f.o.MaxSize, Size: size}
			}
			fill += k
			n += int64(k)
			if fill == len(buf) {
				if err := flush(); err != nil {
					return n, err
				}
			}
		}
		if rerr == io.EOF {
			return n, nil
		}
		if rerr != nil {
			return n, rerr
		}
	}
}

// checkContentRange accepts a 206 only when it starts where we stopped,
// agrees with the total size we know, and is of the same version: parts
// combine only when their validators match (RFC 9110 15.3.7.3), and a server
// that ignores If-Range, or a CDN edge holding another version, answers a
// changed file with a 206 of its own validator. A 206 without a validator (or
// to a pinned file's request that had none to send: the pin checks the
// joined bytes) is taken on its Content-Range.
func (p *partial) checkContentRange(resp *http.Response) error {
	if v := validator(resp.Header); v != "" && p.validator != "" && v != p.validator {
		return fmt.Errorf("the part sent is of another version (validator %q, the bytes so far are of %q)", v, p.validator)
	}
	cr := resp.Header.Get("Content-Range")
	var first, last, total int64
	if _, err := fmt.Sscanf(cr, "bytes %d-%d/%d", &first, &last, &total); err != nil {
		return fmt.Errorf("unusable Content-Range %q", cr)
	}
	if first != p.written || last < first || last >= total || (p.total >= 0 && total != p.total) {
		return fmt.Errorf("Content-Range %q does not continue %d bytes of %d", cr, p.written, p.total)
	}
	p.total = total
	return nil
}

// holdsAll says whether a 416 to a resume says the bytes so far are the
// whole file: its Content-Range (bytes */SIZE, RFC 9110 15.5.17) gives their
// size, of the same version when it names one.
func (p *partial) holdsAll(resp *http.Response) bool {
	var total int64
	if _, err := fmt.Sscanf(resp.Header.Get("Content-Range"), "bytes */%d", &total); err != nil {
		return false
	}
	v := validator(resp.Header)
	return total == p.written && (p.total < 0 || p.total == total) && (v == "" || v == p.validator)
}

// validator returns what If-Range may carry: a strong ETag, else a
// Last-Modified that is strong, at least a second before the answer's Date
// (RFC 9110 8.8.2.2 and 13.1.5). A date is to the second: a file replaced
// within the second it was last modified has the same one, and a resume on
// it would join the two versions' bytes.
func validator(h http.Header) string {
	if et := h.Get("ETag"); et != "" && !strings.HasPrefix(et, "W/") {
		return et
	}
	lm, err := http.ParseTime(h.Get("Last-Modified"))
	if err != nil {
		return ""
	}
	if date, err := http.ParseTime(h.Get("Date")); err != nil || date.Sub(lm) < time.Second {
		return ""
	}
	return h.Get("Last-Modified")
}

// retryAfter reads Retry-After (seconds or an HTTP date); 0 when absent or past.
// A number of seconds past what a time.Duration holds (about 292 years) is
// read as the longest Duration, not wrapped around into a short wait.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); (err == nil || errors.Is(err, strconv.ErrRange)) && s >= 0 {
		return time.Duration(min(s, int64(math.MaxInt64/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// idleReader pushes the idle deadline back every time bytes arrive, and
// counts them for the rate watch.
type idleReader struct {
	r     io.Reader
	timer *time.Timer
	d     time.Duration
	got   atomic.Int64
}

func (r *idleReader) Read(b []byte) (int, error) {
	n, err := r.r.Read(b)
	if n > 0 {
		r.timer.Reset(r.d)
		r.got.Add(int64(n))
	}
	return n, err
}

// watchRate cancels ctx (cause errSlow) when body receives fewer than
// MinRate*MinRateTime bytes in a MinRateTime window. It returns the function
// that stops the watch.
func (f *Fetcher) watchRate(ctx context.Context, body *idleReader, cancel context.CancelCauseFunc) (stop func()) {
	if f.o.MinRate < 0 {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(f.o.MinRateTime)
		defer t.Stop()
		var last int64
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				n := body.got.Load()
				if min := float64(f.o.MinRate) * f.o.MinRateTime.Seconds(); float64(n-last) < min {
					cancel(fmt.Errorf("%w: %d bytes in the last %s, want at least %d bytes/s (fetch: min-rate)", errSlow, n-last, f.o.MinRateTime, f.o.MinRate))
					return
				}
				last = n
			}
		}
	}()
	return func() { close(done) }
}
