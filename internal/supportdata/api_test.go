package supportdata

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// apiV0 is the shape of https://endoflife.date/api/kubernetes.json (v0).
const apiV0 = `[
  {"cycle": "1.37", "releaseDate": "2026-08-26", "support": "2027-08-28", "eol": "2027-10-28",
   "latest": "1.37.1", "latestReleaseDate": "2026-09-23", "lts": false, "link": null},
  {"cycle": "1.36", "releaseDate": "2026-04-22", "support": "2027-04-28", "eol": "2027-06-28",
   "latest": "1.36.5", "latestReleaseDate": "2026-09-23", "lts": false, "extendedSupport": false},
  {"cycle": "1.16", "releaseDate": "2019-09-18", "support": false, "eol": true, "latest": "1.16.15"}
]`

// apiV1 is the shape of https://endoflife.date/api/v1/products/istio.
const apiV1 = `{"schema_version": "1.2.0", "generated_at": "2026-11-24T00:00:00+00:00",
 "result": {"name": "istio", "label": "Istio", "releases": [
  {"name": "1.31", "label": "1.31", "releaseDate": "2026-08-31", "isLts": false, "isEoas": false, "eoasFrom": null,
   "isEol": false, "eolFrom": "2027-02-28", "isMaintained": true,
   "latest": {"name": "1.31.1", "date": "2026-09-21", "link": "https://istio.io/"},
   "custom": {"supportedKubernetesVersions": "1.32 - 1.37"}},
  {"name": "1.7", "label": "1.7", "releaseDate": "2020-08-21", "isLts": false, "isEol": true, "eolFrom": null,
   "isMaintained": false, "latest": {"name": "1.7.8", "date": null}, "custom": null}
 ]}}`

// apiNow is the time of the requests in these tests.
var apiNow = time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)

func TestParseAPI(t *testing.T) {
	v0, err := ParseAPI("kubernetes", "u0", []byte(apiV0), apiNow)
	if err != nil {
		t.Fatal(err)
	}
	day := func(s string) time.Time { d, _ := time.Parse(time.DateOnly, s); return d }
	want0 := []Cycle{
		{Product: "kubernetes", Name: "1.37", ReleaseDate: day("2026-08-26"), EOAS: day("2027-08-28"), EOL: day("2027-10-28"), Latest: "1.37.1", LatestReleaseDate: day("2026-09-23")},
		{Product: "kubernetes", Name: "1.36", ReleaseDate: day("2026-04-22"), EOAS: day("2027-04-28"), EOL: day("2027-06-28"), Latest: "1.36.5", LatestReleaseDate: day("2026-09-23")},
		{Product: "kubernetes", Name: "1.16", ReleaseDate: day("2019-09-18"), EOASPassed: true, EOLPassed: true, Latest: "1.16.15"},
	}
	if !reflect.DeepEqual(v0, want0) {
		t.Errorf("v0:\n got %+v\nwant %+v", v0, want0)
	}
	v1, err := ParseAPI("istio", "u1", []byte(apiV1), apiNow)
	if err != nil {
		t.Fatal(err)
	}
	want1 := []Cycle{
		{Product: "istio", Name: "1.31", ReleaseDate: day("2026-08-31"), EOL: day("2027-02-28"), Latest: "1.31.1", LatestReleaseDate: day("2026-09-21"), SupportedKubernetes: "1.32 - 1.37"},
		{Product: "istio", Name: "1.7", ReleaseDate: day("2020-08-21"), EOLPassed: true, Latest: "1.7.8"},
	}
	if !reflect.DeepEqual(v1, want1) {
		t.Errorf("v1:\n got %+v\nwant %+v", v1, want1)
	}
}

