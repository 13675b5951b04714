package xzpar

import "strconv"

// LZMA2 framing, after the xz file format and liblzma's decoder: the data is
// a sequence of chunks, each either LZMA-coded (at most 2 MiB uncompressed
// and 64 KiB compressed, with its own range coder; control byte 0x80 plus
// reset bits) or stored (at most 64 KiB, control byte 1 or 2), ended by a 0
// byte. The model (state, distances, probabilities) carries over from one
// LZMA chunk to the next; a stored chunk does not touch it, so the LZMA chunk
// after one resets the state, and the encoder resets its model with it.

const (
	chunkMaxUnpacked = 1 << 21
	chunkMaxPacked   = 1 << 16
	storedMax        = 1 << 16
	// symbolMaxBytes bounds the range coder output of one symbol: at most 22
	// modelled bits (6.05 bits of output each at the lowest probability) and
	// 26 direct bits.
	symbolMaxBytes = 32

	// Chunk reset levels, bits 5-6 of an LZMA chunk's control byte.
	resetNone        = 0
	resetState       = 1
	resetStateProps  = 2
	resetDictionary  = 3
	controlLZMA      = 0x80
	controlStoredNew = 1 // stored chunk that resets the dictionary
	controlStored    = 2
	controlEnd       = 0
)

// Mode selects the LZMA parser and match finder.
type Mode uint8

const (
	// ModeFast is lazy matching with hash chains, like xz -1 to -3.
	ModeFast Mode = iota
	// ModeBest is price-based optimal parsing, like xz -4 to -9, with binary
	// trees or hash chains (see finderFor): 1.7 to 2.1 times the CPU of
	// ModeFast for 4 to 8% smaller output on binaries.
	ModeBest
)

func (m Mode) String() string {
	switch m {
	case ModeFast:
		return "fast"
	case ModeBest:
		return "best"
	}
	return "Mode(" + strconv.Itoa(int(m)) + ")"
}

// finder is a match finder and its search limits: a search stops at a match
// of niceLen bytes or after depth candidates.
type finder struct {
	kind      mfKind
	niceLen   int
	depth     uint32
	hash8Ways int // positions per bucket of the eight-byte table (hc4)
}

// The finders, measured on Go binaries (cmd/updeb-bench/README.md): hash
// chains searched three or four deep are as good as deeper searches at a
// fraction of the CPU, three deep for the optimal parser, which searches at
// every position (four deep: 0.4% smaller for 12% more CPU);
// binary trees find 3 to 5% smaller output for the optimal parser at about
// 40% more CPU and twice the memory per dictionary byte. The optimal
// parser's chains also ask the eight-byte table (two positions a bucket):
// on a 32 MiB block of amd64 code 2.5% smaller, on Go source 8.3% smaller
// (where three candidates of a chain missed most long matches), for 15 to
// 30% more CPU. The fast parser on binaries uses the same finder: against
// chains four deep without the table, 2.2% smaller on C and C++ libraries
// and 0.6% on Go binaries, whole packages in about the same time (per 32
// MiB block -8% to +31% CPU in one round; four deep with the table: 2.4%
// and 0.7% for 20 to 26% more).
//
// Text (blocks textLike says are text) repeats longer strings further
// apart, and gains more from a longer search: the text finders, measured
// on 27 MB of Go source in one block against the binary ones: the fast
// parser 7.9% smaller for 40% more CPU (the eight-byte table and a nice
// length of 128), the optimal parser's trees (8 MB of it) 3.1% smaller for
// 20% more (a nice length of 64, 24 deep: xz -6's size). A larger ModeBest
// text block is coded in pieces with trees too (textPieces), or where the
// pieces would be small, with chains 2.4% smaller for 30% more CPU (a nice
// length of 64, four deep).
var (
	chainFinder     = finder{hc4, 32, 3, 2}
	bestChainFinder = chainFinder // the same finder for both parsers
	treeFinder      = finder{bt4, 32, 12, 0}

	textChainFinder     = finder{hc4, 128, 4, 2}
	textBestChainFinder = finder{hc4, 64, 4, 2}
	textTreeFinder      = finder{bt4, 64, 24, 0}
)

// finderFor returns the finder of a block whose dictionary is dict bytes in
// a writer configured for dictCap, and which is text (textLike) or not.
// ModeBest uses binary trees where they fit in the memory the hash chains
// take at the full dictionary (a dictionary of at most half of dictCap:
// small packages and last blocks), hash chains elsewhere, so the memory
// bound is that of the chains (a text block coded in pieces gets trees:
// each piece's dictionary is at most half of dictCap). Every finder's
// tables fit in EncoderMemory.
func finderFor(mode Mode, dict, dictCap int, text bool) finder {
	switch {
	case mode == ModeFast && text:
		return textChainFinder
	case mode == ModeFast:
		return chainFinder
	case text && 2*dict <= dictCap:
		return textTreeFinder
	case text:
		return textBestChainFinder
	case 2*dict <= dictCap:
		return treeFinder
	}
	return bestChainFinder
}

