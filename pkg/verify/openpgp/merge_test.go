package openpgp

import (
	"bytes"
	"context"
	"crypto"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp/packet"
	openpgp "github.com/ProtonMail/go-crypto/openpgp/v2"
)

// TestMergeCopiesManySubkeys: a 16 MiB keyring holds one key with 40,000
// subkeys. Merging finds a subkey's earlier copy by its fingerprint in a
// map: the time grows with the subkeys, not with their square (a search of
// the subkeys merged so far took 10 s of CPU for 40,000, and minutes for
// the 200,000 here, which a map merges in well under a second).
func TestMergeCopiesManySubkeys(t *testing.T) {
	const n = 200000
	fpr := func(i int) []byte {
		b := make([]byte, 20)
		binary.BigEndian.PutUint64(b[12:], uint64(i))
		return b
	}
	sig := &packet.VerifiableSignature{}
	copyOf := func(from, to int) *openpgp.Entity {
		e := &openpgp.Entity{PrimaryKey: &packet.PublicKey{Fingerprint: fpr(0)}, Identities: map[string]*openpgp.Identity{}}
		for i := from; i < to; i++ {
			e.Subkeys = append(e.Subkeys, openpgp.Subkey{PublicKey: &packet.PublicKey{Fingerprint: fpr(1 + i)}, Bindings: []*packet.VerifiableSignature{sig}})
		}
		return e
	}
	done := make(chan []*openpgp.Entity, 1)
	go func() { done <- mergeCopies([]*openpgp.Entity{copyOf(0, n), copyOf(n-10, n+10)}) }()
	var out []*openpgp.Entity
	select {
	case out = <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("merging one key of %d subkeys takes longer than 30 s: the time grows with the square of the subkeys", n)
	}
	if len(out) != 1 || len(out[0].Subkeys) != n+10 {
		t.Fatalf("%d keys, %d subkeys; want 1 key of %d subkeys", len(out), len(out[0].Subkeys), n+10)
	}
	for i, sk := range out[0].Subkeys {
		want := 1
		if i >= n-10 && i < n {
			want = 2 // in both copies: the bindings of both
		}
		if len(sk.Bindings) != want || sk.Primary != out[0] || string(sk.PublicKey.Fingerprint) != string(fpr(1+i)) {
			t.Fatalf("subkey %d: %d bindings, want %d, in file order, of the first copy", i, len(sk.Bindings), want)
		}
	}
}

// Once its context is done, reading a keyring stops before the next
// self-signature is checked, with the context's error.
func TestParseKeyringContextStops(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "keys", "helm.asc"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseKeyringContext(context.Background(), bytes.NewReader(data), "helm.asc"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if kr, err := ParseKeyringContext(ctx, bytes.NewReader(data), "helm.asc"); !errors.Is(err, context.Canceled) {
		t.Fatalf("with the context done: %v, %v; want context.Canceled", kr, err)
	}
}

// TestAttachRevocationsLinear: readKeys hands every key revocation of a
// keyring to attachRevocations, those go-crypto already put in place too,
// and each was looked for in its key's list by serializing that whole list
// again: 5,000 revocations of one key (880 KB) took 10 s, the 95,000 of a
// 16 MiB keyring about an hour (keys list of a KEYS file, or the CI gate
// reading a keyring a pull request changed). Counted in allocations, not
// timed: a revocation costs a few dozen, not some per revocation held.
func TestAttachRevocationsLinear(t *testing.T) {
	const n = 1000
	created := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	e, err := openpgp.NewEntity("R", "", "r@example.org", &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA, Time: func() time.Time { return created }})
	if err != nil {
		t.Fatal(err)
	}
	var revs []*packet.Signature
	var inPlace []*packet.VerifiableSignature
	for i := range n {
		reason := packet.KeySuperseded
		r := &packet.Signature{Version: 4, SigType: packet.SigTypeKeyRevocation, PubKeyAlgo: e.PrimaryKey.PubKeyAlgo, Hash: crypto.SHA256,
			CreationTime: created.Add(time.Duration(i) * time.Second), IssuerKeyId: &e.PrimaryKey.KeyId, IssuerFingerprint: e.PrimaryKey.Fingerprint, RevocationReason: &reason}
		if err := r.RevokeKey(e.PrimaryKey, e.PrivateKey, nil); err != nil {
			t.Fatal(err)
		}
		revs, inPlace = append(revs, r), append(inPlace, packet.NewVerifiableSig(r))
	}
	var held *openpgp.Entity
	allocs := testing.AllocsPerRun(1, func() {
		held = &openpgp.Entity{PrimaryKey: e.PrimaryKey, Revocations: slices.Clone(inPlace)}
		attachRevocations([]*openpgp.Entity{held}, revs)
	})
	if len(held.Revocations) != n {
		t.Fatalf("%d revocations after attaching the same %d again, want %d", len(held.Revocations), n, n)
	}
	if allocs > 100*n {
		t.Fatalf("attaching %d revocations a key already holds took %.0f allocations, want at most %d: each is compared with the whole list", n, allocs, 100*n)
	}
}

