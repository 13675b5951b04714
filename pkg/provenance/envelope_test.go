package provenance

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/packet"

	"github.com/updeb/updeb/internal/testkit/pgptest"
	"github.com/updeb/updeb/pkg/digest"
	"github.com/updeb/updeb/pkg/dsse"
	verifypgp "github.com/updeb/updeb/pkg/verify/openpgp"
)

// pgpSigner is the simplest OpenPGP DSSE signer: a binary detached
// signature over the PAE, keyid the primary fingerprint.
type pgpSigner struct {
	e     *openpgp.Entity
	keyID string
}

func newSigner(t *testing.T) (pgpSigner, *verifypgp.Keyring) {
	t.Helper()
	e, err := openpgp.NewEntity("prov", "", "prov@example.org", &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA, Time: func() time.Time { return time.Now().Add(-time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	var pub bytes.Buffer
	if err := e.Serialize(&pub); err != nil {
		t.Fatal(err)
	}
	kr, err := verifypgp.ParseKeyring(&pub, "prov.gpg")
	if err != nil {
		t.Fatal(err)
	}
	return pgpSigner{e, kr.Fingerprints()[0]}, kr
}

func (s pgpSigner) KeyID() string { return s.keyID }
func (s pgpSigner) Sign(pae []byte) ([]byte, error) {
	var b bytes.Buffer
	err := openpgp.DetachSign(&b, s.e, bytes.NewReader(pae), &packet.Config{Time: func() time.Time { return time.Now().Add(-time.Minute) }})
	return b.Bytes(), err
}

const debName, debSHA = "hello_1.2.0-1_amd64.deb", "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"

func signedRecord(t *testing.T, s dsse.Signer) *dsse.Envelope {
	t.Helper()
	var signers []dsse.Signer
	if s != nil {
		signers = append(signers, s)
	}
	e, err := New(sample(0)).Envelope(signers...)
	if err != nil {
		t.Fatal(err)
	}
	data, err := e.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	p, err := dsse.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestVerify(t *testing.T) {
	s, kr := newSigner(t)
	pol := verifypgp.Policy{Now: time.Now()}
	v, err := Verify(signedRecord(t, s), kr, pol, debName, debSHA)
	if err != nil {
		t.Fatal(err)
	}
	if v.KeyID != s.keyID || v.Signature.PrimaryFingerprint != s.keyID || v.Subject.Name != debName ||
		len(v.Statement.Predicate.BuildDefinition.ResolvedDependencies) != 2 {
		t.Fatalf("verified %+v", v)
	}

	other, otherKR := newSigner(t)
	wrongKeyID := s
	wrongKeyID.keyID = other.keyID
	for _, tc := range []struct {
		name   string
		env    func() *dsse.Envelope
		kr     *verifypgp.Keyring
		deb    string
		sha    string
		is     error
		reason verifypgp.Reason
		want   string
	}{
		{"unsigned", func() *dsse.Envelope { return signedRecord(t, nil) }, kr, debName, debSHA, dsse.ErrUnsigned, "", "not signed"},
		{"another key", func() *dsse.Envelope { return signedRecord(t, s) }, otherKR, debName, debSHA, ErrSignature, verifypgp.ReasonUnknownSigner, "which is not in keyring prov.gpg"},
		{"payload byte changed", func() *dsse.Envelope {
			e := signedRecord(t, s)
			e.Payload[bytes.Index(e.Payload, []byte("hello"))] = 'j'
			return e
		}, kr, debName, debSHA, ErrSignature, verifypgp.ReasonBadSignature, ""},
		{"signature byte changed", func() *dsse.Envelope {
			e := signedRecord(t, s)
			e.Signatures[0].Sig[len(e.Signatures[0].Sig)-5] ^= 1
			return e
		}, kr, debName, debSHA, ErrSignature, "", ""},
		{"payload type changed", func() *dsse.Envelope {
			e := signedRecord(t, s)
			e.PayloadType = "application/json"
			return e
		}, kr, debName, debSHA, ErrSignature, verifypgp.ReasonBadSignature, ""},
		{"key ID of another key", func() *dsse.Envelope { return signedRecord(t, wrongKeyID) }, kr, debName, debSHA, ErrSignature, "", "with key ID " + other.keyID + " was made by key " + s.keyID},
		{"other package bytes", func() *dsse.Envelope { return signedRecord(t, s) }, kr, debName, strings.Repeat("d", 64), ErrSubject, "", "the record gives hello_1.2.0-1_amd64.deb sha256 " + debSHA + ", the package has dddd"},
		{"other package name", func() *dsse.Envelope { return signedRecord(t, s) }, kr, "hello_1.2.0-1_arm64.deb", debSHA, ErrSubject, "", "the record is about hello_1.2.0-1_amd64.deb, not hello_1.2.0-1_arm64.deb"},
	} {
		_, err := Verify(tc.env(), tc.kr, pol, tc.deb, tc.sha)
		if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %v with %q", tc.name, err, tc.is, tc.want)
			continue
		}
		if re, ok := errors.AsType[*verifypgp.RefusedError](err); tc.reason != "" && (!ok || !re.Has(tc.reason)) {
			t.Errorf("%s: %v, want a refusal for %s", tc.name, err, tc.reason)
		}
	}

	// A signed envelope of something else is no provenance record.
	e, _ := dsse.Sign(PayloadType, []byte(`{"_type":"https://in-toto.io/Statement/v1","predicateType":"https://spdx.dev/Document","subject":[{"name":"x","digest":{}}]}`), s)
	if _, err := Verify(e, kr, pol, debName, debSHA); !errors.Is(err, ErrRecord) || !strings.Contains(err.Error(), "predicate type") {
		t.Fatalf("an SPDX statement: %v", err)
	}
	e, _ = dsse.Sign(PayloadType, []byte(`{"_type":`), s)
	if _, err := Verify(e, kr, pol, debName, debSHA); !errors.Is(err, ErrRecord) {
		t.Fatalf("a broken payload: %v", err)
	}
	// A SLSA provenance of this package's bytes, signed by the trusted key,
	// made by another builder or another kind of build (a keyring of
	// builders whose keys sign other provenance too) was taken for updeb's,
	// and its parameters read as recipe, version and architecture ("built
	// <nil> <nil> for <nil>"): SLSA's verifier checks the buildType, and the
	// builder, against what it expects, and refuses others.
	for _, tc := range []struct{ buildType, builder, want string }{
		{"https://actions.github.io/buildtypes/workflow/v1", BuilderID, `build type "https://actions.github.io/buildtypes/workflow/v1"`},
		{BuildType, "https://github.com/actions/runner/github-hosted", `builder "https://github.com/actions/runner/github-hosted"`},
	} {
		st := New(sample(0))
		st.Predicate.BuildDefinition.BuildType = tc.buildType
		st.Predicate.RunDetails.Builder.ID = tc.builder
		e, err := st.Envelope(s)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Verify(e, kr, pol, debName, debSHA); !errors.Is(err, ErrRecord) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("a record of %s by %s: %v, want %v with %q", tc.buildType, tc.builder, err, ErrRecord, tc.want)
		}
	}
}

// gpg, an independent signer, makes the signature over the PAE that
// Verify must accept: the format is what the README says it is.
func TestVerifyAcceptsAnEnvelopeSignedByGPG(t *testing.T) {
	g := pgptest.NewSigner(t)
	dir := t.TempDir()
	fpr := g.NewKey("Provenance <prov@example.org>", filepath.Join(dir, "pub.asc"))
	payload, _ := New(sample(0)).Marshal()
	os.WriteFile(filepath.Join(dir, "pae"), dsse.PAE(PayloadType, payload), 0o644)
	g.GPG("--local-user", fpr, "--output", filepath.Join(dir, "sig"), "--detach-sign", filepath.Join(dir, "pae"))
	sig, _ := os.ReadFile(filepath.Join(dir, "sig"))
	env := `{"payloadType":"` + PayloadType + `","payload":"` + base64.StdEncoding.EncodeToString(payload) +
		`","signatures":[{"keyid":"` + fpr + `","sig":"` + base64.StdEncoding.EncodeToString(sig) + `"}]}`
	e, err := dsse.Parse([]byte(env))
	if err != nil {
		t.Fatal(err)
	}
	kr, err := verifypgp.LoadKeyring(filepath.Join(dir, "pub.asc"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(e, kr, verifypgp.Policy{Now: time.Now()}, debName, debSHA); err != nil {
		t.Fatal(err)
	}
}

// A record read back and written again is the same bytes, and SetRecipe
// gives what New gives with that recipe input.
func TestReadBackAndSetRecipe(t *testing.T) {
	recipe := func(commit string) Input {
		return Input{Name: "recipes/hello.yaml", Digests: digest.Set{digest.SHA256: strings.Repeat("e", 64)},
			Annotations: map[string]string{AnnotationRole: RoleRecipe, AnnotationGitCommit: commit, AnnotationGitState: "clean"}}
	}
	b := sample(0)
	b.Inputs = append(b.Inputs, recipe("1111"), Input{Name: "keys/k.asc", Digests: digest.Set{digest.SHA256: "ff"}, Annotations: map[string]string{AnnotationRole: RoleKeyring}})
	want, _ := New(b).Envelope()
	got, err := FromEnvelope(want)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := got.Marshal(); !bytes.Equal(again, want.Payload) {
		t.Fatalf("read back and written again:\n%s\nwas\n%s", again, want.Payload)
	}
	got.SetRecipe(recipe("2222"))
	b.Inputs[2] = recipe("2222")
	fresh, _ := New(b).Marshal()
	if patched, _ := got.Marshal(); !bytes.Equal(patched, fresh) {
		t.Fatalf("SetRecipe:\n%s\nNew:\n%s", patched, fresh)
	}
	if i := bytes.Index(fresh, []byte(`"name": "keys/k.asc"`)); i < 0 || i > bytes.Index(fresh, []byte(`"name": "recipes/hello.yaml"`)) || i > bytes.Index(fresh, []byte(`"uri"`)) {
		t.Fatalf("local inputs not first, by name:\n%s", fresh)
	}
}

// FuzzFromEnvelope: any payload is a statement or an ErrRecord, and a
// statement read back is written again as it was read.
func FuzzFromEnvelope(f *testing.F) {
	good, _ := New(sample(0)).Marshal()
	f.Add(good)
	f.Add([]byte(`{"_type":"https://in-toto.io/Statement/v1","predicateType":"https://slsa.dev/provenance/v1","subject":[{"name":"a","digest":{"sha256":"00"}}],"predicate":{"buildDefinition":{"internalParameters":{"sourceDateEpoch":1e3}}}}`))
	f.Add([]byte(`{"_type":1}`))
	f.Fuzz(func(t *testing.T, payload []byte) {
		st, err := FromEnvelope(&dsse.Envelope{PayloadType: PayloadType, Payload: payload})
		if err != nil {
			if !errors.Is(err, ErrRecord) {
				t.Fatalf("error %v does not wrap ErrRecord", err)
			}
			return
		}
		out, err := st.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		again, err := FromEnvelope(&dsse.Envelope{PayloadType: PayloadType, Payload: out})
		if err != nil {
			t.Fatalf("re-read: %v\n%s", err, out)
		}
		if out2, _ := again.Marshal(); !bytes.Equal(out, out2) {
			t.Fatalf("not stable:\n%s\n%s", out, out2)
		}
	})
}
