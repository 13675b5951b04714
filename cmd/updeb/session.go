package main

import (
	"github.com/updeb/updeb/internal/build"
	"github.com/updeb/updeb/internal/config"
	"github.com/updeb/updeb/internal/fetch"
	"github.com/updeb/updeb/internal/recipe"
)

// session is what every command that works on recipes starts with: the
// config, the recipes named on the command line (all of them when none), their
// build jobs for the requested architectures, and a fetcher for downloads.
type session struct {
	cfg     *config.Config
	recipes []*recipe.Recipe
	jobs    []build.Job
	fetcher *fetch.Fetcher
}

// openSession loads all of it, failing with the exit code of the first
// problem (a bad config or recipe is 2). Close the session when done.
func (g *globalOptions) openSession(args, arches []string) (*session, error) {
	cfg, err := g.loadConfig()
	if err != nil {
		return nil, err
	}
	recipes, err := loadRecipes(g, args)
	if err != nil {
		return nil, err
	}
	jobs, err := buildJobs(recipes, arches)
	if err != nil {
		return nil, err
	}
	f, err := g.newFetcher(cfg)
	if err != nil {
		return nil, err
	}
	return &session{cfg: cfg, recipes: recipes, jobs: jobs, fetcher: f}, nil
}

func (s *session) Close() { s.fetcher.Close() }
