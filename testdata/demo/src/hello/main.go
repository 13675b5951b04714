// Command hello is the demo's stand-in for an upstream CLI (like helm): a small
// static Go binary released as a tarball with a detached OpenPGP signature.
package main

import (
	"fmt"
	"os"
)

var version = "dev"

func main() {
	if len(os.Args) > 1 && os.Args[1] == "--version" {
		fmt.Println("hello", version)
		return
	}
	fmt.Println("Hello from a package built by updeb.")
}
