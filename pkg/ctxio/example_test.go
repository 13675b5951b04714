package ctxio_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/updeb/updeb/pkg/ctxio"
)

// Read a long input through Reader: once the context is done (a signal, a
// deadline), the next read returns the context's error instead of data.
func ExampleReader() {
	ctx, cancel := context.WithCancel(context.Background())
	r := ctxio.Reader(ctx, strings.NewReader("gigabytes of a package"))

	buf := make([]byte, 9)
	n, err := r.Read(buf)
	fmt.Printf("%q %v\n", buf[:n], err)

	cancel()
	_, err = io.ReadAll(r)
	fmt.Println(errors.Is(err, context.Canceled))
	// Output:
	// "gigabytes" <nil>
	// true
}
