package main

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/testkit/testenv"
)

// treeDeb builds with dpkg-deb the package name from files (path in the
// tree -> content, DEBIAN/control among them).
func treeDeb(t *testing.T, dir, name string, files map[string]string) string {
	t.Helper()
	tree := filepath.Join(dir, "tree-"+name)
	for f, b := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(tree, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tree, f), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, name+".deb")
	testenv.Run(t, "dpkg-deb", "--root-owner-group", "-Zgzip", "--build", tree, out)
	return out
}

// md5sumsDeb builds a package of /usr/bin/tool whose DEBIAN/md5sums gives
// it the md5 of content.
func md5sumsDeb(t *testing.T, dir, name, content string) string {
	t.Helper()
	sum := md5.Sum([]byte(content))
	return treeDeb(t, dir, name, map[string]string{
		"DEBIAN/control": "Package: " + name + "\nVersion: 1\nArchitecture: amd64\nMaintainer: T <t@example.com>\nDescription: test\n",
		"DEBIAN/md5sums": hex.EncodeToString(sum[:]) + "  usr/bin/tool\n",
		"usr/bin/tool":   "tool\n",
	})
}

// A package whose md5sums lies about a file (dpkg installs it; debsums and
// dpkg --verify then report the file changed on every system) is published
// by no publish, which names the file and says what to do, and leaves the
// repository as it was; inspect lists the problem, in --json too, and exits
// 1. Both took it without a word.
func TestMD5SumsMismatchRefused(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	dir := t.TempDir()
	key := generateKey(t, dir) + ".secret.asc"
	good := md5sumsDeb(t, dir, "truthful", "tool\n")
	bad := md5sumsDeb(t, dir, "lying", "other\n")
	repoDir := filepath.Join(dir, "repo")

	code, _, stderr := runCLI(t, "publish", "--repo", repoDir, "--key", key, good, bad)
	for _, want := range []string{bad + ": ", "md5sums: usr/bin/tool: listed on line 1 with md5 ", "rebuild it with DEBIAN/md5sums written from the files it ships"} {
		if code != exitUsage || !strings.Contains(stderr, want) {
			t.Fatalf("publish of a package whose md5sums lies: exit %d, want %d and %q:\n%s", code, exitUsage, want, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(repoDir, "dists")); err == nil {
		t.Fatal("a refused publish wrote the repository's metadata")
	}
	if code, _, stderr := runCLI(t, "publish", "--repo", repoDir, "--key", key, good); code != 0 {
		t.Fatalf("publish of the truthful package: exit %d:\n%s", code, stderr)
	}

	if code, out, stderr := runCLI(t, "inspect", good); code != 0 || strings.Contains(out, "problems:") {
		t.Errorf("inspect of the truthful package: exit %d:\n%s%s", code, out, stderr)
	}
	code, out, stderr := runCLI(t, "inspect", bad)
	if code != exitCheck || !strings.Contains(out, "problems:\n  md5sums: usr/bin/tool: listed on line 1 with md5 ") || !strings.Contains(stderr, "md5sums: usr/bin/tool") {
		t.Errorf("inspect of the lying package: exit %d, want %d and the problem listed:\n%s%s", code, exitCheck, out, stderr)
	}
	code, out, _ = runCLI(t, "inspect", "--json", bad)
	var info struct {
		Problems []struct{ Check, Path, Detail string }
	}
	if err := json.Unmarshal([]byte(out), &info); code != exitCheck || err != nil || len(info.Problems) != 1 || info.Problems[0].Path != "usr/bin/tool" || info.Problems[0].Check != "md5sums" {
		t.Errorf("inspect --json of the lying package: exit %d, %v, problems %+v", code, err, info.Problems)
	}
}

// installedSizeDeb builds a package of a file of 3 MiB whose control file
// says Installed-Size: size.
func installedSizeDeb(t *testing.T, dir, name, size string) string {
	t.Helper()
	return treeDeb(t, dir, name, map[string]string{
		"DEBIAN/control":               "Package: " + name + "\nVersion: 1\nArchitecture: amd64\nMaintainer: T <t@example.com>\nInstalled-Size: " + size + "\nDescription: test\n",
		"usr/share/" + name + "/zeros": strings.Repeat("\x00", 3<<20),
	})
}

// A package whose Installed-Size is far from what its files take (apt
// reports it as the disk space the package uses; nothing checks it) is
// published, with a warning naming it, and inspect lists the warning (in
// --json too) and exits 0; one a few KiB off (another builder's count) gets
// none. Both said nothing of either.
func TestInstalledSizeWarned(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	dir := t.TempDir()
	// 3072 KiB of the file, 1 for each of ./, ./usr/, ./usr/share/ and the
	// package's folder.
	near := installedSizeDeb(t, dir, "near", "3000")
	far := installedSizeDeb(t, dir, "far", "1")
	want := "Installed-Size: the control file says 1 KiB, but the files take 3076 KiB"

	code, _, stderr := runCLI(t, "publish", "--repo", filepath.Join(dir, "repo"), "--key", generateKey(t, dir)+".secret.asc", near, far)
	if code != 0 || !strings.Contains(stderr, want) || !strings.Contains(stderr, far) || strings.Contains(stderr, "3000 KiB") {
		t.Errorf("publish: exit %d, want 0 and one warning %q naming %s:\n%s", code, want, far, stderr)
	}
	if code, out, stderr := runCLI(t, "inspect", near); code != 0 || strings.Contains(out, "warnings:") {
		t.Errorf("inspect of Installed-Size 3000 for 3076 KiB: exit %d:\n%s%s", code, out, stderr)
	}
	if code, out, stderr := runCLI(t, "inspect", far); code != 0 || !strings.Contains(out, "warnings:\n  "+want) {
		t.Errorf("inspect of Installed-Size 1 for 3076 KiB: exit %d, want 0 and %q:\n%s%s", code, want, out, stderr)
	}
	code, out, _ := runCLI(t, "inspect", "--json", far)
	var info struct {
		Warnings []struct{ Check, Detail string }
	}
	if err := json.Unmarshal([]byte(out), &info); code != 0 || err != nil || len(info.Warnings) != 1 || info.Warnings[0].Check != "Installed-Size" {
		t.Errorf("inspect --json: exit %d, %v, warnings %+v", code, err, info.Warnings)
	}
}

// A package whose md5sums leaves a file out (lintian's warning
// file-missing-in-md5sums; nothing false is said of the file, debsums only
// checks it less) is published with a warning naming the file, and inspect
// lists it under warnings and exits 0: refusing it refused packages apt
// installs and other builders make so.
func TestMD5SumsLeftOutWarned(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	dir := t.TempDir()
	sum := md5.Sum([]byte("tool\n"))
	deb := treeDeb(t, dir, "partial", map[string]string{
		"DEBIAN/control":       "Package: partial\nVersion: 1\nArchitecture: amd64\nMaintainer: T <t@example.com>\nDescription: test\n",
		"DEBIAN/md5sums":       hex.EncodeToString(sum[:]) + "  usr/bin/tool\n",
		"usr/bin/tool":         "tool\n",
		"usr/share/partial/ex": "extra\n",
	})
	want := "md5sums: usr/share/partial/ex: shipped, but md5sums does not list it"
	code, _, stderr := runCLI(t, "publish", "--repo", filepath.Join(dir, "repo"), "--key", generateKey(t, dir)+".secret.asc", deb)
	if code != 0 || !strings.Contains(stderr, want) {
		t.Errorf("publish: exit %d, want 0 and a warning %q:\n%s", code, want, stderr)
	}
	if code, out, stderr := runCLI(t, "inspect", deb); code != 0 || !strings.Contains(out, "warnings:\n  "+want) || strings.Contains(out, "problems:") {
		t.Errorf("inspect: exit %d, want 0 and the warning %q:\n%s%s", code, want, out, stderr)
	}
}
