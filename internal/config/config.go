// Package config reads updeb's config file through internal/yamlfile: strict
// YAML (unknown fields, keys given twice, anchors and aliases are errors), at
// most yamlfile.MaxSize bytes, every problem as "FILE:LINE:COL: message", all
// of them reported together. Each concern has its own sub-struct of plain
// values, checked when the file is read so that a bad value fails here and not
// in the middle of a build; the CLI merges the file with flags (flag > config >
// environment) and turns the values into the options of the library packages.
//
// Relative paths in the file (cache, out, ca-bundle, repo.dir, repo.key, repo.keys,
// build.provenance-key, a mirror's folder, sigstore.trusted-root,
// sigstore.tuf-root and data.file) are relative to the folder of the config file;
// one that starts with ~ is refused (no shell expands it here).
//
//	proxy: http://proxy.example:3128      # every download goes through it
//	no-proxy: [mirror.internal, 10.0.0.0/8] # reached directly (curl's NO_PROXY syntax)
//	ca-bundle: /etc/ssl/corp-ca.pem       # extra trusted roots, PEM
//	cache: /var/cache/updeb
//	state: /var/lib/updeb                # refreshed data (updeb data refresh, updeb trust refresh)
//	out: out
//	mirrors:                              # longest prefix wins; no fallback to upstream
//	  - {prefix: https://github.com/, to: file:///srv/mirror/github.com/}
//	  - {prefix: https://dl.k8s.io/, to: http://mirror.internal/k8s/}
//	fetch:
//	  timeouts: {connect: 30s, header: 60s, idle: 60s}  # each at most 1h
//	  retries: 5          # after the first attempt; 0 means none; at most 100
//	  retry-time: 5m      # total time budget of one download, retries included; at most 24h
//	  min-rate: {bytes-per-second: 1KiB, over: 30s}  # slower ends an attempt; "none" disables
//	  max-size: 4GiB      # bytes, or with a unit: KiB MiB GiB TiB (also kB MB GB TB); at most 1TiB
//	  parallel: 4         # 1 to 64
//	github-api: https://api.github.com   # for watch: github (updeb outdated, bump)
//	data:                                # data tables (end-of-life dates, compatibility tables) for updeb data refresh
//	  endoflife-url: https://endoflife.date/api/{product}.json  # or a mirror; a base URL gets /{product}.json
//	  max-age-days: 30                   # warn when a table in use is older (1 to 3650)
//	  products: [nodejs]                 # endoflife.date products to fetch besides the bundled ones
//	  file: ../compat-data.yaml          # the recipes repository's data file (default compat-data.yaml beside the recipes folder)
//	  sources:                           # where a compatibility table is fetched from (default: upstream's own files)
//	    helm: [https://mirror.internal/helm-www/docs/topics/version_skew.mdx, https://mirror.internal/helm-www/versioned_docs/version-3/topics/version_skew.md]
//	    calico: https://mirror.internal/tigera-docs/calico_versioned_docs/version-{minor}/_includes/partials/_system-requirements.mdx
//	sigstore:
//	  trusted-root: /etc/updeb/trusted_root.json  # instead of the refreshed or bundled public-good root
//	  rekor-url: https://rekor.sigstore.dev       # Rekor (v1 API) for cosign signatures; mirrors apply
//	  github-api: https://api.github.com          # for github-attestations; default github-api above
//	  tuf-url: https://tuf-repo-cdn.sigstore.dev  # what updeb trust refresh reads
//	  tuf-root: /etc/updeb/tuf-root.json          # its TUF root (a private deployment's); default public-good
//	build:
//	  compression: xz     # xz, gzip, zstd or none
//	  memory: 2GiB        # budget of a build run (default: a quarter of the memory the process may use)
//	  parallel: 2         # 1 to 256 (default: one build per xz worker)
//	  xz-workers: 2       # 1 to 64 (default: the CPUs the process may use, as many as fit in memory)
//	  provenance-key: /etc/updeb/repo.secret.asc   # signs the provenance records
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/updeb/updeb/internal/aptname"
	"github.com/updeb/updeb/internal/compatdata"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/srcurl"
	"github.com/updeb/updeb/internal/yamlfile"
	"github.com/updeb/updeb/pkg/deb"
	"github.com/updeb/updeb/pkg/weblink"
)

// Config is the whole file.
type Config struct {
	Proxy    Proxy
	NoProxy  []string
	CABundle string
	Cache    string
	// State is updeb's state folder: data it refreshes on request (support
	// data, the Sigstore trusted root), never during a build.
	State   string
	Out     string
	Mirrors []Mirror
	Fetch   Fetch
	Build   Build
	Repo    Repo
	// GitHubAPI is the GitHub REST API base URL for watch: github (updeb
	// outdated/bump); "" means https://api.github.com (GitHub Enterprise: its /api/v3).
	GitHubAPI string
	Data      Data
	Sigstore  Sigstore

	// File is the file the config was read from ("" when none was found).
	File string
}

// Data configures the support data updeb data refresh fetches and the
// commands that read it (outdated, compat, plan).
type Data struct {
	// EndOfLifeURL is where a product's release cycles are, with "{product}"
	// where its name goes ("" means DefaultEndOfLifeURL). A URL without
	// "{product}" is a base: "/{product}.json" is added to it.
	EndOfLifeURL string
	// MaxAgeDays: older data gets a warning (0 means DefaultMaxAgeDays).
	MaxAgeDays int
	// Products are endoflife.date product names to fetch besides those of
	// the bundled snapshot (a recipe's component name is its product).
	Products []string
	// File is the recipes repository's data file (compatdata: the tables
	// and end-of-life data compat, plan and outdated use when it exists);
	// "" means compatdata.RepositoryFile in the folder above the recipes folder.
	File string
	// FileLine is the line of data: file: in the config file (0: not set),
	// for the warning that the file it names does not exist.
	FileLine int
	// Sources are the URLs a compatibility table is fetched from, by table
	// name (compatdata.Names), instead of compatdata.DefaultSources; each
	// checked with compatdata.CheckSource.
	Sources map[string][]string
}

