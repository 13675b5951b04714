package gate

import (
	"fmt"
	"sort"
	"strings"

	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/pkg/deb"
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
func movedPaths(np, op *recipe.Resolved) []change {
	owner := map[string]*recipe.ResolvedPackage{} // path -> old package
	for i := range op.Packages {
		for _, p := range installedPaths(&op.Packages[i]) {
			owner[p] = &op.Packages[i]
		}
	}
	type pair struct{ to, from string }
	moved := map[pair][]string{}
	var pairs []pair
	byName := map[string]*recipe.ResolvedPackage{}
	for i := range op.Packages {
		byName[op.Packages[i].Name] = &op.Packages[i]
	}
	for i := range np.Packages {
		n := &np.Packages[i]
		for _, p := range installedPaths(n) {
			o := owner[p]
			if o == nil || o.Name == n.Name {
				continue
			}
			k := pair{n.Name, o.Name}
			if moved[k] == nil {
				pairs = append(pairs, k)
			}
			moved[k] = append(moved[k], p)
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
		replaces := relates(n.Replaces, "Replaces", o.Name, o.Version)
		breaks := relates(n.Breaks, "Breaks", o.Name, o.Version) || relates(n.Conflicts, "Conflicts", o.Name, o.Version)
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

// installedPaths are the paths of p that dpkg records as the package's own
// and refuses to let another package overwrite: files, symlinks,
// hardlinks, generated files (not directories, which packages share).
func installedPaths(p *recipe.ResolvedPackage) []string {
	var out []string
	for _, f := range p.Files {
		out = append(out, f.Dest)
	}
	for _, l := range p.Symlinks {
		out = append(out, l.Dest)
	}
	for _, l := range p.Hardlinks {
		out = append(out, l.Dest)
	}
	for _, g := range p.GeneratedFiles {
		out = append(out, g.Dest)
	}
	return out
}

// relates reports whether one of the relations (of field) names the package
// name at version (a relation without a version names every version).
func relates(rels []string, field, name, version string) bool {
	for _, r := range rels {
		groups, err := deb.ParseRelations(field, r)
		if err != nil {
			continue
		}
		for _, g := range groups {
			for _, x := range g {
				if x.Name != name {
					continue
				}
				if ok, err := x.SatisfiedBy(version); err == nil && ok {
					return true
				}
			}
		}
	}
	return false
}
