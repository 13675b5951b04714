package main

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/updeb/updeb/internal/compat"
	"github.com/updeb/updeb/internal/compatdata"
	"github.com/updeb/updeb/internal/dirglob"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/repo"
	"github.com/updeb/updeb/pkg/deb"
)

// Shell completion ('updeb completion bash|zsh|fish') beyond commands and
// flags, set up in one place for the whole command tree (so that a new
// command with a known flag gets its completion too):
//
//   - RECIPE arguments (a command whose Use names RECIPE): the recipe names
//     in the --recipes folder;
//   - flags with a closed set of values: --compression, --log-format,
//     --format (compat), --type (keys generate), --arch (the recipes'
//     architectures, or the repository's for a command with --repo), --suite
//     and --component (the repository's, from --repo or the config), repo
//     promote's --from and --to (SUITE and SUITE/COMPONENT), data refresh's
//     --table (the data tables);
//   - SUITE and NAME arguments of the repo commands, .deb files for publish
//     and inspect, YAML files for --config, --set and --write, folders for --recipes,
//     --cache, --state and --out.
//
// Completion never fails: a folder or repository it cannot read completes
// nothing.

// Closed sets of flag values.
var (
	keyTypes = []string{string(repo.Ed25519), string(repo.RSA3072), string(repo.RSA4096)}
)

// compressions are pkg/deb's.
func compressions() []string {
	var out []string
	for _, c := range deb.Compressions() {
		out = append(out, string(c))
	}
	return out
}

func formats() []string {
	var out []string
	for _, f := range compat.Formats() {
		out = append(out, string(f))
	}
	return out
}

// addCompletions registers the completions above on every command of root.
func addCompletions(g *globalOptions, root *cobra.Command) {
	fixed := func(values ...string) cobra.CompletionFunc {
		return cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp)
	}
	pf := root.PersistentFlags()
	root.RegisterFlagCompletionFunc("log-format", fixed(logFormats...))
	root.MarkPersistentFlagFilename("config", "yaml", "yml")
	for _, d := range []string{"recipes", "cache", "state", "out"} {
		if pf.Lookup(d) != nil {
			root.MarkPersistentFlagDirname(d)
		}
	}
	walk(root, func(c *cobra.Command) {
		path := strings.TrimPrefix(c.CommandPath(), root.Name()+" ")
		local := func(name string) bool { return c.LocalNonPersistentFlags().Lookup(name) != nil }
		hasRepo := c.Flags().Lookup("repo") != nil
		switch fields := strings.Fields(c.Use); {
		case c.ValidArgsFunction != nil:
		case len(fields) > 1 && fields[1] == "DIR": // a folder, then perhaps recipes
			recipes := strings.Contains(c.Use, "RECIPE")
			c.ValidArgsFunction = func(c *cobra.Command, args []string, word string) ([]string, cobra.ShellCompDirective) {
				if len(args) == 0 || !recipes {
					return nil, cobra.ShellCompDirectiveFilterDirs
				}
				return g.completeRecipes(c, args[1:], word)
			}
		case strings.Contains(c.Use, "RECIPE"):
			c.ValidArgsFunction = g.completeRecipes
		}
		if local("compression") {
			c.RegisterFlagCompletionFunc("compression", fixed(compressions()...))
		}
		if local("format") && path == "compat" {
			c.RegisterFlagCompletionFunc("format", fixed(formats()...))
		}
		if local("type") && path == "keys generate" {
			c.RegisterFlagCompletionFunc("type", fixed(keyTypes...))
		}
		if local("set") {
			c.MarkFlagFilename("set", "yaml", "yml")
		}
		if local("only") && path == "plan" {
			c.RegisterFlagCompletionFunc("only", func(c *cobra.Command, _ []string, word string) ([]string, cobra.ShellCompDirective) {
				return g.completeRecipes(c, nil, word)
			})
		}
		if local("table") && path == "data refresh" {
			c.RegisterFlagCompletionFunc("table", fixed(append(compatdata.Names(), compatdata.EndOfLife)...))
			c.MarkFlagFilename("write", "yaml", "yml")
		}
		if local("arch") {
			if hasRepo {
				c.RegisterFlagCompletionFunc("arch", g.completeRepo(func(e repo.Entry) string { return e.Architecture }))
			} else {
				c.RegisterFlagCompletionFunc("arch", g.completeArches)
			}
		}
		if hasRepo {
			suite := g.completeRepo(func(e repo.Entry) string { return e.Suite })
			if local("suite") {
				c.RegisterFlagCompletionFunc("suite", suite)
			}
			if local("component") {
				c.RegisterFlagCompletionFunc("component", g.completeRepo(func(e repo.Entry) string { return e.Component }))
			}
			for _, f := range []string{"staging", "production"} {
				if local(f) && path == "report" {
					c.RegisterFlagCompletionFunc(f, suite)
				}
			}
			for _, f := range []string{"from", "to"} {
				if local(f) && path == "repo promote" {
					c.RegisterFlagCompletionFunc(f, g.completeRepo(func(e repo.Entry) string { return e.Suite }, func(e repo.Entry) string { return e.Suite + "/" + e.Component }))
				}
			}
			switch {
			case c.ValidArgsFunction != nil:
			case strings.Contains(c.Use, "SUITE"):
				c.ValidArgsFunction = suite
			case strings.Contains(c.Use, "NAME"):
				c.ValidArgsFunction = g.completeRepo(func(e repo.Entry) string { return e.Package }, func(e repo.Entry) string { return e.Package + "=" + e.Version })
			}
		}
		if c.ValidArgsFunction == nil && (strings.Contains(c.Use, ".deb") || strings.Contains(c.Use, "DEB...")) {
			c.ValidArgsFunction = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
				return []string{"deb"}, cobra.ShellCompDirectiveFilterFileExt
			}
		}
	})
}

