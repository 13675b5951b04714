package openpgp

import (
	"bytes"
	"errors"
	"slices"

	"github.com/ProtonMail/go-crypto/openpgp/packet"
	openpgp "github.com/ProtonMail/go-crypto/openpgp/v2"
)

// designatedRevokers returns the fingerprints of the keys that e's
// self-signatures (direct-key or user ID) name as its designated revokers
// (RFC 4880 5.2.3.15, RFC 9580 5.2.3.23: a "revocation key" subpacket in
// the hashed area, class bit 0x80 set) in the self-signatures settle
// found valid.
func designatedRevokers(e *openpgp.Entity) [][]byte {
	var out [][]byte
	add := func(sigs []*packet.VerifiableSignature) {
		for _, s := range sigs {
			if s.Valid == nil || !*s.Valid {
				continue
			}
			out = append(out, revocationKeys(s.Packet)...)
		}
	}
	add(e.DirectSignatures)
	for _, id := range e.Identities {
		add(id.SelfCertifications)
	}
	return out
}

// revocationKeys reads the fingerprints of s's hashed revocation key
// subpackets (type 12: class, algorithm, fingerprint); go-crypto parses
// them but keeps them to itself.
func revocationKeys(s *packet.Signature) [][]byte {
	var b bytes.Buffer
	if s.Serialize(&b) != nil {
		return nil
	}
	hashed, _, ok := subpacketAreas(b.Bytes())
	if !ok {
		return nil
	}
	var out [][]byte
	for len(hashed) > 0 {
		body, rest, ok := nextSubpacket(hashed)
		if !ok {
			break
		}
		hashed = rest
		if body[0]&0x7f == 12 && len(body) >= 3+20 && body[1]&0x80 != 0 {
			out = append(out, bytes.Clone(body[3:]))
		}
	}
	return out
}

// issuedBy reports whether s names pk as its issuer: by fingerprint, or
// by key ID where it names none.
func issuedBy(s *packet.Signature, pk *packet.PublicKey) bool {
	if s.IssuerFingerprint != nil {
		return bytes.Equal(pk.Fingerprint, s.IssuerFingerprint)
	}
	return s.IssuerKeyId != nil && pk.KeyId == *s.IssuerKeyId
}

// settleDesignatedRevocations counts each revocation of a key that its
// designated revoker made, as gpg does (gpgv says REVKEYSIG, which apt
// refuses, where the revoker's key is in the keyring): settle marked it
// invalid, for the key itself did not make it. It counts when a valid
// self-signature of the key names the revoker, and the revoker's primary
// key, held in the keyring, verifies it over the key. Without the
// revoker's key, it cannot be checked and does not count, as in gpgv.
// Like the key's own revocation, one with reason "superseded" or
// "retired" counts from its creation time, any other as of always.
func settleDesignatedRevocations(el []*openpgp.Entity) {
	primaries := map[string]*packet.PublicKey{}
	for _, e := range el {
		primaries[string(e.PrimaryKey.Fingerprint)] = e.PrimaryKey
	}
	for _, e := range el {
		// Each revoker once, however many self-signatures name it: a
		// hostile key repeating it would otherwise have every revocation
		// verified as many times.
		var revokers []*packet.PublicKey
		for _, f := range designatedRevokers(e) {
			if pk := primaries[string(f)]; pk != nil && pk != e.PrimaryKey && !slices.Contains(revokers, pk) {
				revokers = append(revokers, pk)
			}
		}
		for _, r := range e.Revocations {
			if r.Valid != nil && *r.Valid {
				continue
			}
			for _, pk := range revokers {
				if !issuedBy(r.Packet, pk) {
					continue
				}
				ok := verifyDesignatedRevocation(pk, e.PrimaryKey, r.Packet) == nil
				r.Valid = &ok
				if ok {
					break
				}
			}
		}
	}
}

// verifyDesignatedRevocation checks r, a key revocation of key made by
// revoker, under the rules of the key's own signatures (settle's).
func verifyDesignatedRevocation(revoker, key *packet.PublicKey, r *packet.Signature) error {
	if err := acceptableCertHash(r); err != nil {
		return err
	}
	if criticalProblem(r) != "" {
		return errors.New("critical notation or subpacket")
	}
	h, err := r.PrepareVerify()
	if err != nil {
		return err
	}
	if err := key.SerializeForHash(h); err != nil {
		return err
	}
	return revoker.VerifySignature(h, r)
}
