package sigstore

import (
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/fulcio/certificate"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/tlog"
	sgverify "github.com/sigstore/sigstore-go/pkg/verify"

	"github.com/updeb/updeb/pkg/digest"
	"github.com/updeb/updeb/pkg/plural"
)

// Defaults for Options.
const (
	DefaultRekorURL     = "https://rekor.sigstore.dev"
	DefaultGitHubAPIURL = "https://api.github.com"
	DefaultTimeout      = 60 * time.Second
)

// Options are a Verifier's collaborators. Only VerifyDetached and
// VerifyGitHubAttestations use the network, and only through HTTPClient.
type Options struct {
	// HTTPClient makes every request (proxy, TLS roots, retries are its
	// business). Required by VerifyDetached and VerifyGitHubAttestations;
	// http.DefaultClient is never used.
	HTTPClient *http.Client
	// RekorURL is the Rekor (v1 API) base URL, or a mirror serving the same
	// paths; default DefaultRekorURL. Only GET /api/v1/log/entries/{uuid} is
	// asked, so a static mirror of those files works.
	RekorURL string
	// GitHubAPIURL is the GitHub REST API base URL; default DefaultGitHubAPIURL.
	GitHubAPIURL string
	// GitHubToken is optional (public repositories need none; it raises the
	// rate limit). It is sent only to GitHubAPIURL's scheme and host, never to
	// the storage URLs that serve attestation bundles.
	GitHubToken string
	// Timeout bounds each request, its body included; default DefaultTimeout.
	Timeout time.Duration
	// UserAgent is sent with every request when set.
	UserAgent string
}

// Verifier checks Sigstore material against one trusted root. It is safe for
// concurrent use.
type Verifier struct {
	root   *TrustedRoot
	o      Options
	rekor  *url.URL
	github *url.URL

	// load reads root on first use (NewDeferred), once for every
	// goroutine: loaded guards root and loadErr.
	load    func() (*TrustedRoot, error)
	loaded  sync.Once
	loadErr error
}

// New returns a Verifier trusting root. Besides the transparency-log entry and
// the certificate chain it requires a signed certificate timestamp in the
// certificate when the root lists CT logs (as the public-good root does).
func New(tr *TrustedRoot, o Options) (*Verifier, error) {
	if tr == nil {
		return nil, fmt.Errorf("%w: no trusted root", ErrPolicy)
	}
	return newWith(tr, nil, o)
}

// NewDeferred is New with the trusted root read by load when the Verifier
// first verifies something, not before: a program that may verify nothing
// (a build of recipes signed otherwise) does not fail on a root it does not
// need. load runs at most once; its error is every verification's then.
func NewDeferred(load func() (*TrustedRoot, error), o Options) (*Verifier, error) {
	return newWith(nil, load, o)
}

