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
	run, sudo := mounter(t, "mounting a tmpfs")
	dir := filepath.Join(t.TempDir(), "disk")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	opts := "size=" + size
	if sudo {
		opts += fmt.Sprintf(",uid=%d,gid=%d", os.Getuid(), os.Getgid())
	}
	if out, err := run("mount", "-t", "tmpfs", "-o", opts, "tmpfs", dir); err != nil {
		t.Fatalf("mount a tmpfs: %v\n%s", err, out)
	}
	t.Cleanup(func() { run("umount", "-l", dir) })
	return dir
}

// BindMount mounts the folder src again at the folder dst (mount --bind):
// one file system, whose files rename(2) still cannot move between the two
// mounts (EXDEV). It needs what TinyDisk needs.
func BindMount(t testing.TB, src, dst string) {
	t.Helper()
	run, _ := mounter(t, "a bind mount")
	if out, err := run("mount", "--bind", src, dst); err != nil {
		t.Fatalf("mount --bind %s %s: %v\n%s", src, dst, err, out)
	}
	t.Cleanup(func() { run("umount", "-l", dst) })
}

// ReadOnlyBindMount is BindMount, read-only at dst: every write there
// fails with EROFS, as on a read-only file system.
func ReadOnlyBindMount(t testing.TB, src, dst string) {
	t.Helper()
	BindMount(t, src, dst)
	run, _ := mounter(t, "a bind mount")
	if out, err := run("mount", "-o", "remount,bind,ro", dst); err != nil {
		t.Fatalf("mount -o remount,bind,ro %s: %v\n%s", dst, err, out)
	}
}

// mounter returns what runs mount and umount: as root, themselves;
// otherwise through sudo without a password (sudo true), as .ci/run
// installs with it when it does not run as root. Without either, what
// (the test's mount) is skipped outside CI and fails in CI.
func mounter(t testing.TB, what string) (run func(args ...string) ([]byte, error), sudo bool) {
	t.Helper()
	RequireTool(t, "mount", "umount")
	var pre []string
	if os.Getuid() != 0 {
		if err := exec.Command("sudo", "-n", "true").Run(); err != nil {
			if InCI() {
				t.Fatalf("%s needs root or sudo without a password: %v", what, err)
			}
			t.Skip(what + " needs root or sudo without a password")
		}
		pre = []string{"sudo", "-n"}
	}
	return func(args ...string) ([]byte, error) {
		args = append(pre, args...)
		return exec.Command(args[0], args[1:]...).CombinedOutput()
	}, len(pre) > 0
}

// InMountNamespace runs the shell script as root in a mount namespace of
// its own (unshare --mount, private), where it may bind throwaway folders
// over the running system's (/etc, /var/lib, /var/log) and run what runs
// only on a running system (a postinst's adduser) without changing the
// host. It fails the test with the output when the script fails, and
// returns the output. It needs what TinyDisk needs, and unshare.
func InMountNamespace(t testing.TB, script string, env ...string) []byte {
	t.Helper()
	run, _ := mounter(t, "a mount namespace")
	RequireTool(t, "unshare")
	out, err := run(append(append([]string{"unshare", "--mount", "--propagation", "private", "env"}, env...), "sh", "-ec", script)...)
	if err != nil {
		t.Fatalf("in a mount namespace: %v\n%s\n--- script:\n%s", err, out, script)
	}
	return out
}
