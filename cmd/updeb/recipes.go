package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/updeb/updeb/internal/dirglob"
	"github.com/updeb/updeb/internal/recipe"
)

// resolveRecipes turns RECIPE arguments into recipe file paths: a bare name
// ("helm") is recipes/helm.yaml in the --recipes folder, anything with a path
// separator or a .yaml/.yml suffix is a path. No arguments means every recipe
// in the folder, sorted. A missing recipe is a usage error (exit 2). A
// signal (ctx done) ends it between arguments: a shell's glob can give
// tens of thousands.
func resolveRecipes(ctx context.Context, g *globalOptions, args []string) ([]string, error) {
	dir := g.recipesDir
	if dir == "" {
		dir = "recipes"
	}
	if len(args) == 0 {
		paths, err := dirglob.Glob(dir, "*.yaml")
		if err != nil {
			return nil, usageErrorf("listing recipes in %s: %v", dir, err)
		}
		sort.Strings(paths)
		if len(paths) == 0 {
			// Glob says nothing of a folder it cannot list: missing,
			// unreadable or not a folder is said as such.
			if _, err := os.ReadDir(dir); err != nil {
				return nil, invalidInput(fmt.Errorf("recipes folder: %w", err), "point --recipes at the recipes folder (one this user can read), or run updeb where recipes/ is")
			}
			return nil, invalidInput(fmt.Errorf("no recipes (*.yaml) in %s", dir), "name a recipe, or point --recipes at the recipes folder")
		}
		return paths, nil
	}
	var (
		out []string
		// A recipe named twice (helm helm, ./recipes/helm.yaml) is one
		// recipe: its file is known by device and inode, not compared with
		// every file before it (60,000 arguments took 8 s).
		seen = map[[2]uint64]bool{}
	)
	for _, a := range args {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		p := a
		if !strings.ContainsRune(a, os.PathSeparator) && !strings.HasSuffix(a, ".yaml") && !strings.HasSuffix(a, ".yml") {
			p = filepath.Join(dir, a+".yaml")
		}
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() {
			hint := "recipes are named after their file in " + dir + " (helm -> " + filepath.Join(dir, "helm.yaml") + "), or given as a path"
			// "hello.yaml" from inside the recipes folder's parent, a file
			// name a shell completed: the recipe is hello.
			word := strings.TrimSuffix(strings.TrimSuffix(a, ".yaml"), ".yml")
			if s := closest(word, recipeNames(dir)); len(s) > 0 {
				hint = "did you mean " + strings.Join(s, " or ") + "? (" + hint + ")"
			}
			return nil, invalidInput(fmt.Errorf("recipe %q: %s is not a recipe file", a, p), hint)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if id := [2]uint64{st.Dev, st.Ino}; !seen[id] {
			seen[id] = true
			out = append(out, p)
		}
	}
	return out, nil
}

// closest returns the names nearest to word: within two edits, or starting
// with it (cobra's rule for commands, so that both read alike), nearest first.
func closest(word string, names []string) []string {
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	for _, n := range names {
		d := editDistance(strings.ToLower(word), strings.ToLower(n))
		if d <= 2 || (len(word) >= 3 && strings.HasPrefix(n, word)) {
			cs = append(cs, cand{n, d})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].d < cs[j].d })
	var out []string
	for _, c := range cs {
		out = append(out, c.name)
	}
	return out
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// loadRecipes resolves and loads RECIPE arguments; any invalid recipe stops
// everything (exit 2) with every finding listed. A signal (ctx done) ends
// the loading between recipes: a folder of thousands takes seconds.
func loadRecipes(ctx context.Context, g *globalOptions, args []string) ([]*recipe.Recipe, error) {
	return loadRecipesWith(ctx, g, args, recipe.LoadOptions{})
}

// loadRecipesWith is loadRecipes loading with lo.
func loadRecipesWith(ctx context.Context, g *globalOptions, args []string, lo recipe.LoadOptions) ([]*recipe.Recipe, error) {
	paths, err := resolveRecipes(ctx, g, args)
	if err != nil {
		return nil, err
	}
	var (
		out  []*recipe.Recipe
		errs []error
	)
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		r, err := recipe.Load(p, lo)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, r)
	}
	if clashes, _ := recipe.CheckTogether(out); len(errs) == 0 && len(clashes) > 0 { // its warnings are lint's
		errs = append(errs, &recipe.Error{Findings: clashes})
	}
	if len(errs) > 0 {
		err := errors.Join(errs...)
		return nil, invalidInput(err, orPathHint(err, "run 'updeb lint' for the full report"))
	}
	return out, nil
}
