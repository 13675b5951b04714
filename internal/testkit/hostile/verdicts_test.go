package hostile

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// verdict is one line of a VERDICTS.tsv: a file of a corpus (testdata/hostile/deb,
// testdata/hostile/sig) and what updeb must answer for it.
type verdict struct {
	fields []string // the leading columns that name the inputs
	exit   int
	part   string // a part of stderr when refused
}

// readVerdicts reads dir/VERDICTS.tsv; inputs is how many leading columns name
// inputs before the verdict column.
func readVerdicts(t *testing.T, dir string, inputs int) []verdict {
	f, err := os.Open(filepath.Join(dir, "VERDICTS.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []verdict
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cols := strings.Split(line, "\t")
		if len(cols) < inputs+3 {
			t.Fatalf("%s/VERDICTS.tsv:%d: want at least %d tab-separated columns", dir, n, inputs+3)
		}
		code, err := strconv.Atoi(cols[inputs+1])
		if err != nil {
			t.Fatalf("%s/VERDICTS.tsv:%d: exit %q: %v", dir, n, cols[inputs+1], err)
		}
		out = append(out, verdict{fields: cols[:inputs], exit: code, part: cols[inputs+2]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("%s/VERDICTS.tsv lists no files", dir)
	}
	return out
}

// runBin runs the built binary with a clean environment and a deadline.
func runBin(t *testing.T, bin string, args ...string) (int, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	home := t.TempDir()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CACHE_HOME=" + filepath.Join(home, "cache"), "LANG=C", "TZ=UTC"}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, stderr.String()
	case errors.As(err, &ee) && ctx.Err() == nil:
		return ee.ExitCode(), stderr.String()
	}
	t.Fatalf("updeb %s: %v (stderr: %s)", strings.Join(args, " "), err, stderr.String())
	return 0, ""
}

// TestHostileVerdicts runs the file corpora (hostile .debs through inspect,
// hostile signatures through verify-signature) against the binary UPDEB_BIN,
// as the in-process tests of cmd/updeb do against the code.
func TestHostileVerdicts(t *testing.T) {
	bin := os.Getenv("UPDEB_BIN")
	if bin == "" {
		t.Skip("UPDEB_BIN is not set: make hostile runs these corpora against bin/updeb")
	}
	root := filepath.Join(repoRoot(t), "testdata", "hostile")
	check := func(t *testing.T, v verdict, name string, args ...string) {
		code, stderr := runBin(t, bin, args...)
		if code != v.exit {
			t.Errorf("%s: exit %d, want %d; stderr: %s", name, code, v.exit, stderr)
		}
		if v.exit != 0 && !strings.Contains(stderr, v.part) {
			t.Errorf("%s: stderr does not contain %q: %s", name, v.part, stderr)
		}
	}
	t.Run("deb", func(t *testing.T) {
		dir := filepath.Join(root, "deb")
		for _, v := range readVerdicts(t, dir, 1) {
			t.Run(v.fields[0], func(t *testing.T) {
				t.Parallel()
				check(t, v, v.fields[0], "inspect", filepath.Join(dir, v.fields[0]))
			})
		}
	})
	t.Run("sig", func(t *testing.T) {
		dir := filepath.Join(root, "sig")
		for _, v := range readVerdicts(t, dir, 3) {
			t.Run(v.fields[0], func(t *testing.T) {
				t.Parallel()
				args := []string{"verify-signature", "--keyring", filepath.Join(dir, v.fields[2]), filepath.Join(dir, v.fields[0])}
				if v.fields[1] != "-" {
					args = append(args, filepath.Join(dir, v.fields[1]))
				}
				check(t, v, v.fields[0], args...)
			})
		}
	})
}
