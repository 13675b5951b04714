package recipe

import "strings"

// baseUsers and baseGroups are the static system accounts of Debian's
// base-passwd (3.6.1, Debian 12: /usr/share/base-passwd/passwd.master and
// group.master), the ones every Debian system has with these ids. A recipe
// file owned by one of them carries the name and the id in data.tar, as
// dpkg-deb writes it; any other name carries id 0 and is resolved by dpkg
// on the installing system (see recipes/README.md, "Modes and owners").
var baseUsers = map[string]int{
	"root": 0, "daemon": 1, "bin": 2, "sys": 3, "sync": 4, "games": 5, "man": 6, "lp": 7, "mail": 8,
	"news": 9, "uucp": 10, "proxy": 13, "www-data": 33, "backup": 34, "list": 38, "irc": 39, "_apt": 42,
	"nobody": 65534,
}

var baseGroups = map[string]int{
	"root": 0, "daemon": 1, "bin": 2, "sys": 3, "adm": 4, "tty": 5, "disk": 6, "lp": 7, "mail": 8,
	"news": 9, "uucp": 10, "man": 12, "proxy": 13, "kmem": 15, "dialout": 20, "fax": 21, "voice": 22,
	"cdrom": 24, "floppy": 25, "tape": 26, "sudo": 27, "audio": 29, "dip": 30, "www-data": 33,
	"backup": 34, "operator": 37, "list": 38, "irc": 39, "src": 40, "shadow": 42, "utmp": 43,
	"video": 44, "sasl": 45, "plugdev": 46, "staff": 50, "games": 60, "users": 100, "nogroup": 65534,
}

// basePackages are the packages every Debian 12 system has and cannot do
// without, and why: those marked Essential: yes, those of Priority:
// required (the archive's and the packages' own, which differ for apt,
// liblocale-gettext-perl and sensible-utils), those marked Protected: yes,
// and what they all run on or what boots and updates a node (libc6,
// systemd, init, apt's keys). A recipe's package of one of these names,
// at a higher version, would replace the real one on every node at the
// next apt-get upgrade; Provides, Replaces, Conflicts or Breaks on one
// would stand in for it, overwrite its files, or have apt remove it.
var basePackages = func() map[string]string {
	m := map[string]string{}
	for why, names := range map[string]string{
		"Essential: yes": `base-files base-passwd bash bsdutils coreutils dash debianutils diffutils dpkg
			findutils grep gzip hostname init-system-helpers libc-bin login ncurses-base ncurses-bin
			perl-base sed sysvinit-utils tar util-linux`,
		"Priority: required": `apt debconf e2fsprogs liblocale-gettext-perl libpam-modules libpam-modules-bin
			libpam-runtime mawk mount passwd sensible-utils tzdata`,
		"Protected: yes": `libcrypt1 libgcc-s1`,
		"needed by the essential packages or to boot and update a node": `libc6 systemd systemd-sysv
			init adduser gpgv debian-archive-keyring`,
	} {
		for _, n := range strings.Fields(names) {
			m[n] = why
		}
	}
	return m
}()

// IsBasePackage reports whether name is one of the packages every Debian
// system has (basePackages): a relation that installs it installs nothing
// new on a node.
func IsBasePackage(name string) bool {
	_, ok := basePackages[name]
	return ok
}
