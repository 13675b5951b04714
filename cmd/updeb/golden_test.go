package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regenerate with: go test ./cmd/updeb -run TestGoldenDemoPackages -update
var update = flag.Bool("update", false, "rewrite golden files")

// TestGoldenDemoPackages builds the demo's fixture recipes and compares
// `updeb inspect --json` of every package they produce with the golden files
// in testdata/golden: members, control fields, conffiles, scripts and every
// file's mode, owner, size, mtime and md5. Any change to what a recipe turns
// into shows up here as a diff to review.
func TestGoldenDemoPackages(t *testing.T) {
	args, _ := demoProject(t)
	out := filepath.Join(t.TempDir(), "out")
	if code, stdout, stderr := runCLI(t, append(args, "--out", out, "build")...); code != 0 {
		t.Fatalf("build: exit %d\n%s%s", code, stdout, stderr)
	}
	debs, _ := filepath.Glob(filepath.Join(out, "*.deb"))
	if len(debs) != 4 {
		t.Fatalf("built %v, want hello and pingd for amd64 and arm64", debs)
	}
	seen := map[string]bool{}
	for _, d := range debs {
		code, js, stderr := runCLI(t, "inspect", "--json", d)
		if code != 0 {
			t.Fatalf("inspect %s: exit %d: %s", d, code, stderr)
		}
		name := strings.TrimSuffix(filepath.Base(d), ".deb") + ".json"
		seen[name] = true
		golden := filepath.Join("testdata", "golden", name)
		if *update {
			os.MkdirAll(filepath.Dir(golden), 0o755)
			if err := os.WriteFile(golden, []byte(js), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run with -update to create it)", err)
		}
		if !bytes.Equal(want, []byte(js)) {
			t.Errorf("%s differs from %s (review, then -update):\n--- got\n%s", filepath.Base(d), golden, js)
		}
	}
	// No stale goldens for packages the recipes no longer produce.
	files, _ := filepath.Glob(filepath.Join("testdata", "golden", "*.json"))
	for _, f := range files {
		if !seen[filepath.Base(f)] {
			t.Errorf("%s: no package produces it any more", f)
		}
	}
}
