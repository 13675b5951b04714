package main

import (
	"bytes"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/updeb/updeb/internal/recipe"
)

// The documentation's tests: the README stays short, every link leads
// somewhere, the index lists every document, the code tour lists every
// package, the examples name packages the recipes build, the Go names given
// in code are declared, and the exit rules are documented in the order
// exit.go tries them.

const repoRoot = "../.."

func readDoc(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestReadmeSize: the README is the first screen, not the manual.
func TestReadmeSize(t *testing.T) {
	const limit = 12 << 10
	if n := len(readDoc(t, "README.md")); n > limit {
		t.Errorf("README.md has %d bytes, more than %d: move the detail into docs/", n, limit)
	}
}

// docFiles are the Markdown files of the documentation, relative to the root.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md", "keys/README.md", "recipes/README.md"}
	err := filepath.WalkDir(filepath.Join(repoRoot, "docs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(repoRoot, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

var (
	mdLink    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	mdHeading = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
	fence     = regexp.MustCompile("(?ms)^```.*?^```")
)

// anchors are the heading anchors GitHub makes for a Markdown document.
func anchors(doc string) map[string]bool {
	out := map[string]bool{}
	for _, m := range mdHeading.FindAllStringSubmatch(fence.ReplaceAllString(doc, ""), -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteByte('-')
			}
		}
		out[b.String()] = true
	}
	return out
}

// TestDocsLinks: every relative link of the documentation leads to a file or
// folder that exists, and a link to a heading to a heading that exists.
func TestDocsLinks(t *testing.T) {
	for _, file := range docFiles(t) {
		doc := readDoc(t, file)
		for _, m := range mdLink.FindAllStringSubmatch(fence.ReplaceAllString(doc, ""), -1) {
			link := m[1]
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			target, anchor, _ := strings.Cut(link, "#")
			path := file
			if target != "" {
				path = filepath.ToSlash(filepath.Join(filepath.Dir(file), target))
				if _, err := os.Stat(filepath.Join(repoRoot, path)); err != nil {
					t.Errorf("%s: link %s: %v", file, link, err)
					continue
				}
			}
			if anchor != "" && strings.HasSuffix(path, ".md") && !anchors(readDoc(t, path))[anchor] {
				t.Errorf("%s: link %s: %s has no heading #%s", file, link, path, anchor)
			}
		}
	}
}

// sectionRef is a section named in words rather than linked: the README's
// "Title", or FILE.md ("Title", "Other title").
var sectionRef = regexp.MustCompile(`the (README)'s "([^"]+)"|([\w/.-]+\.md) \(("[^)]+)\)`)

// TestDocsSectionReferences: a section a document names in words is a
// heading of the document it names (a reader looks for it there).
func TestDocsSectionReferences(t *testing.T) {
	found := 0
	for _, file := range docFiles(t) {
		for _, m := range sectionRef.FindAllStringSubmatch(readDoc(t, file), -1) {
			target, titles := "README.md", []string{m[2]}
			if m[1] == "" {
				target, titles = m[3], nil
				for _, q := range regexp.MustCompile(`"([^"]+)"`).FindAllStringSubmatch(m[4], -1) {
					titles = append(titles, q[1])
				}
			}
			doc, err := os.ReadFile(filepath.Join(repoRoot, target))
			if err != nil {
				t.Errorf("%s: %s names %s: %v", file, m[0], target, err)
				continue
			}
			for _, title := range titles {
				found++
				if !regexp.MustCompile(`(?m)^#{1,6} ` + regexp.QuoteMeta(title)).Match(doc) {
					t.Errorf("%s: %s: %s has no heading %q", file, m[0], target, title)
				}
			}
		}
	}
	if found < 2 {
		t.Errorf("only %d section references found: is the pattern still right?", found)
	}
}

// TestDocsIndex: docs/README.md links every document of docs/ (a document
// another branch adds fails here until the index lists it).
func TestDocsIndex(t *testing.T) {
	index := readDoc(t, "docs/README.md")
	files, _ := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	for _, f := range files {
		if name := filepath.Base(f); name != "README.md" && !strings.Contains(index, "]("+name+")") {
			t.Errorf("docs/README.md does not link %s", name)
		}
	}
	if len(files) < 8 {
		t.Errorf("only %d documents in docs/", len(files))
	}
}

// goPackages are the folders of the repository that hold Go files, as the go
// tool sees them (testdata and hidden folders left out).
func goPackages(t *testing.T) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(repoRoot, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != repoRoot && (n == "testdata" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".go") {
			rel, _ := filepath.Rel(repoRoot, filepath.Dir(p))
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// TestArchitectureTour: docs/ARCHITECTURE.md has one row per Go package and
// no row for a package that does not exist, and every file its stage table
// names is in one of the packages of its row.
func TestArchitectureTour(t *testing.T) {
	doc := readDoc(t, "docs/ARCHITECTURE.md")
	_, table, ok := strings.Cut(doc, "<!-- packages -->\n")
	table, _, ok2 := strings.Cut(table, "<!-- /packages -->")
	if !ok || !ok2 {
		t.Fatal("docs/ARCHITECTURE.md has no <!-- packages --> table")
	}
	rows := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([^`]+)/` \\|").FindAllStringSubmatch(table, -1) {
		if rows[m[1]] {
			t.Errorf("docs/ARCHITECTURE.md: %s has two rows", m[1])
		}
		rows[m[1]] = true
	}
	pkgs := goPackages(t)
	for _, p := range pkgs {
		if !rows[p] {
			t.Errorf("docs/ARCHITECTURE.md has no row for the package %s/", p)
		}
	}
	for r := range rows {
		if !slices.Contains(pkgs, r) {
			t.Errorf("docs/ARCHITECTURE.md has a row for %s/, which holds no Go package", r)
		}
	}

	_, stages, _ := strings.Cut(doc, "## The pipeline, stage by stage\n")
	stages, _, _ = strings.Cut(stages, "\n## ")
	n := 0
	for _, line := range strings.Split(stages, "\n") {
		cells := strings.Split(line, " | ")
		if len(cells) != 3 || !strings.Contains(cells[1], "`") {
			continue
		}
		n++
		var dirs []string
		for _, m := range regexp.MustCompile("`([a-z/]+)`").FindAllStringSubmatch(cells[1], -1) {
			dirs = append(dirs, m[1])
			if !slices.Contains(pkgs, m[1]) {
				t.Errorf("stage %q: no package %s", cells[0], m[1])
			}
		}
		for _, m := range regexp.MustCompile("`([a-z0-9_/]+\\.go)`").FindAllStringSubmatch(cells[2], -1) {
			found := false
			for _, d := range dirs {
				p := filepath.Join(repoRoot, d, m[1])
				if strings.Contains(m[1], "/") {
					p = filepath.Join(repoRoot, m[1])
				}
				if _, err := os.Stat(p); err == nil {
					found = true
				}
			}
			if !found {
				t.Errorf("stage %q: %s is in none of %v", cells[0], m[1], dirs)
			}
		}
	}
	if n < 10 {
		t.Errorf("the stage table has %d rows", n)
	}
}

// builtPackages are the package names the recipes build, of recipes/ and of
// the demo, rendered for their first architecture.
func builtPackages(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, r := range append(checkoutRecipes(t, "recipes"), checkoutRecipes(t, "testdata/demo/recipes")...) {
		res, err := r.Resolve(r.ArchNames()[0], recipe.ResolveOptions{DefaultMaintainer: "Docs <docs@example.org>"})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range res.Packages {
			out[p.Name] = true
		}
	}
	return out
}

// checkoutRecipes are the recipes of a recipes folder of this checkout.
func checkoutRecipes(t *testing.T, dir string) []*recipe.Recipe {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(repoRoot, dir, "*.yaml"))
	var out []*recipe.Recipe
	for _, f := range files {
		r, err := recipe.Load(f, recipe.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// packagesInExamples finds the package names the documentation's shell,
// Puppet and apt examples install, pin or promote.
func packagesInExamples(doc string) []string {
	var names []string
	add := func(s string) {
		if s == "[flags]" {
			return
		}
		s = strings.Trim(s, `'",[]`)
		s, _, _ = strings.Cut(s, "=")
		if s != "" && !strings.HasPrefix(s, "-") && !strings.ContainsAny(s, "*$/[\\") && s != "NAME" && s != "[flags]" {
			names = append(names, s)
		}
	}
	for _, block := range fence.FindAllString(doc, -1) {
		for _, line := range strings.Split(block, "\n") {
			line, _, _ = strings.Cut(line, " #")
			fields := strings.Fields(line)
			for i, f := range fields {
				switch {
				case f == "install" && i > 0 && strings.HasSuffix(fields[i-1], "apt-get"),
					f == "policy" && i > 0 && fields[i-1] == "apt-cache":
					for _, a := range fields[i+1:] {
						if a == "&&" || a == "|" {
							break
						}
						add(a)
					}
				case (f == "promote" || f == "remove") && i > 0 && fields[i-1] == "repo":
					// NAME=VERSION arguments, and a last argument that is no
					// flag's value.
					for j, a := range fields[i+1:] {
						last := i+1+j == len(fields)-1 && !strings.HasPrefix(fields[len(fields)-2], "-")
						if strings.Contains(a, "=") && !strings.HasPrefix(a, "-") || last {
							add(a)
						}
					}
				case f == "Package:" && i == 0:
					for _, a := range fields[1:] {
						add(a)
					}
				case f == "package" && i+1 < len(fields) && fields[i+1] == "{":
					rest := strings.Join(fields[i+2:], " ")
					rest, _, _ = strings.Cut(rest, ":")
					for _, a := range strings.Split(rest, ",") {
						add(strings.TrimSpace(a))
					}
				}
			}
		}
	}
	return names
}

// TestDocsPackageNames: every package the documentation's examples install,
// pin or promote is one a recipe builds (a manifest copied from the docs must
// not fail with "package not found").
func TestDocsPackageNames(t *testing.T) {
	built := builtPackages(t)
	if !built["kubernetes-client136"] || !built["hello"] {
		t.Fatalf("the recipes' packages are not what this test expects: %v", built)
	}
	found := 0
	for _, file := range docFiles(t) {
		for _, name := range packagesInExamples(readDoc(t, file)) {
			found++
			if !built[name] {
				t.Errorf("%s: the example names package %q, which no recipe in recipes/ or testdata/demo builds", file, name)
			}
		}
	}
	if found < 8 {
		t.Errorf("only %d package names found in the examples: the test no longer reads them", found)
	}
	if got := packagesInExamples("```\npackage { ['kubectl', 'kubelet']:\n```\n"); !slices.Equal(got, []string{"kubectl", "kubelet"}) {
		t.Errorf("a Puppet package resource reads as %q", got)
	}
}

// goName is a Go name the documentation gives in code: `pkg.Name`, or
// `pkg.Name.Field`, where only pkg.Name is looked up.
var goName = regexp.MustCompile("`([a-z][a-z0-9]*)\\.([A-Z][A-Za-z0-9_]*)[`.(]")

// TestDocsRecipeRevisions: where the documentation (and a command's help
// example) names a build of a recipe's current upstream version, a package
// file out/kubernetes-*_1.36.0-3_*.deb, a selector NAME=1.36.0-3 or a
// pinned version '1.36.0-3', it has the recipe's Debian revision: the
// README's "updeb build kubernetes-1.36" then "updeb publish
// out/kubernetes-*_1.36.0-1_*.deb" matched no file once the revision was 3.
func TestDocsRecipeRevisions(t *testing.T) {
	var out, errOut bytes.Buffer
	root := newRootCmd(&globalOptions{stdout: &out, stderr: &errOut})
	texts := map[string]string{}
	for _, file := range docFiles(t) {
		texts[file] = readDoc(t, file)
	}
	walk(root, func(c *cobra.Command) { texts[c.CommandPath()+" --help"] = c.Example })
	recipes := checkoutRecipes(t, "recipes")
	// NAME_VERSION-REV_ (NAME may be a glob: kubernetes-*), NAME=VERSION-REV
	// or 'VERSION-REV' (any package).
	build := regexp.MustCompile(`(?:([a-z0-9*][a-z0-9.+*-]*)[_=]|')([0-9][0-9A-Za-z.+~]*)-([0-9A-Za-z.+~]+?)(?:[_'\s]|$)`)
	checked := 0
	for where, text := range texts {
		for _, m := range build.FindAllStringSubmatch(text, -1) {
			var of []string // the recipes at that version that build such a package
			ok := false
			for _, r := range recipes {
				if r.Version != m[2] || !slices.ContainsFunc(r.Packages, func(p recipe.Package) bool {
					matched, _ := path.Match(m[1], p.Name)
					return m[1] == "" || matched
				}) {
					continue
				}
				of = append(of, r.Name+" "+r.Version+"-"+r.Revision)
				ok = ok || r.Revision == m[3]
			}
			if len(of) > 0 {
				checked++
				if !ok {
					t.Errorf("%s: %q names a build with revision %s, which none of %s has", where, strings.TrimSpace(m[0]), m[3], strings.Join(of, ", "))
				}
			}
		}
	}
	if checked < 5 {
		t.Errorf("only %d builds of the recipes' versions found in the documentation: the test no longer reads them", checked)
	}
}

// docVariables are names the documentation's Go code gives a value, not a
// package: `f.Add` of a fuzz target's f *testing.F.
var docVariables = map[string]bool{"f": true}

// TestDocsGoNames: a Go name the documentation gives (`track.MaxIncomplete`,
// `repo.ErrNotManaged`) is declared in a package of that name: a reader
// greps for it, and a script matches the error it names.
func TestDocsGoNames(t *testing.T) {
	declared := map[string]map[string]bool{} // package folder's name -> its top-level names
	for _, dir := range goPackages(t) {
		names := declared[filepath.Base(dir)]
		if names == nil {
			names = map[string]bool{}
			declared[filepath.Base(dir)] = names
		}
		files, _ := filepath.Glob(filepath.Join(repoRoot, dir, "*.go"))
		for _, file := range files {
			f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl: // a method too: `deb.Info.Problems` reads as deb.Info
					names[d.Name.Name] = true
				case *ast.GenDecl:
					for _, spec := range d.Specs {
						switch s := spec.(type) {
						case *ast.TypeSpec:
							names[s.Name.Name] = true
						case *ast.ValueSpec:
							for _, n := range s.Names {
								names[n.Name] = true
							}
						}
					}
				}
			}
		}
	}
	checked := 0
	for _, file := range docFiles(t) {
		for _, m := range goName.FindAllStringSubmatch(readDoc(t, file), -1) {
			names, ours := declared[m[1]]
			if !ours {
				// The standard library's (os.Root), or a variable of an
				// example (f.Add); a package of no such name is an error.
				if _, err := build.Import(m[1], "", build.FindOnly); err != nil && !docVariables[m[1]] {
					t.Errorf("%s: `%s.%s`: this module has no package %s (nor has the standard library)", file, m[1], m[2], m[1])
				}
				continue
			}
			checked++
			if !names[m[2]] {
				t.Errorf("%s: `%s.%s`: no package %s of this module declares %s", file, m[1], m[2], m[1], m[2])
			}
		}
	}
	if checked < 20 {
		t.Errorf("only %d Go names found in the documentation: the test no longer reads them", checked)
	}
}

// TestExitRuleOrderDocumented: docs/scripting.md lists the groups of exit
// rules in the order exitRules tries them.
func TestExitRuleOrderDocumented(t *testing.T) {
	var want []int
	for _, r := range exitRules {
		if len(want) == 0 || want[len(want)-1] != r.code {
			want = append(want, r.code)
		}
	}
	doc := readDoc(t, "docs/scripting.md")
	_, list, ok := strings.Cut(doc, "<!-- exit-rule-order -->\n")
	list, _, ok2 := strings.Cut(list, "<!-- /exit-rule-order -->")
	if !ok || !ok2 {
		t.Fatal("docs/scripting.md has no <!-- exit-rule-order --> list")
	}
	var got []int
	for _, m := range regexp.MustCompile(`(?m)^\d+\. (\d+):`).FindAllStringSubmatch(list, -1) {
		c, _ := strconv.Atoi(m[1])
		got = append(got, c)
	}
	if !slices.Equal(got, want) {
		t.Errorf("docs/scripting.md lists the exit rules' codes in the order %v; exit.go tries them in the order %v", got, want)
	}
}
