package xzpar

import (
	"encoding/binary"
	"hash/crc64"
)

// MinDictCap is the smallest LZMA2 dictionary the format describes.
const MinDictCap = 4096

// encodedBlock is one complete xz block, kept in pieces to avoid copying the
// compressed data: header, data, padding and check are written in that order.
type encodedBlock struct {
	header  []byte
	data    []byte
	padding []byte
	check   [checkSize]byte
	record  indexRecord
}

// blockDictCap is the dictionary capacity used for a block of n bytes: the
// configured capacity, but never more than the block itself (a larger one
// only costs memory, in the encoder and in every decoder).
func blockDictCap(cfg Config, n int) int {
	return max(min(cfg.DictCap, n), MinDictCap)
}

// dictSizeByte is the LZMA2 property byte of the smallest dictionary size the
// format can state (2^k or 3*2^k, from 4 KiB) that is at least n.
func dictSizeByte(n int) byte {
	for b := byte(0); b < 40; b++ {
		if dictSizeOf(b) >= uint64(n) {
			return b
		}
	}
	return 40
}

// dictSizeOf is the dictionary size that property byte b (below 40) states.
func dictSizeOf(b byte) uint64 {
	return uint64(2|b&1) << (b/2 + 11)
}

// encodeBlock compresses in as one independent block with enc: fresh filter
// state, model and dictionary, so it depends on nothing but its own bytes and
// cfg. With cfg.X86 it overwrites in with the filtered bytes. The data is
// appended to out[:0]. It returns nil if enc was told to stop. With a pool,
// a block may borrow the pool's idle encoders to help: to parse parts of a
// ModeFast block (split.go), to code segments of a ModeBest one (segment.go).
func encodeBlock(enc *lzmaEncoder, in, out []byte, cfg Config, crcTable *crc64.Table, pool *Pool) *encodedBlock {
	dictCap := blockDictCap(cfg, len(in))
	text := textLike(in)
	var check [checkSize]byte
	binary.LittleEndian.PutUint64(check[:], crc64.Checksum(in, crcTable))
	if cfg.X86 {
		x86Convert(in, true) // in place: in is the writer's own buffer
	}
	enc.setMode(cfg.Mode)
	// A ModeBest text block in pieces: each piece's dictionary is at most
	// half of cfg.DictCap, so finderFor gives it binary trees.
	var cuts []int
	apart := cfg.Mode == ModeBest && text && inPieces(dictCap, cfg.DictCap)
	if apart {
		cuts, dictCap = textPieces(len(in), cfg.DictCap)
	}
	f := finderFor(cfg.Mode, dictCap, cfg.DictCap, text)
	if !apart {
		cuts = segmentCuts(len(in), f)
	}
	var sp *splitter
	if pool != nil && cfg.Mode == ModeFast && len(in) >= 2*minHelperRange {
		sp = &splitter{e: enc, in: in, dict: uint32(dictCap), f: f, pool: pool, candIdx: -1}
	}
	var data []byte
	if cfg.Mode == ModeBest && len(cuts) > 2 {
		data = enc.encodeSegmented(out[:0], in, cuts, uint32(dictCap), f, pool, apart)
	} else {
		data = enc.encode(out[:0], in, uint32(dictCap), f, sp)
	}
	if data == nil {
		return nil // stopped: see lzmaEncoder.stopped
	}
	b := &encodedBlock{
		header:  blockHeader(uint64(len(data)), uint64(len(in)), cfg.X86, dictSizeByte(dictCap)),
		data:    data,
		padding: blockPadding(len(data)),
		check:   check,
	}
	b.record = indexRecord{
		unpadded:     uint64(len(b.header) + len(b.data) + checkSize),
		uncompressed: uint64(len(in)),
	}
	return b
}
