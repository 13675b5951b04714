package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/plan"
	"github.com/updeb/updeb/internal/supportdata"
	"github.com/updeb/updeb/internal/testkit/eoltest"
	"github.com/updeb/updeb/internal/testkit/squid"
)

// fakeGitHub serves the releases of demo/REPO (newest first, tag
// "v"+version) and answers every artifact path with a few bytes.
func fakeGitHub(t *testing.T, releases map[string][]string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		repo, ok := strings.CutSuffix(strings.TrimPrefix(r.URL.Path, "/api/repos/demo/"), "/releases")
		switch {
		case ok && r.URL.Query().Get("page") == "1":
			var list []map[string]any
			for _, v := range releases[repo] {
				list = append(list, map[string]any{"tag_name": "v" + v, "published_at": "2026-09-23T12:00:00Z"})
			}
			json.NewEncoder(w).Encode(list)
		case ok:
			fmt.Fprint(w, "[]")
		case strings.HasPrefix(r.URL.Path, "/files/"):
			fmt.Fprint(w, "artifact")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// planProject writes recipes of a Kubernetes series (1.34, 1.35, 1.36), etcd
// and helm whose sources are on base, watched on demo/kubernetes and demo/etcd.
func planProject(t *testing.T, base string) string {
	root := t.TempDir()
	write := func(name, version, track, repo string) {
		text := fmt.Sprintf(`name: %s
version: %s
release-date: 2026-01-01
license: Apache-2.0
copyright: test
maintainer: Test <test@example.org>
architectures: [amd64]
sources:
  - name: bin
    url: %s/files/%s/v{{.Version}}/bin.{{.Arch}}
    sha256: %s
    signature: {none: "test fixture"}
packages:
  - name: %s
    summary: a test package
    description: test
    section: utils
    files: [{source: bin, dest: /usr/bin/%s}]
watch: {github: demo/%s, tag-prefix: v, track: "%s"}
`, name, version, base, repo, strings.Repeat("0", 64), strings.TrimSuffix(strings.ReplaceAll(name, ".", ""), "-"), name, repo, track)
		p := filepath.Join(root, "recipes", name+".yaml")
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("kubernetes-1.34", "1.34.7", "1.34.x", "kubernetes")
	write("kubernetes-1.35", "1.35.4", "1.35.x", "kubernetes")
	write("kubernetes-1.36", "1.36.0", "1.36.x", "kubernetes")
	write("etcd", "3.6.14", "3.6.x", "etcd")
	write("helm", "3.21.4", "3.x", "helm")
	return root
}

// TestDataAndPlanCommands: updeb data refresh and updeb plan through squid
// against a fake endoflife.date and a fake GitHub API: the bundled data and
// its stale warning, a refresh that brings a new minor, the plan offline
// (the data's latest patches) and online (the watch's), --json, --exit-code,
// a recipe going end-of-life, refused answers that keep the old copy, and
// --offline never fetching.
func TestDataAndPlanCommands(t *testing.T) {
	sq := squid.ForTest(t)
	bundled, err := supportdata.Bundled()
	if err != nil {
		t.Fatal(err)
	}
	api := fakeEndOfLife(t) // Kubernetes 1.37 is out
	gh := fakeGitHub(t, map[string][]string{
		"kubernetes": {"1.37.1", "1.37.0", "1.36.5", "1.36.0", "1.35.9", "1.35.4", "1.34.12", "1.34.7"},
		"etcd":       {"3.7.2", "3.6.15", "3.6.14"},
		"helm":       {"3.21.5", "3.21.4"},
	})
	root := planProject(t, gh.URL)
	state := filepath.Join(t.TempDir(), "state")
	conf := filepath.Join(root, "updeb.yaml")
	_, sources := fakeTables(t)
	os.WriteFile(conf, fmt.Appendf(nil, "proxy: %s\nfetch: {retries: 0}\ngithub-api: %s/api\ndata: {endoflife-url: %q, sources: %s}\n", sq.URL, gh.URL, api.Template(), sources), 0o644)
	lenient := filepath.Join(root, "lenient.yaml")
	os.WriteFile(lenient, fmt.Appendf(nil, "proxy: %s\ndata: {max-age-days: 1000}\n", sq.URL), 0o644)
	common := []string{"--config", conf, "--recipes", filepath.Join(root, "recipes"), "--state", state, "--cache", filepath.Join(root, "cache")}
	dataFile := filepath.Join(state, "support", "eol.yaml")

	type step struct {
		name           string
		args           []string
		code           int
		stdout, stderr []string // each must appear
		notStdout      []string
		notStderr      []string
	}
	runSteps := func(steps []step) {
		for _, s := range steps {
			t.Run(s.name, func(t *testing.T) {
				code, stdout, stderr := runUpdeb(append(append([]string{}, common...), s.args...)...)
				fail := code != s.code
				for _, w := range s.stdout {
					fail = fail || !strings.Contains(stdout, w)
				}
				for _, w := range s.stderr {
					fail = fail || !strings.Contains(stderr, w)
				}
				for _, w := range s.notStdout {
					fail = fail || strings.Contains(stdout, w)
				}
				for _, w := range s.notStderr {
					fail = fail || strings.Contains(stderr, w)
				}
				if fail {
					t.Errorf("updeb %v: exit %d, want %d\nstdout (want %q, not %q):\n%s\nstderr (want %q, not %q):\n%s",
						s.args, code, s.code, s.stdout, s.notStdout, stdout, s.stderr, s.notStderr, stderr)
				}
			})
		}
	}

	runSteps([]step{
		{name: "status before any refresh", args: []string{"data", "status"}, stdout: []string{"bundled copy, as of 2026-08-22"}},
		{name: "plan offline on the bundled data", args: []string{"plan", "--offline", "--now", "2026-11-24"},
			stdout: []string{"Support data: bundled copy (as of 2026-08-22, 94 day(s) old). Newest releases from the support data (offline).",
				"retire kubernetes 1.34 is end-of-life (eol since 2026-10-27)",
				"$ updeb bump kubernetes-1.36 --to 1.36.4", "$ updeb bump etcd --new-minor 3.7 --to 3.7.1", "helm    3.21.4   3.x    unknown  unknown (offline, and the support data does not cover helm)"},
			notStdout: []string{"1.37"},
			stderr:    []string{"updeb: support data: bundled copy, as of 2026-08-22 (94 days old)", "warning: the support data is older than 30 days"}},
		{name: "a longer max age", args: []string{"plan", "--offline", "--now", "2026-11-24", "--config", lenient},
			stderr: []string{"support data: bundled copy"}, notStderr: []string{"warning"}},
		{name: "offline refresh never fetches", args: []string{"--offline", "data", "refresh"}, code: 3, stderr: []string{"without --offline"}},
	})
	if n := len(api.Requests()); n != 0 {
		t.Fatalf("%d requests reached endoflife.date before the refresh", n)
	}
	runSteps([]step{
		{name: "refresh", args: []string{"data", "refresh"},
			stdout: []string{"support data refreshed: " + dataFile, "replaced the bundled copy", "kubernetes   ", "new cycles 1.37"}},
		{name: "status after refresh", args: []string{"data", "status"}, stdout: []string{"refreshed copy " + dataFile}},
		{name: "plan offline on the refreshed data", args: []string{"plan", "--offline", "--now", "2026-11-25"},
			stdout: []string{"Support data: refreshed copy " + dataFile,
				"add    kubernetes 1.37 is out and newer than every recipe of the series (newest: kubernetes-1.36 1.36.0): add kubernetes-1.37",
				"$ updeb bump kubernetes-1.36 --new-minor 1.37"},
			stderr: []string{"updeb: support data: refreshed copy " + dataFile}, notStderr: []string{"warning"}},
		{name: "plan online", args: []string{"plan", "--now", "2026-11-25"},
			stdout: []string{"Newest releases from the recipes' watch", "$ updeb bump etcd --new-minor 3.7 --to 3.7.2", "$ updeb bump helm --to 3.21.5", "$ updeb bump kubernetes-1.36 --to 1.36.5", "$ updeb bump etcd --to 3.6.15"}},
		{name: "plan --json", args: []string{"plan", "--offline", "--json", "--now", "2026-11-25"},
			stdout: []string{`"schema": "updeb/plan/v2"`, `"copy": "refreshed"`, `"action_needed": true`, `"command": "updeb bump kubernetes-1.36 --new-minor 1.37"`}},
		{name: "plan --exit-code", args: []string{"plan", "--offline", "--exit-code", "--now", "2026-11-25"}, code: 1,
			stderr: []string{"action(s) needed"}},
		{name: "a recipe going end-of-life", args: []string{"plan", "--offline", "--now", "2027-03-01"},
			stdout: []string{"retire kubernetes 1.35 is end-of-life (eol since 2027-02-28)"}},
		{name: "outdated says which copy", args: []string{"outdated", "etcd", "--now", "2026-11-25"},
			stdout: []string{"etcd    3.6.14"}, stderr: []string{"updeb: support data: refreshed copy"}},
		{name: "bad --now", args: []string{"plan", "--offline", "--now", "soon"}, code: 2, stderr: []string{`--now "soon"`}},
	})
	// The JSON convention (TestJSONOutputs leaves these commands to this test).
	json := func(args ...string) string {
		code, stdout, stderr := runUpdeb(append(append([]string{}, common...), append(args, "--json")...)...)
		if code != 0 {
			t.Fatalf("%v --json: exit %d: %s", args, code, stderr)
		}
		return stdout
	}
	checkJSON(t, "plan", json("plan", "--offline", "--now", "2026-11-25"))
	checkJSON(t, "data status", json("data", "status"))
	checkJSON(t, "data refresh", json("data", "refresh"))
	if log := sq.Log(); !strings.Contains(log, "GET "+api.URL+"/api/kubernetes.json") || !strings.Contains(log, "GET "+gh.URL+"/api/repos/demo/kubernetes/releases") {
		t.Errorf("squid's log lacks the API requests:\n%s", log)
	}

	good, err := os.ReadFile(dataFile)
	if err != nil {
		t.Fatal(err)
	}
	kept := func(t *testing.T) {
		if after, _ := os.ReadFile(dataFile); !bytes.Equal(after, good) {
			t.Error("the refreshed copy changed")
		}
	}
	t.Run("corrupt answer refused", func(t *testing.T) {
		api.Raw("etcd", eoltest.Answer{Body: []byte("<!DOCTYPE html><title>Just a moment...</title>")})
		code, _, stderr := runUpdeb(append([]string{"data", "refresh"}, common...)...)
		// The end-of-life data kept, the tables refreshed: exit 1.
		if code != 1 || !strings.Contains(stderr, "the answer is HTML") || !strings.Contains(stderr, "[kept the refreshed "+dataFile+" copy, as of ") {
			t.Errorf("exit %d\n%s", code, stderr)
		}
		kept(t)
	})
	t.Run("truncated answer refused", func(t *testing.T) {
		full := eoltest.V0(bundled.Cycles("etcd"))
		api.Raw("etcd", eoltest.Answer{Body: full[:len(full)/3]})
		code, _, stderr := runUpdeb(append([]string{"data", "refresh"}, common...)...)
		if code != 1 || !strings.Contains(stderr, "truncated") {
			t.Errorf("exit %d\n%s", code, stderr)
		}
		kept(t)
	})
	t.Run("implausible answers refused", func(t *testing.T) {
		api.Set("etcd", bundled.Cycles("etcd"))
		for _, c := range []struct{ from, to, want string }{
			{`"latest": "1.36.4"`, `"latest": "99.0.0"`, `latest release "99.0.0" is not a release of cycle 1.36`},
			{`"releaseDate": "2026-04-22"`, `"releaseDate": "9999-01-01"`, `release date 9999-01-01 is after today`},
			{`"eol": "2027-06-28"`, `"eol": "9999-01-01"`, `end of life 9999-01-01 is more than 30 years after the release date`},
		} {
			body := bytes.Replace(eoltest.V0(api.Cycles("kubernetes")), []byte(c.from), []byte(c.to), 1)
			api.Raw("kubernetes", eoltest.Answer{Body: body})
			code, _, stderr := runUpdeb(append([]string{"data", "refresh"}, common...)...)
			if code != 1 || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, api.URL+"/api/kubernetes.json") || !strings.Contains(stderr, "[kept the refreshed "+dataFile+" copy") {
				t.Errorf("%s: exit %d\n%s", c.want, code, stderr)
			}
			kept(t)
		}
		api.Set("kubernetes", api.Cycles("kubernetes"))
	})
	t.Run("lost cycles refused, then accepted", func(t *testing.T) {
		api.Set("etcd", bundled.Cycles("etcd")[1:])
		code, _, stderr := runUpdeb(append([]string{"data", "refresh"}, common...)...)
		if code != 1 || !strings.Contains(stderr, "lacks release cycles the copy in use has: etcd 3.7") || !strings.Contains(stderr, "--allow-dropped") {
			t.Errorf("exit %d\n%s", code, stderr)
		}
		kept(t)
		code, stdout, stderr := runUpdeb(append([]string{"data", "refresh", "--allow-dropped"}, common...)...)
		if code != 0 || !strings.Contains(stdout, "dropped 3.7") {
			t.Errorf("exit %d\n%s%s", code, stdout, stderr)
		}
	})
	t.Run("compat's page has the plan", func(t *testing.T) {
		sets := filepath.Join(root, "sets.yaml")
		os.WriteFile(sets, []byte("sets:\n  - name: k136\n    components: {kubernetes: recipe:kubernetes-1.36, etcd: 3.6.14}\n"), 0o644)
		page := filepath.Join(root, "compat.html")
		code, _, stderr := runUpdeb(append([]string{"compat", "--set", sets, "--format", "html", "--output", page, "--now", "2026-11-25"}, common...)...)
		html, _ := os.ReadFile(page)
		if code != 0 || !strings.Contains(string(html), `<section id="plan">`) || !strings.Contains(string(html), "updeb bump kubernetes-1.36 --new-minor 1.37") {
			t.Errorf("exit %d\n%s", code, stderr)
		}
	})
}

// TestRepositoryPassesItsOwnChecks: updeb compat on this repository's own
// release-sets.yaml and recipes finds no violation (on the day of the data
// the recipes were last moved to: istio 1.30 goes end-of-life 2026-11-30,
// after which the plan says to move istioctl).
func TestRepositoryPassesItsOwnChecks(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "updeb.yaml") // not the machine's /etc/updeb/config.yaml
	os.WriteFile(empty, nil, 0o644)
	code, stdout, stderr := runUpdeb("compat", "--set", "../../release-sets.yaml", "--recipes", "../../recipes",
		"--state", t.TempDir(), "--now", "2026-11-24", "--config", empty)
	if code != 0 || !strings.Contains(stdout, "0 violation(s)") {
		t.Errorf("updeb compat on the repository: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{"cri-tools                1.35.0         1.36.0", "helm                     3.21.4         3.21.4"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the matrix lacks %q:\n%s", want, stdout)
		}
	}
}

