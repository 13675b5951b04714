package track

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/yamlfile"
	"github.com/updeb/updeb/pkg/debversion"
	"github.com/updeb/updeb/pkg/digest"
)

// Errors NewMinor refuses with.
var (
	// ErrExists: the new minor's recipe file is already there (exit 2).
	ErrExists = errors.New("track: the recipe of that minor exists")
	// ErrNotVersioned: the recipe is not one of a series NAME-MAJOR.MINOR (exit 2).
	ErrNotVersioned = errors.New("track: not a recipe of a versioned series (NAME-MAJOR.MINOR)")
	// ErrNoRelease: upstream has no complete release of the new minor yet (exit 1).
	ErrNoRelease = errors.New("track: no release of the new minor upstream")
)

// minorRE is a MAJOR.MINOR as names and file names write it: no leading
// zero (1.037 would name kube-1.037.yaml a recipe of kube-1.37), and numbers
// an int holds.
var minorRE = regexp.MustCompile(`^(0|[1-9][0-9]{0,8})\.(0|[1-9][0-9]{0,8})$`)

// checkMinor refuses a --new-minor that is not a MAJOR.MINOR (minorRE).
func checkMinor(minor string) error {
	if !minorRE.MatchString(minor) {
		return fmt.Errorf("%w: --new-minor %q: want MAJOR.MINOR, as 1.37 (no leading zeros)", recipe.ErrInvalid, minor)
	}
	return nil
}

// NewMinorPath is the file the recipe of minor would be written to, from r
// (kubernetes-1.36.yaml, 1.37 -> kubernetes-1.37.yaml).
func NewMinorPath(r *recipe.Recipe, minor string) (string, error) {
	base := strings.TrimSuffix(filepath.Base(r.Path), filepath.Ext(r.Path))
	series := recipe.Component(base)
	if series == base {
		return "", fmt.Errorf("%w: %s", ErrNotVersioned, r.Path)
	}
	if err := checkMinor(minor); err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(r.Path), series+"-"+minor+filepath.Ext(r.Path)), nil
}

// NewMinor writes the recipe of the next minor of r's series (r is usually
// the newest one): the recipe text of r with its minor moved to minor
// everywhere it names it (the name, the watch track, versioned package and
// component names such as kubernetes-client136 -> kubernetes-client137,
// version ranges, comments), and the files-dir of r shared; then the normal
// Bump flow on that text gives it the newest complete release of the minor
// (or o.To), its release date and freshly verified pins, and lints it. The
// file is only created when all of that succeeded; r's file is untouched.
//
// A recipe that is not of a series (calicoctl, etcd) moves to the new minor
// in place instead: its watch track is moved the same way (3.31.x ->
// 3.32.x, >=3.30 <3.32 -> >=3.31 <3.33; a track that already allows the
// minor stays) and the same Bump flow writes the newest complete release of
// the minor (or o.To) into its own file.
func NewMinor(ctx context.Context, r *recipe.Recipe, minor string, o BumpOptions) (*BumpResult, error) {
	target, err := NewMinorPath(r, minor)
	if errors.Is(err, ErrNotVersioned) {
		return moveMinor(ctx, r, minor, o)
	}
	if err != nil {
		return nil, err
	}
	if err := absent(target); err != nil {
		return nil, err
	}
	if !newerMinor(minor, r.Version) {
		return nil, fmt.Errorf("%w: --new-minor %s is not newer than %s %s", ErrDowngrade, minor, r.Name, r.Version)
	}
	original, err := yamlfile.ReadFile(r.Path, recipe.MaxSize)
	if err != nil {
		return nil, err
	}
	// First the text with the new names and track, to find the release.
	text, err := deriveMinor(r, original, minor, "")
	if err != nil {
		return nil, err
	}
	next, err := loadBytes(target, r.Root, text)
	if err != nil {
		return nil, fmt.Errorf("the recipe derived for %s does not pass lint (not written): %w", minor, err)
	}
	if err := resolveMinorTarget(ctx, next, minor, &o); err != nil {
		return nil, err
	}
	// Then the text that names the new version too (comments, reasons).
	if text, err = deriveMinor(r, original, minor, o.To); err != nil {
		return nil, err
	}
	// The new recipe takes the old one's mode, owner and group.
	fi, err := os.Stat(r.Path)
	if err != nil {
		return nil, err
	}
	res, err := bump(ctx, next, text, o, func(updated []byte, check func([]byte) error) error {
		if err := absent(target); err != nil {
			return err
		}
		return yamlfile.Create(ctx, target, updated, check, fi.Mode().Perm(), fi)
	})
	return res, err
}

