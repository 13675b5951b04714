package xzpar

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"
)

// withSegment sets bestSegment for one test.
func withSegment(t *testing.T, n int) {
	saved := bestSegment
	bestSegment = n
	t.Cleanup(func() { bestSegment = saved })
}

func TestSegmentCuts(t *testing.T) {
	withSegment(t, 100)
	for _, tc := range []struct {
		n    int
		f    finder
		want string
	}{
		{199, bestChainFinder, "[0 199]"},
		{200, bestChainFinder, "[0 100 200]"},
		{355, bestChainFinder, "[0 118 236 355]"},
		{1000, treeFinder, "[0 1000]"},
	} {
		if got := fmt.Sprint(segmentCuts(tc.n, tc.f)); got != tc.want {
			t.Errorf("segmentCuts(%d, %v) = %s, want %s", tc.n, tc.f, got, tc.want)
		}
	}
}

// TestSegmentsContinue: an encoder that codes a block's segments in turn
// (keeping its finder from one to the next) writes the bytes of fresh
// encoders that each code one segment, warming up on the dictionary before
// it; the data decodes (ulikunitz's reader, held to the dictionary) and its
// framing has a state reset where every segment starts.
func TestSegmentsContinue(t *testing.T) {
	withSegment(t, 24<<10)
	for _, tc := range []struct{ n, dict int }{
		{200 << 10, 32 << 10},        // segments shorter than the dictionary
		{500<<10 + 12345, 32 << 10},  //
		{300 << 10, MinDictCap},      // much longer: the warm-up sees a part of the segment before
		{150<<10 + 7, 24<<10 + 4096}, // a dictionary just over a segment
	} {
		n, dict := tc.n, uint32(tc.dict)
		in := splitInput(t, n, uint64(n))
		f := finderFor(ModeBest, tc.dict, tc.dict, false)
		cuts := segmentCuts(n, f)
		if len(cuts) < 4 {
			t.Fatalf("%d bytes: cuts %v", n, cuts)
		}
		together := newLZMAEncoder(ModeBest).encodeSegmented(nil, in, cuts, dict, f, nil, false)
		var apart []byte
		for i := range len(cuts) - 1 {
			e := newLZMAEncoder(ModeBest)
			apart = e.encodeRange(apart, in[:cuts[i+1]], cuts[i], dict, f, nil)
			e.mf.release()
		}
		apart = append(apart, controlEnd)
		if !bytes.Equal(together, apart) {
			t.Fatalf("%d bytes: %d bytes coded by one encoder, %d by one per segment", n, len(together), len(apart))
		}
		if got := decodeRaw(t, together, int(dict)); !bytes.Equal(got, in) {
			t.Fatalf("%d bytes: the segments decode to %d other bytes", n, len(got))
		}
		// No chunk crosses a cut; the first LZMA chunk after one resets
		// the state and sets the properties.
		seg, pos, lzmaSeen := 0, 0, false
		for _, c := range parseChunks(t, together) {
			for pos >= cuts[seg+1] {
				seg++
				lzmaSeen = false
			}
			if pos+c.unpacked > cuts[seg+1] {
				t.Fatalf("%d bytes: the chunk at %d (%d bytes) crosses the cut at %d", n, pos, c.unpacked, cuts[seg+1])
			}
			if !c.stored && !lzmaSeen {
				lzmaSeen = true
				if seg > 0 && c.control&0x60 != resetStateProps<<5 {
					t.Errorf("%d bytes: the first LZMA chunk of the segment at %d (at %d) has control %#x", n, cuts[seg], pos, c.control)
				}
			}
			pos += c.unpacked
		}
	}
}

// TestSegmentSameBytes: ModeBest blocks whose segments idle encoders of the
// pool code have the bytes one encoder writes alone, with and without the
// x86 filter, and a text block's pieces too; xz decodes them; the coder of
// a lone block does lend helpers; the memory lent comes back.
func TestSegmentSameBytes(t *testing.T) {
	withSegment(t, 24<<10)
	for _, tc := range []struct {
		size, block int
		x86, text   bool
	}{
		{512 << 10, 150 << 10, false, false},
		{400<<10 + 12345, 400<<10 + 12345, true, false},
		{400<<10 + 999, 400<<10 + 999, false, true},
	} {
		t.Run(fmt.Sprintf("%d bytes in blocks of %d, x86 %v, text %v", tc.size, tc.block, tc.x86, tc.text), func(t *testing.T) {
			in := splitInput(t, tc.size, uint64(tc.size)+1)
			if tc.text {
				in = goSource(t, tc.size)
			}
			cfg := Config{Mode: ModeBest, BlockSize: tc.block, DictCap: 64 << 10, X86: tc.x86, Workers: 1}
			want := compress(t, in, cfg)
			if got, ok, stderr := xzReferee(t, want); !ok || !bytes.Equal(got, in) {
				t.Fatalf("xz -dc refuses or changes the segmented blocks: %s", stderr)
			}
			for _, workers := range []int{2, 8} {
				p, err := NewPool(workers, 64<<10, 40*BlockMemory(tc.block))
				if err != nil {
					t.Fatal(err)
				}
				cfg.Pool = p
				if got := compress(t, in, cfg); !bytes.Equal(got, want) {
					t.Fatalf("%d workers: %d bytes, %d coded alone", workers, len(got), len(want))
				}
				if tc.size <= tc.block && p.lent.Load() == 0 {
					t.Fatalf("%d workers: no helper lent to a lone block", workers)
				}
				t.Logf("%d workers: %d helpers", workers, p.lent.Load())
				if !p.blocks.TryAcquire(p.blockMemory) {
					t.Fatalf("%d workers: the memory lent to helpers is not all back", workers)
				}
			}
		})
	}
}

