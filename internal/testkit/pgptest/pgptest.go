// Package pgptest makes OpenPGP keys and signatures with the real gpg, once per
// test binary, for the tests of pkg/verify/openpgp and of the CLI. Every key and file is
// generated when first asked for (a few seconds) in a temporary GNUPGHOME;
// call Cleanup from TestMain to stop the gpg-agent and remove it.
package pgptest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/updeb/updeb/internal/testkit/testenv"
	"github.com/updeb/updeb/pkg/lockfile"
)

// Fixture is the generated material. Keys maps a key's short name to its primary
// fingerprint; Files maps a file's name to its path. See Get for the names.
type Fixture struct {
	Home string // GNUPGHOME
	Dir  string // signatures, data and keyrings

	Keys    map[string]string // short name -> primary fingerprint
	Subkeys map[string]string // short name -> signing subkey fingerprint (certonly, revsub)

	// Keyring (armored, every key but "outsider"), KeyringGPG (the same, binary,
	// for gpgv), Outsider (armored, only "outsider").
	Keyring, KeyringGPG, Outsider string
	Data, Text                    string // the signed files: bytes, and text lines
}

var (
	once      sync.Once
	shared    *Fixture
	sharedDir *lockfile.Dir // shared's folder, locked while this process runs
	initErr   error
)

// Get returns the shared fixture, generating it on first use; it skips (or
// fails in CI) when gpg or gpgv is missing.
//
// Keys: ed (ed25519), rsa2048, rsa3072, rsa4096, rsa1024, dsa (DSA 2048),
// certonly (certify-only ed25519 primary with an ed25519 signing subkey), old
// (created 2020-01-01, expired 2021-01-01), late (created 2020-01-01, expiry set
// to 2021-01-01 after signing on 2021-06-01), revoked (revoked after signing, no
// reason), revsub (its signing subkey revoked after signing), outsider (not in
// Keyring).
//
// Files, in Dir: data.bin and text.txt; NAME.asc is an armored detached
// signature of data.bin by key NAME, for every key but dsa's and rsa1024's
// (those sign too: dsa.asc, rsa1024.asc); ed.sig (binary); ed-text.asc
// (--textmode over text.txt); rsa2048-sha1.asc, rsa2048-md5.asc and
// rsa2048-ripemd160.asc (--digest-algo SHA1, MD5, RIPEMD160); future.asc
// (ed, dated 2099); multi.asc (outsider and ed); ed-clear.asc and
// certonly-clear.asc (--clearsign of text.txt); old.asc was signed 2020-06-01.
func Get(t testing.TB) *Fixture {
	t.Helper()
	testenv.RequireTool(t, "gpg", "gpgv", "gpgconf")
	once.Do(func() { shared, initErr = generate() })
	if initErr != nil {
		t.Fatalf("pgptest: %v", initErr)
	}
	return shared
}

// Path returns the path of a generated file.
func (f *Fixture) Path(name string) string { return filepath.Join(f.Dir, name) }

// Cleanup stops the gpg-agent of the fixture and removes its files.
func Cleanup() {
	if sharedDir == nil {
		return // never generated
	}
	killAgent(filepath.Join(sharedDir.Path, fixtureHome))
	sharedDir.Remove()
}

// fixtureHome is the gpg home's folder in the fixture's folder.
const fixtureHome = "h"

// killAgent stops the gpg-agent of the gpg home.
func killAgent(home string) {
	cmd := exec.Command("gpgconf", "--kill", "gpg-agent")
	cmd.Env = append(os.Environ(), "GNUPGHOME="+home)
	_ = cmd.Run()
}

// tempHome makes a temporary folder for a gpg home. gpg-agent outlives a
// test process killed before its cleanup (go test's -timeout, Ctrl-C,
// kill -9), and so does the folder: it holds a lock (pkg/lockfile's TempDir)
// that the process keeps, and the next tempHome removes every folder of
// prefix whose lock is free. An agent whose socket is removed ends itself
// (measured: at once).
func tempHome(prefix string) (*lockfile.Dir, error) {
	return lockfile.TempDir("", prefix, nil)
}

