package repo

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/diskfull"
	"github.com/updeb/updeb/internal/testkit/testenv"
	"github.com/updeb/updeb/pkg/atomicfile"
)

// keepRepo is testRepo keeping keep generations of each suite.
func keepRepo(t *testing.T, root string, keep int) *Repo {
	change := testSettings("amd64")
	change.Keep = &keep
	return Open(root, Options{Settings: change, Signer: testSigner(t), Now: testClock(), Logger: slog.New(slog.DiscardHandler)})
}

// jumpingKeepRepo is keepRepo on jumpingClock: jump moves its clock on (past
// byHashGrace, for gc to collect what clients mid-update no longer need).
func jumpingKeepRepo(t *testing.T, root string, keep int) (r *Repo, jump func(time.Duration)) {
	r = keepRepo(t, root, keep)
	r.opts.Now, jump = jumpingClock()
	return r, jump
}

// publishEach publishes app at each version into s/main, one generation
// each.
func publishEach(t *testing.T, r *Repo, dir string, versions ...string) {
	t.Helper()
	for _, v := range versions {
		_, err := r.Publish(context.Background(), "s", "main", []Package{pkgOf(t, testDeb(t, dir, "app", v, "amd64", "v"+v))})
		must(t, err)
	}
}

// gc removes exactly the pool files no kept generation lists, in its own
// indexes or in those it serves by hash to clients mid-update; a collected
// version cannot return with other bytes.
func TestGCRemovesExactlyTheUnreferenced(t *testing.T) {
	dir, root := testDirs(t)
	ctx := context.Background()
	r, jump := jumpingKeepRepo(t, root, 1)
	var debs []string
	for _, v := range []string{"1", "2", "3"} {
		debs = append(debs, testDeb(t, dir, "app", v, "amd64", "v"+v))
		_, err := r.Publish(ctx, "s", "main", []Package{pkgOf(t, debs[len(debs)-1])})
		must(t, err)
	}
	_, err := r.Publish(ctx, "other", "main", []Package{pkgOf(t, testDeb(t, dir, "lib", "1", "amd64", "lib"))})
	must(t, err)
	_, err = r.Remove(ctx, "s", "main", "app", "1", "")
	must(t, err)
	leftover := filepath.Join(root, "pool/main/a/app/.tmp-123.deb") // a killed publish's
	must(t, os.WriteFile(leftover, []byte("partial"), 0o644))

	// app=1 left the live index, but the live generation still serves the
	// previous one by hash: only the leftover goes (with keep 1, each write
	// already removed the generation before its own).
	res, err := r.GC(ctx, false)
	must(t, err)
	if !slices.Equal(res.PoolFiles, []string{"pool/main/a/app/.tmp-123.deb"}) || len(res.Generations) != 0 {
		t.Fatalf("first gc: %+v", res)
	}
	// Once no kept generation serves that index (its grace for clients
	// mid-update has passed), app=1 goes too; a dry run says so and removes
	// nothing.
	jump(byHashGrace)
	_, err = r.Refresh(ctx, []string{"s"})
	must(t, err)
	before := snapshot(t, root)
	res, err = r.GC(ctx, true)
	must(t, err)
	want := []string{"pool/main/a/app/app_1_amd64.deb"}
	if !slices.Equal(res.PoolFiles, want) || !res.DryRun {
		t.Fatalf("dry run: %+v, want %v", res, want)
	}
	if after := snapshot(t, root); !reflect.DeepEqual(before, after) {
		t.Fatal("a dry run changed the repository")
	}
	res, err = r.GC(ctx, false)
	must(t, err)
	if !slices.Equal(res.PoolFiles, want) {
		t.Fatalf("gc: %+v, want %v", res, want)
	}
	var pool []string
	filepath.WalkDir(filepath.Join(root, "pool"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			pool = append(pool, rel)
		}
		return err
	})
	if !slices.Equal(pool, []string{"pool/main/a/app/app_2_amd64.deb", "pool/main/a/app/app_3_amd64.deb", "pool/main/l/lib/lib_1_amd64.deb"}) {
		t.Fatalf("pool after gc: %v", pool)
	}
	a := newAptClient(t, root, "s", "main")
	a.update()
	a.install("app", "3", "v3")

	// The collected version keeps its bytes: other bytes are refused, the
	// same bytes come back.
	// The message says so: the pool file is gone, not "already published".
	var ce *ConflictError
	if _, err := r.Publish(ctx, "s", "main", []Package{pkgOf(t, testDeb(t, t.TempDir(), "app", "1", "amd64", "other"))}); !errors.As(err, &ce) ||
		!ce.Collected || !strings.Contains(err.Error(), "app=1 (amd64) was published in component main as pool/main/a/app/app_1_amd64.deb") ||
		!strings.Contains(err.Error(), "then removed and collected") || strings.Contains(err.Error(), "already published") {
		t.Fatalf("republishing a collected version with other bytes: %v", err)
	}
	_, err = r.Publish(ctx, "s", "main", []Package{pkgOf(t, debs[0])})
	must(t, err)
	a.update()
	a.install("app", "1", "v1")
}

// gc refuses a repository with a suite it does not manage: it cannot know
// which pool files that suite lists.
func TestGCRefusesUnmanagedSuite(t *testing.T) {
	dir, root := testDirs(t)
	_, err := testRepo(t, root).Publish(context.Background(), "s", "main", []Package{pkgOf(t, testDeb(t, dir, "app", "1", "amd64", "v1"))})
	must(t, err)
	must(t, os.MkdirAll(filepath.Join(root, "dists/foreign/main/binary-amd64"), 0o755))
	before := snapshot(t, root)
	if _, err := testRepo(t, root).GC(context.Background(), false); !errors.Is(err, ErrNotManaged) || !strings.Contains(err.Error(), "dists/foreign") {
		t.Fatalf("gc with dists/foreign: %v", err)
	}
	if after := snapshot(t, root); !reflect.DeepEqual(before, after) {
		t.Fatal("a refused gc changed the repository")
	}
}

