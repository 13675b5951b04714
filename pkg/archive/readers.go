package archive

import (
	"errors"
	"io"
)

// budget counts decompressed bytes against Limits.MaxTotal and checks the
// context. Every byte any entry, header or padding costs passes through one.
type budget struct {
	s     *scan
	src   io.Reader
	total int64
	entry string // the entry being read, for the message
}

func (b *budget) Read(p []byte) (int, error) {
	if err := b.s.ctx.Err(); err != nil {
		return 0, err
	}
	left := b.s.lim.MaxTotal - b.total
	if left <= 0 {
		// Exactly MaxTotal bytes is allowed; one more is not.
		var probe [1]byte
		n, err := b.src.Read(probe[:])
		if n > 0 {
			return 0, b.s.errorf(ErrLimit, b.entry, nil, "decompressed data exceeds %d bytes (Limits.MaxTotal): refusing a possible decompression bomb", b.s.lim.MaxTotal)
		}
		return 0, err
	}
	if int64(len(p)) > left {
		p = p[:left]
	}
	n, err := b.src.Read(p)
	b.total += int64(n)
	return n, err
}

// entryReader hands fn exactly remaining bytes of one member. It turns an early
// end into a "truncated" ErrCorrupt, and after the last byte it reads the source
// once more so the format's end-of-data check (zip's CRC and size) runs and
// any excess data is refused.
type entryReader struct {
	s         *scan
	entry     string
	src       io.Reader
	remaining int64
	err       error // sticky
}

func (r *entryReader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if r.remaining == 0 {
		var probe [1]byte
		n, err := io.ReadFull(r.src, probe[:])
		switch {
		case n > 0:
			r.err = r.s.errorf(ErrCorrupt, r.entry, nil, "more data than the declared size")
		case err == io.EOF:
			r.err = io.EOF
		default:
			r.err = r.s.wrapRead(r.entry, err)
		}
		return 0, r.err
	}
	if int64(len(p)) > r.remaining {
		p = p[:r.remaining]
	}
	n, err := r.src.Read(p)
	r.remaining -= int64(n)
	if err == io.EOF {
		if r.remaining > 0 {
			err = io.ErrUnexpectedEOF
		} else {
			err = nil // the probe above confirms the end
		}
	}
	if err != nil {
		r.err = r.s.wrapRead(r.entry, err)
		return n, r.err
	}
	return n, nil
}

// wrapRead classifies an error from the decompression or container layers.
// Errors this package made already (limits) and context errors pass unchanged.
func (s *scan) wrapRead(entry string, err error) error {
	var own *Error
	if errors.As(err, &own) {
		return err
	}
	if ctxErr := s.ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
		return err
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return s.errorf(ErrCorrupt, entry, err, "truncated: the data ends early")
	}
	return s.errorf(ErrCorrupt, entry, err, "corrupt data")
}
