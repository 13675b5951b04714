package recipe

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/testkit/testenv"
)

// unitProblems are loadProblems' findings and warnings ("warning: ...").
func unitProblems(t *testing.T, text string, files map[string]string) []string {
	t.Helper()
	findings, warnings := loadProblems(t, text, files)
	for _, w := range warnings {
		line, message, _ := strings.Cut(w, ": ")
		findings = append(findings, line+": warning: "+message)
	}
	return findings
}

// The unit of baseRecipe's package (writeProject's x.service), with a
// line changed.
const goodUnit = "[Unit]\nDescription=x\n\n[Service]\nUser=root\nExecStart=/usr/bin/x --flag\n\n[Install]\nWantedBy=multi-user.target\n"

// TestUnitContents: a unit whose start fails on every node (a command or
// account that is not there, no ExecStart=, a line or section systemd
// drops) is a finding at the recipe's file: line naming the unit's line; a
// unit that may be right elsewhere (a command or file another package
// brings, a key of a newer systemd) or that systemctl enable cannot
// enable, a warning. systemd-analyze verify, in a root with the recipe's
// files and the host's commands, is the referee: whatever it says about
// a unit, lint has a finding or warning for.
func TestUnitContents(t *testing.T) {
	testenv.RequireTool(t, "systemd-analyze")
	const at = "19:16: "
	for _, tt := range []struct {
		name, old, new string
		recipe         [2]string // an edit of baseRecipe
		want           string    // "" for none
	}{
		{"a clean unit", "", "", [2]string{}, ""},
		{"a command of every Debian system", "/usr/bin/x --flag", "/bin/sh -c 'exec /usr/bin/x'", [2]string{}, ""},
		{"a bare name of a command of the package", "/usr/bin/x --flag", "x --flag", [2]string{}, ""},
		{"a bare name of a command of every Debian system", "/usr/bin/x --flag", "sh -c x", [2]string{}, ""},
		{"a bare name of nothing", "/usr/bin/x --flag", "xd --flag", [2]string{}, at + "file: x.service line 6: ExecStart=xd is installed by no package of the recipe"},
		{"a missing command whose failure is ignored", "ExecStart=", "ExecStartPre=-/usr/local/bin/y\nExecStart=", [2]string{}, ""},
		{"the system user", "User=root", "User=xx\nGroup=xx", [2]string{"    systemd-units:", "    system-user: {name: xx}\n    systemd-units:"}, ""},
		{"a base-passwd account", "User=root", "User=www-data\nGroup=nogroup", [2]string{}, ""},
		{"a dynamic user", "User=root", "DynamicUser=yes\nUser=anything", [2]string{}, ""},
		{"an environment file the package installs", "ExecStart=", "EnvironmentFile=/etc/default/%p\nExecStart=", [2]string{"      - {file: x.service,", "      - {file: x.default, dest: /etc/default/x}\n      - {file: x.service,"}, ""},
		{"an optional environment file", "ExecStart=", "EnvironmentFile=-/etc/default/x\nExecStart=", [2]string{}, ""},
		{"a section of one's own", "[Install]", "[X-Mine]\nKey=1\n\n[Install]", [2]string{}, ""},

		{"a command in /usr/local", "/usr/bin/x --flag", "/usr/local/bin/x --flag", [2]string{}, at + "file: x.service line 6: ExecStart=/usr/local/bin/x names a command the recipe installs as /usr/bin/x"},
		{"a command the recipe installs elsewhere", "/usr/bin/x --flag", "/usr/sbin/x", [2]string{}, at + "file: x.service line 6: ExecStart=/usr/sbin/x names a command the recipe installs as /usr/bin/x"},
		{"a typo", "/usr/bin/x --flag", "/usr/bin/xd", [2]string{}, at + "file: x.service line 6: ExecStart=/usr/bin/xd is installed by no package of the recipe, nor by any package of every Debian system, and package xx depends on no other"},
		{"a command under /usr/local", "ExecStart=", "ExecStartPost=/usr/local/sbin/notify\nExecStart=", [2]string{}, at + "file: x.service line 6: ExecStartPost=/usr/local/sbin/notify is under /usr/local"},
		{"a command of a package it depends on", "/usr/bin/x --flag", "/usr/bin/y", [2]string{"    systemd-units: [x.service]\n", "    depends: [xy]\n    systemd-units: [x.service]\n  - {name: xy, summary: Y tool, description: The Y tool., section: admin, files: [{source: bin, path: x, dest: /usr/bin/y}]}\n"}, ""},
		{"a command of a package it depends on, written tight", "/usr/bin/x --flag", "/usr/bin/y", [2]string{"    systemd-units: [x.service]\n", "    depends: [\"xy(>= 1)\"]\n    systemd-units: [x.service]\n  - {name: xy, summary: Y tool, description: The Y tool., section: admin, files: [{source: bin, path: x, dest: /usr/bin/y}]}\n"}, ""},
		{"a command of a package it only recommends", "/usr/bin/x --flag", "/usr/bin/y", [2]string{"    systemd-units: [x.service]\n", "    recommends: [xy]\n    systemd-units: [x.service]\n  - {name: xy, summary: Y tool, description: The Y tool., section: admin, files: [{source: bin, path: x, dest: /usr/bin/y}]}\n"}, at + "file: x.service line 6: ExecStart=/usr/bin/y is installed by package xy, which package xx does not depend on"},
		{"a command another package may bring", "/usr/bin/x --flag", "/usr/sbin/nginx", [2]string{"    systemd-units:", "    depends: [nginx]\n    systemd-units:"}, at + "warning: file: x.service line 6: ExecStart=/usr/sbin/nginx is installed by no package of the recipe"},
		{"unbalanced quoting", "--flag", "\"--flag", [2]string{}, at + "file: x.service line 6: ExecStart=: unbalanced quoting"},
		{"no ExecStart", "ExecStart=/usr/bin/x --flag\n", "", [2]string{}, at + "file: x.service: service x.service has no ExecStart="},
		{"two ExecStart", "ExecStart=/usr/bin/x --flag\n", "ExecStart=/usr/bin/x\nExecStart=/usr/bin/x\n", [2]string{}, at + "file: x.service line 7: a second ExecStart="},
		{"an unknown account", "User=root", "User=kube", [2]string{}, at + "file: x.service line 5: User=kube is no account of base-passwd"},
		{"an unknown group", "User=root", "Group=docker", [2]string{}, at + "file: x.service line 5: Group=docker is no account of base-passwd"},
		{"a line without =", "Description=x", "Description x", [2]string{}, at + "file: x.service line 2: \"Description x\" has no \"=\""},
		{"an assignment before any section", "[Unit]\n", "Description=y\n[Unit]\n", [2]string{}, at + "file: x.service line 1: \"Description\" is before the first section"},
		{"a misspelt section", "[Service]", "[Servce]\nUser=root\n[Service]", [2]string{}, at + "file: x.service line 4: unknown section [Servce] in a .service unit"},
		{"a misspelt key", "User=root", "Usr=root", [2]string{}, at + "warning: file: x.service line 5: unknown key Usr= in [Service]"},
		{"a missing environment file", "ExecStart=", "EnvironmentFile=/etc/x/env\nExecStart=", [2]string{}, at + "warning: file: x.service line 6: EnvironmentFile=/etc/x/env is installed by no package of the recipe"},
		{"no [Install]", "\n[Install]\nWantedBy=multi-user.target\n", "", [2]string{}, at + "warning: file: x.service: x.service has no [Install] section"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			unit := goodUnit
			if tt.old != "" {
				if !strings.Contains(unit, tt.old) {
					t.Fatalf("%q is not in the unit", tt.old)
				}
				unit = strings.Replace(unit, tt.old, tt.new, 1)
			}
			text := baseRecipe
			if tt.recipe[0] != "" {
				text = strings.Replace(text, tt.recipe[0], tt.recipe[1], 1)
			}
			// Nothing but the unit's line: a finding elsewhere would hide
			// those of what the recipe does not install (checkUnits).
			about := unitProblems(t, text, map[string]string{"x.service": unit, "x.default": "DAEMON_ARGS=\n"})
			switch {
			case tt.want == "" && len(about) > 0:
				t.Errorf("findings about a good unit:\n%s", strings.Join(about, "\n"))
			case tt.want != "" && (len(about) != 1 || !strings.HasPrefix(about[0], tt.want)):
				t.Errorf("findings:\n%s\nwant one:\n%s...", strings.Join(about, "\n"), tt.want)
			}
			if out := verifyUnit(t, "x.service", unit, []string{"/usr/bin/x", "/usr/bin/y"}); out != "" && len(about) == 0 {
				t.Errorf("systemd-analyze verify says what lint does not:\n%s", out)
			}
		})
	}
}

