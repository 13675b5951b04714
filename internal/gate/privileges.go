package gate

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/pkg/deb"
)

// diffPrivileges adds to rv, for every architecture r resolves for, what
// the packages ask of the installing system that old's (nil: a new recipe)
// did not: a path with a special bit, an owner other than root or a mode
// other than updeb's defaults that is new, or whose mode or owner changed;
// a maintainer-script fragment added, changed (by content) or removed;
// triggers changed. A change every architecture shares is one item. An
// architecture old lacks is compared with one old has: the same packages
// built for another architecture ask nothing new of the system.
func diffPrivileges(r, old *recipe.Recipe, po recipe.ResolveOptions, rv *reviews) {
	var other *recipe.Resolved // the base's packages on an architecture it has
	if old != nil {
		for _, a := range old.ArchNames() {
			if p, err := resolveFor(old, a, po); err == nil {
				other = p
				break
			}
		}
	}
	reviewPerArch(r, old, po, rv, func(np, op *recipe.Resolved) []privilegeChange {
		if op == nil {
			op = other
		}
		return privilegeChanges(r, old, np, op)
	})
}

// reviewPerArch adds the review items find returns for each architecture
// of r (op nil where old lacks it), one item per package and message with
// the architectures that share it.
func reviewPerArch(r, old *recipe.Recipe, po recipe.ResolveOptions, rv *reviews, find func(np, op *recipe.Resolved) []privilegeChange) {
	type found struct {
		it    ReviewItem
		msg   string
		archs []string
	}
	var order []string
	byKey := map[string]*found{}
	for _, a := range r.ArchNames() {
		np, err := resolveFor(r, a, po)
		if err != nil {
			continue
		}
		var op *recipe.Resolved
		if old != nil {
			op, _ = resolveFor(old, a, po) // nil: the architecture is new
		}
		for _, f := range find(np, op) {
			msg := fmt.Sprintf("package %s [ARCHS]: %s", f.pkg, f.msg)
			key := string(f.it.Kind) + "\x00" + msg
			if byKey[key] == nil {
				byKey[key] = &found{it: f.it, msg: msg}
				order = append(order, key)
			}
			byKey[key].archs = append(byKey[key].archs, a)
		}
	}
	sort.Strings(order)
	for _, key := range order {
		f := byKey[key]
		rv.add(f.it, strings.Replace(f.msg, "[ARCHS]", "["+strings.Join(f.archs, ", ")+"]", 1))
	}
}

// privilegeChange is one item of diffPrivileges, for one architecture:
// the package, the item (Subject: the path, script or "triggers") and
// what changed, for people.
type privilegeChange struct {
	pkg string
	it  ReviewItem
	msg string
}

// access is what the gate reviews of one path: its mode (with the special
// bits), its owner, and the recipe's reason for a special bit.
type access struct {
	mode    fs.FileMode
	owner   deb.Owner
	special string
	dir     bool
}

func (a access) String() string {
	s := fmt.Sprintf("%04o", deb.UnixMode(a.mode))
	if own := ownerString(a.owner); own != "root:root" {
		s += " " + own
	}
	if a.special != "" {
		s += fmt.Sprintf(" (special-bits: %q)", a.special)
	}
	return s
}

func ownerString(o deb.Owner) string {
	return cmp.Or(o.User, "root") + ":" + cmp.Or(o.Group, "root")
}

// isDefault reports a path that is what updeb gives without being asked.
func (a access) isDefault() bool {
	if ownerString(a.owner) != "root:root" || a.special != "" || a.mode&^fs.ModePerm != 0 {
		return false
	}
	return a.mode == 0o755 || !a.dir && a.mode == 0o644
}

// kind is the review kind of a's change from was (existed: there was a path).
func (a access) kind(was access, existed bool) Kind {
	switch {
	case a.mode&^fs.ModePerm != 0 || existed && was.mode&^fs.ModePerm != 0:
		return KindSpecialBits
	case ownerString(a.owner) != ownerString(was.owner) || !existed && ownerString(a.owner) != "root:root":
		return KindOwner
	}
	return KindMode
}

// accessOf maps each file, hardlink and directory of a package to its access.
func accessOf(p *recipe.ResolvedPackage) map[string]access {
	m := map[string]access{}
	if p == nil {
		return m
	}
	for _, f := range p.Files {
		m[f.Dest] = access{mode: f.Mode, owner: f.Owner, special: f.SpecialBits}
	}
	for _, d := range p.Directories {
		m[d.Path+"/"] = access{mode: d.Mode, owner: d.Owner, special: d.SpecialBits, dir: true}
	}
	for _, l := range p.Hardlinks {
		if a, ok := m[l.Target]; ok {
			m[l.Dest] = a // another name of the same file: a setuid file's hardlink is setuid
		}
	}
	return m
}

