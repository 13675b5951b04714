package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/config"
	"github.com/updeb/updeb/internal/hostres"
)

// An explicit build.memory too small for the explicit or smallest settings
// is an input error (exit 2) that says what they need.
func TestSizeRunTooLittleMemory(t *testing.T) {
	host := hostres.Host{CPUs: 16, Memory: 128 << 30}
	for _, b := range []config.Build{
		{Memory: 100 << 20},
		{Memory: 1 << 30, XZWorkers: 16},
		{Memory: 300 << 20, Parallel: 64},
	} {
		_, err := sizeRun(host, b, 0)
		var ie *inputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), "build.memory") || !strings.Contains(ie.hint, "raise build.memory to at least") {
			t.Errorf("%+v: %v, want an input error naming build.memory with a hint", b, err)
		}
	}
}

// The config's settings reach pipeline.SizeRun: --jobs before build.parallel,
// build.xz-workers and build.memory as given.
func TestSizeRunSettings(t *testing.T) {
	host := hostres.Host{CPUs: 16, Memory: 128 << 30}
	for _, tc := range []struct {
		b                 config.Build
		jobs              int
		workers, parallel int
		budget            int64
	}{
		{config.Build{Parallel: 8}, 3, 16, 3, 32 << 30},
		{config.Build{Parallel: 8}, 0, 16, 8, 32 << 30},
		{config.Build{XZWorkers: 3, Memory: 2 << 30}, 0, 3, 3, 2 << 30},
	} {
		r, err := sizeRun(host, tc.b, tc.jobs)
		if err != nil || r.Pool.Workers() != tc.workers || r.Parallel != tc.parallel || r.Budget != tc.budget {
			t.Errorf("%+v, --jobs %d: %+v, %v; want %d workers, %d builds, budget %d", tc.b, tc.jobs, r, err, tc.workers, tc.parallel, tc.budget)
		}
	}
}

// A budget over the memory the process may use (a container limited below
// what the smallest settings need) is said before the build starts; one
// within it is not. The hint to lower settings names only those above 1.
func TestSizeRunOverHost(t *testing.T) {
	small := hostres.Host{CPUs: 2, Memory: 200 << 20}
	r, err := sizeRun(small, config.Build{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if msg, ok := overHost(small, r); !ok || !strings.Contains(msg, "more than the 200 MiB updeb may use here") {
		t.Errorf("200 MiB container: %q, %v; want a warning", msg, ok)
	}
	big := hostres.Host{CPUs: 2, Memory: 8 << 30}
	if r, err = sizeRun(big, config.Build{}, 0); err != nil {
		t.Fatal(err)
	}
	if msg, ok := overHost(big, r); ok {
		t.Errorf("8 GiB host: %q", msg)
	}
	_, err = sizeRun(big, config.Build{Memory: 100 << 20, XZWorkers: 1, Parallel: 1}, 0)
	ie, ok := errors.AsType[*inputError](err)
	if !ok {
		t.Fatalf("one worker, one build: %v, want an input error", err)
	}
	if ie.hint != "raise build.memory to at least 274 MiB" {
		t.Errorf("one worker, one build: hint %q", ie.hint)
	}
	// What the hint and the message name is enough: the need (273.008 MiB)
	// is rounded up, not down to a budget that is refused again.
	one := config.Build{Memory: 273 << 20, XZWorkers: 1, Parallel: 1}
	_, err = sizeRun(big, one, 0)
	if ie, ok := errors.AsType[*inputError](err); !ok || ie.hint != "raise build.memory to at least 274 MiB" ||
		!strings.Contains(err.Error(), "a memory budget of 273 MiB cannot hold 1 xz worker(s) and 1 build(s) at once: they need 274 MiB") {
		t.Errorf("273 MiB: %v", err)
	}
	one.Memory = 274 << 20
	if _, err := sizeRun(big, one, 0); err != nil {
		t.Errorf("274 MiB, as the hint says: %v", err)
	}
}
