package xzpar

import "math/bits"

// The LZMA probability model and symbol coding, after the LZMA specification.
// The literal context and position bits are fixed at xz's defaults, lc=3,
// lp=0, pb=2: measured on Go binaries, other values change the size by 0.3%
// at most, and constants let the compiler simplify the hot paths.

const (
	litContextBits = 3
	litPosBits     = 0
	posBits        = 2
	posStates      = 1 << posBits
	posMask        = posStates - 1
	// propsByte is the LZMA properties byte of an LZMA2 chunk: (pb*5+lp)*9+lc.
	propsByte = (posBits*5+litPosBits)*9 + litContextBits

	numStates = 12
	// litStates are the states below which the last symbol was a literal.
	litStates = 7

	matchLenMin = 2
	matchLenMax = 273

	lenLowSymbols  = 8
	lenMidSymbols  = 8
	lenHighSymbols = 256
	lenSymbols     = lenLowSymbols + lenMidSymbols + lenHighSymbols

	lenStates       = 4 // distance slots are coded in one of four contexts by length
	distSlotBits    = 6
	distSlots       = 1 << distSlotBits
	distModelStart  = 4
	distModelEnd    = 14
	fullDistances   = 1 << (distModelEnd / 2) // 128
	alignBits       = 4
	alignSize       = 1 << alignBits
	distSpecialSize = fullDistances - distModelEnd + 1
)

// lenModel codes match lengths minus matchLenMin: 0-7 with low[posState],
// 8-15 with mid[posState], 16-271 with high.
type lenModel struct {
	choice  prob
	choice2 prob
	low     [posStates][lenLowSymbols]prob
	mid     [posStates][lenMidSymbols]prob
	high    [lenHighSymbols]prob
}

// model is the coder state shared by encoder and decoder: the state machine,
// the four most recent distances and every adaptive probability.
type model struct {
	state uint32
	// reps are the four most recent match distances, most recent first,
	// counted from 1 (distance 1 is the previous byte).
	reps [4]uint32

	isMatch    [numStates][posStates]prob
	isRep      [numStates]prob
	isRepG0    [numStates]prob
	isRepG1    [numStates]prob
	isRepG2    [numStates]prob
	isRep0Long [numStates][posStates]prob
	literal    [1 << (litContextBits + litPosBits)][0x300]prob
	distSlot   [lenStates][distSlots]prob
	// distSpecial holds the reverse bit trees of distance slots 4 to 13,
	// each starting at its base distance minus its slot (as in the spec).
	distSpecial [distSpecialSize]prob
	align       [alignSize]prob
	matchLen    lenModel
	repLen      lenModel
}

// reset puts the model in its initial state, as an LZMA2 state reset does.
func (m *model) reset() {
	m.state = 0
	m.reps = [4]uint32{1, 1, 1, 1}
	fill := func(p []prob) {
		for i := range p {
			p[i] = probInit
		}
	}
	for i := range numStates {
		fill(m.isMatch[i][:])
		fill(m.isRep0Long[i][:])
	}
	fill(m.isRep[:])
	fill(m.isRepG0[:])
	fill(m.isRepG1[:])
	fill(m.isRepG2[:])
	for i := range m.literal {
		fill(m.literal[i][:])
	}
	for i := range m.distSlot {
		fill(m.distSlot[i][:])
	}
	fill(m.distSpecial[:])
	fill(m.align[:])
	for _, l := range []*lenModel{&m.matchLen, &m.repLen} {
		l.choice, l.choice2 = probInit, probInit
		for i := range posStates {
			fill(l.low[i][:])
			fill(l.mid[i][:])
		}
		fill(l.high[:])
	}
}

// State transitions after each kind of symbol.
func stateAfterLiteral(s uint32) uint32 {
	switch {
	case s < 4:
		return 0
	case s < 10:
		return s - 3
	default:
		return s - 6
	}
}

func stateAfterMatch(s uint32) uint32 {
	if s < litStates {
		return 7
	}
	return 10
}

func stateAfterRep(s uint32) uint32 {
	if s < litStates {
		return 8
	}
	return 11
}

func stateAfterShortRep(s uint32) uint32 {
	if s < litStates {
		return 9
	}
	return 11
}

// litProbs returns the literal probabilities for the byte at pos, whose
// predecessor is prev.
func (m *model) litProbs(prev byte) *[0x300]prob {
	return &m.literal[prev>>(8-litContextBits)]
}

// distSlotOf returns the distance slot of a zero-based distance d.
func distSlotOf(d uint32) uint32 {
	if d < distModelStart {
		return d
	}
	n := uint32(31 - bits.LeadingZeros32(d))
	return n<<1 | (d>>(n-1))&1
}

// lenState is the distance-slot context of a match of length l.
func lenState(l uint32) uint32 {
	return min(l-matchLenMin, lenStates-1)
}

