// Package fetch downloads upstream artifacts into updeb's verifying cache.
//
// Every request goes through the configured proxy (HTTPS by CONNECT), redirects
// included; with a proxy configured no direct connection is ever made, except to
// hosts listed in NoProxy. TLS is always verified (system roots or RootCAs). A
// download is retried with exponential backoff and jitter on connection errors,
// timeouts, 5xx and 429 (honouring Retry-After), bounded by Retries and
// MaxRetryTime, and resumed with Range when the server allows it. The bytes are
// hashed as they arrive and checked against the pinned digests before they are
// moved into the cache; bytes that do not match are never cached. Only the
// algorithms needed are computed (digest.Needed): sha256, which addresses the
// cache, every pinned algorithm, and those a caller asks for in
// Request.Algorithms. A sha256-pinned download does not pay for sha512 (the
// slowest hash, and the floor of a download's throughput when it is computed).
//
// Cache policy. A pinned request is served from the cache when a blob with the
// pinned digest exists and, re-hashed, still matches; a corrupt blob is evicted
// and downloaded again. An unpinned request (AllowUnpinned: signatures and
// checksum files, which are verified later by a signature or only used to
// cross-check a pinned digest) is served from the cache when the index holds an
// entry for the same URL and Key whose blob still matches the digest recorded when
// it was downloaded; it is not re-fetched while that holds, so reruns stay
// offline-capable and idempotent. Changing Key (e.g. the recipe version) fetches
// it again. An unpinned download is sent with Cache-Control: no-cache, so that a
// caching proxy revalidates its copy with the origin.
//
// Mirrors. Options.Mirrors maps upstream URL prefixes to a local folder
// (file:///srv/mirror/github.com/) or an internal HTTP mirror
// (http://mirror.internal/github/). The longest matching Prefix wins and is
// replaced by To; the rest of the URL is kept as is. A mapped URL is fetched only
// from the mirror (no fallback to upstream) and verified exactly like an upstream
// download. HTTP mirrors use the proxy rules like any URL (list the mirror host in
// NoProxy to reach it directly).
package fetch

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/singleflight"

	"github.com/updeb/updeb/internal/cache"
	"github.com/updeb/updeb/internal/srcurl"
	"github.com/updeb/updeb/pkg/digest"
)

// Defaults for the zero values of Options.
const (
	DefaultConnectTimeout = 30 * time.Second
	DefaultHeaderTimeout  = 60 * time.Second
	DefaultIdleTimeout    = 60 * time.Second
	DefaultRetries        = 5
	DefaultMaxRetryTime   = 5 * time.Minute
	DefaultMinRate        = 1024 // bytes per second, averaged over DefaultMinRateTime
	DefaultMinRateTime    = 30 * time.Second
	DefaultBackoff        = time.Second
	DefaultMaxSize        = 4 << 30 // 4 GiB
	DefaultParallel       = 4
)

// PartialMaxAge is how long the partial file of an interrupted download is
// kept for a resume (see partial.keep); New removes older ones.
const PartialMaxAge = 24 * time.Hour

// Options configure a Fetcher. Zero values take the defaults above.
type Options struct {
	Proxy   *url.URL // every request goes through it; nil means direct connections
	NoProxy []string // hosts reached directly even with a proxy (see matchNoProxy); only what is configured
	RootCAs *x509.CertPool
	Mirrors []Mirror

	ConnectTimeout time.Duration // TCP connect and TLS handshake
	HeaderTimeout  time.Duration // from sending the request to the response headers (and to the proxy's answer to a CONNECT)
	IdleTimeout    time.Duration // longest time without a byte of the body
	Retries        int           // retries after the first attempt; < 0 means none
	MaxRetryTime   time.Duration // total time budget of one download, retries included: it ends an attempt in progress
	Backoff        time.Duration // first retry delay, doubled each retry with jitter (capped at 30s)
	MaxSize        int64         // the largest artifact accepted, in bytes
	Parallel       int           // downloads at once in FetchAll
	// MinRate (bytes per second) ends an attempt that receives less than
	// MinRate*MinRateTime bytes in any MinRateTime (curl's --speed-limit and
	// --speed-time): a stalled or trickling transfer, which the idle timeout
	// misses as long as a byte arrives now and then. < 0 means no minimum.
	MinRate     int64
	MinRateTime time.Duration

	UserAgent string
	Logger    *slog.Logger // nil discards, as in every library of updeb
	Progress  ProgressFunc // nil: none (the Logger still says what is fetched)
	// Transport replaces the built-in transport (tests). Proxy, NoProxy, RootCAs
	// and the connect and header timeouts are then its business.
	Transport http.RoundTripper
	Offline   bool // use the cache only; a miss is an *OfflineError
}

