package repo

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/updeb/updeb/pkg/atomicfile"
	"github.com/updeb/updeb/pkg/control"
)

// The kill and concurrency tests re-execute the test binary in this helper
// mode: it runs one write on suite s (UPDEB_TEST_OP: "publish DEB",
// "refresh", "promote FROM", "rollback", "remove NAME=VERSION" or "gc") and,
// when UPDEB_TEST_STOP_AT names a step, announces it on stdout ("at STEP")
// and waits there: to be killed, or until a line arrives on stdin.
func TestMain(m *testing.M) {
	if os.Getenv("UPDEB_TEST_WRITE_HELPER") == "1" {
		os.Exit(writeHelper())
	}
	if root := os.Getenv("UPDEB_TEST_GC_DRY_RUN"); root != "" { // TestGCDryRunByAReader
		if _, err := Open(root, Options{}).GC(context.Background(), true); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func writeHelper() int {
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "helper:", err)
		if errors.Is(err, ErrNotFound) {
			return 3
		}
		return 2
	}
	keyFile, err := os.Open(os.Getenv("UPDEB_TEST_KEY"))
	if err != nil {
		return fail(err)
	}
	signer, err := ReadSigner(keyFile, keyFile.Name())
	if err != nil {
		return fail(err)
	}
	stopAt := os.Getenv("UPDEB_TEST_STOP_AT")
	r := Open(os.Getenv("UPDEB_TEST_REPO"), Options{
		Settings: testSettings("amd64"),
		Signer:   signer,
		Logger:   slog.New(slog.DiscardHandler),
		Hook: func(step string) {
			if step == stopAt {
				fmt.Println("at", step)
				bufio.NewReader(os.Stdin).ReadString('\n') //nolint:errcheck // any line, or EOF, goes on
			}
		},
	})
	ctx := context.Background()
	op, arg, _ := strings.Cut(os.Getenv("UPDEB_TEST_OP"), " ")
	switch op {
	case "publish":
		var out []byte
		var ctl control.Paragraph
		if out, err = exec.Command("dpkg-deb", "-f", arg).Output(); err == nil {
			ctl, err = control.ParseOne(bytes.NewReader(out), arg)
		}
		if err == nil {
			_, err = r.Publish(ctx, "s", "main", []Package{{Path: arg, Control: ctl}})
		}
	case "refresh":
		_, err = r.Refresh(ctx, []string{"s"})
	case "promote":
		_, err = r.Promote(ctx, Place{Suite: arg}, Place{Suite: "s"}, nil)
	case "rollback":
		_, err = r.Rollback(ctx, "s", 0)
	case "remove":
		name, version, _ := strings.Cut(arg, "=")
		_, err = r.Remove(ctx, "s", "main", name, version, "")
	case "gc":
		_, err = r.GC(ctx, false)
	default:
		err = fmt.Errorf("unknown operation %q", op)
	}
	if err != nil {
		return fail(err)
	}
	fmt.Println("done")
	return 0
}

// helperCmd runs the write helper on repository root. Its TMPDIR is the
// test's: a helper killed at a random time while its dpkg-deb -f ran took
// dpkg-deb with it (SIGPIPE on the helper's closed pipe), and dpkg-deb's
// scratch folder stayed in /tmp.
func helperCmd(t *testing.T, root, keyFile, op, stopAt string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "UPDEB_TEST_WRITE_HELPER=1", "UPDEB_TEST_KEY="+keyFile,
		"UPDEB_TEST_REPO="+root, "UPDEB_TEST_OP="+op, "UPDEB_TEST_STOP_AT="+stopAt, "TMPDIR="+t.TempDir())
	cmd.Stderr = os.Stderr
	return cmd
}

// startStopped starts the helper and waits until it announces stopAt.
func startStopped(t *testing.T, cmd *exec.Cmd, stopAt string) io.WriteCloser {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	must(t, err)
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "at "+stopAt+"\n" {
		t.Fatalf("helper: read %q, %v; want \"at %s\"", line, err, stopAt)
	}
	return stdin
}

