package compatdata

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/updeb/updeb/internal/srcurl"
	"github.com/updeb/updeb/internal/supportdata"
	"github.com/updeb/updeb/internal/yamlfile"
	"github.com/updeb/updeb/pkg/termtext"
)

// ErrFile is wrapped by every error about a data file that does not parse.
var ErrFile = errors.New("compatdata: invalid data file")

// Bounds of a data file's content.
const (
	// MaxRows bounds the rows of a table (and its overrides): the largest,
	// Helm's, has about forty.
	MaxRows = 500
	// maxText bounds one text value (a CRI version, a reason, a URL).
	maxText = 300
)

// Parse reads a data file (the bundled copy, the state folder's refreshed
// copy or a recipes repository's data file), strictly (internal/yamlfile):
//
//	# Header comment: where the data comes from.
//	# As of: 2026-11-24T10:11:12Z
//	tables:
//	  helm:
//	    source: [https://raw.githubusercontent.com/helm/helm-www/main/docs/topics/version_skew.mdx]
//	    as_of: 2026-11-24T10:11:12Z
//	    rows:
//	      - {helm: "4.2", kubernetes_min: "1.33", kubernetes_max: "1.36"}
//	    override:                     # the operator's rows, each with a reason
//	      - {helm: "4.3", kubernetes_min: "1.34", kubernetes_max: "1.37", reason: "..."}
//	  containerd: ...
//	endoflife:                        # a repository's data file only
//	  header: ["Source: ...", "As of: ..."]
//	  products: {kubernetes: [...], ...}   # as in internal/supportdata's eol.yaml
//
// A table the file lacks is nil (Load takes it from the bundled copy);
// unknown tables and fields, a key given twice, a row that does not hold
// together and an override without a reason are errors, every one reported
// as NAME:LINE:COL.
func Parse(name string, b []byte) (*Tables, error) {
	d := &yamlfile.Decoder{File: name}
	t := &Tables{Source: supportdata.Header(b), tables: map[string]*Table{}}
	switch asOf, ok, err := supportdata.AsOf(t.Source); {
	case err != nil:
		d.At(&yaml.Node{Line: 1, Column: 1}, "%v", err)
	case !ok:
		d.At(&yaml.Node{Line: 1, Column: 1}, "the header comment has no %q line", supportdata.AsOfLabel)
	default:
		t.AsOf = asOf
	}
	if top := d.Document(b, yamlfile.Options{What: "data file", Empty: `no "tables:"`}); top != nil {
		d.Mapping(top, "", map[string]yamlfile.Field{
			"tables":    {Required: true, Decode: func(v *yaml.Node) { decodeTables(d, v, t) }},
			"endoflife": {Decode: func(v *yaml.Node) { t.EOL = decodeEOL(d, v) }},
		})
	}
	if err := d.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFile, err)
	}
	return t, nil
}

func decodeTables(d *yamlfile.Decoder, n *yaml.Node, t *Tables) {
	fields := map[string]yamlfile.Field{}
	for _, s := range specs {
		fields[s.name] = yamlfile.Field{Decode: func(v *yaml.Node) { t.tables[s.name] = decodeTable(d, s, v) }}
	}
	d.Mapping(n, "tables", fields)
}

// decodeTable decodes {source: [URL...], as_of: TIME, rows: [...], override: [...]}.
func decodeTable(d *yamlfile.Decoder, s *spec, n *yaml.Node) *Table {
	tb := &Table{Name: s.name}
	d.Mapping(n, s.name, map[string]yamlfile.Field{
		"source": {Required: true, Decode: func(v *yaml.Node) {
			d.List(v, s.name+": source", func(_ int, v *yaml.Node) {
				var u string
				if d.Str(v, "source", &u) {
					if _, err := srcurl.Check(u); err != nil || len(u) > maxText {
						d.At(v, "%s: source %q: want an http:// or https:// URL", s.name, u)
					}
					tb.Sources = append(tb.Sources, u)
				}
			})
			if len(tb.Sources) == 0 && v.Kind == yaml.SequenceNode {
				d.At(v, "%s: source: name at least one URL", s.name)
			}
		}},
		"as_of": {Required: true, Decode: func(v *yaml.Node) {
			var text string
			if d.Str(v, "as_of", &text) {
				var err error
				if tb.AsOf, err = supportdata.ParseAsOf(text); err != nil {
					d.At(v, "%s: as_of: %v", s.name, err)
				}
			}
		}},
		"rows": {Required: true, Decode: func(v *yaml.Node) { tb.Rows = decodeRows(d, s, v, nil) }},
		"override": {Decode: func(v *yaml.Node) {
			var reasons []string
			rows := decodeRows(d, s, v, &reasons)
			for i, r := range rows {
				tb.Overrides = append(tb.Overrides, Override{Row: r, Reason: reasons[i]})
			}
		}},
	})
	tb.seal()
	return tb
}

