// Package signkey loads the OpenPGP secret keys updeb signs with (the apt
// repository's Release files, the provenance records of builds) and holds the
// settings that make its signatures deterministic. A key file is the armored
// secret key `updeb keys generate` writes: one key, not passphrase-protected
// (updeb signs unattended), Ed25519 or RSA of MinRSABits or more, and so
// is each signing subkey it has.
//
// Signatures use SHA-512, carry the time the caller gives (never the clock),
// and leave out the random salt notation go-crypto adds by default, so the
// same data, key and time give the same bytes: Ed25519 and RSA PKCS#1 v1.5
// signatures are deterministic. (An OpenPGP v6 key salts every signature, as
// its standard requires; its signatures verify but differ from run to run.)
package signkey

import (
	"bytes"
	"crypto"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
)

// ErrWeakKey is wrapped when a key's algorithm or size is below what apt will
// keep accepting: Ed25519, or RSA of 3072 bits or more.
var ErrWeakKey = errors.New("signing key too weak")

// ErrKey is wrapped by every other problem with a signing key file.
var ErrKey = errors.New("unusable signing key")

// ErrCannotSign is wrapped, with ErrKey, when the file holds a usable secret
// key that cannot sign at the time asked: expired, revoked, not yet valid.
var ErrCannotSign = errors.New("cannot sign")

// MinRSABits is the smallest RSA key updeb signs with or generates.
const MinRSABits = 3072

// MaxFileSize bounds a secret key file: an armored RSA-4096 secret key with
// its self-signatures is about 7 KB.
const MaxFileSize = 1 << 20

// Key is one loaded secret key.
type Key struct {
	Entity *openpgp.Entity
}

// Read reads an armored OpenPGP secret key (as `updeb keys generate` writes
// it). name is used in error messages. Passphrase-protected keys are refused:
// updeb signs unattended.
func Read(r io.Reader, name string) (*Key, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrKey, name, err)
	}
	binary := len(data) > 0 && data[0]&0x80 != 0 // an OpenPGP packet's first byte has its top bit set; armor is text
	list, err := ReadArmoredKeys(data)
	if err != nil && binary && PublicOnly(data) {
		// apt's keyring file, which the advice below would overwrite with
		// the secret key.
		return nil, fmt.Errorf("%w: %s: a public key (binary, the form apt's signed-by reads); the secret key is needed to sign: name PREFIX.secret.asc, not PREFIX.gpg", ErrKey, name)
	}
	if err != nil && binary {
		return nil, fmt.Errorf("%w: %s: a binary OpenPGP key (gpg --export-secret-keys without --armor); updeb reads the armored form: gpg --armor --export-secret-keys FINGERPRINT > %s", ErrKey, name, name)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrKey, name, err)
	}
	if len(list) != 1 {
		return nil, fmt.Errorf("%w: %s: expected one key, found %d (to sign with several, as in a key rotation, give each its own file: --key FILE for each, or repo: keys:)", ErrKey, name, len(list))
	}
	e := list[0]
	if e.PrivateKey == nil {
		return nil, fmt.Errorf("%w: %s: %s is a public key; the secret key is needed to sign", ErrKey, name, Fingerprint(e))
	}
	// gpg --export-secret-subkeys writes a primary key without its secret,
	// not protected, and the subkeys protected; sqv (newer apt's verifier)
	// refuses a signature by a weak subkey ("Policy rejected asymmetric
	// algorithm") as by a weak key.
	for _, k := range keysThatSign(e) {
		which := describe(e, k)
		if k.Encrypted {
			return nil, fmt.Errorf("%w: %s: %s is protected by a passphrase; updeb signs unattended and needs an unprotected key file (mode 0600)", ErrKey, name, which)
		}
		if k != e.PrivateKey {
			if err := checkStrength(&k.PublicKey); err != nil {
				return nil, fmt.Errorf("%s: %s: %w", name, which, err)
			}
		}
	}
	if err := checkStrength(e.PrimaryKey); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &Key{Entity: e}, nil
}

