package provenance

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/updeb/updeb/pkg/dsse"
	"github.com/updeb/updeb/pkg/strictjson"
	"github.com/updeb/updeb/pkg/verify/openpgp"
)

// PayloadType is the DSSE payload type of an in-toto statement.
const PayloadType = "application/vnd.in-toto+json"

var (
	// ErrRecord is wrapped when an envelope does not hold an in-toto
	// statement with a SLSA provenance predicate.
	ErrRecord = errors.New("provenance: not a provenance record")
	// ErrSignature is wrapped when no signature of a record counts.
	ErrSignature = errors.New("provenance record refused")
	// ErrSubject is wrapped when a record is not about the package at hand.
	ErrSubject = errors.New("provenance: record does not match the package")
)

// Envelope returns the statement as the payload of a DSSE envelope signed by
// each signer; with none, the envelope is unsigned (an empty signature list).
// The payload is Marshal's output, so equal statements and keys give equal
// envelopes.
func (s *Statement) Envelope(signers ...dsse.Signer) (*dsse.Envelope, error) {
	payload, err := s.Marshal()
	if err != nil {
		return nil, err
	}
	return dsse.Sign(PayloadType, payload, signers...)
}

// FromEnvelope decodes the statement in e's payload. The signature is not
// checked here (see Verify). Unknown fields are kept out of the statement
// but are no error, so that older readers accept newer records; a build
// type or builder other than updeb's is (ErrRecord).
func FromEnvelope(e *dsse.Envelope) (*Statement, error) {
	if e.PayloadType != PayloadType {
		return nil, fmt.Errorf("%w: payload type %q, want %q", ErrRecord, e.PayloadType, PayloadType)
	}
	// One reading for every reader (strictjson): a key twice at any depth,
	// keys that differ only in case, anything after the statement are
	// refused; numbers come out of Marshal as they went in.
	var st Statement
	if err := strictjson.Unmarshal(e.Payload, &st); err != nil {
		return nil, fmt.Errorf("%w: payload: %v", ErrRecord, err)
	}
	switch {
	case st.Type != StatementType:
		return nil, fmt.Errorf("%w: statement type %q, want %q", ErrRecord, st.Type, StatementType)
	case st.PredicateType != PredicateType:
		return nil, fmt.Errorf("%w: predicate type %q, want %q", ErrRecord, st.PredicateType, PredicateType)
	case len(st.Subject) == 0:
		return nil, fmt.Errorf("%w: no subject", ErrRecord)
	// Another builder's provenance, or another kind of build's, gives its
	// parameters other meanings: SLSA's verifiers refuse a buildType or
	// builder they do not expect, even signed by a key they trust.
	case st.Predicate.BuildDefinition.BuildType != BuildType:
		return nil, fmt.Errorf("%w: build type %q, want updeb's %q", ErrRecord, st.Predicate.BuildDefinition.BuildType, BuildType)
	case st.Predicate.RunDetails.Builder.ID != BuilderID:
		return nil, fmt.Errorf("%w: builder %q, want updeb's %q", ErrRecord, st.Predicate.RunDetails.Builder.ID, BuilderID)
	}
	// One subject per name: with a name twice, readers that take the first,
	// the last or every entry of that name read different digests.
	names := map[string]bool{}
	for _, sub := range st.Subject {
		if names[sub.Name] {
			return nil, fmt.Errorf("%w: subject %q given twice", ErrRecord, sub.Name)
		}
		names[sub.Name] = true
	}
	return &st, nil
}

// Verified is a record whose signature and subject were checked.
type Verified struct {
	Statement *Statement
	Subject   Subject
	KeyID     string          // the envelope signature's key ID (the signer's fingerprint)
	Signature *openpgp.Result // the OpenPGP signature that counted
}

// Verify checks a record against a package: that a signature of the
// envelope is an OpenPGP signature over its PAE by a key of kr, under pkg/
// verify's policy pol, whose key ID (when given) names that key; that the
// payload is a provenance statement; and that it has a subject called name
// whose sha256 is sha256Hex. It returns dsse.ErrUnsigned for an envelope
// without signatures, and errors wrapping ErrSignature (with each
// signature's refusal), ErrRecord or ErrSubject; an openpgp.ErrPolicy when
// pol cannot be applied.
func Verify(e *dsse.Envelope, kr *openpgp.Keyring, pol openpgp.Policy, name, sha256Hex string) (*Verified, error) {
	var res *openpgp.Result
	sig, err := e.Verify(func(s dsse.Signature, pae []byte) error {
		r, err := openpgp.VerifyDetached(kr, pol, bytes.NewReader(s.Sig), bytes.NewReader(pae))
		if err != nil {
			return err
		}
		if s.KeyID != "" && !strings.EqualFold(s.KeyID, r.PrimaryFingerprint) && !strings.EqualFold(s.KeyID, r.SigningKeyFingerprint) {
			return fmt.Errorf("signature with key ID %s was made by key %s", s.KeyID, r.PrimaryFingerprint)
		}
		res = r
		return nil
	})
	if errors.Is(err, dsse.ErrUnsigned) {
		return nil, err
	}
	if se, ok := errors.AsType[*dsse.SignatureError](err); ok {
		// A policy that cannot be applied (a signer that is no
		// fingerprint) refuses every signature alike: the caller's
		// input, not a refused record.
		if errors.Is(se.Errs[0], openpgp.ErrPolicy) {
			return nil, se.Errs[0]
		}
		return nil, fmt.Errorf("%w: %w", ErrSignature, errors.Join(se.Errs...))
	}
	if err != nil {
		return nil, err
	}
	st, err := FromEnvelope(e)
	if err != nil {
		return nil, err
	}
	v := &Verified{Statement: st, KeyID: sig.KeyID, Signature: res}
	for _, sub := range st.Subject {
		if sub.Name != name {
			continue
		}
		if got := sub.Digest["sha256"]; !strings.EqualFold(got, sha256Hex) {
			return nil, fmt.Errorf("%w: the record gives %s sha256 %s, the package has %s", ErrSubject, name, orNone(got), sha256Hex)
		}
		v.Subject = sub
		return v, nil
	}
	var names []string
	for _, sub := range st.Subject {
		names = append(names, sub.Name)
	}
	return nil, fmt.Errorf("%w: the record is about %s, not %s", ErrSubject, strings.Join(names, ", "), name)
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
