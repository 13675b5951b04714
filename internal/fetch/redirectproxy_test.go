package fetch

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestRedirectAcrossNoProxyNamesTheProxyUsed: a host reached directly
// (no-proxy) redirects to one reached through squid, or the other way
// round, and the request there fails: the error names the way that
// request went (the CLI's hint says "check the proxy" or "no proxy was
// used" by it), not the way of the URL asked for.
func TestRedirectAcrossNoProxyNamesTheProxyUsed(t *testing.T) {
	broken := newUpstream(t, false, func(w http.ResponseWriter, r *http.Request, _ int) {
		http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
	})
	first := newUpstream(t, false, func(w http.ResponseWriter, r *http.Request, _ int) {
		http.Redirect(w, r, broken.URL+"/asset", http.StatusFound)
	})
	for _, c := range []struct {
		name, direct, wantProxy string
	}{
		{"from a no-proxy host to one through the proxy", first.Listener.Addr().String(), proxy.URL},
		{"from a host through the proxy to a no-proxy one", broken.Listener.Addr().String(), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := testOptions(t)
			o.Retries = -1
			o.NoProxy = []string{c.direct}
			f := newTestFetcher(t, o)
			_, err := f.Fetch(context.Background(), Request{URL: first.URL + "/release", Pinned: pin(strings.Repeat("0", 64))})
			var ne *NetworkError
			if !errors.As(err, &ne) {
				t.Fatalf("err = %v, want a *NetworkError", err)
			}
			if ne.Proxy != c.wantProxy {
				t.Errorf("NetworkError.Proxy = %q, want %q (the way the failed request went): %v", ne.Proxy, c.wantProxy, err)
			}
			if u, _ := url.Parse(broken.URL); f.proxyFor(u) != c.wantProxy {
				t.Fatalf("the test's no-proxy does not send %s the way it means", broken.URL)
			}
		})
	}
}
