package report

import (
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	"github.com/updeb/updeb/internal/compat"
	"github.com/updeb/updeb/internal/plan"
	"github.com/updeb/updeb/internal/signkey"
	"github.com/updeb/updeb/pkg/plural"
	"github.com/updeb/updeb/pkg/termtext"
)

// pageStyle is the page's own CSS, after compat's (the matrix's). Every
// table sits in a box that scrolls sideways by itself, and long words wrap,
// so that the page never scrolls sideways on a laptop screen.
const pageStyle = `
body { margin: 1.2em 1.5em; max-width: 100%; }
h1 { margin-top: 0; }
h2 { margin-top: 1.6em; border-bottom: 1px solid #ccc; }
.scroll { max-width: 100%; overflow-x: auto; }
td, th, li, p { overflow-wrap: anywhere; }
.verdict { border: 3px solid; border-radius: 6px; padding: 0.8em 1.1em; margin: 0.6em 0 1em 0; }
.verdict h2 { margin: 0; border: none; font-size: 1.4em; }
.verdict ul { margin: 0.4em 0 0 0; }
.verdict.level-ok { background: #e6f4e6; border-color: #2e7d32; color: #1b4d1f; }
.verdict.level-action { background: #fbe8b0; border-color: #a67c00; color: #4d3900; }
.verdict.level-violation { background: #f8c9c9; border-color: #b71c1c; color: #5c0000; }
table.status { border-collapse: collapse; margin: 0.8em 0; }
table.status th, table.status td { border: 1px solid #999; padding: 0.3em 0.6em; text-align: left; vertical-align: top; }
table.status thead th { background: #e8e8e8; }
td.state-ok, td.state-current, td.state-valid { background: #e6f4e6; }
td.state-behind, td.state-expires-soon, td.state-old { background: #fbe8b0; }
td.state-eol, td.state-expired { background: #d9b3e6; }
td.state-unknown { background: #eee; }
p.verdict-action { font-weight: bold; color: #4d3900; } p.verdict-ok { font-weight: bold; color: #1b4d1f; }
details { margin: 0.3em 0; }
`

var pageTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>updeb status: {{.Verdict.Text}}</title>
<style>{{.MatrixStyle}}{{.PageStyle}}</style>
</head>
<body>
<h1>updeb status</h1>
<div class="verdict level-{{.Verdict.Level}}" id="verdict" role="status" data-level="{{.Verdict.Level}}">
<h2>{{.Verdict.Text}}</h2>
{{with .Verdict.More}}<p>Also:</p><ul>{{range .}}<li>{{.}}</li>{{end}}</ul>{{end}}
<p>Generated {{.Generated}}.</p>
</div>
<h2 id="sets">Release sets</h2>
<p class="summary">{{.CompatSummary}}</p>
<div class="scroll">{{.Matrix}}</div>
<h2 id="recipes">Recipes against upstream</h2>
<div class="scroll"><table class="status" id="recipe-table">
<thead><tr><th>recipe</th><th>version</th><th>newest in its track</th><th>newest upstream</th><th>status</th><th>support</th><th>action</th></tr></thead>
<tbody>
{{range .Recipes}}<tr data-recipe="{{.Name}}"><td>{{.Name}}</td><td>{{.Version}}</td><td>{{.Newest}}</td><td>{{.Latest}}</td><td class="state-{{.Class}}">{{.Status}}</td><td class="state-{{.SupportClass}}">{{.Support}}</td><td>{{.Action}}</td></tr>
{{end}}</tbody>
</table></div>
<div class="scroll">{{.Plan}}</div>
<h2 id="data">Data tables</h2>
<div class="scroll"><table class="status" id="data-table">
<thead><tr><th>table</th><th>copy</th><th>as of</th><th>age</th></tr></thead>
<tbody>
{{range .Data}}<tr><td>{{.Name}}</td><td>{{.Copy}}</td><td>{{.AsOf}}</td><td class="state-{{.Class}}">{{.Age}}</td></tr>
{{end}}</tbody>
</table></div>
{{with .Repository}}<h2 id="repository">Repository {{.Path}}</h2>
<div class="scroll"><table class="status" id="suite-table">
<thead><tr><th>suite</th><th>generation</th><th>date</th><th>valid until</th><th>status</th><th>signing keys</th><th>components</th></tr></thead>
<tbody>
{{range .Suites}}<tr data-suite="{{.Name}}"><td>{{.Name}}</td><td>{{.Generation}}</td><td>{{.Date}}</td><td>{{.ValidUntil}}</td><td class="state-{{.Class}}">{{.Status}}</td><td class="state-{{.KeyClass}}">{{.Keys}}</td><td>{{.ComponentList}}</td></tr>
{{end}}</tbody>
</table></div>
<h3>In {{.Staging}}, not yet in {{.Production}}</h3>
{{if .Pending}}<div class="scroll"><table class="status" id="pending-table">
<thead><tr><th>package</th><th>component</th><th>{{.Staging}}</th><th>{{.Production}}</th></tr></thead>
<tbody>
{{range .Pending}}<tr><td>{{.Package}}</td><td>{{.Component}}</td><td>{{.Staging}}</td><td>{{if .Production}}{{.Production}}{{else}}(none){{end}}</td></tr>
{{end}}</tbody>
</table></div>{{else if .NoStaging}}<p>Nothing to compare: the repository has no suite {{.Staging}} (report --staging names the suite new builds go to first).</p>{{else}}<p>Nothing: {{.Production}} has every version {{.Staging}} has, or a newer one.</p>{{end}}
<h3>What each suite lists</h3>
{{range .Suites}}{{$suite := .Name}}{{range .Components}}<details><summary>{{$suite}} / {{.Name}}: {{len .Packages}} package version(s)</summary>
<div class="scroll"><table class="status"><thead><tr><th>package</th><th>version</th><th>architectures</th></tr></thead><tbody>
{{range .Packages}}<tr><td>{{.Name}}</td><td>{{.Version}}</td><td>{{range $i, $a := .Architectures}}{{if $i}} {{end}}{{$a}}{{end}}</td></tr>
{{end}}</tbody></table></div></details>
{{end}}{{end}}{{end}}<footer>
<p>Made by updeb report. The same data: report.json and the CSV files beside this page; the metrics: the --metrics file.</p>
</footer>
</body>
</html>
`))

// WriteHTML writes the report as one self-contained page: inline CSS, no
// script, no external resource.
func WriteHTML(w io.Writer, r *Report) error {
	matrix, err := compat.MatrixHTML(r.Compat)
	if err != nil {
		return err
	}
	planSection, err := plan.HTML(r.Plan)
	if err != nil {
		return err
	}
	type recipeRow struct {
		Recipe
		Status, Class, SupportClass string
	}
	type dataRow struct {
		DataTable
		Age, Class string
	}
	type suiteRow struct {
		Suite
		Date, ValidUntil, Status, Class, Keys, KeyClass, ComponentList string
	}
	type repoView struct {
		*Repository
		Suites []suiteRow
		// NoStaging says the repository has no suite --staging names:
		// nothing is pending, and nothing was compared.
		NoStaging bool
	}
	data := struct {
		Verdict       Verdict
		Generated     string
		MatrixStyle   template.CSS
		PageStyle     template.CSS
		CompatSummary string
		Matrix, Plan  template.HTML
		Recipes       []recipeRow
		Data          []dataRow
		Repository    *repoView
	}{Verdict: r.Verdict, Generated: r.Generated.Format(time.RFC3339), MatrixStyle: compat.MatrixStyle(), PageStyle: template.CSS(pageStyle),
		Matrix: matrix, Plan: planSection,
		CompatSummary: fmt.Sprintf("%d release set(s), %d violation(s), %d warning(s)", len(r.Compat.Sets), r.Compat.Count(compat.Violation), r.Compat.Count(compat.Warning))}
	if r.Plan.SetsFile == "" {
		data.CompatSummary = "No release set file: no release set was checked (release-sets.yaml beside recipes/, or report --set FILE)."
	}
	for _, x := range r.Recipes {
		row := recipeRow{Recipe: x, Status: "current", Class: "current", SupportClass: x.State}
		switch {
		case x.Unknown != "":
			row.Status, row.Class = "unknown: "+x.Unknown, "unknown"
		case x.Withdrawn != "":
			// Upstream no longer lists the recipe's release: the verdict
			// asks to check why, and the row must not say "current".
			row.Status, row.Class = x.Version+" withdrawn upstream?", "behind"
			if x.Behind {
				row.Status = "behind; " + row.Status
			}
		case x.Behind:
			row.Status, row.Class = "behind", "behind"
		}
		if x.State == "security-only" || x.State == "supported" {
			row.SupportClass = "ok"
		}
		data.Recipes = append(data.Recipes, row)
	}
	for _, t := range r.Data {
		row := dataRow{DataTable: t, Age: fmt.Sprintf("%d day(s)", t.AgeDays), Class: "ok"}
		switch {
		case t.AsOf == "":
			row.Age, row.Class = "unknown", "unknown"
		case t.Stale && t.AgeSeconds < 0:
			row.Age, row.Class = "dated after today (updeb data refresh)", "old"
		case t.Stale:
			row.Age, row.Class = row.Age+": old (updeb data refresh)", "old"
		}
		data.Data = append(data.Data, row)
	}
	if r.Repository != nil {
		v := &repoView{Repository: r.Repository, NoStaging: true}
		for _, s := range r.Repository.Suites {
			if s.Name == r.Repository.Staging {
				v.NoStaging = false
			}
			row := suiteRow{Suite: s, Date: s.Date.Format(time.RFC3339), Status: "valid (no Valid-Until)", Class: "valid"}
			if !s.ValidUntil.IsZero() {
				row.ValidUntil = s.ValidUntil.Format(time.RFC3339)
				left := time.Duration(s.ExpiresIn) * time.Second
				switch {
				case left <= 0:
					row.Status, row.Class = "EXPIRED: apt refuses it", "expired"
				case left < expiresSoon:
					row.Status, row.Class = "expires in "+hours(left)+": refresh it", "expires-soon"
				default:
					row.Status = "valid for " + hours(left)
				}
			}
			row.KeyClass = "valid"
			for i, k := range s.SigningKeys {
				if i > 0 {
					row.Keys += "; "
				}
				left := time.Duration(k.ExpiresIn) * time.Second
				switch {
				case k.Expires.IsZero():
					row.Keys += k.Fingerprint + " (no expiry)"
				case left <= 0:
					row.Keys += k.Fingerprint + " EXPIRED on " + k.Expires.Format(time.RFC3339) + ": apt refuses the suite"
					row.KeyClass = "expired"
				case left < signkey.ExpiresSoon:
					row.Keys += k.Fingerprint + " expires in " + hours(left) + ": extend it or rotate"
					if row.KeyClass != "expired" {
						row.KeyClass = "expires-soon"
					}
				default:
					row.Keys += k.Fingerprint + " expires on " + k.Expires.Format(time.DateOnly)
				}
			}
			for i, c := range s.Components {
				if i > 0 {
					row.ComponentList += ", "
				}
				row.ComponentList += c.Name
			}
			v.Suites = append(v.Suites, row)
		}
		data.Repository = v
	}
	// Bidi overrides and zero-width characters are escapes
	// (termtext.EscapeFormat): a server's message holding one would make
	// its cell read otherwise than its bytes. The template holds none.
	var b strings.Builder
	if err := pageTemplate.Execute(&b, data); err != nil {
		return err
	}
	_, err = io.WriteString(w, termtext.EscapeFormat(b.String()))
	return err
}

// hours says a duration in days, hours or, under an hour, minutes ("0
// hours" would read as expired already).
func hours(d time.Duration) string {
	h := int(d.Hours())
	switch {
	case h >= 48:
		return fmt.Sprintf("%d days", h/24)
	case h == 0:
		return fmt.Sprintf("%d minute(s)", max(1, int(d.Minutes())))
	}
	return plural.Count(h, "hour", "hours")
}
