package compat

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/updeb/updeb/pkg/csvsafe"
	"github.com/updeb/updeb/pkg/termtext"
)

// Format is an output format of Render.
type Format string

const (
	FormatTable    Format = "table"
	FormatMarkdown Format = "markdown"
	FormatCSV      Format = "csv"
	FormatHTML     Format = "html"
)

// Formats lists the formats Render accepts.
func Formats() []Format { return []Format{FormatTable, FormatMarkdown, FormatCSV, FormatHTML} }

// Render writes the report in the given format. The output depends only on
// the report (the "now" it was checked at included), never on the clock. It
// is valid UTF-8 (bad bytes U+FFFD, as in the JSON): a data copy's path in
// Latin-1 (--state, data: file:) made the HTML page, which says it is
// UTF-8, and the Markdown unreadable to a UTF-8 reader.
func Render(w io.Writer, r *Report, f Format) error {
	var render func(io.Writer, *Report) error
	switch f {
	case FormatTable:
		render = renderTable
	case FormatMarkdown:
		render = renderMarkdown
	case FormatCSV:
		render = renderCSV
	case FormatHTML:
		render = renderHTML
	default:
		return fmt.Errorf("compat: unknown format %q (want table, markdown, csv or html)", f)
	}
	var b bytes.Buffer
	if err := render(&b, r); err != nil {
		return err
	}
	_, err := w.Write(bytes.ToValidUTF8(b.Bytes(), []byte("\uFFFD")))
	return err
}

// Cell marks, worst first. The status of a cell is its worst mark, "ok" if none.
const (
	markViolation = "violation"
	markEOL       = "eol"
	markWarning   = "warning"
	markSecurity  = "security-only"
	markOK        = "ok"
)

var markSymbols = map[string]string{markViolation: "!", markEOL: "EOL", markWarning: "?", markSecurity: "sec"}

// legend explains the marks, in the order the renderers print them.
var legend = [][2]string{
	{markViolation, "violates a compatibility rule (exit 1)"},
	{markEOL, "release cycle is end-of-life (exit 1)"},
	{markWarning, "outside a recommendation or what upstream tests, or not covered by the data"},
	{markSecurity, "release cycle past end of active support: security fixes only"},
}

// cellView is what every renderer shows about one cell.
type cellView struct {
	Present   bool
	Version   string
	Defaulted bool
	Marks     []string // worst first
	Status    string   // worst mark, or "ok"
	Reasons   []string // one line per finding, plus the support status
	Support   string
}

// findingsByCell indexes the findings by set and component, in their order:
// renderers look up every cell, and FindingsFor's scan per cell makes a
// large report quadratic.
func (r *Report) findingsByCell() map[[2]string][]Finding {
	scanned(len(r.Findings))
	out := map[[2]string][]Finding{}
	for _, f := range r.Findings {
		k := [2]string{f.Set, f.Component}
		out[k] = append(out[k], f)
	}
	return out
}

// view is the cell of comp in set; fs are its findings (findingsByCell).
func (r *Report) view(set SetResult, comp string, fs []Finding) cellView {
	c, ok := set.Cells[comp]
	if !ok {
		return cellView{}
	}
	v := cellView{Present: true, Version: c.Version, Defaulted: c.Defaulted, Support: c.Support}
	if c.To != "" {
		v.Version += ".." + c.To
		v.Reasons = append(v.Reasons, fmt.Sprintf("rolling upgrade from %s to %s", c.Version, c.To))
	}
	for _, ref := range []string{c.Recipe, c.ToRecipe} {
		if ref != "" {
			v.Reasons = append(v.Reasons, "version of recipe "+ref)
		}
	}
	has := map[string]bool{}
	for _, f := range fs {
		switch {
		case f.Rule == RuleEOL:
			has[markEOL] = true
		case f.Severity == Violation:
			has[markViolation] = true
		default:
			has[markWarning] = true
		}
		v.Reasons = append(v.Reasons, findingText(f))
	}
	if c.State == markSecurity {
		has[markSecurity] = true
	}
	if c.Support != "" {
		v.Reasons = append(v.Reasons, fmt.Sprintf("%s cycle %s: %s", comp, c.Cycle, c.Support))
	}
	if c.Defaulted {
		v.Reasons = append(v.Reasons, "version taken from kubernetes (not set explicitly)")
	}
	for _, m := range []string{markViolation, markEOL, markWarning, markSecurity} {
		if has[m] {
			v.Marks = append(v.Marks, m)
		}
	}
	v.Status = markOK
	if len(v.Marks) > 0 {
		v.Status = v.Marks[0]
	}
	return v
}

