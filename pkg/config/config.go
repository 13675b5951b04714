// Package config reads updeb's config file: strict YAML (unknown fields are
// errors), every error as "FILE:LINE: message". Each concern has its own
// sub-struct; the CLI merges the file with flags (flag > config > environment)
// and passes plain values to the library packages.
//
// Relative paths in the file (cache, out, ca-bundle) are relative to the folder
// of the config file.
//
//	proxy: http://proxy.example:3128      # every download goes through it
//	no-proxy: [mirror.internal, 10.0.0.0/8] # reached directly (curl's NO_PROXY syntax)
//	ca-bundle: /etc/ssl/corp-ca.pem       # extra trusted roots, PEM
//	cache: /var/cache/updeb
//	out: out
//	mirrors:                              # longest prefix wins; no fallback to upstream
//	  - {prefix: https://github.com/, to: file:///srv/mirror/github.com/}
//	  - {prefix: https://dl.k8s.io/, to: http://mirror.internal/k8s/}
//	fetch:
//	  timeouts: {connect: 30s, header: 60s, idle: 60s}
//	  retries: 5          # after the first attempt; 0 means none
//	  retry-time: 5m      # total time budget of one download
//	  max-size: 4GiB      # bytes, or with a unit: KiB MiB GiB (also kB MB GB)
//	  parallel: 4
//	github-api: https://api.github.com   # for watch: github (updeb outdated, bump)
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/updeb/updeb/pkg/fetch"
)

// Config is the whole file.
type Config struct {
	Proxy    Proxy    `yaml:"proxy"`
	NoProxy  []string `yaml:"no-proxy"`
	CABundle string   `yaml:"ca-bundle"`
	Cache    string   `yaml:"cache"`
	Out      string   `yaml:"out"`
	Mirrors  []Mirror `yaml:"mirrors"`
	Fetch    Fetch    `yaml:"fetch"`
	Build    Build    `yaml:"build"`
	Repo     Repo     `yaml:"repo"`
	// GitHubAPI is the GitHub REST API base URL for watch: github (updeb
	// outdated/bump); "" means https://api.github.com (GitHub Enterprise: its /api/v3).
	GitHubAPI string `yaml:"github-api"`

	// File is the file the config was read from ("" when none was found).
	File string `yaml:"-"`
}

// Mirror maps upstream URLs to a local folder or an internal mirror (see package fetch).
type Mirror struct {
	fetch.Mirror `yaml:",inline"`
	// localPath is set when "to" is a folder rather than a URL; Parse turns it
	// into a file:// URL, relative paths against the config file's folder.
	localPath string
}

// Fetch configures downloads. Zero values mean the defaults of package fetch.
// Build are the site settings every package build uses.
type Build struct {
	// VersionSuffix is appended to every Debian version, e.g. "~wmf1" makes
	// 3.18.4-1~wmf1 (it sorts before 3.18.4-1, so Debian's own build wins).
	VersionSuffix string `yaml:"version-suffix"`
	// Maintainer is "Name <email>", used where a recipe names none.
	Maintainer string `yaml:"maintainer"`
	// Compression of control.tar and data.tar: xz (default), gzip, zstd or none.
	Compression string `yaml:"compression"`
	// Parallel is how many recipe+architecture builds run at once (default: CPUs).
	Parallel int `yaml:"parallel"`
	// XZWorkers is how many xz blocks (or zstd jobs) of one package are
	// compressed at once (default 2). It changes speed and memory, never the
	// bytes of the package.
	XZWorkers int `yaml:"xz-workers"`
	// XZMode is the xz encoder: fast (default) or best (smaller, about twice
	// the CPU). It changes the bytes of the package.
	XZMode string `yaml:"xz-mode"`
}

// Repo is the apt repository `updeb publish` and `updeb repo` work on. Flags
// override each field.
type Repo struct {
	Dir         string `yaml:"dir"`       // repository folder (pool/, dists/)
	Suite       string `yaml:"suite"`     // default: the recipe's, else "stable"
	Component   string `yaml:"component"` // default: the recipe's, else "main"
	Key         string `yaml:"key"`       // armored secret signing key
	Origin      string `yaml:"origin"`
	Label       string `yaml:"label"`
	Codename    string `yaml:"codename"`
	Description string `yaml:"description"`
	// Architectures always get an index, even before a package of theirs exists.
	Architectures []string `yaml:"architectures"`
	// ValidFor adds Valid-Until = Date + ValidFor to Release (0: none).
	ValidFor Duration `yaml:"valid-for"`
}

type Fetch struct {
	Timeouts  Timeouts `yaml:"timeouts"`
	Retries   *int     `yaml:"retries"` // nil: the default; 0: no retries
	RetryTime Duration `yaml:"retry-time"`
	MaxSize   Size     `yaml:"max-size"`
	Parallel  int      `yaml:"parallel"`
}

// Timeouts of one download.
type Timeouts struct {
	Connect Duration `yaml:"connect"`
	Header  Duration `yaml:"header"`
	Idle    Duration `yaml:"idle"`
}

// Duration is a time.Duration written as "30s", "2m", "1h30m".
type Duration time.Duration

// Size is a byte count written as 1048576, "512KiB", "200MiB", "4GiB" or "1GB".
type Size int64

// Error is a problem in the config file.
type Error struct {
	File string
	Line int // 0 when unknown
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return e.File + ": " + e.Msg
}

// Load reads explicit when it is not empty (it must exist), else the first of
// defaults that exists; with none, it returns an empty Config.
func Load(explicit string, defaults ...string) (*Config, error) {
	if explicit != "" {
		data, err := os.ReadFile(explicit)
		if err != nil {
			return nil, &Error{File: explicit, Msg: "cannot read the config file: " + errors.Unwrap(err).Error()}
		}
		return Parse(explicit, data)
	}
	for _, p := range defaults {
		data, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, &Error{File: p, Msg: "cannot read the config file: " + errors.Unwrap(err).Error()}
		}
		return Parse(p, data)
	}
	return &Config{}, nil
}

