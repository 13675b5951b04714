package openpgp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	openpgp "github.com/ProtonMail/go-crypto/openpgp/v2"
)

// maxKeyringSize caps what ParseKeyring reads: real keyrings are kilobytes.
const maxKeyringSize = 16 << 20

// ErrKeyring is wrapped by every keyring loading error.
var ErrKeyring = errors.New("verify: bad keyring")

const (
	beginPublic  = "-----BEGIN PGP PUBLIC KEY BLOCK-----"
	endPublic    = "-----END PGP PUBLIC KEY BLOCK-----"
	beginPrivate = "-----BEGIN PGP PRIVATE KEY BLOCK-----"
)

// Keyring is a set of OpenPGP public keys (certificates) loaded from one file.
// It is read-only after loading and safe for concurrent use.
type Keyring struct {
	name     string
	entities []*openpgp.Entity
	unread   int // public keys in the file that go-crypto could not read
}

// Name is the file name (or other label) the keyring was loaded from.
func (kr *Keyring) Name() string { return kr.name }

// Len is the number of primary keys in the keyring.
func (kr *Keyring) Len() int { return len(kr.entities) }

// Fingerprints returns the primary key fingerprints (uppercase hex), in file order.
func (kr *Keyring) Fingerprints() []string {
	out := make([]string, 0, len(kr.entities))
	for _, e := range kr.entities {
		out = append(out, fingerprint(e.PrimaryKey))
	}
	return out
}

// LoadKeyring reads a keyring file: see ParseKeyring. It must be a regular
// file (a FIFO or a device is refused without being read).
func LoadKeyring(path string) (*Keyring, error) {
	return LoadKeyringContext(context.Background(), path)
}

// LoadKeyringContext is LoadKeyring under ctx: see ParseKeyringContext.
func LoadKeyringContext(ctx context.Context, path string) (*Keyring, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s: not a regular file", ErrKeyring, path)
	}
	return ParseKeyringContext(ctx, f, path)
}

// ParseKeyring reads public keys from r, named name in errors. Two shapes are
// accepted: a binary keyring (a sequence of OpenPGP packets, as gpg --export
// writes), and text holding one or more ASCII-armored public key blocks with
// anything around and between them (Helm's KEYS file: prose, gpg --list-sigs
// output, then ten armored blocks). Text outside the blocks is ignored; an
// armored block that does not decode, or holds no usable key, is an error
// naming the line where the block begins. Private key blocks are refused: a
// verification keyring must never carry secrets. At least one key is required.
// Copies of one key are merged into one (see mergeCopies).
func ParseKeyring(r io.Reader, name string) (*Keyring, error) {
	return ParseKeyringContext(context.Background(), r, name)
}

// ParseKeyringContext is ParseKeyring under ctx: every self-signature of
// every key is verified as the keyring is read, which takes seconds for one
// of 16 MiB (tens of thousands of user IDs or subkeys); once ctx is done
// (a signal), it returns ctx's error.
func ParseKeyringContext(ctx context.Context, r io.Reader, name string) (*Keyring, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxKeyringSize+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrKeyring, name, err)
	}
	if len(data) > maxKeyringSize {
		return nil, fmt.Errorf("%w: %s: larger than %d bytes", ErrKeyring, name, maxKeyringSize)
	}
	kr := &Keyring{name: name}
	var strays []*packet.Signature // every key and subkey revocation, see readKeys
	if len(data) > 0 && data[0]&0x80 != 0 {
		// A binary packet stream: every OpenPGP packet header has the top bit set,
		// no armored text file starts with such a byte.
		el, revs, err := readKeys(data)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: binary keyring: %w", ErrKeyring, name, err)
		}
		kr.entities, strays = el, revs
		kr.unread = max(0, countPrimaryKeys(data)-len(el))
	} else {
		blocks, err := scanArmoredBlocks(data, publicKeyArmor)
		if err != nil {
			return nil, fmt.Errorf("%w: %s:%w", ErrKeyring, name, err)
		}
		for _, b := range blocks {
			body, err := decodeKeyBlock(b.text)
			var el []*openpgp.Entity
			var revs []*packet.Signature
			if err == nil {
				el, revs, err = readKeys(body)
			}
			if err != nil {
				return nil, fmt.Errorf("%w: %s:%d: armored key block: %w", ErrKeyring, name, b.line, err)
			}
			kr.entities, strays = append(kr.entities, el...), append(strays, revs...)
			kr.unread += max(0, countPrimaryKeys(body)-len(el))
		}
	}
	if len(kr.entities) == 0 {
		return nil, fmt.Errorf("%w: %s: no OpenPGP public key found (want armored %q blocks or a binary keyring)", ErrKeyring, name, beginPublic)
	}
	kr.entities = mergeCopies(kr.entities)
	if err := attachRevocations(kr.entities, strays); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrKeyring, name, err)
	}
	for _, e := range kr.entities {
		if err := settle(ctx, e); err != nil {
			return nil, err
		}
	}
	settleDesignatedRevocations(kr.entities)
	return kr, nil
}

