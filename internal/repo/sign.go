package repo

import (
	"bytes"
	"crypto"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/clearsign"
	"github.com/ProtonMail/go-crypto/openpgp/packet"

	"github.com/updeb/updeb/internal/signkey"
)

// ErrWeakKey, ErrKey and MinRSABits are package signkey's, which loads the
// keys that both the repository and provenance records are signed with.
var (
	ErrWeakKey = signkey.ErrWeakKey
	ErrKey     = signkey.ErrKey
)

// MinRSABits is the smallest RSA key updeb signs with or generates.
const MinRSABits = signkey.MinRSABits

// Signer signs Release files with one or more OpenPGP secret keys (several
// during a key rotation, so that clients trusting either key accept the
// repository). Signatures use SHA-512 and carry the time they are given (the
// Release Date), without the random salt notation go-crypto adds by default,
// so the same Release and time give the same signature bytes (Ed25519 and RSA
// PKCS#1 v1.5 are deterministic).
type Signer struct {
	entities []*openpgp.Entity
}

// ReadSigner reads an armored OpenPGP secret key (as `updeb keys generate`
// writes it). name is used in error messages. Passphrase-protected keys are
// refused: the publisher runs unattended; so are keys apt 2.6's gpgv cannot
// check (signkey's AptVerifiable).
func ReadSigner(r io.Reader, name string) (*Signer, error) {
	k, err := signkey.Read(r, name)
	if err != nil {
		return nil, err
	}
	if err := k.AptVerifiable(name); err != nil {
		return nil, err
	}
	return &Signer{entities: []*openpgp.Entity{k.Entity}}, nil
}

// JoinSigners returns a Signer that signs with every key of signers, in
// order (a rotation window: the old key and the new one). The same key twice
// is refused.
func JoinSigners(signers ...*Signer) (*Signer, error) {
	out := &Signer{}
	seen := map[string]bool{}
	for _, s := range signers {
		for _, e := range s.entities {
			fp := fingerprint(e)
			if seen[fp] {
				return nil, fmt.Errorf("%w: key %s is given twice", ErrKey, fp)
			}
			seen[fp] = true
			out.entities = append(out.entities, e)
		}
	}
	if len(out.entities) == 0 {
		return nil, fmt.Errorf("%w: no signing key", ErrKey)
	}
	return out, nil
}

func fingerprint(e *openpgp.Entity) string { return signkey.Fingerprint(e) }

// Fingerprints returns the keys' fingerprints in upper-case hex, in signing order.
func (s *Signer) Fingerprints() []string {
	out := make([]string, len(s.entities))
	for i, e := range s.entities {
		out[i] = fingerprint(e)
	}
	return out
}

// signs reports whether fpr is one of the keys or subkeys the signer holds:
// a signature by it (its issuer) is a signature the signer can make.
func (s *Signer) signs(fpr string) bool {
	for _, e := range s.entities {
		if fingerprint(e) == fpr {
			return true
		}
		for _, sub := range e.Subkeys {
			if signkey.KeyFingerprint(sub.PublicKey) == fpr {
				return true
			}
		}
	}
	return false
}

// newSigningSubkeys lists, as changes clients reject, each key of s whose
// key that signs at t (the newest signing subkey, as gpg picks: one added
// since, say, with gpg --quick-add-key) is missing from its copy in known,
// the keys the live generation is signed by, as clients were given them: a
// client whose signed-by file holds that copy refuses every update
// (NO_PUBKEY), as when a key is dropped. A key known holds no copy of is a
// key added (a rotation's first step), which clients need not have.
func (s *Signer) newSigningSubkeys(known openpgp.EntityList, t time.Time) []FieldChange {
	var out []FieldChange
	for _, e := range s.entities {
		signer, ok := e.SigningKey(t)
		i := slices.IndexFunc(known, func(k *openpgp.Entity) bool { return fingerprint(k) == fingerprint(e) })
		if !ok || i < 0 {
			continue // a key that cannot sign is refused when signing, saying why
		}
		fpr := signkey.KeyFingerprint(signer.PublicKey)
		if (&Signer{entities: known[i : i+1]}).signs(fpr) {
			continue
		}
		was := ""
		if k, ok := known[i].SigningKey(t); ok {
			was = signkey.KeyFingerprint(k.PublicKey)
		}
		out = append(out, FieldChange{Field: "signing subkey of " + fingerprint(e), From: was, To: fpr, Clients: fmt.Sprintf(
			"clients whose signed-by keyring holds key %s as the repository gave it, without its signing subkey %s, refuse every update (NO_PUBKEY); give every client the key with that subkey first (gpg --export %s > FILE, over their signed-by file), then write again with --allow-field-change",
			fingerprint(e), fpr, fingerprint(e))})
	}
	return out
}

