package fetch

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/cache"
)

// 'updeb cache gc' runs while a fetch re-hashes a cached file that no run
// used for longer than gc's max age, and removes it. (A pinned file is
// looked up by its digest: its index entry, which a hit never reads, went
// at an earlier gc. An index entry a fetch reads is in use, and keeps its
// blob.) The fetch downloads the file again and returns one that is there,
// with the bytes served, marked as used so that a later gc keeps it: it
// handed out the path of the file gc had removed, and what read it next
// failed.
func TestFetchBesideCacheGC(t *testing.T) {
	body, sha := payload(1<<20, 21)
	up := newUpstream(t, false, serveBytes(body))
	dir := t.TempDir()
	const maxAge = 30 * 24 * time.Hour
	var gcRes *cache.GCResult
	var gcErr error
	o := testOptions(t)
	o.Progress = func(p Progress) {
		if p.Cached && !p.Done && gcRes == nil {
			gcRes, gcErr = cache.GC(context.Background(), dir, cache.GCOptions{MaxAge: maxAge})
		}
	}
	f, err := New(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	r := Request{URL: up.URL + "/pinned.tgz", Pinned: pin(sha)}
	res, err := f.Fetch(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * maxAge) // unused for two max ages
	os.Chtimes(res.Path, old, old)
	id := cache.ID(r.URL, "")
	if err := os.Remove(filepath.Join(dir, "index", id[:2], id+".json")); err != nil {
		t.Fatal(err)
	}
	got, err := f.Fetch(context.Background(), r)
	if err != nil || gcErr != nil {
		t.Fatalf("fetch beside gc: %v; gc: %v", err, gcErr)
	}
	if gcRes == nil || len(gcRes.Files) != 1 {
		t.Fatalf("gc beside the re-hash removed %+v, want the blob", gcRes)
	}
	checkFile(t, got, body)
	if got.FromCache || up.count() != 2 {
		t.Errorf("FromCache=%v after %d requests: want the file gc removed downloaded again", got.FromCache, up.count())
	}
	if fi, err := os.Stat(got.Path); err != nil || fi.ModTime().Before(time.Now().Add(-time.Hour)) {
		t.Errorf("%s is not marked as used: %v", got.Path, err)
	}
}
