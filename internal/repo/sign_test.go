package repo

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"

	"github.com/updeb/updeb/internal/signkey"
	"github.com/updeb/updeb/internal/testkit/pgptest"
	"github.com/updeb/updeb/internal/testkit/testenv"
)

func TestGenerateKeyAndSignVerifiedByGpgv(t *testing.T) {
	testenv.RequireTool(t, "gpg", "gpgv")
	for _, kind := range []KeyType{Ed25519, RSA3072} {
		t.Run(string(kind), func(t *testing.T) {
			dir := t.TempDir()
			k, err := GenerateKey("Repo Signer", "repo@example.com", kind, time.Unix(1700000000, 0), rand.Reader)
			must(t, err)
			keyring := filepath.Join(dir, "keyring.gpg")
			must(t, os.WriteFile(keyring, k.PublicBinary, 0o644))
			shown := string(testenv.Run(t, "gpg", "--homedir", dir, "--with-colons", "--show-keys", keyring))
			if !strings.Contains(shown, k.Fingerprint) || !strings.Contains(shown, "Repo Signer <repo@example.com>") || strings.Contains(shown, "\nsub:") {
				t.Fatalf("gpg --show-keys: want fingerprint %s, the user ID and no subkey:\n%s", k.Fingerprint, shown)
			}
			s, err := ReadSigner(bytes.NewReader(k.SecretArmored), "key")
			must(t, err)
			release := []byte("Origin: test\nSuite: s\n-dash: line\n")
			when := time.Date(2024, 8, 14, 0, 0, 0, 0, time.UTC)
			in, err := s.ClearSign(release, when)
			must(t, err)
			det, err := s.DetachSign(release, when)
			must(t, err)
			must(t, os.WriteFile(filepath.Join(dir, "InRelease"), in, 0o644))
			must(t, os.WriteFile(filepath.Join(dir, "Release"), release, 0o644))
			must(t, os.WriteFile(filepath.Join(dir, "Release.gpg"), det, 0o644))
			testenv.Run(t, "gpgv", "--keyring", keyring, filepath.Join(dir, "InRelease"))
			testenv.Run(t, "gpgv", "--keyring", keyring, filepath.Join(dir, "Release.gpg"), filepath.Join(dir, "Release"))

			// Deterministic: same data and time, same signature bytes; the
			// signature carries the given time.
			again, err := s.ClearSign(release, when)
			must(t, err)
			if !bytes.Equal(in, again) {
				t.Errorf("two clearsignatures of the same Release at the same time differ")
			}
			block, _ := armor.Decode(bytes.NewReader(det))
			p, err := packet.Read(block.Body)
			must(t, err)
			sig := p.(*packet.Signature)
			if !sig.CreationTime.Equal(when) || sig.Hash != crypto.SHA512 || len(sig.Notations) != 0 {
				t.Errorf("signature time %v hash %v notations %d; want %v, SHA-512, none", sig.CreationTime, sig.Hash, len(sig.Notations), when)
			}
		})
	}
}

func TestWeakKeysRefused(t *testing.T) {
	for _, s := range []string{"rsa2048", "rsa1024", "dsa"} {
		if _, err := ParseKeyType(s); !errors.Is(err, ErrWeakKey) {
			t.Errorf("ParseKeyType(%q) = %v, want ErrWeakKey", s, err)
		}
	}
	if _, err := ParseKeyType("ed448x"); !errors.Is(err, ErrInvalid) {
		t.Errorf("ParseKeyType(ed448x) = %v, want ErrInvalid", err)
	}
}

