package recipe

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/updeb/updeb/internal/srcurl"
	"github.com/updeb/updeb/pkg/utf8cut"
	"go.yaml.in/yaml/v3"
)

// Recipe templates are text with substitutions: {{.Name}} {{.Version}}
// {{.Major}} {{.Minor}} {{.Patch}} {{.Arch}} {{.DebArch}}, spaces allowed
// inside the braces, and {{"{{"}} (or {{`{{`}}) for a literal "{{", which
// text/template writes so too: every "{{" opens an action, so a field that
// needs the two braces (a URL's query, a description quoting a template)
// had no way to say it. Nothing else: no functions, pipelines, range, if,
// define or template calls. That is all recipes use, and a grammar with no
// loops, no recursion and no formatting widths renders in one pass over the
// text, in time linear in the output, which is itself bounded (maxFieldRender
// per field, maxPlanRender per resolved recipe). What it renders is what text/template
// renders for the same text (the fuzz test holds it to that).

const (
	maxFieldRender = 1 << 20 // one field's rendered text, in bytes
	maxPlanRender  = 8 << 20 // all templated fields of one resolved recipe
)

// renderer renders templates for one architecture, recording failures.
type renderer struct {
	fs   *findings
	data map[string]string
	used int // bytes rendered so far, against maxPlanRender
}

// render expands text (a no-op without "{{"); a template that breaks the
// grammar, names an unknown value or renders too much is a finding at n, the
// field's position, and renders to "". what names the field in messages.
func (rd *renderer) render(n *yaml.Node, what, text string) string {
	if !strings.Contains(text, "{{") {
		return text
	}
	limit := min(maxFieldRender, maxPlanRender-rd.used)
	out, err := expand(text, rd.data, limit)
	if err == errTooLong {
		err = fmt.Errorf("renders to more than %d bytes", maxFieldRender)
		if limit < maxFieldRender {
			err = fmt.Errorf("the recipe's templates render to more than %d bytes in all", maxPlanRender)
		}
	}
	if err != nil {
		rd.fs.at(n, "%s: template %q: %v", what, clip(text), err)
		return ""
	}
	rd.used += len(out)
	return out
}

// url renders a URL template and checks the result with the grammar the
// fetcher applies (package srcurl), so that lint, which renders every
// architecture, refuses exactly the URLs a build would.
func (rd *renderer) url(n *yaml.Node, what, text string) string {
	u := rd.render(n, what, text)
	if u != "" {
		if _, err := srcurl.Check(u); err != nil {
			rd.fs.at(n, "%s: %v", what, err)
		}
	}
	return u
}

var errTooLong = errors.New("rendered text too long")

// expand substitutes the {{.Name}} actions of text from data, and "{{" for
// the escape {{"{{"}}, refusing any other action and any output longer than
// limit bytes.
func expand(text string, data map[string]string, limit int) (string, error) {
	return expandAs(text, data, limit, "{{")
}

// expandAs is expand with the escape rendered as braces.
func expandAs(text string, data map[string]string, limit int, braces string) (string, error) {
	var b strings.Builder
	put := func(s string) error {
		if b.Len()+len(s) > limit {
			return errTooLong
		}
		b.WriteString(s)
		return nil
	}
	for pos := 0; ; {
		i := strings.Index(text[pos:], "{{")
		if i < 0 {
			if err := put(text[pos:]); err != nil {
				return "", err
			}
			return b.String(), nil
		}
		if err := put(text[pos : pos+i]); err != nil {
			return "", err
		}
		start := pos + i
		j := strings.Index(text[start+2:], "}}")
		if j < 0 {
			return "", fmt.Errorf("\"{{\" at byte %d has no closing \"}}\"", start)
		}
		action := text[start+2 : start+2+j]
		v := braces // the escape: the string constant "{{", quoted or raw
		if a := strings.Trim(action, " "); a != `"{{"` && a != "`{{`" {
			name, ok := strings.CutPrefix(a, ".")
			if !ok || !isIdent(name) {
				return "", fmt.Errorf("{{%s}} at byte %d: only a value such as {{.Version}} may appear between {{ and }} (known: %s), or {{\"{{\"}} for a literal {{; functions, pipelines, range, if and template calls are not part of recipe templates", clip(action), start, knownNames(data))
			}
			if v, ok = data[name]; !ok {
				return "", fmt.Errorf("{{%s}} at byte %d: no value named .%s (known: %s)", action, start, name, knownNames(data))
			}
		}
		if err := put(v); err != nil {
			return "", err
		}
		pos = start + 2 + j + 2
	}
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		letter := c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

func knownNames(data map[string]string) string {
	names := make([]string, 0, len(data))
	for k := range data {
		names = append(names, "."+k)
	}
	sort.Strings(names)
	return strings.Join(names, " ")
}

// clip shortens what a message quotes from a (possibly huge) recipe field.
func clip(s string) string {
	if len(s) > 120 {
		return utf8cut.Prefix(s, 120) + "..."
	}
	return s
}

// RenderPerArch renders a template of r (a Sigstore identity, a checksum
// file URL) for each of its architectures as it reads whatever the version:
// {{.Version}}, {{.Major}}, {{.Minor}}, {{.Patch}} and {{.DebianVersion}} are written back as
// such, every other value ({{.Name}}, {{.Arch}}, {{.DebArch}}) is filled
// in. So two recipes' renderings differ when what the template stands for
// differs (another name, another upstream architecture name), and not for a
// new version. The escape of a literal "{{" is written back too, as
// {{"{{"}} however it was spelled: rendered, {{"{{"}}.Version}} would read as
// the template {{.Version}}, which stands for every version. It returns the
// renderings by Debian architecture; a text that does not render (Load
// refuses those) is returned as written.
func (r *Recipe) RenderPerArch(text string) map[string]string {
	out := make(map[string]string, len(r.Architectures))
	for _, a := range r.Architectures {
		data := r.templateData(a)
		for _, k := range []string{"Version", "Major", "Minor", "Patch", "DebianVersion"} {
			data[k] = "{{." + k + "}}"
		}
		s, err := expandAs(text, data, maxFieldRender, `{{"{{"}}`)
		if err != nil {
			s = text
		}
		out[a.Debian] = s
	}
	return out
}
