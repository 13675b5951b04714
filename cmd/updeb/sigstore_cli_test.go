package main

import (
	"bytes"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/pipeline"
	"github.com/updeb/updeb/internal/testkit/squid"
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
	sq := squid.ForTest(t)
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
		}, 1, []string{`certificate identity "attacker@example.com", want "` + k8sIdentity + `"`, "hint: the signer is not the one named (the recipe's identity/issuer"}},
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

// A reusable workflow's signature verified under --sigstore-source-repository
// is reported with the repository whose run signed, in text and --json: the
// workflow alone signs for every repository that calls it.
func TestVerifySignatureSourceRepositoryCLI(t *testing.T) {
	const (
		generator = "https://github.com/slsa-framework/slsa-github-generator/.github/workflows/generator_generic_slsa3.yml@refs/tags/v2.1.0"
		own       = "https://github.com/demo/tool"
	)
	f := newSigFix(t)
	b, err := f.vs.BundleRun(sigstoretest.Run{Workflow: generator, Issuer: actionsIssuer, SourceRepository: own}, f.artifact)
	if err != nil {
		t.Fatal(err)
	}
	f.write("run.sigstore.json", b)
	args := []string{"verify-signature", "--bundle", filepath.Join(f.dir, "run.sigstore.json"), "--trusted-root", filepath.Join(f.dir, "root.json"),
		"--sigstore-identity", generator, "--sigstore-issuer", actionsIssuer, "--sigstore-source-repository", own, filepath.Join(f.mirror, "tool", "v1.0.0", "tool-amd64")}
	code, stdout, stderr := runCLI(t, append([]string{"--cache", t.TempDir()}, args...)...)
	if want := "by " + generator + "\n  issuer       " + actionsIssuer + "\n  run of       " + own + "\n"; code != 0 || !strings.Contains(stdout, want) {
		t.Errorf("exit %d\nstdout: %s\nstderr: %s\nwant %q", code, stdout, stderr, want)
	}
	code, stdout, _ = runCLI(t, append([]string{"--cache", t.TempDir(), "--json"}, args...)...)
	var res map[string]any
	if code != 0 || json.Unmarshal([]byte(stdout), &res) != nil || res["source_repository"] != own {
		t.Errorf("--json: exit %d\n%s\nwant source_repository %s", code, stdout, own)
	}
}

