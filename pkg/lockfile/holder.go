package lockfile

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/updeb/updeb/pkg/termtext"
	"github.com/updeb/updeb/pkg/utf8cut"
)

// maxHolders bounds the holders of a shared lock that holders names.
const maxHolders = 3

// maxCommand bounds the command line of a holder, as holders names it (a
// build of many recipes names them all).
const maxCommand = 200

// holders names the processes that hold a flock(2) lock on the file f,
// "pid 1234 (updeb publish --repo /srv/apt ...)", from /proc/locks and
// /proc/PID/cmdline: a waiter whose holder is stuck (stopped with SIGSTOP
// or Ctrl-Z, hung on a dead NFS server) says whom to look at, instead of
// leaving the user to guess which of many updeb processes it is. "" when
// none is known: no /proc, or a holder in another pid namespace (which
// /proc/locks names as pid 0).
func holders(f *os.File) string {
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	// /proc/locks names the file as MAJOR:MINOR:INODE, the device's
	// numbers in hexadecimal: "1: FLOCK  ADVISORY  WRITE 1234 fe:00:9985986 0 EOF".
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev)), st.Ino)
	locks, err := os.Open("/proc/locks")
	if err != nil {
		return ""
	}
	defer locks.Close()
	var who []string
	n := 0
	s := bufio.NewScanner(locks)
	for s.Scan() {
		// A waiter blocked on the lock is listed after "->"; updeb's
		// waiters poll, and are listed nowhere.
		fields := strings.Fields(s.Text())
		if len(fields) < 6 || fields[1] != "FLOCK" || fields[5] != want {
			continue
		}
		pid, err := strconv.Atoi(fields[4])
		if err != nil || pid <= 0 {
			continue
		}
		if n++; n <= maxHolders {
			who = append(who, describe(pid))
		}
	}
	if n > maxHolders {
		who = append(who, fmt.Sprintf("%d more", n-maxHolders))
	}
	return strings.Join(who, ", ")
}

// describe names process pid with its command line, as ps would: "pid
// 1234 (updeb publish ...)", or "pid 1234" alone when it cannot be read
// (the process gone meanwhile).
func describe(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	cmd := strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
	if err != nil || cmd == "" {
		return fmt.Sprintf("pid %d", pid)
	}
	// Another user's command line, printed on this user's terminal:
	// its control characters are shown, not sent.
	return fmt.Sprintf("pid %d (%s)", pid, termtext.Escape(utf8cut.Shorten(cmd, maxCommand, maxCommand)))
}
