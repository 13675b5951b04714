package recipe

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/testkit/testenv"
	"github.com/updeb/updeb/pkg/digest"
)

// Regenerate the golden plans with: go test ./internal/recipe -run TestPlanGolden -update
var update = flag.Bool("update", false, "rewrite testdata/*.golden.json from the current output")

var fixtureOpts = ResolveOptions{LocalSuffix: "~wmf1", DefaultMaintainer: "Default Maintainer <default@example.org>"}

func loadFixture(t *testing.T) *Recipe {
	t.Helper()
	r, err := Load("testdata/recipes/hello.yaml", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// goldenView makes a plan readable and machine-independent for the golden
// file: absolute paths relative to testdata, gzip content as its text.
func goldenView(t *testing.T, p *Resolved, root string) []byte {
	t.Helper()
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	for _, pkg := range v.(map[string]any)["Packages"].([]any) {
		for _, g := range pkg.(map[string]any)["GeneratedFiles"].([]any) {
			gf := g.(map[string]any)
			var content []byte
			if err := json.Unmarshal([]byte(`"`+gf["Content"].(string)+`"`), &content); err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(gf["Dest"].(string), ".gz") {
				content = gunzip(t, content)
			}
			gf["Content"] = strings.Split(string(content), "\n")
		}
	}
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(bytes.ReplaceAll(out, []byte(root), []byte("$ROOT")), '\n')
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestPlanGolden(t *testing.T) {
	r := loadFixture(t)
	for _, arch := range []string{"amd64", "arm64"} {
		t.Run(arch, func(t *testing.T) {
			p, err := r.Resolve(arch, fixtureOpts)
			if err != nil {
				t.Fatal(err)
			}
			got := goldenView(t, p, r.Root)
			golden := filepath.Join("testdata", "hello_"+arch+".golden.json")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("plan for %s differs from %s (rerun with -update and review the diff):\n%s", arch, golden, got)
			}
		})
	}
}

func TestMaintainerScriptsParse(t *testing.T) {
	shells := testenv.RequireTool(t, "sh", "dash")
	p, err := loadFixture(t).Resolve("amd64", fixtureOpts)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, pkg := range p.Packages {
		for _, s := range pkg.Scripts {
			file := filepath.Join(t.TempDir(), s.Name)
			if err := os.WriteFile(file, []byte(s.Content), 0o755); err != nil {
				t.Fatal(err)
			}
			for _, sh := range shells {
				if out, err := exec.Command(sh, "-n", file).CombinedOutput(); err != nil {
					t.Errorf("%s -n %s of %s: %v\n%s", sh, s.Name, pkg.Name, err, out)
				}
			}
			// An unknown argument must fail, as policy requires.
			if err := exec.Command("dash", file, "bogus-argument").Run(); err == nil {
				t.Errorf("%s of %s accepted an unknown argument", s.Name, pkg.Name)
			}
			n++
		}
	}
	if n != 4 {
		t.Fatalf("fixture produced %d maintainer scripts, want 4 (postinst+postrm, postinst+prerm)", n)
	}
}

func TestChangelogGzip(t *testing.T) {
	gz := testenv.RequireTool(t, "gzip")[0]
	p, err := loadFixture(t).Resolve("arm64", fixtureOpts)
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, g := range p.Packages[0].GeneratedFiles {
		if !strings.HasSuffix(g.Dest, "/changelog.Debian.gz") {
			continue
		}
		found = true
		c := g.Content
		// RFC 1952 header: magic, CM=8, FLG=0 (no FNAME), MTIME=0, XFL=2 (max compression).
		if len(c) < 10 || c[0] != 0x1f || c[1] != 0x8b || c[2] != 8 || c[3] != 0 || c[4]|c[5]|c[6]|c[7] != 0 || c[8] != 2 {
			t.Fatalf("gzip header % x: want no name, mtime 0, XFL 2", c[:10])
		}
		file := filepath.Join(t.TempDir(), "changelog.Debian.gz")
		if err := os.WriteFile(file, c, 0o644); err != nil {
			t.Fatal(err)
		}
		testenv.Run(t, gz, "-t", file)
	}
	if !found {
		t.Fatal("no changelog.Debian.gz generated")
	}
}

// resolveText loads a project of the recipe text and resolves it for arch
// under opts, with a default maintainer; any error fails t.
func resolveText(t *testing.T, text, arch string, opts ResolveOptions) *Resolved {
	t.Helper()
	_, file := writeProject(t, text)
	r, err := Load(file, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	opts.DefaultMaintainer = "A B <a@example.org>"
	p, err := r.Resolve(arch, opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestChangelogWithoutRevision(t *testing.T) {
	p := resolveText(t, strings.Replace(baseRecipe, "version: 1.0.0\n", "version: 1.0.0\nrevision: \"\"\nepoch: 2\n", 1), "amd64", ResolveOptions{})
	pkg := p.Packages[0]
	if p.DebianVersion != "2:1.0.0" || pkg.OutputFile != "xx_1.0.0_amd64.deb" || pkg.GeneratedFiles[1].Dest != "/usr/share/doc/xx/changelog.gz" {
		t.Fatalf("version %q, output %q, changelog %q", p.DebianVersion, pkg.OutputFile, pkg.GeneratedFiles[1].Dest)
	}
}

func TestPlanErrors(t *testing.T) {
	_, file := writeProject(t, baseRecipe)
	r, err := Load(file, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		arch string
		opts ResolveOptions
		want string
	}{
		{"riscv64", ResolveOptions{DefaultMaintainer: "A B <a@example.org>"}, "architecture \"riscv64\" is not one of the recipe's (amd64, arm64)"},
		{"amd64", ResolveOptions{}, "recipes/x.yaml:1:1: maintainer: the recipe names none and no default maintainer is configured"},
		{"amd64", ResolveOptions{DefaultMaintainer: "nobody"}, "recipes/x.yaml:1:1: default maintainer \"nobody\" is not \"Full Name <email@address>\""},
		{"amd64", ResolveOptions{DefaultMaintainer: "A B <a@example.org>", LocalSuffix: "-wmf1"}, "recipes/x.yaml:1:1: local suffix \"-wmf1\": only letters, digits and . + ~ are allowed"},
	} {
		_, err := r.Resolve(tt.arch, tt.opts)
		if !errors.Is(err, ErrInvalid) || !strings.HasSuffix(err.Error(), tt.want) {
			t.Errorf("Plan(%s, %+v) = %v, want ...%s", tt.arch, tt.opts, err, tt.want)
		}
	}
}

func TestControl(t *testing.T) {
	p, err := loadFixture(t).Resolve("amd64", fixtureOpts)
	if err != nil {
		t.Fatal(err)
	}
	c := p.Packages[0].Control(1234)
	want := `Package: hello-server
Version: 1.2.3~rc.1-2~wmf1
Architecture: amd64
Maintainer: Hello Packager <hello@example.org>
Installed-Size: 1234
Depends: ca-certificates, iptables (>= 1.8) | nftables, adduser
Section: net
Priority: optional
Homepage: https://example.org/hello
Description: Hello server daemon
 A daemon that says hello.
 .
 It runs as the system user hello.
`
	if got := string(c.Bytes()); got != want {
		t.Fatalf("control:\n%s\nwant:\n%s", got, want)
	}
}

func TestKubernetesShape(t *testing.T) {
	r, err := Load("testdata/recipes/kubernetes-1.36.yaml", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.Resolve("arm64", ResolveOptions{DefaultMaintainer: "Ops <ops@example.org>"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, pkg := range p.Packages {
		names = append(names, pkg.OutputFile)
	}
	if p.Component != "kubernetes136" || strings.Join(names, " ") != "kubernetes-master_1.36.0-1_arm64.deb kubernetes-node_1.36.0-1_arm64.deb kubernetes-client136_1.36.0-1_arm64.deb" {
		t.Fatalf("component %q, packages %v", p.Component, names)
	}
	if got := p.Sources[1].URL; got != "https://dl.k8s.io/v1.36.0/kubernetes-node-linux-arm64.tar.gz" || p.Sources[1].Pinned["sha512"][:8] != "10a4c366" {
		t.Fatalf("node source %q %v", got, p.Sources[1].Pinned)
	}
	master := p.Packages[0]
	if strings.Join(master.Depends, ",") != "adduser" || strings.Join(master.Conffiles, ",") != "/etc/default/kube-apiserver" ||
		!strings.HasSuffix(master.Files[1].LocalPath, "/recipes/kubernetes/kube-apiserver.service") {
		t.Fatalf("master: depends %v, conffiles %v, unit %q", master.Depends, master.Conffiles, master.Files[1].LocalPath)
	}
}

// TestPlanNoMaintainer: a missing maintainer is the site's configuration, not
// the recipe, and callers tell it by errors.Is, not by its message.
func TestPlanNoMaintainer(t *testing.T) {
	_, file := writeProject(t, baseRecipe)
	r, err := Load(file, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Resolve("amd64", ResolveOptions{}); !errors.Is(err, ErrNoMaintainer) || !errors.Is(err, ErrInvalid) {
		t.Errorf("Resolved without a maintainer = %v, want ErrNoMaintainer and ErrInvalid", err)
	}
	if _, err := r.Resolve("amd64", ResolveOptions{DefaultMaintainer: "nobody"}); errors.Is(err, ErrNoMaintainer) || !errors.Is(err, ErrInvalid) {
		t.Errorf("Resolved with a malformed maintainer = %v, want ErrInvalid only", err)
	}
}

// sigstoreForms are the three Sigstore forms of signature:, each valid, the
// last one's policy with a source repository, then attestations of another
// predicate type than SLSA provenance.
var sigstoreForms = []string{
	"{sig-url: \"https://example.org/x-{{.Arch}}.tar.gz.sig\", cert-url: \"https://example.org/x-{{.Arch}}.tar.gz.cert\", identity: krel-staging@k8s-releng-prod.iam.gserviceaccount.com, issuer: https://accounts.google.com}",
	"{bundle-url: \"https://example.org/v{{.Version}}/x-{{.Arch}}.sigstore.json\", identity: \"https://github.com/o/x/.github/workflows/release.yml@refs/tags/v{{.Version}}\", issuer: https://token.actions.githubusercontent.com}",
	"{github-attestations: o/x, identity-regexp: '^https://github\\.com/o/x/\\.github/workflows/release\\.yml@refs/tags/v.*$', issuer: https://token.actions.githubusercontent.com}",
	"{github-attestations: o/x, identity: https://github.com/o/release/.github/workflows/shared.yml@refs/heads/main, issuer: https://token.actions.githubusercontent.com, source-repository: https://github.com/o/x}",
	"{github-attestations: o/x, identity-regexp: '^https://github\\.com/o/x/\\.github/workflows/release\\.yml@refs/tags/v.*$', issuer: https://token.actions.githubusercontent.com, predicate-types: [\"https://in-toto.io/attestation/release/v0.1\", https://slsa.dev/provenance/v1]}",
}

// Each Sigstore form plans with its templates rendered, and names what to
// fetch besides the source.
func TestPlanSigstore(t *testing.T) {
	want := []struct {
		ss   ResolvedSigstore
		aux  []string
		form string
	}{
		{ResolvedSigstore{SigURL: "https://example.org/x-arm64.tar.gz.sig", CertURL: "https://example.org/x-arm64.tar.gz.cert",
			Identity: "krel-staging@k8s-releng-prod.iam.gserviceaccount.com", Issuer: "https://accounts.google.com"},
			[]string{"https://example.org/x-arm64.tar.gz.sig", "https://example.org/x-arm64.tar.gz.cert"}, "cosign"},
		{ResolvedSigstore{BundleURL: "https://example.org/v1.0.0/x-arm64.sigstore.json",
			Identity: "https://github.com/o/x/.github/workflows/release.yml@refs/tags/v1.0.0", Issuer: "https://token.actions.githubusercontent.com"},
			[]string{"https://example.org/v1.0.0/x-arm64.sigstore.json"}, "bundle"},
		{ResolvedSigstore{GitHubAttestations: "o/x", IdentityRegexp: `^https://github\.com/o/x/\.github/workflows/release\.yml@refs/tags/v.*$`,
			Issuer: "https://token.actions.githubusercontent.com"}, nil, "github-attestations"},
		{ResolvedSigstore{GitHubAttestations: "o/x", Identity: "https://github.com/o/release/.github/workflows/shared.yml@refs/heads/main",
			Issuer: "https://token.actions.githubusercontent.com", SourceRepository: "https://github.com/o/x"}, nil, "github-attestations"},
		{ResolvedSigstore{GitHubAttestations: "o/x", IdentityRegexp: `^https://github\.com/o/x/\.github/workflows/release\.yml@refs/tags/v.*$`,
			Issuer: "https://token.actions.githubusercontent.com", PredicateTypes: []string{"https://in-toto.io/attestation/release/v0.1", "https://slsa.dev/provenance/v1"}}, nil, "github-attestations"},
	}
	for i, sig := range sigstoreForms {
		_, file := writeProject(t, strings.Replace(baseRecipe, sigOpenPGP, sig, 1))
		r, err := Load(file, LoadOptions{})
		if err != nil {
			t.Fatalf("form %d: %v", i, err)
		}
		p, err := r.Resolve("arm64", ResolveOptions{DefaultMaintainer: "t <t@example.org>"})
		if err != nil {
			t.Fatal(err)
		}
		s := p.Sources[0]
		if s.Signature != nil || s.NoSignatureReason != "" || s.Sigstore == nil || !reflect.DeepEqual(*s.Sigstore, want[i].ss) {
			t.Errorf("form %d: planned %+v, want %+v", i, s.Sigstore, want[i].ss)
			continue
		}
		if got := s.AuxURLs(); !slices.Equal(got, want[i].aux) || s.Sigstore.Form() != want[i].form {
			t.Errorf("form %d: aux %v form %s, want %v %s", i, got, s.Sigstore.Form(), want[i].aux, want[i].form)
		}
	}
}

// The pinned-key form plans the key file's absolute path in the recipe's
// folder, names it for people, and lists it among the plan's local files
// (so that incremental builds and verify --base hash it).
func TestPlanSigstoreKey(t *testing.T) {
	dir, file := writeProject(t, strings.Replace(baseRecipe, sigOpenPGP, sigKey, 1))
	r, err := Load(file, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.Resolve("arm64", ResolveOptions{DefaultMaintainer: "t <t@example.org>"})
	if err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(dir, "recipes", "x", "tool.pub")
	want := ResolvedSigstore{BundleURL: "https://example.org/x-arm64.sigstore.json", PublicKey: "tool.pub", PublicKeyPath: key}
	if got := p.Sources[0].Sigstore; got == nil || !reflect.DeepEqual(*got, want) || got.Form() != "bundle" || got.Signer() != "public key tool.pub" {
		t.Fatalf("planned %+v, want %+v", got, want)
	}
	if !slices.Contains(p.LocalFiles(), key) {
		t.Errorf("LocalFiles %v lacks %s", p.LocalFiles(), key)
	}
}

// TestPolicyTarget: an absolute symbolic link target within the link's
// top-level folder becomes relative, as Debian policy 10.5 asks (lintian's
// absolute-symlink-in-top-level-folder), pointing at the same path; other
// targets stay as the recipe writes them.
func TestPolicyTarget(t *testing.T) {
	for _, c := range []struct{ dest, target, want string }{
		{"/usr/bin/ks-abs", "/usr/bin/ks", "ks"},
		{"/usr/share/doc/a/README", "/usr/lib/a/README", "../../../lib/a/README"},
		{"/usr/bin/x", "/usr/bin/./y", "y"},
		{"/usr/bin/ks-rel", "ks", "ks"},
		{"/usr/share/doc/a/README", "../b/LICENSE", "../b/LICENSE"},
		{"/opt/cni/bin/bridge", "/usr/lib/cni/bridge", "/usr/lib/cni/bridge"},
		{"/usr/share/ks/conf", "/etc/ks/ks.conf", "/etc/ks/ks.conf"},
		{"/lib/systemd/system/x.service", "/dev/null", "/dev/null"},
		{"/usr/bin/x", "/usr", "/usr"},
		{"/usr/bin/x", "/", "/"},
		{"/foo", "/foo/bar", "/foo/bar"},
		// relative on purpose, as base-files' /etc/os-release
		{"/etc/os-release", "../usr/lib/os-release", "../usr/lib/os-release"},
	} {
		if got := PolicyTarget(c.dest, c.target); got != c.want {
			t.Errorf("PolicyTarget(%q, %q) = %q, want %q", c.dest, c.target, got, c.want)
		}
	}
}

// {{.DebianVersion}} is the packages' own Debian version (epoch, revision
// and the site's suffix), as debhelper's ${binary:Version}: what a package
// of the recipe depends on its sibling with.
func TestDebianVersionTemplate(t *testing.T) {
	text := strings.Replace(baseRecipe, "version: 1.0.0\n", "version: 1.0.0\nepoch: 1\nrevision: \"3\"\n", 1)
	text = strings.Replace(text, "    section: admin\n", "    section: admin\n    depends: [\"xx-data (= {{.DebianVersion}})\"]\n", 1)
	text += `  - name: xx-data
    summary: X data
    description: The X tool's data.
    section: admin
    files:
      - {file: x.default, dest: /usr/share/xx/x.default}
`
	p := resolveText(t, text, "amd64", ResolveOptions{LocalSuffix: "~wmf1"})
	if p.DebianVersion != "1:1.0.0-3~wmf1" || !slices.Contains(p.Packages[0].Depends, "xx-data (= 1:1.0.0-3~wmf1)") {
		t.Errorf("version %s, depends %v; want xx-data (= %s)", p.DebianVersion, p.Packages[0].Depends, p.DebianVersion)
	}
}

// repo.component and repo.suite are checked as publish checks them
// (aptname), when the recipe is loaded, so lint and the CI gate refuse a
// target publish would refuse.
func TestRepoTargetCheckedAsPublishChecksIt(t *testing.T) {
	for _, tt := range []struct{ repo, want string }{
		{"{component: component/k8s, suite: bookworm-wikimedia}", ""},
		{"{component: Release}", `repo.component: component "Release": Release is a file of the suite's folder`},
		{"{component: main/binary-amd64}", `repo.component: component "main/binary-amd64": a part after the first`},
		{"{component: " + strings.Repeat("m", 101) + "}", `repo.component: component "mmm`},
		{"{suite: a/b}", `repo.suite: suite "a/b": want up to 100 letters`},
	} {
		_, file := writeProject(t, baseRecipe+"repo: "+tt.repo+"\n")
		r, err := Load(file, LoadOptions{})
		if err == nil {
			_, err = r.Resolve("amd64", ResolveOptions{DefaultMaintainer: "A B <a@example.org>"})
		}
		if tt.want == "" && err != nil || tt.want != "" && (!errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("repo: %s: %v, want %q", tt.repo, err, tt.want)
		}
	}
}

// A checksum file lists a file by its name, as sha256sum wrote it (the
// referee here); a URL gives that name percent-encoded where it needs it.
// The entry looked up by default is the URL's last segment decoded.
func TestChecksumNameDecoded(t *testing.T) {
	sha256sum := testenv.RequireTool(t, "sha256sum")[0]
	text := strings.Replace(baseRecipe, "url: https://example.org/x-{{.Arch}}.tar.gz\n",
		"url: https://example.org/v1/x%20tool%2Bmusl-{{.Arch}}.tar.gz\n    checksums: {url: https://example.org/v1/SHA256SUMS}\n", 1)
	p := resolveText(t, text, "amd64", ResolveOptions{})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x tool+musl-amd64.tar.gz"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(sha256sum, "x tool+musl-amd64.tar.gz")
	cmd.Dir = dir
	sums, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	list, err := digest.ParseChecksums(bytes.NewReader(sums), "SHA256SUMS")
	if err != nil {
		t.Fatal(err)
	}
	name := p.Sources[0].Checksums.Name
	if set, err := list.Lookup(name); err != nil || set[digest.SHA256] != "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881" {
		t.Fatalf("checksum entry name %q: %v, %v; sha256sum wrote %q", name, set, err, sums)
	}
}

// A source's kind comes from its URL's suffix when the recipe writes none
// (raw when no suffix says an archive); the plan says which, so that a
// build can refuse an archive packaged as raw only by default.
func TestKindFromURLPlanned(t *testing.T) {
	for _, c := range []struct {
		url, kind     string
		want          string
		wantKindOfURL bool
	}{
		{"https://example.org/download/x-{{.Arch}}", "", "raw", true},
		{"https://example.org/download/x-{{.Arch}}.tar.gz?x=1", "", "tar.gz", true},
		{"https://example.org/download/x-{{.Arch}}", "raw", "raw", false},
		{"https://example.org/download/x-{{.Arch}}", "tar.gz", "tar.gz", false},
	} {
		src := "url: " + c.url + "\n"
		if c.kind != "" {
			src += "    kind: " + c.kind + "\n"
		}
		text := strings.Replace(baseRecipe, "url: https://example.org/x-{{.Arch}}.tar.gz\n", src, 1)
		if c.want == "raw" {
			text = strings.Replace(text, "{source: bin, path: x, dest: /usr/bin/x}", "{source: bin, dest: /usr/bin/x}", 1)
		}
		s := resolveText(t, text, "amd64", ResolveOptions{}).Sources[0]
		if s.Kind != c.want || s.KindFromURL != c.wantKindOfURL {
			t.Errorf("url %s, kind %q: planned kind %q, from the URL %v; want %q, %v", c.url, c.kind, s.Kind, s.KindFromURL, c.want, c.wantKindOfURL)
		}
	}
}
