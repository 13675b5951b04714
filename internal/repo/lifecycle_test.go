package repo

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/testkit/testenv"
	"github.com/updeb/updeb/pkg/control"
)

// testDirs returns a scratch folder for .debs and a repository folder in it;
// dpkg-deb makes the test packages.
func testDirs(t *testing.T) (dir, root string) {
	t.Helper()
	testenv.RequireTool(t, "dpkg-deb")
	dir = t.TempDir()
	return dir, filepath.Join(dir, "repo")
}

// realRepo is a repository on the real clock (apt checks Date and
// Valid-Until against it), created with the test settings.
func realRepo(t *testing.T, root string, change SettingsChange, signer *Signer) *Repo {
	t.Helper()
	if signer == nil {
		signer = testSigner(t)
	}
	return Open(root, Options{Settings: change, Signer: signer, Logger: slog.New(slog.DiscardHandler)})
}

// newSigner returns a signer with a new Ed25519 key, other than the test key.
func newSigner(t *testing.T, name string) *Signer {
	t.Helper()
	gen, err := GenerateKey(name+" key", name+"@example.com", Ed25519, time.Unix(1700000000, 0), rand.Reader)
	must(t, err)
	s, err := ReadSigner(bytes.NewReader(gen.SecretArmored), name)
	must(t, err)
	return s
}

// madison returns the versions of name apt sees, in apt's order (newest,
// the candidate, first).
func (a *aptClient) madison(name string) []string {
	a.t.Helper()
	out, err := a.run("apt-cache", "madison", name)
	if err != nil {
		a.t.Fatalf("apt-cache madison %s: %v\n%s", name, err, out)
	}
	var vs []string
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Split(line, "|"); len(f) >= 2 && strings.TrimSpace(f[0]) == name {
			vs = append(vs, strings.TrimSpace(f[1]))
		}
	}
	return vs
}

func (a *aptClient) wantVersions(name string, want ...string) {
	a.t.Helper()
	sort.Strings(want)
	if got := slices.Sorted(slices.Values(a.madison(name))); !slices.Equal(got, want) {
		a.t.Fatalf("apt sees %s at %v, want %v", name, got, want)
	}
}

// listsRelease returns the InRelease apt keeps for suite, parsed.
func (a *aptClient) listsRelease(suite string) *parsedRelease {
	a.t.Helper()
	matches, _ := filepath.Glob(filepath.Join(a.dir, "state/lists", "*_dists_"+suite+"_InRelease"))
	if len(matches) != 1 {
		a.t.Fatalf("apt's lists hold %v for suite %s", matches, suite)
	}
	data, err := os.ReadFile(matches[0])
	must(a.t, err)
	i := bytes.Index(data, []byte("\n\n"))
	j := bytes.Index(data, []byte("\n-----BEGIN PGP SIGNATURE"))
	rel, err := parseRelease(data[i+2:j+1], matches[0])
	must(a.t, err)
	return rel
}

