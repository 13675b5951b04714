package provenance

import (
	"os"
	"testing"

	"github.com/updeb/updeb/internal/testkit/pgptest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgptest.Cleanup()
	os.Exit(code)
}
