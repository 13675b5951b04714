package gate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/pkg/deb"
)

// shipper is a recipe of the base revision that ships a package.
type shipper struct {
	name string // the recipe's name
	path string // its file, relative to the repository's top folder (slashes)
	gone bool   // the working tree has no file there now (removed, renamed)
	pkg  string // the package, where a path is looked up (owners[pathsKey+PATH])
	as   string // there, the path as that package installs it (merged-/usr's other name of the path looked up)
	// there, the package's version and Provides, which the relations of a
	// package installing the same path must match to let dpkg overwrite it
	is *recipe.ResolvedPackage
}

// pathsKey starts the keys of shippers' answer, and of shipped's fields, that
// are installed paths, not package names or relation fields: no package
// name or field starts with "/".
const pathsKey = "path:"

// dirsKey starts the keys of shipped's fields, and of shippers' answer,
// that are the directories a package has (dirsOf; dirsKey+DIR), as pathsKey
// the paths it installs.
const dirsKey = "dir:"

// providesKey starts the keys of shippers' answer that are names a package
// provides (providesKey+NAME).
const providesKey = "provides:"

// statedKey starts the keys of shipped's fields that hold a relation field's
// relations as the package states them, versions included
// (statedKey+"Replaces"); versionKey is the key of its version, and
// templateKey of its name as the recipe writes it (istioctl-{{.Version}}).
const (
	statedKey   = "stated:"
	versionKey  = "version:"
	templateKey = "template:"
)

// shippers returns, for each Debian package name, the recipes of the base
// revision that ship it, for each path a package installs
// (pathsKey+PATH), the recipes and packages that install it, and for each
// name a package provides (providesKey+NAME), the recipes that provide it: every recipe file of the folder r's file is in, as
// the base has it, resolved for each of its architectures under po; and
// r's own file, as the shippers name it. A recipe that does not parse or
// resolve there is left out (its own verify, if it is changed, says so).
// The answer is kept per folder: verify asks once for all its recipes.
func (b *Base) shippers(ctx context.Context, r *recipe.Recipe, po recipe.ResolveOptions) (owners map[string][]shipper, self string, err error) {
	file, top, err := b.recipeTop(ctx, r)
	if err != nil {
		return nil, "", err
	}
	self = filepath.ToSlash(inTree(top, file))
	dir := path.Dir(self)
	if owners, ok := b.shipped[dir]; ok {
		return owners, self, nil
	}
	owners = map[string][]shipper{}
	// The folder the base reaches at dir through its own links (the
	// recipes folder a link to shared/recipes): ls-tree of dir/ lists
	// nothing where the base has a link there.
	tree, _, err := b.reachObject(ctx, top, dir, "tree")
	if err != nil {
		return nil, "", err
	}
	var list []byte
	if tree != "" {
		if list, err = b.git(ctx, top, "ls-tree", "-z", tree); err != nil {
			return nil, "", fmt.Errorf("%w: %v", ErrBase, err)
		}
	}
	for _, line := range strings.Split(string(list), "\x00") {
		meta, p, ok := strings.Cut(line, "\t")
		p = path.Join(dir, p)
		fields := strings.Fields(meta)
		if !ok || len(fields) != 3 || fields[1] != "blob" || !strings.HasSuffix(p, ".yaml") {
			continue
		}
		oid := fields[2]
		if fields[0] == "120000" {
			// A recipe that is a link (to a file of shared/): the file it
			// reaches there, as updeb read it.
			if oid, _, err = b.reach(ctx, top, p); err != nil {
				return nil, "", err
			} else if oid == "" {
				continue
			}
		}
		text, err := b.git(ctx, top, "cat-file", "--filters", "--path="+p, oid)
		if err != nil {
			return nil, "", fmt.Errorf("%w: %v", ErrBase, err)
		}
		old, err := recipe.Parse(p, text)
		if err != nil {
			continue
		}
		_, err = os.Lstat(filepath.Join(top, filepath.FromSlash(p)))
		for name, rels := range shipped(old, po) {
			sh := shipper{old.Name, p, errors.Is(err, fs.ErrNotExist), "", "", nil}
			owners[name] = append(owners[name], sh)
			sh.pkg = name
			sh.is = &recipe.ResolvedPackage{Name: name, Version: rels[versionKey][0], Provides: rels[statedKey+"Provides"]}
			// Looked up as on a merged-/usr system, where /bin/x is
			// /usr/bin/x: dpkg takes them for two paths.
			for _, key := range []string{pathsKey, dirsKey} {
				for _, installed := range rels[key] {
					sh.as = installed
					k := key + recipe.UsrMerged(installed)
					owners[k] = append(owners[k], sh)
				}
			}
			sh.as = ""
			for _, v := range rels["Provides"] {
				owners[providesKey+v] = append(owners[providesKey+v], sh)
			}
		}
	}
	if b.shipped == nil {
		b.shipped = map[string]map[string][]shipper{}
	}
	b.shipped[dir] = owners
	return owners, self, nil
}

