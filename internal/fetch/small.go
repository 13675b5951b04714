package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/updeb/updeb/internal/confined"
	"github.com/updeb/updeb/internal/srcurl"
)

// DefaultGetLimit is the size cap of Get when the caller gives none.
const DefaultGetLimit = 8 << 20

// maxErrorBody is how much of an error answer's body a StatusError keeps.
const maxErrorBody = 1024

// Get returns the body of a small document (an API answer, a directory
// listing) without caching it: same client, proxy, mirrors, timeouts and retry
// policy as downloads, at most limit bytes (<= 0: DefaultGetLimit). header is
// sent as given (e.g. Authorization); it is never logged. An answer other than
// 200 is a *StatusError (with the response headers and the start of the body)
// inside a *NetworkError.
func (f *Fetcher) Get(ctx context.Context, rawURL string, header http.Header, limit int64) ([]byte, error) {
	body, _, err := f.GetHeader(ctx, rawURL, header, limit)
	return body, err
}

// GetHeader is Get that returns the answer's headers too (the Link header
// of a paginated API answer); a file a mirror folder serves has none (nil).
func (f *Fetcher) GetHeader(ctx context.Context, rawURL string, header http.Header, limit int64) ([]byte, http.Header, error) {
	if limit <= 0 {
		limit = DefaultGetLimit
	}
	t, tu, err := f.smallTarget(rawURL)
	if err != nil {
		return nil, nil, err
	}
	if t.dir != "" {
		body, err := f.readMirrorFile(rawURL, t, limit)
		return body, nil, err
	}
	var (
		body []byte
		got  http.Header
	)
	err = f.retry(ctx, rawURL, tu, func(ctx context.Context) (bool, time.Duration, error) {
		resp, cancel, err := f.small(ctx, http.MethodGet, rawURL, tu, header)
		if err != nil {
			return isRetryable(err), 0, err
		}
		defer cancel()
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return f.statusFailure(resp, cancel)
		}
		b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
		if err != nil {
			return true, 0, fmt.Errorf("%s: body: %w", tu, err)
		}
		if int64(len(b)) > limit {
			return false, 0, &SizeError{URL: rawURL, Limit: limit, Size: int64(len(b))}
		}
		body, got = b, resp.Header
		return false, 0, nil
	})
	return body, got, err
}

// Exists reports whether rawURL can be downloaded, without downloading it: a
// HEAD request, and when the server refuses HEAD (403, 405, 501: signed
// object-store redirects often allow only GET) a GET of the first byte.
// 404 and 410 mean false; other failures are errors after the retry policy.
func (f *Fetcher) Exists(ctx context.Context, rawURL string) (bool, error) {
	t, tu, err := f.smallTarget(rawURL)
	if err != nil {
		return false, err
	}
	if t.dir != "" {
		err := confined.Check(t.dir, t.name)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return false, nil
		case errors.Is(err, confined.ErrRefused):
			return false, &MirrorError{URL: rawURL, Target: t.url, Err: err}
		case err != nil:
			return false, &NetworkError{URL: rawURL, Target: t.url, Attempts: 1, Err: err}
		}
		return true, nil
	}
	exists := false
	probe := func(method string, header http.Header) error {
		return f.retry(ctx, rawURL, tu, func(ctx context.Context) (bool, time.Duration, error) {
			resp, cancel, err := f.small(ctx, method, rawURL, tu, header)
			if err != nil {
				return isRetryable(err), 0, err
			}
			defer cancel()
			resp.Body.Close()
			switch resp.StatusCode {
			case http.StatusOK, http.StatusPartialContent:
				exists = true
				return false, 0, nil
			case http.StatusNotFound, http.StatusGone:
				return false, 0, nil
			}
			return f.statusFailure(resp, cancel)
		})
	}
	err = probe(http.MethodHead, nil)
	var se *StatusError
	if errors.As(err, &se) && (se.StatusCode == http.StatusForbidden || se.StatusCode == http.StatusMethodNotAllowed || se.StatusCode == http.StatusNotImplemented) {
		f.log.Debug("HEAD refused; probing with a one-byte GET", "url", rawURL, "status", se.Status)
		err = probe(http.MethodGet, http.Header{"Range": {"bytes=0-0"}})
	}
	return exists, err
}

// smallTarget checks rawURL, applies the mirrors and refuses offline mode.
func (f *Fetcher) smallTarget(rawURL string) (target, *url.URL, error) {
	if _, err := srcurl.Check(rawURL); err != nil {
		return target{}, nil, fmt.Errorf("fetch: %w", err)
	}
	if f.o.Offline {
		return target{}, nil, &OfflineError{Missing: []string{rawURL}}
	}
	t, err := mapMirror(f.o.Mirrors, rawURL)
	if err != nil {
		return target{}, nil, err
	}
	tu, err := url.Parse(t.url)
	if err != nil {
		return target{}, nil, fmt.Errorf("fetch: mirror URL %q: %w", t.url, err)
	}
	return t, tu, nil
}

