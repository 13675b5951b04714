package gate

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/updeb/updeb/internal/recipe"
)

// movedPaths finds, for one architecture, the paths that an old package of
// the recipe installed and another package installs now (a file moved
// between packages, a package renamed) without the new owner saying that
// it takes them over: dpkg refuses to unpack a package over a path another
// installed package owns ("trying to overwrite '/usr/bin/x', which is also
// in package y"), unless the new package Replaces the old one at its
// installed version (Debian policy 7.6.1); Breaks (or Conflicts) goes with
// it, so that the old package cannot stay configured without its file.
// Each change names the new package, the old one and what to write.
//
// A file of an old package that is a directory of another package now,
// or a directory that is a file now, is refused alike ("trying to
// overwrite '/usr/lib/x', which is also in package y", "trying to
// overwrite directory '/usr/lib/x' in package y with nondirectory") when
// the new package is unpacked before the old one's upgrade, and Replaces
// lets it through: such a path is named with what it was or is now.
func movedPaths(np, op *recipe.Resolved) []change {
	owner := map[string]*recipe.ResolvedPackage{}       // path -> old package
	dirOwners := map[string][]*recipe.ResolvedPackage{} // directory -> the old packages that have it
	for i := range op.Packages {
		for _, p := range op.Packages[i].InstalledPaths() {
			owner[p] = &op.Packages[i]
		}
		for d := range dirsOf(&op.Packages[i]) {
			dirOwners[d] = append(dirOwners[d], &op.Packages[i])
		}
	}
	type pair struct{ to, from string }
	moved := map[pair][]string{}
	var pairs []pair
	byName := map[string]*recipe.ResolvedPackage{}
	for i := range op.Packages {
		byName[op.Packages[i].Name] = &op.Packages[i]
	}
	add := func(n, o *recipe.ResolvedPackage, p string) {
		if o.Name == n.Name {
			return // dpkg turns a file of the package into a directory, and back, on its upgrade
		}
		k := pair{n.Name, o.Name}
		if moved[k] == nil {
			pairs = append(pairs, k)
		}
		moved[k] = append(moved[k], p)
	}
	for i := range np.Packages {
		n := &np.Packages[i]
		for _, p := range n.InstalledPaths() {
			if o := owner[p]; o != nil {
				add(n, o, p)
			}
			for _, o := range dirOwners[p] {
				add(n, o, p+" (a directory then)")
			}
		}
		for _, d := range slices.Sorted(maps.Keys(dirsOf(n))) {
			if o := owner[d]; o != nil {
				add(n, o, d+" (a directory now)")
			}
		}
	}
	var out []change
	for _, k := range pairs {
		var n *recipe.ResolvedPackage
		for i := range np.Packages {
			if np.Packages[i].Name == k.to {
				n = &np.Packages[i]
			}
		}
		o := byName[k.from]
		replaces := o.MatchedIn(n.Replaces, "Replaces")
		breaks := o.MatchedIn(n.Breaks, "Breaks") || o.MatchedIn(n.Conflicts, "Conflicts")
		if replaces && breaks {
			continue
		}
		paths := moved[k]
		sort.Strings(paths)
		shown := strings.Join(paths, ", ")
		if len(paths) > 3 {
			shown = fmt.Sprintf("%s and %d more", strings.Join(paths[:3], ", "), len(paths)-3)
		}
		rel := fmt.Sprintf("%q", fmt.Sprintf("%s (<< %s)", o.Name, n.Version))
		var need []string
		if !replaces {
			need = append(need, "replaces: ["+rel+"]")
		}
		if !breaks {
			need = append(need, "breaks: ["+rel+"]")
		}
		out = append(out, change{n.Name, fmt.Sprintf("%s was in package %s %s: dpkg refuses the upgrade (\"trying to overwrite ... which is also in package %s\") unless %s replaces and breaks it; add %s to package %s",
			shown, o.Name, o.Version, o.Name, n.Name, strings.Join(need, " and "), n.Name)})
	}
	return out
}

