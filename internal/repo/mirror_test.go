package repo

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/testkit/pgptest"
	"github.com/updeb/updeb/internal/testkit/squid"
	"github.com/updeb/updeb/internal/testkit/testenv"
)

// mirrorRepo is a repository served on 127.0.0.1 for the mirroring tools
// (aptly, reprepro): suite s with components main and component/k8s (a
// slash in its name, as in the configuration example's
// component/kubernetes136), amd64 and all packages and one arm64 package
// the tools' architecture filter leaves out. The server can serve other
// bytes in place of some files (a repository tampered with after signing)
// without touching the repository.
type mirrorRepo struct {
	t    *testing.T
	dir  string
	root string
	r    *Repo
	url  string

	mu       sync.Mutex
	tampered map[string][]byte // URL path -> the bytes served instead
}

// mirrorFirst and mirrorSecond are what the first and the second publish
// put in suite s (component: name_version_arch).
var (
	mirrorFirst = map[string][]string{
		"main":          {"hello_1.0-1_amd64", "hello-doc_1.0-1_all", "tool_1.0-1_arm64"},
		"component/k8s": {"kubectl_1.30.1-1_amd64"},
	}
	mirrorSecond = map[string][]string{
		"main":          {"hello_2.0-1_amd64"},
		"component/k8s": {"kubectl_1.30.2-1_amd64"},
	}
)

func newMirrorRepo(t *testing.T) *mirrorRepo {
	t.Helper()
	testenv.RequireTool(t, "dpkg-deb")
	dir := t.TempDir()
	m := &mirrorRepo{t: t, dir: dir, root: filepath.Join(dir, "repo"), tampered: map[string][]byte{}}
	m.r = testRepo(t, m.root)
	srv := httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(srv.Close)
	m.url = srv.URL
	m.publish(mirrorFirst)
	return m
}

func (m *mirrorRepo) serve(w http.ResponseWriter, req *http.Request) {
	m.mu.Lock()
	data, ok := m.tampered[req.URL.Path]
	m.mu.Unlock()
	if ok {
		http.ServeContent(w, req, path.Base(req.URL.Path), time.Time{}, bytes.NewReader(data))
		return
	}
	http.FileServer(http.Dir(m.root)).ServeHTTP(w, req)
}

// publish publishes the packages (component: name_version_arch) as one
// generation of suite s.
func (m *mirrorRepo) publish(pkgs map[string][]string) {
	m.t.Helper()
	byComp := map[string][]Package{}
	for comp, names := range pkgs {
		for _, n := range names {
			f := strings.Split(n, "_")
			byComp[comp] = append(byComp[comp], pkgOf(m.t, testDeb(m.t, m.dir, f[0], f[1], f[2], n)))
		}
	}
	_, err := m.r.PublishComponents(context.Background(), "s", byComp)
	must(m.t, err)
}

// tamper serves data in place of the repository's file rel (a path
// relative to its root).
func (m *mirrorRepo) tamper(rel string, data []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tampered["/"+rel] = data
}

// untamper serves the repository as it is again.
func (m *mirrorRepo) untamper() {
	m.mu.Lock()
	defer m.mu.Unlock()
	clear(m.tampered)
}

func (m *mirrorRepo) read(rel string) []byte {
	m.t.Helper()
	data, err := os.ReadFile(filepath.Join(m.root, filepath.FromSlash(rel)))
	must(m.t, err)
	return data
}

// tamperPool serves the pool file rel with one byte changed.
func (m *mirrorRepo) tamperPool(rel string) {
	data := m.read(rel)
	data[len(data)/2] ^= 0xff
	m.tamper(rel, data)
}

// tamperPackages serves the Packages index of comp and arch, in every
// form and by hash, with old replaced by new in its text: what someone
// who can write to the server but not sign does.
func (m *mirrorRepo) tamperPackages(comp, arch, old, new string) {
	m.t.Helper()
	dir := "dists/s/" + comp + "/binary-" + arch
	text := m.read(dir + "/Packages")
	if !bytes.Contains(text, []byte(old)) {
		m.t.Fatalf("%s/Packages has no %q:\n%s", dir, old, text)
	}
	forms, err := compressed(dir, bytes.ReplaceAll(text, []byte(old), []byte(new)), nil)
	must(m.t, err)
	for _, f := range forms {
		orig := newIndexFile(f.path, m.read(f.path))
		m.tamper(f.path, f.data)
		for _, h := range hashAlgorithms {
			m.tamper(dir+"/by-hash/"+h.field+"/"+orig.sums[h.field], f.data)
		}
	}
}