// resolveMinorTarget fills in o.To (and o.Date) with next's newest complete
// release of minor when o.To is empty, and checks a given o.To is of minor.
func resolveMinorTarget(ctx context.Context, next *recipe.Recipe, minor string, o *BumpOptions) error {
	if o.To != "" {
		o.To = targetVersion(next, o.To)
		if !inMinor(o.To, minor) {
			return fmt.Errorf("%w: --to %s is not a %s.x version", recipe.ErrInvalid, o.To, minor)
		}
		return nil
	}
	c, err := Newest(ctx, next, o.Options)
	if err != nil {
		return err
	}
	if !inMinor(c.InTrack.Version, minor) {
		if c.Stopped != "" {
			return fmt.Errorf("%w: %s: no complete %s.x release found in its track %q: %s", ErrNoRelease, next.Name, minor, next.Watch.Track, c.Stopped)
		}
		return fmt.Errorf("%w: %s has no complete %s.x release in its track %q", ErrNoRelease, next.Name, minor, next.Watch.Track)
	}
	o.To = c.InTrack.Version
	if o.Date.IsZero() {
		o.Date = c.InTrack.Published
	}
	return nil
}

// moveMinor is NewMinor for a recipe not of a series: the watch track moved
// in place, then the Bump flow on r's own file.
func moveMinor(ctx context.Context, r *recipe.Recipe, minor string, o BumpOptions) (*BumpResult, error) {
	if err := checkMinor(minor); err != nil {
		return nil, err
	}
	if !newerMinor(minor, r.Version) {
		return nil, fmt.Errorf("%w: --new-minor %s is not newer than %s %s", ErrDowngrade, minor, r.Name, r.Version)
	}
	if r.Watch == nil {
		return nil, fmt.Errorf("%s: %w", r.Name, ErrNoWatch)
	}
	original, err := readLoaded(r)
	if err != nil {
		return nil, err
	}
	text, err := moveTrack(r, original, minor)
	if err != nil {
		return nil, err
	}
	// The old minor's end-of-life mark is not the new minor's.
	if text, err = dropEndOfLife(r.Path, text); err != nil {
		return nil, err
	}
	next, err := loadBytes(r.Path, r.Root, text)
	if err != nil {
		return nil, fmt.Errorf("%s with its watch track moved to %s does not pass lint (not written): %w", r.Path, minor, err)
	}
	if err := resolveMinorTarget(ctx, next, minor, &o); err != nil {
		return nil, err
	}
	// text is original with the track moved (verified by moveTrack); bump's
	// check verifies its own changes over text, and Rewrite that the file
	// still holds original.
	res, err := bump(ctx, next, text, o, func(updated []byte, check func([]byte) error) error {
		return yamlfile.Rewrite(ctx, r.Path, original, updated, check, 0)
	})
	if res != nil {
		res.From = r.Version
	}
	return res, err
}