// keysThatSign are e's primary key and each signing subkey whose secret e
// holds, not revoked: the one go-crypto picks signs.
func keysThatSign(e *openpgp.Entity) []*packet.PrivateKey {
	keys := []*packet.PrivateKey{e.PrivateKey}
	for _, sk := range e.Subkeys {
		if sk.Sig != nil && sk.Sig.FlagSign && sk.PrivateKey != nil && len(sk.Revocations) == 0 {
			keys = append(keys, sk.PrivateKey)
		}
	}
	return keys
}

// describe names k, e's primary key or one of its subkeys, for messages.
func describe(e *openpgp.Entity, k *packet.PrivateKey) string {
	if k == e.PrivateKey {
		return "key " + Fingerprint(e)
	}
	return "signing subkey " + KeyFingerprint(&k.PublicKey) + " of key " + Fingerprint(e)
}

// AptVerifiable returns an ErrKey error when the key, or one of its signing
// subkeys, is of a kind that gpgv of GnuPG 2.2, which apt 2.6 (Debian 12)
// verifies Release files with, cannot check: an OpenPGP key of another
// version than 4 ("packet(2) with unknown version 6") or of RFC 9580's
// Ed25519 and Ed448 algorithms ("Invalid public key algorithm"). apt then
// refuses every signature it makes: "is not signed". nil otherwise. For
// the repository's keys; updeb verifies provenance records itself.
func (k *Key) AptVerifiable(name string) error {
	for _, pk := range keysThatSign(k.Entity) {
		why := ""
		switch {
		case pk.Version != 4:
			why = fmt.Sprintf("an OpenPGP v%d key", pk.Version)
		case pk.PubKeyAlgo == packet.PubKeyAlgoEd25519 || pk.PubKeyAlgo == packet.PubKeyAlgoEd448:
			why = fmt.Sprintf("of RFC 9580's algorithm %d", pk.PubKeyAlgo)
		default:
			continue
		}
		return fmt.Errorf("%w: %s: %s is %s, which gpgv of GnuPG 2.2 (apt 2.6, Debian 12) cannot check: apt would refuse every signature (\"is not signed\"); make a v4 Ed25519 key with 'updeb keys generate' (or gpg)", ErrKey, name, describe(k.Entity, pk), why)
	}
	return nil
}

// ReadArmoredKeys reads the keys of every armored secret key block in
// data, as openpgp.ReadArmoredKeyRing reads one block's: the file that
// cat a.secret.asc b.secret.asc writes holds two blocks, and
// ReadArmoredKeyRing would return the first block's key only. A public
// key block after a secret one (the same key's, exported beside it) is
// left unread, as before; data without a secret key block is read as
// ReadArmoredKeyRing reads it, which says what it holds instead.
func ReadArmoredKeys(data []byte) (openpgp.EntityList, error) {
	var starts []int
	for i := 0; i < len(data); {
		line := data[i:]
		if bytes.HasPrefix(line, []byte("-----BEGIN PGP PRIVATE KEY BLOCK-----")) {
			starts = append(starts, i)
		}
		n := bytes.IndexByte(line, '\n')
		if n < 0 {
			break
		}
		i += n + 1
	}
	if len(starts) == 0 {
		starts = []int{0} // no secret key block: ReadArmoredKeyRing says what the data is
	}
	var all openpgp.EntityList
	for i, start := range starts {
		end := len(data)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		list, err := openpgp.ReadArmoredKeyRing(bytes.NewReader(data[start:end]))
		if err != nil {
			return nil, err
		}
		all = append(all, list...)
	}
	return all, nil
}

// Base64Key reports whether s is a key in base64, armored or binary: the
// one line a CI secret holds when a key is kept in a masked variable
// (base64 -w0 repo.secret.asc), given where a key file's path goes.
func Base64Key(s string) bool {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b) == 0 {
		return false
	}
	if bytes.HasPrefix(b, []byte("-----BEGIN PGP ")) {
		return true
	}
	_, err = openpgp.ReadKeyRing(bytes.NewReader(b))
	return err == nil
}

// PublicOnly reports whether data holds OpenPGP keys, armored or binary,
// and no secret key: a public key file (PREFIX.asc, PREFIX.gpg) given where
// a secret key goes, which nobody need keep private.
func PublicOnly(data []byte) bool {
	list, err := openpgp.ReadArmoredKeyRing(bytes.NewReader(data))
	if err != nil {
		list, err = openpgp.ReadKeyRing(bytes.NewReader(data))
	}
	for _, e := range list {
		if e.PrivateKey != nil {
			return false
		}
	}
	return err == nil && len(list) > 0
}

