package archive

import (
	"errors"
	"io"

	"github.com/updeb/updeb/pkg/xzpar"
)

// budget reads src through the scan's Budget (MaxTotal, MaxRatio, the
// context) and names the entry being read when the allowance is spent.
type budget struct {
	s     *scan
	src   io.Reader
	entry string // the entry being read, for the message
}

func (b *budget) Read(p []byte) (int, error) {
	n, err := b.s.bud.read(b.src, p)
	var be *BudgetError
	if errors.As(err, &be) {
		return n, b.s.errorf(ErrLimit, b.entry, nil, "%s", be.Error())
	}
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
	if errors.Is(err, xzpar.ErrUnsupported) {
		return s.errorf(ErrCorrupt, entry, err, "%s", unsupportedXz)
	}
	return s.errorf(ErrCorrupt, entry, err, "corrupt data")
}

// unsupportedXz says what an xzpar.ErrUnsupported error is about: valid xz
// data (xz -d reads it) that updeb does not read, not a corrupt download.
const unsupportedXz = "valid xz data that updeb's reader does not decode (xz -d does), not a corrupt download"
