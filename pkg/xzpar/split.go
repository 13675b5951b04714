package xzpar

import (
	"sync"
	"sync/atomic"
)

// Splitting one block among several encoders (ModeFast). A block is coded by
// one encoder, the coder, in order: its range coder and model carry from one
// symbol to the next. But the fast parser's choice at a position depends only
// on the bytes, the position and the four recent distances (reps): the match
// finder's answers are the same whatever it visited before, as long as it
// has seen the dictionary's length of bytes before the position. So an idle
// encoder of the pool, a helper, can parse a later part of the block ahead
// of time: it warms its match finder on the dictionary before its start,
// guesses the distances there (the model's initial ones) and writes the
// symbols it chooses into a stream. Where the coder's own parse, or an
// earlier helper's, reaches a symbol boundary of that stream with the same
// distances, the two parses are the same from there on: the coder takes the
// stream's symbols instead of parsing (the earlier helper stops and links its
// stream to the later one), and only codes them, which is about a quarter of
// the work of a block. The coder checks every symbol it takes; where they
// could differ (its model is reset after a stored chunk, which sets the
// distances back) it parses again itself until it meets the stream again,
// after bringing its match finder up to there (matchFinder.catchUp: at most
// a dictionary's length of positions). The output is the bytes of one
// encoder alone, whatever the helpers did or when.
//
// Helpers are lent only while no block waits for an encoder or is being
// filled and the pool has memory for their streams, so they use CPUs that
// would otherwise idle at the end of a stream (the last blocks of a
// package), and they stop as soon as a block waits. Every helper costs a warm-up (inserting up to a
// dictionary's length of positions, about a tenth of a block's work), so a
// block is split only into parts of at least minHelperRange bytes.

// minHelperRange is the smallest part of a block a helper takes (a variable
// for tests).
var minHelperRange = 4 << 20

// awaitHelpers, for tests, makes the coder wait for each helper it lends to
// finish its stream: whether the coder then follows a stream depends on the
// input alone, not on how the helpers were scheduled (under the race
// detector on a busy machine, the coder could pass every helper before it
// published a symbol).
var awaitHelpers = false

// Stream words: a literal is one 0 word; any other symbol is its length,
// then its distance in two words (high, low).
const (
	streamSlab    = 1 << 16 // words per allocation of a stream
	publishEvery  = 1 << 10 // symbols between publications
	streamWordMem = 2       // bytes per word
)

type streamState uint8

const (
	streamRunning streamState = iota
	streamDone                // reached the end of the block
	streamLinked              // continues in link from (linkChunk, linkWord)
	streamStopped             // its helper stopped; nothing after its last symbol
)

// symStream is the symbols one helper chose from start on, published in
// chunks that never change once published.
type symStream struct {
	start int
	next  atomic.Pointer[symStream] // the stream after this one in the block
	stop  atomic.Bool               // asked to stop
	// frontier is the block position after the last published symbol.
	frontier atomic.Int64
	budget   int   // words the helper may write
	memory   int64 // what the pool lent for them

	mu                  sync.Mutex
	cond                sync.Cond
	chunks              [][]uint16
	state               streamState
	link                *symStream
	linkChunk, linkWord int
}

func newSymStream(start, budget int) *symStream {
	s := &symStream{start: start, budget: budget, memory: int64(budget) * streamWordMem}
	s.cond.L = &s.mu
	s.frontier.Store(int64(start))
	return s
}

// publish adds a chunk of symbols ending at block position end.
func (s *symStream) publish(words []uint16, end int) {
	if len(words) == 0 {
		return
	}
	s.mu.Lock()
	s.chunks = append(s.chunks, words)
	s.mu.Unlock()
	s.frontier.Store(int64(end))
	s.cond.Broadcast()
}

// finish ends the stream in state st (linked: into link at its chunk and
// word).
func (s *symStream) finish(st streamState, link *symStream, chunk, word int) {
	s.mu.Lock()
	s.state, s.link, s.linkChunk, s.linkWord = st, link, chunk, word
	s.mu.Unlock()
	s.cond.Broadcast()
}

// cursor reads a stream and the streams it links to: the symbol at pos,
// chosen with reps before it.
type cursor struct {
	origin *symStream // the stream it started on
	s      *symStream // the stream it reads now
	ci, wi int
	pos    int
	reps   [4]uint32
}

