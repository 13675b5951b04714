// Package supportdata holds updeb's support data and keeps it current: the
// end-of-life dates (release cycles, their end of support and end of life,
// latest patch, Istio's supported Kubernetes range) that updeb outdated,
// compat and plan read, and answers "is this version still supported on that
// day?". Two copies exist: the snapshot bundled in the binary (data/eol.yaml,
// Bundled), always there, and the copy `updeb data refresh` fetched from the
// endoflife.date API into the state folder. Load picks the newer valid one and
// says which; Refresh fetches, verifies and replaces the refreshed copy
// atomically, or leaves the old one as it was.
//
// The refreshed copy is STATE/support/eol.yaml, in the format of the bundled
// file (Parse reads both), its header naming the URLs it came from and an
// "As of:" line with the time it was fetched.
//
// Dates are calendar days. A date boundary takes effect at 00:00 UTC of that
// day: a cycle whose eol is 2026-10-27 is end-of-life on 2026-10-27 itself.
package supportdata

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/updeb/updeb/internal/fetch"
	"github.com/updeb/updeb/internal/yamlfile"
	"github.com/updeb/updeb/pkg/atomicfile"
	"github.com/updeb/updeb/pkg/plural"
)

// File is the refreshed copy's path inside the state folder.
var File = filepath.Join("support", "eol.yaml")

// DefaultMaxAnswer bounds one product's API answer, in bytes: the largest
// products' answers are tens of KiB.
const DefaultMaxAnswer = 1 << 20

// Copy is the support data a command uses, and where it came from.
type Copy struct {
	Data *Data
	// Path is the file the data was read from: the refreshed copy, or a
	// recipes repository's data file (Repository); "" for the bundled snapshot.
	Path string
	// Repository is set when Path is a recipes repository's data file
	// (internal/compatdata), which commands use in preference to the others.
	Repository bool
}

// Refreshed reports whether the copy was read from a file (the state
// folder's refreshed copy or a repository's data file), not bundled.
func (c *Copy) Refreshed() bool { return c.Path != "" }

// Kind is "bundled", "refreshed" or "repository".
func (c *Copy) Kind() string {
	switch {
	case c.Repository:
		return "repository"
	case c.Refreshed():
		return "refreshed"
	}
	return "bundled"
}

// Name is "bundled", "refreshed PATH" or "repository PATH", for reports.
func (c *Copy) Name() string {
	if c.Refreshed() {
		return c.Kind() + " " + c.Path
	}
	return "bundled"
}

// Age is how old the data is on now's day (whole days, never negative); ok
// is false when the data carries no date.
func (c *Copy) Age(now time.Time) (days int, ok bool) {
	if c.Data.AsOf.IsZero() {
		return 0, false
	}
	d := int(now.Sub(c.Data.AsOf).Hours() / 24)
	return max(d, 0), true
}

// Describe says which copy it is and how old: "bundled copy, as of
// 2026-08-22 (94 days old)", or "(dated after today)" (as Stale reads the
// clock's today).
func (c *Copy) Describe(now time.Time) string {
	s := "bundled copy"
	switch {
	case c.Repository:
		s = "repository data file " + c.Path
	case c.Refreshed():
		s = "refreshed copy " + c.Path
	}
	days, ok := c.Age(now)
	switch {
	case !ok:
		return s + ", of unknown date"
	case AfterToday(c.Data.AsOf, time.Now()):
		// Its age would read 0 days: the date is wrong, not recent.
		return fmt.Sprintf("%s, as of %s (dated after today)", s, c.Data.AsOf.Format(time.DateOnly))
	}
	return fmt.Sprintf("%s, as of %s (%s old)", s, c.Data.AsOf.Format(time.DateOnly), plural.Days(days))
}

// Stale reports whether the data is older than maxAge on now's day (data
// without a date, or dated after the clock's today whatever day now is, is
// stale).
func (c *Copy) Stale(now time.Time, maxAge time.Duration) bool {
	return c.Data.AsOf.IsZero() || now.Sub(c.Data.AsOf) > maxAge || AfterToday(c.Data.AsOf, time.Now())
}

