package recipe

import (
	"fmt"

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
