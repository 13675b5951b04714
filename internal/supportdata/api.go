package supportdata

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/updeb/updeb/pkg/debversion"
	"github.com/updeb/updeb/pkg/strictjson"
)

// ErrAPI is wrapped by every error about an endoflife.date API answer that
// cannot be used: not JSON (an HTML error page), truncated, the wrong shape, a
// field of the wrong type, a cycle given twice.
var ErrAPI = errors.New("eol: unusable endoflife.date answer")

// MaxCycles bounds the cycles of one product in an API answer: the largest
// products of endoflife.date have a few hundred.
const MaxCycles = 2000

// ParseAPI parses one product's answer from the endoflife.date API, in
// either of its shapes:
//
//   - v0, GET /api/PRODUCT.json: a list of cycles
//     [{"cycle": "1.36", "releaseDate": "2026-04-22", "support": "2027-04-28",
//     "eol": "2027-06-28", "latest": "1.36.4", "latestReleaseDate": "2026-08-20",
//     "lts": false}, ...]; eol, support and lts are a date or a boolean (eol
//     true: end of life reached; support true: active support goes on).
//   - v1, GET /api/v1/products/PRODUCT: {"schema_version": "1...", "result":
//     {"name": PRODUCT, "releases": [{"name": "1.36", "releaseDate": ...,
//     "isLts": false, "eoasFrom": ..., "isEol": false, "eolFrom": ...,
//     "latest": {"name": "1.36.4", "date": ...}, "custom": {...}}]}}.
//
// It is strict where updeb depends on the answer: the document is one JSON
// value and nothing after it; every cycle has a name of MAJOR[.MINOR], a
// release date, an end of life (a date or a boolean), and a latest release
// that is a version; every date is YYYY-MM-DD; a cycle is given once; there
// are 1 to MaxCycles of them. Each cycle must hold together (Cycle.plausible):
// its latest release belongs to it, no end comes before its release, and
// nothing was released after now (the time of the request), give or take a
// day for time zones. Fields updeb does not use are not checked, so that
// upstream may add some. url names the answer in messages. Cycles come back in
// the answer's order; New sorts them newest first.
func ParseAPI(product, url string, body []byte, now time.Time) ([]Cycle, error) {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrAPI, url, fmt.Sprintf(format, args...))
	}
	trimmed := bytes.TrimSpace(body)
	switch {
	case len(trimmed) == 0:
		return nil, fail("empty answer")
	case trimmed[0] == '<':
		return nil, fail("the answer is HTML, not JSON (an error page, a login page of a proxy?): %q", excerpt(trimmed))
	}
	// One reading for every reader (strictjson): a key given twice at any
	// depth (encoding/json would keep the last), keys differing only in
	// case, anything after the document are refused.
	var doc any
	if err := strictjson.Unmarshal(trimmed, &doc); err != nil {
		return nil, fail("not valid JSON (truncated?), or ambiguous (%v)", err)
	}
	var raw []any
	v1 := false
	switch d := doc.(type) {
	case []any:
		raw = d
	case map[string]any:
		result, ok := d["result"].(map[string]any)
		if !ok {
			return nil, fail(`expected a list of cycles (API v0) or {"result": {"releases": [...]}} (API v1)`)
		}
		if name, ok := result["name"].(string); ok && name != product {
			return nil, fail("the answer is for product %q, not %q", name, product)
		}
		if raw, ok = result["releases"].([]any); !ok {
			return nil, fail(`"result" has no list "releases"`)
		}
		v1 = true
	default:
		return nil, fail(`expected a list of cycles (API v0) or {"result": {"releases": [...]}} (API v1)`)
	}
	if len(raw) == 0 {
		return nil, fail("no release cycles")
	}
	if len(raw) > MaxCycles {
		return nil, fail("%d release cycles, more than the %d updeb accepts", len(raw), MaxCycles)
	}
	out := make([]Cycle, 0, len(raw))
	seen := &cycleNames{}
	for i, r := range raw {
		obj, ok := r.(map[string]any)
		if !ok {
			return nil, fail("cycle %d: expected an object, found %s", i+1, jsonKind(r))
		}
		var c Cycle
		var err error
		if v1 {
			c, err = cycleV1(product, obj)
		} else {
			c, err = cycleV0(product, obj)
		}
		if err == nil {
			err = c.plausible(now)
		}
		if err != nil {
			return nil, fail("cycle %d: %v", i+1, err)
		}
		if err := seen.add(c.Name); err != nil {
			return nil, fail("%v", err)
		}
		out = append(out, c)
	}
	return out, nil
}