func newCursor(s *symStream) *cursor {
	return &cursor{origin: s, s: s, pos: s.start, reps: initialReps}
}

// initialReps are the model's distances after a reset, a helper's guess.
var initialReps = [4]uint32{1, 1, 1, 1}

// next returns the symbol at c.pos and moves past it. With wait it waits for
// a symbol being chosen; ok is false when there is none (the stream stopped
// or ended, or, without wait, none is published yet).
func (c *cursor) next(wait bool) (length, dist uint32, ok bool) {
	for {
		s := c.s
		s.mu.Lock()
		for c.ci == len(s.chunks) && s.state == streamRunning && wait {
			s.cond.Wait()
		}
		if c.ci < len(s.chunks) {
			chunk := s.chunks[c.ci]
			s.mu.Unlock()
			w := chunk[c.wi]
			length, dist = 1, 0
			c.wi++
			if w != 0 {
				length, dist = uint32(w), uint32(chunk[c.wi])<<16|uint32(chunk[c.wi+1])
				c.wi += 2
			}
			if c.wi == len(chunk) {
				c.ci, c.wi = c.ci+1, 0
			}
			_, c.reps = applySymbol(0, c.reps, length, dist)
			c.pos += int(length)
			return length, dist, true
		}
		if s.state != streamLinked {
			s.mu.Unlock()
			return 0, 0, false
		}
		c.s, c.ci, c.wi = s.link, s.linkChunk, s.linkWord
		s.mu.Unlock()
	}
}

// meets reports whether the stream has a symbol boundary at pos with reps
// there, reading ahead without waiting.
func (c *cursor) meets(pos int, reps [4]uint32) bool {
	for c.pos < pos {
		if _, _, ok := c.next(false); !ok {
			return false
		}
	}
	return c.pos == pos && c.reps == reps
}

// splitter runs the coder's side of a split block: it chooses each symbol,
// its own or a stream's, keeping the coder's match finder in step.
type splitter struct {
	e    *lzmaEncoder // the coder
	in   []byte
	dict uint32
	f    finder
	pool *Pool

	streams []*symStream // by start
	// cand is where the coder's own parse may meet a stream: a cursor on
	// the last stream starting at or before its position (candIdx).
	cand    *cursor
	candIdx int
	// following is the cursor the coder takes symbols from, nil while it
	// parses itself.
	following *cursor
	reset     bool // the model was reset since the last symbol
	followed  int64
	helpers   sync.WaitGroup
}

// next returns the symbol at pos.
func (sp *splitter) next(pos int) (uint32, uint32) {
	e := sp.e
	if sp.following != nil {
		if length, dist, ok := sp.following.next(true); ok {
			sp.followed++
			return length, dist
		}
		sp.following = nil // the stream stopped: parse from here
		e.mf.catchUp(pos)
	}
	return e.fast.next(pos, &e.m.reps)
}

// after is called with the position after each coded symbol: it checks
// that a followed stream still agrees with the model, or whether the
// coder's own parse meets a stream.
func (sp *splitter) after(pos int) {
	e := sp.e
	if sp.following != nil {
		if sp.reset && sp.following.reps != e.m.reps {
			sp.leave()
		}
		sp.reset = false
		return
	}
	sp.reset = false
	for sp.candIdx+1 < len(sp.streams) && sp.streams[sp.candIdx+1].start <= pos {
		sp.candIdx++
		sp.cand = newCursor(sp.streams[sp.candIdx])
	}
	if sp.cand == nil || sp.cand.s.start > pos {
		return
	}
	if sp.cand.meets(pos, e.m.reps) {
		sp.following, sp.cand = sp.cand, nil
		e.fast.reset()
	}
}

// leave stops following: the coder parses itself from the followed
// cursor's position, where its finder is, and may meet the stream again.
func (sp *splitter) leave() {
	sp.cand, sp.following = sp.following, nil
	sp.e.fast.reset()
	sp.e.mf.catchUp(sp.cand.pos)
}

