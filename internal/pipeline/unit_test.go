package pipeline

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/dirglob"
	"github.com/updeb/updeb/internal/source"
	"github.com/updeb/updeb/internal/testkit/testenv"
	"github.com/updeb/updeb/pkg/archive"
)

// tarballOf is a .tar.gz of regular files, given as name, content pairs in
// archive order.
func tarballOf(t testing.TB, files ...string) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for i := 0; i+1 < len(files); i += 2 {
		tw.WriteHeader(&tar.Header{Name: files[i], Mode: 0o755, Size: int64(len(files[i+1])), Typeflag: tar.TypeReg, Format: tar.FormatGNU})
		tw.Write([]byte(files[i+1]))
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

// pairRecipe adds recipe "pair": two sources and two packages, one per
// source, for the architectures given (arch -> the second source's tarball);
// the first source is a good tarball.
func pairRecipe(t testing.TB, root, mirror string, second map[string][]byte) {
	t.Helper()
	good := tarballOf(t, "a/tool-a", "#!/bin/sh\necho a\n")
	dir := filepath.Join(mirror, "pair")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "good.tar.gz"), good, 0o644)
	sum := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
	var arches, goodPins, secondPins []string
	for arch, data := range second {
		arches = append(arches, arch)
		os.WriteFile(filepath.Join(dir, "second-"+arch+".tar.gz"), data, 0o644)
		goodPins = append(goodPins, arch+": "+sum(good))
		secondPins = append(secondPins, arch+": "+sum(data))
	}
	rec := fmt.Sprintf(`name: pair
version: 1.0.0
release-date: 2026-01-01
homepage: https://releases.example.org/pair
license: Apache-2.0
copyright: nobody
architectures: [%s]
sources:
  - name: good
    url: https://releases.example.org/pair/good.tar.gz
    sha256: {%s}
    signature: {none: "test fixture"}
  - name: second
    url: https://releases.example.org/pair/second-{{.DebArch}}.tar.gz
    sha256: {%s}
    signature: {none: "test fixture"}
packages:
  - name: pair-a
    summary: first package of the pair fixture
    description: |
      Built from the first source.
    section: utils
    files:
      - {source: good, path: a/tool-a, dest: /usr/bin/tool-a, mode: "0755"}
  - name: pair-b
    summary: second package of the pair fixture
    description: |
      Built from the second source.
    section: utils
    files:
      - {source: second, path: b/tool-b, dest: /usr/bin/tool-b, mode: "0755"}
`, strings.Join(arches, ", "), strings.Join(goodPins, ", "), strings.Join(secondPins, ", "))
	if err := os.WriteFile(filepath.Join(root, "recipes", "pair.yaml"), []byte(rec), 0o644); err != nil {
		t.Fatal(err)
	}
}

// leftovers lists what a failed or interrupted build must not leave in out:
// packages, provenance records, state records, staging folders, journals.
func leftovers(t testing.TB, out string, recipe string) []string {
	found := ofRecipe(t, out, recipe, "")
	for _, g := range []string{".updeb-build-*", StateDir + "/" + recipe + "_*", StateDir + "/" + journalPrefix + "*"} {
		m, err := dirglob.Glob(out, g)
		if err != nil {
			t.Fatal(err)
		}
		found = append(found, m...)
	}
	return found
}

// ofRecipe lists the files in out whose names start with recipe's packages'
// (RECIPE_... or RECIPE-..., the pair recipe's pair-a) and end in suffix.
// (filepath.Glob takes no "[-_]": a syntax error it reports as no match.)
func ofRecipe(t testing.TB, out, recipe, suffix string) []string {
	t.Helper()
	var found []string
	for _, sep := range []string{"-", "_"} {
		m, err := dirglob.Glob(out, recipe+sep+"*"+suffix)
		if err != nil {
			t.Fatal(err)
		}
		found = append(found, m...)
	}
	return found
}

