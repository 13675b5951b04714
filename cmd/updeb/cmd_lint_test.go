package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/testkit/testenv"
)

func TestLintCommand(t *testing.T) {
	fixtures := filepath.Join("..", "..", "internal", "recipe", "testdata", "recipes")
	good, err := os.ReadFile(filepath.Join(fixtures, "hello.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// A copy of the fixture project with one broken field.
	dir := filepath.Join(helloProject(t, strings.Replace(string(good), "section: net", "sektion: net", 1)), "recipes")
	tests := []struct {
		args     []string
		code     int
		stdout   string
		stderrIn string
	}{
		{[]string{"lint", "--recipes", fixtures}, 0, "2 recipe(s) checked: 2 ok, 0 with 0 finding(s)\n", ""},
		{[]string{"lint", "--recipes", fixtures, "hello"}, 0, "1 recipe(s) checked: 1 ok, 0 with 0 finding(s)\n", ""},
		{[]string{"lint", "--recipes", fixtures, "nope"}, 2, "", "recipe \"nope\": " + filepath.Join(fixtures, "nope.yaml") + " is not a recipe file"},
		{[]string{"lint", "--recipes", t.TempDir()}, 2, "", "no recipes (*.yaml) in"},
		// A folder that cannot be listed is said to be so, not to hold no recipes.
		{[]string{"lint", "--recipes", filepath.Join(dir, "missing")}, 2, "", "error: recipes folder: open " + filepath.Join(dir, "missing") + ": no such file or directory\n"},
		{[]string{"lint", "--recipes", filepath.Join(dir, "hello.yaml")}, 2, "", "error: recipes folder: open " + filepath.Join(dir, "hello.yaml") + ": not a directory\n"},
		{[]string{"lint", "--recipes", dir}, 2, filepath.Join(dir, "hello.yaml") + ":36:5: package: missing required field \"section\"\n" +
			filepath.Join(dir, "hello.yaml") + ":42:5: package: unknown field \"sektion\" (known: alternatives, architecture, breaks, conflicts, depends, description, directories, dynamic, files, hardlinks, lintian-overrides, name, pre-depends, priority, provides, recommends, replaces, scripts, section, suggests, summary, symlinks, system-user, systemd-units, triggers)\n" +
			"1 recipe(s) checked: 0 ok, 1 with 2 finding(s)\n", "1 of 1 recipe(s) are invalid"},
	}
	if os.Geteuid() != 0 { // modes do not stop root
		unreadable := filepath.Join(t.TempDir(), "unreadable")
		if err := os.Mkdir(unreadable, 0); err != nil {
			t.Fatal(err)
		}
		tests = append(tests, struct {
			args     []string
			code     int
			stdout   string
			stderrIn string
		}{[]string{"lint", "--recipes", unreadable}, 2, "", "error: recipes folder: open " + unreadable + ": permission denied\n"})
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"lint", "--json", "--recipes", dir}, &stdout, &stderr); code != 2 {
		t.Fatalf("lint --json: exit %d, want 2\n%s", code, stderr.String())
	}
	var res struct {
		Recipes []struct {
			Recipe   string
			OK       bool
			Findings []struct {
				File      string
				Line, Col int
				Message   string
			}
		}
		Findings int
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("lint --json output: %v\n%s", err, stdout.String())
	}
	if res.Findings != 2 || len(res.Recipes) != 1 || res.Recipes[0].OK || res.Recipes[0].Findings[1].Line != 42 || res.Recipes[0].Findings[1].Col != 5 {
		t.Errorf("lint --json = %+v", res)
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), tt.args, &stdout, &stderr)
		if code != tt.code || stdout.String() != tt.stdout || !strings.Contains(stderr.String(), tt.stderrIn) {
			t.Errorf("updeb %v: exit %d, stdout:\n%s\nstderr:\n%s\nwant exit %d, stdout:\n%s\nstderr containing %q", tt.args, code, stdout.String(), stderr.String(), tt.code, tt.stdout, tt.stderrIn)
		}
	}
}

// helloProject writes a copy of the hello fixture project (recipes/hello.yaml
// with the given text, the fixture's unit, its default file, its keyring)
// and returns its root.
func helloProject(t *testing.T, hello string) string {
	t.Helper()
	root := t.TempDir()
	unit, err := os.ReadFile(filepath.Join("..", "..", "internal", "recipe", "testdata", "recipes", "hello", "hello.service"))
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"recipes/hello.yaml":          hello,
		"recipes/hello/hello.service": string(unit), // lint reads it as systemd does
		"recipes/hello/hello.default": "DAEMON_ARGS=\n",
		"keys/hello.asc":              "placeholder\n",
	} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// Lint checks maintainer-script fragments with sh -n (a syntax error is a