func writeTestKey(t *testing.T, dir string) string {
	keyFile := filepath.Join(dir, "key.asc")
	testSigner(t)
	must(t, os.WriteFile(keyFile, testKey.SecretArmored, 0o600))
	return keyFile
}

// TestKilledWritesLeaveRepositoryWorking kills every kind of write with
// SIGKILL at each of its steps and at random times, and checks after each
// that apt still updates (no warning, no error) and installs from the
// repository, and that the write then completes.
func TestKilledWritesLeaveRepositoryWorking(t *testing.T) {
	t.Parallel() // mostly waiting: for the clock, for apt, for a helper
	dir, root := testDirs(t)
	keyFile := writeTestKey(t, dir)
	r := realRepo(t, root, testSettings("amd64"), nil)
	ctx := context.Background()
	var first []Package
	for _, v := range []string{"0.1-1", "0.2-1", "0.3-1", "1.0-1"} {
		first = append(first, pkgOf(t, testDeb(t, dir, "app", v, "amd64", "v"+v)))
	}
	_, err := r.Publish(ctx, "s", "main", first)
	must(t, err)
	a := newAptClient(t, root, "s", "main")
	a.update()

	versions := 0
	newDeb := func() string {
		versions++
		v := fmt.Sprintf("2.%d-1", versions)
		return testDeb(t, dir, "app", v, "amd64", "v"+v)
	}
	removable := []string{"0.1-1", "0.2-1", "0.3-1"}
	writes := []struct {
		op    string
		steps []string
		arg   func() string
	}{
		{"publish", []string{"pool", "staged", "switched", "random"}, newDeb},
		{"refresh", []string{"staged", "switched", "random"}, nil},
		{"promote", []string{"staged", "switched", "random"}, func() string {
			_, err := r.Publish(ctx, "staging", "main", []Package{pkgOf(t, newDeb())})
			must(t, err)
			return "staging"
		}},
		{"rollback", []string{"staged", "switched", "random"}, nil},
		{"remove", []string{"staged", "switched", "random"}, func() string {
			v := removable[0]
			removable = removable[1:]
			return "app=" + v
		}},
		{"gc", []string{"gc", "random"}, nil},
	}
	for _, w := range writes {
		for _, step := range w.steps {
			op := w.op
			if w.arg != nil {
				op += " " + w.arg()
			}
			cmd := helperCmd(t, root, keyFile, op, step)
			if step == "random" {
				must(t, cmd.Start())
				time.Sleep(time.Duration(rand.IntN(80)) * time.Millisecond)
			} else {
				startStopped(t, cmd, step)
			}
			must(t, cmd.Process.Signal(syscall.SIGKILL))
			cmd.Wait() //nolint:errcheck // killed on purpose

			a.update()
			list, err := r.List("s")
			must(t, err)
			newest := list[len(list)-1].Version
			for _, e := range list {
				if e.Version > newest {
					newest = e.Version
				}
			}
			a.install("app", newest, "v"+newest)
			t.Logf("%s killed at %s: %d versions listed", op, step, len(list))

			// The same write then completes (no stale lock; leftovers
			// reused or cleaned). A removal that went live before the kill
			// finds nothing left to remove.
			done := helperCmd(t, root, keyFile, op, "")
			out, err := done.Output()
			var exit *exec.ExitError
			if w.op == "remove" && errors.As(err, &exit) && exit.ExitCode() == 3 {
				err, out = nil, []byte("done\n")
			}
			if err != nil || !strings.HasSuffix(string(out), "done\n") {
				t.Fatalf("%s after a kill at %s: %v: %s", op, step, err, out)
			}
			a.update()
		}
	}
	// Leftovers of killed writes are cleaned: no staging directory, no
	// generation after the live one, no temporary pool file.
	live, err := os.Readlink(filepath.Join(root, "dists/s"))
	must(t, err)
	n, err := strconv.Atoi(strings.TrimPrefix(live, ".gen/s/"))
	must(t, err)
	gens, err := os.ReadDir(filepath.Join(root, "dists/.gen/s"))
	must(t, err)
	for _, g := range gens {
		if m, err := strconv.Atoi(g.Name()); err != nil || m > n {
			t.Errorf("dists/.gen/s holds %s with generation %d live", g.Name(), n)
		}
	}
	tmps, err := filepath.Glob(filepath.Join(root, "pool/main/a/app/.tmp-*"))
	must(t, err)
	if len(tmps) > 0 {
		t.Errorf("temporary pool files of killed publishes left: %v", tmps)
	}
	if tmps, _ = filepath.Glob(filepath.Join(root, ".archive-keyring.*.tmp-*")); len(tmps) > 0 {
		t.Errorf("temporary keyrings of killed writes left: %v", tmps)
	}
}

