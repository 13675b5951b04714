// Package control reads and writes Debian control data (deb822 paragraphs), as
// used by DEBIAN/control, apt's Packages and Release files. A Paragraph keeps its
// fields in order; writing folds multi-line values the way dpkg expects.
//
// The contract: field names are matched case-insensitively, as dpkg does, and
// written as given; a parsed paragraph written again gives the same fields
// and values (continuation lines fold with one space, an empty line is ".");
// every parse error wraps ErrSyntax or names the input and line
// ("name:LINE: message"); a line is at most 16 MiB. WriteTo writes what it is
// given: check values with ValidateFieldName and ValidateValue first.
package control

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
)

// ErrSyntax is wrapped by every parse error.
var ErrSyntax = errors.New("control: syntax error")

// Field is one "Name: value" pair. A multi-line value keeps its lines separated
// by "\n" without the leading space of continuation lines; an empty line inside
// a value is stored as ".", exactly as deb822 writes it.
type Field struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Paragraph is an ordered list of fields.
type Paragraph struct {
	Fields []Field `json:"fields"`
}

// equalFold compares field names; a variable so that tests can count the
// comparisons a parse makes.
var equalFold = strings.EqualFold

// Get returns the value of the named field (case-insensitive) and whether it exists.
func (p *Paragraph) Get(name string) (string, bool) {
	for _, f := range p.Fields {
		if equalFold(f.Name, name) {
			return f.Value, true
		}
	}
	return "", false
}

// Value returns the named field's value, or "" when it is absent.
func (p *Paragraph) Value(name string) string {
	v, _ := p.Get(name)
	return v
}

// Set replaces the named field's value in place, or appends the field.
func (p *Paragraph) Set(name, value string) {
	for i, f := range p.Fields {
		if strings.EqualFold(f.Name, name) {
			p.Fields[i].Value = value
			return
		}
	}
	p.Fields = append(p.Fields, Field{Name: name, Value: value})
}

// Delete removes the named field if present.
func (p *Paragraph) Delete(name string) {
	out := p.Fields[:0]
	for _, f := range p.Fields {
		if !strings.EqualFold(f.Name, name) {
			out = append(out, f)
		}
	}
	p.Fields = out
}

// ValidateFieldName reports whether name is a legal deb822 field name.
func ValidateFieldName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty field name", ErrSyntax)
	}
	if name[0] == '#' || name[0] == '-' {
		return fmt.Errorf("%w: field name %q must not start with %q", ErrSyntax, name, name[0])
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c <= 32 || c >= 127 || c == ':' {
			return fmt.Errorf("%w: field name %q contains %q", ErrSyntax, name, c)
		}
	}
	return nil
}

// ValidateValue checks that a value can be written: single-line fields must not
// contain a newline; in multi-line values no line may be empty except by the
// "." convention, and the first line (the value after "Name:") may be empty only
// for fields such as Description's extended part or Conffiles-like lists.
func ValidateValue(name, value string, multiline bool) error {
	if strings.ContainsAny(value, "\r\x00") {
		return fmt.Errorf("%w: field %s: value %q contains a carriage return or NUL", ErrSyntax, name, value)
	}
	if !multiline && strings.Contains(value, "\n") {
		return fmt.Errorf("%w: field %s: value %q must be a single line", ErrSyntax, name, value)
	}
	for i, line := range strings.Split(value, "\n") {
		if i > 0 && strings.TrimSpace(line) == "" {
			return fmt.Errorf("%w: field %s: line %d of value is empty (write \".\" for an empty line)", ErrSyntax, name, i+1)
		}
	}
	return nil
}

// WriteTo writes the paragraph without a trailing blank line. Multi-line values
// are folded: every continuation line is prefixed with one space.
func (p *Paragraph) WriteTo(w io.Writer) (int64, error) {
	var b bytes.Buffer
	for _, f := range p.Fields {
		b.WriteString(f.Name)
		b.WriteByte(':')
		lines := strings.Split(f.Value, "\n")
		if lines[0] != "" {
			b.WriteByte(' ')
			b.WriteString(lines[0])
		}
		b.WriteByte('\n')
		for _, l := range lines[1:] {
			b.WriteByte(' ')
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.WriteTo(w)
}

// Bytes returns the paragraph as WriteTo writes it.
func (p *Paragraph) Bytes() []byte {
	var b bytes.Buffer
	p.WriteTo(&b) //nolint:errcheck // bytes.Buffer does not fail
	return b.Bytes()
}

// Parse reads every paragraph from r. name is used in error messages
// ("name:LINE: message"). Comment lines (#) are skipped, as dpkg does.
// Its time and memory grow with the input's size, however many fields a
// paragraph has or lines a value has.
func Parse(r io.Reader, name string) ([]Paragraph, error) {
	var (
		out   []Paragraph
		cur   *Paragraph
		line  int
		value folded
		names = map[string]bool{} // the current paragraph's field names, lower case
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), maxLine)
	for sc.Scan() {
		line++
		text := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(text) == "" {
			value.end()
			cur = nil
			continue
		}
		if text[0] == '#' {
			continue
		}
		if text[0] == ' ' || text[0] == '\t' {
			if cur == nil || len(cur.Fields) == 0 {
				return nil, fmt.Errorf("%w: %s:%d: continuation line without a field", ErrSyntax, name, line)
			}
			value.add(strings.TrimLeft(text, " \t"))
			continue
		}
		key, v, ok := strings.Cut(text, ":")
		if !ok {
			return nil, fmt.Errorf("%w: %s:%d: expected \"Field: value\", found %q", ErrSyntax, name, line, text)
		}
		if err := ValidateFieldName(key); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		value.end()
		if cur == nil {
			out = append(out, Paragraph{})
			cur = &out[len(out)-1]
			clear(names)
		}
		lower := strings.ToLower(key)
		if names[lower] {
			return nil, fmt.Errorf("%w: %s:%d: duplicate field %q", ErrSyntax, name, line, key)
		}
		names[lower] = true
		cur.Fields = append(cur.Fields, Field{Name: key, Value: strings.TrimSpace(v)})
		value.f = &cur.Fields[len(cur.Fields)-1]
	}
	// The line being read when the scanner stopped is the next one.
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return nil, fmt.Errorf("%w: %s:%d: line longer than %d MiB", ErrSyntax, name, line+1, maxLine>>20)
	} else if err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, line+1, err)
	}
	value.end()
	return out, nil
}

// maxLine is the longest line Parse reads (see the package comment).
const maxLine = 16 << 20

// folded gathers the continuation lines of the field being read (f), and
// joins them to its value once the field ends: appending each line to the
// value would copy the value once a line, which a value of a million short
// lines turns into terabytes.
type folded struct {
	f     *Field
	lines []string
}

func (v *folded) add(line string) { v.lines = append(v.lines, line) }

// end adds the gathered lines to f's value, "\n" before each.
func (v *folded) end() {
	if v.f != nil && len(v.lines) > 0 {
		v.f.Value += "\n" + strings.Join(v.lines, "\n")
	}
	clear(v.lines)
	v.f, v.lines = nil, v.lines[:0]
}

// ParseOne parses exactly one paragraph (a DEBIAN/control file).
func ParseOne(r io.Reader, name string) (Paragraph, error) {
	ps, err := Parse(r, name)
	if err != nil {
		return Paragraph{}, err
	}
	if len(ps) != 1 {
		return Paragraph{}, fmt.Errorf("%w: %s: expected one paragraph, found %d", ErrSyntax, name, len(ps))
	}
	return ps[0], nil
}