// finding at the fragment's line) and shellcheck (its warnings are
// warnings), with the #UPDEB# line read as the command it becomes (and
// refused where it would not be one), and prints the recipe's warnings (a
// world-writable file) without failing.
func TestLintFragmentsAndWarnings(t *testing.T) {
	testenv.RequireTool(t, "sh", "shellcheck")
	fixtures := filepath.Join("..", "..", "internal", "recipe", "testdata", "recipes")
	good, err := os.ReadFile(filepath.Join(fixtures, "hello.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(good), "    section: net\n", "    section: net\n    scripts: {postinst: hello.postinst}\n", 1)
	text = strings.Replace(text, "dest: /etc/default/hello}", `dest: /etc/default/hello, mode: "0666"}`, 1)
	root := helloProject(t, text)
	dir := filepath.Join(root, "recipes")
	fragment := filepath.Join(dir, "hello", "hello.postinst")
	for _, tc := range []struct {
		fragment string
		code     int
		stdout   []string
	}{
		{"if [ \"$1\" = configure ]; then\n\trm -rf \"$STATE\"/\nfi\n", 0, []string{
			fragment + ":2:9: warning: postinst fragment: shellcheck: Use \"${var:?}\" to ensure this never expands to / . [SC2115]\n",
			filepath.Join(dir, "hello.yaml") + ":49:63: warning: mode: /etc/default/hello is world-writable (0666): any local user can change it\n",
			"1 recipe(s) checked: 1 ok, 0 with 0 finding(s); 2 warning(s)\n",
		}},
		{"if [ \"$1\" = configure ]; then\n\techo configured\n", 2, []string{
			fragment + ":3:1: postinst fragment: sh -n: Syntax error: end of file unexpected (expecting \"fi\")\n",
			fragment + ":3:1: postinst fragment: shellcheck: Expected 'fi' matching previously mentioned 'if'. [SC1047]\n",
			"1 recipe(s) checked: 0 ok, 1 with 5 finding(s); 1 warning(s)\n",
		}},
		// The #UPDEB# line alone in a block: updeb's part makes it a
		// command, and lint reads it so.
		{"if [ \"$1\" = configure ]; then\n\t#UPDEB#\nfi\n", 0, []string{
			"1 recipe(s) checked: 1 ok, 0 with 0 finding(s); 1 warning(s)\n",
		}},
		// In a here-document, updeb's part would be text.
		{"cat >\"$DPKG_ROOT/etc/x\" <<EOF\n#UPDEB#\nEOF\n", 2, []string{
			fragment + ":2:1: postinst fragment: the #UPDEB# line is inside a here-document or a quoted string: updeb's part of the script would be text there, never run; put the line where a command may stand\n",
			"1 recipe(s) checked: 0 ok, 1 with 1 finding(s); 1 warning(s)\n",
		}},
	} {
		if err := os.WriteFile(fragment, []byte(tc.fragment), 0o644); err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), []string{"lint", "--recipes", dir}, &stdout, &stderr)
		if code != tc.code {
			t.Errorf("exit %d, want %d\n%s%s", code, tc.code, stdout.String(), stderr.String())
		}
		for _, want := range tc.stdout {
			if !strings.Contains(stdout.String(), want) {
				t.Errorf("lint output lacks %q:\n%s", want, stdout.String())
			}
		}
	}
}

// A recipes folder whose name a glob reads as a pattern is listed as the
// folder it is: "recipes [old]" held no recipes, "r*" those of other folders.
func TestLintRecipesFolderNamedLikeAPattern(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "testdata [old]")
	testenv.Run(t, "cp", "-a", filepath.Join("..", "..", "internal", "recipe", "testdata"), dir)
	code, stdout, stderr := runCLI(t, "lint", "--recipes", filepath.Join(dir, "recipes"))
	if code != 0 || stdout != "2 recipe(s) checked: 2 ok, 0 with 0 finding(s)\n" {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
}

