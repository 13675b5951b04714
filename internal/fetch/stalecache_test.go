package fetch

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/testkit/squid"
	"github.com/updeb/updeb/pkg/digest"
)

// TestStaleProxyCopyOfARepublishedFile: upstream published a file again
// under the same URL, and the recipe pins the new bytes. A caching squid
// keeps its copy of the old ones fresh for days (a month-old Last-Modified,
// squid's default refresh_pattern) and serves it to the pinned download,
// which fails its pin: a download that the proxy answered from its cache
// (its answer has an Age header) is asked for once more with
// Cache-Control: no-cache, and the origin's bytes, which match, are
// cached. A file whose origin bytes fail the pin still fails, after those
// two downloads; one the origin answered (TestFaults/wrong_content) after
// one.
func TestStaleProxyCopyOfARepublishedFile(t *testing.T) {
	sq := squid.CachingForTest(t)
	old, oldSHA := payload(32<<10, 31)
	republished, newSHA := payload(32<<10, 32)
	month := time.Now().Add(-30 * 24 * time.Hour).UTC().Format(http.TimeFormat)
	up := newUpstream(t, false, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Last-Modified", month)
		if n == 1 {
			w.Write(old)
			return
		}
		w.Write(republished)
	})
	o := testOptions(t)
	o.Proxy, _ = url.Parse(sq.URL)
	ctx := context.Background()
	u := up.URL + "/tool.tgz"
	if _, err := newTestFetcher(t, o).Fetch(ctx, Request{URL: u, Pinned: pin(oldSHA)}); err != nil {
		t.Fatal(err) // squid now holds the old bytes
	}
	res, err := newTestFetcher(t, o).Fetch(ctx, Request{URL: u, Pinned: pin(newSHA)})
	if err != nil {
		t.Fatalf("the pinned (republished) file: %v", err)
	}
	checkFile(t, res, republished)
	if up.count() != 2 || up.header(1).Get("Cache-Control") != "no-cache" {
		t.Fatalf("the origin saw %d requests, want 2, the second with Cache-Control: no-cache", up.count())
	}
	_, err = newTestFetcher(t, o).Fetch(ctx, Request{URL: u, Pinned: pin(oldSHA)})
	var mm *digest.MismatchError
	if !errors.As(err, &mm) || up.count() != 3 {
		t.Errorf("a pin the origin's bytes fail: err = %v after %d requests to the origin, want a mismatch after 3", err, up.count())
	}
}
