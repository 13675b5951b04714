package main

// How loaded recipes become build jobs, shared by build, fetch, mirror and
// verify: the architectures asked for, the config's site settings (how many
// builds at once and the compression pool: resources.go).

import (
	"slices"
	"strings"

	"github.com/updeb/updeb/internal/config"
	"github.com/updeb/updeb/internal/pipeline"
	"github.com/updeb/updeb/internal/recipe"
)

// resolveOptions are the site settings of the config that shape every resolved recipe.
// There is no built-in maintainer: an invented address (updeb@localhost) is
// what lintian calls bogus-mail-host, so a recipe without one needs
// build: maintainer: in the config, and says so (exit 2).
func resolveOptions(c *config.Config) recipe.ResolveOptions {
	return recipe.ResolveOptions{LocalSuffix: c.Build.VersionSuffix, DefaultMaintainer: c.Build.Maintainer}
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
