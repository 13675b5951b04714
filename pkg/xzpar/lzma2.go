package xzpar

import (
	"fmt"
	"io"
)

// The LZMA2 decoder of the reader. It follows "The .xz File Format" and
// liblzma's rules to the letter, because a lenient decoder is how a corrupt
// or hostile file gets in: every chunk's control byte, reset order and
// properties are checked; an LZMA chunk must decode to exactly its
// uncompressed size from exactly its compressed bytes, with the range coder
// finished (code 0) at the end and no end-of-payload marker (LZMA2 has
// none); every match distance must lie inside the data decoded since the
// last dictionary reset and inside the dictionary; a match may not run past
// its chunk.

const (
	lzmaStates     = 12
	lzmaPosBitsMax = 4
	lzmaLCLPMax    = 4 // LZMA2's limit on lc+lp
	lzmaProbInit   = 1 << 10
	lzmaMinMatch   = 2
	lzmaDistStates = 4
	lzmaEndMarker  = 1<<32 - 1 // the distance of LZMA's end-of-payload marker
	lzmaAlignBits  = 4
	lzmaDistModel  = 14  // first distance slot coded with direct bits and align
	lzmaFullDists  = 128 // distances below this are coded with probabilities
	lzmaMinDict    = 4096
)

// lzmaProps are lc, lp and pb.
type lzmaProps struct{ lc, lp, pb uint }

// decodeLZMAProps decodes the properties byte of an LZMA2 chunk:
// (pb*5+lp)*9+lc, with lc+lp at most 4.
func decodeLZMAProps(b byte) (lzmaProps, error) {
	if b > (4*5+4)*9+8 {
		return lzmaProps{}, fmt.Errorf("LZMA properties byte %#02x is out of range", b)
	}
	p := lzmaProps{lc: uint(b % 9), lp: uint(b / 9 % 5), pb: uint(b / 45)}
	if p.lc+p.lp > lzmaLCLPMax {
		return lzmaProps{}, fmt.Errorf("LZMA properties lc=%d lp=%d pb=%d: lc+lp above %d", p.lc, p.lp, p.pb, lzmaLCLPMax)
	}
	return p, nil
}

// decodeDictCap decodes LZMA2's dictionary-size property byte (at most 40).
func decodeDictCap(b byte) int64 {
	if b == 40 {
		return 1<<32 - 1
	}
	return (2 | int64(b)&1) << (11 + b/2)
}

// lenCoder decodes match lengths (minus lzmaMinMatch).
type lenCoder struct {
	choice, choice2 uint16
	low, mid        [1 << lzmaPosBitsMax][8]uint16
	high            [256]uint16
}

// lzmaProbs are the probabilities of an LZMA state but the literal ones.
type lzmaProbs struct {
	isMatch    [lzmaStates << lzmaPosBitsMax]uint16
	isRep      [lzmaStates]uint16
	isRepG0    [lzmaStates]uint16
	isRepG1    [lzmaStates]uint16
	isRepG2    [lzmaStates]uint16
	isRep0Long [lzmaStates << lzmaPosBitsMax]uint16
	distSlot   [lzmaDistStates][64]uint16
	distSpec   [lzmaFullDists - lzmaDistModel]uint16
	align      [1 << lzmaAlignBits]uint16
	matchLen   lenCoder
	repLen     lenCoder
}

// lzmaState is what a state reset clears: the probabilities, the state and
// the last four distances.
type lzmaState struct {
	lzmaProbs
	literal [0x300 << lzmaLCLPMax]uint16
	state   uint32
	rep     [4]uint32
}

// lzmaInit is a state as a reset leaves it, every probability at
// lzmaProbInit: reset copies it.
var lzmaInit = func() *lzmaState {
	s := new(lzmaState)
	for _, ps := range [][]uint16{s.isMatch[:], s.isRep[:], s.isRepG0[:], s.isRepG1[:], s.isRepG2[:], s.isRep0Long[:],
		s.distSpec[:], s.align[:], s.literal[:]} {
		for i := range ps {
			ps[i] = lzmaProbInit
		}
	}
	for i := range s.distSlot {
		for j := range s.distSlot[i] {
			s.distSlot[i][j] = lzmaProbInit
		}
	}
	for _, l := range []*lenCoder{&s.matchLen, &s.repLen} {
		l.choice, l.choice2 = lzmaProbInit, lzmaProbInit
		for i := range l.low {
			for j := range l.low[i] {
				l.low[i][j], l.mid[i][j] = lzmaProbInit, lzmaProbInit
			}
		}
		for i := range l.high {
			l.high[i] = lzmaProbInit
		}
	}
	return s
}()

