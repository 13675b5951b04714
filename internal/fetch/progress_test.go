package fetch

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestProgressReports: a copy from a folder mirror and the re-hash of the
// cached copy each report their bytes, then end with one Done report.
func TestProgressReports(t *testing.T) {
	body, sha := payload(3<<20, 5)
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "v1"), 0o755)
	os.WriteFile(filepath.Join(dir, "v1", "x.tgz"), body, 0o644)
	var mu sync.Mutex
	var got []Progress
	o := Options{Mirrors: []Mirror{{Prefix: "https://h.example/", To: "file://" + dir + "/"}}, Retries: -1,
		Progress: func(p Progress) { mu.Lock(); got = append(got, p); mu.Unlock() }}
	f := newTestFetcher(t, o)
	req := Request{URL: "https://h.example/v1/x.tgz", Pinned: pin(sha)}
	check := func(what string, cached bool) {
		t.Helper()
		mu.Lock()
		defer mu.Unlock()
		if len(got) == 0 {
			t.Fatalf("%s: no report", what)
		}
		last := got[len(got)-1]
		if !last.Done || last.Err != nil || last.Received != int64(len(body)) || last.Cached != cached {
			t.Errorf("%s: last report %+v, want Done with %d bytes (cached %v)", what, last, len(body), cached)
		}
		for _, p := range got[:len(got)-1] {
			if p.Done || p.Cached != cached || p.Received > int64(len(body)) || p.URL != req.URL {
				t.Errorf("%s: report %+v", what, p)
			}
		}
		got = nil
	}
	if _, err := f.Fetch(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	check("mirror copy", false)
	res, err := f.Fetch(context.Background(), req)
	if err != nil || !res.FromCache {
		t.Fatalf("second fetch: %v, %+v", err, res)
	}
	check("re-hash of the cached copy", true)
}
