package repo

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/updeb/updeb/internal/testkit/testenv"
)

// Everything a client fetches is world-readable whatever the publisher's
// umask: the public key at the root, the pool, every index file, and the
// folders that lead to them (a web server running as another user must
// enter them).
func TestPublishedFilesAreWorldReadable(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "repo")
	pkg := pkgOf(t, testDeb(t, dir, "app", "1.0-1", "amd64", "v1")) // dpkg-deb needs a normal umask
	pkg2 := pkgOf(t, testDeb(t, dir, "app", "1.1-1", "amd64", "v2"))
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	r := testRepo(t, root)
	_, err := r.Publish(context.Background(), "s", "main", []Package{pkg})
	must(t, err)
	_, err = r.Publish(context.Background(), "s", "main", []Package{pkg2}) // carries the live generation's by-hash files
	must(t, err)
	testenv.WorldReadable(t, root, ".updeb-lock")
	for _, name := range []string{"archive-keyring.gpg", "archive-keyring.asc", "dists/s/InRelease", "dists/s/main/binary-amd64/Packages.xz"} {
		if _, err := os.Stat(filepath.Join(root, name)); err != nil {
			t.Errorf("missing %s: %v", name, err)
		}
	}
}
