// Command updeb turns verified upstream release binaries into reproducible Debian
// packages and a signed apt repository. This file sets the Go heap's soft
// limit (memoryLimit) and wires the signal-aware context; run (root.go)
// executes a command, exit.go maps its error to the documented exit code and
// hint, and the commands live in cmd_*.go.
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
)

// memoryLimit is the Go heap's soft limit per build running at once, unless
// GOMEMLIMIT is set. One build's live memory is its xz writer's (pkg/xzpar's
// formula: at the default fast mode and two workers about 220 MiB on binaries,
// the blocks, encoders and outputs being allocated once and reused) and small
// buffers; without a limit the garbage collector lets the heap grow to twice
// the live size, which would double the peak RSS (cmd/updeb-bench/README.md).
const memoryLimit = 256 << 20

func main() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}
