package openpgp

import (
	"bytes"
	"crypto"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	gopenpgp "github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	pgperrors "github.com/ProtonMail/go-crypto/openpgp/errors"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	openpgpv2 "github.com/ProtonMail/go-crypto/openpgp/v2"

	"github.com/updeb/updeb/internal/testkit/pgptest"
	"github.com/updeb/updeb/internal/testkit/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgptest.Cleanup()
	os.Exit(code)
}

func mustKeyring(t *testing.T, path string) *Keyring {
	t.Helper()
	kr, err := LoadKeyring(path)
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

func open(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestDetachedAgainstGnuPG runs every gpg-made signature through the policy and
// through gpgv: each case is accepted or refused as documented, with the
// documented reason, and nothing gpgv refuses is accepted.
func TestDetachedAgainstGnuPG(t *testing.T) {
	fx := pgptest.Get(t)
	now := time.Now()
	kr := mustKeyring(t, fx.Keyring)
	cases := []struct {
		sig, data  string
		signers    []string
		want       Reason // "" = accepted
		detail     string // substring of the refusal or of a warning
		signingKey string
	}{
		{sig: "ed.asc", signingKey: fx.Keys["ed"]},
		{sig: "ed.sig", signingKey: fx.Keys["ed"]},
		{sig: "ed-text.asc", data: fx.Text, signingKey: fx.Keys["ed"]},
		{sig: "rsa2048.asc", signingKey: fx.Keys["rsa2048"]},
		{sig: "rsa3072.asc", signingKey: fx.Keys["rsa3072"]},
		{sig: "rsa4096.asc", signingKey: fx.Keys["rsa4096"]},
		{sig: "certonly.asc", signingKey: fx.Subkeys["certonly"]},
		{sig: "old.asc", signingKey: fx.Keys["old"], detail: "no longer valid now"},
		{sig: "multi.asc", signingKey: fx.Keys["ed"], detail: "unknown signer"},
		{sig: "ed.asc", signers: []string{fx.Keys["rsa2048"], fx.Keys["ed"]}, signingKey: fx.Keys["ed"]},
		{sig: "ed.asc", signers: []string{fx.Keys["rsa2048"]}, want: ReasonNotAllowed, detail: "not among the allowed signers"},
		// The allow-list names primary keys; gpgv prints the subkey that
		// signed ("using EDDSA key SUBKEY"), and a subkey copied from there
		// into it is named as such, with the primary to list instead.
		{sig: "certonly.asc", signers: []string{fx.Subkeys["certonly"]}, want: ReasonNotAllowed,
			detail: fx.Subkeys["certonly"] + " is a subkey of it, and the allowed signers are primary keys: list " + fx.Keys["certonly"] + " instead"},
		{sig: "rsa2048-sha1.asc", want: ReasonWeakHash, detail: "made with digest SHA-1"},
		{sig: "rsa2048-md5.asc", want: ReasonWeakHash, detail: "made with digest MD5, which is broken"},
		{sig: "rsa2048-ripemd160.asc", want: ReasonWeakHash, detail: "made with digest RIPEMD-160, which is broken"},
		{sig: "rsa1024.asc", want: ReasonWeakKey, detail: "RSA 1024 bits"},
		{sig: "dsa.asc", want: ReasonWeakKey, detail: "is DSA"},
		{sig: "late.asc", want: ReasonKeyExpired, detail: "expired on 2021-01-01"},
		{sig: "revoked.asc", want: ReasonKeyRevoked, detail: "is revoked"},
		{sig: "revsub.asc", want: ReasonKeyRevoked, detail: "subkey " + fx.Subkeys["revsub"] + " is revoked"},
		{sig: "outsider.asc", want: ReasonUnknownSigner, detail: "which is not in keyring"},
		{sig: "future.asc", want: ReasonFuture, detail: "in the future"},
		{sig: "ed.asc", data: fx.Text, want: ReasonBadSignature, detail: "does not match the data"},
		{sig: "ed-text.asc", data: fx.Data, want: ReasonBadSignature},
	}
	for _, c := range cases {
		name := c.sig + "/" + string(c.want)
		t.Run(name, func(t *testing.T) {
			data := c.data
			if data == "" {
				data = fx.Data
			}
			res, err := VerifyDetached(kr, Policy{Signers: c.signers, Now: now}, open(t, fx.Path(c.sig)), open(t, data))
			// gpgv exits 1 when any signature fails; what counts here is whether it
			// found at least one good signature.
			_, gpgvOut := fx.Gpgv(fx.Path(c.sig), data)
			if err == nil && !strings.Contains(gpgvOut, "Good signature") {
				t.Fatalf("accepted what gpgv refuses:\n%s", gpgvOut)
			}
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if res.SigningKeyFingerprint != c.signingKey {
					t.Errorf("signing key %s, want %s", res.SigningKeyFingerprint, c.signingKey)
				}
				if c.detail != "" && !strings.Contains(strings.Join(res.Warnings, "\n"), c.detail) {
					t.Errorf("warnings %q lack %q", res.Warnings, c.detail)
				}
				want, _ := os.ReadFile(data)
				if res.Size != int64(len(want)) || len(res.Digests) != 2 {
					t.Errorf("size %d digests %v", res.Size, res.Digests)
				}
				return
			}
			var re *RefusedError
			if !errors.As(err, &re) || !errors.Is(err, ErrSignature) {
				t.Fatalf("err = %v, want a *RefusedError wrapping ErrSignature", err)
			}
			if !re.Has(c.want) || !strings.Contains(err.Error(), c.detail) {
				t.Fatalf("err = %v\nwant reason %s with %q", err, c.want, c.detail)
			}
		})
	}
}

func TestTamperedSignature(t *testing.T) {
	fx := pgptest.Get(t)
	kr := mustKeyring(t, fx.Keyring)
	sig, _ := os.ReadFile(fx.Path("ed.sig"))
	sig[len(sig)-5] ^= 0x40 // inside the EdDSA signature value
	_, err := VerifyDetached(kr, Policy{Now: time.Now()}, bytes.NewReader(sig), open(t, fx.Data))
	var re *RefusedError
	if !errors.As(err, &re) || !re.Has(ReasonBadSignature) {
		t.Fatalf("tampered signature: %v", err)
	}
	keyring, err := os.ReadFile(fx.KeyringGPG)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct{ in, want string }{
		{"", "not an OpenPGP signature"},
		// gpg --sign's output (a literal data packet here), and a binary
		// keyring, named in words.
		{"\xcb\x07b\x00\x00\x00\x00\x00x", "found a signed message (gpg --sign, the data inside it), not a detached signature (gpg --detach-sign)"},
		{string(keyring), "found a key: is this the keyring?"},
		{"hello", "not an OpenPGP signature"},
		{"-----BEGIN PGP SIGNATURE-----\n\nAAAA\n-----END PGP SIGNATURE-----\n", "damaged"},
		{"-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmDMEXQxvLxYJKwYBBAHaRw8BAQdA\n-----END PGP PUBLIC KEY BLOCK-----\n", "want PGP SIGNATURE"},
		{"-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\nx\n", "clearsigned message, not a detached signature: it is verified alone, as the text it signs (verify-signature without DATA; in a recipe, checksums: with clearsigned:)"},
	} {
		_, err := VerifyDetached(kr, Policy{Now: time.Now()}, strings.NewReader(bad.in), strings.NewReader("x"))
		if !errors.As(err, &re) || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("VerifyDetached(%.60q) = %v, want %q", bad.in, err, bad.want)
		}
	}
}