// aliasedMoves finds, for one architecture, the paths of an old package of
// the recipe that another package installs now under the other name a
// merged-/usr system gives them (/lib/systemd/system/x.service and
// /usr/lib/systemd/system/x.service, /bin/x and /usr/bin/x). dpkg takes
// them for two paths: no "trying to overwrite" stops the new package, and
// replaces and breaks change nothing, so when the new package is unpacked
// before the old one's upgrade, that upgrade deletes its obsolete path,
// which is the new package's file (Debian's DEP 17; checked with dpkg).
// Moving the path within its package is safe (dpkg sees the new file is
// the same), and so is moving it to another package under the same name.
func aliasedMoves(np, op *recipe.Resolved) []change {
	type had struct {
		pkg  *recipe.ResolvedPackage
		path string
	}
	owner := map[string]had{} // merged path -> an old package and its path there
	for i := range op.Packages {
		for _, p := range op.Packages[i].InstalledPaths() {
			owner[recipe.UsrMerged(p)] = had{&op.Packages[i], p}
		}
	}
	kept := map[string]bool{} // the paths installed now
	for i := range np.Packages {
		for _, p := range np.Packages[i].InstalledPaths() {
			kept[p] = true
		}
	}
	var out []change
	for i := range np.Packages {
		n := &np.Packages[i]
		for _, p := range n.InstalledPaths() {
			o, ok := owner[recipe.UsrMerged(p)]
			if !ok || o.path == p || o.pkg.Name == n.Name || kept[o.path] {
				continue
			}
			out = append(out, change{n.Name, fmt.Sprintf("%s was %s in package %s %s, one file on merged-/usr systems that dpkg takes for two: where %s is unpacked before %s is upgraded, the upgrade of %s deletes it, whatever replaces and breaks say (DEP 17); install it at %s while it moves to %s (with replaces and breaks), and move it to %s in a later version",
				p, o.path, o.pkg.Name, o.pkg.Version, n.Name, o.pkg.Name, o.pkg.Name, o.path, n.Name, p)})
		}
	}
	return out
}

// diffLeftBehind adds a review item for what dpkg leaves on a system
// upgraded from old's packages to r's, with what to write to remove it:
// an alternative name that no package of the recipe registers now
// (update-alternatives keeps the group, and its link dangles once the old
// path is gone: nothing ever runs update-alternatives for that name again,
// not even a purge), and a conffile that no package ships now (dpkg keeps
// it, marked obsolete, and whatever reads it still does, until purge;
// not one shipped now as a plain file, which the upgrade overwrites).
// Both concern a package the recipe still has: one it dropped stays
// installed as it was, which is a review item of its own (packageGone).
func diffLeftBehind(r, old *recipe.Recipe, po recipe.ResolveOptions, rv *reviews) {
	if old == nil {
		return
	}
	reviewPerArch(r, old, po, rv, func(np, op *recipe.Resolved) []privilegeChange {
		if op == nil {
			return nil
		}
		return leftBehind(np, op, sideBySide(r, old, op))
	})
}

// sideBySide names the packages of op (resolved from old) whose name is a
// template that r still has (istioctl-{{.Version}}): each version is a
// package of its own, meant to be installed beside the others, so the old
// one staying installed is what the recipe asks for, not a package the
// recipe dropped; and every package of op when old is another recipe, the
// minor before r's.
func sideBySide(r, old *recipe.Recipe, op *recipe.Resolved) map[string]bool {
	names := map[string]bool{}
	for i := range op.Packages {
		// old is the minor before r's (previousMinor): its recipe, and
		// its packages, stay.
		if r.Name != old.Name || i < len(old.Packages) && slices.ContainsFunc(r.Packages, func(p recipe.Package) bool { return p.Name == old.Packages[i].Name }) {
			names[op.Packages[i].Name] = true
		}
	}
	return names
}

