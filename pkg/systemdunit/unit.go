// Package systemdunit reads systemd unit files as systemd does
// (systemd.syntax(7), systemd.unit(5)): sections, Key=Value lines,
// comments with # and ;, lines continued with a trailing backslash, and the
// command lines of Exec*= with their prefixes and quoting. It reports what
// systemd would ignore with a warning (a line without "=", an assignment
// before the first section, a section or key systemd 252, Debian 12's, does
// not know), each at its line and column. Parsing is one pass over the input
// and keeps nothing but the entries: time and memory are linear in its size,
// which the caller bounds (MaxSize).
package systemdunit

import (
	"bytes"
	_ "embed"
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxSize is the most bytes of a unit file a caller should read: far over
// any real unit (systemd's own are a few KiB), small enough to parse at once.
const MaxSize = 1 << 20

// Entry is one Key=Value assignment, its value with the continuation lines
// joined (each backslash-newline a space, as systemd joins them) and the
// surrounding blanks trimmed.
type Entry struct {
	Section string
	Key     string
	Value   string
	Line    int // where the key is, from 1
	Col     int
}

// Section is one [Name] header and the assignments under it, in order. A
// name seen twice is two Sections, as systemd reads it: the later
// assignments add to (or override) the earlier ones.
type Section struct {
	Name    string
	Line    int
	Entries []Entry
}

// Problem is what systemd would ignore, or refuse, at a line and column.
type Problem struct {
	Line, Col int
	Message   string
	// Warning marks what may be right for another systemd: a key that
	// systemd 252 does not know.
	Warning bool
}

func (p Problem) String() string { return fmt.Sprintf("line %d: %s", p.Line, p.Message) }

// Unit is a parsed unit file.
type Unit struct {
	Sections []Section
}

// Parse reads a unit file. The problems are those systemd's parser logs
// before ignoring a line; Parse keeps the rest, as systemd does.
func Parse(data []byte) (*Unit, []Problem) {
	u := &Unit{}
	var problems []Problem
	var cur *Section
	lines := bytes.Split(data, []byte("\n"))
	for i := 0; i < len(lines); i++ {
		lineNo := i + 1
		raw := string(lines[i])
		if !utf8.ValidString(raw) {
			problems = append(problems, Problem{Line: lineNo, Col: 1, Message: "not valid UTF-8 (systemd ignores the line)"})
			continue
		}
		text := strings.TrimLeft(raw, " \t\r")
		col := len(raw) - len(text) + 1
		if text == "" || text[0] == '#' || text[0] == ';' {
			continue // a comment ends with its line, backslash or not
		}
		// Continuation: a trailing backslash joins the next line, with
		// comment lines between them skipped (systemd 240 and later).
		// A Builder: joining by + would copy the line so far at each
		// continuation, quadratic in a file of backslashes.
		part := strings.TrimRight(text, " \t\r")
		var b strings.Builder
		for strings.HasSuffix(part, "\\") && i+1 < len(lines) {
			b.WriteString(part[:len(part)-1])
			b.WriteByte(' ')
			i++
			next := strings.TrimLeft(string(lines[i]), " \t\r")
			for (strings.HasPrefix(next, "#") || strings.HasPrefix(next, ";")) && i+1 < len(lines) {
				i++
				next = strings.TrimLeft(string(lines[i]), " \t\r")
			}
			if strings.HasPrefix(next, "#") || strings.HasPrefix(next, ";") {
				next = ""
			}
			part = strings.TrimRight(next, " \t\r")
		}
		b.WriteString(part)
		joined := b.String()
		if strings.HasPrefix(joined, "[") {
			if !strings.HasSuffix(joined, "]") || len(joined) < 3 {
				problems = append(problems, Problem{Line: lineNo, Col: col, Message: fmt.Sprintf("invalid section header %q (systemd ignores the line): write [Name]", joined)})
				continue
			}
			u.Sections = append(u.Sections, Section{Name: joined[1 : len(joined)-1], Line: lineNo})
			cur = &u.Sections[len(u.Sections)-1]
			continue
		}
		key, value, ok := strings.Cut(joined, "=")
		key = strings.TrimRight(key, " \t")
		if cur == nil {
			// systemd looks for the section first: a line before any
			// (".include", a stray word) is "outside of section" too.
			problems = append(problems, Problem{Line: lineNo, Col: col, Message: fmt.Sprintf("%q is before the first section (systemd ignores it): put it under [Unit], [Service], [Install], ...", key)})
			continue
		}
		if !ok {
			problems = append(problems, Problem{Line: lineNo, Col: col, Message: fmt.Sprintf("%q has no \"=\" (systemd ignores the line): write Key=Value, or start a comment with #", joined)})
			continue
		}
		if key == "" {
			problems = append(problems, Problem{Line: lineNo, Col: col, Message: "an assignment with no key (systemd ignores the line)"})
			continue
		}
		cur.Entries = append(cur.Entries, Entry{Section: cur.Name, Key: key, Value: strings.Trim(value, " \t"), Line: lineNo, Col: col})
	}
	return u, problems
}

// Values are the values of key in the sections named section, in order.
// An empty value resets the list, as systemd takes it for list settings
// (ExecStartPre=, EnvironmentFile=, ...).
func (u *Unit) Values(section, key string) []Entry {
	var out []Entry
	for _, s := range u.Sections {
		if s.Name != section {
			continue
		}
		for _, e := range s.Entries {
			if e.Key != key {
				continue
			}
			if e.Value == "" {
				out = out[:0]
				continue
			}
			out = append(out, e)
		}
	}
	return out
}

// Last is the last value of key in the sections named section, and whether
// it is set: what a single-valued setting (User=, Type=) ends up with.
func (u *Unit) Last(section, key string) (Entry, bool) {
	var last Entry
	found := false
	for _, s := range u.Sections {
		for _, e := range s.Entries {
			if s.Name == section && e.Key == key {
				last, found = e, true
			}
		}
	}
	return last, found
}

// Has reports whether the unit has a section named name.
func (u *Unit) Has(name string) bool {
	for _, s := range u.Sections {
		if s.Name == name {
			return true
		}
	}
	return false
}

// typeSections maps a unit's suffix to the section of its type's settings;
// .target and .device units have none but [Unit] and [Install].
var typeSections = map[string]string{
	"service": "Service", "socket": "Socket", "mount": "Mount", "automount": "Automount",
	"swap": "Swap", "timer": "Timer", "path": "Path", "slice": "Slice", "scope": "Scope",
	"target": "", "device": "",
}

// TypeSection is the section of the settings of units of type typ
// ("Service" for "service"), "" for a type that has none.
func TypeSection(typ string) string { return typeSections[typ] }

// Type is the unit type of a unit file name (kube-apiserver.service,
// getty@.service, foo.service.d/10-x.conf's foo.service), or "" when the
// name is not a unit's.
func Type(name string) string {
	dot := strings.LastIndexByte(name, '.')
	if dot <= 0 {
		return ""
	}
	if _, ok := typeSections[name[dot+1:]]; !ok {
		return ""
	}
	return name[dot+1:]
}

// Check reports what systemd 252 does not know in a unit of type typ
// (Type's answer): a section other than [Unit], [Install], the type's own
// and X-..., and a key its section does not have (X-... aside). The unit is
// systemd's to load still: it ignores them, with a warning.
func (u *Unit) Check(typ string) []Problem {
	var problems []Problem
	own, known := typeSections[typ]
	for _, s := range u.Sections {
		keys, ok := keySets[s.Name]
		if strings.HasPrefix(s.Name, "X-") {
			continue
		}
		if !ok || !known || (s.Name != "Unit" && s.Name != "Install" && s.Name != own) {
			allowed := "[Unit], [Install]"
			if own != "" {
				allowed += ", [" + own + "]"
			}
			problems = append(problems, Problem{Line: s.Line, Col: 1, Message: fmt.Sprintf("unknown section [%s] in a .%s unit (systemd ignores it and everything under it): a .%s unit has %s, and sections of your own start with X-", s.Name, typ, typ, allowed)})
			continue
		}
		for _, e := range s.Entries {
			if !keys[e.Key] && !strings.HasPrefix(e.Key, "X-") {
				problems = append(problems, Problem{Line: e.Line, Col: e.Col, Message: fmt.Sprintf("unknown key %s= in [%s] (systemd 252, Debian 12's, ignores it): check its spelling and section in systemd.directives(7)", e.Key, s.Name), Warning: true})
			}
		}
	}
	return problems
}

// items252 is what "/usr/lib/systemd/systemd --dump-configuration-items"
// prints with systemd 252 (Debian 12's): each section, then its keys as
// Key=TYPE lines. TestItemsAreSystemds checks it against the host's.
//
//go:embed systemd252.items
var items252 string

// keySets are the keys of each section of items252.
var keySets = func() map[string]map[string]bool {
	m := map[string]map[string]bool{}
	var keys map[string]bool
	for _, l := range strings.Split(items252, "\n") {
		if name, ok := strings.CutPrefix(l, "["); ok {
			keys = map[string]bool{}
			m[strings.TrimSuffix(name, "]")] = keys
		} else if k, _, ok := strings.Cut(l, "="); ok && keys != nil {
			keys[k] = true
		}
	}
	return m
}()

// Command is one command line of an Exec*= setting: its prefixes
// ("@", "-", ":", "+", "!", "!!", in any order) and its words unquoted.
type Command struct {
	Prefixes string
	Argv     []string
}

// IgnoresFailure reports the "-" prefix: systemd goes on when the command
// fails, or cannot be run at all.
func (c Command) IgnoresFailure() bool { return strings.Contains(c.Prefixes, "-") }

// Path is the program systemd runs: the first word, or the second with
// the "@" prefix (the first is then argv[0]).
func (c Command) Path() string {
	if len(c.Argv) == 0 {
		return ""
	}
	return c.Argv[0]
}

// SplitCommands splits the value of an Exec*= setting into its command
// lines (separated by a lone ";" word) as systemd 252 does: words split on
// blanks, double and single quotes grouping, C escapes in and out of
// quotes. An unbalanced quote or a trailing backslash is an error, with
// which systemd refuses the unit ("bad unit file setting").
func SplitCommands(value string) ([]Command, error) {
	var cmds []Command
	var cur *Command
	rest := value
	for {
		word, next, present, err := firstWord(rest)
		if err != nil {
			return nil, err
		}
		if !present {
			break
		}
		rest = next
		if word == ";" {
			cur = nil
			continue
		}
		if cur == nil {
			cmds = append(cmds, Command{})
			cur = &cmds[len(cmds)-1]
			p := 0
			for p < len(word) && strings.IndexByte("@-:+!|", word[p]) >= 0 {
				p++
			}
			cur.Prefixes, word = word[:p], word[p:]
			if word == "" {
				continue // "-" alone, then the path as the next word: systemd refuses it, the path check says so
			}
		}
		cur.Argv = append(cur.Argv, word)
	}
	for i := range cmds {
		if strings.Contains(cmds[i].Prefixes, "@") && len(cmds[i].Argv) > 1 {
			// "@/usr/bin/x name args": the first word is the program,
			// the second argv[0]: keep the program first.
			cmds[i].Argv = append(cmds[i].Argv[:1], cmds[i].Argv[2:]...)
		}
	}
	return cmds, nil
}

// firstWord takes the next word of s (systemd's extract_first_word with
// EXTRACT_UNQUOTE|EXTRACT_CUNESCAPE|EXTRACT_RELAX aside: quotes may start
// mid-word, escapes are kept as the character they escape).
func firstWord(s string) (word, rest string, present bool, err error) {
	s = strings.TrimLeft(s, " \t\n\r")
	if s == "" {
		return "", "", false, nil
	}
	var b strings.Builder
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			if i+1 >= len(s) {
				return "", "", false, fmt.Errorf("a backslash ends %q: escape it (\\\\) or leave it out", s)
			}
			i++
			b.WriteByte(s[i])
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				b.WriteByte(c)
			}
		case c == '"' || c == '\'':
			quote = c
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			return b.String(), s[i+1:], true, nil
		default:
			b.WriteByte(c)
		}
	}
	if quote != 0 {
		return "", "", false, fmt.Errorf("unbalanced quoting in %q (systemd refuses the unit): close the %c", s, quote)
	}
	return b.String(), "", true, nil
}
