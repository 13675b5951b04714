package config

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/fetch"
)

func TestParseFull(t *testing.T) {
	src := `proxy: http://proxy.example:3128
no-proxy: [mirror.internal, 10.0.0.0/8]
ca-bundle: certs/corp.pem
cache: /var/cache/updeb
out: out
mirrors:
  - {prefix: https://github.com/, to: file:///srv/mirror/github.com/}
  - prefix: https://dl.k8s.io/
    to: http://mirror.internal/k8s/
fetch:
  timeouts: {connect: 5s, header: 1m, idle: 90s}
  retries: 0
  retry-time: 2m
  max-size: 200MiB
  parallel: 8
  min-rate: {bytes-per-second: 2KiB, over: 20s}
`
	c, err := Parse("/etc/updeb/config.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	zero := 0
	want := Config{
		Proxy: "http://proxy.example:3128", NoProxy: []string{"mirror.internal", "10.0.0.0/8"},
		CABundle: "/etc/updeb/certs/corp.pem", Cache: "/var/cache/updeb", Out: "/etc/updeb/out",
		Mirrors: []Mirror{
			{Mirror: fetch.Mirror{Prefix: "https://github.com/", To: "file:///srv/mirror/github.com/"}},
			{Mirror: fetch.Mirror{Prefix: "https://dl.k8s.io/", To: "http://mirror.internal/k8s/"}},
		},
		Fetch: Fetch{
			Timeouts: Timeouts{Connect: Duration(5 * time.Second), Header: Duration(time.Minute), Idle: Duration(90 * time.Second)},
			Retries:  &zero, RetryTime: Duration(2 * time.Minute), MaxSize: 200 << 20, Parallel: 8,
			MinRate: &MinRate{BytesPerSecond: 2 << 10, Over: Duration(20 * time.Second)},
		},
		File: "/etc/updeb/config.yaml",
	}
	if !reflect.DeepEqual(c, &want) {
		t.Errorf("got  %+v\nwant %+v", *c, want)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ src, want string }{
		{"proxy: http://p:3128\nprox: x\n", `c.yaml:2: unknown field "prox"`},
		{"fetch:\n  retries: many\n", "c.yaml:2: cannot unmarshal !!str `many` into int"},
		{"fetch:\n  timeouts:\n    idle: 5\n", `c.yaml:3: invalid duration "5" (want a positive duration like 30s, 2m, 1h)`},
		{"fetch:\n  max-size: 2 lots\n", `c.yaml:2: invalid size "2 lots" (want bytes, or a number with KiB, MiB, GiB, TiB, kB, MB, GB or TB)`},
		{"proxy: ftp://p\n", `c.yaml:1: proxy "ftp://p": want http://HOST:PORT or https://HOST:PORT`},
		{"mirrors:\n  - {prefix: github.com/, to: file:///srv/}\n", `c.yaml:2: mirror prefix "github.com/": want an http:// or https:// URL prefix`},
		{"mirrors:\n  - {prefix: https://github.com/, to: \"ftp://srv/mirror/\"}\n", `c.yaml:2: mirror "https://github.com/": to "ftp://srv/mirror/": want file:///ABSOLUTE/PATH/, http:// or https://`},
		{"mirrors:\n  - {prefix: https://github.com/, from: x}\n", `c.yaml:2: unknown field "from" in a mirror (want prefix and to)`},
		{"proxy: [a]\n", `c.yaml:1: proxy must be a single value`},
		{"cache: /a\ncache: /b\n", `c.yaml:2: mapping key "cache" already defined at line 1`},
		{"proxy: 'x\n", `c.yaml:2: found unexpected end of stream`},
		{"- a\n", "c.yaml:1: cannot unmarshal !!seq into config.Config"},
		{"fetch:\n  min-rate: slow\n", `c.yaml:2: min-rate: want {bytes-per-second: SIZE, over: DURATION} or none, found "slow"`},
		{"fetch:\n  min-rate: {bytes: 1}\n", `c.yaml:2: unknown field "bytes" in min-rate (want bytes-per-second and over)`},
		{"fetch:\n  min-rate: {over: -1s}\n", `c.yaml:2: invalid duration "-1s"`},
		// Every bad value is reported, not only the first.
		{"fetch:\n  timeouts: {idle: x}\n  max-size: y\n", "c.yaml:2: invalid duration \"x\" (want a positive duration like 30s, 2m, 1h)\nc.yaml:3: invalid size \"y\""},
	}
	for _, tc := range tests {
		_, err := Parse("c.yaml", []byte(tc.src))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("Parse(%q)\n got %v\nwant %s", tc.src, err, tc.want)
		}
	}
}

