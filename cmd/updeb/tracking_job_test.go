package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/updeb/updeb/internal/plan"
	"github.com/updeb/updeb/internal/testkit/testenv"
)

// fakeUpdeb stands in for updeb in the tracking job's own tests: it logs
// each command to $FAKE_LOG; plan --apply, with FAKE_PLAN=write, changes a
// recipe, adds one and writes a description (exit 1; the file
// $FAKE_MESSAGE when set), taking FAKE_SLEEP seconds, and with
// FAKE_PLAN=killed changes a recipe, leaves the temporary file of another
// and is killed (kill -9) before its description; report writes the
// metrics file with the run's verdict; data refresh --write FILE, with
// FAKE_REFRESH set, adds a line to FILE and prints FAKE_REFRESH's content
// as its report and FAKE_REFRESH_ERR on stderr, then exits
// FAKE_REFRESH_EXIT (0 when unset: 1 is a refresh that wrote some tables
// and kept others); data status prints
// FAKE_STATUS's content.
const fakeUpdeb = `#!/usr/bin/env bash
set -eu
while [ "$#" -gt 0 ] && [ "$1" = --config ]; do shift 2; done
echo "$$ $* start" >>"$FAKE_LOG"
case $1 in
data)
	if [ -n "${FAKE_STATUS:-}" ] && [ "$2" = status ]; then
		cat "$FAKE_STATUS"
	fi
	if [ -n "${FAKE_REFRESH:-}" ] && [ "${3:-}" = --write ]; then
		echo "as-of: $$" >>"$4"
		cat "$FAKE_REFRESH"
		if [ -n "${FAKE_REFRESH_ERR:-}" ]; then echo "$FAKE_REFRESH_ERR" >&2; fi
		exit "${FAKE_REFRESH_EXIT:-0}"
	fi
	;;
plan)
	msg=""
	while [ "$#" -gt 0 ]; do
		if [ "$1" = --message ]; then msg=$2; fi
		shift
	done
	if [ "${FAKE_PLAN:-}" = killed ]; then
		echo "version: $$" >>recipes/a.yaml
		echo half >recipes/.b.yaml.tmp-123456
		kill -9 $$
	fi
	if [ "${FAKE_PLAN:-}" = write ]; then
		sleep "${FAKE_SLEEP:-0}"
		echo "version: $$" >>recipes/a.yaml
		echo "name: b" >recipes/b.yaml
		if [ -n "${FAKE_MESSAGE:-}" ]; then
			cp "$FAKE_MESSAGE" "$msg"
		else
			printf 'Tracking: 1 bump\n\nChanges:\n- a\n' >"$msg"
		fi
		echo "$$ plan end" >>"$FAKE_LOG"
		exit 1
	fi
	exit 0
	;;
report)
	ok=""
	metrics=""
	while [ "$#" -gt 0 ]; do
		case $1 in
		--run-ok=*) ok=${1#--run-ok=} ;;
		--metrics) metrics=$2 ;;
		esac
		shift
	done
	if [ "$ok" = true ]; then v=1; else v=0; fi
	echo "updeb_tracking_last_run_success $v" >"$metrics"
	;;
esac
`

type trackingJob struct {
	t                       *testing.T
	dir, repo, metrics, log string
	env                     []string
	script                  string
}

