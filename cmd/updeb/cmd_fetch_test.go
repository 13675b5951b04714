package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/testkit/squid"
)

// TestFetchHelperProcess is not a test: it is updeb's main, signal-aware
// context included, when the test binary re-executes itself as a second
// updeb process.
func TestFetchHelperProcess(t *testing.T) {
	if os.Getenv("UPDEB_TEST_HELPER") != "1" {
		t.Skip("helper process only")
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	ctx, stop := signalContext()
	defer stop()
	os.Exit(run(ctx, args, os.Stdout, os.Stderr))
}

func runUpdeb(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestFetchCommand(t *testing.T) {
	sq := squid.ForTest(t)
	body := bytes.Repeat([]byte("updeb fetch test\n"), 5000)
	sum := sha256.Sum256(body)
	sha := hex.EncodeToString(sum[:])
	var hits atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		time.Sleep(200 * time.Millisecond) // long enough for two processes to race
		http.ServeContent(w, r, "x", time.Time{}, bytes.NewReader(body))
	}))
	t.Cleanup(up.Close)
	dead, _ := squid.DeadURL()
	dir := t.TempDir()
	conf := filepath.Join(dir, "updeb.yaml")
	os.WriteFile(conf, []byte("fetch:\n  retries: 1\n  retry-time: 5s\n  timeouts: {connect: 2s, idle: 2s}\n"), 0o644)
	badConf := filepath.Join(dir, "bad.yaml")
	os.WriteFile(badConf, []byte("fetch:\n  retries: 1\n  retrys: 2\n"), 0o644)
	hugeConf := filepath.Join(dir, "huge.yaml")
	os.WriteFile(hugeConf, []byte("build:\n  xz-workers: 100000\n  compression: rar\n"), 0o644)

	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{"fetched through squid", []string{"fetch", up.URL + "/a.tgz#sha256=" + sha},
			0, fmt.Sprintf("%s  %d  %s  %s\n", sha, len(body), filepath.Join("CACHE", "sha256", sha[:2], sha), up.URL+"/a.tgz"), ""},
		{"pin flag", []string{"fetch", "--sha256", sha, up.URL + "/a.tgz"}, 0, sha + "  ", ""},
		{"digest mismatch", []string{"fetch", up.URL + "/a.tgz#sha256=" + strings.Repeat("a", 64)},
			1, "", "updeb: error: sha256 digest mismatch for " + up.URL + "/a.tgz: pinned " + strings.Repeat("a", 64) + ", got " + sha},
		{"no pin", []string{"fetch", up.URL + "/a.tgz"}, 2, "", "no pinned digest"},
		{"dead proxy", []string{"--proxy", dead, "fetch", up.URL + "/b.tgz#sha256=" + strings.Repeat("d", 64)},
			3, "", "updeb: error: fetch " + up.URL + "/b.tgz via proxy " + dead + ": failed after 2 attempts: "},
		{"offline lists what is missing", []string{"--offline", "fetch", up.URL + "/c.tgz#sha256=" + strings.Repeat("c", 64), up.URL + "/a.tgz#sha256=" + sha},
			3, "", "offline: 1 file(s) not in the cache:\n  " + up.URL + "/c.tgz\n"},
		{"bad config", []string{"--config", badConf, "fetch", up.URL + "/a.tgz#sha256=" + sha}, 2, "", badConf + `:3:3: unknown field "retrys"`},
		{"config value out of range", []string{"--config", hugeConf, "fetch", up.URL + "/a.tgz#sha256=" + sha}, 2, "",
			hugeConf + ":2:15: build.xz-workers: 100000 is out of range: want 1 to 64\n" + hugeConf + `:3:16: build.compression "rar": want xz, gzip, zstd or none`},
	}
	cache := filepath.Join(dir, "cache")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--config", conf, "--proxy", sq.URL, "--cache", cache}, tc.args...)
			code, stdout, stderr := runUpdeb(args...)
			stdout = strings.ReplaceAll(stdout, cache, "CACHE")
			if code != tc.wantCode || !strings.HasPrefix(stdout, tc.wantStdout) || !strings.Contains(stderr, tc.wantStderr) {
				t.Errorf("updeb %s\nexit %d, want %d\nstdout %q\nwant   %q\nstderr %q\nwant   %q", strings.Join(args, " "), code, tc.wantCode, stdout, tc.wantStdout, stderr, tc.wantStderr)
			}
		})
	}
	if !strings.Contains(sq.Log(), "GET "+up.URL+"/a.tgz") {
		t.Errorf("squid's access log lacks the download")
	}

	t.Run("two processes share one cache", func(t *testing.T) {
		shared := filepath.Join(t.TempDir(), "cache")
		before := hits.Load()
		var wg sync.WaitGroup
		outs := make([]string, 2)
		errs := make([]error, 2)
		for i := range 2 {
			wg.Go(func() {
				cmd := exec.Command(os.Args[0], "-test.run=^TestFetchHelperProcess$", "--",
					"--config", conf, "--proxy", sq.URL, "--cache", shared, "fetch", up.URL+"/shared.tgz#sha256="+sha)
				cmd.Env = append(os.Environ(), "UPDEB_TEST_HELPER=1")
				var out bytes.Buffer
				cmd.Stdout = &out
				cmd.Stderr = &out
				errs[i] = cmd.Run()
				outs[i] = out.String()
			})
		}
		wg.Wait()
		for i := range 2 {
			if errs[i] != nil || !strings.Contains(outs[i], sha+"  ") {
				t.Errorf("process %d: %v\n%s", i, errs[i], outs[i])
			}
		}
		if n := hits.Load() - before; n != 1 {
			t.Errorf("upstream saw %d downloads for two processes, want 1 (the second waits on the lock and uses the cache)", n)
		}
	})
}

