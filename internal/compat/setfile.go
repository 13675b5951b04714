package compat

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/supportdata"
	"github.com/updeb/updeb/internal/yamlfile"
	"github.com/updeb/updeb/pkg/debversion"
)

// UpdateFile is the one way updeb rewrites a release set file in place
// (bump following a recipe, bump --new-minor adding a set, plan --apply):
// edit gets the file's content and returns the new content, or the same
// bytes when nothing changes; edit has checked that the new content reads
// as exactly its changes (yamlfile.Verify: SyncVersions and AddMinor do).
// The new content must still parse as a release set file; yamlfile.Rewrite
// puts it in place, reading it back, with the file's permissions, only if
// the file still holds what was read. A file that does not exist is
// fs.ErrNotExist, for the caller to decide.
//
// Another process's change landing between the read and the rewrite (two
// bumps at once, each with the file following) is no conflict: edit is
// made again on the file as it is now, so that neither change is lost nor
// the later bump failed after its downloads. A file that keeps changing is
// refused after a few tries (yamlfile.ErrChanged).
func UpdateFile(ctx context.Context, path string, edit func(data []byte) ([]byte, error)) (changed bool, err error) {
	for range updateTries {
		if changed, err = updateOnce(ctx, path, edit); !errors.Is(err, yamlfile.ErrChanged) {
			break
		}
	}
	return changed, err
}

// updateTries bounds UpdateFile's reads of a file other processes change.
const updateTries = 3

// updateOnce is one try of UpdateFile.
func updateOnce(ctx context.Context, path string, edit func(data []byte) ([]byte, error)) (bool, error) {
	data, err := yamlfile.ReadFile(path, 0)
	if err != nil {
		return false, err
	}
	out, err := edit(data)
	if err != nil || bytes.Equal(out, data) {
		return false, err
	}
	check := func(written []byte) error {
		if _, err := ParseReleaseSets(path, written); err != nil {
			return fmt.Errorf("%s after the change (not written): %w", path, err)
		}
		return nil
	}
	if err := check(out); err != nil {
		return false, err
	}
	return true, yamlfile.Rewrite(ctx, path, data, out, check, 0)
}

// FollowBump keeps the release set file at path in step with a bump of a
// recipe of component from version from to version to: every version
// written out for the component (for kubernetes, for its binaries too)
// equal to from becomes to (SyncVersions). It returns how many values
// changed; an absent file is fs.ErrNotExist.
func FollowBump(ctx context.Context, path, component, from, to string) (int, error) {
	var n int
	_, err := UpdateFile(ctx, path, func(data []byte) ([]byte, error) {
		out, changed, err := SyncBump(path, data, component, from, to)
		n = changed
		return out, err
	})
	return n, err
}

// SyncBump is SyncVersions for a bump of a recipe of component: the values
// of the component (for kubernetes, of its binaries too) that FollowsBump
// picks follow.
func SyncBump(name string, data []byte, component, from, to string) ([]byte, int, error) {
	match := func(c string) bool {
		return c == component || component == "kubernetes" && supportdata.ProductOf(c) == "kubernetes"
	}
	return syncValues(name, data, func(comp, v string) (string, bool) {
		return to, match(comp) && FollowsBump(v, from, to)
	}, fmt.Sprintf("setting %s to %s", from, to))
}

// FollowsBump reports whether a release set value v of a component follows
// a bump of its recipe from version from to version to: v is from (or
// another spelling of it), or lies between from and to (Debian order,
// neither end). The recipe at from ships none of the latter, and one is
// what a bump interrupted between its two writes leaves (the release set
// file follows first, see track.BumpOptions.BeforeWrite) when upstream
// ships a newer version before it is run again: followed from from alone,
// the set kept naming a version no recipe ships while the recipe moved past
// it.
func FollowsBump(v, from, to string) bool {
	if sameVersion(v, from) {
		return true
	}
	dv, df, dt := debianOf(v), debianOf(from), debianOf(to)
	if dv == "" || df == "" || dt == "" {
		return false
	}
	above, err1 := debversion.CompareStrings(dv, df)
	below, err2 := debversion.CompareStrings(dv, dt)
	return err1 == nil && err2 == nil && above > 0 && below < 0
}