// MovedTrack is the watch track of r moved to minor: every MAJOR.K in it
// with K from the recipe's minor - 3 to its minor + 1 moves by as many
// minors as minor is newer (3.31.x -> 3.32.x); a track that names no such
// minor ("3.x", none) stays as it is.
func MovedTrack(r *recipe.Recipe, minor string) (string, error) {
	if r.Watch == nil {
		return "", fmt.Errorf("%s: %w", r.Name, ErrNoWatch)
	}
	nums, m := numbersOf(r.Version), minorRE.FindStringSubmatch(minor)
	if len(nums) < 2 || m == nil {
		return "", fmt.Errorf("%w: %s version %q has no MAJOR.MINOR", recipe.ErrInvalid, r.Name, r.Version)
	}
	major, oldMinor := nums[0], nums[1]
	newMinor, _ := strconv.Atoi(m[2])
	if mj, _ := strconv.Atoi(m[1]); mj != major {
		return "", fmt.Errorf("%w: --new-minor %s changes the major version of %s %s", recipe.ErrInvalid, minor, r.Name, r.Version)
	}
	mj := strconv.Itoa(major)
	re := regexp.MustCompile(`(^|[^0-9.])` + regexp.QuoteMeta(mj) + `\.([0-9]+)`)
	moved := re.ReplaceAllStringFunc(r.Watch.Track, func(s string) string {
		sub := re.FindStringSubmatch(s)
		k, _ := strconv.Atoi(sub[2])
		if k < oldMinor-3 || k > oldMinor+1 {
			return s
		}
		return sub[1] + mj + "." + strconv.Itoa(k+newMinor-oldMinor)
	})
	if ok, err := inTrack(moved, minor+".0"); err != nil || !ok {
		return "", fmt.Errorf("%w: %s's watch track %q does not allow %s.x even moved (%q): edit it by hand", recipe.ErrInvalid, r.Name, r.Watch.Track, minor, moved)
	}
	return moved, nil
}

// moveTrack returns r's text (original) with its watch track moved to minor
// (MovedTrack), in place.
func moveTrack(r *recipe.Recipe, original []byte, minor string) ([]byte, error) {
	moved, err := MovedTrack(r, minor)
	if err != nil || moved == r.Watch.Track {
		return original, err
	}
	top, err := recipe.Document(r.Path, original)
	if err != nil {
		return nil, err
	}
	var node *yaml.Node
	if w := mapValue(top, "watch"); w != nil {
		node = mapValue(w, "track")
	}
	if node == nil {
		return nil, fmt.Errorf("%s: no watch track to move", r.Path)
	}
	out, changes, err := splice(r.Path, top, original, []edit{{node, moved}})
	if err != nil {
		return nil, err
	}
	if err := yamlfile.Verify(r.Path, original, out, changes); err != nil {
		return nil, err
	}
	return out, nil
}

// dropEndOfLife returns text without its end-of-life mark (dropKeyLines),
// checked as every in-place rewrite is: it must read back as the document
// of text less that key, every other key, value, style and comment the
// same, or it is refused (yamlfile.ErrNotRewritten).
func dropEndOfLife(file string, text []byte) ([]byte, error) {
	out := dropKeyLines(file, text, "end-of-life")
	if len(out) == len(text) {
		return text, nil
	}
	lf := func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n")) }
	top, err := recipe.Document(file, lf(text))
	if err != nil {
		return nil, err
	}
	after, err := recipe.Document(file, lf(out))
	if err != nil {
		return nil, fmt.Errorf("%s: %w: without its end-of-life mark it does not parse: %v", file, yamlfile.ErrNotRewritten, err)
	}
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value == "end-of-life" {
			top.Content = slices.Delete(top.Content, i, i+2)
			break
		}
	}
	want, err1 := yaml.Marshal(top)
	got, err2 := yaml.Marshal(after)
	if err := errors.Join(err1, err2); err != nil || !bytes.Equal(want, got) {
		return nil, fmt.Errorf("%s: %w: its end-of-life mark cannot be removed alone (edit it by hand)", file, yamlfile.ErrNotRewritten)
	}
	return out, nil
}

// absent refuses a path that exists.
func absent(path string) error {
	_, err := os.Lstat(path)
	switch {
	case err == nil:
		name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
		return fmt.Errorf("%w: %s (remove it first, or bump it: updeb bump %s; a bump --new-minor cut short before its release set followed is completed by updeb plan --apply --only %s)", ErrExists, path, name, name)
	case errors.Is(err, fs.ErrNotExist):
		return nil
	}
	return err
}

