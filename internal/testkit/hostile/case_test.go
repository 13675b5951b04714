package hostile

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/testkit/testenv"
)

// repoRoot is the repository's top folder.
func repoRoot(t testing.TB) string {
	d, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// cases returns every case file: testdata/hostile/CLASS/NAME.yaml.
func cases(t testing.TB) []string {
	m, err := filepath.Glob(filepath.Join(repoRoot(t), "testdata", "hostile", "*", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(m) == 0 {
		t.Fatal("no hostile cases found")
	}
	return m
}

// Every case file is well formed (a malformed drop-in fails here, in every
// go test run, not only under make hostile).
func TestCasesWellFormed(t *testing.T) {
	for _, p := range cases(t) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(data); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// TestHostile runs every case against the binary UPDEB_BIN (make hostile sets
// it to bin/updeb after building it).
func TestHostile(t *testing.T) {
	bin := os.Getenv("UPDEB_BIN")
	if bin == "" {
		t.Skip("UPDEB_BIN is not set: make hostile runs these cases against bin/updeb")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("UPDEB_BIN: %v", err)
	}
	root := repoRoot(t)
	for _, p := range cases(t) {
		class := filepath.Base(filepath.Dir(p))
		name := class + "/" + strings.TrimSuffix(filepath.Base(p), ".yaml")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			c, err := Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			run(t, bin, root, filepath.Dir(p), c)
		})
	}
}

// run carries out one case in a fresh work folder.
func run(t *testing.T, bin, root, classDir string, c *Case) {
	work := t.TempDir()
	vars := map[string]string{"$WORK": work, "$CLASS": classDir, "$REPO": root}
	if c.Proxy != "" {
		vars["$PROXY"] = trickleProxy(t, c.Proxy == "trickle-all")
	}
	expand := func(s string) string {
		for _, k := range []string{"$WORK", "$CLASS", "$REPO", "$PROXY"} {
			s = strings.ReplaceAll(s, k, vars[k])
		}
		return s
	}
	if fi, err := os.Stat(filepath.Join(classDir, "files")); err == nil && fi.IsDir() {
		copyTree(t, filepath.Join(classDir, "files"), work)
	}
	dests := slices.Sorted(maps.Keys(c.Copy))
	for _, d := range dests {
		copyTree(t, expand(c.Copy[d]), filepath.Join(work, d))
	}
	setup(t, work, c.Setup, expand)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + filepath.Join(work, "home"), "LANG=C", "TZ=UTC",
		"XDG_CACHE_HOME=" + filepath.Join(work, "cache")}
	for k, v := range c.Env {
		env = append(env, k+"="+expand(v))
	}
	exec1 := func(args []string, timeout, killAfter time.Duration, sig os.Signal) (code int, stdout, stderr string) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		var full []string
		for _, a := range args {
			full = append(full, expand(a))
		}
		cmd := exec.CommandContext(ctx, bin, full...)
		cmd.Dir, cmd.Env = work, env
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if killAfter > 0 {
			time.AfterFunc(killAfter, func() { cmd.Process.Signal(sig) })
		}
		err := cmd.Wait()
		if ctx.Err() != nil {
			t.Fatalf("updeb %s did not end within %s\nstderr:\n%s", strings.Join(full, " "), timeout, e.String())
		}
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			code = ee.ExitCode()
		case err != nil:
			t.Fatal(err)
		}
		return code, o.String(), e.String()
	}
	for _, args := range c.Before {
		if code, _, e := exec1(args, DefaultTimeout, 0, nil); code != 0 {
			t.Fatalf("before: updeb %s: exit %d\n%s", strings.Join(args, " "), code, e)
		}
	}
	snap := map[string]string{}
	for _, p := range c.Unchanged {
		snapshot(t, filepath.Join(work, expand(p)), snap)
	}
	for i, s := range c.Run {
		setup(t, work, s.Setup, expand)
		timeout := DefaultTimeout
		if s.Timeout > 0 {
			timeout = time.Duration(s.Timeout)
		}
		sig := map[string]os.Signal{"": os.Kill, "TERM": syscall.SIGTERM, "INT": os.Interrupt}[s.Signal]
		code, stdout, stderr := exec1(s.Args, timeout, time.Duration(s.KillAfter), sig)
		what := fmt.Sprintf("run[%d] updeb %s (%s)", i, strings.Join(s.Args, " "), c.About)
		if (s.KillAfter == 0 || s.Signal != "") && s.Exit != nil && code != *s.Exit {
			t.Errorf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", what, code, *s.Exit, stdout, stderr)
		}
		for _, want := range s.Stderr {
			if !strings.Contains(stderr, expand(want)) {
				t.Errorf("%s: stderr lacks %q:\n%s", what, want, stderr)
			}
		}
		for _, want := range s.Stdout {
			if !strings.Contains(stdout, expand(want)) {
				t.Errorf("%s: stdout lacks %q:\n%s", what, want, stdout)
			}
		}
		for _, bad := range s.NotStderr {
			if strings.Contains(stderr, expand(bad)) {
				t.Errorf("%s: stderr has %q:\n%s", what, bad, stderr)
			}
		}
	}
	absent := c.Absent
	if !c.NoDefaultChecks {
		absent = append(absent, DefaultAbsent...)
	}
	for _, g := range absent {
		if m, _ := filepath.Glob(filepath.Join(work, expand(g))); len(m) > 0 {
			t.Errorf("left behind (%s): %v", g, m)
		}
	}
	for _, g := range c.Present {
		if m, _ := filepath.Glob(filepath.Join(work, expand(g))); len(m) == 0 {
			t.Errorf("missing at the end: %s", g)
		}
	}
	if len(c.Unchanged) > 0 {
		after := map[string]string{}
		for _, p := range c.Unchanged {
			snapshot(t, filepath.Join(work, expand(p)), after)
		}
		for p, sum := range snap {
			if after[p] != sum {
				t.Errorf("%s changed", p)
			}
		}
		for p := range after {
			if _, ok := snap[p]; !ok {
				t.Errorf("%s appeared", p)
			}
		}
	}
}

