package deb

import (
	"bufio"
	"encoding/binary"
	"io"
)

// dpkg decompresses one xz stream (liblzma without LZMA_CONCATENATED) and
// one zstd frame (it stops where ZSTD_decompressStream says the frame
// ends) of control.tar and data.tar; our decoders, as xz and zstd do, read
// every stream and frame. A member of several would be one package to
// updeb and another to dpkg (measured with dpkg 1.21.23: a data.tar.xz of
// two streams unpacks as the first alone, cut mid-file; a zstd skippable
// frame first makes data.tar empty), so a member must be exactly one
// stream or frame. dpkg-deb, xz and zstd (but pzstd) write one.

// checkOneStream refuses an xz, zstd or bzip2 member (r, size bytes) that
// is not one stream (xz, with stream padding after it; bzip2) or one frame
// (zstd).
func checkOneStream(r io.ReaderAt, size int64, c Compression) error {
	switch c {
	case CompressionXZ:
		return xzOneStream(r, size)
	case CompressionZstd:
		return zstdOneFrame(r, size)
	case CompressionBzip2:
		return bzip2OneStream(r, size)
	}
	return nil
}

// xzOneStream reads the last stream's footer and index backwards, as
// xz --list does, and checks that the stream starts at offset 0: the
// decoder checks the rest when it reads the member.
func xzOneStream(r io.ReaderAt, size int64) error {
	end := size
	var word [4]byte
	for end >= 4 { // stream padding: groups of four zero bytes
		if _, err := r.ReadAt(word[:], end-4); err != nil {
			return err
		}
		if word != [4]byte{} {
			break
		}
		end -= 4
	}
	var footer [12]byte
	if end < 12+12 {
		return nil // too short to be a stream: the decoder says why
	}
	if _, err := r.ReadAt(footer[:], end-12); err != nil {
		return err
	}
	if string(footer[10:]) != "YZ" {
		return nil // not a stream footer: the decoder says why
	}
	indexSize := (int64(binary.LittleEndian.Uint32(footer[4:8])) + 1) * 4
	indexStart := end - 12 - indexSize
	if indexStart < 12 {
		return nil
	}
	index := make([]byte, indexSize)
	if _, err := r.ReadAt(index, indexStart); err != nil {
		return err
	}
	if index[0] != 0 {
		return nil
	}
	p := index[1:]
	records, ok := uvarint(&p)
	blocks := int64(0)
	for i := uint64(0); ok && i < records; i++ {
		unpadded, ok1 := uvarint(&p)
		_, ok2 := uvarint(&p)
		if ok = ok1 && ok2 && unpadded <= uint64(size); ok {
			blocks += (int64(unpadded) + 3) &^ 3
		}
	}
	if !ok {
		return nil
	}
	if start := indexStart - blocks - 12; start != 0 {
		return malformed("several xz streams (the last starts at byte %d): dpkg reads only the first", start)
	}
	return nil
}

// uvarint reads one of xz's multibyte integers from *p.
func uvarint(p *[]byte) (uint64, bool) {
	v, n := binary.Uvarint(*p)
	if n <= 0 || n > 9 {
		return 0, false
	}
	*p = (*p)[n:]
	return v, true
}

// zstdOneFrame walks the frame's header and block headers (RFC 8878) and
// checks that the member ends where the frame does.
func zstdOneFrame(r io.ReaderAt, size int64) error {
	var hdr [4 + 1 + 1 + 4 + 8]byte
	n, err := r.ReadAt(hdr[:], 0)
	if err != nil && err != io.EOF {
		return err
	}
	if n < 5 {
		return nil // the decoder says why
	}
	magic := binary.LittleEndian.Uint32(hdr[:4])
	if magic&0xfffffff0 == 0x184d2a50 {
		return malformed("a zstd skippable frame at byte 0: dpkg reads it as the whole member and sees no data")
	}
	if magic != 0xfd2fb528 {
		return nil
	}
	fhd := hdr[4]
	single := fhd>>5&1 == 1
	off := int64(5)
	if !single {
		off++ // window descriptor
	}
	off += [4]int64{0, 1, 2, 4}[fhd&3] // dictionary ID
	fcs := [4]int64{0, 2, 4, 8}[fhd>>6]
	if fhd>>6 == 0 && single {
		fcs = 1
	}
	off += fcs
	// Block headers are read through a buffer (a member of RLE blocks has
	// one every four bytes), skipping what lies past it.
	base := off
	sr := io.NewSectionReader(r, base, size-base)
	br := bufio.NewReaderSize(sr, 64<<10)
	var bh [3]byte
	for {
		if _, err := io.ReadFull(br, bh[:]); err != nil {
			return nil // truncated: the decoder says so
		}
		h := uint32(bh[0]) | uint32(bh[1])<<8 | uint32(bh[2])<<16
		blockSize := int64(h >> 3)
		if h>>1&3 == 1 { // RLE: one byte, repeated
			blockSize = 1
		}
		off += 3 + blockSize
		if blockSize <= int64(br.Buffered()) {
			br.Discard(int(blockSize)) //nolint:errcheck // buffered
		} else {
			if _, err := sr.Seek(off-base, io.SeekStart); err != nil {
				return err
			}
			br.Reset(sr)
		}
		if h&1 == 1 {
			break
		}
	}
	if fhd>>2&1 == 1 {
		off += 4 // content checksum
	}
	if off < size {
		return malformed("%d bytes after the first zstd frame (another frame, or a skippable one): dpkg reads only the first", size-off)
	}
	return nil
}
