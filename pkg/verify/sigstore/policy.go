package sigstore

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/asn1"
	"encoding/base64"
	"fmt"
	"maps"
	"net/url"
	"path"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/sigstore/sigstore-go/pkg/fulcio/certificate"
	"github.com/sigstore/sigstore-go/pkg/root"
	sgverify "github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
)

// Policy names who must have signed: the identity in the Fulcio certificate
// (its Subject Alternative Name: an e-mail address, a URI such as a GitHub
// Actions workflow, or an otherName) and the OIDC issuer that vouched for it.
// There is no "any identity" form: exactly one of Identity and IdentityRegexp,
// and Issuer, are required; or, for a bundle signed with a long-lived key
// instead of a Fulcio certificate, PublicKey alone: the pinned key is then
// the expected identity.
type Policy struct {
	// Identity is the exact SAN, e.g.
	// "krel-staging@k8s-releng-prod.iam.gserviceaccount.com".
	Identity string
	// IdentityRegexp is a Go regular expression the whole SAN must match: it
	// is anchored at both ends whether or not it says so, e.g.
	// `https://github\.com/cilium/cilium-cli/\.github/workflows/release\.yaml@refs/tags/v.*`.
	// One that matches anybody's identity (".*", any e-mail address, any
	// repository's workflow) is refused, and so is one that leaves open an
	// address's local part at a public mail domain (alice.*@gmail\.com) or
	// its domain where anybody may register one (alice@.*, a Google Cloud
	// project's .*\.iam\.gserviceaccount\.com); under a CI issuer (GitHub
	// Actions, GitLab, Buildkite) so is one that leaves the repository's
	// (or pipeline's) owner open, or its end, however written
	// ((?i)containerd.*, (containerd).*, containerd\d: containerd-attacker,
	// containerd7). The name must be written out, or a few alternatives of
	// it. Under GitHub Actions, one that matches a pull request's run of
	// the workflow (...@refs/pull/7/merge: .*$ after the repository, @.*$)
	// is refused: that run's workflow and code are the pull request's.
	IdentityRegexp string
	// Issuer is the exact OIDC issuer URL, e.g. "https://accounts.google.com"
	// or "https://token.actions.githubusercontent.com".
	Issuer string
	// SourceRepository, when set, is the exact URL of the repository whose
	// CI run the certificate must have been issued for: Fulcio's Source
	// Repository URI extension (OID 1.3.6.1.4.1.57264.1.12), e.g.
	// "https://github.com/sigstore/sigstore-js" (in a certificate from
	// before Fulcio wrote it, 2023, the GitHub Workflow Repository, OID
	// 1.3.6.1.4.1.57264.1.5, "sigstore/sigstore-js"). A GitHub Actions
	// certificate's identity names the workflow that signed; a reusable
	// workflow (slsa-github-generator's, another repository's shared release
	// workflow) signs for every repository that calls it, and only this
	// extension names the caller. It goes with Identity or IdentityRegexp.
	// Left empty under GitHub Actions, the certificate must be for a run of
	// the repository whose workflow its identity names: any workflow may be
	// a reusable one.
	SourceRepository string

	// PublicKey pins the signer's public key (PEM, "PUBLIC KEY": ECDSA,
	// RSA or Ed25519), e.g. npm's registry key: only a bundle signed with
	// this key and no certificate counts. It excludes Identity,
	// IdentityRegexp and Issuer, and only VerifyBundle takes it.
	PublicKey []byte
	// KeyValidFrom and KeyValidUntil bound the verified signing time (the
	// log's integrated time, an RFC 3161 timestamp) at which a signature by
	// PublicKey counts, as a trusted root bounds its own keys; zero is
	// unbounded.
	KeyValidFrom, KeyValidUntil time.Time

	// PredicateTypes are the in-toto predicate types an attestation (the
	// statement of a DSSE bundle) must have to count, exactly; empty is
	// DefaultPredicateTypes, SLSA provenance. The signer's other
	// attestations of the same file (an SBOM, test results, a type of its
	// own) say nothing of how it was built, and count only when named
	// here. A message signature has no predicate: this does not apply.
	PredicateTypes []string
	// AnyPredicateType accepts an attestation of any predicate type, for a
	// caller that checks the signature alone (Sigstore's conformance
	// suite), not what the statement says. It excludes PredicateTypes.
	AnyPredicateType bool
}

// SLSA provenance, the predicate types an attestation counts by when the
// Policy names none: what GitHub's artifact attestations
// (actions/attest-build-provenance) and slsa-github-generator sign (v1),
// and their older version (v0.2, npm's provenance before 2023).
const (
	SLSAProvenanceV1  = "https://slsa.dev/provenance/v1"
	SLSAProvenanceV02 = "https://slsa.dev/provenance/v0.2"
)

// DefaultPredicateTypes are the predicate types an attestation counts by
// when Policy.PredicateTypes is empty.
func DefaultPredicateTypes() []string { return []string{SLSAProvenanceV1, SLSAProvenanceV02} }

// identity is a validated Policy: a certificate identity, or a pinned key.
type identity struct {
	exact  string
	re     *regexp.Regexp
	issuer string
	source string // the Source Repository URI required; "" for any
	key    *pinnedKey
	// predicates are the predicate types an attestation counts by; nil for
	// any (Policy.AnyPredicateType).
	predicates []string
}

