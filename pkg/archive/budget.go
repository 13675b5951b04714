package archive

import (
	"context"
	"fmt"
	"io"
)

// RatioFloor is what MaxRatio always allows on top of its multiple of the
// compressed size, so that small archives of very compressible data (a
// text file, a sparse test fixture) are never refused.
const RatioFloor = 64 << 20

// Budget is the decompression-bomb guard: it counts the decompressed bytes
// read through its readers against one allowance, min(Limits.MaxTotal,
// Limits.MaxRatio times the compressed size + RatioFloor), and ends every
// read with ctx's error once ctx is done, so that a long decompression stops
// promptly on a signal. Select uses one per archive; readers of other
// compressed containers (pkg/deb's Inspect, for a .deb's members) use one
// the same way. Several readers of one Budget share its allowance. A Budget
// is not safe for concurrent use.
type Budget struct {
	ctx   context.Context
	limit int64
	why   string // which bound set limit, for the message
	used  int64
}

// NewBudget returns a Budget for an archive of compressed bytes (negative:
// unknown, and only MaxTotal applies). Zero fields of lim take their
// defaults (DefaultLimits).
func NewBudget(ctx context.Context, lim Limits, compressed int64) *Budget {
	lim = lim.withDefaults()
	b := &Budget{ctx: ctx, limit: lim.MaxTotal, why: "Limits.MaxTotal"}
	if compressed >= 0 {
		if r := ratioLimit(lim.MaxRatio, compressed); r < b.limit {
			b.limit = r
			b.why = fmt.Sprintf("Limits.MaxRatio: %d times the %d compressed bytes, plus %d MiB", lim.MaxRatio, compressed, RatioFloor>>20)
		}
	}
	return b
}

// ratioLimit is ratio*compressed + RatioFloor, saturated at the int64 range.
func ratioLimit(ratio, compressed int64) int64 {
	const maxInt = 1<<63 - 1
	if compressed > 0 && ratio > (maxInt-RatioFloor)/compressed {
		return maxInt
	}
	return ratio*compressed + RatioFloor
}

// BudgetError is the error of a Budget's reader once its allowance is spent;
// it matches ErrLimit (and so ErrUnsafe) with errors.Is.
type BudgetError struct {
	Limit int64  // the allowance in bytes
	Why   string // the bound that set it
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("decompressed data exceeds %d bytes (%s): refusing a possible decompression bomb", e.Limit, e.Why)
}

func (e *BudgetError) Is(target error) bool { return target == ErrLimit || target == ErrUnsafe }

// Used returns the bytes counted so far.
func (b *Budget) Used() int64 { return b.used }

// Reader returns a reader of src whose bytes count against b.
func (b *Budget) Reader(src io.Reader) io.Reader { return budgetReader{b, src} }

type budgetReader struct {
	b   *Budget
	src io.Reader
}

func (r budgetReader) Read(p []byte) (int, error) { return r.b.read(r.src, p) }

// read reads from src into p within the allowance. Exactly the allowance is
// allowed; one byte more is a *BudgetError.
func (b *Budget) read(src io.Reader, p []byte) (int, error) {
	if err := b.ctx.Err(); err != nil {
		return 0, err
	}
	left := b.limit - b.used
	if left <= 0 {
		var probe [1]byte
		n, err := src.Read(probe[:])
		if n > 0 {
			return 0, &BudgetError{Limit: b.limit, Why: b.why}
		}
		return 0, err
	}
	if int64(len(p)) > left {
		p = p[:left]
	}
	n, err := src.Read(p)
	b.used += int64(n)
	return n, err
}
