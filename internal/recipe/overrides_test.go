package recipe

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/testkit/testenv"
)

// TestOverrides: each tag is overridden where lintian raises it, for the
// files it concerns, and nowhere else.
func TestOverrides(t *testing.T) {
	pp := &ResolvedPackage{Name: "tool", Version: "1.0.0-1",
		Files: []ResolvedFile{
			{Source: "s", Dest: "/usr/bin/stripped", Mode: 0o755},
			{Source: "s", Dest: "/usr/bin/unstripped-dynamic", Mode: 0o755},
			{Source: "s", Dest: "/usr/lib/tool/script", Mode: 0o755},
			{Source: "s", Dest: "/usr/sbin/toold-static", Mode: 0o755},
			{Source: "s", Dest: "/usr/share/doc/tool/LICENSE.txt", Mode: 0o644},
			{Source: "s", Dest: "/usr/share/doc/tool/README.md", Mode: 0o644},
			{LocalPath: "/r/tool.service", Dest: "/lib/systemd/system/tool.service", Mode: 0o644},
			{LocalPath: "/r/other.service", Dest: "/lib/systemd/system/other.service", Mode: 0o644},
			{LocalPath: "/r/other", Dest: "/etc/init.d/other", Mode: 0o755},
			{LocalPath: "/r/tool.conf", Dest: "/etc/tool/tool.conf", Mode: 0o644, Conffile: true},
			{LocalPath: "/r/tool.conf", Dest: "/etc/tool/defaults.conf", Mode: 0o644}, // conffile: false
			{LocalPath: "/r/README", Dest: "/etc/tool/README", Mode: 0o644},
			{LocalPath: "/r/tool.1.gz", Dest: "/usr/share/man/man1/unstripped-dynamic.1.gz", Mode: 0o644},
		},
		Symlinks:         []Link{{Dest: "/usr/bin/tool", Target: "stripped"}},
		LintianOverrides: []string{"package-supports-alternative-init-but-no-init.d-script", "dir-or-file-in-opt"},
	}
	facts := map[string]BinaryFacts{
		"/usr/bin/stripped":           {ELF: true, Static: true},
		"/usr/bin/unstripped-dynamic": {ELF: true, Unstripped: true, Unhardened: []string{"hardening-no-bindnow", "hardening-no-pie"}},
		"/usr/lib/tool/script":        {},
		"/usr/sbin/toold-static":      {ELF: true, Static: true, Unstripped: true},
	}
	got := string(pp.Overrides(func(d string) (BinaryFacts, bool) { f, ok := facts[d]; return f, ok }))
	var lines []string
	for _, l := range strings.Split(got, "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	want := []string{
		"tool: statically-linked-binary [usr/bin/stripped]",
		"tool: unstripped-binary-or-object [usr/bin/unstripped-dynamic]",
		"tool: hardening-no-bindnow [usr/bin/unstripped-dynamic]",
		"tool: hardening-no-pie [usr/bin/unstripped-dynamic]",
		"tool: unstripped-binary-or-object [usr/sbin/toold-static]", // *-static: not statically-linked-binary
		"tool: extra-license-file [usr/share/doc/tool/LICENSE.txt]",
		"tool: file-in-etc-not-marked-as-conffile [etc/init.d/other]",
		"tool: file-in-etc-not-marked-as-conffile [etc/tool/defaults.conf]",
		"tool: no-manual-page [usr/bin/stripped]",
		"tool: no-manual-page [usr/bin/tool]",
		"tool: no-manual-page [usr/sbin/toold-static]",
		"tool: package-supports-alternative-init-but-no-init.d-script [lib/systemd/system/tool.service]",
		"tool: initial-upload-closes-no-bugs [usr/share/doc/tool/changelog.Debian.gz:1]",
		"tool: dir-or-file-in-opt", // the recipe's; its duplicate of ours is dropped
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(got, "# "+whyUnstripped+"\n") || !strings.Contains(got, "# "+whyRecipe+"\n") || !strings.Contains(got, "# "+whyHardening+"\n") {
		t.Errorf("justifications missing:\n%s", got)
	}

	// Before any byte is seen: the worst for every executable from a source.
	worst := string(pp.Overrides(nil))
	for _, l := range []string{"unstripped-binary-or-object [usr/lib/tool/script]", "statically-linked-binary [usr/bin/unstripped-dynamic]"} {
		if !strings.Contains(worst, l) {
			t.Errorf("plan-time overrides lack %q:\n%s", l, worst)
		}
	}

	if strings.Contains(worst, "hardening-no-") {
		t.Errorf("plan-time overrides of static binaries name a hardening tag:\n%s", worst)
	}
	// dynamic: true: every hardening tag, none of statically-linked-binary.
	pp.dynamic = true
	worst = string(pp.Overrides(nil))
	for _, tag := range []string{"fortify-functions", "relro", "bindnow", "pie"} {
		if !strings.Contains(worst, "tool: hardening-no-"+tag+" [usr/bin/stripped]\n") {
			t.Errorf("dynamic plan-time overrides lack hardening-no-%s:\n%s", tag, worst)
		}
	}
	if strings.Contains(worst, "statically-linked-binary") {
		t.Errorf("dynamic plan-time overrides name statically-linked-binary:\n%s", worst)
	}
	pp.dynamic = false

	// A later revision, or a local suffix, is no initial upload.
	pp.Version = "1.0.0-1~wmf1"
	if strings.Contains(string(pp.Overrides(nil)), "initial-upload-closes-no-bugs") {
		t.Error("initial-upload-closes-no-bugs overridden for 1.0.0-1~wmf1")
	}
}

// TestOverridesEmptyDirectoriesAndUTF8: a stated directory that holds
// nothing of the package is overridden where lintian's empty-directory
// check looks (not /var, /etc, Perl's folders); a path with characters
// outside ASCII is named with * for each run of them, which matches the
// Latin-1 reading of its UTF-8 bytes that lintian 2.116 reports as well
// as the true name.
func TestOverridesEmptyDirectoriesAndUTF8(t *testing.T) {
	pp := &ResolvedPackage{Name: "tool", Version: "1.0.0-2",
		Files: []ResolvedFile{
			{LocalPath: "/r/c", Dest: "/usr/share/tool/fïle ü.conf", Mode: 0o600},
			{LocalPath: "/r/c", Dest: "/usr/share/tool/full/a", Mode: 0o644},
		},
		Symlinks: []Link{{Dest: "/usr/lib/tool/linked/x", Target: "/etc/x"}},
		Directories: []ResolvedDir{
			{Path: "/usr/lib/tool/plugins", Mode: 0o755},
			{Path: "/usr/lib/tool/linked", Mode: 0o755},
			{Path: "/usr/lib/tool/parent", Mode: 0o755},
			{Path: "/usr/lib/tool/parent/child", Mode: 0o755},
			{Path: "/usr/share/tool/full", Mode: 0o755},
			{Path: "/usr/share/tool/émpty", Mode: 0o755},
			{Path: "/usr/share/perl5", Mode: 0o755},
			{Path: "/var/lib/tool", Mode: 0o755},
			{Path: "/etc/tool", Mode: 0o755},
		},
	}
	var lines []string
	for _, l := range strings.Split(string(pp.Overrides(nil)), "\n") {
		if strings.HasPrefix(l, "tool: ") {
			lines = append(lines, l)
		}
	}
	want := []string{
		"tool: non-standard-file-perm 0600 != 0644 [usr/share/tool/f*le *.conf]",
		"tool: package-contains-empty-directory [usr/lib/tool/plugins/]",
		"tool: package-contains-empty-directory [usr/lib/tool/parent/child/]",
		"tool: package-contains-empty-directory [usr/share/tool/*mpty/]",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

// An override names its file as the glob lintian matches it with: a
// backslash (systemd's \x2d, or two in a row) is escaped, and a name
// outside ASCII is matched by a wildcard. Lintian itself, on a package
// dpkg-deb builds, uses each override and finds none mismatched.
func TestOverridePointersMatchLintian(t *testing.T) {
	tools := testenv.RequireTool(t, "dpkg-deb", "lintian")
	dests := []string{`/usr/share/doc/tool/a\b/LICENSE`, `/usr/share/doc/tool/two\\back/LICENSE`, `/usr/share/doc/tool/x\x2dy/LICENSE`, "/usr/share/doc/tool/ünï/LICENSE", "/usr/share/doc/tool/sp ace/LICENSE"}
	pp := &ResolvedPackage{Name: "tool", Version: "1.0.0-2"}
	for _, d := range dests {
		pp.Files = append(pp.Files, ResolvedFile{Source: "s", Dest: d, Mode: 0o644})
	}
	root := t.TempDir()
	write := func(dest string, content []byte) {
		full := filepath.Join(root, dest)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range dests {
		write(d, []byte("Apache License\n"))
	}
	write(OverridesPath("tool"), pp.Overrides(func(string) (BinaryFacts, bool) { return BinaryFacts{}, true }))
	write("DEBIAN/control", []byte("Package: tool\nVersion: 1.0.0-2\nArchitecture: all\nMaintainer: T <t@example.org>\nDescription: t\n"))
	deb := filepath.Join(t.TempDir(), "tool.deb")
	testenv.Run(t, tools[0], "--root-owner-group", "--build", root, deb)
	cmd := exec.Command(tools[1], "-I", "--show-overrides", "--tag-display-limit", "0", deb)
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
	out, _ := cmd.CombinedOutput()
	if n := strings.Count(string(out), "O: tool: extra-license-file ["); n != len(dests) || strings.Contains(string(out), "-override") {
		t.Errorf("lintian used %d of %d extra-license-file overrides, or found one mismatched or unused:\n%s\noverrides:\n%s", n, len(dests), out, pp.Overrides(nil))
	}
}
