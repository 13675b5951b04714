// Package strictjson reads JSON that is signed or downloaded (provenance
// statements, DSSE envelopes, end-of-life data, GitHub and Rekor answers) one
// way, so that no two readers can read one document differently:
//
//   - a key given twice in one object, at any depth, is refused (encoding/json
//     keeps the last, other readers the first);
//   - keys are matched to fields exactly, and an object whose keys differ
//     only in case ("subject" and "Subject", or "ſubject") is refused, since
//     readers that fold case (encoding/json v1) would take either; so is a
//     key that names a field only when case is ignored ("Subject" alone);
//   - nothing may follow the value but white space (a stray "]" or "}" is
//     refused);
//   - invalid UTF-8 is refused; nesting is at most MaxDepth deep;
//   - base64 is RFC 4648's (Base64): no line breaks or other characters
//     outside the alphabet (section 3.3), canonical padding and bits.
//
// Numbers decoded into an interface value become json.Number (encoding/json
// v1's), so that they re-encode exactly as written. Decoding is
// github.com/go-json-experiment/json (the encoding/json/v2 prototype), whose
// defaults are these rules; a first pass over the tokens adds the case and
// depth rules and gives every refusal a message naming the key and where it
// is (a JSON pointer).
package strictjson

import (
	"bytes"
	"encoding/base64"
	v1 "encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// MaxDepth bounds the nesting of arrays and objects: the documents read here
// nest a handful of levels.
const MaxDepth = 64

// ErrInvalid is wrapped by every refusal: JSON that is malformed, ambiguous
// or of the wrong shape for the value.
var ErrInvalid = errors.New("strictjson: invalid JSON")

// Unmarshal decodes data, one JSON value, into v under the package's rules.
// Keys v has no field for are ignored (a newer writer's additions).
func Unmarshal(data []byte, v any) error {
	return unmarshal(data, v, false)
}

// UnmarshalKnown is Unmarshal that also refuses keys v has no field for.
func UnmarshalKnown(data []byte, v any) error {
	return unmarshal(data, v, true)
}

// Read decodes at most limit bytes read from r (more is refused) into v.
func Read(r io.Reader, limit int64, v any) error {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return err
	}
	if int64(len(data)) > limit {
		return fmt.Errorf("%w: larger than %d bytes", ErrInvalid, limit)
	}
	return Unmarshal(data, v)
}

var numbers = json.WithUnmarshalers(json.UnmarshalFromFunc(func(dec *jsontext.Decoder, v *any) error {
	if dec.PeekKind() != '0' {
		return errors.ErrUnsupported // the default for anything but a number
	}
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	*v = v1.Number(tok.String())
	return nil
}))

func unmarshal(data []byte, v any, known bool) error {
	if err := Check(data); err != nil {
		return err
	}
	opts := []json.Options{numbers}
	if known {
		opts = append(opts, json.RejectUnknownMembers(true))
	}
	if err := json.Unmarshal(data, v, opts...); err != nil {
		return fmt.Errorf("%w: %s", ErrInvalid, message(err))
	}
	// A key that names a field only when case is ignored ("Subject" for
	// subject) is ignored above but taken by readers that fold case: read
	// again folding case, and refuse when that reads anything else.
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return nil
	}
	folded := reflect.New(rv.Elem().Type())
	if err := json.Unmarshal(data, folded.Interface(), append(opts, json.MatchCaseInsensitiveNames(true))...); err != nil ||
		!reflect.DeepEqual(folded.Elem().Interface(), rv.Elem().Interface()) {
		return fmt.Errorf("%w: a key names a field only when case is ignored (readers that fold case would read it)", ErrInvalid)
	}
	return nil
}

// message is err's text without the decoder's package prefix. A semantic
// error (the wrong type, an unknown key) is written here rather than by the
// decoder, which words it one of two ways at random per process ("cannot" or
// "unable to") so that nobody relies on its text: ours is read by people and
// tests and stays the same.
func message(err error) string {
	var se *json.SemanticError
	if errors.As(err, &se) {
		return semantic(se)
	}
	s := err.Error()
	for _, p := range []string{"jsontext: ", "json: "} {
		s = strings.TrimPrefix(s, p)
	}
	return s
}

var kinds = map[jsontext.Kind]string{
	'n': "null", 'f': "boolean", 't': "boolean", '"': "string", '0': "number",
	'{': "object", '}': "object", '[': "array", ']': "array",
}

