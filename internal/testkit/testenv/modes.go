package testenv

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// WorldReadable fails the test for every folder under root (root included)
// whose mode is not 0755 and every regular file whose mode is not 0644, but
// for those whose base name is in skip: what another user (a web server, a
// service account) must read, whatever the umask it was written under.
func WorldReadable(t testing.TB, root string, skip ...string) {
	t.Helper()
	err := filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		switch {
		case err != nil || slices.Contains(skip, filepath.Base(p)):
			return err
		case fi.IsDir() && fi.Mode().Perm() != 0o755:
			t.Errorf("folder %s has mode %v, want 0755", p, fi.Mode().Perm())
		case fi.Mode().IsRegular() && fi.Mode().Perm() != 0o644:
			t.Errorf("%s has mode %v, want 0644", p, fi.Mode().Perm())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
