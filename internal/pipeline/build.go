// Package pipeline is updeb's build pipeline: resolve the recipe for an
// architecture (internal/recipe) -> fetch and verify its sources
// (internal/source) -> select the archive members -> assemble -> write, for
// one recipe and one architecture at a time, streaming
// from the verified cache into .deb files, with a provenance record beside each
// package (a DSSE envelope, signed with Options.ProvenanceKey; provenance.go)
// and a state record that makes an unchanged rebuild a no-op.
//
// Nothing unverified reaches a package: every source is fetched against its
// pinned digest (the cache re-hashes on every use), its detached OpenPGP
// signature or Sigstore material is verified when the recipe names one, and
// the pinned digest is
// cross-checked against the upstream checksum file (itself verified when it
// is clearsigned) before a single byte is extracted.
package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/updeb/updeb/internal/diskfull"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/signkey"
	"github.com/updeb/updeb/internal/source"
	"github.com/updeb/updeb/pkg/archive"
	"github.com/updeb/updeb/pkg/atomicfile"
	"github.com/updeb/updeb/pkg/deb"
	"github.com/updeb/updeb/pkg/lockfile"
)

// Options configure a build run. The caller (the CLI) fills them from flags,
// config and environment; this package reads neither.
type Options struct {
	// Source fetches and verifies the sources (and its Logger and Now serve
	// the whole build).
	Source source.Options
	OutDir string
	// DiskDir is the folder a full disk of OutDir is named by (its hint
	// says to free the disk holding it): OutDir when empty; a folder
	// above it when OutDir goes with the run (verify's build folders).
	DiskDir      string
	UpdebVersion string
	Compression  deb.Compression
	Limits       archive.Limits
	Force        bool // rebuild even when the state record says nothing changed
	Parallel     int  // builds at once; <= 0 means 1
	XZWorkers    int  // xz blocks compressed at once per package (deb.Package.XZWorkers) where Pool is nil; never changes the bytes
	// Pool, when set, compresses every package of the run (deb.Package.Pool):
	// the builds at once share its workers and memory.
	Pool           *deb.Pool
	XZMode         deb.XZMode
	ResolveOptions recipe.ResolveOptions
	// SpoolAll reads every archive member a build needs into a spool file
	// before writing any package, instead of streaming members into the
	// package that first uses them (same bytes, more disk and time; see
	// select.go). For measurements, and a way out should streaming misbehave.
	SpoolAll bool
	// ProvenanceKey signs each package's provenance record; nil writes the
	// records unsigned (a DSSE envelope without signatures).
	ProvenanceKey *signkey.Key
	// Progress, when set, receives reports about each package being written
	// (its compression is the long part of a build). It is called from
	// several goroutines; a package's last report has Done set.
	Progress func(Progress)
}

// Progress is one report about one package being written.
type Progress struct {
	File string // the .deb's base name
	In   int64  // bytes of data.tar so far (files and tar headers, before compression)
	Out  int64  // compressed bytes written so far
	Done bool
}

// Job is one recipe built for one architecture.
type Job = source.Job

// Output is one package a job wrote (or found up to date).
type Output struct {
	Package string `json:"package"`
	File    string `json:"file"` // base name in OutDir
	Size    int64  `json:"size"`
	SHA256  string `json:"sha256"`
}

// Result is what happened to one job.
type Result struct {
	Recipe   string        `json:"recipe"`
	Arch     string        `json:"arch"`
	Version  string        `json:"version"`
	Skipped  bool          `json:"skipped"` // up to date: nothing fetched or written
	Outputs  []Output      `json:"outputs"`
	Duration time.Duration `json:"duration_ns"`
	// VerifiedBy says, per source name, what vouched for it besides its pin
	// (trust.Source's words); empty for a skipped job.
	VerifiedBy map[string][]string `json:"verified_by,omitempty"`
	Err        error               `json:"-"`
	Error      string              `json:"error,omitempty"`
}