// A recipe named twice on the command line (by name and by path) is one
// recipe, not two of one name.
func TestLintRecipeNamedTwice(t *testing.T) {
	code, stdout, stderr := runCLI(t, "lint", "--recipes", "../../recipes", "helm", "../../recipes/helm.yaml", "helm")
	if code != 0 || !strings.Contains(stdout, "1 recipe(s) checked: 1 ok") {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
}

// A signal ends lint between recipes (exit 130), with no report printed.
func TestLintStopsOnSignal(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout, stderr bytes.Buffer
	if code := run(ctx, []string{"lint", "--recipes", "../../testdata/tracking/recipes"}, &stdout, &stderr); code != exitInterrupted || stdout.Len() != 0 {
		t.Errorf("exit %d, want %d, stdout %q\n%s", code, exitInterrupted, stdout.String(), stderr.String())
	}
}

// A signal ends the resolving of the recipes named on the command line,
// between arguments: a shell's glob gives tens of thousands, and each was
// compared with every one before it (os.SameFile), which took 8 s of 60,000
// before lint looked at the signal.
func TestResolveRecipesStops(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	g := &globalOptions{recipesDir: "../../recipes"}
	if paths, err := resolveRecipes(ctx, g, []string{"helm", "../../recipes/helm.yaml"}); !errors.Is(err, context.Canceled) || paths != nil {
		t.Errorf("under a context that is done: %q, %v", paths, err)
	}
	paths, err := resolveRecipes(t.Context(), g, []string{"helm", "../../recipes/helm.yaml", "etcd", "helm"})
	if err != nil || len(paths) != 2 || !strings.HasSuffix(paths[0], "helm.yaml") || !strings.HasSuffix(paths[1], "etcd.yaml") {
		t.Errorf("helm named three times, then etcd: %q, %v", paths, err)
	}
}

// The cri-tools series with the minor in its package names (cri-tools-1.35,
// cri-tools-1.36), both installing /usr/bin/crictl: each recipe lints, but
// dpkg refuses one where the other is installed, so lint of the two warns
// at the later one's package (exit 0); with the name both provide,
// conflict with and replace that the warning names, it says nothing.
func TestLintSeriesPackagesOfOnePath(t *testing.T) {
	dir := t.TempDir()
	write := func(minor, relations string) {
		text, err := os.ReadFile(filepath.Join("..", "..", "recipes", "cri-tools-"+minor+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		s := strings.Replace(string(text), "  - name: cri-tools\n", "  - name: cri-tools-"+minor+"\n"+relations, 1)
		if err := os.WriteFile(filepath.Join(dir, "cri-tools-"+minor+".yaml"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("1.35", "")
	write("1.36", "")
	code, stdout, stderr := runCLI(t, "lint", "--recipes", dir)
	if code != 0 || !strings.Contains(stdout, "cri-tools-1.36.yaml:29:11: warning: package cri-tools-1.36 installs /usr/bin/crictl, which package cri-tools-1.35 of ") ||
		!strings.Contains(stdout, "a name that each of them provides, conflicts with and replaces") ||
		!strings.HasSuffix(stdout, "2 recipe(s) checked: 2 ok, 0 with 0 finding(s); 1 warning(s)\n") {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
	const virtual = "    provides: [cri-tools-any]\n    conflicts: [cri-tools-any]\n    replaces: [cri-tools-any]\n"
	write("1.35", virtual)
	write("1.36", virtual)
	if code, stdout, stderr := runCLI(t, "lint", "--recipes", dir); code != 0 || stdout != "2 recipe(s) checked: 2 ok, 0 with 0 finding(s)\n" {
		t.Errorf("with a name both provide, conflict with and replace: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestUnreadableRecipeHint: a recipe file the user running updeb may not
// read is named with what to do about it (give that user access), by lint
// and by the commands that load recipes: lint said to name a regular file,
// the others to run lint. As root (who reads any file) the commands run as
// nobody, from a copy of the test binary nobody may run.
func TestUnreadableRecipeHint(t *testing.T) {
	dir := t.TempDir()
	recipes := filepath.Join(dir, "recipes")
	if err := os.Mkdir(recipes, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(recipes, "hello.yaml"), []byte("name: hello\n"), 0o000); err != nil {
		t.Fatal(err)
	}
	run := runCLIUnprivileged(t, dir)
	for _, c := range []string{"lint", "build"} {
		code, _, stderr := run("--recipes", recipes, "--cache", filepath.Join(dir, "cache"), "--out", filepath.Join(dir, "out"), c)
		if want := "which may not open " + filepath.Join(recipes, "hello.yaml"); code != exitUsage || !strings.Contains(stderr, want) {
			t.Errorf("%s with an unreadable recipe: exit %d, want %d and a hint with %q\n%s", c, code, exitUsage, want, stderr)
		}
	}
}