// DefaultEndOfLifeURL is endoflife.date's API (v0) for one product.
const DefaultEndOfLifeURL = "https://endoflife.date/api/{product}.json"

// DefaultMaxAgeDays is the age past which support data gets a warning.
const DefaultMaxAgeDays = 30

// MaxMaxAgeDays bounds data.max-age-days.
const MaxMaxAgeDays = 3650

// ProductURL returns the URL of product's release cycles.
func (d Data) ProductURL(product string) string {
	u := d.EndOfLifeURL
	if u == "" {
		u = DefaultEndOfLifeURL
	}
	if !strings.Contains(u, "{product}") {
		u = strings.TrimRight(u, "/") + "/{product}.json"
	}
	return strings.ReplaceAll(u, "{product}", url.PathEscape(product))
}

// MaxAge is the age past which support data gets a warning.
func (d Data) MaxAge() time.Duration {
	days := d.MaxAgeDays
	if days == 0 {
		days = DefaultMaxAgeDays
	}
	return time.Duration(days) * 24 * time.Hour
}

// Mirror maps upstream URLs that start with Prefix (an http(s) URL prefix) to
// To: a file:///ABSOLUTE/PATH/ or an http(s) URL. A plain folder in the file
// is turned into a file:// URL, relative to the config file's folder.
type Mirror struct {
	Prefix string
	To     string
}

// Fetch configures downloads. Zero values mean the defaults of package fetch.
type Fetch struct {
	Timeouts  Timeouts
	Retries   *int // nil: the default; 0: no retries
	RetryTime Duration
	MaxSize   Size
	Parallel  int
	MinRate   *MinRate // nil: the default of package fetch
}

// MinRate is the slowest transfer accepted (curl's --speed-limit and
// --speed-time): an attempt that receives fewer than BytesPerSecond on
// average over Over is ended (and retried). Written
// {bytes-per-second: 1KiB, over: 30s}, either field optional, or "none".
type MinRate struct {
	BytesPerSecond Size     // 0: the default
	Over           Duration // 0: the default
	None           bool     // no minimum
}

// Timeouts of one download.
type Timeouts struct {
	Connect Duration
	Header  Duration
	Idle    Duration
}

// Build are the site settings every package build uses.
type Build struct {
	// VersionSuffix is appended to every Debian version, e.g. "~wmf1" makes
	// 3.18.4-1~wmf1 (it sorts before 3.18.4-1, so Debian's own build wins).
	VersionSuffix string
	// Maintainer is "Name <email>", used where a recipe names none.
	Maintainer string
	// Compression of control.tar and data.tar: xz (default), gzip, zstd or none.
	Compression string
	// Memory is the memory budget of a build run: the compression pool
	// that every build at once shares is sized to fit in it with the rest
	// of the process (0: a quarter of the memory the process may use; the
	// command layer applies it).
	Memory Size
	// Parallel is how many recipe+architecture builds run at once (default:
	// one per xz worker; the command layer applies it).
	Parallel int
	// XZWorkers is how many xz blocks (or zstd jobs) are compressed at once,
	// by all the builds of a run together (default: the CPUs the process
	// may use, as many as Memory holds). It changes speed and memory, never
	// the bytes of a package.
	XZWorkers int
	// XZMode is the xz encoder: fast (default) or best (smaller, about twice
	// the CPU). It changes the bytes of the package.
	XZMode string
	// ProvenanceKey is the armored secret key (as `updeb keys generate`
	// writes it) that signs each package's provenance record; "" leaves the
	// records unsigned.
	ProvenanceKey string
}

// Repo is the apt repository `updeb publish` and `updeb repo` work on. Flags
// override each field.
type Repo struct {
	Dir         string // repository folder (pool/, dists/)
	Suite       string // default: the recipe's, else "stable"
	Component   string // default: the recipe's, else "main"
	Key         string // armored secret signing key
	Origin      string
	Label       string
	Codename    string
	Description string
	// Architectures always get an index, even before a package of theirs exists.
	Architectures []string
	// ValidFor adds Valid-Until = Date + ValidFor to Release (0: none).
	ValidFor Duration
	// Keep is how many generations of each suite are kept for rollback (0: updeb's default).
	Keep int
	// Keys are more signing keys beside Key: every suite is signed by each
	// (a key rotation window).
	Keys []string
}

// Sigstore configures the verification of Sigstore signatures. Empty fields
// mean the public-good defaults.
type Sigstore struct {
	// TrustedRoot is a trusted_root.json (a private Sigstore deployment's, or
	// a copy for an air-gapped site) used instead of the one refreshed into
	// the state folder or the bundled public-good snapshot.
	TrustedRoot string
	// RekorURL is the Rekor (v1 API) base URL cosign signatures are looked
	// up in; "" means https://rekor.sigstore.dev. mirrors: apply to it.
	RekorURL string
	// GitHubAPI is the API github-attestations are read from; "" means the
	// top-level github-api, then https://api.github.com.
	GitHubAPI string
	// TUFURL is the TUF repository updeb trust refresh reads; "" means
	// Sigstore's public-good one.
	TUFURL string
	// TUFRoot is the TUF root.json that repository's metadata must chain to;
	// "" means the public-good root built into updeb.
	TUFRoot string
}

