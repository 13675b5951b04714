package recipe

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/updeb/updeb/internal/yamlfile"
)

// findings collects the positioned problems of one recipe file (load, lint
// and resolve all add to it), and its warnings: what lint shows without
// refusing the recipe.
type findings struct {
	file string
	yamlfile.Decoder
	// unpinned lets a source have no digest at all (LoadOptions.AllowUnpinned).
	unpinned bool
	warnings []Finding
	// lintFragments: read and check each maintainer-script fragment (Load).
	lintFragments bool
	// source is the recipe's text, for positions inside a block scalar.
	source []byte
}

func (f *findings) at(n *yaml.Node, format string, args ...any) { f.At(n, format, args...) }

// warn records a warning at n's position, once (resolve runs for every
// architecture).
func (f *findings) warn(n *yaml.Node, format string, args ...any) {
	w := Finding{File: f.file, Message: yamlfile.ClipMessage(fmt.Sprintf(format, args...))}
	if n != nil && n.Line > 0 {
		w.Line, w.Col = n.Line, max(n.Column, 1)
	}
	if !slices.Contains(f.warnings, w) {
		f.warnings = append(f.warnings, w)
	}
}

// blockLine is the position of line i (from 0) of the literal block scalar
// n (description: |), where lint can name the line itself: its first
// character. Any other node (a folded or one-line value, whose lines are
// not the file's) is itself.
func (f *findings) blockLine(n *yaml.Node, i int) *yaml.Node {
	if n == nil || n.Style&yaml.LiteralStyle == 0 || n.Line <= 0 {
		return n
	}
	lines := strings.Split(string(f.source), "\n")
	l := n.Line + 1 + i // the text starts on the line after "|"
	if l > len(lines) {
		return n
	}
	text := lines[l-1]
	return &yaml.Node{Line: l, Column: len(text) - len(strings.TrimLeft(text, " ")) + 1}
}

// because records a finding that callers can tell by cause (errors.Is).
func (f *findings) because(cause error, n *yaml.Node, format string, args ...any) {
	f.Because(cause, n, format, args...)
}

// err returns the sorted, de-duplicated findings as an *Error, or nil.
func (f *findings) err() error {
	f.File = f.file
	if f.Len() == 0 {
		return nil
	}
	return &Error{Findings: f.Findings()}
}

// decoder walks a recipe's yaml.Node tree (with yamlfile.Decoder's methods)
// so that every problem keeps its line and column, and decoding goes on after
// the first problem.
type decoder struct {
	*findings
}

type field struct {
	required bool
	decode   func(v *yaml.Node)
}

// mapping decodes the keys of a mapping node through fields: unknown keys,
// duplicate keys and missing required keys are findings. what names the
// mapping in messages ("source", "package helm", ...).
func (d *decoder) mapping(n *yaml.Node, what string, fields map[string]field) bool {
	fs := make(map[string]yamlfile.Field, len(fields))
	for name, f := range fields {
		fs[name] = yamlfile.Field{Required: f.required, Decode: f.decode}
	}
	return d.Mapping(n, what, fs)
}

var (
	valueOf = yamlfile.ValueOf
	keyOf   = yamlfile.KeyOf
)