// gc of a folder that does not exist (a mistyped --repo, a repository not
// published yet) has nothing to collect and creates nothing: no folder, no
// lock file, with --dry-run or without.
func TestGCOfNoRepositoryCreatesNothing(t *testing.T) {
	root := filepath.Join(t.TempDir(), "srv", "apt")
	for _, dryRun := range []bool{true, false} {
		res, err := testRepo(t, root).GC(context.Background(), dryRun)
		if err != nil || len(res.Generations) != 0 || len(res.PoolFiles) != 0 || res.DryRun != dryRun {
			t.Fatalf("gc (dry run %v) of no repository: %+v, %v", dryRun, res, err)
		}
		if _, err := os.Lstat(filepath.Dir(root)); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("gc (dry run %v) of no repository created %s: %v", dryRun, filepath.Dir(root), err)
		}
	}
}

// Generations that only re-signed do not push a rollback target out of the
// kept ones; rollback to an unknown generation names the kept ones.
func TestKeepCountsDistinctContents(t *testing.T) {
	dir, root := testDirs(t)
	ctx := context.Background()
	r := keepRepo(t, root, 2)
	publishEach(t, r, dir, "1", "2")
	for range 3 {
		_, err := r.Refresh(ctx, nil)
		must(t, err)
	}
	gens, err := r.keptGenerations("s", 5)
	must(t, err)
	if !slices.Equal(gens, []int{5, 1}) { // 5 is 2's content re-signed; 1 the other
		t.Fatalf("kept generations %v, want [5 1]", gens)
	}
	_, err = r.Rollback(ctx, "s", 3)
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "kept generations of s: 5, 1") {
		t.Fatalf("rollback to a collected generation: %v", err)
	}
	res, err := r.Rollback(ctx, "s", 0)
	must(t, err)
	if res.To != 1 || res.Generation != 6 || len(res.Removed) != 1 || res.Removed[0].Version != "2" {
		t.Fatalf("rollback: %+v", res)
	}
	hist, err := r.History("s")
	must(t, err)
	var states []string
	for _, h := range hist {
		states = append(states, h.Operation+map[bool]string{true: " live", false: ""}[h.Live]+map[bool]string{true: " kept", false: ""}[h.Kept])
	}
	// The rollback has generation 1's packages: 1 is no longer needed, 5
	// (the other content) is.
	if want := []string{"publish", "publish", "refresh", "refresh", "refresh kept", "rollback live kept"}; !slices.Equal(states, want) {
		t.Fatalf("history: %v, want %v", states, want)
	}
}

// Bad input gets an error naming the file and what to do.
func TestDamagedStateNamed(t *testing.T) {
	dir, root := testDirs(t)
	ctx := context.Background()
	r := testRepo(t, root)
	deb := pkgOf(t, testDeb(t, dir, "app", "1", "amd64", "v1"))
	_, err := r.Publish(ctx, "s", "main", []Package{deb})
	must(t, err)
	settings := filepath.Join(root, "dists/.gen/s/1", settingsFile)
	good, err := os.ReadFile(settings)
	must(t, err)
	for _, bad := range []string{"{", `{"format": 1, "suite": "s", "keep": 1, "surprise": true}`, `{"format": 9}`, `{"format": 1, "suite": "t", "keep": 1}`, `{"format": 1, "suite": "s", "keep": 0}`, ""} {
		must(t, os.WriteFile(settings, []byte(bad), 0o644))
		_, err := r.Refresh(ctx, nil)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), settings) {
			t.Errorf("settings %q: %v, want ErrInvalid naming %s", bad, err, settings)
		}
	}
	// Deleting it (as the message says) rebuilds it from Release/InRelease.
	must(t, os.Remove(settings))
	_, err = r.Refresh(ctx, nil)
	must(t, err)
	again, err := os.ReadFile(filepath.Join(root, "dists/s", settingsFile))
	must(t, err)
	if string(again) != string(good) {
		t.Fatalf("settings rebuilt from the Release:\n%s\nwant\n%s", again, good)
	}

	hist := filepath.Join(root, ".updeb/history/s.jsonl")
	data, err := os.ReadFile(hist)
	must(t, err)
	must(t, os.WriteFile(hist, append([]byte("garbage\n"), data...), 0o644))
	if _, err := r.History("s"); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), hist+":1:") {
		t.Fatalf("damaged history: %v", err)
	}
	// A line cut short by a killed write is ignored, then replaced.
	must(t, os.WriteFile(hist, append(data, []byte(`{"suite":"s","gener`)...), 0o644))
	h, err := r.History("s")
	must(t, err)
	if len(h) != 2 {
		t.Fatalf("history with a cut line: %+v", h)
	}
	_, err = r.Refresh(ctx, nil)
	must(t, err)
	if h, err = r.History("s"); err != nil || len(h) != 3 {
		t.Fatalf("history after appending to a cut line: %v %+v", err, h)
	}

	for _, tt := range []struct {
		name string
		run  func() error
	}{
		{"refresh of a missing suite", func() error { _, err := r.Refresh(ctx, []string{"nope"}); return err }},
		{"rollback of a missing suite", func() error { _, err := r.Rollback(ctx, "nope", 0); return err }},
		{"rollback to an unknown generation", func() error { _, err := r.Rollback(ctx, "s", 99); return err }},
		{"history of a missing suite", func() error { _, err := r.History("nope"); return err }},
		{"promote from a missing suite", func() error { _, err := r.Promote(ctx, Place{"nope", ""}, Place{"s", ""}, nil); return err }},
	} {
		if err := tt.run(); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: %v, want ErrNotFound", tt.name, err)
		}
	}
}

// A publish reads no pool file but its own, and carries over (links,
// unread) the indexes of components it does not touch: its cost follows what
// changed, not the size of the repository.
func TestPublishReadsOnlyWhatChanges(t *testing.T) {
	dir, root := testDirs(t)
	ctx := context.Background()
	r := testRepo(t, root)
	var pkgs []Package
	for _, v := range []string{"1", "2", "3", "4", "5"} {
		pkgs = append(pkgs, pkgOf(t, testDeb(t, dir, "app", v, "amd64", "v"+v)))
	}
	_, err := r.Publish(ctx, "s", "main", pkgs)
	must(t, err)
	_, err = r.Publish(ctx, "s", "other", []Package{pkgOf(t, testDeb(t, dir, "tool", "1", "amd64", "t"))})
	must(t, err)
	// Every published pool file goes away: a publish that read them fails.
	must(t, os.RemoveAll(filepath.Join(root, "pool")))
	before, err := os.Stat(filepath.Join(root, "dists/s/main/binary-amd64/Packages.xz"))
	must(t, err)
	_, err = r.Publish(ctx, "s", "other", []Package{pkgOf(t, testDeb(t, dir, "tool", "2", "amd64", "t2"))})
	must(t, err)
	after, err := os.Stat(filepath.Join(root, "dists/s/main/binary-amd64/Packages.xz"))
	must(t, err)
	if !os.SameFile(before, after) {
		t.Fatal("main's index was rewritten by a publish into other")
	}
	list, err := r.List("s")
	must(t, err)
	if len(list) != 7 {
		t.Fatalf("%d packages listed, want 7", len(list))
	}
}

