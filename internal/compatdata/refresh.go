package compatdata

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/updeb/updeb/internal/fetch"
	"github.com/updeb/updeb/internal/supportdata"
	"github.com/updeb/updeb/internal/yamlfile"
	"github.com/updeb/updeb/pkg/atomicfile"
	"github.com/updeb/updeb/pkg/lockfile"
	"github.com/updeb/updeb/pkg/plural"
)

// ErrSource is wrapped by every error about an upstream answer that cannot
// be used: not the file (an HTML page, empty), too large, a table that is
// missing or malformed, a row that does not hold together or names a minor
// that does not exist. The copy in use is kept.
var ErrSource = errors.New("compatdata: unusable answer")

// SourceError is an unusable answer: which table, from which URL, and why.
type SourceError struct {
	Table, URL string
	Err        error
}

func (e *SourceError) Error() string { return fmt.Sprintf("%s: %s: %v", e.Table, e.URL, e.Err) }

// Unwrap gives ErrSource and the cause.
func (e *SourceError) Unwrap() []error { return []error{ErrSource, e.Err} }

// ErrDropped is wrapped when a table's new rows lack rows the copy in use
// has that are not end-of-life: upstream's tables drop a row only when its
// minors go out of support, so this is a broken mirror or a partial answer.
var ErrDropped = errors.New("compatdata: rows missing from the new data")

// DroppedError lists, per table, the keys of the rows the new data lacks.
type DroppedError struct {
	Dropped map[string][]string
}

func (e *DroppedError) Error() string {
	var parts []string
	for _, t := range slices.Sorted(maps.Keys(e.Dropped)) {
		parts = append(parts, t+" "+strings.Join(e.Dropped[t], ", "))
	}
	return "the new data lacks rows the copy in use has (and whose minors are still supported): " + strings.Join(parts, "; ")
}

func (e *DroppedError) Unwrap() error { return ErrDropped }

// RefreshError is a refresh that refreshed no table it was asked for:
// every one failed (Err: every problem, each naming its table), and nothing
// was written. Failed are those tables, in the order of Names then
// EndOfLife; Kept says, for each, the copy in use kept and how old it is.
type RefreshError struct {
	Failed []string
	Kept   []KeptTable
	Err    error
}

func (e *RefreshError) Error() string {
	return "no table refreshed, nothing written:\n" + keptLines(e.Kept)
}

// Unwrap gives the problems, joined.
func (e *RefreshError) Unwrap() error { return e.Err }

// KeptTable is a table whose refresh failed while others refreshed (or
// none did: RefreshError): its copy in use stays, as it was, and so does
// the provenance that copy records (its sources and date).
type KeptTable struct {
	Table string `json:"table"`
	// URL is the URL whose answer failed, "" when no one URL's (rows
	// missing from the table, an end-of-life answer: Error names it).
	URL   string `json:"url,omitempty"`
	Error string `json:"error"`
	// Copy is the copy kept ("bundled", "refreshed PATH", "repository
	// PATH"), AsOf its date and AgeDays its age on the refresh's day.
	Copy    string    `json:"copy"`
	AsOf    time.Time `json:"as_of"`
	AgeDays int       `json:"age_days"`
	// Stale is set when the copy kept is older than RefreshOptions.MaxAge:
	// commands still use it (it is the best data there is) and warn on
	// every run, as they do of any stale table.
	Stale bool `json:"stale"`
	// Err is the failure: ErrSource, ErrDropped, supportdata's, a
	// download's.
	Err error `json:"-"`
}

// String is the table's line: the failure, then the copy kept and its age.
func (k KeptTable) String() string {
	stale := ""
	if k.Stale {
		stale = "; older than data: max-age-days: allows: commands warn about it until a refresh of it succeeds"
	}
	return fmt.Sprintf("%s [kept the %s copy, as of %s, %s old%s]", k.Error, k.Copy, k.AsOf.UTC().Format(time.DateOnly), plural.Days(k.AgeDays), stale)
}

// keptLines are the lines of kept tables, each indented.
func keptLines(kept []KeptTable) string {
	lines := make([]string, len(kept))
	for i, k := range kept {
		lines[i] = "  " + strings.ReplaceAll(k.String(), "\n", "\n    ")
	}
	return strings.Join(lines, "\n")
}

// KeptError is the tables a refresh that wrote the others kept (nil when it
// kept none): not a failure of the refresh, which wrote what it could, but
// of each kept table's upstream, which someone must look at. It wraps each
// table's failure (errors.Is finds ErrSource, ErrDropped...).
func (r *Result) KeptError() error {
	if len(r.Kept) == 0 {
		return nil
	}
	return &keptError{r.Kept}
}