// NewMinor is a new minor of a versioned recipe series (bump --new-minor):
// what the release set file must learn of it.
type NewMinor struct {
	Component string // the series' component: kubernetes, cri-tools
	From      string // the recipe the new one was derived from (kubernetes-1.36)
	To        string // the new recipe (kubernetes-1.37)
	Minor     string // To's MAJOR.MINOR
	// Versions maps every recipe's name to its version, To's included.
	Versions map[string]string
}

// FollowNewMinor adds (or extends) the release set of a new minor in the
// file at path, in place (AddMinor). It returns what it did, in words; an
// absent file is fs.ErrNotExist.
func FollowNewMinor(ctx context.Context, path string, nm NewMinor) (string, error) {
	var note string
	_, err := UpdateFile(ctx, path, func(data []byte) ([]byte, error) {
		out, n, err := AddMinor(path, data, nm)
		note = n
		return out, err
	})
	return note, err
}

// IsNotExist reports whether err says the release set file is absent.
func IsNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// AddMinor returns the release set file content (data; name for messages)
// with the new minor's set, and says what it did:
//
//   - A new Kubernetes minor gets a set of its own: a copy of the set of
//     nm.From (the last set whose kubernetes is recipe:FROM, else of FROM's
//     minor), written after the last set with every byte of it kept (comments
//     and layout) but its name (kubernetes136 -> kubernetes137, k8s-1.36 ->
//     k8s-1.37, else NAME-MINOR) and the values that name the old minor:
//     recipe:SERIES-MAJOR.K of a series that follows Kubernetes minors moves
//     by as many minors when that recipe exists (recipe:kubernetes-1.36 ->
//     recipe:kubernetes-1.37, recipe:cri-tools-1.36 -> recipe:cri-tools-1.37
//     once cri-tools-1.37 is there), and a Kubernetes version written out
//     equal to FROM's becomes TO's. Everything else stays: the new set is
//     what compat then checks (a Helm too old for the new minor is a
//     violation there, for the plan to act on).
//   - A new minor of another series whose minors follow Kubernetes' (every
//     set that names one of its recipes names the one of its own Kubernetes
//     minor, as cri-tools does) extends the set of that Kubernetes minor: its
//     value for the component becomes recipe:TO.
//
// Nothing changes when a set already covers the minor, and the content is
// returned as it was with the reason: the plan and apply may run again.
func AddMinor(name string, data []byte, nm NewMinor) ([]byte, string, error) {
	sets, err := ParseReleaseSets(name, data)
	if err != nil {
		return nil, "", err
	}
	resolved := CloneSets(sets)
	_ = Resolve(resolved, nm.Versions, "") // a set naming an unknown recipe keeps its empty version: it matches no minor
	d := &yamlfile.Decoder{File: name}
	top := d.Document(data, yamlfile.Options{What: "release set file"})
	if err := d.Err(); err != nil {
		return nil, "", err
	}
	nodes := valueOf(top, "sets").Content
	if len(nodes) != len(sets) {
		return nil, "", fmt.Errorf("%s: %d set nodes for %d sets", name, len(nodes), len(sets))
	}
	nmMajor, nmMinor, ok := minorOf(nm.Minor)
	if !ok {
		return nil, "", fmt.Errorf("%w: new minor %q is not MAJOR.MINOR", ErrReleaseSet, nm.Minor)
	}
	// A set's Kubernetes minors: its version's, and a rolling upgrade's last.
	hasMinor := func(i, major, minor int) bool {
		for _, v := range []string{resolved[i].Components["kubernetes"], resolved[i].Upgrades["kubernetes"]} {
			if m, n, ok := minorOf(v); ok && m == major && n == minor {
				return true
			}
		}
		return false
	}
	if nm.Component == "kubernetes" {
		for i := range resolved {
			if hasMinor(i, nmMajor, nmMinor) {
				return data, fmt.Sprintf("release set %s already covers Kubernetes %s", resolved[i].Name, nm.Minor), nil
			}
		}
	}
	if nm.Component != "kubernetes" {
		return extendMinor(name, data, top, nm, resolved, nodes, nmMajor, nmMinor)
	}
	// The set to copy: the last one of nm.From, else of its minor.
	fromMajor, fromMinor, _ := minorOf(nm.Versions[nm.From])
	tmpl := -1
	for i, s := range sets {
		if ref := s.Recipes["kubernetes"]; ref.From == nm.From || ref.To == nm.From {
			tmpl = i
		}
	}
	if tmpl < 0 {
		for i := range sets {
			if hasMinor(i, fromMajor, fromMinor) {
				tmpl = i
			}
		}
	}
	if tmpl < 0 {
		return data, fmt.Sprintf("no release set of %s (Kubernetes %d.%d) to copy for Kubernetes %s: add one by hand", nm.From, fromMajor, fromMinor, nm.Minor), nil
	}
	delta := nmMinor - fromMinor
	// The copy goes after the last set (yamlfile.Verify: a list only gains
	// entries at its end).
	first, last, err := setLines(name, data, nodes[tmpl])
	if err != nil {
		return nil, "", err
	}
	_, end, err := setLines(name, data, nodes[len(nodes)-1])
	if err != nil {
		return nil, "", err
	}
	// Lines as YAML counts them (the nodes' lines); a line without a break
	// (the file's last) gets the file's own.
	lines, brk := yamlfile.LineStarts(data), yamlfile.LineBreak(data)
	// A comment indented into the last set after its last value (a
	// component commented out) is read as that value's, or its mapping's,
	// depending on what follows it: with a set after it, it would read as
	// another node's, which yamlfile.Verify refuses as a comment changed
	// without saying where or what to do.
	if end < len(lines) {
		line := data[lines[end]:]
		if end+1 < len(lines) {
			line = data[lines[end]:lines[end+1]]
		}
		if text := bytes.TrimLeft(line, " "); bytes.HasPrefix(text, []byte("#")) && len(line)-len(text) >= nodes[len(nodes)-1].Column-1 {
			return nil, "", fmt.Errorf("%s:%d: a comment after the last value of release set %s, indented into it: move it above a value of the set (or out to the file's end, unindented) so that the set of Kubernetes %s can be added after it", name, end+1, sets[len(sets)-1].Name, nm.Minor)
		}
	}
	from, to := lines[first-1], len(data)
	if last < len(lines) {
		to = lines[last]
	}
	block := append([]byte(nil), data[from:to]...)
	if len(yamlfile.TrimBreak(block)) == len(block) {
		block = append(block, brk...)
	}
	at := len(data)
	if end < len(lines) {
		at = lines[end]
	}
	head := append([]byte(nil), data[:at]...)
	if len(head) > 0 && len(yamlfile.TrimBreak(head)) == len(head) {
		head = append(head, brk...)
	}
	doubled := append(append(head, block...), data[at:]...)
	d2 := &yamlfile.Decoder{File: name}
	top2 := d2.Document(doubled, yamlfile.Options{What: "release set file"})
	if err := d2.Err(); err != nil {
		return nil, "", err
	}
	copied := valueOf(top2, "sets").Content[len(nodes)]
	names := map[string]bool{}
	for _, s := range sets {
		names[s.Name] = true
	}
	newName := minorName(sets[tmpl].Name, fromMajor, fromMinor, nmMinor, nm.Minor, names)
	edits := []yamlfile.Edit{{Node: valueOf(copied, "name"), Value: newName}}
	comps := valueOf(copied, "components")
	for i := 0; i+1 < len(comps.Content); i += 2 {
		comp, v := comps.Content[i].Value, comps.Content[i+1]
		ends := []*yaml.Node{v}
		if v.Kind == yaml.MappingNode {
			ends = []*yaml.Node{valueOf(v, "from"), valueOf(v, "to")}
		}
		for _, e := range ends {
			if nv, ok := movedValue(e.Value, comp, nm, fromMajor, delta, resolved); ok {
				edits = append(edits, yamlfile.Edit{Node: e, Value: nv})
			}
		}
	}
	out, err := yamlfile.Splice(name, doubled, edits)
	if err != nil {
		return nil, "", err
	}
	// What the file must read as: the old sets as they were, and a new one
	// at the end holding exactly the values written (every scalar of it).
	d3 := &yamlfile.Decoder{File: name}
	top3 := d3.Document(out, yamlfile.Options{What: "release set file"})
	if err := d3.Err(); err != nil {
		return nil, "", err
	}
	if err := yamlfile.Verify(name, data, out, scalarsOf(valueOf(top3, "sets").Content[len(nodes)], []string{"sets", strconv.Itoa(len(nodes))})); err != nil {
		return nil, "", err
	}
	return out, fmt.Sprintf("release set %s added for Kubernetes %s, copied from %s", newName, nm.Minor, sets[tmpl].Name), nil
}

