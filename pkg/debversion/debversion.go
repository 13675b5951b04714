// Package debversion parses and compares Debian package versions
// ([epoch:]upstream[-revision]) exactly as dpkg does (lib/dpkg/parsehelp.c and
// version.c), and maps upstream release tags to Debian versions.
//
// Parsing is strict where dpkg only warns: an upstream version that does not
// start with a digit, or a character outside dpkg's allowed set, is an error,
// because apt and dpkg print warnings for such versions on every run. White
// space anywhere (which dpkg trims at the ends) is refused too.
package debversion

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// ErrInvalid is wrapped by every parse error.
var ErrInvalid = errors.New("invalid Debian version")

// Version is a parsed Debian version.
type Version struct {
	Epoch    int
	Upstream string
	Revision string // "" when the version has no revision
}

// String returns the canonical form; the epoch is shown only when non-zero.
func (v Version) String() string {
	var b strings.Builder
	if v.Epoch != 0 {
		b.WriteString(strconv.Itoa(v.Epoch))
		b.WriteByte(':')
	}
	b.WriteString(v.Upstream)
	if v.Revision != "" {
		b.WriteByte('-')
		b.WriteString(v.Revision)
	}
	return b.String()
}

// WithoutEpoch returns the version as it appears in .deb file names.
func (v Version) WithoutEpoch() string {
	v.Epoch = 0
	return v.String()
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isAlpha(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

// SyntaxError is a version string Parse refuses and why: Reason in dpkg's
// words (Error's), Detail naming the part and the value (pkg/deb's). It
// wraps ErrInvalid.
type SyntaxError struct {
	Version, Reason, Detail string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%v %q: %s", ErrInvalid, e.Version, e.Reason)
}

func (e *SyntaxError) Unwrap() error { return ErrInvalid }

func errorf(s, detail, format string, args ...any) error {
	return &SyntaxError{Version: s, Reason: fmt.Sprintf(format, args...), Detail: detail}
}

// Parse parses s following dpkg's parseversion, treating its warnings as errors.
func Parse(s string) (Version, error) {
	str := s
	if str == "" {
		return Version{}, errorf(s, "empty", "version string is empty")
	}
	if i := strings.IndexAny(str, " \t\n\r\f\v"); i >= 0 {
		return Version{}, errorf(s, fmt.Sprintf("contains %q", str[i]), "version string has embedded spaces")
	}
	var v Version
	rest := str
	if i := strings.IndexByte(str, ':'); i >= 0 {
		ep := str[:i]
		if ep == "" {
			return Version{}, errorf(s, `epoch "" is not a number`, "epoch in version is empty")
		}
		for j := 0; j < len(ep); j++ {
			if !isDigit(ep[j]) {
				return Version{}, errorf(s, fmt.Sprintf("epoch %q is not a number", ep), "epoch in version is not number")
			}
		}
		n, err := strconv.ParseInt(ep, 10, 32)
		if err != nil {
			return Version{}, errorf(s, fmt.Sprintf("epoch %q is too big (dpkg's limit is 2147483647)", ep), "epoch in version is too big")
		}
		v.Epoch = int(n)
		rest = str[i+1:]
		if rest == "" {
			return Version{}, errorf(s, "nothing after the epoch's ':'", "nothing after colon in version number")
		}
	}
	if i := strings.LastIndexByte(rest, '-'); i >= 0 {
		v.Revision = rest[i+1:]
		rest = rest[:i]
		if v.Revision == "" {
			return Version{}, errorf(s, "empty revision after '-'", "revision number is empty")
		}
	}
	if rest == "" {
		return Version{}, errorf(s, `upstream version "" must start with a digit`, "upstream version is empty")
	}
	v.Upstream = rest
	if !isDigit(rest[0]) {
		return Version{}, errorf(s, fmt.Sprintf("upstream version %q must start with a digit", rest), "version number does not start with digit")
	}
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if !isDigit(c) && !isAlpha(c) && !strings.ContainsRune(".-+~:", rune(c)) {
			return Version{}, errorf(s, fmt.Sprintf("upstream version %q contains %q", rest, c), "invalid character %q in version number", c)
		}
	}
	for i := 0; i < len(v.Revision); i++ {
		c := v.Revision[i]
		if !isDigit(c) && !isAlpha(c) && !strings.ContainsRune(".+~", rune(c)) {
			return Version{}, errorf(s, fmt.Sprintf("revision %q contains %q", v.Revision, c), "invalid character %q in revision number", c)
		}
	}
	return v, nil
}

// MustParse is Parse for constants in tests and tables; it panics on error.
func MustParse(s string) Version {
	v, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return v
}

// order is dpkg's character weight: digits 0, letters themselves, '~' below
// everything (even the end of the string), other characters after letters.
func order(c int) int {
	switch {
	case c >= '0' && c <= '9':
		return 0
	case (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
		return c
	case c == '~':
		return -1
	case c != 0:
		return c + 256
	}
	return 0
}

// at returns s[i], or 0 past the end, like a C string.
func at(s string, i int) int {
	if i < len(s) {
		return int(s[i])
	}
	return 0
}

func isDigitAt(s string, i int) bool { return i < len(s) && isDigit(s[i]) }

// verrevcmp is dpkg's comparison of an upstream version or revision.
func verrevcmp(a, b string) int {
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		firstDiff := 0
		for (i < len(a) && !isDigit(a[i])) || (j < len(b) && !isDigit(b[j])) {
			ac, bc := order(at(a, i)), order(at(b, j))
			if ac != bc {
				return ac - bc
			}
			i++
			j++
		}
		for i < len(a) && a[i] == '0' {
			i++
		}
		for j < len(b) && b[j] == '0' {
			j++
		}
		for isDigitAt(a, i) && isDigitAt(b, j) {
			if firstDiff == 0 {
				firstDiff = int(a[i]) - int(b[j])
			}
			i++
			j++
		}
		if isDigitAt(a, i) {
			return 1
		}
		if isDigitAt(b, j) {
			return -1
		}
		if firstDiff != 0 {
			return firstDiff
		}
	}
	return 0
}

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}

