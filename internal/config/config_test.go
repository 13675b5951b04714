package config

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
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
data:
  endoflife-url: "https://mirror.internal/eol/{product}.json"
  max-age-days: 14
  products: [nodejs]
  file: ../k8s/compat-data.yaml
  sources:
    helm: [https://mirror.internal/helm/version_skew.mdx, https://mirror.internal/helm/version_skew.md]
    calico: https://mirror.internal/calico/version-{minor}/_system-requirements.mdx
sigstore:
  trusted-root: sigstore/trusted_root.json
  rekor-url: https://rekor.mirror.internal
  github-api: https://ghe.internal/api/v3
  tuf-url: https://tuf.internal/
  tuf-root: /srv/tuf/root.json
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
			{Prefix: "https://github.com/", To: "file:///srv/mirror/github.com/"},
			{Prefix: "https://dl.k8s.io/", To: "http://mirror.internal/k8s/"},
		},
		Fetch: Fetch{
			Timeouts: Timeouts{Connect: Duration(5 * time.Second), Header: Duration(time.Minute), Idle: Duration(90 * time.Second)},
			Retries:  &zero, RetryTime: Duration(2 * time.Minute), MaxSize: 200 << 20, Parallel: 8,
			MinRate: &MinRate{BytesPerSecond: 2 << 10, Over: Duration(20 * time.Second)},
		},
		Data: Data{EndOfLifeURL: "https://mirror.internal/eol/{product}.json", MaxAgeDays: 14, Products: []string{"nodejs"},
			File: "/etc/k8s/compat-data.yaml", FileLine: 21, Sources: map[string][]string{
				"helm":   {"https://mirror.internal/helm/version_skew.mdx", "https://mirror.internal/helm/version_skew.md"},
				"calico": {"https://mirror.internal/calico/version-{minor}/_system-requirements.mdx"}}},
		Sigstore: Sigstore{TrustedRoot: "/etc/updeb/sigstore/trusted_root.json", RekorURL: "https://rekor.mirror.internal",
			GitHubAPI: "https://ghe.internal/api/v3", TUFURL: "https://tuf.internal/", TUFRoot: "/srv/tuf/root.json"},
		File: "/etc/updeb/config.yaml",
	}
	if !reflect.DeepEqual(c, &want) {
		t.Errorf("got  %+v\nwant %+v", *c, want)
	}
}

