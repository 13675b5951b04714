package compatdata

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// document is one answer of an upstream source.
type document struct {
	url  string
	body []byte
	// minor is what {minor} in the URL stood for ("" when nothing).
	minor string
}

// lines checks what every format shares (not empty, text not HTML, UTF-8
// without NUL bytes) and splits the document into lines without their "\r".
func (doc document) lines() ([]string, error) {
	body := bytes.TrimPrefix(doc.body, []byte("\xef\xbb\xbf"))
	trimmed := bytes.TrimSpace(body)
	switch {
	case len(trimmed) == 0:
		return nil, errors.New("empty answer")
	case looksHTML(trimmed):
		return nil, fmt.Errorf("the answer is an HTML page, not the file (an error page, a proxy's login page?): %q", excerpt(trimmed))
	case !utf8.Valid(body) || bytes.IndexByte(body, 0) >= 0:
		return nil, errors.New("the answer is not UTF-8 text")
	}
	ls := strings.Split(strings.TrimSuffix(string(body), "\n"), "\n")
	for i, l := range ls {
		ls[i] = strings.TrimSuffix(l, "\r")
	}
	return ls, nil
}

// markdown is a Markdown (or MDX) document's lines, and which of them the
// page does not show as Markdown: a fenced code block (its "# ..." comment
// lines are no headings, its tables no tables) and a comment (<!-- -->,
// MDX's {/* */}, where a draft or an old table is kept), fences and
// comment delimiters included. Headings and tables are looked for in the
// shown lines only: upstream states what the page shows.
type markdown struct {
	lines  []string
	hidden []bool
}

// markdown splits the document (lines) and marks its hidden lines.
func (doc document) markdown() (*markdown, error) {
	lines, err := doc.lines()
	if err != nil {
		return nil, err
	}
	m := &markdown{lines: lines, hidden: make([]bool, len(lines))}
	fence, end := "", ""
	for i, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case fence != "":
			// A fence closes with at least as many of its characters,
			// and nothing else (CommonMark).
			if strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "" {
				fence = ""
			}
		case end != "":
			if strings.Contains(l, end) {
				end = ""
			}
		case len(l)-len(strings.TrimLeft(l, " ")) <= 3 && fenceRE.MatchString(t):
			fence = fenceRE.FindString(t)
		case strings.HasPrefix(t, "<!--"):
			end = commentEnd(t, "<!--", "-->")
		case strings.HasPrefix(t, "{/*"):
			end = commentEnd(t, "{/*", "*/}")
		default:
			continue
		}
		m.hidden[i] = true
	}
	return m, nil
}

// commentEnd is what ends the comment line t opens: closer, or "" when t
// closes it.
func commentEnd(t, opener, closer string) string {
	if strings.Contains(t[len(opener):], closer) {
		return ""
	}
	return closer
}

// fenceRE is the opening of a fenced code block: three or more backticks
// or tildes.
var fenceRE = regexp.MustCompile("^(`{3,}|~{3,})")

// heading returns the level and text of the heading at line i (0 when it is
// none, or a line the page does not show as Markdown).
func (m *markdown) heading(i int) (level int, text string) {
	if m.hidden[i] {
		return 0, ""
	}
	return heading(m.lines[i])
}

// looksHTML reports a document that starts as an HTML page does, after
// what may come first: an XML declaration (an XHTML error page) and
// comments (a proxy's or a server's note).
func looksHTML(b []byte) bool {
	head := strings.ToLower(string(b[:min(len(b), 1024)]))
	for {
		head = strings.TrimLeft(head, " \t\r\n")
		prolog := ""
		switch {
		case strings.HasPrefix(head, "<?xml"):
			prolog = "?>"
		case strings.HasPrefix(head, "<!--"):
			prolog = "-->"
		default:
			return strings.HasPrefix(head, "<!doctype html") || strings.HasPrefix(head, "<html") || strings.HasPrefix(head, "<head") || strings.HasPrefix(head, "<body")
		}
		end := strings.Index(head, prolog)
		if end < 0 {
			return false
		}
		head = head[end+len(prolog):]
	}
}

// excerpt is the start of b, for messages.
func excerpt(b []byte) string {
	const n = 80
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}

