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
// speed and memory (Workers × (BlockSize + output + 4 × dictionary + 9 MiB):
// see the package doc).
type Config struct {
	// BlockSize is the number of uncompressed bytes per block (the last block
	// may be shorter). Smaller blocks parallelise finer and cost ratio.
	BlockSize int
	// Workers is the number of blocks encoded at once, with a pool of the
	// writer's own (Pool nil). Set it from configuration, not from the CPU
	// count, to keep memory predictable.
	Workers int
	// Pool, when set, encodes the blocks instead of a pool of the writer's
	// own: its workers are shared with every other writer using it, and
	// Workers does not apply. DictCap must be at most the pool's, and the
	// pool's block memory must hold a block.
	Pool *Pool
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

// slot is the memory of one block: its input, filled by Write, and its
// output buffer, both reused from block to block; charge is what the writer
// holds of its pool's block memory for them.
type slot struct {
	in, out []byte
	charge  int64
}

// job is one block being encoded in the pool; done is closed when out is
// set (nil if the encoding stopped).
type job struct {
	slot *slot
	done chan struct{}
	out  *encodedBlock
}

// writer is the io.WriteCloser NewWriter returns. It is not safe for
// concurrent use; only the encoding runs in other goroutines.
type writer struct {
	ctx      context.Context
	w        io.Writer
	cfg      Config
	pool     *Pool
	crcTable *crc64.Table

	cur     *slot  // the block being filled, nil between blocks
	pending []*job // submitted blocks in stream order
	free    []*slot
	records []indexRecord

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
// being encoded stop within 64 KiB of input each (tens of milliseconds of
// work at most), and Write and Close return ctx's error without writing
// more, so a cancelled compression ends at once instead of finishing the
// blocks in flight.
func NewWriterContext(ctx context.Context, w io.Writer, cfg Config) (io.WriteCloser, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	pool := cfg.Pool
	if pool == nil {
		// A pool of its own: Workers blocks in memory, the one being
		// filled included, and Workers encoders.
		if pool, err = NewPool(cfg.Workers, cfg.DictCap, int64(cfg.Workers)*BlockMemory(cfg.BlockSize)); err != nil {
			return nil, err
		}
	}
	if cfg.DictCap > pool.dictCap {
		return nil, fmt.Errorf("xzpar: dictionary capacity %d is over the pool's %d", cfg.DictCap, pool.dictCap)
	}
	if need := BlockMemory(cfg.BlockSize); need > pool.blockMemory {
		return nil, fmt.Errorf("xzpar: a block of %d bytes needs %d bytes, the pool has %d for blocks", cfg.BlockSize, need, pool.blockMemory)
	}
	return &writer{ctx: ctx, w: w, cfg: cfg, pool: pool, crcTable: crc64.MakeTable(crc64.ECMA)}, nil
}

// Write buffers p into blocks and hands each full block to the pool. Before
// it fills a new block it takes the block's memory: a slot of a block it
// wrote, or new memory from the pool; while the pool has none it writes its
// oldest block as soon as that is encoded.
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
			if x.startBlock() != nil {
				return n, x.err
			}
		}
		k := min(len(p), x.cfg.BlockSize-len(x.cur.in))
		x.appendInput(p[:k])
		p = p[k:]
		n += k
		if len(x.cur.in) == x.cfg.BlockSize {
			x.submit()
		}
	}
	return n, nil
}

// Close encodes the last partial block, waits for every block, and writes
// them, the index and the stream footer. After an error it still waits for the
// encoders, so no goroutine outlives Close, and returns that error. The
// block memory goes back to the pool.
func (x *writer) Close() error {
	if x.closed {
		return ErrClosed
	}
	x.closed = true
	if x.checkCtx() == nil && x.cur != nil && len(x.cur.in) > 0 {
		x.submit()
	}
	for len(x.pending) > 0 {
		x.writeOldest()
	}
	var charged int64
	for _, s := range x.free {
		charged += s.charge
	}
	if x.cur != nil { // not submitted: ctx is done
		charged += x.cur.charge
		x.pool.filling.Add(-1)
	}
	if charged > 0 {
		x.pool.blocks.Release(charged)
	}
	x.free, x.pending, x.cur = nil, nil, nil
	if x.err != nil {
		return x.err
	}
	x.writeHeader()
	idx := index(x.records)
	x.write(idx)
	x.write(streamFooter(len(idx)))
	return x.err
}

