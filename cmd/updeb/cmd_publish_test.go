package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp/armor"

	"github.com/updeb/updeb/internal/pipeline"
	"github.com/updeb/updeb/internal/repo"
	"github.com/updeb/updeb/internal/testkit/testenv"
	"github.com/updeb/updeb/pkg/dsse"
)

// buildDeb makes a small .deb with dpkg-deb.
func buildDeb(t *testing.T, dir, name, version, payload string) string {
	t.Helper()
	tree := filepath.Join(dir, "tree-"+payload)
	if err := os.MkdirAll(filepath.Join(tree, "DEBIAN"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctl := fmt.Sprintf("Package: %s\nVersion: %s\nArchitecture: amd64\nMaintainer: T <t@example.com>\nDescription: test\n %s\n", name, version, payload)
	if err := os.WriteFile(filepath.Join(tree, "DEBIAN/control"), []byte(ctl), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, payload+".deb")
	testenv.Run(t, "dpkg-deb", "--root-owner-group", "-Zgzip", "--build", tree, out)
	return out
}

// generateKey makes a signing key with the CLI and returns its prefix
// (PREFIX.secret.asc is the secret key).
func generateKey(t *testing.T, dir string) string {
	t.Helper()
	key := filepath.Join(dir, "k")
	if code, _, stderr := runCLI(t, "keys", "generate", "--name", "Test", "--email", "t@example.com", "--out", key); code != 0 {
		t.Fatalf("keys generate: exit %d: %s", code, stderr)
	}
	return key
}

func TestPublishListRemoveCLI(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	dir := t.TempDir()
	key := filepath.Join(dir, "k")
	if code, _, stderr := runCLI(t, "keys", "generate", "--name", "Test", "--email", "t@example.com", "--out", key); code != 0 {
		t.Fatalf("keys generate: exit %d: %s", code, stderr)
	}
	if st, err := os.Stat(key + ".secret.asc"); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("secret key file: %v %v, want mode 0600", st, err)
	}
	if code, _, stderr := runCLI(t, "keys", "generate", "--name", "Test", "--email", "t@example.com", "--out", key); code != exitUsage || !strings.Contains(stderr, "already exists") {
		t.Fatalf("keys generate over an existing key: exit %d: %s", code, stderr)
	}
	// A folder that does not exist yet is made; the secret stays 0600 under any umask.
	nested := filepath.Join(dir, "keys", "new", "repo")
	old := syscall.Umask(0)
	code, _, stderr := runCLI(t, "keys", "generate", "--name", "Test", "--email", "t@example.com", "--out", nested)
	syscall.Umask(old)
	if st, err := os.Stat(nested + ".secret.asc"); code != 0 || err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("keys generate into a new folder: exit %d, %v %v: %s", code, st, err, stderr)
	}
	// Under umask 077 (a hardened root), the folders it makes and the public
	// keys are still for others to read, as its help says.
	strict := filepath.Join(dir, "strict", "new", "repo")
	old = syscall.Umask(0o077)
	code, _, stderr = runCLI(t, "keys", "generate", "--name", "Test", "--email", "t@example.com", "--out", strict)
	syscall.Umask(old)
	for name, want := range map[string]os.FileMode{"strict": 0o755, "strict/new": 0o755, "strict/new/repo.gpg": 0o644, "strict/new/repo.asc": 0o644, "strict/new/repo.secret.asc": 0o600} {
		if st, err := os.Stat(filepath.Join(dir, name)); code != 0 || err != nil || st.Mode().Perm() != want {
			t.Errorf("keys generate under umask 077: exit %d, %s: %v %v, want mode %04o: %s", code, name, st, err, want, stderr)
		}
	}
	// A folder is no prefix: no hidden .secret.asc in it.
	for _, folder := range []string{dir + "/", filepath.Join(dir, "keys") + "/.", dir + "/.."} {
		if code, _, stderr := runCLI(t, "keys", "generate", "--name", "Test", "--email", "t@example.com", "--out", folder); code != exitUsage || !strings.Contains(stderr, "names a folder") {
			t.Errorf("keys generate --out %s: exit %d: %s", folder, code, stderr)
		}
	}
	for _, f := range []string{".secret.asc", "keys/.secret.asc", "...secret.asc"} {
		if _, err := os.Lstat(filepath.Join(dir, f)); err == nil {
			t.Errorf("key file %s written", f)
		}
	}
	if code, _, stderr := runCLI(t, "keys", "generate", "--name", "Test", "--email", "t@example.com", "--type", "rsa2048", "--out", filepath.Join(dir, "weak")); code != exitUsage {
		t.Fatalf("keys generate --type rsa2048: exit %d, want 2: %s", code, stderr)
	}

	repoDir := filepath.Join(dir, "repo")
	common := []string{"--repo", repoDir, "--key", key + ".secret.asc", "--suite", "bookworm-test", "--component", "component/k8s131"}
	good := buildDeb(t, dir, "kubectl", "1.31.4-1", "good")
	if code, out, stderr := runCLI(t, append([]string{"publish"}, append(common, good)...)...); code != 0 || !strings.Contains(out, "added     kubectl 1.31.4-1 amd64") {
		t.Fatalf("publish: exit %d\n%s%s", code, out, stderr)
	}
	for _, f := range []string{"archive-keyring.gpg", "archive-keyring.asc", "dists/bookworm-test/InRelease", "dists/bookworm-test/Release.gpg"} {
		if _, err := os.Stat(filepath.Join(repoDir, f)); err != nil {
			t.Errorf("after publish: %v", err)
		}
	}
	other := buildDeb(t, dir, "kubectl", "1.31.4-1", "other")
	code, _, stderr = runCLI(t, append([]string{"publish"}, append(common, other)...)...)
	if code != exitCheck || !strings.Contains(stderr, "is already published as pool/component/k8s131/k/kubectl/kubectl_1.31.4-1_amd64.deb") {
		t.Fatalf("republish with other bytes: exit %d, want 1: %s", code, stderr)
	}

	code, out, stderr := runCLI(t, "--json", "repo", "list", "--repo", repoDir)
	var list struct {
		Packages []repo.Entry `json:"packages"`
	}
	entries := &list.Packages
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(*entries) != 1 || (*entries)[0].Version != "1.31.4-1" || (*entries)[0].Component != "component/k8s131" {
		t.Fatalf("repo list --json: exit %d: %s%s", code, out, stderr)
	}
	code, out, _ = runCLI(t, "repo", "list", "--repo", repoDir)
	if code != 0 || !strings.Contains(out, "SUITE") || !strings.Contains(out, "kubectl") {
		t.Fatalf("repo list: exit %d: %s", code, out)
	}
	if code, out, stderr := runCLI(t, append([]string{"repo", "remove"}, append(common, "kubectl=1.31.4-1")...)...); code != 0 || !strings.Contains(out, "removed kubectl 1.31.4-1 amd64") {
		t.Fatalf("repo remove: exit %d: %s%s", code, out, stderr)
	}
	if code, _, stderr := runCLI(t, append([]string{"repo", "remove"}, append(common, "kubectl")...)...); code != exitUsage || !strings.Contains(stderr, "not published") {
		t.Fatalf("repo remove of nothing: exit %d: %s", code, stderr)
	}
}

