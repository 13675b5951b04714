package pipeline

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/testkit/testenv"
)

// lcClient is one of the co-installable clients of the lc recipe (the
// kubernetes-client135/136 pattern): minor 1.N, registering its command as
// an alternative for /usr/bin/lcctl.
func lcClient(minor string, priority int) string {
	return fmt.Sprintf(`  - name: lcctl1%[1]s
    summary: lc client 1.%[1]s
    description: |
      A test package.
    section: admin
    files:
      - {source: lc, path: bin/lc, dest: /usr/bin/lcctl-1.%[1]s}
    alternatives: [{name: lcctl, link: /usr/bin/lcctl, path: /usr/bin/lcctl-1.%[1]s, priority: %[2]d}]
`, minor, priority)
}

// lcPackages are two clients, 1.0 and 1.1 (which takes the link).
var lcPackages = lcClient("0", 100) + lcClient("1", 110)

// buildLC builds the lc recipe (packages) at upstream version v and returns
// its output folder.
func buildLC(t *testing.T, v, packages string) string {
	t.Helper()
	return buildLCFiles(t, v, packages, nil)
}

// buildLCFiles is buildLC with files in the recipe folder (name ->
// content).
func buildLCFiles(t *testing.T, v, packages string, files map[string]string) string {
	t.Helper()
	return buildLCFor(t, "amd64", v, packages, files)
}

