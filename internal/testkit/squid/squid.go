// Package squid runs a throwaway squid web proxy on 127.0.0.1 for the fetch
// tests and the benchmark: its own config, folders and log files, no cache
// (StartCaching: one in memory), CONNECT allowed to any port, and access from
// 127.0.0.1 only.
package squid

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/testkit/testenv"
	"github.com/updeb/updeb/pkg/lockfile"
)

// Squid is a running squid.
type Squid struct {
	URL       string // http://127.0.0.1:PORT
	Dir       string
	AccessLog string
	cmd       *exec.Cmd
	done      chan struct{}
	dir       *lockfile.Dir
}

// folderPrefix starts the name of a squid's folder in the temp folder.
const folderPrefix = "updeb-squid-"

// reap kills the squid that a dead process started in dir: the process of
// its pid file, if that is squid running with dir's config.
func reap(dir string) {
	b, err := os.ReadFile(filepath.Join(dir, "squid.pid"))
	if err != nil {
		return
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		return
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || !bytes.Contains(cmdline, []byte(filepath.Join(dir, "squid.conf"))) {
		return // gone, or the pid is another process's now
	}
	syscall.Kill(-pid, syscall.SIGKILL) // its group: squid leads it (Setpgid)
	syscall.Kill(pid, syscall.SIGKILL)
}

// ForTest starts squid for t and stops it when t ends. A missing squid
// skips t, or fails it in CI (testenv.RequireTool); one that does not start
// fails it.
func ForTest(t testing.TB) *Squid {
	t.Helper()
	return forTest(t, Start)
}

// CachingForTest is ForTest with StartCaching(refresh...).
func CachingForTest(t testing.TB, refresh ...string) *Squid {
	t.Helper()
	return forTest(t, func() (*Squid, error) { return StartCaching(refresh...) })
}

func forTest(t testing.TB, start func() (*Squid, error)) *Squid {
	t.Helper()
	testenv.RequireTool(t, "squid")
	s, err := start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// Start writes a config into a new temporary folder and starts squid in the
// foreground. The folder (directly under the system's temp folder, so that every
// parent is searchable) is world-writable because squid started as root drops its
// privileges to the proxy user, which must write the logs and the pid file.
// Stop removes it.
//
// A process that dies before Stop (go test's -timeout, Ctrl-C, kill -9)
// leaves its squid running: squid is in a process group of its own, and
// dropping root clears a parent-death signal. The folder holds a lock
// (pkg/lockfile's TempDir) that its process keeps until Stop, so Start first
// kills the squid of every such folder whose lock is free, and removes it.
func Start() (*Squid, error) {
	return start("cache deny all\ncache_mem 0\n")
}

// StartCaching is Start with a cache in memory that answers as squid's
// default configuration does: after the refresh_pattern lines given (each
// its arguments), squid's default "refresh_pattern . 0 20% 4320", which
// keeps an answer with a Last-Modified fresh for a fifth of its age (three
// days at most) unless the request asks to revalidate.
func StartCaching(refresh ...string) (*Squid, error) {
	conf := "cache_mem 16 MB\n"
	for _, r := range refresh {
		conf += "refresh_pattern " + r + "\n"
	}
	return start(conf + "refresh_pattern . 0 20% 4320\n")
}

// start starts squid with cache, its config's lines about caching.
func start(cache string) (*Squid, error) {
	return startOn(cache, freePort)
}

// bindTries is how many ports start tries squid on.
const bindTries = 5

// errPortTaken is a squid that could not bind its port.
var errPortTaken = errors.New("squid: its port was taken")

// startOn starts squid on a port that pick says was free a moment ago.
// Another process may have taken it since (a test server of a package
// running beside): squid then exits, unable to bind, and startOn tries
// another port. Squid is running once its log says it accepts connections
// on its port: a connection to the port alone may reach that other
// process, which was taken for squid.
func startOn(cache string, pick func() (int, error)) (*Squid, error) {
	var err error
	for range bindTries {
		var s *Squid
		if s, err = startOnce(cache, pick); !errors.Is(err, errPortTaken) {
			return s, err
		}
	}
	return nil, err
}

// startOnce is one try of startOn.
func startOnce(cache string, pick func() (int, error)) (*Squid, error) {
	bin, err := exec.LookPath("squid")
	if err != nil {
		return nil, err
	}
	d, err := lockfile.TempDir("", folderPrefix, reap)
	if err != nil {
		return nil, err
	}
	dir := d.Path
	if err := os.Chmod(dir, 0o777); err != nil {
		d.Remove()
		return nil, err
	}
	port, err := pick()
	if err != nil {
		d.Remove()
		return nil, err
	}
	s := &Squid{URL: "http://127.0.0.1:" + strconv.Itoa(port), Dir: dir, AccessLog: filepath.Join(dir, "access.log"), done: make(chan struct{}), dir: d}
	conf := fmt.Sprintf(`http_port 127.0.0.1:%d
pid_filename %[2]s/squid.pid
access_log stdio:%[2]s/access.log
cache_log %[2]s/cache.log
cache_store_log none
coredump_dir %[2]s
%[3]spinger_enable off
shutdown_lifetime 0 seconds
acl localnet src 127.0.0.1
http_access allow localnet
http_access deny all
`, port, dir, cache)
	confPath := filepath.Join(dir, "squid.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		d.Remove()
		return nil, err
	}
	var out bytes.Buffer
	s.cmd = exec.Command(bin, "-N", "-f", confPath)
	s.cmd.Stdout, s.cmd.Stderr = &out, &out
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		d.Remove()
		return nil, err
	}
	go func() { s.cmd.Wait(); close(s.done) }()
	// Squid listens within a second on a quiet machine; a CI runner's two
	// cores busy with race-enabled tests have taken over 20 s. Its log
	// says so: "Accepting HTTP Socket connections at conn3
	// local=127.0.0.1:PORT remote=[::] FD 11 flags=9".
	listening := func(line []byte) bool {
		return bytes.Contains(line, []byte("Accepting HTTP Socket connections at ")) &&
			bytes.Contains(line, fmt.Appendf(nil, " local=127.0.0.1:%d ", port))
	}
	for deadline := time.Now().Add(startWait); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		select {
		case <-s.done:
			log, _ := os.ReadFile(filepath.Join(dir, "cache.log"))
			d.Remove()
			if bytes.Contains(log, []byte("Address already in use")) {
				return nil, fmt.Errorf("%w: 127.0.0.1:%d", errPortTaken, port)
			}
			return nil, fmt.Errorf("squid exited at start: %s\n%s", out.String(), log)
		default:
		}
		if log, _ := os.ReadFile(filepath.Join(dir, "cache.log")); !slices.ContainsFunc(bytes.Split(log, []byte("\n")), listening) {
			continue
		}
		if c, err := net.DialTimeout("tcp", s.URL[len("http://"):], time.Second); err == nil {
			c.Close()
			return s, nil
		}
	}
	log, _ := os.ReadFile(filepath.Join(dir, "cache.log"))
	s.Stop()
	return nil, fmt.Errorf("squid did not listen on %s within %s: %s\n%s", s.URL, startWait, out.String(), log)
}

