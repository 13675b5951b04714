package utf8cut_test

import (
	"fmt"
	"strings"

	"github.com/updeb/updeb/pkg/utf8cut"
)

// Quote a hostile value in a message only up to a bound, never cutting a
// character in two.
func ExampleShorten() {
	fmt.Println(utf8cut.Prefix("héllo", 2))
	fmt.Println(utf8cut.Shorten("short", 10, 4))
	fmt.Println(utf8cut.Shorten(strings.Repeat("é", 1000), 100, 5))
	// Output:
	// h
	// short
	// éé...(2000 bytes)
}