// privilegeChanges compares the packages of np (resolved from r) with those
// of op (nil: none; resolved from old). A package whose name follows the
// version (istioctl-{{.Version}}, another name at every bump) is compared
// with old's package of the same name template.
func privilegeChanges(r, old *recipe.Recipe, np, op *recipe.Resolved) []privilegeChange {
	olds := map[string]*recipe.ResolvedPackage{}
	oldUsers := map[string]*recipe.SystemUser{}
	oldForms := map[string]templated{} // by package
	byTemplate := map[string]string{}  // the base's package of each name template
	if op != nil {
		for i := range op.Packages {
			olds[op.Packages[i].Name] = &op.Packages[i]
			if i < len(old.Packages) {
				oldUsers[op.Packages[i].Name] = old.Packages[i].SystemUser
				oldForms[op.Packages[i].Name] = templatedOf(old, i, &op.Packages[i], op.Arch)
				byTemplate[old.Packages[i].Name] = op.Packages[i].Name
			}
		}
	}
	var out []privilegeChange
	for i := range np.Packages {
		n := &np.Packages[i]
		oldName := n.Name // the package's name at the base
		if i < len(r.Packages) && olds[oldName] == nil {
			if q, ok := byTemplate[r.Packages[i].Name]; ok && followsVersion(old, r.Packages[i].Name) {
				oldName = q
			}
		}
		o := olds[oldName]
		forms := templatedOf(r, i, n, np.Arch)
		if i < len(r.Packages) {
			out = append(out, systemUserChanges(n.Name, r.Packages[i].SystemUser, oldUsers[oldName], o != nil)...)
		}
		oldAccess := accessOf(o)
		oldPath := map[string]string{} // the base's path of each templated path
		for p, t := range oldForms[oldName].paths {
			oldPath[t] = p
		}
		// basePath is the base's path of p: for a path that follows the
		// version, the base's path of the same template.
		basePath := func(p string) string {
			if q, ok := oldPath[forms.paths[p]]; ok && forms.paths[p] != "" {
				return q
			}
			return p
		}
		for p, a := range accessOf(n) {
			was, existed := oldAccess[basePath(p)]
			it := ReviewItem{Kind: a.kind(was, existed), Subject: p, New: []string{a.String()}}
			switch {
			case !existed && !a.isDefault():
				out = append(out, privilegeChange{n.Name, it, fmt.Sprintf("%s is %s", p, a)})
			case existed && a != was:
				it.Old = []string{was.String()}
				out = append(out, privilegeChange{n.Name, it, fmt.Sprintf("%s: %s -> %s", p, was, a)})
			}
		}
		var oldFrag []recipe.Fragment
		var oldTriggers []string
		if o != nil {
			oldFrag, oldTriggers = o.Fragments, o.Triggers
		}
		oldFiles := map[string]recipe.ResolvedFile{} // o's, by destination
		if o != nil {
			for _, f := range o.Files {
				oldFiles[f.Dest] = f
			}
		}
		out = append(out, rootConfigChanges(n, o, oldFiles, r, old, forms.origins, oldForms[oldName].origins, basePath)...)
		out = append(out, fragmentChanges(n.Name, r, old, n.Fragments, oldFrag)...)
		for _, f := range n.Files {
			// A source's file from an unsigned source where a signed one's
			// was; the recipe's own file (bytes no upstream signature vouches
			// for) where a source's file was, new, or with other content:
			// under the same path and mode, changes: has nothing to show.
			// In a rootConfig place, rootConfigChanges says so; a new
			// recipe's files come with its new-recipe line.
			if _, root := rootConfigPlace(f.Dest); root || op == nil {
				continue
			}
			was, now := oldForms[oldName].origins[basePath(f.Dest)], forms.origins[f.Dest]
			switch {
			case f.LocalPath == "":
				// A source's file that came from a signed source and comes
				// from one with signature: none now: its bytes are the
				// pin the change wrote.
				wasSrc, nowSrc := oldForms[oldName].sources[basePath(f.Dest)], forms.sources[f.Dest]
				if why, unsigned := unsignedSource(r, nowSrc); unsigned && wasSrc != "" && wasSrc != nowSrc {
					if _, before := unsignedSource(old, wasSrc); !before {
						out = append(out, privilegeChange{n.Name, ReviewItem{Kind: KindLocalFile, Subject: f.Dest, Old: []string{was}, New: []string{now}},
							fmt.Sprintf("%s is %s now, was %s: source %s has no signature (%q), so no upstream signature vouches for its bytes, only the pin the change wrote; review them before merging", f.Dest, now, was, nowSrc, why)})
					}
				}
			case was != "" && !strings.HasPrefix(was, "file "):
				out = append(out, privilegeChange{n.Name, ReviewItem{Kind: KindLocalFile, Subject: f.Dest, Old: []string{was}, New: []string{now}},
					fmt.Sprintf("%s is %s now, was %s: its bytes are the change's own, which no upstream signature vouches for; review them before merging", f.Dest, now, was)})
			case localContent(r, f.LocalPath) != localContent(old, oldFiles[basePath(f.Dest)].LocalPath):
				how := "changed"
				if was == "" {
					how = "added"
				}
				it := ReviewItem{Kind: KindLocalFile, Subject: f.Dest, New: []string{now}}
				if was != "" {
					it.Old = []string{was}
				}
				out = append(out, privilegeChange{n.Name, it,
					fmt.Sprintf("%s %s (%s): its bytes are the change's own, which no upstream signature vouches for; diff it against the base revision", f.Dest, how, now)})
			}
		}
		if !slices.Equal(n.Triggers, oldTriggers) {
			added, removed := listDiff(oldTriggers, n.Triggers)
			out = append(out, privilegeChange{n.Name, ReviewItem{Kind: KindTriggers, Subject: "triggers", Old: oldTriggers, New: n.Triggers, Added: added, Removed: removed},
				fmt.Sprintf("triggers: %s, were %s", joinOr(n.Triggers, "none"), joinOr(oldTriggers, "none"))})
		}
		out = append(out, alternativeChanges(n, o, forms.alternatives, oldForms[oldName].alternatives)...)
	}
	return out
}

