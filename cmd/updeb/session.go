package main

import (
	"context"
	"time"

	"github.com/updeb/updeb/internal/config"
	"github.com/updeb/updeb/internal/fetch"
	"github.com/updeb/updeb/internal/pipeline"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/source"
	"github.com/updeb/updeb/pkg/verify/sigstore"
)

// session is what every command that works on recipes starts with: the
// config, the recipes named on the command line (all of them when none), their
// build jobs for the requested architectures, and a fetcher for downloads.
type session struct {
	g       *globalOptions
	cfg     *config.Config
	recipes []*recipe.Recipe
	jobs    []pipeline.Job
	fetcher *fetch.Fetcher
}

// openSession loads all of it, failing with the exit code of the first
// problem (a bad config or recipe is 2). Close the session when done.
func (g *globalOptions) openSession(ctx context.Context, args, arches []string) (*session, error) {
	return g.openSessionWith(ctx, args, arches, recipe.LoadOptions{})
}

// openSessionWith is openSession loading the recipes with lo.
func (g *globalOptions) openSessionWith(ctx context.Context, args, arches []string, lo recipe.LoadOptions) (*session, error) {
	cfg, err := g.loadConfig()
	if err != nil {
		return nil, err
	}
	recipes, err := loadRecipesWith(ctx, g, args, lo)
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
	return &session{g: g, cfg: cfg, recipes: recipes, jobs: jobs, fetcher: f}, nil
}

// sigstore returns the Sigstore verifier for the session's sources: the
// trusted root by the config's precedence, requests through the fetcher.
func (s *session) sigstore() (*sigstore.Verifier, error) {
	return s.g.newSigstoreVerifier(s.cfg, s.fetcher)
}

// sourceOptions are how the session's commands fetch and verify sources
// (build, verify, fetch, mirror export).
func (s *session) sourceOptions() (source.Options, error) {
	ss, err := s.sigstore()
	if err != nil {
		return source.Options{}, err
	}
	return source.Options{Fetcher: s.fetcher, Sigstore: ss, Now: time.Now, Logger: s.g.logger()}, nil
}

func (s *session) Close() { s.fetcher.Close() }