// pinnedKey is a validated Policy.PublicKey.
type pinnedKey struct {
	verifier    signature.Verifier
	fingerprint string // SHA256:base64 of the DER SubjectPublicKeyInfo
	from, until time.Time
}

// Validate reports an unusable Policy (wrapping ErrPolicy). Every Verify method
// calls it first, before any network step.
func (p Policy) Validate() error {
	_, err := p.compile()
	return err
}

func (p Policy) compile() (*identity, error) {
	predicates, err := p.predicateTypes()
	if err != nil {
		return nil, err
	}
	var id *identity
	if len(p.PublicKey) > 0 {
		id, err = p.compileKey()
	} else {
		id, err = p.compileIdentity()
	}
	if err != nil {
		return nil, err
	}
	id.predicates = predicates
	return id, nil
}

// predicateTypes validates the predicate types of p: nil for any.
func (p Policy) predicateTypes() ([]string, error) {
	switch {
	case p.AnyPredicateType && len(p.PredicateTypes) > 0:
		return nil, fmt.Errorf("%w: both AnyPredicateType and PredicateTypes %q are set: use one", ErrPolicy, p.PredicateTypes)
	case p.AnyPredicateType:
		return nil, nil
	case len(p.PredicateTypes) == 0:
		return DefaultPredicateTypes(), nil
	}
	for _, t := range p.PredicateTypes {
		if t == "" || strings.TrimSpace(t) != t || strings.ContainsAny(t, " \t\r\n") {
			return nil, fmt.Errorf("%w: predicate type %q is empty or has spaces: name the type as the statement's predicateType gives it, e.g. %s", ErrPolicy, t, SLSAProvenanceV1)
		}
	}
	return slices.Clone(p.PredicateTypes), nil
}

func (p Policy) compileIdentity() (*identity, error) {
	if !p.KeyValidFrom.IsZero() || !p.KeyValidUntil.IsZero() {
		return nil, fmt.Errorf("%w: a key validity window without PublicKey", ErrPolicy)
	}
	switch {
	case strings.TrimSpace(p.Identity) == "" && strings.TrimSpace(p.IdentityRegexp) == "":
		return nil, fmt.Errorf("%w: no identity: set Identity (the exact certificate SAN) or IdentityRegexp; there is no \"any identity\" policy", ErrPolicy)
	case p.Identity != "" && p.IdentityRegexp != "":
		return nil, fmt.Errorf("%w: both Identity %q and IdentityRegexp %q are set: use one", ErrPolicy, p.Identity, p.IdentityRegexp)
	case strings.TrimSpace(p.Issuer) == "":
		return nil, fmt.Errorf("%w: no OIDC issuer: set Issuer (e.g. https://accounts.google.com)", ErrPolicy)
	case p.Identity != strings.TrimSpace(p.Identity) || p.Issuer != strings.TrimSpace(p.Issuer):
		return nil, fmt.Errorf("%w: identity %q or issuer %q has surrounding spaces", ErrPolicy, p.Identity, p.Issuer)
	case p.SourceRepository != "" && !IsRepositoryURL(p.SourceRepository):
		return nil, fmt.Errorf("%w: SourceRepository %q is not a repository's URL (https://HOST/OWNER/REPO, as the certificate names it)", ErrPolicy, p.SourceRepository)
	}
	id := &identity{exact: p.Identity, issuer: p.Issuer, source: p.SourceRepository}
	if p.IdentityRegexp != "" {
		// Compiled alone first: "a)|(b" is invalid, but ^(?:a)|(b)$ is
		// valid and anchored at neither end.
		_, err := regexp.Compile(p.IdentityRegexp)
		var re *regexp.Regexp
		if err == nil {
			re, err = regexp.Compile(anchor(p.IdentityRegexp))
		}
		if err != nil {
			return nil, fmt.Errorf("%w: IdentityRegexp %q: %v", ErrPolicy, p.IdentityRegexp, err)
		}
		for _, who := range anyone {
			if re.MatchString(who) {
				return nil, fmt.Errorf("%w: IdentityRegexp %q matches the identity of anyone (it matches %q): name the signer; there is no \"any identity\" policy", ErrPolicy, p.IdentityRegexp, who)
			}
		}
		if local, domain, ok := anyonesAddress(p.IdentityRegexp); ok {
			return nil, fmt.Errorf("%w: IdentityRegexp %q matches an address anybody can have (at %s, its local part goes on as anybody chooses after %q): name the signer's address, or an address pattern at a domain the signer controls; there is no \"any identity\" policy", ErrPolicy, p.IdentityRegexp, domain, local)
		}
		if spelled, ok := anyonesDomain(p.IdentityRegexp); ok {
			return nil, fmt.Errorf("%w: IdentityRegexp %q matches an address at a domain anybody can register (its domain goes on as anybody chooses after %q): name the signer's domain; there is no \"any identity\" policy", ErrPolicy, p.IdentityRegexp, spelled)
		}
		if prefix, ok := anyonesRepositoryPrefix(p.IdentityRegexp, p.Issuer); ok {
			return nil, fmt.Errorf("%w: IdentityRegexp %q matches workflows of anyone's repositories (the repository's owner goes on as anybody chooses after %q): name the repository's owner literally; there is no \"any identity\" policy", ErrPolicy, p.IdentityRegexp, prefix)
		}
		if strings.HasPrefix(p.Issuer, githubActionsIssuer) && IdentityRefs(p.IdentityRegexp).PullRequests {
			return nil, fmt.Errorf("%w: IdentityRegexp %q matches a pull request's run of the workflow (@%s): %s", ErrPolicy, p.IdentityRegexp, pullRef, PullRequestRisk)
		}
		id.re = re
	}
	return id, nil
}

