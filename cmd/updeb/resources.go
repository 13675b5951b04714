package main

import (
	"cmp"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/updeb/updeb/internal/config"
	"github.com/updeb/updeb/internal/hostres"
	"github.com/updeb/updeb/pkg/deb"
)

// What a build run holds besides its compression pool (deb.PoolMemory),
// measured with /usr/bin/time -v on the bench's stand-in builds
// (internal/bench/README.md, "Memory budget"): the binary's code and data
// (22 MiB), the runtime and the fetcher's buffers; and per build at once its
// archive readers, the spool's zstd encoder and the .deb's copy buffers.
const (
	runBaseMemory     = 64 << 20
	runPerBuildMemory = 4 << 20
	// binaryMemory is the part of runBaseMemory that is the binary's own
	// pages, not Go memory: the heap's soft limit leaves it out.
	binaryMemory = 24 << 20
)

// runResources are how a build run (updeb build, updeb verify) uses the
// host: one compression pool for every build, how many builds at once, the
// Go heap's soft limit, and the budget they were sized for.
type runResources struct {
	pool        *deb.Pool
	parallel    int
	memoryLimit int64
	budget      int64
}

// runMemory is the most a run of parallel builds sharing a pool of workers
// holds.
func runMemory(workers, parallel int) int64 {
	return deb.PoolMemory(workers) + runBaseMemory + int64(parallel)*runPerBuildMemory
}

// sizeRun sizes a build run for host from the config and the --jobs flag
// (0: none). The budget is build.memory, else a quarter of the host's memory
// (at least what one worker and one build need; xz, too, takes a quarter of
// the memory for its threads by default). The xz workers are build.xz-workers,
// else as many of the host's CPUs as fit in the budget; the builds at once
// are --jobs, else build.parallel, else one per worker (a build compresses
// one block at a time unless its package has several, and the pool keeps the
// memory bound whatever the number of builds). An explicit build.memory that
// cannot hold the explicit settings is an input error.
func sizeRun(host hostres.Host, b config.Build, jobs int) (runResources, error) {
	budget := int64(b.Memory)
	if budget == 0 {
		budget = max(host.Memory/4, runMemory(1, 1))
	}
	parallel := func(workers int) int {
		return cmp.Or(jobs, b.Parallel, workers)
	}
	workers := b.XZWorkers
	if workers == 0 {
		workers = 1
		for workers < host.CPUs && workers < config.MaxXZWorkers && runMemory(workers+1, parallel(workers+1)) <= budget {
			workers++
		}
	}
	need := runMemory(workers, parallel(workers))
	if need > budget {
		if b.Memory != 0 {
			return runResources{}, invalidInput(fmt.Errorf("build.memory %d MiB cannot hold %d xz worker(s) and %d build(s) at once: they need %d MiB",
				budget>>20, workers, parallel(workers), need>>20),
				fmt.Sprintf("raise build.memory to at least %d MiB, or lower build.xz-workers, build.parallel or --jobs", need>>20))
		}
		budget = need // build.xz-workers or the builds at once override the default budget
	}
	pool, err := deb.NewPool(workers)
	if err != nil {
		return runResources{}, err
	}
	return runResources{pool: pool, parallel: parallel(workers), memoryLimit: need - binaryMemory, budget: budget}, nil
}

// runResources sizes the run of cfg's builds on this host and sets the Go
// heap's soft limit to what the run holds (unless GOMEMLIMIT is set): with
// it the heap stays near its live size instead of growing to twice that.
func (g *globalOptions) runResources(b config.Build, jobs int) (runResources, error) {
	host, err := hostres.Read(os.DirFS("/"), runtime.NumCPU())
	if err != nil {
		// Not Linux, or /proc unreadable: the smallest budget.
		g.logger().Warn("cannot read the host's memory; sizing the build for the smallest budget", "err", err)
		host = hostres.Host{CPUs: runtime.NumCPU()}
	}
	r, err := sizeRun(host, b, jobs)
	if err != nil {
		return r, err
	}
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(r.memoryLimit)
	}
	g.logger().Debug("build resources", "cpus", host.CPUs, "memory", host.Memory, "budget", r.budget,
		"xz_workers", r.pool.Workers(), "parallel", r.parallel, "memory_limit", r.memoryLimit)
	return r, nil
}