// TestGenerateKeyUserID: keys generate makes a user ID gpg would make,
// unicode and quotes in the name included, and refuses one gpg refuses
// (an address that is no LOCAL@DOMAIN, a blank name) or that prints as
// more than one line.
func TestGenerateKeyUserID(t *testing.T) {
	for _, c := range []struct {
		name, email string
		ok          bool
	}{
		{`Zoë "Q" Repo`, "zoë@example.org", true},
		{"Repo", "repo@localhost", true},
		{"Name <x>", "repo@example.org", false},
		{"Line\nBreak", "repo@example.org", false},
		{"  ", "repo@example.org", false},
		{"Repo", "@", false},
		{"Repo", "repo@", false},
		{"Repo", "@example.org", false},
		{"Repo", "a b@example.org", false},
		{"Repo", "a@b@example.org", false},
		{"Repo", "repo@example.org\n", false},
		{"Zo\xeb", "repo@example.org", false},
	} {
		_, err := GenerateKey(c.name, c.email, Ed25519, time.Unix(1700000000, 0), rand.Reader)
		if c.ok != (err == nil) || err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("GenerateKey(%q, %q) = %v, want ok %v", c.name, c.email, err, c.ok)
		}
	}
}

// TestSHA1BoundKeyWarned: a key whose self-signature is SHA-1 (gpg before
// 2.1, or --cert-digest-algo SHA1) signs with a warning on every write:
// gpgv accepts its signatures, sqv, newer apt's verifier, refuses them all.
// Once gpg has made new self-signatures, as the warning says, no warning,
// and sqv accepts the suite.
func TestSHA1BoundKeyWarned(t *testing.T) {
	testenv.RequireTool(t, "gpg", "sqv")
	dir, root := testDirs(t)
	deb := testDeb(t, dir, "app", "1", "amd64", "app")
	s := pgptest.NewSigner(t)
	faked := "--faked-system-time=20240801T000000!" // before the test clock's 2024-08-14
	s.GPG(faked, "--cert-digest-algo", "SHA1", "--quick-gen-key", "Old <old@example.org>", "ed25519", "sign", "2y")
	publish := func(repo string) (*Signer, string) {
		signer, err := ReadSigner(strings.NewReader(s.GPG("--armor", "--export-secret-keys", "<old@example.org>")), "old")
		must(t, err)
		var logs bytes.Buffer
		r := Open(filepath.Join(root, repo), Options{Settings: testSettings("amd64"), Signer: signer, Now: testClock(), Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		_, err = r.Publish(context.Background(), "s", "main", []Package{pkgOf(t, deb)})
		must(t, err)
		return signer, logs.String()
	}
	const want = "is bound by a SHA-1 self-signature: gpgv accepts its signatures, sqv (newer apt's verifier in place of gpgv) refuses every one; make new self-signatures: gpg --cert-digest-algo SHA512 --quick-set-expire"
	signer, logs := publish("sha1")
	if !strings.Contains(logs, want) {
		t.Errorf("publish signed by a SHA-1 bound key: want a warning saying %q; log:\n%s", want, logs)
	}
	s.GPG("--faked-system-time=20240801T000100!", "--cert-digest-algo", "SHA512", "--quick-set-expire", signer.Fingerprints()[0], "2y")
	if _, logs = publish("resigned"); strings.Contains(logs, "level=WARN") {
		t.Errorf("warned about the re-signed key:\n%s", logs)
	}
	suite := filepath.Join(root, "resigned", "dists", "s")
	if out, err := exec.Command("sqv", "--keyring", filepath.Join(root, "resigned", "archive-keyring.gpg"), filepath.Join(suite, "Release.gpg"), filepath.Join(suite, "Release")).CombinedOutput(); err != nil {
		t.Errorf("sqv refuses the re-signed key's suite: %v\n%s", err, out)
	}
}

func FuzzParseRelease(f *testing.F) {
	f.Add([]byte("Suite: s\nArchitectures: amd64\nComponents: main\nSHA256:\n " + strings.Repeat("a", 64) + " 12 main/binary-amd64/Packages\n"))
	f.Add([]byte("SHA512:\n x y\n"))
	f.Add([]byte("SHA256:\n " + strings.Repeat("a", 64) + " -12 main/binary-amd64/Packages\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := parseRelease(data, "fuzz")
		if err != nil {
			return
		}
		for _, e := range r.files {
			if e.size < 0 || e.path == "" || e.hex == "" {
				t.Fatalf("entry %+v", e)
			}
		}
	})
}

// A repository signed by a key's signing subkey (settings derived from its
// InRelease, as for repositories written before settings were stored) is
// still signed by the same key: no refused change.
func TestSigningSubkeyIsTheSameKey(t *testing.T) {
	dir, root := testDirs(t)
	cfg := &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA, Time: func() time.Time { return time.Unix(1700000000, 0) }}
	e, err := openpgp.NewEntity("subkey signer", "", "sub@example.com", cfg)
	must(t, err)
	must(t, e.AddSigningSubkey(cfg))
	signer, err := ReadSigner(bytes.NewReader(armoredSecret(t, e, cfg)), "subkey signer")
	must(t, err)
	r := realRepo(t, root, testSettings("amd64"), signer)
	_, err = r.Publish(context.Background(), "s", "main", []Package{pkgOf(t, testDeb(t, dir, "app", "1", "amd64", "v1"))})
	must(t, err)
	issuers := signatureIssuers(mustRead(t, filepath.Join(root, "dists/s/InRelease")))
	if len(issuers) != 1 || issuers[0] == signer.Fingerprints()[0] {
		t.Fatalf("InRelease issuers %v: want the subkey, not the primary %s", issuers, signer.Fingerprints()[0])
	}
	must(t, os.Remove(filepath.Join(root, "dists/s", settingsFile)))
	if _, err := r.Refresh(context.Background(), nil); err != nil {
		t.Fatalf("refresh with the key whose subkey signed the live generation: %v", err)
	}
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(name)
	must(t, err)
	return data
}

// SecretKeysPublic (what keys list shows of a signing key file) reads every
// key of a file that holds two armored secret keys one after the other
// (cat old.secret.asc new.secret.asc), not the first one only.
func TestSecretKeysPublicReadsEveryBlock(t *testing.T) {
	var file bytes.Buffer
	var want []string
	for _, name := range []string{"Old", "New"} {
		k, err := GenerateKey(name, "apt@example.org", Ed25519, time.Unix(1700000000, 0), rand.Reader)
		must(t, err)
		file.Write(k.SecretArmored)
		want = append(want, k.Fingerprint)
	}
	public, err := SecretKeysPublic(&file)
	must(t, err)
	if got := keyringFingerprints(t, public); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("public keys of a file of two secret keys: %v, want %v", got, want)
	}
}

