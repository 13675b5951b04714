package deb

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"io"
	"sync"
	"sync/atomic"
)

// fileHasher takes the md5 and sha256 of data.tar's files off the goroutine
// that writes data.tar, the one producer that feeds every compressor worker.
// That goroutine reads each file into a batch buffer and writes it into the
// tar at once; two lanes, a goroutine each, hash the batches in order, one
// md5 and one sha256, and hand a batch back once both are done. The small
// files of a package share batches: a lane wakes up once per batch, not once
// per file (measured on 1,719 files of Go source, 27 MB, on 2 cores without
// SHA-NI, where sha256 is slower than md5: cmd/updeb-bench/README.md, "Issue
// 28: hashing beside data.tar").
//
// The producer is held back only when every batch is being hashed, so at
// most hashBatches buffers of hashBatchSize are held.
type fileHasher struct {
	free  chan *hashBatch
	lanes [2]chan *hashBatch
	wg    sync.WaitGroup
	cur   *hashBatch // the batch being filled, nil when none
	sums  []fileSums // by file, in the order of copy's file numbers
}

// fileSums are a file's digests, each filled by its lane.
type fileSums struct{ md5, sha256 []byte }

// hashBatch is a buffer of file content and which file each part of it is.
type hashBatch struct {
	buf     []byte
	n       int
	parts   []hashPart
	pending atomic.Int32 // lanes still hashing it
}

// hashPart is a run of one file's bytes in a batch.
type hashPart struct {
	file        int
	start, end  int
	first, last bool  // the file's first bytes (the hash starts over) and last (its sum is taken)
	lanes       uint8 // the lanes that hash it: bit i for fh.lanes[i]
}

// The lanes' bits in hashPart.lanes.
const (
	md5Lane    = 1 << 0
	sha256Lane = 1 << 1
)

const (
	// hashBatches and hashBatchSize bound what a fileHasher holds (the
	// 2 MiB of pipeline's runPerBuildMemory that the .deb's copy buffers
	// had before).
	hashBatches   = 4
	hashBatchSize = 512 << 10
)

// newFileHasher returns a fileHasher for files numbered 0 to files-1 whose
// content is about total bytes (-1 if unknown), which sets the size of its
// buffers: a small package does not take 2 MiB. Its lanes run until close.
func newFileHasher(files int, total int64) *fileHasher {
	size := hashBatchSize
	if total >= 0 && total < hashBatchSize {
		size = int(max(total, 4<<10))
	}
	fh := &fileHasher{free: make(chan *hashBatch, hashBatches), sums: make([]fileSums, files)}
	for range hashBatches {
		fh.free <- &hashBatch{buf: make([]byte, size)}
	}
	for i, l := range []struct {
		bit  uint8
		hash func() hash.Hash
		put  func(file int, sum []byte)
	}{
		{md5Lane, md5.New, func(file int, sum []byte) { fh.sums[file].md5 = sum }},
		{sha256Lane, sha256.New, func(file int, sum []byte) { fh.sums[file].sha256 = sum }},
	} {
		fh.lanes[i] = make(chan *hashBatch, hashBatches)
		fh.wg.Add(1)
		go fh.lane(fh.lanes[i], l.bit, l.hash(), l.put)
	}
	return fh
}

// lane hashes the parts of the batches from in that have its bit with h,
// until in is closed.
func (fh *fileHasher) lane(in <-chan *hashBatch, bit uint8, h hash.Hash, put func(file int, sum []byte)) {
	defer fh.wg.Done()
	for b := range in {
		for _, p := range b.parts {
			if p.lanes&bit == 0 {
				continue
			}
			if p.first {
				h.Reset()
			}
			h.Write(b.buf[p.start:p.end])
			if p.last {
				put(p.file, h.Sum(nil))
			}
		}
		if b.pending.Add(-1) == 0 {
			b.n, b.parts = 0, b.parts[:0]
			fh.free <- b
		}
	}
}

// copy reads r to its end into the batches, writing what it reads to w as it
// goes, and has it hashed as file number file (its sha256 only if withSHA256:
// result gives "" for it otherwise). It returns the bytes read and
// the first read or write error as it is (io.EOF as nil); the file's digests
// are complete only once close has returned, and only if copy returned nil.
func (fh *fileHasher) copy(w io.Writer, file int, withSHA256 bool, r io.Reader) (int64, error) {
	var total int64
	lanes := uint8(md5Lane)
	if withSHA256 {
		lanes |= sha256Lane
	}
	for first := true; ; first = false {
		if fh.cur == nil {
			fh.cur = <-fh.free
		}
		b := fh.cur
		start := b.n
		k, err := fill(r, b.buf[start:])
		b.n += k
		total += int64(k)
		// A file that ends just as a batch fills has an empty last part in
		// the next batch (fill knows the end only when a read says so).
		b.parts = append(b.parts, hashPart{file: file, start: start, end: b.n, first: first, last: err == io.EOF, lanes: lanes})
		if k > 0 {
			if _, werr := w.Write(b.buf[start:b.n]); werr != nil {
				return total, werr
			}
		}
		if b.n == len(b.buf) {
			fh.send()
		}
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// send hands the batch being filled to the lanes.
func (fh *fileHasher) send() {
	b := fh.cur
	fh.cur = nil
	b.pending.Store(int32(len(fh.lanes)))
	for _, l := range fh.lanes {
		l <- b
	}
}

// close hashes what is left and stops the lanes; it returns once every
// digest is in sums. It is called once, after the last copy, error or not.
func (fh *fileHasher) close() {
	if fh.cur != nil && len(fh.cur.parts) > 0 {
		fh.send()
	}
	for _, l := range fh.lanes {
		close(l)
	}
	fh.wg.Wait()
}

// result is file's digests as FileResult writes them; call it after close.
func (fh *fileHasher) result(file int) (md5sum, sha256sum string) {
	return hex.EncodeToString(fh.sums[file].md5), hex.EncodeToString(fh.sums[file].sha256)
}