// TestFetchFlagsOfTheOtherMode: the flags of URL mode are refused with
// recipes, and --arch, which picks a recipe's architectures, with URLs (exit
// 2), rather than ignored.
func TestFetchFlagsOfTheOtherMode(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"fetch", "--unpinned", "--arch", "amd64", "https://example.org/x.asc"}, "--arch goes with recipes, not URLs"},
		{[]string{"fetch", "--unpinned", "hello"}, "go with URLs, not recipes"},
	} {
		code, _, stderr := runCLI(t, append([]string{"--offline", "--cache", t.TempDir()}, c.args...)...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, want %d saying %q\n%s", c.args, code, exitUsage, c.want, stderr)
		}
	}
}

// TestFetchURLsEachTried: fetch URL... tries every URL, as fetch RECIPE...
// tries every recipe: a URL that fails (a 404) stops none of the others, and
// --json lists the files fetched under "files" beside the failure, in the
// order given.
func TestFetchURLsEachTried(t *testing.T) {
	sq := squid.ForTest(t)
	body := []byte("each url\n")
	sum := sha256.Sum256(body)
	sha := hex.EncodeToString(sum[:])
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/gone.tgz" {
			http.NotFound(w, r)
			return
		}
		time.Sleep(100 * time.Millisecond) // still downloading when the 404 comes
		http.ServeContent(w, r, "x", time.Time{}, bytes.NewReader(body))
	}))
	t.Cleanup(up.Close)
	dir := t.TempDir()
	conf := filepath.Join(dir, "updeb.yaml")
	os.WriteFile(conf, []byte("fetch:\n  retries: 0\n"), 0o644)
	code, stdout, stderr := runUpdeb("--config", conf, "--proxy", sq.URL, "--cache", filepath.Join(dir, "cache"), "--json", "fetch",
		up.URL+"/a.tgz#sha256="+sha, up.URL+"/gone.tgz#sha256="+strings.Repeat("0", 64), up.URL+"/b.tgz#sha256="+sha)
	var got struct {
		Files []struct {
			URL string `json:"url"`
		} `json:"files"`
		Failed []struct {
			Error string `json:"error"`
		} `json:"failed"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil || code != exitNetwork {
		t.Fatalf("exit %d, %v: %s%s", code, err, stdout, stderr)
	}
	if len(got.Files) != 2 || got.Files[0].URL != up.URL+"/a.tgz" || got.Files[1].URL != up.URL+"/b.tgz" ||
		len(got.Failed) != 1 || !strings.Contains(got.Failed[0].Error, "/gone.tgz answered \"404 Not Found\"") {
		t.Errorf("fetch --json of two good URLs and a missing one: %s", stdout)
	}
}
