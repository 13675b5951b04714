// Package scriptlint checks the maintainer-script fragments of recipes with
// the shell that will run them and, when it is installed, shellcheck:
// `sh -n` (the installing system's /bin/sh reads the script: a syntax error
// there fails every installation) and `shellcheck --shell=sh
// --severity=warning`. It runs them as updeb lint asks, with the paths the
// caller found; it never installs or guesses a tool.
package scriptlint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/updeb/updeb/internal/childproc"
)

// Tools are the checkers to run, by path; "" skips one.
type Tools struct {
	Sh         string // sh, for sh -n
	ShellCheck string // shellcheck
}

// Problem is one problem a checker found.
type Problem struct {
	Tool    string // "sh -n" or "shellcheck"
	Line    int    // in the checked text, from 1; 0 when the tool named none
	Col     int
	Message string
	// Error: the script cannot run as written (sh -n, shellcheck's error
	// level); otherwise a warning for a reviewer.
	Error bool
}

// timeout bounds one checker run: both read a fragment of at most 256 KiB.
const timeout = 30 * time.Second

// Check runs the checkers on script, a fragment of shell text.
func Check(ctx context.Context, tools Tools, script []byte) ([]Problem, error) {
	var out []Problem
	if tools.Sh != "" {
		p, err := shSyntax(ctx, tools.Sh, script)
		if err != nil {
			return nil, err
		}
		out = append(out, p...)
	}
	if tools.ShellCheck != "" {
		p, err := shellcheck(ctx, tools.ShellCheck, script)
		if err != nil {
			return nil, err
		}
		out = append(out, p...)
	}
	return out, nil
}

func run(ctx context.Context, name string, script []byte, args ...string) (stdout, stderr []byte, exit int, err error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdin = bytes.NewReader(script)
	cmd.Env = []string{"LC_ALL=C", "PATH=/usr/bin:/bin"}
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	// Out of updeb's process group: a Ctrl-C at the terminal reaches updeb
	// alone, which stops the checker through ctx; killed by it first, the
	// checker read as one that failed (exit 1, not 130).
	err = childproc.RunGroup(cmd, cmd.Run)
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) && ctx.Err() == nil {
		return o.Bytes(), e.Bytes(), exitErr.ExitCode(), nil
	}
	if err != nil && ctx.Err() != nil {
		// Killed because ctx ended (a signal, the timeout): its error, not
		// the tool's "signal: killed", which would read as a failed check.
		return nil, nil, 0, fmt.Errorf("%s: %w", name, ctx.Err())
	}
	if err != nil {
		return nil, nil, 0, fmt.Errorf("%s: %w", name, err)
	}
	return o.Bytes(), e.Bytes(), 0, nil
}

// shLineRE reads dash's and bash's syntax errors: "sh: 3: Syntax error: ..."
// (dash) or "sh: line 3: syntax error ..." (bash).
var shLineRE = regexp.MustCompile(`^[^:]*: (?:line )?(\d+): (.*)$`)

func shSyntax(ctx context.Context, sh string, script []byte) ([]Problem, error) {
	_, stderr, exit, err := run(ctx, sh, script, "-n")
	if err != nil || exit == 0 {
		return nil, err
	}
	var out []Problem
	for _, line := range strings.Split(strings.TrimSpace(string(stderr)), "\n") {
		p := Problem{Tool: "sh -n", Message: strings.TrimSpace(line), Error: true}
		if m := shLineRE.FindStringSubmatch(line); m != nil {
			p.Line, _ = strconv.Atoi(m[1])
			p.Message = m[2]
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		out = append(out, Problem{Tool: "sh -n", Message: fmt.Sprintf("exit status %d", exit), Error: true})
	}
	return out, nil
}

// gccRE reads shellcheck's -f gcc lines: "-:3:5: warning: message [SC2086]".
var gccRE = regexp.MustCompile(`^-:(\d+):(\d+): (error|warning|note|info|style): (.*)$`)

func shellcheck(ctx context.Context, bin string, script []byte) ([]Problem, error) {
	// --norc: a .shellcheckrc of the working folder (the recipes
	// repository, which a change can add one to) would otherwise disable
	// checks.
	stdout, stderr, exit, err := run(ctx, bin, script, "--norc", "--shell=sh", "--severity=warning", "--format=gcc", "-")
	if err != nil {
		return nil, err
	}
	var out []Problem
	for _, line := range strings.Split(string(stdout), "\n") {
		m := gccRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		l, _ := strconv.Atoi(m[1])
		c, _ := strconv.Atoi(m[2])
		out = append(out, Problem{Tool: "shellcheck", Line: l, Col: c, Message: m[4], Error: m[3] == "error"})
	}
	if exit != 0 && len(out) == 0 {
		// Not findings (exit 1): shellcheck itself failed.
		return nil, fmt.Errorf("%s: exit status %d: %s", bin, exit, strings.TrimSpace(string(stderr)))
	}
	return out, nil
}

// ReadsAsCommand reports whether the shell sh reads line n (from 1) of
// script as a command, rather than as text inside a here-document or a
// quoted string: with that line replaced by "&&", which is a syntax error
// wherever a command may stand, `sh -n` must fail. Ask it only of a script
// that sh -n accepts as it is.
func ReadsAsCommand(ctx context.Context, sh string, script []byte, n int) (bool, error) {
	lines := bytes.SplitAfter(script, []byte("\n"))
	if n < 1 || n > len(lines) {
		return false, fmt.Errorf("line %d is not in a script of %d lines", n, len(lines))
	}
	probe := slices.Clone(lines)
	probe[n-1] = []byte("&&\n")
	_, _, exit, err := run(ctx, sh, bytes.Join(probe, nil), "-n")
	return exit != 0, err
}
