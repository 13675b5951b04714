package control_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/updeb/updeb/pkg/control"
)

// Read a DEBIAN/control paragraph, change it, and write it back: fields keep
// their order, multi-line values are folded with a leading space and an
// empty line is " .".
func ExampleParseOne() {
	in := `Package: hello
Version: 1.2.0-1
Architecture: amd64
Description: friendly greeting
 hello says hello.
 .
 It is small.
`
	p, err := control.ParseOne(strings.NewReader(in), "DEBIAN/control")
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s %s: %q\n", p.Value("package"), p.Value("Version"), p.Value("Description"))
	p.Set("Version", "1.2.0-2")
	p.Set("Section", "utils")
	p.Delete("Architecture")
	if _, err := p.WriteTo(os.Stdout); err != nil {
		panic(err)
	}
	// Output:
	// hello 1.2.0-1: "friendly greeting\nhello says hello.\n.\nIt is small."
	// Package: hello
	// Version: 1.2.0-2
	// Description: friendly greeting
	//  hello says hello.
	//  .
	//  It is small.
	// Section: utils
}

// Parse errors name the input and the line.
func ExampleParse() {
	_, err := control.Parse(strings.NewReader("Package: a\n\nPackage: b\n continued\nbroken line\n"), "Packages")
	fmt.Println(err)
	// Output:
	// control: syntax error: Packages:5: expected "Field: value", found "broken line"
}
