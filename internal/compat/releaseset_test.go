package compat

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/recipe"
)

func TestParseReleaseSets(t *testing.T) {
	sets, err := ParseReleaseSets("r.yaml", []byte(`# comment
sets:
  - name: kubernetes135
    components:
      kubernetes: 1.35.8
      etcd: 3.6.14
      istioctl: "1.30"
  - name: k8s-1.36
    components: {kubernetes: v1.36.4, helm: 3.21.4}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []ReleaseSet{
		{Name: "kubernetes135", Components: map[string]string{"kubernetes": "1.35.8", "etcd": "3.6.14", "istioctl": "1.30"}},
		{Name: "k8s-1.36", Components: map[string]string{"kubernetes": "v1.36.4", "helm": "3.21.4"}},
	}
	if !reflect.DeepEqual(sets, want) {
		t.Errorf("got %+v\nwant %+v", sets, want)
	}
}

func TestParseReleaseSetsErrors(t *testing.T) {
	const p = "compat: invalid release set file: r.yaml:"
	for _, tc := range []struct{ in, want string }{
		{"", p + `1:1: empty file: expected "sets:" with a list of release sets`},
		{"- a\n", p + `1:1: expected a mapping with key "sets"`},
		{"set: []\n", p + `1:1: unknown key "set" (expected "sets")`},
		{"sets: []\n", p + `1:7: "sets" must be a non-empty list of release sets`},
		{"sets:\n  - a\n", p + `2:5: a release set must be a mapping with "name" and "components"`},
		{"sets:\n  - components: {kubernetes: 1.35.8}\n", p + `2:5: release set has no name`},
		{"sets:\n  - name: a b\n", p + `2:11: set name "a b": expected letters, digits, '.', '_' or '-'`},
		// A null or a boolean is no name (the schema says a string or a number).
		{"sets:\n  - name: null\n    components: {kubernetes: 1.35.8}\n", p + `2:11: set name null is a YAML null, not a name: quote it ("null") if it is the name`},
		{"sets:\n  - name: true\n    components: {kubernetes: 1.35.8}\n", p + `2:11: set name true is a YAML boolean, not a name: quote it ("true") if it is the name`},
		{"sets:\n  - name: a\n    name: b\n", p + `3:5: key "name" given twice`},
		{"sets:\n  - name: a\n    comps: {}\n", p + `3:5: unknown key "comps" in a release set (expected name, components)`},
		{"sets:\n  - name: a\n", p + `2:5: set "a": "components" must be a non-empty mapping of component: version`},
		{"sets:\n  - name: a\n    components: {kubernetes: 1.35.8}\n  - name: a\n    components: {kubernetes: 1.35.8}\n",
			p + `4:11: set name "a" already used at line 2`},
		{"sets:\n  - name: a\n    components:\n      kubernetes: 1.35.8\n      Helm: 3.1.0\n",
			p + `5:7: set "a": component name "Helm": expected lower-case letters, digits, '.', '+', '-'`},
		{"sets:\n  - name: a\n    components:\n      kubernetes: 1.35.8\n      helm: 3.1.0\n      helm: 3.2.0\n",
			p + `6:7: set "a": component "helm" given twice`},
		{"sets:\n  - name: a\n    components:\n      kubernetes: 1.35.8\n      kube-apiserver: 1.35.8\n",
			p + `5:7: set "a": give the kube-apiserver version as "kubernetes"`},
		{"sets:\n  - name: a\n    components:\n      kubernetes: 1.35.8\n      helm: [3]\n",
			p + `5:13: set "a": component "helm": expected a version, recipe:NAME or {from: ..., to: ...}`},
		{"sets:\n  - name: a\n    components:\n      kubernetes: 1.35.8\n      helm: latest\n",
			p + `5:13: set "a": component "helm": invalid Debian version: upstream version "latest" must start with a digit (after an optional v)`},
		{"sets:\n  - name: a\n    components:\n      etcd: 3.6.14\n",
			p + `3:5: set "a": component "kubernetes" (the kube-apiserver version) is required`},
		{"sets:\n  - name: a\n    components:\n      kubernetes: 1\n",
			p + `4:19: set "a": kubernetes version "1": expected MAJOR.MINOR[.PATCH]`},
		{"sets:\n  - name: a\n\tcomponents: {}\n", p + `2:1: found a tab character that violates indentation`},
		{"sets: [\n", p + `1:1: did not find expected node content`},
	} {
		_, err := ParseReleaseSets("r.yaml", []byte(tc.in))
		if err == nil || err.Error() != tc.want || !errors.Is(err, ErrReleaseSet) {
			t.Errorf("ParseReleaseSets(%q):\n got %v\nwant %s", tc.in, err, tc.want)
		}
	}
}

// Each set's first problem is reported, every set's, in file order.
func TestParseReleaseSetsAllSets(t *testing.T) {
	_, err := ParseReleaseSets("r.yaml", []byte("sets:\n  - {name: bad name}\n  - {name: c, components: &c {kubernetes: 1.35.8}}\n"))
	want := `compat: invalid release set file: r.yaml:3:27: components: YAML anchors and aliases are not supported`
	if err == nil || err.Error() != want {
		t.Errorf("anchors:\n got %v\nwant %s", err, want)
	}
	_, err = ParseReleaseSets("r.yaml", []byte(`sets:
  - name: ok
    components: {kubernetes: 1.35.8}
  - name: bad name
    comps: {}
  - name: b
    components: {kubernetes: 1.35.8, helm: latest, etcd: x}
  - 7
`))
	want = `compat: invalid release set file: r.yaml:4:11: set name "bad name": expected letters, digits, '.', '_' or '-'
r.yaml:7:44: set "b": component "helm": invalid Debian version: upstream version "latest" must start with a digit (after an optional v)
r.yaml:8:5: a release set must be a mapping with "name" and "components"`
	if err == nil || err.Error() != want || !errors.Is(err, ErrReleaseSet) {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

// The example file shipped in testdata/compat must stay valid.
func TestExampleReleaseSets(t *testing.T) {
	sets, err := LoadReleaseSets(filepath.Join("..", "..", "testdata", "compat", "release-sets.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) != 2 || sets[0].Recipes["kubernetes"].From != "kubernetes-1.35" || sets[1].Recipes["kubernetes"].To != "kubernetes-1.36" {
		t.Fatalf("example has %d sets: %+v", len(sets), sets)
	}
	if _, err := LoadReleaseSets(filepath.Join(t.TempDir(), "none.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v, want os.ErrNotExist", err)
	}
}

func FuzzParseReleaseSets(f *testing.F) {
	f.Add("sets:\n  - name: a\n    components: {kubernetes: 1.35.8, kubelet: 1.34.1, helm: 3.21.4, containerd: 2.2.7}\n")
	f.Add("sets:\n  - name: b\n    components: {kubernetes: 1.31.14, etcd: 3.5.33}\n")
	f.Add("sets:\n  - name: c\n    components: {kubernetes: {from: recipe:kubernetes-1.35, to: 1.36.4}, kubelet: {from: 1.35.8, to: 1.36.4}, istioctl: 1.30.3}\n")
	f.Fuzz(func(t *testing.T, in string) {
		sets, err := ParseReleaseSets("f.yaml", []byte(in))
		if err != nil {
			if !errors.Is(err, ErrReleaseSet) {
				t.Fatalf("error does not wrap ErrReleaseSet: %v", err)
			}
			return
		}
		// Every recipe it names resolves to a version of its own, unless it
		// is a recipe of another component.
		names := map[string]string{}
		for _, s := range sets {
			for _, ref := range s.Recipes {
				for _, n := range []string{ref.From, ref.To} {
					if n != "" {
						names[n] = "1.36.0"
					}
				}
			}
		}
		if err := Resolve(sets, names, "recipes"); err != nil {
			if !errors.Is(err, ErrUnresolved) || !strings.Contains(err.Error(), " ships ") {
				t.Fatalf("Resolve: %v", err)
			}
			return
		}
		// Whatever parses must check and render without failing.
		r := Evaluate(sets, Inputs{Now: checkDay})
		for _, f := range Formats() {
			if err := Render(discard{}, r, f); err != nil {
				t.Fatal(err)
			}
		}
	})
}

type discard struct{}

func (discard) Write(b []byte) (int, error) { return len(b), nil }

func TestRecipeReferencesAndRanges(t *testing.T) {
	sets, err := ParseReleaseSets("r.yaml", []byte(`sets:
  - name: upgrade
    components:
      kubernetes: {from: recipe:kubernetes-1.35, to: recipe:kubernetes-1.36}
      kubelet: {from: 1.35.4, to: recipe:kubernetes-1.36}
      helm: 3.21.4
      cri-tools: recipe:cri-tools-1.36
`))
	if err != nil {
		t.Fatal(err)
	}
	want := ReleaseSet{Name: "upgrade",
		Components: map[string]string{"kubernetes": "", "kubelet": "1.35.4", "helm": "3.21.4", "cri-tools": ""},
		Upgrades:   map[string]string{"kubernetes": "", "kubelet": ""},
		Recipes: map[string]RecipeRef{"kubernetes": {From: "kubernetes-1.35", To: "kubernetes-1.36"},
			"kubelet": {To: "kubernetes-1.36"}, "cri-tools": {From: "cri-tools-1.36"}},
	}
	if !reflect.DeepEqual(sets[0], want) {
		t.Fatalf("parsed %+v\nwant   %+v", sets[0], want)
	}
	if err := Resolve(sets, map[string]string{"kubernetes-1.35": "1.35.4", "kubernetes-1.36": "1.36.0"}, "recipes"); !errors.Is(err, ErrUnresolved) ||
		!strings.Contains(err.Error(), `set "upgrade", component "cri-tools": recipe:cri-tools-1.36 (no recipes/cri-tools-1.36.yaml)`) {
		t.Errorf("Resolve without cri-tools-1.36: %v", err)
	}
	// Recipes of another folder: the file looked for is there; of several
	// folders, no one file is named.
	for folder, want := range map[string]string{"site/recipes": "(no site/recipes/cri-tools-1.36.yaml)", "": "(no recipe of that name among those read)"} {
		if err := Resolve(CloneSets(sets), map[string]string{"kubernetes-1.35": "1.35.4", "kubernetes-1.36": "1.36.0"}, folder); !strings.Contains(fmt.Sprint(err), "recipe:cri-tools-1.36 "+want) {
			t.Errorf("Resolve with recipes of folder %q: %v, want %s", folder, err, want)
		}
	}
	if got := recipesFolder([]*recipe.Recipe{{Path: "a/x.yaml"}, {Path: "b/y.yaml"}}); got != "" {
		t.Errorf("recipes of two folders: %q", got)
	}
	if err := Resolve(sets, map[string]string{"kubernetes-1.35": "1.35.4", "kubernetes-1.36": "1.36.0", "cri-tools-1.36": "1.36.0"}, "recipes"); err != nil {
		t.Fatal(err)
	}
	if got := []string{sets[0].Components["kubernetes"], sets[0].Upgrades["kubernetes"], sets[0].Upgrades["kubelet"], sets[0].Components["cri-tools"]}; strings.Join(got, " ") != "1.35.4 1.36.0 1.36.0 1.36.0" {
		t.Errorf("resolved %v", got)
	}
	// A range goes forwards whichever way its versions are written: a
	// downgrade through recipes is refused as one written out is.
	back, err := ParseReleaseSets("r.yaml", []byte("sets:\n  - name: down\n    components:\n      kubernetes: {from: recipe:kubernetes-1.36, to: recipe:kubernetes-1.35}\n      etcd: {from: 3.6.14, to: recipe:etcd}\n"))
	if err != nil {
		t.Fatal(err)
	}
	err = Resolve(back, map[string]string{"kubernetes-1.35": "1.35.4", "kubernetes-1.36": "1.36.0", "etcd": "3.5.24"}, "recipes")
	for _, want := range []string{`set "down": component "kubernetes": range from 1.36.0 to 1.35.4 goes backwards`, `set "down": component "etcd": range from 3.6.14 to 3.5.24 goes backwards`} {
		if !errors.Is(err, ErrReleaseSet) || err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Resolve of a range backwards: %v\nwant %s", err, want)
		}
	}
	const p = "compat: invalid release set file: r.yaml:"
	for _, tc := range []struct{ in, want string }{
		{"sets:\n  - name: a\n    components:\n      kubernetes: recipe:Kubernetes 1.36\n",
			p + `4:19: set "a": component "kubernetes": "recipe:Kubernetes 1.36" is not a recipe name (recipe:NAME, NAME as in recipes/NAME.yaml)`},
		{"sets:\n  - name: a\n    components:\n      kubernetes: {from: 1.36.0, to: 1.35.4}\n",
			p + `4:19: set "a": component "kubernetes": range from 1.36.0 to 1.35.4 goes backwards`},
		{"sets:\n  - name: a\n    components:\n      kubernetes: {from: 1.35.4}\n",
			p + `4:19: set "a": component "kubernetes": missing required field "to"`},
		{"sets:\n  - name: a\n    components:\n      kubernetes: {from: 1.35.4, to: 1.36.0, via: 1.35.8}\n",
			p + `4:46: set "a": component "kubernetes": unknown field "via" (known: from, to)`},
		{"sets:\n  - name: a\n    components:\n      kubernetes: {from: latest, to: 1.36.0}\n",
			p + `4:26: set "a": component "kubernetes": invalid Debian version`},
	} {
		_, err := ParseReleaseSets("r.yaml", []byte(tc.in))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("ParseReleaseSets(%q):\n got %v\nwant %s", tc.in, err, tc.want)
		}
	}
}

// TestRequirementsPerVersion: two recipes of one component (cri-tools-1.35,
// cri-tools-1.36) each require their own Kubernetes minor; a set is checked
// against the requires of the recipe that ships its version.
func TestRecipeOfAnotherComponent(t *testing.T) {
	// A recipe of another component is refused, however its version reads;
	// the Kubernetes binaries take a kubernetes recipe, and a recipe without
	// a series suffix is its own component.
	all := map[string]string{"kubernetes-1.35": "1.35.4", "kubernetes-1.36": "1.36.0", "cri-tools-1.36": "1.36.0", "helm": "3.21.4", "etcd": "3.6.14", "etcd-3.7": "3.7.2", "kubernetes-extras": "1.36.0"}
	for in, want := range map[string]string{
		"kubernetes: recipe:helm":                    `set "a", component "kubernetes": recipe:helm ships helm, not kubernetes (a recipe of kubernetes is named kubernetes or kubernetes-MAJOR.MINOR)`,
		"etcd: recipe:kubernetes-1.36":               `set "a", component "etcd": recipe:kubernetes-1.36 ships kubernetes, not etcd`,
		"cri-tools: {from: 1.36.0, to: recipe:helm}": `set "a", component "cri-tools": recipe:helm ships helm, not cri-tools`,
		"kubelet: recipe:cri-tools-1.36":             `set "a", component "kubelet": recipe:cri-tools-1.36 ships cri-tools, not kubelet`,
		"kubectl: recipe:kubernetes-extras":          `set "a", component "kubectl": recipe:kubernetes-extras ships kubernetes-extras, not kubectl`,
		"etcd: recipe:etcd-3.7":                      "",
		"kubectl: recipe:kubernetes-1.35":            "",
	} {
		text := "sets:\n  - name: a\n    components:\n      " + in + "\n"
		if !strings.HasPrefix(in, "kubernetes:") {
			text += "      kubernetes: recipe:kubernetes-1.36\n"
		}
		sets, err := ParseReleaseSets("r.yaml", []byte(text))
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		err = Resolve(sets, all, "recipes")
		if want == "" && err != nil || want != "" && (!errors.Is(err, ErrUnresolved) || !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v\nwant %q", in, err, want)
		}
	}
}

func TestRequirementsPerVersion(t *testing.T) {
	reqs := []Requirement{
		{Component: "cri-tools", Version: "1.35.0", Requires: map[string]string{"kubernetes": ">=1.35 <1.36"}},
		{Component: "cri-tools", Version: "1.36.0", Requires: map[string]string{"kubernetes": ">=1.36 <1.37"}},
	}
	sets, err := ParseReleaseSets("r.yaml", []byte(`sets:
  - {name: a, components: {kubernetes: 1.35.8, cri-tools: 1.35.0}}
  - {name: b, components: {kubernetes: 1.36.4, cri-tools: 1.36.0}}
  - {name: c, components: {kubernetes: 1.35.8, cri-tools: 1.36.0}}
  - {name: d, components: {kubernetes: 1.36.4, cri-tools: 1.36.2}}
`))
	if err != nil {
		t.Fatal(err)
	}
	r := Evaluate(sets, Inputs{Requires: reqs, Now: checkDay})
	var got []string
	for _, f := range r.Findings {
		got = append(got, f.Set+" "+f.Rule)
	}
	// c's cri-tools is also another minor than its Kubernetes (cri-tools' matrix: a warning).
	if strings.Join(got, ",") != "c cri-tools-kubernetes,c requires" {
		t.Errorf("findings %v, want only c's requires and cri-tools' matrix", got)
	}
}

// The report's columns go by Kubernetes version as upstream versions sort: a
// leading "v" is no version of its own, and a pre-release comes before its
// release.
func TestSetsSortedByKubernetesVersion(t *testing.T) {
	sets, err := ParseReleaseSets("r.yaml", []byte(`sets:
  - {name: a, components: {kubernetes: v1.36.0}}
  - {name: b, components: {kubernetes: 1.35.0}}
  - {name: c, components: {kubernetes: 1.35.0-rc.1}}
  - {name: d, components: {kubernetes: V1.34.2+k3s1}}
`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range Evaluate(sets, Inputs{}).Sets {
		got = append(got, s.Name+" "+s.Kubernetes)
	}
	if want := "d V1.34.2+k3s1, c 1.35.0-rc.1, b 1.35.0, a v1.36.0"; strings.Join(got, ", ") != want {
		t.Errorf("columns %s, want %s", strings.Join(got, ", "), want)
	}
}
