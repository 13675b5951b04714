package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/testkit/testenv"
)

// TestFullDisk: a build whose output folder's disk is full, and a fetch
// whose cache's disk is full, end with exit 3 and a message naming the full
// disk and its folder (no retries, no proxy hint), leaving nothing partial.
func TestFullDisk(t *testing.T) {
	args, _ := demoProject(t)
	disk := testenv.TinyDisk(t, "64k")

	// the output folder: the packages do not fit (the cache does, elsewhere)
	out := filepath.Join(disk, "out")
	code, stdout, stderr := runCLI(t, append(args, "--out", out, "build", "--arch", "amd64", "hello")...)
	if code != exitNetwork || !strings.Contains(stderr, "no space left on device") || !strings.Contains(stderr, "hint: the disk holding "+out) ||
		strings.Contains(stderr, "proxy") {
		t.Errorf("build onto a full disk: exit %d\n%s%s", code, stdout, stderr)
	}
	if left, _ := filepath.Glob(filepath.Join(out, ".updeb-build-*")); len(left) > 0 {
		t.Errorf("staging left behind: %v", left)
	}

	// the cache: the downloads do not fit
	cache := filepath.Join(disk, "cache")
	os.RemoveAll(out)
	fetchArgs := append(append([]string{}, args...), "--cache", cache, "fetch", "hello", "--arch", "amd64")
	code, stdout, stderr = runCLI(t, fetchArgs...)
	if code != exitNetwork || !strings.Contains(stderr, "the disk holding "+cache+" is full") || strings.Contains(stderr, "check the proxy") ||
		strings.Contains(stderr, "attempts") {
		t.Errorf("fetch into a full cache: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestKeysGenerateFullDisk: keys generate whose disk fills after the secret
// key is written (no inode left for the public key) exits 3 and leaves no
// key file: a secret key without its public halves would make the next
// try refuse ("already exists") until someone deletes it by hand.
func TestKeysGenerateFullDisk(t *testing.T) {
	disk := testenv.TinyDisk(t, "64k,nr_inodes=2") // the root and one file
	prefix := filepath.Join(disk, "repo")
	code, stdout, stderr := runCLI(t, "keys", "generate", "--name", "Test", "--email", "t@example.com", "--out", prefix)
	if code != exitNetwork || !strings.Contains(stderr, "no space left on device") {
		t.Errorf("keys generate onto a full disk: exit %d\n%s%s", code, stdout, stderr)
	}
	if left, _ := filepath.Glob(prefix + "*"); len(left) > 0 {
		t.Errorf("key files left behind: %v", left)
	}
}