// unsignedSource reports whether r's source name has signature: none, and
// the reason it gives.
func unsignedSource(r *recipe.Recipe, name string) (string, bool) {
	if r == nil {
		return "", false
	}
	for _, src := range r.Sources {
		if src.Name == name {
			sig := src.Signature
			return sig.None, sig.URL == "" && sig.Sigstore == nil
		}
	}
	return "", false
}

// templated is what the gate compares of a package as its recipe writes
// it, rendered for one architecture with the version left out
// (Recipe.RenderPerArch): a path that follows the version
// (/opt/tool-{{.Version}}/bin/tool) is another path at every bump, as the
// recipe already said.
type templated struct {
	alternatives []string          // the link, path and priority of each alternative, in the order of the resolved ones
	origins      map[string]string // where each file and link comes from, by its destination as resolved
	sources      map[string]string // the source each file comes from (none for the recipe's own), by its destination as resolved
	paths        map[string]string // each file's, link's and directory's path (a directory's as accessOf's keys), by the path as resolved
}

// templatedOf is templated for package i of r, resolved as p for
// architecture arch (nothing known where r has no such package, or its
// mappings are not the resolved ones one for one).
func templatedOf(r *recipe.Recipe, i int, p *recipe.ResolvedPackage, arch string) templated {
	t := templated{origins: map[string]string{}, sources: map[string]string{}, paths: map[string]string{}}
	if r == nil || i >= len(r.Packages) {
		return t
	}
	rp := &r.Packages[i]
	at := func(text string) string { return r.RenderPerArch(text)[arch] }
	for _, a := range rp.Alternatives {
		t.alternatives = append(t.alternatives, fmt.Sprintf("%s -> %s, priority %d", at(a.Link), at(a.Path), a.Priority))
	}
	if len(rp.Directories) <= len(p.Directories) { // then the parents it inherits
		for j, d := range rp.Directories {
			t.paths[p.Directories[j].Path+"/"] = at(d.Path) + "/"
		}
	}
	if len(rp.Files) == len(p.Files) {
		for j, f := range rp.Files {
			t.paths[p.Files[j].Dest] = at(f.Dest)
			t.origins[p.Files[j].Dest] = "source " + f.Source
			t.sources[p.Files[j].Dest] = f.Source
			switch {
			case f.Path != "":
				t.origins[p.Files[j].Dest] = at(f.Path) + " of source " + f.Source
			case f.Local != "":
				t.origins[p.Files[j].Dest] = "file " + at(f.Local) + " of the recipe's folder"
			}
		}
	}
	for _, l := range []struct {
		what     string
		recipe   []recipe.Symlink
		resolved []recipe.Link
	}{{"a link to ", rp.Symlinks, p.Symlinks}, {"a hardlink to ", rp.Hardlinks, p.Hardlinks}} {
		if len(l.recipe) == len(l.resolved) {
			for j, x := range l.recipe {
				t.origins[l.resolved[j].Dest] = l.what + at(x.Target)
				t.paths[l.resolved[j].Dest] = at(x.Dest)
			}
		}
	}
	return t
}

