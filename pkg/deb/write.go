package deb

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/updeb/updeb/pkg/atomicfile"
	"github.com/updeb/updeb/pkg/ctxio"
	"github.com/updeb/updeb/pkg/utf8cut"
)

// tempPattern is os.CreateTemp's pattern for a temporary file beside the
// package named base: ".BASE.WHAT-*", BASE cut to its first 128 bytes as
// atomicfile's temporary names are, so that the name stays under the file
// systems' 255 bytes for every package name CheckFileNameLength allows
// (whole, it went over from a name of 239 bytes, and the write failed with
// "file name too long": up to 247 bytes only when the random part drew ten
// digits, about three times in four).
func tempPattern(base, what string) string {
	return "." + utf8cut.Prefix(base, 128) + "." + what + "-*"
}

// Write validates p and writes it as a .deb to path: into a temporary file in
// the same directory, fsynced and renamed, so that path is either the complete
// package or untouched. Validation errors wrap ErrInvalid and list every problem
// found. data.tar is compressed into a second temporary file first (the ar
// header needs its size); both temporary files are removed on every path.
func Write(ctx context.Context, path string, p *Package) (res *Result, err error) {
	items, cdc, err := validate(p)
	if err != nil {
		return nil, err
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	dataTmp, err := os.CreateTemp(dir, tempPattern(base, "data"))
	if err != nil {
		return nil, err
	}
	defer func() {
		dataTmp.Close()
		os.Remove(dataTmp.Name())
	}()
	pr := &progress{report: p.Progress}
	opts := writerOptions{ctx: ctx, workers: p.XZWorkers, pool: p.Pool, xzMode: p.XZMode}
	files, err := compressInto(pr.out(dataTmp), cdc.forData(p.Control.Architecture), opts, func(w io.Writer) ([]FileResult, error) {
		return writeData(ctx, pr.in(w), items)
	})
	if err != nil {
		return nil, err
	}
	// A signal that came while the compressor finished stops the write
	// here, and during the copy below, rather than after the fsync.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dataSize, err := dataTmp.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil, err
	}
	pr.finish()
	if p.Amend != nil {
		if err := p.Amend(&p.Control); err != nil {
			return nil, err
		}
		if errs := validateControl(&p.Control); len(errs) > 0 {
			return nil, errors.Join(errs...)
		}
	}
	isize := installedSize(items)
	ctl, err := controlTar(p, isize, files)
	if err != nil {
		return nil, err
	}
	var ctlZ bytes.Buffer
	opts.workers, opts.pool = 1, nil // a few KiB: one small block of its own
	if _, err := compressInto(&ctlZ, cdc, opts, func(w io.Writer) (struct{}, error) {
		_, err := w.Write(ctl)
		return struct{}{}, err
	}); err != nil {
		return nil, err
	}
	if _, err := dataTmp.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}

	// The package is 0644 whatever the umask: it is meant to be served and copied.
	out, err := atomicfile.Create(path, 0o644)
	if err != nil {
		return nil, err
	}
	defer out.Abort() // a no-op once committed
	h := sha256.New()
	cw := &countWriter{}
	// The package's sha256 is taken aside while it is written: the copy of
	// the compressed data.tar runs once the compressor's workers are done, on
	// one goroutine, and would otherwise hash and write in turn. Its buffers
	// are the package's size (its members and at most 1 KiB of ar framing),
	// so a small package does not take 2 MiB.
	hw := newHashAside(io.MultiWriter(out, cw), h, dataSize+int64(ctlZ.Len())+1024)
	aw, err := newArWriter(hw)
	if err != nil {
		return nil, err
	}
	for _, m := range []struct {
		name string
		size int64
		r    io.Reader
	}{
		{"debian-binary", 4, bytes.NewReader([]byte("2.0\n"))},
		{"control.tar" + cdc.suffix, int64(ctlZ.Len()), &ctlZ},
		{"data.tar" + cdc.suffix, dataSize, ctxio.Reader(ctx, &punchingReader{f: dataTmp})},
	} {
		if err = aw.member(m.name, p.SourceDateEpoch, m.size, m.r); err != nil {
			return nil, fmt.Errorf("writing %s: %w", path, err)
		}
	}
	if err = hw.Flush(); err != nil {
		return nil, err
	}
	if err = out.Commit(); err != nil {
		return nil, err
	}
	return &Result{Path: path, Size: cw.n, SHA256: hex.EncodeToString(h.Sum(nil)), InstalledSize: isize, Files: files}, nil
}

