package repo

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"path/filepath"
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

// TestKeyEndingBeforeValidUntilWarns: a signing key that expires before a
// Release's Valid-Until is warned about on each write: apt refuses the
// suite (EXPKEYSIG) from the key's expiry on, so a refresh timer set for
// Valid-Until would come too late. A key that outlives Valid-Until is not.
func TestKeyEndingBeforeValidUntilWarns(t *testing.T) {
	dir, root := testDirs(t)
	created := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	e, err := openpgp.NewEntity("repo", "", "repo@example.org", &packet.Config{
		Algorithm: packet.PubKeyAlgoEdDSA, Time: func() time.Time { return created }, KeyLifetimeSecs: 30 * 24 * 3600})
	if err != nil {
		t.Fatal(err)
	}
	deb := testDeb(t, dir, "app", "1", "amd64", "app")
	for _, tc := range []struct {
		validFor time.Duration
		warn     bool
	}{
		{7 * 24 * time.Hour, false},
		{60 * 24 * time.Hour, true},
	} {
		var logs bytes.Buffer
		change := testSettings("amd64")
		change.ValidFor = &tc.validFor
		now := created.Add(time.Hour)
		r := Open(filepath.Join(root, tc.validFor.String()), Options{Settings: change, Signer: &Signer{entities: []*openpgp.Entity{e}},
			Now: func() time.Time { now = now.Add(time.Minute); return now }, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		_, err := r.Publish(context.Background(), "s", "main", []Package{pkgOf(t, deb)})
		must(t, err)
		warned := strings.Contains(logs.String(), "cannot sign at this Release's Valid-Until") && strings.Contains(logs.String(), "expired on 2025-02-01") &&
			strings.Contains(logs.String(), fingerprint(e))
		if warned != tc.warn {
			t.Errorf("valid-for %s: warned %v, want %v; log:\n%s", tc.validFor, warned, tc.warn, logs.String())
		}
	}
}