// validate fills the defaults and refuses options a caller must set.
func (o *Options) validate() error {
	if o.Source.Now == nil {
		return errors.New("pipeline: Options.Source.Now is required")
	}
	if o.Source.Logger == nil {
		o.Source.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Parallel <= 0 {
		o.Parallel = 1
	}
	return nil
}

// Run builds every job, at most opts.Parallel at once. One job's failure does
// not stop the others: every job gets a Result, and the returned error joins
// the failures.
func Run(ctx context.Context, jobs []Job, opts Options) ([]Result, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	// The output folder is 0755 whatever the umask, as the packages in it
	// are 0644: a web server or a publish run as another user reads them
	// there. The state folder is the build's own.
	if err := atomicfile.MkdirAll(opts.OutDir, 0o755); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(opts.OutDir, StateDir), 0o755); err != nil {
		return nil, err
	}
	// One updeb process builds into an output folder at a time; holding the lock
	// also makes it safe to sweep what a killed build left behind.
	lock, err := lockfile.Acquire(ctx, filepath.Join(opts.OutDir, StateDir, "lock"), 0)
	if err != nil {
		return nil, err
	}
	defer lock.Unlock()
	if err := recoverCommits(opts.OutDir, opts.Source.Logger); err != nil {
		return nil, err
	}
	sweepStale(opts.OutDir, opts.Source.Logger)
	results := make([]Result, len(jobs))
	stagedBy := make([]*staged, len(jobs))
	// A recipe is one unit: the last of its jobs to finish commits the
	// outputs of all of them, or discards them when one failed (commit.go).
	var mu sync.Mutex
	left := map[string]int{}
	for _, j := range jobs {
		left[j.Recipe.Path]++
	}
	// A plain group: one failed build must not cancel unrelated ones; the
	// caller's ctx (Ctrl-C) still stops them all.
	var g errgroup.Group
	g.SetLimit(opts.Parallel)
	for i, j := range jobs {
		g.Go(func() error {
			start := time.Now()
			r, st, err := buildOne(ctx, j, opts)
			r.Recipe, r.Arch = j.Recipe.Name, j.Arch
			r.Duration = time.Since(start)
			if err != nil {
				// A build writes into the output folder (its temporary and
				// staging folders there, gone when the error is read) and
				// the cache (whose full disk is named already): a full
				// disk is the output folder's.
				r.Err = fmt.Errorf("%s (%s): %w", j.Recipe.Name, j.Arch, diskfull.Wrap(err, cmp.Or(opts.DiskDir, opts.OutDir)))
				r.Outputs = nil
			}
			mu.Lock()
			defer mu.Unlock()
			results[i], stagedBy[i] = r, st
			if left[j.Recipe.Path]--; left[j.Recipe.Path] == 0 {
				finishUnit(j.Recipe, jobs, results, stagedBy, opts.OutDir, opts.Source.Logger)
			}
			return nil
		})
	}
	g.Wait()
	var errs []error
	for _, r := range results {
		if r.Err != nil {
			errs = append(errs, r.Err)
		}
	}
	return results, errors.Join(errs...)
}

// ErrNotWritten is wrapped in the Result of a job that succeeded but whose
// packages were discarded because another architecture of its recipe failed.
var ErrNotWritten = errors.New("not written")

// finishUnit commits the staged outputs of recipe r's jobs when every one of
// them succeeded, and otherwise discards them all, marking the jobs that had
// succeeded as not written. It removes the staging folders either way, and
// logs "wrote" for each package once it is in out, never before.
func finishUnit(r *recipe.Recipe, jobs []Job, results []Result, stagedBy []*staged, out string, log *slog.Logger) {
	var failed []string
	var idx []int
	var stagedUnit []*staged
	for i, j := range jobs {
		if j.Recipe.Path != r.Path {
			continue
		}
		idx = append(idx, i)
		if results[i].Err != nil {
			failed = append(failed, j.Arch)
		}
		if stagedBy[i] != nil {
			stagedUnit = append(stagedUnit, stagedBy[i])
		}
	}
	var why error
	switch {
	case len(failed) > 0:
		why = fmt.Errorf("%w: %s (%s) failed, and a recipe's packages are written all together or not at all", ErrNotWritten, r.Name, strings.Join(failed, ", "))
	case len(stagedUnit) > 0:
		if err := commit(out, r.Name, stagedUnit); err != nil {
			why = fmt.Errorf("moving the packages into %s: %w", out, err)
		}
	}
	for _, i := range idx {
		st := stagedBy[i]
		if st == nil {
			continue
		}
		os.RemoveAll(st.dir)
		if why != nil {
			results[i].Outputs = nil
			results[i].Err = fmt.Errorf("%s (%s): %w", r.Name, jobs[i].Arch, why)
			continue
		}
		for _, o := range st.outputs {
			log.Info("wrote", "recipe", r.Name, "arch", jobs[i].Arch, "file", o.File, "size", o.Size)
		}
	}
	for _, i := range idx {
		if results[i].Err != nil {
			results[i].Error = results[i].Err.Error()
		}
	}
}

