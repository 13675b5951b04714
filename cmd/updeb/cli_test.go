package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
)

// runCLI runs the command line in-process and returns the exit code, stdout
// and stderr: every CLI test goes through the same run() as main.
func runCLI(t testing.TB, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// runCLIUnprivileged returns what runs updeb as runCLI does, as a user
// without root's rights over files: runCLI itself when the tests do not run
// as root; as root (who reads any file), a copy of the test binary in dir
// run as nobody, dir and the folders above it opened to nobody.
func runCLIUnprivileged(t *testing.T, dir string) func(args ...string) (int, string, string) {
	t.Helper()
	if os.Geteuid() != 0 {
		return func(args ...string) (int, string, string) { return runCLI(t, args...) }
	}
	for d := dir; d != filepath.Dir(d) && d != os.TempDir(); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	exe := filepath.Join(dir, "updeb.test")
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(exe, append([]string{"-test.run=^TestFetchHelperProcess$", "--"}, args...)...)
		cmd.Env = append(os.Environ(), "UPDEB_TEST_HELPER=1")
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		cmd.Run() //nolint:errcheck // its exit status is checked
		return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
	}
}

// TestVersionFlag: 'updeb --version' prints what 'updeb version' does (its
// help gives them as one): it printed cobra's "updeb version V" instead.
func TestVersionFlag(t *testing.T) {
	code, cmd, stderr := runCLI(t, "version")
	want := "updeb " + version + " (" + runtime.Version() + ", " + runtime.GOOS + "/" + runtime.GOARCH + ")\n"
	if code != 0 || cmd != want || stderr != "" {
		t.Errorf("updeb version: exit %d, %q, want %q\n%s", code, cmd, want, stderr)
	}
	if code, flag, stderr := runCLI(t, "--version"); code != 0 || flag != want || stderr != "" {
		t.Errorf("updeb --version: exit %d, %q, want %q\n%s", code, flag, want, stderr)
	}
	// --version is the version command, also for --json and for the
	// flags and arguments every command checks: cobra's printed text
	// under --json, and the version, exit 0, for a mistyped --config or
	// 'updeb --version repo remove hello'.
	_, jsonWant, _ := runCLI(t, "version", "--json")
	if code, got, stderr := runCLI(t, "--json", "--version"); code != 0 || got != jsonWant || stderr != "" {
		t.Errorf("updeb --json --version: exit %d, %q, want %q\n%s", code, got, jsonWant, stderr)
	}
	for _, args := range [][]string{
		{"--version", "extra"},
		{"--version", "repo", "remove", "hello"},
		{"--version", "--config", "/nonexistent/updeb.yaml"},
		{"--version", "--log-format", "xml"},
	} {
		if code, out, stderr := runCLI(t, args...); code != exitUsage || out != "" {
			t.Errorf("updeb %q: exit %d, want %d, stdout %q\n%s", args, code, exitUsage, out, stderr)
		}
	}
}