func TestDataSettings(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"", "https://endoflife.date/api/kubernetes.json"},
		{"https://mirror.internal/eol", "https://mirror.internal/eol/kubernetes.json"},
		{"https://mirror.internal/eol/", "https://mirror.internal/eol/kubernetes.json"},
		{"https://endoflife.date/api/v1/products/{product}", "https://endoflife.date/api/v1/products/kubernetes"},
	} {
		if got := (Data{EndOfLifeURL: tc.url}).ProductURL("kubernetes"); got != tc.want {
			t.Errorf("ProductURL with %q = %s, want %s", tc.url, got, tc.want)
		}
	}
	if got := (Data{}).MaxAge(); got != 30*24*time.Hour {
		t.Errorf("default max age %s", got)
	}
	if got := (Data{MaxAgeDays: 7}).MaxAge(); got != 7*24*time.Hour {
		t.Errorf("max age %s", got)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ src, want string }{
		{"proxy: http://p:3128\nprox: x\n", `c.yaml:2:1: unknown field "prox"`},
		{"fetch:\n  retries: many\n", "c.yaml:2:12: cannot unmarshal !!str `many` into int"},
		{"fetch:\n  timeouts:\n    idle: 5\n", `c.yaml:3:11: invalid duration "5" (want a positive duration like 30s, 2m, 1h)`},
		{"fetch:\n  max-size: 2 lots\n", `c.yaml:2:13: invalid size "2 lots" (want bytes, or a number with KiB, MiB, GiB, TiB, kB, MB, GB or TB)`},
		{"proxy: ftp://p\n", `c.yaml:1:8: proxy "ftp://p": want http://HOST:PORT or https://HOST:PORT`},
		{"mirrors:\n  - {prefix: github.com/, to: file:///srv/}\n", `c.yaml:2:14: mirror prefix "github.com/": want an http:// or https:// URL prefix`},
		{"mirrors:\n  - {prefix: https://github.com/, to: \"ftp://srv/mirror/\"}\n", `c.yaml:2:39: mirror "https://github.com/": to "ftp://srv/mirror/": want file:///ABSOLUTE/PATH/, http:// or https://`},
		{"mirrors:\n  - {prefix: https://github.com/, from: x}\n", `c.yaml:2:35: unknown field "from" in a mirror (want prefix and to)`},
		{"proxy: [a]\n", `c.yaml:1:8: proxy must be a single value`},
		{"cache: /a\ncache: /b\n", `c.yaml:2:1: mapping key "cache" already defined at line 1`},
		{"proxy: 'x\n", `c.yaml:2:1: found unexpected end of stream`},
		{"- a\n", "c.yaml:1:1: cannot unmarshal !!seq into config.Config"},
		{"fetch:\n  min-rate: slow\n", `c.yaml:2:13: fetch.min-rate: want {bytes-per-second: SIZE, over: DURATION} or none, found "slow"`},
		{"fetch:\n  min-rate: {bytes: 1}\n", `c.yaml:2:14: unknown field "bytes"`},
		{"fetch:\n  min-rate: {over: -1s}\n", `c.yaml:2:20: invalid duration "-1s"`},
		{"mirrors:\n  - {prefix: \"https://a/%2e%2e/\", to: \"file:///srv/\"}\n", `c.yaml:2:14: mirror prefix "https://a/%2e%2e/": want an http:// or https:// URL prefix without . or .. segments`},
		{"mirrors:\n  - {prefix: https://a/, to: \"file:///srv/../etc/\"}\n", `c.yaml:2:30: mirror "https://a/": to "file:///srv/../etc/": want file:///ABSOLUTE/PATH/, http:// or https://, without . or .. segments`},
		{"mirrors:\n  - {prefix: https://a/, to: \"http://m/a/%2e%2e/\"}\n", `c.yaml:2:30: mirror "https://a/": to "http://m/a/%2e%2e/"`},
		{"sigstore:\n  rekor-url: rekor.sigstore.dev\n", `c.yaml:2:14: sigstore.rekor-url "rekor.sigstore.dev": want an http:// or https:// URL`},
		{"sigstore:\n  trusted-roots: x\n", `c.yaml:2:3: unknown field "trusted-roots" (known: github-api, rekor-url, trusted-root, tuf-root, tuf-url)`},
		{"sigstore: [x]\n", "c.yaml:1:11: cannot unmarshal !!seq into config.Sigstore: sigstore is a mapping"},
		{"sigstore:\n  trusted-root: [a, b]\n", "c.yaml:2:17: sigstore.trusted-root must be a single value"},
		// Every bad value is reported, not only the first.
		{"fetch:\n  timeouts: {idle: x}\n  max-size: y\n", "c.yaml:2:20: invalid duration \"x\" (want a positive duration like 30s, 2m, 1h)\nc.yaml:3:13: invalid size \"y\""},
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
	// updeb.yaml, a link to a config that is gone (a share not mounted), is
	// refused: the system file, or no config at all, used to stand in for
	// it without a word.
	gone := filepath.Join(dir, "gone")
	if err := os.Symlink("/mnt/share/updeb.yaml", gone); err != nil {
		t.Fatal(err)
	}
	if _, err := Load("", gone, system); err == nil || err.Error() != gone+": cannot read the config file: it is a symlink to /mnt/share/updeb.yaml, which does not exist" {
		t.Fatalf("a dangling symlink: %v, want it refused", err)
	}
}

