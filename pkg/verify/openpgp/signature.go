package openpgp

import (
	"bytes"
	"crypto"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/clearsign"
	pgperrors "github.com/ProtonMail/go-crypto/openpgp/errors"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	openpgp "github.com/ProtonMail/go-crypto/openpgp/v2"

	"github.com/updeb/updeb/pkg/digest"
	"github.com/updeb/updeb/pkg/plural"
	"github.com/updeb/updeb/pkg/termtext"
)

// ClockSkew is how far in the future (after Policy.Now) a signature's creation
// time may lie: signers' clocks drift a little; more than this is refused.
const ClockSkew = 5 * time.Minute

// Size caps: signatures and clearsigned checksum lists are small; anything
// bigger is not what we are looking for.
const (
	maxSignatureSize   = 1 << 20
	maxClearsignedSize = 16 << 20
)

// ErrSignature is wrapped by every refusal: the signature does not count.
var ErrSignature = errors.New("verify: signature refused")

// ErrPolicy is returned for an unusable Policy (a malformed allow-list entry,
// no clock); it is the caller's mistake, not a refusal.
var ErrPolicy = errors.New("verify: bad policy")

// Policy is what a signature must satisfy besides cryptographic validity.
type Policy struct {
	// Signers is the allow-list of primary key fingerprints (hex, 40 or 64
	// digits; spaces and a 0x prefix are ignored). Empty means any key in the
	// keyring.
	Signers []string
	// Now is the current time; required.
	Now time.Time
}

// Result describes the signature that counted.
type Result struct {
	PrimaryFingerprint    string    // primary key of the signer (uppercase hex)
	SigningKeyFingerprint string    // the key that made the signature: the primary or a subkey
	UserID                string    // the signer's primary user ID, for people (non-printing characters escaped: \x1b, \n)
	Created               time.Time // the signature's creation time
	Hash                  string    // the signature's digest algorithm, e.g. "SHA-256"
	Warnings              []string  // other signatures' refusals, later expiry or revocation of the key
	// Size and Digests (sha256, sha512) of the data, computed in the same pass
	// that verified the signature.
	Size    int64
	Digests digest.Set
}

// Reason says why a signature was refused; callers may branch on it.
type Reason string

const (
	ReasonMalformed        Reason = "malformed"          // not an OpenPGP signature, or a damaged one
	ReasonNoSignature      Reason = "no-signature"       // no signature packet at all
	ReasonUnsupported      Reason = "unsupported"        // signature version, type or algorithm we do not handle
	ReasonUnknownSigner    Reason = "unknown-signer"     // the issuer is not in the keyring
	ReasonNotAllowed       Reason = "signer-not-allowed" // the issuer's primary key is not on the allow-list
	ReasonBadSignature     Reason = "bad-signature"      // does not verify over the data
	ReasonWeakHash         Reason = "weak-digest"        // MD5, SHA-1, RIPEMD-160
	ReasonWeakKey          Reason = "weak-key"           // DSA, RSA < 2048
	ReasonNotSigningKey    Reason = "not-a-signing-key"  // the key lacks the sign capability
	ReasonKeyExpired       Reason = "key-expired"        // expired (or not yet created, or without a valid self-signature) at signing time
	ReasonKeyRevoked       Reason = "key-revoked"        // revoked as of signing time
	ReasonFuture           Reason = "created-in-future"  // creation time after Now + ClockSkew
	ReasonSignatureExpired Reason = "signature-expired"  // the signature's own expiration passed
)

// Refusal is why one signature did not count.
type Refusal struct {
	Reason             Reason
	KeyID              string // issuer key ID (16 hex digits), when known
	Fingerprint        string // the signing key's fingerprint, when known
	PrimaryFingerprint string // its primary key's fingerprint, when in the keyring
	Detail             string // a sentence for a person
}

func (r Refusal) String() string {
	who := ""
	switch {
	case r.Fingerprint != "" && r.PrimaryFingerprint != "" && r.Fingerprint != r.PrimaryFingerprint:
		who = fmt.Sprintf("signature by subkey %s of key %s: ", r.Fingerprint, r.PrimaryFingerprint)
	case r.Fingerprint != "":
		who = fmt.Sprintf("signature by key %s: ", r.Fingerprint)
	case r.KeyID != "":
		who = fmt.Sprintf("signature by key ID %s: ", r.KeyID)
	}
	return who + r.Detail
}

// RefusedError is returned when no signature counts. It wraps ErrSignature.
type RefusedError struct {
	Subject  string // what was verified: a file name or URL, when known
	Keyring  string // the Name of the keyring the signatures were checked against
	Refusals []Refusal
}

func (e *RefusedError) Error() string {
	var b strings.Builder
	b.WriteString("signature refused")
	if e.Subject != "" {
		b.WriteString(" for " + e.Subject)
	}
	if len(e.Refusals) == 1 {
		b.WriteString(": " + e.Refusals[0].String())
		return b.String()
	}
	fmt.Fprintf(&b, ": none of %d signatures counts", len(e.Refusals))
	for i, r := range e.Refusals {
		fmt.Fprintf(&b, "; %d) %s", i+1, r.String())
	}
	return b.String()
}