// recipeNames are the names of the recipes in dir (helm for dir/helm.yaml).
func recipeNames(dir string) []string {
	if dir == "" {
		dir = "recipes"
	}
	paths, _ := dirglob.Glob(dir, "*.yaml")
	var names []string
	for _, p := range paths {
		names = append(names, strings.TrimSuffix(filepath.Base(p), ".yaml"))
	}
	sort.Strings(names)
	return names
}

// completeRecipes completes RECIPE arguments: the names not given yet, or
// files when the word is a path.
func (g *globalOptions) completeRecipes(_ *cobra.Command, args []string, word string) ([]string, cobra.ShellCompDirective) {
	if strings.ContainsRune(word, os.PathSeparator) {
		return nil, cobra.ShellCompDirectiveDefault
	}
	var out []string
	for _, n := range recipeNames(g.recipesDir) {
		if strings.HasPrefix(n, word) && !slices.Contains(args, n) {
			out = append(out, n)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeArches completes --arch with the architectures of the recipes
// named on the line (of every recipe when none is).
func (g *globalOptions) completeArches(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	names := args
	if len(names) == 0 {
		names = recipeNames(g.recipesDir)
	}
	seen := map[string]bool{}
	for _, n := range names {
		paths, err := resolveRecipes(cmd.Context(), g, []string{n})
		if err != nil {
			continue
		}
		if r, err := recipe.Load(paths[0], recipe.LoadOptions{}); err == nil {
			for _, a := range r.ArchNames() {
				seen[a] = true
			}
		}
	}
	return sortedSet(seen), cobra.ShellCompDirectiveNoFileComp
}

// completeRepo completes with what keys give for each published package of
// the repository that --repo or the config names.
func (g *globalOptions) completeRepo(keys ...func(repo.Entry) string) cobra.CompletionFunc {
	return func(c *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
		cfg, err := g.loadConfig()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		dir := cfg.Repo.Dir
		if f := c.Flags().Lookup("repo"); f != nil && f.Value.String() != "" {
			dir = f.Value.String()
		}
		entries, err := repo.Open(first(dir, "repo"), repo.Options{}).List("")
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		seen := map[string]bool{}
		for _, e := range entries {
			for _, k := range keys {
				seen[k(e)] = true
			}
		}
		return sortedSet(seen), cobra.ShellCompDirectiveNoFileComp
	}
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		if k != "" {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