// updeb verify-signature's Sigstore forms: exit 0 good, 1 refused with the
// reason, 2 usage, 3 Rekor unavailable; --json has snake_case keys.
func TestVerifySignatureSigstoreCLI(t *testing.T) {
	f := newSigFix(t)
	sig := f.cosign(f.vs, k8sIdentity, googleIssuer, f.artifact, soon(), true)
	f.bundle(toolWorkflow, actionsIssuer, f.artifact)
	dir := filepath.Join(f.mirror, "tool", "v1.0.0")
	art, sigFile, certFile, bundle := filepath.Join(dir, "tool-amd64"), filepath.Join(dir, "tool-amd64.sig"), filepath.Join(dir, "tool-amd64.cert"), filepath.Join(dir, "tool-amd64.sigstore.json")
	root := filepath.Join(f.dir, "root.json")
	other, _ := sigstoretest.New()
	otherRoot := filepath.Join(f.dir, "other-root.json")
	f.write("other-root.json", other.TrustedRoot())
	cfg := filepath.Join(f.dir, "updeb.yaml")
	k8s := []string{"--sigstore-identity", k8sIdentity, "--sigstore-issuer", googleIssuer}
	wf := []string{"--sigstore-identity", toolWorkflow, "--sigstore-issuer", actionsIssuer}
	cases := []struct {
		name       string
		args       []string
		code       int
		wantStdout string
		wantStderr string
	}{
		{"good bundle", append([]string{"--bundle", bundle, "--trusted-root", root}, append(wf, art)...), 0,
			"Good Sigstore signature (bundle) by " + toolWorkflow + "\n  issuer       " + actionsIssuer + "\n  logged       https://rekor.localhost index ", ""},
		{"good bundle, identity regexp, root from the config", append([]string{"--config", cfg, "--bundle", bundle, "--sigstore-identity-regexp", toolWorkflowRE, "--sigstore-issuer", actionsIssuer}, art), 0,
			"Good Sigstore signature (bundle)", ""},
		{"good cosign signature, Rekor through squid", append([]string{"--config", cfg, "--sig", sigFile, "--cert", certFile}, append(k8s, art)...), 0,
			fmt.Sprintf("Good Sigstore signature (cosign-detached) by %s\n  issuer       %s\n  logged       https://rekor.localhost index %d", k8sIdentity, googleIssuer, sig.Entry.LogIndex), ""},
		{"wrong identity", append([]string{"--config", cfg, "--sig", sigFile, "--cert", certFile, "--sigstore-identity", "krel-trust@k8s-releng-prod.iam.gserviceaccount.com", "--sigstore-issuer", googleIssuer}, art), 1,
			"", `certificate identity "` + k8sIdentity + `", want "krel-trust@k8s-releng-prod.iam.gserviceaccount.com"`},
		{"another issuer", append([]string{"--bundle", bundle, "--trusted-root", root, "--sigstore-identity", toolWorkflow, "--sigstore-issuer", googleIssuer}, art), 1,
			"", `certificate issued for OIDC issuer "` + actionsIssuer + `", want "` + googleIssuer + `"`},
		// The test CA's certificate names no source repository: a policy
		// that requires one refuses it.
		{"another source repository", append([]string{"--bundle", bundle, "--trusted-root", root, "--sigstore-source-repository", "https://github.com/demo/tool"}, append(wf, art)...), 1,
			"", `certificate names no source repository (its Source Repository URI, OID 1.3.6.1.4.1.57264.1.12), want "https://github.com/demo/tool"`},
		{"source repository that is none", append([]string{"--bundle", bundle, "--trusted-root", root, "--sigstore-source-repository", "github.com/demo/tool"}, append(wf, art)...), 2, "", "is not a repository's URL"},
		{"another trusted root", append([]string{"--bundle", bundle, "--trusted-root", otherRoot}, append(wf, art)...), 1, "", "does not list"},
		{"another artifact", append([]string{"--bundle", bundle, "--trusted-root", root}, append(wf, sigFile)...), 1, "", "the bundle belongs to another artifact"},
		{"no identity", []string{"--bundle", bundle, "--sigstore-issuer", actionsIssuer, art}, 2, "", "no identity"},
		{"no issuer", []string{"--bundle", bundle, "--sigstore-identity", toolWorkflow, art}, 2, "", "no OIDC issuer"},
		{"regexp matching anybody", []string{"--bundle", bundle, "--sigstore-identity-regexp", ".*", "--sigstore-issuer", actionsIssuer, art}, 2, "", "matches the identity of anyone"},
		{"bundle and sig", append([]string{"--bundle", bundle, "--sig", sigFile, "--cert", certFile}, append(wf, art)...), 2, "", "give --bundle FILE, or --sig FILE and --cert FILE"},
		{"sig without cert", append([]string{"--sig", sigFile}, append(k8s, art)...), 2, "", "--sig and --cert go together"},
		{"keyring with Sigstore", append([]string{"--keyring", root, "--bundle", bundle}, append(wf, art)...), 2, "", "for OpenPGP signatures"},
		{"no artifact", append([]string{"--bundle", bundle}, wf...), 2, "", "accepts 1 arg(s)"},
		{"missing artifact", append([]string{"--bundle", bundle, "--trusted-root", root}, append(wf, "/nonexistent/tool")...), 2, "", "no such file"},
		{"missing bundle", append([]string{"--bundle", "/nonexistent/b.json", "--trusted-root", root}, append(wf, art)...), 2, "", "no such file"},
		{"trusted root that is none", append([]string{"--bundle", bundle, "--trusted-root", art}, append(wf, art)...), 2, "", "not a Sigstore trusted_root.json"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, append([]string{"--cache", t.TempDir(), "verify-signature"}, c.args...)...)
			if code != c.code || !strings.Contains(stdout, c.wantStdout) || !strings.Contains(stderr, c.wantStderr) {
				t.Fatalf("exit %d (want %d)\nstdout: %s\nstderr: %s\nwant stdout %q, stderr %q", code, c.code, stdout, stderr, c.wantStdout, c.wantStderr)
			}
		})
	}
	code, stdout, _ := runCLI(t, append([]string{"--cache", t.TempDir(), "--json", "--config", cfg, "verify-signature", "--sig", sigFile, "--cert", certFile}, append(k8s, art)...)...)
	var res map[string]any
	if code != 0 || json.Unmarshal([]byte(stdout), &res) != nil {
		t.Fatalf("--json: exit %d\n%s", code, stdout)
	}
	sum := sha256.Sum256(f.artifact)
	for k, want := range map[string]any{"shape": "cosign-detached", "identity": k8sIdentity, "issuer": googleIssuer, "log_index": float64(sig.Entry.LogIndex),
		"log_url": "https://rekor.localhost", "sha256": hex.EncodeToString(sum[:]), "size": float64(len(f.artifact)),
		"source": "https://rekor.sigstore.dev" + sig.Entry.Path()} {
		if res[k] != want {
			t.Errorf("--json %s = %v, want %v", k, res[k], want)
		}
	}
	for _, k := range []string{"log_id", "integrated_time", "trusted_root"} {
		if _, ok := res[k]; !ok {
			t.Errorf("--json lacks %s: %s", k, stdout)
		}
	}
	if !strings.Contains(f.sq.Log(), "GET "+f.rekorURL+sig.Entry.Path()) {
		t.Errorf("Rekor not asked through squid:\n%s", f.sq.Log())
	}
	// Rekor unreachable: exit 3.
	f.rekorURL = "http://127.0.0.1:1"
	f.config("root.json")
	code, _, stderr := runCLI(t, append([]string{"--cache", t.TempDir(), "--config", cfg, "verify-signature", "--sig", sigFile, "--cert", certFile}, append(k8s, art)...)...)
	if code != exitNetwork {
		t.Errorf("Rekor unreachable: exit %d: %s", code, stderr)
	}
}

