package control

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/updeb/updeb/pkg/utf8cut"
)

// MaxStanzaSize bounds a DEBIAN/control file read by ParseStrict. apt 2.6
// refuses a whole Packages index when one stanza is larger than its parse
// buffer (measured: a stanza of 1,048,702 bytes passes `apt-get update`, one
// byte more fails with "Unable to parse package file"), and the repository
// adds its own fields (Filename, Size, digests) to each stanza. The largest
// stanza in Debian bookworm's main Packages index is 76 KB
// (librust-winapi-dev, a 75 KB Provides line), so 256 KiB leaves room for
// any real package and a margin of four to apt's limit.
const MaxStanzaSize = 256 << 10

// ParseStrict parses a binary package's control file (DEBIAN/control) as
// dpkg does (lib/dpkg/parse.c), refusing what dpkg or apt would choke on or
// what Debian policy 5.1 forbids, with a message naming the line and field:
//
//   - more than MaxStanzaSize bytes, or more or fewer than one paragraph;
//   - bytes that are not UTF-8, or control characters other than tab
//     (carriage returns included: dpkg tolerates CRLF, policy does not);
//   - a field name that is empty, shorter than two characters, starts with
//     '#' or '-', or holds anything but printable ASCII without ':'
//     (whitespace before the colon included);
//   - a line that is not "Name: value" or a continuation (starting with a
//     space or tab), a continuation line that is only whitespace (dpkg's
//     "blank line in value"), a comment line (dpkg has no comments in
//     control files), a missing final newline;
//   - the same field twice (names are case-insensitive);
//   - an empty value on the last line.
//
// Values are stored as Parse stores them, except that a continuation line
// loses exactly one leading space or tab (so that indentation, which a
// Description uses for verbatim lines, survives a round trip through
// WriteTo), and trailing whitespace is removed from every line.
func ParseStrict(data []byte, name string) (Paragraph, error) {
	errf := func(line int, format string, args ...any) error {
		return fmt.Errorf("%w: %s:%d: %s", ErrSyntax, name, line, fmt.Sprintf(format, args...))
	}
	if len(data) > MaxStanzaSize {
		return Paragraph{}, fmt.Errorf("%w: %s: %d bytes%s, more than the %d a control file may have (apt refuses a whole Packages index with a stanza near 1 MiB)",
			ErrSyntax, name, len(data), largestField(data), MaxStanzaSize)
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		return Paragraph{}, errf(bytes.Count(data, []byte("\n"))+1, "no newline at the end of the file")
	}
	var (
		p     Paragraph
		value folded
	)
	seen := map[string]bool{}
	ended := false // a blank line after the fields
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	for i, text := range lines {
		n := i + 1
		if !utf8.ValidString(text) {
			return Paragraph{}, errf(n, "not UTF-8: %q", clip(text))
		}
		field := "" // the field this line belongs to, for messages
		switch {
		case text != "" && (text[0] == ' ' || text[0] == '\t') && len(p.Fields) > 0:
			field = p.Fields[len(p.Fields)-1].Name
		case strings.Contains(text, ":"):
			field, _, _ = strings.Cut(text, ":")
		}
		if i := strings.IndexFunc(text, func(c rune) bool { return c < 0x20 && c != '\t' || c == 0x7f }); i >= 0 {
			if field != "" {
				return Paragraph{}, errf(n, "field %q: control character %q", clip(field), text[i])
			}
			return Paragraph{}, errf(n, "control character %q", text[i])
		}
		switch {
		case text == "":
			if len(p.Fields) > 0 {
				ended = true
			}
			continue
		case ended:
			return Paragraph{}, errf(n, "a second paragraph: a control file holds exactly one")
		case text[0] == ' ' || text[0] == '\t':
			if len(p.Fields) == 0 {
				return Paragraph{}, errf(n, "continuation line without a field")
			}
			if strings.TrimSpace(text) == "" {
				return Paragraph{}, errf(n, "field %s: a line of only whitespace inside the value (write \" .\" for an empty line)", field)
			}
			value.add(strings.TrimRight(text[1:], " \t"))
			continue
		case text[0] == '#':
			return Paragraph{}, errf(n, "%q: control files have no comments, and field names must not start with '#'", clip(text))
		}
		key, v, ok := strings.Cut(text, ":")
		if !ok {
			return Paragraph{}, errf(n, "expected \"Field: value\", found %q", clip(text))
		}
		if len(key) > 80 {
			return Paragraph{}, errf(n, "field name %q is longer than 80 characters", clip(key))
		}
		if err := ValidateFieldName(key); err != nil {
			return Paragraph{}, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		if len(key) < 2 {
			return Paragraph{}, errf(n, "field name %q is shorter than two characters", key)
		}
		if seen[strings.ToLower(key)] {
			return Paragraph{}, errf(n, "duplicate field %s", key)
		}
		seen[strings.ToLower(key)] = true
		// dpkg refuses an empty value on the file's last line ("end of
		// file before value of field"), though not one a line follows.
		if n == len(lines) && strings.Trim(v, " \t") == "" {
			return Paragraph{}, errf(n, "field %s: an empty value on the last line, which dpkg refuses (\"end of file before value\"): give it a value or remove it", key)
		}
		value.end()
		p.Fields = append(p.Fields, Field{Name: key, Value: strings.Trim(v, " \t")})
		value.f = &p.Fields[len(p.Fields)-1]
	}
	value.end()
	if len(p.Fields) == 0 {
		return Paragraph{}, fmt.Errorf("%w: %s: no fields", ErrSyntax, name)
	}
	return p, nil
}

// largestField names the largest field of an oversized control file, for
// the message: ` (the field "X-Big" alone has 1048576)`.
func largestField(data []byte) string {
	var best string
	bestSize, cur, curSize := 0, "", 0
	for _, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		if len(line) > 0 && line[0] != ' ' && line[0] != '\t' {
			if name, _, ok := bytes.Cut(line, []byte(":")); ok && len(name) <= 100 {
				cur, curSize = string(name), 0
			}
		}
		if curSize += len(line) + 1; cur != "" && curSize > bestSize {
			best, bestSize = cur, curSize
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (the field %q alone has %d)", best, bestSize)
}

// clip keeps a line quoted in a message short.
func clip(s string) string { return utf8cut.Shorten(s, 80, 60) }
