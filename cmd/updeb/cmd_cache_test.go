package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/cache"
	"github.com/updeb/updeb/internal/testkit/testenv"
	"github.com/updeb/updeb/pkg/digest"
)

// cachedBlob puts data in the cache as a download would, used last d ago,
// and returns its path.
func cachedBlob(t *testing.T, c *cache.Cache, data string, d time.Duration) string {
	t.Helper()
	f, err := c.TempFile()
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(data)
	h := digest.NewHasher()
	h.Write([]byte(data))
	p, err := c.Commit(context.Background(), f, h.Sum()[digest.SHA256])
	if err != nil {
		t.Fatal(err)
	}
	then := time.Now().Add(-d)
	os.Chtimes(p, then, then)
	return p
}

// updeb cache gc removes the downloads no run used within --max-age days
// (30 by default), lists them (--dry-run: what would go, removing nothing),
// says how many files and bytes, and prints it all under --json.
func TestCacheGC(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	c, err := cache.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	const day = 24 * time.Hour
	old := cachedBlob(t, c, "last used 45 days ago", 45*day)
	young := cachedBlob(t, c, "used last week", 7*day)

	out, _ := runCLIExit(t, exitOK, "--cache", dir, "cache", "gc", "--dry-run")
	if want := "would remove " + old + "\nwould remove 1 file (21 bytes) from " + dir + "\n"; out != want {
		t.Errorf("--dry-run printed %q, want %q", out, want)
	}
	if _, err := os.Stat(old); err != nil {
		t.Fatalf("--dry-run removed %s: %v", old, err)
	}
	out, _ = runCLIExit(t, exitOK, "--cache", dir, "cache", "gc", "--max-age", "60")
	if want := "removed 0 files (0 bytes) from " + dir + "\n"; out != want {
		t.Errorf("--max-age 60 printed %q, want %q", out, want)
	}
	out, _ = runCLIExit(t, exitOK, "--cache", dir, "cache", "gc", "--json")
	v := checkJSON(t, "cache gc", out)
	rel, _ := filepath.Rel(dir, old)
	if files, _ := v["files"].([]any); len(files) != 1 || files[0] != rel || v["bytes"] != 21.0 || v["dry_run"] != false || v["cache"] != dir || v["max_age_days"] != 30.0 {
		t.Errorf("--json: %s", out)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("%s not removed: %v", old, err)
	}
	if _, err := os.Stat(young); err != nil {
		t.Errorf("%s, used last week, removed: %v", young, err)
	}

	// A cache folder not made yet (no run fetched anything) holds nothing to remove.
	missing := filepath.Join(t.TempDir(), "none")
	if out, _ := runCLIExit(t, exitOK, "--cache", missing, "cache", "gc"); out != "removed 0 files (0 bytes) from "+missing+"\n" {
		t.Errorf("a missing cache: %q", out)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("gc made the missing cache folder")
	}
}

// A bad --max-age, and a --cache that is no updeb cache (a mistyped one,
// the home folder), are refused (exit 2) and nothing is removed.
func TestCacheGCRefusals(t *testing.T) {
	dir := t.TempDir()
	c, _ := cache.Open(filepath.Join(dir, "cache"))
	blob := cachedBlob(t, c, "old", 400*24*time.Hour)
	for _, age := range []string{"-1", "0", "thirty", "30d", "1.5", "106752", "36501"} {
		_, stderr := runCLIExit(t, exitUsage, "--cache", c.Dir(), "cache", "gc", "--max-age", age)
		if !strings.Contains(stderr, "--max-age") {
			t.Errorf("--max-age %s: %s", age, stderr)
		}
	}
	home := filepath.Join(dir, "home")
	os.MkdirAll(filepath.Join(home, "sha256"), 0o755)
	_, stderr := runCLIExit(t, exitUsage, "--cache", home, "cache", "gc")
	if !strings.Contains(stderr, home+" is no updeb cache: it has no index folder") || !strings.Contains(stderr, "hint: name the cache folder itself") {
		t.Errorf("a folder that is no cache: %s", stderr)
	}
	if _, err := os.Stat(blob); err != nil {
		t.Errorf("a refused gc removed %s: %v", blob, err)
	}
}

