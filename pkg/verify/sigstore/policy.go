package sigstore

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"time"

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
	// repository's workflow) is refused; under a CI issuer (GitHub Actions,
	// GitLab) so is one that leaves the repository's owner open, or its end
	// (containerd.*: containerd-attacker).
	IdentityRegexp string
	// Issuer is the exact OIDC issuer URL, e.g. "https://accounts.google.com"
	// or "https://token.actions.githubusercontent.com".
	Issuer string

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
}

// identity is a validated Policy: a certificate identity, or a pinned key.
type identity struct {
	exact  string
	re     *regexp.Regexp
	issuer string
	key    *pinnedKey
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
	if len(p.PublicKey) > 0 {
		return p.compileKey()
	}
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
	}
	id := &identity{exact: p.Identity, issuer: p.Issuer}
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
		if who, ok := anyonesAddress(re, p.IdentityRegexp); ok {
			return nil, fmt.Errorf("%w: IdentityRegexp %q matches an address anybody can have (it matches %q): name the signer's address, or an address pattern at a domain the signer controls; there is no \"any identity\" policy", ErrPolicy, p.IdentityRegexp, who)
		}
		if prefix, ok := anyonesRepositoryPrefix(p.IdentityRegexp, p.Issuer); ok {
			return nil, fmt.Errorf("%w: IdentityRegexp %q matches workflows of anyone's repositories (it matches identities that begin with %q): name the repository's owner literally; there is no \"any identity\" policy", ErrPolicy, p.IdentityRegexp, prefix)
		}
		id.re = re
	}
	return id, nil
}

