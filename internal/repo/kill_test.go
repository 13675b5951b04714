package repo

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/testenv"
	"github.com/updeb/updeb/pkg/control"
)

// The killed-publish test re-executes the test binary in this helper mode: it
// publishes one .deb and, when UPDEB_TEST_KILL_AT names a step, announces it
// on stdout and waits there to be killed.
func TestMain(m *testing.M) {
	if os.Getenv("UPDEB_TEST_PUBLISH_HELPER") == "1" {
		os.Exit(publishHelper())
	}
	os.Exit(m.Run())
}

func publishHelper() int {
	fail := func(err error) int { fmt.Fprintln(os.Stderr, "helper:", err); return 2 }
	keyFile, err := os.Open(os.Getenv("UPDEB_TEST_KEY"))
	if err != nil {
		return fail(err)
	}
	signer, err := ReadSigner(keyFile, keyFile.Name())
	if err != nil {
		return fail(err)
	}
	deb := os.Getenv("UPDEB_TEST_DEB")
	out, err := exec.Command("dpkg-deb", "-f", deb).Output()
	if err != nil {
		return fail(err)
	}
	ctl, err := control.ParseOne(bytes.NewReader(out), deb)
	if err != nil {
		return fail(err)
	}
	killAt := os.Getenv("UPDEB_TEST_KILL_AT")
	r := Open(os.Getenv("UPDEB_TEST_REPO"), Options{
		Settings: testSettings("amd64"),
		Signer:   signer,
		Now:      func() time.Time { return time.Now().Truncate(time.Second) },
		Logger:   slog.New(slog.DiscardHandler),
		Hook: func(step string) {
			if step == killAt {
				fmt.Println("at", step)
				time.Sleep(time.Hour)
			}
		},
	})
	if _, err := r.Publish(context.Background(), "s", "main", []Package{{Path: deb, Control: ctl}}); err != nil {
		return fail(err)
	}
	fmt.Println("done")
	return 0
}

// TestKilledPublishLeavesRepositoryWorking kills publishes with SIGKILL at each
// step and at random times, and checks after each that apt still updates and
// installs from the repository, and that the next publish succeeds.
func TestKilledPublishLeavesRepositoryWorking(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	dir := t.TempDir()
	root := filepath.Join(dir, "repo")
	keyFile := filepath.Join(dir, "key.asc")
	testSigner(t)
	must(t, os.WriteFile(keyFile, testKey.SecretArmored, 0o600))
	_, err := testRepo(t, root).Publish(context.Background(), "s", "main", []Package{pkgOf(t, testDeb(t, dir, "app", "1.0-1", "amd64", "v1"))})
	must(t, err)
	a := newAptClient(t, root, "s", "main")
	a.update()
	a.install("app", "1.0-1", "v1")

	helper := func(deb, killAt string) *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "UPDEB_TEST_PUBLISH_HELPER=1", "UPDEB_TEST_KEY="+keyFile,
			"UPDEB_TEST_REPO="+root, "UPDEB_TEST_DEB="+deb, "UPDEB_TEST_KILL_AT="+killAt)
		cmd.Stderr = os.Stderr
		return cmd
	}
	steps := []string{"pool", "staged", "switched", "random", "random", "random"}
	for i, step := range steps {
		version := fmt.Sprintf("1.%d-1", i+1)
		deb := testDeb(t, dir, "app", version, "amd64", "v"+version)
		cmd := helper(deb, step)
		stdout, err := cmd.StdoutPipe()
		must(t, err)
		must(t, cmd.Start())
		if step == "random" {
			time.Sleep(time.Duration(rand.IntN(60)) * time.Millisecond)
		} else {
			line, err := bufio.NewReader(stdout).ReadString('\n')
			if err != nil || line != "at "+step+"\n" {
				t.Fatalf("helper: read %q, %v; want \"at %s\"", line, err, step)
			}
		}
		must(t, cmd.Process.Signal(syscall.SIGKILL))
		cmd.Wait() //nolint:errcheck // killed on purpose

		a.update()
		a.install("app", "1.0-1", "v1")
		list, err := testRepo(t, root).List("s")
		must(t, err)
		t.Logf("killed at %s: %d versions listed", step, len(list))
		if step == "switched" {
			a.install("app", version, "v"+version) // the new generation was live before the kill
		}

		// The next publish of the same .deb completes (no stale lock, leftovers reused).
		done, err := helper(deb, "").Output()
		if err != nil || !strings.HasSuffix(string(done), "done\n") {
			t.Fatalf("publish after a kill at %s: %v: %s", step, err, done)
		}
		a.update()
		a.install("app", version, "v"+version)
	}
	// Leftovers of killed publishes are cleaned: generations up to the live
	// one (every one distinct, fewer than the kept count), no staging.
	gens, err := os.ReadDir(filepath.Join(root, "dists/.gen/s"))
	must(t, err)
	live, err := os.Readlink(filepath.Join(root, "dists/s"))
	must(t, err)
	if len(gens) != len(steps)+1 || live != fmt.Sprintf(".gen/s/%d", len(steps)+1) {
		t.Errorf("dists/.gen/s holds %v with the live generation %s, want generations 1 to %d and nothing else", gens, live, len(steps)+1)
	}
	tmps, err := filepath.Glob(filepath.Join(root, "pool/main/a/app/.tmp-*"))
	must(t, err)
	if len(tmps) > 0 {
		t.Errorf("temporary pool files of killed publishes left: %v", tmps)
	}
}
