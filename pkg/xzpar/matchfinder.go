package xzpar

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

// The match finders work on a whole block in memory: positions are offsets
// into it, so no window is copied. Both use an exact table of the last
// position of every two-byte string, a hashed table of three-byte strings and
// a hashed table of four-byte strings that heads either hash chains (hc4: one
// link per position) or binary trees (bt4: two links per position, sorted by
// the bytes that follow, so a search visits few candidates and finds every
// length). Links live in a cyclic array of dictSize+1 entries, so memory is
// 4 (hc4) or 8 (bt4) bytes per dictionary byte plus the hash tables.
//
// Hash chains searched a few candidates deep miss the long matches that lie
// further back along a chain: in text, where a four-byte string has many
// occurrences, and in code. hc4 also keeps the last positions (hash8Ways per
// bucket, newest first) of every eight-byte string's hash, and offers the
// longest match among them after the chain's. The table is as large as the
// four-byte one. It records every position visited, so like the chains it
// holds the same candidates whatever visited the positions before, which is
// what split.go and segment.go rely on.

type mfKind uint8

const (
	hc4 mfKind = iota
	bt4
)

const (
	hash2Size = 1 << 16
	hash3Bits = 16
	hash3Size = 1 << hash3Bits
	// minHash4Bits and maxHash4Bits bound the four-byte hash table: about
	// one entry for every two bytes of dictionary.
	minHash4Bits = 16
	hashMul      = 0x9e3779b1
)

var maxHash4Bits = 20

// hash4BitsFor returns the four-byte hash table size (in bits) used with a
// dictionary of dictSize bytes.
func hash4BitsFor(dictSize uint32) int {
	return min(max(bits.Len32(dictSize-1)-1, minHash4Bits), maxHash4Bits)
}

// hash3Of and hash4Of are the buckets of the three- and four-byte strings
// that start with the bytes of v (little-endian: the first in the low byte).
// hash4Of's shift, like hash8Of's, is masked to the range it is always in
// (hash4Bits is 16 to 20), which spares the compiler's checks for a shift
// out of it: 2% of the encoder's instructions.
func hash3Of(v uint32) uint32 { return (v << 8) * hashMul >> (32 - hash3Bits) }

func (mf *matchFinder) hash4Of(v uint32) uint32 { return v * hashMul >> ((32 - mf.hash4Bits) & 31) }

// hash8Mul is the multiplier of the eight-byte hash; hash8MaxWays the most
// positions a bucket of it keeps.
const (
	hash8Mul     = 0x9e3779b97f4a7c15
	hash8MaxWays = 2
)

// hash8Of is the first entry of the bucket of the eight bytes at pos
// (which must have eight bytes).
func (mf *matchFinder) hash8Of(pos int) uint32 {
	v := binary.LittleEndian.Uint64(mf.buf[pos:])
	return uint32(v*hash8Mul>>((64-mf.hash8Bits)&63)) * uint32(mf.hash8Ways)
}

// putHash8 records pos in the eight-byte table, where the finder keeps one,
// and returns the entries of its bucket from before (0: none).
func (mf *matchFinder) putHash8(pos int) (old [hash8MaxWays]uint32) {
	if mf.hash8Ways == 0 || len(mf.buf)-pos < 8 {
		return old
	}
	h := mf.hash8Of(pos)
	b := mf.hash8[h : h+uint32(mf.hash8Ways)]
	old[0] = b[0]
	if len(b) == hash8MaxWays { // element by element: copy calls memmove
		old[1], b[1] = b[1], b[0]
	}
	b[0] = uint32(pos) + mf.base
	return old
}

// hash8Match appends the match with the position of entry e, if it is
// longer than the last of the n found, and returns the new count.
func (mf *matchFinder) hash8Match(e uint32, n, lenLimit int) int {
	pos, buf := mf.pos, mf.buf
	d := uint32(pos) + mf.base - e
	if d > mf.dictSize || pos+8 > len(buf) {
		return n
	}
	prev := 0
	if n > 0 {
		last := mf.matches[n-1]
		if d == last.dist || int(last.len) >= lenLimit {
			return n
		}
		prev = int(last.len)
	}
	q := pos - int(d)
	if binary.LittleEndian.Uint64(buf[q:]) != binary.LittleEndian.Uint64(buf[pos:]) {
		return n // another string in the bucket
	}
	if l := extendMatch(buf, q, pos, 8, lenLimit); l > prev {
		mf.matches[n] = matchPair{uint32(l), d}
		n++
	}
	return n
}

