package fetchbench

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/updeb/updeb/internal/testkit/testenv"
)

// TestRunSmall runs the benchmark on 8 MB once, to keep it working.
func TestRunSmall(t *testing.T) {
	testenv.RequireTool(t, "squid", "curl")
	bin := filepath.Join(t.TempDir(), "updeb")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/updeb/updeb/cmd/updeb").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var out bytes.Buffer
	if err := Run(context.Background(), &out, Config{Updeb: bin, Size: 8 << 20, Runs: 1}); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^updeb/curl throughput ratio: \d+\.\d\dx sha256-pinned, \d+\.\d\dx sha512-pinned.*\nratio of all CPU \(curl.s run / updeb.s\): \d+\.\d\dx sha256-pinned, \d+\.\d\dx sha512-pinned`).Match(out.Bytes()) {
		t.Errorf("no ratio line in:\n%s", out.String())
	}
}
