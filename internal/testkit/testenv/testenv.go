// Package testenv holds what tests share about their environment: finding the
// real referee tools (dpkg-deb, lintian, gpg, squid, apt-get) and refusing to
// pretend they ran. Outside CI a missing tool skips the test; in CI (CI=true) it
// fails it, so a missing install step in .ci/run cannot hide behind a skip.
package testenv

import (
	"os"
	"os/exec"
	"testing"
)

// InCI reports whether the tests run under CI (CI=true).
func InCI() bool { return os.Getenv("CI") == "true" }

// RequireTool returns the path of each named tool in order. A missing tool fails
// the test in CI and skips it elsewhere, naming the Debian package to install.
func RequireTool(t testing.TB, names ...string) []string {
	t.Helper()
	paths := make([]string, 0, len(names))
	for _, name := range names {
		p, err := exec.LookPath(name)
		if err != nil {
			if InCI() {
				t.Fatalf("referee tool %q is not installed (CI=true: .ci/run must install it)", name)
			}
			t.Skipf("referee tool %q is not installed; install it to run this test", name)
		}
		paths = append(paths, p)
	}
	return paths
}

// Run runs a referee command and fails the test with its output when it fails.
func Run(t testing.TB, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return out
}
