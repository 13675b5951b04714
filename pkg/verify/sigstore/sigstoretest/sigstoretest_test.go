package sigstoretest_test

import (
	"bytes"
	"cmp"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/updeb/updeb/pkg/digest"
	"github.com/updeb/updeb/pkg/verify/sigstore"
	"github.com/updeb/updeb/pkg/verify/sigstore/sigstoretest"
)

const (
	identity = "krel-staging@k8s-releng-prod.iam.gserviceaccount.com"
	issuer   = "https://accounts.google.com"
	workflow = "https://github.com/containerd/containerd/.github/workflows/release.yml@refs/tags/v2.3.4"
	actions  = "https://token.actions.githubusercontent.com"
)

func digestsOf(b []byte) digest.Set {
	h := digest.NewHasher()
	h.Write(b)
	return h.Sum()
}

// deployment makes a virtual Sigstore and reads its trusted root.
func deployment(t *testing.T) (*sigstoretest.Sigstore, *sigstore.TrustedRoot) {
	t.Helper()
	s, err := sigstoretest.New()
	if err != nil {
		t.Fatal(err)
	}
	tr, err := sigstore.ParseTrustedRoot("virtual", s.TrustedRoot())
	if err != nil {
		t.Fatal(err)
	}
	return s, tr
}

