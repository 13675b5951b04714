package recipe

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"net/url"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/updeb/updeb/internal/srcurl"
	"github.com/updeb/updeb/internal/yamlfile"
	"github.com/updeb/updeb/pkg/archive"
	"github.com/updeb/updeb/pkg/deb"
	"github.com/updeb/updeb/pkg/debversion"
	"github.com/updeb/updeb/pkg/digest"
	"github.com/updeb/updeb/pkg/verify/sigstore"
)

// MaxSize is the largest recipe file Load reads.
const MaxSize = 1 << 20

// LoadOptions tune Load. The zero value is what the CLI uses.
type LoadOptions struct {
	// Root is the project root keyrings are relative to; "" means the parent
	// of the folder that holds the recipe file.
	Root string
	// AllowUnpinned accepts sources that pin no digest at all (a new recipe
	// that updeb bump is to pin); a source that pins some architectures and
	// not others is still refused. Only bump loads recipes this way: a build
	// needs every pin.
	AllowUnpinned bool
}

// Load reads, decodes and validates the recipe at file. It reports every
// problem it finds in an *Error wrapping ErrInvalid; an I/O failure reading the
// file itself is returned as is. Besides the recipe's own consistency it
// checks that every template renders for every architecture and that the
// recipe-local files and keyrings exist.
func Load(file string, opts LoadOptions) (*Recipe, error) {
	data, err := yamlfile.ReadFile(file, MaxSize)
	if err != nil {
		return nil, fmt.Errorf("recipe: %w", err)
	}
	return LoadBytes(file, data, opts)
}

// LoadBytes is Load with the recipe's content given as data, as if it were the
// content of file (which need not exist): its folder, files-dir and keyrings
// are checked on disk as Load checks them. updeb bump lints a rewritten
// recipe with it before writing the file.
func LoadBytes(file string, data []byte, opts LoadOptions) (*Recipe, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, fmt.Errorf("recipe: %w", err)
	}
	root := opts.Root
	if root == "" {
		root = filepath.Dir(filepath.Dir(abs))
	}
	if root, err = filepath.Abs(root); err != nil {
		return nil, fmt.Errorf("recipe: %w", err)
	}
	r, fs := parse(file, data, opts.AllowUnpinned)
	if r != nil {
		r.Root = root
		r.dir = filepath.Dir(abs)
		r.FilesDir = filepath.Join(r.dir, filepath.FromSlash(r.filesRel))
		{
			// Render every architecture: templates, rendered names and paths,
			// and (here only, Resolved does no I/O) the files the recipe names.
			// Fields that failed to decode are empty and render to nothing,
			// so this adds no findings about them.
			fs.lintFragments = true
			var plans []*Resolved
			for _, a := range r.Architectures {
				plans = append(plans, r.resolve(a.Debian, resolveOptions{lint: true, stat: r.checkLocal}, fs))
			}
			r.checkArchIndependent(plans, fs)
		}
	}
	if err := fs.err(); err != nil {
		return nil, err
	}
	r.Content = data
	r.Warnings = fs.warnings
	slices.SortStableFunc(r.Warnings, func(a, b Finding) int { return cmp.Or(a.Line-b.Line, a.Col-b.Col) })
	return r, nil
}

// Parse decodes and checks a recipe from memory without touching the file
// system (no file-existence checks, templates not rendered). file names the
// recipe in findings. It is what the fuzz test drives.
func Parse(file string, data []byte) (*Recipe, error) {
	r, fs := parse(file, data, false)
	if err := fs.err(); err != nil {
		return nil, err
	}
	return r, nil
}

// JSONSchema is the JSON Schema of a recipe file, made by running the recipe
// decoder (decoder.recipe) as a schema run (yamlfile.Describe). Templates
// ({{.Version}}) and what only resolving checks (rendered names, relations,
// files on disk) are not in it: a recipe the schema accepts may still have
// findings, but one it refuses has.
func JSONSchema() *yamlfile.Schema {
	s := yamlfile.Describe(func(yd *yamlfile.Decoder, top *yaml.Node) {
		d := &decoder{&findings{Decoder: *yd}} // the copy shares the schema run
		d.recipe(&Recipe{node: top}, top)
	})
	s.Title = "updeb recipe (recipes/NAME.yaml; every field in recipes/README.md)"
	return s
}

// documentOptions are how a recipe file is read: at most MaxSize bytes, one
// YAML document, no anchors or aliases.
var documentOptions = yamlfile.Options{What: "recipe", MaxSize: MaxSize, Empty: "recipe is empty", SyntaxPrefix: "YAML syntax: "}

// Document reads the YAML document of a recipe file as Load does, without
// decoding it, for tools that edit a recipe in place (updeb bump). Problems
// are an *Error wrapping ErrInvalid.
func Document(file string, data []byte) (*yaml.Node, error) {
	fs := &findings{file: file}
	top := fs.Document(data, documentOptions)
	return top, fs.err()
}

func parse(file string, data []byte, unpinned bool) (*Recipe, *findings) {
	fs := &findings{file: file, unpinned: unpinned, source: data}
	top := fs.Document(data, documentOptions)
	if top == nil {
		return nil, fs
	}
	d := &decoder{fs}
	r := &Recipe{Path: file, node: top, filesRel: strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))}
	if fd := valueOf(top, "files-dir"); fd != top {
		r.filesRel = fd.Value
	}
	d.recipe(r, top)
	return r, fs
}

var (
	sourceNameRE   = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)
	upstreamArchRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)
	fingerprintRE  = regexp.MustCompile(`^[0-9A-Fa-f]{40}$`)
	maintainerRE   = regexp.MustCompile(`^[^<>,\n]+ <[^<>@\s,]+@[^<>\s,]+>$`)
	userNameRE     = regexp.MustCompile(`^[a-z_][a-z0-9_-]{0,31}$`)
	lintianTagRE   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_+.-]*( [^\n]+)?$`) // tag names hold upper case and "_" too (FSSTND-dir-in-var)
	githubRepoRE   = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`)
	unitNameRE     = regexp.MustCompile(`^[A-Za-z0-9@_.:-]+\.(service|socket|timer|path|target|mount)$`)
	sectionRE      = regexp.MustCompile(`^([a-z-]+/)?[a-z0-9-]+$`)
)

// debianArchs are the architectures a recipe may list (Debian's release and
// ports architectures): a typo such as "amd46" must not pass silently.
var debianArchs = map[string]bool{
	"amd64": true, "arm64": true, "armel": true, "armhf": true, "i386": true, "mips64el": true,
	"ppc64el": true, "riscv64": true, "s390x": true, "loong64": true, "ppc64": true,
}

// debianSections are the sections of the Debian archive, as lintian 2.116
// knows them (data/fields/archive-sections), and archiveAreas the areas
// that may come before one ("non-free/net"); lintian warns about any other
// (unknown-section).
var debianSections = map[string]bool{
	"admin": true, "cli-mono": true, "comm": true, "database": true, "debian-installer": true, "debug": true,
	"devel": true, "doc": true, "editors": true, "education": true, "electronics": true, "embedded": true,
	"fonts": true, "games": true, "gnome": true, "gnu-r": true, "gnustep": true, "golang": true, "graphics": true,
	"hamradio": true, "haskell": true, "httpd": true, "interpreters": true, "introspection": true, "java": true,
	"javascript": true, "kde": true, "kernel": true, "libdevel": true, "libs": true, "lisp": true,
	"localization": true, "mail": true, "math": true, "metapackages": true, "misc": true, "net": true,
	"news": true, "ocaml": true, "oldlibs": true, "otherosfs": true, "perl": true, "php": true, "python": true,
	"raku": true, "ruby": true, "rust": true, "science": true, "shells": true, "sound": true, "tasks": true,
	"tex": true, "text": true, "utils": true, "vcs": true, "video": true, "web": true, "x11": true, "xfce": true,
	"zope": true,
}

var archiveAreas = map[string]bool{"contrib": true, "non-free": true, "non-free-firmware": true}

var priorities = map[string]bool{"required": true, "important": true, "standard": true, "optional": true}