// Two writes at once serialise on the repository lock: the second waits
// until the first has switched in its generation, then writes the next one.
func TestConcurrentWritesSerialise(t *testing.T) {
	t.Parallel() // mostly waiting: for the clock, for apt, for a helper
	dir, root := testDirs(t)
	keyFile := writeTestKey(t, dir)
	_, err := realRepo(t, root, testSettings("amd64"), nil).Publish(context.Background(), "s", "main", []Package{pkgOf(t, testDeb(t, dir, "app", "1-1", "amd64", "v1"))})
	must(t, err)

	first := helperCmd(t, root, keyFile, "publish "+testDeb(t, dir, "app", "2-1", "amd64", "v2"), "staged")
	release := startStopped(t, first, "staged")
	second := helperCmd(t, root, keyFile, "publish "+testDeb(t, dir, "other", "3-1", "amd64", "v3"), "")
	var out bytes.Buffer
	second.Stdout = &out
	must(t, second.Start())
	secondDone := make(chan error, 1)
	go func() { secondDone <- second.Wait() }()
	select {
	case err := <-secondDone:
		t.Fatalf("the second write finished while the first held the lock: %v %s", err, out.String())
	case <-time.After(time.Second):
	}
	fmt.Fprintln(release, "go on")
	must(t, first.Wait())
	if err := <-secondDone; err != nil || out.String() != "done\n" {
		t.Fatalf("second write: %v %q", err, out.String())
	}
	hist, err := realRepo(t, root, SettingsChange{}, nil).History("s")
	must(t, err)
	if len(hist) != 3 || hist[1].Added[0].Package != "app" || hist[2].Added[0].Package != "other" || !hist[2].Live {
		t.Fatalf("history after two writes at once: %+v", hist)
	}
	a := newAptClient(t, root, "s", "main")
	a.update()
	a.install("app", "2-1", "v2")
	a.install("other", "3-1", "v3")
}

