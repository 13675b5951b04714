package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/updeb/updeb/internal/config"
	"github.com/updeb/updeb/internal/testkit/squid"
	"github.com/updeb/updeb/internal/testkit/testenv"
)

// proxyEnv sets the proxy variables of the environment for t: those
// named in set, and every other one empty.
func proxyEnv(t *testing.T, set map[string]string) {
	for _, k := range []string{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy", "REQUEST_METHOD"} {
		t.Setenv(k, set[k])
	}
}

// The proxy comes from the first of --proxy, the config, HTTPS_PROXY,
// https_proxy, HTTP_PROXY, http_proxy, ALL_PROXY, all_proxy (curl reads
// ALL_PROXY after the scheme's own variables). In a CGI environment (REQUEST_METHOD
// set) HTTP_PROXY is the client's "Proxy:" request header (httpoxy,
// CVE-2016-5385): it is ignored, as net/http and curl do.
func TestProxyFromEnvironment(t *testing.T) {
	for _, tc := range []struct {
		name      string
		env       map[string]string
		flag      string
		wantValue string
		wantFrom  string
	}{
		{"flag first", map[string]string{"HTTPS_PROXY": "http://e:1"}, "http://f:1", "http://f:1", "--proxy"},
		{"HTTPS_PROXY", map[string]string{"HTTPS_PROXY": "http://a:1", "https_proxy": "http://b:1", "HTTP_PROXY": "http://c:1"}, "", "http://a:1", "HTTPS_PROXY"},
		{"HTTP_PROXY", map[string]string{"HTTP_PROXY": "http://c:1", "http_proxy": "http://d:1"}, "", "http://c:1", "HTTP_PROXY"},
		{"CGI ignores HTTP_PROXY", map[string]string{"REQUEST_METHOD": "GET", "HTTP_PROXY": "http://attacker:1"}, "", "", ""},
		{"CGI takes http_proxy", map[string]string{"REQUEST_METHOD": "GET", "HTTP_PROXY": "http://attacker:1", "http_proxy": "http://d:1"}, "", "http://d:1", "http_proxy"},
		{"CGI takes HTTPS_PROXY", map[string]string{"REQUEST_METHOD": "POST", "HTTPS_PROXY": "http://a:1"}, "", "http://a:1", "HTTPS_PROXY"},
		{"ALL_PROXY after the scheme's", map[string]string{"http_proxy": "http://d:1", "ALL_PROXY": "http://g:1"}, "", "http://d:1", "http_proxy"},
		{"ALL_PROXY", map[string]string{"ALL_PROXY": "http://g:1", "all_proxy": "http://h:1"}, "", "http://g:1", "ALL_PROXY"},
		{"all_proxy", map[string]string{"all_proxy": "http://h:1"}, "", "http://h:1", "all_proxy"},
		{"CGI takes ALL_PROXY", map[string]string{"REQUEST_METHOD": "GET", "HTTP_PROXY": "http://attacker:1", "ALL_PROXY": "http://g:1"}, "", "http://g:1", "ALL_PROXY"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			proxyEnv(t, tc.env)
			g := &globalOptions{proxy: tc.flag}
			v, from := g.proxySetting(&config.Config{})
			if v != tc.wantValue || from != tc.wantFrom {
				t.Errorf("proxy %q from %q, want %q from %q", v, from, tc.wantValue, tc.wantFrom)
			}
		})
	}
}

// NO_PROXY is read as curl reads it: entries separated by commas, spaces or
// both; no_proxy when NO_PROXY is unset; the config's no-proxy: first.
func TestNoProxyFromEnvironment(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		conf []string
		want []string
	}{
		{map[string]string{"NO_PROXY": "a.example,b.example"}, nil, []string{"a.example", "b.example"}},
		{map[string]string{"NO_PROXY": "a.example b.example\t10.0.0.0/8"}, nil, []string{"a.example", "b.example", "10.0.0.0/8"}},
		{map[string]string{"NO_PROXY": " a.example, ,b.example ,"}, nil, []string{"a.example", "b.example"}},
		{map[string]string{"no_proxy": "c.example"}, nil, []string{"c.example"}},
		{map[string]string{"NO_PROXY": "a.example"}, []string{"conf.example"}, []string{"conf.example"}},
		{map[string]string{"NO_PROXY": "a.example"}, []string{}, []string{}},
	} {
		proxyEnv(t, tc.env)
		if got := noProxy(&config.Config{NoProxy: tc.conf}); !slices.Equal(got, tc.want) {
			t.Errorf("NO_PROXY %q, config %q: %q, want %q", tc.env, tc.conf, got, tc.want)
		}
	}
}

