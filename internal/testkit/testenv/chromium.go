package testenv

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Chromium runs headless Chromium on the local file page with the given
// extra arguments (--dump-dom, --screenshot=FILE, --window-size=W,H),
// bounded by three minutes (10-15 s on a quiet machine; over a minute on a
// CI runner's two cores busy with race-enabled tests), in a throwaway
// profile with no network chatter, and returns its stdout. A missing
// chromium is RequireTool's case.
func Chromium(t testing.TB, page string, args ...string) []byte {
	t.Helper()
	bin := RequireTool(t, "chromium")[0]
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, bin, append(append(base, args...), "file://"+page)...)
	// Its crash reporter's folder and dconf's cache go under HOME and the
	// XDG folders whatever --user-data-dir says: a throwaway home for them.
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_CACHE_HOME="+filepath.Join(home, ".cache"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
	}
	return stdout.Bytes()
}
