package main

import (
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/updeb/updeb/internal/config"
	"github.com/updeb/updeb/internal/confined"
	"github.com/updeb/updeb/internal/fetch"
	"github.com/updeb/updeb/internal/srcurl"
	"github.com/updeb/updeb/pkg/digest"
)

// defaultConfigFiles are read, first found wins, when --config is not given.
var defaultConfigFiles = []string{"updeb.yaml", "/etc/updeb/config.yaml"}

// loadConfig reads the config file the flags name (exit 2 on any problem in it).
func (g *globalOptions) loadConfig() (*config.Config, error) {
	c, err := config.Load(g.configFile, defaultConfigFiles...)
	if err != nil {
		return nil, withCode(exitUsage, err, "fix the config file, or name another with --config")
	}
	return c, nil
}

// cacheDir is --cache, else the config's cache, else $XDG_CACHE_HOME/updeb or ~/.cache/updeb.
func (g *globalOptions) cacheDirFor(c *config.Config) (string, error) {
	switch {
	case g.cacheDir != "":
		return g.cacheDir, nil
	case c.Cache != "":
		return c.Cache, nil
	case getenv("XDG_CACHE_HOME") != "":
		return filepath.Join(getenv("XDG_CACHE_HOME"), "updeb"), nil
	case getenv("HOME") != "":
		return filepath.Join(getenv("HOME"), ".cache", "updeb"), nil
	}
	return "", usageErrorf("no cache folder: set --cache, cache: in the config, XDG_CACHE_HOME or HOME")
}

// proxySetting applies the precedence flag > config > environment and says
// where the value came from (for the log).
func (g *globalOptions) proxySetting(c *config.Config) (value, from string) {
	if g.proxy != "" {
		return g.proxy, "--proxy"
	}
	if c.Proxy != "" {
		return string(c.Proxy), c.File
	}
	for _, k := range []string{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"} {
		if v := getenv(k); v != "" {
			return v, k
		}
	}
	return "", ""
}

// noProxy is the config's no-proxy when set, else NO_PROXY from the environment.
// Nothing is exempt from the proxy unless one of them lists it.
func noProxy(c *config.Config) []string {
	if c.NoProxy != nil {
		return c.NoProxy
	}
	for _, k := range []string{"NO_PROXY", "no_proxy"} {
		if v := getenv(k); v != "" {
			return strings.Split(v, ",")
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
		o.Mirrors = append(o.Mirrors, m.Mirror)
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
	u, err := config.ProxyURL(proxy)
	if err != nil {
		return nil, withCode(exitUsage, fmt.Errorf("%s: %w", from, err), "")
	}
	o.Proxy = u
	if u != nil {
		log.Debug("proxy", "url", u.Redacted(), "from", from, "no-proxy", o.NoProxy)
	}
	if c.CABundle != "" {
		pool, err := caPool(c.CABundle)
		if err != nil {
			return nil, withCode(exitUsage, err, "ca-bundle must name a PEM file of CA certificates")
		}
		o.RootCAs = pool
	}
	if !g.quiet && isTerminal(g.stderr) {
		o.Progress = fetch.Bars(g.stderr)
	}
	dir, err := g.cacheDirFor(c)
	if err != nil {
		return nil, err
	}
	f, err := fetch.New(dir, o)
	if err != nil {
		return nil, withCode(exitNetwork, err, "")
	}
	return f, nil
}

// caPool returns the system roots plus the certificates of a PEM bundle.
func caPool(file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
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

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// fetchExit classifies an error of package fetch into an exit code and a hint.
func fetchExit(err error) error {
	var (
		mismatch *digest.MismatchError
		size     *fetch.SizeError
		down     *fetch.DowngradeError
		offline  *fetch.OfflineError
		netErr   *fetch.NetworkError
		mirror   *fetch.MirrorError
	)
	switch {
	case err == nil:
		return nil
	case errors.As(err, &mismatch):
		return withCode(exitCheck, err, "the downloaded bytes differ from the pinned digest; nothing was cached. Check the pin and the upstream release")
	case errors.As(err, &size):
		return withCode(exitCheck, err, "raise fetch: max-size: in the config if this artifact really is that large")
	case errors.As(err, &down):
		return withCode(exitCheck, err, "the upstream redirected to plain http; updeb never downloads over a downgraded connection")
	case errors.Is(err, digest.ErrNoPin):
		return withCode(exitUsage, err, "")
	case errors.Is(err, srcurl.ErrInvalid):
		return withCode(exitUsage, err, "write the URL plainly: no \"..\" or \".\" segments (however encoded), no control characters or spaces")
	case errors.As(err, &mirror), errors.Is(err, confined.ErrRefused):
		return withCode(exitCheck, err, "a file updeb was to read lies outside its folder (a symlink out of it) or is not a regular file; nothing was read")
	case errors.Is(err, fetch.ErrRetryTime):
		return withCode(exitNetwork, err, "the download did not finish within fetch: retry-time; raise it in the config for a slow link, or check the proxy")
	case errors.As(err, &offline):
		return withCode(exitNetwork, err, "run without --offline to download them, or bring them into the cache or a mirror")
	case errors.As(err, &netErr):
		return withCode(exitNetwork, err, "check the proxy (--proxy, proxy: in the config, HTTPS_PROXY) and that it reaches the host")
	}
	return withCode(exitNetwork, err, "")
}
