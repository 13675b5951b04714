package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/updeb/updeb/internal/compat"
	"github.com/updeb/updeb/internal/confined"
	"github.com/updeb/updeb/internal/repo"
	"github.com/updeb/updeb/internal/report"
	"github.com/updeb/updeb/internal/yamlfile"
	"github.com/updeb/updeb/pkg/atomicfile"
	"github.com/updeb/updeb/pkg/lockfile"
)

type reportOptions struct {
	trackFlags
	setFile    string
	output     string
	repoDir    string
	staging    string
	production string
	metrics    string
	runOK      bool
}

// maxMetrics bounds the metrics file report reads back (its own, a few KiB).
const maxMetrics = 16 << 20

func newReportCmd(g *globalOptions) *cobra.Command {
	o := &reportOptions{}
	cmd := &cobra.Command{
		Use:   "report --output DIR",
		Short: "Write the status page (HTML, JSON, CSV) and the metrics of the tracking loop",
		Long: `report writes into --output one static, self-contained HTML page (index.html: inline
CSS, no script, no external resource; the verdict first, in colour and in words), the
same data as JSON (report.json) and CSV files (recipes, actions, sets, data, suites,
packages, pending): the plan ('updeb plan': supported minors, what ships them, the
actions), the compatibility matrix of every release set with its verdict, each recipe's
version against upstream, each data table's age and, with --repo, the repository: what
each suite and component lists, the versions in --staging not yet in --production, and
when each suite's Release expires (Valid-Until) and each key that signs it (apt refuses
the suite once either has passed; the verdict asks for action 30 days before a key expires).

--metrics FILE writes the same run as a Prometheus text file for node_exporter's
textfile collector, atomically: seconds to each suite's Valid-Until and to the expiry of
each key that signs it, recipes behind
upstream, release sets violating, components past end of life, each data table's age,
the time of the last run and of the last successful one (--run-ok=false when a step of
the run failed: the last success is then carried over from the file's previous copy,
and the page's verdict says the run failed). Every sample has the label tracking, the
file's name without .prom, so that two instances writing into one textfile folder do not
give the same series.
When the report cannot be made, the metrics file still says so: the run failed, the
last success carried over, no other sample. Interrupted (SIGINT, SIGTERM: exit 130),
report writes no page, JSON or CSV file: the last run's stay.
See docs/tracking.md for the metric names and alerts.

The report itself succeeds whatever it finds (exit 0); it fails on invalid input (2)
or when upstream or the files cannot be read or written (3).

GITHUB_TOKEN, when set, is sent to the GitHub API (higher rate limit), over https only
(or http to this machine).`,
		Example: `  updeb report --output /var/www/updeb
  updeb report --output site --repo /srv/apt --metrics /var/lib/node_exporter/textfile/updeb.prom
  updeb report --output site --offline`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runReport(cmd, g, o) },
	}
	o.trackFlags.add(cmd)
	f := cmd.Flags()
	f.StringVar(&o.setFile, "set", "release-sets.yaml", "release set file (skipped when the default is absent)")
	f.StringVarP(&o.output, "output", "o", "", "folder for index.html, report.json and the CSV files (required)")
	f.StringVar(&o.repoDir, "repo", "", "apt repository to report on (default: none)")
	f.StringVar(&o.staging, "staging", "staging", "with --repo: the suite new builds go to first")
	f.StringVar(&o.production, "production", "production", "with --repo: the suite clients install from")
	f.StringVar(&o.metrics, "metrics", "", "also write the metrics to this file (Prometheus text format), atomically")
	f.BoolVar(&o.runOK, "run-ok", true, "whether every step of the tracking run succeeded (the last-success metric moves only then; false: the verdict says a step failed)")
	return cmd
}