// Duration is a time.Duration written as "30s", "2m", "1h30m".
type Duration time.Duration

// Size is a byte count written as 1048576, "512KiB", "200MiB", "4GiB" or "1GB".
type Size int64

// Bounds of the numeric settings: beyond them a value is a typo, not a
// configuration (100000 xz workers would exhaust memory mid-build).
const (
	MaxRetries       = 100
	MaxFetchParallel = 64
	MaxParallel      = 256
	MaxXZWorkers     = 64
	MaxTimeout       = time.Hour
	MaxRetryTime     = 24 * time.Hour
	MaxMaxSize       = 1 << 40
)

// Error is a config file that cannot be read at all. Problems in its content
// are a *yamlfile.Error.
type Error struct {
	File string
	Msg  string
	Err  error // the read's error (fs.ErrPermission, ...), nil when none
}

func (e *Error) Error() string { return e.File + ": " + e.Msg }

func (e *Error) Unwrap() error { return e.Err }

// Load reads explicit when it is not empty (it must exist), else the first of
// defaults that exists; with none, it returns an empty Config.
func Load(explicit string, defaults ...string) (*Config, error) {
	if explicit != "" {
		data, err := yamlfile.ReadFile(explicit, 0)
		if err != nil {
			return nil, &Error{File: explicit, Msg: "cannot read the config file: " + reason(err), Err: err}
		}
		return Parse(explicit, data)
	}
	for _, p := range defaults {
		data, err := yamlfile.ReadFile(p, 0)
		if errors.Is(err, fs.ErrNotExist) {
			// A link to a config that is gone (a share not mounted) is
			// not no config: the defaults would silently stand in for it.
			if target, lerr := os.Readlink(p); lerr == nil {
				return nil, &Error{File: p, Msg: "cannot read the config file: it is a symlink to " + target + ", which does not exist"}
			}
			// updeb.yml where updeb.yaml is read: the site's settings
			// (proxy, mirrors, keys) were never applied, without a word.
			if yml, ok := strings.CutSuffix(p, ".yaml"); ok {
				if _, lerr := os.Lstat(yml + ".yml"); lerr == nil {
					return nil, &Error{File: yml + ".yml", Msg: "updeb reads " + p + ", not this file: rename it to " + filepath.Base(p) + ", or name it with --config"}
				}
			}
			continue
		}
		if err != nil {
			return nil, &Error{File: p, Msg: "cannot read the config file: " + reason(err), Err: err}
		}
		return Parse(p, data)
	}
	return &Config{}, nil
}

// reason is an I/O error without the path the message already names.
func reason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// Parse decodes data, read from file name, strictly and checks every value.
// Every problem is reported, in one *yamlfile.Error.
func Parse(name string, data []byte) (*Config, error) {
	d := &yamlfile.Decoder{File: name}
	c := &Config{File: name}
	if top := d.Document(data, yamlfile.Options{What: "config file"}); top != nil {
		p := &parser{Decoder: d, dir: filepath.Dir(name)}
		p.config(c, top)
	}
	if err := d.Err(); err != nil {
		return nil, err
	}
	return c, nil
}

// parser decodes one config file.
type parser struct {
	*yamlfile.Decoder
	dir string // the config file's folder, for relative paths
}

type fields = map[string]yamlfile.Field

// field decodes a setting; a null value ("fetch:" with everything under it
// commented out) leaves it unset, as it always has.
func (p *parser) field(decode func(v *yaml.Node)) yamlfile.Field {
	return yamlfile.Field{Decode: func(v *yaml.Node) {
		if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!null" {
			decode(v)
		} else {
			p.Describe(v, yamlfile.Schema{Type: []string{"null"}})
		}
	}}
}

// mapping decodes a mapping of the config; what is its dotted name ("" for
// the top). Messages keep the wording of the config's earlier yaml.v3
// decoding: `unknown field "x"`, `mapping key "x" already defined at line N`.
func (p *parser) mapping(n *yaml.Node, what, goType string, fs fields) {
	if n.Kind != yaml.MappingNode {
		p.At(n, "cannot unmarshal %s into %s: %s", tagOf(n), goType, wantMapping(what))
		return
	}
	p.Map(n, yamlfile.Map{
		Fields: fs,
		Unknown: func(k *yaml.Node) string {
			return fmt.Sprintf("unknown field %q (known: %s)", k.Value, strings.Join(slices.Sorted(maps.Keys(fs)), ", "))
		},
		Twice: func(k, first *yaml.Node) string {
			return fmt.Sprintf("mapping key %q already defined at line %d", k.Value, first.Line)
		},
	})
}

func wantMapping(what string) string {
	if what == "" {
		return "a config file is a mapping (proxy:, mirrors:, fetch:, build:, repo:, ...)"
	}
	return what + " is a mapping"
}

// tagOf is how yaml.v3 names a value in its messages: !!str `x`, !!seq.
func tagOf(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		return fmt.Sprintf("%s `%s`", n.ShortTag(), n.Value)
	}
	return n.ShortTag()
}

