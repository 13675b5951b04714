package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestCompatCommand(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(good, []byte("sets:\n  - name: k135\n    components: {kubernetes: 1.35.8, helm: 3.21.4}\n"), 0o644)
	os.WriteFile(bad, []byte("sets:\n  - name: k135\n    components:\n      kubernetes: 1.35.8\n      helm: latest\n"), 0o644)
	example := filepath.Join("..", "..", "testdata", "compat", "release-sets.yaml")
	out := filepath.Join(dir, "report.html")
	failed := filepath.Join(dir, "failed.html")
	for _, tc := range []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{[]string{"compat", "--set", good, "--now", "2026-08-22"}, 0, "helm                     3.21.4", ""},
		{[]string{"compat", "--set", good, "--now", "2026-08-22", "--format", "csv"}, 0, "k135,1.35.8,helm,3.21.4,false,,,ok,", ""},
		{[]string{"compat", "--set", good, "--now", "2026-08-22", "--json"}, 0, `"findings": []`, ""},
		{[]string{"compat", "--set", good, "--now", "2027-03-01"}, 1, "kubernetes cycle 1.35 is end-of-life (eol since 2027-02-28)", "7 compatibility violation(s)"},
		// The findings are in the file, not above.
		{[]string{"compat", "--set", good, "--now", "2027-03-01", "--format", "html", "--output", failed}, 1, "", "7 compatibility violation(s) in " + good + "\nupdeb: hint: see the findings in " + failed + "\n"},
		{[]string{"compat", "--set", example, "--recipes", filepath.Join("..", "..", "recipes"), "--now", "2026-08-22", "--format", "markdown"}, 0,
			"| kubelet | 1.35.4\\* | 1.35.4..1.36.0 |", "support data: bundled copy, as of 2026-08-22 (0 days old)"},
		{[]string{"compat", "--set", example, "--now", "2026-08-22"}, 2, "", "component \"kubernetes\": recipe:kubernetes-1.36 (no recipes/kubernetes-1.36.yaml)\nupdeb: hint: a release set's recipe:NAME must name a recipe of the --recipes folder"},
		// A recipe of another --recipes folder than recipes/ is looked for there, and the error names that file.
		{[]string{"compat", "--set", example, "--recipes", filepath.Join("..", "..", "testdata", "demo", "recipes"), "--now", "2026-08-22"}, 2, "",
			"recipe:kubernetes-1.36 (no " + filepath.Join("..", "..", "testdata", "demo", "recipes", "kubernetes-1.36.yaml") + ")"},
		{[]string{"compat", "--set", bad}, 2, "", bad + `:5:13: set "k135": component "helm": invalid Debian version`},
		{[]string{"compat", "--set", filepath.Join(dir, "none.yaml")}, 2, "", "hint: name the release set file with --set, or run updeb compat where release-sets.yaml is"}, // not testdata/, which installed updeb has none of
		{[]string{"compat", "--set", good, "--format", "pdf"}, 2, "", `--format "pdf"`},
		{[]string{"compat", "--set", good, "--format", "csv", "--json"}, 2, "", "--format and --json each choose the output"},
		{[]string{"compat", "--set", good, "--now", "today"}, 2, "", `--now "today"`},
		{[]string{"compat", "--set", good, "--now", "2026-08-22", "--format", "html", "--output", out}, 0, "", ""},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), tc.args, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stdout.String(), tc.stdout) || !strings.Contains(stderr.String(), tc.stderr) {
			t.Errorf("updeb %v: exit %d, want %d\nstdout (want %q):\n%s\nstderr (want %q):\n%s",
				tc.args, code, tc.code, tc.stdout, stdout.String(), tc.stderr, stderr.String())
		}
	}
	page, err := os.ReadFile(out)
	if err != nil || !bytes.HasPrefix(page, []byte("<!DOCTYPE html>")) {
		t.Errorf("--output did not write the page: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".report.html.tmp*")); len(left) != 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

// TestOutputRemovesKilledWrite: the temporary file beside an --output file
// (compat --output, verify-signature --output, plan --apply --message) that
// a run killed before its rename left is removed by the next write of that
// file. Nothing removed it: in the recipes repository, where the message
// of plan --apply goes, 'git add -A' committed it. A temporary file of
// another name there is another write's, and stays.
func TestOutputRemovesKilledWrite(t *testing.T) {
	dir := t.TempDir()
	set := filepath.Join(dir, "set.yaml")
	os.WriteFile(set, []byte("sets:\n  - name: k135\n    components: {kubernetes: 1.35.8, helm: 3.21.4}\n"), 0o644)
	killed, other := filepath.Join(dir, ".report.csv.tmp-2113417386"), filepath.Join(dir, ".notes.csv.tmp-9")
	for _, f := range []string{killed, other} {
		if err := os.WriteFile(f, []byte("k135,1.35"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, _, stderr := runCLI(t, "compat", "--set", set, "--now", "2026-08-22", "--format", "csv", "--output", filepath.Join(dir, "report.csv"))
	if code != 0 {
		t.Fatalf("compat --output: exit %d\n%s", code, stderr)
	}
	if _, err := os.Lstat(killed); !os.IsNotExist(err) {
		t.Errorf("the killed write's temporary file is still there (%v)", err)
	}
	if _, err := os.Lstat(other); err != nil {
		t.Errorf("the temporary file of another name: %v", err)
	}
}

// TestCompatOutputNotAnInput: --output naming a file compat reads (the
// release sets, under their name or another link to them; the config) is
// refused, exit 2, the file untouched: the report replaced it, and
// 'compat -o release-sets.yaml' left a table where the release sets were.
func TestCompatOutputNotAnInput(t *testing.T) {
	dir := t.TempDir()
	set, link, cfg := filepath.Join(dir, "release-sets.yaml"), filepath.Join(dir, "link.yaml"), filepath.Join(dir, "updeb.yaml")
	sets, config := []byte("sets:\n  - name: k135\n    components: {kubernetes: 1.35.8, helm: 3.21.4}\n"), []byte("out: debs\n")
	os.WriteFile(set, sets, 0o644)
	os.WriteFile(cfg, config, 0o644)
	if err := os.Link(set, link); err != nil {
		t.Fatal(err)
	}
	for output, want := range map[string]string{
		set:  "--output " + set + ": this command reads that file, and the output would replace it",
		link: "--output " + link + ": this command reads " + set + ", the same file, and the output would replace it",
		cfg:  "--output " + cfg + ": this command reads that file, and the output would replace it",
	} {
		code, stdout, stderr := runCLI(t, "--config", cfg, "compat", "--set", set, "--now", "2026-08-22", "--output", output)
		if code != exitUsage || stdout != "" || !strings.Contains(stderr, want) {
			t.Errorf("--output %s: exit %d, stdout %q, stderr %q; want exit 2: %s", output, code, stdout, stderr, want)
		}
	}
	if got, _ := os.ReadFile(set); !bytes.Equal(got, sets) {
		t.Errorf("the release sets were replaced:\n%s", got)
	}
	if got, _ := os.ReadFile(cfg); !bytes.Equal(got, config) {
		t.Errorf("the config was replaced:\n%s", got)
	}
}

// TestCompatOutputFIFO: --output naming a FIFO (or a device, /dev/stderr)
// writes the report into it, for the process reading it; the FIFO is not
// replaced by a regular file, which the reader would never see.
func TestCompatOutputFIFO(t *testing.T) {
	dir := t.TempDir()
	set := filepath.Join(dir, "set.yaml")
	os.WriteFile(set, []byte("sets:\n  - name: k135\n    components: {kubernetes: 1.35.8, helm: 3.21.4}\n"), 0o644)
	fifo := filepath.Join(dir, "report.fifo")
	read := fifoReader(t, fifo)
	code, _, stderr := runCLI(t, "compat", "--set", set, "--now", "2026-08-22", "--format", "csv", "--output", fifo)
	if got := read(); code != 0 || !strings.Contains(got, "k135,1.35.8,helm,3.21.4,") {
		t.Errorf("exit %d, the FIFO's reader got %q\n%s", code, got, stderr)
	}
}

// fifoReader makes a FIFO at path and reads it in the background. The
// function it returns gives what was written into it (waiting 5 s at
// most), and fails the test if the FIFO was replaced.
func fifoReader(t *testing.T, path string) func() string {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	read := make(chan string, 1)
	go func() {
		f, err := os.Open(path) // blocks until a writer opens it
		if err != nil {
			read <- err.Error()
			return
		}
		b, _ := io.ReadAll(f)
		f.Close()
		read <- string(b)
	}()
	return func() string {
		t.Helper()
		defer func() {
			if fi, err := os.Lstat(path); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
				t.Errorf("%s is no longer a FIFO: %v", path, err)
			}
		}()
		select {
		case got := <-read:
			return got
		case <-time.After(5 * time.Second):
			if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				f.Close() // lets the reader go
			}
			return "(nothing was written into the FIFO)"
		}
	}
}