// runVerifier makes a virtual Sigstore and a verifier of its trusted root.
func runVerifier(t *testing.T) (*sigstoretest.Sigstore, *sigstore.Verifier) {
	t.Helper()
	s, tr := deployment(t)
	v, err := sigstore.New(tr, sigstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s, v
}

// verified is one form's verification of a run's signature.
type verified struct {
	res *sigstore.Result
	err error
}

// verifyRun signs artifact with a certificate for the CI run r and
// verifies it under pol, detached (its Rekor entry given) and as a bundle.
func verifyRun(t *testing.T, s *sigstoretest.Sigstore, v *sigstore.Verifier, pol sigstore.Policy, r sigstoretest.Run, artifact []byte) map[string]verified {
	t.Helper()
	sig, err := s.SignRun(r, artifact)
	if err != nil {
		t.Fatal(err)
	}
	answer, err := s.Answer(sig.Entry)
	if err != nil {
		t.Fatal(err)
	}
	d := sigstore.Detached{Signature: sig.Sig, SignatureSource: "x.sig", Certificate: sig.Cert, CertificateSource: "x.cert", RekorEntry: answer}
	dres, derr := v.VerifyDetached(t.Context(), pol, digestsOf(artifact), d)
	b, err := s.BundleRun(r, artifact)
	if err != nil {
		t.Fatal(err)
	}
	bres, berr := v.VerifyBundle(t.Context(), pol, digestsOf(artifact), b, "x.sigstore.json")
	return map[string]verified{"detached": {dres, derr}, "bundle": {bres, berr}}
}

// Every kind of material the package makes verifies with package sigstore
// against the trusted root made with it, and not against another's.
func TestMaterialVerifies(t *testing.T) {
	s, tr := deployment(t)
	artifact := []byte("kubernetes-server-linux-amd64.tar.gz stand-in\n")
	ds := digestsOf(artifact)

	rekor := sigstoretest.NewRekor()
	gh := sigstoretest.NewGitHub()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if bytes.HasPrefix([]byte(r.URL.Path), []byte("/repos/")) {
			gh.ServeHTTP(w, r)
			return
		}
		rekor.ServeHTTP(w, r)
	}))
	defer srv.Close()
	v, err := sigstore.New(tr, sigstore.Options{HTTPClient: srv.Client(), RekorURL: srv.URL, GitHubAPIURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	pol := sigstore.Policy{Identity: identity, Issuer: issuer}

	sig, err := s.Sign(identity, issuer, artifact)
	if err != nil {
		t.Fatal(err)
	}
	answer, err := s.Answer(sig.Entry)
	if err != nil {
		t.Fatal(err)
	}
	rekor.Publish(sig.Entry.UUID(), answer)
	d := sigstore.Detached{Signature: sig.Sig, SignatureSource: "x.sig", Certificate: sig.Cert, CertificateSource: "x.cert"}
	res, err := v.VerifyDetached(t.Context(), pol, ds, d)
	if err != nil {
		t.Fatalf("detached: %v", err)
	}
	if res.LogIndex != sig.Entry.LogIndex || res.Identity != identity || res.Source != srv.URL+sig.Entry.Path() {
		t.Errorf("detached result %+v", res)
	}
	u, err := v.RekorEntryURL(pol, ds, d)
	if err != nil || u != srv.URL+sig.Entry.Path() {
		t.Errorf("RekorEntryURL = %q, %v", u, err)
	}
	d.RekorEntry = answer
	before := rekor.Requests()
	if _, err := v.VerifyDetached(t.Context(), pol, ds, d); err != nil || rekor.Requests() != before {
		t.Errorf("detached with the entry given: %v (%d requests)", err, rekor.Requests()-before)
	}

	b, err := s.Bundle(identity, issuer, artifact)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := v.VerifyBundle(t.Context(), pol, ds, b, "x.sigstore.json"); err != nil || res.LogIndex == sig.Entry.LogIndex {
		t.Errorf("bundle: %v (a new log index each time: %+v)", err, res)
	}

	// A key-signed bundle verifies under its pinned key, not another.
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	kb, pub, err := s.KeyBundle(key, artifact)
	if err != nil {
		t.Fatal(err)
	}
	fpr, _ := sigstore.KeyFingerprint(pub)
	if res, err := v.VerifyBundle(t.Context(), sigstore.Policy{PublicKey: pub}, ds, kb, "k.sigstore.json"); err != nil || res.PublicKey != fpr || fpr == "" {
		t.Errorf("key-signed bundle: %v (%+v)", err, res)
	}
	otherKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	_, otherPub, _ := s.KeyBundle(otherKey, artifact)
	if _, err := v.VerifyBundle(t.Context(), sigstore.Policy{PublicKey: otherPub}, ds, kb, "k.sigstore.json"); !errors.Is(err, sigstore.ErrRefused) {
		t.Errorf("key-signed bundle under another key: %v", err)
	}

	att, err := s.Attestation(workflow, actions, sigstoretest.Subject{Name: "containerd.tar.gz", Digest: map[string]string{"sha256": ds[digest.SHA256]}})
	if err != nil {
		t.Fatal(err)
	}
	gh.Add("containerd/containerd", ds[digest.SHA256], att)
	wpol := sigstore.Policy{IdentityRegexp: `^https://github\.com/containerd/containerd/\.github/workflows/release\.yml@refs/tags/v.*$`, Issuer: actions}
	if _, err := v.VerifyGitHubAttestations(t.Context(), wpol, ds, "containerd/containerd"); err != nil {
		t.Errorf("attestation: %v", err)
	}
	if len(gh.Requests()) != 1 {
		t.Errorf("GitHub requests %v", gh.Requests())
	}

	// Another deployment's root trusts none of it.
	other, err := sigstoretest.New()
	if err != nil {
		t.Fatal(err)
	}
	otr, _ := sigstore.ParseTrustedRoot("other", other.TrustedRoot())
	ov, _ := sigstore.New(otr, sigstore.Options{})
	if _, err := ov.VerifyBundle(t.Context(), pol, ds, b, "x.sigstore.json"); err == nil {
		t.Error("another deployment's root accepted the bundle")
	}
}

func TestTUFRefresh(t *testing.T) {
	s, _ := sigstoretest.New()
	repo, err := sigstoretest.NewTUF()
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Publish(s.TrustedRoot(), time.Now().Add(24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(repo)
	defer srv.Close()
	tr, err := sigstore.Refresh(t.Context(), sigstore.RefreshOptions{HTTPClient: srv.Client(), RepositoryURL: srv.URL, Root: repo.Root(), Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(tr.JSON(), s.TrustedRoot()) {
		t.Error("refreshed root differs from the published one")
	}
}

// A CI run's certificate names the workflow that signed and the repository
// whose run it was: a policy naming a reusable workflow accepts it for the
// caller its SourceRepository names (cosign's detached form and a bundle),
// and refuses it for another repository's run, naming both.
func TestRunVerifies(t *testing.T) {
	s, v := runVerifier(t)
	const generator = "https://github.com/slsa-framework/slsa-github-generator/.github/workflows/generator_generic_slsa3.yml@refs/tags/v2.1.0"
	artifact := []byte("tool stand-in\n")
	pol := sigstore.Policy{Identity: generator, Issuer: actions, SourceRepository: "https://github.com/example/tool"}
	for _, caller := range []string{"https://github.com/example/tool", "https://github.com/attacker/tool", "", "https://github.com/slsa-framework/slsa-github-generator"} {
		r := sigstoretest.Run{Workflow: generator, Issuer: actions, SourceRepository: caller}
		for form, c := range verifyRun(t, s, v, pol, r, artifact) {
			err := c.err
			var re *sigstore.RefusedError
			switch {
			case caller == pol.SourceRepository && err != nil:
				t.Errorf("%s, the caller's run: %v", form, err)
			case caller != pol.SourceRepository && (!errors.As(err, &re) || !re.Has(sigstore.ReasonIdentity)):
				t.Errorf("%s, a run of %q: %v, want a wrong-identity refusal", form, caller, err)
			case caller != pol.SourceRepository && (!strings.Contains(err.Error(), pol.SourceRepository) || !strings.Contains(err.Error(), cmp.Or(caller, "no source repository"))):
				t.Errorf("%s, a run of %q: %v, want both repositories named", form, caller, err)
			}
		}
		// Without SourceRepository the workflow's identity accepts the runs
		// of the workflow's own repository only (and a certificate that
		// names no source repository, as Fulcio's before the extension):
		// a reusable workflow signs for anybody's repository that calls it.
		err := verifyRun(t, s, v, sigstore.Policy{Identity: generator, Issuer: actions}, r, artifact)["bundle"].err
		var re *sigstore.RefusedError
		switch own := caller == "" || caller == "https://github.com/slsa-framework/slsa-github-generator"; {
		case own && err != nil:
			t.Errorf("bundle of %q under the identity alone: %v", caller, err)
		case !own && (!errors.As(err, &re) || !re.Has(sigstore.ReasonIdentity) || !strings.Contains(err.Error(), "to accept runs of "+caller+", name it")):
			t.Errorf("bundle of %q under the identity alone: %v, want a wrong-identity refusal saying to name the source repository", caller, err)
		}
	}
}

// TestRunVerifiesEnterpriseIssuer: Fulcio issues GitHub Actions
// certificates under an enterprise's own issuer too
// (https://token.actions.githubusercontent.com/ENTERPRISE, its meta-issuer),
// with the same workflow identity and Source Repository URI. Without a
// source repository in the policy, a reusable workflow's identity counts
// there too only for its own repository's runs: it counted for any
// repository of the enterprise that called it.
func TestRunVerifiesEnterpriseIssuer(t *testing.T) {
	s, v := runVerifier(t)
	const enterprise = actions + "/acme"
	const shared = "https://github.com/acme/release-workflows/.github/workflows/release.yml@refs/tags/v1"
	artifact := []byte("tool stand-in\n")
	pol := sigstore.Policy{Identity: shared, Issuer: enterprise}
	for caller, own := range map[string]bool{"https://github.com/acme/release-workflows": true, "https://github.com/acme/intern-sandbox": false} {
		b, err := s.BundleRun(sigstoretest.Run{Workflow: shared, Issuer: enterprise, SourceRepository: caller}, artifact)
		if err != nil {
			t.Fatal(err)
		}
		_, err = v.VerifyBundle(t.Context(), pol, digestsOf(artifact), b, "x.sigstore.json")
		var re *sigstore.RefusedError
		switch {
		case own && err != nil:
			t.Errorf("a run of the workflow's own repository: %v", err)
		case !own && (!errors.As(err, &re) || !re.Has(sigstore.ReasonIdentity) || !strings.Contains(err.Error(), "to accept runs of "+caller+", name it")):
			t.Errorf("a run of %s, which called the workflow: %v, want a wrong-identity refusal saying to name the source repository", caller, err)
		}
	}
}

// TestRunNamingTwoSigners: a certificate that names its signer twice over,
// and not alike (a second Subject Alternative Name; a v1 issuer extension
// at odds with the v2 one), says nothing of who signed: Fulcio names one
// identity and one issuer. sigstore-go reads the first URI and whichever
// issuer extension comes last, so such a certificate passed a policy that
// names either reading, in the detached and the bundle forms.
func TestRunNamingTwoSigners(t *testing.T) {
	s, v := runVerifier(t)
	artifact := []byte("containerd stand-in\n")
	pol := sigstore.Policy{Identity: workflow, Issuer: actions}
	for _, c := range []struct {
		name   string
		run    sigstoretest.Run
		reason sigstore.Reason
		says   []string
	}{
		{"an e-mail address beside the workflow", sigstoretest.Run{Workflow: workflow, Issuer: actions, Emails: []string{"mallory@example.com"}},
			sigstore.ReasonIdentity, []string{"2 identities", workflow, "mallory@example.com"}},
		{"the v1 issuer another than the v2", sigstoretest.Run{Workflow: workflow, Issuer: issuer, IssuerV2: actions},
			sigstore.ReasonIssuer, []string{issuer, actions, "1.3.6.1.4.1.57264.1.1", "1.3.6.1.4.1.57264.1.8"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for form, c2 := range verifyRun(t, s, v, pol, c.run, artifact) {
				err := c2.err
				var re *sigstore.RefusedError
				if !errors.As(err, &re) || !re.Has(c.reason) {
					t.Errorf("%s: %v, want a %s refusal", form, err, c.reason)
					continue
				}
				t.Logf("%s: %v", form, err)
				for _, w := range c.says {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("%s: %v does not name %q", form, err, w)
					}
				}
			}
		})
	}
}

// TestRunBeforeSourceRepositoryURI: Fulcio's certificates until 2023 name
// the repository whose run signed in the GitHub Workflow Repository
// extension (OID 1.3.6.1.4.1.57264.1.5, OWNER/REPO) alone, the Source
// Repository URI coming later. A policy's source repository is that
// repository either way: such a certificate of the caller's run of a
// reusable workflow verifies (it was refused for naming no source
// repository, so a recipe's older releases signed with
// slsa-github-generator, which lint requires source-repository for, could
// not verify at all), and another repository's run is refused, in the
// detached and the bundle forms. The result names the repository.
func TestRunBeforeSourceRepositoryURI(t *testing.T) {
	s, v := runVerifier(t)
	const generator = "https://github.com/slsa-framework/slsa-github-generator/.github/workflows/generator_generic_slsa3.yml@refs/tags/v1.2.0"
	artifact := []byte("tool stand-in\n")
	pol := sigstore.Policy{Identity: generator, Issuer: actions, SourceRepository: "https://github.com/example/tool"}
	for caller, own := range map[string]bool{"example/tool": true, "attacker/tool": false} {
		r := sigstoretest.Run{Workflow: generator, Issuer: actions, WorkflowRepository: caller}
		for form, c := range verifyRun(t, s, v, pol, r, artifact) {
			var re *sigstore.RefusedError
			switch {
			case own && c.err != nil:
				t.Errorf("%s, the caller's run: %v", form, c.err)
			case own && c.res.SourceRepository != pol.SourceRepository:
				t.Errorf("%s, the caller's run: the result names source repository %q", form, c.res.SourceRepository)
			case !own && (!errors.As(c.err, &re) || !re.Has(sigstore.ReasonIdentity) || !strings.Contains(c.err.Error(), "https://github.com/"+caller) || !strings.Contains(c.err.Error(), "1.3.6.1.4.1.57264.1.5")):
				t.Errorf("%s, a run of %s: %v, want a wrong-identity refusal naming it and the extension it is read from", form, caller, c.err)
			case !own:
				t.Log(c.err)
			}
		}
	}
}
