package archive

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

// TestRatioLimit: a 1 MB tar.gz that expands to 1 GiB is refused by the
// ratio bound (100 times its size plus 64 MiB, about 170 MB), long before
// MaxTotal, whether the bomb is wanted or skipped.
func TestRatioLimit(t *testing.T) {
	bomb := bombGz(t)
	p := writeTemp(t, "bomb.tar.gz", bomb)
	for _, want := range []string{"zeros", "other"} {
		var got int64
		err := Select(context.Background(), p, TarGz, []string{want}, Limits{}, func(m Member, r io.Reader) error {
			n, err := io.Copy(io.Discard, r)
			got += n
			return err
		})
		var be *Error
		if !errors.Is(err, ErrLimit) || !errors.As(err, &be) || !strings.Contains(err.Error(), "Limits.MaxRatio: 100 times the ") {
			t.Fatalf("want %s: error %v, want ErrLimit from Limits.MaxRatio", want, err)
		}
		if limit := 100*int64(len(bomb)) + RatioFloor; got > limit {
			t.Errorf("delivered %d bytes, more than the allowance %d", got, limit)
		}
	}
}

// A Budget shared by two readers adds their bytes up, and stops on its
// context.
func TestBudgetShared(t *testing.T) {
	b := NewBudget(context.Background(), Limits{MaxTotal: 10}, -1)
	if n, err := io.Copy(io.Discard, b.Reader(strings.NewReader("123456"))); n != 6 || err != nil {
		t.Fatalf("first reader: %d, %v", n, err)
	}
	n, err := io.Copy(io.Discard, b.Reader(strings.NewReader("123456")))
	var be *BudgetError
	if n != 4 || !errors.As(err, &be) || !errors.Is(err, ErrLimit) || be.Limit != 10 {
		t.Fatalf("second reader: %d, %v; want 4 bytes then a BudgetError of 10", n, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewBudget(ctx, Limits{}, 100).Reader(strings.NewReader("x")).Read(make([]byte, 1)); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled context: %v", err)
	}
}
