package openpgp

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
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