func (e *RefusedError) Unwrap() error { return ErrSignature }

// Has reports whether any signature was refused for reason r.
func (e *RefusedError) Has(r Reason) bool {
	return slices.ContainsFunc(e.Refusals, func(x Refusal) bool { return x.Reason == r })
}

func refused(r Refusal) *RefusedError { return &RefusedError{Refusals: []Refusal{r}} }

// refusedBy records kr as the keyring of a refusal, for the message a caller builds.
func refusedBy(kr *Keyring, err error) error {
	if re, ok := errors.AsType[*RefusedError](err); ok && kr != nil {
		re.Keyring = kr.Name()
	}
	return err
}

// VerifyDetached checks a detached signature (armored or binary) over data,
// which is read once, to its end, in the same pass that computes its sha256 and
// sha512 (returned in the Result). A refusal is a *RefusedError wrapping
// ErrSignature; an error reading data is returned as is.
func VerifyDetached(kr *Keyring, pol Policy, signature io.Reader, data io.Reader) (res *Result, err error) {
	defer func() { err = refusedBy(kr, err) }()
	allowed, err := pol.allowList()
	if err != nil {
		return nil, err
	}
	sigs, unsupported, rerr := readSignatures(signature)
	if rerr != nil {
		return nil, rerr
	}
	return verifyStream(kr, pol, allowed, sigs, unsupported, data, false)
}

// VerifyClearsigned checks a clearsigned message (gpg --clearsign; runc's
// checksum list) and returns its verified content, with the dash-escaping undone,
// LF line endings and its last line ended, as gpg --decrypt writes it. Text before the message or after its signature is
// left out (Result.Warnings says so: it is not covered by the signature); a
// second signed message after it, or a Hash: header that does not name the
// signature's digest, is refused. Only the returned content is covered by
// the signature.
func VerifyClearsigned(kr *Keyring, pol Policy, message io.Reader) (content []byte, res *Result, err error) {
	defer func() { err = refusedBy(kr, err) }()
	allowed, err := pol.allowList()
	if err != nil {
		return nil, nil, err
	}
	data, err := io.ReadAll(io.LimitReader(message, maxClearsignedSize+1))
	if err != nil {
		return nil, nil, err
	}
	if len(data) > maxClearsignedSize {
		return nil, nil, refused(Refusal{Reason: ReasonMalformed, Detail: fmt.Sprintf("clearsigned message larger than %d bytes", maxClearsignedSize)})
	}
	block, rest := clearsign.Decode(data)
	if block == nil {
		return nil, nil, refused(Refusal{Reason: ReasonMalformed, Detail: "no complete clearsigned message found (want \"-----BEGIN PGP SIGNED MESSAGE-----\", a Hash header, the text, then the armored signature)"})
	}
	if bytes.Contains(rest, []byte("-----BEGIN PGP SIGNED MESSAGE-----")) {
		return nil, nil, refused(Refusal{Reason: ReasonMalformed, Detail: "more than one clearsigned message in the input: ambiguous which content is meant"})
	}
	if block.ArmoredSignature.Type != "PGP SIGNATURE" {
		return nil, nil, refused(Refusal{Reason: ReasonMalformed, Detail: fmt.Sprintf("clearsigned message ends in a %q armor block, want PGP SIGNATURE", block.ArmoredSignature.Type)})
	}
	sigs, unsupported, rerr := parseSignaturePackets(block.ArmoredSignature.Body)
	if rerr != nil {
		return nil, nil, rerr
	}
	if hs := block.Headers.Values("Hash"); len(hs) > 0 {
		var kept []*packet.Signature
		for _, s := range sigs {
			if slices.Contains(hs, armorHashName(s.Hash)) {
				kept = append(kept, s)
			} else {
				unsupported = append(unsupported, Refusal{Reason: ReasonMalformed, KeyID: issuerKeyID(s),
					Detail: fmt.Sprintf("signature digest %s is not among the message's Hash header values %v", hashName(s.Hash), hs)})
			}
		}
		sigs = kept
	}
	res, err = verifyStream(kr, pol, allowed, sigs, unsupported, bytes.NewReader(block.Bytes), true)
	if err != nil {
		return nil, nil, err
	}
	// The line break before the signature is not signed (RFC 9580, 7.1):
	// gpg --clearsign of a file that ends in a newline signs it without
	// that newline. The content gets it back, as gpg --decrypt does, so
	// that --output writes the file signed: a checksum list whose last line
	// has no newline loses that line to a shell's "while read".
	content = block.Plaintext
	if len(content) > 0 && content[len(content)-1] != '\n' {
		content = append(content[:len(content):len(content)], '\n')
	}
	// The digests describe the content handed back, not the canonical form.
	h := digest.NewHasher()
	h.Write(content)
	res.Size, res.Digests = h.Size(), h.Sum()
	res.Warnings = append(res.Warnings, unsignedLines(data, rest)...)
	return content, res, nil
}

