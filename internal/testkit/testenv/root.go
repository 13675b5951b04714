package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// AsRoot runs the shell script with root's rights over files: directly when
// the tests run as root, else in one fakeroot session (chown, chmod u+s,
// dpkg --unpack of packages with other owners, and the stat that checks
// them all see the same faked owners). It fails the test with the output
// when the script fails, and returns the output.
func AsRoot(t testing.TB, script string, env ...string) []byte {
	t.Helper()
	name, args := "sh", []string{"-ec", script}
	if os.Geteuid() != 0 {
		name, args = RequireTool(t, "fakeroot")[0], append([]string{"--", "sh"}, args...)
	}
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("as root: %v\n%s\n--- script:\n%s", err, out, script)
	}
	return out
}

// DpkgRoot makes a throwaway root with an empty dpkg database under a new
// temporary folder and returns it: dpkg --root=ROOT --admindir=ROOT/var/lib/dpkg
// installs into it.
func DpkgRoot(t testing.TB) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "root")
	for _, d := range []string{"info", "updates", "triggers"} {
		if err := os.MkdirAll(filepath.Join(root, "var/lib/dpkg", d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"status", "available"} {
		if err := os.WriteFile(filepath.Join(root, "var/lib/dpkg", f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// BasePasswd gives a throwaway root the account files a Debian root has
// from base-passwd (root, nogroup, nobody) and passwd, so that maintainer
// scripts run chrootless can add a system user to it (useradd --prefix).
func BasePasswd(t testing.TB, root string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"passwd":  "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
		"group":   "root:x:0:\nnogroup:x:65534:\n",
		"shadow":  "root:*::::::\nnobody:*::::::\n",
		"gshadow": "root:*::\nnogroup:*::\n",
	} {
		if err := os.WriteFile(filepath.Join(root, "etc", name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