// Request is one artifact to fetch.
type Request struct {
	URL string
	// Pinned is the trust anchor. It may be empty only with AllowUnpinned, for
	// auxiliary files (signatures, checksum files) that are verified otherwise.
	Pinned        digest.Set
	AllowUnpinned bool
	Key           string // part of the cache index key, e.g. "helm 3.15.4"
	// Algorithms are digests to compute besides sha256 and the pinned ones,
	// e.g. the algorithms a recipe will pin (see Result.Digests).
	Algorithms []digest.Algorithm
	// Fresh downloads the file even when the cache holds it (bump must see
	// upstream's bytes as they are now); what it gets is cached as usual.
	Fresh bool
}

// Result is a verified file in the cache.
type Result struct {
	URL       string
	Path      string // the file in the cache; read it, never write it
	Size      int64
	Digests   digest.Set // of the bytes: sha256, the pinned algorithms and Request.Algorithms
	FromCache bool
	Via       string // "proxy URL", "mirror URL", "direct" or "cache"
}

// Fetcher downloads into one cache. It is safe for concurrent use.
type Fetcher struct {
	o      Options
	cache  *cache.Cache
	client *http.Client
	log    *slog.Logger
	group  singleflight.Group
	mu     sync.Mutex
	shared map[string]*sharedCall // id -> the context of the download its callers wait for
	now    func() time.Time
	sleep  func(context.Context, time.Duration) error
}

// New returns a Fetcher storing into cacheDir (created when missing).
func New(cacheDir string, o Options) (*Fetcher, error) {
	c, err := cache.Open(cacheDir)
	if err != nil {
		return nil, err
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.ConnectTimeout, DefaultConnectTimeout)
	def(&o.HeaderTimeout, DefaultHeaderTimeout)
	def(&o.IdleTimeout, DefaultIdleTimeout)
	def(&o.MaxRetryTime, DefaultMaxRetryTime)
	def(&o.MinRateTime, DefaultMinRateTime)
	if o.MinRate == 0 {
		o.MinRate = DefaultMinRate
	}
	def(&o.Backoff, DefaultBackoff)
	if o.Retries == 0 {
		o.Retries = DefaultRetries
	} else if o.Retries < 0 {
		o.Retries = 0
	}
	if o.MaxSize <= 0 {
		o.MaxSize = DefaultMaxSize
	}
	if o.Parallel <= 0 {
		o.Parallel = DefaultParallel
	}
	if o.UserAgent == "" {
		o.UserAgent = "updeb"
	}
	if o.Proxy != nil && o.Proxy.Scheme != "http" && o.Proxy.Scheme != "https" {
		return nil, fmt.Errorf("fetch: proxy %s: scheme must be http or https", redact(o.Proxy))
	}
	if err := checkMirrors(o.Mirrors); err != nil {
		return nil, err
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if n := c.Sweep(PartialMaxAge); n > 0 {
		log.Debug("removed leftovers of interrupted downloads", "files", n)
	}
	return &Fetcher{
		o: o, cache: c, client: newClient(&o), log: log,
		now: time.Now, sleep: sleepCtx,
	}, nil
}

// Fetch returns r's artifact from the cache or downloads, verifies and caches it.
// Errors: *NetworkError (after retries), *digest.MismatchError (nothing cached),
// *OfflineError, *SizeError, *DowngradeError, digest.ErrNoPin.
func (f *Fetcher) Fetch(ctx context.Context, r Request) (*Result, error) {
	if len(r.Pinned) == 0 && !r.AllowUnpinned {
		return nil, fmt.Errorf("fetch %s: %w (pin a sha256 or sha512)", r.URL, digest.ErrNoPin)
	}
	if _, err := srcurl.Check(r.URL); err != nil {
		return nil, fmt.Errorf("fetch: %w", err)
	}
	// Needed leaves out what it does not know: a pin or a digest asked for
	// of another algorithm is refused here, before any network step.
	for _, a := range append(r.Pinned.Algorithms(), r.Algorithms...) {
		if a.Size() == 0 {
			return nil, fmt.Errorf("fetch %s: unknown digest algorithm %q (want sha256 or sha512)", r.URL, a)
		}
	}
	algs := digest.Needed(r.Pinned, r.Algorithms...)
	// Requests that compute other algorithms are not shared: each result
	// must hold the digests its caller asked for.
	id := cache.ID(r.URL, r.Key) + pinKey(r.Pinned) + fmt.Sprint(algs)
	// A caller already stopped starts nothing: the download runs under the
	// shared context, which its leaving would stop only after a small copy
	// or re-hash had finished, and the select below may then take the
	// result over ctx's end.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sc := f.join(ctx, id)
	ch := f.group.DoChan(id, func() (any, error) { return f.fetchLocked(sc.ctx, r, algs) })
	var out singleflight.Result
	select {
	case out = <-ch:
		f.leave(id, sc)
	case <-ctx.Done():
		if f.leave(id, sc) {
			<-ch // the last to leave stopped the download: it has cleaned up when this returns
		}
		return nil, ctx.Err()
	}
	if out.Err != nil {
		return nil, out.Err
	}
	res := *out.Val.(*Result)
	return &res, nil
}

// sharedCall is the context of a download that several callers wait for:
// done when the last of them stops waiting, not when the first does. (The
// first caller's own context, a job that fails on another source and
// cancels its fetches, stopped the download every other job waited for:
// they failed "context canceled".)
type sharedCall struct {
	ctx     context.Context
	cancel  context.CancelFunc
	waiters int
}

// join counts the caller among those waiting for id's download.
func (f *Fetcher) join(ctx context.Context, id string) *sharedCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	sc := f.shared[id]
	if sc == nil {
		c, cancel := context.WithCancel(context.WithoutCancel(ctx))
		sc = &sharedCall{ctx: c, cancel: cancel}
		if f.shared == nil {
			f.shared = map[string]*sharedCall{}
		}
		f.shared[id] = sc
	}
	sc.waiters++
	return sc
}

