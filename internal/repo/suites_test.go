package repo

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/aptname"
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

// A component is a folder of dists/SUITE: one named as a file of that folder
// (Release, updeb-by-hash-kept, ...) or as an index of another component
// (main/Contents-amd64.gz) is refused as invalid input, with the suite
// unchanged, rather than failing in the middle of the write, or, for
// updeb-by-hash-kept, being published once and making every later write of
// the suite fail.
func TestComponentNamedLikeAnIndexFile(t *testing.T) {
	dir, root := testDirs(t)
	ctx := context.Background()
	r := testRepo(t, root)
	for _, v := range []string{"1.0-1", "2.0-1"} {
		_, err := r.Publish(ctx, "s", "main", []Package{pkgOf(t, testDeb(t, dir, "app", v, "amd64", v))})
		must(t, err)
	}
	des, err := os.ReadDir(filepath.Join(root, "dists", "s") + "/")
	must(t, err)
	for _, de := range des {
		if de.Type().IsRegular() && !slices.Contains(aptname.SuiteFiles, de.Name()) {
			t.Errorf("dists/s/%s is not in aptname.SuiteFiles: a component could take its name", de.Name())
		}
	}
	other := pkgOf(t, testDeb(t, dir, "other", "1.0-1", "amd64", "other"))
	for _, comp := range append(slices.Clone(aptname.SuiteFiles), "main/Contents-amd64.gz", "main/binary-amd64", "main/by-hash") {
		if _, err := r.Publish(ctx, "s", comp, []Package{other}); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), comp) {
			t.Errorf("publish into component %s: %v, want ErrInvalid naming it", comp, err)
		}
	}
	suites, err := r.Suites()
	must(t, err)
	if len(suites) != 1 || suites[0].Generation != 2 || len(suites[0].Components) != 1 {
		t.Errorf("after the refused publishes: %+v, want generation 2 with main only", suites)
	}
	if _, err := r.Publish(ctx, "s", "main", []Package{other}); err != nil {
		t.Errorf("a publish into main after them: %v", err)
	}
}

// A suite published before Component refused index names, with a component
// such as main/by-hash, still reads: its other components take writes and
// it verifies.
func TestComponentNamedLikeAnIndexFileListedBefore(t *testing.T) {
	dir, root := testDirs(t)
	r, ctx := testRepo(t, root), context.Background()
	if _, err := r.Publish(ctx, "s", "main/x", []Package{pkgOf(t, testDeb(t, dir, "app", "1.0-1", "amd64", "app"))}); err != nil {
		t.Fatal(err)
	}
	// Make it what an earlier updeb wrote for --component main/by-hash.
	gen := filepath.Join(root, "dists/.gen/s/1")
	must(t, os.Rename(filepath.Join(gen, "main/x"), filepath.Join(gen, "main/by-hash")))
	release := bytes.ReplaceAll(mustRead(t, filepath.Join(gen, "Release")), []byte("main/x"), []byte("main/by-hash"))
	rel, err := parseRelease(release, "Release")
	must(t, err)
	inRelease, err := testSigner(t).ClearSign(release, rel.date)
	must(t, err)
	detached, err := testSigner(t).DetachSign(release, rel.date)
	must(t, err)
	for name, data := range map[string][]byte{"Release": release, "InRelease": inRelease, "Release.gpg": detached,
		settingsFile: bytes.ReplaceAll(mustRead(t, filepath.Join(gen, settingsFile)), []byte(`"main/x"`), []byte(`"main/by-hash"`))} {
		must(t, os.WriteFile(filepath.Join(gen, name), data, 0o644))
	}
	if _, err := r.Publish(ctx, "s", "main", []Package{pkgOf(t, testDeb(t, dir, "other", "1.0-1", "amd64", "other"))}); err != nil {
		t.Fatalf("a publish into main of a suite with main/by-hash: %v", err)
	}
	checks, err := r.Verify(ctx, "s", clientKeyring(t, root), verifyNow)
	must(t, err)
	if len(checks) != 1 || len(checks[0].Findings) != 0 || checks[0].Packages != 2 {
		t.Errorf("verify: %+v", checks)
	}
}
