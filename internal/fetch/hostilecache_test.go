package fetch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/updeb/updeb/internal/cache"
)

// TestNonRegularCacheEntriesAreRefetched: a blob or index entry that is no regular file (a FIFO, a folder, a
// symlink going nowhere or to other bytes) is no cached copy: like a blob
// with other bytes, it is dropped and the file downloaded again, never a
// lasting error that stops every build until someone cleans the cache by
// hand. Nothing blocks on the FIFO.
func TestNonRegularCacheEntriesAreRefetched(t *testing.T) {
	body, sha := payload(5000, 41)
	sigBody, _ := payload(700, 42)
	other := filepath.Join(t.TempDir(), "other")
	os.WriteFile(other, []byte("other bytes"), 0o644)
	for _, tc := range []struct {
		name  string
		plant func(path string) error
	}{
		{"fifo", func(p string) error { return syscall.Mkfifo(p, 0o644) }},
		{"empty folder", func(p string) error { return os.Mkdir(p, 0o755) }},
		{"folder with a file", func(p string) error {
			if err := os.Mkdir(p, 0o755); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(p, "f"), nil, 0o644)
		}},
		{"dangling symlink", func(p string) error { return os.Symlink(filepath.Join(t.TempDir(), "gone"), p) }},
		{"symlink to other bytes", func(p string) error { return os.Symlink(other, p) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := newUpstream(t, false, serveWithSig(body, sigBody))
			pinned := Request{URL: up.URL + "/tool.tgz", Pinned: pin(sha)}
			sig := Request{URL: up.URL + "/tool.tgz.asc", AllowUnpinned: true, Key: "tool 1.0"}
			dir := t.TempDir()
			f := fetcherIn(t, dir, false)
			res, err := f.FetchAll(context.Background(), []Request{pinned, sig})
			if err != nil {
				t.Fatal(err)
			}
			// Both blobs, and the index entry of the unpinned download.
			id := cache.ID(sig.URL, sig.Key)
			for _, p := range []string{res[0].Path, res[1].Path, filepath.Join(dir, "index", id[:2], id+".json")} {
				os.Remove(p)
				if err := tc.plant(p); err != nil {
					t.Fatal(err)
				}
			}
			res, err = fetcherIn(t, dir, false).FetchAll(context.Background(), []Request{pinned, sig})
			if err != nil {
				t.Fatalf("a %s in place of a blob: %v", tc.name, err)
			}
			checkFile(t, res[0], body)
			checkFile(t, res[1], sigBody)
			if res[0].FromCache || res[1].FromCache {
				t.Errorf("served from the cache: %+v %+v", res[0], res[1])
			}
		})
	}
}

// TestIndexEntryNamingAPathIsAMiss: an index entry whose sha256 is 64
// characters of path ("../../..../victim") names no blob: it is a miss, the
// file is downloaded again, and the folder or file it leads to outside the
// cache is neither read nor removed (a mismatch evicts what a blob path
// holds, a folder there with everything in it).
func TestIndexEntryNamingAPathIsAMiss(t *testing.T) {
	body, _ := payload(700, 43)
	for _, victim := range []string{"folder", "file"} {
		t.Run(victim, func(t *testing.T) {
			up := newUpstream(t, false, serveWithSig(body, body))
			sig := Request{URL: up.URL + "/tool.tgz.asc", AllowUnpinned: true, Key: "tool 1.0"}
			root := t.TempDir()
			dir := filepath.Join(root, "cache")
			if _, err := fetcherIn(t, dir, false).Fetch(context.Background(), sig); err != nil {
				t.Fatal(err)
			}
			// DIR/sha256/../<sha> is DIR/<sha>: two more ".." leave the cache for root/victim.
			outside := filepath.Join(root, "victim")
			if victim == "folder" {
				os.MkdirAll(filepath.Join(outside, "sub"), 0o755)
				os.WriteFile(filepath.Join(outside, "sub", "precious"), []byte("precious"), 0o644)
			} else {
				os.WriteFile(outside, []byte("precious"), 0o644)
			}
			sha := "../" + strings.Repeat("./", 27) + "/victim" // 64 characters
			id := cache.ID(sig.URL, sig.Key)
			entry := fmt.Sprintf(`{"url": %q, "key": %q, "sha256": %q, "size": 8}`, sig.URL, sig.Key, sha)
			if err := os.WriteFile(filepath.Join(dir, "index", id[:2], id+".json"), []byte(entry), 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := fetcherIn(t, dir, false).Fetch(context.Background(), sig)
			if err != nil {
				t.Fatal(err)
			}
			checkFile(t, res, body)
			if res.FromCache {
				t.Errorf("served from the cache: %+v", res)
			}
			if _, err := os.Stat(outside); err != nil {
				t.Errorf("the %s the index entry leads to, outside the cache: %v", victim, err)
			}
		})
	}
}

// TestPlantedPartialIsNotWrittenThrough: what lies where a download's partial
// file goes (cache/tmp/part-ID, a name anyone can work out from the URL) is
// the cache's own or nothing: a symlink planted there is replaced by a new
// file, never written through (the file it points to keeps its bytes and
// mode), and a FIFO or folder there is replaced without blocking. The
// record a resume needs (part-ID.json) is written through a new temporary
// file too.
func TestPlantedPartialIsNotWrittenThrough(t *testing.T) {
	body, sha := payload(5000, 44)
	symlink := func(t *testing.T, p string) error { return os.Symlink(filepath.Join(t.TempDir(), "victim"), p) }
	for _, tc := range []struct {
		name   string
		suffix string // after tmp/part-ID
		plant  func(t *testing.T, path string) error
	}{
		{"symlink", "", symlink},
		{"fifo", "", func(t *testing.T, p string) error { return syscall.Mkfifo(p, 0o644) }},
		{"folder", "", func(t *testing.T, p string) error { return os.MkdirAll(filepath.Join(p, "sub"), 0o755) }},
		{"symlink as the resume record's temporary file", ".json.new", symlink},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := newUpstream(t, false, serveWithSig(body, body))
			r := Request{URL: up.URL + "/tool.tgz", Pinned: pin(sha), Key: "tool 1.0"}
			dir := t.TempDir()
			f := fetcherIn(t, dir, false)
			p := filepath.Join(dir, "tmp", "part-"+cache.ID(r.URL, r.Key)+tc.suffix)
			if err := tc.plant(t, p); err != nil {
				t.Fatal(err)
			}
			victim, _ := os.Readlink(p)
			if victim != "" {
				os.WriteFile(victim, []byte("precious"), 0o600)
			}
			res, err := f.Fetch(context.Background(), r)
			if err != nil {
				t.Fatal(err)
			}
			checkFile(t, res, body)
			if fi, err := os.Lstat(res.Path); err != nil || !fi.Mode().IsRegular() {
				t.Errorf("the blob: %v, %v; want a regular file", fi, err)
			}
			if victim != "" {
				b, _ := os.ReadFile(victim)
				if fi, err := os.Stat(victim); err != nil || string(b) != "precious" || fi.Mode().Perm() != 0o600 {
					t.Errorf("written through the planted symlink: %d bytes, %v, %v; want 8 bytes, 0600", len(b), fi.Mode(), err)
				}
			}
		})
	}
}

