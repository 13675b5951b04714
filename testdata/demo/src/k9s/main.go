// Command k9s is a stand-in for the real k9s (github.com/derailed/k9s) in the
// README's "new recipe in five minutes" walk-through: a small static Go binary
// released, like k9s, as k9s_Linux_ARCH.tar.gz with a goreleaser
// checksums.sha256 and no OpenPGP signature. It is not k9s.
package main

import (
	"fmt"
	"os"
)

var version = "dev"

func main() {
	if len(os.Args) > 1 && os.Args[1] == "version" {
		fmt.Println("k9s stand-in", version, "(updeb walk-through fixture)")
		return
	}
	fmt.Println("k9s stand-in: the real k9s is a terminal UI for Kubernetes clusters.")
}
