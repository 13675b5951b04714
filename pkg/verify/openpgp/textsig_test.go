package openpgp

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
)

// A text-mode signature whose hashed trailer contains 0x0A bytes (here: the
// creation time 0x690A0A0A) must verify: only the data is canonicalised to
// CRLF, never the signature's own trailer. This was a real bug that refused
// about one gpg --textmode signature in eight.
func TestTextSignatureTrailerWithNewlineBytes(t *testing.T) {
	created := time.Unix(0x690A0A0A, 0)
	cfg := &packet.Config{Time: func() time.Time { return created }, Algorithm: packet.PubKeyAlgoEdDSA}
	e, kr := generatedKey(t, "text signer", "text@example.org", cfg)
	text := "line one\ntrailing spaces   \nlast\n"
	var sig bytes.Buffer
	if err := openpgp.DetachSignText(&sig, e, strings.NewReader(text), cfg); err != nil {
		t.Fatal(err)
	}
	res, err := VerifyDetached(kr, Policy{Now: created.Add(time.Hour)}, bytes.NewReader(sig.Bytes()), strings.NewReader(text))
	if err != nil {
		t.Fatalf("text signature with 0x0A in its trailer refused: %v", err)
	}
	if res.PrimaryFingerprint == "" {
		t.Fatal("no signer in the result")
	}
	// The same signature over CRLF text is the same canonical text: accepted.
	if _, err := VerifyDetached(kr, Policy{Now: created.Add(time.Hour)}, bytes.NewReader(sig.Bytes()), strings.NewReader(strings.ReplaceAll(text, "\n", "\r\n"))); err != nil {
		t.Fatalf("CRLF form refused: %v", err)
	}
	// Other text is refused.
	if _, err := VerifyDetached(kr, Policy{Now: created.Add(time.Hour)}, bytes.NewReader(sig.Bytes()), strings.NewReader(text+"x")); err == nil {
		t.Fatal("altered text accepted")
	}
}

// generatedKey makes a key with go-crypto, as cfg says, and a keyring that
// holds its public half.
func generatedKey(t *testing.T, name, email string, cfg *packet.Config) (*openpgp.Entity, *Keyring) {
	t.Helper()
	e, err := openpgp.NewEntity(name, "", email, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var pub bytes.Buffer
	if err := e.Serialize(&pub); err != nil {
		t.Fatal(err)
	}
	kr, err := ParseKeyring(&pub, "test")
	if err != nil {
		t.Fatal(err)
	}
	return e, kr
}