// reset is a state reset for properties p. It copies the probabilities
// instead of setting each, and of the literal ones only those p's lc and
// lp use (0x300 << (lc+lp)), as liblzma does: a chunk of one byte may
// reset the state, and setting all 14,000 probabilities for each made a
// file of such chunks decode 60 times slower than xz -d does.
func (s *lzmaState) reset(p lzmaProps) {
	s.lzmaProbs = lzmaInit.lzmaProbs
	n := 0x300 << (p.lc + p.lp)
	copy(s.literal[:n], lzmaInit.literal[:n])
	s.state = 0
	s.rep = [4]uint32{}
}

// lzma2Reader decodes the LZMA2 data of one block from r. Read returns
// io.EOF after the end-of-data control byte; a truncated input gives
// io.ErrUnexpectedEOF; other errors describe the corruption.
type lzma2Reader struct {
	r io.Reader

	// The dictionary: a ring of len(buf) bytes (a multiple of 16, as
	// liblzma's, so that positions modulo 2^pb count from the last
	// dictionary reset). buf[start:pos] is decoded and not yet returned;
	// full is how many bytes before pos are history (since the last reset).
	buf        []byte
	start, pos int
	full       int

	off          int64 // bytes of LZMA2 data read
	chunks       int   // chunks started, for messages
	chunkOff     int64 // where the current chunk starts in the data
	chunkSize    int   // uncompressed bytes of the current chunk
	chunkLeft    int   // of those, still to produce
	uncompressed bool  // the current chunk is stored, not LZMA
	needDict     bool  // the next chunk must reset the dictionary
	needProps    bool  // the next LZMA chunk must set properties
	pending      int   // bytes of a match not yet copied (the window filled up)
	err          error // sticky

	props lzmaProps
	s     *lzmaState // kept across blocks: a block's reset does not copy it

	// The range decoder, on the current chunk's compressed bytes.
	data      []byte
	ipos      int
	rng, code uint32
}

// reset prepares z for the LZMA2 data of a new block, read from r, with a
// dictionary of dictCap bytes (rounded up to 4 KiB and to a multiple of 16,
// as liblzma does: distances up to that are valid). The buffers of the
// previous block are reused when they are large enough.
func (z *lzma2Reader) reset(r io.Reader, dictCap int64) {
	size := int((max(dictCap, lzmaMinDict) + 15) &^ 15)
	buf, data := z.buf, z.data
	if cap(buf) < size {
		buf = make([]byte, size)
	}
	if data == nil {
		data = make([]byte, 0, 1<<16)
	}
	s := z.s // the probabilities are set by the first LZMA chunk's reset
	if s == nil {
		s = new(lzmaState)
	}
	*z = lzma2Reader{r: r, buf: buf[:size], data: data, needDict: true, needProps: true, s: s}
}

func (z *lzma2Reader) Read(p []byte) (int, error) {
	for {
		if z.start < z.pos {
			n := copy(p, z.buf[z.start:z.pos])
			z.start += n
			return n, nil
		}
		if z.err != nil {
			return 0, z.err
		}
		if len(p) == 0 {
			return 0, nil
		}
		z.err = z.fill()
	}
}

// lzma2Error is an error about the LZMA2 data: which chunk, where its
// header starts in the LZMA2 data, and what is wrong.
type lzma2Error struct {
	chunk int
	off   int64
	msg   string
}

func (e *lzma2Error) Error() string {
	return fmt.Sprintf("LZMA2 chunk %d: %s", e.chunk, e.msg)
}

func (z *lzma2Reader) corrupt(format string, args ...any) error {
	return &lzma2Error{chunk: z.chunks, off: z.chunkOff, msg: fmt.Sprintf(format, args...)}
}

