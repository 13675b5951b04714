package xzpar

import (
	"errors"
	"fmt"
	"hash/crc64"
	"io"

	"github.com/ulikunitz/xz/lzma"
)

// Defaults, measured on 86 MB of Go binaries with 2 workers on 2 cores
// (BenchmarkGoBinaries; the table is in doc.go): with X86 set, 1.19x
// the size of xz -6 in under half its wall time. Blocks cost ratio because each
// starts with an empty dictionary (8 MiB blocks: 1.35x, 32 MiB: 1.25x at the
// same 8 MiB dictionary), and the dictionary is the other lever (32 MiB blocks
// with 8/16/32 MiB dictionaries: 1.25x/1.19x/1.18x). The binary tree matcher
// is far too slow to use (seconds per 100 kB on repetitive text).
const (
	DefaultBlockSize = 32 << 20
	DefaultDictCap   = 16 << 20
	DefaultWorkers   = 2
	DefaultMatcher   = lzma.HashTable4
)

// Limits on the configuration. MaxBlockSize bounds the memory a writer holds:
// about (Workers+1) blocks of input plus Workers encoders and outputs.
const (
	MaxBlockSize = 1 << 30
	MaxDictCap   = 1 << 30
	MaxWorkers   = 256
)

// Config sets up a Writer. The zero value means the defaults above. BlockSize,
// DictCap, Matcher and X86 determine the output bytes; Workers changes only
// speed and memory.
//
// Memory: up to Workers+1 input blocks, Workers outputs (about a third of a
// block each on binaries), and Workers encoders of about 5*DictCap+8 MiB each
// with the hash-table matcher; the defaults hold about 300 MB live (the Go
// heap may grow to twice that unless the program sets a memory limit). For
// about 128 MB, use BlockSize and DictCap 8 MiB (1.35x xz -6 on binaries).
type Config struct {
	// BlockSize is the number of uncompressed bytes per block (the last block
	// may be shorter). Smaller blocks parallelise finer and cost ratio.
	BlockSize int
	// Workers is the number of blocks encoded at once. Set it from
	// configuration, not from the CPU count, to keep memory predictable.
	Workers int
	// DictCap is the LZMA2 dictionary capacity; a block never uses more than
	// its own length (and never less than lzma.MinDictCap).
	DictCap int
	// Matcher is the LZMA match finder (lzma.HashTable4 or lzma.BinaryTree).
	Matcher lzma.MatchAlgorithm
	// X86 puts the x86 BCJ filter before LZMA2 (like `xz --x86`): smaller
	// output for amd64/386 machine code, slightly larger for other data.
	// liblzma (xz, dpkg) and NewReader decode it; github.com/ulikunitz/xz's
	// reader does not.
	X86 bool
}

// ErrClosed is returned by Write and Close on a writer that was closed.
var ErrClosed = errors.New("xzpar: writer is closed")

// withDefaults fills zero fields and checks the ranges.
func (c Config) withDefaults() (Config, error) {
	if c.BlockSize == 0 {
		c.BlockSize = DefaultBlockSize
	}
	if c.Workers == 0 {
		c.Workers = DefaultWorkers
	}
	if c.DictCap == 0 {
		c.DictCap = DefaultDictCap
	}
	if c.BlockSize < 1 || c.BlockSize > MaxBlockSize {
		return c, fmt.Errorf("xzpar: block size %d out of range: want 1 to %d bytes", c.BlockSize, MaxBlockSize)
	}
	if c.Workers < 1 || c.Workers > MaxWorkers {
		return c, fmt.Errorf("xzpar: %d workers out of range: want 1 to %d", c.Workers, MaxWorkers)
	}
	if c.DictCap < lzma.MinDictCap || c.DictCap > MaxDictCap {
		return c, fmt.Errorf("xzpar: dictionary capacity %d out of range: want %d to %d bytes", c.DictCap, lzma.MinDictCap, MaxDictCap)
	}
	if c.Matcher != lzma.HashTable4 && c.Matcher != lzma.BinaryTree {
		return c, fmt.Errorf("xzpar: unknown matcher %d: want lzma.HashTable4 or lzma.BinaryTree", c.Matcher)
	}
	return c, nil
}