// mergeCopies folds every copy of a key (the same primary fingerprint) into
// its first, and every copy of a subkey into its first, as gpg --import and
// sqv do. A keyring may hold a key twice: a KEYS file that a maintainer's
// refreshed key (revoked, or with a new expiry) was appended to, or cat
// old.asc new.asc. Each copy alone says less than both: judged by the first
// alone, a key revoked in the second would still count. Subkeys are found
// by fingerprint in a map: a key of tens of thousands of subkeys (16 MiB
// holds 40,000) takes time in proportion, not its square.
func mergeCopies(el []*openpgp.Entity) []*openpgp.Entity {
	var out []*openpgp.Entity
	first := map[string]*openpgp.Entity{}
	sub := map[[2]string]int{} // primary and subkey fingerprint -> index in the first copy's Subkeys
	for _, e := range el {
		subkeys := e.Subkeys
		fpr := fingerprint(e.PrimaryKey)
		into, seen := first[fpr]
		if !seen {
			into, e.Subkeys = e, nil
			first[fpr] = e
			out = append(out, e)
		} else {
			into.Revocations = append(into.Revocations, e.Revocations...)
			into.DirectSignatures = append(into.DirectSignatures, e.DirectSignatures...)
			for name, id := range e.Identities {
				have, ok := into.Identities[name]
				if !ok {
					id.Primary = into
					into.Identities[name] = id
					continue
				}
				have.SelfCertifications = append(have.SelfCertifications, id.SelfCertifications...)
				have.OtherCertifications = append(have.OtherCertifications, id.OtherCertifications...)
				have.Revocations = append(have.Revocations, id.Revocations...)
			}
		}
		for _, sk := range subkeys {
			k := [2]string{fpr, string(sk.PublicKey.Fingerprint)}
			i, ok := sub[k]
			if !ok {
				sk.Primary = into
				sub[k] = len(into.Subkeys)
				into.Subkeys = append(into.Subkeys, sk)
				continue
			}
			into.Subkeys[i].Bindings = append(into.Subkeys[i].Bindings, sk.Bindings...)
			into.Subkeys[i].Revocations = append(into.Subkeys[i].Revocations, sk.Revocations...)
		}
	}
	return out
}

// armoredBlock is one BEGIN..END block of one armor type found in a text file.
type armoredBlock struct {
	line int // 1-based line of the BEGIN marker
	text []byte
}

// armorKind is an armor type scanArmoredBlocks looks for, with the words its
// errors use for a block of it.
type armorKind struct{ begin, end, what string }

var (
	publicKeyArmor = armorKind{beginPublic, endPublic, "armored key block"}
	signatureArmor = armorKind{"-----BEGIN PGP SIGNATURE-----", "-----END PGP SIGNATURE-----", "armored signature block"}
)