// alternativeChanges lists the alternatives of package n added, or whose
// link, path or priority changed, since o (nil: none): its postinst runs
// update-alternatives --install as root, and where other packages register
// the name too (editor, iptables), the link runs the path of the highest
// priority on every node. One gone is upgrade's (alternative-gone). nf and
// of are the alternatives' forms (templated.alternatives) of n and o: what is
// compared where known.
func alternativeChanges(n, o *recipe.ResolvedPackage, nf, of []string) []privilegeChange {
	show := func(a recipe.Alternative) string {
		return fmt.Sprintf("%s -> %s, priority %d", a.Link, a.Path, a.Priority)
	}
	form := func(forms []string, j int, a recipe.Alternative) string {
		if j < len(forms) {
			return forms[j]
		}
		return show(a)
	}
	type entry struct{ shown, form string }
	was := map[string]entry{}
	if o != nil {
		for j, a := range o.Alternatives() {
			was[a.Name] = entry{show(a), form(of, j, a)}
		}
	}
	var out []privilegeChange
	for j, a := range n.Alternatives() {
		it := ReviewItem{Kind: KindAlternative, Subject: a.Name, New: []string{show(a)}}
		switch w, ok := was[a.Name]; {
		case !ok:
			out = append(out, privilegeChange{n.Name, it, fmt.Sprintf("alternative %s added: %s (the postinst registers it as root: where other packages register %s too, %s runs the path of the highest priority)",
				a.Name, show(a), a.Name, a.Link)})
		case w.form != form(nf, j, a):
			it.Old = []string{w.shown}
			out = append(out, privilegeChange{n.Name, it, fmt.Sprintf("alternative %s: %s, was %s", a.Name, show(a), w.shown)})
		}
	}
	return out
}

// fragmentChanges compares maintainer-script fragments by content, each
// read as a build reads it (Recipe.ReadFragment: inside the recipe's
// folder, a regular file, bounded), so that a fragment planted as a FIFO or
// a symlink out cannot stall or feed the gate.
func fragmentChanges(pkg string, r, old *recipe.Recipe, nf, of []recipe.Fragment) []privilegeChange {
	read := func(in *recipe.Recipe, f recipe.Fragment) string {
		if in == nil {
			return "unreadable"
		}
		b, err := in.ReadFragment(f)
		if err != nil {
			return "unreadable: " + err.Error()
		}
		return string(b)
	}
	olds := map[string]recipe.Fragment{}
	for _, f := range of {
		olds[f.Script] = f
	}
	var out []privilegeChange
	for _, f := range nf {
		o, ok := olds[f.Script]
		delete(olds, f.Script)
		it := ReviewItem{Kind: KindScriptFragment, Subject: f.Script, New: []string{f.File}}
		switch {
		case !ok:
			out = append(out, privilegeChange{pkg, it, fmt.Sprintf("%s fragment %s added (it runs as root at every installation)", f.Script, f.File)})
		case read(r, f) != read(old, o):
			it.Old = []string{o.File}
			out = append(out, privilegeChange{pkg, it, fmt.Sprintf("%s fragment %s changed: diff it against the base revision", f.Script, f.File)})
		}
	}
	for _, o := range olds {
		out = append(out, privilegeChange{pkg, ReviewItem{Kind: KindScriptFragment, Subject: o.Script, Old: []string{o.File}},
			fmt.Sprintf("%s fragment %s removed", o.Script, o.File)})
	}
	return out
}

