package deb

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The predicates and their published patterns say the same thing.
func TestNamesMatchTheirPatterns(t *testing.T) {
	pkgRE := regexp.MustCompile(`^` + PackageNamePattern + `$`)
	archRE := regexp.MustCompile(`^` + ArchitecturePattern + `$`)
	for _, s := range []string{"", "a", "ab", "a-", "0ad", "libc6", "g++", "kubernetes-client136", "Helm", "kube_ctl",
		"-a", "+a", ".a", "a:b", "a b", "all", "any", "source", "amd64", "musl-linux-amd64", "arm64\n", "é1", "x.y+z-1"} {
		if got, want := ValidPackageName(s), pkgRE.MatchString(s); got != want {
			t.Errorf("ValidPackageName(%q) = %v, the pattern says %v", s, got, want)
		}
		if got, want := ValidArchitecture(s), archRE.MatchString(s) && s != "any" && s != "source"; got != want {
			t.Errorf("ValidArchitecture(%q) = %v, the pattern says %v", s, got, want)
		}
	}
}

// ParseRelations returns what each alternative names, and marks pure
// syntax errors apart from broken rules of the field.
func TestParseRelations(t *testing.T) {
	got, err := ParseRelations("Depends", " libc6 (>= 2.36), adduser | passwd:any ( << 2:1.0~rc1-1 ) ,iptables(>=1.8)")
	if err != nil {
		t.Fatal(err)
	}
	want := [][]Relation{
		{{Name: "libc6", Op: ">=", Version: "2.36"}},
		{{Name: "adduser"}, {Name: "passwd", Arch: "any", Op: "<<", Version: "2:1.0~rc1-1"}},
		{{Name: "iptables", Op: ">=", Version: "1.8"}},
	}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if got, err := ParseRelations("Depends", "  "); err != nil || got != nil {
		t.Errorf("empty value: %v, %v", got, err)
	}
	for _, tt := range []struct {
		field, value string
		syntax       bool
		want         string
	}{
		{"Depends", "libc6 (> 2)", true, `"libc6 (> 2)": version relation "> 2": expected one of << <= = >= >> before the version`},
		{"Depends", "libc6 [amd64]", true, `expected "name (op version)" after "libc6"`},
		{"Depends", "Libc6", true, `"Libc6" is not a package name: expected [a-z0-9][a-z0-9+.-]+`},
		{"Depends", "ab,,cd", true, "empty relation"},
		{"Depends", "libc6 (>= 2.36", true, `after "libc6"`},
		{"Depends", "libc6:AMD64", true, "architecture qualifier"},
		// dpkg never satisfies it in a binary package (an architecture
		// called "native"); dpkg-gencontrol refuses it.
		{"Depends", "passwd | libc6:native (>= 2)", false, "architecture qualifier native: belongs to a source package's Build-Depends"},
		{"Breaks", "libc6:native", false, "architecture qualifier native"},
		{"Depends", "libc6 (>= 2 3)", true, `version "2 3": expected one version`},
		{"Depends", "libc6 (>= v2)", false, `version "v2": upstream version "v2" must start with a digit`},
		{"Provides", "virtual (>= 1)", false, "only an exact version (=) may be provided, found >="},
		{"Conflicts", "a | b", false, `alternatives (|) are not allowed, found "a | b"`},
		{"Breaks", "a | b", false, "alternatives (|) are not allowed"},
		// Unicode spaces are not white space to dpkg: part of the name or
		// version, which it refuses.
		{"Depends", "libc6\u00a0, bar", true, `"libc6\u00a0" is not a package name`},
		{"Depends", "libc6\u0085", true, "is not a package name"},
		{"Depends", "libc6 (\u00a0>= 1)", true, "expected one of << <= = >= >> before the version"},
		{"Depends", "libc6 (>= 1\u00a0)", false, `version "1\u00a0"`},
	} {
		_, err := ParseRelations(tt.field, tt.value)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %q: error %v, want %q", tt.field, tt.value, err, tt.want)
			continue
		}
		if errors.Is(err, ErrRelationSyntax) != tt.syntax {
			t.Errorf("%s: %q: errors.Is(ErrRelationSyntax) = %v, want %v", tt.field, tt.value, !tt.syntax, tt.syntax)
		}
	}
}

// The compression names: the default first, each one Write takes.
func TestCompressions(t *testing.T) {
	got := Compressions()
	if want := []Compression{CompressionXZ, CompressionGzip, CompressionZstd, CompressionNone}; !slices.Equal(got, want) {
		t.Fatalf("Compressions() = %v, want %v", got, want)
	}
	for _, c := range got {
		if _, err := codecFor(c); err != nil {
			t.Errorf("%s: %v", c, err)
		}
	}
	for _, m := range XZModes() {
		if _, err := xzModeOf(m); err != nil {
			t.Errorf("%s: %v", m, err)
		}
	}
}

// TestOneHomeForDebianRules: the package-name rule, the relation grammar and
// the compression names are written here, in pkg/deb, and nowhere else in
// updeb's code; the rest of the repository calls ValidPackageName,
// ParseRelations and Compressions. Each exemption below is another rule that
// only looks alike.
func TestOneHomeForDebianRules(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	rules := map[string]*regexp.Regexp{
		"the package-name rule":  regexp.MustCompile(`\[a-z0-9\]\[a-z0-9[+.-]{3}\]`),
		"the relation operators": regexp.MustCompile(`<<\|<=|"<<", "<="`),
		"the compression names":  regexp.MustCompile(`"xz", "gzip"|"gzip", "zstd"|want xz, gzip`),
	}
	exempt := map[string]string{
		"internal/recipe/load.go":       "lintianTagRE: lintian's tag names, one character allowed",
		"internal/compat/releaseset.go": "componentRE: names of the compatibility tables' components (kubelet, cri-tools), one character allowed",
	}
	home := map[string]bool{"pkg/deb/names.go": true, "pkg/deb/relation.go": true, "pkg/deb/compress.go": true}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != root && (n == "testdata" || strings.HasPrefix(n, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") || home[rel] || strings.HasPrefix(rel, "internal/testkit/") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			for what, re := range rules {
				if re.MatchString(s) || re.MatchString(lit.Value) {
					if _, ok := exempt[rel]; ok && what == "the package-name rule" && !strings.Contains(s, "+.-]+") {
						continue
					}
					t.Errorf("%s: %s is written again (%s); call pkg/deb instead", fset.Position(lit.Pos()), what, s)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
