package pipeline

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/testkit/testenv"
	"github.com/updeb/updeb/pkg/archive"
	"github.com/updeb/updeb/pkg/deb"
)

// accPackages are two packages of one recipe: acc, built from an archive
// made by GNU tar (a hardlink, systemd's \x2d, a space and UTF-8 in names)
// with every kind of mode, owner and special bit, maintainer-script
// fragments and an interest in a trigger; acc-plugin, whose installation
// activates that trigger.
const accPackages = `  - name: acc
    summary: modes, owners, scripts and triggers
    description: |
      A test package.
    section: admin
    files:
      - {source: acc, path: bin/acc, dest: /usr/sbin/acc, mode: "2750", group: shadow, special-bits: "reads /etc/shadow for its users"}
      - {source: acc, path: bin/acc-alias, dest: /usr/sbin/acc-alias, mode: "0755"}
      - {source: acc, path: 'units/acc\x2dworker.service', dest: '/lib/systemd/system/acc\x2dworker.service'}
      - {source: acc, path: "docs/read me ünï.txt", dest: "/usr/share/doc/acc/read me ünï.txt"}
      - {file: acc.conf, dest: /etc/acc/acc.conf, mode: "0640", group: adm}
      - {file: acc.conf, dest: /etc/acc/token, mode: "0600"}
    directories:
      - {path: /var/lib/acc, mode: "0700"}
      - {path: /var/lib/acc/shared, mode: "2775", group: staff, special-bits: "files made in it belong to staff"}
      - {path: /var/lib/acc/drop, mode: "1777", special-bits: "anyone drops files, only their owner removes them"}
    hardlinks:
      - {dest: /usr/sbin/acc-link, target: /usr/sbin/acc}
    scripts: {postinst: acc.postinst, prerm: acc.prerm}
    triggers: [interest-noawait acc-reload]
  - name: acc-plugin
    summary: activates acc's trigger
    description: |
      A test package.
    section: admin
    files:
      - {file: acc.conf, dest: /usr/share/acc-plugin/plugin.conf}
    triggers: [activate-noawait acc-reload]
`

