package datafile

import "testing"

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