// decodeRows decodes a list of rows, each key once; reasons, when not nil,
// makes them overrides: each needs a reason, appended in the rows' order.
func decodeRows(d *yamlfile.Decoder, s *spec, n *yaml.Node, reasons *[]string) []Row {
	what := s.name + " row"
	if reasons != nil {
		what = s.name + " override"
	}
	var out []Row
	first := map[string]int{}
	d.List(n, what+"s", func(i int, v *yaml.Node) {
		if i == MaxRows {
			d.At(v, "%s: more than %d rows", s.name, MaxRows)
		}
		if i >= MaxRows {
			return
		}
		rd := rowDecoder{d: d, what: what}
		extra := map[string]yamlfile.Field{}
		var reason string
		if reasons != nil {
			extra["reason"] = rd.text("reason", &reason, true)
		}
		before := d.Len()
		r := s.decode(rd, v, extra)
		if d.Len() > before {
			return
		}
		if err := r.check(); err != nil {
			d.At(v, "%s %q: %v", what, r.Key(), err)
			return
		}
		if line, dup := first[r.Key()]; dup {
			d.At(v, "%s %q: given twice (first at line %d)", what, r.Key(), line)
			return
		}
		first[r.Key()] = v.Line
		out = append(out, r)
		if reasons != nil {
			*reasons = append(*reasons, reason)
		}
	})
	return out
}

// rowDecoder decodes the fields of one row.
type rowDecoder struct {
	d    *yamlfile.Decoder
	what string
}

// mapping decodes a row's mapping: fields plus extra (an override's reason).
func (rd rowDecoder) mapping(n *yaml.Node, fields, extra map[string]yamlfile.Field) {
	for k, f := range extra {
		fields[k] = f
	}
	rd.d.Mapping(n, rd.what, fields)
}

// minor is a required MAJOR.MINOR field ("" allowed when optional).
func (rd rowDecoder) minor(name string, dst *string, optional bool) yamlfile.Field {
	return yamlfile.Field{Required: true, Decode: func(v *yaml.Node) {
		if !rd.d.Str(v, name, dst) || optional && *dst == "" {
			return
		}
		if _, ok := parseMinor(*dst); !ok {
			rd.d.At(v, "%s: %s %q is not MAJOR.MINOR", rd.what, name, *dst)
		}
	}}
}

// keyAndRange are the fields of a row keyed by a component's minor with a
// Kubernetes range: {KEY: MINOR, kubernetes_min: MINOR, kubernetes_max: MINOR}.
func (rd rowDecoder) keyAndRange(key string, dst *string, r *KubernetesRange) map[string]yamlfile.Field {
	return map[string]yamlfile.Field{key: rd.minor(key, dst, false),
		"kubernetes_min": rd.minor("kubernetes_min", &r.KubernetesMin, false),
		"kubernetes_max": rd.minor("kubernetes_max", &r.KubernetesMax, false)}
}

// minors is a required list of MAJOR.MINOR.
func (rd rowDecoder) minors(name string, dst *KubernetesList) yamlfile.Field {
	return yamlfile.Field{Required: true, Decode: func(v *yaml.Node) {
		rd.d.List(v, name, func(_ int, v *yaml.Node) {
			var s string
			if rd.d.Str(v, name, &s) {
				if _, ok := parseMinor(s); !ok {
					rd.d.At(v, "%s: %s %q is not MAJOR.MINOR", rd.what, name, s)
				}
				*dst = append(*dst, s)
			}
		})
	}}
}

// version is a required field that must match valid (want says what).
func (rd rowDecoder) version(name string, dst *string, valid func(string) bool, want string) yamlfile.Field {
	return yamlfile.Field{Required: true, Decode: func(v *yaml.Node) {
		if rd.d.Str(v, name, dst) && !valid(*dst) {
			rd.d.At(v, "%s: %s %q is not %s", rd.what, name, *dst, want)
		}
	}}
}

// text is a field of one line of at most maxText bytes, not empty when
// required.
func (rd rowDecoder) text(name string, dst *string, required bool) yamlfile.Field {
	return yamlfile.Field{Required: required, Decode: func(v *yaml.Node) {
		if !rd.d.Str(v, name, dst) {
			return
		}
		if err := checkText(*dst, required); err != nil {
			rd.d.At(v, "%s: %s: %v", rd.what, name, err)
		}
	}}
}