// findingText is a finding without its set and component, for a cell.
func findingText(f Finding) string { return string(f.Severity) + " (" + f.Rule + "): " + f.Message }

// text is the cell as plain text: "1.35.8", "1.35.8*" (defaulted), "1.36.0 [!]".
func (v cellView) text() string {
	if !v.Present {
		return "-"
	}
	s := v.Version
	if v.Defaulted {
		s += "*"
	}
	if len(v.Marks) > 0 {
		syms := make([]string, len(v.Marks))
		for i, m := range v.Marks {
			syms[i] = markSymbols[m]
		}
		s += " [" + strings.Join(syms, ",") + "]"
	}
	return s
}

func (r *Report) summary() string {
	return fmt.Sprintf("%d release set(s), %d violation(s), %d warning(s); checked on %s",
		len(r.Sets), r.Count(Violation), r.Count(Warning), r.Now.UTC().Format(time.DateOnly))
}

func legendText() []string {
	out := []string{"* = version taken from kubernetes"}
	for _, l := range legend {
		out = append(out, fmt.Sprintf("[%s] = %s: %s", markSymbols[l[0]], l[0], l[1]))
	}
	return out
}

func findingLine(f Finding) string {
	return fmt.Sprintf("%s %s %s (%s): %s", f.Severity, f.Set, f.Component, f.Rule, f.Message)
}