// read reads exactly len(p) bytes of the LZMA2 data; io.ErrUnexpectedEOF
// if it ends first.
func (z *lzma2Reader) read(p []byte) error {
	n, err := io.ReadFull(z.r, p)
	z.off += int64(n)
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// fill decodes more data into the window; all earlier output was returned.
func (z *lzma2Reader) fill() error {
	if z.pos == len(z.buf) {
		z.pos, z.start = 0, 0
	}
	if z.chunkLeft == 0 {
		if err := z.startChunk(); err != nil {
			return err
		}
	}
	limit := min(len(z.buf), z.pos+z.chunkLeft)
	before := z.pos
	if z.uncompressed {
		if err := z.read(z.buf[z.pos:limit]); err != nil {
			return err
		}
		z.pos = limit
	} else if err := z.decode(limit); err != nil {
		return err
	}
	n := z.pos - before
	if z.uncompressed {
		z.full = min(z.full+n, len(z.buf))
	}
	z.chunkLeft -= n
	if z.chunkLeft == 0 && !z.uncompressed {
		return z.endChunk()
	}
	return nil
}

// startChunk reads the next chunk header (and an LZMA chunk's compressed
// data); io.EOF at the end-of-data control byte.
func (z *lzma2Reader) startChunk() error {
	z.chunks++
	z.chunkOff = z.off
	var h [6]byte
	if err := z.read(h[:1]); err != nil {
		return err
	}
	control := h[0]
	switch {
	case control == 0:
		return io.EOF
	case control == 1 || control >= 0xe0:
		z.needDict, z.needProps = false, true
		z.pos, z.start, z.full = 0, 0, 0
	case control > 2 && control < 0x80:
		return z.corrupt("control byte %#02x is reserved", control)
	case z.needDict:
		return z.corrupt("control byte %#02x does not reset the dictionary, which the first chunk must", control)
	}
	if control < 0x80 { // stored
		if err := z.read(h[1:3]); err != nil {
			return err
		}
		z.uncompressed = true
		z.chunkLeft = int(h[1])<<8 | int(h[2]) + 1
		z.chunkSize = z.chunkLeft
		return nil
	}
	hlen := 5
	if control >= 0xc0 {
		hlen = 6
	}
	if err := z.read(h[1:hlen]); err != nil {
		return err
	}
	switch {
	case control >= 0xc0:
		p, err := decodeLZMAProps(h[5])
		if err != nil {
			return z.corrupt("%v", err)
		}
		z.props, z.needProps = p, false
		z.s.reset(p)
	case z.needProps:
		return z.corrupt("control byte %#02x: an LZMA chunk after a dictionary reset must set new properties", control)
	case control >= 0xa0:
		z.s.reset(z.props)
	}
	z.uncompressed = false
	z.chunkLeft = int(control&0x1f)<<16 | int(h[1])<<8 | int(h[2]) + 1
	z.chunkSize = z.chunkLeft
	z.data = z.data[:int(h[3])<<8|int(h[4])+1]
	if err := z.read(z.data); err != nil {
		return err
	}
	if len(z.data) < 5 || z.data[0] != 0 {
		return z.corrupt("the range coder's first byte must be zero")
	}
	z.code = uint32(z.data[1])<<24 | uint32(z.data[2])<<16 | uint32(z.data[3])<<8 | uint32(z.data[4])
	z.rng, z.ipos = 1<<32-1, 5
	return nil
}

// endChunk checks that the LZMA chunk just decoded used exactly its
// compressed bytes and ended the range coder cleanly.
func (z *lzma2Reader) endChunk() error {
	if z.rng < 1<<24 {
		z.normalize()
	}
	switch {
	case z.ipos > len(z.data):
		return z.corrupt("the LZMA data needs more than its %d compressed bytes", len(z.data))
	case z.code != 0:
		return z.corrupt("the range coder is not finished where the chunk's %d uncompressed bytes end (an LZMA end-of-payload marker or other data follows; LZMA2 chunks have none)", z.chunkSize)
	case z.ipos != len(z.data):
		return z.corrupt("the LZMA data ends after %d of its %d compressed bytes", z.ipos, len(z.data))
	}
	return nil
}

// bit decodes one bit with probability p. The range coder is normalized
// before each bit, as liblzma does; endChunk does the last normalization.
func (z *lzma2Reader) bit(p *uint16) uint32 {
	if z.rng < 1<<24 {
		z.normalize()
	}
	v := uint32(*p)
	bound := (z.rng >> 11) * v
	if z.code < bound {
		z.rng = bound
		*p = uint16(v + (1<<11-v)>>5)
		return 0
	}
	z.rng -= bound
	z.code -= bound
	*p = uint16(v - v>>5)
	return 1
}

func (z *lzma2Reader) normalize() {
	z.rng <<= 8
	var c byte
	if z.ipos < len(z.data) {
		c = z.data[z.ipos]
	}
	z.ipos++ // past the end is caught at the next symbol and at the chunk's end
	z.code = z.code<<8 | uint32(c)
}

// tree decodes an n-bit symbol, most significant bit first.
func (z *lzma2Reader) tree(probs []uint16, n uint) uint32 {
	m := uint32(1)
	for range n {
		m = m<<1 | z.bit(&probs[m])
	}
	return m - 1<<n
}

// reverseTree decodes an n-bit symbol, least significant bit first, with
// probabilities probs[off+1:].
func (z *lzma2Reader) reverseTree(probs []uint16, off int, n uint) uint32 {
	m, sym := uint32(1), uint32(0)
	for i := range n {
		b := z.bit(&probs[off+int(m)])
		m = m<<1 | b
		sym |= b << i
	}
	return sym
}

// direct decodes n bits with probability one half.
func (z *lzma2Reader) direct(n uint) uint32 {
	var sym uint32
	for range n {
		if z.rng < 1<<24 {
			z.normalize()
		}
		z.rng >>= 1
		var b uint32
		if z.code >= z.rng {
			z.code -= z.rng
			b = 1
		}
		sym = sym<<1 | b
	}
	return sym
}

func (z *lzma2Reader) length(l *lenCoder, posState uint32) uint32 {
	if z.bit(&l.choice) == 0 {
		return z.tree(l.low[posState][:], 3)
	}
	if z.bit(&l.choice2) == 0 {
		return 8 + z.tree(l.mid[posState][:], 3)
	}
	return 16 + z.tree(l.high[:], 8)
}

// decode decodes LZMA symbols into buf until pos reaches limit (a match may
// stay pending if the window's end is reached first).
func (z *lzma2Reader) decode(limit int) error {
	s := z.s
	pbMask := uint32(1)<<z.props.pb - 1
	chunkEnd := z.pos + z.chunkLeft // may lie past limit
	if z.pending > 0 {
		z.copyMatch(limit)
	}
	for z.pos < limit {
		if z.ipos > len(z.data) {
			return z.corrupt("the LZMA data needs more than its %d compressed bytes", len(z.data))
		}
		posState := uint32(z.pos) & pbMask
		if z.bit(&s.isMatch[s.state<<lzmaPosBitsMax+posState]) == 0 {
			z.literal()
			continue
		}
		var n uint32
		if z.bit(&s.isRep[s.state]) == 0 {
			n = z.length(&s.matchLen, posState)
			dist := z.distance(n)
			if dist == lzmaEndMarker {
				return z.corrupt("an LZMA end-of-payload marker, which LZMA2 data must not contain")
			}
			if int64(dist) >= int64(z.full) {
				return z.corrupt("match distance %d reaches before the %d bytes decoded since the dictionary reset", int64(dist)+1, z.full)
			}
			s.rep[3], s.rep[2], s.rep[1], s.rep[0] = s.rep[2], s.rep[1], s.rep[0], dist
			s.state = map7(s.state, 7, 10)
		} else {
			if z.full == 0 {
				return z.corrupt("a repeated match before any data since the dictionary reset")
			}
			if z.bit(&s.isRepG0[s.state]) == 0 {
				if z.bit(&s.isRep0Long[s.state<<lzmaPosBitsMax+posState]) == 0 {
					s.state = map7(s.state, 9, 11)
					z.pending = 1 // room for one byte: pos < limit <= the chunk's end
					z.copyMatch(limit)
					continue
				}
			} else {
				var dist uint32
				if z.bit(&s.isRepG1[s.state]) == 0 {
					dist = s.rep[1]
				} else {
					if z.bit(&s.isRepG2[s.state]) == 0 {
						dist = s.rep[2]
					} else {
						dist = s.rep[3]
						s.rep[3] = s.rep[2]
					}
					s.rep[2] = s.rep[1]
				}
				s.rep[1] = s.rep[0]
				s.rep[0] = dist
			}
			n = z.length(&s.repLen, posState)
			s.state = map7(s.state, 8, 11)
		}
		if int(n)+lzmaMinMatch > chunkEnd-z.pos {
			return z.corrupt("a match of %d bytes runs past the chunk's end (%d bytes left)", int(n)+lzmaMinMatch, chunkEnd-z.pos)
		}
		z.pending = int(n) + lzmaMinMatch
		z.copyMatch(limit)
	}
	return nil
}

// map7 is the state after a match: a below 7 (after a literal), b otherwise.
func map7(state, a, b uint32) uint32 {
	if state < 7 {
		return a
	}
	return b
}

// literal decodes one literal byte at pos.
func (z *lzma2Reader) literal() {
	s := z.s
	var prev uint32
	if z.full > 0 {
		prev = uint32(z.buf[z.back(1)])
	}
	lc, lp := z.props.lc, z.props.lp
	litState := (uint32(z.pos)&(1<<lp-1))<<lc | prev>>(8-lc)
	probs := s.literal[0x300*litState : 0x300*litState+0x300]
	sym := uint32(1)
	if s.state < 7 {
		for sym < 0x100 {
			sym = sym<<1 | z.bit(&probs[sym])
		}
	} else {
		match := uint32(z.buf[z.back(int(s.rep[0])+1)])
		offset := uint32(0x100)
		for sym < 0x100 {
			match <<= 1
			matchBit := match & offset
			b := z.bit(&probs[offset+matchBit+sym])
			sym = sym<<1 | b
			if b != 0 {
				offset &= matchBit
			} else {
				offset &^= matchBit
			}
		}
	}
	z.buf[z.pos] = byte(sym)
	z.pos++
	if z.full < len(z.buf) {
		z.full++
	}
	switch {
	case s.state < 4:
		s.state = 0
	case s.state < 10:
		s.state -= 3
	default:
		s.state -= 6
	}
}

// back returns the index of the byte d positions before pos in the ring.
func (z *lzma2Reader) back(d int) int {
	i := z.pos - d
	if i < 0 {
		i += len(z.buf)
	}
	return i
}

// distance decodes a match distance (minus one) for a match of length n+2.
func (z *lzma2Reader) distance(n uint32) uint32 {
	s := z.s
	slot := z.tree(s.distSlot[min(n, lzmaDistStates-1)][:], 6)
	if slot < 4 {
		return slot
	}
	bits := uint(slot>>1) - 1
	dist := (2 | slot&1) << bits
	if slot < lzmaDistModel {
		return dist + z.reverseTree(s.distSpec[:], int(dist-slot)-1, bits)
	}
	dist += z.direct(bits-lzmaAlignBits) << lzmaAlignBits
	return dist + z.reverseTree(s.align[:], -1, lzmaAlignBits)
}

// copyMatch copies pending bytes from distance rep[0]+1, up to limit.
func (z *lzma2Reader) copyMatch(limit int) {
	src := z.back(int(z.s.rep[0]) + 1)
	n := 0
	if d := int(z.s.rep[0]) + 1; d >= z.pending && src+z.pending <= len(z.buf) && src < z.pos {
		// No overlap and no wrap: one copy.
		n = copy(z.buf[z.pos:limit], z.buf[src:src+z.pending])
		z.pos += n
		z.pending -= n
		z.full = min(z.full+n, len(z.buf))
		return
	}
	for n < z.pending && z.pos < limit {
		z.buf[z.pos] = z.buf[src]
		z.pos++
		n++
		if src++; src == len(z.buf) {
			src = 0
		}
	}
	z.pending -= n
	z.full = min(z.full+n, len(z.buf))
}