// small sends one request for upstream, to tu (upstream, or where a mirror
// serves it), whose whole exchange (headers and body) must fit in the header
// and idle timeouts; call cancel after reading the body. What is asked is
// upstream's state now (a release listing, whether a file exists): a caching
// proxy revalidates its copy (askFresh), so that a release is not missed
// while it holds an older listing fresh.
func (f *Fetcher) small(ctx context.Context, method, upstream string, tu *url.URL, header http.Header) (*http.Response, context.CancelFunc, error) {
	actx, cancel := context.WithTimeout(ctx, f.o.HeaderTimeout+f.o.IdleTimeout)
	req, err := http.NewRequestWithContext(actx, method, tu.String(), nil)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	askFresh(req.Header)
	asIs(req.Header)
	f.copyHeader(req.Header, header, upstream, tu)
	req.Header.Set("User-Agent", f.o.UserAgent)
	resp, err := f.do(req)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	return resp, cancel, nil
}

// statusFailure turns an unexpected answer into a *StatusError and says
// whether it is worth retrying (5xx, 408, 429). The start of its body is
// read as a download's is: stop (which must end the request) is called
// when no byte of it arrives for IdleTimeout. A server that announced an
// error page and stalled in it held a download's attempt until the whole
// retry budget was spent, and a Transport request for good under a
// caller's context without a deadline.
func (f *Fetcher) statusFailure(resp *http.Response, stop func()) (bool, time.Duration, error) {
	now := f.now()
	se := &StatusError{URL: redact(resp.Request.URL), StatusCode: resp.StatusCode, Status: resp.Status, Header: resp.Header.Clone()}
	idle := time.AfterFunc(f.o.IdleTimeout, stop)
	b, _ := io.ReadAll(io.LimitReader(&idleReader{r: resp.Body, timer: idle, d: f.o.IdleTimeout}, maxErrorBody))
	idle.Stop()
	se.Body = string(b) // what came before a failure: the start of an error message
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusServiceUnavailable, http.StatusForbidden: // 403: GitHub's secondary rate limit
		se.RetryAfter = retryAfter(resp.Header.Get("Retry-After"), now)
		// A spent rate limit (GitHub's, at 403 or 429) lifts at
		// X-RateLimit-Reset (Unix seconds), not after a backoff: every
		// try before then is refused, and GitHub asks for none.
		if s, err := strconv.ParseInt(resp.Header.Get("X-Ratelimit-Reset"), 10, 64); se.RetryAfter == 0 && err == nil &&
			resp.Header.Get("X-Ratelimit-Remaining") == "0" && time.Unix(s, 0).After(now) {
			se.RetryAfter = time.Unix(s, 0).Sub(now)
		}
	}
	return retryableStatus(resp.StatusCode) && !se.ProxyTooBig(), se.RetryAfter, se
}

// retryableStatus reports whether an answer with this status may be
// different next time: 5xx, 408 and 429.
func retryableStatus(code int) bool {
	return code >= 500 || code == http.StatusTooManyRequests || code == http.StatusRequestTimeout
}

// readMirrorFile reads a file:// mirror document with the size limit; a
// missing file is a 404-like *StatusError so callers see one kind of "absent".
func (f *Fetcher) readMirrorFile(upstream string, t target, limit int64) ([]byte, error) {
	fail := func(err error) error { return &NetworkError{URL: upstream, Target: t.url, Attempts: 1, Err: err} }
	src, _, err := confined.Open(t.dir, t.name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fail(&StatusError{URL: t.url, StatusCode: http.StatusNotFound, Status: "404 Not Found (no such file in the mirror)"})
	}
	if errors.Is(err, confined.ErrRefused) {
		return nil, &MirrorError{URL: upstream, Target: t.url, Err: err}
	}
	if err != nil {
		return nil, fail(err)
	}
	defer src.Close()
	b, err := io.ReadAll(io.LimitReader(src, limit+1))
	if err != nil {
		return nil, fail(err)
	}
	if int64(len(b)) > limit {
		return nil, &SizeError{URL: upstream, Limit: limit, Size: int64(len(b))}
	}
	return b, nil
}

// credentialHeaders carry a credential for the host a URL names: those Go's
// client drops on a redirect to another host, and GitLab's token headers
// (PRIVATE-TOKEN, JOB-TOKEN), which it does not know of and sends on to
// any host.
var credentialHeaders = []string{"Authorization", "Www-Authenticate", "Cookie", "Cookie2", "Private-Token", "Job-Token"}

// copyHeader copies the caller's header into dst, a request for upstream
// sent to tu. When a mirror serves upstream from another host, or over plain
// http for an https URL, the credentials are left out: a GITHUB_TOKEN is
// sent only to the API it is for, never to a mirror of it.
func (f *Fetcher) copyHeader(dst, header http.Header, upstream string, tu *url.URL) {
	u, err := url.Parse(upstream)
	keep := err == nil && strings.EqualFold(u.Host, tu.Host) && (u.Scheme != "https" || tu.Scheme == "https")
	for k, v := range header {
		if !keep && slices.Contains(credentialHeaders, http.CanonicalHeaderKey(k)) {
			f.log.Debug("a mirror serves this URL from another host: its credentials are not sent there", "url", srcurl.Redact(upstream), "mirror", tu.Redacted(), "header", k)
			continue
		}
		dst[k] = v
	}
}