func sha256File(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(name)
	must(t, err)
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// A client that has updated keeps working, with no warning and no error,
// across every operation: a publish without settings, refresh, promote,
// rollback and gc; and it sees what each did.
func TestClientKeepsWorkingAcrossTheRepositoryLife(t *testing.T) {
	t.Parallel() // mostly waiting: for the clock, for apt, for a helper
	dir, root := testDirs(t)
	ctx := context.Background()
	create := realRepo(t, root, SettingsChange{Origin: ptr("Example Org"), Label: ptr("Example"), Architectures: []string{"amd64"}, Keep: ptr(3)}, nil)
	_, err := create.Publish(ctx, "stable", "main", []Package{pkgOf(t, testDeb(t, dir, "app", "1.0-1", "amd64", "v1"))})
	must(t, err)
	a := newAptClient(t, root, "stable", "main")
	a.update()
	a.install("app", "1.0-1", "v1")

	// Later writes give no settings at all: the suite keeps its own.
	r := realRepo(t, root, SettingsChange{}, nil)
	_, err = r.Publish(ctx, "stable", "main", []Package{pkgOf(t, testDeb(t, dir, "app", "1.1-1", "amd64", "v1.1"))})
	must(t, err)
	a.update()
	a.wantVersions("app", "1.0-1", "1.1-1")
	if rel := a.listsRelease("stable"); rel.origin != "Example Org" || rel.label != "Example" {
		t.Fatalf("publish without settings: Origin %q, Label %q", rel.origin, rel.label)
	}

	before := a.listsRelease("stable").date
	_, err = r.Refresh(ctx, nil)
	must(t, err)
	a.update()
	if after := a.listsRelease("stable").date; !after.After(before) {
		t.Fatalf("after refresh apt still has the Release of %v (refreshed: want later)", after)
	}
	a.wantVersions("app", "1.0-1", "1.1-1")

	// Promote from staging: the same pool file, the same bytes.
	staged := testDeb(t, dir, "app", "2.0-1", "amd64", "v2")
	_, err = r.Publish(ctx, "staging", "main", []Package{pkgOf(t, staged)})
	must(t, err)
	_, err = r.Promote(ctx, Place{Suite: "staging"}, Place{Suite: "stable"}, []Selector{{Name: "app", Version: "2.0-1"}})
	must(t, err)
	a.update()
	a.wantVersions("app", "1.0-1", "1.1-1", "2.0-1")
	a.install("app", "2.0-1", "v2")
	stable, err := r.List("stable")
	must(t, err)
	stagingList, err := r.List("staging")
	must(t, err)
	pool := filepath.Join(root, filepath.FromSlash(stagingList[0].Filename))
	if got := sha256File(t, pool); stable[2].SHA256 != got || stagingList[0].SHA256 != got || stable[2].Filename != stagingList[0].Filename || sha256File(t, staged) != got {
		t.Fatalf("promoted entry %+v, staging entry %+v, pool file sha256 %s", stable[2], stagingList[0], got)
	}

	// README's apt preferences for Puppet: pin by origin and component.
	must(t, os.WriteFile(filepath.Join(a.dir, "etc/preferences.d/updeb.pref"),
		[]byte("Explanation: app comes from Example Org's main component\nPackage: app\nPin: release o=Example Org,c=main\nPin-Priority: 990\n"), 0o644))
	if out, err := a.run("apt-cache", "policy", "app"); err != nil || !strings.Contains(out, " 2.0-1 990\n") || !strings.Contains(out, " 1.0-1 990\n") {
		t.Fatalf("apt-cache policy with a pin by origin and component: %v\n%s", err, out)
	}
	must(t, os.Remove(filepath.Join(a.dir, "etc/preferences.d/updeb.pref")))

	// Roll back the promotion: the client sees the earlier packages.
	res, err := r.Rollback(ctx, "stable", 0)
	must(t, err)
	if len(res.Removed) != 1 || res.Removed[0].Version != "2.0-1" || len(res.Added) != 0 {
		t.Fatalf("rollback: %+v", res)
	}
	a.update()
	a.wantVersions("app", "1.0-1", "1.1-1")
	a.install("app", "1.1-1", "v1.1")

	// gc keeps what kept generations (and by-hash) list: 2.0-1 is still
	// staging's, so nothing is removed; every listed package still installs.
	gc, err := r.GC(ctx, false)
	must(t, err)
	a.update()
	a.install("app", "1.0-1", "v1")
	if len(gc.PoolFiles) != 0 {
		t.Fatalf("gc removed %v, which staging lists", gc.PoolFiles)
	}
	hist, err := r.History("stable")
	must(t, err)
	var ops []string
	for _, h := range hist {
		ops = append(ops, h.Operation)
	}
	if want := []string{"publish", "publish", "refresh", "promote", "rollback"}; !slices.Equal(ops, want) {
		t.Fatalf("history of stable: %v, want %v", ops, want)
	}
	if h := hist[3]; h.From != "staging generation 1" || len(h.Added) != 1 || h.Added[0].SHA256 != stagingList[0].SHA256 {
		t.Fatalf("the promotion's record: %+v", h)
	}
}

// Publishes in quick succession date every Release at or before the clock
// (apt refuses a Release from the future: "not valid yet"), and a client
// that updates right after each one, in the same second, sees every one.
func TestQuickPublishesNeverAheadOfTheClock(t *testing.T) {
	t.Parallel() // mostly waiting: for the clock, for apt, for a helper
	dir, root := testDirs(t)
	ctx := context.Background()
	r := realRepo(t, root, testSettings("amd64"), nil)
	deb := testDeb(t, dir, "app", "0-1", "amd64", "v0")
	_, err := r.Publish(ctx, "s", "main", []Package{pkgOf(t, deb)})
	must(t, err)
	a := newAptClient(t, root, "s", "main")
	a.update()
	want := []string{"0-1"}
	for i := 1; i <= 20; i++ {
		version := fmt.Sprintf("%d-1", i)
		_, err := r.Publish(ctx, "s", "main", []Package{pkgOf(t, testDeb(t, dir, "app", version, "amd64", "v"+version))})
		must(t, err)
		a.update()
		want = append(want, version)
		a.wantVersions("app", want...)
		if date := a.listsRelease("s").date; date.After(time.Now()) {
			t.Fatalf("publish %d: Release Date %v is ahead of the clock", i, date)
		}
	}
}

// Valid-Until is renewed by refresh, and apt sees it: an expired suite is
// refused, and accepted once refreshed.
func TestRefreshRenewsValidUntilForApt(t *testing.T) {
	t.Parallel() // mostly waiting: for the clock, for apt, for a helper
	dir, root := testDirs(t)
	ctx := context.Background()
	deb := pkgOf(t, testDeb(t, dir, "app", "1.0-1", "amd64", "v1"))
	for _, tt := range []struct {
		suite   string
		age     time.Duration
		expired bool
	}{{"fresh", 90 * time.Minute, false}, {"stale", 3 * time.Hour, true}} {
		past := Open(root, Options{Settings: SettingsChange{Architectures: []string{"amd64"}, ValidFor: ptr(2 * time.Hour)}, Signer: testSigner(t),
			Now: func() time.Time { return time.Now().Add(-tt.age) }, Logger: slog.New(slog.DiscardHandler)})
		_, err := past.Publish(ctx, tt.suite, "main", []Package{deb})
		must(t, err)
		a := newAptClient(t, root, tt.suite, "main")
		if out, err := a.run("apt-get", "update", "-q"); tt.expired != strings.Contains(out, "is expired") || tt.expired != (err != nil) {
			t.Fatalf("%s: apt-get update before refresh (expired: %v): %v\n%s", tt.suite, tt.expired, err, out)
		}
		_, err = realRepo(t, root, SettingsChange{}, nil).Refresh(ctx, []string{tt.suite})
		must(t, err)
		a.update()
		rel := a.listsRelease(tt.suite)
		if left := time.Until(rel.validUntil); left < 110*time.Minute || left > 2*time.Hour {
			t.Fatalf("%s: after refresh apt has Valid-Until %v (%v from now), want 2h from now", tt.suite, rel.validUntil, left)
		}
		a.install("app", "1.0-1", "v1")
	}
}

// A timer refreshing every suite keeps refreshing the healthy ones when one
// cannot be refreshed (here a suite signed by another key, which refresh
// must not drop): apt sees the healthy suite's new Valid-Until, the other
// suite is unchanged, and the error names it.
func TestRefreshGoesOnPastAFailingSuite(t *testing.T) {
	t.Parallel() // mostly waiting: for the clock, for apt
	dir, root := testDirs(t)
	ctx := context.Background()
	deb := pkgOf(t, testDeb(t, dir, "app", "1.0-1", "amd64", "v1"))
	other := newSigner(t, "other")
	// "alpha" sorts first, so a refresh that stopped at the first failure
	// would never reach "beta".
	for suite, signer := range map[string]*Signer{"alpha": other, "beta": testSigner(t)} {
		past := Open(root, Options{Settings: SettingsChange{Architectures: []string{"amd64"}, ValidFor: ptr(2 * time.Hour)}, Signer: signer,
			Now: func() time.Time { return time.Now().Add(-90 * time.Minute) }, Logger: slog.New(slog.DiscardHandler)})
		_, err := past.Publish(ctx, suite, "main", []Package{deb})
		must(t, err)
	}
	a := newAptClient(t, root, "beta", "main")
	must(t, os.WriteFile(filepath.Join(a.dir, "keyring.gpg"), testKey.PublicBinary, 0o644))
	a.update()
	alphaBefore, err := os.Readlink(filepath.Join(root, "dists", "alpha"))
	must(t, err)

	res, err := realRepo(t, root, SettingsChange{}, nil).Refresh(ctx, nil)
	var fc *FieldChangeError
	if !errors.As(err, &fc) || fc.Suite != "alpha" {
		t.Fatalf("refresh of every suite: %v, want suite alpha's refused key change", err)
	}
	if len(res) != 1 || res[0].Suite != "beta" || res[0].Generation != 2 {
		t.Fatalf("refresh of every suite refreshed %+v, want beta's generation 2", res)
	}
	if after, _ := os.Readlink(filepath.Join(root, "dists", "alpha")); after != alphaBefore {
		t.Fatalf("the refused suite alpha moved from %s to %s", alphaBefore, after)
	}
	a.update()
	if left := time.Until(a.listsRelease("beta").validUntil); left < 110*time.Minute || left > 2*time.Hour {
		t.Fatalf("after refresh apt has beta valid for %v more, want 2h", left)
	}
	a.install("app", "1.0-1", "v1")
}

// Suites signed by different keys (a staging key, a production key) all
// verify, for a new client, with the one keyring at the repository's root,
// whichever suite was written last; a key no live suite uses any longer
// leaves it. A suite whose live generation predates the stored keys keeps
// its keys in the keyring.
func TestKeyringServesEverySuite(t *testing.T) {
	t.Parallel() // mostly waiting: for the clock, for apt
	dir, root := testDirs(t)
	ctx := context.Background()
	deb := pkgOf(t, testDeb(t, dir, "app", "1.0-1", "amd64", "v1"))
	stagingKey := newSigner(t, "staging")
	newClients := func(when string) {
		t.Helper()
		for _, suite := range []string{"production", "staging"} {
			a := newAptClient(t, root, suite, "main") // trusts archive-keyring.gpg as it is now
			if out, err := a.run("apt-get", "update", "-q"); err != nil || strings.Contains(out, "W: ") || strings.Contains(out, "E: ") {
				t.Fatalf("%s: a new client of %s with the repository's keyring: %v\n%s", when, suite, err, out)
			}
		}
	}
	keyring := func() []string {
		t.Helper()
		fps := keyringFingerprints(t, mustRead(t, filepath.Join(root, "archive-keyring.gpg")))
		sort.Strings(fps)
		return fps
	}
	_, err := realRepo(t, root, testSettings("amd64"), nil).Publish(ctx, "production", "main", []Package{deb})
	must(t, err)
	_, err = realRepo(t, root, testSettings("amd64"), stagingKey).Publish(ctx, "staging", "main", []Package{deb})
	must(t, err)
	newClients("after publishing to staging")
	_, err = realRepo(t, root, SettingsChange{}, nil).Refresh(ctx, []string{"production"})
	must(t, err)
	newClients("after refreshing production")

	// A live generation without its keys file (written by an older updeb):
	// its keys stay, taken from the keyring as it was.
	must(t, os.Remove(filepath.Join(root, "dists/staging", keysFile)))
	_, err = realRepo(t, root, SettingsChange{}, nil).Refresh(ctx, []string{"production"})
	must(t, err)
	newClients("after refreshing production, staging's keys file gone")

	// Staging moves to the production key: the staging key leaves the keyring.
	_, err = realRepo(t, root, SettingsChange{AllowFieldChange: true}, nil).Refresh(ctx, []string{"staging"})
	must(t, err)
	if got, want := keyring(), testSigner(t).Fingerprints(); !slices.Equal(got, want) {
		t.Fatalf("with every suite signed by %v the keyring holds %v", want, got)
	}
	newClients("after staging dropped its key")
}

// TestKeyringKeepsTheKeysOfASuiteWithoutItsLink: a suite whose link
// dists/SUITE is lost (a copy that leaves symbolic links out) keeps the keys
// it is signed by in archive-keyring.gpg through writes into other suites:
// they were dropped, and once the link was restored (the ln -sfn every
// command gives), a new client given the keyring meanwhile refused the
// suite (NO_PUBKEY). A new suite's first write killed before its switch
// was never live, and its key (one that leaked since, say) is none of the
// keyring's.
func TestKeyringKeepsTheKeysOfASuiteWithoutItsLink(t *testing.T) {
	dir, root := testDirs(t)
	ctx := context.Background()
	deb := pkgOf(t, testDeb(t, dir, "app", "1.0-1", "amd64", "v1"))
	_, err := realRepo(t, root, testSettings("amd64"), nil).Publish(ctx, "production", "main", []Package{deb})
	must(t, err)
	_, err = realRepo(t, root, testSettings("amd64"), newSigner(t, "staging")).Publish(ctx, "staging", "main", []Package{deb})
	must(t, err)
	link := filepath.Join(root, "dists", "staging")
	target, err := os.Readlink(link)
	must(t, err)
	must(t, os.Remove(link))
	_, err = realRepo(t, root, SettingsChange{}, nil).Refresh(ctx, []string{"production"})
	must(t, err)
	must(t, os.Symlink(target, link))
	a := newAptClient(t, root, "staging", "main") // trusts archive-keyring.gpg as the refresh left it
	if out, err := a.run("apt-get", "update", "-q"); err != nil || strings.Contains(out, "W: ") || strings.Contains(out, "E: ") {
		t.Fatalf("a new client of staging, its link restored, with the keyring of a write while it was lost: %v\n%s", err, out)
	}

	// The first write of suite "new", by another key, killed before its
	// switch: its link is still the one it switches with (makeLink).
	leaked := newSigner(t, "leaked")
	_, err = realRepo(t, root, testSettings("amd64"), leaked).Publish(ctx, "new", "main", []Package{deb})
	must(t, err)
	must(t, os.Rename(filepath.Join(root, "dists", "new"), filepath.Join(root, "dists", ".new.link")))
	_, err = realRepo(t, root, SettingsChange{}, nil).Refresh(ctx, []string{"production"})
	must(t, err)
	if got := keyringFingerprints(t, mustRead(t, filepath.Join(root, "archive-keyring.gpg"))); slices.Contains(got, leaked.Fingerprints()[0]) {
		t.Errorf("the keyring holds the key of a suite never live: %q", got)
	}
}

// TestNoOpWriteRepairsTheKeyring: a write whose keyring failed after its
// switch (a full disk, kill -9) leaves archive-keyring.gpg missing, or
// holding other keys than the suites are signed by; 'repo verify' sends the
// operator to publish, and publishing (or promoting) what is already there,
// which writes no generation, left it so: every new client given it
// refused the repository. Now such a write writes the keyring again, and
// leaves an intact one as it is.
func TestNoOpWriteRepairsTheKeyring(t *testing.T) {
	dir, root := testDirs(t)
	ctx := context.Background()
	deb := pkgOf(t, testDeb(t, dir, "app", "1.0-1", "amd64", "v1"))
	r := realRepo(t, root, testSettings("amd64"), nil)
	_, err := r.Publish(ctx, "s", "main", []Package{deb})
	must(t, err)
	_, err = r.Promote(ctx, Place{Suite: "s"}, Place{Suite: "t"}, nil)
	must(t, err)
	keyring, armored := filepath.Join(root, "archive-keyring.gpg"), filepath.Join(root, "archive-keyring.asc")
	other, otherArmored, err := newSigner(t, "other").PublicKey()
	must(t, err)
	for _, tc := range []struct {
		name   string
		damage func()
		write  func() error
	}{
		{"missing, a publish", func() { must(t, os.Remove(keyring)); must(t, os.Remove(armored)) },
			func() error { _, err := r.Publish(ctx, "s", "main", []Package{deb}); return err }},
		{"another key's, a promote", func() {
			must(t, os.WriteFile(keyring, other, 0o644))
			must(t, os.WriteFile(armored, otherArmored, 0o644))
		},
			func() error { _, err := r.Promote(ctx, Place{Suite: "s"}, Place{Suite: "t"}, nil); return err }},
	} {
		tc.damage()
		must(t, tc.write())
		for _, suite := range []string{"s", "t"} {
			a := newAptClient(t, root, suite, "main") // trusts archive-keyring.gpg as it is now
			if out, err := a.run("apt-get", "update", "-q"); err != nil || strings.Contains(out, "W: ") || strings.Contains(out, "E: ") {
				t.Fatalf("keyring %s: a new client of %s with the repository's keyring: %v\n%s", tc.name, suite, err, out)
			}
		}
		if got := mustRead(t, armored); !bytes.Contains(got, []byte("BEGIN PGP PUBLIC KEY BLOCK")) || bytes.Equal(got, otherArmored) {
			t.Fatalf("keyring %s: archive-keyring.asc not written again:\n%s", tc.name, got)
		}
	}
	before, err := os.Stat(keyring)
	must(t, err)
	_, err = r.Publish(ctx, "s", "main", []Package{deb})
	must(t, err)
	if after, err := os.Stat(keyring); err != nil || !os.SameFile(before, after) {
		t.Errorf("a publish with nothing new wrote an intact keyring again (%v)", err)
	}
	// Its bytes intact, but readable by its owner only (a restore under
	// umask 077): a web server running as another user answers 403.
	must(t, os.Chmod(keyring, 0o600))
	_, err = r.Publish(ctx, "s", "main", []Package{deb})
	must(t, err)
	if fi, err := os.Stat(keyring); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("a keyring of mode 0600 left so by a write (%v)", err)
	}
}