func TestProxyURL(t *testing.T) {
	for in, want := range map[string]string{"": "<nil>", "proxy:3128": "http://proxy:3128", "https://u:p@p:1": "https://u:xxxxx@p:1", "[::1]:3128": "http://[::1]:3128", "http://p:65535/": "http://p:65535/"} {
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

// A proxy setting that is refused is named in the error without its
// password: the error goes to the terminal and CI logs, the password is the
// proxy's.
func TestProxyURLErrorHidesPassword(t *testing.T) {
	for in, want := range map[string]string{
		"socks5://alice:s3cret@proxy:1080":    `proxy "socks5://alice:xxxxx@proxy:1080": want http://HOST:PORT or https://HOST:PORT`,
		"http://alice:s3%zzcret@proxy:3128":   `proxy "http://alice:xxxxx@proxy:3128": want`,
		"http://alice:s3c ret@proxy:3128":     `proxy "http://alice:xxxxx@proxy:3128": want`,
		"http://al@ice:s3/cr@et@proxy:3128/p": `proxy "http://al@ice:xxxxx@proxy:3128/p": want`,
		"ftp://alice:s3cret@proxy:21":         `proxy "ftp://alice:xxxxx@proxy:21": want`,
		"alice:s3cret@proxy:3128/%zz":         `proxy "http://alice:xxxxx@proxy:3128/%zz": want`,
		"socks5h://bob@proxy:1080":            `proxy "socks5h://bob@proxy:1080": want`, // a user alone is no secret
		// no host (it would dial this one), a port no dial can use
		"http://alice:s3cret@:3128":       `proxy "http://alice:xxxxx@:3128": want`,
		"http://alice:s3cret@proxy:99999": `proxy "http://alice:xxxxx@proxy:99999": want`,
		"alice:s3cret@proxy:0":            `proxy "http://alice:xxxxx@proxy:0": want`,
	} {
		_, err := ProxyURL(in)
		if err == nil || strings.Contains(err.Error(), "s3c") || !strings.Contains(err.Error(), want) {
			t.Errorf("ProxyURL(%q): %v\nwant an error with %s and no password", in, err, want)
		}
	}
	_, err := Parse("c.yaml", []byte("proxy: \"socks5://alice:s3cret@proxy:1080\"\n"))
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("config: %v, want an error without the password", err)
	}
	// A mirror is reached without credentials: one given some is refused,
	// saying why, without printing the password.
	_, err = Parse("c.yaml", []byte("mirrors:\n  - {prefix: https://github.com/, to: \"https://alice:s3cret@mirror.internal/gh/\"}\n"))
	want := `c.yaml:2:39: mirror "https://github.com/": to "https://alice:xxxxx@mirror.internal/gh/": a mirror is reached without credentials: remove USER:PASSWORD@`
	if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), want) {
		t.Errorf("mirror: %v\nwant %s", err, want)
	}
}

// The service URLs (github-api, sigstore's, the support data's) are named
// without their password too when refused.
func TestServiceURLErrorHidesPassword(t *testing.T) {
	for in, want := range map[string]string{
		"github-api: \"https://alice:s3cret@ghe:x/\"":                      `c.yaml:1:13: github-api "https://alice:xxxxx@ghe:x/": want an http:// or https:// URL`,
		"sigstore:\n  rekor-url: \"HTTPS://alice:s3cret@rekor/\"":          `c.yaml:2:14: sigstore.rekor-url "HTTPS://alice:xxxxx@rekor/": want an http:// or https:// URL (the scheme in lower case)`,
		"sigstore:\n  github-api: \"https://alice:s3c ret@ghe/\"":          `c.yaml:2:15: sigstore.github-api "https://alice:xxxxx@ghe/": want`,
		"sigstore:\n  tuf-url: \"ftp://alice:s3cret@tuf/\"":                `c.yaml:2:12: sigstore.tuf-url "ftp://alice:xxxxx@tuf/": want`,
		"data:\n  endoflife-url: \"https://alice:s3cret@eol:x/{product}\"": `c.yaml:2:18: data.endoflife-url "https://alice:xxxxx@eol:x/{product}": want`,
	} {
		_, err := Parse("c.yaml", []byte(in+"\n"))
		if err == nil || strings.Contains(err.Error(), "s3c") || !strings.Contains(err.Error(), want) {
			t.Errorf("%s:\n%v\nwant an error with %s and no password", in, err, want)
		}
	}
}

var errLine = regexp.MustCompile(`^c\.yaml(:\d+:\d+)?: `)

