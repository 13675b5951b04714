package yamlfile

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// at records a finding whose message starts with "what: " (nothing when what
// is empty).
func (d *Decoder) at(n *yaml.Node, what, format string, args ...any) {
	if what != "" {
		format = "%s: " + format
		args = append([]any{what}, args...)
	}
	d.At(n, format, args...)
}

// KindName names what a node is, for "expected X, found Y" messages.
func KindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.ScalarNode:
		if n.ShortTag() == "!!null" {
			return "null"
		}
		return strconv.Quote(n.Value)
	}
	return "a document"
}

// Field is one key a mapping may hold.
type Field struct {
	Required bool
	Decode   func(v *yaml.Node)
}

// Map describes a mapping for Decoder.Map.
type Map struct {
	// What names the mapping: messages start "What: " ("" for none).
	What string
	// Fields are the keys the mapping may hold; any other key is a finding.
	// With Fields nil the mapping is open: every key goes to Each.
	Fields map[string]Field
	Each   func(k, v *yaml.Node)
	// Unknown and Twice, when set, phrase the findings about an unknown key
	// and a key given again (first is its first occurrence). By default:
	// `unknown field "K" (known: A, B)` and `field "K" given twice` (`key "K"
	// given twice` in an open mapping), after "What: ".
	Unknown func(k *yaml.Node) string
	Twice   func(k, first *yaml.Node) string
}

// Map decodes mapping n as m says: keys must be plain strings, given once,
// known (unless m is open) and, for required fields, present. It reports false
// when n is not a mapping (a finding too).
func (d *Decoder) Map(n *yaml.Node, m Map) bool {
	if d.desc != nil {
		return d.desc.mapping(n, m)
	}
	if n.Kind != yaml.MappingNode {
		d.at(n, m.What, "expected a mapping, found %s", KindName(n))
		return false
	}
	first := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.ShortTag() == "!!null" {
			d.at(k, m.What, "keys must be plain strings, found %s", KindName(k))
			continue
		}
		f, known := m.Fields[k.Value]
		if m.Fields != nil && !known {
			if m.Unknown != nil {
				d.At(k, "%s", m.Unknown(k))
			} else {
				d.at(k, m.What, "unknown field %q (known: %s)", k.Value, knownNames(m.Fields))
			}
			continue
		}
		if prev, dup := first[k.Value]; dup {
			switch {
			case m.Twice != nil:
				d.At(k, "%s", m.Twice(k, prev))
			case m.Fields == nil:
				d.at(k, m.What, "key %q given twice", k.Value)
			default:
				d.at(k, m.What, "field %q given twice", k.Value)
			}
			continue
		}
		first[k.Value] = k
		if m.Fields == nil {
			m.Each(k, v)
		} else {
			f.Decode(v)
		}
	}
	var missing []string
	for name, f := range m.Fields {
		if _, seen := first[name]; f.Required && !seen {
			missing = append(missing, strconv.Quote(name))
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		d.at(n, m.What, "missing required field %s", strings.Join(missing, ", "))
	}
	return true
}

// Mapping decodes a mapping of known fields (see Map); what names it.
func (d *Decoder) Mapping(n *yaml.Node, what string, fields map[string]Field) bool {
	return d.Map(n, Map{What: what, Fields: fields})
}

// Pairs decodes an open mapping of string keys, keeping order; name names it.
func (d *Decoder) Pairs(n *yaml.Node, name string, each func(k, v *yaml.Node)) bool {
	return d.Map(n, Map{What: name, Each: each})
}

func knownNames(fields map[string]Field) string {
	names := slices.Sorted(maps.Keys(fields))
	return strings.Join(names, ", ")
}

// Str decodes a scalar as its literal text (so "version: 1.10" stays "1.10");
// null and true/false are refused.
func (d *Decoder) Str(n *yaml.Node, name string, dst *string) bool {
	if d.Describe(n, Schema{Type: stringTypes}) {
		return false
	}
	if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" || n.ShortTag() == "!!bool" {
		d.at(n, name, "expected a string, found %s", KindName(n))
		return false
	}
	*dst = n.Value
	return true
}