// shipped returns the packages r ships on any of its architectures (nil
// r: none), each with the names its relations of the fields that act on
// another package (Provides, Replaces, Conflicts, Breaks) or have apt
// install it (installedWith's) name, by field,
// and the relations as stated, under statedKey+field; its version, under
// versionKey; the paths it installs (InstalledPaths), under pathsKey, and
// its directories (dirsOf), under dirsKey.
func shipped(r *recipe.Recipe, po recipe.ResolveOptions) map[string]map[string][]string {
	out := map[string]map[string][]string{}
	if r == nil {
		return out
	}
	// The names and relations, whoever maintains them: a recipe that names
	// no maintainer resolves without the config's.
	po.SourcesOnly = true
	seen := map[string]bool{}
	for _, a := range r.ArchNames() {
		p, err := r.Resolve(a, po)
		if err != nil {
			continue
		}
		for k, pkg := range p.Packages {
			rels := out[pkg.Name]
			if rels == nil {
				rels = map[string][]string{versionKey: {pkg.Version}, templateKey: {""}}
				if k < len(r.Packages) {
					rels[templateKey][0] = r.Packages[k].Name
				}
				out[pkg.Name] = rels
			}
			for _, installed := range pkg.InstalledPaths() {
				if k := pkg.Name + "\x00" + installed; !seen[k] {
					seen[k] = true
					rels[pathsKey] = append(rels[pathsKey], installed)
				}
			}
			for d := range dirsOf(&pkg) {
				if k := pkg.Name + "\x00" + dirsKey + d; !seen[k] {
					seen[k] = true
					rels[dirsKey] = append(rels[dirsKey], d)
				}
			}
			for _, f := range []struct {
				field string
				list  []string
			}{{"Provides", pkg.Provides}, {"Replaces", pkg.Replaces}, {"Conflicts", pkg.Conflicts}, {"Breaks", pkg.Breaks},
				{"Pre-Depends", pkg.PreDepends}, {"Depends", pkg.Depends}, {"Recommends", pkg.Recommends}} {
				for _, v := range f.list {
					if !slices.Contains(rels[statedKey+f.field], v) {
						rels[statedKey+f.field] = append(rels[statedKey+f.field], v)
					}
					groups, err := deb.ParseRelations(f.field, v)
					if err != nil {
						continue
					}
					for _, g := range groups {
						for _, x := range g {
							if !slices.Contains(rels[f.field], x.Name) {
								rels[f.field] = append(rels[f.field], x.Name)
							}
						}
					}
				}
			}
		}
	}
	return out
}

