// Package utf8cut shortens text for messages without splitting a character:
// a hostile name, a server's message or a line of a file is quoted in an
// error only up to a bound, and a cut inside a multi-byte UTF-8 sequence
// would leave a broken character at the end (shown as \xc3 or U+FFFD).
package utf8cut

import (
	"fmt"
	"unicode/utf8"
)

// Prefix returns the first n bytes of s (all of s when it is no longer),
// cut back to where a character starts. Text that is not UTF-8 there (no
// character starts in the last utf8.UTFMax bytes before n) is cut at n, so
// that its first bytes are still shown.
func Prefix(s string, n int) string {
	if n < 0 {
		n = 0
	}
	if len(s) <= n {
		return s
	}
	for cut := n; cut > 0 && cut > n-utf8.UTFMax; cut-- {
		if utf8.RuneStart(s[cut]) {
			return s[:cut]
		}
	}
	return s[:n]
}

// Shorten returns s when it is at most max bytes, else its first keep bytes
// (Prefix) and its length, "...(N bytes)": a huge value quoted in a message.
func Shorten(s string, max, keep int) string {
	if len(s) <= max {
		return s
	}
	return Prefix(s, keep) + fmt.Sprintf("...(%d bytes)", len(s))
}
