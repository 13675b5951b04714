// Package trackingfixture loads the tracking fixture, testdata/tracking: a
// recipes repository with one recipe of every shape the tracking loop knows
// (versioned series the support data covers and does not, single recipes
// with a track on one minor, on a major and none, a recipe marked
// end-of-life, one without a watch, one nothing upstream vouches for) and
// its release-sets.yaml. Its sources are what internal/testkit/ghfake
// serves (ghfake.Artifact).
package trackingfixture

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/updeb/updeb/internal/recipe"
)

// Dir is the fixture's folder, relative to the working folder when it can
// be (a test's output then names the same files on every machine).
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "..", "testdata", "tracking")
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, dir); err == nil {
			return rel
		}
	}
	return dir
}

// Recipes loads every recipe of the fixture, as lint would.
func Recipes(t testing.TB) []*recipe.Recipe {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(Dir(), "recipes", "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixture recipes in %s: %v", Dir(), err)
	}
	var rs []*recipe.Recipe
	for _, p := range paths {
		r, err := recipe.Load(p, recipe.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	return rs
}

// Sets is the fixture's release set file.
func Sets(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(Dir(), "release-sets.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