func newWith(tr *TrustedRoot, load func() (*TrustedRoot, error), o Options) (*Verifier, error) {
	if o.RekorURL == "" {
		o.RekorURL = DefaultRekorURL
	}
	if o.GitHubAPIURL == "" {
		o.GitHubAPIURL = DefaultGitHubAPIURL
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	v := &Verifier{root: tr, o: o, load: load}
	var err error
	if v.rekor, err = baseURL("RekorURL", o.RekorURL); err != nil {
		return nil, err
	}
	if v.github, err = baseURL("GitHubAPIURL", o.GitHubAPIURL); err != nil {
		return nil, err
	}
	return v, nil
}

// verifierFor is sigstore-go's verifier for one bundle. Its options are
// those sigstore-go's own conformance client (test/conformance) takes, so
// that a bundle counts here exactly when it counts for Sigstore's
// conformance suite:
//
//   - a transparency-log entry is required when the trusted root lists a
//     log (always for detached signatures: requireLog), and its signed entry
//     timestamp is required and trusted as the signing time when the bundle
//     carries one;
//   - RFC 3161 timestamps are required to verify (at least one, each one
//     that fails is ignored) when the bundle carries some and the root lists
//     a timestamp authority;
//   - a certificate carries a valid SCT when the root lists CT logs;
//   - a pinned key is trusted beside the root, within its validity window.
//
// A bundle with no time sigstore-go would count is refused here, as
// sigstore-go refuses to build a verifier without one.
func (v *Verifier) verifierFor(b *bundle.Bundle, id *identity, requireLog bool) (*sgverify.Verifier, *Refusal) {
	tr := v.root.tr
	var tm root.TrustedMaterial = tr
	var opts []sgverify.VerifierOption
	if id.key != nil {
		tm = root.TrustedMaterialCollection{id.key.material(), tr}
	} else if len(tr.CTLogs()) > 0 {
		opts = append(opts, sgverify.WithSignedCertificateTimestamps(1))
	}
	timed := false
	if requireLog || len(tr.RekorLogs()) > 0 {
		opts = append(opts, sgverify.WithTransparencyLog(1))
		if b.HasInclusionPromise() {
			opts = append(opts, sgverify.WithIntegratedTimestamps(1))
			timed = true
		}
	}
	ts, err := b.Timestamps()
	if err != nil {
		return nil, &Refusal{Reason: ReasonMalformed, Detail: fmt.Sprintf("timestamps: %v", err)}
	}
	if len(ts) > 0 && len(tr.TimestampingAuthorities()) > 0 {
		opts = append(opts, sgverify.WithSignedTimestamps(1))
		timed = true
	}
	if !timed {
		return nil, &Refusal{Reason: ReasonNoTimestamp, Detail: fmt.Sprintf("no verifiable signing time: the bundle carries %s and %s lists %s, and %s",
			plural.Count(len(ts), "RFC 3161 timestamp", "RFC 3161 timestamps"), v.root.Name(),
			plural.Count(len(tr.TimestampingAuthorities()), "timestamp authority", "timestamp authorities"), v.untimedEntries(b, requireLog))}
	}
	sg, err := sgverify.NewVerifier(tm, opts...)
	if err != nil {
		return nil, &Refusal{Reason: ReasonInvalid, Detail: fmt.Sprintf("verifier: %v", err)}
	}
	return sg, nil
}

// untimedEntries says why no log entry of b vouches for its signing time.
func (v *Verifier) untimedEntries(b *bundle.Bundle, requireLog bool) string {
	entries, _ := b.TlogEntries()
	switch {
	case len(entries) == 0:
		return "it carries no log entry"
	case !requireLog && len(v.root.tr.RekorLogs()) == 0:
		return fmt.Sprintf("its %s %s for nothing: %s lists no transparency log; verify with a trusted root that lists the bundle's log",
			plural.Count(len(entries), "log entry", "log entries"), plural.Of(len(entries), "counts", "count"), v.root.Name())
	}
	var v1, v2 int
	for _, e := range entries {
		if e.IsRekorV2() {
			v2++
		} else {
			v1++
		}
	}
	const stamp = "the time must come from an RFC 3161 timestamp of a timestamp authority the root lists"
	switch {
	case v2 == 0:
		return fmt.Sprintf("its %s no signed entry timestamp (SET, the entry's inclusionPromise), which Rekor v1 gives every entry: the bundle was written without it or it was taken out; get the bundle with its inclusionPromise (fetch it again), or %s", v1Carry(v1), stamp)
	case v1 == 0:
		return fmt.Sprintf("its %s, which %s no signed entry timestamp (SET) by design: %s",
			plural.Count(v2, "log entry is a Rekor v2 entry", "log entries are Rekor v2 entries"), plural.Of(v2, "carries", "carry"), stamp)
	}
	return fmt.Sprintf("its %s no signed entry timestamp (SET, the entry's inclusionPromise) and its %s none by design: %s",
		v1Carry(v1), plural.Count(v2, "Rekor v2 entry carries", "Rekor v2 entries carry"), stamp)
}

// v1Carry is "N Rekor v1 log entries carry", its words agreeing with n.
func v1Carry(n int) string {
	return plural.Count(n, "Rekor v1 log entry carries", "Rekor v1 log entries carry")
}

func baseURL(field, s string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSuffix(s, "/"))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("%w: %s %q is not an http(s) base URL", ErrPolicy, field, s)
	}
	return u, nil
}

// TrustedRoot is the root the Verifier trusts; nil when NewDeferred's load
// failed.
func (v *Verifier) TrustedRoot() *TrustedRoot {
	if v.trusted() != nil {
		return nil
	}
	return v.root
}

