package depcheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/updeb/updeb"

// The repository keeps its layers.
func TestRepositoryLayers(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the repository root is not at %s: %v", root, err)
	}
	vs, err := Check(root, module)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		t.Error(v)
	}
	// The walk saw the tree: a checker that reads nothing passes everything.
	n := 0
	for _, dir := range []string{"pkg", "internal", "cmd/updeb"} {
		filepath.WalkDir(filepath.Join(root, dir), func(p string, d os.DirEntry, err error) error {
			if err == nil && strings.HasSuffix(p, ".go") {
				n++
			}
			return nil
		})
	}
	if n < 100 {
		t.Fatalf("only %d Go files found under pkg, internal and cmd/updeb", n)
	}
}

// Every rule fails on a planted import, and what is allowed stays allowed.
func TestRulesCatchForbiddenImports(t *testing.T) {
	files := map[string]string{
		// forbidden
		"pkg/deb/bad.go":           `import _ "github.com/updeb/updeb/internal/recipe"`,
		"pkg/deb/bad_test.go":      `import _ "github.com/updeb/updeb/cmd/updeb"`,
		"internal/repo/bad.go":     `import _ "github.com/updeb/updeb/cmd/updeb"`,
		"internal/pipeline/bad.go": `import _ "github.com/updeb/updeb/internal/testkit/testenv"`,
		"cmd/updeb/bad.go":         `import _ "github.com/updeb/updeb/pkg/verify/sigstore/sigstoretest"`,
		"internal/fetch/bad.go":    `import _ "net/http/httptest"`,
		// allowed
		"internal/pipeline/ok_test.go":           `import _ "github.com/updeb/updeb/internal/testkit/testenv"`,
		"pkg/deb/ok_test.go":                     `import _ "github.com/updeb/updeb/internal/testkit/testenv"`,
		"internal/testkit/squid/ok.go":           `import _ "net/http/httptest"`,
		"pkg/verify/sigstore/sigstoretest/ok.go": `import _ "net/http/httptest"`,
		"cmd/updeb-bench/ok.go":                  `import _ "github.com/updeb/updeb/internal/testkit/diskwatch"`,
		"internal/pipeline/ok.go":                `import _ "github.com/updeb/updeb/internal/source"`,
		"cmd/updeb/ok.go":                        `import _ "github.com/updeb/updeb/internal/pipeline"`,
		"testdata/x/ok.go":                       `import _ "github.com/updeb/updeb/internal/testkit/testenv"`,
	}
	root := t.TempDir()
	for name, imp := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		src := "package " + filepath.Base(filepath.Dir(p)) + "\n\n" + imp + "\n"
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(src, "-", "")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	vs, err := Check(root, module)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, v := range vs {
		got[v.File] = true
		if v.Rule == "" {
			t.Errorf("%s: no rule named", v)
		}
	}
	for name := range files {
		want := strings.Contains(name, "/bad")
		if got[name] != want {
			t.Errorf("%s: flagged %v, want %v", name, got[name], want)
		}
	}
}

// One rule for loggers: a library takes a *slog.Logger and a nil one
// discards; nothing of the application uses slog's default logger, which
// would write around the command's one logger (past -q and --log-format json,
// over the progress bars).
func TestNoDefaultLogger(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"cmd/updeb", "internal", "pkg"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, bad := range []string{"slog.Default()", "slog.SetDefault(", "log.Print", "log.Fatal"} {
				if strings.Contains(string(b), bad) {
					t.Errorf("%s uses %s: take a *slog.Logger (nil discards) instead", p, bad)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
