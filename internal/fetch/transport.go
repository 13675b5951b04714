package fetch

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/updeb/updeb/internal/srcurl"
	"github.com/updeb/updeb/pkg/weblink"
)

// maxRedirects is how many redirects one download may follow.
const maxRedirects = 10

// newClient builds the one HTTP client of a Fetcher: the proxy for every request
// (redirects included, since the transport asks proxyFor on each), verified TLS,
// connect and header timeouts, no transparent decompression (we want the bytes
// the upstream publishes), and the redirect policy.
func newClient(o *Options) *http.Client {
	rt := o.Transport
	if rt == nil {
		d := &net.Dialer{Timeout: o.ConnectTimeout, KeepAlive: 30 * time.Second}
		rt = &http.Transport{
			Proxy:                  proxyFunc(o.Proxy, o.NoProxy),
			DialContext:            dialProxyAnswer(d, o.Proxy, o.HeaderTimeout),
			TLSClientConfig:        &tls.Config{RootCAs: o.RootCAs, MinVersion: tls.VersionTLS12},
			TLSHandshakeTimeout:    o.ConnectTimeout,
			ResponseHeaderTimeout:  o.HeaderTimeout,
			ExpectContinueTimeout:  time.Second,
			DisableCompression:     true,
			ForceAttemptHTTP2:      true,
			MaxIdleConnsPerHost:    max(o.Parallel, 2),
			IdleConnTimeout:        90 * time.Second,
			OnProxyConnectResponse: connectRefused,
		}
	}
	return &http.Client{Transport: redirectPages{rt, o.IdleTimeout}, CheckRedirect: checkRedirect}
}

// maxRedirectPage is how much of a redirect's page Go's client reads before
// it follows the redirect (so that the connection can be used again).
const maxRedirectPage = 2 << 10

// redirectPages reads a redirect's page itself, ended (as a download's body
// is) when no byte of it arrives for idle, and hands the client none to
// read: the client reads it under the request's context alone, the whole
// retry budget for a download, so a redirect whose page stalled held the
// attempt until the budget was spent. A stalled page is given up and the
// redirect followed all the same.
type redirectPages struct {
	rt   http.RoundTripper
	idle time.Duration
}

func (t redirectPages) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(req.Context())
	resp, err := t.rt.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	if !followed(resp) {
		resp.Body = cancelOnClose{resp.Body, cancel}
		return resp, nil
	}
	if resp.ContentLength == -1 || resp.ContentLength <= maxRedirectPage {
		idle := time.AfterFunc(t.idle, cancel)
		io.CopyN(io.Discard, &idleReader{r: resp.Body, timer: idle, d: t.idle}, maxRedirectPage)
		idle.Stop()
	}
	resp.Body.Close()
	cancel()
	resp.Body = http.NoBody
	return resp, nil
}

// followed reports whether the client follows resp, a redirect.
func followed(resp *http.Response) bool {
	switch resp.StatusCode {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return resp.Header.Get("Location") != ""
	}
	return false
}

// CloseIdleConnections closes the transport's (Fetcher.Close).
func (t redirectPages) CloseIdleConnections() {
	if c, ok := t.rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > maxRedirects {
		return ErrTooManyRedirects
	}
	prev := via[len(via)-1].URL
	if s := req.URL.Scheme; s != "http" && s != "https" {
		return fmt.Errorf("%w: %s -> %s", ErrRedirectScheme, redact(prev), redact(req.URL))
	}
	if req.URL.Hostname() == "" || !srcurl.ValidPort(req.URL.Port()) {
		return fmt.Errorf("%w: %s -> %s (no host name, or a port outside 1-65535)", ErrBadRedirect, redact(prev), redact(req.URL))
	}
	if prev.Scheme == "https" && req.URL.Scheme != "https" {
		return &DowngradeError{From: redact(prev), To: redact(req.URL)}
	}
	dropCredentialsOffOrigin(req, via)
	// Go's client sends the URL before as Referer, query and all: a
	// pre-signed URL's signature would reach the host it redirects to.
	req.Header.Del("Referer")
	return nil
}

