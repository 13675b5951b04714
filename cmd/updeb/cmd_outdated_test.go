package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/fetch"
)

// toolProject is a recipe "tool" (1.0.0, pins that match nothing) whose
// watch asks a fake GitHub API that knows 1.0.0 and 1.1.0, and a release
// server for both; it returns the flags that point updeb at them, and the
// API's switches and count.
func toolProject(t *testing.T) (common []string, api *fakeAPI) {
	api = &fakeAPI{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/") {
			api.hits.Add(1)
		}
		switch {
		case strings.HasPrefix(r.URL.Path, "/api/") && api.down:
			http.Error(w, "upstream unreachable", http.StatusServiceUnavailable)
		case strings.HasPrefix(r.URL.Path, "/api/") && api.hostile:
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"message":"Not Found\u001b]52;c;cm0gLXJmIH4K\u0007\u001b[2J\r\u202eevil"}`)
		case r.URL.Path == "/api/repos/demo/tool/releases" && api.limited:
			w.Header().Set("X-RateLimit-Remaining", "0")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"message":"API rate limit exceeded"}`)
		case r.URL.Path == "/api/repos/demo/tool/releases" && r.URL.Query().Get("page") == "1":
			fmt.Fprint(w, `[{"tag_name":"v1.1.0","published_at":"2026-02-01T00:00:00Z"},{"tag_name":"v1.0.0","published_at":"2026-01-01T00:00:00Z"}]`)
		case r.URL.Path == "/api/repos/demo/tool/releases":
			fmt.Fprint(w, `[]`)
		case strings.HasPrefix(r.URL.Path, "/v1.1.0/tool."), strings.HasPrefix(r.URL.Path, "/v1.0.0/tool."):
			fmt.Fprint(w, "tool")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "recipes"), 0o755)
	recipe := fmt.Sprintf(`name: tool
version: 1.0.0
release-date: 2026-01-01
license: Apache-2.0
copyright: test
maintainer: Test <test@example.org>
architectures: [amd64, arm64]
sources:
  - name: tool
    url: %s/v{{.Version}}/tool.{{.Arch}}
    sha256: 0000000000000000000000000000000000000000000000000000000000000000
    signature: {none: "test fixture"}
packages:
  - name: tool
    summary: a test tool
    description: test
    section: utils
    files: [{source: tool, dest: /usr/bin/tool}]
watch: {github: demo/tool, tag-prefix: v}
`, srv.URL)
	os.WriteFile(filepath.Join(dir, "recipes", "tool.yaml"), []byte(recipe), 0o644)
	os.WriteFile(filepath.Join(dir, "none.yaml"), []byte("fetch: {retries: 0}\n"), 0o644)
	return []string{"--recipes", filepath.Join(dir, "recipes"), "--cache", filepath.Join(dir, "cache"), "--config", filepath.Join(dir, "none.yaml"), "--github-api", srv.URL + "/api"}, api
}

// fakeAPI switches toolProject's GitHub API: rate limited, down (503, as
// a proxy answers for a host it cannot reach) or hostile; hits counts its
// requests.
type fakeAPI struct {
	limited, down bool
	hostile       bool // answers with escape sequences in its message
	hits          atomic.Int32
}

