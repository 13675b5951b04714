package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/testkit/testenv"
)

// ksVersion is the Debian version of the ks recipe: an epoch, a pre-release
// (~) and build metadata (+) in the upstream version, a backport revision.
const ksVersion = "2:1.2.3~rc.1+build.5-1~bpo12+1"

// ksPackages are three packages of one recipe that together use every
// feature a recipe has: ks (a dynamic ELF binary, a system user with a home
// and files it owns, a setuid root file, a setgid file of the system user,
// hardlinks of each, two alternatives, a service, a timer and a socket,
// conffiles in /etc and /etc/default, an interest in a file trigger,
// fragments with and without #UPDEB#, symlinks relative and absolute (one
// written absolute within its top-level folder), empty folders, a space and
// UTF-8 in names, a long description); ks-common, Architecture: all, which
// ks depends on exactly; ks-transitional, with nothing but its docs.
const ksPackages = `  - name: ks
    summary: kitchen sink daemon
    description: |
      ks is a test daemon that combines every feature of a recipe: a system
      user with a home and files it owns, setuid and setgid files, several
      alternatives, systemd units of three kinds, conffiles in /etc and in
      /etc/default, triggers, maintainer-script fragments, a dynamic ELF
      binary, symlinks, hardlinks, empty folders and names with spaces and
      UTF-8 in them.

      A second paragraph makes the description long:
       an indented line is shown verbatim,
       and so is this one.
    section: admin
    dynamic: true
    depends: ["ks-common (= ` + ksVersion + `)"]
    files:
      - {source: ks, path: bin/ks, dest: /usr/bin/ks}
      - {source: ks, path: bin/ks, dest: /usr/sbin/kspriv, mode: "4755", special-bits: "binds a low port"}
      - {source: ks, path: bin/ks, dest: /usr/libexec/ks/spool, mode: "2750", owner: ks, group: ks, special-bits: "writes the ks spool"}
      - {file: ks.service, dest: /lib/systemd/system/ks.service}
      - {file: ks.timer, dest: /lib/systemd/system/ks.timer}
      - {file: ks.socket, dest: /lib/systemd/system/ks.socket}
      - {file: ks.conf, dest: /etc/ks/ks.conf, mode: "0640", group: ks}
      - {file: ks.default, dest: /etc/default/ks}
      - {file: ks.conf, dest: "/usr/share/ks/a file ünï.conf", mode: "0640"}
      - {file: ks.conf, dest: /var/lib/ks/state, mode: "0600", owner: ks, group: ks}
    directories:
      - {path: /var/lib/ks, mode: "0750", owner: ks, group: ks}
      - {path: /var/spool/ks, mode: "0770", owner: ks, group: ks}
      - /var/cache/ks
      - /usr/lib/ks/plugins
      - "/usr/share/ks/empty ü"
    symlinks:
      - {dest: /usr/bin/ks-rel, target: ks}
      - {dest: /usr/bin/ks-abs, target: /usr/bin/ks}
      - {dest: /usr/share/ks/conf, target: /etc/ks/ks.conf}
    hardlinks:
      - {dest: /usr/bin/ks-hard, target: /usr/bin/ks}
      - {dest: /usr/sbin/kspriv2, target: /usr/sbin/kspriv}
      - {dest: /usr/libexec/ks/spool2, target: /usr/libexec/ks/spool}
    system-user: {name: ks, home: /var/lib/ks}
    systemd-units: [ks.service, ks.timer, ks.socket]
    alternatives:
      - {name: kstool, link: /usr/bin/kstool, path: /usr/bin/ks, priority: 50}
      - {name: ksd, link: /usr/sbin/ksd, path: /usr/sbin/kspriv, priority: 10}
    scripts: {preinst: ks.preinst, postinst: ks.postinst, prerm: ks.prerm, postrm: ks.postrm}
    triggers: [interest-noawait /usr/lib/ks/plugins]
  - name: ks-common
    architecture: all
    summary: kitchen sink data
    description: |
      Architecture-independent data for ks, the kitchen sink daemon: one
      file that every architecture's ks reads.
    section: admin
    files:
      - {file: ks.conf, dest: /usr/share/ks-common/data.conf}
  - name: ks-transitional
    architecture: all
    summary: transitional package for ks
    description: |
      This is a transitional package that depends on ks, the kitchen sink
      daemon. It can safely be removed.
    section: oldlibs
    depends: ["ks (= ` + ksVersion + `)"]
`

