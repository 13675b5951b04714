package recipe

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/testkit/testenv"
)

// TestHierarchyTagsAreLintians: for a package holding a path in every place
// lintian's files/hierarchy/standard check looks at, hierarchyTags names
// every error lintian raises there, for each file, symlink and folder
// (the implied parents too), and no other.
func TestHierarchyTagsAreLintians(t *testing.T) {
	tools := testenv.RequireTool(t, "dpkg-deb", "lintian")
	root := filepath.Join(t.TempDir(), "hx")
	for _, p := range []struct{ path, kind string }{
		{"/var/run/x", "file"}, {"/run/x/y", "file"}, {"/tmp/x", "file"}, {"/var/tmp/x", "directory"}, {"/usr/tmp/x", "file"},
		{"/usr/local/bin/x", "file"}, {"/home/x", "file"}, {"/root/x", "symlink"}, {"/srv/x", "file"}, {"/mnt/x", "file"},
		{"/opt/x/bin/y", "symlink"}, {"/etc/opt/x", "file"}, {"/var/www/x", "file"}, {"/var/www", "directory"}, {"/var/lock/x", "file"},
		{"/usr/share/x", "file"}, {"/usr/share/y", "symlink"}, {"/usr/bin/d", "directory"}, {"/usr/bin/X11/x", "file"}, {"/bin/d/x", "file"},
		{"/usr/doc/x", "file"}, {"/usr/libexec/x", "file"}, {"/usr/foo/x", "file"}, {"/var/foo", "directory"}, {"/var/adm/x", "file"},
		{"/var/lib/games/x", "file"}, {"/var/games/x", "file"}, {"/media/x", "file"}, {"/proc", "directory"}, {"/lib64/x", "file"},
		{"/hurd/x", "file"}, {"/usr/bin/x", "file"}, {"/usr/share/doc/hx/x", "file"}, {"/var/lib/hx", "directory"},
		{"/etc/x", "file"}, {"/usr/lib/x", "file"}, {"/sbin/x", "file"}, {"/usr/spool/x", "file"},
	} {
		full := filepath.Join(root, p.path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		switch p.kind {
		case "file":
			err = os.WriteFile(full, []byte("x\n"), 0o644)
		case "symlink":
			err = os.Symlink("/usr/bin/x", full)
		default:
			err = os.MkdirAll(full, 0o755)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	var want []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel := "/" + filepath.ToSlash(strings.TrimPrefix(p, root+"/"))
		kind, item := "file", strings.TrimPrefix(rel, "/")
		switch {
		case d.IsDir():
			kind, item = "directory", item+"/"
		case d.Type()&fs.ModeSymlink != 0:
			kind = "symlink"
		}
		for _, h := range hierarchyTags("hx", rel, kind) {
			if h.where == "" {
				t.Errorf("%s: %s without a place", rel, h.tag)
			}
			want = append(want, h.tag+" ["+item+"]")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "DEBIAN"), 0o755); err != nil {
		t.Fatal(err)
	}
	control := "Package: hx\nVersion: 1\nArchitecture: all\nMaintainer: X <x@example.org>\nDescription: hierarchy\n paths.\n"
	if err := os.WriteFile(filepath.Join(root, "DEBIAN/control"), []byte(control), 0o644); err != nil {
		t.Fatal(err)
	}
	deb := filepath.Join(t.TempDir(), "hx.deb")
	testenv.Run(t, tools[0], "--root-owner-group", "--build", root, deb)
	out, _ := exec.Command(tools[1], "--tag-display-limit", "0", deb).CombinedOutput() // exits 1 on errors
	var got []string
	for _, m := range regexp.MustCompile(`(?m)^E: hx: (\S+) \[(.*)\]$`).FindAllStringSubmatch(string(out), -1) {
		if hierarchyErrors[m[1]] {
			got = append(got, m[1]+" ["+m[2]+"]")
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("hierarchyTags:\n%s\nlintian:\n%s\n(lintian's output:\n%s)", strings.Join(want, "\n"), strings.Join(got, "\n"), out)
	}
}

// hierarchyErrors are the errors of lintian 2.116's files/hierarchy/standard
// check.
var hierarchyErrors = map[string]bool{
	"dir-or-file-in-etc-opt": true, "dir-in-usr-local": true, "file-in-usr-local": true, "file-directly-in-usr-share": true,
	"subdir-in-usr-bin": true, "FSSTND-dir-in-usr": true, "FSSTND-dir-in-var": true, "non-standard-dir-in-var": true,
	"dir-or-file-in-var-lock": true, "dir-or-file-in-var-run": true, "dir-or-file-in-run": true, "dir-or-file-in-var-www": true,
	"dir-or-file-in-opt": true, "dir-or-file-in-home": true, "dir-or-file-in-tmp": true, "dir-or-file-in-mnt": true,
	"subdir-in-bin": true, "dir-or-file-in-srv": true, "non-standard-toplevel-dir": true, "use-of-compat-symlink": true,
}

// TestHierarchyWarnings: lint warns at the dest that lintian's
// files/hierarchy/standard check reports as an error (a file in /var/run,
// which is made anew at every boot, passed lint and build, and failed
// updeb verify), not where the recipe overrides the tag.
func TestHierarchyWarnings(t *testing.T) {
	const at = "      - {file: x.service, dest: /lib/systemd/system/x.service}\n"
	for _, tt := range []struct{ name, add, want string }{
		{"a file in /var/run", "      - {file: x.default, dest: /var/run/x/pid}\n",
			`20:33: dest: /var/run/x/pid is inside /var/run, which is made anew at every boot: lintian reports dir-or-file-in-var-run, an error that updeb verify fails on: install it elsewhere, or add "dir-or-file-in-var-run" to lintian-overrides with a comment saying why it must be there`},
		{"a file in a top-level folder of its own", "      - {file: x.default, dest: /data/x}\n",
			`20:33: dest: /data/x is in /data, which is a top-level folder the FHS does not name: lintian reports non-standard-toplevel-dir, an error that updeb verify fails on: install it elsewhere, or add "non-standard-toplevel-dir" to lintian-overrides with a comment saying why it must be there`},
		{"a folder in /usr/local", "    directories: [/usr/local/lib/x]\n",
			`21:19: directories: /usr/local/lib/x is inside /usr/local, which belongs to the local administrator: lintian reports dir-in-usr-local, an error that updeb verify fails on: install it elsewhere, or add "dir-in-usr-local" to lintian-overrides with a comment saying why it must be there`},
		{"links in /opt, overridden", "    symlinks: [{dest: /opt/x/bin/x, target: /usr/bin/x}]\n    lintian-overrides: [dir-or-file-in-opt]\n", ""},
		// lintian's tag names hold upper case too: the override this
		// warning asks for loads.
		{"a folder in /var/preserve, overridden", "    directories: [/var/preserve/x]\n    lintian-overrides: [FSSTND-dir-in-var]\n", ""},
		{"a file in /usr/share/doc", "      - {file: x.default, dest: /usr/share/doc/xx/README}\n", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			text := strings.Replace(baseRecipe, at, at+tt.add, 1)
			if strings.HasPrefix(tt.add, "    ") && !strings.HasPrefix(tt.add, "      ") {
				text = strings.Replace(baseRecipe, "    systemd-units: [x.service]\n", "    systemd-units: [x.service]\n"+tt.add, 1)
			}
			got := loadWarnings(t, text, nil)
			if strings.Join(got, "\n") != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), tt.want)
			}
		})
	}
}
