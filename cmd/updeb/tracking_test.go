package main

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/supportdata"
	"github.com/updeb/updeb/internal/testkit/eoltest"
	"github.com/updeb/updeb/internal/testkit/ghfake"
	"github.com/updeb/updeb/internal/testkit/squid"
	"github.com/updeb/updeb/internal/testkit/testenv"
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
	testenv.RequireTool(t, "squid", "git")
	sq, err := squid.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sq.Stop)
	w := &trackingWorld{t: t, squid: sq, gh: ghfake.New(t.Cleanup), root: filepath.Join(t.TempDir(), "recipes-repo"), products: map[string][]supportdata.Cycle{}}
	empty, err := supportdata.New("Source: tracking test\nAs of: 2026-10-25", nil)
	if err != nil {
		t.Fatal(err)
	}
	w.eol = eoltest.New(empty, t.Cleanup)
	if err := copyTree("../../testdata/tracking", w.root); err != nil {
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
	} {
		w.cycle(cy)
	}
	dir := filepath.Dir(w.root)
	w.state, w.cache, w.config = filepath.Join(dir, "state"), filepath.Join(dir, "cache"), filepath.Join(dir, "updeb.yaml")
	conf := fmt.Sprintf(`proxy: %s
fetch: {retries: 0}
github-api: %s
mirrors:
  - {prefix: "https://github.com/", to: "%s"}
data: {endoflife-url: "%s"}
build:
  maintainer: Tracking Test <tracking@example.org>
`, sq.URL, w.gh.API(), w.gh.Mirror(), w.eol.Template())
	if err := os.WriteFile(w.config, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	w.git("init", "-q", "-b", "main")
	w.git("add", "-A")
	w.git("commit", "-q", "-m", "fixture")
	return w
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