// archAdded is a repository keeping keep generations of suite s: app=1
// published (generation 1), app=2 (2), then a refresh after arm64 joined
// repo.architectures (3).
func archAdded(t *testing.T, keep int) *Repo {
	t.Helper()
	dir, root := testDirs(t)
	r := keepRepo(t, root, keep)
	publishEach(t, r, dir, "1", "2")
	r.opts.Settings.Architectures = []string{"arm64"}
	_, err := r.Refresh(context.Background(), nil)
	must(t, err)
	return r
}

// A write that adds an architecture (a refresh after the config's
// repo.architectures grew) changes the index files but not the packages:
// rollback without --to goes past it to the generation before the last
// change of packages, and again past its own generation, instead of
// "rolling back" to the same packages for ever.
func TestRollbackLooksAtPackagesNotIndexFiles(t *testing.T) {
	ctx := context.Background()
	r := archAdded(t, 5)
	res, err := r.Rollback(ctx, "s", 0)
	must(t, err)
	if res.To != 1 || len(res.Removed) != 1 || res.Removed[0].Version != "2" || len(res.Added) != 0 {
		t.Fatalf("rollback after a refresh that added an architecture: %+v, want generation 1's packages (app=2 withdrawn)", res)
	}
	list, err := r.List("s")
	must(t, err)
	if len(list) != 1 || list[0].Version != "1" {
		t.Fatalf("after the rollback the suite lists %+v, want app=1 only", list)
	}
	// Undoing the rollback: the newest generation with other packages is
	// the refresh (app=1 and app=2), not generation 1 again.
	res, err = r.Rollback(ctx, "s", 0)
	must(t, err)
	if res.To != 3 || len(res.Added) != 1 || res.Added[0].Version != "2" {
		t.Fatalf("rolling the rollback back: %+v, want generation 3's packages (app=2 restored)", res)
	}
}

// A live generation deleted by hand is named as such, with what to do
// (every write of the suite, and gc, needs it); doing what the message
// says gives a suite that writes and serves again.
func TestDeletedLiveGenerationSaysWhatToDo(t *testing.T) {
	dir, root := testDirs(t)
	ctx := context.Background()
	r := testRepo(t, root)
	publishEach(t, r, dir, "1", "2", "3")
	must(t, os.RemoveAll(filepath.Join(root, "dists/.gen/s/3")))
	for name, run := range map[string]func() error{
		"publish": func() error {
			_, err := r.Publish(ctx, "s", "main", []Package{pkgOf(t, testDeb(t, dir, "app", "4", "amd64", "v4"))})
			return err
		},
		"refresh":  func() error { _, err := r.Refresh(ctx, nil); return err },
		"rollback": func() error { _, err := r.Rollback(ctx, "s", 0); return err },
		"gc":       func() error { _, err := r.GC(ctx, true); return err },
		"list":     func() error { _, err := r.List(""); return err },
	} {
		err := run()
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "live generation 3 of suite s is missing") || !strings.Contains(err.Error(), "ln -sfn .gen/s/2 "+filepath.Join(root, "dists/s")) {
			t.Errorf("%s with the live generation deleted: %v, want ErrInvalid saying it is missing and how to point the suite at generation 2", name, err)
		}
	}
	must(t, os.Remove(filepath.Join(root, "dists/s")))
	must(t, os.Symlink(".gen/s/2", filepath.Join(root, "dists/s")))
	_, err := r.Refresh(ctx, nil)
	must(t, err)
	list, err := r.List("s")
	must(t, err)
	if len(list) != 2 {
		t.Fatalf("after pointing the suite at generation 2 and a refresh: %+v", list)
	}
}

// A version removed from one component and collected never comes back with
// other bytes in another component of the suite either: a node that
// installed it before would see two builds of one version. The same bytes
// may come back anywhere.
func TestCollectedVersionRefusedInAnotherComponent(t *testing.T) {
	dir, root := testDirs(t)
	ctx := context.Background()
	r, jump := jumpingKeepRepo(t, root, 1)
	first, other := removedFromMain(t, r, dir)
	jump(byHashGrace)
	_, err := r.Refresh(ctx, []string{"s"})
	must(t, err)
	res, err := r.GC(ctx, false)
	must(t, err)
	if !slices.Contains(res.PoolFiles, "pool/main/a/app/app_1.0-1_amd64.deb") {
		t.Fatalf("gc did not collect app 1.0-1: %+v", res)
	}
	refusedIntoContrib(t, r, root, first, other, func(ce *ConflictError, msg string) bool {
		return ce.Collected && strings.Contains(msg, "app=1.0-1 (amd64) was published in component main as pool/main/a/app/app_1.0-1_amd64.deb") && strings.Contains(msg, "for suite s component contrib")
	})
}

// Before gc collects it, the pool file of a version removed from one
// component refuses other bytes of that version in another component just
// as its collected digest does after: what a publish allows must not depend
// on whether gc has run. Another epoch of it, whose pool file has the same
// name, is another version and goes in.
func TestRemovedVersionRefusedInAnotherComponentBeforeGC(t *testing.T) {
	dir, root := testDirs(t)
	r := testRepo(t, root)
	first, other := removedFromMain(t, r, dir)
	refusedIntoContrib(t, r, root, first, other, func(ce *ConflictError, msg string) bool {
		return ce.Pooled && strings.Contains(msg, "holds it as pool/main/a/app/app_1.0-1_amd64.deb") && strings.Contains(msg, ", for component contrib,")
	})
	_, err := r.Publish(context.Background(), "s", "extra", []Package{pkgOf(t, testDeb(t, filepath.Join(dir, "c"), "app", "1:1.0-1", "amd64", "epoch"))})
	must(t, err)
	// Another suite's build in main, which it lists (staging's), is no
	// build of suite s: gc never collects it while staging lists it.
	_, err = r.Publish(context.Background(), "staging", "main", []Package{pkgOf(t, testDeb(t, filepath.Join(dir, "d"), "app", "2.0-1", "amd64", "staging build"))})
	must(t, err)
	_, err = r.Publish(context.Background(), "s", "contrib", []Package{pkgOf(t, testDeb(t, filepath.Join(dir, "e"), "app", "2.0-1", "amd64", "s build"))})
	must(t, err)
}

