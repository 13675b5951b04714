package xzpar

// The x86 BCJ filter (filter ID 0x04), as liblzma implements it in
// simple/x86.c: it rewrites the relative targets of CALL (E8) and JMP (E9)
// instructions into absolute ones, so repeated calls to one function become
// repeated byte strings that LZMA2 compresses well. It is what `xz --x86` does.
// Each block starts it afresh at its start offset (0 unless the filter's
// properties say otherwise; the writer always uses 0).

const filterX86 = 0x04

// x86Test reports whether b is 0x00 or 0xFF, the plausible most significant
// bytes of a 32-bit relative displacement.
func x86Test(b byte) bool { return (b+1)&0xfe == 0 }

var (
	x86MaskAllowed   = [8]bool{true, true, true, false, true, false, false, false}
	x86MaskBitNumber = [8]uint32{0, 1, 2, 2, 3, 3, 3, 3}
)

// x86Filter is the filter's state between calls of code, so that a stream
// can be filtered piece by piece with the same result as in one piece.
type x86Filter struct {
	pos      uint32 // stream position of the next byte to filter
	prevPos  uint32 // position of the last E8/E9 seen
	prevMask uint32
}

// newX86Filter starts the filter at stream position start (liblzma's
// start_offset property).
func newX86Filter(start uint32) x86Filter {
	return x86Filter{pos: start, prevPos: ^uint32(4)} // -5: no E8/E9 seen yet
}

// code filters buf in place, encoding (absolute targets) or decoding (back to
// relative), and returns how many bytes at its start are final. The rest (at
// most four bytes, which cannot start a complete instruction yet) must be
// passed again at the start of the next call, with the bytes that follow;
// at the end of the stream they stay as they are, as liblzma leaves them.
func (f *x86Filter) code(buf []byte, encode bool) int {
	if len(buf) < 5 {
		return 0
	}
	if f.pos-f.prevPos > 5 {
		f.prevPos = f.pos - 5
	}
	prevMask, prevPos := f.prevMask, f.prevPos
	pos := 0
	for pos <= len(buf)-5 {
		b := buf[pos]
		if b != 0xe8 && b != 0xe9 {
			pos++
			continue
		}
		now := f.pos + uint32(pos)
		offset := now - prevPos
		prevPos = now
		if offset > 5 {
			prevMask = 0
		} else {
			for range offset {
				prevMask &= 0x77
				prevMask <<= 1
			}
		}
		b = buf[pos+4]
		if !x86Test(b) || !x86MaskAllowed[(prevMask>>1)&7] || prevMask>>1 >= 0x10 {
			pos++
			prevMask |= 1
			if x86Test(b) {
				prevMask |= 0x10
			}
			continue
		}
		src := uint32(b)<<24 | uint32(buf[pos+3])<<16 | uint32(buf[pos+2])<<8 | uint32(buf[pos+1])
		var dest uint32
		for {
			if encode {
				dest = src + now + 5
			} else {
				dest = src - (now + 5)
			}
			if prevMask == 0 {
				break
			}
			i := x86MaskBitNumber[prevMask>>1]
			if !x86Test(byte(dest >> (24 - i*8))) {
				break
			}
			src = dest ^ (1<<(32-i*8) - 1)
		}
		buf[pos+4] = ^byte((dest>>24)&1 - 1)
		buf[pos+3] = byte(dest >> 16)
		buf[pos+2] = byte(dest >> 8)
		buf[pos+1] = byte(dest)
		pos += 5
		prevMask = 0
	}
	f.prevMask, f.prevPos = prevMask, prevPos
	f.pos += uint32(pos)
	return pos
}

// x86Convert filters buf in place as one whole block starting at position 0:
// the last bytes that cannot start a complete instruction stay as they are.
func x86Convert(buf []byte, encode bool) {
	f := newX86Filter(0)
	f.code(buf, encode)
}