// rootConfig are the places where what a package installs is read, as
// root, as the system's configuration or code: a file there grants
// privileges (sudoers.d, polkit, root's ssh keys), runs commands as root
// (cron, kernel and network hooks, logrotate's scripts, udev rules,
// systemd drop-ins and generators, profile.d for every login, motd
// scripts), changes what the system trusts (apt's sources and keys, PAM,
// ssh, the certificate authorities) or loads (ld.so, modprobe). A prefix
// ending in "/" is a folder; one without names a file (and, followed by
// "/", a folder of that name too).
var rootConfig = []struct{ prefix, what string }{
	{"/etc/sudoers", "sudo's rules"},
	{"/etc/sudoers.d/", "sudo's rules"},
	{"/etc/sudo.conf", "sudo's plugins (loaded into sudo as root)"},
	{"/etc/doas.conf", "doas's rules"},
	{"/root/", "root's home (its ssh keys, its shells' startup files)"},
	{"/usr/local/sbin/", "commands root's PATH finds before the system's"},
	{"/usr/local/bin/", "commands root's PATH finds before the system's"},
	// Debian's ld.so.conf.d/libc.conf lists /usr/local/lib first, and
	// Python reads /usr/local/lib/python3.X/dist-packages before Debian's.
	{"/usr/local/lib/", "libraries the dynamic linker, and modules Python, find before the system's (root's programs too)"},
	{"/var/spool/cron/", "users' crontabs, root's too"},
	{"/etc/update-motd.d/", "scripts run as root at every login (pam_motd)"},
	{"/usr/share/pam-configs/", "PAM profiles pam-auth-update adds to every login"},
	{"/etc/ssl/certs/", "certificates every TLS client of the system trusts"},
	{"/etc/ca-certificates", "hooks run as root when the system's certificate authorities change"},
	{"/etc/ca-certificates.conf", "the certificate authorities the system trusts"},
	{"/usr/share/ca-certificates/", "certificate authorities update-ca-certificates may add to the system's trust"},
	{"/usr/local/share/ca-certificates/", "certificate authorities update-ca-certificates adds to the system's trust"},
	{"/var/lib/polkit-1/", "polkit's authorisation rules"},
	{"/lib/systemd/system-shutdown/", "programs systemd runs as root at shutdown"},
	{"/usr/lib/systemd/system-shutdown/", "programs systemd runs as root at shutdown"},
	{"/lib/systemd/system-sleep/", "programs systemd runs as root at suspend and resume"},
	{"/usr/lib/systemd/system-sleep/", "programs systemd runs as root at suspend and resume"},
	{"/lib/systemd/system-preset/", "which units systemctl preset enables"},
	{"/usr/lib/systemd/system-preset/", "which units systemctl preset enables"},
	{"/usr/lib/sysusers.d/", "accounts systemd-sysusers makes at boot"},
	{"/usr/lib/NetworkManager/dispatcher.d/", "network hooks run as root"},
	{"/etc/dhcp/", "DHCP client settings and hooks run as root"},
	{"/etc/hosts", "where host names resolve"},
	{"/etc/resolv.conf", "where host names resolve (the name servers asked)"},
	{"/etc/crontab", "cron jobs run as root"},
	{"/etc/cron.d/", "cron jobs"},
	{"/etc/cron.hourly/", "cron jobs run as root"},
	{"/etc/cron.daily/", "cron jobs run as root"},
	{"/etc/cron.weekly/", "cron jobs run as root"},
	{"/etc/cron.monthly/", "cron jobs run as root"},
	{"/etc/pam.d/", "PAM's authentication rules"},
	{"/etc/security/", "PAM's limits and access rules"},
	{"/lib/security/", "PAM modules"},
	{"/usr/lib/security/", "PAM modules"},
	{"/etc/polkit-1/", "polkit's authorisation rules"},
	{"/usr/share/polkit-1/", "polkit's actions and authorisation rules"},
	{"/etc/apt/", "apt's sources, keys and settings"},
	{"/usr/share/keyrings/", "keyrings apt sources may trust"},
	{"/etc/dpkg/", "dpkg's settings"},
	{"/etc/ld.so.conf", "the dynamic linker's search path"},
	{"/etc/ld.so.conf.d/", "the dynamic linker's search path"},
	{"/etc/ld.so.preload", "libraries loaded into every program"},
	{"/etc/modprobe.d/", "kernel module options and commands"},
	{"/lib/modprobe.d/", "kernel module options and commands"},
	{"/usr/lib/modprobe.d/", "kernel module options and commands"},
	{"/etc/udev/rules.d/", "udev rules (they run commands as root)"},
	{"/lib/udev/rules.d/", "udev rules (they run commands as root)"},
	{"/usr/lib/udev/rules.d/", "udev rules (they run commands as root)"},
	{"/etc/profile", "every login shell"},
	{"/etc/profile.d/", "every login shell"},
	{"/etc/bash.bashrc", "every interactive shell"},
	{"/etc/environment", "every session's environment"},
	{"/etc/systemd/", "systemd's settings and unit overrides"},
	{"/lib/systemd/system-generators/", "programs systemd runs as root at boot"},
	{"/usr/lib/systemd/system-generators/", "programs systemd runs as root at boot"},
	{"/etc/init.d/", "init scripts run as root"},
	{"/etc/rc0.d/", "init scripts started at boot (a link here enables one)"},
	{"/etc/rc1.d/", "init scripts started at boot (a link here enables one)"},
	{"/etc/rc2.d/", "init scripts started at boot (a link here enables one)"},
	{"/etc/rc3.d/", "init scripts started at boot (a link here enables one)"},
	{"/etc/rc4.d/", "init scripts started at boot (a link here enables one)"},
	{"/etc/rc5.d/", "init scripts started at boot (a link here enables one)"},
	{"/etc/rc6.d/", "init scripts started at boot (a link here enables one)"},
	{"/etc/rcS.d/", "init scripts started at boot (a link here enables one)"},
	{"/etc/rc.local", "a script run as root at boot"},
	{"/etc/ssh/", "ssh's settings and keys"},
	{"/etc/kernel/", "hooks run as root at kernel installation"},
	{"/lib/kernel/", "plugins kernel-install runs as root at kernel installation"},
	{"/usr/lib/kernel/", "plugins kernel-install runs as root at kernel installation"},
	// update-initramfs runs at every kernel or firmware upgrade.
	{"/etc/initramfs-tools/", "hooks update-initramfs runs as root, and scripts the initramfs runs at boot"},
	{"/usr/share/initramfs-tools/", "hooks update-initramfs runs as root, and scripts the initramfs runs at boot"},
	{"/etc/grub.d/", "scripts update-grub runs as root, which write the boot menu"},
	{"/etc/logrotate.d/", "logrotate's rules (their scripts run as root)"},
	{"/etc/network/", "network hooks run as root"},
	{"/etc/NetworkManager/dispatcher.d/", "network hooks run as root"},
	{"/etc/apparmor.d/", "AppArmor's profiles"},
	{"/etc/sysctl.d/", "kernel settings applied at boot"},
	{"/usr/lib/sysctl.d/", "kernel settings applied at boot"},
	{"/etc/sysctl.conf", "kernel settings applied at boot"},
	{"/etc/modules-load.d/", "kernel modules loaded at boot"},
	{"/usr/lib/modules-load.d/", "kernel modules loaded at boot"},
	{"/etc/modules", "kernel modules loaded at boot"},
	{"/etc/tmpfiles.d/", "files and folders systemd makes as root at boot"},
	{"/usr/lib/tmpfiles.d/", "files and folders systemd makes as root at boot"},
	{"/etc/binfmt.d/", "interpreters the kernel runs programs with"},
	{"/usr/lib/binfmt.d/", "interpreters the kernel runs programs with"},
	{"/etc/nsswitch.conf", "where accounts and hosts are looked up"},
	{"/etc/passwd", "the system's accounts"},
	{"/etc/group", "the system's groups"},
	{"/etc/shadow", "the system's passwords"},
	{"/etc/gshadow", "the system's group passwords"},
	{"/etc/shells", "the login shells allowed"},
	// The system bus's policy decides which users may call methods of the
	// services that run as root (systemd's, polkit's, the package's own);
	// its activation files are programs the setuid launch helper starts as
	// their User= when anybody calls their name.
	{"/etc/dbus-1/system.d/", "the D-Bus system bus's policy: which users may call root's services"},
	{"/etc/dbus-1/system.conf", "the D-Bus system bus's policy: which users may call root's services"},
	{"/etc/dbus-1/system-local.conf", "the D-Bus system bus's policy: which users may call root's services"},
	{"/usr/share/dbus-1/system.d/", "the D-Bus system bus's policy: which users may call root's services"},
	{"/usr/share/dbus-1/system-services/", "programs the D-Bus system bus starts, as root, when a user calls their name"},
	{"/usr/local/share/dbus-1/system-services/", "programs the D-Bus system bus starts, as root, when a user calls their name"},
	{"/lib/dbus-1/system-services/", "programs the D-Bus system bus starts, as root, when a user calls their name"},
	{"/usr/lib/dbus-1/system-services/", "programs the D-Bus system bus starts, as root, when a user calls their name"},
}

