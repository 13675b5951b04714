package compat

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/supportdata"
	"github.com/updeb/updeb/internal/testkit/testenv"
)

// TestHTMLRendersInChromium loads a page with violations, EOL and warning cells
// in headless Chromium: the DOM it builds must hold the matrix with the expected
// cells, and a screenshot must show more than a blank page.
func TestHTMLRendersInChromium(t *testing.T) {
	data, err := supportdata.Bundled()
	if err != nil {
		t.Fatal(err)
	}
	sets, err := ParseReleaseSets("sets.yaml", []byte(`sets:
  - name: k135
    components: {kubernetes: 1.35.8, kubelet: 1.36.4, helm: 3.21.4, containerd: 2.3.4}
  - name: k131
    components: {kubernetes: 1.31.14, helm: 3.18.4}
`))
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := Render(&page, Evaluate(sets, Inputs{EOL: data, Now: checkDay}), FormatHTML); err != nil {
		t.Fatal(err)
	}
	for _, forbidden := range []string{"<script", "http-equiv", "<link", "src=", "@import", "url("} {
		if bytes.Contains(page.Bytes(), []byte(forbidden)) {
			t.Errorf("page is not self-contained: contains %q", forbidden)
		}
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "compat.html")
	if err := os.WriteFile(path, page.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	dom := string(testenv.Chromium(t, path, "--dump-dom"))
	if !strings.Contains(dom, `<table class="matrix" id="matrix">`) {
		t.Fatalf("DOM has no matrix table:\n%s", dom)
	}
	// Columns sorted by Kubernetes version: k131 before k135.
	if i, j := strings.Index(dom, ">k131<"), strings.Index(dom, ">k135<"); i < 0 || j < 0 || i > j {
		t.Errorf("column headers missing or out of order (k131 at %d, k135 at %d)", i, j)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`<td class="status-eol" data-status="eol" title="[^"]*end-of-life[^"]*"><span class="version">1\.31\.14</span>`),
		regexp.MustCompile(`<td class="status-violation" data-status="violation" title="violation \(kubelet-skew\): kubelet 1\.36\.4 is 1 minor newer[^"]*"><span class="version">1\.36\.4</span>`),
		regexp.MustCompile(`<td class="status-warning" data-status="warning" title="warning \(containerd-recommended\)[^"]*"><span class="version">2\.3\.4</span>`),
		regexp.MustCompile(`<td class="status-ok defaulted" data-status="ok" title="[^"]*"><span class="version">1\.35\.8</span>`),
		regexp.MustCompile(`<td class="absent" data-status="absent">–</td>`),
		regexp.MustCompile(`Snapshot commit a70eca337600e7d721dc48112c271f98661d208b`),
	} {
		if !want.MatchString(dom) {
			t.Errorf("DOM lacks %s", want)
		}
	}
	if n := strings.Count(dom, `<tr><th scope="row"`); n != 9 {
		t.Errorf("DOM has %d component rows, want 9 (7 Kubernetes, containerd, helm)", n)
	}

	png := filepath.Join(dir, "compat.png")
	testenv.Chromium(t, path, "--screenshot="+png, "--window-size=1280,1400", "--hide-scrollbars")
	b, err := os.ReadFile(png)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) || len(b) < 40_000 {
		t.Errorf("screenshot is %d bytes (want a PNG over 40 KB: a rendered table, not a blank page)", len(b))
	}
	if dst := os.Getenv("COMPAT_SCREENSHOT"); dst != "" { // for a person to look at
		_ = os.WriteFile(dst, b, 0o644)
	}
}
