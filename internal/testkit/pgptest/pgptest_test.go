package pgptest

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/testkit/testenv"
)

// agentOf returns the pid of the gpg-agent serving home, or 0.
func agentOf(t *testing.T, home string) int {
	t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil || !bytes.HasPrefix(b, []byte("gpg-agent\x00")) || !bytes.Contains(b, []byte("\x00"+home+"\x00")) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if testenv.Running(pid) {
			return pid
		}
	}
	return 0
}

// TestAgentOfADeadProcessIsStopped: a process killed with SIGKILL before
// its cleanup leaves its gpg-agent running; the next signer's home stops it
// and removes the dead process's home.
func TestAgentOfADeadProcessIsStopped(t *testing.T) {
	if os.Getenv("PGPTEST_HOLDER") != "" {
		s := NewSigner(t)
		s.GPG("--quick-gen-key", "holder@test", "ed25519", "sign", "never") // starts the agent
		os.Stdout.WriteString(s.home + "\n")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	testenv.RequireTool(t, "gpg", "gpgconf")
	cmd, home := testenv.StartHelper(t, "TestAgentOfADeadProcessIsStopped", "PGPTEST_HOLDER=1")
	t.Cleanup(func() {
		killAgent(home) // an agent this test failed to stop
		os.RemoveAll(home)
	})
	cmd.Process.Kill()
	cmd.Wait()
	agent := agentOf(t, home)
	if agent == 0 {
		t.Fatal("the killed process's gpg-agent is not running: nothing to test")
	}
	NewSigner(t)
	testenv.WaitGone(t, agent, 10*time.Second)
	if _, err := os.Stat(home); !os.IsNotExist(err) {
		t.Errorf("the killed process's gpg home is still there: %v", err)
	}
}