func TestMinRateNone(t *testing.T) {
	c, err := Parse("c.yaml", []byte("fetch: {min-rate: none}"))
	if err != nil || c.Fetch.MinRate == nil || !c.Fetch.MinRate.None {
		t.Fatalf("min-rate: none: %v %+v", err, c.Fetch.MinRate)
	}
}

func TestSizes(t *testing.T) {
	for in, want := range map[string]Size{"1024": 1024, "512KiB": 512 << 10, "200MiB": 200 << 20, "4GiB": 4 << 30, "1GB": 1e9, "3kB": 3000} {
		c, err := Parse("c.yaml", []byte("fetch: {max-size: "+in+"}"))
		if err != nil || c.Fetch.MaxSize != want {
			t.Errorf("max-size %s: %v, %d; want %d", in, err, c.Fetch.MaxSize, want)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	local := filepath.Join(dir, "updeb.yaml")
	system := filepath.Join(dir, "etc.yaml")
	os.WriteFile(system, []byte("cache: /system\n"), 0o644)
	c, err := Load("", local, system)
	if err != nil || c.Cache != "/system" || c.File != system {
		t.Fatalf("without updeb.yaml: %v %+v, want the system file", err, c)
	}
	os.WriteFile(local, []byte("cache: c\n"), 0o644)
	c, err = Load("", local, system)
	if err != nil || c.Cache != filepath.Join(dir, "c") {
		t.Fatalf("with updeb.yaml: %v %+v, want it first, its relative path resolved", err, c)
	}
	if _, err := Load(filepath.Join(dir, "nope.yaml"), local); err == nil || !strings.Contains(err.Error(), "nope.yaml: cannot read the config file: no such file or directory") {
		t.Fatalf("explicit missing file: %v", err)
	}
	c, err = Load("", filepath.Join(dir, "none1"), filepath.Join(dir, "none2"))
	if err != nil || c.File != "" {
		t.Fatalf("no config at all: %v %+v, want empty", err, c)
	}
}

func TestProxyURL(t *testing.T) {
	for in, want := range map[string]string{"": "<nil>", "proxy:3128": "http://proxy:3128", "https://u:p@p:1": "https://u:xxxxx@p:1"} {
		u, err := ProxyURL(in)
		got := "<nil>"
		if u != nil {
			got = u.Redacted()
		}
		if err != nil || got != want {
			t.Errorf("ProxyURL(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
}

var errLine = regexp.MustCompile(`^c\.yaml(:\d+)?: `)

// FuzzParse: Parse never panics, and every error names the file (and a line).
func FuzzParse(f *testing.F) {
	f.Add([]byte("proxy: http://p:1\nfetch: {retries: 2, max-size: 1GiB, timeouts: {idle: 5s}}\n"))
	f.Add([]byte("mirrors:\n  - {prefix: https://a/, to: file:///b/}\n"))
	f.Add([]byte("cache: [\n"))
	f.Add([]byte("fetch: {min-rate: {bytes-per-second: 1KiB, over: 2s}}\nmirrors: [{prefix: \"https://a/%2e%2e/\", to: none}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := Parse("c.yaml", data)
		if err != nil {
			for _, line := range strings.Split(err.Error(), "\n") {
				if !errLine.MatchString(line) && !strings.HasPrefix(line, " ") {
					t.Fatalf("error line %q does not start with c.yaml:LINE:", line)
				}
			}
		}
	})
}

// A mirror "to" that is a folder (no scheme) becomes a file:// URL, relative
// to the config file's folder: air-gapped sites keep the mirror beside it.
func TestMirrorFolder(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "updeb.yaml")
	c, err := Parse(name, []byte("mirrors:\n  - {prefix: https://releases.example.org/, to: mirror/rel}\n  - {prefix: https://dl.k8s.io/, to: /srv/k8s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.Mirrors[0].To, "file://"+filepath.Join(dir, "mirror/rel")+"/"; got != want {
		t.Errorf("relative folder: %q, want %q", got, want)
	}
	if got := c.Mirrors[1].To; got != "file:///srv/k8s/" {
		t.Errorf("absolute folder: %q", got)
	}
	if _, err := Parse(name, []byte("mirrors:\n  - {prefix: ftp://x/, to: mirror}\n")); err == nil || !strings.Contains(err.Error(), "updeb.yaml:2") {
		t.Errorf("bad prefix with a folder: %v", err)
	}
}