// matchPair is one match found at a position: its length and distance (from 1).
type matchPair struct {
	len, dist uint32
}

// matchFinder finds earlier occurrences of the bytes at each position of a
// block, which it must visit in order: find or skip each position once.
type matchFinder struct {
	kind    mfKind
	niceLen int    // a search stops at a match this long ...
	depth   uint32 // ... or after visiting this many candidates
	// hash8Ways is how many positions a bucket of the eight-byte table
	// keeps: 0 (no table) for bt4.
	hash8Ways int

	buf        []byte
	pos        int    // the next position to visit
	dictSize   uint32 // the largest distance
	cyclicSize uint32
	cyclicPos  uint32 // pos modulo cyclicSize
	// Table entries are positions plus base. Each block's base is more
	// than dictSize above every value an earlier block stored (next), so an
	// empty entry (0) or one left by an earlier block is always too far
	// away to be a candidate: the tables need no clearing between blocks,
	// and the output does not depend on what the finder did before.
	base, next uint32
	hash4Bits  int
	hash8Bits  int

	hash2 []uint32
	hash3 []uint32
	hash4 []uint32
	hash8 []uint32
	son   []uint32

	matches [matchLenMax]matchPair
}

// The search at a position reads its hash bucket, then each candidate's
// bytes and link in turn: misses in tables too large for the caches (64 MiB
// of links for a 16 MiB dictionary), each waiting for the one before. ahead,
// at every position visited, asks for them before they are needed: the
// buckets of the position aheadBuckets bytes on, the first candidate of the
// one aheadFirst on (its bucket asked for earlier) and the second candidate
// of the one aheadSecond on (the first's link asked for earlier). A bucket
// or link may change before its position is searched; then ahead fetched
// lines nobody reads. Measured on a 32 MiB block of amd64 code with a 16 MiB
// dictionary, against loading the next position's first candidate only: 20%
// less CPU in either mode, the same bytes (cmd/updeb-bench/README.md).
const (
	aheadBuckets = 40
	aheadFirst   = 24
	aheadSecond  = 12
)

// ahead prefetches, from position pos, what the searches ahead of it will
// read first. It only affects speed, and does nothing where prefetch is not
// implemented.
func (mf *matchFinder) ahead(pos int) {
	buf := mf.buf
	if !canPrefetch || pos+aheadBuckets+4 > len(buf) {
		return
	}
	v := binary.LittleEndian.Uint32(buf[pos+aheadBuckets:])
	prefetch(unsafe.Pointer(&mf.hash4[mf.hash4Of(v)]), unsafe.Pointer(&mf.hash3[hash3Of(v)]))
	if mf.hash8Ways > 0 && pos+aheadBuckets+8 <= len(buf) {
		mf.ahead8(pos)
	}
	// The first candidate of the position aheadFirst on.
	head := mf.hash4[mf.hash4Of(binary.LittleEndian.Uint32(buf[pos+aheadFirst:]))]
	if link, at, ok := mf.candidate(pos, aheadFirst, head); ok {
		if mf.kind == bt4 {
			link *= 2
		}
		prefetch(at, unsafe.Pointer(&mf.son[link]))
	}
	if mf.kind == bt4 {
		return // a tree's second candidate depends on the bytes compared
	}
	// The second candidate of the one aheadSecond on.
	head = mf.hash4[mf.hash4Of(binary.LittleEndian.Uint32(buf[pos+aheadSecond:]))]
	if link, _, ok := mf.candidate(pos, aheadSecond, head); ok {
		if link, at, ok := mf.candidate(pos, aheadSecond, mf.son[link]); ok {
			prefetch(at, unsafe.Pointer(&mf.son[link]))
		}
	}
}

