package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"

	"github.com/updeb/updeb/internal/compat"
	"github.com/updeb/updeb/internal/config"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/yamlfile"
)

// The JSON Schemas of the files people write, in docs/schemas/: each made by
// running its loader's own decoding as a schema run (yamlfile.Describe), so
// it is never written by hand beside the loader. A third-party validator
// (santhosh-tekuri/jsonschema, draft-07) is the referee that the schemas are
// schemas and that they agree with the loaders on every fixture.

const schemaDir = "../../docs/schemas"

// schemaSources are the published schemas and the loaders that make them.
var schemaSources = []struct {
	file   string
	schema func() *yamlfile.Schema
	load   func(path string, data []byte) error // the loader, on a file's content
}{
	{"recipe.schema.json", recipe.JSONSchema, func(p string, _ []byte) error { _, err := recipe.Load(p, recipe.LoadOptions{}); return err }},
	{"config.schema.json", config.JSONSchema, func(p string, b []byte) error { _, err := config.Parse(p, b); return err }},
	{"release-sets.schema.json", compat.ReleaseSetsJSONSchema, func(p string, b []byte) error { _, err := compat.ParseReleaseSets(p, b); return err }},
}

// schemaJSON renders a schema as it is published.
func schemaJSON(t *testing.T, s *yamlfile.Schema) []byte {
	t.Helper()
	s.SchemaURI = "http://json-schema.org/draft-07/schema#"
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// TestSchemas fails when a published schema is not what its loader makes
// now. Regenerate them with:
//
//	go test ./cmd/updeb -run TestSchemas -update
func TestSchemas(t *testing.T) {
	for _, src := range schemaSources {
		want := schemaJSON(t, src.schema())
		path := filepath.Join(schemaDir, src.file)
		if *update {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		have, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(have, want) {
			t.Errorf("docs/schemas/%s is stale (%v): run go test ./cmd/updeb -run TestSchemas -update", src.file, err)
		}
	}
}

// compileSchema compiles a published schema with the referee validator.
func compileSchema(t *testing.T, file string) *jsonschema.Schema {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(schemaDir, file))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft7)
	if err := c.AddResource(file, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(file)
	if err != nil {
		t.Fatalf("%s is not a valid JSON Schema: %v", file, err)
	}
	return s
}

// yamlValue is a YAML document as the JSON value an editor validates.
func yamlValue(data []byte) (any, error) {
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(b))
}

// fixture is one file a loader reads: a path (the loader may read its
// folder) and its content.
type fixture struct {
	path string
	data []byte
}

func globFixtures(t *testing.T, patterns ...string) []fixture {
	t.Helper()
	var out []fixture
	for _, p := range patterns {
		files, err := filepath.Glob(filepath.Join(repoRoot, p))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, fixture{f, b})
		}
	}
	return out
}

// heredocs are the files a document's shell examples write with
// cat > NAME <<'EOF', whose name holds part.
func heredocs(t *testing.T, doc, part string) []fixture {
	t.Helper()
	var out []fixture
	for _, m := range regexp.MustCompile(`(?s)cat > (\S+) <<'EOF'\n(.*?)\nEOF\n`).FindAllStringSubmatch(readDoc(t, doc), -1) {
		if strings.Contains(m[1], part) {
			p := filepath.Join(t.TempDir(), filepath.Base(m[1]))
			os.WriteFile(p, []byte(m[2]+"\n"), 0o644)
			out = append(out, fixture{p, []byte(m[2] + "\n")})
		}
	}
	return out
}

// yamlBlocks are a document's ```yaml blocks.
func yamlBlocks(t *testing.T, doc string) []fixture {
	t.Helper()
	var out []fixture
	for i, m := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(readDoc(t, doc), -1) {
		out = append(out, fixture{fmt.Sprintf("%s#%d", doc, i), []byte(m[1])})
	}
	return out
}