// updeb trust refresh fetches a trusted root through TUF, through squid,
// stores it in the state folder, and verification then uses it; a refused
// repository stores nothing.
func TestTrustRefreshCLI(t *testing.T) {
	f := newSigFix(t)
	repo, err := sigstoretest.NewTUF()
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Publish(f.vs.TrustedRoot(), time.Now().Add(24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(repo)
	defer srv.Close()
	f.write("tuf-root.json", repo.Root())
	f.config("") // no sigstore: trusted-root: the bundled root, then the refreshed one
	state := t.TempDir()
	cfg := filepath.Join(f.dir, "updeb.yaml")
	run := func(args ...string) (int, string, string) {
		return runCLI(t, append([]string{"--config", cfg, "--state", state, "--cache", t.TempDir(), "--recipes", filepath.Join(f.dir, "recipes")}, args...)...)
	}
	f.bundle(toolWorkflow, actionsIssuer, f.artifact)
	if code, _, stderr := run("--out", t.TempDir(), "build", "bundle-tool"); code != exitCheck || !strings.Contains(stderr, "bundled Sigstore public-good trusted root") {
		t.Fatalf("with the bundled root: exit %d: %s", code, stderr)
	}
	code, stdout, _ := run("trust", "show")
	if code != 0 || !strings.Contains(stdout, "trusted root: the public-good snapshot bundled with updeb") || !strings.Contains(stdout, "tlog   https://rekor.sigstore.dev") {
		t.Errorf("show, bundled: %s", stdout)
	}

	// What a refresh killed while it wrote the root (before its rename)
	// left; the next refresh, under the same lock, removes it.
	killed := filepath.Join(state, "sigstore", ".trusted_root.json.tmp-3311460152")
	if err := os.MkdirAll(filepath.Dir(killed), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(killed, []byte(`{"mediaType":`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run("trust", "refresh", "--tuf-url", srv.URL, "--tuf-root", filepath.Join(f.dir, "tuf-root.json"))
	stored := filepath.Join(state, "sigstore", "trusted_root.json")
	if code != 0 || !strings.Contains(stdout, "refreshed the Sigstore trusted root from "+srv.URL+" (changed)\n  stored  "+stored) {
		t.Fatalf("refresh: exit %d\n%s%s", code, stdout, stderr)
	}
	if _, err := os.Lstat(killed); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a killed refresh's temporary copy of the root is still there (%v)", err)
	}
	if b, _ := os.ReadFile(stored); string(b) != string(f.vs.TrustedRoot()) {
		t.Error("the stored root is not the repository's target")
	}
	if !strings.Contains(f.sq.Log(), "GET "+srv.URL+"/timestamp.json") {
		t.Errorf("TUF not asked through squid:\n%s", f.sq.Log())
	}
	code, stdout, _ = run("--json", "trust", "show")
	checkJSON(t, "trust show", stdout)
	var show struct {
		Source, File, SHA256 string
		AgeDays              int `json:"age_days"`
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &show) != nil || show.Source != "refreshed" || show.File != stored || show.AgeDays != 0 {
		t.Errorf("show, refreshed: %s", stdout)
	}
	if code, _, stderr := run("--out", t.TempDir(), "build", "bundle-tool"); code != 0 {
		t.Errorf("with the refreshed root: exit %d: %s", code, stderr)
	}
	// Again: unchanged.
	if code, stdout, _ := run("--json", "trust", "refresh", "--tuf-url", srv.URL, "--tuf-root", filepath.Join(f.dir, "tuf-root.json")); code != 0 || checkJSON(t, "trust refresh", stdout)["changed"] != false {
		t.Errorf("refresh --json: exit %d: %s", code, stdout)
	}
	if code, stdout, _ := run("trust", "refresh", "--tuf-url", srv.URL, "--tuf-root", filepath.Join(f.dir, "tuf-root.json")); code != 0 || !strings.Contains(stdout, "(unchanged)") {
		t.Errorf("second refresh: %s", stdout)
	}

	// A repository whose timestamp expired: refused, nothing stored: neither
	// the trusted root nor the TUF metadata kept for the next refresh.
	tufDir := filepath.Join(state, "sigstore")
	before := treeDigests(t, tufDir)
	other, _ := sigstoretest.New()
	repo.Publish(other.TrustedRoot(), time.Now().Add(-time.Hour))
	code, _, stderr = run("trust", "refresh", "--tuf-url", srv.URL, "--tuf-root", filepath.Join(f.dir, "tuf-root.json"))
	if code != exitCheck || !strings.Contains(stderr, "TUF repository refused") || !strings.Contains(stderr, "nothing was stored") {
		t.Errorf("expired: exit %d: %s", code, stderr)
	}
	if b, _ := os.ReadFile(stored); string(b) != string(f.vs.TrustedRoot()) {
		t.Error("a refused refresh changed the stored root")
	}
	if after := treeDigests(t, tufDir); !maps.Equal(before, after) {
		t.Errorf("a refused refresh changed the state folder:\nbefore %v\nafter  %v", before, after)
	}
	// A repository that answers and then trickles is cut off at fetch:
	// retry-time (5s in this config), exit 3, nothing stored.
	drip := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100000")
		w.WriteHeader(http.StatusOK)
		for i := 0; i < 60 && r.Context().Err() == nil; i++ {
			w.Write([]byte("{"))
			w.(http.Flusher).Flush()
			time.Sleep(time.Second)
		}
	}))
	defer drip.Close()
	start := time.Now()
	code, _, stderr = run("trust", "refresh", "--tuf-url", drip.URL, "--tuf-root", filepath.Join(f.dir, "tuf-root.json"))
	if took := time.Since(start); code != exitNetwork || took > 15*time.Second {
		t.Errorf("trickling repository: exit %d after %s: %s", code, took.Round(time.Second), stderr)
	}
	if after := treeDigests(t, tufDir); !maps.Equal(before, after) {
		t.Errorf("a failed refresh changed the state folder:\nbefore %v\nafter  %v", before, after)
	}
	// Unreachable: exit 3. A TUF root that is none: exit 2. Offline: exit 2.
	if code, _, stderr := run("trust", "refresh", "--tuf-url", "http://127.0.0.1:1", "--tuf-root", filepath.Join(f.dir, "tuf-root.json")); code != exitNetwork {
		t.Errorf("unreachable: exit %d: %s", code, stderr)
	}
	if code, _, stderr := run("trust", "refresh", "--tuf-url", srv.URL, "--tuf-root", "/nonexistent/root.json"); code != exitUsage {
		t.Errorf("missing TUF root: exit %d: %s", code, stderr)
	}
	if code, _, _ := run("--offline", "trust", "refresh"); code != exitUsage {
		t.Errorf("offline: exit %d", code)
	}
	// The root cannot be stored (its name is taken by a folder, as a full
	// disk would fail it): the TUF metadata is kept as it was too.
	os.Remove(stored)
	os.Mkdir(stored, 0o755)
	before = treeDigests(t, tufDir)
	newer, _ := sigstoretest.New()
	repo.Publish(newer.TrustedRoot(), time.Now().Add(time.Hour))
	if code, _, stderr := run("trust", "refresh", "--tuf-url", srv.URL, "--tuf-root", filepath.Join(f.dir, "tuf-root.json")); code == 0 {
		t.Errorf("a root that cannot be stored: exit 0: %s", stderr)
	}
	if after := treeDigests(t, tufDir); !maps.Equal(before, after) {
		t.Errorf("a refresh that could not store the root changed the TUF metadata:\nbefore %v\nafter  %v", before, after)
	}
	os.Remove(stored)
	// The config's root wins over the refreshed one, and refresh says so.
	f.config("root.json")
	repo.Publish(f.vs.TrustedRoot(), time.Now().Add(time.Hour))
	code, _, stderr = run("trust", "refresh", "--tuf-url", srv.URL, "--tuf-root", filepath.Join(f.dir, "tuf-root.json"))
	if code != 0 || !strings.Contains(stderr, "which verification uses instead of the refreshed root") {
		t.Errorf("refresh under a config root: exit %d: %s", code, stderr)
	}
	warnsThroughLogger(t, func(global ...string) (int, string, string) {
		return run(append(global, "trust", "refresh", "--tuf-url", srv.URL, "--tuf-root", filepath.Join(f.dir, "tuf-root.json"))...)
	}, "which verification uses instead of the refreshed root")
	if code, stdout, _ := run("trust", "show"); code != 0 || !strings.Contains(stdout, "trusted root: the config's sigstore: trusted-root:") {
		t.Errorf("show, config: %s", stdout)
	}
}

// No silent trust on first use: bump refuses a source nothing vouches for,
// takes the operator's digests or --trust-on-first-use with a warning and a
// mark in the recipe, and pins what a Sigstore signature vouches for.
func TestBumpVouchingCLI(t *testing.T) {
	f := newSigFix(t)
	v110 := []byte("#!/bin/sh\necho tool 1.1.0\n")
	f.write("mirror/releases.example.org/tool/v1.1.0/tool-amd64", v110)
	sum := sha256.Sum256(v110)
	sha := hex.EncodeToString(sum[:])
	plain := strings.NewReplacer("NAME", "plain-tool", "SHA", hex.EncodeToString(sha256Of(f.artifact)), "SIG", `{none: "upstream signs nothing"}`).Replace(toolRecipe)
	f.write("recipes/plain-tool.yaml", []byte(plain))
	file := filepath.Join(f.dir, "recipes", "plain-tool.yaml")
	read := func() string {
		b, _ := os.ReadFile(file)
		return string(b)
	}
	bump := func(args ...string) (int, string, string) {
		return f.run(append([]string{"bump", "--to", "1.1.0", "--date", "2026-02-01", "--now", "2026-11-24"}, args...)...)
	}

	code, _, stderr := bump("plain-tool")
	if code != exitCheck || !strings.Contains(stderr, "nothing vouches for 1 source file(s)") || !strings.Contains(stderr, "tool amd64: sha256 "+sha) ||
		!strings.Contains(stderr, "hint: compare these digests") || read() != plain {
		t.Fatalf("unvouched: exit %d: %s\n%s", code, stderr, read())
	}
	if code, _, stderr := bump("plain-tool", "--sha256", "amd64="+strings.Repeat("0", 64)); code != exitCheck || !strings.Contains(stderr, "against the digest given with --sha256") || read() != plain {
		t.Errorf("wrong digest: exit %d: %s", code, stderr)
	}
	for _, bad := range [][]string{{"--sha256", "nosuch:amd64=" + sha}, {"--sha256", "tool:arm64=" + sha}, {"--sha512", "amd64=abc"}} {
		if code, _, stderr := bump(append([]string{"plain-tool"}, bad...)...); code != exitUsage || read() != plain {
			t.Errorf("%v: exit %d: %s", bad, code, stderr)
		}
	}
	// The warning goes through the logger: none under -q (f.run's), a JSON
	// record under --log-format json, a line without -q; the recipe is put
	// back between the runs.
	if code, _, stderr := bump("plain-tool", "--sha256", "tool:amd64="+sha); code != 0 || strings.Contains(stderr, "pinned on your word alone") {
		t.Errorf("--sha256 -q: exit %d, and the warning is kept: %s", code, stderr)
	}
	f.write("recipes/plain-tool.yaml", []byte(plain))
	if code, _, stderr := bump("plain-tool", "--sha256", "tool:amd64="+sha, "--quiet=false", "--log-format", "json"); code != 0 ||
		!strings.Contains(stderr, `"level":"WARN","msg":"plain-tool tool amd64 pinned on your word alone (operator-digest)`) {
		t.Errorf("--sha256 --log-format json: exit %d: %s", code, stderr)
	}
	f.write("recipes/plain-tool.yaml", []byte(plain))
	code, stdout, stderr := bump("plain-tool", "--sha256", "tool:amd64="+sha, "--quiet=false")
	if code != 0 || !strings.Contains(stderr, "warning: plain-tool tool amd64 pinned on your word alone (operator-digest)") ||
		!strings.Contains(stdout, "verified: tool amd64: operator:sha256") {
		t.Fatalf("--sha256: exit %d\n%s%s", code, stdout, stderr)
	}
	if after := read(); !strings.Contains(after, "    # pinned-by-operator: 2026-11-24 by updeb bump --sha256 (no signature, no upstream checksum file)\n    sha256: {amd64: "+sha+"}\n") {
		t.Errorf("recipe after --sha256:\n%s", after)
	}

	// --trust-on-first-use on the next version.
	v120 := []byte("#!/bin/sh\necho tool 1.2.0\n")
	f.write("mirror/releases.example.org/tool/v1.2.0/tool-amd64", v120)
	code, _, stderr = f.run("bump", "plain-tool", "--to", "1.2.0", "--date", "2026-03-01", "--now", "2026-11-25", "--trust-on-first-use", "--quiet=false")
	if code != 0 || !strings.Contains(stderr, "pinned on your word alone (trust-on-first-use)") {
		t.Fatalf("--trust-on-first-use: exit %d: %s", code, stderr)
	}
	if after := read(); !strings.Contains(after, "    # trust-on-first-use: 2026-11-25 by updeb bump") || strings.Contains(after, "pinned-by-operator") {
		t.Errorf("recipe after --trust-on-first-use:\n%s", after)
	}

	// A Sigstore signature vouches: no flag needed, no warning.
	sig, err := f.vs.Sign(k8sIdentity, googleIssuer, v110)
	if err != nil {
		t.Fatal(err)
	}
	f.write("mirror/releases.example.org/tool/v1.1.0/tool-amd64.sig", sig.Sig)
	f.write("mirror/releases.example.org/tool/v1.1.0/tool-amd64.cert", sig.Cert)
	f.rekor.Publish(sig.Entry.UUID(), f.answer(f.vs, sig.Entry))
	code, stdout, stderr = bump("cosign-tool", "--quiet=false")
	if code != 0 || strings.Contains(stderr, "warning") || !strings.Contains(stdout, fmt.Sprintf("verified: tool amd64: sigstore:%s issuer=%s rekor=%d", k8sIdentity, googleIssuer, sig.Entry.LogIndex)) {
		t.Fatalf("Sigstore-signed bump: exit %d\n%s%s", code, stdout, stderr)
	}
	// Signed by someone else: refused (exit 1), not pinned on trust.
	bad, _ := f.vs.Sign("attacker@example.com", googleIssuer, v120)
	f.write("mirror/releases.example.org/tool/v1.2.0/tool-amd64.sig", bad.Sig)
	f.write("mirror/releases.example.org/tool/v1.2.0/tool-amd64.cert", bad.Cert)
	f.rekor.Publish(bad.Entry.UUID(), f.answer(f.vs, bad.Entry))
	code, _, stderr = f.run("bump", "cosign-tool", "--to", "1.2.0", "--date", "2026-03-01", "--trust-on-first-use")
	if code != exitCheck || !strings.Contains(stderr, `certificate identity "attacker@example.com"`) {
		t.Errorf("badly signed bump: exit %d: %s", code, stderr)
	}

	// A new recipe without pins: bump pins it at its own version.
	fresh := strings.Replace(strings.NewReplacer("NAME", "new-tool", "SIG", `{none: "upstream signs nothing"}`).Replace(toolRecipe), "    sha256: {amd64: SHA}\n", "", 1)
	f.write("recipes/new-tool.yaml", []byte(fresh))
	if code, stdout, _ := f.run("lint", "new-tool"); code != exitUsage || !strings.Contains(stdout, "no sha256 or sha512 digest pinned") {
		t.Errorf("lint of a recipe without pins: exit %d: %s", code, stdout)
	}
	code, _, stderr = f.run("bump", "new-tool", "--to", "1.0.0", "--sha512", "tool:amd64="+sha512Hex(f.artifact), "--now", "2026-11-24")
	if code != 0 {
		t.Fatalf("new recipe: exit %d: %s", code, stderr)
	}
	b, _ := os.ReadFile(filepath.Join(f.dir, "recipes", "new-tool.yaml"))
	if !strings.Contains(string(b), "    url: https://releases.example.org/tool/v{{.Version}}/tool-{{.Arch}}\n    # pinned-by-operator: 2026-11-24 by updeb bump --sha512 (no signature, no upstream checksum file)\n    sha512:\n      amd64: "+sha512Hex(f.artifact)+"\n") {
		t.Errorf("new recipe pinned:\n%s", b)
	}
	if code, _, stderr := f.run("lint", "new-tool"); code != 0 {
		t.Errorf("the pinned recipe does not lint: %s", stderr)
	}
}

func sha256Of(b []byte) []byte {
	s := sha256.Sum256(b)
	return s[:]
}

func sha512Hex(b []byte) string {
	s := sha512.Sum512(b)
	return hex.EncodeToString(s[:])
}

// treeDigests maps every file under dir to its sha256.
func treeDigests(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[p] = hex.EncodeToString(sha256Of(b))
		return nil
	})
	return out
}