// TestSubkeyRevocationsMatched: a subkey revocation goes to the subkey it
// was made over, not to every subkey of its key (settle then verified
// revocations times subkeys signatures: a 232 KB key of 400 revoked
// subkeys took 10 s to load). One that stands after its own subkey stays
// there; moved behind another, it is found by verifying it against each
// subkey in turn, a bounded number of times.
func TestSubkeyRevocationsMatched(t *testing.T) {
	created := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	cfg := &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA, Time: func() time.Time { return created }}
	revokedKey := func(subkeys int) *openpgp.Entity {
		e, err := openpgp.NewEntity("R", "", "r@example.org", cfg)
		if err != nil {
			t.Fatal(err)
		}
		e.Subkeys = nil
		for range subkeys {
			if err := e.AddSigningSubkey(cfg); err != nil {
				t.Fatal(err)
			}
		}
		for i := range e.Subkeys {
			if err := e.Subkeys[i].Revoke(packet.KeyRetired, "", cfg); err != nil {
				t.Fatal(err)
			}
		}
		return e
	}
	// moved writes e with every subkey revocation after the last subkey.
	serialize := func(e *openpgp.Entity, moved bool) []byte {
		var in, out, revs bytes.Buffer
		if err := e.Serialize(&in); err != nil {
			t.Fatal(err)
		}
		for r := packet.NewOpaqueReader(&in); ; {
			p, err := r.Next()
			if err != nil {
				break
			}
			to := &out
			if moved && p.Tag == 2 && len(p.Contents) > 1 && p.Contents[1] == byte(packet.SigTypeSubkeyRevocation) {
				to = &revs
			}
			if err := p.Serialize(to); err != nil {
				t.Fatal(err)
			}
		}
		return append(out.Bytes(), revs.Bytes()...)
	}
	for _, moved := range []bool{false, true} {
		kr, err := ParseKeyring(bytes.NewReader(serialize(revokedKey(40), moved)), "revoked.gpg")
		if err != nil {
			t.Fatal(err)
		}
		for i, sk := range kr.entities[0].Subkeys {
			valid := 0
			for _, r := range sk.Revocations {
				if *r.Valid {
					valid++
				}
			}
			last := i == len(kr.entities[0].Subkeys)-1
			if valid != 1 || !moved && len(sk.Revocations) != 1 || moved && !last && len(sk.Revocations) != 1 {
				t.Fatalf("moved %v: subkey %d holds %d revocations, %d valid; want its own alone", moved, i, len(sk.Revocations), valid)
			}
		}
	}
	// 300 subkeys, their 299 revocations moved: more tries than allowed.
	_, err := ParseKeyring(bytes.NewReader(serialize(revokedKey(300), true)), "hostile.gpg")
	if !errors.Is(err, ErrKeyring) || !strings.Contains(err.Error(), "hostile.gpg: key ") || !strings.Contains(err.Error(), "299 subkey revocations stand away from the subkeys they revoke") {
		t.Fatalf("err = %v, want a refusal of the misplaced revocations", err)
	}
}
