package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/updeb/updeb/internal/config"
	"github.com/updeb/updeb/internal/hostres"
	"github.com/updeb/updeb/internal/pipeline"
)

// runResources sizes a build run (updeb build, updeb verify) of cfg's
// settings and --jobs (0: none) for this host (pipeline.SizeRun) and sets the
// Go heap's soft limit to what the run holds, unless GOMEMLIMIT is set: with
// it the heap stays near its live size instead of growing to twice that.
func (g *globalOptions) runResources(b config.Build, jobs int) (pipeline.Resources, error) {
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
	if over, ok := overHost(host, r); ok {
		g.logger().Warn(over)
	}
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(r.MemoryLimit)
	}
	g.logger().Debug("build resources", "cpus", host.CPUs, "memory", host.Memory, "budget", r.Budget,
		"xz_workers", r.Pool.Workers(), "parallel", r.Parallel, "memory_limit", r.MemoryLimit)
	return r, nil
}

// sizeRun is pipeline.SizeRun of the config's build.memory, build.xz-workers
// and build.parallel (--jobs first); a build.memory too small for them is
// an input error.
func sizeRun(host hostres.Host, b config.Build, jobs int) (pipeline.Resources, error) {
	parallel := b.Parallel
	if jobs > 0 {
		parallel = jobs
	}
	r, err := pipeline.SizeRun(host, int64(b.Memory), b.XZWorkers, parallel)
	if be, ok := errors.AsType[*pipeline.BudgetError](err); ok {
		hint := fmt.Sprintf("raise build.memory to at least %d MiB", be.NeedMiB())
		var lower []string
		if be.Workers > 1 {
			lower = append(lower, "build.xz-workers")
		}
		if be.Parallel > 1 {
			lower = append(lower, "build.parallel or --jobs")
		}
		if len(lower) > 0 {
			hint += ", or lower " + strings.Join(lower, " or ")
		}
		return r, invalidInput(fmt.Errorf("build.memory: %w", be), hint)
	}
	return r, err
}

// overHost says when a run's budget is more than the memory the process may
// use (its control group's limit, or the machine's): the smallest settings
// need their memory whatever the host has, and the kernel may then kill
// the build.
func overHost(host hostres.Host, r pipeline.Resources) (string, bool) {
	if host.Memory <= 0 || r.Budget <= host.Memory {
		return "", false
	}
	return fmt.Sprintf("this build needs up to %d MiB, more than the %d MiB updeb may use here (its control group's memory limit, or the machine's memory): "+
		"it may be killed for memory; give updeb more memory, or lower build.xz-workers and build.parallel", r.Budget>>20, host.Memory>>20), true
}