// Compare returns -1, 0 or 1 as a sorts before, equal to, or after b.
func Compare(a, b Version) int {
	if a.Epoch != b.Epoch {
		return sign(a.Epoch - b.Epoch)
	}
	if c := verrevcmp(a.Upstream, b.Upstream); c != 0 {
		return sign(c)
	}
	return sign(verrevcmp(a.Revision, b.Revision))
}

// CompareStrings parses and compares two version strings.
func CompareStrings(a, b string) (int, error) {
	va, err := Parse(a)
	if err != nil {
		return 0, err
	}
	vb, err := Parse(b)
	if err != nil {
		return 0, err
	}
	return Compare(va, vb), nil
}

// glued finds a pre-release written without "-" at the end of a version: its
// separator (group 1, "" or ".") and the pre-release (group 2).
var glued = regexp.MustCompile(`[0-9](\.?)((?i:alpha|beta|rc|pre|dev)\.?[0-9]*)$`)

// FromUpstream maps an upstream release tag or version to a Debian upstream
// version: a leading "v" (or "V") before a digit is dropped and a semver
// pre-release ("-rc.1", "-beta.2", "-alpha") is introduced by "~" so that it
// sorts before the release ("1.30.0-rc.1" -> "1.30.0~rc.1"). So is a
// pre-release written without the "-" at the end of a version without one
// (uscan's uversionmangle): alpha, beta, rc, pre or dev, in any case, after a
// digit or a "." that follows one, with only a number after it ("1.37.0rc1"
// -> "1.37.0~rc1", "3.0.0.RC2" -> "3.0.0~RC2"); left as it is, it would sort
// after the release. Build metadata ("+build.5") is kept. Characters dpkg
// does not allow are refused, never silently replaced, and so is white space
// around the version: the caller keeps using the text it gave (in URLs, file
// names, comparisons), so a version that is valid only once trimmed is not
// valid.
func FromUpstream(tag string) (string, error) {
	s := tag
	if strings.TrimSpace(s) != s {
		return "", fmt.Errorf("%w: upstream version %q has white space around it", ErrInvalid, tag)
	}
	if len(s) > 1 && (s[0] == 'v' || s[0] == 'V') && isDigit(s[1]) {
		s = s[1:]
	}
	if s == "" || !isDigit(s[0]) {
		return "", fmt.Errorf("%w: upstream version %q must start with a digit (after an optional v)", ErrInvalid, tag)
	}
	// A "-", "+" or "." with nothing after it (semver's empty pre-release,
	// build or identifier) numbers no release: "1.0.0+" became 1.0.0, the
	// Debian version of another upstream version, and "1.0.0-" 1.0.0~.
	if strings.HasSuffix(s, "-") || strings.HasSuffix(s, "+") || strings.HasSuffix(s, ".") ||
		strings.Contains(s, "..") || strings.Contains(s, "-+") || strings.Contains(s, ".+") || strings.Contains(s, "-.") {
		return "", fmt.Errorf("%w: upstream version %q has an empty part (a \"-\", \"+\" or \".\" with nothing after it): no release is numbered so", ErrInvalid, tag)
	}
	core, build, _ := strings.Cut(s, "+")
	if i := strings.IndexByte(core, '-'); i >= 0 {
		core = core[:i] + "~" + strings.ReplaceAll(core[i+1:], "-", ".")
	} else if m := glued.FindStringSubmatchIndex(core); m != nil {
		core = core[:m[2]] + "~" + core[m[4]:]
	}
	out := core
	if build != "" {
		out += "+" + build
	}
	if strings.ContainsAny(out, ":") {
		return "", fmt.Errorf("%w: upstream version %q contains ':'", ErrInvalid, tag)
	}
	// The mapped version becomes the upstream part of a version with a revision,
	// so it may contain any of dpkg's upstream characters except ':'.
	if _, err := Parse(out + "-1"); err != nil {
		return "", fmt.Errorf("upstream version %q: %w", tag, err)
	}
	return out, nil
}
