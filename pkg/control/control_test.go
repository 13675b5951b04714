package control

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	p := Paragraph{Fields: []Field{
		{"Package", "hello"},
		{"Version", "1.0-1"},
		{"Description", "short\n first line\n .\n second"},
	}}
	// The writer folds with one leading space; the stored value has none.
	p.Fields[2].Value = "short\nfirst line\n.\nsecond"
	got := string(p.Bytes())
	want := "Package: hello\nVersion: 1.0-1\nDescription: short\n first line\n .\n second\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	ps, err := Parse(strings.NewReader(got+"\nPackage: two\n"), "test")
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || ps[0].Value("description") != p.Fields[2].Value || ps[1].Value("Package") != "two" {
		t.Fatalf("parsed %+v", ps)
	}
	if !bytes.Equal(ps[0].Bytes(), p.Bytes()) {
		t.Fatalf("round trip differs")
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{" leading continuation\n", "f:1: continuation line without a field"},
		{"Package: a\nno colon here\n", "f:2: expected \"Field: value\""},
		{"Package: a\nPackage: b\n", "f:2: duplicate field"},
		{"-Bad: x\n", "f:1: control: syntax error: field name \"-Bad\""},
	} {
		_, err := Parse(strings.NewReader(tc.in), "f")
		if err == nil || !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want %q", tc.in, err, tc.want)
		}
	}
}

func TestValidateValue(t *testing.T) {
	if err := ValidateValue("Package", "a\nb", false); err == nil {
		t.Error("newline in single-line field accepted")
	}
	if err := ValidateValue("Description", "a\n\nb", true); err == nil {
		t.Error("empty continuation line accepted")
	}
	if err := ValidateValue("Description", "a\n.\nb", true); err != nil {
		t.Error(err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("Package: a\nDescription: x\n y\n .\n z\n\nPackage: b\n")
	f.Add("# comment\nA: 1\n")
	f.Fuzz(func(t *testing.T, in string) {
		ps, err := Parse(strings.NewReader(in), "fuzz")
		if err != nil {
			return
		}
		// Whatever parses must write and parse back to the same fields.
		for _, p := range ps {
			again, err := ParseOne(bytes.NewReader(p.Bytes()), "again")
			if err != nil {
				t.Fatalf("re-parse of %q: %v", p.Bytes(), err)
			}
			if len(again.Fields) != len(p.Fields) {
				t.Fatalf("field count %d != %d", len(again.Fields), len(p.Fields))
			}
		}
	})
}
