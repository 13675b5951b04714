package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/squid"
	"github.com/updeb/updeb/internal/testenv"
	"github.com/updeb/updeb/pkg/verify/sigstore/sigstoretest"
)

// The signers the fixture recipes name.
const (
	k8sIdentity    = "krel-staging@k8s-releng-prod.iam.gserviceaccount.com"
	googleIssuer   = "https://accounts.google.com"
	actionsIssuer  = "https://token.actions.githubusercontent.com"
	toolWorkflow   = "https://github.com/demo/tool/.github/workflows/release.yml@refs/tags/v1.0.0"
	toolWorkflowRE = `^https://github\.com/demo/tool/\.github/workflows/release\.yml@refs/tags/v.*$`
)

// sigFix is a project whose recipes name each Sigstore form, their artifact
// in a file mirror, a virtual Sigstore whose trusted root the config names,
// and a fake Rekor and GitHub API on 127.0.0.1, asked through squid.
type sigFix struct {
	t        *testing.T
	dir      string
	mirror   string // releases.example.org in the mirror
	vs       *sigstoretest.Sigstore
	rekor    *sigstoretest.Rekor
	gh       *sigstoretest.GitHub
	rekorURL string
	ghURL    string
	sq       *squid.Squid
	artifact []byte
}

const toolURL = "https://releases.example.org/tool/v1.0.0/tool-amd64"

const toolRecipe = `# Trust: test fixture, signed by a virtual Sigstore.
name: NAME
version: 1.0.0
release-date: 2026-01-02
license: Apache-2.0
copyright: updeb tests
architectures: [amd64]
sources:
  - name: tool
    url: https://releases.example.org/tool/v{{.Version}}/tool-{{.Arch}}
    sha256: {amd64: SHA}
    signature: SIG
packages:
  - name: NAME
    summary: test tool
    description: A test tool.
    section: utils
    files:
      - {source: tool, dest: /usr/bin/NAME}
`

func newSigFix(t *testing.T) *sigFix {
	t.Helper()
	testenv.RequireTool(t, "squid")
	sq, err := squid.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sq.Stop)
	vs, err := sigstoretest.New()
	if err != nil {
		t.Fatal(err)
	}
	f := &sigFix{t: t, dir: t.TempDir(), vs: vs, rekor: sigstoretest.NewRekor(), gh: sigstoretest.NewGitHub(), sq: sq,
		artifact: []byte("#!/bin/sh\necho tool 1.0.0\n")}
	f.mirror = filepath.Join(f.dir, "mirror", "releases.example.org")
	rekor := httptest.NewServer(f.rekor)
	t.Cleanup(rekor.Close)
	gh := httptest.NewServer(f.gh)
	t.Cleanup(gh.Close)
	f.rekorURL, f.ghURL = rekor.URL, gh.URL
	f.write("mirror/releases.example.org/tool/v1.0.0/tool-amd64", f.artifact)
	f.write("root.json", vs.TrustedRoot())
	sum := sha256.Sum256(f.artifact)
	for name, sig := range map[string]string{
		"cosign-tool": "{sig-url: \"https://releases.example.org/tool/v{{.Version}}/tool-{{.Arch}}.sig\", cert-url: \"https://releases.example.org/tool/v{{.Version}}/tool-{{.Arch}}.cert\", identity: " + k8sIdentity + ", issuer: " + googleIssuer + "}",
		"bundle-tool": "{bundle-url: \"https://releases.example.org/tool/v{{.Version}}/tool-{{.Arch}}.sigstore.json\", identity: \"https://github.com/demo/tool/.github/workflows/release.yml@refs/tags/v{{.Version}}\", issuer: " + actionsIssuer + "}",
		"attest-tool": "{github-attestations: demo/tool, identity-regexp: '" + toolWorkflowRE + "', issuer: " + actionsIssuer + "}",
	} {
		f.write("recipes/"+name+".yaml", []byte(strings.NewReplacer("NAME", name, "SHA", hex.EncodeToString(sum[:]), "SIG", sig).Replace(toolRecipe)))
	}
	f.config("root.json")
	return f
}

