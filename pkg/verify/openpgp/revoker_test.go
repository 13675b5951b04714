package openpgp

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp/armor"

	"github.com/updeb/updeb/internal/testkit/pgptest"
	"github.com/updeb/updeb/internal/testkit/testenv"
)

// TestDesignatedRevoker: a key that names another as its designated
// revoker (gpg addrevoker) is revoked by that one's revocation (gpg
// --desig-revoke), as gpg has it: gpgv says REVKEYSIG, which apt refuses,
// where the revoker's key is in the keyring. updeb counted only the key's
// own revocations and accepted the signature. A "superseded" one counts
// from its creation, as the key's own would (gpgv says REVKEYSIG for any
// revocation; sqv ignores a designated revoker's); without the revoker's
// key it cannot be checked, and gpgv says GOODSIG.
func TestDesignatedRevoker(t *testing.T) {
	testenv.RequireTool(t, "script", "gpgv")
	s := pgptest.NewSigner(t)
	dir := t.TempDir()
	file := func(name string) string { return filepath.Join(dir, name) }
	if err := os.WriteFile(file("data"), []byte("release\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	at := func(ts string) string { return "--faked-system-time=" + ts + "!" }
	s.GPG(at("20200101T000000"), "--quick-gen-key", "Key <key@test>", "ed25519", "sign,cert", "never")
	s.GPG(at("20200101T000000"), "--quick-gen-key", "Revoker <revoker@test>", "ed25519", "sign,cert", "never")
	s.GPG("--yes", "--armor", "--output", file("revoker.asc"), "--export", "revoker@test")
	revoker := mustKeyring(t, file("revoker.asc")).Fingerprints()[0]
	s.GPGInput("addrevoker\n"+revoker+"\ny\nsave\n", at("20200101T000000"), "--command-fd", "0", "--edit-key", "key@test")
	s.GPG(at("20210101T000000"), "--local-user", "key@test", "--detach-sign", "--output", file("data.sig"), file("data"))
	s.GPG("--yes", "--output", file("both.gpg"), "--export", "key@test", "revoker@test")
	s.GPG("--yes", "--output", file("key.gpg"), "--export", "key@test")
	// gpg makes a designated revocation only at a terminal, even with
	// --command-fd: script gives it one.
	for reason, answer := range map[string]string{"compromised": "1", "superseded": "2"} {
		gpg := "gpg --pinentry-mode loopback --passphrase '' " + at("20220101T000000") +
			" --command-fd 0 --armor --yes --output " + file(reason+".asc") + " --local-user revoker@test --desig-revoke key@test"
		cmd := exec.Command("script", "-qec", gpg, "/dev/null")
		cmd.Env = append(os.Environ(), "GNUPGHOME="+s.Home(), "LC_ALL=C")
		cmd.Stdin = strings.NewReader("y\n" + answer + "\n\ny\n")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gpg --desig-revoke: %v\n%s", err, out)
		}
	}
	read := func(name string) []byte {
		b, err := os.ReadFile(file(name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, c := range []struct {
		name, keys, revocation string
		revoked                bool
	}{
		{"compromised, revoker in the keyring", "both.gpg", "compromised.asc", true},
		{"superseded after the signature", "both.gpg", "superseded.asc", false},
		{"revoker not in the keyring", "key.gpg", "compromised.asc", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Imported as gpg imports it, into a home of the keys alone:
			// gpgv reads the revocation only where gpg puts it.
			home := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
			if err := os.Mkdir(home, 0o700); err != nil {
				t.Fatal(err)
			}
			s.GPG("--homedir", home, "--import", file(c.keys), file(c.revocation))
			s.GPG("--homedir", home, "--yes", "--output", file("keyring.gpg"), "--export")
			keyring := read("keyring.gpg")
			out, _ := exec.Command("gpgv", "--status-fd", "1", "--keyring", file("keyring.gpg"), file("data.sig"), file("data")).CombinedOutput()
			if got := strings.Contains(string(out), "[GNUPG:] REVKEYSIG"); got != (c.keys == "both.gpg") {
				t.Fatalf("gpgv says REVKEYSIG: %v\n%s", got, out)
			}
			kr, err := ParseKeyring(bytes.NewReader(keyring), "keyring")
			if err != nil {
				t.Fatal(err)
			}
			_, err = VerifyDetached(kr, Policy{Now: time.Now()}, open(t, file("data.sig")), open(t, file("data")))
			re, refused := errors.AsType[*RefusedError](err)
			switch {
			case c.revoked && (!refused || !re.Has(ReasonKeyRevoked)):
				t.Fatalf("err = %v, want a refusal: revoked", err)
			case c.revoked && !strings.Contains(err.Error(), "by its designated revoker key "+revoker):
				t.Errorf("the refusal does not name the designated revoker %s: %v", revoker, err)
			case !c.revoked && err != nil:
				t.Fatalf("refused: %v\ngpgv:\n%s", err, out)
			}
		})
	}
	// The revocation certificate appended to the keyring, as a KEYS file
	// gets it: it holds a copy of the key, merged with the first.
	b, err := armor.Decode(bytes.NewReader(read("compromised.asc")))
	if err != nil {
		t.Fatal(err)
	}
	keyring := bytes.NewBuffer(read("both.gpg"))
	if _, err := keyring.ReadFrom(b.Body); err != nil {
		t.Fatal(err)
	}
	kr, err := ParseKeyring(keyring, "keyring")
	if err != nil {
		t.Fatal(err)
	}
	_, err = VerifyDetached(kr, Policy{Now: time.Now()}, open(t, file("data.sig")), open(t, file("data")))
	if re, ok := errors.AsType[*RefusedError](err); !ok || !re.Has(ReasonKeyRevoked) {
		t.Errorf("certificate appended: err = %v, want a refusal: revoked", err)
	}
}
