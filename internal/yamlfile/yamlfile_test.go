package yamlfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

func findings(d *Decoder) string {
	var lines []string
	for _, f := range d.Findings() {
		lines = append(lines, f.String())
	}
	return strings.Join(lines, "\n")
}

func TestDocument(t *testing.T) {
	opts := Options{What: "thing", Empty: "thing is empty", SyntaxPrefix: "YAML syntax: "}
	for _, tc := range []struct {
		name, in string
		top      bool // a top node is returned
		want     string
	}{
		{"mapping", "a: 1\nb: [x]\n", true, ""},
		{"empty", "", false, "f.yaml:1:1: thing is empty"},
		{"comments only", "# nothing\n", false, "f.yaml:1:1: thing is empty"},
		{"empty document", "---\n", false, "f.yaml:1:1: thing is empty"},
		{"two documents", "a: 1\n---\nb: 2\n", true, "f.yaml:2:1: a thing is one YAML document; found another one here"},
		{"unclosed flow", "a: 1\nb: 2\nc: [x\n", false, "f.yaml:2:1: YAML syntax: did not find expected ',' or ']'"},
		{"tab indentation", "a:\n\tb: 1\n", false, "f.yaml:2:1: YAML syntax: found character that cannot start any token"},
		{"unterminated quote", "a: 'x\n", false, "f.yaml:2:1: YAML syntax: found unexpected end of stream"},
		// yaml.v3 names no line for a character its reader refuses: the
		// finding is at the character, counted in characters.
		{"control character", "a: 1\nb: [\"é\x01\"]\n", false, `f.yaml:2:7: YAML syntax: control characters are not allowed (U+0001: remove it, or write it as "\u0001" in a double-quoted string)`},
		{"DEL in a comment", "a: 1 # x\x7f\n", false, `f.yaml:1:9: YAML syntax: control characters are not allowed (U+007F: remove it, or write it as "\u007F" in a double-quoted string)`},
		{"Latin-1", "# Müller\r\na: 1\r\nb: Caf\xe9\r\n", false, "f.yaml:3:7: YAML syntax: invalid trailing UTF-8 octet (byte 0xE9 is not UTF-8: save the file as UTF-8)"},
		{"cut UTF-8 after a byte order mark", "\ufeffa: 1\nb: x\xe2\x80\n", false, "f.yaml:2:5: YAML syntax: invalid trailing UTF-8 octet (byte 0xE2 is not UTF-8: save the file as UTF-8)"},
		{"surrogate", "a: 1\n\u2028b: \xed\xa0\x80\n", false, "f.yaml:3:4: YAML syntax: invalid Unicode character (byte 0xED is not UTF-8: save the file as UTF-8)"},
		{"second document broken", "a: 1\n---\nb: [\n", true, "f.yaml:3:1: YAML syntax: did not find expected node content"},
		{"anchor", "a: &x 1\nb: 2\n", false, "f.yaml:1:4: a: YAML anchors and aliases are not supported"},
		{"unknown alias", "a: 1\nb: [*x]\n", false, "f.yaml:1:1: YAML syntax: unknown anchor 'x' referenced"},
		{"null document", "--- ~\n", false, "f.yaml:1:1: thing is empty"},
		{"many anchors", strings.Repeat("- &a 1\n", 20), false, anchorLines(maxAnchorFindings)},
		{"anchor and alias", "a: &x [1]\nb: {c: *x}\n", false,
			"f.yaml:1:4: a: YAML anchors and aliases are not supported\nf.yaml:2:8: c: YAML anchors and aliases are not supported"},
		{"merge key", "base: &b {x: 1}\nother:\n  <<: *b\n", false,
			"f.yaml:1:7: base: YAML anchors and aliases are not supported\nf.yaml:3:7: <<: YAML anchors and aliases are not supported"},
		{"anchored root", "&r [1]\n", false, "f.yaml:1:1: YAML anchors and aliases are not supported"},
		// An explicit tag changes what a value is (!!binary is the bytes its
		// base64 decodes to, !!bool yes is true): the decoders read the text
		// only, so a tag would make updeb read the file otherwise than any
		// other YAML reader does.
		{"binary tag", "a: !!binary aGVsbQ==\n", false, "f.yaml:1:4: a: YAML tags (!!binary) are not supported: write the value itself (quoted, for a string)"},
		{"bool tag", "a: [!!bool yes]\n", false, "f.yaml:1:5: a: YAML tags (!!bool) are not supported: write the value itself (quoted, for a string)"},
		{"local tag", "a: {b: !python/object:os.system x}\n", false, "f.yaml:1:8: b: YAML tags (!python/object:os.system) are not supported: write the value itself (quoted, for a string)"},
		{"str tag", "a: !!str 1.30\n", false, "f.yaml:1:4: a: YAML tags (!!str) are not supported: write the value itself (quoted, for a string)"},
		{"tagged key", "!!str a: 1\n", false, "f.yaml:1:1: YAML tags (!!str) are not supported: write the value itself (quoted, for a string)"},
		{"non-specific tag", "a: ! x\n", true, ""},
		{"too large", "a: " + strings.Repeat("x", 100) + "\n", false, "f.yaml:1:1: thing is larger than 64 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &Decoder{File: "f.yaml"}
			o := opts
			if tc.name == "too large" {
				o.MaxSize = 64
			}
			top := d.Document([]byte(tc.in), o)
			if (top != nil) != tc.top {
				t.Errorf("top node %v, want one: %v", top, tc.top)
			}
			if got := findings(d); got != tc.want {
				t.Errorf("findings:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
	// Without Empty, an empty file is fine.
	d := &Decoder{File: "f.yaml"}
	if top := d.Document([]byte("# only a comment\n"), Options{What: "config file"}); top != nil || d.Err() != nil {
		t.Errorf("empty file: %v, %v", top, d.Err())
	}
}

func anchorLines(n int) string {
	var lines []string
	for i := 1; i <= n; i++ {
		lines = append(lines, fmt.Sprintf("f.yaml:%d:3: YAML anchors and aliases are not supported", i))
	}
	return strings.Join(lines, "\n")
}

// TestSyntaxErrorFormat pins the text of yaml.v3's syntax errors, the only
// place yaml.v3 keeps their line: if an upgrade changes it, this fails
// instead of every syntax error landing on line 1.
func TestSyntaxErrorFormat(t *testing.T) {
	var n yaml.Node
	err := yaml.Unmarshal([]byte("a: 1\nb: 2\nc: [\n"), &n)
	if err == nil || err.Error() != "yaml: line 3: did not find expected node content" {
		t.Fatalf("yaml.v3 syntax error: %v", err)
	}
	if line, msg := syntaxError(err); line != 3 || msg != "did not find expected node content" {
		t.Errorf("syntaxError = %d, %q", line, msg)
	}
	for in, want := range map[string]string{
		"yaml: control characters are not allowed": "1 control characters are not allowed",
		"yaml: line 0: odd":                        "1 line 0: odd",
		"yaml: line x: odd":                        "1 line x: odd",
		"something else":                           "1 something else",
	} {
		line, msg := syntaxError(errors.New(in))
		if got := fmt.Sprint(line, " ", msg); got != want {
			t.Errorf("syntaxError(%q) = %s, want %s", in, got, want)
		}
	}
}

// A "billion laughs" document is refused at its first anchors, before
// anything is expanded: in bounded time and memory, with a clear message.
func TestBillionLaughs(t *testing.T) {
	var b strings.Builder
	b.WriteString("a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	for i := 'b'; i <= 'i'; i++ {
		fmt.Fprintf(&b, "%c: &%c [", i, i)
		for j := 0; j < 9; j++ {
			if j > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "*%c", i-1)
		}
		b.WriteString("]\n")
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	d := &Decoder{File: "lol.yaml"}
	top := d.Document([]byte(b.String()), Options{What: "config file"})
	runtime.ReadMemStats(&after)
	if top != nil {
		t.Fatal("a billion laughs document was accepted")
	}
	fs := d.Findings()
	if len(fs) != 9 || fs[0].String() != "lol.yaml:1:4: a: YAML anchors and aliases are not supported" {
		t.Errorf("findings: %v", fs)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 10<<20 {
		t.Errorf("reading a 1 KiB document allocated %d bytes", grew)
	}
}

func TestMap(t *testing.T) {
	const src = `name: x
size: 3
name: y
colour: red
list: [a, "", b]
flag: yes
on: true
7: seven
nested: {a: 1, a: 2}
`
	d := &Decoder{File: "m.yaml"}
	top := d.Document([]byte(src), Options{What: "thing"})
	var (
		name string
		size int
		list []string
		flag bool
	)
	d.Map(top, Map{What: "thing", Fields: map[string]Field{
		"name":    {Required: true, Decode: func(v *yaml.Node) { d.Str(v, "name", &name) }},
		"size":    {Decode: func(v *yaml.Node) { d.Int(v, "size", &size) }},
		"list":    {Decode: func(v *yaml.Node) { d.StrList(v, "list", &list) }},
		"flag":    {Decode: func(v *yaml.Node) { d.Bool(v, "flag", &flag) }},
		"on":      {Decode: func(v *yaml.Node) { d.Str(v, "on", new(string)) }},
		"7":       {Decode: func(v *yaml.Node) { d.Int(v, "7", &size) }},
		"nested":  {Decode: func(v *yaml.Node) { d.Pairs(v, "nested", func(k, v *yaml.Node) {}) }},
		"missing": {Required: true, Decode: func(*yaml.Node) {}},
	}})
	want := `m.yaml:1:1: thing: missing required field "missing"
m.yaml:3:1: thing: field "name" given twice
m.yaml:4:1: thing: unknown field "colour" (known: 7, flag, list, missing, name, nested, on, size)
m.yaml:5:11: list[1]: must not be empty
m.yaml:6:7: flag: expected true or false, found "yes"
m.yaml:7:5: on: expected a string, found "true"
m.yaml:8:4: 7: expected an integer, found "seven"
m.yaml:9:16: nested: key "a" given twice`
	if got := findings(d); got != want {
		t.Errorf("findings:\n%s\nwant:\n%s", got, want)
	}
	if name != "x" || size != 3 || strings.Join(list, ",") != "a,b" || flag {
		t.Errorf("decoded name %q size %d list %q flag %v", name, size, list, flag)
	}

	// Custom phrasing, an open mapping, a non-mapping, keys that are not strings.
	d = &Decoder{File: "m.yaml"}
	top = d.Document([]byte("a: 1\nb: 2\na: 3\n? [k]\n: v\n~: n\n"), Options{})
	var keys []string
	d.Map(top, Map{
		Each:  func(k, v *yaml.Node) { keys = append(keys, k.Value) },
		Twice: func(k, first *yaml.Node) string { return fmt.Sprintf("key %q already at line %d", k.Value, first.Line) },
	})
	d.Map(top, Map{What: "closed", Fields: map[string]Field{"a": {Decode: func(*yaml.Node) {}}},
		Unknown: func(k *yaml.Node) string { return "no " + k.Value + " here" }})
	d.Mapping(top.Content[1], "scalar", nil)
	want = `m.yaml:1:4: scalar: expected a mapping, found "1"
m.yaml:2:1: no b here
m.yaml:3:1: key "a" already at line 1
m.yaml:3:1: closed: field "a" given twice
m.yaml:4:3: keys must be plain strings, found a list
m.yaml:4:3: closed: keys must be plain strings, found a list
m.yaml:6:1: keys must be plain strings, found null
m.yaml:6:1: closed: keys must be plain strings, found null`
	if got := findings(d); got != want {
		t.Errorf("findings:\n%s\nwant:\n%s", got, want)
	}
	if strings.Join(keys, ",") != "a,b" {
		t.Errorf("open mapping keys %v", keys)
	}
	if ValueOf(top, "b").Value != "2" || KeyOf(top, "b").Line != 2 || ValueOf(top, "zz") != top || KeyOf(top, "zz") != top {
		t.Error("ValueOf/KeyOf")
	}
}

func TestFindingEscaped(t *testing.T) {
	f := Finding{File: "a\nb.yaml", Line: 2, Col: 3, Message: "value \"x\ny\" is bad\n"}
	if got := f.String(); got != `a\nb.yaml:2:3: value "x\ny" is bad\n` {
		t.Errorf("Finding.String() = %q", got)
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(p, []byte(strings.Repeat("a", 1000)), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := ReadFile(p, 100)
	if err != nil || len(b) != 101 {
		t.Errorf("ReadFile read %d bytes, %v; want 101 (the limit + 1)", len(b), err)
	}
	d := &Decoder{File: p}
	if d.Document(b, Options{What: "recipe", MaxSize: 100}) != nil || !strings.HasSuffix(findings(d), ":1:1: recipe is larger than 100 bytes") {
		t.Errorf("oversized file: %s", findings(d))
	}
	if _, err := ReadFile(filepath.Join(dir, "none.yaml"), 0); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// walk decodes every node generically, as a reader would.
func walk(d *Decoder, n *yaml.Node, name string) {
	switch n.Kind {
	case yaml.MappingNode:
		d.Pairs(n, name, func(k, v *yaml.Node) { walk(d, v, k.Value) })
	case yaml.SequenceNode:
		d.List(n, name, func(i int, v *yaml.Node) { walk(d, v, fmt.Sprintf("%s[%d]", name, i)) })
	default:
		var s string
		var i int
		if d.Str(n, name, &s) {
			d.Int(n, name, &i)
		}
	}
}

// FuzzDocument: reading and walking any input never panics, and every
// finding has a position and prints as one line without control characters.
func FuzzDocument(f *testing.F) {
	f.Add([]byte("a: 1\nb: [x, {c: d}]\n"))
	f.Add([]byte("a: &x 1\nb: *x\n"))
	f.Add([]byte("a: 1\n---\nb: 2\n"))
	f.Add([]byte("a: [\n"))
	f.Add([]byte("\"a\\nb\": 1\n\"a\\nb\": 2\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d := &Decoder{File: "f\n.yaml"}
		if top := d.Document(data, Options{What: "thing", MaxSize: 4096, Empty: "empty"}); top != nil {
			walk(d, top, "")
		}
		for _, x := range d.Findings() {
			s := x.String()
			if x.Line < 1 || x.Col < 1 || x.Message == "" || strings.IndexFunc(s, func(r rune) bool { return unicode.IsControl(r) }) >= 0 {
				t.Fatalf("bad finding %q (%+v)", s, x)
			}
		}
	})
}

func TestRecord(t *testing.T) {
	d := &Decoder{File: "r.yaml"}
	top := d.Document([]byte("- {name: a, x: 1}\n- {name: b}\n- {x: 2, y: 3}\n"), Options{})
	var ok []bool
	for _, n := range top.Content {
		ok = append(ok, d.Record(func(rd *Decoder) {
			rd.Mapping(n, "item", map[string]Field{"name": {Required: true, Decode: func(*yaml.Node) {}}})
		}))
	}
	// The third item's first problem is its unknown key x, found before the
	// missing name (reported at the mapping, earlier in the file).
	want := "r.yaml:1:13: item: unknown field \"x\" (known: name)\nr.yaml:3:4: item: unknown field \"x\" (known: name)"
	if got := findings(d); got != want || fmt.Sprint(ok) != "[false true false]" {
		t.Errorf("findings:\n%s\nwant:\n%s\nok %v", got, want, ok)
	}
}

// A file with thousands of problems gives MaxFindings of them and a count.
func TestMaxFindings(t *testing.T) {
	d := &Decoder{File: "m.yaml"}
	top := d.Document([]byte(strings.Repeat("a: 1\n", 5000)), Options{})
	d.Pairs(top, "", func(k, v *yaml.Node) {})
	fs := d.Findings()
	if d.Len() != 4999 || len(fs) != MaxFindings+1 {
		t.Fatalf("Len %d, %d findings", d.Len(), len(fs))
	}
	if got := fs[MaxFindings].String(); got != `m.yaml:102:1: 4899 more problems not shown, the first: key "a" given twice` {
		t.Errorf("last finding %q", got)
	}
}

// A finding quotes the value it is about, which may be most of the file: its
// message keeps the start and the end (what to do), not a line of a
// megabyte; a short one is kept whole.
func TestHugeValueClipped(t *testing.T) {
	d := &Decoder{File: "f.yaml"}
	value := strings.Repeat("é", 300000)
	d.At(&yaml.Node{Line: 2, Column: 1}, "homepage: %q is not an http(s) URL", value)
	d.At(&yaml.Node{Line: 3, Column: 1}, "name: %q is short", "x")
	got := d.Findings()
	if len(got) != 2 || len(got[0].String()) > 2200 || !strings.HasPrefix(got[0].String(), `f.yaml:2:1: homepage: "éé`) ||
		!strings.Contains(got[0].Message, "bytes left out)...éé") || !strings.HasSuffix(got[0].Message, `éé" is not an http(s) URL`) ||
		!utf8.ValidString(got[0].Message) {
		t.Errorf("findings: %d, the first %d bytes: %.100q ... %q", len(got), len(got[0].String()), got[0].String(), got[0].Message[len(got[0].Message)-60:])
	}
	if got[1].String() != `f.yaml:3:1: name: "x" is short` {
		t.Errorf("short finding: %s", got[1])
	}
}