// TestFileInPlaceOfACacheFolder: a file where one of the cache's fan-out
// folders goes (sha256/ab, index/cd: a stray copy, a file a tool or a user
// put there) holds no cached copy: the files below it are downloaded again
// and stored, never a lasting error ("not a directory") that stops every
// build whose file falls in that folder until someone cleans the cache by
// hand.
func TestFileInPlaceOfACacheFolder(t *testing.T) {
	_, pinned, sig, body, sigBody := toolWithSig(t, 5000, 700, 44)
	dir := t.TempDir()
	res, err := fetcherIn(t, dir, false).FetchAll(context.Background(), []Request{pinned, sig})
	if err != nil {
		t.Fatal(err)
	}
	id := cache.ID(sig.URL, sig.Key)
	for _, p := range []string{filepath.Dir(res[0].Path), filepath.Dir(res[1].Path), filepath.Join(dir, "index", id[:2])} {
		os.RemoveAll(p)
		if err := os.WriteFile(p, []byte("stray"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for run := range 2 {
		res, err = fetcherIn(t, dir, false).FetchAll(context.Background(), []Request{pinned, sig})
		if err != nil {
			t.Fatalf("run %d with a file in place of a cache folder: %v", run+1, err)
		}
		checkFile(t, res[0], body)
		checkFile(t, res[1], sigBody)
	}
}

// TestNonRegularLockFile: a folder or a symlink where a download's lock file
// goes, or the lock a commit and a hit share with gc (locks/gc.lock), is
// no lock of updeb's (they are regular files, opened without following
// links): the download or the hit takes its place, never a lasting error
// for every fetch of that URL, or of every URL.
func TestNonRegularLockFile(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(path string) error
	}{
		{"folder", func(p string) error { return os.Mkdir(p, 0o755) }},
		{"dangling symlink", func(p string) error { return os.Symlink(filepath.Join(t.TempDir(), "gone"), p) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, pinned, sig, body, sigBody := toolWithSig(t, 3000, 500, 46)
			dir := fetcherIn(t, t.TempDir(), false).cache.Dir()
			gcLock := filepath.Join(dir, "locks", "gc.lock")
			for _, id := range []string{cache.ID(pinned.URL, pinned.Key), cache.ID(sig.URL, sig.Key)} {
				if err := tc.plant(filepath.Join(dir, "locks", id+".lock")); err != nil {
					t.Fatal(err)
				}
			}
			for _, run := range []string{"downloads", "hits"} {
				os.Remove(gcLock)
				if err := tc.plant(gcLock); err != nil {
					t.Fatal(err)
				}
				res, err := fetcherIn(t, dir, false).FetchAll(context.Background(), []Request{pinned, sig})
				if err != nil {
					t.Fatalf("%s with a %s in place of a lock file: %v", run, tc.name, err)
				}
				checkFile(t, res[0], body)
				checkFile(t, res[1], sigBody)
			}
		})
	}
}