// deriveMinor returns r's text (original) moved to minor: see NewMinor. Every
// MAJOR.K with K from the recipe's minor - 3 to its minor + 1 (its own minor,
// skew bounds, the exclusive upper bound of a range) moves by the same
// number of minors, MAJOR and MINOR written together after a letter or
// hyphen (kubernetes136) move too, and the recipe's old version becomes
// newVersion when that is given. The values bump sets (version, release-date,
// digests) and files-dir are left alone; a recipe without files-dir gets one
// naming its own folder, when it has one, so that both share it.
func deriveMinor(r *recipe.Recipe, original []byte, minor, newVersion string) ([]byte, error) {
	nums := numbersOf(r.Version)
	m := minorRE.FindStringSubmatch(minor)
	if len(nums) < 2 || m == nil {
		return nil, fmt.Errorf("%w: %s version %q has no MAJOR.MINOR", recipe.ErrInvalid, r.Name, r.Version)
	}
	major, oldMinor := nums[0], nums[1]
	newMinor, _ := strconv.Atoi(m[2])
	if mj, _ := strconv.Atoi(m[1]); mj != major {
		return nil, fmt.Errorf("%w: --new-minor %s changes the major version of %s %s", recipe.ErrInvalid, minor, r.Name, r.Version)
	}
	delta := newMinor - oldMinor
	top, err := recipe.Document(r.Path, original)
	if err != nil {
		return nil, err
	}
	keep := keptSpans(top, original)
	mj := strconv.Itoa(major)
	// One pass: the old version, then MAJOR.K, then MAJORMINOR glued to a name.
	re := regexp.MustCompile(`(^|[^0-9.])(` + regexp.QuoteMeta(r.Version) + `|` + regexp.QuoteMeta(mj) + `\.([0-9]+)|` +
		regexp.QuoteMeta(mj+strconv.Itoa(oldMinor)) + `)([^0-9]|$)`)
	var out []byte
	last := 0
	for pos := 0; pos < len(original); {
		loc := re.FindSubmatchIndex(original[pos:])
		if loc == nil {
			break
		}
		for i := range loc {
			if loc[i] >= 0 {
				loc[i] += pos
			}
		}
		start, end := loc[4], loc[5] // the token (group 2)
		pos = end                    // the character after it may start the next match
		if inSpans(keep, start) {
			continue
		}
		tok := string(original[start:end])
		var repl string
		switch {
		case tok == r.Version:
			if newVersion == "" {
				repl = mj + "." + strconv.Itoa(newMinor) + strings.TrimPrefix(tok, mj+"."+strconv.Itoa(oldMinor))
			} else {
				repl = newVersion
			}
		case loc[6] >= 0: // MAJOR.K
			k, _ := strconv.Atoi(string(original[loc[6]:loc[7]]))
			if k < oldMinor-3 || k > oldMinor+1 {
				continue
			}
			repl = mj + "." + strconv.Itoa(k+delta)
		default: // MAJORMINOR glued to a name
			if start == 0 || !isNameChar(original[start-1]) {
				continue
			}
			repl = mj + strconv.Itoa(newMinor)
		}
		out = append(out, original[last:start]...)
		out = append(out, repl...)
		last = end
	}
	out = append(out, original[last:]...)
	// The old minor's end-of-life mark is not the new minor's: a recipe
	// derived from a marked one would be born end-of-life (before its own
	// release), and plan would never propose anything for it.
	out = dropKeyLines(r.Path, out, "end-of-life")
	if fd := mapValue(top, "files-dir"); fd == nil {
		if own := filepath.Join(filepath.Dir(r.Path), strings.TrimSuffix(filepath.Base(r.Path), filepath.Ext(r.Path))); isDir(own) {
			out = insertAfterKey(out, top, "name", "files-dir: "+filepath.Base(own))
		}
	}
	return out, nil
}

// keptSpans are the byte ranges deriveMinor leaves alone: the values of
// version, release-date and files-dir, and the pinned digests.
func keptSpans(top *yaml.Node, data []byte) [][2]int {
	var nodes []*yaml.Node
	for _, k := range []string{"version", "release-date", "files-dir"} {
		if v := mapValue(top, k); v != nil {
			nodes = append(nodes, v)
		}
	}
	if srcs := mapValue(top, "sources"); srcs != nil {
		for _, s := range srcs.Content {
			for _, a := range []digest.Algorithm{digest.SHA256, digest.SHA512} {
				if v := mapValue(s, string(a)); v != nil {
					nodes = append(nodes, v)
				}
			}
		}
	}
	lines := yamlfile.LineStarts(data)
	var spans [][2]int
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.ScalarNode && n.Line >= 1 && n.Line <= len(lines) {
			start, quotes := yamlfile.Offset(data, lines, n), 0
			if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
				quotes = 2
			}
			spans = append(spans, [2]int{start, start + len(n.Value) + quotes})
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	for _, n := range nodes {
		walk(n)
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i][0] < spans[j][0] })
	return spans
}