// candidate returns the link slot and the bytes of the candidate at table
// entry e of the position d bytes after pos, if it was visited before pos
// (only those have their link).
func (mf *matchFinder) candidate(pos, d int, e uint32) (uint32, unsafe.Pointer, bool) {
	q := pos + d
	delta := uint32(q) + mf.base - e
	if delta > mf.dictSize || delta <= uint32(d) || int(delta) > q {
		return 0, nil, false
	}
	return mf.cyclicIndex(delta - uint32(d)), unsafe.Pointer(&mf.buf[q-int(delta)]), true
}

// ahead8 prefetches the eight-byte bucket of the position aheadBuckets on
// and the bytes of the candidates of the one aheadFirst on (its bucket
// asked for earlier).
func (mf *matchFinder) ahead8(pos int) {
	q := pos + aheadFirst
	h := mf.hash8Of(q)
	bucket := mf.hash8[h : h+uint32(mf.hash8Ways)]
	prefetch(unsafe.Pointer(&mf.hash8[mf.hash8Of(pos+aheadBuckets)]), mf.entryBytes(q, bucket[0]))
	if len(bucket) == hash8MaxWays {
		at := mf.entryBytes(q, bucket[1])
		prefetch(at, at)
	}
}

// entryBytes returns the bytes of the position at table entry e, for
// position q: q's own where e is empty or too far back.
func (mf *matchFinder) entryBytes(q int, e uint32) unsafe.Pointer {
	if delta := uint32(q) + mf.base - e; delta <= mf.dictSize && int(delta) <= q {
		q -= int(delta)
	}
	return unsafe.Pointer(&mf.buf[q])
}

// reset prepares the finder for block buf with the given largest distance
// and settings, reusing its tables where they are large enough.
func (mf *matchFinder) reset(buf []byte, dictSize uint32, f finder) {
	mf.kind, mf.niceLen, mf.depth, mf.hash8Ways = f.kind, f.niceLen, f.depth, f.hash8Ways
	mf.buf, mf.pos, mf.dictSize = buf, 0, dictSize
	mf.cyclicSize = dictSize + 1
	mf.cyclicPos = 0
	mf.hash4Bits = hash4BitsFor(dictSize)
	mf.hash2 = sizedTable(mf.hash2, hash2Size)
	mf.hash3 = sizedTable(mf.hash3, hash3Size)
	mf.hash4 = sizedTable(mf.hash4, 1<<mf.hash4Bits)
	if mf.hash8Ways > 0 {
		// As many entries as the four-byte table.
		mf.hash8Bits = mf.hash4Bits - bits.Len(uint(mf.hash8Ways)) + 1
		mf.hash8 = sizedTable(mf.hash8, 1<<mf.hash4Bits)
	}
	if uint64(mf.next)+2*uint64(mf.cyclicSize)+uint64(len(buf)) >= 1<<32 {
		// The values would wrap: start again from empty tables.
		clear(mf.hash2[:cap(mf.hash2)])
		clear(mf.hash3[:cap(mf.hash3)])
		clear(mf.hash4[:cap(mf.hash4)])
		clear(mf.hash8[:cap(mf.hash8)])
		mf.next = 0
	}
	mf.base = mf.next + mf.cyclicSize
	mf.next = mf.base + uint32(len(buf))
	links := int(mf.cyclicSize)
	if mf.kind == bt4 {
		links *= 2
	}
	// The links need no clearing either: a link is only read for a position
	// less than dictSize back, which was visited in this block and wrote it.
	if cap(mf.son) < links {
		mf.son = make([]uint32, links)
		adviseHugePages(mf.son)
	}
	mf.son = mf.son[:links]
}

// sizedTable returns t with n entries, allocating (zeroed) if it is smaller.
func sizedTable(t []uint32, n int) []uint32 {
	if cap(t) < n {
		t = make([]uint32, n)
		adviseHugePages(t)
		return t
	}
	return t[:n]
}

// seek makes pos the next position to visit, the first of a finder just
// reset: a helper's, which starts inside the block (split.go).
func (mf *matchFinder) seek(pos int) { mf.pos = pos }

// catchUp brings the finder from its position to pos (not before it) as
// if it had visited every position in between: it visits the last dictSize
// of them without searching and passes over the others, which no search
// from pos on can reach. A position it passes over leaves its link slot
// stale, but no search reaches that slot either: the slots of the positions
// it visits are written before any search reads them, and the older
// positions are more than dictSize back.
func (mf *matchFinder) catchUp(pos int) {
	if n := pos - mf.pos - int(mf.dictSize); n > 0 {
		mf.pos += n
		mf.cyclicPos = uint32((uint64(mf.cyclicPos) + uint64(n)) % uint64(mf.cyclicSize))
	}
	if pos > mf.pos {
		mf.warmUp(pos - mf.pos)
	}
}

