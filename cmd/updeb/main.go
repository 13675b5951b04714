// Command updeb turns verified upstream release binaries into reproducible Debian
// packages and a signed apt repository. This file sets the Go heap's soft
// limit (memoryLimit) and wires the signal-aware context; run (root.go)
// executes a command, exit.go maps its error to the documented exit code and
// hint, and the commands live in cmd_*.go.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"syscall"
)

// memoryLimit is the Go heap's soft limit, unless GOMEMLIMIT is set, of the
// commands that compress nothing large (publish, inspect, ...). A build run
// sets its own from the memory its compression pool and builds hold
// (resources.go): without a limit the garbage collector lets the heap grow
// to twice the live size (cmd/updeb-bench/README.md).
const memoryLimit = 256 << 20

func main() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	ctx, stop := signalContext()
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// signalContext is the context a command runs under, cancelled by
// stopSignals. SIGPIPE is caught too, so that a write to a pipe whose
// reader is gone returns EPIPE instead of killing updeb wherever it was:
// stdout's ('updeb repo list | head -1') ends the command with exit 141,
// nothing printed (exitClosedPipe), and stderr's (a log reader that went
// away) loses the lines, not the work: the command goes on to its own exit
// code. A caught signal is the default again in the programs updeb starts.
func signalContext() (context.Context, context.CancelFunc) {
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	dumpOnQuit(os.Stderr)
	return signal.NotifyContext(context.Background(), stopSignals()...)
}

// dumpOnQuit keeps what SIGQUIT (Ctrl-\) gives a Go program, every
// goroutine's stack on stderr to diagnose a hang, but exits 131 (128 +
// SIGQUIT, the shell's convention), not the runtime's 2, which scripts read
// as usage or invalid input. Like the runtime it stops at once, as kill -9
// would: what that leaves (a build's temporary folder, a partial download)
// the next run removes.
func dumpOnQuit(stderr io.Writer) {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGQUIT)
	go func() {
		<-c
		buf := make([]byte, 1<<20)
		for {
			n := runtime.Stack(buf, true)
			if n < len(buf) {
				buf = buf[:n]
				break
			}
			buf = make([]byte, 2*len(buf))
		}
		fmt.Fprintf(stderr, "SIGQUIT: quit\n\n%s\n", buf)
		os.Exit(exitQuit)
	}()
}

// stopSignals are the signals that stop a command cleanly, with exit 130
// and nothing half-done, or a hint saying what was (docs/scripting.md):
// SIGTERM, SIGINT and SIGHUP (the terminal or SSH session went away), each
// unless the process started with it ignored, which it then stays: asking
// for it would undo what ignored it. nohup ignores SIGHUP; a shell ignores
// SIGINT in a script's background job ('updeb publish ... &'), so that the
// Ctrl-C meant for the script's foreground step does not stop the job too;
// Go's signal.Notify would turn it back on. (The shell ignores SIGQUIT there
// too, which no Go program keeps: the runtime keeps an inherited SIG_IGN
// for SIGHUP and SIGINT only.)
func stopSignals() []os.Signal {
	sigs := []os.Signal{syscall.SIGTERM}
	for _, s := range []syscall.Signal{syscall.SIGINT, syscall.SIGHUP} {
		if !signal.Ignored(s) {
			sigs = append(sigs, s)
		}
	}
	return sigs
}
