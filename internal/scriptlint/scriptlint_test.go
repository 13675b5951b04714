package scriptlint

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/testkit/testenv"
)

// The real sh and shellcheck: a syntax error is an error at its line,
// shellcheck's warnings are warnings, a clean fragment has no problem.
func TestCheck(t *testing.T) {
	tools := testenv.RequireTool(t, "sh", "shellcheck")
	all := Tools{Sh: tools[0], ShellCheck: tools[1]}
	for _, tc := range []struct {
		name   string
		tools  Tools
		script string
		want   []Problem
	}{
		{"clean", all, "if [ \"$1\" = configure ]; then\n\techo ok\nfi\n", nil},
		{"syntax error", Tools{Sh: tools[0]}, "if [ \"$1\" = configure ]; then\n\techo ok\n", []Problem{
			{Tool: "sh -n", Line: 3, Message: `Syntax error: end of file unexpected (expecting "fi")`, Error: true}}},
		{"unquoted rm", all, "rm -rf $STATE/\n", []Problem{
			{Tool: "shellcheck", Line: 1, Col: 8, Message: `Use "${var:?}" to ensure this never expands to / . [SC2115]`}}},
		{"bash only", all, "[[ -d /x ]] && echo\n", []Problem{
			{Tool: "shellcheck", Line: 1, Col: 1, Message: "In POSIX sh, [[ ]] is undefined. [SC3010]"}}},
		{"no tools", Tools{}, "if\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Check(context.Background(), tc.tools, []byte(tc.script))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("problems %+v\nwant %+v", got, tc.want)
			}
		})
	}
	// A checker that cannot run is an error, not a clean result.
	if _, err := Check(context.Background(), Tools{ShellCheck: "/nonexistent/shellcheck"}, []byte("echo\n")); err == nil {
		t.Error("a missing shellcheck gave no error")
	}
}

// TestCheckIgnoresShellcheckrc: a .shellcheckrc in the working folder (the
// recipes repository a change brings it in, disable=all) silences nothing:
// the findings are updeb's rule, not the repository's.
func TestCheckIgnoresShellcheckrc(t *testing.T) {
	tools := testenv.RequireTool(t, "shellcheck")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".shellcheckrc"), []byte("disable=all\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	got, err := Check(context.Background(), Tools{ShellCheck: tools[0]}, []byte("rm -rf $STATE/\n"))
	if err != nil || len(got) != 1 || !strings.Contains(got[0].Message, "SC2115") {
		t.Errorf("problems %+v (%v), want SC2115", got, err)
	}
}

// ReadsAsCommand tells a line the shell runs from a line of a here-document
// or of a quoted string, in every place a command may stand.
func TestReadsAsCommand(t *testing.T) {
	sh := testenv.RequireTool(t, "sh")[0]
	for _, tc := range []struct {
		name   string
		script string
		line   int
		want   bool
	}{
		{"top level", "echo a\n:\necho b\n", 2, true},
		{"first line", ":\n", 1, true},
		{"in an if", "if [ \"$1\" = configure ]; then\n\t:\nfi\n", 2, true},
		{"in a case arm", "case \"$1\" in\nconfigure)\n\t:\n\t;;\nesac\n", 3, true},
		{"after a pipe", "echo a |\n:\n", 2, true},
		{"in a function", "f() {\n\t:\n}\nf\n", 2, true},
		{"here-document", "cat <<EOF >/dev/null\n:\nEOF\n", 2, false},
		{"quoted here-document", "cat <<-'END' >/dev/null\n\t:\n\tEND\n", 2, false},
		{"double-quoted string", "echo \"a\n:\nb\"\n", 2, false},
		{"single-quoted string", "echo 'a\n:\nb'\n", 2, false},
		{"after the here-document", "cat <<EOF >/dev/null\nx\nEOF\n:\n", 4, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Check(context.Background(), Tools{Sh: sh}, []byte(tc.script)); err != nil {
				t.Fatal(err)
			}
			got, err := ReadsAsCommand(context.Background(), sh, []byte(tc.script), tc.line)
			if err != nil || got != tc.want {
				t.Errorf("line %d of %q: %v, %v; want %v", tc.line, tc.script, got, err, tc.want)
			}
		})
	}
	if _, err := ReadsAsCommand(context.Background(), sh, []byte("echo\n"), 3); err == nil {
		t.Error("a line past the end gave no error")
	}
}

// A checker stopped by the end of the caller's context (updeb lint got
// SIGINT while shellcheck ran) returns that context's error: its own
// "signal: killed" read as a failed check, and lint exited 1, not 130.
func TestCheckStoppedByContext(t *testing.T) {
	testenv.RequireTool(t, "sleep")
	slow := filepath.Join(t.TempDir(), "slow-shellcheck")
	if err := os.WriteFile(slow, []byte("#!/bin/sh\nexec sleep 10\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := Check(ctx, Tools{ShellCheck: slow}, []byte("echo\n"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("a checker stopped by the context: %v, want context.Canceled", err)
	}
}

// A checker runs out of updeb's process group: Ctrl-C at the terminal
// signals the whole foreground group, and a checker in it died of the
// SIGINT before updeb's context ended, so that lint read a failed checker
// (exit 1, "shellcheck: exit status -1") about one run in thirty.
func TestCheckerOutOfProcessGroup(t *testing.T) {
	sh := testenv.RequireTool(t, "sh")[0]
	stdout, _, _, err := run(context.Background(), sh, []byte("read -r _ _ _ _ pgrp _ </proc/self/stat; echo \"$pgrp\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got, ours := strings.TrimSpace(string(stdout)), strconv.Itoa(syscall.Getpgrp()); got == ours {
		t.Errorf("the checker runs in updeb's process group %s: a signal to the group reaches it", ours)
	}
}
