package recipe

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	p, err := r.Plan("arm64", PlanOptions{DefaultMaintainer: "Ops <ops@example.org>"})
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
