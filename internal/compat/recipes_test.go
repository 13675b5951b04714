package compat

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/supportdata"
)

// A recipe marked end-of-life makes every set that deploys its version
// violate rule eol, for components the support data covers or not, once
// (not again beside the data's own finding), and only from its day on.
func TestRetiredRecipes(t *testing.T) {
	day := func(s string) time.Time { t, _ := time.Parse(time.DateOnly, s); return t }
	rs := []*recipe.Recipe{
		{Path: "recipes/helm.yaml", Name: "helm", Version: "3.21.4", EndOfLife: day("2026-09-01"), Requires: map[string]string{"kubernetes": ">=1.30"}},
		{Path: "recipes/kubernetes-1.31.yaml", Name: "kubernetes-1.31", Version: "1.31.14", EndOfLife: day("2025-10-28")},
		{Path: "recipes/runc.yaml", Name: "runc", Version: "1.4.3", EndOfLife: day("2027-01-01")},
	}
	requires, shipped, retired := FromRecipes(rs)
	if len(requires) != 1 || requires[0].Component != "helm" || len(retired) != 3 || retired[1].Component != "kubernetes" || retired[1].Recipe != "kubernetes-1.31" ||
		strings.Join(shipped["kubernetes"], ",") != "1.31.14" {
		t.Fatalf("FromRecipes: %+v %v %+v", requires, shipped, retired)
	}
	if v := RecipeVersions(rs); v["kubernetes-1.31"] != "1.31.14" || len(v) != 3 {
		t.Errorf("versions %v", v)
	}
	sets, err := ParseReleaseSets("s.yaml", []byte("sets:\n  - name: a\n    components: {kubernetes: 1.31.14, kubelet: 1.31.14, helm: 3.21.4, runc: 1.4.3}\n"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := supportdata.Bundled()
	if err != nil {
		t.Fatal(err)
	}
	eolFindings := func(in Inputs) (got []string) {
		for _, f := range Evaluate(sets, in).Findings {
			if f.Rule == RuleEOL {
				got = append(got, f.Component+": "+f.Message)
			}
		}
		return got
	}
	// Without support data: the marks alone (runc's day is still to come).
	got := eolFindings(Inputs{Now: day("2026-11-24"), Retired: retired})
	want := []string{
		"kubernetes: kubernetes 1.31.14: recipes/kubernetes-1.31.yaml marks it end-of-life since 2025-10-28",
		"kube-controller-manager: kube-controller-manager 1.31.14: recipes/kubernetes-1.31.yaml marks it end-of-life since 2025-10-28",
		"kube-scheduler: kube-scheduler 1.31.14: recipes/kubernetes-1.31.yaml marks it end-of-life since 2025-10-28",
		"kubelet: kubelet 1.31.14: recipes/kubernetes-1.31.yaml marks it end-of-life since 2025-10-28",
		"kube-proxy: kube-proxy 1.31.14: recipes/kubernetes-1.31.yaml marks it end-of-life since 2025-10-28",
		"kubeadm: kubeadm 1.31.14: recipes/kubernetes-1.31.yaml marks it end-of-life since 2025-10-28",
		"kubectl: kubectl 1.31.14: recipes/kubernetes-1.31.yaml marks it end-of-life since 2025-10-28",
		"helm: helm 3.21.4: recipes/helm.yaml marks it end-of-life since 2026-09-01",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("eol findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// With data that says so too: the data's finding, not a second one.
	got = eolFindings(Inputs{Now: day("2026-11-24"), Retired: retired, EOL: data})
	if n := strings.Count(strings.Join(got, "\n"), "marks it"); n != 1 || len(got) != 8 || !strings.Contains(got[0], "kubernetes cycle 1.31 is end-of-life") {
		t.Errorf("with data:\n%s", strings.Join(got, "\n"))
	}
	rep := Evaluate(sets, Inputs{Now: day("2026-11-24"), Retired: retired})
	if c := rep.Sets[0].Cells["helm"]; c.State != "eol" || c.Support != "eol since 2026-09-01 (marked in recipes/helm.yaml)" {
		t.Errorf("helm cell %+v", c)
	}
}

// TestEvaluateManyRecipes: a set of 4,000 components with as many recipes,
// each with its requires and its mark, gives the right findings: each cell
// finds its own component's requires and marks among all the recipes'. (Its
// speed, once quadratic, is a benchmark's to show, not a timed test's.)
func TestEvaluateManyRecipes(t *testing.T) {
	const n = 4000
	day := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	set := ReleaseSet{Name: "big", Components: map[string]string{}}
	var in Inputs
	in.Now = day
	for i := range n {
		c, v := fmt.Sprintf("c%05d", i), fmt.Sprintf("1.%d.0", i)
		set.Components[c] = v
		in.Requires = append(in.Requires, Requirement{Component: c, Version: v, Requires: map[string]string{fmt.Sprintf("c%05d", (i+1)%n): ">= 1.0"}})
		since := day.AddDate(0, 0, 1) // not yet
		if i == n/2 {
			since = day.AddDate(0, 0, -1)
		}
		in.Retired = append(in.Retired, Retired{Component: c, Version: v, Recipe: c, Since: since})
	}
	rep := Evaluate([]ReleaseSet{set}, in)
	if len(rep.Findings) != 1 || rep.Findings[0].Rule != RuleEOL || rep.Findings[0].Component != fmt.Sprintf("c%05d", n/2) {
		t.Fatalf("findings %+v", rep.Findings)
	}
}
