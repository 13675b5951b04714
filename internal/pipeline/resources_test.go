package pipeline

import (
	"cmp"
	"testing"

	"github.com/updeb/updeb/internal/hostres"
	"github.com/updeb/updeb/pkg/deb"
)

// budgetSettings are the settings SizeRun takes, named as in the config.
type budgetSettings struct {
	Memory              int64
	XZWorkers, Parallel int
}

// SizeRun: the budget (build.memory, else a quarter of the memory the
// process may use), the workers (build.xz-workers, else the CPUs that fit
// in the budget) and the builds at once (parallel, else one per worker); the run's memory stays within the budget.
func TestSizeRun(t *testing.T) {
	const mib, gib = 1 << 20, 1 << 30
	for _, tc := range []struct {
		name            string
		host            hostres.Host
		b               budgetSettings
		jobs            int
		workers, builds int
		budget          int64
		blocks          int // the pool's room, 0: not checked beyond the rules
	}{
		{"the test machine", hostres.Host{CPUs: 2, Memory: 24 * gib}, budgetSettings{}, 0, 2, 2, 6 * gib, 12},
		{"16 cores, 128 GiB", hostres.Host{CPUs: 16, Memory: 128 * gib}, budgetSettings{}, 0, 16, 16, 32 * gib, 68},
		{"16 cores, 4 GiB: the memory bounds the workers", hostres.Host{CPUs: 16, Memory: 4 * gib}, budgetSettings{}, 0, 5, 5, gib, 0},
		{"a tiny host gets the smallest budget", hostres.Host{CPUs: 8, Memory: 512 * mib}, budgetSettings{}, 0, 1, 1, RunMemory(1, 1), deb.DefaultPoolBlocks(1)},
		{"build.memory", hostres.Host{CPUs: 16, Memory: 128 * gib}, budgetSettings{Memory: 1 * gib}, 0, 5, 5, gib, 0},
		{"build.memory and build.parallel", hostres.Host{CPUs: 16, Memory: 128 * gib}, budgetSettings{Memory: 1 * gib, Parallel: 8}, 0, 5, 8, gib, 0},
		{"--jobs wins over build.parallel", hostres.Host{CPUs: 4, Memory: 128 * gib}, budgetSettings{Parallel: 8}, 3, 4, 3, 32 * gib, 0},
		{"build.xz-workers over the default budget raises it", hostres.Host{CPUs: 2, Memory: 1 * gib}, budgetSettings{XZWorkers: 4}, 0, 4, 4, RunMemory(4, 4), 0},
		{"build.xz-workers within build.memory", hostres.Host{CPUs: 2, Memory: 64 * gib}, budgetSettings{XZWorkers: 8, Memory: 4 * gib}, 0, 8, 8, 4 * gib, 0},
	} {
		r, err := SizeRun(tc.host, tc.b.Memory, tc.b.XZWorkers, cmp.Or(tc.jobs, tc.b.Parallel))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if r.Pool.Workers() != tc.workers || r.Parallel != tc.builds || r.Budget != tc.budget {
			t.Errorf("%s: %d workers, %d builds, budget %d MiB; want %d, %d, %d MiB", tc.name, r.Pool.Workers(), r.Parallel, r.Budget>>20, tc.workers, tc.builds, tc.budget>>20)
		}
		need := r.Pool.Memory() + runBaseMemory + int64(r.Parallel)*runPerBuildMemory
		if need > r.Budget || r.MemoryLimit != need-binaryMemory {
			t.Errorf("%s: the run needs %d MiB (heap limit %d MiB), over its budget of %d MiB", tc.name, need>>20, r.MemoryLimit>>20, r.Budget>>20)
		}
		// The pool's room for blocks: the default at least, more while the
		// budget holds them, up to deb.MaxPoolBlocks.
		w, b := r.Pool.Workers(), r.Pool.Blocks()
		if b < deb.DefaultPoolBlocks(w) || b > deb.MaxPoolBlocks(w) || b < deb.MaxPoolBlocks(w) && need+deb.PoolBlockMemory <= r.Budget {
			t.Errorf("%s: room for %d blocks of %d workers in a budget of %d MiB (the run needs %d MiB)", tc.name, b, w, r.Budget>>20, need>>20)
		}
		if tc.blocks != 0 && b != tc.blocks {
			t.Errorf("%s: room for %d blocks, want %d", tc.name, b, tc.blocks)
		}
		if w := r.Pool.Workers(); tc.b.XZWorkers == 0 && w < tc.host.CPUs && RunMemory(w+1, cmp.Or(tc.jobs, tc.b.Parallel, w+1)) <= r.Budget {
			t.Errorf("%s: %d workers, but %d fit in the budget", tc.name, w, w+1)
		}
	}
}