// TestUnitNotAUnit: a file that is no unit (a script named x.service) is
// one finding that says so and the first few of its lines, not one a line.
func TestUnitNotAUnit(t *testing.T) {
	got := unitProblems(t, baseRecipe, map[string]string{"x.service": strings.Repeat("echo hello world\n", 5000)})
	// The summary, the first lines, and the service's missing ExecStart=.
	if len(got) != maxUnitProblems+2 || !strings.HasPrefix(got[0], "19:16: file: x.service: 5000 lines systemd would ignore or refuse, the first at line 1: is it a unit file?") {
		t.Errorf("%d findings, the first %q; want %d, the first saying it is no unit", len(got), got[0], maxUnitProblems+2)
	}
}

// verifyUnit runs systemd-analyze verify on unit (named name) in a root
// with the host's units and commands, and stubs of the paths the recipe
// installs, and returns what it says ("" for nothing).
func verifyUnit(t *testing.T, name, unit string, installed []string) string {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "usr/lib/systemd"), 0o755); err != nil {
		t.Fatal(err)
	}
	testenv.Run(t, "cp", "-a", "/usr/lib/systemd/system", filepath.Join(root, "usr/lib/systemd/"))
	writeFile(t, root, "etc/systemd/system/"+name, unit)
	for _, l := range strings.Split(unit, "\n") {
		k, v, _ := strings.Cut(l, "=")
		if !strings.HasPrefix(k, "Exec") {
			continue
		}
		cmd, _, _ := strings.Cut(strings.TrimLeft(v, "-@:+!"), " ")
		if found, err := exec.LookPath(cmd); err == nil && !strings.HasPrefix(cmd, "/") {
			cmd = found // a bare name the host has: in the root where systemd searches it
		} else if !strings.HasPrefix(cmd, "/") {
			cmd = "/usr/bin/" + cmd
		}
		if _, err := os.Stat(cmd); slices.Contains(installed, cmd) || (err == nil && strings.HasPrefix(cmd, "/")) {
			writeFile(t, root, cmd, "#!/bin/sh\n")
			if err := os.Chmod(filepath.Join(root, cmd), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	out, err := exec.Command("systemd-analyze", "verify", "--man=no", "--root="+root, name).CombinedOutput()
	if err != nil && len(out) == 0 {
		t.Fatalf("systemd-analyze verify: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// TestUnitPlaces: a unit where systemd never reads it, or where a package
// must not put one, is a finding at its dest; /lib/systemd/system and
// /usr/lib/systemd/system are one folder to systemd 252 and to lintian,
// and drop-ins and the links that enable a unit stay allowed. A symlink
// that is a unit (an alias, a mask) is held to the same places.
func TestUnitPlaces(t *testing.T) {
	const file, link = "19:33: dest: ", "20:23: symlink dest: "
	for _, tt := range []struct {
		dest string
		link bool
		want string
	}{
		{"/usr/lib/systemd/system/x.service", false, ""},
		{"/lib/systemd/system/x.service.d/10-limits.conf", false, ""},
		{"/lib/systemd/system/service.d/10-all.conf", false, ""},
		{"/etc/systemd/system/x.service", false, file + "/etc/systemd/system/x.service: /etc/systemd/system is the administrator's folder"},
		{"/usr/local/lib/systemd/system/x.service", false, file + "/usr/local/lib/systemd/system/x.service: /usr/local/lib/systemd/system is under /usr/local"},
		{"/lib/systemd/system/x.servce", false, file + "/lib/systemd/system/x.servce: systemd reads only units here"},
		{"/lib/systemd/system/x/x.service", false, file + "/lib/systemd/system/x/x.service: systemd reads no subfolder"},
		{"/lib/systemd/system/x.service.d/10-limits", false, file + "/lib/systemd/system/x.service.d/10-limits: systemd reads only drop-ins named *.conf"},
		{"/lib/systemd/system/x-alias.service", true, ""},
		{"/lib/systemd/system/multi-user.target.wants/x.service", true, ""},
		{"/etc/systemd/system/x-alias.service", true, link + "/etc/systemd/system/x-alias.service: /etc/systemd/system is the administrator's folder"},
		{"/usr/local/lib/systemd/system/x-alias.service", true, link + "/usr/local/lib/systemd/system/x-alias.service: /usr/local/lib/systemd/system is under /usr/local"},
		{"/lib/systemd/system/x/x-alias.service", true, link + "/lib/systemd/system/x/x-alias.service: systemd reads no subfolder"},
	} {
		t.Run(tt.dest, func(t *testing.T) {
			text := strings.Replace(baseRecipe, "dest: /lib/systemd/system/x.service}", "dest: "+tt.dest+"}", 1)
			text = strings.Replace(text, "    systemd-units: [x.service]\n", "", 1)
			if tt.link {
				text = strings.Replace(baseRecipe, "    systemd-units:", "    symlinks: [{dest: "+tt.dest+", target: /lib/systemd/system/x.service}]\n    systemd-units:", 1)
			}
			about := unitProblems(t, text, nil)
			switch {
			case tt.want == "" && len(about) > 0:
				t.Errorf("findings about a good place:\n%s", strings.Join(about, "\n"))
			case tt.want != "" && (len(about) != 1 || !strings.HasPrefix(about[0], tt.want)):
				t.Errorf("findings:\n%s\nwant one:\n%s...", strings.Join(about, "\n"), tt.want)
			}
		})
	}
}

// TestBaseCommandsAreDebians: basecommands.txt is what dpkg -L says the
// base packages install in the folders of commands, on this Debian 12:
// a command of theirs it lacks, or one it names that is here but theirs
// no more, fails.
func TestBaseCommandsAreDebians(t *testing.T) {
	testenv.RequireTool(t, "dpkg")
	want := map[string]bool{}
	for name := range basePackages {
		out, err := exec.Command("dpkg", "-L", name).Output()
		if err != nil {
			continue // init, a package of no files some systems lack
		}
		for _, p := range strings.Split(string(out), "\n") {
			if dir := filepath.Dir(p); slices.Contains([]string{"/bin", "/sbin", "/usr/bin", "/usr/sbin"}, dir) {
				want[usrMerged(p)] = true
			}
		}
	}
	for p := range want {
		if !baseCommands[p] {
			t.Errorf("%s is a command of a base package, missing from basecommands.txt", p)
		}
	}
	for p := range baseCommands {
		// One not here is of a base package this system lacks (init,
		// systemd-sysv in a container): dpkg -L cannot say.
		if _, err := os.Lstat(p); err == nil && !want[p] {
			t.Errorf("basecommands.txt names %s, which no base package installs", p)
		}
	}
	if len(want) < 300 {
		t.Errorf("the base packages here install %d commands: not a Debian 12 system?", len(want))
	}
}