func TestParseAPIRefuses(t *testing.T) {
	const p = "eol: unusable endoflife.date answer: https://e.test/api/kubernetes.json: "
	full := []byte(apiV0)
	for _, tc := range []struct{ name, body, want string }{
		{"empty", "  \n", p + "empty answer"},
		{"html", "<!DOCTYPE html><html><body>502 Bad Gateway</body></html>", p + `the answer is HTML, not JSON (an error page, a login page of a proxy?): "<!DOCTYPE html><html><body>502 Bad Gateway</body></html>"`},
		{"truncated", string(full[:len(full)/2]), p + "not valid JSON (truncated?), or ambiguous (strictjson: invalid JSON: cut short (unexpected end of data))"},
		{"trailing", apiV0 + " []", p + "not valid JSON (truncated?), or ambiguous (strictjson: invalid JSON: data after the JSON value (offset 482))"},
		{"scalar", `"kubernetes"`, p + `expected a list of cycles (API v0) or {"result": {"releases": [...]}} (API v1)`},
		{"no cycles", `[]`, p + "no release cycles"},
		{"not an object", `[1]`, p + "cycle 1: expected an object, found the number 1"},
		{"numeric cycle", `[{"cycle": 1.36, "releaseDate": "2026-04-22", "eol": false, "latest": "1.36.4"}]`, p + `cycle 1: field "cycle": expected the cycle's name as a string, found the number 1.36`},
		{"bad cycle", `[{"cycle": "latest", "releaseDate": "2026-04-22", "eol": false, "latest": "1.36.4"}]`, p + `cycle 1: field "cycle": "latest" is not MAJOR or MAJOR.MINOR`},
		{"bad date", `[{"cycle": "1.36", "releaseDate": "22/04/2026", "eol": false, "latest": "1.36.4"}]`, p + `cycle 1: field "releaseDate": expected a date YYYY-MM-DD, found "22/04/2026"`},
		{"no eol", `[{"cycle": "1.36", "releaseDate": "2026-04-22", "latest": "1.36.4"}]`, p + `cycle 1: missing field "eol" (or true/false)`},
		{"bad eol", `[{"cycle": "1.36", "releaseDate": "2026-04-22", "eol": "soon", "latest": "1.36.4"}]`, p + `cycle 1: field "eol": expected a date YYYY-MM-DD, found "soon" (or true/false)`},
		{"no latest", `[{"cycle": "1.36", "releaseDate": "2026-04-22", "eol": false}]`, p + `cycle 1: field "latest": expected a version string, found null`},
		{"bad latest", `[{"cycle": "1.36", "releaseDate": "2026-04-22", "eol": false, "latest": "newest"}]`, p + `cycle 1: field "latest": "newest" is not a version`},
		{"twice", `[{"cycle": "1.36", "releaseDate": "2026-04-22", "eol": false, "latest": "1.36.4"}, {"cycle": "1.36", "releaseDate": "2026-04-22", "eol": false, "latest": "1.36.4"}]`, p + `cycle "1.36" given twice`},
		{"key twice in a cycle", `[{"cycle": "1.36", "releaseDate": "2026-04-22", "eol": "2026-05-01", "eol": false, "latest": "1.36.4"}]`, p + `not valid JSON (truncated?), or ambiguous (strictjson: invalid JSON: key "eol" given twice in the object at /0)`},
		{"cycle twice with leading zeros", `[{"cycle": "1.36", "releaseDate": "2026-04-22", "eol": false, "latest": "1.36.4"}, {"cycle": "01.36", "releaseDate": "2026-04-22", "eol": "2026-05-01", "latest": "01.36.4"}]`, p + `cycles "1.36" and "01.36" are the same cycle 1.36 given twice`},
		{"cycle twice as 1.036", `[{"cycle": "1.36", "releaseDate": "2026-04-22", "eol": false, "latest": "1.36.4"}, {"cycle": "1.036", "releaseDate": "2026-04-22", "eol": true, "latest": "1.036.4"}]`, p + `cycles "1.36" and "1.036" are the same cycle 1.36 given twice`},
		{"cycle twice as 1.36.0", `[{"cycle": "1.36", "releaseDate": "2026-04-22", "eol": false, "latest": "1.36.4"}, {"cycle": "1.36.0", "releaseDate": "2026-04-22", "eol": true, "latest": "1.36.0"}]`, p + `cycles "1.36" and "1.36.0" are the same cycle 1.36 given twice`},
		{"a major's cycle over a minor's", `[{"cycle": "1.36", "releaseDate": "2026-04-22", "eol": false, "latest": "1.36.4"}, {"cycle": "1", "releaseDate": "2016-04-22", "eol": true, "latest": "1.36.4"}]`, p + `cycles "1.36" and "1" overlap: a version 1.36.x would match either (a cycle named by its major alone covers all of it)`},
		{"keys differing in case", `[{"cycle": "1.36", "releaseDate": "2026-04-22", "eol": false, "EOL": true, "latest": "1.36.4"}]`, p + `not valid JSON (truncated?), or ambiguous (strictjson: invalid JSON: keys "eol" and "EOL" differ only in case in the object at /0)`},
		{"v1 key twice deep", `{"result": {"releases": [{"name": "1.36", "releaseDate": "2026-04-22", "isEol": false, "latest": {"name": "1.36.4", "name": "1.36.9"}}]}}`, p + `not valid JSON (truncated?), or ambiguous (strictjson: invalid JSON: key "name" given twice in the object at /result/releases/0/latest)`},
		{"v1 other product", `{"result": {"name": "istio", "releases": []}}`, p + `the answer is for product "istio", not "kubernetes"`},
		{"v1 no releases", `{"result": {"name": "kubernetes"}}`, p + `"result" has no list "releases"`},
		{"v1 latest", `{"result": {"releases": [{"name": "1.36", "releaseDate": "2026-04-22", "isEol": false, "latest": "1.36.4"}]}}`, p + `cycle 1: "1.36": field "latest": expected an object {"name": VERSION, "date": ...}`},
		{"v1 no isEol", `{"result": {"releases": [{"name": "1.36", "releaseDate": "2026-04-22", "latest": {"name": "1.36.4"}}]}}`, p + `cycle 1: missing field "isEol"`},
		{"latest of another cycle", `[{"cycle": "1.36", "releaseDate": "2026-04-22", "eol": false, "latest": "99.0.0"}]`, p + `cycle 1: "1.36": latest release "99.0.0" is not a release of cycle 1.36`},
		{"latest of a longer cycle", `[{"cycle": "1.3", "releaseDate": "2016-04-22", "eol": true, "latest": "1.36.4"}]`, p + `cycle 1: "1.3": latest release "1.36.4" is not a release of cycle 1.3`},
		{"released in the future", `[{"cycle": "1.99", "releaseDate": "9999-01-01", "eol": "9999-12-31", "latest": "1.99.0"}]`, p + `cycle 1: "1.99": release date 9999-01-01 is after today (2026-11-24): a broken answer, or a wrong clock here`},
		{"latest released in the future", `[{"cycle": "1.36", "releaseDate": "2026-04-22", "eol": false, "latest": "1.36.9", "latestReleaseDate": "2026-11-27"}]`, p + `cycle 1: "1.36": latest release date 2026-11-27 is after today (2026-11-24): a broken answer, or a wrong clock here`},
		{"eol before release", `[{"cycle": "1.36", "releaseDate": "2026-04-22", "eol": "1999-01-01", "latest": "1.36.4"}]`, p + `cycle 1: "1.36": end of life 1999-01-01 is before the release date 2026-04-22`},
		{"eoas before release", `[{"cycle": "1.36", "releaseDate": "2026-04-22", "support": "2026-04-21", "eol": false, "latest": "1.36.4"}]`, p + `cycle 1: "1.36": end of active support 2026-04-21 is before the release date 2026-04-22`},
		{"eol for ever", `[{"cycle": "1.36", "releaseDate": "2026-04-22", "eol": "9999-12-31", "latest": "1.36.4"}]`, p + `cycle 1: "1.36": end of life 9999-12-31 is more than 30 years after the release date 2026-04-22: not plausible`},
		{"v1 eol for ever", `{"result": {"releases": [{"name": "1.36", "releaseDate": "2026-04-22", "isEol": false, "eolFrom": "2999-01-01", "latest": {"name": "1.36.4"}}]}}`, p + `cycle 1: "1.36": end of life 2999-01-01 is more than 30 years after the release date 2026-04-22: not plausible`},
		{"v1 latest of another cycle", `{"result": {"releases": [{"name": "1.36", "releaseDate": "2026-04-22", "isEol": false, "latest": {"name": "1.37.0"}}]}}`, p + `cycle 1: "1.36": latest release "1.37.0" is not a release of cycle 1.36`},
		{"long text", `[{"cycle": "1.36", "releaseDate": "2026-04-22", "eol": false, "latest": "1.36.4", "supportedKubernetesVersions": "` + strings.Repeat("x", 300) + `"}]`, p + `cycle 1: field "supportedKubernetesVersions": expected one short line of text, found "` + strings.Repeat("x", 80) + `..."`},
	} {
		_, err := ParseAPI("kubernetes", "https://e.test/api/kubernetes.json", []byte(tc.body), apiNow)
		if !errors.Is(err, ErrAPI) || err.Error() != tc.want {
			t.Errorf("%s:\n got %v\nwant %s", tc.name, err, tc.want)
		}
	}
	many := "[" + strings.Repeat(`{"cycle": "1.1", "releaseDate": "2026-04-22", "eol": false, "latest": "1.1.0"},`, MaxCycles) + `{}]`
	if _, err := ParseAPI("kubernetes", "u", []byte(many), apiNow); err == nil || !strings.Contains(err.Error(), "more than the 2000") {
		t.Errorf("too many cycles: %v", err)
	}
}

