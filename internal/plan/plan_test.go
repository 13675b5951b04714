package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/supportdata"
	"github.com/updeb/updeb/internal/testkit/eoltest"
)

// Regenerate the golden files after an intended change with:
//
//	go test ./internal/plan -run TestGolden -update
//
// and review the diff (git diff internal/plan/testdata) before committing.
var update = flag.Bool("update", false, "rewrite the golden files in testdata")

var today = time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)

// fixture is a support data copy and recipes of a few shapes: a versioned
// Kubernetes series with a minor to add, a patch to bump and a minor gone
// end-of-life; etcd as one recipe with a newer minor out; containerd up to
// date; Istio whose one recipe is end-of-life; helm, which the data does not
// track.
func fixture(t *testing.T) ([]*recipe.Recipe, *supportdata.Copy) {
	t.Helper()
	c := eoltest.Cycle
	istio129 := c("istio", "1.29", "2026-02-16", "", "2026-08-31", "1.29.6")
	data, err := supportdata.New("Source: test\nAs of: 2026-11-20T08:00:00Z", map[string][]supportdata.Cycle{
		"kubernetes": {
			c("kubernetes", "1.37", "2026-08-26", "2027-08-28", "2027-10-28", "1.37.1"),
			c("kubernetes", "1.36", "2026-04-22", "2027-04-28", "2027-06-28", "1.36.5"),
			c("kubernetes", "1.35", "2025-12-17", "2026-12-28", "2027-02-28", "1.35.9"),
			c("kubernetes", "1.34", "2025-08-27", "2026-08-27", "2026-10-27", "1.34.12"),
		},
		"etcd": {
			c("etcd", "3.7", "2026-07-08", "", "", "3.7.2"),
			c("etcd", "3.6", "2025-05-15", "", "", "3.6.14"),
		},
		"containerd": {c("containerd", "2.3", "2026-04-30", "2028-04-30", "2028-04-30", "2.3.4")},
		"istio":      {c("istio", "1.31", "2026-08-31", "", "2027-02-28", "1.31.1"), istio129},
	})
	if err != nil {
		t.Fatal(err)
	}
	rs := []*recipe.Recipe{
		{Path: "recipes/kubernetes-1.34.yaml", Name: "kubernetes-1.34", Version: "1.34.7"},
		{Path: "recipes/kubernetes-1.35.yaml", Name: "kubernetes-1.35", Version: "1.35.9"},
		{Path: "recipes/kubernetes-1.36.yaml", Name: "kubernetes-1.36", Version: "1.36.0"},
		{Path: "recipes/etcd.yaml", Name: "etcd", Version: "3.6.14"},
		{Path: "recipes/containerd.yaml", Name: "containerd", Version: "2.3.4"},
		{Path: "recipes/istioctl.yaml", Name: "istioctl", Version: "1.29.6"},
		{Path: "recipes/helm.yaml", Name: "helm", Version: "3.21.4"},
	}
	return rs, &supportdata.Copy{Data: data, Path: "/var/lib/updeb/support/eol.yaml"}
}

// watch stands for the recipes' watch: newest patches as GitHub would give
// them, and a failure for one recipe.
func watch(r *recipe.Recipe) (string, error) {
	newest := map[string]string{"kubernetes-1.35": "1.35.9", "kubernetes-1.36": "1.36.5", "etcd": "3.6.15", "helm": "3.21.5"}
	if r.Name == "containerd" {
		return "", errors.New("GitHub API rate limit exceeded")
	}
	return newest[r.Name], nil
}

func TestGolden(t *testing.T) {
	rs, data := fixture(t)
	for _, tc := range []struct {
		name string
		o    Options
		want []string // "kind product recipe minor version"
	}{
		{"watch", Options{Now: today, Newest: watch}, []string{
			"add etcd  3.7 3.7.2", "bump etcd etcd 3.6 3.6.15", "bump istio istioctl 1.29 1.31.1",
			"add kubernetes  1.37 1.37.1", "bump kubernetes kubernetes-1.36 1.36 1.36.5", "retire kubernetes kubernetes-1.34 1.34 "}},
		{"offline", Options{Now: today}, []string{
			"add etcd  3.7 3.7.2", "bump istio istioctl 1.29 1.31.1",
			"add kubernetes  1.37 1.37.1", "bump kubernetes kubernetes-1.36 1.36 1.36.5", "retire kubernetes kubernetes-1.34 1.34 "}},
		// 1.35 goes end-of-life on 2027-02-28 (and 1.31 of istio).
		{"later", Options{Now: time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)}, []string{
			"add etcd  3.7 3.7.2", "bump istio istioctl 1.29 ",
			"add kubernetes  1.37 1.37.1", "bump kubernetes kubernetes-1.36 1.36 1.36.5",
			"retire kubernetes kubernetes-1.35 1.35 ", "retire kubernetes kubernetes-1.34 1.34 "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Make(rs, data, tc.o)
			var got []string
			for _, a := range p.Actions {
				got = append(got, strings.Join([]string{a.Kind, a.Product, a.Recipe, a.Minor, a.Version}, " "))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("actions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if !p.ActionNeeded {
				t.Error("action_needed is false")
			}
			var text, js bytes.Buffer
			if err := Render(&text, p); err != nil {
				t.Fatal(err)
			}
			enc := json.NewEncoder(&js)
			enc.SetIndent("", "  ")
			if err := enc.Encode(p); err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("testdata", tc.name+".txt"), text.Bytes())
			golden(t, filepath.Join("testdata", tc.name+".json"), js.Bytes())
		})
	}
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the output:\n%s", path, got)
	}
}