// trusted reads the root of NewDeferred, once, and returns why it could
// not be: each exported method calls it before it reads v.root.
func (v *Verifier) trusted() error {
	v.loaded.Do(func() {
		if v.load == nil {
			return
		}
		var tr *TrustedRoot
		if tr, v.loadErr = v.load(); v.loadErr == nil && tr == nil {
			v.loadErr = fmt.Errorf("%w: no trusted root", ErrPolicy)
		}
		v.root = tr
	})
	return v.loadErr
}

// Shape names the kind of Sigstore material that was verified.
type Shape string

const (
	ShapeDetached          Shape = "cosign-detached"    // .sig + .cert, with the Rekor entry looked up
	ShapeBundle            Shape = "bundle"             // a Sigstore bundle file
	ShapeGitHubAttestation Shape = "github-attestation" // a bundle from GitHub's attestations API
)

// Result describes the Sigstore material that vouched for the artifact. Every
// field is verified; none is taken on trust from the material.
type Result struct {
	Shape    Shape
	Identity string // the certificate's SAN that matched the Policy
	Issuer   string // the OIDC issuer in the certificate
	// SourceRepository is the certificate's Source Repository URI (or its
	// older GitHub Workflow Repository, as a URL) where the Policy requires one (it is then Policy.SourceRepository): the
	// repository whose CI run signed, which Identity does not name when it
	// is a workflow that signs for every repository calling it. Empty
	// otherwise.
	SourceRepository string
	// PublicKey is the pinned key that verified (SHA256:base64 of its DER
	// form) for a key-signed bundle; Identity and Issuer are then empty.
	PublicKey string
	// The transparency-log entry that verified (none when the trusted root
	// lists no log and an RFC 3161 timestamp vouched for the time): its index, the log's ID (hex
	// sha256 of its public key), the log's base URL in the trusted root, and
	// the time the log integrated it, when its signed entry timestamp vouches
	// for it (zero otherwise, e.g. for Rekor v2 entries; see Timestamps).
	LogIndex       int64
	LogID          string
	LogURL         string
	IntegratedTime time.Time
	// Timestamps are the verified RFC 3161 timestamps, when the material has
	// them and the root lists their authority.
	Timestamps []time.Time
	// Source is where the verified material came from: the Rekor entry URL
	// (detached), the bundle's file or URL, or the attestation's URL.
	Source string
	// Bundle is the verified material as a Sigstore bundle (JSON): keep it to
	// re-verify offline later (VerifyBundle), e.g. beside a provenance record.
	Bundle []byte
	// PredicateType is the in-toto statement's predicate type for DSSE
	// material (attestations), empty for a plain signature.
	PredicateType string
	// TrustedRoot names the root that verified (its Name and SHA256).
	TrustedRoot string
	// Warnings are other attestations' refusals (VerifyGitHubAttestations).
	Warnings []string
}