// A write to one suite while another's live generation is damaged (its
// Release edited) keeps the damaged suite's key in the repository's
// keyring: it was dropped, and a client given the keyring meanwhile
// refused that suite (NO_PUBKEY) once it was repaired.
func TestKeyringKeepsTheKeysOfADamagedSuite(t *testing.T) {
	t.Parallel() // mostly waiting: for the clock, for apt
	dir, root := testDirs(t)
	ctx := context.Background()
	deb := pkgOf(t, testDeb(t, dir, "app", "1.0-1", "amd64", "v1"))
	_, err := realRepo(t, root, testSettings("amd64"), nil).Publish(ctx, "production", "main", []Package{deb})
	must(t, err)
	stagingKey := newSigner(t, "staging")
	_, err = realRepo(t, root, testSettings("amd64"), stagingKey).Publish(ctx, "staging", "main", []Package{deb})
	must(t, err)
	release := filepath.Join(root, "dists/production/Release")
	good := mustRead(t, release)
	must(t, os.WriteFile(release, append(slices.Clone(good), "X-Edited: yes\n"...), 0o644))
	_, err = realRepo(t, root, SettingsChange{}, stagingKey).Refresh(ctx, []string{"staging"})
	must(t, err)
	must(t, os.WriteFile(release, good, 0o644))
	if fps := keyringFingerprints(t, mustRead(t, filepath.Join(root, "archive-keyring.gpg"))); !slices.Contains(fps, testSigner(t).Fingerprints()[0]) {
		t.Fatalf("the keyring lost production's key: %v", fps)
	}
	a := newAptClient(t, root, "production", "main") // trusts archive-keyring.gpg as it is now
	if out, err := a.run("apt-get", "update", "-q"); err != nil || strings.Contains(out, "W: ") || strings.Contains(out, "E: ") {
		t.Fatalf("a new client of the repaired production with the repository's keyring: %v\n%s", err, out)
	}
}

