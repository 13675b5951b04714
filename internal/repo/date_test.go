package repo

import (
	"testing"
	"time"
)

// Publishes within one second must still get strictly increasing Dates, or
// If-Modified-Since (whole seconds) makes clients keep the older generation.
func TestNextDateMovesForward(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 500e6, time.UTC)
	first := nextDate(now, nil)
	if !first.Equal(now.Truncate(time.Second)) {
		t.Fatalf("first = %v", first)
	}
	live := &parsedRelease{date: first}
	second := nextDate(now, live)
	if !second.After(first) {
		t.Fatalf("same-second publish: %v not after %v", second, first)
	}
	// A clock that went backwards (NTP step) still moves the Date forward.
	if d := nextDate(now.Add(-time.Hour), &parsedRelease{date: second}); !d.After(second) {
		t.Fatalf("backwards clock: %v", d)
	}
	// Later publishes use the clock.
	if d := nextDate(now.Add(time.Minute), live); !d.Equal(now.Add(time.Minute).Truncate(time.Second)) {
		t.Fatalf("later publish: %v", d)
	}
	// The Date round-trips through the Release file as apt reads it.
	rel := releaseFile(ReleaseConfig{}, "s", second, []string{"amd64"}, []string{"main"}, nil)
	p, err := parseRelease(rel, "Release")
	if err != nil {
		t.Fatalf("parseRelease: %v\n%s", err, rel)
	}
	if !p.date.Equal(second) {
		t.Fatalf("parsed date %v, want %v", p.date, second)
	}
}