// TestModesScriptsTriggersEndToEnd builds acc and acc-plugin from a recipe,
// installs them with dpkg into a throwaway root (as root, or under fakeroot)
// and checks what dpkg made: every mode, owner and special bit; the
// hardlinked archive member; the names; the fragments run with their
// arguments in the documented order; the trigger fired when acc-plugin was
// installed; lintian accepts both packages.
func TestModesScriptsTriggersEndToEnd(t *testing.T) {
	testenv.RequireTool(t, "tar", "dpkg", "dpkg-deb", "lintian")
	root, mirror := project(t)
	src := t.TempDir()
	for name, content := range map[string]string{"bin/acc": "#!/bin/sh\necho acc\n", `units/acc\x2dworker.service`: "[Service]\nExecStart=/usr/sbin/acc\n", "docs/read me ünï.txt": "docs\n"} {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(filepath.Join(src, "bin/acc"), filepath.Join(src, "bin/acc-alias")); err != nil {
		t.Fatal(err)
	}
	tarball := filepath.Join(t.TempDir(), "acc.tar.gz")
	testenv.Run(t, "tar", "-C", src, "--sort=name", "--owner=0", "--group=0", "-czf", tarball, "bin", "docs", "units")
	if !strings.Contains(string(testenv.Run(t, "tar", "-tvzf", tarball)), "bin/acc-alias link to bin/acc") {
		t.Fatal("GNU tar stored no hardlink")
	}
	data, err := os.ReadFile(tarball)
	if err != nil {
		t.Fatal(err)
	}
	tarballRecipe(t, root, mirror, "acc", data, accPackages)
	for name, content := range map[string]string{
		"acc.conf": "key = value\n",
		// The fragments write into $DPKG_ROOT: dpkg runs them chrootless here.
		"acc.postinst": "echo \"postinst $*\" >> \"$DPKG_ROOT/var/lib/acc/log\"\n",
		"acc.prerm":    "echo \"prerm $*\" >> \"$DPKG_ROOT/var/lib/acc/log\"\n",
	} {
		if err := os.MkdirAll(filepath.Join(root, "recipes/acc"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "recipes/acc", name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "out")
	if _, err := Run(context.Background(), jobs(t, root, "amd64", "acc"), options(t, mirror, out)); err != nil {
		t.Fatal(err)
	}
	acc, plugin := filepath.Join(out, "acc_1.0.0-1_amd64.deb"), filepath.Join(out, "acc-plugin_1.0.0-1_amd64.deb")
	testenv.Lintian(t, map[string]string{
		"package-contains-no-arch-dependent-files":        "the stand-in binary is a shell script",
		"extended-description-is-probably-too-short":      "a test package",
		"systemd-service-file-missing-documentation-key":  "a test unit",
		"systemd-service-file-missing-install-key":        "a test unit",
		"systemd-service-file-missing-hardening-features": "a test unit",
	}, acc, plugin)
	// The provenance record names each fragment by its digest.
	st, _ := readRecord(t, acc+ProvenanceSuffix)
	fragments := 0
	for _, d := range st.Predicate.BuildDefinition.ResolvedDependencies {
		if d.Annotations["role"] == "script-fragment" {
			fragments++
			if want := sha256File(t, filepath.Join(root, d.Name)); d.Digest["sha256"] != want || !strings.HasPrefix(d.Name, "recipes/acc/acc.") {
				t.Errorf("provenance input %s: %v, want sha256 %s", d.Name, d.Digest, want)
			}
		}
	}
	if fragments != 2 {
		t.Errorf("provenance names %d script fragments, want 2", fragments)
	}
	if info := string(testenv.Run(t, "dpkg-deb", "-I", acc, "triggers")); info != "interest-noawait acc-reload\n" {
		t.Errorf("acc's triggers: %q", info)
	}

	dpkgRoot := testenv.DpkgRoot(t)
	got := testenv.AsRoot(t, `dpkg() { command dpkg --root="$ROOT" --admindir="$ROOT/var/lib/dpkg" --force-script-chrootless --force-not-root --log=/dev/null "$@" >/dev/null; }
dpkg -i "$ACC"
dpkg -i "$PLUGIN"
cd "$ROOT"
find usr/sbin lib/systemd/system etc/acc var/lib/acc "usr/share/doc/acc/read me ünï.txt" -printf '%p %m %u:%g %n\n' | LC_ALL=C sort
cmp usr/sbin/acc usr/sbin/acc-alias && echo "acc-alias has acc's bytes"
[ usr/sbin/acc -ef usr/sbin/acc-link ] && echo "acc-link is acc"
echo ---
cat var/lib/acc/log
dpkg -r acc
echo ---
cat var/lib/acc/log`, "ROOT="+dpkgRoot, "ACC="+acc, "PLUGIN="+plugin, "PATH=/usr/sbin:/usr/bin:/sbin:/bin")
	want := `etc/acc 755 root:root 2
etc/acc/acc.conf 640 root:adm 1
etc/acc/token 600 root:root 1
lib/systemd/system 755 root:root 2
lib/systemd/system/acc\x2dworker.service 644 root:root 1
usr/sbin 755 root:root 2
usr/sbin/acc 2750 root:shadow 2
usr/sbin/acc-alias 755 root:root 1
usr/sbin/acc-link 2750 root:shadow 2
usr/share/doc/acc/read me ünï.txt 644 root:root 1
var/lib/acc 700 root:root 4
var/lib/acc/drop 1777 root:root 2
var/lib/acc/log 644 root:root 1
var/lib/acc/shared 2775 root:staff 2
acc-alias has acc's bytes
acc-link is acc
---
postinst configure 
postinst triggered acc-reload
---
postinst configure 
postinst triggered acc-reload
prerm remove
`
	if string(got) != want {
		t.Errorf("installed:\n%s\nwant:\n%s", got, want)
	}
}

// TestRebuildRealDebianPackages rebuilds four real Debian 12 packages
// (testdata/debian: setuid and setgid files, root:shadow and root:staff,
// 0700, 1733 and 1777 folders, systemd's \x2d, symlinks, conffiles) and
// one dpkg-deb builds here with hardlinks (as perl-base has them) from
// their trees through a recipe that states each entry's mode and owner, and
// finds every name, type, mode, owner (name and id), size, byte and link
// target of the original in the same order, and the same conffiles; dpkg
// --unpack makes the same tree of both; Depends names the libc6 Debian
// named for the binaries. (The rebuilt package is named
// NAME-rebuilt: updeb writes its own copyright, changelog and lintian
// overrides for it, under that name, and nothing else differs.)
func TestRebuildRealDebianPackages(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb", "dpkg")
	originals, _ := filepath.Glob("../../testdata/debian/*.deb")
	if len(originals) != 4 {
		t.Fatalf("testdata/debian has %d packages, want 4", len(originals))
	}
	originals = append(originals, hardlinkedDeb(t))
	root, mirror := project(t)
	var js []Job
	want := map[string]*deb.Info{}
	for _, orig := range originals {
		info, err := deb.InspectFile(context.Background(), orig, archive.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		name := info.Control.Value("Package")
		want[name+"-rebuilt"] = info
		tarballRecipe(t, root, mirror, name, regularFiles(t, orig), rebuildRecipe(t, name, info))
		r, err := recipe.Load(filepath.Join(root, "recipes", name+".yaml"), recipe.LoadOptions{})
		if err != nil {
			t.Fatalf("the recipe for %s: %v", name, err)
		}
		js = append(js, Job{Recipe: r, Arch: "amd64"})
	}
	out := filepath.Join(t.TempDir(), "out")
	res, err := Run(context.Background(), js, options(t, mirror, out))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		for _, o := range r.Outputs {
			orig := want[o.Package]
			rebuilt := filepath.Join(out, o.File)
			got, err := deb.InspectFile(context.Background(), rebuilt, archive.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			ours := "./usr/share/doc/" + o.Package + "/"
			byPath := map[string]deb.FileInfo{}
			var order []string
			for _, f := range got.Files {
				byPath[f.Path] = f
				if !strings.HasPrefix(f.Path, ours) && f.Path != "./usr/share/lintian/overrides/"+o.Package {
					order = append(order, f.Path)
				}
			}
			var origOrder []string
			for _, f := range orig.Files {
				origOrder = append(origOrder, f.Path)
				g, ok := byPath[f.Path]
				g.MTime = f.MTime // clamped to the recipe's release date: not part of the comparison
				if !ok || g != f {
					t.Errorf("%s: %s\n got %+v\nwant %+v", o.Package, f.Path, g, f)
				}
			}
			if !slices.Equal(order, origOrder) {
				t.Errorf("%s: entries in another order or more of them:\n got %q\nwant %q", o.Package, order, origOrder)
			}
			if !slices.Equal(got.Conffiles, orig.Conffiles) {
				t.Errorf("%s: conffiles %q, want %q", o.Package, got.Conffiles, orig.Conffiles)
			}
			// The libc6 Debian's dpkg-shlibdeps named for the same
			// binaries, and of the other libraries only packages Debian
			// names too (unversioned: the recipe names none; libraries
			// updeb cannot name are the build's warning).
			debian := map[string]bool{}
			for _, rel := range strings.Split(orig.Control.Value("Depends"), ",") {
				if f := strings.Fields(rel); len(f) > 0 {
					debian[f[0]] = true
				}
			}
			libc6, d := libc6In(orig.Control.Value("Depends")), got.Control.Value("Depends")
			for _, rel := range strings.Split(d, ", ") {
				if rel == "" {
					continue
				}
				if name := strings.Fields(rel)[0]; name == "libc6" && rel != libc6 || name != "libc6" && (strings.Contains(rel, "(") || !debian[name]) {
					t.Errorf("%s: Depends %q names %q; Debian's %q", o.Package, d, rel, orig.Control.Value("Depends"))
				}
			}
			if libc6 != "" && !strings.Contains(", "+d+", ", ", "+libc6+", ") {
				t.Errorf("%s: Depends %q, want Debian's %q in it", o.Package, d, libc6)
			}
			// dpkg --unpack makes the same tree of both (but updeb's own files).
			trees := map[string]string{}
			for which, p := range map[string]string{"original": originalOf(t, originals, orig), "rebuilt": rebuilt} {
				dpkgRoot := testenv.DpkgRoot(t)
				trees[which] = string(testenv.AsRoot(t, `dpkg --root="$ROOT" --admindir="$ROOT/var/lib/dpkg" --force-script-chrootless --force-not-root --force-depends --log=/dev/null --unpack "$DEB" >"$ROOT.log" 2>&1 || { cat "$ROOT.log"; exit 1; }
cd "$ROOT" && find . \( -path ./var/lib/dpkg -o -path "./usr/share/doc/$OURS" -o -path "./usr/share/lintian/overrides/$OURS" \) -prune -o -printf '%p %y %m %u:%g %U:%G %s %l\n' | LC_ALL=C sort
find . -type f -links +1 ! -path './var/lib/dpkg/*' -printf '%p has %n names, inode %i\n' | LC_ALL=C sort | awk '{ if (!($6 in first)) first[$6] = $1; $6 = first[$6]; print }'
find . -type f ! -path './var/lib/dpkg/*' ! -path "./usr/share/doc/$OURS/*" ! -path "./usr/share/lintian/overrides/$OURS" -print0 | LC_ALL=C sort -z | xargs -0r md5sum`,
					"ROOT="+dpkgRoot, "DEB="+p, "OURS="+o.Package))
			}
			if trees["original"] != trees["rebuilt"] {
				t.Errorf("%s: dpkg --unpack made another tree:\n%s\nwant:\n%s", o.Package, trees["rebuilt"], trees["original"])
			}
			if n := strings.Count(trees["original"], "\n"); n < len(orig.Files) {
				t.Errorf("%s: the unpacked tree has %d lines for %d entries:\n%s", o.Package, n, len(orig.Files), trees["original"])
			}
		}
	}
	n := 0
	for _, r := range res {
		n += len(r.Outputs)
	}
	if n != len(originals) {
		t.Fatalf("%d packages rebuilt, want %d", n, len(originals))
	}
}

// libc6In is the libc6 relation of a Depends ("" when none).
func libc6In(depends string) string {
	for _, r := range strings.Split(depends, ", ") {
		if r == "libc6" || strings.HasPrefix(r, "libc6 ") {
			return r
		}
	}
	return ""
}

// hardlinkedDeb builds with dpkg-deb a package whose files have hardlinks,
// as Debian's perl-base has /usr/bin/perl5.36.0 for /usr/bin/perl: a
// command, and a setuid helper with two names (with a copyright file and
// lintian overrides, as Debian's packages have them).
func hardlinkedDeb(t *testing.T) string {
	t.Helper()
	tree := t.TempDir()
	for _, f := range []struct {
		name string
		mode os.FileMode
	}{{"usr/bin/tool", 0o755}, {"usr/lib/tool/helper", 0o754 | os.ModeSetuid}, {"usr/share/doc/hardlinked/copyright", 0o644}, {"usr/share/lintian/overrides/hardlinked", 0o644}} {
		p := filepath.Join(tree, f.name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\necho "+f.name+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, f.mode); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"usr/bin/tool-1.0": "usr/bin/tool", "usr/lib/tool/helper.real": "usr/lib/tool/helper"} {
		if err := os.Link(filepath.Join(tree, target), filepath.Join(tree, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(tree, "DEBIAN"), 0o755); err != nil {
		t.Fatal(err)
	}
	control := "Package: hardlinked\nVersion: 1.0-1\nArchitecture: amd64\nMaintainer: Test <test@example.org>\nSection: utils\nPriority: optional\nDescription: hardlinks\n A test package.\n"
	if err := os.WriteFile(filepath.Join(tree, "DEBIAN/control"), []byte(control), 0o644); err != nil {
		t.Fatal(err)
	}
	deb := filepath.Join(t.TempDir(), "hardlinked_1.0-1_amd64.deb")
	testenv.Run(t, "dpkg-deb", "--root-owner-group", "--build", tree, deb)
	if listing := string(testenv.Run(t, "dpkg-deb", "-c", deb)); strings.Count(listing, " link to ") != 2 {
		t.Fatalf("dpkg-deb stored no hardlinks:\n%s", listing)
	}
	return deb
}

// originalOf returns the original .deb whose inspection is info.
func originalOf(t *testing.T, originals []string, info *deb.Info) string {
	t.Helper()
	for _, o := range originals {
		if strings.HasPrefix(filepath.Base(o), info.Control.Value("Package")+"_") {
			return o
		}
	}
	t.Fatalf("no original for %s", info.Control.Value("Package"))
	return ""
}

// regularFiles returns a tar.gz of the regular files of a .deb's data.tar
// (from dpkg-deb --fsys-tarfile): the upstream archive the recipe takes
// them from. Folders and symlinks come from the recipe.
func regularFiles(t *testing.T, debFile string) []byte {
	t.Helper()
	tr := tar.NewReader(bytes.NewReader(testenv.Run(t, "dpkg-deb", "--fsys-tarfile", debFile)))
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		if err := tw.WriteHeader(&tar.Header{Name: h.Name, Typeflag: tar.TypeReg, Mode: 0o644, Size: h.Size, Format: tar.FormatGNU}); err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(tw, tr); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// rebuildRecipe writes the packages section of a recipe that rebuilds the
// package info describes as NAME-rebuilt: every entry with its mode, owner
// and group, special bits with a reason, conffiles as the original's.
func rebuildRecipe(t *testing.T, name string, info *deb.Info) string {
	t.Helper()
	type access struct {
		Mode        string `yaml:"mode"`
		Owner       string `yaml:"owner,omitempty"`
		Group       string `yaml:"group,omitempty"`
		SpecialBits string `yaml:"special-bits,omitempty"`
	}
	type file struct {
		Source   string `yaml:"source"`
		Path     string `yaml:"path"`
		Dest     string `yaml:"dest"`
		access   `yaml:",inline"`
		Conffile bool `yaml:"conffile"`
	}
	type dir struct {
		Path   string `yaml:"path"`
		access `yaml:",inline"`
	}
	type link struct {
		Dest   string `yaml:"dest"`
		Target string `yaml:"target"`
	}
	type pkg struct {
		Name         string `yaml:"name"`
		Architecture string `yaml:"architecture"`
		Summary      string `yaml:"summary"`
		Description  string `yaml:"description"`
		Section      string `yaml:"section"`
		Files        []file `yaml:"files"`
		Directories  []dir  `yaml:"directories"`
		Symlinks     []link `yaml:"symlinks,omitempty"`
		Hardlinks    []link `yaml:"hardlinks,omitempty"`
	}
	arch := "any"
	if info.Control.Value("Architecture") == "all" {
		arch = "all"
	}
	summary, _, _ := strings.Cut(info.Control.Value("Description"), "\n")
	p := pkg{Name: name + "-rebuilt", Architecture: arch, Summary: summary, Description: "Debian's " + name + ", rebuilt by updeb's tests.",
		Section: info.Control.Value("Section")}
	for _, f := range info.Files {
		a := access{Mode: fmt.Sprintf("%04o", deb.UnixMode(f.Mode))}
		if f.Uname != "root" {
			a.Owner = f.Uname
		}
		if f.Gname != "root" {
			a.Group = f.Gname
		}
		if f.Mode&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != 0 {
			a.SpecialBits = "as Debian's " + name + " has it"
		}
		dest := strings.TrimPrefix(f.Path, ".")
		switch f.Type {
		case "file":
			p.Files = append(p.Files, file{Source: name, Path: strings.TrimPrefix(f.Path, "./"), Dest: dest, access: a, Conffile: slices.Contains(info.Conffiles, dest)})
		case "dir":
			if f.Path != "./" {
				p.Directories = append(p.Directories, dir{Path: strings.TrimSuffix(dest, "/"), access: a})
			}
		case "symlink":
			p.Symlinks = append(p.Symlinks, link{Dest: dest, Target: f.Linkname})
		case "hardlink":
			p.Hardlinks = append(p.Hardlinks, link{Dest: dest, Target: strings.TrimPrefix(f.Linkname, ".")})
		default:
			t.Fatalf("%s: %s is a %s, which the test does not rebuild", name, f.Path, f.Type)
		}
	}
	data, err := yaml.Marshal([]pkg{p})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if line != "" {
			b.WriteString("  " + line)
		}
	}
	return b.String()
}

// TestStatedDirectoryWhicheverComesFirst: dpkg leaves a directory that
// exists as it is, so a package that puts a file into a directory another
// package of the recipe states (0700, 2775 root:staff) carries it with the
// stated mode and owner, and the directory is the same whichever package
// dpkg unpacks first.
func TestStatedDirectoryWhicheverComesFirst(t *testing.T) {
	testenv.RequireTool(t, "dpkg", "dpkg-deb")
	root, mirror := project(t)
	tarballRecipe(t, root, mirror, "dirs", tarballOf(t, "seed", "seed\n"), `  - name: dirs
    summary: states its directories
    description: |
      A test package.
    section: admin
    directories:
      - {path: /var/lib/dirs, mode: "0700"}
      - {path: /var/lib/dirs/share, mode: "2775", group: staff, special-bits: "files made in it belong to staff"}
  - name: dirs-data
    summary: puts a file into them
    description: |
      A test package.
    section: admin
    files:
      - {source: dirs, path: seed, dest: /var/lib/dirs/share/seed}
`)
	out := filepath.Join(t.TempDir(), "out")
	if _, err := Run(context.Background(), jobs(t, root, "amd64", "dirs"), options(t, mirror, out)); err != nil {
		t.Fatal(err)
	}
	for _, order := range [][]string{{"dirs", "dirs-data"}, {"dirs-data", "dirs"}} {
		got := testenv.AsRoot(t, `for p in $FIRST $SECOND; do
	dpkg --root="$ROOT" --admindir="$ROOT/var/lib/dpkg" --force-not-root --force-script-chrootless --log=/dev/null --unpack "$OUT/${p}_1.0.0-1_amd64.deb" >/dev/null
done
cd "$ROOT" && find var/lib/dirs -printf '%p %m %u:%g\n' | LC_ALL=C sort`,
			"ROOT="+testenv.DpkgRoot(t), "OUT="+out, "FIRST="+order[0], "SECOND="+order[1])
		want := "var/lib/dirs 700 root:root\nvar/lib/dirs/share 2775 root:staff\nvar/lib/dirs/share/seed 644 root:root\n"
		if string(got) != want {
			t.Errorf("%s unpacked first:\n%s\nwant:\n%s", order[0], got, want)
		}
	}
}