// scanArmoredBlocks finds every armored block of kind k in data. Lines may
// carry leading or trailing white space (indented keys in prose); text
// outside the blocks is skipped, except a private key block, which is
// refused. A block whose blank line after the armor headers was lost (a
// key or signature pasted through a web page) gets it back, as gpg and sqv
// read such a block: the first line without a colon ends the headers, for
// every header has one and base64 none. The error text starts with the
// line number, for "name:line: ..." messages.
func scanArmoredBlocks(data []byte, k armorKind) ([]armoredBlock, error) {
	var blocks []armoredBlock
	var cur *armoredBlock
	headers := false // cur is in its armor headers
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), maxKeyringSize)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		switch {
		case cur == nil && line == beginPrivate:
			return nil, fmt.Errorf("%d: a private key block: a verification keyring must hold public keys only", n)
		case cur == nil && line == k.begin:
			cur, headers = &armoredBlock{line: n}, true
			cur.text = append(cur.text, line...)
			cur.text = append(cur.text, '\n')
		case cur != nil && line == k.begin:
			return nil, fmt.Errorf("%d: %s started at line %d has no %q line before the next block", n, k.what, cur.line, k.end)
		case cur != nil:
			if headers && line != "" && !strings.Contains(line, ":") {
				cur.text = append(cur.text, '\n')
			}
			headers = headers && line != "" && strings.Contains(line, ":")
			cur.text = append(cur.text, line...)
			cur.text = append(cur.text, '\n')
			if line == k.end {
				blocks = append(blocks, *cur)
				cur = nil
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%d: %w", n, err)
	}
	if cur != nil {
		return nil, fmt.Errorf("%d: %s is not terminated by %q", cur.line, k.what, k.end)
	}
	return blocks, nil
}

// decodeKeyBlock returns the packets of an armored public key block.
func decodeKeyBlock(text []byte) ([]byte, error) {
	b, err := armor.Decode(bytes.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("bad armor: %w", err)
	}
	if b.Type != openpgp.PublicKeyType {
		return nil, fmt.Errorf("armor type is %q, want %q", b.Type, openpgp.PublicKeyType)
	}
	body, err := io.ReadAll(b.Body)
	if err != nil {
		return nil, fmt.Errorf("bad armor: %w", err)
	}
	return body, nil
}

// readKeys reads the keys of a packet stream (a binary keyring, or an
// armored block's packets), and every key and subkey revocation in it
// wherever it stands. go-crypto takes a revocation only where it belongs,
// right after the key it revokes, and drops it anywhere else: after the
// user IDs, where appending a revocation certificate (gpg --gen-revoke) to a
// binary keyring puts it. A stream of revocations alone, an armored
// revocation certificate, holds no key and is no error. attachRevocations
// gives the revocations to their keys.
func readKeys(stream []byte) ([]*openpgp.Entity, []*packet.Signature, error) {
	var revs []*packet.Signature
	only := true
	pr := packet.NewReader(bytes.NewReader(stream))
	for {
		p, err := pr.Next()
		if err != nil { // the end, or a damaged packet readEntities reports
			only = only && err == io.EOF && len(revs) > 0
			break
		}
		if s, ok := p.(*packet.Signature); ok && (s.SigType == packet.SigTypeKeyRevocation || s.SigType == packet.SigTypeSubkeyRevocation) {
			revs = append(revs, s)
		} else {
			only = false
		}
	}
	if only {
		return nil, revs, nil
	}
	el, err := readEntities(bytes.NewReader(stream))
	return el, revs, err
}

// maxMisplacedPairs bounds the signatures attachRevocations verifies to
// find the subkeys of revocations that stand away from them: a handful in a
// real keyring (gpg --export puts each after its subkey).
const maxMisplacedPairs = 1 << 16

