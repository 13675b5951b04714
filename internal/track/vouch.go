package track

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/yamlfile"
	"github.com/updeb/updeb/pkg/digest"
)

// ErrUnvouched: nothing vouches for a source's bytes (no verified signature,
// no upstream checksum file that matches) and the operator gave neither its
// digests nor --trust-on-first-use. Bump pins nothing (exit 1).
var ErrUnvouched = errors.New("track: nothing vouches for a source")

// UnvouchedError lists the sources nothing vouched for, with the digests
// upstream's bytes have now, for the operator to compare with a value from
// elsewhere.
type UnvouchedError struct {
	Recipe, Version string
	Sources         []string // "SOURCE ARCH: ALG HEX ..." each
}

func (e *UnvouchedError) Error() string {
	return fmt.Sprintf("%s %s: nothing vouches for %d source file(s): no verified signature (OpenPGP or Sigstore) and no upstream checksum file that lists them; bump pins nothing it cannot vouch for:\n  %s",
		e.Recipe, e.Version, len(e.Sources), strings.Join(e.Sources, "\n  "))
}

func (e *UnvouchedError) Unwrap() error { return ErrUnvouched }

// How the operator vouched for a source's bytes when nothing upstream did.
const (
	byOperatorDigest  = "operator-digest"
	byTrustOnFirstUse = "trust-on-first-use"
)

// vouch decides whether the bytes fetched for source name on arch, whose
// digests are got, may be pinned, from by (what trust.Source found vouching
// for them) and the operator's options. Digests the operator gave must
// match whatever else vouches. A source nothing else vouches for is pinned
// only on the operator's digests or with TrustOnFirstUse, and then operator
// says which (byOperatorDigest or byTrustOnFirstUse). It returns the evidence
// to report, or a *digest.MismatchError when the operator's digest differs.
// Nothing vouched for at all is reported by the caller, for every source at
// once (unvouched true).
func vouch(name, arch string, got digest.Set, by []string, o BumpOptions) (evidence []string, operator string, unvouched bool, err error) {
	if want, ok := o.Operator[name][arch]; ok {
		for _, alg := range want.Algorithms() {
			if got[alg] != want[alg] {
				return nil, "", false, &digest.MismatchError{Subject: fmt.Sprintf("source %s (%s), against the digest given with --%s", name, arch, alg),
					Algorithm: alg, Want: want[alg], Got: got[alg]}
			}
		}
		evidence = append(slices.Clone(by), fmt.Sprintf("operator:%s", strings.Join(algNames(want), "+")))
		if len(by) == 0 {
			operator = byOperatorDigest
		}
		return evidence, operator, false, nil
	}
	switch {
	case slices.ContainsFunc(by, vouches):
		return by, "", false, nil
	case o.TrustOnFirstUse:
		return []string{byTrustOnFirstUse}, byTrustOnFirstUse, false, nil
	}
	return nil, "", true, nil
}

// vouches reports whether a piece of evidence (trust.Source's words) vouches
// for the bytes it came with. All do but an upstream checksum file fetched
// over plain http: whoever is on the path serves it along with the bytes
// (it was still cross-checked; a clearsigned one vouches by its signature,
// a piece of its own).
func vouches(evidence string) bool {
	return !strings.HasPrefix(evidence, "checksum-file:http://")
}

func algNames(s digest.Set) []string {
	var out []string
	for _, a := range s.Algorithms() {
		out = append(out, string(a))
	}
	return out
}

// describeDigests is "sha256 HEX sha512 HEX" for a message.
func describeDigests(s digest.Set) string {
	var parts []string
	for _, a := range s.Algorithms() {
		parts = append(parts, string(a)+" "+s[a])
	}
	return strings.Join(parts, " ")
}

// markPrefixes start the comment lines bump writes above a source's pins
// when only the operator vouched for them.
var markPrefixes = []string{"# " + byTrustOnFirstUse + ":", "# pinned-by-operator:"}

// mark is the comment recorded above a source's pins when only the operator
// vouched for them (operator is byTrustOnFirstUse or byOperatorDigest; algs
// are the algorithms the operator gave).
func mark(operator, day string, algs []string) string {
	if operator == byTrustOnFirstUse {
		return fmt.Sprintf("# %s: %s by updeb bump (nothing vouched for these bytes: no signature, no upstream checksum file)", byTrustOnFirstUse, day)
	}
	return fmt.Sprintf("# pinned-by-operator: %s by updeb bump --%s (no signature, no upstream checksum file)", day, strings.Join(algs, " --"))
}

