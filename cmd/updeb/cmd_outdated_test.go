package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// toolProject is a recipe "tool" (1.0.0, pins that match nothing) whose
// watch asks a fake GitHub API that knows 1.0.0 and 1.1.0, and a release
// server for both; it returns the flags that point updeb at them, and a
// switch that makes the API answer "rate limit exceeded".
func toolProject(t *testing.T) (common []string, limited *bool) {
	limited = new(bool)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/api/repos/demo/tool/releases" && *limited:
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
	return []string{"--recipes", filepath.Join(dir, "recipes"), "--cache", filepath.Join(dir, "cache"), "--config", filepath.Join(dir, "none.yaml"), "--github-api", srv.URL + "/api"}, limited
}

// TestOutdatedAndBumpCommands: exit codes, --json, --exit-code and the
// GitHub rate-limit hint, against a fake GitHub API and release server.
func TestOutdatedAndBumpCommands(t *testing.T) {
	common, limited := toolProject(t)
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
		{[]string{"bump", "tool", "--to", "1.0.0"}, false, 1, "", "upstream re-uploaded an artifact"},
		{[]string{"bump", "tool", "--to", "0.9.0"}, false, 2, "", "bump only moves forward"},
		{[]string{"bump", "tool", "--to", "1.1.0", "--date", "Feb 1"}, false, 2, "", `--date "Feb 1"`},
		{[]string{"bump"}, false, 2, "", "accepts 1 arg(s)"},
	} {
		*limited = tc.limited
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), append(tc.args, common...), &stdout, &stderr)
		if code != tc.code || !strings.Contains(stdout.String(), tc.stdout) || !strings.Contains(stderr.String(), tc.stderr) {
			t.Errorf("updeb %v: exit %d, want %d\nstdout (want %q):\n%s\nstderr (want %q):\n%s", tc.args, code, tc.code, tc.stdout, stdout.String(), tc.stderr, stderr.String())
		}
	}
}