// dropCredentialsOffOrigin leaves the caller's credentials (a GITHUB_TOKEN)
// out of a redirected request once the redirects have left the origin of
// the URL they were given for. Go's client keeps them for the same host
// name on another port, and for its subdomains: a redirect from the API to
// 127.0.0.1:OTHER, or to anything.api.example, got the token.
func dropCredentialsOffOrigin(req *http.Request, via []*http.Request) {
	origin := via[0].URL
	left := !weblink.SameOrigin(req.URL, origin)
	for _, r := range via[1:] {
		left = left || !weblink.SameOrigin(r.URL, origin)
	}
	if !left {
		return
	}
	for k := range req.Header {
		if slices.Contains(credentialHeaders, http.CanonicalHeaderKey(k)) {
			delete(req.Header, k)
		}
	}
}

// connectRefused turns a proxy's answer other than 200 to a CONNECT into a
// *ProxyRefusedError (net/http's error holds only the status text, and
// would be retried like a network failure).
func connectRefused(_ context.Context, proxy *url.URL, req *http.Request, resp *http.Response) error {
	if resp.StatusCode == http.StatusOK {
		return nil
	}
	return &ProxyRefusedError{Proxy: redact(proxy), Host: req.Host, StatusCode: resp.StatusCode, Status: resp.Status,
		Challenges: resp.Header.Values("Proxy-Authenticate")}
}

// dialProxyAnswer dials with d, and bounds the wait for the proxy's first
// answer on a connection to it by headerTimeout: net/http waits for the
// answer to a CONNECT up to a minute, or the request's context (the whole
// retry budget), whatever its ResponseHeaderTimeout says.
func dialProxyAnswer(d *net.Dialer, proxy *url.URL, headerTimeout time.Duration) func(context.Context, string, string) (net.Conn, error) {
	proxyAddr := ""
	if proxy != nil {
		proxyAddr = net.JoinHostPort(proxy.Hostname(), weblink.Port(proxy))
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil || addr != proxyAddr {
			return c, err
		}
		return &answerConn{Conn: c, d: headerTimeout, header: proxy.Scheme == "http"}, nil
	}
}

// answerConn is a connection to the proxy that must answer its first
// request (a CONNECT, or a plain http request) within d: the whole header
// of the answer when it comes in plain http (a proxy that sent its first
// byte and dripped the rest held the attempt for net/http's minute), its
// first byte when the proxy speaks TLS (the handshake has its own timeout).
type answerConn struct {
	net.Conn
	d               time.Duration
	wrote, answered atomic.Bool
	header          bool   // the proxy speaks plain http: the answer's header is waited for whole
	tail            []byte // the last bytes of the header so far: the blank line that ends it may span two reads
}

// answerEnds says whether the answer's header (or first byte) is in once b
// has come.
func (c *answerConn) answerEnds(b []byte) bool {
	if !c.header {
		return len(b) > 0
	}
	seen := append(c.tail, b...)
	if bytes.Contains(seen, []byte("\n\n")) || bytes.Contains(seen, []byte("\n\r\n")) {
		return true
	}
	c.tail = bytes.Clone(seen[max(0, len(seen)-2):])
	return false
}

func (c *answerConn) Write(b []byte) (int, error) {
	if !c.wrote.Swap(true) {
		c.SetReadDeadline(time.Now().Add(c.d))
	}
	return c.Conn.Write(b)
}

func (c *answerConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if !c.answered.Load() {
		switch {
		case c.answerEnds(b[:n]):
			c.answered.Store(true)
			c.SetReadDeadline(time.Time{})
		case errors.Is(err, os.ErrDeadlineExceeded):
			err = fmt.Errorf("the proxy %s sent no answer within the header timeout (%s, fetch: timeouts: header): %w", c.RemoteAddr(), c.d, err)
		}
	}
	return n, err
}

// proxyFunc returns the transport's proxy chooser: proxy for every request
// unless its host matches noProxy. A nil proxy means direct connections.
func proxyFunc(proxy *url.URL, noProxy []string) func(*http.Request) (*url.URL, error) {
	return func(req *http.Request) (*url.URL, error) {
		if proxy == nil || matchNoProxy(noProxy, req.URL) {
			return nil, nil
		}
		return proxy, nil
	}
}