// validate checks everything before a byte is written and returns the entries
// in output order.
func validate(p *Package) ([]*item, codec, error) {
	var errs []error
	cdc, err := codecFor(p.Compression)
	if err != nil {
		errs = append(errs, err)
	}
	if _, err := xzModeOf(p.XZMode); err != nil {
		errs = append(errs, err)
	}
	if p.SourceDateEpoch.Before(AncientBefore) {
		errs = append(errs, invalidf("SourceDateEpoch %v: required, and in 1976 or later (lintian reports a file dated 1975 or before: package-contains-ancient-file, an error)", p.SourceDateEpoch))
	}
	errs = append(errs, validateControl(&p.Control)...)
	errs = append(errs, validateScripts(p.Scripts)...)
	errs = append(errs, validateTriggers(p.Triggers)...)
	items, byPath, perrs := plan(p)
	errs = append(errs, perrs...)
	if perrs == nil {
		errs = append(errs, validateConffiles(p.Conffiles, byPath)...)
	}
	if len(errs) > 0 {
		return nil, codec{}, errors.Join(errs...)
	}
	return items, cdc, nil
}

// compressInto runs fill with a writer that compresses into w.
func compressInto[T any](w io.Writer, cdc codec, opts writerOptions, fill func(io.Writer) (T, error)) (T, error) {
	var zero T
	bw := bufio.NewWriterSize(w, 1<<20)
	zw, err := cdc.newWriter(bw, opts)
	if err != nil {
		return zero, err
	}
	v, err := fill(zw)
	if err != nil {
		zw.Close()
		return zero, err
	}
	if err := zw.Close(); err != nil {
		return zero, fmt.Errorf("%s compression: %w", cdc.compression, err)
	}
	return v, bw.Flush()
}

// punchingReader reads f from the start and gives the blocks of what it has
// read back to the file system every punchEvery bytes: the compressed data.tar
// is copied into the package, and the output folder holds it about once, not
// twice, while the copy runs.
type punchingReader struct {
	f             *os.File
	read, punched int64
}

const punchEvery = 8 << 20

func (r *punchingReader) Read(p []byte) (int, error) {
	n, err := r.f.Read(p)
	r.read += int64(n)
	if r.read-r.punched >= punchEvery {
		punchHole(r.f, r.punched, r.read-r.punched)
		r.punched = r.read
	}
	return n, err
}

type countWriter struct{ n int64 }

// progress counts data.tar's bytes into the compressor and out of it for
// Package.Progress. The compressor may write from its own goroutines, so the
// bytes out are counted atomically; the report is made from the writer's
// goroutine, on its writes of data.tar.
type progress struct {
	report func(in, out int64)
	inN    int64
	outN   atomic.Int64
}

func (p *progress) in(w io.Writer) io.Writer {
	if p.report == nil {
		return w
	}
	return writerFunc(func(b []byte) (int, error) {
		n, err := w.Write(b)
		if n > 0 {
			p.inN += int64(n)
			p.report(p.inN, p.outN.Load())
		}
		return n, err
	})
}

func (p *progress) out(w io.Writer) io.Writer {
	if p.report == nil {
		return w
	}
	return writerFunc(func(b []byte) (int, error) {
		n, err := w.Write(b)
		p.outN.Add(int64(n))
		return n, err
	})
}

// finish makes the last report, with every byte in and out.
func (p *progress) finish() {
	if p.report != nil {
		p.report(p.inN, p.outN.Load())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }
