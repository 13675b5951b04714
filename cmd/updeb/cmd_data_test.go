package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/compatdata"
	"github.com/updeb/updeb/internal/supportdata"
	"github.com/updeb/updeb/internal/testkit/compatsrc"
	"github.com/updeb/updeb/internal/testkit/eoltest"
	"github.com/updeb/updeb/internal/testkit/squid"
)

// compatSources is the real upstream copies (README.md there says which file
// and version each is).
var compatSources = filepath.Join("..", "..", "testdata", "compat-sources")

// fakeTables serves the real upstream copies of every compatibility table
// (kubeadm's on the release-1.37 branch; see compatsrc.ServeCopies) and returns the server and
// the config's data: sources: pointing at it, as flow YAML.
func fakeTables(t *testing.T) (*compatsrc.Server, string) {
	t.Helper()
	up := compatsrc.New(t.Cleanup)
	if err := up.ServeCopies(compatSources, "1.37", []string{"3.31", "3.32"}, []string{"1.18", "1.19", "1.20"}); err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, table := range compatdata.Names() {
		urls, _ := json.Marshal(up.Sources()[table])
		parts = append(parts, fmt.Sprintf("%s: %s", table, urls))
	}
	return up, "{" + strings.Join(parts, ", ") + "}"
}

// fakeEndOfLife serves the bundled end-of-life data with Kubernetes 1.37 and
// Istio 1.31 released.
func fakeEndOfLife(t *testing.T) *eoltest.Server {
	t.Helper()
	bundled, err := supportdata.Bundled()
	if err != nil {
		t.Fatal(err)
	}
	api := eoltest.New(bundled, t.Cleanup)
	api.Set("kubernetes", append([]supportdata.Cycle{eoltest.Cycle("kubernetes", "1.37", "2026-08-26", "2027-08-28", "2027-10-28", "1.37.1")}, api.Cycles("kubernetes")...))
	istio31 := eoltest.Cycle("istio", "1.31", "2026-08-31", "", "2027-02-28", "1.31.1")
	istio31.SupportedKubernetes = "1.32 - 1.37"
	api.Set("istio", append([]supportdata.Cycle{istio31}, api.Cycles("istio")...))
	return api
}

// insert puts add after the first line of b that starts with after.
func insert(t *testing.T, b []byte, after, add string) []byte {
	t.Helper()
	i := bytes.Index(b, []byte(after))
	if i < 0 {
		t.Fatalf("no %q", after)
	}
	j := i + bytes.IndexByte(b[i:], '\n') + 1
	return slices.Concat(b[:j], []byte(add), b[j:])
}

type finding struct{ Set, Rule, Severity, Component string }

// compatFindings runs updeb compat --json and returns its exit code and
// findings as "set rule severity component".
func compatFindings(t *testing.T, args ...string) (int, []string, string) {
	t.Helper()
	code, stdout, stderr := runUpdeb(append([]string{"compat", "--json"}, args...)...)
	var r struct{ Findings []finding }
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("compat --json: exit %d: %v\n%s%s", code, err, stdout, stderr)
	}
	var out []string
	for _, f := range r.Findings {
		out = append(out, f.Set+" "+f.Rule+" "+f.Severity+" "+f.Component)
	}
	return code, out, stderr
}

