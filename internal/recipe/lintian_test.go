package recipe

import (
	"crypto/md5"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/testkit/testenv"
)

// TestPlanPassesLintian materialises the fixture's plan as a folder tree,
// builds it with dpkg-deb (the referee, not updeb's own writer, which lives in
// pkg/deb) and runs lintian at -I -E --pedantic on it: the generated copyright,
// changelog, overrides, maintainer scripts, conffiles and control fields must
// be what lintian accepts. Upstream binaries are stand-in shell scripts.
func TestPlanPassesLintian(t *testing.T) {
	tools := testenv.RequireTool(t, "dpkg-deb", "lintian")
	r := loadFixture(t)
	p, err := r.Resolve("amd64", fixtureOpts)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	var debs []string
	for _, pkg := range p.Packages {
		root := filepath.Join(t.TempDir(), pkg.Name)
		var md5sums strings.Builder
		size := int64(0)
		write := func(dest string, content []byte, mode os.FileMode) {
			full := filepath.Join(root, dest)
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, content, mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(full, mode); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(dest, "/DEBIAN/") {
				fmt.Fprintf(&md5sums, "%x  %s\n", md5.Sum(content), strings.TrimPrefix(dest, "/"))
				size += (int64(len(content)) + 1023) / 1024
			}
		}
		for _, f := range pkg.Files {
			content := []byte("#!/bin/sh\necho hello\n")
			if f.LocalPath != "" {
				if content, err = os.ReadFile(f.LocalPath); err != nil {
					t.Fatal(err)
				}
			}
			write(f.Dest, content, f.Mode)
		}
		for _, g := range pkg.GeneratedFiles {
			if g.Dest == OverridesPath(pkg.Name) {
				// What a build writes once it has seen the stand-ins'
				// bytes: shell scripts, no ELF binary.
				g.Content = pkg.Overrides(func(string) (BinaryFacts, bool) { return BinaryFacts{}, true })
			}
			write(g.Dest, g.Content, g.Mode)
		}
		for _, d := range pkg.Directories {
			if err := os.MkdirAll(filepath.Join(root, d.Path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(filepath.Join(root, d.Path), d.Mode); err != nil {
				t.Fatal(err)
			}
		}
		for _, l := range pkg.Symlinks {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(root, l.Dest)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(l.Target, filepath.Join(root, l.Dest)); err != nil {
				t.Fatal(err)
			}
		}
		write("/DEBIAN/md5sums", []byte(md5sums.String()), 0o644)
		c := pkg.Control(size + 10)
		write("/DEBIAN/control", c.Bytes(), 0o644)
		if len(pkg.Conffiles) > 0 {
			write("/DEBIAN/conffiles", []byte(strings.Join(pkg.Conffiles, "\n")+"\n"), 0o644)
		}
		scripts, err := r.MaintainerScripts(&pkg)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range scripts {
			write("/DEBIAN/"+s.Name, []byte(s.Content), 0o755)
		}
		deb := filepath.Join(out, pkg.OutputFile)
		testenv.Run(t, tools[0], "--root-owner-group", "--build", root, deb)
		debs = append(debs, deb)
	}
	testenv.Lintian(t, map[string]string{
		"package-contains-no-arch-dependent-files": "the stand-ins for upstream binaries are shell scripts",
	}, debs...)
}