// Load returns the copy to use: the refreshed one in stateDir when it is
// there, parses and is not older than the bundled snapshot (with the
// bundled cycles of any product it lacks); else the bundled one (with the
// refreshed cycles of any product it lacks). Every reason a refreshed copy was passed over is a warning, for the
// user: the bundled data is always usable, so Load itself only fails when the
// bundled data does not parse (which the package's tests rule out).
func Load(stateDir string) (*Copy, []string, error) {
	bundled, err := Bundled()
	if err != nil {
		return nil, nil, fmt.Errorf("bundled end-of-life data: %w", err)
	}
	fallback := &Copy{Data: bundled}
	if stateDir == "" {
		return fallback, nil, nil
	}
	path := filepath.Join(stateDir, File)
	data, err := readRefreshed(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fallback, nil, nil
	case err != nil:
		return fallback, []string{fmt.Sprintf("the refreshed support data cannot be used (%v); using the bundled copy: run 'updeb data refresh'", err)}, nil
	case AfterToday(data.AsOf, time.Now()):
		return fallback, []string{FutureCopy("support data", path, data.AsOf, time.Now())}, nil
	case data.AsOf.Before(bundled.AsOf):
		w := fmt.Sprintf("the refreshed support data %s (as of %s) is older than the bundled copy (as of %s); using the bundled copy",
			path, data.AsOf.Format(time.DateOnly), bundled.AsOf.Format(time.DateOnly))
		// The products it has that the bundled copy lacks (data:
		// products: in the config) are its own: without them they
		// would be unknown after every upgrade of updeb until a refresh.
		if extra := bundled.fillFrom(data); len(extra) > 0 {
			w += fmt.Sprintf(", and the refreshed copy's release cycles of %s, which the bundled copy lacks: run 'updeb data refresh'", strings.Join(extra, ", "))
		}
		return fallback, []string{w}, nil
	}
	var warnings []string
	if missing := data.fillFrom(bundled); len(missing) > 0 {
		warnings = append(warnings, fmt.Sprintf("the refreshed support data %s has no release cycles of %s, which the bundled copy (as of %s) has: it was refreshed before this updeb added them; using the bundled copy's: run 'updeb data refresh'",
			path, strings.Join(missing, ", "), bundled.AsOf.Format(time.DateOnly)))
	}
	return &Copy{Data: data, Path: path}, warnings, nil
}

// fillFrom takes the products d lacks from other (the bundled copy, which
// a newer updeb may bring with products an older one did not refresh), and
// returns their names, sorted: without them a product the bundled copy
// covers would be unknown to every command until the next refresh.
func (d *Data) fillFrom(other *Data) []string {
	var missing []string
	for _, p := range other.Products() {
		if _, ok := d.products[p]; !ok {
			d.products[p] = other.products[p]
			missing = append(missing, p)
		}
	}
	return missing
}

// AfterToday reports whether a copy's date is after now, give or take the
// slack ParseAPI allows for time zones and a clock a little behind. Such a
// copy was written with a clock far ahead (or edited): it would be "0 days
// old" and never stale, and newer than every bundled copy a later updeb
// brings, so Load passes it over.
func AfterToday(asOf, now time.Time) bool { return asOf.After(now.Add(clockSlack)) }

// FutureCopy is the warning for a refreshed copy (what: "support data")
// dated after today.
func FutureCopy(what, path string, asOf, now time.Time) string {
	return fmt.Sprintf("the refreshed %s %s is as of %s, after today (%s): it was written with a wrong clock; using the bundled copy: run 'updeb data refresh'",
		what, path, asOf.UTC().Format(time.DateOnly), now.UTC().Format(time.DateOnly))
}

// readRefreshed reads and parses a refreshed copy, which must carry its date.
func readRefreshed(path string) (*Data, error) {
	b, err := yamlfile.ReadFile(path, 0)
	if err != nil {
		return nil, err
	}
	d, err := Parse(path, b)
	if err != nil {
		return nil, err
	}
	if d.AsOf.IsZero() {
		return nil, fmt.Errorf("%s: no %q line in its header", path, AsOfLabel)
	}
	return d, nil
}

// Getter fetches small documents; *fetch.Fetcher is one (proxy, mirrors,
// retries, offline mode).
type Getter interface {
	Get(ctx context.Context, url string, header http.Header, limit int64) ([]byte, error)
}

// RefreshOptions say what Refresh fetches and where it writes.
type RefreshOptions struct {
	Client Getter
	// ProductURL returns the URL of a product's release cycles.
	ProductURL func(product string) string
	// Products to fetch besides those of the bundled snapshot and of the
	// copy in use.
	Products []string
	StateDir string
	Now      time.Time
	// AllowDropped accepts an answer that lacks release cycles the copy in
	// use has (recorded in the new file's header); without it such an
	// answer is refused with a *DroppedError.
	AllowDropped bool
	// MaxAnswer bounds one answer in bytes (0: DefaultMaxAnswer).
	MaxAnswer int64
}

