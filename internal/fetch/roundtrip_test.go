package fetch

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A library's requests go through squid and the mirrors like downloads, are
// retried on 5xx, and get other answers as they are.
func TestTransport(t *testing.T) {
	up := newUpstream(t, false, func(w http.ResponseWriter, r *http.Request, n int) {
		switch {
		case r.URL.Path == "/flaky" && n == 1:
			http.Error(w, "busy", http.StatusServiceUnavailable)
		case r.URL.Path == "/flaky":
			w.Header().Set("Link", `<x>; rel="next"`)
			w.Write([]byte("answer " + r.Header.Get("Accept")))
		case r.URL.Path == "/down":
			http.Error(w, "down", http.StatusBadGateway)
		default:
			http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
		}
	})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "entry.json"), []byte(`{"x":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	o := testOptions(t)
	o.Retries = 1
	o.Mirrors = []Mirror{
		{Prefix: "https://rekor.sigstore.dev/", To: up.URL + "/"},
		{Prefix: "https://tuf.example/", To: "file://" + dir + "/"},
	}
	f := newTestFetcher(t, o)
	c := &http.Client{Transport: f.Transport()}
	get := func(u string, h http.Header) (*http.Response, string, error) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
		for k, v := range h {
			req.Header[k] = v
		}
		resp, err := c.Do(req)
		if err != nil {
			return nil, "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b), nil
	}

	resp, body, err := get("https://rekor.sigstore.dev/flaky", http.Header{"Accept": {"application/json"}})
	if err != nil || resp.StatusCode != 200 || body != "answer application/json" || resp.Header.Get("Link") == "" {
		t.Fatalf("retried request: %v %v %q", err, resp, body)
	}
	if !waitLog("GET "+up.URL+"/flaky") || up.header(1).Get("User-Agent") != "updeb" {
		t.Errorf("not through squid with the user agent: %s", proxy.Log())
	}
	if resp, _, err := get("https://rekor.sigstore.dev/missing", nil); err != nil || resp.StatusCode != 404 {
		t.Errorf("404: %v %v", resp, err)
	}
	_, _, err = get("https://rekor.sigstore.dev/down", nil)
	var ne *NetworkError
	if !errors.As(err, &ne) || ne.Attempts != 2 || !strings.Contains(err.Error(), "502") {
		t.Errorf("5xx after retries: %v", err)
	}
	if resp, body, err := get("https://tuf.example/entry.json", nil); err != nil || resp.StatusCode != 200 || body != `{"x":1}` || resp.ContentLength != 7 {
		t.Errorf("file mirror: %v %v %q", resp, err, body)
	}
	if resp, body, err := get("https://tuf.example/nothing.json", nil); err != nil || resp.StatusCode != 404 || !strings.Contains(body, "no such file in the mirror") {
		t.Errorf("file mirror miss: %v %v %q", resp, err, body)
	}
	if _, err := c.Post("https://rekor.sigstore.dev/x", "text/plain", nil); err == nil {
		t.Error("POST was sent")
	}

	o.Offline = true
	off := &http.Client{Transport: newTestFetcher(t, o).Transport()}
	_, err = off.Get("https://rekor.sigstore.dev/flaky")
	var oe *OfflineError
	if !errors.As(err, &oe) || oe.Missing[0] != "https://rekor.sigstore.dev/flaky" {
		t.Errorf("offline: %v", err)
	}
}

// A library's request answered 503 with an error page that never comes
// ends at the idle timeout and is retried: under a caller's context without
// a deadline it waited for the page for good.
func TestTransportStalledErrorPage(t *testing.T) {
	up := newUpstream(t, false, func(w http.ResponseWriter, r *http.Request, n int) {
		stallIn(w, r, http.StatusServiceUnavailable, "busy")
	})
	o := testOptions(t)
	o.Retries = 1
	f := newTestFetcher(t, o)
	// A bound for the test only: the fetcher's own timeouts must end it first.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, up.URL+"/x", nil)
	_, err := (&http.Client{Transport: f.Transport()}).Do(req)
	var ne *NetworkError
	var se *StatusError
	if !errors.As(err, &ne) || ne.Attempts != 2 || !errors.As(err, &se) || se.StatusCode != http.StatusServiceUnavailable || se.Body != "busy" {
		t.Fatalf("err = %v, want a NetworkError after 2 attempts answered 503 with the start of its page", err)
	}
}