// attachRevocations adds each revocation that its key lacks to the key
// whose primary key issued it. A revocation of a key the keyring does not
// hold changes nothing. What a list holds is looked up in a set of its
// revocations, serialized once: readKeys hands over those go-crypto put in
// place too, and serializing the whole list again for each (16 MiB of
// revocations of one key) took an hour.
//
// A key revocation goes to the key. A subkey revocation names no subkey:
// it is verified over one. One that go-crypto kept after the subkey it was
// made over stays there; any other (moved behind another subkey, or
// appended to the keyring) goes to the subkey it verifies for, tried in
// turn, at most maxMisplacedPairs tries per key, or the keyring is refused.
// (Giving each to every subkey made settle verify revocations times
// subkeys signatures: a 232 KB key of 400 revoked subkeys took 10 s to
// load, one of 16 MiB hours.)
func attachRevocations(el []*openpgp.Entity, revs []*packet.Signature) error {
	held := map[*[]*packet.VerifiableSignature]map[string]bool{}
	set := func(list *[]*packet.VerifiableSignature) map[string]bool {
		if held[list] == nil {
			held[list] = map[string]bool{}
			for _, have := range *list {
				if b, ok := serialized(have.Packet); ok {
					held[list][b] = true
				}
			}
		}
		return held[list]
	}
	add := func(list *[]*packet.VerifiableSignature, r *packet.Signature) {
		b, ok := serialized(r)
		if ok && set(list)[b] {
			return
		}
		if ok {
			set(list)[b] = true
		}
		*list = append(*list, packet.NewVerifiableSig(r))
	}
	// Per key, the subkey after which go-crypto kept each subkey revocation.
	hosts := map[*openpgp.Entity]map[string]int{}
	host := func(e *openpgp.Entity) map[string]int {
		if hosts[e] == nil {
			hosts[e] = map[string]int{}
			for i := range e.Subkeys {
				for b := range set(&e.Subkeys[i].Revocations) {
					hosts[e][b] = i
				}
			}
		}
		return hosts[e]
	}
	misplaced := map[*openpgp.Entity][]*packet.Signature{}
	for _, r := range revs {
		for _, e := range el {
			if !r.CheckKeyIdOrFingerprint(e.PrimaryKey) {
				continue
			}
			if r.SigType == packet.SigTypeKeyRevocation {
				add(&e.Revocations, r)
				continue
			}
			b, ok := serialized(r)
			if i, found := host(e)[b]; ok && found && e.PrimaryKey.VerifySubkeyRevocationSignature(r, e.Subkeys[i].PublicKey) == nil {
				continue // in place
			}
			misplaced[e] = append(misplaced[e], r)
		}
	}
	for _, e := range el {
		rs := misplaced[e]
		if len(rs)*len(e.Subkeys) > maxMisplacedPairs {
			return fmt.Errorf("key %s: %d subkey revocations stand away from the subkeys they revoke, too many to match with its %d subkeys: export the key again (gpg --export puts each after its subkey)", fingerprint(e.PrimaryKey), len(rs), len(e.Subkeys))
		}
		for _, r := range rs {
			for i := range e.Subkeys {
				if e.PrimaryKey.VerifySubkeyRevocationSignature(r, e.Subkeys[i].PublicKey) == nil {
					add(&e.Subkeys[i].Revocations, r)
					break
				}
			}
		}
	}
	return nil
}

// serialized is s as a map key; false when s cannot be serialized.
func serialized(s *packet.Signature) (string, bool) {
	var b bytes.Buffer
	if s.Serialize(&b) != nil {
		return "", false
	}
	return b.String(), true
}

// readEntities parses keys and fails when no key survives. go-crypto
// silently skips a key it cannot use (a key version or algorithm it does
// not support, a damaged key); countPrimaryKeys counts them, so that a
// signature by one is not refused as if the keyring never held it.
func readEntities(r io.Reader) ([]*openpgp.Entity, error) {
	el, err := openpgp.ReadKeyRing(r)
	if err != nil {
		return nil, err
	}
	if len(el) == 0 {
		return nil, errors.New("no usable public key in it")
	}
	for _, e := range el {
		secret := e.PrivateKey != nil
		for _, sk := range e.Subkeys {
			secret = secret || sk.PrivateKey != nil
		}
		if secret {
			return nil, fmt.Errorf("key %s holds a private key (or subkey): a verification keyring must hold public keys only", fingerprint(e.PrimaryKey))
		}
	}
	return el, nil
}

