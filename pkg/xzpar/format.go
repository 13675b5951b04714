package xzpar

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// The .xz container, as specified by "The .xz File Format" 1.2.1
// (https://tukaani.org/xz/xz-file-format.txt). The encoder emits one stream,
// CRC64 check, blocks with LZMA2 (after x86 BCJ if asked) and both sizes in
// their headers, and the index; the reader (reader.go) parses the general
// form.

var (
	headerMagic = []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}
	footerMagic = []byte{'Y', 'Z'}
)

const (
	// checkCRC64 is the stream flag for a CRC64 check, xz's default.
	checkCRC64 = 0x04
	checkSize  = 8
	// filterLZMA2 is the filter ID of LZMA2 in a block header.
	filterLZMA2 = 0x21
	// Sizes of the fixed parts.
	streamHeaderSize = 12
	streamFooterSize = 12
	// maxVLILen is the longest variable-length integer: 63 bits.
	maxVLILen = 9
	maxVLI    = 1<<63 - 1
)

// filterNames names the filter IDs of the format, for error messages.
var filterNames = map[uint64]string{
	0x03: "delta", 0x04: "x86 BCJ", 0x05: "PowerPC BCJ", 0x06: "IA-64 BCJ", 0x07: "ARM BCJ",
	0x08: "ARM-Thumb BCJ", 0x09: "SPARC BCJ", 0x0a: "ARM64 BCJ", 0x0b: "RISC-V BCJ", 0x21: "LZMA2",
}

// filterName returns "0x03 (delta)", or just the hexadecimal ID.
func filterName(id uint64) string {
	if n, ok := filterNames[id]; ok {
		return fmt.Sprintf("%#02x (%s)", id, n)
	}
	return fmt.Sprintf("%#02x", id)
}

// checkSizes is the size of the check field for each check ID (the low four
// bits of the stream flags), as the format defines it even for IDs that no
// implementation uses.
var checkSizes = [16]int{0, 4, 4, 4, 8, 8, 8, 16, 16, 16, 32, 32, 32, 64, 64, 64}

// Check IDs this reader verifies.
const (
	checkNone   = 0x00
	checkCRC32  = 0x01
	checkSHA256 = 0x0a
)

// vli decodes the variable-length integer at the start of b: its value and
// length. It fails on a truncated, overlong (more than nine bytes) or
// non-minimal encoding (a last byte of zero after the first), as liblzma does.
func vli(b []byte) (uint64, int, error) {
	var x uint64
	for i := 0; i < len(b) && i < maxVLILen; i++ {
		x |= uint64(b[i]&0x7f) << (7 * i)
		if b[i]&0x80 == 0 {
			if i > 0 && b[i] == 0 {
				return 0, 0, errors.New("non-minimal variable-length integer")
			}
			return x, i + 1, nil
		}
	}
	if len(b) < maxVLILen {
		return 0, 0, errors.New("truncated variable-length integer")
	}
	return 0, 0, errors.New("variable-length integer longer than 9 bytes")
}

// streamFlags are the two stream flag bytes shared by header and footer.
var streamFlags = [2]byte{0x00, checkCRC64}

// appendVLI appends x as the format's variable-length integer: seven bits per
// byte, least significant first, the high bit set on every byte but the last.
func appendVLI(b []byte, x uint64) []byte {
	for x >= 0x80 {
		b = append(b, byte(x)|0x80)
		x >>= 7
	}
	return append(b, byte(x))
}

// padTo4 appends zero bytes until len(b)+extra is a multiple of four.
func padTo4(b []byte, extra int) []byte {
	for (len(b)+extra)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

func appendCRC32(b []byte, data []byte) []byte {
	return binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(data))
}

// streamHeader returns the 12-byte stream header: magic, flags, CRC32 of the flags.
func streamHeader() []byte {
	b := append([]byte(nil), headerMagic...)
	b = append(b, streamFlags[:]...)
	return appendCRC32(b, streamFlags[:])
}

// blockHeader returns a block header announcing compressed and uncompressed
// sizes and the filter chain: x86 BCJ if x86 is set, then LZMA2 with the given
// dictionary-size property byte.
func blockHeader(compressed, uncompressed uint64, x86 bool, dictByte byte) []byte {
	flags := byte(0x40 | 0x80) // both sizes present, one filter
	if x86 {
		flags |= 1 // two filters
	}
	b := []byte{0, flags} // the size byte is filled in below
	b = appendVLI(b, compressed)
	b = appendVLI(b, uncompressed)
	if x86 {
		b = appendVLI(b, filterX86)
		b = appendVLI(b, 0) // no properties: start offset 0
	}
	b = appendVLI(b, filterLZMA2)
	b = appendVLI(b, 1) // size of the filter properties
	b = append(b, dictByte)
	b = padTo4(b, 4)
	b[0] = byte((len(b)+4)/4 - 1)
	return appendCRC32(b, b)
}

// blockPadding returns the zero bytes that follow compressed data of size n.
func blockPadding(n int) []byte {
	return make([]byte, (4-n%4)%4)
}

// indexRecord is one block's entry in the index.
type indexRecord struct {
	unpadded     uint64 // block header + compressed data + check, without block padding
	uncompressed uint64
}

// index returns the encoded index for the given blocks, CRC32 included.
func index(records []indexRecord) []byte {
	b := []byte{0x00} // index indicator
	b = appendVLI(b, uint64(len(records)))
	for _, r := range records {
		b = appendVLI(b, r.unpadded)
		b = appendVLI(b, r.uncompressed)
	}
	b = padTo4(b, 0)
	return appendCRC32(b, b)
}

// streamFooter returns the 12-byte stream footer for an index of indexSize
// bytes (a multiple of four, CRC32 included).
func streamFooter(indexSize int) []byte {
	body := binary.LittleEndian.AppendUint32(nil, uint32(indexSize/4-1))
	body = append(body, streamFlags[:]...)
	b := appendCRC32(nil, body)
	b = append(b, body...)
	return append(b, footerMagic...)
}