// rootConfigPlace returns what the system reads at dest, if dest is in one
// of the rootConfig places or a systemd unit folder: a unit there runs as
// root once enabled (and an admin who enabled it runs what it says now after
// the upgrade), a drop-in folder of a unit
// (/lib/systemd/system/ssh.service.d/) overrides that unit, and a link in a
// unit's .wants or .requires folder starts a unit with it, enabled by the
// package itself.
func rootConfigPlace(dest string) (string, bool) {
	for _, p := range rootConfig {
		if dest == p.prefix || strings.HasPrefix(dest, p.prefix) && strings.HasSuffix(p.prefix, "/") ||
			!strings.HasSuffix(p.prefix, "/") && strings.HasPrefix(dest, p.prefix+"/") {
			return p.what, true
		}
	}
	// Debian's PAM modules are in the multiarch folder
	// (/lib/x86_64-linux-gnu/security/pam_unix.so), which no prefix names:
	// a module the PAM stack names and the node lacks (common-session's
	// pam_systemd.so without libpam-systemd) is loaded into every login.
	// So is an NSS module nsswitch.conf names (Debian 12's services: db
	// files) into every program that looks one up.
	sub, multiarch := inMultiarch(dest)
	if multiarch && strings.HasPrefix(sub, "security/") {
		return "PAM modules", true
	}
	if dir, name := path.Split(dest); strings.HasPrefix(name, "libnss_") && (multiarch && !strings.Contains(sub, "/") || dir == "/lib/" || dir == "/usr/lib/") {
		return "NSS modules: glibc loads one that nsswitch.conf names (a node may lack db, nis or systemd) into every program that looks up a user, group, host or service, root's too", true
	}
	// Debian's python3 runs the import lines of each .pth file of its
	// dist-packages at every start.
	if dir, name := path.Split(dest); strings.HasSuffix(name, ".pth") && pythonSiteRE.MatchString(dir) {
		return "a .pth file: Python runs its import lines at the start of every Python program, root's too", true
	}
	for _, units := range recipe.SystemdUnitDirs {
		rest, ok := strings.CutPrefix(dest, units)
		if !ok || rest == "" {
			continue
		}
		dir, _, ok := strings.Cut(rest, "/")
		if !ok {
			return "a systemd unit (it runs as root once enabled)", true
		}
		if unit, ok := strings.CutSuffix(dir, ".d"); ok {
			return "a drop-in that overrides systemd unit " + unit, true
		}
		for _, dep := range []string{".wants", ".requires", ".upholds"} {
			if unit, ok := strings.CutSuffix(dir, dep); ok {
				return "a unit systemd starts with " + unit + " (enabled by the package itself)", true
			}
		}
		return "systemd's units", true
	}
	if strings.HasPrefix(dest, "/lib/systemd/") || strings.HasPrefix(dest, "/usr/lib/systemd/") {
		// The rest of systemd's own folder: system.conf.d (a drop-in's
		// DefaultEnvironment reaches every service), networks, user units.
		return "systemd's settings (a system.conf.d drop-in sets what every service runs with)", true
	}
	return "", false
}

