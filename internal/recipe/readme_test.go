package recipe

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/updeb/updeb/pkg/debversion"
)

// TestReadmeExample keeps the complete example in recipes/README.md valid.
func TestReadmeExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "recipes", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "## A complete example\n\n```yaml\n")
	if !ok {
		t.Fatal("recipes/README.md has no complete example")
	}
	example, _, _ := strings.Cut(rest, "```")
	dir := t.TempDir()
	for name, content := range map[string]string{"recipes/helm.yaml": example, "keys/helm.asc": "placeholder\n"} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := Load(filepath.Join(dir, "recipes", "helm.yaml"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.Resolve("arm64", ResolveOptions{DefaultMaintainer: "Ops <ops@example.org>"})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Sources[0].Checksums.Name; got != "helm-v3.18.4-linux-arm64.tar.gz" {
		t.Errorf("checksum entry name %q", got)
	}
	if got := p.Packages[0].OutputFile; got != "helm3_3.18.4-1_arm64.deb" {
		t.Errorf("output file %q", got)
	}
}

// TestReadmeConstraints keeps recipes/README.md's constraint grammar honest:
// every example it gives as valid parses, every one it gives as refused does
// not.
func TestReadmeConstraints(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "recipes", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "### Version constraints\n")
	section, _, _ = strings.Cut(section, "\n#")
	if !ok {
		t.Fatal("recipes/README.md has no Version constraints section")
	}
	codes := func(s string) []string {
		var out []string
		for parts := strings.Split(s, "`"); len(parts) > 2; parts = parts[2:] {
			out = append(out, parts[1])
		}
		return out
	}
	valid, refused := 0, 0
	for _, line := range strings.Split(section, "\n") {
		switch {
		case strings.HasPrefix(line, "| `"): // a table row: its last cell holds examples
			cells := strings.Split(strings.Trim(line, "|"), " | ")
			for _, c := range codes(cells[len(cells)-1]) {
				if _, err := debversion.ParseConstraint(c); err != nil {
					t.Errorf("README example %q: %v", c, err)
				}
				valid++
			}
		case strings.HasPrefix(line, "- Anything else is refused"), strings.HasPrefix(line, "  (`>=`)"):
			for _, c := range codes(line) {
				if _, err := debversion.ParseConstraint(c); err == nil {
					t.Errorf("README says %q is refused, but it parses", c)
				}
				refused++
			}
		}
	}
	if valid < 8 || refused < 5 {
		t.Errorf("found %d valid and %d refused examples; the section's layout changed", valid, refused)
	}
}

// TestReadmeSignatures keeps every signature: example of recipes/README.md's
// Signatures section valid: each one, put in a recipe, loads.
func TestReadmeSignatures(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "recipes", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## Signatures\n")
	section, _, _ = strings.Cut(section, "\n## ")
	if !ok {
		t.Fatal("recipes/README.md has no Signatures section")
	}
	n := 0
	for _, block := range strings.Split(section, "```yaml\n")[1:] {
		example, _, _ := strings.Cut(block, "```")
		lines := strings.Split(strings.TrimRight(example, " \n"), "\n")
		indent := len(lines[0]) - len(strings.TrimLeft(lines[0], " "))
		for i, l := range lines { // dedent, then indent as a source's field
			lines[i] = "    " + l[min(indent, len(l)-len(strings.TrimLeft(l, " "))):]
		}
		sig := strings.Join(lines, "\n")
		text := strings.Replace(baseRecipe, "    signature: "+sigOpenPGP, sig, 1)
		text = strings.ReplaceAll(text, "keys/helm.asc", "keys/k.asc")
		_, file := writeProject(t, text)
		if _, err := Load(file, LoadOptions{}); err != nil {
			t.Errorf("example %d does not load:\n%s\n%v", n+1, sig, err)
		}
		n++
	}
	if n != 6 {
		t.Errorf("%d examples, want the 5 forms and a reusable workflow's source-repository", n)
	}
}