// A change clients refuse is refused, with what they will do; allowed, apt
// indeed refuses it. Dropping a signing key is refused the same way.
func TestFieldChangeRefused(t *testing.T) {
	dir, root := testDirs(t)
	ctx := context.Background()
	_, err := realRepo(t, root, SettingsChange{Origin: ptr("Example Org"), Label: ptr("Example"), Architectures: []string{"amd64"}}, nil).
		Publish(ctx, "s", "main", []Package{pkgOf(t, testDeb(t, dir, "app", "1.0-1", "amd64", "v1"))})
	must(t, err)
	a := newAptClient(t, root, "s", "main")
	a.update()
	before := snapshot(t, root)
	next := pkgOf(t, testDeb(t, dir, "app", "1.1-1", "amd64", "v1.1"))
	for _, change := range []SettingsChange{{Origin: ptr("")}, {Label: ptr("Other")}, {Codename: ptr("trixie")}, {Origin: ptr("Other"), Description: ptr("fine")}} {
		_, err := realRepo(t, root, change, nil).Publish(ctx, "s", "main", []Package{next})
		var fc *FieldChangeError
		if !errors.As(err, &fc) || len(fc.Changes) != 1 || !strings.Contains(err.Error(), "--allow-releaseinfo-change-") {
			t.Fatalf("change %+v: got %v, want one refused field saying what clients do", change, err)
		}
	}
	// A value the Release file cannot carry is invalid input, whether or
	// not the change is allowed.
	for _, change := range []SettingsChange{{Origin: ptr("a\nSuite: evil")}, {Label: ptr(" padded")}, {Codename: ptr("book worm")},
		{Description: ptr("bell\a")}, {Origin: ptr("x\ty"), AllowFieldChange: true}} {
		if _, err := realRepo(t, root, change, nil).Publish(ctx, "s", "main", []Package{next}); !errors.Is(err, ErrInvalid) {
			t.Fatalf("change %+v: got %v, want %v", change, err, ErrInvalid)
		}
	}
	other, err := GenerateKey("other", "other@example.com", Ed25519, time.Unix(1700000000, 0), rand.Reader)
	must(t, err)
	otherSigner, err := ReadSigner(bytes.NewReader(other.SecretArmored), "other")
	must(t, err)
	var fc *FieldChangeError
	if _, err := realRepo(t, root, SettingsChange{}, otherSigner).Publish(ctx, "s", "main", []Package{next}); !errors.As(err, &fc) || !strings.Contains(err.Error(), "NO_PUBKEY") {
		t.Fatalf("signing with another key: %v, want a refused change naming NO_PUBKEY", err)
	}
	if after := snapshot(t, root); !reflect.DeepEqual(before, after) {
		t.Fatal("a refused change changed the repository")
	}

	// Allowed, apt does what the message says.
	_, err = realRepo(t, root, SettingsChange{Origin: ptr("Other"), AllowFieldChange: true}, nil).Publish(ctx, "s", "main", []Package{next})
	must(t, err)
	out, err := a.run("apt-get", "update", "-q")
	if err == nil || !strings.Contains(out, "changed its 'Origin' value from 'Example Org' to 'Other'") {
		t.Fatalf("apt-get update after an allowed Origin change: %v\n%s", err, out)
	}
}

// A settings file whose Origin, Label or Codename is not the signed
// Release's (edited by hand) is refused naming the file, the repository
// unchanged: a refresh signed the edited value, without the refusal a flag
// gets, and apt then refused the suite on every client. Put back, the
// suite refreshes and apt updates.
func TestEditedSettingsRefused(t *testing.T) {
	dir, root := testDirs(t)
	ctx := context.Background()
	r := realRepo(t, root, SettingsChange{Origin: ptr("Example Org"), Label: ptr("Example"), Architectures: []string{"amd64"}}, nil)
	_, err := r.Publish(ctx, "s", "main", []Package{pkgOf(t, testDeb(t, dir, "app", "1.0-1", "amd64", "v1"))})
	must(t, err)
	a := newAptClient(t, root, "s", "main")
	a.update()
	timer := realRepo(t, root, SettingsChange{}, nil) // a refresh timer's: no flags
	settings := filepath.Join(root, "dists/.gen/s/1", settingsFile)
	good, err := os.ReadFile(settings)
	must(t, err)
	for _, edit := range []string{`"origin": "Example Org"`, `"label": "Example"`, `"codename": "s"`} {
		field, _, _ := strings.Cut(strings.Trim(edit, `"`), `"`)
		edited := strings.Replace(string(good), edit, `"`+field+`": "Other"`, 1)
		if edited == string(good) {
			t.Fatalf("no %s in the settings:\n%s", edit, good)
		}
		must(t, os.WriteFile(settings, []byte(edited), 0o644))
		before := snapshot(t, root)
		_, err := timer.Refresh(ctx, nil)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), settings) || !strings.Contains(err.Error(), `"Other"`) {
			t.Fatalf("settings with %s edited: %v, want ErrInvalid naming %s", field, err, settings)
		}
		if after := snapshot(t, root); !reflect.DeepEqual(before, after) {
			t.Fatalf("settings with %s edited: the refused refresh changed the repository", field)
		}
	}
	must(t, os.WriteFile(settings, good, 0o644))
	_, err = timer.Refresh(ctx, nil)
	must(t, err)
	a.update()
}

// During a key rotation the suite is signed by both keys: clients trusting
// either update without a warning. Dropping the old key needs
// --allow-field-change, after which only clients with the new key update.
func TestKeyRotationWithTwoKeys(t *testing.T) {
	t.Parallel() // mostly waiting: for the clock, for apt, for a helper
	dir, root := testDirs(t)
	ctx := context.Background()
	oldKey := testSigner(t)
	_, err := realRepo(t, root, testSettings("amd64"), oldKey).Publish(ctx, "s", "main", []Package{pkgOf(t, testDeb(t, dir, "app", "1.0-1", "amd64", "v1"))})
	must(t, err)
	oldClient := newAptClient(t, root, "s", "main")
	oldClient.update()

	gen, newKey, both := rotationKeys(t, oldKey)
	_, err = realRepo(t, root, SettingsChange{}, both).Refresh(ctx, nil)
	must(t, err)
	oldClient.update()
	newClient := newAptClient(t, root, "s", "main") // fetches archive-keyring.gpg: both keys
	must(t, os.WriteFile(filepath.Join(newClient.dir, "keyring.gpg"), gen.PublicBinary, 0o644))
	newClient.update()
	newClient.install("app", "1.0-1", "v1")

	var fc *FieldChangeError
	if _, err := realRepo(t, root, SettingsChange{}, newKey).Refresh(ctx, nil); !errors.As(err, &fc) {
		t.Fatalf("dropping the old key: %v, want a refused change", err)
	}
	_, err = realRepo(t, root, SettingsChange{AllowFieldChange: true}, newKey).Refresh(ctx, nil)
	must(t, err)
	newClient.update()
	if out, err := oldClient.run("apt-get", "update", "-q"); err == nil && !strings.Contains(out, "NO_PUBKEY") {
		t.Fatalf("a client trusting only the dropped key updated without complaint:\n%s", out)
	}
}

// Promotion copies the very entry (same pool file and bytes), refuses a
// version the target has with other bytes without changing anything, and
// reports names it cannot find.
func TestPromote(t *testing.T) {
	dir, root := testDirs(t)
	ctx := context.Background()
	clock := testClock()
	r := Open(root, Options{Settings: testSettings("amd64", "arm64"), Signer: testSigner(t), Now: clock, Logger: slog.New(slog.DiscardHandler)})
	bare := Open(root, Options{Signer: testSigner(t), Now: clock, Logger: slog.New(slog.DiscardHandler)})
	a1 := testDeb(t, dir, "app", "1.0-1", "amd64", "app1")
	tool := testDeb(t, dir, "tool", "3-1", "all", "tool3")
	_, err := r.Publish(ctx, "staging", "main", []Package{pkgOf(t, a1), pkgOf(t, tool)})
	must(t, err)
	_, err = r.Publish(ctx, "staging", "extra", []Package{pkgOf(t, testDeb(t, dir, "other", "1", "amd64", "o"))})
	must(t, err)

	// Every package of one component, into another component of a new
	// suite, which starts with the source's settings.
	res, err := bare.Promote(ctx, Place{"staging", "main"}, Place{"prod", "component/k8s"}, nil)
	must(t, err)
	if len(res.Added) != 2 || res.Generation != 1 {
		t.Fatalf("promote all of staging/main: %+v", res)
	}
	if rel, err := os.ReadFile(filepath.Join(root, "dists/prod/Release")); err != nil || !strings.Contains(string(rel), "Origin: updeb-test\nLabel: updeb test\nSuite: prod\nCodename: prod\n") {
		t.Fatalf("a new suite made by promotion: %v\n%s", err, rel)
	}
	stanzas := func(suite, comp string) map[string]string {
		out := map[string]string{}
		data, err := os.ReadFile(filepath.Join(root, "dists", suite, comp, "binary-amd64/Packages"))
		must(t, err)
		ps, err := control.Parse(bytes.NewReader(data), suite)
		must(t, err)
		for _, p := range ps {
			out[p.Value("Package")] = string(p.Bytes())
		}
		return out
	}
	if from, to := stanzas("staging", "main"), stanzas("prod", "component/k8s"); !reflect.DeepEqual(from, to) {
		t.Fatalf("promoted stanzas differ:\n%v\n%v", from, to)
	}
	// Again: nothing new, nothing written.
	res, err = r.Promote(ctx, Place{"staging", "main"}, Place{"prod", "component/k8s"}, []Selector{{Name: "app"}})
	must(t, err)
	if len(res.Added) != 0 || len(res.Unchanged) != 1 || res.Generation != 1 {
		t.Fatalf("promoting again: %+v", res)
	}

	// Every component, each into its own.
	res, err = r.Promote(ctx, Place{"staging", ""}, Place{"prod", ""}, nil)
	must(t, err)
	if len(res.Added) != 3 || res.Generation != 2 {
		t.Fatalf("promote all of staging: %+v", res)
	}
	if got := stanzas("prod", "extra"); len(got) != 1 || got["other"] != stanzas("staging", "extra")["other"] {
		t.Fatalf("prod/extra after promoting every component: %v", got)
	}
	var before map[string]string
	for _, tt := range []struct {
		sel  []Selector
		from Place
		want error
	}{
		{[]Selector{{Name: "nope"}}, Place{"staging", ""}, ErrNotFound},
		{[]Selector{{Name: "app", Version: "9"}}, Place{"staging", ""}, ErrNotFound},
		{nil, Place{"missing", ""}, ErrNotFound},
		{nil, Place{"staging", "none"}, ErrNotFound},
		{nil, Place{"prod", "component/k8s"}, ErrInvalid},
	} {
		before = snapshot(t, root)
		_, err := r.Promote(ctx, tt.from, Place{"prod", "component/k8s"}, tt.sel)
		if !errors.Is(err, tt.want) {
			t.Errorf("promote %v from %v: %v, want %v", tt.sel, tt.from, err, tt.want)
		}
		if after := snapshot(t, root); !reflect.DeepEqual(before, after) {
			t.Errorf("a refused promotion changed the repository")
		}
	}
}