// unsignedLines warns of text around a clearsigned message, in data before
// it and in rest after its signature: the content handed back leaves it
// out, but a person who trusts the file as it stands (sha256sum -c reads
// every line) trusts lines nobody signed; apt refuses such a file.
func unsignedLines(data, rest []byte) []string {
	var out []string
	// Where clearsign.Decode finds the message: at the start, or after a
	// line break.
	var before []byte
	if begin := []byte("-----BEGIN PGP SIGNED MESSAGE-----"); !bytes.HasPrefix(data, begin) {
		before = data[:max(0, bytes.Index(data, append([]byte("\n"), begin...)))]
	}
	for _, t := range []struct {
		text  []byte
		where string
	}{{before, "before the signed message"}, {rest, "after the signature"}} {
		n := 0
		for line := range bytes.Lines(t.text) {
			if len(bytes.TrimSpace(line)) > 0 {
				n++
			}
		}
		if n > 0 {
			out = append(out, fmt.Sprintf("%s %s, not covered by the signature, left out of the verified content: use that content, not the file as it stands (apt refuses such a file)", plural.Count(n, "line", "lines"), t.where))
		}
	}
	return out
}

// armorHashName is h's name in a clearsigned message's Hash header (RFC
// 9580, 9.5): SHA256 and SHA512 lose their dash, SHA3-256 and SHA3-512
// keep it.
func armorHashName(h crypto.Hash) string {
	if h == crypto.SHA3_256 || h == crypto.SHA3_512 {
		return h.String()
	}
	return strings.ReplaceAll(h.String(), "-", "")
}

func hashName(h crypto.Hash) string {
	if h == 0 {
		return "unknown"
	}
	return h.String()
}

// allowList normalises Signers into a set of uppercase fingerprints.
func (p Policy) allowList() (map[string]bool, error) {
	if p.Now.IsZero() {
		return nil, fmt.Errorf("%w: Policy.Now is not set", ErrPolicy)
	}
	if len(p.Signers) == 0 {
		return nil, nil
	}
	set := map[string]bool{}
	for _, s := range p.Signers {
		f, err := NormalizeFingerprint(s)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrPolicy, err)
		}
		set[f] = true
	}
	return set, nil
}

// NormalizeFingerprint turns "0x672C 657B ..." into "672C657B...". It accepts
// full v4 (40 hex digits) and v6 (64) fingerprints only: key IDs are too short to
// name a key safely.
func NormalizeFingerprint(s string) (string, error) {
	f := strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(s), " ", ""))
	f = strings.TrimPrefix(strings.TrimPrefix(f, "0X"), "0x")
	if len(f) != 40 && len(f) != 64 {
		return "", fmt.Errorf("signer %q is not a full fingerprint (want 40 or 64 hex digits, found %d)", s, len(f))
	}
	if _, err := hex.DecodeString(f); err != nil {
		return "", fmt.Errorf("signer %q is not hexadecimal", s)
	}
	return f, nil
}

// readSignatures reads an armored or binary detached signature.
func readSignatures(r io.Reader) ([]*packet.Signature, []Refusal, error) {
	raw, err := io.ReadAll(io.LimitReader(r, maxSignatureSize+1))
	if err != nil {
		return nil, nil, err
	}
	if len(raw) > maxSignatureSize {
		return nil, nil, refused(Refusal{Reason: ReasonMalformed, Detail: fmt.Sprintf("signature larger than %d bytes", maxSignatureSize)})
	}
	if len(raw) > 0 && raw[0]&0x80 != 0 {
		return parseSignaturePackets(bytes.NewReader(raw))
	}
	// Armored: text around the blocks is skipped, as gpgv and sqv skip it
	// (a line of prose above the block, say).
	switch {
	case hasLine(raw, "-----BEGIN PGP SIGNED MESSAGE-----"):
		return nil, nil, refused(Refusal{Reason: ReasonMalformed, Detail: "this is a clearsigned message, not a detached signature: it is verified alone, as the text it signs (verify-signature without DATA; in a recipe, checksums: with clearsigned:), not over another file"})
	case hasLine(raw, "-----BEGIN "):
		return readArmoredSignatures(raw)
	}
	return nil, nil, refused(Refusal{Reason: ReasonMalformed, Detail: "not an OpenPGP signature (neither armored nor binary OpenPGP packets)"})
}

// hasLine reports whether a line of text starts with prefix, white space
// around it aside (as scanArmoredBlocks reads lines).
func hasLine(text []byte, prefix string) bool {
	for line := range bytes.Lines(text) {
		if bytes.HasPrefix(bytes.TrimSpace(line), []byte(prefix)) {
			return true
		}
	}
	return false
}

