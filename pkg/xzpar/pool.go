package xzpar

import (
	"context"
	"fmt"
	"hash/crc64"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/semaphore"
)

// Pool is the encoding capacity of any number of writers (Config.Pool): at
// most Workers blocks are encoded at once, by encoders the pool allocates
// once and lends out, whatever the number of writers, and the blocks of all
// of them (the one each writer fills, those being encoded and those done but
// not yet written) stay within the pool's block memory. A writer takes a
// block's memory before it fills the block and gives it back when it closes,
// or as soon as the block is written while other writers wait for memory, so
// several writers share the workers in the order they asked; encoding starts
// in the order blocks were submitted, across writers. One large stream can
// so keep every worker busy, and several small ones share them.
//
// The pool never changes the bytes: those depend only on each writer's
// Config. It is safe for concurrent use.
type Pool struct {
	workers     int
	dictCap     int
	blockMemory int64
	// encoders holds the idle encoders: workers entries at first, all nil
	// (an encoder is allocated when first needed).
	encoders chan *lzmaEncoder
	blocks   *semaphore.Weighted
	// ahead admits the full blocks that wait for an encoder (maxAhead):
	// a writer submits a block only with one of its places, so that the
	// memory beyond the blocks being encoded holds blocks done but not
	// yet written (behind a slow one) rather than input read far ahead.
	ahead *semaphore.Weighted
	// waiting counts the writers blocked in acquire: a writer that sees
	// one gives each block's memory back as soon as the block is written.
	waiting atomic.Int32
	// queued counts the blocks waiting for an encoder: while there are
	// any, no encoder is lent to help with a block (split.go).
	queued atomic.Int32
	// filling counts the blocks writers are filling: each will want an
	// encoder soon, so none is lent to help either.
	filling atomic.Int32
	// lent and followed count the helpers lent and the symbols coders
	// took from their streams, aheadMax the most blocks that waited for an
	// encoder at once (for tests and measurements).
	lent, followed, aheadMax atomic.Int64
}

// maxAhead is how many full blocks may wait for an encoder at once, across
// a pool's writers: enough that an encoder that frees finds one ready
// (filling a block takes 0.1-0.2 s, encoding one 3-7 s; one more per 8
// workers, as more encoders free at about the same time).
func maxAhead(workers int) int64 { return 1 + int64(workers)/8 }

// EncoderMemory is what one encoder holds for dictionaries up to dictCap
// bytes (the package doc's 4 × dict + 9 MiB; less below a 2 MiB dictionary,
// whose hash tables are smaller).
func EncoderMemory(dictCap int) int64 {
	return 4*int64(dictCap) + 4<<hash4BitsFor(uint32(dictCap)) + 5<<20
}

// BlockMemory is what one block of blockSize bytes holds while it is filled,
// encoded and waiting to be written: its input and room for its output
// (blockSize + blockSize/16 + 4 KiB, what incompressible data takes).
func BlockMemory(blockSize int) int64 {
	return int64(blockSize) + outputCap(blockSize)
}

// outputCap is the capacity of a block's output buffer: room for
// incompressible data (stored chunks add 3 bytes per 64 KiB), so the buffer
// never grows by copying; only the pages written to count in memory.
func outputCap(n int) int64 {
	return int64(n) + int64(n)/16 + 4096
}

// NewPool returns a pool of workers encoders for dictionaries up to dictCap
// bytes (0: DefaultDictCap) and blockMemory bytes of blocks: at least
// BlockMemory of the largest BlockSize of the writers that will use it.
// It holds at most Memory bytes.
func NewPool(workers, dictCap int, blockMemory int64) (*Pool, error) {
	if dictCap == 0 {
		dictCap = DefaultDictCap
	}
	if workers < 1 || workers > MaxWorkers {
		return nil, fmt.Errorf("xzpar: pool of %d workers out of range: want 1 to %d", workers, MaxWorkers)
	}
	if dictCap < MinDictCap || dictCap > MaxDictCap {
		return nil, fmt.Errorf("xzpar: pool dictionary capacity %d out of range: want %d to %d bytes", dictCap, MinDictCap, MaxDictCap)
	}
	if blockMemory < BlockMemory(1) {
		return nil, fmt.Errorf("xzpar: pool block memory of %d bytes holds no block", blockMemory)
	}
	p := &Pool{workers: workers, dictCap: dictCap, blockMemory: blockMemory,
		encoders: make(chan *lzmaEncoder, workers), blocks: semaphore.NewWeighted(blockMemory),
		ahead: semaphore.NewWeighted(maxAhead(workers))}
	for range workers {
		p.encoders <- nil
	}
	return p, nil
}

