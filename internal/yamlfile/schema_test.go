package yamlfile

import (
	"encoding/json"
	"testing"

	"go.yaml.in/yaml/v3"
)

// A schema run of a small loader: keys and required ones from Map, kinds
// from the typed methods, one form or several per value, what Describe
// states, and an open mapping's values.
func TestDescribe(t *testing.T) {
	decode := func(d *Decoder, top *yaml.Node) {
		d.Map(top, Map{Fields: map[string]Field{
			"name": {Required: true, Decode: func(v *yaml.Node) {
				d.Describe(v, Schema{Pattern: "^[a-z]+$"})
				var s string
				if d.NonEmpty(v, "name", &s) && s == "x" {
					d.At(v, "never reported in a schema run")
				}
			}},
			"count": {Decode: func(v *yaml.Node) {
				var n int
				d.Describe(v, Schema{Minimum: Int64(1)})
				d.Int(v, "count", &n)
			}},
			"tags": {Decode: func(v *yaml.Node) {
				var l []string
				d.StrList(v, "tags", &l)
			}},
			"on": {Decode: func(v *yaml.Node) {
				var b bool
				d.Bool(v, "on", &b)
			}},
			"either": {Decode: func(v *yaml.Node) { // a string or {a: ...}
				if v.Kind == yaml.MappingNode {
					d.Mapping(v, "either", map[string]Field{"a": {Decode: func(v *yaml.Node) {
						var s string
						d.Str(v, "a", &s)
					}}})
					return
				}
				var s string
				d.Str(v, "either", &s)
			}},
			"labels": {Decode: func(v *yaml.Node) {
				d.Pairs(v, "labels", func(_, v *yaml.Node) {
					var s string
					d.Str(v, "label", &s)
				})
			}},
			"later": {Decode: func(v *yaml.Node) {}}, // decoded after the file: nothing to say
		}})
	}
	got, err := json.Marshal(Describe(decode))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"properties":{` +
		`"count":{"minimum":1,"type":"integer"},` +
		`"either":{"anyOf":[{"type":["string","number"]},{"properties":{"a":{"type":["string","number"]}},"additionalProperties":false,"type":"object"}]},` +
		`"labels":{"additionalProperties":{"type":["string","number"]},"type":"object"},` +
		`"later":{},` +
		`"name":{"pattern":"^[a-z]+$","minLength":1,"type":["string","number"]},` +
		`"on":{"type":"boolean"},` +
		`"tags":{"items":{"minLength":1,"type":["string","number"]},"type":"array"}},` +
		`"required":["name"],"additionalProperties":false,"type":"object"}`
	if string(got) != want {
		t.Errorf("schema:\n%s\nwant:\n%s", got, want)
	}
}

// Outside a schema run, Describe does nothing and decoding is unchanged.
func TestDescribeIsANoOpWhenDecoding(t *testing.T) {
	d := &Decoder{File: "f.yaml"}
	top := d.Document([]byte("name: 1.10\n"), Options{})
	var s string
	d.Map(top, Map{Fields: map[string]Field{"name": {Decode: func(v *yaml.Node) {
		if d.Describe(v, Schema{Pattern: "^x$"}) {
			t.Error("Describe says a schema run")
		}
		d.Str(v, "name", &s)
	}}}})
	if s != "1.10" || d.Err() != nil || d.Describing() {
		t.Errorf("decoded %q, %v", s, d.Err())
	}
}

// A value that may be null or one of an enum is an anyOf: a type list
// beside the enum would refuse the null it lists (the config's
// build.compression: null).
func TestDescribeNullBesideEnum(t *testing.T) {
	got, err := json.Marshal(Describe(func(d *Decoder, top *yaml.Node) {
		d.Map(top, Map{Fields: map[string]Field{"mode": {Decode: func(v *yaml.Node) {
			if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null" {
				d.Describe(v, Schema{Type: []string{"null"}})
				return
			}
			var s string
			d.Describe(v, Schema{Enum: []string{"fast", "best"}})
			d.Str(v, "mode", &s)
		}}}})
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"properties":{"mode":{"anyOf":[{"type":"null"},{"enum":["fast","best"],"type":["string","number"]}]}},"additionalProperties":false,"type":"object"}`
	if string(got) != want {
		t.Errorf("schema:\n%s\nwant:\n%s", got, want)
	}
}
