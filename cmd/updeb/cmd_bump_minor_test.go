package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/testkit/ghfake"
	"github.com/updeb/updeb/internal/testkit/squid"
)

// criMirror is a stand-in for github.com's cri-tools releases (ghfake: the
// API and the files at their real paths, through the mirror setting).
type criMirror struct{ *ghfake.Server }

func newCRIMirror(t *testing.T) *criMirror { return &criMirror{ghfake.New(t.Cleanup)} }

const criRepo = "kubernetes-sigs/cri-tools"

// publish uploads crictl VERSION for amd64 and arm64 with its .sha256 files
// and returns the tarballs' sha256 by architecture.
func (m *criMirror) publish(t *testing.T, version string) map[string]string {
	sums := map[string]string{}
	files := map[string][]byte{}
	for _, arch := range []string{"amd64", "arm64"} {
		var buf bytes.Buffer
		gz := gzip.NewWriter(&buf)
		tw := tar.NewWriter(gz)
		body := []byte("#!/bin/sh\necho crictl " + version + " " + arch + "\n")
		tw.WriteHeader(&tar.Header{Name: "crictl", Mode: 0o755, Size: int64(len(body)), Typeflag: tar.TypeReg})
		tw.Write(body)
		tw.Close()
		gz.Close()
		sums[arch] = ghfake.SHA256(buf.Bytes())
		name := fmt.Sprintf("crictl-v%s-linux-%s.tar.gz", version, arch)
		files[name], files[name+".sha256"] = buf.Bytes(), []byte(sums[arch]+"\n")
	}
	m.Publish(criRepo, "v"+version, time.Date(2026, 8, 20, 10, 0, 0, 0, time.UTC), files)
	return sums
}

