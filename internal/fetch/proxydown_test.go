package fetch

import (
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/testkit/testenv"
)

// TestProxyUnreachable: with nothing listening at the proxy, a download
// fails after 3 quick attempts (not the 1 + Retries of a flaky upstream),
// names the proxy and wraps ErrProxyUnreachable.
func TestProxyUnreachable(t *testing.T) {
	o := testOptions(t)
	dead := deadAddr(t)
	o.Proxy, _ = url.Parse("http://" + dead)
	o.Retries = 50
	f := newTestFetcher(t, o)
	_, err := f.Fetch(context.Background(), Request{URL: "https://example.org/x", AllowUnpinned: true})
	var ne *NetworkError
	if !errors.As(err, &ne) || ne.Attempts != proxyAttempts || !errors.Is(err, ErrProxyUnreachable) || ne.Proxy != "http://"+dead {
		t.Fatalf("err = %v: want a NetworkError naming the proxy after %d attempts, wrapping ErrProxyUnreachable", err, proxyAttempts)
	}
}

// A proxy named https:// that speaks plain http (squid, as most proxies:
// HTTPS_PROXY=https://proxy:3128 is a common slip) fails at the first
// attempt, wrapping ErrProxyNotTLS, for https and http URLs alike: it was
// retried 6 times over 20 s, then blamed on the proxy's reach.
func TestProxyNotTLS(t *testing.T) {
	o := testOptions(t)
	o.Proxy.Scheme = "https"
	o.Retries = 5
	f := newTestFetcher(t, o)
	for _, u := range []string{"https://example.org/x", "http://example.org/x"} {
		_, err := f.Fetch(context.Background(), Request{URL: u, AllowUnpinned: true})
		var ne *NetworkError
		if !errors.As(err, &ne) || ne.Attempts != 1 || !errors.Is(err, ErrProxyNotTLS) {
			t.Errorf("%s: err = %v: want a NetworkError after 1 attempt, wrapping ErrProxyNotTLS", u, err)
		}
	}
}

// TestProxyRestarting: a proxy that listens again after the first refusal
// (restarted) serves the download. Its port is forwarded to squid.
func TestProxyRestarting(t *testing.T) {
	body, sha := payload(5000, 9)
	up := newUpstream(t, false, serveBytes(body))
	o := testOptions(t)
	squidAddr := o.Proxy.Host
	addr := deadAddr(t)
	o.Proxy, _ = url.Parse("http://" + addr)
	o.Backoff = 300 * time.Millisecond
	f := newTestFetcher(t, o)
	var refused sync.Once
	started := make(chan struct{})
	f.sleep = func(ctx context.Context, d time.Duration) error {
		refused.Do(func() { go forward(t, addr, squidAddr, started); <-started })
		return sleepCtx(ctx, d)
	}
	res, err := f.Fetch(context.Background(), Request{URL: up.URL + "/x", Pinned: pin(sha)})
	if err != nil || res.Size != int64(len(body)) {
		t.Fatalf("through a restarted proxy: %v", err)
	}
}

// deadAddr is a 127.0.0.1 address nothing listens on (a moment ago).
func deadAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// forward listens on addr and copies every connection to and from to.
func forward(t *testing.T, addr, to string, started chan<- struct{}) {
	l, err := net.Listen("tcp", addr)
	close(started)
	if err != nil {
		t.Error(err)
		return
	}
	t.Cleanup(func() { l.Close() })
	testenv.Serve(l, func(c net.Conn) {
		s, err := net.Dial("tcp", to)
		if err != nil {
			return
		}
		defer s.Close()
		go io.Copy(s, c)
		io.Copy(c, s)
	})
}