// readArmoredSignatures reads every armored signature block of text: a
// detached signature file may be several, one after the other (cat a.asc
// b.asc), and gpgv reads them all, so a good signature in a later block counts
// and a refused one there is reported.
func readArmoredSignatures(text []byte) ([]*packet.Signature, []Refusal, error) {
	blocks, err := scanArmoredBlocks(text, signatureArmor)
	if err != nil {
		return nil, nil, refused(Refusal{Reason: ReasonMalformed, Detail: "damaged armored signature: line " + err.Error()})
	}
	if len(blocks) == 0 {
		b, err := armor.Decode(bytes.NewReader(text))
		if err != nil {
			return nil, nil, refused(Refusal{Reason: ReasonMalformed, Detail: "damaged armored signature: " + err.Error()})
		}
		return nil, nil, refused(Refusal{Reason: ReasonMalformed, Detail: fmt.Sprintf("armor block is %q, want PGP SIGNATURE", b.Type)})
	}
	var sigs []*packet.Signature
	var others []Refusal
	for _, blk := range blocks {
		b, err := armor.Decode(bytes.NewReader(blk.text))
		if err != nil {
			return nil, nil, refused(Refusal{Reason: ReasonMalformed, Detail: fmt.Sprintf("damaged armored signature at line %d: %v", blk.line, err)})
		}
		s, o, err := parseSignaturePackets(b.Body)
		if err != nil {
			return nil, nil, err
		}
		sigs, others = append(sigs, s...), append(others, o...)
	}
	return sigs, others, nil
}

// parseSignaturePackets collects the signature packets of a detached signature.
// Signatures go-crypto cannot parse (v3, unknown algorithms) come back as
// refusals, so that a good signature next to them still counts.
func parseSignaturePackets(r io.Reader) ([]*packet.Signature, []Refusal, error) {
	var sigs []*packet.Signature
	var others []Refusal
	pr := packet.NewReader(r)
	for {
		p, err := pr.NextWithUnsupported()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, refused(Refusal{Reason: ReasonMalformed, Detail: "damaged signature: " + err.Error()})
		}
		switch p := p.(type) {
		case *packet.Signature:
			sigs = append(sigs, p)
		case *packet.UnsupportedPacket:
			others = append(others, unsupported(p))
		default:
			return nil, nil, refused(Refusal{Reason: ReasonMalformed, Detail: "a detached signature holds only signature packets, found " + packetKind(p)})
		}
	}
	if len(sigs) == 0 && len(others) == 0 {
		return nil, nil, refused(Refusal{Reason: ReasonNoSignature, Detail: "no signature packet found"})
	}
	return sigs, others, nil
}

// packetKind names, for a person, a packet a detached signature has no
// place for: a Go type (*packet.Compressed) tells nobody that the file is
// a signed message or a key.
func packetKind(p packet.Packet) string {
	switch p.(type) {
	case *packet.OnePassSignature, *packet.Compressed, *packet.LiteralData:
		return "a signed message (gpg --sign, the data inside it), not a detached signature (gpg --detach-sign)"
	case *packet.PublicKey, *packet.PrivateKey, *packet.UserId:
		return "a key: is this the keyring?"
	}
	return fmt.Sprintf("a packet of another kind (%T)", p)
}

// unsupported says why go-crypto could not read a signature packet, in the
// policy's words where it has some: go-crypto does not even parse a signature
// made with MD5 or RIPEMD-160 (digest IDs 1 and 3), and "hash function 1"
// tells a person nothing.
func unsupported(p *packet.UnsupportedPacket) Refusal {
	if id, ok := strings.CutPrefix(string(p.Error), "hash function "); ok {
		if name, weak := map[string]string{"1": "MD5", "3": "RIPEMD-160"}[id]; weak {
			return Refusal{Reason: ReasonWeakHash, Detail: weakHashDetail(name)}
		}
	}
	return Refusal{Reason: ReasonUnsupported, Detail: "unsupported signature packet: " + p.Error.Error()}
}

// maxPasses bounds the passes over the data that one file's signatures
// may need: every v4 combination of digest and mode fits (six digests, text
// or binary), with room for the v6 signatures of a few signers (each one's
// salt needs a pass of its own). Signatures past the bound are not checked.
const maxPasses = 32

// passKey says how a signature hashes the data: its digest, whether the
// data goes through the CRLF canonicaliser (text mode), and a v6
// signature's salt, hashed before it.
type passKey struct {
	hash crypto.Hash
	text bool
	salt string
}