// semantic words a decoding error that is not about the JSON's syntax:
// what the JSON holds, what Go type it cannot go into, where, and why.
func semantic(se *json.SemanticError) string {
	var b strings.Builder
	if se.Err == json.ErrUnknownName {
		fmt.Fprintf(&b, "key %q has no field", se.JSONPointer.LastToken())
		if se.GoType != nil {
			fmt.Fprintf(&b, " in Go %s", se.GoType)
		}
		b.WriteString(" in the object at ")
		b.WriteString(pointer(string(se.JSONPointer.Parent())))
		return b.String()
	}
	b.WriteString("cannot read ")
	if k, ok := kinds[se.JSONKind]; ok {
		b.WriteString("JSON " + k)
	} else {
		b.WriteString("the JSON value")
	}
	if v := se.JSONValue; len(v) > 0 && len(v) < 100 {
		b.WriteString(" " + string(v))
	}
	if se.GoType != nil {
		fmt.Fprintf(&b, " into Go %s", se.GoType)
	}
	b.WriteString(" at " + pointer(string(se.JSONPointer)))
	if se.Err != nil {
		b.WriteString(": " + message(se.Err))
	}
	return b.String()
}

// pointer names a place in the document as the package's messages do: a
// JSON pointer, or "the top".
func pointer(p string) string {
	if p == "" {
		return "the top"
	}
	return p
}

// Check applies the package's rules to data without decoding it: one JSON
// value, valid UTF-8, no key twice or differing only in case within an
// object, at most MaxDepth deep, nothing after it.
func Check(data []byte) error {
	dec := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(false))
	type object struct {
		exact  map[string]bool
		folded map[string]string
	}
	var stack []*object // nil entries for arrays
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			return fmt.Errorf("%w: %s", ErrInvalid, syntaxMessage(err, data))
		}
		switch tok.Kind() {
		case '{', '[':
			if len(stack) >= MaxDepth {
				return fmt.Errorf("%w: nested deeper than %d at %s", ErrInvalid, MaxDepth, where(dec))
			}
			var o *object
			if tok.Kind() == '{' {
				o = &object{exact: map[string]bool{}, folded: map[string]string{}}
			}
			stack = append(stack, o)
			continue
		case '}', ']':
			stack = stack[:len(stack)-1]
		case '"':
			if o := top(stack); o != nil && isName(dec) {
				k := tok.String()
				at := where(dec)
				if o.exact[k] {
					return fmt.Errorf("%w: key %q given twice in the object at %s", ErrInvalid, k, at)
				}
				f := fold(k)
				if other, ok := o.folded[f]; ok {
					return fmt.Errorf("%w: keys %q and %q differ only in case in the object at %s", ErrInvalid, other, k, at)
				}
				o.exact[k], o.folded[f] = true, k
				continue
			}
		}
		if dec.StackDepth() == 0 {
			// the top-level value is complete: only white space may follow
			if _, err := dec.ReadToken(); err != io.EOF {
				return fmt.Errorf("%w: data after the JSON value (offset %d)", ErrInvalid, dec.InputOffset())
			}
			return nil
		}
	}
}

func top[T any](s []*T) *T {
	if len(s) == 0 {
		return nil
	}
	return s[len(s)-1]
}

// isName reports whether the string token just read was an object's key:
// within an object, keys are the odd tokens (1st, 3rd, ...).
func isName(dec *jsontext.Decoder) bool {
	kind, length := dec.StackIndex(dec.StackDepth())
	return kind == '{' && length%2 == 1
}

// where is the JSON pointer of the object being read.
func where(dec *jsontext.Decoder) string {
	p := string(dec.StackPointer())
	// the pointer names the member just read; its object is the parent
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		p = p[:i]
	}
	return pointer(p)
}

// fold maps every rune of s to the smallest rune of its Unicode case-folding
// orbit (as strings.EqualFold compares), so that keys equal under folding
// have equal folds.
func fold(s string) string {
	var b strings.Builder
	for _, r := range s {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		b.WriteRune(least)
	}
	return b.String()
}

// syntaxMessage describes a syntax error; an empty document is named so.
func syntaxMessage(err error, data []byte) string {
	if len(bytes.TrimSpace(data)) == 0 {
		return "no JSON value"
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "cut short (unexpected end of data)"
	}
	if !utf8.Valid(data) && strings.Contains(err.Error(), "UTF-8") {
		return "invalid UTF-8: " + message(err)
	}
	return message(err)
}

// Base64 decodes s as RFC 4648 base64 in the standard or the URL alphabet,
// padded or not (as DSSE allows), refusing line breaks and any other byte
// outside the alphabet (section 3.3: encoding/base64 skips "\r" and "\n"),
// and encodings that are not canonical (stray bits, wrong padding).
func Base64(s string) ([]byte, error) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_' || c == '=') {
			return nil, fmt.Errorf("%w: base64 with a byte outside its alphabet (%q at offset %d)", ErrInvalid, c, i)
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.Strict().DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, fmt.Errorf("%w: not canonical base64", ErrInvalid)
}
