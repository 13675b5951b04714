package main

import (
	"bytes"
	"context"
	"runtime"
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
