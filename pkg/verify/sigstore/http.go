package sigstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/updeb/updeb/pkg/weblink"
)

// get fetches u through the caller's client, within Options.Timeout (the body
// included), and returns at most max bytes of a 200 answer. A 404 is returned
// as a status with no error: the caller decides what absence means. A larger
// body is refused (*RefusedError, ReasonMalformed); a network failure, a
// timeout, a body cut short, or any other status is a *FetchError.
func (v *Verifier) get(ctx context.Context, subject, u string, h http.Header, max int64) ([]byte, int, error) {
	return v.getWith(ctx, subject, u, h, max, nil)
}

// getWith is get, calling onResponse (when set) with a 200 or 404 response.
func (v *Verifier) getWith(ctx context.Context, subject, u string, h http.Header, max int64, onResponse func(*http.Response)) ([]byte, int, error) {
	shown := weblink.RedactQuery(u) // a bundle_url is pre-signed: its signature is never printed
	if v.o.HTTPClient == nil {
		return nil, 0, fmt.Errorf("%w: no HTTPClient in Options: %s cannot be asked", ErrPolicy, shown)
	}
	ctx, cancel := context.WithTimeout(ctx, v.o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, 0, &FetchError{URL: shown, Err: redactURLError(err)}
	}
	for k, vs := range h {
		req.Header[k] = vs
	}
	if v.o.UserAgent != "" {
		req.Header.Set("User-Agent", v.o.UserAgent)
	}
	resp, err := v.o.HTTPClient.Do(req)
	if err != nil {
		return nil, 0, &FetchError{URL: shown, Err: timeoutNote(ctx, redactURLError(err), v)}
	}
	defer resp.Body.Close()
	if onResponse != nil && (resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusNotFound) {
		onResponse(resp)
	}
	switch {
	case resp.StatusCode == http.StatusNotFound && resp.Header.Get(MirrorMissingHeader) != "":
		return nil, resp.StatusCode, &FetchError{URL: shown, Status: resp.StatusCode, Err: fmt.Errorf("%w: %s", ErrNotMirrored, resp.Header.Get(MirrorMissingHeader))}
	case resp.StatusCode == http.StatusNotFound:
		return nil, resp.StatusCode, nil
	case resp.StatusCode != http.StatusOK:
		snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, resp.StatusCode, &FetchError{URL: shown, Status: resp.StatusCode, Err: errors.New(statusNote(resp, snippet, v.o.GitHubToken, req.Header.Get("Authorization") != ""))}
	case resp.ContentLength > max:
		return nil, resp.StatusCode, refuse(subject, ReasonMalformed, shown, "response of %d bytes is larger than the %d this service ever needs", resp.ContentLength, max)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, resp.StatusCode, &FetchError{URL: shown, Status: resp.StatusCode, Err: fmt.Errorf("reading the response: %w", timeoutNote(ctx, err, v))}
	}
	if int64(len(b)) > max {
		return nil, resp.StatusCode, refuse(subject, ReasonMalformed, shown, "response larger than the %d bytes this service ever needs", max)
	}
	return b, resp.StatusCode, nil
}

// redactURLError hides the signature of the URL a *url.Error names (the
// client's errors name the request's URL, or where its redirects led).
func redactURLError(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		ue.URL = weblink.RedactQuery(ue.URL)
	}
	return err
}

func timeoutNote(ctx context.Context, err error, v *Verifier) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("no complete answer within %s: %w", v.o.Timeout, err)
	}
	return err
}

// statusNote is the status of an answer other than 200 or 404, with what
// it means and the start of its body (token hidden). sent says whether the
// request carried the token: a 401 or 403 of a request without it (a
// bundle's pre-signed storage URL that expired, Rekor, a TUF repository)
// is no reason to check the token.
func statusNote(resp *http.Response, body []byte, token string, sent bool) string {
	s := resp.Status
	switch {
	case resp.Header.Get("X-RateLimit-Remaining") == "0" && sent:
		s += " (rate limit reached: the GitHub token's quota is spent, wait for it to reset)"
	case resp.Header.Get("X-RateLimit-Remaining") == "0":
		s += " (rate limit reached: wait, or set a GitHub token)"
	case (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) && sent:
		s += " (access denied: check the token)"
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		s += " (access denied)"
	}
	if t := strings.TrimSpace(strings.ToValidUTF8(string(body), "?")); t != "" {
		if len(token) >= 8 { // a server that quotes the token back does not get it printed (a typo such as "x" is no token)
			t = strings.ReplaceAll(t, token, "xxxxx")
		}
		s += ": " + t
	}
	return s
}
