package sigstore

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrRefused is wrapped by every refusal: the Sigstore material does not vouch
// for the artifact.
var ErrRefused = errors.New("sigstore: signature refused")

// ErrPolicy is returned for an unusable Policy or Options (no identity, no
// issuer, a bad regexp, no HTTP client for a network step); it is the caller's
// mistake, not a refusal.
var ErrPolicy = errors.New("sigstore: bad policy")

// ErrUnavailable is wrapped by a *FetchError: Rekor, GitHub or a TUF repository
// could not be asked (network failure, timeout, HTTP status other than a
// definite answer). Nothing was decided; retrying later may help.
var ErrUnavailable = errors.New("sigstore: service unavailable")

// ErrNotMirrored is wrapped (in a *FetchError) when the HTTP client answered
// a 404 marked with MirrorMissingHeader: a mirror folder that stands in for
// Rekor or GitHub's API lacks the file, which is not the service's "none".
var ErrNotMirrored = errors.New("not in the mirror")

// MirrorMissingHeader marks a 404 that a mirror folder, not the service,
// answered (the value names the missing file); updeb's fetcher sets it.
const MirrorMissingHeader = "X-Mirror-Missing"

// Reason says why Sigstore material was refused; callers may branch on it.
type Reason string

const (
	ReasonMalformed   Reason = "malformed"   // not a parseable signature, certificate, bundle, trusted root or service response
	ReasonUnsupported Reason = "unsupported" // a form this package does not accept: bundle v0.4+, DSSE with several signatures, digest algorithm
	// ReasonIdentity: another signer than the policy names (a CI run of
	// another repository than Policy.SourceRepository among them), a
	// key-signed bundle under an identity and a keyless one under a pinned
	// key.
	ReasonIdentity Reason = "wrong-identity"
	ReasonIssuer   Reason = "wrong-issuer"
	// ReasonUntrustedCertificate: the certificate does not chain to a
	// certificate authority of the trusted root at the signing time, or lacks a
	// valid signed certificate timestamp when the root lists CT logs.
	ReasonUntrustedCertificate Reason = "untrusted-certificate"
	// ReasonCertificateTime: the log entry's time lies outside the short-lived
	// certificate's validity.
	ReasonCertificateTime Reason = "outside-certificate-validity"
	// ReasonKeyValidity: the verified signing time lies outside the pinned
	// public key's validity window (Policy.KeyValidFrom, KeyValidUntil).
	ReasonKeyValidity Reason = "outside-key-validity"
	// ReasonNoLogEntry: no transparency-log entry for this signature (Rekor has
	// none, or the bundle carries none while the trusted root lists a log).
	ReasonNoLogEntry Reason = "no-log-entry"
	// ReasonBadLogEntry: a log entry that does not count: its signed entry
	// timestamp or inclusion proof does not verify against a log of the trusted
	// root (tampered, or from a log the root does not list), or its body is for
	// another signature, certificate or artifact.
	ReasonBadLogEntry Reason = "bad-log-entry"
	// ReasonDigestMismatch: the artifact is not what was signed: the signature
	// does not verify over its digest, or the bundle's digest or statement
	// subjects name other bytes (the artifact was altered, or the material
	// belongs to another artifact).
	ReasonDigestMismatch Reason = "digest-mismatch"
	// ReasonBadSignature: the signature does not verify over the content the
	// material itself names (a tampered envelope or signature).
	ReasonBadSignature Reason = "bad-signature"
	// ReasonStatementType: the in-toto statement a DSSE bundle signs names
	// another _type than Statement v1 or v0.1, or none: what it says of its
	// subjects is not read.
	ReasonStatementType Reason = "statement-type"
	// ReasonPredicateType: the attestation's in-toto statement is of a
	// predicate type the policy does not count by (Policy.PredicateTypes,
	// by default SLSA provenance): an SBOM or test results of the file.
	ReasonPredicateType Reason = "predicate-type"
	// ReasonNoTimestamp: no verified time (log integrated time or RFC 3161
	// timestamp) to check the certificate at.
	ReasonNoTimestamp Reason = "no-timestamp"
	// ReasonNoAttestation: GitHub lists no attestation for the artifact's digest.
	ReasonNoAttestation Reason = "no-attestation"
	// ReasonInvalid: any other failure of sigstore-go's verification; Detail
	// carries its message.
	ReasonInvalid Reason = "invalid"
)

// Refusal is why one piece of Sigstore material did not count.
type Refusal struct {
	Reason Reason
	Source string // the file or URL the refused material came from
	Detail string // a sentence for a person: what was expected, what was found
}

func (r Refusal) String() string {
	if r.Source == "" {
		return r.Detail
	}
	return r.Source + ": " + r.Detail
}

// RefusedError is returned when no Sigstore material vouches for the artifact.
// It wraps ErrRefused.
type RefusedError struct {
	Subject  string // what was being verified: the signature, bundle or repository
	Refusals []Refusal
}

func (e *RefusedError) Error() string {
	var b strings.Builder
	b.WriteString("sigstore verification refused")
	if e.Subject != "" {
		b.WriteString(" for " + e.Subject)
	}
	if len(e.Refusals) == 1 {
		r := e.Refusals[0]
		if r.Source == e.Subject {
			r.Source = "" // said once is enough
		}
		b.WriteString(": " + r.String())
		return b.String()
	}
	fmt.Fprintf(&b, ": none of %d attestations counts", len(e.Refusals))
	for i, r := range e.Refusals {
		fmt.Fprintf(&b, "; %d) %s", i+1, r.String())
	}
	return b.String()
}

func (e *RefusedError) Unwrap() error { return ErrRefused }

// Has reports whether any material was refused for reason r.
func (e *RefusedError) Has(r Reason) bool {
	return slices.ContainsFunc(e.Refusals, func(x Refusal) bool { return x.Reason == r })
}

func refuse(subject string, r Reason, source, format string, args ...any) *RefusedError {
	return &RefusedError{Subject: subject, Refusals: []Refusal{{Reason: r, Source: source, Detail: fmt.Sprintf(format, args...)}}}
}

// FetchError is a service that could not be asked: a network failure, a
// timeout, a truncated body, or an HTTP status that is no answer (5xx, 429,
// 401/403). It wraps ErrUnavailable and the underlying error.
type FetchError struct {
	URL    string
	Status int // HTTP status, 0 when there was no response
	Err    error
}

func (e *FetchError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("sigstore: %s: HTTP %d: %v", e.URL, e.Status, e.Err)
	}
	return fmt.Sprintf("sigstore: %s: %v", e.URL, e.Err)
}

func (e *FetchError) Unwrap() []error { return []error{ErrUnavailable, e.Err} }
