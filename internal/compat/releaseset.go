package compat

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/supportdata"
	"github.com/updeb/updeb/internal/yamlfile"
	"github.com/updeb/updeb/pkg/deb"
	"github.com/updeb/updeb/pkg/debversion"
)

// ErrReleaseSet is wrapped by every release set file error.
var ErrReleaseSet = errors.New("compat: invalid release set file")

// ReleaseSet names the versions deployed together (one cluster, or one
// Kubernetes minor line). Components maps a component name to its upstream
// version as the recipe writes it ("1.35.4", not the Debian "1.35.4-1").
//
// "kubernetes" is the control plane's version (kube-apiserver) and is required.
// kubelet, kube-proxy, kubectl, kubeadm, kube-controller-manager and
// kube-scheduler default to it when not given (Check fills them in).
//
// A component may also be a range, the versions of a rolling upgrade (nodes
// stay at the older version while the control plane moves): Components holds
// its first version and Upgrades the one it moves to. Either version may name
// a recipe instead ("recipe:kubernetes-1.36"): Recipes holds the references
// and its Components/Upgrades entry stays empty until Resolve.
type ReleaseSet struct {
	Name       string
	Components map[string]string
	Upgrades   map[string]string    // component -> the version a range moves to; nil when no range
	Recipes    map[string]RecipeRef // component -> the recipes it names; nil when none
}

// RecipeRef is a component's "recipe:NAME" references: From for its version
// (or a range's first), To for a range's last; "" where the value is a version.
type RecipeRef struct {
	From, To string
}

// RecipePrefix starts a value that names a recipe instead of a version.
const RecipePrefix = "recipe:"

// ErrUnresolved is wrapped when a set names a recipe Resolve does not know.
var ErrUnresolved = errors.New("compat: release set names an unknown recipe")

// Resolve fills in the versions of recipe references from versions (recipe
// name -> upstream version), in place. A name it does not know, or a recipe
// of another component (kubernetes: recipe:helm; the Kubernetes binaries
// kubelet, kubectl, ... take a kubernetes recipe), is an error naming the set
// and component, and so is a range whose first version, once resolved, is
// newer than its last (ErrReleaseSet, as for versions written out). The error
// for a name it does not know names the file looked for in folder, the
// recipes' (with "", the recipes came from several folders).
func Resolve(sets []ReleaseSet, versions map[string]string, folder string) error {
	var errs []error
	for i := range sets {
		s := &sets[i]
		for _, comp := range sortedKeys(s.Recipes) {
			ref := s.Recipes[comp]
			for _, end := range []struct {
				name string
				dst  map[string]string
			}{{ref.From, s.Components}, {ref.To, s.Upgrades}} {
				if end.name == "" {
					continue
				}
				v, ok := versions[end.name]
				if !ok {
					missing := "no recipe of that name among those read"
					if folder != "" {
						missing = "no " + filepath.Join(folder, end.name+".yaml")
					}
					errs = append(errs, fmt.Errorf("%w: set %q, component %q: %s%s (%s)", ErrUnresolved, s.Name, comp, RecipePrefix, end.name, missing))
					continue
				}
				if of := recipe.Component(end.name); of != comp && !(of == "kubernetes" && supportdata.ProductOf(comp) == "kubernetes") {
					errs = append(errs, fmt.Errorf("%w: set %q, component %q: %s%s ships %s, not %s (a recipe of %s is named %s or %s-MAJOR.MINOR)",
						ErrUnresolved, s.Name, comp, RecipePrefix, end.name, of, comp, comp, comp, comp))
					continue
				}
				end.dst[comp] = v
			}
		}
		for _, comp := range sortedKeys(s.Recipes) {
			if from, to := s.Components[comp], s.Upgrades[comp]; GoesBackwards(from, to) {
				errs = append(errs, fmt.Errorf("%w: set %q: component %q: range from %s to %s goes backwards (the versions of its recipes)", ErrReleaseSet, s.Name, comp, from, to))
			}
		}
		if ref := s.Recipes["kubernetes"].From; ref != "" && s.Components["kubernetes"] != "" && !hasMinor(s.Components["kubernetes"]) {
			errs = append(errs, fmt.Errorf("%w: set %q: kubernetes %s%s has version %q, not MAJOR.MINOR[.PATCH]", ErrReleaseSet, s.Name, RecipePrefix, s.Recipes["kubernetes"].From, s.Components["kubernetes"]))
		}
	}
	return errors.Join(errs...)
}

