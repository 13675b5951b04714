package deb

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/testkit/testenv"
	"github.com/updeb/updeb/pkg/archive"
)

// The same tree built by dpkg-deb --root-owner-group --build (with
// dpkg-gencontrol's control file and Installed-Size) and by Write: identical
// control paragraph, file list, entry order, modes, owners, mtimes, md5sums.
func TestMatchesDpkgDeb(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb", "dpkg-gencontrol", "md5sum")
	dir := t.TempDir()
	tree := filepath.Join(dir, "tree")
	files := map[string]string{
		"usr/bin/tool": "#!/bin/sh\n", "usr/lib/x/a/z/f": strings.Repeat("y", 5000), "usr/lib/x/a-b": "1",
		"usr/lib/x/a.b/f": "", "usr/lib/x/B/f": "b", "etc/x/x.conf": "conf\n", "usr/share/doc/x/copyright": "c\n",
	}
	testenv.WriteFiles(t, tree, files)
	if err := os.Chmod(filepath.Join(tree, "usr/bin/tool"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, l := range [][2]string{{"tool", "usr/bin/tool-link"}, {"../lib/x", "usr/share/x"}, {"usr/lib", "0lib"}} {
		if err := os.Symlink(l[0], filepath.Join(tree, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(filepath.Join(tree, "usr/lib/x/a/z/f"), filepath.Join(tree, "usr/lib/x/a/hl")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(tree, "var/lib/x/empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	// dpkg-gencontrol writes DEBIAN/control with Installed-Size from the tree.
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(filepath.Join(src, "debian"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(src, "debian/control"), `Source: xx
Maintainer: updeb tests <tests@updeb.invalid>
Section: admin
Priority: optional
Homepage: https://updeb.invalid/

Package: xx
Architecture: all
Depends: libc6 (>= 2.36), adduser | passwd
Description: the synopsis
 First paragraph of the extended description.
 .
 Second paragraph:
   verbatim line
`)
	writeFile(t, filepath.Join(src, "debian/changelog"), `xx (1.2.3-1) unstable; urgency=medium

  * Test.

 -- updeb tests <tests@updeb.invalid>  Wed, 14 Aug 2024 12:00:00 +0000
`)
	// -O: to stdout, so that Installed-Size is computed before DEBIAN/ exists.
	gencontrol := exec.Command("dpkg-gencontrol", "-pxx", "-P"+tree, "-O")
	gencontrol.Dir = src
	ctl, err := gencontrol.Output()
	if err != nil {
		t.Fatalf("dpkg-gencontrol: %v\n%s", err, err.(*exec.ExitError).Stderr)
	}
	writeFile(t, filepath.Join(tree, "DEBIAN/control"), string(ctl))
	writeFile(t, filepath.Join(tree, "DEBIAN/conffiles"), "/etc/x/x.conf\n")
	md5 := exec.Command("sh", "-c", `find . -type f ! -path './DEBIAN/*' ! -path ./etc/x/x.conf -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum > DEBIAN/md5sums`)
	md5.Dir = tree
	if out, err := md5.CombinedOutput(); err != nil {
		t.Fatalf("md5sum: %v\n%s", err, out)
	}
	writeFile(t, filepath.Join(tree, "DEBIAN/postinst"), "#!/bin/sh\nexit 0\n")
	if err := os.Chmod(filepath.Join(tree, "DEBIAN/postinst"), 0o755); err != nil {
		t.Fatal(err)
	}
	ref := filepath.Join(dir, "ref.deb")
	build := exec.Command("dpkg-deb", "--root-owner-group", "-Zxz", "--build", tree, ref)
	build.Env = append(os.Environ(), "SOURCE_DATE_EPOCH=1723636800") // testEpoch
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("dpkg-deb --build: %v\n%s", err, out)
	}

	p := &Package{
		Control: Control{Package: "xx", Version: "1.2.3-1", Architecture: "all",
			Maintainer: "updeb tests <tests@updeb.invalid>", Depends: []string{"libc6 (>= 2.36)", "adduser | passwd"},
			Section: "admin", Priority: "optional", Homepage: "https://updeb.invalid/", Summary: "the synopsis",
			Description: "First paragraph of the extended description.\n\nSecond paragraph:\n  verbatim line"},
		Entries:         treeEntries(t, tree),
		Conffiles:       []string{"/etc/x/x.conf"},
		Scripts:         []Script{{Name: "postinst", Content: []byte("#!/bin/sh\nexit 0\n")}},
		SourceDateEpoch: testEpoch,
	}
	ours := filepath.Join(dir, "ours.deb")
	if _, err := Write(context.Background(), ours, p); err != nil {
		t.Fatal(err)
	}
	got, want := inspectBoth(t, ours, ref)
	if !reflect.DeepEqual(got.Control, want.Control) {
		t.Errorf("control:\n got %s\nwant %s", got.Control.Bytes(), want.Control.Bytes())
	}
	if len(want.Files) < 20 {
		t.Fatalf("dpkg-deb package has only %d entries", len(want.Files))
	}
	if len(got.Files) != len(want.Files) {
		t.Errorf("%d entries, dpkg-deb has %d", len(got.Files), len(want.Files))
	}
	for i := range min(len(got.Files), len(want.Files)) {
		if got.Files[i] != want.Files[i] {
			t.Errorf("entry %d:\n got %+v\nwant %+v", i, got.Files[i], want.Files[i])
		}
	}
	for _, f := range []struct {
		name      string
		got, want any
	}{{"md5sums", got.MD5Sums, want.MD5Sums}, {"conffiles", got.Conffiles, want.Conffiles}, {"scripts", got.Scripts, want.Scripts}} {
		if !reflect.DeepEqual(f.got, f.want) {
			t.Errorf("%s:\n got %v\nwant %v", f.name, f.got, f.want)
		}
	}
	var names []string
	for _, m := range got.Members {
		names = append(names, m.Name)
	}
	if strings.Join(names, " ") != "debian-binary control.tar.xz data.tar.xz" {
		t.Errorf("members %v", names)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// inspectBoth inspects our package and dpkg-deb's.
func inspectBoth(t *testing.T, ours, ref string) (got, want *Info) {
	t.Helper()
	var err error
	if want, err = InspectFile(context.Background(), ref, archive.Limits{}); err != nil {
		t.Fatal(err)
	}
	if got, err = InspectFile(context.Background(), ours, archive.Limits{}); err != nil {
		t.Fatal(err)
	}
	return got, want
}

// A maintainer script that is a hardlink to another (a DEBIAN folder made
// with ln or cp -l): dpkg-deb --build writes it into control.tar as GNU
// tar's hardlink entry, and dpkg installs and runs it as a copy of the
// other. Inspect reads it so, with the other's content and mode.
func TestInspectHardlinkedScriptOfDpkgDeb(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	dir := t.TempDir()
	tree := filepath.Join(dir, "tree")
	writeFile(t, filepath.Join(tree, "DEBIAN/control"), "Package: linked\nVersion: 1.0\nArchitecture: all\nMaintainer: updeb tests <tests@updeb.invalid>\nDescription: linked scripts\n One script, two names.\n")
	writeFile(t, filepath.Join(tree, "usr/share/doc/linked/copyright"), "c\n")
	script := "#!/bin/sh\nset -e\necho \"$0 $1\"\n"
	writeFile(t, filepath.Join(tree, "DEBIAN/postinst"), script)
	if err := os.Chmod(filepath.Join(tree, "DEBIAN/postinst"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(tree, "DEBIAN/postinst"), filepath.Join(tree, "DEBIAN/postrm")); err != nil {
		t.Fatal(err)
	}
	deb := filepath.Join(dir, "linked.deb")
	testenv.Run(t, "dpkg-deb", "--root-owner-group", "-Zgzip", "--build", tree, deb)
	if list := string(testenv.Run(t, "sh", "-c", "dpkg-deb --ctrl-tarfile \"$1\" | tar -tv", "sh", deb)); !strings.Contains(list, "link to ./postinst") {
		t.Fatalf("dpkg-deb wrote no hardlink into control.tar:\n%s", list)
	}
	info, err := InspectFile(context.Background(), deb, archive.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]ScriptInfo{}
	for _, s := range info.Scripts {
		got[s.Name] = s
	}
	for _, name := range []string{"postinst", "postrm"} {
		if s := got[name]; s.Content != script || s.Mode != 0o755 || s.Size != int64(len(script)) {
			t.Errorf("%s: %+v, want the script, mode 0755", name, s)
		}
	}
}