// TestMirrorCarriesAttestations: a recipe trusted through GitHub
// attestations is exported with GitHub's answers, and builds on the far side
// from the folder alone (no proxy, no GitHub); a folder that lacks the
// answer says "not in the mirror", naming the file, not the proxy.
func TestMirrorCarriesAttestations(t *testing.T) {
	f := newSigFix(t)
	f.attest(toolWorkflow, actionsIssuer, f.artifact)
	usb := filepath.Join(t.TempDir(), "usb")
	code, stdout, stderr := f.run("--json", "mirror", "export", usb, "attest-tool")
	var exp struct {
		Files   []struct{ URL, Path string }
		Mirrors []struct{ Prefix, To string }
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &exp) != nil {
		t.Fatalf("export: exit %d\n%s%s", code, stdout, stderr)
	}
	var page string
	for _, fl := range exp.Files {
		if strings.HasPrefix(fl.URL, f.ghURL+"/repos/demo/tool/attestations/sha256:") {
			page = filepath.Join(usb, filepath.FromSlash(fl.Path))
		}
	}
	if page == "" || len(exp.Mirrors) != 2 {
		t.Fatalf("the export lacks GitHub's attestation answer, or its mirror: %s", stdout)
	}
	if code, out, _ := runCLI(t, "mirror", "verify", usb); code != 0 {
		t.Fatalf("mirror verify: %s", out)
	}

	// the far side: the folder, a proxy nothing answers at, no GitHub
	dead, _ := squid.DeadURL()
	far := t.TempDir()
	cfg := "proxy: " + dead + "\nno-proxy: []\nfetch: {retries: 0}\nbuild: {maintainer: t <t@example.org>}\nmirrors:\n"
	for _, m := range exp.Mirrors {
		cfg += "  - {prefix: " + m.Prefix + ", to: " + m.To + "}\n"
	}
	cfg += "sigstore: {github-api: " + f.ghURL + ", trusted-root: " + filepath.Join(f.dir, "root.json") + "}\n"
	os.WriteFile(filepath.Join(far, "updeb.yaml"), []byte(cfg), 0o644)
	build := func() (int, string) {
		code, out, stderr := runCLI(t, "--config", filepath.Join(far, "updeb.yaml"), "--recipes", filepath.Join(f.dir, "recipes"),
			"--cache", t.TempDir(), "--out", t.TempDir(), "-q", "build", "attest-tool")
		return code, out + stderr
	}
	if code, out := build(); code != 0 {
		t.Fatalf("build from the folder: exit %d\n%s", code, out)
	}
	os.Remove(page)
	code, out := build()
	if code != exitNetwork || !strings.Contains(out, "not in the mirror") || !strings.Contains(out, "attestations/sha256:") ||
		strings.Contains(out, "check the proxy") || strings.Contains(out, "no proxy was used") {
		t.Errorf("build from a folder without the answer: exit %d\n%s", code, out)
	}
}

