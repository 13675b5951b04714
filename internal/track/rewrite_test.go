package track

import (
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/pkg/digest"
)

func TestFindNodes(t *testing.T) {
	src := "name: x # the name\nversion: '1.0.0'\nrelease-date: 2025-01-02\nsources:\n  - name: bin\n    sha256: {amd64: aa}\n"
	n, err := findNodes("r.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if n.version.Value != "1.0.0" || n.releaseDate.Line != 3 || n.revision != nil || n.digests["bin"][digest.SHA256] == nil {
		t.Fatalf("nodes: %+v", n)
	}
	out, _, err := splice("r.yaml", n.top, []byte(src), []edit{{n.version, "1.1.0"}, {n.releaseDate, "2025-02-03"}})
	if err != nil || string(out) != strings.NewReplacer("'1.0.0'", "'1.1.0'", "2025-01-02", "2025-02-03").Replace(src) {
		t.Errorf("splice: %v\n%s", err, out)
	}
	// The file is read as recipe.Load reads it: the same refusals, positioned.
	for in, want := range map[string]string{
		"version: &v 1.0.0\n":                   "r.yaml:1:10: version: YAML anchors and aliases are not supported",
		"version: 1.0.0\n---\nversion: 2.0.0\n": "r.yaml:2:1: a recipe is one YAML document; found another one here",
		"version: [1.0.0\n":                     "r.yaml:1:1: YAML syntax: did not find expected ',' or ']'",
		"# empty\n":                             "r.yaml:1:1: recipe is empty",
		"- a\n":                                 "r.yaml:1:1: not a recipe mapping",
		strings.Repeat("#", recipe.MaxSize+1):   "r.yaml:1:1: recipe is larger than 1048576 bytes",
	} {
		if _, err := findNodes("r.yaml", []byte(in)); err == nil || err.Error() != want {
			t.Errorf("findNodes(%.40q): %v, want %s", in, err, want)
		}
	}
}
