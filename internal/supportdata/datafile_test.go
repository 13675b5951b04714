package supportdata

import (
	"testing"
	"time"
)

func TestHeader(t *testing.T) {
	for in, want := range map[string]string{
		"# Source: x\n#\n#   indented\nkey: 1\n# not header\n": "Source: x\n\n  indented",
		"key: 1\n":            "",
		"#a\n#b":              "a\nb",
		"\n# a\n":             "",
		"  # a\n# b\n\n# c\n": "a\nb",
	} {
		if got := Header([]byte(in)); got != want {
			t.Errorf("Header(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAsOf(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    string
		ok, bad bool
	}{
		{"Source: x\nAs of: 2026-08-22", "2026-08-22T00:00:00Z", true, false},
		{"As of: 2026-11-24T10:11:12+01:00\nmore", "2026-11-24T09:11:12Z", true, false},
		{"Source: x", "0001-01-01T00:00:00Z", false, false},
		{"As of: last week", "0001-01-01T00:00:00Z", true, true},
	} {
		got, ok, err := AsOf(tc.in)
		if got.Format(time.RFC3339) != tc.want || ok != tc.ok || (err != nil) != tc.bad {
			t.Errorf("AsOf(%q) = %s, %v, %v; want %s, %v, error %v", tc.in, got.Format(time.RFC3339), ok, err, tc.want, tc.ok, tc.bad)
		}
	}
}