// tamperRelease serves InRelease and Release with their Label changed
// after signing (Release.gpg and InRelease's signature as they are).
func (m *mirrorRepo) tamperRelease() {
	m.t.Helper()
	for _, name := range []string{"InRelease", "Release"} {
		rel := "dists/s/" + name
		data := m.read(rel)
		changed := bytes.Replace(data, []byte("\nLabel: updeb test\n"), []byte("\nLabel: updeb test!\n"), 1)
		if bytes.Equal(changed, data) {
			m.t.Fatalf("%s has no Label: updeb test:\n%s", rel, data)
		}
		m.tamper(rel, changed)
	}
}

// mirrorTamperings are the ways a repository tampered with after signing
// is served to a mirroring tool, each with what the tool must say when it
// refuses it (aptly's message, reprepro's: every string given).
var mirrorTamperings = []struct {
	name            string
	do              func(m *mirrorRepo)
	aptly, reprepro []string
}{
	{"pool file replaced", func(m *mirrorRepo) { m.tamperPool("pool/main/h/hello/hello_2.0-1_amd64.deb") },
		[]string{"hello_2.0-1_amd64.deb: ", "hash mismatch"},
		[]string{"Wrong checksum during receive of", "/pool/main/h/hello/hello_2.0-1_amd64.deb'"}},
	{"Packages entry changed", func(m *mirrorRepo) {
		m.tamperPackages("component/k8s", "amd64", "Version: 1.30.1-1", "Version: 1.30.9-1")
	},
		[]string{"/dists/s/component/k8s/binary-amd64/Packages", "mismatch"},
		[]string{"Wrong checksum during receive of", "/dists/s/component/k8s/binary-amd64/Packages"}},
	{"Release changed", func(m *mirrorRepo) { m.tamperRelease() },
		[]string{"BAD signature", "verification of detached signature failed"},
		[]string{"bad signature", "Not enough signatures found"}},
}

// saysAll reports whether out contains every one of want.
func saysAll(out string, want []string) bool {
	for _, w := range want {
		if !strings.Contains(out, w) {
			return false
		}
	}
	return true
}

// toolEnv is the environment the mirroring tools run in: home and gpg home
// in the test's folders, the C locale, no proxy (the repository is on
// 127.0.0.1).
func toolEnv(home, gnupgHome string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch strings.ToLower(name) {
		case "home", "gnupghome", "lc_all", "http_proxy", "https_proxy", "all_proxy", "no_proxy":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home, "GNUPGHOME="+gnupgHome, "LC_ALL=C", "no_proxy=*")
}