// TestOutdatedAndBumpCommands: exit codes, --json, --exit-code and the
// GitHub rate-limit hint, against a fake GitHub API and release server.
func TestOutdatedAndBumpCommands(t *testing.T) {
	common, api := toolProject(t)
	for _, tc := range []struct {
		args    []string
		limited bool
		code    int
		stdout  string
		stderr  string
	}{
		{[]string{"outdated"}, false, 0, "tool    1.0.0    -      1.1.0            1.1.0   unknown  outdated", ""},
		{[]string{"outdated", "--json"}, false, 0, `"newest_in_track": {
        "version": "1.1.0"`, ""},
		{[]string{"outdated", "--exit-code"}, false, 1, "outdated", "1 recipe(s) outdated or out of support: tool"},
		{[]string{"outdated"}, true, 3, "", "hint: set GITHUB_TOKEN"},
		// --json names the recipes it could not check, not only stderr.
		{[]string{"outdated", "--json"}, true, 3, `"failed": [
    {
      "recipe": "tool",`, "hint: set GITHUB_TOKEN"},
		{[]string{"bump", "tool", "--to", "1.0.0"}, false, 1, "", "upstream re-uploaded an artifact"},
		// The tag, as outdated reads it: the watch's tag-prefix v stripped.
		{[]string{"bump", "tool", "--to", "v1.0.0"}, false, 1, "", "upstream re-uploaded an artifact"},
		// Debian orders 1.0.00 equal to 1.0.0, but its URLs name other files.
		{[]string{"bump", "tool", "--to", "1.0.00"}, false, 2, "", "--to 1.0.00 is the version tool is at (1.0.0), written otherwise"},
		{[]string{"bump", "tool", "--to", "0.9.0"}, false, 2, "", "bump only moves forward"},
		{[]string{"bump", "tool", "--to", "1.1.0", "--date", "Feb 1"}, false, 2, "", `--date "Feb 1"`},
		{[]string{"bump"}, false, 2, "", "accepts 1 arg(s)"},
	} {
		api.limited = tc.limited
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), append(tc.args, common...), &stdout, &stderr)
		if code != tc.code || !strings.Contains(stdout.String(), tc.stdout) || !strings.Contains(stderr.String(), tc.stderr) {
			t.Errorf("updeb %v: exit %d, want %d\nstdout (want %q):\n%s\nstderr (want %q):\n%s", tc.args, code, tc.code, tc.stdout, stdout.String(), tc.stderr, stderr.String())
		}
	}
}

// TestServerTextIsEscaped: what a server says reaches the terminal as text,
// never as the escape sequences it holds (OSC 52 writes the clipboard, CSI 2J
// clears the screen, a carriage return or a bidi override makes a line read
// otherwise than its bytes).
func TestServerTextIsEscaped(t *testing.T) {
	common, api := toolProject(t)
	api.hostile = true
	code, stdout, stderr := runCLI(t, append([]string{"outdated"}, common...)...)
	if code == 0 || !strings.Contains(stderr, `Not Found\x1b]52;c;cm0gLXJmIH4K\a\x1b[2J\r\u202eevil`) {
		t.Fatalf("exit %d, want a failure quoting the message escaped\nstdout:\n%s\nstderr:\n%q", code, stdout, stderr)
	}
	if strings.ContainsAny(stdout+stderr, "\x1b\a\r\u202e") {
		t.Errorf("a control character reached the output:\nstdout: %q\nstderr: %q", stdout, stderr)
	}
}

// TestBumpDayFailsFast: bump --to V without --date asks the release source
// for V's day once, without the retries of a download: an API that does not
// answer fails the bump in a second, and the hint names --date.
func TestBumpDayFailsFast(t *testing.T) {
	common, api := toolProject(t)
	cfg := filepath.Join(t.TempDir(), "retries.yaml")
	os.WriteFile(cfg, []byte("fetch: {retries: 5}\n"), 0o644)
	api.down = true
	start := time.Now()
	code, _, stderr := runCLI(t, append(append([]string{"bump", "tool", "--to", "1.1.0"}, common...), "--config", cfg)...)
	if code != exitNetwork || !strings.Contains(stderr, "tool 1.1.0: the release day comes from the release source, which did not answer") ||
		!strings.Contains(stderr, "hint: give the release day with --date YYYY-MM-DD") {
		t.Fatalf("bump --to without --date, API down: exit %d: %s", code, stderr)
	}
	if n := api.hits.Load(); n != 1 {
		t.Errorf("the API was asked %d times, want once", n)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s", d)
	}
	// With the API up, the day is its published_at; --to may be the tag.
	api.down = false
	code, stdout, stderr := runCLI(t, append(append([]string{"bump", "tool", "--to", "v1.1.0", "--trust-on-first-use"}, common...), "--config", cfg)...)
	if code != 0 || !strings.Contains(stdout, "tool: 1.0.0 -> 1.1.0 (release-date 2026-02-01)") {
		t.Fatalf("bump --to without --date: exit %d: %s%s", code, stdout, stderr)
	}
}