// defaulted lists the components that take the "kubernetes" version when a
// set does not name them, in matrix row order.
func defaulted() []string {
	return []string{"kube-controller-manager", "kube-scheduler", "kubelet", "kube-proxy", "kubeadm", "kubectl"}
}

var (
	setNameRE   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	componentRE = regexp.MustCompile(`^[a-z0-9][a-z0-9.+-]*$`)
)

// ReleaseSetsJSONSchema is the JSON Schema of a release set file, made by
// running its decoding (setsList, decodeSet, ...) as a schema run
// (yamlfile.Describe).
func ReleaseSetsJSONSchema() *yamlfile.Schema {
	s := yamlfile.Describe(func(d *yamlfile.Decoder, top *yaml.Node) { setsList(d, top) })
	s.Title = "updeb release sets (release-sets.yaml: versions deployed together, for updeb compat)"
	return s
}

// LoadReleaseSets reads a release set file. Its format:
//
//	sets:
//	  - name: kubernetes135          # unique; letters, digits, . _ -
//	    components:                  # component -> upstream version
//	      kubernetes: 1.35.8         # required: the kube-apiserver version
//	      kubelet: 1.35.8            # optional, defaults to kubernetes
//	      helm: 3.20.2
//	      cri-tools: recipe:cri-tools-1.35               # the version recipes/cri-tools-1.35.yaml ships (Resolve)
//	      etcd: {from: 3.5.24, to: recipe:etcd}          # a rolling upgrade: first and last version
//
// Decoding is strict (internal/yamlfile): unknown keys, duplicate keys,
// missing names, empty sets and invalid versions are errors, reported as
// "FILE:LINE:COL: message", the first problem of each set, every set's.
func LoadReleaseSets(path string) ([]ReleaseSet, error) {
	b, err := yamlfile.ReadFile(path, 0)
	if err != nil {
		return nil, err
	}
	return ParseReleaseSets(path, b)
}

// ParseReleaseSets parses release set file content; name prefixes messages.
func ParseReleaseSets(name string, b []byte) ([]ReleaseSet, error) {
	d := &yamlfile.Decoder{File: name}
	var sets []ReleaseSet
	top := d.Document(b, yamlfile.Options{What: "release set file", Empty: `empty file: expected "sets:" with a list of release sets`})
	if top != nil {
		var list *yaml.Node
		if d.Record(func(rd *yamlfile.Decoder) { list = setsList(rd, top) }) {
			sets = decodeSets(d, list)
		}
	}
	if err := d.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrReleaseSet, err)
	}
	return sets, nil
}

// setsList returns the non-empty list under the file's one key, "sets".
func setsList(d *yamlfile.Decoder, top *yaml.Node) *yaml.Node {
	if top.Kind != yaml.MappingNode {
		d.At(top, `expected a mapping with key "sets"`)
		return nil
	}
	var list *yaml.Node
	d.Describe(top, yamlfile.Schema{Required: []string{"sets"}})
	d.Map(top, yamlfile.Map{
		Fields: map[string]yamlfile.Field{"sets": {Decode: func(v *yaml.Node) {
			list = v
			if d.Describing() { // decodeSets reads the list after this; a schema run has no after
				d.Describe(v, yamlfile.Schema{MinItems: 1})
				d.List(v, "sets", func(_ int, n *yaml.Node) { decodeSet(d, n, map[string]int{}) })
			}
		}}},
		Unknown: func(k *yaml.Node) string { return fmt.Sprintf(`unknown key %q (expected "sets")`, k.Value) },
		Twice:   func(k, _ *yaml.Node) string { return `key "sets" given twice` },
	})
	switch {
	case list == nil:
		d.At(top, `missing key "sets"`)
	case list.Kind != yaml.SequenceNode || len(list.Content) == 0:
		d.At(list, `"sets" must be a non-empty list of release sets`)
	}
	return list
}

