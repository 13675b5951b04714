package plan

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"strings"
	"text/tabwriter"
)

// dash stands for an empty cell.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Summary is the plan's first line: the day, the data and where the newest
// patches come from.
func (p *Plan) Summary() string {
	from := "the recipes' watch (GitHub releases)"
	if p.NewestFrom == FromData {
		from = "the support data (offline)"
	}
	age := "of unknown date"
	if p.Data.AsOf != "" {
		age = fmt.Sprintf("as of %s, %d day(s) old", p.Data.AsOf, p.Data.AgeDays)
	}
	copyName := p.Data.Copy + " copy"
	if p.Data.Path != "" {
		copyName += " " + p.Data.Path
	}
	return fmt.Sprintf("Plan for %s. Support data: %s (%s). Newest patches from %s.", p.Now, copyName, age, from)
}

// minorRecipes is a supported minor's recipes cell.
func (m Minor) recipesText() string {
	switch {
	case len(m.Recipes) > 0:
		return strings.Join(m.Recipes, ", ")
	case m.Add:
		return "none: ADD"
	}
	return "none"
}

// newestText is a recipe's newest patch cell.
func (r Recipe) newestText() string {
	if r.NewestError != "" {
		return "unknown (" + r.NewestError + ")"
	}
	return dash(r.NewestPatch)
}

// Render writes the plan as text tables: per product its supported minors
// and its recipes, then the actions with their commands. The output depends
// only on the plan.
func Render(w io.Writer, p *Plan) error {
	var b bytes.Buffer
	b.WriteString(p.Summary() + "\n")
	if len(p.Products) == 0 {
		b.WriteString("\nNo recipe ships a product the support data tracks.\n")
	}
	for _, prod := range p.Products {
		fmt.Fprintf(&b, "\n%s\n", prod.Name)
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		if len(prod.Supported) == 0 {
			fmt.Fprintln(tw, "  no supported minor")
		} else {
			fmt.Fprintln(tw, "  MINOR\tSTATE\tACTIVE SUPPORT UNTIL\tEND OF LIFE\tLATEST\tRECIPES")
		}
		for _, m := range prod.Supported {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", m.Cycle, m.State, dash(m.EndOfActiveSupport), dash(m.EndOfLife), m.Latest, m.recipesText())
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  RECIPE\tVERSION\tSUPPORT\tNEWEST PATCH\tACTION")
		for _, r := range prod.Recipes {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", r.Name, r.Version, r.Support, r.newestText(), dash(r.Action))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(p.Actions) == 0 {
		b.WriteString("\nNo action needed.\n")
	} else {
		fmt.Fprintf(&b, "\nActions (%d):\n", len(p.Actions))
		for _, a := range p.Actions {
			fmt.Fprintf(&b, "  %-6s %s\n", a.Kind, a.Reason)
			if a.Command != "" {
				fmt.Fprintf(&b, "         $ %s\n", a.Command)
			}
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// sectionTemplate is the plan as a section of updeb compat's HTML page; it
// uses the page's table.matrix style.
var sectionTemplate = template.Must(template.New("plan").Parse(`<section id="plan">
<h2>Plan: minors to add, patches to bump, recipes to retire</h2>
<p class="summary">{{.Summary}}</p>
{{range .Products}}<h3>{{.Name}}</h3>
<table class="matrix plan" data-product="{{.Name}}">
<thead><tr><th>minor</th><th>state</th><th>active support until</th><th>end of life</th><th>latest</th><th>recipes</th></tr></thead>
<tbody>
{{range .Supported}}<tr{{if .Add}} class="add"{{end}}><td>{{.Cycle}}</td><td>{{.State}}</td><td>{{.EndOfActiveSupport}}</td><td>{{.EndOfLife}}</td><td>{{.Latest}}</td><td>{{.RecipesText}}</td></tr>
{{end}}</tbody>
</table>
<table class="matrix plan-recipes" data-product="{{.Name}}">
<thead><tr><th>recipe</th><th>version</th><th>support</th><th>newest patch</th><th>action</th></tr></thead>
<tbody>
{{range .Recipes}}<tr data-action="{{.Action}}"><td>{{.Name}}</td><td>{{.Version}}</td><td>{{.Support}}</td><td>{{.NewestText}}</td><td>{{.Action}}</td></tr>
{{end}}</tbody>
</table>
{{end}}<h3>Actions</h3>
{{if .Actions}}<ul class="actions">
{{range .Actions}}<li class="{{.Kind}}"><b>{{.Kind}}</b> {{.Reason}}{{if .Command}}<br><code>{{.Command}}</code>{{end}}</li>
{{end}}</ul>{{else}}<p>No action needed.</p>{{end}}
</section>
`))

// HTML returns the plan as a section of an HTML page (no script, no
// external resource).
func HTML(p *Plan) (template.HTML, error) {
	type minor struct {
		Minor
		RecipesText string
	}
	type rec struct {
		Recipe
		NewestText string
	}
	type product struct {
		Name      string
		Supported []minor
		Recipes   []rec
	}
	data := struct {
		Summary  string
		Products []product
		Actions  []Action
	}{Summary: p.Summary(), Actions: p.Actions}
	for _, pr := range p.Products {
		v := product{Name: pr.Name}
		for _, m := range pr.Supported {
			v.Supported = append(v.Supported, minor{m, m.recipesText()})
		}
		for _, r := range pr.Recipes {
			v.Recipes = append(v.Recipes, rec{r, r.newestText()})
		}
		data.Products = append(data.Products, v)
	}
	var b bytes.Buffer
	if err := sectionTemplate.Execute(&b, data); err != nil {
		return "", err
	}
	return template.HTML(b.String()), nil //nolint:gosec // rendered by html/template above
}