// pythonSiteRE matches the folders Debian's python3 reads .pth files from.
var pythonSiteRE = regexp.MustCompile(`^/usr/lib/python3(\.[0-9]+)?/(dist|site)-packages/$`)

// inMultiarch returns what follows the multiarch folder of /lib or /usr/lib
// (/usr/lib/x86_64-linux-gnu/) in dest, if dest is below one.
func inMultiarch(dest string) (string, bool) {
	for _, lib := range []string{"/lib/", "/usr/lib/"} {
		if rest, ok := strings.CutPrefix(dest, lib); ok {
			if triplet, sub, ok := strings.Cut(rest, "/"); ok && strings.Contains(triplet, "-linux-") {
				return sub, true
			}
		}
	}
	return "", false
}

// rootConfigChanges lists the paths of package n (o: its version at the
// base, nil if none; had, o's files by destination) in rootConfig places
// that are new, the recipe's own files there (r's folder; old's at the
// base) whose content changed, and those that come from elsewhere now (nf and of: templated origins, n's
// and o's): another member of a source, a source's file where the recipe's
// was, a link pointed elsewhere, a link where a file was. An upstream
// file's content follows the upstream release and its signature; which
// file goes there, and a recipe's file, are the recipe author's.
func rootConfigChanges(n, o *recipe.ResolvedPackage, had map[string]recipe.ResolvedFile, r, old *recipe.Recipe, nf, of map[string]string, basePath func(string) string) []privilegeChange {
	hadLink := map[string]bool{}
	if o != nil {
		for _, l := range slices.Concat(o.Symlinks, o.Hardlinks) {
			hadLink[l.Dest] = true
		}
	}
	var out []privilegeChange
	added := func(dest, what, form string) {
		out = append(out, privilegeChange{n.Name, ReviewItem{Kind: KindRootConfig, Subject: dest, New: []string{form}},
			fmt.Sprintf("%s added: %s", dest, what)})
	}
	// moved reports a path there at the base that comes from elsewhere
	// now (a recipe's file in both: its content is compared).
	moved := func(dest, what string) bool {
		now, was := nf[dest], of[basePath(dest)]
		if now == "" || was == "" || now == was || strings.HasPrefix(now, "file ") && strings.HasPrefix(was, "file ") {
			return false
		}
		out = append(out, privilegeChange{n.Name, ReviewItem{Kind: KindRootConfig, Subject: dest, New: []string{now}, Old: []string{was}},
			fmt.Sprintf("%s is %s now, was %s: %s; review what it installs there before merging", dest, now, was, what)})
		return true
	}
	for _, f := range n.Files {
		what, ok := rootConfigPlace(f.Dest)
		if !ok {
			continue
		}
		was, existed := had[basePath(f.Dest)]
		switch {
		case !existed && !hadLink[basePath(f.Dest)]:
			added(f.Dest, what, "file")
		case f.LocalPath != "" && localContent(r, f.LocalPath) != localContent(old, was.LocalPath):
			file, _ := filepath.Rel(r.FilesDir, f.LocalPath)
			out = append(out, privilegeChange{n.Name, ReviewItem{Kind: KindRootConfig, Subject: f.Dest, New: []string{"file"}, Old: []string{"file"}},
				fmt.Sprintf("%s changed (%s): %s; diff it against the base revision", f.Dest, filepath.ToSlash(file), what)})
		default:
			moved(f.Dest, what)
		}
	}
	for _, l := range slices.Concat(n.Symlinks, n.Hardlinks) {
		what, ok := rootConfigPlace(l.Dest)
		if ok && !moved(l.Dest, what) && !hadLink[basePath(l.Dest)] && had[basePath(l.Dest)].Dest == "" {
			added(l.Dest, what+" (a link to "+l.Target+")", "link")
		}
	}
	return out
}

