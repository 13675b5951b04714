package strictjson

import (
	v1 "encoding/json"
	"errors"
	"strings"
	"testing"
)

type statement struct {
	Type    string           `json:"_type"`
	Subject []map[string]any `json:"subject"`
	Bytes   []byte           `json:"bytes"`
}

func TestUnmarshal(t *testing.T) {
	var st statement
	if err := Unmarshal([]byte(` {"_type":"t","subject":[{"n":12345678901234567890,"x":{"y":[1.50]}}],"extra":{"k":1}} `+"\n"), &st); err != nil {
		t.Fatal(err)
	}
	if n, ok := st.Subject[0]["n"].(v1.Number); !ok || n != "12345678901234567890" {
		t.Errorf("a number in an interface value is %T %v, want json.Number as written", st.Subject[0]["n"], st.Subject[0]["n"])
	}
	for name, tc := range map[string]struct{ doc, want string }{
		"key twice at the top":             {`{"subject":[{"n":"a"}],"subject":[{"n":"b"}]}`, `key "subject" given twice in the object at the top`},
		"_type twice":                      {`{"_type":"a","_type":"b"}`, `key "_type" given twice`},
		"key twice, deep":                  {`{"subject":[{"n":"a","d":{"s":1,"s":2}}]}`, `key "s" given twice in the object at /subject/0/d`},
		"keys differing in case":           {`{"subject":[],"Subject":[{"n":"b"}]}`, `keys "subject" and "Subject" differ only in case`},
		"keys differing by a folding rune": {`{"subject":[],"ſubject":[]}`, `differ only in case`},
		"Kelvin sign":                      {`{"k":1,"\u212a":2}`, `differ only in case`},
		"stray ]":                          {`{"subject":[]}]`, `data after the JSON value`},
		"stray }":                          {`{"subject":[]}}`, `data after the JSON value`},
		"a second value":                   {`{"subject":[]} {"subject":[]}`, `data after the JSON value`},
		"cut short":                        {`{"subject":[`, `cut short`},
		"empty":                            {" \n", `no JSON value`},
		"invalid UTF-8":                    {"{\"subject\":[{\"n\":\"\xff\"}]}", `UTF-8`},
		"too deep":                         {strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1), `nested deeper than`},
		"wrong type":                       {`{"_type":1}`, `cannot read JSON number into Go string at /_type`},
		"wrong type, deep":                 {`{"subject":[{"n":1},[]]}`, `cannot read JSON array into Go map[string]interface {} at /subject/1`},
		"base64 with a line break":         {`{"bytes":"aGVs\nbG8="}`, `cannot read JSON string into Go []uint8 at /bytes: illegal character`},
	} {
		var st statement
		err := Unmarshal([]byte(tc.doc), &st)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrInvalid with %q", name, err, tc.want)
		}
	}
	// keys are matched exactly, and "Subject" alone, which a reader that
	// folds case takes for subject, is refused
	if err := Unmarshal([]byte(`{"Subject":[{"n":"b"}]}`), &st); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "only when case is ignored") {
		t.Errorf("Subject for subject: %v", err)
	}
	if err := UnmarshalKnown([]byte(`{"_type":"t","subject":[{"n":1,"x":{"other":1}}],"other":1}`), &st); !errors.Is(err, ErrInvalid) ||
		!strings.HasSuffix(err.Error(), `: key "other" has no field in Go strictjson.statement in the object at the top`) {
		t.Errorf("an unknown key under UnmarshalKnown: %v", err)
	}
}

func TestBase64(t *testing.T) {
	for _, s := range []string{"aGVsbG8=", "aGVsbG8", "-_-_", "+/+/"} {
		if _, err := Base64(s); err != nil {
			t.Errorf("Base64(%q): %v", s, err)
		}
	}
	for _, s := range []string{"aGVs\nbG8=", "aGVs\r\nbG8=", "aGVs bG8=", "aGVsbG9=", "aGVsbG8==", "aGVs\tbG8="} {
		if _, err := Base64(s); !errors.Is(err, ErrInvalid) {
			t.Errorf("Base64(%q) accepted", s)
		}
	}
}

func FuzzUnmarshal(f *testing.F) {
	f.Add([]byte(`{"_type":"t","subject":[{"n":1}]}`))
	f.Add([]byte(`{"a":1,"A":2}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var st statement
		if Unmarshal(data, &st) != nil {
			return
		}
		// what is accepted, encoding/json reads the same way
		var other statement
		if err := v1.Unmarshal(data, &other); err != nil {
			t.Fatalf("accepted, but encoding/json refuses it: %v", err)
		}
		a, _ := v1.Marshal(st)
		b, _ := v1.Marshal(other)
		if string(a) != string(b) {
			t.Fatalf("read differently:\n%s\n%s", a, b)
		}
	})
}