// runTool runs a referee tool (apt, aptly, reprepro) in env, for a minute
// at most, and returns its combined output and error.
func runTool(env []string, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// aptlyClient is aptly with its root, configuration, home and gpg home in
// a temporary folder, trusting only the repository's key.
type aptlyClient struct {
	t       *testing.T
	dir     string
	config  string
	keyring string
	env     []string
}

func newAptly(t *testing.T, m *mirrorRepo) *aptlyClient {
	t.Helper()
	testenv.RequireTool(t, "aptly", "gpgv")
	dir := t.TempDir()
	a := &aptlyClient{t: t, dir: dir, config: filepath.Join(dir, "aptly.conf"), keyring: filepath.Join(dir, "keyring.gpg")}
	must(t, os.WriteFile(a.keyring, m.read("archive-keyring.gpg"), 0o644))
	gnupg := filepath.Join(dir, "gnupg")
	must(t, os.Mkdir(gnupg, 0o700))
	conf := fmt.Sprintf(`{"rootDir": %q, "gpgProvider": "gpg", "downloadConcurrency": 2, "architectures": []}`, filepath.Join(dir, "root"))
	must(t, os.WriteFile(a.config, []byte(conf), 0o644))
	a.env = toolEnv(dir, gnupg)
	return a
}

func (a *aptlyClient) run(args ...string) (string, error) {
	return runTool(a.env, "aptly", append([]string{"-config=" + a.config}, args...)...)
}

func (a *aptlyClient) must(args ...string) string {
	a.t.Helper()
	out, err := a.run(args...)
	if err != nil {
		a.t.Fatalf("aptly %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// packages returns the packages aptly lists in mirror name
// (name_version_arch), sorted.
func (a *aptlyClient) packages(name string) []string {
	a.t.Helper()
	out := a.must("mirror", "show", "-with-packages", name)
	_, list, ok := strings.Cut(out, "\nPackages:\n")
	if !ok {
		a.t.Fatalf("aptly mirror show lists no packages:\n%s", out)
	}
	var pkgs []string
	for _, l := range strings.Split(list, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			pkgs = append(pkgs, l)
		}
	}
	slices.Sort(pkgs)
	return pkgs
}

// joined is the sorted union of the package lists' names.
func joined(lists ...map[string][]string) []string {
	var all []string
	for _, l := range lists {
		for _, names := range l {
			all = append(all, names...)
		}
	}
	slices.Sort(all)
	return all
}

// without is names without those of architecture arch.
func without(names []string, arch string) []string {
	return slices.DeleteFunc(slices.Clone(names), func(n string) bool { return strings.HasSuffix(n, "_"+arch) })
}

// TestAptlyMirror: aptly mirrors the repository served on 127.0.0.1, two
// components, with and without an architecture filter: mirror create and
// update check InRelease's signature with the repository's key, and every
// index and package against the checksums signed; a snapshot of the
// mirror publishes. After a second publish, an update adds the new
// versions; after its rollback, an update drops them. A repository
// tampered with after signing (a pool file, a Packages entry, the Release)
// is refused.
func TestAptlyMirror(t *testing.T) {
	m := newMirrorRepo(t)
	a := newAptly(t, m)
	keyring := "-keyring=" + a.keyring
	a.must("mirror", "create", keyring, "-architectures=amd64,all", "filtered", m.url+"/", "s", "main", "component/k8s")
	a.must("mirror", "create", keyring, "every", m.url+"/", "s", "main", "component/k8s")
	for _, name := range []string{"filtered", "every"} {
		if out := a.must("mirror", "update", keyring, name); !strings.Contains(out, "Good signature from \"updeb test <test@example.com>\"") {
			t.Errorf("aptly mirror update %s checked no signature:\n%s", name, out)
		}
	}
	first := joined(mirrorFirst)
	if got, want := a.packages("filtered"), without(first, "arm64"); !slices.Equal(got, want) {
		t.Errorf("aptly's mirror with -architectures=amd64,all: %q, want %q", got, want)
	}
	if got := a.packages("every"); !slices.Equal(got, first) {
		t.Errorf("aptly's mirror of every architecture: %q, want %q", got, first)
	}

	// A snapshot of the mirror publishes (aptly reads each .deb for its
	// Contents) into a repository of its own.
	a.must("snapshot", "create", "snap", "from", "mirror", "filtered")
	a.must("publish", "snapshot", "-skip-signing", "-distribution=copy", "snap")
	contents := filepath.Join(a.dir, "root/public/dists/copy/main/Contents-amd64.gz")
	if got := string(testenv.Run(t, "sh", "-c", `gzip -dc "$1"`, "sh", contents)); !strings.Contains(got, "usr/share/hello/payload") {
		t.Errorf("aptly's published Contents-amd64:\n%s", got)
	}

	// A second publish: the update adds the new versions to the old.
	m.publish(mirrorSecond)
	a.must("mirror", "update", keyring, "filtered")
	if got, want := a.packages("filtered"), without(joined(mirrorFirst, mirrorSecond), "arm64"); !slices.Equal(got, want) {
		t.Errorf("aptly's mirror after the second publish: %q, want %q", got, want)
	}

	for _, tc := range mirrorTamperings {
		tc.do(m)
		t.Run(tc.name, func(t *testing.T) {
			b := newAptly(t, m)
			out, err := b.run("mirror", "create", "-keyring="+b.keyring, "m", m.url+"/", "s", "main", "component/k8s")
			if err == nil {
				out, err = b.run("mirror", "update", "-keyring="+b.keyring, "m")
			}
			if err == nil || !saysAll(out, tc.aptly) {
				t.Errorf("aptly on a repository with a %s: %v, want a failure saying %q\n%s", tc.name, err, tc.aptly, out)
			}
		})
		m.untamper()
	}

	// A rollback of the second publish: the update drops its versions.
	m.rollback()
	a.must("mirror", "update", keyring, "filtered")
	if got, want := a.packages("filtered"), without(first, "arm64"); !slices.Equal(got, want) {
		t.Errorf("aptly's mirror after a rollback of the second publish: %q, want %q", got, want)
	}
}

// TestAptlyMirrorAsDocumented runs operations.md's aptly commands
// (-architectures=amd64) against a suite with Architecture: all packages
// and one without (as the configuration example's
// component/kubernetes136): a Release lists "all" once its suite has such
// a package, and aptly refuses an architecture the Release does not list
// ("architecture all not available in repo"), which operations.md's
// -architectures=amd64,all met on the second. The all packages come with
// amd64's index (No-Support-for-Architecture-all: Packages).
func TestAptlyMirrorAsDocumented(t *testing.T) {
	const architectures = "-architectures=amd64" // operations.md's
	m := newMirrorRepo(t)
	_, err := m.r.Promote(context.Background(), Place{Suite: "s", Component: "component/k8s"}, Place{Suite: "k8s"}, nil)
	must(t, err)
	a := newAptly(t, m)
	keyring := "-keyring=" + a.keyring
	for _, tc := range []struct {
		suite string
		comps []string
		want  []string
	}{
		{"s", []string{"main", "component/k8s"}, without(joined(mirrorFirst), "arm64")},
		{"k8s", []string{"component/k8s"}, mirrorFirst["component/k8s"]},
	} {
		a.must(append([]string{"mirror", "create", keyring, architectures, tc.suite, m.url + "/", tc.suite}, tc.comps...)...)
		a.must("mirror", "update", keyring, tc.suite)
		if got := a.packages(tc.suite); !slices.Equal(got, tc.want) {
			t.Errorf("aptly's mirror of suite %s with %s: %q, want %q", tc.suite, architectures, got, tc.want)
		}
	}
}

// rollback rolls suite s back to the generation before the live one.
func (m *mirrorRepo) rollback() {
	m.t.Helper()
	_, err := m.r.Rollback(context.Background(), "s", 0)
	must(m.t, err)
}

// repreproClient is reprepro with its base folder, home and gpg home (the
// repository's key imported) in temporary folders, set to update
// distribution "mirror" from suite s of the repository as operations.md
// says: "Update: - updeb", so that it follows a rollback.
type repreproClient struct {
	t    *testing.T
	base string
	env  []string
}

// gpgHome returns a gpg home with the public keys given (armored)
// imported, for reprepro's VerifyRelease.
func gpgHome(t *testing.T, keys ...[]byte) *pgptest.Signer {
	t.Helper()
	gpg := pgptest.NewSigner(t)
	for i, key := range keys {
		keyFile := filepath.Join(t.TempDir(), fmt.Sprintf("key%d.asc", i))
		must(t, os.WriteFile(keyFile, key, 0o644))
		gpg.GPG("--import", keyFile)
	}
	return gpg
}

func newReprepro(t *testing.T, m *mirrorRepo, gpg *pgptest.Signer) *repreproClient {
	t.Helper()
	testenv.RequireTool(t, "reprepro")
	dir := t.TempDir()
	c := &repreproClient{t: t, base: filepath.Join(dir, "base"), env: toolEnv(dir, gpg.Home())}
	must(t, os.MkdirAll(filepath.Join(c.base, "conf"), 0o755))
	must(t, os.WriteFile(filepath.Join(c.base, "conf/distributions"), []byte(`Codename: mirror
Architectures: amd64
Components: main component/k8s
Update: - updeb
Contents: percomponent
`), 0o644))
	// reprepro names a key by its 16-digit ID, not by its fingerprint.
	must(t, os.WriteFile(filepath.Join(c.base, "conf/updates"), fmt.Appendf(nil, `Name: updeb
Method: %s/
Suite: s
Components: main component/k8s
Architectures: amd64
VerifyRelease: %s
`, m.url, testKey.Fingerprint[len(testKey.Fingerprint)-16:]), 0o644))
	return c
}

func (c *repreproClient) run(args ...string) (string, error) {
	return runTool(c.env, "reprepro", append([]string{"-b", c.base}, args...)...)
}

// list returns what reprepro lists in its distribution (component:
// name_version_arch), sorted.
func (c *repreproClient) list() []string {
	c.t.Helper()
	out, err := c.run("list", "mirror")
	if err != nil {
		c.t.Fatalf("reprepro list: %v\n%s", err, out)
	}
	var pkgs []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		// mirror|main|amd64: hello 1.0-1
		where, what, _ := strings.Cut(l, ": ")
		f := strings.Split(where, "|")
		name, version, _ := strings.Cut(what, " ")
		if len(f) != 3 {
			c.t.Fatalf("reprepro list: line %q", l)
		}
		pkgs = append(pkgs, f[1]+": "+name+"_"+version+"_"+f[2])
	}
	slices.Sort(pkgs)
	return pkgs
}

func (c *repreproClient) update() {
	c.t.Helper()
	if out, err := c.run("update"); err != nil {
		c.t.Fatalf("reprepro update: %v\n%s", err, out)
	}
}

// TestRepreproUpdate: reprepro updates a distribution of its own from two
// components of the repository served on 127.0.0.1, checking the
// InRelease signature against the repository's key and every index and
// package against the checksums signed, and writes Contents from the
// packages; after a second publish, an update takes the new versions, and
// after its rollback the earlier ones again. A repository tampered with
// after signing (a pool file, a Packages entry, the Release) is refused.
func TestRepreproUpdate(t *testing.T) {
	testenv.RequireTool(t, "reprepro")
	m := newMirrorRepo(t)
	gpg := gpgHome(t, testKey.PublicArmored)
	c := newReprepro(t, m, gpg)
	c.update()
	// hello-doc (all) is in binary-amd64's Packages too; tool (arm64) is not.
	want := []string{"component/k8s: kubectl_1.30.1-1_amd64", "main: hello-doc_1.0-1_amd64", "main: hello_1.0-1_amd64"}
	if got := c.list(); !slices.Equal(got, want) {
		t.Errorf("reprepro list: %q, want %q", got, want)
	}
	contents := filepath.Join(c.base, "dists/mirror/main/Contents-amd64.gz")
	if got := string(testenv.Run(t, "sh", "-c", `gzip -dc "$1"`, "sh", contents)); !strings.Contains(got, "usr/share/hello/payload") || !strings.Contains(got, "usr/share/hello-doc/payload") {
		t.Errorf("reprepro's Contents-amd64 of main:\n%s", got)
	}

	m.publish(mirrorSecond)
	c.update()
	want = []string{"component/k8s: kubectl_1.30.2-1_amd64", "main: hello-doc_1.0-1_amd64", "main: hello_2.0-1_amd64"}
	if got := c.list(); !slices.Equal(got, want) {
		t.Errorf("reprepro list after the second publish: %q, want %q", got, want)
	}

	for _, tc := range mirrorTamperings {
		tc.do(m)
		t.Run(tc.name, func(t *testing.T) {
			out, err := newReprepro(t, m, gpg).run("update")
			if err == nil || !saysAll(out, tc.reprepro) {
				t.Errorf("reprepro on a repository with a %s: %v, want a failure saying %q\n%s", tc.name, err, tc.reprepro, out)
			}
		})
		m.untamper()
	}

	// A rollback of the second publish: with operations.md's "Update: -
	// updeb" the update follows it down to the first versions (without the
	// delete rule reprepro keeps the withdrawn, higher ones).
	m.rollback()
	c.update()
	want = []string{"component/k8s: kubectl_1.30.1-1_amd64", "main: hello-doc_1.0-1_amd64", "main: hello_1.0-1_amd64"}
	if got := c.list(); !slices.Equal(got, want) {
		t.Errorf("reprepro list after a rollback of the second publish: %q, want %q", got, want)
	}
}

// verifyRelease names the keys reprepro checks the repository's signature
// with (conf/updates' VerifyRelease: 16-digit key IDs, | between them).
func (c *repreproClient) verifyRelease(ids string) {
	c.t.Helper()
	name := filepath.Join(c.base, "conf/updates")
	data, err := os.ReadFile(name)
	must(c.t, err)
	i := bytes.Index(data, []byte("VerifyRelease: "))
	must(c.t, os.WriteFile(name, append(data[:i:i], "VerifyRelease: "+ids+"\n"...), 0o644))
}

// TestMirrorsThroughKeyRotation runs operations.md's key rotation against
// mirrors. reprepro naming the old key's ID updates while the suite is
// signed by both keys and stops once the old one is dropped; naming both
// (VerifyRelease: OLD|NEW) it updates throughout. aptly checks every
// signature: with only the old key in its -keyring it fails from the first
// step on, with both keys given before that step it updates throughout.
func TestMirrorsThroughKeyRotation(t *testing.T) {
	testenv.RequireTool(t, "reprepro")
	m := newMirrorRepo(t)
	gen, newKey, both := rotationKeys(t, testSigner(t))
	gpg := gpgHome(t, testKey.PublicArmored, gen.PublicArmored)
	oldRepr, newRepr := newReprepro(t, m, gpg), newReprepro(t, m, gpg)
	newRepr.verifyRelease(testKey.Fingerprint[len(testKey.Fingerprint)-16:] + "|" + gen.Fingerprint[len(gen.Fingerprint)-16:])
	a := newAptly(t, m)
	oldKeyring := "-keyring=" + a.keyring
	bothKeyring := "-keyring=" + filepath.Join(a.dir, "both.gpg")
	must(t, os.WriteFile(bothKeyring[len("-keyring="):], append(m.read("archive-keyring.gpg"), gen.PublicBinary...), 0o644))
	a.must("mirror", "create", bothKeyring, "m", m.url+"/", "s", "main")
	refused := func(what string, out string, err error, says string) {
		t.Helper()
		if err == nil || !strings.Contains(out, says) {
			t.Errorf("%s: %v, want it to refuse the suite saying %q\n%s", what, err, says, out)
		}
	}

	// Signed by both keys.
	m.r.opts.Signer = both
	m.publish(mirrorSecond)
	oldRepr.update()
	newRepr.update()
	a.must("mirror", "update", bothKeyring, "m")
	out, err := a.run("mirror", "update", oldKeyring, "m")
	refused("aptly with only the old key, the suite signed by both", out, err, "Can't check signature: No public key")

	// The old key dropped.
	m.r.opts.Signer = newKey
	m.r.opts.Settings.AllowFieldChange = true
	m.rollback()
	newRepr.update()
	want := []string{"component/k8s: kubectl_1.30.1-1_amd64", "main: hello-doc_1.0-1_amd64", "main: hello_1.0-1_amd64"}
	if got := newRepr.list(); !slices.Equal(got, want) {
		t.Errorf("reprepro naming both keys, after the old one was dropped: %q, want %q", got, want)
	}
	out, err = oldRepr.run("update")
	refused("reprepro naming only the dropped key", out, err, "Not enough signatures found")
	a.must("mirror", "update", bothKeyring, "m")
}

// TestRepreproBehindACachingProxy: reprepro fetches InRelease and the
// indexes by name and, unlike apt (Cache-Control: max-age=0), never asks a
// proxy to revalidate them. Behind squid as it comes, an InRelease dated
// long ago (the test clock's 2024) stays fresh in its cache for three days
// and the mirror misses a publish, saying nothing; with operations.md's
// refresh_pattern for dists/ it takes the publish.
func TestRepreproBehindACachingProxy(t *testing.T) {
	testenv.RequireTool(t, "reprepro", "squid")
	first := []string{"component/k8s: kubectl_1.30.1-1_amd64", "main: hello-doc_1.0-1_amd64", "main: hello_1.0-1_amd64"}
	second := []string{"component/k8s: kubectl_1.30.2-1_amd64", "main: hello-doc_1.0-1_amd64", "main: hello_2.0-1_amd64"}
	for _, tc := range []struct {
		name    string
		refresh []string
		want    []string
	}{
		{"squid's default", nil, first},
		{"dists revalidated", []string{"/dists/ 0 0% 0 refresh-ims"}, second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMirrorRepo(t)
			c := newReprepro(t, m, gpgHome(t, testKey.PublicArmored))
			proxy := squid.CachingForTest(t, tc.refresh...)
			c.env = append(slices.DeleteFunc(c.env, func(kv string) bool { return strings.HasPrefix(kv, "no_proxy=") }), "http_proxy="+proxy.URL)
			c.update()
			if got := c.list(); !slices.Equal(got, first) {
				t.Fatalf("reprepro list through squid: %q, want %q", got, first)
			}
			m.publish(mirrorSecond)
			c.update()
			log := proxy.Log()
			if got := c.list(); !slices.Equal(got, tc.want) || !strings.Contains(log, m.url+"/dists/s/InRelease") {
				t.Errorf("reprepro list through squid after the second publish: %q, want %q\n%s", got, tc.want, log)
			}
		})
	}
}
