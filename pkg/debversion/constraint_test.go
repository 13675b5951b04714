package debversion

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestConstraintAllows(t *testing.T) {
	for _, tc := range []struct {
		constraint string
		yes, no    []string
	}{
		{">=1.29 <1.33", []string{"1.29.0", "1.29", "1.30.4", "1.32.99", "v1.32.1"}, []string{"1.28.15", "1.33.0", "1.33", "1.33.0-rc.1", "2.0"}},
		{">=1.29, <1.33", []string{"1.29.0", "1.32.9"}, []string{"1.33.0", "1.28.0"}},
		{">= 1.29 , < 1.33", []string{"1.30.0"}, []string{"1.33.1"}},
		{"<=1.32", []string{"1.32.9", "1.0"}, []string{"1.33.0"}},
		{">1.31", []string{"1.32.0"}, []string{"1.31.9", "1.31"}},
		{"=1.31.4", []string{"1.31.4", "v1.31.4"}, []string{"1.31.5", "1.31.4-rc.1", "1.31.40"}},
		{"==1.31.4", []string{"1.31.4"}, []string{"1.31.3"}},
		{"1.31.4", []string{"1.31.4"}, []string{"1.31.5"}},
		{"1.31", []string{"1.31.0", "1.31.14"}, []string{"1.3.1", "1.32.0"}},
		{"1.31.x", []string{"1.31.0", "1.31.14", "1.31.2-rc.0"}, []string{"1.30.9", "1.32.0"}},
		{"3.*", []string{"3.0.1", "3.21.4"}, []string{"4.0.0", "2.9"}},
		{"~1.31", []string{"1.31.0", "1.31.9"}, []string{"1.30.0", "1.32.0"}},
		{"~1.31.4", []string{"1.31.4", "1.31.9"}, []string{"1.31.3", "1.32.0"}},
		{"~3", []string{"3.0", "3.99.1"}, []string{"2.9", "4.0"}},
		{"!=1.31.2 1.31.x", []string{"1.31.1", "1.31.3"}, []string{"1.31.2", "1.30.0"}},
		{">=1.30.0-rc.1", []string{"1.30.0-rc.1", "1.30.0-rc.2", "1.30.0"}, []string{"1.30.0-beta.0", "1.29.9"}},
		{"<1.30.0", []string{"1.30.0-rc.1", "1.29.9"}, []string{"1.30.0"}},
		// Debian's strict operators mean what > and < mean.
		{">>1.30", []string{"1.31.0", "2.0"}, []string{"1.30.0", "1.30.99", "1.29"}},
		{"<<1.33", []string{"1.32.99", "1.0"}, []string{"1.33.0", "1.33.0-rc.1", "1.34"}},
		{">>1.29 <<1.33", []string{"1.30.0", "1.32.1"}, []string{"1.29.9", "1.33.0"}},
		{"<< 1.33, >= 1.30", []string{"1.30.0"}, []string{"1.33.0", "1.29.0"}},
		{"v1.31.x", []string{"1.31.3"}, []string{"1.32.0"}},
		// Numbers beyond int64 are numbers like any other: "~" bumps the minor
		// (not the major, nor an int that wraps round), and a patch-agnostic
		// bound cuts a version whatever the size of its parts.
		{"~1.9223372036854775807", []string{"1.9223372036854775807", "1.9223372036854775807.5"}, []string{"1.9223372036854775808", "1.9223372036854775806", "2.0"}},
		{"~1.99999999999999999999", []string{"1.99999999999999999999", "1.99999999999999999999.1"}, []string{"1.100000000000000000000", "1.5", "2"}},
		{"~099", []string{"99.1", "099.5"}, []string{"100.0", "98"}},
		{"<=1.2", []string{"1.2.99999999999999999999", "1.2.0"}, []string{"1.3"}},
		{"=1.2", []string{"1.2.184467440737095516160"}, []string{"1.20"}},
	} {
		c, err := ParseConstraint(tc.constraint)
		if err != nil {
			t.Errorf("ParseConstraint(%q): %v", tc.constraint, err)
			continue
		}
		if c.String() != tc.constraint {
			t.Errorf("String() = %q, want %q", c.String(), tc.constraint)
		}
		for _, v := range tc.yes {
			if ok, err := c.Allows(v); !ok || err != nil {
				t.Errorf("%q should allow %q (got %v, %v)", tc.constraint, v, ok, err)
			}
		}
		for _, v := range tc.no {
			if ok, err := c.Allows(v); ok || err != nil {
				t.Errorf("%q should refuse %q (got %v, %v)", tc.constraint, v, ok, err)
			}
		}
	}
}

