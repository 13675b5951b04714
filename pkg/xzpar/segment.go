package xzpar

import (
	"slices"
	"sync"
)

// Segments of a ModeBest block. The optimal parser's choices depend on the
// model's prices, which depend on every symbol before, so a block cannot be
// split among encoders with the bytes of one (as split.go does for
// ModeFast). Instead a large ModeBest block is cut into segments at places
// that depend only on its size and finder: each segment's chunks start from
// a reset model and state (an LZMA2 state reset, which keeps the
// dictionary), with a finder that has seen the dictionary's length of
// positions before the segment, so its matches still reach back into the
// segments before it. A segment's bytes so depend only on the block, and
// any encoder may code any segment. The block's encoder codes them from
// the first on, its finder going on from one to the next (with hash chains
// that finds what a finder warmed up on the dictionary finds); idle
// encoders of the pool, lent as helpers, each start in the middle of the
// longest run of segments nobody codes yet, warm up there (about a
// dictionary's length of positions visited, a tenth to a fifth of coding a
// segment) and go on from there. One large block so uses the CPUs an idle
// pool has. The cost is the model learnt again in each segment (about
// 0.05% more output) and the helpers' warm-ups (measured in
// cmd/updeb-bench/README.md).

// bestSegment is the least length of a segment (a variable for tests): a
// ModeBest block of n bytes with hash chains is cut into n/bestSegment
// segments of equal length.
var bestSegment = 4 << 20

// pieceWarm is how many positions before a text piece its tree visits
// first, and pieceWarmDepth how deep it searches there (textPieces).
// pieceWarm is a variable for tests.
var pieceWarm = 1 << 20

const pieceWarmDepth = 8

// segmentCuts returns the starts of the segments of a block of n bytes
// coded with f, then n: {0, n} for a block that is not cut. Binary trees
// are never cut: what a tree finds depends on every position it visited,
// not only the last dictionary's length (they serve small blocks anyway).
func segmentCuts(n int, f finder) []int {
	k := n / bestSegment
	if f.kind != hc4 || k < 2 {
		return []int{0, n}
	}
	return evenCuts(n, k)
}

// textPieces returns the starts of the pieces of a ModeBest text block of n
// bytes that inPieces says to cut, then n, and the dictionary of each: as
// few pieces of equal length as keep each within half of dictCap. Text
// gains most from binary trees (xz -6's size, where hash chains stay 5%
// above it), which fit in the memory the chains take at the full
// dictionary only with half of it. A tree cannot go on from one segment to
// the next with the bytes a fresh one would give (segmentCuts), and one
// warmed on the whole dictionary before a piece costs about what coding
// the piece does. So each piece is coded by a fresh tree that first visits
// only the pieceWarm positions before it, pieceWarmDepth deep (encodePiece):
// its first chunk resets the state, not the dictionary, its matches reach
// back into that window, and any encoder may code any piece. Measured on
// 27.7 MB of Go source in four pieces against pieces with a dictionary each
// (no window): a 0.58% smaller package for about 2% more CPU with one
// encoder (5% with two workers on 2 cores); the window at the tree's full
// depth (24) 0.73% smaller for 8 to 12% more CPU (cmd/updeb-bench/README.md).
// Pieces much shorter lose more than the trees gain (two of 300 KB: 0.5%
// larger than the chains), hence inPieces' least length.
func textPieces(n, dictCap int) (cuts []int, dict int) {
	half := max(dictCap/2, MinDictCap)
	k := max(1, (n+half-1)/half)
	return evenCuts(n, k), (n + k - 1) / k
}

// evenCuts returns the starts of k parts of n bytes as equal as can be,
// then n.
func evenCuts(n, k int) []int {
	cuts := make([]int, k+1)
	for i := range cuts {
		cuts[i] = int(int64(i) * int64(n) / int64(k))
	}
	return cuts
}

// segmented is one ModeBest block being coded in segments.
type segmented struct {
	in   []byte
	cuts []int
	dict uint32
	f    finder
	// apart: each segment is a piece (textPieces), coded by a fresh tree
	// that sees only pieceWarm positions before it (encodePiece).
	apart bool
	pool  *Pool
	// stopped is the coder's: helpers stop with it.
	stopped func() bool
	// arena holds every segment's output, each in a region of its own
	// (region), compacted once all are coded.
	arena []byte

	mu     sync.Mutex
	state  []segState
	outs   [][]byte
	failed bool // a segment's encoder was told to stop
	wg     sync.WaitGroup
}

type segState uint8

const (
	segFree segState = iota
	segCoding
	segDone
)

