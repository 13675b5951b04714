package recipe

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// decoder walks a yaml.Node tree by hand so that every problem keeps its
// line and column, and so that decoding goes on after the first problem.
type decoder struct {
	*findings
}

// kindName names what a node is, for "expected X, found Y" messages.
func kindName(n *yaml.Node) string {
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

type field struct {
	required bool
	decode   func(v *yaml.Node)
}

// mapping decodes the keys of a mapping node through fields: unknown keys,
// duplicate keys and missing required keys are findings. what names the
// mapping in messages ("source", "package helm", ...).
func (d *decoder) mapping(n *yaml.Node, what string, fields map[string]field) bool {
	if n.Kind != yaml.MappingNode {
		d.at(n, "%s: expected a mapping, found %s", what, kindName(n))
		return false
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.at(k, "%s: keys must be plain strings, found %s", what, kindName(k))
			continue
		}
		f, ok := fields[k.Value]
		if !ok {
			d.at(k, "%s: unknown field %q (known: %s)", what, k.Value, known(fields))
			continue
		}
		if seen[k.Value] {
			d.at(k, "%s: field %q given twice", what, k.Value)
			continue
		}
		seen[k.Value] = true
		if v.Kind == yaml.AliasNode || v.Anchor != "" {
			d.at(v, "%s: YAML anchors and aliases are not supported", k.Value)
			continue
		}
		f.decode(v)
	}
	var missing []string
	for name, f := range fields {
		if f.required && !seen[name] {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		d.at(n, "%s: missing required field %s", what, strings.Join(quoteAll(missing), ", "))
	}
	return true
}

func known(fields map[string]field) string {
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = strconv.Quote(x)
	}
	return out
}

// str decodes a scalar as its literal text (so "version: 1.10" stays "1.10").
func (d *decoder) str(n *yaml.Node, name string, dst *string) bool {
	if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" || n.ShortTag() == "!!bool" {
		d.at(n, "%s: expected a string, found %s", name, kindName(n))
		return false
	}
	*dst = n.Value
	return true
}

// nonEmpty is str that also refuses an empty or blank value.
func (d *decoder) nonEmpty(n *yaml.Node, name string, dst *string) bool {
	if !d.str(n, name, dst) {
		return false
	}
	if strings.TrimSpace(*dst) == "" {
		d.at(n, "%s: must not be empty", name)
		return false
	}
	return true
}

func (d *decoder) boolean(n *yaml.Node, name string, dst *bool) bool {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
		d.at(n, "%s: expected true or false, found %s", name, kindName(n))
		return false
	}
	*dst = n.Value == "true" || n.Value == "True" || n.Value == "TRUE"
	return true
}

func (d *decoder) integer(n *yaml.Node, name string, dst *int) bool {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!int" {
		if v, err := strconv.Atoi(n.Value); err == nil {
			*dst = v
			return true
		}
	}
	d.at(n, "%s: expected an integer, found %s", name, kindName(n))
	return false
}

// list decodes a sequence, calling each for every element.
func (d *decoder) list(n *yaml.Node, name string, each func(i int, v *yaml.Node)) bool {
	if n.Kind != yaml.SequenceNode {
		d.at(n, "%s: expected a list, found %s", name, kindName(n))
		return false
	}
	for i, v := range n.Content {
		if v.Kind == yaml.AliasNode || v.Anchor != "" {
			d.at(v, "%s: YAML anchors and aliases are not supported", name)
			continue
		}
		each(i, v)
	}
	return true
}

func (d *decoder) strList(n *yaml.Node, name string, dst *[]string) {
	d.list(n, name, func(i int, v *yaml.Node) {
		var s string
		if d.nonEmpty(v, fmt.Sprintf("%s[%d]", name, i), &s) {
			*dst = append(*dst, s)
		}
	})
}

// pairs decodes a mapping of string keys to nodes, keeping order.
func (d *decoder) pairs(n *yaml.Node, name string, each func(k, v *yaml.Node)) bool {
	if n.Kind != yaml.MappingNode {
		d.at(n, "%s: expected a mapping, found %s", name, kindName(n))
		return false
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.ShortTag() == "!!null" {
			d.at(k, "%s: keys must be plain strings, found %s", name, kindName(k))
			continue
		}
		if seen[k.Value] {
			d.at(k, "%s: key %q given twice", name, k.Value)
			continue
		}
		seen[k.Value] = true
		if v.Kind == yaml.AliasNode || v.Anchor != "" {
			d.at(v, "%s: YAML anchors and aliases are not supported", name)
			continue
		}
		each(k, v)
	}
	return true
}

// valueOf returns the value node of key in mapping n, or n itself.
func valueOf(n *yaml.Node, key string) *yaml.Node {
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

// keyOf returns the key node of key in mapping n, or n itself.
func keyOf(n *yaml.Node, key string) *yaml.Node {
	if n != nil && n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				return n.Content[i]
			}
		}
	}
	return n
}
