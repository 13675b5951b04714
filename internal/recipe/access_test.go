package recipe

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/testkit/testenv"
	"github.com/updeb/updeb/pkg/deb"
)

// accessRecipe has every kind of mode and owner a recipe may ask for, with
// names dpkg takes (a backslash, a space, UTF-8).
const accessRecipe = `name: xx
version: 1.0.0
release-date: 2025-01-02
license: Apache-2.0
copyright: X Authors
architectures: [amd64]
sources:
  - name: bin
    url: https://example.org/x-{{.Arch}}.tar.gz
    sha256: ` + hexA + `
    signature: {none: "test"}
packages:
  - name: xx
    summary: X tool
    description: The X tool.
    section: admin
    system-user: {name: xuser, home: /var/lib/x}
    files:
      - {source: bin, path: 'bin/x\x2dtool', dest: '/usr/bin/x\x2dtool', mode: "4750", owner: root, group: xuser, special-bits: "runs as root for xuser's group only"}
      - {source: bin, path: bin/chage, dest: /usr/bin/chage, mode: "2755", group: shadow, special-bits: "reads /etc/shadow"}
      - {file: x.default, dest: /etc/default/x, mode: "0640", group: shadow}
      - {file: x.default, dest: "/etc/x/read me ünï", mode: "0600", owner: xuser}
      - {file: x.default, dest: /usr/share/x/open, mode: "0666"}
      - {file: x.default, dest: /usr/share/x/mailer, owner: postfix}
    directories:
      - /var/lib/x
      - {path: /var/lib/x/state, mode: "0700", owner: xuser, group: xuser}
      - {path: /var/local/x, mode: "2775", group: staff, special-bits: "files made in it belong to staff"}
      - {path: /var/tmp/x, mode: "1777", special-bits: "a drop folder like /tmp"}
      - {path: /var/x/open, mode: "0777"}
`

