package main

import (
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"github.com/updeb/updeb/internal/config"
	"github.com/updeb/updeb/internal/confined"
	"github.com/updeb/updeb/internal/fetch"
	"github.com/updeb/updeb/internal/srcurl"
)

// defaultConfigFiles are read, first found wins, when --config is not given.
var defaultConfigFiles = []string{"updeb.yaml", "/etc/updeb/config.yaml"}

// loadConfig reads the config file the flags name (exit 2 on any problem in it).
func (g *globalOptions) loadConfig() (*config.Config, error) {
	c, err := config.Load(g.configFile, defaultConfigFiles...)
	if err != nil {
		hint := "fix the config file, or name another with --config"
		if errors.Is(err, fs.ErrPermission) {
			hint = orPathHint(err, hint) // its text is not at fault
		}
		return nil, invalidInput(err, hint)
	}
	return c, nil
}

// cacheDirFor is --cache, else the config's cache (relative to the config
// file), else $XDG_CACHE_HOME/updeb or ~/.cache/updeb.
func (g *globalOptions) cacheDirFor(c *config.Config) (string, error) {
	if d := first(g.cacheDir, c.Cache, xdgDir("XDG_CACHE_HOME", ".cache")); d != "" {
		return d, nil
	}
	return "", noFolder("cache", "XDG_CACHE_HOME")
}

// stateDirFor is --state, else the config's state, else $XDG_STATE_HOME/updeb
// or ~/.local/state/updeb: where refreshed support data and the refreshed
// Sigstore trusted root live.
func (g *globalOptions) stateDirFor(c *config.Config) (string, error) {
	if d := first(g.stateDir, c.State, xdgDir("XDG_STATE_HOME", ".local", "state")); d != "" {
		return d, nil
	}
	return "", noFolder("state", "XDG_STATE_HOME")
}

// noFolder is the refusal of a command that needs the cache or state folder
// (what) when neither its flag, the config, env nor HOME gives one.
func noFolder(what, env string) error {
	err := fmt.Errorf("no %s folder: set --%s, %s: in the config, %s or HOME", what, what, what, env)
	if h := getenv("HOME"); h != "" {
		err = fmt.Errorf("no %s folder: HOME (%s) is no folder updeb may keep files in (a relative path, a file, or a missing folder at the top of the file system, as a system account's /nonexistent), and updeb makes none there: set --%s, %s: in the config or %s", what, h, what, what, env)
	}
	return invalidInput(err, "")
}

// xdgDir is updeb's folder in the XDG base directory env names, else in
// $HOME/home..., else "". A relative path in env is ignored, as the XDG Base
// Directory Specification says: it would be relative to whatever folder
// updeb is started in, and so is a relative HOME, and one homeDir refuses.
func xdgDir(env string, home ...string) string {
	if d := getenv(env); filepath.IsAbs(d) {
		return filepath.Join(d, "updeb")
	}
	if h := homeDir(); h != "" {
		return filepath.Join(append(append([]string{h}, home...), "updeb")...)
	}
	return ""
}

// homeDir is HOME where updeb may keep its folders: an absolute path of a
// folder, or of none yet (made with the cache, as a test harness's or a CI
// job's fresh HOME is), but never a file, nor one to make at the top of the
// file system: a system account's HOME=/nonexistent (Debian's nobody, _apt),
// which must not exist, is not made by a command run as root.
func homeDir() string {
	h := getenv("HOME")
	if !filepath.IsAbs(h) {
		return ""
	}
	fi, err := os.Stat(h)
	switch {
	case err == nil && !fi.IsDir():
		return ""
	case errors.Is(err, fs.ErrNotExist) && filepath.Dir(filepath.Clean(h)) == string(filepath.Separator):
		return ""
	}
	return h
}

// proxySetting applies the precedence flag > config > environment and says
// where the value came from (for the log). The environment is read as curl
// reads it for an https URL, the scheme's variables first, then ALL_PROXY:
// a builder whose only way out is a proxy may set ALL_PROXY alone, and a
// download that passed it by went direct and failed with a connection
// error that named no proxy. One proxy serves every URL, so the http
// variables come before ALL_PROXY too. In a CGI environment HTTP_PROXY is
// not read (see cgiProxy).
func (g *globalOptions) proxySetting(c *config.Config) (value, from string) {
	if g.proxy != "" {
		return g.proxy, "--proxy"
	}
	if c.Proxy != "" {
		return string(c.Proxy), c.File
	}
	for _, k := range []string{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"} {
		if k == "HTTP_PROXY" && cgiProxy() {
			continue
		}
		if v := getenv(k); v != "" {
			return v, k
		}
	}
	return "", ""
}