// An old generation is renamed aside before it is removed: a write killed
// while pruning never leaves a numbered generation half-removed (which
// history would fail to read and rollback would offer), only a dot folder
// that history and rollback ignore and the next write or gc sweeps.
func TestPruneNeverLeavesAHalfRemovedGeneration(t *testing.T) {
	t.Parallel() // mostly waiting: for the clock, for apt, for a helper
	dir, root := testDirs(t)
	keyFile := writeTestKey(t, dir)
	change := testSettings("amd64")
	change.Keep = ptr(1)
	r := realRepo(t, root, change, nil)
	ctx := context.Background()
	_, err := r.Publish(ctx, "s", "main", []Package{pkgOf(t, testDeb(t, dir, "app", "1-1", "amd64", "v1"))})
	must(t, err)
	a := newAptClient(t, root, "s", "main")
	a.update()

	// Killed after generation 1 was renamed aside, before its removal; then
	// half of it removed, as a kill during the removal would leave it.
	cmd := helperCmd(t, root, keyFile, "publish "+testDeb(t, dir, "app", "2-1", "amd64", "v2"), "aside")
	startStopped(t, cmd, "aside")
	must(t, cmd.Process.Signal(syscall.SIGKILL))
	cmd.Wait() //nolint:errcheck // killed on purpose
	gens := filepath.Join(root, "dists/.gen/s")
	aside := filepath.Join(gens, asidePrefix+"1")
	for _, f := range []string{"Release", "InRelease", "main/binary-amd64/Packages"} {
		must(t, os.Remove(filepath.Join(aside, f)))
	}
	wholeGenerations := func() []string {
		t.Helper()
		des, err := os.ReadDir(gens)
		must(t, err)
		var names []string
		for _, de := range des {
			names = append(names, de.Name())
			if n, err := strconv.Atoi(de.Name()); err == nil {
				if _, err := r.readGeneration("s", n); err != nil {
					t.Fatalf("generation %d is visible but not whole: %v", n, err)
				}
			}
		}
		return names
	}
	if names := wholeGenerations(); strings.Join(names, " ") != asidePrefix+"1 2" {
		t.Fatalf("after a kill while pruning, dists/.gen/s holds %v, want %s1 (aside) and 2", names, asidePrefix)
	}
	a.update()
	a.install("app", "2-1", "v2")
	hist, err := r.History("s")
	must(t, err)
	if len(hist) != 2 || hist[0].Generation != 1 || hist[0].Kept || !hist[1].Live || !hist[1].Kept {
		t.Fatalf("history with generation 1 half-removed aside: %+v", hist)
	}
	if _, err := r.Rollback(ctx, "s", 1); !errors.Is(err, ErrNotFound) {
		t.Fatalf("rollback to the generation removed aside: %v, want ErrNotFound", err)
	}

	// The next write sweeps it; so does gc, for a suite not written since.
	_, err = r.Refresh(ctx, nil)
	must(t, err)
	if names := wholeGenerations(); strings.Join(names, " ") != "3" {
		t.Fatalf("after the next write, dists/.gen/s holds %v, want 3", names)
	}
	must(t, os.MkdirAll(filepath.Join(gens, asidePrefix+"2", "main"), 0o755))
	// A whole generation after the live one: what a write killed before its switch leaves.
	if out, err := exec.Command("cp", "-a", filepath.Join(gens, "3"), filepath.Join(gens, "7")).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	// The dry run lists exactly what gc then removes.
	dry, err := r.GC(ctx, true)
	must(t, err)
	if got := strings.Join(dry.Generations, " "); got != "s/7 s/"+asidePrefix+"2" {
		t.Fatalf("gc --dry-run lists generations %q, want s/7 and s/%s2", got, asidePrefix)
	}
	if names := wholeGenerations(); strings.Join(names, " ") != asidePrefix+"2 3 7" {
		t.Fatalf("after gc --dry-run, dists/.gen/s holds %v, want it untouched", names)
	}
	res, err := r.GC(ctx, false)
	must(t, err)
	if !slices.Equal(res.Generations, dry.Generations) {
		t.Fatalf("gc removed %v, its dry run said %v", res.Generations, dry.Generations)
	}
	if names := wholeGenerations(); strings.Join(names, " ") != "3" {
		t.Fatalf("after gc, dists/.gen/s holds %v, want 3", names)
	}
	a.update()
}