// checkText accepts one line of printable text of at most maxText bytes.
func checkText(s string, required bool) error {
	switch {
	case required && strings.TrimSpace(s) == "":
		return errors.New("empty: say why")
	case len(s) > maxText:
		return fmt.Errorf("longer than %d bytes", maxText)
	case !oneLine(s):
		return errors.New(notOneLine)
	}
	return nil
}

const notOneLine = "expected one line of text, without control characters, bidi overrides or zero-width characters"

// oneLine reports whether s is UTF-8 text without line breaks, escape
// sequences or other control characters, nor bidi overrides and other
// format characters (which make a line read otherwise than its bytes):
// safe to print on a terminal, as termtext.Escape leaves it.
func oneLine(s string) bool {
	return termtext.Escape(s) == s
}

// decodeEOL decodes {header: [LINE...], products: {PRODUCT: [CYCLE...]}}.
func decodeEOL(d *yamlfile.Decoder, n *yaml.Node) *supportdata.Data {
	var header []string
	var products map[string][]supportdata.Cycle
	var at *yaml.Node
	d.Mapping(n, "endoflife", map[string]yamlfile.Field{
		"header": {Required: true, Decode: func(v *yaml.Node) {
			at = v
			d.StrList(v, "endoflife: header", &header)
			for _, l := range v.Content { // printed in reports: no escape sequences
				if l.Kind == yaml.ScalarNode && !oneLine(l.Value) {
					d.At(l, "endoflife: header: %s", notOneLine)
				}
			}
		}},
		"products": {Required: true, Decode: func(v *yaml.Node) { products = supportdata.DecodeProducts(d, v) }},
	})
	if at == nil || products == nil {
		return nil
	}
	data, err := supportdata.New(strings.Join(header, "\n"), products)
	if err != nil {
		d.At(at, "endoflife: header: %v", err)
		return nil
	}
	if data.AsOf.IsZero() {
		d.At(at, "endoflife: header: no %q line", supportdata.AsOfLabel)
	}
	return data
}

// Encode writes the tables in the data file's format (Parse reads them back
// to the same tables): the header as "# " comment lines, the tables in the
// order of Names, rows newest first, then the end-of-life data when there is.
func Encode(t *Tables) []byte {
	var b bytes.Buffer
	for _, l := range strings.Split(t.Source, "\n") {
		b.WriteString(strings.TrimRight("# "+l, " ") + "\n")
	}
	b.WriteString("\ntables:\n")
	for i, s := range specs {
		tb := t.tables[s.name]
		if tb == nil {
			continue
		}
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "  %s:\n    source:\n", s.name)
		for _, u := range tb.Sources {
			fmt.Fprintf(&b, "      - %s\n", strconv.Quote(u))
		}
		fmt.Fprintf(&b, "    as_of: %s\n", strconv.Quote(supportdata.FormatAsOf(tb.AsOf)))
		rows := append([]Row(nil), tb.Rows...)
		sortRows(rows)
		if len(rows) == 0 {
			b.WriteString("    rows: []\n")
		} else {
			b.WriteString("    rows:\n")
		}
		for _, r := range rows {
			b.WriteString("      - " + flow(r.fields()) + "\n")
		}
		if len(tb.Overrides) > 0 {
			b.WriteString("    override:\n")
		}
		for _, o := range tb.Overrides {
			b.WriteString("      - " + flow(append(o.Row.fields(), field{"reason", o.Reason})) + "\n")
		}
	}
	if t.EOL != nil {
		b.WriteString("\nendoflife:\n  header:\n")
		for _, l := range strings.Split(t.EOL.Source, "\n") {
			b.WriteString("    - " + strconv.Quote(l) + "\n")
		}
		b.WriteString("  products:\n")
		b.Write(t.EOL.EncodeProducts("    "))
	}
	return b.Bytes()
}

// flow writes fields as a YAML flow mapping, every value double-quoted.
func flow(fs []field) string {
	parts := make([]string, 0, len(fs))
	for _, f := range fs {
		switch v := f.value.(type) {
		case string:
			parts = append(parts, f.name+": "+strconv.Quote(v))
		case []string:
			q := make([]string, len(v))
			for i, s := range v {
				q[i] = strconv.Quote(s)
			}
			parts = append(parts, f.name+": ["+strings.Join(q, ", ")+"]")
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
