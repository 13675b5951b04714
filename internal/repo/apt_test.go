package repo

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/testkit/testenv"
	"github.com/updeb/updeb/pkg/control"
)

// testDeb builds a .deb with dpkg-deb that installs /usr/share/<name>/payload
// containing payload, and returns its path.
func testDeb(t *testing.T, dir, name, version, arch, payload string) string {
	t.Helper()
	return testDebWith(t, dir, name, version, arch, payload, "")
}

// testDebWith is testDeb with the control fields extra ("Source: x\n")
// after Package.
func testDebWith(t *testing.T, dir, name, version, arch, payload, extra string) string {
	t.Helper()
	tree := filepath.Join(dir, "tree-"+name+"-"+version+"-"+arch+"-"+fmt.Sprint(time.Now().UnixNano()))
	must(t, os.MkdirAll(filepath.Join(tree, "DEBIAN"), 0o755))
	must(t, os.MkdirAll(filepath.Join(tree, "usr/share", name), 0o755))
	must(t, os.WriteFile(filepath.Join(tree, "usr/share", name, "payload"), []byte(payload), 0o644))
	ctl := fmt.Sprintf("Package: %s\n%sVersion: %s\nArchitecture: %s\nMaintainer: Test <test@example.com>\nInstalled-Size: 1\nSection: admin\nPriority: optional\nHomepage: https://example.com/%s\nDescription: test package %s\n A package for the repository tests.\n .\n Second paragraph.\n", name, extra, version, arch, name, name)
	must(t, os.WriteFile(filepath.Join(tree, "DEBIAN/control"), []byte(ctl), 0o644))
	out := filepath.Join(dir, fmt.Sprintf("%s_%s_%s.deb", name, version, arch))
	testenv.Run(t, "dpkg-deb", "--root-owner-group", "-Zgzip", "--build", tree, out)
	return out
}

// debControl reads a .deb's control paragraph with dpkg-deb, as the CLI reads
// it with the deb package.
func debControl(t *testing.T, deb string) control.Paragraph {
	t.Helper()
	p, err := control.ParseOne(bytes.NewReader(testenv.Run(t, "dpkg-deb", "-f", deb)), deb)
	must(t, err)
	return p
}