// A NO_PROXY entry of the environment that can match no host (*.domain,
// which Go's and some other tools' grammar takes, a URL) is warned about,
// naming it: it was ignored without a word, and what it was to exempt went
// through the proxy. The config refuses such an entry when it is read.
func TestNoProxyEntryMatchingNothingIsWarned(t *testing.T) {
	proxyEnv(t, map[string]string{"HTTPS_PROXY": "http://127.0.0.1:9", "NO_PROXY": "mirror.internal,*.corp.example,http://x.example"})
	cfg := filepath.Join(t.TempDir(), "updeb.yaml")
	if err := os.WriteFile(cfg, []byte("cache: cache\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, stderr := runCLI(t, "--config", cfg, "--offline", "fetch", "https://mirror.internal/a.tgz#sha256="+strings.Repeat("0", 64))
	for _, e := range []string{"*.corp.example", "http://x.example"} {
		if !strings.Contains(stderr, "a NO_PROXY entry that matches no host is ignored") || !strings.Contains(stderr, e) {
			t.Errorf("no warning naming %q:\n%s", e, stderr)
		}
	}
	if strings.Contains(stderr, "entry=mirror.internal") {
		t.Errorf("a good entry warned about:\n%s", stderr)
	}
}

// The cache and state folders come from the flag, else the config, else
// $XDG_CACHE_HOME or $XDG_STATE_HOME, else $HOME; a relative XDG variable is
// ignored (the XDG Base Directory Specification), not taken relative to the
// folder updeb happens to run in.
func TestCacheAndStateFolders(t *testing.T) {
	for _, tc := range []struct {
		name              string
		env               map[string]string
		g                 globalOptions
		c                 config.Config
		wantCache, wantSt string
	}{
		{"flags", map[string]string{"XDG_CACHE_HOME": "/x", "XDG_STATE_HOME": "/y", "HOME": "/h"}, globalOptions{cacheDir: "/fc", stateDir: "/fs"}, config.Config{Cache: "/cc", State: "/cs"}, "/fc", "/fs"},
		{"config", map[string]string{"XDG_CACHE_HOME": "/x", "XDG_STATE_HOME": "/y", "HOME": "/h"}, globalOptions{}, config.Config{Cache: "/cc", State: "/cs"}, "/cc", "/cs"},
		{"XDG", map[string]string{"XDG_CACHE_HOME": "/x", "XDG_STATE_HOME": "/y", "HOME": "/h"}, globalOptions{}, config.Config{}, "/x/updeb", "/y/updeb"},
		{"HOME", map[string]string{"HOME": "/h"}, globalOptions{}, config.Config{}, "/h/.cache/updeb", "/h/.local/state/updeb"},
		{"relative XDG", map[string]string{"XDG_CACHE_HOME": "rel", "XDG_STATE_HOME": "./st", "HOME": "/h"}, globalOptions{}, config.Config{}, "/h/.cache/updeb", "/h/.local/state/updeb"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"XDG_CACHE_HOME", "XDG_STATE_HOME", "HOME"} {
				t.Setenv(k, tc.env[k])
			}
			if tc.env["HOME"] != "" { // a HOME that is a folder
				home := filepath.Join(t.TempDir(), strings.TrimPrefix(tc.env["HOME"], "/"))
				if err := os.Mkdir(home, 0o755); err != nil {
					t.Fatal(err)
				}
				t.Setenv("HOME", home)
				tc.wantCache = strings.Replace(tc.wantCache, tc.env["HOME"], home, 1)
				tc.wantSt = strings.Replace(tc.wantSt, tc.env["HOME"], home, 1)
			}
			cache, err := tc.g.cacheDirFor(&tc.c)
			if err != nil || cache != filepath.FromSlash(tc.wantCache) {
				t.Errorf("cache %q, %v; want %q", cache, err, tc.wantCache)
			}
			state, err := tc.g.stateDirFor(&tc.c)
			if err != nil || state != filepath.FromSlash(tc.wantSt) {
				t.Errorf("state %q, %v; want %q", state, err, tc.wantSt)
			}
		})
	}
	// --help says so: --cache named no default at all.
	flags := newRootCmd(&globalOptions{}).PersistentFlags()
	for flag, want := range map[string]string{"cache": "$XDG_CACHE_HOME/updeb, else ~/.cache/updeb", "state": "$XDG_STATE_HOME/updeb, else ~/.local/state/updeb"} {
		if u := flags.Lookup(flag).Usage; !strings.Contains(u, "default: "+flag+": in the config, else "+want) {
			t.Errorf("--%s's help %q does not name the default", flag, u)
		}
	}
	t.Setenv("HOME", "")
	t.Setenv("XDG_CACHE_HOME", "rel")
	g := &globalOptions{}
	if d, err := g.cacheDirFor(&config.Config{}); err == nil {
		t.Errorf("no absolute folder: %q", d)
	}
	t.Chdir(t.TempDir())
	if err := os.Mkdir("home", 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", "home") // a folder, relative to wherever updeb runs
	if d, err := g.cacheDirFor(&config.Config{}); err == nil {
		t.Errorf("a relative HOME: %q", d)
	}
}

// A system account's HOME=/nonexistent (Debian's nobody, _apt) gives no
// cache or state folder: a command that needs one is refused (exit 2,
// naming HOME), and none makes HOME. Run as root, outdated, plan, fetch and
// build made /nonexistent/.cache/updeb. A missing HOME below an existing
// folder (a test harness's, a CI job's fresh one) is made, as before.
func TestMissingHomeMakesNoFolder(t *testing.T) {
	const home = "/nonexistent"
	if _, err := os.Lstat(home); !errors.Is(err, fs.ErrNotExist) {
		if testenv.InCI() {
			t.Fatalf("%s exists on this machine (%v): it should not", home, err)
		}
		t.Skipf("%s exists on this machine (%v): it should not, and this test cannot tell who made it", home, err)
	}
	t.Cleanup(func() { os.RemoveAll(home) }) // were the defect back, as root
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("XDG_STATE_HOME", "")
	for _, args := range [][]string{
		{"fetch", "--offline", "--recipes", "../../testdata/demo/recipes"},
		{"outdated", "--offline", "--recipes", "../../testdata/tracking/recipes"},
		{"data", "refresh"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), args, &stdout, &stderr)
		if code != exitUsage || !strings.Contains(stderr.String(), "HOME ("+home+") is no folder updeb may keep files in") {
			t.Errorf("%s: exit %d, want %d naming HOME\n%s", args[0], code, exitUsage, stderr.String())
		}
		if _, err := os.Lstat(home); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%s made HOME: %v", args[0], err)
		}
	}
	fresh := filepath.Join(t.TempDir(), "home")
	t.Setenv("HOME", fresh)
	var g globalOptions
	if d, err := g.cacheDirFor(&config.Config{}); err != nil || d != filepath.Join(fresh, ".cache", "updeb") {
		t.Errorf("a missing HOME in an existing folder: cache %q, %v", d, err)
	}
}