func (p *parser) config(c *Config, n *yaml.Node) {
	p.mapping(n, "", "config.Config", fields{
		"proxy": p.field(func(v *yaml.Node) {
			// Empty, it would give way to HTTPS_PROXY, or to none: every
			// download direct, where the site meant them to go through
			// its proxy (a template's unset variable).
			if p.Describe(v, yamlfile.Schema{Type: scalarTypes, MinLength: 1}) {
				return
			}
			if s, ok := p.scalar(v, "proxy"); ok && s == "" {
				p.At(v, "proxy is empty: give the proxy's URL, or leave proxy out (HTTPS_PROXY, HTTP_PROXY or ALL_PROXY then name it, if any does)")
			} else if ok {
				if _, err := ProxyURL(s); err != nil {
					p.At(v, "%v", err)
				}
				c.Proxy = Proxy(s)
			}
		}),
		"no-proxy": p.field(func(v *yaml.Node) {
			c.NoProxy = []string{} // set, even empty: it overrides NO_PROXY
			p.StrList(v, "no-proxy", &c.NoProxy)
			for i, n := range v.Content {
				if n.Kind == yaml.ScalarNode && strings.TrimSpace(n.Value) != "" && !NoProxyEntry(n.Value) {
					p.At(n, "no-proxy[%d]: %q: want a host name, .domain (the domain and its hosts), IP address, CIDR block (10.0.0.0/8), any of them with :PORT, or *; one to a list entry", i, n.Value)
				}
			}
		}),
		"ca-bundle": p.field(func(v *yaml.Node) { p.path(v, "ca-bundle", &c.CABundle) }),
		"cache":     p.field(func(v *yaml.Node) { p.path(v, "cache", &c.Cache) }),
		"state":     p.field(func(v *yaml.Node) { p.path(v, "state", &c.State) }),
		"out":       p.field(func(v *yaml.Node) { p.path(v, "out", &c.Out) }),
		"mirrors": p.field(func(v *yaml.Node) {
			prefixes := map[string]int{} // a prefix (without its last /) -> its line
			p.List(v, "mirrors", func(_ int, v *yaml.Node) { c.Mirrors = append(c.Mirrors, p.mirror(v, prefixes)) })
		}),
		"fetch":      p.field(func(v *yaml.Node) { p.fetch(&c.Fetch, v) }),
		"build":      p.field(func(v *yaml.Node) { p.build(&c.Build, v) }),
		"repo":       p.field(func(v *yaml.Node) { p.repo(&c.Repo, v) }),
		"github-api": p.field(func(v *yaml.Node) { p.httpURL(v, "github-api", &c.GitHubAPI) }),
		"sigstore":   p.field(func(v *yaml.Node) { p.sigstore(&c.Sigstore, v) }),
		"data":       p.field(func(v *yaml.Node) { p.data(&c.Data, v) }),
	})
}

func (p *parser) data(d *Data, n *yaml.Node) {
	p.mapping(n, "data", "config.Data", fields{
		"endoflife-url": p.field(func(v *yaml.Node) {
			p.Describe(v, yamlfile.Schema{Pattern: "^https?://"})
			if !p.str(v, "data.endoflife-url", &d.EndOfLifeURL) {
				return
			}
			if ok, hint := baseURL(strings.ReplaceAll(d.EndOfLifeURL, "{product}", "p")); !ok {
				p.At(v, "data.endoflife-url %q: want an http:// or https:// URL%s (with {product} where the product name goes, or a base URL)", srcurl.Redact(d.EndOfLifeURL), hint)
			}
		}),
		"max-age-days": p.field(func(v *yaml.Node) { p.integer(v, "data.max-age-days", 1, MaxMaxAgeDays, &d.MaxAgeDays) }),
		"file":         p.field(func(v *yaml.Node) { p.path(v, "data.file", &d.File); d.FileLine = v.Line }),
		"sources":      p.field(func(v *yaml.Node) { d.Sources = p.sources(v) }),
		"products": p.field(func(v *yaml.Node) {
			p.Describe(v, yamlfile.Schema{Type: []string{"array"}, Items: &yamlfile.Schema{Pattern: productRE.String()}})
			p.StrList(v, "data.products", &d.Products)
			for _, n := range v.Content {
				if n.Kind == yaml.ScalarNode && !productRE.MatchString(n.Value) {
					p.At(n, "data.products: %q is not an endoflife.date product name (lower-case letters, digits, '-', '.', '_')", n.Value)
				}
			}
		}),
	})
}

// sources decodes data.sources: table -> a URL or a list of URLs.
func (p *parser) sources(n *yaml.Node) map[string][]string {
	out := map[string][]string{}
	p.Map(n, yamlfile.Map{What: "data.sources", Each: func(k, v *yaml.Node) {
		var urls []string
		if v.Kind == yaml.SequenceNode {
			p.StrList(v, "data.sources."+k.Value, &urls)
			if len(urls) == 0 {
				p.At(v, "data.sources.%s: name at least one URL", k.Value)
			}
		} else if u, ok := p.scalar(v, "data.sources."+k.Value); ok {
			urls = []string{u}
		}
		for i, u := range urls {
			if err := compatdata.CheckSource(k.Value, u); err != nil {
				p.At(v, "data.sources.%s: %v", k.Value, err)
				return
			}
			// Fetched twice, its rows would come twice, and the refresh
			// would blame upstream's page for giving them twice.
			if slices.Contains(urls[:i], u) {
				p.At(v.Content[i], "data.sources.%s: %q listed twice", k.Value, u)
				return
			}
		}
		out[k.Value] = urls
	}})
	return out
}

func (p *parser) sigstore(s *Sigstore, n *yaml.Node) {
	p.mapping(n, "sigstore", "config.Sigstore", fields{
		"trusted-root": p.field(func(v *yaml.Node) { p.path(v, "sigstore.trusted-root", &s.TrustedRoot) }),
		"rekor-url":    p.field(func(v *yaml.Node) { p.httpURL(v, "sigstore.rekor-url", &s.RekorURL) }),
		"github-api":   p.field(func(v *yaml.Node) { p.httpURL(v, "sigstore.github-api", &s.GitHubAPI) }),
		"tuf-url":      p.field(func(v *yaml.Node) { p.httpURL(v, "sigstore.tuf-url", &s.TUFURL) }),
		"tuf-root":     p.field(func(v *yaml.Node) { p.path(v, "sigstore.tuf-root", &s.TUFRoot) }),
	})
}

