// The bundled end-of-life data (release cycles, their dates of end of active
// support and end of life, latest patch) of the products updeb packages, and
// "is this version still supported on that day?".
//
// The data is data/eol.yaml, embedded in the binary. It is a snapshot of
// endoflife.date; its header comments name the source commit and snapshot date
// and are kept verbatim (see Data.Source). Refresh it by copying the new
// snapshot over data/eol.yaml, header included, and running the tests.

package supportdata

import (
	"cmp"
	_ "embed"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/updeb/updeb/internal/yamlfile"
	"github.com/updeb/updeb/pkg/debversion"
)

//go:embed data/eol.yaml
var embedded []byte

// ErrData is wrapped by every error about malformed end-of-life data.
var ErrData = errors.New("eol: invalid data")

// Data is the parsed end-of-life table: product -> release cycles.
type Data struct {
	// Source is the header comment of the data file (without the leading "# "):
	// where the data comes from, its licence and its snapshot date.
	Source string
	// AsOf is the day the data was true of upstream: the header's "As of:"
	// line (a snapshot's day, or when updeb data refresh fetched it); zero
	// when the header has none.
	AsOf     time.Time
	products map[string][]Cycle
}

// Cycle is one release cycle (a major.minor line) of a product.
type Cycle struct {
	Product     string
	Name        string    // the cycle, e.g. "1.35"
	ReleaseDate time.Time // first release of the cycle
	// EOAS is the end of active support (bug fixes); after it only security fixes
	// come until EOL. Zero when the product has no such phase or no date.
	EOAS time.Time
	// EOASPassed is set when upstream records active support as ended without a
	// date (endoflife.date's `eoas: true`).
	EOASPassed bool
	// EOL is the end of life (no more fixes at all). Zero means not yet
	// scheduled (endoflife.date's `eol: false`).
	EOL time.Time
	// EOLPassed is set when upstream records the cycle as end-of-life without a
	// date (`eol: true`).
	EOLPassed         bool
	LTS               bool
	Latest            string    // newest patch release of the cycle
	LatestReleaseDate time.Time // date of Latest
	// SupportedKubernetes is the cycle's supported Kubernetes range as the
	// product page records it ("1.32 - 1.36"), empty when it has none (istio only).
	SupportedKubernetes string
}

// Bundled parses the embedded data strictly (unknown fields, duplicate cycles and
// malformed dates are errors).
func Bundled() (*Data, error) { return Parse("eol.yaml", embedded) }

// Parse parses end-of-life data in the format of data/eol.yaml, strictly
// (internal/yamlfile); name is used in error messages as NAME:LINE:COL. Every
// cycle is checked and the first problem of each is reported.
func Parse(name string, b []byte) (*Data, error) {
	d := &yamlfile.Decoder{File: name}
	data := &Data{Source: Header(b), products: map[string][]Cycle{}}
	if err := data.setAsOf(); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrData, name, err)
	}
	if top := d.Document(b, yamlfile.Options{What: "end-of-life data file", Empty: wantProducts}); top != nil {
		data.products = DecodeProducts(d, top)
	}
	if err := d.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrData, err)
	}
	return data, nil
}

const wantProducts = "expected a mapping of product -> cycles"

// DecodeProducts decodes a mapping of product -> cycles in the format of
// data/eol.yaml's top level, recording every problem in d. A recipes
// repository's data file (internal/compatdata) holds one under a key of its own.
func DecodeProducts(d *yamlfile.Decoder, n *yaml.Node) map[string][]Cycle {
	products := map[string][]Cycle{}
	if n.Kind != yaml.MappingNode {
		d.At(n, wantProducts)
		return products
	}
	d.Map(n, yamlfile.Map{
		Each:  func(k, v *yaml.Node) { products[k.Value] = newestFirst(cycles(d, k.Value, v)) },
		Twice: func(k, _ *yaml.Node) string { return fmt.Sprintf("product %q listed twice", k.Value) },
	})
	return products
}

// setAsOf reads AsOf from the header's "As of:" line.
func (d *Data) setAsOf() error {
	asOf, _, err := AsOf(d.Source)
	d.AsOf = asOf
	return err
}

// cycles decodes a product's list of cycles; a cycle name is given once.
func cycles(d *yamlfile.Decoder, product string, v *yaml.Node) []Cycle {
	if v.Kind != yaml.SequenceNode {
		d.At(v, "product %q: expected a list of cycles", product)
		return nil
	}
	seen := &cycleNames{}
	out := make([]Cycle, 0, len(v.Content))
	for _, n := range v.Content {
		var c Cycle
		if !d.Record(func(rd *yamlfile.Decoder) { c = parseCycle(rd, product, n) }) {
			continue
		}
		if err := seen.add(c.Name); err != nil {
			d.At(n, "%s: %v", product, err)
			continue
		}
		out = append(out, c)
	}
	return out
}

// cycleNames holds a product's cycles as lookups (Data.Cycle) see them, in
// the order given: MAJOR.MINOR without leading zeros, or MAJOR alone for a
// cycle named by its major, which matches every version of that major.
type cycleNames struct {
	keys, names []string // "1.36" or "1." -> the name as given
}

