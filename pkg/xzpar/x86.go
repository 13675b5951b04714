package xzpar

// The x86 BCJ filter (filter ID 0x04, no properties), as liblzma implements it
// in simple/x86.c: it rewrites the relative targets of CALL (E8) and JMP (E9)
// instructions into absolute ones, so repeated calls to one function become
// repeated byte strings that LZMA2 compresses well. It is what `xz --x86` does.
// Each block starts it afresh at position 0.

const filterX86 = 0x04

// x86Test reports whether b is 0x00 or 0xFF, the plausible most significant
// bytes of a 32-bit relative displacement.
func x86Test(b byte) bool { return (b+1)&0xfe == 0 }

var (
	x86MaskAllowed   = [8]bool{true, true, true, false, true, false, false, false}
	x86MaskBitNumber = [8]uint32{0, 1, 2, 2, 3, 3, 3, 3}
)

// x86Convert filters buf in place, encoding (absolute targets) or decoding
// (back to relative). buf is a whole block: the filter starts fresh at
// position 0, and the last four bytes, which cannot start a complete
// instruction, stay as they are, as liblzma leaves them at the end of input.
func x86Convert(buf []byte, encode bool) {
	if len(buf) < 5 {
		return
	}
	var prevMask uint32
	prevPos := ^uint32(4) // -5: no E8/E9 seen yet
	for pos := 0; pos <= len(buf)-5; {
		b := buf[pos]
		if b != 0xe8 && b != 0xe9 {
			pos++
			continue
		}
		offset := uint32(pos) - prevPos
		prevPos = uint32(pos)
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
				dest = src + uint32(pos) + 5
			} else {
				dest = src - (uint32(pos) + 5)
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
}
