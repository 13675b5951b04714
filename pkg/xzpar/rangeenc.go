package xzpar

import "math/bits"

// The LZMA range encoder and bit prices, after the LZMA specification
// (lzma-specification.txt in the LZMA SDK): an adaptive binary coder with
// 11-bit probabilities that move by 1/32 of the distance to 0 or 2048 after
// every bit.

// prob is the probability, in 1/2048, that the next bit is 0.
type prob uint16

const (
	probBits  = 11
	probOne   = 1 << probBits
	probInit  = probOne / 2
	moveBits  = 5
	topValue  = 1 << 24
	priceBits = 4 // prices are in 1/16 bit

	// priceReduce drops the low bits of a probability to index priceTable.
	priceReduce = 4
)

// rangeEncoder writes one LZMA2 chunk's range-coded data to out. The first
// byte it writes is always 0, as the format requires.
type rangeEncoder struct {
	low       uint64
	rng       uint32
	cache     byte
	cacheSize int // pending bytes: the cache and any 0xff bytes after it
	out       []byte
}

func (e *rangeEncoder) reset(out []byte) {
	*e = rangeEncoder{rng: 0xffffffff, cacheSize: 1, out: out[:0]}
}

// pending is the number of bytes flush would leave in out.
func (e *rangeEncoder) pending() int {
	return len(e.out) + e.cacheSize + 4
}

// shiftLow moves the top byte of low out, resolving a carry into the cached
// byte and any run of 0xff bytes after it.
func (e *rangeEncoder) shiftLow() {
	if uint32(e.low) < 0xff000000 || e.low >= 1<<32 {
		carry := byte(e.low >> 32)
		e.out = append(e.out, e.cache+carry)
		for ; e.cacheSize > 1; e.cacheSize-- {
			e.out = append(e.out, 0xff+carry)
		}
		e.cacheSize = 0
		e.cache = byte(e.low >> 24)
	}
	e.cacheSize++
	e.low = (e.low & 0x00ffffff) << 8
}

// encodeBit codes bit (0 or 1) with the adaptive probability *p.
func (e *rangeEncoder) encodeBit(p *prob, bit uint32) {
	bound := (e.rng >> probBits) * uint32(*p)
	if bit == 0 {
		e.rng = bound
		*p += (probOne - *p) >> moveBits
	} else {
		e.low += uint64(bound)
		e.rng -= bound
		*p -= *p >> moveBits
	}
	if e.rng < topValue {
		e.rng <<= 8
		e.shiftLow()
	}
}

// encodeDirect codes the low n bits of v, most significant first, each with
// probability one half.
func (e *rangeEncoder) encodeDirect(v uint32, n int) {
	for i := n - 1; i >= 0; i-- {
		e.rng >>= 1
		e.low += uint64(e.rng & (0 - (v>>uint(i))&1))
		if e.rng < topValue {
			e.rng <<= 8
			e.shiftLow()
		}
	}
}

// flush writes the rest of low; the encoder must be reset before reuse.
func (e *rangeEncoder) flush() {
	for range 5 {
		e.shiftLow()
	}
}

// encodeTree codes the low n bits of v, most significant first, with the
// bit tree probs (probs[1] is the root; len(probs) is 1<<n).
func (e *rangeEncoder) encodeTree(probs []prob, v uint32, n int) {
	m := uint32(1)
	for i := n - 1; i >= 0; i-- {
		bit := (v >> uint(i)) & 1
		e.encodeBit(&probs[m&uint32(len(probs)-1)], bit)
		m = m<<1 | bit
	}
}

// encodeReverseTree codes the low n bits of v, least significant first.
func (e *rangeEncoder) encodeReverseTree(probs []prob, v uint32, n int) {
	m := uint32(1)
	for range n {
		bit := v & 1
		v >>= 1
		e.encodeBit(&probs[m], bit)
		m = m<<1 | bit
	}
}

// priceTable[p>>priceReduce] is the cost in 1/16 bit of coding a bit whose
// probability is p/2048: -log2(p/2048)*16, computed with integers only so that
// the table, and the encoder's choices, are the same on every machine.
var priceTable = func() (t [probOne >> priceReduce]uint32) {
	for i := range t {
		p := uint32(i<<priceReduce) + 1<<(priceReduce-1) // the middle of the bucket
		t[i] = ((probBits<<8 - log2Q8(p)) + 1<<(priceBits-1)) >> (8 - priceBits)
	}
	return t
}()

// log2Q8 returns log2(x) in 1/256, rounded down, for x > 0.
func log2Q8(x uint32) uint32 {
	e := uint32(bits.Len32(x) - 1)
	m := uint64(x) << (31 - e) // x as a 1.31 fixed-point mantissa in [1, 2)
	frac := uint32(0)
	for range 8 {
		m = m * m >> 31
		frac <<= 1
		if m >= 1<<32 {
			m >>= 1
			frac |= 1
		}
	}
	return e<<8 | frac
}

// bitPrice is the price of coding bit with probability p.
func bitPrice(p prob, bit uint32) uint32 {
	// (0 - bit) is all ones for 1: p becomes 2048-p without a branch.
	q := uint32(p) ^ ((0 - bit) & (probOne - 1))
	return priceTable[(q+bit)>>priceReduce&(probOne>>priceReduce-1)]
}

func price0(p prob) uint32 { return priceTable[uint32(p)>>priceReduce] }
func price1(p prob) uint32 { return priceTable[(probOne-uint32(p))>>priceReduce] }

// treePrices sets out[v] to base plus the price of coding the low n bits of
// v with the bit tree probs, for each v (len(out) <= 1<<n, n <= 8). It
// visits each node of the tree once from the root instead of each leaf's
// path: a node's price is its parent's plus one bit.
func treePrices(probs []prob, n int, base uint32, out []uint32) {
	var node [2 << 8]uint32
	node[1] = base
	for i := 1; i < 1<<n; i++ {
		node[2*i] = node[i] + bitPrice(probs[i], 0)
		node[2*i+1] = node[i] + bitPrice(probs[i], 1)
	}
	copy(out, node[1<<n:2<<n])
}

// reverseTreePrice is the price of encodeReverseTree.
func reverseTreePrice(probs []prob, v uint32, n int) uint32 {
	price := uint32(0)
	m := uint32(1)
	for range n {
		bit := v & 1
		v >>= 1
		price += bitPrice(probs[m], bit)
		m = m<<1 | bit
	}
	return price
}