// Fingerprint returns e's primary key fingerprint in upper-case hex.
func Fingerprint(e *openpgp.Entity) string { return KeyFingerprint(e.PrimaryKey) }

// KeyFingerprint returns a primary key's or a subkey's fingerprint in
// upper-case hex.
func KeyFingerprint(pk *packet.PublicKey) string {
	return strings.ToUpper(fmt.Sprintf("%x", pk.Fingerprint))
}

// Fingerprint returns the key's primary fingerprint in upper-case hex.
func (k *Key) Fingerprint() string { return Fingerprint(k.Entity) }

func checkStrength(pk *packet.PublicKey) error {
	switch pk.PubKeyAlgo {
	case packet.PubKeyAlgoEdDSA, packet.PubKeyAlgoEd25519, packet.PubKeyAlgoEd448:
		return nil
	case packet.PubKeyAlgoRSA, packet.PubKeyAlgoRSASignOnly:
		bits, err := pk.BitLength()
		if err != nil {
			return fmt.Errorf("%w: %v", ErrKey, err)
		}
		if bits < MinRSABits {
			return fmt.Errorf("%w: RSA key of %d bits; apt needs %d or more (or use Ed25519)", ErrWeakKey, bits, MinRSABits)
		}
		return nil
	}
	return fmt.Errorf("%w: public key algorithm %d; use Ed25519 or RSA %d+", ErrWeakKey, pk.PubKeyAlgo, MinRSABits)
}

// WeakBinding returns an ErrWeakKey error, which the repository warns
// with, when the self-signature of e's primary key, or the binding
// signature of k (e's key that signs, a subkey) or its back signature, is
// made with SHA-1 (or a weaker digest): gpgv still accepts such a key, but
// sqv, which newer apt verifies with in place of gpgv, does not, and refuses
// every signature the key makes. nil otherwise.
func WeakBinding(e *openpgp.Entity, k openpgp.Key) error {
	sigs := []*packet.Signature{k.SelfSignature}
	if self, _ := e.PrimarySelfSignature(); self != nil {
		sigs = append(sigs, self)
	}
	if k.SelfSignature != nil {
		sigs = append(sigs, k.SelfSignature.EmbeddedSignature)
	}
	for _, sig := range sigs {
		if sig != nil && (sig.Hash == crypto.SHA1 || sig.Hash == crypto.MD5 || sig.Hash == crypto.RIPEMD160) {
			return fmt.Errorf("%w: key %s is bound by a SHA-1 self-signature: gpgv accepts its signatures, sqv (newer apt's verifier in place of gpgv) refuses every one; "+
				"make new self-signatures: gpg --cert-digest-algo SHA512 --quick-set-expire %s EXPIRY (and again with '*' for its signing subkeys), then export the secret key again", ErrWeakKey, Fingerprint(e), Fingerprint(e))
		}
	}
	return nil
}

// Config is the go-crypto configuration of a deterministic signature made
// at t: SHA-512, creation time t, no salt notation.
func Config(t time.Time) *packet.Config {
	salt := false
	return &packet.Config{
		DefaultHash:                           crypto.SHA512,
		Time:                                  func() time.Time { return t },
		NonDeterministicSignaturesViaNotation: &salt,
	}
}

// DSSESigner signs DSSE envelopes (package dsse) with one key: each
// signature is a binary detached OpenPGP signature over the PAE bytes, and
// KeyID is the key's primary fingerprint.
type DSSESigner struct {
	key   *Key
	at    time.Time
	keyID uint64 // the key or subkey that signs: the one that can sign now
}