// leftBehind is diffLeftBehind for one architecture; sideBySide names the old
// packages meant to stay installed beside the new ones (sideBySide).
func leftBehind(np, op *recipe.Resolved, sideBySide map[string]bool) []privilegeChange {
	names, conffiles, kept, shipped := map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}
	linkAlt, linkPkg := map[string]recipe.Alternative{}, map[string]string{} // link -> the alternative and package that have it now
	choices := map[[2]string]bool{}                                          // name and path of each alternative now
	for i := range np.Packages {
		kept[np.Packages[i].Name] = true
		for _, a := range np.Packages[i].Alternatives() {
			names[a.Name] = true
			choices[[2]string{a.Name, a.Path}] = true
			linkAlt[a.Link], linkPkg[a.Link] = a, np.Packages[i].Name
		}
		for _, c := range np.Packages[i].Conffiles {
			conffiles[c] = true
		}
		for _, p := range np.Packages[i].InstalledPaths() {
			shipped[p] = true
		}
	}
	now := map[string]*recipe.ResolvedPackage{}
	units := map[string]bool{} // the units the recipe's packages ship now, by name
	dirs := map[string]bool{}  // the directories the recipe's packages have now
	for i := range np.Packages {
		now[np.Packages[i].Name] = &np.Packages[i]
		for _, u := range unitsOf(&np.Packages[i]) {
			units[u] = true
		}
		maps.Copy(dirs, dirsOf(&np.Packages[i]))
	}
	var out []privilegeChange
	for i := range op.Packages {
		o := &op.Packages[i]
		if !kept[o.Name] {
			if sideBySide[o.Name] {
				continue
			}
			if c, ok := packageGone(o, np); ok {
				out = append(out, c)
			}
			continue // a package the recipe dropped stays installed as it was, its files and scripts too
		}
		out = append(out, dirSymlinkChanges(o, now[o.Name], np.DebianVersion)...)
		for _, u := range unitsOf(o) {
			if units[u] {
				continue
			}
			out = append(out, privilegeChange{o.Name, ReviewItem{Kind: KindUnitGone, Subject: u, Old: []string{u}},
				fmt.Sprintf("systemd unit %s is gone: on upgraded systems dpkg removes its file, but a running %s keeps running, enabled links stay, and systemd keeps the old definition loaded until a daemon-reload; to stop it, add to a preinst fragment of %s: %s (and a postinst fragment that runs systemctl daemon-reload, if %s has no unit left)",
					u, u, o.Name, unitStopFragment(u), o.Name)})
		}
		for _, a := range o.Alternatives() {
			if names[a.Name] {
				// update-alternatives --install in the new postinst drops
				// the old path only where its file is gone: one the recipe
				// still installs stays a choice, at its old priority.
				if !choices[[2]string{a.Name, a.Path}] && shipped[a.Path] {
					out = append(out, privilegeChange{o.Name, ReviewItem{Kind: KindAlternativeGone, Subject: a.Name, Old: []string{a.Link + " -> " + a.Path}},
						fmt.Sprintf("alternative %s has another path now, but %s, its path before, is still installed: update-alternatives keeps it a choice of %s on upgraded systems (it drops only a choice whose file is gone), at its old priority %d, and %s runs it wherever that is the highest, while a new installation runs the new path; to remove it, add to a postinst fragment of the recipe: if [ \"$1\" = configure ]; then update-alternatives --remove %s %s; fi",
							a.Name, a.Path, a.Name, a.Priority, a.Link, a.Name, a.Path)})
				}
				continue
			}
			if n, ok := linkAlt[a.Link]; ok {
				// update-alternatives refuses to give a link that one name
				// manages to another ("alternative link ... is already
				// managed by ..."): the postinst's --install fails unless
				// the old name is gone before it runs, and so does the old
				// version's on a downgrade, unless the new name goes first.
				p := linkPkg[a.Link]
				out = append(out, privilegeChange{o.Name, ReviewItem{Kind: KindAlternativeGone, Subject: a.Name, Old: []string{a.Link + " -> " + a.Path}},
					fmt.Sprintf("alternative %s (%s -> %s) is gone from the recipe and its link is alternative %s's now: on upgraded systems the postinst of %s fails (update-alternatives: \"alternative link %s is already managed by %s\") and leaves %s unconfigured; to remove the old name before it, add to a preinst fragment of %s: if [ \"$1\" = install ] || [ \"$1\" = upgrade ]; then update-alternatives --remove %s %s; fi; and so that going back to the old version works (repo rollback, then ensure => VERSION), to a prerm fragment of %s: if [ \"$1\" = upgrade ] && dpkg --compare-versions \"$2\" lt %s; then update-alternatives --remove %s %s; fi",
						a.Name, a.Link, a.Path, n.Name, p, a.Link, a.Name, p, p, a.Name, a.Path, p, np.DebianVersion+"~", n.Name, n.Path)})
				continue
			}
			out = append(out, privilegeChange{o.Name, ReviewItem{Kind: KindAlternativeGone, Subject: a.Name, Old: []string{a.Link + " -> " + a.Path}},
				fmt.Sprintf("alternative %s (%s -> %s) is gone from the recipe: update-alternatives keeps it on upgraded systems, and %s dangles once %s is gone; to remove it, add to a postinst fragment of the recipe: if [ \"$1\" = configure ]; then update-alternatives --remove %s %s; fi",
					a.Name, a.Link, a.Path, a.Link, a.Path, a.Name, a.Path)})
		}
		movedTo := conffileMoves(o, now[o.Name])
		for _, c := range o.Conffiles {
			if conffiles[c] {
				continue
			}
			if shipped[c] {
				// Shipped now as a plain file (conffile: false): the
				// upgrade writes it, and dpkg forgets it was a conffile.
				out = append(out, privilegeChange{o.Name, ReviewItem{Kind: KindConffilePlain, Subject: c, Old: []string{"conffile"}, New: []string{"file"}},
					fmt.Sprintf("%s is no longer a conffile: on upgraded systems dpkg replaces it without asking, and a local edit there is lost (no .dpkg-old is kept); keep conffile: true if admins may edit it", c)})
				continue
			}
			msg := fmt.Sprintf("conffile %s is gone: dpkg leaves it on upgraded systems (obsolete, still read by whatever reads it) until %s is purged; to remove it, add to the preinst, postinst and postrm fragments of %s: dpkg-maintscript-helper rm_conffile %s %s -- \"$@\"",
				c, o.Name, o.Name, c, np.DebianVersion+"~")
			if dirs[c] {
				// dpkg replaces the file by the directory, edited or not;
				// mv_conffile leaves an edited file there for that, and
				// then fails to move the directory (checked with dpkg).
				msg = fmt.Sprintf("conffile %s is a directory now: on upgraded systems dpkg replaces the file by it without a word, an admin's edits included (no .dpkg-old is kept); to keep them as %s.dpkg-bak, add to the preinst, postinst and postrm fragments of %s: dpkg-maintscript-helper rm_conffile %s %s -- \"$@\" (not mv_conffile, which leaves an edited file to dpkg and then fails)",
					c, c, o.Name, c, np.DebianVersion+"~")
			} else if to := movedTo(c); to != "" {
				msg += fmt.Sprintf("; if it is %s now, write instead: dpkg-maintscript-helper mv_conffile %s %s %s -- \"$@\" (it carries an admin's edits over to %s; rm_conffile keeps them only as %s.dpkg-bak, and the new conffile starts from the package's content)",
					to, c, to, np.DebianVersion+"~", to, c)
			}
			out = append(out, privilegeChange{o.Name, ReviewItem{Kind: KindConffileGone, Subject: c, Old: []string{c}}, msg})
		}
		out = append(out, plainToConffile(o, now[o.Name], np.DebianVersion)...)
	}
	return out
}