// httpURL decodes an http(s) base URL.
func (p *parser) httpURL(v *yaml.Node, what string, dst *string) {
	if p.Describe(v, yamlfile.Schema{Type: []string{"string"}, Pattern: "^https?://"}) {
		return
	}
	if s, ok := p.scalar(v, what); ok {
		if ok, hint := baseURL(s); !ok {
			p.At(v, "%s %q: want an http:// or https:// URL%s", what, srcurl.Redact(s), hint)
		}
		*dst = s
	}
}

func (p *parser) fetch(f *Fetch, n *yaml.Node) {
	p.mapping(n, "fetch", "config.Fetch", fields{
		"timeouts": p.field(func(v *yaml.Node) {
			t := &f.Timeouts
			p.mapping(v, "fetch.timeouts", "config.Timeouts", fields{
				"connect": p.field(func(v *yaml.Node) { p.duration(v, "fetch.timeouts.connect", MaxTimeout, &t.Connect) }),
				"header":  p.field(func(v *yaml.Node) { p.duration(v, "fetch.timeouts.header", MaxTimeout, &t.Header) }),
				"idle":    p.field(func(v *yaml.Node) { p.duration(v, "fetch.timeouts.idle", MaxTimeout, &t.Idle) }),
			})
		}),
		"retries": p.field(func(v *yaml.Node) {
			var r int
			if p.integer(v, "fetch.retries", 0, MaxRetries, &r) {
				f.Retries = &r
			}
		}),
		"retry-time": p.field(func(v *yaml.Node) { p.duration(v, "fetch.retry-time", MaxRetryTime, &f.RetryTime) }),
		"max-size":   p.field(func(v *yaml.Node) { p.size(v, &f.MaxSize) }),
		"parallel":   p.field(func(v *yaml.Node) { p.integer(v, "fetch.parallel", 1, MaxFetchParallel, &f.Parallel) }),
		"min-rate": p.field(func(v *yaml.Node) {
			m := &MinRate{}
			f.MinRate = m
			if v.Kind == yaml.ScalarNode {
				p.Describe(v, yamlfile.Schema{Type: []string{"string"}, Enum: []string{"none"}})
				if v.Value != "none" {
					p.At(v, "fetch.min-rate: want {bytes-per-second: SIZE, over: DURATION} or none, found %q", v.Value)
				}
				m.None = true
				return
			}
			p.mapping(v, "fetch.min-rate", "config.MinRate", fields{
				"bytes-per-second": p.field(func(v *yaml.Node) { p.size(v, &m.BytesPerSecond) }),
				"over":             p.field(func(v *yaml.Node) { p.duration(v, "fetch.min-rate.over", MaxTimeout, &m.Over) }),
			})
		}),
	})
}

func (p *parser) build(b *Build, n *yaml.Node) {
	p.mapping(n, "build", "config.Build", fields{
		// Checked here as every recipe would check them, so that a bad
		// value names this file, not each recipe in turn.
		"version-suffix": p.field(func(v *yaml.Node) { p.checked(v, "build.version-suffix", &b.VersionSuffix, recipe.CheckLocalSuffix) }),
		"maintainer":     p.field(func(v *yaml.Node) { p.checked(v, "build.maintainer", &b.Maintainer, recipe.CheckDefaultMaintainer) }),
		"provenance-key": p.field(func(v *yaml.Node) { p.path(v, "build.provenance-key", &b.ProvenanceKey) }),
		"compression": p.field(func(v *yaml.Node) {
			p.Describe(v, yamlfile.Schema{Enum: enum(deb.Compressions())})
			if s, ok := p.set(v, "build.compression", orList(deb.Compressions())); ok {
				b.Compression = s
				if err := CheckCompression(s); err != nil {
					p.At(v, "build.%v", err)
				}
			}
		}),
		"memory":     p.field(func(v *yaml.Node) { p.size(v, &b.Memory) }),
		"parallel":   p.field(func(v *yaml.Node) { p.integer(v, "build.parallel", 1, MaxParallel, &b.Parallel) }),
		"xz-workers": p.field(func(v *yaml.Node) { p.integer(v, "build.xz-workers", 1, MaxXZWorkers, &b.XZWorkers) }),
		"xz-mode": p.field(func(v *yaml.Node) {
			p.Describe(v, yamlfile.Schema{Enum: enum(deb.XZModes())})
			if s, ok := p.set(v, "build.xz-mode", orList(deb.XZModes())); ok {
				b.XZMode = s
				if err := CheckXZMode(s); err != nil {
					p.At(v, "build.%v", err)
				}
			}
		}),
	})
}

