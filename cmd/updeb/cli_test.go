package main

import (
	"bytes"
	"context"
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