// ErrDropped is wrapped when an answer lacks release cycles the copy in use
// has: endoflife.date does not delete cycles, so this is a sign of a broken
// mirror or a partial answer.
var ErrDropped = errors.New("supportdata: release cycles missing from the new data")

// DroppedError lists, per product, the cycles the new data lacks.
type DroppedError struct {
	Dropped map[string][]string
}

func (e *DroppedError) Error() string {
	var parts []string
	for _, p := range slices.Sorted(maps.Keys(e.Dropped)) {
		parts = append(parts, fmt.Sprintf("%s %s", p, strings.Join(e.Dropped[p], ", ")))
	}
	return "the new data lacks release cycles the copy in use has: " + strings.Join(parts, "; ")
}

func (e *DroppedError) Unwrap() error { return ErrDropped }

// Result says what Refresh did.
type Result struct {
	Path     string          `json:"path"`
	AsOf     time.Time       `json:"as_of"`
	Replaced string          `json:"replaced"` // the copy in use before: "bundled" or "refreshed PATH"
	Products []ProductResult `json:"products"`
}

// ProductResult is one product's part of a refresh.
type ProductResult struct {
	Product string   `json:"product"`
	URL     string   `json:"url"`
	Cycles  int      `json:"cycles"`
	Added   []string `json:"added,omitempty"`   // cycles the copy in use did not have
	Dropped []string `json:"dropped,omitempty"` // cycles accepted as gone (AllowDropped)
	Latest  []string `json:"latest,omitempty"`  // "1.36: 1.36.4 -> 1.36.5", latest patches that moved
	// Changed are the cycles whose dates or facts moved: "1.30: end of life
	// 2027-01-01 -> 2026-11-30" (release, end of active support, end of
	// life, LTS, supported Kubernetes versions).
	Changed []string `json:"changed,omitempty"`
}

// Refresh fetches every product's release cycles, checks them (ParseAPI:
// the answer is complete and well-formed; no cycle of the copy in use is
// missing unless AllowDropped), writes them with their sources and the time
// to STATE/support/eol.yaml through a temporary file, reads that back with
// the parser every command uses, and only then renames it into place. On any
// failure the copy that was there stays as it was.
func Refresh(ctx context.Context, o RefreshOptions) (*Result, error) {
	if o.StateDir == "" {
		return nil, errors.New("supportdata: no state folder")
	}
	current, _, err := Load(o.StateDir)
	if err != nil {
		return nil, err
	}
	res, data, err := Fetch(ctx, o, current)
	if err != nil {
		return nil, err
	}
	res.Path = filepath.Join(o.StateDir, File)
	if err := WriteFile(res.Path, data); err != nil {
		return nil, err
	}
	return res, nil
}

// Fetch is Refresh short of writing: it fetches every product's release
// cycles (those of the bundled snapshot, of current and o.Products), checks
// each answer, compares it with current (the copy the new data replaces)
// and returns the new data, its header naming the sources and the time.
// Result.Path is left for the caller, who decides where the data goes
// (WriteFile, or a recipes repository's data file).
func Fetch(ctx context.Context, o RefreshOptions, current *Copy) (*Result, *Data, error) {
	bundled, err := Bundled()
	if err != nil {
		return nil, nil, err
	}
	products := union(union(bundled.Products(), current.Data.Products()), o.Products)
	limit := o.MaxAnswer
	if limit <= 0 {
		limit = DefaultMaxAnswer
	}
	res := &Result{AsOf: o.Now.UTC().Truncate(time.Second), Replaced: current.Name()}
	fetched := map[string][]Cycle{}
	dropped := map[string][]string{}
	for _, p := range products {
		url := o.ProductURL(p)
		body, err := o.Client.Get(ctx, url, http.Header{"Accept": {"application/json"}}, limit)
		if se, ok := errors.AsType[*fetch.SizeError](err); ok {
			return nil, nil, fmt.Errorf("%w: %s: the answer is larger than %d bytes: refused", ErrAPI, url, se.Limit)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", p, err)
		}
		cycles, err := ParseAPI(p, url, body, o.Now)
		if err != nil {
			return nil, nil, err
		}
		pr := compare(p, url, current.Data.Cycles(p), cycles)
		if len(pr.Dropped) > 0 {
			dropped[p] = pr.Dropped
		}
		fetched[p] = cycles
		res.Products = append(res.Products, pr)
	}
	if len(dropped) > 0 && !o.AllowDropped {
		return nil, nil, &DroppedError{Dropped: dropped}
	}
	data, err := New(header(res, dropped), fetched)
	if err != nil {
		return nil, nil, err
	}
	return res, data, nil
}