// renderTable writes the matrix for a terminal or a CI log: what the data
// files' headers say reaches it, and their bidi overrides and zero-width
// characters (which YAML allows in a comment) become escapes
// (termtext.EscapeLines), as in the plan's table, so that no line reads
// otherwise than its bytes.
func renderTable(w io.Writer, r *Report) error {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	head := []string{"COMPONENT"}
	for _, s := range r.Sets {
		head = append(head, s.Name)
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	byCell := r.findingsByCell()
	for _, comp := range r.Components {
		row := []string{comp}
		for _, s := range r.Sets {
			row = append(row, r.view(s, comp, byCell[[2]string{s.Name, comp}]).text())
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	b.WriteString("\n")
	for _, l := range legendText() {
		b.WriteString(l + "\n")
	}
	b.WriteString("\n" + r.summary() + "\n")
	for _, f := range r.Findings {
		b.WriteString("  " + findingLine(f) + "\n")
	}
	b.WriteString("\nData:\n")
	for _, l := range sourceLines(r) {
		b.WriteString("  " + l + "\n")
	}
	// Bad bytes are U+FFFD first, as in every format (Render).
	_, err := io.WriteString(w, termtext.EscapeLines(strings.ToValidUTF8(b.String(), "\uFFFD")))
	return err
}

// sourceLines picks from each data header the lines naming a source and the
// line after each (which carries the snapshot commit and date), and the
// overrides in use.
func sourceLines(r *Report) []string {
	var out []string
	for _, src := range r.Sources {
		lines := strings.Split(src.Text, "\n")
		for i, l := range lines {
			if strings.HasPrefix(l, "Override:") {
				out = append(out, src.title()+": "+l)
				continue
			}
			if !strings.Contains(l, "Source:") {
				continue
			}
			s := strings.TrimSpace(l)
			if i+1 < len(lines) && strings.TrimSpace(lines[i+1]) != "" && !strings.HasPrefix(lines[i+1], "Override:") {
				s += " " + strings.TrimSpace(lines[i+1])
			}
			out = append(out, src.title()+": "+s)
		}
	}
	return out
}

// title names a source with its copy and date: "eol.yaml (bundled, as of 2026-08-22)".
func (s Source) title() string {
	t := s.Name + " (" + s.Copy
	if s.AsOf != "" {
		t += ", as of " + s.AsOf
	}
	return t + ")"
}

// mdEscape makes text one line of Markdown that renders as that text: no
// emphasis, link, code span, table cell break or raw HTML.
func mdEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, "|", `\|`, "*", `\*`, "_", `\_`, "`", "\\`", "[", `\[`, "]", `\]`, "<", `\<`, "\n", " ").Replace(s)
}

// mdCode is text as a fenced code block, its fence longer than any run of
// backticks in the text (which would otherwise close it).
func mdCode(text string) string {
	longest, n := 0, 0
	for _, c := range text {
		if c == '`' {
			n++
			longest = max(longest, n)
		} else {
			n = 0
		}
	}
	fence := strings.Repeat("`", max(3, longest+1))
	return fence + "text\n" + text + "\n" + fence + "\n"
}

func renderMarkdown(w io.Writer, r *Report) error {
	var b strings.Builder
	b.WriteString("# Compatibility matrix\n\n" + r.summary() + "\n\n")
	b.WriteString("| component |")
	for _, s := range r.Sets {
		b.WriteString(" " + mdEscape(s.Name) + " |")
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(r.Sets)) + "\n")
	byCell := r.findingsByCell()
	for _, comp := range r.Components {
		b.WriteString("| " + mdEscape(comp) + " |")
		for _, s := range r.Sets {
			b.WriteString(" " + mdEscape(r.view(s, comp, byCell[[2]string{s.Name, comp}]).text()) + " |")
		}
		b.WriteString("\n")
	}
	b.WriteString("\nLegend:\n\n")
	for _, l := range legendText() {
		b.WriteString("- " + mdEscape(l) + "\n")
	}
	b.WriteString("\n## Findings\n\n")
	if len(r.Findings) == 0 {
		b.WriteString("None.\n")
	}
	for _, f := range r.Findings {
		b.WriteString("- **" + string(f.Severity) + "** " + mdEscape(f.Set+" "+f.Component+" ("+f.Rule+"): "+f.Message) + "\n")
	}
	b.WriteString("\n## Data sources\n")
	for _, s := range r.Sources {
		b.WriteString("\n" + mdEscape(s.title()) + ":\n\n" + mdCode(s.Text))
	}
	// Bidi overrides and zero-width characters (a data file's header) are
	// escapes, as on the HTML page: a merge request's comment would
	// otherwise show a line that reads otherwise than its bytes.
	_, err := io.WriteString(w, termtext.EscapeFormat(b.String()))
	return err
}

// renderCSV writes one row per cell (long format, for spreadsheets and scripts):
// set, kubernetes, component, version, defaulted, cycle, support, status, findings.
func renderCSV(w io.Writer, r *Report) error {
	cw := csvsafe.NewWriter(w)
	_ = cw.Write([]string{"set", "kubernetes", "component", "version", "defaulted", "cycle", "support", "status", "findings"})
	byCell := r.findingsByCell()
	for _, s := range r.Sets {
		for _, comp := range r.Components {
			fs := byCell[[2]string{s.Name, comp}]
			v := r.view(s, comp, fs)
			if !v.Present {
				continue
			}
			var msgs []string
			for _, f := range fs {
				msgs = append(msgs, findingText(f))
			}
			_ = cw.Write([]string{s.Name, s.Kubernetes, comp, v.Version, fmt.Sprint(v.Defaulted), s.Cells[comp].Cycle,
				v.Support, v.Status, strings.Join(msgs, " | ")})
		}
	}
	cw.Flush()
	return cw.Error()
}
