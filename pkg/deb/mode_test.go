package deb

import (
	"os"
	"syscall"
	"testing"
)

// A written package is 0644 whatever the umask: it is meant to be served by a
// web server and copied into a repository, not kept private.
func TestPackageModeIgnoresUmask(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	path, _ := writeTemp(t, samplePackage())
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o644 {
		t.Fatalf("%s has mode %v, want 0644", path, st.Mode().Perm())
	}
}
