package sigstore

import (
	"errors"
	"testing"
	"time"

	"github.com/updeb/updeb/pkg/digest"
)

const (
	npmDigest      = "76176ffa33808b54602c7c35de5c6e9a4deb96066dba6533f50ac234f4f1f4c6b3527515dc17c06fbe2860030f410eee69ea20079bd3a2c6f3dcf3b329b10751"
	validityDigest = "6ae8a75555209fd6c44157c0aed8016e763ff435a19cf186f76863140143ff72" // sha256 of public-key-validity.artifact.txt
)

// Key-signed bundles verify under a pinned key (SOURCES.md: both valid), and
// are refused for another key, altered bytes, a key validity window that
// excludes the signing time, and a root that lists a log they carry no entry
// of.
func TestVerifyKeySignedBundles(t *testing.T) {
	npmKey, validityKey := readTestdata(t, "publish_key.pub"), readTestdata(t, "public-key-validity.pem")
	publish, validity := readTestdata(t, "bundle-publish.json"), readTestdata(t, "public-key-validity.sigstore.json")
	tsaRoot := loadRoot(t, "trusted_root_public_key_validity.json")
	artifact := readTestdata(t, "public-key-validity.artifact.txt")
	if got := digestsOf(artifact)[digest.SHA256]; got != validityDigest {
		t.Fatalf("artifact sha256 %s", got)
	}
	npm := digest.Set{digest.SHA512: npmDigest}
	// npm's publish attestation, which its registry key signs.
	const npmPublish = "https://github.com/npm/attestation/tree/main/specs/publish/v0.1"
	for _, tr := range []*TrustedRoot{goodRoot(t), loadRoot(t, "trusted_root_public_good_2023.json"), loadRoot(t, "trusted_root_pgi.json")} {
		res, err := newVerifier(t, tr, Options{}).VerifyBundle(ctx(t), Policy{PublicKey: npmKey, PredicateTypes: []string{npmPublish}}, npm, publish, "bundle-publish.json")
		if err != nil {
			t.Fatalf("%s: %v", tr.Name(), err)
		}
		if res.PublicKey != "SHA256:HpCKVUWf5t2sHMvBN+qGMe6DcDL+wqLMxSizjYHxcQg=" || res.Identity != "" || res.LogURL != "https://rekor.sigstore.dev" ||
			res.IntegratedTime.IsZero() || res.PredicateType != npmPublish {
			t.Errorf("%s: result %+v", tr.Name(), res)
		}
	}
	res, err := newVerifier(t, tsaRoot, Options{}).VerifyBundle(ctx(t), Policy{PublicKey: validityKey}, digestsOf(artifact), validity, "public-key-validity.sigstore.json")
	if err != nil {
		t.Fatal(err)
	}
	if res.PublicKey != "SHA256:IpekKjxVkmTfB4YqY8q5sGEAeVtF9x3m7jHdhAxpgjQ=" || len(res.Timestamps) != 1 || res.LogURL != "" {
		t.Errorf("result %+v", res)
	}

	epoch := time.Unix(0, 0).UTC()
	for _, c := range []struct {
		name   string
		root   *TrustedRoot
		pol    Policy
		art    digest.Set
		bundle []byte
		reason Reason
		want   []string
	}{
		{"another key (npm's)", tsaRoot, Policy{PublicKey: npmKey, PredicateTypes: []string{npmPublish}}, digestsOf(artifact), validity, ReasonBadSignature, []string{"SHA256:HpCKVUWf5t2sHMvBN+qGMe6DcDL+wqLMxSizjYHxcQg=", "IpekKjxVkmTfB4YqY8q5sGEAeVtF9x3m7jHdhAxpgjQ="}},
		{"another key (validity's)", goodRoot(t), Policy{PublicKey: validityKey}, npm, publish, ReasonBadSignature, []string{"SHA256:IpekKjxVkmTfB4YqY8q5sGEAeVtF9x3m7jHdhAxpgjQ="}},
		{"altered artifact", tsaRoot, Policy{PublicKey: validityKey}, digestsOf([]byte("test content\n")), validity, ReasonDigestMismatch, nil},
		{"altered npm package", goodRoot(t), Policy{PublicKey: npmKey, PredicateTypes: []string{npmPublish}}, digest.Set{digest.SHA512: flipDigit(npmDigest)}, publish, ReasonDigestMismatch, []string{flipDigit(npmDigest)}},
		// As upstream's TestPublicKeyValidityCheckedAgainstSignedTimestamp.
		{"key validity excludes the signing time", tsaRoot, Policy{PublicKey: validityKey, KeyValidFrom: epoch, KeyValidUntil: epoch.Add(time.Second)},
			digestsOf(artifact), validity, ReasonKeyValidity, []string{"1970-01-01 00:00:00 UTC to 1970-01-01 00:00:01 UTC"}},
		{"key valid only after the signing time", tsaRoot, Policy{PublicKey: validityKey, KeyValidFrom: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)},
			digestsOf(artifact), validity, ReasonKeyValidity, []string{"2030-01-01 00:00:00 UTC to no end"}},
		{"npm key expired before the log entry", goodRoot(t), Policy{PublicKey: npmKey, KeyValidUntil: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)},
			npm, publish, ReasonKeyValidity, nil},
		{"no log entry, root lists logs", goodRoot(t), Policy{PublicKey: validityKey}, digestsOf(artifact), validity, ReasonNoLogEntry, []string{"transparency-log entry"}},
		{"keyless bundle under a pinned key", goodRoot(t), Policy{PublicKey: npmKey, PredicateTypes: []string{npmPublish}}, digest.Set{digest.SHA512: realBundles[0].digest},
			readTestdata(t, "bundle-provenance.json"), ReasonIdentity, []string{sigstoreJSRelease, "pinned public key SHA256:HpCK"}},
		{"key-signed bundle under an identity", goodRoot(t), Policy{Identity: "npm", Issuer: "https://npmjs.com"}, npm, publish, ReasonIdentity,
			[]string{"SHA256:jl3bwswu80PjjokCgh0o2w5c2U4LhQAE57gj9cz1kzA", "pins this public key"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := newVerifier(t, c.root, Options{}).VerifyBundle(ctx(t), c.pol, c.art, c.bundle, "b.sigstore.json")
			refusedWith(t, err, c.reason, append(c.want, "b.sigstore.json")...)
		})
	}
}