func TestCertifyOnlyPrimaryCannotSign(t *testing.T) {
	fx := pgptest.Get(t)
	kr := mustKeyring(t, fx.Keyring)
	// The certonly key's primary self-signature has no sign flag: ask validAt
	// directly (gpg refuses to make such a signature).
	for _, e := range kr.entities {
		if fingerprint(e.PrimaryKey) == fx.Keys["certonly"] {
			r := validAt(signingKey{entity: e, pub: e.PrimaryKey}, time.Now())
			if r == nil || r.Reason != ReasonNotSigningKey || !strings.Contains(r.Detail, "[certify]") {
				t.Fatalf("validAt(certify-only primary) = %+v", r)
			}
			return
		}
	}
	t.Fatal("certonly key not in keyring")
}

func TestClearsigned(t *testing.T) {
	fx := pgptest.Get(t)
	kr := mustKeyring(t, fx.Keyring)
	want, _ := os.ReadFile(fx.Text)
	for _, name := range []string{"ed-clear.asc", "certonly-clear.asc"} {
		content, res, err := VerifyClearsigned(kr, Policy{Now: time.Now()}, open(t, fx.Path(name)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if ok, out := fx.Gpgv(fx.Path(name)); !ok {
			t.Fatalf("gpgv refuses %s:\n%s", name, out)
		}
		// gpg --clearsign strips trailing white space; the line break
		// before the signature is not signed, and the content ends its
		// last line as gpg --decrypt writes it: the file signed.
		exp := strings.ReplaceAll(string(want), "spaces   \n", "spaces\n")
		if string(content) != exp {
			t.Errorf("%s: content %q, want %q", name, content, exp)
		}
		if res.Hash != "SHA-256" && res.Hash != "SHA-512" {
			t.Errorf("hash %s", res.Hash)
		}
	}
	raw, _ := os.ReadFile(fx.Path("ed-clear.asc"))
	tampered := bytes.Replace(raw, []byte("last line"), []byte("last lime"), 1)
	_, _, err := VerifyClearsigned(kr, Policy{Now: time.Now()}, bytes.NewReader(tampered))
	var re *RefusedError
	if !errors.As(err, &re) || !re.Has(ReasonBadSignature) {
		t.Fatalf("tampered clearsigned: %v", err)
	}
	twice := append(append([]byte{}, raw...), raw...)
	if _, _, err := VerifyClearsigned(kr, Policy{Now: time.Now()}, bytes.NewReader(twice)); err == nil || !strings.Contains(err.Error(), "more than one") {
		t.Fatalf("two messages: %v", err)
	}
	if _, _, err := VerifyClearsigned(kr, Policy{Now: time.Now()}, strings.NewReader("just text")); !errors.Is(err, ErrSignature) {
		t.Fatalf("plain text: %v", err)
	}
}

func TestPolicyErrors(t *testing.T) {
	fx := pgptest.Get(t)
	kr := mustKeyring(t, fx.Keyring)
	for _, pol := range []Policy{{}, {Now: time.Now(), Signers: []string{"ABCD"}}, {Now: time.Now(), Signers: []string{strings.Repeat("G", 40)}}} {
		if _, err := VerifyDetached(kr, pol, open(t, fx.Path("ed.asc")), open(t, fx.Data)); !errors.Is(err, ErrPolicy) {
			t.Errorf("policy %+v: %v", pol, err)
		}
	}
	f, err := NormalizeFingerprint("0x" + strings.ToLower(fx.Keys["ed"][:20]) + " " + fx.Keys["ed"][20:])
	if err != nil || f != fx.Keys["ed"] {
		t.Fatalf("NormalizeFingerprint = %q, %v", f, err)
	}
}

func TestKeyringShapes(t *testing.T) {
	fx := pgptest.Get(t)
	armored, _ := os.ReadFile(fx.Keyring)
	outsider, _ := os.ReadFile(fx.Outsider)
	garbage := "Some prose.\npub   ed25519 2020-01-01 [SC]\n\x00\x01 binary junk\n"
	mixed := garbage + string(armored) + "\n--- more text ---\n    " + strings.ReplaceAll(string(outsider), "\n", "\n    ") + "\ntrailer\n"
	kr, err := ParseKeyring(strings.NewReader(mixed), "mixed.asc")
	if err != nil {
		t.Fatal(err)
	}
	if kr.Len() != len(fx.Keys) {
		t.Fatalf("mixed keyring has %d keys, want %d", kr.Len(), len(fx.Keys))
	}
	// A block without the blank line after its headers, as sqv (and gpg,
	// with a warning) read it.
	noBlank := strings.Replace(string(outsider), "-----\n\n", "-----\n", 1)
	if kr, err := ParseKeyring(strings.NewReader(noBlank), "noblank.asc"); err != nil || kr.Len() != 1 {
		t.Fatalf("key block without its blank line: %v", err)
	}
	if haveSqv(t) {
		path := filepath.Join(t.TempDir(), "noblank.asc")
		if err := os.WriteFile(path, []byte(noBlank), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("sqv", "--keyring", path, fx.Path("outsider.asc"), fx.Data).CombinedOutput(); err != nil {
			t.Fatalf("sqv refuses the key block without its blank line: %v\n%s", err, out)
		}
	}
	bin := mustKeyring(t, fx.KeyringGPG)
	if bin.Len() != len(fx.Keys)-1 {
		t.Fatalf("binary keyring has %d keys, want %d", bin.Len(), len(fx.Keys)-1)
	}
	lines := strings.Count(garbage, "\n")
	corrupt := garbage + strings.Replace(string(armored), "\n\n", "\n\n!!!!not base64!!!!\n", 1)
	_, err = ParseKeyring(strings.NewReader(corrupt), "bad.asc")
	if !errors.Is(err, ErrKeyring) || !strings.Contains(err.Error(), "bad.asc:"+strconv.Itoa(lines+1)+": armored key block") {
		t.Fatalf("corrupt block: %v", err)
	}
	for _, bad := range []struct{ in, want string }{
		{"", "no OpenPGP public key found"},
		{"just prose\n", "no OpenPGP public key found"},
		{"x\n-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmDME\n", "x.asc:2: armored key block is not terminated"},
		{"-----BEGIN PGP PRIVATE KEY BLOCK-----\n", "x.asc:1: a private key block"},
		{"\x99\x00\x01\x04", "binary keyring"},
	} {
		if _, err := ParseKeyring(strings.NewReader(bad.in), "x.asc"); !errors.Is(err, ErrKeyring) || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("ParseKeyring(%q) = %v, want %q", bad.in, err, bad.want)
		}
	}
}

// The real upstream keyrings load exactly the keys ARTIFACTS.md lists.
func TestRealKeyrings(t *testing.T) {
	for _, c := range []struct {
		file string
		want []string
	}{
		{"../../../keys/helm.asc", []string{
			"672C657BE06B4B30969C4A57461449C25E36B98E", "F1261BDE929012C8FF2E501D6EA5D7598529A53E",
			"967F8AC5E2216F9F4FD270AD92AA783CBAAE8E3B", "76939899B137D575D3274E756DCCB9D752D35BA8",
			"49D09C86C3DC8DA3F0A076221EF612347F8A9958", "ABA2529598F6626C420D335B62F49E747D911B60",
			"4AB45F1CB0D292975C6371436E2A23D806B6E6DD", "208DD36ED5BB3745A16743A4C7C6FBB5B91C1155",
			"7FEC81FACC7FFB2A010ADD13C2D40F4D8196E874", "BF888333D96A1C18E2682AAED79D67C9EC016739"}},
		{"../../../keys/runc.asc", []string{
			"C9C370B246B09F6DBCFC744C34401015D1D2D386", "C2428CD75720FACDCF76B6EA17DE5ECB75A1100E",
			"C020EA876CE4E06C7AB95AEF49524C6F9F638F1A"}},
	} {
		kr := mustKeyring(t, c.file)
		if got := kr.Fingerprints(); strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("%s: fingerprints\n%v\nwant\n%v", c.file, got, c.want)
		}
	}
	// runc: Aleksa Sarai's primary certifies only and signs through an ed25519 subkey.
	list := mustKeyring(t, "../../../keys/runc.asc").List(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	cyphar := list[0]
	if strings.Join(cyphar.Capabilities, ",") != "certify" || !cyphar.CanSign {
		t.Fatalf("cyphar primary: %+v", cyphar.KeyInfo)
	}
	var signers []string
	for _, s := range cyphar.Subkeys {
		if strings.Join(s.Capabilities, ",") == "sign" && s.Revoked == nil {
			signers = append(signers, s.Algorithm+" "+s.Fingerprint)
		}
	}
	if strings.Join(signers, ";") != "Ed25519 B64E4955B29FA3D463F2A9062897FAD2B7E9446F" {
		t.Fatalf("cyphar signing subkeys: %v", signers)
	}
	if suda := list[2]; suda.Expires == nil || suda.Expires.Format(time.DateOnly) != "2026-07-31" {
		t.Fatalf("Suda's key expiry: %+v", suda.KeyInfo)
	}
}

func TestListWarnings(t *testing.T) {
	fx := pgptest.Get(t)
	kr := mustKeyring(t, fx.Keyring)
	byFpr := map[string]PrimaryKeyInfo{}
	for _, k := range kr.List(time.Now()) {
		byFpr[k.Fingerprint] = k
	}
	checks := map[string]string{
		"rsa1024": "RSA 1024 bits is too weak",
		"dsa":     "DSA is too weak",
		"old":     "expired on 2020-12-31",
		"revoked": "revoked",
		"rsa2048": "below the 3072 bits",
	}
	for name, want := range checks {
		k := byFpr[fx.Keys[name]]
		if !strings.Contains(strings.Join(k.Warnings, "\n"), want) {
			t.Errorf("%s warnings %q lack %q", name, k.Warnings, want)
		}
	}
	if ed := byFpr[fx.Keys["ed"]]; ed.Algorithm != "Ed25519" || len(ed.Warnings) != 0 || !ed.CanSign || ed.UserIDs[0] != "Ed <ed@test>" {
		t.Errorf("ed: %+v", ed)
	}
	if k := byFpr[fx.Keys["rsa4096"]]; k.Algorithm != "RSA 4096" {
		t.Errorf("rsa4096 algorithm %q", k.Algorithm)
	}
}

func FuzzParseKeyring(f *testing.F) {
	f.Add("prose\n-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmDMEXQxvLxYJKwYBBAHaRw8BAQdA\n=abcd\n-----END PGP PUBLIC KEY BLOCK-----\n")
	f.Add("\x99\x00\x33\x04")
	f.Add("-----BEGIN PGP PUBLIC KEY BLOCK-----\n-----BEGIN PGP PUBLIC KEY BLOCK-----\n")
	f.Fuzz(func(t *testing.T, in string) {
		kr, err := ParseKeyring(strings.NewReader(in), "f.asc")
		if err != nil {
			if !errors.Is(err, ErrKeyring) {
				t.Fatalf("error does not wrap ErrKeyring: %v", err)
			}
			return
		}
		if kr.Len() == 0 {
			t.Fatal("keyring without keys accepted")
		}
		kr.List(kr.entities[0].PrimaryKey.CreationTime)
	})
}

// TestSeveralArmorBlocks: a detached signature file may be armored blocks one
// after the other (cat a.asc b.asc, as Bitcoin Core's SHA256SUMS.asc is
// made). gpgv reads every block; so must the policy, or a good signature in
// the second block is never seen, and a bad one there is never reported.
func TestSeveralArmorBlocks(t *testing.T) {
	fx := pgptest.Get(t)
	kr := mustKeyring(t, fx.Keyring)
	read := func(name string) string {
		b, err := os.ReadFile(fx.Path(name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, c := range []struct {
		name, sig string
		want      Reason // "" = accepted
		detail    string // in the refusal or a warning
	}{
		{"unknown then good", read("outsider.asc") + read("ed.asc"), "", "unknown signer"},
		{"good then unknown", read("ed.asc") + "\nprose between\n" + read("outsider.asc"), "", "unknown signer"},
		{"prose before the block", "Signed by the release team:\n\n" + read("multi.asc"), "", "unknown signer"},
		{"prose before a clearsigned message", "Checksums:\n" + read("ed-clear.asc"), ReasonMalformed, "this is a clearsigned message"},
		{"prose alone", "Signed by the release team.\n", ReasonMalformed, "not an OpenPGP signature"},
		{"good then bad", read("ed.asc") + read("ed-text.asc"), "", "BAD signature"},
		{"two unknown", read("outsider.asc") + read("outsider.asc"), ReasonUnknownSigner, "none of 2 signatures counts"},
		{"second block unterminated", read("ed.asc") + "-----BEGIN PGP SIGNATURE-----\n\niHUEABYKAB0WIQ\n", ReasonMalformed, "not terminated"},
		// The blank line after the armor headers lost (pasted through a web
		// page or a chat): gpgv warns of an invalid armor header and reads
		// on, as sqv does; the base64 has no colon, no header does.
		{"no blank line before the base64", strings.Replace(read("ed.asc"), "-----\n\n", "-----\n", 1), "", ""},
		{"headers, no blank line", strings.Replace(read("ed.asc"), "-----\n\n", "-----\nComment: release key\n", 1) + read("outsider.asc"), "", "unknown signer"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sig := filepath.Join(t.TempDir(), "sig.asc")
			if err := os.WriteFile(sig, []byte(c.sig), 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := VerifyDetached(kr, Policy{Now: time.Now()}, strings.NewReader(c.sig), open(t, fx.Data))
			_, gpgvOut := fx.Gpgv(sig, fx.Data)
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused: %v\ngpgv:\n%s", err, gpgvOut)
				}
				if !strings.Contains(gpgvOut, "Good signature") {
					t.Fatalf("accepted what gpgv refuses:\n%s", gpgvOut)
				}
				if res.SigningKeyFingerprint != fx.Keys["ed"] || !strings.Contains(strings.Join(res.Warnings, "\n"), c.detail) {
					t.Fatalf("signing key %s, warnings %q: want ed's key and %q", res.SigningKeyFingerprint, res.Warnings, c.detail)
				}
				return
			}
			var re *RefusedError
			if !errors.As(err, &re) || !re.Has(c.want) || !strings.Contains(err.Error(), c.detail) {
				t.Fatalf("err = %v, want reason %s with %q", err, c.want, c.detail)
			}
		})
	}
}

// TestHostileUserID: a user ID is whatever the key's owner typed, and gpg
// takes ANSI escapes, newlines and bidirectional overrides in one. It reaches
// the terminal in "Good signature from ...", in refusals and in keys list;
// there it must show as escapes (gpgv prints "\x1b", "\n"), never act.
func TestHostileUserID(t *testing.T) {
	s := pgptest.NewSigner(t)
	dir := t.TempDir()
	uid := "Evil \x1b[2J\x1b[31mRED\x1b[0m\nGood signature from Someone Else \u202egnp.x\ttab\x7f <evil@test>"
	keyFile, data, sig := filepath.Join(dir, "key.asc"), filepath.Join(dir, "data"), filepath.Join(dir, "data.asc")
	s.GPG("--utf8-strings", "--quick-gen-key", uid, "ed25519", "sign", "never")
	s.GPG("--armor", "--output", keyFile, "--export", "evil@test")
	if err := os.WriteFile(data, []byte("payload\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.Sign("evil@test", data, sig)
	kr := mustKeyring(t, keyFile)
	const want = `Evil \x1b[2J\x1b[31mRED\x1b[0m\nGood signature from Someone Else \u202egnp.x\ttab\x7f <evil@test>`
	res, err := VerifyDetached(kr, Policy{Now: time.Now()}, open(t, sig), open(t, data))
	if err != nil {
		t.Fatal(err)
	}
	if res.UserID != want {
		t.Errorf("Result.UserID = %q\nwant            %q", res.UserID, want)
	}
	_, err = VerifyDetached(kr, Policy{Now: time.Now(), Signers: []string{strings.Repeat("A", 40)}}, open(t, sig), open(t, data))
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("refusal %q does not show the user ID as %q", err, want)
	}
	list := kr.List(time.Now())
	if len(list) != 1 || len(list[0].UserIDs) != 1 || list[0].UserIDs[0] != want {
		t.Errorf("List user IDs = %q, want [%q]", list[0].UserIDs, want)
	}
}

// TestKeyRefreshedAfterSigning: extending a key's expiry (gpg
// --quick-set-expire) replaces its self-signature and its subkeys' bindings
// with new ones, so a keyring fetched after that holds none made before the
// releases signed earlier. gpgv judges the key by its newest self-signature
// and accepts those signatures; so must the policy, checking that newest
// self-signature's expiry at the signing time.
func TestKeyRefreshedAfterSigning(t *testing.T) {
	s := pgptest.NewSigner(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.WriteFile(data, []byte("release\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	at := func(ts string) string { return "--faked-system-time=" + ts + "!" }
	s.GPG(at("20240101T000000"), "--quick-gen-key", "Primary <primary@test>", "ed25519", "sign,cert", "2y")
	s.GPG(at("20240101T000000"), "--quick-gen-key", "Sub <sub@test>", "ed25519", "cert", "2y")
	kr := filepath.Join(dir, "keyring.asc")
	fpr := map[string]string{}
	for _, who := range []string{"primary", "sub"} {
		s.GPG("--yes", "--armor", "--output", kr, "--export", who+"@test")
		fpr[who] = mustKeyring(t, kr).Fingerprints()[0]
	}
	s.GPG(at("20240101T000000"), "--quick-add-key", fpr["sub"], "ed25519", "sign", "2y")
	for _, who := range []string{"primary", "sub"} {
		s.GPG(at("20250101T000000"), "--local-user", who+"@test", "--detach-sign", "--output", filepath.Join(dir, who+".sig"), data)
	}
	// The release was signed on 2025-01-01; in October the keys got ten more years.
	for _, who := range []string{"primary", "sub"} {
		s.GPG(at("20251001T000000"), "--quick-set-expire", fpr[who], "10y")
	}
	s.GPG(at("20251001T000000"), "--quick-set-expire", fpr["sub"], "10y", "*")
	s.GPG("--yes", "--armor", "--output", kr, "--export", "primary@test", "sub@test")
	gpgKeyring := filepath.Join(dir, "keyring.gpg")
	s.GPG("--output", gpgKeyring, "--export", "primary@test", "sub@test")
	keyring := mustKeyring(t, kr)
	for _, who := range []string{"primary", "sub"} {
		t.Run(who, func(t *testing.T) {
			sig := filepath.Join(dir, who+".sig")
			out, err := exec.Command("gpgv", "--keyring", gpgKeyring, sig, data).CombinedOutput()
			if err != nil {
				t.Fatalf("gpgv refuses: %v\n%s", err, out)
			}
			res, err := VerifyDetached(keyring, Policy{Now: time.Now()}, open(t, sig), open(t, data))
			if err != nil {
				t.Fatalf("refused what gpgv accepts: %v\ngpgv:\n%s", err, out)
			}
			if len(res.Warnings) != 0 {
				t.Errorf("warnings %q", res.Warnings)
			}
		})
	}
}

// judgedByNewer stands in for a self-signature newer than the signing time
// only when it is newer, and still refuses what it says was expired, and a
// revocation that counts.
func TestJudgedByNewer(t *testing.T) {
	created := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	signed := created.AddDate(1, 0, 0)
	pk := &packet.PublicKey{CreationTime: created}
	failure := errors.New("no self-signature at t")
	self := func(at time.Time, lifetime time.Duration) *packet.Signature {
		secs := uint32(lifetime / time.Second)
		return &packet.Signature{CreationTime: at, KeyLifetimeSecs: &secs}
	}
	later, year := signed.AddDate(0, 6, 0), 365*24*time.Hour
	for _, c := range []struct {
		name    string
		newest  *packet.Signature
		revoked bool
		want    error
	}{
		{"none", nil, false, failure},
		{"not newer", self(signed.Add(-time.Hour), 10*year), false, failure},
		{"newer, valid then", self(later, 10*year), false, nil},
		{"newer, never expires", self(later, 0), false, nil},
		{"newer, expired then", self(later, year/2), false, pgperrors.ErrKeyExpired},
		{"newer, revoked", self(later, 10*year), true, pgperrors.ErrKeyRevoked},
	} {
		if _, err := judgedByNewer(signed, failure, c.newest, c.revoked, pk); !errors.Is(err, c.want) && err != c.want {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
		}
	}
}

// TestKeyringWithSecretSubkey: a public primary key followed by a secret
// subkey packet (tag 7) is a keyring that carries a secret, and must be
// refused like a private key block, not loaded quietly.
func TestKeyringWithSecretSubkey(t *testing.T) {
	fx := pgptest.Get(t)
	fpr := fx.Keys["certonly"]
	pub := gpgOut(t, fx.Home, "--export", fpr)
	sec := gpgOut(t, fx.Home, "--batch", "--pinentry-mode", "loopback", "--passphrase", "", "--export-secret-subkeys", fpr+"!", fx.Subkeys["certonly"]+"!")
	var secretSub *packet.OpaquePacket
	for r := packet.NewOpaqueReader(bytes.NewReader(sec)); ; {
		p, err := r.Next()
		if err != nil {
			break
		}
		if p.Tag == 7 { // secret subkey
			secretSub = p
		}
	}
	if secretSub == nil {
		t.Fatal("gpg exported no secret subkey packet")
	}
	var mixed bytes.Buffer
	for r := packet.NewOpaqueReader(bytes.NewReader(pub)); ; {
		p, err := r.Next()
		if err != nil {
			break
		}
		if p.Tag == 14 { // the public subkey: put the secret one in its place
			p = secretSub
		}
		if err := p.Serialize(&mixed); err != nil {
			t.Fatal(err)
		}
	}
	_, err := ParseKeyring(bytes.NewReader(mixed.Bytes()), "mixed.gpg")
	if !errors.Is(err, ErrKeyring) || !strings.Contains(err.Error(), "public keys only") {
		t.Fatalf("ParseKeyring(public primary, secret subkey) = %v, want a refusal", err)
	}
}

func gpgOut(t *testing.T, home string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("gpg", append([]string{"--homedir", home, "--batch"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || len(out) == 0 {
		t.Fatalf("gpg %v: %v\n%s", args, err, stderr.String())
	}
	return out
}

// TestSignatureExpiryBoundary: a signature with an expiration time (gpg
// --default-sig-expire) counts until that time, and not after: the clock
// skew allowed for creation times must not make it expire early.
func TestSignatureExpiryBoundary(t *testing.T) {
	s := pgptest.NewSigner(t)
	dir := t.TempDir()
	keyFile, data, sig := filepath.Join(dir, "key.asc"), filepath.Join(dir, "data"), filepath.Join(dir, "data.sig")
	s.NewKey("Exp <exp@test>", keyFile)
	if err := os.WriteFile(data, []byte("payload\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.GPG("--local-user", "exp@test", "--default-sig-expire", "1d", "--detach-sign", "--output", sig, data)
	raw, err := os.ReadFile(sig)
	if err != nil {
		t.Fatal(err)
	}
	p, err := packet.Read(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	ps, ok := p.(*packet.Signature)
	if !ok || ps.SigLifetimeSecs == nil || *ps.SigLifetimeSecs != 86400 {
		t.Fatalf("gpg made %#v, want a signature expiring after a day", p)
	}
	expires := ps.CreationTime.Add(24 * time.Hour)
	kr := mustKeyring(t, keyFile)
	for _, c := range []struct {
		now  time.Time
		want Reason
	}{
		{expires.Add(-2 * time.Minute), ""},
		{expires.Add(2 * time.Minute), ReasonSignatureExpired},
	} {
		_, err := VerifyDetached(kr, Policy{Now: c.now}, bytes.NewReader(raw), open(t, data))
		var re *RefusedError
		switch {
		case c.want == "" && err != nil:
			t.Errorf("at %s (expiry %s): refused: %v", stamp(c.now), stamp(expires), err)
		case c.want != "" && (!errors.As(err, &re) || !re.Has(c.want)):
			t.Errorf("at %s (expiry %s): err = %v, want %s", stamp(c.now), stamp(expires), err, c.want)
		}
	}
}

// TestKeyCopiesMerged: a keyring may hold one key twice (a KEYS file a
// refreshed key was appended to, cat old.asc new.asc). The copies are one
// key, judged by the signatures of both, as sqv judges them: a revocation in
// either counts, and so does an expiry extended in the later one.
func TestKeyCopiesMerged(t *testing.T) {
	s := pgptest.NewSigner(t)
	dir := t.TempDir()
	file := func(name string) string { return filepath.Join(dir, name) }
	if err := os.WriteFile(file("data"), []byte("release\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	at := func(ts string) string { return "--faked-system-time=" + ts + "!" }
	export := func(out, who string) { s.GPG("--armor", "--output", file(out), "--export", who+"@test") }
	sign := func(ts, who, out string) {
		s.GPG(at(ts), "--local-user", who+"@test", "--detach-sign", "--output", file(out), file("data"))
	}
	edit := func(ts, fpr, answers string) {
		s.GPGInput(answers, at(ts), "--command-fd", "0", "--edit-key", fpr)
	}
	fprOf := func(name string) string { return mustKeyring(t, file(name)).Fingerprints()[0] }
	// rev: revoked (key compromised) after it signed; sub: its signing
	// subkey, likewise; ext: made to expire after a year, then extended
	// before it signed.
	s.GPG(at("20240101T000000"), "--quick-gen-key", "Rev <rev@test>", "ed25519", "sign,cert", "never")
	s.GPG(at("20240101T000000"), "--quick-gen-key", "Sub <sub@test>", "ed25519", "cert", "never")
	s.GPG(at("20240101T000000"), "--quick-gen-key", "Ext <ext@test>", "ed25519", "sign,cert", "1y")
	for _, who := range []string{"rev", "sub", "ext"} {
		export(who+"-old.asc", who)
	}
	s.GPG(at("20240102T000000"), "--quick-add-key", fprOf("sub-old.asc"), "ed25519", "sign", "never")
	export("sub-old.asc", "sub")
	sign("20240601T000000", "rev", "rev.sig")
	sign("20240601T000000", "sub", "sub.sig")
	edit("20240701T000000", fprOf("rev-old.asc"), "revkey\ny\n1\n\ny\nsave\n")
	edit("20240701T000000", fprOf("sub-old.asc"), "key 1\nrevkey\ny\n1\n\ny\nsave\n")
	s.GPG(at("20241201T000000"), "--quick-set-expire", fprOf("ext-old.asc"), "10y")
	sign("20250601T000000", "ext", "ext.sig")
	for _, who := range []string{"rev", "sub", "ext"} {
		export(who+"-new.asc", who)
	}
	sqv := haveSqv(t)
	for _, c := range []struct {
		who  string
		want Reason // "" = accepted
	}{{"rev", ReasonKeyRevoked}, {"sub", ReasonKeyRevoked}, {"ext", ""}} {
		for _, order := range [][]string{{"old", "new"}, {"new", "old"}} {
			t.Run(c.who+"-"+strings.Join(order, "-"), func(t *testing.T) {
				var both []byte
				for _, o := range order {
					b, err := os.ReadFile(file(c.who + "-" + o + ".asc"))
					if err != nil {
						t.Fatal(err)
					}
					both = append(both, b...)
				}
				kr, err := ParseKeyring(bytes.NewReader(both), "both.asc")
				if err != nil {
					t.Fatal(err)
				}
				if kr.Len() != 1 {
					t.Errorf("%d keys, want the copies as one", kr.Len())
				}
				_, err = VerifyDetached(kr, Policy{Now: time.Now()}, open(t, file(c.who+".sig")), open(t, file("data")))
				var re *RefusedError
				switch {
				case c.want == "" && err != nil:
					t.Fatalf("refused: %v", err)
				case c.want != "" && (!errors.As(err, &re) || !re.Has(c.want)):
					t.Fatalf("err = %v, want a refusal for %s", err, c.want)
				}
				if !sqv {
					return
				}
				var bin bytes.Buffer // sqv reads one armored block: give it the binary keyring
				for _, o := range order {
					b, err := armor.Decode(open(t, file(c.who+"-"+o+".asc")))
					if err != nil {
						t.Fatal(err)
					}
					if _, err := bin.ReadFrom(b.Body); err != nil {
						t.Fatal(err)
					}
				}
				if err := os.WriteFile(file("both.gpg"), bin.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				if out, err := exec.Command("sqv", "--keyring", file("both.gpg"), file(c.who+".sig"), file("data")).CombinedOutput(); (err == nil) != (c.want == "") {
					t.Errorf("sqv disagrees (accepts: %v):\n%s", err == nil, out)
				}
			})
		}
	}
}

// TestRevocationsOutOfPlace: a revocation certificate (gpg --gen-revoke)
// appended to a keyring, armored or binary, stands after the key's user IDs
// and subkeys, not right after the key where go-crypto looks for it; so does
// a subkey revocation moved behind another subkey. Each still revokes its
// key, as sqv reads them.
func TestRevocationsOutOfPlace(t *testing.T) {
	s := pgptest.NewSigner(t)
	dir := t.TempDir()
	file := func(name string) string { return filepath.Join(dir, name) }
	if err := os.WriteFile(file("data"), []byte("release\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	read := func(name string) []byte {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	dearmor := func(text []byte) []byte {
		b, err := armor.Decode(bytes.NewReader(text))
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if _, err := out.ReadFrom(b.Body); err != nil {
			t.Fatal(err)
		}
		return out.Bytes()
	}
	// rev: a key and its revocation certificate.
	rev := s.NewKey("Rev <rev@test>", file("rev.asc"))
	s.Sign("rev@test", file("data"), file("rev.sig"))
	cert := bytes.ReplaceAll(read(filepath.Join(s.Home(), "openpgp-revocs.d", rev+".rev")), []byte(":-----BEGIN"), []byte("-----BEGIN"))
	cert = cert[bytes.Index(cert, []byte("-----BEGIN")):]
	// sub: a signing subkey, then an encryption subkey; the signing one is
	// revoked, and its revocation moved behind the other.
	s.GPG("--quick-gen-key", "Sub <sub@test>", "ed25519", "cert", "never")
	s.GPG("--armor", "--output", file("sub.asc"), "--export", "sub@test")
	sub := mustKeyring(t, file("sub.asc")).Fingerprints()[0]
	s.GPG("--quick-add-key", sub, "ed25519", "sign", "never")
	s.GPG("--quick-add-key", sub, "cv25519", "encr", "never")
	s.GPG("--yes", "--armor", "--output", file("sub.asc"), "--export", "sub@test")
	s.GPG("--local-user", "sub@test", "--detach-sign", "--output", file("sub.sig"), file("data"))
	s.GPGInput("key 1\nrevkey\ny\n1\n\ny\nsave\n", "--command-fd", "0", "--edit-key", sub)
	s.GPG("--yes", "--armor", "--output", file("sub-revoked.asc"), "--export", "sub@test")
	var subRevocation []byte
	pr := packet.NewReader(bytes.NewReader(dearmor(read(file("sub-revoked.asc")))))
	for {
		p, err := pr.Next()
		if err != nil {
			break
		}
		if sig, ok := p.(*packet.Signature); ok && sig.SigType == packet.SigTypeSubkeyRevocation {
			var b bytes.Buffer
			if err := sig.Serialize(&b); err != nil {
				t.Fatal(err)
			}
			subRevocation = b.Bytes()
		}
	}
	if subRevocation == nil {
		t.Fatal("gpg made no subkey revocation")
	}
	sqv := haveSqv(t)
	for _, c := range []struct {
		name, sig string
		keyring   []byte
	}{
		{"armored certificate after the key", "rev.sig", append(read(file("rev.asc")), cert...)},
		{"binary certificate after the key", "rev.sig", append(dearmor(read(file("rev.asc"))), dearmor(cert)...)},
		{"subkey revocation behind another subkey", "sub.sig", append(dearmor(read(file("sub.asc"))), subRevocation...)},
	} {
		t.Run(c.name, func(t *testing.T) {
			kr, err := ParseKeyring(bytes.NewReader(c.keyring), "keyring")
			if err != nil {
				t.Fatal(err)
			}
			_, err = VerifyDetached(kr, Policy{Now: time.Now()}, open(t, file(c.sig)), open(t, file("data")))
			if re, ok := errors.AsType[*RefusedError](err); !ok || !re.Has(ReasonKeyRevoked) {
				t.Errorf("err = %v, want a refusal: revoked", err)
			} else if strings.Contains(err.Error(), "designated revoker") {
				t.Errorf("the key revoked itself: %v", err)
			}
			if !sqv || c.keyring[0]&0x80 == 0 {
				return
			}
			if err := os.WriteFile(file("keyring.gpg"), c.keyring, 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command("sqv", "--keyring", file("keyring.gpg"), file(c.sig), file("data")).CombinedOutput(); err == nil {
				t.Errorf("sqv accepts:\n%s", out)
			}
		})
	}
}

// haveSqv reports whether sqv, the referee, is installed; in CI it must be.
func haveSqv(t *testing.T) bool {
	if _, err := exec.LookPath("sqv"); err != nil {
		if testenv.InCI() {
			t.Fatal("sqv is not installed (CI=true: .ci/run must install it)")
		}
		return false
	}
	return true
}

// TestUnreadableKeyCounted: a key go-crypto cannot read (here an algorithm
// number it does not know) is skipped, but a signature by a key the
// keyring does not hold then says that the keyring held keys updeb could
// not read, binary or armored, instead of only "not in keyring".
func TestUnreadableKeyCounted(t *testing.T) {
	s := pgptest.NewSigner(t)
	dir := t.TempDir()
	file := func(name string) string { return filepath.Join(dir, name) }
	if err := os.WriteFile(file("data"), []byte("release\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, who := range []string{"a", "b"} {
		s.GPG("--quick-gen-key", who+" <"+who+"@test>", "ed25519", "sign,cert", "never")
		s.GPG("--output", file(who+".gpg"), "--export", who+"@test")
	}
	s.GPG("--local-user", "a@test", "--detach-sign", "--output", file("a.sig"), file("data"))
	a, err := os.ReadFile(file("a.gpg"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(file("b.gpg"))
	if err != nil {
		t.Fatal(err)
	}
	if n := countPrimaryKeys(append(append([]byte(nil), a...), b...)); n != 2 {
		t.Fatalf("countPrimaryKeys = %d on two keys", n)
	}
	if a[0]&0xc0 != 0x80 || a[0]>>2&0x0f != 6 {
		t.Fatalf("gpg's export starts with %#x, not an old-format public key packet", a[0])
	}
	alg := 1 + [4]int{1, 2, 4, 0}[a[0]&3] + 5 // header, then version and creation time
	a[alg] = 99                               // no algorithm go-crypto knows
	bin := append(a, b...)
	var armored bytes.Buffer
	w, err := armor.Encode(&armored, "PGP PUBLIC KEY BLOCK", nil)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(bin)
	w.Close()
	for name, data := range map[string][]byte{"binary": bin, "armored": armored.Bytes()} {
		t.Run(name, func(t *testing.T) {
			kr, err := ParseKeyring(bytes.NewReader(data), "k")
			if err != nil {
				t.Fatal(err)
			}
			if kr.Len() != 1 {
				t.Fatalf("%d keys read, want b's alone", kr.Len())
			}
			_, err = VerifyDetached(kr, Policy{Now: time.Now()}, open(t, file("a.sig")), open(t, file("data")))
			var re *RefusedError
			if !errors.As(err, &re) || !re.Has(ReasonUnknownSigner) || !strings.Contains(err.Error(), "1 key(s) of the keyring could not be read") {
				t.Fatalf("err = %v, want an unknown signer that counts the key not read", err)
			}
		})
	}
	kr, err := ParseKeyring(bytes.NewReader(b), "b.gpg")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := VerifyDetached(kr, Policy{Now: time.Now()}, open(t, file("a.sig")), open(t, file("data"))); err == nil || strings.Contains(err.Error(), "could not be read") {
		t.Fatalf("err = %v, want an unknown signer, without keys not read", err)
	}
}

// A v6 key (RFC 9580) states its capabilities and expiry in its direct-key
// signature, not with its user ID: keys list shows them from there.
func TestListV6Key(t *testing.T) {
	created := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	cfg := &packet.Config{Algorithm: packet.PubKeyAlgoEd25519, V6Keys: true, KeyLifetimeSecs: 86400 * 365, Time: func() time.Time { return created }}
	_, kr := generatedKey(t, "V6", "v6@example.org", cfg)
	k := kr.List(created.Add(48 * time.Hour))[0]
	if !slices.Contains(k.Capabilities, "sign") || !slices.Contains(k.Capabilities, "certify") {
		t.Errorf("capabilities %v, want certify and sign (the direct-key signature's)", k.Capabilities)
	}
	if want := created.Add(365 * 24 * time.Hour); k.Expires == nil || !k.Expires.Equal(want) {
		t.Errorf("expires %v, want %s", k.Expires, want)
	}
	if !k.CanSign {
		t.Errorf("a v6 key that signs cannot sign: %+v", k)
	}
}

// TestSignaturesShareHashPasses: a detached signature file may hold
// thousands of signatures (1 MiB of them, from a misbehaving server), and
// hashing the data once for each of them turns a 100 MB artifact into
// hundreds of gigabytes of hashing. Signatures that agree on the digest and
// on text or binary mode share one pass over the data, and each is then
// checked on its own copy of it: a BAD signature before the good ones in the
// same pass does not spoil them, as sqv agrees (gpgv checks only the first
// of binary signatures run together).
func TestSignaturesShareHashPasses(t *testing.T) {
	testenv.RequireTool(t, "sqv")
	s := pgptest.NewSigner(t)
	dir := t.TempDir()
	uid := "Many <many@test>"
	path := func(name string) string { return filepath.Join(dir, name) }
	s.NewKey(uid, path("key.asc"))
	if err := os.WriteFile(path("data"), []byte("payload\nline two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path("other"), []byte("other payload\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sign := func(in string, extra ...string) []byte {
		out := path(in + strings.Join(extra, "") + ".sig")
		s.GPG(append(append([]string{"--local-user", uid, "--digest-algo", "SHA256", "--output", out}, extra...), "--detach-sign", path(in))...)
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	bad, good := sign("other"), sign("data")
	text, sha512 := sign("data", "--textmode"), sign("data", "--digest-algo", "SHA512")
	many := append(bad, bytes.Repeat(slices.Concat(good, text, sha512), 100)...)
	if err := os.WriteFile(path("many.sig"), many, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("sqv", "--keyring", path("key.asc"), path("many.sig"), path("data")).CombinedOutput(); err != nil {
		t.Fatalf("sqv refuses: %v\n%s", err, out)
	}

	sigs, _, err := readSignatures(bytes.NewReader(many))
	if err != nil {
		t.Fatal(err)
	}
	if _, passes := hashPasses(sigs, false); len(passes) != 3 {
		t.Errorf("%d signatures hash the data in %d passes, want 3 (SHA-256 binary, SHA-256 text, SHA-512 binary)", len(sigs), len(passes))
	}
	res, err := VerifyDetached(mustKeyring(t, path("key.asc")), Policy{Now: time.Now()}, bytes.NewReader(many), open(t, path("data")))
	if err != nil {
		t.Fatalf("refused: %v", err)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "BAD signature") {
		t.Fatalf("warnings %q, want the one BAD signature", res.Warnings)
	}
}

// TestSaltedSignaturesBounded: each v6 signature hashes its own salt
// before the data, so no two share a pass; a file of thousands of them
// (made up by a misbehaving server: no key is needed to write a salt) reads
// the data at most maxPasses times, and the signatures past that are
// refused unchecked.
func TestSaltedSignaturesBounded(t *testing.T) {
	created := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	cfg := &packet.Config{Algorithm: packet.PubKeyAlgoEd25519, V6Keys: true, Time: func() time.Time { return created }}
	e, kr := generatedKey(t, "V6", "v6@example.org", cfg)
	var sigs bytes.Buffer
	for range maxPasses + 8 {
		if err := gopenpgp.DetachSign(&sigs, e, strings.NewReader("data"), cfg); err != nil {
			t.Fatal(err)
		}
	}
	res, err := VerifyDetached(kr, Policy{Now: created.Add(time.Hour)}, bytes.NewReader(sigs.Bytes()), strings.NewReader("data"))
	if err != nil {
		t.Fatalf("refused: %v", err)
	}
	unchecked := 0
	for _, w := range res.Warnings {
		if strings.Contains(w, fmt.Sprintf("would read the data more than %d times", maxPasses)) {
			unchecked++
		}
	}
	if unchecked != 8 || len(res.Warnings) != 8 {
		t.Fatalf("warnings %q, want 8 signatures unchecked", res.Warnings)
	}
}

// TestClearsignedUnsignedLines: lines before a clearsigned message or after
// its signature are not covered by it. The verified content leaves them
// out, but "Good signature" alone let a person trust the file as it stands
// (sha256sum -c reads those lines too), where apt refuses such a file
// ("contains unsigned lines"): the result warns, and blank lines around the
// message do not count.
func TestClearsignedUnsignedLines(t *testing.T) {
	fx := pgptest.Get(t)
	kr := mustKeyring(t, fx.Keyring)
	raw, err := os.ReadFile(fx.Path("ed-clear.asc"))
	if err != nil {
		t.Fatal(err)
	}
	evil := "0000000000000000000000000000000000000000000000000000000000000000  runc.arm64\n"
	for _, c := range []struct {
		name, text string
		want       []string // in the warnings; none when empty
	}{
		{"alone", string(raw), nil},
		{"blank lines around", "\n \n" + string(raw) + "\n\t\n", nil},
		{"after", string(raw) + evil, []string{"1 line after the signature"}},
		{"before", evil + "\n" + string(raw), []string{"1 line before the signed message"}},
		{"both", evil + evil + string(raw) + evil, []string{"2 lines before the signed message", "1 line after the signature"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			content, res, err := VerifyClearsigned(kr, Policy{Now: time.Now()}, strings.NewReader(c.text))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(content), "runc.arm64") {
				t.Fatalf("unsigned line in the content: %q", content)
			}
			warnings := strings.Join(res.Warnings, "\n")
			if len(c.want) == 0 && len(res.Warnings) != 0 {
				t.Fatalf("warnings %q, want none", res.Warnings)
			}
			for _, w := range c.want {
				if !strings.Contains(warnings, w) || !strings.Contains(warnings, "not covered by the signature") {
					t.Errorf("warnings %q lack %q", res.Warnings, w)
				}
			}
		})
	}
}

// TestSubkeyUnderTwoPrimaries: a signing subkey may be bound to a new
// primary key as well as to its old one (gpg adds an existing key as a
// subkey by its keygrip, as a smartcard's owner does when replacing an
// expired primary), and a keyring then holds it twice. A signature by it
// counts when it passes under either primary, whatever their order in the
// file, as gpgv and sqv judge it; only the old primary, first in the
// file, was tried, and the signature was refused as made by an expired key.
func TestSubkeyUnderTwoPrimaries(t *testing.T) {
	testenv.RequireTool(t, "gpgv", "sqv")
	created := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *packet.Config {
		return &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA, Time: func() time.Time { return created.Add(d) }}
	}
	oldCfg := at(0)
	oldCfg.KeyLifetimeSecs = 3600 // the old primary expires an hour later
	old, err := gopenpgp.NewEntity("Old", "", "old@example.org", oldCfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := old.AddSigningSubkey(at(0)); err != nil {
		t.Fatal(err)
	}
	sub := old.Subkeys[len(old.Subkeys)-1]
	renewed, err := gopenpgp.NewEntity("New", "", "new@example.org", at(2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	binding := &packet.Signature{Version: 4, SigType: packet.SigTypeSubkeyBinding, PubKeyAlgo: renewed.PrimaryKey.PubKeyAlgo, Hash: crypto.SHA256,
		CreationTime: created.Add(2 * time.Hour), IssuerKeyId: &renewed.PrimaryKey.KeyId, IssuerFingerprint: renewed.PrimaryKey.Fingerprint,
		FlagsValid: true, FlagSign: true}
	binding.EmbeddedSignature = &packet.Signature{Version: 4, SigType: packet.SigTypePrimaryKeyBinding, PubKeyAlgo: sub.PublicKey.PubKeyAlgo, Hash: crypto.SHA256,
		CreationTime: created.Add(2 * time.Hour), IssuerKeyId: &sub.PublicKey.KeyId, IssuerFingerprint: sub.PublicKey.Fingerprint}
	if err := binding.EmbeddedSignature.CrossSignKey(sub.PublicKey, renewed.PrimaryKey, sub.PrivateKey, nil); err != nil {
		t.Fatal(err)
	}
	if err := binding.SignKey(sub.PublicKey, renewed.PrivateKey, nil); err != nil {
		t.Fatal(err)
	}
	renewed.Subkeys = append(renewed.Subkeys, gopenpgp.Subkey{PublicKey: sub.PublicKey, PrivateKey: sub.PrivateKey, Sig: binding})
	var sig bytes.Buffer
	if err := gopenpgp.DetachSign(&sig, renewed, strings.NewReader("data"), at(3*time.Hour)); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sigFile, dataFile := filepath.Join(dir, "data.sig"), filepath.Join(dir, "data")
	for path, b := range map[string][]byte{sigFile: sig.Bytes(), dataFile: []byte("data")} {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, order := range [][]*gopenpgp.Entity{{old, renewed}, {renewed, old}} {
		var keys bytes.Buffer
		for _, e := range order {
			if err := e.Serialize(&keys); err != nil {
				t.Fatal(err)
			}
		}
		name := order[0].PrimaryIdentity().UserId.Name + " first"
		t.Run(name, func(t *testing.T) {
			keyring := filepath.Join(dir, name+".gpg")
			if err := os.WriteFile(keyring, keys.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, referee := range [][]string{{"gpgv", "--keyring", keyring, sigFile, dataFile}, {"sqv", "--keyring", keyring, sigFile, dataFile}} {
				if out, err := exec.Command(referee[0], referee[1:]...).CombinedOutput(); err != nil {
					t.Fatalf("%s refuses: %v\n%s", referee[0], err, out)
				}
			}
			kr, err := ParseKeyring(bytes.NewReader(keys.Bytes()), name)
			if err != nil {
				t.Fatal(err)
			}
			now := created.Add(4 * time.Hour)
			res, err := VerifyDetached(kr, Policy{Now: now}, bytes.NewReader(sig.Bytes()), strings.NewReader("data"))
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if res.PrimaryFingerprint != fingerprint(renewed.PrimaryKey) || res.SigningKeyFingerprint != fingerprint(sub.PublicKey) {
				t.Fatalf("signed by %s (subkey %s), want the new primary %s", res.PrimaryFingerprint, res.SigningKeyFingerprint, fingerprint(renewed.PrimaryKey))
			}
			// Under an allow-list of the old primary alone, it is refused
			// for what it is: made after that primary expired.
			_, err = VerifyDetached(kr, Policy{Now: now, Signers: []string{fingerprint(old.PrimaryKey)}}, bytes.NewReader(sig.Bytes()), strings.NewReader("data"))
			if re, ok := errors.AsType[*RefusedError](err); !ok || !re.Has(ReasonKeyExpired) && !re.Has(ReasonNotAllowed) {
				t.Fatalf("allow-list of the old primary: %v", err)
			}
		})
	}
}

// TestDirectKeyFlags: a v4 key may declare what it may do in a direct-key
// signature alone, its user ID's self-signature naming no capabilities
// (RFC 9580 5.2.3.10: the key flags of a direct-key signature apply to the
// key). gpgv and sqv accept what such a key signs; it was refused as "not
// marked for signing (capabilities none declared)", and keys list showed
// it could do nothing.
func TestDirectKeyFlags(t *testing.T) {
	testenv.RequireTool(t, "gpgv", "sqv")
	created := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	cfg := &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA, Time: func() time.Time { return created }}
	e, err := openpgpv2.NewEntity("Direct", "", "direct@example.org", cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.Subkeys = nil
	for _, id := range e.Identities {
		self := id.SelfCertifications[0].Packet
		self.FlagsValid, self.FlagCertify, self.FlagSign = false, false, false
		if err := self.SignUserId(id.Name, e.PrimaryKey, e.PrivateKey, cfg); err != nil {
			t.Fatal(err)
		}
	}
	pk := e.PrimaryKey
	direct := &packet.Signature{Version: 4, SigType: packet.SigTypeDirectSignature, PubKeyAlgo: pk.PubKeyAlgo, Hash: crypto.SHA256,
		CreationTime: created, IssuerKeyId: &pk.KeyId, IssuerFingerprint: pk.Fingerprint, FlagsValid: true, FlagCertify: true, FlagSign: true}
	if err := direct.SignDirectKeyBinding(pk, e.PrivateKey, cfg); err != nil {
		t.Fatal(err)
	}
	e.DirectSignatures = append(e.DirectSignatures, packet.NewVerifiableSig(direct))
	var keyring, sig bytes.Buffer
	if err := e.Serialize(&keyring); err != nil {
		t.Fatal(err)
	}
	doc := &packet.Signature{Version: 4, SigType: packet.SigTypeBinary, PubKeyAlgo: pk.PubKeyAlgo, Hash: crypto.SHA256,
		CreationTime: created.Add(time.Hour), IssuerKeyId: &pk.KeyId, IssuerFingerprint: pk.Fingerprint}
	h, err := doc.PrepareSign(nil)
	if err != nil {
		t.Fatal(err)
	}
	h.Write([]byte("data"))
	if err := doc.Sign(h, e.PrivateKey, nil); err != nil {
		t.Fatal(err)
	}
	if err := doc.Serialize(&sig); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files := map[string][]byte{"key.gpg": keyring.Bytes(), "data.sig": sig.Bytes(), "data": []byte("data")}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, referee := range []string{"gpgv", "sqv"} {
		cmd := exec.Command(referee, "--keyring", filepath.Join(dir, "key.gpg"), filepath.Join(dir, "data.sig"), filepath.Join(dir, "data"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s refuses: %v\n%s", referee, err, out)
		}
	}
	kr, err := ParseKeyring(bytes.NewReader(keyring.Bytes()), "direct.gpg")
	if err != nil {
		t.Fatal(err)
	}
	now := created.Add(2 * time.Hour)
	if _, err := VerifyDetached(kr, Policy{Now: now}, bytes.NewReader(sig.Bytes()), strings.NewReader("data")); err != nil {
		t.Fatalf("refused: %v", err)
	}
	if k := kr.List(now)[0]; !slices.Contains(k.Capabilities, "sign") || !k.CanSign {
		t.Fatalf("keys list: capabilities %v, can sign %v; want sign", k.Capabilities, k.CanSign)
	}
}