// TestTrustShowTrustedRoot: trust show --trusted-root FILE shows FILE, not
// the root in use: the command the gate's REVIEW line for a changed trusted
// root tells the reviewer to run.
func TestTrustShowTrustedRoot(t *testing.T) {
	file := filepath.Join("..", "..", "testdata", "demo", "sigstore", "trusted_root.json")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "--state", t.TempDir(), "--json", "trust", "show", "--trusted-root", file)
	var show struct{ Source, File, SHA256 string }
	if code != 0 || json.Unmarshal([]byte(stdout), &show) != nil {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	if show.Source != "flag" || show.File != file || show.SHA256 != fmt.Sprintf("%x", sha256.Sum256(data)) {
		t.Errorf("shows %+v, want %s (sha256 %x)", show, file, sha256.Sum256(data))
	}
}

// TestTrustedRootUnreadableIsNotBundled: a refreshed root updeb cannot look
// for (a symlink loop; a file where its folder goes; as root, the tests
// cannot make the state folder another user may not read) is refused, exit
// 2, naming it: it gave way to the bundled snapshot, exit 0, and so every
// verification used another trust anchor than the one refreshed, without a
// word.
func TestTrustedRootUnreadableIsNotBundled(t *testing.T) {
	loop, notDir := t.TempDir(), t.TempDir()
	os.Mkdir(filepath.Join(loop, "sigstore"), 0o755)
	if err := os.Symlink("trusted_root.json", filepath.Join(loop, refreshedRootFile)); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(notDir, "sigstore"), nil, 0o644)
	for state, why := range map[string]string{loop: "too many levels of symbolic links", notDir: "not a directory"} {
		code, stdout, stderr := runCLI(t, "--state", state, "--json", "trust", "show")
		if code != exitUsage || stdout != "" || !strings.Contains(stderr, filepath.Join(state, refreshedRootFile)+": "+why) {
			t.Errorf("--state %s: exit %d, stdout %q, stderr %q; want exit 2 naming the refreshed root: %s", state, code, stdout, stderr, why)
		}
	}
}