// FuzzParse: Parse never panics, and every error names the file (and a line).
func FuzzParse(f *testing.F) {
	f.Add([]byte("proxy: http://p:1\nfetch: {retries: 2, max-size: 1GiB, timeouts: {idle: 5s}}\n"))
	f.Add([]byte("mirrors:\n  - {prefix: https://a/, to: file:///b/}\n"))
	f.Add([]byte("cache: [\n"))
	f.Add([]byte("fetch: {min-rate: {bytes-per-second: 1KiB, over: 2s}}\nmirrors: [{prefix: \"https://a/%2e%2e/\", to: none}]\n"))
	f.Add([]byte("sigstore: {trusted-root: r.json, rekor-url: https://rekor.internal, github-api: https://ghe/api/v3, tuf-url: https://tuf/, tuf-root: t.json}\n"))
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

// Values that would only fail later (mid-build, mid-download) are refused
// when the file is read, each with its position; all of them at once.
func TestParseBounds(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"build:\n  xz-workers: 100000\n", "c.yaml:2:15: build.xz-workers: 100000 is out of range: want 1 to 64"},
		{"cache: \"/var/cache/\\0x\"\n", `c.yaml:1:8: cache: "/var/cache/\x00x" holds a NUL byte, which no path can`},
		// Every path is checked alike: a signing key of repo.keys and a
		// mirror's folder too, not at their first use, without a position.
		{"repo:\n  keys: [/k, \"k\\0y\"]\n", `c.yaml:2:14: repo.keys[1]: "k\x00y" holds a NUL byte, which no path can`},
		{"mirrors:\n  - {prefix: https://a/, to: \"m\\0x\"}\n", `c.yaml:2:30: mirror "https://a/": to: "m\x00x" holds a NUL byte, which no path can`},
		// ~ is not expanded: refused rather than taken as a folder named ~.
		{"cache: ~/.cache/updeb\n", `c.yaml:1:8: cache: "~/.cache/updeb": ~ is not expanded in the config file: write the absolute path (or ./~/.cache/updeb for a file or folder of that name beside the config file)`},
		{"repo:\n  key: ~updeb/k.asc\n", `c.yaml:2:8: repo.key: "~updeb/k.asc": ~ is not expanded`},
		{"repo:\n  keys: [~/k.asc]\n", `c.yaml:2:10: repo.keys[0]: "~/k.asc": ~ is not expanded`},
		{"mirrors:\n  - {prefix: https://a/, to: ~/mirror}\n", `c.yaml:2:30: mirror "https://a/": to: "~/mirror": ~ is not expanded`},
		{"build:\n  xz-workers: 0\n", "c.yaml:2:15: build.xz-workers: 0 is out of range: want 1 to 64"},
		{"build:\n  memory: lots\n", "c.yaml:2:11: invalid size \"lots\" (want bytes, or a number with KiB, MiB, GiB, TiB, kB, MB, GB or TB)"},
		{"build:\n  memory: 0\n", "c.yaml:2:11: size \"0\" is out of range: want 1 byte to 1TiB"},
		{"build:\n  parallel: 1000\n", "c.yaml:2:13: build.parallel: 1000 is out of range: want 1 to 256"},
		{"build:\n  parallel: -1\n", "c.yaml:2:13: build.parallel: -1 is out of range: want 1 to 256"},
		// yaml.v3 reads 010 as octal 8 and 08 as a float; YAML 1.2 and the
		// JSON schema read both as decimal: refused, whichever was meant.
		{"build:\n  parallel: 010\n", "c.yaml:2:13: build.parallel: 010 has a leading zero, which YAML reads as octal (8): write it without the leading zero (10)"},
		{"build:\n  xz-workers: 08\n", "c.yaml:2:15: build.xz-workers: 08 has a leading zero, which YAML reads as a float, not an integer: write it without the leading zero (8)"},
		{"fetch:\n  retries: -0_10\n", "c.yaml:2:12: fetch.retries: -0_10 has a leading zero, which YAML reads as octal (-8): write it without the leading zero (-10)"},
		{"repo: {keep: 00}\n", "c.yaml:1:14: repo.keep: 00 has a leading zero, which YAML reads as octal (0): write it without the leading zero (0)"},
		{"build:\n  parallel: 2.5\n", "c.yaml:2:13: cannot unmarshal !!float `2.5` into int: build.parallel is a whole number from 1 to 256"},
		{"build:\n  compression: rar\n", `c.yaml:2:16: build.compression "rar": want xz, gzip, zstd or none`},
		{"build:\n  xz-mode: fastest\n", `c.yaml:2:12: build.xz-mode "fastest": want fast or best`},
		{"build:\n  maintainer: [a]\n", "c.yaml:2:15: build.maintainer must be a single value"},
		{"fetch:\n  retries: -1\n", "c.yaml:2:12: fetch.retries: -1 is out of range: want 0 to 100"},
		{"fetch:\n  retries: 1000000000000000000000\n", "c.yaml:2:12: cannot unmarshal !!float `1000000000000000000000` into int: fetch.retries is a whole number from 0 to 100"},
		{"fetch:\n  parallel: 0\n", "c.yaml:2:13: fetch.parallel: 0 is out of range: want 1 to 64"},
		{"fetch:\n  parallel: 10000\n", "c.yaml:2:13: fetch.parallel: 10000 is out of range: want 1 to 64"},
		{"fetch:\n  timeouts: {connect: 48h}\n", "c.yaml:2:23: fetch.timeouts.connect: 48h is too long: at most 1h0m0s"},
		{"fetch:\n  timeouts: {idle: -5s}\n", `c.yaml:2:20: invalid duration "-5s" (want a positive duration like 30s, 2m, 1h)`},
		{"fetch:\n  retry-time: 1000h\n", "c.yaml:2:15: fetch.retry-time: 1000h is too long: at most 24h0m0s"},
		{"fetch:\n  max-size: 2TiB\n", `c.yaml:2:13: size "2TiB" is out of range: want 1 byte to 1TiB`},
		{"fetch:\n  max-size: 0\n", `c.yaml:2:13: size "0" is out of range: want 1 byte to 1TiB`},
		{"fetch: 3\n", "c.yaml:1:8: cannot unmarshal !!int `3` into config.Fetch: fetch is a mapping"},
		{"fetch:\n  timeouts: [1s]\n", "c.yaml:2:13: cannot unmarshal !!seq into config.Timeouts: fetch.timeouts is a mapping"},
		{"github-api: ftp://x\n", `c.yaml:1:13: github-api "ftp://x": want an http:// or https:// URL`},
		{"data: {endoflife-url: \"file:///x/{product}\"}\n", `c.yaml:1:23: data.endoflife-url "file:///x/{product}": want an http:// or https:// URL`},
		// The URLs made from these are fetched, and the fetcher's grammar
		// (package srcurl) wants the scheme in lower case: refused here, not
		// mid-run as a URL the config does not name.
		{"github-api: HTTPS://api.github.com\n", `c.yaml:1:13: github-api "HTTPS://api.github.com": want an http:// or https:// URL (the scheme in lower case)`},
		{"sigstore: {rekor-url: Https://rekor.sigstore.dev}\n", `c.yaml:1:23: sigstore.rekor-url "Https://rekor.sigstore.dev": want an http:// or https:// URL`},
		{"sigstore: {tuf-url: HTTP://tuf.internal/}\n", `c.yaml:1:21: sigstore.tuf-url "HTTP://tuf.internal/": want an http:// or https:// URL`},
		{"sigstore: {github-api: HTTPS://ghe/api/v3}\n", `c.yaml:1:24: sigstore.github-api "HTTPS://ghe/api/v3": want an http:// or https:// URL`},
		{"data: {endoflife-url: \"HTTPS://endoflife.date/api/{product}.json\"}\n", `c.yaml:1:23: data.endoflife-url "HTTPS://endoflife.date/api/{product}.json": want an http:// or https:// URL`},
		// Nor a URL the fetcher refuses for its host or port: "https://:8443"
		// names no host (it would dial this one), 99999 no port.
		{"github-api: \"https://:8443\"\n", `c.yaml:1:13: github-api "https://:8443": want an http:// or https:// URL: no host`},
		{"sigstore: {rekor-url: \"https://rekor.internal:99999\"}\n", `c.yaml:1:23: sigstore.rekor-url "https://rekor.internal:99999": want an http:// or https:// URL: port 99999: want a port from 1 to 65535`},
		{"data: {endoflife-url: \"https://eol.internal:0/{product}.json\"}\n", `c.yaml:1:23: data.endoflife-url "https://eol.internal:0/{product}.json": want an http:// or https:// URL: port 0: want a port from 1 to 65535 (with {product} where the product name goes, or a base URL)`},
		{"data: {max-age-days: 0}\n", `c.yaml:1:22: data.max-age-days: 0 is out of range: want 1 to 3650`},
		{"data: {max-age: 30}\n", `c.yaml:1:8: unknown field "max-age" (known: endoflife-url, file, max-age-days, products, sources)`},
		{"data: {sources: {flannel: https://x.org/a}}\n", `c.yaml:1:27: data.sources.flannel: unknown table "flannel" (known: helm, containerd, istio, kubeadm-etcd, calico, cilium, cri-tools)`},
		{"data: {sources: {calico: https://x.org/calico.mdx}}\n", `c.yaml:1:26: data.sources.calico: "https://x.org/calico.mdx": Calico's supported Kubernetes versions is published per calico minor: the URL needs {minor} where the minor goes`},
		{"data: {sources: {helm: [ftp://x.org/a]}}\n", `c.yaml:1:24: data.sources.helm: "ftp://x.org/a" is not an acceptable download URL: not an http:// or https:// URL`},
		{"data: {sources: {helm: []}}\n", `c.yaml:1:24: data.sources.helm: name at least one URL`},
		// The same URL twice would be fetched twice, and the refresh would
		// say upstream's page gives each row twice.
		{"data: {sources: {helm: [https://x.org/a, https://x.org/a]}}\n", `c.yaml:1:42: data.sources.helm: "https://x.org/a" listed twice`},
		// {minor} in the URL of a table published as one file stands for
		// nothing: the refresh said the end-of-life data had no cycle of
		// product "" to fetch it for.
		{"data: {sources: {helm: \"https://x.org/helm-www/{minor}/version_skew.mdx\"}}\n", `c.yaml:1:24: data.sources.helm: "https://x.org/helm-www/{minor}/version_skew.mdx": Helm's version skew table is one file, not one per minor: {minor} stands for nothing there`},
		{"data: {sources: {helm: https://x.org/a, helm: https://x.org/b}}\n", `c.yaml:1:41: data.sources: key "helm" given twice`},
		{"data: {products: [../etc]}\n", `c.yaml:1:19: data.products: "../etc" is not an endoflife.date product name`},
		{"repo:\n  valid-for: soon\n", `c.yaml:2:14: invalid duration "soon" (want a positive duration like 30s, 2m, 1h)`},
		// Refused here, with its line, as publish would refuse it: apt finds
		// a Valid-Until under a minute after Date expired.
		{"repo:\n  valid-for: 30s\n", `c.yaml:2:14: repo.valid-for: valid-for 30s is under 1m0s: Valid-Until is written to the second`},
		{"repo:\n  suite: \"a\\nb\"\n", `c.yaml:2:10: repo.suite must be one line`},
		{"repo:\n  suite: .hidden\n", `c.yaml:2:10: repo.suite: suite ".hidden": want up to 100 letters`},
		{"repo:\n  suite: a b\n", `c.yaml:2:10: repo.suite: suite "a b": want`},
		{"repo:\n  component: ../main\n", `c.yaml:2:14: repo.component: component "../main": want`},
		{"repo:\n  codename: \"book worm\"\n", `c.yaml:2:13: repo.codename: codename "book worm": want`},
		{"repo:\n  origin: \"tab\\there\"\n", `c.yaml:2:11: repo.origin: Origin "tab\there": a control or non-printing character (U+0009)`},
		{"repo:\n  label: \"Corp \"\n", `c.yaml:2:10: repo.label: Label "Corp ": leading or trailing white space`},
		{"repo:\n  architectures: [amd64, all]\n", `c.yaml:2:26: repo.architectures[1]: architecture "all": "all" packages go to every architecture's index`},
		{"repo:\n  architectures: [AMD64]\n", `c.yaml:2:19: repo.architectures[0]: architecture "AMD64": want a Debian architecture`},
		// A no-proxy entry that no host can match (NO_PROXY's commas in one
		// entry, a URL, a bad CIDR or port, curl's unsupported *.domain) would
		// leave its host behind the proxy without a word.
		{"no-proxy:\n  - mirror.internal,10.0.0.0/8\n", `c.yaml:2:5: no-proxy[0]: "mirror.internal,10.0.0.0/8": want a host name, .domain (the domain and its hosts), IP address, CIDR block (10.0.0.0/8), any of them with :PORT, or *; one to a list entry`},
		{"no-proxy: [ok.example, \"http://mirror.internal\"]\n", `c.yaml:1:24: no-proxy[1]: "http://mirror.internal": want a host name`},
		{"no-proxy: [10.0.0.0/33]\n", `c.yaml:1:12: no-proxy[0]: "10.0.0.0/33": want`},
		{"no-proxy: [\"mirror:99999\"]\n", `c.yaml:1:12: no-proxy[0]: "mirror:99999": want`},
		{"no-proxy: [\"*.example.org\"]\n", `c.yaml:1:12: no-proxy[0]: "*.example.org": want`},
		{"mirrors: {prefix: x}\n", "c.yaml:1:10: mirrors: expected a list, found a mapping"},
		// One prefix, two places: only one would ever be used.
		{"mirrors:\n  - {prefix: https://a/b/, to: /m1}\n  - {prefix: https://c/, to: /m2}\n  - {prefix: https://a/b/, to: /m3}\n",
			`c.yaml:4:14: mirror prefix "https://a/b/": the mirror at line 2 has this prefix already, and only one of them would ever be used: keep one`},
		{"mirrors:\n  - prefix: https://a/b\n    to: /m1\n  - {prefix: https://a/b/, to: /m2}\n", `c.yaml:4:14: mirror prefix "https://a/b/": the mirror at line 2 has`},
		// One origin spelled two ways (fetch matches origins so): the
		// second was never used, without a word.
		{"mirrors:\n  - {prefix: https://GitHub.com:443/helm/, to: /m1}\n  - {prefix: https://github.com./helm, to: /m2}\n",
			`c.yaml:3:14: mirror prefix "https://github.com./helm": the mirror at line 2 has this prefix already`},
		{"mirrors:\n  - https://a/\n", "c.yaml:2:5: a mirror must be a mapping {prefix: URL, to: URL}"},
		{"cache: &c /a\nout: *c\n", "c.yaml:1:8: cache: YAML anchors and aliases are not supported\nc.yaml:2:6: out: YAML anchors and aliases are not supported"},
		{"cache: /a\n---\ncache: /b\n", "c.yaml:2:1: a config file is one YAML document; found another one here"},
		// Every problem at once, in file order.
		{"build:\n  compression: rar\n  xz-workers: 100000\nfetch:\n  parallel: -2\nprox: x\n",
			"c.yaml:2:16: build.compression \"rar\": want xz, gzip, zstd or none\n" +
				"c.yaml:3:15: build.xz-workers: 100000 is out of range: want 1 to 64\n" +
				"c.yaml:5:13: fetch.parallel: -2 is out of range: want 1 to 64\n" +
				"c.yaml:6:1: unknown field \"prox\""},
	} {
		_, err := Parse("c.yaml", []byte(tc.src))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("Parse(%q)\n got %v\nwant %s", tc.src, err, tc.want)
		}
	}
	for _, ok := range []string{"build: {xz-workers: 64, parallel: 256, compression: zstd, xz-mode: best, memory: 4GiB}", "build: {xz-mode: fast}", "fetch: {retries: 100, parallel: 64, max-size: 1TiB, timeouts: {connect: 1h}, retry-time: 24h}", "build: {compression: none}", "cache: ~", "cache: ./~x", "out: a/~b",
		"no-proxy: [\"*\", mirror.internal, .example.org, example.net., Mirror.Internal:8080, 10.0.0.1, 10.0.0.0/8, \"::1\", \"fd00::/8\", \"[::1]:3142\", \" spaced.example \"]",
		"repo: {suite: k8s-1.36, component: updates/main, codename: stable, origin: Example Corp., label: \"Kubernetes packages\", architectures: [amd64, arm64]}",
		"repo: {valid-for: 1m}"} {
		if _, err := Parse("c.yaml", []byte(ok)); err != nil {
			t.Errorf("Parse(%q): %v", ok, err)
		}
	}
}

