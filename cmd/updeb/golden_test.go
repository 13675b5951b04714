package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/pipeline"
)

// Regenerate with: go test ./cmd/updeb -run TestGoldenDemoPackages -update
var update = flag.Bool("update", false, "rewrite golden files")

// TestGoldenDemoPackages builds the demo's fixture recipes and compares
// `updeb inspect --json` of every package they produce with the golden files
// in testdata/golden: members, control fields, conffiles, scripts and every
// file's mode, owner, size, mtime and md5; and each package's provenance
// statement (DEB.intoto.json). Any change to what a recipe turns into, or to
// what its record says, shows up here as a diff to review.
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
		compareGolden(t, name, []byte(js), seen)
		// The provenance statement (the payload of the unsigned envelope).
		env, err := readEnvelope(d + pipeline.ProvenanceSuffix)
		if err != nil {
			t.Fatal(err)
		}
		compareGolden(t, filepath.Base(d)+pipeline.ProvenanceSuffix, env.Payload, seen)
	}
	// No stale goldens for packages the recipes no longer produce.
	files, _ := filepath.Glob(filepath.Join("testdata", "golden", "*.json"))
	for _, f := range files {
		if !seen[filepath.Base(f)] {
			t.Errorf("%s: no package produces it any more", f)
		}
	}
}

// compareGolden compares got with testdata/golden/name (or writes it with
// -update) and notes the name as seen.
func compareGolden(t *testing.T, name string, got []byte, seen map[string]bool) {
	t.Helper()
	seen[name] = true
	golden := filepath.Join("testdata", "golden", name)
	if *update {
		os.MkdirAll(filepath.Dir(golden), 0o755)
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs from %s (review, then -update):\n--- got\n%s", name, golden, got)
	}
}