func newTrackingJob(t *testing.T) *trackingJob {
	testenv.RequireTool(t, "bash", "git", "flock")
	dir := t.TempDir()
	j := &trackingJob{t: t, dir: dir, repo: filepath.Join(dir, "repo"), metrics: filepath.Join(dir, "updeb.prom"), log: filepath.Join(dir, "log")}
	fake := filepath.Join(dir, "updeb")
	if err := os.WriteFile(fake, []byte(fakeUpdeb), 0o755); err != nil {
		t.Fatal(err)
	}
	j.script, _ = filepath.Abs("../../contrib/tracking/updeb-tracking")
	j.env = append(os.Environ(), "HOME="+dir, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.org", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.org",
		"UPDEB="+fake, "UPDEB_ARGS=--config x.yaml", "FAKE_LOG="+j.log,
		"UPDEB_TRACKING_REPO="+j.repo, "UPDEB_TRACKING_SITE="+filepath.Join(dir, "site"), "UPDEB_TRACKING_METRICS="+j.metrics)
	os.MkdirAll(filepath.Join(j.repo, "recipes"), 0o755)
	os.WriteFile(filepath.Join(j.repo, "recipes", "a.yaml"), []byte("name: a\n"), 0o644)
	j.git("init", "-q", "-b", "main")
	j.git("add", "-A")
	j.git("commit", "-q", "-m", "start")
	return j
}

func (j *trackingJob) git(args ...string) string {
	j.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", j.repo}, args...)...)
	cmd.Env = j.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		j.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// run runs the job with extra settings and returns its exit status and output.
func (j *trackingJob) run(env ...string) (int, string) {
	cmd := exec.Command("bash", j.script)
	cmd.Env = append(append([]string{}, j.env...), env...)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	} else if err != nil {
		j.t.Fatalf("the job: %v\n%s", err, out)
	}
	return 0, string(out)
}

// file writes content to name in the job's folder and returns its path.
func (j *trackingJob) file(name, content string) string {
	j.t.Helper()
	p := filepath.Join(j.dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		j.t.Fatal(err)
	}
	return p
}

func (j *trackingJob) metric() string {
	b, _ := os.ReadFile(j.metrics)
	return string(b)
}

// TestTrackingJobDirtyTree: a working tree with changes (a run killed in
// the middle of plan --apply, a person's edit) is refused, and the metrics
// say this run failed: the previous run's success does not stand for it.
func TestTrackingJobDirtyTree(t *testing.T) {
	j := newTrackingJob(t)
	if code, out := j.run(); code != 0 || j.metric() != "updeb_tracking_last_run_success 1\n" {
		t.Fatalf("a clean run: exit %d, metrics %q\n%s", code, j.metric(), out)
	}
	os.Remove(j.log)
	os.WriteFile(filepath.Join(j.repo, "recipes", "a.yaml"), []byte("name: a\nversion: half\n"), 0o644)
	code, out := j.run("FAKE_PLAN=write")
	if code != 2 || !strings.Contains(out, "has changes") || j.metric() != "updeb_tracking_last_run_success 0\n" {
		t.Errorf("a dirty tree: exit %d, metrics %q\n%s", code, j.metric(), out)
	}
	if b, _ := os.ReadFile(j.log); strings.Contains(string(b), " plan ") {
		t.Errorf("plan ran in a dirty tree:\n%s", b)
	}
}

// TestTrackingJobLeftOnItsBranch: a run cut short after its commit (the
// push hung until the service's timeout, the machine went down) leaves the
// tree on the job's own branch; the next run goes back to the base branch
// and makes its branch from there, not from the last proposal.
func TestTrackingJobLeftOnItsBranch(t *testing.T) {
	j := newTrackingJob(t)
	main := j.git("rev-parse", "main")
	j.git("checkout", "-q", "-B", "updeb/tracking")
	os.WriteFile(filepath.Join(j.repo, "stale"), []byte("x\n"), 0o644)
	j.git("add", "stale")
	j.git("commit", "-q", "-m", "the interrupted run's proposal")
	code, out := j.run("FAKE_PLAN=write")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if head := j.git("rev-parse", "--abbrev-ref", "HEAD"); head != "main" {
		t.Errorf("the job ended on %s, not main\n%s", head, out)
	}
	if parent := j.git("rev-parse", "updeb/tracking~1"); parent != main {
		t.Errorf("the branch was made from %s, not main (%s)\n%s", parent, main, j.git("log", "--oneline", "updeb/tracking"))
	}
}

