package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/testkit/pgptest"
	"github.com/updeb/updeb/internal/testkit/testenv"
	"github.com/updeb/updeb/pkg/lockfile"
)

// hostileCorpus is pkg/deb's generated corpus of hostile .debs and its
// verdict table (see testdata/hostile/README.md).
const hostileCorpus = "../../testdata/hostile/deb"

type debVerdict struct{ file, verdict, want string }

func readVerdicts(t *testing.T) []debVerdict {
	t.Helper()
	f, err := os.Open(filepath.Join(hostileCorpus, "VERDICTS.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []debVerdict
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		f := strings.Split(sc.Text(), "\t")
		out = append(out, debVerdict{file: filepath.Join(hostileCorpus, f[0]), verdict: f[1], want: f[3]})
	}
	if len(out) < 50 {
		t.Fatalf("only %d hostile .debs in %s", len(out), hostileCorpus)
	}
	return out
}

// treeDigest is every path, mode and content under dir, for "unchanged".
func treeDigest(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		line := fmt.Sprintf("%s %v", p, info.Mode())
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			line += " " + hex.EncodeToString(sum[:])
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// publishFixture makes a signing key and a repository with one package.
func publishFixture(t *testing.T) (repoDir string, common []string) {
	t.Helper()
	testenv.RequireTool(t, "dpkg-deb")
	dir := t.TempDir()
	key := filepath.Join(dir, "k")
	if code, _, stderr := runCLI(t, "keys", "generate", "--name", "Test", "--email", "t@example.com", "--out", key); code != 0 {
		t.Fatalf("keys generate: exit %d: %s", code, stderr)
	}
	repoDir = filepath.Join(dir, "repo")
	common = []string{"publish", "--repo", repoDir, "--key", key + ".secret.asc", "--suite", "stable", "--component", "main"}
	good := buildDeb(t, dir, "base", "1.0-1", "base")
	if code, out, stderr := runCLI(t, append(common, good)...); code != 0 {
		t.Fatalf("publish: exit %d\n%s%s", code, out, stderr)
	}
	return repoDir, common
}

// TestInspectPublishHostileDebs runs inspect and publish on every .deb of
// the corpus: a refused one exits 2 with a message naming the file and the
// problem, and publish leaves the repository exactly as it was, even with a
// good package on the same command line; an accepted one passes inspect.
func TestInspectPublishHostileDebs(t *testing.T) {
	repoDir, common := publishFixture(t)
	fresh := buildDeb(t, t.TempDir(), "fresh", "1.0-1", "fresh")
	before := treeDigest(t, repoDir)
	for _, v := range readVerdicts(t) {
		code, _, stderr := runCLI(t, "inspect", v.file)
		switch {
		case v.verdict == "accept" && code != 0:
			t.Errorf("inspect %s: exit %d, want 0: %s", v.file, code, stderr)
			continue
		case v.verdict == "accept":
			continue
		case code != exitUsage || !strings.Contains(stderr, v.file) || !strings.Contains(stderr, v.want):
			t.Errorf("inspect %s: exit %d, want 2 and a message naming it with %q:\n%s", v.file, code, v.want, stderr)
		}
		code, _, stderr = runCLI(t, append(common, fresh, v.file)...)
		if code != exitUsage || !strings.Contains(stderr, v.file) || !strings.Contains(stderr, "the repository is unchanged") {
			t.Errorf("publish %s: exit %d, want 2 naming the file:\n%s", v.file, code, stderr)
		}
	}
	if after := treeDigest(t, repoDir); after != before {
		t.Errorf("the repository changed while publishing refused packages")
	}
}

// TestPublishLargestControlKeepsAptWorking: a package whose control file
// is just under the limit is published, and apt 2.6 reads the index with it
// and installs another package from the same suite (the field-1MiB case of
// the corpus is the one above the limit).
func TestPublishLargestControlKeepsAptWorking(t *testing.T) {
	testenv.RequireTool(t, "apt-get", "gpgv", "dpkg-deb")
	repoDir, common := publishFixture(t)
	dir := t.TempDir()
	tree := filepath.Join(dir, "tree")
	if err := os.MkdirAll(filepath.Join(tree, "DEBIAN"), 0o755); err != nil {
		t.Fatal(err)
	}
	head := "Package: big\nVersion: 1.0-1\nArchitecture: all\nMaintainer: T <t@example.com>\nDescription: test\n big\nX-Big: "
	ctl := head + strings.Repeat("b", 256<<10-len(head)-1) + "\n" // exactly the limit
	if err := os.WriteFile(filepath.Join(tree, "DEBIAN/control"), []byte(ctl), 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.deb")
	testenv.Run(t, "dpkg-deb", "--root-owner-group", "-Zgzip", "--build", tree, big)
	if code, out, stderr := runCLI(t, append(common, big)...); code != 0 {
		t.Fatalf("publish: exit %d\n%s%s", code, out, stderr)
	}
	apt := aptFor(t, repoDir, filepath.Join(repoDir, "archive-keyring.gpg"), "stable", "main")
	if out, err := apt("update"); err != nil || strings.Contains(out, "E: ") || strings.Contains(out, "W: ") {
		t.Fatalf("apt-get update: %v\n%s", err, out)
	}
	if out, err := apt("install", "-y", "base"); err != nil {
		t.Fatalf("apt-get install base: %v\n%s", err, out)
	}
}

// aptFor returns a function running apt-get confined to a temporary folder,
// with the repository as its only source (file: URI, signed-by keyring) and
// a throwaway root to install into.
func aptFor(t *testing.T, repoDir, keyring, suite, component string) func(args ...string) (string, error) {
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	for _, d := range []string{"etc/sources.list.d", "etc/apt.conf.d", "etc/preferences.d", "state/lists/partial", "cache/archives/partial",
		"root/var/lib/dpkg/info", "root/var/lib/dpkg/updates", "root/var/lib/dpkg/triggers"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range map[string]string{
		"root/var/lib/dpkg/status": "",
		"etc/sources.list":         fmt.Sprintf("deb [signed-by=%s] file:%s %s %s\n", keyring, repoDir, suite, component),
		"apt.conf": fmt.Sprintf(`Dir "/"; Dir::Etc "%[1]s/etc"; Dir::Etc::SourceList "%[1]s/etc/sources.list";
Dir::Etc::SourceParts "%[1]s/etc/sources.list.d"; Dir::Etc::Preferences "%[1]s/etc/preferences";
Dir::Etc::PreferencesParts "%[1]s/etc/preferences.d"; Dir::Etc::Parts "%[1]s/etc/apt.conf.d";
Dir::State "%[1]s/state"; Dir::State::status "%[2]s/var/lib/dpkg/status"; Dir::Cache "%[1]s/cache";
APT::Architecture "amd64"; APT::Sandbox::User "root"; Acquire::Languages "none"; Debug::NoLocking "1";
DPkg::Options { "--root=%[2]s"; "--admindir=%[2]s/var/lib/dpkg"; "--force-script-chrootless"; "--force-not-root"; "--log=/dev/null"; };
DPkg::Path "/usr/sbin:/usr/bin:/sbin:/bin";
`, dir, root),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return func(args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "apt-get", append([]string{"-q"}, args...)...)
		cmd.Env = append(os.Environ(), "APT_CONFIG="+filepath.Join(dir, "apt.conf"), "DEBIAN_FRONTEND=noninteractive", "LC_ALL=C")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
}

// interruptAfter runs updeb with args in a second process (the test
// binary as updeb's main, see TestFetchHelperProcess), sends sig after
// wait, and returns its exit code and stderr once it has exited, failing
// the test if it finished before the signal or runs 10 s after it.
func interruptAfter(t *testing.T, wait time.Duration, sig syscall.Signal, args ...string) (int, string) {
	t.Helper()
	h := startHelper(t, nil, args...)
	h.runningAfter(t, wait)
	return h.stopBy(t, sig)
}

// helperProcess is updeb's main (TestFetchHelperProcess) running as a child.
type helperProcess struct {
	cmd    *exec.Cmd
	done   chan error
	stderr bytes.Buffer
}

// startHelper starts updeb's main with args, through the command wrapper
// names first (nohup, ...) if any.
func startHelper(t *testing.T, wrapper []string, args ...string) *helperProcess {
	t.Helper()
	argv := append(append(append([]string(nil), wrapper...), os.Args[0], "-test.run=^TestFetchHelperProcess$", "--"), args...)
	h := &helperProcess{cmd: exec.Command(argv[0], argv[1:]...), done: make(chan error, 1)}
	h.cmd.Env = append(os.Environ(), "UPDEB_TEST_HELPER=1")
	h.cmd.Stderr = &h.stderr
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { h.done <- h.cmd.Wait() }()
	return h
}

// runningAfter fails the test if the process ends within wait.
func (h *helperProcess) runningAfter(t *testing.T, wait time.Duration) {
	t.Helper()
	select {
	case err := <-h.done:
		t.Fatalf("finished before the signal (%v): the input is not slow enough\n%s", err, h.stderr.String())
	case <-time.After(wait):
	}
}

// stopBy sends sig and waits up to 10 s for the process to end: its exit
// code and standard error.
func (h *helperProcess) stopBy(t *testing.T, sig syscall.Signal) (int, string) {
	t.Helper()
	sent := time.Now()
	if err := h.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case <-h.done:
	case <-time.After(10 * time.Second):
		h.cmd.Process.Kill()
		t.Fatalf("still running 10 s after %v", sig)
	}
	t.Logf("exited %v %v after %v", h.cmd.ProcessState, sig, time.Since(sent))
	return h.cmd.ProcessState.ExitCode(), h.stderr.String()
}

// TestHangup: SIGHUP (the terminal or SSH session went away) stops a
// command as SIGINT does, with exit 130; under nohup, which starts it with
// SIGHUP ignored, the command goes on until it ends or is stopped, and so
// does a shell's background job, started with SIGINT ignored, on SIGINT.
func TestHangup(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 5.7 GB sparse file")
	}
	big := filepath.Join(t.TempDir(), "big.deb")
	bigSparseDeb(t, big)
	code, stderr := interruptAfter(t, 1500*time.Millisecond, syscall.SIGHUP, "inspect", big)
	if code != exitInterrupted || !strings.Contains(stderr, "interrupted") {
		t.Errorf("SIGHUP: exit %d, want %d and a message saying it was interrupted:\n%s", code, exitInterrupted, stderr)
	}
	h := startHelper(t, []string{"nohup"}, "inspect", big)
	h.runningAfter(t, 1500*time.Millisecond)
	if err := h.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	h.runningAfter(t, 1500*time.Millisecond) // nohup's SIGHUP stays ignored
	if code, stderr := h.stopBy(t, syscall.SIGTERM); code != exitInterrupted {
		t.Errorf("under nohup, SIGHUP then SIGTERM: exit %d, want %d:\n%s", code, exitInterrupted, stderr)
	}
	// A script's background job ('updeb ... &') starts with SIGINT
	// ignored, as a shell starts it: the Ctrl-C meant for the script's
	// foreground step leaves it running.
	h = startHelper(t, []string{"sh", "-c", `trap '' INT; exec "$@"`, "sh"}, "inspect", big)
	h.runningAfter(t, 1500*time.Millisecond)
	if err := h.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	h.runningAfter(t, 1500*time.Millisecond)
	if code, stderr := h.stopBy(t, syscall.SIGTERM); code != exitInterrupted {
		t.Errorf("a background job, SIGINT then SIGTERM: exit %d, want %d:\n%s", code, exitInterrupted, stderr)
	}
}

// bigSparseDeb writes a valid .deb of about 5.7 GB whose data.tar (not
// compressed) holds three files of 1.9 GB of zeros: holes on disk, so it
// is cheap to make, and reading and hashing it takes many seconds.
func bigSparseDeb(t *testing.T, path string) {
	t.Helper()
	const fileSize = 1900 << 20
	header := func(name string, typ byte, size int64) []byte {
		var h [512]byte
		copy(h[:], name)
		copy(h[100:], fmt.Sprintf("%07o\x00%07o\x00%07o\x00%011o\x00%011o\x00", 0o644, 0, 0, size, 1723636800))
		h[156] = typ
		copy(h[257:], "ustar  \x00root")
		copy(h[297:], "root")
		copy(h[148:156], "        ")
		var sum int
		for _, c := range h {
			sum += int(c)
		}
		copy(h[148:], fmt.Sprintf("%06o\x00 ", sum))
		return h[:]
	}
	ctl := "Package: big\nVersion: 1.0-1\nArchitecture: all\nMaintainer: T <t@example.com>\nDescription: big\n big\n"
	var ctar []byte
	ctar = append(ctar, header("./", '5', 0)...)
	ctar = append(ctar, header("./control", '0', int64(len(ctl)))...)
	ctar = append(ctar, append([]byte(ctl), make([]byte, 512-len(ctl))...)...)
	ctar = append(ctar, make([]byte, 1024)...)
	dataSize := int64(512 + 3*(512+fileSize) + 1024)
	arHeader := func(name string, size int64) string {
		return fmt.Sprintf("%-16s%-12d%-6d%-6d%-8s%-10d`\n", name, 0, 0, 0, "100644", size)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := func(b []byte) {
		if _, err := f.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	w([]byte("!<arch>\n" + arHeader("debian-binary", 4) + "2.0\n" + arHeader("control.tar", int64(len(ctar)))))
	w(ctar)
	w([]byte(arHeader("data.tar", dataSize)))
	w(header("./", '5', 0))
	for i := range 3 {
		w(header(fmt.Sprintf("./zeros%d", i), '0', fileSize))
		if _, err := f.Seek(fileSize, 1); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.Seek(1023, 1); err != nil { // the end-of-archive blocks, as a hole
		t.Fatal(err)
	}
	w([]byte{0})
}

// TestStopOnSignal: SIGINT or SIGTERM to inspect or publish reading a big
// package stops it within seconds with a clear message and exit 130, and
// publish leaves the repository as it was.
func TestStopOnSignal(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 5.7 GB sparse file")
	}
	repoDir, common := publishFixture(t)
	big := filepath.Join(t.TempDir(), "big.deb")
	bigSparseDeb(t, big)
	before := treeDigest(t, repoDir)
	for _, tc := range []struct {
		name string
		args []string
		sig  syscall.Signal
	}{
		{"inspect SIGINT", []string{"inspect", big}, syscall.SIGINT},
		{"inspect SIGTERM", []string{"inspect", big}, syscall.SIGTERM},
		{"publish SIGTERM", append(append([]string(nil), common...), big), syscall.SIGTERM},
		{"publish SIGINT", append(append([]string(nil), common...), big), syscall.SIGINT},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stderr := interruptAfter(t, 1500*time.Millisecond, tc.sig, tc.args...)
			if code != exitInterrupted || !strings.Contains(stderr, "interrupted") {
				t.Errorf("exit %d, want %d and a message saying it was interrupted:\n%s", code, exitInterrupted, stderr)
			}
		})
	}
	if after := treeDigest(t, repoDir); after != before {
		t.Errorf("the repository changed after an interrupted publish")
	}
}

// TestVerifyStopsOnSignal: SIGINT or SIGTERM to verify-provenance or
// verify-signature hashing a big package stops it within seconds with exit
// 130, as for every command (docs/scripting.md), not once the whole file is
// read.
func TestVerifyStopsOnSignal(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 5.7 GB sparse file")
	}
	fx := pgptest.Get(t)
	dir := t.TempDir()
	big := filepath.Join(dir, "big_1.0-1_all.deb")
	bigSparseDeb(t, big)
	if err := os.WriteFile(big+".intoto.json", []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bundle := filepath.Join(dir, "bundle.json")
	if err := os.WriteFile(bundle, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		sig  syscall.Signal
	}{
		{"verify-provenance SIGINT", []string{"verify-provenance", "--keyring", fx.Keyring, big}, syscall.SIGINT},
		{"verify-signature OpenPGP SIGTERM", []string{"verify-signature", "--keyring", fx.Keyring, fx.Path("ed.asc"), big}, syscall.SIGTERM},
		{"verify-signature Sigstore SIGINT", []string{"verify-signature", "--bundle", bundle, "--sigstore-identity", "a@example.org",
			"--sigstore-issuer", "https://accounts.google.com", big}, syscall.SIGINT},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stderr := interruptAfter(t, 1500*time.Millisecond, tc.sig, tc.args...)
			if code != exitInterrupted || !strings.Contains(stderr, "interrupted") {
				t.Errorf("exit %d, want %d and a message saying it was interrupted:\n%s", code, exitInterrupted, stderr)
			}
		})
	}
}

// TestBuildStopsOnSignal: SIGINT to a build reading and compressing a big
// upstream artifact stops it within seconds (exit 130) and leaves no
// package, provenance or temporary file in the output folder. (Measured:
// well under a second after the signal under -race on 2 loaded cores; the
// xz encoders check the context at every LZMA2 chunk, at most 2 MiB of
// input.)
func TestBuildStopsOnSignal(t *testing.T) {
	if testing.Short() {
		t.Skip("hashes and compresses a 400 MB artifact")
	}
	dir := t.TempDir()
	const size = 400 << 20
	mirror := filepath.Join(dir, "mirror")
	if err := os.MkdirAll(mirror, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(mirror, "big.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil { // zeros, as a hole
		t.Fatal(err)
	}
	f.Close()
	h := sha256.New()
	zeros := make([]byte, 1<<20)
	for range size >> 20 {
		h.Write(zeros)
	}
	recipes := filepath.Join(dir, "recipes")
	if err := os.MkdirAll(recipes, 0o755); err != nil {
		t.Fatal(err)
	}
	recipe := fmt.Sprintf(`name: big
version: 1.0.0
revision: "1"
release-date: 2026-03-14
homepage: https://big.example.org/
license: Apache-2.0
copyright: nobody
architectures: {amd64: amd64}
sources:
  - name: big
    url: https://big.example.org/big.bin
    sha256: {amd64: %s}
    signature: {none: "a test artifact"}
packages:
  - name: big
    summary: a big test package
    description: |
      Zeros.
    section: utils
    files:
      - {source: big, dest: /usr/share/big/big.bin}
`, hex.EncodeToString(h.Sum(nil)))
	if err := os.WriteFile(filepath.Join(recipes, "big.yaml"), []byte(recipe), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "updeb.yaml")
	if err := os.WriteFile(cfg, []byte("mirrors:\n  - {prefix: https://big.example.org/, to: mirror/}\nbuild:\n  maintainer: t <t@example.org>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	code, stderr := interruptAfter(t, 3*time.Second, syscall.SIGINT, "--config", cfg, "--recipes", recipes,
		"--cache", filepath.Join(dir, "cache"), "--out", out, "build", "big")
	if code != exitInterrupted || !strings.Contains(stderr, "interrupted") {
		t.Errorf("exit %d, want %d and a message saying it was interrupted:\n%s", code, exitInterrupted, stderr)
	}
	// The state folder and its lock may exist; nothing else may: no
	// package, no provenance, no temporary file, no record of a build.
	filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && p != filepath.Join(out, ".updeb-state", "lock") { // a flock file stays
			t.Errorf("%s left in the output folder after an interrupted build", p)
		}
		return nil
	})
}

// TestVerifySignatureHostile runs verify-signature on every case of
// testdata/hostile/sig (critical notations and subpackets): the exit code
// and message VERDICTS.tsv gives.
func TestVerifySignatureHostile(t *testing.T) {
	const dir = "../../testdata/hostile/sig"
	f, err := os.Open(filepath.Join(dir, "VERDICTS.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		n++
		c := strings.Split(sc.Text(), "\t")
		args := []string{"verify-signature", "--keyring", filepath.Join(dir, c[2]), filepath.Join(dir, c[0])}
		if c[1] != "-" {
			args = append(args, filepath.Join(dir, c[1]))
		} else {
			args = append(args[:1], append([]string{"--output", filepath.Join(t.TempDir(), "content")}, args[1:]...)...)
		}
		code, _, stderr := runCLI(t, args...)
		if want := c[4]; fmt.Sprint(code) != want || !strings.Contains(stderr, c[5]) {
			t.Errorf("%v: exit %d, want %s and %q in:\n%s", args, code, want, c[5], stderr)
		}
	}
	if n < 10 {
		t.Fatalf("%d cases in %s", n, dir)
	}
}

// TestWaitForLockSaid: a command that waits for a lock another updeb
// process holds (here a publish while the repository is locked) says so
// with the lock's path, instead of seeming to hang, and goes on once the
// lock is released. The lock is released once the notice is out (or after
// 30 s, and the test fails), whatever the machine's load.
func TestWaitForLockSaid(t *testing.T) {
	repoDir, common := publishFixture(t)
	l, err := lockfile.Acquire(context.Background(), filepath.Join(repoDir, ".updeb-lock"), 0)
	if err != nil {
		t.Fatal(err)
	}
	more := buildDeb(t, t.TempDir(), "more", "1.0-1", "more")
	var stderr lockedBuffer
	released := make(chan struct{})
	go func() {
		defer close(released)
		defer l.Unlock()
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if strings.Contains(stderr.String(), "waiting for a lock") {
				return
			}
		}
	}()
	var stdout bytes.Buffer
	code := run(context.Background(), append(append([]string{"--verbose"}, common...), more), &stdout, &stderr)
	<-released
	if code != 0 {
		t.Fatalf("publish after the lock was released: exit %d\n%s", code, stderr.String())
	}
	if got := stderr.String(); !strings.Contains(got, "waiting for a lock that another updeb process holds") || !strings.Contains(got, ".updeb-lock") {
		t.Errorf("publish waited for the repository's lock without saying so:\n%s", got)
	}
}

// TestLongLockWaitWarned: a run whose stderr is no terminal (cron, CI),
// which shows warnings but not info lines, says that it still waits for a
// lock, whose holder, and for how long, once the wait has lasted
// lockfile.WarnAfter: the notice at info level alone left a job that never
// ended (its holder stuck) without a line saying why. The first notice,
// after a second, stays an info line there. pkg/lockfile's
// TestLongWaitNoticedAgain runs the schedule of the notices.
func TestLongLockWaitWarned(t *testing.T) {
	for _, c := range []struct {
		waited time.Duration
		want   string // "": nothing printed
	}{
		{lockfile.NoticeAfter, ""},
		{lockfile.WarnAfter, "waited=10s"},
		{90 * time.Minute, "waited=1h30m0s"},
	} {
		var stderr bytes.Buffer
		g := &globalOptions{stderr: &stderr}
		g.lockWaitNotice("/srv/apt/.updeb-lock", "pid 1234 (updeb publish --repo /srv/apt)", c.waited)
		g.closeConsole()
		got := stderr.String()
		if c.want == "" {
			if got != "" {
				t.Errorf("after %v: %q, want nothing where stderr is no terminal", c.waited, got)
			}
			continue
		}
		for _, want := range []string{"warning", "still waiting for a lock", "/srv/apt/.updeb-lock", "pid 1234 (updeb publish --repo /srv/apt)", c.want} {
			if !strings.Contains(got, want) {
				t.Errorf("after %v: %q, want %q in it", c.waited, got, want)
			}
		}
	}
}

// lockedBuffer is a bytes.Buffer that one goroutine writes while another reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *lockedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *lockedBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}