// extend makes buf, which starts with the finder's buffer, its buffer, once
// it visited every position of the old one (hash chains only). The last
// three positions of the old buffer had too few bytes to be linked in (the
// last seven, to be put in the eight-byte table); with buf they have, and
// they are linked in now, in order, as if buf had been the buffer all
// along: no position after them was linked yet.
func (mf *matchFinder) extend(buf []byte) {
	old := len(mf.buf)
	mf.next += uint32(len(buf) - old)
	mf.buf = buf
	for p := max(old-3, 0); p < old && p+4 <= len(buf); p++ {
		mf.linkChain(p, mf.cyclicIndex(uint32(old-p)))
	}
	for p := max(old-7, 0); p < old && p+8 <= len(buf); p++ {
		mf.putHash8(p)
	}
}

// linkChain links position pos (with four bytes of the buffer from it) into
// the hash chains: slot, its link, gets its bucket's last position, and the
// buckets get pos.
func (mf *matchFinder) linkChain(pos int, slot uint32) {
	v := binary.LittleEndian.Uint32(mf.buf[pos:])
	cur := uint32(pos) + mf.base
	h4 := mf.hash4Of(v)
	mf.son[slot] = mf.hash4[h4]
	mf.hash2[v&0xffff], mf.hash3[hash3Of(v)], mf.hash4[h4] = cur, cur, cur
}

// warmTo resets the finder for block buf and visits the dictionary's
// length of positions before from (without searching), asking stop (if
// set) before each stopCheck of them: false if it said to stop.
func (mf *matchFinder) warmTo(buf []byte, dictSize uint32, f finder, from int, stop func() bool) bool {
	return mf.warmWindow(buf, dictSize, f, from, int(dictSize), f.depth, stop)
}

// warmWindow is warmTo visiting only the window positions before from (at
// most the dictionary's length), with trees at the given depth: shallower
// than f's costs less, and finds less in the window later.
func (mf *matchFinder) warmWindow(buf []byte, dictSize uint32, f finder, from, window int, depth uint32, stop func() bool) bool {
	mf.reset(buf, dictSize, f)
	mf.seek(max(0, from-min(window, int(dictSize))))
	mf.depth = depth
	defer func() { mf.depth = f.depth }()
	for mf.pos < from {
		if stop != nil && stop() {
			return false
		}
		mf.warmUp(min(from-mf.pos, stopCheck))
	}
	return true
}

// release drops the reference to the block.
func (mf *matchFinder) release() { mf.buf = nil }

func (mf *matchFinder) advance() {
	mf.pos++
	mf.cyclicPos++
	if mf.cyclicPos == mf.cyclicSize {
		mf.cyclicPos = 0
	}
}

// cyclicIndex is the link slot of the position delta bytes back.
func (mf *matchFinder) cyclicIndex(delta uint32) uint32 {
	if delta > mf.cyclicPos {
		return mf.cyclicPos - delta + mf.cyclicSize
	}
	return mf.cyclicPos - delta
}

// extendMatch returns the length of the common prefix of buf[p:] and
// buf[q:], knowing the first l bytes agree, up to limit (q+limit <= len(buf)).
func extendMatch(buf []byte, p, q, l, limit int) int {
	for l+8 <= limit {
		x := binary.LittleEndian.Uint64(buf[p+l:]) ^ binary.LittleEndian.Uint64(buf[q+l:])
		if x != 0 {
			return l + bits.TrailingZeros64(x)>>3
		}
		l += 8
	}
	for l < limit && buf[p+l] == buf[q+l] {
		l++
	}
	return l
}

// repLen returns how many of the bytes at pos (limit at most, and at least
// two available) repeat the bytes dist back: 0 if fewer than two do, or if
// dist reaches before the block.
func repLen(buf []byte, pos int, dist uint32, limit int) int {
	if !repStarts(buf, pos, dist) {
		return 0
	}
	return repLenAfter(buf, pos, dist, limit)
}