// DSSE returns the key's envelope signer for a build dated t (its
// SOURCE_DATE_EPOCH). Signatures are made by the key or subkey that can sign
// at now (the newest signing subkey, as gpg picks: never one that has since
// expired or been revoked, which a signature dated t would still find valid
// then), at t, or at that key's creation, or that of the self-signature or
// binding that makes it valid now, when it is younger than t (a signature
// older than its key would be refused by every verifier), so that
// their bytes depend on the data, the key and t only, not on the clock's
// second. A key that can no longer sign at now (expired, revoked) is refused.
func (k *Key) DSSE(t, now time.Time) (*DSSESigner, error) {
	if why := CannotSign(k.Entity, now); why != "" {
		return nil, fmt.Errorf("%w: %s %w at %s: it %s (see 'updeb keys list')", ErrKey, k.Fingerprint(), ErrCannotSign, now.UTC().Format(time.RFC3339), why)
	}
	signer, _ := k.Entity.SigningKey(now)
	if err := HasSecret(k.Entity, signer); err != nil {
		return nil, err
	}
	at := t.Truncate(time.Second) // OpenPGP times are whole seconds
	// Nor older than the self-signature, or subkey binding, that makes the
	// key valid now: extending a key's expiry (gpg --quick-set-expire)
	// replaces its self-signatures, so a key kept alive by yearly extensions
	// has none from before the last one; go-crypto and sqv find no valid
	// key at an older time.
	valid := []time.Time{signer.PublicKey.CreationTime}
	if self, _ := k.Entity.PrimarySelfSignature(); self != nil {
		valid = append(valid, self.CreationTime)
	}
	if signer.SelfSignature != nil {
		valid = append(valid, signer.SelfSignature.CreationTime)
	}
	if latest := slices.MaxFunc(valid, time.Time.Compare); latest.After(at) {
		at = latest
	}
	if _, ok := k.Entity.SigningKeyById(at, signer.PublicKey.KeyId); !ok {
		return nil, fmt.Errorf("%w: %s has no signing key valid at or after %s (%w)", ErrKey, k.Fingerprint(), t.UTC().Format(time.RFC3339), ErrCannotSign)
	}
	return &DSSESigner{key: k, at: at, keyID: signer.PublicKey.KeyId}, nil
}

// HasSecret returns an ErrKey error when the file e was read from holds no
// secret for signer, e's key that signs (the newest signing subkey, as gpg
// picks): a stub, as gpg exports a key whose secret is on a smartcard or
// was deleted (gpg --delete-secret-keys SUBKEY!), or none. nil otherwise.
func HasSecret(e *openpgp.Entity, signer openpgp.Key) error {
	if signer.PrivateKey != nil && !signer.PrivateKey.Dummy() {
		return nil
	}
	which, fix := "its signing key", "export the key with its secret"
	if signer.PublicKey != e.PrimaryKey {
		which, fix = "its signing subkey "+KeyFingerprint(signer.PublicKey)+" (the newest, which signs, as gpg picks)", "export the key with that secret, or revoke that subkey"
	}
	return fmt.Errorf("%w: %s: the file holds no secret for %s, only a stub, as gpg exports for a key on a smartcard or whose secret was deleted: %s", ErrKey, Fingerprint(e), which, fix)
}

// CannotSign says why e has no key that can sign at t, for a message: "was
// revoked on DATE", "expired on DATE" (the primary key), "expired on DATE
// (its signing subkeys)" or "was revoked on DATE (its signing subkeys)"
// (the one that lasted longest), "is valid only from DATE" (a key made
// after t: a clock behind?), or "has no signing key"; "" when it can sign.
func CannotSign(e *openpgp.Entity, t time.Time) string {
	if _, ok := e.SigningKey(t); ok {
		return ""
	}
	day := func(t time.Time) string { return t.UTC().Format(time.DateOnly) }
	for _, r := range e.Revocations {
		return "was revoked on " + day(r.CreationTime)
	}
	if e.PrimaryKey.CreationTime.After(t) {
		return "is valid only from " + day(e.PrimaryKey.CreationTime) + " (is the clock right?)"
	}
	if self, _ := e.PrimarySelfSignature(); self != nil {
		if exp, ok := expiry(e.PrimaryKey.CreationTime, self); ok && !t.Before(exp) {
			return "expired on " + day(exp)
		}
	}
	// Every signing subkey ended (expired or revoked) or starts later: name
	// the one that lasted longest.
	var (
		last  time.Time
		why   string
		later time.Time
	)
	for _, sk := range e.Subkeys {
		if sk.Sig == nil || !sk.Sig.FlagSign {
			continue
		}
		if sk.PublicKey.CreationTime.After(t) {
			if later.IsZero() || sk.PublicKey.CreationTime.Before(later) {
				later = sk.PublicKey.CreationTime
			}
			continue
		}
		end, ok := expiry(sk.PublicKey.CreationTime, sk.Sig)
		what := "expired on "
		for _, r := range sk.Revocations {
			if !ok || r.CreationTime.Before(end) {
				end, ok, what = r.CreationTime, true, "was revoked on "
			}
		}
		if !ok {
			last, why = time.Time{}, "" // one that never ends: something else is wrong with it
			break
		}
		if !t.Before(end) && end.After(last) {
			last, why = end, what+day(end)+" (its signing subkeys)"
		}
	}
	switch {
	case why != "":
		return why
	case !later.IsZero():
		return "has a signing subkey valid only from " + day(later) + " (is the clock right?)"
	}
	return "has no key that can sign then (expired, revoked or without a signing key)"
}