type keptError struct{ kept []KeptTable }

func (e *keptError) Error() string {
	return fmt.Sprintf("%s not refreshed (the others were, and are written):\n%s", plural.Count(len(e.kept), "table", "tables"), keptLines(e.kept))
}

func (e *keptError) Unwrap() []error {
	out := make([]error, len(e.kept))
	for i, k := range e.kept {
		out[i] = k.Err
	}
	return out
}

// ErrUnknownTable is wrapped when RefreshOptions.Tables names no table.
var ErrUnknownTable = errors.New("compatdata: unknown table")

// RefreshOptions say what Refresh fetches and where it writes.
type RefreshOptions struct {
	// Client fetches the documents (*fetch.Fetcher: the proxy, mirrors,
	// timeouts and retries of the config).
	Client supportdata.Getter
	// Sources are the URLs of a table (the config's data: sources:); a
	// table not in it is fetched from DefaultSources.
	Sources map[string][]string
	// ProductURL and Products are the end-of-life data's (see
	// supportdata.RefreshOptions).
	ProductURL func(product string) string
	Products   []string
	// Tables are the tables to refresh (names of Names, and EndOfLife); nil
	// or empty: every one. The others are kept as they are.
	Tables []string
	// StateDir is the state folder: the refreshed copies are
	// STATE/support/compat.yaml (File) and STATE/support/eol.yaml.
	StateDir string
	// Write, when set, is a recipes repository's data file to write instead
	// of the state folder's copies: every table and the end-of-life data in
	// one file, its overrides kept. The rows are compared with that file's
	// when it exists, else with the copies in use.
	Write string
	Now   time.Time
	// AllowDropped accepts new data without rows (or end-of-life cycles) the
	// copy in use has; the new file's header records them.
	AllowDropped bool
	// MaxAnswer bounds one document in bytes (0: supportdata.DefaultMaxAnswer).
	MaxAnswer int64
	// MaxAge is the age past which a table is stale (data: max-age-days:):
	// a kept table older says so (0: none is).
	MaxAge time.Duration
}

// Result says what Refresh did.
type Result struct {
	// Written are the files replaced, in the order written.
	Written []string
	AsOf    time.Time
	// EndOfLife is the end-of-life data's part, nil when not refreshed.
	EndOfLife *supportdata.Result
	Tables    []TableResult
	// Kept are the tables (and the end-of-life data) whose refresh failed,
	// each keeping its copy in use, in the order of Names then EndOfLife:
	// KeptError says so.
	Kept []KeptTable
}

// TableResult is one table's part of a refresh.
type TableResult struct {
	Table string   `json:"table"`
	URLs  []string `json:"urls"`
	Rows  int      `json:"rows"`
	// Replaced is the copy the rows replaced ("bundled", "refreshed PATH",
	// "repository PATH").
	Replaced string   `json:"replaced"`
	Added    []string `json:"added,omitempty"`   // rows the copy in use lacked
	Changed  []string `json:"changed,omitempty"` // "old -> new"
	// Retired are rows upstream no longer has whose minors are end-of-life;
	// Dropped are rows accepted as gone with AllowDropped.
	Retired   []string         `json:"retired,omitempty"`
	Dropped   []string         `json:"dropped,omitempty"`
	Overrides []OverrideStatus `json:"overrides,omitempty"`
}

// OverrideStatus is an override and how upstream's row of its key compares.
type OverrideStatus struct {
	Key    string `json:"key"`
	Row    string `json:"row"`
	Reason string `json:"reason"`
	// Upstream is upstream's row of the key ("" when upstream has none).
	Upstream string `json:"upstream,omitempty"`
	// Agrees is set when upstream's row is the override's: it can go.
	Agrees bool `json:"agrees"`
}

func overrideStatus(t *Table) []OverrideStatus {
	var out []OverrideStatus
	for _, o := range t.Overrides {
		s := OverrideStatus{Key: o.Row.Key(), Row: o.Row.String(), Reason: o.Reason}
		for _, r := range t.Rows {
			if r.Key() == s.Key {
				s.Upstream, s.Agrees = r.String(), r.String() == s.Row
			}
		}
		out = append(out, s)
	}
	return out
}

