package deb

import (
	"fmt"

	"github.com/updeb/updeb/pkg/xzpar"
)

// Pool is the compression capacity shared by every package written with it
// (Package.Pool), however many are written at once: at most Workers xz
// blocks are compressed at once, and the xz encoders and blocks of all the
// packages stay within Memory bytes. One large package keeps every worker
// busy; several small ones share them, each block waiting for a worker in
// the order it was filled. It never changes the bytes of a package. A
// process makes one and gives it to every package it writes.
type Pool struct {
	xz *xzpar.Pool
}

// maxLayout is the layout of xzLayouts with the largest blocks and
// dictionary, which a pool is sized for.
var maxLayout = xzLayouts[XZFast]

// DefaultPoolBlocks is how many 32 MiB xz blocks (either mode) a pool of workers
// workers has room for by default (NewPool): one per worker, one being
// filled, and a quarter more, done but waiting for an older block of their
// package to be written (blocks take unequal times).
func DefaultPoolBlocks(workers int) int {
	return workers + 1 + workers/4
}

// PoolBlockMemory is what each block of a pool's room holds (xzpar.BlockMemory
// of the modes' 32 MiB blocks: 66 MiB).
var PoolBlockMemory = xzpar.BlockMemory(maxLayout.blockSize)

// MaxPoolBlocks is the most blocks worth a pool's room (NewPoolBlocks): 4 ×
// workers + 4. More room than the default let the fast mode finish large
// packages in 16-20% less time on 4 to 16 cores, with the same bytes
// (cmd/updeb-bench/README.md, "On 16 cores").
func MaxPoolBlocks(workers int) int {
	return 4*workers + 4
}

// PoolMemory is the most memory a pool of workers workers holds: an xz
// encoder per worker (xzpar.EncoderMemory: 73 MiB for the 16 MiB
// dictionary) and DefaultPoolBlocks 32 MiB xz blocks
// (PoolBlockMemory: 66 MiB for 32 MiB of input and room for its output). 1 worker: 205 MiB, 2:
// 344 MiB, 4: 688 MiB, 16: 2.5 GiB.
func PoolMemory(workers int) int64 {
	return PoolMemoryBlocks(workers, DefaultPoolBlocks(workers))
}

// PoolMemoryBlocks is the most memory a pool of workers workers and room
// for blocks blocks holds (NewPoolBlocks).
func PoolMemoryBlocks(workers, blocks int) int64 {
	return int64(workers)*xzpar.EncoderMemory(maxLayout.dictCap) + int64(blocks)*PoolBlockMemory
}

// PoolWorkers is the most workers, at most cpus and at least one, whose
// PoolMemory fits in memory bytes.
func PoolWorkers(cpus int, memory int64) int {
	n := 1
	for n < min(cpus, xzpar.MaxWorkers) && PoolMemory(n+1) <= memory {
		n++
	}
	return n
}

// NewPool returns a pool of workers workers (1 to xzpar.MaxWorkers),
// holding at most PoolMemory(workers) bytes.
func NewPool(workers int) (*Pool, error) {
	return NewPoolBlocks(workers, 0)
}

// NewPoolBlocks is NewPool with room for blocks 32 MiB xz blocks
// (0: the default, workers + 1 + workers/4; at least workers + 1): more
// lets more blocks finish behind a slow one (MaxPoolBlocks). It holds at
// most PoolMemoryBlocks(workers, blocks) bytes.
func NewPoolBlocks(workers, blocks int) (*Pool, error) {
	if workers < 1 || workers > xzpar.MaxWorkers {
		return nil, invalidf("pool of %d workers: expected 1 to %d", workers, xzpar.MaxWorkers)
	}
	if blocks == 0 {
		blocks = DefaultPoolBlocks(workers)
	}
	if blocks < workers+1 {
		return nil, invalidf("pool of %d workers and %d blocks: expected at least %d blocks", workers, blocks, workers+1)
	}
	p, err := xzpar.NewPool(workers, maxLayout.dictCap, int64(blocks)*PoolBlockMemory)
	if err != nil {
		return nil, fmt.Errorf("deb: %w", err)
	}
	return &Pool{xz: p}, nil
}

// Workers is how many xz blocks (or zstd jobs) the pool compresses at once.
func (p *Pool) Workers() int { return p.xz.Workers() }

// Blocks is how many 32 MiB xz blocks the pool has room for.
func (p *Pool) Blocks() int {
	return int((p.xz.Memory() - PoolMemoryBlocks(p.Workers(), 0)) / PoolBlockMemory)
}

// Memory is the most the pool holds (PoolMemoryBlocks of its workers and
// blocks).
func (p *Pool) Memory() int64 { return p.xz.Memory() }
