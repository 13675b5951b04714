package sigstore

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/sigstore/sigstore-go/pkg/fulcio/certificate"
	sgverify "github.com/sigstore/sigstore-go/pkg/verify"
)

// Policy names who must have signed: the identity in the Fulcio certificate
// (its Subject Alternative Name: an e-mail address, a URI such as a GitHub
// Actions workflow, or an otherName) and the OIDC issuer that vouched for it.
// There is no "any identity" form: exactly one of Identity and IdentityRegexp,
// and Issuer, are required.
type Policy struct {
	// Identity is the exact SAN, e.g.
	// "krel-staging@k8s-releng-prod.iam.gserviceaccount.com".
	Identity string
	// IdentityRegexp is a Go regular expression the whole SAN must match: it
	// is anchored at both ends whether or not it says so, e.g.
	// `https://github\.com/cilium/cilium-cli/\.github/workflows/release\.yaml@refs/tags/v.*`.
	// One that matches anybody's identity (".*", any e-mail address, any
	// repository's workflow) is refused.
	IdentityRegexp string
	// Issuer is the exact OIDC issuer URL, e.g. "https://accounts.google.com"
	// or "https://token.actions.githubusercontent.com".
	Issuer string
}

// identity is a validated Policy.
type identity struct {
	exact  string
	re     *regexp.Regexp
	issuer string
}

// Validate reports an unusable Policy (wrapping ErrPolicy). Every Verify method
// calls it first, before any network step.
func (p Policy) Validate() error {
	_, err := p.compile()
	return err
}

func (p Policy) compile() (*identity, error) {
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
		re, err := regexp.Compile(anchor(p.IdentityRegexp))
		if err != nil {
			return nil, fmt.Errorf("%w: IdentityRegexp %q: %v", ErrPolicy, p.IdentityRegexp, err)
		}
		for _, who := range anyone {
			if re.MatchString(who) {
				return nil, fmt.Errorf("%w: IdentityRegexp %q matches the identity of anyone (it matches %q): name the signer; there is no \"any identity\" policy", ErrPolicy, p.IdentityRegexp, who)
			}
		}
		id.re = re
	}
	return id, nil
}

// anyone are identities an IdentityRegexp must not match: one that does
// would accept signatures by anybody with an account at the issuer.
var anyone = []string{
	"",
	"x",
	"attacker@example.com",
	"https://github.com/attacker/attacker/.github/workflows/release.yml@refs/tags/v1.0.0",
}

// anchor makes re match whole strings only.
func anchor(re string) string { return `^(?:` + re + `)$` }

func (id *identity) String() string {
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
