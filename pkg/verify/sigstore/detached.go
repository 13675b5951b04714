package sigstore

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"

	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protorekor "github.com/sigstore/protobuf-specs/gen/pb-go/rekor/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/options"

	"github.com/updeb/updeb/pkg/digest"
)

// Size caps of cosign's detached files: a signature is under 600 bytes
// (RSA-4096), a leaf certificate a few kilobytes.
const (
	maxSignatureFile   = 64 << 10
	maxCertificateFile = 64 << 10
	maxSignature       = 2048
)

// Detached is a cosign keyless signature as published beside an artifact
// (cosign sign-blob --b64 --output-signature FILE.sig --output-certificate
// FILE.cert, as Kubernetes does on dl.k8s.io).
type Detached struct {
	// Signature is the .sig file: the base64 of the raw signature, one line.
	Signature []byte
	// SignatureSource names it (file or URL) in messages.
	SignatureSource string
	// Certificate is the .cert file: the base64 of a PEM certificate (what
	// cosign writes), or the PEM itself. The Fulcio leaf only.
	Certificate []byte
	// CertificateSource names it in messages.
	CertificateSource string
	// RekorEntry, when not nil, is Rekor's answer at RekorEntryURL, which the
	// caller fetched itself (through its cache, so that a signature verified
	// once verifies again offline); VerifyDetached then asks nothing. It is
	// verified exactly as an answer VerifyDetached fetched. nil: VerifyDetached
	// asks Options.HTTPClient.
	RekorEntry []byte
}

// detached is a cosign signature checked offline: the policy, the
// certificate and the signature over the artifact's sha256, and the body of
// the Rekor entry that must exist for it.
type detached struct {
	id      *identity
	subject string
	sum     []byte
	sig     []byte
	cert    *x509.Certificate
	body    []byte
}

// checkDetached does every check of VerifyDetached that needs no log entry.
func checkDetached(pol Policy, artifact digest.Set, d Detached) (*detached, error) {
	id, err := pol.compile()
	if err != nil {
		return nil, err
	}
	if err := id.keyless("cosign's detached signatures with a certificate"); err != nil {
		return nil, err
	}
	sum, err := artifactSHA256(artifact)
	if err != nil {
		return nil, err
	}
	subject := d.SignatureSource
	sig, err := parseSignatureFile(d.Signature)
	if err != nil {
		return nil, refuse(subject, ReasonMalformed, d.SignatureSource, "%v", err)
	}
	cert, err := parseCertificateFile(d.Certificate)
	if err != nil {
		return nil, refuse(subject, ReasonMalformed, d.CertificateSource, "%v", err)
	}
	summary, r, why := summarize(cert)
	if r != "" {
		return nil, refuse(subject, r, d.CertificateSource, "%s", why)
	}
	if r, why := id.check(summary); r != "" {
		return nil, refuse(subject, r, d.CertificateSource, "%s", why)
	}
	if r, why := checkSignature(cert, sig, sum); r != "" {
		return nil, refuse(subject, r, d.SignatureSource, "%s", why)
	}
	return &detached{id: id, subject: subject, sum: sum, sig: sig, cert: cert,
		body: canonicalBody(hex.EncodeToString(sum), sig, cert)}, nil
}

// RekorEntryURL checks d offline as VerifyDetached does (the policy, the
// certificate, the signature over the artifact) and returns the URL of the
// Rekor entry VerifyDetached would fetch, for a caller that fetches it itself
// and passes the answer in Detached.RekorEntry.
func (v *Verifier) RekorEntryURL(pol Policy, artifact digest.Set, d Detached) (string, error) {
	if err := v.trusted(); err != nil {
		return "", err
	}
	c, err := checkDetached(pol, artifact, d)
	if err != nil {
		return "", err
	}
	return v.entryURL(c.body), nil
}