func (d *decoder) recipe(r *Recipe, n *yaml.Node) {
	r.Revision = "1"
	d.mapping(n, "recipe", map[string]field{
		"name": {true, func(v *yaml.Node) {
			d.Describe(v, yamlfile.Schema{Pattern: "^" + deb.PackageNamePattern + "$"})
			if d.Str(v, "name", &r.Name) && !deb.ValidPackageName(r.Name) {
				d.at(v, "name: %q is not a valid Debian source name (want %s)", r.Name, deb.PackageNamePattern)
			}
		}},
		"version": {true, func(v *yaml.Node) {
			if d.NonEmpty(v, "version", &r.Version) {
				if _, err := debversion.FromUpstream(r.Version); err != nil {
					d.at(v, "version: %v", err)
				}
			}
		}},
		"revision": {false, func(v *yaml.Node) {
			if d.Str(v, "revision", &r.Revision) && r.Revision != "" {
				if _, err := debversion.Parse("0-" + r.Revision); err != nil || strings.Contains(r.Revision, "-") {
					d.at(v, "revision: %q is not a valid Debian revision (digits, letters and + . ~ only)", r.Revision)
				}
			}
		}},
		"epoch": {false, func(v *yaml.Node) {
			d.Describe(v, yamlfile.Schema{Minimum: yamlfile.Int64(0)})
			if d.Int(v, "epoch", &r.Epoch) && (r.Epoch < 0 || r.Epoch > math.MaxInt32) {
				// dpkg keeps an epoch in a C int: a larger one is refused
				// here, not at the version (debianVersion leaves it out).
				d.at(v, "epoch: must be 0 to %d (dpkg's limit), found %d", math.MaxInt32, r.Epoch)
				r.Epoch = 0
			}
		}},
		"release-date": {true, func(v *yaml.Node) {
			d.Describe(v, yamlfile.Schema{Pattern: `^[0-9]{4}-[0-9]{2}-[0-9]{2}(T|$)`})
			var s string
			if d.Str(v, "release-date", &s) {
				t, err := parseDate(s)
				switch {
				case err != nil:
					d.at(v, "release-date: %q is neither YYYY-MM-DD nor RFC 3339 (2006-01-02T15:04:05Z)", s)
				case t.Before(deb.AncientBefore):
					// pkg/deb refuses such a SourceDateEpoch: lint must not pass what no build can package.
					d.at(v, "release-date: %q is before 1976: every file of the package is dated by it, and lintian reports a file dated 1975 or before as ancient (package-contains-ancient-file, an error)", s)
				case t.After(maxReleaseDate):
					d.at(v, "release-date: %q is after %s, the last second an OpenPGP signature (the provenance record's) can be dated by", s, maxReleaseDate.Format(time.RFC3339))
				}
				r.ReleaseDate = t
			}
		}},
		"end-of-life": {false, func(v *yaml.Node) {
			var s string
			if d.Str(v, "end-of-life", &s) {
				t, err := time.Parse(time.DateOnly, s)
				switch {
				case err != nil:
					d.at(v, "end-of-life: %q is not a day as YYYY-MM-DD (the day the version line lost upstream support)", s)
				case t.Year() < 1970:
					// 0001-01-01 is Go's zero time, which reads as no mark.
					d.at(v, "end-of-life: %q is before 1970: write the day the version line lost upstream support, or no end-of-life", s)
				}
				r.EndOfLife = t.UTC()
			}
		}},
		"homepage": {false, func(v *yaml.Node) {
			d.Describe(v, yamlfile.Schema{Pattern: "^https?://"})
			if d.NonEmpty(v, "homepage", &r.Homepage) && !homepageURL(r.Homepage) {
				d.at(v, "homepage: %q is not an http(s) URL", r.Homepage)
			}
		}},
		"license":      {true, func(v *yaml.Node) { d.license(v, &r.License) }},
		"license-text": {false, func(v *yaml.Node) { d.NonEmpty(v, "license-text", &r.LicenseText) }},
		"copyright":    {true, func(v *yaml.Node) { d.singleLine(v, "copyright", &r.Copyright) }},
		"maintainer": {false, func(v *yaml.Node) {
			d.Describe(v, yamlfile.Schema{Pattern: maintainerRE.String()})
			if d.Str(v, "maintainer", &r.Maintainer) && !validMaintainer(r.Maintainer) {
				d.at(v, "maintainer: %q is not \"Full Name <email@address>\"", r.Maintainer)
			} else if why := maintainerLintian(r.Maintainer); why != "" {
				d.warn(v, "maintainer: %q draws lintian's %s", r.Maintainer, why)
			}
		}},
		"files-dir": {false, func(v *yaml.Node) {
			var s string
			if d.NonEmpty(v, "files-dir", &s) {
				d.relPath(v, "files-dir", s)
			}
		}},
		"architectures": {true, func(v *yaml.Node) { d.architectures(r, v) }},
		"repo": {false, func(v *yaml.Node) {
			d.mapping(v, "repo", map[string]field{
				"component": {false, func(v *yaml.Node) { d.NonEmpty(v, "repo.component", &r.Repo.Component) }},
				"suite":     {false, func(v *yaml.Node) { d.NonEmpty(v, "repo.suite", &r.Repo.Suite) }},
			})
		}},
		"sources": {false, func(v *yaml.Node) {
			d.List(v, "sources", func(i int, v *yaml.Node) {
				s := Source{node: v, Digests: map[string]map[digest.Algorithm]string{}}
				d.source(r, &s, v)
				r.Sources = append(r.Sources, s)
			})
		}},
		"packages": {true, func(v *yaml.Node) {
			d.Describe(v, yamlfile.Schema{MinItems: 1})
			d.List(v, "packages", func(i int, v *yaml.Node) {
				p := Package{node: v, Architecture: "any", Priority: "optional", Relations: map[string][]string{}, Scripts: map[string]string{}}
				d.pkg(&p, v)
				r.Packages = append(r.Packages, p)
			})
			if v.Kind == yaml.SequenceNode && len(v.Content) == 0 {
				d.at(v, "packages: a recipe builds at least one package")
			}
		}},
		"watch":    {false, func(v *yaml.Node) { r.Watch = d.watch(v) }},
		"requires": {false, func(v *yaml.Node) { r.Requires = d.requires(v) }},
	})
	if r.Repo.Component == "" {
		r.Repo.Component = "main"
	}
	d.consistency(r)
}

// homepageURL reports whether s is an http(s) URL with a host, without white
// space or control characters: the control file's Homepage field (one line)
// and the copyright file's Source.
func homepageURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://")) && u.Host != "" &&
		!strings.ContainsFunc(s, unicode.IsSpace) && deb.CheckFieldText(s, false) == nil
}

// maxReleaseDate is the last second an OpenPGP signature can carry (its
// creation time is an unsigned 32-bit count of seconds): a later release date
// would date the provenance record's signature decades earlier.
var maxReleaseDate = time.Unix(1<<32-1, 0).UTC()

func parseDate(s string) (time.Time, error) {
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t.UTC(), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	return t.UTC(), err
}

func (d *decoder) singleLine(v *yaml.Node, name string, dst *string) bool {
	if !d.NonEmpty(v, name, dst) {
		return false
	}
	if strings.ContainsAny(*dst, "\n\r") {
		d.at(v, "%s: must be a single line", name)
		return false
	}
	return true
}

// relPath checks a path that must stay inside the folder it is relative to:
// relative, clean, without a ".." component. Every other character dpkg
// takes in a file name is taken (see pathProblem).
func (d *decoder) relPath(v *yaml.Node, name, p string) bool {
	if problem := pathProblem(p); problem != "" {
		d.at(v, "%s: %q %s", name, clip(p), problem)
		return false
	}
	switch {
	case strings.HasPrefix(p, "/"):
		d.at(v, "%s: %q must be a relative path", name, p)
	case hasDotDot(p):
		d.at(v, "%s: %q has a \"..\" component, which would leave the folder it is relative to", name, p)
	case p != path.Clean(p):
		d.at(v, "%s: %q is not a clean path (an empty or \".\" component, or a trailing \"/\"): write %q", name, p, path.Clean(p))
	default:
		return true
	}
	return false
}

