package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/testkit/testenv"
)

// TestReprotestDemo has Debian's reprotest build the demo recipes twice with
// the real updeb binary, varying time zone, locale, umask, build path,
// directory order (disorderfs), HOME, PATH, CPU count and kernel
// personality, and compare the packages with diffoscope. Its faketime
// variation does not reach a static Go binary (LD_PRELOAD, and Go reads the
// clock through the vDSO): internal/pipeline's
// TestReproducibleAcrossEnvironments builds years later instead.
func TestReprotestDemo(t *testing.T) {
	testenv.RequireTool(t, "reprotest", "faketime", "disorderfs", "diffoscope", "go")
	dir := t.TempDir()
	build := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(dir, "updeb"), ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	testenv.Run(t, "cp", "-a", filepath.Join("..", "..", "testdata", "demo"), filepath.Join(dir, "demo"))
	cfg := "mirrors:\n  - {prefix: https://releases.example.org/, to: mirror/releases.example.org/}\n" +
		"cache: cache\nout: ../out\nbuild:\n  maintainer: updeb demo <demo@example.org>\nsigstore: {trusted-root: sigstore/trusted_root.json}\n"
	if err := os.WriteFile(filepath.Join(dir, "demo", "reprotest.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// user_group needs extra accounts on the machine; every other variation runs.
	cmd := exec.CommandContext(ctx, "reprotest", "--verbosity", "1", "--variations=+all,-user_group", "-s", ".",
		"./updeb -q --config demo/reprotest.yaml --recipes demo/recipes build", "out/*.deb", "--", "null")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Reproduction successful") {
		t.Fatalf("reprotest: %v\n%s", err, out)
	}
	for _, v := range []string{"FAKETIME variation", "DISORDERFS variation", "UMASK variation", "LOCALE variation", "TIMEZONE variation", "BUILD_PATH variation"} {
		if !strings.Contains(string(out), v) {
			t.Errorf("reprotest did not apply %s:\n%s", v, out)
		}
	}
	if !strings.Contains(string(out), "hello_1.2.0-1_amd64.deb") || !strings.Contains(string(out), "pingd_0.9.1-1_arm64.deb") {
		t.Errorf("reprotest compared no packages:\n%s", out)
	}
}
