package squid

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/testkit/testenv"
)

// TestSquidOfADeadProcessIsStopped: a process killed with SIGKILL before
// Stop leaves its squid running; the next Start stops that squid and removes
// its folder, and leaves a running process's squid alone.
func TestSquidOfADeadProcessIsStopped(t *testing.T) {
	if os.Getenv("SQUID_TEST_HOLDER") != "" {
		s, err := Start()
		if err != nil {
			os.Stdout.WriteString("error: " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Stdout.WriteString(s.Dir + " " + strconv.Itoa(s.cmd.Process.Pid) + "\n")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	testenv.RequireTool(t, "squid")
	holder := func() (*exec.Cmd, string, int) {
		t.Helper()
		cmd, line := testenv.StartHelper(t, "TestSquidOfADeadProcessIsStopped", "SQUID_TEST_HOLDER=1")
		f := strings.Fields(line)
		if len(f) != 2 {
			t.Fatalf("holder: %q", line)
		}
		pid, _ := strconv.Atoi(f[1])
		t.Cleanup(func() {
			cmd.Process.Kill()
			cmd.Wait()
			reap(f[0]) // a squid this test failed to stop
			os.RemoveAll(f[0])
		})
		return cmd, f[0], pid
	}
	killed, deadDir, orphan := holder()
	_, liveDir, live := holder()
	killed.Process.Kill()
	killed.Wait()
	time.Sleep(200 * time.Millisecond)
	if !testenv.Running(orphan) {
		t.Fatal("the killed process's squid ended on its own: nothing to test")
	}
	s := ForTest(t)
	testenv.WaitGone(t, orphan, 5*time.Second)
	if _, err := os.Stat(deadDir); !os.IsNotExist(err) {
		t.Errorf("the killed process's squid folder is still there: %v", err)
	}
	if !testenv.Running(live) {
		t.Error("a running process's squid was stopped")
	}
	if _, err := os.Stat(liveDir); err != nil {
		t.Errorf("a running process's squid folder: %v", err)
	}
	if s.Dir == deadDir || s.Dir == liveDir {
		t.Errorf("new squid in an old folder %s", s.Dir)
	}
}