func (p Policy) compileKey() (*identity, error) {
	if p.Identity != "" || p.IdentityRegexp != "" || p.Issuer != "" || p.SourceRepository != "" {
		return nil, fmt.Errorf("%w: PublicKey pins the signer's key; it excludes Identity, IdentityRegexp, Issuer and SourceRepository, which name a certificate's signer", ErrPolicy)
	}
	if !p.KeyValidFrom.IsZero() && !p.KeyValidUntil.IsZero() && p.KeyValidUntil.Before(p.KeyValidFrom) {
		return nil, fmt.Errorf("%w: key validity ends (%s) before it starts (%s)", ErrPolicy, stamp(p.KeyValidUntil), stamp(p.KeyValidFrom))
	}
	pub, err := cryptoutils.UnmarshalPEMToPublicKey(p.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("%w: PublicKey is not a PEM public key: %v", ErrPolicy, err)
	}
	v, err := signature.LoadDefaultVerifier(pub)
	if err != nil {
		return nil, fmt.Errorf("%w: PublicKey: %v", ErrPolicy, err)
	}
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, fmt.Errorf("%w: PublicKey: %v", ErrPolicy, err)
	}
	sum := sha256.Sum256(der)
	return &identity{key: &pinnedKey{verifier: v, fingerprint: "SHA256:" + base64.StdEncoding.EncodeToString(sum[:]),
		from: p.KeyValidFrom, until: p.KeyValidUntil}}, nil
}

// IsRepositoryURL reports whether s is a repository's URL as Fulcio's
// Source Repository URI extension writes it: https://HOST/OWNER/REPO (GitLab:
// groups and subgroups before REPO), with no trailing slash, query or
// fragment.
func IsRepositoryURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.Scheme == "https" && strings.HasPrefix(s, "https://") && u.Host != "" && u.User == nil &&
		u.RawQuery == "" && u.Fragment == "" && !strings.ContainsAny(s, " ?#\\") &&
		strings.Count(u.Path, "/") >= 2 && !strings.HasSuffix(u.Path, "/") && !strings.Contains(u.Path, "//") && u.Path == path.Clean(u.Path)
}

// IdentityPrefix returns the text that every identity the identity regexp
// re (anchored whether or not it says so) matches begins with, as far as re
// fixes it rune by rune (in lower case where re ignores case): for a GitHub
// Actions workflow, how far it names the workflow's repository. It is "" for
// a regexp that does not compile.
func IdentityPrefix(re string) string {
	w, set := walkAfter(anchor(re), "")
	var prefix []rune
	for len(set) > 0 && len(prefix) < 1024 {
		var next rune = -1
		for pc := range set {
			in := &w.prog.Inst[pc]
			runes, wide := classRunes(in)
			if wide || len(runes) > 1 || in.Op == syntax.InstMatch || len(runes) == 1 && next != -1 && runes[0] != next {
				return string(prefix)
			}
			if len(runes) == 1 {
				next = runes[0]
			}
		}
		if next == -1 {
			break
		}
		prefix = append(prefix, next)
		// Every thread reads next, in one of its cases: each goes on by its
		// edge, as stepping by next would drop a class of its other cases
		// only ([K\x{212A}], K and the Kelvin sign) and name a prefix that
		// thread's matches do not have.
		after := map[uint32]bool{}
		for pc := range set {
			if runes, _ := classRunes(&w.prog.Inst[pc]); len(runes) == 1 {
				w.add(after, w.prog.Inst[pc].Out, len(w.text))
			}
		}
		set = after
	}
	return string(prefix)
}

// KeyFingerprint is how a pinned public key (PEM, as Policy.PublicKey) is
// named in results and reports: "SHA256:" and the base64 of the sha256 of
// its DER SubjectPublicKeyInfo. It refuses what Policy.Validate refuses.
func KeyFingerprint(pemKey []byte) (string, error) {
	id, err := Policy{PublicKey: pemKey}.compileKey()
	if err != nil {
		return "", err
	}
	return id.key.fingerprint, nil
}

// material is the pinned key as sigstore-go's trusted material: whatever key
// hint a bundle names, its signature must verify with this key.
func (k *pinnedKey) material() root.TrustedMaterial {
	return root.NewTrustedPublicKeyMaterial(func(string) (root.TimeConstrainedVerifier, error) {
		return root.NewExpiringKey(k.verifier, k.from, k.until), nil
	})
}

func (k *pinnedKey) window() string { return window(k.from, k.until) }

// window names a validity window; a zero bound is open.
func window(from, until time.Time) string {
	f, u := "the beginning", "no end"
	if !from.IsZero() {
		f = stamp(from)
	}
	if !until.IsZero() {
		u = stamp(until)
	}
	return f + " to " + u
}

// keyless refuses a pinned-key policy for material that is always signed
// with a certificate (cosign's detached keyless signatures, GitHub's
// attestations).
func (id *identity) keyless(what string) error {
	if id.key != nil {
		return fmt.Errorf("%w: %s are keyless and name an identity and issuer; a pinned PublicKey is for key-signed bundles", ErrPolicy, what)
	}
	return nil
}