// On a cache gc may read but not write (a read-only mount), --dry-run lists
// what would go, and gc fails with exit 3 naming the whole path of the file
// it could not remove or lock: a blob in a folder mounted read-only was
// named relative to the cache folder.
func TestCacheGCReadOnly(t *testing.T) {
	dir := t.TempDir()
	c, _ := cache.Open(filepath.Join(dir, "cache"))
	blob := cachedBlob(t, c, "old", 400*24*time.Hour)
	testenv.ReadOnlyBindMount(t, filepath.Dir(blob), filepath.Dir(blob))
	_, stderr := runCLIExit(t, exitNetwork, "--cache", c.Dir(), "cache", "gc")
	if !strings.Contains(stderr, " "+blob+": read-only file system") {
		t.Errorf("gc of a blob on a read-only mount: %s", stderr)
	}

	ro := filepath.Join(dir, "ro")
	os.Mkdir(ro, 0o755)
	testenv.ReadOnlyBindMount(t, c.Dir(), ro)
	roBlob := filepath.Join(ro, strings.TrimPrefix(blob, c.Dir()))
	if out, _ := runCLIExit(t, exitOK, "--cache", ro, "cache", "gc", "--dry-run"); !strings.HasPrefix(out, "would remove "+roBlob+"\n") {
		t.Errorf("--dry-run on a read-only cache: %q", out)
	}
	_, stderr = runCLIExit(t, exitNetwork, "--cache", ro, "cache", "gc")
	if !strings.Contains(stderr, filepath.Join(ro, "locks", "gc.lock")+": read-only file system") {
		t.Errorf("gc on a read-only cache: %s", stderr)
	}
	if _, err := os.Stat(blob); err != nil {
		t.Error(err)
	}
}

// On a read-only cache whose downloads have index entries (every download
// has one), gc fails as on one without: exit 3, naming the lock it could
// not take. It took an entry whose lock it could not open for one a fetch
// held, kept it and the blob it names, and said "removed 0 files" (exit
// 0): a gc run by a user who cannot write the cache never freed a byte,
// without a word.
func TestCacheGCReadOnlyIndexed(t *testing.T) {
	dir := t.TempDir()
	c, _ := cache.Open(filepath.Join(dir, "cache"))
	old := 400 * 24 * time.Hour
	blob := cachedBlob(t, c, "old", old)
	e := cache.Entry{URL: "https://releases.example.org/old.tar.gz", SHA256: filepath.Base(blob), Size: 3}
	if err := c.SetIndex(e); err != nil {
		t.Fatal(err)
	}
	id := cache.ID(e.URL, "")
	entry := filepath.Join("index", id[:2], id+".json")
	then := time.Now().Add(-old)
	os.Chtimes(filepath.Join(c.Dir(), entry), then, then)

	ro := filepath.Join(dir, "ro")
	os.Mkdir(ro, 0o755)
	testenv.ReadOnlyBindMount(t, c.Dir(), ro)
	if out, _ := runCLIExit(t, exitOK, "--cache", ro, "cache", "gc", "--dry-run"); !strings.Contains(out, "would remove "+filepath.Join(ro, entry)+"\n") ||
		!strings.Contains(out, "would remove 2 files") {
		t.Errorf("--dry-run on a read-only cache: %q", out)
	}
	_, stderr := runCLIExit(t, exitNetwork, "--cache", ro, "cache", "gc")
	if !strings.Contains(stderr, filepath.Join(ro, "locks", id+".lock")+": read-only file system") {
		t.Errorf("gc on a read-only cache: %s", stderr)
	}
	for _, f := range []string{blob, filepath.Join(c.Dir(), entry)} {
		if _, err := os.Stat(f); err != nil {
			t.Error(err)
		}
	}
}
