package plan

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/updeb/updeb/pkg/termtext"
)

// dash stands for an empty cell.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Summary is the plan's first line: the day, the data and where the newest
// releases come from.
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
	return fmt.Sprintf("Plan for %s. Support data: %s (%s). Newest releases from %s.", p.Now, copyName, age, from)
}

// Verdict is the plan's one-line answer: how many actions, of which kinds.
// No action is "none needed" only when every watched recipe was checked:
// one whose newest release is unknown (the API failed, rate limited) may
// well be behind.
func (p *Plan) Verdict() string {
	if len(p.Actions) == 0 {
		if unknown := p.unchecked(); len(unknown) > 0 {
			return fmt.Sprintf("No action found, but %d recipe(s) could not be checked against upstream, their newest release unknown: %s.", len(unknown), strings.Join(unknown, ", "))
		}
		if gone := p.withdrawn(); len(gone) > 0 {
			return fmt.Sprintf("No action found, but %d recipe(s) are at a release upstream no longer lists (deleted, or made a draft again: withdrawn?): %s.", len(gone), strings.Join(gone, ", "))
		}
		if marked := p.MarkedButSupported(); len(marked) > 0 {
			return fmt.Sprintf("No action found, but %d recipe(s) are marked end-of-life while the support data calls their cycle supported: %s.", len(marked), strings.Join(marked, ", "))
		}
		if p.SetsFile == "" {
			// No release set file (a run started in another folder):
			// nothing was checked, which "passes" would hide.
			return "No action needed: every recipe is at the newest release of its track; no release set file, so no release set was checked."
		}
		return "No action needed: every recipe is at the newest release of its track and every release set passes."
	}
	count := map[string]int{}
	for _, a := range p.Actions {
		count[a.Kind]++
	}
	var parts []string
	for _, k := range []string{ActAdd, ActBump, ActRetire, ActCompat} {
		if count[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", count[k], k))
		}
	}
	return fmt.Sprintf("%d action(s) needed: %s.", len(p.Actions), strings.Join(parts, ", "))
}

// unchecked names the watched recipes whose newest release is unknown.
func (p *Plan) unchecked() []string {
	var out []string
	for _, c := range p.Components {
		for _, r := range c.Recipes {
			if r.NewestError != "" && !r.NoWatch {
				out = append(out, r.Name)
			}
		}
	}
	return out
}

// withdrawn names the recipes whose own release is gone upstream, with
// their version.
func (p *Plan) withdrawn() []string {
	var out []string
	for _, c := range p.Components {
		for _, r := range c.Recipes {
			if r.Withdrawn != "" {
				out = append(out, r.Name+" "+r.Version)
			}
		}
	}
	return out
}

// MarkedButSupported names the recipes whose end-of-life: mark holds back
// a line the support data calls supported, with their support text (which
// says to remove the mark).
func (p *Plan) MarkedButSupported() []string {
	var out []string
	for _, c := range p.Components {
		for _, r := range c.Recipes {
			if r.MarkedButSupported != "" {
				out = append(out, r.Name+" ("+r.Support+")")
			}
		}
	}
	return out
}

// recipesText is a supported minor's recipes cell.
func (m Minor) recipesText() string {
	switch {
	case len(m.Recipes) > 0:
		return strings.Join(m.Recipes, ", ")
	case m.Add:
		return "none: ADD"
	case m.Bump != "":
		return "none: BUMP " + m.Bump
	}
	return "none"
}

// newestText is a recipe's newest-release cell.
func (r Recipe) newestText() string {
	if r.NewestError != "" {
		return "unknown (" + r.NewestError + ")"
	}
	s := dash(r.Newest)
	if r.Latest != "" && r.Latest != r.Newest {
		s += " (newest overall " + r.Latest + ")"
	}
	if r.Withdrawn != "" {
		s += "; " + r.Version + " withdrawn upstream?"
	}
	return s
}

