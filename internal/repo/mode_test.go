package repo

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Everything a client fetches is world-readable whatever the publisher's
// umask: the public key at the root, the pool, and every index file.
func TestPublishedFilesAreWorldReadable(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "repo")
	pkg := pkgOf(t, testDeb(t, dir, "app", "1.0-1", "amd64", "v1")) // dpkg-deb needs a normal umask
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	_, err := testRepo(t, root).Publish(context.Background(), "s", "main", []Package{pkg})
	must(t, err)
	err = filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil || !fi.Mode().IsRegular() || filepath.Base(p) == ".updeb-lock" {
			return err
		}
		if fi.Mode().Perm() != 0o644 {
			t.Errorf("%s has mode %v, want 0644", p, fi.Mode().Perm())
		}
		return nil
	})
	must(t, err)
	for _, name := range []string{"archive-keyring.gpg", "archive-keyring.asc", "dists/s/InRelease", "dists/s/main/binary-amd64/Packages.xz"} {
		if _, err := os.Stat(filepath.Join(root, name)); err != nil {
			t.Errorf("missing %s: %v", name, err)
		}
	}
}
