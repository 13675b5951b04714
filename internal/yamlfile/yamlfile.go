// Package yamlfile reads the YAML files updeb takes as input (recipes, the
// config file, release sets, the bundled compatibility and end-of-life data)
// one way: strictly, with a position for every problem, and bounded.
//
//   - A file is exactly one YAML document, at most a given size (MaxSize by
//     default); anchors and aliases are refused wherever they appear, so no
//     document can expand (no "billion laughs"), and so are explicit tags
//     (!!binary, !!bool, !python/...), which would give a value another
//     meaning than its text.
//   - Decoding walks the yaml.Node tree (Decoder.Map, Str, Int, List, ...):
//     unknown keys, keys given twice, missing required keys and values of the
//     wrong kind are findings, and decoding carries on after one so that a
//     file's problems are reported together.
//   - Every finding reads "FILE:LINE:COL: message" on one line: control and
//     format characters in the file name or message are escaped.
//   - A schema run (Describe, schema.go) runs a loader's decoding without a
//     document and returns the JSON Schema of what it accepts: the schemas
//     in docs/schemas are made that way, never written beside the loaders.
//
// Files updeb changes in place (a recipe by bump, a release set, a data
// file) are changed one way: Splice puts new values into the old bytes, lines
// counted as YAML counts them (LineStarts), and Rewrite replaces the file only
// when the text, read back from disk, holds exactly the new values and is
// otherwise the old file (Verify); else the file is untouched and the error
// wraps ErrNotRewritten.
//
// yaml.v3 reports a syntax error only as text ("yaml: line N: message");
// Document is the one place that reads that line number (see syntaxError),
// and that finds the character of an error yaml.v3 names no line for (a
// byte that is not UTF-8, a control character: see unreadable). Every other
// position comes from a node.
package yamlfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/updeb/updeb/internal/confined"
	"github.com/updeb/updeb/pkg/plural"
	"github.com/updeb/updeb/pkg/termtext"
	"github.com/updeb/updeb/pkg/utf8cut"
	"go.yaml.in/yaml/v3"
)

// MaxSize is the default size limit of a file, in bytes: updeb's input files
// are hand-written and a few KiB; a YAML node tree takes far more memory than
// its text, so the limit also bounds memory.
const MaxSize = 1 << 20

// maxAnchorFindings bounds the findings about anchors and aliases: one says
// what is wrong, a thousand would only fill the terminal.
const maxAnchorFindings = 10

// MaxFindings bounds the findings one Decoder keeps (a 1 MiB file of
// repeated keys would otherwise print 200000 lines): beyond it, one last
// finding says how many more there were.
const MaxFindings = 100

// Finding is one problem at a position of a file (line and column from 1).
type Finding struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Col     int    `json:"col"`
	Message string `json:"message"`
	// Cause is a sentinel error callers can branch on (errors.Is through the
	// file's error), or nil.
	Cause error `json:"-"`
}

// String returns "FILE:LINE:COL: message", one line.
func (f Finding) String() string {
	return fmt.Sprintf("%s:%d:%d: %s", termtext.Escape(f.File), f.Line, f.Col, termtext.Escape(f.Message))
}

// Error lists the findings of one file, sorted by position.
type Error struct {
	Findings []Finding
}

func (e *Error) Error() string {
	lines := make([]string, len(e.Findings))
	for i, f := range e.Findings {
		lines[i] = f.String()
	}
	return strings.Join(lines, "\n")
}

// Decoder collects the findings of one file and decodes its nodes. The zero
// value is ready to use; File names the file in findings and may be set any
// time before Findings or Err.
type Decoder struct {
	File string
	// desc is set in a schema run (Describe): the decoding methods then
	// record what they accept instead of reading a document.
	desc *describer
	list []Finding
	// more counts the findings beyond MaxFindings; firstMore is the first.
	more      int
	firstMore Finding
}

// At records a finding at node n (1:1 when n is nil or has no position).
func (d *Decoder) At(n *yaml.Node, format string, args ...any) {
	d.Because(nil, n, format, args...)
}

// Because records a finding at node n that callers can tell by cause.
func (d *Decoder) Because(cause error, n *yaml.Node, format string, args ...any) {
	if d.desc != nil {
		return // a schema run reads no values: a check of one says nothing
	}
	line, col := 1, 1
	if n != nil && n.Line > 0 {
		line, col = n.Line, max(n.Column, 1)
	}
	d.add(Finding{Line: line, Col: col, Message: ClipMessage(fmt.Sprintf(format, args...)), Cause: cause})
}