// TestGitHubTokenNotOverPlainHTTP: GITHUB_TOKEN goes to an https API, and to
// one on this machine over http (test servers), never over plain http to
// another host, where the path and the proxy would read it: nor to this
// machine through a proxy on another (HTTPS_PROXY without
// NO_PROXY=localhost), which reads the request as it forwards it.
func TestGitHubTokenNotOverPlainHTTP(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", "ghp_s3cret")
	fetcher := func(proxy string, noProxy ...string) *fetch.Fetcher {
		o := fetch.Options{NoProxy: noProxy}
		if proxy != "" {
			o.Proxy, _ = url.Parse(proxy)
		}
		f, err := fetch.New(t.TempDir(), o)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	direct := fetcher("")
	for api, want := range map[string]string{
		"https://api.github.com":          "ghp_s3cret",
		"HTTPS://ghe.example.org/api/v3":  "ghp_s3cret",
		"http://127.0.0.1:8080":           "ghp_s3cret",
		"http://[::1]:8080/api":           "ghp_s3cret",
		"http://localhost:8080":           "ghp_s3cret",
		"http://api.github.com":           "",
		"http://ghe.example.org/api/v3":   "",
		"http://127.0.0.1.attacker.org/x": "",
		"http://10.0.0.5/api":             "",
		"::not a url":                     "",
	} {
		if got := githubToken(api, direct); got != want {
			t.Errorf("githubToken(%q) = %q, want %q", api, got, want)
		}
	}
	for _, c := range []struct {
		proxy   string
		noProxy []string
		api     string
		want    string
	}{
		{"http://proxy.corp.example:3128", nil, "http://127.0.0.1:8080", ""},
		{"https://proxy.corp.example:3128", nil, "http://localhost:8080", ""},
		{"http://proxy.corp.example:3128", nil, "https://api.github.com", "ghp_s3cret"},
		{"http://proxy.corp.example:3128", []string{"localhost", "127.0.0.1"}, "http://127.0.0.1:8080", "ghp_s3cret"},
		{"http://127.0.0.1:3128", nil, "http://127.0.0.1:8080", "ghp_s3cret"},
	} {
		if got := githubToken(c.api, fetcher(c.proxy, c.noProxy...)); got != c.want {
			t.Errorf("through proxy %s (no-proxy %q): githubToken(%q) = %q, want %q", c.proxy, c.noProxy, c.api, got, c.want)
		}
	}
	// A token read from a file keeps its line break: no header may hold
	// one, and every request would fail as a network error.
	t.Setenv("GITHUB_TOKEN", " ghp_s3cret\r\n")
	if got := githubToken("https://api.github.com", direct); got != "ghp_s3cret" {
		t.Errorf("GITHUB_TOKEN with a line break: %q", got)
	}
	t.Setenv("GITHUB_TOKEN", "")
	if got := githubToken("https://api.github.com", direct); got != "" {
		t.Errorf("no GITHUB_TOKEN: %q", got)
	}
}

// TestOneListingPerRepository: recipes that watch one repository
// (kubernetes-1.35, kubernetes-1.36, kubeadm: kubernetes/kubernetes) share
// one listing of it in a run, not one each: unauthenticated, GitHub allows
// 60 requests an hour, and Kubernetes' listing is ten pages.
func TestOneListingPerRepository(t *testing.T) {
	common, api := toolProject(t)
	dir := common[1] // --recipes
	text, err := os.ReadFile(filepath.Join(dir, "tool.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"tool2", "tool3"} {
		other := strings.NewReplacer("\nname: tool\n", "\nname: "+name+"\n", "name: tool\n    summary", "name: "+name+"\n    summary").Replace("\n" + string(text))
		os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(other), 0o644)
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), append([]string{"outdated"}, common...), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	if n := strings.Count(stdout.String(), "outdated\n"); n != 3 {
		t.Errorf("%d recipe(s) outdated, want 3:\n%s", n, stdout.String())
	}
	if n := api.hits.Load(); n != 1 {
		t.Errorf("%d requests to the GitHub API for three recipes of one repository, want 1", n)
	}
}