// A publish killed after it linked its packages into the pool, before its
// generation went live, leaves no pool file behind for the next write: one
// left there passed for published bytes (a rebuild of its version, never
// listed anywhere, was refused as "already published", and gc recorded its
// digest as a collected version's, refusing other bytes for good), as
// TestRefusedPublishLeavesNoPoolFile checks for a publish that fails.
func TestKilledPublishLeavesNoPoolFile(t *testing.T) {
	dir, root := testDirs(t)
	keyFile := writeTestKey(t, dir)
	r := realRepo(t, root, testSettings("amd64"), nil)
	ctx := context.Background()
	_, err := r.Publish(ctx, "s", "main", []Package{pkgOf(t, testDeb(t, dir, "app", "1-1", "amd64", "v1"))})
	must(t, err)
	for i, step := range []string{"pool", "staged"} {
		v := fmt.Sprintf("%d-1", i+2)
		cmd := helperCmd(t, root, keyFile, "publish "+testDeb(t, t.TempDir(), "app", v, "amd64", "first build"), step)
		startStopped(t, cmd, step)
		must(t, cmd.Process.Signal(syscall.SIGKILL))
		cmd.Wait() //nolint:errcheck // killed on purpose
		pool := filepath.Join(root, "pool/main/a/app/app_"+v+"_amd64.deb")
		if _, err := os.Lstat(pool); err != nil {
			t.Fatalf("killed at %s: the publish did not link its pool file (%v): the test misses the window", step, err)
		}
		// gc is a write too: it never takes the file for a collected one.
		if i == 0 {
			_, err = r.GC(ctx, false)
			must(t, err)
			if _, err := os.Lstat(r.collectedFile("pool/main/a/app/app_" + v + "_amd64.deb")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("killed at %s: gc recorded the never published pool file as collected (%v)", step, err)
			}
		}
		if _, err := r.Publish(ctx, "s", "main", []Package{pkgOf(t, testDeb(t, t.TempDir(), "app", v, "amd64", "second build"))}); err != nil {
			t.Fatalf("killed at %s: another build of %s, never listed: %v", step, v, err)
		}
	}
	if list, err := r.List("s"); err != nil || len(list) != 3 {
		t.Fatalf("the suite lists %v (%v), want 1-1, 2-1 and 3-1", list, err)
	}
	if left, err := os.ReadDir(filepath.Join(root, pendingPoolDir)); len(left) > 0 || err != nil {
		t.Fatalf("pending publish records stay after the publishes that followed: %v (%v)", left, err)
	}
}

// The first write of a suite (a publish, a promote) killed before its
// switch leaves nothing the next write must ask about: the write run again
// starts the suite. A killed publish's pool files and generation go
// (recoverPublish); a killed promote's generation 1 is replaced, as the
// link the write made to switch with says it was never live: without that
// link, a lone generation 1 is a suite published once whose link was lost,
// and is refused (TestWriteRefusedWhereTheFirstGenerationsLinkIsLost).
func TestKilledFirstWriteStartsAnew(t *testing.T) {
	for _, op := range []string{"publish", "promote"} {
		t.Run(op, func(t *testing.T) {
			dir, root := testDirs(t)
			keyFile := writeTestKey(t, dir)
			r := realRepo(t, root, testSettings("amd64"), nil)
			ctx := context.Background()
			deb := testDeb(t, dir, "app", "1-1", "amd64", "v1")
			arg, write := "publish "+deb, func() error {
				_, err := r.Publish(ctx, "s", "main", []Package{pkgOf(t, deb)})
				return err
			}
			if op == "promote" {
				_, err := r.Publish(ctx, "staging", "main", []Package{pkgOf(t, deb)})
				must(t, err)
				arg, write = "promote staging", func() error {
					_, err := r.Promote(ctx, Place{Suite: "staging"}, Place{Suite: "s"}, nil)
					return err
				}
			}
			cmd := helperCmd(t, root, keyFile, arg, "staged")
			startStopped(t, cmd, "staged")
			must(t, cmd.Process.Signal(syscall.SIGKILL))
			cmd.Wait() //nolint:errcheck // killed on purpose
			if _, err := os.Lstat(filepath.Join(root, "dists/.gen/s/1")); err != nil {
				t.Fatalf("killed at staged: no generation 1 (%v): the test misses the window", err)
			}
			if err := write(); err != nil {
				t.Fatalf("the %s after a first %s killed before its switch: %v", op, op, err)
			}
			if checks, err := r.Verify(ctx, "s", clientKeyring(t, root), time.Now()); err != nil || len(checks) != 1 || len(checks[0].Findings) != 0 || checks[0].PoolFiles != 1 {
				t.Fatalf("verify: %+v, %v", checks, err)
			}
		})
	}
}