// add adds a cycle, refusing one that a lookup could not tell from one
// already there: the same cycle in any spelling ("1.36", "01.36", "1.036",
// "1.36.0", "v1.36"), or a cycle of a major alone beside a cycle of that
// major ("1" and "1.36": a version 1.36.x would match either, and the one
// listed first would win).
func (s *cycleNames) add(name string) error {
	key := cycleKey(name)
	major, minor, _ := strings.Cut(key, ".")
	for i, k := range s.keys {
		other := s.names[i]
		om, on, _ := strings.Cut(k, ".")
		switch {
		case k == key && other == name:
			return fmt.Errorf("cycle %q given twice", name)
		case k == key:
			return fmt.Errorf("cycles %q and %q are the same cycle %s given twice", other, name, strings.TrimSuffix(key, "."))
		case om == major && (on == "") != (minor == ""):
			return fmt.Errorf("cycles %q and %q overlap: a version %s.%s.x would match either (a cycle named by its major alone covers all of it)", other, name, major, on+minor)
		}
	}
	s.keys, s.names = append(s.keys, key), append(s.names, name)
	return nil
}

// cycleKey is a cycle's name as lookups (Data.Cycle) read it: MAJOR.MINOR
// without leading zeros ("1.37" for "1.37.0", "01.37" or "v1.37"), or
// "MAJOR." for a cycle named by its major alone.
func cycleKey(name string) string {
	major, minor, _ := majorMinor(name)
	return major + "." + minor
}

// parseCycle decodes one cycle.
func parseCycle(d *yamlfile.Decoder, product string, n *yaml.Node) Cycle {
	c := Cycle{Product: product}
	if n.Kind != yaml.MappingNode {
		d.At(n, "%s: expected a mapping (releaseCycle, releaseDate, eol, ...)", product)
		return c
	}
	// scalar wraps a field's decoding: every field is one value, and a
	// value that does not parse is a finding at it.
	scalar := func(name string, decode func(v *yaml.Node) error) yamlfile.Field {
		return yamlfile.Field{Decode: func(v *yaml.Node) {
			if v.Kind != yaml.ScalarNode {
				d.At(v, "%s: field %q: expected a scalar", product, name)
			} else if err := decode(v); err != nil {
				d.At(v, "%s: field %q: %v", product, name, err)
			}
		}}
	}
	text := func(dst *string) func(v *yaml.Node) error {
		return func(v *yaml.Node) error { *dst = v.Value; return nil }
	}
	d.Map(n, yamlfile.Map{
		What: product,
		Fields: map[string]yamlfile.Field{
			"releaseCycle": scalar("releaseCycle", text(&c.Name)),
			"releaseDate":  scalar("releaseDate", func(v *yaml.Node) (err error) { c.ReleaseDate, err = date(v); return }),
			"eoas":         scalar("eoas", func(v *yaml.Node) (err error) { c.EOAS, c.EOASPassed, err = dateOrBool(v); return }),
			"eol":          scalar("eol", func(v *yaml.Node) (err error) { c.EOL, c.EOLPassed, err = dateOrBool(v); return }),
			"lts":          scalar("lts", func(v *yaml.Node) (err error) { c.LTS, err = boolean(v); return }),
			"latest":       scalar("latest", text(&c.Latest)),
			"latestReleaseDate": scalar("latestReleaseDate", func(v *yaml.Node) (err error) {
				c.LatestReleaseDate, err = date(v)
				return
			}),
			"supportedKubernetesVersions": scalar("supportedKubernetesVersions", text(&c.SupportedKubernetes)),
		},
		Unknown: func(k *yaml.Node) string { return fmt.Sprintf("%s: unknown field %q", product, k.Value) },
	})
	for _, f := range []string{"releaseCycle", "releaseDate", "eol", "latest"} {
		if yamlfile.KeyOf(n, f) == n {
			d.At(n, "%s: missing field %q", product, f)
		}
	}
	if _, _, ok := majorMinor(c.Name); !ok {
		d.At(n, "%s: releaseCycle %q: expected MAJOR or MAJOR.MINOR", product, c.Name)
	} else if _, err := debversion.Parse(c.Latest); err != nil {
		d.At(n, "%s: latest %q: %v", product, c.Latest, err)
	}
	return c
}

func date(v *yaml.Node) (time.Time, error) { return parseDay(v.Value, "a date YYYY-MM-DD") }

// minDay is the earliest date the data may hold. 0001-01-01 parses to the
// zero time, which the data reads as "no date" (an eol of 0001-01-01 would
// be "not scheduled": supported for ever), and no product updeb tracks
// was released, or left support, before 1970.
var minDay = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)