// TestSchemasAgreeWithLoaders: every fixture of the repository that its
// loader accepts validates against the schema (the real recipes, the demo's,
// the loaders' test fixtures, the hostile cases' files, the documentation's
// examples), and a fixture the schema refuses, the loader refuses too.
func TestSchemasAgreeWithLoaders(t *testing.T) {
	fixtures := map[string][]fixture{
		"recipe.schema.json": append(append(globFixtures(t, "recipes/*.yaml", "testdata/demo/recipes/*.yaml", "internal/recipe/testdata/recipes/*.yaml",
			"testdata/hostile/*/files/recipes/*.yaml"), heredocs(t, "docs/new-recipe.md", "/recipes/")...), readmeRecipe(t)),
		"config.schema.json": append(append(globFixtures(t, "testdata/demo/updeb.yaml", "testdata/hostile/*/files/updeb.yaml"),
			heredocs(t, "docs/new-recipe.md", "updeb.yaml")...), yamlBlocks(t, "docs/configuration.md")...),
		"release-sets.schema.json": globFixtures(t, "release-sets.yaml", "testdata/compat/*.yaml", "internal/compat/testdata/cases/*.yaml"),
	}
	for _, src := range schemaSources {
		s := compileSchema(t, src.file)
		accepted := 0
		for _, f := range fixtures[src.file] {
			v, err := yamlValue(f.data)
			if err != nil {
				continue // not a JSON value (an editor cannot check it either)
			}
			loadErr := src.load(f.path, f.data)
			schemaErr := s.Validate(v)
			if loadErr != nil {
				t.Logf("%s: the loader refuses it: %.200v", f.path, loadErr)
			}
			if loadErr == nil {
				accepted++
				if schemaErr != nil {
					t.Errorf("%s: the loader accepts it, %s refuses it: %v", f.path, src.file, schemaErr)
				}
			}
		}
		t.Logf("%s: %d fixtures, %d the loader accepts", src.file, len(fixtures[src.file]), accepted)
		if accepted < 3 {
			t.Errorf("%s: only %d fixtures the loader accepts", src.file, accepted)
		}
	}
}

// readmeRecipe is recipes/README.md's complete example, in a project of its
// own (its keyring as a placeholder file, as internal/recipe's test does).
func readmeRecipe(t *testing.T) fixture {
	t.Helper()
	_, rest, ok := strings.Cut(readDoc(t, "recipes/README.md"), "## A complete example\n\n```yaml\n")
	example, _, _ := strings.Cut(rest, "```")
	if !ok {
		t.Fatal("recipes/README.md has no complete example")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "recipes", "helm.yaml")
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.MkdirAll(filepath.Join(dir, "keys"), 0o755)
	os.WriteFile(filepath.Join(dir, "keys", "helm.asc"), []byte("placeholder\n"), 0o644)
	os.WriteFile(p, []byte(example), 0o644)
	return fixture{p, []byte(example)}
}

// schemaBase is the fixture a case of TestSchemasRefuse or TestSchemasAccept
// edits: the demo's recipe and config, the compat release sets.
func schemaBase(t *testing.T, schema string) fixture {
	t.Helper()
	switch schema {
	case "recipe.schema.json":
		return globFixtures(t, "testdata/demo/recipes/hello.yaml")[0]
	case "config.schema.json":
		return globFixtures(t, "testdata/demo/updeb.yaml")[0]
	}
	return globFixtures(t, "testdata/compat/release-sets.yaml")[0]
}

// schemaVerdicts edits schema's base fixture, replacing old with new, and
// returns the edited document, the loader's verdict on it and the schema's
// (a *jsonschema.ValidationError when it refuses).
func schemaVerdicts(t *testing.T, schema, old, new string) (data []byte, loadErr, schemaErr error) {
	t.Helper()
	b := schemaBase(t, schema)
	if !bytes.Contains(b.data, []byte(old)) {
		t.Fatalf("%q is not in %s", old, b.path)
	}
	data = bytes.Replace(b.data, []byte(old), []byte(new), 1)
	i := slices.IndexFunc(schemaSources, func(s struct {
		file   string
		schema func() *yamlfile.Schema
		load   func(string, []byte) error
	}) bool {
		return s.file == schema
	})
	p := filepath.Join(filepath.Dir(b.path), "edited-"+filepath.Base(b.path))
	if schema == "recipe.schema.json" {
		p = filepath.Join(t.TempDir(), "recipes", "hello.yaml")
		testCopyDemo(t, filepath.Dir(p))
		os.WriteFile(p, data, 0o644)
	}
	loadErr = schemaSources[i].load(p, data)
	v, err := yamlValue(data)
	if err != nil {
		t.Fatal(err)
	}
	return data, loadErr, compileSchema(t, schema).Validate(v)
}