// loadAccess loads text as recipes/x.yaml, with these files added to the
// recipe folder, and resolves it for amd64.
func loadAccess(t *testing.T, text string, files map[string]string) (*Recipe, *Resolved) {
	t.Helper()
	dir, file := writeProject(t, text)
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, "recipes/x", name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := Load(file, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.Resolve("amd64", fixtureOpts)
	if err != nil {
		t.Fatal(err)
	}
	return r, p
}

// Modes are the recipe's exactly, special bits with their reason; owners
// are base-passwd's ids by name, the package's own system user id 0 (the
// postinst gives it the paths), any other name id 0 and a warning; a
// world-writable file (or a directory without the sticky bit) a warning.
func TestModesAndOwners(t *testing.T) {
	r, p := loadAccess(t, accessRecipe, nil)
	pp := p.Packages[0]
	files := map[string]ResolvedFile{}
	for _, f := range pp.Files {
		files[f.Dest] = f
	}
	for _, w := range []struct {
		dest    string
		mode    fs.FileMode
		owner   deb.Owner
		special string
	}{
		{`/usr/bin/x\x2dtool`, 0o750 | fs.ModeSetuid, deb.Owner{User: "root", Group: "xuser"}, "runs as root for xuser's group only"},
		{"/usr/bin/chage", 0o755 | fs.ModeSetgid, deb.Owner{Group: "shadow", GID: 42}, "reads /etc/shadow"},
		{"/etc/default/x", 0o640, deb.Owner{Group: "shadow", GID: 42}, ""},
		{"/etc/x/read me ünï", 0o600, deb.Owner{User: "xuser"}, ""},
		{"/usr/share/x/open", 0o666, deb.Owner{}, ""},
		{"/usr/share/x/mailer", 0o644, deb.Owner{User: "postfix"}, ""},
	} {
		f, ok := files[w.dest]
		if !ok || f.Mode != w.mode || f.Owner != w.owner || f.SpecialBits != w.special {
			t.Errorf("%s: %+v, want mode %v owner %+v special-bits %q", w.dest, f, w.mode, w.owner, w.special)
		}
	}
	// The setuid file of the system user's group goes into the package
	// without the bit (dpkg unpacks a first installation's file as root):
	// the postinst sets it after chown. A base-passwd group's keeps it.
	for dest, want := range map[string]fs.FileMode{`/usr/bin/x\x2dtool`: 0o750, "/usr/bin/chage": 0o755 | fs.ModeSetgid} {
		if got := files[dest].PackedMode(); got != want {
			t.Errorf("%s: packed mode %v, want %v", dest, got, want)
		}
	}
	wantDirs := []ResolvedDir{
		{Path: "/var/lib/x", Mode: 0o755},
		{Path: "/var/lib/x/state", Mode: 0o700, Owner: deb.Owner{User: "xuser", Group: "xuser"}},
		{Path: "/var/local/x", Mode: 0o775 | fs.ModeSetgid, Owner: deb.Owner{Group: "staff", GID: 50}, SpecialBits: "files made in it belong to staff"},
		{Path: "/var/tmp/x", Mode: 0o777 | fs.ModeSticky, SpecialBits: "a drop folder like /tmp"},
		{Path: "/var/x/open", Mode: 0o777},
	}
	if len(pp.Directories) != len(wantDirs) {
		t.Fatalf("directories %+v", pp.Directories)
	}
	for i, d := range pp.Directories {
		if d != wantDirs[i] {
			t.Errorf("directory %d: %+v, want %+v", i, d, wantDirs[i])
		}
	}
	var warnings []string
	for _, w := range r.Warnings {
		warnings = append(warnings, w.String())
	}
	want := []string{
		`:22:33: dest: "/etc/x/read me ünï" is a conffile with a space in its name: dpkg takes it, but lintian reads the part before the last space as a conffile flag and reports errors (unknown-conffile-instruction, relative-conffile, missing-conffile, ...), which updeb verify fails on: rename it, or say conffile: false`,
		`:23:58: mode: /usr/share/x/open is world-writable (0666): any local user can change it`,
		`:24:61: owner: "postfix" is neither a Debian base-passwd account nor this package's system-user: dpkg gives the path owner id 0 (root) unless "postfix" exists when the package is unpacked (created by a package this one pre-depends on)`,
		`:28:16: directories: /var/local/x is in /var/local, which is a folder of /var that the FHS does not name: lintian reports non-standard-dir-in-var, an error that updeb verify fails on: install it elsewhere, or add "non-standard-dir-in-var" to lintian-overrides with a comment saying why it must be there`,
		`:29:16: directories: /var/tmp/x is inside a folder for temporary files: lintian reports dir-or-file-in-tmp, an error that updeb verify fails on: install it elsewhere, or add "dir-or-file-in-tmp" to lintian-overrides with a comment saying why it must be there`,
		`:30:16: directories: /var/x/open is in /var/x, which is a folder of /var that the FHS does not name: lintian reports non-standard-dir-in-var, an error that updeb verify fails on: install it elsewhere, or add "non-standard-dir-in-var" to lintian-overrides with a comment saying why it must be there`,
		`:30:35: mode: directory /var/x/open is world-writable (0777) without the sticky bit: any local user can remove or replace what is in it`,
	}
	if len(warnings) != len(want) {
		t.Fatalf("warnings:\n%s\nwant:\n%s", strings.Join(warnings, "\n"), strings.Join(want, "\n"))
	}
	for i := range want {
		if !strings.HasSuffix(warnings[i], want[i]) {
			t.Errorf("warning %d:\n %s\nwant ...%s", i, warnings[i], want[i])
		}
	}

	// The postinst gives the system user its paths once it exists, unless
	// dpkg-statoverride says otherwise or another package has the folder
	// too (dpkg-query -S), and sets a setuid mode again after
	// chown (which clears it).
	scripts, err := r.MaintainerScripts(&pp)
	if err != nil {
		t.Fatal(err)
	}
	postinst := scripts[0].Content
	for _, want := range []string{
		"adduser --system --quiet --group --no-create-home --home /var/lib/x xuser\n\t\t\tfi\n\t\t\tif ! getent group xuser >/dev/null; then\n\t\t\t\taddgroup --system --quiet xuser\n\t\t\tfi\n\t\t\tupdeb_user=xuser updeb_group=xuser\n",
		"\t\tfi\n" +
			"\t\tif ! dpkg-statoverride --list /var/lib/x/state >/dev/null 2>&1; then\n" +
			"\t\t\tupdeb_pkgs=$(dpkg-query -S /var/lib/x/state 2>/dev/null) || updeb_pkgs=\n\t\t\tupdeb_other=\n" +
			"\t\t\tfor updeb_p in $(echo \"${updeb_pkgs%%: /*}\" | tr , ' '); do\n\t\t\t\tcase ${updeb_p%%:*} in xx) ;; *) updeb_other=\"$updeb_other${updeb_other:+, }$updeb_p\" ;; esac\n\t\t\tdone\n" +
			"\t\t\tif [ -n \"$updeb_pkgs\" ] && [ -z \"$updeb_other\" ]; then\n\t\t\t\tchown -h \"$updeb_user:$updeb_group\" \"$DPKG_ROOT\"/var/lib/x/state\n" +
			"\t\t\t\t[ -L \"$DPKG_ROOT\"/var/lib/x/state ] || chmod 0700 \"$DPKG_ROOT\"/var/lib/x/state\n" +
			"\t\t\telse\n\t\t\t\tif [ -n \"$updeb_other\" ]; then\n\t\t\t\t\techo 'xx: /var/lib/x/state is also a folder of '\"$updeb_other\"': left as it is, not given to xuser' >&2\n" +
			"\t\t\t\telse\n\t\t\t\t\techo 'xx: /var/lib/x/state: dpkg-query -S names no package that has it, so updeb cannot tell whether another package shares it: left as it is, not given to xuser; give it with chown if no other package uses it' >&2\n\t\t\t\tfi\n\t\t\tfi\n\t\tfi\n" +
			"\t\tif ! dpkg-statoverride --list '/usr/bin/x\\\\x2dtool' >/dev/null 2>&1; then\n\t\t\tchown -h \"root:$updeb_group\" \"$DPKG_ROOT\"'/usr/bin/x\\x2dtool'\n\t\t\t[ -L \"$DPKG_ROOT\"'/usr/bin/x\\x2dtool' ] || chmod 4750 \"$DPKG_ROOT\"'/usr/bin/x\\x2dtool'\n\t\tfi\n" +
			"\t\tif ! dpkg-statoverride --list '/etc/x/read me ünï' >/dev/null 2>&1; then\n\t\t\tchown -h \"$updeb_user:root\" \"$DPKG_ROOT\"'/etc/x/read me ünï'\n\t\tfi\n",
	} {
		if !strings.Contains(postinst, want) {
			t.Errorf("postinst lacks\n%s\nin\n%s", want, postinst)
		}
	}
	if out, err := exec.Command("sh", "-n", "-c", postinst).CombinedOutput(); err != nil {
		t.Errorf("sh -n: %v\n%s", err, out)
	}

	// Where dpkg-query names no package that has the folder (here: an
	// empty dpkg database), the folder is left as it is, and the message
	// says why, not that another package has it.
	testenv.RequireTool(t, "dpkg-query", "dpkg-statoverride")
	start := strings.Index(postinst, "\t\tif ! dpkg-statoverride --list /var/lib/x/state ")
	end := strings.Index(postinst[start:], "\t\t\tfi\n\t\tfi\n")
	admin := t.TempDir()
	for _, f := range []string{"status", "statoverride"} {
		if err := os.WriteFile(filepath.Join(admin, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	block := "set -e\nupdeb_user=xuser updeb_group=xuser\n" + postinst[start:start+end] + "\t\t\tfi\n\t\tfi\n"
	cmd := exec.Command("sh", "-c", block)
	cmd.Env = append(os.Environ(), "DPKG_ADMINDIR="+admin, "DPKG_ROOT="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if want := "xx: /var/lib/x/state: dpkg-query -S names no package that has it, so updeb cannot tell whether another package shares it: left as it is, not given to xuser; give it with chown if no other package uses it\n"; err != nil || string(out) != want {
		t.Errorf("the folder's block with an empty dpkg database: %v\n%s\nwant:\n%s", err, out, want)
	}
}

// Fragments merge with updeb's parts in the documented order, or where
// their #UPDEB# line says (indented too); what is not shell text, or
// names the token anywhere but on a line of its own, is refused.
func TestMergeScripts(t *testing.T) {
	text := strings.Replace(accessRecipe, "    directories:\n", `    scripts: {preinst: x.preinst, postinst: x.postinst, prerm: x.prerm, postrm: x.postrm}
    triggers: [interest-noawait /usr/lib/x/plugins, activate-noawait ldconfig]
    directories:
`, 1)
	r, p := loadAccess(t, text, map[string]string{
		"x.preinst":  "echo preinst \"$1\"\n",
		"x.postinst": "echo before\n#UPDEB#\necho after \"$@\"\n",
		"x.prerm":    "echo prerm\n",
		"x.postrm":   "echo postrm",
	})
	fragment := filepath.Join(r.FilesDir, "x.postinst")
	pp := p.Packages[0]
	if strings.Join(pp.Triggers, "|") != "interest-noawait /usr/lib/x/plugins|activate-noawait ldconfig" {
		t.Errorf("triggers %q", pp.Triggers)
	}
	scripts, err := r.MaintainerScripts(&pp)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	var names []string
	for _, s := range scripts {
		got[s.Name] = s.Content
		names = append(names, s.Name)
	}
	if strings.Join(names, " ") != "preinst postinst prerm postrm" {
		t.Fatalf("scripts %v", names)
	}
	if want := "#!/bin/sh\n# preinst for xx, generated by updeb with the recipe's fragment x.preinst.\nset -e\n\n\necho preinst \"$1\"\n\nexit 0\n"; got["preinst"] != want {
		t.Errorf("preinst:\n%s\nwant:\n%s", got["preinst"], want)
	}
	post := got["postinst"]
	if !strings.HasPrefix(post, "#!/bin/sh\n# postinst for xx, generated by updeb with the recipe's fragment x.postinst.\nset -e\n\n\necho before\n# updeb's part:\ncase \"$1\" in\n\tconfigure|abort-upgrade|abort-remove|abort-deconfigure)\n") ||
		!strings.HasSuffix(post, "esac\n# end of updeb's part\necho after \"$@\"\n\nexit 0\n") {
		t.Errorf("postinst with #UPDEB#:\n%s", post)
	}
	if !strings.HasSuffix(got["postrm"], "echo postrm\n\nexit 0\n") || strings.Contains(got["postrm"], "updeb's part") {
		t.Errorf("postrm (no generated part):\n%s", got["postrm"])
	}
	for name, s := range got {
		if out, err := exec.Command("sh", "-n", "-c", s).CombinedOutput(); err != nil {
			t.Errorf("%s: sh -n: %v\n%s", name, err, out)
		}
	}
	// An indented #UPDEB# line (inside a block) is the place too.
	if err := os.WriteFile(fragment, []byte("if [ \"$1\" = configure ]; then\n\t #UPDEB#\t\nfi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	scripts, err = r.MaintainerScripts(&pp)
	if err != nil {
		t.Fatal(err)
	}
	if post := scripts[1].Content; !strings.Contains(post, "\nif [ \"$1\" = configure ]; then\n# updeb's part:\ncase \"$1\" in\n") ||
		!strings.HasSuffix(post, "esac\n# end of updeb's part\nfi\n\nexit 0\n") || strings.Contains(post, "#UPDEB#") {
		t.Errorf("postinst with an indented #UPDEB#:\n%s", post)
	}
	for _, tc := range []struct{ name, content, want string }{
		{"shebang", "#!/bin/bash\necho\n", "starts with a #! line: updeb writes the script's #!/bin/sh and set -e; give only the commands"},
		{"NUL", "echo \x00\n", "contains a NUL byte: a fragment is shell text"},
		{"DOS", "echo a\r\n", "has carriage returns (a file saved with DOS line ends)"},
		{"byte order mark", "\ufeffecho a\n", "holds a byte order mark (U+FEFF, as some editors start a file)"},
		{"two tokens", "#UPDEB#\necho\n  #UPDEB#\n", "has 2 #UPDEB# lines (lines 1, 3); at most one says where updeb's part goes"},
		{"token in a string", "echo ok\necho \"#UPDEB#\"\n", "line 2: #UPDEB# must stand alone on its line (blanks around it allowed)"},
		{"token after a command", "true #UPDEB#\n", "line 1: #UPDEB# must stand alone on its line"},
		{"not UTF-8", "echo \xff\n", "is not UTF-8 text"},
		{"too big", strings.Repeat("#", MaxFragment+1), "262145 bytes, more than the 256 KiB a fragment may have"},
	} {
		if err := os.WriteFile(fragment, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := r.MaintainerScripts(&pp)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "scripts.postinst: "+fragment+": "+tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// FragmentForLint gives the shell checkers the fragment with its #UPDEB#
// line as a command that does nothing, every line at its place.
func TestFragmentForLint(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		line     int
	}{
		{"echo a\n", "echo a\n", 0},
		{"#UPDEB#\n", ":\n", 1},
		{"if true; then\n\t#UPDEB# \nfi", "if true; then\n\t: \nfi", 2},
		{"echo a\necho '#UPDEB#'\n", "echo a\necho '#UPDEB#'\n", 0},
	} {
		got, line := FragmentForLint([]byte(tc.in))
		if string(got) != tc.want || line != tc.line {
			t.Errorf("FragmentForLint(%q) = %q, %d; want %q, %d", tc.in, got, line, tc.want, tc.line)
		}
	}
}

// A package that puts files into a directory another package of the recipe
// states with its own mode and owner carries that directory the same way
// (and its postinst hands it to the system user it shares): dpkg keeps the
// mode of whichever package creates the directory first.
func TestStatedDirectoriesInherited(t *testing.T) {
	text := accessRecipe + `  - name: xx-data
    summary: X data
    description: The X data.
    section: admin
    system-user: {name: xuser, home: /var/lib/x}
    files:
      - {file: x.default, dest: /var/lib/x/state/seed}
      - {file: x.default, dest: /var/local/x/ok}
      - {file: x.default, dest: /var/lib/x/plain}
`
	r, p := loadAccess(t, text, map[string]string{"x.default": "X=1\n"})
	data := p.Packages[1]
	want := []ResolvedDir{
		{Path: "/var/lib/x/state", Mode: 0o700, Owner: deb.Owner{User: "xuser", Group: "xuser"}},
		{Path: "/var/local/x", Mode: 0o775 | fs.ModeSetgid, Owner: deb.Owner{Group: "staff", GID: 50}, SpecialBits: "files made in it belong to staff"},
	}
	if !slices.Equal(data.Directories, want) {
		t.Errorf("xx-data's directories %+v\nwant %+v", data.Directories, want)
	}
	scripts, err := r.MaintainerScripts(&data)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(scripts[0].Content, "\t\t\t\tcase ${updeb_p%%:*} in xx|xx-data) ;; *) updeb_other=\"$updeb_other${updeb_other:+, }$updeb_p\" ;; esac\n\t\t\tdone\n\t\t\tif [ -n \"$updeb_pkgs\" ] && [ -z \"$updeb_other\" ]; then\n\t\t\t\tchown -h \"$updeb_user:$updeb_group\" \"$DPKG_ROOT\"/var/lib/x/state\n") {
		t.Errorf("xx-data's postinst does not hand /var/lib/x/state to xuser:\n%s", scripts[0].Content)
	}
	if o := string(data.Overrides(nil)); !strings.Contains(o, "xx-data: non-standard-dir-perm 0700 != 0755 [var/lib/x/state/]") {
		t.Errorf("xx-data's overrides lack the stated mode:\n%s", o)
	}
	if n := len(p.Packages[0].Directories); n != 5 {
		t.Errorf("xx has %d directories, want its own 5", n)
	}
}

// The postinst gives a folder the recipe states with a mode or owner other
// than 0755 root:root that mode and owner (dpkg leaves a folder that exists
// as it is; TestStatedFolderModeUpgradeEndToEnd runs it), by base-passwd's
// ids; it leaves a folder every system has, and one of an account whose id
// is not known; a package that states no such folder gets no line of it.
func TestStatedFolderLines(t *testing.T) {
	dirs := "    directories:\n      - /var/lib/plain\n      - {path: /var/lib/kube, mode: \"0700\", owner: kube, group: kube}\n      - {path: /var/log, mode: \"0750\", group: adm}\n"
	text := strings.Replace(baseRecipe, "    systemd-units: [x.service]\n", "    systemd-units: [x.service]\n"+dirs, 1)
	_, p := loadAccess(t, text, nil)
	plain := p.Packages[0].Scripts[0].Content
	if strings.Contains(plain, "chown") || strings.Contains(plain, "dpkg-query") {
		t.Errorf("the postinst sets a folder that is 0755 root:root, of an account of unknown id, or every system's:\n%s", plain)
	}
	text = strings.Replace(text, dirs, dirs+"      - {path: /etc/x/pki, mode: \"0700\"}\n      - {path: /var/log/x, mode: \"0750\", owner: www-data, group: adm}\n", 1)
	_, p = loadAccess(t, text, nil)
	got := p.Packages[0].Scripts[0].Content
	for _, want := range []string{
		"\t\t\t\tchown -h \"0:0\" \"$DPKG_ROOT\"/etc/x/pki\n\t\t\t\t[ -L \"$DPKG_ROOT\"/etc/x/pki ] || chmod 0700 \"$DPKG_ROOT\"/etc/x/pki\n",
		"\t\t\t\tchown -h \"33:4\" \"$DPKG_ROOT\"/var/log/x\n\t\t\t\t[ -L \"$DPKG_ROOT\"/var/log/x ] || chmod 0750 \"$DPKG_ROOT\"/var/log/x\n",
		"left as it is, not made www-data:adm 0750",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the postinst lacks %q:\n%s", want, got)
		}
	}
	if strings.Count(got, "chown -h") != 2 {
		t.Errorf("the postinst sets %d folders, want 2:\n%s", strings.Count(got, "chown -h"), got)
	}
}

// On a merged-/usr system /usr/lib/x/y is inside the /lib/x that another
// package states 0700: the package carries the folder so, under its own
// name of it (an implied 0755 parent opened the stated folder when the
// package was installed first).
func TestStatedDirectoriesInheritedMergedUsr(t *testing.T) {
	text := strings.Replace(baseRecipe, "    systemd-units: [x.service]\n", "    systemd-units: [x.service]\n    directories: [{path: /lib/x, mode: \"0700\"}]\n  - name: xy\n    summary: Y tool\n    description: The Y tool.\n    section: admin\n    files: [{file: x.default, dest: /usr/lib/x/y}]\n", 1)
	_, p := loadAccess(t, text, nil)
	if got, want := p.Packages[1].Directories, []ResolvedDir{{Path: "/usr/lib/x", Mode: 0o700}}; !slices.Equal(got, want) {
		t.Errorf("xy's directories %+v, want %+v", got, want)
	}
}

// A special bit Linux ignores where the recipe puts it (setuid on a
// directory, sticky on a file) is kept as stated, with a warning.
func TestIgnoredSpecialBitsWarn(t *testing.T) {
	text := strings.Replace(accessRecipe, "    directories:\n", "    directories:\n      - {path: /var/x/suid, mode: \"4755\", special-bits: \"as stated\"}\n", 1)
	text = strings.Replace(text, "    files:\n", "    files:\n      - {file: x.default, dest: /usr/share/x/sticky, mode: \"1644\", special-bits: \"as stated\"}\n", 1)
	r, p := loadAccess(t, text, nil)
	var warnings []string
	for _, w := range r.Warnings {
		warnings = append(warnings, w.String())
	}
	for _, want := range []string{
		`mode: the sticky bit (1644) does nothing on a file under Linux: leave it out`,
		`mode: the setuid bit (4755) does nothing on a directory under Linux (setgid does: what is made in it takes its group): leave it out`,
	} {
		if !slices.ContainsFunc(warnings, func(w string) bool { return strings.HasSuffix(w, want) }) {
			t.Errorf("no warning %q in\n%s", want, strings.Join(warnings, "\n"))
		}
	}
	if f := p.Packages[0].Files[0]; f.Dest != "/usr/share/x/sticky" || f.Mode != 0o644|fs.ModeSticky {
		t.Errorf("first file %+v, want /usr/share/x/sticky with mode 1644", f)
	}
}

// A setuid file of an owner (a setgid file of a group) that is neither
// base-passwd's nor the system user's is refused at its mode: the package
// carries id 0 for the name, and dpkg, where the name does not exist at
// unpack, installs the file setuid (setgid) root (seen with dpkg --unpack:
// 0:0 4755), while the recipe and the listing show the other account. The
// accessRecipe's setuid root file of xuser's group and setgid shadow file
// stay as they are.
func TestSetIDOfUnknownAccountRefused(t *testing.T) {
	for _, tt := range []struct{ file, want string }{
		{`{file: x.default, dest: /usr/lib/x/helper, mode: "4755", owner: postfix, special-bits: "runs as postfix"}`,
			`:19:58: mode: 4755 makes /usr/lib/x/helper setuid owner "postfix", which is neither a Debian base-passwd account nor this package's system-user: where "postfix" does not exist when dpkg unpacks the package, dpkg gives the file id 0, and it is setuid root: make "postfix" the package's system-user (the postinst then sets the bit once the account exists), use a base-passwd account, or leave the bit out`},
		{`{file: x.default, dest: /usr/lib/x/helper, mode: "2755", group: postdrop, special-bits: "writes the queue"}`,
			`:19:58: mode: 2755 makes /usr/lib/x/helper setgid group "postdrop", which is neither`},
	} {
		text := strings.Replace(accessRecipe, "    files:\n", "    files:\n      - "+tt.file+"\n", 1)
		_, file := writeProject(t, text)
		if _, err := Load(file, LoadOptions{}); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want ...%s", tt.file, err, tt.want)
		}
	}
}

// A stated directory mode with a read bit but not the x bit beside it
// (0644, a file's mode, for a daemon's state folder) is warned about: who
// may read the folder can list it but reach nothing in it, and lintian's
// non-standard-dir-perm, which would say so, is overridden for every mode
// the recipe states. The accessRecipe's folders draw no such warning.
func TestUnsearchableDirectoryWarns(t *testing.T) {
	text := strings.Replace(accessRecipe, "    directories:\n", `    directories:
      - {path: /var/lib/x/a, mode: "0644", owner: xuser, group: xuser}
      - {path: /var/lib/x/b, mode: "0600"}
      - {path: /var/lib/x/c, mode: "2754", group: staff, special-bits: "files made in it belong to staff"}
      - {path: /var/lib/x/d, mode: "0711"}
`, 1)
	r, _ := loadAccess(t, text, nil)
	var got []string
	for _, w := range r.Warnings {
		if s := w.String(); strings.Contains(s, "may list its names") {
			got = append(got, s[strings.Index(s, "x.yaml:"):])
		}
	}
	want := []string{
		`x.yaml:26:36: mode: directory /var/lib/x/a is 0644: who may read it (owner, group, others) may list its names but reach nothing in it, a folder's x bit being the right to enter it: write 0755`,
		`x.yaml:27:36: mode: directory /var/lib/x/b is 0600: who may read it (owner) may list its names but reach nothing in it, a folder's x bit being the right to enter it: write 0700`,
		`x.yaml:28:36: mode: directory /var/lib/x/c is 2754: who may read it (others) may list its names but reach nothing in it, a folder's x bit being the right to enter it: write 2755`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A fragment of comments only makes no script where updeb has no part of
// its own (lintian's maintainer-script-empty), and lint says so; with a
// part of updeb's the script is that part.
func TestCommentOnlyFragment(t *testing.T) {
	text := strings.Replace(accessRecipe, "    directories:\n", "    scripts: {postinst: x.postinst, prerm: x.prerm}\n    directories:\n", 1)
	comments := "# Nothing to do yet.\n\n  #UPDEB#\n"
	r, p := loadAccess(t, text, map[string]string{"x.postinst": comments, "x.prerm": comments})
	pp := p.Packages[0]
	scripts, err := r.MaintainerScripts(&pp)
	if err != nil {
		t.Fatal(err)
	}
	if len(scripts) != 1 || scripts[0].Name != "postinst" || !strings.Contains(scripts[0].Content, "adduser --system") {
		t.Errorf("scripts %+v, want updeb's postinst only", scripts)
	}
	var warnings []string
	for _, w := range r.Warnings {
		warnings = append(warnings, w.String())
	}
	for _, script := range []string{"postinst", "prerm"} {
		want := "scripts." + script + ": x." + script + " holds no commands, only comments and blank lines: leave the fragment out"
		if !slices.ContainsFunc(warnings, func(w string) bool { return strings.Contains(w, want) }) {
			t.Errorf("no warning %q in\n%s", want, strings.Join(warnings, "\n"))
		}
	}
}

// A fragment that calls dpkg-maintscript-helper (the rm_conffile,
// mv_conffile and dir_to_symlink lines updeb verify --base names) makes
// lintian warn maintainer-script-should-not-use-dpkg-maintscript-helper in
// each script: lint says to override it, once for the package; with the
// override, or a mention in a comment only, it says nothing.
func TestMaintscriptHelperFragmentWarns(t *testing.T) {
	const line = "dpkg-maintscript-helper rm_conffile /etc/x/old.conf 1.0.0-1~ -- \"$@\"\n"
	scripts := "    scripts: {preinst: x.preinst, postinst: x.postinst, postrm: x.postrm}\n    directories:\n"
	const want = "scripts.preinst: x.preinst calls dpkg-maintscript-helper (the lines updeb verify --base names for conffiles and symlinked folders), and lintian warns maintainer-script-should-not-use-dpkg-maintscript-helper in each script that does (it wants debhelper's maintscript file, which a package updeb builds has none of): add lintian-overrides: [maintainer-script-should-not-use-dpkg-maintscript-helper] to package xx"
	for _, tt := range []struct {
		name, fields, text string
		warns              int
	}{
		{"calls it", "", line, 1},
		{"overridden", "    lintian-overrides: [maintainer-script-should-not-use-dpkg-maintscript-helper]\n", line, 0},
		{"in a comment", "", "# no dpkg-maintscript-helper here\ntrue\n", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := loadAccess(t, strings.Replace(accessRecipe, "    directories:\n", tt.fields+scripts, 1), map[string]string{"x.preinst": tt.text, "x.postinst": tt.text, "x.postrm": tt.text})
			n := 0
			for _, w := range r.Warnings {
				if strings.Contains(w.Message, "dpkg-maintscript-helper") {
					n++
					if w.Message != want {
						t.Errorf("warning %q, want %q", w.Message, want)
					}
				}
			}
			if n != tt.warns {
				t.Errorf("%d warnings about dpkg-maintscript-helper, want %d: %v", n, tt.warns, r.Warnings)
			}
		})
	}
}

// A fragment that calls systemctl (other than daemon-reload), as lintian's
// maintainer-script-calls-systemctl finds it, fails the script where
// systemd is not running: "System has not been booted with systemd as init
// system (PID 1). Can't operate.", exit 1, in a chroot or image build. Lint
// warns at the first such line; a comment, daemon-reload and
// deb-systemd-invoke pass.
func TestSystemctlFragmentWarns(t *testing.T) {
	scripts := "    scripts: {postinst: x.postinst}\n    directories:\n"
	for _, tt := range []struct {
		name, text, want string
	}{
		{"restart", "true\nsystemctl restart x.service\n", "scripts.postinst: x.postinst line 2 calls systemctl (lintian's maintainer-script-calls-systemctl): where systemd is not running (a chroot, an image build, a container) systemctl fails, and the postinst with it (set -e); start or restart a unit with deb-systemd-invoke (init-system-helpers, essential), which does nothing there, or guard the call with [ -d /run/systemd/system ]"},
		{"after a semicolon", "true; systemctl enable x.service\n", "scripts.postinst: x.postinst line 1 calls systemctl"},
		{"daemon-reload", "systemctl daemon-reload\n", ""},
		{"a comment", "# systemctl restart x.service\ntrue\n", ""},
		{"deb-systemd-invoke", "deb-systemd-invoke restart x.service\n", ""},
		// Guarded by the test the warning advises: systemd is running.
		{"guarded, one line", "if [ \"$1\" = configure ] && [ -d /run/systemd/system ]; then systemctl restart x.service || true; systemctl enable x.service; fi\n", ""},
		{"guarded, an if block", "if [ -d /run/systemd/system ]\nthen\n  true\n  systemctl restart x.service\nfi\n", ""},
		{"guarded, &&", "test -d /run/systemd/system && systemctl restart x.service\n", ""},
		{"after the guarded if", "if [ -d /run/systemd/system ]; then\n  systemctl restart x.service\nfi\nsystemctl enable x.service\n", "scripts.postinst: x.postinst line 4 calls systemctl"},
		{"in its else", "if [ -d /run/systemd/system ]; then\n  true\nelse\n  systemctl enable x.service\nfi\n", "scripts.postinst: x.postinst line 4 calls systemctl"},
		{"in another if", "if [ \"$1\" = configure ]; then\n  systemctl enable x.service\nfi\n", "scripts.postinst: x.postinst line 2 calls systemctl"},
		{"before the guard on its line", "systemctl stop x.service; [ -d /run/systemd/system ] && systemctl start x.service\n", "scripts.postinst: x.postinst line 1 calls systemctl"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := loadAccess(t, strings.Replace(accessRecipe, "    directories:\n", scripts, 1), map[string]string{"x.postinst": tt.text})
			var got []string
			for _, w := range r.Warnings {
				if strings.Contains(w.Message, "systemctl") {
					got = append(got, w.Message)
				}
			}
			if tt.want == "" && len(got) > 0 || tt.want != "" && (len(got) != 1 || !strings.HasPrefix(got[0], tt.want)) {
				t.Errorf("warnings %q, want one starting %q", got, tt.want)
			}
		})
	}
}

// A system user's home that the package states as a directory of root's,
// with nothing of the user's inside it, is a home the user cannot write:
// dpkg makes it before the postinst runs adduser, which leaves an existing
// home as it is. Lint warns; a folder of the user's inside it is a choice.
func TestSystemUserHomeOwnedByRootWarns(t *testing.T) {
	const want = "directories: /var/lib/x is the home of system-user xuser but belongs to root:root, and nothing the package puts in it is xuser's: adduser leaves an existing home as it is, so xuser could not write there; give it owner: xuser, group: xuser and a mode (e.g. 0750)"
	for _, tt := range []struct {
		name, from, to string
		warns          bool
	}{
		{"a folder of the user's inside", "", "", false},
		{"nothing of the user's inside", "      - {path: /var/lib/x/state, mode: \"0700\", owner: xuser, group: xuser}\n", "", true},
		{"the home is the user's", "      - /var/lib/x\n", "      - {path: /var/lib/x, mode: \"0750\", owner: xuser, group: xuser}\n", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := loadAccess(t, strings.Replace(accessRecipe, tt.from, tt.to, 1), nil)
			var warnings []string
			for _, w := range r.Warnings {
				warnings = append(warnings, w.String())
			}
			if got := slices.ContainsFunc(warnings, func(w string) bool { return strings.HasSuffix(w, ":26:9: "+want) }); got != tt.warns {
				t.Errorf("warning %q given: %v, want %v; warnings:\n%s", want, got, tt.warns, strings.Join(warnings, "\n"))
			}
		})
	}
}

// TestDaemonReloadRunningSystemOnly runs the generated postinst and postrm of
// a package with a systemd unit with a systemctl that records its calls:
// daemon-reload on a running systemd, never for another root ($DPKG_ROOT,
// dpkg --root with --force-script-chrootless), as debhelper's snippet.
func TestDaemonReloadRunningSystemOnly(t *testing.T) {
	scripts := maintainerScripts(&ResolvedPackage{Name: "svc"}, Package{SystemdUnits: []string{"svc.service"}}, nil)
	if len(scripts) != 2 || scripts[0].Name != "postinst" || scripts[1].Name != "postrm" {
		t.Fatalf("scripts: %+v", scripts)
	}
	dir := t.TempDir()
	bin, running, calls := filepath.Join(dir, "bin"), filepath.Join(dir, "run-systemd-system"), filepath.Join(dir, "calls")
	for _, d := range []string{bin, running} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(bin, "systemctl"), []byte("#!/bin/sh\necho \"$@\" >>"+calls+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, s := range scripts {
		// The host's /run/systemd/system stands in a folder of the test's.
		if !strings.Contains(s.Content, "/run/systemd/system") {
			t.Fatalf("%s does not look for a running systemd:\n%s", s.Name, s.Content)
		}
		content := strings.ReplaceAll(s.Content, "/run/systemd/system", running)
		arg := map[string]string{"postinst": "configure", "postrm": "remove"}[s.Name]
		for _, root := range []string{"", filepath.Join(dir, "root")} {
			if err := os.RemoveAll(calls); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("sh", "-e", "-c", content, s.Name, arg)
			cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin"}
			if root != "" {
				cmd.Env = append(cmd.Env, "DPKG_ROOT="+root)
			}
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s %s (DPKG_ROOT=%q): %v\n%s", s.Name, arg, root, err, out)
			}
			got, _ := os.ReadFile(calls)
			want := "--system daemon-reload\n"
			if root != "" {
				want = ""
			}
			if string(got) != want {
				t.Errorf("%s %s with DPKG_ROOT=%q: systemctl called with %q, want %q", s.Name, arg, root, got, want)
			}
		}
	}
}

// A fragment's unindented exit that runs before updeb's part of the script
// ends it there: lint warns, since updeb's part (here the postrm's
// daemon-reload) would never run. After the #UPDEB# line, inside a block,
// or in a postinst fragment (which runs after updeb's part), it says nothing.
func TestFragmentExitBeforeUpdebsPart(t *testing.T) {
	text := strings.Replace(baseRecipe, "    systemd-units: [x.service]\n", "    systemd-units: [x.service]\n    scripts: {postrm: x.postrm, postinst: x.postinst}\n", 1)
	for _, tt := range []struct{ postrm, want string }{
		{"echo bye\nexit 0\n", "21:23: scripts.postrm: x.postrm line 2: exit ends the postrm before updeb's part of it (system user, stated folder modes, alternatives, daemon-reload), which then never runs: leave the exit out (updeb ends the script with exit 0)"},
		{"echo bye\nexit\n#UPDEB#\n", "21:23: scripts.postrm: x.postrm line 2: exit ends the postrm before updeb's part of it (system user, stated folder modes, alternatives, daemon-reload), which then never runs: leave the exit out (updeb ends the script with exit 0)"},
		{"#UPDEB#\necho bye\nexit 0\n", ""},
		{"if [ \"$1\" = purge ]; then\n\texit 0\nfi\n", ""},
		{"echo exiting\n", ""},
	} {
		got := loadWarnings(t, text, map[string]string{"x.postrm": tt.postrm, "x.postinst": "echo hi\nexit 0\n"})
		if strings.Join(got, "\n") != tt.want {
			t.Errorf("postrm %q: warnings:\n%s\nwant:\n%s", tt.postrm, strings.Join(got, "\n"), tt.want)
		}
	}
}

// dpkg backs PATH up as PATH.dpkg-tmp while it unpacks, and then removes
// PATH.dpkg-tmp, and all inside it, for every PATH of the package (a
// folder it makes for what is in it too): a recipe that installs both
// loses the .dpkg-tmp one. Within one package the build failed after the
// downloads, naming no recipe line (deb.Write's check); across two
// packages both built, and installing the second deleted the first one's
// file, which dpkg -L still listed (seen with dpkg -i). Lint refuses
// either at the later line, whatever the order.
func TestDpkgTmpPathRefused(t *testing.T) {
	text := strings.Replace(accessRecipe, "    files:\n", "    files:\n      - {file: x.default, dest: /usr/share/x/a.dpkg-tmp}\n", 1) + `  - name: xy
    summary: Y tool
    description: The Y tool.
    section: admin
    files:
      - {file: x.default, dest: /usr/share/x/a}
      - {file: x.default, dest: /usr/share/y/b}
      - {file: x.default, dest: /usr/share/y.dpkg-tmp}
      - {file: x.default, dest: /usr/share/z.dpkg-tmp/c}
      - {file: x.default, dest: /usr/share/z/d}
`
	want := []string{
		"recipes/x.yaml:37:33: dest: /usr/share/x/a.dpkg-tmp (package xx) and /usr/share/x/a: dpkg removes PATH.dpkg-tmp, and all inside it, for each PATH of a package it unpacks (its backup of what PATH replaced), so unpacking the second deletes the first: rename one",
		"recipes/x.yaml:39:33: dest: /usr/share/y.dpkg-tmp and the folder /usr/share/y of /usr/share/y/b (package xy): dpkg removes",
		"recipes/x.yaml:41:33: dest: the folder /usr/share/z.dpkg-tmp of /usr/share/z.dpkg-tmp/c (package xy) and the folder /usr/share/z of /usr/share/z/d (package xy): dpkg removes",
	}
	wantFindings(t, loadFindings(t, text), "dpkg-tmp", want)
}

// wantFindings checks that the findings of got that contain marker start
// with want's, in order.
func wantFindings(t *testing.T, got []string, marker string, want []string) {
	t.Helper()
	var found []string
	for _, f := range got {
		if strings.Contains(f, marker) {
			found = append(found, f)
		}
	}
	if len(found) != len(want) {
		t.Fatalf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(found[i], want[i]) {
			t.Errorf("finding %d:\n %s\nwant %s...", i, found[i], want[i])
		}
	}
}

// dpkg unpacks a new conffile as PATH.dpkg-new, and writes the version it
// does not keep, where the file was changed, to PATH.dpkg-dist or
// PATH.dpkg-old, over what is there. A recipe with a conffile and such a
// path built: a fresh installation (dpkg -i) configured /etc/x/c with the
// bytes of the package's /etc/x/c.dpkg-new, which was gone, and an upgrade
// with --force-confold wrote the new /etc/x/c over the package's own
// /etc/x/c.dpkg-dist. Lint refuses either at the later line, in any
// package of the recipe, a folder of that name too; a file that is not a
// conffile keeps such names free.
func TestConffileVersionPathRefused(t *testing.T) {
	text := strings.Replace(accessRecipe, "    files:\n", `    files:
      - {file: x.default, dest: /etc/x/c}
      - {file: x.default, dest: /etc/x/c.dpkg-new, conffile: false}
      - {file: x.default, dest: /etc/x/d.dpkg-old/e, conffile: false}
      - {file: x.default, dest: /etc/x/f, conffile: false}
      - {file: x.default, dest: /etc/x/f.dpkg-dist, conffile: false}
`, 1) + `  - name: xy
    summary: Y tool
    description: The Y tool.
    section: admin
    files:
      - {file: x.default, dest: /etc/x/d}
    symlinks: [{dest: /etc/x/c.dpkg-dist, target: c}]
`
	want := []string{
		"recipes/x.yaml:20:33: dest: /etc/x/c.dpkg-new and /etc/x/c (package xx), a conffile: dpkg unpacks a new conffile as PATH.dpkg-new, and writes the version it does not keep where the file was changed to PATH.dpkg-dist or PATH.dpkg-old, over what is there (a fresh installation configured the conffile with the bytes of the .dpkg-new entry): rename one",
		"recipes/x.yaml:41:33: dest: the folder /etc/x/d.dpkg-old of /etc/x/d.dpkg-old/e (package xx) and /etc/x/d, a conffile: dpkg unpacks",
		"recipes/x.yaml:42:23: symlink dest: /etc/x/c.dpkg-dist and /etc/x/c (package xx), a conffile: dpkg unpacks",
	}
	wantFindings(t, loadFindings(t, text), "a conffile: dpkg unpacks", want)
}