func (p *parser) repo(r *Repo, n *yaml.Node) {
	p.mapping(n, "repo", "config.Repo", fields{
		"dir":         p.field(func(v *yaml.Node) { p.path(v, "repo.dir", &r.Dir) }),
		"key":         p.field(func(v *yaml.Node) { p.path(v, "repo.key", &r.Key) }),
		"suite":       p.field(func(v *yaml.Node) { p.checked(v, "repo.suite", &r.Suite, aptname.Suite) }),
		"component":   p.field(func(v *yaml.Node) { p.checked(v, "repo.component", &r.Component, aptname.Component) }),
		"origin":      p.field(func(v *yaml.Node) { p.checked(v, "repo.origin", &r.Origin, releaseField("Origin")) }),
		"label":       p.field(func(v *yaml.Node) { p.checked(v, "repo.label", &r.Label, releaseField("Label")) }),
		"codename":    p.field(func(v *yaml.Node) { p.checked(v, "repo.codename", &r.Codename, aptname.Codename) }),
		"description": p.field(func(v *yaml.Node) { p.checked(v, "repo.description", &r.Description, releaseField("Description")) }),
		"architectures": p.field(func(v *yaml.Node) {
			p.List(v, "repo.architectures", func(i int, e *yaml.Node) {
				var a string
				if p.NonEmpty(e, fmt.Sprintf("repo.architectures[%d]", i), &a) {
					if err := aptname.IndexArchitecture(a); err != nil {
						p.At(e, "repo.architectures[%d]: %v", i, err)
					}
					r.Architectures = append(r.Architectures, a)
				}
			})
		}),
		"valid-for": p.field(func(v *yaml.Node) {
			p.duration(v, "repo.valid-for", 0, &r.ValidFor)
			if err := aptname.ValidFor(time.Duration(r.ValidFor)); err != nil {
				p.At(v, "repo.valid-for: %v", err)
			}
		}),
		"keep": p.field(func(v *yaml.Node) { p.integer(v, "repo.keep", 1, 100000, &r.Keep) }),
		"keys": p.field(func(v *yaml.Node) {
			p.List(v, "repo.keys", func(i int, e *yaml.Node) {
				what := fmt.Sprintf("repo.keys[%d]", i)
				var k string
				if p.NonEmpty(e, what, &k) {
					r.Keys = append(r.Keys, p.file(e, what, k))
				}
			})
		}),
	})
}

// JSONSchema is the JSON Schema of the config file, made by running the
// config's own decoding (parser.config) as a schema run (yamlfile.Describe).
func JSONSchema() *yamlfile.Schema {
	s := yamlfile.Describe(func(d *yamlfile.Decoder, top *yaml.Node) {
		p := &parser{Decoder: d, dir: "/"}
		p.config(&Config{}, top)
	})
	s.Title = "updeb config file (updeb.yaml, /etc/updeb/config.yaml)"
	return s
}

// CheckCompression checks a compression name (of build.compression or the
// --compression flag) against pkg/deb's list; "" means the default.
func CheckCompression(name string) error {
	if name == "" || slices.Contains(deb.Compressions(), deb.Compression(name)) {
		return nil
	}
	return fmt.Errorf("compression %q: want %s", name, orList(deb.Compressions()))
}

// CheckXZMode is the check of build.xz-mode: "" (the default) or one of
// pkg/deb's modes.
func CheckXZMode(name string) error {
	if name == "" || slices.Contains(deb.XZModes(), deb.XZMode(name)) {
		return nil
	}
	return fmt.Errorf("xz-mode %q: want %s", name, orList(deb.XZModes()))
}

// enum lists names for a schema. "" is not one: the setting left out (null)
// is how the default is asked for.
func enum[S ~string](names []S) []string {
	var out []string
	for _, n := range names {
		out = append(out, string(n))
	}
	return out
}

// orList writes names as "a, b or c".
func orList[S ~string](names []S) string {
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = string(n)
	}
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// scalar returns a single value (null is ""), or records that it is not one.
func (p *parser) scalar(n *yaml.Node, what string) (string, bool) {
	if p.Describe(n, yamlfile.Schema{Type: scalarTypes}) {
		return "", false
	}
	if n.Kind != yaml.ScalarNode {
		p.At(n, "%s must be a single value", what)
		return "", false
	}
	if n.ShortTag() == "!!null" {
		return "", true
	}
	return n.Value, true
}

// scalarTypes are what scalar accepts (null aside: a setting's null is
// field's).
var scalarTypes = []string{"string", "number", "boolean"}

// str decodes a one-line text value.
func (p *parser) str(n *yaml.Node, what string, dst *string) bool {
	if p.Describe(n, yamlfile.Schema{Type: scalarTypes}) {
		return false
	}
	s, ok := p.scalar(n, what)
	if ok && strings.ContainsAny(s, "\n\r") {
		p.At(n, "%s must be one line", what)
		return false
	}
	*dst = s
	return ok
}

// checked decodes a one-line text value and checks it with check: a name or
// Release field value of the repository (internal/aptname), as the
// repository will when it writes it; a build setting, as every recipe will.
// Given empty, it is refused (set): build.version-suffix "" built 3.18.4-1,
// Debian's own version of other bytes; repo.origin "" a suite whose Origin
// no pin of the site's names.
func (p *parser) checked(n *yaml.Node, what string, dst *string, check func(string) error) {
	if s, ok := p.set(n, what, "a value"); ok {
		*dst = s
		if err := check(s); err != nil {
			p.At(n, "%s: %v", what, err)
		}
	}
}

// set decodes a one-line text value that may not be empty ("" or spaces: a
// template's unset variable): as with a flag given empty (--cache ""), the
// default would take its place without a word. Leaving the value out (null)
// is how a setting gets its default. want names what to give instead.
func (p *parser) set(n *yaml.Node, what, want string) (string, bool) {
	if p.Describe(n, yamlfile.Schema{Type: scalarTypes, MinLength: 1}) {
		return "", false
	}
	var s string
	if !p.str(n, what, &s) {
		return "", false
	}
	if strings.TrimSpace(s) == "" {
		p.At(n, "%s is empty: give %s, or leave %s out for the default", what, want, what)
		return "", false
	}
	return s, true
}