// expiry is when a key created at created expires by its self-signature
// (or binding signature) sig; ok is false when it does not expire.
func expiry(created time.Time, sig *packet.Signature) (end time.Time, ok bool) {
	if sig == nil || sig.KeyLifetimeSecs == nil || *sig.KeyLifetimeSecs == 0 {
		return time.Time{}, false
	}
	return created.Add(time.Duration(*sig.KeyLifetimeSecs) * time.Second), true
}

// Stated is when e's holder last stated anything of it: its newest
// self-signature, subkey binding signature or revocation. Of two copies of
// one key (one exported before gpg --quick-set-expire, one after), the one
// stated later is the key as it is now, with its new expiry.
func Stated(e *openpgp.Entity) time.Time {
	var last time.Time
	see := func(sigs ...*packet.Signature) {
		for _, s := range sigs {
			if s != nil && s.CreationTime.After(last) {
				last = s.CreationTime
			}
		}
	}
	see(e.Revocations...)
	for _, id := range e.Identities {
		see(id.SelfSignature)
		see(id.Revocations...)
	}
	for _, sk := range e.Subkeys {
		see(sk.Sig)
		see(sk.Revocations...)
	}
	return last
}

// ExpiresSoon is how long before the key that signs expires every write of
// the repository warns and the report asks for action: the time to extend
// it and give every client its new public key, or to rotate.
const ExpiresSoon = 30 * 24 * time.Hour

// Renew says what to do about a key that expires, for messages.
const Renew = "extend its expiry (gpg --quick-set-expire FINGERPRINT 1y, and again with '*' for its signing subkeys), export the secret key again and give every client the new archive-keyring.gpg, or rotate to a new key (docs/operations.md, Key rotation)"

// SigningEnd is when the signatures e makes at t stop verifying: gpgv
// reports them as EXPKEYSIG, and apt refuses them, from the expiry of e's
// primary key or of the subkey that signs at t (the newest signing subkey,
// as gpg picks), whichever comes first. key is the fingerprint of the key
// that signs (the subkey's, or the primary's). ok is false when e cannot
// sign at t, or when neither key expires.
func SigningEnd(e *openpgp.Entity, t time.Time) (end time.Time, key string, ok bool) {
	signer, can := e.SigningKey(t)
	if !can {
		return time.Time{}, "", false
	}
	self, _ := e.PrimarySelfSignature()
	end, ok = expiry(e.PrimaryKey.CreationTime, self)
	if signer.PublicKey != e.PrimaryKey {
		if sub, subOK := expiry(signer.PublicKey.CreationTime, signer.SelfSignature); subOK && (!ok || sub.Before(end)) {
			end, ok = sub, true
		}
	}
	return end, KeyFingerprint(signer.PublicKey), ok
}

// KeyID is the key's primary fingerprint, upper-case hex.
func (s *DSSESigner) KeyID() string { return s.key.Fingerprint() }

// Time is the creation time every signature of s carries.
func (s *DSSESigner) Time() time.Time { return s.at }

// Sign returns a binary detached OpenPGP signature (type 0x00, SHA-512) of pae.
func (s *DSSESigner) Sign(pae []byte) ([]byte, error) {
	var b bytes.Buffer
	cfg := Config(s.at)
	cfg.SigningKeyId = s.keyID
	if err := openpgp.DetachSign(&b, s.key.Entity, bytes.NewReader(pae), cfg); err != nil {
		return nil, fmt.Errorf("%w: sign with %s: %v", ErrKey, s.KeyID(), err)
	}
	return b.Bytes(), nil
}
