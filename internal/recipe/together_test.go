package recipe

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckTogether: two recipe files of one name, and two recipes that make
// one package file, passed lint one by one; built together, the later
// replaced the earlier's .deb in the output folder without a word.
func TestCheckTogether(t *testing.T) {
	dir, file := writeProject(t, baseRecipe)
	load := func(name, text string) *Recipe {
		t.Helper()
		p := filepath.Join(dir, "recipes", name+".yaml")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("x", filepath.Join(dir, "recipes", name)); err != nil {
			t.Fatal(err)
		}
		r, err := Load(p, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	x, err := Load(file, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sameName := load("y", strings.Replace(baseRecipe, "  - name: xx\n", "  - name: yy\n", 1))
	samePackage := load("z", strings.Replace(baseRecipe, "name: xx\n", "name: zz\n", 1))
	otherVersion := load("w", strings.Replace(strings.Replace(baseRecipe, "name: xx\n", "name: ww\n", 1), "version: 1.0.0", "version: 1.0.1", 1))
	var got []string
	for _, f := range CheckTogether([]*Recipe{x, sameName, samePackage, otherVersion}) {
		got = append(got, strings.TrimPrefix(f.String(), dir+"/"))
	}
	want := []string{
		`recipes/y.yaml:1:7: name: "xx" is also the name of ` + file + `: each recipe needs its own (the changelog's source, what release sets and updeb compat call it)`,
		"recipes/z.yaml:13:11: package name: xx makes xx_1.0.0-1_amd64.deb, which " + file + " makes too (package xx): one would replace the other in the output folder and the repository; give one of them another package name or version",
		"recipes/z.yaml:13:11: package name: xx makes xx_1.0.0-1_arm64.deb, which " + file + " makes too (package xx): one would replace the other in the output folder and the repository; give one of them another package name or version",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
