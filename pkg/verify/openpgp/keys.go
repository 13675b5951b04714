package openpgp

import (
	"crypto"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp/packet"
	openpgp "github.com/ProtonMail/go-crypto/openpgp/v2"

	"github.com/updeb/updeb/pkg/termtext"
)

// KeyInfo describes one primary key or subkey, for people (updeb keys list).
type KeyInfo struct {
	Fingerprint  string     `json:"fingerprint"`
	KeyID        string     `json:"key_id"`
	Algorithm    string     `json:"algorithm"` // "RSA 4096", "Ed25519", "DSA 1024", "ECDSA nistp256"
	Created      time.Time  `json:"created"`
	Expires      *time.Time `json:"expires,omitempty"`
	Revoked      *time.Time `json:"revoked,omitempty"`
	Capabilities []string   `json:"capabilities"` // certify, sign, encrypt, auth
	Warnings     []string   `json:"warnings,omitempty"`
}

// PrimaryKeyInfo is a primary key with its user IDs and subkeys.
type PrimaryKeyInfo struct {
	KeyInfo
	UserIDs []string  `json:"user_ids"` // non-printing characters escaped (\x1b, \n), as in Result.UserID
	Subkeys []KeyInfo `json:"subkeys"`
	// CanSign says whether some key of this certificate could make a signature
	// that the policy accepts at the time given to List.
	CanSign bool `json:"can_sign"`
}

// List describes every key of the keyring as of now.
func (kr *Keyring) List(now time.Time) []PrimaryKeyInfo {
	out := make([]PrimaryKeyInfo, 0, len(kr.entities))
	for _, e := range kr.entities {
		out = append(out, describeEntity(e, now))
	}
	return out
}

func describeEntity(e *openpgp.Entity, now time.Time) PrimaryKeyInfo {
	pk := e.PrimaryKey
	self := latestSelf(e)
	p := PrimaryKeyInfo{KeyInfo: describeKey(pk, self, e.Revocations, now)}
	if self != nil {
		p.Capabilities = capabilityList(primaryFlags(e, self, now))
	}
	for name := range e.Identities {
		p.UserIDs = append(p.UserIDs, termtext.Escape(name))
	}
	slices.Sort(p.UserIDs)
	if self == nil {
		p.Warnings = append(p.Warnings, "no valid self-signature: the key cannot be used")
	}
	signers := 0
	if validAt(signingKey{entity: e, pub: pk}, now) == nil && weakKey(pk) == "" {
		signers++
	}
	for i := range e.Subkeys {
		sk := &e.Subkeys[i]
		var bind *packet.Signature
		for _, b := range sk.Bindings {
			if *b.Valid && (bind == nil || b.Packet.CreationTime.After(bind.CreationTime)) {
				bind = b.Packet
			}
		}
		info := describeKey(sk.PublicKey, bind, sk.Revocations, now)
		if bind == nil {
			info.Warnings = append(info.Warnings, "no valid binding signature (or missing cross-signature): the subkey cannot be used")
		}
		if validAt(signingKey{entity: e, pub: sk.PublicKey, subkey: sk}, now) == nil && weakKey(sk.PublicKey) == "" && weakKey(pk) == "" {
			signers++
		}
		p.Subkeys = append(p.Subkeys, info)
	}
	p.CanSign = signers > 0
	if !p.CanSign {
		p.Warnings = append(p.Warnings, "no key of this certificate can make an acceptable signature now")
	}
	return p
}

// latestSelf is the newest valid self-signature of the primary key (direct or
// user ID), ignoring expiry, for displaying capabilities and expiry: the
// primary user ID's, else a direct-key signature; a v6 key's direct-key
// signature first, where RFC 9580 (5.2.3.10) puts its capabilities and
// expiry (as validAt reads them, through go-crypto).
func latestSelf(e *openpgp.Entity) *packet.Signature {
	var best *packet.Signature
	consider := func(sigs []*packet.VerifiableSignature) {
		for _, s := range sigs {
			if *s.Valid && (best == nil || s.Packet.CreationTime.After(best.CreationTime)) {
				best = s.Packet
			}
		}
	}
	var user []*packet.VerifiableSignature
	if sig, id := e.PrimaryIdentity(time.Time{}, nil); sig != nil {
		user = id.SelfCertifications
	}
	order := [][]*packet.VerifiableSignature{user, e.DirectSignatures}
	if e.PrimaryKey.Version == 6 {
		slices.Reverse(order)
	}
	for _, sigs := range order {
		if consider(sigs); best != nil {
			break
		}
	}
	return best
}

