package main

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/testkit/testenv"
)

// TestBuildXZMode: build.xz-mode best writes other (smaller) data.tar.xz
// bytes than the default fast mode, with the same content; an unknown mode is
// a usage error that names the file, line and column.
func TestBuildXZMode(t *testing.T) {
	args, _ := demoProject(t)
	cfg := args[1]
	base, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	build := func(mode string) (int, string, map[string][]byte) {
		t.Helper()
		if err := os.WriteFile(cfg, append(append([]byte(nil), base...), "  xz-mode: "+mode+"\n"...), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "out")
		code, stdout, stderr := runCLI(t, append(args, "--out", out, "build", "hello", "--arch", "amd64")...)
		debs := map[string][]byte{}
		paths, _ := filepath.Glob(filepath.Join(out, "*.deb"))
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			debs[filepath.Base(p)] = b
		}
		return code, stdout + stderr, debs
	}
	code, msg, fast := build("fast")
	if code != 0 || len(fast) != 1 {
		t.Fatalf("xz-mode fast: exit %d, %d packages\n%s", code, len(fast), msg)
	}
	code, msg, best := build("best")
	if code != 0 || len(best) != 1 {
		t.Fatalf("xz-mode best: exit %d, %d packages\n%s", code, len(best), msg)
	}
	for name, f := range fast {
		b := best[name]
		if bytes.Equal(b, f) {
			t.Errorf("%s: xz-mode best wrote the same bytes as fast", name)
		}
		if fc, bc := inspectContent(t, name, f), inspectContent(t, name, b); fc != bc {
			t.Errorf("%s: best and fast packages differ in content:\n%s\n%s", name, fc, bc)
		}
	}
	code, msg, _ = build("fastest")
	if code != exitUsage || !strings.Contains(msg, cfg+`:6:12: build.xz-mode "fastest": want fast or best`) {
		t.Fatalf("xz-mode fastest: exit %d, want %d and a message naming the setting\n%s", code, exitUsage, msg)
	}
}

// inspectContent returns `updeb inspect --json` of package data (named
// name) without the member sizes: what the package holds.
func inspectContent(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	code, js, stderr := runCLI(t, "inspect", "--json", p)
	if code != 0 {
		t.Fatalf("inspect %s: exit %d: %s", name, code, stderr)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(js), &v); err != nil {
		t.Fatal(err)
	}
	delete(v, "members")
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestBuildJobsRange: --jobs outside build.parallel's range (1 to
// config.MaxParallel) is a usage error that names the flag, before anything
// is built; it was taken silently (a negative value as none, a huge one as
// that many builds at once and a heap limit of 4 MiB each).
func TestBuildJobsRange(t *testing.T) {
	args, _ := demoProject(t)
	for _, jobs := range []string{"-1", "0", "257", "100000"} {
		out := filepath.Join(t.TempDir(), "out")
		code, stdout, stderr := runCLI(t, append(args, "--out", out, "build", "hello", "--arch", "amd64", "--jobs", jobs)...)
		if code != exitUsage || !strings.Contains(stderr, "--jobs "+jobs+": want 1 to 256") {
			t.Errorf("--jobs %s: exit %d, want %d and a message naming --jobs\n%s%s", jobs, code, exitUsage, stdout, stderr)
		}
		if debs, _ := filepath.Glob(filepath.Join(out, "*.deb")); len(debs) > 0 {
			t.Errorf("--jobs %s: built %v", jobs, debs)
		}
	}
}

// TestBuildIntoDanglingSymlink: an output folder that is a symlink to a
// folder that is gone (a share not mounted) says so; the error alone,
// "mkdir OUT: file exists", sent the operator to look for a file there.
func TestBuildIntoDanglingSymlink(t *testing.T) {
	args, _ := demoProject(t)
	out := filepath.Join(t.TempDir(), "out")
	if err := os.Symlink("/mnt/share/out", out); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, append(args, "--out", out, "build", "--arch", "amd64", "hello")...)
	if want := "updeb: hint: " + out + " is a symlink to /mnt/share/out, which does not exist (a share not mounted?): make that folder, or name another\n"; code != exitNetwork || !strings.HasSuffix(stderr, want) {
		t.Errorf("build into a dangling symlink: exit %d, want %d and %q\n%s%s", code, exitNetwork, want, stdout, stderr)
	}
}

