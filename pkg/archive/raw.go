package archive

import (
	"context"
	"fmt"
	"io"
)

// selectRaw hands fn the artifact itself. want must be exactly [""]: the
// cached artifact is named by its digest, so a file name here would mean nothing.
func selectRaw(ctx context.Context, path, pin string, want []string, lim Limits, fn func(Member, io.Reader) error) error {
	if len(want) != 1 || want[0] != "" {
		return fmt.Errorf("%w %q: a raw artifact is itself the one file; want must be exactly [\"\"]", ErrWant, want)
	}
	s := &scan{ctx: ctx, archive: path, lim: lim, bud: NewBudget(ctx, lim, -1), fn: fn, pin: pin}
	f, fi, err := s.open("a raw artifact")
	if err != nil {
		return err
	}
	defer f.Close()
	if err := CheckRawSize(path, fi.Size(), lim); err != nil {
		return err
	}
	r := s.pinned(f)
	if err := s.deliver(Member{Name: "", Size: fi.Size()}, "", &budget{s: s, src: r}); err != nil {
		return err
	}
	return s.checkPin(r)
}

// CheckRawSize returns the error Select gives a raw artifact at path of
// size bytes that is over lim's limit for one file (Limits.MaxFileSize),
// or nil: for a caller that packages the cached artifact itself, without
// reading it through Select.
func CheckRawSize(path string, size int64, lim Limits) error {
	lim = lim.withDefaults()
	if size > lim.MaxFileSize {
		return &Error{Archive: path, Kind: ErrLimit, Msg: fmt.Sprintf("size %d bytes is above the %d-byte limit for one file (Limits.MaxFileSize)", size, lim.MaxFileSize)}
	}
	return nil
}