// leave ends the caller's wait: the last one to leave stops the download
// (if it still runs) and forgets it, so that a later caller starts anew,
// and is told so.
func (f *Fetcher) leave(id string, sc *sharedCall) (last bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if sc.waiters--; sc.waiters > 0 {
		return false
	}
	sc.cancel()
	if f.shared[id] == sc {
		delete(f.shared, id)
		f.group.Forget(id)
	}
	return true
}

func pinKey(s digest.Set) string {
	k := ""
	for _, a := range s.Algorithms() {
		k += "/" + string(a) + ":" + s[a]
	}
	return k
}

// fetchLocked holds the cross-process lock for (URL, Key) while it looks in the
// cache and downloads, so two processes never download the same file at once:
// the second one finds it in the cache.
func (f *Fetcher) fetchLocked(ctx context.Context, r Request, algs []digest.Algorithm) (*Result, error) {
	unlock, err := f.cache.Lock(ctx, cache.ID(r.URL, r.Key))
	if err != nil {
		return nil, err
	}
	defer unlock()
	var res *Result
	err = cache.ErrMiss
	if !r.Fresh {
		res, err = f.lookup(ctx, r, algs)
	}
	switch {
	case err == nil:
		f.log.Debug("cached", "url", r.URL, "path", res.Path)
		return res, nil
	case f.o.Offline && errors.Is(err, errEvicted):
		return nil, &OfflineError{Corrupt: []string{r.URL}}
	case f.o.Offline && errors.Is(err, cache.ErrMiss):
		return nil, &OfflineError{Missing: []string{r.URL}}
	case !errors.Is(err, cache.ErrMiss):
		return nil, err
	}
	return f.download(ctx, r, algs)
}

// errEvicted is a cache miss because the cached copy failed its digest (and
// was removed): it wraps cache.ErrMiss.
var errEvicted = fmt.Errorf("%w: the cached copy failed its digest and was removed", cache.ErrMiss)

