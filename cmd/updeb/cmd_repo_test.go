package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/repo"
	"github.com/updeb/updeb/internal/testkit/testenv"
)

// The repository's life at the command line: settings that persist, refused
// field changes (exit 1), promote, refresh, history, rollback and gc, and
// bad input (exit 2).
func TestRepoLifeCLI(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	dir := t.TempDir()
	key := generateKey(t, dir)
	repoDir := filepath.Join(dir, "repo")
	cfg := filepath.Join(dir, "updeb.yaml")
	os.WriteFile(cfg, []byte("repo:\n  dir: repo\n  key: k.secret.asc\n  origin: Example Org\n  label: Example\n  keep: 5\n"), 0o644)
	cli := func(wantCode int, args ...string) (string, string) {
		t.Helper()
		return runCLIExit(t, wantCode, args...)
	}
	release := func(suite string) string {
		data, err := os.ReadFile(filepath.Join(repoDir, "dists", suite, "Release"))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	good := buildDeb(t, dir, "kubectl", "1.31.4-1", "good")
	cli(0, "--config", cfg, "publish", "--suite", "staging", good)

	// Without the config and without --origin: the suite keeps its Origin.
	flags := []string{"--repo", repoDir, "--key", key + ".secret.asc"}
	cli(0, append(append([]string{"publish", "--suite", "staging"}, flags...), buildDeb(t, dir, "kubectl", "1.31.5-1", "newer"))...)
	if rel := release("staging"); !strings.Contains(rel, "Origin: Example Org\nLabel: Example\n") {
		t.Fatalf("publish without --origin dropped the suite's Origin:\n%s", rel)
	}
	before := release("staging")
	_, stderr := cli(exitCheck, append(append([]string{"publish", "--suite", "staging", "--origin", "Other"}, flags...), good)...)
	if !strings.Contains(stderr, `Origin "Example Org" -> "Other"`) || !strings.Contains(stderr, "--allow-field-change") || release("staging") != before {
		t.Fatalf("an Origin change: %s", stderr)
	}

	// Promote one version, then refuse other bytes for a version the target has.
	out, _ := cli(0, append([]string{"repo", "promote", "--from", "staging", "--to", "production", "kubectl=1.31.4-1"}, flags...)...)
	if !strings.Contains(out, "promoted  kubectl 1.31.4-1 amd64 -> production/main (pool/main/k/kubectl/kubectl_1.31.4-1_amd64.deb") {
		t.Fatalf("promote: %s", out)
	}
	cli(0, append(append([]string{"publish", "--suite", "production", "--component", "extra"}, flags...), buildDeb(t, dir, "kubectl", "1.31.5-1", "rebuilt"))...)
	_, stderr = cli(exitCheck, append([]string{"repo", "promote", "--from", "staging", "--to", "production/extra", "kubectl=1.31.5-1"}, flags...)...)
	if !strings.Contains(stderr, "is already published") {
		t.Fatalf("promoting other bytes: %s", stderr)
	}
	// ... and into another component of that suite: one build per version.
	_, stderr = cli(exitCheck, append([]string{"repo", "promote", "--from", "staging", "--to", "production/main", "kubectl=1.31.5-1"}, flags...)...)
	if !strings.Contains(stderr, "in suite production component extra") || !strings.Contains(stderr, "for component main") || !strings.Contains(stderr, "repository is unchanged") {
		t.Fatalf("promoting other bytes into another component: %s", stderr)
	}
	for _, bad := range [][]string{
		{"repo", "promote", "--from", "staging", "--to", "production", "nope"},
		{"repo", "promote", "--from", "nowhere", "--to", "production"},
		{"repo", "promote", "--from", "../x", "--to", "production"},
		{"repo", "promote", "--to", "production"},
		{"repo", "refresh", "nosuch"},
		{"repo", "rollback", "production", "--to", "99"},
		{"repo", "rollback", "production", "--to", "0"},
		{"repo", "history", "nosuch"},
	} {
		_, stderr := cli(exitUsage, append(bad, flags...)...)
		if !strings.Contains(stderr, "updeb: error:") {
			t.Errorf("%v: %s", bad, stderr)
		}
	}

	// An empty suite (an unset variable) is named as such, not as a
	// repository updeb does not manage.
	if _, stderr := cli(exitUsage, append([]string{"repo", "refresh", ""}, flags...)...); !strings.Contains(stderr, `suite "": want`) {
		t.Errorf("repo refresh \"\": %s", stderr)
	}

	out, _ = cli(0, append([]string{"repo", "refresh"}, flags...)...)
	if !strings.Contains(out, "refreshed suite production: generation 3") || !strings.Contains(out, "refreshed suite staging: generation 3") {
		t.Fatalf("refresh: %s", out)
	}
	out, _ = cli(0, "repo", "history", "--repo", repoDir, "production")
	// Times in UTC, as RFC 3339 says them (2006-01-02T15:04:05Z): the
	// column said "2006-01-02 15:04:05", which reads as local time.
	if !regexp.MustCompile(`(?m)^production +\d+ +\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ +live `).MatchString(out) {
		t.Errorf("history's dates:\n%s", out)
	}
	for _, want := range []string{"promote", "+kubectl=1.31.4-1 (amd64), from staging generation 2", "publish", "+kubectl=1.31.5-1 (amd64)", "live", "refresh", "@"} {
		if !strings.Contains(out, want) {
			t.Errorf("history lacks %q:\n%s", want, out)
		}
	}
	out, _ = cli(0, "--json", "repo", "history", "--repo", repoDir)
	var h struct {
		Generations []struct {
			repo.HistoryEntry
			SigningKeys []string `json:"signing_keys"`
		} `json:"generations"`
	}
	err := json.Unmarshal([]byte(out), &h)
	hist := h.Generations
	if err != nil || len(hist) != 6 || hist[0].Added[0].SHA256 == "" || !strings.Contains(hist[0].By, "@") || len(hist[0].SigningKeys) != 1 || strings.Contains(out, "signing-keys") {
		t.Fatalf("history --json: %v\n%s", err, out)
	}

	out, _ = cli(0, append([]string{"repo", "rollback", "production"}, flags...)...)
	if !strings.Contains(out, "withdrawn kubectl 1.31.5-1 amd64 (extra)") || !strings.Contains(out, "are live as generation 4") {
		t.Fatalf("rollback: %s", out)
	}
	out, _ = cli(0, "repo", "gc", "--repo", repoDir, "--dry-run")
	if !strings.Contains(out, "would remove 0 generations, 0 pool files") {
		t.Fatalf("gc --dry-run: %s", out)
	}
	cli(0, "repo", "gc", "--repo", repoDir)

	// verify: everything matches after the whole life; a changed pool file is
	// a finding (exit 1) naming it; a suite that does not exist or a keyring
	// that cannot be read is exit 2.
	out, _ = cli(0, "repo", "verify", "--repo", repoDir)
	if !strings.Contains(out, "production: generation 4, signed by ") || !strings.Contains(out, "staging: generation 3, signed by ") || strings.Count(out, "): OK\n") != 2 ||
		!strings.Contains(out, ", 1 package, 1 pool file (") || !strings.Contains(out, ", 2 packages, 2 pool files (") {
		t.Fatalf("repo verify: %s", out)
	}
	pool := filepath.Join(repoDir, "pool/main/k/kubectl/kubectl_1.31.4-1_amd64.deb")
	data, _ := os.ReadFile(pool)
	os.Chmod(pool, 0o644)
	os.WriteFile(pool, append(data, 0), 0o644)
	out, stderr = cli(exitCheck, "repo", "verify", "--repo", repoDir, "production")
	if !strings.Contains(out, "production: generation 4") || strings.Contains(out, "staging") ||
		!strings.Contains(out, "  pool/main/k/kubectl/kubectl_1.31.4-1_amd64.deb: "+fmt.Sprint(len(data)+1)+" bytes, dists/production/main/binary-amd64/Packages lists") ||
		!strings.Contains(stderr, "1 finding(s) in "+repoDir) {
		t.Fatalf("repo verify of a changed pool file: %s%s", out, stderr)
	}
	os.WriteFile(pool, data, 0o644)
	cli(exitUsage, "repo", "verify", "--repo", repoDir, "nosuch")
	cli(exitUsage, "repo", "verify", "--repo", repoDir, "--keyring", filepath.Join(dir, "none.gpg"))
	// A folder that is not the repository (no archive-keyring.gpg of its
	// own) is said to be so, not sent to look for an upstream keyring
	// ("give the path of an OpenPGP keyring, such as keys/helm.asc").
	_, stderr = cli(exitUsage, "repo", "verify", "--repo", dir)
	if want := "updeb: hint: updeb publish writes archive-keyring.gpg into the repository: is --repo (or repo: dir:) its folder?"; !strings.Contains(stderr, want) {
		t.Errorf("repo verify of a folder without a repository: %s\nwant %q", stderr, want)
	}

	// A damaged settings file is named, with what to do.
	settings := filepath.Join(repoDir, "dists/.gen/staging/3/updeb-suite.json")
	os.WriteFile(settings, []byte("{"), 0o644)
	_, stderr = cli(exitUsage, append([]string{"repo", "refresh", "staging"}, flags...)...)
	if !strings.Contains(stderr, settings) || !strings.Contains(stderr, "delete this file") {
		t.Fatalf("damaged settings: %s", stderr)
	}
}

// TestRepoOperatorsBadDay: repo remove finds the component that holds a
// package (several: refused, listed); a config value never silently
// overrides what a suite stores from an earlier flag (the stored setting
// wins, and a warning names both and the flag).
func TestRepoOperatorsBadDay(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	dir := t.TempDir()
	key := generateKey(t, dir)
	repoDir := filepath.Join(dir, "repo")
	flags := []string{"--repo", repoDir, "--key", key + ".secret.asc"}
	cli := func(wantCode int, args ...string) (string, string) {
		t.Helper()
		return runCLIExit(t, wantCode, args...)
	}
	release := func() string {
		data, _ := os.ReadFile(filepath.Join(repoDir, "dists", "stable", "Release"))
		return string(data)
	}
	cli(0, append(append([]string{"publish", "--component", "component/k8s131", "--valid-for", "72h", "--origin", "Flag Org"}, flags...), buildDeb(t, dir, "kubectl", "1.31.4-1", "a"))...)
	cli(0, append(append([]string{"publish", "--component", "main"}, flags...), buildDeb(t, dir, "helm", "3.15.4-1", "b"))...)
	cli(0, append(append([]string{"publish", "--component", "extra"}, flags...), buildDeb(t, dir, "helm", "3.15.3-1", "c"))...)

	// the config says otherwise: the suite's stored settings win, with a warning
	cfg := filepath.Join(dir, "updeb.yaml")
	os.WriteFile(cfg, []byte("repo:\n  valid-for: 24h\n  origin: Config Org\n"), 0o644)
	before := release()
	_, stderr := cli(0, append(append([]string{"--config", cfg, "publish", "--component", "main"}, flags...), buildDeb(t, dir, "helm", "3.15.5-1", "d"))...)
	for _, want := range []string{`the config's repo: valid-for: 24h0m0s is not applied: suite stable keeps its stored valid-for 72h0m0s`, "give --valid-for to change it",
		`repo: origin: "Config Org" is not applied: suite stable keeps its stored origin "Flag Org"`} {
		if !strings.Contains(stderr, want) {
			t.Errorf("no warning %q:\n%s", want, stderr)
		}
	}
	if rel := release(); !strings.Contains(rel, "Origin: Flag Org\n") || rel == before {
		t.Errorf("the stored Origin was not kept:\n%s", rel)
	}

	// remove finds the component; several are refused, listed
	out, _ := cli(0, append([]string{"--config", "/dev/null", "repo", "remove", "kubectl=1.31.4-1"}, flags...)...)
	if !strings.Contains(out, "removed kubectl 1.31.4-1 amd64 from stable/component/k8s131") {
		t.Errorf("remove without --component: %s", out)
	}
	_, stderr = cli(exitUsage, append([]string{"--config", "/dev/null", "repo", "remove", "helm"}, flags...)...)
	if !strings.Contains(stderr, "helm is published in 2 components of suite stable: extra, main; name one with --component") {
		t.Errorf("an ambiguous remove: %s", stderr)
	}
	// NAME= ("helm=$VERSION" with VERSION unset) names no version, not
	// every version; nor does promote take it
	before = release()
	for _, cmdline := range [][]string{{"repo", "remove", "helm="}, {"repo", "promote", "--from", "stable", "--to", "production", "helm="}} {
		_, stderr = cli(exitUsage, append(append([]string{"--config", "/dev/null"}, cmdline...), flags...)...)
		if !strings.Contains(stderr, `"helm=": want NAME or NAME=VERSION`) {
			t.Errorf("%s: %s", cmdline, stderr)
		}
	}
	if release() != before {
		t.Error("remove helm= removed every version of helm")
	}
	// several named: all of them or none (helm 3.15.4-1 stays)
	before = release()
	_, stderr = cli(exitUsage, append([]string{"--config", "/dev/null", "repo", "remove", "helm=3.15.4-1", "nosuch"}, flags...)...)
	if !strings.Contains(stderr, "nosuch is not published in any component of suite stable") {
		t.Errorf("remove of a package nowhere: %s", stderr)
	}
	if release() != before {
		t.Error("a remove refused for one of its packages removed the others")
	}
	// the wrong component named: where the package is, nothing changed
	before = release()
	_, stderr = cli(exitUsage, append([]string{"--config", "/dev/null", "repo", "remove", "--component", "extra", "kubectl"}, flags...)...)
	if !strings.Contains(stderr, "kubectl is not published in suite stable component extra") {
		t.Errorf("remove in the wrong component: %s", stderr)
	}
	_, stderr = cli(exitUsage, append([]string{"--config", "/dev/null", "repo", "remove", "--component", "component/k8s131", "helm=3.15.3-1"}, flags...)...)
	if !strings.Contains(stderr, "helm=3.15.3-1 is not published in suite stable component component/k8s131 (it is in component extra: give --component extra, or leave --component out)") {
		t.Errorf("remove in the wrong component: %s", stderr)
	}
	if release() != before {
		t.Error("a refused remove changed the suite")
	}
	out, _ = cli(0, append([]string{"--config", "/dev/null", "repo", "remove", "--component", "extra", "helm"}, flags...)...)
	if !strings.Contains(out, "removed helm 3.15.3-1 amd64 from stable/extra") {
		t.Errorf("remove with --component: %s", out)
	}
}

// runCLIExit runs updeb and fails the test unless it exits wantCode; it
// returns standard output and standard error.
func runCLIExit(t *testing.T, wantCode int, args ...string) (string, string) {
	t.Helper()
	code, out, stderr := runCLI(t, args...)
	if code != wantCode {
		t.Fatalf("updeb %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, wantCode, out, stderr)
	}
	return out, stderr
}

// TestRepoFolderMissing: the read-only repo commands refuse a repository
// folder that is not there (a mistyped --repo, ./repo from the wrong
// working folder), exit 2, nothing on stdout: it read as a repository
// without suites, "packages": [] and exit 0, which a script took for an
// empty repository.
func TestRepoFolderMissing(t *testing.T) {
	dir := t.TempDir()
	missing, file := filepath.Join(dir, "no-such-repo"), filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	for _, args := range [][]string{{"repo", "list"}, {"repo", "history"}, {"repo", "gc", "--dry-run"}, {"repo", "verify"}} {
		for repoDir, why := range map[string]string{missing: "no such folder", file: "not a folder"} {
			out, stderr := runCLIExit(t, exitUsage, append(args, "--repo", repoDir, "--json")...)
			if out != "" || !strings.Contains(stderr, "updeb: error: repository "+repoDir+": "+why+"\n") {
				t.Errorf("updeb %s --repo %s: stdout %q, stderr %q", strings.Join(args, " "), repoDir, out, stderr)
			}
		}
	}
}

// TestKeyRotationAsDocumented runs operations.md's key rotation step by
// step at the command line, with real apt clients: one that trusts the
// archive-keyring.gpg of before the rotation and is given the new one
// midway, one that trusts only the new key's PREFIX.gpg, one that is never
// given the new key. Each keeps working, with no warning, until the old key
// is dropped (then only the last one fails, NO_PUBKEY); and once the config
// names only the new key (the step the docs used to leave out), later
// writes no longer sign with the old one: with the config of the rotation
// left as it was, the next publish silently put the old key back.
func TestKeyRotationAsDocumented(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb", "apt-get", "gpgv")
	dir := t.TempDir()
	repoDir := filepath.Join(dir, "repo")
	cfg := filepath.Join(dir, "updeb.yaml")
	config := func(keys string) {
		t.Helper()
		if err := os.WriteFile(cfg, []byte("repo:\n  dir: repo\n  suite: bookworm-wikimedia\n  origin: Example Org\n"+keys), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	keygen := func(name, prefix string) string {
		t.Helper()
		out, _ := runCLIExit(t, 0, "--json", "keys", "generate", "--name", name, "--email", "apt@example.org", "--out", filepath.Join(dir, prefix))
		var k struct{ Fingerprint string }
		if err := json.Unmarshal([]byte(out), &k); err != nil || k.Fingerprint == "" {
			t.Fatalf("keys generate --json: %v\n%s", err, out)
		}
		return k.Fingerprint
	}
	copyFile := func(from, to string) {
		t.Helper()
		data, err := os.ReadFile(from)
		if err == nil {
			err = os.WriteFile(to, data, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	type client struct {
		name string
		apt  func(args ...string) (string, error)
	}
	newClient := func(name, keyring string) client {
		t.Helper()
		copyFile(keyring, filepath.Join(dir, name+".gpg")) // the file Puppet deploys
		return client{name, aptFor(t, repoDir, filepath.Join(dir, name+".gpg"), "bookworm-wikimedia", "main")}
	}
	works := func(version string, clients ...client) {
		t.Helper()
		for _, c := range clients {
			for _, args := range [][]string{{"update"}, {"install", "-y", "--allow-downgrades", "kubectl=" + version}} {
				if out, err := c.apt(args...); err != nil || strings.Contains(out, "W: ") || strings.Contains(out, "E: ") {
					t.Fatalf("client %s: apt-get %s: %v\n%s", c.name, strings.Join(args, " "), err, out)
				}
			}
		}
	}
	signedBy := func(want ...string) {
		t.Helper()
		out, _ := runCLIExit(t, 0, "--json", "repo", "history", "--repo", repoDir, "bookworm-wikimedia")
		var h struct {
			Generations []struct {
				SigningKeys []string `json:"signing_keys"`
			} `json:"generations"`
		}
		if err := json.Unmarshal([]byte(out), &h); err != nil || len(h.Generations) == 0 {
			t.Fatalf("history --json: %v\n%s", err, out)
		}
		slices.Sort(want)
		if got := h.Generations[len(h.Generations)-1].SigningKeys; !slices.Equal(got, want) {
			t.Fatalf("the live generation is signed by %v, want %v", got, want)
		}
	}

	oldFP := keygen("Example apt", "repo-signing")
	config("  key: repo-signing.secret.asc\n")
	runCLIExit(t, 0, "--config", cfg, "publish", buildDeb(t, dir, "kubectl", "1.36.0-1", "one"))
	before := newClient("before", filepath.Join(repoDir, "archive-keyring.gpg"))
	never := newClient("never", filepath.Join(repoDir, "archive-keyring.gpg"))
	works("1.36.0-1", before, never)

	// updeb keys generate ... --out /etc/updeb/repo-2027
	newFP := keygen("Example apt 2027", "repo-2027")
	// updeb repo refresh --key OLD --key NEW
	runCLIExit(t, 0, "--config", cfg, "repo", "refresh", "--key", filepath.Join(dir, "repo-signing.secret.asc"), "--key", filepath.Join(dir, "repo-2027.secret.asc"))
	signedBy(oldFP, newFP)
	onlyNew := newClient("only-new", filepath.Join(dir, "repo-2027.gpg"))
	works("1.36.0-1", before, never, onlyNew)
	// config: key: the old one, keys: [the new one]; the monthly publish.
	config("  key: repo-signing.secret.asc\n  keys: [repo-2027.secret.asc]\n")
	runCLIExit(t, 0, "--config", cfg, "publish", buildDeb(t, dir, "kubectl", "1.36.1-1", "two"))
	signedBy(oldFP, newFP)
	works("1.36.1-1", before, never, onlyNew)
	// Deploy archive-keyring.gpg (both keys) to the clients.
	copyFile(filepath.Join(repoDir, "archive-keyring.gpg"), filepath.Join(dir, "before.gpg"))
	works("1.36.1-1", before)
	// updeb repo refresh --key NEW --allow-field-change
	runCLIExit(t, 0, "--config", cfg, "repo", "refresh", "--key", filepath.Join(dir, "repo-2027.secret.asc"), "--allow-field-change")
	signedBy(newFP)
	works("1.36.1-1", before, onlyNew)
	// apt-get update warns and exits 0, and the client goes on with the
	// indexes it has: it never sees a new version.
	stale := func() {
		t.Helper()
		if out, err := never.apt("update"); err != nil || !strings.Contains(out, "NO_PUBKEY") || !strings.Contains(out, "previous index files will be used") {
			t.Fatalf("a client trusting only the dropped key: apt-get update: %v, want exit 0 with a NO_PUBKEY warning\n%s", err, out)
		}
	}
	stale()

	// The rotation's config left as it was: the next write signs with the
	// old key again (a client trusting only it updates again), and
	// archive-keyring.gpg holds it again.
	runCLIExit(t, 0, "--config", cfg, "publish", buildDeb(t, dir, "kubectl", "1.36.2-1", "three"))
	signedBy(oldFP, newFP)
	works("1.36.2-1", never)
	// The last step: the config names only the new key.
	config("  key: repo-2027.secret.asc\n")
	runCLIExit(t, 0, "--config", cfg, "repo", "refresh", "--allow-field-change")
	signedBy(newFP)
	runCLIExit(t, 0, "--config", cfg, "publish", buildDeb(t, dir, "kubectl", "1.36.3-1", "four"))
	signedBy(newFP)
	copyFile(filepath.Join(repoDir, "archive-keyring.gpg"), filepath.Join(dir, "fresh.gpg"))
	fresh := client{"fresh", aptFor(t, repoDir, filepath.Join(dir, "fresh.gpg"), "bookworm-wikimedia", "main")}
	works("1.36.3-1", before, onlyNew, fresh)
	stale()
	if out, err := never.apt("install", "-s", "kubectl=1.36.3-1"); err == nil || !strings.Contains(out, "'1.36.3-1' for 'kubectl' was not found") {
		t.Fatalf("a client trusting only the dropped key sees a version published after the drop: %v\n%s", err, out)
	}
}

// TestRepoFlagsNotTaken: a flag of the shared repository set that a command
// does not read is refused (exit 2, saying why), before the repository is
// opened: taken without a word, 'repo rollback --component X SUITE' rolled
// back every component of the suite, and 'repo gc --suite staging'
// collected every suite.
func TestRepoFlagsNotTaken(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "repo")
	for _, tc := range []struct {
		flag string
		args []string
	}{
		{"--suite", []string{"gc", "--suite", "staging"}},
		{"--suite", []string{"promote", "--from", "staging", "--to", "production", "--suite", "staging", "hello"}},
		{"--component", []string{"promote", "--from", "staging", "--to", "production", "--component", "main", "hello"}},
		{"--component", []string{"refresh", "--component", "main"}},
		{"--suite", []string{"rollback", "--suite", "production", "staging"}},
		{"--component", []string{"rollback", "--component", "main", "staging"}},
	} {
		out, stderr := runCLIExit(t, exitUsage, append(append([]string{"repo"}, tc.args...), "--repo", dir)...)
		if out != "" || !strings.Contains(stderr, "updeb repo "+tc.args[0]+" takes no "+tc.flag+": ") {
			t.Errorf("repo %s: stdout %q, stderr %q", strings.Join(tc.args, " "), out, stderr)
		}
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the repository folder was made: %v", err)
	}
}

// TestRepoSuiteFlagAndArgument: repo history and repo verify take the suite
// as their argument or as --suite; both, naming two suites, are refused
// (exit 2): 'repo history --suite production staging' showed staging, and
// 'repo verify --suite production staging' checked staging only, exit 0.
func TestRepoSuiteFlagAndArgument(t *testing.T) {
	dir := t.TempDir()
	for _, cmd := range []string{"history", "verify"} {
		out, stderr := runCLIExit(t, exitUsage, "repo", cmd, "--repo", dir, "--suite", "production", "staging")
		if out != "" || !strings.Contains(stderr, "--suite production and the argument staging name two suites") {
			t.Errorf("repo %s: stdout %q, stderr %q", cmd, out, stderr)
		}
	}
}