// hashPasses makes the hash that reads the data for each signature, and
// returns the writers the data goes through. Signatures that hash it alike
// share one pass: a file of thousands of signatures (1 MiB holds 8,000)
// would otherwise read a large artifact thousands of times over.
// check verifies each signature on its own copy of its pass's hash.
func hashPasses(sigs []*packet.Signature, canonical bool) ([]candidate, []io.Writer) {
	cands := make([]candidate, 0, len(sigs))
	var writers []io.Writer
	passes := map[passKey]hash.Cloner{}
	for _, s := range sigs {
		c := candidate{sig: s}
		k := passKey{hash: s.Hash, text: s.SigType == packet.SigTypeText && !canonical, salt: string(s.Salt())}
		if r := precheck(s); r != nil {
			c.refusal = r
		} else if h, ok := passes[k]; ok {
			c.h = h
		} else if len(writers) == maxPasses {
			c.refusal = &Refusal{Reason: ReasonUnsupported, KeyID: issuerKeyID(s), Detail: fmt.Sprintf("not checked: the file's signatures would read the data more than %d times (each v6 signature's salt needs a pass of its own)", maxPasses)}
		} else if h, err := s.PrepareVerify(); err != nil {
			c.refusal = &Refusal{Reason: ReasonUnsupported, KeyID: issuerKeyID(s), Detail: fmt.Sprintf("cannot compute digest %s: %v", hashName(s.Hash), err)}
		} else if h, ok := h.(hash.Cloner); !ok { // as every digest of the standard library is
			c.refusal = &Refusal{Reason: ReasonUnsupported, KeyID: issuerKeyID(s), Detail: fmt.Sprintf("digest %s cannot be copied for each key that may have made the signature", hashName(s.Hash))}
		} else {
			c.h, passes[k] = h, h
			// Text signatures hash the data with line endings made CRLF. Only
			// the DATA goes through the canonicaliser: VerifySignature later
			// writes the signature's own trailer into its hash, and those
			// binary bytes (timestamps, fingerprints) must not be rewritten,
			// or every signature whose trailer holds a 0x0A byte is refused.
			var w io.Writer = h
			if k.text {
				w = openpgp.NewCanonicalTextHash(h)
			}
			writers = append(writers, w)
		}
		cands = append(cands, c)
	}
	return cands, writers
}

// candidate is one signature with the hash of the pass that reads the
// data for it (shared with the signatures that hash it alike).
type candidate struct {
	sig     *packet.Signature
	h       hash.Cloner
	refusal *Refusal // set when the signature is refused before hashing
}

// verifyStream hashes data once for every way its signatures hash it, then
// applies the policy to each signature.
// canonical says the data is already in canonical text form (clearsigned).
func verifyStream(kr *Keyring, pol Policy, allowed map[string]bool, sigs []*packet.Signature, others []Refusal, data io.Reader, canonical bool) (*Result, error) {
	hasher := digest.NewHasher()
	cands, passes := hashPasses(sigs, canonical)
	if _, err := io.Copy(io.MultiWriter(append(passes, hasher)...), data); err != nil {
		return nil, fmt.Errorf("verify: reading the signed data: %w", err)
	}
	var good *Result
	refusals := others
	for _, c := range cands {
		if c.refusal != nil {
			refusals = append(refusals, *c.refusal)
			continue
		}
		res, r := check(kr, pol, allowed, c.sig, c.h)
		if r != nil {
			refusals = append(refusals, *r)
			continue
		}
		if good == nil {
			good = res
		}
	}
	if good == nil {
		return nil, &RefusedError{Refusals: refusals}
	}
	for _, r := range refusals {
		good.Warnings = append(good.Warnings, "another signature does not count: "+r.String())
	}
	good.Size, good.Digests = hasher.Size(), hasher.Sum()
	return good, nil
}

// precheck refuses what needs no key: wrong type, weak digest, no issuer.
func precheck(s *packet.Signature) *Refusal {
	id := issuerKeyID(s)
	if s.SigType != packet.SigTypeBinary && s.SigType != packet.SigTypeText {
		return &Refusal{Reason: ReasonUnsupported, KeyID: id, Detail: fmt.Sprintf("signature type 0x%02x is not a signature over a document (want 0x00 binary or 0x01 text)", uint8(s.SigType))}
	}
	if id == "" && s.IssuerFingerprint == nil {
		return &Refusal{Reason: ReasonMalformed, Detail: "signature names no issuer key"}
	}
	if p := criticalProblem(s); p != "" {
		return &Refusal{Reason: ReasonUnsupported, KeyID: id, Fingerprint: fprOrEmpty(s.IssuerFingerprint), Detail: p}
	}
	if weakHash(s.Hash) {
		return &Refusal{Reason: ReasonWeakHash, KeyID: id, Fingerprint: fprOrEmpty(s.IssuerFingerprint), Detail: weakHashDetail(hashName(s.Hash))}
	}
	return nil
}

func weakHashDetail(name string) string {
	return fmt.Sprintf("made with digest %s, which is broken for signatures (want SHA-256 or stronger; re-sign with gpg --digest-algo SHA512)", name)
}

func weakHash(h crypto.Hash) bool {
	return h == crypto.MD5 || h == crypto.SHA1 || h == crypto.RIPEMD160 || h == 0
}

// acceptableCertHash is the rule for self- and binding signatures: SHA-1 is
// tolerated there (old keys), MD5 and RIPEMD-160 are not.
func acceptableCertHash(s *packet.Signature) error {
	if s.Hash == crypto.MD5 || s.Hash == crypto.RIPEMD160 {
		return fmt.Errorf("self-signature uses %s", hashName(s.Hash))
	}
	return nil
}

func issuerKeyID(s *packet.Signature) string {
	if s.IssuerKeyId != nil {
		return fmt.Sprintf("%016X", *s.IssuerKeyId)
	}
	if len(s.IssuerFingerprint) >= 8 {
		// v4: the key ID is the low 64 bits; v6: the high 64 bits.
		if len(s.IssuerFingerprint) == 20 {
			return strings.ToUpper(hex.EncodeToString(s.IssuerFingerprint[12:]))
		}
		return strings.ToUpper(hex.EncodeToString(s.IssuerFingerprint[:8]))
	}
	return ""
}

