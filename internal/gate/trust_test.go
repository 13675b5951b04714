package gate

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/config"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/testkit/pgptest"
	"github.com/updeb/updeb/internal/testkit/testenv"
	"github.com/updeb/updeb/pkg/verify/sigstore"
	"github.com/updeb/updeb/pkg/verify/sigstore/sigstoretest"
)

// trustKeys is real material for the trust cases: three OpenPGP keys made
// by gpg (armored public keys), key A again after its expiry was set, and
// A again with a new signing subkey, and two pinned Sigstore keys (PEM)
// with their fingerprints.
type trustKeys struct {
	a, b, c, aExpiring string // armored public keys
	aSubkey            string // key A expiring, with a new signing subkey
	fa, fb, fc         string // their fingerprints
	pem1, pem2         string
	kfp1, kfp2         string
}

func makeTrustKeys(t *testing.T) *trustKeys {
	t.Helper()
	s := pgptest.NewSigner(t)
	dir := t.TempDir()
	k := &trustKeys{}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	k.fa = s.NewKey("Alice <a@example.org>", filepath.Join(dir, "a.asc"))
	k.fb = s.NewKey("Bob <b@example.org>", filepath.Join(dir, "b.asc"))
	k.fc = s.NewKey("Carol <c@example.org>", filepath.Join(dir, "c.asc"))
	k.a, k.b, k.c = read("a.asc"), read("b.asc"), read("c.asc")
	s.GPG("--quick-set-expire", k.fa, "2031-06-15")
	s.GPG("--armor", "--output", filepath.Join(dir, "a2.asc"), "--export", k.fa)
	k.aExpiring = read("a2.asc")
	s.GPG("--quick-add-key", k.fa, "ed25519", "sign", "never")
	s.GPG("--armor", "--output", filepath.Join(dir, "a3.asc"), "--export", k.fa)
	k.aSubkey = read("a3.asc")

	vs, err := sigstoretest.New()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []*string{&k.pem1, &k.pem2} {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		_, pub, err := vs.KeyBundle(key, []byte("artifact"))
		if err != nil {
			t.Fatal(err)
		}
		*p = string(pub)
	}
	if k.kfp1, err = sigstore.KeyFingerprint([]byte(k.pem1)); err != nil {
		t.Fatal(err)
	}
	if k.kfp2, err = sigstore.KeyFingerprint([]byte(k.pem2)); err != nil {
		t.Fatal(err)
	}
	return k
}

const (
	openpgpSig = `signature: {url: "https://example.org/v{{.Version}}/hello-{{.Arch}}.tar.gz.asc", keyring: keys/upstream.asc, signers: [` + fpr + `]}`
	sumsLine   = `    checksums: {url: "https://example.org/v{{.Version}}/SHA256SUMS"}` + "\n"
)

// withSignature is helloRecipe with another signature: setting.
func withSignature(t *testing.T, sig string) string {
	return edit(t, helloRecipe, openpgpSig, sig)
}

// signedBy is helloRecipe signed (detached OpenPGP) under keys/upstream.asc
// by these signers.
func signedBy(t *testing.T, signers ...string) string {
	return withSignature(t, `signature: {url: "https://example.org/v{{.Version}}/hello-{{.Arch}}.tar.gz.asc", keyring: keys/upstream.asc, signers: [`+strings.Join(signers, ", ")+`]}`)
}

// bundleSigned is helloRecipe with a Sigstore bundle under an identity.
func bundleSigned(t *testing.T, identity string) string {
	return withSignature(t, `signature: {bundle-url: "https://example.org/v{{.Version}}/hello-{{.Arch}}.sigstore.json", identity: `+identity+`, issuer: https://accounts.google.com}`)
}

// reusableWorkflow is slsa-github-generator's reusable workflow.
const reusableWorkflow = "https://github.com/slsa-framework/slsa-github-generator/.github/workflows/generator_generic_slsa3.yml@refs/tags/v2.1.0"

// reusableSigned is helloRecipe with a Sigstore bundle signed by
// reusableWorkflow for a run of repository repo.
func reusableSigned(t *testing.T, repo string) string {
	return withSignature(t, `signature: {bundle-url: "https://example.org/v{{.Version}}/hello-{{.Arch}}.sigstore.json", identity: `+reusableWorkflow+`, issuer: https://token.actions.githubusercontent.com, source-repository: `+repo+`}`)
}

// bumped is a recipe moved to version 1.2.1 with other pinned bytes.
func bumped(t *testing.T, text string) string {
	return edit(t, text, "version: 1.2.0", "version: 1.2.1",
		"019250d9e08f5242159d5dcea64c8c7cf77924cd8c69460ae7af5d4ad51d032e", "7f4b9b5c6bc993bd427c4ba7fd1aea86dab4083b51cb8c84ab533926ddb71665")
}

// gateBase commits base in a throwaway git repository, then writes head
// over it (an empty content removes the file), and runs the base
// comparison of recipes/hello.yaml at HEAD against the commit, as `updeb
// verify --base HEAD` does after its builds. It returns the report.
func gateBase(t *testing.T, base, head map[string]string) *Report {
	t.Helper()
	return gateBaseOf(t, "recipes/hello.yaml", base, head)
}