// TestCompatAfterOneRefresh is the "done when": updeb compat on a
// release set with a Kubernetes minor newer than the bundled tables (1.37)
// gives upstream's verdict after one updeb data refresh, without a new
// updeb. Upstream's newer copies are the real ones with the row upstream
// adds for a new minor: containerd's "Kubernetes Support" row, kubeadm's
// SupportedEtcdVersion entry on release-1.37, a Helm 4.3 row.
func TestCompatAfterOneRefresh(t *testing.T) {
	sq := squid.ForTest(t)
	api := fakeEndOfLife(t)
	up, sources := fakeTables(t)
	ctr := compatsrc.Path(compatdata.Containerd, "", 0)
	up.Put(ctr, compatsrc.Answer{Body: insert(t, up.Get(ctr), "| 1.36 ", "| 1.37               | 2.3.0+, 2.2.4+                   | v1              |\n")})
	kubeadm := compatsrc.Path(compatdata.KubeadmEtcd, "1.37", 0)
	up.Put(kubeadm, compatsrc.Answer{Body: insert(t, up.Get(kubeadm), "\t\t36: \"3.6.7-0\",", "\t\t37: \"3.6.7-0\",\n")})
	helm4 := compatsrc.Path(compatdata.Helm, "", 0)
	up.Put(helm4, compatsrc.Answer{Body: insert(t, up.Get(helm4), "|--------------|", "| 4.3.x        | 1.37.x - 1.34.x               |\n")})

	dir := t.TempDir()
	conf := filepath.Join(dir, "updeb.yaml")
	os.WriteFile(conf, fmt.Appendf(nil, "proxy: %s\nfetch: {retries: 0}\ndata: {endoflife-url: %q, sources: %s}\n", sq.URL, api.Template(), sources), 0o644)
	sets := filepath.Join(dir, "sets.yaml")
	os.WriteFile(sets, []byte(`sets:
  - name: k137
    components: {kubernetes: 1.37.1, containerd: 2.3.4, etcd: 3.6.14, helm: 4.3.0, cri-tools: 1.37.0, istioctl: 1.31.1}
  - name: k137-old
    components: {kubernetes: 1.37.1, containerd: 2.2.3, helm: 3.21.4, istioctl: 1.29.2}
`), 0o644)
	common := []string{"--config", conf, "--state", filepath.Join(dir, "state"), "--cache", filepath.Join(dir, "cache")}
	check := append([]string{"--set", sets, "--now", "2026-11-25"}, common...)

	code, before, stderr := compatFindings(t, check...)
	k137 := "kube-controller-manager kube-scheduler kubelet kube-proxy kubeadm kubectl"
	var eolUnknown []string
	for _, c := range append([]string{"kubernetes"}, strings.Fields(k137)...) {
		eolUnknown = append(eolUnknown, "k137 eol-unknown warning "+c)
	}
	want := slices.Concat(eolUnknown[:1], eolUnknown[1:], []string{
		"k137 containerd-recommended warning containerd", "k137 kubeadm-etcd warning etcd", "k137 helm-skew warning helm",
		"k137 eol-unknown warning istioctl"})
	if code != 1 || !strings.Contains(stderr, "updeb: compatibility tables: bundled copy") || !containsAll(before, want...) ||
		!containsAll(before, "k137-old helm-skew violation helm") {
		t.Fatalf("before the refresh: exit %d\n%s\n%s", code, strings.Join(before, "\n"), stderr)
	}

	code, stdout, stderr := runUpdeb(append([]string{"data", "refresh"}, common...)...)
	if code != 0 || !strings.Contains(stdout, "containerd     6 rows    added 1.37") || !strings.Contains(stdout, "kubeadm-etcd   4 rows    added 1.37") ||
		!strings.Contains(stdout, "helm          43 rows    added 4.3") {
		t.Fatalf("data refresh: exit %d\n%s%s", code, stdout, stderr)
	}

	code, after, stderr := compatFindings(t, check...)
	// Upstream's verdict: the k137 set is fine; the other breaks Helm's n-3
	// table (3.21: 1.33-1.36) and Istio's (1.29: 1.31-1.35), has a
	// containerd outside the recommended list for 1.37 (2.3.0+, 2.2.4+), and
	// containerd 2.2 and Istio 1.29 are end-of-life.
	wantAfter := []string{"k137-old containerd-recommended warning containerd", "k137-old eol violation containerd", "k137-old helm-skew violation helm",
		"k137-old eol violation istioctl", "k137-old istio-kubernetes violation istioctl"}
	if code != 1 || strings.Join(after, "\n") != strings.Join(wantAfter, "\n") ||
		!strings.Contains(stderr, "updeb: compatibility tables: refreshed "+filepath.Join(dir, "state", compatdata.File)+" copy") {
		t.Errorf("after the refresh: exit %d\n%s\nwant\n%s\n%s", code, strings.Join(after, "\n"), strings.Join(wantAfter, "\n"), stderr)
	}
	if log := sq.Log(); !strings.Contains(log, "GET "+up.URL+kubeadm) || !strings.Contains(log, "GET "+api.URL+"/api/kubernetes.json") {
		t.Errorf("squid's log lacks the refresh's requests:\n%s", log)
	}
}

