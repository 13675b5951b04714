package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// An interrupt names where each stopped piece of work was, without the
// context's own words at the end of every line (builds stopped together
// give one joined error per build).
func TestInterruptedMessage(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("signal: terminated"))
	for _, tc := range []struct {
		err  error
		want string
	}{
		{context.Canceled, "interrupted (signal: terminated)"},
		{fmt.Errorf("fetching x: %w", context.Canceled), "interrupted (signal: terminated) in: fetching x"},
		{errors.Join(fmt.Errorf("hello amd64: %w", context.Canceled), fmt.Errorf("pingd arm64: %w", context.Canceled)),
			"interrupted (signal: terminated) in: hello amd64\npingd arm64"},
		{errors.Join(context.Canceled, fmt.Errorf("pingd arm64: %w", context.Canceled)), "interrupted (signal: terminated) in: pingd arm64"},
	} {
		if got := interrupted(ctx, tc.err).Error(); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.err, got, tc.want)
		}
	}
	if err := errors.New("other"); interrupted(context.Background(), err) != err {
		t.Error("an error without an interrupt is changed")
	}
}

// A signal ends the commands that load every recipe of a folder (thousands
// take seconds) while the recipes load, and outdated between recipes:
// exit 130, nothing printed and no file written. They ran on to the end,
// printed the whole table and exited 0.
func TestRecipeCommandsStopOnSignal(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, args := range [][]string{
		{"plan"},
		{"outdated"},
		{"report", "--output", "OUT"},
	} {
		dir := t.TempDir()
		if args[len(args)-1] == "OUT" {
			args[len(args)-1] = filepath.Join(dir, "out")
		}
		var stdout, stderr bytes.Buffer
		all := append([]string{"--offline", "--recipes", "../../testdata/tracking/recipes", "--state", filepath.Join(dir, "state"), "--cache", filepath.Join(dir, "cache")}, args...)
		code := run(ctx, all, &stdout, &stderr)
		if code != exitInterrupted || stdout.Len() != 0 {
			t.Errorf("%s: exit %d, want %d, stdout %q\n%s", args[0], code, exitInterrupted, stdout.String(), stderr.String())
		}
		if _, err := os.Stat(filepath.Join(dir, "out")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: wrote its output folder: %v", args[0], err)
		}
	}
}

// A signal while outdated, plan or report asks GitHub ends it: exit 130, no
// table, plan or report, not one made of the recipes that needed no answer
// (cfssl has no watch) and of the rest failing one after another on the
// done context ("unknown").
func TestTrackingStopsBetweenRecipes(t *testing.T) {
	for _, args := range [][]string{{"outdated"}, {"plan"}, {"report", "--output", "OUT"}} {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			cancel() // the signal comes while the first recipe waits for its answer
			http.Error(w, "down", http.StatusServiceUnavailable)
		}))
		defer srv.Close()
		dir := t.TempDir()
		if args[len(args)-1] == "OUT" {
			args[len(args)-1] = filepath.Join(dir, "out")
		}
		if err := os.WriteFile(filepath.Join(dir, "none.yaml"), []byte("fetch: {retries: 0}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		code := run(ctx, append([]string{"--recipes", "../../testdata/tracking/recipes", "--config", filepath.Join(dir, "none.yaml"),
			"--state", filepath.Join(dir, "state"), "--cache", filepath.Join(dir, "cache"), "--github-api", srv.URL}, args...), &stdout, &stderr)
		if code != exitInterrupted || stdout.Len() != 0 {
			t.Errorf("%s: exit %d, want %d, stdout %q\n%s", args[0], code, exitInterrupted, stdout.String(), stderr.String())
		}
		if _, err := os.Stat(filepath.Join(dir, "out")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: wrote its output folder: %v", args[0], err)
		}
	}
}

// A signal ends the commands that read a keyring the user names while its
// keys' self-signatures are checked (seconds for one of 16 MiB): exit 130,
// nothing printed. keys list went on and printed every key.
func TestKeyringCommandsStopOnSignal(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, args := range [][]string{
		{"keys", "list", "../../keys/helm.asc"},
		{"verify-signature", "--keyring", "../../keys/helm.asc", "../../keys/helm.asc", "../../keys/helm.asc"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(ctx, args, &stdout, &stderr); code != exitInterrupted || stdout.Len() != 0 {
			t.Errorf("%s: exit %d, want %d, stdout %q\n%s", args[0], code, exitInterrupted, stdout.String(), stderr.String())
		}
	}
}

// A pipe whose reader is gone: on stdout ('updeb repo list | head -1') the
// command ends with exit 141 (128 + SIGPIPE, as the shell reports any
// program a closed pipe stops) and says nothing; on stderr (a log reader that
// went away) the lines are lost, not the work: the results still go to
// stdout and the exit code is the command's own. SIGPIPE killed updeb at
// its first line on stderr: data status printed nothing, and a missing
// --repo was signal 13, not exit 2.
func TestClosedPipe(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "none")
	for _, tc := range []struct {
		stream string
		args   []string
		code   int
		stdout string
	}{
		{"stdout", []string{"version"}, exitClosedPipe, ""},
		{"stdout", []string{"--help"}, exitClosedPipe, ""},
		{"stderr", []string{"data", "status"}, exitOK, "products: "},
		{"stderr", []string{"repo", "list", "--repo", missing}, exitUsage, ""},
	} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestFetchHelperProcess$", "--"}, tc.args...)...)
		cmd.Env = append(os.Environ(), "UPDEB_TEST_HELPER=1")
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if tc.stream == "stdout" {
			cmd.Stdout = w
		} else {
			cmd.Stderr = w
		}
		cmd.Run() //nolint:errcheck // its exit status is checked
		w.Close()
		if code := cmd.ProcessState.ExitCode(); code != tc.code || !strings.Contains(stdout.String(), tc.stdout) || stderr.Len() != 0 {
			t.Errorf("%v, %s a closed pipe: exit %d (%v), want %d; stdout %q, stderr %q", tc.args, tc.stream, code, cmd.ProcessState, tc.code, stdout.String(), stderr.String())
		}
	}
}

// SIGQUIT (Ctrl-\) keeps the Go runtime's goroutine dump on stderr, for a
// hang's diagnosis, and exits 131 (128 + SIGQUIT): the runtime's exit 2 read
// as usage or invalid input.
func TestQuitDumpsGoroutines(t *testing.T) {
	asked := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked <- struct{}{}
		<-r.Context().Done() // a download that hangs
	}))
	defer srv.Close()
	var stderr bytes.Buffer
	cmd := exec.Command(os.Args[0], "-test.run=^TestFetchHelperProcess$", "--", "--cache", t.TempDir(),
		"fetch", srv.URL+"/tool", "--sha256", strings.Repeat("0", 64))
	cmd.Env = append(os.Environ(), "UPDEB_TEST_HELPER=1")
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	<-asked
	cmd.Process.Signal(syscall.SIGQUIT) //nolint:errcheck // checked by its exit
	cmd.Wait()                          //nolint:errcheck // its exit status is checked
	if code := cmd.ProcessState.ExitCode(); code != exitQuit || !strings.Contains(stderr.String(), "SIGQUIT: quit\n\ngoroutine ") {
		t.Errorf("SIGQUIT: exit %d (%v), want %d and the goroutines' stacks; stderr:\n%.2000s", code, cmd.ProcessState, exitQuit, stderr.String())
	}
}
