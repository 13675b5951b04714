package utf8cut

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPrefix(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"hello", 10, "hello"},
		{"hello", 5, "hello"},
		{"hello", 3, "hel"},
		{"hello", 0, ""},
		{"hello", -1, ""},
		{"abé", 3, "ab"},  // é is 2 bytes: not split
		{"abé", 4, "abé"}, // whole
		{"a€b", 2, "a"},   // € is 3 bytes
		{"a€b", 3, "a"},   // inside €
		{"a€b", 4, "a€"},  // after €
		{"😀😀", 5, "😀"},    // 4-byte characters
		{"😀😀", 7, "😀"},    // 3 bytes into the second
		{strings.Repeat("\x80", 10), 4, "\x80\x80\x80\x80"}, // not UTF-8: cut at n
		{"ab\xff\xfe", 3, "ab\xff"},                         // an invalid byte is a start
	} {
		if got := Prefix(tc.s, tc.n); got != tc.want {
			t.Errorf("Prefix(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
	// Every cut of valid text is valid text, at most n bytes, and no more
	// than a character short of n.
	s := strings.Repeat("aé€😀", 10)
	for n := 0; n <= len(s); n++ {
		p := Prefix(s, n)
		if !utf8.ValidString(p) || len(p) > n || len(p) <= n-utf8.UTFMax || !strings.HasPrefix(s, p) {
			t.Fatalf("Prefix(s, %d) = %q", n, p)
		}
	}
}

func TestShorten(t *testing.T) {
	for _, tc := range []struct {
		s         string
		max, keep int
		want      string
	}{
		{"short", 80, 60, "short"},
		{strings.Repeat("a", 80), 80, 60, strings.Repeat("a", 80)},
		{strings.Repeat("a", 81), 80, 60, strings.Repeat("a", 60) + "...(81 bytes)"},
		{strings.Repeat("a", 59) + "é" + strings.Repeat("b", 30), 80, 60, strings.Repeat("a", 59) + "...(91 bytes)"},
	} {
		if got := Shorten(tc.s, tc.max, tc.keep); got != tc.want {
			t.Errorf("Shorten(%q, %d, %d) = %q, want %q", tc.s, tc.max, tc.keep, got, tc.want)
		}
	}
}
