package sigstore

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/snappy"
	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protodsse "github.com/sigstore/protobuf-specs/gen/pb-go/dsse"
	protorekor "github.com/sigstore/protobuf-specs/gen/pb-go/rekor/v1"
	"github.com/sigstore/sigstore-go/pkg/tlog"
	sgverify "github.com/sigstore/sigstore-go/pkg/verify"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/updeb/updeb/pkg/digest"
)

const workflow = "https://github.com/cilium/cilium-cli/.github/workflows/release.yaml@refs/tags/v0.19.2"

var workflowPolicy = Policy{IdentityRegexp: `https://github\.com/cilium/cilium-cli/\.github/workflows/release\.yaml@refs/tags/v.*`, Issuer: actionsIssuer}

// attest makes a v0.3 bundle of an in-toto statement over subjects, signed
// by the virtual Sigstore as identity, with its log entry (signed entry
// timestamp and inclusion proof).
func (v *virtual) attest(identity, issuer string, subjects map[string]digest.Set) []byte {
	v.t.Helper()
	return v.attestType(identity, issuer, SLSAProvenanceV1, subjects)
}

// attestType is attest with a statement of another predicate type.
func (v *virtual) attestType(identity, issuer, predicateType string, subjects map[string]digest.Set) []byte {
	v.t.Helper()
	var subj []map[string]any
	for name, ds := range subjects {
		d := map[string]string{}
		for a, h := range ds {
			d[string(a)] = h
		}
		subj = append(subj, map[string]any{"name": name, "digest": d})
	}
	stmt, _ := json.Marshal(map[string]any{"_type": "https://in-toto.io/Statement/v1", "subject": subj,
		"predicateType": predicateType, "predicate": map[string]any{"buildDefinition": map[string]any{}}})
	e, err := v.vs.Attest(identity, issuer, stmt)
	if err != nil {
		v.t.Fatal(err)
	}
	vc, _ := e.VerificationContent()
	sc, _ := e.SignatureContent()
	env := sc.EnvelopeContent().RawEnvelope()
	entries, _ := e.TlogEntries()
	tle := entries[0].TransparencyLogEntry()
	en := v.signSET(entry{body: tle.CanonicalizedBody, integratedTime: tle.IntegratedTime, logIndex: tle.LogIndex, logID: hex.EncodeToString(tle.LogId.KeyId)})
	p, err := v.vs.GetInclusionProof(en.body)
	if err != nil {
		v.t.Fatal(err)
	}
	root, _ := hex.DecodeString(*p.RootHash)
	var hashes [][]byte
	for _, h := range p.Hashes {
		b, _ := hex.DecodeString(h)
		hashes = append(hashes, b)
	}
	payload, _ := base64.StdEncoding.DecodeString(env.Payload)
	sig, _ := base64.StdEncoding.DecodeString(env.Signatures[0].Sig)
	pb := &protobundle.Bundle{
		MediaType: "application/vnd.dev.sigstore.bundle.v0.3+json",
		VerificationMaterial: &protobundle.VerificationMaterial{
			Content: &protobundle.VerificationMaterial_Certificate{Certificate: &protocommon.X509Certificate{RawBytes: vc.Certificate().Raw}},
			TlogEntries: []*protorekor.TransparencyLogEntry{{
				LogIndex: en.logIndex, LogId: &protocommon.LogId{KeyId: tle.LogId.KeyId}, KindVersion: &protorekor.KindVersion{Kind: "dsse", Version: "0.0.1"},
				IntegratedTime: en.integratedTime, CanonicalizedBody: en.body,
				InclusionPromise: &protorekor.InclusionPromise{SignedEntryTimestamp: en.set},
				InclusionProof: &protorekor.InclusionProof{LogIndex: *p.LogIndex, RootHash: root, TreeSize: *p.TreeSize, Hashes: hashes,
					Checkpoint: &protorekor.Checkpoint{Envelope: *p.Checkpoint}},
			}},
		},
		Content: &protobundle.Bundle_DsseEnvelope{DsseEnvelope: &protodsse.Envelope{Payload: payload, PayloadType: env.PayloadType,
			Signatures: []*protodsse.Signature{{Sig: sig}}}},
	}
	b, err := protojson.Marshal(pb)
	if err != nil {
		v.t.Fatal(err)
	}
	return b
}

