package xzpar

import (
	"context"
	"errors"
	"fmt"
	"hash/crc64"
	"io"
)

// Defaults: ModeFast's layout in pkg/deb (see the package doc for memory).
const (
	DefaultBlockSize = 32 << 20
	DefaultDictCap   = 16 << 20
	DefaultWorkers   = 2
)

// Limits on the configuration. MaxBlockSize bounds the memory a writer holds:
// Workers blocks of input, encoders and outputs (the package doc's formula).
const (
	MaxBlockSize = 1 << 30
	MaxDictCap   = 1 << 30
	MaxWorkers   = 256
)

// Config sets up a Writer. The zero value means the defaults above. BlockSize,
// DictCap, Mode and X86 determine the output bytes; Workers changes only
// speed and memory (Workers × (BlockSize + output + 4 × dictionary + 5 MiB):
// see the package doc).
type Config struct {
	// BlockSize is the number of uncompressed bytes per block (the last block
	// may be shorter). Smaller blocks parallelise finer and cost ratio.
	BlockSize int
	// Workers is the number of blocks encoded at once. Set it from
	// configuration, not from the CPU count, to keep memory predictable.
	Workers int
	// DictCap is the LZMA2 dictionary capacity; a block never uses more than
	// its own length (and never less than MinDictCap).
	DictCap int
	// Mode is the LZMA encoder's parser and match finder.
	Mode Mode
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
	if c.DictCap < MinDictCap || c.DictCap > MaxDictCap {
		return c, fmt.Errorf("xzpar: dictionary capacity %d out of range: want %d to %d bytes", c.DictCap, MinDictCap, MaxDictCap)
	}
	if c.Mode != ModeFast && c.Mode != ModeBest {
		return c, fmt.Errorf("xzpar: unknown mode %d: want ModeFast or ModeBest", c.Mode)
	}
	return c, nil
}

// job is one block being encoded by its own goroutine; done is closed when
// out is set.
type job struct {
	in   []byte
	done chan struct{}
	out  *encodedBlock
}

// writer is the io.WriteCloser NewWriter returns. It is not safe for
// concurrent use; only the encoding runs in other goroutines.
type writer struct {
	ctx      context.Context
	w        io.Writer
	cfg      Config
	crcTable *crc64.Table

	cur     []byte   // the block being filled, cap BlockSize
	pending []*job   // submitted blocks in stream order, at most Workers
	free    [][]byte // input buffers of written blocks, for reuse
	freeOut [][]byte // output buffers of written blocks, for reuse
	// encoders are the idle LZMA encoders, at most Workers.
	encoders chan *lzmaEncoder
	records  []indexRecord

	wroteHeader bool
	closed      bool
	err         error // sticky: the first encoding or write error
}

// NewWriter returns a writer of one xz stream to w. Close must be called to
// finish the stream (last block, index, footer); it does not close w.
func NewWriter(w io.Writer, cfg Config) (io.WriteCloser, error) {
	return NewWriterContext(context.Background(), w, cfg)
}

// NewWriterContext is NewWriter with a context: once ctx is done, the blocks
// being encoded stop within one LZMA2 chunk (at most 2 MiB of input each),
// and Write and Close return ctx's error without writing more, so a cancelled
// compression ends in a fraction of a second instead of finishing Workers
// blocks.
func NewWriterContext(ctx context.Context, w io.Writer, cfg Config) (io.WriteCloser, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &writer{ctx: ctx, w: w, cfg: cfg, crcTable: crc64.MakeTable(crc64.ECMA), encoders: make(chan *lzmaEncoder, cfg.Workers)}, nil
}

// Write buffers p into blocks and hands each full block to a worker. Before
// it fills a new block it waits, while Workers blocks are in memory, for the
// oldest and writes it out.
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
			if x.checkCtx() != nil { // no new block once ctx is done
				return n, x.err
			}
			// At most Workers blocks in memory, the one being filled
			// included: wait for the oldest to be written first.
			for len(x.pending) >= x.cfg.Workers && x.err == nil {
				x.writeOldest()
			}
			if x.err != nil {
				return n, x.err
			}
			x.cur = x.newBuffer()
		}
		k := min(len(p), x.cfg.BlockSize-len(x.cur))
		x.appendInput(p[:k])
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
	if x.checkCtx() == nil && len(x.cur) > 0 {
		x.err = x.submit()
	}
	for len(x.pending) > 0 {
		x.writeOldest()
	}
	x.free, x.freeOut, x.pending, x.encoders = nil, nil, nil, nil
	if x.err != nil {
		return x.err
	}
	x.writeHeader()
	idx := index(x.records)
	x.write(idx)
	x.write(streamFooter(len(idx)))
	return x.err
}

// newBuffer returns an input buffer for the next block: a written block's,
// or a small one that Write grows up to BlockSize, so a short stream does not
// allocate a whole block.
func (x *writer) newBuffer() []byte {
	if n := len(x.free); n > 0 {
		b := x.free[n-1]
		x.free = x.free[:n-1]
		return b[:0]
	}
	return make([]byte, 0, min(x.cfg.BlockSize, 64<<10))
}

// appendInput appends p to the block being filled, growing its buffer by
// doubling but never past BlockSize.
func (x *writer) appendInput(p []byte) {
	if need := len(x.cur) + len(p); need > cap(x.cur) {
		b := make([]byte, len(x.cur), min(x.cfg.BlockSize, max(need, 2*cap(x.cur))))
		adviseHugePages(b) // the match finder reads it at random
		copy(b, x.cur)
		x.cur = b
	}
	x.cur = append(x.cur, p...)
}

// idleEncoder returns an encoder from pool, or a new one while fewer than
// Workers exist: workers hand theirs back before they signal done, and at
// most Workers blocks are in flight.
func idleEncoder(pool chan *lzmaEncoder, mode Mode) *lzmaEncoder {
	select {
	case e := <-pool:
		return e
	default:
		return newLZMAEncoder(mode)
	}
}

// submit starts encoding x.cur; Write made room for it among the Workers
// blocks in flight before it started filling it.
func (x *writer) submit() error {
	if x.err != nil {
		return x.err
	}
	j := &job{in: x.cur, done: make(chan struct{})}
	x.cur = nil
	x.pending = append(x.pending, j)
	var out []byte
	if n := len(x.freeOut); n > 0 {
		out = x.freeOut[n-1]
		x.freeOut = x.freeOut[:n-1]
	} else {
		// Room for incompressible data (stored chunks add 3 bytes per
		// 64 KiB), so the buffer never grows by copying; only the pages
		// written to count in memory.
		out = make([]byte, 0, len(j.in)+len(j.in)/16+4096)
	}
	cfg, table, pool, ctx := x.cfg, x.crcTable, x.encoders, x.ctx
	go func() {
		defer close(j.done)
		enc := idleEncoder(pool, cfg.Mode)
		enc.stopped = func() bool { return ctx.Err() != nil }
		j.out = encodeBlock(enc, j.in, out, cfg, table)
		pool <- enc
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
	b := j.out
	if b == nil { // the encoder stopped: ctx is done
		x.checkCtx()
		return
	}
	defer func() { x.freeOut = append(x.freeOut, b.data) }()
	if x.err != nil {
		return
	}
	x.writeHeader()
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

// checkCtx makes ctx's error, once ctx is done, the writer's error (unless
// another came first) and returns the writer's error.
func (x *writer) checkCtx() error {
	if x.err == nil {
		x.err = x.ctx.Err()
	}
	return x.err
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
