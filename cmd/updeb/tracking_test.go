package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/updeb/updeb/internal/compatdata"
	"github.com/updeb/updeb/internal/supportdata"
	"github.com/updeb/updeb/internal/testkit/compatsrc"
	"github.com/updeb/updeb/internal/testkit/eoltest"
	"github.com/updeb/updeb/internal/testkit/ghfake"
	"github.com/updeb/updeb/internal/testkit/squid"
	"github.com/updeb/updeb/internal/testkit/testenv"
	"github.com/updeb/updeb/internal/testkit/trackingfixture"
	"github.com/updeb/updeb/pkg/atomicfile"
)

// trackingWorld is the tracking fixture (testdata/tracking) in a throwaway
// git repository, with its upstreams on 127.0.0.1 behind squid: a stand-in
// github.com (releases and their files) and a fake endoflife.date.
type trackingWorld struct {
	t        *testing.T
	root     string // the recipes repository (git)
	gh       *ghfake.Server
	eol      *eoltest.Server
	squid    *squid.Squid
	config   string
	state    string
	cache    string
	products map[string][]supportdata.Cycle
	tables   *compatsrc.Server // upstream's compatibility tables
}

// upstreamOf says where each fixture recipe's releases are: repository,
// tag prefix, the file's base name.
var upstreamOf = map[string]struct{ repo, prefix, bin string }{
	"kubernetes": {"kubernetes/kubernetes", "v", "kubectl"},
	"cri-tools":  {"kubernetes-sigs/cri-tools", "v", "crictl"},
	"etcd":       {"etcd-io/etcd", "v", "etcdctl"},
	"calicoctl":  {"projectcalico/calico", "v", "calicoctl"},
	"istioctl":   {"istio/istio", "", "istioctl"},
	"containerd": {"containerd/containerd", "v", "ctr"},
	"helm":       {"helm/helm", "v", "helm"},
	"kustomize":  {"kubernetes-sigs/kustomize", "kustomize/v", "kustomize"},
	"runc":       {"opencontainers/runc", "v", "runc"},
}

// release publishes component's version upstream on day (YYYY-MM-DD).
func (w *trackingWorld) release(component, version, day string) {
	u, ok := upstreamOf[component]
	if !ok {
		w.t.Fatalf("no upstream for %s", component)
	}
	at, err := time.Parse(time.DateOnly, day)
	if err != nil {
		w.t.Fatal(err)
	}
	w.gh.Publish(u.repo, u.prefix+version, at.Add(9*time.Hour), map[string][]byte{u.bin + "-linux-amd64": ghfake.Artifact(u.bin, version, "amd64")})
}