// TestCyclesNewestFirst: cycles an answer or a data file lists oldest first
// (an older mirror of endoflife.date does) are kept newest first, by their
// numbers (1.100 after 1.99): commands take the first cycle that is not
// end-of-life as the newest.
func TestCyclesNewestFirst(t *testing.T) {
	answer := `[{"cycle": "1.99", "releaseDate": "2025-01-01", "eol": false, "latest": "1.99.0"},
		{"cycle": "1.100", "releaseDate": "2026-01-01", "eol": false, "latest": "1.100.2"},
		{"cycle": "1.9", "releaseDate": "2020-01-01", "eol": true, "latest": "1.9.9"}]`
	cs, err := ParseAPI("p", "u", []byte(answer), apiNow)
	if err != nil {
		t.Fatal(err)
	}
	fromAPI, err := New("Source: test", map[string][]Cycle{"p": cs})
	if err != nil {
		t.Fatal(err)
	}
	fromFile, err := Parse("eol.yaml", []byte(`p:
  - {releaseCycle: "2", releaseDate: 2020-01-01, eol: true, latest: "2.9"}
  - {releaseCycle: "10", releaseDate: 2026-01-01, eol: false, latest: "10.1"}
  - {releaseCycle: "9", releaseDate: 2025-01-01, eol: false, latest: "9.0"}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		d    *Data
		want string
	}{{fromAPI, "1.100 1.99 1.9"}, {fromFile, "10 9 2"}} {
		var got []string
		for _, c := range tc.d.Cycles("p") {
			got = append(got, c.Name)
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("cycles %v, want %s", got, tc.want)
		}
	}
}

// TestEncodeRoundTrip: the bundled data and API answers come back unchanged
// through Encode and Parse.
func TestEncodeRoundTrip(t *testing.T) {
	bundled, err := Bundled()
	if err != nil {
		t.Fatal(err)
	}
	k, _ := ParseAPI("kubernetes", "u0", []byte(apiV0), apiNow)
	i, _ := ParseAPI("istio", "u1", []byte(apiV1), apiNow)
	fresh, err := New("Source: test\n\nAs of: 2026-11-24T10:11:12Z", map[string][]Cycle{"kubernetes": k, "istio": i})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []*Data{bundled, fresh} {
		back, err := Parse("round.yaml", d.Encode())
		if err != nil {
			t.Fatalf("%v\n%s", err, d.Encode())
		}
		if !reflect.DeepEqual(back, d) {
			t.Errorf("round trip changed the data:\n got %+v\nwant %+v", back, d)
		}
	}
	if want := time.Date(2026, 11, 24, 10, 11, 12, 0, time.UTC); !fresh.AsOf.Equal(want) {
		t.Errorf("AsOf %s, want %s", fresh.AsOf, want)
	}
}

// FuzzParseAPI: no input panics; whatever parses encodes to a file that
// parses back to the same cycles.
func FuzzParseAPI(f *testing.F) {
	f.Add([]byte(apiV0))
	f.Add([]byte(apiV1))
	f.Add([]byte(`[{"cycle": "3", "releaseDate": "2026-04-22", "eol": "2026-05-01", "support": true, "lts": "2026-01-01", "latest": "3.0.1"}]`))
	f.Add([]byte(`<html>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		cs, err := ParseAPI("p", "u", body, apiNow)
		if err != nil {
			return
		}
		d, err := New("Source: fuzz", map[string][]Cycle{"p": cs})
		if err != nil {
			t.Fatal(err)
		}
		back, err := Parse("fuzz.yaml", d.Encode())
		if err != nil {
			t.Fatalf("%v\n%s", err, d.Encode())
		}
		if !reflect.DeepEqual(back.Cycles("p"), d.Cycles("p")) || len(cs) != len(d.Cycles("p")) {
			t.Errorf("round trip:\n got %+v\nwant %+v", back.Cycles("p"), d.Cycles("p"))
		}
	})
}

