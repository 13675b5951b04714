package compat

import (
	"html/template"
	"io"
	"strings"
	"time"

	"github.com/updeb/updeb/pkg/termtext"
)

// matrixStyle is the CSS of the page, the matrix's included (MatrixHTML's
// section needs it on any page that shows it).
const matrixStyle = `body { font-family: system-ui, sans-serif; margin: 2em; color: #1a1a1a; background: #fff; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; }
p.summary { margin-top: 0; color: #444; }
table.matrix { border-collapse: collapse; margin: 1em 0; }
table.matrix th, table.matrix td { border: 1px solid #999; padding: 0.35em 0.7em; text-align: left; vertical-align: top; }
table.matrix thead th { background: #e8e8e8; }
table.matrix th.component { background: #f4f4f4; font-family: monospace; }
td { font-family: monospace; }
td .mark { font-family: system-ui, sans-serif; font-size: 0.8em; font-weight: bold; margin-left: 0.4em; }
td.status-ok { background: #e6f4e6; }
td.status-violation { background: #f8c9c9; }
td.status-eol { background: #d9b3e6; }
td.status-warning { background: #fbe8b0; }
td.status-security-only { background: #dde8f8; }
td.absent { background: #fafafa; color: #999; }
td.defaulted .version { font-style: italic; color: #555; }
td .reason { display: block; font-family: system-ui, sans-serif; font-size: 0.75em; color: #333; max-width: 24em; }
ul.legend { list-style: none; padding: 0; }
ul.legend li { margin: 0.2em 0; }
ul.legend span.swatch { display: inline-block; width: 1.2em; height: 1em; border: 1px solid #999; vertical-align: middle; margin-right: 0.5em; }
.swatch.status-ok { background: #e6f4e6; } .swatch.status-violation { background: #f8c9c9; }
.swatch.status-eol { background: #d9b3e6; } .swatch.status-warning { background: #fbe8b0; }
.swatch.status-security-only { background: #dde8f8; }
li.violation { color: #8b0000; } li.warning { color: #6b4e00; }
table.plan tr.add td { background: #fbe8b0; font-weight: bold; }
table.plan-recipes tr[data-action="bump"] td { background: #dde8f8; }
table.plan-recipes tr[data-action="retire"] td { background: #d9b3e6; }
ul.actions code { font-size: 0.9em; }
footer { margin-top: 2em; border-top: 1px solid #ccc; font-size: 0.8em; color: #444; }
footer pre { white-space: pre-wrap; background: #f6f6f6; padding: 0.6em; }
`

// The page is self-contained: inline CSS, no script, no external resource.
var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>updeb compatibility matrix</title>
<style>
{{.Style}}</style>
</head>
<body>
<h1>Compatibility matrix</h1>
<p class="summary">{{.Summary}}</p>
{{template "matrix" .}}{{.Plan}}<footer>
<p>Checked on {{.Now}}. Rules: Kubernetes version-skew policy (https://kubernetes.io/releases/version-skew-policy/), built into updeb; the tables and dates below, each with the copy used (bundled with updeb, or refreshed by updeb data refresh).</p>
{{range .Sources}}<h3>{{.Title}}</h3>
<pre>{{.Text}}</pre>
{{end}}</footer>
</body>
</html>
{{define "matrix"}}<table class="matrix" id="matrix">
<thead>
<tr><th>component</th>{{range .Sets}}<th scope="col">{{.Name}}<br><small>Kubernetes {{.Kubernetes}}</small></th>{{end}}</tr>
</thead>
<tbody>
{{range .Rows}}<tr><th scope="row" class="component">{{.Component}}</th>{{range .Cells}}{{if .Present}}<td class="status-{{.Status}}{{if .Defaulted}} defaulted{{end}}" data-status="{{.Status}}" title="{{.Title}}"><span class="version">{{.Version}}</span>{{range .Marks}}<span class="mark">{{.}}</span>{{end}}{{range .Shown}}<span class="reason">{{.}}</span>{{end}}</td>{{else}}<td class="absent" data-status="absent">&ndash;</td>{{end}}{{end}}</tr>
{{end}}</tbody>
</table>
<h2>Legend</h2>
<ul class="legend">
<li><span class="swatch status-ok"></span>ok: no finding</li>
{{range .Legend}}<li><span class="swatch status-{{index . 0}}"></span>{{index . 0}}: {{index . 1}}</li>
{{end}}<li><span class="swatch"></span><i>italic</i>: version taken from kubernetes (not set explicitly)</li>
</ul>
<h2>Findings</h2>
{{if .Findings}}<ul class="findings">
{{range .Findings}}<li class="{{.Severity}}"><b>{{.Severity}}</b> {{.Set}} {{.Component}} ({{.Rule}}): {{.Message}}</li>
{{end}}</ul>{{else}}<p>None.</p>{{end}}
{{end}}`))

type htmlCell struct {
	cellView
	Title string
	Shown []string // findings shown under the version (support status stays in the title)
}

type htmlSource struct{ Title, Text string }

type htmlRow struct {
	Component string
	Cells     []htmlCell
}

// htmlPage is what the page template shows.
type htmlPage struct {
	Style    template.CSS
	Summary  string
	Now      string
	Sets     []SetResult
	Rows     []htmlRow
	Legend   [][2]string
	Findings []Finding
	Sources  []htmlSource
	Plan     template.HTML
}

func pageData(r *Report) htmlPage {
	data := htmlPage{Style: MatrixStyle(), Summary: r.summary(), Now: r.Now.UTC().Format(time.DateOnly), Sets: r.Sets, Legend: legend, Findings: r.Findings}
	for _, s := range r.Sources {
		data.Sources = append(data.Sources, htmlSource{Title: s.title(), Text: s.Text})
	}
	data.Plan = r.Extra
	byCell := r.findingsByCell()
	for _, comp := range r.Components {
		row := htmlRow{Component: comp}
		for _, s := range r.Sets {
			fs := byCell[[2]string{s.Name, comp}]
			v := r.view(s, comp, fs)
			c := htmlCell{cellView: v, Title: strings.Join(v.Reasons, "\n")}
			for _, f := range fs {
				c.Shown = append(c.Shown, f.Message)
			}
			row.Cells = append(row.Cells, c)
		}
		data.Rows = append(data.Rows, row)
	}
	return data
}

// renderHTML writes the page, its bidi overrides and zero-width characters
// as escapes (termtext.EscapeFormat), as in the table: a data file's
// header (YAML allows them in a comment) would make its line read
// otherwise than its bytes. The template holds none.
func renderHTML(w io.Writer, r *Report) error {
	var b strings.Builder
	if err := pageTemplate.Execute(&b, pageData(r)); err != nil {
		return err
	}
	_, err := io.WriteString(w, termtext.EscapeFormat(b.String()))
	return err
}

// MatrixHTML is the report's matrix, legend and findings as a section of
// another page (updeb report's), which must carry MatrixStyle.
func MatrixHTML(r *Report) (template.HTML, error) {
	var b strings.Builder
	if err := pageTemplate.ExecuteTemplate(&b, "matrix", pageData(r)); err != nil {
		return "", err
	}
	return template.HTML(b.String()), nil //nolint:gosec // rendered by html/template above
}

// MatrixStyle is the CSS MatrixHTML's section needs.
func MatrixStyle() template.CSS { return template.CSS(matrixStyle) }
