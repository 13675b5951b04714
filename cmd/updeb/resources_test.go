package main

import (
	"cmp"
	"errors"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/config"
	"github.com/updeb/updeb/internal/hostres"
	"github.com/updeb/updeb/pkg/deb"
)

// sizeRun: the budget (build.memory, else a quarter of the memory the
// process may use), the workers (build.xz-workers, else the CPUs that fit
// in the budget) and the builds at once (--jobs, else build.parallel, else
// one per worker); the run's memory stays within the budget.
func TestSizeRun(t *testing.T) {
	const mib, gib = 1 << 20, 1 << 30
	for _, tc := range []struct {
		name            string
		host            hostres.Host
		b               config.Build
		jobs            int
		workers, builds int
		budget          int64
	}{
		{"the test machine", hostres.Host{CPUs: 2, Memory: 24 * gib}, config.Build{}, 0, 2, 2, 6 * gib},
		{"16 cores, 128 GiB", hostres.Host{CPUs: 16, Memory: 128 * gib}, config.Build{}, 0, 16, 16, 32 * gib},
		{"16 cores, 4 GiB: the memory bounds the workers", hostres.Host{CPUs: 16, Memory: 4 * gib}, config.Build{}, 0, 5, 5, gib},
		{"a tiny host gets the smallest budget", hostres.Host{CPUs: 8, Memory: 512 * mib}, config.Build{}, 0, 1, 1, runMemory(1, 1)},
		{"build.memory", hostres.Host{CPUs: 16, Memory: 128 * gib}, config.Build{Memory: 1 * gib}, 0, 5, 5, gib},
		{"build.memory and build.parallel", hostres.Host{CPUs: 16, Memory: 128 * gib}, config.Build{Memory: 1 * gib, Parallel: 8}, 0, 5, 8, gib},
		{"--jobs wins over build.parallel", hostres.Host{CPUs: 4, Memory: 128 * gib}, config.Build{Parallel: 8}, 3, 4, 3, 32 * gib},
		{"build.xz-workers over the default budget raises it", hostres.Host{CPUs: 2, Memory: 1 * gib}, config.Build{XZWorkers: 4}, 0, 4, 4, runMemory(4, 4)},
		{"build.xz-workers within build.memory", hostres.Host{CPUs: 2, Memory: 64 * gib}, config.Build{XZWorkers: 8, Memory: 4 * gib}, 0, 8, 8, 4 * gib},
	} {
		r, err := sizeRun(tc.host, tc.b, tc.jobs)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if r.pool.Workers() != tc.workers || r.parallel != tc.builds || r.budget != tc.budget {
			t.Errorf("%s: %d workers, %d builds, budget %d MiB; want %d, %d, %d MiB", tc.name, r.pool.Workers(), r.parallel, r.budget>>20, tc.workers, tc.builds, tc.budget>>20)
		}
		if need := runMemory(r.pool.Workers(), r.parallel); need > r.budget || r.memoryLimit != need-binaryMemory {
			t.Errorf("%s: the run needs %d MiB (heap limit %d MiB), over its budget of %d MiB", tc.name, need>>20, r.memoryLimit>>20, r.budget>>20)
		}
		if w := r.pool.Workers(); tc.b.XZWorkers == 0 && w < tc.host.CPUs && runMemory(w+1, cmp.Or(tc.jobs, tc.b.Parallel, w+1)) <= r.budget {
			t.Errorf("%s: %d workers, but %d fit in the budget", tc.name, w, w+1)
		}
		if r.pool.Memory() != deb.PoolMemory(r.pool.Workers()) {
			t.Errorf("%s: pool of %d bytes, want %d", tc.name, r.pool.Memory(), deb.PoolMemory(r.pool.Workers()))
		}
	}
}

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
