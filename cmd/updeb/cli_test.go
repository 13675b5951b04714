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
}