// cgiProxy reports whether HTTP_PROXY is set in a CGI environment
// (REQUEST_METHOD set), where it is the client's "Proxy:" request header,
// not the host's setting (httpoxy, CVE-2016-5385): it is ignored there, as
// net/http and curl ignore it.
func cgiProxy() bool { return getenv("REQUEST_METHOD") != "" && getenv("HTTP_PROXY") != "" }

// noProxy is the config's no-proxy when set, else NO_PROXY from the environment,
// whose entries are separated by commas, spaces or both, as curl reads it.
// Nothing is exempt from the proxy unless one of them lists it.
func noProxy(c *config.Config) []string {
	if c.NoProxy != nil {
		return c.NoProxy
	}
	for _, k := range []string{"NO_PROXY", "no_proxy"} {
		if v := getenv(k); v != "" {
			return strings.FieldsFunc(v, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
		}
	}
	return nil
}

// newFetcher builds the Fetcher every command that downloads uses, from the
// flags, the config file and the environment.
func (g *globalOptions) newFetcher(c *config.Config) (*fetch.Fetcher, error) {
	log := g.logger()
	o := fetch.Options{
		NoProxy:        noProxy(c),
		ConnectTimeout: time.Duration(c.Fetch.Timeouts.Connect),
		HeaderTimeout:  time.Duration(c.Fetch.Timeouts.Header),
		IdleTimeout:    time.Duration(c.Fetch.Timeouts.Idle),
		MaxRetryTime:   time.Duration(c.Fetch.RetryTime),
		MaxSize:        int64(c.Fetch.MaxSize),
		Parallel:       c.Fetch.Parallel,
		UserAgent:      "updeb/" + version,
		Logger:         log,
		Offline:        g.offline,
	}
	for _, m := range c.Mirrors {
		o.Mirrors = append(o.Mirrors, fetch.Mirror{Prefix: m.Prefix, To: m.To})
	}
	if mr := c.Fetch.MinRate; mr != nil {
		o.MinRate, o.MinRateTime = int64(mr.BytesPerSecond), time.Duration(mr.Over)
		if mr.None {
			o.MinRate = -1
		}
	}
	if r := c.Fetch.Retries; r != nil {
		o.Retries = *r
		if *r == 0 {
			o.Retries = -1 // fetch: negative means none, 0 the default
		}
	}
	proxy, from := g.proxySetting(c)
	if cgiProxy() {
		log.Warn("HTTP_PROXY ignored: REQUEST_METHOD is set, and in a CGI request a client's Proxy: header sets HTTP_PROXY (httpoxy); give the proxy with --proxy, proxy: in the config or HTTPS_PROXY")
	}
	u, err := config.ProxyURL(proxy)
	if err != nil {
		hint := ""
		if config.SOCKSProxy(proxy) {
			// Refused, not passed by: with a proxy set, updeb never
			// connects directly. Passed by, a builder whose only way
			// out is that proxy fails with a connection error that
			// names none, and one with a way out of its own goes past
			// the proxy its site set.
			hint = fmt.Sprintf("updeb speaks to HTTP proxies only, and with a proxy set never connects directly: name an HTTP proxy with --proxy, proxy: in the config or HTTPS_PROXY (read before ALL_PROXY), or run updeb without %s where this host reaches the internet directly", from)
		}
		return nil, invalidInput(fmt.Errorf("%s: %w", from, err), hint)
	}
	o.Proxy = u
	if u != nil {
		log.Debug("proxy", "url", srcurl.Redact(u.String()), "from", from, "no-proxy", o.NoProxy)
		if c.NoProxy == nil { // the config's entries are checked when it is read
			for _, e := range o.NoProxy {
				if !config.NoProxyEntry(e) {
					log.Warn("a NO_PROXY entry that matches no host is ignored (curl's grammar: a host, .domain, IP address or CIDR block, any of them with :PORT, or *; not *.domain): what it was to exempt goes through the proxy", "entry", e)
				}
			}
		}
	}
	if c.CABundle != "" {
		pool, err := caPool(c.CABundle)
		if err != nil {
			return nil, invalidInput(err, "ca-bundle must name a PEM file of CA certificates")
		}
		o.RootCAs = pool
	}
	o.Progress = g.fetchProgress()
	dir, err := g.cacheDirFor(c)
	if err != nil {
		return nil, err
	}
	g.shortenCache(dir)
	return fetch.New(dir, o)
}

// maxCABundle bounds a ca-bundle file: Debian's whole
// /etc/ssl/certs/ca-certificates.crt is about 220 KB.
const maxCABundle = 16 << 20

// caPool returns the system roots plus the certificates of a PEM bundle.
func caPool(file string) (*x509.CertPool, error) {
	pem, err := confined.ReadFile(file, maxCABundle)
	if err != nil {
		return nil, fmt.Errorf("ca-bundle: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("ca-bundle %s: no PEM certificate in it", file)
	}
	return pool, nil
}
