package deb

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/testkit/testenv"
	"github.com/updeb/updeb/pkg/archive"
)

func md5Hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// claimsDeb builds with dpkg-deb a package of a file, a hardlink to
// another, a symlink and a conffile, whose DEBIAN/md5sums is md5sums, and
// returns its path.
func claimsDeb(t *testing.T, name, md5sums string) string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "DEBIAN/control"), "Package: "+name+"\nVersion: 1\nArchitecture: all\nMaintainer: t <t@example.org>\nDescription: t\n")
	writeFile(t, filepath.Join(dir, "DEBIAN/conffiles"), "/etc/t.conf\n")
	writeFile(t, filepath.Join(dir, "DEBIAN/md5sums"), md5sums)
	for f, content := range map[string]string{"usr/bin/tool": "tool\n", "usr/share/t/data": "data\n", "usr/share/t/extra": "extra\n", "etc/t.conf": "conf\n"} {
		writeFile(t, filepath.Join(dir, f), content)
	}
	if err := os.Link(filepath.Join(dir, "usr/share/t/data"), filepath.Join(dir, "usr/share/t/link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("data", filepath.Join(dir, "usr/share/t/sym")); err != nil {
		t.Fatal(err)
	}
	deb := filepath.Join(t.TempDir(), name+".deb")
	testenv.Run(t, "dpkg-deb", "--root-owner-group", "-Zgzip", "--build", dir, deb)
	return deb
}

// A package whose md5sums lies is one dpkg installs without a word, and
// dpkg --verify (debsums too) then reports its file changed on every system;
// lintian reports the lie, the name listed that the package lacks and the
// file left out. Inspect reports each of them as a Problem (and
// ProblemsError names them), and none for md5sums as dh_md5sums writes it:
// every regular file and hardlink, the conffile left out.
func TestInspectMD5SumsAgainstFiles(t *testing.T) {
	testenv.RequireTool(t, "dpkg", "dpkg-deb", "lintian")
	truth := md5Hex("data\n") + "  usr/share/t/data\n" + md5Hex("extra\n") + "  usr/share/t/extra\n" +
		md5Hex("data\n") + "  usr/share/t/link\n" + md5Hex("tool\n") + "  usr/bin/tool\n"
	good := claimsDeb(t, "truthful", truth)
	lies := md5Hex("data\n") + "  usr/share/t/data\n" + md5Hex("data\n") + "  usr/share/t/link\n" +
		md5Hex("other\n") + "  usr/bin/tool\n" + md5Hex("gone\n") + "  usr/share/t/gone\n" +
		md5Hex("data\n") + "  usr/share/t/sym\n" + md5Hex("conf\n") + "  etc/t.conf\n" + md5Hex("data\n") + "  ./usr/share/t/data\n"
	bad := claimsDeb(t, "lying", lies)

	tags := []string{"md5sum-mismatch usr/bin/tool", "md5sums-lists-nonexistent-file usr/share/t/gone", "md5sums-lists-nonexistent-file usr/share/t/sym", "file-missing-in-md5sums usr/share/t/extra"}
	out := lintianOf(t, good, bad)
	for _, tag := range tags {
		if !strings.Contains(out, "lying: "+tag) || strings.Contains(out, "truthful: "+strings.Fields(tag)[0]) {
			t.Errorf("lintian: want %q for the lying package only:\n%s", tag, out)
		}
	}
	root, base := dpkgRoot(t)
	dpkg := dpkgRunner(t, base)
	dpkg("-i", bad)
	if _, err := os.Stat(filepath.Join(root, "usr/bin/tool")); err != nil {
		t.Fatalf("dpkg -i installs the package whose md5sums lies: %v", err)
	}
	if v := dpkg("--verify", "lying"); !strings.Contains(v, "??5??????   /usr/bin/tool\n") {
		t.Errorf("dpkg --verify of the installed package:\n%s\nwant /usr/bin/tool reported changed", v)
	}

	info, err := InspectFile(context.Background(), good, archive.Limits{})
	if err != nil || len(info.Problems) != 0 || info.ProblemsError() != nil {
		t.Fatalf("truthful md5sums: %v, problems %v", err, info.Problems)
	}
	info, err = InspectFile(context.Background(), bad, archive.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"md5sums: usr/bin/tool: listed on line 3 with md5 " + md5Hex("other\n") + ", but the file's md5 is " + md5Hex("tool\n"),
		"md5sums: usr/share/t/gone: listed on line 4, but the package does not ship it",
		"md5sums: usr/share/t/sym: listed on line 5, but data.tar holds it as a symlink; md5sums lists regular files only",
		"md5sums: usr/share/t/data: listed on line 1 and again on line 7",
	}
	if got := fmt.Sprint(info.Problems); got != fmt.Sprint(want) {
		t.Errorf("problems:\n%s\nwant\n%s", strings.Join(strings.Split(got, "] ["), "\n"), strings.Join(want, "\n"))
	}
	// A file left out is lintian's warning (file-missing-in-md5sums), and
	// inspect's: nothing false is said of it.
	if got, want := fmt.Sprint(info.Warnings), "[md5sums: usr/share/t/extra: shipped, but md5sums does not list it (debsums and dpkg --verify cannot check it)]"; got != want {
		t.Errorf("warnings: %s, want %s", got, want)
	}
	if err := info.ProblemsError(); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), want[0]) {
		t.Errorf("ProblemsError: %v", err)
	}
}

// lintianOf runs lintian on debs and returns its output, every tag shown.
func lintianOf(t *testing.T, debs ...string) string {
	t.Helper()
	cmd := exec.Command("lintian", append([]string{"-I", "-E", "--pedantic", "--tag-display-limit", "0"}, debs...)...)
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// What Write writes, Inspect finds true: md5sums and Installed-Size.
func TestInspectWritesOwnClaims(t *testing.T) {
	path, res := writeTemp(t, samplePackage())
	info, err := InspectFile(context.Background(), path, archive.Limits{})
	if err != nil || len(info.Problems) != 0 || len(info.Warnings) != 0 || len(info.MD5Sums) == 0 {
		t.Fatalf("Inspect of Write's package (Installed-Size %d): %v, problems %v, warnings %v, md5sums %v", res.InstalledSize, err, info.Problems, info.Warnings, info.MD5Sums)
	}
}

// md5sums may name a path of megabytes (it may be 16 MiB): the error and
// Short name it shortened, the Problem keeps it whole.
func TestInspectMD5SumsLongName(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	long := "usr/share/" + strings.Repeat("n", 1<<20)
	deb := claimsDeb(t, "long", md5Hex("data\n")+"  usr/share/t/data\n"+md5Hex("extra\n")+"  usr/share/t/extra\n"+
		md5Hex("data\n")+"  usr/share/t/link\n"+md5Hex("tool\n")+"  usr/bin/tool\n"+md5Hex("x")+"  "+long+"\n")
	info, err := InspectFile(context.Background(), deb, archive.Limits{})
	if err != nil || len(info.Problems) != 1 || info.Problems[0].Path != long {
		t.Fatalf("%v, %d problems", err, len(info.Problems))
	}
	if msg := info.ProblemsError().Error(); len(msg) > 1000 || !strings.Contains(msg, "usr/share/nnn") || !strings.Contains(msg, "...(1048586 bytes): listed on line 5, but the package does not ship it") {
		t.Errorf("ProblemsError of %d bytes: %.600s", len(msg), msg)
	}
}