// TestSchemasRefuse: documents the loader refuses for a reason a schema can
// say are refused by the schema too (an editor marks them while typing).
func TestSchemasRefuse(t *testing.T) {
	for _, tt := range []struct {
		schema, name, old, new string
		at                     string // where the schema refuses it (a JSON pointer)
	}{
		{"recipe.schema.json", "unknown top-level key", "\nversion:", "\ncolour: red\nversion:", "at '': additional properties 'colour'"},
		{"recipe.schema.json", "unknown source key", "\n    url:", "\n    mirror: x\n    url:", "at '/sources/0': additional properties 'mirror'"},
		{"recipe.schema.json", "missing name", "\nname: hello\n", "\n", "at '': missing property 'name'"},
		{"recipe.schema.json", "name not a package name", "\nname: hello\n", "\nname: Hello\n", "at '/name'"},
		{"recipe.schema.json", "unknown architecture", "{amd64: amd64, arm64: arm64}", "{amd46: amd64, arm64: arm64}", "at '/architectures'"},
		{"recipe.schema.json", "short digest", "amd64: 019250d9e08f5242159d5dcea64c8c7cf77924cd8c69460ae7af5d4ad51d032e", "amd64: 019250d9e08f", "at '/sources/0/sha256"},
		{"recipe.schema.json", "packages a string", "\npackages:\n  - name: hello\n", "\npackages: hello\nx:\n  - name: hello\n", "at '/packages'"},
		{"recipe.schema.json", "bad priority", "\n    section:", "\n    priority: extra\n    section:", "at '/packages/0/priority'"},
		{"recipe.schema.json", "empty digest mapping", "\n    signature:", "\n    sha512: {}\n    signature:", "at '/sources/0/sha512'"},
		{"config.schema.json", "unknown key", "\nbuild:", "\ncolour: red\nbuild:", "at '': additional properties 'colour'"},
		{"config.schema.json", "a URL's scheme in capitals", "\nbuild:", "\ngithub-api: HTTPS://api.github.com\nbuild:", "at '/github-api'"},
		{"config.schema.json", "bad compression", "\nbuild:\n", "\nbuild:\n  compression: rar\n", "at '/build/compression'"},
		{"config.schema.json", "xz-workers out of range", "\nbuild:\n", "\nbuild:\n  xz-workers: 100000\n", "at '/build/xz-workers'"},
		{"config.schema.json", "a duration that is none", "\nbuild:\n", "\nfetch: {retry-time: soon}\nbuild:\n", "at '/fetch/retry-time'"},
		{"release-sets.schema.json", "unknown key", "\nsets:", "\ncolour: red\nsets:", "at '': additional properties 'colour'"},
		{"release-sets.schema.json", "set named null", "name: kubernetes135", "name: null", "at '/sets/0/name'"},
		{"release-sets.schema.json", "set without kubernetes", "kubernetes: recipe:kubernetes-1.35", "kubectl: recipe:kubernetes-1.35", "missing property 'kubernetes'"},
	} {
		t.Run(tt.schema+" "+tt.name, func(t *testing.T) {
			data, loadErr, schemaErr := schemaVerdicts(t, tt.schema, tt.old, tt.new)
			if loadErr == nil {
				t.Fatalf("the loader accepts it:\n%s", data)
			}
			var ve *jsonschema.ValidationError
			if !errors.As(schemaErr, &ve) {
				t.Errorf("%s accepts it (%v):\n%s", tt.schema, schemaErr, data)
			} else if !strings.Contains(schemaErr.Error(), tt.at) {
				t.Errorf("%s refuses it, but not %s:\n%v", tt.schema, tt.at, schemaErr)
			}
		})
	}
}