// The record names a cosign signature's Rekor entry by the entry the log
// holds, not by Rekor's answer, whose inclusion proof follows the log's size:
// a build from a cold cache after Rekor serves the entry otherwise writes the
// same record.
func TestSigstoreRecordSameWhenRekorAnswersOtherwise(t *testing.T) {
	f := newSigFix(t)
	sig := f.cosign(f.vs, k8sIdentity, googleIssuer, f.artifact, soon(), true)
	record := func() []byte { return f.record("cosign-tool") }
	first := record()
	// The same entry, answered otherwise (as a grown log's proof would be).
	var answer map[string]any
	if err := json.Unmarshal(f.answer(f.vs, sig.Entry), &answer); err != nil {
		t.Fatal(err)
	}
	other, err := json.MarshalIndent(answer, "", "   ")
	if err != nil {
		t.Fatal(err)
	}
	f.rekor.Publish(sig.Entry.UUID(), other)
	if second := record(); !bytes.Equal(first, second) {
		t.Errorf("the records differ with Rekor's answer:\n%s\n%s", first, second)
	}
	statement := statementOf(t, first)
	body := sha256.Sum256(sig.Entry.Body)
	if !bytes.Contains(statement, []byte(`"sha256": "`+hex.EncodeToString(body[:])+`"`)) {
		t.Errorf("the record does not name the entry's body by its sha256 %x:\n%s", body, statement)
	}
}

