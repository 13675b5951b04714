package dsse_test

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"os"

	"github.com/updeb/updeb/pkg/dsse"
)

type ed25519Signer struct{ key ed25519.PrivateKey }

func (s ed25519Signer) KeyID() string                   { return "demo-key" }
func (s ed25519Signer) Sign(pae []byte) ([]byte, error) { return ed25519.Sign(s.key, pae), nil }

// Sign a payload, write the envelope, read it back and verify it.
func Example() {
	key := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	env, err := dsse.Sign("text/plain", []byte("hello"), ed25519Signer{key})
	if err != nil {
		panic(err)
	}
	data, _ := env.Marshal()
	os.Stdout.Write(data)

	read, err := dsse.Parse(data)
	if err != nil {
		panic(err)
	}
	sig, err := read.Verify(func(s dsse.Signature, pae []byte) error {
		if !ed25519.Verify(key.Public().(ed25519.PublicKey), pae, s.Sig) {
			return errors.New("bad signature")
		}
		return nil
	})
	fmt.Println(sig.KeyID, err)
	// Output:
	// {"payloadType":"text/plain","payload":"aGVsbG8=","signatures":[{"keyid":"demo-key","sig":"B4D+2ATo12ush7BuYeTqpk1LWCQP1k7YEVlvpl+2zZlYlpRQUadEg5LdEDD6FlStZ4LfTmYRYBvEwJ5rlQOyBA=="}]}
	// demo-key <nil>
}
