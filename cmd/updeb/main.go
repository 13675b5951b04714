// Command updeb turns verified upstream release binaries into reproducible Debian
// packages and a signed apt repository. This file only wires the signal-aware
// context and maps errors to the documented exit codes; commands live in cmd_*.go.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}
