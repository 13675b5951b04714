package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/testkit/pgptest"
	"github.com/updeb/updeb/pkg/lockfile"
)

func TestMain(m *testing.M) {
	// No test reads or writes what a developer keeps on this machine: the
	// state folder (support data refreshed) and the cache default to empty
	// ones (tests that refresh or share a cache name theirs with --state and
	// --cache). A helper process (TestFetchHelperProcess) keeps its parent's
	// folders: it leaves through os.Exit, which would leave folders of its
	// own behind in TMPDIR.
	if os.Getenv("UPDEB_TEST_HELPER") == "1" {
		os.Exit(m.Run())
	}
	// Locked while the tests run: a test process killed before its end
	// (go test's -timeout, Ctrl-C) leaves it, and the next run removes it.
	homeDir, err := lockfile.TempDir("", "updeb-test-home-", nil)
	if err != nil {
		panic(err)
	}
	home := homeDir.Path
	// go, which tests run to build updeb, keeps its build cache under
	// XDG_CACHE_HOME unless GOCACHE says where.
	if os.Getenv("GOCACHE") == "" {
		if d, err := os.UserCacheDir(); err == nil {
			os.Setenv("GOCACHE", filepath.Join(d, "go-build"))
		}
	}
	os.Setenv("XDG_STATE_HOME", filepath.Join(home, "state"))
	os.Setenv("XDG_CACHE_HOME", filepath.Join(home, "cache"))
	code := m.Run()
	pgptest.Cleanup()
	homeDir.Remove()
	os.Exit(code)
}

