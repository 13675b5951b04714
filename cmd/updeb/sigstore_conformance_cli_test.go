package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// realSigstore is pkg/verify/sigstore's copy of the real material in
// ../shared/upstream/sigstore (SOURCES.md gives each verdict).
func realSigstore(name string) string {
	return filepath.Join("..", "..", "pkg", "verify", "sigstore", "testdata", name)
}

// Every verdict of SOURCES.md through the CLI, with ARTIFACT as a digest as
// Sigstore's conformance suite passes it (sha256:HEX; sha512:HEX for the npm
// material, whose statements name only a sha512), and the pinned-key form.
func TestVerifySignatureRealMaterialCLI(t *testing.T) {
	const (
		npm512     = "sha512:76176ffa33808b54602c7c35de5c6e9a4deb96066dba6533f50ac234f4f1f4c6b3527515dc17c06fbe2860030f410eee69ea20079bd3a2c6f3dcf3b329b10751"
		js512      = "sha512:46d4e2f74c4877316640000a6fdf8a8b59f1e0847667973e9859f774dd31b8f1e0937813b777fb66a2ac67d50540fe34640966eee9fc2ccca387082b4c85cd3c"
		slsa512    = "sha512:bbfd372fc9beeb777fe35d05bb10c0c70a9733d366a75fed7dd18866c7391de3ee7e88ba74dd47abf3e15c845e547fcf0e5c3da80854c751554224d3a6d4e55f"
		oci256     = "sha256:732112270d7e59418a8c080b134b24cabd67d250d0d0147a97ed95ba5c280aa4"
		other256   = "sha256:bc103b4a84971ef6459b294a2b98568a2bfb72cded09d4acd1e16366a401f95b"
		jsWorkflow = "https://github.com/sigstore/sigstore-js/.github/workflows/release.yml@refs/heads/main"
		oauth      = "https://github.com/login/oauth"
		cosignType = "https://cosign.sigstore.dev/attestation/v1"
		npmType    = "https://github.com/npm/attestation/tree/main/specs/publish/v0.1"
	)
	tmp := t.TempDir()
	tampered := filepath.Join(tmp, "tampered.txt")
	if err := os.WriteFile(tampered, []byte("test content\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	js := []string{"--sigstore-identity", jsWorkflow, "--sigstore-issuer", actionsIssuer}
	scaffold := []string{"--trusted-root", realSigstore("trusted_root_scaffolding.json")}
	tsaRoot := []string{"--trusted-root", realSigstore("trusted_root_public_key_validity.json")}
	pgi := []string{"--trusted-root", realSigstore("trusted_root_pgi.json")}
	for _, c := range []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"bundle-provenance", append([]string{"--bundle", realSigstore("bundle-provenance.json")}, append(js, npm512)...), 0, "by " + jsWorkflow, ""},
		{"bundle-provenance, other digest", append([]string{"--bundle", realSigstore("bundle-provenance.json")}, append(js, js512)...), 1, "", "do not include the artifact"},
		{"sigstore.js provenance", append([]string{"--bundle", realSigstore("sigstore.js@2.0.0-provenance.sigstore.json")}, append(js, js512)...), 0, "data         sha512 " + js512[7:] + " (digest given)", ""},
		{"sigstore.js provenance, one nibble changed", append([]string{"--bundle", realSigstore("sigstore.js@2.0.0-provenance.sigstore.json")}, append(js, "sha512:56"+js512[9:])...), 1, "", "do not include the artifact sha512:56d4e2f7"},
		{"dsse", []string{"--bundle", realSigstore("dsse.sigstore.json"), "--sigstore-identity", "brian@dehamer.com", "--sigstore-issuer", oauth, slsa512}, 0, "by brian@dehamer.com", ""},
		{"dsse, two signatures", []string{"--bundle", realSigstore("dsse-2sigs.sigstore.json"), "--sigstore-identity", "brian@dehamer.com", "--sigstore-issuer", oauth, slsa512}, 1, "", "2 signatures"},
		{"othername", append(append([]string{"--bundle", realSigstore("othername.sigstore.json")}, scaffold...), "--sigstore-identity", "foo!oidc.local", "--sigstore-issuer", "http://oidc.local:8080", other256), 0,
			"data         sha256 " + other256[7:] + " (digest given)", ""},
		{"othername as e-mail", append(append([]string{"--bundle", realSigstore("othername.sigstore.json")}, scaffold...), "--sigstore-identity", "foo@oidc.local", "--sigstore-issuer", "http://oidc.local:8080", other256), 1, "", "foo!oidc.local"},
		{"othername, other digest", append(append([]string{"--bundle", realSigstore("othername.sigstore.json")}, scaffold...), "--sigstore-identity", "foo!oidc.local", "--sigstore-issuer", "http://oidc.local:8080", oci256), 1, "", "another artifact"},
		{"oci attestation, cosign's root", append(append([]string{"--bundle", realSigstore("oci-attestation.sigstore.json")}, pgi...), "--sigstore-identity", "cody@soyland.com", "--sigstore-issuer", oauth, "--sigstore-predicate-type", cosignType, oci256), 0, "index 175508996", ""},
		{"oci attestation, upper-case hex", []string{"--bundle", realSigstore("oci-attestation.sigstore.json"), "--sigstore-identity", "cody@soyland.com", "--sigstore-issuer", oauth, "--sigstore-predicate-type", cosignType, "sha256:" + strings.ToUpper(oci256[7:])}, 0, "index 175508996", ""},
		// An attestation counts as build provenance (SLSA), or by a type
		// named; cosign's own type is neither.
		{"oci attestation, not provenance", []string{"--bundle", realSigstore("oci-attestation.sigstore.json"), "--sigstore-identity", "cody@soyland.com", "--sigstore-issuer", oauth, oci256}, 1, "",
			"is of predicate type \"" + cosignType + "\", not one the policy counts (https://slsa.dev/provenance/v1, https://slsa.dev/provenance/v0.2)"},
		{"oci attestation, any type", []string{"--bundle", realSigstore("oci-attestation.sigstore.json"), "--sigstore-identity", "cody@soyland.com", "--sigstore-issuer", oauth, "--sigstore-any-predicate-type", oci256}, 0, "index 175508996", ""},
		{"oci attestation, other type named", []string{"--bundle", realSigstore("oci-attestation.sigstore.json"), "--sigstore-identity", "cody@soyland.com", "--sigstore-issuer", oauth, "--sigstore-predicate-type", "https://spdx.dev/Document", oci256}, 1, "",
			"hint: the attestation is the named signer's, but of another kind than build provenance"},
		{"predicate type and any", []string{"--bundle", realSigstore("oci-attestation.sigstore.json"), "--sigstore-identity", "cody@soyland.com", "--sigstore-issuer", oauth, "--sigstore-any-predicate-type", "--sigstore-predicate-type", cosignType, oci256}, 2, "", "give one or the other"},
		{"predicate type with sig and cert", []string{"--sig", tampered, "--cert", tampered, "--sigstore-identity", "cody@soyland.com", "--sigstore-issuer", oauth, "--sigstore-predicate-type", cosignType, oci256}, 2, "", "they go with --bundle"},
		{"npm publish, pinned key", []string{"--bundle", realSigstore("bundle-publish.json"), "--sigstore-key", realSigstore("publish_key.pub"), "--sigstore-predicate-type", npmType, npm512}, 0,
			"Good Sigstore signature (bundle) by public key SHA256:HpCKVUWf5t2sHMvBN+qGMe6DcDL+wqLMxSizjYHxcQg=\n  logged       https://rekor.sigstore.dev index ", ""},
		{"npm publish, other key", []string{"--bundle", realSigstore("bundle-publish.json"), "--sigstore-key", realSigstore("public-key-validity.pem"), npm512}, 1, "", "pinned public key SHA256:IpekKjxVkmTfB4YqY8q5sGEAeVtF9x3m7jHdhAxpgjQ="},
		{"npm publish, altered package", []string{"--bundle", realSigstore("bundle-publish.json"), "--sigstore-key", realSigstore("publish_key.pub"), js512}, 1, "", "do not include the artifact"},
		{"npm publish under an identity", append([]string{"--bundle", realSigstore("bundle-publish.json")}, append(js, npm512)...), 1, "",
			"only a policy that pins this public key accepts it\nupdeb: hint: the signer is not the one named (the recipe's identity/issuer or public-key:, or --sigstore-identity/--sigstore-issuer/--sigstore-key)"},
		{"public-key-validity, TSA root", append(append([]string{"--bundle", realSigstore("public-key-validity.sigstore.json"), "--sigstore-key", realSigstore("public-key-validity.pem")}, tsaRoot...), realSigstore("public-key-validity.artifact.txt")), 0,
			"by public key SHA256:IpekKjxVkmTfB4YqY8q5sGEAeVtF9x3m7jHdhAxpgjQ=\n  timestamped  2026-06-04T17:43:29Z\n", ""},
		{"public-key-validity, altered artifact", append(append([]string{"--bundle", realSigstore("public-key-validity.sigstore.json"), "--sigstore-key", realSigstore("public-key-validity.pem")}, tsaRoot...), tampered), 1, "", "the bundle belongs to another artifact"},
		{"public-key-validity, other key", append(append([]string{"--bundle", realSigstore("public-key-validity.sigstore.json"), "--sigstore-key", realSigstore("publish_key.pub")}, tsaRoot...), realSigstore("public-key-validity.artifact.txt")), 1, "", "does not verify with the pinned public key"},
		{"public-key-validity, root with a log", []string{"--bundle", realSigstore("public-key-validity.sigstore.json"), "--sigstore-key", realSigstore("public-key-validity.pem"), realSigstore("public-key-validity.artifact.txt")}, 1, "", "no transparency-log entry"},
		{"key and identity", append([]string{"--bundle", realSigstore("bundle-publish.json"), "--sigstore-key", realSigstore("publish_key.pub")}, append(js, npm512)...), 2, "", "excludes --sigstore-identity"},
		{"key with sig and cert", []string{"--sig", tampered, "--cert", tampered, "--sigstore-key", realSigstore("publish_key.pub"), oci256}, 2, "", "--sigstore-key is for key-signed bundles"},
		{"key that is none", []string{"--bundle", realSigstore("bundle-publish.json"), "--sigstore-key", tampered, npm512}, 2, "", "not a PEM public key"},
		{"short digest is a file name", append([]string{"--bundle", realSigstore("bundle-provenance.json")}, append(js, "sha256:abc")...), 2, "", "sha256:abc: no such file or directory; as a digest, ARTIFACT is sha256:HEX (64 hex digits)"},
		{"digest not hex is a file name", append([]string{"--bundle", realSigstore("bundle-provenance.json")}, append(js, "sha256:"+strings.Repeat("g", 64))...), 2, "", "no such file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, append([]string{"--cache", t.TempDir(), "verify-signature"}, c.args...)...)
			if code != c.code || !strings.Contains(stdout, c.stdout) || !strings.Contains(stderr, c.stderr) {
				t.Fatalf("exit %d (want %d)\nstdout: %s\nstderr: %s\nwant stdout %q, stderr %q", code, c.code, stdout, stderr, c.stdout, c.stderr)
			}
		})
	}
}

