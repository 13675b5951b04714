package pipeline

import (
	"cmp"
	"fmt"

	"github.com/updeb/updeb/internal/hostres"
	"github.com/updeb/updeb/pkg/deb"
)

// What a build run holds besides its compression pool (deb.PoolMemory),
// measured with /usr/bin/time -v on the bench's stand-in builds
// (cmd/updeb-bench/README.md, "Memory budget"): the binary's code and data
// (22 MiB), the runtime and the fetcher's buffers; and per build at once its
// archive readers, the spool's zstd encoder and the .deb's copy buffers.
const (
	runBaseMemory     = 64 << 20
	runPerBuildMemory = 4 << 20
	// binaryMemory is the part of runBaseMemory that is the binary's own
	// pages, not Go memory: the heap's soft limit leaves it out.
	binaryMemory = 24 << 20
)

// Resources are how a build run uses the host: one compression pool for
// every build (Options.Pool), how many builds at once (Options.Parallel),
// the Go heap's soft limit that keeps the heap near its live size, and the
// memory budget they were sized for.
type Resources struct {
	Pool        *deb.Pool
	Parallel    int
	MemoryLimit int64
	Budget      int64
}

// RunMemory is the most a run of parallel builds sharing a pool of workers
// holds, with the pool's default room for blocks (deb.PoolMemory): the
// least SizeRun gives it.
func RunMemory(workers, parallel int) int64 {
	return deb.PoolMemory(workers) + runBaseMemory + int64(parallel)*runPerBuildMemory
}

// BudgetError is an explicit memory budget that cannot hold the explicit
// or smallest settings.
type BudgetError struct {
	Budget, Need      int64
	Workers, Parallel int
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("a memory budget of %d MiB cannot hold %d xz worker(s) and %d build(s) at once: they need %d MiB",
		e.Budget>>20, e.Workers, e.Parallel, e.NeedMiB())
}

// NeedMiB is Need in MiB, rounded up: a budget of that many MiB holds
// them (Need is rarely a whole number of MiB).
func (e *BudgetError) NeedMiB() int64 { return (e.Need + 1<<20 - 1) >> 20 }

// SizeRun sizes a build run for host. memory is the budget, 0 for the
// default: a quarter of the host's memory, at least what one worker and one
// build need (xz, too, takes a quarter of the memory for its threads by
// default). xzWorkers is the pool's workers, 0 for as many of the host's
// CPUs as fit in the budget; parallel the builds at once, 0 for one per
// worker (a build compresses one block at a time unless its package has
// several, and the pool bounds the memory whatever the number of builds).
// What the budget holds beyond that gives the pool room for more blocks,
// up to deb.MaxPoolBlocks, so that blocks finish behind a slow one.
// Explicit settings that an explicit budget cannot hold are a *BudgetError;
// over the default budget they raise it.
func SizeRun(host hostres.Host, memory int64, xzWorkers, parallel int) (Resources, error) {
	budget := memory
	if budget == 0 {
		budget = max(host.Memory/4, RunMemory(1, 1))
	}
	builds := func(workers int) int { return cmp.Or(parallel, workers) }
	workers := xzWorkers
	if workers == 0 {
		workers = 1
		for workers < host.CPUs && workers < maxWorkers && RunMemory(workers+1, builds(workers+1)) <= budget {
			workers++
		}
	}
	need := RunMemory(workers, builds(workers))
	if need > budget {
		if memory != 0 {
			return Resources{}, &BudgetError{Budget: budget, Need: need, Workers: workers, Parallel: builds(workers)}
		}
		budget = need
	}
	blocks := deb.DefaultPoolBlocks(workers)
	if spare := int((budget - need) / deb.PoolBlockMemory); spare > 0 {
		more := min(spare, deb.MaxPoolBlocks(workers)-blocks)
		blocks += more
		need += int64(more) * deb.PoolBlockMemory
	}
	pool, err := deb.NewPoolBlocks(workers, blocks)
	if err != nil {
		return Resources{}, err
	}
	return Resources{Pool: pool, Parallel: builds(workers), MemoryLimit: need - binaryMemory, Budget: budget}, nil
}

// maxWorkers bounds the default workers (build.xz-workers' range).
const maxWorkers = 64