// buildLCFor is buildLCFiles for the architecture arch.
func buildLCFor(t *testing.T, arch, v, packages string, files map[string]string) string {
	t.Helper()
	root, mirror := project(t)
	binRecipe(t, root, mirror, "lc", []byte("#!/bin/sh\necho lc "+v+"\n"), packages, files)
	rp := filepath.Join(root, "recipes", "lc.yaml")
	text, err := os.ReadFile(rp)
	if err != nil {
		t.Fatal(err)
	}
	r := strings.NewReplacer("version: 1.0.0\n", "version: "+v+"\n", "architectures: [amd64]\n", "architectures: ["+arch+"]\n", "sha256: {amd64:", "sha256: {"+arch+":")
	if err := os.WriteFile(rp, []byte(r.Replace(string(text))), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	if _, err := Run(context.Background(), jobs(t, root, arch, "lc"), options(t, mirror, out)); err != nil {
		t.Fatal(err)
	}
	return out
}

// binRecipe writes recipe name (packages) whose one source is a tarball
// holding bin/NAME (content), with files in its recipe folder (name ->
// content).
func binRecipe(t *testing.T, root, mirror, name string, content []byte, packages string, files map[string]string) {
	t.Helper()
	src := t.TempDir()
	if err := os.MkdirAll(filepath.Join(src, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "bin", name), content, 0o755); err != nil {
		t.Fatal(err)
	}
	tarball := filepath.Join(t.TempDir(), name+".tar.gz")
	testenv.Run(t, "tar", "-C", src, "--sort=name", "--owner=0", "--group=0", "-czf", tarball, "bin")
	data, err := os.ReadFile(tarball)
	if err != nil {
		t.Fatal(err)
	}
	tarballRecipe(t, root, mirror, name, data, packages)
	for fn, c := range files {
		p := filepath.Join(root, "recipes", name, fn)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// failingPackage builds a package whose preinst fails, with the given
// relation lines, as dpkg-deb builds it.
func failingPackage(t *testing.T, name, relations string) string {
	t.Helper()
	tree := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(filepath.Join(tree, "DEBIAN"), 0o755); err != nil {
		t.Fatal(err)
	}
	control := "Package: " + name + "\nVersion: 1\nArchitecture: all\nMaintainer: t <t@example.org>\n" + relations + "Description: fails to install\n A test package.\n"
	if err := os.WriteFile(filepath.Join(tree, "DEBIAN/control"), []byte(control), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tree, "DEBIAN/preinst"), []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	deb := filepath.Join(t.TempDir(), name+".deb")
	testenv.Run(t, "dpkg-deb", "--root-owner-group", "--build", tree, deb)
	return deb
}

// TestAlternativesLifecycleEndToEnd installs two co-installable packages
// with alternatives for one link into a throwaway root with real dpkg (its
// update-alternatives works in $DPKG_ROOT) and takes them through their
// life: both installed, upgrade, downgrade, remove one (the other takes the
// link), a conflicting package whose installation fails (dpkg removed the
// conflictor, then calls its postinst abort-remove: the alternative must come
// back), a package that breaks it whose installation fails (prerm
// deconfigure, then postinst abort-deconfigure), purge.
func TestAlternativesLifecycleEndToEnd(t *testing.T) {
	testenv.RequireTool(t, "tar", "dpkg", "dpkg-deb", "update-alternatives")
	v1, v2 := buildLC(t, "1.0.0", lcPackages), buildLC(t, "2.0.0", lcPackages)
	conflicts := failingPackage(t, "lc-conflicts", "Conflicts: lcctl10\nReplaces: lcctl10\n")
	breaks := failingPackage(t, "lc-breaks", "Breaks: lcctl10\n")
	root := testenv.DpkgRoot(t)
	got := testenv.AsRoot(t, `mkdir -p "$ROOT/etc/alternatives" "$ROOT/var/lib/dpkg/alternatives"
`+quietDpkg+`state() {
	printf '%s: ' "$1"
	if [ -L "$ROOT/usr/bin/lcctl" ]; then
		to=$(readlink "$ROOT$(readlink "$ROOT/usr/bin/lcctl")")
		[ -f "$ROOT$to" ] && echo "$to" || echo "$to, missing"
	else
		echo "no link"
	fi
	for p in lcctl10 lcctl11; do dpkg-query --admindir="$ROOT/var/lib/dpkg" -W -f '${Package} ${Version} ${db:Status-Abbrev}|' $p 2>/dev/null || true; done
	echo
}
dpkg -i "$V1/lcctl10_1.0.0-1_amd64.deb" "$V1/lcctl11_1.0.0-1_amd64.deb"; state "both installed"
dpkg -i "$V2/lcctl11_2.0.0-1_amd64.deb"; state "lcctl11 upgraded"
dpkg -i "$V1/lcctl11_1.0.0-1_amd64.deb"; state "lcctl11 downgraded"
dpkg -r lcctl11; state "lcctl11 removed"
dpkg -i "$V2/lcctl11_2.0.0-1_amd64.deb"; dpkg -r lcctl11; state "lcctl11 back and removed"
dpkg -i "$CONFLICTS" && echo "lc-conflicts installed"; state "a conflicting package failed"
dpkg --auto-deconfigure -i "$BREAKS" && echo "lc-breaks installed"; state "a breaking package failed"
dpkg -P lcctl10; state "purged"
ls "$ROOT/var/lib/dpkg/alternatives" "$ROOT/etc/alternatives"
`, "ROOT="+root, "V1="+v1, "V2="+v2, "CONFLICTS="+conflicts, "BREAKS="+breaks, "PATH=/usr/sbin:/usr/bin:/sbin:/bin")
	want := `both installed: /usr/bin/lcctl-1.1
lcctl10 1.0.0-1 ii |lcctl11 1.0.0-1 ii |
lcctl11 upgraded: /usr/bin/lcctl-1.1
lcctl10 1.0.0-1 ii |lcctl11 2.0.0-1 ii |
lcctl11 downgraded: /usr/bin/lcctl-1.1
lcctl10 1.0.0-1 ii |lcctl11 1.0.0-1 ii |
lcctl11 removed: /usr/bin/lcctl-1.0
lcctl10 1.0.0-1 ii |
lcctl11 back and removed: /usr/bin/lcctl-1.0
lcctl10 1.0.0-1 ii |
a conflicting package failed: /usr/bin/lcctl-1.0
lcctl10 1.0.0-1 ii |
a breaking package failed: /usr/bin/lcctl-1.0
lcctl10 1.0.0-1 ii |
purged: no link

` + "/ROOT/etc/alternatives:\n\n/ROOT/var/lib/dpkg/alternatives:\n"
	if got := strings.ReplaceAll(string(got), root, "/ROOT"); got != want {
		t.Errorf("alternatives through the packages' life:\n%s\nwant:\n%s", got, want)
	}
}

// lcDaemon is a package with a system user that owns its data folder.
const lcDaemon = `  - name: lcd
    summary: lc daemon
    description: |
      A test package.
    section: admin
    files:
      - {source: lc, path: bin/lc, dest: /usr/sbin/lcd}
    directories:
      - {path: /var/lib/updeb-lcd, mode: "0750", owner: updebtestlcd, group: updebtestlcd}
    system-user: {name: updebtestlcd, home: /var/lib/updeb-lcd}
`

// TestSystemUserChrootlessEndToEnd installs a package with a system user as
// dpkg --root --force-script-chrootless does for an image or a test root:
// the account goes into the root's /etc/passwd and /etc/group, the folder it
// owns gets the root's ids, the running system gains no user (adduser would
// add it there), reinstalling keeps the account, and a root without
// /etc/passwd fails with a message that says so.
func TestSystemUserChrootlessEndToEnd(t *testing.T) {
	testenv.RequireTool(t, "tar", "dpkg", "dpkg-deb", "useradd", "groupadd", "getent")
	out := buildLC(t, "1.0.0", lcDaemon)
	root, withPasswd := testenv.DpkgRoot(t), testenv.DpkgRoot(t)
	testenv.BasePasswd(t, withPasswd)
	got := testenv.AsRoot(t, `dpkg() { command dpkg --root="$1" --admindir="$1/var/lib/dpkg" --force-script-chrootless --force-not-root --force-depends --log=/dev/null -i "$DEB" 2>&1; }
getent passwd updebtestlcd && echo "the running system has the user before"
if out=$(dpkg "$ROOT"); then echo "installed without etc/passwd"; else echo "$out" | grep updebtestlcd; fi
dpkg "$WITH_PASSWD" >/dev/null
dpkg "$WITH_PASSWD" >/dev/null
getent passwd updebtestlcd && echo "the running system got the user"
cd "$WITH_PASSWD"
grep -c '^updebtestlcd:' etc/passwd etc/group
uid=$(grep '^updebtestlcd:' etc/passwd | cut -d: -f3)
gid=$(grep '^updebtestlcd:' etc/group | cut -d: -f3)
grep -q "^updebtestlcd:x:$uid:$gid::/var/lib/updeb-lcd:/usr/sbin/nologin$" etc/passwd && echo "account: home and shell as adduser gives them"
[ "$(stat -c %u:%g:%a var/lib/updeb-lcd)" = "$uid:$gid:750" ] && echo "folder: the account's, 0750"
true`, "ROOT="+root, "WITH_PASSWD="+withPasswd, "DEB="+filepath.Join(out, "lcd_1.0.0-1_amd64.deb"), "PATH=/usr/sbin:/usr/bin:/sbin:/bin")
	want := strings.ReplaceAll(`lcd: ROOT has no etc/passwd or etc/group (base-passwd) to add the system user updebtestlcd to
etc/passwd:1
etc/group:1
account: home and shell as adduser gives them
folder: the account's, 0750
`, "ROOT", root)
	if string(got) != want {
		t.Errorf("chrootless installation of a system user:\n%s\nwant:\n%s", got, want)
	}
}

// TestSystemUserRunningSystemEndToEnd runs the postinst of a package with a
// system user as dpkg runs it on a node (no $DPKG_ROOT: the real adduser),
// in a mount namespace whose /etc, /var/lib and /var/log are throwaway
// copies. The home the package states (dpkg made it, root's, before the
// postinst runs) becomes the account's, and the postinst writes nothing:
// adduser warned on every first installation that the home "does not
// belong to the user you are currently creating".
func TestSystemUserRunningSystemEndToEnd(t *testing.T) {
	got := lcdPostinstOnRunningSystem(t, `getent passwd updebtestlcd && echo "the system has the user before"
`)
	want := "/var/lib/updeb-lcd updebtestlcd:updebtestlcd 750\nupdebtestlcd:/var/lib/updeb-lcd:/usr/sbin/nologin\n"
	if got != want {
		t.Errorf("the postinst on a running system:\n%s\nwant:\n%s", got, want)
	}
}

// TestSystemUserExistingWithoutGroupEndToEnd runs the postinst of lcd on a
// running system where the account was there before the package (made by
// configuration management, by hand or from a directory service) with
// nogroup as its group and no group of its name: adduser leaves an
// existing account as it is, so the chown to updebtestlcd:updebtestlcd
// failed ("invalid group") and the package stayed half-configured. The
// postinst now adds the group where it is missing, as the chrootless part
// does (groupadd --force).
func TestSystemUserExistingWithoutGroupEndToEnd(t *testing.T) {
	got := lcdPostinstOnRunningSystem(t, `useradd --system --no-create-home --gid nogroup --shell /usr/sbin/nologin updebtestlcd
`)
	want := "/var/lib/updeb-lcd updebtestlcd:updebtestlcd 750\nupdebtestlcd:/home/updebtestlcd:/usr/sbin/nologin\n"
	if got != want {
		t.Errorf("the postinst on a running system whose account has no group of its name:\n%s\nwant:\n%s", got, want)
	}
}

// TestSystemUserShutOutEndToEnd: a folder the recipe states that its
// system user cannot enter (root's 0700 /etc/updeb-lcd) above the folder it
// gives the user (/etc/updeb-lcd/state) shut the daemon out of its own
// folder, and neither lint, dpkg nor lintian said so. Lint now warns at the
// folder exactly where the kernel refuses the user, checked by installing
// the package with real dpkg and trying the folder as the user (setpriv).
func TestSystemUserShutOutEndToEnd(t *testing.T) {
	testenv.RequireTool(t, "tar", "dpkg", "dpkg-deb", "useradd", "groupadd", "dpkg-query", "setpriv")
	for _, tt := range []struct{ name, mode, group string }{
		{"root's 0700", "0700", "root"},
		{"the user's group, 0750", "0750", "updebtestlcd"},
		{"root's 0711", "0711", "root"},
		{"the user's group, 0705", "0705", "updebtestlcd"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fields := "    files:\n      - {source: lc, path: bin/lc, dest: /usr/sbin/lcd}\n    directories:\n      - {path: /etc/updeb-lcd, mode: \"" + tt.mode + "\", group: " + tt.group + "}\n      - {path: /etc/updeb-lcd/state, mode: \"0700\", owner: updebtestlcd, group: updebtestlcd}\n    system-user: {name: updebtestlcd}\n"
			root, _ := project(t)
			binRecipe(t, root, t.TempDir(), "lc", []byte("#!/bin/sh\n"), lcPackage("lcd", fields), nil)
			r, err := recipe.Load(filepath.Join(root, "recipes", "lc.yaml"), recipe.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			warned := slices.ContainsFunc(r.Warnings, func(w recipe.Finding) bool { return strings.Contains(w.String(), "cannot enter") })
			got := string(installedLCD(t, fields, `uid=$(grep '^updebtestlcd:' etc/passwd | cut -d: -f3)
gid=$(grep '^updebtestlcd:' etc/group | cut -d: -f3)
setpriv --reuid="$uid" --regid="$gid" --clear-groups test -x etc/updeb-lcd/state && echo reached || echo shut out`))
			if reached := got == "reached\n"; warned == reached {
				t.Errorf("lint warns about the folder: %v; the user, as dpkg installs it: %s", warned, got)
			}
		})
	}
}

// lcdPostinstOnRunningSystem runs the postinst of the package lcd
// (lcDaemon) as dpkg runs it on a node (no $DPKG_ROOT: the real adduser),
// in a mount namespace whose /etc, /var/lib and /var/log are throwaway
// copies, after the sh script before and with /var/lib/updeb-lcd made
// 0750, root's, as dpkg makes it; it returns what the postinst says, the
// folder's owner and mode, and the account's name, home and shell.
func lcdPostinstOnRunningSystem(t *testing.T, before string) string {
	t.Helper()
	testenv.RequireTool(t, "tar", "dpkg", "dpkg-deb", "useradd", "groupadd", "adduser", "getent", "dpkg-query")
	out := buildLC(t, "1.0.0", lcDaemon)
	root, tmp := testenv.DpkgRoot(t), t.TempDir()
	testenv.BasePasswd(t, root)
	env := []string{"ROOT=" + root, "T=" + tmp, "DEB=" + filepath.Join(out, "lcd_1.0.0-1_amd64.deb"), "PATH=/usr/sbin:/usr/bin:/sbin:/bin"}
	// The package in a dpkg database, for the postinst's dpkg-query -S.
	testenv.AsRoot(t, `dpkg --root="$ROOT" --admindir="$ROOT/var/lib/dpkg" --force-script-chrootless --force-not-root --force-depends --log=/dev/null -i "$DEB" >/dev/null 2>&1
dpkg-deb -e "$DEB" "$T/control"`, env...)
	return string(testenv.InMountNamespace(t, `trap 'umount /etc /var/lib /var/log 2>/dev/null; rm -rf "$T/etc" "$T/varlib" "$T/varlog"' EXIT
cp -a /etc "$T/etc"
mkdir "$T/varlib" "$T/varlog"
mount --bind "$T/etc" /etc
mount --bind "$T/varlib" /var/lib
mount --bind "$T/varlog" /var/log
`+before+`mkdir -m 0750 /var/lib/updeb-lcd
DPKG_ADMINDIR="$ROOT/var/lib/dpkg" sh "$T/control/postinst" configure 2>&1 || echo "postinst failed: $?"
stat -c '%n %U:%G %a' /var/lib/updeb-lcd
getent passwd updebtestlcd | cut -d: -f1,6,7`, env...))
}

// TestSystemUserFolderModeUpgradeEndToEnd upgrades with real dpkg a
// package whose system user's folder is 0750 in version 1 and 0700 in
// version 2 (a private data folder closed): dpkg leaves a folder that
// exists as it is, so upgraded systems kept 0750, though the postinst gave
// the folder to the user again. It now gives it the stated mode too, as a
// new installation has it; an admin's dpkg-statoverride still wins.
func TestSystemUserFolderModeUpgradeEndToEnd(t *testing.T) {
	testenv.RequireTool(t, "tar", "dpkg", "dpkg-deb", "useradd", "groupadd", "dpkg-query", "dpkg-statoverride")
	pkg := func(mode string) string {
		return lcPackage("lcd", "    files:\n      - {source: lc, path: bin/lc, dest: /usr/sbin/lcd}\n    directories:\n      - {path: /var/lib/updeb-lcd, mode: \""+mode+"\", owner: updebtestlcd, group: updebtestlcd}\n    system-user: {name: updebtestlcd, home: /var/lib/updeb-lcd}\n")
	}
	v1, v2 := buildLC(t, "1.0.0", pkg("0750")), buildLC(t, "2.0.0", pkg("0700"))
	run := func(override string) string {
		root := testenv.DpkgRoot(t)
		testenv.BasePasswd(t, root)
		return string(testenv.AsRoot(t, `dpkg() { command dpkg --root="$ROOT" --admindir="$ROOT/var/lib/dpkg" --force-script-chrootless --force-not-root --force-depends --log=/dev/null "$@" >/dev/null 2>&1; }
dpkg -i "$V1/lcd_1.0.0-1_amd64.deb"
`+override+`dpkg -i "$V2/lcd_2.0.0-1_amd64.deb"
uid=$(grep '^updebtestlcd:' "$ROOT/etc/passwd" | cut -d: -f3)
stat -c "%a %u" "$ROOT/var/lib/updeb-lcd" | sed "s/ $uid$/ updebtestlcd/; s/ 0$/ root/"
`, "ROOT="+root, "V1="+v1, "V2="+v2, "PATH=/usr/sbin:/usr/bin:/sbin:/bin"))
	}
	if got, want := run(""), "700 updebtestlcd\n"; got != want {
		t.Errorf("the folder after the upgrade: %q, want %q", got, want)
	}
	statoverride := `DPKG_ROOT="$ROOT" dpkg-statoverride --admindir "$ROOT/var/lib/dpkg" --add root root 0755 /var/lib/updeb-lcd
chmod 0755 "$ROOT/var/lib/updeb-lcd"; chown root:root "$ROOT/var/lib/updeb-lcd"
`
	if got, want := run(statoverride), "755 root\n"; got != want {
		t.Errorf("the folder after the upgrade, with a statoverride: %q, want %q", got, want)
	}
}

// TestStatedFolderModeUpgradeEndToEnd upgrades with real dpkg a package
// whose folders are root:root 0755 in version 1 and stated tighter in
// version 2 (/etc/updeb-lcs/pki 0700; /var/log/updeb-lcs www-data:adm
// 0750): dpkg leaves a folder that exists as it is, so upgraded systems,
// and those where the folder was there before the first installation,
// kept 0755 root:root, and nothing said so. The postinst now gives them
// the stated mode and owner, as for the system user's folders: a
// dpkg-statoverride still wins, and a link in a folder's place is changed
// as the link (what it leads to stays as it is). lintian stays clean.
func TestStatedFolderModeUpgradeEndToEnd(t *testing.T) {
	testenv.RequireTool(t, "tar", "dpkg", "dpkg-deb", "dpkg-query", "dpkg-statoverride", "lintian")
	pkg := func(dirs string) string {
		return lcPackage("lcs", "    files:\n      - {source: lc, path: bin/lc, dest: /usr/sbin/lcs}\n    directories:\n"+dirs)
	}
	v1 := buildLC(t, "1.0.0", pkg("      - /etc/updeb-lcs/pki\n      - /var/log/updeb-lcs\n"))
	v2 := buildLC(t, "2.0.0", pkg("      - {path: /etc/updeb-lcs/pki, mode: \"0700\"}\n      - {path: /var/log/updeb-lcs, mode: \"0750\", owner: www-data, group: adm}\n"))
	run := func(before string) string {
		root := testenv.DpkgRoot(t)
		return string(testenv.AsRoot(t, `dpkg() { command dpkg --root="$ROOT" --admindir="$ROOT/var/lib/dpkg" --force-script-chrootless --force-not-root --force-depends --log=/dev/null "$@" 2>&1; }
cd "$ROOT"
`+before+`out=$(dpkg -i "$V2/lcs_2.0.0-1_amd64.deb")
echo "$out" | grep "^lcs:" || true
stat -c '%n %a %u:%g' etc/updeb-lcs/pki var/log/updeb-lcs etc/root* 2>/dev/null || true
`, "ROOT="+root, "V1="+v1, "V2="+v2, "PATH=/usr/sbin:/usr/bin:/sbin:/bin"))
	}
	const v1First = "dpkg -i \"$V1/lcs_1.0.0-1_amd64.deb\" >/dev/null\n"
	stated := "etc/updeb-lcs/pki 700 0:0\nvar/log/updeb-lcs 750 33:4\n"
	if got := run(v1First); got != stated {
		t.Errorf("the folders after the upgrade:\n%s\nwant:\n%s", got, stated)
	}
	if got := run("mkdir -p etc/updeb-lcs/pki var/log/updeb-lcs\n"); got != stated {
		t.Errorf("the folders after the first installation, where they were before it:\n%s\nwant:\n%s", got, stated)
	}
	statoverride := v1First + `DPKG_ROOT="$ROOT" dpkg-statoverride --admindir "$ROOT/var/lib/dpkg" --add root root 0755 /etc/updeb-lcs/pki
`
	if got, want := run(statoverride), "etc/updeb-lcs/pki 755 0:0\nvar/log/updeb-lcs 750 33:4\n"; got != want {
		t.Errorf("the folders after the upgrade, with a statoverride for pki:\n%s\nwant:\n%s", got, want)
	}
	// dpkg keeps a link to a folder where the package has a folder.
	links := v1First + `mkdir -m 0755 etc/rootdir etc/rootlog
rm -r etc/updeb-lcs/pki var/log/updeb-lcs
ln -s ../rootdir etc/updeb-lcs/pki
ln -s ../../etc/rootlog var/log/updeb-lcs
`
	if got, want := run(links), "etc/updeb-lcs/pki 777 0:0\nvar/log/updeb-lcs 777 33:4\netc/rootdir 755 0:0\netc/rootlog 755 0:0\n"; got != want {
		t.Errorf("the folders after the upgrade, with links in their place:\n%s\nwant:\n%s", got, want)
	}
	testenv.Lintian(t, map[string]string{
		"package-contains-no-arch-dependent-files":   "the stand-in for upstream's binary is a shell script",
		"extended-description-is-probably-too-short": "a test package",
	}, filepath.Join(v2, "lcs_2.0.0-1_amd64.deb"))
}

// TestStatedFolderOfForeignArchitecture installs with real dpkg an i386
// package (one of updeb's architectures) on an amd64 node that runs i386
// packages too (dpkg --add-architecture), where its stated folder was there
// before: dpkg-query -S names a package of a foreign architecture with it
// ("lcs:i386: /etc/updeb-lcs/pki"), which the postinst took for another
// recipe's package, so the folder stayed 0755, with a message that it is
// "also a folder of lcs:i386". The package is its own, whatever its
// architecture.
func TestStatedFolderOfForeignArchitecture(t *testing.T) {
	testenv.RequireTool(t, "tar", "dpkg", "dpkg-deb", "dpkg-query", "dpkg-statoverride")
	out := buildLCFor(t, "i386", "1.0.0", lcPackage("lcs", "    files:\n      - {source: lc, path: bin/lc, dest: /usr/sbin/lcs}\n    directories:\n      - {path: /etc/updeb-lcs/pki, mode: \"0700\"}\n"), nil)
	root := testenv.DpkgRoot(t)
	got := testenv.AsRoot(t, `dpkg() { command dpkg --root="$ROOT" --admindir="$ROOT/var/lib/dpkg" --force-script-chrootless --force-not-root --force-depends --log=/dev/null "$@" 2>&1; }
dpkg --add-architecture i386
cd "$ROOT"
mkdir -p etc/updeb-lcs/pki
dpkg -i "$OUT/lcs_1.0.0-1_i386.deb" | grep "^lcs:" || true
stat -c '%n %a %u:%g' etc/updeb-lcs/pki`, "ROOT="+root, "OUT="+out, "PATH=/usr/sbin:/usr/bin:/sbin:/bin")
	if want := "etc/updeb-lcs/pki 700 0:0\n"; string(got) != want {
		t.Errorf("the i386 package's folder on an amd64 node:\n%s\nwant:\n%s", got, want)
	}
}

// TestSystemUserLeavesAnotherPackagesFolder installs with real dpkg a
// package (lcother, of another build) that has /etc/updeb-shared, then one whose system user
// is to own that folder and its own /var/lib/updeb-lcd: the postinst gave
// the user the other package's folder (as it would /etc/ssh or
// /var/log/apt on every node); it now leaves it as it is, says so, and
// gives the user the folder only its recipe's packages have (lcd states
// it, lcd-data puts a file in it, and both carry it).
func TestSystemUserLeavesAnotherPackagesFolder(t *testing.T) {
	testenv.RequireTool(t, "tar", "dpkg", "dpkg-deb", "useradd", "groupadd", "dpkg-query")
	other := buildLC(t, "1.0.0", lcPackage("lcother", "    files:\n      - {source: lc, path: bin/lc, dest: /etc/updeb-shared/lc}\n"))
	out := buildLC(t, "1.0.0", lcPackage("lcd", "    files:\n      - {source: lc, path: bin/lc, dest: /usr/sbin/lcd}\n    directories:\n      - {path: /etc/updeb-shared, owner: updebtestlcd, group: updebtestlcd}\n      - {path: /var/lib/updeb-lcd, mode: \"0750\", owner: updebtestlcd, group: updebtestlcd}\n    system-user: {name: updebtestlcd}\n")+
		lcPackage("lcd-data", "    files:\n      - {source: lc, path: bin/lc, dest: /var/lib/updeb-lcd/seed}\n    system-user: {name: updebtestlcd}\n"))
	root := testenv.DpkgRoot(t)
	testenv.BasePasswd(t, root)
	got := testenv.AsRoot(t, `dpkg() { command dpkg --root="$ROOT" --admindir="$ROOT/var/lib/dpkg" --force-script-chrootless --force-not-root --force-depends --log=/dev/null -i "$@" 2>&1; }
dpkg "$OTHER/lcother_1.0.0-1_amd64.deb" >/dev/null
dpkg "$OUT/lcd_1.0.0-1_amd64.deb" "$OUT/lcd-data_1.0.0-1_amd64.deb" | grep -o "lcd: /.*" || true
cd "$ROOT"
uid=$(grep '^updebtestlcd:' etc/passwd | cut -d: -f3)
stat -c '%n %u:%g' etc/updeb-shared
[ "$(stat -c %u var/lib/updeb-lcd)" = "$uid" ] && echo "var/lib/updeb-lcd: the account's"
true`, "ROOT="+root, "OUT="+out, "OTHER="+other, "PATH=/usr/sbin:/usr/bin:/sbin:/bin")
	want := `lcd: /etc/updeb-shared is also a folder of lcother: left as it is, not given to updebtestlcd
etc/updeb-shared 0:0
var/lib/updeb-lcd: the account's
`
	if string(got) != want {
		t.Errorf("a system user's folder that another package has:\n%s\nwant:\n%s", got, want)
	}
}

// TestSystemUserChownFollowsNoLink reinstalls with real dpkg a package whose
// system user owns /var/lib/updeb-lcd and the folder state and the file
// data in it, after the user (a daemon taken over) replaced state with a
// link to a folder of root's (dpkg keeps a link to a folder where the
// package has a folder), which the folder state/ssh then led into, and, between unpack and configure (as apt runs
// them), data with a link to a file of root's: the postinst's chown and
// chmod followed the links and gave root's folder and file to
// the user (with /etc or /etc/shadow, root itself). It now leaves what a
// link leads to as it is.
func TestSystemUserChownFollowsNoLink(t *testing.T) {
	got := installedLCD(t, "    files:\n      - {source: lc, path: bin/lc, dest: /usr/sbin/lcd}\n      - {source: lc, path: bin/lc, dest: /var/lib/updeb-lcd/data, owner: updebtestlcd, mode: \"2750\", special-bits: \"runs with the group of updebtestlcd\", group: updebtestlcd}\n    directories:\n      - {path: /var/lib/updeb-lcd, owner: updebtestlcd, group: updebtestlcd}\n      - {path: /var/lib/updeb-lcd/state, owner: updebtestlcd, group: updebtestlcd}\n      - {path: /var/lib/updeb-lcd/state/ssh, owner: updebtestlcd, group: updebtestlcd}\n    system-user: {name: updebtestlcd}\n",
		`mkdir -p etc/rootdir/ssh && echo secret > etc/rootfile && chmod 0600 etc/rootfile
rm -r var/lib/updeb-lcd/state && ln -s ../../../etc/rootdir var/lib/updeb-lcd/state
dpkg --unpack "$OUT/lcd_1.0.0-1_amd64.deb" >/dev/null
rm var/lib/updeb-lcd/data && ln -s ../../../etc/rootfile var/lib/updeb-lcd/data
dpkg --configure lcd >/dev/null
stat -c '%n %u:%g %a' etc/rootdir etc/rootdir/ssh etc/rootfile
true`)
	want := "etc/rootdir 0:0 755\netc/rootdir/ssh 0:0 755\netc/rootfile 0:0 600\n"
	if string(got) != want {
		t.Errorf("the postinst again, after the system user put links in its folder:\n%s\nwant:\n%s", got, want)
	}
}

// TestSystemUserChownFollowsNoLinkOfAnotherAccount reinstalls with real
// dpkg a package whose system user owns /var/log/updeb-lcw/a and a/ssh,
// inside /var/log/updeb-lcw, www-data's: www-data (a web server taken over)
// may rename a and put a link to a folder of root's in its place (dpkg
// keeps a link to a folder where the package has a folder), and the
// postinst's chown -h of a/ssh followed it and gave root's etc/rootdir/ssh
// to the system user: the guard against links on the way looked only at
// the system user's own folders. It now looks at every folder the package
// states that an account other than root may write to, as for the stated
// folders that are root's.
func TestSystemUserChownFollowsNoLinkOfAnotherAccount(t *testing.T) {
	got := installedLCD(t, "    files:\n      - {source: lc, path: bin/lc, dest: /usr/sbin/lcd}\n    directories:\n      - {path: /var/log/updeb-lcw, mode: \"0750\", owner: www-data, group: adm}\n      - {path: /var/log/updeb-lcw/a, owner: updebtestlcd, group: updebtestlcd}\n      - {path: /var/log/updeb-lcw/a/ssh, owner: updebtestlcd, group: updebtestlcd}\n    system-user: {name: updebtestlcd}\n",
		`mkdir -p etc/rootdir/ssh
mv var/log/updeb-lcw/a var/log/updeb-lcw/old && ln -s ../../../etc/rootdir var/log/updeb-lcw/a
dpkg -i "$OUT/lcd_1.0.0-1_amd64.deb" | grep "^lcd:" || true
stat -c '%n %u:%g %a' etc/rootdir etc/rootdir/ssh`)
	want := "etc/rootdir 0:0 755\netc/rootdir/ssh 0:0 755\n"
	if string(got) != want {
		t.Errorf("the postinst again, after www-data put a link in its folder:\n%s\nwant:\n%s", got, want)
	}
}

// installedLCD builds package lcd of the lc recipe with these fields,
// installs it with real dpkg into a throwaway root with base-passwd's
// accounts, and returns what the sh script then prints, run in the root
// with dpkg (chrootless there, its output with it) and $OUT, the build's
// output folder.
func installedLCD(t *testing.T, fields, script string) []byte {
	t.Helper()
	testenv.RequireTool(t, "tar", "dpkg", "dpkg-deb", "useradd", "groupadd", "dpkg-query")
	out := buildLC(t, "1.0.0", lcPackage("lcd", fields))
	root := testenv.DpkgRoot(t)
	testenv.BasePasswd(t, root)
	return testenv.AsRoot(t, `dpkg() { command dpkg --root="$ROOT" --admindir="$ROOT/var/lib/dpkg" --force-script-chrootless --force-not-root --force-depends --log=/dev/null "$@" 2>&1; }
dpkg -i "$OUT/lcd_1.0.0-1_amd64.deb" >/dev/null
cd "$ROOT"
`+script, "ROOT="+root, "OUT="+out, "PATH=/usr/sbin:/usr/bin:/sbin:/bin")
}

// lcPackage is a package of the lc recipe with these fields (files,
// relations).
func lcPackage(name, fields string) string {
	return "  - name: " + name + "\n    summary: lc " + name + "\n    description: |\n      A test package.\n    section: admin\n" + fields
}

// upgradeLCBFirst installs packages lca and lcb of v1 into a throwaway
// root with real dpkg, upgrades both to v2 with lcb unpacked first (as apt
// may order it, with apt's --auto-deconfigure), and returns dpkg's
// "trying to overwrite" refusal, if any, the two packages' versions and
// states, and what the script checks prints (in sh, the root is $ROOT).
func upgradeLCBFirst(t *testing.T, v1, v2, checks string) string {
	t.Helper()
	return upgradeLCBFirstIn(t, testenv.DpkgRoot(t), v1, v2, checks)
}

// upgradeLCBFirstIn is upgradeLCBFirst into the dpkg root root.
func upgradeLCBFirstIn(t *testing.T, root, v1, v2, checks string) string {
	t.Helper()
	return string(testenv.AsRoot(t, `dpkg() { command dpkg --root="$ROOT" --admindir="$ROOT/var/lib/dpkg" --force-script-chrootless --force-not-root --log=/dev/null "$@" 2>&1; }
dpkg -i "$V1/lca_1.0.0-1_amd64.deb" "$V1/lcb_1.0.0-1_amd64.deb" >/dev/null
dpkg --auto-deconfigure -i "$V2/lcb_2.0.0-1_amd64.deb" "$V2/lca_2.0.0-1_amd64.deb" | grep -o "trying to overwrite.*" || true
dpkg-query --admindir="$ROOT/var/lib/dpkg" -W -f '${Package} ${Version} ${db:Status-Abbrev}|' lca lcb; echo
`+checks, "ROOT="+root, "V1="+v1, "V2="+v2, "PATH=/usr/sbin:/usr/bin:/sbin:/bin"))
}

// TestMovedFileUpgradeEndToEnd upgrades with real dpkg a recipe whose
// /usr/bin/lcx moves from package lca to lcb, the new lcb unpacked first (as
// apt may order it, with apt's --auto-deconfigure): without relations dpkg
// refuses ("trying to overwrite"), leaves lcb at 1.0.0 and, once lca 2.0.0
// is in, no /usr/bin/lcx at all, which `updeb verify --base` fails on
// (movedPaths); with the replaces and breaks it tells to write, the upgrade
// goes through.
func TestMovedFileUpgradeEndToEnd(t *testing.T) {
	testenv.RequireTool(t, "tar", "dpkg", "dpkg-deb")
	const lcy = "      - {source: lc, path: bin/lc, dest: /usr/bin/lcy}\n"
	v1 := buildLC(t, "1.0.0", lcPackage("lca", "    files:\n      - {source: lc, path: bin/lc, dest: /usr/bin/lcx}\n")+lcPackage("lcb", "    files:\n"+lcy))
	v2 := func(relations string) string {
		return buildLC(t, "2.0.0", lcPackage("lca", "    files:\n      - {source: lc, path: bin/lc, dest: /usr/bin/lcz}\n")+
			lcPackage("lcb", relations+"    files:\n"+lcy+"      - {source: lc, path: bin/lc, dest: /usr/bin/lcx}\n"))
	}
	bare, related := v2(""), v2("    replaces: [\"lca (<< 2.0.0-1)\"]\n    breaks: [\"lca (<< 2.0.0-1)\"]\n")
	run := func(v2 string) string {
		return upgradeLCBFirst(t, v1, v2, `dpkg-query --admindir="$ROOT/var/lib/dpkg" -S /usr/bin/lcx 2>&1 || true
[ -e "$ROOT/usr/bin/lcx" ] || echo "no /usr/bin/lcx"
`)
	}
	if got, want := run(bare), "trying to overwrite '/usr/bin/lcx', which is also in package lca 1.0.0-1\nlca 2.0.0-1 ii |lcb 1.0.0-1 ii |\ndpkg-query: no path found matching pattern /usr/bin/lcx\nno /usr/bin/lcx\n"; got != want {
		t.Errorf("without relations:\n%s\nwant:\n%s", got, want)
	}
	if got, want := run(related), "lca 2.0.0-1 ii |lcb 2.0.0-1 ii |\nlcb: /usr/bin/lcx\n"; got != want {
		t.Errorf("with replaces and breaks:\n%s\nwant:\n%s", got, want)
	}
}

// TestAliasedMoveUpgradeEndToEnd upgrades with real dpkg, on a merged-/usr
// root (/lib a link to usr/lib), a recipe whose unit
// /lib/systemd/system/lc.service of package lca is
// /usr/lib/systemd/system/lc.service of package lcb now, lcb unpacked first,
// with replaces and breaks: dpkg sees two paths, and the upgrade of lca
// deletes lcb's file (DEP 17), which `updeb verify --base` fails on
// (aliasedMoves); moved under its old name, as the line says, it stays.
func TestAliasedMoveUpgradeEndToEnd(t *testing.T) {
	testenv.RequireTool(t, "tar", "dpkg", "dpkg-deb")
	files := map[string]string{"lc.service": "[Service]\nExecStart=/bin/sleep infinity\n"} // a command of every system: lca does not depend on lcb
	const relations = "    replaces: [\"lca (<< 2.0.0-1)\"]\n    breaks: [\"lca (<< 2.0.0-1)\"]\n"
	v1 := buildLCFiles(t, "1.0.0", lcPackage("lca", "    files:\n      - {file: lc.service, dest: /lib/systemd/system/lc.service}\n")+
		lcPackage("lcb", "    files:\n      - {source: lc, path: bin/lc, dest: /usr/bin/lcy}\n"), files)
	v2 := func(unit string) string {
		return buildLCFiles(t, "2.0.0", lcPackage("lca", "    files:\n      - {source: lc, path: bin/lc, dest: /usr/bin/lcz}\n")+
			lcPackage("lcb", relations+"    files:\n      - {source: lc, path: bin/lc, dest: /usr/bin/lcy}\n      - {file: lc.service, dest: "+unit+"}\n"), files)
	}
	run := func(v2 string) string {
		root := testenv.DpkgRoot(t)
		if err := os.MkdirAll(filepath.Join(root, "usr", "lib"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("usr/lib", filepath.Join(root, "lib")); err != nil {
			t.Fatal(err)
		}
		return upgradeLCBFirstIn(t, root, v1, v2, `[ -f "$ROOT/usr/lib/systemd/system/lc.service" ] || echo "lc.service is gone"
`)
	}
	if got, want := run(v2("/usr/lib/systemd/system/lc.service")), "lca 2.0.0-1 ii |lcb 2.0.0-1 ii |\nlc.service is gone\n"; got != want {
		t.Errorf("moved to the other name of its folder:\n%s\nwant:\n%s", got, want)
	}
	if got, want := run(v2("/lib/systemd/system/lc.service")), "lca 2.0.0-1 ii |lcb 2.0.0-1 ii |\n"; got != want {
		t.Errorf("moved under its old name:\n%s\nwant:\n%s", got, want)
	}
}

// quietDpkg starts a script for testenv.AsRoot with ROOT set: a dpkg that
// installs into ROOT chrootless (the maintainer scripts see DPKG_ROOT) and
// prints nothing, so that the script's output is what it echoes.
const quietDpkg = `dpkg() { command dpkg --root="$ROOT" --admindir="$ROOT/var/lib/dpkg" --force-script-chrootless --force-not-root --log=/dev/null "$@" >/dev/null 2>&1; }
`

// quietDpkgForceDepends is quietDpkg that also installs packages whose
// dependencies (adduser, libc6) the throwaway root lacks.
const quietDpkgForceDepends = `dpkg() { command dpkg --root="$ROOT" --admindir="$ROOT/var/lib/dpkg" --force-script-chrootless --force-not-root --force-depends --log=/dev/null "$@" >/dev/null 2>&1; }
`

// TestLeftBehindUpgradeEndToEnd upgrades with real dpkg a package that
// drops an alternative name (lc, for lcnew) and a conffile: dpkg and
// update-alternatives leave /usr/bin/lc dangling and /etc/lc/old.conf in
// place (`updeb verify --base` flags both, leftBehind); with the fragments
// it tells to write, the upgrade removes them.
func TestLeftBehindUpgradeEndToEnd(t *testing.T) {
	testenv.RequireTool(t, "tar", "dpkg", "dpkg-deb", "update-alternatives", "dpkg-maintscript-helper")
	v1 := buildLCFiles(t, "1.0.0", lcPackage("lca", `    files:
      - {source: lc, path: bin/lc, dest: /usr/bin/lc-1}
      - {file: old.conf, dest: /etc/lc/old.conf}
    alternatives: [{name: lc, link: /usr/bin/lc, path: /usr/bin/lc-1, priority: 10}]
`), map[string]string{"old.conf": "x=1\n"})
	v2 := func(scripts string) string {
		rm := "dpkg-maintscript-helper rm_conffile /etc/lc/old.conf 2.0.0-1~ -- \"$@\"\n"
		return buildLCFiles(t, "2.0.0", lcPackage("lca", scripts+`    files:
      - {source: lc, path: bin/lc, dest: /usr/bin/lc-2}
    alternatives: [{name: lcnew, link: /usr/bin/lcn, path: /usr/bin/lc-2, priority: 10}]
`), map[string]string{"lca.preinst": rm, "lca.postrm": rm,
			"lca.postinst": rm + "if [ \"$1\" = configure ]; then update-alternatives --remove lc /usr/bin/lc-1; fi\n"})
	}
	bare, fixed := v2(""), v2("    scripts: {preinst: lca.preinst, postinst: lca.postinst, postrm: lca.postrm}\n")
	run := func(v2 string) string {
		root := testenv.DpkgRoot(t)
		return string(testenv.AsRoot(t, `mkdir -p "$ROOT/etc/alternatives" "$ROOT/var/lib/dpkg/alternatives"
`+quietDpkg+`dpkg -i "$V1/lca_1.0.0-1_amd64.deb"
dpkg -i "$V2/lca_2.0.0-1_amd64.deb"
if [ -L "$ROOT/usr/bin/lc" ]; then to=$(readlink "$ROOT$(readlink "$ROOT/usr/bin/lc")"); [ -e "$ROOT$to" ] || echo "/usr/bin/lc dangles: $to"; fi
[ -L "$ROOT/usr/bin/lcn" ] && echo "/usr/bin/lcn"
[ -e "$ROOT/etc/lc/old.conf" ] && echo "/etc/lc/old.conf left"
dpkg -P lca
ls "$ROOT/var/lib/dpkg/alternatives"
`, "ROOT="+root, "V1="+v1, "V2="+v2, "PATH=/usr/sbin:/usr/bin:/sbin:/bin"))
	}
	if got, want := run(bare), "/usr/bin/lc dangles: /usr/bin/lc-1\n/usr/bin/lcn\n/etc/lc/old.conf left\nlc\n"; got != want {
		t.Errorf("without fragments:\n%s\nwant:\n%s", got, want)
	}
	if got, want := run(fixed), "/usr/bin/lcn\n"; got != want {
		t.Errorf("with the fragments verify names:\n%s\nwant:\n%s", got, want)
	}
}

// TestMovedAlternativeUpgradeEndToEnd upgrades with real dpkg a package
// whose alternative lc has another path now (/usr/bin/lc-2, priority 10)
// while it still installs the old one (/usr/bin/lc-1, priority 20):
// update-alternatives --install in the new postinst adds the new choice and
// keeps the old, whose file is still there (it drops only a choice whose
// file is gone), so /usr/bin/lc still runs lc-1 on upgraded systems while a
// fresh installation runs lc-2; with the postinst fragment that `updeb
// verify --base` names (leftBehind), the upgrade runs lc-2 too.
func TestMovedAlternativeUpgradeEndToEnd(t *testing.T) {
	testenv.RequireTool(t, "tar", "dpkg", "dpkg-deb", "update-alternatives")
	v1 := buildLC(t, "1.0.0", lcPackage("lca", `    files:
      - {source: lc, path: bin/lc, dest: /usr/bin/lc-1}
    alternatives: [{name: lc, link: /usr/bin/lc, path: /usr/bin/lc-1, priority: 20}]
`))
	v2 := func(scripts string) string {
		return buildLCFiles(t, "2.0.0", lcPackage("lca", scripts+`    files:
      - {source: lc, path: bin/lc, dest: /usr/bin/lc-1}
      - {source: lc, path: bin/lc, dest: /usr/bin/lc-2}
    alternatives: [{name: lc, link: /usr/bin/lc, path: /usr/bin/lc-2, priority: 10}]
`), map[string]string{"lca.postinst": "if [ \"$1\" = configure ]; then update-alternatives --remove lc /usr/bin/lc-1; fi\n"})
	}
	run := func(first, v2 string) string {
		root := testenv.DpkgRoot(t)
		return string(testenv.AsRoot(t, `mkdir -p "$ROOT/etc/alternatives" "$ROOT/var/lib/dpkg/alternatives"
`+quietDpkg+`[ -z "$FIRST" ] || dpkg -i "$FIRST"
dpkg -i "$V2/lca_2.0.0-1_amd64.deb"
readlink "$ROOT/etc/alternatives/lc"
`, "ROOT="+root, "FIRST="+first, "V2="+v2, "PATH=/usr/sbin:/usr/bin:/sbin:/bin"))
	}
	v1deb := filepath.Join(v1, "lca_1.0.0-1_amd64.deb")
	bare, fixed := v2(""), v2("    scripts: {postinst: lca.postinst}\n")
	for _, tt := range []struct{ name, first, v2, want string }{
		{"a fresh installation", "", bare, "/usr/bin/lc-2\n"},
		{"an upgrade", v1deb, bare, "/usr/bin/lc-1\n"},
		{"an upgrade with the fragment verify names", v1deb, fixed, "/usr/bin/lc-2\n"},
		{"a fresh installation with the fragment", "", fixed, "/usr/bin/lc-2\n"},
	} {
		if got := run(tt.first, tt.v2); got != tt.want {
			t.Errorf("%s:\n%s\nwant:\n%s", tt.name, got, tt.want)
		}
	}
}

// TestRenamedAlternativeUpgradeEndToEnd upgrades with real dpkg a package
// whose alternative lc is named lcnew now, with the same link, then
// downgrades it (a rollback): the new postinst's update-alternatives
// --install fails ("already managed by lc") and leaves the package
// unconfigured, a postinst fragment that removes lc too (it runs after
// updeb's part); with the preinst fragment that `updeb verify --base` names
// for this case (leftBehind) the upgrade goes through, and the downgrade
// fails the same way ("already managed by lcnew") until the prerm fragment
// it names is there too.
func TestRenamedAlternativeUpgradeEndToEnd(t *testing.T) {
	testenv.RequireTool(t, "tar", "dpkg", "dpkg-deb", "update-alternatives")
	v1 := buildLC(t, "1.0.0", lcPackage("lca", `    files:
      - {source: lc, path: bin/lc, dest: /usr/bin/lc-1}
    alternatives: [{name: lc, link: /usr/bin/lc, path: /usr/bin/lc-1, priority: 10}]
`))
	const (
		postinst = "if [ \"$1\" = configure ]; then update-alternatives --remove lc /usr/bin/lc-1; fi\n"
		preinst  = "if [ \"$1\" = install ] || [ \"$1\" = upgrade ]; then update-alternatives --remove lc /usr/bin/lc-1; fi\n"
		prerm    = "if [ \"$1\" = upgrade ] && dpkg --compare-versions \"$2\" lt 2.0.0-1~; then update-alternatives --remove lcnew /usr/bin/lc-2; fi\n"
	)
	v2 := func(fragments map[string]string) string {
		fields := `    files:
      - {source: lc, path: bin/lc, dest: /usr/bin/lc-2}
    alternatives: [{name: lcnew, link: /usr/bin/lc, path: /usr/bin/lc-2, priority: 10}]
`
		files := map[string]string{}
		var scripts []string
		for _, script := range slices.Sorted(maps.Keys(fragments)) {
			scripts = append(scripts, script+": lca."+script)
			files["lca."+script] = fragments[script]
		}
		if len(scripts) > 0 {
			fields = "    scripts: {" + strings.Join(scripts, ", ") + "}\n" + fields
		}
		return buildLCFiles(t, "2.0.0", lcPackage("lca", fields), files)
	}
	run := func(v2 string) string {
		root := testenv.DpkgRoot(t)
		return string(testenv.AsRoot(t, `mkdir -p "$ROOT/etc/alternatives" "$ROOT/var/lib/dpkg/alternatives"
`+quietDpkg+`state() { echo "$1: $(dpkg-query --admindir="$ROOT/var/lib/dpkg" -W -f '${Version} ${db:Status-Abbrev}' lca)$(readlink "$ROOT/$(readlink "$ROOT/usr/bin/lc")")"; }
dpkg -i "$V1/lca_1.0.0-1_amd64.deb"
dpkg -i "$V2/lca_2.0.0-1_amd64.deb" || true
state upgrade
dpkg -i "$V1/lca_1.0.0-1_amd64.deb" || true
state downgrade
`, "ROOT="+root, "V1="+v1, "V2="+v2, "PATH=/usr/sbin:/usr/bin:/sbin:/bin"))
	}
	for _, tt := range []struct {
		name      string
		fragments map[string]string
		want      string
	}{
		{"without fragments", nil, "upgrade: 2.0.0-1 iF /usr/bin/lc-1\ndowngrade: 1.0.0-1 ii /usr/bin/lc-1\n"},
		{"a postinst fragment", map[string]string{"postinst": postinst}, "upgrade: 2.0.0-1 iF /usr/bin/lc-1\ndowngrade: 1.0.0-1 ii /usr/bin/lc-1\n"},
		{"the preinst fragment verify names", map[string]string{"preinst": preinst}, "upgrade: 2.0.0-1 ii /usr/bin/lc-2\ndowngrade: 1.0.0-1 iF /usr/bin/lc-2\n"},
		{"the preinst and prerm fragments verify names", map[string]string{"preinst": preinst, "prerm": prerm}, "upgrade: 2.0.0-1 ii /usr/bin/lc-2\ndowngrade: 1.0.0-1 ii /usr/bin/lc-1\n"},
	} {
		if got := run(v2(tt.fragments)); got != tt.want {
			t.Errorf("%s:\n%s\nwant:\n%s", tt.name, got, tt.want)
		}
	}
}

// TestPlainToConffileUpgradeEndToEnd upgrades with real dpkg a package
// whose plain file /etc/lc/lc.conf is a conffile now: dpkg asks about the
// file already there, so an upgrade without a terminal fails, and one with
// --force-confold (Puppet's) keeps version 1's content for good; with the
// preinst fragment that `updeb verify --base` names (plainToConffile), the
// new content comes in where nobody edited the file, and an edit is kept.
func TestPlainToConffileUpgradeEndToEnd(t *testing.T) {
	testenv.RequireTool(t, "tar", "dpkg", "dpkg-deb")
	v1 := buildLCFiles(t, "1.0.0", lcPackage("lca", `    files:
      - {file: lc.conf, dest: /etc/lc/lc.conf, conffile: false}
`), map[string]string{"lc.conf": "v=1\n"})
	v2 := func(scripts string) string {
		return buildLCFiles(t, "2.0.0", lcPackage("lca", scripts+`    files:
      - {file: lc.conf, dest: /etc/lc/lc.conf}
`), map[string]string{"lc.conf": "v=2\n", "lca.preinst": `if [ "$1" = upgrade ] && dpkg --compare-versions "$2" lt 2.0.0-1~ && ! dpkg --verify lca | grep -q ' /etc/lc/lc.conf$'; then rm -f "$DPKG_ROOT/etc/lc/lc.conf"; fi` + "\n"})
	}
	bare, fixed := v2(""), v2("    scripts: {preinst: lca.preinst}\n")
	run := func(v2, edit, options string) string {
		root := testenv.DpkgRoot(t)
		return string(testenv.AsRoot(t, quietDpkg+`dpkg -i "$V1/lca_1.0.0-1_amd64.deb"
[ -z "$EDIT" ] || echo "$EDIT" >"$ROOT/etc/lc/lc.conf"
dpkg $OPTIONS -i "$V2/lca_2.0.0-1_amd64.deb" </dev/null || echo "upgrade failed"
cat "$ROOT/etc/lc/lc.conf"
`, "ROOT="+root, "V1="+v1, "V2="+v2, "EDIT="+edit, "OPTIONS="+options, "PATH=/usr/sbin:/usr/bin:/sbin:/bin"))
	}
	for _, tt := range []struct{ name, v2, edit, options, want string }{
		{"without the fragment", bare, "", "", "upgrade failed\nv=1\n"},
		{"without the fragment, --force-confold", bare, "", "--force-confold", "v=1\n"},
		{"with the fragment", fixed, "", "", "v=2\n"},
		{"with the fragment, edited, --force-confold", fixed, "v=local", "--force-confold", "v=local\n"},
	} {
		if got := run(tt.v2, tt.edit, tt.options); got != tt.want {
			t.Errorf("%s:\n%s\nwant:\n%s", tt.name, got, tt.want)
		}
	}
}

// TestRenamedConffileUpgradeEndToEnd upgrades with real dpkg a package
// whose conffile /etc/lc/old.conf, edited by the admin, is /etc/lc/new.conf
// now: with rm_conffile the edit ends in old.conf.dpkg-bak and new.conf has
// the package's content; with the mv_conffile line `updeb verify --base`
// names for a conffile the package has now (movedConffile), new.conf is the
// admin's.
func TestRenamedConffileUpgradeEndToEnd(t *testing.T) {
	testenv.RequireTool(t, "tar", "dpkg", "dpkg-deb", "dpkg-maintscript-helper")
	v1 := buildLCFiles(t, "1.0.0", lcPackage("lca", "    files:\n      - {file: lc.conf, dest: /etc/lc/old.conf}\n"), map[string]string{"lc.conf": "v=1\n"})
	v2 := func(helper string) string {
		line := "dpkg-maintscript-helper " + helper + " -- \"$@\"\n"
		return buildLCFiles(t, "2.0.0", lcPackage("lca", `    scripts: {preinst: lca.preinst, postinst: lca.postinst, postrm: lca.postrm}
    files:
      - {file: lc.conf, dest: /etc/lc/new.conf}
`), map[string]string{"lc.conf": "v=2\n", "lca.preinst": line, "lca.postinst": line, "lca.postrm": line})
	}
	run := func(v2 string) string {
		root := testenv.DpkgRoot(t)
		return string(testenv.AsRoot(t, quietDpkg+`dpkg -i "$V1/lca_1.0.0-1_amd64.deb"
echo v=local >"$ROOT/etc/lc/old.conf"
dpkg -i "$V2/lca_2.0.0-1_amd64.deb" </dev/null || echo "upgrade failed"
cd "$ROOT/etc/lc" && grep . *
`, "ROOT="+root, "V1="+v1, "V2="+v2, "PATH=/usr/sbin:/usr/bin:/sbin:/bin"))
	}
	if got, want := run(v2("rm_conffile /etc/lc/old.conf 2.0.0-1~")), "new.conf:v=2\nold.conf.dpkg-bak:v=local\n"; got != want {
		t.Errorf("rm_conffile:\n%s\nwant:\n%s", got, want)
	}
	if got, want := run(v2("mv_conffile /etc/lc/old.conf /etc/lc/new.conf 2.0.0-1~")), "new.conf:v=local\nnew.conf.dpkg-new:v=2\n"; got != want {
		t.Errorf("mv_conffile:\n%s\nwant:\n%s", got, want)
	}
}

// TestConffileToDirectoryUpgradeEndToEnd upgrades with real dpkg a package
// whose conffile /etc/lc/lc.conf, edited by the admin, is a directory now
// (/etc/lc/lc.conf/main.conf): dpkg replaces the file without a word; with
// mv_conffile the postinst fails; with the rm_conffile line `updeb verify
// --base` names for it (leftBehind), the edit is kept as .dpkg-bak.
func TestConffileToDirectoryUpgradeEndToEnd(t *testing.T) {
	testenv.RequireTool(t, "tar", "dpkg", "dpkg-deb", "dpkg-maintscript-helper")
	v1 := buildLCFiles(t, "1.0.0", lcPackage("lca", "    files:\n      - {file: lc.conf, dest: /etc/lc/lc.conf}\n"), map[string]string{"lc.conf": "v=1\n"})
	v2 := func(helper string) string {
		scripts, files := "", map[string]string{"lc.conf": "v=2\n"}
		if helper != "" {
			line := "dpkg-maintscript-helper " + helper + " -- \"$@\"\n"
			scripts = "    scripts: {preinst: lca.preinst, postinst: lca.postinst, postrm: lca.postrm}\n"
			files["lca.preinst"], files["lca.postinst"], files["lca.postrm"] = line, line, line
		}
		return buildLCFiles(t, "2.0.0", lcPackage("lca", scripts+"    files:\n      - {file: lc.conf, dest: /etc/lc/lc.conf/main.conf}\n"), files)
	}
	run := func(v2 string) string {
		root := testenv.DpkgRoot(t)
		return string(testenv.AsRoot(t, quietDpkg+`dpkg -i "$V1/lca_1.0.0-1_amd64.deb"
echo v=local >"$ROOT/etc/lc/lc.conf"
dpkg -i "$V2/lca_2.0.0-1_amd64.deb" </dev/null || echo "upgrade failed"
cd "$ROOT/etc/lc" && find . -type f | sort | xargs grep -H .
`, "ROOT="+root, "V1="+v1, "V2="+v2, "PATH=/usr/sbin:/usr/bin:/sbin:/bin"))
	}
	for _, tt := range []struct{ name, helper, want string }{
		{"without fragments", "", "./lc.conf/main.conf:v=2\n"},
		{"mv_conffile", "mv_conffile /etc/lc/lc.conf /etc/lc/lc.conf/main.conf 2.0.0-1~", "upgrade failed\n./lc.conf/main.conf.dpkg-new:v=2\n"},
		{"the rm_conffile line verify names", "rm_conffile /etc/lc/lc.conf 2.0.0-1~", "./lc.conf.dpkg-bak:v=local\n./lc.conf/main.conf:v=2\n"},
	} {
		if got := run(v2(tt.helper)); got != tt.want {
			t.Errorf("%s:\n%s\nwant:\n%s", tt.name, got, tt.want)
		}
	}
}

// TestDirToSymlinkUpgradeEndToEnd: a directory of version 1 that version 2
// makes a symlink stays a directory on an upgraded system, and the link's
// files are missing, until the dpkg-maintscript-helper dir_to_symlink line
// that verify's dir-symlink REVIEW line names is in the fragments.
func TestDirToSymlinkUpgradeEndToEnd(t *testing.T) {
	testenv.RequireTool(t, "tar", "dpkg", "dpkg-deb", "dpkg-maintscript-helper")
	v1 := buildLCFiles(t, "1.0.0", lcPackage("lca", `    files:
      - {source: lc, path: bin/lc, dest: /opt/lc/bin/lc}
`), nil)
	v2 := func(scripts string) string {
		h := "dpkg-maintscript-helper dir_to_symlink /opt/lc /usr/lib/lc 2.0.0-1~ -- \"$@\"\n"
		return buildLCFiles(t, "2.0.0", lcPackage("lca", scripts+`    symlinks: [{dest: /opt/lc, target: /usr/lib/lc}]
    files:
      - {source: lc, path: bin/lc, dest: /usr/lib/lc/bin/lc}
`), map[string]string{"lca.preinst": h, "lca.postinst": h, "lca.postrm": h})
	}
	bare, fixed := v2(""), v2("    scripts: {preinst: lca.preinst, postinst: lca.postinst, postrm: lca.postrm}\n")
	run := func(v2 string) string {
		root := testenv.DpkgRoot(t)
		return string(testenv.AsRoot(t, quietDpkg+`dpkg -i "$V1/lca_1.0.0-1_amd64.deb"
dpkg -i "$V2/lca_2.0.0-1_amd64.deb" || echo "upgrade failed"
[ -L "$ROOT/opt/lc" ] && echo "/opt/lc is a link to $(readlink "$ROOT/opt/lc")"
[ -e "$ROOT/opt/lc/bin/lc" ] && [ ! -L "$ROOT/opt/lc" ] && echo "/opt/lc/bin/lc is in a directory"
[ -e "$ROOT/usr/lib/lc/bin/lc" ] && echo "/usr/lib/lc/bin/lc is there"
true
`, "ROOT="+root, "V1="+v1, "V2="+v2, "PATH=/usr/sbin:/usr/bin:/sbin:/bin"))
	}
	if got, want := run(bare), "/usr/lib/lc/bin/lc is there\n"; got != want {
		t.Errorf("without fragments:\n%s\nwant:\n%s", got, want)
	}
	if got, want := run(fixed), "/opt/lc is a link to /usr/lib/lc\n/usr/lib/lc/bin/lc is there\n"; got != want {
		t.Errorf("with the fragments verify names:\n%s\nwant:\n%s", got, want)
	}
}

// TestFileToDirectoryUpgradeEndToEnd upgrades with real dpkg a recipe
// whose file /usr/lib/lc of package lca is a directory of package lcb now,
// and whose directory /opt/lc of lca is a file of lcb, lcb unpacked first:
// without relations dpkg refuses ("trying to overwrite") and lcb stays at
// 1.0.0, which `updeb verify --base` fails on (movedPaths); with the
// replaces and breaks it tells to write, the upgrade goes through.
func TestFileToDirectoryUpgradeEndToEnd(t *testing.T) {
	testenv.RequireTool(t, "tar", "dpkg", "dpkg-deb")
	const lcy = "      - {source: lc, path: bin/lc, dest: /usr/bin/lcy}\n"
	v1 := buildLC(t, "1.0.0", lcPackage("lca", "    files:\n      - {source: lc, path: bin/lc, dest: /usr/lib/lc}\n      - {source: lc, path: bin/lc, dest: /opt/lc/bin/lc}\n")+
		lcPackage("lcb", "    files:\n"+lcy))
	v2 := func(relations string) string {
		return buildLC(t, "2.0.0", lcPackage("lca", "    files:\n      - {source: lc, path: bin/lc, dest: /usr/bin/lcz}\n")+
			lcPackage("lcb", relations+"    files:\n"+lcy+"      - {source: lc, path: bin/lc, dest: /usr/lib/lc/bin/lc}\n      - {source: lc, path: bin/lc, dest: /opt/lc}\n"))
	}
	bare, related := v2(""), v2("    replaces: [\"lca (<< 2.0.0-1)\"]\n    breaks: [\"lca (<< 2.0.0-1)\"]\n")
	run := func(v2 string) string {
		return upgradeLCBFirst(t, v1, v2, `[ -f "$ROOT/usr/lib/lc/bin/lc" ] && echo "/usr/lib/lc/bin/lc"
[ -f "$ROOT/opt/lc" ] && echo "/opt/lc is a file"
true
`)
	}
	if got, want := run(bare), "trying to overwrite directory '/opt/lc' in package lca 1.0.0-1 with nondirectory\nlca 2.0.0-1 ii |lcb 1.0.0-1 ii |\n"; got != want {
		t.Errorf("without relations:\n%s\nwant:\n%s", got, want)
	}
	if got, want := run(related), "lca 2.0.0-1 ii |lcb 2.0.0-1 ii |\n/usr/lib/lc/bin/lc\n/opt/lc is a file\n"; got != want {
		t.Errorf("with replaces and breaks:\n%s\nwant:\n%s", got, want)
	}
}

// TestDroppedPackageEndToEnd installs packages lca and lcb of version 1 with
// real dpkg and asks apt (simulating, against that root's dpkg database) to
// upgrade lcb to version 2 of a recipe that dropped lca: apt keeps lca,
// which then stays installed for good (`updeb verify --base` reviews it,
// packageGone), unless lcb breaks it, as that review line tells.
func TestDroppedPackageEndToEnd(t *testing.T) {
	testenv.RequireTool(t, "tar", "dpkg", "dpkg-deb", "apt-get")
	const lcx, lcy = "    files:\n      - {source: lc, path: bin/lc, dest: /usr/bin/lcx}\n", "    files:\n      - {source: lc, path: bin/lc, dest: /usr/bin/lcy}\n"
	v1 := buildLC(t, "1.0.0", lcPackage("lca", lcx)+lcPackage("lcb", lcy))
	bare, broken := buildLC(t, "2.0.0", lcPackage("lcb", lcy)), buildLC(t, "2.0.0", lcPackage("lcb", "    breaks: [\"lca (<< 2.0.0-1)\"]\n"+lcy))
	root := testenv.DpkgRoot(t)
	got := testenv.AsRoot(t, `dpkg --root="$ROOT" --admindir="$ROOT/var/lib/dpkg" --force-script-chrootless --force-not-root --log=/dev/null -i "$V1/lca_1.0.0-1_amd64.deb" "$V1/lcb_1.0.0-1_amd64.deb" >/dev/null
mkdir -p "$ROOT/var/cache/apt/archives/partial" "$ROOT/var/lib/apt/lists/partial"
apt() { apt-get -s -o Dir="$ROOT" -o Dir::State::status="$ROOT/var/lib/dpkg/status" -o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts=/dev/null -o Debug::NoLocking=1 install "$1/lcb_2.0.0-1_amd64.deb" 2>&1 | grep -E '^(Remv|Inst|E:)' | sed 's/ (.*//'; }
echo "without relations:"; apt "$BARE"
echo "lcb breaks lca:"; apt "$BROKEN"
`, "ROOT="+root, "V1="+v1, "BARE="+bare, "BROKEN="+broken, "PATH=/usr/sbin:/usr/bin:/sbin:/bin")
	if want := "without relations:\nInst lcb [1.0.0-1]\nlcb breaks lca:\nRemv lca [1.0.0-1]\nInst lcb [1.0.0-1]\n"; string(got) != want {
		t.Errorf("apt upgrading lcb:\n%s\nwant:\n%s", got, want)
	}
}

// lcHelper is a package whose helper is setuid to its own system user.
const lcHelper = `  - name: lcd
    summary: lc daemon
    description: |
      A test package.
    section: admin
    files:
      - {source: lc, path: bin/lc, dest: /usr/lib/lcd/helper, mode: "4750", owner: updebtestlcd, group: root, special-bits: "runs as updebtestlcd"}
    system-user: {name: updebtestlcd}
`

// TestSetIDSystemUserEndToEnd installs with real dpkg a package whose file
// is setuid to the package's own system user: dpkg unpacks a first
// installation's file as root (the account does not exist yet), so the
// package carries it without the bit, which the postinst sets after chown;
// once unpacked, before configure (or where the postinst fails), it is
// never setuid root. Configured, it is the user's and setuid; an upgrade
// keeps an admin's dpkg-statoverride (here: no setuid bit) as it is.
func TestSetIDSystemUserEndToEnd(t *testing.T) {
	testenv.RequireTool(t, "tar", "dpkg", "dpkg-deb", "dpkg-statoverride", "useradd")
	v1, v2 := buildLC(t, "1.0.0", lcHelper), buildLC(t, "2.0.0", lcHelper)
	root := testenv.DpkgRoot(t)
	testenv.BasePasswd(t, root)
	got := testenv.AsRoot(t, quietDpkgForceDepends+`helper() { echo "$1: $(stat -c '%u:%g %a' "$ROOT/usr/lib/lcd/helper" | sed "s/^$uid:/updebtestlcd:/; s/^0:/root:/; s/:0 /:root /")"; }
uid=none
dpkg --unpack "$V1/lcd_1.0.0-1_amd64.deb"; helper unpacked
dpkg --configure lcd >/dev/null
uid=$(grep '^updebtestlcd:' "$ROOT/etc/passwd" | cut -d: -f3); helper configured
dpkg -i "$V2/lcd_2.0.0-1_amd64.deb"; helper upgraded
dpkg-statoverride --root="$ROOT" --add root root 0755 /usr/lib/lcd/helper
dpkg -i "$V1/lcd_1.0.0-1_amd64.deb"; helper "overridden, downgraded"
`, "ROOT="+root, "V1="+v1, "V2="+v2, "PATH=/usr/sbin:/usr/bin:/sbin:/bin")
	want := "unpacked: root:root 750\nconfigured: updebtestlcd:root 4750\nupgraded: updebtestlcd:root 4750\noverridden, downgraded: root:root 755\n"
	if string(got) != want {
		t.Errorf("a setuid file of the system user:\n%s\nwant:\n%s", got, want)
	}
}

// TestStatOverrideOfAGlobPathEndToEnd: the postinst asks dpkg-statoverride
// whether an admin overrode a path of the system user before it chowns it;
// --list takes a glob, so a path with [ ] must be asked for escaped, or the
// admin's override of it is not found and the upgrade's postinst undoes it.
func TestStatOverrideOfAGlobPathEndToEnd(t *testing.T) {
	testenv.RequireTool(t, "tar", "dpkg", "dpkg-deb", "dpkg-statoverride", "useradd")
	const pkg = `  - name: lcd
    summary: lc daemon
    description: |
      A test package.
    section: admin
    files:
      - {source: lc, path: bin/lc, dest: "/usr/lib/lcd/x[1]/helper", mode: "0750", owner: updebtestlcd, group: root}
    system-user: {name: updebtestlcd}
`
	v1, v2 := buildLC(t, "1.0.0", pkg), buildLC(t, "2.0.0", pkg)
	root := testenv.DpkgRoot(t)
	testenv.BasePasswd(t, root)
	got := testenv.AsRoot(t, quietDpkgForceDepends+`dpkg -i "$V1/lcd_1.0.0-1_amd64.deb"
dpkg-statoverride --root="$ROOT" --admindir="$ROOT/var/lib/dpkg" --add root root 0700 '/usr/lib/lcd/x[1]/helper'
dpkg -i "$V2/lcd_2.0.0-1_amd64.deb"
stat -c '%u:%g %a' "$ROOT/usr/lib/lcd/x[1]/helper"
`, "ROOT="+root, "V1="+v1, "V2="+v2, "PATH=/usr/sbin:/usr/bin:/sbin:/bin")
	if string(got) != "0:0 700\n" {
		t.Errorf("after an upgrade, the overridden path is %s, want the admin's 0:0 700", got)
	}
}
