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

// md5sumsDeb builds with dpkg-deb a package of /usr/bin/tool whose
// DEBIAN/md5sums gives it the md5 of content.
func md5sumsDeb(t *testing.T, dir, name, content string) string {
	t.Helper()
	tree := filepath.Join(dir, "tree-"+name)
	sum := md5.Sum([]byte(content))
	for f, b := range map[string]string{
		"DEBIAN/control": "Package: " + name + "\nVersion: 1\nArchitecture: amd64\nMaintainer: T <t@example.com>\nDescription: test\n",
		"DEBIAN/md5sums": hex.EncodeToString(sum[:]) + "  usr/bin/tool\n",
		"usr/bin/tool":   "tool\n",
	} {
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
