package compat

import (
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/updeb/updeb/internal/yamlfile"
)

// SyncVersions keeps a release set file in step with a recipe bump: in data
// (the file's content; name for messages), every version written out for a
// component that match selects and equal to from (a plain value, or an end of
// a range) becomes to. Each is rewritten in place, in its quoting style;
// every other byte (comments, layout, recipe:NAME values) is kept. It returns
// the new content and how many values changed; the new content must read as
// exactly those values and otherwise the old file (yamlfile.Verify), and
// still parse as a release set file. Write it with yamlfile.Rewrite.
func SyncVersions(name string, data []byte, match func(component string) bool, from, to string) ([]byte, int, error) {
	return syncValues(name, data, func(comp, v string) (string, bool) { return to, match(comp) && sameVersion(v, from) }, fmt.Sprintf("setting %s to %s", from, to))
}

// sameVersion reports whether the value v is version, or another spelling
// of it (v1.36.0 for 1.36.0).
func sameVersion(v, version string) bool {
	return v == version || (debianOf(v) != "" && debianOf(v) == debianOf(version))
}

// Bump is one recipe bump SyncBumps follows: Component's versions From
// become To.
type Bump struct{ Component, From, To string }

// SyncBumps is SyncBump for each of bumps in turn, read and written once: a
// value changes as the bumps of its component (none of them kubernetes),
// one after the other, change it. Each bump on its own must be one
// SyncBump takes.
func SyncBumps(name string, data []byte, bumps []Bump) ([]byte, int, error) {
	by := map[string][]Bump{}
	for _, b := range bumps {
		by[b.Component] = append(by[b.Component], b)
	}
	return syncValues(name, data, func(comp, v string) (string, bool) {
		out := v
		for _, b := range by[comp] {
			if FollowsBump(out, b.From, b.To) {
				out = b.To
			}
		}
		return out, out != v
	}, fmt.Sprintf("%d bumps", len(bumps)))
}

// syncValues rewrites, in a release set file, each version written out (a
// plain value, or an end of a range) that newValue changes; what says what
// it does, for the message of a file it leaves unreadable.
func syncValues(name string, data []byte, newValue func(comp, value string) (string, bool), what string) ([]byte, int, error) {
	if _, err := ParseReleaseSets(name, data); err != nil {
		return nil, 0, err
	}
	d := &yamlfile.Decoder{File: name}
	top := d.Document(data, yamlfile.Options{What: "release set file"})
	if err := d.Err(); err != nil {
		return nil, 0, err
	}
	var edits []yamlfile.Edit
	for _, set := range valueOf(top, "sets").Content {
		comps := valueOf(set, "components")
		for i := 0; i+1 < len(comps.Content); i += 2 {
			k, v := comps.Content[i], comps.Content[i+1]
			ends := []*yaml.Node{v}
			if v.Kind == yaml.MappingNode {
				ends = []*yaml.Node{valueOf(v, "from"), valueOf(v, "to")}
			}
			for _, e := range ends {
				if e.Kind != yaml.ScalarNode {
					continue
				}
				if to, ok := newValue(k.Value, e.Value); ok {
					edits = append(edits, yamlfile.Edit{Node: e, Value: to})
				}
			}
		}
	}
	if len(edits) == 0 {
		return data, 0, nil
	}
	out, err := yamlfile.Splice(name, data, edits)
	if err != nil {
		return nil, 0, err
	}
	changes, err := yamlfile.ChangesOf(top, edits)
	if err != nil {
		return nil, 0, err
	}
	if err := yamlfile.Verify(name, data, out, changes); err != nil {
		return nil, 0, err
	}
	if _, err := ParseReleaseSets(name, out); err != nil {
		return nil, 0, fmt.Errorf("%s after %s (not written): %w", name, what, err)
	}
	return out, len(edits), nil
}

// valueOf is the value of key in mapping m, or an empty node.
func valueOf(m *yaml.Node, key string) *yaml.Node {
	if v := yamlfile.ValueOf(m, key); v != m {
		return v
	}
	return &yaml.Node{}
}
