package compatdata

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/supportdata"
)

const fileHead = "# As of: 2026-11-24\ntables:\n"

func TestParseFileErrors(t *testing.T) {
	helm := func(rows string) string {
		return fileHead + "  helm:\n    source: [\"https://example.org/skew.md\"]\n    as_of: \"2026-11-24\"\n" + rows
	}
	for _, tc := range []struct{ in, want string }{
		{"tables:\n  helm: {}\n", `f.yaml:1:1: the header comment has no "As of:" line`},
		{"# As of: soon\ntables: {}\n", `f.yaml:1:1: header line "As of: soon"`},
		{fileHead + "  flannel: {}\n", `f.yaml:3:3: tables: unknown field "flannel" (known: calico, cilium, containerd, cri-tools, helm, istio, kubeadm-etcd)`},
		{"# As of: 2026-11-24\nrows: []\n", `unknown field "rows" (known: endoflife, tables)`},
		{fileHead + "  helm: {source: [], as_of: \"2026-11-24\", rows: []}\n", "f.yaml:3:18: helm: source: name at least one URL"},
		{fileHead + "  helm: {source: [\"file:///etc/passwd\"], as_of: \"2026-11-24\", rows: []}\n", `helm: source "file:///etc/passwd": want an http:// or https:// URL`},
		{fileHead + "  helm: {source: [\"https://x.org/a\"], as_of: \"yesterday\", rows: []}\n", `helm: as_of: "yesterday" is neither a day`},
		{helm("    rows:\n      - {helm: \"4.2\", kubernetes_min: \"1.36\", kubernetes_max: \"1.33\"}\n"), `f.yaml:7:9: helm row "4.2": the Kubernetes range 1.36-1.33: the bounds are out of order`},
		{helm("    rows:\n      - {helm: \"4.2\", kubernetes_min: \"1.33\", kubernetes_max: \"1.36\"}\n      - {helm: \"4.2\", kubernetes_min: \"1.33\", kubernetes_max: \"1.36\"}\n"), `f.yaml:8:9: helm row "4.2": given twice (first at line 7)`},
		{helm("    rows:\n      - {helm: \"v4.2\", kubernetes_min: \"1.33\", kubernetes_max: \"1.36\", kube: 1}\n"), `helm row: helm "v4.2" is not MAJOR.MINOR`},
		{helm("    rows: []\n    override:\n      - {helm: \"4.3\", kubernetes_min: \"1.34\", kubernetes_max: \"1.37\"}\n"), `f.yaml:8:9: helm override: missing required field "reason"`},
		{helm("    rows: []\n    override:\n      - {helm: \"4.3\", kubernetes_min: \"1.34\", kubernetes_max: \"1.37\", reason: \"  \"}\n"), `helm override: reason: empty: say why`},
		{helm("    rows: []\n    override:\n      - {helm: \"4.3\", kubernetes_min: \"1.34\", kubernetes_max: \"1.37\", reason: \"a\\nb\"}\n"), `helm override: reason: expected one line of text`},
		{fileHead + "  containerd: {source: [\"https://x.org/a\"], as_of: \"2026-11-24\", rows: [{kubernetes: \"1.36\", containerd: [\"2.3.0\"]}]}\n", `containerd row: containerd "2.3.0" is not X.Y.Z+ or X.Y`},
		{fileHead + "  calico: {source: [\"https://x.org/a\"], as_of: \"2026-11-24\", rows: [{calico: \"3.32\", kubernetes: [\"1.34\", \"1.36\"]}]}\n", `calico row "3.32": the Kubernetes versions 1.34, 1.36: not ascending one minor at a time (1.36 after 1.34)`},
		{fileHead + "  kubeadm-etcd: {source: [\"https://x.org/a\"], as_of: \"2026-11-24\", rows: [{kubernetes: \"1.36\", etcd: \"3.6.7-0\", min_external: \"3.5\"}]}\n", `kubeadm-etcd row: etcd "3.6.7-0" is not X.Y.Z`},
		{fileHead + "  cri-tools: {source: [\"https://x.org/a\"], as_of: \"2026-11-24\", rows: [{kubernetes_min: \"1.16\", kubernetes_max: \"\", cri_tools: \"newest\"}]}\n", `cri-tools row "1.16": cri-tools "newest": expected same-minor or a version`},
		{fileHead + "  helm: {}\nendoflife: {header: [\"Source: x\"], products: {}}\n", `endoflife: header: no "As of:" line`},
		{fileHead + "  helm: {}\nendoflife: {header: [\"As of: 2026-11-24\"], products: {kubernetes: [{releaseCycle: \"1.36\"}]}}\n", `kubernetes: missing field "releaseDate"`},
		// The header is printed in compat's report: no escape sequence for the terminal, no line break.
		{fileHead + "  helm: {}\nendoflife: {header: [\"Source: \\e]0;owned\\a\\e[31mred\", \"As of: 2026-11-24\"], products: {}}\n", `f.yaml:4:22: endoflife: header: expected one line of text, without control characters`},
		{fileHead + "  helm: {}\nendoflife: {header: [\"Source: a\\nb\", \"As of: 2026-11-24\"], products: {}}\n", `f.yaml:4:22: endoflife: header: expected one line`},
		// Nor a bidi override or a zero-width character, which make a line
		// read otherwise than its bytes (data status prints the reasons).
		{helm("    rows: []\n    override:\n      - {helm: \"4.3\", kubernetes_min: \"1.34\", kubernetes_max: \"1.37\", reason: \"tested \\u202Edevorppa\\u202C\"}\n"), `helm override: reason: expected one line of text, without control characters, bidi overrides`},
		{fileHead + "  helm: {}\nendoflife: {header: [\"Source: a\\u200Bb\", \"As of: 2026-11-24\"], products: {}}\n", `f.yaml:4:22: endoflife: header: expected one line of text, without control characters, bidi overrides`},
	} {
		_, err := Parse("f.yaml", []byte(tc.in))
		if err == nil || !errors.Is(err, ErrFile) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q):\n got %v\nwant %s", tc.in, err, tc.want)
		}
	}
}

