package repo

import (
	"context"
	"log/slog"
	"testing"
	"time"
)

// Suites lists each live suite's Release: its date, Valid-Until (zero
// without valid-for), components and architectures.
func TestSuites(t *testing.T) {
	dir, root := testDirs(t)
	ctx := context.Background()
	deb := pkgOf(t, testDeb(t, dir, "app", "1.0-1", "amd64", "v1"))
	now := time.Date(2026, 11, 24, 5, 0, 0, 0, time.UTC)
	valid := Open(root, Options{Settings: SettingsChange{Architectures: []string{"amd64"}, ValidFor: ptr(168 * time.Hour)}, Signer: testSigner(t),
		Now: func() time.Time { return now }, Logger: slog.New(slog.DiscardHandler)})
	_, err := valid.Publish(ctx, "production", "main", []Package{deb})
	must(t, err)
	plain := Open(root, Options{Settings: SettingsChange{Architectures: []string{"amd64"}}, Signer: testSigner(t), Now: func() time.Time { return now }, Logger: slog.New(slog.DiscardHandler)})
	_, err = plain.Publish(ctx, "staging", "component/kubernetes136", []Package{deb})
	must(t, err)
	suites, err := Open(root, Options{}).Suites()
	must(t, err)
	if len(suites) != 2 || suites[0].Name != "production" || !suites[0].ValidUntil.Equal(now.Add(168*time.Hour)) || !suites[0].Date.Equal(now) ||
		suites[1].Name != "staging" || !suites[1].ValidUntil.IsZero() || len(suites[1].Components) != 1 || suites[1].Components[0] != "component/kubernetes136" ||
		suites[0].Generation != 1 || suites[1].Architectures[0] != "amd64" {
		t.Errorf("suites %+v", suites)
	}
	if none, err := Open(t.TempDir(), Options{}).Suites(); err != nil || len(none) != 0 {
		t.Errorf("an empty repository: %v %v", none, err)
	}
}