// Refresh fetches every table (and the end-of-life data) from upstream
// through o.Client, parses each answer strictly, checks that it is plausible
// (rows only for Kubernetes minors the end-of-life data knows, and for
// cycles of the product it knows, bounds in order, no row of the copy in use
// missing unless its minors are end-of-life or AllowDropped), and writes the
// new copies atomically: the state folder's (STATE/support/compat.yaml and
// eol.yaml), or the repository's data file o.Write.
//
// Table by table: a table whose answer is wrong (unreachable, unusable,
// rows missing) keeps its copy in use, rows, sources and date as they were,
// and the others are written (Result.Kept, KeptError), so that one
// upstream's page not written yet never holds back the others. Only when no
// table refreshed is it an error (RefreshError: nothing written), and an
// error that would fail every fetch the same way (the proxy, offline, a
// cancel) stops the refresh at once.
func Refresh(ctx context.Context, o RefreshOptions) (*Result, error) {
	if o.StateDir == "" && o.Write == "" {
		return nil, errors.New("compatdata: no state folder and no data file to write")
	}
	selected, err := selectTables(o.Tables)
	if err != nil {
		return nil, err
	}
	if o.Write == "" {
		l, err := lockState(ctx, o.StateDir)
		if err != nil {
			return nil, err
		}
		defer l.Unlock()
	}
	cur, original, err := currentCopies(o)
	if err != nil {
		return nil, err
	}
	bundledEOL, err := supportdata.Bundled()
	if err != nil {
		return nil, err
	}
	now := o.Now.UTC().Truncate(time.Second)
	res := &Result{AsOf: now}
	kept := map[string]KeptTable{}
	keep := func(name, copy string, asOf time.Time, err error) {
		k := KeptTable{Table: name, URL: failedURL(err), Error: err.Error(), Copy: copy, AsOf: asOf, Err: err}
		k.AgeDays = max(int(now.Sub(asOf).Hours()/24), 0)
		k.Stale = o.MaxAge > 0 && (asOf.IsZero() || now.Sub(asOf) > o.MaxAge)
		kept[name] = k
	}
	eol := cur.EOL.Data
	if selected[EndOfLife] {
		eo := supportdata.RefreshOptions{Client: o.Client, ProductURL: o.ProductURL, Products: o.Products, Now: o.Now,
			AllowDropped: o.AllowDropped, MaxAnswer: o.MaxAnswer}
		r, data, err := supportdata.Fetch(ctx, eo, cur.EOL)
		if err == nil {
			// endoflife.date's Istio ranges, which compat prefers to
			// Istio's table, are checked against the new data, as the
			// rows of that table are; refused, the new data is kept out,
			// and the tables are checked against the copy in use.
			f := &refresher{o: o, now: now, eol: data, known: knownKubernetes(data, bundledEOL)}
			if bad := f.istioRanges(r); len(bad) > 0 {
				err = errors.Join(bad...)
			}
		}
		switch {
		case err != nil && fatal(err):
			return nil, err
		case err != nil:
			keep(EndOfLife, cur.EOL.Name(), cur.EOL.Data.AsOf, err)
		default:
			res.EndOfLife, eol = r, data
		}
	}
	f := &refresher{o: o, now: now, eol: eol, known: knownKubernetes(eol, bundledEOL)}
	next := &Tables{tables: map[string]*Table{}}
	dropped := map[string][]string{}
	for _, s := range specs {
		old := cur.Tables.Table(s.name)
		var tb *Table
		var tr TableResult
		err := errNotSelected
		if selected[s.name] {
			tb, tr, err = f.table(ctx, s, old)
			if err == nil && len(tr.Dropped) > 0 && !o.AllowDropped {
				err = &DroppedError{Dropped: map[string][]string{s.name: tr.Dropped}}
			}
			switch {
			case err != nil && fatal(err):
				return nil, err
			case err != nil:
				keep(s.name, old.Copy, old.AsOf, err)
			}
		}
		if err != nil {
			// Not refreshed: the copy in use is carried as it was. The
			// state folder's copy holds the tables refreshed, each with
			// its own date; the bundled ones stay in the binary, where a
			// newer updeb's newer snapshot replaces them.
			if o.Write != "" || old.Copy != bundledCopy {
				next.tables[s.name] = old
			}
			continue
		}
		if len(tr.Dropped) > 0 {
			dropped[s.name] = tr.Dropped
		}
		next.tables[s.name] = tb
		res.Tables = append(res.Tables, tr)
	}
	for _, n := range append(Names(), EndOfLife) {
		if k, ok := kept[n]; ok {
			res.Kept = append(res.Kept, k)
		}
	}
	if len(res.Tables) == 0 && res.EndOfLife == nil {
		e := &RefreshError{Kept: res.Kept}
		var errs []error
		for _, k := range res.Kept {
			e.Failed, errs = append(e.Failed, k.Table), append(errs, k.Err)
		}
		e.Err = errors.Join(errs...)
		return nil, e
	}
	if err := write(ctx, o, original, next, eol, res, dropped); err != nil {
		return nil, err
	}
	return res, nil
}