// fakeGitHub serves the attestations API and, apart, the storage that serves
// bundles by reference.
type fakeGitHub struct {
	api, storage *httptest.Server
	mu           sync.Mutex
	pages        map[string][]byte // "page" query value ("" first) -> body
	links        map[string]string // page -> next page value
	blobs        map[string][]byte
	apiAuth      []string
	storageAuth  []string
	apiPaths     []string
	status       int
}

func newFakeGitHub(t *testing.T) *fakeGitHub {
	f := &fakeGitHub{pages: map[string][]byte{}, links: map[string]string{}, blobs: map[string][]byte{}}
	f.api = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.apiAuth = append(f.apiAuth, r.Header.Get("Authorization"))
		f.apiPaths = append(f.apiPaths, r.URL.RequestURI())
		if f.status != 0 {
			w.Header().Set("X-RateLimit-Remaining", "0")
			http.Error(w, `{"message":"API rate limit exceeded"}`, f.status)
			return
		}
		page := r.URL.Query().Get("page")
		b, ok := f.pages[page]
		if !ok {
			http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
			return
		}
		if next, ok := f.links[page]; ok {
			w.Header().Set("Link", fmt.Sprintf(`<%s>; rel="next", <%s?page=1>; rel="first"`, next, f.api.URL))
		}
		w.Write(b)
	}))
	f.storage = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.storageAuth = append(f.storageAuth, r.Header.Get("Authorization"))
		b, ok := f.blobs[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/x-snappy")
		w.Write(b)
	}))
	t.Cleanup(f.api.Close)
	t.Cleanup(f.storage.Close)
	return f
}

// page sets the answer for a page: inline bundles, and blob paths served by
// reference.
func (f *fakeGitHub) page(name string, inline [][]byte, byRef []string, next string) {
	var atts []map[string]any
	for _, b := range inline {
		atts = append(atts, map[string]any{"bundle": json.RawMessage(b), "repository_id": 1})
	}
	for _, p := range byRef {
		atts = append(atts, map[string]any{"bundle": nil, "bundle_url": f.storage.URL + p, "initiator": "user"})
	}
	b, _ := json.Marshal(map[string]any{"attestations": atts})
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pages[name] = b
	if next != "" {
		f.links[name] = next
	}
}

func (f *fakeGitHub) blob(path string, b []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.blobs[path] = b
}

func TestVerifyGitHubAttestationsReal(t *testing.T) {
	gh := newFakeGitHub(t)
	oci := realBundles[3]
	// GitHub lists two attestations for one digest: a first one (here one of
	// another signer) does not count, the one served by reference does.
	gh.page("", [][]byte{readTestdata(t, "sigstore.js@2.0.0-provenance.sigstore.json")}, nil, gh.api.URL+"/repos/sigstore/cosign/attestations/sha256:x?page=2")
	gh.page("2", nil, []string{"/attestations/1/2.json.sn"}, "")
	gh.blob("/attestations/1/2.json.sn", snappy.Encode(nil, readTestdata(t, oci.file)))
	ver := newVerifier(t, goodRoot(t), Options{GitHubAPIURL: gh.api.URL, GitHubToken: "ghp_secret"})
	res, err := ver.VerifyGitHubAttestations(ctx(t), oci.policy(), oci.digests(), "sigstore/cosign")
	if err != nil {
		t.Fatal(err)
	}
	if res.Shape != ShapeGitHubAttestation || res.Identity != oci.identity || res.LogIndex != oci.logIndex ||
		res.Source != gh.storage.URL+"/attestations/1/2.json.sn" || res.PredicateType != "https://cosign.sigstore.dev/attestation/v1" {
		t.Errorf("result %+v", res)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "token.actions.githubusercontent.com") {
		t.Errorf("warnings %q", res.Warnings)
	}
	if !bytes.Equal(res.Bundle, readTestdata(t, oci.file)) {
		t.Error("Result.Bundle is not the bundle that verified")
	}
	want := "/repos/sigstore/cosign/attestations/sha256:" + oci.digest + "?per_page=100"
	if len(gh.apiPaths) != 2 || gh.apiPaths[0] != want {
		t.Errorf("API asked %q, want first %q", gh.apiPaths, want)
	}
	for _, a := range gh.apiAuth {
		if a != "Bearer ghp_secret" {
			t.Errorf("API request without the token: %q", a)
		}
	}
	if len(gh.storageAuth) != 1 || gh.storageAuth[0] != "" {
		t.Errorf("the storage saw Authorization %q: the token leaked", gh.storageAuth)
	}
}