// anyone are identities an IdentityRegexp must not match: one that does
// would accept signatures by anybody with an account at the issuer.
var anyone = []string{
	"",
	"x",
	"attacker@example.com",
	"https://github.com/attacker/attacker/.github/workflows/release.yml@refs/tags/v1.0.0",
}

// publicMail are mail domains where anybody can have an address: an
// identity regexp that leaves the local part open at one of them names
// nobody in particular. (A domain the signer controls, such as
// "^.*@k8s-releng-prod\.iam\.gserviceaccount\.com$", is a policy.)
var publicMail = []string{
	"gmail.com", "googlemail.com", "outlook.com", "hotmail.com", "live.com", "yahoo.com",
	"icloud.com", "proton.me", "protonmail.com", "gmx.com", "gmx.de", "mail.com", "aol.com", "yandex.com",
	"users.noreply.github.com",
}

// anyonesAddress returns the address a regexp (src, anchored) accepts at
// a public mail domain whose local part it does not write out, as far as
// it does ("alice" of "^alice.*@gmail\.com$", "" of "^.*@gmail\.com$"),
// and the domain: anybody registers "aliceattacker" there. See openName.
func anyonesAddress(src string) (local, domain string, ok bool) {
	w, start := walkAfter(anchor(src), "")
	if start == nil {
		return "", "", false
	}
	for _, domain := range publicMail {
		at := func(w *walk, set map[uint32]bool) bool { return w.matchesAfter(w.anyText(set, nil), "@"+domain) }
		if local, open := w.openName(start, '@', isLocalPart, at); open {
			return local, domain, true
		}
	}
	return "", "", false
}

// anyonesDomain returns the part of an address's domain a regexp (src,
// anchored) writes out before it leaves open a domain anybody may
// register: the domain's last labels ("" of "^alice@.*$", "example." of
// "^alice@example\.[a-z]+$"), or the project of a Google Cloud service
// account ("^krel-staging@.*\.iam\.gserviceaccount\.com$": anybody's
// project may have a krel-staging account). A subdomain left open at a
// domain written out ("^alice@[a-z]+\.example\.org$") is the domain
// owner's, unless what follows it leaves the domain open too; the part
// written out is then the one after the subdomain. See openName.
func anyonesDomain(src string) (string, bool) {
	w, start := walkAfter(anchor(src), "")
	if start == nil {
		return "", false
	}
	at := w.step(w.anyText(start, isLocalPart), '@', len(w.text))
	if spelled, open := w.openName(at, -1, isDomain, (*walk).registrable); open {
		return spelled, true
	}
	// A subdomain left open does not end the walk: a label after it may be
	// open where anybody registers one ("^alice@[a-z]+\.example\.[a-z]+$":
	// anybody's example.lol), so the domain is walked on after every part
	// left open.
	for _, pc := range slices.Sorted(maps.Keys(w.anyText(at, isDomain))) {
		in := &w.prog.Inst[pc]
		if _, wide := classRunes(in); !wide {
			continue
		}
		if spelled, open := w.openName(w.closure(in.Out), -1, isDomain, (*walk).registrable); open {
			return spelled, true
		}
	}
	return "", false
}

// publicSuffixes are domains of more than one label under which anybody
// may have a name of their own (a Google Cloud project, a GitHub user);
// under any other domain of one label (a top-level domain) too.
var publicSuffixes = []string{"iam.gserviceaccount.com", "gserviceaccount.com", "users.noreply.github.com", "github.io", "co.uk", "com.au", "co.jp"}

// registrable reports whether the threads of set, in a domain label left
// open, can go on to a match as a label anybody may register: the last
// one (a top-level domain left open), the one before it, or the one before
// a public suffix.
func (w *walk) registrable(set map[uint32]bool) bool {
	if w.registrableAt == nil {
		w.registrableAt = w.registrableStates()
	}
	for pc := range set {
		if w.registrableAt[pc] {
			return true
		}
	}
	return false
}

// registrableStates is the states registrable says yes for, found once,
// backwards from where a label ends the domain (a match, a '.' before a
// last label, a public suffix) over the edges that read no rune or a
// label's: registrable is asked after every part of a domain left open,
// and reading on from each took seconds for ([0-9A-Z]{0,50}){20}.
func (w *walk) registrableStates() map[uint32]bool {
	into := make([][]uint32, len(w.prog.Inst)) // the states an edge leads from
	for pc := range w.prog.Inst {
		in := &w.prog.Inst[pc]
		switch in.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			into[in.Arg] = append(into[in.Arg], uint32(pc))
			into[in.Out] = append(into[in.Out], uint32(pc))
		case syntax.InstCapture, syntax.InstNop, syntax.InstEmptyWidth: // past text, every assertion holds
			into[in.Out] = append(into[in.Out], uint32(pc))
		case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
			if readsSome(in, isLabel) {
				into[in.Out] = append(into[in.Out], uint32(pc))
			}
		}
	}
	back := func(set map[uint32]bool) map[uint32]bool {
		todo := slices.Collect(maps.Keys(set))
		for len(todo) > 0 {
			pc := todo[len(todo)-1]
			todo = todo[:len(todo)-1]
			for _, from := range into[pc] {
				if !set[from] {
					set[from] = true
					todo = append(todo, from)
				}
			}
		}
		return set
	}
	ends := map[uint32]bool{}
	for pc := range w.prog.Inst {
		if w.prog.Inst[pc].Op == syntax.InstMatch {
			ends[uint32(pc)] = true
		}
	}
	last := back(maps.Clone(ends)) // in the last label
	for pc := range w.prog.Inst {
		in, one := &w.prog.Inst[pc], map[uint32]bool{uint32(pc): true}
		if in.MatchRune('.') && last[in.Out] ||
			slices.ContainsFunc(publicSuffixes, func(s string) bool { return w.matchesAfter(one, "."+s) }) {
			ends[uint32(pc)] = true
		}
	}
	return back(ends)
}

