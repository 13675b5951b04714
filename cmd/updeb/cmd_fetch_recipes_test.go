package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/testkit/squid"
	"github.com/updeb/updeb/internal/testkit/testenv"
)

// demoProject copies the demo (recipes, keys, mirror) and writes a config for
// it; it returns the arguments that point updeb at the copy.
func demoProject(t *testing.T) (args []string, mirror string) {
	t.Helper()
	dir := t.TempDir()
	testenv.Run(t, "cp", "-a", filepath.Join("..", "..", "testdata", "demo"), filepath.Join(dir, "demo"))
	cfg := filepath.Join(dir, "demo", "updeb.yaml")
	if err := os.WriteFile(cfg, []byte("mirrors:\n  - {prefix: https://releases.example.org/, to: mirror/releases.example.org/}\nsigstore: {trusted-root: sigstore/trusted_root.json}\nbuild:\n  maintainer: t <t@example.org>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return []string{"--config", cfg, "--recipes", filepath.Join(dir, "demo", "recipes"), "--cache", filepath.Join(dir, "cache"), "-q"},
		filepath.Join(dir, "demo", "mirror", "releases.example.org")
}

func TestFetchRecipes(t *testing.T) {
	args, mirror := demoProject(t)
	code, out, stderr := runCLI(t, append(args, "fetch", "hello", "--arch", "amd64")...)
	if code != 0 || strings.Count(out, "\n") != 3 || !strings.Contains(out, "hello-v1.2.0-linux-amd64.tar.gz.asc") {
		t.Fatalf("fetch hello: exit %d\n%s%s", code, out, stderr)
	}
	// Offline: what is cached is verified again; what is not is listed (exit 3).
	if code, _, stderr := runCLI(t, append(args, "--offline", "fetch", "hello", "--arch", "amd64")...); code != 0 {
		t.Fatalf("offline fetch of cached sources: exit %d: %s", code, stderr)
	}
	code, _, stderr = runCLI(t, append(args, "--offline", "fetch", "pingd")...)
	if code != exitNetwork || !strings.Contains(stderr, "5 file(s) not in the cache") || !strings.Contains(stderr, "pingd.sha256sum") {
		t.Fatalf("offline fetch of missing sources: exit %d: %s", code, stderr)
	}
	// With --json, a script gets each missing file under "failed".
	code, out, stderr = runCLI(t, append(args, "--offline", "--json", "fetch", "pingd", "hello", "--arch", "amd64")...)
	var got struct {
		Files  []struct{ URL string }
		Failed []struct{ URL, Error string }
	}
	if err := json.Unmarshal([]byte(out), &got); code != exitNetwork || err != nil {
		t.Fatalf("offline fetch --json: exit %d, %v: %s%s", code, err, out, stderr)
	}
	if len(got.Files) != 3 || len(got.Failed) == 0 || !slices.ContainsFunc(got.Failed, func(f struct{ URL, Error string }) bool {
		return strings.HasSuffix(f.URL, "pingd.sha256sum") && strings.Contains(f.Error, "not in the cache")
	}) {
		t.Errorf("offline fetch --json: %+v", got)
	}
	if code, out, _ = runCLI(t, append(args, "--offline", "--json", "fetch", "hello", "--arch", "amd64")...); code != 0 || !strings.Contains(out, `"failed": []`) {
		t.Errorf("fetch --json of cached sources: exit %d: %s", code, out)
	}
	// A tampered upstream file fails verification (exit 1), nothing is cached.
	f, err := os.OpenFile(filepath.Join(mirror, "pingd", "v0.9.1", "pingd.arm64"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("x"))
	f.Close()
	code, _, stderr = runCLI(t, append(args, "fetch", "pingd")...)
	if code != exitCheck || !strings.Contains(stderr, "digest mismatch") || !strings.Contains(stderr, "pingd.arm64") {
		t.Fatalf("fetch of a tampered source: exit %d: %s", code, stderr)
	}
	// URL-mode flags make no sense with recipes.
	if code, _, stderr := runCLI(t, append(args, "fetch", "--unpinned", "hello")...); code != exitUsage {
		t.Fatalf("--unpinned with a recipe: exit %d: %s", code, stderr)
	}
}

// TestFetchNeedsNoBuildSettings: fetching builds nothing, so a real recipe
// without a maintainer is fetched with a config that has no build: section:
// its downloads reach the proxy (squid's log is the witness; this machine has
// no way out, so squid answers 503 and updeb exits 3).
func TestFetchNeedsNoBuildSettings(t *testing.T) {
	sq := squid.ForTest(t)
	cfg := filepath.Join(t.TempDir(), "updeb.yaml")
	os.WriteFile(cfg, []byte("fetch: {retries: 0}\n"), 0o644)
	code, _, stderr := runCLI(t, "--config", cfg, "--recipes", filepath.Join("..", "..", "recipes"), "--cache", t.TempDir(), "--proxy", sq.URL,
		"fetch", "helm", "--arch", "amd64")
	if code != exitNetwork || strings.Contains(stderr, "maintainer") {
		t.Fatalf("fetch helm without build settings: exit %d, want 3 (no way out): %s", code, stderr)
	}
	// The first refusal cancels the other downloads: one request is the
	// witness. Squid writes its log when a request ends: wait for it.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		log := sq.Log()
		if strings.Contains(log, "CONNECT get.helm.sh:443") || strings.Contains(log, "CONNECT github.com:443") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("squid saw no request for helm's files:\n%s", log)
		}
	}
}
