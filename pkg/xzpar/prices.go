package xzpar

// Prices of LZMA symbols under the current model, for the optimal parser.
// The cheap ones are computed from the probabilities when needed; lengths and
// distances come from tables refreshed every so many symbols, as the
// probabilities drift.

const (
	infinityPrice = 1 << 30
	// Table refresh intervals, in symbols coded since the last refresh.
	lenPriceInterval   = 64
	distPriceInterval  = 128
	alignPriceInterval = 16
)

// priceTables holds the table-driven prices.
type priceTables struct {
	// matchLen and repLen are the prices of each length, by position state.
	matchLen, repLen [posStates][matchLenMax + 1]uint32
	// distSlot is the price of each distance slot and its direct bits, by
	// length state; dist the full price of each distance below
	// fullDistances (zero-based); align the price of the four low bits.
	distSlot [lenStates][distSlots]uint32
	dist     [lenStates][fullDistances]uint32
	align    [alignSize]uint32
	// distSlots is how many slots can occur with the block's dictionary.
	distSlots int

	sinceLen, sinceDist, sinceAlign int
}

func (t *priceTables) reset(m *model, dictSize uint32) {
	t.distSlots = int(distSlotOf(dictSize-1)) + 1
	t.updateLen(m)
	t.updateDist(m)
	t.updateAlign(m)
}

// refresh recomputes the tables whose interval has passed.
func (t *priceTables) refresh(m *model) {
	if t.sinceLen >= lenPriceInterval {
		t.updateLen(m)
	}
	if t.sinceDist >= distPriceInterval {
		t.updateDist(m)
	}
	if t.sinceAlign >= alignPriceInterval {
		t.updateAlign(m)
	}
}

// count notes a coded symbol of length and distance for the refresh intervals.
func (t *priceTables) count(length, dist uint32) {
	if length >= matchLenMin {
		t.sinceLen++
		t.sinceDist++
		if dist > fullDistances {
			t.sinceAlign++
		}
	}
}

func (t *priceTables) updateLen(m *model) {
	lenTablePrices(&m.matchLen, &t.matchLen)
	lenTablePrices(&m.repLen, &t.repLen)
	t.sinceLen = 0
}

func lenTablePrices(l *lenModel, out *[posStates][matchLenMax + 1]uint32) {
	a0, a1 := price0(l.choice), price1(l.choice)
	b0, b1 := a1+price0(l.choice2), a1+price1(l.choice2)
	var high [lenHighSymbols]uint32
	treePrices(l.high[:], 8, b1, high[:])
	for ps := range posStates {
		o := &out[ps]
		treePrices(l.low[ps][:], 3, a0, o[matchLenMin:matchLenMin+lenLowSymbols])
		treePrices(l.mid[ps][:], 3, b0, o[matchLenMin+lenLowSymbols:matchLenMin+lenLowSymbols+lenMidSymbols])
		copy(o[matchLenMin+lenLowSymbols+lenMidSymbols:], high[:])
	}
}

func (t *priceTables) updateDist(m *model) {
	for ls := range lenStates {
		treePrices(m.distSlot[ls][:], distSlotBits, 0, t.distSlot[ls][:t.distSlots])
		for slot := distModelEnd; slot < t.distSlots; slot++ {
			t.distSlot[ls][slot] += uint32((slot>>1)-1-alignBits) << priceBits
		}
		for d := range uint32(distModelStart) {
			t.dist[ls][d] = t.distSlot[ls][d]
		}
	}
	for d := uint32(distModelStart); d < fullDistances; d++ {
		slot := distSlotOf(d)
		footer := int(slot>>1) - 1
		base := (2 | slot&1) << uint(footer)
		p := reverseTreePrice(m.distSpecial[base-slot:], d-base, footer)
		for ls := range lenStates {
			t.dist[ls][d] = t.distSlot[ls][slot] + p
		}
	}
	t.sinceDist = 0
}

func (t *priceTables) updateAlign(m *model) {
	for i := range uint32(alignSize) {
		t.align[i] = reverseTreePrice(m.align[:], i, alignBits)
	}
	t.sinceAlign = 0
}

// distPrice is the price of distance dist (from 1) for a match of length.
func (t *priceTables) distPrice(dist, length uint32) uint32 {
	ls := lenState(length)
	d := dist - 1
	if d < fullDistances {
		return t.dist[ls][d]
	}
	return t.distSlot[ls][distSlotOf(d)&(distSlots-1)] + t.align[d&(alignSize-1)]
}

// literalPrice is the price of coding b as a literal in state, after prev,
// with matchByte the byte at rep0: the bits of encodeLiteral.
func (m *model) literalPrice(state uint32, prev, b, matchByte byte) uint32 {
	probs := m.litProbs(prev)
	price := uint32(0)
	sym := uint32(b) | 0x100
	if state < litStates {
		for sym < 0x10000 {
			price += bitPrice(probs[sym>>8], sym>>7&1)
			sym <<= 1
		}
		return price
	}
	offset := uint32(0x100) // 0x100 while the bits agree, then 0
	match := uint32(matchByte)
	for sym < 0x10000 {
		match <<= 1
		price += bitPrice(probs[offset+match&offset+sym>>8], sym>>7&1)
		sym <<= 1
		offset &= ^(match ^ sym)
	}
	return price
}

// shortRepPrice is the price of a short rep after the is-match and is-rep bits.
func (m *model) shortRepPrice(state, posState uint32) uint32 {
	return price0(m.isRepG0[state]) + price0(m.isRep0Long[state][posState])
}

// repPrice is the price of choosing rep i for a match of two bytes or more,
// after the is-match and is-rep bits and before the length.
func (m *model) repPrice(i, state, posState uint32) uint32 {
	if i == 0 {
		return price0(m.isRepG0[state]) + price1(m.isRep0Long[state][posState])
	}
	p := price1(m.isRepG0[state])
	if i == 1 {
		return p + price0(m.isRepG1[state])
	}
	return p + price1(m.isRepG1[state]) + bitPrice(m.isRepG2[state], i-2)
}