// maxMessage bounds a finding's message: most quote the value they are
// about, and a value may be most of a 1 MiB file (a homepage, a license of
// half a megabyte), which would be a line of that size on the terminal.
const maxMessage = 2048

// ClipMessage returns msg when it is at most maxMessage bytes, else its
// start and its end (which says what to do) with how many bytes were left
// out between them, cut where characters start.
func ClipMessage(msg string) string {
	if len(msg) <= maxMessage {
		return msg
	}
	head := utf8cut.Prefix(msg, maxMessage/2)
	from := len(msg) - maxMessage/4
	for from < len(msg) && !utf8.RuneStart(msg[from]) {
		from++
	}
	return fmt.Sprintf("%s...(%d bytes left out)...%s", head, from-len(head), msg[from:])
}

func (d *Decoder) add(f Finding) {
	if len(d.list) < MaxFindings {
		d.list = append(d.list, f)
		return
	}
	if d.more == 0 {
		d.firstMore = f
	}
	d.more++
}

// Len returns how many findings have been recorded.
func (d *Decoder) Len() int { return len(d.list) + d.more }

// Findings returns the findings so far, sorted by position, without
// duplicates, each naming File.
func (d *Decoder) Findings() []Finding {
	out := make([]Finding, 0, len(d.list))
	seen := map[Finding]bool{}
	for _, f := range d.list {
		f.File = d.File
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Line != out[j].Line {
			return out[i].Line < out[j].Line
		}
		return out[i].Col < out[j].Col
	})
	if d.more > 0 {
		f := d.firstMore
		f.File, f.Message = d.File, fmt.Sprintf("%s not shown, the first: %s", plural.Count(d.more, "more problem", "more problems"), f.Message)
		out = append(out, f)
	}
	return out
}

// Err returns the findings as an *Error, or nil when there are none.
func (d *Decoder) Err() error {
	if d.Len() == 0 {
		return nil
	}
	return &Error{Findings: d.Findings()}
}

// Record decodes one record of a file (a release set, a release cycle) with
// decode, on a decoder of its own, and keeps only the first problem decode
// found there: within one record, later problems mostly follow from the
// first ("no name", then "components missing" for a misspelt key). Records
// after it are still decoded, so the file's problems are reported together.
// It reports whether the record had no problem.
func (d *Decoder) Record(decode func(rd *Decoder)) bool {
	rd := &Decoder{desc: d.desc}
	decode(rd)
	if len(rd.list) == 0 {
		return true
	}
	d.add(rd.list[0])
	return false
}

// ReadFile reads file, but at most limit+1 bytes of it (limit <= 0 means
// MaxSize), so that Document refuses an oversized file without reading it all.
// It must be a regular file (confined.OpenFile): a FIFO or a device is refused
// without being read.
func ReadFile(file string, limit int) ([]byte, error) {
	if limit <= 0 {
		limit = MaxSize
	}
	f, _, err := confined.OpenFile(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, int64(limit)+1))
}

// Options say what a file is and how large it may be.
type Options struct {
	// What names the file in messages: "recipe" gives "recipe is larger than
	// ..." and "a recipe is one YAML document".
	What string
	// MaxSize is the size limit in bytes; <= 0 means MaxSize.
	MaxSize int
	// Empty is the finding for a file without content (only comments, or
	// nothing); "" means an empty file is fine and Document returns nil.
	Empty string
	// SyntaxPrefix starts the message of a YAML syntax error ("YAML syntax: ").
	SyntaxPrefix string
}

// Document parses data as one YAML document and returns its top node, or nil
// when the file is empty or unusable (too large, not YAML, with anchors,
// aliases or tags); every problem is recorded. A second document is a finding too,
// and the first is still returned so that its problems are reported as well.
func (d *Decoder) Document(data []byte, o Options) *yaml.Node {
	limit := o.MaxSize
	if limit <= 0 {
		limit = MaxSize
	}
	if len(data) > limit {
		d.At(nil, "%s is larger than %d bytes", o.What, limit)
		return nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			d.empty(o)
		} else {
			d.syntax(err, data, o)
		}
		return nil
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		d.At(&extra, "a %s is one YAML document; found another one here", o.What)
	} else if !errors.Is(err, io.EOF) {
		d.syntax(err, data, o)
	}
	if len(doc.Content) != 1 || doc.Content[0].ShortTag() == "!!null" {
		d.empty(o)
		return nil
	}
	top := doc.Content[0]
	if n := d.anchors(top, "", 0); n > 0 {
		return nil
	}
	return top
}