// keyringFingerprints returns the primary fingerprints of a binary keyring,
// in its order.
func keyringFingerprints(t *testing.T, data []byte) []string {
	t.Helper()
	list, err := openpgp.ReadKeyRing(bytes.NewReader(data))
	must(t, err)
	var fps []string
	for _, e := range list {
		fps = append(fps, fingerprint(e))
	}
	return fps
}

// TestKeysGpgvCannotCheckRefused: a key of RFC 9580's Ed25519 algorithm
// (v4 or v6), which other OpenPGP tools make, is refused as a repository
// key: gpgv of GnuPG 2.2, which apt 2.6 verifies with, cannot check its
// signatures, and apt says the repository "is not signed". Provenance
// records, which updeb verifies itself, may still be signed with it.
func TestKeysGpgvCannotCheckRefused(t *testing.T) {
	testenv.RequireTool(t, "gpgv")
	dir := t.TempDir()
	for _, v6 := range []bool{false, true} {
		cfg := &packet.Config{Algorithm: packet.PubKeyAlgoEd25519, V6Keys: v6, Time: func() time.Time { return time.Unix(1700000000, 0) }}
		e, err := openpgp.NewEntity("RFC 9580", "", "new@example.org", cfg)
		must(t, err)
		armored := armoredSecret(t, e, cfg)
		k, err := signkey.Read(bytes.NewReader(armored), "new.asc")
		must(t, err)
		var sig bytes.Buffer
		must(t, openpgp.DetachSign(&sig, k.Entity, strings.NewReader("Release"), cfg))
		bin, _, err := publicKey(k.Entity)
		must(t, err)
		for name, data := range map[string][]byte{"Release": []byte("Release"), "Release.gpg": sig.Bytes(), "key.gpg": bin} {
			must(t, os.WriteFile(filepath.Join(dir, name), data, 0o644))
		}
		if out, err := exec.Command("gpgv", "--keyring", filepath.Join(dir, "key.gpg"), filepath.Join(dir, "Release.gpg"), filepath.Join(dir, "Release")).CombinedOutput(); err == nil {
			t.Fatalf("v6 %v: gpgv checks the signature of an RFC 9580 Ed25519 key:\n%s", v6, out)
		}
		_, err = ReadSigner(bytes.NewReader(armored), "new.asc")
		if !errors.Is(err, ErrKey) || !strings.Contains(err.Error(), "which gpgv of GnuPG 2.2 (apt 2.6, Debian 12) cannot check") {
			t.Errorf("v6 %v: ReadSigner = %v, want ErrKey saying gpgv cannot check it", v6, err)
		}
	}
}