func TestVerifyGitHubAttestationsVirtual(t *testing.T) {
	v := newVirtual(t)
	art := digestsOf([]byte("cilium-linux-amd64.tar.gz"))
	other := digestsOf([]byte("cilium-darwin-amd64.tar.gz"))
	good := v.attest(workflow, actionsIssuer, map[string]digest.Set{"cilium-linux-amd64.tar.gz": art, "cilium-darwin-amd64.tar.gz": other})
	forOther := v.attest(workflow, actionsIssuer, map[string]digest.Set{"cilium-darwin-amd64.tar.gz": other})
	fork := v.attest("https://github.com/evil/cilium-cli/.github/workflows/release.yaml@refs/tags/v0.19.2", actionsIssuer, map[string]digest.Set{"cilium-linux-amd64.tar.gz": art})

	gh := newFakeGitHub(t)
	ver := newVerifier(t, v.root, Options{GitHubAPIURL: gh.api.URL})
	gh.page("", [][]byte{fork, forOther}, nil, "")
	_, err := ver.VerifyGitHubAttestations(ctx(t), workflowPolicy, art, "cilium/cilium-cli")
	refusedWith(t, err, ReasonIdentity, "none of 2 attestations", "evil/cilium-cli", "GitHub attestations of cilium/cilium-cli")
	refusedWith(t, err, ReasonDigestMismatch, "cilium-darwin-amd64.tar.gz", art[digest.SHA256])

	gh.page("", [][]byte{fork, forOther, good}, nil, "")
	res, err := ver.VerifyGitHubAttestations(ctx(t), workflowPolicy, art, "cilium/cilium-cli")
	if err != nil {
		t.Fatal(err)
	}
	if res.Identity != workflow || len(res.Warnings) != 2 || res.PredicateType != "https://slsa.dev/provenance/v1" {
		t.Errorf("result %+v", res)
	}
	// The attestation also verifies as a bundle file, and refuses another artifact.
	if _, err := ver.VerifyBundle(ctx(t), workflowPolicy, other, good, "good.sigstore.json"); err != nil {
		t.Errorf("second subject: %v", err)
	}
	_, err = ver.VerifyBundle(ctx(t), workflowPolicy, digestsOf([]byte("x")), good, "good.sigstore.json")
	refusedWith(t, err, ReasonDigestMismatch, "cilium-linux-amd64.tar.gz")
}