// setup makes the file-system objects of ss in work.
func setup(t *testing.T, work string, ss []Setup, expand func(string) string) {
	for _, s := range ss {
		var err error
		switch {
		case s.Symlink != "":
			p := filepath.Join(work, s.Symlink)
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.Remove(p)
			err = os.Symlink(expand(s.To), p)
		case s.FIFO != "":
			p := filepath.Join(work, s.FIFO)
			os.MkdirAll(filepath.Dir(p), 0o755)
			err = syscall.Mkfifo(p, 0o644)
		case s.Mkdir != "":
			err = os.MkdirAll(filepath.Join(work, s.Mkdir), 0o755)
		case s.Remove != "":
			err = os.RemoveAll(filepath.Join(work, s.Remove))
		case s.Git != "":
			err = gitRepo(filepath.Join(work, s.Git), s.Pack)
		case s.Write != "":
			content := []byte(expand(s.Content))
			if s.From != "" {
				if content, err = os.ReadFile(filepath.Join(work, s.From)); err != nil {
					break
				}
				for old, new := range s.Replace {
					content = bytes.ReplaceAll(content, []byte(old), bytes.Repeat([]byte(new), max(s.Times, 1)))
				}
			}
			p := filepath.Join(work, s.Write)
			os.MkdirAll(filepath.Dir(p), 0o755)
			err = os.WriteFile(p, content, 0o644)
		}
		if err != nil {
			t.Fatalf("setup %+v: %v", s, err)
		}
	}
}

// gitRepo makes dir a git repository holding every file under it, with the
// real git (a fixed identity and date, no user or system config).
func gitRepo(dir string, pack bool) error {
	steps := [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "fixture"}}
	if pack {
		steps = append(steps, []string{"repack", "-q", "-a", "-d"}, []string{"pack-refs", "--all"}, []string{"prune-packed"})
	}
	for _, args := range steps {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.org", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.org",
			"GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z"}
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return nil
}

// copyTree copies src (a file or a folder, symlinks as symlinks) to dst.
func copyTree(t *testing.T, src, dst string) {
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		os.MkdirAll(filepath.Dir(to), 0o755)
		return os.WriteFile(to, data, 0o644)
	})
	if err != nil {
		t.Fatalf("copying %s: %v", src, err)
	}
}

// snapshot records every file under p (path -> sha256, or "-> target").
func snapshot(t *testing.T, p string, into map[string]string) {
	filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(q)
			into[q] = "-> " + target
			return nil
		}
		data, err := os.ReadFile(q)
		if err != nil {
			t.Errorf("snapshot %s: %v", q, err)
			return nil
		}
		sum := sha256.Sum256(data)
		into[q] = hex.EncodeToString(sum[:])
		return nil
	})
}

// trickleProxy listens on 127.0.0.1 and answers every request (a GET or a
// CONNECT) with a large response trickled one byte a second: from its first
// byte when all is set (trickle-all), else after the status line and headers
// (trickle). It returns its URL.
func trickleProxy(t *testing.T, all bool) string {
	return "http://" + testenv.Listen(t, func(c net.Conn) {
		if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
			return
		}
		head := "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n"
		answer := head + strings.Repeat("x", 100000)
		if !all {
			if _, err := c.Write([]byte(head)); err != nil {
				return
			}
			answer = answer[len(head):]
		}
		for i := 0; i < len(answer); i++ {
			if _, err := c.Write([]byte{answer[i]}); err != nil {
				return
			}
			time.Sleep(time.Second)
		}
	})
}

// FuzzParse: the case reader never panics, and what it accepts has steps.
func FuzzParse(f *testing.F) {
	f.Add([]byte("about: x\nrun:\n  - {args: [lint], exit: 2}\n"))
	f.Add([]byte("about: x\nrun: [{args: [a], kill-after: 1s}]\nsetup: [{symlink: a, to: /etc}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err == nil && len(c.Run) == 0 {
			t.Fatal("a case without steps was accepted")
		}
	})
}
