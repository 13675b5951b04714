package recipe

import (
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
// repository. Each finding is in the later recipe (in the order given), at
// its name or its package's name.
func CheckTogether(rs []*Recipe) []Finding {
	var out []Finding
	add := func(r *Recipe, n *yaml.Node, format string, args ...any) {
		f := Finding{File: r.Path, Message: fmt.Sprintf(format, args...)}
		if n != nil && n.Line > 0 {
			f.Line, f.Col = n.Line, max(n.Column, 1)
		}
		out = append(out, f)
	}
	type maker struct {
		r   *Recipe
		pkg string
	}
	byName, byFile := map[string]*Recipe{}, map[string]maker{}
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
	return out
}

// WarnTogether finds what recipes linted together do to each other on a
// node that is not worth refusing them for: two packages of other names
// (kubelet-1.31 and kubelet-1.32, the packages of a versioned series that
// bump --new-minor made) that install the same paths, where neither
// conflicts with the other (or a package it provides), nor replaces and
// breaks it. dpkg then refuses to install one where the other is ("trying
// to overwrite '/usr/bin/kubelet', which is also in package kubelet-1.31")
// and apt stops half-way. Each warning is in the later recipe (in the order
// given), at its package's name, one for each pair of packages.
func WarnTogether(rs []*Recipe) []Finding {
	type owner struct {
		r  *Recipe
		pp ResolvedPackage
	}
	type clash struct {
		r     *Recipe
		i     int // the package of r
		name  string
		other owner
		paths []string
	}
	var clashes []*clash
	byPath := map[string]owner{} // architecture and path -> the first package that installs it
	byPair := map[[3]string]*clash{}
	for _, r := range rs {
		for _, a := range r.Architectures {
			p, err := r.Resolve(a.Debian, ResolveOptions{SourcesOnly: true})
			if err != nil {
				continue // Load resolved it; nothing to add
			}
			for i, pp := range p.Packages {
				for _, path := range pp.InstalledPaths() {
					key := a.Debian + " " + path
					o, ok := byPath[key]
					if !ok {
						byPath[key] = owner{r, pp}
						continue
					}
					if o.r == r || o.pp.Name == pp.Name || exclusive(&pp, &o.pp) || exclusive(&o.pp, &pp) {
						continue
					}
					pair := [3]string{r.Path, pp.Name, o.pp.Name}
					c := byPair[pair]
					if c == nil {
						c = &clash{r: r, i: i, name: pp.Name, other: o}
						byPair[pair] = c
						clashes = append(clashes, c)
					}
					if !slices.Contains(c.paths, path) {
						c.paths = append(c.paths, path)
					}
				}
			}
		}
	}
	var out []Finding
	for _, c := range clashes {
		shown := strings.Join(c.paths, ", ")
		if len(c.paths) > 3 {
			shown = fmt.Sprintf("%s and %d more", strings.Join(c.paths[:3], ", "), len(c.paths)-3)
		}
		o := c.other.pp.Name
		f := Finding{File: c.r.Path, Message: fmt.Sprintf("package %s installs %s, which package %s of %s installs too, and neither conflicts with the other: dpkg refuses to install one where the other is (\"trying to overwrite '%s', which is also in package %s\") and apt stops half-way; add conflicts: [%s] and replaces: [%s] to package %s (Debian policy 7.6.2), or, for every package of a versioned series at once (bump --new-minor moves the minor in such names), a name that each of them provides, conflicts with and replaces; or install it at other paths",
			c.name, shown, o, c.other.r.Path, c.paths[0], o, o, o, c.name)}
		if n := valueOf(c.r.Packages[c.i].node, "name"); n != nil && n.Line > 0 {
			f.Line, f.Col = n.Line, max(n.Column, 1)
		}
		out = append(out, f)
	}
	return out
}

// exclusive reports whether package p keeps package o off the node where it
// is installed: it conflicts with o (or with a name o provides), or it
// replaces o and breaks it.
func exclusive(p, o *ResolvedPackage) bool {
	return o.MatchedIn(p.Conflicts, "Conflicts") || o.MatchedIn(p.Replaces, "Replaces") && o.MatchedIn(p.Breaks, "Breaks")
}