// verifyEntity verifies a parsed bundle for artifact under the policy. A
// transparency-log entry is required when requireLog is set or the trusted
// root lists a log. It returns a refusal naming source, or the Result.
func (v *Verifier) verifyEntity(source string, b *bundle.Bundle, id *identity, artifact digest.Set, requireLog bool) (*Result, *Refusal) {
	no := func(r Reason, format string, args ...any) (*Result, *Refusal) {
		return nil, &Refusal{Reason: r, Source: source, Detail: fmt.Sprintf(format, args...)}
	}
	vc, err := b.VerificationContent()
	if err != nil {
		return no(ReasonMalformed, "verification material: %v", err)
	}
	cert := vc.Certificate()
	var summary certificate.Summary
	switch {
	case id.key != nil && cert != nil:
		s, _ := certificate.SummarizeCertificate(cert)
		return no(ReasonIdentity, "signed with a Fulcio certificate (identity %q, issuer %q), want a signature by the pinned %s", s.SubjectAlternativeName, s.Issuer, id)
	case id.key != nil && vc.PublicKey() == nil:
		return no(ReasonMalformed, "neither a certificate nor a public key in the verification material")
	case id.key != nil: // the signature must verify with the pinned key, below
	case cert == nil:
		return no(ReasonIdentity, "signed with a public key (hint %q), not a Fulcio certificate: a key names no identity, so only a policy that pins this public key accepts it", keyHint(vc))
	default:
		var r Reason
		var why string
		if summary, r, why = summarize(cert); r != "" {
			return no(r, "%s", why)
		}
		if r, why := id.check(summary); r != "" {
			return no(r, "%s", why)
		}
	}
	alg, sum, r := signedDigest(b, artifact)
	if r != nil {
		r.Source = source
		return nil, r
	}
	entries, err := b.TlogEntries()
	if err != nil {
		return no(ReasonMalformed, "transparency-log entries: %v", err)
	}
	if len(entries) == 0 && (requireLog || len(v.root.tr.RekorLogs()) > 0) {
		return no(ReasonNoLogEntry, "carries no transparency-log entry, and %s lists transparency logs: a signature proves nothing without an entry in one", v.root.Name())
	}
	sg, r := v.verifierFor(b, id, requireLog)
	if r != nil {
		r.Source = source
		return nil, r
	}
	pol := sgverify.WithKey()
	if id.key == nil {
		ci, err := id.sigstoreGo(summary)
		if err != nil {
			return no(ReasonInvalid, "policy: %v", err)
		}
		pol = sgverify.WithCertificateIdentity(ci)
	}
	res, err := sg.Verify(b, sgverify.NewPolicy(sgverify.WithArtifactDigest(alg, sum), pol))
	if err != nil {
		reason, detail := v.classify(err, entries, cert, id, vc)
		return no(reason, "%s", detail)
	}
	var stamped []time.Time
	for _, ts := range res.VerifiedTimestamps {
		if ts.Type == "TimestampAuthority" {
			stamped = append(stamped, ts.Timestamp.UTC())
		}
	}
	counted := v.countedEntry(entries, stamped)
	if counted == nil && (requireLog || len(v.root.tr.RekorLogs()) > 0) {
		return no(ReasonBadLogEntry, "%s", v.diagnoseEntries(entries, stamped, ""))
	}
	// Judged once the attestation verified: the refusal is of what its
	// signer said.
	if r := id.predicate(b); r != nil {
		r.Source = source
		return nil, r
	}
	out := &Result{
		Identity:    summary.SubjectAlternativeName,
		Issuer:      summary.Issuer,
		Source:      source,
		TrustedRoot: fmt.Sprintf("%s, sha256 %s", v.root.Name(), v.root.SHA256()),
	}
	if id.key != nil {
		out.PublicKey = id.key.fingerprint
	}
	if id.source != "" {
		out.SourceRepository = sourceRepository(summary)
	}
	if e := counted; e != nil {
		out.LogIndex = e.LogIndex()
		out.LogID = hex.EncodeToString([]byte(e.LogKeyID()))
		out.LogURL = v.root.logURL([]byte(e.LogKeyID()))
		if e.HasInclusionPromise() { // only the signed entry timestamp vouches for the time
			out.IntegratedTime = e.IntegratedTime().UTC()
		}
	}
	out.Timestamps = stamped
	if res.Statement != nil {
		out.PredicateType = res.Statement.PredicateType
	}
	if out.Bundle, err = b.MarshalJSON(); err != nil {
		return no(ReasonMalformed, "re-encoding the bundle: %v", err)
	}
	return out, nil
}

// countedEntry is the first entry from a log of the trusted root that
// vouches for the material at its signing time: its signed entry timestamp
// verifies (with the log's key valid at the time it signs, which
// sigstore-go checks), or, for an entry without one (Rekor v2's, or a Rekor
// v1 entry whose SET was taken out), whose inclusion proof carries no time,
// the log's key is valid at every time the RFC 3161 timestamps (stamped)
// vouch for. sigstore-go counts such an entry whatever the log's validity,
// so a log the root retired (its key past its end, as after a compromise)
// or trusts only from a later time vouched for anything stamped today.
func (v *Verifier) countedEntry(entries []*tlog.Entry, stamped []time.Time) *tlog.Entry {
	logs := v.root.tr.RekorLogs()
	for _, e := range entries {
		l, ok := logs[hex.EncodeToString([]byte(e.LogKeyID()))]
		switch {
		case !ok:
		case e.HasInclusionPromise():
			if tlog.VerifySET(e, logs) == nil {
				return e
			}
		case len(stamped) > 0 && !slices.ContainsFunc(stamped, func(t time.Time) bool { return outside(t, l.ValidityPeriodStart, l.ValidityPeriodEnd) }):
			return e
		}
	}
	return nil
}