// repStarts is repLen's first test: whether the byte at pos repeats the
// byte dist back (and dist stays in the block). It is small enough to be
// inlined, so the parsers' loops over the recent distances, most of which
// fail it, call it and then repLenAfter instead of repLen.
func repStarts(buf []byte, pos int, dist uint32) bool {
	return int(dist) <= pos && buf[pos-int(dist)] == buf[pos]
}

// repLenAfter is the rest of repLen, where repStarts said yes.
func repLenAfter(buf []byte, pos int, dist uint32, limit int) int {
	q := pos - int(dist)
	if buf[q+1] != buf[pos+1] {
		return 0
	}
	return extendMatch(buf, q, pos, 2, limit)
}

// find visits the next position and returns its matches: increasing lengths,
// each with the smallest distance found for it. The longest is extended past
// niceLen up to matchLenMax.
func (mf *matchFinder) find() []matchPair {
	pos := mf.pos
	buf := mf.buf
	avail := min(len(buf)-pos, matchLenMax)
	if avail < 4 {
		mf.advance()
		return nil
	}
	mf.ahead(pos)
	lenLimit := min(avail, mf.niceLen)
	v := binary.LittleEndian.Uint32(buf[pos:])
	cur := uint32(pos) + mf.base
	h2 := v & 0xffff
	h3, h4 := hash3Of(v), mf.hash4Of(v)
	d2 := cur - mf.hash2[h2]
	d3 := cur - mf.hash3[h3]
	head := mf.hash4[h4]
	mf.hash2[h2], mf.hash3[h3], mf.hash4[h4] = cur, cur, cur
	long := mf.putHash8(pos)

	n := 0
	best := 0
	if d2 <= mf.dictSize { // the table is exact: two bytes agree
		best = 2
		mf.matches[0] = matchPair{2, d2}
		n = 1
	}
	if d3 != d2 && d3 <= mf.dictSize && binary.LittleEndian.Uint32(buf[pos-int(d3):])<<8 == v<<8 {
		best = 3
		mf.matches[n] = matchPair{3, d3}
		n++
		d2 = d3
	}
	if n > 0 {
		best = extendMatch(buf, pos-int(d2), pos, best, lenLimit)
		mf.matches[n-1].len = uint32(best)
		if best >= lenLimit {
			if mf.kind == hc4 {
				mf.son[mf.cyclicPos] = head
			} else {
				mf.btSearch(head, lenLimit, lenLimit, 0)
			}
			mf.advance()
			return mf.extendLongest(n)
		}
	}
	best = max(best, 3)
	if mf.kind == hc4 {
		n = mf.hcSearch(head, lenLimit, best, n)
		for _, e := range long[:mf.hash8Ways] {
			n = mf.hash8Match(e, n, lenLimit)
		}
	} else {
		n = mf.btSearch(head, lenLimit, best, n)
	}
	mf.advance()
	return mf.extendLongest(n)
}

// extendLongest extends the longest of the n matches past niceLen, where
// the search stopped, up to matchLenMax.
func (mf *matchFinder) extendLongest(n int) []matchPair {
	if n == 0 {
		return nil
	}
	last := &mf.matches[n-1]
	if int(last.len) == mf.niceLen {
		pos := mf.pos - 1
		last.len = uint32(extendMatch(mf.buf, pos-int(last.dist), pos, int(last.len), min(len(mf.buf)-pos, matchLenMax)))
	}
	return mf.matches[:n]
}

// hcSearch links the current position into its hash chain and walks the
// chain from head for matches longer than best, appending them after the n
// already found.
func (mf *matchFinder) hcSearch(head uint32, lenLimit, best, n int) int {
	buf := mf.buf
	pos := mf.pos
	cur := uint32(pos) + mf.base
	mf.son[mf.cyclicPos] = head
	if best >= lenLimit {
		return n
	}
	for depth := mf.depth; depth > 0; depth-- {
		delta := cur - head
		if delta > mf.dictSize {
			break
		}
		p := pos - int(delta)
		if buf[p+best] == buf[pos+best] && buf[p] == buf[pos] {
			l := extendMatch(buf, p, pos, 1, lenLimit)
			if l > best {
				best = l
				mf.matches[n] = matchPair{uint32(l), delta}
				n++
				if l >= lenLimit {
					break
				}
			}
		}
		head = mf.son[mf.cyclicIndex(delta)]
	}
	return n
}