// Bounds of a plausible cycle: the slack allowed for "released after now"
// (time zones, a clock a little behind), how far ahead a cycle may be
// announced (endoflife.date's own validator accepts a releaseDate up to 7
// days ahead: a cycle added the week before its release), and the longest
// support updeb believes in (no product it tracks supports a cycle for
// decades).
const (
	clockSlack     = 48 * time.Hour
	announceAhead  = 7 * 24 * time.Hour
	maxSupportSpan = 30 * 365 * 24 * time.Hour
)

// plausible reports a cycle that does not hold together, so that a broken
// or hostile answer cannot make updeb suggest a bump to a release of another
// cycle, keep an end-of-life cycle alive for ever, or add a minor that was
// not released yet.
func (c Cycle) plausible(now time.Time) error {
	if !ofCycle(c.Latest, c.Name) {
		return fmt.Errorf("%q: latest release %q is not a release of cycle %s", c.Name, c.Latest, c.Name)
	}
	// A cycle announced for the coming week is read (its release is not
	// taken before its day: minors, plan's released); so is its latest,
	// the release it starts with, dated that day. A patch of a cycle
	// released already is not dated ahead.
	limit := now.UTC().Add(clockSlack)
	announced := limit.Add(announceAhead)
	latestLimit := limit
	if !c.LatestReleaseDate.After(c.ReleaseDate) {
		latestLimit = announced
	}
	for _, d := range []struct {
		what  string
		t     time.Time
		limit time.Time
	}{{"release date", c.ReleaseDate, announced}, {"latest release date", c.LatestReleaseDate, latestLimit}} {
		if d.t.After(d.limit) {
			return fmt.Errorf("%q: %s %s is after today (%s): a broken answer, or a wrong clock here", c.Name, d.what, d.t.Format(time.DateOnly), now.UTC().Format(time.DateOnly))
		}
	}
	for _, d := range []struct {
		what string
		t    time.Time
	}{{"end of active support", c.EOAS}, {"end of life", c.EOL}, {"latest release date", c.LatestReleaseDate}} {
		switch {
		case d.t.IsZero():
		case d.t.Before(c.ReleaseDate):
			return fmt.Errorf("%q: %s %s is before the release date %s", c.Name, d.what, d.t.Format(time.DateOnly), c.ReleaseDate.Format(time.DateOnly))
		case d.t.Sub(c.ReleaseDate) > maxSupportSpan:
			return fmt.Errorf("%q: %s %s is more than 30 years after the release date %s: not plausible", c.Name, d.what, d.t.Format(time.DateOnly), c.ReleaseDate.Format(time.DateOnly))
		}
	}
	return nil
}

// ofCycle reports whether version is a release of cycle as lookups
// (Data.Cycle) read both: endoflife.date may name cycle 1.37 "1.37.0",
// "v1.37" or "01.37", whose latest is 1.37.2 all the same. After the
// cycle's numbers the version goes on with a dot or ends: 1.37rc1 is not a
// release, and 1.370.1 is another cycle.
func ofCycle(version, cycle string) bool {
	if version == cycle || strings.HasPrefix(version, cycle+".") {
		return true
	}
	cm, cn, crest, _ := splitMajorMinor(cycle)
	vm, vn, rest, ok := splitMajorMinor(version)
	if !ok || vm != cm || strings.Trim(crest, ".0123456789") != "" || strings.Contains(crest, "..") {
		return false // a name such as "1.36-lts" is matched as written
	}
	if cn != "" {
		if vn != cn {
			return false
		}
	} else if vn != "" {
		rest = "." + vn // the minor's digits stand for whatever followed the major
	}
	return rest == "" || rest[0] == '.'
}