// issuerName names the key that made s, by fingerprint where s carries it.
func issuerName(s *packet.Signature) string {
	if s.IssuerFingerprint != nil {
		return "key " + fprOrEmpty(s.IssuerFingerprint)
	}
	return "key ID " + issuerKeyID(s)
}

func fprOrEmpty(b []byte) string { return strings.ToUpper(hex.EncodeToString(b)) }

func fingerprint(pk *packet.PublicKey) string { return fprOrEmpty(pk.Fingerprint) }

// signingKey is a key of the keyring that matches a signature's issuer.
type signingKey struct {
	entity *openpgp.Entity
	pub    *packet.PublicKey
	subkey *openpgp.Subkey // nil when the primary key signed
}

func (kr *Keyring) lookup(s *packet.Signature) []signingKey {
	var out []signingKey
	for _, e := range kr.entities {
		if issuedBy(s, e.PrimaryKey) {
			out = append(out, signingKey{entity: e, pub: e.PrimaryKey})
		}
		for i := range e.Subkeys {
			if issuedBy(s, e.Subkeys[i].PublicKey) {
				out = append(out, signingKey{entity: e, pub: e.Subkeys[i].PublicKey, subkey: &e.Subkeys[i]})
			}
		}
	}
	return out
}

// check applies the policy to one signature; pass is the hash of its pass
// over the data, which every key tried gets a copy of (VerifySignature
// writes the signature's trailer into the hash it is given).
func check(kr *Keyring, pol Policy, allowed map[string]bool, s *packet.Signature, pass hash.Cloner) (*Result, *Refusal) {
	id := issuerKeyID(s)
	keys := kr.lookup(s)
	if len(keys) == 0 {
		detail := fmt.Sprintf("made by %s, which is not in keyring %s (unknown signer)", issuerName(s), kr.name)
		if kr.unread > 0 {
			detail += fmt.Sprintf("; %d key(s) of the keyring could not be read (a key version or algorithm updeb does not support, or a damaged key), and the signer may be one of them", kr.unread)
		}
		return nil, &Refusal{Reason: ReasonUnknownSigner, KeyID: id, Fingerprint: fprOrEmpty(s.IssuerFingerprint), Detail: detail}
	}
	// The keyring may hold the signing key more than once: a subkey bound
	// to a new primary key as well as to the old one (or, in theory, keys
	// whose IDs collide, where no fingerprint subpacket makes the match
	// exact). The signature counts under the first that it passes with, as
	// gpgv and sqv find; else the first key's refusal stands.
	var first *Refusal
	for _, k := range keys {
		h, err := pass.Clone()
		if err != nil {
			return nil, &Refusal{Reason: ReasonUnsupported, KeyID: id, Detail: fmt.Sprintf("cannot copy the state of digest %s: %v", hashName(s.Hash), err)}
		}
		res, r := checkKey(kr, pol, allowed, s, h, k)
		if r == nil {
			return res, nil
		}
		if first == nil {
			first = r
		}
	}
	return nil, first
}

// checkKey applies the policy to signature s, made by key k if any,
// whose hash h has seen all the data.
func checkKey(kr *Keyring, pol Policy, allowed map[string]bool, s *packet.Signature, h hash.Hash, k signingKey) (*Result, *Refusal) {
	ref := Refusal{KeyID: issuerKeyID(s), Fingerprint: fingerprint(k.pub), PrimaryFingerprint: fingerprint(k.entity.PrimaryKey)}
	refuse := func(r Reason, format string, args ...any) (*Result, *Refusal) {
		ref.Reason, ref.Detail = r, fmt.Sprintf(format, args...)
		return nil, &ref
	}
	if err := k.pub.VerifySignature(h, s); err != nil {
		return refuse(ReasonBadSignature, "BAD signature: it does not match the data (the file or the signature was altered, or the signature belongs to another file): %v", err)
	}
	if allowed != nil && !allowed[ref.PrimaryFingerprint] {
		detail := fmt.Sprintf("key %s (%s) is in keyring %s but not among the allowed signers %v", ref.PrimaryFingerprint, userID(k.entity), kr.name, slices.Sorted(maps.Keys(allowed)))
		// gpgv names the subkey that signed ("using EDDSA key ..."), and
		// one copied from there to the allow-list never matches.
		for _, sk := range k.entity.Subkeys {
			if f := fingerprint(sk.PublicKey); allowed[f] {
				detail += fmt.Sprintf("; %s is a subkey of it, and the allowed signers are primary keys: list %s instead", f, ref.PrimaryFingerprint)
				break
			}
		}
		return refuse(ReasonNotAllowed, "%s", detail)
	}
	for _, pk := range []*packet.PublicKey{k.pub, k.entity.PrimaryKey} {
		if w := weakKey(pk); w != "" {
			return refuse(ReasonWeakKey, "key %s is %s, too weak to trust (want RSA >= 2048 bits, ECDSA or EdDSA)", fingerprint(pk), w)
		}
	}
	created := s.CreationTime
	if created.After(pol.Now.Add(ClockSkew)) {
		return refuse(ReasonFuture, "created %s, which is in the future (now %s; at most %s of clock skew is tolerated)", stamp(created), stamp(pol.Now), ClockSkew)
	}
	// Its own expiry counts at Now, without the skew (SigExpired would also
	// call a signature created within the skew expired).
	if s.SigLifetimeSecs != nil && *s.SigLifetimeSecs != 0 {
		if exp := created.Add(time.Duration(*s.SigLifetimeSecs) * time.Second); pol.Now.Unix() > exp.Unix() {
			return refuse(ReasonSignatureExpired, "the signature itself expired at %s (now %s)", stamp(exp), stamp(pol.Now))
		}
	}
	if created.Before(k.pub.CreationTime) {
		return refuse(ReasonKeyExpired, "created %s, before its key was created (%s)", stamp(created), stamp(k.pub.CreationTime))
	}
	if r := validAt(k, created); r != nil {
		ref.Reason, ref.Detail = r.Reason, r.Detail
		return nil, &ref
	}
	res := &Result{
		PrimaryFingerprint:    ref.PrimaryFingerprint,
		SigningKeyFingerprint: ref.Fingerprint,
		UserID:                userID(k.entity),
		Created:               created,
		Hash:                  hashName(s.Hash),
	}
	if r := validAt(k, pol.Now); r != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the signing key is no longer valid now (%s), but was when it signed on %s", r.Detail, stamp(created)))
	}
	return res, nil
}