// A version removed from a suite comes back only with the same bytes under
// another pool file name too: another spelling of it, a build for all, a
// build under another source's folder (a Source field); by publish or by a
// promote, into that suite or another, before gc collects its pool file
// (the pool holds it) and after (its digest). Each went in: the checks
// looked at the new build's own pool path only.
func TestRemovedVersionRefusedUnderAnotherName(t *testing.T) {
	dir, root := testDirs(t)
	ctx := context.Background()
	r, jump := jumpingKeepRepo(t, root, 1)
	first := testDeb(t, filepath.Join(dir, "a"), "app", "1.0-1", "amd64", "first build")
	others := []string{
		testDeb(t, filepath.Join(dir, "b"), "app", "1.00-1", "amd64", "another spelling"),
		testDeb(t, filepath.Join(dir, "c"), "app", "1.0-1", "all", "a build for all"),
		testDebWith(t, filepath.Join(dir, "d"), "app", "1.0-1", "amd64", "another source", "Source: app-tools\n"),
	}
	_, err := r.Publish(ctx, "s", "main", []Package{pkgOf(t, first)})
	must(t, err)
	_, err = r.Publish(ctx, "staging", "extra", []Package{pkgOf(t, others[0])})
	must(t, err)
	_, err = r.Remove(ctx, "s", "main", "app", "", "")
	must(t, err)
	const held = "pool/main/a/app/app_1.0-1_amd64.deb"
	refused := func(what string, collected bool, write func() error) {
		t.Helper()
		before := snapshot(t, root)
		err := write()
		var ce *ConflictError
		if !errors.As(err, &ce) || ce.Filename != held || ce.Collected != collected || ce.Pooled == collected || !strings.Contains(err.Error(), held) {
			t.Fatalf("%s (collected %v): %v, want a conflict with %s", what, collected, err, held)
		}
		if after := snapshot(t, root); !reflect.DeepEqual(before, after) {
			t.Errorf("%s: the refused write changed the repository", what)
		}
	}
	refuseAll := func(collected bool) {
		for _, deb := range others {
			refused(deb+" into s/main", collected, func() error {
				_, err := r.Publish(ctx, "s", "main", []Package{pkgOf(t, deb)})
				return err
			})
		}
		refused("another suite's other source", collected, func() error {
			_, err := r.Publish(ctx, "other", "main", []Package{pkgOf(t, others[2])})
			return err
		})
		refused("a promote of another spelling", collected, func() error {
			_, err := r.Promote(ctx, Place{Suite: "staging", Component: "extra"}, Place{Suite: "s", Component: "main"}, nil)
			return err
		})
	}
	refuseAll(false)
	jump(byHashGrace)
	_, err = r.Refresh(ctx, []string{"s"})
	must(t, err)
	res, err := r.GC(ctx, false)
	must(t, err)
	if !slices.Contains(res.PoolFiles, held) {
		t.Fatalf("gc did not collect %s: %+v", held, res)
	}
	refuseAll(true)
	_, err = r.Publish(ctx, "s", "main", []Package{pkgOf(t, first)})
	must(t, err)
}

// removedFromMain publishes app 1.0-1 (first) into s/main and lib into
// s/contrib, then removes app from main; other is another build of app
// 1.0-1.
func removedFromMain(t *testing.T, r *Repo, dir string) (first, other string) {
	t.Helper()
	ctx := context.Background()
	first = testDeb(t, filepath.Join(dir, "a"), "app", "1.0-1", "amd64", "first build")
	other = testDeb(t, filepath.Join(dir, "b"), "app", "1.0-1", "amd64", "another build")
	_, err := r.Publish(ctx, "s", "main", []Package{pkgOf(t, first)})
	must(t, err)
	_, err = r.Publish(ctx, "s", "contrib", []Package{pkgOf(t, testDeb(t, dir, "lib", "1", "amd64", "lib"))})
	must(t, err)
	_, err = r.Remove(ctx, "s", "main", "app", "1.0-1", "")
	must(t, err)
	return first, other
}

// refusedIntoContrib checks that publishing other into s/contrib is
// refused as main's conflict (as want says) with the repository unchanged,
// and that first goes in.
func refusedIntoContrib(t *testing.T, r *Repo, root, first, other string, want func(ce *ConflictError, msg string) bool) {
	t.Helper()
	ctx := context.Background()
	before := snapshot(t, root)
	_, err := r.Publish(ctx, "s", "contrib", []Package{pkgOf(t, other)})
	var ce *ConflictError
	if !errors.As(err, &ce) || ce.Component != "main" || ce.Into != "contrib" || !want(ce, err.Error()) {
		t.Fatalf("other bytes of a removed version into another component: %v", err)
	}
	if after := snapshot(t, root); !reflect.DeepEqual(before, after) {
		t.Error("the refused publish changed the repository")
	}
	_, err = r.Publish(ctx, "s", "contrib", []Package{pkgOf(t, first)})
	must(t, err)
}

// A refresh that adds an architecture serves the same packages under more
// index files: like any refresh it does not count against keep, so the
// rollback target before it stays (operations.md).
func TestKeepCountsPackagesNotIndexFiles(t *testing.T) {
	ctx := context.Background()
	r := archAdded(t, 2)
	gens, err := r.keptGenerations("s", 3)
	must(t, err)
	if !slices.Equal(gens, []int{3, 1}) { // 3 is 2's packages with arm64's indexes; 1 the other
		t.Fatalf("kept generations %v, want [3 1]", gens)
	}
	res, err := r.Rollback(ctx, "s", 0)
	must(t, err)
	if res.To != 1 || len(res.Removed) != 1 || res.Removed[0].Version != "2" {
		t.Fatalf("rollback: %+v, want generation 1 (app=2 withdrawn)", res)
	}
}

