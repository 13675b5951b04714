package xzpar

import (
	"fmt"
	"slices"
	"testing"
)

// TestHash8FindsWhatChainsMiss: a string repeated from far back, whose
// four-byte start recurs more often in between than the chains search, is
// found whole through the eight-byte table, at its distance; the chains
// alone find only the short recurrences.
func TestHash8FindsWhatChainsMiss(t *testing.T) {
	long := []byte("func (mf *matchFinder) find() []matchPair { return mf.matches }")
	var in []byte
	in = append(in, long...)
	for i := range 40 { // "func" again and again, with other bytes after it
		in = fmt.Appendf(in, "func%03d.", i)
	}
	at := len(in)
	in = append(in, long...)
	in = append(in, "tail of the block"...)

	for _, tc := range []struct {
		name    string
		f       finder
		wantLen int // the longest match found at the repeat
	}{
		{"chains alone", finder{hc4, 32, 3, 0}, 4},
		{"chains and one position a bucket", finder{hc4, 32, 3, 1}, len(long)},
		{"chains and two", finder{hc4, 32, 3, 2}, len(long)},
	} {
		var mf matchFinder
		mf.reset(in, 1<<16, tc.f)
		mf.skip(at)
		got := mf.find()
		if len(got) == 0 {
			t.Fatalf("%s: no match at %d", tc.name, at)
		}
		last := got[len(got)-1]
		if int(last.len) != tc.wantLen {
			t.Errorf("%s: longest match %v, want length %d", tc.name, got, tc.wantLen)
		}
		if tc.wantLen == len(long) && last.dist != uint32(at) {
			t.Errorf("%s: the long match is %d back, want %d", tc.name, last.dist, at)
		}
		for i := 1; i < len(got); i++ {
			if got[i].len <= got[i-1].len {
				t.Errorf("%s: lengths not increasing: %v", tc.name, got)
			}
		}
	}
}

// TestHash8SameWhateverVisited: what the finder finds is the same whether it
// visited every position, was extended over a cut (segment.go: the last
// seven positions before it go into the eight-byte table then, which is the
// same table as the whole finder's), or was warmed up on the dictionary
// before a position (segments' and split.go's helpers).
func TestHash8SameWhateverVisited(t *testing.T) {
	in := splitInput(t, 200<<10, 9)
	// Repeat the bytes around each cut soon after it, so that matches
	// starting in the last bytes before a cut are there to be found.
	const dict = 48 << 10
	for _, cut := range []int{8, 30 << 10, 64<<10 + 3, 100<<10 + 7} {
		copy(in[cut+4096:], in[cut-8:cut+64])
		for _, f := range []finder{bestChainFinder, {hc4, 32, 3, 1}} {
			var whole, extended, warmed matchFinder
			whole.reset(in, dict, f)
			whole.skip(cut)
			extended.reset(in[:cut], dict, f)
			extended.skip(cut)
			extended.extend(in)
			warmed.warmTo(in, dict, f, cut, nil)
			// The warmed finder did not visit what lies more than a
			// dictionary back, which no search reaches: compare its finds.
			if !slices.Equal(extended.hash8, whole.hash8) {
				t.Fatalf("cut %d, %d ways: the extended finder's eight-byte table differs from the one that visited every position", cut, f.hash8Ways)
			}
			for i := 0; i < 8192 && whole.pos < len(in); i++ {
				a, b, c := whole.find(), extended.find(), warmed.find()
				if fmt.Sprint(a) != fmt.Sprint(b) || fmt.Sprint(a) != fmt.Sprint(c) {
					t.Fatalf("cut %d, %d ways: at %d found %v (extended) and %v (warmed), want %v", cut, f.hash8Ways, whole.pos-1, b, c, a)
				}
			}
		}
	}
}