// TestSchemasAccept: documents the loader accepts are accepted by the schema
// too ("the schema never refuses what the loader accepts", schemas/README.md),
// at the edges of what a schema says: a null where an enum is, a quoted
// value with spaces around it, a sign, a number where a name is.
func TestSchemasAccept(t *testing.T) {
	for _, tt := range []struct {
		schema, name, old, new string
	}{
		{"config.schema.json", "compression null", "\nbuild:\n", "\nbuild:\n  compression: null\n"},
		{"config.schema.json", "xz-mode null", "\nbuild:\n", "\nbuild:\n  xz-mode:\n"},
		{"config.schema.json", "a size with spaces around it", "\nbuild:\n", "\nbuild:\n  memory: \" 2GiB \"\n"},
		{"config.schema.json", "a size a tab before it", "\nbuild:\n", "\nbuild:\n  memory: \"\\t2GiB\"\n"},
		{"config.schema.json", "a duration with a sign", "\nbuild:\n", "\nfetch: {retry-time: \"+5m\", min-rate: {over: +30s}}\nrepo: {valid-for: +168h}\nbuild:\n"},
		{"config.schema.json", "a product written as a number", "\nbuild:\n", "\ndata: {products: [7, 1.5]}\nbuild:\n"},
	} {
		t.Run(tt.schema+" "+tt.name, func(t *testing.T) {
			data, loadErr, schemaErr := schemaVerdicts(t, tt.schema, tt.old, tt.new)
			if loadErr != nil {
				t.Fatalf("the loader refuses it: %v\n%s", loadErr, data)
			}
			if schemaErr != nil {
				t.Errorf("%s refuses what the loader accepts: %v\n%s", tt.schema, schemaErr, data)
			}
		})
	}
}

// testCopyDemo copies the demo's recipes folder (keyrings, files) to dir.
func testCopyDemo(t *testing.T, dir string) {
	t.Helper()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(repoRoot, "testdata", "demo", "recipes"))); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(filepath.Dir(dir), "keys"), os.DirFS(filepath.Join(repoRoot, "testdata", "demo", "keys"))); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
}

// schemaComment is the line that makes yaml-language-server (VS Code's YAML
// extension, and editors using it) complete and check a file with a schema.
var schemaComment = regexp.MustCompile(`^# yaml-language-server: \$schema=(\S+)\n`)

// TestSchemaComments: the real recipes and the release sets name their
// schema in their first line, by a path that leads to it, and the loaders
// read them as before (the line is a comment).
func TestSchemaComments(t *testing.T) {
	files := map[string]string{"release-sets.yaml": "release-sets.schema.json", "testdata/compat/release-sets.yaml": "release-sets.schema.json",
		"testdata/demo/updeb.yaml": "config.schema.json"}
	recipes, _ := filepath.Glob(filepath.Join(repoRoot, "recipes", "*.yaml"))
	for _, r := range recipes {
		files[filepath.ToSlash(strings.TrimPrefix(r, repoRoot+"/"))] = "recipe.schema.json"
	}
	for file, schema := range files {
		m := schemaComment.FindStringSubmatch(readDoc(t, file))
		if m == nil {
			t.Errorf("%s: the first line is not # yaml-language-server: $schema=PATH", file)
			continue
		}
		target := filepath.Clean(filepath.Join(repoRoot, filepath.Dir(file), m[1]))
		if want := filepath.Clean(filepath.Join(schemaDir, schema)); target != want {
			t.Errorf("%s: $schema=%s leads to %s, not %s", file, m[1], target, want)
		}
	}
	if len(recipes) < 10 {
		t.Errorf("only %d recipes", len(recipes))
	}
}

// TestConfigKeysDocumented: every key the config loader knows (its schema's
// properties, at every depth) is in docs/configuration.md's example.
func TestConfigKeysDocumented(t *testing.T) {
	var example map[string]any
	blocks := yamlBlocks(t, "docs/configuration.md")
	if len(blocks) == 0 || yaml.Unmarshal(blocks[0].data, &example) != nil {
		t.Fatal("docs/configuration.md has no YAML example")
	}
	var walk func(prefix string, s *yamlfile.Schema, doc any)
	walk = func(prefix string, s *yamlfile.Schema, doc any) {
		forms := append([]*yamlfile.Schema{s}, s.AnyOf...)
		for _, f := range forms {
			if f.Items != nil {
				if list, ok := doc.([]any); ok && len(list) > 0 {
					walk(prefix+"[0]", f.Items, list[0])
				}
			}
			for _, key := range slices.Sorted(func(yield func(string) bool) {
				for k := range f.Properties {
					if !yield(k) {
						return
					}
				}
			}) {
				m, _ := doc.(map[string]any)
				v, ok := m[key]
				if !ok {
					t.Errorf("docs/configuration.md: the example lacks %s%s", prefix, key)
					continue
				}
				walk(prefix+key+".", f.Properties[key], v)
			}
		}
	}
	walk("", config.JSONSchema(), example)
}
