// Package dsse reads and writes DSSE envelopes (Dead Simple Signing Envelope,
// https://github.com/secure-systems-lab/dsse, protocol v1): a payload, its
// type, and signatures over the pre-authentication encoding (PAE) of both, so
// that a signature can never be taken for one over another type of payload.
//
// The contract: Marshal writes one line of JSON (payloadType, payload,
// signatures, in that order, base64 with padding) and a newline, so equal
// envelopes give equal bytes and the file is also valid JSON Lines (in-toto's
// .intoto.jsonl). An envelope with no signature is written with an empty
// "signatures" list; Verify refuses it with ErrUnsigned.
//
// Parse is strict and bounded: at most MaxSize bytes, MaxSignatures
// signatures, no unknown, repeated or missing fields, no trailing data, and
// base64 that is canonical (standard or URL alphabet, padded or not, as the
// protocol allows). Every refusal wraps ErrMalformed.
package dsse

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/updeb/updeb/pkg/strictjson"
)

const (
	// MaxSize is the largest envelope Parse and Read accept.
	MaxSize = 4 << 20
	// MaxSignatures is the most signatures one envelope may carry.
	MaxSignatures = 16
)

var (
	// ErrMalformed is wrapped by every parse error.
	ErrMalformed = errors.New("dsse: malformed envelope")
	// ErrUnsigned is returned by Verify for an envelope without signatures.
	ErrUnsigned = errors.New("dsse: envelope is not signed")
	// ErrNoValidSignature is wrapped when no signature of an envelope verifies.
	ErrNoValidSignature = errors.New("dsse: no signature verifies")
)

// Envelope is a payload with its type and signatures.
type Envelope struct {
	PayloadType string
	Payload     []byte
	Signatures  []Signature
}

// Signature is one signature over the envelope's PAE. KeyID is an unsigned
// hint saying which key made it; the verifier decides what it trusts.
type Signature struct {
	KeyID string
	Sig   []byte
}

// Signer makes one signature over PAE bytes.
type Signer interface {
	KeyID() string
	Sign(pae []byte) ([]byte, error)
}

// PAE is the pre-authentication encoding that signatures are made over:
// "DSSEv1" SP len(type) SP type SP len(payload) SP payload, lengths in
// decimal ASCII.
func PAE(payloadType string, payload []byte) []byte {
	var b bytes.Buffer
	b.WriteString("DSSEv1 ")
	b.WriteString(strconv.Itoa(len(payloadType)))
	b.WriteByte(' ')
	b.WriteString(payloadType)
	b.WriteByte(' ')
	b.WriteString(strconv.Itoa(len(payload)))
	b.WriteByte(' ')
	b.Write(payload)
	return b.Bytes()
}

// Sign returns the envelope of payload signed by every signer, in order.
// With no signer it returns an unsigned envelope.
func Sign(payloadType string, payload []byte, signers ...Signer) (*Envelope, error) {
	if payloadType == "" {
		return nil, errors.New("dsse: empty payload type")
	}
	e := &Envelope{PayloadType: payloadType, Payload: payload}
	pae := PAE(payloadType, payload)
	for _, s := range signers {
		sig, err := s.Sign(pae)
		if err != nil {
			return nil, fmt.Errorf("dsse: sign with %s: %w", s.KeyID(), err)
		}
		e.Signatures = append(e.Signatures, Signature{KeyID: s.KeyID(), Sig: sig})
	}
	return e, nil
}

// PAE returns the bytes the envelope's signatures are over.
func (e *Envelope) PAE() []byte { return PAE(e.PayloadType, e.Payload) }

type jsonSignature struct {
	KeyID string `json:"keyid"`
	Sig   string `json:"sig"`
}

type jsonEnvelope struct {
	PayloadType string          `json:"payloadType"`
	Payload     string          `json:"payload"`
	Signatures  []jsonSignature `json:"signatures"`
}

// Marshal returns the envelope as one line of JSON and a newline.
func (e *Envelope) Marshal() ([]byte, error) {
	j := jsonEnvelope{
		PayloadType: e.PayloadType,
		Payload:     base64.StdEncoding.EncodeToString(e.Payload),
		Signatures:  []jsonSignature{},
	}
	for _, s := range e.Signatures {
		j.Signatures = append(j.Signatures, jsonSignature{KeyID: s.KeyID, Sig: base64.StdEncoding.EncodeToString(s.Sig)})
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(j); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Read parses an envelope from r, reading at most MaxSize bytes.
func Read(r io.Reader) (*Envelope, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxSize+1))
	if err != nil {
		return nil, err
	}
	return Parse(data)
}

