// Package childproc runs the external tools updeb starts (lintian, git,
// sh, shellcheck) so that only updeb's context stops them, and stops them
// whole.
package childproc

import (
	"os/exec"
	"runtime"
	"syscall"
	"time"
)

// RunGroup runs cmd, made by exec.CommandContext, with run (cmd.Run,
// cmd.CombinedOutput, ...) in a process group of its own that the context's
// end kills whole. The tools updeb runs may start children that share
// their output pipe: lintian its helpers (file, objdump, readelf, ...), git
// the fetch of what a partial clone lacks (and that an upload-pack or a
// remote helper). Stopped alone, the tool would leave them running and the
// wait for its output would last as long as they do. Out of updeb's group,
// a signal to that group (Ctrl-C at the terminal, a CI runner cancelling
// the job) no longer reaches the tool, which would otherwise die of it
// before updeb's context ends and read as a tool that failed: updeb stops
// it, and Pdeathsig kills it when updeb dies however it dies. Pdeathsig
// follows the thread that started the tool, so that thread is kept until
// the tool is done. The group is that of a session of its own, without a
// terminal: a tool that asks there (ssh for a passphrase or a host key)
// fails at once; in a background group of updeb's session, its read of the
// terminal would stop it (SIGTTIN), and updeb would wait forever.
func RunGroup(cmd *exec.Cmd, run func() error) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return run()
}
