package termtext

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"plain text: ok (1.2.3) ä ✓": "plain text: ok (1.2.3) ä ✓",
		"two\nlines\r\n":             `two\nlines\r\n`,
		"tab\there":                  `tab\there`,
		"esc \x1b[31mred":            `esc \x1b[31mred`,
		"bidi \u202eevil":            `bidi \u202eevil`,
		"nul \x00 del \x7f":          `nul \x00 del \x7f`,
		"bad \xff utf8":              `bad \xff utf8`,
		"sep \u2028 \u0085":          `sep \u2028 \u0085`,
		"a real \ufffd is kept":      "a real \ufffd is kept",
	} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEscapeLines(t *testing.T) {
	for in, want := range map[string]string{
		"two\nlines\n\tindented": "two\nlines\n\tindented",
		"over\rwrite":            `over\rwrite`,
		"title \x1b]0;owned\x07": `title \x1b]0;owned\a`,
		"clipboard \x1b]52;c;ZXZpbA==\x1b\\ and \u009b2J": `clipboard \x1b]52;c;ZXZpbA==\x1b\ and \u009b2J`,
		"bidi \u2066x\u2069":                              `bidi \u2066x\u2069`,
	} {
		if got := EscapeLines(in); got != want {
			t.Errorf("EscapeLines(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestEscapeName: a name prints as one name: the text \x1b and the escape
// character, or the text \xff and the byte, differ in what is printed.
func TestEscapeName(t *testing.T) {
	for in, want := range map[string]string{
		"plain ä ✓":                    "plain ä ✓",
		"system-systemd\\x2dfoo.slice": `system-systemd\\x2dfoo.slice`,
		"a\\x1bb":                      `a\\x1bb`,
		"a\x1bb":                       `a\x1bb`,
		"a\\xff":                       `a\\xff`,
		"a\xff":                        `a\xff`,
		"tab\there":                    `tab\there`,
	} {
		if got := EscapeName(in); got != want {
			t.Errorf("EscapeName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEscapeInvalid(t *testing.T) {
	for in, want := range map[string]string{
		"plain ä ✓":             "plain ä ✓",
		"esc \x1b[31m\n\ttab":   "esc \x1b[31m\n\ttab", // JSON escapes these itself
		"bad \xff\xfe utf8":     `bad \xff\xfe utf8`,
		"a real \ufffd is kept": "a real \ufffd is kept",
	} {
		if got := EscapeInvalid(in); got != want {
			t.Errorf("EscapeInvalid(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestEscapeJSON: what encoding/json leaves raw and a terminal acts on
// becomes a \u escape that decodes to the same string; the rest is kept.
func TestEscapeJSON(t *testing.T) {
	for in, want := range map[string]string{
		`{"a": "plain ä ✓ \u001b"}`:         `{"a": "plain ä ✓ \u001b"}`,
		"{\"a\": \"x\u202ey\u009b2J\x7f\"}": `{"a": "x\u202ey\u009b2J\u007f"}`,
		"{\"tag\": \"\U000E0041\"}\n":       `{"tag": "\udb40\udc41"}` + "\n",
		"{\"a real\": \"\ufffd\"}":          "{\"a real\": \"\ufffd\"}",
	} {
		got := EscapeJSON([]byte(in))
		if string(got) != want {
			t.Errorf("EscapeJSON(%q) = %q, want %q", in, got, want)
			continue
		}
		var a, b any
		if err := json.Unmarshal([]byte(in), &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(got, &b); err != nil || !reflect.DeepEqual(a, b) {
			t.Errorf("EscapeJSON(%q) reads %v, %v; want %v", in, b, err, a)
		}
	}
}

func TestEscapeFormat(t *testing.T) {
	for in, want := range map[string]string{
		"<td>plain ä ✓</td>\n\t":    "<td>plain ä ✓</td>\n\t", // markup and line breaks stay
		"see \u202egro.live\u202c":  `see \u202egro.live\u202c`,
		"\u2066isolate\u2069\u200b": `\u2066isolate\u2069\u200b`,
		"bad \xff utf8":             "bad \ufffd utf8",
	} {
		if got := EscapeFormat(in); got != want {
			t.Errorf("EscapeFormat(%q) = %q, want %q", in, got, want)
		}
	}
}
