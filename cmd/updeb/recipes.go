package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// resolveRecipes turns RECIPE arguments into recipe file paths: a bare name
// ("helm") is recipes/helm.yaml in the --recipes folder, anything with a path
// separator or a .yaml/.yml suffix is a path. No arguments means every recipe
// in the folder, sorted. A missing recipe is a usage error (exit 2).
func resolveRecipes(g *globalOptions, args []string) ([]string, error) {
	dir := g.recipesDir
	if dir == "" {
		dir = "recipes"
	}
	if len(args) == 0 {
		paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
		if err != nil {
			return nil, usageErrorf("listing recipes in %s: %v", dir, err)
		}
		sort.Strings(paths)
		if len(paths) == 0 {
			return nil, invalidInput(fmt.Errorf("no recipes (*.yaml) in %s", dir), "name a recipe, or point --recipes at the recipes folder")
		}
		return paths, nil
	}
	var out []string
	for _, a := range args {
		p := a
		if !strings.ContainsRune(a, os.PathSeparator) && !strings.HasSuffix(a, ".yaml") && !strings.HasSuffix(a, ".yml") {
			p = filepath.Join(dir, a+".yaml")
		}
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() {
			return nil, invalidInput(fmt.Errorf("recipe %q: %s is not a recipe file", a, p), "recipes are named after their file in "+dir+" (helm -> "+filepath.Join(dir, "helm.yaml")+"), or given as a path")
		}
		out = append(out, p)
	}
	return out, nil
}
