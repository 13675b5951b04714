package yamlfile

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"

	"go.yaml.in/yaml/v3"
)

// A loader's JSON Schema is not written beside the loader: Describe runs the
// loader's own decoding code in a schema run, where every decoding method
// records what it accepts instead of reading a document:
//
//   - each value is decoded once per kind of YAML node (null, scalar, list,
//     mapping) from a placeholder node; the kinds whose run a typed method
//     accepted (Map, List, Str, NonEmpty, Int, Bool, or an explicit Describe)
//     make the value's schema, one type or "anyOf";
//   - Map records a mapping's keys, which are required and that no other key
//     is allowed (an open mapping: the schema of its values, decoded with the
//     key placeholder "x"); List records its elements' schema;
//   - checks of values (a finding about a value the loader read) record
//     nothing: a check a schema can say (a pattern, an enum, a range) the
//     loader states beside it with Describe, which is a no-op when decoding a
//     file.
//
// So the keys, their kinds and which are required come from the decoding code
// itself, and a loader that gains a key gains it in its schema.

// stringTypes are what Str accepts: any scalar but null and booleans, read
// as its text (version: 1.10 is "1.10"); a schema says string or number.
var stringTypes = []string{"string", "number"}

// Schema is one node of a JSON Schema (draft-07), as a schema run writes it.
type Schema struct {
	// The document's own keywords (the root only).
	SchemaURI   string `json:"$schema,omitempty"`
	ID          string `json:"$id,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`

	Type      []string `json:"-"` // written as "type": one name, or a list
	Enum      []string `json:"enum,omitempty"`
	Pattern   string   `json:"pattern,omitempty"`
	MinLength int      `json:"minLength,omitempty"`
	Minimum   *int64   `json:"minimum,omitempty"`
	Maximum   *int64   `json:"maximum,omitempty"`

	Properties map[string]*Schema `json:"properties,omitempty"`
	Required   []string           `json:"required,omitempty"`
	// Closed refuses keys beyond Properties ("additionalProperties": false);
	// Values, for an open mapping, is the schema of every value.
	Closed        bool    `json:"-"`
	Values        *Schema `json:"-"`
	PropertyNames *Schema `json:"propertyNames,omitempty"`
	MinProperties int     `json:"minProperties,omitempty"`

	Items    *Schema `json:"items,omitempty"`
	MinItems int     `json:"minItems,omitempty"`

	AnyOf []*Schema `json:"anyOf,omitempty"`
}

// Int64 is a pointer to n, for Minimum and Maximum.
func Int64(n int64) *int64 { return &n }

// MarshalJSON writes the schema with "type" as one name or a list and
// "additionalProperties" as false or a schema; map keys are sorted, so the
// same loader always gives the same bytes.
func (s *Schema) MarshalJSON() ([]byte, error) {
	type plain Schema
	b, err := json.Marshal((*plain)(s))
	if err != nil {
		return nil, err
	}
	extra := map[string]any{}
	switch len(s.Type) {
	case 0:
	case 1:
		extra["type"] = s.Type[0]
	default:
		extra["type"] = s.Type
	}
	switch {
	case s.Closed:
		extra["additionalProperties"] = false
	case s.Values != nil:
		extra["additionalProperties"] = s.Values
	}
	if len(extra) == 0 {
		return b, nil
	}
	e, err := json.Marshal(extra)
	if err != nil {
		return nil, err
	}
	if bytes.Equal(b, []byte("{}")) {
		return e, nil
	}
	return append(append(b[:len(b)-1], ','), e[1:]...), nil
}

// Describe runs decode, a loader's decoding of a whole document (the code it
// runs on a file), as a schema run, and returns the schema of the documents
// it accepts.
func Describe(decode func(d *Decoder, top *yaml.Node)) *Schema {
	d := &Decoder{desc: &describer{schemas: map[*yaml.Node]*Schema{}, refused: map[*yaml.Node]bool{}}}
	return d.desc.value(func(n *yaml.Node) { decode(d, n) })
}