func inSpans(spans [][2]int, off int) bool {
	for _, s := range spans {
		if off >= s[0] && off < s[1] {
			return true
		}
	}
	return false
}

// insertAfterKey inserts line after the line of top-level key (at the end
// when there is no such key), ending it as the file's lines end. The
// derivation only adds lines, so the key's line number from the original
// document still holds; lines are YAML's (yamlfile.LineStarts).
func insertAfterKey(data []byte, top *yaml.Node, key, line string) []byte {
	lines, brk := yamlfile.LineStarts(data), yamlfile.LineBreak(data)
	at := len(data)
	if k := yamlfile.KeyOf(top, key); k != top && k.Line < len(lines) {
		at = lines[k.Line]
	}
	out := append([]byte(nil), data[:at]...)
	if at > 0 && len(yamlfile.TrimBreak(out)) == len(out) {
		out = append(out, brk...)
	}
	return append(append(out, line+brk...), data[at:]...)
}

// dropKeyLines returns data without the lines of its top-level key, the
// comment above it and its value; data as it is when it does not parse,
// lacks the key or is a flow mapping. It is read with "\r\n" as "\n", as yamlfile.Verify reads:
// the same lines, and the comment above the key is the key's.
func dropKeyLines(file string, data []byte, key string) []byte {
	top, err := recipe.Document(file, bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n")))
	if err != nil {
		return data
	}
	k, v := yamlfile.KeyOf(top, key), mapValue(top, key)
	lines := yamlfile.LineStarts(data)
	first := k.Line
	if k.HeadComment != "" {
		first -= strings.Count(k.HeadComment, "\n") + 1
	}
	if k == top || v == nil || top.Style&yaml.FlowStyle != 0 || first < 1 || v.Line > len(lines) {
		return data // a flow mapping's key shares its line with others
	}
	end := len(data)
	if v.Line < len(lines) {
		end = lines[v.Line]
	}
	return append(append([]byte(nil), data[:lines[first-1]]...), data[end:]...)
}

func isNameChar(c byte) bool {
	return c == '-' || c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// numbersOf are a version's leading numbers (nil when it is not valid).
func numbersOf(v string) []int {
	d := debianOf(v)
	if d == "" {
		return nil
	}
	return debversion.LeadingNumbers(d)
}

// inMinor reports whether version is a MAJOR.MINOR.x of minor.
func inMinor(version, minor string) bool {
	v, m := numbersOf(version), numbersOf(minor)
	return len(v) >= 2 && len(m) == 2 && v[0] == m[0] && v[1] == m[1]
}

// newerMinor reports whether minor is newer than version's minor.
func newerMinor(minor, version string) bool {
	v, m := numbersOf(version), numbersOf(minor)
	return len(v) >= 2 && len(m) == 2 && (m[0] > v[0] || m[0] == v[0] && m[1] > v[1])
}

// Derive returns the recipe NewMinor would write for minor at version,
// without fetching anything: r's text moved to the minor, loaded as lint
// would (its pins are still r's). The plan reads what it requires.
func Derive(r *recipe.Recipe, minor, version string) (*recipe.Recipe, error) {
	target, err := NewMinorPath(r, minor)
	if err != nil {
		return nil, err
	}
	original, err := yamlfile.ReadFile(r.Path, recipe.MaxSize)
	if err != nil {
		return nil, err
	}
	text, err := deriveMinor(r, original, minor, version)
	if err != nil {
		return nil, err
	}
	next, err := recipe.LoadBytes(target, text, recipe.LoadOptions{Root: r.Root, AllowUnpinned: true})
	if err != nil {
		return nil, err
	}
	next.Version = version
	return next, nil
}
