package diskwatch

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A file written and removed while watched counts in the peak; the final
// sample sees what is there at the end. (Sizes are whole blocks, so that
// blocks and bytes agree.)
func TestPeak(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "stays"), make([]byte, 64<<10), 0o644)
	stop := Start(dir)
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	tmp := filepath.Join(dir, "sub", "tmp")
	os.WriteFile(tmp, make([]byte, 256<<10), 0o644)
	time.Sleep(5 * Every)
	os.Remove(tmp)
	if got := stop(); got != 320<<10 {
		t.Errorf("peak %d, want %d", got, 320<<10)
	}
	if got := Usage(dir); got != 64<<10 {
		t.Errorf("usage %d, want %d", got, 64<<10)
	}
}