// predicate refuses an attestation (a DSSE bundle) whose statement is of a
// predicate type the policy does not count by: the signer's SBOM or test
// results of a file are no word on how it was built. Material it cannot
// read is left to signedDigest, which refuses it.
func (id *identity) predicate(b *bundle.Bundle) *Refusal {
	if id.predicates == nil {
		return nil
	}
	sc, err := b.SignatureContent()
	if err != nil || sc.EnvelopeContent() == nil {
		return nil // unreadable, or a message signature, which has no predicate
	}
	st, err := sc.EnvelopeContent().Statement()
	if err != nil || slices.Contains(id.predicates, st.PredicateType) {
		return nil
	}
	found := fmt.Sprintf("of predicate type %q", st.PredicateType)
	if st.PredicateType == "" {
		found = "of no predicate type (predicateType empty or missing)"
	}
	return &Refusal{Reason: ReasonPredicateType, Detail: fmt.Sprintf("the attestation's in-toto statement is %s, not one the policy counts (%s): an attestation of another kind (an SBOM, test results) says nothing of how the artifact was built; if upstream vouches for its releases with this type, name it among the policy's predicate types (a recipe's signature: predicate-types:, verify-signature's --sigstore-predicate-type)",
		found, strings.Join(id.predicates, ", "))}
}

// signedDigest finds what the bundle signs and checks it names the artifact:
// a message signature's digest, or a DSSE statement's subject digests. It
// returns the algorithm and digest to hand sigstore-go.
func signedDigest(b *bundle.Bundle, artifact digest.Set) (string, []byte, *Refusal) {
	sc, err := b.SignatureContent()
	if err != nil {
		return "", nil, &Refusal{Reason: ReasonMalformed, Detail: fmt.Sprintf("signature content: %v", err)}
	}
	if m := sc.MessageSignatureContent(); m != nil {
		alg := digestAlgorithm(m.DigestAlgorithm())
		want, ok := artifact[alg]
		if alg == "" || !ok {
			return "", nil, &Refusal{Reason: ReasonUnsupported, Detail: fmt.Sprintf("signs a %s digest, and the artifact's is not at hand (have %v)", m.DigestAlgorithm(), artifact.Algorithms())}
		}
		if !strings.EqualFold(hex.EncodeToString(m.Digest()), want) {
			return "", nil, &Refusal{Reason: ReasonDigestMismatch, Detail: fmt.Sprintf("signs %s:%x, the artifact is %s:%s: the artifact was altered, or the bundle belongs to another artifact", alg, m.Digest(), alg, want)}
		}
		return string(alg), m.Digest(), nil
	}
	env := sc.EnvelopeContent()
	if env == nil {
		return "", nil, &Refusal{Reason: ReasonMalformed, Detail: "neither a message signature nor a DSSE envelope"}
	}
	if raw := env.RawEnvelope(); raw != nil && len(raw.Signatures) != 1 {
		return "", nil, &Refusal{Reason: ReasonUnsupported, Detail: fmt.Sprintf("DSSE envelope carries %d signatures; exactly one is required", len(raw.Signatures))}
	}
	st, err := env.Statement()
	if err != nil {
		return "", nil, &Refusal{Reason: ReasonMalformed, Detail: fmt.Sprintf("DSSE payload is not an in-toto statement: %v", err)}
	}
	// A subject's digests are all of one file: one that names the artifact
	// by one digest and another file by the other is not the artifact
	// (sigstore-go looks at the one digest it is given), and a statement
	// that says both of it is refused whatever its other subjects say.
	var named []string
	var match digest.Algorithm
	for _, s := range st.Subject {
		var same digest.Algorithm
		var differ []string
		for _, alg := range []digest.Algorithm{digest.SHA256, digest.SHA512} {
			got, ok := s.Digest[string(alg)]
			if !ok {
				continue
			}
			want, have := artifact[alg]
			if have && strings.EqualFold(got, want) {
				if same == "" {
					same = alg
				}
				continue
			}
			if have {
				differ = append(differ, fmt.Sprintf("%s:%s", alg, got))
			}
			if len(named) < 5 {
				named = append(named, fmt.Sprintf("%s (%s:%s)", s.Name, alg, got))
			}
		}
		switch {
		case same != "" && len(differ) > 0:
			return "", nil, &Refusal{Reason: ReasonDigestMismatch, Detail: fmt.Sprintf("the statement's subject %s names the artifact by its %s:%s and another file by its %s: its digests are not of one file, so it is not this file (the artifact is %s); the statement was made wrong, ask upstream for one whose digests agree",
				s.Name, same, s.Digest[string(same)], strings.Join(differ, " and its "), describeDigests(artifact))}
		case same != "" && match == "":
			match = same
		}
	}
	if match != "" {
		sum, err := hex.DecodeString(artifact[match])
		if err != nil {
			return "", nil, &Refusal{Reason: ReasonMalformed, Detail: fmt.Sprintf("artifact digest %s:%s is not hex", match, artifact[match])}
		}
		return string(match), sum, nil
	}
	if len(named) == 0 {
		what := fmt.Sprintf("the statement's %s no sha256 or sha512 digest", plural.Count(len(st.Subject), "subject names", "subjects name"))
		if len(st.Subject) == 0 {
			what = "the statement names no subject"
		}
		return "", nil, &Refusal{Reason: ReasonDigestMismatch, Detail: fmt.Sprintf("%s, so none is the artifact %s: the attestation is not of this file", what, describeDigests(artifact))}
	}
	if len(st.Subject) > 5 {
		named = append(named, fmt.Sprintf("and %d more", len(st.Subject)-5))
	}
	return "", nil, &Refusal{Reason: ReasonDigestMismatch, Detail: fmt.Sprintf("the statement's subjects %s do not include the artifact %s: the artifact was altered, or the attestation belongs to another artifact",
		strings.Join(named, ", "), describeDigests(artifact))}
}