func signConfig(t time.Time) *packet.Config { return signkey.Config(t) }

// signingKeys returns each entity's key valid for signing at t.
func (s *Signer) signingKeys(t time.Time) ([]*packet.PrivateKey, error) {
	var keys []*packet.PrivateKey
	for _, e := range s.entities {
		key, ok := e.SigningKey(t)
		if !ok {
			return nil, fmt.Errorf("%w: %s %w at %s: it %s (see 'updeb keys list'; extend its expiry or rotate to a new key)", ErrKey, fingerprint(e), signkey.ErrCannotSign, t.UTC().Format(time.RFC3339), signkey.CannotSign(e, t))
		}
		if err := signkey.HasSecret(e, key); err != nil {
			return nil, err
		}
		keys = append(keys, key.PrivateKey)
	}
	return keys, nil
}

// ClearSign returns data clearsigned (InRelease) by every key, with the
// signing time t.
func (s *Signer) ClearSign(data []byte, t time.Time) ([]byte, error) {
	keys, err := s.signingKeys(t)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	w, err := clearsign.EncodeMulti(&b, keys, signConfig(t))
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(data); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return rearmorSignature(b.Bytes())
}

// rearmorSignature rewrites the signature block of a clearsigned message with
// a CRC line and a final newline. go-crypto writes neither, and gpgv 2.2 then
// reads "-----END PGP SIGNATURE-----" as base64 whenever the signature's
// base64 has no padding (about one RSA signature in three), and apt refuses
// the InRelease. The signed text is unchanged.
func rearmorSignature(clear []byte) ([]byte, error) {
	const begin = "\n-----BEGIN PGP SIGNATURE-----"
	i := bytes.Index(clear, []byte(begin))
	if i < 0 {
		return nil, fmt.Errorf("%w: clearsigned output has no signature block", ErrKey)
	}
	block, err := armor.Decode(bytes.NewReader(clear[i+1:]))
	if err != nil {
		return nil, fmt.Errorf("%w: re-read clearsignature: %v", ErrKey, err)
	}
	var out bytes.Buffer
	out.Write(clear[:i+1])
	w, err := armor.Encode(&out, block.Type, nil)
	if err != nil {
		return nil, err
	}
	if _, err := io.Copy(w, block.Body); err != nil {
		return nil, fmt.Errorf("%w: re-read clearsignature: %v", ErrKey, err)
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return endLine(out.Bytes()), nil
}

// endLine ends armored output with a newline (go-crypto stops right after
// the closing dashes).
func endLine(b []byte) []byte {
	if len(b) > 0 && b[len(b)-1] != '\n' {
		b = append(b, '\n')
	}
	return b
}

// DetachSign returns an armored detached signature of data (Release.gpg): one
// signature packet per key, in one armored block, as gpg writes for several -u.
func (s *Signer) DetachSign(data []byte, t time.Time) ([]byte, error) {
	if _, err := s.signingKeys(t); err != nil {
		return nil, err
	}
	var sigs bytes.Buffer
	for _, e := range s.entities {
		if err := openpgp.DetachSign(&sigs, e, bytes.NewReader(data), signConfig(t)); err != nil {
			return nil, fmt.Errorf("%w: sign with %s: %v", ErrKey, fingerprint(e), err)
		}
	}
	var b bytes.Buffer
	w, err := armor.Encode(&b, openpgp.SignatureType, nil)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(sigs.Bytes()); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return endLine(b.Bytes()), nil
}

// PublicKey returns the public keys in binary form (for apt's signed-by, as
// archive-keyring.gpg) and armored (archive-keyring.asc). With several keys,
// both hold all of them: a new client then trusts either.
func (s *Signer) PublicKey() (binary, armored []byte, err error) {
	return publicKey(s.entities...)
}

// SecretKeysPublic returns the public part, in binary form, of every key in
// an armored secret key file, whether or not it could sign (weak,
// passphrase-protected, several keys in the file): what keys list shows of
// a signing key file, with its warnings.
func SecretKeysPublic(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	es, err := signkey.ReadArmoredKeys(data)
	if err != nil {
		return nil, err
	}
	bin, _, err := publicKey(es...)
	return bin, err
}

func publicKey(es ...*openpgp.Entity) (binary, armored []byte, err error) {
	var bin bytes.Buffer
	for _, e := range es {
		if err := e.Serialize(&bin); err != nil {
			return nil, nil, err
		}
	}
	var asc bytes.Buffer
	w, err := armor.Encode(&asc, openpgp.PublicKeyType, nil)
	if err != nil {
		return nil, nil, err
	}
	if _, err := w.Write(bin.Bytes()); err != nil {
		return nil, nil, err
	}
	if err := w.Close(); err != nil {
		return nil, nil, err
	}
	asc.WriteByte('\n')
	return bin.Bytes(), asc.Bytes(), nil
}

// KeyType is a signing key algorithm `updeb keys generate` makes.
type KeyType string

const (
	Ed25519 KeyType = "ed25519"
	RSA3072 KeyType = "rsa3072"
	RSA4096 KeyType = "rsa4096"
)

// ParseKeyType accepts ed25519, rsa3072 and rsa4096; rsa1024/rsa2048 and
// anything else are refused with ErrWeakKey or ErrInvalid.
func ParseKeyType(s string) (KeyType, error) {
	switch t := KeyType(strings.ToLower(s)); t {
	case Ed25519, RSA3072, RSA4096:
		return t, nil
	case "rsa1024", "rsa2048", "dsa", "rsa":
		return "", fmt.Errorf("%w: key type %q; use ed25519 (default), rsa3072 or rsa4096", ErrWeakKey, s)
	}
	return "", fmt.Errorf("%w: unknown key type %q (want ed25519, rsa3072 or rsa4096)", ErrInvalid, s)
}

// validUserID reports whether "name <email>" is a user ID as gpg makes one:
// a name that is not blank, an address LOCAL@DOMAIN (gpg's
// is_valid_mailbox: one @, neither part empty, no white space), neither
// holding ()<> or a control character (a line break would print as two
// lines of keys list, gpg --show-keys writes it escaped), in UTF-8 (a name
// typed in a Latin-1 terminal is not).
func validUserID(name, email string) bool {
	local, domain, _ := strings.Cut(email, "@")
	return strings.TrimSpace(name) != "" && local != "" && domain != "" && !strings.Contains(domain, "@") &&
		utf8.ValidString(name+email) && // OpenPGP user IDs are UTF-8 (RFC 4880 5.11)
		!strings.ContainsAny(name+email, "()<>") &&
		!strings.ContainsFunc(name, unicode.IsControl) &&
		!strings.ContainsFunc(email, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) })
}

