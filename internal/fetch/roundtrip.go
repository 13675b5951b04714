package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/updeb/updeb/internal/confined"
)

// Transport returns an http.RoundTripper for libraries that make their own
// requests (the Sigstore verifier asks Rekor, GitHub's attestations API and a
// TUF repository), so that each request goes where a download of its URL
// would: mapped by the mirrors (a file:// mirror answers from its folder: 200
// with the file, 404 when it has none), through the proxy with NoProxy,
// RootCAs, the connect and header timeouts and the redirect policy, with the
// User-Agent, and retried like a download on connection errors, 5xx, 408 and
// 429 (honouring Retry-After) within Retries and MaxRetryTime. Every other
// answer (404, 403, ...) is returned as it is: the library decides what it
// means. In offline mode every request fails with an *OfflineError; a request
// that fails for good is a *NetworkError. Only GET and HEAD are sent. The
// request's context bounds the whole exchange, body included.
func (f *Fetcher) Transport() http.RoundTripper { return transport{f} }

type transport struct{ f *Fetcher }

func (t transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		return nil, fmt.Errorf("fetch: %s %s: only GET and HEAD are sent", req.Method, req.URL.Redacted())
	}
	upstream := req.URL.String()
	tt, tu, err := t.f.smallTarget(upstream)
	if err != nil {
		return nil, err
	}
	if tt.dir != "" {
		return mirrorResponse(req, upstream, tt)
	}
	var resp *http.Response
	err = t.f.retry(req.Context(), upstream, tu, func(ctx context.Context) (bool, time.Duration, error) {
		// The retry budget (ctx) bounds the attempt until its answer's
		// headers arrive; the body is the caller's to read after retry has
		// returned (and cancelled ctx), until it closes it.
		actx, acancel := context.WithCancel(req.Context())
		stop := context.AfterFunc(ctx, acancel)
		out, err := http.NewRequestWithContext(actx, req.Method, tu.String(), nil)
		if err != nil {
			acancel()
			return false, 0, err
		}
		t.f.copyHeader(out.Header, req.Header, upstream, tu)
		if out.Header.Get("User-Agent") == "" {
			out.Header.Set("User-Agent", t.f.o.UserAgent)
		}
		if out.Header.Get("Accept-Encoding") == "" {
			asIs(out.Header) // what the library decodes itself, it asks for
		}
		r, err := t.f.do(out)
		stop()
		if err != nil {
			acancel()
			return isRetryable(err), 0, err
		}
		if retryableStatus(r.StatusCode) {
			defer acancel()
			defer r.Body.Close()
			return t.f.statusFailure(r, acancel)
		}
		r.Body = cancelOnClose{r.Body, acancel}
		resp = r
		return false, 0, nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// cancelOnClose releases an answer's context when its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// MirrorMissingHeader is set on the 404 a file mirror answers for a file it
// does not hold, to the file's URL in the mirror.
const MirrorMissingHeader = "X-Mirror-Missing" // sigstore.MirrorMissingHeader: cmd/updeb tests they agree

// mirrorResponse answers req from a file of a file:// mirror.
func mirrorResponse(req *http.Request, upstream string, t target) (*http.Response, error) {
	resp := &http.Response{Request: req, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: http.Header{}}
	// Opened inside the mirror's folder, as every file mirror read is: a
	// symlink out of it, a device or a FIFO is refused before a byte is read.
	f, fi, err := confined.Open(t.dir, t.name)
	switch {
	case errors.Is(err, confined.ErrRefused):
		return nil, &MirrorError{URL: upstream, Target: t.url, Err: err}
	case errors.Is(err, fs.ErrNotExist):
		msg := "404 Not Found (no such file in the mirror: " + t.url + ")"
		resp.StatusCode, resp.Status = http.StatusNotFound, msg
		// A caller that must tell "the upstream has none" from "the mirror
		// folder lacks it" (GitHub's attestations) reads this header.
		resp.Header.Set(MirrorMissingHeader, t.url)
		resp.Body = io.NopCloser(strings.NewReader(msg))
		resp.ContentLength = int64(len(msg))
		return resp, nil
	case err != nil:
		return nil, &NetworkError{URL: upstream, Target: t.url, Attempts: 1, Err: err}
	}
	resp.StatusCode, resp.Status, resp.ContentLength = http.StatusOK, "200 OK", fi.Size()
	resp.Body = f
	if req.Method == http.MethodHead {
		f.Close()
		resp.Body = http.NoBody
	}
	return resp, nil
}
