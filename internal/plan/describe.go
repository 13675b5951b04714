package plan

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"github.com/updeb/updeb/pkg/termtext"
)

// Verification is the gate's verdict on the changed recipes (updeb verify
// --base), as text, for the description.
type Verification struct {
	Base    string // the revision compared with
	Text    string // the report as updeb verify prints it (PASS, REVIEW and FAIL lines)
	Failed  int    // failed checks
	Reviews int    // checks flagged for review
	Err     string // why it could not run ("" when it ran)
}

// Summary is the description's first line: what changed, in counts.
func (r *ApplyResult) Summary(p *Plan) string {
	const setOnly = "set"
	count := map[string]int{}
	for _, c := range r.Changes {
		if c.SetOnly {
			count[setOnly]++
			continue
		}
		count[c.Kind]++
	}
	var parts []string
	for _, k := range []struct{ kind, one, many string }{
		{ActAdd, "new minor", "new minors"}, {setOnly, "release set added", "release sets added"}, {ActBump, "bump", "bumps"}, {ActRetire, "end-of-life mark", "end-of-life marks"},
	} {
		switch n := count[k.kind]; {
		case n == 1:
			parts = append(parts, "1 "+k.one)
		case n > 1:
			parts = append(parts, fmt.Sprintf("%d %s", n, k.many))
		}
	}
	if len(parts) == 0 {
		parts = append(parts, "nothing changed")
	}
	if n := len(r.Failures); n > 0 {
		parts = append(parts, fmt.Sprintf("%d failed", n))
	}
	return fmt.Sprintf("Tracking %s: %s", p.Now, strings.Join(parts, ", "))
}

// Describe returns the change description Apply's result makes: a commit
// message a reviewer can approve. The summary line, then per recipe the
// old and new version, the release date, what vouched for the new bytes and
// upstream's release notes (and what the release set file learnt); what was
// held back or failed and why; the release set violations left for a
// person; and the gate's verdicts on the changed recipes with every REVIEW
// line (v, when given).
func Describe(p *Plan, r *ApplyResult, v *Verification) []byte {
	var b bytes.Buffer
	b.WriteString(r.Summary(p) + "\n\n")
	fmt.Fprintf(&b, "Made by updeb plan --apply. %s\n", p.Summary())
	// What the plan could not see is said here too: the reviewer of the
	// change may read nothing else.
	if unknown := p.unchecked(); len(unknown) > 0 {
		fmt.Fprintf(&b, "\nNot checked against upstream (their newest release unknown; updeb plan says why): %s\n", strings.Join(unknown, ", "))
	}
	if gone := p.withdrawn(); len(gone) > 0 {
		fmt.Fprintf(&b, "\nAt a release upstream no longer lists (deleted, or made a draft again: withdrawn?): %s\n", strings.Join(gone, ", "))
	}
	if len(r.Changes) > 0 {
		b.WriteString("\nChanges:\n")
	}
	for _, c := range r.Changes {
		switch {
		case c.SetOnly:
			fmt.Fprintf(&b, "- %s: its release set (the recipe, at %s, was in none)", c.Recipe, c.To)
		case c.Kind == ActAdd:
			fmt.Fprintf(&b, "- %s: new recipe (the next minor after %s) at %s", c.Recipe, c.DerivedOf, c.To)
		case c.Kind == ActRetire:
			fmt.Fprintf(&b, "- %s: marked end-of-life since %s (it stays, to rebuild; not to deploy)", c.Recipe, c.EndOfLife)
		default:
			fmt.Fprintf(&b, "- %s: %s -> %s", c.Recipe, c.From, c.To)
		}
		if c.ReleaseDate != "" && c.Kind != ActRetire {
			fmt.Fprintf(&b, ", released %s", c.ReleaseDate)
		}
		b.WriteString("\n")
		if c.Track != "" {
			fmt.Fprintf(&b, "  watch track: %s\n", c.Track)
		}
		if len(c.VerifiedBy) > 0 {
			b.WriteString("  vouched for by:\n")
			for _, v := range c.VerifiedBy {
				fmt.Fprintf(&b, "    %s\n", v)
			}
		}
		if c.ReleaseNotes != "" {
			fmt.Fprintf(&b, "  release notes: %s\n", c.ReleaseNotes)
		}
		if c.Sets != "" {
			fmt.Fprintf(&b, "  release sets: %s\n", c.Sets)
		}
		if len(c.Warns) > 0 {
			fmt.Fprintf(&b, "  new compat warnings: %s\n", strings.Join(c.Warns, "; "))
		}
	}
	if len(r.Skipped) > 0 {
		b.WriteString("\nNot done:\n")
		for _, s := range r.Skipped {
			fmt.Fprintf(&b, "- %s %s %s: %s\n", s.Action.Kind, s.Action.Recipe, s.Action.Version, s.Why)
		}
	}
	for _, written := range []bool{true, false} {
		heading := "\nFailed (nothing of these was written):\n"
		if written {
			heading = "\nFailed after writing (the changes above stay written: review them):\n"
		}
		for _, f := range r.Failures {
			if f.Written != written {
				continue
			}
			b.WriteString(heading)
			heading = ""
			fmt.Fprintf(&b, "- %s %s %s: %s\n", f.Action.Kind, f.Action.Recipe, f.Action.Version, indent(f.Error, "    "))
		}
	}
	if len(r.Open) > 0 {
		b.WriteString("\nFor a person (release set violations no action resolves):\n")
		for _, a := range r.Open {
			fmt.Fprintf(&b, "- %s\n", a.Reason)
		}
	}
	if v != nil {
		fmt.Fprintf(&b, "\nupdeb verify --base %s on the changed recipes:\n", v.Base)
		switch {
		case v.Err != "":
			fmt.Fprintf(&b, "  could not run: %s\n", indent(v.Err, "    "))
		default:
			b.WriteString(indent(strings.TrimRight(v.Text, "\n"), "  ", true) + "\n")
		}
	}
	// Upstream's words (a server's message in a failure) reach whoever
	// reads the commit with git log, which prints them as they are: their
	// escape sequences do not. Nor can they skip the CI of the commit, nor
	// mention anybody in the merge request made of it.
	d := ciSkip.ReplaceAllString(termtext.EscapeLines(b.String()), `[$1\]`)
	d = closing.ReplaceAllString(d, `$1\$2`)
	return []byte(mention.ReplaceAllString(d, `$1\@$2`))
}