// scalarsOf lists every scalar under n as a change at its path.
func scalarsOf(n *yaml.Node, path []string) []yamlfile.Change {
	switch n.Kind {
	case yaml.ScalarNode:
		return []yamlfile.Change{{Path: slices.Clone(path), Value: n.Value}}
	case yaml.MappingNode:
		var out []yamlfile.Change
		for i := 0; i+1 < len(n.Content); i += 2 {
			out = append(out, scalarsOf(n.Content[i+1], append(slices.Clone(path), n.Content[i].Value))...)
		}
		return out
	case yaml.SequenceNode:
		var out []yamlfile.Change
		for i, c := range n.Content {
			out = append(out, scalarsOf(c, append(slices.Clone(path), strconv.Itoa(i)))...)
		}
		return out
	}
	return nil
}

// movedValue is the value v of component comp in the copy of a set for a
// new Kubernetes minor (see AddMinor), and whether it changes.
func movedValue(v, comp string, nm NewMinor, major, delta int, sets []ReleaseSet) (string, bool) {
	if ref, isRef := strings.CutPrefix(v, RecipePrefix); isRef {
		series := recipe.Component(ref)
		m, n, ok := minorOf(strings.TrimPrefix(ref, series+"-"))
		if series == ref || !ok || m != major || !FollowsKubernetes(series, sets) {
			return "", false
		}
		moved := fmt.Sprintf("%s-%d.%d", series, m, n+delta)
		if _, exists := nm.Versions[moved]; !exists {
			return "", false
		}
		return RecipePrefix + moved, true
	}
	if supportdata.ProductOf(comp) == "kubernetes" && nm.Versions[nm.From] != "" && shipsVersion([]string{nm.Versions[nm.From]}, v) {
		return nm.Versions[nm.To], nm.Versions[nm.To] != ""
	}
	return "", false
}