// GeneratedKey is a new repository signing key in the three forms it is stored in.
type GeneratedKey struct {
	Fingerprint   string
	SecretArmored []byte // keep with mode 0600; ReadSigner reads it
	PublicBinary  []byte // for apt's signed-by (archive-keyring.gpg)
	PublicArmored []byte // archive-keyring.asc
}

// GenerateKey makes a signing-only OpenPGP v4 key (no encryption subkey: a
// repository key only signs) for "name <email>", created at now, drawing
// randomness from rand.
func GenerateKey(name, email string, kind KeyType, now time.Time, rand io.Reader) (*GeneratedKey, error) {
	cfg := &packet.Config{
		Rand:        rand,
		Time:        func() time.Time { return now },
		DefaultHash: crypto.SHA512,
	}
	switch kind {
	case Ed25519:
		cfg.Algorithm, cfg.Curve = packet.PubKeyAlgoEdDSA, packet.Curve25519
	case RSA3072:
		cfg.Algorithm, cfg.RSABits = packet.PubKeyAlgoRSA, 3072
	case RSA4096:
		cfg.Algorithm, cfg.RSABits = packet.PubKeyAlgoRSA, 4096
	default:
		if _, err := ParseKeyType(string(kind)); err != nil {
			return nil, err
		}
	}
	if !validUserID(name, email) {
		return nil, fmt.Errorf("%w: key user ID needs a name and an email address LOCAL@DOMAIN in UTF-8, without ()<>, spaces in the address or control characters (got %q, %q)", ErrInvalid, name, email)
	}
	e, err := openpgp.NewEntity(name, "", email, cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: generate %s key: %v", ErrKey, kind, err)
	}
	e.Subkeys = nil
	var sec bytes.Buffer
	w, err := armor.Encode(&sec, openpgp.PrivateKeyType, nil)
	if err != nil {
		return nil, err
	}
	if err := e.SerializePrivate(w, cfg); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	sec.WriteByte('\n')
	bin, asc, err := publicKey(e)
	if err != nil {
		return nil, err
	}
	return &GeneratedKey{Fingerprint: fingerprint(e), SecretArmored: sec.Bytes(), PublicBinary: bin, PublicArmored: asc}, nil
}