// VerifyDetached checks a cosign keyless signature over the artifact whose
// digests are given (sha256 is required: cosign signs the sha256). The
// certificate alone proves nothing (it was valid for ten minutes), so the
// Rekor entry of this signature is fetched through Options.HTTPClient from
// Options.RekorURL (or taken from Detached.RekorEntry) and verified offline:
// its signed entry timestamp (and inclusion proof) against a log of the
// trusted root, its body being exactly this signature, certificate and
// digest, the certificate chaining to a Fulcio CA of the root and valid at
// the entry's integrated time, and the Policy.
//
// The signature, certificate and Policy are checked before any request, so a
// wrong identity or an altered artifact is refused offline.
func (v *Verifier) VerifyDetached(ctx context.Context, pol Policy, artifact digest.Set, d Detached) (*Result, error) {
	if err := v.trusted(); err != nil {
		return nil, err
	}
	c, err := checkDetached(pol, artifact, d)
	if err != nil {
		return nil, err
	}
	subject := c.subject
	var (
		entryURL string
		entries  []*protorekor.TransparencyLogEntry
	)
	if d.RekorEntry != nil {
		entryURL = v.entryURL(c.body)
		if entries, err = v.parseAnswer(subject, entryURL, d.RekorEntry); err != nil {
			return nil, err
		}
	} else if entryURL, entries, err = v.lookupRekor(ctx, subject, c.body); err != nil {
		return nil, err
	}
	tle, r := matchingEntry(entries, c.body)
	if r != nil {
		r.Source = entryURL
		return nil, &RefusedError{Subject: subject, Refusals: []Refusal{*r}}
	}
	b, err := detachedBundle(c.cert, c.sig, c.sum, tle)
	if err != nil {
		return nil, refuse(subject, ReasonMalformed, entryURL, "the log entry does not make a valid bundle: %v", err)
	}
	res, ref := v.verifyEntity(entryURL, b, c.id, artifact, true)
	if ref != nil {
		return nil, &RefusedError{Subject: subject, Refusals: []Refusal{*ref}}
	}
	res.Shape = ShapeDetached
	return res, nil
}

// artifactSHA256 returns the artifact's sha256 from the set, or an ErrPolicy.
func artifactSHA256(artifact digest.Set) ([]byte, error) {
	h, ok := artifact[digest.SHA256]
	if !ok {
		return nil, fmt.Errorf("%w: the artifact's sha256 is required (have %v)", ErrPolicy, artifact.Algorithms())
	}
	sum, err := hex.DecodeString(h)
	if err != nil || len(sum) != 32 {
		return nil, fmt.Errorf("%w: artifact sha256 %q is not 64 hex digits", ErrPolicy, h)
	}
	return sum, nil
}

// parseSignatureFile decodes cosign's .sig file: base64 of the raw signature
// (whitespace, including line breaks, is ignored).
func parseSignatureFile(b []byte) ([]byte, error) {
	if len(b) > maxSignatureFile {
		return nil, fmt.Errorf("signature file larger than %d bytes: not a cosign signature", maxSignatureFile)
	}
	t := bytes.TrimSpace(b)
	switch {
	case len(t) == 0:
		return nil, errors.New("empty signature file")
	case bytes.HasPrefix(t, []byte("-----BEGIN")):
		return nil, errors.New("this is a PEM block, not a cosign signature (base64 of the raw signature): were .sig and .cert swapped?")
	case t[0] == '{':
		return nil, errors.New("this is JSON, not a cosign signature: a Sigstore bundle is verified as a bundle")
	}
	sig, err := base64.StdEncoding.DecodeString(string(stripSpace(t)))
	if err != nil {
		return nil, fmt.Errorf("not base64 (cosign's .sig is one line of base64): %v", err)
	}
	if len(sig) < 8 || len(sig) > maxSignature {
		return nil, fmt.Errorf("decodes to %d bytes, not a signature (want 8 to %d)", len(sig), maxSignature)
	}
	return sig, nil
}

// parseCertificateFile decodes cosign's .cert file: base64 of a PEM
// certificate, or the PEM. Exactly one CERTIFICATE block, the leaf.
func parseCertificateFile(b []byte) (*x509.Certificate, error) {
	if len(b) > maxCertificateFile {
		return nil, fmt.Errorf("certificate file larger than %d bytes: not a signing certificate", maxCertificateFile)
	}
	p := bytes.TrimSpace(b)
	if len(p) == 0 {
		return nil, errors.New("empty certificate file")
	}
	if !bytes.HasPrefix(p, []byte("-----BEGIN")) {
		d, err := base64.StdEncoding.DecodeString(string(stripSpace(p)))
		if err != nil {
			return nil, fmt.Errorf("neither PEM nor base64 of PEM (cosign's .cert): %v", err)
		}
		p = bytes.TrimSpace(d)
		if !bytes.HasPrefix(p, []byte("-----BEGIN")) {
			return nil, errors.New("decodes from base64, but not to a PEM certificate (\"-----BEGIN CERTIFICATE-----\")")
		}
	}
	block, rest := pem.Decode(p)
	if block == nil {
		return nil, errors.New("damaged PEM block (cut short?)")
	}
	if block.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("PEM block is %q, want CERTIFICATE", block.Type)
	}
	if len(bytes.TrimSpace(rest)) != 0 {
		return nil, errors.New("more than the one leaf certificate: the .cert file holds the Fulcio leaf only (intermediates come from the trusted root)")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("damaged certificate: %v", err)
	}
	return cert, nil
}

