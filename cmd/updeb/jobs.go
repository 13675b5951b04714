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

// warnSourceDateEpoch says, once in a run that builds, that the
// environment's SOURCE_DATE_EPOCH (which reproducible-builds tools and CI
// templates export) dates nothing: each recipe's release-date is the
// SOURCE_DATE_EPOCH of every build of its version, so that the version has
// one set of bytes on every machine, and publish and verify can refuse any
// other. Taken silently, the variable looked obeyed.
func (g *globalOptions) warnSourceDateEpoch() {
	if v := getenv("SOURCE_DATE_EPOCH"); v != "" {
		g.warnf("SOURCE_DATE_EPOCH=%s in the environment is ignored: each recipe's release-date: dates its packages (file times, changelog) and provenance records, so that a version builds to the same bytes anywhere; to date a version otherwise, change release-date: in its recipe (updeb bump --date writes it for a new version)", v)
	}
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