// releaseField checks the value of the one-line Release field name.
func releaseField(name string) func(string) error {
	return func(v string) error { return aptname.Field(name, v) }
}

// path decodes a path, relative to the config file's folder. Given empty,
// it is refused (set): 'cache: ""' made 'updeb cache gc' collect the default
// cache, repo.dir "" published to ./repo of whatever folder updeb ran in.
func (p *parser) path(n *yaml.Node, what string, dst *string) {
	if s, ok := p.set(n, what, "a path"); ok {
		*dst = p.file(n, what, s)
	}
}

// file checks path s, read from n, and returns it relative to the config
// file's folder ("" for "", and for a path refused: a finding).
func (p *parser) file(n *yaml.Node, what, s string) string {
	if s == "" {
		return ""
	}
	// No file name holds a NUL byte: the system would cut the path there.
	if strings.ContainsRune(s, 0) {
		p.At(n, "%s: %q holds a NUL byte, which no path can", what, s)
		return ""
	}
	// A shell expands ~ and ~user, updeb does not: ~/x would be a folder
	// named ~ beside the config file, made and filled there without a word.
	if strings.HasPrefix(s, "~") {
		p.At(n, "%s: %q: ~ is not expanded in the config file: write the absolute path (or ./%s for a file or folder of that name beside the config file)", what, s, s)
		return ""
	}
	if !filepath.IsAbs(s) {
		s = filepath.Join(p.dir, s)
	}
	return s
}

// integer decodes a whole number from lo to hi.
func (p *parser) integer(n *yaml.Node, what string, lo, hi int, dst *int) bool {
	if p.Describe(n, yamlfile.Schema{Type: []string{"integer"}, Minimum: yamlfile.Int64(int64(lo)), Maximum: yamlfile.Int64(int64(hi))}) {
		return false
	}
	if why := yamlfile.LeadingZero(n); why != "" {
		p.At(n, "%s: %s", what, why)
		return false
	}
	var v int
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&v) != nil {
		p.At(n, "cannot unmarshal %s into int: %s is a whole number from %d to %d", tagOf(n), what, lo, hi)
		return false
	}
	if v < lo || v > hi {
		p.At(n, "%s: %d is out of range: want %d to %d", what, v, lo, hi)
		return false
	}
	*dst = v
	return true
}

// duration decodes a positive Go duration ("90s", "5m"), at most limit (0:
// any).
func (p *parser) duration(n *yaml.Node, what string, limit time.Duration, dst *Duration) {
	if p.Describe(n, yamlfile.Schema{Type: []string{"string"}, Pattern: durationPattern}) {
		return
	}
	s, ok := p.scalar(n, "a duration")
	if !ok {
		return
	}
	v, err := time.ParseDuration(s)
	switch {
	case err != nil || v <= 0:
		p.At(n, "invalid duration %q (want a positive duration like 30s, 2m, 1h)", s)
	case limit > 0 && v > limit:
		p.At(n, "%s: %s is too long: at most %s", what, s, limit)
	default:
		*dst = Duration(v)
	}
}

// durationPattern is what time.ParseDuration reads (a "+" allowed: "-"
// makes no positive duration), for the schema.
const durationPattern = `^\+?(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+$`

var productRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// sizeRe is a size; the schema's pattern too, so the spaces around it a
// quoted value may have are its own.
var sizeRe = regexp.MustCompile(`^\s*(\d+)\s*([KMGT]i?B|[kKMGT]B|B)?\s*$`)

// size decodes a byte count with an optional unit, from 1 byte to MaxMaxSize.
func (p *parser) size(n *yaml.Node, dst *Size) {
	if p.Describe(n, yamlfile.Schema{AnyOf: []*yamlfile.Schema{
		{Type: []string{"integer"}, Minimum: yamlfile.Int64(1), Maximum: yamlfile.Int64(MaxMaxSize)},
		{Type: []string{"string"}, Pattern: sizeRe.String()},
	}}) {
		return
	}
	s, ok := p.scalar(n, "a size")
	if !ok {
		return
	}
	m := sizeRe.FindStringSubmatch(s)
	if m == nil {
		p.At(n, "invalid size %q (want bytes, or a number with KiB, MiB, GiB, TiB, kB, MB, GB or TB)", s)
		return
	}
	v, err := strconv.ParseInt(m[1], 10, 64)
	mult := map[string]int64{"": 1, "B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40,
		"kB": 1e3, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12}[m[2]]
	if err != nil || v <= 0 || v > MaxMaxSize/mult {
		p.At(n, "size %q is out of range: want 1 byte to 1TiB", s)
		return
	}
	*dst = Size(v * mult)
}