func pkgOf(t *testing.T, deb string) Package {
	return Package{Path: deb, Control: debControl(t, deb)}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

var (
	testKey     *GeneratedKey
	testKeyOnce sync.Once
)

func testSigner(t testing.TB) *Signer {
	t.Helper()
	testKeyOnce.Do(func() {
		k, err := GenerateKey("updeb test", "test@example.com", Ed25519, time.Unix(1700000000, 0), rand.Reader)
		must(t, err)
		testKey = k
	})
	s, err := ReadSigner(bytes.NewReader(testKey.SecretArmored), "test key")
	must(t, err)
	return s
}

// testClock returns a clock that starts at a fixed time and moves one minute
// per call, so every generation has a later Date than the last.
func testClock() func() time.Time {
	now, _ := jumpingClock()
	return now
}

// jumpingClock is testClock with jump, which moves it on by d (a test's way
// past byHashGrace).
func jumpingClock() (now func() time.Time, jump func(d time.Duration)) {
	t := time.Date(2024, 8, 14, 12, 0, 0, 0, time.UTC)
	return func() time.Time { t = t.Add(time.Minute); return t }, func(d time.Duration) { t = t.Add(d) }
}

func ptr[T any](v T) *T { return &v }

// testSettings are the settings every test suite is created with.
func testSettings(archs ...string) SettingsChange {
	return SettingsChange{Origin: ptr("updeb-test"), Label: ptr("updeb test"), Architectures: archs}
}

func testRepo(t *testing.T, root string) *Repo {
	return Open(root, Options{
		Settings: testSettings("amd64", "arm64"),
		Signer:   testSigner(t),
		Now:      testClock(),
		Logger:   slog.New(slog.DiscardHandler),
	})
}

// aptClient is apt confined to a temporary folder, pointed at a repository
// served on 127.0.0.1, installing into a throwaway root.
type aptClient struct {
	t      *testing.T
	dir    string
	root   string
	config string
	url    string
}

func newAptClient(t *testing.T, repoRoot, suite, component string) *aptClient {
	t.Helper()
	testenv.RequireTool(t, "apt-get", "dpkg", "gpgv")
	srv := httptest.NewServer(http.FileServer(http.Dir(repoRoot)))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	a := &aptClient{t: t, dir: dir, root: filepath.Join(dir, "root"), url: srv.URL}
	for _, d := range []string{"etc/sources.list.d", "etc/apt.conf.d", "etc/trusted.gpg.d", "etc/preferences.d", "state/lists/partial", "cache/archives/partial", "log",
		"root/var/lib/dpkg/info", "root/var/lib/dpkg/updates", "root/var/lib/dpkg/triggers"} {
		must(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
	}
	must(t, os.WriteFile(filepath.Join(a.root, "var/lib/dpkg/status"), nil, 0o644))
	keyring := filepath.Join(dir, "keyring.gpg")
	data, err := os.ReadFile(filepath.Join(repoRoot, "archive-keyring.gpg"))
	must(t, err)
	must(t, os.WriteFile(keyring, data, 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "etc/sources.list"),
		[]byte(fmt.Sprintf("deb [signed-by=%s] %s/ %s %s\n", keyring, srv.URL, suite, component)), 0o644))
	a.config = filepath.Join(dir, "apt.conf")
	conf := fmt.Sprintf(`Dir "/";
Dir::Etc "%[1]s/etc";
Dir::Etc::SourceList "%[1]s/etc/sources.list";
Dir::Etc::SourceParts "%[1]s/etc/sources.list.d";
Dir::Etc::Trusted "%[1]s/etc/trusted.gpg";
Dir::Etc::TrustedParts "%[1]s/etc/trusted.gpg.d";
Dir::Etc::Preferences "%[1]s/etc/preferences";
Dir::Etc::PreferencesParts "%[1]s/etc/preferences.d";
Dir::State "%[1]s/state";
Dir::State::status "%[2]s/var/lib/dpkg/status";
Dir::Cache "%[1]s/cache";
Dir::Log "%[1]s/log";
APT::Architecture "amd64";
APT::Architectures { "amd64"; };
APT::Sandbox::User "root";
Acquire::Languages "none";
Acquire::http::Proxy "DIRECT";
Acquire::Retries "0";
Debug::NoLocking "1";
DPkg::Options { "--root=%[2]s"; "--admindir=%[2]s/var/lib/dpkg"; "--force-script-chrootless"; "--force-not-root"; "--log=%[1]s/log/dpkg.log"; };
DPkg::Path "/usr/sbin:/usr/bin:/sbin:/bin";
`, dir, a.root)
	must(t, os.WriteFile(a.config, []byte(conf), 0o644))
	return a
}

// serveFrom points the client at another server of the same repository.
func (a *aptClient) serveFrom(url string) {
	a.t.Helper()
	list := filepath.Join(a.dir, "etc/sources.list")
	data, err := os.ReadFile(list)
	must(a.t, err)
	must(a.t, os.WriteFile(list, bytes.ReplaceAll(data, []byte(a.url+"/"), []byte(url+"/")), 0o644))
	a.url = url
}

// run runs an apt command and returns its combined output and error.
func (a *aptClient) run(name string, args ...string) (string, error) {
	return runTool(append(os.Environ(), "APT_CONFIG="+a.config, "DEBIAN_FRONTEND=noninteractive", "LC_ALL=C"), name, args...)
}

func (a *aptClient) update() {
	a.t.Helper()
	if out, err := a.run("apt-get", "update", "-q"); err != nil || strings.Contains(out, "W: ") || strings.Contains(out, "E: ") {
		a.t.Fatalf("apt-get update: %v\n%s", err, out)
	}
}

// install installs name=version into the throwaway root and checks the
// installed payload.
func (a *aptClient) install(name, version, payload string) {
	a.t.Helper()
	out, err := a.run("apt-get", "install", "-y", "-q", "--allow-downgrades", "--no-install-recommends", name+"="+version)
	if err != nil {
		a.t.Fatalf("apt-get install %s=%s: %v\n%s", name, version, err, out)
	}
	got, err := os.ReadFile(filepath.Join(a.root, "usr/share", name, "payload"))
	if err != nil || string(got) != payload {
		a.t.Fatalf("after installing %s=%s the payload is %q (%v), want %q\n%s", name, version, got, err, payload, out)
	}
	a.wantInstalled(name, version)
}

// wantInstalled checks that dpkg has name at version.
func (a *aptClient) wantInstalled(name, version string) {
	a.t.Helper()
	status, err := exec.Command("dpkg-query", "--admindir="+filepath.Join(a.root, "var/lib/dpkg"), "-W", "-f=${Version}", name).Output()
	if err != nil || string(status) != version {
		a.t.Fatalf("dpkg-query says %s is at version %q (%v), want %s", name, status, err, version)
	}
}

// withAptFile makes the client's apt fetch Contents indices as apt-file
// configures it (its IndexTargets) and returns the client.
func (a *aptClient) withAptFile() *aptClient {
	a.t.Helper()
	testenv.RequireTool(a.t, "apt-file")
	data, err := os.ReadFile("/etc/apt/apt.conf.d/50apt-file.conf")
	if err != nil {
		a.t.Fatalf("apt-file's configuration: %v", err)
	}
	must(a.t, os.WriteFile(filepath.Join(a.dir, "etc/apt.conf.d/50apt-file.conf"), data, 0o644))
	return a
}

// search runs apt-file search and returns the "package: path" lines.
func (a *aptClient) search(pattern string) []string {
	a.t.Helper()
	out, err := a.run("apt-file", "search", "--", pattern)
	if err != nil && strings.TrimSpace(out) != "" {
		a.t.Fatalf("apt-file search %q: %v\n%s", pattern, err, out)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}