// TestTrackingJobBranchBusy: the branch cannot be made (here a branch
// named updeb is in the way; with git 2.44 and later, also the branch
// checked out in another worktree): the run fails, and leaves nothing of
// its own in the tree, so that the next run is not refused.
func TestTrackingJobBranchBusy(t *testing.T) {
	j := newTrackingJob(t)
	j.git("branch", "updeb")
	code, out := j.run("FAKE_PLAN=write")
	if code != 2 || !strings.Contains(out, "git checkout -B updeb/tracking failed") || j.metric() != "updeb_tracking_last_run_success 0\n" {
		t.Errorf("exit %d, metrics %q\n%s", code, j.metric(), out)
	}
	if st := j.git("status", "--porcelain"); st != "" {
		t.Errorf("the run left the tree dirty:\n%s", st)
	}
}

// TestTrackingJobPushSecret: a push command that carries a token in its URL
// fails: the job's log (the journal, a CI log) does not show the token.
func TestTrackingJobPushSecret(t *testing.T) {
	j := newTrackingJob(t)
	code, out := j.run("FAKE_PLAN=write", "UPDEB_TRACKING_PUSH=git push https://bot:glpat-s3cr3t@127.0.0.1:1/x.git")
	if code == 0 || !strings.Contains(out, "push (") {
		t.Fatalf("a failed push: exit %d\n%s", code, out)
	}
	if strings.Contains(out, "s3cr3t") {
		t.Errorf("the log shows the token:\n%s", out)
	}
}

// TestTrackingJobPull: UPDEB_TRACKING_PULL brings what was merged upstream
// into the checkout before the plan; a pull that fails stops the run (a
// plan on the old checkout would propose again what was merged), says so
// without the token, and the metrics say the run failed.
func TestTrackingJobPull(t *testing.T) {
	j := newTrackingJob(t)
	upstream := filepath.Join(j.dir, "upstream.git")
	testenv.Run(t, "git", "clone", "-q", "--bare", j.repo, upstream)
	clone := exec.Command("git", "-C", j.dir, "clone", "-q", upstream, "other")
	clone.Env = j.env
	if out, err := clone.CombinedOutput(); err != nil {
		t.Fatalf("clone: %v\n%s", err, out)
	}
	other := filepath.Join(j.dir, "other")
	os.WriteFile(filepath.Join(other, "recipes", "merged.yaml"), []byte("name: merged\n"), 0o644)
	for _, args := range [][]string{{"add", "-A"}, {"commit", "-q", "-m", "merged"}, {"push", "-q", "origin", "main"}} {
		cmd := exec.Command("git", append([]string{"-C", other}, args...)...)
		cmd.Env = j.env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	code, out := j.run("UPDEB_TRACKING_PULL=git pull -q --ff-only " + upstream + " main")
	if _, err := os.Stat(filepath.Join(j.repo, "recipes", "merged.yaml")); code != 0 || err != nil {
		t.Fatalf("a pull: exit %d, merged recipe: %v\n%s", code, err, out)
	}
	os.Remove(j.log)
	code, out = j.run("FAKE_PLAN=write", "UPDEB_TRACKING_PULL=git pull -q --ff-only https://bot:glpat-s3cr3t@127.0.0.1:1/x.git main")
	if code != 3 || !strings.Contains(out, "pull (git pull -q --ff-only https://***@127.0.0.1:1/x.git main) failed") || strings.Contains(out, "s3cr3t") ||
		j.metric() != "updeb_tracking_last_run_success 0\n" {
		t.Errorf("a failed pull: exit %d, metrics %q\n%s", code, j.metric(), out)
	}
	if b, _ := os.ReadFile(j.log); strings.Contains(string(b), " plan ") {
		t.Errorf("plan ran after a failed pull:\n%s", b)
	}
}

// TestTrackingJobTwoAtOnce: the timer's run and a person's run at the same
// time take turns: the second applies its plan only after the first has
// committed and gone back to the base branch, never into its half-applied
// tree.
func TestTrackingJobTwoAtOnce(t *testing.T) {
	j := newTrackingJob(t)
	var wg sync.WaitGroup
	codes, outs := make([]int, 2), make([]string, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], outs[i] = j.run("FAKE_PLAN=write", "FAKE_SLEEP=1")
		}()
	}
	wg.Wait()
	b, _ := os.ReadFile(j.log)
	var plan []string
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 3 && f[1] == "plan" {
			plan = append(plan, f[2])
		}
	}
	if strings.Join(plan, " ") != "--apply end --apply end" || codes[0] != 0 || codes[1] != 0 {
		t.Errorf("two runs at once: exits %v, plan steps %v\n%s\n%s\n%s", codes, plan, b, outs[0], outs[1])
	}
	if st := j.git("status", "--porcelain"); st != "" || j.git("rev-parse", "--abbrev-ref", "HEAD") != "main" {
		t.Errorf("the runs left the tree dirty or off main:\n%s", st)
	}
}

