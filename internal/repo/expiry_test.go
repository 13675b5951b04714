package repo

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
)

// TestExpiredKeySaysWhen: a repository key that has expired is refused
// with the day it expired, for InRelease and Release.gpg alike.
func TestExpiredKeySaysWhen(t *testing.T) {
	created := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	e, err := openpgp.NewEntity("repo", "", "repo@example.org", &packet.Config{
		Algorithm: packet.PubKeyAlgoEdDSA, Time: func() time.Time { return created }, KeyLifetimeSecs: 30 * 24 * 3600})
	if err != nil {
		t.Fatal(err)
	}
	s := &Signer{entities: []*openpgp.Entity{e}}
	if _, err := s.ClearSign([]byte("x\n"), created.Add(time.Hour)); err != nil {
		t.Fatalf("within its lifetime: %v", err)
	}
	later := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	for name, sign := range map[string]func() error{
		"InRelease":   func() error { _, err := s.ClearSign([]byte("x\n"), later); return err },
		"Release.gpg": func() error { _, err := s.DetachSign([]byte("x\n"), later); return err },
	} {
		err := sign()
		if !errors.Is(err, ErrKey) || !strings.Contains(err.Error(), "expired on 2025-02-01") {
			t.Errorf("%s: %v, want ErrKey saying \"expired on 2025-02-01\"", name, err)
		}
	}
}
