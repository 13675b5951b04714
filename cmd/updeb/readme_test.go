package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/testkit/testenv"
)

// walkthrough is the document whose runnable blocks TestReadmeWalkthrough runs.
var walkthrough = filepath.Join("..", "..", "docs", "new-recipe.md")

// runnableMarker precedes each shell block of the walk-through the tests run.
const runnableMarker = "<!-- runnable -->\n```sh\n"

// readmeBlocks returns the walk-through's runnable shell blocks
// (docs/new-recipe.md, once README's), in order.
func readmeBlocks(t *testing.T) []string {
	t.Helper()
	doc, err := os.ReadFile(walkthrough)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	for _, part := range strings.Split(string(doc), runnableMarker)[1:] {
		block, _, ok := strings.Cut(part, "\n```\n")
		if !ok {
			t.Fatalf("a runnable block is not closed:\n%.200s", part)
		}
		blocks = append(blocks, block+"\n")
	}
	return blocks
}

// TestReadmeWalkthrough runs docs/new-recipe.md's runnable shell blocks (the "new recipe
// in five minutes" walk-through) as a reader would, one after the other in
// one shell with set -e: in a scratch folder that holds the fixture mirror
// at the path the walk-through names, with the updeb built from this tree first
// on PATH, and no way out (a proxy nothing answers at).
func TestReadmeWalkthrough(t *testing.T) {
	testenv.RequireTool(t, "bash", "go", "dpkg-deb", "lintian")
	blocks := readmeBlocks(t)
	if len(blocks) < 5 {
		t.Fatalf("%s has %d runnable blocks, want the walk-through's 5 at least", walkthrough, len(blocks))
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "updeb"), ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	work := filepath.Join(dir, "repo")
	mirror := filepath.Join(work, "testdata", "demo", "mirror")
	if err := os.MkdirAll(mirror, 0o755); err != nil {
		t.Fatal(err)
	}
	testenv.Run(t, "cp", "-a", filepath.Join("..", "..", "testdata", "demo", "mirror", "github.com"), mirror)
	dead := "http://127.0.0.1:9" // discard port: nothing answers
	script := "set -euo pipefail\n"
	for i, b := range blocks {
		script += "echo '>>> README block " + string(rune('1'+i)) + "'\n" + b
	}
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = work
	// TMPDIR of its own too: the walk-through runs lintian, which leaves
	// a file in TMPDIR on every run.
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "HOME="+dir, "TMPDIR="+tmp, "HTTPS_PROXY="+dead, "HTTP_PROXY="+dead)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's runnable blocks failed: %v\n%s", err, out)
	}
	for _, want := range []string{
		"fef9cb32f68d98a572fd38a4585b47b9fc0d661c0964610cd9983ff0c10eb530  k9s_Linux_amd64.tar.gz", // block 2 shows the checksum file
		"1 recipe(s) checked: 1 ok",
		"1 built, 0 up to date, 0 failed",
		"./usr/bin/k9s",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the walk-through's output lacks %q:\n%s", want, out)
		}
	}
	if m := regexp.MustCompile(`(?m)^[EWIPX]: .*$`).FindAllString(string(out), -1); m != nil {
		t.Errorf("lintian raised tags on the walk-through's package: %q", m)
	}
	if _, err := os.Stat(filepath.Join(work, "k9s-try", "out", "k9s_0.50.16-1_amd64.deb")); err != nil {
		t.Errorf("no package: %v", err)
	}
}