// compare lists what changed for one product between the copy in use and
// the new answer.
func compare(product, url string, old, fresh []Cycle) ProductResult {
	pr := ProductResult{Product: product, URL: url, Cycles: len(fresh)}
	// A cycle is the same cycle however it is spelled ("1.37", "1.37.0"),
	// as lookups (Data.Cycle) read it.
	inNew := map[string]Cycle{}
	for _, c := range fresh {
		inNew[cycleKey(c.Name)] = c
	}
	inOld := map[string]bool{}
	for _, c := range old {
		inOld[cycleKey(c.Name)] = true
		n, ok := inNew[cycleKey(c.Name)]
		switch {
		case !ok:
			pr.Dropped = append(pr.Dropped, c.Name)
		default:
			if n.Latest != c.Latest {
				pr.Latest = append(pr.Latest, fmt.Sprintf("%s: %s -> %s", c.Name, c.Latest, n.Latest))
			}
			if moved := cycleChanges(c, n); len(moved) > 0 {
				pr.Changed = append(pr.Changed, c.Name+": "+strings.Join(moved, ", "))
			}
		}
	}
	for _, c := range fresh {
		if !inOld[cycleKey(c.Name)] {
			pr.Added = append(pr.Added, c.Name)
		}
	}
	return pr
}

// cycleChanges says what moved in a cycle but its latest patch: the facts
// that decide whether it is supported ("end of life 2027-01-01 ->
// 2026-11-30").
func cycleChanges(old, fresh Cycle) []string {
	when := func(t time.Time, passed bool) string {
		switch {
		case !t.IsZero():
			return t.UTC().Format(time.DateOnly)
		case passed:
			return "passed"
		}
		return "none"
	}
	var out []string
	for _, f := range []struct{ what, was, now string }{
		{"released", when(old.ReleaseDate, false), when(fresh.ReleaseDate, false)},
		{"end of active support", when(old.EOAS, old.EOASPassed), when(fresh.EOAS, fresh.EOASPassed)},
		{"end of life", when(old.EOL, old.EOLPassed), when(fresh.EOL, fresh.EOLPassed)},
		{"LTS", fmt.Sprint(old.LTS), fmt.Sprint(fresh.LTS)},
		{"supported Kubernetes", cmp.Or(old.SupportedKubernetes, "none"), cmp.Or(fresh.SupportedKubernetes, "none")},
	} {
		if f.was != f.now {
			out = append(out, fmt.Sprintf("%s %s -> %s", f.what, f.was, f.now))
		}
	}
	return out
}

// header is the refreshed file's header: the sources, what it replaced, the
// cycles accepted as dropped, and the "As of:" line.
func header(res *Result, dropped map[string][]string) string {
	lines := []string{
		"Source: endoflife.date API (data: MIT License, https://github.com/endoflife-date/endoflife.date), fetched by updeb data refresh from:",
	}
	for _, p := range res.Products {
		lines = append(lines, "  "+p.Product+": "+p.URL)
	}
	lines = append(lines, "Replaced: the "+res.Replaced+" copy.")
	for _, p := range slices.Sorted(maps.Keys(dropped)) {
		lines = append(lines, fmt.Sprintf("Dropped (accepted with --allow-dropped): %s %s", p, strings.Join(dropped[p], ", ")))
	}
	return strings.Join(append(lines, AsOfLabel+" "+res.AsOf.Format(time.RFC3339)), "\n")
}

// WriteFile checks that the encoded data reads back as the same data, then
// replaces path atomically (its folder is made when missing).
func WriteFile(path string, data *Data) error {
	b, err := EncodeChecked(path, data)
	if err != nil {
		return err
	}
	if err := atomicfile.MkdirAllUmask(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, b, 0o644)
}

// EncodeChecked encodes data for path and checks that it reads back as the
// same data: what WriteFile writes, for a caller that replaces it together
// with another file.
func EncodeChecked(path string, data *Data) ([]byte, error) {
	b := data.Encode()
	back, err := Parse(path, b)
	if err != nil {
		return nil, fmt.Errorf("supportdata: the new data does not read back (not written): %w", err)
	}
	for _, p := range data.Products() {
		if !reflect.DeepEqual(back.Cycles(p), data.Cycles(p)) {
			return nil, fmt.Errorf("supportdata: product %s does not read back as fetched (not written)", p)
		}
	}
	return b, nil
}

func union(a, b []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range append(append([]string(nil), a...), b...) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}