// pathProblem is why a path in a recipe cannot be a file name, or "": one
// longer than Linux takes (as pkg/archive holds archive names to);
// dpkg refuses a newline (and no file name holds a NUL); updeb refuses the
// other control characters (C0, DEL, C1) and Unicode's invisible format
// characters (zero-width spaces and joiners, bidirectional overrides that
// show a name in another order than its bytes, the soft hyphen) in
// recipes, where they would be invisible in review (lint, the gate's diff,
// a terminal), though dpkg would take them. Spaces, backslashes (systemd's
// "\x2d") and other UTF-8 are file names like any other.
func pathProblem(p string) string {
	if len(p) > archive.MaxPath {
		return fmt.Sprintf("is %d bytes long, longer than any path Linux takes (%d): dpkg could not unpack it", len(p), archive.MaxPath)
	}
	for c := range strings.SplitSeq(p, "/") {
		if len(c) > archive.MaxComponent {
			return fmt.Sprintf("has a name of %d bytes, longer than any file system holds (%d): dpkg could not unpack it", len(c), archive.MaxComponent)
		}
	}
	i := strings.IndexFunc(p, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) })
	if i < 0 {
		return ""
	}
	r, _ := utf8.DecodeRuneInString(p[i:])
	switch {
	case r == '\n' || r == 0:
		return "contains a newline or NUL, which dpkg refuses in a file name"
	case unicode.IsControl(r):
		return fmt.Sprintf("contains a control character (U+%04X): dpkg would take it, but updeb refuses it in recipes, where it is invisible in review", r)
	}
	return fmt.Sprintf("contains an invisible format character (U+%04X: a zero-width or bidirectional control): dpkg would take it, but updeb refuses it in recipes, where review would not see it or would see the name in another order", r)
}

// hasDotDot reports a ".." component.
func hasDotDot(p string) bool {
	return slices.Contains(strings.Split(p, "/"), "..")
}

func (d *decoder) architectures(r *Recipe, v *yaml.Node) {
	add := func(n *yaml.Node, deb, up string) {
		if !debianArchs[deb] {
			d.at(n, "architectures: %q is not a Debian architecture (e.g. amd64, arm64)", deb)
			return
		}
		if !upstreamArchRE.MatchString(up) {
			d.at(n, "architectures: upstream name %q for %s is not [A-Za-z0-9_.-]+", up, deb)
			return
		}
		for _, a := range r.Architectures {
			if a.Debian == deb {
				d.at(n, "architectures: %s listed twice", deb)
				return
			}
		}
		r.Architectures = append(r.Architectures, Arch{Debian: deb, Upstream: up})
	}
	archs := yamlfile.Schema{Enum: slices.Sorted(maps.Keys(debianArchs))}
	switch v.Kind {
	case yaml.SequenceNode:
		d.Describe(v, yamlfile.Schema{MinItems: 1})
		d.List(v, "architectures", func(i int, n *yaml.Node) {
			var s string
			d.Describe(n, archs)
			if d.NonEmpty(n, fmt.Sprintf("architectures[%d]", i), &s) {
				add(n, s, s)
			}
		})
	case yaml.MappingNode:
		d.Describe(v, yamlfile.Schema{PropertyNames: &archs, MinProperties: 1})
		d.Pairs(v, "architectures", func(k, n *yaml.Node) {
			var s string
			d.Describe(n, yamlfile.Schema{Pattern: upstreamArchRE.String()})
			if d.NonEmpty(n, "architectures."+k.Value, &s) {
				add(k, k.Value, s)
			}
		})
	default:
		d.at(v, "architectures: expected a list [amd64, arm64] or a mapping {amd64: x86_64}, found %s", yamlfile.KindName(v))
		return
	}
	if len(r.Architectures) == 0 && len(v.Content) == 0 {
		d.at(v, "architectures: at least one architecture is required")
	}
}

// commonLicenses maps SPDX identifiers to the files base-files ships in
// /usr/share/common-licenses (Debian 12), which the copyright file refers to
// instead of carrying the text.
var commonLicenses = map[string]string{
	"Apache-2.0": "Apache-2.0", "MPL-1.1": "MPL-1.1", "MPL-2.0": "MPL-2.0", "CC0-1.0": "CC0-1.0",
	"GPL-1.0-only": "GPL-1", "GPL-2.0-only": "GPL-2", "GPL-2.0-or-later": "GPL-2", "GPL-3.0-only": "GPL-3",
	"GPL-3.0-or-later": "GPL-3", "LGPL-2.1-only": "LGPL-2.1", "LGPL-2.1-or-later": "LGPL-2.1",
	"LGPL-3.0-only": "LGPL-3", "LGPL-3.0-or-later": "LGPL-3", "GFDL-1.3-only": "GFDL-1.3",
}

var licenseRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9.+-]*$`)

func (d *decoder) license(v *yaml.Node, dst *string) {
	d.Describe(v, yamlfile.Schema{Pattern: licenseRE.String()})
	if d.NonEmpty(v, "license", dst) && !licenseRE.MatchString(*dst) {
		d.at(v, "license: %q is not an SPDX license identifier (e.g. Apache-2.0, MIT)", *dst)
	}
}

var sourceKinds = map[string]bool{"tar.gz": true, "tgz": true, "tar.xz": true, "tar": true, "zip": true, "raw": true}

// kindFromURL infers an archive kind from a URL's suffix, as pkg/archive
// reads it from a file name (any case; .tgz is tar.gz, .txz tar.xz); raw
// otherwise.
func kindFromURL(u string) string {
	u, _, _ = strings.Cut(u, "?")
	if k, ok := archive.KindFromName(u); ok {
		return string(k)
	}
	return "raw"
}

// packedSuffixes are file name endings of archives and compressed files
// that pkg/archive does not read (archive.KindFromName's are read).
var packedSuffixes = []string{".tar.zst", ".tzst", ".tar.bz2", ".tbz2", ".tbz", ".tar.lz", ".tar.lz4", ".tar.lzma", ".tar.z",
	".7z", ".rar", ".zst", ".bz2", ".gz", ".xz", ".lz", ".lz4", ".lzma", ".z"}

// notUnpacked is the ending of a URL's file name that says it is an archive
// or a compressed file pkg/archive does not read, or "".
func notUnpacked(u string) string {
	u, _, _ = strings.Cut(u, "?")
	lower := strings.ToLower(u)
	for _, s := range packedSuffixes {
		if strings.HasSuffix(lower, s) {
			return s
		}
	}
	return ""
}

func (d *decoder) source(r *Recipe, s *Source, n *yaml.Node) {
	digests := map[digest.Algorithm]*yaml.Node{}
	var urlNode *yaml.Node
	d.mapping(n, "source", map[string]field{
		"name": {true, func(v *yaml.Node) {
			d.Describe(v, yamlfile.Schema{Pattern: sourceNameRE.String()})
			if d.Str(v, "source name", &s.Name) && !sourceNameRE.MatchString(s.Name) {
				d.at(v, "source name: %q is not [a-z0-9][a-z0-9._-]*", s.Name)
			}
		}},
		"url": {true, func(v *yaml.Node) { urlNode = v; d.url(v, "url", &s.URL) }},
		"kind": {false, func(v *yaml.Node) {
			d.Describe(v, yamlfile.Schema{Enum: slices.Sorted(maps.Keys(sourceKinds))})
			if d.Str(v, "kind", &s.Kind) && !sourceKinds[s.Kind] {
				d.at(v, "kind: %q is not one of tar.gz, tgz, tar.xz, tar, zip, raw", s.Kind)
			}
		}},
		"sha256":    {false, func(v *yaml.Node) { digests[digest.SHA256] = v; d.describeDigests(v, digest.SHA256) }},
		"sha512":    {false, func(v *yaml.Node) { digests[digest.SHA512] = v; d.describeDigests(v, digest.SHA512) }},
		"signature": {true, func(v *yaml.Node) { d.signature(&s.Signature, v) }},
		"checksums": {false, func(v *yaml.Node) {
			s.Checksums = &Checksums{}
			d.mapping(v, "checksums", map[string]field{
				"url":         {true, func(v *yaml.Node) { d.url(v, "checksums.url", &s.Checksums.URL) }},
				"name":        {false, func(v *yaml.Node) { d.NonEmpty(v, "checksums.name", &s.Checksums.Name) }},
				"clearsigned": {false, func(v *yaml.Node) { s.Checksums.Clearsigned = d.keyring(v, "checksums.clearsigned") }},
			})
		}},
	})
	if s.Kind == "" {
		s.Kind, s.KindFromURL = kindFromURL(s.URL), true
		if suffix := notUnpacked(s.URL); s.Kind == "raw" && suffix != "" {
			d.warn(urlNode, "url: ends in %s, an archive or compression updeb does not unpack: the source is packaged as a raw file, "+
				"its packed bytes as they are. Write kind: raw if that is what you want; else take the release's .tar.gz, .tar.xz or .zip", suffix)
		}
	}
	s.digestNodes = digests
}

// describeDigests states, for the schema, what digests decodes later: one HEX
// for every architecture, or a mapping ARCH: HEX.
func (d *decoder) describeDigests(v *yaml.Node, alg digest.Algorithm) {
	// A string, or a number when every digit is decimal (the loader reads the
	// value's text either way).
	hex := &yamlfile.Schema{Type: []string{"string", "number"}, Pattern: fmt.Sprintf("^[0-9A-Fa-f]{%d}$", 2*alg.Size())}
	d.Describe(v, yamlfile.Schema{AnyOf: []*yamlfile.Schema{hex, {
		Type: []string{"object"}, PropertyNames: &yamlfile.Schema{Enum: slices.Sorted(maps.Keys(debianArchs))}, Values: hex, MinProperties: 1,
	}}})
}

// digests decodes a source's pinned digests; it runs after the whole recipe
// is decoded because architectures may come after sources in the file.
func (d *decoder) digests(r *Recipe, s *Source) {
	if len(r.Architectures) == 0 {
		return // already reported; every digest would be "not in architectures"
	}
	for _, alg := range []digest.Algorithm{digest.SHA256, digest.SHA512} {
		v, ok := s.digestNodes[alg]
		if !ok {
			continue
		}
		set := func(at *yaml.Node, arch, hex string) {
			if s.Digests[arch] == nil {
				s.Digests[arch] = map[digest.Algorithm]string{}
			}
			dg, err := digest.New(alg, hex)
			if err != nil {
				d.at(at, "%s.%s: %v", alg, arch, err)
				return
			}
			s.Digests[arch][alg] = dg.Hex
		}
		switch v.Kind {
		case yaml.ScalarNode: // one value for every architecture (an arch-independent URL)
			var hex string
			if d.NonEmpty(v, string(alg), &hex) {
				for _, a := range r.Architectures {
					set(v, a.Debian, hex)
				}
			}
		case yaml.MappingNode:
			if len(v.Content) == 0 {
				d.at(v, "%s: an empty mapping pins nothing: give ARCH: HEX for each architecture, or leave %s out", alg, alg)
			}
			d.Pairs(v, string(alg), func(k, val *yaml.Node) {
				if !r.hasArch(k.Value) {
					d.at(k, "%s: architecture %q is not in architectures (%s)", alg, k.Value, strings.Join(r.ArchNames(), ", "))
					return
				}
				var hex string
				if d.NonEmpty(val, string(alg)+"."+k.Value, &hex) {
					set(val, k.Value, hex)
				}
			})
		default:
			d.at(v, "%s: expected a mapping {ARCH: HEX} or one HEX value, found %s", alg, yamlfile.KindName(v))
		}
	}
}

func (r *Recipe) hasArch(a string) bool {
	for _, x := range r.Architectures {
		if x.Debian == a {
			return true
		}
	}
	return false
}

// ArchNames returns the recipe's Debian architectures in the order the
// recipe lists them.
func (r *Recipe) ArchNames() []string {
	out := make([]string, len(r.Architectures))
	for i, a := range r.Architectures {
		out[i] = a.Debian
	}
	return out
}

// url checks a URL field: a template only for its scheme (Resolved checks what
// it renders to), anything else with the fetcher's grammar (package srcurl).
func (d *decoder) url(v *yaml.Node, name string, dst *string) {
	d.Describe(v, yamlfile.Schema{Pattern: "^https?://"})
	if !d.NonEmpty(v, name, dst) {
		return
	}
	if !strings.Contains(*dst, "{{") {
		if _, err := srcurl.Check(*dst); err != nil {
			d.at(v, "%s: %v", name, err)
		}
	} else if !strings.HasPrefix(*dst, "https://") && !strings.HasPrefix(*dst, "http://") {
		d.at(v, "%s: %q is not an http(s) URL", name, *dst)
	}
	if strings.HasPrefix(*dst, "http://") {
		why := "the pins and signatures still decide what is built and pinned"
		if name == "checksums.url" {
			why = "updeb bump counts no checksum file fetched so as vouching for a download (it is still cross-checked)"
		}
		d.warn(v, "%s: plain http: whoever is on the path can serve other bytes; %s. Use https where upstream serves it", name, why)
	}
}

func (d *decoder) signers(v *yaml.Node, name string) []string {
	var out []string
	d.Describe(v, yamlfile.Schema{MinItems: 1})
	d.List(v, name, func(i int, n *yaml.Node) {
		var s string
		d.Describe(n, yamlfile.Schema{Pattern: fingerprintRE.String()})
		if !d.Str(n, fmt.Sprintf("%s[%d]", name, i), &s) {
			return
		}
		if !fingerprintRE.MatchString(s) {
			d.at(n, "%s: %q is not a primary-key fingerprint (40 hex digits, no spaces)", name, s)
			return
		}
		out = append(out, strings.ToUpper(s))
	})
	if v.Kind == yaml.SequenceNode && len(v.Content) == 0 {
		d.at(v, "%s: an empty allow-list allows nobody; leave it out to allow every key in the keyring", name)
	}
	return out
}

func (d *decoder) keyring(n *yaml.Node, what string) *Keyring {
	k := &Keyring{}
	d.mapping(n, what, map[string]field{
		"keyring": {true, func(v *yaml.Node) {
			if d.NonEmpty(v, what+".keyring", &k.Keyring) {
				d.relPath(v, what+".keyring", k.Keyring)
			}
		}},
		"signers": {false, func(v *yaml.Node) { k.Signers = d.signers(v, what+".signers") }},
	})
	return k
}

// signatureForms says what signature: may hold, for messages.
const signatureForms = "url + keyring (OpenPGP), sig-url + cert-url (cosign), bundle-url (Sigstore bundle, with identity + issuer or public-key), github-attestations: OWNER/REPO, or none: REASON"

func (d *decoder) signature(sig *Signature, n *yaml.Node) {
	if n.Kind == yaml.ScalarNode && n.Value == "none" {
		d.at(n, "signature: \"none\" needs a reason: signature: {none: \"upstream publishes no signature; trust = pinned digest\"}")
		return
	}
	ss := &Sigstore{}
	d.mapping(n, "signature", map[string]field{
		"url": {false, func(v *yaml.Node) { d.url(v, "signature.url", &sig.URL) }},
		"keyring": {false, func(v *yaml.Node) {
			if d.NonEmpty(v, "signature.keyring", &sig.Keyring) {
				d.relPath(v, "signature.keyring", sig.Keyring)
			}
		}},
		"signers":    {false, func(v *yaml.Node) { sig.Signers = d.signers(v, "signature.signers") }},
		"none":       {false, func(v *yaml.Node) { d.singleLine(v, "signature.none", &sig.None) }},
		"sig-url":    {false, func(v *yaml.Node) { d.url(v, "signature.sig-url", &ss.SigURL) }},
		"cert-url":   {false, func(v *yaml.Node) { d.url(v, "signature.cert-url", &ss.CertURL) }},
		"bundle-url": {false, func(v *yaml.Node) { d.url(v, "signature.bundle-url", &ss.BundleURL) }},
		"github-attestations": {false, func(v *yaml.Node) {
			d.Describe(v, yamlfile.Schema{Pattern: githubRepoRE.String()})
			if d.Str(v, "signature.github-attestations", &ss.GitHubAttestations) && !githubRepoRE.MatchString(ss.GitHubAttestations) {
				d.at(v, "signature.github-attestations: %q is not OWNER/REPO", ss.GitHubAttestations)
			}
		}},
		"identity":          {false, func(v *yaml.Node) { d.singleLine(v, "signature.identity", &ss.Identity) }},
		"identity-regexp":   {false, func(v *yaml.Node) { d.identityRegexp(v, &ss.IdentityRegexp, valueOf(n, "issuer")) }},
		"issuer":            {false, func(v *yaml.Node) { d.issuer(v, &ss.Issuer) }},
		"source-repository": {false, func(v *yaml.Node) { d.sourceRepository(v, &ss.SourceRepository) }},
		"predicate-types":   {false, func(v *yaml.Node) { ss.PredicateTypes = d.predicateTypes(v) }},
		"public-key": {false, func(v *yaml.Node) {
			if d.NonEmpty(v, "signature.public-key", &ss.PublicKey) && !d.relPath(v, "signature.public-key", ss.PublicKey) {
				ss.PublicKey = "" // reported; not a path to read
			}
		}},
	})
	if n.Kind != yaml.MappingNode {
		return
	}
	has := func(k string) bool { return keyOf(n, k) != n }
	openpgp := has("url") || has("keyring") || has("signers")
	cosign := has("sig-url") || has("cert-url")
	forms := 0
	for _, f := range []bool{openpgp, cosign, has("bundle-url"), has("github-attestations"), has("none")} {
		if f {
			forms++
		}
	}
	who := has("identity") || has("identity-regexp") || has("issuer") || has("source-repository")
	switch {
	case forms > 1:
		d.at(n, "signature: give one form, not several: %s", signatureForms)
	case forms == 0 && has("public-key"):
		d.at(n, "signature: public-key pins the key of a key-signed Sigstore bundle: add bundle-url")
	case forms == 0 && who:
		d.at(n, "signature: identity and issuer say who must have signed Sigstore material: add sig-url + cert-url, bundle-url or github-attestations")
	case forms == 0:
		d.at(n, "signature: needs %s", signatureForms)
	case (has("none") || openpgp) && who:
		d.at(n, "signature: identity, identity-regexp, issuer and source-repository belong to the Sigstore forms (sig-url + cert-url, bundle-url, github-attestations)")
	case (has("none") || openpgp || cosign) && has("predicate-types"):
		d.at(keyOf(n, "predicate-types"), "signature: predicate-types says which attestations count; it goes with bundle-url or github-attestations, whose in-toto statements have a predicate type (a signature has none)")
	case (has("none") || openpgp || cosign || has("github-attestations")) && has("public-key"):
		d.at(keyOf(n, "public-key"), "signature: public-key pins the key of a key-signed Sigstore bundle: it goes with bundle-url only")
	case has("public-key") && who:
		d.at(keyOf(n, "public-key"), "signature: public-key pins the signer's key; identity, identity-regexp, issuer and source-repository name a certificate's signer: give one or the other")
	case has("none"):
	case openpgp && !has("url"):
		d.at(n, "signature: keyring given without url")
	case openpgp && !has("keyring"):
		d.at(n, "signature: url given without keyring")
	case openpgp:
	case cosign && !has("sig-url"):
		d.at(n, "signature: cert-url given without sig-url (cosign publishes FILE.sig beside FILE.cert)")
	case cosign && !has("cert-url"):
		d.at(n, "signature: sig-url given without cert-url (cosign keyless signatures come with FILE.cert)")
	case has("public-key"):
		sig.Sigstore = ss
	case !has("identity") && !has("identity-regexp"):
		d.at(n, "signature: a Sigstore signature needs identity: (the certificate's exact identity) or identity-regexp: (an anchored regexp); there is no \"any identity\" form")
	case has("identity") && has("identity-regexp"):
		d.at(n, "signature: give identity or identity-regexp, not both")
	case !has("issuer"):
		d.at(n, "signature: a Sigstore signature needs issuer: the OIDC issuer URL (e.g. https://accounts.google.com, https://token.actions.githubusercontent.com)")
	default:
		sig.Sigstore = ss
	}
}

// identityRegexp decodes a Sigstore identity regexp: it must compile, be
// anchored at both ends (as it is applied, so the recipe says what it means),
// and not match anybody's identity, under the recipe's issuer when it gives
// one (a CI issuer's identities name repositories anybody may create).
func (d *decoder) identityRegexp(v *yaml.Node, dst *string, issuer *yaml.Node) {
	const name = "signature.identity-regexp"
	if !d.singleLine(v, name, dst) {
		return
	}
	re := *dst
	if _, err := regexp.Compile(re); err != nil {
		d.at(v, "%s: %v", name, err)
		return
	}
	if !strings.HasPrefix(re, "^") || !strings.HasSuffix(re, "$") || strings.HasSuffix(re, `\$`) {
		d.at(v, "%s: %q must be anchored: start with ^ and end with $ (the whole identity must match)", name, re)
		return
	}
	iss := "https://issuer.invalid"
	if issuer.Kind == yaml.ScalarNode && issuer.Value != "" && strings.TrimSpace(issuer.Value) == issuer.Value {
		iss = issuer.Value
	}
	if err := (sigstore.Policy{IdentityRegexp: re, Issuer: iss}).Validate(); err != nil {
		d.at(v, "%s: %v", name, strings.TrimPrefix(err.Error(), sigstore.ErrPolicy.Error()+": "))
		*dst = "" // reported; not a policy to check further
	}
}

// predicateTypes decodes the in-toto predicate types an attestation counts
// by: URIs, as a statement's predicateType names them, exactly.
func (d *decoder) predicateTypes(v *yaml.Node) []string {
	const name = "signature.predicate-types"
	var out []string
	d.Describe(v, yamlfile.Schema{MinItems: 1})
	d.List(v, name, func(i int, n *yaml.Node) {
		var s string
		d.Describe(n, yamlfile.Schema{Pattern: "^[a-z][a-z0-9+.-]*:[^ ]+$"})
		if !d.Str(n, fmt.Sprintf("%s[%d]", name, i), &s) {
			return
		}
		if u, err := url.Parse(s); err != nil || u.Scheme == "" || strings.ContainsAny(s, " \t{}") {
			d.at(n, "%s: %q is not a predicate type (a URI, as the statement's predicateType gives it: %s)", name, s, sigstore.SLSAProvenanceV1)
			return
		}
		if slices.Contains(out, s) {
			d.at(n, "%s: %q is listed twice", name, s)
			return
		}
		out = append(out, s)
	})
	if v.Kind == yaml.SequenceNode && len(v.Content) == 0 {
		d.at(v, "%s: an empty list counts no attestation; leave it out to count SLSA provenance (%s)", name, strings.Join(sigstore.DefaultPredicateTypes(), ", "))
	}
	return out
}

// issuer decodes an OIDC issuer: an http(s) URL.
func (d *decoder) issuer(v *yaml.Node, dst *string) {
	d.Describe(v, yamlfile.Schema{Pattern: "^https?://"})
	if !d.singleLine(v, "signature.issuer", dst) {
		return
	}
	u, err := url.Parse(*dst)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || strings.ContainsAny(*dst, " {}") {
		d.at(v, "signature.issuer: %q is not an OIDC issuer URL (e.g. https://accounts.google.com)", *dst)
	} else if !strings.HasPrefix(*dst, u.Scheme+"://") {
		// url.Parse lowers the scheme; the certificate's issuer is compared
		// with this text exactly, and is written in lower case.
		d.at(v, "signature.issuer: %q is not an OIDC issuer URL (e.g. https://accounts.google.com): write the scheme in lower case, as the certificate has it", *dst)
	}
}

// sourceRepositoryRE is a repository URL as Fulcio's Source Repository URI
// names it: a GitHub repository, or a GitLab project (in groups).
var sourceRepositoryRE = regexp.MustCompile(`^https://(github\.com/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+|gitlab\.com/[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)+)$`)