func TestVerifyGitHubAttestationsRefusals(t *testing.T) {
	oci := realBundles[3]
	good := readTestdata(t, oci.file)
	snappyBomb := snappy.Encode(nil, bytes.Repeat([]byte{' '}, maxBundleSize+1))
	framed := &bytes.Buffer{}
	w := snappy.NewBufferedWriter(framed)
	w.Write(good)
	w.Close()

	for _, c := range []struct {
		name     string
		setup    func(gh *fakeGitHub)
		reason   Reason
		mentions []string
	}{
		{"no attestation (404)", func(gh *fakeGitHub) {}, ReasonNoAttestation, []string{"holds no attestation"}},
		{"empty list", func(gh *fakeGitHub) { gh.page("", nil, nil, "") }, ReasonNoAttestation, nil},
		{"garbage page", func(gh *fakeGitHub) { gh.pages[""] = []byte("<html>") }, ReasonMalformed, []string{"malformed attestations response", "per_page=100"}},
		{"neither bundle nor URL", func(gh *fakeGitHub) { gh.pages[""] = []byte(`{"attestations":[{"bundle":null}]}`) }, ReasonMalformed, []string{"neither a bundle nor a bundle_url"}},
		{"garbage bundle", func(gh *fakeGitHub) { gh.page("", [][]byte{[]byte(`{"mediaType":1}`)}, nil, "") }, ReasonMalformed, []string{"attestation 1"}},
		{"bundle gone", func(gh *fakeGitHub) { gh.page("", nil, []string{"/gone.json.sn"}, "") }, ReasonNoAttestation, []string{"/gone.json.sn", "404"}},
		{"blob not snappy", func(gh *fakeGitHub) {
			gh.page("", nil, []string{"/a.json.sn"}, "")
			gh.blob("/a.json.sn", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
		}, ReasonMalformed, []string{"/a.json.sn", "snappy"}},
		{"snappy bomb", func(gh *fakeGitHub) {
			gh.page("", nil, []string{"/a.json.sn"}, "")
			gh.blob("/a.json.sn", snappyBomb)
		}, ReasonMalformed, []string{"decompresses to"}},
		{"next page on another host", func(gh *fakeGitHub) {
			gh.page("", [][]byte{readTestdata(t, "dsse.sigstore.json")}, nil, "https://evil.example/repos/x?page=2")
		}, ReasonMalformed, []string{"evil.example", "is not on"}},
		{"more attestations than per_page", func(gh *fakeGitHub) {
			flood := make([][]byte, 100000)
			for i := range flood {
				flood[i] = []byte(`{}`)
			}
			gh.page("", flood, nil, "")
		}, ReasonMalformed, []string{"100000 attestations in one page", "per_page=100"}},
		{"endless pages", func(gh *fakeGitHub) {
			for i := range 20 {
				gh.page(fmt.Sprint(i), [][]byte{readTestdata(t, "dsse.sigstore.json")}, nil, fmt.Sprintf("%s/repos/sigstore/cosign/attestations/x?page=%d", gh.api.URL, i+1))
			}
			gh.links[""] = gh.api.URL + "/repos/sigstore/cosign/attestations/x?page=1"
			gh.pages[""] = gh.pages["0"]
		}, ReasonNoAttestation, []string{"stopped after 10 pages"}},
		// A Link back to a page read: its attestations are not fetched
		// and verified again, ten times over.
		{"pages in a loop", func(gh *fakeGitHub) {
			again := gh.api.URL + "/repos/sigstore/cosign/attestations/x?page=1"
			gh.page("", [][]byte{readTestdata(t, "dsse.sigstore.json")}, nil, again)
			gh.page("1", [][]byte{readTestdata(t, "dsse.sigstore.json")}, nil, again)
		}, ReasonMalformed, []string{"none of 3 attestations counts", "leads back to a page already read"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			gh := newFakeGitHub(t)
			c.setup(gh)
			ver := newVerifier(t, goodRoot(t), Options{GitHubAPIURL: gh.api.URL})
			_, err := ver.VerifyGitHubAttestations(ctx(t), oci.policy(), oci.digests(), "sigstore/cosign")
			refusedWith(t, err, c.reason, c.mentions...)
		})
	}

	t.Run("bundle forms", func(t *testing.T) {
		for name, blob := range map[string][]byte{"snappy stream": framed.Bytes(), "plain JSON": good} {
			gh := newFakeGitHub(t)
			gh.page("", nil, []string{"/b"}, "")
			gh.blob("/b", blob)
			if _, err := newVerifier(t, goodRoot(t), Options{GitHubAPIURL: gh.api.URL}).VerifyGitHubAttestations(ctx(t), oci.policy(), oci.digests(), "sigstore/cosign"); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	})

	t.Run("rate limited", func(t *testing.T) {
		gh := newFakeGitHub(t)
		gh.status = http.StatusForbidden
		_, err := newVerifier(t, goodRoot(t), Options{GitHubAPIURL: gh.api.URL, Timeout: time.Second}).VerifyGitHubAttestations(ctx(t), oci.policy(), oci.digests(), "sigstore/cosign")
		var fe *FetchError
		if !errors.As(err, &fe) || fe.Status != 403 || !strings.Contains(err.Error(), "rate limit") {
			t.Errorf("want a *FetchError saying rate limit, got %v", err)
		}
		// With a token sent, "set a GitHub token" would send the operator
		// after a setting they have.
		_, err = newVerifier(t, goodRoot(t), Options{GitHubAPIURL: gh.api.URL, GitHubToken: "ghp_secret", Timeout: time.Second}).VerifyGitHubAttestations(ctx(t), oci.policy(), oci.digests(), "sigstore/cosign")
		if err == nil || strings.Contains(err.Error(), "set a GitHub token") || !strings.Contains(err.Error(), "the GitHub token's quota is spent") {
			t.Errorf("with a token: %v", err)
		}
	})

	// A gateway that quotes the request's headers back in its error page:
	// the token is not printed.
	t.Run("the token quoted back", func(t *testing.T) {
		api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "bad request; Authorization: "+r.Header.Get("Authorization"), http.StatusBadRequest)
		}))
		defer api.Close()
		_, err := newVerifier(t, goodRoot(t), Options{GitHubAPIURL: api.URL, GitHubToken: "ghp_secret"}).VerifyGitHubAttestations(ctx(t), oci.policy(), oci.digests(), "sigstore/cosign")
		if err == nil || strings.Contains(err.Error(), "ghp_secret") || !strings.Contains(err.Error(), "Authorization: Bearer xxxxx") {
			t.Errorf("want the error with the token hidden, got %v", err)
		}
	})

	t.Run("caller mistakes", func(t *testing.T) {
		ver := newVerifier(t, goodRoot(t), Options{})
		for _, repo := range []string{"", "cosign", "sigstore/", "/cosign", "a/b/c", "sigstore/..", "sig store/cosign", "sigstore/cosign?x=1"} {
			if _, err := ver.VerifyGitHubAttestations(ctx(t), oci.policy(), oci.digests(), repo); !errors.Is(err, ErrPolicy) {
				t.Errorf("repo %q: want ErrPolicy, got %v", repo, err)
			}
		}
		if _, err := ver.VerifyGitHubAttestations(ctx(t), oci.policy(), digest.Set{digest.SHA512: strings.Repeat("0", 128)}, "sigstore/cosign"); !errors.Is(err, ErrPolicy) {
			t.Errorf("no sha256: want ErrPolicy, got %v", err)
		}
	})
}