// A builder whose only way out is a proxy may set ALL_PROXY alone, as curl
// reads it: updeb went direct past it, and failed with a connection error
// that named no proxy. A SOCKS proxy there (socks5://, common in
// ALL_PROXY) is one updeb does not speak: it is refused (exit 2, naming
// the variable and what to do), never passed by with a direct connection.
func TestAllProxy(t *testing.T) {
	sq := squid.ForTest(t)
	body := []byte("all_proxy\n")
	sum := sha256.Sum256(body)
	sha := hex.EncodeToString(sum[:])
	var hits atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write(body)
	}))
	t.Cleanup(up.Close)
	conf := filepath.Join(t.TempDir(), "updeb.yaml") // no proxy: of a config file on this machine
	if err := os.WriteFile(conf, []byte("fetch:\n  retries: 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"ALL_PROXY", "all_proxy"} {
		proxyEnv(t, map[string]string{k: sq.URL})
		u := up.URL + "/" + k + ".tgz"
		code, stdout, stderr := runCLI(t, "--config", conf, "--cache", t.TempDir(), "fetch", u+"#sha256="+sha)
		if code != 0 || !strings.HasPrefix(stdout, sha+"  ") {
			t.Fatalf("%s: exit %d\n%s%s", k, code, stdout, stderr)
		}
		if !strings.Contains(sq.Log(), "GET "+u) {
			t.Errorf("%s=%s: squid never saw %s (a direct connection)", k, sq.URL, u)
		}
	}
	before := hits.Load()
	for _, socks := range []string{"socks5://127.0.0.1:1080", "socks5h://127.0.0.1:1080", "socks4://127.0.0.1:1080"} {
		proxyEnv(t, map[string]string{"ALL_PROXY": socks})
		code, _, stderr := runCLI(t, "--config", conf, "--cache", t.TempDir(), "fetch", up.URL+"/socks.tgz#sha256="+sha)
		if code != exitUsage || !strings.Contains(stderr, "ALL_PROXY: proxy \""+socks+"\"") || !strings.Contains(stderr, "SOCKS") {
			t.Errorf("ALL_PROXY=%s: exit %d, want %d naming it and SOCKS\n%s", socks, code, exitUsage, stderr)
		}
	}
	if n := hits.Load() - before; n != 0 {
		t.Errorf("with a SOCKS ALL_PROXY, upstream saw %d direct request(s)", n)
	}
}