// TestTrackingJobFailedAfterWriting: plan --apply wrote a bump but could
// not follow it in the release set file (its description lists it under
// "Failed after writing"; exit 1, as for changes written): the branch is
// made, and the run is a failure, not a success the metrics would show
// green.
func TestTrackingJobFailedAfterWriting(t *testing.T) {
	j := newTrackingJob(t)
	p := &plan.Plan{Now: "2026-11-28"}
	bump := plan.Action{Kind: plan.ActBump, Recipe: "a", From: "1.0", Version: "1.1"}
	desc := plan.Describe(p, &plan.ApplyResult{
		Changes:  []plan.Change{{Kind: plan.ActBump, Recipe: "a", From: "1.0", To: "1.1", File: "recipes/a.yaml"}},
		Failures: []plan.Failure{{Action: bump, Error: "a was bumped, but release-sets.yaml was not updated", Written: true}},
	}, nil)
	msg := filepath.Join(j.dir, "description")
	if err := os.WriteFile(msg, desc, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out := j.run("FAKE_PLAN=write", "FAKE_MESSAGE="+msg)
	if code != 1 || !strings.Contains(out, "plan --apply refused a recipe") || j.metric() != "updeb_tracking_last_run_success 0\n" {
		t.Errorf("a change that failed after writing: exit %d, metrics %q\n%s", code, j.metric(), out)
	}
	if got := j.git("log", "-1", "--format=%B", "updeb/tracking"); !strings.Contains(got, "Failed after writing") {
		t.Errorf("the branch's message:\n%s", got)
	}
}

// TestTrackingJobKilledPlan: a plan --apply killed (kill -9: the OOM
// killer) after writing a recipe, its temporary file of another left in
// the tree, is a failed run whose branch holds what was written for review,
// never the temporary file: the job removed such files only before
// plan --apply ran, and git add -A committed this one.
func TestTrackingJobKilledPlan(t *testing.T) {
	j := newTrackingJob(t)
	code, out := j.run("FAKE_PLAN=killed")
	if code != 137 || !strings.Contains(out, "removing recipes/.b.yaml.tmp-123456") || j.metric() != "updeb_tracking_last_run_success 0\n" {
		t.Errorf("a killed plan --apply: exit %d, metrics %q\n%s", code, j.metric(), out)
	}
	if files := j.git("diff", "--name-status", "main", "updeb/tracking"); files != "M\trecipes/a.yaml" {
		t.Errorf("the branch holds:\n%s", files)
	}
	if got := j.git("log", "-1", "--format=%B", "updeb/tracking"); !strings.Contains(got, "unfinished run (updeb plan --apply exit 137)") {
		t.Errorf("the branch's message:\n%s", got)
	}
	if st := j.git("status", "--porcelain", "--ignored"); st != "" {
		t.Errorf("the job left files behind:\n%s", st)
	}
}

// newTrackingJobWithDataFile is newTrackingJob with a data file,
// compat-data.yaml, committed in the repository.
func newTrackingJobWithDataFile(t *testing.T) *trackingJob {
	j := newTrackingJob(t)
	os.WriteFile(filepath.Join(j.repo, "compat-data.yaml"), []byte("as-of: 0\n"), 0o644)
	j.git("add", "-A")
	j.git("commit", "-q", "-m", "data file")
	return j
}

// TestTrackingJobLongRefreshReport: a data refresh whose report is long
// (many products and tables) and names a change first keeps its change:
// grep -q, done after the first line, closed the pipe while the grep
// before it still wrote, and under pipefail that grep's SIGPIPE read as
// "no change", so the refreshed data file was thrown away.
func TestTrackingJobLongRefreshReport(t *testing.T) {
	j := newTrackingJobWithDataFile(t)
	var report strings.Builder
	report.WriteString("Refreshed compat-data.yaml:\n  istio         2 cycles  changed 1.31: end of life 2027-05-30 -> 2027-03-31\n")
	for i := range 20000 {
		fmt.Fprintf(&report, "  product%05d  4 cycles  no change\n", i)
	}
	refresh := filepath.Join(j.dir, "refresh.txt")
	if err := os.WriteFile(refresh, []byte(report.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out := j.run("FAKE_REFRESH=" + refresh)
	if code != 0 {
		t.Fatalf("exit %d\n%.2000s", code, out)
	}
	if diff := j.git("diff", "--name-only", "main", "updeb/tracking"); diff != "compat-data.yaml" {
		t.Errorf("the branch changes %q, want the refreshed compat-data.yaml\n%.2000s", diff, out)
	}
}

// TestTrackingJobRefreshKeptSomeTables: a data refresh that wrote the
// tables it could and kept one whose page upstream has not written yet
// (exit 1) has its change proposed all the same, and the run fails (exit
// 1), so that the page and the metrics say a table lags. The job threw the
// refreshed file away, and no table moved until every upstream answered.
func TestTrackingJobRefreshKeptSomeTables(t *testing.T) {
	j := newTrackingJobWithDataFile(t)
	refresh := filepath.Join(j.dir, "refresh.txt")
	os.WriteFile(refresh, []byte("compatibility tables refreshed: compat-data.yaml (as of 2026-12-01T00:00:00Z; not refreshed, kept as they were: calico)\n"+
		"  helm          43 rows    added 3.22 (replaced the repository compat-data.yaml copy)\n"), 0o644)
	code, out := j.run("FAKE_REFRESH="+refresh, "FAKE_REFRESH_EXIT=1")
	if code != 1 || !strings.Contains(out, "data refresh --write compat-data.yaml failed (exit 1)") || j.metric() != "updeb_tracking_last_run_success 0\n" {
		t.Errorf("exit %d, metrics %q\n%s", code, j.metric(), out)
	}
	if diff := j.git("diff", "--name-only", "main", "updeb/tracking"); diff != "compat-data.yaml" {
		t.Errorf("the branch changes %q, want the refreshed compat-data.yaml\n%s", diff, out)
	}
	if msg := j.git("log", "-1", "--format=%B", "updeb/tracking"); !strings.Contains(msg, "added 3.22") || !strings.Contains(msg, "kept as they were: calico") {
		t.Errorf("the message:\n%s", msg)
	}
}

// TestTrackingJobLaggingTableWithinMaxAge: a table the refresh kept because
// its upstream lags (a Calico page not written yet) while its copy is within
// data: max-age-days: is no failure of the run: there is nothing to do but
// wait, and the job failed every day for weeks (the metric and page said the
// run failed). It fails once the kept copy is stale, when data status does
// not name it, and when rows went missing (the hint names --allow-dropped).
func TestTrackingJobLaggingTableWithinMaxAge(t *testing.T) {
	for _, c := range []struct {
		name, calico, stderr string
		code                 int
	}{
		{"within max age", `{"table": "calico", "age_days": 12, "stale": false}`, "updeb: 1 table not refreshed", 0},
		{"stale", `{"table": "calico", "age_days": 40, "stale": true}`, "updeb: 1 table not refreshed", 1},
		{"not in data status", `{"table": "cilium", "age_days": 1, "stale": false}`, "updeb: 1 table not refreshed", 1},
		{"rows missing", `{"table": "calico", "age_days": 12, "stale": false}`, "hint: for rows or cycles missing, ... run again with --allow-dropped", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			j := newTrackingJobWithDataFile(t)
			refresh := j.file("refresh.txt", "compatibility tables refreshed: compat-data.yaml (as of 2026-12-01T00:00:00Z; not refreshed, kept as they were: calico)\n"+
				"  helm          43 rows    added 3.22 (replaced the repository compat-data.yaml copy)\n")
			status := j.file("status.json", "{\n  \"age_days\": 1,\n  \"max_age_days\": 30,\n  \"tables\": [\n    {\"table\": \"helm\", \"age_days\": 1, \"stale\": false},\n    "+c.calico+"\n  ]\n}\n")
			code, out := j.run("FAKE_REFRESH="+refresh, "FAKE_REFRESH_EXIT=1", "FAKE_STATUS="+status, "FAKE_REFRESH_ERR="+c.stderr)
			failed := strings.Contains(out, "data refresh --write compat-data.yaml failed (exit 1)")
			if code != c.code || failed != (c.code != 0) {
				t.Errorf("exit %d, want %d\n%s", code, c.code, out)
			}
			if want := map[bool]string{true: "updeb_tracking_last_run_success 1\n", false: "updeb_tracking_last_run_success 0\n"}[c.code == 0]; j.metric() != want {
				t.Errorf("metrics %q, want %q", j.metric(), want)
			}
			if c.code == 0 && !strings.Contains(out, "kept calico as they were (upstream failed, named above); not a failure while within data: max-age-days: 30") {
				t.Errorf("the log does not say why the run did not fail:\n%s", out)
			}
			if !strings.Contains(out, c.stderr) {
				t.Errorf("the refresh's stderr is not in the job's log:\n%s", out)
			}
			if diff := j.git("diff", "--name-only", "main", "updeb/tracking"); diff != "compat-data.yaml" {
				t.Errorf("the branch changes %q, want the refreshed compat-data.yaml\n%s", diff, out)
			}
		})
	}
}

// TestTrackingJobQuietUpstream: a refresh that changes no row or cycle is
// thrown away while the data file on the base branch is young, and kept
// (its new as-of date) once that copy is half as old as data:
// max-age-days: allows, or stale (dated after today): else a quiet upstream
// left the tables in use older than that, warned about by every command and
// on the status page, however often the job ran.
func TestTrackingJobQuietUpstream(t *testing.T) {
	j := newTrackingJobWithDataFile(t)
	refresh := j.file("refresh.txt", "support data refreshed: compat-data.yaml\n  kubernetes    4 cycles  no change\n"+
		"compatibility tables refreshed: compat-data.yaml\n  helm          42 rows    no change (replaced the repository compat-data.yaml copy)\n")
	status := filepath.Join(j.dir, "status.json")
	// A copy dated after today is 0 days old, and stale.
	for _, c := range []struct {
		age   int
		stale bool
		kept  bool
		why   string
	}{{3, false, false, ""}, {14, false, false, ""}, {15, false, true, "15 day(s) old"}, {40, true, true, "40 day(s) old"}, {0, true, true, "stale, of no date or dated after today"}} {
		os.WriteFile(status, fmt.Appendf(nil, "{\n  \"age_days\": 1,\n  \"max_age_days\": 30,\n  \"tables\": [\n    {\"table\": \"endoflife\", \"age_days\": 1, \"stale\": false},\n    {\"table\": \"helm\", \"age_days\": %d, \"stale\": %v}\n  ]\n}\n", c.age, c.stale), 0o644)
		code, out := j.run("FAKE_REFRESH="+refresh, "FAKE_STATUS="+status)
		if code != 0 {
			t.Fatalf("%d days old: exit %d\n%s", c.age, code, out)
		}
		diff := ""
		if strings.Contains(j.git("branch"), "updeb/tracking") {
			diff = j.git("diff", "--name-only", "main", "updeb/tracking")
			if msg := j.git("log", "-1", "--format=%B", "updeb/tracking"); !strings.Contains(msg, "no row or cycle changed: kept for its new as-of date, the copy in use being "+c.why+" (data: max-age-days: 30)") {
				t.Errorf("%d days old: the message:\n%s", c.age, msg)
			}
			j.git("branch", "-q", "-D", "updeb/tracking")
		}
		if (diff == "compat-data.yaml") != c.kept {
			t.Errorf("%d days old: the branch changes %q, want the data file kept %v\n%s", c.age, diff, c.kept, out)
		}
	}
}

// runRefreshingInto runs the job with the refresh report and data status
// given, and checks that it refreshed file (data/compat-data.yaml in the
// repository) and made a branch that changes it.
func (j *trackingJob) runRefreshingInto(file, refresh, status string) {
	j.t.Helper()
	code, out := j.run("FAKE_REFRESH="+refresh, "FAKE_STATUS="+status)
	if code != 0 {
		j.t.Fatalf("exit %d\n%s", code, out)
	}
	if log, _ := os.ReadFile(j.log); !strings.Contains(string(log), " data refresh --write "+file+" start\n") {
		j.t.Errorf("the job did not refresh %s:\n%s", file, log)
	}
	if diff := j.git("diff", "--name-only", "main", "updeb/tracking"); diff != "data/compat-data.yaml" {
		j.t.Errorf("the branch changes %q, want data/compat-data.yaml\n%s", diff, out)
	}
}

// TestTrackingJobCreatesMissingDataFile: a config whose data: file: names a
// file not written yet (data status --json: missing_file) had the job refresh
// the state folder, which no command reads once that file exists, and never
// create it; every command warned about it on every run. The job refreshes
// into it, and the new file is the change proposed.
func TestTrackingJobCreatesMissingDataFile(t *testing.T) {
	j := newTrackingJob(t)
	file := filepath.Join(j.repo, "data", "compat-data.yaml")
	refresh := j.file("refresh.txt", "compatibility tables refreshed: "+file+"\n  helm          42 rows    no change (replaced the bundled copy)\n")
	status := j.file("status.json", fmt.Sprintf("{\n  \"age_days\": 1,\n  \"max_age_days\": 30,\n  \"missing_file\": %q,\n  \"tables\": [\n    {\"table\": \"helm\", \"copy\": \"bundled\", \"age_days\": 1, \"stale\": false}\n  ]\n}\n", file))
	os.MkdirAll(filepath.Dir(file), 0o755)
	j.runRefreshingInto(file, refresh, status)
}

// TestTrackingJobDataFileOfConfig: the repository's data file is the one
// updeb's commands use, as data status names it (data: file: in the config,
// or compat-data.yaml beside a recipes folder that is not the repository's
// top): the job refreshed the state folder instead, which no command reads
// while that file is there, so the tables in use never moved.
func TestTrackingJobDataFileOfConfig(t *testing.T) {
	j := newTrackingJob(t)
	file := filepath.Join(j.repo, "data", "compat-data.yaml")
	os.MkdirAll(filepath.Dir(file), 0o755)
	os.WriteFile(file, []byte("as-of: 0\n"), 0o644)
	j.git("add", "-A")
	j.git("commit", "-q", "-m", "data file")
	refresh := filepath.Join(j.dir, "refresh.txt")
	os.WriteFile(refresh, []byte("compatibility tables refreshed: "+file+"\n  helm          43 rows    added 3.22 (replaced the repository copy)\n"), 0o644)
	status := filepath.Join(j.dir, "status.json")
	os.WriteFile(status, fmt.Appendf(nil, "{\n  \"age_days\": 1,\n  \"max_age_days\": 30,\n  \"repository\": %q,\n  \"tables\": [\n    {\"table\": \"helm\", \"copy\": \"repository %s\", \"age_days\": 1, \"stale\": false}\n  ]\n}\n", file, file), 0o644)
	j.runRefreshingInto(file, refresh, status)
}

// TestTrackingJobDetachedHead: a run in a working tree on a detached HEAD
// goes back to that commit after its commit on the job's branch, so that
// the status page is made of the base and the next run starts there. It
// went back to "HEAD", its own branch: the page showed the proposal as if
// merged, and the next run failed (2) as left on the job's own branch.
func TestTrackingJobDetachedHead(t *testing.T) {
	j := newTrackingJob(t)
	main := j.git("rev-parse", "main")
	j.git("checkout", "-q", "--detach")
	for i := range 2 {
		if code, out := j.run("FAKE_PLAN=write"); code != 0 {
			t.Fatalf("run %d on a detached HEAD: exit %d\n%s", i+1, code, out)
		}
		if head := j.git("rev-parse", "HEAD"); head != main {
			t.Errorf("run %d ended at %s (%s), not at the commit it started on (%s)", i+1, head, j.git("rev-parse", "--abbrev-ref", "HEAD"), main)
		}
		if parent := j.git("rev-parse", "updeb/tracking~1"); parent != main {
			t.Errorf("run %d made its branch from %s, not %s", i+1, parent, main)
		}
	}
}

// TestTrackingJobQuietUpstreamTableKept: the only old table is one the
// refresh kept (its upstream page lags, exit 1): the refreshed file gives
// the others a new as-of date and that table none, so it is not kept for
// its date: the job proposed such a file every day (and again each day
// after a merge) while the page lagged, each saying it was kept for a new
// as-of date of a copy whose old table it left as old. A table that was
// refreshed and old still has the file kept.
func TestTrackingJobQuietUpstreamTableKept(t *testing.T) {
	j := newTrackingJobWithDataFile(t)
	refresh := j.file("refresh.txt", "compatibility tables refreshed: compat-data.yaml (as of 2026-12-01T00:00:00Z; not refreshed, kept as they were: calico, endoflife)\n"+
		"  helm          42 rows    no change (replaced the repository compat-data.yaml copy)\n")
	for _, helmAge := range []int{2, 20} {
		status := j.file("status.json", fmt.Sprintf("{\n  \"age_days\": 40,\n  \"max_age_days\": 30,\n  \"tables\": [\n    {\"table\": \"endoflife\", \"age_days\": 40, \"stale\": true},\n"+
			"    {\"table\": \"helm\", \"age_days\": %d, \"stale\": false},\n    {\"table\": \"calico\", \"age_days\": 40, \"stale\": true}\n  ]\n}\n", helmAge))
		code, out := j.run("FAKE_REFRESH="+refresh, "FAKE_REFRESH_EXIT=1", "FAKE_STATUS="+status)
		if code != 1 || !strings.Contains(out, "data refresh --write compat-data.yaml failed (exit 1)") {
			t.Errorf("helm %d days old: exit %d\n%s", helmAge, code, out)
		}
		branch := strings.Contains(j.git("branch"), "updeb/tracking")
		if branch {
			if msg := j.git("log", "-1", "--format=%B", "updeb/tracking"); !strings.Contains(msg, "kept for its new as-of date, the copy in use being 20 day(s) old") {
				t.Errorf("helm %d days old: the message:\n%s", helmAge, msg)
			}
			j.git("branch", "-q", "-D", "updeb/tracking")
		}
		if branch != (helmAge == 20) {
			t.Errorf("helm %d days old: a branch %v, want %v\n%s", helmAge, branch, helmAge == 20, out)
		}
	}
}