func containsAll(list []string, want ...string) bool {
	for _, w := range want {
		if !slices.Contains(list, w) {
			return false
		}
	}
	return true
}

// TestDataFileInRepository: data refresh --write puts every table and the
// end-of-life data into the recipes repository's data file; compat, plan
// and data status then use it and say so; an override there is reported and
// survives the next refresh; a refused answer keeps the file byte for byte;
// an override without a reason is invalid input.
func TestDataFileInRepository(t *testing.T) {
	sq := squid.ForTest(t)
	api := fakeEndOfLife(t)
	up, sources := fakeTables(t)
	repo := planProject(t, "http://127.0.0.1:9") // recipes/: kubernetes-1.34 to 1.36, etcd, helm
	// The default place: beside the recipes folder (no data: file: in the config).
	dataFile := filepath.Join(repo, compatdata.RepositoryFile)
	conf := filepath.Join(repo, "updeb.yaml")
	os.WriteFile(conf, fmt.Appendf(nil, "proxy: %s\nfetch: {retries: 0}\ndata: {endoflife-url: %q, sources: %s}\n", sq.URL, api.Template(), sources), 0o644)
	state := filepath.Join(repo, "state")
	common := []string{"--config", conf, "--state", state, "--cache", filepath.Join(repo, "cache"), "--recipes", filepath.Join(repo, "recipes")}
	run := func(args ...string) (int, string, string) { return runUpdeb(append(args, common...)...) }

	code, stdout, stderr := run("data", "refresh", "--write", dataFile)
	if code != 0 || !strings.Contains(stdout, "support data refreshed: "+dataFile) || !strings.Contains(stdout, "compatibility tables refreshed: "+dataFile) {
		t.Fatalf("refresh --write: exit %d\n%s%s", code, stdout, stderr)
	}
	if _, err := os.Stat(state); err == nil {
		t.Error("refresh --write wrote the state folder")
	}
	checkJSON(t, "data refresh", func() string {
		_, out, _ := run("data", "refresh", "--write", dataFile, "--json", "--table", "cri-tools")
		return out
	}())

	sets := filepath.Join(repo, "release-sets.yaml")
	os.WriteFile(sets, []byte("sets:\n  - name: k136\n    components: {kubernetes: 1.36.0, helm: 3.21.4, containerd: 2.3.4}\n"), 0o644)
	code, stdout, stderr = run("compat", "--set", sets, "--now", "2026-11-25")
	if code != 0 || !strings.Contains(stderr, "updeb: compatibility tables: repository "+dataFile+" copy") ||
		!strings.Contains(stderr, "updeb: support data: repository data file "+dataFile) || !strings.Contains(stdout, "helm (repository "+dataFile) {
		t.Errorf("compat on the repository's data: exit %d\n%s%s", code, stdout, stderr)
	}
	// plan reads the repository's end-of-life data (which knows 1.37), not the bundled copy.
	code, stdout, stderr = run("plan", "--offline", "--now", "2026-11-25")
	if code != 0 || !strings.Contains(stderr, "updeb: support data: repository data file "+dataFile) || !strings.Contains(stdout, "Support data: repository copy "+dataFile) ||
		!strings.Contains(stdout, "updeb bump kubernetes-1.36 --new-minor 1.37") {
		t.Errorf("plan on the repository's data: exit %d\n%s%s", code, stdout, stderr)
	}

	// The operator narrows Helm 3.21 with a reason.
	b, _ := os.ReadFile(dataFile)
	b = bytes.Replace(b, []byte("\n  containerd:\n"), []byte(`    override:
      - {helm: "3.21", kubernetes_min: "1.33", kubernetes_max: "1.35", reason: "our charts break on 1.36 (ticket 42)"}

  containerd:
`), 1)
	os.WriteFile(dataFile, b, 0o644)
	code, stdout, stderr = run("compat", "--set", sets, "--now", "2026-11-25")
	if code != 1 || !strings.Contains(stdout, "helm 3.21.4 supports Kubernetes 1.33.x to 1.35.x (an override: our charts break on 1.36 (ticket 42))") {
		t.Errorf("compat with the override: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ = run("data", "status")
	if code != 0 || !strings.Contains(stdout, "helm         repository") || !strings.Contains(stdout, "override helm 3.21: Kubernetes 1.33-1.35 (our charts break on 1.36 (ticket 42)): upstream says helm 3.21: Kubernetes 1.33-1.36") ||
		!strings.Contains(stdout, "files: "+dataFile) {
		t.Errorf("data status: exit %d\n%s", code, stdout)
	}
	status := checkJSON(t, "data status", func() string { _, out, _ := run("data", "status", "--json"); return out }())
	if status["repository"] != dataFile || len(status["tables"].([]any)) != 8 {
		t.Errorf("data status --json: %v", status)
	}

	code, stdout, stderr = run("data", "refresh", "--write", dataFile)
	after, _ := os.ReadFile(dataFile)
	if code != 0 || !strings.Contains(stdout, "override helm 3.21: Kubernetes 1.33-1.35 (our charts break on 1.36 (ticket 42)): upstream says") ||
		!bytes.Contains(after, []byte(`reason: "our charts break on 1.36 (ticket 42)"`)) {
		t.Errorf("the override did not survive a refresh: exit %d\n%s%s", code, stdout, stderr)
	}

	// A refused answer: the other tables refresh and are written, and
	// containerd keeps the file's copy (rows, source, as_of); exit 1, its
	// URL, why and the copy's age named. It was all or nothing: exit 3 and
	// no table moved for one upstream's page.
	ctr := compatsrc.Path(compatdata.Containerd, "", 0)
	good := up.Get(ctr)
	// The copy in use dated earlier: a table refreshed is told apart by its as_of.
	base := regexp.MustCompile(`as_of: "[^"]*"`).ReplaceAll(after, []byte(`as_of: "2026-11-20T00:00:00Z"`))
	os.WriteFile(dataFile, base, 0o644)
	keptContainerd := func(what string) {
		t.Helper()
		written, _ := os.ReadFile(dataFile)
		now, err := compatdata.Parse(dataFile, written)
		if err != nil {
			t.Fatal(err)
		}
		was, _ := compatdata.Parse(dataFile, base)
		a, b := now.Table(compatdata.Containerd), was.Table(compatdata.Containerd)
		if !a.AsOf.Equal(b.AsOf) || fmt.Sprint(a.Rows) != fmt.Sprint(b.Rows) || !slices.Equal(a.Sources, b.Sources) ||
			!now.Table(compatdata.Helm).AsOf.After(was.Table(compatdata.Helm).AsOf) {
			t.Errorf("%s: containerd as of %s (was %s), helm as of %s (was %s)", what, a.AsOf, b.AsOf, now.Table(compatdata.Helm).AsOf, was.Table(compatdata.Helm).AsOf)
		}
		os.WriteFile(dataFile, base, 0o644)
	}
	up.Put(ctr, compatsrc.Answer{Body: []byte("<!DOCTYPE html><title>Sign in to the proxy</title>")})
	code, stdout, stderr = run("data", "refresh", "--write", dataFile)
	if code != 1 || !strings.Contains(stdout, "; not refreshed, kept as they were: containerd)\n") || !strings.Contains(stdout, "  helm ") ||
		!strings.Contains(stderr, "updeb: error: 1 table not refreshed (the others were, and are written):\n") ||
		!strings.Contains(stderr, "containerd: "+up.URL+ctr+": the answer is an HTML page") ||
		!strings.Contains(stderr, "[kept the repository "+dataFile+" copy, as of ") || !strings.Contains(stderr, "keeps its copy in use until a refresh of it succeeds") {
		t.Errorf("an HTML answer: exit %d\n%s%s", code, stdout, stderr)
	}
	keptContainerd("an HTML answer")
	code, stdout, _ = run("data", "refresh", "--write", dataFile, "--json")
	j := checkJSON(t, "data refresh", stdout)
	if k, _ := j["kept"].([]any); code != 1 || len(k) != 1 || k[0].(map[string]any)["url"] != up.URL+ctr || k[0].(map[string]any)["copy"] != "repository "+dataFile {
		t.Errorf("an HTML answer, --json: exit %d\n%s", code, stdout)
	}
	keptContainerd("an HTML answer, --json")
	// No table refreshed: nothing written, exit 3.
	code, _, stderr = run("data", "refresh", "--write", dataFile, "--table", "containerd")
	if kept, _ := os.ReadFile(dataFile); code != 3 || !bytes.Equal(kept, base) || !strings.Contains(stderr, "no table refreshed, nothing written") ||
		!strings.Contains(stderr, "the copy in use was kept") {
		t.Errorf("--table containerd, an HTML answer: exit %d, file kept %v\n%s", code, bytes.Equal(kept, base), stderr)
	}
	// A row gone that is still supported: that table kept, exit 1.
	up.Put(ctr, compatsrc.Answer{Body: bytes.Replace(good, []byte("| 1.36               | 2.3.0+, 2.2.0+                   | v1              |\n"), nil, 1)})
	code, _, stderr = run("data", "refresh", "--write", dataFile)
	if code != 1 || !strings.Contains(stderr, "containerd 1.36") || !strings.Contains(stderr, "--allow-dropped") {
		t.Errorf("a row dropped: exit %d\n%s", code, stderr)
	}
	keptContainerd("a row dropped")
	up.Put(ctr, compatsrc.Answer{Body: good})

	// An override without a reason: invalid input for every command that reads the file.
	os.WriteFile(dataFile, bytes.Replace(after, []byte(`, reason: "our charts break on 1.36 (ticket 42)"`), nil, 1), 0o644)
	for _, args := range [][]string{{"compat", "--set", sets, "--now", "2026-11-25"}, {"report", "--offline", "--output", filepath.Join(repo, "site")}, {"data", "status"}, {"data", "refresh", "--write", dataFile}} {
		code, _, stderr = run(args...)
		if code != 2 || !strings.Contains(stderr, `helm override: missing required field "reason"`) {
			t.Errorf("%v with an override without a reason: exit %d\n%s", args, code, stderr)
		}
	}
	if code, _, stderr = run("data", "refresh", "--table", "flannel"); code != 2 || !strings.Contains(stderr, `unknown table "flannel"`) {
		t.Errorf("--table flannel: exit %d\n%s", code, stderr)
	}

	// A refresh into the state folder notes that commands here read the
	// repository's file: through the logger, an info record in a JSON log.
	os.WriteFile(dataFile, after, 0o644)
	code, _, stderr = run("--log-format", "json", "data", "refresh", "--table", "cri-tools")
	if code != 0 || !strings.Contains(stderr, `"level":"INFO","msg":"note: commands here use the repository's data file `+dataFile) {
		t.Errorf("refresh into the state folder, --log-format json: exit %d\n%s", code, stderr)
	}
}

// TestDataRefreshWriteNotAFile: a --write FILE that is not a regular file
// (a FIFO, a folder) is the user's mistake, refused with exit 2 as any file
// the user names, before anything is fetched: not exit 1 with the hint of a
// file in a mirror or recipes folder that lies outside it.
func TestDataRefreshWriteNotAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "compat-data.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	dead, _ := squid.DeadURL()
	cfg := filepath.Join(dir, "updeb.yaml")
	os.WriteFile(cfg, []byte("data: {endoflife-url: \""+dead+"/{product}.json\"}\nfetch: {retries: 0}\n"), 0o644)
	for _, write := range []string{fifo, dir} {
		code, _, stderr := runCLI(t, "--config", cfg, "--state", filepath.Join(dir, "state"), "data", "refresh", "--write", write)
		if code != exitUsage || !strings.Contains(stderr, write+": refused: not a regular file") || strings.Contains(stderr, "lies outside its folder") {
			t.Errorf("data refresh --write %s: exit %d, want %d:\n%s", write, code, exitUsage, stderr)
		}
	}
}

// TestDataDatedAfterToday: data dated after today (a repository data file
// written on a machine whose clock was ahead) is stale, and the commands
// that read it say so as it is: dated after today, not "older than 30
// days" beside "(0 days old)", which sent the reader looking for an old
// refresh that never was.
func TestDataDatedAfterToday(t *testing.T) {
	sq := squid.ForTest(t)
	api := fakeEndOfLife(t)
	_, sources := fakeTables(t)
	repo := planProject(t, "http://127.0.0.1:9")
	dataFile := filepath.Join(repo, compatdata.RepositoryFile)
	conf := filepath.Join(repo, "updeb.yaml")
	os.WriteFile(conf, fmt.Appendf(nil, "proxy: %s\nfetch: {retries: 0}\ndata: {endoflife-url: %q, sources: %s}\n", sq.URL, api.Template(), sources), 0o644)
	common := []string{"--config", conf, "--state", filepath.Join(repo, "state"), "--cache", filepath.Join(repo, "cache"), "--recipes", filepath.Join(repo, "recipes")}
	run := func(args ...string) (int, string, string) { return runUpdeb(append(args, common...)...) }
	if code, _, stderr := run("data", "refresh", "--write", dataFile); code != 0 {
		t.Fatalf("refresh --write: exit %d\n%s", code, stderr)
	}
	b, _ := os.ReadFile(dataFile)
	ahead := time.Now().UTC().AddDate(0, 3, 0).Format(time.DateOnly)
	os.WriteFile(dataFile, regexp.MustCompile(`[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z`).ReplaceAll(b, []byte(ahead+"T10:00:00Z")), 0o644)
	sets := filepath.Join(repo, "release-sets.yaml")
	os.WriteFile(sets, []byte("sets:\n  - name: k136\n    components: {kubernetes: 1.36.0, helm: 3.21.4}\n"), 0o644)
	for _, args := range [][]string{{"compat", "--set", sets}, {"data", "status"}} {
		code, stdout, stderr := run(args...)
		if code != 0 || strings.Contains(stderr, "older than") || strings.Contains(stderr, "days old") ||
			!strings.Contains(stderr, "support data: repository data file "+dataFile+", as of "+ahead+" (dated after today)") ||
			!strings.Contains(stderr, "warning: the support data is dated after today") ||
			!strings.Contains(stderr, "warning: compatibility tables dated after today: helm (as of "+ahead+")") {
			t.Errorf("%v on data dated %s: exit %d\n%s", args, ahead, code, stderr)
		}
		if args[0] == "data" && !strings.Contains(stdout, "helm         repository "+ahead+"     -  ") || strings.Contains(stdout, "days old") {
			t.Errorf("data status on data dated %s:\n%s", ahead, stdout)
		}
	}
}

// TestDataFileMissing: data: file: naming a file that does not exist (a
// typo) was silent, the bundled and refreshed copies standing in for
// months. Each command that reads the data warns once, naming the config's
// line, the path, the copy used instead and the command that creates it;
// data status --json names it (missing_file). Nothing is written.
func TestDataFileMissing(t *testing.T) {
	repo := planProject(t, "http://127.0.0.1:9")
	missing := filepath.Join(repo, "compat-dat.yaml") // compat-data.yaml mistyped
	conf := filepath.Join(repo, "updeb.yaml")
	os.WriteFile(conf, []byte("fetch: {retries: 0}\ndata:\n  max-age-days: 3650\n  file: compat-dat.yaml\n"), 0o644)
	sets := filepath.Join(repo, "release-sets.yaml")
	os.WriteFile(sets, []byte("sets:\n  - name: k136\n    components: {kubernetes: 1.36.0, helm: 3.21.4}\n"), 0o644)
	common := []string{"--config", conf, "--state", filepath.Join(repo, "state"), "--cache", filepath.Join(repo, "cache"), "--recipes", filepath.Join(repo, "recipes")}
	want := conf + ":4: data: file: names " + missing + ", which does not exist; using instead the support data's bundled copy"
	create := "run 'updeb data refresh --write " + missing + "' to create it"
	// report reads the data twice (its plan and its compat): one warning.
	for _, args := range [][]string{{"plan", "--offline", "--now", "2026-11-25"}, {"compat", "--set", sets, "--now", "2026-11-25"}, {"data", "status"}, {"data", "status", "--json"}} {
		code, stdout, stderr := runUpdeb(append(args, common...)...)
		if code > 1 || strings.Count(stderr, want) != 1 || !strings.Contains(stderr, create) {
			t.Errorf("%s: exit %d, want one warning %q ... %q\n%s%s", strings.Join(args, " "), code, want, create, stdout, stderr)
		}
		if slices.Contains(args, "--json") {
			if status := checkJSON(t, "data status", stdout); status["missing_file"] != missing {
				t.Errorf("data status --json: missing_file %v, want %s", status["missing_file"], missing)
			}
		}
	}
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("%s written by a command that only reads the data", missing)
	}
}
