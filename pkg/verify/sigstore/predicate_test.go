package sigstore

import (
	"errors"
	"strings"
	"testing"

	"github.com/updeb/updeb/pkg/digest"
)

// An attestation counts by its predicate type: by default SLSA provenance
// alone, else the types the policy names. The pinned signer's SBOM, test
// results or an attestation of its own type about the artifact say nothing
// of how it was built, and were taken for its provenance.
func TestPredicateTypes(t *testing.T) {
	v, art, subjects, ver := attestSetup(t)
	const sbom = "https://spdx.dev/Document/v2.3"
	for _, typ := range []string{sbom, "https://in-toto.io/attestation/test-result/v0.1", "https://example.com/anything", ""} {
		b := v.attestType(workflow, actionsIssuer, typ, subjects)
		_, err := ver.VerifyBundle(ctx(t), workflowPolicy, art, b, "x.sigstore.json")
		want := []string{"predicate-types:", SLSAProvenanceV1, SLSAProvenanceV02}
		if typ != "" {
			want = append(want, `"`+typ+`"`)
		} else {
			want = append(want, "no predicate type")
		}
		refusedWith(t, err, ReasonPredicateType, want...)
		// Named, it counts; the list replaces the default.
		pol := workflowPolicy
		pol.PredicateTypes = []string{typ, "https://example.com/other"}
		if typ != "" {
			if _, err := ver.VerifyBundle(ctx(t), pol, art, b, "x.sigstore.json"); err != nil {
				t.Errorf("%q named: %v", typ, err)
			}
		}
		pol = workflowPolicy
		pol.AnyPredicateType = true
		if _, err := ver.VerifyBundle(ctx(t), pol, art, b, "x.sigstore.json"); err != nil {
			t.Errorf("%q, any type: %v", typ, err)
		}
	}
	for _, typ := range []string{SLSAProvenanceV1, SLSAProvenanceV02} {
		b := v.attestType(workflow, actionsIssuer, typ, subjects)
		if _, err := ver.VerifyBundle(ctx(t), workflowPolicy, art, b, "x.sigstore.json"); err != nil {
			t.Errorf("%s: %v", typ, err)
		}
		pol := workflowPolicy
		pol.PredicateTypes = []string{sbom}
		_, err := ver.VerifyBundle(ctx(t), pol, art, b, "x.sigstore.json")
		refusedWith(t, err, ReasonPredicateType, typ, sbom)
	}

	// GitHub lists the SBOM and the provenance of one file: the provenance
	// counts, the SBOM is a warning naming its type; the SBOM alone counts
	// for nothing.
	gh := newFakeGitHub(t)
	ghVer := newVerifier(t, v.root, Options{GitHubAPIURL: gh.api.URL})
	gh.page("", [][]byte{v.attestType(workflow, actionsIssuer, sbom, subjects), v.attest(workflow, actionsIssuer, subjects)}, nil, "")
	res, err := ghVer.VerifyGitHubAttestations(ctx(t), workflowPolicy, art, "cilium/cilium-cli")
	if err != nil {
		t.Fatal(err)
	}
	if res.PredicateType != SLSAProvenanceV1 || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], sbom) {
		t.Errorf("result %+v", res)
	}
	gh.page("", [][]byte{v.attestType(workflow, actionsIssuer, sbom, subjects)}, nil, "")
	_, err = ghVer.VerifyGitHubAttestations(ctx(t), workflowPolicy, art, "cilium/cilium-cli")
	refusedWith(t, err, ReasonPredicateType, sbom)

	// A real attestation of cosign's own type (cosign attest) counts only
	// where named.
	oci := realBundles[3]
	real := readTestdata(t, oci.file)
	_, err = newVerifier(t, goodRoot(t), Options{}).VerifyBundle(ctx(t), Policy{Identity: oci.identity, Issuer: oci.issuer}, oci.digests(), real, oci.file)
	refusedWith(t, err, ReasonPredicateType, "https://cosign.sigstore.dev/attestation/v1")
	if _, err := newVerifier(t, goodRoot(t), Options{}).VerifyBundle(ctx(t), oci.policy(), oci.digests(), real, oci.file); err != nil {
		t.Errorf("named: %v", err)
	}

	for _, bad := range []Policy{
		{Identity: workflow, Issuer: actionsIssuer, PredicateTypes: []string{""}},
		{Identity: workflow, Issuer: actionsIssuer, PredicateTypes: []string{" " + SLSAProvenanceV1}},
		{Identity: workflow, Issuer: actionsIssuer, PredicateTypes: []string{SLSAProvenanceV1}, AnyPredicateType: true},
	} {
		if err := bad.Validate(); !errors.Is(err, ErrPolicy) {
			t.Errorf("%q any %v: %v", bad.PredicateTypes, bad.AnyPredicateType, err)
		}
	}
}

// attestSetup is a virtual Sigstore, an artifact, the one subject naming
// it, and a verifier under the virtual root.
func attestSetup(t *testing.T) (*virtual, digest.Set, map[string]digest.Set, *Verifier) {
	v := newVirtual(t)
	art := digestsOf([]byte("cilium-linux-amd64.tar.gz"))
	return v, art, map[string]digest.Set{"cilium-linux-amd64.tar.gz": art}, newVerifier(t, v.root, Options{})
}

// A statement's subjects are matched by digest: one of several subjects,
// one named only by its sha512, or under another name than the file's (the
// build's path of it) is the artifact; a subject named only by digests of
// algorithms updeb does not check is none.
func TestPredicateSubjects(t *testing.T) {
	v, art, _, ver := attestSetup(t)
	for name, subjects := range map[string]map[string]digest.Set{
		"one of several": {"cilium-linux-amd64.tar.gz": art, "cilium-linux-arm64.tar.gz": digestsOf([]byte("arm64"))},
		"sha512 only":    {"cilium-linux-amd64.tar.gz": {digest.SHA512: art[digest.SHA512]}},
		"another name":   {"dist/cilium": art},
	} {
		if _, err := ver.VerifyBundle(ctx(t), workflowPolicy, art, v.attest(workflow, actionsIssuer, subjects), "x.sigstore.json"); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	unknown := v.attest(workflow, actionsIssuer, map[string]digest.Set{"cilium-linux-amd64.tar.gz": {"sha1": "0123456789012345678901234567890123456789", "gitCommit": "abc"}})
	_, err := ver.VerifyBundle(ctx(t), workflowPolicy, art, unknown, "x.sigstore.json")
	refusedWith(t, err, ReasonDigestMismatch, "no sha256 or sha512 digest")
}