// errNotSelected marks a table a refresh of others (Tables) leaves as it is.
var errNotSelected = errors.New("not selected")

// failedURL is the URL err says failed, "" when none.
func failedURL(err error) string {
	if e, ok := errors.AsType[*SourceError](err); ok {
		return e.URL
	}
	if e, ok := errors.AsType[*fetch.NetworkError](err); ok {
		return e.URL
	}
	if e, ok := errors.AsType[*fetch.StatusError](err); ok {
		return e.URL
	}
	if e, ok := errors.AsType[*fetch.MissingError](err); ok {
		return e.URL
	}
	return ""
}

// fatal reports an error that would fail every other fetch the same way.
func fatal(err error) bool {
	return errors.Is(err, fetch.ErrProxyUnreachable) || errors.As(err, new(*fetch.OfflineError)) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) && !errors.As(err, new(*fetch.NetworkError))
}

// selectTables turns RefreshOptions.Tables into a set (every table when empty).
func selectTables(names []string) (map[string]bool, error) {
	all := append(Names(), EndOfLife)
	out := map[string]bool{}
	if len(names) == 0 {
		for _, n := range all {
			out[n] = true
		}
		return out, nil
	}
	for _, n := range names {
		if !slices.Contains(all, n) {
			return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknownTable, n, strings.Join(all, ", "))
		}
		out[n] = true
	}
	return out, nil
}

// currentCopies are the copies a refresh replaces: the repository's data
// file being written when it exists, else the copies in use.
func currentCopies(o RefreshOptions) (*Set, []byte, error) {
	if o.Write != "" {
		b, err := yamlfile.ReadFile(o.Write, 0)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			// The file the user named cannot be read (a FIFO, a folder, no
			// permission): invalid input, as a file that does not parse. Its
			// cause is text only: confined.ErrRefused would make it a file
			// of a mirror or recipes folder that lies outside it (exit 1).
			return nil, nil, fmt.Errorf("%w: %v", ErrFile, err)
		default:
			bundled, err := Bundled()
			if err != nil {
				return nil, nil, err
			}
			set, _, err := loadRepository(o.Write, b, bundled, o.StateDir)
			return set, b, err
		}
	}
	set, _, err := Load(o.StateDir, "")
	return set, nil, err
}

// refresher fetches and checks the tables of one refresh.
type refresher struct {
	o     RefreshOptions
	now   time.Time
	eol   *supportdata.Data
	known minor // the newest Kubernetes minor the end-of-life data knows
}

// knownKubernetes is the newest Kubernetes minor of the end-of-life data
// (fresh or bundled, the newer). Here as in lookups (Data.Cycle) a cycle is
// the MAJOR.MINOR of its name: endoflife.date naming 1.37 "1.37.0" is 1.37.
func knownKubernetes(datas ...*supportdata.Data) minor {
	var newest minor
	for _, d := range datas {
		for _, c := range d.Cycles("kubernetes") {
			if m, ok := minorOfVersion(c.Name); ok && newest.less(m) {
				newest = m
			}
		}
	}
	return newest
}

// fetched is one document's rows.
type fetched struct {
	url  string
	rows []Row
}