// inPieces reports whether a ModeBest text block whose dictionary is dict
// bytes, in a writer configured for dictCap, is coded in pieces
// (textPieces): where trees do not fit the whole block (its dictionary is
// more than half of dictCap) and the pieces are long enough to gain (half
// of dictCap is at least bestSegment).
func inPieces(dict, dictCap int) bool {
	return 2*dict > dictCap && dictCap/2 >= bestSegment
}

// textSample and textStride: textLike reads the first textSample bytes of
// every textStride of a block (a sixteenth of it).
const (
	textSample = 4 << 10
	textStride = 64 << 10
)

// byteClass sorts bytes for textLike: 0 for NUL, 1 for the control
// characters text does not use (all but tab, line feed, carriage return,
// form feed and escape), 2 for the rest.
var byteClass = func() (c [256]uint8) {
	for b := range c {
		switch {
		case b == 0:
			c[b] = 0
		case (b < 0x20 && b != '\t' && b != '\n' && b != '\r' && b != '\f' && b != 0x1b) || b == 0x7f:
			c[b] = 1
		default:
			c[b] = 2
		}
	}
	return c
}()

// textLike reports whether block in looks like text: in a sample of it
// (textSample bytes of every textStride), fewer than one byte in 64 among
// those that are not NUL is a control character text does not use. NULs
// are left out because tar headers and the padding of small files are
// mostly NUL. Machine code and compressed data have 10 to 25% of them
// (measured on the bench payloads: 16 to 25% in every 32 MiB of Go
// binaries), source code, scripts and manifests, UTF-8 included, next to
// none (0.00% in 27 MB of a tar of Go source). The answer depends only on
// the bytes, so the output stays reproducible.
func textLike(in []byte) bool {
	var control, other int
	for off := 0; off < len(in); off += textStride {
		for _, b := range in[off:min(len(in), off+textSample)] {
			switch byteClass[b] {
			case 1:
				control++
			case 2:
				other++
			}
		}
	}
	return other > 0 && 64*control < other+control
}

// stopCheck is how many bytes of input an encoder codes or visits at most
// between two questions to its stopped. It asked at each chunk's end before,
// and chunks end at most every 2 MiB of input: on text that compresses well
// one took best's trees 2 s on a busy machine, and a cancel (a signal, a
// failed build) waited that long. Best
// on text, the slowest coder, takes about 0.45 µs a byte, so a cancel now
// stops an encoder within about 30 ms of its work.
const stopCheck = 64 << 10

// lzmaEncoder encodes blocks into LZMA2 data; one per worker, reused so that
// its tables are allocated once.
type lzmaEncoder struct {
	mode Mode
	mf   matchFinder
	m    model
	rc   rangeEncoder
	fast fastParser
	opt  *optimalParser
	// chunk is the range coder's buffer for one chunk.
	chunk []byte
	// stopped, when set, is asked every stopCheck bytes of input; once it
	// says yes, encode gives up and returns nil.
	stopped func() bool
}

func newLZMAEncoder(mode Mode) *lzmaEncoder {
	e := &lzmaEncoder{chunk: make([]byte, 0, chunkMaxPacked+symbolMaxBytes)}
	e.fast.mf = &e.mf
	e.setMode(mode)
	return e
}

// setMode makes e encode in mode: a pool's encoders serve writers of
// either mode, and the optimal parser is allocated when first needed.
func (e *lzmaEncoder) setMode(mode Mode) {
	e.mode = mode
	if mode == ModeBest && e.opt == nil {
		e.opt = newOptimalParser(&e.mf, &e.m)
	}
}

// chunkWriter tracks the chunk being coded and appends finished chunks to out.
type chunkWriter struct {
	out      []byte
	start    int  // block offset of the chunk's first byte
	first    bool // no chunk written yet: the next one resets the dictionary
	needProp bool // no LZMA chunk yet: the next one sets the properties
	reset    bool // a stored chunk was written: the next LZMA chunk resets the state
}

// encode appends the LZMA2 data of block in, with matches at most dictSize
// back found by f, to dst, end marker included. It returns nil if e.stopped
// said to stop. With sp (ModeFast only), helpers may choose the symbols of
// parts of the block (split.go): the bytes are the same.
func (e *lzmaEncoder) encode(dst, in []byte, dictSize uint32, f finder, sp *splitter) []byte {
	defer e.mf.release()
	if dst = e.encodeRange(dst, in, 0, dictSize, f, sp); dst == nil {
		return nil
	}
	return append(dst, controlEnd)
}