// Workers is how many blocks the pool encodes at once.
func (p *Pool) Workers() int { return p.workers }

// Memory is the most the pool holds: its encoders and its block memory.
func (p *Pool) Memory() int64 {
	return int64(p.workers)*EncoderMemory(p.dictCap) + p.blockMemory
}

// acquire waits for n bytes of block memory, or until ctx is done.
func (p *Pool) acquire(ctx context.Context, n int64) error {
	p.waiting.Add(1)
	defer p.waiting.Add(-1)
	return p.blocks.Acquire(ctx, n)
}

// encode runs j on the next idle encoder, in submission order, and closes
// j.done when j.out is set (nil if ctx was done first or the encoder was
// told to stop). It first waits for a place among the blocks that wait for
// an encoder (maxAhead), given back once an encoder takes j.
func (p *Pool) encode(ctx context.Context, j *job, cfg Config, crcTable *crc64.Table) {
	if err := p.ahead.Acquire(ctx, 1); err != nil {
		close(j.done) // j.out stays nil: ctx is done
		return
	}
	q := int64(p.queued.Add(1))
	for m := p.aheadMax.Load(); q > m; m = p.aheadMax.Load() {
		if p.aheadMax.CompareAndSwap(m, q) {
			break
		}
	}
	go func() {
		defer close(j.done)
		var enc *lzmaEncoder
		got := false
		select {
		case enc = <-p.encoders:
			got = true
		case <-ctx.Done():
		}
		p.queued.Add(-1)
		p.ahead.Release(1)
		if !got {
			return
		}
		if enc == nil {
			enc = newLZMAEncoder(cfg.Mode)
		}
		enc.stopped = func() bool { return ctx.Err() != nil }
		j.out = encodeBlock(enc, j.slot.in, j.slot.out, cfg, crcTable, p)
		enc.stopped = nil
		p.encoders <- enc
	}()
}

// lendHelper returns an idle encoder and memory bytes for a helper of a
// block being encoded (split.go), if no block waits for an encoder and no
// writer for memory.
func (p *Pool) lendHelper(memory int64) (*lzmaEncoder, bool) {
	if p.busy() || !p.blocks.TryAcquire(memory) {
		return nil, false
	}
	select {
	case enc := <-p.encoders:
		if enc == nil {
			enc = newLZMAEncoder(ModeFast)
		}
		p.lent.Add(1)
		return enc, true
	default:
		p.blocks.Release(memory)
		return nil, false
	}
}

// returnHelper takes back the encoder lendHelper lent; the memory comes
// back with releaseHelper, once the block is coded: the helper's stream
// lives until then.
func (p *Pool) returnHelper(enc *lzmaEncoder) { p.encoders <- enc }

// releaseHelper takes back the memory lendHelper lent.
func (p *Pool) releaseHelper(memory int64) { p.blocks.Release(memory) }

// busy reports whether a block waits for an encoder or is being filled.
func (p *Pool) busy() bool { return p.queued.Load() > 0 || p.filling.Load() > 0 }

// Reserve takes n bytes of the pool's block memory (all of it at most) for
// a compressor that runs outside the pool, such as a zstd encoder's jobs,
// waiting until they are free or ctx is done, so that it shares the pool's
// bound; release gives them back.
func (p *Pool) Reserve(ctx context.Context, n int64) (release func(), err error) {
	n = min(n, p.blockMemory)
	if err := p.acquire(ctx, n); err != nil {
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(func() { p.blocks.Release(n) }) }, nil
}