// A suite made by promote takes the Codename a publish would give it (the
// flag's, else the config's codename, else its name), as the source's
// other settings: it was named after the suite, so with the config's
// codename a client of the new suite pinning that codename got nothing
// from it, and each write to it then warned that the config's codename was
// not applied, advising --codename, which the write refuses (apt clients
// reject a changed Codename).
func TestPromoteIntoANewSuiteTakesTheCodenameOfPublish(t *testing.T) {
	_, root := testDirs(t)
	ctx := context.Background()
	var log bytes.Buffer
	r := Open(root, Options{Settings: testSettings("amd64"), Defaults: SettingsChange{Codename: ptr("bookworm-wikimedia")},
		Signer: testSigner(t), Now: testClock(), Logger: slog.New(slog.NewTextHandler(&log, nil))})
	publish := func(suite, version string) {
		t.Helper()
		_, err := r.Publish(ctx, suite, "main", []Package{pkgOf(t, testDeb(t, t.TempDir(), "app", version, "amd64", "app "+version))})
		must(t, err)
	}
	publish("staging", "1.0-1")
	_, err := r.Promote(ctx, Place{Suite: "staging"}, Place{Suite: "production"}, nil)
	must(t, err)
	// The client takes packages of the codename it follows, and of no
	// other release of the repository.
	a := newAptClient(t, root, "production", "main")
	must(t, os.WriteFile(filepath.Join(a.dir, "etc/preferences"), []byte(
		"Package: *\nPin: release n=bookworm-wikimedia\nPin-Priority: 990\n\nPackage: *\nPin: release o=updeb-test\nPin-Priority: -1\n"), 0o644))
	// apt's candidate, as 'apt-get install app' or an upgrade takes it
	// (an explicit app=VERSION passes over a pin).
	upgrade := func(want string) {
		t.Helper()
		a.update()
		if out, err := a.run("apt-get", "install", "-y", "-q", "--no-install-recommends", "app"); err != nil {
			t.Fatalf("apt-get install app, pinned to Codename bookworm-wikimedia: %v\n%s", err, out)
		}
		a.wantInstalled("app", want)
	}
	upgrade("1.0-1")
	publish("production", "2.0-1")
	upgrade("2.0-1")
	// Promoted again: into it, and from it into another new suite.
	publish("staging", "3.0-1")
	_, err = r.Promote(ctx, Place{Suite: "staging"}, Place{Suite: "production"}, []Selector{{Name: "app", Version: "3.0-1"}})
	must(t, err)
	upgrade("3.0-1")
	_, err = r.Promote(ctx, Place{Suite: "production"}, Place{Suite: "archive"}, nil)
	must(t, err)
	publish("archive", "4.0-1")
	for _, suite := range []string{"staging", "production", "archive"} {
		if rel, err := os.ReadFile(filepath.Join(root, "dists", suite, "Release")); err != nil || !strings.Contains(string(rel), "\nSuite: "+suite+"\nCodename: bookworm-wikimedia\n") {
			t.Errorf("suite %s: want Codename bookworm-wikimedia (%v)\n%s", suite, err, rel)
		}
	}
	if strings.Contains(log.String(), "not applied") {
		t.Errorf("a write warned that the config's codename is not applied:\n%s", log.String())
	}
}