// testEntity is what sigstore-go's test CA makes.
type testEntity interface {
	VerificationContent() (sgverify.VerificationContent, error)
	SignatureContent() (sgverify.SignatureContent, error)
	TlogEntries() ([]*tlog.Entry, error)
	Timestamps() ([][]byte, error)
}

// bundleOf makes a v0.3 bundle of a test entity as it stands: its
// certificate, envelope, log entries and RFC 3161 timestamps.
func bundleOf(t *testing.T, e testEntity, withTimestamps bool) []byte {
	t.Helper()
	entries, _ := e.TlogEntries()
	var tss [][]byte
	if withTimestamps {
		tss, _ = e.Timestamps()
	}
	return bundleWith(t, e, entries, tss)
}

// bundleWith makes a v0.3 bundle of a test entity's certificate and envelope
// with the log entries and RFC 3161 timestamps given.
func bundleWith(t *testing.T, e testEntity, entries []*tlog.Entry, timestamps [][]byte) []byte {
	t.Helper()
	vc, _ := e.VerificationContent()
	sc, _ := e.SignatureContent()
	env := sc.EnvelopeContent().RawEnvelope()
	payload, _ := base64.StdEncoding.DecodeString(env.Payload)
	sig, _ := base64.StdEncoding.DecodeString(env.Signatures[0].Sig)
	vm := &protobundle.VerificationMaterial{
		Content: &protobundle.VerificationMaterial_Certificate{Certificate: &protocommon.X509Certificate{RawBytes: vc.Certificate().Raw}},
	}
	for _, e := range entries {
		vm.TlogEntries = append(vm.TlogEntries, e.TransparencyLogEntry())
	}
	if len(timestamps) > 0 {
		vm.TimestampVerificationData = &protobundle.TimestampVerificationData{}
		for _, ts := range timestamps {
			vm.TimestampVerificationData.Rfc3161Timestamps = append(vm.TimestampVerificationData.Rfc3161Timestamps, &protocommon.RFC3161SignedTimestamp{SignedTimestamp: ts})
		}
	}
	b, err := protojson.Marshal(&protobundle.Bundle{
		MediaType: "application/vnd.dev.sigstore.bundle.v0.3+json", VerificationMaterial: vm,
		Content: &protobundle.Bundle_DsseEnvelope{DsseEnvelope: &protodsse.Envelope{Payload: payload, PayloadType: env.PayloadType,
			Signatures: []*protodsse.Signature{{Sig: sig}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// attestV2 is an attestation by workflow of a statement whose one subject,
// name, has the artifact's sha256, logged as a Rekor v2 entry (inclusion
// proof and checkpoint, no signed entry timestamp), with an RFC 3161
// timestamp.
func (v *virtual) attestV2(name string, art digest.Set) testEntity {
	v.t.Helper()
	stmt, _ := json.Marshal(map[string]any{"_type": "https://in-toto.io/Statement/v1", "predicateType": "https://slsa.dev/provenance/v1",
		"subject": []any{map[string]any{"name": name, "digest": map[string]string{"sha256": art[digest.SHA256]}}}, "predicate": map[string]any{}})
	e, err := v.vs.AttestHashedRekordV2(workflow, actionsIssuer, stmt)
	if err != nil {
		v.t.Fatal(err)
	}
	return e
}

// A Rekor v2 entry carries no integrated time: the time to check the
// certificate at comes from an RFC 3161 timestamp of a TSA the root lists.
func TestVerifyBundleRekorV2Timestamped(t *testing.T) {
	v := newVirtual(t)
	art := digestsOf([]byte("etcd-v3.6.0-linux-amd64.tar.gz"))
	e := v.attestV2("etcd", art)
	ver := newVerifier(t, v.root, Options{})
	res, err := ver.VerifyBundle(ctx(t), workflowPolicy, art, bundleOf(t, e, true), "etcd.sigstore.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Timestamps) != 1 || !res.IntegratedTime.IsZero() || res.LogURL != "https://rekor.localhost" {
		t.Errorf("result %+v", res)
	}
	_, err = ver.VerifyBundle(ctx(t), workflowPolicy, art, bundleOf(t, e, false), "etcd.sigstore.json")
	refusedWith(t, err, ReasonNoTimestamp, "etcd.sigstore.json")
}

// TestBundleURLSignatureNotPrinted: GitHub's attestations name their
// bundles by pre-signed storage URLs, which download the bundle for anyone
// holding them until they expire. The Result's Source, a refusal and a
// FetchError name such a URL with its signature and token hidden: a bundle
// that verifies, one that is gone (404), one that is no bundle, a storage
// that refuses (403) and one that cuts the connection.
func TestBundleURLSignatureNotPrinted(t *testing.T) {
	const signed = "?sp=r&se=2026-12-03T17%3A00%3A00Z&sig=S3CRETSIG&jwt=eyJS3CRET"
	const hidden = "?sp=r&se=2026-12-03T17%3A00%3A00Z&sig=xxxxx&jwt=xxxxx"
	oci := realBundles[3]
	gh := newFakeGitHub(t)
	gh.blob("/good.sn", snappy.Encode(nil, readTestdata(t, oci.file)))
	gh.blob("/junk.sn", []byte("not a bundle"))
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/cut" {
			c, _, _ := w.(http.Hijacker).Hijack()
			c.Close()
			return
		}
		http.Error(w, "AuthenticationFailed: Signature not valid in the specified time frame", http.StatusForbidden)
	}))
	t.Cleanup(refusing.Close)
	ver := newVerifier(t, goodRoot(t), Options{GitHubAPIURL: gh.api.URL})
	noSecret := func(what, s string) {
		t.Helper()
		if strings.Contains(s, "S3CRET") {
			t.Errorf("%s prints the bundle_url's signature: %s", what, s)
		}
	}

	gh.page("", nil, []string{"/good.sn" + signed}, "")
	res, err := ver.VerifyGitHubAttestations(ctx(t), oci.policy(), oci.digests(), "sigstore/cosign")
	if err != nil {
		t.Fatal(err)
	}
	if res.Source != gh.storage.URL+"/good.sn"+hidden {
		t.Errorf("Source = %q, want %q", res.Source, gh.storage.URL+"/good.sn"+hidden)
	}
	for _, c := range []struct{ path, want string }{
		{"/gone.sn", gh.storage.URL + "/gone.sn" + hidden},
		{"/junk.sn", gh.storage.URL + "/junk.sn" + hidden},
		{refusing.URL + "/expired", refusing.URL + "/expired" + hidden},
		{refusing.URL + "/cut", refusing.URL + "/cut" + hidden},
	} {
		if strings.HasPrefix(c.path, "/") {
			gh.page("", nil, []string{c.path + signed}, "")
		} else {
			b, _ := json.Marshal(map[string]any{"attestations": []any{map[string]any{"bundle": nil, "bundle_url": c.path + signed}}})
			gh.mu.Lock()
			gh.pages[""] = b
			gh.mu.Unlock()
		}
		_, err := ver.VerifyGitHubAttestations(ctx(t), oci.policy(), oci.digests(), "sigstore/cosign")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to name %s", c.path, err, c.want)
			continue
		}
		noSecret(c.path, err.Error())
	}
}

// TestBundleStorageRefusalBlamesNoToken: the token goes to GitHub's API
// alone, never to the storage of a bundle_url. A 403 of that storage (its
// pre-signed URL expired) is said as access denied, not "check the token",
// which sent the operator after a token the storage never saw; a 403 of the
// API, which got it, still says so.
func TestBundleStorageRefusalBlamesNoToken(t *testing.T) {
	oci := realBundles[3]
	storage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "AuthenticationFailed", http.StatusForbidden)
	}))
	t.Cleanup(storage.Close)
	gh := newFakeGitHub(t)
	b, _ := json.Marshal(map[string]any{"attestations": []any{map[string]any{"bundle": nil, "bundle_url": storage.URL + "/b.json.sn?sig=x"}}})
	gh.mu.Lock()
	gh.pages[""] = b
	gh.mu.Unlock()
	ver := newVerifier(t, goodRoot(t), Options{GitHubAPIURL: gh.api.URL, GitHubToken: "ghp_secret"})
	_, err := ver.VerifyGitHubAttestations(ctx(t), oci.policy(), oci.digests(), "sigstore/cosign")
	if err == nil || strings.Contains(err.Error(), "check the token") || !strings.Contains(err.Error(), "403 Forbidden (access denied)") {
		t.Errorf("the storage's 403: %v\nwant access denied, without 'check the token'", err)
	}
	gh.mu.Lock()
	gh.status = http.StatusForbidden
	gh.mu.Unlock()
	_, err = ver.VerifyGitHubAttestations(ctx(t), oci.policy(), oci.digests(), "sigstore/cosign")
	if err == nil || !strings.Contains(err.Error(), "check the token") && !strings.Contains(err.Error(), "quota is spent") {
		t.Errorf("the API's 403: %v\nwant it to point at the token", err)
	}
}

