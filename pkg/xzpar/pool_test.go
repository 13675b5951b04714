package xzpar

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// poolStreams are the streams TestPoolSharedBytes writes at once through
// one pool: both modes, the x86 filter, several block sizes, short and
// empty streams.
func poolStreams(t *testing.T) []struct {
	in  []byte
	cfg Config
} {
	const bs = 32 << 10
	return []struct {
		in  []byte
		cfg Config
	}{
		{textData(5*bs + 17), Config{BlockSize: bs, DictCap: bs}},
		{append(randomData(bs, 11), textData(2*bs)...), Config{BlockSize: bs, DictCap: bs}},
		{textData(3*bs/2 + 5), Config{BlockSize: bs / 2, DictCap: bs, Mode: ModeBest}},
		{machineCode(t, 3*bs), Config{BlockSize: bs, DictCap: bs / 2, X86: true}},
		{textData(100), Config{BlockSize: bs, DictCap: bs}},
		{nil, Config{BlockSize: bs, DictCap: bs}},
	}
}

// TestPoolSharedBytes writes several streams at once through pools of 1, 2
// and many workers, with block memory for one block up to plenty: every
// stream has the bytes of a writer of its own with one worker, and the
// pool has all its memory back afterwards.
func TestPoolSharedBytes(t *testing.T) {
	streams := poolStreams(t)
	want := make([][]byte, len(streams))
	for i, s := range streams {
		cfg := s.cfg
		cfg.Workers = 1
		want[i] = compress(t, s.in, cfg)
	}
	block := BlockMemory(32 << 10)
	for _, tc := range []struct {
		workers int
		blocks  int64
	}{{1, 1}, {1, 4}, {2, 1}, {2, 3}, {7, 2}, {7, 40}} {
		t.Run(fmt.Sprintf("%d workers, memory for %d blocks", tc.workers, tc.blocks), func(t *testing.T) {
			p, err := NewPool(tc.workers, 32<<10, tc.blocks*block)
			if err != nil {
				t.Fatal(err)
			}
			got := make([][]byte, len(streams))
			var wg sync.WaitGroup
			for i, s := range streams {
				wg.Go(func() {
					cfg := s.cfg
					cfg.Pool, cfg.Workers = p, 5 // Workers does not apply with a pool
					got[i] = compress(t, s.in, cfg)
				})
			}
			wg.Wait()
			for i := range streams {
				if !bytes.Equal(got[i], want[i]) {
					t.Errorf("stream %d: %d bytes through the pool, %d with a writer of its own", i, len(got[i]), len(want[i]))
				}
			}
			if !p.blocks.TryAcquire(p.blockMemory) {
				t.Errorf("the pool's block memory is not all back after every writer closed")
			}
		})
	}
}

// TestPoolWaitsForMemory: a writer that finds the pool's block memory taken
// by another writer waits for it; once its context is done it returns the
// context's error at once, and the other writer is unaffected.
func TestPoolWaitsForMemory(t *testing.T) {
	const bs = 16 << 10
	p, err := NewPool(2, bs, BlockMemory(bs))
	if err != nil {
		t.Fatal(err)
	}
	in := textData(3 * bs)
	var outA bytes.Buffer
	a, err := NewWriter(&outA, Config{BlockSize: bs, DictCap: bs, Pool: p})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Write(in[:bs/2]); err != nil { // holds the only block
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var outB bytes.Buffer
	b, err := NewWriterContext(ctx, &outB, Config{BlockSize: bs, DictCap: bs, Pool: p})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() {
		_, err := b.Write(in)
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("Write without memory in the pool returned %v; want it to wait", err)
	case <-time.After(100 * time.Millisecond):
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Write after cancel = %v, want %v", err, context.Canceled)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Write still waiting 5 s after its context was cancelled")
	}
	if err := b.Close(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Close = %v, want %v", err, context.Canceled)
	}
	if _, err := a.Write(in[bs/2:]); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if want := compress(t, in, Config{BlockSize: bs, DictCap: bs, Workers: 1}); !bytes.Equal(outA.Bytes(), want) {
		t.Fatalf("the writer that kept its memory wrote %d bytes, want %d", outA.Len(), len(want))
	}
	if !p.blocks.TryAcquire(p.blockMemory) {
		t.Fatal("the pool's block memory is not all back")
	}
}

func TestPoolConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name             string
		workers, dictCap int
		blockMemory      int64
	}{
		{"no workers", 0, 0, 1 << 30},
		{"too many workers", MaxWorkers + 1, 0, 1 << 30},
		{"dictionary too small", 1, 100, 1 << 30},
		{"no block memory", 1, 0, 10},
	} {
		if _, err := NewPool(tc.workers, tc.dictCap, tc.blockMemory); err == nil {
			t.Errorf("%s: NewPool(%d, %d, %d) = nil error", tc.name, tc.workers, tc.dictCap, tc.blockMemory)
		}
	}
	p, err := NewPool(1, 1<<20, BlockMemory(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []Config{
		{Pool: p, BlockSize: 1 << 20, DictCap: 2 << 20}, // dictionary over the pool's
		{Pool: p, BlockSize: 2 << 20, DictCap: 1 << 20}, // a block over the pool's memory
	} {
		if _, err := NewWriter(&bytes.Buffer{}, cfg); err == nil {
			t.Errorf("NewWriter(block %d, dictionary %d) with a pool for 1 MiB blocks and dictionaries = nil error", cfg.BlockSize, cfg.DictCap)
		}
	}
	if got, want := p.Memory(), EncoderMemory(1<<20)+BlockMemory(1<<20); got != want {
		t.Errorf("Memory() = %d, want %d", got, want)
	}
}

// TestPoolReserve: memory reserved for a compressor outside the pool makes
// writers wait for it until it is released; a reservation waits for memory
// too, and returns at once when cancelled.
func TestPoolReserve(t *testing.T) {
	const bs = 16 << 10
	p, err := NewPool(1, bs, 2*BlockMemory(bs))
	if err != nil {
		t.Fatal(err)
	}
	release, err := p.Reserve(context.Background(), 1<<40) // all of it
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	if _, err := p.Reserve(ctx, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Reserve with nothing left = %v, want %v", err, context.DeadlineExceeded)
	}
	cancel()
	in := textData(3 * bs)
	done := make(chan []byte)
	go func() { done <- compress(t, in, Config{BlockSize: bs, DictCap: bs, Pool: p}) }()
	select {
	case <-done:
		t.Fatal("a writer wrote while all the pool's memory was reserved")
	case <-time.After(100 * time.Millisecond):
	}
	release()
	release() // twice is once
	select {
	case out := <-done:
		if want := compress(t, in, Config{BlockSize: bs, DictCap: bs, Workers: 1}); !bytes.Equal(out, want) {
			t.Fatal("the writer that waited wrote other bytes")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the writer still waits 10 s after the reservation was released")
	}
	if !p.blocks.TryAcquire(p.blockMemory) {
		t.Fatal("the pool's memory is not all back")
	}
}

// TestPoolReadsAheadLittle: a writer much faster than the pool's one
// encoder, with memory for 40 blocks, submits one full block at a time
// that waits for the encoder (maxAhead); the memory is there for blocks done behind a
// slow one, not for input read ahead. The bytes are those of a writer of
// its own.
func TestPoolReadsAheadLittle(t *testing.T) {
	const bs = 16 << 10
	in := textData(30 * bs)
	p, err := NewPool(1, bs, 40*BlockMemory(bs))
	if err != nil {
		t.Fatal(err)
	}
	got := compress(t, in, Config{BlockSize: bs, DictCap: bs, Pool: p})
	if want := compress(t, in, Config{BlockSize: bs, DictCap: bs, Workers: 1}); !bytes.Equal(got, want) {
		t.Errorf("%d bytes through the pool, %d with a writer of its own", len(got), len(want))
	}
	if m := p.aheadMax.Load(); m != 1 {
		t.Errorf("%d full blocks waited for the encoder at once, want 1", m)
	}
	if !p.blocks.TryAcquire(p.blockMemory) {
		t.Errorf("the pool's block memory is not all back after the writer closed")
	}
}
