package openpgp

import (
	"bytes"
	"crypto"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/clearsign"
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

// TestClearsignedSHA3: RFC 9580 names SHA3-256 and SHA3-512 with their
// dash in a clearsigned message's Hash header (go-crypto and Sequoia write
// "Hash: SHA3-256"); the header check compared it with "SHA3256" and
// refused every such message.
func TestClearsignedSHA3(t *testing.T) {
	created := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, h := range []crypto.Hash{crypto.SHA3_256, crypto.SHA3_512} {
		cfg := &packet.Config{Time: func() time.Time { return created }, Algorithm: packet.PubKeyAlgoEdDSA, DefaultHash: h}
		e, kr := generatedKey(t, "sha3 signer", "sha3@example.org", cfg)
		var msg bytes.Buffer
		w, err := clearsign.Encode(&msg, e.PrivateKey, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(w, "abc123  tool.tar.gz\n"); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if want := "Hash: " + strings.ToUpper(h.String()) + "\n"; !strings.Contains(msg.String(), want) {
			t.Fatalf("go-crypto wrote no %q header:\n%s", want, msg.String())
		}
		content, res, err := VerifyClearsigned(kr, Policy{Now: created.Add(time.Hour)}, &msg)
		if err != nil {
			t.Fatalf("%s: %v", h, err)
		}
		// go-crypto signs the final newline (a line break follows it
		// before the signature): the content has it once.
		if string(content) != "abc123  tool.tar.gz\n" || res.Hash != h.String() {
			t.Fatalf("%s: content %q, hash %s", h, content, res.Hash)
		}
	}
}