// parseDay reads a date YYYY-MM-DD of the data; want says what was
// expected, for the message.
func parseDay(s, want string) (time.Time, error) {
	t, err := time.Parse(time.DateOnly, s)
	switch {
	case err != nil:
		return time.Time{}, fmt.Errorf("expected %s, found %q", want, s)
	case t.Before(minDay):
		return time.Time{}, fmt.Errorf("%q is before %s: not a day of a release or of its support (the zero date of a broken answer?)", s, minDay.Format(time.DateOnly))
	}
	return t, nil
}

func boolean(v *yaml.Node) (bool, error) {
	switch v.Value {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("expected true or false, found %q", v.Value)
}

// dateOrBool decodes endoflife.date's "a date, or true/false" fields.
func dateOrBool(v *yaml.Node) (time.Time, bool, error) {
	if b, err := boolean(v); err == nil {
		return time.Time{}, b, nil
	}
	t, err := parseDay(v.Value, "a date YYYY-MM-DD, true or false")
	return t, false, err
}

// newestFirst sorts a product's cycles newest first, whatever order the
// file or the answer gave them in (an older mirror of endoflife.date lists
// them oldest first): commands take the first cycle that is not end-of-life
// as the newest. It returns cs.
func newestFirst(cs []Cycle) []Cycle {
	digits := func(a, b string) int { return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b)) }
	slices.SortStableFunc(cs, func(a, b Cycle) int {
		am, an, _ := majorMinor(a.Name)
		bm, bn, _ := majorMinor(b.Name)
		return cmp.Or(digits(bm, am), digits(bn, an))
	})
	return cs
}

// Products returns the product names, sorted.
func (d *Data) Products() []string {
	out := slices.Sorted(maps.Keys(d.products))
	return out
}

// Cycles returns a product's cycles, newest first.
func (d *Data) Cycles(product string) []Cycle {
	return append([]Cycle(nil), d.products[product]...)
}

// Cycle finds the release cycle of version for product (a product name of the
// data file, see ProductOf for component names). The version is matched by its
// major.minor. Special cases:
//   - a leading "v", a Debian epoch ("1:") and a Debian revision ("-1") are
//     ignored, as is anything after the minor ("1.35.0~rc.1" is cycle 1.35);
//   - a cycle named by its major only ("3") matches every version of that major;
//   - a version that is only "MAJOR.MINOR" or "MAJOR" is accepted.
//
// It returns false when the product is unknown or has no such cycle (e.g. a
// cycle newer than the data snapshot).
func (d *Data) Cycle(product, version string) (Cycle, bool) {
	major, minor, ok := majorMinor(version)
	if !ok {
		return Cycle{}, false
	}
	for _, c := range d.products[product] {
		cm, cn, _ := majorMinor(c.Name)
		if cm == major && (cn == "" || cn == minor) {
			return c, true
		}
	}
	return Cycle{}, false
}

// majorMinor extracts the first two numeric components of a version, after an
// optional "v" and epoch; minor is "" when the version has a major only.
func majorMinor(version string) (major, minor string, ok bool) {
	major, minor, _, ok = splitMajorMinor(version)
	return major, minor, ok
}

// splitMajorMinor is majorMinor, and what follows the numbers it read
// (after the minor, or after the major when there is no minor).
func splitMajorMinor(version string) (major, minor, rest string, ok bool) {
	s := strings.TrimPrefix(strings.TrimPrefix(version, "v"), "V")
	if i := strings.IndexByte(s, ':'); i >= 0 {
		s = s[i+1:]
	}
	major, rest = digits(s)
	if major == "" {
		return "", "", "", false
	}
	if strings.HasPrefix(rest, ".") {
		if m, r := digits(rest[1:]); m != "" {
			minor, rest = m, r
		}
	}
	return trimZeros(major), trimZeros(minor), rest, true
}

func trimZeros(s string) string {
	if s == "" {
		return ""
	}
	t := strings.TrimLeft(s, "0")
	if t == "" {
		return "0"
	}
	return t
}

func digits(s string) (string, string) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i], s[i:]
}

// kubernetesBinaries are the programs a Kubernetes release ships (its
// server, node and client tarballs): the components ProductOf maps to
// "kubernetes". A name that merely starts with "kube-" (kube-vip,
// kube-state-metrics) is a project of its own.
var kubernetesBinaries = map[string]bool{
	"kube-apiserver": true, "kube-controller-manager": true, "kube-scheduler": true, "kube-proxy": true,
	"kube-aggregator": true, "kube-log-runner": true, "kubelet": true, "kubectl": true, "kubectl-convert": true,
	"kubeadm": true, "apiextensions-apiserver": true, "cloud-controller-manager": true,
}

// ProductOf maps an updeb component name to the product of the data file that
// covers it: the Kubernetes binaries (kubelet, kubectl, kubeadm,
// kube-apiserver, ...: kubernetesBinaries) to "kubernetes", calicoctl to
// "calico", istioctl to "istio"; any other name maps to itself. It does not
// say whether the product has data.
func ProductOf(component string) string {
	switch {
	case kubernetesBinaries[component]:
		return "kubernetes"
	case component == "calicoctl":
		return "calico"
	case component == "istioctl":
		return "istio"
	}
	return component
}