// lineError is a problem at a line of a document (1-based).
func lineError(line int, format string, args ...any) error {
	return fmt.Errorf("line %d: %s", line, fmt.Sprintf(format, args...))
}

// headingRE is a Markdown ATX heading: its level and text.
var headingRE = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)

// heading returns the level and text of a Markdown heading line (0 when it
// is none).
func heading(l string) (level int, text string) {
	m := headingRE.FindStringSubmatch(l)
	if m == nil {
		return 0, ""
	}
	return len(m[1]), m[2]
}

// findHeading returns the index of the one Markdown heading whose text is
// title (case-insensitive) among the lines the page shows; none, or two, is
// an error.
func findHeading(m *markdown, title string) (int, error) {
	at := -1
	for i := range m.lines {
		if _, text := m.heading(i); text != "" && strings.EqualFold(text, title) {
			if at >= 0 {
				return 0, lineError(i+1, "a second %q heading (the first at line %d): which is the table?", title, at+1)
			}
			at = i
		}
	}
	if at < 0 {
		return 0, fmt.Errorf("no %q heading: the page has changed, or this is not the page", title)
	}
	return at, nil
}

// pipeRow is one row of a Markdown pipe table: column (lower case) -> cell.
type pipeRow struct {
	line  int
	cells map[string]string
}

// cells splits a pipe table line "| a | b |" into its trimmed cells; ok is
// false when the line is not one.
func cells(l string) ([]string, bool) {
	s := strings.TrimSpace(l)
	if len(s) < 2 || s[0] != '|' || s[len(s)-1] != '|' {
		return nil, false
	}
	parts := strings.Split(s[1:len(s)-1], "|")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
	}
	return parts, true
}

var delimiterRE = regexp.MustCompile(`^:?-+:?$`)

// pipeTable finds, in the lines from:to of m the page shows, the Markdown pipe table whose header
// has every column of want (case-insensitive, in any order, other columns
// allowed; lead, when not "", must be the first), and returns its rows. Every row must have the header's
// cells; a table without rows is an error, and so is a second table with
// those columns (which one would be upstream's?), a column named twice, and a line with cells
// right after the rows (a row without its leading "|", which Markdown
// shows in the table), or a line that is no row with rows after it.
func pipeTable(m *markdown, from, to int, lead string, want ...string) ([]pipeRow, error) {
	lines := m.lines
	var rows []pipeRow
	found := -1
	for i := from; i+1 < to; i++ {
		head, ok := cells(lines[i])
		if !ok || m.hidden[i] {
			continue
		}
		delim, ok := cells(lines[i+1])
		if !ok || len(delim) != len(head) || !all(delim, delimiterRE.MatchString) {
			continue
		}
		cols := map[string]int{}
		twice := ""
		for j, h := range head {
			if _, ok := cols[strings.ToLower(h)]; ok && h != "" {
				twice = h
			}
			cols[strings.ToLower(h)] = j
		}
		end := i + 2
		for end < to && strings.HasPrefix(strings.TrimSpace(lines[end]), "|") {
			end++
		}
		if !hasAll(cols, want) || lead != "" && !strings.EqualFold(head[0], lead) {
			i = end - 1
			continue
		}
		if found >= 0 {
			return nil, lineError(i+1, "a second table with columns %q (the first at line %d): which is upstream's?", strings.Join(want, " | "), found+1)
		}
		found = i
		if twice != "" {
			return nil, lineError(i+1, "the column %q twice: which one is upstream's?", twice)
		}
		if end < to && strings.Contains(lines[end], "|") {
			// Markdown goes on with a table up to a blank line: a line with
			// cells right after the rows is one more row, written without
			// its leading "|".
			return nil, lineError(end+1, "a row that does not start with \"|\" (Markdown reads it as a row of the table): %q", lines[end])
		}
		// A line that is no row (a comment, a note) between rows: GitHub's
		// Markdown shows a note as a row of one cell, and an HTML comment
		// ends the table there and shows the rows after it as text.
		// Either way upstream's table is broken there, not shorter: its
		// rows after the line are not gone.
		for k := end; k < to && strings.TrimSpace(lines[k]) != ""; k++ {
			if strings.HasPrefix(strings.TrimSpace(lines[k]), "|") {
				return nil, lineError(end+1, "%q inside the table, before the row at line %d: a line that is no row of it (a comment or a note between the rows?)", lines[end], k+1)
			}
		}
		for r := i + 2; r < end; r++ {
			cs, ok := cells(lines[r])
			if !ok {
				return nil, lineError(r+1, "a row that does not end with \"|\" (a malformed or truncated table?): %q", lines[r])
			}
			if len(cs) != len(head) {
				return nil, lineError(r+1, "%d cells, the header has %d (a malformed or truncated table?): %q", len(cs), len(head), lines[r])
			}
			row := pipeRow{line: r + 1, cells: map[string]string{}}
			for name, j := range cols {
				row.cells[name] = cs[j]
			}
			rows = append(rows, row)
		}
		if len(rows) == 0 {
			return nil, lineError(i+1, "the table %q has no rows", strings.Join(want, " | "))
		}
		i = end - 1
	}
	if found < 0 {
		return nil, fmt.Errorf("no table with the columns %q: the page has changed, or this is not the page", strings.Join(want, " | "))
	}
	return rows, nil
}