// TestBumpNewMinorOnStandInMirror: updeb bump cri-tools-1.36 --new-minor 1.37
// on the real recipe, with upstream a stand-in mirror reached through squid:
// the new recipe is written from the old one with the minor moved, pinned to
// the stand-in's verified bytes, and lints; the old recipe is untouched; a
// target that exists, a minor not released, a minor not newer, a recipe not
// of a series and a checksum file that disagrees are all refused without a
// file written. A plain bump then keeps release-sets.yaml in step.
func TestBumpNewMinorOnStandInMirror(t *testing.T) {
	sq := squid.ForTest(t)
	m := newCRIMirror(t)
	m.publish(t, "1.36.0")
	m.publish(t, "1.36.1")
	sums := m.publish(t, "1.37.0")

	root := t.TempDir()
	recipes := filepath.Join(root, "recipes")
	os.MkdirAll(recipes, 0o755)
	original, err := os.ReadFile("../../recipes/cri-tools-1.36.yaml")
	if err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(recipes, "cri-tools-1.36.yaml")
	os.WriteFile(old, original, 0o644)
	// A recipe that is no series, of packages of its own (two recipes
	// making one package file are refused together), which take the
	// place of the series' (two installing one path are refused too).
	crictl := strings.NewReplacer("name: cri-tools-1.36\n", "name: crictl\n", "  - name: cri-tools\n", "  - name: cri-tools-latest\n    conflicts: [cri-tools]\n    replaces: [cri-tools]\n").Replace(string(original))
	os.WriteFile(filepath.Join(recipes, "crictl.yaml"), []byte(crictl), 0o644)
	conf := filepath.Join(root, "updeb.yaml")
	os.WriteFile(conf, fmt.Appendf(nil, "proxy: %s\nfetch: {retries: 0}\ngithub-api: %s\nmirrors:\n  - {prefix: https://github.com/, to: %s}\n", sq.URL, m.API(), m.Mirror()), 0o644)
	common := []string{"--config", conf, "--recipes", recipes, "--cache", filepath.Join(root, "cache")}
	bump := func(args ...string) (int, string, string) {
		return runUpdeb(append(append([]string{}, common...), args...)...)
	}
	target := filepath.Join(recipes, "cri-tools-1.37.yaml")

	code, stdout, stderr := bump("bump", "cri-tools-1.36", "--new-minor", "1.37")
	if code != 0 || !strings.Contains(stdout, "cri-tools-1.37: new recipe "+target+" at 1.37.0 (release-date 2026-08-20), from cri-tools-1.36 1.36.0") {
		t.Fatalf("bump --new-minor: exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "verified: crictl amd64: checksum-file:") {
		t.Errorf("the pins were not vouched by the checksum file:\n%s", stdout)
	}
	got, _ := os.ReadFile(target)
	want := strings.NewReplacer(
		"cri-tools 1.36:", "cri-tools 1.37:", "Kubernetes 1.36", "Kubernetes 1.37", "kubernetes-1.36's", "kubernetes-1.37's",
		"name: cri-tools-1.36", "name: cri-tools-1.37", "version: 1.36.0", "version: 1.37.0", "release-date: 2026-04-24", "release-date: 2026-08-20",
		"83855e114566a8a8c44c548d515670f51de3a5e1da8b2effb59870e2f10c25a3", sums["amd64"],
		"68328594ccf780a80ae2b092d9f6ce484eec7cf540c275242e8fd954bfd95332", sums["arm64"],
		`track: "1.36.x"`, `track: "1.37.x"`, `">=1.36 <1.37"`, `">=1.37 <1.38"`,
	).Replace(string(original))
	if string(got) != want {
		t.Errorf("the new recipe:\n%s\nwant:\n%s", got, want)
	}
	if after, _ := os.ReadFile(old); !bytes.Equal(after, original) {
		t.Error("the old recipe changed")
	}
	if code, out, errs := runUpdeb("--recipes", recipes, "lint", "cri-tools-1.37"); code != 0 {
		t.Errorf("lint of the new recipe: exit %d\n%s%s", code, out, errs)
	}

	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"the target exists", []string{"bump", "cri-tools-1.36", "--new-minor", "1.37"}, 2, "the recipe of that minor exists: " + target},
		{"not released", []string{"bump", "cri-tools-1.36", "--new-minor", "1.38"}, 1, "no complete 1.38.x release"},
		{"not newer", []string{"bump", "cri-tools-1.36", "--new-minor", "1.35"}, 2, "--new-minor 1.35 is not newer than cri-tools-1.36 1.36.0"},
		{"not a series, not newer", []string{"bump", "crictl", "--new-minor", "1.36"}, 2, "--new-minor 1.36 is not newer than crictl 1.36.0"},
		{"not a series, bad minor", []string{"bump", "crictl", "--new-minor", "1"}, 2, `--new-minor "1": want MAJOR.MINOR`},
		{"a --to outside the minor", []string{"bump", "cri-tools-1.36", "--new-minor", "1.38", "--to", "1.37.0"}, 2, "--to 1.37.0 is not a 1.38.x version"},
		{"bad minor", []string{"bump", "cri-tools-1.36", "--new-minor", "next"}, 2, `--new-minor "next": want MAJOR.MINOR`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := bump(tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.stderr) {
				t.Errorf("exit %d, want %d; stderr (want %q):\n%s", code, tc.code, tc.stderr, stderr)
			}
		})
	}
	for _, f := range []string{"cri-tools-1.38.yaml", "cri-tools-1.35.yaml", "crictl-1.37.yaml"} {
		if _, err := os.Stat(filepath.Join(recipes, f)); err == nil {
			t.Errorf("%s was written", f)
		}
	}

	t.Run("a recipe not of a series moves in place", func(t *testing.T) {
		file := filepath.Join(recipes, "crictl.yaml")
		before, _ := os.ReadFile(file)
		code, stdout, stderr := bump("bump", "crictl", "--new-minor", "1.37")
		if code != 0 || !strings.Contains(stdout, "crictl: 1.36.0 -> 1.37.0 (release-date 2026-08-20), "+file+" rewritten") {
			t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
		}
		after, _ := os.ReadFile(file)
		want := strings.NewReplacer("version: 1.36.0", "version: 1.37.0", "release-date: 2026-04-24", "release-date: 2026-08-20",
			"83855e114566a8a8c44c548d515670f51de3a5e1da8b2effb59870e2f10c25a3", sums["amd64"],
			"68328594ccf780a80ae2b092d9f6ce484eec7cf540c275242e8fd954bfd95332", sums["arm64"],
			`track: "1.36.x"`, `track: "1.37.x"`).Replace(string(before))
		if string(after) != want {
			t.Errorf("crictl.yaml:\n%s\nwant:\n%s", after, want)
		}
	})

	t.Run("a checksum file that disagrees", func(t *testing.T) {
		os.Remove(target)
		m.Set(criRepo, "v1.37.0", "crictl-v1.37.0-linux-arm64.tar.gz.sha256", []byte(strings.Repeat("ab", 32)+"\n"))
		code, _, stderr := bump("bump", "cri-tools-1.36", "--new-minor", "1.37")
		if code != 1 || !strings.Contains(stderr, "does not match the upstream checksum file") {
			t.Errorf("exit %d\n%s", code, stderr)
		}
		if _, err := os.Stat(target); err == nil {
			t.Error("the new recipe was written")
		}
	})

	t.Run("bump keeps release-sets.yaml in step", func(t *testing.T) {
		sets := filepath.Join(root, "release-sets.yaml")
		text := "# ours\nsets:\n  - name: k136   # prod\n    components:\n      kubernetes: 1.36.4\n      cri-tools: 1.36.0   # paired\n  - name: upgrade\n    components:\n      kubernetes: 1.36.4\n      cri-tools: {from: 1.36.0, to: \"1.36.0\"}\n"
		os.WriteFile(sets, []byte(text), 0o644)
		code, stdout, stderr := bump("bump", "cri-tools-1.36", "--to", "1.36.1", "--set", sets)
		if code != 0 || !strings.Contains(stdout, sets+": 3 version(s) 1.36.0 -> 1.36.1") {
			t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
		}
		after, _ := os.ReadFile(sets)
		if want := strings.ReplaceAll(text, "1.36.0", "1.36.1"); string(after) != want {
			t.Errorf("release sets:\n%s\nwant:\n%s", after, want)
		}
	})

	// bump --new-minor names the new recipe in the release set of its
	// Kubernetes minor, in place, comments kept, so that compat checks it
	// at once.
	t.Run("the new minor joins its release set", func(t *testing.T) {
		os.Remove(target)
		m.publish(t, "1.37.0") // the checksum file the case before broke, mended
		sets := filepath.Join(root, "release-sets.yaml")
		text := "# ours\nsets:\n  - name: k136\n    components:\n      kubernetes: 1.36.4\n      cri-tools: recipe:cri-tools-1.36\n  - name: k137   # new\n    components:\n      kubernetes: 1.37.0\n      cri-tools: recipe:cri-tools-1.36   # until 1.37 is out\n"
		os.WriteFile(sets, []byte(text), 0o644)
		code, stdout, stderr := bump("bump", "cri-tools-1.36", "--new-minor", "1.37", "--set", sets)
		if code != 0 || !strings.Contains(stdout, sets+": release set k137 now names recipe:cri-tools-1.37") {
			t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
		}
		if after, _ := os.ReadFile(sets); string(after) != strings.Replace(text, "cri-tools: recipe:cri-tools-1.36   # until", "cri-tools: recipe:cri-tools-1.37   # until", 1) {
			t.Errorf("release sets:\n%s", after)
		}
		code, stdout, stderr = bump("compat", "--set", sets, "--now", "2026-11-24", "--state", t.TempDir())
		if !strings.Contains(stdout, "cri-tools") || strings.Contains(stdout+stderr, "unknown recipe") {
			t.Errorf("compat after the new minor: exit %d\n%s%s", code, stdout, stderr)
		}
	})
}