// conffileMoves returns where a conffile c of package o (the base's) may
// have moved in n (the same package now): its one conffile that o did not
// ship, or among several, the first of c's name; "" when there is none.
// What o shipped and n's new conffiles are looked up once for all of o's
// conffiles: searched for each gone conffile, a folder of them moved
// (/etc/x to /etc/y) made verify --base's time grow with their cube.
func conffileMoves(o, n *recipe.ResolvedPackage) func(c string) string {
	had := map[string]bool{}
	for _, p := range o.InstalledPaths() {
		had[p] = true
	}
	var added []string
	byName := map[string]string{}
	for _, x := range n.Conffiles {
		if !had[x] {
			added = append(added, x)
			if _, ok := byName[path.Base(x)]; !ok {
				byName[path.Base(x)] = x
			}
		}
	}
	return func(c string) string {
		if len(added) == 1 {
			return added[0]
		}
		return byName[path.Base(c)]
	}
}

// plainToConffile lists the files of package o (the base's) that n (the
// same package now) ships as conffiles. dpkg takes such a file, already on
// disk, for one the admin made: an upgrade asks whether to keep it, which
// apt-get -y cannot answer ("end of file on stdin at conffile prompt"), and
// --force-confold (Puppet's) keeps the old content for good, the new one
// beside it as .dpkg-dist. A preinst that removes the file where it is as
// the old version shipped it lets the new conffile in (checked with dpkg).
func plainToConffile(o, n *recipe.ResolvedPackage, version string) []privilegeChange {
	was := map[string]bool{} // o's files, true for its conffiles
	for _, f := range o.Files {
		was[f.Dest] = false
	}
	for _, c := range o.Conffiles {
		was[c] = true
	}
	var out []privilegeChange
	for _, c := range n.Conffiles {
		if conffile, ok := was[c]; conffile || !ok {
			continue
		}
		out = append(out, privilegeChange{n.Name, ReviewItem{Kind: KindNowConffile, Subject: c, Old: []string{"file"}, New: []string{"conffile"}},
			fmt.Sprintf("%s is a conffile now: on upgraded systems dpkg takes the file there for the admin's and asks whether to keep it, so apt-get -y fails (\"end of file on stdin at conffile prompt\") and --force-confold (Puppet's) keeps the old content, the new one only as %s.dpkg-dist; to let the new conffile in where nobody edited the file, add to a preinst fragment of %s: if [ \"$1\" = upgrade ] && dpkg --compare-versions \"$2\" lt %s && ! dpkg --verify %s | grep -q ' %s$'; then rm -f \"$DPKG_ROOT%s\"; fi",
				c, c, n.Name, version+"~", n.Name, c, c)})
	}
	return out
}

