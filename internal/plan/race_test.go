package plan

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/recipe"
)

// A retire whose recipe already carries its mark (another plan --apply
// planned with this one and marked it first) writes nothing, and is no
// change: both runs reported "retire kubernetes-1.34" as written, and the
// tracking job's commit message claimed a mark it did not make.
func TestApplyRetireMarkedAlready(t *testing.T) {
	root, text := runcRecipe(t)
	path := filepath.Join(t.TempDir(), "runc.yaml")
	marked := strings.Replace(string(text), "release-date: 2026-06-13\n", "release-date: 2026-06-13\nend-of-life: 2026-10-27\n", 1)
	if err := os.WriteFile(path, []byte(marked), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := recipe.Load(path, recipe.LoadOptions{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	p := &Plan{Actions: []Action{{Kind: ActRetire, Component: "runc", Recipe: "runc", EndOfLife: "2026-10-27"}}}
	res, err := Apply(context.Background(), p, []*recipe.Recipe{r}, ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changes) != 0 || len(res.Failures) != 0 || len(res.Skipped) != 1 || !strings.Contains(res.Skipped[0].Why, "done already: the recipe is marked end-of-life 2026-10-27") {
		t.Errorf("changes %+v, skipped %+v, failures %+v: want the retire skipped, marked already", res.Changes, res.Skipped, res.Failures)
	}
	if s := res.Summary(&Plan{Now: "2026-12-01"}); strings.Contains(s, "end-of-life") {
		t.Errorf("summary %q claims the mark", s)
	}
	if got, _ := os.ReadFile(path); string(got) != marked {
		t.Errorf("the recipe changed:\n%s", got)
	}
}

// A bump whose recipe another plan --apply bumped since this one loaded it
// writes nothing and is no change: it was written again, and both runs
// reported "bump runc 1.4.3 -> 1.4.4".
func TestApplyBumpDoneMeanwhile(t *testing.T) {
	root, text := runcRecipe(t)
	path := filepath.Join(t.TempDir(), "runc.yaml")
	if err := os.WriteFile(path, text, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := recipe.Load(path, recipe.LoadOptions{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	bumped := strings.Replace(string(text), "version: 1.4.3\n", "version: 1.4.4\n", 1)
	if err := os.WriteFile(path, []byte(bumped), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &Plan{Actions: []Action{{Kind: ActBump, Component: "runc", Recipe: "runc", From: "1.4.3", Version: "1.4.4"}}}
	res, err := Apply(context.Background(), p, []*recipe.Recipe{r}, ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changes) != 0 || len(res.Failures) != 0 || len(res.Skipped) != 1 || res.Skipped[0].Why != "done already: the recipe is at 1.4.4 (by another run?)" {
		t.Errorf("changes %+v, skipped %+v, failures %+v: want the bump skipped, done already", res.Changes, res.Skipped, res.Failures)
	}
	if got, _ := os.ReadFile(path); string(got) != bumped {
		t.Errorf("the recipe changed:\n%s", got)
	}
}

// runcRecipe returns the repository's root and its recipe of runc.
func runcRecipe(t *testing.T) (string, []byte) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(filepath.Join(root, "recipes", "runc.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return root, text
}
