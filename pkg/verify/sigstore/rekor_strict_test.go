package sigstore

import (
	"strings"
	"testing"
)

// TestRekorAnswersOneReading: Rekor answers that two JSON readers read
// differently (a key twice, keys differing in case, trailing data) and base64
// with line breaks are refused before anything in them is used.
func TestRekorAnswersOneReading(t *testing.T) {
	entry := `{"body":"eyJraW5kIjoiaGFzaGVkcmVrb3JkIiwiYXBpVmVyc2lvbiI6IjAuMC4xIn0=","integratedTime":1,"logID":"` + strings.Repeat("ab", 32) + `","logIndex":1,"verification":{"signedEntryTimestamp":"AAAA"}}`
	if _, err := parseRekorEntries([]byte(`{"id":` + entry + `}`)); err != nil {
		t.Fatalf("a plain entry: %v", err)
	}
	for name, tc := range map[string]struct{ doc, want string }{
		"entry twice":           {`{"id":` + entry + `,"id":` + entry + `}`, `key "id" given twice`},
		"body twice":            {`{"id":` + strings.Replace(entry, `"body":`, `"body":"e30=","body":`, 1) + `}`, `key "body" given twice`},
		"logIndex and LogIndex": {`{"id":` + strings.Replace(entry, `"logIndex":1`, `"logIndex":1,"LogIndex":2`, 1) + `}`, `differ only in case`},
		"trailing bracket":      {`{"id":` + entry + `}]`, `data after the JSON value`},
		"body with line breaks": {`{"id":` + strings.Replace(entry, `eyJraW5k`, `eyJr\naW5k`, 1) + `}`, `body is missing or not base64`},
		"SET with line breaks":  {`{"id":` + strings.Replace(entry, `"AAAA"`, `"AA\r\nAA"`, 1) + `}`, `signedEntryTimestamp is not base64`},
	} {
		if _, err := parseRekorEntries([]byte(tc.doc)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
}