// A recipe whose later source fails leaves nothing: not the package already
// written from the earlier source, not its provenance, not a state record.
func TestLaterSourceFailureLeavesNothing(t *testing.T) {
	bad := map[string][]byte{
		"hostile archive": hostileTarball(t),
		"missing member":  tarballOf(t, "b/other", "x"),
		"corrupt gzip":    append(tarballOf(t, "b/tool-b", "b")[:40], 0, 1, 2, 3),
	}
	for name, data := range bad {
		t.Run(name, func(t *testing.T) {
			root, mirror := project(t)
			pairRecipe(t, root, mirror, map[string][]byte{"amd64": data})
			out := filepath.Join(t.TempDir(), "out")
			res, err := Run(context.Background(), jobs(t, root, "amd64", "pair"), options(t, mirror, out))
			if err == nil || !errors.Is(err, archive.ErrUnsafe) && !errors.Is(err, archive.ErrMissing) && !errors.Is(err, archive.ErrCorrupt) {
				t.Fatalf("err = %v, want the second source refused", err)
			}
			if len(res[0].Outputs) != 0 {
				t.Errorf("result lists outputs %+v", res[0].Outputs)
			}
			if l := leftovers(t, out, "pair"); len(l) != 0 {
				t.Fatalf("a failed recipe left %v", l)
			}
		})
	}
}

// The unit is the recipe across the architectures of the run: arm64 failing
// takes amd64's packages with it, and says so.
func TestOneArchitectureFailingDiscardsTheRecipe(t *testing.T) {
	root, mirror := project(t)
	pairRecipe(t, root, mirror, map[string][]byte{
		"amd64": tarballOf(t, "b/tool-b", "#!/bin/sh\necho b\n"),
		"arm64": hostileTarball(t),
	})
	out := filepath.Join(t.TempDir(), "out")
	js := append(jobs(t, root, "amd64", "pair"), jobs(t, root, "arm64", "pair")...)
	js = append(js, jobs(t, root, "amd64", "hello")...)
	opts := options(t, mirror, out)
	var log bytes.Buffer // "wrote" names only what is in out
	opts.Source.Logger = slog.New(slog.NewTextHandler(&log, nil))
	res, err := Run(context.Background(), js, opts)
	if !errors.Is(err, archive.ErrUnsafe) || !errors.Is(err, ErrNotWritten) {
		t.Fatalf("err = %v, want arm64's refusal and amd64's packages not written", err)
	}
	if res[0].Err == nil || !strings.Contains(res[0].Error, "pair (arm64) failed") {
		t.Errorf("amd64 result: %+v", res[0])
	}
	if l := leftovers(t, out, "pair"); len(l) != 0 {
		t.Fatalf("a failed recipe left %v", l)
	}
	if res[2].Err != nil || len(debs(t, out)) != 1 {
		t.Fatalf("the unrelated recipe: %v, outputs %v", res[2].Err, debs(t, out))
	}
	if strings.Contains(log.String(), "msg=wrote recipe=pair") || !strings.Contains(log.String(), "msg=wrote recipe=hello arch=amd64 file=hello_") {
		t.Errorf("the log says wrote for what is not in the output folder, or not for what is:\n%s", log.String())
	}
	// Fixed, the recipe builds as a whole.
	pairRecipe(t, root, mirror, map[string][]byte{
		"amd64": tarballOf(t, "b/tool-b", "#!/bin/sh\necho b\n"),
		"arm64": tarballOf(t, "b/tool-b", "#!/bin/sh\necho b\n"),
	})
	js = append(jobs(t, root, "amd64", "pair"), jobs(t, root, "arm64", "pair")...)
	log.Reset()
	if _, err := Run(context.Background(), js, opts); err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(filepath.Join(out, "pair-*.deb")); len(m) != 4 {
		t.Fatalf("outputs %v", m)
	}
	if n := strings.Count(log.String(), "msg=wrote recipe=pair"); n != 4 {
		t.Errorf("%d wrote lines for 4 packages:\n%s", n, log.String())
	}
}