// matchNoProxy reports whether u's host is exempt from the proxy. Entries follow
// curl's NO_PROXY: "*" matches everything; "example.com" and ".example.com"
// (and "example.com.") match that domain and its subdomains; an IP address or
// CIDR block matches literal addresses; "host:port" matches that port only.
// A URL's host written with its root's trailing dot ("mirror.internal.") is
// matched without it, as curl does.
func matchNoProxy(entries []string, u *url.URL) bool {
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	port := weblink.Port(u)
	ip := net.ParseIP(host)
	for _, e := range entries {
		e = strings.ToLower(strings.TrimSpace(e))
		if e == "" {
			continue
		}
		if e == "*" {
			return true
		}
		if _, cidr, err := net.ParseCIDR(e); err == nil {
			if ip != nil && cidr.Contains(ip) {
				return true
			}
			continue
		}
		eh, ep := e, ""
		if h, p, err := net.SplitHostPort(e); err == nil {
			eh, ep = h, p
		}
		if ep != "" && ep != port {
			continue
		}
		if eip := net.ParseIP(strings.Trim(eh, "[]")); eip != nil {
			if ip != nil && eip.Equal(ip) {
				return true
			}
			continue
		}
		eh = strings.TrimSuffix(strings.TrimPrefix(eh, "."), ".") // curl ignores a trailing dot too
		if eh == "" {
			continue
		}
		if host == eh || strings.HasSuffix(host, "."+eh) {
			return true
		}
	}
	return false
}

// ProxyOf returns the proxy a request to u goes through, nil for a direct
// connection: no proxy, a host NoProxy lists, or Options.Transport in
// place of the built-in one. A caller that may send a credential over plain
// http to this machine asks it: through a proxy elsewhere, it crosses the
// network all the same.
func (f *Fetcher) ProxyOf(u *url.URL) *url.URL {
	if f.o.Transport != nil || f.o.Proxy == nil || matchNoProxy(f.o.NoProxy, u) {
		return nil
	}
	return f.o.Proxy
}

// proxyFor returns the proxy a request to u uses, its password hidden (""
// for direct).
func (f *Fetcher) proxyFor(u *url.URL) string {
	if p := f.ProxyOf(u); p != nil {
		return redact(p)
	}
	return ""
}

// redact hides a password in a proxy URL, and the signature of a pre-signed
// URL a redirect led to, before it reaches a log or an error.
func redact(u *url.URL) string { return srcurl.Redact(u.String()) }

// do sends req with the client. An error names the URL the redirects had
// reached: a pre-signed one's signature is hidden (redact).
func (f *Fetcher) do(req *http.Request) (*http.Response, error) {
	resp, err := f.client.Do(req)
	if ue, ok := errors.AsType[*url.Error](err); ok {
		ue.URL = srcurl.Redact(ue.URL)
		// net/http's words for a Location it cannot parse: the same
		// Location comes at every try.
		if strings.HasPrefix(ue.Err.Error(), "failed to parse Location header") {
			ue.Err = fmt.Errorf("%w: %w", ErrBadRedirect, ue.Err)
		}
	}
	return resp, err
}

// proxyAttempts is how many times a request is made while nothing answers at
// the proxy: 1 + 2 retries, Options.Backoff then twice that apart (3 s in all
// with the default backoff), enough for a proxy being restarted.
const proxyAttempts = 3

// proxyUnreachable reports whether err is a failure to connect to the proxy
// itself (refused, no route, unknown host), not to the host behind it.
func proxyUnreachable(err error) bool {
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Op != "proxyconnect" {
		return false
	}
	var dns *net.DNSError
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EHOSTUNREACH) ||
		errors.Is(err, syscall.ENETUNREACH) || errors.As(err, &dns)
}

// proxyNotTLS reports whether err is the TLS handshake with the proxy
// itself meeting an answer in plain http.
func proxyNotTLS(err error) bool {
	var oe *net.OpError
	var rh tls.RecordHeaderError
	return errors.As(err, &oe) && oe.Op == "proxyconnect" && errors.As(err, &rh)
}

// isRetryable reports whether a transport error may go away by trying again.
func isRetryable(err error) bool {
	var de *DowngradeError
	var se *SizeError
	var pe *ProxyRefusedError
	switch {
	case errors.As(err, &de), errors.As(err, &se), errors.Is(err, ErrTooManyRedirects), errors.Is(err, ErrRedirectScheme), errors.Is(err, ErrBadRedirect):
		return false
	case errors.As(err, &pe):
		return retryableStatus(pe.StatusCode)
	case strings.Contains(err.Error(), "server response headers exceeded"):
		return false // net/http's MaxResponseHeaderBytes: the same headers come every time
	}
	var ce *tls.CertificateVerificationError
	return !errors.As(err, &ce)
}