// decodeSets decodes every set, reporting the first problem of each; set
// names are unique in the file.
func decodeSets(d *yamlfile.Decoder, list *yaml.Node) []ReleaseSet {
	var out []ReleaseSet
	names := map[string]int{} // set name -> line
	for _, n := range list.Content {
		var rs ReleaseSet
		if d.Record(func(rd *yamlfile.Decoder) { rs = decodeSet(rd, n, names) }) {
			out = append(out, rs)
		}
	}
	return out
}

// decodeSet decodes one set: its name, then its components.
func decodeSet(d *yamlfile.Decoder, n *yaml.Node, names map[string]int) ReleaseSet {
	rs := ReleaseSet{Components: map[string]string{}}
	if n.Kind != yaml.MappingNode {
		d.At(n, `a release set must be a mapping with "name" and "components"`)
		return rs
	}
	var components, componentsKey *yaml.Node
	d.Describe(n, yamlfile.Schema{Required: []string{"components", "name"}})
	d.Map(n, yamlfile.Map{
		Fields: map[string]yamlfile.Field{
			"name": {Decode: func(v *yaml.Node) { rs.Name = setName(d, v, names) }},
			"components": {Decode: func(v *yaml.Node) {
				components, componentsKey = v, yamlfile.KeyOf(n, "components")
				if d.Describing() { // decoded below, once the name is known
					d.Describe(v, yamlfile.Schema{Required: []string{"kubernetes"}, PropertyNames: &yamlfile.Schema{Pattern: componentRE.String()}})
					decodeComponents(d, &rs, v)
				}
			}},
		},
		Unknown: func(k *yaml.Node) string {
			return fmt.Sprintf("unknown key %q in a release set (expected name, components)", k.Value)
		},
		Twice: func(k, _ *yaml.Node) string { return fmt.Sprintf("key %q given twice", k.Value) },
	})
	if rs.Name == "" {
		d.At(n, "release set has no name")
		return rs
	}
	if components == nil || components.Kind != yaml.MappingNode || len(components.Content) == 0 {
		d.At(n, `set %q: "components" must be a non-empty mapping of component: version`, rs.Name)
		return rs
	}
	decodeComponents(d, &rs, components)
	if _, ok := rs.Components["kubernetes"]; !ok {
		d.At(componentsKey, `set %q: component "kubernetes" (the kube-apiserver version) is required`, rs.Name)
	} else if _, _, ok := minorOf(rs.Components["kubernetes"]); !ok && rs.Recipes["kubernetes"].From == "" {
		d.At(yamlfile.ValueOf(components, "kubernetes"), "set %q: kubernetes version %q: expected MAJOR.MINOR[.PATCH]", rs.Name, rs.Components["kubernetes"])
	}
	return rs
}

// setName checks a set's name and that no earlier set has it; "" when invalid.
func setName(d *yamlfile.Decoder, v *yaml.Node, names map[string]int) string {
	if d.Describe(v, yamlfile.Schema{Type: []string{"string", "number"}, Pattern: setNameRE.String()}) {
		return ""
	}
	if kind := map[string]string{"!!null": "null", "!!bool": "boolean"}[v.ShortTag()]; kind != "" && v.Kind == yaml.ScalarNode && setNameRE.MatchString(v.Value) {
		d.At(v, "set name %s is a YAML %s, not a name: quote it (%q) if it is the name", v.Value, kind, v.Value)
		return ""
	}
	if v.Kind != yaml.ScalarNode || !setNameRE.MatchString(v.Value) {
		d.At(v, "set name %q: expected letters, digits, '.', '_' or '-'", v.Value)
		return ""
	}
	if prev, dup := names[v.Value]; dup {
		d.At(v, "set name %q already used at line %d", v.Value, prev)
		return ""
	}
	names[v.Value] = v.Line
	return v.Value
}

