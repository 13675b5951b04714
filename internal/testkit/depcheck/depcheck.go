// Package depcheck enforces the repository's layers (see docs/ARCHITECTURE.md)
// by reading every Go file's imports:
//
//   - pkg/ is libraries a stranger could import: its code imports nothing of
//     internal/ or cmd/;
//   - internal/ is the application: its code never imports cmd/;
//   - the application's code (cmd/updeb, internal/ outside internal/testkit,
//     pkg/) imports no test infrastructure: nothing of internal/testkit and
//     no package named *test (sigstoretest, httptest, ...); a test helper
//     library of its own (a folder named *test) is exempt.
//
// Test files (_test.go) may import test infrastructure (pkg/'s tests too: the
// referee tools are found by internal/testkit); otherwise the first two rules
// hold for them as well. The test in this package runs Check on the repository;
// `go test ./internal/testkit/depcheck` fails on a forbidden import. It also
// holds the rule for loggers (TestNoDefaultLogger): no application code uses
// slog's default logger; a library's nil *slog.Logger discards.
package depcheck

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Violation is one forbidden import.
type Violation struct {
	File   string // slash-separated, relative to the repository root
	Import string
	Rule   string
}

func (v Violation) String() string {
	return fmt.Sprintf("%s imports %s: %s", v.File, v.Import, v.Rule)
}

// Check reads every .go file under root (a module whose path is module) and
// returns the imports that break a layer rule, sorted by file. testdata
// folders and hidden folders are skipped, as the go tool skips them.
func Check(root, module string) ([]Violation, error) {
	var out []Violation
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, is := range f.Imports {
			imp, err := strconv.Unquote(is.Path.Value)
			if err != nil {
				return fmt.Errorf("%s: %w", rel, err)
			}
			if rule := forbidden(rel, imp, module); rule != "" {
				out = append(out, Violation{File: rel, Import: imp, Rule: rule})
			}
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool {
		if out[i].File != out[j].File {
			return out[i].File < out[j].File
		}
		return out[i].Import < out[j].Import
	})
	return out, err
}

// forbidden returns the rule that file (relative to the root) breaks by
// importing imp, or "".
func forbidden(file, imp, module string) string {
	local, ok := strings.CutPrefix(imp, module+"/")
	isTest := strings.HasSuffix(file, "_test.go")
	switch {
	case under(file, "pkg") && ok && (under(local, "internal") || under(local, "cmd")) && !(isTest && under(local, "internal/testkit")):
		return "pkg/ is for libraries a stranger could import and imports nothing of internal/ or cmd/"
	case under(file, "internal") && ok && under(local, "cmd"):
		return "internal/ never imports cmd/"
	}
	if isTest || !application(file) || strings.HasSuffix(path.Base(path.Dir(file)), "test") {
		return ""
	}
	switch {
	case ok && under(local, "internal/testkit"):
		return "the application imports no test infrastructure (internal/testkit is for tests and make bench)"
	case strings.HasSuffix(path.Base(imp), "test") && path.Base(imp) != "test":
		return "the application imports no test helper package (" + path.Base(imp) + " is for tests)"
	}
	return ""
}

// application reports whether file belongs to what updeb ships: the updeb
// command, the libraries and the application packages (not internal/testkit,
// nor a test helper library such as pkg/verify/sigstore/sigstoretest, whose
// folder names it a test package, which the last rule checks at its users).
func application(file string) bool {
	return (under(file, "cmd/updeb") || under(file, "pkg") || under(file, "internal")) && !under(file, "internal/testkit")
}

// under reports whether p is dir or inside it (slash-separated).
func under(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/")
}