func runReport(cmd *cobra.Command, g *globalOptions, o *reportOptions) (err error) {
	if o.output == "" {
		hint := ""
		if cmd.Flags().Changed("out") {
			hint = "--out (of every command) is the packages' folder; the report's folder is --output"
		}
		return invalidInput(errors.New("--output DIR is required"), hint)
	}
	for _, f := range []string{"staging", "production"} {
		if cmd.Flags().Changed(f) && o.repoDir == "" {
			return usageErrorf("--%s goes with --repo: without a repository the report has no suites to compare", f)
		}
	}
	// The metrics file is read back before anything is made or written: one
	// that is no regular file (a FIFO would block the read) refuses the run.
	if o.metrics != "" {
		if _, err := readMetrics(o.metrics); err != nil {
			return err
		}
		// Its folder must be there: found missing only once the page is
		// written, the run would end with a new page and no metrics.
		if fi, err := os.Stat(filepath.Dir(o.metrics)); err != nil || !fi.IsDir() {
			return usageErrorf("--metrics %s: no folder %s to write it in (report makes --output, not the metrics' folder)", o.metrics, filepath.Dir(o.metrics))
		}
		if !strings.HasSuffix(o.metrics, ".prom") {
			g.logger().Warn("node_exporter's textfile collector reads only files named *.prom: it will not read this one; name it NAME.prom", "metrics", o.metrics)
		}
	}
	// A run whose report cannot be made still says so in the metrics: the
	// previous file's numbers (and its success) must not stand.
	metricsDone := false
	defer func() {
		if err != nil && o.metrics != "" && !metricsDone {
			if werr := writeMetrics(cmd.Context(), o.metrics, func(last time.Time) []byte {
				return report.FailedMetrics(time.Now(), report.Run{LastSuccess: last, Tracking: metricsTracking(o.metrics)})
			}); werr != nil {
				err = errors.Join(err, werr)
			}
		}
	}()
	s, err := g.openSession(cmd.Context(), nil, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	p, data, errs, err := makePlan(cmd, g, s, &o.trackFlags, o.setFile)
	if err != nil {
		return err
	}
	opts, err := o.options(g, s.cfg, s.fetcher)
	if err != nil {
		return err
	}
	now := opts.Now()
	var sets []compat.ReleaseSet
	if p.SetsFile != "" {
		text, err := yamlfile.ReadFile(o.setFile, 0)
		if err != nil {
			return invalidInput(err, "")
		}
		if sets, err = compat.ParseReleaseSets(o.setFile, text); err != nil {
			return invalidInput(err, "")
		}
	}
	cr, err := compat.Check(sets, s.recipes, compat.Inputs{Now: now, Tables: data.Tables, EOL: data.EOL.Data, EOLCopy: data.EOL.Name()})
	if err != nil {
		return invalidInput(fmt.Errorf("%s: %w", o.setFile, err), "updeb compat says the same")
	}
	// The page's time, the Releases' expiry and the data's age are the
	// clock's, whatever day --now plans for.
	in := report.Inputs{Now: time.Now().UTC(), Plan: p, Compat: cr, MaxAge: s.cfg.Data.MaxAge(), RunFailed: !o.runOK}
	if o.repoDir != "" {
		if in.Repository, err = repositoryInputs(o, g.logger()); err != nil {
			return err
		}
	}
	// Stopped (a signal) while upstream was asked: the recipes it did not
	// answer for would read "unknown: context canceled", and that page must
	// not replace the last run's (the metrics say the run failed).
	if err := cmd.Context().Err(); err != nil {
		return fmt.Errorf("asking upstream: %w", err)
	}
	rep := report.Build(in)
	if err := report.Write(cmd.Context(), o.output, rep); err != nil {
		return err
	}
	if o.metrics != "" {
		metricsDone = true
		if err := writeMetrics(cmd.Context(), o.metrics, func(last time.Time) []byte {
			return report.Metrics(rep, report.Run{OK: o.runOK && len(errs) == 0, LastSuccess: last, Tracking: metricsTracking(o.metrics)})
		}); err != nil {
			// The page stands (a stop while the metrics folder's lock is
			// waited for, another updeb's report holding it): an
			// interruption's hint says so.
			return &halfDoneError{err, fmt.Sprintf("the page in %s was written; the metrics file %s was not (it holds the run before's): run report again", o.output, o.metrics)}
		}
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s\n%s: %s\n", rep.Verdict.Text, o.output, "index.html, report.json, CSV files")
	if o.metrics != "" {
		fmt.Fprintf(cmd.OutOrStdout(), "metrics: %s\n", o.metrics)
	}
	return errors.Join(errs...)
}

// writeMetrics writes the metrics file atomically, with the last success
// its previous copy records. It holds the lock of the file's folder from
// reading the previous copy to the rename: two reports writing one metrics
// file take turns, so that neither writes back a last success the other has
// since replaced; and the temporary files of the metrics file there are
// then a killed report's, and go (left, they would pile up in the textfile
// folder, one per kill). The wait ends with ctx (an interrupt); a lock that
// is free is still taken after one, for a stopped run's metrics.
func writeMetrics(ctx context.Context, path string, metrics func(lastSuccess time.Time) []byte) error {
	lock, err := lockfile.AcquireDir(ctx, filepath.Dir(path), 100*time.Millisecond)
	if err != nil {
		return fmt.Errorf("--metrics %s: %w", path, err)
	}
	defer lock.Unlock()
	atomicfile.RemoveLeftovers(filepath.Dir(path), filepath.Base(path))
	prev, err := readMetrics(path)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(path, metrics(report.PreviousSuccess(prev)), 0o644); err != nil {
		return fmt.Errorf("--metrics %s: %w", path, err)
	}
	return nil
}

// metricsTracking is the label tracking of every sample of the metrics file
// path: its name without ".prom", which no other file of node_exporter's
// textfile folder has (it reads only *.prom).
func metricsTracking(path string) string {
	return strings.TrimSuffix(filepath.Base(path), ".prom")
}

// readMetrics reads the metrics file's previous copy (nil when there is
// none yet), a regular file of at most maxMetrics bytes.
func readMetrics(path string) ([]byte, error) {
	prev, err := confined.ReadFile(path, maxMetrics)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case errors.Is(err, confined.ErrRefused):
		return nil, invalidInput(err, "--metrics names the file of metrics report writes and reads back: a regular file (or none yet)")
	case err != nil:
		return nil, fmt.Errorf("--metrics %s: %w", path, err)
	}
	return prev, nil
}

// repositoryInputs reads the repository's suites and packages.
func repositoryInputs(o *reportOptions, log *slog.Logger) (*report.RepositoryInputs, error) {
	if fi, err := os.Stat(filepath.Join(o.repoDir, "dists")); err != nil || !fi.IsDir() {
		return nil, usageErrorf("--repo %s: not an apt repository updeb publishes (no dists/ folder)", o.repoDir)
	}
	r := repo.Open(o.repoDir, repo.Options{Logger: log})
	suites, entries, err := r.Contents()
	if err != nil {
		return nil, err
	}
	// A suite name mistyped would read as a repository with nothing in
	// production (every staging version pending) or nothing to compare.
	for _, f := range []struct{ flag, suite, is string }{{"staging", o.staging, "the suite new builds go to first"}, {"production", o.production, "the suite clients install from"}} {
		if !slices.ContainsFunc(suites, func(s repo.Suite) bool { return s.Name == f.suite }) {
			log.Warn(fmt.Sprintf("the repository has no suite %q: --%s names %s; the page's comparison of staging and production is empty or lists every version as pending", f.suite, f.flag, f.is), "repo", o.repoDir)
		}
	}
	return &report.RepositoryInputs{Path: o.repoDir, Suites: suites, Packages: entries, Staging: o.staging, Production: o.production}, nil
}
