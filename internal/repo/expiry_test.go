package repo

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/packet"

	"github.com/updeb/updeb/internal/signkey"
	"github.com/updeb/updeb/internal/testkit/pgptest"
	"github.com/updeb/updeb/internal/testkit/testenv"
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
		if !errors.Is(err, ErrKey) || !errors.Is(err, signkey.ErrCannotSign) || !strings.Contains(err.Error(), "expired on 2025-02-01") {
			t.Errorf("%s: %v, want ErrKey saying \"expired on 2025-02-01\"", name, err)
		}
	}
}

// TestKeyEndingBeforeValidUntilWarns: a signing key that expires before a
// Release's Valid-Until is warned about on each write: apt refuses the
// suite (EXPKEYSIG) from the key's expiry on, so a refresh timer set for
// Valid-Until would come too late. A key that outlives Valid-Until, and
// signkey.ExpiresSoon, is not.
func TestKeyEndingBeforeValidUntilWarns(t *testing.T) {
	dir, root := testDirs(t)
	created := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	e, err := openpgp.NewEntity("repo", "", "repo@example.org", &packet.Config{
		Algorithm: packet.PubKeyAlgoEdDSA, Time: func() time.Time { return created }, KeyLifetimeSecs: 90 * 24 * 3600})
	if err != nil {
		t.Fatal(err)
	}
	deb := testDeb(t, dir, "app", "1", "amd64", "app")
	for _, tc := range []struct {
		validFor time.Duration
		warn     bool
	}{
		{7 * 24 * time.Hour, false},
		{100 * 24 * time.Hour, true},
	} {
		var logs bytes.Buffer
		change := testSettings("amd64")
		change.ValidFor = &tc.validFor
		now := created.Add(time.Hour)
		r := Open(filepath.Join(root, tc.validFor.String()), Options{Settings: change, Signer: &Signer{entities: []*openpgp.Entity{e}},
			Now: func() time.Time { now = now.Add(time.Minute); return now }, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		_, err := r.Publish(context.Background(), "s", "main", []Package{pkgOf(t, deb)})
		must(t, err)
		warned := strings.Contains(logs.String(), "expires on 2025-04-02T03:04:05Z, before this Release's Valid-Until") &&
			strings.Contains(logs.String(), fingerprint(e))
		if warned != tc.warn {
			t.Errorf("valid-for %s: warned %v, want %v; log:\n%s", tc.validFor, warned, tc.warn, logs.String())
		}
	}
}

// gpgKey is a signing key made by the real gpg, with its primary and subkey
// fingerprints.
type gpgKey struct {
	signer  *Signer
	primary string
	subkeys []string // in the order they were added
}

// newGPGKey makes the key of uid in s with gpg, its clock frozen at each
// step's time (YYYYMMDDTHHMMSS): the primary key with usage and expiry
// (gpg's words: "sign,cert", "cert"; "2y", "20d"), then one signing subkey
// per expiry of subs, a minute apart (the newest is the one that signs),
// and reads its exported secret key as updeb does.
func newGPGKey(t *testing.T, s *pgptest.Signer, uid, at, usage, expire string, subs ...string) gpgKey {
	t.Helper()
	clock, err := time.Parse("20060102T150405", at)
	must(t, err)
	faked := func() string { return "--faked-system-time=" + clock.Format("20060102T150405") + "!" }
	s.GPG(faked(), "--quick-gen-key", uid, "ed25519", usage, expire)
	email := uid[strings.Index(uid, "<"):]
	export := func() *Signer {
		signer, err := ReadSigner(strings.NewReader(s.GPG("--armor", "--export-secret-keys", email)), uid)
		must(t, err)
		return signer
	}
	k := gpgKey{primary: export().Fingerprints()[0]}
	for _, exp := range subs {
		clock = clock.Add(time.Minute)
		s.GPG(faked(), "--quick-add-key", k.primary, "ed25519", "sign", exp)
	}
	k.signer = export()
	for _, sub := range k.signer.entities[0].Subkeys {
		k.subkeys = append(k.subkeys, signkey.KeyFingerprint(sub.PublicKey))
	}
	return k
}

// TestKeyEndingBeforeValidUntilWarnsGPG: keys made by gpg whose signature
// stops verifying before the Release's Valid-Until (primary key expiring,
// the only signing subkey expiring before its primary, the newest signing
// subkey, the one that signs, expiring before an older one) are warned
// about, naming the key that signs and when it expires; a key whose
// signing subkey outlives Valid-Until is not.
func TestKeyEndingBeforeValidUntilWarnsGPG(t *testing.T) {
	dir, root := testDirs(t)
	s := pgptest.NewSigner(t)
	deb := testDeb(t, dir, "app", "1", "amd64", "app")
	const at = "20240801T000000" // before the test clock's 2024-08-14
	for _, tc := range []struct {
		name string
		key  gpgKey
		warn string // "": no warning; else the key named and its expiry
	}{
		{"primary", newGPGKey(t, s, "P <p@example.org>", at, "sign,cert", "30d"), "P 2024-08-31T00:00:00Z"},
		{"subkey", newGPGKey(t, s, "S <s@example.org>", at, "cert", "2y", "30d"), "S0 2024-08-31T00:01:00Z"},
		{"newest subkey", newGPGKey(t, s, "N <n@example.org>", at, "cert", "2y", "1y", "30d"), "N1 2024-08-31T00:02:00Z"},
		{"outlives", newGPGKey(t, s, "O <o@example.org>", at, "cert", "2y", "1y"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			change := testSettings("amd64")
			change.ValidFor = ptr(60 * 24 * time.Hour)
			r := Open(filepath.Join(root, strings.ReplaceAll(tc.name, " ", "-")), Options{Settings: change, Signer: tc.key.signer,
				Now: testClock(), Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			_, err := r.Publish(context.Background(), "s", "main", []Package{pkgOf(t, deb)})
			must(t, err)
			if tc.warn == "" {
				if strings.Contains(logs.String(), "level=WARN") {
					t.Errorf("warned about a key that outlives Valid-Until:\n%s", logs.String())
				}
				return
			}
			name, when, _ := strings.Cut(tc.warn, " ")
			want := "the signing key " + tc.key.primary
			if len(name) > 1 {
				want += " (its signing subkey " + tc.key.subkeys[name[1]-'0'] + ")"
			}
			want += " expires on " + when + ", before this Release's Valid-Until"
			if !strings.Contains(logs.String(), want) {
				t.Errorf("want a warning saying %q; log:\n%s", want, logs.String())
			}
		})
	}
}

// TestKeyExpiringSoonWarns: without a Valid-Until, a publish and a refresh
// signed by a gpg-made key that expires within signkey.ExpiresSoon warn,
// saying when and what to do; one that expires later does not.
func TestKeyExpiringSoonWarns(t *testing.T) {
	dir, root := testDirs(t)
	s := pgptest.NewSigner(t)
	deb := testDeb(t, dir, "app", "1", "amd64", "app")
	const at = "20240801T000000" // the test clock starts on 2024-08-14
	for _, tc := range []struct {
		expire string
		warn   bool
	}{
		{"30d", true},
		{"60d", false},
	} {
		t.Run(tc.expire, func(t *testing.T) {
			key := newGPGKey(t, s, "K"+tc.expire+" <k"+tc.expire+"@example.org>", at, "sign,cert", tc.expire)
			var logs bytes.Buffer
			r := Open(filepath.Join(root, tc.expire), Options{Settings: testSettings("amd64"), Signer: key.signer,
				Now: testClock(), Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			_, err := r.Publish(context.Background(), "s", "main", []Package{pkgOf(t, deb)})
			must(t, err)
			_, err = r.Refresh(context.Background(), nil)
			must(t, err)
			want := "the signing key " + key.primary + " expires on 2024-08-31T00:00:00Z, within 30 days: apt refuses the suite (EXPKEYSIG) from then on; extend its expiry (gpg --quick-set-expire"
			if n := strings.Count(logs.String(), want); tc.warn && n != 2 || !tc.warn && strings.Contains(logs.String(), "level=WARN") {
				t.Errorf("key expiring in %s: want a warning on the publish and on the refresh (%v) saying %q; log:\n%s", tc.expire, tc.warn, want, logs.String())
			}
		})
	}
}

// TestExpiredKeyAptRefuses runs what docs/operations.md says of a key that
// expires, with apt (gpgv) at a clock moved on by faketime: a suite signed
// by a gpg-made key is refused once the key has expired (EXPKEYSIG, "is not
// signed", exit 100; one that updated before keeps its old indexes), without
// Valid-Until; extended with gpg
// --quick-set-expire and exported again, the next refresh puts the extended
// key in archive-keyring.gpg, and a client given it updates, while one that
// kept the old keyring is still refused.
func TestExpiredKeyAptRefuses(t *testing.T) {
	testenv.RequireTool(t, "faketime")
	dir, root := testDirs(t)
	s := pgptest.NewSigner(t)
	deb := testDeb(t, dir, "app", "1", "amd64", "app")
	key := newGPGKey(t, s, "X <x@example.org>", "20240801T000000", "sign,cert", "30d") // expires 2024-08-31
	clock := testClock()
	r := Open(root, Options{Settings: testSettings("amd64"), Signer: key.signer, Now: clock, Logger: slog.New(slog.DiscardHandler)})
	_, err := r.Publish(context.Background(), "s", "main", []Package{pkgOf(t, deb)})
	must(t, err)
	update := func(a *aptClient, at string) (string, error) {
		return a.run("faketime", at, "apt-get", "update", "-q")
	}
	old := newAptClient(t, root, "s", "main")
	if out, err := update(old, "2024-08-30 00:00:00"); err != nil || strings.Contains(out, "W: ") {
		t.Fatalf("before the key expires: %v\n%s", err, out)
	}
	// A new client fails (exit 100); one that updated before warns and
	// keeps its old indexes (exit 0: stuck, quietly).
	refused := func(a *aptClient, what string, fails bool, says string) {
		t.Helper()
		out, err := update(a, "2024-09-01 00:00:00")
		if (err != nil) != fails || !strings.Contains(out, "EXPKEYSIG") || !strings.Contains(out, says) {
			t.Errorf("%s, after the key expired: %v, want EXPKEYSIG and %q\n%s", what, err, says, out)
		}
	}
	refused(newAptClient(t, root, "s", "main"), "a new client", true, "is not signed")

	s.GPG("--faked-system-time=20240810T000000!", "--quick-set-expire", key.primary, "1y")
	extended, err := ReadSigner(strings.NewReader(s.GPG("--armor", "--export-secret-keys", key.primary)), "extended")
	must(t, err)
	r = Open(root, Options{Signer: extended, Now: clock, Logger: slog.New(slog.DiscardHandler)})
	_, err = r.Refresh(context.Background(), nil)
	must(t, err)
	if out, err := update(newAptClient(t, root, "s", "main"), "2024-09-01 00:00:00"); err != nil || strings.Contains(out, "W: ") {
		t.Errorf("a client given the extended key: %v\n%s", err, out)
	}
	refused(old, "a client that kept the old archive-keyring.gpg", false, "the previous index files will be used")
}

// TestValidForUnderAMinuteRefused: a valid-for under aptname.MinValidFor (1ns from a
// config, 30s from a flag) would write a Valid-Until at or a few seconds
// after Date, which apt finds expired: it is refused, the repository
// untouched; 0 (none) and a minute are accepted.
func TestValidForUnderAMinuteRefused(t *testing.T) {
	dir, root := testDirs(t)
	deb := testDeb(t, dir, "app", "1", "amd64", "app")
	for _, tc := range []struct {
		validFor time.Duration
		ok       bool
	}{{time.Nanosecond, false}, {30 * time.Second, false}, {0, true}, {time.Minute, true}} {
		change := testSettings("amd64")
		change.ValidFor = &tc.validFor
		dst := filepath.Join(root, tc.validFor.String())
		_, err := Open(dst, Options{Settings: change, Signer: testSigner(t), Now: testClock()}).Publish(context.Background(), "s", "main", []Package{pkgOf(t, deb)})
		switch {
		case tc.ok && err != nil:
			t.Errorf("valid-for %v: %v", tc.validFor, err)
		case !tc.ok && (!errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "is under 1m0s")):
			t.Errorf("valid-for %v: %v, want ErrInvalid saying it is under a minute", tc.validFor, err)
		case !tc.ok:
			if _, serr := os.Stat(filepath.Join(dst, "dists")); serr == nil {
				t.Errorf("valid-for %v: refused, but dists/ was written", tc.validFor)
			}
		}
	}
}

// TestExpiredKeyRefusedBeforeWriting: a publish signed by a key that has
// expired is refused before it writes anything: the repository's tree is
// as it was (it kept the folders of the staged pool files, in .updeb and
// pool/), and a new repository folder is not made.
func TestExpiredKeyRefusedBeforeWriting(t *testing.T) {
	dir, root := testDirs(t)
	ctx := context.Background()
	_, err := realRepo(t, root, testSettings("amd64"), nil).Publish(ctx, "s", "main", []Package{pkgOf(t, testDeb(t, dir, "app", "1", "amd64", "v1"))})
	must(t, err)
	tree := func(root string) []string {
		t.Helper()
		var out []string
		filepath.WalkDir(root, func(path string, _ fs.DirEntry, err error) error {
			out = append(out, path)
			return err
		})
		return out
	}
	before := tree(root)
	created := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	e, err := openpgp.NewEntity("repo", "", "repo@example.org", &packet.Config{
		Algorithm: packet.PubKeyAlgoEdDSA, Time: func() time.Time { return created }, KeyLifetimeSecs: 30 * 24 * 3600})
	must(t, err)
	expired := &Signer{entities: []*openpgp.Entity{e}}
	fresh := filepath.Join(dir, "new-repo")
	for _, root := range []string{root, fresh} {
		change := testSettings("amd64")
		change.AllowFieldChange = true
		_, err = realRepo(t, root, change, expired).Publish(ctx, "s", "extra", []Package{pkgOf(t, testDeb(t, dir, "other", "1", "amd64", "v1"))})
		if !errors.Is(err, signkey.ErrCannotSign) {
			t.Fatalf("publish with an expired key: %v, want ErrCannotSign", err)
		}
	}
	if after := tree(root); !slices.Equal(before, after) {
		t.Errorf("a publish refused for an expired key changed the repository's tree:\nbefore %v\nafter  %v", before, after)
	}
	if _, err := os.Stat(fresh); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a publish refused for an expired key made the repository folder: %v", err)
	}
}

// TestKeyringKeepsTheExtendedKey: a key extended (gpg --quick-set-expire)
// and put in by a write to one of its suites stays extended in
// archive-keyring.gpg when another key writes another suite, though a
// third suite, not written since, still holds the key as it was: the
// keyring took each key's first copy, that suite's (it sorts first), and a
// client given the keyring then refused every suite of the key once its
// old expiry passed (EXPKEYSIG), with apt (gpgv) at a clock moved on by
// faketime.
func TestKeyringKeepsTheExtendedKey(t *testing.T) {
	testenv.RequireTool(t, "faketime")
	dir, root := testDirs(t)
	ctx := context.Background()
	s := pgptest.NewSigner(t)
	deb := pkgOf(t, testDeb(t, dir, "app", "1", "amd64", "app"))
	key := newGPGKey(t, s, "X <x@example.org>", "20240801T000000", "sign,cert", "30d") // expires 2024-08-31
	clock := testClock()
	open := func(signer *Signer) *Repo {
		return Open(root, Options{Settings: testSettings("amd64"), Signer: signer, Now: clock, Logger: slog.New(slog.DiscardHandler)})
	}
	for _, suite := range []string{"lts", "production"} {
		_, err := open(key.signer).Publish(ctx, suite, "main", []Package{deb})
		must(t, err)
	}
	s.GPG("--faked-system-time=20240810T000000!", "--quick-set-expire", key.primary, "1y")
	extended, err := ReadSigner(strings.NewReader(s.GPG("--armor", "--export-secret-keys", key.primary)), "extended")
	must(t, err)
	_, err = open(extended).Refresh(ctx, []string{"production"})
	must(t, err)
	_, err = open(testSigner(t)).Publish(ctx, "staging", "main", []Package{deb})
	must(t, err)
	for _, suite := range []string{"production", "lts"} {
		a := newAptClient(t, root, suite, "main") // trusts archive-keyring.gpg as it is now
		if out, err := a.run("faketime", "2024-09-01 00:00:00", "apt-get", "update", "-q"); err != nil || strings.Contains(out, "W: ") {
			t.Errorf("a client of %s given the keyring after the key was extended, once its old expiry passed: %v\n%s", suite, err, out)
		}
	}
}