// diffTakeover adds a review item for each package r ships that, at the
// base revision rev, recipes of another series shipped and none of r's
// (owners and r's file self: shippers; a recipe of the base is r's own at
// its file, or under its name where that file is gone: a rename), and for each Provides, Replaces, Conflicts or
// Breaks that r's packages name now and did not in old (nil: a new
// recipe), on a package recipes of another series shipped at the base,
// and each of those, or Pre-Depends, Depends or Recommends, added on a
// package no recipe ships (system-package): apt installs what a package
// depends on or recommends from any repository; and each package r ships
// now that it did not in old (not nil) under a name no recipe shipped at
// the base (system-package: Debian's sudo, which a higher version of it
// replaces).
// apt installs the highest version of a package name whatever recipe
// built it, and acts on the relations whatever package declares them: a
// recipe named otherwise (hello-ng) that ships hello at a higher version
// replaces recipe hello's package on every node that has it, with its own
// sources and trust. A recipe of the same series (kubernetes-1.36 after
// kubernetes-1.35: both named with a -MAJOR.MINOR suffix, recipe.Component)
// shipping the same names is what a series is for; a recipe named hello-9.9
// is not one of the recipe hello, which has no suffix; nor is another file
// that takes the name of recipe hello.
func diffTakeover(r, old *recipe.Recipe, owners map[string][]shipper, self string, po recipe.ResolveOptions, rev string, rv *reviews) {
	versioned := func(name string) bool { return recipe.Component(name) != name }
	mine := func(o shipper) bool {
		return o.path == self || o.gone && o.name == r.Name || versioned(o.name) && versioned(r.Name) && recipe.Component(o.name) == recipe.Component(r.Name)
	}
	others := func(name string) []string {
		var out []string
		for _, o := range owners[name] {
			if mine(o) {
				return nil
			}
			out = append(out, o.name+" ("+o.path+")")
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	me := r.Name + " (" + self + ")"
	now, then := shipped(r, po), shipped(old, po)
	provided := map[string]bool{} // the names r's packages provide now
	for _, rels := range now {
		for _, v := range rels["Provides"] {
			provided[v] = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(now)) {
		if o := others(name); len(o) > 0 {
			rv.add(ReviewItem{Kind: KindPackageTakeover, Subject: name, Old: o, New: []string{me}},
				fmt.Sprintf("package %s: shipped by recipe %s at %s, now by recipe %s: apt installs the highest version of a package name whatever recipe built it, so on every node that has %s this recipe's package, from its own sources and trust, takes its place where its version is higher; review that recipe %s may take %s over before merging",
					name, strings.Join(o, ", "), rev, me, name, r.Name, name))
		}
		if old != nil && then[name] == nil && len(owners[name]) == 0 && len(owners[providesKey+name]) == 0 && !followsVersion(old, now[name][templateKey][0]) {
			// A name new to the repository's recipes: Debian's sudo or
			// openssh-server, or another repository's package, which a
			// higher version of this one replaces wherever it is installed.
			rv.add(ReviewItem{Kind: KindSystemPackage, Subject: name, New: []string{me}},
				fmt.Sprintf("package %s: new, a name no recipe of %s ships at %s: on every node that has a package %s from elsewhere (the system's, or another repository's), apt upgrades it to this recipe's package where its version is higher; review that recipe %s may ship %s before merging",
					name, path.Dir(self)+"/", rev, name, r.Name, name))
		}
		diffPathConflicts(name, now[name], then[name], owners, mine, rev, rv)
		// The package's relations at the base: for a name that follows
		// the version (istioctl-{{.Version}}), the base's package of the
		// same name template.
		was := then[name]
		if t := now[name][templateKey][0]; was == nil && old != nil && followsVersion(old, t) {
			for _, rels := range then {
				if rels[templateKey][0] == t {
					was = rels
				}
			}
		}
		for _, field := range []string{"Provides", "Replaces", "Conflicts", "Breaks", "Pre-Depends", "Depends", "Recommends"} {
			with, installs := installedWith[field]
			for _, target := range now[name][field] {
				o := others(target)
				if now[target] != nil || then[target] != nil || slices.Contains(was[field], target) {
					continue
				}
				if installs && (recipe.IsBasePackage(target) || provided[target] || slices.ContainsFunc(with, func(f string) bool { return slices.Contains(was[f], target) })) {
					// Already on every node (libc6, adduser), one of the
					// recipe's own names, or installed with it before.
					continue
				}
				if len(owners[target]) == 0 && len(owners[providesKey+target]) == 0 {
					// No recipe of the folder ships or provides it (the
					// one name of a versioned series, which each of its
					// packages provides, conflicts with and replaces): a
					// package of the system (Debian's openssh-server,
					// systemd) or of another repository, which apt acts on
					// as well.
					effect := fmt.Sprintf("apt acts on it whatever repository it comes from (%s), on every node that has it; review that recipe %s may act on %s", relationEffect[field], r.Name, target)
					if installs {
						effect = fmt.Sprintf("%s, from whatever repository offers it (its files, the services it starts, its maintainer scripts run as root); review that recipe %s may pull %s in", relationEffect[field], r.Name, target)
					}
					rv.add(ReviewItem{Kind: KindSystemPackage, Subject: target, New: []string{me}},
						fmt.Sprintf("package %s: %s: %s, a package no recipe of %s ships at %s (the system's, or another repository's): %s before merging",
							name, field, target, path.Dir(self)+"/", rev, effect))
					continue
				}
				if installs {
					continue // another recipe's package: what a dependency between recipes is
				}
				what := "a package"
				if len(owners[target]) == 0 {
					// A name only packages of other recipes provide (the
					// one name of their series): a conflicts on it
					// removes them.
					o, what = others(providesKey+target), "a name provided by packages"
				}
				if len(o) == 0 {
					continue
				}
				rv.add(ReviewItem{Kind: KindPackageTakeover, Subject: target, Old: o, New: []string{me}},
					fmt.Sprintf("package %s: %s: %s, %s of recipe %s at %s: apt acts on it whatever recipe declares it (%s); review that recipe %s may act on %s before merging",
						name, field, target, what, strings.Join(o, ", "), rev, relationEffect[field], r.Name, target))
			}
		}
	}
}

// followsVersion reports whether a package name template of r (nil: none)
// holds a template, as name does (istioctl-{{.Version}}): each version is
// a package of its own, a name no recipe shipped before.
func followsVersion(r *recipe.Recipe, name string) bool {
	return strings.Contains(name, "{{") && slices.ContainsFunc(r.Packages, func(p recipe.Package) bool { return p.Name == name })
}

// replacedBy reports whether relations rels (shipped's, stated) let dpkg
// install their package beside pkg, which installs one of its paths: they
// must replace it and conflict with or break it, at its version (Debian
// policy 7.6.2; "Replaces: hello (<< 1.0)" does not replace hello 2.0),
// as recipe.CheckTogether matches them.
func replacedBy(pkg *recipe.ResolvedPackage, rels map[string][]string) bool {
	return pkg.MatchedIn(rels[statedKey+"Replaces"], "Replaces") &&
		(pkg.MatchedIn(rels[statedKey+"Conflicts"], "Conflicts") || pkg.MatchedIn(rels[statedKey+"Breaks"], "Breaks"))
}

// relationEffect is what apt and dpkg do with a relation of each field
// on another package.
var relationEffect = map[string]string{
	"Provides":  "it satisfies what depends on that name",
	"Replaces":  "dpkg lets this package overwrite its files",
	"Conflicts": "apt removes it to install this package",
	"Breaks":    "apt removes or upgrades it to install this package",
	// installedWith's fields
	"Pre-Depends": "apt installs it, configured before this package is unpacked, on every node that installs this package",
	"Depends":     "apt installs it on every node that installs this package",
	"Recommends":  "apt installs it on every node that installs this package (apt installs recommends unless told not to)",
}

// installedWith names, for each relation field that has apt install the
// package it names, the fields whose relation on that package at the base
// had apt install it on the same nodes: a dependency moved from Depends to
// Pre-Depends installs nothing new; one moved from Recommends to Depends
// does where recommends are not installed (APT::Install-Recommends
// "false"). Suggests installs nothing.
var installedWith = map[string][]string{
	"Pre-Depends": {"Pre-Depends", "Depends"},
	"Depends":     {"Pre-Depends", "Depends"},
	"Recommends":  {"Pre-Depends", "Depends", "Recommends"},
}

// mergedNote follows a path of a path-conflict line that the other
// package installs under merged-/usr's other name.
const mergedNote = ", one path on a merged-/usr system, as every Debian since 12 is: dpkg refuses nothing"

// diffPathConflicts adds a review item for each package of another
// recipe of the base revision (owners: shippers; mine tells r's own and its
// series apart) that installs a path that package name of r installs now
// (rels, its fields by shipped) and did not at the base (then), under
// another package name: dpkg refuses to install one beside the other
// ("trying to overwrite ..., which is also in package ...") unless the new
// one replaces the other and conflicts with or breaks it (Debian policy
// 7.6.2). One item per other package, naming the paths.
func diffPathConflicts(name string, rels, then map[string][]string, owners map[string][]shipper, mine func(shipper) bool, rev string, rv *reviews) {
	type other struct{ pkg, recipe string }
	clash := map[other][]string{}
	// A path installed here and there, a file here that is a directory
	// there, or a directory here that is a file there: dpkg refuses each
	// ("trying to overwrite directory '/usr/lib/x' in package y with
	// nondirectory").
	for _, c := range []struct{ mine, theirs string }{{pathsKey, pathsKey}, {pathsKey, dirsKey}, {dirsKey, pathsKey}} {
		for _, p := range rels[c.mine] {
			if slices.Contains(then[c.mine], p) {
				continue
			}
			for _, o := range owners[c.theirs+recipe.UsrMerged(p)] {
				if o.pkg == name || mine(o) || replacedBy(o.is, rels) {
					continue
				}
				k := other{o.pkg, o.name + " (" + o.path + ")"}
				shown := p
				switch {
				case o.as != p:
					// dpkg refuses nothing: the package unpacked second
					// overwrites the other's file through the link, and
					// removing it deletes that file.
					shown += " (" + o.as + " there" + mergedNote + ")"
				case c.theirs == dirsKey:
					shown += " (a directory of " + o.pkg + ")"
				case c.mine == dirsKey:
					shown += " (a directory of " + name + ")"
				}
				if !slices.Contains(clash[k], shown) {
					clash[k] = append(clash[k], shown)
				}
			}
		}
	}
	keys := slices.SortedFunc(maps.Keys(clash), func(a, b other) int { return strings.Compare(a.pkg+a.recipe, b.pkg+b.recipe) })
	for _, k := range keys {
		paths := clash[k]
		slices.Sort(paths)
		shown := strings.Join(paths, ", ")
		if len(paths) > 3 {
			shown = fmt.Sprintf("%s and %d more", strings.Join(paths[:3], ", "), len(paths)-3)
		}
		what := "on a merged-/usr system dpkg lets the package unpacked second overwrite the other's file, and removing it deletes that file,"
		if i := slices.IndexFunc(paths, func(p string) bool { return !strings.Contains(p, mergedNote) }); i >= 0 {
			what = fmt.Sprintf("dpkg refuses to install one beside the other (\"trying to overwrite '%s', which is also in package %s\")", strings.Split(paths[i], " (")[0], k.pkg)
		}
		rv.add(ReviewItem{Kind: KindPathConflict, Subject: k.pkg, Old: []string{k.recipe}, New: paths},
			fmt.Sprintf("package %s: %s: also in package %s of recipe %s at %s: %s unless %s replaces it and conflicts with or breaks it; add replaces: [%s] and conflicts: [%s] to package %s, or install elsewhere",
				name, shown, k.pkg, k.recipe, rev, what, name, k.pkg, k.pkg, name))
	}
}