// TestKitchenSinkDebianTools builds the ks recipe and reads its packages
// as a Debian developer does: lintian at every level, experimental tags
// included, raises nothing the packages do not override; the md5sums list
// every regular file but the conffiles exactly once, with its digest;
// dpkg installs the three packages into a throwaway root (the system user,
// owners and special bits, alternatives, the fragments with their
// arguments) and purges them, leaving only the account.
func TestKitchenSinkDebianTools(t *testing.T) {
	tools := testenv.RequireTool(t, "tar", "dpkg", "dpkg-deb", "lintian", "md5sum", "true", "useradd", "groupadd", "dpkg-shlibdeps")
	root, mirror := project(t)
	// A dynamically linked ELF program, as Debian builds it (useradd(8)).
	elf, err := os.ReadFile(tools[6])
	if err != nil {
		t.Fatal(err)
	}
	binRecipe(t, root, mirror, "ks", elf, ksPackages, map[string]string{
		"ks.service": "[Unit]\nDescription=ks\nDocumentation=man:ks(8)\n\n[Service]\nExecStart=/usr/bin/ks\nUser=ks\nNoNewPrivileges=yes\nProtectSystem=strict\nProtectHome=yes\nPrivateTmp=yes\n\n[Install]\nWantedBy=multi-user.target\n",
		"ks.timer":   "[Unit]\nDescription=ks timer\nDocumentation=man:ks(8)\n\n[Timer]\nOnCalendar=daily\n\n[Install]\nWantedBy=timers.target\n",
		"ks.socket":  "[Unit]\nDescription=ks socket\nDocumentation=man:ks(8)\n\n[Socket]\nListenStream=1234\n\n[Install]\nWantedBy=sockets.target\n",
		"ks.conf":    "key = value\n",
		"ks.default": "# options of ks\nKS_OPTS=\n",
		// The fragments write into $DPKG_ROOT: dpkg runs them chrootless here.
		"ks.preinst":  "echo \"preinst $1\" >> \"$DPKG_ROOT/ks.log\"\n",
		"ks.postinst": "case \"$1\" in\n  configure)\n    #UPDEB#\n    echo \"postinst $1 ($(stat -c %u:%g:%a \"$DPKG_ROOT/usr/libexec/ks/spool\"))\" >> \"$DPKG_ROOT/ks.log\"\n    ;;\n  triggered) echo \"postinst $1 $2\" >> \"$DPKG_ROOT/ks.log\" ;;\nesac\n",
		"ks.prerm":    "echo \"prerm $1\" >> \"$DPKG_ROOT/ks.log\"\n",
		"ks.postrm":   "if [ \"$1\" = purge ]; then\n  echo \"postrm $1\" >> \"$DPKG_ROOT/ks.log\"\nfi\n",
	})
	rp := filepath.Join(root, "recipes/ks.yaml")
	text, err := os.ReadFile(rp)
	if err != nil {
		t.Fatal(err)
	}
	text = []byte(strings.Replace(string(text), "version: 1.0.0\n", "version: 1.2.3-rc.1+build.5\nepoch: 2\nrevision: \"1~bpo12+1\"\n", 1))
	if err := os.WriteFile(rp, text, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	if _, err := Run(context.Background(), jobs(t, root, "amd64", "ks"), options(t, mirror, out)); err != nil {
		t.Fatal(err)
	}
	v := ksVersion[2:]
	ks, common, trans := filepath.Join(out, "ks_"+v+"_amd64.deb"), filepath.Join(out, "ks-common_"+v+"_all.deb"), filepath.Join(out, "ks-transitional_"+v+"_all.deb")

	testenv.LintianExperimental(t, map[string]string{
		"spelling-error-in-binary": "the stand-in for upstream's binary is useradd(8), whose text says \"allow to\"",
	}, ks, common, trans)

	for _, c := range []struct{ deb, member, want string }{
		{ks, "conffiles", "/etc/default/ks\n/etc/ks/ks.conf\n"},
		{ks, "triggers", "interest-noawait /usr/lib/ks/plugins\n"},
	} {
		if got := string(testenv.Run(t, "dpkg-deb", "-I", c.deb, c.member)); got != c.want {
			t.Errorf("%s's %s:\n%s\nwant:\n%s", filepath.Base(c.deb), c.member, got, c.want)
		}
	}
	// Depends names libc6 as dpkg-shlibdeps does for the binary (useradd's
	// other libraries, libaudit1 and the like, are a warning of the build).
	want := "Version: " + ksVersion + "\nDepends: ks-common (= " + ksVersion + "), adduser, " + libc6In(shlibdeps(t, elf)) + "\n"
	if got := string(testenv.Run(t, "dpkg-deb", "-f", ks, "Version", "Depends")); got != want {
		t.Errorf("ks's control fields:\n%s\nwant:\n%s", got, want)
	}

	// md5sums as debsums reads them: every regular file but the
	// conffiles, once, with its digest.
	for _, deb := range []string{ks, common, trans} {
		tree := filepath.Join(t.TempDir(), "tree")
		testenv.Run(t, "dpkg-deb", "-R", deb, tree)
		got := string(testenv.Run(t, "sh", "-ec", `cd "$1"
find . -path ./DEBIAN -prune -o -type f -printf '%P\n' | LC_ALL=C sort > ../files
{ [ -f DEBIAN/conffiles ] && sed 's,^/,,' DEBIAN/conffiles; true; } | LC_ALL=C sort > ../conffiles
cut -c35- DEBIAN/md5sums | LC_ALL=C sort > ../listed
LC_ALL=C comm -23 ../files ../conffiles | diff - ../listed
md5sum --quiet -c DEBIAN/md5sums
echo ok`, "sh", tree))
		if got != "ok\n" {
			t.Errorf("%s's md5sums:\n%s", filepath.Base(deb), got)
		}
	}

	dpkgRoot := testenv.DpkgRoot(t)
	testenv.BasePasswd(t, dpkgRoot)
	got := testenv.AsRoot(t, `mkdir -p "$ROOT/etc/alternatives" "$ROOT/var/lib/dpkg/alternatives"
`+quietDpkgForceDepends+`dpkg -i "$COMMON" "$KS" "$TRANS"
cd "$ROOT"
ids="s/\([ (]\)0:0/\1root:root/; s/\([ (]\)0:$(grep '^ks:' etc/group | cut -d: -f3)\([ :]\)/\1root:ks\2/; s/\([ (]\)$(grep '^ks:' etc/passwd | cut -d: -f3):$(grep '^ks:' etc/group | cut -d: -f3)\([ :]\)/\1ks:ks\2/"
find usr/bin usr/sbin usr/libexec usr/lib/ks usr/share/ks etc/ks etc/default var/lib/ks var/spool/ks var/cache/ks -printf '%p %y %m %U:%G %n %l\n' | sed "$ids" | LC_ALL=C sort
readlink etc/alternatives/kstool etc/alternatives/ksd
echo ---
dpkg -P ks-transitional ks ks-common
find . -path ./var/lib/dpkg -prune -o -path ./etc -prune -o ! -type d -print | LC_ALL=C sort
grep -c '^ks:' etc/passwd etc/group
sed "$ids" ks.log`, "ROOT="+dpkgRoot, "KS="+ks, "COMMON="+common, "TRANS="+trans, "PATH=/usr/sbin:/usr/bin:/sbin:/bin")
	want = `etc/default d 755 root:root 2 
etc/default/ks f 644 root:root 1 
etc/ks d 755 root:root 2 
etc/ks/ks.conf f 640 root:ks 1 
usr/bin d 755 root:root 2 
usr/bin/ks f 755 root:root 2 
usr/bin/ks-abs l 777 root:root 1 ks
usr/bin/ks-hard f 755 root:root 2 
usr/bin/ks-rel l 777 root:root 1 ks
usr/bin/kstool l 777 root:root 1 /etc/alternatives/kstool
usr/lib/ks d 755 root:root 3 
usr/lib/ks/plugins d 755 root:root 2 
usr/libexec d 755 root:root 3 
usr/libexec/ks d 755 root:root 2 
usr/libexec/ks/spool f 2750 ks:ks 2 
usr/libexec/ks/spool2 f 2750 ks:ks 2 
usr/sbin d 755 root:root 2 
usr/sbin/ksd l 777 root:root 1 /etc/alternatives/ksd
usr/sbin/kspriv f 4755 root:root 2 
usr/sbin/kspriv2 f 4755 root:root 2 
usr/share/ks d 755 root:root 3 
usr/share/ks/a file ünï.conf f 640 root:root 1 
usr/share/ks/conf l 777 root:root 1 /etc/ks/ks.conf
usr/share/ks/empty ü d 755 root:root 2 
var/cache/ks d 755 root:root 2 
var/lib/ks d 750 ks:ks 2 
var/lib/ks/state f 600 ks:ks 1 
var/spool/ks d 770 ks:ks 2 
/usr/bin/ks
/usr/sbin/kspriv
---
./ks.log
./var/log/alternatives.log
etc/passwd:1
etc/group:1
preinst install
postinst configure (ks:ks:2750)
prerm remove
postrm purge
`
	if string(got) != want {
		t.Errorf("installed and purged:\n%s\nwant:\n%s", got, want)
	}
}