// TestSegmentsCancel: a cancelled stream of one ModeBest block, in segments
// (binary input, hash chains) or in text pieces (trees, each warmed on the
// window before it), stops its coder and helpers, Close returns the cancel,
// and no goroutine is left behind.
func TestSegmentsCancel(t *testing.T) {
	withSegment(t, 1<<20)
	for _, tc := range []struct {
		name    string
		in      []byte
		dictCap int
	}{
		{"segments", splitInput(t, 8<<20, 9), DefaultDictCap},
		{"text pieces", goSource(t, 8<<20), 2 << 20}, // pieces of 1 MiB: inPieces
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := runtime.NumGoroutine()
			ctx, cancel := context.WithCancel(context.Background())
			var out bytes.Buffer
			w, err := NewWriterContext(ctx, &out, Config{Mode: ModeBest, BlockSize: 8 << 20, DictCap: tc.dictCap, Workers: 4})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write(tc.in); err != nil { // one full block: submitted
				t.Fatal(err)
			}
			time.Sleep(50 * time.Millisecond) // the coder and its helpers start
			start := time.Now()
			cancel()
			if err := w.Close(); !errors.Is(err, context.Canceled) {
				t.Errorf("Close after cancel = %v, want %v", err, context.Canceled)
			}
			after := runtime.NumGoroutine()
			for deadline := time.Now().Add(5 * time.Second); after > before && time.Now().Before(deadline); after = runtime.NumGoroutine() {
				time.Sleep(time.Millisecond)
			}
			if after > before {
				t.Fatalf("%d goroutines before, %d after Close", before, after)
			}
			t.Logf("stopped %v after the cancel", time.Since(start))
		})
	}
}

// TestStopChecks: an encoder asks its stopped at least every stopCheck
// bytes of input, coding or warming up, on text that compresses so well
// that one chunk spans its 2 MiB of input, so that a cancel stops it
// within stopCheck bytes' work and not a chunk's; and it stops at the
// first yes.
func TestStopChecks(t *testing.T) {
	line := []byte("the same line of text, once more, and again\n")
	in := bytes.Repeat(line, (3<<20)/len(line))
	const dict = 1 << 20
	// The finder may run ahead of the coder by the optimal parser's window.
	slack := optWindow + matchLenMax
	for _, tc := range []struct {
		name string
		mode Mode
		f    finder
	}{
		{"fast", ModeFast, textChainFinder},
		{"best chains", ModeBest, textBestChainFinder},
		{"best trees", ModeBest, textTreeFinder},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newLZMAEncoder(tc.mode)
			var at []int
			e.stopped = func() bool { at = append(at, e.mf.pos); return false }
			out := e.encode(nil, in, dict, tc.f, nil)
			if out == nil {
				t.Fatal("encode stopped, though stopped said no")
			}
			if len(at) < len(in)/stopCheck-1 {
				t.Fatalf("stopped asked %d times over %d bytes, want once every %d bytes", len(at), len(in), stopCheck)
			}
			prev := 0
			for _, p := range append(at, len(in)) {
				if p-prev > stopCheck+slack {
					t.Fatalf("stopped asked at %d and next at %d: more than %d bytes apart", prev, p, stopCheck)
				}
				prev = p
			}

			at = at[:0]
			from := len(in) - 1000
			if !e.mf.warmWindow(in, dict, tc.f, from, 2<<20, 8, e.stopped) {
				t.Fatal("warmWindow stopped, though stopped said no")
			}
			for i, p := range at {
				if want := from - dict + i*stopCheck; p != want {
					t.Fatalf("warmWindow asked stopped at %v, want every %d positions from %d", at, stopCheck, from-dict)
				}
			}
			if len(at) != (dict+stopCheck-1)/stopCheck {
				t.Fatalf("warmWindow asked stopped %d times over %d positions", len(at), dict)
			}

			calls := 0
			e.stopped = func() bool { calls++; return true }
			if out := e.encode(nil, in, dict, tc.f, nil); out != nil || calls != 1 {
				t.Fatalf("stopped said yes: encode returned %d bytes after %d questions, want nil after 1", len(out), calls)
			}
		})
	}
}