// validAt checks that key k (and its primary) could sign at time t.
func validAt(k signingKey, t time.Time) *Refusal {
	e := k.entity
	self, err := e.VerifyPrimaryKey(t, nil)
	if err != nil && !errors.Is(err, pgperrors.ErrKeyRevoked) && !errors.Is(err, pgperrors.ErrKeyExpired) {
		self, err = primaryByNewerSelf(e, t, err)
	}
	switch {
	case errors.Is(err, pgperrors.ErrKeyRevoked):
		return &Refusal{Reason: ReasonKeyRevoked, Detail: fmt.Sprintf("primary key %s is revoked%s", fingerprint(e.PrimaryKey), revocationNote(e.PrimaryKey, e.Revocations))}
	case errors.Is(err, pgperrors.ErrKeyExpired):
		return &Refusal{Reason: ReasonKeyExpired, Detail: fmt.Sprintf("primary key %s %s", fingerprint(e.PrimaryKey), expiryNote(e.PrimaryKey, self, t))}
	case err != nil:
		return &Refusal{Reason: ReasonKeyExpired, Detail: fmt.Sprintf("primary key %s had no valid self-signature at %s (expired, revoked user IDs, or none yet)", fingerprint(e.PrimaryKey), stamp(t))}
	}
	if k.subkey == nil {
		if flags := primaryFlags(e, self, t); !flags.FlagsValid || !flags.FlagSign {
			return &Refusal{Reason: ReasonNotSigningKey, Detail: fmt.Sprintf("primary key %s is not marked for signing (capabilities %s); it must sign through a signing subkey", fingerprint(e.PrimaryKey), capabilities(flags))}
		}
		return nil
	}
	sk := k.subkey
	bind, err := sk.Verify(t, nil)
	if err != nil && !errors.Is(err, pgperrors.ErrKeyRevoked) && !errors.Is(err, pgperrors.ErrKeyExpired) && !t.Before(sk.PublicKey.CreationTime) {
		newest, _ := sk.LatestValidBindingSignature(time.Time{}, nil)
		bind, err = judgedByNewer(t, err, newest, sk.Revoked(nil, t), sk.PublicKey)
	}
	switch {
	case errors.Is(err, pgperrors.ErrKeyRevoked):
		return &Refusal{Reason: ReasonKeyRevoked, Detail: fmt.Sprintf("subkey %s is revoked%s", fingerprint(sk.PublicKey), revocationNote(sk.PublicKey, sk.Revocations))}
	case errors.Is(err, pgperrors.ErrKeyExpired):
		if bind == nil {
			bind, _ = sk.LatestValidBindingSignature(t, nil)
		}
		return &Refusal{Reason: ReasonKeyExpired, Detail: fmt.Sprintf("subkey %s %s", fingerprint(sk.PublicKey), expiryNote(sk.PublicKey, bind, t))}
	case err != nil:
		return &Refusal{Reason: ReasonNotSigningKey, Detail: fmt.Sprintf("subkey %s has no valid binding signature at %s (a signing subkey also needs its cross-signature)", fingerprint(sk.PublicKey), stamp(t))}
	}
	if !bind.FlagsValid || !bind.FlagSign {
		return &Refusal{Reason: ReasonNotSigningKey, Detail: fmt.Sprintf("subkey %s is not a signing subkey (capabilities %s)", fingerprint(sk.PublicKey), capabilities(bind))}
	}
	return nil
}

