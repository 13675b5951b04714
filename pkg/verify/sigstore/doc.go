// Package sigstore verifies Sigstore keyless signatures over release artifacts,
// on github.com/sigstore/sigstore-go, for three shapes of upstream material:
//
//   - cosign's detached signature and certificate (FILE.sig, FILE.cert, as
//     Kubernetes publishes them on dl.k8s.io): VerifyDetached, which looks the
//     signature's Rekor entry up through the caller's HTTP client, or takes
//     the answer the caller fetched itself from RekorEntryURL (through a
//     cache, so that a signature verified once verifies again offline);
//   - a Sigstore bundle file (.sigstore.json, .bundle; v0.1 to v0.3):
//     VerifyBundle, offline;
//   - GitHub artifact attestations, fetched from GitHub's attestations API:
//     VerifyGitHubAttestations.
//
// It lives apart from package verify (OpenPGP) so that its dependencies stay out
// of programs that only check OpenPGP signatures. Package sigstoretest makes
// test material (with sigstore-go's test CA) and fake Rekor, GitHub and TUF
// servers for the tests of programs that use this one.
//
// # Contract
//
// Material vouches for an artifact only when every one of these holds:
//
//   - it is signed with a short-lived Fulcio certificate whose OIDC issuer
//     is Policy.Issuer and whose Subject Alternative Name is Policy.Identity,
//     or matches Policy.IdentityRegexp as a whole (a certificate naming
//     several, or two issuers in its v1 and v2 extensions, names no signer
//     and is refused), and, when
//     Policy.SourceRepository is set, whose Source Repository URI extension
//     is that repository (the caller of a reusable workflow), and, when it
//     is not, under GitHub Actions, whose Source Repository URI (or GitHub
//     Workflow Repository) is the repository of the workflow its identity
//     names: a workflow may be reusable (on: workflow_call), and then signs
//     for anybody's repository that calls it; or, for a key-signed
//     bundle, it is signed with the key the Policy pins (Policy.PublicKey,
//     the expected identity itself), at a time within the key's validity
//     window when one is given. An empty identity or issuer is refused before
//     anything else (ErrPolicy): there is no "any identity" policy, and a
//     key-signed bundle counts only under its pinned key;
//   - what it signs is the artifact: the signature verifies over the artifact's
//     digest (message signatures), or the in-toto statement of a DSSE envelope
//     (exactly one signature; _type Statement v1 or v0.1, another or none is
//     refused) names the artifact's digest among its subjects, and no subject
//     gives one of the artifact's digests beside another file's; and the
//     statement is of a predicate type the policy counts by
//     (Policy.PredicateTypes, by default SLSA provenance): the signer's SBOM
//     or test results of the file say nothing of how it was built.
//     Digests, not files, are passed in (a pkg/digest Set), so the caller hashes
//     while streaming; the detached form needs the sha256;
//   - at least one transparency-log entry of a log in the trusted root vouches
//     for it: the entry's signed entry timestamp and, when present, its
//     inclusion proof (Rekor v2: its checkpoint) verify with the log's key,
//     the key valid at the signing time (the time the signed entry timestamp
//     signs; for an entry without one, every time the RFC 3161 timestamps
//     vouch for), and its body is exactly this signature, certificate or key,
//     and digest (or envelope). A bundle needs one when the trusted root lists a log (a root
//     of a timestamp authority alone, as some private deployments use, cannot
//     vouch for one); cosign's detached signatures always do;
//   - RFC 3161 timestamps the material carries verify (at least one) when the
//     root lists a timestamp authority;
//   - the certificate chains to a certificate authority of the trusted root,
//     and was valid, at every verified time: the log's integrated time (signed
//     entry timestamp), and the RFC 3161 timestamps; when the root lists CT
//     logs, the certificate carries a valid signed certificate timestamp.
//
// These are the verifier options sigstore-go's own conformance client takes
// (test/conformance in sigstore-go), so that what Sigstore's conformance
// suite expects to verify verifies here and what it expects refused is
// refused; the one difference is that SCTs are required only when the root
// lists a CT log.
//
// Verification never reads the clock: short-lived certificates are judged at
// the verified signing time, as Sigstore specifies. It never fetches a trusted
// root either: the caller passes one (PublicGood, the bundled snapshot;
// LoadTrustedRoot, e.g. one stored by Refresh, which updates it through TUF
// when the caller asks).
//
// # Errors
//
// A refusal is a *RefusedError wrapping ErrRefused, whose Refusals each carry a
// Reason a caller may branch on, the file or URL of the refused material, and
// a sentence saying what was expected and what was found. A service that could
// not be asked (network failure, timeout, 5xx, rate limit) is a *FetchError
// wrapping ErrUnavailable: nothing was decided. Malformed, oversized or
// truncated answers are refused (ReasonMalformed) naming the URL. Every request
// goes through Options.HTTPClient and is bounded by Options.Timeout and the
// context; http.DefaultClient is never used.
package sigstore
