package main

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// warnsThroughLogger runs a command (run prepends the global flags it is
// given) three ways and checks that its warning want is a record of the one
// logger each time: a "warning: " line on stderr as it is, nothing under -q,
// and one JSON object of level WARN under --log-format json, where every line
// of stderr is a JSON object. The exit code must not change.
func warnsThroughLogger(t *testing.T, run func(global ...string) (int, string, string), want string) {
	t.Helper()
	code, _, stderr := run()
	line := false
	for _, l := range strings.Split(stderr, "\n") {
		line = line || strings.Contains(l, "warning: ") && strings.Contains(l, want)
	}
	if !line || strings.Contains(stderr, "updeb: warning:") {
		t.Errorf("as it is: exit %d, want a logger's \"warning: %s\" line:\n%s", code, want, stderr)
	}
	if c, _, stderr := run("-q"); c != code || strings.Contains(stderr, want) {
		t.Errorf("-q: exit %d (want %d), and the warning is not kept:\n%s", c, code, stderr)
	}
	c, _, stderr := run("--log-format", "json")
	if c != code {
		t.Errorf("--log-format json: exit %d, want %d", c, code)
	}
	found := false
	for _, line := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
		var rec struct{ Level, Msg string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("--log-format json: a line that is not JSON: %q", line)
			continue
		}
		found = found || rec.Level == "WARN" && strings.Contains(rec.Msg, want)
	}
	if !found {
		t.Errorf("--log-format json: no WARN record with %q:\n%s", want, stderr)
	}
}

// Every warning a command prints goes through the logger. (The bump and
// trust refresh warnings are checked the same way where their tests set them
// up: TestBumpVouchingCLI, TestTrustRefreshCLI.)
func TestWarningsThroughTheLogger(t *testing.T) {
	t.Run("verify-signature: another signature does not count", func(t *testing.T) {
		dir := filepath.Join("..", "..", "testdata", "hostile", "sig")
		var both []byte
		for _, f := range []string{"plain.sig", "crit-notation.sig"} {
			b, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			both = append(both, b...)
		}
		sig := filepath.Join(t.TempDir(), "two.sig")
		os.WriteFile(sig, both, 0o644)
		warnsThroughLogger(t, func(global ...string) (int, string, string) {
			return runCLI(t, append(global, "verify-signature", "--keyring", filepath.Join(dir, "a.gpg"), sig, filepath.Join(dir, "data.txt"))...)
		}, "another signature does not count")
	})

	t.Run("verify-provenance: another signature does not count", func(t *testing.T) {
		deb, key := provenanceProject(t, "ed25519")
		// The record's signature, then a copy of it with one byte changed.
		record := rewriteEnvelope(t, deb+".intoto.json", func(env map[string]any) {
			s := env["signatures"].([]any)[0].(map[string]any)
			good, _ := base64.StdEncoding.DecodeString(s["sig"].(string))
			bad, _ := base64.StdEncoding.DecodeString(flipBase64(s["sig"].(string), func(b []byte) int { return len(b) - 1 }))
			s["sig"] = base64.StdEncoding.EncodeToString(append(good, bad...))
		})
		warnsThroughLogger(t, func(global ...string) (int, string, string) {
			return runCLI(t, append(global, "verify-provenance", "--key", key+".asc", "--provenance", record, deb)...)
		}, "another signature does not count")
	})

	t.Run("support data: an unusable refreshed copy, and an old one", func(t *testing.T) {
		state := t.TempDir()
		if err := os.MkdirAll(filepath.Join(state, "support"), 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(state, "support", "eol.yaml"), []byte("not: [the support data\n"), 0o644)
		run := func(global ...string) (int, string, string) {
			return runCLI(t, append(global, "--config", "/dev/null", "--state", state, "plan", "--offline", "--now", "2026-11-24", "--recipes", filepath.Join("..", "..", "recipes"))...)
		}
		warnsThroughLogger(t, run, "the refreshed support data cannot be used")
		warnsThroughLogger(t, run, "the support data is older than 30 days")
		// The note of which copy is in use: a line of its own, an info
		// record with --log-format json, nothing with -q.
		if _, _, stderr := run(); !strings.Contains(stderr, "updeb: support data: bundled copy") {
			t.Errorf("no note of the copy in use:\n%s", stderr)
		}
		if _, _, stderr := run("-q"); strings.Contains(stderr, "support data: bundled") {
			t.Errorf("-q: the note is kept:\n%s", stderr)
		}
		if _, _, stderr := run("--log-format", "json"); !strings.Contains(stderr, `"level":"INFO","msg":"support data: bundled copy`) {
			t.Errorf("--log-format json: the note is not an info record:\n%s", stderr)
		}
	})

	t.Run("keys list: a recipe left out", func(t *testing.T) {
		recipes := t.TempDir()
		os.WriteFile(filepath.Join(recipes, "broken.yaml"), []byte("name: [\n"), 0o644)
		warnsThroughLogger(t, func(global ...string) (int, string, string) {
			return runCLI(t, append(global, "--recipes", recipes, "keys", "list")...)
		}, "broken.yaml left out: it does not load")
	})
}
