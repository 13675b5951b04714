package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/testkit/squid"
	"github.com/updeb/updeb/internal/testkit/testenv"
)

// TestMirrorExportAirGapped: the demo's downloads exported into a folder,
// verified, and built from that folder alone on "the far side" (a fresh
// cache, a proxy nothing answers at: any request out would fail). Then a
// missing and a corrupt file are each reported as what they are, by verify,
// by the build, and by an offline build from a damaged cache.
func TestMirrorExportAirGapped(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	args, _ := demoProject(t)
	dir := filepath.Join(t.TempDir(), "usb", "updeb-mirror")
	code, stdout, stderr := runCLI(t, append(args, "mirror", "export", dir, "--json")...)
	var exp struct {
		Files []struct {
			Path, SHA256 string
		}
		Mirrors []struct{ Prefix, To string }
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &exp) != nil || len(exp.Files) != 11 || len(exp.Mirrors) != 1 {
		t.Fatalf("mirror export: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, out, stderr := runCLI(t, "mirror", "verify", dir); code != 0 || !strings.Contains(out, "11 file(s): 11 ok, 0 missing, 0 corrupt") {
		t.Fatalf("mirror verify: exit %d\n%s%s", code, out, stderr)
	}

	// The far side: only the folder.
	far := t.TempDir()
	cfg := filepath.Join(far, "updeb.yaml")
	root := filepath.Join(filepath.Dir(args[3]), "sigstore", "trusted_root.json") // the demo's release workflow's test CA
	os.WriteFile(cfg, []byte("mirrors:\n  - {prefix: "+exp.Mirrors[0].Prefix+", to: "+exp.Mirrors[0].To+"}\nsigstore: {trusted-root: "+root+"}\nbuild: {maintainer: t <t@example.org>}\nfetch: {retries: 0}\n"), 0o644)
	dead, _ := squid.DeadURL()
	farArgs := []string{"--config", cfg, "--recipes", args[3], "--proxy", dead, "-q"}
	build := func(cache string, extra ...string) (int, string) {
		code, out, stderr := runCLI(t, append(append(farArgs, "--cache", cache, "--out", filepath.Join(far, "out")), append([]string{"build", "--force"}, extra...)...)...)
		return code, out + stderr
	}
	cache := filepath.Join(far, "cache")
	if code, out := build(cache); code != 0 || !strings.Contains(out, "4 built, 0 up to date, 0 failed") {
		t.Fatalf("build from the exported folder: exit %d\n%s", code, out)
	}

	// Damage the folder: one file gone, one changed.
	pingd := filepath.Join(dir, "releases.example.org", "pingd", "v0.9.1")
	os.Remove(filepath.Join(pingd, "pingd.arm64"))
	os.WriteFile(filepath.Join(pingd, "pingd.amd64"), []byte("not pingd"), 0o644)
	code, out, _ := runCLI(t, "mirror", "verify", dir)
	if code != exitCheck || !strings.Contains(out, "MISSING  releases.example.org/pingd/v0.9.1/pingd.arm64 (https://releases.example.org/pingd/v0.9.1/pingd.arm64)") ||
		!strings.Contains(out, "CORRUPT  releases.example.org/pingd/v0.9.1/pingd.amd64: 9 bytes") || !strings.Contains(out, "9 ok, 1 missing, 1 corrupt") {
		t.Errorf("verify of a damaged folder: exit %d\n%s", code, out)
	}
	code, out = build(filepath.Join(far, "cache2"), "pingd")
	if code == 0 || !strings.Contains(out, "fetch https://releases.example.org/pingd/v0.9.1/pingd.arm64: missing from the mirror file://") ||
		!strings.Contains(out, "the copy in the mirror file://") || !strings.Contains(out, "pingd.amd64 is corrupt: sha256 digest mismatch") ||
		strings.Contains(out, "not in the cache") || strings.Contains(out, "check the proxy") {
		t.Errorf("build from a damaged folder: exit %d\n%s", code, out)
	}

	// Offline, from the first cache: a corrupt cached copy is reported as
	// such, a file never cached as missing.
	for _, f := range exp.Files {
		if strings.HasSuffix(f.Path, "pingd.amd64") {
			blob := filepath.Join(cache, "sha256", f.SHA256[:2], f.SHA256)
			os.Chmod(blob, 0o644)
			if err := os.WriteFile(blob, []byte("bit rot"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	code, out = build(cache, "--offline", "pingd")
	if code != exitNetwork || !strings.Contains(out, "1 file(s) in the cache failed their digest and were removed:\n  https://releases.example.org/pingd/v0.9.1/pingd.amd64") ||
		strings.Contains(out, "not in the cache") {
		t.Errorf("offline build from a damaged cache: exit %d\n%s", code, out)
	}
	code, out = build(filepath.Join(far, "empty-cache"), "--offline", "hello", "--arch", "amd64")
	if code != exitNetwork || !strings.Contains(out, "3 file(s) not in the cache") || strings.Contains(out, "failed their digest") {
		t.Errorf("offline build from an empty cache: exit %d\n%s", code, out)
	}

	// A folder without a manifest is not a mirror folder.
	if code, _, stderr := runCLI(t, "mirror", "verify", t.TempDir()); code != exitUsage || !strings.Contains(stderr, "updeb-mirror.json") {
		t.Errorf("verify of an empty folder: exit %d: %s", code, stderr)
	}
}
