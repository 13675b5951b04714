package recipe

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"text/template"
	"time"
)

var testData = map[string]string{
	"Name": "helm", "Version": "3.15.4", "Major": "3", "Minor": "15", "Patch": "4", "Arch": "amd64", "DebArch": "amd64",
}

func TestExpand(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                              "plain",
		"helm-v{{.Version}}-linux-{{.Arch}}": "helm-v3.15.4-linux-amd64",
		"{{ .Major }}.{{  .Minor}}":          "3.15",
		"}} {{.Name}}}}":                     "}} helm}}",
		"{{.Name}}{{.Name}}":                 "helmhelm",
		// The escape of a literal "{{", as text/template writes it.
		`{{"{{"}}`:                             "{{",
		`{{ "{{" }}.Version}} is {{.Version}}`: "{{.Version}} is 3.15.4",
		"a{{`{{`}}b}}":                         "a{{b}}",
		`{{"{{"}}{{"{{"}}`:                     "{{{{",
	} {
		got, err := expand(in, testData, 1<<20)
		if err != nil || got != want {
			t.Errorf("expand(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// RenderPerArch fills in what a template stands for on each architecture
// and leaves the version's values as written, so that only a version bump
// renders the same.
func TestRenderPerArch(t *testing.T) {
	r := &Recipe{Name: "helm", Version: "3.15.4", Architectures: []Arch{{Debian: "amd64", Upstream: "x86_64"}, {Debian: "arm64", Upstream: "aarch64"}}}
	got := r.RenderPerArch("https://ci/{{.Name}}/{{ .Arch }}/{{.DebArch}}@v{{.Version}} {{.Major}}.{{.Minor}}.{{.Patch}}")
	want := map[string]string{
		"amd64": "https://ci/helm/x86_64/amd64@v{{.Version}} {{.Major}}.{{.Minor}}.{{.Patch}}",
		"arm64": "https://ci/helm/aarch64/arm64@v{{.Version}} {{.Major}}.{{.Minor}}.{{.Patch}}",
	}
	if len(got) != len(want) || got["amd64"] != want["amd64"] || got["arm64"] != want["arm64"] {
		t.Errorf("RenderPerArch = %q, want %q", got, want)
	}
	bumped := *r
	bumped.Version = "3.16.0"
	if b := bumped.RenderPerArch("{{.Name}}@v{{.Version}}"); b["amd64"] != r.RenderPerArch("{{.Name}}@v{{.Version}}")["amd64"] {
		t.Errorf("a version bump renders otherwise: %q", b)
	}
	// A literal "{{" stays an escape: {{"{{"}}.Version}} is the text
	// {{.Version}} on every version, not the template of the version.
	if b := r.RenderPerArch("v{{ `{{` }}.Version}}/{{.Arch}}"); b["amd64"] != `v{{"{{"}}.Version}}/x86_64` {
		t.Errorf("an escaped {{ renders per architecture as %q", b)
	}
	if b := r.RenderPerArch("{{.Nope}}"); b["amd64"] != "{{.Nope}}" {
		t.Errorf("a template that does not render: %q, want it as written", b)
	}
}

// The attacks on text/template that ran out of memory or time, and the other
// actions recipes do not need: each is refused at once, with the field's
// position, in lint and build alike.
func TestHostileTemplatesRefused(t *testing.T) {
	hostile := []string{
		`{{range 100000000000}}x{{end}}`,
		`{{range $i, $e := 1000000000}}{{$i}}{{end}}`,
		`{{printf "%999999999d" 1}}`,
		`{{printf "%*d" 999999999 1}}`,
		`{{define "a"}}{{template "a"}}{{end}}{{template "a"}}`,
		`{{template "x"}}`,
		`{{block "b" .}}{{template "b" .}}{{end}}`,
		`{{if .Version}}x{{end}}`,
		`{{with .Version}}{{.}}{{end}}`,
		`{{.Version | printf "%s"}}`,
		`{{len .Version}}`,
		`{{index . "Version"}}`,
		`{{$x := .Version}}{{$x}}`,
		`{{/* comment */}}`,
		`{{- .Version -}}`,
		`{{.}}`,
		`{{.Version.X}}`,
		`{{call .Version}}`,
		`{{.Version}`,
		`{{`,
		`{{"literal"}}`,
		`{{1}}`,
		`{{"{{"`,
		`{{"{{}}`,
		`{{"{{" .Version}}`,
		`{{'{{'}}`,
		`{{"{{"}`,
	}
	for _, h := range hostile {
		done := make(chan error, 1)
		go func() {
			_, err := expand(h, testData, maxFieldRender)
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("expand(%q) accepted", h)
			}
		case <-time.After(2 * time.Second):
			t.Fatalf("expand(%q) did not return", h)
		}
	}
}

// Output is bounded per field and per plan, whatever the recipe: a 1 MiB
// recipe of {{.Version}} with a long version stops at the bound.
func TestRenderBounded(t *testing.T) {
	data := map[string]string{"Version": strings.Repeat("9", 100000)}
	if _, err := expand(strings.Repeat("{{.Version}}", 20), data, maxFieldRender); err == nil {
		t.Fatal("2 MB from one field accepted")
	}
	fs := &findings{file: "r.yaml"}
	rd := &renderer{fs: fs, data: data}
	for range 200 {
		rd.render(nil, "directories", strings.Repeat("{{.Version}}", 5)) // 500 kB each
	}
	if rd.used > maxPlanRender {
		t.Fatalf("rendered %d bytes, more than the plan bound %d", rd.used, maxPlanRender)
	}
	if err := fs.err(); err == nil || !strings.Contains(err.Error(), "in all") {
		t.Fatalf("plan bound not reported: %v", err)
	}
}

// A hostile template in a recipe is a lint finding with the field's position
// (and build loads recipes the same way), found quickly and in bounded memory.
func TestHostileTemplateInRecipe(t *testing.T) {
	for _, h := range []string{
		`{{range 100000000000}}x{{end}}`,
		`{{printf \"%999999999d\" 1}}`,
		`{{define \"a\"}}{{template \"a\"}}{{end}}{{template \"a\"}}`,
	} {
		text := strings.Replace(baseRecipe, "summary: X tool", "summary: \""+h+"\"", 1)
		start := time.Now()
		got := loadFindings(t, text)
		if len(got) != 1 || !strings.HasPrefix(got[0], "recipes/x.yaml:14:14: summary: template ") || !strings.Contains(got[0], "only a value") {
			t.Errorf("%s: findings %q", h, got)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: lint took %s", h, d)
		}
	}
}

// A field that needs a literal "{{" writes {{"{{"}} (a URL's query, a
// description that quotes a template) and renders it so in build and lint
// alike; an escape left open or mistyped is a finding at the field's line
// and column, as any other broken template.
func TestLiteralBraces(t *testing.T) {
	text := strings.NewReplacer(
		"url: https://example.org/x-{{.Arch}}.tar.gz\n", "url: https://example.org/x-{{.Arch}}.tar.gz?q={{\"{{\"}}v}}\n",
		"description: The X tool.", "description: 'Expands {{\"{{\"}}.Version}} in {{.Name}}.conf, and {{ `{{` }}.Arch}}.'",
	).Replace(baseRecipe)
	p := resolveText(t, text, "amd64", ResolveOptions{})
	if got, want := p.Sources[0].URL, "https://example.org/x-amd64.tar.gz?q={{v}}"; got != want {
		t.Errorf("url renders to %q, want %q", got, want)
	}
	if got, want := p.Packages[0].Description, "Expands {{.Version}} in xx.conf, and {{.Arch}}."; got != want {
		t.Errorf("description renders to %q, want %q", got, want)
	}
	for escape, want := range map[string]string{
		`{{"{{"`:  `recipes/x.yaml:14:14: summary: template "X {{\"{{\"": "{{" at byte 2 has no closing "}}"`,
		`{{"{{}}`: `recipes/x.yaml:14:14: summary: template "X {{\"{{}}": {{"{{}} at byte 2: only a value such as {{.Version}} may appear`,
		`{{"{"}}`: `recipes/x.yaml:14:14: summary: template "X {{\"{\"}}": {{"{"}} at byte 2: only a value`,
	} {
		quoted := strings.ReplaceAll(escape, `"`, `\"`)
		got := loadFindings(t, strings.Replace(baseRecipe, "summary: X tool", `summary: "X `+quoted+`"`, 1))
		if len(got) != 1 || !strings.HasPrefix(got[0], want) {
			t.Errorf("%s: findings %q, want one starting %q", escape, got, want)
		}
	}
}

// FuzzTemplate: expand never panics, respects its limit, and whatever it
// accepts text/template renders identically (the referee it replaced).
func FuzzTemplate(f *testing.F) {
	for _, s := range []string{
		"helm-v{{.Version}}-linux-{{.Arch}}", "{{ .Major }}{{.Minor}}", "{{range 10}}x{{end}}", `{{printf "%9d" 1}}`,
		"{{.Os}}", "}}{{", "{{.Name}", "{{ .Name\t}}", "{{.Nam\x00e}}", "{{.Name}}}}}",
		`{{"{{"}}.Version}}`, "{{ `{{` }}", `{{"{{"}`, `{{"{{}}"}}`,
	} {
		f.Add(s, "1.2.3")
	}
	f.Fuzz(func(t *testing.T, text, version string) {
		data := map[string]string{"Name": "x", "Version": version, "Arch": "amd64"}
		const limit = 4096
		got, err := expand(text, data, limit)
		if err != nil {
			return
		}
		if len(got) > limit {
			t.Fatalf("expand(%q) = %d bytes, over the limit", text, len(got))
		}
		tpl, err := template.New("f").Option("missingkey=error").Parse(text)
		if err != nil {
			t.Fatalf("expand accepted %q, which text/template refuses: %v", text, err)
		}
		var b strings.Builder
		if err := tpl.Execute(&b, data); err != nil {
			t.Fatalf("expand accepted %q, which text/template cannot execute: %v", text, err)
		}
		if b.String() != got {
			t.Fatalf("expand(%q) = %q, text/template renders %q", text, got, b.String())
		}
	})
}

// A recipe file that is a symlink out of the recipe's folder, or not a
// regular file, is refused by lint (Load), and OpenLocal refuses it too.
func TestLocalFileConfined(t *testing.T) {
	for name, setup := range map[string]func(dir string) error{
		"symlink to /etc/passwd": func(dir string) error { return os.Symlink("/etc/passwd", filepath.Join(dir, "recipes/x/evil")) },
		"symlink to a sibling":   func(dir string) error { return os.Symlink("../x.yaml", filepath.Join(dir, "recipes/x/evil")) },
		"fifo":                   func(dir string) error { return mkfifo(filepath.Join(dir, "recipes/x/evil")) },
		"folder":                 func(dir string) error { return os.Mkdir(filepath.Join(dir, "recipes/x/evil"), 0o755) },
		"symlinked folder": func(dir string) error {
			os.Remove(filepath.Join(dir, "recipes/x/sub/x.default"))
			os.Remove(filepath.Join(dir, "recipes/x/sub"))
			return os.Symlink("/etc", filepath.Join(dir, "recipes/x/sub"))
		},
	} {
		t.Run(name, func(t *testing.T) {
			file := "evil"
			if name == "symlinked folder" {
				file = "sub/passwd"
			}
			text := strings.Replace(baseRecipe, "{file: x.service,", "{file: "+file+",", 1)
			text = strings.Replace(text, "    systemd-units: [x.service]\n", "", 1)
			dir, path := writeProject(t, text)
			if err := setup(dir); err != nil {
				t.Fatal(err)
			}
			_, err := Load(path, LoadOptions{})
			if err == nil || !strings.Contains(err.Error(), "x.yaml:19:16: file: ") || !strings.Contains(err.Error(), "refused") {
				t.Fatalf("Load = %v, want a refusal at the file field", err)
			}
		})
	}
	// A files-dir that is itself a symlink out of recipes/ is refused too.
	text := strings.Replace(baseRecipe, "name: xx\n", "name: xx\nfiles-dir: out\n", 1)
	dir, path := writeProject(t, text)
	os.Symlink(filepath.Join(dir, "recipes/x"), filepath.Join(dir, "elsewhere"))
	if err := os.Symlink("../elsewhere", filepath.Join(dir, "recipes/out")); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path, LoadOptions{}); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("files-dir symlinked out of recipes/: Load = %v", err)
	}
}

// A project whose root is the root folder (mounted at / in a container:
// /recipes, /keys) reads its keyrings and recipe files like any other.
func TestProjectAtRootFolder(t *testing.T) {
	dir, path := writeProject(t, baseRecipe)
	keyring := strings.TrimPrefix(filepath.ToSlash(filepath.Join(dir, "keys", "k.asc")), "/")
	text := strings.Replace(baseRecipe, "keyring: keys/k.asc}", "keyring: "+keyring+"}", 1)
	if text == baseRecipe {
		t.Fatal("the base recipe names no keys/k.asc")
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Load(path, LoadOptions{Root: "/"})
	if err != nil {
		t.Fatalf("Load with the project at /: %v", err)
	}
	f, _, err := r.OpenLocal(filepath.Join(dir, "keys", "k.asc"))
	if err != nil {
		t.Fatalf("OpenLocal of the keyring: %v", err)
	}
	f.Close()
}

func mkfifo(p string) error { return syscall.Mkfifo(p, 0o644) }
