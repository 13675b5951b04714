package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// referenceDir holds the command reference: one Markdown page per command,
// generated from the cobra tree (as crane's cmd/crane/help does).
const referenceDir = "../../docs/commands"

// commandPages renders the reference: file name -> content.
func commandPages() map[string][]byte {
	var out, errOut bytes.Buffer
	root := newRootCmd(&globalOptions{stdout: &out, stderr: &errOut})
	root.InitDefaultCompletionCmd()
	root.InitDefaultHelpCmd()
	pages := map[string][]byte{}
	walk(root, func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" || strings.HasPrefix(c.Name(), cobra.ShellCompRequestCmd) {
			return
		}
		c.InitDefaultHelpFlag()
		if c == root {
			c.InitDefaultVersionFlag()
		}
		pages[pageName(c)] = commandPage(c)
	})
	return pages
}

func pageName(c *cobra.Command) string {
	return strings.ReplaceAll(c.CommandPath(), " ", "_") + ".md"
}

// commandPage is one command's page: what it does, how it is called, its
// examples, flags and JSON output, and the commands around it.
func commandPage(c *cobra.Command) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "<!-- Generated from the command tree: go test ./cmd/updeb -run TestCommandReference -update -->\n\n")
	fmt.Fprintf(&b, "# %s\n\n%s\n\n", c.CommandPath(), c.Short)
	if c.Runnable() {
		fmt.Fprintf(&b, "```\n%s\n```\n\n", c.UseLine())
	}
	if long := strings.TrimSpace(c.Long); long != "" {
		fmt.Fprintf(&b, "%s\n\n", long)
	}
	if len(c.Aliases) > 0 {
		fmt.Fprintf(&b, "Also called: %s.\n\n", strings.Join(c.Aliases, ", "))
	}
	if s := jsonSchema(c); s != "" {
		fmt.Fprintf(&b, "With `--json` it prints one JSON object, `\"schema\": %q` (see [scripting](../scripting.md)).\n\n", s)
	}
	if c.Example != "" {
		fmt.Fprintf(&b, "## Examples\n\n```\n%s\n```\n\n", strings.TrimRight(c.Example, "\n"))
	}
	if f := c.NonInheritedFlags(); f.HasAvailableFlags() {
		fmt.Fprintf(&b, "## Options\n\n```\n%s```\n\n", f.FlagUsages())
	}
	if f := c.InheritedFlags(); f.HasAvailableFlags() {
		fmt.Fprintf(&b, "## Options of every command\n\n```\n%s```\n\n", f.FlagUsages())
	}
	var related []string
	if p := c.Parent(); p != nil {
		related = append(related, fmt.Sprintf("- [%s](%s): %s", p.CommandPath(), pageName(p), p.Short))
	}
	for _, s := range c.Commands() {
		if s.IsAvailableCommand() && s.Name() != "help" {
			related = append(related, fmt.Sprintf("- [%s](%s): %s", s.CommandPath(), pageName(s), s.Short))
		}
	}
	if len(related) > 0 {
		fmt.Fprintf(&b, "## See also\n\n%s\n", strings.Join(related, "\n"))
	}
	return append(bytes.TrimRight(b.Bytes(), "\n"), '\n')
}