func (p Policy) compileKey() (*identity, error) {
	if p.Identity != "" || p.IdentityRegexp != "" || p.Issuer != "" {
		return nil, fmt.Errorf("%w: PublicKey pins the signer's key; it excludes Identity, IdentityRegexp and Issuer, which name a certificate's signer", ErrPolicy)
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

// anyonesAddress returns an address at a public mail domain, of a local
// part anybody can register, that re (src, anchored) matches: a stranger's
// ("attacker@gmail.com"), or one that begins as the regexp's literal
// prefix and goes on as the stranger chooses ("alice" in
// "^alice.*@gmail\.com$": "aliceattacker@gmail.com").
func anyonesAddress(re *regexp.Regexp, src string) (string, bool) {
	for _, domain := range publicMail {
		for _, local := range strangers(literalPrefix(src)) {
			if who := local + "@" + domain; re.MatchString(who) {
				return who, true
			}
		}
	}
	return "", false
}

// strangers are names (an address's local part, a repository's owner)
// that anybody can register and that a regexp whose literal text ends in
// start, the beginning of the name, may still match: a stranger's
// ("attacker"), and ones that begin as start and go on as the stranger
// chooses ("aliceattacker", "alice-attacker").
func strangers(start string) []string {
	names := []string{"attacker"}
	if localPartRE.MatchString(start) {
		names = append(names, start+"attacker", start+".attacker", start+"-attacker")
	}
	return names
}

// localPartRE is the start of an address's local part or of a repository's
// owner (no URI).
var localPartRE = regexp.MustCompile(`^[A-Za-z0-9._%+-]+$`)

// literalPrefix is the text every match of the regular expression src
// begins with, past a leading ^ or \A: "alice" for "^alice.*@gmail\.com$".
func literalPrefix(src string) string {
	parsed, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return ""
	}
	parsed = parsed.Simplify()
	subs := []*syntax.Regexp{parsed}
	if parsed.Op == syntax.OpConcat {
		subs = parsed.Sub
	}
	var b strings.Builder
	for _, sub := range subs {
		switch {
		case sub.Op == syntax.OpBeginText || sub.Op == syntax.OpBeginLine:
			if b.Len() > 0 {
				return b.String()
			}
		case sub.Op == syntax.OpLiteral && sub.Flags&syntax.FoldCase == 0:
			b.WriteString(string(sub.Rune))
		default:
			return b.String()
		}
	}
	return b.String()
}

// anyonesRepository are, for CI issuers (an issuer URL and what begins
// with it), where the identities (workflow URIs) of its repositories begin,
// before the repository's owner: under such an issuer an IdentityRegexp
// must match no identity of a repository anybody may create, whatever the
// repository, workflow file or ref that follows.
var anyonesRepository = []struct{ issuer, site string }{
	{"https://token.actions.githubusercontent.com", "https://github.com/"},
	{"https://gitlab.com", "https://gitlab.com/"},
}

// anyonesRepositoryPrefix returns how the identities of a repository
// anybody may create begin, when the regexp src (anchored) matches some of
// them under issuer: a stranger's owner ("https://github.com/attacker/"),
// or one that begins as the regexp's literal owner and goes on as the
// stranger chooses ("containerd" in "^https://github\.com/containerd.*/":
// "https://github.com/containerd-attacker/").
func anyonesRepositoryPrefix(src, issuer string) (string, bool) {
	for _, ci := range anyonesRepository {
		if !strings.HasPrefix(issuer, ci.issuer) {
			continue
		}
		owner, ok := strings.CutPrefix(literalPrefix(src), ci.site)
		if !ok {
			owner = ""
		}
		for _, name := range strangers(owner) {
			if prefix := ci.site + name + "/"; matchesSomeWithPrefix(anchor(src), prefix) {
				return prefix, true
			}
		}
	}
	return "", false
}

// matchesSomeWithPrefix reports whether the regular expression re matches
// some string that begins with prefix: its program is run over prefix (every
// thread at once, as an NFA), then a match must still be reachable. Past
// prefix, zero-width assertions are taken as satisfiable and character
// classes as non-empty, so it may say yes for a regexp that matches nothing
// further; it never says no for one that matches such a string.
func matchesSomeWithPrefix(re, prefix string) bool {
	parsed, err := syntax.Parse(re, syntax.Perl)
	if err != nil {
		return false
	}
	prog, err := syntax.Compile(parsed.Simplify())
	if err != nil {
		return false
	}
	runes := []rune(prefix)
	// add puts pc and what it reaches without consuming a rune into set;
	// at is the position in prefix, whose neighbours the assertions see,
	// or len(runes), past which every assertion is taken as satisfiable.
	var add func(set map[uint32]bool, pc uint32, at int)
	add = func(set map[uint32]bool, pc uint32, at int) {
		if set[pc] {
			return
		}
		set[pc] = true
		in := &prog.Inst[pc]
		switch in.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			add(set, in.Out, at)
			add(set, in.Arg, at)
		case syntax.InstCapture, syntax.InstNop:
			add(set, in.Out, at)
		case syntax.InstEmptyWidth:
			if at == len(runes) {
				add(set, in.Out, at)
				break
			}
			before := rune(-1)
			if at > 0 {
				before = runes[at-1]
			}
			if syntax.EmptyOp(in.Arg)&^syntax.EmptyOpContext(before, runes[at]) == 0 {
				add(set, in.Out, at)
			}
		}
	}
	cur := map[uint32]bool{}
	add(cur, uint32(prog.Start), 0)
	for i, r := range runes {
		next := map[uint32]bool{}
		for pc := range cur {
			in := &prog.Inst[pc]
			switch in.Op {
			case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
				if in.MatchRune(r) {
					add(next, in.Out, i+1)
				}
			}
		}
		if len(next) == 0 {
			return false
		}
		cur = next
	}
	for pc := range cur { // cur is closed under every edge but runes'
		if reachesMatch(prog, pc, map[uint32]bool{}) {
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

// anchor makes re match whole strings only.
func anchor(re string) string { return `^(?:` + re + `)$` }

func (id *identity) String() string {
	if id.key != nil {
		return "public key " + id.key.fingerprint
	}
	if id.re != nil {
		return fmt.Sprintf("identity matching %s, issuer %s", id.re, id.issuer)
	}
	return fmt.Sprintf("identity %s, issuer %s", id.exact, id.issuer)
}

// check compares a certificate summary with the policy. The issuer is checked
// first: an identity only means something under the issuer that vouched for it.
func (id *identity) check(s certificate.Summary) (Reason, string) {
	if s.Issuer != id.issuer {
		return ReasonIssuer, fmt.Sprintf("certificate issued for OIDC issuer %q, want %q (identity %q)", s.Issuer, id.issuer, s.SubjectAlternativeName)
	}
	san := s.SubjectAlternativeName
	if id.re != nil {
		if !id.re.MatchString(san) {
			return ReasonIdentity, fmt.Sprintf("certificate identity %q does not match %s (issuer %s)", san, id.re, s.Issuer)
		}
		return "", ""
	}
	if san != id.exact {
		return ReasonIdentity, fmt.Sprintf("certificate identity %q, want %q (issuer %s)", san, id.exact, s.Issuer)
	}
	return "", ""
}

// sigstoreGo turns the policy into sigstore-go's, which enforces it a second
// time during verification.
func (id *identity) sigstoreGo() (sgverify.CertificateIdentity, error) {
	re := ""
	if id.re != nil {
		re = id.re.String()
	}
	return sgverify.NewShortCertificateIdentity(id.issuer, "", id.exact, re)
}
