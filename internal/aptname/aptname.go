// Package aptname holds the rules for what names a suite of the apt
// repository updeb writes, and what its Release file says of it: suites and
// codenames, components, architectures, and the one-line fields Origin, Label
// and Description. The repository (internal/repo) checks every value it
// writes with them, and the configuration (internal/config) checks the same
// values when it is read, so a bad one is refused with the config file's line
// before anything is published.
package aptname

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/updeb/updeb/pkg/deb"
)

var (
	suitePattern     = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9.+_-]*$`)
	componentPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9.+_-]*(/[A-Za-z0-9][A-Za-z0-9.+_-]*)*$`)
)

// MaxName is the longest suite, codename, component or architecture name, and
// MaxField the longest Origin, Label or Description: far above any real one,
// far below what would strain a client's Release parser.
const (
	MaxName  = 100
	MaxField = 1000
)

// Suite checks a suite name, which is a folder under dists/ and apt's
// "a=" pin.
func Suite(s string) error { return suiteLike("suite", s) }

// Codename checks a codename: the rule of a suite name, as apt uses it in
// the same places (dists/CODENAME, the "n=" pin).
func Codename(s string) error { return suiteLike("codename", s) }

func suiteLike(what, s string) error {
	if len(s) > MaxName || !suitePattern.MatchString(s) {
		return fmt.Errorf("%s %q: want up to %d letters, digits and . + _ -, starting with a letter or digit", what, s, MaxName)
	}
	return nil
}

// SuiteFiles are the files the repository writes in a suite's folder
// (dists/SUITE) beside its components' folders: a component cannot take one
// of their names.
var SuiteFiles = []string{"Release", "InRelease", "Release.gpg", "updeb-suite.json", "updeb-keys.gpg", "updeb-by-hash-kept"}

// Component checks a component name (main, contrib, updates/main). Its folder
// is dists/SUITE/COMPONENT, so it cannot be a file of the suite's folder
// (SuiteFiles), and a part after the first cannot be a name the repository
// writes in a component's folder (binary-ARCH, Contents-ARCH, by-hash): with
// both main and main/binary-amd64 in a suite, one's index would be written
// where the other's is.
func Component(s string) error {
	if err := ListedComponent(s); err != nil {
		return err
	}
	parts := strings.Split(s, "/")
	if slices.Contains(SuiteFiles, parts[0]) {
		return fmt.Errorf("component %q: %s is a file of the suite's folder (dists/SUITE/%s); name the component otherwise", s, parts[0], parts[0])
	}
	for _, p := range parts[1:] {
		if p == "by-hash" || strings.HasPrefix(p, "binary-") || strings.HasPrefix(p, "Contents-") {
			return fmt.Errorf("component %q: a part after the first cannot be by-hash, binary-* or Contents-*, the names of a component's own index folders and files", s)
		}
	}
	return nil
}

// ListedComponent checks only the characters and length of a component name:
// the check of a component a suite already lists, which may have been
// published before Component refused some names (main/binary-amd64), so that
// the suite still reads and its other components take writes.
func ListedComponent(s string) error {
	if len(s) > MaxName || !componentPattern.MatchString(s) {
		return fmt.Errorf("component %q: want up to %d letters, digits, . + _ - and / between parts", s, MaxName)
	}
	return nil
}

// Architecture checks a Debian architecture name as a package states it
// (amd64, arm64, all).
func Architecture(s string) error {
	if len(s) > MaxName || !deb.ValidArchitecture(s) {
		return fmt.Errorf("architecture %q: want a Debian architecture such as amd64 (lower-case letters, digits and -)", s)
	}
	return nil
}

// IndexArchitecture checks an architecture a suite indexes: any but "all",
// whose packages go into every architecture's index.
func IndexArchitecture(s string) error {
	if s == "all" {
		return fmt.Errorf(`architecture "all": "all" packages go to every architecture's index; name real architectures such as amd64`)
	}
	return Architecture(s)
}

// MinValidFor is the shortest valid-for a suite may have (0, none, aside).
const MinValidFor = time.Minute

// ValidFor checks a suite's valid-for, the time from its Release's Date to
// its Valid-Until (0: no Valid-Until).
func ValidFor(v time.Duration) error {
	switch {
	case v < 0:
		return fmt.Errorf("valid-for %v is negative", v)
	case v > 0 && v < MinValidFor:
		return fmt.Errorf("valid-for %v is under %v: Valid-Until is written to the second, so apt finds the suite expired (or about to be) at its first update; "+
			"give hours or days (Debian's suites use 7 days, 168h), or 0 for none", v, MinValidFor)
	}
	return nil
}

// Field checks the value of the one-line Release field name (Origin, Label,
// Description): printable UTF-8 on one line, no leading or trailing space
// (clients compare Origin and Label to the letter, and a parser trims them),
// at most MaxField bytes. The empty value is allowed: the field is left out.
func Field(name, v string) error {
	switch {
	case len(v) > MaxField:
		return fmt.Errorf("%s: %d bytes, want at most %d", name, len(v), MaxField)
	case !utf8.ValidString(v):
		return fmt.Errorf("%s %q: not valid UTF-8", name, v)
	case strings.TrimSpace(v) != v:
		return fmt.Errorf("%s %q: leading or trailing white space (clients compare it to the letter)", name, v)
	}
	for _, r := range v {
		if !unicode.IsPrint(r) && r != ' ' {
			return fmt.Errorf("%s %q: a control or non-printing character (U+%04X): it must be one printable line", name, v, r)
		}
	}
	return nil
}
