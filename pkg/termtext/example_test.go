package termtext_test

import (
	"fmt"

	"github.com/updeb/updeb/pkg/termtext"
)

// Print what a server or a file name says without letting it drive the
// terminal: escape sequences, line breaks and bidi overrides become escapes.
func ExampleEscape() {
	fmt.Println(termtext.Escape("not found\x1b]0;pwned\x07\nfake line \u202eevil"))
	fmt.Println(termtext.EscapeLines("line one\n\tline two\rover"))
	// Output:
	// not found\x1b]0;pwned\a\nfake line \u202eevil
	// line one
	// 	line two\rover
}