// config writes updeb.yaml naming trustedRoot ("" for none).
func (f *sigFix) config(trustedRoot string) {
	cfg := fmt.Sprintf(`proxy: %s
no-proxy: []
mirrors:
  - {prefix: https://releases.example.org/, to: mirror/releases.example.org/}
  - {prefix: https://rekor.sigstore.dev/, to: %s/}
fetch: {retries: 1, retry-time: 5s}
build: {maintainer: t <t@example.org>}
sigstore: {github-api: %s`, f.sq.URL, f.rekorURL, f.ghURL)
	if trustedRoot != "" {
		cfg += ", trusted-root: " + trustedRoot
	}
	f.write("updeb.yaml", []byte(cfg+"}\n"))
}

func (f *sigFix) write(rel string, b []byte) {
	f.t.Helper()
	p := filepath.Join(f.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// run runs updeb on the project with a fresh cache (fetched signatures are
// cached by URL: a changed one must be fetched again) and output folder.
func (f *sigFix) run(args ...string) (int, string, string) {
	f.t.Helper()
	base := []string{"--config", filepath.Join(f.dir, "updeb.yaml"), "--recipes", filepath.Join(f.dir, "recipes"),
		"--cache", f.t.TempDir(), "--out", f.t.TempDir(), "--state", filepath.Join(f.dir, "state"), "-q"}
	return runCLI(f.t, append(base, args...)...)
}

// cosign signs data as identity under issuer with vs, publishes the .sig
// and .cert in the mirror, and the log entry on Rekor when publish is set.
func (f *sigFix) cosign(vs *sigstoretest.Sigstore, identity, issuer string, data []byte, at time.Time, publish bool) *sigstoretest.Signature {
	f.t.Helper()
	sig, err := vs.SignAt(identity, issuer, data, at)
	if err != nil {
		f.t.Fatal(err)
	}
	f.write("mirror/releases.example.org/tool/v1.0.0/tool-amd64.sig", sig.Sig)
	f.write("mirror/releases.example.org/tool/v1.0.0/tool-amd64.cert", sig.Cert)
	if publish {
		f.rekor.Publish(sig.Entry.UUID(), f.answer(vs, sig.Entry))
	}
	return sig
}

func (f *sigFix) answer(vs *sigstoretest.Sigstore, e *sigstoretest.Entry) []byte {
	f.t.Helper()
	b, err := vs.Answer(e)
	if err != nil {
		f.t.Fatal(err)
	}
	return b
}

func (f *sigFix) bundle(identity, issuer string, data []byte) {
	f.t.Helper()
	b, err := f.vs.Bundle(identity, issuer, data)
	if err != nil {
		f.t.Fatal(err)
	}
	f.write("mirror/releases.example.org/tool/v1.0.0/tool-amd64.sigstore.json", b)
}

func (f *sigFix) attest(identity, issuer string, data []byte) {
	f.t.Helper()
	sum := sha256.Sum256(data)
	b, err := f.vs.Attestation(identity, issuer, sigstoretest.Subject{Name: "tool-amd64", Digest: map[string]string{"sha256": hex.EncodeToString(sum[:])}})
	if err != nil {
		f.t.Fatal(err)
	}
	art := sha256.Sum256(f.artifact)
	f.gh.Add("demo/tool", hex.EncodeToString(art[:]), b)
}

func soon() time.Time { return time.Now().Add(5 * time.Minute) }

// Each Sigstore form verifies through build and verify, Rekor and GitHub
// asked through squid, and the evidence names identity, issuer and log index.
func TestSigstoreBuildAndVerify(t *testing.T) {
	f := newSigFix(t)
	sig := f.cosign(f.vs, k8sIdentity, googleIssuer, f.artifact, soon(), true)
	f.bundle(toolWorkflow, actionsIssuer, f.artifact)
	f.attest(toolWorkflow, actionsIssuer, f.artifact)
	code, stdout, stderr := f.run("build")
	if code != 0 || strings.Count(stdout, " built ") != 3 {
		t.Fatalf("build: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = f.run("verify", "cosign-tool", "bundle-tool", "attest-tool")
	if code != 0 {
		t.Fatalf("verify: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{
		fmt.Sprintf("  PASS   signature    Sigstore signature verified: tool (amd64: %s issuer=%s rekor=%d)\n", k8sIdentity, googleIssuer, sig.Entry.LogIndex),
		"  PASS   signature    Sigstore signature verified: tool (amd64: " + toolWorkflow + " issuer=" + actionsIssuer + " rekor=",
	} {
		if strings.Count(stdout, want) == 0 {
			t.Errorf("verify output lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "SKIP   signature") {
		t.Errorf("a signature check was skipped:\n%s", stdout)
	}
	log := f.sq.Log()
	for _, want := range []string{"GET " + f.rekorURL + sig.Entry.Path(), "GET " + f.ghURL + "/repos/demo/tool/attestations/sha256:"} {
		if !strings.Contains(log, want) {
			t.Errorf("squid's access log lacks %q:\n%s", want, log)
		}
	}
	// The Rekor entry is cached like any download: an offline build verifies.
	cache := t.TempDir()
	base := []string{"--config", filepath.Join(f.dir, "updeb.yaml"), "--recipes", filepath.Join(f.dir, "recipes"), "--cache", cache, "-q"}
	if code, _, stderr := runCLI(t, append(base, "fetch", "cosign-tool")...); code != 0 {
		t.Fatalf("fetch: %s", stderr)
	}
	if code, _, stderr := runCLI(t, append(base, "--offline", "--out", t.TempDir(), "build", "cosign-tool")...); code != 0 {
		t.Errorf("offline build after fetch: exit %d: %s", code, stderr)
	}
}

// Every refusal through the CLI: exit 1, a reason naming the URL of the
// material, and a hint; a Rekor that cannot be asked is exit 3.
func TestSigstoreRefusalsCLI(t *testing.T) {
	f := newSigFix(t)
	other, err := sigstoretest.New() // a Sigstore the trusted root does not list
	if err != nil {
		t.Fatal(err)
	}
	const sigURL, certURL = toolURL + ".sig", toolURL + ".cert"
	entryOf := func(s *sigstoretest.Signature) string { return "https://rekor.sigstore.dev" + s.Entry.Path() }
	cases := []struct {
		name   string
		recipe string
		setup  func() string // returns a URL the message must name
		code   int
		want   []string
	}{
		{"wrong identity", "cosign-tool", func() string {
			f.cosign(f.vs, "attacker@example.com", googleIssuer, f.artifact, soon(), true)
			return certURL
		}, 1, []string{`certificate identity "attacker@example.com", want "` + k8sIdentity + `"`, "hint: the signer is not the one the recipe names"}},
		{"wrong issuer", "cosign-tool", func() string {
			f.cosign(f.vs, k8sIdentity, "https://issuer.example.com", f.artifact, soon(), true)
			return certURL
		}, 1, []string{`certificate issued for OIDC issuer "https://issuer.example.com", want "` + googleIssuer + `"`}},
		{"signed and logged by another Sigstore", "cosign-tool", func() string {
			return entryOf(f.cosign(other, k8sIdentity, googleIssuer, f.artifact, soon(), true))
		}, 1, []string{"sigstore verification refused for " + sigURL, "root.json does not list"}},
		{"time outside the certificate's validity", "cosign-tool", func() string {
			return entryOf(f.cosign(f.vs, k8sIdentity, googleIssuer, f.artifact, time.Now().Add(40*time.Minute), true))
		}, 1, []string{"outside the certificate's validity", "hint: the transparency log does not vouch"}},
		{"missing log entry", "cosign-tool", func() string {
			return entryOf(f.cosign(f.vs, k8sIdentity, googleIssuer, f.artifact, soon(), false))
		}, 1, []string{"Rekor has no entry for this signature", "HTTP 404"}},
		{"tampered log entry", "cosign-tool", func() string {
			s := f.cosign(f.vs, k8sIdentity, googleIssuer, f.artifact, soon(), false)
			e := *s.Entry
			e.SET = append([]byte(nil), e.SET...)
			e.SET[len(e.SET)-1] ^= 1
			f.rekor.Publish(e.UUID(), f.answer(f.vs, &e))
			return entryOf(s)
		}, 1, []string{"signed entry timestamp", "altered"}},
		{"signature over other bytes", "cosign-tool", func() string {
			f.cosign(f.vs, k8sIdentity, googleIssuer, []byte("other bytes"), soon(), true)
			return sigURL
		}, 1, []string{"the signature does not verify over the artifact's sha256", "hint: the artifact is not what was signed"}},
		{"malformed signature file", "cosign-tool", func() string {
			f.cosign(f.vs, k8sIdentity, googleIssuer, f.artifact, soon(), true)
			f.write("mirror/releases.example.org/tool/v1.0.0/tool-amd64.sig", []byte("<html>not found</html>\n"))
			return sigURL
		}, 1, []string{"not base64"}},
		{"huge Rekor answer", "cosign-tool", func() string {
			s := f.cosign(f.vs, k8sIdentity, googleIssuer, f.artifact, soon(), false)
			f.rekor.Publish(s.Entry.UUID(), []byte(`{"x":"`+strings.Repeat("a", 2<<20)+`"}`))
			return entryOf(s)
		}, 1, []string{"larger than"}},
		{"bundle for another artifact", "bundle-tool", func() string {
			f.bundle(toolWorkflow, actionsIssuer, []byte("another artifact"))
			return toolURL + ".sigstore.json"
		}, 1, []string{"the artifact was altered, or the bundle belongs to another artifact"}},
		{"truncated bundle", "bundle-tool", func() string {
			b, _ := f.vs.Bundle(toolWorkflow, actionsIssuer, f.artifact)
			f.write("mirror/releases.example.org/tool/v1.0.0/tool-amd64.sigstore.json", b[:len(b)/2])
			return toolURL + ".sigstore.json"
		}, 1, []string{"not a valid Sigstore bundle"}},
		{"no attestation", "attest-tool", func() string {
			return f.ghURL + "/repos/demo/tool/attestations"
		}, 1, []string{"GitHub holds no attestation of demo/tool", "hint: GitHub holds no attestation"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f.rekor = sigstoretest.NewRekor()
			rekor := httptest.NewServer(f.rekor)
			defer rekor.Close()
			f.rekorURL = rekor.URL
			f.config("root.json")
			url := c.setup()
			code, stdout, stderr := f.run("build", c.recipe)
			if code != c.code || !strings.Contains(stderr, url) {
				t.Fatalf("exit %d (want %d), stderr naming %s:\n%s%s", code, c.code, url, stdout, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}

	// Rekor down: nothing was decided (exit 3).
	f.cosign(f.vs, k8sIdentity, googleIssuer, f.artifact, soon(), true)
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "busy", http.StatusServiceUnavailable) }))
	defer down.Close()
	f.rekorURL = down.URL
	f.config("root.json")
	code, _, stderr := f.run("build", "cosign-tool")
	if code != exitNetwork || !strings.Contains(stderr, "503") || !strings.Contains(stderr, "rekor.sigstore.dev/api/v1/log/entries/") {
		t.Errorf("Rekor down: exit %d: %s", code, stderr)
	}

	// A trusted root without the CA that issued the certificate.
	var a, b map[string]json.RawMessage
	json.Unmarshal(f.vs.TrustedRoot(), &a)
	json.Unmarshal(other.TrustedRoot(), &b)
	a["certificateAuthorities"] = b["certificateAuthorities"]
	mixed, _ := json.Marshal(a)
	f.write("mixed-root.json", mixed)
	rk := httptest.NewServer(f.rekor)
	defer rk.Close()
	f.rekorURL = rk.URL
	f.config("mixed-root.json")
	code, _, stderr = f.run("build", "cosign-tool")
	if code != exitCheck || !strings.Contains(stderr, "does not chain to a certificate authority") || !strings.Contains(stderr, "hint: the certificate does not chain to the trusted root in use") {
		t.Errorf("untrusted Fulcio: exit %d: %s", code, stderr)
	}

	// A config naming a trusted root that is none: exit 2.
	f.write("garbage-root.json", []byte("{\"mediaType\": 3"))
	f.config("garbage-root.json")
	code, _, stderr = f.run("build", "cosign-tool")
	if code != exitUsage || !strings.Contains(stderr, "garbage-root.json") {
		t.Errorf("bad trusted root: exit %d: %s", code, stderr)
	}
}