// cycleV0 decodes a cycle of the v0 API.
func cycleV0(product string, o map[string]any) (Cycle, error) {
	c := Cycle{Product: product}
	f := fields{o}
	var err error
	if c.Name, err = f.cycleName("cycle"); err != nil {
		return c, err
	}
	if c.ReleaseDate, err = f.date("releaseDate", true); err != nil {
		return c, err
	}
	if c.EOL, c.EOLPassed, err = f.dateOrBool("eol", true); err != nil {
		return c, err
	}
	// v0's "support" says whether active support goes on, the opposite of
	// eoas: endoflife.date writes support: !eoas (and its older product
	// files wrote "support: true" of a cycle in active support).
	var supported bool
	if c.EOAS, supported, err = f.dateOrBool("support", false); err != nil {
		return c, err
	}
	_, present := f.o["support"].(bool)
	c.EOASPassed = present && !supported
	if c.LTS, err = f.lts("lts"); err != nil {
		return c, err
	}
	if c.Latest, err = f.version("latest"); err != nil {
		return c, err
	}
	if c.LatestReleaseDate, err = f.date("latestReleaseDate", false); err != nil {
		return c, err
	}
	c.SupportedKubernetes, err = f.text("supportedKubernetesVersions")
	return c, err
}

// cycleV1 decodes a release of the v1 API.
func cycleV1(product string, o map[string]any) (Cycle, error) {
	c := Cycle{Product: product}
	f := fields{o}
	var err error
	if c.Name, err = f.cycleName("name"); err != nil {
		return c, err
	}
	if c.ReleaseDate, err = f.date("releaseDate", true); err != nil {
		return c, err
	}
	isEol, err := f.boolean("isEol", true)
	if err != nil {
		return c, err
	}
	if c.EOL, err = f.date("eolFrom", false); err != nil {
		return c, err
	}
	c.EOLPassed = isEol && c.EOL.IsZero()
	isEoas, err := f.boolean("isEoas", false)
	if err != nil {
		return c, err
	}
	if c.EOAS, err = f.date("eoasFrom", false); err != nil {
		return c, err
	}
	c.EOASPassed = isEoas && c.EOAS.IsZero()
	if c.LTS, err = f.boolean("isLts", false); err != nil {
		return c, err
	}
	latest, ok := o["latest"].(map[string]any)
	if !ok {
		return c, fmt.Errorf(`%q: field "latest": expected an object {"name": VERSION, "date": ...}`, c.Name)
	}
	lf := fields{latest}
	if c.Latest, err = lf.version("name"); err != nil {
		return c, fmt.Errorf(`%q: field "latest": %w`, c.Name, err)
	}
	if c.LatestReleaseDate, err = lf.date("date", false); err != nil {
		return c, fmt.Errorf(`%q: field "latest": %w`, c.Name, err)
	}
	if custom, ok := o["custom"].(map[string]any); ok {
		c.SupportedKubernetes, err = fields{custom}.text("supportedKubernetesVersions")
	}
	return c, err
}

// fields reads typed values out of a decoded JSON object.
type fields struct{ o map[string]any }

func (f fields) cycleName(key string) (string, error) {
	s, ok := f.o[key].(string)
	if !ok {
		return "", fmt.Errorf("field %q: expected the cycle's name as a string, found %s", key, jsonKind(f.o[key]))
	}
	if _, _, ok := majorMinor(s); !ok || strings.ContainsAny(s, "\n\r\"\\") {
		return "", fmt.Errorf("field %q: %q is not MAJOR or MAJOR.MINOR", key, s)
	}
	return s, nil
}

func (f fields) date(key string, required bool) (time.Time, error) {
	v, present := f.o[key]
	if !present || v == nil {
		if required {
			return time.Time{}, fmt.Errorf("missing field %q", key)
		}
		return time.Time{}, nil
	}
	s, ok := v.(string)
	if !ok {
		return time.Time{}, fmt.Errorf("field %q: expected a date YYYY-MM-DD, found %s", key, jsonKind(v))
	}
	t, err := parseDay(s, "a date YYYY-MM-DD")
	if err != nil {
		return time.Time{}, fmt.Errorf("field %q: %w", key, err)
	}
	return t, nil
}

func (f fields) dateOrBool(key string, required bool) (time.Time, bool, error) {
	if b, ok := f.o[key].(bool); ok {
		return time.Time{}, b, nil
	}
	t, err := f.date(key, required)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("%w (or true/false)", err)
	}
	return t, false, nil
}