// gc reads each index as a stream, with a bound on what it decompresses
// to: it read every index whole and decompressed it whole, so a .gz under
// by-hash/ of 1 KB a MiB of zeros (a damaged or planted file) took as much
// memory as it unpacked to, without limit.
func TestGCBoundsWhatAnIndexDecompressesTo(t *testing.T) {
	dir, root := testDirs(t)
	r := keepRepo(t, root, 2)
	publishEach(t, r, dir, "1")
	var byHash string
	must(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && strings.HasSuffix(p, "binary-amd64/by-hash/SHA256") {
			byHash = p
		}
		return err
	}))
	if byHash == "" {
		t.Fatal("no binary-amd64/by-hash/SHA256 folder")
	}
	var member bytes.Buffer
	zw := gzip.NewWriter(&member)
	_, err := zw.Write(make([]byte, 1<<20))
	must(t, err)
	must(t, zw.Close())
	bomb := filepath.Join(byHash, strings.Repeat("0", 64))
	must(t, os.WriteFile(bomb, bytes.Repeat(member.Bytes(), maxRepoFile>>20+8), 0o644))

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = r.GC(context.Background(), true)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), bomb) || !strings.Contains(err.Error(), "decompresses to more than") {
		t.Errorf("GC: %v, want the index named, refused as decompressing past the bound", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("GC allocated %d MiB reading an index of %d KiB", alloc>>20, member.Len()*(maxRepoFile>>20+8)>>10)
	}

	// A line longer than the read buffer is skipped whole: text in it that
	// looks like a field is not one.
	idx := filepath.Join(t.TempDir(), "Packages")
	long := "Description: " + strings.Repeat("x", 100<<10) + "Filename: pool/not/this.deb" + strings.Repeat("y", 100<<10)
	must(t, os.WriteFile(idx, []byte("Package: a\n"+long+"\nFilename: pool/main/a/a_1_amd64.deb\n\nPackage: b\nFilename: pool/main/b/b_1_amd64.deb"), 0o644))
	got := map[string]bool{}
	must(t, indexFilenames(idx, got))
	if want := map[string]bool{"pool/main/a/a_1_amd64.deb": true, "pool/main/b/b_1_amd64.deb": true}; !reflect.DeepEqual(got, want) {
		t.Errorf("pool paths %v, want %v", got, want)
	}
}

// Dropping a history line cut short by a killed write reads back from the
// end of the file: it read the whole history into memory.
func TestCompleteLinesEndReadsFromTheEnd(t *testing.T) {
	name := filepath.Join(t.TempDir(), "s.jsonl")
	line := strings.Repeat("x", 999) + "\n"
	body := strings.Repeat(line, 32<<10) // 32 MiB of complete lines
	for _, tc := range []struct{ text, tail string }{
		{"", ""}, {"", "no newline at all"}, {"a\n", ""}, {"a\n", "cut"}, {body, ""}, {body, `{"suite":"s","gener`},
		{body, strings.Repeat("y", 200<<10)}, // a cut line longer than a block
	} {
		must(t, os.WriteFile(name, []byte(tc.text+tc.tail), 0o644))
		f, err := os.Open(name)
		must(t, err)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		end, err := completeLinesEnd(f)
		runtime.ReadMemStats(&after)
		f.Close()
		if err != nil || end != int64(len(tc.text)) {
			t.Errorf("%d bytes of lines and %d after: %d, %v", len(tc.text), len(tc.tail), end, err)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
			t.Errorf("%d bytes of lines and %d after: allocated %d bytes", len(tc.text), len(tc.tail), alloc)
		}
	}
}

// Listing or reading the history of every suite of a folder that does not
// exist names it (a mistyped --repo), rather than showing an empty
// repository; an existing folder with no suite is one.
func TestListOfNoRepositoryNamed(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-repo")
	r := testRepo(t, missing)
	if _, err := r.List(""); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), missing+" does not exist") {
		t.Errorf("list: %v", err)
	}
	if _, err := r.History(""); !errors.Is(err, ErrNotFound) {
		t.Errorf("history: %v", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the folder was made: %v", err)
	}
	must(t, os.Mkdir(missing, 0o755))
	if list, err := r.List(""); err != nil || len(list) != 0 {
		t.Errorf("an empty repository: %v, %v", list, err)
	}
}

// A write on what a repository holds (refresh, rollback, remove, promote)
// given a folder that does not exist (a mistyped --repo) names it and makes
// nothing: each made the folder and its lock file, said the suite does not
// exist, and a later list showed an empty repository there.
func TestMistypedRepoWriteMakesNothing(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-repo")
	r, ctx := testRepo(t, missing), context.Background()
	for name, write := range map[string]func() error{
		"refresh":  func() error { _, err := r.Refresh(ctx, nil); return err },
		"rollback": func() error { _, err := r.Rollback(ctx, "s", 0); return err },
		"remove":   func() error { _, err := r.Remove(ctx, "s", "main", "app", "", ""); return err },
		"promote": func() error {
			_, err := r.Promote(ctx, Place{Suite: "staging"}, Place{Suite: "s"}, nil)
			return err
		},
	} {
		if err := write(); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), missing+" does not exist") {
			t.Errorf("%s: %v, want ErrNotFound naming %s", name, err, missing)
		}
		if _, err := os.Lstat(missing); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%s made the folder: %v", name, err)
		}
	}
}