func describeKey(pk *packet.PublicKey, self *packet.Signature, revs []*packet.VerifiableSignature, now time.Time) KeyInfo {
	k := KeyInfo{
		Fingerprint: fingerprint(pk),
		KeyID:       fmt.Sprintf("%016X", pk.KeyId),
		Algorithm:   algorithmName(pk),
		Created:     pk.CreationTime.UTC(),
	}
	if self != nil {
		k.Capabilities = capabilityList(self)
		if self.KeyLifetimeSecs != nil && *self.KeyLifetimeSecs != 0 {
			exp := pk.CreationTime.Add(time.Duration(*self.KeyLifetimeSecs) * time.Second).UTC()
			k.Expires = &exp
			if !exp.After(now) {
				k.Warnings = append(k.Warnings, "expired on "+stamp(exp))
			}
		}
		if self.Hash == crypto.SHA1 {
			k.Warnings = append(k.Warnings, "self-signature uses SHA-1 (gpgv accepts it; stricter verifiers such as sqv may not)")
		}
	}
	for _, r := range revs {
		if *r.Valid {
			t := r.Packet.CreationTime.UTC()
			k.Revoked = &t
			k.Warnings = append(k.Warnings, "revoked"+revocationNote(pk, []*packet.VerifiableSignature{r}))
			break
		}
	}
	if w := weakKey(pk); w != "" {
		k.Warnings = append(k.Warnings, w+" is too weak: signatures by it are refused")
	} else if bits, err := pk.BitLength(); err == nil && isRSA(pk) && bits < 3072 {
		k.Warnings = append(k.Warnings, fmt.Sprintf("RSA %d bits: accepted, but below the 3072 bits newer verifiers will require", bits))
	}
	return k
}

func isRSA(pk *packet.PublicKey) bool {
	return pk.PubKeyAlgo == packet.PubKeyAlgoRSA || pk.PubKeyAlgo == packet.PubKeyAlgoRSASignOnly || pk.PubKeyAlgo == packet.PubKeyAlgoRSAEncryptOnly
}

// algorithmName says what a key is, the way people say it: "RSA 4096", "Ed25519".
func algorithmName(pk *packet.PublicKey) string {
	bits, _ := pk.BitLength()
	switch pk.PubKeyAlgo {
	case packet.PubKeyAlgoRSA, packet.PubKeyAlgoRSASignOnly, packet.PubKeyAlgoRSAEncryptOnly:
		return fmt.Sprintf("RSA %d", bits)
	case packet.PubKeyAlgoDSA:
		return fmt.Sprintf("DSA %d", bits)
	case packet.PubKeyAlgoElGamal:
		return fmt.Sprintf("ElGamal %d", bits)
	case packet.PubKeyAlgoEd25519:
		return "Ed25519"
	case packet.PubKeyAlgoEd448:
		return "Ed448"
	case packet.PubKeyAlgoX25519:
		return "X25519"
	case packet.PubKeyAlgoX448:
		return "X448"
	case packet.PubKeyAlgoEdDSA, packet.PubKeyAlgoECDSA, packet.PubKeyAlgoECDH:
		curve, err := pk.Curve()
		if err != nil {
			curve = "unknown curve"
		}
		switch {
		case pk.PubKeyAlgo == packet.PubKeyAlgoEdDSA && curve == packet.Curve25519:
			return "Ed25519"
		case pk.PubKeyAlgo == packet.PubKeyAlgoECDH && curve == packet.Curve25519:
			return "Cv25519"
		case pk.PubKeyAlgo == packet.PubKeyAlgoEdDSA:
			return "EdDSA " + string(curve)
		case pk.PubKeyAlgo == packet.PubKeyAlgoECDH:
			return "ECDH " + string(curve)
		}
		return "ECDSA " + string(curve)
	}
	return fmt.Sprintf("algorithm %d", pk.PubKeyAlgo)
}

func capabilityList(s *packet.Signature) []string {
	if s == nil || !s.FlagsValid {
		return []string{}
	}
	caps := []string{}
	if s.FlagCertify {
		caps = append(caps, "certify")
	}
	if s.FlagSign {
		caps = append(caps, "sign")
	}
	if s.FlagEncryptCommunications || s.FlagEncryptStorage {
		caps = append(caps, "encrypt")
	}
	if s.FlagAuthenticate {
		caps = append(caps, "auth")
	}
	return caps
}

// capabilities is capabilityList for messages: "[certify]" or "none declared".
func capabilities(s *packet.Signature) string {
	c := capabilityList(s)
	if len(c) == 0 {
		return "none declared"
	}
	return "[" + strings.Join(c, ",") + "]"
}
