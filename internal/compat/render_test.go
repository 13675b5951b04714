package compat

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/updeb/updeb/internal/compatdata"
	"github.com/updeb/updeb/internal/supportdata"
)

// Text from data files (an override's reason, the end-of-life data's header)
// stays text in the Markdown report: it neither opens raw HTML nor closes the
// code block that quotes it, whatever backticks, pipes or backslashes it holds.
func TestMarkdownHostileText(t *testing.T) {
	const reason = "<img src=x onerror=alert(1)> \\| `x` _y_ <script>alert(2)</script>"
	file := filepath.Join(t.TempDir(), "compat-data.yaml")
	if err := os.WriteFile(file, []byte(`# As of: 2026-08-22
tables:
  helm:
    source: ["https://example.com/helm"]
    as_of: "2026-08-06"
    rows: [{helm: "3.20", kubernetes_min: "1.32", kubernetes_max: "1.35"}]
    override: [{helm: "3.20", kubernetes_min: "1.32", kubernetes_max: "1.34", reason: "`+strings.ReplaceAll(reason, `\`, `\\`)+`"}]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	data, _, err := compatdata.Load("", file)
	if err != nil {
		t.Fatal(err)
	}
	bundled, err := supportdata.Bundled()
	if err != nil {
		t.Fatal(err)
	}
	eol := *bundled
	eol.Source = "Source: the operator's copy\n```\n<script>alert(3)</script>\n````"
	sets, err := ParseReleaseSets("r.yaml", []byte("sets:\n  - {name: k_135, components: {kubernetes: 1.35.8, helm: 3.20.1}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Render(&b, Evaluate(sets, Inputs{Tables: data.Tables, EOL: &eol, Now: checkDay}), FormatMarkdown); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	const fence = "`````"
	if !strings.Contains(md, "\n"+fence+"text\n"+eol.Source+"\n"+fence+"\n") {
		t.Errorf("the end-of-life header is not inside a fence longer than its backticks:\n%s", md)
	}
	finding := "- **violation** k\\_135 helm (helm-skew): helm 3.20.1 supports Kubernetes 1.32.x to 1.34.x (an override: " +
		"\\<img src=x onerror=alert(1)> \\\\\\| \\`x\\` \\_y\\_ \\<script>alert(2)\\</script>), the set has kubernetes 1.35.8\n"
	if !strings.Contains(md, finding) {
		t.Errorf("the finding is not escaped; want the line\n%s\nin\n%s", finding, md)
	}
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "- ") && strings.Contains(strings.ReplaceAll(line, `\<`, ""), "<") {
			t.Errorf("raw HTML in %q", line)
		}
	}
}

// Rendering looks at each finding a few times, whatever the size of the
// report: a scan of every finding for every cell (sets x components x
// findings) made a 1 MiB release set file take over a minute.
func TestRenderLinear(t *testing.T) {
	sets := make([]ReleaseSet, 2000)
	for i := range sets {
		sets[i] = ReleaseSet{Name: fmt.Sprintf("s%d", i), Components: map[string]string{
			"kubernetes": fmt.Sprintf("1.3%d.%d", i%10, i), "helm": "3.20.1", "containerd": "2.0.1", "etcd": "3.5.1", "cri-tools": "1.30.0"}}
	}
	r := Evaluate(sets, Inputs{Now: checkDay})
	if len(r.Findings) < 3*len(r.Sets) {
		t.Fatalf("%d findings for %d sets: too few to tell", len(r.Findings), len(r.Sets))
	}
	var n int
	scanned = func(k int) { n += k }
	defer func() { scanned = func(int) {} }()
	for _, f := range Formats() {
		n = 0
		if err := Render(io.Discard, r, f); err != nil {
			t.Fatal(err)
		}
		if n > 2*len(r.Findings) {
			t.Errorf("%s: rendering %d findings looked at findings %d times", f, len(r.Findings), n)
		}
	}
}

// Every format is valid UTF-8 whatever bytes a data copy's path holds (a
// --state folder named in Latin-1): the HTML page says it is UTF-8, and a
// byte that is not made it and the Markdown unreadable to a UTF-8 reader
// (Python's open(...).read()).
func TestRenderValidUTF8(t *testing.T) {
	bundled, err := supportdata.Bundled()
	if err != nil {
		t.Fatal(err)
	}
	sets, err := ParseReleaseSets("r.yaml", []byte("sets:\n  - {name: k135, components: {kubernetes: 1.35.8}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	r := Evaluate(sets, Inputs{EOL: bundled, EOLCopy: "refreshed /var/lib/up\xe9deb/support/eol.yaml", Now: checkDay})
	for _, f := range Formats() {
		var b bytes.Buffer
		if err := Render(&b, r, f); err != nil {
			t.Fatal(err)
		}
		// The CSV file has no data sources to name the copy in.
		if !utf8.Valid(b.Bytes()) || f != FormatCSV && !strings.Contains(b.String(), "up\uFFFDdeb") {
			t.Errorf("--format %s is not UTF-8 with the path's byte as U+FFFD:\n%s", f, b.String())
		}
	}
}

// The end-of-life data's header (the YAML parser refuses control
// characters in it, not bidi overrides or zero-width characters) cannot
// make a line of the table `updeb compat` prints in a terminal or a CI log,
// or of its HTML page or Markdown, read otherwise than its bytes: those become
// escapes, as in the plan's table.
func TestTableHostileText(t *testing.T) {
	bundled, err := supportdata.Bundled()
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := supportdata.Parse("eol.yaml", []byte("# Source: https://endoflife.date \u202egro.evil//:sptth\u200b\n# As of: 2026-08-22\nkubernetes: []\n"))
	if err != nil {
		t.Fatal(err)
	}
	eol := *bundled
	eol.Source = parsed.Source
	sets, err := ParseReleaseSets("r.yaml", []byte("sets:\n  - {name: k_135, components: {kubernetes: 1.35.8, helm: 3.20.1}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []Format{FormatTable, FormatHTML, FormatMarkdown} {
		var b bytes.Buffer
		if err := Render(&b, Evaluate(sets, Inputs{EOL: &eol, Now: checkDay}), f); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if strings.ContainsAny(out, "\u202e\u200b") {
			t.Errorf("--format %s holds a bidi override or a zero-width character:\n%q", f, out)
		}
		if want := `Source: https://endoflife.date \u202egro.evil//:sptth\u200b`; !strings.Contains(out, want) {
			t.Errorf("no %s in --format %s:\n%s", want, f, out)
		}
	}
}