// packageGone is the review item for package o of the base that the
// recipe dropped, unless a package of np breaks or conflicts with it at its
// old version: apt removes an installed package only for a package that
// breaks or conflicts with it (or when asked to), so on upgraded systems o
// stays installed as it was, with its files, alternatives and maintainer
// scripts, for good, and a newer package of the recipe that takes its
// place upgrades beside it.
func packageGone(o *recipe.ResolvedPackage, np *recipe.Resolved) (privilegeChange, bool) {
	for i := range np.Packages {
		n := &np.Packages[i]
		if o.MatchedIn(n.Breaks, "Breaks") || o.MatchedIn(n.Conflicts, "Conflicts") {
			return privilegeChange{}, false
		}
	}
	rel := fmt.Sprintf("%q", fmt.Sprintf("%s (<< %s)", o.Name, np.DebianVersion))
	return privilegeChange{o.Name, ReviewItem{Kind: KindPackageGone, Subject: o.Name, Old: []string{o.Version}},
		fmt.Sprintf("package %s %s is gone from the recipe, and no package of it breaks or conflicts with it: upgraded systems keep it installed as it is, with its files and maintainer scripts (apt removes a package only for one that breaks or conflicts with it); to have apt remove it on upgrade, add breaks: [%s] to the package of the recipe that takes its place (replaces: [%s] too where it takes over paths of %s, and provides: [%s] where other packages depend on %s), or keep %s in the recipe as a transitional package with depends: [its successor]",
			o.Name, o.Version, rel, rel, o.Name, o.Name, o.Name, o.Name)}, true
}