// isLabel reports whether r may be in a domain's label; isDomain, in a
// domain.
func isLabel(r rune) bool {
	return r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-')
}

func isDomain(r rune) bool { return isLabel(r) || r == '.' }

// isLocalPart reports whether r may be in an address's local part as an
// identity regexp writes one out; a path of the regexp that reads another
// rune (":" of "https://") is not an address.
func isLocalPart(r rune) bool {
	return r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("._%+-", r))
}

// anyonesRepository are, for CI issuers (an issuer URL and what begins
// with it), where the identities (workflow URIs) of its repositories begin,
// before the repository's owner: under such an issuer an IdentityRegexp
// must match no identity of a repository anybody may create, whatever the
// repository, workflow file or ref that follows.
var anyonesRepository = []struct{ issuer, site string }{
	{githubActionsIssuer, "https://github.com/"},
	{"https://gitlab.com", "https://gitlab.com/"},
	// Fulcio names a Buildkite job by its pipeline's page,
	// https://buildkite.com/ORGANIZATION/PIPELINE: anybody may sign up an
	// organization of any free name.
	{"https://agent.buildkite.com", "https://buildkite.com/"},
}

// anyonesRepositoryPrefix returns how the identities of repositories
// anybody may create begin, when the regexp src (anchored) matches some of
// them under issuer: the site and the part of the owner the regexp writes
// out before it leaves the rest open ("https://github.com/" of
// "^https://github\.com/[^/]+/", "https://github.com/containerd" of
// "^https://github\.com/(?i:containerd).*/": containerd-attacker's). See
// openName.
func anyonesRepositoryPrefix(src, issuer string) (string, bool) {
	for _, ci := range anyonesRepository {
		if !strings.HasPrefix(issuer, ci.issuer) {
			continue
		}
		w, set := walkAfter(anchor(src), ci.site)
		if set == nil {
			continue
		}
		if owner, open := w.openName(set, '/', nil, (*walk).reachesMatch); open {
			return ci.site + owner, true
		}
	}
	return "", false
}

// Bounds of openName: a name longer than maxSpelled runes is taken to be a
// repetition's, more than maxNames names (alternatives counted) or a
// character class of more than maxClass runes (case aside) to be open.
const (
	maxSpelled = 64
	maxNames   = 16
	maxClass   = 4
)

// openName reports whether the threads of set (of a regular expression
// past some text) leave open the name that follows, up to the rune end (a
// repository's owner up to "/", an address's local part up to "@"; -1: to
// the end, an address's domain):
// whether, on a path to a match (next says whether one is reachable from
// the states after the open part), a wildcard, a character class of more
// than a few runes or a repetition lets the name go on as anybody chooses.
// It returns the part of the name written out before it (in lower case
// where the regexp ignores case). A name written out, or a few alternatives
// ("(cilium|isovalent)", "[Cc]ilium", "(?i)cilium"), is not open: the
// regexp's author named them. A path that reads a rune valid does not
// accept (nil: any) is no such name and is not followed.
func (w *walk) openName(set map[uint32]bool, end rune, valid func(rune) bool, next func(*walk, map[uint32]bool) bool) (string, bool) {
	names := 1
	var visit func(set map[uint32]bool, spelled []rune) (string, bool)
	visit = func(set map[uint32]bool, spelled []rune) (string, bool) {
		if len(spelled) > maxSpelled {
			return string(spelled), next(w, set)
		}
		follow := map[rune]map[uint32]bool{} // the name's next rune, folded, and the states after it
		for _, pc := range slices.Sorted(maps.Keys(set)) {
			in := &w.prog.Inst[pc]
			runes, wide := classRunes(in)
			if wide {
				if after := w.closure(in.Out); next(w, after) {
					return string(spelled), true
				}
				continue
			}
			for _, r := range runes {
				if r == end || (valid != nil && !valid(r)) {
					continue
				}
				if follow[r] == nil {
					follow[r] = map[uint32]bool{}
				}
				w.add(follow[r], in.Out, len(w.text))
			}
		}
		if names += max(0, len(follow)-1); names > maxNames {
			return string(spelled), true
		}
		for _, r := range slices.Sorted(maps.Keys(follow)) {
			if s, open := visit(follow[r], append(slices.Clone(spelled), r)); open {
				return s, true
			}
		}
		return "", false
	}
	return visit(set, nil)
}

// classRunes returns the runes a rune instruction reads, folded to lower
// case, or wide for a wildcard or a class of more than maxClass of them;
// nothing for an instruction that reads no rune.
func classRunes(in *syntax.Inst) (runes []rune, wide bool) {
	switch in.Op {
	case syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
		return nil, true
	case syntax.InstRune1:
		return []rune{in.Rune[0]}, false
	case syntax.InstRune:
	default:
		return nil, false
	}
	if len(in.Rune) == 1 { // one rune, case folded
		return []rune{unicode.ToLower(in.Rune[0])}, false
	}
	for i := 0; i+1 < len(in.Rune); i += 2 {
		if in.Rune[i+1]-in.Rune[i] > maxClass {
			return nil, true
		}
		for r := in.Rune[i]; r <= in.Rune[i+1]; r++ {
			if l := unicode.ToLower(r); !slices.Contains(runes, l) {
				runes = append(runes, l)
			}
		}
	}
	return runes, len(runes) > maxClass
}