// A suite whose link dists/SUITE is missing (a backup restored by a tool
// that leaves symbolic links out) keeps its pool files through gc, with a
// warning naming the link to restore: gc took them for unreferenced and
// removed them all, and the link, restored, listed every package as a 404.
// Other suites are collected as always.
func TestGCKeepsThePoolOfASuiteWithoutItsLink(t *testing.T) {
	dir, root := testDirs(t)
	ctx := context.Background()
	r, jump := jumpingKeepRepo(t, root, 1)
	var logs bytes.Buffer
	r.opts.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	publishEach(t, r, dir, "1", "2")
	_, err := r.Publish(ctx, "t", "main", []Package{pkgOf(t, testDeb(t, filepath.Join(dir, "t"), "lib", "1", "amd64", "lib"))})
	must(t, err)
	_, err = r.Remove(ctx, "t", "main", "lib", "", "")
	must(t, err)
	jump(byHashGrace)
	_, err = r.Refresh(ctx, []string{"t"})
	must(t, err)
	link, target := loseLink(t, root, "s")
	res, err := r.GC(ctx, false)
	must(t, err)
	if !slices.Equal(res.PoolFiles, []string{"pool/main/l/lib/lib_1_amd64.deb"}) {
		t.Fatalf("gc with dists/s missing removed %v, want t's removed lib only", res.PoolFiles)
	}
	if !strings.Contains(logs.String(), "ln -sfn "+target+" "+link) {
		t.Errorf("no warning saying how to restore %s:\n%s", link, logs.String())
	}
	must(t, os.Symlink(target, link))
	checks, err := r.Verify(ctx, "s", clientKeyring(t, root), r.opts.Now())
	must(t, err)
	if len(checks) != 1 || len(checks[0].Findings) != 0 || checks[0].PoolFiles != 2 {
		t.Fatalf("suite s with its link restored: %+v", checks)
	}
}

// A publish or promote into a suite whose link dists/SUITE is missing but
// whose generations are there (more than a killed first write leaves) is
// refused with the ln -sfn that restores it, the repository unchanged: it
// started the suite anew, listing the new package only (every version
// published before gone for clients), and pruned the old generations.
func TestWriteRefusedWhereTheSuiteLinkIsLost(t *testing.T) {
	dir, root := testDirs(t)
	ctx := context.Background()
	r := testRepo(t, root)
	publishEach(t, r, dir, "1", "2")
	_, err := r.Publish(ctx, "staging", "main", []Package{pkgOf(t, testDeb(t, filepath.Join(dir, "b"), "app", "3", "amd64", "v3"))})
	must(t, err)
	link := filepath.Join(root, "dists/s")
	must(t, os.Remove(link))
	before := snapshot(t, root)
	for name, write := range map[string]func() error{
		"publish": func() error {
			_, err := r.Publish(ctx, "s", "main", []Package{pkgOf(t, testDeb(t, filepath.Join(dir, "c"), "app", "4", "amd64", "v4"))})
			return err
		},
		"promote": func() error {
			_, err := r.Promote(ctx, Place{Suite: "staging"}, Place{Suite: "s"}, nil)
			return err
		},
	} {
		if err := write(); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "'ln -sfn .gen/s/2 "+link+"'") {
			t.Fatalf("%s into s without its link: %v, want ErrInvalid saying how to restore it", name, err)
		}
		if after := snapshot(t, root); !reflect.DeepEqual(before, after) {
			t.Fatalf("the refused %s changed the repository", name)
		}
	}
	must(t, os.Symlink(".gen/s/2", link))
	_, err = r.Promote(ctx, Place{Suite: "staging"}, Place{Suite: "s"}, nil)
	must(t, err)
	if list, err := r.List("s"); err != nil || len(list) != 3 {
		t.Fatalf("s with its link restored, after the promote: %v, %v", list, err)
	}
}

// A suite published once (its one generation, 1) whose link is lost is
// refused as one with more generations is: the write started the suite
// anew, listing the new package only, and gc then collected the pool file
// of the version published before, recording it as collected for good.
// A lone generation 1 was taken for a first write killed before its
// switch, which leaves the link it was to switch with, to generation 1,
// beside it (TestKilledFirstWriteStartsAnew); one to generation 2 is a
// later write's.
func TestWriteRefusedWhereTheFirstGenerationsLinkIsLost(t *testing.T) {
	r, dir, link := lostLink(t, "1")
	ctx := context.Background()
	root := r.root
	must(t, os.Symlink(".gen/s/2", filepath.Join(root, "dists/.s.link")))
	before := snapshot(t, root)
	_, err := r.Publish(ctx, "s", "main", []Package{pkgOf(t, testDeb(t, filepath.Join(dir, "c"), "app", "2", "amd64", "v2"))})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "'ln -sfn .gen/s/1 "+link+"'") {
		t.Fatalf("publish into s without its link: %v, want ErrInvalid saying how to restore it", err)
	}
	if after := snapshot(t, root); !reflect.DeepEqual(before, after) {
		t.Fatal("the refused publish changed the repository")
	}
	must(t, os.Symlink(".gen/s/1", link))
	_, err = r.Publish(ctx, "s", "main", []Package{pkgOf(t, testDeb(t, filepath.Join(dir, "c"), "app", "2", "amd64", "v2"))})
	must(t, err)
	if list, err := r.List("s"); err != nil || len(list) != 2 {
		t.Fatalf("s with its link restored, after the publish: %v, %v", list, err)
	}
}

// A suite named to a command that needs it (refresh SUITE, the suite a
// promote reads, repo list and history of it) whose link dists/SUITE is
// lost is said to be so, with the ln -sfn that restores it: it was said
// not to exist, "publish creates one" (exit 3), sending the operator of a
// refresh timer to start anew the suite whose packages are all there.
func TestNamedSuiteWhoseLinkIsLost(t *testing.T) {
	r, _, link := lostLink(t, "1", "2")
	ctx := context.Background()
	for name, read := range map[string]func() error{
		"refresh": func() error { _, err := r.Refresh(ctx, []string{"s"}); return err },
		"promote": func() error { _, err := r.Promote(ctx, Place{Suite: "s"}, Place{Suite: "t"}, nil); return err },
		"list":    func() error { _, err := r.List("s"); return err },
		"history": func() error { _, err := r.History("s"); return err },
	} {
		if err := read(); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "'ln -sfn .gen/s/2 "+link+"'") || strings.Contains(err.Error(), "publish creates one") {
			t.Errorf("%s of s without its link: %v, want ErrInvalid saying how to restore it", name, err)
		}
	}
}

// lostLink returns a repository whose suite s, published once per version,
// has lost its link (returned), and the test's folder.
func lostLink(t *testing.T, versions ...string) (r *Repo, dir, link string) {
	dir, root := testDirs(t)
	r = testRepo(t, root)
	publishEach(t, r, dir, versions...)
	link = filepath.Join(root, "dists/s")
	must(t, os.Remove(link))
	return r, dir, link
}