// FollowsKubernetes reports whether the sets (resolved) name series'
// recipes by Kubernetes minor: kubernetes itself, or a series of which some
// set names the recipe of its own Kubernetes minor (cri-tools-1.36 in the
// 1.36 set) and none a recipe newer than its Kubernetes minor (an older one
// stands in until the new minor's recipe exists).
func FollowsKubernetes(series string, sets []ReleaseSet) bool {
	if series == "kubernetes" {
		return true
	}
	same := false
	for _, s := range sets {
		km, kn, kok := minorOf(s.Components["kubernetes"])
		for _, ref := range s.Recipes {
			for _, r := range []string{ref.From, ref.To} {
				if r == "" || r == series || recipe.Component(r) != series {
					continue
				}
				m, n, ok := minorOf(strings.TrimPrefix(r, series+"-"))
				if !ok || !kok || m != km || n > kn {
					return false
				}
				same = same || n == kn
			}
		}
	}
	return same
}

// extendMinor is AddMinor for a series other than kubernetes.
func extendMinor(name string, data []byte, top *yaml.Node, nm NewMinor, resolved []ReleaseSet, nodes []*yaml.Node, major, minor int) ([]byte, string, error) {
	if !FollowsKubernetes(nm.Component, resolved) {
		return data, fmt.Sprintf("the release sets do not name %s recipes by Kubernetes minor: name recipe:%s in the sets that deploy it", nm.Component, nm.To), nil
	}
	var edits []yamlfile.Edit
	var extended, covered []string
	for i, s := range resolved {
		if m, n, ok := minorOf(s.Components["kubernetes"]); !ok || m != major || n != minor {
			continue
		}
		v := valueOf(valueOf(nodes[i], "components"), nm.Component)
		switch {
		case v.Kind != yaml.ScalarNode:
			continue // absent, or a range: the operator chose it
		case v.Value == RecipePrefix+nm.To:
			covered = append(covered, s.Name)
		default:
			edits = append(edits, yamlfile.Edit{Node: v, Value: RecipePrefix + nm.To})
			extended = append(extended, s.Name)
		}
	}
	switch {
	case len(extended) > 0:
		out, err := yamlfile.Splice(name, data, edits)
		if err != nil {
			return nil, "", err
		}
		changes, err := yamlfile.ChangesOf(top, edits)
		if err != nil {
			return nil, "", err
		}
		if err := yamlfile.Verify(name, data, out, changes); err != nil {
			return nil, "", err
		}
		return out, fmt.Sprintf("release set %s now names recipe:%s", strings.Join(extended, ", "), nm.To), nil
	case len(covered) > 0:
		return data, fmt.Sprintf("release set %s already names recipe:%s", strings.Join(covered, ", "), nm.To), nil
	}
	return data, fmt.Sprintf("no release set for Kubernetes %s yet: the set that adds it will name recipe:%s", nm.Minor, nm.To), nil
}