// lookup finds r in the cache and re-verifies it, computing algs; cache.ErrMiss
// when absent or not matching the pin, errEvicted when corrupt (then removed);
// the re-hash (seconds for a file of gigabytes) stops at ctx's end.
func (f *Fetcher) lookup(ctx context.Context, r Request, algs []digest.Algorithm) (*Result, error) {
	sha := r.Pinned[digest.SHA256]
	expect := r.Pinned
	if sha == "" {
		e, err := f.cache.Index(r.URL, r.Key)
		if err != nil {
			return nil, err
		}
		sha = e.SHA256
		if len(expect) == 0 {
			expect = e.Digests()
		}
	}
	var report func(done, total int64)
	reported := false
	if f.o.Progress != nil {
		report = func(done, total int64) {
			reported = true
			f.progress(Progress{URL: r.URL, Received: done, Total: total, Cached: true})
		}
	}
	path, size, sums, err := f.cache.VerifyReporting(ctx, sha, report, digest.Needed(expect, algs...)...)
	if reported {
		f.progress(Progress{URL: r.URL, Received: size, Total: size, Done: true, Err: err, Cached: true})
	}
	if errors.Is(err, cache.ErrCorrupt) {
		f.log.Warn("evicted a corrupt cache entry", "url", r.URL, "err", err)
		return nil, errEvicted
	}
	if err != nil {
		return nil, err
	}
	for a, want := range expect {
		if sums[a] != want {
			return nil, cache.ErrMiss // cached under another pin: download and let the pin decide
		}
	}
	return &Result{URL: r.URL, Path: path, Size: size, Digests: sums, FromCache: true, Via: "cache"}, nil
}

// download fetches r (from its mirror when one matches) computing algs, checks
// the pin and commits.
func (f *Fetcher) download(ctx context.Context, r Request, algs []digest.Algorithm) (*Result, error) {
	t, err := mapMirror(f.o.Mirrors, r.URL)
	if err != nil {
		return nil, err
	}
	// The partial file is this download's (fetchLocked holds its lock): an
	// interrupted run may have left bytes in it that a resume can use.
	tmp, meta, err := f.cache.Partial(cache.ID(r.URL, r.Key))
	if err != nil {
		return nil, err
	}
	h := digest.NewHasher(algs...)
	p := &partial{file: tmp, hasher: h, total: -1, meta: meta, pinned: len(r.Pinned) > 0}
	committed := false
	defer func() {
		if !committed {
			tmp.Close()
			if !p.keep(err) {
				os.Remove(tmp.Name())
				os.Remove(meta)
			}
		}
	}()
	var via string
	if t.dir != "" {
		via = "mirror " + t.url
		if err = p.reset(); err == nil {
			err = f.copyFile(ctx, t, r.URL, tmp, h)
		}
	} else {
		via = "direct"
		if tu, _ := url.Parse(t.url); tu != nil {
			if p := f.proxyFor(tu); p != "" {
				via = "proxy " + p
			}
		}
		if t.mirrored {
			via = "mirror " + t.url + " (" + via + ")"
		}
		if err = f.resumeFrom(ctx, p, r.URL, t.url); err == nil {
			// No pin vouches for an unpinned file's bytes: a caching
			// proxy's copy (stale, or the damaged one a verification
			// refused and Forget dropped) is revalidated with the origin,
			// not served again. A pinned file may come from its cache.
			err = f.get(ctx, r.URL, t.url, p, r.Pinned)
		}
	}
	if err != nil {
		return nil, err
	}
	sums := h.Sum()
	if len(r.Pinned) > 0 {
		if err := h.Check(r.URL, r.Pinned); err != nil {
			switch {
			case t.dir != "":
			case htmlPage(tmp) && t.mirrored:
				err = fmt.Errorf("%w (the bytes received are an HTML page, not the file: an error page or folder listing of the mirror, or a proxy's?)", err)
			case htmlPage(tmp):
				err = fmt.Errorf("%w (the bytes received are an HTML page, not the file: an error or login page of a proxy?)", err)
			case p.encoding != "":
				err = fmt.Errorf("%w (the bytes were sent with Content-Encoding: %s though asked for as they are: a server or proxy that compresses files on the way sends other bytes than the file)", err, p.encoding)
			}
			// A mirror's copy (a folder's, or an HTTP mirror's) is named
			// as the one that is not the pinned file: it was the upstream
			// URL alone for an HTTP mirror, and the hint sent the operator
			// to the pin and the upstream release.
			if t.mirrored {
				err = fmt.Errorf("the copy in the %s is %w: %w", via, ErrCorruptCopy, err)
			}
			return nil, err
		}
	}
	path, err := f.cache.Commit(ctx, tmp, sums[digest.SHA256])
	committed = true
	os.Remove(meta)
	if err != nil {
		return nil, err
	}
	e := cache.Entry{URL: r.URL, Key: r.Key, SHA256: sums[digest.SHA256], SHA512: sums[digest.SHA512], Size: h.Size()}
	if err := f.cache.SetIndex(e); err != nil {
		return nil, err
	}
	f.log.Info("fetched", "url", r.URL, "size", h.Size(), "via", strings.Fields(via)[0])
	f.log.Debug("fetched", "url", r.URL, "sha256", sums[digest.SHA256], "via", via, "path", path)
	return &Result{URL: r.URL, Path: path, Size: h.Size(), Digests: sums, Via: via}, nil
}