func (d *Decoder) empty(o Options) {
	if o.Empty != "" {
		d.At(nil, "%s", o.Empty)
	}
}

func (d *Decoder) syntax(err error, data []byte, o Options) {
	line, msg := syntaxError(err)
	f := Finding{Line: line, Col: 1, Message: o.SyntaxPrefix + msg}
	if !strings.HasPrefix(err.Error(), "yaml: line ") {
		// yaml.v3 gives a character its reader refuses (a byte that is not
		// UTF-8, a control character) no position: find it.
		if l, c, why := unreadable(data); l > 0 {
			f.Line, f.Col, f.Message = l, c, f.Message+" ("+why+")"
		}
	}
	d.add(f)
}

// unreadable finds the first character of data that yaml.v3's reader
// refuses, and returns its line and column as yaml.v3 counts them (lines as
// LineStarts, columns in characters) and what it is and what to do; line is
// 0 when there is none, or when data is UTF-16 (which yaml.v3 reads too).
// YAML 1.2 allows tab, the line breaks and the printable characters, and
// NEL: no other C0 or C1 control, DEL, surrogate, U+FFFE or U+FFFF.
func unreadable(data []byte) (line, col int, why string) {
	if bytes.HasPrefix(data, []byte{0xfe, 0xff}) || bytes.HasPrefix(data, []byte{0xff, 0xfe}) {
		return 0, 0, ""
	}
	starts := LineStarts(data)
	for l, from := range starts {
		to := len(data)
		if l+1 < len(starts) {
			to = starts[l+1]
		}
		text := data[from:to]
		for i, c := 0, 1; i < len(text); c++ {
			r, size := utf8.DecodeRune(text[i:])
			switch {
			case r == utf8.RuneError && size <= 1:
				return l + 1, c, fmt.Sprintf("byte 0x%02X is not UTF-8: save the file as UTF-8", text[i])
			case r == '\t' || r == '\n' || r == '\r' || r == 0x85 ||
				r >= 0x20 && r < 0x7f || r >= 0xa0 && r <= 0xd7ff || r >= 0xe000 && r <= 0xfffd || r >= 0x10000:
			default:
				return l + 1, c, fmt.Sprintf("U+%04X: remove it, or write it as \"\\u%04X\" in a double-quoted string", r, r)
			}
			i += size
		}
	}
	return 0, 0, ""
}

// syntaxError splits a yaml.v3 parse error, "yaml: line N: MESSAGE" or
// "yaml: MESSAGE", into its line (1 when it names none) and message. yaml.v3
// keeps the position of a syntax error nowhere else; TestSyntaxErrorFormat
// pins the format so that a yaml.v3 upgrade that changes it fails loudly.
func syntaxError(err error) (line int, msg string) {
	msg = strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, after, ok := strings.Cut(rest, ": "); ok {
			if n, err := strconv.Atoi(num); err == nil && n > 0 {
				return n, after
			}
		}
	}
	return 1, msg
}

// anchors records every anchor, alias and explicit tag under n (up to
// maxAnchorFindings in all), naming the key they sit under, and returns how
// many it found. A tag is refused because the decoders read a scalar's text
// only: "!!binary aGVsbQ==" would be the text "aGVsbQ==", "!!bool yes" false,
// where every other YAML reader sees bytes or true.
func (d *Decoder) anchors(n *yaml.Node, key string, found int) int {
	if found >= maxAnchorFindings {
		return found
	}
	if n.Anchor != "" || n.Kind == yaml.AliasNode {
		d.at(n, key, "YAML anchors and aliases are not supported")
		return found + 1
	}
	if n.Style&yaml.TaggedStyle != 0 {
		d.at(n, key, "YAML tags (%s) are not supported: write the value itself (quoted, for a string)", n.ShortTag())
		return found + 1
	}
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			found = d.anchors(n.Content[i], key, found)
			found = d.anchors(n.Content[i+1], n.Content[i].Value, found)
		}
		return found
	}
	for _, c := range n.Content {
		found = d.anchors(c, key, found)
	}
	return found
}
