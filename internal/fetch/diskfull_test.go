package fetch

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/diskfull"
	"github.com/updeb/updeb/internal/testkit/testenv"
)

// TestFullDiskNotRetried: a download into a cache whose disk fills up fails
// at once, after one request, as a full disk naming the cache folder, not
// as a network failure after retries.
func TestFullDiskNotRetried(t *testing.T) {
	body, sha := payload(2<<20, 7)
	up := newUpstream(t, false, serveBytes(body))
	o := testOptions(t)
	o.Retries = 5
	cache := filepath.Join(testenv.TinyDisk(t, "512k"), "cache")
	f, err := New(cache, o)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	start := time.Now()
	_, err = f.Fetch(context.Background(), Request{URL: up.URL + "/big.tar.gz", Pinned: pin(sha)})
	de, ok := errors.AsType[*diskfull.Error](err)
	if !ok || de.Dir != cache || !strings.Contains(err.Error(), "the disk holding "+cache+" is full") {
		t.Fatalf("err = %v, want a full disk naming %s", err, cache)
	}
	var ne *NetworkError
	if errors.As(err, &ne) {
		t.Errorf("a full disk reported as a network failure: %v", err)
	}
	if n := up.count(); n != 1 {
		t.Errorf("%d requests, want 1 (no retry)", n)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %s", d)
	}
	if left, _ := filepath.Glob(filepath.Join(cache, "tmp", "*")); len(left) > 0 {
		t.Errorf("partial files left: %v", left)
	}
}
