package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TinyDisk mounts a tmpfs of size (mount's size=, "512k") at a new folder
// and returns it, for tests of a full disk (ENOSPC). It needs root: outside
// CI a test without it is skipped, in CI (which runs as root) it fails.
func TinyDisk(t testing.TB, size string) string {
	t.Helper()
	if os.Getuid() != 0 {
		if InCI() {
			t.Fatal("TinyDisk mounts a tmpfs and needs root")
		}
		t.Skip("mounting a tmpfs needs root")
	}
	RequireTool(t, "mount", "umount")
	dir := filepath.Join(t.TempDir(), "disk")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount a tmpfs: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}
