package testenv

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// ProcStat returns the fields of /proc/PID/stat after the command name
// (which is in parentheses and may hold spaces and parentheses itself): the
// state first, then the parent's pid, ... as proc(5) numbers them from 3.
func ProcStat(pid int) ([]string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil, fmt.Errorf("/proc/%d/stat: no command name in %q", pid, b)
	}
	return strings.Fields(string(b[i+1:])), nil
}

// Running reports whether the process pid runs: it exists and is not a
// zombie waiting for whichever process adopted it to reap it (kill -0
// succeeds on a zombie, and a container's init may take its time to reap).
func Running(pid int) bool {
	f, err := ProcStat(pid)
	return err == nil && len(f) > 0 && f[0] != "Z"
}

// StandInLintian writes dir/lintian, a script that writes its own pid into
// dir/lintian.pid, starts a helper sharing its output (a minute's sleep) and
// waits for it, as lintian does with file and objdump. It returns the file
// the helper's pid appears in once both run, and the script's pid file.
func StandInLintian(t testing.TB, dir string) (helperPID, lintianPID string) {
	t.Helper()
	helperPID, lintianPID = filepath.Join(dir, "helper.pid"), filepath.Join(dir, "lintian.pid")
	script := "#!/bin/sh\necho $$ > " + lintianPID + "\nsleep 60 &\necho $! > " + helperPID + ".tmp\nmv " + helperPID + ".tmp " + helperPID + "\nwait\n"
	if err := os.WriteFile(filepath.Join(dir, "lintian"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return helperPID, lintianPID
}

// WaitPID returns the pid written in pidFile once it appears, within
// timeout; the test fails if ended is closed first (what was to start the
// process ended without it) or the time runs out.
func WaitPID(t testing.TB, pidFile string, timeout time.Duration, ended <-chan struct{}) int {
	t.Helper()
	for deadline := time.Now().Add(timeout); ; time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(pidFile); err == nil {
			var pid int
			if _, err := fmt.Sscan(string(b), &pid); err != nil {
				t.Fatalf("%s: %v", pidFile, err)
			}
			return pid
		}
		select {
		case <-ended:
			t.Fatalf("ended before %s appeared", pidFile)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s after %v", pidFile, timeout)
		}
	}
}

// WaitGone fails the test if process pid still runs after timeout.
func WaitGone(t testing.TB, pid int, timeout time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(timeout); Running(pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still runs %v later", pid, timeout)
		}
	}
}

// StartHelper runs this test binary again as a helper process: only the
// test named test, with env added (which the test checks to play the
// helper). It returns the process and the first line the helper prints,
// without its newline, once printed; the test fails if the helper ends
// first. The helper is killed when the test ends.
func StartHelper(t testing.TB, test string, env ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run", "^"+test+"$")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("helper %s: %q: %v", test, line, err)
	}
	return cmd, strings.TrimSuffix(line, "\n")
}