// record builds recipe from a cold cache and state and returns the
// provenance record it wrote.
func (f *sigFix) record(recipe string) []byte {
	f.t.Helper()
	out := f.t.TempDir()
	base := []string{"--config", filepath.Join(f.dir, "updeb.yaml"), "--recipes", filepath.Join(f.dir, "recipes"),
		"--cache", f.t.TempDir(), "--out", out, "--state", filepath.Join(f.t.TempDir(), "state"), "-q"}
	if code, stdout, stderr := runCLI(f.t, append(base, "build", recipe)...); code != 0 {
		f.t.Fatalf("build: exit %d\n%s%s", code, stdout, stderr)
	}
	recs, err := filepath.Glob(filepath.Join(out, "*"+pipeline.ProvenanceSuffix))
	if err != nil || len(recs) != 1 {
		f.t.Fatalf("records in %s: %v %v", out, recs, err)
	}
	b, err := os.ReadFile(recs[0])
	if err != nil {
		f.t.Fatal(err)
	}
	return b
}

// TestAttestationRecordSameInAnyOrder: upstream attested the artifact twice
// (a re-run of its release workflow), and GitHub's API lists the two in
// either order: the record names the same one, the log's first, and a
// rebuild writes the same bytes.
func TestAttestationRecordSameInAnyOrder(t *testing.T) {
	f := newSigFix(t)
	sum := sha256.Sum256(f.artifact)
	var atts [][]byte
	for range 2 {
		b, err := f.vs.Attestation(toolWorkflow, actionsIssuer, sigstoretest.Subject{Name: "tool-amd64", Digest: map[string]string{"sha256": hex.EncodeToString(sum[:])}})
		if err != nil {
			t.Fatal(err)
		}
		atts = append(atts, b)
	}
	var index []int64
	for _, b := range atts {
		var e struct {
			VerificationMaterial struct {
				TlogEntries []struct {
					LogIndex int64 `json:",string"`
				}
			}
		}
		if err := json.Unmarshal(b, &e); err != nil || len(e.VerificationMaterial.TlogEntries) != 1 {
			t.Fatalf("attestation's log entry: %v", err)
		}
		index = append(index, e.VerificationMaterial.TlogEntries[0].LogIndex)
	}
	if index[0] >= index[1] {
		t.Fatalf("log indexes %v: want the first attestation logged first", index)
	}
	repo := hex.EncodeToString(sum[:])
	f.gh.Set("demo/tool", repo, atts[0], atts[1])
	first := f.record("attest-tool")
	f.gh.Set("demo/tool", repo, atts[1], atts[0])
	if second := f.record("attest-tool"); !bytes.Equal(first, second) {
		t.Errorf("the records differ with the order of GitHub's answer:\n%s\n%s", statementOf(t, first), statementOf(t, second))
	}
	if want := fmt.Sprintf(" rekor=%d\"", index[0]); !bytes.Contains(statementOf(t, first), []byte(want)) {
		t.Errorf("the record does not name the first log entry (%s):\n%s", want, statementOf(t, first))
	}
}

