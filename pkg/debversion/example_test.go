package debversion_test

import (
	"fmt"

	"github.com/updeb/updeb/pkg/debversion"
)

// Versions order as dpkg orders them: numerically, "~" before anything
// (a release candidate before its release), the epoch first.
func ExampleCompareStrings() {
	for _, p := range [][2]string{
		{"1.10.0-1", "1.9.0-1"},
		{"1.31.0~rc.1-1", "1.31.0-1"},
		{"1:1.0-1", "2.0-1"},
		{"1.2.0-1~wmf1", "1.2.0-1"},
		{"1.0-1", "1.0-01"},
	} {
		c, err := debversion.CompareStrings(p[0], p[1])
		if err != nil {
			panic(err)
		}
		fmt.Println(p[0], map[int]string{-1: "<", 0: "=", 1: ">"}[c], p[1])
	}
	// Output:
	// 1.10.0-1 > 1.9.0-1
	// 1.31.0~rc.1-1 < 1.31.0-1
	// 1:1.0-1 > 2.0-1
	// 1.2.0-1~wmf1 < 1.2.0-1
	// 1.0-1 = 1.0-01
}

// Upstream tags become Debian upstream versions that sort the same way.
func ExampleFromUpstream() {
	for _, tag := range []string{"v1.30.0", "v1.30.0-rc.1", "3.15.4", "v2.0.0-beta.2+build.5"} {
		v, err := debversion.FromUpstream(tag)
		fmt.Println(tag, "->", v, err)
	}
	// Output:
	// v1.30.0 -> 1.30.0 <nil>
	// v1.30.0-rc.1 -> 1.30.0~rc.1 <nil>
	// 3.15.4 -> 3.15.4 <nil>
	// v2.0.0-beta.2+build.5 -> 2.0.0~beta.2+build.5 <nil>
}

func ExampleParse() {
	v, err := debversion.Parse("2:1.31.4-1~wmf1")
	fmt.Println(v.Epoch, v.Upstream, v.Revision, err)
	_, err = debversion.Parse("v1.0")
	fmt.Println(err)
	// Output:
	// 2 1.31.4 1~wmf1 <nil>
	// invalid Debian version "v1.0": version number does not start with digit
}