func describeDigests(s digest.Set) string {
	var parts []string
	for _, a := range s.Algorithms() {
		parts = append(parts, string(a)+":"+s[a])
	}
	return strings.Join(parts, " / ")
}

// digestAlgorithm maps a bundle's hash algorithm name (SHA2_256) to ours.
func digestAlgorithm(s string) digest.Algorithm {
	switch s {
	case "SHA2_256", "sha256":
		return digest.SHA256
	case "SHA2_512", "sha512":
		return digest.SHA512
	}
	return ""
}

// classify turns a failure of sigstore-go's verification into a Reason and a
// sentence. sigstore-go's errors are untyped; the stage prefix of its message
// says which check failed, and our own look at the entries says more.
func (v *Verifier) classify(err error, entries []*tlog.Entry, cert *x509.Certificate, id *identity, vc sgverify.VerificationContent) (Reason, string) {
	// sigstore-go formats a nil error into one message; drop that noise.
	msg := oneLine(strings.ReplaceAll(err.Error(), "; error: %!w(<nil>)", ""))
	switch {
	// For a key, sigstore-go says "certificate" of the key the log entry
	// records and of the key's validity at the entry's integrated time.
	case id.key != nil && (strings.Contains(msg, "public key validity window") || strings.Contains(msg, "integrated time outside certificate validity")):
		return ReasonKeyValidity, fmt.Sprintf("signed at a time outside the pinned %s's validity, %s (%s)", id, id.key.window(), msg)
	case id.key != nil && (strings.Contains(msg, "failed to verify signature") || strings.Contains(msg, "transparency log certificate does not match")):
		return ReasonBadSignature, fmt.Sprintf("the signature does not verify with the pinned %s: signed with another key (the bundle's hint is %q), or altered (%s)", id, keyHint(vc), msg)
	case errors.Is(err, sgverify.ErrDSSEInvalidSignatureCount):
		return ReasonUnsupported, msg
	case strings.Contains(msg, "failed to verify log inclusion"):
		if strings.Contains(msg, "integrated time outside certificate validity") {
			return ReasonCertificateTime, fmt.Sprintf("the log integrated the entry at %s, outside the certificate's validity %s to %s",
				entryTimes(entries), stamp(cert.NotBefore), stamp(cert.NotAfter))
		}
		return ReasonBadLogEntry, v.diagnoseEntries(entries, nil, msg)
	case strings.Contains(msg, "failed to verify timestamps"):
		return ReasonNoTimestamp, "no verified time to check the certificate at: " + msg
	case strings.Contains(msg, "signed certificate timestamp"):
		return ReasonUntrustedCertificate, fmt.Sprintf("certificate carries no signed certificate timestamp that a CT log of %s (it lists %d) vouches for at the signing time: %s",
			v.root.Name(), len(v.root.tr.CTLogs()), msg)
	case strings.Contains(msg, "failed to verify leaf certificate"):
		return ReasonUntrustedCertificate, fmt.Sprintf("certificate issued by %q does not chain to a certificate authority of %s at the signing time: %s",
			cert.Issuer.String(), v.root.Name(), msg)
	case strings.Contains(msg, "failed to verify signature"):
		if strings.Contains(msg, "digest") && strings.Contains(msg, "artifact") {
			return ReasonDigestMismatch, msg
		}
		return ReasonBadSignature, "the signature does not verify: " + msg
	case strings.Contains(msg, "certificate identit"):
		return ReasonIdentity, msg
	}
	return ReasonInvalid, msg
}