// TestParseAPICycleSpelling: a cycle endoflife.date names otherwise than
// MAJOR.MINOR ("1.37.0", "v1.37", "01.37": lookups read each as cycle 1.37)
// keeps its answer usable once its latest patch moves past the name
// (1.37.2); a latest of another cycle is still refused.
func TestParseAPICycleSpelling(t *testing.T) {
	answer := func(name, latest string) []byte {
		return []byte(`[{"cycle": "` + name + `", "releaseDate": "2026-08-26", "eol": false, "latest": "` + latest + `", "latestReleaseDate": "2026-10-01"}]`)
	}
	for _, tc := range []struct{ name, latest string }{
		{"1.37.0", "1.37.2"}, {"v1.37", "1.37.2"}, {"01.37", "1.37.2"}, {"1.37", "1.37.2"}, {"1.37", "1.37"}, {"1", "1.37.2"}, {"01.37", "01.37.2"},
	} {
		cs, err := ParseAPI("kubernetes", "u", answer(tc.name, tc.latest), apiNow)
		if err != nil {
			t.Errorf("cycle %q, latest %q: %v", tc.name, tc.latest, err)
			continue
		}
		if c, ok := (&Data{products: map[string][]Cycle{"kubernetes": cs}}).Cycle("kubernetes", tc.latest); !ok || c.Name != tc.name {
			t.Errorf("cycle %q, latest %q: the lookup of the latest finds %+v, %v", tc.name, tc.latest, c, ok)
		}
	}
	for _, tc := range []struct{ name, latest string }{
		{"1.37.0", "1.38.0"}, {"1.3", "1.30.1"}, {"v1.37", "1.370.1"}, {"1.37", "1.37rc1"}, {"2", "1.37.2"}, {"1", "1rc1"}, {"1.37-lts", "1.37.2"}, {"1.37abc", "1.37.2"},
	} {
		_, err := ParseAPI("kubernetes", "u", answer(tc.name, tc.latest), apiNow)
		if !errors.Is(err, ErrAPI) || !strings.Contains(err.Error(), "is not a release of cycle") {
			t.Errorf("cycle %q, latest %q: %v, want refused", tc.name, tc.latest, err)
		}
	}
}

