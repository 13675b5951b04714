package provenance

import (
	"os"
	"testing"

	"github.com/updeb/updeb/internal/pgptest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgptest.Cleanup()
	os.Exit(code)
}