// gc refuses a generation that is a symlink (moved to another disk and
// linked back), dry run or not, and removes nothing: it left the live one,
// a symlink, out of what it keeps, removed its link (the suite then 404 for
// every client) and collected the pool file only it lists.
func TestGCRefusesASymlinkedGeneration(t *testing.T) {
	dir, root := testDirs(t)
	ctx := context.Background()
	r := testRepo(t, root)
	publishEach(t, r, dir, "1", "2")
	live := filepath.Join(root, "dists/.gen/s/2")
	elsewhere := filepath.Join(dir, "other-disk")
	must(t, os.Mkdir(elsewhere, 0o755))
	must(t, os.Rename(live, filepath.Join(elsewhere, "2")))
	must(t, os.Symlink(filepath.Join(elsewhere, "2"), live))
	before := snapshot(t, root)
	for _, dry := range []bool{true, false} {
		res, err := r.GC(ctx, dry)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), live+" is a symlink") {
			t.Fatalf("gc (dry run %v) with the live generation a symlink: %+v, %v; want ErrInvalid naming it", dry, res, err)
		}
	}
	if after := snapshot(t, root); !reflect.DeepEqual(before, after) {
		t.Fatal("the refused gc changed the repository")
	}
	if list, err := r.List("s"); err != nil || len(list) != 2 {
		t.Fatalf("after the refused gc: %v, %v", list, err)
	}
}

// TestGCDryRunByAReader: gc --dry-run writes nothing, so a user who may read
// the repository but not write it (a monitoring account) can run it: it
// waits for publishers through a read-only open of the lock file. As root,
// the dry run runs as nobody, in a helper.
func TestGCDryRunByAReader(t *testing.T) {
	dir, root := testDirs(t)
	r, ctx := testRepo(t, root), context.Background()
	_, err := r.Publish(ctx, "s", "main", []Package{pkgOf(t, testDeb(t, dir, "aa", "1", "amd64", "a"))})
	must(t, err)
	if os.Geteuid() != 0 {
		must(t, os.Chmod(root, 0o555))
		t.Cleanup(func() { os.Chmod(root, 0o755) })
		must(t, os.Chmod(filepath.Join(root, ".updeb-lock"), 0o444))
		if _, err := r.GC(ctx, true); err != nil {
			t.Fatalf("a dry run by a user who cannot write the repository: %v", err)
		}
		return
	}
	// The helper, as nobody, needs the way to the repository and a copy of
	// the test binary it may run.
	for d := dir; d != filepath.Dir(d) && d != os.TempDir(); d = filepath.Dir(d) {
		must(t, os.Chmod(d, 0o755))
	}
	exe := filepath.Join(dir, "repo.test")
	data, err := os.ReadFile(os.Args[0])
	must(t, err)
	must(t, os.WriteFile(exe, data, 0o755))
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), "UPDEB_TEST_GC_DRY_RUN="+root)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("a dry run as nobody: %v: %s", err, out)
	}
}

// gc on a full disk, which is when an operator runs it, frees the disk: it
// used to stop at once, the record of the first pool file's digest failing
// with ENOSPC, and removed nothing. The pool file's own space makes room
// for its record, which holds its digest as on any disk.
func TestGCOnFullDisk(t *testing.T) {
	dir := t.TempDir()
	disk := testenv.TinyDisk(t, "2m")
	root := filepath.Join(disk, "repo")
	ctx := context.Background()
	r, jump := jumpingKeepRepo(t, root, 1)
	noise := make([]byte, 600<<10)
	rand.Read(noise)
	big := testDeb(t, dir, "big", "1", "amd64", string(noise)) // incompressible
	_, err := r.Publish(ctx, "s", "main", []Package{pkgOf(t, big), pkgOf(t, testDeb(t, dir, "small", "1", "amd64", "small"))})
	must(t, err)
	_, err = r.Remove(ctx, "s", "main", "big", "", "")
	must(t, err)
	jump(byHashGrace)
	_, err = r.Refresh(ctx, nil)
	must(t, err)
	f, err := os.Create(filepath.Join(disk, "filler"))
	must(t, err)
	for err == nil {
		_, err = f.Write(make([]byte, 4096))
	}
	f.Close()
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("filling the disk: %v", err)
	}
	const rel = "pool/main/b/big/big_1_amd64.deb"
	res, err := r.GC(ctx, false)
	if err != nil || !slices.Equal(res.PoolFiles, []string{rel}) {
		t.Fatalf("gc on a full disk: %+v, %v", res, err)
	}
	if _, err := os.Lstat(filepath.Join(root, rel)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("gc left the pool file: %v", err)
	}
	if sum, err := r.collectedDigest(rel); err != nil || sum != sha256File(t, big) {
		t.Fatalf("the recorded digest of %s is %q (%v), want its sha256", rel, sum, err)
	}
}

// A disk that fills while a new generation is staged is named by the
// repository folder: the error named the staging folder
// (dists/.gen/SUITE/.staging-1783035084), gone when it is read, and a full
// disk's hint sent the operator to free the disk holding it.
func TestFullDiskWhileStaging(t *testing.T) {
	disk := testenv.TinyDisk(t, "2m")
	root := filepath.Join(disk, "repo")
	ctx := context.Background()
	r := testRepo(t, root)
	_, err := r.Publish(ctx, "s", "main", []Package{pkgOf(t, testDeb(t, t.TempDir(), "small", "1", "amd64", "small"))})
	must(t, err)
	f, err := os.Create(filepath.Join(disk, "filler"))
	must(t, err)
	for err == nil {
		_, err = f.Write(make([]byte, 4096))
	}
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("filling the disk: %v", err)
	}
	// Room for the keyring and the history record, not for the Release
	// files of the new generation.
	fi, err := f.Stat()
	must(t, err)
	must(t, f.Truncate(fi.Size()-3*4096))
	f.Close()
	_, err = r.Refresh(ctx, nil)
	if !strings.Contains(err.Error(), ".staging-") {
		t.Fatalf("refresh on a full disk: %v, want a failure while staging", err)
	}
	if d := diskfull.Dir(err); d != root {
		t.Errorf("a full disk while staging names %q, want the repository folder %s (%v)", d, root, err)
	}
}