// Describing reports whether d is in a schema run: a loader whose decoding
// of a value waits until the whole file is read (it keeps the node, and
// decodes it later) decodes it at once in a schema run, where no later comes.
func (d *Decoder) Describing() bool { return d.desc != nil }

// Describe states, in a schema run, what the loader accepts at n beside what
// its decoding methods record: a pattern or enum its own check applies, a
// range, or the whole schema of a value it decodes without them. s is merged
// into n's schema; the alternatives of s.AnyOf that fit n's kind of node are
// added to it. When decoding a file it does nothing. It reports whether this
// is a schema run, so that a decoding method can say what it accepts and
// return: `if d.Describe(n, s) { return }`.
func (d *Decoder) Describe(n *yaml.Node, s Schema) bool {
	if d.desc == nil {
		return false
	}
	d.desc.merge(n, s)
	return true
}

// describer is the state of a schema run.
type describer struct {
	schemas map[*yaml.Node]*Schema // each placeholder's schema in its run
	refused map[*yaml.Node]bool    // placeholders a typed method refused
}

// kindOf names a node's kind as JSON Schema types do.
func kindOf(n *yaml.Node) string {
	switch {
	case n.Kind == yaml.MappingNode:
		return "object"
	case n.Kind == yaml.SequenceNode:
		return "array"
	case n.ShortTag() == "!!null":
		return "null"
	}
	return "scalar"
}

// fits reports whether a schema of the given types may describe a node of
// kind k.
func fits(types []string, k string) bool {
	for _, t := range types {
		switch t {
		case "string", "number", "integer", "boolean":
			if k == "scalar" {
				return true
			}
		default:
			if t == k {
				return true
			}
		}
	}
	return false
}

// placeholders are the nodes a value is decoded from, one per kind.
func placeholders() []*yaml.Node {
	return []*yaml.Node{
		{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"},
		{Kind: yaml.ScalarNode, Tag: "!!str"},
		{Kind: yaml.SequenceNode, Tag: "!!seq"},
		{Kind: yaml.MappingNode, Tag: "!!map"},
	}
}

// keyPlaceholder is an open mapping's key in a schema run.
var keyPlaceholder = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "x"}

// value describes the values decode accepts, one run per kind of node.
func (ds *describer) value(decode func(n *yaml.Node)) *Schema {
	var accepted []*Schema
	for _, ph := range placeholders() {
		s := &Schema{}
		ds.schemas[ph] = s
		decode(ph)
		if !ds.refused[ph] && (len(s.Type) > 0 || len(s.AnyOf) > 0) {
			accepted = append(accepted, s)
		}
	}
	return union(accepted)
}

// union is one schema for values that may take any of the accepted forms.
func union(forms []*Schema) *Schema {
	var out []*Schema
	seen := map[string]bool{}
	for _, f := range forms {
		if len(f.AnyOf) > 0 && len(f.Type) == 0 && f.Pattern == "" && len(f.Enum) == 0 {
			out = append(out, f.AnyOf...) // already a union
			continue
		}
		out = append(out, f)
	}
	var uniq []*Schema
	for _, f := range out {
		b, _ := json.Marshal(f)
		if !seen[string(b)] {
			seen[string(b)] = true
			uniq = append(uniq, f)
		}
	}
	switch len(uniq) {
	case 0:
		return &Schema{} // decode accepts nothing it can say: anything
	case 1:
		return uniq[0]
	}
	// null beside one other form: a type list, not an anyOf; but not beside
	// an enum, which would refuse the null the type list allows.
	if len(uniq) == 2 {
		for i, f := range uniq {
			other := uniq[1-i]
			if slices.Equal(f.Type, []string{"null"}) && len(other.Type) > 0 && len(other.AnyOf) == 0 && other.Enum == nil {
				o := *other
				o.Type = append([]string{"null"}, other.Type...)
				return &o
			}
		}
	}
	return &Schema{AnyOf: uniq}
}