// TestZeroDateRefused: 0001-01-01 parses to the zero time, which the data
// reads as no date: an answer (or a data file) whose cycle 1.20 ends on
// 0001-01-01 made it "supported" with no end, and a release date of
// 0001-01-01 one released at no known day. Such a date is refused, named.
func TestZeroDateRefused(t *testing.T) {
	const p = "eol: unusable endoflife.date answer: u: cycle 1: "
	for _, tc := range []struct{ body, want string }{
		{`[{"cycle": "1.20", "releaseDate": "2020-12-08", "eol": "0001-01-01", "latest": "1.20.15"}]`, p + `field "eol": "0001-01-01" is before 1970-01-01`},
		{`[{"cycle": "1.20", "releaseDate": "2020-12-08", "eol": false, "support": "1969-12-31", "latest": "1.20.15"}]`, p + `field "support": "1969-12-31" is before 1970-01-01`},
		{`[{"cycle": "1.20", "releaseDate": "0001-01-01", "eol": false, "latest": "1.20.15"}]`, p + `field "releaseDate": "0001-01-01" is before 1970-01-01`},
		{`{"result": {"releases": [{"name": "1.20", "releaseDate": "2020-12-08", "isEol": true, "eolFrom": "0001-01-01", "latest": {"name": "1.20.15"}}]}}`, p + `field "eolFrom": "0001-01-01" is before 1970-01-01`},
	} {
		cs, err := ParseAPI("kubernetes", "u", []byte(tc.body), apiNow)
		if !errors.Is(err, ErrAPI) || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s:\n got %+v, %v\nwant %s", tc.body, cs, err, tc.want)
		}
	}
	file := "kubernetes:\n  - {releaseCycle: \"1.20\", releaseDate: 2020-12-08, eol: 0001-01-01, latest: \"1.20.15\"}\n"
	d, err := Parse("eol.yaml", []byte(file))
	if !errors.Is(err, ErrData) || !strings.Contains(err.Error(), `eol.yaml:2:`) || !strings.Contains(err.Error(), `"0001-01-01" is before 1970-01-01`) {
		var st string
		if d != nil {
			c, _ := d.Cycle("kubernetes", "1.20.15")
			st = c.Status(apiNow).String()
		}
		t.Errorf("data file: %v (cycle 1.20: %s)", err, st)
	}
}