// TestNewSigningSubkeyRefused: a signing subkey added to the key (gpg
// --quick-add-key), which then signs, as the newest, in place of the
// primary key, is a key clients were not given: a write is refused, as
// dropping a key is, naming both keys, until --allow-field-change; apt (gpgv) refuses the suite with
// the keyring clients have, and accepts it with the one the write gives.
func TestNewSigningSubkeyRefused(t *testing.T) {
	testenv.RequireTool(t, "gpgv")
	dir, root := testDirs(t)
	day := time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)
	cfg := &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA, Time: func() time.Time { return day }}
	e, err := openpgp.NewEntity("subkey signer", "", "sub@example.com", cfg)
	must(t, err)
	e.Subkeys = nil // as keys generate makes it: the primary key signs
	signerOf := func() *Signer {
		t.Helper()
		s, err := ReadSigner(bytes.NewReader(armoredSecret(t, e, cfg)), "k.asc")
		must(t, err)
		return s
	}
	ctx := context.Background()
	_, err = realRepo(t, root, testSettings("amd64"), signerOf()).Publish(ctx, "s", "main", []Package{pkgOf(t, testDeb(t, dir, "app", "1", "amd64", "v1"))})
	must(t, err)
	clients := filepath.Join(dir, "clients.gpg")
	must(t, os.WriteFile(clients, mustRead(t, filepath.Join(root, "archive-keyring.gpg")), 0o644))
	first := fingerprint(e)

	day = day.Add(24 * time.Hour)
	must(t, e.AddSigningSubkey(cfg))
	added := signkey.KeyFingerprint(e.Subkeys[0].PublicKey)
	_, err = realRepo(t, root, testSettings("amd64"), signerOf()).Refresh(ctx, nil)
	var fc *FieldChangeError
	if !errors.As(err, &fc) || !strings.Contains(err.Error(), fmt.Sprintf("signing subkey of %s %q -> %q", fingerprint(e), first, added)) {
		t.Fatalf("refresh signed by a new signing subkey: %v, want a refused change naming both subkeys", err)
	}
	change := testSettings("amd64")
	change.AllowFieldChange = true
	_, err = realRepo(t, root, change, signerOf()).Refresh(ctx, nil)
	must(t, err)
	inRelease := filepath.Join(root, "dists/s/InRelease")
	if out, err := exec.Command("gpgv", "--keyring", clients, inRelease).CombinedOutput(); err == nil {
		t.Fatalf("gpgv with the keyring clients were given accepts the new subkey's signature:\n%s", out)
	}
	if out, err := exec.Command("gpgv", "--keyring", filepath.Join(root, "archive-keyring.gpg"), inRelease).CombinedOutput(); err != nil {
		t.Fatalf("gpgv with the new archive-keyring.gpg: %v\n%s", err, out)
	}
	// Signed by it now: the next write goes through.
	_, err = realRepo(t, root, testSettings("amd64"), signerOf()).Refresh(ctx, nil)
	must(t, err)
}

// armoredSecret is e's secret key, armored, as a key file holds it.
func armoredSecret(t *testing.T, e *openpgp.Entity, cfg *packet.Config) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := armor.Encode(&b, openpgp.PrivateKeyType, nil)
	must(t, err)
	must(t, e.SerializePrivate(w, cfg))
	must(t, w.Close())
	return b.Bytes()
}
