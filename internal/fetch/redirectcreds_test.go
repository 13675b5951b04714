package fetch

import (
	"context"
	"net/http"
	"testing"
)

// TestRedirectDropsCredentials: a token given for a URL (GITHUB_TOKEN for
// the API) goes with its redirects while they stay on that URL's origin,
// and with none once they leave it: to another server on the same host
// name (another port; Go's client sends it there, and to subdomains),
// back to the origin included. By Get and by Transport, through squid.
func TestRedirectDropsCredentials(t *testing.T) {
	secret := http.Header{"Authorization": {"Bearer s3cret"}, "Cookie": {"session=s3cret"}, "Accept": {"application/json"}}
	other := newUpstream(t, false, func(w http.ResponseWriter, r *http.Request, _ int) {
		if r.URL.Query().Get("back") != "" {
			http.Redirect(w, r, r.URL.Query().Get("back"), http.StatusFound)
			return
		}
		w.Write([]byte("[]"))
	})
	var api *upstream
	api = newUpstream(t, false, func(w http.ResponseWriter, r *http.Request, _ int) {
		switch r.URL.Path {
		case "/moved":
			http.Redirect(w, r, "/here", http.StatusMovedPermanently)
		case "/away":
			http.Redirect(w, r, other.URL+"/x", http.StatusFound)
		case "/round":
			http.Redirect(w, r, other.URL+"/y?back="+api.URL+"/here", http.StatusFound)
		default:
			w.Write([]byte("[]"))
		}
	})
	f := newTestFetcher(t, testOptions(t))
	ctx := context.Background()
	get := func(path string) {
		t.Helper()
		if _, err := f.Get(ctx, api.URL+path, secret, 0); err != nil {
			t.Fatal(err)
		}
	}
	noCredentials := func(what string, h http.Header) {
		t.Helper()
		if h.Get("Authorization") != "" || h.Get("Cookie") != "" {
			t.Errorf("%s carried the credentials: %v", what, h)
		}
		if h.Get("Accept") != "application/json" {
			t.Errorf("%s lost the other headers too: %v", what, h)
		}
	}

	get("/moved") // the API's own redirect: the token follows it
	if h := api.header(1); h.Get("Authorization") != "Bearer s3cret" || h.Get("Cookie") != "session=s3cret" {
		t.Errorf("a redirect on the API's origin lost the credentials: %v", h)
	}
	get("/away")
	noCredentials("the redirect to another port", other.header(0))
	get("/round")
	noCredentials("the redirect to another port", other.header(1))
	noCredentials("the redirect back to the API from elsewhere", api.header(4))

	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, api.URL+"/away", nil)
	req.Header = secret.Clone()
	resp, err := f.Transport().RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	noCredentials("Transport's redirect to another port", other.header(2))
}

// TestTokenHeadersAreCredentials: GitLab's token headers (PRIVATE-TOKEN,
// JOB-TOKEN, however a caller spells them) are credentials like
// Authorization: not sent to a mirror on another host, nor after a redirect
// to another origin (Go's client sends them on to any host).
func TestTokenHeadersAreCredentials(t *testing.T) {
	for _, name := range []string{"PRIVATE-TOKEN", "Private-Token", "JOB-TOKEN"} {
		t.Run(name, func(t *testing.T) {
			secret := http.Header{name: {"glpat-s3cret"}, "Accept": {"application/json"}}
			mirror := newUpstream(t, false, serveBytes([]byte("[]")))
			api := newUpstream(t, false, func(w http.ResponseWriter, r *http.Request, _ int) {
				http.Redirect(w, r, mirror.URL+"/moved", http.StatusFound)
			})
			o := testOptions(t)
			o.Mirrors = []Mirror{{Prefix: "https://gitlab.example/", To: mirror.URL + "/gitlab/"}}
			f := newTestFetcher(t, o)
			ctx := context.Background()
			if _, err := f.Get(ctx, "https://gitlab.example/api/v4/projects", secret, 0); err != nil {
				t.Fatal(err)
			}
			if _, err := f.Get(ctx, api.URL+"/api/v4/projects", secret, 0); err != nil {
				t.Fatal(err)
			}
			if got := api.header(0).Get(name); got != "glpat-s3cret" {
				t.Errorf("the URL's own host did not get %s: %q", name, got)
			}
			for i, what := range []string{"the mirror on another host", "the redirect to another origin"} {
				if h := mirror.header(i); h.Get(name) != "" || h.Get("Accept") != "application/json" {
					t.Errorf("%s got %v, want the headers without %s", what, h, name)
				}
			}
		})
	}
}

// TestRedirectSendsNoReferer: a redirect does not tell the next host where
// it came from. Go's client sends the URL before as Referer, query and
// all: the signature of a pre-signed URL that redirects on (an object
// store's to its CDN), or a token in a query, reached the next host and
// its logs. By Fetch, Get and Transport, through squid.
func TestRedirectSendsNoReferer(t *testing.T) {
	body, sha := payload(100, 21)
	cdn := newUpstream(t, false, serveBytes(body))
	store := newUpstream(t, false, func(w http.ResponseWriter, r *http.Request, _ int) {
		http.Redirect(w, r, cdn.URL+"/a.tgz", http.StatusFound)
	})
	signed := store.URL + "/a.tgz?X-Amz-Signature=d34db33f"
	f := newTestFetcher(t, testOptions(t))
	ctx := context.Background()
	if _, err := f.Fetch(ctx, Request{URL: signed, Pinned: pin(sha)}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Get(ctx, signed, nil, 0); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, signed, nil)
	resp, err := f.Transport().RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for i := range 3 {
		if ref := cdn.header(i).Get("Referer"); ref != "" {
			t.Errorf("request %d after the redirect carried Referer: %s", i, ref)
		}
	}
}
