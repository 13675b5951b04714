package main

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/updeb/updeb/internal/testkit/testenv"
	"html"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/testkit/trackingfixture"
	"github.com/updeb/updeb/pkg/lockfile"
)

// A report that cannot be made (here a recipe that does not load) still
// writes the metrics file: the run failed, the last success is carried
// over, and none of the previous run's numbers stand (a stale "0
// violations" would hide the failure); the exit code is the failure's.
func TestReportFailedRunMetrics(t *testing.T) {
	dir, _ := trackingCopy(t, true)
	metrics := filepath.Join(dir, "updeb.prom")
	args := []string{"--state", filepath.Join(dir, "state"), "--cache", filepath.Join(dir, "cache"), "--offline", "-q", "report", "--output", filepath.Join(dir, "site"), "--metrics", metrics}
	if code, out, errs := runUpdeb(args...); code != 0 {
		t.Fatalf("report: exit %d\n%s%s", code, out, errs)
	}
	first, err := os.ReadFile(metrics)
	if err != nil || !strings.Contains(string(first), "updeb_tracking_last_run_success{tracking=\"updeb\"} 1\n") {
		t.Fatalf("the first metrics (%v):\n%s", err, first)
	}
	last := regexpLine(t, string(first), "updeb_tracking_last_success_timestamp_seconds{tracking=\"updeb\"} ")
	f, err := os.OpenFile(filepath.Join("recipes", "helm.yaml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("garbage: [\n")
	f.Close()
	code, _, stderr := runUpdeb(args...)
	if code != 2 || !strings.Contains(stderr, "recipes/helm.yaml:") {
		t.Fatalf("report on a broken recipe: exit %d, want 2\n%s", code, stderr)
	}
	m, err := os.ReadFile(metrics)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(m), "updeb_tracking_last_run_success{tracking=\"updeb\"} 0\n") || regexpLine(t, string(m), "updeb_tracking_last_success_timestamp_seconds{tracking=\"updeb\"} ") != last ||
		strings.Contains(string(m), "\nupdeb_release_sets_violating ") || !strings.Contains(string(m), "# TYPE updeb_release_sets_violating gauge\n") {
		t.Errorf("the failed run's metrics:\n%s", m)
	}
}

// TestReportMetricsTakeTurns: a report writes its metrics file under the
// lock of the file's folder, from reading the last success back to the
// rename, and removes there the temporary metrics files killed reports left.
// Here the folder's lock is held (as another report holds it) while a
// failing report runs; that other report then records a success and lets
// go: the failing run's metrics carry that success over. Without the lock
// the run wrote at once, and the other's rename replaced it (or the run
// replaced the other's success with its older one); a killed report's
// .updeb.prom.tmp-NNN stayed in the textfile folder for good.
func TestReportMetricsTakeTurns(t *testing.T) {
	dir, _ := trackingCopy(t, true)
	metrics := filepath.Join(dir, "updeb.prom")
	leftover := filepath.Join(dir, ".updeb.prom.tmp-1234")
	if err := os.WriteFile(leftover, []byte("updeb_tracking_last_run_success{tracking=\"updeb\"} 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join("recipes", "helm.yaml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("garbage: [\n")
	f.Close()
	held, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if err := syscall.Flock(int(held.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	type result struct {
		code   int
		stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, _, stderr := runUpdeb("--state", filepath.Join(dir, "state"), "--cache", filepath.Join(dir, "cache"), "--offline", "-q", "report", "--output", filepath.Join(dir, "site"), "--metrics", metrics)
		done <- result{code, stderr}
	}()
	select {
	case r := <-done:
		t.Fatalf("the report did not wait for the metrics folder's lock: exit %d\n%s", r.code, r.stderr)
	case <-time.After(2 * time.Second):
	}
	const success = "updeb_tracking_last_success_timestamp_seconds{tracking=\"updeb\"} 1795000000\n"
	if err := os.WriteFile(metrics, []byte(success), 0o644); err != nil {
		t.Fatal(err)
	}
	syscall.Flock(int(held.Fd()), syscall.LOCK_UN) //nolint:errcheck // closed too
	if r := <-done; r.code != 2 {
		t.Fatalf("report on a broken recipe: exit %d, want 2\n%s", r.code, r.stderr)
	}
	m, err := os.ReadFile(metrics)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(m), "updeb_tracking_last_run_success{tracking=\"updeb\"} 0\n") || !strings.Contains(string(m), success) {
		t.Errorf("the failed run's metrics do not carry the other run's success over:\n%s", m)
	}
	if _, err := os.Lstat(leftover); err == nil {
		t.Errorf("the killed report's temporary metrics file %s is still there", leftover)
	}
}

// A step of the tracking run failed (the job passes --run-ok=false): the
// page and report.json say so among the verdict's reasons, not only the
// metrics (the page of a run whose refresh, commit or pull failed would
// read as any other day's).
func TestReportRunFailedVerdict(t *testing.T) {
	dir, _ := trackingCopy(t, true)
	site := filepath.Join(dir, "site")
	const reason = "a step of the tracking run failed (report --run-ok=false): see the job's log"
	for _, ok := range []bool{true, false} {
		code, out, errs := runUpdeb("--state", filepath.Join(dir, "state"), "--cache", filepath.Join(dir, "cache"), "--offline", "-q", "report", "--output", site, "--run-ok="+strconv.FormatBool(ok))
		if code != 0 {
			t.Fatalf("report --run-ok=%v: exit %d\n%s%s", ok, code, out, errs)
		}
		page, _ := os.ReadFile(filepath.Join(site, "index.html"))
		js, _ := os.ReadFile(filepath.Join(site, "report.json"))
		if strings.Contains(string(page), html.EscapeString(reason)) == ok || strings.Contains(string(js), reason) == ok {
			t.Errorf("report --run-ok=%v: the page or report.json says (or does not say) %q:\n%s", ok, reason, js)
		}
	}
}

// TestReportTimesUTC: report.json's times are UTC, as every --json output's,
// whatever the local zone: its compat report's "now" as updeb compat --json
// gives it, and the day the plan and the compatibility check are made for
// is UTC's today (the default of --now).
func TestReportTimesUTC(t *testing.T) {
	local := time.Local
	time.Local = time.FixedZone("UTC+14", 14*3600) // a day ahead of UTC for most of it
	t.Cleanup(func() { time.Local = local })
	dir, _ := trackingCopy(t, true)
	site := filepath.Join(dir, "site")
	if code, out, errs := runUpdeb("--state", filepath.Join(dir, "state"), "--cache", filepath.Join(dir, "cache"), "--offline", "-q", "report", "--output", site); code != 0 {
		t.Fatalf("report: exit %d\n%s%s", code, out, errs)
	}
	js, err := os.ReadFile(filepath.Join(site, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Generated string
		Plan      struct{ Now string }
		Compat    struct{ Now string }
	}
	if err := json.Unmarshal(js, &r); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(r.Generated, "Z") || !strings.HasSuffix(r.Compat.Now, "Z") || !strings.HasPrefix(r.Compat.Now, r.Plan.Now+"T") {
		t.Errorf("report.json: generated %q, compat.now %q, plan.now %q: want UTC times of one day", r.Generated, r.Compat.Now, r.Plan.Now)
	}
}

// trackingCopy copies the tracking fixture into a new folder's repo/ (with
// chdir, into it) and returns the folder and the copy.
func trackingCopy(t *testing.T, chdir bool) (dir, repoDir string) {
	t.Helper()
	dir = t.TempDir()
	repoDir = filepath.Join(dir, "repo")
	if err := copyTree(trackingfixture.Dir(), repoDir); err != nil {
		t.Fatal(err)
	}
	if chdir {
		t.Chdir(repoDir)
	}
	return dir, repoDir
}

// regexpLine is the line of text that starts with prefix.
func regexpLine(t *testing.T, text, prefix string) string {
	t.Helper()
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	t.Fatalf("no line %q in\n%s", prefix, text)
	return ""
}

// TestReportStopsOnSignal: SIGINT while report asks upstream (a GitHub API
// that never answers) stops it (exit 130) without writing the page, the
// JSON or the CSV files: a page of "unknown: context canceled" must not
// replace the last run's. The metrics file, as for any run whose report
// was not made, says the run failed.
func TestReportStopsOnSignal(t *testing.T) {
	dir, repoDir := trackingCopy(t, false)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // accepts, and never answers
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	site, metrics := filepath.Join(dir, "site"), filepath.Join(dir, "updeb.prom")
	if err := os.WriteFile(filepath.Join(dir, "updeb.yaml"), []byte("fetch: {retries: 0}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stderr := interruptAfter(t, 1500*time.Millisecond, syscall.SIGINT, "--state", filepath.Join(dir, "state"), "--cache", filepath.Join(dir, "cache"),
		"--config", filepath.Join(dir, "updeb.yaml"), "--recipes", filepath.Join(repoDir, "recipes"), "--github-api", "http://"+ln.Addr().String()+"/api",
		"report", "--set", filepath.Join(repoDir, "release-sets.yaml"), "--output", site, "--metrics", metrics)
	if code != exitInterrupted || !strings.Contains(stderr, "interrupted") {
		t.Errorf("exit %d, want %d and a message saying it was interrupted:\n%s", code, exitInterrupted, stderr)
	}
	if entries, err := os.ReadDir(site); err == nil {
		t.Errorf("the interrupted report wrote %d file(s) into %s", len(entries), site)
	}
	if m, err := os.ReadFile(metrics); err == nil && !strings.Contains(string(m), "updeb_tracking_last_run_success{tracking=\"updeb\"} 0\n") {
		t.Errorf("the interrupted run's metrics do not say it failed:\n%s", m)
	}
}

// TestReportStoppedBeforeMetrics: a report stopped (SIGINT) while it waits
// for the metrics folder's lock, once the page is written, says so: the new
// page stands beside the metrics of the run before. Its hint said nothing
// half-done was left behind.
func TestReportStoppedBeforeMetrics(t *testing.T) {
	dir, _ := trackingCopy(t, true)
	site, textfile := filepath.Join(dir, "site"), filepath.Join(dir, "textfile")
	if err := os.Mkdir(textfile, 0o755); err != nil {
		t.Fatal(err)
	}
	held, err := lockfile.AcquireDir(t.Context(), textfile, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Unlock()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	type result struct {
		code   int
		stderr string
	}
	done := make(chan result, 1)
	go func() {
		var stdout, stderr bytes.Buffer
		code := run(ctx, []string{"--state", filepath.Join(dir, "state"), "--cache", filepath.Join(dir, "cache"), "--offline", "-q",
			"report", "--output", site, "--metrics", filepath.Join(textfile, "updeb.prom")}, &stdout, &stderr)
		done <- result{code, stderr.String()}
	}()
	// The page is written before the metrics, whose lock the test holds.
	for {
		if _, err := os.Stat(filepath.Join(site, "index.html")); err == nil {
			break
		}
		select {
		case r := <-done:
			t.Fatalf("the report ended before its page was written: exit %d\n%s", r.code, r.stderr)
		case <-time.After(10 * time.Millisecond):
		}
	}
	stop()
	r := <-done
	want := "hint: the page in " + site + " was written; the metrics file " + filepath.Join(textfile, "updeb.prom") + " was not (it holds the run before's): run report again"
	if r.code != exitInterrupted || strings.Contains(r.stderr, "nothing half-done") || !strings.Contains(r.stderr, want) {
		t.Errorf("exit %d, want %d and %q\n%s", r.code, exitInterrupted, want, r.stderr)
	}
}

// TestReportMetricsFolderMissing: a --metrics file in a folder that does not
// exist is refused (exit 2) before the page is written, not found out
// after it (exit 3 with a new page and no metrics).
func TestReportMetricsFolderMissing(t *testing.T) {
	dir, _ := trackingCopy(t, true)
	site := filepath.Join(dir, "site")
	code, _, stderr := runUpdeb("--state", filepath.Join(dir, "state"), "--cache", filepath.Join(dir, "cache"), "--offline", "-q",
		"report", "--output", site, "--metrics", filepath.Join(dir, "no-such-folder", "updeb.prom"))
	if code != exitUsage || !strings.Contains(stderr, "no-such-folder") {
		t.Errorf("exit %d, want %d naming the folder:\n%s", code, exitUsage, stderr)
	}
	if _, err := os.Stat(site); err == nil {
		t.Errorf("the page was written though the metrics cannot be")
	}
}

// TestReportSuitesGoWithRepo: --staging and --production name suites of
// --repo; without it they are refused (exit 2), not ignored while the page
// shows no repository.
func TestReportSuitesGoWithRepo(t *testing.T) {
	site := filepath.Join(t.TempDir(), "site")
	for _, f := range []string{"--staging", "--production"} {
		code, _, stderr := runCLI(t, "--offline", "report", "--output", site, f, "bookworm")
		if code != exitUsage || !strings.Contains(stderr, f+" goes with --repo") {
			t.Errorf("%s without --repo: exit %d\n%s", f, code, stderr)
		}
	}
	if _, err := os.Stat(site); err == nil {
		t.Errorf("the page was written")
	}
}

// TestReportOutIsNotOutput: report writes to --output; given --out (every
// command takes it: the packages' folder), the error says which is which
// instead of only that --output is required.
func TestReportOutIsNotOutput(t *testing.T) {
	code, stdout, stderr := runCLI(t, "report", "--out", t.TempDir())
	if want := "updeb: error: --output DIR is required\nupdeb: hint: --out (of every command) is the packages' folder; the report's folder is --output\n"; code != exitUsage || stdout != "" || stderr != want {
		t.Errorf("report --out: exit %d\n%s%s\nwant:\n%s", code, stdout, stderr, want)
	}
	if code, _, stderr := runCLI(t, "report"); code != exitUsage || stderr != "updeb: error: --output DIR is required\n" {
		t.Errorf("report: exit %d\n%s", code, stderr)
	}
}

// TestReportMetricsNameWarned: node_exporter's textfile collector reads only
// *.prom files; a --metrics file named otherwise is written, with a warning
// saying it will not be read, and one named *.prom gets none.
func TestReportMetricsNameWarned(t *testing.T) {
	dir, _ := trackingCopy(t, true)
	for name, warned := range map[string]bool{"updeb.txt": true, "updeb.prom": false} {
		metrics := filepath.Join(dir, name)
		code, _, stderr := runUpdeb("--state", filepath.Join(dir, "state"), "--cache", filepath.Join(dir, "cache"), "--offline",
			"report", "--output", filepath.Join(dir, "site-"+name), "--metrics", metrics)
		if _, err := os.Stat(metrics); err != nil || code != 0 && code != exitCheck {
			t.Fatalf("%s: exit %d, metrics %v:\n%s", name, code, err, stderr)
		}
		if got := strings.Contains(stderr, "reads only files named *.prom"); got != warned {
			t.Errorf("%s: warned %v, want %v:\n%s", name, got, warned, stderr)
		}
	}
}

// TestReportWarnsOfMissingSuite: a --staging or --production naming no suite
// of --repo (a typo) is warned about: the page would list every staging
// version as pending, or compare nothing, without a word.
func TestReportWarnsOfMissingSuite(t *testing.T) {
	dir, apt := stagingAndProduction(t)
	for _, c := range []struct {
		production string
		warned     bool
	}{{"production", false}, {"prodution", true}} {
		code, _, stderr := runUpdeb("--state", filepath.Join(dir, "state"), "--cache", filepath.Join(dir, "cache"), "--offline",
			"report", "--output", filepath.Join(dir, "site-"+c.production), "--repo", apt, "--production", c.production)
		if code != 0 && code != exitCheck {
			t.Fatalf("--production %s: exit %d\n%s", c.production, code, stderr)
		}
		if got := strings.Contains(stderr, `the repository has no suite "`+c.production+`": --production names the suite clients install from`); got != c.warned {
			t.Errorf("--production %s: warned %v, want %v\n%s", c.production, got, c.warned, stderr)
		}
		if strings.Contains(stderr, `no suite "staging"`) {
			t.Errorf("--production %s: warned of staging, which is there\n%s", c.production, stderr)
		}
	}
}

// TestListAndReportNameASuiteWhoseLinkIsLost: a suite whose link
// dists/SUITE is lost (a copy that leaves symbolic links out) has no live
// generation, so repo list and repo history of every suite and the status
// page left it out without a word, as if it never was: each now warns of
// it with the ln -sfn that restores it, as repo verify reports it.
func TestListAndReportNameASuiteWhoseLinkIsLost(t *testing.T) {
	dir, apt := stagingAndProduction(t)
	link := filepath.Join(apt, "dists", "production")
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	want := []string{"suite production is left out", "ln -sfn .gen/production/1 " + link}
	out, stderr := runCLIExit(t, 0, "repo", "list", "--repo", apt)
	if !strings.Contains(out, "staging") {
		t.Errorf("repo list does not list staging:\n%s", out)
	}
	_, history := runCLIExit(t, 0, "repo", "history", "--repo", apt)
	code, _, report := runUpdeb("--state", filepath.Join(dir, "state"), "--cache", filepath.Join(dir, "cache"), "--offline",
		"report", "--output", filepath.Join(dir, "site"), "--repo", apt)
	if code != 0 && code != exitCheck {
		t.Fatalf("report: exit %d\n%s", code, report)
	}
	for _, w := range want {
		if !strings.Contains(stderr, w) {
			t.Errorf("repo list does not say %q:\n%s", w, stderr)
		}
		if !strings.Contains(report, w) {
			t.Errorf("report does not say %q:\n%s", w, report)
		}
		if !strings.Contains(history, w) {
			t.Errorf("repo history does not say %q:\n%s", w, history)
		}
	}
}

// stagingAndProduction publishes tool 1.0-1 into suites staging and
// production of the repository apt, in a tracking copy it changes into.
func stagingAndProduction(t *testing.T) (dir, apt string) {
	t.Helper()
	testenv.RequireTool(t, "dpkg-deb")
	dir, _ = trackingCopy(t, true)
	key := generateKey(t, dir)
	apt = filepath.Join(dir, "apt")
	deb := buildDeb(t, dir, "tool", "1.0-1", "p")
	for _, suite := range []string{"staging", "production"} {
		if code, _, stderr := runCLI(t, "publish", "--repo", apt, "--key", key+".secret.asc", "--suite", suite, deb); code != 0 {
			t.Fatalf("publish to %s: exit %d\n%s", suite, code, stderr)
		}
	}
	return dir, apt
}