// NonEmpty is Str that also refuses an empty or blank value.
func (d *Decoder) NonEmpty(n *yaml.Node, name string, dst *string) bool {
	if d.Describe(n, Schema{Type: stringTypes, MinLength: 1}) {
		return false
	}
	if !d.Str(n, name, dst) {
		return false
	}
	if strings.TrimSpace(*dst) == "" {
		d.at(n, name, "must not be empty")
		return false
	}
	return true
}

// Bool decodes true or false.
func (d *Decoder) Bool(n *yaml.Node, name string, dst *bool) bool {
	if d.Describe(n, Schema{Type: []string{"boolean"}}) {
		return false
	}
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
		d.at(n, name, "expected true or false, found %s", KindName(n))
		return false
	}
	*dst = n.Value == "true" || n.Value == "True" || n.Value == "TRUE"
	return true
}

// LeadingZero explains what is wrong with an integer written with a
// leading zero ("010", "-08", "0_10"), or is "" for any other value (0, 0o10
// and 0x10 among them). yaml.v3 reads such a number as octal where its
// digits allow (010 is 8) and as a float where they do not (08); YAML 1.2
// and the JSON schemas read it as decimal. Nobody who writes parallel: 010
// means 8: it is refused rather than read either way.
func LeadingZero(n *yaml.Node) string {
	if n.Kind != yaml.ScalarNode || n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 ||
		!leadingZeroRE.MatchString(n.Value) {
		return ""
	}
	sign, digits := "", n.Value
	if digits[0] == '-' || digits[0] == '+' {
		sign, digits = digits[:1], digits[1:]
	}
	read := "as a float, not an integer"
	if v, err := strconv.ParseInt(sign+strings.ReplaceAll(digits, "_", ""), 8, 64); err == nil {
		read = fmt.Sprintf("as octal (%d)", v)
	}
	if digits = strings.TrimLeft(digits, "0_"); digits == "" {
		sign, digits = "", "0"
	}
	return fmt.Sprintf("%s has a leading zero, which YAML reads %s: write it without the leading zero (%s%s)", n.Value, read, sign, digits)
}

var leadingZeroRE = regexp.MustCompile(`^[-+]?0[0-9_]+$`)

// Int decodes a decimal integer that fits an int; one written with a
// leading zero is refused (LeadingZero).
func (d *Decoder) Int(n *yaml.Node, name string, dst *int) bool {
	if d.Describe(n, Schema{Type: []string{"integer"}}) {
		return false
	}
	if why := LeadingZero(n); why != "" {
		d.at(n, name, "%s", why)
		return false
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!int" {
		if v, err := strconv.Atoi(n.Value); err == nil {
			*dst = v
			return true
		}
		if v, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64); err == nil {
			d.at(n, name, "%s is written in another base than decimal, or with _: write it as %d", n.Value, v)
			return false
		}
	}
	d.at(n, name, "expected an integer, found %s", KindName(n))
	return false
}

// List decodes a sequence, calling each for every element.
func (d *Decoder) List(n *yaml.Node, name string, each func(i int, v *yaml.Node)) bool {
	if d.desc != nil {
		return d.desc.list(n, each)
	}
	if n.Kind != yaml.SequenceNode {
		d.at(n, name, "expected a list, found %s", KindName(n))
		return false
	}
	for i, v := range n.Content {
		each(i, v)
	}
	return true
}

// StrList decodes a list of non-empty strings, appending them to dst.
func (d *Decoder) StrList(n *yaml.Node, name string, dst *[]string) {
	d.List(n, name, func(i int, v *yaml.Node) {
		var s string
		if d.NonEmpty(v, fmt.Sprintf("%s[%d]", name, i), &s) {
			*dst = append(*dst, s)
		}
	})
}

// ValueOf returns the value node of key in mapping n, or n itself when n is
// not a mapping or has no such key (so that a finding still has a position).
func ValueOf(n *yaml.Node, key string) *yaml.Node {
	if n == nil {
		return nil
	}
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				return n.Content[i+1]
			}
		}
	}
	return n
}

// KeyOf returns the key node of key in mapping n, or n itself.
func KeyOf(n *yaml.Node, key string) *yaml.Node {
	if n != nil && n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				return n.Content[i]
			}
		}
	}
	return n
}
