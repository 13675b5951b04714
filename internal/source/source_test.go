package source

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/fetch"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/testkit/testenv"
	"github.com/updeb/updeb/pkg/digest"
	"github.com/updeb/updeb/pkg/verify/openpgp"
	"github.com/updeb/updeb/pkg/verify/sigstore"
	"github.com/updeb/updeb/pkg/verify/sigstore/sigstoretest"
)

const (
	demoHost  = "https://releases.example.org/"
	helloTGZ  = "hello/v1.2.0/hello-v1.2.0-linux-amd64.tar.gz"
	helloSig  = helloTGZ + ".asc"
	helloSums = helloTGZ + ".sha256sum"
)

// demo copies the demo's recipes, keys and mirror into a new folder, so a
// test may damage the mirror's files.
func demo(t *testing.T) (root, mirror string) {
	t.Helper()
	src, err := filepath.Abs("../../testdata/demo")
	if err != nil {
		t.Fatal(err)
	}
	root = t.TempDir()
	testenv.Run(t, "cp", "-a", filepath.Join(src, "recipes"), filepath.Join(src, "keys"), root)
	mirror = filepath.Join(root, "mirror")
	testenv.Run(t, "cp", "-a", filepath.Join(src, "mirror", "releases.example.org"), mirror)
	return root, mirror
}

func options(t *testing.T, mirror string, offline bool) Options {
	t.Helper()
	return optionsIn(t, filepath.Join(t.TempDir(), "cache"), mirror, offline)
}

