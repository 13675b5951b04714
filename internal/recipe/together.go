package recipe

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// CheckTogether finds what no recipe shows alone among recipes linted or
// built together: two with the same name (the source of both changelogs,
// what release sets and updeb compat know a recipe by), and two that make
// the same package file (package name, version and architecture), where
// the later would replace the earlier in the output folder and in the
// repository, and two packages of two recipes that install one path (a
// file, symlink or hardlink, merged-/usr's two names counting as one)
// where neither conflicts with nor replaces the other, of which dpkg would
// refuse the second, or one inside what the other installs as a file or
// symlink. Each finding is in the later recipe (in the order given), at its
// name or its package's name. The packages' paths are warnings, not
// findings: each package is sound, and dpkg refuses only the node that
// installs both (a series whose package names carry the minor, moving to
// the next, or two recipes an operator never installs together).
func CheckTogether(rs []*Recipe) (findings, warnings []Finding) {
	at := func(out *[]Finding) func(r *Recipe, n *yaml.Node, format string, args ...any) {
		return func(r *Recipe, n *yaml.Node, format string, args ...any) {
			f := Finding{File: r.Path, Message: fmt.Sprintf(format, args...)}
			if n != nil && n.Line > 0 {
				f.Line, f.Col = n.Line, max(n.Column, 1)
			}
			*out = append(*out, f)
		}
	}
	add, warn := at(&findings), at(&warnings)
	type maker struct {
		r   *Recipe
		pkg string
	}
	byName, byFile := map[string]*Recipe{}, map[string]maker{}
	// arch + path (merged-/usr's) -> the names of the packages that
	// install it, in the order met; arch + path + name -> the installers
	// of that name there, those alike (alikeKey) once; and the pairs of
	// packages already reported. A package is checked against each alike
	// once, not against each installer: a thousand copies of one recipe
	// (or of a series' shared package) made the check quadratic.
	byPath, reported := map[string][]string{}, map[[2]string]bool{}
	named, byAlike := map[string][]*alike{}, map[string]*alike{}
	// arch + path (merged-/usr's) -> the installer (in installers) of a
	// file or symlink there, and of a path inside the folder there.
	type archPath struct{ arch, path string }
	var installers []installer
	seq := 0
	leaf, inside := map[archPath]int{}, map[archPath]int{}
	apart := func(r *Recipe, pp ResolvedPackage, o installer) bool {
		return o.r == r || o.pp.Name == pp.Name || reported[[2]string{o.pp.Name, pp.Name}] || o.pp.MatchedIn(pp.Conflicts, "Conflicts") || pp.MatchedIn(o.pp.Conflicts, "Conflicts")
	}
	for _, r := range rs {
		if other, ok := byName[r.Name]; ok {
			add(r, valueOf(r.node, "name"), "name: %q is also the name of %s: each recipe needs its own (the changelog's source, what release sets and updeb compat call it)", r.Name, other.Path)
		} else {
			byName[r.Name] = r
		}
		mine := map[string]bool{}
		for _, a := range r.Architectures {
			p, err := r.Resolve(a.Debian, ResolveOptions{SourcesOnly: true})
			if err != nil {
				continue // Load resolved it; nothing to add
			}
			for i, pp := range p.Packages {
				for _, dest := range pp.InstalledPaths() {
					key := a.Debian + "\x00" + usrMerged(dest)
					// Of each other name, the first installer met that
					// is of another recipe and neither takes over from
					// the other; reported in the order met.
					var clash []*installer
					for _, name := range byPath[key] {
						if name == pp.Name || reported[[2]string{name, pp.Name}] {
							continue
						}
						var first *installer
						for _, k := range named[key+"\x00"+name] {
							o := k.notOf(r)
							if o == nil || first != nil && first.seq < o.seq || takesOver(pp, o.pp) || takesOver(o.pp, pp) {
								continue
							}
							first = o
						}
						if first != nil {
							clash = append(clash, first)
						}
					}
					slices.SortFunc(clash, func(a, b *installer) int { return cmp.Compare(a.seq, b.seq) })
					for _, o := range clash {
						reported[[2]string{o.pp.Name, pp.Name}] = true
						as := ""
						if o.path != dest {
							as = " as " + o.path + aliasNote(dest, o.path)
						}
						warn(r, valueOf(r.Packages[i].node, "name"), "package %s installs %s, which package %s of %s installs too%s, and neither conflicts with nor replaces the other: dpkg refuses to install the second (trying to overwrite '%s', which is also in package %s); give one conflicts and replaces the other (Debian policy 7.6) or, for the packages of a versioned series at once (bump --new-minor moves the minor in such names), a name that each of them provides, conflicts with and replaces; or install the path once", pp.Name, dest, o.pp.Name, o.r.Path, as, dest, o.pp.Name)
					}
					seq++
					nk := key + "\x00" + pp.Name
					if len(named[nk]) == 0 {
						byPath[key] = append(byPath[key], pp.Name)
					}
					ak := nk + "\x00" + alikeKey(pp, dest)
					if k := byAlike[ak]; k == nil {
						k = &alike{first: &installer{r, pp, dest, seq}}
						byAlike[ak] = k
						named[nk] = append(named[nk], k)
					} else if k.other == nil && k.first.r != r {
						k.other = &installer{r, pp, dest, seq}
					}
					k := usrMerged(dest)
					for parent := range parents(k) {
						if j, ok := leaf[archPath{a.Debian, parent}]; ok && !apart(r, pp, installers[j]) {
							o := installers[j]
							reported[[2]string{o.pp.Name, pp.Name}] = true
							warn(r, valueOf(r.Packages[i].node, "name"), "package %s installs %s inside %s, which package %s of %s installs as a file or symlink: %s", pp.Name, dest, o.path, o.pp.Name, o.r.Path, overFolder)
							break
						}
					}
					if j, ok := inside[archPath{a.Debian, k}]; ok && !apart(r, pp, installers[j]) {
						o := installers[j]
						reported[[2]string{o.pp.Name, pp.Name}] = true
						warn(r, valueOf(r.Packages[i].node, "name"), "package %s installs %s as a file or symlink, but package %s of %s installs %s inside it: %s", pp.Name, dest, o.pp.Name, o.r.Path, o.path, overFolder)
					}
					installers = append(installers, installer{r, pp, dest, seq})
					if _, ok := leaf[archPath{a.Debian, k}]; !ok {
						leaf[archPath{a.Debian, k}] = len(installers) - 1
					}
					for parent := range parents(k) {
						if _, ok := inside[archPath{a.Debian, parent}]; ok {
							break // and so are its parents
						}
						inside[archPath{a.Debian, parent}] = len(installers) - 1
					}
				}
				if mine[pp.OutputFile] {
					continue // an architecture-independent package, in every architecture's plan
				}
				mine[pp.OutputFile] = true
				if m, ok := byFile[pp.OutputFile]; ok {
					add(r, valueOf(r.Packages[i].node, "name"), "package name: %s makes %s, which %s makes too (package %s): one would replace the other in the output folder and the repository; give one of them another package name or version", pp.Name, pp.OutputFile, m.r.Path, m.pkg)
					continue
				}
				byFile[pp.OutputFile] = maker{r, pp.Name}
			}
		}
	}
	return findings, warnings
}

