// Package xzpar writes xz data in parallel: one .xz stream whose independent
// blocks are LZMA2-encoded concurrently (with github.com/ulikunitz/xz/lzma,
// optionally after the x86 BCJ filter) and written in order, followed by the
// index and the stream footer.
//
// NewReader reads it back, and what xz and dpkg-deb write: it parses the
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
// The output is reproducible: the block layout depends only on
// Config.BlockSize and the input, and each block only on its own bytes and the
// encoder settings, so the bytes are the same for any Workers value, any
// scheduling and any machine. It is a single stream (dpkg reads only the first
// of concatenated streams) with a CRC64 check, like xz's default, and every
// block header records both sizes.
//
// # Measurements
//
// 86 MB: the Go 1.26 toolchain's binaries (bin/* and pkg/tool/linux_amd64/*)
// concatenated, on 2 cores shared with other jobs (load 3 to 6), best of
// two runs; "size" is relative to xz -6 -T1 (what dpkg-deb -Zxz runs), "wall"
// to xz -6 -T1 in the same round. xzpar rows use Workers=2 and the hash-table
// matcher; "x86" is Config.X86.
//
//	encoder                       bytes       size   wall    user CPU  peak RSS
//	xz -6 -T1                     20,062,488  1.00   64.1 s  44.5 s     97 MB
//	xz -6 -T2                     21,269,044  1.06   0.39x   38.2 s    263 MB
//	xz --x86 -6 -T2               20,248,672  1.01
//	ulikunitz xz.Writer defaults  25,847,052  1.29   0.34x   19.4 s    104 MB
//	xzpar x86 32M blocks 16M dict 23,868,012  1.19   0.22x   22.2 s    456 MB  (defaults; 312 MB and +19% CPU with GOMEMLIMIT=320MiB)
//	xzpar x86 32M blocks 32M dict 23,651,076  1.18           23.2 s    662 MB
//	xzpar x86 32M blocks  8M dict 25,026,952  1.25   0.22x   18.6 s    330 MB
//	xzpar x86 16M blocks 16M dict 24,964,156  1.24           21.6 s    491 MB
//	xzpar x86 16M blocks  8M dict 25,557,284  1.27           23.0 s    320 MB
//	xzpar x86  8M blocks  8M dict 27,152,752  1.35   0.39x   17.5 s    279 MB  (140 MB with GOMEMLIMIT=120MiB)
//	xzpar x86  4M blocks  4M dict 28,140,608  1.40           14.1 s     81 MB  (GOMEMLIMIT=80MiB)
//	xzpar      8M blocks  8M dict 28,562,504  1.42
//	xzpar     32M blocks 32M dict 24,786,880  1.24
//
// With the heap capped (GOMEMLIMIT), for pkg/deb's "peak RSS <= 128 MB"
// (measured later, same input, load 2 to 5; wall times not comparable):
//
//	encoder                       bytes       size   GOMEMLIMIT  peak RSS
//	xzpar x86  8M blocks  4M dict 28,123,236  1.40   100MiB      100 MB
//	xzpar x86  8M blocks  6M dict 27,617,160  1.38   110MiB      114 MB
//	xzpar x86 16M blocks  4M dict 27,699,420  1.38   110MiB      134 MB
//	xzpar      8M blocks  4M dict 29,604,120  1.48   100MiB      100 MB  (pkg/deb's setting before x86)
//	xzpar x86  8M blocks  4M dict 28,123,236  1.40                         (pkg/deb's setting for amd64/i386)
//
// Reading (BenchmarkReadGoBinaries, same payload, 2 shared cores, two runs;
// MB/s of uncompressed data), measured when NewReader still used ulikunitz's
// LZMA2 decoder. With its own decoder it reads 48 MB of Go binaries (xz -6
// -T1) at 44-48 MB/s of user CPU, ulikunitz's reader at 24 MB/s, xz -dc at
// 77 MB/s.
//
//	input                      NewReader      ulikunitz xz.Reader
//	xzpar 8M/4M, no x86        27.6-30.8 MB/s 29.4 MB/s (DictCap 64 MiB, as pkg/deb had it), 30.7 MB/s (default)
//	xzpar 8M/4M, x86           29.6-32.1 MB/s cannot read it
//	xz -6 -T1 (one block)      34.6-40.3 MB/s 35.4-35.8 MB/s
//
// Allocation per read of the 86 MB: 188 MB with NewReader or ulikunitz's
// defaults (a 4 MiB dictionary per block), 882 MB with ulikunitz's reader as
// pkg/deb configured it (ReaderConfig.DictCap is a minimum there, not a limit,
// so every block got 64 MiB).
//
// Timings are noisy (another job on the same cores can halve the speed: one
// run of the defaults took 0.51x). Only whole blocks run in parallel, so a
// payload of fewer than Workers*BlockSize bytes gains little: 86 MB makes three
// 32 MiB blocks; for payloads of 20 to 60 MB, 8 or 16 MiB blocks parallelise
// better at some cost in ratio.
//
// Each block starts with an empty dictionary and fresh probabilities, which
// costs ratio on small blocks; a larger dictionary gains more than it costs in
// time but costs memory (about 5*DictCap per worker). ulikunitz's encoder is
// itself 1.29x xz -6 on one stream, so no setting reaches xz's ratio; the x86
// filter wins back about 5%. The binary tree matcher is unusably slow. The
// LZMA literal/position properties change the size by 0.3% at most on these
// binaries (16 MiB, lc/lp/pb 3/0/2 against 1/0/2, 4/0/2, 3/0/0, 2/2/2,
// 0/0/0), so blocks keep xz's default 3/0/2.
package xzpar