// sourceRepository decodes the repository a CI certificate must have been
// issued for (its Source Repository URI), compared exactly.
func (d *decoder) sourceRepository(v *yaml.Node, dst *string) {
	const name = "signature.source-repository"
	d.Describe(v, yamlfile.Schema{Pattern: sourceRepositoryRE.String()})
	if d.singleLine(v, name, dst) && (!sourceRepositoryRE.MatchString(*dst) || !sigstore.IsRepositoryURL(*dst)) {
		d.at(v, "%s: %q is not a GitHub repository's or GitLab project's URL (https://github.com/OWNER/REPO, https://gitlab.com/GROUP/PROJECT), as the certificate's Source Repository URI names it", name, *dst)
	}
}

func (d *decoder) pkg(p *Package, n *yaml.Node) {
	fields := map[string]field{
		"name": {true, func(v *yaml.Node) { d.NonEmpty(v, "package name", &p.Name) }},
		"architecture": {false, func(v *yaml.Node) {
			d.Describe(v, yamlfile.Schema{Enum: []string{"any", "all"}})
			if d.Str(v, "architecture", &p.Architecture) && p.Architecture != "any" && p.Architecture != "all" {
				d.at(v, "architecture: %q must be any (each recipe architecture) or all", p.Architecture)
			}
		}},
		"summary":     {true, func(v *yaml.Node) { d.singleLine(v, "summary", &p.Summary) }},
		"description": {true, func(v *yaml.Node) { d.NonEmpty(v, "description", &p.Description) }},
		"section": {true, func(v *yaml.Node) {
			d.Describe(v, yamlfile.Schema{Pattern: sectionRE.String()})
			if d.Str(v, "section", &p.Section) && !sectionRE.MatchString(p.Section) {
				d.at(v, "section: %q is not a Debian section (e.g. admin, net, utils)", p.Section)
			} else if area, name, ok := strings.Cut(p.Section, "/"); !debianSections[cmp.Or(name, area)] || ok && !archiveAreas[area] {
				d.warn(v, "section: %q is not a section of the Debian archive (lintian's unknown-section): one of %s, optionally after contrib/, non-free/ or non-free-firmware/", p.Section, strings.Join(slices.Sorted(maps.Keys(debianSections)), ", "))
			}
		}},
		"priority": {false, func(v *yaml.Node) {
			d.Describe(v, yamlfile.Schema{Enum: slices.Sorted(maps.Keys(priorities))})
			if d.Str(v, "priority", &p.Priority) && !priorities[p.Priority] {
				d.at(v, "priority: %q is not one of required, important, standard, optional", p.Priority)
			}
		}},
		"files": {false, func(v *yaml.Node) {
			d.List(v, "files", func(i int, v *yaml.Node) {
				f := File{node: v}
				d.file(&f, v)
				p.Files = append(p.Files, f)
			})
		}},
		"directories": {false, func(v *yaml.Node) {
			d.List(v, "directories", func(i int, v *yaml.Node) {
				dir := Directory{node: v}
				d.directory(&dir, v)
				p.Directories = append(p.Directories, dir)
			})
		}},
		"scripts":   {false, func(v *yaml.Node) { d.scripts(p, v) }},
		"triggers":  {false, func(v *yaml.Node) { d.triggers(p, v) }},
		"symlinks":  {false, func(v *yaml.Node) { p.Symlinks = d.links(v, "symlink") }},
		"hardlinks": {false, func(v *yaml.Node) { p.Hardlinks = d.links(v, "hardlink") }},
		"system-user": {false, func(v *yaml.Node) {
			u := &SystemUser{Group: true}
			d.mapping(v, "system-user", map[string]field{
				"name": {true, func(v *yaml.Node) {
					d.Describe(v, yamlfile.Schema{Pattern: userNameRE.String()})
					if d.Str(v, "system-user.name", &u.Name) && !userNameRE.MatchString(u.Name) {
						d.at(v, "system-user.name: %q is not a valid user name ([a-z_][a-z0-9_-]*, at most 32)", u.Name)
					} else if _, user := baseUsers[u.Name]; user || baseGroups[u.Name] != 0 {
						// adduser would find it and add nothing; a group of its name (sudo, shadow) would become the new account's.
						d.at(v, "system-user.name: %q is an account of Debian's base-passwd, which every system has: a system user is the package's own (the postinst makes it, with a group of its name); give files owner: or group: %s directly instead", u.Name, u.Name)
					}
				}},
				"home": {false, func(v *yaml.Node) {
					if d.NonEmpty(v, "system-user.home", &u.Home) && d.absPath(v, "system-user.home", u.Home) && strings.Contains(u.Home, ":") {
						// shadow's useradd, which adduser runs, takes no ":" (it separates /etc/passwd's fields).
						d.at(v, "system-user.home: %q holds a \":\", which separates the fields of /etc/passwd: useradd (which adduser runs) refuses such a home, and the postinst would fail", u.Home)
					}
				}},
				"group": {false, func(v *yaml.Node) { d.Bool(v, "system-user.group", &u.Group) }},
			})
			p.SystemUser = u
		}},
		"systemd-units": {false, func(v *yaml.Node) {
			d.List(v, "systemd-units", func(i int, v *yaml.Node) {
				var s string
				d.Describe(v, yamlfile.Schema{Pattern: unitNameRE.String()})
				if d.NonEmpty(v, "systemd-units", &s) {
					if !unitNameRE.MatchString(s) {
						d.at(v, "systemd-units: %q is not a unit file name (NAME.service, .socket, .timer, ...)", s)
					}
					p.SystemdUnits = append(p.SystemdUnits, s)
				}
			})
		}},
		"alternatives": {false, func(v *yaml.Node) {
			d.List(v, "alternatives", func(i int, v *yaml.Node) {
				a := Alternative{node: v}
				d.mapping(v, "alternative", map[string]field{
					"name": {true, func(v *yaml.Node) { d.NonEmpty(v, "alternative name", &a.Name) }},
					"link": {true, func(v *yaml.Node) { d.NonEmpty(v, "alternative link", &a.Link) }},
					"path": {true, func(v *yaml.Node) { d.NonEmpty(v, "alternative path", &a.Path) }},
					"priority": {true, func(v *yaml.Node) {
						// update-alternatives takes a C int: a priority beyond
						// it fails the postinst ("priority is out of range").
						d.Describe(v, yamlfile.Schema{Minimum: yamlfile.Int64(math.MinInt32), Maximum: yamlfile.Int64(math.MaxInt32)})
						if d.Int(v, "alternative priority", &a.Priority) && (a.Priority < math.MinInt32 || a.Priority > math.MaxInt32) {
							d.at(v, "alternative priority: %d is out of update-alternatives' range (%d to %d)", a.Priority, math.MinInt32, math.MaxInt32)
						}
					}},
				})
				p.Alternatives = append(p.Alternatives, a)
			})
		}},
		"lintian-overrides": {false, func(v *yaml.Node) {
			d.List(v, "lintian-overrides", func(i int, v *yaml.Node) {
				var s string
				d.Describe(v, yamlfile.Schema{Pattern: lintianTagRE.String()})
				if d.NonEmpty(v, "lintian-overrides", &s) {
					if !lintianTagRE.MatchString(s) {
						d.at(v, "lintian-overrides: %q is not \"TAG [CONTEXT]\" on one line", s)
					} else if i := strings.IndexFunc(s, func(r rune) bool { return unicode.IsControl(r) && r != '\t' }); i >= 0 {
						// No context lintian gives a tag holds one (a "\r" reads as
						// a space): the override would never apply, and the tag
						// it is for would fail updeb verify.
						r, _ := utf8.DecodeRuneInString(s[i:])
						d.at(v, "lintian-overrides: %q holds a control character (U+%04X), which no context of a lintian tag holds: the override would never apply; remove it", s, r)
					}
					p.Lintian = append(p.Lintian, s)
				}
			})
		}},
		"dynamic": {false, func(v *yaml.Node) { d.Bool(v, "dynamic", &p.Dynamic) }},
	}
	for _, rf := range relationFields {
		rf := rf
		fields[rf.key] = field{false, func(v *yaml.Node) {
			var l []string
			d.StrList(v, rf.key, &l)
			p.Relations[rf.field] = l
		}}
	}
	d.mapping(n, "package", fields)
}