// walk runs a compiled regular expression by hand over text, every thread
// at once (as an NFA). The zero-width assertions see text's runes; past its
// end every assertion is taken as satisfiable and the walk over-approximates
// what the regexp matches: it may say yes for a regexp that matches nothing
// further, never no for one that matches.
type walk struct {
	prog          *syntax.Prog
	text          []rune
	registrableAt map[uint32]bool // registrableStates, once asked
}

// walkAfter compiles re and runs it from its start over text: the threads
// that survive it, nil when none does (or re does not compile).
func walkAfter(re, text string) (*walk, map[uint32]bool) {
	parsed, err := syntax.Parse(re, syntax.Perl)
	if err != nil {
		return nil, nil
	}
	prog, err := syntax.Compile(parsed.Simplify())
	if err != nil {
		return nil, nil
	}
	w := &walk{prog: prog, text: []rune(text)}
	return w, w.read()
}

// add puts pc and what it reaches without reading a rune into set; at is
// the position in text, whose neighbours the assertions see.
func (w *walk) add(set map[uint32]bool, pc uint32, at int) {
	if set[pc] {
		return
	}
	set[pc] = true
	in := &w.prog.Inst[pc]
	switch in.Op {
	case syntax.InstAlt, syntax.InstAltMatch:
		w.add(set, in.Out, at)
		w.add(set, in.Arg, at)
	case syntax.InstCapture, syntax.InstNop:
		w.add(set, in.Out, at)
	case syntax.InstEmptyWidth:
		if at >= len(w.text) {
			w.add(set, in.Out, at)
			break
		}
		before := rune(-1)
		if at > 0 {
			before = w.text[at-1]
		}
		if syntax.EmptyOp(in.Arg)&^syntax.EmptyOpContext(before, w.text[at]) == 0 {
			w.add(set, in.Out, at)
		}
	}
}

// closure is the set of pc and what it reaches without reading a rune,
// past the end of text.
func (w *walk) closure(pc uint32) map[uint32]bool {
	set := map[uint32]bool{}
	w.add(set, pc, len(w.text))
	return set
}

// read runs the program from its start over text; nil when no thread
// survives it.
func (w *walk) read() map[uint32]bool {
	cur := map[uint32]bool{}
	w.add(cur, uint32(w.prog.Start), 0)
	for i, r := range w.text {
		if cur = w.step(cur, r, i+1); len(cur) == 0 {
			return nil
		}
	}
	return cur
}

// step reads r from the threads of set; at is the position after it.
func (w *walk) step(set map[uint32]bool, r rune, at int) map[uint32]bool {
	next := map[uint32]bool{}
	for pc := range set {
		in := &w.prog.Inst[pc]
		switch in.Op {
		case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
			if in.MatchRune(r) {
				w.add(next, in.Out, at)
			}
		}
	}
	return next
}

// anyText is every state the threads of set reach, past the end of text,
// reading whatever runes their instructions read (valid among them, when
// not nil: printable ASCII).
func (w *walk) anyText(set map[uint32]bool, valid func(rune) bool) map[uint32]bool {
	all := map[uint32]bool{}
	for pc := range set {
		w.add(all, pc, len(w.text))
	}
	// Each state's rune edge is followed once: a worklist, not passes over
	// every state until none grows (a program of thousands of states).
	todo := slices.Collect(maps.Keys(all))
	for len(todo) > 0 {
		pc := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		switch in := &w.prog.Inst[pc]; in.Op {
		case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
			if all[in.Out] || (valid != nil && !readsSome(in, valid)) {
				continue
			}
			reached := map[uint32]bool{}
			w.add(reached, in.Out, len(w.text))
			for r := range reached {
				if !all[r] {
					all[r] = true
					todo = append(todo, r)
				}
			}
		}
	}
	return all
}

// readsSome reports whether in reads some printable ASCII rune that valid
// accepts.
func readsSome(in *syntax.Inst, valid func(rune) bool) bool {
	for r := rune(0x21); r < 0x7f; r++ {
		if valid(r) && in.MatchRune(r) {
			return true
		}
	}
	return false
}

// matchesAfter reports whether the threads of set, reading s past the end
// of text, end in a match.
func (w *walk) matchesAfter(set map[uint32]bool, s string) bool {
	for _, r := range s {
		if set = w.step(set, r, len(w.text)); len(set) == 0 {
			return false
		}
	}
	return slices.ContainsFunc(slices.Collect(maps.Keys(set)), func(pc uint32) bool { return w.prog.Inst[pc].Op == syntax.InstMatch })
}

// reachesMatch reports whether a match is reachable from the threads of
// set by any edge of the program.
func (w *walk) reachesMatch(set map[uint32]bool) bool {
	seen := map[uint32]bool{}
	for pc := range set {
		if reachesMatch(w.prog, pc, seen) {
			return true
		}
	}
	return false
}

