package testenv

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// LintianLevel is the level every package the tests build is judged at:
// errors, warnings, info, pedantic and experimental tags alike.
var LintianLevel = []string{"-I", "-E", "--pedantic", "--tag-display-limit", "0"}

var hintRE = regexp.MustCompile(`^([EWIPX]): (\S+?)(?: \S+)?: (\S+)`)

// Lintian runs lintian at LintianLevel on debs and fails the test for every
// tag it raises that allowed does not name (tag -> why it is expected of
// these packages, for the reader). Overridden tags (the packages' own,
// justified overrides) pass. It returns lintian's output.
func Lintian(t testing.TB, allowed map[string]string, debs ...string) string {
	t.Helper()
	return lintianAt(t, LintianLevel, allowed, debs)
}

// LintianExperimental is Lintian with lintian's experimental tags shown too
// (--display-experimental), which Debian's archive does not act on but a
// Debian developer may read.
func LintianExperimental(t testing.TB, allowed map[string]string, debs ...string) string {
	t.Helper()
	return lintianAt(t, append(slices.Clone(LintianLevel), "--display-experimental"), allowed, debs)
}

func lintianAt(t testing.TB, level []string, allowed map[string]string, debs []string) string {
	t.Helper()
	bin := RequireTool(t, "lintian")[0]
	cmd := exec.Command(bin, append(slices.Clone(level), debs...)...)
	// lintian 2.116 leaves an mldbm-elf-* file in TMPDIR on every run.
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil && !strings.Contains(string(out), ": ") {
		t.Fatalf("lintian: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		m := hintRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if _, ok := allowed[m[3]]; !ok {
			t.Errorf("lintian at %s: %s", strings.Join(LintianLevel[:3], " "), line)
		}
	}
	return string(out)
}