// encodeSegmented appends the LZMA2 data of block in, coded in the
// segments cuts gives (apart: as pieces, see encodePiece), to
// dst, end marker included; nil if e.stopped said to stop. With a pool,
// idle encoders help. dst's capacity beyond its length holds the segments
// (more is allocated where it is less than outputCap of the block).
func (e *lzmaEncoder) encodeSegmented(dst, in []byte, cuts []int, dictSize uint32, f finder, pool *Pool, apart bool) []byte {
	n := len(cuts) - 1
	arena := dst[len(dst):]
	if int64(cap(arena)) < outputCap(len(in)) {
		arena = make([]byte, 0, outputCap(len(in)))
	}
	s := &segmented{in: in, cuts: cuts, dict: dictSize, f: f, apart: apart, pool: pool, stopped: e.stopped,
		arena: arena, state: make([]segState, n), outs: make([][]byte, n)}
	s.mu.Lock()
	i, cont, _ := s.pick(-1)
	s.mu.Unlock()
	s.run(e, i, cont, false)
	s.wg.Wait()
	if s.failed {
		return nil
	}
	// The regions go down to follow one another: a copy never overwrites
	// a region not yet copied.
	for _, out := range s.outs {
		dst = append(dst, out...)
	}
	return append(dst, controlEnd)
}

// region is the empty slice of the arena segment i is coded into: room for
// the segment plus a sixteenth (stored chunks add 3 bytes per 64 KiB), all
// of them within outputCap of the block.
func (s *segmented) region(i int) []byte {
	start := s.cuts[i] + s.cuts[i]/16
	end := s.cuts[i+1] + s.cuts[i+1]/16
	return s.arena[start:start:end]
}

// pick takes the next segment for an encoder that just coded prev (-1:
// none yet), with s.mu held: the one after prev if it is free (cont: the
// encoder's finder goes on), else the start of the longest run of free
// segments that nobody codes into, else the middle of the longest run.
func (s *segmented) pick(prev int) (i int, cont, ok bool) {
	if prev >= 0 && prev+1 < len(s.state) && s.state[prev+1] == segFree {
		s.state[prev+1] = segCoding
		return prev + 1, true, true
	}
	best, bestLen := -1, 0
	for a := 0; a < len(s.state); {
		if s.state[a] != segFree {
			a++
			continue
		}
		b := a
		for b < len(s.state) && s.state[b] == segFree {
			b++
		}
		start := a
		if a > 0 && s.state[a-1] == segCoding {
			start = a + (b-a)/2 // the encoder before goes on into the first half
		}
		if b-start > bestLen {
			best, bestLen = start, b-start
		}
		a = b
	}
	if best < 0 {
		return 0, false, false
	}
	s.state[best] = segCoding
	return best, false, true
}

// run codes segment i with e, then the segments pick gives, until none is
// free (a helper: or a block waits for an encoder, or e was told to stop).
// The coder lends helpers before each segment.
func (s *segmented) run(e *lzmaEncoder, i int, cont, helper bool) {
	defer e.mf.release()
	for {
		if !helper {
			s.lend()
		}
		var out []byte
		switch {
		case s.apart:
			out = e.encodePiece(s.region(i), s.in[:s.cuts[i+1]], s.cuts[i], s.dict, s.f)
		case cont:
			out = e.continueRange(s.region(i), s.in[:s.cuts[i+1]], s.cuts[i], s.dict, s.f)
		default:
			out = e.encodeRange(s.region(i), s.in[:s.cuts[i+1]], s.cuts[i], s.dict, s.f, nil)
		}
		s.mu.Lock()
		s.outs[i], s.state[i] = out, segDone
		if out == nil {
			s.failed = true
		}
		var ok bool
		if !s.failed && !(helper && s.pool.busy()) {
			i, cont, ok = s.pick(i)
		}
		s.mu.Unlock()
		if !ok {
			return
		}
	}
}

// lend starts a helper for every encoder the pool lends while segments are
// free; helpers need no memory but their encoder's (they code into the
// arena).
func (s *segmented) lend() {
	if s.pool == nil {
		return
	}
	for {
		s.mu.Lock()
		free := slices.Contains(s.state, segFree)
		s.mu.Unlock()
		if !free {
			return
		}
		enc, ok := s.pool.lendHelper(0)
		if !ok {
			return
		}
		s.mu.Lock()
		i, _, ok := s.pick(-1)
		s.mu.Unlock()
		if !ok {
			s.pool.returnHelper(enc)
			return
		}
		s.wg.Go(func() {
			defer s.pool.returnHelper(enc)
			enc.setMode(ModeBest)
			enc.stopped = s.stopped
			defer func() { enc.stopped = nil }()
			s.run(enc, i, false, true)
		})
	}
}
