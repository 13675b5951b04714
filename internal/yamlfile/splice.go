package yamlfile

import (
	"bytes"
	"fmt"
	"sort"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Edit replaces one scalar of a YAML file, located by its yaml.v3 node (of
// the document Decoder.Document read from the same bytes).
type Edit struct {
	Node  *yaml.Node
	Value string
}

// Splice applies edits to data in place: each scalar's text, as written (plain,
// 'single' or "double" quoted, in its original style), is replaced by the new
// value in the same style; every other byte is kept, comments and layout
// included. A scalar whose text is not exactly its value in that style (escapes,
// a multi-line scalar) is refused rather than guessed at.
func Splice(file string, data []byte, edits []Edit) ([]byte, error) {
	lineStart := []int{0}
	for i, c := range data {
		if c == '\n' {
			lineStart = append(lineStart, i+1)
		}
	}
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
		off := lineStart[n.Line-1]
		for col := 1; col < n.Column && off < len(data); col++ {
			_, size := utf8.DecodeRune(data[off:])
			off += size
		}
		var quote string
		switch n.Style {
		case 0:
		case yaml.DoubleQuotedStyle:
			quote = `"`
		case yaml.SingleQuotedStyle:
			quote = `'`
		default:
			return nil, fmt.Errorf("%s:%d:%d: cannot rewrite a scalar in style %v in place", file, n.Line, n.Column, n.Style)
		}
		old := quote + n.Value + quote
		if !bytes.HasPrefix(data[off:], []byte(old)) {
			return nil, fmt.Errorf("%s:%d:%d: cannot rewrite %q in place: the text there is not exactly the value", file, n.Line, n.Column, n.Value)
		}
		spans = append(spans, span{off, off + len(old), quote + e.Value + quote})
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