// The warning about a config value a suite's stored Origin, Label or
// Codename wins over gives the flags that change it: the flag alone, which
// it advised, is refused, as apt clients that updated from the suite reject
// the change until it is accepted on each (--allow-field-change).
func TestConfigValueNotAppliedSaysHowToChangeAField(t *testing.T) {
	dir, root := testDirs(t)
	ctx := context.Background()
	var log bytes.Buffer
	clock := testClock()
	open := func(change SettingsChange) *Repo {
		return Open(root, Options{Settings: change, Defaults: SettingsChange{Codename: ptr("config-codename")}, Signer: testSigner(t), Now: clock, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	}
	deb := pkgOf(t, testDeb(t, dir, "app", "1.0-1", "amd64", "v1"))
	_, err := open(SettingsChange{Codename: ptr("flag-codename")}).Publish(ctx, "s", "main", []Package{deb})
	must(t, err)
	log.Reset()
	_, err = open(SettingsChange{}).Refresh(ctx, nil)
	must(t, err)
	if want := "give --codename with --allow-field-change to change it"; !strings.Contains(log.String(), want) {
		t.Fatalf("the warning does not say %q:\n%s", want, log.String())
	}
	var fe *FieldChangeError
	if _, err := open(SettingsChange{Codename: ptr("config-codename")}).Refresh(ctx, nil); !errors.As(err, &fe) {
		t.Fatalf("--codename alone: %v, want a FieldChangeError", err)
	}
	if _, err := open(SettingsChange{Codename: ptr("config-codename"), AllowFieldChange: true}).Refresh(ctx, nil); err != nil {
		t.Fatalf("--codename with --allow-field-change: %v", err)
	}
}

// Promoting a version the target lists with other bytes is refused (exit 1
// at the CLI) and changes nothing.
func TestPromoteRefusesOtherBytes(t *testing.T) {
	dir, root := testDirs(t)
	ctx := context.Background()
	r := testRepo(t, root)
	_, err := r.Publish(ctx, "staging", "one", []Package{pkgOf(t, testDeb(t, dir, "app", "1", "amd64", "staging bytes"))})
	must(t, err)
	_, err = r.Publish(ctx, "prod", "two", []Package{pkgOf(t, testDeb(t, t.TempDir(), "app", "1", "amd64", "prod bytes"))})
	must(t, err)
	before := snapshot(t, root)
	var ce *ConflictError
	if _, err := r.Promote(ctx, Place{"staging", "one"}, Place{"prod", "two"}, nil); !errors.As(err, &ce) || ce.Have == ce.New {
		t.Fatalf("promoting other bytes: %v", err)
	}
	if after := snapshot(t, root); !reflect.DeepEqual(before, after) {
		t.Fatal("a refused promotion changed the repository")
	}
}

// A version has one build in a suite, whichever component lists it: other
// bytes for it in another component, by publish or by promote, are refused
// (exit 1 at the CLI) with the repository unchanged; the same bytes are
// allowed, and apt, using both components, then sees one build of it.
func TestOneBuildPerVersionAcrossComponents(t *testing.T) {
	t.Parallel() // mostly waiting: for the clock, for apt
	dir, root := testDirs(t)
	ctx := context.Background()
	r := realRepo(t, root, testSettings("amd64"), nil)
	debA, debB, shaA, shaB := twoBuilds(t, dir, "main build", "other build")
	_, err := r.Publish(ctx, "production", "main", []Package{pkgOf(t, debA)})
	must(t, err)
	_, err = r.Publish(ctx, "production", "extra", []Package{pkgOf(t, testDeb(t, dir, "tool", "1", "amd64", "tool"))})
	must(t, err)
	_, err = r.Publish(ctx, "staging", "beta", []Package{pkgOf(t, debB)})
	must(t, err)
	a := newAptClient(t, root, "production", "main extra")
	a.update()

	refused := func(what string, op func() error, have, into string, sums ...string) {
		t.Helper()
		before := snapshot(t, root)
		err := op()
		var ce *ConflictError
		if !errors.As(err, &ce) || ce.Suite != "production" || ce.Component != have || ce.Into != into {
			t.Fatalf("%s: got %v, want a *ConflictError between production/%s and production/%s", what, err, have, into)
		}
		for _, s := range append([]string{"suite production", "component " + have, "component " + into}, sums...) {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s: the message does not say %q: %v", what, s, err)
			}
		}
		if after := snapshot(t, root); !reflect.DeepEqual(before, after) {
			t.Fatalf("%s: a refused write changed the repository", what)
		}
	}
	refused("publish into another component", func() error {
		_, err := r.Publish(ctx, "production", "beta", []Package{pkgOf(t, debB)})
		return err
	}, "main", "beta", shaA, shaB, debB)
	refused("promote into another component", func() error {
		_, err := r.Promote(ctx, Place{"staging", "beta"}, Place{"production", ""}, nil)
		return err
	}, "main", "beta", shaA, shaB, "staging/beta's pool/beta/a/app/app_1-1_amd64.deb")
	refused("promote named into another component", func() error {
		_, err := r.Promote(ctx, Place{"staging", ""}, Place{"production", "other"}, []Selector{{Name: "app", Version: "1-1"}})
		return err
	}, "main", "other", shaA, shaB)
	two, another := testDeb(t, dir, "app", "2-1", "amd64", "two"), testDeb(t, t.TempDir(), "app", "2-1", "amd64", "another two")
	refused("one publish, two builds in two components", func() error {
		_, err := r.PublishComponents(ctx, "production", map[string][]Package{"main": {pkgOf(t, two)}, "other": {pkgOf(t, another)}})
		return err
	}, "main", "other", two, another, sha256File(t, two), sha256File(t, another), "given to one publish")

	// The same bytes in another component: allowed, publish and promote.
	res, err := r.Publish(ctx, "production", "extra", []Package{pkgOf(t, debA)})
	must(t, err)
	if len(res.Added) != 1 || res.Added[0].SHA256 != shaA {
		t.Fatalf("publishing the same bytes into another component: %+v", res)
	}
	pres, err := r.Promote(ctx, Place{"production", "main"}, Place{"production", "other"}, nil)
	must(t, err)
	if len(pres.Added) != 1 || pres.Added[0].Filename != "pool/main/a/app/app_1-1_amd64.deb" {
		t.Fatalf("promoting the same bytes into another component: %+v", pres)
	}
	a = newAptClient(t, root, "production", "main extra other")
	a.update()
	out, err := a.run("apt-cache", "show", "app=1-1")
	if err != nil || strings.Count(out, "SHA256: ") != 1 || !strings.Contains(out, "SHA256: "+shaA) {
		t.Fatalf("apt-cache show app=1-1 with the same bytes in main and extra: want one build, sha256 %s: %v\n%s", shaA, err, out)
	}
	if out, err := a.run("apt-cache", "madison", "app"); err != nil || !strings.Contains(out, "production/main") || !strings.Contains(out, "production/extra") {
		t.Fatalf("apt-cache madison app: want it from both components: %v\n%s", err, out)
	}
	a.install("app", "1-1", "main build")
}

// A rollback changes what the repository offers, not what nodes have: the
// way operations.md says. A node that upgraded to the withdrawn version
// keeps it through apt-get update and (dist-)upgrade (apt never downgrades
// below pin priority 1000); an exact version at Puppet's command line (the
// apt provider adds --force-yes when ensure names a version) takes it back,
// and by hand apt-get -y needs --allow-downgrades. The docs' pin by origin
// and a component with a slash matches, on two architectures.
func TestRollbackLeavesNodesOnTheWithdrawnVersion(t *testing.T) {
	t.Parallel() // mostly waiting: for the clock, for apt
	dir, root := testDirs(t)
	ctx := context.Background()
	const comp = "component/kubernetes136"
	r := realRepo(t, root, SettingsChange{Origin: ptr("Wikimedia"), Label: ptr("Wikimedia"), Architectures: []string{"amd64", "arm64"}}, nil)
	publish := func(version, payload string) {
		t.Helper()
		_, err := r.Publish(ctx, "bookworm-wikimedia", comp, []Package{
			pkgOf(t, testDeb(t, dir, "kube", version, "amd64", payload)), pkgOf(t, testDeb(t, dir, "kube", version, "arm64", payload+" arm64"))})
		must(t, err)
	}
	publish("1.36.0-1", "v1")
	a := newAptClient(t, root, "bookworm-wikimedia", comp)
	must(t, os.WriteFile(filepath.Join(a.dir, "etc/preferences.d/example-apt.pref"),
		[]byte("Package: kube\nPin: release o=Wikimedia,c="+comp+"\nPin-Priority: 990\n"), 0o644))
	apt := func(wantOK bool, args ...string) string {
		t.Helper()
		out, err := a.run("apt-get", args...)
		if (err == nil) != wantOK || strings.Contains(out, "E: ") == wantOK {
			t.Fatalf("apt-get %s: %v (want success: %v)\n%s", strings.Join(args, " "), err, wantOK, out)
		}
		return out
	}
	// What Puppet's apt provider runs for ensure => VERSION.
	puppet := func(version string) {
		t.Helper()
		apt(true, "-q", "-y", "-o", "DPkg::Options::=--force-confold", "--force-yes", "install", "kube="+version)
		a.wantInstalled("kube", version)
	}
	a.update()
	if out, err := a.run("apt-cache", "policy", "kube"); err != nil || !strings.Contains(out, " 1.36.0-1 990\n") {
		t.Fatalf("apt-cache policy with the docs' pin on %s: %v\n%s", comp, err, out)
	}
	puppet("1.36.0-1")

	publish("1.36.1-1", "v2")
	a.update()
	if out := apt(true, "-s", "dist-upgrade"); !strings.Contains(out, "Inst kube [1.36.0-1] (1.36.1-1 ") {
		t.Fatalf("apt-get -s dist-upgrade after publishing 1.36.1-1:\n%s", out)
	}
	apt(true, "-q", "-y", "upgrade")
	a.wantInstalled("kube", "1.36.1-1")

	res, err := r.Rollback(ctx, "bookworm-wikimedia", 0)
	must(t, err)
	if len(res.Removed) != 2 || res.Removed[0].Version != "1.36.1-1" {
		t.Fatalf("rollback: %+v", res)
	}
	a.update()
	a.wantVersions("kube", "1.36.0-1")
	for _, args := range [][]string{{"-s", "dist-upgrade"}, {"-q", "-y", "upgrade"}, {"-q", "-y", "dist-upgrade"}} {
		if out := apt(true, args...); !strings.Contains(out, "0 upgraded, 0 newly installed, 0 to remove") || strings.Contains(out, "DOWNGRADED") {
			t.Fatalf("apt-get %s after the rollback: want nothing done\n%s", strings.Join(args, " "), out)
		}
	}
	a.wantInstalled("kube", "1.36.1-1")
	if out := apt(false, "-q", "-y", "install", "kube=1.36.0-1"); !strings.Contains(out, "without --allow-downgrades") {
		t.Fatalf("apt-get -y install of the earlier version without --allow-downgrades:\n%s", out)
	}
	apt(true, "-q", "-y", "--allow-downgrades", "install", "kube=1.36.0-1")
	a.wantInstalled("kube", "1.36.0-1")

	// Undo the rollback (1.36.1-1 is live again: the node upgrades), roll
	// back again, and let Puppet take the node back.
	_, err = r.Rollback(ctx, "bookworm-wikimedia", 0)
	must(t, err)
	a.update()
	a.wantVersions("kube", "1.36.0-1", "1.36.1-1")
	apt(true, "-q", "-y", "upgrade")
	a.wantInstalled("kube", "1.36.1-1")
	_, err = r.Rollback(ctx, "bookworm-wikimedia", 0)
	must(t, err)
	a.update()
	a.wantVersions("kube", "1.36.0-1")
	puppet("1.36.0-1")
}

// A write that adds a signing key to an existing suite warns, naming it:
// the first step of a rotation, or a dropped key put back by a config that
// still names it; writes with the same keys, and a new suite, do not.
func TestAddedSigningKeyWarns(t *testing.T) {
	dir, root := testDirs(t)
	ctx := context.Background()
	oldKey := testSigner(t)
	_, newKey, both := rotationKeys(t, oldKey)
	var log bytes.Buffer
	clock := testClock()
	open := func(s *Signer, change SettingsChange) *Repo {
		return Open(root, Options{Settings: change, Signer: s, Now: clock, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	}
	warned := func() bool {
		defer log.Reset()
		return strings.Contains(log.String(), "now also signed by keys")
	}
	_, err := open(oldKey, SettingsChange{}).Publish(ctx, "s", "main", []Package{pkgOf(t, testDeb(t, dir, "app", "1.0-1", "amd64", "v1"))})
	must(t, err)
	if warned() {
		t.Error("a new suite warned")
	}
	_, err = open(both, SettingsChange{}).Refresh(ctx, nil)
	must(t, err)
	if !warned() {
		t.Error("adding the new key did not warn")
	}
	_, err = open(both, SettingsChange{}).Refresh(ctx, nil)
	must(t, err)
	if warned() {
		t.Error("the same keys warned")
	}
	_, err = open(newKey, SettingsChange{AllowFieldChange: true}).Refresh(ctx, nil)
	must(t, err)
	_, err = open(both, SettingsChange{}).Publish(ctx, "s", "main", []Package{pkgOf(t, testDeb(t, dir, "app", "1.0-2", "amd64", "v2"))})
	must(t, err)
	if !warned() {
		t.Error("the dropped key put back did not warn")
	}
}

// rotationKeys makes a new signing key, and a signer of old and it together
// (the middle of a rotation).
func rotationKeys(t *testing.T, old *Signer) (gen *GeneratedKey, newKey, both *Signer) {
	t.Helper()
	gen, err := GenerateKey("new key", "new@example.com", Ed25519, time.Unix(1700000000, 0), rand.Reader)
	must(t, err)
	newKey, err = ReadSigner(bytes.NewReader(gen.SecretArmored), "new")
	must(t, err)
	both, err = JoinSigners(old, newKey)
	must(t, err)
	return gen, newKey, both
}

// An Origin or Label with a comma, which no apt pin can name (apt splits a
// pin's fields at commas), is warned about when it is set; a write that
// keeps it, and one without a comma, say nothing.
func TestCommaInOriginWarns(t *testing.T) {
	dir, root := testDirs(t)
	ctx := context.Background()
	var log bytes.Buffer
	open := func(change SettingsChange) *Repo {
		return Open(root, Options{Settings: change, Signer: testSigner(t), Now: testClock(), Logger: slog.New(slog.NewTextHandler(&log, nil))})
	}
	warned := func() string {
		defer log.Reset()
		return log.String()
	}
	origin, label := "Example, Inc", "Example"
	_, err := open(SettingsChange{Origin: &origin, Label: &label}).Publish(ctx, "s", "main", []Package{pkgOf(t, testDeb(t, dir, "app", "1.0-1", "amd64", "v1"))})
	must(t, err)
	if got := warned(); !strings.Contains(got, `its Origin \"Example, Inc\" holds a comma`) || strings.Contains(got, "its Label") {
		t.Errorf("a new suite with a comma in its Origin:\n%s", got)
	}
	_, err = open(SettingsChange{}).Refresh(ctx, nil)
	must(t, err)
	if got := warned(); strings.Contains(got, "holds a comma") {
		t.Errorf("a write that keeps the Origin warned again:\n%s", got)
	}
}

// Packages removed together are removed as one generation, or not at all
// when one of them is not published: a remove that failed on its last
// package used to leave the others removed (a generation each) while it
// said only that one was not found.
func TestRemoveAllOrNothing(t *testing.T) {
	dir, root := testDirs(t)
	ctx := context.Background()
	r := testRepo(t, root)
	_, err := r.Publish(ctx, "s", "main", []Package{pkgOf(t, testDeb(t, dir, "aa", "1", "amd64", "a1")), pkgOf(t, testDeb(t, dir, "aa", "2", "amd64", "a2"))})
	must(t, err)
	_, err = r.Publish(ctx, "s", "extra", []Package{pkgOf(t, testDeb(t, dir, "bb", "1", "amd64", "b"))})
	must(t, err)
	before := snapshot(t, root)
	_, err = r.RemoveAll(ctx, "s", "", []Selector{{Name: "aa"}, {Name: "nosuch"}}, "")
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "nosuch") {
		t.Fatalf("removing aa and nosuch: %v", err)
	}
	if after := snapshot(t, root); !reflect.DeepEqual(before, after) {
		t.Fatal("a refused remove changed the repository")
	}
	removed, err := r.RemoveAll(ctx, "s", "", []Selector{{Name: "aa", Version: "1"}, {Name: "bb"}, {Name: "aa"}, {Name: "bb", Version: "1"}}, "")
	must(t, err)
	if len(removed) != 3 {
		t.Fatalf("removed %+v, want aa 1, aa 2 and bb 1", removed)
	}
	hist, err := r.History("s")
	must(t, err)
	if len(hist) != 3 || hist[2].Operation != "remove" || len(hist[2].Removed) != 3 {
		t.Fatalf("history %+v: want one remove generation after the two publishes", hist)
	}
	if list, err := r.List("s"); err != nil || len(list) != 0 {
		t.Fatalf("after removing everything: %+v %v", list, err)
	}
}

// A rollback that would list again a package whose pool file was removed
// outside updeb (gc keeps the pool files of every kept generation) is
// refused naming the file, the repository unchanged: it was listed again,
// and every client got 404 for it. With the file back, it goes.
func TestRollbackRefusesAMissingPoolFile(t *testing.T) {
	dir, root := testDirs(t)
	r := testRepo(t, root)
	ctx := context.Background()
	first := testDeb(t, dir, "app", "1", "amd64", "v1")
	for _, deb := range []string{first, testDeb(t, dir, "app", "2", "amd64", "v2")} {
		_, err := r.Publish(ctx, "s", "main", []Package{pkgOf(t, deb)})
		must(t, err)
	}
	_, err := r.Remove(ctx, "s", "main", "app", "1", "")
	must(t, err)
	pool := filepath.Join(root, "pool/main/a/app/app_1_amd64.deb")
	must(t, os.Remove(pool))
	before := snapshot(t, root)
	_, err = r.Rollback(ctx, "s", 0)
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "generation 2 of suite s lists pool/main/a/app/app_1_amd64.deb") {
		t.Fatalf("a rollback listing a missing pool file again: %v, want ErrInvalid naming it", err)
	}
	if after := snapshot(t, root); !reflect.DeepEqual(before, after) {
		t.Error("the refused rollback changed the repository")
	}
	must(t, os.Link(first, pool))
	res, err := r.Rollback(ctx, "s", 0)
	must(t, err)
	if res.To != 2 || len(res.Added) != 1 || res.Added[0].Version != "1" {
		t.Fatalf("rollback with the pool file back: %+v", res)
	}
}

// An Origin or Label that holds [...] or a backslash is warned about when
// it is set, with the pin that names it: apt matches a pin's fields as
// shell patterns, so a pin naming it as it is never matches, silently.
// apt is the referee: the pins as written leave the package at priority
// 500, the warning's pins give it 990.
func TestGlobInOriginWarns(t *testing.T) {
	dir, root := testDirs(t)
	ctx := context.Background()
	var log bytes.Buffer
	origin, label := "Acme [internal]", `Ops\Team`
	r := realRepo(t, root, SettingsChange{Origin: &origin, Label: &label, Architectures: []string{"amd64"}}, nil)
	r.opts.Logger = slog.New(slog.NewJSONHandler(&log, nil))
	_, err := r.Publish(ctx, "s", "main", []Package{pkgOf(t, testDeb(t, dir, "app", "1.0-1", "amd64", "v1"))})
	must(t, err)
	pins := map[string]string{}
	for line := range strings.Lines(log.String()) {
		var rec struct{ Field, Pin string }
		must(t, json.Unmarshal([]byte(line), &rec))
		if rec.Pin != "" {
			pins[rec.Field] = rec.Pin
		}
	}
	if want := map[string]string{"Origin": "o=Acme [[]internal]", "Label": `l=Ops\\Team`}; !maps.Equal(pins, want) {
		t.Fatalf("warned pins %q, want %q; log:\n%s", pins, want, log.String())
	}

	a := newAptClient(t, root, "s", "main")
	a.update()
	priority := func(pin string) string {
		t.Helper()
		must(t, os.WriteFile(filepath.Join(a.dir, "etc/preferences.d/updeb.pref"), []byte("Package: app\nPin: release "+pin+"\nPin-Priority: 990\n"), 0o644))
		out, err := a.run("apt-cache", "policy", "app")
		must(t, err)
		if strings.Contains(out, " 1.0-1 990\n") {
			return "990"
		}
		return "500"
	}
	for _, tc := range []struct{ pin, want string }{
		{"o=" + origin, "500"}, {"l=" + label, "500"},
		{pins["Origin"], "990"}, {pins["Label"], "990"},
	} {
		if got := priority(tc.pin); got != tc.want {
			t.Errorf("apt with 'Pin: release %s': priority %s, want %s", tc.pin, got, tc.want)
		}
	}

	log.Reset()
	_, err = r.Refresh(ctx, nil)
	must(t, err)
	if strings.Contains(log.String(), "shell patterns") {
		t.Errorf("a write that keeps the Origin and Label warned again:\n%s", log.String())
	}
}

// A version promoted into a suite keeps its source's pool file
// (pool/main/... in component extra); removed from the suite, it never
// comes back to it with other bytes: the check looked at the pool path of
// the target component only, so a rebuild published into prod/extra went
// in, and apt installed it over the old build under one version (a
// rollback swapped them back). What refuses it is the suite's history and,
// with no history, the generations it keeps for rollback, which gc keeps;
// the same bytes still come back, and apt reinstalls the build it had.
func TestPromotedVersionNeverComesBackWithOtherBytes(t *testing.T) {
	t.Parallel() // mostly waiting: for the clock, for apt
	dir, root := testDirs(t)
	ctx := context.Background()
	r := realRepo(t, root, testSettings("amd64"), nil)
	debA, debB, shaA, shaB := twoBuilds(t, dir, "staging build", "rebuild")
	_, err := r.Publish(ctx, "staging", "main", []Package{pkgOf(t, debA)})
	must(t, err)
	_, err = r.Publish(ctx, "prod", "extra", []Package{pkgOf(t, testDeb(t, dir, "tool", "1", "amd64", "tool"))})
	must(t, err)
	pres, err := r.Promote(ctx, Place{"staging", "main"}, Place{"prod", "extra"}, nil)
	must(t, err)
	a := newAptClient(t, root, "prod", "extra")
	a.update()
	a.install("app", "1-1", "staging build")
	_, err = r.Remove(ctx, "prod", "extra", "app", "", "")
	must(t, err)

	const held = "pool/main/a/app/app_1-1_amd64.deb"
	// The rebuild in a suite of its own, which never listed the version:
	// it goes in there, and a promote brings it nowhere near prod either.
	_, err = r.Publish(ctx, "testing", "beta", []Package{pkgOf(t, debB)})
	must(t, err)
	refused := func(what string) {
		t.Helper()
		before := snapshot(t, root)
		for _, op := range []struct {
			name, from string
			run        func() error
		}{
			{"publish", debB, func() error { _, err := r.Publish(ctx, "prod", "extra", []Package{pkgOf(t, debB)}); return err }},
			{"promote", "testing/beta's pool/beta/a/app/app_1-1_amd64.deb", func() error {
				_, err := r.Promote(ctx, Place{"testing", "beta"}, Place{"prod", "extra"}, nil)
				return err
			}},
		} {
			err := op.run()
			var ce *ConflictError
			if !errors.As(err, &ce) || ce.Earlier != pres.Generation || ce.Filename != held {
				t.Fatalf("%s: %s of a rebuild of a version prod listed: got %v, want a *ConflictError naming prod's generation %d and %s", what, op.name, err, pres.Generation, held)
			}
			for _, s := range []string{"suite prod (generation 2, component extra) as " + held, shaA, shaB, op.from} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%s: %s: the message does not say %q: %v", what, op.name, s, err)
				}
			}
		}
		if after := snapshot(t, root); !reflect.DeepEqual(before, after) {
			t.Fatalf("%s: a refused write changed the repository", what)
		}
	}
	refused("staging still lists it")
	_, err = r.GC(ctx, false)
	must(t, err)
	refused("after gc")
	// No history (moved away, as its messages advise): the generations
	// kept for rollback, which gc leaves, still list it.
	must(t, os.Rename(filepath.Join(root, ".updeb/history/prod.jsonl"), filepath.Join(dir, "prod.jsonl")))
	refused("without the history")

	res, err := r.Publish(ctx, "prod", "extra", []Package{pkgOf(t, debA)})
	must(t, err)
	if len(res.Added) != 1 || res.Added[0].SHA256 != shaA {
		t.Fatalf("publishing the same bytes again: %+v", res)
	}
	a.update()
	if out, err := a.run("apt-get", "install", "-y", "-q", "--reinstall", "app=1-1"); err != nil {
		t.Fatalf("apt-get install --reinstall app=1-1: %v\n%s", err, out)
	}
	a.install("app", "1-1", "staging build")
}