// mirror decodes {prefix, to} and checks both URLs; a "to" that is a plain
// folder becomes a file:// URL, relative to the config file's folder. A
// prefix that an earlier mirror has (with or without the last /, which
// match the same URLs) is refused: one of the two would never be used.
func (p *parser) mirror(n *yaml.Node, prefixes map[string]int) Mirror {
	var m Mirror
	if n.Kind != yaml.MappingNode {
		p.At(n, "a mirror must be a mapping {prefix: URL, to: URL}")
		return m
	}
	prefix, to := n, n
	before := p.Len()
	p.Map(n, yamlfile.Map{
		Fields: fields{
			"prefix": p.field(func(v *yaml.Node) { prefix = v; p.str(v, "prefix", &m.Prefix) }),
			"to":     p.field(func(v *yaml.Node) { to = v; p.str(v, "to", &m.To) }),
		},
		Unknown: func(k *yaml.Node) string {
			return fmt.Sprintf("unknown field %q in a mirror (want prefix and to)", k.Value)
		},
	})
	if p.Len() > before {
		return m
	}
	u, err := srcurl.Check(m.Prefix)
	if err != nil || u.RawQuery != "" {
		p.At(prefix, "mirror prefix %q: want an http:// or https:// URL prefix without . or .. segments, query or fragment", srcurl.Redact(m.Prefix))
		return m
	}
	// The origin written one way, as fetch matches it (https://GitHub.com:443/
	// is https://github.com/), the path as written: one origin spelled two
	// ways was two prefixes here, and fetch used the first alone.
	_, after, _ := strings.Cut(m.Prefix, "://")
	_, rest, _ := strings.Cut(after, "/")
	key := strings.ToLower(u.Scheme) + "://" + weblink.Host(u) + "/" + strings.TrimSuffix(rest, "/")
	if line, ok := prefixes[key]; ok {
		p.At(prefix, "mirror prefix %q: the mirror at line %d has this prefix already, and only one of them would ever be used: keep one", srcurl.Redact(m.Prefix), line)
		return m
	}
	prefixes[key] = prefix.Line
	if m.To != "" && !strings.Contains(m.To, "://") {
		folder := p.file(to, fmt.Sprintf("mirror %q: to", m.Prefix), m.To)
		if folder == "" {
			return m
		}
		if abs, err := filepath.Abs(folder); err == nil {
			// Escaped: a folder's name may hold "#", "?" or "%", which a
			// URL reserves (fetch takes the folder back from its Path).
			m.To = (&url.URL{Scheme: "file", Path: strings.TrimSuffix(filepath.ToSlash(filepath.Clean(abs)), "/") + "/"}).String()
			return m
		}
	}
	if u, err := url.Parse(m.To); err == nil && u.User != nil {
		p.At(to, "mirror %q: to %q: a mirror is reached without credentials: remove USER:PASSWORD@", m.Prefix, u.Redacted())
	} else if !mirrorTarget(m.To) {
		p.At(to, "mirror %q: to %q: want file:///ABSOLUTE/PATH/, http:// or https://, without . or .. segments", m.Prefix, srcurl.Redact(m.To))
	}
	return m
}

// mirrorTarget accepts a mirror's to: a file:// URL of a clean absolute path,
// or an http(s) URL in the download URL grammar (package srcurl), without a
// query: a mirror maps below it, so it must not climb itself.
func mirrorTarget(to string) bool {
	t, err := url.Parse(to)
	switch {
	case err != nil || t.RawQuery != "" || t.Fragment != "" || strings.ContainsAny(to, "\x00\r\n"):
		return false
	case t.Scheme == "file":
		c := path.Clean(t.Path)
		return strings.HasPrefix(t.Path, "/") && (t.Host == "" || t.Host == "localhost") && (c == t.Path || c+"/" == t.Path)
	}
	_, err = srcurl.Check(to)
	return err == nil
}

// httpURL reports whether s is an http:// or https:// URL with a host.
func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// baseURL reports whether s is an http:// or https:// URL the fetcher takes
// (package srcurl), and else what to fix, to follow "want an http:// or
// https:// URL": the URLs made from it are fetched, and one the fetcher
// refuses (a scheme not in lower case, no host name, a port no dial can
// use) would fail mid-run, naming no line of the config.
func baseURL(s string) (ok bool, hint string) {
	_, err := srcurl.Check(s)
	var e *srcurl.Error
	switch {
	case err == nil:
		return true, ""
	case !httpURL(s):
		return false, ""
	case !strings.HasPrefix(s, "http://") && !strings.HasPrefix(s, "https://"):
		return false, " (the scheme in lower case)"
	case errors.As(err, &e):
		return false, ": " + e.Reason
	}
	return false, ""
}

// ProxyURL parses a proxy setting (from the config, a flag or the environment):
// "" gives nil; a bare host:port is taken as http://host:port. A URL without
// a host name (http://:3128, which would dial this host) or with a port
// outside 1-65535 (which no dial can use, so every download would retry
// until its budget is spent) is refused here.
func ProxyURL(s string) (*url.URL, error) {
	if s == "" {
		return nil, nil
	}
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil || !httpURL(s) || u.Hostname() == "" || !srcurl.ValidPort(u.Port()) {
		why := ""
		if SOCKSProxy(s) {
			why = " (updeb does not speak SOCKS)"
		}
		return nil, fmt.Errorf("proxy %q: want http://HOST:PORT or https://HOST:PORT%s", srcurl.Redact(s), why)
	}
	return u, nil
}

// SOCKSProxy reports whether the proxy setting s names a SOCKS proxy
// (socks4://, socks4a://, socks5://, socks5h://, as curl takes them, most
// often in ALL_PROXY), which ProxyURL refuses.
func SOCKSProxy(s string) bool {
	scheme, _, ok := strings.Cut(s, "://")
	return ok && strings.HasPrefix(strings.ToLower(scheme), "socks")
}

// NoProxyEntry reports whether e is an entry of curl's NO_PROXY grammar,
// which the fetcher matches hosts against: *, an IP address or CIDR block,
// or a host name or .domain with an optional :PORT (spaces around it are
// ignored). Anything else (a URL, "a,b", *.domain) matches no host.
func NoProxyEntry(e string) bool {
	e = strings.TrimSpace(e)
	if _, _, err := net.ParseCIDR(e); err == nil || e == "*" || net.ParseIP(e) != nil {
		return true
	}
	host := strings.TrimPrefix(e, ".")
	u, err := srcurl.Check("http://" + host)
	return err == nil && u.Host == host
}

// Proxy is a proxy URL, checked when read.
type Proxy string