// lineEdits rewrites whole lines: inserts before a line (1-based; one past
// the last line appends), in the order added, and drops lines.
type lineEdits struct {
	insert map[int][]string
	drop   map[int]bool
}

func (e *lineEdits) add(before int, lines ...string) {
	if e.insert == nil {
		e.insert = map[int][]string{}
	}
	e.insert[before] = append(e.insert[before], lines...)
}

func (e *lineEdits) remove(line int) {
	if e.drop == nil {
		e.drop = map[int]bool{}
	}
	e.drop[line] = true
}

// Lines are YAML's (yamlfile.Lines), as the line numbers of its nodes; the
// lines inserted end with the file's line break (yamlfile.LineBreak), and a
// last line without one gets it when lines are appended after it.
func (e *lineEdits) apply(data []byte) []byte {
	lines := yamlfile.Lines(data)
	brk := yamlfile.LineBreak(data)
	if n := len(lines); n > 0 && len(e.insert[n+1]) > 0 && len(yamlfile.TrimBreak(lines[n-1])) == len(lines[n-1]) {
		lines[n-1] = append(lines[n-1][:len(lines[n-1]):len(lines[n-1])], brk...)
	}
	var out bytes.Buffer
	out.Write(yamlfile.Prefix(data))
	for i := 0; i <= len(lines); i++ {
		for _, l := range e.insert[i+1] {
			out.WriteString(l + brk)
		}
		if i < len(lines) && !e.drop[i+1] {
			out.Write(lines[i])
		}
	}
	return out.Bytes()
}

// sourceEdit is what bump writes for one source besides its digest values.
type sourceEdit struct {
	mark string // the comment above its pins ("" for none)
	alg  string // the algorithm to pin, for a source that has no pins yet
}

// pinLines plans the lines that change besides the digest values splice
// rewrites: the pins of a source that had none (inserted after its url, each
// architecture's digest of edits[source].alg), and the mark above the pins of
// a source only the operator vouched for. Bump's older marks above a
// source's pins are dropped first, so a mark always tells the last bump.
func pinLines(r *recipe.Recipe, data []byte, res *BumpResult, edits map[string]sourceEdit) (*lineEdits, error) {
	top, err := recipe.Document(r.Path, data)
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, l := range yamlfile.Lines(data) {
		lines = append(lines, string(yamlfile.TrimBreak(l)))
	}
	e := &lineEdits{}
	srcs := mapValue(top, "sources")
	if srcs == nil {
		return e, nil
	}
	for _, sn := range srcs.Content {
		nameNode := mapValue(sn, "name")
		if nameNode == nil {
			continue
		}
		name := nameNode.Value
		ed := edits[name]
		var at, indent int
		var pins []string
		if first := firstDigestKey(sn); first != nil {
			at, indent = first.Line, first.Column-1
		} else { // no pins yet: they go after the url
			urlKey, url := keyNode(sn, "url"), mapValue(sn, "url")
			if urlKey == nil || sn.Style&yaml.FlowStyle != 0 || url.Line != urlKey.Line || url.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
				return nil, fmt.Errorf("%s:%d:%d: source %s has no pins yet: write it as a block mapping (one field a line, url on one line) so that bump can add them", r.Path, sn.Line, sn.Column, name)
			}
			at, indent = urlKey.Line+1, urlKey.Column-1
			pins = append(pins, strings.Repeat(" ", indent)+ed.alg+":")
			for _, a := range r.ArchNames() {
				pins = append(pins, fmt.Sprintf("%s  %s: %s", strings.Repeat(" ", indent), a, res.Digests[name][a][ed.alg]))
			}
		}
		for l := at - 1; l >= 1 && l <= len(lines); l-- {
			t := strings.TrimSpace(lines[l-1])
			if !strings.HasPrefix(t, "#") {
				break
			}
			if slices.ContainsFunc(markPrefixes, func(p string) bool { return strings.HasPrefix(t, p) }) {
				e.remove(l)
			}
		}
		if ed.mark != "" {
			e.add(at, strings.Repeat(" ", indent)+ed.mark)
		}
		e.add(at, pins...)
	}
	return e, nil
}

// firstDigestKey is the key node of the source's first sha256/sha512 field.
func firstDigestKey(sn *yaml.Node) *yaml.Node {
	var first *yaml.Node
	for _, a := range []string{string(digest.SHA256), string(digest.SHA512)} {
		if k := keyNode(sn, a); k != nil && (first == nil || k.Line < first.Line) {
			first = k
		}
	}
	return first
}

// keyNode returns the key node of key in mapping m, or nil.
func keyNode(m *yaml.Node, key string) *yaml.Node {
	if m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i]
		}
	}
	return nil
}