// statementOf is the in-toto statement a provenance record's envelope holds.
func statementOf(t *testing.T, envelope []byte) []byte {
	t.Helper()
	var env struct{ Payload string }
	if err := json.Unmarshal(envelope, &env); err != nil {
		t.Fatal(err)
	}
	statement, err := base64.StdEncoding.DecodeString(env.Payload)
	if err != nil {
		t.Fatal(err)
	}
	return statement
}

// TestUnusableTrustedRootOnlyFailsSigstore: a refreshed trusted root in the
// state folder that updeb cannot use (corrupt; a symlink loop; unreadable,
// where the tests do not run as root, whom modes do not stop) fails the
// sources signed with Sigstore, exit 2 naming it, and no command on a recipe
// signed otherwise: it failed every build, as a state folder under another
// user's HOME (su without -) does.
func TestUnusableTrustedRootOnlyFailsSigstore(t *testing.T) {
	f := newSigFix(t)
	f.attest(toolWorkflow, actionsIssuer, f.artifact)
	f.config("")
	sum := sha256.Sum256(f.artifact)
	f.write("mirror/releases.example.org/tool/v1.0.0/SHA256SUMS", []byte(hex.EncodeToString(sum[:])+"  tool-amd64\n"))
	f.write("recipes/plain-tool.yaml", []byte(strings.NewReplacer("NAME", "plain-tool", "SHA", hex.EncodeToString(sum[:]),
		"SIG", "{none: \"test fixture\"}\n    checksums: {url: \"https://releases.example.org/tool/v{{.Version}}/SHA256SUMS\"}").Replace(toolRecipe)))
	root := filepath.Join(f.dir, "state", refreshedRootFile)
	unusable := map[string]func(){
		"corrupt": func() { f.write("state/"+refreshedRootFile, []byte("{\"mediaType\": 1}\n")) },
		"a symlink loop": func() {
			if err := os.Symlink(filepath.Base(root), root); err != nil {
				t.Fatal(err)
			}
		},
	}
	if os.Geteuid() != 0 { // modes do not stop root
		unusable["unreadable"] = func() {
			f.write("state/"+refreshedRootFile, f.vs.TrustedRoot())
			if err := os.Chmod(root, 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	for name, make := range unusable {
		t.Run(name, func(t *testing.T) {
			if err := os.RemoveAll(filepath.Dir(root)); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Dir(root), 0o755); err != nil {
				t.Fatal(err)
			}
			make()
			for _, args := range [][]string{{"build", "plain-tool"}, {"verify", "plain-tool"}, {"lint", "plain-tool"}} {
				if code, stdout, stderr := f.run(args...); code != 0 {
					t.Errorf("%s: exit %d, want 0: a root it does not use\n%s%s", strings.Join(args, " "), code, stdout, stderr)
				}
			}
			code, stdout, stderr := f.run("build", "plain-tool", "attest-tool")
			if code != exitUsage || !strings.Contains(stderr, root) || !strings.Contains(stderr, "run 'updeb trust refresh' again") ||
				!strings.Contains(stdout, "plain-tool") || strings.Count(stdout, " built ") != 1 {
				t.Errorf("build of both: exit %d, want %d naming %s, and plain-tool built\n%s%s", code, exitUsage, root, stdout, stderr)
			}
		})
	}
}