// TestCommandReference fails when a page of docs/commands is stale, missing
// or left from a command that is gone. Regenerate the pages with:
//
//	go test ./cmd/updeb -run TestCommandReference -update
func TestCommandReference(t *testing.T) {
	pages := commandPages()
	if *update {
		if err := os.MkdirAll(referenceDir, 0o755); err != nil {
			t.Fatal(err)
		}
		old, _ := filepath.Glob(filepath.Join(referenceDir, "*.md"))
		for _, p := range old {
			if _, ok := pages[filepath.Base(p)]; !ok {
				os.Remove(p)
			}
		}
		for name, content := range pages {
			if err := os.WriteFile(filepath.Join(referenceDir, name), content, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	const regenerate = "run: go test ./cmd/updeb -run TestCommandReference -update"
	names := make([]string, 0, len(pages))
	for name := range pages {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		have, err := os.ReadFile(filepath.Join(referenceDir, name))
		switch {
		case err != nil:
			t.Errorf("docs/commands/%s: %v; %s", name, err, regenerate)
		case !bytes.Equal(have, pages[name]):
			t.Errorf("docs/commands/%s is stale; %s", name, regenerate)
		}
	}
	files, _ := filepath.Glob(filepath.Join(referenceDir, "*.md"))
	for _, f := range files {
		if _, ok := pages[filepath.Base(f)]; !ok {
			t.Errorf("docs/commands/%s documents no command; %s", filepath.Base(f), regenerate)
		}
	}
	if len(pages) < 20 {
		t.Errorf("only %d command pages", len(pages))
	}
}

// TestExamplesUseRealFlags: every flag an example of `updeb help` gives
// (updeb COMMAND... --flag) is a flag of the command it runs, and every
// testdata/ path it names exists: an example that a reader copies must not
// stop at "unknown flag" or "no such file".
func TestExamplesUseRealFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	root := newRootCmd(&globalOptions{stdout: &out, stderr: &errOut})
	root.InitDefaultCompletionCmd()
	root.InitDefaultVersionFlag()
	checked := 0
	walk(root, func(c *cobra.Command) {
		// A line that ends in \ goes on in the next.
		for _, line := range strings.Split(strings.ReplaceAll(c.Example, "\\\n", " "), "\n") {
			for _, call := range strings.Split(line, "updeb ")[1:] {
				// The call ends where the shell takes over.
				if i := strings.IndexAny(call, "|&;>#$()"); i >= 0 {
					call = call[:i]
				}
				args := strings.Fields(call)
				cmd, _, err := root.Find(args)
				if err != nil {
					t.Errorf("%s: example %q: %v", c.CommandPath(), line, err)
					continue
				}
				n, problems := flagProblems(cmd, args)
				checked += n
				for _, p := range problems {
					t.Errorf("%s: example %q %s", c.CommandPath(), strings.TrimSpace(line), p)
				}
				// The fixtures it names are this checkout's: a reader runs it there.
				for _, a := range args {
					if strings.HasPrefix(a, "testdata/") {
						if _, err := os.Stat(filepath.Join(repoRoot, a)); err != nil {
							t.Errorf("%s: example %q names %s: %v", c.CommandPath(), strings.TrimSpace(line), a, err)
						}
					}
				}
				// So are the recipes it names: one of the checkout's (recipes/
				// or the demo's) is in the --recipes folder the call reads.
				if p := recipeNotFound(cmd, args); p != "" {
					t.Errorf("%s: example %q names %s", c.CommandPath(), strings.TrimSpace(line), p)
				}
			}
		}
	})
	if checked < 50 {
		t.Errorf("only %d flags in the examples", checked)
	}
}

// recipeNotFound returns what is wrong with the recipe names a call of cmd
// gives as arguments ("" when nothing is): a recipe of this checkout, of
// recipes/ or the demo's, that the call's --recipes folder (recipes/ when it
// gives none) does not hold. A name of no recipe here (mytool) is left alone.
func recipeNotFound(cmd *cobra.Command, args []string) string {
	dir := "recipes"
	var names []string
	for i := 0; i < len(args); i++ {
		name, value, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		switch {
		case !strings.HasPrefix(args[i], "-"):
			names = append(names, args[i])
		case name == "recipes" && hasValue:
			dir = value
		case name == "recipes" && i+1 < len(args):
			dir = args[i+1]
			i++
		case !hasValue:
			f := cmd.Flags().Lookup(name)
			if f == nil {
				f = cmd.InheritedFlags().Lookup(name)
			}
			if f != nil && f.NoOptDefVal == "" {
				i++ // the flag's value
			}
		}
	}
	for _, n := range names {
		ours := false
		for _, d := range []string{"recipes", "testdata/demo/recipes"} {
			if _, err := os.Stat(filepath.Join(repoRoot, d, n+".yaml")); err == nil {
				ours = true
			}
		}
		if _, err := os.Stat(filepath.Join(repoRoot, dir, n+".yaml")); ours && err != nil {
			return fmt.Sprintf("recipe %s, which its recipes folder %s does not hold (give --recipes)", n, dir)
		}
	}
	return ""
}

// flagProblems checks the --flags of a call of cmd: how many there are, and
// what is wrong with them (a flag cmd does not have, --json where it prints
// none).
func flagProblems(cmd *cobra.Command, args []string) (n int, problems []string) {
	for _, a := range args {
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !strings.HasPrefix(a, "--") || name == "" {
			continue
		}
		n++
		if cmd.Flags().Lookup(name) == nil && cmd.InheritedFlags().Lookup(name) == nil {
			problems = append(problems, fmt.Sprintf("gives --%s, which %s does not have", name, cmd.CommandPath()))
		}
		// updeb --version --json is updeb version --json.
		if name == "json" && !slices.Contains(args, "--version") && checkJSONFlag(cmd, true) != nil {
			problems = append(problems, fmt.Sprintf("gives --json, but %s prints no JSON", cmd.CommandPath()))
		}
	}
	return n, problems
}

// docCall is where a command line of the documentation calls updeb: at the
// start of a line (after a prompt), after a shell operator, or by its path.
var docCall = regexp.MustCompile(`(?:^|\$ |&& |\| |; |xargs -r |/bin/)updeb `)

// TestDocsUseRealFlags: every flag a command line of the documentation gives
// (in a code block, or an inline `updeb ...`) is a flag of the command it
// runs, and every command it names exists: a reader copies them.
func TestDocsUseRealFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	root := newRootCmd(&globalOptions{stdout: &out, stderr: &errOut})
	root.InitDefaultCompletionCmd()
	root.InitDefaultHelpFlag()
	root.InitDefaultVersionFlag()
	inline := regexp.MustCompile("`(updeb [^`]+)`")
	checked := 0
	for _, file := range docFiles(t) {
		if strings.HasPrefix(file, "docs/commands/") { // TestExamplesUseRealFlags
			continue
		}
		doc := readDoc(t, file)
		var lines []string
		for _, b := range fence.FindAllString(doc, -1) {
			lines = append(lines, strings.Split(strings.ReplaceAll(b, "\\\n", " "), "\n")...)
		}
		for _, m := range inline.FindAllStringSubmatch(fence.ReplaceAllString(doc, ""), -1) {
			lines = append(lines, m[1])
		}
		for _, line := range lines {
			line = strings.TrimSpace(line)
			for _, loc := range docCall.FindAllStringIndex(line, -1) {
				call := line[loc[1]:]
				// The call ends where the shell takes over.
				if i := strings.IndexAny(call, "|&;>#$()`"); i >= 0 {
					call = call[:i]
				}
				args := strings.Fields(call)
				cmd, rest, err := root.Find(args)
				switch line {
				case "updeb biuld", // docs/README.md shows the suggestion a typo gets
					"updeb mirror export/verify": // two commands
					continue
				}
				if err != nil || cmd.HasAvailableSubCommands() && len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
					t.Errorf("%s: %q: no such command (%v)", file, line, err)
					continue
				}
				n, problems := flagProblems(cmd, args)
				checked += n
				for _, p := range problems {
					t.Errorf("%s: %q %s", file, line, p)
				}
				if p := recipeNotFound(cmd, args); p != "" {
					t.Errorf("%s: %q names %s", file, line, p)
				}
			}
		}
	}
	if checked < 100 {
		t.Errorf("only %d flags in the documentation's command lines", checked)
	}
}
