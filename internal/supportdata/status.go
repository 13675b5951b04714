package supportdata

import (
	"fmt"
	"time"
)

// State is a cycle's support phase on a given day.
type State int

const (
	// Supported: active support (bug and security fixes).
	Supported State = iota
	// SecurityOnly: past the end of active support, security fixes until EOL.
	SecurityOnly
	// EndOfLife: no more fixes.
	EndOfLife
)

func (s State) String() string {
	switch s {
	case Supported:
		return "supported"
	case SecurityOnly:
		return "security-only"
	case EndOfLife:
		return "eol"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// Status is a cycle's state on a day, with the date that goes with it.
type Status struct {
	State State
	// Date depends on State: for Supported, the next boundary (EOAS, else EOL,
	// the earlier of the two when an answer has active support end after the
	// end of life; zero when none is scheduled); for SecurityOnly, the EOL date (zero when not
	// scheduled); for EndOfLife, the day it became end-of-life (zero when
	// upstream recorded no date).
	Date time.Time
}

// String reads "supported until 2026-12-28", "security-only until 2027-02-28",
// "eol since 2025-11-11", or without the date part when Date is zero.
func (s Status) String() string {
	if s.Date.IsZero() {
		return s.State.String()
	}
	word := "until"
	if s.State == EndOfLife {
		word = "since"
	}
	return s.State.String() + " " + word + " " + s.Date.Format(time.DateOnly)
}

// Status returns the cycle's state on the calendar day of now (in UTC).
// Each boundary takes effect at 00:00 UTC of its date.
func (c Cycle) Status(now time.Time) Status {
	y, m, d := now.UTC().Date()
	day := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	reached := func(t time.Time) bool { return !t.IsZero() && !day.Before(t) }
	switch {
	case c.EOLPassed || reached(c.EOL):
		return Status{State: EndOfLife, Date: c.EOL}
	case c.EOASPassed || reached(c.EOAS):
		return Status{State: SecurityOnly, Date: c.EOL}
	case !c.EOAS.IsZero() && (c.EOL.IsZero() || c.EOAS.Before(c.EOL)):
		return Status{State: Supported, Date: c.EOAS}
	default:
		return Status{State: Supported, Date: c.EOL}
	}
}