// The bundled copy reads back byte for byte after Encode (its header and
// every table), and a file without some tables parses (Load fills them in).
func TestEncodeRoundTrip(t *testing.T) {
	if again := Encode(mustParse(t, embedded)); !bytes.Equal(again, embedded) {
		t.Errorf("the bundled copy does not encode back to itself:\n%s", again)
	}
	one := mustParse(t, []byte(fileHead+"  cilium: {source: [\"https://x.org/a\"], as_of: \"2026-11-24T10:00:00Z\", rows: [{cilium: \"1.18\", kubernetes: [\"1.31\", \"1.32\"]}],\n    override: [{cilium: \"1.19\", kubernetes: [\"1.33\"], reason: \"our tests \\\"pass\\\"\"}]}\n"))
	if one.Table(Helm) != nil || len(one.Table(Cilium).Effective()) != 2 {
		t.Errorf("tables %v", one.tables)
	}
	if back := mustParse(t, Encode(one)); !bytes.Equal(Encode(back), Encode(one)) {
		t.Errorf("does not round-trip:\n%s", Encode(one))
	}
}

func mustParse(t testing.TB, b []byte) *Tables {
	t.Helper()
	tb, err := Parse("f.yaml", b)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// FuzzParseFile: the data file parser never panics, and what it accepts
// encodes to a file that reads back the same.
func FuzzParseFile(f *testing.F) {
	f.Add(embedded)
	f.Add([]byte(fileHead + "  helm: {source: [\"https://x.org/a\"], as_of: \"2026-11-24\", rows: [], override: [{helm: \"4.3\", kubernetes_min: \"1.34\", kubernetes_max: \"1.37\", reason: \"r\"}]}\n"))
	f.Add([]byte(fileHead + "  helm: {}\nendoflife: {header: [\"As of: 2026-11-24\"], products: {kubernetes: [{releaseCycle: \"1.36\", releaseDate: 2026-04-22, eol: false, latest: \"1.36.4\"}]}}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		tb, err := Parse("f.yaml", b)
		if err != nil {
			return
		}
		out := Encode(tb)
		back, err := Parse("f.yaml", out)
		if err != nil {
			t.Fatalf("Encode's output does not parse: %v\n%s", err, out)
		}
		if again := Encode(back); !bytes.Equal(again, out) {
			t.Fatalf("Encode's output reads back otherwise:\n%s\n%s", out, again)
		}
	})
}

// TestLoadFutureCopy: a refreshed copy dated after today (its header or a
// table: written with a clock years ahead, or edited) would be "0 days old",
// never stale, and newer than every bundled copy a later updeb brings; Load
// passes it over with a warning, as it does an older one.
func TestLoadFutureCopy(t *testing.T) {
	bundled, err := os.ReadFile(filepath.Join("data", "compat.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string][2]string{
		"header": {"# As of: 2026-08-06\n", "# As of: 9999-12-31\n"},
		"table":  {`    as_of: "2026-08-13"`, `    as_of: "9999-12-31"`},
	} {
		t.Run(name, func(t *testing.T) {
			if !bytes.Contains(bundled, []byte(edit[0])) {
				t.Fatalf("the bundled copy lacks %q", edit[0])
			}
			state := t.TempDir()
			os.MkdirAll(filepath.Join(state, "support"), 0o755)
			os.WriteFile(filepath.Join(state, File), bytes.Replace(bundled, []byte(edit[0]), []byte(edit[1]), 1), 0o644)
			set, warnings, err := Load(state, "")
			if err != nil {
				t.Fatal(err)
			}
			if c := set.Tables.Table(CRITools).Copy; c != "bundled" || len(warnings) != 1 || !strings.Contains(warnings[0], "as of 9999-12-31, after today") {
				t.Errorf("copy %q, warnings %q", c, warnings)
			}
		})
	}
}

// TestLoadFutureRepositoryFile: the repository's data file dated after
// today (refreshed under a clock far ahead, then committed) is still the
// copy in use, but says so and counts as stale: it was "0 days old" for
// ever, so no command, no status page and no tracking job ever asked for a
// refresh again, however long upstream had been out of reach.
func TestLoadFutureRepositoryFile(t *testing.T) {
	bundled, err := os.ReadFile(filepath.Join("data", "compat.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "compat-data.yaml")
	os.WriteFile(file, bytes.Replace(bundled, []byte(`    as_of: "2026-08-13"`), []byte(`    as_of: "9999-12-31"`), 1), 0o644)
	set, warnings, err := Load(t.TempDir(), file)
	if err != nil {
		t.Fatal(err)
	}
	if c := set.Tables.Table(CRITools).Copy; c != "repository "+file || len(warnings) != 2 ||
		!strings.Contains(warnings[0], "the repository data file "+file+" is as of 9999-12-31, after today") {
		t.Errorf("copy %q, warnings %q", c, warnings)
	}
	now := time.Now()
	for _, st := range set.Status(now, 3650*24*time.Hour) {
		if st.Stale != (st.Table == CRITools) {
			t.Errorf("%s as of %s: stale %v", st.Table, st.AsOf.Format(time.DateOnly), st.Stale)
		}
	}
	ahead := *set.EOL.Data
	ahead.AsOf = now.AddDate(1, 0, 0)
	if future := (&supportdata.Copy{Data: &ahead}); !future.Stale(now, 3650*24*time.Hour) {
		t.Error("end-of-life data dated a year ahead is not stale")
	}
}

// An override of cri-tools' matrix wins wherever its range covers the
// Kubernetes minor, also over an upstream row of another key that covers it
// too: an override 1.25-1.28 beside upstream's "1.27 and newer" is the row
// of 1.27 and 1.28, not silently passed over there.
func TestCRIToolsOverrideOverlapping(t *testing.T) {
	tb := mustParse(t, []byte(fileHead+`  cri-tools:
    source: ["https://x.org/a"]
    as_of: "2026-11-24"
    rows:
      - {kubernetes_min: "1.27", kubernetes_max: "", cri_tools: "same-minor"}
      - {kubernetes_min: "1.16", kubernetes_max: "1.26", cri_tools: "same-minor"}
    override:
      - {kubernetes_min: "1.25", kubernetes_max: "1.28", cri_tools: "1.25.0", reason: "our nodes pin crictl 1.25"}
`))
	for k, want := range map[string]string{"1.24.9": "same-minor", "1.25.3": "1.25.0", "1.27.1": "1.25.0", "1.28.0": "1.25.0", "1.29.2": "same-minor"} {
		m, ok := tb.CRIToolsFor(k)
		if !ok || m.Row.CRITools != want || (want == "1.25.0") != (m.Override != nil) {
			t.Errorf("kubernetes %s: %+v (found %t), want cri-tools %s", k, m.Row, ok, want)
		}
	}
}

// TestLoadNewerTable: the state folder's copy written by a refresh of some
// tables (--table) carries the others as they were, so after an upgrade of
// updeb it holds tables newer than the bundled ones (helm, fetched) and
// older ones (containerd, an older updeb's snapshot). Each table is the
// newer of the two by its own date, whatever the file's "As of:" says: the
// older containerd (which lacks 1.36) was used, and labelled refreshed,
// since the file as a whole was dated after the bundled copy. A table of
// the bundled copy's date is the bundled one, carried.
func TestLoadNewerTable(t *testing.T) {
	bundled, err := Bundled()
	if err != nil {
		t.Fatal(err)
	}
	day := func(s string) time.Time { d, _ := supportdata.ParseAsOf(s); return d }
	with := func(name, asOf string, rows int) *Table {
		tb := *bundled.Table(name)
		tb.AsOf, tb.Rows = day(asOf), tb.Rows[rows:]
		tb.seal() // its lookups read the rows it has now
		return &tb
	}
	for _, header := range []string{"2026-11-20T10:00:00Z", "2026-08-01"} {
		t.Run(header, func(t *testing.T) {
			state := t.TempDir()
			path := filepath.Join(state, File)
			os.MkdirAll(filepath.Dir(path), 0o755)
			copyOf := &Tables{Source: "As of: " + header, tables: map[string]*Table{
				Helm: with(Helm, "2026-11-20T10:00:00Z", 0), Containerd: with(Containerd, "2026-05-01", 1),
				Istio: with(Istio, "2026-08-22", 0), Calico: with(Calico, "2026-08-21", 0)}}
			os.WriteFile(path, Encode(copyOf), 0o644)
			set, warnings, err := Load(state, "")
			if err != nil {
				t.Fatal(err)
			}
			if want := "the refreshed compatibility tables " + path + " hold tables older than the bundled copy's: containerd (as of 2026-05-01, bundled 2026-08-22); using the bundled ones (the next 'updeb data refresh' drops them)"; len(warnings) != 1 || warnings[0] != want {
				t.Errorf("warnings %q\nwant %q", warnings, want)
			}
			want := map[string]string{Helm: "refreshed " + path + " 2026-11-20"}
			for _, st := range set.Status(day("2026-11-24"), 30*24*time.Hour)[1:] {
				w, ok := want[st.Table]
				if !ok {
					w = "bundled " + bundled.Table(st.Table).AsOf.Format(time.DateOnly)
				}
				if got := st.Copy + " " + st.AsOf.Format(time.DateOnly); got != w {
					t.Errorf("%s: %s, want %s", st.Table, got, w)
				}
			}
			if m, ok := set.Tables.ContainerdFor("1.36.2"); !ok || m.Table.Copy != "bundled" {
				t.Errorf("containerd for Kubernetes 1.36: %+v %v", m, ok)
			}
		})
	}
}