// absPath checks an absolute path in the package: clean, below /, without a
// ".." component, short enough for dpkg to unpack (deb.PathLengthProblem);
// every character dpkg takes in a file name is taken (see pathProblem).
func (d *decoder) absPath(v *yaml.Node, name, p string) bool {
	problem := deb.PathLengthProblem(p)
	if problem == "" {
		problem = pathProblem(p)
	}
	if problem != "" {
		d.at(v, "%s: %q %s", name, clip(p), problem)
		return false
	}
	switch {
	case !strings.HasPrefix(p, "/"):
		d.at(v, "%s: %q must be an absolute path", name, p)
	case p == "/":
		d.at(v, "%s: \"/\" is not allowed", name)
	case hasDotDot(p):
		d.at(v, "%s: %q has a \"..\" component: name the path itself", name, p)
	case p != path.Clean(p):
		d.at(v, "%s: %q is not a clean path (an empty or \".\" component, or a trailing \"/\"): write %q", name, p, path.Clean(p))
	default:
		return true
	}
	return false
}

func (d *decoder) file(f *File, n *yaml.Node) {
	fields := map[string]field{
		"source": {false, func(v *yaml.Node) { d.NonEmpty(v, "source", &f.Source) }},
		"path":   {false, func(v *yaml.Node) { d.NonEmpty(v, "path", &f.Path) }},
		"file":   {false, func(v *yaml.Node) { d.NonEmpty(v, "file", &f.Local) }},
		"dest":   {true, func(v *yaml.Node) { d.NonEmpty(v, "dest", &f.Dest) }},
		"conffile": {false, func(v *yaml.Node) {
			var b bool
			if d.Bool(v, "conffile", &b) {
				f.Conffile = &b
			}
		}},
	}
	d.accessFields(fields, &f.Access)
	d.mapping(n, "file mapping", fields)
	d.checkAccess(n, &f.Access)
	hasSource, hasLocal := keyOf(n, "source") != n, keyOf(n, "file") != n
	switch {
	case n.Kind != yaml.MappingNode:
	case hasSource && hasLocal:
		d.at(n, "file mapping: give either source (+ path) or file, not both")
	case !hasSource && !hasLocal:
		d.at(n, "file mapping: names no source: give source (+ path) or file")
	case hasLocal && keyOf(n, "path") != n:
		d.at(keyOf(n, "path"), "file mapping: path is for files inside a source archive; a recipe-local file has only file")
	case hasLocal:
		d.relPath(valueOf(n, "file"), "file", f.Local)
	}
}

