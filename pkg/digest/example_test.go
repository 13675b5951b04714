package digest_test

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/updeb/updeb/pkg/digest"
)

// Hash what is read, in the one pass that reads it, then compare with the pins.
func ExampleHasher_Check() {
	h := digest.NewHasher(digest.SHA256, digest.SHA512)
	if _, err := io.Copy(h, strings.NewReader("hello\n")); err != nil {
		panic(err)
	}
	fmt.Println(h.Size(), h.Sum()[digest.SHA256])

	pinned := digest.Set{digest.SHA256: "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"}
	fmt.Println(h.Check("hello.txt", pinned))

	err := h.Check("hello.txt", digest.Set{digest.SHA256: strings.Repeat("0", 64)})
	var m *digest.MismatchError
	fmt.Println(errors.As(err, &m), m.Algorithm)

	fmt.Println(errors.Is(h.Check("hello.txt", digest.Set{}), digest.ErrNoPin))
	// Output:
	// 6 5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03
	// <nil>
	// true sha256
	// true
}

// Digests are written "algorithm:hex"; hex is lower-cased and its length checked.
func ExampleParse() {
	d, err := digest.Parse("sha256:5891B5B522D5DF086D0FF0B110FBD9D21BB4FC7163AF34D08286A2E846F6BE03")
	fmt.Println(d, err)
	_, err = digest.Parse("sha256:abc")
	fmt.Println(errors.Is(err, digest.ErrMalformed))
	// Output:
	// sha256:5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03 <nil>
	// true
}

// Find an artifact's digest in an upstream checksum file.
func ExampleParseChecksums() {
	sums := `# release 1.2.0
019250d9e08f5242159d5dcea64c8c7cf77924cd8c69460ae7af5d4ad51d032e  hello-v1.2.0-linux-amd64.tar.gz
7f4b9b5c6bc993bd427c4ba7fd1aea86dab4083b51cb8c84ab533926ddb71665 *dist/hello-v1.2.0-linux-arm64.tar.gz
`
	list, err := digest.ParseChecksums(strings.NewReader(sums), "SHA256SUMS")
	if err != nil {
		panic(err)
	}
	for _, name := range []string{"hello-v1.2.0-linux-amd64.tar.gz", "hello-v1.2.0-linux-arm64.tar.gz", "hello-v1.2.0-linux-riscv64.tar.gz"} {
		d, err := list.Lookup(name)
		fmt.Println(d, err)
	}
	// Output:
	// map[sha256:019250d9e08f5242159d5dcea64c8c7cf77924cd8c69460ae7af5d4ad51d032e] <nil>
	// map[sha256:7f4b9b5c6bc993bd427c4ba7fd1aea86dab4083b51cb8c84ab533926ddb71665] <nil>
	// map[] verify: bad checksum file: SHA256SUMS has no entry for "hello-v1.2.0-linux-riscv64.tar.gz" (2 entries)
}
