// Package squid runs a throwaway squid web proxy on 127.0.0.1 for the fetch
// tests and the benchmark: its own config, folders and log files, no disk cache,
// CONNECT allowed to any port, and access from 127.0.0.1 only.
package squid

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/testkit/testenv"
)

// Squid is a running squid.
type Squid struct {
	URL       string // http://127.0.0.1:PORT
	Dir       string
	AccessLog string
	cmd       *exec.Cmd
	done      chan struct{}
}

// ForTest starts squid for t and stops it when t ends. A missing squid
// skips t, or fails it in CI (testenv.RequireTool); one that does not start
// fails it.
func ForTest(t testing.TB) *Squid {
	t.Helper()
	testenv.RequireTool(t, "squid")
	s, err := Start()
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
func Start() (*Squid, error) {
	bin, err := exec.LookPath("squid")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "updeb-squid-")
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s := &Squid{URL: "http://127.0.0.1:" + strconv.Itoa(port), Dir: dir, AccessLog: filepath.Join(dir, "access.log"), done: make(chan struct{})}
	conf := fmt.Sprintf(`http_port 127.0.0.1:%d
pid_filename %[2]s/squid.pid
access_log stdio:%[2]s/access.log
cache_log %[2]s/cache.log
cache_store_log none
coredump_dir %[2]s
cache deny all
cache_mem 0
pinger_enable off
shutdown_lifetime 0 seconds
acl localnet src 127.0.0.1
http_access allow localnet
http_access deny all
`, port, dir)
	confPath := filepath.Join(dir, "squid.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	s.cmd = exec.Command(bin, "-N", "-f", confPath)
	s.cmd.Stdout, s.cmd.Stderr = &out, &out
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	go func() { s.cmd.Wait(); close(s.done) }()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		select {
		case <-s.done:
			log, _ := os.ReadFile(filepath.Join(dir, "cache.log"))
			os.RemoveAll(dir)
			return nil, fmt.Errorf("squid exited at start: %s\n%s", out.String(), log)
		default:
		}
		if c, err := net.DialTimeout("tcp", s.URL[len("http://"):], time.Second); err == nil {
			c.Close()
			return s, nil
		}
	}
	s.Stop()
	return nil, errors.New("squid did not listen within 20s")
}

// Stop kills squid and its helpers and waits for it.
func (s *Squid) Stop() {
	if s.cmd.Process != nil {
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	}
	<-s.done
	os.RemoveAll(s.Dir)
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
