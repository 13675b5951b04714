package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/testkit/testenv"
)

// TestStderr: what a build of the demo prints on stderr in a pipe (nothing),
// on a terminal (log lines without timestamps, each source fetched once: the
// checksum file both architectures share too) and with --log-format json (one
// object per line); stdout holds the results alone, without escapes.
func TestStderr(t *testing.T) {
	args, _ := demoProject(t)
	args = slices.DeleteFunc(args, func(a string) bool { return a == "-q" })
	out := t.TempDir()
	build := append(args, "--out", out, "build", "pingd")

	code, stdout, stderr := runCLI(t, build...)
	if code != 0 || stderr != "" || strings.Contains(stdout, "\x1b") || !strings.Contains(stdout, "2 built, 0 up to date, 0 failed") {
		t.Fatalf("piped build: exit %d, stderr %q, stdout %q", code, stderr, stdout)
	}

	var so, se bytes.Buffer
	code = runOn(context.Background(), append(build, "--force", "--cache", t.TempDir()), &so, &se, terminalInfo{tty: true, width: func() int { return 100 }})
	lines := se.String()
	if code != 0 {
		t.Fatalf("terminal build: exit %d\n%s", code, lines)
	}
	if n := strings.Count(lines, "fetched url=https://releases.example.org/pingd/v0.9.1/pingd.sha256sum "); n != 1 {
		t.Errorf("the shared checksum file is logged as fetched %d times:\n%s", n, lines)
	}
	if regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\dT`).MatchString(lines) || !strings.Contains(lines, "wrote recipe=pingd arch=amd64 file=pingd_0.9.1-1_amd64.deb size=") {
		t.Errorf("terminal log lines (no timestamps, human sizes):\n%s", lines)
	}
	if strings.Contains(so.String(), "\x1b") {
		t.Errorf("escape on stdout: %q", so.String())
	}

	code, _, stderr = runCLI(t, append(build, "--force", "--log-format", "json")...)
	if code != 0 {
		t.Fatalf("json log: exit %d\n%s", code, stderr)
	}
	n := 0
	for line := range strings.Lines(stderr) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil || rec["msg"] == nil || rec["level"] == nil {
			t.Errorf("not a JSON log record: %q (%v)", line, err)
		}
		n++
	}
	if n < 2 {
		t.Errorf("--log-format json logged %d records:\n%s", n, stderr)
	}
	if code, _, stderr := runCLI(t, "--log-format", "xml", "version"); code != exitUsage || !strings.Contains(stderr, `--log-format "xml": want human or json`) {
		t.Errorf("--log-format xml: exit %d: %s", code, stderr)
	}
}

// TestDetectTerminal: stderr on a terminal is one that moves its cursor
// unless TERM says it cannot: TERM=dumb, or no TERM at all (a cron job run
// through script(1), env -i, some CI runners), which gets what a pipe gets.
func TestDetectTerminal(t *testing.T) {
	_, tty := testenv.Pty(t)
	t.Setenv("NO_COLOR", "")
	for _, c := range []struct {
		term string
		set  bool
		want bool
	}{{"xterm-256color", true, true}, {"dumb", true, false}, {"", true, false}, {"", false, false}} {
		if c.set {
			t.Setenv("TERM", c.term)
		} else {
			t.Setenv("TERM", "")
			os.Unsetenv("TERM")
		}
		if got := detectTerminal(tty); got.tty != c.want || got.color != c.want {
			t.Errorf("TERM=%q (set: %v) on a terminal: tty %v, colour %v; want %v", c.term, c.set, got.tty, got.color, c.want)
		}
	}
	if got := detectTerminal(&bytes.Buffer{}); got.tty {
		t.Error("a buffer is a terminal")
	}
}