// TestPlanMessageNotAnInput: plan --apply --message naming a recipe (or the
// release sets, the config) is refused, exit 2, before anything is written:
// the description, written last, replaced the recipe.
func TestPlanMessageNotAnInput(t *testing.T) {
	dir := t.TempDir()
	for _, sub := range []string{"recipes", "keys"} {
		if err := copyTree(filepath.Join("..", "..", "testdata", "demo", sub), filepath.Join(dir, sub)); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	recipe, err := os.ReadFile(filepath.Join("recipes", "pingd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "--offline", "plan", "--apply", "--message", filepath.Join("recipes", "pingd.yaml"), "--now", "2026-08-22")
	if code != exitUsage || !strings.Contains(stderr, "--message recipes/pingd.yaml: this command reads that file, and the output would replace it") {
		t.Errorf("exit %d, want 2\n%s%s", code, stdout, stderr)
	}
	if got, _ := os.ReadFile(filepath.Join("recipes", "pingd.yaml")); !bytes.Equal(got, recipe) {
		t.Errorf("the recipe was replaced:\n%s", got)
	}
}

// TestPlanBaseGoesWithMessage: --base is read only by the verify of
// --apply --message; without --message it is refused (exit 2), not ignored
// while the reader believes the changes were verified against it.
func TestPlanBaseGoesWithMessage(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"plan", "--base", "origin/main"},
		{"plan", "--apply", "--base", "origin/main"},
		{"plan", "--apply", "--dry-run", "--base", "origin/main"},
	} {
		code, _, stderr := runCLI(t, append([]string{"--offline", "--recipes", dir}, args...)...)
		if code != exitUsage || !strings.Contains(stderr, "--base goes with --apply --message") {
			t.Errorf("%v: exit %d\n%s", args, code, stderr)
		}
	}
}

// What plan --apply prints of a failure, a skipped action or a violation
// for a person reaches the terminal escaped, as the plan's text does: a
// bump that failed on the GitHub API's answer printed the server's message
// (its escape sequences: OSC 52 writes the clipboard, CSI 2J clears the
// screen) as it came; its own line breaks stay indented under the failure.
func TestPrintApplyEscapesUpstreamText(t *testing.T) {
	const hostile = "\x1b]52;c;ZWNobyBwd25lZA==\x07\x1b[2J\rok\u202e"
	bump := plan.Action{Kind: plan.ActBump, Recipe: "etcd", Version: "3.6.15"}
	res := &plan.ApplyResult{
		Failures: []plan.Failure{{Action: bump, Error: "GitHub API https://api.github.com/repos/etcd-io/etcd/releases: HTTP 500: " + hostile + "\nsecond line"}},
		Skipped:  []plan.Skipped{{Action: bump, Why: "waits for upstream: " + hostile}},
		Open:     []plan.Action{{Kind: plan.ActCompat, Reason: "release set a: " + hostile}},
	}
	var b bytes.Buffer
	if err := printApply(&b, &plan.Plan{Now: "2026-12-01"}, res); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.ContainsAny(out, "\x1b\x07\r\u202e") {
		t.Fatalf("plan --apply printed control characters:\n%q", out)
	}
	const escaped = `\x1b]52;c;ZWNobyBwd25lZA==\a\x1b[2J\rok\u202e`
	for _, want := range []string{"  FAILED bump etcd 3.6.15: GitHub API https://api.github.com/repos/etcd-io/etcd/releases: HTTP 500: " + escaped + "\n    second line\n",
		"  not done: bump etcd 3.6.15: waits for upstream: " + escaped + "\n", "  for a person: release set a: " + escaped + "\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("plan --apply's output lacks %q:\n%s", want, out)
		}
	}
}