// installer is a package of a recipe that installs path (CheckTogether).
type installer struct {
	r    *Recipe
	pp   ResolvedPackage
	path string
	seq  int // its place among all installers, in the order met
}

// alike is the installers of one path whose packages' checks against a
// later package read the same (alikeKey): the first met, and the first of
// another recipe than the first's, for a later package of the first's
// recipe, which is not checked against its own.
type alike struct{ first, other *installer }

// notOf returns the first of k's installers that is not of recipe r, or
// nil.
func (k *alike) notOf(r *Recipe) *installer {
	if k.first.r != r {
		return k.first
	}
	return k.other
}

// alikeKey is what CheckTogether reads of a package installing path, but
// its name and recipe, to check it against a later one: the path as it
// installs it, its version and the relations by which one package takes
// over from another.
func alikeKey(pp ResolvedPackage, path string) string {
	return strings.Join([]string{path, pp.Version, strings.Join(pp.Provides, "\n"), strings.Join(pp.Conflicts, "\n"), strings.Join(pp.Replaces, "\n")}, "\x00")
}

// takesOver reports whether package a lets dpkg install its files over
// package b's: it conflicts with b (dpkg removes b) or replaces it (dpkg
// hands b's files over), by b's name or a name b provides, at b's version.
func takesOver(a, b ResolvedPackage) bool {
	return b.MatchedIn(a.Conflicts, "Conflicts") || b.MatchedIn(a.Replaces, "Replaces")
}

// overFolder says what dpkg makes of two packages, one of which installs a
// file or symlink where the other has a folder (its own, or one above what
// it installs).
const overFolder = "dpkg refuses the package installed second (trying to overwrite the path, which is also in the other package) or, where the symlink's package comes second, keeps the folder and leaves the symlink out without a word; install one of them elsewhere"
