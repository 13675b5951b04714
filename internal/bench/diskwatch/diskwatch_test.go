package diskwatch

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A file written and removed while watched counts in the peak; the final
// sample sees what is there at the end.
func TestPeak(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "stays"), make([]byte, 1000), 0o644)
	stop := Start(dir)
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	tmp := filepath.Join(dir, "sub", "tmp")
	os.WriteFile(tmp, make([]byte, 5000), 0o644)
	time.Sleep(5 * Every)
	os.Remove(tmp)
	if got := stop(); got != 6000 {
		t.Errorf("peak %d, want 6000", got)
	}
	if got := Usage(dir); got != 1000 {
		t.Errorf("usage %d, want 1000", got)
	}
}
