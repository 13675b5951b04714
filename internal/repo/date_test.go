package repo

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"
)

func liveAt(date time.Time) *generation {
	return &generation{suite: "s", n: 7, release: &parsedRelease{date: date}}
}

// A generation's Date is never ahead of the clock, and always after the
// live generation's: a write in the same second waits for the next one.
func TestReleaseDateNeverAheadOfTheClock(t *testing.T) {
	r := Open(t.TempDir(), Options{Logger: slog.New(slog.DiscardHandler)})
	ctx := context.Background()

	first, err := r.releaseDate(ctx, nil)
	must(t, err)
	if first.After(time.Now()) || first.Nanosecond() != 0 {
		t.Fatalf("first Date %v: want the current whole second", first)
	}
	for i := range 3 { // same second as the live generation, three times over
		live := time.Now().UTC().Truncate(time.Second)
		got, err := r.releaseDate(ctx, liveAt(live))
		must(t, err)
		if now := time.Now(); !got.After(live) || got.After(now) {
			t.Fatalf("round %d: Date %v with the live one at %v and the clock at %v: want after the live one, not after the clock", i, got, live, now)
		}
	}

	// The live generation a second ahead (written by a clock that was set
	// back a little): wait for the clock rather than date ahead of it.
	ahead := time.Now().UTC().Truncate(time.Second).Add(time.Second)
	got, err := r.releaseDate(ctx, liveAt(ahead))
	must(t, err)
	if !got.After(ahead) || got.After(time.Now()) {
		t.Fatalf("live ahead by a second: Date %v, want after %v and not after the clock", got, ahead)
	}

	// Far ahead (the clock was set back by an hour): refuse at once.
	start := time.Now()
	if _, err := r.releaseDate(ctx, liveAt(time.Now().Add(time.Hour))); !errors.Is(err, ErrClock) || time.Since(start) > time.Second {
		t.Fatalf("live an hour ahead: %v after %v, want ErrClock at once", err, time.Since(start))
	}

	// A cancelled write stops waiting.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := r.releaseDate(cctx, liveAt(time.Now().Add(5*time.Second))); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

// The Date round-trips through the Release file as apt reads it.
func TestReleaseDateRoundTrip(t *testing.T) {
	date := time.Date(2026, 11, 21, 12, 0, 1, 0, time.UTC)
	set := defaultSettings("s")
	set.Architectures, set.Components, set.ValidFor = []string{"amd64"}, []string{"main"}, Duration(168*time.Hour)
	p, err := parseRelease(releaseFile(set, false, date, nil), "Release")
	must(t, err)
	if !p.date.Equal(date) || !p.validUntil.Equal(date.Add(168*time.Hour)) {
		t.Fatalf("parsed Date %v, Valid-Until %v", p.date, p.validUntil)
	}
}

// A nil Logger discards, as in every library of updeb (never slog.Default,
// which would print around the command's own logger).
func TestNilLoggerDiscards(t *testing.T) {
	r := Open(t.TempDir(), Options{})
	if r.opts.Logger.Enabled(context.Background(), slog.LevelError) {
		t.Error("a nil Logger logs")
	}
}