// reachesMatch reports whether a match instruction is reachable from pc by
// any edge of prog.
func reachesMatch(prog *syntax.Prog, pc uint32, seen map[uint32]bool) bool {
	if seen[pc] {
		return false
	}
	seen[pc] = true
	in := &prog.Inst[pc]
	switch in.Op {
	case syntax.InstMatch:
		return true
	case syntax.InstFail:
		return false
	case syntax.InstAlt, syntax.InstAltMatch:
		return reachesMatch(prog, in.Out, seen) || reachesMatch(prog, in.Arg, seen)
	}
	return reachesMatch(prog, in.Out, seen)
}

// WorkflowRefs says which git refs a GitHub Actions workflow identity
// (https://github.com/OWNER/REPO/.github/workflows/FILE@REF) accepts:
// Fulcio names the ref of the run after the "@". A run signs with the
// workflow and code as they are at that ref, so whoever can make the ref
// can have anything signed with the identity.
type WorkflowRefs struct {
	// PullRequests: refs/pull/N/merge (or /head), a pull request's run
	// (some numbers N tried).
	PullRequests bool
	// Branches: some refs/heads/ branch; AnyBranch: a branch whose name
	// the regexp leaves open (refs/heads/.*, release-.*), which anyone who
	// may push a branch can create.
	Branches, AnyBranch bool
}

// pullRef is how a pull request's run names its ref.
const pullRef = "refs/pull/7/merge"

// PullRequestRisk says why an identity that accepts a pull request's run is
// refused.
const PullRequestRisk = "a workflow run for a pull request runs the workflow and code of the pull request's branch, and signs what it builds with the workflow's identity: name the ref releases are signed at (refs/tags/v..., as the release's certificate shows it)"

// IdentityRefs returns the git refs the identity regexp re (anchored
// whether or not it says so; regexp.QuoteMeta of an exact identity) accepts
// for a GitHub Actions workflow; none for an identity that is no workflow
// of github.com. The workflow's path before the "@" is taken as any text
// without an "@" the regexp reads there.
func IdentityRefs(re string) WorkflowRefs {
	var refs WorkflowRefs
	w, set := walkAfter(anchor(re), "https://github.com/")
	if set == nil {
		return refs
	}
	at := w.step(w.anyText(set, func(r rune) bool { return r != '@' }), '@', len(w.text))
	after := func(ref string) map[uint32]bool {
		cur := at
		for _, r := range ref {
			if cur = w.step(cur, r, len(w.text)); len(cur) == 0 {
				return nil
			}
		}
		return cur
	}
	// A pull request's ref is its number's: some numbers of each length
	// stand for all (a regexp that names a few numbers names no release).
	for _, n := range []string{"1", "7", "42", "123", "4567", "98765"} {
		for _, end := range []string{"merge", "head"} {
			refs.PullRequests = refs.PullRequests || at != nil && w.matchesAfter(at, "refs/pull/"+n+"/"+end)
		}
	}
	if heads := after("refs/heads/"); heads != nil && w.reachesMatch(heads) {
		refs.Branches = true
		_, refs.AnyBranch = w.openName(heads, -1, nil, (*walk).reachesMatch)
	}
	return refs
}

// anchor makes re match whole strings only.
func anchor(re string) string { return `^(?:` + re + `)$` }

func (id *identity) String() string {
	if id.key != nil {
		return "public key " + id.key.fingerprint
	}
	who := fmt.Sprintf("identity %s, issuer %s", id.exact, id.issuer)
	if id.re != nil {
		who = fmt.Sprintf("identity matching %s, issuer %s", id.re, id.issuer)
	}
	if id.source != "" {
		who += ", source repository " + id.source
	}
	return who
}

// check compares a certificate summary with the policy. The issuer is checked
// first: an identity only means something under the issuer that vouched for it.
func (id *identity) check(s certificate.Summary) (Reason, string) {
	if s.Issuer != id.issuer {
		return ReasonIssuer, fmt.Sprintf("certificate issued for OIDC issuer %q, want %q (identity %q)", s.Issuer, id.issuer, s.SubjectAlternativeName)
	}
	san := s.SubjectAlternativeName
	if id.re != nil && !id.re.MatchString(san) {
		return ReasonIdentity, fmt.Sprintf("certificate identity %q does not match %s (issuer %s)", san, id.re, s.Issuer)
	}
	if id.re == nil && san != id.exact {
		return ReasonIdentity, fmt.Sprintf("certificate identity %q, want %q (issuer %s)", san, id.exact, s.Issuer)
	}
	// A certificate from before Fulcio wrote the Source Repository URI
	// names the repository in its GitHub Workflow Repository alone.
	if got := sourceRepository(s); id.source != "" && got != id.source {
		ext := "its Source Repository URI, OID 1.3.6.1.4.1.57264.1.12"
		if s.SourceRepositoryURI == "" && got != "" {
			ext = "its GitHub Workflow Repository, OID 1.3.6.1.4.1.57264.1.5, which Fulcio wrote before the Source Repository URI"
		}
		got = fmt.Sprintf("source repository %q", got)
		if s.SourceRepositoryURI == "" && s.GithubWorkflowRepository == "" {
			got = "no source repository"
		}
		return ReasonIdentity, fmt.Sprintf("certificate names %s (%s), want %q: identity %q signs for the repositories that run it (issuer %s)", got, ext, id.source, san, s.Issuer)
	}
	if id.source == "" {
		if own, ok := workflowRepository(s); ok {
			if got := sourceRepository(s); got != "" && !strings.EqualFold(got, own) {
				return ReasonIdentity, fmt.Sprintf("certificate names source repository %q (its Source Repository URI, OID 1.3.6.1.4.1.57264.1.12), not %q, whose workflow %q signed: a reusable workflow signs for every repository that calls it, and the policy names no source repository, so only the workflow's own repository's runs count (issuer %s); to accept runs of %s, name it as the policy's source repository", got, own, san, s.Issuer, got)
			}
		}
	}
	return "", ""
}

