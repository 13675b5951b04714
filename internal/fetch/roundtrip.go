package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"strings"
	"time"
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
	tu, err := t.f.smallTarget(upstream)
	if err != nil {
		return nil, err
	}
	if tu.Scheme == "file" {
		return mirrorResponse(req, tu.Path)
	}
	var resp *http.Response
	err = t.f.retry(req.Context(), upstream, tu, func(ctx context.Context) (bool, time.Duration, error) {
		out, err := http.NewRequestWithContext(ctx, req.Method, tu.String(), nil)
		if err != nil {
			return false, 0, err
		}
		for k, v := range req.Header {
			out.Header[k] = v
		}
		if out.Header.Get("User-Agent") == "" {
			out.Header.Set("User-Agent", t.f.o.UserAgent)
		}
		r, err := t.f.client.Do(out)
		if err != nil {
			return isRetryable(err), 0, err
		}
		if r.StatusCode >= 500 || r.StatusCode == http.StatusTooManyRequests || r.StatusCode == http.StatusRequestTimeout {
			defer r.Body.Close()
			return statusFailure(r, t.f.now())
		}
		resp = r
		return false, 0, nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// mirrorResponse answers req from a file of a file:// mirror.
func mirrorResponse(req *http.Request, path string) (*http.Response, error) {
	resp := &http.Response{Request: req, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: http.Header{}}
	f, err := os.Open(path)
	if err == nil {
		fi, serr := f.Stat()
		switch {
		case serr != nil:
			f.Close()
			err = serr
		case !fi.Mode().IsRegular():
			f.Close()
			err = fs.ErrNotExist
		default:
			resp.StatusCode, resp.Status, resp.ContentLength = http.StatusOK, "200 OK", fi.Size()
			resp.Body = f
			if req.Method == http.MethodHead {
				f.Close()
				resp.Body = http.NoBody
			}
			return resp, nil
		}
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, &NetworkError{URL: req.URL.String(), Target: "file://" + path, Attempts: 1, Err: err}
	}
	msg := "404 Not Found (no such file in the mirror: " + path + ")"
	resp.StatusCode, resp.Status = http.StatusNotFound, msg
	resp.Body = io.NopCloser(strings.NewReader(msg))
	resp.ContentLength = int64(len(msg))
	return resp, nil
}