// accessFields adds mode, owner, group and special-bits to the fields of a
// file or directory mapping.
func (d *decoder) accessFields(fields map[string]field, a *Access) {
	fields["mode"] = field{false, func(v *yaml.Node) {
		d.Describe(v, yamlfile.Schema{Pattern: "^[0-7]?[4-7][0-7]{2}$"})
		var s string
		if !d.Str(v, "mode", &s) {
			return
		}
		m, err := strconv.ParseUint(s, 8, 32)
		if err != nil || len(s) < 3 || len(s) > 4 || m > 0o7777 {
			d.at(v, "mode: %q is not an octal mode such as \"0755\", \"0640\" or \"4755\" (quoted, 3 or 4 digits)", s)
			return
		}
		if m&0o400 == 0 {
			d.at(v, "mode: %q: the owner cannot read it; updeb refuses such a mode (give at least 0400)", s)
			return
		}
		a.Mode = uint32(m)
	}}
	for _, k := range []struct {
		key string
		dst *string
	}{{"owner", &a.Owner}, {"group", &a.Group}} {
		fields[k.key] = field{false, func(v *yaml.Node) {
			if d.NonEmpty(v, k.key, k.dst) {
				if err := deb.CheckOwnerName(*k.dst); err != nil {
					d.at(v, "%s: %v", k.key, err)
				}
			}
		}}
	}
	fields["special-bits"] = field{false, func(v *yaml.Node) { d.singleLine(v, "special-bits", &a.SpecialBits) }}
}

// checkAccess: a setuid, setgid or sticky bit needs special-bits, the
// reason for it, and special-bits needs one of them.
func (d *decoder) checkAccess(n *yaml.Node, a *Access) {
	if n.Kind != yaml.MappingNode {
		return
	}
	special := a.Mode&0o7000 != 0
	switch {
	case special && a.SpecialBits == "" && keyOf(n, "special-bits") == n:
		d.at(valueOf(n, "mode"), "mode: %04o sets %s: say why with special-bits: \"REASON\" (a setuid or setgid file runs with its owner's or group's rights; updeb sets these bits only when the recipe says why)", a.Mode, specialBitNames(a.Mode))
	case !special && a.SpecialBits != "":
		d.at(keyOf(n, "special-bits"), "special-bits: the mode sets no setuid, setgid or sticky bit (mode %04o)", a.Mode)
	}
}

// specialBitNames names the setuid, setgid and sticky bits of a mode.
func specialBitNames(m uint32) string {
	var out []string
	for _, b := range []struct {
		bit  uint32
		name string
	}{{0o4000, "setuid"}, {0o2000, "setgid"}, {0o1000, "sticky"}} {
		if m&b.bit != 0 {
			out = append(out, b.name)
		}
	}
	return strings.Join(out, " and ")
}

// directory decodes a directories element: a path, or a mapping with the
// path and its mode and owner.
func (d *decoder) directory(dir *Directory, n *yaml.Node) {
	if n.Kind == yaml.ScalarNode {
		d.NonEmpty(n, "directories", &dir.Path)
		return
	}
	fields := map[string]field{"path": {true, func(v *yaml.Node) { d.NonEmpty(v, "directories path", &dir.Path) }}}
	d.accessFields(fields, &dir.Access)
	if n.Kind != yaml.MappingNode {
		d.at(n, "directories: expected a path or a mapping {path: ..., mode: ..., owner: ..., group: ...}, found %s", yamlfile.KindName(n))
		return
	}
	d.mapping(n, "directory", fields)
	d.checkAccess(n, &dir.Access)
}

// links decodes a list of {dest, target} mappings: symlinks or hardlinks.
func (d *decoder) links(n *yaml.Node, kind string) []Symlink {
	var out []Symlink
	d.List(n, kind+"s", func(i int, v *yaml.Node) {
		s := Symlink{node: v}
		d.mapping(v, kind, map[string]field{
			"dest":   {true, func(v *yaml.Node) { d.NonEmpty(v, kind+" dest", &s.Dest) }},
			"target": {true, func(v *yaml.Node) { d.NonEmpty(v, kind+" target", &s.Target) }},
		})
		out = append(out, s)
	})
	return out
}

// scriptNames are the maintainer scripts a recipe may give fragments for.
var scriptNames = []string{"preinst", "postinst", "prerm", "postrm"}

// scripts decodes a package's maintainer-script fragments: script name ->
// file in the recipe's folder.
func (d *decoder) scripts(p *Package, n *yaml.Node) {
	fields := map[string]field{}
	for _, name := range scriptNames {
		fields[name] = field{false, func(v *yaml.Node) {
			var s string
			if d.NonEmpty(v, "scripts."+name, &s) && d.relPath(v, "scripts."+name, s) {
				p.Scripts[name] = s
			}
		}}
	}
	d.mapping(n, "scripts", fields)
}

// triggers decodes a package's DEBIAN/triggers lines.
func (d *decoder) triggers(p *Package, n *yaml.Node) {
	d.List(n, "triggers", func(i int, v *yaml.Node) {
		var s string
		if d.NonEmpty(v, "triggers", &s) {
			if err := deb.CheckTrigger(s); err != nil {
				d.at(v, "triggers: %v", err)
				return
			}
			if directive := strings.Fields(s)[0]; directive == "interest" || directive == "activate" {
				d.warn(v, "triggers: %q: say %s-noawait (the triggering package need not wait) or %s-await: the default awaits, which lintian flags (uses-implicit-await-trigger) and which can leave packages triggers-pending", s, directive, directive)
			}
			p.Triggers = append(p.Triggers, strings.Join(strings.Fields(s), " "))
		}
	})
}

func (d *decoder) watch(n *yaml.Node) *Watch {
	w := &Watch{}
	d.mapping(n, "watch", map[string]field{
		"github": {false, func(v *yaml.Node) {
			d.Describe(v, yamlfile.Schema{Pattern: githubRepoRE.String()})
			if d.Str(v, "watch.github", &w.GitHub) && !githubRepoRE.MatchString(w.GitHub) {
				d.at(v, "watch.github: %q is not OWNER/REPO", w.GitHub)
			}
		}},
		"tag-prefix":  {false, func(v *yaml.Node) { d.Str(v, "watch.tag-prefix", &w.TagPrefix) }},
		"track":       {false, func(v *yaml.Node) { d.constraint(v, "watch.track", &w.Track) }},
		"prereleases": {false, func(v *yaml.Node) { d.Bool(v, "watch.prereleases", &w.Prereleases) }},
		"url":         {false, func(v *yaml.Node) { d.url(v, "watch.url", &w.URL) }},
		"pattern": {false, func(v *yaml.Node) {
			if d.NonEmpty(v, "watch.pattern", &w.Pattern) {
				if re, err := regexp.Compile(w.Pattern); err != nil {
					d.at(v, "watch.pattern: %v", err)
				} else if re.NumSubexp() < 1 {
					d.at(v, "watch.pattern: needs a capture group for the version")
				}
			}
		}},
	})
	if n.Kind == yaml.MappingNode {
		switch {
		case w.GitHub != "" && (w.URL != "" || w.Pattern != ""):
			d.at(n, "watch: either github or url + pattern, not both")
		case w.GitHub == "" && (w.URL == "") != (w.Pattern == ""):
			d.at(n, "watch: url and pattern go together")
		case w.GitHub == "" && w.URL == "" && keyOf(n, "github") == n && keyOf(n, "url") == n:
			d.at(n, "watch: needs github: OWNER/REPO or url + pattern")
		}
	}
	return w
}