// job is one block being encoded by its own goroutine; done is closed when
// out or err is set.
type job struct {
	in   []byte
	done chan struct{}
	out  *encodedBlock
	err  error
}

// writer is the io.WriteCloser NewWriter returns. It is not safe for
// concurrent use; only the encoding runs in other goroutines.
type writer struct {
	w        io.Writer
	cfg      Config
	crcTable *crc64.Table

	cur     []byte   // the block being filled, cap BlockSize
	pending []*job   // submitted blocks in stream order, at most Workers
	free    [][]byte // input buffers of written blocks, for reuse
	records []indexRecord

	wroteHeader bool
	closed      bool
	err         error // sticky: the first encoding or write error
}

// NewWriter returns a writer of one xz stream to w. Close must be called to
// finish the stream (last block, index, footer); it does not close w.
func NewWriter(w io.Writer, cfg Config) (io.WriteCloser, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &writer{w: w, cfg: cfg, crcTable: crc64.MakeTable(crc64.ECMA)}, nil
}

// Write buffers p into blocks and hands each full block to a worker. It blocks
// while Workers blocks are already in flight, writing out the oldest.
func (x *writer) Write(p []byte) (int, error) {
	if x.closed {
		return 0, ErrClosed
	}
	if x.err != nil {
		return 0, x.err
	}
	n := 0
	for len(p) > 0 {
		if x.cur == nil {
			x.cur = x.newBuffer()
		}
		k := min(len(p), x.cfg.BlockSize-len(x.cur))
		x.cur = append(x.cur, p[:k]...)
		p = p[k:]
		n += k
		if len(x.cur) == x.cfg.BlockSize {
			if err := x.submit(); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// Close encodes the last partial block, waits for every block, and writes
// them, the index and the stream footer. After an error it still waits for the
// workers, so no goroutine outlives Close, and returns that error.
func (x *writer) Close() error {
	if x.closed {
		return ErrClosed
	}
	x.closed = true
	if x.err == nil && len(x.cur) > 0 {
		x.err = x.submit()
	}
	for len(x.pending) > 0 {
		x.writeOldest()
	}
	x.free, x.pending = nil, nil
	if x.err != nil {
		return x.err
	}
	x.writeHeader()
	idx := index(x.records)
	x.write(idx)
	x.write(streamFooter(len(idx)))
	return x.err
}

func (x *writer) newBuffer() []byte {
	if n := len(x.free); n > 0 {
		b := x.free[n-1]
		x.free = x.free[:n-1]
		return b[:0]
	}
	return make([]byte, 0, x.cfg.BlockSize)
}

// submit starts encoding x.cur, first writing out the oldest block if Workers
// are busy, so at most Workers blocks are in flight plus the one being filled.
func (x *writer) submit() error {
	for len(x.pending) >= x.cfg.Workers && x.err == nil {
		x.writeOldest()
	}
	if x.err != nil {
		return x.err
	}
	j := &job{in: x.cur, done: make(chan struct{})}
	x.cur = nil
	x.pending = append(x.pending, j)
	cfg, table := x.cfg, x.crcTable
	go func() {
		defer close(j.done)
		j.out, j.err = encodeBlock(j.in, cfg, table)
	}()
	return nil
}

// writeOldest waits for the oldest pending block and writes it, unless an
// error already stopped the output; either way the block leaves the queue.
func (x *writer) writeOldest() {
	j := x.pending[0]
	x.pending[0] = nil
	x.pending = x.pending[1:]
	<-j.done
	x.free = append(x.free, j.in)
	if x.err != nil {
		return
	}
	if j.err != nil {
		x.err = j.err
		return
	}
	x.writeHeader()
	b := j.out
	x.write(b.header)
	x.write(b.data)
	x.write(b.padding)
	x.write(b.check[:])
	x.records = append(x.records, b.record)
}

func (x *writer) writeHeader() {
	if !x.wroteHeader {
		x.wroteHeader = true
		x.write(streamHeader())
	}
}

// write writes p unless an error happened before; the first error sticks.
func (x *writer) write(p []byte) {
	if x.err != nil {
		return
	}
	if _, err := x.w.Write(p); err != nil {
		x.err = fmt.Errorf("xzpar: writing the xz stream: %w", err)
	}
}