// OIDs of the OIDC issuer extensions Fulcio writes: v1 (the raw string,
// deprecated) and v2 (a DER UTF8String), and of the Subject Alternative
// Name.
var (
	oidIssuerV1 = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57264, 1, 1}
	oidIssuerV2 = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57264, 1, 8}
	oidSAN      = asn1.ObjectIdentifier{2, 5, 29, 17}
)

// summarize reads the signer a Fulcio certificate names, refusing one that
// names it twice over and not alike: Fulcio writes one Subject Alternative
// Name, and its v1 and v2 issuer extensions alike. sigstore-go reads the
// first URI (else the first e-mail address, else an otherName) and
// whichever issuer extension comes last, so a policy naming either reading
// would accept such a certificate. The reason is "" where it reads.
func summarize(cert *x509.Certificate) (certificate.Summary, Reason, string) {
	s, err := certificate.SummarizeCertificate(cert)
	if err != nil {
		return s, ReasonMalformed, fmt.Sprintf("not a Fulcio certificate: %v", err)
	}
	var v1, v2 *string
	for _, e := range cert.Extensions {
		switch {
		case e.Id.Equal(oidSAN):
			var names []asn1.RawValue
			if rest, err := asn1.Unmarshal(e.Value, &names); err == nil && len(rest) == 0 && len(names) > 1 {
				var shown []string
				for _, u := range cert.URIs {
					shown = append(shown, u.String())
				}
				shown = append(shown, cert.EmailAddresses...)
				shown = append(shown, cert.DNSNames...)
				return s, ReasonIdentity, fmt.Sprintf("the certificate names %d identities (Subject Alternative Names %s), where Fulcio names the one signer: it does not say who signed (issuer %s)",
					len(names), strings.Join(shown, ", "), s.Issuer)
			}
		case e.Id.Equal(oidIssuerV1):
			v := string(e.Value)
			v1 = &v
		case e.Id.Equal(oidIssuerV2):
			var v string
			if certificate.ParseDERString(e.Value, &v) == nil {
				v2 = &v
			}
		}
	}
	if v1 != nil && v2 != nil && *v1 != *v2 {
		return s, ReasonIssuer, fmt.Sprintf("the certificate names two OIDC issuers, %q (v1 extension, OID %s) and %q (v2 extension, OID %s), where Fulcio writes one issuer in both: it does not say who vouched for identity %q",
			*v1, oidIssuerV1, *v2, oidIssuerV2, s.SubjectAlternativeName)
	}
	return s, "", ""
}

// githubActionsIssuer is GitHub Actions' OIDC issuer on github.com. An
// enterprise's own issuer begins with it
// (https://token.actions.githubusercontent.com/ENTERPRISE, Fulcio's
// meta-issuer), and its certificates name workflows and repositories alike.
const githubActionsIssuer = "https://token.actions.githubusercontent.com"

// workflowRepository returns the repository of the workflow a GitHub
// Actions certificate's identity names
// (https://github.com/OWNER/REPO/.github/workflows/FILE@REF), under
// github.com's issuer or an enterprise's: where a policy
// names no SourceRepository, the certificate must be for a run of that
// repository. A workflow may be reusable (on: workflow_call): then anybody's
// repository that calls it gets a certificate with its identity, and only
// the Source Repository URI tells them apart.
func workflowRepository(s certificate.Summary) (string, bool) {
	rest, ok := strings.CutPrefix(s.SubjectAlternativeName, "https://github.com/")
	if !strings.HasPrefix(s.Issuer, githubActionsIssuer) || !ok {
		return "", false
	}
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) < 3 || parts[0] == "" || parts[1] == "" || !strings.HasPrefix(parts[2], ".github/workflows/") {
		return "", false
	}
	return "https://github.com/" + parts[0] + "/" + parts[1], true
}

// sourceRepository is the repository whose run a GitHub Actions certificate
// was issued for: its Source Repository URI, or (a certificate from before
// Fulcio wrote it) https://github.com/ and its GitHub Workflow Repository;
// "" when it carries neither.
func sourceRepository(s certificate.Summary) string {
	if s.SourceRepositoryURI != "" {
		return s.SourceRepositoryURI
	}
	if s.GithubWorkflowRepository != "" {
		return "https://github.com/" + s.GithubWorkflowRepository
	}
	return ""
}

// sigstoreGo turns the policy into sigstore-go's, which enforces it a second
// time during verification: the source repository in the extension the
// certificate (s, which check accepted) names it in.
func (id *identity) sigstoreGo(s certificate.Summary) (sgverify.CertificateIdentity, error) {
	re := ""
	if id.re != nil {
		re = id.re.String()
	}
	ci, err := sgverify.NewShortCertificateIdentity(id.issuer, "", id.exact, re)
	if s.SourceRepositoryURI == "" && id.source != "" {
		ci.Extensions.GithubWorkflowRepository = strings.TrimPrefix(id.source, "https://github.com/")
	} else {
		ci.Extensions.SourceRepositoryURI = id.source
	}
	return ci, err
}