// encodeLiteral codes b at a position whose previous byte is prev, most
// significant bit first, each with the probability of the bits before it
// (sym>>8 is 1 followed by them); after a match (state >= 7) it is coded
// against matchByte, the byte at rep0: while their bits agree, with the
// second or third 256 probabilities by matchByte's next bit. literalPrice
// walks the same probabilities.
func (m *model) encodeLiteral(rc *rangeEncoder, b, prev, matchByte byte) {
	probs := m.litProbs(prev)
	sym := uint32(b) | 0x100
	if m.state < litStates {
		for sym < 0x10000 {
			rc.encodeBit(&probs[sym>>8], sym>>7&1)
			sym <<= 1
		}
	} else {
		offset := uint32(0x100) // 0x100 while the bits agree, then 0
		match := uint32(matchByte)
		for sym < 0x10000 {
			match <<= 1
			rc.encodeBit(&probs[offset+match&offset+sym>>8], sym>>7&1)
			sym <<= 1
			offset &= ^(match ^ sym)
		}
	}
	m.state = stateAfterLiteral(m.state)
}

func (l *lenModel) encode(rc *rangeEncoder, length, posState uint32) {
	length -= matchLenMin
	switch {
	case length < lenLowSymbols:
		rc.encodeBit(&l.choice, 0)
		rc.encodeTree(l.low[posState][:], length, 3)
	case length < lenLowSymbols+lenMidSymbols:
		rc.encodeBit(&l.choice, 1)
		rc.encodeBit(&l.choice2, 0)
		rc.encodeTree(l.mid[posState][:], length-lenLowSymbols, 3)
	default:
		rc.encodeBit(&l.choice, 1)
		rc.encodeBit(&l.choice2, 1)
		rc.encodeTree(l.high[:], length-lenLowSymbols-lenMidSymbols, 8)
	}
}

// encodeMatch codes a new match of length and distance dist (from 1).
func (m *model) encodeMatch(rc *rangeEncoder, length, dist, posState uint32) {
	rc.encodeBit(&m.isMatch[m.state][posState], 1)
	rc.encodeBit(&m.isRep[m.state], 0)
	m.matchLen.encode(rc, length, posState)
	d := dist - 1
	slot := distSlotOf(d)
	rc.encodeTree(m.distSlot[lenState(length)][:], slot, distSlotBits)
	if slot >= distModelStart {
		footer := int(slot>>1) - 1
		base := (2 | slot&1) << uint(footer)
		reduced := d - base
		if slot < distModelEnd {
			rc.encodeReverseTree(m.distSpecial[base-slot:], reduced, footer)
		} else {
			rc.encodeDirect(reduced>>alignBits, footer-alignBits)
			rc.encodeReverseTree(m.align[:], reduced&(alignSize-1), alignBits)
		}
	}
	m.reps = [4]uint32{dist, m.reps[0], m.reps[1], m.reps[2]}
	m.state = stateAfterMatch(m.state)
}

// encodeRep codes a match of length with the distance reps[i]; length 1
// with i 0 is a short rep.
func (m *model) encodeRep(rc *rangeEncoder, length, i, posState uint32) {
	s := m.state
	rc.encodeBit(&m.isMatch[s][posState], 1)
	rc.encodeBit(&m.isRep[s], 1)
	if i == 0 {
		rc.encodeBit(&m.isRepG0[s], 0)
		if length == 1 {
			rc.encodeBit(&m.isRep0Long[s][posState], 0)
			m.state = stateAfterShortRep(s)
			return
		}
		rc.encodeBit(&m.isRep0Long[s][posState], 1)
	} else {
		rc.encodeBit(&m.isRepG0[s], 1)
		d := m.reps[i]
		if i == 1 {
			rc.encodeBit(&m.isRepG1[s], 0)
		} else {
			rc.encodeBit(&m.isRepG1[s], 1)
			rc.encodeBit(&m.isRepG2[s], i-2)
			if i == 3 {
				m.reps[3] = m.reps[2]
			}
			m.reps[2] = m.reps[1]
		}
		m.reps[1] = m.reps[0]
		m.reps[0] = d
	}
	m.repLen.encode(rc, length, posState)
	m.state = stateAfterRep(s)
}

// encodeSymbol codes what the parser chose at pos: a literal (dist 0), or a
// match of length with distance dist, coded as a repeat of a recent distance
// when it is one. A length-1 match must have rep0's distance (a short rep);
// otherwise it is coded as a literal, so a choice made before a state reset
// stays valid after it.
func (m *model) encodeSymbol(rc *rangeEncoder, in []byte, pos int, length, dist uint32) {
	posState := uint32(pos) & posMask
	if length >= matchLenMin {
		for i, r := range m.reps {
			if r == dist {
				m.encodeRep(rc, length, uint32(i), posState)
				return
			}
		}
		m.encodeMatch(rc, length, dist, posState)
		return
	}
	if dist != 0 && dist == m.reps[0] {
		m.encodeRep(rc, 1, 0, posState)
		return
	}
	rc.encodeBit(&m.isMatch[m.state][posState], 0)
	var prev, matchByte byte
	if pos > 0 {
		prev = in[pos-1]
		if m.state >= litStates {
			matchByte = in[pos-int(m.reps[0])]
		}
	}
	m.encodeLiteral(rc, in[pos], prev, matchByte)
}
