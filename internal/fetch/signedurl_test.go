package fetch

import (
	"bytes"
	"context"
	"crypto/x509"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

// TestSignedRedirectNotPrinted: a release redirects to a pre-signed URL of
// an object store, which downloads for anyone holding it until it
// expires. An error or a log line that names it hides its signature,
// credential and token (the rest of it stays, to tell what was asked): a
// 403 or a 503 of the store, a connection it cuts, a redirect from it to
// plain http or to another scheme; by Fetch, Get, Exists and Transport,
// through squid.
func TestSignedRedirectNotPrinted(t *testing.T) {
	const signed = "?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAEXAMPLE%2F20260101&X-Amz-Signature=d34db33f&sig=c2lnbmF0&jwt=eyJh.eyJi.c2ln"
	secrets := []string{"AKIAEXAMPLE", "d34db33f", "c2lnbmF0", "eyJh"}
	plain := newUpstream(t, false, serveBytes([]byte("x")))
	store := newUpstream(t, true, func(w http.ResponseWriter, r *http.Request, _ int) {
		switch r.URL.Path {
		case "/expired":
			http.Error(w, "Request has expired", http.StatusForbidden)
		case "/busy":
			http.Error(w, "Slow Down", http.StatusServiceUnavailable)
		case "/cut":
			c, _, _ := w.(http.Hijacker).Hijack()
			c.Close()
		case "/plain":
			http.Redirect(w, r, plain.URL+"/x", http.StatusFound)
		case "/ftp":
			w.Header().Set("Location", "ftp://mirror.example/x")
			w.WriteHeader(http.StatusFound)
		}
	})
	release := newUpstream(t, true, func(w http.ResponseWriter, r *http.Request, _ int) {
		http.Redirect(w, r, store.URL+r.URL.Path+signed, http.StatusFound)
	})
	var log bytes.Buffer
	o := testOptions(t)
	o.Retries = 1
	o.RootCAs = x509.NewCertPool()
	o.RootCAs.AddCert(store.Certificate())
	o.RootCAs.AddCert(release.Certificate())
	o.Logger = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	f := newTestFetcher(t, o)
	ctx := context.Background()
	check := func(how, path string, err error) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s %s: no error", how, path)
		}
		for _, s := range secrets {
			if strings.Contains(err.Error(), s) {
				t.Errorf("%s %s: the error prints the signed URL's %s: %v", how, path, s, err)
			}
		}
		if !strings.Contains(err.Error(), store.URL+path+"?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=xxxxx&X-Amz-Signature=xxxxx&sig=xxxxx&jwt=xxxxx") {
			t.Errorf("%s %s: the error does not name the URL, its secrets hidden: %v", how, path, err)
		}
	}
	for _, path := range []string{"/expired", "/busy", "/cut", "/plain", "/ftp"} {
		_, err := f.Fetch(ctx, Request{URL: release.URL + path, Pinned: pin(strings.Repeat("0", 64))})
		check("Fetch", path, err)
		_, err = f.Get(ctx, release.URL+path, nil, 0)
		check("Get", path, err)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, release.URL+path, nil)
		if resp, err := f.Transport().RoundTrip(req); err == nil {
			resp.Body.Close()
			if path != "/expired" { // Transport hands a 403 back as it is
				t.Errorf("Transport %s: no error", path)
			}
		} else {
			check("Transport", path, err)
		}
	}
	_, err := f.Exists(ctx, release.URL+"/busy")
	check("Exists", "/busy", err)
	for _, s := range secrets {
		if strings.Contains(log.String(), s) {
			t.Errorf("the log prints the signed URL's %s:\n%s", s, log.String())
			break
		}
	}
}

// TestSignedURLAskedForNotPrinted: a library asks the fetcher's Transport
// for a pre-signed URL itself (the Sigstore verifier for an attestation's
// bundle_url): a failure after the retries, and the log line of each retry,
// name it with its signature hidden, through squid.
func TestSignedURLAskedForNotPrinted(t *testing.T) {
	store := newUpstream(t, false, func(w http.ResponseWriter, r *http.Request, _ int) {
		http.Error(w, "Slow Down", http.StatusServiceUnavailable)
	})
	var log bytes.Buffer
	o := testOptions(t)
	o.Retries = 1
	o.Logger = slog.New(slog.NewTextHandler(&log, nil))
	f := newTestFetcher(t, o)
	signed := store.URL + "/b.json.sn?sp=r&sig=S3CRETSIG&jwt=eyJS3CRET"
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, signed, nil)
	_, err := f.Transport().RoundTrip(req)
	if err == nil || strings.Contains(err.Error(), "S3CRET") || !strings.Contains(err.Error(), store.URL+"/b.json.sn?sp=r&sig=xxxxx&jwt=xxxxx") {
		t.Errorf("err = %v\nwant it to name the URL with its signature hidden", err)
	}
	if !strings.Contains(log.String(), "retrying") || strings.Contains(log.String(), "S3CRET") {
		t.Errorf("the retry's log line prints the signature, or there is none:\n%s", log.String())
	}
}