func (f fields) boolean(key string, required bool) (bool, error) {
	v, present := f.o[key]
	if !present || v == nil {
		if required {
			return false, fmt.Errorf("missing field %q", key)
		}
		return false, nil
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("field %q: expected true or false, found %s", key, jsonKind(v))
	}
	return b, nil
}

// lts is v0's lts: a boolean, or the date the cycle became LTS (true then).
func (f fields) lts(key string) (bool, error) {
	t, b, err := f.dateOrBool(key, false)
	return b || !t.IsZero(), err
}

func (f fields) version(key string) (string, error) {
	s, ok := f.o[key].(string)
	if !ok {
		return "", fmt.Errorf("field %q: expected a version string, found %s", key, jsonKind(f.o[key]))
	}
	if _, err := debversion.Parse(s); err != nil || strings.ContainsAny(s, "\n\r\"\\") {
		return "", fmt.Errorf("field %q: %q is not a version", key, s)
	}
	return s, nil
}

// text is an optional one-line string of at most 200 bytes.
func (f fields) text(key string) (string, error) {
	v, present := f.o[key]
	if !present || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok || len(s) > 200 || strings.ContainsAny(s, "\n\r\"\\") {
		return "", fmt.Errorf("field %q: expected one short line of text, found %s", key, jsonKind(v))
	}
	return s, nil
}

// jsonKind names a decoded JSON value for messages.
func jsonKind(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(x)
	case json.Number:
		return "the number " + x.String()
	case string:
		return strconv.Quote(excerpt([]byte(x)))
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// excerpt is the start of b, for messages.
func excerpt(b []byte) string {
	const n = 80
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}

// New makes end-of-life data from products' cycles (each newest first) and
// the header text (see Data.Source; its "As of:" line is read like Parse's).
func New(source string, products map[string][]Cycle) (*Data, error) {
	d := &Data{Source: source, products: map[string][]Cycle{}}
	for p, cs := range products {
		d.products[p] = newestFirst(append([]Cycle(nil), cs...))
	}
	return d, d.setAsOf()
}

// Encode writes the data in the format of data/eol.yaml (Parse reads it back
// to the same data): the header as "# " comment lines, then each product's
// cycles, products sorted by name.
func (d *Data) Encode() []byte {
	var b bytes.Buffer
	for _, l := range strings.Split(d.Source, "\n") {
		b.WriteString(strings.TrimRight("# "+l, " ") + "\n")
	}
	b.WriteString("\n")
	b.Write(d.EncodeProducts(""))
	return b.Bytes()
}

// EncodeProducts writes the products and their cycles, products sorted by
// name and separated by a blank line, every line starting with indent: what
// DecodeProducts reads back.
func (d *Data) EncodeProducts(indent string) []byte {
	var b bytes.Buffer
	ps := d.Products()
	sort.Strings(ps)
	for i, p := range ps {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%s%s:\n", indent, strconv.Quote(p))
		line := func(format string, args ...any) { b.WriteString(indent + fmt.Sprintf(format, args...) + "\n") }
		for _, c := range d.products[p] {
			line("  - releaseCycle: %s", strconv.Quote(c.Name))
			line("    releaseDate: %s", c.ReleaseDate.Format(time.DateOnly))
			if !c.EOAS.IsZero() || c.EOASPassed {
				line("    eoas: %s", dateOrBoolText(c.EOAS, c.EOASPassed))
			}
			line("    eol: %s", dateOrBoolText(c.EOL, c.EOLPassed))
			if c.LTS {
				line("    lts: true")
			}
			if c.SupportedKubernetes != "" {
				line("    supportedKubernetesVersions: %s", strconv.Quote(c.SupportedKubernetes))
			}
			line("    latest: %s", strconv.Quote(c.Latest))
			if !c.LatestReleaseDate.IsZero() {
				line("    latestReleaseDate: %s", c.LatestReleaseDate.Format(time.DateOnly))
			}
		}
	}
	return b.Bytes()
}

func dateOrBoolText(t time.Time, passed bool) string {
	if t.IsZero() {
		return strconv.FormatBool(passed)
	}
	return t.Format(time.DateOnly)
}
