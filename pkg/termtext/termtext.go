// Package termtext makes text from outside (an upstream server's error
// message, a file's name, a recipe's value) safe to print on a terminal or
// in a CI log: control characters, escape sequences, bidi overrides and
// invalid UTF-8 become Go escapes, so that what a hostile server or file
// says cannot move the cursor, retitle the window, write the clipboard
// (OSC 52) or make a line read otherwise than its bytes.
package termtext

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Escape makes s safe to print on one line of a terminal: control characters
// (line breaks, tabs, escape sequences), Unicode format characters (bidi
// overrides, zero-width characters), line and paragraph separators and invalid
// UTF-8 become Go escapes (\n, \x1b, \u202e, \xff). Everything else is kept.
func Escape(s string) string { return escape(s, false) }

// EscapeLines is Escape for text of several lines: line feeds and tabs are
// kept (a carriage return is not: it would let a line overwrite itself).
func EscapeLines(s string) string { return escape(s, true) }

// EscapeName is Escape for a name that must read back as one name (a
// package's file names, link targets and owners in updeb inspect): a
// backslash becomes \\ too, as dpkg-deb -c writes it, so that a name
// holding the text \x1b never prints as one holding the escape character.
func EscapeName(s string) string {
	return escapeIf(s, func(r rune) bool { return r == '\\' || unsafeRune(r, false) })
}

func escape(s string, lines bool) string {
	return escapeIf(s, func(r rune) bool { return unsafeRune(r, lines) })
}

// unsafeRune reports a rune Escape (EscapeLines where lines is true)
// writes as a Go escape.
func unsafeRune(r rune, lines bool) bool {
	if lines && (r == '\n' || r == '\t') {
		return false
	}
	return r == utf8.RuneError || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029'
}

// EscapeFormat writes each Unicode format character of s (bidi overrides
// and isolates, zero-width characters) as a Go escape (\u202e), and each
// invalid byte as U+FFFD, and keeps everything else: text for a web page
// (which says it is UTF-8), whose markup and line breaks must stay, and
// where a bidi override would make a line read otherwise than its bytes
// as on a terminal.
func EscapeFormat(s string) string {
	return escapeIf(strings.ToValidUTF8(s, "\uFFFD"), func(r rune) bool { return unicode.Is(unicode.Cf, r) })
}

// EscapeInvalid writes each byte of s that is not UTF-8 as Escape does
// (\xff) and keeps everything else: text for JSON, whose strings hold only
// Unicode (encoding/json would make every such byte U+FFFD, so that two
// names differing in one came out equal).
func EscapeInvalid(s string) string { return escapeIf(s, func(rune) bool { return false }) }

// EscapeJSON rewrites JSON text so that it is safe on a terminal and holds
// the same values: each rune Escape would escape that encoding/json writes
// as it is (DEL, C1 controls such as U+009B, which some terminals take for
// CSI, and format characters such as bidi overrides) becomes a \u escape
// (a UTF-16 pair above U+FFFF). Such a rune can only be inside a string,
// where the escape is the same character; encoding/json escapes the C0
// controls itself.
func EscapeJSON(b []byte) []byte {
	unsafe := func(r rune) bool { return r >= 0x7f && r != utf8.RuneError && unsafeRune(r, false) }
	if !bytes.ContainsFunc(b, unsafe) {
		return b
	}
	out := make([]byte, 0, len(b)+64)
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		switch {
		case !unsafe(r):
			out = append(out, b[i:i+size]...)
		case r > 0xffff:
			hi, lo := utf16.EncodeRune(r)
			out = fmt.Appendf(out, `\u%04x\u%04x`, hi, lo)
		default:
			out = fmt.Appendf(out, `\u%04x`, r)
		}
		i += size
	}
	return out
}

// escapeIf writes the invalid bytes of s as \xff, and each rune for which
// unsafe is true as a Go escape.
func escapeIf(s string, unsafe func(rune) bool) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, unsafe) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unsafe(r):
			q := strconv.QuoteRune(r) // '\n', '\x1b', '\u202e'
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
