package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/repo"
	"github.com/updeb/updeb/internal/testkit/testenv"
)

// TestFullDisk: a build whose output folder's disk is full, and a fetch
// whose cache's disk is full, end with exit 3 and a message naming the full
// disk and its folder (no retries, no proxy hint), leaving nothing partial.
func TestFullDisk(t *testing.T) {
	args, _ := demoProject(t)
	disk := testenv.TinyDisk(t, "64k")

	// the output folder: the packages do not fit (the cache does, elsewhere)
	out := filepath.Join(disk, "out")
	code, stdout, stderr := runCLI(t, append(args, "--out", out, "build", "--arch", "amd64", "hello")...)
	// The hint names the output folder, not the build's temporary folder
	// inside it (out/.updeb-build-2016741208), gone when it is read.
	if code != exitNetwork || !strings.Contains(stderr, "no space left on device") || !strings.Contains(stderr, "hint: the disk holding "+out+" is full") ||
		strings.Contains(stderr, "proxy") {
		t.Errorf("build onto a full disk: exit %d\n%s%s", code, stdout, stderr)
	}
	if left, _ := filepath.Glob(filepath.Join(out, ".updeb-build-*")); len(left) > 0 {
		t.Errorf("staging left behind: %v", left)
	}

	// the cache: the downloads do not fit
	cache := filepath.Join(disk, "cache")
	os.RemoveAll(out)
	fetchArgs := append(append([]string{}, args...), "--cache", cache, "fetch", "hello", "--arch", "amd64")
	code, stdout, stderr = runCLI(t, fetchArgs...)
	if code != exitNetwork || !strings.Contains(stderr, "the disk holding "+cache+" is full") || strings.Contains(stderr, "check the proxy") || strings.Contains(stderr, "no proxy was used") ||
		strings.Contains(stderr, "attempts") {
		t.Errorf("fetch into a full cache: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestVerifyFullDisk: verify whose TMPDIR fills while it builds exits 3,
// as its help says of a full disk, with a hint naming TMPDIR: it reported a
// failed build check (exit 1, as for a recipe that does not build) that
// named its build folder, gone when it was read. A TMPDIR that fills during
// the second build is not reported as a build that is not reproducible
// ("a second build into a fresh folder differs: ... missing from the
// second build"), a false alarm: the second build could not be made.
func TestVerifyFullDisk(t *testing.T) {
	args, _ := demoProject(t)
	disk := testenv.TinyDisk(t, "600k")
	t.Setenv("TMPDIR", disk)
	code, stdout, stderr := runCLI(t, append(args, "verify", "hello", "--arch", "amd64")...)
	if want := "hint: the disk holding " + disk + " is full"; code != exitNetwork || !strings.Contains(stderr, want) {
		t.Errorf("verify with a full TMPDIR: exit %d, want %d and %q\n%s%s", code, exitNetwork, want, stdout, stderr)
	}
	if left, _ := os.ReadDir(disk); len(left) > 0 {
		t.Errorf("verify left %v in TMPDIR", left)
	}

	// Room for one build, not two.
	disk = testenv.TinyDisk(t, "1500k")
	t.Setenv("TMPDIR", disk)
	_, stdout, stderr = runCLI(t, append(args, "--json", "verify", "hello", "--arch", "amd64")...)
	var rep struct {
		Recipes []struct {
			Results []struct{ Check, Status, Detail string }
		}
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || len(rep.Recipes) != 1 {
		t.Fatalf("verify --json: %v\n%s%s", err, stdout, stderr)
	}
	found := false
	for _, r := range rep.Recipes[0].Results {
		if r.Check == "reproducible" {
			found = true
			if want := "the second build could not be made, nothing was compared: hello (amd64): the disk holding " + disk + " is full"; !strings.HasPrefix(r.Detail, want) {
				t.Errorf("a second build onto a full disk: %s %q, want %q", r.Status, r.Detail, want)
			}
		}
	}
	if !found {
		t.Errorf("no reproducible check:\n%s", stdout)
	}
}

// TestKeysGenerateFullDisk: keys generate whose disk fills after the secret
// key is written (no inode left for the public key) exits 3 and leaves no
// key file: a secret key without its public halves would make the next
// try refuse ("already exists") until someone deletes it by hand.
//
// The error and its hint name the key file and its folder, not the
// temporary folder of the run (".repo.keys-generate-1937330976", gone when
// they are read), whether the disk fills as that folder is made or as the
// key files are written into it.
func TestKeysGenerateFullDisk(t *testing.T) {
	for _, inodes := range []string{"2", "3"} { // the root and one file; and its lock
		disk := testenv.TinyDisk(t, "64k,nr_inodes="+inodes)
		prefix := filepath.Join(disk, "repo")
		code, stdout, stderr := runCLI(t, "keys", "generate", "--name", "Test", "--email", "t@example.com", "--out", prefix)
		if code != exitNetwork || !strings.Contains(stderr, "no space left on device") {
			t.Errorf("keys generate onto a full disk (%s inodes): exit %d\n%s%s", inodes, code, stdout, stderr)
		}
		if !strings.Contains(stderr, prefix+".secret.asc: no space left on device") || !strings.Contains(stderr, "hint: the disk holding "+disk+" is full") ||
			strings.Contains(stderr, "keys-generate") {
			t.Errorf("keys generate onto a full disk (%s inodes): the error does not name the key file and its folder:\n%s", inodes, stderr)
		}
		if left, _ := filepath.Glob(prefix + "*"); len(left) > 0 {
			t.Errorf("key files left behind: %v", left)
		}
	}
}

// TestKeysGenerateInterrupted: keys generate stopped by a signal while it
// searches an RSA key's primes (seconds, which nothing interrupts) exits 130
// at once and writes no key file; it used to finish the search, write the
// three files and exit 0.
func TestKeysGenerateInterrupted(t *testing.T) {
	prefix := filepath.Join(t.TempDir(), "repo")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("terminated signal received"))
	var stdout, stderr bytes.Buffer
	code := run(ctx, []string{"keys", "generate", "--type", "rsa4096", "--name", "Test", "--email", "t@example.com", "--out", prefix}, &stdout, &stderr)
	if code != exitInterrupted || !strings.Contains(stderr.String(), "interrupted (terminated signal received)") {
		t.Errorf("keys generate interrupted: exit %d, want %d\n%s%s", code, exitInterrupted, &stdout, &stderr)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(prefix), "*")); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestKeysGenerateKilled kills keys generate with SIGKILL at times spread
// over one run, from its start to its end. After each kill the next run
// with the same prefix recovers without a human: it writes the three key
// files, or refuses only because the killed run had written all three,
// whole; no partial file and no folder of a killed run is left.
func TestKeysGenerateKilled(t *testing.T) {
	t.Parallel() // mostly waiting for the processes
	dir := t.TempDir()
	start := func(prefix string) *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^TestFetchHelperProcess$", "--", "keys", "generate", "--name", "Test", "--email", "t@example.com", "--out", prefix)
		cmd.Env = append(os.Environ(), "UPDEB_TEST_HELPER=1")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	began := time.Now()
	if err := start(filepath.Join(dir, "whole")).Wait(); err != nil {
		t.Fatal(err)
	}
	whole := time.Since(began)
	const kills = 40
	for i := range kills {
		prefix := filepath.Join(dir, fmt.Sprint(i), "repo")
		if err := os.MkdirAll(filepath.Dir(prefix), 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := start(prefix)
		time.Sleep(whole * time.Duration(i) / kills)
		cmd.Process.Signal(syscall.SIGKILL) //nolint:errcheck // it may have finished
		cmd.Wait()                          //nolint:errcheck // killed on purpose
		left, _ := filepath.Glob(prefix + ".*")
		code, _, stderr := runCLI(t, "keys", "generate", "--name", "Test", "--email", "t@example.com", "--out", prefix)
		if code != 0 && (code != exitUsage || len(left) != 3 || !strings.Contains(stderr, "already exists")) {
			t.Fatalf("kill %d after %v left %v; the next run: exit %d\n%s", i, whole*time.Duration(i)/kills, left, code, stderr)
		}
		names, _ := filepath.Glob(prefix + "*")
		work, _ := filepath.Glob(filepath.Join(filepath.Dir(prefix), keysWorkPrefix(prefix)+"*", "*"))
		// A folder of a run killed while making its lock, which holds
		// nothing else, is left for a minute (see lockfile.TempDir).
		work = slices.DeleteFunc(work, func(p string) bool { return filepath.Base(p) == ".lock.new" })
		if len(names) != 3 || len(work) > 0 {
			t.Fatalf("kill %d: after the next run the folder holds %v and %v", i, names, work)
		}
		key, err := os.Open(prefix + ".secret.asc")
		if err != nil {
			t.Fatal(err)
		}
		_, err = repo.ReadSigner(key, key.Name())
		key.Close()
		if err != nil {
			t.Fatalf("kill %d: %v", i, err)
		}
	}
}

// TestStdoutFull: results that cannot be written to stdout (/dev/full: a
// full disk) fail every command with exit 3 and say so, the text of lint and
// the help as well as --json; the text used to be lost with exit 0.
func TestStdoutFull(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer full.Close()
	args, _ := demoProject(t)
	for _, line := range [][]string{
		append(slices.Clone(args), "lint"),
		append(slices.Clone(args), "--json", "lint"),
		{"help"},
		{"--version"},
	} {
		var stderr bytes.Buffer
		code := run(context.Background(), line, full, &stderr)
		if code != exitNetwork || !strings.Contains(stderr.String(), "error: the results could not be written to stdout: write /dev/full: no space left on device") ||
			!strings.Contains(stderr.String(), "hint: what the command did besides printing is done") {
			t.Errorf("updeb %s >/dev/full: exit %d, want %d\n%s", strings.Join(line, " "), code, exitNetwork, &stderr)
		}
	}
}
