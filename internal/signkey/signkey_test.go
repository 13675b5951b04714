package signkey_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"

	"github.com/updeb/updeb/internal/repo"
	"github.com/updeb/updeb/internal/signkey"
	"github.com/updeb/updeb/internal/testkit/pgptest"
	"github.com/updeb/updeb/internal/testkit/testenv"
	verifypgp "github.com/updeb/updeb/pkg/verify/openpgp"
)

var created = time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC)

func generate(t *testing.T, kind repo.KeyType) (*signkey.Key, *repo.GeneratedKey) {
	t.Helper()
	g, err := repo.GenerateKey("Provenance Signer", "prov@example.org", kind, created, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k, err := signkey.Read(bytes.NewReader(g.SecretArmored), "key.asc")
	if err != nil {
		t.Fatal(err)
	}
	return k, g
}

func armored(t *testing.T, e *openpgp.Entity, private bool, cfg *packet.Config) *bytes.Buffer {
	t.Helper()
	var b bytes.Buffer
	typ := openpgp.PublicKeyType
	if private {
		typ = openpgp.PrivateKeyType
	}
	w, err := armor.Encode(&b, typ, nil)
	if err != nil {
		t.Fatal(err)
	}
	if private {
		err = e.SerializePrivateWithoutSigning(w, cfg)
	} else {
		err = e.Serialize(w)
	}
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	return &b
}

func TestReadRefusals(t *testing.T) {
	weak, err := openpgp.NewEntity("weak", "", "weak@example.com", &packet.Config{Algorithm: packet.PubKeyAlgoRSA, RSABits: 2048})
	if err != nil {
		t.Fatal(err)
	}
	ed := func() *openpgp.Entity {
		e, err := openpgp.NewEntity("ed", "", "ed@example.com", &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	locked := ed()
	if err := locked.EncryptPrivateKeys([]byte("secret"), nil); err != nil {
		t.Fatal(err)
	}
	// Two secret keys in one armored block.
	var two bytes.Buffer
	w, _ := armor.Encode(&two, openpgp.PrivateKeyType, nil)
	ed().SerializePrivateWithoutSigning(w, nil)
	ed().SerializePrivateWithoutSigning(w, nil)
	w.Close()
	// Two key files in one: cat a.secret.asc b.secret.asc.
	cat := armored(t, ed(), true, nil).String() + "\n" + armored(t, ed(), true, nil).String()
	// A secret key with its public key after it, in one file.
	both := ed()
	withPublic := armored(t, both, true, nil).String() + "\n" + armored(t, both, false, nil).String()
	// A secret key exported without --armor.
	var binary bytes.Buffer
	ed().SerializePrivateWithoutSigning(&binary, nil)
	// A public key in the binary form (apt's signed-by keyring, PREFIX.gpg).
	var binaryPublic bytes.Buffer
	ed().Serialize(&binaryPublic)
	for _, tc := range []struct {
		name, in string
		is       error
		want     string
	}{
		{"weak.asc", armored(t, weak, true, nil).String(), signkey.ErrWeakKey, "weak.asc: signing key too weak: RSA key of 2048 bits; apt needs 3072 or more (or use Ed25519)"},
		{"empty", "", signkey.ErrKey, "unusable signing key: empty: openpgp: invalid argument: no armored data found"},
		{"truncated", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nAAAA\n-----END PGP PRIVATE KEY BLOCK-----\n", signkey.ErrKey, "unusable signing key: truncated: openpgp: invalid data: tag byte does not have MSB set"},
		{"public.asc", armored(t, ed(), false, nil).String(), signkey.ErrKey, "is a public key; the secret key is needed to sign"},
		{"locked.asc", armored(t, locked, true, nil).String(), signkey.ErrKey, "is protected by a passphrase"},
		{"two.asc", two.String(), signkey.ErrKey, "two.asc: expected one key, found 2"},
		{"cat.asc", cat, signkey.ErrKey, "cat.asc: expected one key, found 2 (to sign with several, as in a key rotation, give each its own file: --key FILE for each, or repo: keys:)"},
		{"key.gpg", binary.String(), signkey.ErrKey, "key.gpg: a binary OpenPGP key (gpg --export-secret-keys without --armor); updeb reads the armored form: gpg --armor --export-secret-keys FINGERPRINT > key.gpg"},
		{"repo.gpg", binaryPublic.String(), signkey.ErrKey, "repo.gpg: a public key (binary, the form apt's signed-by reads); the secret key is needed to sign"},
	} {
		_, err := signkey.Read(strings.NewReader(tc.in), tc.name)
		if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Read(%s) = %v, want %v with %q", tc.name, err, tc.is, tc.want)
		}
	}
	if k, err := signkey.Read(strings.NewReader(withPublic), "with-public.asc"); err != nil || k.Fingerprint() != signkey.Fingerprint(both) {
		t.Errorf("Read(a secret key, then its public key) = %v, want the key", err)
	}
}

// DSSE signatures are deterministic, dated by the build (or by the key when
// it is younger), and what pkg/verify/openpgp and gpgv accept over the PAE bytes.
func TestDSSESignatures(t *testing.T) {
	testenv.RequireTool(t, "gpgv")
	for _, kind := range []repo.KeyType{repo.Ed25519, repo.RSA3072} {
		t.Run(string(kind), func(t *testing.T) {
			k, g := generate(t, kind)
			kr, err := verifypgp.ParseKeyring(bytes.NewReader(g.PublicArmored), "pub.asc")
			if err != nil {
				t.Fatal(err)
			}
			pae := []byte("DSSEv1 28 application/vnd.in-toto+json 2 {}")
			now := created.Add(400 * 24 * time.Hour)
			for _, tc := range []struct {
				name     string
				sde, was time.Time
			}{
				{"build after the key", created.Add(30 * 24 * time.Hour), created.Add(30 * 24 * time.Hour)},
				{"build before the key", time.Date(2024, 3, 14, 0, 0, 0, 0, time.UTC), created},
			} {
				s, err := k.DSSE(tc.sde, now)
				if err != nil {
					t.Fatal(err)
				}
				if s.KeyID() != g.Fingerprint || !s.Time().Equal(tc.was) {
					t.Fatalf("%s: keyid %s time %v, want %s %v", tc.name, s.KeyID(), s.Time(), g.Fingerprint, tc.was)
				}
				sig, err := s.Sign(pae)
				if err != nil {
					t.Fatal(err)
				}
				again, _ := s.Sign(pae)
				if !bytes.Equal(sig, again) {
					t.Fatalf("%s: two signatures of the same bytes differ", tc.name)
				}
				res, err := verifypgp.VerifyDetached(kr, verifypgp.Policy{Now: now, Signers: []string{g.Fingerprint}}, bytes.NewReader(sig), bytes.NewReader(pae))
				if err != nil {
					t.Fatalf("%s: pkg/verify/openpgp: %v", tc.name, err)
				}
				if !res.Created.Equal(tc.was) || res.Hash != "SHA-512" {
					t.Fatalf("%s: signature made %v with %s", tc.name, res.Created, res.Hash)
				}
				dir := t.TempDir()
				for n, b := range map[string][]byte{"pae": pae, "sig": sig, "pub.gpg": g.PublicBinary} {
					os.WriteFile(filepath.Join(dir, n), b, 0o644)
				}
				testenv.Run(t, "gpgv", "--keyring", filepath.Join(dir, "pub.gpg"), filepath.Join(dir, "sig"), filepath.Join(dir, "pae"))
				if _, err := verifypgp.VerifyDetached(kr, verifypgp.Policy{Now: now}, bytes.NewReader(sig), bytes.NewReader(append(pae, ' '))); !errors.Is(err, verifypgp.ErrSignature) {
					t.Fatalf("%s: signature verified over other bytes: %v", tc.name, err)
				}
			}
		})
	}
}

func TestDSSERefusesAKeyThatCannotSign(t *testing.T) {
	life := uint32(24 * 3600)
	cfg := &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA, KeyLifetimeSecs: life, Time: func() time.Time { return created }}
	e, err := openpgp.NewEntity("short", "", "short@example.com", cfg)
	if err != nil {
		t.Fatal(err)
	}
	k, err := signkey.Read(armored(t, e, true, cfg), "short.asc")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.DSSE(created, created.Add(time.Hour)); err != nil {
		t.Fatalf("a key valid now: %v", err)
	}
	if _, err := k.DSSE(created, created.Add(48*time.Hour)); !errors.Is(err, signkey.ErrCannotSign) || !strings.Contains(err.Error(), "unusable signing key: ") || !strings.Contains(err.Error(), "cannot sign at") {
		t.Fatalf("an expired key: %v", err)
	}
	if _, err := k.DSSE(created.Add(48*time.Hour), created.Add(time.Hour)); !errors.Is(err, signkey.ErrCannotSign) || !strings.Contains(err.Error(), "no signing key valid at or after") {
		t.Fatalf("a build after the key's expiry: %v", err)
	}
}

// TestCannotSignSaysWhy: a key whose signing subkey expired or was revoked
// (its primary certifying only, as gpg makes them) is named with the date,
// and so is a key made after the time it is to sign at.
func TestCannotSignSaysWhy(t *testing.T) {
	c := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(t time.Time) *packet.Config {
		return &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA, Time: func() time.Time { return t }}
	}
	certifyOnly := func() *openpgp.Entity {
		e, err := openpgp.NewEntity("k", "", "k@example.org", at(c))
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range e.Identities {
			id.SelfSignature.FlagSign = false
			if err := id.SelfSignature.SignUserId(id.UserId.Id, e.PrimaryKey, e.PrivateKey, at(c)); err != nil {
				t.Fatal(err)
			}
		}
		e.Subkeys = nil
		sub := at(c)
		sub.KeyLifetimeSecs = 30 * 24 * 3600
		if err := e.AddSigningSubkey(sub); err != nil {
			t.Fatal(err)
		}
		return e
	}
	expired := certifyOnly()
	revoked := certifyOnly()
	if err := revoked.RevokeSubkey(&revoked.Subkeys[0], packet.KeyCompromised, "lost", at(c.Add(24*time.Hour))); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		e    *openpgp.Entity
		t    time.Time
		want string
	}{
		{"valid", expired, c.Add(time.Hour), ""},
		{"signing subkey expired, primary valid", expired, c.Add(60 * 24 * time.Hour), "expired on 2025-02-01 (its signing subkeys)"},
		{"signing subkey revoked, primary valid", revoked, c.Add(2 * 24 * time.Hour), "was revoked on 2025-01-03 (its signing subkeys)"},
		{"made after the signing time", expired, c.Add(-time.Hour), "is valid only from 2025-01-02 (is the clock right?)"},
	} {
		if got := signkey.CannotSign(tc.e, tc.t); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestDSSESignsWithTheSubkeyValidNow: a record of an old release, built
// after the key's first signing subkey was revoked (no reason given: for all
// time) and a new one added, is signed by the new subkey, dated by its
// creation, and verifies; not by the revoked subkey dated by the release,
// which updeb verify-provenance refuses.
func TestDSSESignsWithTheSubkeyValidNow(t *testing.T) {
	testenv.RequireTool(t, "gpg")
	s := pgptest.NewSigner(t)
	s.GPG("--faked-system-time=20200101T000000!", "--quick-gen-key", "P <p@example.org>", "ed25519", "cert", "never")
	fpr := strings.TrimSuffix(strings.Fields(strings.Split(s.GPG("--with-colons", "--list-keys", "<p@example.org>"), "fpr:::::::::")[1])[0], ":")
	s.GPG("--faked-system-time=20200101T000100!", "--quick-add-key", fpr, "ed25519", "sign", "never")
	s.GPG("--faked-system-time=20240101T000000!", "--quick-add-key", fpr, "ed25519", "sign", "never")
	s.GPGInput("key 1\nrevkey\ny\n0\n\ny\nsave\n", "--faked-system-time=20250101T000000!", "--command-fd", "0", "--edit-key", fpr)
	k, err := signkey.Read(strings.NewReader(s.GPG("--armor", "--export-secret-keys", fpr)), "k")
	if err != nil {
		t.Fatal(err)
	}
	kr, err := verifypgp.ParseKeyring(strings.NewReader(s.GPG("--armor", "--export", fpr)), "pub")
	if err != nil {
		t.Fatal(err)
	}
	newSub := signkey.KeyFingerprint(k.Entity.Subkeys[1].PublicKey)
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	d, err := k.DSSE(time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC), now)
	if err != nil {
		t.Fatal(err)
	}
	pae := []byte("DSSEv1 28 application/vnd.in-toto+json 2 {}")
	sig, err := d.Sign(pae)
	if err != nil {
		t.Fatal(err)
	}
	res, err := verifypgp.VerifyDetached(kr, verifypgp.Policy{Now: now}, bytes.NewReader(sig), bytes.NewReader(pae))
	if err != nil || res.SigningKeyFingerprint != newSub || !res.Created.Equal(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("record of a 2022 release signed in 2026: %+v, %v; want signed by the new subkey %s at its creation", res, err, newSub)
	}
}

// gpgKey makes with gpg a key P <p@example.org> that only certifies, and a
// signing subkey of subkey ("ed25519", "rsa1024"), protected by passphrase
// ("": none), and returns its primary fingerprint and the signer.
func gpgKey(t *testing.T, subkey, passphrase string) (*pgptest.Signer, string) {
	t.Helper()
	s := pgptest.NewSigner(t)
	s.GPG("--passphrase", passphrase, "--quick-gen-key", "P <p@example.org>", "ed25519", "cert", "never")
	fpr := strings.TrimSuffix(strings.Fields(strings.Split(s.GPG("--with-colons", "--list-keys", "<p@example.org>"), "fpr:::::::::")[1])[0], ":")
	s.GPG("--passphrase", passphrase, "--quick-add-key", fpr, subkey, "sign", "never")
	return s, fpr
}

// A key exported with gpg --export-secret-subkeys (the primary key's secret
// left offline, as a stub gpg writes unprotected) whose signing subkey is
// protected by a passphrase is refused as a protected key, naming the
// subkey, when read, not by a signature failing later with go-crypto's
// "signing key ... is encrypted".
func TestReadRefusesAProtectedSigningSubkey(t *testing.T) {
	testenv.RequireTool(t, "gpg")
	s, fpr := gpgKey(t, "ed25519", "secret")
	in := s.GPG("--passphrase", "secret", "--armor", "--export-secret-subkeys", fpr)
	_, err := signkey.Read(strings.NewReader(in), "sub.asc")
	if !errors.Is(err, signkey.ErrKey) || !strings.Contains(err.Error(), "sub.asc: signing subkey ") || !strings.Contains(err.Error(), "of key "+fpr+" is protected by a passphrase") {
		t.Fatalf("Read(subkeys of a protected key) = %v, want the signing subkey named as protected by a passphrase", err)
	}
	// The same export of an unprotected key (the primary's secret left
	// offline) reads and signs with the subkey.
	s, fpr = gpgKey(t, "ed25519", "")
	k, err := signkey.Read(strings.NewReader(s.GPG("--armor", "--export-secret-subkeys", fpr)), "sub.asc")
	if err != nil {
		t.Fatal(err)
	}
	d, err := k.DSSE(created, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Sign([]byte("x")); err != nil {
		t.Fatal(err)
	}
}

// A strong primary key whose signing subkey is RSA-1024 (the subkey makes
// every signature) is refused as a weak key is, naming the subkey: sqv,
// which newer apt verifies with, refuses its signatures ("Policy rejected
// asymmetric algorithm"), where gpgv still says Good signature.
func TestReadRefusesAWeakSigningSubkey(t *testing.T) {
	testenv.RequireTool(t, "gpg")
	s, fpr := gpgKey(t, "rsa1024", "")
	_, err := signkey.Read(strings.NewReader(s.GPG("--armor", "--export-secret-keys", fpr)), "k.asc")
	if !errors.Is(err, signkey.ErrWeakKey) || !strings.Contains(err.Error(), "k.asc: signing subkey ") || !strings.Contains(err.Error(), "of key "+fpr+": signing key too weak: RSA key of 1024 bits") {
		t.Fatalf("Read(RSA-1024 signing subkey) = %v, want ErrWeakKey naming the subkey", err)
	}
}

// A key file whose newest signing subkey, the one that signs, is a stub
// (its secret deleted, or on a smartcard) is refused by the DSSE signer
// and by the repository's, naming the subkey, exit 2's ErrKey: signing
// failed with go-crypto's "s2k GNU dummy key: dummy key found", exit 1.
func TestSigningSubkeyStubRefused(t *testing.T) {
	testenv.RequireTool(t, "gpg")
	s, fpr := gpgKey(t, "ed25519", "")
	s.GPG("--faked-system-time=20300101T000000!", "--quick-add-key", fpr, "ed25519", "sign", "never")
	subs := strings.Split(s.GPG("--with-colons", "--list-keys", fpr), "fpr:::::::::")
	newest := strings.TrimSuffix(strings.Fields(subs[3])[0], ":")
	s.GPG("--yes", "--delete-secret-keys", newest+"!")
	file := s.GPG("--armor", "--export-secret-keys", fpr)
	k, err := signkey.Read(strings.NewReader(file), "k.asc")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	want := "the file holds no secret for its signing subkey " + newest + " (the newest, which signs, as gpg picks), only a stub"
	if _, err := k.DSSE(now, now); !errors.Is(err, signkey.ErrKey) || !strings.Contains(err.Error(), want) {
		t.Errorf("DSSE with a stub signing subkey = %v, want ErrKey with %q", err, want)
	}
	r, err := repo.ReadSigner(strings.NewReader(file), "k.asc")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.ClearSign([]byte("Origin: x\n"), now); !errors.Is(err, signkey.ErrKey) || !strings.Contains(err.Error(), want) {
		t.Errorf("ClearSign with a stub signing subkey = %v, want ErrKey with %q", err, want)
	}
}

// A key whose expiry was extended (gpg --quick-set-expire, as a key that
// expires each year is kept alive) holds only the self-signature of the
// extension: gpg replaces the older ones. A record of a release from before
// the extension was refused ("has no signing key valid at or after" the
// release date), so such a key signed no record of an older release; it is
// now dated by that self-signature (or subkey binding), which gpgv, sqv and
// pkg/verify/openpgp accept. A release after it is dated by the release.
func TestDSSEWithAnExtendedKey(t *testing.T) {
	testenv.RequireTool(t, "gpg")
	testenv.RequireTool(t, "gpgv")
	testenv.RequireTool(t, "sqv")
	extended := time.Date(2020, 12, 1, 0, 0, 0, 0, time.UTC)
	for _, subkey := range []bool{false, true} {
		s := pgptest.NewSigner(t)
		usage := "sign"
		if subkey {
			usage = "cert"
		}
		s.GPG("--faked-system-time=20200101T000000!", "--quick-gen-key", "P <p@example.org>", "ed25519", usage, "1y")
		fpr := strings.TrimSuffix(strings.Fields(strings.Split(s.GPG("--with-colons", "--list-keys", "<p@example.org>"), "fpr:::::::::")[1])[0], ":")
		if subkey {
			s.GPG("--faked-system-time=20200101T000100!", "--quick-add-key", fpr, "ed25519", "sign", "1y")
		}
		s.GPG("--faked-system-time=20201201T000000!", "--quick-set-expire", fpr, "2030-01-01")
		if subkey {
			s.GPG("--faked-system-time=20201201T000000!", "--quick-set-expire", fpr, "2030-01-01", "*")
		}
		k, err := signkey.Read(strings.NewReader(s.GPG("--armor", "--export-secret-keys", fpr)), "k")
		if err != nil {
			t.Fatal(err)
		}
		pub := s.GPG("--export", fpr)
		kr, err := verifypgp.ParseKeyring(strings.NewReader(pub), "pub")
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		pae := []byte("DSSEv1 28 application/vnd.in-toto+json 2 {}")
		os.WriteFile(filepath.Join(dir, "pae"), pae, 0o644)
		os.WriteFile(filepath.Join(dir, "pub.gpg"), []byte(pub), 0o644)
		now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
		for _, tc := range []struct{ release, was time.Time }{
			{time.Date(2020, 6, 1, 0, 0, 0, 0, time.UTC), extended},
			{time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC)},
		} {
			d, err := k.DSSE(tc.release, now)
			if err != nil {
				t.Fatalf("subkey %v: a record of the release of %s: %v", subkey, tc.release.Format(time.DateOnly), err)
			}
			sig, err := d.Sign(pae)
			if err != nil {
				t.Fatal(err)
			}
			res, err := verifypgp.VerifyDetached(kr, verifypgp.Policy{Now: now}, bytes.NewReader(sig), bytes.NewReader(pae))
			if err != nil || !res.Created.Equal(tc.was) {
				t.Fatalf("subkey %v: release of %s: %+v, %v; want a good signature made %s", subkey, tc.release.Format(time.DateOnly), res, err, tc.was)
			}
			os.WriteFile(filepath.Join(dir, "sig"), sig, 0o644)
			testenv.Run(t, "gpgv", "--keyring", filepath.Join(dir, "pub.gpg"), filepath.Join(dir, "sig"), filepath.Join(dir, "pae"))
			testenv.Run(t, "sqv", "--keyring", filepath.Join(dir, "pub.gpg"), filepath.Join(dir, "sig"), filepath.Join(dir, "pae"))
		}
	}
}