// schema is n's schema in its run; a node that is no placeholder (a loader
// decoding a node of its own) gets one that is thrown away.
func (ds *describer) schema(n *yaml.Node) *Schema {
	if s, ok := ds.schemas[n]; ok {
		return s
	}
	return &Schema{}
}

// merge adds s to n's schema (see Decoder.Describe).
func (ds *describer) merge(n *yaml.Node, s Schema) {
	t := ds.schema(n)
	k := kindOf(n)
	if len(s.Type) > 0 && !fits(s.Type, k) {
		ds.refused[n] = true
		return
	}
	for _, alt := range s.AnyOf {
		if fits(alt.Type, k) {
			t.AnyOf = append(t.AnyOf, alt)
		}
	}
	s.AnyOf = nil
	refine(t, &s)
}

// refine adds what s says to t: s's type, checks and nested schemas
// (Items, Properties) replace or refine t's.
func refine(t, s *Schema) {
	if len(s.Type) > 0 {
		t.Type = s.Type
	}
	if s.Enum != nil {
		t.Enum = s.Enum
	}
	if s.Pattern != "" {
		t.Pattern = s.Pattern
	}
	if s.MinLength > 0 {
		t.MinLength = s.MinLength
	}
	if s.Minimum != nil {
		t.Minimum = s.Minimum
	}
	if s.Maximum != nil {
		t.Maximum = s.Maximum
	}
	if s.Required != nil {
		t.Required = append(t.Required, s.Required...)
		sort.Strings(t.Required)
		t.Required = slices.Compact(t.Required)
	}
	if s.PropertyNames != nil {
		t.PropertyNames = s.PropertyNames
	}
	if s.MinItems > 0 {
		t.MinItems = s.MinItems
	}
	if s.MinProperties > 0 {
		t.MinProperties = s.MinProperties
	}
	if s.Description != "" {
		t.Description = s.Description
	}
	switch {
	case s.Items == nil:
	case t.Items == nil:
		t.Items = s.Items
	default:
		refine(t.Items, s.Items)
	}
	for name, ps := range s.Properties {
		if t.Properties == nil {
			t.Properties = map[string]*Schema{}
		}
		if t.Properties[name] == nil {
			t.Properties[name] = ps
		} else {
			refine(t.Properties[name], ps)
		}
	}
	switch {
	case s.Values == nil:
	case t.Values == nil:
		t.Values = s.Values
	default:
		refine(t.Values, s.Values)
	}
}

// mapping is Map in a schema run.
func (ds *describer) mapping(n *yaml.Node, m Map) bool {
	if n.Kind != yaml.MappingNode {
		ds.refused[n] = true
		return false
	}
	s := ds.schema(n)
	s.Type = []string{"object"}
	if m.Fields == nil {
		s.Values = ds.value(func(v *yaml.Node) { m.Each(keyPlaceholder, v) })
		return true
	}
	s.Properties = map[string]*Schema{}
	s.Closed = true
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range m.Fields {
			if !yield(k) {
				return
			}
		}
	}) {
		f := m.Fields[name]
		s.Properties[name] = ds.value(f.Decode)
		if f.Required {
			s.Required = append(s.Required, name)
		}
	}
	return true
}

// list is List in a schema run.
func (ds *describer) list(n *yaml.Node, each func(i int, v *yaml.Node)) bool {
	if n.Kind != yaml.SequenceNode {
		ds.refused[n] = true
		return false
	}
	s := ds.schema(n)
	s.Type = []string{"array"}
	items := ds.value(func(v *yaml.Node) { each(0, v) })
	if s.Items != nil {
		refine(items, s.Items) // what the loader stated before the list was read
	}
	s.Items = items
	return true
}
