package fetch

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/testkit/testenv"
)

// fakeProxy is a proxy on 127.0.0.1 that serves each connection with
// handle until t ends. It returns the proxy's URL, with credentials.
func fakeProxy(t *testing.T, handle func(net.Conn)) *url.URL {
	u, _ := url.Parse("http://alice:s3cret@" + testenv.Listen(t, handle))
	return u
}

// refusingProxy is a proxy that answers every request (a CONNECT for https,
// a GET for http) with status and a Proxy-Authenticate header for each
// challenge, as a proxy does that wants credentials (407) or whose rules
// forbid the host (403). It counts the requests.
func refusingProxy(t *testing.T, status string, challenges ...string) (*url.URL, *atomic.Int32) {
	var n atomic.Int32
	head := "HTTP/1.1 " + status + "\r\n"
	for _, c := range challenges {
		head += "Proxy-Authenticate: " + c + "\r\n"
	}
	u := fakeProxy(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			if _, err := http.ReadRequest(br); err != nil {
				return
			}
			n.Add(1)
			c.Write([]byte(head + "Content-Length: 0\r\n\r\n"))
		}
	})
	return u, &n
}

// A proxy that refuses the CONNECT for lack of credentials (407) or by its
// rules (403) answers the same to every retry: the download fails at once,
// as the same answer to a plain http request does, and does not send
// refused credentials again and again (an account that a directory locks
// after a few failed logins). The error names the proxy (without the
// password), the host and the answer. A 5xx CONNECT answer (the proxy could
// not reach the host) is still retried.
func TestProxyRefusesConnect(t *testing.T) {
	for _, tc := range []struct {
		status, url string
		attempts    int
		want        string
	}{
		{"407 Proxy Authentication Required", "https://up.example/a.tgz", 1, `proxy http://alice:xxxxx@ADDR answered the CONNECT to up.example:443 with "407 Proxy Authentication Required"`},
		{"403 Forbidden", "https://up.example/a.tgz", 1, `proxy http://alice:xxxxx@ADDR answered the CONNECT to up.example:443 with "403 Forbidden"`},
		{"407 Proxy Authentication Required", "http://up.example/a.tgz", 1, `http://up.example/a.tgz answered "407 Proxy Authentication Required"`},
		{"503 Service Unavailable", "https://up.example/a.tgz", 4, `answered the CONNECT to up.example:443 with "503 Service Unavailable"`},
	} {
		t.Run(tc.status+" "+tc.url[:strings.Index(tc.url, ":")], func(t *testing.T) {
			p, n := refusingProxy(t, tc.status, `Basic realm="proxy"`)
			f := newTestFetcher(t, Options{Proxy: p, Retries: 3, Backoff: 10 * time.Millisecond})
			_, err := f.Fetch(context.Background(), Request{URL: tc.url, Pinned: pin(strings.Repeat("0", 64))})
			var ne *NetworkError
			want := strings.ReplaceAll(tc.want, "ADDR", p.Host)
			if !errors.As(err, &ne) || ne.Attempts != tc.attempts || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "s3cret") {
				t.Fatalf("err = %v\nwant a NetworkError after %d attempt(s) with %s", err, tc.attempts, want)
			}
			if int(n.Load()) != tc.attempts {
				t.Errorf("the proxy was asked %d times, want %d", n.Load(), tc.attempts)
			}
		})
	}
}

