package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

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
			"1.2.0-1 -> 1.2.0-2", []string{`hello [amd64, arm64]: Section: "utils" -> "net"`}},
		{"key rotation is flagged, not failed", func(t *testing.T) {
			edit(t, hello, `revision: "1"`, `revision: "2"`)
			f, err := os.OpenFile(filepath.Join(repo, "keys", "demo-upstream.asc"), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.Write(outsider)
			f.Close()
		}, 0, map[string]gate.Status{"trust": gate.Warn, "version": gate.Pass},
			"source hello: keyring keys/demo-upstream.asc: key ", nil},
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
		}, 1, map[string]gate.Status{"lintian": gate.Fail}, "file-in-usr-local", []string{"hello [amd64, arm64]: + /usr/local/bin/hello (0755)", "hello [amd64, arm64]: - /usr/bin/hello (0755)"}},
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
			if sig := got["signature"]; sig.Status == gate.Pass && sig.Detail != "OpenPGP signature verified: hello (amd64: key BF6DE05C1AE1CEB285DE5044F3CB238093D0BB4B)" {
				t.Errorf("the signature PASS line does not name the signer: %q", sig.Detail)
			}
			if tt.code != 0 && !strings.Contains(stderr.String(), "hello: ") {
				t.Errorf("stderr does not name the failed check:\n%s", stderr.String())
			}
		})
	}
}