// A control character in a value never reaches the terminal raw.
func TestParseEscapes(t *testing.T) {
	_, err := Parse("c.yaml", []byte("build:\n  compression: \"\\e[31mrar\"\n"))
	if err == nil || err.Error() != `c.yaml:2:16: build.compression "\x1b[31mrar": want xz, gzip, zstd or none` {
		t.Errorf("got %v", err)
	}
}

func TestLoadTooLarge(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(p, []byte("out: "+strings.Repeat("x", 2<<20)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p); err == nil || err.Error() != p+":1:1: config file is larger than 1048576 bytes" {
		t.Errorf("got %v", err)
	}
}

// TestReadmeExample keeps the config example in docs/configuration.md (once
// README's) valid.
func TestReadmeExample(t *testing.T) {
	example := docExample(t)
	if example == "" {
		t.Fatal("docs/configuration.md has no example")
	}
	c, err := Parse("/etc/updeb/config.yaml", []byte(example))
	if err != nil {
		t.Fatal(err)
	}
	if c.Build.XZWorkers != 2 || len(c.Mirrors) != 2 || c.Repo.Dir != "/srv/apt" {
		t.Errorf("parsed %+v", c)
	}
}

// A key whose value is null (everything under it commented out) is unset, as
// yaml.v3's struct decoding had it; an empty no-proxy list is set and empty.
func TestParseNulls(t *testing.T) {
	c, err := Parse("c.yaml", []byte("proxy:\nmirrors:\nfetch:\n  retries:\n  timeouts:\nbuild:\n#  xz-workers: 4\nrepo: ~\nno-proxy: []\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Proxy != "" || c.Mirrors != nil || c.Fetch.Retries != nil || c.Build != (Build{}) || c.NoProxy == nil || len(c.NoProxy) != 0 {
		t.Errorf("parsed %+v", c)
	}
	if c, err := Parse("c.yaml", []byte("no-proxy:\nbuild: {parallel: 0x10}\n")); err != nil || c.NoProxy != nil || c.Build.Parallel != 16 {
		t.Errorf("no-proxy null: %v %+v", err, c)
	}
	// YAML's explicit notations stay; 0 and a quoted "010" are no leading zeros.
	if c, err := Parse("c.yaml", []byte("build: {parallel: 0o10, xz-workers: 1_0}\nfetch: {retries: 0}\n")); err != nil || c.Build.Parallel != 8 || c.Build.XZWorkers != 10 || *c.Fetch.Retries != 0 {
		t.Errorf("0o10, 1_0, 0: %v %+v", err, c)
	}
}

func TestProvenanceKeyIsRelativeToTheFile(t *testing.T) {
	for src, want := range map[string]string{
		"build:\n  provenance-key: keys/prov.secret.asc\n": "/etc/updeb/keys/prov.secret.asc",
		"build:\n  provenance-key: /srv/k.asc\n":           "/srv/k.asc",
		"build:\n  provenance-key:\n":                      "",
	} {
		c, err := Parse("/etc/updeb/config.yaml", []byte(src))
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		if c.Build.ProvenanceKey != want {
			t.Errorf("%q: %q, want %q", src, c.Build.ProvenanceKey, want)
		}
	}
	if _, err := Parse("c.yaml", []byte("build:\n  provenance-key: [a]\n")); err == nil || !strings.Contains(err.Error(), "c.yaml:2:19: build.provenance-key must be a single value") {
		t.Errorf("a list: %v", err)
	}
}

// The keys of repo.keys are paths like repo.key: relative to the file.
func TestRepoKeysAreRelativeToTheFile(t *testing.T) {
	c, err := Parse("/etc/updeb/config.yaml", []byte("repo:\n  key: k1.asc\n  keys: [k2.asc, /srv/k3.asc]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Repo.Key != "/etc/updeb/k1.asc" || !slices.Equal(c.Repo.Keys, []string{"/etc/updeb/k2.asc", "/srv/k3.asc"}) {
		t.Errorf("key %q, keys %q", c.Repo.Key, c.Repo.Keys)
	}
}

// docExample is the config example of docs/configuration.md: its first YAML
// block.
func docExample(t *testing.T) string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "```yaml\n")
	if !ok {
		t.Fatal("docs/configuration.md has no YAML example")
	}
	example, _, _ := strings.Cut(rest, "```")
	return example
}

// The build settings every recipe uses are checked when the file is read,
// as the recipes would check them: a bad one names the config file and its
// line, not each recipe in turn (recipes/cfssl.yaml:1:1 for every recipe
// and architecture of a build).
func TestBuildSettingsCheckedHere(t *testing.T) {
	for in, want := range map[string]string{
		"build:\n  version-suffix: \"a b\"\n": `c.yaml:2:19: build.version-suffix: local suffix "a b": only letters, digits and . + ~ are allowed`,
		"build:\n  version-suffix: -x\n":      `c.yaml:2:19: build.version-suffix: local suffix "-x": only letters, digits and . + ~ are allowed`,
		"build:\n  version-suffix: \"5\"\n":   `c.yaml:2:19: build.version-suffix: local suffix "5" starts with a digit, which dpkg reads as one number with the version's last digits (1.2.0-1 becomes 1.2.0-15, a later revision than 1.2.0-2): start it with ~, + or a letter (~site1)`,
		"build:\n  maintainer: x\n":           `c.yaml:2:15: build.maintainer: default maintainer "x" is not "Full Name <email@address>"`,
	} {
		if _, err := Parse("c.yaml", []byte(in)); err == nil || err.Error() != want {
			t.Errorf("%q: %v, want %s", in, err, want)
		}
	}
	c, err := Parse("c.yaml", []byte("build: {version-suffix: ~wmf1, maintainer: \"A B <a@example.org>\"}\n"))
	if err != nil || c.Build.VersionSuffix != "~wmf1" || c.Build.Maintainer != "A B <a@example.org>" {
		t.Errorf("valid settings: %v %+v", err, c)
	}
}
