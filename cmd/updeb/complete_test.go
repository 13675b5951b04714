package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/updeb/updeb/internal/testkit/testenv"
)

// TestCompletion asks the hidden __complete command, as the shells do, for
// recipe names, the values of the flags with a closed set, and what the
// repository holds.
func TestCompletion(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	args, _ := demoProject(t)
	dir := t.TempDir()
	key := generateKey(t, dir)
	repoDir := filepath.Join(dir, "repo")
	for _, p := range []struct{ suite, comp, deb string }{
		{"staging", "main", buildDeb(t, dir, "kubectl", "1.31.4-1", "a")},
		{"production", "component/k8s131", buildDeb(t, dir, "kubeadm", "1.31.4-1", "b")},
	} {
		if code, _, stderr := runCLI(t, "publish", "--repo", repoDir, "--key", key+".secret.asc", "--suite", p.suite, "--component", p.comp, p.deb); code != 0 {
			t.Fatalf("publish: %s", stderr)
		}
	}
	recipes := []string{"--recipes", args[3]}
	repo := []string{"--repo", repoDir}
	for _, tc := range []struct {
		line []string
		want string // the candidates, one per line, then ":DIRECTIVE"
	}{
		{append([]string{"build"}, append(recipes, "")...), "hello\npingd\n:4"},
		{append([]string{"fetch"}, append(recipes, "p")...), "pingd\n:4"},
		{append([]string{"build"}, append(recipes, "hello", "")...), "pingd\n:4"},
		{append([]string{"bump"}, append(recipes, "he")...), "hello\n:4"},
		{append(append([]string{"build"}, recipes...), "hello", "--arch", ""), "amd64\narm64\n:4"},
		{[]string{"build", "--compression", ""}, "xz\ngzip\nzstd\nnone\n:4"},
		{[]string{"version", "--log-format", ""}, "human\njson\n:4"},
		{[]string{"compat", "--format", ""}, "table\nmarkdown\ncsv\nhtml\n:4"},
		{[]string{"data", "refresh", "--table", ""}, "helm\ncontainerd\nistio\nkubeadm-etcd\ncalico\ncilium\ncri-tools\nendoflife\n:4"},
		{[]string{"data", "refresh", "--write", ""}, "yaml\nyml\n:8"},
		{[]string{"keys", "generate", "--type", ""}, "ed25519\nrsa3072\nrsa4096\n:4"},
		{repoLine(repo, "repo list", "--suite"), "production\nstaging\n:4"},
		{repoLine(repo, "publish", "--component"), "component/k8s131\nmain\n:4"},
		{repoLine(repo, "repo promote", "--from"), "production\nproduction/component/k8s131\nstaging\nstaging/main\n:4"},
		{repoLine(repo, "repo history"), "production\nstaging\n:4"},
		{repoLine(repo, "report", "--staging"), "production\nstaging\n:4"},
		{repoLine(repo, "report", "--production"), "production\nstaging\n:4"},
		{append([]string{"plan"}, append(recipes, "--only", "p")...), "pingd\n:4"},
		{repoLine(repo, "repo remove"), "kubeadm\nkubeadm=1.31.4-1\nkubectl\nkubectl=1.31.4-1\n:4"},
		{repoLine(repo, "repo remove", "--arch"), "amd64\n:4"},
		{[]string{"publish", ""}, "deb\n:8"},
		{[]string{"inspect", ""}, "deb\n:8"},
		{[]string{"compat", "--set", ""}, "yaml\nyml\n:8"},
		{[]string{"build", "--cache", ""}, ":16"},
		{append([]string{"mirror", "export"}, append(recipes, "")...), ":16"},
		{append([]string{"mirror", "export"}, append(recipes, "/tmp", "pi")...), "pingd\n:4"},
		{[]string{"mirror", "verify", ""}, ":16"},
	} {
		code, out, stderr := runCLI(t, append([]string{"__complete"}, tc.line...)...)
		got := strings.TrimSpace(out)
		if code != 0 || got != tc.want {
			t.Errorf("updeb __complete %q: exit %d\n%s\nwant\n%s\n%s", tc.line, code, got, tc.want, stderr)
		}
	}
}

// repoLine is the command's words, the repository flags, more words, then
// an empty word to complete.
func repoLine(repo []string, command string, more ...string) []string {
	return append(append(append(strings.Fields(command), repo...), more...), "")
}

// TestClosedFlagsComplete: wherever a flag with a closed set of values
// appears in the command tree (a new command's too), it completes.
func TestClosedFlagsComplete(t *testing.T) {
	g := &globalOptions{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}
	walk(newRootCmd(g), func(c *cobra.Command) {
		for _, name := range []string{"arch", "suite", "component", "compression", "format", "log-format", "type", "from", "to", "only", "staging", "production"} {
			f := c.Flags().Lookup(name)
			if f == nil || (name == "to" && c.CommandPath() != "updeb repo promote") || (name == "from" && c.CommandPath() != "updeb repo promote") {
				continue
			}
			if _, ok := c.GetFlagCompletionFunc(name); !ok {
				t.Errorf("%s --%s has a closed set of values but no completion (complete.go)", c.CommandPath(), name)
			}
		}
	})
}

func TestSuggestions(t *testing.T) {
	args, _ := demoProject(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"biuld"}, `unknown command "biuld" for "updeb"` + "\nupdeb: hint: did you mean build?"},
		{[]string{"repo", "lsit"}, `unknown command "lsit" for "updeb repo"` + "\nupdeb: hint: did you mean list?"},
		{[]string{"keys", "generat"}, "did you mean generate?"},
		{[]string{"frobnicate"}, "hint: see 'updeb --help' for the list of commands"},
		{append(args, "build", "helo"), `recipe "helo"` + ""},
		{append(args, "build", "helo"), "hint: did you mean hello?"},
		{append(args, "fetch", "png"), "did you mean pingd?"},
		// A file name where the recipe's name goes (a shell completed it):
		// no suggestion was made, though the recipe is there.
		{append(args, "lint", "hello.yaml"), "hint: did you mean hello?"},
		{append(args, "lint", "h"), "hint: recipes are named after their file"},
	} {
		code, _, stderr := runCLI(t, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("updeb %q: exit %d, want 2 and %q:\n%s", tc.args, code, tc.want, stderr)
		}
	}
}
