package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/testkit/trackingfixture"
)

// A report that cannot be made (here a recipe that does not load) still
// writes the metrics file: the run failed, the last success is carried
// over, and none of the previous run's numbers stand (a stale "0
// violations" would hide the failure); the exit code is the failure's.
func TestReportFailedRunMetrics(t *testing.T) {
	dir := t.TempDir()
	repoDir := filepath.Join(dir, "repo")
	if err := copyTree(trackingfixture.Dir(), repoDir); err != nil {
		t.Fatal(err)
	}
	t.Chdir(repoDir)
	metrics := filepath.Join(dir, "updeb.prom")
	args := []string{"--state", filepath.Join(dir, "state"), "--cache", filepath.Join(dir, "cache"), "--offline", "-q", "report", "--output", filepath.Join(dir, "site"), "--metrics", metrics}
	if code, out, errs := runUpdeb(args...); code != 0 {
		t.Fatalf("report: exit %d\n%s%s", code, out, errs)
	}
	first, err := os.ReadFile(metrics)
	if err != nil || !strings.Contains(string(first), "updeb_tracking_last_run_success 1\n") {
		t.Fatalf("the first metrics (%v):\n%s", err, first)
	}
	last := regexpLine(t, string(first), "updeb_tracking_last_success_timestamp_seconds ")
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
	if !strings.Contains(string(m), "updeb_tracking_last_run_success 0\n") || regexpLine(t, string(m), "updeb_tracking_last_success_timestamp_seconds ") != last ||
		strings.Contains(string(m), "\nupdeb_release_sets_violating ") || !strings.Contains(string(m), "# TYPE updeb_release_sets_violating gauge\n") {
		t.Errorf("the failed run's metrics:\n%s", m)
	}
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
