package control

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
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
		// A line over the documented 16 MiB is a syntax error naming its
		// line, not bufio's "token too long" at the line before.
		{"Package: a\nFoo: " + strings.Repeat("x", 16<<20) + "\n", "f:2: line longer than 16 MiB"},
	} {
		_, err := Parse(strings.NewReader(tc.in), "f")
		if err == nil || !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%.40q) = %.200v, want %q", tc.in, err, tc.want)
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

// FuzzParseStrict: no panic; what ParseStrict accepts, WriteTo writes and
// ParseStrict reads back to the same fields (the repository writes what a
// .deb's control file holds into its index).
func FuzzParseStrict(f *testing.F) {
	f.Add([]byte("Package: a\nVersion: 1\nDescription: x\n y\n .\n  verbatim\n"))
	f.Add([]byte("A: 1\n\nB: 2\n"))
	f.Add([]byte("X-Big: \x01\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		p, err := ParseStrict(in, "fuzz")
		if err != nil {
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("error without ErrSyntax: %v", err)
			}
			return
		}
		again, err := ParseStrict(p.Bytes(), "again")
		if err != nil {
			t.Fatalf("re-parse of %q: %v", p.Bytes(), err)
		}
		if len(again.Fields) != len(p.Fields) {
			t.Fatalf("%d fields, %d after a round trip", len(p.Fields), len(again.Fields))
		}
		for i := range p.Fields {
			if again.Fields[i] != p.Fields[i] {
				t.Fatalf("field %d: %q, %q after a round trip", i, p.Fields[i], again.Fields[i])
			}
		}
	})
}

func TestParseStrict(t *testing.T) {
	p, err := ParseStrict([]byte("Package: a\nDescription: short\n long\n .\n   verbatim\n"), "c")
	if err != nil || p.Value("Description") != "short\nlong\n.\n  verbatim" {
		t.Fatalf("%q, %v", p.Value("Description"), err)
	}
	for _, tc := range []struct{ in, want string }{
		{"Package: a\nPackage: b\n", "c:2: duplicate field Package"},
		{"# c\nA1: b\n", "c:1: \"# c\": control files have no comments"},
		{"A1: b\n \nB1: c\n", "c:2: field A1: a line of only whitespace"},
		{"A1: b\n\nB1: c\n", "c:3: a second paragraph"},
		{"A1: b", "c:1: no newline at the end"},
		{"A1: b\r\n", `c:1: field "A1": control character '\r'`},
		{"A1: caf\xe9\n", "c:1: not UTF-8"},
		{"A: b\n", `field name "A" is shorter than two characters`},
		{"A1: b\nB1:  \n", "c:2: field B1: an empty value on the last line"},
		{"A B: c\n", `field name "A B" contains ' '`},
		{"", "c: no fields"},
		{"X-Big: " + strings.Repeat("x", MaxStanzaSize) + "\n", `c: 262152 bytes (the field "X-Big" alone has 262152), more than the 262144`},
		// What is quoted is cut at a character, not inside é (2 bytes) ...
		{strings.Repeat("x", 59) + strings.Repeat("é", 20) + "\n", `found "` + strings.Repeat("x", 59) + `...(99 bytes)"`},
		// ... and text that is not UTF-8 at all is still quoted.
		{strings.Repeat("\x80", 100) + "\n", `not UTF-8: "` + strings.Repeat(`\x80`, 60) + `...(100 bytes)"`},
	} {
		if _, err := ParseStrict([]byte(tc.in), "c"); err == nil || !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseStrict(%.40q) = %v, want %q", tc.in, err, tc.want)
		}
	}
}

// TestParseGrowsLinearly: a paragraph of many fields, and a field of many
// lines, cost Parse in proportion to their size. It used to look every new
// field up among the paragraph's earlier ones (20,000 fields: 3 s) and to
// copy a value again for each of its lines (2 MB of 100-byte lines: 9 s; a
// 10 MB field, hours).
func TestParseGrowsLinearly(t *testing.T) {
	const n = 20000
	var b strings.Builder
	b.WriteString("Package: a\n")
	for i := range n {
		fmt.Fprintf(&b, "X-Field-%d: v\n", i)
	}
	calls := 0
	equalFold = func(a, b string) bool { calls++; return strings.EqualFold(a, b) }
	defer func() { equalFold = strings.EqualFold }()
	ps, err := Parse(strings.NewReader(b.String()), "many")
	if err != nil || len(ps) != 1 || len(ps[0].Fields) != n+1 {
		t.Fatalf("Parse: %d paragraphs, %v", len(ps), err)
	}
	if calls > 4*n {
		t.Errorf("Parse compared field names %d times for %d fields: it grows with the square of the fields", calls, n)
	}

	line := strings.Repeat("x", 99)
	b.Reset()
	b.WriteString("Package: a\nBig: first\n")
	for range n {
		b.WriteString(" " + line + "\n")
	}
	b.WriteString("Last: z\n")
	in := b.String()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	ps, err = Parse(strings.NewReader(in), "long")
	runtime.ReadMemStats(&after)
	if err != nil || len(ps) != 1 {
		t.Fatalf("Parse: %d paragraphs, %v", len(ps), err)
	}
	if got, want := ps[0].Value("Big"), "first\n"+strings.TrimSuffix(strings.Repeat(line+"\n", n), "\n"); got != want {
		t.Fatalf("Big has %d bytes, want %d", len(got), len(want))
	}
	if ps[0].Value("Last") != "z" {
		t.Fatalf("Last = %q", ps[0].Value("Last"))
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(20*len(in)) {
		t.Errorf("Parse allocated %d bytes for %d bytes of input: a long value is copied once a line", alloc, len(in))
	}
}

// TestParseStrictLongValue: ParseStrict joins a value's lines once too (a
// control file of MaxStanzaSize bytes of two-byte lines allocated 7 GB).
func TestParseStrictLongValue(t *testing.T) {
	var b strings.Builder
	b.WriteString("Package: a\nDescription: d\n")
	for b.Len() < MaxStanzaSize-4 {
		b.WriteString(" x\n")
	}
	in := b.String()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	p, err := ParseStrict([]byte(in), "control")
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Value("Description"), "d"+strings.Repeat("\nx", strings.Count(in, " x\n")); got != want {
		t.Fatalf("Description has %d bytes, want %d", len(got), len(want))
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(40*len(in)) {
		t.Errorf("ParseStrict allocated %d bytes for %d bytes of input: a long value is copied once a line", alloc, len(in))
	}
}