// TestJSONKeys: the JSON form has its schema name and snake_case keys only.
func TestJSONKeys(t *testing.T) {
	rs, data := fixture(t)
	b, err := json.Marshal(Make(rs, data, Options{Now: today, Newest: watch}))
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.(map[string]any)["schema"] != "updeb/plan/v1" {
		t.Errorf("schema %v", doc.(map[string]any)["schema"])
	}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, v := range x {
				if k != strings.ToLower(k) || strings.ContainsAny(k, "- ") {
					t.Errorf("key %q is not snake_case", k)
				}
				walk(v)
			}
		case []any:
			for _, v := range x {
				walk(v)
			}
		}
	}
	walk(doc)
}

// TestNothingToDo: recipes at the newest patch of every supported minor.
func TestNothingToDo(t *testing.T) {
	data, _ := supportdata.New("Source: t\nAs of: 2026-11-20", map[string][]supportdata.Cycle{
		"kubernetes": {eoltest.Cycle("kubernetes", "1.36", "2026-04-22", "2027-04-28", "2027-06-28", "1.36.5")},
	})
	p := Make([]*recipe.Recipe{{Path: "r/kubernetes-1.36.yaml", Name: "kubernetes-1.36", Version: "1.36.5"}}, &supportdata.Copy{Data: data}, Options{Now: today})
	var b bytes.Buffer
	Render(&b, p)
	if p.ActionNeeded || len(p.Actions) != 0 || !strings.Contains(b.String(), "No action needed.") {
		t.Errorf("plan %+v\n%s", p, b.String())
	}
}

func TestHTMLSection(t *testing.T) {
	rs, data := fixture(t)
	h, err := HTML(Make(rs, data, Options{Now: today}))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<section id="plan">`, `<tr class="add"><td>1.37</td>`, `<tr data-action="retire"><td>kubernetes-1.34</td>`,
		`<code>updeb bump kubernetes-1.36 --new-minor 1.37</code>`} {
		if !strings.Contains(string(h), want) {
			t.Errorf("section lacks %q:\n%s", want, h)
		}
	}
}

// A plan for a day before a cycle's release does not list the cycle: on
// 2026-08-01 Kubernetes 1.37 (released 2026-08-26) is nothing to add, and
// etcd 3.7 (released 2026-07-08) still is.
func TestUnreleasedCycles(t *testing.T) {
	rs, data := fixture(t)
	p := Make(rs, data, Options{Now: time.Date(2026, 8, 1, 15, 0, 0, 0, time.UTC)})
	var adds []string
	for _, a := range p.Actions {
		if a.Kind == ActAdd {
			adds = append(adds, a.Product+" "+a.Minor)
		}
	}
	if strings.Join(adds, ",") != "etcd 3.7" {
		t.Errorf("adds %v, want [etcd 3.7]", adds)
	}
	for _, pr := range p.Products {
		for _, m := range pr.Supported {
			if pr.Name == "kubernetes" && m.Cycle == "1.37" {
				t.Error("kubernetes 1.37 listed as supported before its release")
			}
		}
	}
	// On its release day it is.
	p = Make(rs, data, Options{Now: time.Date(2026, 8, 26, 0, 0, 0, 0, time.UTC)})
	if !strings.Contains(commands(p), "updeb bump kubernetes-1.36 --new-minor 1.37") {
		t.Errorf("on the release day: %s", commands(p))
	}
}

func commands(p *Plan) string {
	var out []string
	for _, a := range p.Actions {
		out = append(out, a.Command)
	}
	return strings.Join(out, "\n")
}