// btSearch inserts the current position at the root of its binary tree,
// splitting the old tree into the smaller and larger subtrees on the way
// down, and records the matches longer than best met there after the n
// already found. With best = lenLimit it only inserts.
func (mf *matchFinder) btSearch(head uint32, lenLimit, best, n int) int {
	buf := mf.buf
	pos := mf.pos
	cur := uint32(pos) + mf.base
	son := mf.son
	ptr0 := int(mf.cyclicPos)*2 + 1 // where the next larger-subtree link goes
	ptr1 := int(mf.cyclicPos) * 2   // where the next smaller-subtree link goes
	len0, len1 := 0, 0
	for depth := mf.depth; ; depth-- {
		delta := cur - head
		if depth == 0 || delta > mf.dictSize {
			son[ptr0], son[ptr1] = 0, 0
			return n
		}
		pair := int(mf.cyclicIndex(delta)) * 2
		p := pos - int(delta)
		l := min(len0, len1)
		a, b := buf[p+l], buf[pos+l]
		if a == b {
			l = extendMatch(buf, p, pos, l+1, lenLimit)
			if l > best {
				best = l
				mf.matches[n] = matchPair{uint32(l), delta}
				n++
			}
			if l >= lenLimit {
				// Equal up to the limit: the position takes over the
				// candidate's subtrees.
				son[ptr1], son[ptr0] = son[pair], son[pair+1]
				return n
			}
			a, b = buf[p+l], buf[pos+l]
		}
		if a < b {
			son[ptr1] = head
			ptr1 = pair + 1
			head = son[ptr1]
			len1 = l
		} else {
			son[ptr0] = head
			ptr0 = pair
			head = son[ptr0]
			len0 = l
		}
	}
}

// warmAhead is how far ahead warm prefetches the buckets.
const warmAhead = 64

// warm is skip for hash chains, faster where nothing is searched: it
// prefetches only the buckets warmAhead positions on (skip also asks for
// the candidates the searches ahead will read, loading links to find
// them). Measured on amd64 code with a 16 MiB dictionary:
// cmd/updeb-bench/README.md.
func (mf *matchFinder) warm(n int) {
	buf := mf.buf
	for end := mf.pos + n; mf.pos < end; mf.advance() {
		pos := mf.pos
		if canPrefetch && pos+warmAhead+8 <= len(buf) {
			v := binary.LittleEndian.Uint32(buf[pos+warmAhead:])
			prefetch(unsafe.Pointer(&mf.hash4[mf.hash4Of(v)]), unsafe.Pointer(&mf.hash3[hash3Of(v)]))
			if mf.hash8Ways > 0 {
				at := unsafe.Pointer(&mf.hash8[mf.hash8Of(pos+warmAhead)])
				prefetch(at, at)
			}
		}
		if len(buf)-pos >= 4 {
			mf.linkChain(pos, mf.cyclicPos)
			mf.putHash8(pos)
		}
	}
}

// warmUp visits the next n positions without searching: warm for hash
// chains, skip for trees.
func (mf *matchFinder) warmUp(n int) {
	if mf.kind == hc4 {
		mf.warm(n)
	} else {
		mf.skip(n)
	}
}

// skip visits the next n positions without searching: it only links them in.
func (mf *matchFinder) skip(n int) {
	buf := mf.buf
	for ; n > 0; n-- {
		pos := mf.pos
		avail := min(len(buf)-pos, matchLenMax)
		if avail < 4 {
			mf.advance()
			continue
		}
		mf.ahead(pos)
		v := binary.LittleEndian.Uint32(buf[pos:])
		cur := uint32(pos) + mf.base
		h3, h4 := hash3Of(v), mf.hash4Of(v)
		head := mf.hash4[h4]
		mf.hash2[v&0xffff], mf.hash3[h3], mf.hash4[h4] = cur, cur, cur
		if mf.kind == hc4 {
			mf.son[mf.cyclicPos] = head
			mf.putHash8(pos)
		} else {
			l := min(avail, mf.niceLen)
			mf.btSearch(head, l, l, 0)
		}
		mf.advance()
	}
}