// A publish killed while it wrote its pending publish record leaves the
// record's temporary file in .updeb/publishing/ (kill -9 in a loop of
// publishes left one in 15 kills), or, by an updeb that kept one record for
// every suite, in .updeb/; the next write removes it, as it removes the
// record.
func TestKilledPublishRecordLeftoverRemoved(t *testing.T) {
	for _, record := range []string{pendingPoolDir + "/s.json", legacyPendingPoolFile} {
		t.Run(record, func(t *testing.T) {
			dir, root := testDirs(t)
			r := testRepo(t, root)
			name := filepath.Join(root, filepath.FromSlash(record))
			must(t, os.MkdirAll(filepath.Dir(name), 0o755))
			leftover := filepath.Join(filepath.Dir(name), atomicfile.TempPrefix(filepath.Base(name))+"2497989328")
			must(t, os.WriteFile(leftover, []byte(`{"suite":"s","bef`), 0o644))
			_, err := r.Publish(context.Background(), "s", "main", []Package{pkgOf(t, testDeb(t, dir, "app", "1-1", "amd64", "v1"))})
			must(t, err)
			if _, err := os.Lstat(leftover); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the temporary file of a killed write of %s stays after the next publish: %v", record, err)
			}
		})
	}
}

// stopWhenCopying is a context that reports itself cancelled once a file
// matching glob exists: the temporary file a publish copies a package
// into, so that the signal arrives during that copy.
type stopWhenCopying struct {
	context.Context
	glob string
}

func (c stopWhenCopying) Err() error {
	if m, _ := filepath.Glob(c.glob); len(m) > 0 {
		return context.Canceled
	}
	return c.Context.Err()
}

// A publish interrupted while it copies a package into the pool stops
// there, within the copy, and leaves nothing: the copy of a package of
// gigabytes (with its three digests and its fsync) went on to its end
// after SIGTERM, a minute and more for 6 GB, and the publish then exited 0
// when nothing was left to check the context.
func TestPublishStopsInPoolCopy(t *testing.T) {
	dir, root := testDirs(t)
	r := realRepo(t, root, testSettings("amd64"), nil)
	deb := testDeb(t, dir, "app", "1-1", "amd64", "v1")
	ctx := stopWhenCopying{context.Background(), filepath.Join(root, "pool/main/a/app/.tmp-*.deb")}
	_, err := r.Publish(ctx, "s", "main", []Package{pkgOf(t, deb)})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "into the pool") {
		t.Fatalf("publish interrupted in its pool copy: %v, want the copy stopped with context.Canceled", err)
	}
	if left, _ := filepath.Glob(filepath.Join(root, "pool/main/a/app/*")); len(left) > 0 {
		t.Errorf("an interrupted publish left %v in the pool", left)
	}
	if _, err := r.Publish(context.Background(), "s", "main", []Package{pkgOf(t, deb)}); err != nil {
		t.Fatalf("the publish after an interrupted one: %v", err)
	}
}

// The record of an interrupted publish names pool files only: a record
// naming a file out of pool/ through "..", planted or damaged, has that
// entry ignored (filepath.IsLocal took pool/../keep.txt for a path inside the
// root, and the next write removed keep.txt), while the pool files it names
// are still removed; so does the one record of an updeb that kept one for
// every suite, read where it is.
func TestPublishRecordOutOfPoolIgnored(t *testing.T) {
	ctx := context.Background()
	for _, record := range []string{pendingPoolDir + "/s.json", legacyPendingPoolFile} {
		t.Run(record, func(t *testing.T) {
			dir, root := testDirs(t)
			r := testRepo(t, root)
			_, err := r.Publish(ctx, "s", "main", []Package{pkgOf(t, testDeb(t, dir, "app", "1-1", "amd64", "v1"))})
			must(t, err)
			keep := filepath.Join(root, "keep.txt")
			must(t, os.WriteFile(keep, []byte("an operator's file\n"), 0o644))
			orphan := filepath.Join(root, "pool/main/z/zz/zz_1_amd64.deb")
			must(t, os.MkdirAll(filepath.Dir(orphan), 0o755))
			must(t, os.WriteFile(orphan, []byte("never listed"), 0o644))
			name := filepath.Join(root, filepath.FromSlash(record))
			must(t, os.MkdirAll(filepath.Dir(name), 0o755))
			must(t, os.WriteFile(name, []byte(`{"suite":"s","before":1,"files":["pool/../keep.txt","pool/main/../../keep.txt","pool/main/z/zz/zz_1_amd64.deb"]}`+"\n"), 0o644))
			_, err = r.Publish(ctx, "s", "main", []Package{pkgOf(t, testDeb(t, t.TempDir(), "app", "2-1", "amd64", "v2"))})
			must(t, err)
			if _, err := os.Lstat(keep); err != nil {
				t.Errorf("a record naming pool/../keep.txt removed it: %v", err)
			}
			if _, err := os.Lstat(orphan); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the record's pool file stays: %v", err)
			}
			if _, err := os.Lstat(name); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the record stays once finished: %v", err)
			}
		})
	}
}

