package squid

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
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

// TestStartOnATakenPort: the port Start picks was free a moment ago; a
// process that took it since (a test server of a package running beside)
// makes squid exit, unable to bind. Start tries another port, and does not
// take that process, which answers on the port, for squid: it returned a
// Squid whose URL led to it, and the tests' requests "through squid" went
// there.
func TestStartOnATakenPort(t *testing.T) {
	testenv.RequireTool(t, "squid")
	taken := testenv.Listen(t, func(c net.Conn) { io.Copy(io.Discard, c) })
	_, p, _ := net.SplitHostPort(taken)
	takenPort, _ := strconv.Atoi(p)
	picks := 0
	s, err := startOn("cache deny all\ncache_mem 0\n", func() (int, error) {
		if picks++; picks == 1 {
			return takenPort, nil
		}
		return freePort()
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	if s.URL == "http://"+taken || picks != 2 {
		t.Fatalf("squid at %s after %d picks, want another port than the taken %s after 2", s.URL, picks, taken)
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("hi")) }))
	t.Cleanup(up.Close)
	proxy, _ := url.Parse(s.URL)
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxy)}, Timeout: 10 * time.Second}
	resp, err := client.Get(up.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !strings.Contains(resp.Header.Get("Via"), "squid") {
		t.Errorf("the answer through %s has Via %q: not squid's", s.URL, resp.Header.Get("Via"))
	}
}