// localContent is the sha256 of a recipe's file, read as a build reads it
// (inside the recipe's folder or project, a regular file), or why it cannot
// be read.
func localContent(r *recipe.Recipe, abs string) string {
	if r == nil || abs == "" {
		return "none"
	}
	f, _, err := r.OpenLocal(abs)
	if err != nil {
		return "unreadable: " + err.Error()
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "unreadable: " + err.Error()
	}
	return hex.EncodeToString(h.Sum(nil))
}

// systemUserChanges compares package pkg's system user now (u) with the
// base's (was; existed: the package was there). An account is made once:
// adduser, and the postinst under DPKG_ROOT, leave an existing one as it
// is, so a changed home or group reaches only new systems.
func systemUserChanges(pkg string, u, was *recipe.SystemUser, existed bool) []privilegeChange {
	desc := func(x *recipe.SystemUser) string {
		if x == nil {
			return "none"
		}
		s := x.Name + ", home " + cmp.Or(x.Home, "/nonexistent")
		if x.Group {
			s += ", group " + x.Name
		} else {
			s += ", group nogroup"
		}
		return s
	}
	it := ReviewItem{Kind: KindSystemUser, Subject: "system-user", New: []string{desc(u)}}
	if existed {
		it.Old = []string{desc(was)}
	}
	switch {
	case u == nil && was == nil, u != nil && was != nil && *u == *was:
		return nil
	case u == nil:
		return []privilegeChange{{pkg, it, fmt.Sprintf("system user %s is no longer made; the account, and what it owns, stay on installed systems", was.Name)}}
	case was == nil:
		return []privilegeChange{{pkg, it, fmt.Sprintf("system user added: %s (the postinst makes the account as root)", desc(u))}}
	case u.Name != was.Name:
		return []privilegeChange{{pkg, it, fmt.Sprintf("system user %s -> %s: installed systems keep the account %s as well", desc(was), desc(u), was.Name)}}
	}
	return []privilegeChange{{pkg, it, fmt.Sprintf("system user %s -> %s: an existing account is left as it is, so upgraded systems keep the old home and group; to change them there, add to a postinst fragment (usermod, chown)", desc(was), desc(u))}}
}