// cycle sets (or adds) one release cycle of the fake endoflife.date.
func (w *trackingWorld) cycle(c supportdata.Cycle) {
	list := w.products[c.Product]
	for i := range list {
		if list[i].Name == c.Name {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	list = append([]supportdata.Cycle{c}, list...)
	// newest cycle first, as endoflife.date lists them
	for i := 1; i < len(list); i++ {
		for j := i; j > 0 && list[j].ReleaseDate.After(list[j-1].ReleaseDate); j-- {
			list[j], list[j-1] = list[j-1], list[j]
		}
	}
	w.products[c.Product] = list
	w.eol.Set(c.Product, list)
}

func newTrackingWorld(t *testing.T) *trackingWorld {
	testenv.RequireTool(t, "git")
	sq := squid.ForTest(t)
	w := &trackingWorld{t: t, squid: sq, gh: ghfake.New(t.Cleanup), root: filepath.Join(t.TempDir(), "recipes-repo"), products: map[string][]supportdata.Cycle{}}
	empty, err := supportdata.New("Source: tracking test\nAs of: 2026-10-25", nil)
	if err != nil {
		t.Fatal(err)
	}
	w.eol = eoltest.New(empty, t.Cleanup)
	if err := copyTree(trackingfixture.Dir(), w.root); err != nil {
		t.Fatal(err)
	}
	// Upstream as the fixture last saw it.
	for _, r := range []struct{ comp, version, day string }{
		{"kubernetes", "1.34.7", "2026-04-15"}, {"kubernetes", "1.35.9", "2026-10-14"}, {"kubernetes", "1.36.4", "2026-10-14"},
		{"cri-tools", "1.35.0", "2025-12-19"}, {"cri-tools", "1.36.0", "2026-04-24"},
		{"etcd", "3.6.14", "2026-09-30"}, {"calicoctl", "3.31.7", "2026-08-20"}, {"istioctl", "1.30.3", "2026-07-16"},
		{"containerd", "2.3.4", "2026-08-27"}, {"helm", "3.21.4", "2026-09-10"}, {"kustomize", "5.8.1", "2026-07-01"}, {"runc", "1.3.4", "2026-06-01"},
	} {
		w.release(r.comp, r.version, r.day)
	}
	c := eoltest.Cycle
	istio130 := c("istio", "1.30", "2026-05-18", "", "2026-11-30", "1.30.3")
	istio130.SupportedKubernetes = "1.32 - 1.36"
	for _, cy := range []supportdata.Cycle{
		c("kubernetes", "1.34", "2025-08-27", "2026-08-27", "2026-10-27", "1.34.7"),
		c("kubernetes", "1.35", "2025-12-17", "2026-12-28", "2027-02-28", "1.35.9"),
		c("kubernetes", "1.36", "2026-04-22", "2027-04-28", "2027-06-28", "1.36.4"),
		c("etcd", "3.6", "2025-05-15", "", "", "3.6.14"),
		c("calico", "3.31", "2025-11-10", "", "", "3.31.7"),
		istio130,
		c("containerd", "2.3", "2026-04-30", "2028-04-30", "2028-04-30", "2.3.4"),
		c("cilium", "1.20", "2026-07-29", "", "", "1.20.1"),
	} {
		w.cycle(cy)
	}
	// Upstream's compatibility tables: the real copies, kubeadm's on the
	// release branches of 1.36 and 1.37.
	tables, sources := fakeTables(t)
	kubeadm := compatsrc.Path(compatdata.KubeadmEtcd, "1.37", 0)
	tables.Put(compatsrc.Path(compatdata.KubeadmEtcd, "1.36", 0), compatsrc.Answer{Body: tables.Get(kubeadm)})
	w.tables = tables
	w.istioRows(false)
	dir := filepath.Dir(w.root)
	w.state, w.cache, w.config = filepath.Join(dir, "state"), filepath.Join(dir, "cache"), filepath.Join(dir, "updeb.yaml")
	conf := fmt.Sprintf(`proxy: %s
fetch: {retries: 0}
github-api: %s
mirrors:
  - {prefix: "https://github.com/", to: "%s"}
data: {endoflife-url: "%s", sources: %s}
build:
  maintainer: Tracking Test <tracking@example.org>
`, sq.URL, w.gh.API(), w.gh.Mirror(), w.eol.Template(), sources)
	if err := os.WriteFile(w.config, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	w.git("init", "-q", "-b", "main")
	w.git("add", "-A")
	w.git("commit", "-q", "-m", "fixture")
	return w
}

// istioRows serves Istio's supportStatus.yml with the bundled rows, the
// 1.31 row (Kubernetes 1.32 to 1.37) only once it is out.
func (w *trackingWorld) istioRows(with131 bool) {
	bundled, err := compatdata.Bundled()
	if err != nil {
		w.t.Fatal(err)
	}
	var rows [][3]string
	for _, r := range bundled.Table(compatdata.Istio).Rows {
		if ir := r.(compatdata.IstioRow); ir.Istio != "1.31" || with131 {
			rows = append(rows, [3]string{ir.Istio, ir.KubernetesMin, ir.KubernetesMax})
		}
	}
	w.tables.Put(compatsrc.Path(compatdata.Istio, "", 0), compatsrc.Answer{Body: compatsrc.IstioStatus(rows)})
}

// git runs git in the repository as a fixed author, and returns its output.
func (w *trackingWorld) git(args ...string) string {
	w.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", w.root}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.org", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.org",
		"GIT_AUTHOR_DATE=2026-10-25T00:00:00Z", "GIT_COMMITTER_DATE=2026-10-25T00:00:00Z", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		w.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// updeb runs updeb in the repository's folder with the world's config.
func (w *trackingWorld) updeb(args ...string) (int, string, string) {
	w.t.Helper()
	wd, _ := os.Getwd()
	if err := os.Chdir(w.root); err != nil {
		w.t.Fatal(err)
	}
	defer os.Chdir(wd)
	return runUpdeb(append([]string{"--config", w.config, "--state", w.state, "--cache", w.cache}, args...)...)
}

func (w *trackingWorld) read(rel string) string {
	w.t.Helper()
	b, err := os.ReadFile(filepath.Join(w.root, rel))
	if err != nil {
		w.t.Fatal(err)
	}
	return string(b)
}

// copyTree copies the regular files and folders under src to dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
}

// TestPlanApply: plan --apply on the fixture repository against its fake
// upstreams: a dry run writes nothing; the run bumps, adds a minor with its
// release set, moves a single recipe to a new minor, marks an end-of-life
// recipe, refuses to pin a source nothing vouches for (the others go on)
// and writes the description; a second run does nothing.
func TestPlanApply(t *testing.T) {
	w := newTrackingWorld(t)
	w.release("kubernetes", "1.36.5", "2026-11-12")
	w.release("kubernetes", "1.37.0", "2026-11-18")
	w.release("kubernetes", "1.37.1", "2026-11-26")
	w.release("kustomize", "5.8.2", "2026-11-20")
	w.cycle(eoltest.Cycle("kubernetes", "1.37", "2026-11-18", "2027-10-28", "2027-12-28", "1.37.1"))
	if code, out, errs := w.updeb("data", "refresh", "--allow-dropped"); code != 0 { // the fake data has fewer cycles than the bundled copy
		t.Fatalf("data refresh: exit %d\n%s%s", code, out, errs)
	}
	before := w.git("status", "--porcelain")

	code, stdout, stderr := w.updeb("plan", "--apply", "--dry-run", "--now", "2026-11-28")
	if code != 0 || !strings.Contains(stdout, "would do (dry run):") || !strings.Contains(stdout, "  add    kubernetes-1.37 (from kubernetes-1.36)") {
		t.Fatalf("dry run: exit %d\n%s%s", code, stdout, stderr)
	}
	if after := w.git("status", "--porcelain"); after != before {
		t.Fatalf("the dry run changed the tree:\n%s", after)
	}

	msg := filepath.Join(filepath.Dir(w.root), "change.txt")
	code, stdout, stderr = w.updeb("plan", "--apply", "--message", msg, "--now", "2026-11-28")
	if code != 1 {
		t.Fatalf("apply: exit %d, want 1\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{"  bump   kubernetes-1.36 1.36.4 -> 1.36.5", "  add    kubernetes-1.37 (from kubernetes-1.36) at 1.37.1",
		"  retire kubernetes-1.34: end-of-life: 2026-10-27", "  FAILED bump kustomize 5.8.2: "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "updeb: error: kustomize: ") || !strings.Contains(stderr, "nothing vouches for") {
		t.Errorf("stderr:\n%s", stderr)
	}
	if got := w.read("recipes/kubernetes-1.36.yaml"); !strings.Contains(got, "version: 1.36.5\n") || !strings.Contains(got, "amd64: "+ghfake.SHA256(ghfake.Artifact("kubectl", "1.36.5", "amd64"))) {
		t.Errorf("kubernetes-1.36:\n%s", got)
	}
	if got := w.read("recipes/kustomize.yaml"); !strings.Contains(got, "version: 5.8.1\n") {
		t.Errorf("kustomize was pinned without anything vouching for it:\n%s", got)
	}
	if got := w.read("release-sets.yaml"); !strings.Contains(got, "  - name: kubernetes137\n    components:\n      kubernetes: recipe:kubernetes-1.37\n") {
		t.Errorf("release sets:\n%s", got)
	}
	desc, err := os.ReadFile(msg)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Tracking 2026-11-28: 1 new minor, 1 bump, 1 end-of-life mark, 1 failed\n\n",
		"- kubernetes-1.36: 1.36.4 -> 1.36.5, released 2026-11-12\n  vouched for by:\n    bin amd64: checksum-file:",
		"  release notes: https://github.com/kubernetes/kubernetes/releases/tag/v1.36.5\n",
		"updeb verify --base HEAD on the changed recipes:\n", "  == kubernetes-1.36 1.36.4-1 -> 1.36.5-1 (recipes/kubernetes-1.36.yaml)\n", "PASS: 3 recipe(s), 0 failed check(s)",
		"For a person (release set violations no action resolves):\n", "- release set kubernetes137: helm: helm 3.21.4 supports Kubernetes 1.33.x to 1.36.x"} {
		if !strings.Contains(string(desc), want) {
			t.Errorf("the description lacks %q:\n%s", want, desc)
		}
	}
	w.git("add", "-A")
	w.git("commit", "-q", "-m", "first run")
	code, stdout, stderr = w.updeb("plan", "--apply", "--now", "2026-11-28")
	if code != 1 || !strings.Contains(stdout, "Nothing done:\n  FAILED bump kustomize 5.8.2") || strings.Contains(stdout, "  bump ") {
		t.Errorf("second run: exit %d\n%s%s", code, stdout, stderr)
	}
	if st := w.git("status", "--porcelain"); st != "" {
		t.Errorf("the second run changed the tree:\n%s", st)
	}
}

// TestPlanApplyClosedStdout: plan --apply whose stdout is a pipe its
// reader closed ('updeb plan --apply --message change.txt | head -1')
// exits 141 and still writes the change description: the bump it made
// stays in the tree, and the description is what the tracking job commits
// it with. The failed print returned first, and the description was lost.
func TestPlanApplyClosedStdout(t *testing.T) {
	w := newTrackingWorld(t)
	w.release("kubernetes", "1.36.5", "2026-11-12")
	r, stdout, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	defer stdout.Close()
	wd, _ := os.Getwd()
	if err := os.Chdir(w.root); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	msg := filepath.Join(filepath.Dir(w.root), "change.txt")
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"--config", w.config, "--state", w.state, "--cache", w.cache,
		"plan", "--apply", "--only", "kubernetes-1.36", "--message", msg, "--base", "no-such-revision", "--now", "2026-11-28"}, stdout, &stderr)
	if got := w.read("recipes/kubernetes-1.36.yaml"); !strings.Contains(got, "version: 1.36.5\n") {
		t.Fatalf("kubernetes-1.36 was not bumped (exit %d):\n%s\n%s", code, stderr.String(), got)
	}
	desc, err := os.ReadFile(msg)
	if code != exitClosedPipe || err != nil || !strings.Contains(string(desc), "kubernetes-1.36") || !strings.Contains(string(desc), "1.36.5") {
		t.Errorf("plan --apply --message, stdout closed: exit %d, want %d, and the description written (%v):\n%s\n%s", code, exitClosedPipe, err, desc, stderr.String())
	}
}

// New minors the support data lists whose first release upstream is not
// complete yet (1.37.0's SHA256SUMS not uploaded, 1.38 not on GitHub at
// all): plan --apply does not add them and says they wait for upstream
// (1.38's add, derived from 1.37's recipe, waits with it), which is no
// failure (exit 0, not 1: the tracking job would go red on upstream's
// release day); once 1.37.0 is complete, the next run adds it.
func TestPlanApplyNewMinorIncomplete(t *testing.T) {
	w := newTrackingWorld(t)
	w.release("kubernetes", "1.37.0", "2026-11-18")
	w.gh.Set("kubernetes/kubernetes", "v1.37.0", "SHA256SUMS", nil)
	w.cycle(eoltest.Cycle("kubernetes", "1.37", "2026-11-18", "2027-10-28", "2027-12-28", "1.37.0"))
	w.cycle(eoltest.Cycle("kubernetes", "1.38", "2026-11-25", "2028-02-28", "2028-04-28", "1.38.0"))
	if code, out, errs := w.updeb("data", "refresh", "--allow-dropped", "--table", "endoflife"); code != 0 {
		t.Fatalf("data refresh: exit %d\n%s%s", code, out, errs)
	}
	msg := filepath.Join(filepath.Dir(w.root), "change.txt")
	code, stdout, stderr := w.updeb("plan", "--apply", "--only", "kubernetes-1.37", "--message", msg, "--now", "2026-11-28")
	desc, _ := os.ReadFile(msg)
	if code != 0 || !strings.Contains(stdout, "  not done: add kubernetes-1.36 1.37.0: waits for upstream: ") || strings.Contains(stdout, "FAILED") ||
		!strings.Contains(stdout, "  not done: add kubernetes-1.37 1.38.0: waits for upstream: the add of kubernetes-1.37 waits\n") ||
		!strings.Contains(string(desc), "Tracking 2026-11-28: nothing changed\n") || !strings.Contains(string(desc), "\nNot done:\n- add kubernetes-1.36 1.37.0: waits for upstream: ") {
		t.Errorf("an incomplete new minor: exit %d, want 0\n%s%s\n%s", code, stdout, stderr, desc)
	}
	if st := w.git("status", "--porcelain"); st != "" {
		t.Errorf("the run changed the tree:\n%s", st)
	}
	w.release("kubernetes", "1.37.0", "2026-11-18") // its SHA256SUMS uploaded
	code, stdout, stderr = w.updeb("plan", "--apply", "--only", "kubernetes-1.37", "--now", "2026-11-28")
	if code != 1 || !strings.Contains(stdout, "  add    kubernetes-1.37 (from kubernetes-1.36) at 1.37.0") ||
		!strings.Contains(stdout, "  not done: add kubernetes-1.37 1.38.0: waits for upstream: track: no release of the new minor upstream") {
		t.Errorf("the complete release: exit %d, want 1\n%s%s", code, stdout, stderr)
	}
}

// plan --apply's exit code carries the in-process verify's verdict: a
// --base that is no commit is invalid input (2), not "changes written"
// (1), and the description has the gate's FAIL line. --only takes the
// name of a recipe the plan adds.
func TestPlanApplyVerifyVerdict(t *testing.T) {
	w := newTrackingWorld(t)
	w.release("kubernetes", "1.36.5", "2026-11-12")
	w.release("kubernetes", "1.37.0", "2026-11-18")
	code, stdout, stderr := w.updeb("plan", "--apply", "--dry-run", "--only", "kubernetes-1.37", "--now", "2026-11-28")
	if code != 0 || !strings.Contains(stdout, "  add    kubernetes-1.37 (from kubernetes-1.36)") || strings.Contains(stdout, "bump ") {
		t.Errorf("--only a recipe the plan adds: exit %d\n%s%s", code, stdout, stderr)
	}
	msg := filepath.Join(filepath.Dir(w.root), "change.txt")
	code, stdout, stderr = w.updeb("plan", "--apply", "--only", "kubernetes-1.36", "--message", msg, "--base", "no-such-revision", "--now", "2026-11-28")
	desc, _ := os.ReadFile(msg)
	if code != 2 || !strings.Contains(stdout, "  bump   kubernetes-1.36 1.36.4 -> 1.36.5") || !strings.Contains(stderr, "updeb verify --base no-such-revision on the changed recipes") ||
		!strings.Contains(string(desc), "FAIL   base") {
		t.Errorf("a --base that is no commit: exit %d, want 2\n%s%s\n%s", code, stdout, stderr, desc)
	}
}

// TestTrackingMonth plays a month of the tracking loop as the timer runs it
// (contrib/tracking/updeb-tracking, with the updeb built from this tree),
// against the fixture's fake upstreams on 127.0.0.1 behind squid and a real
// apt repository. On 2026-10-26 nothing is to do: the page is green, no
// branch. Then upstream releases a new patch of a supported minor
// (Kubernetes 1.36.5), a new minor (Kubernetes 1.37.1, cri-tools 1.37.0,
// Istio 1.31.1), components reach end of life (Kubernetes 1.34, Istio 1.30)
// and a compatibility table gains a row (Helm 3.22, released too, supports
// Kubernetes 1.37; Istio's table its 1.31). On 2026-12-01 one run leaves a branch with verified recipe edits
// and release sets, its commit message the change description; the page and
// the metrics say what main still lacks. Once it is merged, a run has
// nothing to do and the page is green.
func TestTrackingMonth(t *testing.T) {
	testenv.RequireTool(t, "bash", "go", "promtool", "dpkg-deb")
	w := newTrackingWorld(t)
	dir := filepath.Dir(w.root)
	bin := filepath.Join(dir, "bin")
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "updeb"), ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	site, metrics, apt := filepath.Join(dir, "site"), filepath.Join(dir, "updeb.prom"), filepath.Join(dir, "apt")
	job := func(day string) (int, string) {
		t.Helper()
		defer func(start time.Time) { t.Logf("the job on %s took %v", day, time.Since(start)) }(time.Now())
		script, _ := filepath.Abs("../../contrib/tracking/updeb-tracking")
		cmd := exec.Command("bash", script)
		cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "HOME="+dir, "GIT_CONFIG_GLOBAL=/dev/null",
			"GIT_AUTHOR_NAME=updeb tracking", "GIT_AUTHOR_EMAIL=tracking@example.org", "GIT_COMMITTER_NAME=updeb tracking", "GIT_COMMITTER_EMAIL=tracking@example.org",
			"GIT_AUTHOR_DATE="+day+"T05:00:00Z", "GIT_COMMITTER_DATE="+day+"T05:00:00Z",
			"UPDEB_TRACKING_REPO="+w.root, "UPDEB_TRACKING_SITE="+site, "UPDEB_TRACKING_METRICS="+metrics, "UPDEB_TRACKING_APT="+apt,
			"UPDEB_ARGS=--config "+w.config+" --state "+w.state+" --cache "+w.cache+" -q", "UPDEB_TRACKING_NOW="+day)
		out, err := cmd.CombinedOutput()
		code := 0
		if err != nil {
			ee, ok := err.(*exec.ExitError)
			if !ok {
				t.Fatalf("the job: %v\n%s", err, out)
			}
			code = ee.ExitCode()
		}
		return code, string(out)
	}
	promtool := func() string {
		t.Helper()
		b, err := os.ReadFile(metrics)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("promtool", "check", "metrics")
		cmd.Stdin = strings.NewReader(string(b))
		if out, err := cmd.CombinedOutput(); err != nil || len(strings.TrimSpace(string(out))) > 0 {
			t.Errorf("promtool check metrics: %v\n%s", err, out)
		}
		return string(b)
	}
	// The operator's first refresh, into the repository's data file (the
	// fake data has fewer cycles than the bundled copy), and an apt
	// repository: Kubernetes 1.36.4 in staging and production, 1.35.9 in
	// staging only.
	if code, out, errs := w.updeb("data", "refresh", "--allow-dropped", "--write", "compat-data.yaml"); code != 0 {
		t.Fatalf("data refresh: exit %d\n%s%s", code, out, errs)
	}
	w.git("add", "compat-data.yaml")
	w.git("commit", "-q", "-m", "the data tables this repository relies on")
	key := filepath.Join(dir, "repo-key")
	debs := filepath.Join(dir, "debs")
	for _, args := range [][]string{
		{"keys", "generate", "--name", "tracking test", "--email", "apt@example.org", "--out", key},
		{"build", "kubernetes-1.35", "kubernetes-1.36", "--out", debs},
		{"publish", "--repo", apt, "--key", key + ".secret.asc", "--suite", "production", "--component", "kubernetes136", "--valid-for", "168h", filepath.Join(debs, "kubernetes-client136_1.36.4-1_amd64.deb")},
		{"publish", "--repo", apt, "--key", key + ".secret.asc", "--suite", "staging", "--component", "kubernetes136", filepath.Join(debs, "kubernetes-client136_1.36.4-1_amd64.deb")},
		{"publish", "--repo", apt, "--key", key + ".secret.asc", "--suite", "staging", "--component", "kubernetes135", filepath.Join(debs, "kubernetes-client135_1.35.9-1_amd64.deb")},
	} {
		if code, out, errs := w.updeb(args...); code != 0 {
			t.Fatalf("updeb %v: exit %d\n%s%s", args, code, out, errs)
		}
	}

	// 2026-10-26: nothing to do.
	code, out := job("2026-10-26")
	if code != 0 || !strings.Contains(out, "updeb-tracking: nothing to do") || strings.Contains(w.git("branch"), "updeb/tracking") {
		t.Fatalf("the first run: exit %d\n%s", code, out)
	}
	page, _ := os.ReadFile(filepath.Join(site, "index.html"))
	if !strings.Contains(string(page), `<div class="verdict level-ok" id="verdict"`) {
		t.Errorf("the first page is not green:\n%s", page)
	}
	if m := promtool(); !strings.Contains(m, "updeb_tracking_last_run_success{tracking=\"updeb\"} 1\n") || !strings.Contains(m, "updeb_recipes_behind_upstream{tracking=\"updeb\"} 0\n") ||
		!strings.Contains(m, `updeb_release_valid_until_timestamp_seconds{tracking="updeb",suite="production"} `) {
		t.Errorf("the first metrics:\n%s", m)
	}

	// A month passes upstream.
	for _, r := range []struct{ comp, version, day string }{
		{"istioctl", "1.31.1", "2026-11-05"}, {"kubernetes", "1.36.5", "2026-11-12"},
		{"kubernetes", "1.37.0", "2026-11-18"}, {"cri-tools", "1.37.0", "2026-11-20"}, {"kubernetes", "1.37.1", "2026-11-25"},
	} {
		w.release(r.comp, r.version, r.day)
	}
	// and a compatibility table gains a row: Helm 3.22 supports Kubernetes
	// 1.34 to 1.37 (and Istio's table its 1.31).
	w.release("helm", "3.22.0", "2026-11-24")
	helm3 := compatsrc.Path(compatdata.Helm, "", 1)
	w.tables.Put(helm3, compatsrc.Answer{Body: insert(t, w.tables.Get(helm3), "|--------------|", "| 3.22.x       | 1.37.x - 1.34.x               |\n")})
	w.istioRows(true)
	c := eoltest.Cycle
	istio131 := c("istio", "1.31", "2026-11-05", "", "2027-05-30", "1.31.1")
	istio131.SupportedKubernetes = "1.32 - 1.37"
	for _, cy := range []supportdata.Cycle{c("kubernetes", "1.37", "2026-11-18", "2027-10-28", "2027-12-28", "1.37.1"),
		c("kubernetes", "1.36", "2026-04-22", "2027-04-28", "2027-06-28", "1.36.5"), istio131} {
		w.cycle(cy)
	}

	// 2026-12-01: one run proposes the month's changes.
	code, out = job("2026-12-01")
	if code != 0 || !strings.Contains(out, "updeb-tracking: branch updeb/tracking is ready to push: Tracking 2026-12-01: 2 new minors, 3 bumps, 1 end-of-life mark") {
		t.Fatalf("the month's run: exit %d\n%s", code, out)
	}
	if st := w.git("status", "--porcelain"); st != "" || strings.TrimSpace(w.git("rev-parse", "--abbrev-ref", "HEAD")) != "main" {
		t.Errorf("the job left the tree dirty or off main:\n%s", st)
	}
	if files := w.git("diff", "--name-status", "main", "updeb/tracking"); files != "M\tcompat-data.yaml\nA\trecipes/cri-tools-1.37.yaml\nM\trecipes/helm.yaml\nM\trecipes/istioctl.yaml\nM\trecipes/kubernetes-1.34.yaml\nM\trecipes/kubernetes-1.36.yaml\nA\trecipes/kubernetes-1.37.yaml\nM\trelease-sets.yaml\n" {
		t.Errorf("the branch changes:\n%s", files)
	}
	show := func(path string) string { return w.git("show", "updeb/tracking:"+path) }
	pin := func(bin, version string) string {
		return "amd64: " + ghfake.SHA256(ghfake.Artifact(bin, version, "amd64")) + "\n"
	}
	for path, wants := range map[string][]string{
		"recipes/kubernetes-1.36.yaml": {"version: 1.36.5\n", "release-date: 2026-11-12\n", pin("kubectl", "1.36.5")},
		"recipes/kubernetes-1.37.yaml": {"name: kubernetes-1.37\n", "version: 1.37.1\n", "release-date: 2026-11-25\n", pin("kubectl", "1.37.1"), `track: "1.37.x"`},
		"recipes/cri-tools-1.37.yaml":  {"version: 1.37.0\n", pin("crictl", "1.37.0"), `requires: {kubernetes: ">=1.37 <1.38"}`},
		"recipes/istioctl.yaml":        {"version: 1.31.1\n", pin("istioctl", "1.31.1"), `track: "1.31.x"`},
		"recipes/kubernetes-1.34.yaml": {"release-date: 2026-04-15\nend-of-life: 2026-10-27\n", "version: 1.34.7\n"},
		"release-sets.yaml":            {"      istioctl: 1.31.1\n", "  - name: kubernetes137\n    components:\n      kubernetes: recipe:kubernetes-1.37\n      cri-tools: recipe:cri-tools-1.37   # crictl follows the Kubernetes minor\n"},
	} {
		got := show(path)
		for _, want := range wants {
			if !strings.Contains(got, want) {
				t.Errorf("%s lacks %q:\n%s", path, want, got)
			}
		}
	}
	// The table's new row is a reviewable diff in the branch.
	if d := w.git("diff", "main", "updeb/tracking", "--", "compat-data.yaml"); !strings.Contains(d, "+") || !strings.Contains(d, "3.22") {
		t.Errorf("the data file's diff lacks Helm 3.22:\n%s", d)
	}
	message := w.git("log", "-1", "--format=%B", "updeb/tracking")
	for _, want := range []string{
		"Tracking 2026-12-01: 2 new minors, 3 bumps, 1 end-of-life mark, data tables refreshed\n\n",
		"- kubernetes-1.36: 1.36.4 -> 1.36.5, released 2026-11-12\n  vouched for by:\n    bin amd64: checksum-file:https://github.com/kubernetes/kubernetes/releases/download/v1.36.5/SHA256SUMS\n  release notes: https://github.com/kubernetes/kubernetes/releases/tag/v1.36.5\n",
		"- istioctl: 1.30.3 -> 1.31.1, released 2026-11-05\n  watch track: 1.31.x\n",
		"- kubernetes-1.37: new recipe (the next minor after kubernetes-1.36) at 1.37.1, released 2026-11-25\n",
		"  release sets: release set kubernetes137 added for Kubernetes 1.37, copied from kubernetes136\n",
		"  release sets: release set kubernetes137 now names recipe:cri-tools-1.37\n",
		"- kubernetes-1.34: marked end-of-life since 2026-10-27",
		"- helm: 3.21.4 -> 3.22.0, released 2026-11-24\n",
		"updeb verify --base HEAD on the changed recipes:\n", "  PASS: 6 recipe(s), 0 failed check(s)",
		"\nData tables: compat-data.yaml refreshed (updeb data refresh --write compat-data.yaml):\n",
		"    kubernetes    4 cycles  new cycles 1.37; latest 1.36: 1.36.4 -> 1.36.5\n", "    helm          43 rows    added 3.22 (",
	} {
		if !strings.Contains(message, want) {
			t.Errorf("the commit message lacks %q:\n%s", want, message)
		}
	}
	// The page and the metrics: main still lacks the month's changes.
	page, _ = os.ReadFile(filepath.Join(site, "index.html"))
	for _, want := range []string{`<div class="verdict level-violation" id="verdict"`,
		"VIOLATION: 2 compatibility violation(s) in release set(s) kubernetes135, kubernetes136",
		`<code>updeb bump kubernetes-1.36 --new-minor 1.37</code>`, `<td>kubernetes-client135</td><td>kubernetes135</td><td>1.35.9-1</td><td>(none)</td>`,
		`<tr data-suite="production"><td>production</td>`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	m := promtool()
	for _, want := range []string{"updeb_tracking_last_run_success{tracking=\"updeb\"} 1\n", "updeb_recipes_behind_upstream{tracking=\"updeb\"} 2\n", "updeb_release_sets_violating{tracking=\"updeb\"} 2\n",
		`updeb_plan_actions{tracking="updeb",kind="add"} 2` + "\n", `updeb_plan_actions{tracking="updeb",kind="retire"} 1` + "\n", "updeb_components_end_of_life{tracking=\"updeb\"} 1\n"} {
		if !strings.Contains(m, want) {
			t.Errorf("the metrics lack %q:\n%s", want, m)
		}
	}
	// Merged: nothing to do.
	w.git("merge", "-q", "--ff-only", "updeb/tracking")
	head := w.git("rev-parse", "HEAD")
	code, out = job("2026-12-01")
	if code != 0 || !strings.Contains(out, "updeb-tracking: nothing to do") || w.git("rev-parse", "updeb/tracking") != head {
		t.Errorf("after the merge: exit %d\n%s", code, out)
	}
	if m := promtool(); !strings.Contains(m, "updeb_release_sets_violating{tracking=\"updeb\"} 0\n") || !strings.Contains(m, `updeb_plan_actions{tracking="updeb",kind="compat"} 0`+"\n") ||
		!strings.Contains(m, "updeb_recipes_behind_upstream{tracking=\"updeb\"} 0\n") || !strings.Contains(m, `updeb_data_table_age_seconds{tracking="updeb",table="helm",copy="repository compat-data.yaml"} `) {
		t.Errorf("the metrics after the merge:\n%s", m)
	}
	page, _ = os.ReadFile(filepath.Join(site, "index.html"))
	if !strings.Contains(string(page), `<div class="verdict level-ok" id="verdict"`) || strings.Contains(string(page), "helm 3.22.0 is not in") {
		t.Errorf("the page after the merge is not green, or Helm's new row was not read:\n%s", page)
	}

	// 2026-12-02: endoflife.date moves Istio 1.31's end of life; nothing
	// else changed. The data file's change alone is a branch, its summary
	// saying so (not "nothing changed"); a temporary file an interrupted
	// run left does not stop the job.
	istio131.EOL = time.Date(2027, 3, 31, 0, 0, 0, 0, time.UTC)
	w.cycle(istio131)
	if err := os.WriteFile(filepath.Join(w.root, "recipes", ".helm.yaml.tmp-123456"), []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out = job("2026-12-02")
	message = w.git("log", "-1", "--format=%B", "updeb/tracking")
	if code != 0 || !strings.Contains(out, "removing recipes/.helm.yaml.tmp-123456") || w.git("diff", "--name-status", "main", "updeb/tracking") != "M\tcompat-data.yaml\n" ||
		!strings.HasPrefix(message, "Tracking 2026-12-02: data tables refreshed\n\n") || !strings.Contains(message, "    istio         2 cycles  changed 1.31: end of life 2027-05-30 -> 2027-03-31\n") {
		t.Errorf("a moved end of life: exit %d\n%s\n%s", code, out, message)
	}
	if st := w.git("status", "--porcelain", "--ignored"); st != "" {
		t.Errorf("the job left files behind:\n%s", st)
	}

	// 2026-12-03: the release set file on main is broken (plan --apply
	// refuses it before it writes a description) while a table changed:
	// the data file's change is still a branch, with a description that
	// says the run did not finish, and the job fails with plan's exit code,
	// leaving main clean for the next run.
	w.git("checkout", "-q", "main")
	if err := os.WriteFile(filepath.Join(w.root, "release-sets.yaml"), []byte("sets: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.git("commit", "-q", "-am", "a broken release set file")
	istio131.EOL = time.Date(2027, 4, 30, 0, 0, 0, 0, time.UTC)
	w.cycle(istio131)
	code, out = job("2026-12-03")
	message = w.git("log", "-1", "--format=%B", "updeb/tracking")
	if code != 2 || !strings.Contains(out, "plan --apply failed (exit 2)") || !strings.HasPrefix(message, "Tracking 2026-12-03: unfinished run (updeb plan --apply exit 2), data tables refreshed\n\n") ||
		!strings.Contains(message, "changed 1.31: end of life 2027-05-30 -> 2027-04-30") {
		t.Errorf("a run whose plan --apply fails: exit %d\n%s\n%s", code, out, message)
	}
	if st := w.git("status", "--porcelain"); st != "" || strings.TrimSpace(w.git("rev-parse", "--abbrev-ref", "HEAD")) != "main" {
		t.Errorf("the job left the tree dirty or off main:\n%s", st)
	}
}

// trackingService returns contrib/systemd/updeb-tracking.service and the
// job's path it runs (ExecStart=).
func trackingService(t *testing.T) (service []byte, exe string) {
	t.Helper()
	service, err := os.ReadFile("../../contrib/systemd/updeb-tracking.service")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^ExecStart=(/\S+)$`).FindSubmatch(service)
	if m == nil {
		t.Fatal("the service has no ExecStart=/PATH")
	}
	return service, string(m[1])
}

// TestTrackingUnits checks the files that schedule the job: the systemd
// service and timer pass systemd-analyze verify (in a root with the host's
// units and the job installed where the service runs it), the service is
// hardened (systemd-analyze security), and the GitLab CI example is a
// scheduled job that runs the installed job with every setting the job
// requires, as the systemd unit's defaults file gives them (TestShellScripts
// runs shellcheck on the job).
func TestTrackingUnits(t *testing.T) {
	testenv.RequireTool(t, "systemd-analyze")
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "usr/lib/systemd"), 0o755); err != nil {
		t.Fatal(err)
	}
	testenv.Run(t, "cp", "-a", "/usr/lib/systemd/system", filepath.Join(root, "usr/lib/systemd/"))
	units := filepath.Join(root, "etc/systemd/system")
	os.MkdirAll(units, 0o755)
	_, exe := trackingService(t)
	job, err := os.ReadFile("../../contrib/tracking/updeb-tracking")
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(root, filepath.Dir(exe)), 0o755)
	if err := os.WriteFile(filepath.Join(root, exe), job, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"updeb-tracking.service", "updeb-tracking.timer"} {
		testenv.Run(t, "cp", filepath.Join("..", "..", "contrib", "systemd", u), units)
	}
	out, err := exec.Command("systemd-analyze", "verify", "--man=no", "--root="+root, "updeb-tracking.service", "updeb-tracking.timer").CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
	// The job needs no privilege: the service is confined as far as git,
	// a Go binary and a push over the network allow (systemd's exposure
	// score at most 2.0 of 10; the first version, only ProtectSystem= and
	// friends, scored 8.5 "EXPOSED").
	if out, err := exec.Command("systemd-analyze", "security", "--offline=true", "--threshold=20", "--no-pager", "--root="+root, "updeb-tracking.service").CombinedOutput(); err != nil {
		t.Errorf("systemd-analyze security: %v\n%s", err, out)
	}

	required := regexp.MustCompile(`(?m)^: "\$\{(UPDEB_TRACKING_[A-Z]+):\?`).FindAllStringSubmatch(string(job), -1)
	if len(required) != 3 {
		t.Fatalf("the job requires %v, want its three settings", required)
	}
	defaults, err := os.ReadFile("../../contrib/systemd/updeb-tracking.default")
	if err != nil {
		t.Fatal(err)
	}
	var ci struct {
		Job struct {
			Rules     []map[string]string `yaml:"rules"`
			Variables map[string]string   `yaml:"variables"`
			Script    []string            `yaml:"script"`
			Cache     struct {
				Paths []string `yaml:"paths"`
			} `yaml:"cache"`
		} `yaml:"updeb-tracking"`
	}
	text, err := os.ReadFile("../../contrib/gitlab/updeb-tracking.gitlab-ci.yml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(text, &ci); err != nil {
		t.Fatal(err)
	}
	if len(ci.Job.Rules) != 1 || ci.Job.Rules[0]["if"] != `$CI_PIPELINE_SOURCE == "schedule"` || len(ci.Job.Script) != 1 || ci.Job.Script[0] != exe {
		t.Errorf("the GitLab job is not a scheduled run of %s: %+v", exe, ci.Job)
	}
	// Each run of the GitLab job is a fresh clone: the metrics file, from
	// which the report carries the last success over, must be cached, or
	// updeb_tracking_last_success_timestamp_seconds is 0 after any failed
	// run (UpdebTrackingStale fires at once).
	metrics, _ := strings.CutPrefix(ci.Job.Variables["UPDEB_TRACKING_METRICS"], "$CI_PROJECT_DIR/")
	if !slices.ContainsFunc(ci.Job.Cache.Paths, func(p string) bool {
		return p == metrics || strings.HasSuffix(p, "/") && strings.HasPrefix(metrics, p)
	}) {
		t.Errorf("the GitLab job's cache %v does not keep its metrics file %s", ci.Job.Cache.Paths, metrics)
	}
	for _, r := range required {
		if ci.Job.Variables[r[1]] == "" {
			t.Errorf("the GitLab job does not set %s", r[1])
		}
		if !regexp.MustCompile(`(?m)^` + r[1] + `=\S`).Match(defaults) {
			t.Errorf("updeb-tracking.default does not set %s", r[1])
		}
	}
}

// An add that plan --apply wrote but whose release set file it could not
// follow (a release-sets.yaml that is a symlink: rewriting it would replace
// the link) is a failure, and still a change: the new recipe file is on
// disk, so the output and the description list it under the changes, the
// in-process verify checks it, and the failure does not say that nothing
// was written. (A bump follows the release set file before it writes its
// recipe: there the same link stops it with nothing written.)
func TestPlanApplyWrittenThenFailed(t *testing.T) {
	w := newTrackingWorld(t)
	w.release("kubernetes", "1.37.1", "2026-11-26")
	w.cycle(eoltest.Cycle("kubernetes", "1.37", "2026-11-18", "2027-10-28", "2027-12-28", "1.37.1"))
	sets := filepath.Join(w.root, "release-sets.yaml")
	if err := os.Rename(sets, filepath.Join(w.root, "sets.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sets.yaml", sets); err != nil {
		t.Fatal(err)
	}
	w.git("add", "-A")
	w.git("commit", "-q", "-m", "release sets behind a link")
	msg := filepath.Join(filepath.Dir(w.root), "change.txt")
	code, stdout, stderr := w.updeb("plan", "--apply", "--only", "kubernetes-1.37", "--message", msg, "--now", "2026-11-28")
	if got := w.read("recipes/kubernetes-1.37.yaml"); !strings.Contains(got, "version: 1.37.1\n") {
		t.Fatalf("kubernetes-1.37 was not written: exit %d\n%s%s\n%s", code, stdout, stderr, got)
	}
	if code != 1 || !strings.Contains(stdout, "  add    kubernetes-1.37 (from kubernetes-1.36) at 1.37.1") || !strings.Contains(stdout, "kubernetes-1.37 was written, but release-sets.yaml was not updated") {
		t.Errorf("exit %d, want 1 with the add and its failure\n%s%s", code, stdout, stderr)
	}
	desc, err := os.ReadFile(msg)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1 failed\n", "  == kubernetes-1.37 ",
		"Failed after writing (the changes above stay written: review them):\n- add kubernetes-1.36 ", "kubernetes-1.37 was written, but release-sets.yaml was not updated"} {
		if !strings.Contains(string(desc), want) {
			t.Errorf("the description lacks %q:\n%s", want, desc)
		}
	}
	if strings.Contains(string(desc), "nothing of these was written") {
		t.Errorf("the description says nothing of the failures was written, but kubernetes-1.37 was:\n%s", desc)
	}
	// The same link stops a bump before it writes anything.
	w.release("etcd", "3.6.15", "2026-11-12")
	code, stdout, stderr = w.updeb("plan", "--apply", "--only", "etcd", "--now", "2026-11-28")
	if got := w.read("recipes/etcd.yaml"); code != 1 || !strings.Contains(got, "version: 3.6.14\n") || !strings.Contains(stdout, "release-sets.yaml could not follow the bump (etcd was not written)") {
		t.Errorf("a bump whose release set file cannot follow: exit %d\n%s%s\n%s", code, stdout, stderr, got)
	}
}

// outdated takes a recipe's end-of-life: mark as plan and compat do: from
// its day on, the version is out of support, and --exit-code says so
// (runc of the fixture is marked end-of-life on 2026-09-30 and the support
// data does not cover it).
func TestOutdatedEndOfLifeMark(t *testing.T) {
	w := newTrackingWorld(t)
	for _, tc := range []struct {
		day  string
		code int
		want string
	}{
		{"2026-09-29", 0, "unknown  \n"},
		{"2026-09-30", 1, "eol since 2026-09-30 (marked in the recipe)  out of support\n"},
		{"2026-11-28", 1, "eol since 2026-09-30 (marked in the recipe)  out of support\n"},
	} {
		code, stdout, stderr := w.updeb("outdated", "--exit-code", "--now", tc.day, "runc")
		if code != tc.code || !strings.Contains(stdout, tc.want) {
			t.Errorf("outdated --exit-code --now %s runc: exit %d, want %d and %q\n%s%s", tc.day, code, tc.code, tc.want, stdout, stderr)
		}
	}
	code, stdout, stderr := w.updeb("outdated", "--json", "--now", "2026-11-28", "runc")
	if code != 0 || !strings.Contains(stdout, `"out_of_support": true`) || !strings.Contains(stdout, `"state": "eol"`) {
		t.Errorf("outdated --json: exit %d\n%s%s", code, stdout, stderr)
	}
}

// outdated over every recipe lists one without a watch (watch: is
// optional; the fixture's cfssl has none) as having nothing upstream to
// check, as plan does, instead of failing the whole run with invalid input
// (exit 2) and leaving its row out; named alone, it is still an error.
func TestOutdatedRecipeWithoutWatch(t *testing.T) {
	w := newTrackingWorld(t)
	code, stdout, stderr := w.updeb("outdated", "--exit-code", "--now", "2026-09-01")
	if code != 0 || !regexp.MustCompile(`(?m)^cfssl +1\.6\.5 +- +- +- +unknown +no watch: nothing upstream to check$`).MatchString(stdout) ||
		!strings.Contains(stdout, "\nkubernetes-1.36 ") {
		t.Errorf("outdated --exit-code: exit %d, want 0 with cfssl listed\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = w.updeb("outdated", "--json", "--now", "2026-09-01")
	if code != 0 || !strings.Contains(stdout, `"no_watch": true`) {
		t.Errorf("outdated --json: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, stdout, stderr = w.updeb("outdated", "cfssl"); code != 2 || !strings.Contains(stderr, "cfssl: track: the recipe has no watch") {
		t.Errorf("outdated cfssl: exit %d, want 2\n%s%s", code, stdout, stderr)
	}
}

// A bump killed (SIGKILL) between its two writes, the recipe and the
// release set file that follows it, is done whole by running it again:
// the helper process is held at the rename of one file or the other (a
// lock on it, as a second updeb would hold) and killed there, and the next
// run leaves helm at 3.21.5 in both files, as one uninterrupted run does.
// Written recipe first, the rerun found helm "already at 3.21.5" and the
// release sets kept naming 3.21.4.
func TestBumpKilledBetweenItsWrites(t *testing.T) {
	w := newTrackingWorld(t)
	w.release("helm", "3.21.5", "2026-11-20")
	for _, args := range [][]string{{"bump", "helm", "--to", "3.21.5"}, {"plan", "--apply", "--only", "helm", "--now", "2026-11-28"}} {
		for _, held := range []string{"release-sets.yaml", "recipes/helm.yaml"} {
			lock, err := os.Open(filepath.Join(w.root, held))
			if err != nil {
				t.Fatal(err)
			}
			if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
				t.Fatal(err)
			}
			all := append([]string{"--config", w.config, "--state", w.state, "--cache", w.cache}, args...)
			cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestFetchHelperProcess$", "--"}, all...)...)
			cmd.Dir, cmd.Env = w.root, append(os.Environ(), "UPDEB_TEST_HELPER=1")
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			pending := filepath.Join(w.root, filepath.Dir(held), atomicfile.TempPrefix(filepath.Base(held))+"*")
			for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
				if m, _ := filepath.Glob(pending); len(m) > 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%v never came to write %s:\n%s", args, held, out.String())
				}
			}
			cmd.Process.Kill() //nolint:errcheck // waiting for the lock
			cmd.Wait()         //nolint:errcheck // killed on purpose
			lock.Close()
			if code, stdout, stderr := w.updeb(args...); code != 0 && code != 1 {
				t.Fatalf("%v again after a kill at %s: exit %d\n%s%s", args, held, code, stdout, stderr)
			}
			recipe, sets := w.read("recipes/helm.yaml"), w.read("release-sets.yaml")
			if !strings.Contains(recipe, "version: 3.21.5\n") || strings.Contains(sets, "helm: 3.21.4") || !strings.Contains(sets, "helm: 3.21.5") {
				t.Errorf("%v killed at %s, then run again: the recipe and the release sets disagree:\n%s\n%s", args, held, recipe, sets)
			}
			w.git("checkout", "-q", "--", ".")
			w.git("clean", "-q", "-f", "-d")
		}
	}
}

// TestBumpStopsWaitingOnSignal: a bump that waits for the lock of its
// recipe's folder (another updeb writing there, or one stopped with ^Z
// while it did) says it waits (--verbose), and stops on SIGINT with exit 130, the
// recipe as it was. The wait (up to a minute) ignored the signal and said
// nothing: the bump then wrote the recipe and exited 0.
func TestBumpStopsWaitingOnSignal(t *testing.T) {
	w := newTrackingWorld(t)
	w.release("helm", "3.21.5", "2026-11-20")
	held, err := os.Open(filepath.Join(w.root, "recipes"))
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if err := syscall.Flock(int(held.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	t.Chdir(w.root)
	for _, tc := range []struct {
		args []string
		hint string
	}{
		{[]string{"bump", "helm", "--to", "3.21.5"}, "release-sets.yaml was written (helm at 3.21.5 there), the recipe was not: run the same command again to finish"},
		{[]string{"plan", "--apply", "--only", "helm", "--now", "2026-11-28"}, "a release set file that followed a bump whose recipe was not written): review it (git diff), then run plan --apply again to finish"},
	} {
		code, stderr := interruptAfter(t, 3*time.Second, syscall.SIGINT, append([]string{"--verbose", "--config", w.config, "--state", w.state, "--cache", w.cache}, tc.args...)...)
		if code != exitInterrupted || !strings.Contains(stderr, "interrupted") || !strings.Contains(stderr, "waiting for a lock") {
			t.Errorf("%v: exit %d, want %d, a notice of the wait and a message saying it was interrupted:\n%s", tc.args, code, exitInterrupted, stderr)
		}
		if recipe := w.read("recipes/helm.yaml"); !strings.Contains(recipe, "version: 3.21.4\n") {
			t.Errorf("%v: the interrupted bump wrote the recipe:\n%s", tc.args, recipe)
		}
		// The release set followed before the wait: the hint says so,
		// and how to finish, not that nothing half-done was left behind.
		if set := w.read("release-sets.yaml"); !strings.Contains(set, "helm: 3.21.5") {
			t.Errorf("%v: the release set did not follow before the wait:\n%s", tc.args, set)
		}
		if strings.Contains(stderr, "nothing half-done") || !strings.Contains(stderr, tc.hint) {
			t.Errorf("%v: the release set followed, and the hint does not say so:\n%s", tc.args, stderr)
		}
		w.git("checkout", "-q", "--", ".")
	}
}

// TestTrackingInstallSteps runs the install commands of the job's files as
// docs/tracking.md ("On a timer") and the service's own comment give them,
// into a root that holds only what a Debian system with systemd has
// (/etc/default, /etc/systemd/system, /usr/lib): each succeeds, and the
// service's ExecStart, units and defaults file are then in place. The
// job's folder, /usr/lib/updeb, is no Debian package's: the command that
// installs the job makes it.
func TestTrackingInstallSteps(t *testing.T) {
	testenv.RequireTool(t, "bash", "install")
	service, exe := trackingService(t)
	doc, err := os.ReadFile("../../docs/tracking.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(doc), "\n## On a timer\n")
	step := regexp.MustCompile(`(?m)^(?:#[ \t]+)?(install [^\n]*\bcontrib/[^\n]*?)(?:[ \t]+#[^\n]*)?$`)
	for _, src := range []struct{ name, text string }{{"docs/tracking.md", section}, {"updeb-tracking.service", string(service)}} {
		steps := step.FindAllStringSubmatch(src.text, -1)
		if len(steps) != 3 {
			t.Errorf("%s: %d install commands of contrib/ files, want 3 (job, units, defaults): %q", src.name, len(steps), steps)
			continue
		}
		root := t.TempDir()
		for _, d := range []string{"etc/default", "etc/systemd/system", "usr/lib"} {
			if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for _, s := range steps {
			cmd := regexp.MustCompile(` /(etc|usr)/`).ReplaceAllString(s[1], ` "$$ROOT"/$1/`)
			c := exec.Command("bash", "-c", cmd)
			c.Dir, c.Env = "../..", append(os.Environ(), "ROOT="+root)
			if out, err := c.CombinedOutput(); err != nil {
				t.Errorf("%s: %s: %v\n%s", src.name, s[1], err, out)
			}
		}
		for _, f := range []string{exe, "/etc/systemd/system/updeb-tracking.service", "/etc/systemd/system/updeb-tracking.timer", "/etc/default/updeb-tracking"} {
			if fi, err := os.Stat(filepath.Join(root, f)); err != nil || (f == exe && fi.Mode()&0o111 == 0) {
				t.Errorf("%s: after its install commands, %s: %v", src.name, f, err)
			}
		}
	}
}

// plan --apply --message FIFO writes the description into the FIFO (a
// shell's >(git commit -F -), a pipe the job's next step reads), as compat
// --output does, instead of replacing it with a regular file its reader
// never sees.
func TestPlanApplyMessageFIFO(t *testing.T) {
	w := newTrackingWorld(t)
	fifo := filepath.Join(t.TempDir(), "change.fifo")
	read := fifoReader(t, fifo)
	code, stdout, stderr := w.updeb("plan", "--apply", "--message", fifo, "--now", "2026-10-26")
	if got := read(); code != 0 || !strings.Contains(got, "Tracking 2026-10-26: nothing changed\n") {
		t.Errorf("exit %d, the FIFO's reader got %q\n%s%s", code, got, stdout, stderr)
	}
}

// TestBumpAfterInterruptedBumpAndNewerRelease: a bump killed after the
// release set file followed helm 3.21.4 -> 3.21.5 but before the recipe was
// written, and upstream shipping 3.21.6 before the rerun (staged: the
// release set names 3.21.5, the recipe 3.21.4). The rerun, bump or plan
// --apply, leaves both files at 3.21.6. It left the set at 3.21.5, a
// version no recipe ships: the rerun followed 3.21.4 -> 3.21.6 and found
// no 3.21.4 to change.
func TestBumpAfterInterruptedBumpAndNewerRelease(t *testing.T) {
	w := newTrackingWorld(t)
	w.release("helm", "3.21.5", "2026-11-20")
	w.release("helm", "3.21.6", "2026-11-25")
	sets := filepath.Join(w.root, "release-sets.yaml")
	data, err := os.ReadFile(sets)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "helm: 3.21.4") {
		t.Fatalf("the fixture's release sets name no helm 3.21.4:\n%s", data)
	}
	if err := os.WriteFile(sets, []byte(strings.ReplaceAll(string(data), "helm: 3.21.4", "helm: 3.21.5")), 0o644); err != nil {
		t.Fatal(err)
	}
	w.git("commit", "-q", "-a", "-m", "interrupted bump")
	for _, args := range [][]string{{"bump", "helm"}, {"plan", "--apply", "--only", "helm", "--now", "2026-11-28"}} {
		code, stdout, stderr := w.updeb(args...)
		if code != 0 && code != 1 {
			t.Fatalf("%v: exit %d\n%s%s", args, code, stdout, stderr)
		}
		recipe, sets := w.read("recipes/helm.yaml"), w.read("release-sets.yaml")
		if !strings.Contains(recipe, "version: 3.21.6\n") || strings.Contains(sets, "helm: 3.21.5") || !strings.Contains(sets, "helm: 3.21.6") {
			t.Errorf("%v after an interrupted bump: the recipe and the release sets disagree:\n%s\n%s\n%s", args, recipe, sets, stdout)
		}
		w.git("reset", "-q", "--hard")
		w.git("clean", "-q", "-f", "-d")
		w.git("checkout", "-q", "main")
	}
}

// A GitHub API behind a proxy that ignores the query string answers the
// first page of a listing for every page=: outdated stops at the second
// page with exit 3 (an unusable answer from upstream), naming the page and
// what to check, instead of reading the same releases up to GitHub's 1000.
func TestOutdatedListingRepeatsItsPage(t *testing.T) {
	w := newTrackingWorld(t)
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 150 { // two pages of 100 and more
		w.release("helm", fmt.Sprintf("3.21.%d", 5+i), start.AddDate(0, 0, i).Format(time.DateOnly))
	}
	listings := func() int {
		n := 0
		for _, r := range w.gh.Requests() {
			if r == "GET /api/repos/helm/helm/releases" {
				n++
			}
		}
		return n
	}
	w.gh.IgnorePages(true)
	code, stdout, stderr := w.updeb("outdated", "--now", "2026-10-25", "helm")
	want := w.gh.API() + "/repos/helm/helm/releases?per_page=100&page=2: the same 100 release(s) as " + w.gh.API() + "/repos/helm/helm/releases?per_page=100&page=1, read before"
	if code != 3 || !strings.Contains(stderr, want) || !strings.Contains(stderr, "ignores the query string") || !strings.Contains(stderr, "hint: ") {
		t.Errorf("outdated helm: exit %d, want 3 saying %q and what to check\n%s%s", code, want, stdout, stderr)
	}
	if n := listings(); n != 2 {
		t.Errorf("%d pages of helm's listing read, want 2", n)
	}
	w.gh.IgnorePages(false)
	if code, stdout, stderr := w.updeb("outdated", "--now", "2026-10-25", "helm"); code != 0 || !strings.Contains(stdout, "3.21.154") {
		t.Errorf("outdated helm, each page answered: exit %d, want 0 with 3.21.154 newest\n%s%s", code, stdout, stderr)
	}
}

// TestMarkedEndOfLifeSupportedAgain: the loop marked kubernetes-1.34
// end-of-life on the support data's day; endoflife.date then moves that day
// later (an extension: 1.34 is security-only until 2027-01-27) and
// upstream ships a patch of it. The mark stops every bump of the line, so
// the patch waits for a person to remove it: plan's verdict, and the status
// page's, say so and name the recipe, where both said every recipe was at
// the newest release of its track (a green page, the patch never shipped).
func TestMarkedEndOfLifeSupportedAgain(t *testing.T) {
	w := newTrackingWorld(t)
	if code, out, errs := w.updeb("data", "refresh", "--allow-dropped", "--write", "compat-data.yaml"); code != 0 {
		t.Fatalf("data refresh: exit %d\n%s%s", code, out, errs)
	}
	if code, out, errs := w.updeb("plan", "--apply", "--now", "2026-11-01"); code != 1 || !strings.Contains(out, "  retire kubernetes-1.34: end-of-life: 2026-10-27") {
		t.Fatalf("the month's run: exit %d\n%s%s", code, out, errs)
	}
	w.git("add", "-A")
	w.git("commit", "-q", "-m", "the month's run")
	w.cycle(eoltest.Cycle("kubernetes", "1.34", "2025-08-27", "2026-08-27", "2027-01-27", "1.34.8"))
	w.release("kubernetes", "1.34.8", "2026-11-10")
	if code, out, errs := w.updeb("data", "refresh", "--write", "compat-data.yaml"); code != 0 {
		t.Fatalf("data refresh: exit %d\n%s%s", code, out, errs)
	}
	want := "kubernetes-1.34 (eol since 2026-10-27 (marked in the recipe, but the support data says security-only until 2027-01-27: remove the mark to track it again))"
	code, out, errs := w.updeb("plan", "--now", "2026-11-12")
	if code != 0 || strings.Contains(out, "No action needed") || !strings.Contains(out, "No action found, but 1 recipe(s) are marked end-of-life while the support data calls their cycle supported: "+want+".") {
		t.Errorf("plan: exit %d\n%s%s", code, out, errs)
	}
	site := filepath.Join(filepath.Dir(w.root), "site")
	if code, out, errs := w.updeb("report", "--output", site, "--now", "2026-11-12"); code != 0 {
		t.Fatalf("report: exit %d\n%s%s", code, out, errs)
	}
	var r struct {
		Verdict struct{ Level, Text string } `json:"verdict"`
	}
	b, err := os.ReadFile(filepath.Join(site, "report.json"))
	if err == nil {
		err = json.Unmarshal(b, &r)
	}
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict.Level != "action" || !strings.Contains(r.Verdict.Text, "1 recipe(s) marked end-of-life while the support data calls their cycle supported: "+want) {
		t.Errorf("the page's verdict: %+v", r.Verdict)
	}
}

// TestPlanApplyPatchOfAViolatingSet: the release set of a new Kubernetes
// minor violates a rule from the day it is added (Helm 3.21 supports
// Kubernetes 1.36 at most, for a person to decide). A patch of that minor
// moves the set's Kubernetes version, and with it the words of the helm
// violation ("the set has kubernetes 1.37.1"), which is still the one
// violation the set had: the bump brings none and fixes none, and is done,
// where it was held back as breaking the set, and every patch of the minor
// with it, until Helm caught up.
func TestPlanApplyPatchOfAViolatingSet(t *testing.T) {
	w := newTrackingWorld(t)
	w.release("kubernetes", "1.37.0", "2026-11-18")
	w.cycle(eoltest.Cycle("kubernetes", "1.37", "2026-11-18", "2027-10-28", "2027-12-28", "1.37.0"))
	if code, out, errs := w.updeb("data", "refresh", "--allow-dropped", "--table", "endoflife"); code != 0 {
		t.Fatalf("data refresh: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs := w.updeb("plan", "--apply", "--only", "kubernetes-1.37", "--now", "2026-11-20")
	if code != 1 || !strings.Contains(out, "  add    kubernetes-1.37 (from kubernetes-1.36) at 1.37.0") {
		t.Fatalf("the add: exit %d\n%s%s", code, out, errs)
	}
	w.git("add", "-A")
	w.git("commit", "-q", "-m", "kubernetes 1.37")
	w.release("kubernetes", "1.37.1", "2026-12-10")
	code, out, errs = w.updeb("plan", "--now", "2026-12-12")
	if code != 0 || strings.Contains(out, "breaks kubernetes137") || strings.Contains(out, "fixes kubernetes137") ||
		!strings.Contains(out, "compat release set kubernetes137: helm: helm 3.21.4 supports Kubernetes 1.33.x to 1.36.x (Helm's n-3 table), the set has kubernetes 1.37.1; no action of the plan resolves it") {
		t.Errorf("the plan: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = w.updeb("plan", "--apply", "--only", "kubernetes-1.37", "--now", "2026-12-12")
	if code != 1 || !strings.Contains(out, "  bump   kubernetes-1.37 1.37.0 -> 1.37.1") || strings.Contains(out, "held back") {
		t.Errorf("the patch: exit %d, want 1\n%s%s", code, out, errs)
	}
	if got := w.read("recipes/kubernetes-1.37.yaml"); !strings.Contains(got, "version: 1.37.1\n") {
		t.Errorf("kubernetes-1.37:\n%s", got)
	}
}

// TestPlanApplyBumpIntoALaggingTable: Helm publishes 3.22 before its
// version skew table has a row for it (upstream's pages lag by weeks). The
// bump passed every release set from a checked range (Helm 3.21: 1.33 to
// 1.36) to an unknown one, a warning compat gives, but plan, plan --apply
// and the change description said only "2 version(s) 3.21.4 -> 3.22.0": the
// reviewer approved a compatibility nobody checked without a word. Each
// now says which sets the action brings a warning to, and which.
func TestPlanApplyBumpIntoALaggingTable(t *testing.T) {
	w := newTrackingWorld(t)
	if code, out, errs := w.updeb("data", "refresh", "--allow-dropped", "--write", "compat-data.yaml"); code != 0 {
		t.Fatalf("data refresh: exit %d\n%s%s", code, out, errs)
	}
	w.git("add", "-A")
	w.git("commit", "-q", "-m", "the data tables")
	w.release("helm", "3.22.0", "2026-11-12")
	warns := "warns kubernetes135 (helm: helm 3.22 is not in Helm's version skew table (repository compat-data.yaml, as of "
	code, out, errs := w.updeb("plan", "--now", "2026-11-20")
	if code != 0 || !strings.Contains(out, "  bump   helm 3.21.4 is behind its watch track: 3.22.0\n") || !strings.Contains(out, warns) ||
		!strings.Contains(out, "its Kubernetes range is unknown); warns kubernetes136 (helm: helm 3.22 is not in") {
		t.Errorf("plan: exit %d\n%s%s", code, out, errs)
	}
	msg := filepath.Join(filepath.Dir(w.root), "change.txt")
	code, out, errs = w.updeb("plan", "--apply", "--only", "helm", "--message", msg, "--now", "2026-11-20")
	desc, _ := os.ReadFile(msg)
	want := "  release sets: 2 version(s) 3.21.4 -> 3.22.0\n  new compat warnings: kubernetes135: helm: helm 3.22 is not in Helm's version skew table (repository compat-data.yaml, as of "
	if code != 1 || !strings.Contains(out, "  bump   helm 3.21.4 -> 3.22.0\n         release sets: 2 version(s) 3.21.4 -> 3.22.0\n         new compat warnings: kubernetes135: helm: helm 3.22 is not in") ||
		!strings.Contains(string(desc), want) || !strings.Contains(string(desc), "; kubernetes136: helm: helm 3.22 is not in Helm's version skew table") {
		t.Errorf("plan --apply: exit %d\n%s%s\n%s", code, out, errs, desc)
	}
}

// TestPlanApplyMovesARetiredSingleRecipe: Istio 1.30 reaches its end of
// life before 1.31 is out, so the loop marks istioctl (a recipe not of a
// series) end-of-life: there is nothing to move it to. Once Istio 1.31 is
// out, the loop moves it there (bump --new-minor drops the mark), where
// the plan passed over every marked recipe: istioctl stayed at 1.30 for
// good, its release sets deploying an end-of-life Istio "for a person".
func TestPlanApplyMovesARetiredSingleRecipe(t *testing.T) {
	w := newTrackingWorld(t)
	if code, out, errs := w.updeb("data", "refresh", "--allow-dropped", "--write", "compat-data.yaml"); code != 0 {
		t.Fatalf("data refresh: exit %d\n%s%s", code, out, errs)
	}
	if code, out, errs := w.updeb("plan", "--apply", "--only", "istioctl", "--now", "2026-12-01"); code != 1 || !strings.Contains(out, "  retire istioctl: end-of-life: 2026-11-30") {
		t.Fatalf("the retire: exit %d\n%s%s", code, out, errs)
	}
	w.git("add", "-A")
	w.git("commit", "-q", "-m", "istioctl end-of-life")
	w.release("istioctl", "1.31.0", "2026-12-05")
	istio131 := eoltest.Cycle("istio", "1.31", "2026-12-05", "", "2027-05-30", "1.31.0")
	istio131.SupportedKubernetes = "1.32 - 1.36"
	w.cycle(istio131)
	if code, out, errs := w.updeb("data", "refresh", "--table", "endoflife", "--write", "compat-data.yaml"); code != 0 {
		t.Fatalf("data refresh: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs := w.updeb("plan", "--apply", "--only", "istioctl", "--now", "2026-12-10")
	if code != 1 || !strings.Contains(out, "  bump   istioctl 1.30.3 -> 1.31.0\n") {
		t.Errorf("the move: exit %d, want 1\n%s%s", code, out, errs)
	}
	if got := w.read("recipes/istioctl.yaml"); !strings.Contains(got, "version: 1.31.0\n") || strings.Contains(got, "end-of-life:") || !strings.Contains(got, `track: "1.31.x"`) {
		t.Errorf("istioctl:\n%s", got)
	}
	if got := w.read("release-sets.yaml"); strings.Contains(got, "istioctl: 1.30.3") {
		t.Errorf("the release sets still deploy istioctl 1.30.3:\n%s", got)
	}
	if code, out, errs := w.updeb("plan", "--apply", "--only", "istioctl", "--now", "2026-12-10"); code != 0 {
		t.Errorf("a second run: exit %d, want 0\n%s%s", code, out, errs)
	}
}

// TestFollowerRetiredWithKubernetes: cri-tools has no end-of-life data of
// its own at endoflife.date; the release sets name it by Kubernetes minor,
// so its 1.35 ends with Kubernetes 1.35 (the same day), and a patch of it
// out after that day is no bump. Before, cri-tools-1.35 stayed supported.
func TestFollowerRetiredWithKubernetes(t *testing.T) {
	w := newTrackingWorld(t)
	w.cycle(eoltest.Cycle("kubernetes", "1.35", "2025-12-17", "2026-10-20", "2026-11-20", "1.35.9"))
	w.release("cri-tools", "1.35.1", "2026-11-25")
	if code, out, errs := w.updeb("data", "refresh", "--allow-dropped", "--write", "compat-data.yaml"); code != 0 {
		t.Fatalf("data refresh: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs := w.updeb("plan", "--now", "2026-11-28")
	if code != 0 || !strings.Contains(out, "cri-tools-1.35 follows kubernetes 1.35, end of life since 2026-11-20; mark cri-tools-1.35 end-of-life") || strings.Contains(out, "bump cri-tools-1.35") {
		t.Errorf("plan: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = w.updeb("plan", "--apply", "--only", "cri-tools-1.35", "--now", "2026-11-28")
	if code > 1 || !strings.Contains(out, "  retire cri-tools-1.35: end-of-life: 2026-11-20") {
		t.Fatalf("plan --apply: exit %d\n%s%s", code, out, errs)
	}
	if got := w.read("recipes/cri-tools-1.35.yaml"); !strings.Contains(got, "\nend-of-life: 2026-11-20\n") || !strings.Contains(got, "\nversion: 1.35.0\n") {
		t.Errorf("cri-tools-1.35.yaml after the apply:\n%s", got)
	}
}