// parseTestdata reads testdata/NAME, an answer of the v0 API made from a
// real endoflife.date product file, and parses it as of now.
func parseTestdata(t *testing.T, product, name string, now time.Time) ([]Cycle, []byte) {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	cs, err := ParseAPI(product, "u", body, now)
	if err != nil {
		t.Fatal(err)
	}
	return cs, body
}

// TestParseAPISupportBoolean: the v0 API's "support" is whether the cycle
// still has active support, the opposite of the data's eoas (endoflife.date
// writes support: !eoas when eoas is a boolean, and passed its older
// "support: true" through as it was). The answer endoflife.date served for
// containerd at 0aea158 (testdata, made from the real products/containerd.md
// as generate-api-v0.rb makes it) has "support": true for 1.7 and 1.6, both
// in active support then: read as "active support ended", outdated, plan and
// compat called them security-only; and an answer's "support": false for a
// cycle in security support only was "supported".
func TestParseAPISupportBoolean(t *testing.T) {
	now := time.Date(2024, 3, 10, 12, 0, 0, 0, time.UTC)
	cs, _ := parseTestdata(t, "containerd", "containerd-v0@0aea158.json", now)
	for _, c := range cs[:2] {
		if st := c.Status(now); st.State != Supported {
			t.Errorf("containerd %s (\"support\": true): %s, want supported", c.Name, st)
		}
	}
	ended := `[{"cycle": "1.7", "releaseDate": "2023-03-10", "support": false, "eol": "2026-09-01", "latest": "1.7.13"}]`
	cs, err := ParseAPI("containerd", "u", []byte(ended), now)
	if err != nil {
		t.Fatal(err)
	}
	if st := cs[0].Status(now); st.State != SecurityOnly {
		t.Errorf("containerd 1.7 (\"support\": false): %s, want security-only", st)
	}
	// Written to the data file and read back, the cycle keeps its state.
	d, err := New("Source: test\nAs of: 2024-03-10T12:00:00Z", map[string][]Cycle{"containerd": cs})
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse("eol.yaml", d.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := back.Cycle("containerd", "1.7"); c.Status(now).State != SecurityOnly {
		t.Errorf("read back: %s, want security-only\n%s", c.Status(now), d.Encode())
	}
}

// TestParseAPIAnnouncedCycle: endoflife.date accepts a cycle whose release
// is announced for the coming week (its validator refuses a releaseDate or
// latestReleaseDate more than 7 days ahead), such as Kubernetes 1.37 added
// four days before its release beside the real products/kubernetes.md at
// a70eca3 (testdata, made as generate-api-v0.rb makes the answer). Such an
// answer was refused whole, "release date 2026-08-26 is after today: a
// broken answer", so that data refresh failed for every product for up to a
// week. It is read; the cycle is not released yet (plan, outdated and the
// compatibility tables' {minor} pass over it until its day), and a date past
// what endoflife.date accepts is still refused.
func TestParseAPIAnnouncedCycle(t *testing.T) {
	now := time.Date(2026, 8, 22, 9, 0, 0, 0, time.UTC)
	cs, body := parseTestdata(t, "kubernetes", "kubernetes-v0@a70eca3-announced-1.37.json", now)
	if len(cs) != 22 || cs[0].Name != "1.37" || !cs[0].ReleaseDate.After(now) {
		t.Errorf("%d cycles, the first %+v; want 22, the first 1.37 released 2026-08-26", len(cs), cs[0])
	}
	late := strings.Replace(string(body), `"releaseDate":"2026-08-26"`, `"releaseDate":"2026-09-03"`, 1)
	late = strings.Replace(late, `"latestReleaseDate":"2026-08-26"`, `"latestReleaseDate":"2026-09-03"`, 1)
	if _, err := ParseAPI("kubernetes", "u", []byte(late), now); err == nil || !strings.Contains(err.Error(), `"1.37": release date 2026-09-03 is after today (2026-08-22)`) {
		t.Errorf("a release 12 days ahead: %v", err)
	}
}