// dirsOf are the directories package p has: those it states and the
// parents of its paths (not "/").
func dirsOf(p *recipe.ResolvedPackage) map[string]bool {
	dirs := map[string]bool{}
	for _, d := range p.Directories {
		dirs[d.Path] = true
		for d := path.Dir(d.Path); d != "/" && d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	for _, f := range p.InstalledPaths() {
		for d := path.Dir(f); d != "/" && d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	return dirs
}

// dirSymlinkChanges lists the paths of package o (the base's) that n (the
// same package now) turns from a directory into a symlink or back. dpkg
// never does either on an upgrade: a directory stays one, and the link is
// not made, so what the package now installs through the link is missing
// on upgraded systems; a symlink stays one, and the new directory's files
// land in its target. dpkg-maintscript-helper's dir_to_symlink and
// symlink_to_dir do it, from the package's preinst, postinst and postrm.
func dirSymlinkChanges(o, n *recipe.ResolvedPackage, version string) []privilegeChange {
	linksOf := func(p *recipe.ResolvedPackage) map[string]string {
		links := map[string]string{}
		for _, l := range p.Symlinks {
			links[l.Dest] = l.Target
		}
		return links
	}
	oldDirs, newDirs, oldLinks, newLinks := dirsOf(o), dirsOf(n), linksOf(o), linksOf(n)
	var out []privilegeChange
	for _, p := range slices.Sorted(maps.Keys(newLinks)) {
		if oldDirs[p] {
			out = append(out, privilegeChange{n.Name, ReviewItem{Kind: KindDirSymlink, Subject: p, Old: []string{"directory"}, New: []string{"symlink to " + newLinks[p]}},
				fmt.Sprintf("%s was a directory and is a symlink to %s now: dpkg keeps the directory on upgraded systems and never makes the link, so what the package installs through it is missing; add to the preinst, postinst and postrm fragments of %s: dpkg-maintscript-helper dir_to_symlink %s %s %s -- \"$@\"",
					p, newLinks[p], n.Name, p, newLinks[p], version+"~")})
		}
	}
	for _, p := range slices.Sorted(maps.Keys(oldLinks)) {
		if newDirs[p] {
			out = append(out, privilegeChange{n.Name, ReviewItem{Kind: KindDirSymlink, Subject: p, Old: []string{"symlink to " + oldLinks[p]}, New: []string{"directory"}},
				fmt.Sprintf("%s was a symlink to %s and is a directory now: dpkg keeps the symlink on upgraded systems and unpacks the directory's files into %s; add to the preinst, postinst and postrm fragments of %s: dpkg-maintscript-helper symlink_to_dir %s %s %s -- \"$@\"",
					p, oldLinks[p], oldLinks[p], n.Name, p, oldLinks[p], version+"~")})
		}
	}
	return out
}

// unitsOf names the systemd units package p installs (files directly in
// /lib/systemd/system or /usr/lib/systemd/system, not drop-ins).
func unitsOf(p *recipe.ResolvedPackage) []string {
	var out []string
	for _, dest := range p.InstalledPaths() {
		for _, dir := range recipe.SystemdUnitDirs {
			if name, ok := strings.CutPrefix(dest, dir); ok && !strings.Contains(name, "/") {
				out = append(out, name)
			}
		}
	}
	return out
}

// unitStopFragment is the preinst line that stops and disables unit, gone
// from the new version, on upgraded systems: on the running system only
// (not for another root, nor where systemd is not running, a chroot or an
// image build, where systemctl fails). deb-systemd-helper disable would
// remove only the links it made, not an admin's systemctl enable. Lint
// accepts it as it is (callsSystemctl: the call is guarded).
func unitStopFragment(unit string) string {
	return fmt.Sprintf(`if [ "$1" = upgrade ] && [ -z "${DPKG_ROOT:-}" ] && [ -d /run/systemd/system ]; then systemctl stop %s || true; systemctl disable %s || true; fi`, unit, unit)
}