// twoBuilds makes two builds of app 1-1 (amd64) with payloads a and b, and
// returns them and their sha256s.
func twoBuilds(t *testing.T, dir, a, b string) (debA, debB, shaA, shaB string) {
	debA = testDeb(t, dir, "app", "1-1", "amd64", a)
	debB = testDeb(t, t.TempDir(), "app", "1-1", "amd64", b)
	return debA, debB, sha256File(t, debA), sha256File(t, debB)
}

// What promote and remove cannot find, they say why: a promote from a
// component the suite does not have said it "lists no packages", as if the
// component were empty, and a remove with --arch amd64 of an
// Architecture: all package said it was not published, when it is, for
// all. Each is refused naming what there is, the repository unchanged.
func TestPromoteAndRemoveSayWhyTheyFindNothing(t *testing.T) {
	dir, root := testDirs(t)
	r, ctx := testRepo(t, root), context.Background()
	_, err := r.Publish(ctx, "s", "main", []Package{pkgOf(t, testDeb(t, dir, "tool", "1", "all", "t"))})
	must(t, err)
	_, err = r.Publish(ctx, "s", "extra", []Package{pkgOf(t, testDeb(t, dir, "bb", "1", "amd64", "b"))})
	must(t, err)
	before := snapshot(t, root)
	for _, tc := range []struct {
		what string
		op   func() error
		want string
	}{
		{"promote from an unknown component", func() error {
			_, err := r.Promote(ctx, Place{"s", "nosuch"}, Place{"prod", ""}, nil)
			return err
		}, "suite s has no component nosuch (its components: extra, main)"},
		{"remove --arch amd64 of an all package", func() error {
			_, err := r.Remove(ctx, "s", "", "tool", "", "amd64")
			return err
		}, "it is published in component main as Architecture: all, which every architecture installs: give --arch all"},
		{"remove --component main --arch amd64 of an all package", func() error {
			_, err := r.Remove(ctx, "s", "main", "tool", "1", "amd64")
			return err
		}, "it is published in component main as Architecture: all"},
	} {
		if err := tc.op(); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrNotFound saying %q", tc.what, err, tc.want)
		}
		if after := snapshot(t, root); !reflect.DeepEqual(before, after) {
			t.Fatalf("%s: a refused command changed the repository", tc.what)
		}
	}
	if _, err := r.Remove(ctx, "s", "", "bb", "", "arm64"); err == nil || strings.Contains(err.Error(), "Architecture: all") {
		t.Errorf("remove --arch arm64 of an amd64 package: %v, want no word of all", err)
	}
}
