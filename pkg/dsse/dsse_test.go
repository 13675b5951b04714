package dsse

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

// edSigner signs with a fixed Ed25519 key (deterministic, like updeb's keys).
type edSigner struct {
	id  string
	key ed25519.PrivateKey
}

func newEd(id string, seed byte) edSigner {
	return edSigner{id, ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, ed25519.SeedSize))}
}

func (s edSigner) KeyID() string                   { return s.id }
func (s edSigner) Sign(pae []byte) ([]byte, error) { return ed25519.Sign(s.key, pae), nil }
func (s edSigner) verify(sig Signature, pae []byte) error {
	if sig.KeyID != s.id || !ed25519.Verify(s.key.Public().(ed25519.PublicKey), pae, sig.Sig) {
		return errors.New("bad signature by " + sig.KeyID)
	}
	return nil
}

// The protocol's own example (protocol.md, "Pre-Authentication Encoding").
func TestPAE(t *testing.T) {
	got := string(PAE("http://example.com/HelloWorld", []byte("hello world")))
	if want := "DSSEv1 29 http://example.com/HelloWorld 11 hello world"; got != want {
		t.Fatalf("PAE = %q, want %q", got, want)
	}
	if got := string(PAE("t", nil)); got != "DSSEv1 1 t 0 " {
		t.Fatalf("PAE of an empty payload = %q", got)
	}
}

func TestSignMarshalParseVerify(t *testing.T) {
	a, b := newEd("a", 1), newEd("b", 2)
	e, err := Sign("application/vnd.in-toto+json", []byte(`{"x":1}`), a, b)
	if err != nil {
		t.Fatal(err)
	}
	data, err := e.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Count(data, []byte("\n")) != 1 || !bytes.HasPrefix(data, []byte(`{"payloadType":"application/vnd.in-toto+json","payload":"eyJ4IjoxfQ==","signatures":[{"keyid":"a","sig":"`)) {
		t.Fatalf("envelope:\n%s", data)
	}
	again, _ := Sign("application/vnd.in-toto+json", []byte(`{"x":1}`), a, b)
	if d2, _ := again.Marshal(); !bytes.Equal(data, d2) {
		t.Fatal("the same payload and keys gave other bytes")
	}
	p, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if s, err := p.Verify(b.verify); err != nil || s.KeyID != "b" {
		t.Fatalf("Verify with b = %v, %v (a's signature refused, b's accepted)", s, err)
	}
	other := newEd("a", 3)
	if _, err := p.Verify(other.verify); !errors.Is(err, ErrNoValidSignature) || !strings.Contains(err.Error(), "bad signature by a") {
		t.Fatalf("Verify with another key = %v", err)
	}
	// One changed payload byte: no signature holds.
	p.Payload[2] ^= 1
	if _, err := p.Verify(a.verify); !errors.Is(err, ErrNoValidSignature) {
		t.Fatalf("tampered payload: %v", err)
	}
	// The type is signed too.
	p.Payload[2] ^= 1
	p.PayloadType = "text/plain"
	if _, err := p.Verify(a.verify); !errors.Is(err, ErrNoValidSignature) {
		t.Fatalf("changed payload type: %v", err)
	}
}

func TestUnsigned(t *testing.T) {
	e, err := Sign("t", []byte("p"))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := e.Marshal()
	if string(data) != `{"payloadType":"t","payload":"cA==","signatures":[]}`+"\n" {
		t.Fatalf("unsigned envelope: %s", data)
	}
	p, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Verify(newEd("a", 1).verify); err != ErrUnsigned {
		t.Fatalf("Verify(unsigned) = %v, want ErrUnsigned", err)
	}
	// "signatures" may be left out altogether.
	if p, err := Parse([]byte(`{"payloadType":"t","payload":"cA=="}`)); err != nil || len(p.Signatures) != 0 {
		t.Fatalf("no signatures field: %v %v", p, err)
	}
}

func TestParseAcceptsEveryBase64Alphabet(t *testing.T) {
	payload := []byte{0xfb, 0xff, 0xfe} // '+' and '/' in the standard alphabet
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		s := enc.EncodeToString(append(payload, 'x'))
		p, err := Parse([]byte(`{"payloadType":"t","payload":"` + s + `","signatures":[{"sig":"` + s + `"}]}`))
		if err != nil || !bytes.Equal(p.Payload, append(payload, 'x')) || p.Signatures[0].KeyID != "" {
			t.Errorf("%q: %v %v", s, p, err)
		}
	}
}

