// Package source fetches a resolved recipe's sources into the verifying cache
// and checks what vouches for each: the pinned digest (the cache re-hashes on
// every use), the detached OpenPGP signature or Sigstore material the recipe
// names, and the cross-check of the pins against the upstream checksum file
// (itself verified when it is clearsigned). The pipeline (internal/pipeline)
// builds only from what Verify returns; `updeb fetch` and `updeb mirror
// export` fill a cache or a mirror folder with the same checks (Fetch).
package source

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/updeb/updeb/internal/fetch"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/pkg/digest"
	"github.com/updeb/updeb/pkg/verify/sigstore"
)

// Options are what fetching and verifying sources needs. The caller (the CLI)
// fills them; this package reads no flag, config or environment.
type Options struct {
	Fetcher *fetch.Fetcher
	Now     func() time.Time // the clock OpenPGP signatures are checked against
	// Sigstore verifies the sources that name Sigstore material (its HTTP
	// client should be Fetcher.Transport()); nil refuses them.
	Sigstore *sigstore.Verifier
	Logger   *slog.Logger // nil discards, as in every library of updeb
}

// validate fills the defaults and refuses options a caller must set.
func (o *Options) validate() error {
	if o.Now == nil {
		return errors.New("source: Options.Now is required")
	}
	if o.Fetcher == nil {
		return errors.New("source: Options.Fetcher is required")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

// Job is one recipe for one architecture.
type Job struct {
	Recipe *recipe.Recipe
	Arch   string
}

// Verified is a fetched artifact and the evidence that it is genuine.
type Verified struct {
	Source   recipe.ResolvedSource
	Artifact *fetch.Result // the artifact in the cache, its pins checked
	// By says what vouched for it: "pinned-digest" first, then trust.Source's
	// words for each signature and cross-check.
	By  []string
	Aux []*fetch.Result // the signature and checksum files it was verified with, for provenance
}

// CacheKey is the cache key of a recipe version's signature and checksum
// files. It names no architecture: a checksum file that lists every
// architecture's artifacts (runc.sha256sum) is fetched once for all of them.
func CacheKey(rs *recipe.Resolved) string {
	return rs.Recipe + " " + rs.UpstreamVersion
}

// Verify downloads every source of rs (pinned) and its signature and checksum
// files (unpinned, verified here), then checks them all. It returns the
// verified sources by name, or an error naming the source that failed (an
// *AuxError when its signature or checksum file did not verify twice).
func Verify(ctx context.Context, rs *recipe.Resolved, opts Options) (map[string]*Verified, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	log := opts.Logger
	var reqs []fetch.Request
	for _, s := range rs.Sources {
		req := fetch.Request{URL: s.URL, Pinned: s.Pinned, Key: CacheKey(rs)}
		if s.Sigstore != nil {
			// A bundle or attestation may sign the sha512 alone (npm's
			// provenance does): have it at hand whatever the recipe pins,
			// as bump has when it pins.
			req.Algorithms = []digest.Algorithm{digest.SHA512}
		}
		reqs = append(reqs, req)
		for _, u := range s.AuxURLs() {
			reqs = append(reqs, fetch.Request{URL: u, AllowUnpinned: true, Key: CacheKey(rs)})
		}
	}
	got, err := opts.Fetcher.FetchAll(ctx, reqs)
	if err != nil {
		return nil, err
	}
	byURL := map[string]*fetch.Result{}
	for _, r := range got {
		byURL[r.URL] = r
	}
	out := map[string]*Verified{}
	for _, s := range rs.Sources {
		vs := &Verified{Source: s, Artifact: byURL[s.URL]}
		by, err := verifySource(ctx, vs, byURL, CacheKey(rs), opts, log)
		var ae *AuxError
		if errors.As(err, &ae) {
			return nil, err
		}
		if err != nil {
			return nil, fmt.Errorf("source %s: %w", s.Name, err)
		}
		vs.By = append([]string{"pinned-digest"}, by...)
		log.Debug("verified", "source", s.Name, "by", strings.Join(vs.By, ", "))
		out[s.Name] = vs
	}
	return out, nil
}

// Fetch downloads every job's sources, signatures and checksum files into the
// cache and verifies them (pins, signatures, checksum cross-checks), without
// building: what `updeb fetch RECIPE...` runs to fill a cache ahead of an
// offline build, and `updeb mirror export` to fill a mirror folder. Jobs are
// resolved with ro (SourcesOnly: fetching builds nothing, so no maintainer is
// needed). Offline misses of all jobs are reported together.
func Fetch(ctx context.Context, jobs []Job, ro recipe.ResolveOptions, opts Options) ([]*fetch.Result, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	var (
		out     []*fetch.Result
		errs    []error
		offline = &fetch.OfflineError{}
	)
	ro.SourcesOnly = true
	for _, j := range jobs {
		// A signal ends the run between jobs: offline, a job never looks
		// at the context, and thousands ran on to report every miss.
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rs, err := j.Recipe.Resolve(j.Arch, ro)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		jo := opts
		jo.Logger = opts.Logger.With("recipe", j.Recipe.Name, "arch", j.Arch)
		srcs, err := Verify(ctx, rs, jo)
		var off *fetch.OfflineError
		switch {
		case errors.As(err, &off):
			offline.Add(off)
			continue
		case err != nil:
			errs = append(errs, fmt.Errorf("%s (%s): %w", j.Recipe.Name, j.Arch, err))
			continue
		}
		for _, name := range SortedNames(srcs) {
			out = append(out, srcs[name].Artifact)
			out = append(out, srcs[name].Aux...)
		}
	}
	if len(offline.Missing)+len(offline.Corrupt) > 0 {
		errs = append(errs, offline)
	}
	return out, errors.Join(errs...)
}

// SortedNames returns the names of verified sources in order, so that what is
// built from them never depends on map order.
func SortedNames(m map[string]*Verified) []string {
	names := slices.Sorted(maps.Keys(m))
	return names
}
