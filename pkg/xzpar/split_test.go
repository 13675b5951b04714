package xzpar

import (
	"bytes"
	"fmt"
	"testing"
)

// splitInput is data where the parse meets every case: text (long matches,
// rep matches), machine code, random stretches (stored chunks, which reset
// the model and the distances), runs of zeros.
func splitInput(t testing.TB, n int, seed uint64) []byte {
	var b []byte
	for i := 0; len(b) < n; i++ {
		switch i % 5 {
		case 0:
			b = append(b, textData(90<<10)...)
		case 1:
			b = append(b, randomData(70<<10+i*1000, seed+uint64(i))...)
		case 2:
			b = append(b, machineCode(t, 100<<10)...)
		case 3:
			b = append(b, make([]byte, 3000+i)...)
		case 4:
			b = append(b, textData(20 << 10)[i*7:]...)
		}
	}
	return b[:n]
}

// TestSplitSameBytes: blocks that idle encoders of the pool help with (parts
// of 16 KiB and more here) have the bytes of blocks one encoder codes alone,
// with and without the x86 filter, with the binary and the text finder; the
// coder of a lone block, whose pool has idle encoders from its start, does
// take symbols from the helpers' streams (asserted with each helper awaited:
// as they are scheduled, the coder may pass them all on a loaded machine).
func TestSplitSameBytes(t *testing.T) {
	saved := minHelperRange
	minHelperRange = 8 << 10
	t.Cleanup(func() { minHelperRange, awaitHelpers = saved, false })
	for _, tc := range []struct {
		size, block int
		x86, text   bool
	}{
		{1 << 20, 256 << 10, false, false},
		{1<<20 + 12345, 1<<20 + 12345, true, false},
		{600<<10 + 777, 600<<10 + 777, false, true}, // the text finder, its eight-byte table warmed up too
	} {
		t.Run(fmt.Sprintf("%d bytes in blocks of %d, x86 %v, text %v", tc.size, tc.block, tc.x86, tc.text), func(t *testing.T) {
			in := splitInput(t, tc.size, uint64(tc.size))
			if tc.text {
				in = goSource(t, tc.size)
			}
			cfg := Config{BlockSize: tc.block, DictCap: 256 << 10, X86: tc.x86, Workers: 1}
			want := compress(t, in, cfg)
			// The helpers as they are scheduled, then each awaited (the
			// split must happen then, whatever the machine's load).
			for _, run := range []struct {
				workers int
				await   bool
			}{{2, false}, {8, false}, {2, true}, {8, true}} {
				workers := run.workers
				awaitHelpers = run.await
				p, err := NewPool(workers, 256<<10, 40*BlockMemory(tc.block))
				if err != nil {
					t.Fatal(err)
				}
				cfg.Pool = p
				if got := compress(t, in, cfg); !bytes.Equal(got, want) {
					t.Fatalf("%d workers: %d bytes, %d coded alone", workers, len(got), len(want))
				}
				if run.await && tc.size <= tc.block && (p.lent.Load() == 0 || p.followed.Load() == 0) { // one block: the other encoders are idle from the start
					t.Fatalf("%d workers: %d helpers lent, %d symbols followed: the blocks were not split", workers, p.lent.Load(), p.followed.Load())
				}
				t.Logf("%d workers, helpers awaited %v: %d helpers, %d symbols taken from their streams", workers, run.await, p.lent.Load(), p.followed.Load())
				if !p.blocks.TryAcquire(p.blockMemory) {
					t.Fatalf("%d workers: the memory lent to helpers is not all back", workers)
				}
			}
		})
	}
}

// TestCatchUp: a finder that passes over a stretch of the block (catchUp)
// finds, from there on, what a finder that visited every position finds.
func TestCatchUp(t *testing.T) {
	in := splitInput(t, 300<<10, 5)
	const dict = 32 << 10
	// Chains without the eight-byte table (no mode's finder now, the path
	// stays) and with it.
	for _, f := range []finder{{hc4, 32, 4, 0}, chainFinder} {
		for _, tc := range []struct{ from, to int }{
			{1000, 1000 + dict/2},       // less than a dictionary: every position visited
			{1000, 1000 + 3*dict + 17},  // more: most passed over
			{0, 5*dict + 3},             // from the start
			{100 << 10, 100<<10 + dict}, // exactly a dictionary
		} {
			var all, caught matchFinder
			all.reset(in, dict, f)
			all.skip(tc.to)
			caught.reset(in, dict, f)
			caught.skip(tc.from)
			caught.catchUp(tc.to)
			if caught.pos != all.pos {
				t.Fatalf("catchUp(%d) from %d: at %d, want %d", tc.to, tc.from, caught.pos, all.pos)
			}
			for i := 0; i < 2*dict && all.pos < len(in); i++ {
				a, b := all.find(), caught.find()
				if fmt.Sprint(a) != fmt.Sprint(b) {
					t.Fatalf("%d ways, catchUp(%d) from %d: at %d found %v, want %v", f.hash8Ways, tc.to, tc.from, all.pos-1, b, a)
				}
			}
		}
	}
}