func TestParseRefusals(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{``, "not a JSON object"},
		{`[]`, "not a JSON object"},
		{`{"payloadType":"t","payload":"cA==","signatures":[]`, "cut short"},
		{`{"payloadType":"t","payload":"cA==","signatures":[]}{}`, "data after the JSON value"},
		{`{"payloadType":"t","payload":"cA==","signatures":[]} x`, "data after the JSON value"},
		{`{"payloadType":"t","payload":"cA==","extra":1}`, `unknown field "extra"`},
		{`{"payloadType":"t","payload":"cA==","payload":"cQ=="}`, `key "payload" given twice in the object at the top`},
		{`{"payloadType":"t"}`, `no "payload" field`},
		{`{"payload":"cA=="}`, `no "payloadType" field`},
		{`{"payloadType":"","payload":"cA=="}`, "empty payloadType"},
		{`{"payloadType":null,"payload":"cA=="}`, "payloadType is not a string"},
		{`{"payloadType":"t","payload":7}`, "payload is not a string"},
		{`{"payloadType":"t","payload":"c A=="}`, "payload is not canonical base64"},
		{`{"payloadType":"t","payload":"cB=="}`, "payload is not canonical base64"},   // stray bits
		{`{"payloadType":"t","payload":"cA\n=="}`, "payload is not canonical base64"}, // a line break (RFC 4648 3.3)
		{`{"payloadType":"t","payload":"cA\r\n=="}`, "payload is not canonical base64"},
		{`{"payloadType":"t","payload":"cA==","Payload":"cQ=="}`, `keys "payload" and "Payload" differ only in case`},
		{`{"payloadType":"t","payload":"cA==","signatures":[]}]`, "data after the JSON value"},
		{`{"payloadType":"t","payload":"cA==","signatures":[{"sig":"cA==","keyid":"a","keyid":"b"}]}`, `key "keyid" given twice`},
		{`{"payloadType":"t","payload":"cA==","signatures":{}}`, "signatures is not a list"},
		{`{"payloadType":"t","payload":"cA==","signatures":null}`, "signatures is not a list"},
		{`{"payloadType":"t","payload":"cA==","signatures":[{"keyid":"a"}]}`, `signature 1: no "sig" field`},
		{`{"payloadType":"t","payload":"cA==","signatures":[{"sig":""}]}`, "signature 1: empty sig"},
		{`{"payloadType":"t","payload":"cA==","signatures":[{"sig":"cA==","sig":"cA=="}]}`, `key "sig" given twice in the object at /signatures/0`},
		{`{"payloadType":"t","payload":"cA==","signatures":[{"sig":"cA==","cert":"x"}]}`, `signature 1: unknown field "cert"`},
		{`{"payloadType":"t","payload":"cA==","signatures":[{"sig":"cA==","keyid":1}]}`, "signature 1: keyid is not a string"},
		{`{"payloadType":"t","payload":"cA==","signatures":[` + strings.Repeat(`{"sig":"cA=="},`, MaxSignatures) + `{"sig":"cA=="}]}`, "17 signatures, at most 16"},
	} {
		_, err := Parse([]byte(tc.in))
		if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%.60s) = %v, want ErrMalformed with %q", tc.in, err, tc.want)
		}
	}
}

func TestReadIsBounded(t *testing.T) {
	huge := `{"payloadType":"t","payload":"` + strings.Repeat("A", MaxSize) + `"}`
	_, err := Read(strings.NewReader(huge))
	if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("Read(huge) = %v", err)
	}
	// Read stops after MaxSize+1 bytes of an endless stream.
	if _, err := Read(endless{}); !errors.Is(err, ErrMalformed) {
		t.Fatalf("Read(endless) = %v", err)
	}
}

type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

// FuzzParse: Parse never panics, and what it accepts survives Marshal and
// Parse unchanged.
func FuzzParse(f *testing.F) {
	e, _ := Sign("application/vnd.in-toto+json", []byte(`{"_type":"x"}`), newEd("k", 1))
	data, _ := e.Marshal()
	f.Add(data)
	f.Add([]byte(`{"payloadType":"t","payload":"cA","signatures":[{"sig":"_-8"}]}`))
	f.Add([]byte(`{"payloadType":"t","payload":"","signatures":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := Parse(data)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		out, err := e.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		again, err := Parse(out)
		if err != nil {
			t.Fatalf("re-parse of %s: %v", out, err)
		}
		out2, _ := again.Marshal()
		if !bytes.Equal(out, out2) {
			t.Fatalf("not stable:\n%s\n%s", out, out2)
		}
	})
}