// table refreshes one table: fetch every document, parse, merge, check,
// compare with old.
func (f *refresher) table(ctx context.Context, s *spec, old *Table) (*Table, TableResult, error) {
	tr := TableResult{Table: s.name, Replaced: old.Copy}
	docs, err := f.documents(s)
	if err != nil {
		return nil, tr, err
	}
	limit := f.o.MaxAnswer
	if limit <= 0 {
		limit = supportdata.DefaultMaxAnswer
	}
	var got []fetched
	for _, d := range docs {
		body, err := f.o.Client.Get(ctx, d.url, nil, limit)
		if se, ok := errors.AsType[*fetch.SizeError](err); ok {
			return nil, tr, &SourceError{s.name, d.url, fmt.Errorf("the answer is larger than %d bytes: refused", se.Limit)}
		}
		if st, ok := errors.AsType[*fetch.StatusError](err); ok && (st.StatusCode == http.StatusNotFound || st.StatusCode == http.StatusGone) {
			// The server answered, and has no file there: upstream moved
			// or renamed it (helm-www's .md became .mdx), or has not
			// published a new minor's page yet. An unusable answer of this
			// table, as an HTML page is; the fix is the table's URL.
			if st.URL != d.url {
				// Another URL answered: a mirror (mirrors:) that lacks
				// the file, or where a redirect led.
				return nil, tr, &SourceError{s.name, d.url, fmt.Errorf("%v: the mirror (mirrors:) lacks the file, or upstream's redirect leads nowhere: bring the file to the mirror, or name where it is now in the config's data: sources, under %s", st, s.name)}
			}
			where := ""
			if d.minor != "" {
				where = fmt.Sprintf(" (%s %s; %s in the URL stands for each minor)", s.perMinor, d.minor, MinorPlaceholder)
			}
			return nil, tr, &SourceError{s.name, d.url, fmt.Errorf("answered %q: upstream moved or removed the file (or has not published it yet)%s: find where it is now and name it in the config's data: sources: %s:, or wait until upstream publishes it (the copy in use is kept meanwhile)", st.Status, where, s.name)}
		}
		if err != nil {
			return nil, tr, fmt.Errorf("%s: %w", s.name, err)
		}
		d.body = body
		rows, err := s.parse(d)
		if err != nil {
			return nil, tr, &SourceError{s.name, d.url, err}
		}
		got = append(got, fetched{d.url, rows})
		tr.URLs = append(tr.URLs, d.url)
	}
	rows, err := f.merge(s, got)
	if err != nil {
		return nil, tr, err
	}
	if s.perMinor == "kubernetes" {
		rows = f.keepOlder(s, old, rows)
	}
	tb := &Table{Name: s.name, Sources: tr.URLs, AsOf: f.now, Rows: rows, Overrides: old.Overrides}
	tb.seal()
	tr.Rows = len(rows)
	f.compare(s, old, tb, &tr)
	tr.Overrides = overrideStatus(tb)
	return tb, tr, nil
}

// keepOlder adds to rows, fetched from the newest Kubernetes minor's
// branch, the rows of old for minors older than every minor that branch
// lists and not end-of-life: kubeadm's map covers the newest minors only, so
// for a few weeks after a new minor's release the branch no longer lists
// the oldest minor still supported (1.33 when 1.36 is out), which the copy
// in use has from an older branch. That row is not dropped upstream: it
// stays until its minor is end-of-life, and is then retired.
func (f *refresher) keepOlder(s *spec, old *Table, rows []Row) []Row {
	var oldest minor
	for i, r := range rows {
		for _, m := range r.kubernetes() {
			if i == 0 || m.less(oldest) {
				oldest = m
			}
		}
	}
	for _, r := range old.Rows {
		ms := r.kubernetes()
		newer := slices.ContainsFunc(ms, func(m minor) bool { return !m.less(oldest) })
		if len(rows) == 0 || len(ms) == 0 || newer || f.retired(s, r) {
			continue
		}
		rows = append(rows, r)
	}
	return rows
}

// documents expands the table's URLs: a URL with {minor} once per minor.
func (f *refresher) documents(s *spec) ([]document, error) {
	urls := f.o.Sources[s.name]
	if len(urls) == 0 {
		urls = s.sources
	}
	var out []document
	for _, u := range urls {
		if !strings.Contains(u, MinorPlaceholder) {
			out = append(out, document{url: u})
			continue
		}
		minors, err := f.minors(s)
		if err != nil {
			return nil, &SourceError{s.name, u, err}
		}
		for _, m := range minors {
			out = append(out, document{url: strings.ReplaceAll(u, MinorPlaceholder, m), minor: m})
		}
	}
	return out, nil
}