func TestVerifySignatureCLI(t *testing.T) {
	fx := pgptest.Get(t)
	out := filepath.Join(t.TempDir(), "content.txt")
	cases := []struct {
		name       string
		args       []string
		code       int
		wantStdout string
		wantStderr string
	}{
		{"good detached", []string{"--keyring", fx.Keyring, fx.Path("ed.asc"), fx.Data}, 0, "Good signature from Ed <ed@test>\n  primary key  " + fx.Keys["ed"], ""},
		{"good subkey", []string{"--keyring", fx.KeyringGPG, "--signer", fx.Keys["certonly"], fx.Path("certonly.asc"), fx.Data}, 0, "signing key  " + fx.Subkeys["certonly"] + " (subkey)", ""},
		{"clearsigned to file", []string{"--keyring", fx.Keyring, "--output", out, fx.Path("ed-clear.asc")}, 0, "Good signature", ""},
		{"clearsigned to stdout", []string{"--keyring", fx.Keyring, "--output", "-", fx.Path("ed-clear.asc")}, 0, "abc123  runc.amd64\n", "Good signature"},
		{"bad data", []string{"--keyring", fx.Keyring, fx.Path("ed.asc"), fx.Text}, 1, "", "updeb: error: signature refused for " + fx.Path("ed.asc") + ": signature by key " + fx.Keys["ed"] + ": BAD signature"},
		{"unknown signer", []string{"--keyring", fx.Keyring, fx.Path("outsider.asc"), fx.Data}, 1, "", "which is not in keyring " + fx.Keyring + " (unknown signer)\nupdeb: hint: the signer is not in"},
		{"not allowed", []string{"--keyring", fx.Keyring, "--signer", fx.Keys["rsa2048"], fx.Path("ed.asc"), fx.Data}, 1, "", "not among the allowed signers"},
		{"revoked", []string{"--keyring", fx.Keyring, fx.Path("revoked.asc"), fx.Data}, 1, "", "is revoked"},
		{"sha1", []string{"--keyring", fx.Keyring, fx.Path("rsa2048-sha1.asc"), fx.Data}, 1, "", "made with digest SHA-1"},
		{"not a signature", []string{"--keyring", fx.Keyring, fx.Data, fx.Data}, 1, "", "not an OpenPGP signature"},
		{"signature and data swapped", []string{"--keyring", fx.Keyring, fx.Data, fx.Path("ed.asc")}, 1, "",
			"not an OpenPGP signature (neither armored nor binary OpenPGP packets)\nupdeb: hint: the signature comes first, then the data: updeb verify-signature --keyring " + fx.Keyring + " " + fx.Path("ed.asc") + " " + fx.Data + "\n"},
		{"no keyring flag", []string{fx.Path("ed.asc"), fx.Data}, 2, "", "--keyring is required"},
		{"missing keyring", []string{"--keyring", "/nonexistent/k.asc", fx.Path("ed.asc"), fx.Data}, 2, "", "no such file"},
		{"keyring is not one", []string{"--keyring", fx.Text, fx.Path("ed.asc"), fx.Data}, 2, "", "no OpenPGP public key found"},
		{"missing data", []string{"--keyring", fx.Keyring, fx.Path("ed.asc"), "/nonexistent/data"}, 2, "", "no such file"},
		{"bad signer flag", []string{"--keyring", fx.Keyring, "--signer", "1234", fx.Path("ed.asc"), fx.Data}, 2, "", "not a full fingerprint"},
		{"output with detached", []string{"--keyring", fx.Keyring, "--output", out, fx.Path("ed.asc"), fx.Data}, 2, "", "--output is for clearsigned messages"},
		{"too many args", []string{"--keyring", fx.Keyring, "a", "b", "c"}, 2, "", "accepts between 1 and 2 arg(s)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, append([]string{"verify-signature"}, c.args...)...)
			if code != c.code || !strings.Contains(stdout, c.wantStdout) || !strings.Contains(stderr, c.wantStderr) {
				t.Fatalf("exit %d (want %d)\nstdout: %s\nstderr: %s\nwant stdout %q, stderr %q", code, c.code, stdout, stderr, c.wantStdout, c.wantStderr)
			}
		})
	}
	// The text gpg --clearsign signed (its trailing spaces stripped), its
	// last line ended: a shell's "while read" loses a last line without
	// its newline.
	got, err := os.ReadFile(out)
	if want := "abc123  runc.amd64\n- a line starting with a dash\ntrailing spaces\nlast line\n"; err != nil || string(got) != want {
		t.Fatalf("--output wrote %q, %v; want %q", got, err, want)
	}
	// The content on stdout: the report is a note on stderr, and stderr's
	// contract holds (it wrote the report there whatever -q and
	// --log-format said); --json, whose object goes to stdout, is refused.
	clear := []string{"verify-signature", "--keyring", fx.Keyring, "--output", "-", fx.Path("ed-clear.asc")}
	if code, stdout, stderr := runCLI(t, append(clear, "-q")...); code != 0 || !strings.HasPrefix(stdout, "abc123  runc.amd64\n") || stderr != "" {
		t.Errorf("--output - -q: exit %d\nstdout: %s\nstderr: %q", code, stdout, stderr)
	}
	if code, stdout, stderr := runCLI(t, append(clear, "--log-format", "json")...); code != 0 || !strings.HasPrefix(stdout, "abc123  runc.amd64\n") ||
		strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, `"level":"INFO","msg":"Good signature from Ed <ed@test>\n  primary key  `) {
		t.Errorf("--output - --log-format json: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if code, stdout, stderr := runCLI(t, append(clear, "--json")...); code != exitUsage || stdout != "" || !strings.Contains(stderr, "give --output FILE") {
		t.Errorf("--output - --json: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	code, stdout, _ := runCLI(t, "verify-signature", "--json", "--keyring", fx.Keyring, fx.Path("old.asc"), fx.Data)
	var res struct {
		PrimaryFingerprint string            `json:"primary_fingerprint"`
		Warnings           []string          `json:"warnings"`
		Digests            map[string]string `json:"digests"`
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &res) != nil || res.PrimaryFingerprint != fx.Keys["old"] || len(res.Warnings) != 1 || len(res.Digests["sha256"]) != 64 {
		t.Fatalf("--json: exit %d, %s", code, stdout)
	}
}

// TestKeysListSigningKey: keys list shows a signing key file (the secret
// key the repository is signed with, made by gpg) as it shows a keyring:
// its primary key and its signing subkey, each with its own expiry; a file
// that is neither is still refused.
func TestKeysListSigningKey(t *testing.T) {
	s := pgptest.NewSigner(t)
	faked := "--faked-system-time=20260101T000000!"
	s.GPG(faked, "--quick-gen-key", "Repo <repo@example.org>", "ed25519", "cert", "20y")
	fpr := strings.TrimSuffix(strings.Fields(strings.Split(s.GPG("--with-colons", "--list-keys", "<repo@example.org>"), "fpr:::::::::")[1])[0], ":")
	s.GPG(faked, "--quick-add-key", fpr, "ed25519", "sign", "10y")
	key := filepath.Join(t.TempDir(), "repo.secret.asc")
	if err := os.WriteFile(key, []byte(s.GPG("--armor", "--export-secret-keys", fpr)), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "keys", "list", key)
	for _, want := range []string{
		key + ": 1 primary key\npub Ed25519   " + fpr + " created 2026-01-01 expires 2045-12-27 [certify]\n      uid Repo <repo@example.org>\n",
		" created 2026-01-01 expires 2035-12-30 [sign]\n",
	} {
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("keys list %s: exit %d %s, output lacks %q:\n%s", key, code, stderr, want, stdout)
		}
	}
	if strings.Contains(stdout, "publish refuses") {
		t.Errorf("keys list of a usable signing key says publish refuses it:\n%s", stdout)
	}
}

// TestKeysListUnusableSigningKey: a signing key updeb would not sign with
// (passphrase-protected, RSA of 2048 bits) is still shown by keys list, the
// command an operator runs to see what is wrong with it, not refused as a
// private key in a verification keyring, with a warning that says why
// publish refuses it (a passphrase showed no warning at all).
func TestKeysListUnusableSigningKey(t *testing.T) {
	s := pgptest.NewSigner(t)
	s.GPG("--passphrase", "secret", "--quick-gen-key", "Locked <locked@example.org>", "ed25519", "sign", "never")
	s.GPG("--quick-gen-key", "Weak <weak@example.org>", "rsa2048", "sign", "never")
	dir := t.TempDir()
	for _, k := range []struct{ uid, want string }{
		{"<locked@example.org>", "repo.secret.asc: 1 primary key\n  warning: publish refuses to sign with it: unusable signing key: " + filepath.Join(dir, "repo.secret.asc") + ": key "},
		{"<locked@example.org>", " is protected by a passphrase; updeb signs unattended and needs an unprotected key file (mode 0600)\n"},
		{"<locked@example.org>", "uid Locked <locked@example.org>\n"},
		{"<weak@example.org>", "warning: RSA 2048 bits"},
	} {
		key := filepath.Join(dir, "repo.secret.asc")
		if err := os.WriteFile(key, []byte(s.GPG("--passphrase", "secret", "--armor", "--export-secret-keys", k.uid)), 0o600); err != nil {
			t.Fatal(err)
		}
		if code, stdout, stderr := runCLI(t, "keys", "list", key); code != 0 || !strings.Contains(stdout, k.want) {
			t.Errorf("keys list %s: exit %d %s, output lacks %q:\n%s", k.uid, code, stderr, k.want, stdout)
		}
		if code, _, stderr := runCLI(t, "publish", "--repo", filepath.Join(dir, "repo"), "--key", key, "none.deb"); code != exitUsage || !strings.Contains(stderr, "unusable signing key") && !strings.Contains(stderr, "too weak") {
			t.Errorf("publish --key %s: exit %d, want %d refusing the key: %s", k.uid, code, exitUsage, stderr)
		}
	}
}

func TestKeysListCLI(t *testing.T) {
	code, stdout, stderr := runCLI(t, "keys", "list", "../../keys/runc.asc", "../../keys/helm.asc")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"../../keys/runc.asc: 3 primary keys\npub Ed25519   C9C370B246B09F6DBCFC744C34401015D1D2D386 created 2019-06-21 [certify]\n      uid Aleksa Sarai <cyphar@cyphar.com>\n",
		"  sub Ed25519   B64E4955B29FA3D463F2A9062897FAD2B7E9446F created 2022-09-30 expires 2030-03-25 [sign]\n",
		"REVOKED 2022-09-30 [sign]\n      warning: revoked (revoked 2022-09-30 09:43:33 UTC, reason: key superseded)",
		"../../keys/helm.asc: 10 primary keys\n",
		"pub RSA 4096  76939899B137D575D3274E756DCCB9D752D35BA8 created 2018-08-06 expires 2022-08-06 [certify,sign]\n      warning: expired on 2022-08-06",
		"pub Ed25519   BF888333D96A1C18E2682AAED79D67C9EC016739",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("keys list output lacks %q:\n%s", want, stdout)
		}
	}
	code, stdout, _ = runCLI(t, "keys", "list", "--json", "../../keys/runc.asc")
	var out struct {
		Keyrings []struct {
			File string
			Keys []struct {
				Fingerprint  string
				Capabilities []string
				Subkeys      []struct{ Fingerprint, Algorithm string }
			}
		}
	}
	listing := &out.Keyrings
	if code != 0 || json.Unmarshal([]byte(stdout), &out) != nil || len(*listing) != 1 || len((*listing)[0].Keys) != 3 || len((*listing)[0].Keys[0].Subkeys) != 6 {
		t.Fatalf("--json: exit %d\n%s", code, stdout)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"keys", "list", "/nonexistent.asc"}, 2, "no such file"},
		{[]string{"keys", "list", "cmd_keys.go"}, 2, "cmd_keys.go: no OpenPGP public key found"},
		{[]string{"keys", "list"}, 2, "no keyring given, no keys/*.asc in the working folder and no recipes in recipes"},
		{[]string{"keys"}, 2, "error: updeb keys needs a subcommand: generate, list\nupdeb: hint: see 'updeb help keys'"},
		// every group alike: 'updeb repo $CMD' with CMD unset printed the help, exit 0
		{[]string{"repo"}, 2, "error: updeb repo needs a subcommand: gc, history, list, promote, refresh, remove, rollback, verify\n"},
		{[]string{"data"}, 2, "error: updeb data needs a subcommand: refresh, status\n"},
		{[]string{"mirror"}, 2, "error: updeb mirror needs a subcommand: export, verify\n"},
		{[]string{"completion"}, 2, "error: updeb completion needs a subcommand: bash, fish, powershell, zsh\n"},
		// and updeb itself: 'updeb $CMD' with CMD unset too
		{[]string{}, 2, "error: updeb needs a command: build, bump, cache, compat, completion, data, fetch, help, inspect, keys, lint, mirror, outdated, plan, publish, repo, report, trust, verify, verify-provenance, verify-signature, version\nupdeb: hint: see 'updeb --help'"},
	} {
		code, _, stderr := runCLI(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d, %q", c.args, code, stderr, c.code, c.want)
		}
	}
}

