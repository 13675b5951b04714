package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// interrupted turns the error of a command stopped by main's signal-aware
// context into one clear message and exit code. Commands pass the context
// down to every long read, which returns its error at the next read; they
// remove what they had half-written on the way out.
func interrupted(ctx context.Context, err error) error {
	if ctx.Err() == nil || !errors.Is(err, ctx.Err()) {
		return err
	}
	// Each of several joined errors (builds stopped together) ends in the
	// context's error: said once, in the message's head.
	cerr := ctx.Err().Error()
	var where []string
	for _, line := range strings.Split(err.Error(), "\n") {
		if line = strings.TrimSuffix(line, ": "+cerr); line != cerr && line != "" {
			where = append(where, line)
		}
	}
	msg := fmt.Sprintf("interrupted (%v)", context.Cause(ctx))
	if len(where) > 0 {
		msg += " in: " + strings.Join(where, "\n")
	}
	return &interruptedError{msg: msg, err: err}
}

// interruptedError prints its message and wraps the original error (whose
// text ends in "context canceled").
type interruptedError struct {
	msg string
	err error
}

func (e *interruptedError) Error() string { return e.msg }
func (e *interruptedError) Unwrap() error { return e.err }

// halfDoneError is an error after which part of what the command writes
// stands: an interruption then reports done (what was written and how to
// finish) instead of saying nothing half-done was left behind.
type halfDoneError struct {
	err  error
	done string
}

func (e *halfDoneError) Error() string { return e.err.Error() }
func (e *halfDoneError) Unwrap() error { return e.err }

// interruptedHint is the hint for an interruption: what a half-done command
// left, or that nothing was.
func interruptedHint(e *interruptedError) string {
	if h, ok := errors.AsType[*halfDoneError](e); ok {
		return h.done
	}
	return "nothing half-done was left behind; run the command again to finish"
}