func (d *decoder) requires(n *yaml.Node) map[string]string {
	out := map[string]string{}
	d.Pairs(n, "requires", func(k, v *yaml.Node) {
		var s string
		if d.constraint(v, "requires."+k.Value, &s) {
			out[k.Value] = s
		}
	})
	return out
}

// constraint decodes a version constraint (debversion.ParseConstraint's
// grammar, the one updeb compat and updeb outdated evaluate).
func (d *decoder) constraint(n *yaml.Node, name string, dst *string) bool {
	if !d.NonEmpty(n, name, dst) {
		return false
	}
	if _, err := debversion.ParseConstraint(*dst); err != nil {
		d.at(n, "%s: %v", name, err)
		return false
	}
	return true
}

// consistency validates the fields that refer to each other (a name used twice,
// a digest per architecture, files that name a source, ...).
func (d *decoder) consistency(r *Recipe) {
	names := map[string]bool{}
	for i := range r.Sources {
		s := &r.Sources[i]
		d.digests(r, s)
		if s.Name != "" && names[s.Name] {
			d.at(valueOf(s.node, "name"), "source name: %q used by two sources", s.Name)
		}
		names[s.Name] = true
		d.workflowRepository(r, s)
		d.workflowRef(r, s)
		for _, a := range r.Architectures {
			if _, given := s.Digests[a.Debian]; !given && !(d.unpinned && len(s.digestNodes) == 0) {
				d.at(s.node, "source %s: no sha256 or sha512 digest pinned for %s (every listed architecture needs one)", s.Name, a.Debian)
			}
		}
	}
	if r.License != "" && commonLicenses[r.License] == "" && r.LicenseText == "" {
		d.at(valueOf(r.node, "license"), "license: %s has no file in /usr/share/common-licenses: add license-text with the full text", r.License)
	}
	for _, p := range r.Packages {
		for _, f := range p.Files {
			if f.Source == "" {
				continue
			}
			src := r.source(f.Source)
			switch {
			case src == nil:
				d.at(valueOf(f.node, "source"), "file mapping: source %q is not defined (sources: %s)", f.Source, strings.Join(r.sourceNames(), ", "))
			case src.Kind == "raw" && f.Path != "":
				d.at(keyOf(f.node, "path"), "file mapping: source %q is a raw file: leave out path", f.Source)
			case src.Kind != "raw" && f.Path == "":
				d.at(f.node, "file mapping: source %q is a %s archive: path (the file inside it) is required", f.Source, src.Kind)
			}
		}
	}
}

// workflowRepository refuses a GitHub Actions identity whose workflow is
// not in a repository the source comes from (its URL's, github-attestations',
// watch.github's: a recipe that names none has none to compare with), or
// whose regexp leaves the workflow's repository open, unless
// source-repository names the repository whose run must have signed: the
// identity names the workflow, and a reusable workflow
// (slsa-github-generator's, another project's release workflow) signs for
// every repository that calls it.
func (d *decoder) workflowRepository(r *Recipe, s *Source) {
	ss := s.Signature.Sigstore
	if ss == nil || !strings.HasPrefix(ss.Issuer, actionsIssuer) || ss.SourceRepository != "" || ss.Identity == "" && ss.IdentityRegexp == "" {
		return
	}
	key, re := "identity", regexp.QuoteMeta(ss.Identity)
	if ss.IdentityRegexp != "" {
		key, re = "identity-regexp", ss.IdentityRegexp
	}
	v := valueOf(valueOf(s.node, "signature"), key)
	var repos []string
	if owner, repo, ok := githubRepository(s.URL); ok {
		repos = append(repos, owner+"/"+repo)
	}
	if ss.GitHubAttestations != "" {
		repos = append(repos, ss.GitHubAttestations)
	}
	if r.Watch != nil && r.Watch.GitHub != "" {
		repos = append(repos, r.Watch.GitHub)
	}
	const add = "add source-repository: the URL of the repository whose run must have signed (the certificate's Source Repository URI)"
	owner, repo, named := githubRepository(sigstore.IdentityPrefix(re))
	switch {
	case !named:
		hint := add
		if strings.Contains(re, "github.com") {
			// "." matches any character: the prefix stops at "github".
			hint = `write the host's dots as \. (github\.com): a "." matches any character, so the regexp names no host; or ` + add
		}
		d.at(v, "signature.%s: %q does not name the workflow's repository (https://github.com/OWNER/REPO/...): a GitHub Actions workflow signs for every repository that calls it; %s", key, cmp.Or(ss.IdentityRegexp, ss.Identity), hint)
	case len(repos) > 0 && !slices.ContainsFunc(repos, func(x string) bool { return strings.EqualFold(x, owner+"/"+repo) }):
		d.at(v, "signature.%s: the workflow is in %s/%s, not in %s, where the source comes from: a reusable workflow signs for every repository that calls it, so this identity accepts anybody's builds made with it; add source-repository: https://github.com/%s (the repository whose run must have signed: the certificate's Source Repository URI)", key, owner, repo, strings.Join(slices.Compact(repos), ", "), repos[0])
	}
}

// workflowRef refuses a GitHub Actions identity that accepts a pull
// request's run of the workflow, or a run on a branch whose name it leaves
// open, and warns about one that accepts a branch's runs where the source is
// a GitHub release, made at a tag: a run signs with the workflow and code
// as they are at its ref, so whoever can make the ref can have anything
// signed with the identity. (An identity regexp that accepts a pull
// request's run is refused by the policy, in identityRegexp.)
func (d *decoder) workflowRef(r *Recipe, s *Source) {
	ss := s.Signature.Sigstore
	if ss == nil || !strings.HasPrefix(ss.Issuer, actionsIssuer) || ss.Identity == "" && ss.IdentityRegexp == "" {
		return
	}
	key, re := "identity", regexp.QuoteMeta(ss.Identity)
	if ss.IdentityRegexp != "" {
		key, re = "identity-regexp", ss.IdentityRegexp
	}
	v := valueOf(valueOf(s.node, "signature"), key)
	pin := cmp.Or(ss.IdentityRegexp, ss.Identity)
	refs := sigstore.IdentityRefs(re)
	switch {
	case refs.PullRequests:
		d.at(v, "signature.%s: %q accepts a pull request's run of the workflow (@refs/pull/7/merge): %s", key, pin, sigstore.PullRequestRisk)
	case refs.AnyBranch:
		d.at(v, "signature.%s: %q accepts a run of the workflow on any branch (@refs/heads/...): whoever may push a branch (a bot's update branch too) runs the workflow as that branch has it, and it signs what it builds; name the ref releases are signed at (refs/tags/v..., as the release's certificate shows it), or the one branch", key, pin)
	case refs.Branches && releasedAtTags(r, s):
		d.warn(v, "signature.%s: %q accepts runs of the workflow on a branch, and the source is a GitHub release, made at a tag: every run on that branch signs too (each push to it, a pull_request_target run); if upstream signs its releases at their tag, pin @refs/tags/... instead", key, pin)
	}
}

// releasedAtTags reports whether the source is a GitHub release download,
// or the recipe watches GitHub releases: upstream releases at tags.
func releasedAtTags(r *Recipe, s *Source) bool {
	_, _, ok := githubRepository(s.URL)
	return ok && strings.Contains(s.URL, "/releases/download/") || r.Watch != nil && r.Watch.GitHub != ""
}

// actionsIssuer is GitHub Actions' OIDC issuer.
const actionsIssuer = "https://token.actions.githubusercontent.com"

// githubRepository returns the repository an https://github.com/OWNER/REPO/...
// URL (or identity) is in; ok is false when it does not name one.
func githubRepository(u string) (owner, repo string, ok bool) {
	rest, ok := strings.CutPrefix(u, "https://github.com/")
	parts := strings.SplitN(rest, "/", 3)
	if !ok || len(parts) < 3 || !githubRepoRE.MatchString(parts[0]+"/"+parts[1]) {
		return "", "", false
	}
	return parts[0], parts[1], true
}

func (r *Recipe) source(name string) *Source {
	for i := range r.Sources {
		if r.Sources[i].Name == name {
			return &r.Sources[i]
		}
	}
	return nil
}

func (r *Recipe) sourceNames() []string {
	out := make([]string, len(r.Sources))
	for i, s := range r.Sources {
		out[i] = s.Name
	}
	return out
}
