package xzpar

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
)

// Block is one block of a stream NewWriter wrote, taken whole: header,
// compressed data, padding and check. Blocks are independent, so blocks of
// several streams can be put together into a new stream with WriteStream,
// never decompressed or compressed again: a caller that knows which parts of
// its data did not change since an earlier stream recompresses only the rest.
type Block struct {
	Raw              []byte // the block's bytes, header to check
	UncompressedSize int64
	unpadded         uint64
}

// Blocks returns the blocks of data, one .xz stream with a CRC64 check and
// nothing after it, as NewWriter writes. It checks the stream header and
// footer, the index, and that the blocks' headers fill the stream as the index
// says; it does not decode the blocks (NewReader does).
func Blocks(data []byte) ([]Block, error) {
	bad := func(format string, args ...any) ([]Block, error) {
		return nil, fmt.Errorf("%w: %s", ErrFormat, fmt.Sprintf(format, args...))
	}
	if len(data) < streamHeaderSize+streamFooterSize || !bytes.Equal(data[:streamHeaderSize], streamHeader()) {
		return bad("not a stream as NewWriter writes it (header % x)", data[:min(len(data), streamHeaderSize)])
	}
	footer := data[len(data)-streamFooterSize:]
	if !bytes.Equal(footer, streamFooter(int(binary.LittleEndian.Uint32(footer[4:8])+1)*4)) {
		return bad("stream footer % x", footer)
	}
	indexSize := int64(binary.LittleEndian.Uint32(footer[4:8])+1) * 4
	indexStart := int64(len(data)) - streamFooterSize - indexSize
	if indexStart < streamHeaderSize {
		return bad("index of %d bytes in a stream of %d", indexSize, len(data))
	}
	records, err := parseIndex(data[indexStart : len(data)-streamFooterSize])
	if err != nil {
		return bad("index: %v", err)
	}
	blocks := make([]Block, 0, len(records))
	off := int64(streamHeaderSize)
	for i, r := range records {
		size := int64(r.unpadded+3) &^ 3
		if r.unpadded > uint64(indexStart-off) || size > indexStart-off {
			return bad("block %d of %d bytes overruns the index", i+1, r.unpadded)
		}
		raw := data[off : off+size]
		if hs := (int(raw[0]) + 1) * 4; raw[0] == 0 || hs+checkSize > int(r.unpadded) || binary.LittleEndian.Uint32(raw[hs-4:hs]) != crc32.ChecksumIEEE(raw[:hs-4]) {
			return bad("block %d header at offset %d", i+1, off)
		}
		blocks = append(blocks, Block{Raw: raw, UncompressedSize: int64(r.uncompressed), unpadded: r.unpadded})
		off += size
	}
	if off != indexStart {
		return bad("the index lists %d bytes of blocks, the stream has %d", off-streamHeaderSize, indexStart-streamHeaderSize)
	}
	return blocks, nil
}

// parseIndex reads an index as index writes it: indicator, count, records,
// zero padding and CRC32.
func parseIndex(b []byte) ([]indexRecord, error) {
	if len(b) < 8 || b[0] != 0 {
		return nil, fmt.Errorf("no index indicator")
	}
	body := b[:len(b)-4]
	if got, want := binary.LittleEndian.Uint32(b[len(b)-4:]), crc32.ChecksumIEEE(body); got != want {
		return nil, fmt.Errorf("CRC32 %#08x, computed %#08x", got, want)
	}
	p := body[1:]
	next := func() (uint64, error) {
		x, n, err := vli(p)
		p = p[n:]
		return x, err
	}
	count, err := next()
	if err != nil || count > uint64(len(p)) {
		return nil, fmt.Errorf("record count: %v", err)
	}
	records := make([]indexRecord, 0, count)
	for range count {
		u, err1 := next()
		n, err2 := next()
		if err1 != nil || err2 != nil || u == 0 {
			return nil, fmt.Errorf("record %d", len(records)+1)
		}
		records = append(records, indexRecord{unpadded: u, uncompressed: n})
	}
	if len(p) > 3 || !allZero(p) {
		return nil, fmt.Errorf("padding % x", p)
	}
	return records, nil
}

// WriteStream writes blocks as one .xz stream with a CRC64 check: the stream
// header, each block as it is, the index and the footer. Blocks must come
// from streams NewWriter wrote (Blocks refuses others) or from EncodeBlock;
// any other Block (a zero one, one whose Raw was cut or replaced) is refused
// before anything is written, since its index record would not describe it.
func WriteStream(w io.Writer, blocks []Block) error {
	for i, b := range blocks {
		if b.unpadded == 0 || (b.unpadded+3)&^3 != uint64(len(b.Raw)) || b.UncompressedSize < 0 {
			return fmt.Errorf("xzpar: block %d of %d (%d bytes) is not one that Blocks or EncodeBlock returned", i+1, len(blocks), len(b.Raw))
		}
	}
	records := make([]indexRecord, len(blocks))
	out := streamHeader()
	if _, err := w.Write(out); err != nil {
		return err
	}
	for i, b := range blocks {
		if _, err := w.Write(b.Raw); err != nil {
			return err
		}
		records[i] = indexRecord{unpadded: b.unpadded, uncompressed: uint64(b.UncompressedSize)}
	}
	idx := index(records)
	if _, err := w.Write(idx); err != nil {
		return err
	}
	_, err := w.Write(streamFooter(len(idx)))
	return err
}

// EncodeBlock compresses p (not empty) as one block with cfg (BlockSize and
// Workers do not apply): the block NewWriter writes for p.
func EncodeBlock(p []byte, cfg Config) (Block, error) {
	if len(p) == 0 {
		return Block{}, fmt.Errorf("xzpar: no bytes to encode (a stream of no blocks holds nothing)")
	}
	cfg.BlockSize, cfg.Workers = len(p), 1
	var b bytes.Buffer
	w, err := NewWriter(&b, cfg)
	if err != nil {
		return Block{}, err
	}
	if _, err := w.Write(p); err != nil {
		return Block{}, err
	}
	if err := w.Close(); err != nil {
		return Block{}, err
	}
	blocks, err := Blocks(b.Bytes())
	if err != nil || len(blocks) != 1 {
		return Block{}, fmt.Errorf("xzpar: re-reading an encoded block: %v", err)
	}
	return blocks[0], nil
}
