package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/updeb/updeb/pkg/verify/sigstore"
)

// A recipe whose source is a key-signed Sigstore bundle (signature:
// {bundle-url, public-key: FILE}): built and verified under the pinned key
// with the bundle served from the mirror through squid, the key named by its
// fingerprint in verify's output, keys list and the provenance record (which
// lists the key file as an input); a bundle signed by another key is refused
// (exit 1, naming the bundle's URL); a missing key file fails lint (exit 2,
// FILE:LINE:COL).
func TestSigstoreKeyBundleCLI(t *testing.T) {
	f := newSigFix(t)
	sign := func() (bundle, pub []byte) {
		t.Helper()
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		if bundle, pub, err = f.vs.KeyBundle(k, f.artifact); err != nil {
			t.Fatal(err)
		}
		return bundle, pub
	}
	bundle, pub := sign()
	fpr, err := sigstore.KeyFingerprint(pub)
	if err != nil {
		t.Fatal(err)
	}
	const bundleURL = toolURL + ".sigstore.json"
	f.write("mirror/releases.example.org/tool/v1.0.0/tool-amd64.sigstore.json", bundle)
	f.write("recipes/key-tool/tool.pub", pub)
	other, _ := os.ReadFile(filepath.Join(f.dir, "recipes", "bundle-tool.yaml"))
	sig := `{bundle-url: "https://releases.example.org/tool/v{{.Version}}/tool-{{.Arch}}.sigstore.json", public-key: tool.pub}`
	recipe := strings.NewReplacer("bundle-tool", "key-tool").Replace(string(other))
	start := strings.Index(recipe, "signature: ") + len("signature: ")
	end := start + strings.Index(recipe[start:], "\n")
	f.write("recipes/key-tool.yaml", []byte(recipe[:start]+sig+recipe[end:]))

	out := t.TempDir()
	base := []string{"--config", filepath.Join(f.dir, "updeb.yaml"), "--recipes", filepath.Join(f.dir, "recipes"),
		"--cache", t.TempDir(), "--out", out, "--state", filepath.Join(f.dir, "state"), "-q"}
	if code, stdout, stderr := runCLI(t, append(base, "build", "key-tool")...); code != 0 {
		t.Fatalf("build: exit %d\n%s%s", code, stdout, stderr)
	}
	records, _ := filepath.Glob(filepath.Join(out, "*", "*.intoto.json"))
	if len(records) == 0 {
		records, _ = filepath.Glob(filepath.Join(out, "*.intoto.json"))
	}
	if len(records) != 1 {
		t.Fatalf("provenance records %v", records)
	}
	raw, err := os.ReadFile(records[0])
	if err != nil {
		t.Fatal(err)
	}
	var env struct{ Payload string }
	if err := json.Unmarshal(raw, &env); err != nil {
		t.Fatal(err)
	}
	stmt, err := base64.StdEncoding.DecodeString(env.Payload)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"sigstore:public-key=` + fpr + ` rekor=`, `"recipes/key-tool/tool.pub"`, `"sigstore-key"`, bundleURL} {
		if !strings.Contains(string(stmt), want) {
			t.Errorf("provenance record lacks %s:\n%s", want, stmt)
		}
	}

	code, stdout, stderr := f.run("verify", "key-tool")
	if want := "  PASS   signature    Sigstore signature verified: tool (amd64: public-key=" + fpr + " rekor="; code != 0 || !strings.Contains(stdout, want) {
		t.Errorf("verify: exit %d, want %q:\n%s%s", code, want, stdout, stderr)
	}
	code, stdout, stderr = f.run("keys", "list")
	if want := "  key-tool tool: public key tool.pub (" + fpr + ")\n      bundle "; code != 0 || !strings.Contains(stdout, want) {
		t.Errorf("keys list: exit %d, want %q:\n%s%s", code, want, stdout, stderr)
	}

	// The recipe pins another key than the one that signed.
	_, otherPub := sign()
	otherFpr, _ := sigstore.KeyFingerprint(otherPub)
	f.write("recipes/key-tool/tool.pub", otherPub)
	code, stdout, stderr = f.run("build", "key-tool")
	if code != exitCheck || !strings.Contains(stderr, bundleURL) || !strings.Contains(stderr, "does not verify with the pinned public key "+otherFpr) {
		t.Errorf("another key: exit %d (want %d), stderr naming %s:\n%s%s", code, exitCheck, bundleURL, stdout, stderr)
	}

	// No key file: lint refuses the recipe, naming where it says public-key.
	if err := os.Remove(filepath.Join(f.dir, "recipes", "key-tool", "tool.pub")); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = f.run("lint", "key-tool")
	if want := "key-tool.yaml:12:121: signature.public-key: "; code != exitUsage || !strings.Contains(stdout+stderr, want) || !strings.Contains(stdout+stderr, "signature.public-key: ") ||
		!strings.Contains(stdout+stderr, "tool.pub does not exist") {
		t.Errorf("missing key: exit %d (want %d), want %q:\n%s%s", code, exitUsage, want, stdout, stderr)
	}
}