// setLines returns the first and last line of a set's node in data (the
// line of its "- " item through the line of its last value). A set written
// in flow style over several lines is refused: its copy could not be told
// apart from its neighbours by lines.
func setLines(name string, data []byte, n *yaml.Node) (first, last int, err error) {
	first, last = n.Line, n.Line
	var walk func(x *yaml.Node)
	walk = func(x *yaml.Node) {
		last = max(last, x.Line)
		for _, c := range x.Content {
			walk(c)
		}
	}
	walk(n)
	if n.Style&yaml.FlowStyle != 0 && last != first {
		return 0, 0, fmt.Errorf("%s:%d:%d: write this release set in block style (one component a line) so that a copy of it can be added in place", name, n.Line, n.Column)
	}
	for _, c := range n.Content {
		if c.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 || c.Kind == yaml.MappingNode && c.Style&yaml.FlowStyle != 0 && multiLine(c) {
			return 0, 0, fmt.Errorf("%s:%d:%d: write this release set's values on one line each so that a copy of it can be added in place", name, c.Line, c.Column)
		}
	}
	return first, last, nil
}

// multiLine reports whether a node's descendants span several lines.
func multiLine(n *yaml.Node) bool {
	for _, c := range n.Content {
		if c.Line != n.Line || multiLine(c) {
			return true
		}
	}
	return false
}

// minorName names the set copied from old for minor: the old minor written
// in the name (1.36, or 136 glued to letters) moved, else old-MINOR; unique
// among names.
func minorName(old string, major, oldMinor, newMinor int, minor string, names map[string]bool) string {
	mj := strconv.Itoa(major)
	candidates := []struct{ re, repl string }{
		{`(^|[^0-9])` + regexp.QuoteMeta(mj+"."+strconv.Itoa(oldMinor)) + `($|[^0-9])`, "${1}" + mj + "." + strconv.Itoa(newMinor) + "${2}"},
		{`(^|[^0-9])` + regexp.QuoteMeta(mj+strconv.Itoa(oldMinor)) + `($|[^0-9])`, "${1}" + mj + strconv.Itoa(newMinor) + "${2}"},
	}
	name := old + "-" + minor
	for _, c := range candidates {
		re := regexp.MustCompile(c.re)
		if loc := lastMatch(re, old); loc != nil {
			name = old[:loc[0]] + re.ReplaceAllString(old[loc[0]:loc[1]], c.repl) + old[loc[1]:]
			break
		}
	}
	for base, i := name, 2; names[name]; i++ {
		name = fmt.Sprintf("%s-%d", base, i)
	}
	return name
}

func lastMatch(re *regexp.Regexp, s string) []int {
	all := re.FindAllStringIndex(s, -1)
	if len(all) == 0 {
		return nil
	}
	return all[len(all)-1]
}

// CloneSets copies sets deeply enough for Resolve (or Check) to fill them in.
func CloneSets(sets []ReleaseSet) []ReleaseSet {
	out := make([]ReleaseSet, len(sets))
	for i, s := range sets {
		c := ReleaseSet{Name: s.Name, Components: map[string]string{}, Recipes: s.Recipes}
		for k, v := range s.Components {
			c.Components[k] = v
		}
		if s.Upgrades != nil {
			c.Upgrades = map[string]string{}
			for k, v := range s.Upgrades {
				c.Upgrades[k] = v
			}
		}
		out[i] = c
	}
	return out
}