// primaryFlags is the signature that says what e's primary key may do at
// t: its self-signature self, unless that names no capabilities and a
// direct-key signature does (RFC 9580 5.2.3.10: a direct-key signature's
// key flags apply to the key; gpgv and sqv read them there). That is the
// newest one made by t, else the newest, as for self (judgedByNewer).
func primaryFlags(e *openpgp.Entity, self *packet.Signature, t time.Time) *packet.Signature {
	if self == nil || self.FlagsValid {
		return self
	}
	d, err := e.LatestValidDirectSignature(t, nil)
	if err != nil {
		d, err = e.LatestValidDirectSignature(time.Time{}, nil)
	}
	if err == nil && d.FlagsValid {
		return d
	}
	return self
}

// primaryByNewerSelf judges e's primary key at t when it has no
// self-signature made by then: see judgedByNewer.
func primaryByNewerSelf(e *openpgp.Entity, t time.Time, failure error) (*packet.Signature, error) {
	if t.Before(e.PrimaryKey.CreationTime) {
		return nil, failure
	}
	newest, _ := e.PrimarySelfSignature(time.Time{}, nil)
	self, err := judgedByNewer(t, failure, newest, e.Revoked(t), e.PrimaryKey)
	if err == nil {
		// A v4 key's direct-key signature may set an expiry of its own.
		if d, _ := e.LatestValidDirectSignature(time.Time{}, nil); d != nil && e.PrimaryKey.KeyExpired(d, t) {
			return self, pgperrors.ErrKeyExpired
		}
	}
	return self, err
}

// judgedByNewer judges key pk at t by newest, its newest valid
// self-signature (or binding), when that one is newer than t: extending a
// key's expiry makes gpg replace the self-signature, so a key refreshed after
// a release was signed has none from before it, and gpgv judges a key by its
// newest self-signature. Its key expiry counts from the key's creation, so it
// still says whether the key had expired at t; revoked says whether a
// revocation counts at t. Otherwise failure (why go-crypto found no
// self-signature valid at t) stands.
func judgedByNewer(t time.Time, failure error, newest *packet.Signature, revoked bool, pk *packet.PublicKey) (*packet.Signature, error) {
	switch {
	case newest == nil || !newest.CreationTime.After(t):
		return nil, failure
	case revoked:
		return nil, pgperrors.ErrKeyRevoked
	case pk.KeyExpired(newest, t):
		return newest, pgperrors.ErrKeyExpired
	}
	return newest, nil
}

func expiryNote(pk *packet.PublicKey, self *packet.Signature, t time.Time) string {
	if self != nil && self.KeyLifetimeSecs != nil && *self.KeyLifetimeSecs != 0 {
		exp := pk.CreationTime.Add(time.Duration(*self.KeyLifetimeSecs) * time.Second)
		return fmt.Sprintf("expired on %s, before %s", stamp(exp), stamp(t))
	}
	return fmt.Sprintf("was not valid at %s", stamp(t))
}

func revocationNote(pk *packet.PublicKey, revs []*packet.VerifiableSignature) string {
	for _, r := range revs {
		if r.Valid == nil || !*r.Valid {
			continue
		}
		note := " (revoked " + stamp(r.Packet.CreationTime)
		// A subkey's revocations are its primary key's to make.
		if r.Packet.SigType == packet.SigTypeKeyRevocation && !r.Packet.CheckKeyIdOrFingerprint(pk) {
			note += " by its designated revoker " + issuerName(r.Packet)
		}
		if r.Packet.RevocationReason != nil {
			note += ", reason: " + revocationReason(*r.Packet.RevocationReason)
		}
		if r.Packet.RevocationReasonText != "" {
			note += fmt.Sprintf(" %q", r.Packet.RevocationReasonText)
		}
		return note + ")"
	}
	return ""
}

func revocationReason(r packet.ReasonForRevocation) string {
	switch r {
	case packet.NoReason:
		return "no reason given"
	case packet.KeySuperseded:
		return "key superseded"
	case packet.KeyCompromised:
		return "key compromised"
	case packet.KeyRetired:
		return "key retired"
	}
	return fmt.Sprintf("code %d", r)
}

// weakKey names what is too weak about pk, or returns "".
func weakKey(pk *packet.PublicKey) string {
	switch pk.PubKeyAlgo {
	case packet.PubKeyAlgoDSA:
		return "DSA"
	case packet.PubKeyAlgoRSA, packet.PubKeyAlgoRSASignOnly, packet.PubKeyAlgoRSAEncryptOnly:
		if bits, err := pk.BitLength(); err != nil || bits < 2048 {
			return fmt.Sprintf("RSA %d bits", bits)
		}
	}
	return ""
}

// userID is e's primary user ID for people, escaped: its owner chose the
// text, and a user ID may hold escape sequences and line breaks (termtext).
func userID(e *openpgp.Entity) string {
	var names []string
	for n := range e.Identities {
		names = append(names, n)
	}
	if len(names) == 0 {
		return "no user ID"
	}
	slices.Sort(names)
	if _, id := e.PrimaryIdentity(time.Time{}, nil); id != nil {
		return termtext.Escape(id.Name)
	}
	return termtext.Escape(names[0])
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }
