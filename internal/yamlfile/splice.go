package yamlfile

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/updeb/updeb/pkg/termtext"
)

// Edit replaces one scalar of a YAML file, located by its yaml.v3 node (of
// the document Decoder.Document read from the same bytes).
type Edit struct {
	Node  *yaml.Node
	Value string
}

// bom is the UTF-8 byte order mark: yaml.v3 skips it without counting a
// column.
var bom = []byte("\ufeff")

// LineStarts returns the byte offset where each line of data starts, lines
// counted as yaml.v3 counts them (the Line of its nodes): "\r\n", a lone
// "\r", "\n", NEL (U+0085), LS (U+2028) and PS (U+2029) each end a line,
// inside comments and quoted scalars too. A byte splice that counted only
// "\n" would put a value read from line 5 into what YAML calls line 4 (a
// comment, say).
func LineStarts(data []byte) []int {
	first := 0
	if bytes.HasPrefix(data, bom) {
		first = len(bom)
	}
	starts := []int{first}
	for i := first; i < len(data); {
		n := lineBreak(data[i:])
		if n == 0 {
			i++
			continue
		}
		i += n
		starts = append(starts, i)
	}
	return starts
}

// Lines splits data into its lines as LineStarts counts them, each with its
// line break; an empty last line (after a final break) is left out, and so
// is a leading byte order mark (Prefix returns it).
func Lines(data []byte) [][]byte {
	starts := LineStarts(data)
	out := make([][]byte, 0, len(starts))
	for i, from := range starts {
		to := len(data)
		if i+1 < len(starts) {
			to = starts[i+1]
		}
		if from < to {
			out = append(out, data[from:to])
		}
	}
	return out
}

// Prefix is what comes before the first line: a byte order mark, or nothing.
func Prefix(data []byte) []byte {
	return data[:LineStarts(data)[0]]
}

// LineBreak is the line break a line added to data ends with: "\r\n" when
// data's first "\n" follows a "\r" (a file written with CRLF), else "\n". A
// rewrite that added "\n" lines to a CRLF file would leave it with mixed line
// endings, a diff of every added line's ending.
func LineBreak(data []byte) string {
	if i := bytes.IndexByte(data, '\n'); i > 0 && data[i-1] == '\r' {
		return "\r\n"
	}
	return "\n"
}

// TrimBreak returns line without its line break.
func TrimBreak(line []byte) []byte {
	for i := range line {
		if n := lineBreak(line[i:]); n > 0 && i+n == len(line) {
			return line[:i]
		}
	}
	return line
}

// lineBreak returns the length of the line break b starts with, or 0.
func lineBreak(b []byte) int {
	switch {
	case len(b) == 0:
		return 0
	case b[0] == '\r' && len(b) > 1 && b[1] == '\n':
		return 2
	case b[0] == '\r', b[0] == '\n':
		return 1
	case b[0] == 0xc2 && len(b) > 1 && b[1] == 0x85: // NEL
		return 2
	case b[0] == 0xe2 && len(b) > 2 && b[1] == 0x80 && (b[2] == 0xa8 || b[2] == 0xa9): // LS, PS
		return 3
	}
	return 0
}

// Offset returns the byte offset in data of node n's position (of a
// document read from data; lineStarts is LineStarts(data)): lines are YAML's,
// and yaml.v3 counts a column in characters, not bytes.
func Offset(data []byte, lineStarts []int, n *yaml.Node) int {
	off := lineStarts[n.Line-1]
	for col := 1; col < n.Column && off < len(data); col++ {
		_, size := utf8.DecodeRune(data[off:])
		off += size
	}
	return off
}

// Splice applies edits to data in place: each scalar's text, as written (plain,
// 'single' or "double" quoted, in its original style), is replaced by the new
// value in the same style, or double quoted where that style would not read
// back as the value (scalarText); every other byte is kept, comments and
// layout included. A scalar whose text is not exactly its value in that style (escapes,
// a multi-line scalar) is refused rather than guessed at. Lines are YAML's
// (LineStarts). Splice does not check the result: Rewrite does.
func Splice(file string, data []byte, edits []Edit) ([]byte, error) {
	lineStart := LineStarts(data)
	type span struct {
		from, to int
		text     string
	}
	var spans []span
	for _, e := range edits {
		n := e.Node
		if n.Kind != yaml.ScalarNode || n.Line < 1 || n.Line > len(lineStart) {
			return nil, fmt.Errorf("%s:%d:%d: expected a single value to rewrite", file, n.Line, n.Column)
		}
		off := Offset(data, lineStart, n)
		var quote string
		switch n.Style {
		case 0:
		case yaml.DoubleQuotedStyle:
			quote = `"`
		case yaml.SingleQuotedStyle:
			quote = `'`
		default:
			// A block scalar (| or >): its text spans lines, with
			// indentation and chomping of its own to keep.
			return nil, fmt.Errorf("%s:%d:%d: cannot rewrite %q in place, written as a block scalar (| or >): write it on one line, plain or quoted", file, n.Line, n.Column, termtext.Escape(n.Value))
		}
		old := quote + n.Value + quote
		if !bytes.HasPrefix(data[off:], []byte(old)) {
			return nil, fmt.Errorf("%s:%d:%d: %s", file, n.Line, n.Column, ClipMessage(fmt.Sprintf("cannot rewrite %q in place: the text there is not exactly the value", termtext.Escape(n.Value))))
		}
		spans = append(spans, span{off, off + len(old), scalarText(n, quote, e.Value)})
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].from > spans[j].from })
	out := append([]byte(nil), data...)
	for i, s := range spans {
		if i > 0 && s.to > spans[i-1].from {
			return nil, fmt.Errorf("%s: overlapping edits", file)
		}
		out = append(out[:s.from:s.from], append([]byte(s.text), out[s.to:]...)...)
	}
	return out, nil
}

// scalarText is how Splice writes value in place of the scalar n, written
// with quote ("" for plain): in n's style when that reads back as exactly
// value, else double quoted with escapes. The new values come from upstream
// (a tag, a checksum file) and may be anything: in a plain scalar "" and
// "null" read as null, "true" as a boolean, "a #b" as "a", ": x" not at all;
// a quote or a line break ends or folds a quoted one. Verify would refuse
// each, leaving a value upstream may legitimately have unwritable.
func scalarText(n *yaml.Node, quote, value string) string {
	text := quote + value + quote
	if readsAs(n, text, value) {
		return text
	}
	if q, ok := doubleQuoted(value); ok {
		return q
	}
	return text // not writable (not UTF-8): Verify refuses it, naming it
}

// readsAs reports whether text, in place of the scalar n, reads as exactly
// value: a scalar of that text, of n's type or a string (a plain 1 for a
// plain 2 stays an int; a plain "null" for a version is no version). A flow
// indicator in a plain scalar is refused whatever: n may be in a flow
// collection ({amd64: HEX}), where it would end the value. So is a line
// break, even one a quoted scalar keeps (U+2028 between single quotes): the
// value stays on its line, and the lines after it keep their numbers, which
// the lines bump inserts are placed by.
func readsAs(n *yaml.Node, text, value string) bool {
	if n.Style == 0 && strings.ContainsAny(value, ",[]{}") || strings.ContainsAny(value, "\r\n\u0085\u2028\u2029") {
		return false
	}
	var doc yaml.Node
	if yaml.Unmarshal([]byte("k: "+text+"\n"), &doc) != nil || len(doc.Content) != 1 || len(doc.Content[0].Content) != 2 {
		return false
	}
	v := doc.Content[0].Content[1]
	if v.Kind != yaml.ScalarNode || v.Value != value || v.Tag != n.Tag && (v.ShortTag() == "!!null" || v.ShortTag() == "!!bool") {
		return false
	}
	return true
}

// doubleQuoted writes value as a YAML double-quoted scalar on one line:
// every character that is not printable (a line break, U+2028, a tab, a
// byte order mark) escaped, so that LineStarts counts no line in it. It
// reports false for a value that is not UTF-8, which YAML cannot hold.
func doubleQuoted(value string) (string, bool) {
	if !utf8.ValidString(value) {
		return "", false
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range value {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case unicode.IsPrint(r):
			b.WriteRune(r)
		case r <= 0xff:
			fmt.Fprintf(&b, "\\x%02x", r)
		case r <= 0xffff:
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			fmt.Fprintf(&b, "\\U%08x", r)
		}
	}
	b.WriteByte('"')
	return b.String(), true
}