// decodeComponents decodes a set's component -> value mapping. A value is a
// version, "recipe:NAME", or a range {from: VALUE, to: VALUE}.
func decodeComponents(d *yamlfile.Decoder, rs *ReleaseSet, n *yaml.Node) {
	d.Map(n, yamlfile.Map{
		Each: func(k, v *yaml.Node) {
			switch {
			case !componentRE.MatchString(k.Value):
				d.At(k, "set %q: component name %q: expected lower-case letters, digits, '.', '+', '-'", rs.Name, k.Value)
			case k.Value == "kube-apiserver":
				d.At(k, `set %q: give the kube-apiserver version as "kubernetes"`, rs.Name)
			case v.Kind == yaml.MappingNode:
				decodeRange(d, rs, k.Value, v)
			default:
				if ver, recipe, ok := decodeValue(d, rs.Name, k.Value, v); ok {
					rs.Components[k.Value] = ver
					rs.ref(k.Value, func(r *RecipeRef) { r.From = recipe })
				}
			}
		},
		Twice: func(k, _ *yaml.Node) string { return fmt.Sprintf("set %q: component %q given twice", rs.Name, k.Value) },
	})
}

// ref updates the component's recipe references, keeping Recipes nil while
// the set names none.
func (rs *ReleaseSet) ref(comp string, set func(r *RecipeRef)) {
	r := rs.Recipes[comp]
	set(&r)
	if r == (RecipeRef{}) {
		return
	}
	if rs.Recipes == nil {
		rs.Recipes = map[string]RecipeRef{}
	}
	rs.Recipes[comp] = r
}

// decodeRange decodes {from: VALUE, to: VALUE}: both ends required, the first
// not newer than the last when both are versions.
func decodeRange(d *yamlfile.Decoder, rs *ReleaseSet, comp string, n *yaml.Node) {
	var from, to, fromRecipe, toRecipe string
	ok := true
	end := func(ver, recipe *string) yamlfile.Field {
		return yamlfile.Field{Required: true, Decode: func(v *yaml.Node) {
			var good bool
			if *ver, *recipe, good = decodeValue(d, rs.Name, comp, v); !good {
				ok = false
			}
		}}
	}
	before := d.Len()
	d.Map(n, yamlfile.Map{
		What:   fmt.Sprintf("set %q: component %q", rs.Name, comp),
		Fields: map[string]yamlfile.Field{"from": end(&from, &fromRecipe), "to": end(&to, &toRecipe)},
	})
	if !ok || d.Len() > before {
		return
	}
	if GoesBackwards(from, to) {
		d.At(n, "set %q: component %q: range from %s to %s goes backwards", rs.Name, comp, from, to)
		return
	}
	rs.Components[comp] = from
	if rs.Upgrades == nil {
		rs.Upgrades = map[string]string{}
	}
	rs.Upgrades[comp] = to
	rs.ref(comp, func(r *RecipeRef) { r.From, r.To = fromRecipe, toRecipe })
}

// decodeValue decodes a version or "recipe:NAME" (version "" then).
func decodeValue(d *yamlfile.Decoder, set, comp string, v *yaml.Node) (version, recipe string, ok bool) {
	if d.Describe(v, yamlfile.Schema{Type: []string{"string", "number"}, Pattern: `^(` + RecipePrefix + deb.PackageNamePattern + `|v?[0-9]\S*)$`}) {
		return "", "", false
	}
	if v.Kind != yaml.ScalarNode || v.Value == "" {
		d.At(v, "set %q: component %q: expected a version, recipe:NAME or {from: ..., to: ...}", set, comp)
		return "", "", false
	}
	if name, isRef := strings.CutPrefix(v.Value, RecipePrefix); isRef {
		if !deb.ValidPackageName(name) { // a recipe's name is a Debian source name
			d.At(v, "set %q: component %q: %q is not a recipe name (recipe:NAME, NAME as in recipes/NAME.yaml)", set, comp, v.Value)
			return "", "", false
		}
		return "", name, true
	}
	if _, err := debversion.FromUpstream(v.Value); err != nil {
		d.At(v, "set %q: component %q: %v", set, comp, err)
		return "", "", false
	}
	return v.Value, "", true
}

// GoesBackwards reports whether a range's first version is newer than its
// last; false while either is unknown ("", a recipe not yet resolved).
func GoesBackwards(from, to string) bool {
	if from == "" || to == "" {
		return false
	}
	c, err := debversion.CompareStrings(debianOf(from), debianOf(to))
	return err == nil && c > 0
}

func hasMinor(v string) bool { _, _, ok := minorOf(v); return ok }

// debianOf is an upstream version's Debian form, "" when it is not valid.
func debianOf(v string) string {
	d, err := debversion.FromUpstream(v)
	if err != nil {
		return ""
	}
	return d
}