// setsText says what an action does to the release sets, "" for nothing.
func (a Action) setsText() string {
	var parts []string
	for _, e := range a.Sets {
		var what []string
		if e.New {
			what = append(what, "adds "+e.Set)
		}
		if len(e.Fixes) > 0 {
			what = append(what, fmt.Sprintf("fixes %s (%s)", e.Set, strings.Join(e.Fixes, "; ")))
		}
		if len(e.Breaks) > 0 {
			what = append(what, fmt.Sprintf("breaks %s (%s)", e.Set, strings.Join(e.Breaks, "; ")))
		}
		if len(e.Warns) > 0 {
			what = append(what, fmt.Sprintf("warns %s (%s)", e.Set, strings.Join(e.Warns, "; ")))
		}
		parts = append(parts, strings.Join(what, ", "))
	}
	return strings.Join(parts, "; ")
}

// setText is a set's violations in a cell.
func setText(vs []string) string {
	if len(vs) == 0 {
		return "ok"
	}
	return fmt.Sprintf("%d violation(s)", len(vs))
}

// Render writes the plan as text: the verdict, per component its supported
// minors (where the support data covers it) and its recipes, the release
// sets today and after the plan, then the actions with their commands and
// what they do to the release sets. The output depends only on the plan;
// control characters in it are escaped (termtext.EscapeLines), and a
// server's message stays on its row (termtext.Escape).
func Render(w io.Writer, p *Plan) error {
	var b bytes.Buffer
	b.WriteString(p.Summary() + "\n" + p.Verdict() + "\n")
	if len(p.Components) == 0 {
		b.WriteString("\nNo recipe.\n")
	}
	for _, c := range p.Components {
		head := c.Name
		var notes []string
		if c.Series {
			notes = append(notes, "a versioned series")
		}
		if c.Product != "" {
			notes = append(notes, "support data: "+c.Product)
		}
		if len(notes) > 0 {
			head += " (" + strings.Join(notes, "; ") + ")"
		}
		fmt.Fprintf(&b, "\n%s\n", head)
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		if c.Product != "" {
			if len(c.Supported) == 0 {
				fmt.Fprintln(tw, "  no supported minor")
			} else {
				fmt.Fprintln(tw, "  MINOR\tSTATE\tACTIVE SUPPORT UNTIL\tEND OF LIFE\tLATEST\tRECIPES")
			}
			for _, m := range c.Supported {
				fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", m.Cycle, m.State, dash(m.EndOfActiveSupport), dash(m.EndOfLife), m.Latest, m.recipesText())
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		}
		fmt.Fprintln(tw, "  RECIPE\tVERSION\tTRACK\tSUPPORT\tNEWEST IN TRACK\tACTION")
		for _, r := range c.Recipes {
			// A server's message is one cell: its line breaks would make
			// rows of their own.
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", r.Name, r.Version, dash(r.Track), r.Support, termtext.Escape(r.newestText()), dash(r.Action))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(p.Sets) > 0 {
		fmt.Fprintf(&b, "\nRelease sets (%s):\n", p.SetsFile)
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  SET\tKUBERNETES\tTODAY\tAFTER THE PLAN")
		for _, s := range p.Sets {
			today := setText(s.Violations)
			if s.New {
				today = "(added by the plan)"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", s.Name, dash(s.Kubernetes), today, setText(s.After))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(p.Actions) > 0 {
		fmt.Fprintf(&b, "\nActions (%d):\n", len(p.Actions))
		for _, a := range p.Actions {
			fmt.Fprintf(&b, "  %-6s %s\n", a.Kind, a.Reason)
			if a.Command != "" {
				fmt.Fprintf(&b, "         $ %s\n", a.Command)
			}
			if s := a.setsText(); s != "" && a.Kind != ActCompat {
				fmt.Fprintf(&b, "         release sets: %s\n", s)
			}
		}
	}
	// Upstream's words (a server's error message in a newest-release
	// cell) reach the terminal: their escape sequences do not.
	_, err := io.WriteString(w, termtext.EscapeLines(b.String()))
	return err
}

// sectionTemplate is the plan as a section of an HTML page (updeb compat's
// and updeb report's); it uses the page's table.matrix style.
var sectionTemplate = template.Must(template.New("plan").Parse(`<section id="plan">
<h2>Plan: what to add, bump and retire</h2>
<p class="verdict {{if or .Actions .Unchecked}}verdict-action{{else}}verdict-ok{{end}}">{{.Verdict}}</p>
<p class="summary">{{.Summary}}</p>
<h3>Actions</h3>
{{if .Actions}}<ul class="actions">
{{range .Actions}}<li class="{{.Kind}}"><b>{{.Kind}}</b> {{.Reason}}{{if .Command}}<br><code>{{.Command}}</code>{{end}}{{with .SetsText}}<br><small>release sets: {{.}}</small>{{end}}</li>
{{end}}</ul>{{else}}<p>No action found.</p>{{end}}
{{if .Sets}}<h3>Release sets</h3>
<table class="matrix plan-sets">
<thead><tr><th>set</th><th>kubernetes</th><th>today</th><th>after the plan</th></tr></thead>
<tbody>
{{range .Sets}}<tr data-new="{{.New}}"><td>{{.Name}}</td><td>{{.Kubernetes}}</td><td class="{{.TodayClass}}">{{.Today}}</td><td class="{{.AfterClass}}">{{.AfterText}}</td></tr>
{{end}}</tbody>
</table>{{end}}
{{range .Components}}<h3>{{.Name}}{{if .Series}} <small>(a versioned series)</small>{{end}}</h3>
{{if .Product}}<table class="matrix plan" data-component="{{.Name}}">
<thead><tr><th>minor</th><th>state</th><th>active support until</th><th>end of life</th><th>latest</th><th>recipes</th></tr></thead>
<tbody>
{{range .Supported}}<tr{{if .Add}} class="add"{{end}}><td>{{.Cycle}}</td><td>{{.State}}</td><td>{{.EndOfActiveSupport}}</td><td>{{.EndOfLife}}</td><td>{{.Latest}}</td><td>{{.RecipesText}}</td></tr>
{{end}}</tbody>
</table>{{end}}
<table class="matrix plan-recipes" data-component="{{.Name}}">
<thead><tr><th>recipe</th><th>version</th><th>track</th><th>support</th><th>newest in track</th><th>action</th></tr></thead>
<tbody>
{{range .Recipes}}<tr data-action="{{.Action}}"><td>{{.Name}}</td><td>{{.Version}}</td><td>{{.Track}}</td><td>{{.Support}}</td><td>{{.NewestText}}</td><td>{{.Action}}</td></tr>
{{end}}</tbody>
</table>
{{end}}</section>
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
	type component struct {
		Component
		Supported []minor
		Recipes   []rec
	}
	type action struct {
		Action
		SetsText string
	}
	type set struct {
		Set
		Today, TodayClass, AfterText, AfterClass string
	}
	class := func(vs []string) string {
		if len(vs) > 0 {
			return "status-violation"
		}
		return "status-ok"
	}
	data := struct {
		Summary, Verdict string
		Unchecked        []string
		Components       []component
		Actions          []action
		Sets             []set
	}{Summary: p.Summary(), Verdict: p.Verdict(), Unchecked: p.unchecked()}
	for _, c := range p.Components {
		v := component{Component: c}
		for _, m := range c.Supported {
			v.Supported = append(v.Supported, minor{m, m.recipesText()})
		}
		for _, r := range c.Recipes {
			v.Recipes = append(v.Recipes, rec{r, r.newestText()})
		}
		data.Components = append(data.Components, v)
	}
	for _, a := range p.Actions {
		data.Actions = append(data.Actions, action{a, a.setsText()})
	}
	for _, s := range p.Sets {
		v := set{Set: s, Today: setText(s.Violations), TodayClass: class(s.Violations), AfterText: setText(s.After), AfterClass: class(s.After)}
		if s.New {
			v.Today, v.TodayClass = "added by the plan", "absent"
		}
		if len(s.After) > 0 {
			v.AfterText += ": " + strings.Join(s.After, "; ")
		}
		data.Sets = append(data.Sets, v)
	}
	var b bytes.Buffer
	if err := sectionTemplate.Execute(&b, data); err != nil {
		return "", err
	}
	return template.HTML(b.String()), nil //nolint:gosec // rendered by html/template above
}
