package main

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/testkit/testenv"
)

// shellScripts returns the shell scripts the project ships (a file whose
// first line is a shell's #!: .ci/run, scripts/, contrib/), relative to
// the repository root; testdata's fixtures and build outputs are not
// among them.
func shellScripts(t *testing.T) []string {
	t.Helper()
	var scripts []string
	err := filepath.WalkDir(filepath.Join("..", ".."), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "testdata", "bin", "out":
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		first, _, _ := bytes.Cut(b, []byte("\n"))
		for _, sh := range []string{"#!/bin/sh", "#!/bin/bash", "#!/usr/bin/env bash", "#!/usr/bin/env sh"} {
			if string(bytes.TrimSpace(first)) == sh {
				scripts = append(scripts, path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return scripts
}

// TestShellScripts runs shellcheck on every shell script the project ships:
// the tracking job, make demo's script, the Sigstore conformance wrapper
// and .ci/run. A comment line that starts with the word shellcheck is read
// as a directive: one that does not parse stops shellcheck from checking
// the rest of the file.
func TestShellScripts(t *testing.T) {
	testenv.RequireTool(t, "shellcheck")
	scripts := shellScripts(t)
	want := map[string]bool{}
	for _, s := range scripts {
		want[filepath.ToSlash(s)] = true
	}
	for _, s := range []string{"../../.ci/run", "../../contrib/tracking/updeb-tracking", "../../scripts/demo", "../../scripts/sigstore-conformance"} {
		if !want[s] {
			t.Errorf("%s is not among the shell scripts found: %v", s, scripts)
		}
	}
	if out, err := exec.Command("shellcheck", scripts...).CombinedOutput(); err != nil {
		t.Errorf("shellcheck: %v\n%s", err, out)
	}
}

// TestMakefileFolderWithSpace: make hostile hands bin/updeb's absolute path
// to the hostile fixtures' test whole when the checkout's folder has a space
// in its name (a stand-in go records what it is given).
func TestMakefileFolderWithSpace(t *testing.T) {
	testenv.RequireTool(t, "make")
	makefile, err := filepath.Abs(filepath.Join("..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "a checkout")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	tools := t.TempDir()
	got, fakeGo := filepath.Join(tools, "got"), filepath.Join(tools, "go")
	if err := os.WriteFile(fakeGo, []byte("#!/bin/sh\nif [ \"$1\" = test ]; then printf '%s\\n' \"$UPDEB_BIN\" >\""+got+"\"; fi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("make", "-s", "-C", dir, "-f", makefile, "hostile", "GO="+fakeGo).CombinedOutput(); err != nil {
		t.Fatalf("make hostile: %v\n%s", err, out)
	}
	if b, err := os.ReadFile(got); err != nil || string(b) != filepath.Join(dir, "bin", "updeb")+"\n" {
		t.Errorf("make hostile gave UPDEB_BIN %q (%v), want %s", b, err, filepath.Join(dir, "bin", "updeb"))
	}
}

// runCIRun runs .ci/run with stand-ins for go (reporting version goVersion),
// apt-get, sudo and make first on PATH, and CI unset, as on a machine
// where a person runs it by hand. It returns the exit status, the output
// and what the stand-ins logged (make's with the CI it was given).
func runCIRun(t *testing.T, goVersion string) (int, string, string) {
	t.Helper()
	testenv.RequireTool(t, "bash", "sed", "sort")
	bin := t.TempDir()
	log := filepath.Join(bin, "log")
	for name, body := range map[string]string{
		"go":      "if [ \"$1\" = env ]; then echo " + goVersion + "; else echo \"go version " + goVersion + " linux/amd64\"; fi",
		"apt-get": "echo \"apt-get $*\" >>\"$FAKE_LOG\"",
		"sudo":    "\"$@\"",
		"make":    "echo \"make $* CI=${CI:-}\" >>\"$FAKE_LOG\"",
	} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("bash", filepath.Join("..", "..", ".ci", "run"))
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "CI=") && !strings.HasPrefix(e, "PATH=") {
			cmd.Env = append(cmd.Env, e)
		}
	}
	cmd.Env = append(cmd.Env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "FAKE_LOG="+log)
	code, out := runScript(t, cmd)
	b, _ := os.ReadFile(log)
	return code, out, string(b)
}

// runScript runs cmd and returns its exit status and its output (stdout
// and stderr together); a command that cannot be started fails the test.
func runScript(t *testing.T, cmd *exec.Cmd) (int, string) {
	t.Helper()
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, string(out)
}

// TestCIRunStrict: .ci/run runs make test under CI=true itself, so that a
// missing referee tool fails its test there instead of skipping it, also
// when a person runs it by hand (CI systems set CI=true; a shell does not).
func TestCIRunStrict(t *testing.T) {
	code, out, log := runCIRun(t, "go1.26.8")
	if code != 0 || !strings.Contains(log, "apt-get install") || !strings.Contains(log, "make test CI=true\n") {
		t.Errorf(".ci/run: exit %d, stand-ins' log:\n%s\noutput:\n%s", code, log, out)
	}
}

// TestCIRunOldGo: a Go older than go.mod's (Debian 12's golang-go is 1.19)
// stops .ci/run at once, before the long install, saying which Go it
// needs and where the README says to get it, instead of failing later in
// make test on what that Go cannot build.
func TestCIRunOldGo(t *testing.T) {
	code, out, log := runCIRun(t, "go1.19.8")
	if code == 0 || !strings.Contains(out, "Go 1.19.8 is older than go.mod's go 1.26.0") || !strings.Contains(out, "README.md") || log != "" {
		t.Errorf(".ci/run with Go 1.19: exit %d, stand-ins' log:\n%s\noutput:\n%s", code, log, out)
	}
}