// optionsIn fetches into the cache folder cache.
func optionsIn(t *testing.T, cache, mirror string, offline bool) Options {
	t.Helper()
	f, err := fetch.New(cache, fetch.Options{
		Mirrors: []fetch.Mirror{{Prefix: demoHost, To: "file://" + mirror + "/"}},
		Retries: -1,
		Offline: offline,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return Options{Fetcher: f, Now: time.Now, Logger: slog.New(slog.DiscardHandler)}
}

func load(t *testing.T, root, name string) *recipe.Recipe {
	t.Helper()
	r, err := recipe.Load(filepath.Join(root, "recipes", name+".yaml"), recipe.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func resolve(t *testing.T, r *recipe.Recipe) *recipe.Resolved {
	t.Helper()
	rs, err := r.Resolve("amd64", recipe.ResolveOptions{SourcesOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// A source comes back with its artifact in the cache, what vouched for it
// (the pin first, then the signature and the cross-check) and the files it
// was verified with.
func TestVerify(t *testing.T) {
	root, mirror := demo(t)
	got, err := Verify(context.Background(), resolve(t, load(t, root, "hello")), options(t, mirror, false))
	if err != nil {
		t.Fatal(err)
	}
	if names := SortedNames(got); !slices.Equal(names, []string{"hello"}) {
		t.Fatalf("sources %v, want [hello]", names)
	}
	v := got["hello"]
	if len(v.By) < 3 || v.By[0] != "pinned-digest" {
		t.Fatalf("vouched for by %q, want the pin first, then the signature and the cross-check", v.By)
	}
	if !strings.Contains(strings.Join(v.By, " "), "BF6DE05C1AE1CEB285DE5044F3CB238093D0BB4B") {
		t.Errorf("vouched for by %q: the signer's fingerprint is not named", v.By)
	}
	want, err := os.ReadFile(filepath.Join(mirror, helloTGZ))
	if err != nil {
		t.Fatal(err)
	}
	if have, err := os.ReadFile(v.Artifact.Path); err != nil || string(have) != string(want) {
		t.Fatalf("the cached artifact %s is not the mirror's bytes (%v)", v.Artifact.Path, err)
	}
	var aux []string
	for _, a := range v.Aux {
		aux = append(aux, a.URL)
	}
	slices.Sort(aux)
	if wantAux := []string{demoHost + helloSig, demoHost + helloSums}; !slices.Equal(aux, wantAux) {
		t.Errorf("verified with %v, want %v", aux, wantAux)
	}
}

// Bytes that do not match the pin never come back, whatever else vouches.
func TestVerifyRefusesOtherBytes(t *testing.T) {
	root, mirror := demo(t)
	p := filepath.Join(mirror, helloTGZ)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 1
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Verify(context.Background(), resolve(t, load(t, root, "hello")), options(t, mirror, false))
	var mm *digest.MismatchError
	if !errors.As(err, &mm) || got != nil {
		t.Fatalf("Verify = %v, %v; want a *digest.MismatchError and nothing", got, err)
	}
}

// A signature file that does not verify is fetched once more, then
// discarded with an *AuxError naming it; the artifact is not returned.
func TestVerifyDiscardsABadSignatureFile(t *testing.T) {
	root, mirror := demo(t)
	if err := os.WriteFile(filepath.Join(mirror, helloSig), []byte("<html>502 Bad Gateway</html>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Verify(context.Background(), resolve(t, load(t, root, "hello")), options(t, mirror, false))
	var ae *AuxError
	if !errors.As(err, &ae) || !errors.Is(err, openpgp.ErrSignature) || got != nil {
		t.Fatalf("Verify = %v, %v; want an *AuxError wrapping openpgp.ErrSignature and nothing", got, err)
	}
	if ae.Source != "hello" || len(ae.Files) != 1 || !strings.Contains(ae.Files[0], "signature file fetched from "+demoHost+helloSig) {
		t.Fatalf("AuxError %+v does not name the signature file", ae)
	}
}

// Fetch offline reports every job's misses together, and fetches nothing.
func TestFetchOfflineReportsEveryMiss(t *testing.T) {
	root, mirror := demo(t)
	jobs := []Job{{Recipe: load(t, root, "hello"), Arch: "amd64"}, {Recipe: load(t, root, "hello"), Arch: "arm64"}}
	cache := filepath.Join(t.TempDir(), "cache")
	got, err := Fetch(context.Background(), jobs, recipe.ResolveOptions{}, optionsIn(t, cache, mirror, true))
	var off *fetch.OfflineError
	if !errors.As(err, &off) {
		t.Fatalf("Fetch offline with an empty cache = %v, want an *OfflineError", err)
	}
	for _, arch := range []string{"amd64", "arm64"} {
		if !strings.Contains(strings.Join(off.Missing, " "), "linux-"+arch+".tar.gz") {
			t.Errorf("the %s artifact is not among the misses %v", arch, off.Missing)
		}
	}
	if len(got) != 0 {
		t.Errorf("fetched %d files offline", len(got))
	}
	// Filled online, the same jobs fetch offline: the sources and the files
	// that vouched for them, for both architectures.
	filled, err := Fetch(context.Background(), jobs, recipe.ResolveOptions{}, optionsIn(t, cache, mirror, false))
	if err != nil {
		t.Fatal(err)
	}
	again, err := Fetch(context.Background(), jobs, recipe.ResolveOptions{}, optionsIn(t, cache, mirror, true))
	if err != nil {
		t.Fatalf("offline after filling the cache: %v", err)
	}
	if len(filled) != 6 || len(again) != len(filled) {
		t.Fatalf("fetched %d files online and %d offline, want 6 each (artifact, signature, checksum file per architecture)", len(filled), len(again))
	}
}

// Interrupted, Fetch stops between jobs with the context's error: offline,
// no job looks at the context, and it went on to report every miss (exit 3,
// not 130).
func TestFetchStopsOnSignal(t *testing.T) {
	root, mirror := demo(t)
	jobs := []Job{{Recipe: load(t, root, "hello"), Arch: "amd64"}, {Recipe: load(t, root, "hello"), Arch: "arm64"}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, offline := range []bool{true, false} {
		got, err := Fetch(ctx, jobs, recipe.ResolveOptions{}, optionsIn(t, filepath.Join(t.TempDir(), "cache"), mirror, offline))
		if !errors.Is(err, context.Canceled) || got != nil {
			t.Errorf("offline %v: %d files, %v; want none and context.Canceled", offline, len(got), err)
		}
	}
}

// The options a caller must set are refused, not defaulted.
func TestOptionsRequired(t *testing.T) {
	root, mirror := demo(t)
	rs := resolve(t, load(t, root, "hello"))
	o := options(t, mirror, false)
	o.Now = nil
	if _, err := Verify(context.Background(), rs, o); err == nil || !strings.Contains(err.Error(), "Now") {
		t.Errorf("Verify without a clock = %v, want a refusal naming Options.Now", err)
	}
	o = options(t, mirror, false)
	o.Fetcher = nil
	if _, err := Verify(context.Background(), rs, o); err == nil || !strings.Contains(err.Error(), "Fetcher") {
		t.Errorf("Verify without a fetcher = %v, want a refusal naming Options.Fetcher", err)
	}
}

// The demo's pingd for amd64 in the mirror, and the issuer of its
// signers' certificates.
const (
	pingd  = "pingd/v0.9.1/pingd.amd64"
	issuer = "https://token.actions.githubusercontent.com"
)

// virtualSigstore makes a virtual Sigstore and a verifier that trusts it.
func virtualSigstore(t *testing.T) (*sigstoretest.Sigstore, *sigstore.Verifier) {
	t.Helper()
	vs, err := sigstoretest.New()
	if err != nil {
		t.Fatal(err)
	}
	tr, err := sigstore.ParseTrustedRoot("virtual trusted root", vs.TrustedRoot())
	if err != nil {
		t.Fatal(err)
	}
	v, err := sigstore.New(tr, sigstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return vs, v
}

// verifyPingd replaces the demo's pingd bundle in mirror with bundle and
// verifies the recipe's sources (in a new cache) with v.
func verifyPingd(t *testing.T, root, mirror string, v *sigstore.Verifier, bundle []byte) (map[string]*Verified, error) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(mirror, pingd+".sigstore.json"), bundle, 0o644); err != nil {
		t.Fatal(err)
	}
	o := options(t, mirror, false)
	o.Sigstore = v
	return Verify(context.Background(), resolve(t, load(t, root, "pingd")), o)
}

// A recipe whose identity is a reusable workflow names the repository whose
// run must have signed (source-repository): the demo's pingd, signed by
// slsa-github-generator's workflow for its own run counts, for another
// repository's run it is refused naming both repositories.
func TestVerifySigstoreSourceRepository(t *testing.T) {
	const (
		generator = "https://github.com/slsa-framework/slsa-github-generator/.github/workflows/generator_generic_slsa3.yml@refs/tags/v2.1.0"
		own       = "https://github.com/updeb-demo/pingd"
	)
	root, mirror := demo(t)
	file := filepath.Join(root, "recipes", "pingd.yaml")
	text, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	reusable := strings.Replace(string(text), `identity: "https://github.com/updeb-demo/pingd/.github/workflows/release.yml@refs/tags/v{{.Version}}"`,
		"identity: "+generator+"\n      source-repository: "+own, 1)
	if reusable == string(text) {
		t.Fatal("the demo's pingd names another identity")
	}
	if err := os.WriteFile(file, []byte(reusable), 0o644); err != nil {
		t.Fatal(err)
	}
	artifact, err := os.ReadFile(filepath.Join(mirror, pingd))
	if err != nil {
		t.Fatal(err)
	}
	vs, v := virtualSigstore(t)
	for _, caller := range []string{own, "https://github.com/attacker/pingd"} {
		bundle, err := vs.BundleRun(sigstoretest.Run{Workflow: generator, Issuer: issuer, SourceRepository: caller}, artifact)
		if err != nil {
			t.Fatal(err)
		}
		got, err := verifyPingd(t, root, mirror, v, bundle)
		if caller == own {
			if err != nil {
				t.Fatalf("the caller's own run: %v", err)
			}
			if by := strings.Join(got["pingd"].By, " "); !strings.Contains(by, "sigstore:"+generator+" issuer="+issuer+" source-repository="+own+" rekor=") {
				t.Errorf("vouched for by %q", by)
			}
			continue
		}
		if !errors.Is(err, sigstore.ErrRefused) || !strings.Contains(err.Error(), `source repository "`+caller+`"`) || !strings.Contains(err.Error(), `want "`+own+`"`) {
			t.Errorf("another repository's run: %v, want a refusal naming %s and %s", err, caller, own)
		}
	}
}

// A Sigstore attestation may name its subject by sha512 alone (npm's
// provenance does) while the recipe pins the sha256: the artifact's sha512
// is at hand for the check, as verify-signature and bump have it, and the
// bytes are not taken for altered ones. (The demo's pingd, its bundle
// replaced by such an attestation from a virtual Sigstore.)
func TestVerifySigstoreSHA512Subject(t *testing.T) {
	const workflow = "https://github.com/updeb-demo/pingd/.github/workflows/release.yml@refs/tags/v0.9.1"
	root, mirror := demo(t)
	artifact, err := os.ReadFile(filepath.Join(mirror, pingd))
	if err != nil {
		t.Fatal(err)
	}
	h := digest.NewHasher()
	h.Write(artifact)
	vs, v := virtualSigstore(t)
	bundle, err := vs.Attestation(workflow, issuer, sigstoretest.Subject{Name: "pingd.amd64", Digest: map[string]string{"sha512": h.Sum()[digest.SHA512]}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := verifyPingd(t, root, mirror, v, bundle)
	if err != nil {
		t.Fatal(err)
	}
	if by := strings.Join(got["pingd"].By, " "); !strings.Contains(by, "sigstore:"+workflow+" issuer="+issuer) {
		t.Errorf("vouched for by %q", by)
	}
}