// keys list without FILE lists the keyrings the --recipes folder's recipes
// name too, with the recipes that use them: run outside the recipes' project
// (--recipes testdata/demo/recipes) it listed the working folder's keys/ alone,
// never the keyring that vouches for the demo's hello.
func TestKeysListRecipesKeyrings(t *testing.T) {
	demo, err := filepath.Abs(filepath.Join(repoRoot, "testdata", "demo"))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	code, stdout, stderr := runCLI(t, "keys", "list", "--recipes", filepath.Join(demo, "recipes"), "--json")
	if code != 0 || !strings.Contains(stdout, `"file": "`+filepath.Join(demo, "keys", "demo-upstream.asc")+`"`) || !strings.Contains(stdout, `"hello hello (signature)"`) {
		t.Errorf("keys list --recipes DIR: exit %d, want the recipes' keyring and its users\n%s%s", code, stdout, stderr)
	}
}

// keys list names the Sigstore signer of every Sigstore-signed recipe source,
// and which recipes use each keyring.
func TestKeysListSigstoreSigners(t *testing.T) {
	code, stdout, stderr := runCLI(t, "--recipes", "../../recipes", "keys", "list")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"Sigstore signers the recipes in ../../recipes accept:\n",
		"  kubernetes-1.36 server: identity krel-staging@k8s-releng-prod.iam.gserviceaccount.com, issuer https://accounts.google.com\n" +
			"      cosign https://dl.k8s.io/v{{.Version}}/kubernetes-server-linux-{{.Arch}}.tar.gz.sig (+ .cert)\n",
		"  kubernetes-1.35 node: identity krel-staging@k8s-releng-prod.iam.gserviceaccount.com, issuer https://accounts.google.com\n",
		"  containerd containerd: identity matching ^https://github\\.com/containerd/containerd/",
		"      github-attestations containerd/containerd\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("keys list lacks %q:\n%s", want, stdout)
		}
	}
	code, stdout, _ = runCLI(t, "--recipes", "../../recipes", "--json", "keys", "list", "../../keys/helm.asc")
	var one struct {
		Keyrings []struct {
			File   string   `json:"file"`
			UsedBy []string `json:"used_by"`
		} `json:"keyrings"`
	}
	listing := &one.Keyrings
	if code != 0 || json.Unmarshal([]byte(stdout), &one) != nil || len(*listing) != 1 || strings.Join((*listing)[0].UsedBy, ",") != "helm helm (signature)" {
		t.Errorf("keyring users: exit %d\n%s", code, stdout)
	}
	code, stdout, _ = runCLI(t, "--recipes", "../../recipes", "--json", "keys", "list")
	var every struct {
		Keyrings []struct {
			Sigstore *struct {
				Recipe, Source, Form, Material, Identity, Issuer string
				IdentityRegexp                                   string `json:"identity_regexp"`
			} `json:"sigstore"`
		} `json:"keyrings"`
	}
	all := &every.Keyrings
	if code != 0 || json.Unmarshal([]byte(stdout), &every) != nil {
		t.Fatalf("--json: exit %d\n%s", code, stdout)
	}
	var signers []string
	for _, l := range *all {
		if l.Sigstore != nil {
			signers = append(signers, l.Sigstore.Recipe+" "+l.Sigstore.Source+" "+l.Sigstore.Form+" "+l.Sigstore.Issuer)
		}
	}
	if want := "containerd containerd github-attestations https://token.actions.githubusercontent.com," +
		"kubernetes-1.35 server cosign https://accounts.google.com,kubernetes-1.35 node cosign https://accounts.google.com," +
		"kubernetes-1.36 server cosign https://accounts.google.com,kubernetes-1.36 node cosign https://accounts.google.com"; strings.Join(signers, ",") != want {
		t.Errorf("signers %v", signers)
	}
}

