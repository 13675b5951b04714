package main

// How loaded recipes become build jobs, shared by build, fetch, mirror and
// verify: the architectures asked for, the config's site settings, how many
// builds at once.

import (
	"runtime"
	"slices"
	"strings"

	"github.com/updeb/updeb/internal/config"
	"github.com/updeb/updeb/internal/pipeline"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/pkg/deb"
)

// resolveOptions are the site settings of the config that shape every resolved recipe.
// There is no built-in maintainer: an invented address (updeb@localhost) is
// what lintian calls bogus-mail-host, so a recipe without one needs
// build: maintainer: in the config, and says so (exit 2).
func resolveOptions(c *config.Config) recipe.ResolveOptions {
	return recipe.ResolveOptions{LocalSuffix: c.Build.VersionSuffix, DefaultMaintainer: c.Build.Maintainer}
}

// buildParallel is how many builds run at once: the flag's value, else
// build.parallel, else one build per xz-workers CPUs (at least one). A
// package of several xz blocks keeps xz-workers CPUs busy, and each build
// more holds an xz writer's memory: measured on 2 CPUs, two builds at once
// took 0.69-0.88x the wall time of one on a quiet machine, 0.95-1.11x on a
// loaded one, at 1.3-1.9x the peak RSS (cmd/updeb-bench/README.md, "Builds at
// once"), so the default keeps one build's memory per xz-workers CPUs.
func buildParallel(flag int, b config.Build) int {
	if flag > 0 {
		return flag
	}
	if b.Parallel > 0 {
		return b.Parallel
	}
	workers := b.XZWorkers
	if workers <= 0 {
		workers = deb.DefaultXZWorkers
	}
	return max(1, runtime.NumCPU()/workers)
}

// buildJobs pairs each recipe with the requested architectures it has.
func buildJobs(recipes []*recipe.Recipe, arches []string) ([]pipeline.Job, error) {
	var jobs []pipeline.Job
	for _, r := range recipes {
		for _, a := range r.ArchNames() {
			if len(arches) > 0 && !slices.Contains(arches, a) {
				continue
			}
			jobs = append(jobs, pipeline.Job{Recipe: r, Arch: a})
		}
	}
	if len(jobs) == 0 {
		return nil, usageErrorf("no recipe has the architecture(s) %s", strings.Join(arches, ", "))
	}
	return jobs, nil
}