// gc never removes what updeb does not write in the pool: pool/main made a
// symlink to another disk was taken for an unlisted pool file and removed,
// every package of main then 404 for clients; a symlink planted as a pool
// file stopped gc only once it was past its dry run, which listed it. Both
// are refused, dry or not, and stay.
func TestGCRefusesSymlinksInPool(t *testing.T) {
	dir, root := testDirs(t)
	ctx := context.Background()
	r := testRepo(t, root)
	publishEach(t, r, dir, "1")
	refused := func(link string) {
		t.Helper()
		for _, dry := range []bool{true, false} {
			res, err := r.GC(ctx, dry)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), link+" is a symlink, which updeb never writes in the pool") {
				t.Fatalf("gc (dry run %v) with %s a symlink: %+v, %v", dry, link, res, err)
			}
			if _, err := os.Lstat(link); err != nil {
				t.Fatalf("gc (dry run %v) removed the symlink %s: %v", dry, link, err)
			}
		}
	}
	main, elsewhere := filepath.Join(root, "pool/main"), filepath.Join(dir, "bigdisk")
	must(t, os.Rename(main, elsewhere))
	must(t, os.Symlink(elsewhere, main))
	refused(main)
	must(t, os.Remove(main))
	must(t, os.Rename(elsewhere, main))
	planted := filepath.Join(main, "a/app/other_1_amd64.deb")
	must(t, os.Symlink("/etc/hostname", planted))
	refused(planted)
}

// A promote into another component than the source's keeps the source's pool
// file, so it never writes the target component's pool path: that path's
// digest, collected or still in the pool, refuses other bytes of the
// version all the same, as a publish into that component does; once
// collected, into any component of the suite.
func TestPromotedVersionRefusedWhereItWasCollected(t *testing.T) {
	dir, root := testDirs(t)
	ctx := context.Background()
	r, jump := jumpingKeepRepo(t, root, 1)
	_, other := removedFromMain(t, r, dir)
	_, err := r.Publish(ctx, "staging", "beta", []Package{pkgOf(t, other)})
	must(t, err)
	app := []Selector{{Name: "app", Version: "1.0-1"}}
	refused := func(into string, want func(ce *ConflictError) bool) {
		t.Helper()
		before := snapshot(t, root)
		_, err := r.Promote(ctx, Place{"staging", "beta"}, Place{"s", into}, app)
		var ce *ConflictError
		if !errors.As(err, &ce) || !want(ce) || !strings.Contains(err.Error(), "pool/main/a/app/app_1.0-1_amd64.deb") {
			t.Fatalf("promoting other bytes of a version removed from s/main into s/%s: %v", into, err)
		}
		if after := snapshot(t, root); !reflect.DeepEqual(before, after) {
			t.Error("the refused promote changed the repository")
		}
	}
	refused("main", func(ce *ConflictError) bool { return ce.Pooled })
	jump(byHashGrace)
	_, err = r.Refresh(ctx, []string{"s"})
	must(t, err)
	res, err := r.GC(ctx, false)
	must(t, err)
	if !slices.Contains(res.PoolFiles, "pool/main/a/app/app_1.0-1_amd64.deb") {
		t.Fatalf("gc did not collect app 1.0-1: %+v", res)
	}
	for _, into := range []string{"main", "extra"} {
		refused(into, func(ce *ConflictError) bool { return ce.Collected && ce.Component == "main" && ce.Into == into })
	}
}

// A gc killed while it wrote a pool file's digest record left the record's
// temporary file (.NAME.sha256.tmp-*) under .updeb/removed/, and the pool
// file, which the next gc collects: that gc removes the leftover, which
// stayed there forever, taking room on the full disk gc is run to free.
func TestGCRemovesKilledRecordLeftover(t *testing.T) {
	dir, root := testDirs(t)
	ctx := context.Background()
	r, jump := jumpingKeepRepo(t, root, 1)
	publishEach(t, r, dir, "1", "2")
	_, err := r.Remove(ctx, "s", "main", "app", "1", "")
	must(t, err)
	jump(byHashGrace)
	_, err = r.Refresh(ctx, nil)
	must(t, err)
	const rel = "pool/main/a/app/app_1_amd64.deb"
	dst := r.collectedFile(rel)
	must(t, os.MkdirAll(filepath.Dir(dst), 0o755))
	leftover := filepath.Join(filepath.Dir(dst), atomicfile.TempPrefix(filepath.Base(dst))+"1234")
	must(t, os.WriteFile(leftover, []byte("partial"), 0o644))
	res, err := r.GC(ctx, false)
	if err != nil || !slices.Equal(res.PoolFiles, []string{rel}) {
		t.Fatalf("gc: %+v, %v", res, err)
	}
	if _, err := os.Lstat(leftover); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("gc left the temporary file of a killed record: %v", err)
	}
	if sum, err := r.collectedDigest(rel); err != nil || sum == "" {
		t.Errorf("the recorded digest of %s is %q (%v)", rel, sum, err)
	}
}

// A refresh of every suite (the timer's) where one suite's link dists/SUITE
// is lost refreshes the others and says how to restore the link: it
// skipped that suite without a word, and its Release ran out.
func TestRefreshAllSaysWhereTheSuiteLinkIsLost(t *testing.T) {
	dir, root := testDirs(t)
	ctx := context.Background()
	r := testRepo(t, root)
	var logs bytes.Buffer
	r.opts.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	app := pkgOf(t, testDeb(t, dir, "app", "1-1", "amd64", "v1"))
	for _, s := range []string{"s", "t"} {
		_, err := r.Publish(ctx, s, "main", []Package{app})
		must(t, err)
	}
	link, target := loseLink(t, root, "t")
	res, err := r.Refresh(ctx, nil)
	must(t, err)
	if len(res) != 1 || res[0].Suite != "s" {
		t.Errorf("refreshed %+v, want suite s", res)
	}
	if !strings.Contains(logs.String(), "ln -sfn "+target+" "+link) {
		t.Errorf("no warning saying how to restore %s:\n%s", link, logs.String())
	}
}

// loseLink removes suite's link dists/SUITE, as a copy that leaves symbolic
// links out does: the link's path and what it pointed at.
func loseLink(t *testing.T, root, suite string) (link, target string) {
	t.Helper()
	link = filepath.Join(root, "dists", suite)
	target, err := os.Readlink(link)
	must(t, err)
	must(t, os.Remove(link))
	return link, target
}