func hasAll(cols map[string]int, want []string) bool {
	for _, w := range want {
		if _, ok := cols[strings.ToLower(w)]; !ok {
			return false
		}
	}
	return true
}

func all(ss []string, f func(string) bool) bool {
	for _, s := range ss {
		if !f(s) {
			return false
		}
	}
	return true
}

// bulletMinors reads the bullet list of Kubernetes minors that follows
// lines[at] (a heading): prose and blank lines may come first, then one
// bullet per minor ("* 1.34", "- v1.29"), then a blank line. Blank lines
// between the bullets (a loose list) do not end it: Markdown and
// reStructuredText show one list all the same, so a bullet after them is
// one more item, a minor or an error, never a list cut short. A bullet that
// is not a minor, one of another list (indented otherwise, the other
// marker), a heading before the list, or a list running to the end of the
// document (truncated?) is an error.
func bulletMinors(lines []string, at int, isHeading func(i int) bool) (KubernetesList, error) {
	i := at + 1
	for i < len(lines) && !isBullet(lines[i]) {
		if isHeading(i) {
			return nil, lineError(i+1, "a new section before the list of Kubernetes versions")
		}
		i++
	}
	if i == len(lines) {
		return nil, lineError(at+1, "no list of Kubernetes versions after the heading")
	}
	var out KubernetesList
	first, prefix := i, bulletPrefix(lines[i])
	for i < len(lines) && isBullet(lines[i]) {
		if bulletPrefix(lines[i]) != prefix {
			// Indented otherwise, or the other marker: a nested list, a
			// list of its own, or one in a reStructuredText comment.
			return nil, lineError(i+1, "%q is not an item of the list at line %d (indented otherwise, or the other marker: a nested list, or one in a comment?)", lines[i], first+1)
		}
		m := bulletMinorRE.FindStringSubmatch(strings.TrimSpace(lines[i]))
		if m == nil {
			return nil, lineError(i+1, "%q is not a Kubernetes version (\"* 1.34\" or \"- v1.34\")", lines[i])
		}
		if _, ok := parseMinor(m[1]); !ok {
			return nil, lineError(i+1, "%q is not a Kubernetes MAJOR.MINOR", m[1])
		}
		out = append(out, m[1])
		i++
		next := i
		for next < len(lines) && strings.TrimSpace(lines[next]) == "" {
			next++
		}
		if next > i && next < len(lines) && isBullet(lines[next]) {
			i = next
		}
	}
	if i == len(lines) || strings.TrimSpace(lines[i]) != "" {
		return nil, lineError(i, "the list of Kubernetes versions is not followed by a blank line (a truncated document?)")
	}
	if err := out.check(); err != nil {
		return nil, lineError(at+1, "%v", err)
	}
	return out, nil
}

var bulletMinorRE = regexp.MustCompile(`^[*-]\s+v?([0-9]+\.[0-9]+)$`)

// bulletPrefix is a bullet line's indentation and marker: the items of one
// list share them.
func bulletPrefix(l string) string {
	s := strings.TrimLeft(l, " \t")
	return l[:len(l)-len(s)+1]
}

func isBullet(l string) bool {
	s := strings.TrimSpace(l)
	return strings.HasPrefix(s, "* ") || strings.HasPrefix(s, "- ") || s == "*" || s == "-"
}
