package fetch

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/testkit/squid"
)

func TestExistsAndGet(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/signed": // like a signed object-store URL: GET only
			if r.Method == http.MethodHead {
				w.WriteHeader(http.StatusForbidden)
				return
			}
			if r.Header.Get("Range") != "bytes=0-0" {
				t.Errorf("probe without a one-byte range: %q", r.Header.Get("Range"))
			}
			w.WriteHeader(http.StatusPartialContent)
			w.Write([]byte("x"))
		case "/plain":
			w.Write([]byte("0123456789"))
		case "/broken":
			w.WriteHeader(http.StatusInternalServerError)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	f, err := New(t.TempDir(), Options{Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for path, want := range map[string]bool{"/signed": true, "/plain": true, "/absent": false} {
		if ok, err := f.Exists(ctx, srv.URL+path); ok != want || err != nil {
			t.Errorf("Exists(%s) = %v, %v; want %v", path, ok, err, want)
		}
	}
	var se *StatusError
	if _, err := f.Exists(ctx, srv.URL+"/broken"); !errors.As(err, &se) || se.StatusCode != 500 {
		t.Errorf("Exists(/broken) err = %v, want a 500 StatusError", err)
	}
	if b, err := f.Get(ctx, srv.URL+"/plain", nil, 10); string(b) != "0123456789" || err != nil {
		t.Errorf("Get = %q, %v", b, err)
	}
	var size *SizeError
	if _, err := f.Get(ctx, srv.URL+"/plain", nil, 9); !errors.As(err, &size) {
		t.Errorf("Get over the cap: err = %v, want a SizeError", err)
	}
	if _, err := f.Get(ctx, srv.URL+"/absent", nil, 0); !errors.As(err, &se) || se.StatusCode != 404 {
		t.Errorf("Get(/absent) err = %v, want a 404 StatusError", err)
	}
}

// A release listing asked for through a caching proxy is upstream's as it
// is now: squid kept a listing last changed a month ago fresh for days
// (its default refresh_pattern), and a release published since went unseen
// by outdated and bump until it expired.
func TestGetAsksFreshThroughACachingProxy(t *testing.T) {
	sq := squid.CachingForTest(t)
	month := time.Now().Add(-30 * 24 * time.Hour).UTC().Format(http.TimeFormat)
	up := newUpstream(t, false, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Last-Modified", month)
		if n == 1 {
			w.Write([]byte("hello-1.0.tar.gz\n"))
			return
		}
		w.Write([]byte("hello-1.0.tar.gz\nhello-1.1.tar.gz\n"))
	})
	o := testOptions(t)
	o.Proxy, _ = url.Parse(sq.URL)
	f := newTestFetcher(t, o)
	for i, want := range []string{"hello-1.0.tar.gz\n", "hello-1.0.tar.gz\nhello-1.1.tar.gz\n"} {
		if b, err := f.Get(context.Background(), up.URL+"/hello/", nil, 0); err != nil || string(b) != want {
			t.Errorf("listing %d: %q, %v; want %q", i+1, b, err, want)
		}
	}
}

// An API answer or a listing is asked for as it is (Accept-Encoding:
// identity), as a download is, through Get and Transport alike: a server
// that may compress when nothing is said (RFC 9110 12.5.3) sent gzip that
// the JSON reader choked on.
func TestSmallAsksForTheBytesAsTheyAre(t *testing.T) {
	const doc = `{"tag_name":"v1.2.3"}`
	up := newUpstream(t, false, func(w http.ResponseWriter, r *http.Request, _ int) {
		if r.Header.Get("Accept-Encoding") != "identity" {
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(gzipped([]byte(doc)))
			return
		}
		w.Write([]byte(doc))
	})
	f := newTestFetcher(t, testOptions(t))
	if b, err := f.Get(t.Context(), up.URL+"/latest", nil, 0); string(b) != doc || err != nil {
		t.Errorf("Get = %q, %v; want %s", b, err, doc)
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, up.URL+"/latest", nil)
	resp, err := (&http.Client{Transport: f.Transport()}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if b, _ := io.ReadAll(resp.Body); string(b) != doc {
		t.Errorf("Transport answered %q, want %s", b, doc)
	}
}