// minors are what {minor} stands for in the table's URLs: the newest
// Kubernetes minor released, or every cycle of the product released and not
// end-of-life today.
func (f *refresher) minors(s *spec) ([]string, error) {
	product := s.perMinor
	var out []string
	for _, c := range f.eol.Cycles(product) {
		if c.ReleaseDate.After(f.now) || c.Status(f.now).State == supportdata.EndOfLife {
			continue
		}
		if m, ok := minorOfVersion(c.Name); ok {
			out = append(out, m.String())
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no supported %s release cycle in the end-of-life data to fetch %s for (data: products:)", product, s.what)
	}
	if product == "kubernetes" {
		newest, _ := parseMinor(out[0])
		for _, n := range out {
			if m, _ := parseMinor(n); newest.less(m) {
				newest = m
			}
		}
		return []string{newest.String()}, nil
	}
	return out, nil
}

// merge joins the rows of every document (the same row from two is fine,
// two different rows of one key are not) and checks each is plausible.
func (f *refresher) merge(s *spec, got []fetched) ([]Row, error) {
	byKey := map[string]fetched{}
	var out []Row
	for _, g := range got {
		for _, r := range g.rows {
			if err := f.plausible(s, r); err != nil {
				return nil, &SourceError{s.name, g.url, err}
			}
			if prev, ok := byKey[r.Key()]; ok {
				i := slices.IndexFunc(prev.rows, func(p Row) bool { return p.Key() == r.Key() })
				switch {
				case prev.url == g.url && prev.rows[i].String() != r.String():
					return nil, &SourceError{s.name, g.url, fmt.Errorf("%s %s given twice: %q and %q", s.name, r.Key(), prev.rows[i], r)}
				case prev.url == g.url:
					return nil, &SourceError{s.name, g.url, fmt.Errorf("%q given twice", r)}
				case prev.rows[i].String() != r.String():
					return nil, &SourceError{s.name, g.url, fmt.Errorf("%q, but %s says %q", r, prev.url, prev.rows[i])}
				}
				continue
			}
			byKey[r.Key()] = g
			out = append(out, r)
		}
	}
	if len(out) > MaxRows {
		return nil, &SourceError{s.name, got[0].url, fmt.Errorf("%d rows, more than the %d updeb accepts", len(out), MaxRows)}
	}
	return out, nil
}

// plausible checks that a row names only minors that exist: Kubernetes
// minors up to the newest the end-of-life data knows, and for the tables of
// a product (and containerd's and etcd's versions) cycles it knows, or the
// next minor, upcoming.
func (f *refresher) plausible(s *spec, r Row) error {
	for _, m := range r.kubernetes() {
		if m.major != 1 {
			return fmt.Errorf("%q names Kubernetes %s: the tables hold Kubernetes 1.x minors only (kubeadm's skew rules, the tables' keys), so a Kubernetes %d needs an updeb that knows its rules", r, m, m.major)
		}
		if f.known.less(m) {
			return fmt.Errorf("%q names Kubernetes %s, which the end-of-life data does not know (newest: %s)", r, m, f.known)
		}
	}
	// The next minor of the newest cycle the data knows is upcoming, not
	// made up: upstream documents it before its release (Istio's table
	// has the row of its next minor weeks ahead), endoflife.date once it
	// is out.
	check := func(product, version string) error {
		v, ok := minorOfVersion(version)
		newest, known := f.newestCycle(product)
		if ok && known && newest.less(v) && v != (minor{newest.major, newest.minor + 1}) {
			return fmt.Errorf("%q names %s %s, which the end-of-life data does not know (newest: %s)", r, product, v, newest)
		}
		return nil
	}
	if s.product != "" {
		if err := check(s.product, r.Key()); err != nil {
			return err
		}
	}
	switch row := r.(type) {
	case ContainerdRow:
		for _, c := range row.Containerd {
			if err := check("containerd", strings.TrimSuffix(c, "+")); err != nil {
				return err
			}
		}
	case KubeadmEtcdRow:
		for _, e := range []string{row.Etcd, row.MinExternal} {
			if err := check("etcd", e); err != nil {
				return err
			}
		}
	}
	return nil
}

// istioRanges checks the Kubernetes range the new end-of-life data records
// for each Istio cycle (supportedKubernetesVersions, "1.32 - 1.36"), which
// compat prefers to Istio's own table, as a row of that table: a range of
// Kubernetes minors the data knows, its bounds in order.
func (f *refresher) istioRanges(res *supportdata.Result) []error {
	url := ""
	for _, p := range res.Products {
		if p.Product == "istio" {
			url = p.URL
		}
	}
	var errs []error
	for _, c := range f.eol.Cycles("istio") {
		if c.SupportedKubernetes == "" {
			continue
		}
		lo, hi, ok := strings.Cut(c.SupportedKubernetes, "-")
		row := IstioRow{Istio: c.Name, KubernetesRange: KubernetesRange{KubernetesMin: strings.TrimSpace(lo), KubernetesMax: strings.TrimSpace(hi)}}
		_, okLo := parseMinor(row.KubernetesMin)
		_, okHi := parseMinor(row.KubernetesMax)
		err := row.check()
		switch {
		case !ok || !okLo || !okHi:
			err = errors.New("not a range MAJOR.MINOR - MAJOR.MINOR")
		case err == nil:
			err = f.plausible(specOf(Istio), row)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%w: %s: cycle %q: supportedKubernetesVersions %q: %v", supportdata.ErrAPI, url, c.Name, c.SupportedKubernetes, err))
		}
	}
	return errs
}

// newestCycle is the newest cycle of product in the end-of-life data.
func (f *refresher) newestCycle(product string) (minor, bool) {
	var newest minor
	found := false
	for _, c := range f.eol.Cycles(product) {
		if m, ok := minorOfVersion(c.Name); ok && (!found || newest.less(m)) {
			newest, found = m, true
		}
	}
	return newest, found
}

// compare fills in what changed between old and the new table: rows added,
// changed, retired (gone, their minors end-of-life) and dropped.
func (f *refresher) compare(s *spec, old, tb *Table, tr *TableResult) {
	fresh := map[string]Row{}
	for _, r := range tb.Rows {
		fresh[r.Key()] = r
	}
	was := map[string]bool{}
	for _, r := range old.Rows {
		was[r.Key()] = true
		n, ok := fresh[r.Key()]
		switch {
		case ok && n.String() != r.String():
			tr.Changed = append(tr.Changed, r.String()+" -> "+n.String())
		case !ok && f.retired(s, r):
			tr.Retired = append(tr.Retired, r.Key())
		case !ok:
			tr.Dropped = append(tr.Dropped, r.Key())
		}
	}
	for _, r := range tb.Rows {
		if !was[r.Key()] {
			tr.Added = append(tr.Added, r.Key())
		}
	}
}

// retired reports a row whose every Kubernetes minor is end-of-life today,
// or whose product cycle is.
func (f *refresher) retired(s *spec, r Row) bool {
	if s.product != "" {
		if c, ok := f.eol.Cycle(s.product, r.Key()); ok && c.Status(f.now).State == supportdata.EndOfLife {
			return true
		}
	}
	ms := r.kubernetes()
	if len(ms) == 0 {
		return false
	}
	newest := ms[0]
	for _, m := range ms {
		if newest.less(m) {
			newest = m
		}
	}
	if _, open := r.(CRIToolsRow); open && len(ms) == 1 && r.(CRIToolsRow).KubernetesMax == "" {
		return false
	}
	c, ok := f.eol.Cycle("kubernetes", newest.String())
	if !ok {
		oldest, found := f.oldestKubernetes()
		return found && newest.less(oldest)
	}
	return c.Status(f.now).State == supportdata.EndOfLife
}

// oldestKubernetes is the oldest Kubernetes minor of the end-of-life data:
// an older one is long gone.
func (f *refresher) oldestKubernetes() (minor, bool) {
	var oldest minor
	found := false
	for _, c := range f.eol.Cycles("kubernetes") {
		if m, ok := minorOfVersion(c.Name); ok && (!found || m.less(oldest)) {
			oldest, found = m, true
		}
	}
	return oldest, found
}

// write encodes the new copies, checks they read back as made, and replaces
// the files atomically. The repository's data file (o.Write), which the
// refresh read as original (nil: none yet), is replaced as every file of
// the recipes repository is (yamlfile.Rewrite): read back from disk, and only
// while it still holds original, so that an edit made while the refresh ran
// (an override added) is never lost, and never through a symlink.
func write(ctx context.Context, o RefreshOptions, original []byte, next *Tables, eol *supportdata.Data, res *Result, dropped map[string][]string) error {
	var notes []string
	for _, t := range slices.Sorted(maps.Keys(dropped)) {
		notes = append(notes, fmt.Sprintf("Dropped (accepted with --allow-dropped): %s %s", t, strings.Join(dropped[t], ", ")))
	}
	if len(res.Kept) > 0 {
		// Their rows, sources and as_of are the copy in use's, not this
		// refresh's.
		var names []string
		for _, k := range res.Kept {
			names = append(names, k.Table)
		}
		notes = append(notes, "Not refreshed (the refresh of each failed; each keeps its copy in use, sources and as_of): "+strings.Join(names, ", "))
	}
	asOf := supportdata.AsOfLabel + " " + res.AsOf.Format(time.RFC3339)
	if o.Write != "" {
		next.EOL = eol
		next.Source = strings.Join(append(append([]string{
			"Compatibility tables and end-of-life data this repository relies on: updeb compat, plan and outdated read",
			"them from here, so that every machine gives the same answer for the same commit. Written by",
			"'updeb data refresh --write " + filepath.Base(o.Write) + "': review a change like any recipe change.",
			"Do not edit rows: (the next refresh replaces them). To correct one, add a row of the same key under its",
			"table's override: with a reason: saying why; the refresh keeps it and reports it.",
		}, notes...), asOf), "\n")
		b, err := encodeChecked(o.Write, next)
		if err != nil {
			return err
		}
		if original == nil {
			// A new file's folder is made, as the state folder is: its lock
			// (yamlfile) is taken on that folder.
			if err := atomicfile.MkdirAllUmask(filepath.Dir(o.Write), 0o755); err != nil {
				return err
			}
			err = yamlfile.Create(ctx, o.Write, b, nil, 0o644, nil)
		} else {
			err = yamlfile.Rewrite(ctx, o.Write, original, b, nil, 0)
		}
		if err != nil {
			return err
		}
		res.Written = append(res.Written, o.Write)
		if res.EndOfLife != nil {
			res.EndOfLife.Path = o.Write
		}
		return nil
	}
	var files []newFile
	path := filepath.Join(o.StateDir, File)
	if len(res.Tables) > 0 {
		next.Source = strings.Join(append(append([]string{
			"Compatibility tables fetched by updeb data refresh: each table names its sources and when it was fetched;",
			"a table not here, or older than the bundled copy's, is the bundled one.",
			"Replaced: " + replacedCopies(res.Tables) + ".",
		}, notes...), asOf), "\n")
		b, err := encodeChecked(path, next)
		if err != nil {
			return err
		}
		files = append(files, newFile{path, b})
	}
	if res.EndOfLife != nil {
		eolPath := filepath.Join(o.StateDir, supportdata.File)
		b, err := supportdata.EncodeChecked(eolPath, eol)
		if err != nil {
			return err
		}
		files = append(files, newFile{eolPath, b})
		res.EndOfLife.Path = eolPath
	}
	// Under the state folder's lock (lockState), temporary copies left
	// there are a killed refresh's, and go.
	atomicfile.RemoveLeftovers(filepath.Dir(path), filepath.Base(File), filepath.Base(supportdata.File))
	if err := replaceTogether(files); err != nil {
		return err
	}
	for _, f := range files {
		res.Written = append(res.Written, f.path)
	}
	return nil
}

// lockState takes the lock on the state folder's copies (creating their
// folder), which a refresh holds from reading them to replacing them: two
// at once could leave the tables of one beside the end-of-life data of the
// other, or the second write back the copy of a table it read before the
// first replaced it (two refreshes of different tables). The second waits,
// then starts from what the first wrote.
func lockState(ctx context.Context, stateDir string) (*lockfile.Lock, error) {
	dir := filepath.Dir(filepath.Join(stateDir, File))
	if err := atomicfile.MkdirAllUmask(dir, 0o755); err != nil {
		return nil, err
	}
	return lockfile.AcquireDir(ctx, dir, 100*time.Millisecond)
}

// newFile is one file a refresh replaces, and its new content.
type newFile struct {
	path string
	data []byte
}

// replaceTogether replaces the state folder's copies as nearly together as
// two files can be: each new copy is written to its temporary file and
// synced, and a target that is a folder (which no rename can replace) is
// refused, before the first rename; so a failure there leaves every copy as
// it was. What remains is the moment between the renames: a crash (kill -9,
// power) or an I/O error there leaves the tables new and the end-of-life
// data old, which the next refresh corrects; the error says so.
func replaceTogether(files []newFile) error {
	var temps []*atomicfile.File
	defer func() {
		for _, t := range temps {
			t.Abort()
		}
	}()
	for _, f := range files {
		if fi, err := os.Lstat(f.path); err == nil && fi.IsDir() {
			return fmt.Errorf("compatdata: %s is a folder, not a file: remove it, then refresh again (nothing written)", f.path)
		}
		t, err := atomicfile.Create(f.path, 0o644)
		if err != nil {
			return fmt.Errorf("compatdata: %w (nothing written)", err)
		}
		temps = append(temps, t)
		if _, err := t.Write(f.data); err != nil {
			return fmt.Errorf("compatdata: %s: %w (nothing written)", f.path, err)
		}
		if err := t.Sync(); err != nil {
			return fmt.Errorf("compatdata: %s: %w (nothing written)", f.path, err)
		}
	}
	for i, t := range temps {
		if err := t.Commit(); err != nil {
			if i == 0 {
				return fmt.Errorf("compatdata: %w (nothing written)", err)
			}
			return fmt.Errorf("compatdata: %w (%s was replaced, %s was not: run 'updeb data refresh' again)", err, files[0].path, files[i].path)
		}
	}
	return nil
}

// replacedCopies names the copies the tables refreshed replaced: "the
// bundled copy".
func replacedCopies(tables []TableResult) string {
	var names []string
	for _, t := range tables {
		if !slices.Contains(names, t.Replaced) {
			names = append(names, t.Replaced)
		}
	}
	return "the " + strings.Join(names, " and ") + " copy"
}

// encodeChecked encodes t and checks that it parses back to the same bytes.
func encodeChecked(path string, t *Tables) ([]byte, error) {
	b := Encode(t)
	back, err := Parse(path, b)
	if err != nil {
		return nil, fmt.Errorf("compatdata: the new data does not read back (not written): %w", err)
	}
	if again := Encode(back); !bytes.Equal(again, b) {
		return nil, fmt.Errorf("compatdata: the new data does not read back as made (not written): %s", path)
	}
	return b, nil
}
