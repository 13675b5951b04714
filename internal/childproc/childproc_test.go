package childproc

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/testkit/testenv"
)

// TestRunGroupNeverReadsTheTerminal: a tool updeb runs that asks on the
// terminal (ssh for a passphrase or a host key, git for a password, when a
// partial clone fetches) fails at once, even run from a terminal: in a
// process group of its own but in updeb's session, reading the terminal
// would stop it (SIGTTIN), and verify would wait for it forever. The test
// runs itself again with a pseudo-terminal as its controlling terminal.
func TestRunGroupNeverReadsTheTerminal(t *testing.T) {
	if os.Getenv("CHILDPROC_TTY") != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, "sh", "-c", "read x </dev/tty")
		err := RunGroup(cmd, cmd.Run)
		fmt.Printf("ctx=%v err=%v\n", ctx.Err(), err)
		return
	}
	testenv.RequireTool(t, "sh")
	_, tty := testenv.Pty(t)
	cmd := exec.Command(os.Args[0], "-test.run", "^TestRunGroupNeverReadsTheTerminal$")
	cmd.Env = append(os.Environ(), "CHILDPROC_TTY=1")
	cmd.Stdin = tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !strings.Contains(string(out), "ctx=<nil> err=exit status") {
		t.Errorf("the tool run from a terminal: %s; want it to fail at once, not to wait on the terminal until the timeout", out)
	}
}