// startWait bounds how long Start waits for squid to listen.
const startWait = 90 * time.Second

// Stop kills squid and its helpers and waits for it.
func (s *Squid) Stop() {
	if s.cmd.Process != nil {
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	}
	<-s.done
	s.dir.Remove()
}

// Log returns squid's access log so far, once it has stopped growing for
// 100 ms (3 s at most): squid logs a request once its transaction is over,
// which on a loaded machine can come a moment after the client has the
// response (a test that read the log at once missed the last request).
func (s *Squid) Log() string {
	b, _ := os.ReadFile(s.AccessLog)
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		again, _ := os.ReadFile(s.AccessLog)
		if bytes.Equal(again, b) {
			break
		}
		b = again
	}
	return string(b)
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// DeadURL returns a proxy URL nothing listens on.
func DeadURL() (string, error) {
	p, err := freePort()
	if err != nil {
		return "", err
	}
	return "http://127.0.0.1:" + strconv.Itoa(p), nil
}

// CPU returns the CPU time (user + system) squid's process has used so far,
// from /proc (Linux).
func (s *Squid) CPU() (time.Duration, error) {
	f, err := testenv.ProcStat(s.cmd.Process.Pid)
	if err != nil {
		return 0, err
	}
	if len(f) < 13 {
		return 0, fmt.Errorf("squid: unreadable /proc stat %q", f)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("squid: /proc stat: %w", err)
	}
	return time.Duration(utime+stime) * time.Second / clockTicks, nil
}

// clockTicks is sysconf(_SC_CLK_TCK), the unit of /proc's CPU times: 100 on
// every Linux architecture Go supports.
const clockTicks = 100
