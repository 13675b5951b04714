// Data files' headers: what the bundled data files (data/eol.yaml here and
// internal/compat/data) share: their header comment names the source and snapshot.

package supportdata

import (
	"fmt"
	"strings"
	"time"
)

// Header returns the leading comment block of a YAML file, with each line's
// "#" and one following space removed, and outer blank lines trimmed.
func Header(b []byte) string {
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		s := strings.TrimSpace(l)
		if !strings.HasPrefix(s, "#") {
			break
		}
		lines = append(lines, strings.TrimPrefix(strings.TrimPrefix(s, "#"), " "))
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// AsOfLabel starts the header line that dates a data file: "As of: 2026-08-22"
// (a snapshot's day) or "As of: 2026-11-24T10:11:12Z" (when a refresh fetched
// it). The age a command reports and warns about is counted from it.
const AsOfLabel = "As of:"

// AsOf returns the date of the header's "As of:" line (see AsOfLabel); ok is
// false when there is none. A line that is there but does not hold a day or
// an RFC 3339 time is an error: the file's age would be unknown.
func AsOf(header string) (t time.Time, ok bool, err error) {
	for _, l := range strings.Split(header, "\n") {
		v, found := strings.CutPrefix(strings.TrimSpace(l), AsOfLabel)
		if !found {
			continue
		}
		t, err := ParseAsOf(v)
		if err != nil {
			return time.Time{}, true, fmt.Errorf("header line %q: want %s YYYY-MM-DD or an RFC 3339 time", strings.TrimSpace(l), AsOfLabel)
		}
		return t, true, nil
	}
	return time.Time{}, false, nil
}

// ParseAsOf reads a data file's date: a day (YYYY-MM-DD, a snapshot's) or
// an RFC 3339 time (when a refresh fetched it), in UTC.
func ParseAsOf(v string) (time.Time, error) {
	v = strings.TrimSpace(v)
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q is neither a day (YYYY-MM-DD) nor an RFC 3339 time", v)
}

// FormatAsOf writes t as ParseAsOf reads it back: a day when it is
// midnight UTC, else an RFC 3339 time.
func FormatAsOf(t time.Time) string {
	t = t.UTC()
	if t.Equal(t.Truncate(24 * time.Hour)) {
		return t.Format(time.DateOnly)
	}
	return t.Format(time.RFC3339)
}