// yaml.v3 reports "line N: message" inside its errors.
var (
	lineRe    = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)
	unknownRe = regexp.MustCompile(`^field (\S+) not found in type \S+$`)
)

var oneLine = strings.NewReplacer("\n", `\n`, "\r", `\r`)

// Parse decodes data, read from file name, strictly and checks every value.
func Parse(name string, data []byte) (*Config, error) {
	c := &Config{}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil && err != io.EOF {
		return nil, yamlError(name, err)
	}
	c.File = name
	dir := filepath.Dir(name)
	for _, p := range []*string{&c.Cache, &c.Out, &c.CABundle, &c.Repo.Dir, &c.Repo.Key} {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(dir, *p)
		}
	}
	for i := range c.Mirrors {
		m := &c.Mirrors[i]
		if m.localPath == "" {
			continue
		}
		p := m.localPath
		if !filepath.IsAbs(p) {
			abs, err := filepath.Abs(filepath.Join(dir, p))
			if err != nil {
				return nil, err
			}
			p = abs
		}
		m.To = "file://" + filepath.ToSlash(filepath.Clean(p)) + "/"
	}
	return c, nil
}

// yamlError turns a yaml.v3 error into one *Error per line (joined).
func yamlError(name string, err error) error {
	var msgs []string
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs = te.Errors
	} else {
		msgs = []string{err.Error()}
	}
	var errs []error
	for _, m := range msgs {
		e := &Error{File: name, Msg: strings.TrimPrefix(m, "yaml: ")}
		if sm := lineRe.FindStringSubmatch(m); sm != nil {
			e.Line, _ = strconv.Atoi(sm[1])
			e.Msg = sm[2]
		}
		if sm := unknownRe.FindStringSubmatch(e.Msg); sm != nil {
			e.Msg = fmt.Sprintf("unknown field %q", sm[1])
		}
		e.Msg = oneLine.Replace(e.Msg) // a value quoted in the message may hold line breaks
		errs = append(errs, e)
	}
	return errors.Join(errs...)
}

// valueError is how a field's UnmarshalYAML reports a bad value: as a
// yaml.TypeError, so that the decoder carries on and reports every bad value.
func valueError(n *yaml.Node, format string, args ...any) error {
	return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %s", n.Line, fmt.Sprintf(format, args...))}}
}

func scalar(n *yaml.Node, what string) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", valueError(n, "%s must be a single value", what)
	}
	return n.Value, nil
}

// UnmarshalYAML reads a Go duration ("90s", "5m").
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	s, err := scalar(n, "a duration")
	if err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil || v <= 0 {
		return valueError(n, "invalid duration %q (want a positive duration like 30s, 2m, 1h)", s)
	}
	*d = Duration(v)
	return nil
}

var sizeRe = regexp.MustCompile(`^(\d+)\s*([KMGT]i?B|[kKMGT]B|B)?$`)

// UnmarshalYAML reads a byte count with an optional unit.
func (z *Size) UnmarshalYAML(n *yaml.Node) error {
	s, err := scalar(n, "a size")
	if err != nil {
		return err
	}
	m := sizeRe.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return valueError(n, "invalid size %q (want bytes, or a number with KiB, MiB, GiB, TiB, kB, MB, GB or TB)", s)
	}
	v, err := strconv.ParseInt(m[1], 10, 64)
	mult := map[string]int64{"": 1, "B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40,
		"kB": 1e3, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12}[m[2]]
	if err != nil || v <= 0 || v > (1<<62)/mult {
		return valueError(n, "size %q is out of range", s)
	}
	*z = Size(v * mult)
	return nil
}

// UnmarshalYAML reads {prefix, to} and checks both URLs.
func (m *Mirror) UnmarshalYAML(n *yaml.Node) error {
	var raw struct {
		Prefix string `yaml:"prefix"`
		To     string `yaml:"to"`
	}
	if n.Kind != yaml.MappingNode {
		return valueError(n, "a mirror must be a mapping {prefix: URL, to: URL}")
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		s, err := scalar(v, k.Value)
		if err != nil {
			return err
		}
		switch k.Value {
		case "prefix":
			raw.Prefix = s
		case "to":
			raw.To = s
		default:
			return valueError(k, "unknown field %q in a mirror (want prefix and to)", k.Value)
		}
	}
	m.Mirror = fetch.Mirror{Prefix: raw.Prefix, To: raw.To}
	if raw.To != "" && !strings.Contains(raw.To, "://") {
		// A plain folder: checked once Parse knows the config file's folder.
		m.localPath = raw.To
		m.To = "file:///placeholder/"
	}
	if err := m.Check(); err != nil {
		return valueError(n, "%v", err)
	}
	return nil
}

// ProxyURL parses a proxy setting (from the config, a flag or the environment):
// "" gives nil; a bare host:port is taken as http://host:port.
func ProxyURL(s string) (*url.URL, error) {
	if s == "" {
		return nil, nil
	}
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("proxy %q: want http://HOST:PORT or https://HOST:PORT", s)
	}
	return u, nil
}

// Proxy is a proxy URL, checked when read.
type Proxy string

// UnmarshalYAML checks the proxy URL.
func (p *Proxy) UnmarshalYAML(n *yaml.Node) error {
	s, err := scalar(n, "proxy")
	if err != nil {
		return err
	}
	if _, err := ProxyURL(s); err != nil {
		return valueError(n, "%v", err)
	}
	*p = Proxy(s)
	return nil
}
