package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/gate"
	"github.com/updeb/updeb/internal/testkit/pgptest"
	"github.com/updeb/updeb/internal/testkit/testenv"
)

// verifyRepo makes a git repository holding a copy of the demo project
// (recipes, keys) with one commit, and a mirror copy beside it.
func verifyRepo(t *testing.T) (repo, mirror string) {
	t.Helper()
	testenv.RequireTool(t, "git", "lintian", "gpg")
	dir := t.TempDir()
	repo, mirror = filepath.Join(dir, "repo"), filepath.Join(dir, "mirror")
	demo := filepath.Join("..", "..", "testdata", "demo")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	testenv.Run(t, "cp", "-a", filepath.Join(demo, "recipes"), filepath.Join(demo, "keys"), filepath.Join(demo, "sigstore"), repo)
	testenv.Run(t, "cp", "-a", filepath.Join(demo, "mirror"), mirror)
	cfg := "mirrors:\n  - {prefix: https://releases.example.org/, to: ../mirror/releases.example.org/}\nbuild:\n  maintainer: updeb tests <tests@example.org>\n" +
		"sigstore: {trusted-root: sigstore/trusted_root.json}\n"
	if err := os.WriteFile(filepath.Join(repo, "updeb.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) {
		testenv.Run(t, "git", append([]string{"-C", repo, "-c", "user.email=t@example.org", "-c", "user.name=t"}, args...)...)
	}
	git("init", "-q")
	git("add", "-A")
	git("commit", "-q", "-m", "base")
	return repo, mirror
}

func edit(t *testing.T, file, old, new string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("%s has no %q", file, old)
	}
	if err := os.WriteFile(file, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestVerifyBump runs updeb verify --base HEAD on bumps of the demo's hello
// recipe (a tarball with a detached signature and a checksum file): a good
// bump passes; a key rotation passes flagged for review; a digest mismatch, a
// version that does not increase, a signature by a key outside the keyring
// and a package lintian refuses fail, naming the cause.
func TestVerifyBump(t *testing.T) {
	repo, mirror := verifyRepo(t)
	hello := filepath.Join(repo, "recipes", "hello.yaml")
	tarball := filepath.Join(mirror, "releases.example.org/hello/v1.2.0/hello-v1.2.0-linux-amd64.tar.gz")
	signer := pgptest.NewSigner(t)
	outsiderKey := filepath.Join(t.TempDir(), "outsider.asc")
	signer.NewKey("Outsider <outsider@example.org>", outsiderKey)
	outsider, err := os.ReadFile(outsiderKey)
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name    string
		change  func(t *testing.T)
		code    int
		checks  map[string]gate.Status // check -> status it must have (for hello)
		detail  string                 // in the failing (or warning) check's detail
		changes []string               // in hello's changes
	}{
		{"good bump", func(t *testing.T) {
			edit(t, hello, `revision: "1"`, `revision: "2"`)
			edit(t, hello, "section: utils", "section: net")
		}, 0, map[string]gate.Status{"version": gate.Pass, "lintian": gate.Pass, "reproducible": gate.Pass, "signature": gate.Pass, "cross-check": gate.Pass, "trust": gate.Pass},
			"1.2.0-1 -> 1.2.0-2", []string{`hello [amd64]: Section: "utils" -> "net"`}},
		{"key rotation is flagged, not failed", func(t *testing.T) {
			edit(t, hello, `revision: "1"`, `revision: "2"`)
			f, err := os.OpenFile(filepath.Join(repo, "keys", "demo-upstream.asc"), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.Write(outsider)
			f.Close()
		}, 0, map[string]gate.Status{"trust": gate.Warn, "version": gate.Pass},
			"keyring keys/demo-upstream.asc changed", nil},
		{"digest mismatch", func(t *testing.T) {
			edit(t, hello, `revision: "1"`, `revision: "2"`)
			edit(t, hello, "019250d9e08f5242159d5dcea64c8c7cf77924cd8c69460ae7af5d4ad51d032e", "119250d9e08f5242159d5dcea64c8c7cf77924cd8c69460ae7af5d4ad51d032e")
		}, 1, map[string]gate.Status{"digest": gate.Fail}, "119250d9e08f5242159d5dcea64c8c7cf77924cd8c69460ae7af5d4ad51d032e", nil},
		{"version does not increase", func(t *testing.T) {
			edit(t, hello, "section: utils", "section: net")
		}, 1, map[string]gate.Status{"version": gate.Fail, "lintian": gate.Pass}, "does not increase over 1.2.0-1", nil},
		{"signature by a key outside the keyring", func(t *testing.T) {
			edit(t, hello, `revision: "1"`, `revision: "2"`)
			signer.Sign("Outsider <outsider@example.org>", tarball, tarball+".asc")
		}, 1, map[string]gate.Status{"signature": gate.Fail}, "signature", nil},
		{"lintian error", func(t *testing.T) {
			edit(t, hello, `revision: "1"`, `revision: "2"`)
			edit(t, hello, "dest: /usr/bin/hello,", "dest: /usr/local/bin/hello,")
		}, 1, map[string]gate.Status{"lintian": gate.Fail}, "file-in-usr-local", []string{"hello [amd64]: + /usr/local/bin/hello (0755)", "hello [amd64]: - /usr/bin/hello (0755)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testenv.Run(t, "git", "-C", repo, "checkout", "-q", "--", ".")
			testenv.Run(t, "cp", "-a", filepath.Join("..", "..", "testdata", "demo", "mirror", "releases.example.org"), mirror)
			tt.change(t)
			// A cache per case: signatures are cached by URL.
			args := []string{"--config", filepath.Join(repo, "updeb.yaml"), "--recipes", filepath.Join(repo, "recipes"),
				"--cache", t.TempDir(), "-q", "--json", "verify", "--base", "HEAD", "--arch", "amd64", "hello"}
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), args, &stdout, &stderr)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, stdout.String(), stderr.String())
			}
			var rep gate.Report
			if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil || len(rep.Recipes) != 1 {
				t.Fatalf("report: %v\n%s", err, stdout.String())
			}
			got := map[string]gate.Result{}
			for _, x := range rep.Recipes[0].Results {
				if prev, ok := got[x.Check]; !ok || prev.Status != gate.Fail {
					got[x.Check] = x
				}
			}
			foundDetail := false
			for name, want := range tt.checks {
				if got[name].Status != want {
					t.Errorf("check %s: %s (%s), want %s", name, got[name].Status, got[name].Detail, want)
				}
				if strings.Contains(got[name].Detail, tt.detail) {
					foundDetail = true
				}
			}
			if !foundDetail {
				t.Errorf("no check names %q:\n%s", tt.detail, stdout.String())
			}
			for _, c := range tt.changes {
				if !strings.Contains(strings.Join(rep.Recipes[0].Changes, "\n"), c) {
					t.Errorf("changes %q lack %q", rep.Recipes[0].Changes, c)
				}
			}
			if tt.code != 0 && !strings.Contains(stderr.String(), "hello: ") {
				t.Errorf("stderr does not name the failed check:\n%s", stderr.String())
			}
		})
	}
}