func stripSpace(b []byte) []byte {
	return bytes.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '\r' || r == '\n' {
			return -1
		}
		return r
	}, b)
}

// checkSignature verifies sig over the sha256 digest with the certificate's
// key, before asking Rekor anything.
func checkSignature(cert *x509.Certificate, sig, sum []byte) (Reason, string) {
	if _, ok := cert.PublicKey.(ed25519.PublicKey); ok {
		return ReasonUnsupported, "an Ed25519 signature can only be verified over the whole artifact, not its digest"
	}
	ver, err := signature.LoadVerifier(cert.PublicKey, crypto.SHA256)
	if err != nil {
		return ReasonUnsupported, fmt.Sprintf("certificate key: %v", err)
	}
	if err := ver.VerifySignature(bytes.NewReader(sig), bytes.NewReader(nil), options.WithDigest(sum)); err != nil {
		return ReasonDigestMismatch, fmt.Sprintf("the signature does not verify over the artifact's sha256 %x with the certificate's key: the artifact was altered, or the signature belongs to another file", sum)
	}
	return "", ""
}

// matchingEntry picks the entry whose body is exactly the one logged for this
// signature, certificate and digest.
func matchingEntry(entries []*protorekor.TransparencyLogEntry, body []byte) (*protorekor.TransparencyLogEntry, *Refusal) {
	for _, e := range entries {
		if bytes.Equal(e.CanonicalizedBody, body) {
			return e, nil
		}
	}
	found := "another body"
	if len(entries) > 0 {
		found = describeBody(entries[0].CanonicalizedBody)
	}
	return nil, &Refusal{Reason: ReasonBadLogEntry, Detail: fmt.Sprintf("the entry served is not the one for this signature: want %s, found %s", describeBody(body), found)}
}

// describeBody summarises a hashedrekord body for a message.
func describeBody(b []byte) string {
	var e hashedRekord
	if err := json.Unmarshal(b, &e); err != nil || e.Kind != "hashedrekord" {
		return fmt.Sprintf("a %d-byte entry that is no hashedrekord", len(b))
	}
	sig := e.Spec.Signature.Content
	if len(sig) > 16 {
		sig = sig[:16] + "..."
	}
	return fmt.Sprintf("a hashedrekord of %s:%s signed %s", e.Spec.Data.Hash.Algorithm, e.Spec.Data.Hash.Value, sig)
}

// detachedBundle assembles the verified pieces into a Sigstore bundle, the
// form sigstore-go verifies and a caller may keep: v0.3 when the entry has an
// inclusion proof, else v0.1 (which carries the certificate as a chain).
func detachedBundle(cert *x509.Certificate, sig, sum []byte, tle *protorekor.TransparencyLogEntry) (*bundle.Bundle, error) {
	pb := &protobundle.Bundle{
		VerificationMaterial: &protobundle.VerificationMaterial{TlogEntries: []*protorekor.TransparencyLogEntry{tle}},
		Content: &protobundle.Bundle_MessageSignature{MessageSignature: &protocommon.MessageSignature{
			MessageDigest: &protocommon.HashOutput{Algorithm: protocommon.HashAlgorithm_SHA2_256, Digest: sum},
			Signature:     sig,
		}},
	}
	version := "v0.3"
	if tle.InclusionProof != nil {
		pb.VerificationMaterial.Content = &protobundle.VerificationMaterial_Certificate{Certificate: &protocommon.X509Certificate{RawBytes: cert.Raw}}
	} else {
		version = "v0.1"
		pb.VerificationMaterial.Content = &protobundle.VerificationMaterial_X509CertificateChain{X509CertificateChain: &protocommon.X509CertificateChain{
			Certificates: []*protocommon.X509Certificate{{RawBytes: cert.Raw}}}}
	}
	mt, err := bundle.MediaTypeString(version)
	if err != nil {
		return nil, err
	}
	pb.MediaType = mt
	return bundle.NewBundle(pb)
}