// startBlock makes x.cur an empty block: a written block's slot, or memory
// from the pool. While the pool has none, it writes the oldest pending block
// as soon as it is encoded (which frees a slot) and only waits for the pool
// with no block pending: a writer never waits for memory while it holds
// blocks that only it can write.
func (x *writer) startBlock() error {
	for {
		if x.checkCtx() != nil { // no new block once ctx is done
			return x.err
		}
		x.writeDone()
		if x.err != nil {
			return x.err
		}
		if n := len(x.free); n > 0 {
			x.cur = x.free[n-1]
			x.free = x.free[:n-1]
			x.cur.in = x.cur.in[:0]
			x.pool.filling.Add(1)
			return nil
		}
		charge := BlockMemory(x.cfg.BlockSize)
		if x.pool.blocks.TryAcquire(charge) {
			x.cur = &slot{charge: charge}
			x.pool.filling.Add(1)
			return nil
		}
		if len(x.pending) > 0 {
			x.writeOldest()
			continue
		}
		if err := x.pool.acquire(x.ctx, charge); err != nil {
			x.checkCtx()
			return x.err
		}
		x.cur = &slot{charge: charge}
		x.pool.filling.Add(1)
		return nil
	}
}

// appendInput appends p to the block being filled, growing its buffer by
// doubling but never past BlockSize, so a short stream does not allocate a
// whole block.
func (x *writer) appendInput(p []byte) {
	s := x.cur
	if need := len(s.in) + len(p); need > cap(s.in) {
		b := make([]byte, len(s.in), min(x.cfg.BlockSize, max(need, 2*cap(s.in), 64<<10)))
		adviseHugePages(b) // the match finder reads it at random
		copy(b, s.in)
		s.in = b
	}
	s.in = append(s.in, p...)
}

// submit hands x.cur to the pool. The slot of a short block (the last one)
// is charged only for the memory it has, and the rest goes back to the pool.
func (x *writer) submit() {
	s := x.cur
	x.cur = nil
	x.pool.filling.Add(-1)
	if need := outputCap(len(s.in)); int64(cap(s.out)) < need {
		s.out = make([]byte, 0, need)
	}
	if c := int64(cap(s.in) + cap(s.out)); c < s.charge {
		x.pool.blocks.Release(s.charge - c)
		s.charge = c
	}
	j := &job{slot: s, done: make(chan struct{})}
	x.pending = append(x.pending, j)
	x.pool.encode(x.ctx, j, x.cfg, x.crcTable)
}

// writeDone writes the pending blocks that are encoded, oldest first,
// without waiting for one that is not.
func (x *writer) writeDone() {
	for len(x.pending) > 0 {
		select {
		case <-x.pending[0].done:
			x.writeOldest()
		default:
			return
		}
	}
}

// writeOldest waits for the oldest pending block and writes it, unless an
// error already stopped the output; either way the block leaves the queue
// and its slot is free again: kept for the next block, or given back to the
// pool at once if other writers wait for memory.
func (x *writer) writeOldest() {
	j := x.pending[0]
	x.pending[0] = nil
	x.pending = x.pending[1:]
	<-j.done
	defer x.release(j.slot)
	b := j.out
	if b == nil { // the encoder stopped: ctx is done
		x.checkCtx()
		return
	}
	if x.err != nil {
		return
	}
	x.writeHeader()
	x.write(b.header)
	x.write(b.data)
	x.write(b.padding)
	x.write(b.check[:])
	x.records = append(x.records, b.record)
	j.slot.out = b.data[:0]
}

// release frees a written block's slot.
func (x *writer) release(s *slot) {
	if x.pool.waiting.Load() > 0 {
		x.pool.blocks.Release(s.charge)
		return
	}
	x.free = append(x.free, s)
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
