// Package multigzip reads a file of concatenated gzip members as one stream,
// as gzip -d and zlib's gzread do, with a stated rule for what may follow the
// last member, and errors that say what is wrong where Go's gzip reader says
// only "invalid header" or, for a header cut short, nothing at all.
package multigzip

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/klauspost/compress/gzip"
	"github.com/updeb/updeb/pkg/ctxio"
)

// After is what a Reader takes after the last member.
type After int

const (
	// Nothing: any byte after the last member is an error (zlib ignores
	// them: content no tool shows). dpkg's view of a .deb's members.
	Nothing After = iota
	// ZeroPadding: zero bytes to the end of the file are padding. bsdtar
	// (the tar of macOS and the BSDs) pads a .tar.gz it writes to a pipe
	// with zeros to a whole 10 KiB block, which gzip -d, GNU tar, bsdtar
	// and Python read without a word. Zeros and then more data (gzip -d
	// ignores it, Python reads a member there) are still an error.
	ZeroPadding
)

var (
	// ErrEmpty is the error of an input with no byte at all.
	ErrEmpty = errors.New("gzip: empty, no member")
	// ErrNotGzip is wrapped by the error of a first member that does not
	// start as gzip does.
	ErrNotGzip = errors.New("not gzip")
)

// Reader reads the members one after another. Its errors wrap gzip.ErrHeader
// for a header Go's reader refuses and io.ErrUnexpectedEOF for a file cut in
// a header or a member.
type Reader struct {
	ctx     context.Context
	br      *bufio.Reader // the gzip reader stops right after each member
	zr      gzip.Reader
	after   After
	members int   // started so far
	err     error // sticky: io.ReadFull drops an error that comes with the last bytes
}

// NewReader starts the first member of r. ctx stops a long read of zero
// padding. r is read through a bufio.Reader (r itself if it is one) so that
// the gzip reader stops at each member's end.
func NewReader(ctx context.Context, r io.Reader, after After) (*Reader, error) {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReader(r)
	}
	g := &Reader{ctx: ctx, br: br, after: after}
	if _, err := br.Peek(1); err == io.EOF {
		return nil, ErrEmpty
	} else if err != nil {
		return nil, err
	}
	if err := g.start(); err != nil {
		return nil, err
	}
	return g, nil
}

// start starts the member at the reader's position.
func (g *Reader) start() error {
	g.members++
	head, _ := g.br.Peek(g.br.Size())
	err := g.zr.Reset(g.br)
	switch {
	case err == io.EOF:
		// klauspost's reader ends a header cut in its file name or
		// comment with io.EOF, as if no member had begun: a file cut
		// there would read as a whole one, where gzip -d says
		// "unexpected end of file".
		return fmt.Errorf("gzip: member %d ends inside its header: %w", g.members, io.ErrUnexpectedEOF)
	case errors.Is(err, gzip.ErrHeader):
		return fmt.Errorf("gzip: the header of member %d: %w", g.members, readHeaderProblem(head))
	case err != nil:
		return err
	}
	g.zr.Multistream(false)
	return nil
}

func (g *Reader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for g.err == nil {
		n, err := g.zr.Read(p)
		if err == io.EOF {
			err = g.next()
		}
		g.err = err
		if n > 0 {
			return n, nil
		}
	}
	return 0, g.err
}

// Close closes the gzip reader; it does not close the input.
func (g *Reader) Close() error { return g.zr.Close() }

// next starts the member after the one that just ended, or reads what
// follows the last one to the end of the file and returns io.EOF.
func (g *Reader) next() error {
	head, err := g.br.Peek(2)
	switch {
	case len(head) == 0 && err == io.EOF:
		return io.EOF
	case len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b:
		return g.start()
	case len(head) == 0:
		return err
	}
	r := ctxio.Reader(g.ctx, g.br)
	if g.after == Nothing {
		n, err := io.Copy(io.Discard, r)
		if err != nil {
			return err
		}
		return fmt.Errorf("gzip: %d bytes after the last member that are not gzip (zlib ignores them: content no tool shows)", n)
	}
	trailing := errors.New("gzip: data after the last member that is neither another member nor zero padding (gzip -d ignores it: content a reviewer would not see)")
	if head[0] != 0 {
		return trailing
	}
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if slices.ContainsFunc(buf[:n], func(c byte) bool { return c != 0 }) {
			return trailing
		}
		if err != nil {
			return err
		}
	}
}

// headerProblem is the error of a header Go's reader refuses: it says what
// is wrong, and is gzip.ErrHeader (and ErrNotGzip where it is not gzip's).
type headerProblem struct {
	what    string
	notGzip bool
}

func (e *headerProblem) Error() string { return e.what }

func (e *headerProblem) Is(target error) bool {
	return target == gzip.ErrHeader || e.notGzip && target == ErrNotGzip
}

// readHeaderProblem says what in the gzip header at the start of head made
// Go's reader refuse it.
func readHeaderProblem(head []byte) error {
	if len(head) < 10 || head[0] != 0x1f || head[1] != 0x8b || head[2] != 8 {
		return &headerProblem{fmt.Sprintf("not gzip (it starts with %q)", head[:min(len(head), 4)]), true}
	}
	flags, rest := head[3], head[10:]
	if flags&4 != 0 && len(rest) >= 2 { // FEXTRA: a length, then the field
		rest = rest[min(len(rest), 2+int(binary.LittleEndian.Uint16(rest))):]
	}
	for _, s := range []struct {
		flag byte
		what string
	}{{8, "file name"}, {16, "comment"}} {
		if flags&s.flag == 0 {
			continue
		}
		end := bytes.IndexByte(rest, 0)
		if end < 0 || end > 511 {
			return &headerProblem{fmt.Sprintf("its %s is longer than 511 bytes, which Go's gzip reader refuses (gzip -d and zlib skip it; neither gzip nor dpkg-deb writes one that long)", s.what), false}
		}
		rest = rest[end+1:]
	}
	if flags>>5 != 0 {
		return &headerProblem{fmt.Sprintf("reserved header flags %#x are set (gzip -d refuses them too)", flags), false}
	}
	return &headerProblem{"the header checksum does not match (gzip -d refuses it too)", false}
}