// A commit interrupted between its renames is finished by the next run, also
// in a folder whose name a glob would read as a pattern (the journal was not
// found there: PendingCommit said none, and nothing finished it).
func TestInterruptedCommitIsFinished(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out [1]")
	stage := filepath.Join(out, stagePrefix+"1")
	os.MkdirAll(filepath.Join(out, StateDir), 0o755)
	os.MkdirAll(stage, 0o755)
	outs := []Output{{Package: "p", File: "p_1_amd64.deb", Size: 1}, {Package: "q", File: "q_1_amd64.deb", Size: 1}}
	for _, o := range outs {
		os.WriteFile(filepath.Join(stage, o.File), []byte("x"), 0o644)
		os.WriteFile(filepath.Join(stage, o.File+ProvenanceSuffix), []byte("{}"), 0o644)
	}
	st := &staged{dir: stage, state: filepath.Join(out, StateDir, "p_amd64.json"), key: "k", outputs: outs}
	// Write the journal and do the first rename only: a kill -9 right there.
	var j journal
	for _, o := range outs {
		for _, n := range []string{o.File, o.File + ProvenanceSuffix} {
			j.Renames = append(j.Renames, rename{From: filepath.Join(filepath.Base(stage), n), To: n})
		}
	}
	j.States = []journalState{{Path: filepath.Join(StateDir, "p_amd64.json"), Key: st.key, Outputs: outs}}
	data, _ := json.Marshal(j)
	os.WriteFile(journalPath(out, "p"), data, 0o644)
	os.Rename(filepath.Join(stage, outs[0].File), filepath.Join(out, outs[0].File))
	if !PendingCommit(out) {
		t.Fatal("PendingCommit does not see the journal")
	}
	if _, err := Run(context.Background(), nil, Options{OutDir: out, Source: source.Options{Now: time.Now}}); err != nil {
		t.Fatal(err)
	}
	for _, o := range outs {
		for _, n := range []string{o.File, o.File + ProvenanceSuffix} {
			if _, err := os.Stat(filepath.Join(out, n)); err != nil {
				t.Errorf("%s not in place after recovery: %v", n, err)
			}
		}
	}
	if PendingCommit(out) || len(leftovers(t, out, "zzz")) != 0 {
		t.Errorf("recovery left %v", leftovers(t, out, "zzz"))
	}
	if _, err := os.Stat(filepath.Join(out, StateDir, "p_amd64.json")); err != nil {
		t.Errorf("state record not written: %v", err)
	}
}

// kill -9 at random moments of a multi-package, multi-recipe build: at every
// moment each .deb under a final name is complete, each recipe's packages are
// all there or none are (or a journal says a commit is pending), and each run
// finishes what the killed one left; the last one completes everything with
// the bytes of an uninterrupted build, and leaves no staging folder behind.
func TestKilledBuildKeepsRecipesWhole(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	rounds := 3
	if n := os.Getenv("UPDEB_KILL_ROUNDS"); n != "" {
		fmt.Sscan(n, &rounds)
	}
	root, mirror := project(t)
	payload := strings.Repeat("0123456789abcdef", 1<<14) // 256 KiB per member: builds take a moment
	pairRecipe(t, root, mirror, map[string][]byte{"amd64": tarballOf(t, "b/tool-b", payload)})
	env := []string{"HELPER_RECIPES=pair,hello,pingd", "HELPER_COMPRESSION=gzip"}
	ref := filepath.Join(t.TempDir(), "ref")
	start := time.Now()
	if b, err := helperBuild(t, root, mirror, ref, env...).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	full := time.Since(start)
	want, _ := filepath.Glob(filepath.Join(ref, "*.deb"))
	if len(want) != 4 {
		t.Fatalf("reference build made %v", want)
	}
	out := filepath.Join(t.TempDir(), "out")
	check := func(when string) {
		debs, _ := filepath.Glob(filepath.Join(out, "*.deb"))
		for _, p := range debs {
			if b, err := exec.Command("dpkg-deb", "--info", p).CombinedOutput(); err != nil {
				t.Fatalf("%s: %s is partial: %v\n%s", when, p, err, b)
			}
		}
		if PendingCommit(out) {
			return
		}
		for r, n := range map[string]int{"pair": 2, "hello": 1, "pingd": 1} {
			m, p := ofRecipe(t, out, r, ".deb"), ofRecipe(t, out, r, ".deb"+ProvenanceSuffix)
			if (len(m) != 0 && len(m) != n) || len(p) != len(m) {
				t.Fatalf("%s: recipe %s has %d of %d packages and %d provenance records", when, r, len(m), n, len(p))
			}
		}
	}
	for i := range rounds {
		c := helperBuild(t, root, mirror, out, env...)
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		delay := time.Duration(rand.Int64N(int64(full)))
		time.Sleep(delay)
		c.Process.Kill()
		c.Wait()
		check(fmt.Sprintf("round %d, killed after %s of %s", i, delay, full))
	}
	if b, err := helperBuild(t, root, mirror, out, env...).CombinedOutput(); err != nil {
		t.Fatalf("run after the kills: %v\n%s", err, b)
	}
	check("after the last run")
	for _, p := range want {
		if sha256File(t, p) != sha256File(t, filepath.Join(out, filepath.Base(p))) {
			t.Errorf("%s differs from the uninterrupted build's", filepath.Base(p))
		}
	}
	if l, _ := filepath.Glob(filepath.Join(out, ".updeb-build-*")); len(l) != 0 || PendingCommit(out) {
		t.Fatalf("leftovers %v", l)
	}
}

