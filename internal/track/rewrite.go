package track

import (
	"bytes"
	"fmt"
	"sort"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/yamlfile"
	"github.com/updeb/updeb/pkg/digest"
)

// edit replaces one scalar of the recipe file, located by its yaml.v3 node.
type edit struct {
	node  *yaml.Node
	value string
}

// recipeNodes are the scalars and mappings bump changes, found with the
// yaml.v3 Node API in the file as written.
type recipeNodes struct {
	version, releaseDate, revision *yaml.Node
	// digests: source name -> algorithm -> the sha256/sha512 value node (a
	// mapping ARCH -> HEX, or one HEX scalar for every architecture).
	digests map[string]map[digest.Algorithm]*yaml.Node
}

// mapValue returns the value of key in mapping m, or nil.
func mapValue(m *yaml.Node, key string) *yaml.Node {
	if v := yamlfile.ValueOf(m, key); v != m {
		return v
	}
	return nil
}

// findNodes reads the recipe file's YAML (as recipe.Load does) and finds the
// nodes bump rewrites.
func findNodes(file string, data []byte) (*recipeNodes, error) {
	top, err := recipe.Document(file, data)
	if err != nil {
		return nil, err
	}
	if top.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d:%d: not a recipe mapping", file, top.Line, top.Column)
	}
	n := &recipeNodes{
		version: mapValue(top, "version"), releaseDate: mapValue(top, "release-date"), revision: mapValue(top, "revision"),
		digests: map[string]map[digest.Algorithm]*yaml.Node{},
	}
	if srcs := mapValue(top, "sources"); srcs != nil {
		for _, s := range srcs.Content {
			name := mapValue(s, "name")
			if name == nil {
				continue
			}
			n.digests[name.Value] = map[digest.Algorithm]*yaml.Node{}
			for _, a := range []digest.Algorithm{digest.SHA256, digest.SHA512} {
				if v := mapValue(s, string(a)); v != nil {
					n.digests[name.Value][a] = v
				}
			}
		}
	}
	return n, nil
}

// splice applies edits to data in place: each scalar's text, as written (plain,
// 'single' or "double" quoted, in its original style), is replaced by the new
// value in the same style; every other byte is kept, comments and layout
// included. A scalar whose text is not exactly its value in that style (escapes,
// a multi-line scalar) is refused rather than guessed at.
func splice(file string, data []byte, edits []edit) ([]byte, error) {
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
		n := e.node
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
		spans = append(spans, span{off, off + len(old), quote + e.value + quote})
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
