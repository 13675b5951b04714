package compatdata

import (
	"regexp"
	"strings"
	"time"

	"github.com/updeb/updeb/internal/supportdata"
)

// TableStatus is one table's line of `updeb data status`.
type TableStatus struct {
	Table string `json:"table"`
	// Copy is where the table was read from: "bundled", "refreshed PATH",
	// "repository PATH".
	Copy    string   `json:"copy"`
	Sources []string `json:"sources"`
	// AsOf is when the rows were true of upstream (the fetch time of a
	// refresh, a snapshot's day); AgeDays counts whole days from it.
	AsOf    time.Time `json:"as_of"`
	AgeDays int       `json:"age_days"`
	// Rows counts upstream's rows (the end-of-life data: its products).
	Rows      int              `json:"rows"`
	Overrides []OverrideStatus `json:"overrides,omitempty"`
	// Stale is set past the allowed age (data: max-age-days:).
	Stale bool `json:"stale"`
}

// Status lists every table of the set, the end-of-life data first, with its
// copy, sources, date and age on now's day; a table older than maxAge (or
// without a date, or dated after the clock's today: written with a wrong
// clock, whatever day now is) is stale.
func (s *Set) Status(now time.Time, maxAge time.Duration) []TableStatus {
	age := func(t time.Time) (int, bool) {
		if t.IsZero() {
			return 0, true
		}
		return max(int(now.Sub(t).Hours()/24), 0), now.Sub(t) > maxAge || supportdata.AfterToday(t, time.Now())
	}
	days, stale := age(s.EOL.Data.AsOf)
	out := []TableStatus{{Table: EndOfLife, Copy: s.EOL.Name(), Sources: urlsIn(s.EOL.Data.Source), AsOf: s.EOL.Data.AsOf,
		AgeDays: days, Rows: len(s.EOL.Data.Products()), Stale: stale}}
	for _, name := range Names() {
		t := s.Tables.Table(name)
		days, stale := age(t.AsOf)
		out = append(out, TableStatus{Table: name, Copy: t.Copy, Sources: t.Sources, AsOf: t.AsOf, AgeDays: days,
			Rows: len(t.Rows), Overrides: overrideStatus(t), Stale: stale})
	}
	return out
}

// productURL is a line of a refreshed end-of-life header: "  PRODUCT: URL".
var productURL = regexp.MustCompile(`^\s+[a-z0-9][a-z0-9._-]*: (https?://\S+)$`)

// urlsIn are the URLs a refreshed end-of-life header says each product was
// fetched from; a bundled snapshot's header names none.
func urlsIn(header string) []string {
	out := []string{}
	for _, l := range strings.Split(header, "\n") {
		if m := productURL.FindStringSubmatch(l); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}
