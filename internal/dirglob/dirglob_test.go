package dirglob

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestGlob: a folder whose name holds the characters of a pattern is read
// as the folder it names, not as a pattern (filepath.Glob found nothing in
// "r[1]", and the files of "r1" for "r[1]" or "r*").
func TestGlob(t *testing.T) {
	root := t.TempDir()
	for _, dir := range []string{"r[1]", "r1", "r*", `r\x`, "r?", "plain"} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"a.yaml", "b.yaml", "c.txt"} {
			if err := os.WriteFile(filepath.Join(root, dir, name), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := Glob(filepath.Join(root, dir), "*.yaml")
		want := []string{filepath.Join(root, dir, "a.yaml"), filepath.Join(root, dir, "b.yaml")}
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("Glob(%q, *.yaml) = %q, %v; want %q", dir, got, err, want)
		}
	}
	if got, err := Glob(filepath.Join(root, "missing[1]"), "*.yaml"); err != nil || got != nil {
		t.Errorf("a missing folder: %q, %v", got, err)
	}
	if _, err := Glob(root, "["); err != filepath.ErrBadPattern {
		t.Errorf("a malformed pattern: %v, want %v", err, filepath.ErrBadPattern)
	}
}
