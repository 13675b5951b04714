// Package xzpar writes xz data in parallel with its own LZMA2 encoder, and
// reads xz data back.
//
// NewWriter writes one .xz stream (CRC64 check, both sizes in every block
// header, like xz's default) of independent blocks that Config.Workers
// goroutines encode at once (or the workers of a Pool that several writers
// share) and the writer emits in order, then the index and the stream
// footer. Each block is LZMA2 (lc=3, lp=0, pb=2), optionally after
// the x86 BCJ filter, coded by this package's encoder, written from the LZMA
// specification and the xz file format: a range coder with integer-only price
// tables, hash-chain (hc4) and binary-tree (bt4) match finders over the whole
// block in memory (on amd64 and arm64 they prefetch the table entries the
// positions ahead will read: the search waits less on memory), and two
// parsers. ModeFast takes the longest match with one
// byte of lazy evaluation, like xz -1 to -3; ModeBest prices every literal,
// match and repeat combination up to 4096 bytes ahead and takes the cheapest
// path, like xz -4 to -9, with binary trees where a block's dictionary is at
// most half of Config.DictCap and hash chains elsewhere. The hash chains of
// either mode also ask a table of the last two positions of each eight-byte
// string (long matches that three candidates of a chain miss). A block that
// looks like text (almost no control characters in a sample of it) gets
// longer searches in either mode: text repeats longer strings further apart
// than machine code. A ModeBest text
// block too large for binary trees is coded in pieces with trees, each
// tree fresh and warmed on the last MiB before its piece (see textPieces).
// Chunks that would not
// shrink are stored, so incompressible data grows by 3 bytes per 64 KiB and
// the container's few dozen bytes.
//
// The output is reproducible: the block layout depends only on
// Config.BlockSize and the input, and each block only on its own bytes and the
// settings (no maps, no timing, no floating point), so the bytes are the same
// for any Workers value, any scheduling and any machine. It is a single stream
// because dpkg reads only the first of concatenated streams.
//
// Memory: a writer without a Pool holds at most Workers blocks, and each
// worker an encoder that is allocated once and reused:
//
//	Workers × (BlockSize + output + 4 × dict + 9 MiB)
//
// where dict = min(DictCap, BlockSize), the links of the match finder take 4
// bytes per dictionary byte (binary trees take 8, but only where the
// dictionary is at most DictCap/2), 9 MiB are the hash tables (4 MiB of
// them the eight-byte table of ModeBest's hash chains) and the coder's
// state, and output is the block's compressed size: about BlockSize/4 on
// binaries, at most BlockSize + BlockSize/16 on incompressible data. The
// defaults (32 MiB blocks, 16 MiB dictionary, two workers) come to about 230
// MiB on binaries and 280 MiB at worst; set a Go memory limit near that
// (the encoder allocates little else, so the heap stays near its live size).
// The measurements behind the defaults and pkg/deb's settings are in
// cmd/updeb-bench/README.md.
//
// A Pool (NewPool) is that capacity shared: its workers encode the blocks of
// every writer given it, in the order they were filled, and its memory
// (EncoderMemory per worker plus its block memory, each block BlockMemory)
// bounds all of them together; a writer waits for a block's memory before
// it fills one. A writer writes each block as soon as it and the blocks
// before it are encoded, so blocks that take longer than others (they do,
// by up to 2.3 times on binaries) hold back only as many blocks as the
// memory allows. Where a pool's workers would idle (no block filled or
// waiting: the last blocks of a stream), a ModeFast block borrows them: they
// parse later parts of the block ahead and the block's encoder takes their
// symbols once its own parse meets theirs (split.go), with the bytes it
// would have written alone. A ModeBest block with hash chains (8 MiB and
// more) is cut into segments of at least 4 MiB whose chunks start from a
// reset model and state, the dictionary carried over; its encoder codes
// them in turn, and idle workers borrowed the same way code others at once,
// each warming its match finder on the dictionary before its segment
// (segment.go); a text block's pieces are shared out the same way, each
// warming a fresh tree on the MiB before it. The cuts depend only on the block's size and whether it is
// text, so the bytes do not depend on who coded which segment.
//
// NewReader reads what this package, xz and dpkg-deb write: it parses the
// container itself (streams, block headers, index, footer, every CRC32 and
// check), decodes each block's LZMA2 data with its own decoder (lzma2.go),
// which refuses every corruption liblzma refuses (an end-of-payload marker
// inside a chunk, chunk sizes that disagree with the data, a range coder not
// finished at a chunk's end; ulikunitz's LZMA2 reader accepts these), and
// undoes the x86 BCJ filter where the block's filter chain has it, which
// github.com/ulikunitz/xz's own reader cannot. xz-utils' decoder test files
// (testdata/xz-utils) and generated hostile LZMA2 data are tested against
// `xz -dc`.
//
// Blocks, EncodeBlock and WriteStream build a stream from blocks of earlier
// streams without compressing them again.
package xzpar
