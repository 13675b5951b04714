package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// Exit codes, as documented in the README and PRODUCT.md.
const (
	exitOK      = 0 // success
	exitCheck   = 1 // a check failed: signature, checksum, verification, lint finding in verify
	exitUsage   = 2 // usage or invalid input: flags, recipe, config
	exitNetwork = 3 // network or I/O failure after retries
)

// exitError carries the exit code a command chose for an error, and an optional
// hint that tells the user what to do next. Library packages never build these:
// each command classifies the errors of the library it calls.
type exitError struct {
	code int
	err  error
	hint string
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// withCode attaches an exit code (and a hint, which may be empty) to err.
func withCode(code int, err error, hint string) error {
	if err == nil {
		return nil
	}
	return &exitError{code: code, err: err, hint: hint}
}

// usageErrorf reports bad flags or arguments (exit 2).
func usageErrorf(format string, args ...any) error {
	return withCode(exitUsage, fmt.Errorf(format, args...), "")
}

// exitCodeOf returns the exit code for err: the one a command attached, else 1
// for anything unclassified (a failure we did not anticipate is never success).
func exitCodeOf(err error) int {
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return exitCheck
}

// printError writes "error: ..." and, when known, "hint: ..." lines.
func printError(w io.Writer, err error) {
	fmt.Fprintf(w, "updeb: error: %s\n", strings.TrimSpace(err.Error()))
	var ee *exitError
	if errors.As(err, &ee) && ee.hint != "" {
		fmt.Fprintf(w, "updeb: hint: %s\n", ee.hint)
	}
}
