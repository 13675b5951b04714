package xzpar_test

import (
	"bytes"
	"fmt"
	"io"
	"log"
	"strings"

	"github.com/updeb/updeb/pkg/xzpar"
)

// Compress a stream in independent blocks and read it back. The bytes depend
// on BlockSize, DictCap, Mode and X86, never on Workers: any machine writes
// the same stream.
func Example() {
	in := strings.Repeat("the same bytes on every machine\n", 1<<14) // 512 KiB
	var one, four bytes.Buffer
	for _, c := range []struct {
		out     *bytes.Buffer
		workers int
	}{{&one, 1}, {&four, 4}} {
		w, err := xzpar.NewWriter(c.out, xzpar.Config{BlockSize: 128 << 10, Workers: c.workers})
		if err != nil {
			log.Fatal(err)
		}
		if _, err := io.WriteString(w, in); err != nil {
			log.Fatal(err)
		}
		if err := w.Close(); err != nil {
			log.Fatal(err)
		}
	}
	r, err := xzpar.NewReader(bytes.NewReader(one.Bytes()))
	if err != nil {
		log.Fatal(err)
	}
	back, err := io.ReadAll(r)
	if err != nil {
		log.Fatal(err)
	}
	blocks, err := xzpar.Blocks(one.Bytes())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("round trip:", string(back) == in)
	fmt.Println("same bytes for 1 and 4 workers:", bytes.Equal(one.Bytes(), four.Bytes()))
	fmt.Println("blocks:", len(blocks))
	// Output:
	// round trip: true
	// same bytes for 1 and 4 workers: true
	// blocks: 4
}