// TestBuildNotStartedPrintsNoResults: a build that never started (its output
// folder cannot be made or locked) prints no results: its table said "0
// built, 0 up to date, 0 failed" and --json '"builds": []', nothing failed,
// beside exit 3.
func TestBuildNotStartedPrintsNoResults(t *testing.T) {
	args, _ := demoProject(t)
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, asJSON := range []bool{false, true} {
		a := append(slices.Clone(args), "--out", filepath.Join(file, "out"), "build", "--arch", "amd64", "hello")
		if asJSON {
			a = append(a, "--json")
		}
		if code, stdout, stderr := runCLI(t, a...); code != exitNetwork || stdout != "" {
			t.Errorf("build into a folder under a file (--json %v): exit %d, want %d and no results, stdout %q\n%s", asJSON, code, exitNetwork, stdout, stderr)
		}
	}
}

// TestBuildIgnoresSourceDateEpoch: SOURCE_DATE_EPOCH in the environment
// (exported by reproducible-builds tools and CI templates) does not date
// the packages, whose date is each recipe's release-date, so that a version
// has one set of bytes everywhere: the packages are the bytes of a build
// without it, and one warning per run, through the logger, says it is
// ignored and where the dates come from. It was ignored without a word.
func TestBuildIgnoresSourceDateEpoch(t *testing.T) {
	args, _ := demoProject(t)
	args = slices.DeleteFunc(args, func(a string) bool { return a == "-q" })
	var out string
	build := func(global ...string) (int, string, string) {
		out = filepath.Join(t.TempDir(), "out")
		return runCLI(t, append(append(global, args...), "--out", out, "build", "--arch", "amd64", "hello", "pingd")...)
	}
	debs := func() map[string]string { return builtFiles(t, out) }
	const warning = "SOURCE_DATE_EPOCH=1700000000 in the environment is ignored: each recipe's release-date: dates its packages"
	code, stdout, stderr := build()
	if code != 0 || strings.Contains(stderr, "SOURCE_DATE_EPOCH") {
		t.Fatalf("build without SOURCE_DATE_EPOCH: exit %d\n%s%s", code, stdout, stderr)
	}
	want := debs()
	t.Setenv("SOURCE_DATE_EPOCH", "1700000000")
	code, stdout, stderr = build()
	if code != 0 || strings.Count(stderr, warning) != 1 || !strings.Contains(stderr, "change release-date: in its recipe") {
		t.Fatalf("build with SOURCE_DATE_EPOCH: exit %d, want 0 and one warning %q\n%s%s", code, warning, stdout, stderr)
	}
	if got := debs(); len(got) != 4 || !maps.Equal(got, want) {
		t.Errorf("build with SOURCE_DATE_EPOCH wrote other packages or records than without it: %d files, %d before", len(got), len(want))
	}
	warnsThroughLogger(t, build, warning)
}

// The demo project builds to the same bytes in a folder whose name holds
// the characters a URL reserves ("#", "?", "%"): the config's relative
// mirror folder (to: mirror/...) was made a file:// URL with the path as
// it is, and "#" or "?" cut it short (the mirror refused, the build
// failed) and "%41" was read as "A", another folder.
func TestBuildInFolderWithURLCharacters(t *testing.T) {
	var want map[string]string
	for _, name := range []string{"plain", "C# 100%41?"} {
		dir := filepath.Join(t.TempDir(), name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		testenv.Run(t, "cp", "-a", filepath.Join("..", "..", "testdata", "demo"), filepath.Join(dir, "demo"))
		cfg := filepath.Join(dir, "demo", "updeb.yaml")
		if err := os.WriteFile(cfg, []byte("mirrors:\n  - {prefix: https://releases.example.org/, to: mirror/releases.example.org/}\nsigstore: {trusted-root: sigstore/trusted_root.json}\nbuild:\n  maintainer: t <t@example.org>\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "out")
		code, stdout, stderr := runCLI(t, "--config", cfg, "--recipes", filepath.Join(dir, "demo", "recipes"), "--cache", filepath.Join(dir, "cache"), "-q",
			"--out", out, "build", "--arch", "amd64", "hello")
		if code != 0 {
			t.Fatalf("build in %q: exit %d\n%s%s", name, code, stdout, stderr)
		}
		got := builtFiles(t, out)
		if want == nil {
			want = got
		} else if len(got) != 2 || !maps.Equal(got, want) {
			t.Errorf("the build in %q wrote %d files, not the bytes of the build in another folder", name, len(got))
		}
	}
}

// builtFiles returns the packages and records in the output folder out, by
// name: their bytes.
func builtFiles(t *testing.T, out string) map[string]string {
	t.Helper()
	got := map[string]string{}
	ents, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() || !strings.Contains(e.Name(), ".deb") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(out, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		got[e.Name()] = string(b)
	}
	return got
}