// buildOne builds one job into a staging folder, which it returns (nil when
// the job was up to date). The caller commits it or removes it.
func buildOne(ctx context.Context, j Job, opts Options) (Result, *staged, error) {
	log := opts.Source.Logger.With("recipe", j.Recipe.Name, "arch", j.Arch)
	plan, err := j.Recipe.Resolve(j.Arch, opts.ResolveOptions)
	if err != nil {
		return Result{}, nil, err
	}
	res := Result{Version: plan.DebianVersion}
	key, err := inputKey(j.Recipe, plan, opts)
	if err != nil {
		return res, nil, err
	}
	st := statePath(opts.OutDir, plan)
	if !opts.Force {
		if outs, bodies, ok := upToDate(st, key, opts.OutDir); ok && refreshProvenance(ctx, j.Recipe, plan, outs, bodies, opts) == nil {
			log.Info("up to date", "version", plan.DebianVersion)
			res.Skipped, res.Outputs = true, outs
			return res, nil, nil
		}
	}

	so := opts.Source
	so.Logger = log
	srcs, err := source.Verify(ctx, plan, so)
	if err != nil {
		return res, nil, err
	}
	res.VerifiedBy = map[string][]string{}
	for name, vs := range srcs {
		res.VerifiedBy[name] = vs.By[1:] // after "pinned-digest"
	}

	tmp, err := os.MkdirTemp(opts.OutDir, ".updeb-build-*")
	if err != nil {
		return res, nil, err
	}
	defer os.RemoveAll(tmp)
	stage, err := os.MkdirTemp(opts.OutDir, stagePrefix+"*")
	if err != nil {
		return res, nil, err
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(stage)
		}
	}()
	ms, err := newMembers(plan, srcs, tmp, opts.Limits, log)
	if err != nil {
		return res, nil, err
	}
	if opts.SpoolAll {
		if err := ms.spoolAll(ctx); err != nil {
			return res, nil, err
		}
	}

	bodies := map[string]string{}
	for _, pp := range plan.Packages {
		out, body, err := writePackage(ctx, j.Recipe, plan, &pp, ms, tmp, stage, srcs, opts)
		if err != nil {
			return res, nil, fmt.Errorf("package %s: %w", pp.Name, err)
		}
		res.Outputs = append(res.Outputs, out)
		bodies[out.File] = body
	}
	sort.Slice(res.Outputs, func(a, b int) bool { return res.Outputs[a].File < res.Outputs[b].File })
	done = true
	return res, &staged{dir: stage, state: st, key: key, outputs: res.Outputs, records: bodies}, nil
}

// sweepStale removes the temporary files and folders of builds that were
// killed (even by kill -9) before they could clean up. Final outputs are only
// ever created by rename, so nothing named *.deb is ever partial. The state
// folder is swept too: its state records and commit journals are written
// (atomicfile) under the same lock, and a kill between a temporary file's
// creation and its rename (the fsync takes milliseconds) leaves it there.
func sweepStale(dir string, log *slog.Logger) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		n := e.Name()
		if strings.HasPrefix(n, ".updeb-build-") || killedTemp(n) {
			log.Debug("removing leftover of an interrupted build", "path", n)
			os.RemoveAll(filepath.Join(dir, n))
		}
	}
	entries, _ = os.ReadDir(filepath.Join(dir, StateDir))
	for _, e := range entries {
		if n := e.Name(); killedTemp(n) && e.Type().IsRegular() {
			log.Debug("removing leftover of an interrupted build", "path", filepath.Join(StateDir, n))
			os.Remove(filepath.Join(dir, StateDir, n))
		}
	}
}

// killedTemp reports whether n is the name of an atomicfile temporary file
// (".NAME.tmp-*").
func killedTemp(n string) bool {
	return strings.HasPrefix(n, ".") && strings.Contains(n, ".tmp-")
}
