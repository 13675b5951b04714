package main

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// An interrupt names where each stopped piece of work was, without the
// context's own words at the end of every line (builds stopped together
// give one joined error per build).
func TestInterruptedMessage(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("signal: terminated"))
	for _, tc := range []struct {
		err  error
		want string
	}{
		{context.Canceled, "interrupted (signal: terminated)"},
		{fmt.Errorf("fetching x: %w", context.Canceled), "interrupted (signal: terminated) in: fetching x"},
		{errors.Join(fmt.Errorf("hello amd64: %w", context.Canceled), fmt.Errorf("pingd arm64: %w", context.Canceled)),
			"interrupted (signal: terminated) in: hello amd64\npingd arm64"},
		{errors.Join(context.Canceled, fmt.Errorf("pingd arm64: %w", context.Canceled)), "interrupted (signal: terminated) in: pingd arm64"},
	} {
		if got := interrupted(ctx, tc.err).Error(); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.err, got, tc.want)
		}
	}
	if err := errors.New("other"); interrupted(context.Background(), err) != err {
		t.Error("an error without an interrupt is changed")
	}
}