// A recipe that counts attestations of other predicate types than SLSA
// provenance says so where keys list names its signer: what counts is part
// of who is accepted.
func TestKeysListPredicateTypes(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "containerd"), os.DirFS("../../recipes/containerd")); err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile("../../recipes/containerd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const issuer = "      issuer: https://token.actions.githubusercontent.com\n"
	const sbom = "https://spdx.dev/Document"
	edited := strings.Replace(string(text), issuer, issuer+"      predicate-types: [https://slsa.dev/provenance/v1, "+sbom+"]\n", 1)
	if err := os.WriteFile(filepath.Join(dir, "containerd.yaml"), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "--recipes", dir, "keys", "list")
	if code != 0 || !strings.Contains(stdout, "issuer https://token.actions.githubusercontent.com, attestations of predicate type https://slsa.dev/provenance/v1, "+sbom+"\n") {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ = runCLI(t, "--recipes", dir, "--json", "keys", "list")
	if code != 0 || !strings.Contains(stdout, `"predicate_types": [`) || !strings.Contains(stdout, `"`+sbom+`"`) {
		t.Errorf("--json: exit %d\n%s", code, stdout)
	}
}

// TestKeysListHostileFileName: a keyring's file name, as keys/*.asc of a
// recipes checkout gives it, is printed escaped: a name with an escape
// sequence (OSC 0, the window's title) reached the terminal as it is.
func TestKeysListHostileFileName(t *testing.T) {
	data, err := os.ReadFile("../../keys/runc.asc")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "keys"), 0o755)
	if err := os.WriteFile(filepath.Join(dir, "keys", "k\x1b]0;pwned\a.asc"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	code, stdout, stderr := runCLI(t, "keys", "list")
	if code != 0 || strings.ContainsAny(stdout, "\x1b\a") || !strings.HasPrefix(stdout, `keys/k\x1b]0;pwned\a.asc: 3 primary keys`+"\n") {
		t.Errorf("keys list: exit %d %s\n%q", code, stderr, stdout)
	}
}

// TestVerifySignatureOutputNotTheMessage: --output naming the clearsigned
// message itself (or the keyring) is refused, exit 2, the file untouched:
// the verified content replaced the message, its signature gone.
func TestVerifySignatureOutputNotTheMessage(t *testing.T) {
	fx := pgptest.Get(t)
	msg, err := os.ReadFile(fx.Path("ed-clear.asc"))
	if err != nil {
		t.Fatal(err)
	}
	copied := filepath.Join(t.TempDir(), "SHA256SUMS.asc")
	os.WriteFile(copied, msg, 0o644)
	code, stdout, stderr := runCLI(t, "verify-signature", "--keyring", fx.Keyring, "--output", copied, copied)
	if code != exitUsage || stdout != "" || !strings.Contains(stderr, "--output "+copied+": this command reads that file, and the output would replace it") {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 2", code, stdout, stderr)
	}
	if got, _ := os.ReadFile(copied); !bytes.Equal(got, msg) {
		t.Errorf("the signed message was replaced:\n%s", got)
	}
}

// TestVerifySignatureOutputFIFO: --output naming a FIFO writes the verified
// content into it, as compat --output does, never replacing the FIFO.
func TestVerifySignatureOutputFIFO(t *testing.T) {
	fx := pgptest.Get(t)
	fifo := filepath.Join(t.TempDir(), "content.fifo")
	read := fifoReader(t, fifo)
	code, _, stderr := runCLI(t, "verify-signature", "--keyring", fx.Keyring, "--output", fifo, fx.Path("ed-clear.asc"))
	if got := read(); code != 0 || !strings.HasPrefix(got, "abc123  runc.amd64\n") {
		t.Errorf("exit %d, the FIFO's reader got %q\n%s", code, got, stderr)
	}
}
