// Package ctxio stops a long read when its context is done: a command
// reading a file of gigabytes (a package to hash or unpack, a signature's
// data) stops within a moment of SIGINT or SIGTERM, not at the file's end.
package ctxio

import (
	"context"
	"io"
)

// Reader returns r, which from the first read after ctx is done returns
// ctx's error instead of reading.
func Reader(ctx context.Context, r io.Reader) io.Reader { return reader{ctx, r} }

type reader struct {
	ctx context.Context
	r   io.Reader
}

func (c reader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