// TestEarlierEntry: of two verified attestations, the one signed first
// vouches, across logs (a newer log's indexes start again), a timestamp
// standing for a log's time; one log's entries in one second by index; one
// with no time last; and the order is total.
func TestEarlierEntry(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name  string
		first Result
		then  Result
	}{
		{"by integrated time across logs", Result{LogID: "bb", LogIndex: 900, IntegratedTime: t0}, Result{LogID: "aa", LogIndex: 1, IntegratedTime: t0.Add(time.Second)}},
		{"a timestamp for a log's time", Result{LogID: "v2", LogIndex: 5, Timestamps: []time.Time{t0.Add(time.Hour), t0}}, Result{LogID: "v1", LogIndex: 1, IntegratedTime: t0.Add(time.Minute)}},
		{"one second, by index", Result{LogID: "aa", LogIndex: 7, IntegratedTime: t0}, Result{LogID: "aa", LogIndex: 8, IntegratedTime: t0}},
		{"no time last", Result{LogID: "aa", LogIndex: 9, IntegratedTime: t0}, Result{LogID: "aa", LogIndex: 1}},
		{"at last by bytes", Result{Bundle: []byte("a")}, Result{Bundle: []byte("b")}},
	}
	for _, tt := range tests {
		if !earlierEntry(&tt.first, &tt.then) || earlierEntry(&tt.then, &tt.first) {
			t.Errorf("%s: earlierEntry does not put %+v first", tt.name, tt.first)
		}
	}
}