// killedPublishBehindADamagedLink publishes app 1-1 into suite s, kills a
// publish of app 2-1 (payload "first build") into s once it linked its pool
// file, and then damages dists/s: absolute, it points it at the generation
// by an absolute path, as an operator's 'ln -sfn /srv/apt/dists/.gen/s/1
// dists/s' does, which is no link of updeb's, so the next writes cannot
// read s; else it removes it (the link lost: a copy that leaves symbolic
// links out), so they cannot tell whether the publish went live. Either
// way, the killed publish's record cannot be finished and must stay. It
// returns the repository, the killed publish's .deb and a func that
// restores the link as updeb makes it.
func killedPublishBehindADamagedLink(t *testing.T, absolute bool) (r *Repo, root, killedDeb string, restore func()) {
	t.Helper()
	dir, root := testDirs(t)
	keyFile := writeTestKey(t, dir)
	r = realRepo(t, root, testSettings("amd64"), nil)
	_, err := r.Publish(context.Background(), "s", "main", []Package{pkgOf(t, testDeb(t, dir, "app", "1-1", "amd64", "v1"))})
	must(t, err)
	killedDeb = testDeb(t, t.TempDir(), "app", "2-1", "amd64", "first build")
	cmd := helperCmd(t, root, keyFile, "publish "+killedDeb, "pool")
	startStopped(t, cmd, "pool")
	must(t, cmd.Process.Signal(syscall.SIGKILL))
	cmd.Wait() //nolint:errcheck // killed on purpose
	if _, err := os.Lstat(filepath.Join(root, "pool/main/a/app/app_2-1_amd64.deb")); err != nil {
		t.Fatalf("the killed publish did not link its pool file (%v): the test misses the window", err)
	}
	link := filepath.Join(root, "dists/s")
	must(t, os.Remove(link))
	if absolute {
		must(t, os.Symlink(filepath.Join(root, "dists/.gen/s/1"), link))
	}
	return r, root, killedDeb, func() {
		if absolute {
			must(t, os.Remove(link))
		}
		must(t, os.Symlink(".gen/s/1", link))
	}
}

// The record of a publish killed before its generation went live is kept
// per suite: one the next write cannot finish (its suite unreadable) still
// does its job after a publish into another suite, removing the killed
// publish's pool file once the suite reads again, so that another build of
// its version, never published, is not refused. With one record for every
// suite, that publish replaced it, and the pool file passed for published
// bytes for good.
func TestKilledPublishRecordOutlivesAnotherSuitesPublish(t *testing.T) {
	r, _, _, restore := killedPublishBehindADamagedLink(t, true)
	ctx := context.Background()
	if _, err := r.Publish(ctx, "other", "main", []Package{pkgOf(t, testDeb(t, t.TempDir(), "tool", "1-1", "amd64", "tool"))}); err != nil {
		t.Fatalf("a publish into another suite: %v", err)
	}
	restore()
	if _, err := r.Publish(ctx, "s", "main", []Package{pkgOf(t, testDeb(t, t.TempDir(), "app", "2-1", "amd64", "second build"))}); err != nil {
		t.Fatalf("another build of the version whose publish was killed, never listed: %v", err)
	}
	if list, err := r.List("s"); err != nil || len(list) != 2 {
		t.Fatalf("suite s lists %v (%v), want 1-1 and 2-1", list, err)
	}
}