// Parse parses one JSON envelope.
func Parse(data []byte) (*Envelope, error) {
	if len(data) > MaxSize {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrMalformed, MaxSize)
	}
	// One reading for every reader: no key twice or differing only in
	// case at any depth, nothing after the object (strictjson).
	if t := bytes.TrimSpace(data); len(t) == 0 || t[0] != '{' {
		return nil, fmt.Errorf("%w: not a JSON object", ErrMalformed)
	}
	if err := strictjson.Check(data); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	var (
		typ, payload, sigs json.RawMessage
		e                  Envelope
	)
	if err := object(data, map[string]*json.RawMessage{"payloadType": &typ, "payload": &payload, "signatures": &sigs}, "signatures"); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	var err error
	if e.PayloadType, err = str(typ, "payloadType"); err != nil {
		return nil, err
	}
	if e.PayloadType == "" {
		return nil, fmt.Errorf("%w: empty payloadType", ErrMalformed)
	}
	if e.Payload, err = b64(payload, "payload"); err != nil {
		return nil, err
	}
	if sigs == nil {
		return &e, nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(sigs, &list); err != nil || list == nil {
		return nil, fmt.Errorf("%w: signatures is not a list", ErrMalformed)
	}
	if len(list) > MaxSignatures {
		return nil, fmt.Errorf("%w: %d signatures, at most %d", ErrMalformed, len(list), MaxSignatures)
	}
	for i, raw := range list {
		var keyid, sig json.RawMessage
		if err := object(raw, map[string]*json.RawMessage{"keyid": &keyid, "sig": &sig}, "keyid"); err != nil {
			return nil, fmt.Errorf("%w: signature %d: %v", ErrMalformed, i+1, err)
		}
		var s Signature
		if keyid != nil {
			if s.KeyID, err = str(keyid, fmt.Sprintf("signature %d: keyid", i+1)); err != nil {
				return nil, err
			}
		}
		if s.Sig, err = b64(sig, fmt.Sprintf("signature %d: sig", i+1)); err != nil {
			return nil, err
		}
		if len(s.Sig) == 0 {
			return nil, fmt.Errorf("%w: signature %d: empty sig", ErrMalformed, i+1)
		}
		e.Signatures = append(e.Signatures, s)
	}
	return &e, nil
}

// object decodes one JSON object into fields, refusing unknown and repeated
// keys and anything after the object; every field but those in optional
// must be present.
func object(data []byte, fields map[string]*json.RawMessage, optional ...string) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return errors.New("not a JSON object")
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return fmt.Errorf("bad JSON: %v", err)
		}
		key, _ := t.(string)
		dst, ok := fields[key]
		switch {
		case !ok:
			return fmt.Errorf("unknown field %q", key)
		case seen[key]:
			return fmt.Errorf("field %q given twice", key)
		}
		seen[key] = true
		if err := dec.Decode(dst); err != nil {
			return fmt.Errorf("field %q: bad JSON: %v", key, err)
		}
	}
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("bad JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the JSON object")
	}
	for name := range fields {
		if !seen[name] && !slices.Contains(optional, name) {
			return fmt.Errorf("no %q field", name)
		}
	}
	return nil
}

func str(raw json.RawMessage, what string) (string, error) {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", fmt.Errorf("%w: %s is not a string", ErrMalformed, what)
	}
	return s, nil
}

// b64 decodes a base64 string in any of the four encodings the protocol
// allows, canonical only (no stray bits, no line breaks: strictjson.Base64).
func b64(raw json.RawMessage, what string) ([]byte, error) {
	s, err := str(raw, what)
	if err != nil {
		return nil, err
	}
	b, err := strictjson.Base64(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %s is not canonical base64 (RFC 4648: no line breaks or other bytes outside the alphabet)", ErrMalformed, what)
	}
	return b, nil
}

// Verify calls verify for each signature, in order, and returns the first
// one it accepts. It returns ErrUnsigned when there is none, and an error
// *SignatureError when none is accepted.
func (e *Envelope) Verify(verify func(sig Signature, pae []byte) error) (Signature, error) {
	if len(e.Signatures) == 0 {
		return Signature{}, ErrUnsigned
	}
	pae := e.PAE()
	var errs []error
	for _, s := range e.Signatures {
		err := verify(s, pae)
		if err == nil {
			return s, nil
		}
		errs = append(errs, err)
	}
	return Signature{}, &SignatureError{Errs: errs}
}

// SignatureError lists why each signature of an envelope was refused. It
// wraps ErrNoValidSignature and each refusal.
type SignatureError struct {
	Errs []error // one per signature, in order
}

func (e *SignatureError) Error() string {
	return fmt.Sprintf("%v: %v", ErrNoValidSignature, errors.Join(e.Errs...))
}

func (e *SignatureError) Unwrap() []error { return append([]error{ErrNoValidSignature}, e.Errs...) }
