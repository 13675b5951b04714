package compat

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// Rendering takes time in proportion to the report: eight times the sets
// (each with its findings), about eight times the time, not 64 (a scan
// of every finding for every cell made a 1 MiB release set file take over a
// minute). The ratio, not a time, is checked: the machine's speed cancels out.
func TestRenderLinear(t *testing.T) {
	report := func(n int) *Report {
		sets := make([]ReleaseSet, n)
		for i := range sets {
			sets[i] = ReleaseSet{Name: fmt.Sprintf("s%d", i), Components: map[string]string{
				"kubernetes": fmt.Sprintf("1.3%d.%d", i%10, i), "helm": "3.20.1", "containerd": "2.0.1", "etcd": "3.5.1", "cri-tools": "1.30.0"}}
		}
		return Evaluate(sets, Inputs{Now: checkDay})
	}
	small, large := report(250), report(2000)
	if len(large.Findings) < 3*len(large.Sets) {
		t.Fatalf("%d findings for %d sets: too few to tell", len(large.Findings), len(large.Sets))
	}
	elapsed := func(r *Report) time.Duration {
		best := time.Duration(math.MaxInt64)
		for range 2 {
			start := time.Now()
			if err := Render(io.Discard, r, FormatCSV); err != nil {
				t.Fatal(err)
			}
			best = min(best, time.Since(start))
		}
		return best
	}
	s, l := elapsed(small), elapsed(large)
	t.Logf("%v for %d sets, %v for %d", s, len(small.Sets), l, len(large.Sets))
	if l > 24*s {
		t.Errorf("rendering 8 times the sets took %.1f times as long (%v, %v): want about 8", float64(l)/float64(s), s, l)
	}
}