// A file named like a digest wins over the digest it spells.
func TestVerifySignatureDigestFileWinsCLI(t *testing.T) {
	f := newSigFix(t)
	f.bundle(toolWorkflow, actionsIssuer, f.artifact)
	bundle := filepath.Join(f.mirror, "tool", "v1.0.0", "tool-amd64.sigstore.json")
	root := filepath.Join(f.dir, "root.json")
	sum := sha256.Sum256(f.artifact)
	arg := "sha256:" + hex.EncodeToString(sum[:])
	wf := []string{"--bundle", bundle, "--trusted-root", root, "--sigstore-identity", toolWorkflow, "--sigstore-issuer", actionsIssuer}
	dir := t.TempDir()
	t.Chdir(dir)
	code, stdout, stderr := runCLI(t, append([]string{"--cache", t.TempDir(), "verify-signature"}, append(wf, arg)...)...)
	if code != 0 || !strings.Contains(stdout, "(digest given)") {
		t.Fatalf("digest: exit %d\n%s%s", code, stdout, stderr)
	}
	if err := os.WriteFile(filepath.Join(dir, arg), []byte("other bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = runCLI(t, append([]string{"--cache", t.TempDir(), "verify-signature"}, append(wf, arg)...)...)
	if code != exitCheck || !strings.Contains(stderr, "another artifact") {
		t.Fatalf("file named like the digest: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI(t, append([]string{"--cache", t.TempDir(), "--json", "verify-signature"}, append(wf, "sha256:"+strings.Repeat("0", 64))...)...)
	if code != exitCheck || !strings.Contains(stderr, "the artifact is sha256:"+strings.Repeat("0", 64)) {
		t.Fatalf("other digest: exit %d\n%s%s", code, stdout, stderr)
	}
}

// scripts/sigstore-conformance speaks the conformance suite's protocol
// (verify-bundle with --certificate-identity/--certificate-oidc-issuer or
// --key, FILE_OR_DIGEST last) over this updeb: real material accepted and
// refused, signing and staging without a root refused as usage.
func TestSigstoreConformanceWrapper(t *testing.T) {
	shim := filepath.Join(t.TempDir(), "updeb")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(shim, []byte("#!/bin/sh\nUPDEB_TEST_HELPER=1 exec '"+self+"' -test.run='^TestFetchHelperProcess$' -- \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	const (
		oci256 = "sha256:732112270d7e59418a8c080b134b24cabd67d250d0d0147a97ed95ba5c280aa4"
		npm512 = "sha512:76176ffa33808b54602c7c35de5c6e9a4deb96066dba6533f50ac234f4f1f4c6b3527515dc17c06fbe2860030f410eee69ea20079bd3a2c6f3dcf3b329b10751"
		oauth  = "https://github.com/login/oauth"
		aTxt   = "sha256:a0cfc71271d6e278e57cd332ff957c3f7043fdda354c4cbb190a30d56efa01bf" // the suite's a.txt
	)
	oci := []string{"verify-bundle", "--bundle", realSigstore("oci-attestation.sigstore.json")}
	for _, c := range []struct {
		name string
		args []string
		code int
		out  string
	}{
		{"good", append(oci, "--certificate-identity", "cody@soyland.com", "--certificate-oidc-issuer", oauth, oci256), 0, "Good Sigstore signature (bundle) by cody@soyland.com"},
		{"cosign's root", append(oci, "--certificate-identity", "cody@soyland.com", "--certificate-oidc-issuer", oauth, "--trusted-root", realSigstore("trusted_root_pgi.json"), oci256), 0, "index 175508996"},
		{"wrong identity", append(oci, "--certificate-identity", "cody@soyland.org", "--certificate-oidc-issuer", oauth, oci256), 1, `want "cody@soyland.org"`},
		{"wrong issuer", append(oci, "--certificate-identity", "cody@soyland.com", "--certificate-oidc-issuer", "https://accounts.google.com", oci256), 1, "issuer"},
		{"other digest", append(oci, "--certificate-identity", "cody@soyland.com", "--certificate-oidc-issuer", oauth, "sha256:"+strings.Repeat("0", 64)), 1, "another artifact"},
		{"pinned key", []string{"verify-bundle", "--bundle", realSigstore("bundle-publish.json"), "--key", realSigstore("publish_key.pub"), npm512}, 0, "by public key"},
		// The suite's dsse-statement-unknown-type_fail and
		// dsse-statement-missing-type_fail: refused for the statement's type.
		{"statement of unknown type", []string{"verify-bundle", "--bundle", realSigstore("conformance-unknown-type.sigstore.json"), "--key", realSigstore("conformance-unknown-type.key.pub"),
			"--trusted-root", realSigstore("trusted_root_conformance_unknown-type.json"), aTxt}, 1, `is of _type "https://in-toto.io/Statement/v2"`},
		{"statement of no type", []string{"verify-bundle", "--bundle", realSigstore("conformance-missing-type.sigstore.json"), "--key", realSigstore("conformance-missing-type.key.pub"),
			"--trusted-root", realSigstore("trusted_root_conformance_missing-type.json"), aTxt}, 1, "names no _type"},
		{"sign", []string{"sign-bundle", "--identity-token", "t", "--bundle", "b", "f"}, 2, "does not sign"},
		{"staging without a root", append(append([]string{"verify-bundle", "--staging"}, oci[1:]...), "--certificate-identity", "cody@soyland.com", "--certificate-oidc-issuer", oauth, oci256), 2, "--staging needs --trusted-root"},
		{"no artifact", append(oci, "--certificate-identity", "cody@soyland.com", "--certificate-oidc-issuer", oauth), 2, "usage:"},
		{"unknown option", append(oci, "--rekor-url", "x", oci256), 2, "unknown option --rekor-url"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(filepath.Join("..", "..", "scripts", "sigstore-conformance"), c.args...)
			cmd.Env = append(os.Environ(), "UPDEB="+shim)
			code, out := runScript(t, cmd)
			if code != c.code || !strings.Contains(out, c.out) {
				t.Fatalf("exit %d (want %d), output:\n%s\nwant it to contain %q", code, c.code, out, c.out)
			}
		})
	}
}