func TestPublishMalformedDeb(t *testing.T) {
	dir := t.TempDir()
	key := generateKey(t, dir)
	bad := filepath.Join(dir, "bad.deb")
	os.WriteFile(bad, []byte("!<arch>\ngarbage"), 0o644)
	code, _, stderr := runCLI(t, "publish", "--repo", filepath.Join(dir, "repo"), "--key", key+".secret.asc", bad)
	if code != exitUsage || !strings.Contains(stderr, bad) {
		t.Fatalf("publish of a malformed .deb: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "repo", "dists")); err == nil {
		t.Fatal("a refused publish created the repository metadata")
	}
}

// Where a package goes: the flag, else its recipe's component and suite (from
// the provenance record beside it), else the config's repo: section.
func TestPublishTargetPrecedence(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	dir := t.TempDir()
	generateKey(t, dir) // k.secret.asc, named by the config
	cfg := filepath.Join(dir, "updeb.yaml")
	os.WriteFile(cfg, []byte("repo:\n  dir: repo\n  key: k.secret.asc\n  suite: bookworm-test\n  component: main\n  origin: Example Org\n"), 0o644)

	fromRecipe := buildDeb(t, dir, "kubectl", "1.36.0-1", "a")
	// The record as build writes it: a DSSE envelope (here unsigned).
	statement := base64.StdEncoding.EncodeToString([]byte(`{"predicate":{"buildDefinition":{"externalParameters":{"component":"component/kubernetes136"}}}}`))
	os.WriteFile(fromRecipe+".intoto.json", []byte(`{"payloadType":"application/vnd.in-toto+json","payload":"`+statement+`","signatures":[]}`), 0o644)
	plain := buildDeb(t, dir, "tool", "1.0-1", "b")
	code, out, stderr := runCLI(t, "--config", cfg, "publish", fromRecipe, plain)
	if code != 0 {
		t.Fatalf("publish: exit %d: %s", code, stderr)
	}
	// Both components in one generation: a recipe's packages appear together.
	for _, want := range []string{"suite bookworm-test component component/kubernetes136: generation 1", "suite bookworm-test component main: generation 1"} {
		if !strings.Contains(out, want) {
			t.Errorf("publish output lacks %q:\n%s", want, out)
		}
	}
	rel, err := os.ReadFile(filepath.Join(dir, "repo", "dists", "bookworm-test", "Release"))
	if err != nil || !strings.Contains(string(rel), "Origin: Example Org") || !strings.Contains(string(rel), "Components: component/kubernetes136 main") {
		t.Fatalf("Release from the config's repo section: %v\n%s", err, rel)
	}
	// The flag wins over the recipe (whose record here is a bare statement,
	// as updeb wrote them before it signed them).
	other := buildDeb(t, dir, "kubectl", "1.36.1-1", "c")
	os.WriteFile(other+".intoto.json", []byte(`{"predicate":{"buildDefinition":{"externalParameters":{"component":"component/kubernetes136"}}}}`), 0o644)
	if code, out, stderr := runCLI(t, "--config", cfg, "publish", "--component", "extra", other); code != 0 || !strings.Contains(out, "component extra") {
		t.Fatalf("publish --component: exit %d: %s%s", code, out, stderr)
	}
	// A record that is there but not one reading (a key twice: encoding/json
	// took the last), a malformed envelope: refused, not taken as "no
	// preference" (the package would land in the config's component).
	before := treeDigests(t, filepath.Join(dir, "repo"))
	odd := buildDeb(t, dir, "kubectl", "1.36.2-1", "d")
	for name, record := range map[string]string{
		"component twice":             `{"predicate":{"buildDefinition":{"externalParameters":{"component":"component/kubernetes136","component":"main"}}}}`,
		"keys in two cases":           `{"predicate":{"buildDefinition":{"externalParameters":{"component":"component/kubernetes136","Component":"main"}}}}`,
		"malformed envelope":          `{"payloadType":"application/vnd.in-toto+json","payload":"` + statement[:8] + `\n` + statement[8:] + `","signatures":[]}`,
		"two JSON values":             `{"payloadType":"x"}{"payloadType":"y"}`,
		"larger than a record may be": `{"predicate":{"buildDefinition":{"externalParameters":{"component":"component/kubernetes136"}}}}` + strings.Repeat(" ", dsse.MaxSize),
	} {
		os.WriteFile(odd+".intoto.json", []byte(record), 0o644)
		code, out, stderr := runCLI(t, "--config", cfg, "publish", odd)
		if code != exitUsage || !strings.Contains(stderr, odd+".intoto.json") || !strings.Contains(stderr, "the repository is unchanged") {
			t.Errorf("%s: exit %d: %s%s", name, code, out, stderr)
		}
		// Read as an envelope and as a bare statement, the record may fail
		// both for one reason: it is said once.
		if strings.Count(stderr, "invalid JSON") > 1 {
			t.Errorf("%s: the reason is repeated:\n%s", name, stderr)
		}
	}
	if after := treeDigests(t, filepath.Join(dir, "repo")); !maps.Equal(before, after) {
		t.Error("a refused publish changed the repository")
	}
	// repo list reads the same config.
	code, out, stderr = runCLI(t, "--config", cfg, "repo", "list")
	if code != 0 || !strings.Contains(out, "component/kubernetes136") || !strings.Contains(out, "extra") {
		t.Fatalf("repo list: exit %d: %s%s", code, out, stderr)
	}
}

// Packages of recipes in two suites (from their provenance records) are
// all checked before either suite is written: one refused for the second
// suite leaves the first unchanged too, as the hint says; it used to be
// published, the hint saying "the repository is unchanged".
func TestPublishTwoSuitesAllOrNothing(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	dir := t.TempDir()
	key := generateKey(t, dir)
	flags := []string{"--config", "/dev/null", "--repo", filepath.Join(dir, "repo"), "--key", key + ".secret.asc"}
	inSuite := func(deb, suite string) string {
		os.WriteFile(deb+".intoto.json", []byte(`{"predicate":{"buildDefinition":{"externalParameters":{"suite":"`+suite+`"}}}}`), 0o644)
		return deb
	}
	runCLIExit(t, 0, append(append([]string{"publish", "--suite", "two"}, flags...), buildDeb(t, dir, "tool", "1.0-1", "a"))...)
	before := treeDigests(t, filepath.Join(dir, "repo"))
	one := inSuite(buildDeb(t, dir, "kubectl", "1.36.0-1", "b"), "one")
	other := inSuite(buildDeb(t, dir, "tool", "1.0-1", "c"), "two")
	_, stderr := runCLIExit(t, exitCheck, append(append([]string{"publish"}, flags...), one, other)...)
	if !strings.Contains(stderr, "tool=1.0-1 (amd64) is already published") || !strings.Contains(stderr, "the repository is unchanged") {
		t.Fatalf("publish refused for suite two: %s", stderr)
	}
	if after := treeDigests(t, filepath.Join(dir, "repo")); !maps.Equal(before, after) {
		t.Error("a publish refused for one suite changed the repository (suite one published?)")
	}
}

// A signing key file others can read is used with a warning that says how
// to fix it (gpg --export-secret-keys > FILE leaves it 0644 under umask
// 022); one only its owner can read, without. The repository key and the
// provenance key are read alike.
func TestSigningKeyReadableByOthers(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	dir := t.TempDir()
	key := generateKey(t, dir) + ".secret.asc"
	deb := buildDeb(t, dir, "hello", "1.0", "a")
	args, _ := demoProject(t)
	args = slices.DeleteFunc(args, func(a string) bool { return a == "-q" }) // the warning is what is read
	for _, mode := range []os.FileMode{0o600, 0o400, 0o640, 0o604, 0o644, 0o666} {
		if err := os.Chmod(key, mode); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("warning: signing key %s is mode %04o: others than its owner can read or change this secret key; chmod 600 %s", key, mode, key)
		for what, cmd := range map[string][]string{
			"publish": {"publish", "--repo", filepath.Join(dir, "repo"), "--key", key, deb},
			"build":   append(args, "--out", filepath.Join(t.TempDir(), "out"), "build", "--provenance-key", key, "--arch", "amd64", "hello"),
		} {
			code, _, stderr := runCLI(t, cmd...)
			if code != 0 {
				t.Fatalf("%s with a key of mode %04o: exit %d: %s", what, mode, code, stderr)
			}
			if warned := strings.Contains(stderr, want); warned != (mode&0o077 != 0) {
				t.Errorf("%s with a key of mode %04o: warned %v:\n%s", what, mode, warned, stderr)
			}
		}
	}
}

// A public key file given as the signing key (PREFIX.asc or PREFIX.gpg
// beside PREFIX.secret.asc, mode 0644 as 'updeb keys generate' writes them)
// is refused as a public key, without the warning that others can read this
// secret key and the advice to chmod 600 a file that holds none.
func TestPublicKeyGivenAsSigningKey(t *testing.T) {
	dir := t.TempDir()
	prefix := generateKey(t, dir)
	for _, public := range []string{prefix + ".asc", prefix + ".gpg"} {
		code, _, stderr := runCLI(t, "publish", "--repo", filepath.Join(dir, "repo"), "--key", public, filepath.Join(dir, "none.deb"))
		if code != exitUsage || !strings.Contains(stderr, "unusable signing key: "+public) || strings.Contains(stderr, "chmod 600") {
			t.Errorf("publish --key %s: exit %d:\n%s", public, code, stderr)
		}
	}
}

// A signing key in the repository folder (or below it, or reached through a
// symlink to it), or a symlink in that folder to a key kept elsewhere, is
// refused before anything is written: every file there is served (a web
// server following the link serves the key), the secret key too.
func TestSigningKeyInRepositoryFolder(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	dir := t.TempDir()
	repoDir := filepath.Join(dir, "repo")
	key := generateKey(t, filepath.Join(repoDir, "keys")) + ".secret.asc"
	deb := buildDeb(t, dir, "hello", "1.0", "a")
	link := filepath.Join(dir, "served")
	if err := os.Symlink("repo", link); err != nil {
		t.Fatal(err)
	}
	outside := generateKey(t, filepath.Join(dir, "private")) + ".secret.asc"
	served := filepath.Join(repoDir, "served.secret.asc")
	chained := filepath.Join(dir, "private", "current.secret.asc") // -> the link in the folder -> the key outside
	for _, l := range [][2]string{{outside, served}, {served, chained}} {
		if err := os.Symlink(l[0], l[1]); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range [][2]string{{repoDir, key}, {link, key}, {repoDir, filepath.Join(link, "keys", "k.secret.asc")}, {repoDir, served}, {repoDir, chained}} {
		code, _, stderr := runCLI(t, "publish", "--repo", c[0], "--key", c[1], deb)
		want := fmt.Sprintf("error: signing key %s lies in the repository folder %s, which is served to every client", c[1], c[0])
		if code != exitUsage || !strings.Contains(stderr, want) || !strings.Contains(stderr, "hint: move it out of the repository folder") {
			t.Errorf("publish --repo %s --key %s: exit %d: %s\nwant exit %d and %s", c[0], c[1], code, stderr, exitUsage, want)
		}
	}
	if _, err := os.Stat(filepath.Join(repoDir, "dists")); !os.IsNotExist(err) {
		t.Fatalf("the refused publish wrote the repository: %v", err)
	}
	if code, _, stderr := runCLI(t, "publish", "--repo", filepath.Join(dir, "other"), "--key", key, deb); code != 0 {
		t.Fatalf("the key beside another repository: exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "publish", "--repo", filepath.Join(dir, "another"), "--key", chained, deb); code != 0 {
		t.Fatalf("links out of another repository: exit %d: %s", code, stderr)
	}
}

// With no signing key anywhere, publish names every place one is taken
// from: the flag, the config, the environment.
func TestNoSigningKey(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "updeb.yaml")
	if err := os.WriteFile(cfg, []byte("repo: {suite: stable}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("UPDEB_SIGNING_KEY", "")
	code, _, stderr := runCLI(t, "--config", cfg, "publish", "--repo", filepath.Join(dir, "repo"), filepath.Join(dir, "none.deb"))
	if want := "no signing key: pass --key FILE, set repo: key: in the config, or UPDEB_SIGNING_KEY"; code != exitUsage || !strings.Contains(stderr, want) {
		t.Errorf("publish without a key: exit %d\n%s\nwant exit %d and %q", code, stderr, exitUsage, want)
	}
}

// A signing key this user cannot read is not one to create: the hint says
// whose it is to read (it said "create one with 'updeb keys generate'").
// For root, whom modes do not stop, a write-only sysctl stands in (procfs
// refuses to read it to root too).
func TestSigningKeyUnreadable(t *testing.T) {
	dir := t.TempDir()
	key := generateKey(t, dir) + ".secret.asc"
	if err := os.Chmod(key, 0); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		key = "/proc/sys/vm/drop_caches"
	}
	code, _, stderr := runCLI(t, "publish", "--repo", filepath.Join(dir, "repo"), "--key", key, filepath.Join(dir, "none.deb"))
	if code != exitUsage || !strings.Contains(stderr, "error: open "+key+": permission denied\nupdeb: hint: the key file is there, but this user cannot read it") {
		t.Errorf("publish with an unreadable key: exit %d\n%s", code, stderr)
	}
}

// A signing key that is not a regular file (a FIFO: a secret piped in with
// <(...)) is named as the file it must be, not as one to create ("create
// one with 'updeb keys generate'").
func TestSigningKeyNotAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "key.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "publish", "--repo", filepath.Join(dir, "repo"), "--key", fifo, filepath.Join(dir, "none.deb"))
	if want := "error: " + fifo + ": refused: not a regular file (a FIFO)\nupdeb: hint: a signing key (--key, repo: key:, UPDEB_SIGNING_KEY) is the file PREFIX.secret.asc that 'updeb keys generate' writes: name it, or create one\n"; code != exitUsage || !strings.HasSuffix(stderr, want) {
		t.Errorf("publish with a FIFO as its key: exit %d\n%s\nwant %q", code, stderr, want)
	}
}

// A signing key given in base64 where its file's path goes (a masked CI
// variable holds one line: base64 -w0 repo.secret.asc) is refused without
// being printed, armored or binary, as the open error printed it whole.
func TestSigningKeyBase64Refused(t *testing.T) {
	dir := t.TempDir()
	secret, err := os.ReadFile(generateKey(t, dir) + ".secret.asc")
	if err != nil {
		t.Fatal(err)
	}
	block, err := armor.Decode(bytes.NewReader(secret))
	if err != nil {
		t.Fatal(err)
	}
	binary, err := io.ReadAll(block.Body)
	if err != nil {
		t.Fatal(err)
	}
	want := "a signing key is named by the path of its file, and this one is the key's text in base64 (not printed here)"
	for what, key := range map[string][]byte{"armored": secret, "binary": binary} {
		encoded := base64.StdEncoding.EncodeToString(key)
		for _, env := range []string{encoded, encoded + "\n"} {
			t.Setenv("UPDEB_SIGNING_KEY", env)
			code, _, stderr := runCLI(t, "publish", "--repo", filepath.Join(dir, "repo"), filepath.Join(dir, "none.deb"))
			if code != exitUsage || !strings.Contains(stderr, want) || strings.Contains(stderr, encoded[:40]) {
				t.Errorf("%s key in base64: exit %d:\n%s\nwant exit %d and %q, without the key", what, code, stderr, exitUsage, want)
			}
		}
	}
}

// A signing key's path with a line break after it (a variable set from a
// file's text) is named as the path it is, not refused as the key's text.
func TestSigningKeyPathWithLineBreak(t *testing.T) {
	dir := t.TempDir()
	key := generateKey(t, dir) + ".secret.asc"
	t.Setenv("UPDEB_SIGNING_KEY", key+"\n")
	code, _, stderr := runCLI(t, "publish", "--repo", filepath.Join(dir, "repo"), filepath.Join(dir, "none.deb"))
	if want := fmt.Sprintf("the signing key's path %q ends with a line break", key+"\n"); code != exitUsage || !strings.Contains(stderr, want) {
		t.Errorf("UPDEB_SIGNING_KEY=PATH\\n: exit %d:\n%s\nwant exit %d and %q", code, stderr, exitUsage, want)
	}
}

// A signing key given as its text where its file's path goes (a CI secret
// put in $UPDEB_SIGNING_KEY as it is) is refused without a line of it in
// the log, as the open error would have printed it whole.
func TestSigningKeyTextRefused(t *testing.T) {
	dir := t.TempDir()
	secret, err := os.ReadFile(generateKey(t, dir) + ".secret.asc")
	if err != nil {
		t.Fatal(err)
	}
	text := string(secret)
	args, _ := demoProject(t)
	want := "a signing key is named by the path of its file, and this one is the key's text (not printed here)"
	for what, c := range map[string]struct {
		env  string
		args []string
	}{
		"$UPDEB_SIGNING_KEY":         {text, []string{"publish", "--repo", filepath.Join(dir, "repo"), filepath.Join(dir, "none.deb")}},
		"--key, its body only":       {"", []string{"--log-format", "json", "publish", "--repo", filepath.Join(dir, "repo"), "--key", strings.SplitN(text, "\n", 3)[2], filepath.Join(dir, "none.deb")}},
		"build --provenance-key":     {"", append(args, "build", "--provenance-key", text, "hello")},
		"build: the armor line only": {"", append(args, "build", "--provenance-key", "-----BEGIN PGP PRIVATE KEY BLOCK-----", "hello")},
	} {
		t.Setenv("UPDEB_SIGNING_KEY", c.env)
		code, _, stderr := runCLI(t, c.args...)
		if code != exitUsage || !strings.Contains(stderr, want) || strings.Contains(stderr, "PRIVATE KEY") || strings.Contains(stderr, strings.SplitN(text, "\n", 4)[2]) {
			t.Errorf("%s: exit %d:\n%s\nwant exit %d and %q, without the key", what, code, stderr, exitUsage, want)
		}
	}
}

// readPackage gives Publish the SHA256 of the bytes it read the control
// paragraph from, so that a file replaced before its copy into the pool is
// refused (repo.TestPublishRefusesAFileChangedSinceRead).
func TestReadPackageDigest(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	path := buildDeb(t, t.TempDir(), "tool", "1.0-1", "a")
	p, err := readPackage(context.Background(), path, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(data); p.SHA256 != hex.EncodeToString(sum[:]) || p.Control.Value("Package") != "tool" {
		t.Errorf("readPackage: sha256 %q, package %q; want %x, tool", p.SHA256, p.Control.Value("Package"), sum)
	}
}

// The record beside a package decides its suite and component only when it
// is the record of that package: one of an older build of the same version
// (the recipe has since moved to another suite, the .deb was rebuilt or
// copied over), or of another package, named other bytes, and publish put
// the package where that build went, without a word. It is refused, naming
// both digests; the repository is unchanged.
func TestPublishRecordOfOtherBytes(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	dir := t.TempDir()
	key := generateKey(t, dir)
	flags := []string{"--config", "/dev/null", "--repo", filepath.Join(dir, "repo"), "--key", key + ".secret.asc"}
	runCLIExit(t, 0, append(append([]string{"publish", "--suite", "stable"}, flags...), buildDeb(t, dir, "tool", "1.0-1", "a"))...)
	before := treeDigests(t, filepath.Join(dir, "repo"))
	deb := buildDeb(t, dir, "kubectl", "1.36.0-1", "b")
	data, err := os.ReadFile(deb)
	if err != nil {
		t.Fatal(err)
	}
	sum := fmt.Sprintf("%x", sha256.Sum256(data))
	record := func(name, sha256 string) {
		statement := `{"_type":"https://in-toto.io/Statement/v1","subject":[{"name":"` + name + `","digest":{"sha256":"` + sha256 + `"}}],` +
			`"predicateType":"https://slsa.dev/provenance/v1","predicate":{"buildDefinition":{"externalParameters":{"suite":"old"}}}}`
		payload := base64.StdEncoding.EncodeToString([]byte(statement))
		os.WriteFile(deb+".intoto.json", []byte(`{"payloadType":"application/vnd.in-toto+json","payload":"`+payload+`","signatures":[]}`), 0o644)
	}
	older := strings.Repeat("0", 64)
	for name, subject := range map[string][2]string{
		"an older build of the same version": {filepath.Base(deb), older},
		"another package":                    {"tool_1.0-1_amd64.deb", sum},
	} {
		record(subject[0], subject[1])
		_, stderr := runCLIExit(t, exitUsage, append(append([]string{"publish"}, flags...), deb)...)
		if !strings.Contains(stderr, deb+".intoto.json") || !strings.Contains(stderr, "is not the record of "+filepath.Base(deb)) || !strings.Contains(stderr, "the repository is unchanged") {
			t.Errorf("%s: %s", name, stderr)
		}
		if after := treeDigests(t, filepath.Join(dir, "repo")); !maps.Equal(before, after) {
			t.Fatalf("%s: publish went on with the record of other bytes", name)
		}
	}
	// Its own record (the sha256 in either case) names the suite.
	record(filepath.Base(deb), strings.ToUpper(sum))
	if out, _ := runCLIExit(t, 0, append(append([]string{"publish"}, flags...), deb)...); !strings.Contains(out, "suite old component main") {
		t.Errorf("publish with the package's own record:\n%s", out)
	}
}

// TestPendingCommitsListOnce: publish out/*.deb looked for a killed
// build's commit journal once for each package, listing the output
// folder's state folder (a record for each recipe and architecture) each
// time: 1,000 packages of an output folder of 2,000 records allocated for
// 2,000,000 names. The folder is listed once now, and a journal there is
// still found.
func TestPendingCommitsListOnce(t *testing.T) {
	out := t.TempDir()
	files := map[string]string{}
	for i := range 2000 {
		files[fmt.Sprintf("%s/r%d-amd64.json", pipeline.StateDir, i)] = "{}"
	}
	testenv.WriteFiles(t, out, files)
	allocs := testing.AllocsPerRun(1, func() {
		pending := pendingCommits()
		for range 1000 {
			if pending(out) {
				t.Fatal("a commit pending in a folder of state records only")
			}
		}
	})
	if allocs > 20000 {
		t.Errorf("1,000 packages of one output folder of 2,000 state records: %.0f allocations", allocs)
	}
	testenv.WriteFiles(t, out, map[string]string{pipeline.StateDir + "/commit-x.json": "{}"})
	if !pendingCommits()(out) {
		t.Error("a commit journal in the state folder not found")
	}
}
