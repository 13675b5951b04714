package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TinyDisk mounts a tmpfs of size (mount's size=, "512k") at a new folder
// and returns it, for tests of a full disk (ENOSPC). It needs root, or sudo
// without a password (the tmpfs is then owned by the test's user): outside
// CI a test without either is skipped, in CI it fails.
func TinyDisk(t testing.TB, size string) string {
	t.Helper()
	RequireTool(t, "mount", "umount")
	// As root, mount itself; otherwise through sudo without a password, as
	// .ci/run installs with it when it does not run as root.
	var pre []string
	if os.Getuid() != 0 {
		if err := exec.Command("sudo", "-n", "true").Run(); err != nil {
			if InCI() {
				t.Fatalf("TinyDisk mounts a tmpfs and needs root or sudo without a password: %v", err)
			}
			t.Skip("mounting a tmpfs needs root or sudo without a password")
		}
		pre = []string{"sudo", "-n"}
	}
	run := func(args ...string) ([]byte, error) {
		args = append(pre, args...)
		return exec.Command(args[0], args[1:]...).CombinedOutput()
	}
	dir := filepath.Join(t.TempDir(), "disk")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	opts := "size=" + size
	if len(pre) > 0 {
		opts += fmt.Sprintf(",uid=%d,gid=%d", os.Getuid(), os.Getgid())
	}
	if out, err := run("mount", "-t", "tmpfs", "-o", opts, "tmpfs", dir); err != nil {
		t.Fatalf("mount a tmpfs: %v\n%s", err, out)
	}
	t.Cleanup(func() { run("umount", "-l", dir) })
	return dir
}
