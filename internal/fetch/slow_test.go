package fetch

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// trickle answers with a large Content-Length and then one byte every
// interval until the client goes away: the attack the idle timeout misses.
func trickle(interval time.Duration) func(http.ResponseWriter, *http.Request, int) {
	return func(w http.ResponseWriter, r *http.Request, _ int) {
		w.Header().Set("Content-Length", "1000000")
		w.WriteHeader(http.StatusOK)
		for {
			if _, err := w.Write([]byte{'x'}); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(interval):
			}
		}
	}
}

// fetchWithin fetches u with o and fails the test unless it fails within
// limit; it returns the error.
func fetchWithin(t *testing.T, o Options, u string, limit time.Duration) error {
	t.Helper()
	f := newTestFetcher(t, o)
	start := time.Now()
	_, err := f.Fetch(context.Background(), Request{URL: u, Pinned: pin(strings.Repeat("0", 64))})
	if d := time.Since(start); d > limit {
		t.Fatalf("download ended after %s, want under %s (err %v)", d, limit, err)
	}
	if err == nil {
		t.Fatal("a trickled download succeeded")
	}
	tmp, _ := os.ReadDir(filepath.Join(f.cache.Dir(), "tmp"))
	if len(tmp) != 0 {
		t.Errorf("cache tmp holds %d leftovers", len(tmp))
	}
	return err
}

// An upstream trickling one byte every 50 ms behind the real squid: the
// minimum rate ends each attempt (the idle timeout never would), and the
// retries end with an error that says why.
func TestMinRateEndsTrickle(t *testing.T) {
	up := newUpstream(t, false, trickle(50*time.Millisecond))
	o := testOptions(t)
	o.IdleTimeout = time.Minute
	o.MinRate, o.MinRateTime = 1000, 300*time.Millisecond
	o.Retries = 2
	err := fetchWithin(t, o, up.URL+"/slow.tgz", 10*time.Second)
	var ne *NetworkError
	if !errors.As(err, &ne) || !errors.Is(err, errSlow) || ne.Attempts != 3 || !strings.Contains(err.Error(), "min-rate") {
		t.Fatalf("err = %v, want a NetworkError after 3 attempts, each too slow", err)
	}
	if !waitLog("/slow.tgz") {
		t.Error("the download did not go through squid")
	}
}

// With no minimum rate, the whole-download budget (fetch: retry-time) still
// ends a trickle in the middle of its first attempt.
func TestRetryTimeBoundsTheWholeDownload(t *testing.T) {
	up := newUpstream(t, false, trickle(20*time.Millisecond))
	o := testOptions(t)
	o.IdleTimeout = time.Minute
	o.MinRate = -1
	o.MaxRetryTime = 1500 * time.Millisecond
	err := fetchWithin(t, o, up.URL+"/slow.tgz", 6*time.Second)
	var ne *NetworkError
	if !errors.As(err, &ne) || !errors.Is(err, ErrRetryTime) || !strings.Contains(err.Error(), "retry-time") {
		t.Fatalf("err = %v, want the time budget named", err)
	}
}

// trickleProxy is a "proxy" that answers every request (a GET for a plain
// http URL, a CONNECT for https) by trickling its answer: the status line and
// headers one byte at a time, then the body.
func trickleProxy(t *testing.T, interval time.Duration) *url.URL {
	return fakeProxy(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		if _, err := http.ReadRequest(br); err != nil {
			return
		}
		answer := "HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n" + strings.Repeat("x", 1000000)
		for i := 0; i < len(answer); i++ {
			if _, err := c.Write([]byte{answer[i]}); err != nil {
				return
			}
			time.Sleep(interval)
		}
	})
}

// A proxy that trickles (headers or body, plain or CONNECT) cannot hold a
// download past its budget.
func TestTricklingProxy(t *testing.T) {
	for _, u := range []string{"http://upstream.example/a.tgz", "https://upstream.example/a.tgz"} {
		t.Run(u[:strings.Index(u, ":")], func(t *testing.T) {
			o := Options{
				Proxy:          trickleProxy(t, 30*time.Millisecond),
				ConnectTimeout: time.Minute, HeaderTimeout: time.Minute, IdleTimeout: time.Minute,
				MinRate: 1 << 20, MinRateTime: 500 * time.Millisecond,
				Retries: 100, Backoff: 10 * time.Millisecond, MaxRetryTime: 2 * time.Second,
			}
			err := fetchWithin(t, o, u, 8*time.Second)
			var ne *NetworkError
			if !errors.As(err, &ne) || !strings.Contains(err.Error(), u) {
				t.Fatalf("err = %v, want a NetworkError naming the URL", err)
			}
		})
	}
}
