package xzpar

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc64"

	"github.com/ulikunitz/xz/lzma"
)

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
	return max(min(cfg.DictCap, n), lzma.MinDictCap)
}

// encodeBlock compresses in as one independent block: fresh filter state and
// dictionary, so it depends on nothing but its own bytes and cfg. With cfg.X86
// it overwrites in with the filtered bytes.
func encodeBlock(in []byte, cfg Config, crcTable *crc64.Table) (*encodedBlock, error) {
	dictCap := blockDictCap(cfg, len(in))
	var check [checkSize]byte
	binary.LittleEndian.PutUint64(check[:], crc64.Checksum(in, crcTable))
	if cfg.X86 {
		x86Convert(in, true) // in place: in is the writer's own buffer
	}
	var data bytes.Buffer
	data.Grow(len(in)/3 + 64)
	enc, err := lzma.Writer2Config{DictCap: dictCap, Matcher: cfg.Matcher}.NewWriter2(&data)
	if err != nil {
		return nil, fmt.Errorf("xzpar: LZMA2 encoder (dictionary %d bytes, matcher %v): %w", dictCap, cfg.Matcher, err)
	}
	if _, err := enc.Write(in); err != nil {
		return nil, fmt.Errorf("xzpar: LZMA2 encoding: %w", err)
	}
	// Writer2.Close swallows a Flush error, so flush first to see it.
	if err := enc.Flush(); err != nil {
		return nil, fmt.Errorf("xzpar: LZMA2 encoding: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("xzpar: LZMA2 end marker: %w", err)
	}
	b := &encodedBlock{
		header:  blockHeader(uint64(data.Len()), uint64(len(in)), cfg.X86, lzma.EncodeDictCap(int64(dictCap))),
		data:    data.Bytes(),
		padding: blockPadding(data.Len()),
		check:   check,
	}
	b.record = indexRecord{
		unpadded:     uint64(len(b.header) + len(b.data) + checkSize),
		uncompressed: uint64(len(in)),
	}
	return b, nil
}