// Gpgv runs gpgv with the fixture's binary keyring and reports whether it
// accepted the signature (exit 0), with its output.
func (f *Fixture) Gpgv(sig string, data ...string) (bool, string) {
	args := append([]string{"--keyring", f.KeyringGPG, sig}, data...)
	cmd := exec.Command("gpgv", args...)
	cmd.Env = append(os.Environ(), "GNUPGHOME="+f.Home, "LC_ALL=C")
	out, err := cmd.CombinedOutput()
	return err == nil, string(out)
}

type gen struct {
	f   *Fixture
	err error
}

func (g *gen) gpg(stdin string, args ...string) string {
	if g.err != nil {
		return ""
	}
	base := []string{"--batch", "--yes", "--no-tty", "--no-auto-check-trustdb", "--trust-model", "always",
		"--pinentry-mode", "loopback", "--passphrase", ""}
	cmd := exec.Command("gpg", append(base, args...)...)
	cmd.Env = append(os.Environ(), "GNUPGHOME="+g.f.Home, "LC_ALL=C")
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		g.err = fmt.Errorf("gpg %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// fpr returns the primary (or, with sub, the first signing subkey) fingerprint.
func (g *gen) fpr(email string, sub bool) string {
	out := g.gpg("", "--with-colons", "--list-keys", "<"+email+">")
	inSub := false
	for _, line := range strings.Split(out, "\n") {
		fields := strings.Split(line, ":")
		switch {
		case fields[0] == "sub":
			inSub = len(fields) > 11 && strings.Contains(fields[11], "s")
		case fields[0] == "fpr" && sub == inSub && (sub || len(fields) > 9):
			return fields[9]
		}
	}
	if g.err == nil {
		g.err = fmt.Errorf("no fingerprint for %s (sub=%v) in:\n%s", email, sub, out)
	}
	return ""
}

func (g *gen) sign(key, out, in string, extra ...string) {
	args := append([]string{"--local-user", key + "!", "--output", g.f.Path(out)}, extra...)
	g.gpg("", append(args, in)...)
}

const params = `%no-protection
Key-Type: eddsa
Key-Curve: ed25519
Key-Usage: sign,cert
Name-Real: Ed
Name-Email: ed@test
Expire-Date: 0
%commit
Key-Type: rsa
Key-Length: 2048
Key-Usage: sign,cert
Name-Real: Rsa2048
Name-Email: rsa2048@test
Expire-Date: 0
%commit
Key-Type: rsa
Key-Length: 3072
Key-Usage: sign,cert
Name-Real: Rsa3072
Name-Email: rsa3072@test
Expire-Date: 0
%commit
Key-Type: rsa
Key-Length: 4096
Key-Usage: sign,cert
Name-Real: Rsa4096
Name-Email: rsa4096@test
Expire-Date: 0
%commit
Key-Type: rsa
Key-Length: 1024
Key-Usage: sign,cert
Name-Real: Rsa1024
Name-Email: rsa1024@test
Expire-Date: 0
%commit
Key-Type: dsa
Key-Length: 2048
Key-Usage: sign,cert
Name-Real: Dsa
Name-Email: dsa@test
Expire-Date: 0
%commit
Key-Type: eddsa
Key-Curve: ed25519
Key-Usage: cert
Subkey-Type: eddsa
Subkey-Curve: ed25519
Subkey-Usage: sign
Name-Real: CertOnly
Name-Email: certonly@test
Expire-Date: 0
%commit
Key-Type: eddsa
Key-Curve: ed25519
Key-Usage: sign,cert
Name-Real: Revoked
Name-Email: revoked@test
Expire-Date: 0
%commit
Key-Type: eddsa
Key-Curve: ed25519
Key-Usage: cert
Subkey-Type: eddsa
Subkey-Curve: ed25519
Subkey-Usage: sign
Name-Real: RevSub
Name-Email: revsub@test
Expire-Date: 0
%commit
Key-Type: eddsa
Key-Curve: ed25519
Key-Usage: sign,cert
Name-Real: Outsider
Name-Email: outsider@test
Expire-Date: 0
%commit
`

func generate() (*Fixture, error) {
	// A short path: gpg-agent's socket path must stay under 108 bytes.
	d, err := tempHome("pgpt")
	if err != nil {
		return nil, err
	}
	sharedDir = d
	dir := d.Path
	f := &Fixture{Home: filepath.Join(dir, fixtureHome), Dir: dir, Keys: map[string]string{}, Subkeys: map[string]string{}}
	if err := os.Mkdir(f.Home, 0o700); err != nil {
		return nil, err
	}
	g := &gen{f: f}
	f.Data, f.Text = f.Path("data.bin"), f.Path("text.txt")
	var data bytes.Buffer
	for i := range 4096 {
		data.WriteByte(byte(i * 7))
	}
	if err := os.WriteFile(f.Data, data.Bytes(), 0o644); err != nil {
		return nil, err
	}
	text := "abc123  runc.amd64\n- a line starting with a dash\ntrailing spaces   \nlast line\n"
	if err := os.WriteFile(f.Text, []byte(text), 0o644); err != nil {
		return nil, err
	}
	pf := f.Path("params")
	if err := os.WriteFile(pf, []byte(params), 0o600); err != nil {
		return nil, err
	}
	g.gpg("", "--gen-key", pf)
	past := func(ts string) string { return "--faked-system-time=" + ts + "!" }
	g.gpg("", past("20200101T000000"), "--quick-gen-key", "Old <old@test>", "ed25519", "sign,cert", "1y")
	g.gpg("", past("20200101T000000"), "--quick-gen-key", "Late <late@test>", "ed25519", "sign,cert", "never")
	for _, n := range []string{"ed", "rsa2048", "rsa3072", "rsa4096", "rsa1024", "dsa", "certonly", "revoked", "revsub", "outsider", "old", "late"} {
		f.Keys[n] = g.fpr(n+"@test", false)
	}
	f.Subkeys["certonly"] = g.fpr("certonly@test", true)
	f.Subkeys["revsub"] = g.fpr("revsub@test", true)

	for _, n := range []string{"ed", "rsa2048", "rsa3072", "rsa4096", "rsa1024", "dsa", "revoked", "outsider"} {
		g.sign(f.Keys[n], n+".asc", f.Data, "--armor", "--detach-sign")
	}
	g.sign(f.Subkeys["certonly"], "certonly.asc", f.Data, "--armor", "--detach-sign")
	g.sign(f.Subkeys["revsub"], "revsub.asc", f.Data, "--armor", "--detach-sign")
	g.sign(f.Keys["ed"], "ed.sig", f.Data, "--detach-sign")
	g.sign(f.Keys["ed"], "ed-text.asc", f.Text, "--armor", "--textmode", "--detach-sign")
	for _, d := range []string{"SHA1", "MD5", "RIPEMD160"} {
		g.sign(f.Keys["rsa2048"], "rsa2048-"+strings.ToLower(d)+".asc", f.Data, "--armor", "--digest-algo", d, "--detach-sign")
	}
	g.sign(f.Keys["ed"], "future.asc", f.Data, past("20990101T000000"), "--armor", "--detach-sign")
	g.sign(f.Keys["old"], "old.asc", f.Data, past("20200601T000000"), "--armor", "--detach-sign")
	g.sign(f.Keys["late"], "late.asc", f.Data, past("20210601T000000"), "--armor", "--detach-sign")
	g.gpg("", "--local-user", f.Keys["outsider"]+"!", "--local-user", f.Keys["ed"]+"!", "--armor", "--detach-sign", "--output", f.Path("multi.asc"), f.Data)
	g.sign(f.Keys["ed"], "ed-clear.asc", f.Text, "--clearsign")
	g.sign(f.Subkeys["certonly"], "certonly-clear.asc", f.Text, "--clearsign")

	// After signing: late's expiry is moved before its signature, revoked is
	// revoked (no reason: compromised for all we know), revsub's subkey too.
	g.gpg("", past("20200102T000000"), "--quick-set-expire", f.Keys["late"], "1y")
	if g.err == nil {
		rev, err := os.ReadFile(filepath.Join(f.Home, "openpgp-revocs.d", f.Keys["revoked"]+".rev"))
		if err != nil {
			return nil, err
		}
		g.gpg(strings.ReplaceAll(string(rev), ":-----BEGIN", "-----BEGIN"), "--import")
	}
	g.gpg("key 1\nrevkey\ny\n0\n\ny\nsave\n", "--command-fd", "0", "--edit-key", f.Keys["revsub"])

	var inside []string
	for n, fpr := range f.Keys {
		if n != "outsider" {
			inside = append(inside, fpr)
		}
	}
	armored := g.gpg("", append([]string{"--armor", "--export"}, inside...)...)
	f.Keyring, f.KeyringGPG, f.Outsider = f.Path("keyring.asc"), f.Path("keyring.gpg"), f.Path("outsider-key.asc")
	g.gpg("", append([]string{"--export", "--output", f.KeyringGPG}, inside...)...)
	outsider := g.gpg("", "--armor", "--export", f.Keys["outsider"])
	if g.err != nil {
		return nil, g.err
	}
	if err := os.WriteFile(f.Keyring, []byte(armored), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(f.Outsider, []byte(outsider), 0o644); err != nil {
		return nil, err
	}
	return f, nil
}

// Signer is a throwaway gpg home of its own, for tests that need to sign
// their own files (stand-in release artifacts) with keys they make on the spot.
// Its agent is stopped and its files removed when the test ends.
type Signer struct {
	t    testing.TB
	home string
}

// NewSigner makes an empty gpg home (short path: the agent socket must fit).
func NewSigner(t testing.TB) *Signer {
	t.Helper()
	testenv.RequireTool(t, "gpg", "gpgconf")
	d, err := tempHome("pgps")
	if err != nil {
		t.Fatal(err)
	}
	home := d.Path
	if err := os.Chmod(home, 0o700); err != nil {
		t.Fatal(err)
	}
	s := &Signer{t: t, home: home}
	t.Cleanup(func() {
		killAgent(home)
		d.Remove()
	})
	return s
}

// Home is the signer's gpg home (GNUPGHOME), for other tools that read
// the keys it holds.
func (s *Signer) Home() string { return s.home }

// GPG runs gpg in the signer's home and returns its standard output.
func (s *Signer) GPG(args ...string) string {
	s.t.Helper()
	return s.GPGInput("", args...)
}

// GPGInput is GPG with stdin as gpg's standard input: the answers of
// --command-fd 0 --edit-key, say.
func (s *Signer) GPGInput(stdin string, args ...string) string {
	s.t.Helper()
	g := &gen{f: &Fixture{Home: s.home}}
	out := g.gpg(stdin, args...)
	if g.err != nil {
		s.t.Fatal(g.err)
	}
	return out
}

// NewKey makes an ed25519 signing key for uid ("Name <email>"), writes its
// armored public key to publicOut and returns its primary fingerprint.
func (s *Signer) NewKey(uid, publicOut string) string {
	s.t.Helper()
	s.GPG("--quick-gen-key", uid, "ed25519", "sign", "never")
	s.GPG("--armor", "--output", publicOut, "--export", uid)
	g := &gen{f: &Fixture{Home: s.home}}
	email := uid[strings.Index(uid, "<")+1 : strings.Index(uid, ">")]
	fpr := g.fpr(email, false)
	if g.err != nil {
		s.t.Fatal(g.err)
	}
	return fpr
}

// Sign writes an armored detached signature of in by uid's key to out.
func (s *Signer) Sign(uid, in, out string) {
	s.t.Helper()
	s.GPG("--local-user", uid, "--armor", "--output", out, "--detach-sign", in)
}

// Clearsign writes in as a clearsigned message by uid's key to out.
func (s *Signer) Clearsign(uid, in, out string) {
	s.t.Helper()
	s.GPG("--local-user", uid, "--output", out, "--clearsign", in)
}