// htmlPage reports whether f starts as an HTML page does: what a proxy or a
// captive portal answers, with 200, in place of the file it will not give.
func htmlPage(f *os.File) bool {
	b := make([]byte, 512) // all http.DetectContentType reads
	n, _ := f.ReadAt(b, 0)
	return strings.HasPrefix(http.DetectContentType(b[:n]), "text/html")
}

// Forget drops what the cache recorded for an unpinned download (url, key),
// so that the next Fetch of it downloads it again. Callers use it when the
// file failed the verification it was fetched for: a copy that did not
// verify must never be served again.
func (f *Fetcher) Forget(ctx context.Context, url, key string) error {
	unlock, err := f.cache.Lock(ctx, cache.ID(url, key))
	if err != nil {
		return err
	}
	defer unlock()
	f.log.Info("discarded a cached file that failed verification", "url", url)
	return f.cache.DropIndex(url, key)
}

// Close closes idle connections (and with them the proxy's CONNECT tunnels).
func (f *Fetcher) Close() { f.client.CloseIdleConnections() }

// FetchAll fetches rs with at most Options.Parallel downloads at once and
// returns the results in rs's order. In offline mode every missing file is
// listed in one *OfflineError.
func (f *Fetcher) FetchAll(ctx context.Context, rs []Request) ([]*Result, error) {
	return f.fetchAll(ctx, rs, true)
}

// FetchEach fetches rs as FetchAll does, but a failure stops none of the
// others: it returns what was fetched, in rs's order, and every failure
// (errors.Join; offline misses in one *OfflineError).
func (f *Fetcher) FetchEach(ctx context.Context, rs []Request) ([]*Result, error) {
	return f.fetchAll(ctx, rs, false)
}

// fetchAll is FetchAll, or FetchEach when not stop.
func (f *Fetcher) fetchAll(ctx context.Context, rs []Request, stop bool) ([]*Result, error) {
	out := make([]*Result, len(rs))
	errs := make([]error, len(rs))
	var mu sync.Mutex
	offline := &OfflineError{}
	g, gctx := errgroup.WithContext(ctx)
	if !stop {
		g, gctx = &errgroup.Group{}, ctx
	}
	g.SetLimit(f.o.Parallel)
	for i, r := range rs {
		g.Go(func() error {
			res, err := f.Fetch(gctx, r)
			if oe, ok := errors.AsType[*OfflineError](err); ok {
				mu.Lock()
				offline.Add(oe)
				mu.Unlock()
				return nil
			}
			out[i], errs[i] = res, err
			if stop {
				return err
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil && !stop {
		return nil, err // not each request's
	}
	if len(offline.Missing)+len(offline.Corrupt) > 0 {
		if stop {
			return nil, offline
		}
		errs = append(errs, offline)
	}
	fetched := out[:0]
	for _, r := range out {
		if r != nil {
			fetched = append(fetched, r)
		}
	}
	return fetched, errors.Join(errs...)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// copyBuffer is the read buffer of downloads. A read from a socket returns
// what it holds, mostly under 64 KiB (13-36 KB on average through squid), and
// the hasher computes its digests one after the other on it; file mirrors and
// resumed partial files fill the buffer, and the hasher computes the digests
// of those 1 MiB writes in parallel (digest.Hasher.Write).
const copyBuffer = 1 << 20

var _ io.Writer = (*digest.Hasher)(nil)
