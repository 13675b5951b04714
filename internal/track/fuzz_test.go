package track

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/fetch"
	"github.com/updeb/updeb/internal/testkit/squid"
)

func FuzzParseGitHubReleases(f *testing.F) {
	f.Add([]byte(`[{"tag_name":"v1.2.3","prerelease":false,"draft":false,"published_at":"2026-01-02T03:04:05Z"}]`), "v")
	f.Add([]byte(`[{"tag_name":"kustomize/v5.8.1"},{"tag_name":"kyaml/v0.1"}]`), "kustomize/v")
	f.Add([]byte(`[{"tag_name":"v1","published_at":"yesterday"}]`), "v")
	f.Add([]byte(`{"message":"Not Found"}`), "")
	f.Fuzz(func(t *testing.T, body []byte, prefix string) {
		rs, n, err := ParseGitHubReleases(body, prefix)
		if err != nil {
			return
		}
		if len(rs) > n {
			t.Fatalf("%d releases from a page of %d", len(rs), n)
		}
		for _, r := range rs {
			if debianOf(r.Version) == "" || !strings.HasPrefix(r.Tag, prefix) || r.Tag != prefix+r.Version {
				t.Fatalf("bad release %+v for prefix %q", r, prefix)
			}
		}
	})
}

func FuzzParseListing(f *testing.F) {
	f.Add([]byte(`<a href="tool-1.2.3.tar.gz">tool-1.2.3.tar.gz</a> <a href="tool-1.10.0.tar.gz">`), `tool-([0-9.]+)\.tar\.gz`, "")
	f.Add([]byte("v1.0\nv2.0-rc.1\n"), `(v[^\s]+)`, "v")
	f.Add([]byte("x"), `(`, "")
	f.Fuzz(func(t *testing.T, body []byte, pattern, prefix string) {
		rs, err := ParseListing(body, pattern, prefix)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, r := range rs {
			if debianOf(r.Version) == "" || seen[r.Version] {
				t.Fatalf("bad or repeated version %q", r.Version)
			}
			seen[r.Version] = true
		}
	})
}

// TestListingThroughSquid: a URL listing watch, with every request (the
// listing and the existence probes) through a real squid.
func TestListingThroughSquid(t *testing.T) {
	sq := squid.ForTest(t)
	u, file := scenario(t)
	u.set("/hello/", []byte(`<a href="v1.2.0/">v1.2.0/</a> <a href="v1.3.0/">v1.3.0/</a> <a href="v1.3.1/">v1.3.1/</a> <a href="v2.0.0/">v2.0.0/</a>`))
	r := load(t, file)
	r.Watch.GitHub, r.Watch.URL, r.Watch.Pattern = "", u.srv.URL+"/hello/", `href="(v[0-9.]+)/"`
	proxy, _ := url.Parse(sq.URL)
	c, err := Newest(context.Background(), r, testOptions(t, u, fetch.Options{Proxy: proxy}))
	if err != nil {
		t.Fatal(err)
	}
	if c.InTrack.Version != "1.3.0" || c.Latest.Version != "2.0.0" || len(c.Incomplete) != 1 || c.Incomplete[0].Version != "1.3.1" {
		t.Errorf("candidates %+v", c)
	}
	log := sq.Log()
	for _, want := range []string{"GET " + u.srv.URL + "/hello/ ", "HEAD " + u.srv.URL + artifactPath("1.3.1", "arm64")} {
		if !strings.Contains(log, want) {
			t.Errorf("squid's log has no %q:\n%s", want, log)
		}
	}
}