// A record kept that long never removes a pool file another suite came to
// list meanwhile (the same build published there): every client of that
// suite got 404 for it.
func TestKeptPublishRecordSparesAnotherSuitesPoolFile(t *testing.T) {
	r, root, killedDeb, restore := killedPublishBehindADamagedLink(t, true)
	ctx := context.Background()
	_, err := r.Publish(ctx, "other", "main", []Package{pkgOf(t, killedDeb)})
	must(t, err)
	restore()
	_, err = r.Publish(ctx, "s", "main", []Package{pkgOf(t, testDeb(t, t.TempDir(), "tool", "1-1", "amd64", "tool"))})
	must(t, err)
	checks, err := r.Verify(ctx, "other", clientKeyring(t, root), time.Now())
	if err != nil || len(checks) != 1 || len(checks[0].Findings) != 0 || checks[0].PoolFiles != 1 {
		t.Fatalf("verify of the suite that lists the killed publish's build: %+v, %v", checks, err)
	}
}

// A record of a publish into a suite whose link dists/SUITE is missing
// stays until the link is back, which says whether the publish went live;
// it was taken for a generation gone live and dropped, leaving the pool
// file. Once the suite is dropped (its generations removed, as the error
// and gc's warning about the lost link advise), nothing of it lists the
// pool file any more, and it goes.
func TestKilledPublishRecordOutlivesALostLink(t *testing.T) {
	ctx := context.Background()
	for _, restored := range []bool{true, false} {
		t.Run(fmt.Sprint("restored=", restored), func(t *testing.T) {
			r, root, _, restore := killedPublishBehindADamagedLink(t, false)
			_, err := r.Publish(ctx, "other", "main", []Package{pkgOf(t, testDeb(t, t.TempDir(), "tool", "1-1", "amd64", "tool"))})
			must(t, err)
			want := 2
			if restored {
				restore()
			} else {
				must(t, os.RemoveAll(filepath.Join(root, "dists/.gen/s")))
				want = 1
			}
			if _, err := r.Publish(ctx, "s", "main", []Package{pkgOf(t, testDeb(t, t.TempDir(), "app", "2-1", "amd64", "second build"))}); err != nil {
				t.Fatalf("another build of the version whose publish was killed, never listed: %v", err)
			}
			if list, err := r.List("s"); err != nil || len(list) != want {
				t.Fatalf("suite s lists %v (%v), want %d packages", list, err, want)
			}
		})
	}
}

// gc leaves the pool files that the record of a killed publish, kept while
// its suite's link is missing, names: collected, their digest was kept as a
// published version's, and another build of the version, never published,
// was refused for good once the link was back.
func TestGCLeavesAKeptPublishRecordsPoolFiles(t *testing.T) {
	r, root, _, restore := killedPublishBehindADamagedLink(t, false)
	ctx := context.Background()
	res, err := r.GC(ctx, false)
	must(t, err)
	if slices.Contains(res.PoolFiles, "pool/main/a/app/app_2-1_amd64.deb") {
		t.Errorf("gc collected the pool file of a publish killed before it went live: %v", res.PoolFiles)
	}
	if _, err := os.Lstat(r.collectedFile("pool/main/a/app/app_2-1_amd64.deb")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("gc recorded the never published pool file as collected (%v)", err)
	}
	restore()
	if _, err := r.Publish(ctx, "s", "main", []Package{pkgOf(t, testDeb(t, t.TempDir(), "app", "2-1", "amd64", "second build"))}); err != nil {
		t.Fatalf("another build of the version whose publish was killed, never listed: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(root, "pool/main/a/app/app_1-1_amd64.deb")); err != nil {
		t.Fatalf("gc removed the pool file of the suite whose link is missing: %v", err)
	}
}