// countPrimaryKeys counts the public key packets (tag 6) at the top level
// of an OpenPGP packet stream, read or not by go-crypto, walking the packet
// headers only (RFC 9580 section 4.2: old and new formats, partial lengths).
// A damaged header ends the count.
func countPrimaryKeys(stream []byte) int {
	n := 0
	for len(stream) > 0 && stream[0]&0x80 != 0 {
		b, rest := stream[0], stream[1:]
		var tag int
		if b&0x40 != 0 { // new format: partial parts until one that is not
			tag = int(b & 0x3f)
			for {
				l, size, partial, ok := newFormatLength(rest)
				if !ok || int64(len(rest)-size) < l {
					return n
				}
				rest = rest[size+int(l):]
				if !partial {
					break
				}
			}
		} else {
			tag = int(b>>2) & 0x0f
			var l int64
			switch size := [4]int{1, 2, 4, 0}[b&3]; {
			case len(rest) < size:
				return n
			case size == 0: // indeterminate: the rest of the stream
				l = int64(len(rest))
			default:
				for _, c := range rest[:size] {
					l = l<<8 | int64(c)
				}
				rest = rest[size:]
			}
			if l > int64(len(rest)) {
				return n
			}
			rest = rest[l:]
		}
		if tag == 6 {
			n++
		}
		stream = rest
	}
	return n
}

// newFormatLength reads a new-format packet length: its value, the octets
// it took, whether it is a partial body length, and whether it was whole.
func newFormatLength(b []byte) (l int64, size int, partial, ok bool) {
	switch {
	case len(b) < 1:
		return 0, 0, false, false
	case b[0] < 192:
		return int64(b[0]), 1, false, true
	case b[0] < 224:
		if len(b) < 2 {
			return 0, 0, false, false
		}
		return (int64(b[0])-192)<<8 + int64(b[1]) + 192, 2, false, true
	case b[0] < 255:
		return 1 << (b[0] & 0x1f), 1, true, true
	default:
		if len(b) < 5 {
			return 0, 0, false, false
		}
		return int64(b[1])<<24 | int64(b[2])<<16 | int64(b[3])<<8 | int64(b[4]), 5, false, true
	}
}

// settle checks the cryptographic validity of every self-signature once, at
// load time (refusing unknown critical notations and subpackets, which
// go-crypto's lazy check would also refuse), and records it in the
// signature's Valid field. go-crypto checks
// lazily and caches the answer computed for the first date it was asked about
// (which mixes expiry into the cached validity, and races between goroutines);
// after settle, it only reads the cache, so every later question about "valid at
// time T" is answered for T, and the keyring is read-only. Once ctx is done,
// no signature is checked more, and settle returns ctx's error.
func settle(ctx context.Context, e *openpgp.Entity) error {
	pk := e.PrimaryKey
	var stopped error
	mark := func(s *packet.VerifiableSignature, verify func() error) {
		if stopped = ctx.Err(); stopped != nil {
			return
		}
		err := verify()
		if err == nil && acceptableCertHash(s.Packet) != nil {
			err = errors.New("weak hash")
		}
		// A self-signature or binding with a critical notation or
		// subpacket updeb does not understand does not count, as in gpgv;
		// nor does a binding whose back-signature carries one.
		if err == nil && (criticalProblem(s.Packet) != "" || s.Packet.EmbeddedSignature != nil && criticalProblem(s.Packet.EmbeddedSignature) != "") {
			err = errors.New("critical notation or subpacket")
		}
		ok := err == nil
		s.Valid = &ok
	}
	for _, s := range e.DirectSignatures {
		mark(s, func() error { return pk.VerifyDirectKeySignature(s.Packet) })
	}
	for _, s := range e.Revocations {
		mark(s, func() error { return pk.VerifyRevocationSignature(s.Packet) })
	}
	for _, id := range e.Identities {
		for _, s := range id.SelfCertifications {
			mark(s, func() error { return pk.VerifyUserIdSignature(id.Name, pk, s.Packet) })
		}
		for _, s := range id.Revocations {
			mark(s, func() error { return pk.VerifyUserIdSignature(id.Name, pk, s.Packet) })
		}
	}
	for i := range e.Subkeys {
		sk := &e.Subkeys[i]
		for _, s := range sk.Bindings {
			mark(s, func() error { return pk.VerifyKeySignature(sk.PublicKey, s.Packet) })
		}
		for _, s := range sk.Revocations {
			mark(s, func() error { return pk.VerifySubkeyRevocationSignature(s.Packet, sk.PublicKey) })
		}
	}
	return stopped
}