// TestVerifyTrustChanges runs updeb verify --base HEAD end to end on two
// trust changes, reading its text output as a reviewer does: a new recipe
// bringing a new keyring, and a trust-only edit (a key added to the
// keyring, the signer allow-list dropped) that keeps the version. Each is
// REVIEW lines naming the keys, exit 0; the trust-only edit's packages are
// byte for byte those of the base, so no new version is needed.
func TestVerifyTrustChanges(t *testing.T) {
	repo, _ := verifyRepo(t)
	signer := pgptest.NewSigner(t)
	outsiderKey := filepath.Join(t.TempDir(), "outsider.asc")
	outsider := signer.NewKey("Outsider <outsider@example.org>", outsiderKey)
	key, err := os.ReadFile(outsiderKey)
	if err != nil {
		t.Fatal(err)
	}
	const demoKey = "BF6DE05C1AE1CEB285DE5044F3CB238093D0BB4B"
	both := []string{demoKey, outsider}
	slices.Sort(both)
	hello := filepath.Join(repo, "recipes", "hello.yaml")
	common := []string{"--config", filepath.Join(repo, "updeb.yaml"), "--recipes", filepath.Join(repo, "recipes")}
	verify := func(t *testing.T, recipe string) (int, string, string) {
		return runCLI(t, append(common, "--cache", t.TempDir(), "-q", "verify", "--base", "HEAD", "--arch", "amd64", recipe)...)
	}
	build := func(t *testing.T) []byte {
		out := t.TempDir()
		if code, _, stderr := runCLI(t, append(common, "--cache", t.TempDir(), "-q", "build", "--out", out, "--arch", "amd64", "hello")...); code != 0 {
			t.Fatalf("build: exit %d\n%s", code, stderr)
		}
		deb, err := os.ReadFile(filepath.Join(out, "hello_1.2.0-1_amd64.deb"))
		if err != nil {
			t.Fatal(err)
		}
		return deb
	}
	lines := func(stdout, prefix string) []string {
		var out []string
		for _, l := range strings.Split(stdout, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), prefix) {
				out = append(out, strings.TrimSpace(l))
			}
		}
		return out
	}

	t.Run("new recipe with a new keyring", func(t *testing.T) {
		testenv.Run(t, "git", "-C", repo, "checkout", "-q", "--", ".")
		demo, err := os.ReadFile(filepath.Join(repo, "keys", "demo-upstream.asc"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, "keys", "next.asc"), append(demo, key...), 0o644); err != nil {
			t.Fatal(err)
		}
		text, err := os.ReadFile(hello)
		if err != nil {
			t.Fatal(err)
		}
		next := strings.NewReplacer("\nname: hello\n", "\nname: hello-next\n", "keys/demo-upstream.asc", "keys/next.asc").Replace(string(text))
		if err := os.WriteFile(filepath.Join(repo, "recipes", "hello-next.yaml"), []byte(next), 0o644); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(filepath.Join(repo, "recipes", "hello-next.yaml"))
		defer os.Remove(filepath.Join(repo, "keys", "next.asc"))
		code, stdout, stderr := verify(t, "hello-next")
		if code != 0 {
			t.Fatalf("exit %d, want 0 (REVIEW lines do not fail)\n%s\n%s", code, stdout, stderr)
		}
		want := []string{
			"REVIEW trust        new recipe hello-next (not at HEAD): review the trust of each of its sources (hello)",
			"REVIEW trust        source hello: keyring keys/next.asc (new source): 2 key(s): " + strings.Join(both, ", "),
			"REVIEW trust        source hello: signers " + demoKey + " (new source)",
			"REVIEW trust        source hello: cross-check against the upstream checksum file https://releases.example.org/hello/v{{.Version}}/hello-v{{.Version}}-linux-{{.Arch}}.tar.gz.sha256sum (new source)",
			// It ships package hello, recipe hello's: it takes it over.
			"REVIEW trust        package hello: shipped by recipe hello (recipes/hello.yaml) at HEAD, now by recipe hello-next (recipes/hello-next.yaml): apt installs the highest version of a package name whatever recipe built it, so on every node that has hello this recipe's package, from its own sources and trust, takes its place where its version is higher; review that recipe hello-next may take hello over before merging",
		}
		if got := lines(stdout, "REVIEW"); !slices.Equal(got, want) {
			t.Errorf("REVIEW lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		for _, w := range []string{"PASS   signature    OpenPGP signature verified: hello (amd64: key " + demoKey + ")",
			"PASS: 1 recipe(s), 0 failed check(s), 5 flagged for review",
			"!! 5 change(s) flagged REVIEW above"} {
			if !strings.Contains(stdout, w) {
				t.Errorf("output lacks %q:\n%s", w, stdout)
			}
		}
	})

	t.Run("trust-only edit keeps the version", func(t *testing.T) {
		testenv.Run(t, "git", "-C", repo, "checkout", "-q", "--", ".")
		before := build(t)
		f, err := os.OpenFile(filepath.Join(repo, "keys", "demo-upstream.asc"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.Write(key)
		f.Close()
		edit(t, hello, "      signers: ["+demoKey+"]\n", "")
		code, stdout, stderr := verify(t, "hello")
		if code != 0 {
			t.Fatalf("exit %d, want 0: a trust-only edit is REVIEW, never a version failure\n%s\n%s", code, stdout, stderr)
		}
		want := []string{
			"REVIEW trust        source hello: keyring keys/demo-upstream.asc: key " + outsider + " added",
			"REVIEW trust        source hello: signers: any key of keys/demo-upstream.asc now (were " + demoKey + ")",
		}
		if got := lines(stdout, "REVIEW"); !slices.Equal(got, want) {
			t.Errorf("REVIEW lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if w := "PASS   version      the packages are unchanged since HEAD (1.2.0-1)"; !strings.Contains(stdout, w) {
			t.Errorf("output lacks %q:\n%s", w, stdout)
		}
		if after := build(t); !bytes.Equal(before, after) {
			t.Errorf("the trust-only edit changed the package's bytes: the gate must ask for a new version")
		}
	})

	// The config is read from the working tree: a change that swaps the
	// Sigstore trusted root it names (a file of the repository) would make
	// signatures nobody trusted pass, and no recipe changed.
	t.Run("trusted root swapped", func(t *testing.T) {
		testenv.Run(t, "git", "-C", repo, "checkout", "-q", "--", ".")
		other, err := os.ReadFile(filepath.Join("..", "..", "pkg", "verify", "sigstore", "testdata", "trusted_root_scaffolding.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, "sigstore", "trusted_root.json"), other, 0o644); err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := verify(t, "hello")
		want := "REVIEW trust        the Sigstore trusted root sigstore/trusted_root.json is changed since HEAD"
		if code != 0 || !strings.Contains(stdout, "== configuration\n  "+want) || !strings.Contains(stdout, "1 flagged for review") {
			t.Fatalf("exit %d, want 0 and %q\n%s\n%s", code, want, stdout, stderr)
		}
		testenv.Run(t, "git", "-C", repo, "checkout", "-q", "--", ".")
		if _, stdout, _ := verify(t, "hello"); strings.Contains(stdout, "== configuration") {
			t.Errorf("the root as at the base is reviewed:\n%s", stdout)
		}
	})

	// The config itself: pointed at another trusted root the repository
	// already holds (no file changed), or given a mirror that sends an
	// upstream host to a folder of the change, whose bytes a bump then pins.
	t.Run("config pointed at another root and a mirror", func(t *testing.T) {
		testenv.Run(t, "git", "-C", repo, "checkout", "-q", "--", ".")
		testenv.Run(t, "cp", filepath.Join("..", "..", "pkg", "verify", "sigstore", "testdata", "trusted_root_scaffolding.json"), filepath.Join(repo, "sigstore", "other.json"))
		testenv.Run(t, "git", "-C", repo, "-c", "user.email=t@example.org", "-c", "user.name=t", "add", "sigstore/other.json")
		testenv.Run(t, "git", "-C", repo, "-c", "user.email=t@example.org", "-c", "user.name=t", "commit", "-q", "-m", "another root")
		cfg := filepath.Join(repo, "updeb.yaml")
		edit(t, cfg, "trusted-root: sigstore/trusted_root.json", "trusted-root: sigstore/other.json")
		edit(t, cfg, "mirrors:\n", "mirrors:\n  - {prefix: https://releases.example.org/pingd/, to: vendor/pingd/}\n")
		code, stdout, stderr := verify(t, "hello")
		want := []string{
			"REVIEW trust        the config updeb.yaml changes mirrors since HEAD: ",
			"REVIEW trust        the config updeb.yaml changes sigstore.trusted-root since HEAD: sigstore/other.json, was sigstore/trusted_root.json: ",
		}
		if code != 0 || !strings.Contains(stdout, "== configuration\n  "+want[0]) || !strings.Contains(stdout, "\n  "+want[1]) || !strings.Contains(stdout, "2 flagged for review") {
			t.Fatalf("exit %d, want 0 and %q\n%s\n%s", code, want, stdout, stderr)
		}
		testenv.Run(t, "git", "-C", repo, "checkout", "-q", "--", ".")
		if _, stdout, _ := verify(t, "hello"); strings.Contains(stdout, "== configuration") {
			t.Errorf("the config as at the base is reviewed:\n%s", stdout)
		}
	})
}

// verify --changed picks the recipes itself: it needs --base and takes no
// recipe names; with nothing changed it passes without building.
func TestVerifyChangedFlags(t *testing.T) {
	repo, _ := verifyRepo(t)
	common := []string{"--config", filepath.Join(repo, "updeb.yaml"), "--recipes", filepath.Join(repo, "recipes"), "--cache", t.TempDir(), "-q", "verify"}
	for _, args := range [][]string{{"--changed"}, {"--changed", "--base", "HEAD", "hello"}} {
		if code, _, stderr := runCLI(t, append(common, args...)...); code != 2 || !strings.Contains(stderr, "--changed goes with --base REV") {
			t.Errorf("%v: exit %d, want 2\n%s", args, code, stderr)
		}
	}
	testenv.Run(t, "git", "-C", repo, "checkout", "-q", "--", ".")
	if code, stdout, stderr := runCLI(t, append(common, "--changed", "--base", "HEAD")...); code != 0 || !strings.Contains(stdout, "PASS: 0 recipe(s)") {
		t.Errorf("nothing changed: exit %d\n%s%s", code, stdout, stderr)
	}
	// The note of what changed goes through the logger: an info record in a JSON log.
	noteArgs := append([]string{"--log-format", "json"}, slices.DeleteFunc(slices.Clone(common), func(a string) bool { return a == "-q" })...)
	if code, _, stderr := runCLI(t, append(noteArgs, "--changed", "--base", "HEAD")...); code != 0 || !strings.Contains(stderr, `"level":"INFO","msg":"0 recipe(s) changed since HEAD`) {
		t.Errorf("nothing changed, --log-format json: exit %d\n%s", code, stderr)
	}
}

// TestVerifyTMPDIRMissing: a TMPDIR that does not exist is an I/O error
// (exit 3) that names TMPDIR and says what to do, before anything is built.
func TestVerifyTMPDIRMissing(t *testing.T) {
	repo, _ := verifyRepo(t)
	missing := filepath.Join(t.TempDir(), "gone")
	t.Setenv("TMPDIR", missing)
	code, _, stderr := runCLI(t, "--config", filepath.Join(repo, "updeb.yaml"), "--recipes", filepath.Join(repo, "recipes"),
		"--cache", t.TempDir(), "verify", "--arch", "amd64", "hello")
	if code != exitNetwork || !strings.Contains(stderr, missing+" (TMPDIR)") || !strings.Contains(stderr, "point TMPDIR at a folder") {
		t.Errorf("exit %d, want %d and TMPDIR named with what to do:\n%s", code, exitNetwork, stderr)
	}
}

// verifyInLintian starts updeb verify on the demo's hello recipe with a
// stand-in lintian on PATH (testenv.StandInLintian) and returns once that
// lintian and its helper run: the process, a channel closed when it has
// ended, and the pids of the stand-in and of its helper.
func verifyInLintian(t *testing.T, tmpdir string) (cmd *exec.Cmd, done chan struct{}, stderr *bytes.Buffer, lintian, helper int) {
	repo, _ := verifyRepo(t)
	bin := t.TempDir()
	helperFile, lintianFile := testenv.StandInLintian(t, bin)
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	cmd = exec.Command(os.Args[0], "-test.run=^TestFetchHelperProcess$", "--", "--config", filepath.Join(repo, "updeb.yaml"),
		"--recipes", filepath.Join(repo, "recipes"), "--cache", t.TempDir(), "-q", "verify", "--arch", "amd64", "hello")
	cmd.Env = append(os.Environ(), "UPDEB_TEST_HELPER=1", "TMPDIR="+tmpdir)
	stderr = &bytes.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	done = make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	helper = testenv.WaitPID(t, helperFile, 60*time.Second, done)
	lintian = testenv.WaitPID(t, lintianFile, time.Second, done)
	t.Cleanup(func() { syscall.Kill(helper, syscall.SIGKILL) })
	return cmd, done, stderr, lintian, helper
}

// TestVerifyStopsInLintian: SIGTERM to updeb verify while lintian runs
// (a stand-in that starts a helper sharing its output and waits for it, as
// lintian does with file and objdump) ends verify within seconds with exit
// 130, and lintian and its helper with it.
func TestVerifyStopsInLintian(t *testing.T) {
	cmd, done, stderr, lintian, helper := verifyInLintian(t, t.TempDir())
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("verify still running 10 s after SIGTERM, in lintian:\n%s", stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted || !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("exit %d, want %d and a message saying it was interrupted:\n%s", code, exitInterrupted, stderr.String())
	}
	testenv.WaitGone(t, lintian, 5*time.Second)
	testenv.WaitGone(t, helper, 5*time.Second)
}

// TestVerifyKilledInLintian: lintian runs in a process group of its own, so
// a kill of updeb's group would not reach it; killed with SIGKILL, updeb
// takes lintian with it (its helper, orphaned, ends on its own). The killed
// verify leaves its folder in TMPDIR (two builds of the recipes): the next
// verify removes it, and leaves nothing when it ends.
func TestVerifyKilledInLintian(t *testing.T) {
	tmpdir := t.TempDir()
	cmd, done, _, lintian, _ := verifyInLintian(t, tmpdir)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-done
	testenv.WaitGone(t, lintian, 5*time.Second)
	killed, _ := filepath.Glob(filepath.Join(tmpdir, "*"))
	if len(killed) != 1 || !strings.HasPrefix(filepath.Base(killed[0]), "updeb-verify-") {
		t.Fatalf("TMPDIR after the kill: %v, want the killed verify's folder alone", killed)
	}
	next, done, stderr, _, _ := verifyInLintian(t, tmpdir)
	if _, err := os.Stat(killed[0]); !os.IsNotExist(err) {
		t.Errorf("the next verify, in lintian, left the killed verify's folder: %v", err)
	}
	if err := next.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-done
	if left, _ := filepath.Glob(filepath.Join(tmpdir, "*")); len(left) != 0 {
		t.Errorf("TMPDIR after a verify stopped with SIGTERM: %v\n%s", left, stderr)
	}
}

// TestPrintVerifyReportEscapesFileName: a recipe file whose name holds an
// escape sequence (ESC [8m conceals every line printed after it on a
// terminal, the REVIEW lines included) is named escaped in its header.
func TestPrintVerifyReportEscapesFileName(t *testing.T) {
	var out bytes.Buffer
	printVerifyReport(&out, &gate.Report{Recipes: []gate.RecipeReport{{
		Recipe: "hello", Version: "1.2.0-2", Base: "1.2.0-1", File: "recipes/hello\x1b[8m.yaml",
		Results: []gate.Result{{Check: "trust", Status: gate.Warn, Detail: "source hello: keyring keys/upstream.asc: key 16BF... added"}},
	}}, Warnings: 1})
	if strings.Contains(out.String(), "\x1b") || !strings.Contains(out.String(), `== hello 1.2.0-1 -> 1.2.0-2 (recipes/hello\x1b[8m.yaml)`) {
		t.Errorf("report:\n%s", out.String())
	}
}

// TestVerifyBuildsWithConfigCompression: verify builds the packages updeb
// build makes under the config (build.compression: gzip here), so that
// lintian and the reproducibility check look at those bytes, not at the
// default xz packages.
func TestVerifyBuildsWithConfigCompression(t *testing.T) {
	repo, _ := verifyRepo(t)
	edit(t, filepath.Join(repo, "updeb.yaml"), "build:\n", "build:\n  compression: gzip\n")
	// A stand-in lintian that keeps a copy of the packages it is given.
	bin, seen := t.TempDir(), t.TempDir()
	script := "#!/bin/sh\nfor a; do case $a in *.deb) cp \"$a\" " + seen + "/;; esac; done\n"
	if err := os.WriteFile(filepath.Join(bin, "lintian"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	code, stdout, stderr := runCLI(t, "--config", filepath.Join(repo, "updeb.yaml"), "--recipes", filepath.Join(repo, "recipes"),
		"--cache", t.TempDir(), "-q", "verify", "--arch", "amd64", "hello")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	debs, _ := filepath.Glob(filepath.Join(seen, "*.deb"))
	if len(debs) == 0 {
		t.Fatalf("lintian was given no package:\n%s", stdout)
	}
	for _, d := range debs {
		if members := string(testenv.Run(t, "ar", "t", d)); !strings.Contains(members, "data.tar.gz") {
			t.Errorf("%s: %s, want data.tar.gz (build.compression: gzip)", filepath.Base(d), strings.TrimSpace(members))
		}
	}
}

// TestVerifyLintsZstdAsXZCopies: under build.compression: zstd, which
// Debian 12's lintian cannot read (malformed-deb-archive on every
// package), verify passes lintian on xz copies of the packages and its
// line says so.
func TestVerifyLintsZstdAsXZCopies(t *testing.T) {
	repo, _ := verifyRepo(t)
	edit(t, filepath.Join(repo, "updeb.yaml"), "build:\n", "build:\n  compression: zstd\n")
	code, stdout, stderr := runCLI(t, "--config", filepath.Join(repo, "updeb.yaml"), "--recipes", filepath.Join(repo, "recipes"),
		"--cache", t.TempDir(), "-q", "--json", "verify", "--arch", "amd64", "hello")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	var rep gate.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || len(rep.Recipes) != 1 {
		t.Fatalf("report: %v\n%s", err, stdout)
	}
	i := slices.IndexFunc(rep.Recipes[0].Results, func(r gate.Result) bool { return r.Check == "lintian" })
	if want := "(xz copies of the zstd packages: Debian 12's lintian reads no zstd)"; i < 0 || !strings.HasSuffix(rep.Recipes[0].Results[i].Detail, want) {
		t.Errorf("lintian's line does not end in %q:\n%s", want, stdout)
	}
}

// TestVerifyIgnoresSourceDateEpoch: verify builds twice under the recipe's
// release-date whatever SOURCE_DATE_EPOCH the environment sets (the
// reproducibility check passes), and says so once for the run, not once
// per build.
func TestVerifyIgnoresSourceDateEpoch(t *testing.T) {
	repo, _ := verifyRepo(t)
	t.Setenv("SOURCE_DATE_EPOCH", "1700000000")
	code, stdout, stderr := runCLI(t, "--config", filepath.Join(repo, "updeb.yaml"), "--recipes", filepath.Join(repo, "recipes"),
		"--cache", t.TempDir(), "verify", "--arch", "amd64", "hello")
	if code != 0 || strings.Count(stderr, "warning: SOURCE_DATE_EPOCH=1700000000 in the environment is ignored: each recipe's release-date:") != 1 {
		t.Errorf("verify with SOURCE_DATE_EPOCH: exit %d, want 0 and one warning that it is ignored\n%s%s", code, stdout, stderr)
	}
}