func TestConstraintErrors(t *testing.T) {
	for in, want := range map[string]string{
		"":            `invalid constraint "": no version in constraint`,
		" , ":         `invalid constraint " , ": no version in constraint`,
		">=":          `invalid constraint ">=": operator ">=" has no version after it`,
		">=1.29 <":    `invalid constraint ">=1.29 <": operator "<" has no version after it`,
		">=<1.2":      `invalid constraint ">=<1.2": unexpected operator inside ">=<1.2"`,
		">=1.31.x":    `invalid constraint ">=1.31.x": wildcard "1.31.x" cannot follow an operator`,
		"x":           `invalid constraint "x": version "x": invalid Debian version: upstream version "x" must start with a digit (after an optional v)`,
		"1.2|1.3":     `invalid constraint "1.2|1.3": version "1.2|1.3": upstream version "1.2|1.3": invalid Debian version "1.2|1.3-1": invalid character '|' in version number`,
		">=1.29 || 2": `invalid constraint ">=1.29 || 2": version "||": invalid Debian version: upstream version "||" must start with a digit (after an optional v)`,
		">=1:1.2":     `invalid constraint ">=1:1.2": version "1:1.2": invalid Debian version: upstream version "1:1.2" contains ':'`,
		">>>1.2":      `invalid constraint ">>>1.2": unexpected operator inside ">>>1.2"`,
		"~1.x":        `invalid constraint "~1.x": wildcard "1.x" cannot follow an operator`,
		"~>1.2":       `invalid constraint "~>1.2": unexpected operator inside "~>1.2"`,
		"^1.2":        `invalid constraint "^1.2": version "^1.2": invalid Debian version: upstream version "^1.2" must start with a digit (after an optional v)`,
	} {
		_, err := ParseConstraint(in)
		if err == nil || err.Error() != want || !errors.Is(err, ErrConstraint) {
			t.Errorf("ParseConstraint(%q):\n got %v\nwant %s", in, err, want)
		}
	}
	c, _ := ParseConstraint(">=1.0")
	if _, err := c.Allows("latest"); err == nil {
		t.Error(`Allows("latest") should fail`)
	}
}

func FuzzParseConstraint(f *testing.F) {
	for _, s := range []string{">=1.29 <1.33", ">=1.29, <1.33", "=1.31.4", "1.31.x", "~1.31", "~1.31.4", "!=1.0 3.*", ">= 1.30.0-rc.1"} {
		f.Add(s, "1.31.4")
	}
	f.Fuzz(func(t *testing.T, s, v string) {
		c, err := ParseConstraint(s)
		if err != nil {
			if !errors.Is(err, ErrConstraint) {
				t.Fatalf("error does not wrap ErrConstraint: %v", err)
			}
			return
		}
		if len(c.clauses) == 0 {
			t.Fatalf("%q parsed to no clause", s)
		}
		// Re-parsing the text gives the same clauses.
		again, err := ParseConstraint(c.String())
		if err != nil || !reflect.DeepEqual(again.clauses, c.clauses) {
			t.Fatalf("re-parse of %q: %v", s, err)
		}
		// Debian's ">>" and "<<" are the same clauses as ">" and "<".
		if debian, err := ParseConstraint(strings.NewReplacer(">>", ">", "<<", "<").Replace(s)); err == nil && !reflect.DeepEqual(debian.clauses, c.clauses) {
			t.Fatalf("%q: >> and << differ from > and <", s)
		}
		ok, err := c.Allows(v)
		if err != nil {
			return
		}
		// A constraint and its negation clause by clause cannot both hold for
		// a single-clause constraint.
		if len(c.clauses) == 1 && c.clauses[0].op == "=" {
			neg, err := ParseConstraint("!=" + strings.TrimPrefix(c.clauses[0].bound, "="))
			if err == nil {
				if nok, _ := neg.Allows(v); nok == ok {
					t.Fatalf("%q and its negation agree on %q (%v)", s, v, ok)
				}
			}
		}
	})
}

func ExampleParseConstraint() {
	c, err := ParseConstraint(">=1.30, <<1.33")
	if err != nil {
		panic(err)
	}
	for _, v := range []string{"1.29.9", "v1.30.0", "1.32.14", "1.33.0-rc.1"} {
		ok, _ := c.Allows(v)
		fmt.Println(v, ok)
	}
	// Output:
	// 1.29.9 false
	// v1.30.0 true
	// 1.32.14 true
	// 1.33.0-rc.1 false
}
