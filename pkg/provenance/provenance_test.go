package provenance

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/updeb/updeb/pkg/digest"
)

func sample(order int) Build {
	inputs := []Input{
		{URI: "https://example.org/b.tar.gz", Digests: digest.Set{digest.SHA256: strings.Repeat("b", 64)}, VerifiedBy: []string{"pinned-digest", "openpgp:ABCD"}},
		{URI: "https://example.org/a.tar.gz.asc", Digests: digest.Set{digest.SHA256: strings.Repeat("a", 64)}},
	}
	if order == 1 {
		inputs[0], inputs[1] = inputs[1], inputs[0]
		inputs[1].VerifiedBy = []string{"openpgp:ABCD", "pinned-digest"}
	}
	return Build{
		Recipe: "hello", Architecture: "amd64", DebianVersion: "1.2.0-1",
		SourceDateEpoch: time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC), UpdebVersion: "test",
		Outputs: map[string]digest.Set{"hello_1.2.0-1_amd64.deb": {digest.SHA256: strings.Repeat("c", 64)}},
		Inputs:  inputs,
	}
}

func TestStatementIsDeterministicAndWellFormed(t *testing.T) {
	a, err := New(sample(0)).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := New(sample(1)).Marshal()
	if !bytes.Equal(a, b) {
		t.Fatalf("input order changed the statement:\n%s\n%s", a, b)
	}
	var generic map[string]any
	if err := json.Unmarshal(a, &generic); err != nil {
		t.Fatal(err)
	}
	if generic["_type"] != StatementType || generic["predicateType"] != PredicateType {
		t.Fatalf("types: %v %v", generic["_type"], generic["predicateType"])
	}
	for _, want := range []string{`"sourceDateEpoch": 1773446400`, `"name": "hello_1.2.0-1_amd64.deb"`, `"verifiedBy": [`, `"uri": "https://example.org/a.tar.gz.asc"`} {
		if !bytes.Contains(a, []byte(want)) {
			t.Errorf("statement lacks %s:\n%s", want, a)
		}
	}
	if bytes.Index(a, []byte("a.tar.gz.asc")) > bytes.Index(a, []byte("b.tar.gz")) {
		t.Error("dependencies not sorted by URI")
	}
}