// gateBaseOf is gateBase for the recipe file (relative to the repository).
func gateBaseOf(t *testing.T, file string, base, head map[string]string) *Report {
	t.Helper()
	tools := testenv.RequireTool(t, "git")
	dir := t.TempDir()
	git := func(args ...string) {
		testenv.Run(t, tools[0], append([]string{"-C", dir, "-c", "user.email=t@example.org", "-c", "user.name=t"}, args...)...)
	}
	write := func(files map[string]string) {
		for name, content := range files {
			p := filepath.Join(dir, name)
			if content == "" {
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(map[string]string{"README": "a recipes repository\n"})
	write(base)
	git("init", "-q")
	git("add", "-A")
	git("commit", "-q", "-m", "base")
	write(head)
	r, err := recipe.Load(filepath.Join(dir, filepath.FromSlash(file)), recipe.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rr := RecipeReport{Recipe: r.Name, File: r.Path}
	var c checks
	compareBase(context.Background(), r, Options{Base: &Base{Git: tools[0], Rev: "HEAD"}, TempDir: t.TempDir()}, &rr, &c)
	rr.Results = c
	rep := &Report{Review: []ReviewItem{}}
	rep.add(rr)
	return rep
}

// TestGateTrust runs the base comparison in a real git repository on each
// kind of trust change, with real keys (gpg) and real Sigstore keys: each
// is a REVIEW line naming exactly what changed (fingerprints added and
// removed, old and new identity or key), never a version failure, and the
// report passes (exit 0); a real package change without a new version
// still fails (exit 1).
func TestGateTrust(t *testing.T) {
	k := makeTrustKeys(t)
	sorted := func(list ...string) string {
		slices.Sort(list)
		return strings.Join(list, ", ")
	}
	keyring := func(keys ...string) string { return strings.Join(keys, "\n") }
	const (
		recipeFile = "recipes/hello.yaml"
		ring       = "keys/upstream.asc"
		sumsURL    = "https://example.org/v{{.Version}}/SHA256SUMS"
		unchanged  = "the packages are unchanged since HEAD (1.2.0-1)"
	)
	clearsigned := func(text string) string {
		return edit(t, text, sumsLine, `    checksums: {url: "`+sumsURL+`", clearsigned: {keyring: keys/sums.asc}}`+"\n")
	}
	keyed := withSignature(t, `signature: {bundle-url: "https://example.org/v{{.Version}}/hello-{{.Arch}}.sigstore.json", public-key: hello.pub}`)
	archIdentity := bundleSigned(t, `"https://github.com/hello/{{.Arch}}-builds/.github/workflows/release.yml@refs/tags/v{{.Version}}"`)
	tests := []struct {
		name       string
		base, head map[string]string
		version    string // the version check's detail
		kinds      []Kind
		lines      []string // the REVIEW lines, exactly, in order
		fail       bool     // the report fails (exit 1)
	}{
		{"new recipe with a new keyring", nil,
			map[string]string{recipeFile: signedBy(t, k.fa), ring: keyring(k.a, k.b)},
			"new recipe (not at HEAD)",
			[]Kind{KindNewRecipe, KindKeyring, KindSigners, KindCrossCheck},
			[]string{
				"new recipe hello (not at HEAD): review the trust of each of its sources (hello)",
				"source hello: keyring keys/upstream.asc (new source): 2 key(s): " + sorted(k.fa, k.fb),
				"source hello: signers " + k.fa + " (new source)",
				"source hello: cross-check against the upstream checksum file " + sumsURL + " (new source)",
			}, false},
		{"key added to a keyring",
			map[string]string{recipeFile: signedBy(t, k.fa), ring: keyring(k.a)},
			map[string]string{ring: keyring(k.a, k.c)},
			unchanged, []Kind{KindKeyring},
			[]string{"source hello: keyring keys/upstream.asc: key " + k.fc + " added"}, false},
		{"key removed from a keyring",
			map[string]string{recipeFile: signedBy(t, k.fa), ring: keyring(k.a, k.b)},
			map[string]string{ring: keyring(k.a)},
			unchanged, []Kind{KindKeyring},
			[]string{"source hello: keyring keys/upstream.asc: key " + k.fb + " removed"}, false},
		{"key replaced and another's expiry changed",
			map[string]string{recipeFile: signedBy(t, k.fa), ring: keyring(k.a, k.b)},
			map[string]string{ring: keyring(k.aExpiring, k.c)},
			unchanged, []Kind{KindKeyring},
			[]string{"source hello: keyring keys/upstream.asc: key " + k.fc + " added; key " + k.fb + " removed; key " + k.fa +
				" changed: now expires 2031-06-15; no longer does not expire"}, false},
		{"keyring moved to another file, the same keys",
			map[string]string{recipeFile: signedBy(t, k.fa), ring: keyring(k.a)},
			map[string]string{recipeFile: strings.Replace(signedBy(t, k.fa), "keys/upstream.asc", "keys/hello.asc", 1), ring: "", "keys/hello.asc": keyring(k.a)},
			unchanged, nil, nil, false},
		{"signers narrowed",
			map[string]string{recipeFile: signedBy(t, k.fa, k.fb), ring: keyring(k.a, k.b)},
			map[string]string{recipeFile: signedBy(t, k.fa)},
			unchanged, []Kind{KindSigners},
			[]string{"source hello: signers: " + k.fb + " removed (now " + k.fa + ")"}, false},
		{"a signer the keyring lacks",
			map[string]string{recipeFile: signedBy(t, k.fa), ring: keyring(k.a, k.b)},
			map[string]string{recipeFile: signedBy(t, k.fa, k.fc)},
			unchanged, []Kind{KindSigners},
			[]string{"source hello: signers: " + k.fc + " (not in keys/upstream.asc) added (now " + sorted(k.fa, k.fc) + ")"}, false},
		{"signers widened to the whole keyring",
			map[string]string{recipeFile: signedBy(t, k.fa), ring: keyring(k.a, k.b)},
			map[string]string{recipeFile: withSignature(t, `signature: {url: "https://example.org/v{{.Version}}/hello-{{.Arch}}.tar.gz.asc", keyring: keys/upstream.asc}`)},
			unchanged, []Kind{KindSigners},
			[]string{"source hello: signers: any key of keys/upstream.asc now (were " + k.fa + ")"}, false},
		{"signature form changed to a Sigstore bundle",
			map[string]string{recipeFile: signedBy(t, k.fa), ring: keyring(k.a)},
			map[string]string{recipeFile: bundleSigned(t, "rel@example.org")},
			unchanged, []Kind{KindSignatureForm, KindKeyring, KindSigners, KindSigstoreIdentity, KindSigstoreIssuer},
			[]string{
				"source hello: signature form changed: Sigstore bundle, was detached OpenPGP signature",
				"source hello: keyring keys/upstream.asc no longer used (it held " + k.fa + ")",
				"source hello: signers no longer apply (were " + k.fa + ")",
				"source hello: Sigstore identity rel@example.org (new)",
				"source hello: Sigstore issuer https://accounts.google.com (new)",
			}, false},
		{"source set to none",
			map[string]string{recipeFile: signedBy(t, k.fa), ring: keyring(k.a)},
			map[string]string{recipeFile: withSignature(t, `signature: {none: upstream stopped signing in 1.2}`)},
			unchanged, []Kind{KindSignatureNone, KindKeyring, KindSigners},
			[]string{
				`source hello: no signature now: "upstream stopped signing in 1.2" (was detached OpenPGP signature)`,
				"source hello: keyring keys/upstream.asc no longer used (it held " + k.fa + ")",
				"source hello: signers no longer apply (were " + k.fa + ")",
			}, false},
		{"Sigstore identity changed",
			map[string]string{recipeFile: bundleSigned(t, "rel@example.org")},
			map[string]string{recipeFile: bundleSigned(t, "someone@example.net")},
			unchanged, []Kind{KindSigstoreIdentity},
			[]string{"source hello: Sigstore identity someone@example.net, was rel@example.org"}, false},
		// The identity names a reusable workflow: the source repository is
		// what names whose runs count.
		{"Sigstore source repository changed",
			map[string]string{recipeFile: reusableSigned(t, "https://github.com/example/hello")},
			map[string]string{recipeFile: reusableSigned(t, "https://github.com/attacker/hello")},
			unchanged, []Kind{KindSigstoreSource},
			[]string{"source hello: Sigstore source repository https://github.com/attacker/hello, was https://github.com/example/hello"}, false},
		{"Sigstore source repository added",
			map[string]string{recipeFile: bundleSigned(t, "rel@example.org")},
			map[string]string{recipeFile: reusableSigned(t, "https://github.com/example/hello")},
			unchanged, []Kind{KindSigstoreIdentity, KindSigstoreIssuer, KindSigstoreSource},
			[]string{
				"source hello: Sigstore identity " + reusableWorkflow + ", was rel@example.org",
				"source hello: Sigstore issuer https://token.actions.githubusercontent.com, was https://accounts.google.com",
				"source hello: Sigstore source repository https://github.com/example/hello (new)",
			}, false},
		// Which attestations count: an SBOM counted in place of the build
		// provenance is a change of trust.
		{"Sigstore predicate types named",
			map[string]string{recipeFile: bundleSigned(t, "rel@example.org")},
			map[string]string{recipeFile: edit(t, bundleSigned(t, "rel@example.org"), "issuer: https://accounts.google.com}", "issuer: https://accounts.google.com, predicate-types: [https://spdx.dev/Document]}")},
			unchanged, []Kind{KindSigstorePredicates},
			[]string{"source hello: Sigstore predicate types https://spdx.dev/Document, was SLSA provenance (https://slsa.dev/provenance/v1, https://slsa.dev/provenance/v0.2)"}, false},
		{"pinned Sigstore key replaced",
			map[string]string{recipeFile: keyed, "recipes/hello/hello.pub": k.pem1},
			map[string]string{"recipes/hello/hello.pub": k.pem2},
			unchanged, []Kind{KindSigstoreKey},
			[]string{"source hello: Sigstore public key hello.pub " + k.kfp2 + ", was " + k.kfp1}, false},
		{"cross-check removed",
			map[string]string{recipeFile: signedBy(t, k.fa), ring: keyring(k.a)},
			map[string]string{recipeFile: edit(t, signedBy(t, k.fa), sumsLine, "")},
			unchanged, []Kind{KindCrossCheck},
			[]string{"source hello: cross-check against the upstream checksum file " + sumsURL + " removed"}, false},
		{"clearsigned checksum file keyring changed",
			map[string]string{recipeFile: clearsigned(signedBy(t, k.fa)), ring: keyring(k.a), "keys/sums.asc": keyring(k.b)},
			map[string]string{"keys/sums.asc": keyring(k.b, k.c)},
			unchanged, []Kind{KindChecksumsKeyring},
			[]string{"source hello: checksum file keyring keys/sums.asc: key " + k.fc + " added"}, false},
		{"a pin of another algorithm beside the same sha256",
			map[string]string{recipeFile: signedBy(t, k.fa), ring: keyring(k.a)},
			map[string]string{recipeFile: edit(t, signedBy(t, k.fa), "    signature:", "    sha512: {amd64: cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e}\n    signature:")},
			unchanged, []Kind{KindPins},
			[]string{"source hello: pinned digests sha256, sha512, were sha256"}, false},
		{"signers reordered, in lower case: no change",
			map[string]string{recipeFile: signedBy(t, k.fa, k.fb), ring: keyring(k.a, k.b)},
			map[string]string{recipeFile: signedBy(t, strings.ToLower(k.fb), k.fa)},
			unchanged, nil, nil, false},
		{"a Sigstore identity that a template makes another through the upstream architecture name",
			map[string]string{recipeFile: archIdentity},
			map[string]string{recipeFile: edit(t, archIdentity, "architectures: {amd64: amd64}", "architectures: {amd64: x86_64}")},
			unchanged, []Kind{KindSigstoreIdentity},
			[]string{"source hello: Sigstore identity https://github.com/hello/x86_64-builds/.github/workflows/release.yml@refs/tags/v{{.Version}}, was https://github.com/hello/amd64-builds/.github/workflows/release.yml@refs/tags/v{{.Version}}"}, false},
		{"the checksum file moved to another host",
			map[string]string{recipeFile: signedBy(t, k.fa), ring: keyring(k.a)},
			map[string]string{recipeFile: edit(t, signedBy(t, k.fa), sumsURL, "https://mirror.example.net/v{{.Version}}/SHA256SUMS")},
			unchanged, []Kind{KindCrossCheck},
			[]string{"source hello: cross-check against the upstream checksum file https://mirror.example.net/v{{.Version}}/SHA256SUMS, was " + sumsURL}, false},
		{"a bump downloaded from another host (an unsigned source: the new pins are what that host serves)",
			map[string]string{recipeFile: withSignature(t, `signature: {none: upstream signs nothing}`)},
			map[string]string{recipeFile: edit(t, bumped(t, withSignature(t, `signature: {none: upstream signs nothing}`)), "url: https://example.org/v", "url: https://examp1e.org/v")},
			"1.2.0-1 -> 1.2.1-1", []Kind{KindSourceURL},
			[]string{"source hello: downloaded from https://examp1e.org/v{{.Version}}/hello-{{.Arch}}.tar.gz, was https://example.org/v{{.Version}}/hello-{{.Arch}}.tar.gz, with other pinned bytes: they are what the new URL serves"}, false},
		// The same bytes from another host: what vouches for the next
		// bump's bytes moved with it, where nothing but the URL does.
		{"an unsigned source moved to another host with the same bytes",
			map[string]string{recipeFile: edit(t, withSignature(t, `signature: {none: upstream signs nothing}`), sumsLine, "")},
			map[string]string{recipeFile: edit(t, withSignature(t, `signature: {none: upstream signs nothing}`), sumsLine, "", "url: https://example.org/v", "url: https://examp1e.org/v")},
			unchanged, []Kind{KindSourceURL},
			[]string{"source hello: downloaded from https://examp1e.org/v{{.Version}}/hello-{{.Arch}}.tar.gz, was https://example.org/v{{.Version}}/hello-{{.Arch}}.tar.gz, the same pinned bytes: nothing but its URL vouches for a source without a signature or cross-check, so the pins of its next bump will be what the new URL serves"}, false},
		{"an unsigned source with a cross-check moved to another host with the same bytes: no trust change",
			map[string]string{recipeFile: withSignature(t, `signature: {none: upstream signs nothing}`)},
			map[string]string{recipeFile: edit(t, withSignature(t, `signature: {none: upstream signs nothing}`), "url: https://example.org/v", "url: https://examp1e.org/v")},
			unchanged, nil, nil, false},
		{"a signed source moved to another host with the same bytes: no trust change",
			map[string]string{recipeFile: signedBy(t, k.fa), ring: keyring(k.a)},
			map[string]string{recipeFile: edit(t, signedBy(t, k.fa), "url: https://example.org/v", "url: https://examp1e.org/v")},
			unchanged, nil, nil, false},
		{"a bump downloaded from the same URL template: no change",
			map[string]string{recipeFile: signedBy(t, k.fa), ring: keyring(k.a)},
			map[string]string{recipeFile: bumped(t, signedBy(t, k.fa))},
			"1.2.0-1 -> 1.2.1-1", nil, nil, false},
		{"a source renamed in place, the same bytes and anchors",
			map[string]string{recipeFile: signedBy(t, k.fa), ring: keyring(k.a)},
			map[string]string{recipeFile: edit(t, signedBy(t, k.fa), "  - name: hello\n    url", "  - name: bin\n    url", "source: hello, path: hello", "source: bin, path: hello", "source: hello, path: LICENSE", "source: bin, path: LICENSE")},
			unchanged, nil, nil, false},
		{"the watch moved to another GitHub repository (a fork)",
			map[string]string{recipeFile: signedBy(t, k.fa) + "watch: {github: hello/hello, tag-prefix: v, track: 1.x}\n", ring: keyring(k.a)},
			map[string]string{recipeFile: signedBy(t, k.fa) + "watch: {github: attacker/hello, tag-prefix: v, track: 1.x}\n"},
			unchanged, []Kind{KindWatch},
			[]string{"release source (watch) github attacker/hello, was github hello/hello: updeb outdated, bump and plan --apply take the next versions and release days from it, and plan's description links its release notes; review that it is upstream's (not a fork) before merging"}, false},
		{"the watch moved to a listing URL",
			map[string]string{recipeFile: signedBy(t, k.fa) + "watch: {github: hello/hello, tag-prefix: v}\n", ring: keyring(k.a)},
			map[string]string{recipeFile: signedBy(t, k.fa) + "watch: {url: 'https://examp1e.org/releases', pattern: 'hello-([0-9.]+)\\.tar'}\n"},
			unchanged, []Kind{KindWatch, KindWatch},
			[]string{
				"release source (watch) https://examp1e.org/releases (pattern hello-([0-9.]+)\\.tar), was github hello/hello: updeb outdated, bump and plan --apply take the next versions and release days from it, and plan's description links its release notes; review that it is upstream's (not a fork) before merging",
				`release tags (watch tag-prefix) "", was "v": updeb outdated, bump and plan --apply take the next versions and release days from the tags with this prefix alone (in a repository of several components, another prefix is another component's releases); review that they are this recipe's before merging`,
			}, false},
		{"the watch's tag prefix moved to another component's tags",
			map[string]string{recipeFile: signedBy(t, k.fa) + "watch: {github: hello/tools, tag-prefix: hello/v}\n", ring: keyring(k.a)},
			map[string]string{recipeFile: signedBy(t, k.fa) + "watch: {github: hello/tools, tag-prefix: v}\n"},
			unchanged, []Kind{KindWatch},
			[]string{`release tags (watch tag-prefix) "v", was "hello/v": updeb outdated, bump and plan --apply take the next versions and release days from the tags with this prefix alone (in a repository of several components, another prefix is another component's releases); review that they are this recipe's before merging`}, false},
		{"the watch follows pre-releases now, and a listing's tag prefix is gone",
			map[string]string{recipeFile: signedBy(t, k.fa) + "watch: {url: 'https://example.org/releases', pattern: 'hello-([0-9.]+)\\.tar', tag-prefix: v}\n", ring: keyring(k.a)},
			map[string]string{recipeFile: signedBy(t, k.fa) + "watch: {url: 'https://example.org/releases', pattern: 'hello-([0-9.]+)\\.tar', prereleases: true}\n"},
			unchanged, []Kind{KindWatch, KindWatch},
			[]string{
				`release tags (watch tag-prefix) "", was "v": updeb outdated, bump and plan --apply take the next versions and release days from the tags with this prefix alone (in a repository of several components, another prefix is another component's releases); review that they are this recipe's before merging`,
				"pre-releases count now (watch prereleases: true), they did not: updeb outdated, bump and plan --apply take the next versions and release days from release candidates and other pre-releases too; review that nodes should get them before merging",
			}, false},
		{"the watch's track moved, or its repository written in another case: no change",
			map[string]string{recipeFile: signedBy(t, k.fa) + "watch: {github: hello/hello, tag-prefix: v, track: 1.x}\n", ring: keyring(k.a)},
			map[string]string{recipeFile: signedBy(t, k.fa) + "watch: {github: Hello/Hello, tag-prefix: v, track: 2.x}\n"},
			unchanged, nil, nil, false},
		{"a real package change without a new version fails",
			map[string]string{recipeFile: signedBy(t, k.fa), ring: keyring(k.a)},
			map[string]string{recipeFile: edit(t, signedBy(t, k.fa), "section: utils", "section: net")},
			"the packages change (the changes listed) but the Debian version 1.2.0-1 does not increase over 1.2.0-1 at HEAD: raise version, revision or epoch", nil, nil, true},
		// What changed the packages that the changes do not list is named.
		{"other pinned bytes, a release date and a repository suite without a new version fail, naming them",
			map[string]string{recipeFile: signedBy(t, k.fa), ring: keyring(k.a)},
			map[string]string{recipeFile: edit(t, signedBy(t, k.fa), "019250d9e08f5242159d5dcea64c8c7cf77924cd8c69460ae7af5d4ad51d032e", "7f4b9b5c6bc993bd427c4ba7fd1aea86dab4083b51cb8c84ab533926ddb71665",
				"release-date: 2026-03-14", "release-date: 2026-03-15", "architectures:", "repo: {suite: stable}\narchitectures:")},
			"the packages change (the pinned bytes of source hello, the release date, the repository component or suite: no byte of the packages, but the same version would name two publications, the changes listed) but the Debian version 1.2.0-1 does not increase over 1.2.0-1 at HEAD: raise version, revision or epoch", nil, nil, true},
		{"a repository component alone without a new version fails, saying why",
			map[string]string{recipeFile: signedBy(t, k.fa), ring: keyring(k.a)},
			map[string]string{recipeFile: edit(t, signedBy(t, k.fa), "architectures:", "repo: {component: contrib}\narchitectures:")},
			"the packages change (the repository component or suite: no byte of the packages, but the same version would name two publications, the changes listed) but the Debian version 1.2.0-1 does not increase over 1.2.0-1 at HEAD: raise version, revision or epoch", nil, nil, true},
		{"a trust change beside a package change still fails without a new version",
			map[string]string{recipeFile: signedBy(t, k.fa, k.fb), ring: keyring(k.a, k.b)},
			map[string]string{recipeFile: edit(t, signedBy(t, k.fa), "section: utils", "section: net")},
			"the packages change (the changes listed) but the Debian version 1.2.0-1 does not increase over 1.2.0-1 at HEAD: raise version, revision or epoch",
			[]Kind{KindSigners}, []string{"source hello: signers: " + k.fb + " removed (now " + k.fa + ")"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := gateBase(t, tt.base, tt.head)
			rr := rep.Recipes[0]
			var version, trustPass *Result
			var review []string
			for i, x := range rr.Results {
				switch {
				case x.Check == "version":
					version = &rr.Results[i]
				case x.Check == "trust" && x.Status == Pass:
					trustPass = &rr.Results[i]
				case x.Status == Warn:
					review = append(review, x.Detail)
				}
			}
			wantStatus := Pass
			if tt.fail {
				wantStatus = Fail
			}
			if version == nil || version.Status != wantStatus || version.Detail != tt.version {
				t.Errorf("version check %+v, want %s %q", version, wantStatus, tt.version)
			}
			if !slices.Equal(review, tt.lines) {
				t.Errorf("REVIEW lines:\n  %s\nwant:\n  %s", strings.Join(review, "\n  "), strings.Join(tt.lines, "\n  "))
			}
			var kinds []Kind
			for i, it := range rep.Review {
				kinds = append(kinds, it.Kind)
				if it.Recipe != "hello" || it.Message != review[i] || it.Old == nil || it.New == nil {
					t.Errorf("review item %+v: want recipe hello, the REVIEW line, old and new lists", it)
				}
			}
			if !slices.Equal(kinds, tt.kinds) {
				t.Errorf("review kinds %v, want %v", kinds, tt.kinds)
			}
			if rep.Warnings != len(tt.lines) {
				t.Errorf("%d warnings, want one per REVIEW line (%d)", rep.Warnings, len(tt.lines))
			}
			if (trustPass != nil) != (len(tt.lines) == 0) {
				t.Errorf("trust PASS line %+v with %d REVIEW lines", trustPass, len(tt.lines))
			}
			err := rep.Err()
			if tt.fail != (err != nil) || tt.fail && !errors.Is(err, ErrFailed) {
				t.Errorf("Err() = %v, want failed: %v (exit %d)", err, tt.fail, map[bool]int{false: 0, true: 1}[tt.fail])
			}
		})
	}
}

// A key that keeps its fingerprint but gains a signing subkey can sign
// with a key it could not before: a keyring change naming the subkey.
func TestGateTrustNewSubkey(t *testing.T) {
	k := makeTrustKeys(t)
	rep := gateBase(t, map[string]string{"recipes/hello.yaml": signedBy(t, k.fa), "keys/upstream.asc": k.aExpiring},
		map[string]string{"keys/upstream.asc": k.aSubkey})
	if len(rep.Review) != 1 || rep.Review[0].Kind != KindKeyring || !slices.Equal(rep.Review[0].Changed, []string{k.fa}) {
		t.Fatalf("review %+v, want one keyring change of key %s", rep.Review, k.fa)
	}
	msg := rep.Review[0].Message
	if !strings.HasPrefix(msg, "source hello: keyring keys/upstream.asc: key "+k.fa+" changed: now subkey ") || !strings.Contains(msg, " can sign") || rep.Err() != nil {
		t.Errorf("REVIEW line %q (%v), want key %s changed: now subkey ... can sign", msg, rep.Err(), k.fa)
	}
}

// TestReviewItemJSON is the shape --json gives each REVIEW item: kind,
// recipe, source, subject, old and new lists (never null), added and
// removed fingerprints, and the line.
func TestReviewItemJSON(t *testing.T) {
	k := makeTrustKeys(t)
	rep := gateBase(t,
		map[string]string{"recipes/hello.yaml": signedBy(t, k.fa), "keys/upstream.asc": k.a + k.b},
		map[string]string{"keys/upstream.asc": k.a + k.c})
	got, err := json.Marshal(rep.Review)
	if err != nil {
		t.Fatal(err)
	}
	olds, news := []string{k.fa, k.fb}, []string{k.fa, k.fc}
	slices.Sort(olds)
	slices.Sort(news)
	q := func(list []string) string { b, _ := json.Marshal(list); return string(b) }
	want := fmt.Sprintf(`[{"kind":"keyring","recipe":"hello","source":"hello","subject":"keys/upstream.asc","old":%s,"new":%s,"added":["%s"],"removed":["%s"],"message":"source hello: keyring keys/upstream.asc: key %s added; key %s removed"}]`,
		q(olds), q(news), k.fc, k.fb, k.fc, k.fb)
	if string(got) != want {
		t.Errorf("review JSON\n%s\nwant\n%s", got, want)
	}
	// Without a base, the list is empty, not null.
	empty, _ := json.Marshal(&Report{Review: []ReviewItem{}})
	if !strings.Contains(string(empty), `"review":[]`) {
		t.Errorf("no review items: %s", empty)
	}
}

// A Description change is shown as the lines that changed, with one line
// around each, not as both texts in full.
func TestGateDescriptionDiff(t *testing.T) {
	long := "    description: |\n      Line one.\n      Line two.\n      Line three.\n      Line four.\n      Line five.\n"
	base := edit(t, helloRecipe, "    description: Says hello.\n", long)
	head := edit(t, base, `revision: "1"`, `revision: "2"`, "Line four.", "Line 4, reworded.")
	rep := gateBase(t, map[string]string{"recipes/hello.yaml": base, "keys/upstream.asc": "key\n"}, map[string]string{"recipes/hello.yaml": head})
	want := []string{"hello [amd64]: Description:\n  ...\n    Line three.\n  - Line four.\n  + Line 4, reworded.\n    Line five."}
	if got := rep.Recipes[0].Changes; !slices.Equal(got, want) {
		t.Errorf("changes %q, want %q", got, want)
	}
	if rep.Err() != nil || len(rep.Review) != 0 {
		t.Errorf("a description change: %v, review %v", rep.Err(), rep.Review)
	}
}

// TestLineDiff: changed lines with one line of context, "..." for lines
// left out, everything when nothing is shared; a huge text stays bounded.
func TestLineDiff(t *testing.T) {
	tests := []struct{ a, b, want string }{
		{"s\na\nb\nc\nd\ne", "s\na\nb\nC\nd\ne", "  ...\n    b\n  - c\n  + C\n    d\n  ..."},
		{"one", "two", "  - one\n  + two"},
		{"s\nx", "s\nx\ny", "  ...\n    x\n  + y"},
		{"s\n\nx", "s\n\ny", "  ...\n\n  - x\n  + y"}, // an empty context line has no trailing blanks
		{"a\nb\nc\nd\ne\nf\ng", "a\nB\nc\nd\ne\nF\ng", "    a\n  - b\n  + B\n    c\n  ...\n    e\n  - f\n  + F\n    g"},
	}
	for _, tt := range tests {
		if got := lineDiff(tt.a, tt.b); got != tt.want {
			t.Errorf("lineDiff(%q, %q) =\n%s\nwant\n%s", tt.a, tt.b, got, tt.want)
		}
	}
	var x, y []string
	for i := range 5000 {
		x = append(x, fmt.Sprint("old ", i))
		y = append(y, fmt.Sprint("new ", i))
	}
	if got := strings.Count(lineDiff(strings.Join(x, "\n"), strings.Join(y, "\n")), "\n"); got != 9999 {
		t.Errorf("5000 lines replaced: %d lines of diff, want 10000", got+1)
	}
}

// TestBaseExtract writes the base revision's files as the revision holds
// them (git show's bytes): a .gitattributes' export-ignore and export-subst,
// which git archive applies, change nothing; modes and links that stay
// inside are kept, a link out is left out, for the recipe's checks to refuse
// what needs it.
func TestBaseExtract(t *testing.T) {
	tools := testenv.RequireTool(t, "git")
	dir := t.TempDir()
	write, git := testRepo(t, tools[0], dir)
	write(".gitattributes", "keys/* export-ignore\nrecipes/hello/hello.conf export-subst\n")
	write("keys/upstream.asc", "key\n")
	write("recipes/hello/hello.conf", "# $Format:%H$\n")
	write("recipes/hello/run.sh", "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(dir, "recipes/hello/run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"in": "hello.conf", "out": "../../../etc/passwd", "abs": "/etc/passwd"} {
		if err := os.Symlink(target, filepath.Join(dir, "recipes/hello", name)); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q")
	git("add", "-A")
	git("commit", "-q", "-m", "base")
	out := t.TempDir()
	b := &Base{Git: tools[0], Rev: "HEAD"}
	if err := b.extract(context.Background(), dir, out, []string{"keys/upstream.asc", "recipes/hello"}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"keys/upstream.asc", "recipes/hello/hello.conf", "recipes/hello/run.sh"} {
		want, err := b.git(context.Background(), dir, "show", "HEAD:"+name)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(filepath.Join(out, name)); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %q (%v), want %q as git show has it", name, got, err, want)
		}
	}
	if l, err := os.Readlink(filepath.Join(out, "recipes/hello/in")); err != nil || l != "hello.conf" {
		t.Errorf("the link inside: %q, %v", l, err)
	}
	if fi, err := os.Stat(filepath.Join(out, "recipes/hello/run.sh")); err != nil || fi.Mode().Perm()&0o111 == 0 {
		t.Errorf("the executable lost its mode: %v, %v", fi, err)
	}
	for _, l := range []string{"out", "abs"} {
		if _, err := os.Lstat(filepath.Join(out, "recipes/hello", l)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("link %s out of the folder was made: %v", l, err)
		}
	}
}

// Changed picks what a change touches: a key added to a keyring two recipes
// share changes both (no recipe file changed), a file in a recipe's own
// folder changes it, a new recipe not yet committed is changed, and so
// does a link put in the place of a keyring or folder; a recipe whose
// file, folder and keyrings are as they were is not.
func TestChanged(t *testing.T) {
	tools := testenv.RequireTool(t, "git")
	k := makeTrustKeys(t)
	dir := t.TempDir()
	write, git := testRepo(t, tools[0], dir)
	named := func(name, ring string) string {
		return edit(t, signedBy(t, k.fa), "name: hello\nversion", "name: "+name+"\nversion", "keys/upstream.asc", ring)
	}
	write("recipes/aa.yaml", named("aa", "keys/shared.asc"))
	write("recipes/bb.yaml", named("bb", "keys/shared.asc"))
	write("recipes/cc.yaml", named("cc", "keys/other.asc"))
	write("recipes/dd.yaml", named("dd", "keys/other.asc"))
	write("recipes/dd/notes.txt", "one\n")
	write("keys/shared.asc", k.a)
	write("keys/other.asc", k.b)
	git("init", "-q")
	git("add", "-A")
	git("commit", "-q", "-m", "base")
	write("keys/shared.asc", k.a+k.c)
	write("recipes/dd/notes.txt", "two\n")
	write("recipes/ee.yaml", named("ee", "keys/other.asc"))
	if got := changedNames(t, tools[0], dir, "aa", "bb", "cc", "dd", "ee"); got != "aa bb dd ee" {
		t.Errorf("changed %v, want aa bb dd ee", got)
	}
	// A keyring replaced by a link to another keyring (unchanged itself)
	// changes the recipes that name it: git lists the link, not what it
	// leads to. So does a recipe folder that becomes a link.
	git("add", "-A")
	git("commit", "-q", "-m", "change")
	for _, l := range [][2]string{{"shared.asc", "keys/other.asc"}, {"dd", "recipes/bb"}} {
		if err := os.Remove(filepath.Join(dir, l[1])); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		if err := os.Symlink(l[0], filepath.Join(dir, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	if got := changedNames(t, tools[0], dir, "aa", "bb", "cc", "dd", "ee"); got != "bb cc dd ee" {
		t.Errorf("after links: changed %v, want bb cc dd ee", got)
	}
	if _, err := (&Base{Git: tools[0], Rev: "no-such-rev"}).Changed(context.Background(), dir, nil); !errors.Is(err, ErrBase) {
		t.Errorf("an unknown revision: %v", err)
	}
	// A short hash of two commits says so, not that it is no commit.
	seen, short, objects := map[string]string{}, "", t.TempDir()
	for i := 0; short == ""; i++ {
		body := fmt.Sprintf("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor t <t@example.org> 0 +0000\ncommitter t <t@example.org> 0 +0000\n\n%d\n", i)
		sum := sha1.Sum(fmt.Appendf(nil, "commit %d\x00%s", len(body), body))
		p := hex.EncodeToString(sum[:2])
		if prev, ok := seen[p]; ok {
			short = p
			for j, b := range []string{prev, body} {
				f := filepath.Join(objects, strconv.Itoa(j))
				if err := os.WriteFile(f, []byte(b), 0o644); err != nil {
					t.Fatal(err)
				}
				git("hash-object", "-t", "commit", "-w", f)
			}
		}
		seen[p] = body
	}
	if _, err := (&Base{Git: tools[0], Rev: short}).Changed(context.Background(), dir, nil); !errors.Is(err, ErrBase) || !strings.Contains(fmt.Sprint(err), "short hash of more than one commit") {
		t.Errorf("an ambiguous short hash %s: %v", short, err)
	}
	// The same under a translated git (git's words are what the gate
	// reads): it runs git in the C locale whatever the user's is.
	t.Setenv("LANGUAGE", "de")
	t.Setenv("LC_ALL", "de_DE.UTF-8")
	if _, err := (&Base{Git: tools[0], Rev: short}).Changed(context.Background(), dir, nil); !errors.Is(err, ErrBase) || !strings.Contains(fmt.Sprint(err), "short hash of more than one commit") {
		t.Errorf("an ambiguous short hash %s, under LC_ALL=de_DE.UTF-8: %v", short, err)
	}
	// A shallow clone (as CI checks out) lacks the base: the error says to
	// fetch it.
	shallow := filepath.Join(t.TempDir(), "shallow")
	git("clone", "-q", "--depth=1", "file://"+dir, shallow)
	if _, err := (&Base{Git: tools[0], Rev: "HEAD~1"}).Changed(context.Background(), shallow, nil); !errors.Is(err, ErrBase) || !strings.Contains(err.Error(), "shallow clone: fetch the base revision") {
		t.Errorf("a base missing from a shallow clone: %v", err)
	}
}

// changedNames loads the recipes named from dir/recipes and returns the
// names of those Changed picks against HEAD, space-separated.
func changedNames(t *testing.T, gitTool, dir string, names ...string) string {
	t.Helper()
	var rs []*recipe.Recipe
	for _, n := range names {
		r, err := recipe.Load(filepath.Join(dir, "recipes", n+".yaml"), recipe.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	got, err := (&Base{Git: gitTool, Rev: "HEAD"}).Changed(context.Background(), filepath.Join(dir, "recipes"), rs)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range got {
		out = append(out, r.Name)
	}
	return strings.Join(out, " ")
}

// committed makes a git repository of these files, committed, and returns
// its folder, a writer of its working tree, and HEAD as the base.
func committed(t *testing.T, files map[string]string) (string, func(name, content string), *Base) {
	t.Helper()
	tools := testenv.RequireTool(t, "git")
	dir := t.TempDir()
	write, git := testRepo(t, tools[0], dir)
	for name, content := range files {
		write(name, content)
	}
	git("init", "-q")
	git("add", ".")
	git("commit", "-q", "-m", "base")
	return dir, write, &Base{Git: tools[0], Rev: "HEAD"}
}

// TestTrustedRootReview: the Sigstore trusted root in effect, when it is a
// file of the recipes' repository, is a review item once new or changed
// since the base; unchanged, or outside that repository (another one
// included), it is none.
func TestTrustedRootReview(t *testing.T) {
	dir, write, b := committed(t, map[string]string{"updeb.yaml": "sigstore: {trusted-root: trust/root.json}\n", "trust/root.json": `{"mediaType": "a"}`})
	ctx := context.Background()
	root := filepath.Join(dir, "trust", "root.json")
	review := func(file string) []ReviewItem {
		t.Helper()
		items, err := b.TrustedRootReview(ctx, filepath.Join(dir, "trust"), file)
		if err != nil {
			t.Fatal(err)
		}
		return items
	}
	if items := review(root); len(items) != 0 {
		t.Errorf("unchanged: %+v", items)
	}
	write("trust/root.json", `{"mediaType": "b"}`)
	items := review(root)
	if len(items) != 1 || items[0].Kind != KindTrustedRoot || items[0].Recipe != "" || items[0].Subject != "trust/root.json" ||
		!strings.Contains(items[0].Message, "trust/root.json is changed since HEAD") {
		t.Errorf("changed: %+v", items)
	}
	write("trust/other.json", `{"mediaType": "c"}`)
	if items := review(filepath.Join(dir, "trust", "other.json")); len(items) != 1 || !strings.Contains(items[0].Message, "is new since HEAD") {
		t.Errorf("new: %+v", items)
	}
	outside := filepath.Join(t.TempDir(), "root.json")
	if err := os.WriteFile(outside, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if items := review(outside); len(items) != 0 {
		t.Errorf("outside the repository: %+v", items)
	}
	// A root in another git repository (/etc under etckeeper), here one
	// without the base revision, is outside the change too: no item, and no
	// error about a revision that repository never had.
	etc := t.TempDir()
	writeEtc, gitEtc := testRepo(t, b.Git, etc)
	writeEtc("root.json", "{}")
	gitEtc("init", "-q")
	if items := review(filepath.Join(etc, "root.json")); len(items) != 0 {
		t.Errorf("in another repository: %+v", items)
	}
	link := filepath.Join(dir, "trust", "link.json")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	if items := review(link); len(items) != 0 {
		t.Errorf("a link out of the repository: %+v", items)
	}
}

// TestConfigReview: the config file, when it is a file of the recipes'
// repository, is compared with the base on what decides where sources come
// from and what Sigstore signatures are checked against: another trusted
// root that was already in the repository, unchanged, or a mirror that
// sends an upstream host to a folder of the change, is a review item per
// setting, and so is a setting that goes into every package (the version
// suffix, the default maintainer); a setting that does neither
// (build.parallel) is none.
func TestConfigReview(t *testing.T) {
	const baseConfig = "sigstore: {trusted-root: trust/root.json}\nmirrors:\n  - {prefix: https://example.org/, to: mirror/example.org/}\n"
	dir, write, b := committed(t, map[string]string{"updeb.yaml": baseConfig, "trust/root.json": `{"mediaType": "a"}`, "trust/test-ca.json": `{"mediaType": "test"}`})
	ctx := context.Background()
	cfg := filepath.Join(dir, "updeb.yaml")
	review := func() []string {
		t.Helper()
		items, err := b.ConfigReview(ctx, filepath.Join(dir, "trust"), cfg)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, it := range items {
			if it.Kind != KindConfig || it.Recipe != "" || it.Subject != filepath.Base(cfg) || it.Old == nil || it.New == nil {
				t.Errorf("item %+v", it)
			}
			out = append(out, it.Message)
		}
		return out
	}
	const why = ": it decides where sources are downloaded from and what Sigstore signatures are checked against; review it before merging"
	const whyPackages = ": it goes into every package built (its Version, its Maintainer where the recipe names none, or its bytes) though no recipe changed, which the version rule does not see; review it before merging"
	const whyPublish = ": updeb publish puts every package there (a recipe's repo: comes first): nodes whose apt sources name the old one get no newer version, and those of the new one get these packages; review it before merging"
	for _, tt := range []struct {
		name, config string
		want         []string
	}{
		{"unchanged", baseConfig, nil},
		{"a setting of no trust", baseConfig + "build: {parallel: 2}\n", nil},
		{"the version suffix, default maintainer and compression of every package", baseConfig + "build: {version-suffix: \"~site1\", maintainer: \"Eve <eve@example.org>\", compression: gzip}\n",
			[]string{
				"the config updeb.yaml changes build.version-suffix since HEAD: ~site1, was none" + whyPackages,
				"the config updeb.yaml changes build.maintainer since HEAD: Eve <eve@example.org>, was none" + whyPackages,
				"the config updeb.yaml changes build.compression since HEAD: gzip, was none" + whyPackages,
			}},
		{"another trusted root, already in the repository", strings.Replace(baseConfig, "trust/root.json", "trust/test-ca.json", 1),
			[]string{"the config updeb.yaml changes sigstore.trusted-root since HEAD: trust/test-ca.json, was trust/root.json" + why}},
		{"a mirror that redirects an upstream host", baseConfig + "  - {prefix: https://example.org/hello/, to: evil/}\n",
			[]string{"the config updeb.yaml changes mirrors since HEAD: https://example.org/ -> file://" + dir + "/mirror/example.org/, https://example.org/hello/ -> file://" + dir + "/evil/, was https://example.org/ -> file://" + dir + "/mirror/example.org/" + why}},
		{"the suite every package goes to, and another key signing the suites", baseConfig + "repo: {suite: production, keys: [/etc/updeb/other.secret.asc]}\n",
			[]string{
				"the config updeb.yaml changes repo.suite since HEAD: production, was none" + whyPublish,
				"the config updeb.yaml changes repo.keys since HEAD: /etc/updeb/other.secret.asc, was none: updeb publish signs every suite with it and puts its public key in archive-keyring.gpg, which clients are given to trust; review it before merging",
			}},
		{"another key signing the provenance records", baseConfig + "build: {provenance-key: /etc/updeb/other.secret.asc}\n",
			[]string{"the config updeb.yaml changes build.provenance-key since HEAD: /etc/updeb/other.secret.asc, was none: updeb build signs every package's provenance record with it, and a record it signs is what updeb verify-provenance --signer takes as the builder's word; review it before merging"}},
		{"a cache folder of the repository", baseConfig + "cache: .updeb-cache\n",
			[]string{"the config updeb.yaml changes cache since HEAD: .updeb-cache, was none" + why}},
		{"the trusted root set back to the bundled one, a proxy added", "proxy: http://proxy.example:3128\nmirrors:\n  - {prefix: https://example.org/, to: mirror/example.org/}\n",
			[]string{
				"the config updeb.yaml changes proxy since HEAD: http://proxy.example:3128, was none" + why,
				"the config updeb.yaml changes sigstore.trusted-root since HEAD: none, was trust/root.json" + why,
			}},
		{"a proxy with a password", baseConfig + "proxy: http://ci:s3cret@proxy.example:3128\n",
			[]string{"the config updeb.yaml changes proxy since HEAD: http://ci:xxxxx@proxy.example:3128, was none" + why}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			write("updeb.yaml", tt.config)
			if got := review(); !slices.Equal(got, tt.want) {
				t.Errorf("review:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
	// A config new since the base: every setting it makes is new.
	if err := os.Rename(cfg, filepath.Join(dir, "site.yaml")); err != nil {
		t.Fatal(err)
	}
	cfg = filepath.Join(dir, "site.yaml")
	write("site.yaml", baseConfig)
	if got := review(); len(got) != 2 || !strings.Contains(got[0], "site.yaml changes mirrors since HEAD: https://example.org/ -> file://"+dir+"/mirror/example.org/, was none") ||
		!strings.Contains(got[1], "site.yaml changes sigstore.trusted-root since HEAD: trust/root.json, was none") {
		t.Errorf("a new config: %q", got)
	}
	// A config new since the base stands in for the one the base read in
	// its place (/etc/updeb/config.yaml): what that one set and the new
	// one drops is a change too, named with the file it was set in.
	etc := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(etc, []byte("mirrors:\n  - {prefix: https://example.org/, to: /srv/mirror/}\nbuild: {version-suffix: \"+corp1\", maintainer: \"Ops <ops@example.org>\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	items, err := b.ConfigReview(ctx, dir, cfg, filepath.Join(dir, "none.yaml"), etc)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range items {
		got = append(got, it.Message)
	}
	want := []string{
		"the config site.yaml changes mirrors since HEAD: https://example.org/ -> file://" + dir + "/mirror/example.org/, was https://example.org/ -> file:///srv/mirror/ in " + etc + why,
		"the config site.yaml changes sigstore.trusted-root since HEAD: trust/root.json, was none in " + etc + why,
		"the config site.yaml changes build.version-suffix since HEAD: none, was +corp1 in " + etc + whyPackages,
		"the config site.yaml changes build.maintainer since HEAD: none, was Ops <ops@example.org> in " + etc + whyPackages,
	}
	if !slices.Equal(got, want) {
		t.Errorf("a new config in place of %s:\n  %s\nwant:\n  %s", etc, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	// Outside the repository (/etc/updeb/config.yaml), the change cannot
	// have made it: none.
	cfg = filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("sigstore: {trusted-root: /etc/updeb/root.json}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := review(); len(got) != 0 {
		t.Errorf("outside the repository: %q", got)
	}
}

// foldersReviewOf is b.FoldersReview of the data folders of the repository
// dir's updeb.yaml, with these cache and output folders in effect.
func foldersReviewOf(t *testing.T, b *Base, dir, cache, out string) []ReviewItem {
	t.Helper()
	c, err := config.Load(filepath.Join(dir, "updeb.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	items, err := b.FoldersReview(context.Background(), dir, DataFolders(c, cache, out))
	if err != nil {
		t.Fatal(err)
	}
	return items
}

// TestConfigReviewMirrorFolder: a mirror folder of the repository that the
// config names, unchanged itself, with files the change adds or changes,
// is a review item: a bump pins what the folder serves.
func TestConfigReviewMirrorFolder(t *testing.T) {
	dir, write, b := committed(t, map[string]string{"updeb.yaml": "mirrors:\n  - {prefix: https://example.org/, to: mirror/example.org/}\n", "mirror/example.org/v1/hello.tar.gz": "v1\n", "other/x": "x\n"})
	review := func() []ReviewItem { return foldersReviewOf(t, b, dir, "", "") }
	write("other/x", "y\n")
	if items := review(); len(items) != 0 {
		t.Errorf("a file outside the mirror folder changed: %+v", items)
	}
	write("mirror/example.org/v2/hello.tar.gz", "the change's bytes\n")
	write("mirror/example.org/v1/hello.tar.gz", "v1 again\n")
	items := review()
	if len(items) != 1 || items[0].Kind != KindConfig || items[0].Subject != "mirror/example.org" ||
		!strings.HasPrefix(items[0].Message, "the mirror folder mirror/example.org (mirror of https://example.org/) has 2 file(s) new or changed since HEAD (first mirror/example.org/v1/hello.tar.gz): ") {
		t.Errorf("files added to and changed in the mirror folder: %+v", items)
	}
}

// TestFoldersReview: the cache folder in effect (here given as --cache
// would give it: no config names it), a folder of the repository, with
// files the change adds or changes, is a review item: a source is read
// from there by its pinned digest, and a checksum file by its URL, without
// a download, so a change that brings both makes the cross-check agree
// with its own list. So is the output folder, whose packages updeb publish
// is given. Files a run left there, untracked, are none of the change's (a
// CI cache restored into the checkout).
func TestFoldersReview(t *testing.T) {
	dir, write, b := committed(t, map[string]string{"updeb.yaml": "build: {parallel: 1}\n", ".gitignore": "/out/\n"})
	cache, out := filepath.Join(dir, ".cache", "updeb"), filepath.Join(dir, "out")
	review := func() []ReviewItem { return foldersReviewOf(t, b, dir, cache, out) }
	write(".cache/updeb/index/17/17.json", `{"url": "https://example.org/v1/SHA256SUMS"}`)
	write("out/hello_1.2.0-1_amd64.deb", "!<arch>\n")
	if items := review(); len(items) != 0 {
		t.Errorf("files a run left in the cache and the ignored output folder, untracked: %+v", items)
	}
	testenv.Run(t, b.Git, "-C", dir, "add", "-f", ".cache/updeb/index/17/17.json")
	items := review()
	if len(items) != 1 || items[0].Kind != KindConfig || items[0].Subject != ".cache/updeb" ||
		!strings.HasPrefix(items[0].Message, "the cache folder .cache/updeb has 1 file(s) new or changed since HEAD (first .cache/updeb/index/17/17.json): sources, checksum files and signatures are read from there without a download") {
		t.Errorf("a file the change adds to the cache folder: %+v", items)
	}
	testenv.Run(t, b.Git, "-C", dir, "rm", "-q", "--cached", ".cache/updeb/index/17/17.json")
	write("out/sudo_99_amd64.deb", "!<arch>\n")
	testenv.Run(t, b.Git, "-C", dir, "add", "-f", "out/sudo_99_amd64.deb")
	items = review()
	if len(items) != 1 || items[0].Subject != "out" ||
		!strings.HasPrefix(items[0].Message, "the output folder out has 1 file(s) new or changed since HEAD (first out/sudo_99_amd64.deb): updeb build writes the packages there") {
		t.Errorf("a package the change adds to the output folder: %+v", items)
	}
	if items := foldersReviewOf(t, b, dir, t.TempDir(), ""); len(items) != 0 {
		t.Errorf("a cache outside the repository: %+v", items)
	}
}

// replaceByLink replaces dir/name (a file or a folder) by a link to target,
// and returns its path.
func replaceByLink(t *testing.T, dir, target, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.RemoveAll(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
	return p
}

// trustLines compares the recipe file p with the base b (compareBase)
// and returns its trust lines and every check that did not pass, each
// "STATUS DETAIL".
func trustLines(t *testing.T, b *Base, p string) []string {
	t.Helper()
	r, err := recipe.Load(p, recipe.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rr := RecipeReport{Recipe: r.Name, File: r.Path}
	var c checks
	compareBase(context.Background(), r, Options{Base: b, TempDir: t.TempDir()}, &rr, &c)
	var out []string
	for _, x := range c {
		if x.Check == "trust" || x.Status != Pass {
			out = append(out, string(x.Status)+" "+x.Detail)
		}
	}
	return out
}

// TestKeyringLinkRetargeted: a keyring reached through a chain of links
// (keys/upstream.asc -> ring/current.asc -> a.asc) is read at the base
// through the base's own links, and a link of the chain pointed at another
// keyring of the repository, unchanged itself, changes the recipe's trust:
// --changed picks the recipe and the keys that came are a REVIEW line. The
// base's chain was read through the working tree's links: it did not load
// (exit 2) with the chain unchanged, or with its first link retargeted, and
// --changed, which looked at the first link and the file alone, picked no
// recipe when a link further down moved.
func TestKeyringLinkRetargeted(t *testing.T) {
	k := makeTrustKeys(t)
	dir, _, b := committed(t, map[string]string{"recipes/hello.yaml": signedBy(t, k.fa), "keys/ring/a.asc": k.a, "keys/ring/ac.asc": k.a + k.c})
	replaceByLink(t, dir, "a.asc", "keys/ring/current.asc")
	replaceByLink(t, dir, "ring/current.asc", "keys/upstream.asc")
	testenv.Run(t, b.Git, "-C", dir, "-c", "user.email=t@example.org", "-c", "user.name=t", "add", "-A")
	testenv.Run(t, b.Git, "-C", dir, "-c", "user.email=t@example.org", "-c", "user.name=t", "commit", "-q", "-m", "a chain of links")
	recipeFile := filepath.Join(dir, "recipes", "hello.yaml")
	unchanged := []string{"pass no trust change since HEAD (" + recipeTrustChecked() + ")"}
	added := []string{"warn source hello: keyring keys/upstream.asc: key " + k.fc + " added"}
	if got := trustLines(t, b, recipeFile); !slices.Equal(got, unchanged) {
		t.Errorf("the chain unchanged: %q", got)
	}
	for _, tt := range []struct{ name, target, link string }{
		{"the last link of the chain moved", "ac.asc", "keys/ring/current.asc"},
		{"the first link moved to the other keyring", "ring/ac.asc", "keys/upstream.asc"},
	} {
		replaceByLink(t, dir, tt.target, tt.link)
		if got := changedNames(t, b.Git, dir, "hello"); got != "hello" {
			t.Errorf("%s: --changed picks %q, want hello", tt.name, got)
		}
		if got := trustLines(t, b, recipeFile); !slices.Equal(got, added) {
			t.Errorf("%s:\n  %s\nwant:\n  %s", tt.name, strings.Join(got, "\n  "), strings.Join(added, "\n  "))
		}
		testenv.Run(t, b.Git, "-C", dir, "checkout", "-q", "--", ".")
	}
}

// TestBaseRecipeLink: a recipe is compared with what the base reaches at
// its path: replaced by a link to another recipe file of the repository
// (an unsigned draft), unchanged itself, its trust changes are REVIEW lines;
// a new recipe that is a link to a file the base has is a new recipe; a
// recipe reached through a folder link the base has too is compared as
// usual.
func TestBaseRecipeLink(t *testing.T) {
	k := makeTrustKeys(t)
	signed, draft := signedBy(t, k.fa), withSignature(t, `signature: {none: upstream signs nothing}`)
	dir, write, b := committed(t, map[string]string{"recipes/hello.yaml": signed, "keys/upstream.asc": k.a, "drafts/hello.yaml": draft, "drafts/new.yaml": edit(t, signed, "name: hello", "name: new")})
	link := func(target, name string) string { return replaceByLink(t, dir, target, name) }
	lines := func(p string) []string { return trustLines(t, b, p) }
	got := lines(link("../drafts/hello.yaml", "recipes/hello.yaml"))
	want := []string{
		`warn source hello: no signature now: "upstream signs nothing" (was detached OpenPGP signature)`,
		"warn source hello: keyring keys/upstream.asc no longer used (it held " + k.fa + ")",
		"warn source hello: signers no longer apply (were " + k.fa + ")",
	}
	if !slices.Equal(got, want) {
		t.Errorf("a recipe replaced by a link to an unsigned draft:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if got := lines(link("../drafts/new.yaml", "recipes/new.yaml")); len(got) < 1 || !strings.HasPrefix(got[0], "warn new recipe new (not at HEAD)") {
		t.Errorf("a new recipe, a link to a file the base has: %q", got)
	}
	// recipes a link to shared/recipes, at the base as now.
	write("shared/recipes/hello.yaml", signed)
	link("shared/recipes", "recipes")
	testenv.Run(t, b.Git, "-C", dir, "-c", "user.email=t@example.org", "-c", "user.name=t", "add", "-A")
	testenv.Run(t, b.Git, "-C", dir, "-c", "user.email=t@example.org", "-c", "user.name=t", "commit", "-q", "-m", "recipes is a link")
	if got := lines(filepath.Join(dir, "recipes", "hello.yaml")); !slices.Equal(got, []string{"pass no trust change since HEAD (signature forms, keyrings, signers, Sigstore identities, source repositories, issuers, keys and predicate types, cross-checks, pinned algorithms, download URLs of new bytes, the watch's release source, tag prefix and pre-releases, packages of other recipes, the system's packages in provides, replaces, conflicts, breaks, pre-depends, depends and recommends, and in new package names)"}) {
		t.Errorf("through a folder link the base has too: %q", got)
	}
}

// TestConfigReviewCABundle: the config's CA bundle, a file of the
// repository, given other certificates under the same name is a review
// item, as the trusted root is; unchanged, none. So is its TUF root given
// other content.
func TestConfigReviewCABundle(t *testing.T) {
	dir, write, b := committed(t, map[string]string{"updeb.yaml": "ca-bundle: certs/ca.pem\nsigstore: {tuf-root: certs/tuf-root.json}\n", "certs/ca.pem": "corporate CA\n", "certs/tuf-root.json": `{"signed": {}}`})
	ctx := context.Background()
	if items, err := b.ConfigReview(ctx, dir, filepath.Join(dir, "updeb.yaml")); err != nil || len(items) != 0 {
		t.Errorf("unchanged: %+v %v", items, err)
	}
	write("certs/ca.pem", "corporate CA\nthe change's own CA\n")
	items, err := b.ConfigReview(ctx, dir, filepath.Join(dir, "updeb.yaml"))
	if err != nil || len(items) != 1 || items[0].Kind != KindConfig || items[0].Subject != "certs/ca.pem" || !slices.Equal(items[0].Old, []string{"HEAD"}) ||
		!strings.HasPrefix(items[0].Message, "the CA bundle certs/ca.pem (ca-bundle of the config updeb.yaml) is changed since HEAD: ") {
		t.Errorf("the CA bundle's certificates changed: %+v %v", items, err)
	}
	// The TUF root updeb trust refresh starts from, the same file.
	write("certs/ca.pem", "corporate CA\n")
	write("certs/tuf-root.json", `{"signed": {"the change's": "keys"}}`)
	items, err = b.ConfigReview(ctx, dir, filepath.Join(dir, "updeb.yaml"))
	if err != nil || len(items) != 1 || items[0].Subject != "certs/tuf-root.json" ||
		!strings.HasPrefix(items[0].Message, "the TUF root certs/tuf-root.json (sigstore.tuf-root of the config updeb.yaml) is changed since HEAD: updeb trust refresh takes") {
		t.Errorf("the TUF root's content changed: %+v %v", items, err)
	}
}

// TestRepoFileThroughLinks: the trusted root and the config are compared
// with what the base reaches at the path the working tree reads, through
// the base's links: a file replaced by a link to another file of the
// repository, itself unchanged, is a change; a folder link the base had as
// well, with the file unchanged, is none.
func TestRepoFileThroughLinks(t *testing.T) {
	const other = "sigstore: {trusted-root: trust/test-ca.json}\nmirrors:\n  - {prefix: https://example.org/, to: mirror/example.org/}\n"
	dir, _, b := committed(t, map[string]string{"updeb.yaml": "sigstore: {trusted-root: trust/root.json}\n", "contrib/mirrored.yaml": other,
		"shared/trust/root.json": `{"mediaType": "a"}`, "shared/trust/test-ca.json": `{"mediaType": "test"}`})
	ctx := context.Background()
	link := func(target, name string) string { return replaceByLink(t, dir, target, name) }
	git := func(args ...string) {
		testenv.Run(t, b.Git, append([]string{"-C", dir, "-c", "user.email=t@example.org", "-c", "user.name=t"}, args...)...)
	}
	link("shared/trust", "trust")
	git("add", "-A")
	git("commit", "-q", "-m", "trust is a link")
	root := filepath.Join(dir, "trust", "root.json")
	if items, err := b.TrustedRootReview(ctx, dir, root); err != nil || len(items) != 0 {
		t.Errorf("unchanged behind a folder link the base has too: %+v %v", items, err)
	}
	link("test-ca.json", "shared/trust/root.json")
	if items, err := b.TrustedRootReview(ctx, dir, root); err != nil || len(items) != 1 || items[0].Subject != "trust/root.json" ||
		!strings.Contains(items[0].Message, "trust/root.json is changed since HEAD") {
		t.Errorf("replaced by a link to another root of the repository: %+v %v", items, err)
	}
	link("contrib/mirrored.yaml", "updeb.yaml")
	items, err := b.ConfigReview(ctx, dir, filepath.Join(dir, "updeb.yaml"))
	var kinds []string
	for _, it := range items {
		kinds = append(kinds, strings.Fields(strings.TrimPrefix(it.Message, "the config updeb.yaml changes "))[0])
	}
	if err != nil || !slices.Equal(kinds, []string{"mirrors", "sigstore.trusted-root"}) {
		t.Errorf("the config replaced by a link to another config of the repository: %+v %v", items, err)
	}
}

// An architecture added (or removed) changes no trust: a checksum file URL
// or a Sigstore identity that names the architecture renders another value
// for the new one from the same template, as the others' did. What the
// architectures both have is compared: a template changed, or an upstream
// architecture name of one both have, is still a change.
func TestDiffTrustArchitectureAdded(t *testing.T) {
	const pin = "019250d9e08f5242159d5dcea64c8c7cf77924cd8c69460ae7af5d4ad51d032e"
	sums := edit(t, helloRecipe, `checksums: {url: "https://example.org/v{{.Version}}/SHA256SUMS"}`, `checksums: {url: "https://example.org/v{{.Version}}/hello-{{.Arch}}.sha256"}`)
	signed := edit(t, sums, "    signature: {url: \"https://example.org/v{{.Version}}/hello-{{.Arch}}.tar.gz.asc\", keyring: keys/upstream.asc, signers: ["+fpr+"]}",
		`    signature: {bundle-url: "https://example.org/v{{.Version}}/hello-{{.Arch}}.sigstore.json", identity: "https://github.com/hello/{{.Arch}}-builds/.github/workflows/release.yml@refs/tags/v{{.Version}}", issuer: https://accounts.google.com}`)
	arm64 := func(text string) string {
		return edit(t, text, `revision: "1"`, `revision: "2"`, "architectures: {amd64: amd64}", "architectures: {amd64: amd64, arm64: aarch64}", "sha256: {amd64: "+pin+"}", "sha256: {amd64: "+pin+", arm64: "+pin+"}")
	}
	for _, tt := range []struct {
		name, base, head string
		want             []string
	}{
		{"OpenPGP, architecture added", sums, arm64(sums), nil},
		{"OpenPGP, architecture removed", arm64(sums), sums, nil},
		{"Sigstore, architecture added", signed, arm64(signed), nil},
		{"architecture added, the checksum file moved", sums, edit(t, arm64(sums), "https://example.org/v{{.Version}}/hello-{{.Arch}}.sha256", "https://mirror.example.net/v{{.Version}}/hello-{{.Arch}}.sha256"),
			[]string{"source hello: cross-check against the upstream checksum file https://mirror.example.net/v{{.Version}}/hello-{{.Arch}}.sha256, was https://example.org/v{{.Version}}/hello-{{.Arch}}.sha256"}},
		{"architecture added, its bytes from another host (amd64's the same from there)", sums, edit(t, arm64(sums), "url: https://example.org/v", "url: https://examp1e.org/v"),
			[]string{"source hello: downloaded from https://examp1e.org/v{{.Version}}/hello-{{.Arch}}.tar.gz, was https://example.org/v{{.Version}}/hello-{{.Arch}}.tar.gz, with other pinned bytes: they are what the new URL serves"}},
		{"architecture added, the upstream name of amd64 changed", sums, edit(t, arm64(sums), "amd64: amd64,", "amd64: x86_64,"),
			[]string{"source hello: cross-check against the upstream checksum file https://example.org/v{{.Version}}/hello-x86_64.sha256, was https://example.org/v{{.Version}}/hello-amd64.sha256"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rv := &reviews{recipe: "hello"}
			diffTrust(loadProject(t, tt.head, "key\n"), loadProject(t, tt.base, "key\n"), "HEAD", rv)
			var got []string
			for _, it := range rv.items {
				got = append(got, it.Message)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("review:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}

// TestGatePinsDroppedOnOneArchitecture: sha512 dropped from one
// architecture while another keeps it leaves the algorithms pinned in the
// recipe as a whole the same, but that architecture's bytes are vouched for
// by sha256 alone now: a pins line naming it, in a real git repository.
func TestGatePinsDroppedOnOneArchitecture(t *testing.T) {
	const (
		pin256 = "019250d9e08f5242159d5dcea64c8c7cf77924cd8c69460ae7af5d4ad51d032e"
		pin512 = "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e"
	)
	twoArches := func(sha512 string) string {
		return edit(t, withSignature(t, `signature: {none: upstream signs nothing}`), "architectures: {amd64: amd64}", "architectures: {amd64: amd64, arm64: aarch64}",
			"    sha256: {amd64: "+pin256+"}\n", "    sha256: {amd64: "+pin256+", arm64: "+pin256+"}\n    sha512: {"+sha512+"}\n")
	}
	both := twoArches("amd64: " + pin512 + ", arm64: " + pin512)
	rep := gateBase(t, map[string]string{"recipes/hello.yaml": both}, map[string]string{"recipes/hello.yaml": twoArches("amd64: " + pin512)})
	var got []string
	for _, it := range rep.Review {
		got = append(got, it.Message)
	}
	want := []string{"source hello: pinned digests amd64: sha256, sha512; arm64: sha256, were sha256, sha512"}
	if !slices.Equal(got, want) {
		t.Errorf("review:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if len(rep.Review) == 1 && (rep.Review[0].Kind != KindPins || !slices.Equal(rep.Review[0].New, []string{"amd64: sha256, sha512", "arm64: sha256"})) {
		t.Errorf("review item %+v: want kind pins, new per architecture", rep.Review[0])
	}
	// An architecture added with fewer algorithms than the others pin is
	// the package's new architecture, not a change of the pins it had.
	oneArch := edit(t, withSignature(t, `signature: {none: upstream signs nothing}`), "    sha256: {amd64: "+pin256+"}\n", "    sha256: {amd64: "+pin256+"}\n    sha512: {amd64: "+pin512+"}\n")
	rep = gateBase(t, map[string]string{"recipes/hello.yaml": oneArch}, map[string]string{"recipes/hello.yaml": twoArches("amd64: " + pin512)})
	for _, it := range rep.Review {
		if it.Kind == KindPins {
			t.Errorf("architecture added: %s", it.Message)
		}
	}
}

// TestAttributesReview: a .gitattributes file anywhere in the repository,
// added, changed or removed since the base, is a review item naming it
// (eol=crlf rewrites every file it matches as git checks it out, and the
// base is read through the same attributes); other files are none.
func TestAttributesReview(t *testing.T) {
	dir, write, b := committed(t, map[string]string{".gitattributes": "*.sh text\n", "recipes/hello.yaml": "name: hello\n", "keys/old/.gitattributes": "*.asc text\n"})
	review := func() []string {
		t.Helper()
		items, err := b.AttributesReview(context.Background(), filepath.Join(dir, "recipes"))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, it := range items {
			if it.Kind != KindGitAttributes || it.Recipe != "" || it.Old == nil || it.New == nil {
				t.Errorf("item %+v", it)
			}
			out = append(out, it.Subject+": "+strings.Join(it.Old, ",")+" -> "+strings.Join(it.New, ",")+": "+strings.SplitN(it.Message, ":", 2)[0])
		}
		return out
	}
	write("recipes/hello.yaml", "name: hello # changed\n")
	if got := review(); len(got) != 0 {
		t.Errorf("no attributes file changed: %q", got)
	}
	write(".gitattributes", "* eol=crlf\n")
	write("recipes/hello/.gitattributes", "*.default working-tree-encoding=UTF-16\n")
	if err := os.Remove(filepath.Join(dir, "keys", "old", ".gitattributes")); err != nil {
		t.Fatal(err)
	}
	want := []string{
		".gitattributes: HEAD -> working tree: the git attributes file .gitattributes is changed since HEAD",
		"keys/old/.gitattributes: HEAD -> : the git attributes file keys/old/.gitattributes is removed since HEAD",
		"recipes/hello/.gitattributes:  -> working tree: the git attributes file recipes/hello/.gitattributes is new since HEAD",
	}
	if got := review(); !slices.Equal(got, want) {
		t.Errorf("review:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// TestChangedLargeChange: a change of 50,000 files (a mirror folder
// removed) against 4,000 recipes picks the one recipe changed. (Each path of
// each recipe is looked up among the changed paths, not compared with every
// one of them, which took 17 s: a speed this test does not time, as
// timed tests fail on a loaded machine; BenchmarkChangedLargeChange does.)
// largeChange builds that repository and checks Changed on it.
func largeChange(t testing.TB) (dir, git string, rs []*recipe.Recipe) {
	tools := testenv.RequireTool(t, "git")
	dir = t.TempDir()
	write, gitRun := testRepo(t, tools[0], dir)
	write("keys/upstream.asc", "key\n")
	write("recipes/r7.yaml", helloRecipe)
	gitRun("init", "-q")
	// 50,000 files of the base that the working tree lacks, added to the
	// index without writing them.
	blob := strings.TrimSpace(string(testenv.Run(t, tools[0], "-C", dir, "hash-object", "-w", filepath.Join(dir, "keys", "upstream.asc"))))
	var index strings.Builder
	for i := range 50000 {
		fmt.Fprintf(&index, "100644 %s\tmirror/%d/%d.tar.gz\n", blob, i%100, i)
	}
	cmd := exec.Command(tools[0], "-C", dir, "update-index", "--add", "--index-info")
	cmd.Stdin = strings.NewReader(index.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	gitRun("add", "-A", "recipes", "keys")
	gitRun("commit", "-q", "-m", "base")
	write("recipes/r7.yaml", edit(t, helloRecipe, `revision: "1"`, `revision: "2"`))
	r, err := recipe.Load(filepath.Join(dir, "recipes", "r7.yaml"), recipe.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// 4,000 recipes of a catalog, r7 the one changed: copies of it under
	// their own names (loading 4,000 files would take longer than the rest).
	const recipes = 4000
	for i := range recipes {
		c := *r
		c.Name, c.Path = fmt.Sprintf("r%d", i), filepath.Join(dir, "recipes", fmt.Sprintf("r%d.yaml", i))
		rs = append(rs, &c)
	}
	got, err := (&Base{Git: tools[0], Rev: "HEAD"}).Changed(context.Background(), filepath.Join(dir, "recipes"), rs)
	if err != nil || len(got) != 1 || got[0].Name != "r7" {
		t.Fatalf("changed: %v, %v", got, err)
	}
	return dir, tools[0], rs
}

func TestChangedLargeChange(t *testing.T) { largeChange(t) }

// BenchmarkChangedLargeChange: Base.Changed of TestChangedLargeChange's
// 4,000 recipes against 50,000 changed files.
func BenchmarkChangedLargeChange(b *testing.B) {
	dir, git, rs := largeChange(b)
	for b.Loop() {
		if _, err := (&Base{Git: git, Rev: "HEAD"}).Changed(context.Background(), filepath.Join(dir, "recipes"), rs); err != nil {
			b.Fatal(err)
		}
	}
}

// TestConfigGoneReview: updeb.yaml of the repository, the config in effect
// at the base, removed by the change (updeb now reads /etc/updeb/config.yaml
// or no config) is a review item naming what is read in its place; one
// still there, one the base never had, or one outside the repository, is
// none.
func TestConfigGoneReview(t *testing.T) {
	dir, _, b := committed(t, map[string]string{"updeb.yaml": "build: {version-suffix: \"~site1\"}\n", "recipes/hello.yaml": "name: hello\n"})
	ctx := context.Background()
	review := func(file, inUse string) []ReviewItem {
		t.Helper()
		items, err := b.ConfigGoneReview(ctx, filepath.Join(dir, "recipes"), file, inUse)
		if err != nil {
			t.Fatal(err)
		}
		return items
	}
	cfg := filepath.Join(dir, "updeb.yaml")
	if items := review(cfg, ""); len(items) != 0 {
		t.Errorf("still there: %+v", items)
	}
	if items := review(filepath.Join(dir, "site.yaml"), ""); len(items) != 0 {
		t.Errorf("never at the base: %+v", items)
	}
	if items := review(filepath.Join(t.TempDir(), "updeb.yaml"), ""); len(items) != 0 {
		t.Errorf("outside the repository: %+v", items)
	}
	if err := os.Remove(cfg); err != nil {
		t.Fatal(err)
	}
	items := review(cfg, "/etc/updeb/config.yaml")
	if len(items) != 1 || items[0].Kind != KindConfig || items[0].Recipe != "" || items[0].Subject != "updeb.yaml" ||
		!slices.Equal(items[0].New, []string{"/etc/updeb/config.yaml"}) ||
		!strings.HasPrefix(items[0].Message, "the config updeb.yaml is gone since HEAD: updeb reads /etc/updeb/config.yaml in its place") {
		t.Errorf("removed, /etc's read instead: %+v", items)
	}
	if items := review(cfg, ""); len(items) != 1 || !strings.Contains(items[0].Message, "updeb reads no config in its place") || items[0].New == nil {
		t.Errorf("removed, no config: %+v", items)
	}
}

// TestRecipesGoneReview: a recipe file of the base gone from the recipes
// folder is a review item naming it, and a recipe renamed to NAME.yml,
// which updeb does not list, says so; a file of a recipe's own folder, and
// a recipe file of another folder, are none.
func TestRecipesGoneReview(t *testing.T) {
	dir, write, b := committed(t, map[string]string{"recipes/hello.yaml": helloRecipe, "recipes/other.yaml": "name: other\n", "recipes/hello/a.yaml": "a\n", "shared/x.yaml": "x\n", "recipes/kept.yaml": "name: kept\n"})
	t.Chdir(dir)
	review := func() []string {
		t.Helper()
		items, err := b.RecipesGoneReview(context.Background(), "recipes")
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, it := range items {
			if it.Kind != KindRecipeGone || it.Recipe != "" {
				t.Errorf("item %+v", it)
			}
			out = append(out, it.Subject+": "+it.Message)
		}
		return out
	}
	if got := review(); len(got) != 0 {
		t.Errorf("no recipe gone: %q", got)
	}
	write("recipes/hello.yml", helloRecipe)
	for _, p := range []string{"recipes/hello.yaml", "recipes/other.yaml", "recipes/hello/a.yaml", "shared/x.yaml"} {
		if err := os.Remove(filepath.Join(dir, filepath.FromSlash(p))); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{
		"recipes/hello.yaml: the recipe recipes/hello.yaml is gone since HEAD: updeb no longer builds, plans or bumps its packages (the repository keeps what it published, and nodes what they installed); recipes/hello.yml is there now, which updeb does not read (it reads the recipes *.yaml): name it hello.yaml to keep the recipe; review it before merging",
		"recipes/other.yaml: the recipe recipes/other.yaml is gone since HEAD: updeb no longer builds, plans or bumps its packages (the repository keeps what it published, and nodes what they installed); review it before merging",
	}
	if got := review(); !slices.Equal(got, want) {
		t.Errorf("review:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	// The recipes folder replaced by a link to another folder that lacks
	// a recipe: git lists the link, no recipe file gone, but updeb reads
	// that folder now.
	write("attic/hello.yaml", helloRecipe)
	write("attic/other.yaml", "name: other\n")
	replaceByLink(t, dir, "attic", "recipes")
	want = []string{"recipes/kept.yaml: the recipe recipes/kept.yaml is gone since HEAD: updeb no longer builds, plans or bumps its packages (the repository keeps what it published, and nodes what they installed); review it before merging"}
	if got := review(); !slices.Equal(got, want) {
		t.Errorf("the recipes folder a link to a folder without kept.yaml:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	// Recipes at the top of the repository.
	top, _, b := committed(t, map[string]string{"hello.yaml": helloRecipe})
	if err := os.Remove(filepath.Join(top, "hello.yaml")); err != nil {
		t.Fatal(err)
	}
	if items, err := b.RecipesGoneReview(context.Background(), top); err != nil || len(items) != 1 || items[0].Subject != filepath.ToSlash(filepath.Join(top, "hello.yaml")) {
		t.Errorf("a recipe gone from recipes at the top of the repository: %+v %v", items, err)
	}
}

// TestRepositoryMoveListed: a recipe that moves to another suite or
// component under a new version changes no byte of its packages, but nodes
// whose apt sources name only the old one get no newer version: changes:
// lists the move.
func TestRepositoryMoveListed(t *testing.T) {
	rep := gateBase(t, map[string]string{"recipes/hello.yaml": helloRecipe, "keys/upstream.asc": "key\n"},
		map[string]string{"recipes/hello.yaml": edit(t, helloRecipe, `revision: "1"`, `revision: "2"`, "architectures:", "repo: {suite: unstable, component: contrib}\narchitectures:")})
	want := []string{"repository [amd64]: published to suite unstable, component contrib, was suite (the repository's default), component main: nodes whose apt sources name only the old one get no newer version"}
	if got := rep.Recipes[0].Changes; !slices.Equal(got, want) {
		t.Errorf("changes:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// TestTrustPassNamesEveryKind: the trust PASS line names every kind of a
// recipe's own trust review, so that it never claims less was compared
// than was, nor more: each trust kind is in recipeTrust once, but the
// configuration's (no recipe's) and new-recipe.
func TestTrustPassNamesEveryKind(t *testing.T) {
	notRecipes := []Kind{KindTrustedRoot, KindConfig, KindGitAttributes, KindRecipeGone, KindNewRecipe}
	seen := map[Kind]int{}
	for _, x := range recipeTrust {
		for _, k := range x.kinds {
			seen[k]++
		}
	}
	for k, check := range reviewKinds {
		want := 0
		if check == "trust" && !slices.Contains(notRecipes, k) {
			want = 1
		}
		if seen[k] != want {
			t.Errorf("kind %s (%s) is %d times in recipeTrust, want %d: the trust PASS line (%s) must name what is compared", k, check, seen[k], want, recipeTrustChecked())
		}
	}
}

// TestFoldersReviewThroughLinks: a mirror or output folder of the
// repository that the change replaces by a link to another folder of it, or
// whose link it points elsewhere, is a review item, though the files of the
// folder it leads to now are as the base has them: git lists the link, not
// those files, and the folder was looked at only where its links lead now.
// A mirror folder sent so to files already in the repository (test data, a
// file an earlier change brought) serves them for the upstream host, and a
// bump pins them, with no REVIEW line.
func TestFoldersReviewThroughLinks(t *testing.T) {
	dir, write, b := committed(t, map[string]string{
		"updeb.yaml":                         "mirrors:\n  - {prefix: https://example.org/, to: mirror/example.org/}\n",
		"mirror/example.org/v1/hello.tar.gz": "v1\n",
		"testdata/evil/v1/hello.tar.gz":      "the change's bytes\n",
		"testdata/debs/sudo_99_amd64.deb":    "!<arch>\n",
		"ring/a/x":                           "a\n",
		"ring/b/x":                           "b\n",
	})
	out := filepath.Join(dir, "out")
	review := func() []ReviewItem { return foldersReviewOf(t, b, dir, "", out) }
	if items := review(); len(items) != 0 {
		t.Fatalf("unchanged: %+v", items)
	}
	replaceByLink(t, dir, "../testdata/evil", "mirror/example.org")
	replaceByLink(t, dir, "testdata/debs", "out")
	testenv.Run(t, b.Git, "-C", dir, "add", "out") // the change's: tracked (a link a run left there is none)
	items := review()
	if len(items) != 2 ||
		!strings.HasPrefix(items[0].Message, "the mirror folder testdata/evil (mirror of https://example.org/) has 2 file(s) new or changed since HEAD (first mirror/example.org): ") ||
		!strings.HasPrefix(items[1].Message, "the output folder testdata/debs has 1 file(s) new or changed since HEAD (first out): ") {
		t.Errorf("the mirror folder and the output folder replaced by links to folders of the repository: %+v", items)
	}
	// A link the base has, pointed at another folder of the repository.
	testenv.Run(t, b.Git, "-C", dir, "checkout", "-q", "--", ".")
	testenv.Run(t, b.Git, "-C", dir, "clean", "-q", "-fd")
	write("updeb.yaml", "mirrors:\n  - {prefix: https://example.org/, to: ring/current/}\n")
	replaceByLink(t, dir, "a", "ring/current")
	testenv.Run(t, b.Git, "-C", dir, "-c", "user.email=t@example.org", "-c", "user.name=t", "add", "-A")
	testenv.Run(t, b.Git, "-C", dir, "-c", "user.email=t@example.org", "-c", "user.name=t", "commit", "-q", "-m", "a link")
	if items := review(); len(items) != 0 {
		t.Fatalf("the link unchanged: %+v", items)
	}
	replaceByLink(t, dir, "b", "ring/current")
	if items := review(); len(items) != 1 || items[0].Subject != "ring/b" ||
		!strings.HasPrefix(items[0].Message, "the mirror folder ring/b (mirror of https://example.org/) has 1 file(s) new or changed since HEAD (first ring/current): ") {
		t.Errorf("the mirror folder's link pointed at another folder: %+v", items)
	}
}

// TestFoldersReviewSubmodule: a mirror folder inside a submodule that the
// change moves to another commit is a review item, as a keyring submodule
// at another commit changes its recipes: git lists the submodule, not the
// files of the folder inside it, and a pathspec of the folder found
// nothing. A change elsewhere in the folders above it is none.
func TestFoldersReviewSubmodule(t *testing.T) {
	sub, _, b := committed(t, map[string]string{"example.org/v1/hello.tar.gz": "v1\n"})
	dir := t.TempDir()
	write, git := testRepo(t, b.Git, dir)
	write("updeb.yaml", "mirrors:\n  - {prefix: https://example.org/, to: data/mirror/example.org/}\n")
	write("data/other/x", "x\n")
	git("init", "-q")
	git("-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "data/mirror")
	git("add", "-A")
	git("commit", "-q", "-m", "base")
	write("data/other/x", "y\n")
	if items := foldersReviewOf(t, b, dir, "", ""); len(items) != 0 {
		t.Errorf("a file beside the submodule changed: %+v", items)
	}
	write("data/mirror/example.org/v1/hello.tar.gz", "the change's bytes\n")
	_, gitMirror := testRepo(t, b.Git, filepath.Join(dir, "data", "mirror"))
	gitMirror("commit", "-q", "-a", "-m", "other bytes")
	items := foldersReviewOf(t, b, dir, "", "")
	if len(items) != 1 || items[0].Subject != "data/mirror/example.org" ||
		!strings.HasPrefix(items[0].Message, "the mirror folder data/mirror/example.org (mirror of https://example.org/) has 1 file(s) new or changed since HEAD (first data/mirror): ") {
		t.Errorf("the mirror folder's submodule at another commit: %+v", items)
	}
}

// TestNewRecipeInLinkedFolder: a new recipe of a recipes folder that is a
// link (recipes -> shared/recipes, at the base as now) is a new recipe: git
// cat-file --follow-symlinks says "dangling" for a path whose folder is
// reached through a link and lacks the file, as for a link that leads
// nowhere, and verify --base refused every new recipe there (exit 2, "a
// link that reaches no file of the revision"). A recipe that is such a link
// at the base is still refused.
func TestNewRecipeInLinkedFolder(t *testing.T) {
	dir, write, b := committed(t, map[string]string{"shared/recipes/hello.yaml": helloRecipe, "keys/upstream.asc": "key\n"})
	_, git := testRepo(t, b.Git, dir)
	if err := os.Symlink("shared/recipes", filepath.Join(dir, "recipes")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("gone.yaml", filepath.Join(dir, "shared", "recipes", "dangling.yaml")); err != nil {
		t.Fatal(err)
	}
	git("add", "-A")
	git("commit", "-q", "-m", "the recipes folder a link")
	write("recipes/hello-ng.yaml", edit(t, helloRecipe, "name: hello\n", "name: hello-ng\n"))
	got := trustLines(t, b, filepath.Join(dir, "recipes", "hello-ng.yaml"))
	want := "warn new recipe hello-ng (not at HEAD): review the trust of each of its sources (hello)"
	if !slices.Contains(got, want) || slices.ContainsFunc(got, func(l string) bool { return strings.HasPrefix(l, "fail") }) {
		t.Errorf("a new recipe in the linked folder:\n  %s\nwant %q and no failure", strings.Join(got, "\n  "), want)
	}
	if err := os.Remove(filepath.Join(dir, "recipes", "dangling.yaml")); err != nil {
		t.Fatal(err)
	}
	write("recipes/dangling.yaml", edit(t, helloRecipe, "name: hello\n", "name: dangling\n"))
	r, err := recipe.Load(filepath.Join(dir, "recipes", "dangling.yaml"), recipe.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if old, err := b.load(context.Background(), r, t.TempDir()); !errors.Is(err, ErrBase) || !strings.Contains(fmt.Sprint(err), "recipes/dangling.yaml at HEAD is a link that reaches no file of the revision") {
		t.Errorf("a recipe that was a dangling link: %v, %v", old, err)
	}
}

// TestRootConfigReviewPlaces: a file added, in a real git repository,
// where the system runs what it finds as root or lets any user reach root
// with it is a root-config REVIEW line naming the place.
func TestRootConfigReviewPlaces(t *testing.T) {
	base := map[string]string{"recipes/hello.yaml": helloRecipe, "keys/upstream.asc": "key\n"}
	for _, tt := range []struct{ dest, want string }{
		// The system bus's policy (send_destination to systemd, allowed to
		// any user) and its activation files (Exec= run by the setuid
		// launch helper as User=, root, when anybody calls the name).
		{"/usr/share/dbus-1/system.d/hello.conf", "the D-Bus system bus's policy: which users may call root's services"},
		{"/etc/dbus-1/system.d/hello.conf", "the D-Bus system bus's policy: which users may call root's services"},
		{"/usr/share/dbus-1/system-services/org.example.Hello.service", "programs the D-Bus system bus starts, as root, when a user calls their name"},
		// A user's session bus is no root's.
		{"/etc/dbus-1/session.d/hello.conf", ""},
		// Debian's ld.so.conf.d/libc.conf lists /usr/local/lib before the
		// system's folders (ldconfig -p: its libz.so.1 first), and Python
		// puts /usr/local/lib/python3.X/dist-packages before Debian's.
		{"/usr/local/lib/libz.so.1", "libraries the dynamic linker, and modules Python, find before the system's (root's programs too)"},
		{"/usr/local/lib/python3.11/dist-packages/apt/__init__.py", "libraries the dynamic linker, and modules Python, find before the system's (root's programs too)"},
		// update-initramfs (at every kernel or firmware upgrade) runs the
		// hooks as root and copies the scripts into the initramfs, which
		// runs them at boot; update-grub runs grub.d's; kernel-install its
		// plugins; an rc?.d link starts an init script at boot.
		{"/usr/share/initramfs-tools/hooks/hello", "hooks update-initramfs runs as root, and scripts the initramfs runs at boot"},
		{"/etc/initramfs-tools/scripts/init-top/hello", "hooks update-initramfs runs as root, and scripts the initramfs runs at boot"},
		{"/etc/grub.d/09_hello", "scripts update-grub runs as root, which write the boot menu"},
		{"/usr/lib/kernel/install.d/50-hello.install", "plugins kernel-install runs as root at kernel installation"},
		{"/etc/rc2.d/S01hello", "init scripts started at boot (a link here enables one)"},
		// The name servers every download of the node asks, as /etc/hosts
		// is where names resolve (no package owns either: the installer
		// or DHCP wrote it).
		{"/etc/resolv.conf", "where host names resolve (the name servers asked)"},
		// Debian's PAM modules are in the multiarch folder (libpam-modules'
		// /lib/x86_64-linux-gnu/security/pam_unix.so): common-session names
		// pam_systemd.so, which a node without libpam-systemd lacks, and a
		// package's file of that name is loaded into every login as root.
		{"/lib/x86_64-linux-gnu/security/pam_systemd.so", "PAM modules"},
		{"/usr/lib/aarch64-linux-gnu/security/pam_systemd.so", "PAM modules"},
		// nsswitch.conf names modules a node may lack (Debian 12's:
		// services: db files, netgroup: nis): glibc loads the file of that
		// name into every program that looks one up, root's daemons too.
		{"/usr/lib/x86_64-linux-gnu/libnss_db.so.2", "NSS modules: glibc loads one that nsswitch.conf names (a node may lack db, nis or systemd) into every program that looks up a user, group, host or service, root's too"},
		{"/lib/libnss_nis.so.2", "NSS modules: glibc loads one that nsswitch.conf names (a node may lack db, nis or systemd) into every program that looks up a user, group, host or service, root's too"},
		// Debian's python3 runs the import lines of each .pth file of its
		// dist-packages at every start (setuptools' distutils-precedence.pth
		// loads _distutils_hack so).
		{"/usr/lib/python3/dist-packages/hello.pth", "a .pth file: Python runs its import lines at the start of every Python program, root's too"},
		{"/usr/lib/python3.11/dist-packages/hello.pth", "a .pth file: Python runs its import lines at the start of every Python program, root's too"},
	} {
		t.Run(tt.dest, func(t *testing.T) {
			head := edit(t, helloRecipe, `revision: "1"`, `revision: "2"`, "    files:\n", "    files:\n      - {file: k, dest: \""+tt.dest+"\"}\n")
			rep := gateBase(t, base, map[string]string{"recipes/hello.yaml": head, "recipes/hello/k": "k\n"})
			var got []string
			for _, it := range rep.Review {
				if it.Kind == KindRootConfig {
					got = append(got, it.Message)
				}
			}
			var want []string
			if tt.want != "" {
				want = []string{"package hello [amd64]: " + tt.dest + " added: " + tt.want}
			}
			if !slices.Equal(got, want) {
				t.Errorf("root-config review:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
			}
		})
	}
}

// TestRepoFileLinkedOut: a config or trusted root of the base that the
// change replaces by a link out of the repository (to a file of the CI
// runner: an empty one drops every setting) is the change's, though what
// it leads to is not: the config's settings are compared with the base's,
// and the root is changed. A link out that the base has as it is, is none.
func TestRepoFileLinkedOut(t *testing.T) {
	dir, _, b := committed(t, map[string]string{
		"updeb.yaml":      "sigstore: {trusted-root: trust/root.json}\nmirrors:\n  - {prefix: https://example.org/, to: https://mirror.example.org/}\n",
		"trust/root.json": `{"mediaType": "a"}`,
	})
	ctx := context.Background()
	outside := t.TempDir()
	for name, content := range map[string]string{"empty.yaml": "{}\n", "root.json": `{"mediaType": "b"}`} {
		if err := os.WriteFile(filepath.Join(outside, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := replaceByLink(t, dir, filepath.Join(outside, "empty.yaml"), "updeb.yaml")
	items, err := b.ConfigReview(ctx, dir, cfg)
	var settings []string
	for _, it := range items {
		settings = append(settings, strings.Fields(strings.TrimPrefix(it.Message, "the config updeb.yaml changes "))[0])
	}
	if err != nil || !slices.Equal(settings, []string{"mirrors", "sigstore.trusted-root"}) {
		t.Errorf("the config replaced by a link to an empty file out of the repository: %q %v", settings, err)
	}
	root := replaceByLink(t, dir, filepath.Join(outside, "root.json"), "trust/root.json")
	if items, err := b.TrustedRootReview(ctx, dir, root); err != nil || len(items) != 1 || !strings.Contains(items[0].Message, "trust/root.json is changed since HEAD") {
		t.Errorf("the trusted root replaced by a link out of the repository: %+v %v", items, err)
	}
	// Committed so: the base has the same links.
	testenv.Run(t, b.Git, "-C", dir, "-c", "user.email=t@example.org", "-c", "user.name=t", "commit", "-q", "-a", "-m", "links out")
	if items, err := b.ConfigReview(ctx, dir, cfg); err != nil || len(items) != 0 {
		t.Errorf("a link out the base has too: %+v %v", items, err)
	}
	if items, err := b.TrustedRootReview(ctx, dir, root); err != nil || len(items) != 0 {
		t.Errorf("a link out the base has too: %+v %v", items, err)
	}
	// The root's folder replaced by a link to a folder out of the
	// repository: the file itself is no link.
	dir, _, b = committed(t, map[string]string{"trust/root.json": `{"mediaType": "a"}`})
	replaceByLink(t, dir, outside, "trust")
	if items, err := b.TrustedRootReview(ctx, dir, filepath.Join(dir, "trust", "root.json")); err != nil || len(items) != 1 || !strings.Contains(items[0].Message, "trust/root.json is changed since HEAD") {
		t.Errorf("the trusted root's folder replaced by a link out of the repository: %+v %v", items, err)
	}
}

// TestConfigReviewNewLinkOut: a ./updeb.yaml the base lacks, added as a
// link out of the repository (to an empty file of the CI runner), is the
// config in effect in place of /etc/updeb/config.yaml, which the base read:
// what that one set is a setting changed, as for a new file.
func TestConfigReviewNewLinkOut(t *testing.T) {
	dir, _, b := committed(t, map[string]string{"README": "recipes\n"})
	outside := t.TempDir()
	etc := filepath.Join(outside, "config.yaml")
	for name, content := range map[string]string{"empty.yaml": "{}\n", "config.yaml": "mirrors:\n  - {prefix: https://example.org/, to: https://mirror.example.org/}\n"} {
		if err := os.WriteFile(filepath.Join(outside, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := replaceByLink(t, dir, filepath.Join(outside, "empty.yaml"), "updeb.yaml")
	items, err := b.ConfigReview(context.Background(), dir, cfg, etc)
	if err != nil || len(items) != 1 || !strings.HasPrefix(items[0].Message, "the config updeb.yaml changes mirrors since HEAD: none, was https://example.org/ -> https://mirror.example.org/ in "+etc) {
		t.Errorf("a new config that links out of the repository: %+v %v", items, err)
	}
}

// TestConfigReviewRelease: the settings that decide what every suite's
// Release says and apt checks on the nodes are config lines: valid-for
// (its Valid-Until: without it, whoever serves an old Release freezes the
// nodes at old versions unseen) and the origin, label and codename apt
// preferences and unattended-upgrades select packages by.
func TestConfigReviewRelease(t *testing.T) {
	dir, write, b := committed(t, map[string]string{"updeb.yaml": "repo: {dir: repo, valid-for: 168h, origin: Example, label: Example, codename: example}\n"})
	cfg := filepath.Join(dir, "updeb.yaml")
	write("updeb.yaml", "repo: {dir: repo, origin: Examp1e, label: Example, codename: example}\n")
	items, err := b.ConfigReview(context.Background(), dir, cfg)
	var settings []string
	for _, it := range items {
		settings = append(settings, strings.Fields(strings.TrimPrefix(it.Message, "the config updeb.yaml changes "))[0])
	}
	if err != nil || !slices.Equal(settings, []string{"repo.origin", "repo.valid-for"}) {
		t.Errorf("valid-for dropped, origin changed: %q %v", settings, err)
	}
}

// TestConfigReviewHugeFile: a file of the change the review compares (here
// the TUF root, which verify never loads itself) is read as a stream beside
// the base's, never held whole: a TUF root of 3 GB (sparse) made verify
// --base hold 3 GB. One GiB here; what the review allocates stays far
// below it, and the file is still flagged.
func TestConfigReviewHugeFile(t *testing.T) {
	dir, _, b := committed(t, map[string]string{"updeb.yaml": "sigstore: {tuf-root: certs/tuf-root.json}\n", "certs/tuf-root.json": `{"signed": {}}`})
	if err := os.Truncate(filepath.Join(dir, "certs", "tuf-root.json"), 1<<30); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	items, err := b.ConfigReview(context.Background(), dir, filepath.Join(dir, "updeb.yaml"))
	runtime.ReadMemStats(&after)
	if err != nil || len(items) != 1 || items[0].Subject != "certs/tuf-root.json" {
		t.Errorf("a TUF root of 1 GiB: %+v %v", items, err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 16<<20 {
		t.Errorf("the review of a TUF root of 1 GiB allocated %d bytes", n)
	}
}