// FuzzCommitJournal: whatever a journal holds (it is read back after a kill),
// finishing it never touches anything outside the output folder, and never
// panics.
func FuzzCommitJournal(f *testing.F) {
	f.Add([]byte(`{"renames":[{"from":".updeb-build-stage-1/a.deb","to":"a.deb"}],"states":[{"path":".updeb-state/a_amd64.json","key":"k","outputs":[]}]}`))
	f.Add([]byte(`{"renames":[{"from":"../outside","to":"a.deb"},{"from":"a","to":"../../x"}]}`))
	f.Add([]byte(`{"states":[{"path":"../../etc/x","key":"k"}]}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, data []byte) {
		top := t.TempDir()
		out := filepath.Join(top, "out")
		os.MkdirAll(filepath.Join(out, StateDir), 0o755)
		os.MkdirAll(filepath.Join(out, stagePrefix+"1"), 0o755)
		os.WriteFile(filepath.Join(out, stagePrefix+"1", "a.deb"), []byte("a"), 0o644)
		os.WriteFile(filepath.Join(top, "outside"), []byte("keep"), 0o644)
		os.WriteFile(journalPath(out, "x"), data, 0o644)
		recoverCommits(out, slog.New(slog.DiscardHandler))
		entries, _ := os.ReadDir(top)
		if len(entries) != 2 {
			t.Fatalf("the folder around out holds %d entries after recovery", len(entries))
		}
		if b, err := os.ReadFile(filepath.Join(top, "outside")); err != nil || string(b) != "keep" {
			t.Fatalf("a file outside the output folder was touched: %v", err)
		}
	})
}

// A folder where a package or its record goes stops the commit before it
// moves anything: not the package without its record (nor the recipe's
// first packages without the rest), and no journal that a later run would
// "finish" by recording the recipe as built. The error names the folder.
func TestFolderInTheWayMovesNothing(t *testing.T) {
	root, mirror := project(t)
	out := filepath.Join(t.TempDir(), "out")
	record := filepath.Join(out, "hello_1.2.0-1_amd64.deb"+ProvenanceSuffix)
	if err := os.MkdirAll(filepath.Join(record, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), jobs(t, root, "amd64", "hello"), options(t, mirror, out))
	if l := leftovers(t, out, "hello"); len(l) != 1 || l[0] != record {
		t.Fatalf("a commit that could not be done (%v) left %v", err, l)
	}
	if err == nil || !strings.Contains(err.Error(), record+" is a folder") {
		t.Fatalf("err = %v, want the folder in the way named", err)
	}
	if len(res[0].Outputs) != 0 {
		t.Errorf("result lists outputs %+v", res[0].Outputs)
	}
	os.RemoveAll(record)
	res, err = Run(context.Background(), jobs(t, root, "amd64", "hello"), options(t, mirror, out))
	if err != nil || res[0].Skipped {
		t.Fatalf("once the folder is gone: %v, %+v", err, res)
	}
	if _, err := os.Stat(record); err != nil {
		t.Fatal(err)
	}
}

// A build killed while it wrote a state record or a commit journal (the
// fsync before the rename takes milliseconds) leaves its temporary file in
// the state folder; the next build there, under the folder's lock, removes
// it, as it removes the staging folders of the output folder. Such files
// piled up, one per kill, in every output folder a CI job builds into. A
// file of another name there is not updeb's, and stays.
func TestKilledStateWriteRemovedByNextBuild(t *testing.T) {
	root, mirror := project(t)
	out := filepath.Join(t.TempDir(), "out")
	state := filepath.Join(out, StateDir)
	if err := os.MkdirAll(state, 0o755); err != nil {
		t.Fatal(err)
	}
	left := []string{".hello_amd64.json.tmp-2604115011", "." + journalPrefix + "hello.json.tmp-917732"}
	for _, name := range append(left, "notes.txt") {
		if err := os.WriteFile(filepath.Join(state, name), []byte(`{"key":`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Run(context.Background(), jobs(t, root, "amd64", "hello"), options(t, mirror, out)); err != nil {
		t.Fatal(err)
	}
	for _, name := range left {
		if _, err := os.Lstat(filepath.Join(state, name)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: the killed write's temporary file is still there (%v)", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(state, "notes.txt")); err != nil {
		t.Errorf("a file of another name in the state folder: %v", err)
	}
}