// A proxy that takes the connection and the CONNECT but never answers it
// (a hung authentication helper, an overloaded proxy) fails each attempt
// after the header timeout, saying so, not after net/http's minute or the
// whole retry budget.
func TestProxyNeverAnswersConnect(t *testing.T) {
	var n atomic.Int32
	p := fakeProxy(t, func(c net.Conn) {
		if _, err := http.ReadRequest(bufio.NewReader(c)); err == nil {
			n.Add(1)
			io.Copy(io.Discard, c) // until the client gives up
		}
	})
	f := newTestFetcher(t, Options{Proxy: p, HeaderTimeout: 200 * time.Millisecond, Retries: 1, Backoff: 10 * time.Millisecond, MaxRetryTime: 10 * time.Second})
	start := time.Now()
	_, err := f.Fetch(context.Background(), Request{URL: "https://up.example/a.tgz", Pinned: pin(strings.Repeat("0", 64))})
	var ne *NetworkError
	if !errors.As(err, &ne) || ne.Attempts != 2 || !strings.Contains(err.Error(), "sent no answer within the header timeout (200ms") || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("err = %v\nwant a NetworkError after 2 attempts saying the proxy did not answer within the header timeout", err)
	}
	if d := time.Since(start); d > 3*time.Second || n.Load() != 2 {
		t.Errorf("took %s for %d CONNECTs, want 2 of about 200ms each", d, n.Load())
	}
}

// A 407 whose Proxy-Authenticate offers no Basic (Negotiate, NTLM: a
// Windows domain's proxy) can never take the credentials of the proxy URL,
// which are sent as Basic: the error carries the challenges, and
// BasicRefused says so (the CLI's hint then points at a local proxy that
// logs in, not at the password).
func TestProxyWantsAnotherScheme(t *testing.T) {
	for _, tc := range []struct {
		challenges []string
		refused    bool
	}{
		{[]string{"Negotiate", "NTLM"}, true},
		{[]string{"Negotiate, NTLM"}, true},
		{[]string{`Digest realm="p", nonce="x", qop="auth"`}, true},
		{[]string{"Negotiate", `Basic realm="proxy"`}, false},
		{[]string{`Digest realm="p", nonce="x", basic realm="proxy"`}, false},
		{nil, false}, // nothing said: the credentials may be what is wrong
	} {
		p, _ := refusingProxy(t, "407 Proxy Authentication Required", tc.challenges...)
		f := newTestFetcher(t, Options{Proxy: p, Retries: -1})
		_, err := f.Fetch(context.Background(), Request{URL: "https://up.example/a.tgz", Pinned: pin(strings.Repeat("0", 64))})
		pe, ok := errors.AsType[*ProxyRefusedError](err)
		if !ok || !slices.Equal(pe.Challenges, tc.challenges) || BasicRefused(pe.Challenges) != tc.refused {
			t.Errorf("challenges %q: err = %v (%+v), want them carried and BasicRefused %v", tc.challenges, err, pe, tc.refused)
		}
	}
}

// A proxy that answers the CONNECT one byte at a time (a header that never
// ends) fails each attempt after the header timeout, as one that never
// answers does: the first byte of its answer no longer lifts the timeout
// for the rest of it, which held each attempt for net/http's minute.
func TestProxyDripsItsAnswer(t *testing.T) {
	var n atomic.Int32
	p := fakeProxy(t, func(c net.Conn) {
		if _, err := http.ReadRequest(bufio.NewReader(c)); err == nil {
			n.Add(1)
			c.Write([]byte("HTTP/1.1 200 Connection established\r\nX-Drip: "))
			for {
				if _, err := c.Write([]byte("x")); err != nil {
					return // the client gave up
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
	})
	f := newTestFetcher(t, Options{Proxy: p, HeaderTimeout: 300 * time.Millisecond, Retries: 1, Backoff: 10 * time.Millisecond, MaxRetryTime: 20 * time.Second})
	_, err := f.Fetch(context.Background(), Request{URL: "https://up.example/a.tgz", Pinned: pin(strings.Repeat("0", 64))})
	var ne *NetworkError
	if !errors.As(err, &ne) || ne.Attempts != 2 || !strings.Contains(err.Error(), "within the header timeout (300ms") || n.Load() != 2 {
		t.Fatalf("err = %v after %d CONNECTs\nwant a NetworkError after 2 attempts saying the proxy did not answer within the header timeout", err, n.Load())
	}
}