// keyHint is the key hint of a key-signed bundle.
func keyHint(vc sgverify.VerificationContent) string {
	if pk := vc.PublicKey(); pk != nil {
		return pk.Hint()
	}
	return ""
}

// diagnoseEntries says why no log entry counted; stamped are the times
// verified RFC 3161 timestamps vouch for, which an entry without a signed
// entry timestamp is judged at.
func (v *Verifier) diagnoseEntries(entries []*tlog.Entry, stamped []time.Time, msg string) string {
	logs := v.root.tr.RekorLogs()
	var why []string
	for _, e := range entries {
		id := hex.EncodeToString([]byte(e.LogKeyID()))
		l, ok := logs[id]
		switch {
		case !ok:
			why = append(why, fmt.Sprintf("entry %d is from log %s, which %s does not list", e.LogIndex(), id, v.root.Name()))
		case e.HasInclusionPromise() && outside(e.IntegratedTime(), l.ValidityPeriodStart, l.ValidityPeriodEnd):
			why = append(why, fmt.Sprintf("entry %d was integrated at %s, outside the validity of log %s (%s) in %s, %s: the root does not trust that log's key at that time (a retired log, or a root too old or too new for the entry)",
				e.LogIndex(), stamp(e.IntegratedTime()), l.BaseURL, id, v.root.Name(), window(l.ValidityPeriodStart, l.ValidityPeriodEnd)))
		case e.HasInclusionPromise() && tlog.VerifySET(e, logs) != nil:
			why = append(why, fmt.Sprintf("the signed entry timestamp of entry %d does not verify with the key of log %s (%s): the entry was altered", e.LogIndex(), l.BaseURL, id))
		case !e.HasInclusionPromise():
			for _, t := range stamped {
				if outside(t, l.ValidityPeriodStart, l.ValidityPeriodEnd) {
					why = append(why, fmt.Sprintf("entry %d carries no signed entry timestamp, and the signing time an RFC 3161 timestamp vouches for, %s, lies outside the validity of log %s (%s) in %s, %s: the root does not trust that log's key at that time (a retired log, or a root too old or too new for the entry)",
						e.LogIndex(), stamp(t), l.BaseURL, id, v.root.Name(), window(l.ValidityPeriodStart, l.ValidityPeriodEnd)))
					break
				}
			}
		}
	}
	switch {
	case len(why) > 0:
		return strings.Join(why, "; ")
	case strings.Contains(msg, "calculated root") || strings.Contains(msg, "inclusion proof"):
		return "the inclusion proof does not lead to the tree head the log signed: the entry or its proof was altered (" + msg + ")"
	case strings.Contains(msg, "does not match"):
		return "the log entry records another signature, key or digest than the material's: the material or the entry was altered (" + msg + ")"
	}
	return "log entry refused: " + msg
}

// outside reports whether t lies outside the validity window from start to
// end (zero end: open), as sigstore-go bounds a log's signed entry
// timestamps.
func outside(t, start, end time.Time) bool {
	return t.Before(start) || (!end.IsZero() && t.After(end))
}

// oneLine folds a multi-line message into one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func entryTimes(entries []*tlog.Entry) string {
	var ts []string
	for _, e := range entries {
		ts = append(ts, stamp(e.IntegratedTime()))
	}
	return strings.Join(ts, ", ")
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }
