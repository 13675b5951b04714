package pipeline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/fetch"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/repo"
	"github.com/updeb/updeb/internal/signkey"
	"github.com/updeb/updeb/internal/source"
	"github.com/updeb/updeb/internal/testkit/testenv"
	"github.com/updeb/updeb/internal/trust"
	"github.com/updeb/updeb/pkg/archive"
	"github.com/updeb/updeb/pkg/deb"
	"github.com/updeb/updeb/pkg/digest"
	"github.com/updeb/updeb/pkg/verify/openpgp"
	"github.com/updeb/updeb/pkg/verify/sigstore"
)

const demoHost = "https://releases.example.org/"

// demoDir is the repository's demo project (recipes, keys, fixture mirror).
func demoDir(t testing.TB) string {
	d, err := filepath.Abs("../../testdata/demo")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// project copies the demo project (without its mirror) into a temporary
// folder so that a test may change recipes or the mirror freely.
func project(t testing.TB) (root, mirror string) {
	root = t.TempDir()
	src := demoDir(t)
	testenv.Run(t, "cp", "-a", filepath.Join(src, "recipes"), filepath.Join(src, "keys"), root)
	mirror = filepath.Join(root, "mirror")
	testenv.Run(t, "cp", "-a", filepath.Join(src, "mirror", "releases.example.org"), mirror)
	return root, mirror
}

// demoSigstore verifies the demo's Sigstore bundles: it trusts the test CA
// root the demo's config names (testdata/demo/sigstore/trusted_root.json).
func demoSigstore() (*sigstore.Verifier, error) {
	p, err := filepath.Abs("../../testdata/demo/sigstore/trusted_root.json")
	if err != nil {
		return nil, err
	}
	tr, err := sigstore.LoadTrustedRoot(p)
	if err != nil {
		return nil, err
	}
	return sigstore.New(tr, sigstore.Options{})
}

func options(t testing.TB, mirror, out string) Options {
	ss, err := demoSigstore()
	if err != nil {
		t.Fatal(err)
	}
	f, err := fetch.New(filepath.Join(t.TempDir(), "cache"), fetch.Options{
		Mirrors: []fetch.Mirror{{Prefix: demoHost, To: "file://" + mirror + "/"}},
		Retries: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	return Options{
		Source: source.Options{Fetcher: f, Sigstore: ss, Now: time.Now, Logger: slog.New(slog.DiscardHandler)},
		OutDir: out, UpdebVersion: "test",
		ResolveOptions: recipe.ResolveOptions{DefaultMaintainer: "updeb tests <tests@example.org>"},
		Parallel:       2,
	}
}

func jobs(t testing.TB, root string, arch string, names ...string) []Job {
	var js []Job
	for _, n := range names {
		r, err := recipe.Load(filepath.Join(root, "recipes", n+".yaml"), recipe.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		js = append(js, Job{Recipe: r, Arch: arch})
	}
	return js
}

func debs(t testing.TB, out string) []string {
	m, _ := filepath.Glob(filepath.Join(out, "*.deb"))
	return m
}

func sha256File(t testing.TB, p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestDemoBuildEndToEnd(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb", "dpkg", "lintian")
	root, mirror := project(t)
	out := filepath.Join(t.TempDir(), "out")
	opts := options(t, mirror, out)
	res, err := Run(context.Background(), jobs(t, root, "amd64", "hello", "pingd"), opts)
	if err != nil {
		t.Fatal(err)
	}
	if d := os.Getenv("UPDEB_KEEP_DEMO"); d != "" {
		testenv.Run(t, "cp", "-a", out, d)
	}
	files := debs(t, out)
	if len(files) != 2 || len(res) != 2 || res[0].Skipped || res[1].Skipped {
		t.Fatalf("outputs %v, results %+v", files, res)
	}

	// lintian at every level, on every package: only the overrides the
	// packages carry, with their justifications.
	testenv.Lintian(t, nil, files...)

	// dpkg installs both into a throwaway root and removes them again.
	dpkgRoot := t.TempDir()
	admin := filepath.Join(dpkgRoot, "var/lib/dpkg")
	for _, d := range []string{"updates", "info", "triggers"} {
		os.MkdirAll(filepath.Join(admin, d), 0o755)
	}
	os.WriteFile(filepath.Join(admin, "status"), nil, 0o644)
	testenv.BasePasswd(t, dpkgRoot) // pingd's postinst adds its system user there
	dpkg := []string{"--root=" + dpkgRoot, "--admindir=" + admin, "--force-script-chrootless", "--force-not-root", "--force-depends", "--log=/dev/null"}
	testenv.Run(t, "dpkg", append(append([]string{}, dpkg...), append([]string{"-i"}, files...)...)...)
	for _, p := range []string{"usr/bin/hello", "usr/bin/pingd", "etc/default/pingd", "lib/systemd/system/pingd.service", "usr/share/doc/hello/copyright", "usr/share/doc/pingd/changelog.Debian.gz"} {
		if _, err := os.Stat(filepath.Join(dpkgRoot, p)); err != nil {
			t.Errorf("installed tree lacks %s: %v", p, err)
		}
	}
	testenv.Run(t, "dpkg", append(dpkg, "-r", "hello")...)

	// The provenance record names the package's digest and the signer.
	hello := filepath.Join(out, "hello_1.2.0-1_amd64.deb")
	st, env := readRecord(t, hello+ProvenanceSuffix)
	if len(env.Signatures) != 0 {
		t.Fatalf("no provenance key configured, yet the record is signed: %+v", env.Signatures)
	}
	if len(st.Subject) != 1 || st.Subject[0].Digest["sha256"] != sha256File(t, hello) {
		t.Fatalf("provenance subject %+v does not match the package", st.Subject)
	}
	found := false
	for _, d := range st.Predicate.BuildDefinition.ResolvedDependencies {
		vs, _ := d.Annotations["verifiedBy"].([]any)
		for _, v := range vs {
			if v == "openpgp:BF6DE05C1AE1CEB285DE5044F3CB238093D0BB4B" {
				found = true
			}
		}
	}
	if !found {
		t.Fatalf("provenance does not record the signer:\n%s", env.Payload)
	}
	// pingd's record names its Sigstore signer and keeps the bundle as an input.
	_, pingdEnv := readRecord(t, filepath.Join(out, "pingd_0.9.1-1_amd64.deb")+ProvenanceSuffix)
	pingdRecord := pingdEnv.Payload
	for _, want := range []string{
		`"sigstore:https://github.com/updeb-demo/pingd/.github/workflows/release.yml@refs/tags/v0.9.1 issuer=https://token.actions.githubusercontent.com rekor=`,
		`"uri": "https://releases.example.org/pingd/v0.9.1/pingd.amd64.sigstore.json"`,
		`"signature-of:https://releases.example.org/pingd/v0.9.1/pingd.amd64"`,
	} {
		if !strings.Contains(string(pingdRecord), want) {
			t.Errorf("pingd's provenance lacks %s:\n%s", want, pingdRecord)
		}
	}

	// A rerun with nothing changed rebuilds nothing; --force gives the same bytes.
	before := sha256File(t, hello)
	res, err = Run(context.Background(), jobs(t, root, "amd64", "hello", "pingd"), opts)
	if err != nil || !res[0].Skipped || !res[1].Skipped {
		t.Fatalf("rerun: %v %+v", err, res)
	}
	opts.Force = true
	if _, err := Run(context.Background(), jobs(t, root, "amd64", "hello"), opts); err != nil {
		t.Fatal(err)
	}
	if sha256File(t, hello) != before {
		t.Fatal("forced rebuild changed the bytes")
	}
	// A damaged output is noticed and rebuilt.
	os.WriteFile(hello, []byte("damaged"), 0o644)
	opts.Force = false
	res, err = Run(context.Background(), jobs(t, root, "amd64", "hello"), opts)
	if err != nil || res[0].Skipped || sha256File(t, hello) != before {
		t.Fatalf("damaged output not rebuilt: %v %+v", err, res)
	}
}

// Every way of slipping in other bytes is refused and leaves no package.
func TestRefusals(t *testing.T) {
	testenv.RequireTool(t, "gpg")
	tarball := "hello/v1.2.0/hello-v1.2.0-linux-amd64.tar.gz"
	for _, tc := range []struct {
		name   string
		tamper func(t *testing.T, root, mirror string)
		check  func(error) bool
		want   string
	}{
		{"tampered artifact", func(t *testing.T, _, mirror string) {
			appendByte(t, filepath.Join(mirror, tarball))
		}, func(err error) bool { var me *digest.MismatchError; return errors.As(err, &me) }, "digest mismatch"},
		{"signature by a key outside the keyring", func(t *testing.T, _, mirror string) {
			signWithNewKey(t, filepath.Join(mirror, tarball))
		}, func(err error) bool { return errors.Is(err, openpgp.ErrSignature) }, "signature"},
		{"checksum file disagrees with the pin", func(t *testing.T, _, mirror string) {
			os.WriteFile(filepath.Join(mirror, tarball+".sha256sum"), []byte(strings.Repeat("0", 64)+"  hello-v1.2.0-linux-amd64.tar.gz\n"), 0o644)
		}, func(err error) bool { return errors.Is(err, trust.ErrCrossCheck) }, "checksum file"},
		{"checksum file without the artifact", func(t *testing.T, _, mirror string) {
			os.WriteFile(filepath.Join(mirror, tarball+".sha256sum"), []byte(strings.Repeat("0", 64)+"  other.tar.gz\n"), 0o644)
		}, func(err error) bool { return errors.Is(err, trust.ErrCrossCheck) }, "hello-v1.2.0-linux-amd64.tar.gz"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, mirror := project(t)
			tc.tamper(t, root, mirror)
			out := filepath.Join(t.TempDir(), "out")
			_, err := Run(context.Background(), jobs(t, root, "amd64", "hello"), options(t, mirror, out))
			if err == nil || !tc.check(err) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %s", err, tc.want)
			}
			if d := debs(t, out); len(d) != 0 {
				t.Fatalf("refused build left %v", d)
			}
		})
	}
}

func appendByte(t *testing.T, p string) {
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{0})
	f.Close()
}

// signWithNewKey replaces p's detached signature with one by a fresh key.
func signWithNewKey(t *testing.T, p string) {
	home := t.TempDir()
	gpg := func(args ...string) {
		testenv.Run(t, "gpg", append([]string{"--homedir", home, "--batch", "--pinentry-mode", "loopback", "--passphrase", "", "--quiet"}, args...)...)
	}
	gpg("--quick-gen-key", "intruder <intruder@example.org>", "ed25519", "sign", "never")
	gpg("--yes", "--armor", "--detach-sign", "--output", p+".asc", p)
}

// hostileTarball is a .tar.gz whose second entry climbs out of the archive.
func hostileTarball(t testing.TB) []byte {
	return tarballOf(t, "linux-amd64/hello", "hi\n", "../../etc/cron.d/evil", "hi\n")
}

// A hostile archive is refused even when its digest is pinned (a compromised
// upstream can publish one): nothing is written.
func TestHostileArchiveRefused(t *testing.T) {
	root, mirror := project(t)
	tarballRecipe(t, root, mirror, "evil", hostileTarball(t), `  - name: evil
    summary: hostile archive fixture
    description: |
      Must never be built.
    section: utils
    files:
      - {source: evil, path: linux-amd64/hello, dest: /usr/bin/hello, mode: "0755"}
`)
	out := filepath.Join(t.TempDir(), "out")
	_, err := Run(context.Background(), jobs(t, root, "amd64", "evil"), options(t, mirror, out))
	if !errors.Is(err, archive.ErrUnsafe) || !strings.Contains(err.Error(), "../../etc/cron.d/evil") {
		t.Fatalf("err = %v, want an unsafe-archive error naming the entry", err)
	}
	if d := debs(t, out); len(d) != 0 {
		t.Fatalf("hostile archive produced %v", d)
	}
}

// helperBuild runs a build in a child process (see TestMain's helper mode), so
// that environment differences (TZ, umask, locale, working folder) are real.
func helperBuild(t *testing.T, root, mirror, out string, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "UPDEB_BUILD_HELPER=1", "HELPER_ROOT="+root, "HELPER_MIRROR="+mirror, "HELPER_OUT="+out)
	cmd.Env = append(cmd.Env, env...)
	return cmd
}

// TestMain doubles as the child process of helperBuild: with
// UPDEB_BUILD_HELPER set it runs one build and exits instead of the tests.
func TestMain(m *testing.M) {
	if os.Getenv("UPDEB_BUILD_HELPER") != "" {
		os.Exit(helperMain())
	}
	os.Exit(m.Run())
}

func helperMain() int {
	ss, err := demoSigstore()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if u := os.Getenv("HELPER_UMASK"); u != "" {
		var m int
		fmt.Sscanf(u, "%o", &m)
		syscall.Umask(m)
	}
	if d := os.Getenv("HELPER_CWD"); d != "" {
		os.Chdir(d)
	}
	f, err := fetch.New(filepath.Join(os.Getenv("HELPER_OUT")+"-cache"), fetch.Options{
		Mirrors: []fetch.Mirror{{Prefix: demoHost, To: "file://" + os.Getenv("HELPER_MIRROR") + "/"}},
		Retries: -1,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var js []Job
	names := []string{"hello", "pingd"}
	if r := os.Getenv("HELPER_RECIPES"); r != "" {
		names = strings.Split(r, ",")
	}
	for _, n := range names {
		r, err := recipe.Load(filepath.Join(os.Getenv("HELPER_ROOT"), "recipes", n+".yaml"), recipe.LoadOptions{})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		js = append(js, Job{Recipe: r, Arch: "amd64"})
	}
	var key *signkey.Key
	if k := os.Getenv("HELPER_KEY"); k != "" {
		data, err := os.ReadFile(k)
		if err == nil {
			key, err = signkey.Read(bytes.NewReader(data), k)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	now := time.Now
	if y := os.Getenv("HELPER_YEARS"); y != "" { // a build years later (faketime does not reach Go's clock)
		n, _ := strconv.Atoi(y)
		now = func() time.Time { return time.Now().AddDate(n, 0, 0) }
	}
	_, err = Run(context.Background(), js, Options{
		ProvenanceKey: key,
		Source:        source.Options{Fetcher: f, Sigstore: ss, Now: now, Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))},
		OutDir:        os.Getenv("HELPER_OUT"), UpdebVersion: "test",
		ResolveOptions: recipe.ResolveOptions{DefaultMaintainer: "updeb tests <tests@example.org>"},
		Parallel:       2,
		Compression:    deb.Compression(os.Getenv("HELPER_COMPRESSION")),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func TestReproducibleAcrossEnvironments(t *testing.T) {
	// Two copies of the project in different folders, and a signed record.
	root, mirror := project(t)
	rootB, mirrorB := project(t)
	_, key := testKey(t, repo.Ed25519)
	keyFile := filepath.Join(t.TempDir(), "key.secret.asc")
	os.WriteFile(keyFile, key.SecretArmored, 0o600)
	outA, outB := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	a := helperBuild(t, root, mirror, outA, "TZ=UTC", "LC_ALL=C", "HELPER_UMASK=022", "HELPER_CWD=/", "HELPER_KEY="+keyFile)
	b := helperBuild(t, rootB, mirrorB, outB, "TZ=Pacific/Kiritimati", "LC_ALL=C.UTF-8", "LANG=de_DE.UTF-8", "HELPER_UMASK=077", "HELPER_CWD="+t.TempDir(), "HELPER_KEY="+keyFile, "HELPER_YEARS=7")
	for _, c := range []*exec.Cmd{a, b} {
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	}
	for _, p := range debs(t, outA) {
		q := filepath.Join(outB, filepath.Base(p))
		if sha256File(t, p) != sha256File(t, q) {
			t.Errorf("%s differs between the two builds", filepath.Base(p))
		}
		if sha256File(t, p+ProvenanceSuffix) != sha256File(t, q+ProvenanceSuffix) {
			t.Errorf("%s provenance differs between the two builds", filepath.Base(p))
		}
		if _, env := readRecord(t, p+ProvenanceSuffix); len(env.Signatures) != 1 {
			t.Errorf("%s: the record is not signed", filepath.Base(p))
		}
	}
	if len(debs(t, outA)) != 2 || len(debs(t, outB)) != 2 {
		t.Fatalf("outputs: %v %v", debs(t, outA), debs(t, outB))
	}
}

// A rebuild after one recipe changes touches only that recipe: the other's
// packages, provenance and state record keep their bytes and mtimes, and a
// touched but intact output is taken as it is.
func TestRebuildTouchesOnlyChangedRecipe(t *testing.T) {
	root, mirror := project(t)
	out := filepath.Join(t.TempDir(), "out")
	opts := options(t, mirror, out)
	if _, err := Run(context.Background(), jobs(t, root, "amd64", "hello", "pingd"), opts); err != nil {
		t.Fatal(err)
	}
	type snap struct {
		mtime time.Time
		sum   string
	}
	snapshot := func(glob string) map[string]snap {
		m := map[string]snap{}
		files, _ := filepath.Glob(filepath.Join(out, glob))
		states, _ := filepath.Glob(filepath.Join(out, StateDir, glob+".json"))
		for _, f := range append(files, states...) {
			fi, err := os.Stat(f)
			if err != nil {
				t.Fatal(err)
			}
			m[f] = snap{fi.ModTime(), sha256File(t, f)}
		}
		if len(m) < 3 {
			t.Fatalf("%s: only %d files", glob, len(m))
		}
		return m
	}
	pingd, hello := snapshot("pingd_*"), snapshot("hello_*")
	recipePath := filepath.Join(root, "recipes", "hello.yaml")
	y, err := os.ReadFile(recipePath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(recipePath, bytes.Replace(y, []byte(`revision: "1"`), []byte(`revision: "2"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), jobs(t, root, "amd64", "hello", "pingd"), opts)
	if err != nil || res[0].Skipped || !res[1].Skipped {
		t.Fatalf("after changing hello: %v %+v", err, res)
	}
	if got := snapshot("pingd_*"); fmt.Sprint(got) != fmt.Sprint(pingd) {
		t.Errorf("pingd's files changed:\nbefore %v\nafter  %v", pingd, got)
	}
	if _, err := os.Stat(filepath.Join(out, "hello_1.2.0-2_amd64.deb")); err != nil {
		t.Errorf("hello not rebuilt with revision 2: %v", err)
	}
	if st := hello[filepath.Join(out, StateDir, "hello_amd64.json")]; st.sum == sha256File(t, filepath.Join(out, StateDir, "hello_amd64.json")) {
		t.Error("hello's state record did not change")
	}

	// touch: the stat differs, the re-hash matches, the build is skipped and
	// the state record takes the new stat.
	deb := filepath.Join(out, "hello_1.2.0-2_amd64.deb")
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(deb, later, later); err != nil {
		t.Fatal(err)
	}
	res, err = Run(context.Background(), jobs(t, root, "amd64", "hello"), opts)
	if err != nil || !res[0].Skipped {
		t.Fatalf("touched output: %v %+v", err, res)
	}
	var st state
	data, _ := os.ReadFile(filepath.Join(out, StateDir, "hello_amd64.json"))
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	if got := st.Stats[filepath.Base(deb)].MTime; got != later.UnixNano() {
		t.Errorf("state records mtime %d, want the new %d", got, later.UnixNano())
	}
}

// tarballRecipe adds release NAME/NAME.tar.gz (data) to the mirror and recipe
// NAME to the project: the release as source NAME (pinned, unsigned) and the
// packages given (YAML items of the "packages:" list).
func tarballRecipe(t testing.TB, root, mirror, name string, data []byte, packages string) {
	t.Helper()
	sum := sha256.Sum256(data)
	dir := filepath.Join(mirror, name)
	os.MkdirAll(dir, 0o755)
	if err := os.WriteFile(filepath.Join(dir, name+".tar.gz"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	rec := fmt.Sprintf(`name: %[1]s
version: 1.0.0
release-date: 2026-01-01
homepage: https://releases.example.org/%[1]s
license: Apache-2.0
copyright: nobody
architectures: [amd64]
sources:
  - name: %[1]s
    url: https://releases.example.org/%[1]s/%[1]s.tar.gz
    sha256: {amd64: %[2]s}
    signature: {none: "test fixture"}
packages:
%[3]s`, name, hex.EncodeToString(sum[:]), packages)
	if err := os.WriteFile(filepath.Join(root, "recipes", name+".yaml"), []byte(rec), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestShippedControlIsPlanned: the control file of every package a build
// writes is the plan's (recipe.ResolvedPackage.Control), byte for byte, so the
// control fields `updeb verify --base` diffs from plans are those that ship
// (but for the libc6 a dynamic binary needs, learnt from its bytes:
// TestSharedLibraryDepends).
func TestShippedControlIsPlanned(t *testing.T) {
	root, mirror := project(t)
	out := filepath.Join(t.TempDir(), "out")
	opts := options(t, mirror, out)
	js := jobs(t, root, "amd64", "hello", "pingd")
	if _, err := Run(context.Background(), js, opts); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, j := range js {
		plan, err := j.Recipe.Resolve(j.Arch, opts.ResolveOptions)
		if err != nil {
			t.Fatal(err)
		}
		for _, pp := range plan.Packages {
			info, err := deb.InspectFile(context.Background(), filepath.Join(out, pp.OutputFile), archive.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			size, err := strconv.ParseInt(info.Control.Value("Installed-Size"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			planned := pp.Control(size)
			if got, want := string(info.Control.Bytes()), string(planned.Bytes()); got != want {
				t.Errorf("%s ships\n%s\nthe plan says\n%s", pp.OutputFile, got, want)
			}
			n++
		}
	}
	if n < 2 {
		t.Fatalf("compared %d packages", n)
	}
}

// A Sigstore refusal stops the build before anything is written: here
// pingd's amd64 binary with the arm64 binary's bundle; and a build without a
// Sigstore verifier refuses a Sigstore-signed source rather than skip it.
func TestSigstoreRefusedBuildsNothing(t *testing.T) {
	root, mirror := project(t)
	dir := filepath.Join(mirror, "pingd", "v0.9.1")
	arm, err := os.ReadFile(filepath.Join(dir, "pingd.arm64.sigstore.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pingd.amd64.sigstore.json"), arm, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	_, err = Run(context.Background(), jobs(t, root, "amd64", "pingd"), options(t, mirror, out))
	if !errors.Is(err, sigstore.ErrRefused) || !strings.Contains(err.Error(), "https://releases.example.org/pingd/v0.9.1/pingd.amd64.sigstore.json") ||
		!strings.Contains(err.Error(), "belongs to another artifact") {
		t.Fatalf("err = %v", err)
	}
	if d := debs(t, out); len(d) != 0 {
		t.Fatalf("refused build left %v", d)
	}
	root, mirror = project(t)
	opts := options(t, mirror, out)
	opts.Source.Sigstore = nil
	if _, err := Run(context.Background(), jobs(t, root, "amd64", "pingd"), opts); !errors.Is(err, trust.ErrNoSigstore) {
		t.Fatalf("without a verifier: %v", err)
	}
}

// The output folder a build makes is 0755 whatever the umask, as its
// packages and records are 0644: a web server or publish run as another
// user reads them there. Under umask 077 it was 0700, and the world-readable
// packages in it could be read by nobody else.
func TestOutputReadableWhateverTheUmask(t *testing.T) {
	root, mirror := project(t)
	out := filepath.Join(t.TempDir(), "www", "debs")
	opts := options(t, mirror, out)
	old := syscall.Umask(0o077)
	_, err := Run(context.Background(), jobs(t, root, "amd64", "hello"), opts)
	syscall.Umask(old)
	if err != nil {
		t.Fatal(err)
	}
	if len(debs(t, out)) != 1 {
		t.Fatalf("built %q", debs(t, out))
	}
	testenv.WorldReadable(t, filepath.Dir(out), StateDir, "lock")
}
