package deb

import (
	"hash"
	"io"
)

// hashChunk is hashAside's chunk at most: the size of each write to w and of
// each hash the goroutine takes.
const hashChunk = 1 << 20

// hashAside writes to w in chunks (hashChunk at most) and hashes the same
// bytes into h on a goroutine of its own (a chunk under hashInline on the
// caller's), while the next chunk is read or filled and w is written. Where
// a core is free (at the end of a package, once the compressor's workers
// are done) a copy that hashes then takes about the longer of the two per
// byte instead of their sum. Its two buffers alternate: one is hashed (and
// written) while the other fills. h is complete, and may be read, once Flush
// has returned; a write error is kept and returned by every call after it.
type hashAside struct {
	w    io.Writer
	h    hash.Hash
	bufs [2][]byte
	cur  int           // the buffer being filled
	n    int           // its bytes
	done chan struct{} // closed once the other buffer's hash is done; nil when none runs
	err  error
}

// newHashAside returns a hashAside whose chunks hold size bytes, up to
// hashChunk: a small package gets small buffers, not 2 MiB of zeroed memory.
func newHashAside(w io.Writer, h hash.Hash, size int64) *hashAside {
	n := int(max(1, min(size, hashChunk)))
	return &hashAside{w: w, h: h, bufs: [2][]byte{make([]byte, n), make([]byte, n)}}
}

func (a *hashAside) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 && a.err == nil {
		k := copy(a.bufs[a.cur][a.n:], p)
		a.n += k
		p = p[k:]
		written += k
		if a.n == len(a.bufs[a.cur]) {
			a.send()
		}
	}
	return written, a.err
}

// Flush writes and hashes what is buffered and waits for the hash.
func (a *hashAside) Flush() error {
	if a.n > 0 && a.err == nil {
		a.send()
	}
	a.wait()
	return a.err
}

// hashInline is the chunk below which send hashes on the calling goroutine:
// handing a small chunk to a goroutine costs more than its hash (a wake-up
// and a wait through the scheduler, futex calls where the goroutine lands on
// another thread).
const hashInline = 64 << 10

// send hashes the filled buffer on a goroutine while writing it to w (on
// this goroutine, before writing it, if it is smaller than hashInline), and
// turns to the other buffer once that one's hash is done.
func (a *hashAside) send() {
	chunk := a.bufs[a.cur][:a.n]
	a.wait()
	if len(chunk) < hashInline {
		a.h.Write(chunk)
	} else {
		done := make(chan struct{})
		go func() {
			a.h.Write(chunk)
			close(done)
		}()
		a.done = done
	}
	if _, err := a.w.Write(chunk); err != nil {
		a.err = err
	}
	a.cur ^= 1
	a.n = 0
}

func (a *hashAside) wait() {
	if a.done != nil {
		<-a.done
		a.done = nil
	}
}