func TestKeyPolicyErrors(t *testing.T) {
	key := readTestdata(t, "publish_key.pub")
	now := time.Now()
	for name, p := range map[string]Policy{
		"key and identity":             {PublicKey: key, Identity: "a@example.com", Issuer: "https://accounts.google.com"},
		"key and issuer":               {PublicKey: key, Issuer: "https://accounts.google.com"},
		"not PEM":                      {PublicKey: []byte("ssh-ed25519 AAAA")},
		"a certificate, not a key":     {PublicKey: []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")},
		"window without a key":         {Identity: "a@example.com", Issuer: "https://accounts.google.com", KeyValidFrom: now},
		"window ends before it starts": {PublicKey: key, KeyValidFrom: now, KeyValidUntil: now.Add(-time.Second)},
	} {
		if err := p.Validate(); !errors.Is(err, ErrPolicy) {
			t.Errorf("%s: want ErrPolicy, got %v", name, err)
		}
	}
	if err := (Policy{PublicKey: key, KeyValidFrom: now}).Validate(); err != nil {
		t.Errorf("key with a start: %v", err)
	}
	// The detached form and GitHub attestations are keyless.
	v := newVirtual(t)
	s := v.sign(k8sIdentity, k8sIssuer, []byte("kubectl"), time.Now().Add(5*time.Minute))
	ver := newVerifier(t, v.root, Options{})
	if _, err := ver.VerifyDetached(ctx(t), Policy{PublicKey: key}, s.digests, s.detached()); !errors.Is(err, ErrPolicy) {
		t.Errorf("detached with a key: %v", err)
	}
	if _, err := ver.VerifyGitHubAttestations(ctx(t), Policy{PublicKey: key}, s.digests, "cilium/cilium-cli"); !errors.Is(err, ErrPolicy) {
		t.Errorf("attestations with a key: %v", err)
	}
}

// KeyFingerprint names a key as results do, and refuses what is not one.
func TestKeyFingerprint(t *testing.T) {
	fpr, err := KeyFingerprint(readTestdata(t, "publish_key.pub"))
	if err != nil || fpr != "SHA256:HpCKVUWf5t2sHMvBN+qGMe6DcDL+wqLMxSizjYHxcQg=" {
		t.Fatalf("KeyFingerprint = %q, %v", fpr, err)
	}
	if _, err := KeyFingerprint([]byte("ssh-ed25519 AAAA")); !errors.Is(err, ErrPolicy) {
		t.Fatalf("not PEM: want ErrPolicy, got %v", err)
	}
}
