package recipe

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

)

// Regenerate the golden plans with: go test ./pkg/recipe -run TestPlanGolden -update
var update = flag.Bool("update", false, "rewrite testdata/*.golden.json from the current output")

var fixtureOpts = PlanOptions{LocalSuffix: "~wmf1", DefaultMaintainer: "Default Maintainer <default@example.org>"}

func loadFixture(t *testing.T) *Recipe {
	t.Helper()
	r, err := Load("testdata/recipes/hello.yaml", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// goldenView makes a plan readable and machine-independent for the golden
// file: absolute paths relative to testdata, gzip content as its text.
func goldenView(t *testing.T, p *Plan, root string) []byte {
	t.Helper()
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	for _, pkg := range v.(map[string]any)["Packages"].([]any) {
		for _, g := range pkg.(map[string]any)["GeneratedFiles"].([]any) {
			gf := g.(map[string]any)
			var content []byte
			if err := json.Unmarshal([]byte(`"`+gf["Content"].(string)+`"`), &content); err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(gf["Dest"].(string), ".gz") {
				content = gunzip(t, content)
			}
			gf["Content"] = strings.Split(string(content), "\n")
		}
	}
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(bytes.ReplaceAll(out, []byte(root), []byte("$ROOT")), '\n')
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestPlanGolden(t *testing.T) {
	r := loadFixture(t)
	for _, arch := range []string{"amd64", "arm64"} {
		t.Run(arch, func(t *testing.T) {
			p, err := r.Plan(arch, fixtureOpts)
			if err != nil {
				t.Fatal(err)
			}
			got := goldenView(t, p, r.Root)
			golden := filepath.Join("testdata", "hello_"+arch+".golden.json")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("plan for %s differs from %s (rerun with -update and review the diff):\n%s", arch, golden, got)
			}
		})
	}
}