// encodeRange appends the LZMA2 chunks of in[from:], the last part of a
// block that starts with in, to dst, without the end marker; nil if
// e.stopped said to stop. From 0 it is the whole block. From inside the
// block it is a segment (segment.go): the finder first visits up to
// dictSize positions before from on fresh tables, the model starts from its
// reset and the first LZMA chunk resets the state (the decoder keeps the
// dictionary), so the chunks depend only on in, from, dictSize and f. The
// finder keeps in until e.mf.release.
func (e *lzmaEncoder) encodeRange(dst, in []byte, from int, dictSize uint32, f finder, sp *splitter) []byte {
	if !e.mf.warmTo(in, dictSize, f, from, e.stopped) {
		return nil
	}
	return e.codeRange(dst, in, from, dictSize, sp)
}

// encodePiece is encodeRange for a piece of a text block (textPieces):
// its finder, a fresh tree, first visits only the pieceWarm positions
// before from, pieceWarmDepth deep, so the chunks depend only on those
// bytes and in[from:].
func (e *lzmaEncoder) encodePiece(dst, in []byte, from int, dictSize uint32, f finder) []byte {
	if !e.mf.warmWindow(in, dictSize, f, from, pieceWarm, pieceWarmDepth, e.stopped) {
		return nil
	}
	return e.codeRange(dst, in, from, dictSize, nil)
}

// continueRange is encodeRange for the segment that follows the last one e
// coded (its finder's buffer ends at from): with hash chains, a finder that
// visited every position before from finds what a fresh one warmed on the
// dictionary before from finds, so it goes on as it is, without the warm-up.
func (e *lzmaEncoder) continueRange(dst, in []byte, from int, dictSize uint32, f finder) []byte {
	mf := &e.mf
	if f.kind != hc4 || len(mf.buf) != from || mf.pos != from ||
		uint64(mf.base)+uint64(mf.cyclicSize)+uint64(len(in)) >= 1<<32 {
		return e.encodeRange(dst, in, from, dictSize, f, nil)
	}
	mf.extend(in)
	return e.codeRange(dst, in, from, dictSize, nil)
}

// codeRange codes in[from:] from the finder's position, from.
func (e *lzmaEncoder) codeRange(dst, in []byte, from int, dictSize uint32, sp *splitter) []byte {
	e.m.reset()
	e.fast.reset()
	best := e.mode == ModeBest
	if best {
		e.opt.reset(dictSize)
	}
	e.rc.reset(e.chunk)
	cw := chunkWriter{out: dst, start: from, first: from == 0, needProp: true}
	if sp != nil {
		defer sp.finish()
	}
	nextCheck := from + stopCheck
	for pos := from; pos < len(in); {
		if pos >= nextCheck {
			if e.stopped != nil && e.stopped() {
				return nil
			}
			nextCheck = pos + stopCheck
		}
		var length, dist uint32
		switch {
		case best:
			length, dist = e.opt.next(pos)
		case sp != nil:
			length, dist = sp.next(pos)
		default:
			length, dist = e.fast.next(pos, &e.m.reps)
		}
		if pos+int(length)-cw.start > chunkMaxUnpacked || e.rc.pending()+symbolMaxBytes > chunkMaxPacked {
			e.endChunk(&cw, in, pos)
			if sp != nil {
				sp.reset = sp.reset || cw.reset // a stored chunk reset the model
				sp.poll(pos)
			}
		}
		e.m.encodeSymbol(&e.rc, in, pos, length, dist)
		pos += int(length)
		if sp != nil {
			sp.after(pos)
		}
	}
	if cw.start < len(in) {
		e.endChunk(&cw, in, len(in))
	}
	if cw.out == nil {
		cw.out = []byte{}
	}
	return cw.out
}

// endChunk finishes the chunk of in[cw.start:end]: LZMA-coded if that is
// smaller, else stored (and the model reset, as the decoder will).
func (e *lzmaEncoder) endChunk(cw *chunkWriter, in []byte, end int) {
	e.rc.flush()
	packed := e.rc.out
	unpacked := in[cw.start:end]
	storedCost := len(unpacked) + 3*((len(unpacked)+storedMax-1)/storedMax)
	if len(packed)+6 < storedCost {
		level := resetNone
		switch {
		case cw.first:
			level = resetDictionary
		case cw.needProp:
			level = resetStateProps
		case cw.reset:
			level = resetState
		}
		u, c := len(unpacked)-1, len(packed)-1
		cw.out = append(cw.out, byte(controlLZMA|level<<5|u>>16), byte(u>>8), byte(u), byte(c>>8), byte(c))
		if level >= resetStateProps {
			cw.out = append(cw.out, propsByte)
		}
		cw.out = append(cw.out, packed...)
		cw.needProp, cw.reset = false, false
	} else {
		for p := unpacked; len(p) > 0; {
			k := min(len(p), storedMax)
			control := byte(controlStored)
			if cw.first {
				control = controlStoredNew
			}
			cw.out = append(cw.out, control, byte((k-1)>>8), byte(k-1))
			cw.out = append(cw.out, p[:k]...)
			p = p[k:]
			cw.first = false
		}
		e.m.reset()
		cw.reset = true
	}
	cw.first = false
	cw.start = end
	e.rc.reset(e.chunk)
}