// poll is called at every chunk end, at pos: it lends the block a helper
// when the pool has one to spare, for the largest part of the block nobody
// parses yet, and stops helpers the coder has passed.
func (sp *splitter) poll(pos int) {
	for _, s := range sp.streams {
		if int(s.frontier.Load()) < pos && (sp.following == nil || sp.following.s != s) {
			s.stop.Store(true)
		}
	}
	// The largest part of the block that nobody parses yet: from where a
	// running stream's helper or the coder's own parse is to the next
	// stream's start.
	best, bestEnd := 0, 0
	next := len(sp.in)
	for i := len(sp.streams) - 1; i >= 0; i-- {
		s := sp.streams[i]
		if a := max(int(s.frontier.Load()), pos); !s.stop.Load() && next-a > bestEnd-best {
			best, bestEnd = a, next
		}
		if s.start > pos {
			next = s.start
		}
	}
	covered := sp.cand != nil && int(sp.cand.s.frontier.Load()) > pos
	if sp.following == nil && !covered && next-pos > bestEnd-best {
		best, bestEnd = pos, next
	}
	if bestEnd-best < 2*minHelperRange {
		return
	}
	start := best + (bestEnd-best)/2
	budget := (bestEnd-start)*3/4 + streamSlab
	enc, ok := sp.pool.lendHelper(int64(budget) * streamWordMem)
	if !ok {
		return
	}
	s := newSymStream(start, budget)
	i := 0
	for i < len(sp.streams) && sp.streams[i].start < start {
		i++
	}
	if i < len(sp.streams) {
		s.next.Store(sp.streams[i])
	}
	if i > 0 {
		sp.streams[i-1].next.Store(s)
	}
	sp.streams = append(sp.streams, nil)
	copy(sp.streams[i+1:], sp.streams[i:])
	sp.streams[i] = s
	if i <= sp.candIdx && sp.cand != nil {
		sp.candIdx++
	}
	sp.helpers.Go(func() {
		defer sp.pool.returnHelper(enc)
		help(enc, sp.in, sp.dict, sp.f, s, sp.e.stopped, sp.pool)
	})
	if awaitHelpers {
		s.mu.Lock()
		for s.state == streamRunning {
			s.cond.Wait()
		}
		s.mu.Unlock()
	}
}

// finish stops the helpers and waits for them.
func (sp *splitter) finish() {
	for _, s := range sp.streams {
		s.stop.Store(true)
	}
	sp.helpers.Wait()
	for _, s := range sp.streams {
		sp.pool.releaseHelper(s.memory)
	}
	sp.pool.followed.Add(sp.followed)
}

// help parses in from s.start with enc, writing the symbols into s, until
// the block ends, its parse meets the next stream's, or it is told to stop.
func help(enc *lzmaEncoder, in []byte, dict uint32, f finder, s *symStream, stopped func() bool, pool *Pool) {
	mf := &enc.mf
	defer mf.release()
	quit := func() bool { return s.stop.Load() || pool.busy() || (stopped != nil && stopped()) }
	if !mf.warmTo(in, dict, f, s.start, quit) {
		s.finish(streamStopped, nil, 0, 0)
		return
	}
	enc.fast.reset()
	reps := initialReps
	pos := s.start
	slab := make([]uint16, 0, streamSlab)
	published, words := 0, 0
	var cand *cursor
	publish := func() {
		s.publish(slab[published:], pos)
		published = len(slab)
	}
	for n := 0; pos < len(in); n++ {
		if n%publishEvery == 0 && n > 0 {
			publish()
			if quit() || words > s.budget {
				s.finish(streamStopped, nil, 0, 0)
				return
			}
		}
		length, dist := enc.fast.next(pos, &reps)
		_, reps = applySymbol(0, reps, length, dist)
		if cap(slab)-len(slab) < 3 {
			publish()
			slab, published = make([]uint16, 0, streamSlab), 0
		}
		if length == 1 && dist == 0 {
			slab = append(slab, 0)
			words++
		} else {
			slab = append(slab, uint16(length), uint16(dist>>16), uint16(dist))
			words += 3
		}
		pos += int(length)
		// Meet the last stream that starts at or before pos.
		for nx := s.next.Load(); nx != nil && nx.start <= pos; nx = nx.next.Load() {
			if cand == nil || nx.start > cand.origin.start {
				cand = newCursor(nx)
			}
		}
		if cand != nil && cand.meets(pos, reps) {
			publish()
			s.finish(streamLinked, cand.s, cand.ci, cand.wi)
			return
		}
	}
	publish()
	s.finish(streamDone, nil, 0, 0)
}