// closing matches what GitLab and GitHub read as closing an issue in a
// commit message or merge request description ("Fixes #12", "closes:
// group/project#3", "Resolves https://host/g/p/-/issues/4", "Fixes
// ABC-12" with Jira): a closing word, an optional colon, spaces (and
// "issue"), then a reference. Describe writes a "\" before the reference,
// which neither then reads as one (the reference must follow the spaces);
// "\#12" shows as "#12" in GitLab. A failure quoting a server ("404: fixes
// #1") closed issue 1 of the recipes' project once the tracking merge
// request was merged.
var closing = regexp.MustCompile(`(?i)(\b(?:clos(?:e[sd]?|ing)|fix(?:e[sd]|ing)?|resolv(?:e[sd]?|ing)|implement(?:s|ed|ing)?):?[ \t]+(?:issues?[ \t]+)?)([\w./-]*#\d|https?://|(?-i:[A-Z][A-Z0-9_]+-\d))`)

// mention matches what GitLab reads as a mention in a merge request's
// description (the job's push makes one of the commit message, see
// contrib/gitlab): "@" after a line's start or a rune that is no part of a
// name, then a name. Describe writes its "@" as "\@", which GitLab shows as
// "@" and mentions nobody by (as git log shows it, it is still read as the
// server wrote it). A failure quoting a server ("403 @all: rate limited")
// notified every member of the project, at every monthly run.
var mention = regexp.MustCompile(`(^|[^\w\\/.@+-])@([\w.-])`)

// ciSkip matches the markers for which CI runs nothing for a commit whose
// message holds one: GitLab's [skip ci] and [ci skip] (its regexp, with
// "_" or "-" for the space, any case) and GitHub's [no ci], [skip actions]
// and [actions skip]; Describe writes their "]" as "\]". A failure's
// message quoting a server (a download answered "404 [skip ci]") made the
// tracking commit's pipeline, the gate of every bump in it, not run.
var ciSkip = regexp.MustCompile(`(?i)\[(ci[ _-]skip|skip[ _-]ci|no[ _-]ci|skip[ _-]actions|actions[ _-]skip)\]`)

// indent puts prefix before every line of s but the first (which follows
// a label), and before the first too when all is set.
func indent(s, prefix string, all ...bool) string {
	lines := strings.Split(s, "\n")
	for i := range lines {
		if lines[i] != "" && (i > 0 || len(all) > 0 && all[0]) {
			lines[i] = prefix + lines[i]
		}
	}
	return strings.Join(lines, "\n")
}
