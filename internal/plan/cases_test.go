package plan

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/supportdata"
	"github.com/updeb/updeb/internal/testkit/eoltest"
	"github.com/updeb/updeb/internal/testkit/trackingfixture"
	"github.com/updeb/updeb/internal/track"
)

// TestJSONKeys: the JSON form has its schema name and snake_case keys only.
func TestJSONKeys(t *testing.T) {
	p, err := Make(t.Context(), trackingfixture.Recipes(t), fixtureData(t), fixtureOptions(t, today, watch))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.(map[string]any)["schema"] != "updeb/plan/v2" {
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

// one is a plan of in-memory recipes against simple data.
func one(t *testing.T, rs []*recipe.Recipe, sets string, newest map[string][2]string) *Plan {
	t.Helper()
	data, err := supportdata.New("Source: t\nAs of: 2026-11-20", map[string][]supportdata.Cycle{
		"kubernetes": {eoltest.Cycle("kubernetes", "1.36", "2026-04-22", "2027-04-28", "2027-06-28", "1.36.5"),
			eoltest.Cycle("kubernetes", "1.35", "2025-12-17", "2026-12-28", "2027-02-28", "1.35.9")},
	})
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Now: today}
	if sets != "" {
		o.Sets, o.SetsFile = []byte(sets), "sets.yaml"
	}
	if newest != nil {
		o.Newest = func(r *recipe.Recipe) (*track.Candidates, error) {
			n := newest[r.Ref()]
			if n[0] == "fail" {
				return nil, fmt.Errorf("%s: GitHub API rate limit exceeded", r.Name)
			}
			return &track.Candidates{InTrack: track.Release{Version: n[0]}, Latest: track.Release{Version: n[1]}}, nil
		}
	}
	p, err := Make(t.Context(), rs, &supportdata.Copy{Data: data}, o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestNothingToDo(t *testing.T) {
	rs := []*recipe.Recipe{
		{Path: "r/kubernetes-1.36.yaml", Name: "kubernetes-1.36", Version: "1.36.5"},
		{Path: "r/kubernetes-1.35.yaml", Name: "kubernetes-1.35", Version: "1.35.9"},
		{Path: "r/helm.yaml", Name: "helm", Version: "3.21.4", Watch: &recipe.Watch{GitHub: "helm/helm", Track: "3.x"}},
	}
	p := one(t, rs, "sets:\n  - name: a\n    components: {kubernetes: recipe:kubernetes-1.36, helm: 3.21.4}\n",
		map[string][2]string{"kubernetes-1.36": {"1.36.5", "1.36.5"}, "kubernetes-1.35": {"1.35.9", "1.36.5"}, "helm": {"3.21.4", "3.21.4"}})
	var b strings.Builder
	Render(&b, p)
	if p.ActionNeeded || len(p.Actions) != 0 || !strings.Contains(b.String(), "No action needed: every recipe is at the newest release of its track and every release set passes.") ||
		!strings.Contains(b.String(), "  a    1.36.5      ok     ok") {
		t.Errorf("plan %+v\n%s", p, b.String())
	}
	// No release set file (a run from another folder): nothing of the
	// sets was checked, and the verdict does not say they pass.
	p = one(t, rs, "", map[string][2]string{"kubernetes-1.36": {"1.36.5", "1.36.5"}, "kubernetes-1.35": {"1.35.9", "1.36.5"}, "helm": {"3.21.4", "3.21.4"}})
	if v := p.Verdict(); v != "No action needed: every recipe is at the newest release of its track; no release set file, so no release set was checked." {
		t.Errorf("verdict without a release set file: %s", v)
	}
	// helm's releases could not be listed (rate limited): it may be behind,
	// so the plan does not say that every recipe is at its newest.
	p = one(t, rs, "sets:\n  - name: a\n    components: {kubernetes: recipe:kubernetes-1.36, helm: 3.21.4}\n",
		map[string][2]string{"kubernetes-1.36": {"1.36.5", "1.36.5"}, "kubernetes-1.35": {"1.35.9", "1.36.5"}, "helm": {"fail"}})
	b.Reset()
	Render(&b, p)
	if len(p.Actions) != 0 || strings.Contains(b.String(), "No action needed") ||
		!strings.Contains(b.String(), "No action found, but 1 recipe(s) could not be checked against upstream, their newest release unknown: helm.") {
		t.Errorf("plan with helm unknown:\n%s", b.String())
	}
	if h, err := HTML(p); err != nil || !strings.Contains(string(h), `<p class="verdict verdict-action">No action found, but 1 recipe(s)`) {
		t.Errorf("HTML (%v):\n%s", err, h)
	}
}

// TestWithdrawn: a recipe at a release upstream no longer lists (deleted,
// or made a draft again) is no "no action needed": the plan says so, in
// its verdict, its table and its JSON.
func TestWithdrawn(t *testing.T) {
	rs := []*recipe.Recipe{{Path: "r/helm.yaml", Name: "helm", Version: "3.21.4", Watch: &recipe.Watch{GitHub: "helm/helm", TagPrefix: "v", Track: "3.x"}}}
	data, err := supportdata.New("Source: t\nAs of: 2026-11-20", nil)
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Now: today, Newest: func(r *recipe.Recipe) (*track.Candidates, error) {
		cur := track.Release{Version: r.Version}
		return &track.Candidates{Current: r.Version, InTrack: cur, Latest: cur, Withdrawn: "helm 3.21.4 (tag v3.21.4): no such release of helm/helm any more"}, nil
	}}
	p, err := Make(t.Context(), rs, &supportdata.Copy{Data: data}, o)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	Render(&b, p)
	if !strings.Contains(b.String(), "No action found, but 1 recipe(s) are at a release upstream no longer lists (deleted, or made a draft again: withdrawn?): helm 3.21.4.") ||
		!strings.Contains(b.String(), "3.21.4; 3.21.4 withdrawn upstream?") || p.Components[0].Recipes[0].Withdrawn == "" {
		t.Errorf("plan %+v\n%s", p.Components, b.String())
	}
}

// A single recipe whose track allows the newer minor gets a plain bump; a
// bump that brings a violation to a set that exists says so (apply holds it
// back); a newer major outside the track is no action.
func TestTrackAndBreaks(t *testing.T) {
	rs := []*recipe.Recipe{
		{Path: "r/kubernetes-1.36.yaml", Name: "kubernetes-1.36", Version: "1.36.5"},
		{Path: "r/helm.yaml", Name: "helm", Version: "3.21.4", Watch: &recipe.Watch{GitHub: "helm/helm", TagPrefix: "v"}},
		{Path: "r/kustomize.yaml", Name: "kustomize", Version: "5.7.0", Watch: &recipe.Watch{GitHub: "kubernetes-sigs/kustomize", TagPrefix: "kustomize/v", Track: "5.x"}},
		{Path: "r/calicoctl.yaml", Name: "calicoctl", Version: "3.31.7", Watch: &recipe.Watch{GitHub: "projectcalico/calico", TagPrefix: "v", Track: "3.x"}},
	}
	p := one(t, rs, "sets:\n  - name: a\n    components: {kubernetes: recipe:kubernetes-1.36, helm: 3.21.4}\n",
		map[string][2]string{"kubernetes-1.36": {"1.36.5", "1.36.5"}, "helm": {"4.0.0", "4.0.0"}, "kustomize": {"5.8.1", "6.0.0"}, "calicoctl": {"3.32.0", "3.32.0"}})
	var got []string
	for _, a := range p.Actions {
		got = append(got, a.Kind+" "+a.Recipe+" "+a.Version+" "+a.Command+" "+a.ReleaseNotes+" "+strings.Join(a.Breaks(), ","))
	}
	want := []string{
		"bump calicoctl 3.32.0 updeb bump calicoctl --to 3.32.0 https://github.com/projectcalico/calico/releases/tag/v3.32.0 ",
		"bump helm 4.0.0 updeb bump helm --to 4.0.0 https://github.com/helm/helm/releases/tag/v4.0.0 a",
		"bump kustomize 5.8.1 updeb bump kustomize --to 5.8.1 https://github.com/kubernetes-sigs/kustomize/releases/tag/kustomize/v5.8.1 ",
		"compat     ",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("actions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(p.Actions[3].Reason, "release set a: helm: helm 4.0.0 supports Kubernetes 1.31.x to 1.34.x") {
		t.Errorf("compat action: %s", p.Actions[3].Reason)
	}
}

// cyclesData is support data of the cycles given (each names its product).
func cyclesData(t *testing.T, cycles ...supportdata.Cycle) *supportdata.Data {
	t.Helper()
	products := map[string][]supportdata.Cycle{}
	for _, c := range cycles {
		products[c.Product] = append(products[c.Product], c)
	}
	data, err := supportdata.New("Source: t\nAs of: 2026-11-20", products)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// kindCommands makes the plan of rs and returns its actions as "KIND COMMAND".
func kindCommands(t *testing.T, rs []*recipe.Recipe, data *supportdata.Data, o Options) []string {
	t.Helper()
	p, err := Make(t.Context(), rs, &supportdata.Copy{Data: data}, o)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range p.Actions {
		got = append(got, a.Kind+" "+a.Command)
	}
	return got
}

// A single recipe whose upstream's newest release is of a newer major
// (Helm 4, Calico 4) still moves to the newer minor of its own major
// (helm 3.22, calico 3.32): online from upstream's newest of that major,
// offline from the support data's newest supported cycle of it. The plan
// looked at the newest overall only, found another major, and proposed
// nothing: a recipe tracking 3.21.x stayed there.
func TestNewerMinorBesideNewerMajor(t *testing.T) {
	rs := []*recipe.Recipe{
		{Path: "r/helm.yaml", Name: "helm", Version: "3.21.4", Watch: &recipe.Watch{GitHub: "helm/helm", TagPrefix: "v", Track: "3.21.x"}},
		{Path: "r/calicoctl.yaml", Name: "calicoctl", Version: "3.31.7", Watch: &recipe.Watch{GitHub: "projectcalico/calico", TagPrefix: "v", Track: "3.31.x"}},
	}
	data := cyclesData(t, eoltest.Cycle("calico", "4.0", "2026-11-01", "", "", "4.0.1"), eoltest.Cycle("calico", "3.32", "2026-10-01", "", "", "3.32.2"),
		eoltest.Cycle("calico", "3.31", "2026-05-01", "", "", "3.31.7"))
	newest := map[string][3]string{"helm": {"3.21.4", "3.22.0", "4.2.0"}, "calicoctl": {"3.31.7", "3.32.2", "4.0.1"}}
	online := Options{Now: today, Newest: func(r *recipe.Recipe) (*track.Candidates, error) {
		n := newest[r.Ref()]
		return &track.Candidates{Current: r.Version, InTrack: track.Release{Version: n[0]}, InMajor: track.Release{Version: n[1]}, Latest: track.Release{Version: n[2]}}, nil
	}}
	for _, tc := range []struct {
		name string
		o    Options
		want []string
	}{
		{"online", online, []string{"bump updeb bump calicoctl --new-minor 3.32 --to 3.32.2", "bump updeb bump helm --new-minor 3.22 --to 3.22.0"}},
		{"offline", Options{Now: today}, []string{"bump updeb bump calicoctl --new-minor 3.32 --to 3.32.2"}},
	} {
		if got := kindCommands(t, rs, data, tc.o); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%s: actions:\n%s\nwant:\n%s", tc.name, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
		}
	}
}

// A series gets no recipe of a newer major, from upstream (Kubernetes
// 2.0.0 released) or from the support data (a cycle 2.0): a newer major is
// no action, and bump --new-minor 2.0 refuses it ("changes the major
// version"), so plan --apply failed on it every run. The newer minor of
// its own major is still added.
func TestSeriesNewerMajor(t *testing.T) {
	rs := []*recipe.Recipe{
		{Path: "r/kubernetes-1.36.yaml", Name: "kubernetes-1.36", Version: "1.36.5", Watch: &recipe.Watch{GitHub: "kubernetes/kubernetes", TagPrefix: "v", Track: "1.36.x"}},
	}
	data := cyclesData(t, eoltest.Cycle("kubernetes", "2.0", "2026-11-01", "", "", "2.0.0"), eoltest.Cycle("kubernetes", "1.37", "2026-10-01", "", "", "1.37.1"),
		eoltest.Cycle("kubernetes", "1.36", "2026-04-22", "2027-04-28", "2027-06-28", "1.36.5"))
	for name, o := range map[string]Options{
		"online": {Now: today, Newest: func(r *recipe.Recipe) (*track.Candidates, error) {
			return &track.Candidates{Current: r.Version, InTrack: track.Release{Version: "1.36.5"}, InMajor: track.Release{Version: "1.37.1"}, Latest: track.Release{Version: "2.0.0"}}, nil
		}},
		"offline": {Now: today},
	} {
		got := kindCommands(t, rs, data, o)
		if want := "add updeb bump kubernetes-1.36 --new-minor 1.37"; strings.Join(got, "\n") != want {
			t.Errorf("%s: actions:\n%s\nwant:\n%s", name, strings.Join(got, "\n"), want)
		}
	}
}

func TestRefusedSets(t *testing.T) {
	data, _ := supportdata.New("Source: t", nil)
	rs := []*recipe.Recipe{{Path: "r/helm.yaml", Name: "helm", Version: "3.21.4"}}
	for _, sets := range []string{"sets: [\n", "sets:\n  - name: a\n    components: {kubernetes: recipe:kubernetes-1.99}\n"} {
		if _, err := Make(t.Context(), rs, &supportdata.Copy{Data: data}, Options{Now: today, Sets: []byte(sets), SetsFile: "s.yaml"}); err == nil || !strings.Contains(err.Error(), "s.yaml") {
			t.Errorf("%q: %v", sets, err)
		}
	}
}

func TestHTMLSection(t *testing.T) {
	p, err := Make(t.Context(), trackingfixture.Recipes(t), fixtureData(t), fixtureOptions(t, today, watch))
	if err != nil {
		t.Fatal(err)
	}
	h, err := HTML(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<section id="plan">`, `<p class="verdict verdict-action">9 action(s) needed: 2 add, 5 bump, 1 retire, 1 compat.</p>`,
		`<tr class="add"><td>1.37</td>`, `<tr data-action="retire"><td>kubernetes-1.34</td>`, `<td>none: BUMP calicoctl</td>`,
		`<code>updeb bump kubernetes-1.36 --new-minor 1.37</code>`, `<tr data-new="true"><td>kubernetes137</td>`} {
		if !strings.Contains(string(h), want) {
			t.Errorf("section lacks %q:\n%s", want, h)
		}
	}
}

// A plan for a day before a cycle's release does not list the cycle: on
// 2026-11-10 Kubernetes 1.37 (released 2026-11-18 in the fixture's data) is
// nothing to add offline, and Calico 3.32 (2026-11-10) is a move.
func TestUnreleasedCycles(t *testing.T) {
	p, err := Make(t.Context(), trackingfixture.Recipes(t), fixtureData(t), fixtureOptions(t, time.Date(2026, 11, 10, 15, 0, 0, 0, time.UTC), nil))
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	for _, a := range p.Actions {
		cmds = append(cmds, a.Command)
	}
	all := strings.Join(cmds, "\n")
	if strings.Contains(all, "--new-minor 1.37") || !strings.Contains(all, "updeb bump calicoctl --new-minor 3.32 --to 3.32.0") {
		t.Errorf("commands:\n%s", all)
	}
}

// A recipe of a series that no release set covers where bump --new-minor
// would have put it (an apply cut short between the recipe and its set, a
// recipe added by hand) is an add of its release set only: compat checks
// nothing for that minor otherwise, and nothing else would ever say so.
// Apply writes the set and nothing else; run again, nothing is left to do.
// A series whose sets are there, or an end-of-life recipe, is no action.
func TestSetOnlyAdd(t *testing.T) {
	dir := t.TempDir()
	sets := filepath.Join(dir, "sets.yaml")
	text := "sets:\n  - name: k136\n    components: {kubernetes: recipe:kubernetes-1.36, cri-tools: recipe:cri-tools-1.36}\n"
	if err := os.WriteFile(sets, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	rs := []*recipe.Recipe{
		{Path: "r/kubernetes-1.37.yaml", Name: "kubernetes-1.37", Version: "1.37.0"},
		{Path: "r/kubernetes-1.36.yaml", Name: "kubernetes-1.36", Version: "1.36.5"},
		{Path: "r/kubernetes-1.35.yaml", Name: "kubernetes-1.35", Version: "1.35.9", EndOfLife: today.AddDate(0, 0, -1)},
		{Path: "r/kubernetes-1.34.yaml", Name: "kubernetes-1.34", Version: "1.34.7", EndOfLife: today.AddDate(0, 0, -1)},
		{Path: "r/cri-tools-1.36.yaml", Name: "cri-tools-1.36", Version: "1.36.0"},
		{Path: "r/cri-tools-1.37.yaml", Name: "cri-tools-1.37", Version: "1.37.0"},
	}
	p := one(t, rs, text, nil)
	var got []string
	for _, a := range p.Actions {
		if a.Kind == ActAdd {
			got = append(got, fmt.Sprintf("%s %s %s %v %s", a.Recipe, a.NewRecipe, a.Minor, a.SetOnly, a.Command))
		}
	}
	want := []string{ // the new set names cri-tools-1.37 at once: it is there
		"kubernetes-1.36 kubernetes-1.37 1.37 true updeb plan --apply --only kubernetes-1.37",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("adds:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if r := p.Actions[0].Reason; !strings.Contains(r, "kubernetes-1.37 is in no release set of sets.yaml, so compat checks nothing for it: release set k137 added for Kubernetes 1.37, copied from k136") {
		t.Errorf("reason: %s", r)
	}
	if len(p.Sets) != 2 || p.Sets[1].Name != "k137" || !p.Sets[1].New {
		t.Errorf("sets after the plan: %+v", p.Sets)
	}
	res, err := Apply(context.Background(), p, rs, ApplyOptions{SetsFile: sets})
	if err != nil || len(res.Failures) != 0 || len(res.Changes) != 1 || !res.Changes[0].SetOnly || res.Changes[0].File != "r/kubernetes-1.37.yaml" {
		t.Fatalf("apply: %v %+v", err, res)
	}
	after, _ := os.ReadFile(sets)
	if !strings.Contains(string(after), "  - name: k137\n    components: {kubernetes: recipe:kubernetes-1.37, cri-tools: recipe:cri-tools-1.37}\n") {
		t.Errorf("the release set file:\n%s", after)
	}
	if s := res.Summary(&Plan{Now: "2026-12-01"}); s != "Tracking 2026-12-01: 1 release set added" {
		t.Errorf("summary %q", s)
	}
	if d := string(Describe(p, res, nil)); !strings.Contains(d, "- kubernetes-1.37: its release set (the recipe, at 1.37.0, was in none)\n  release sets: release set k137 added") {
		t.Errorf("description:\n%s", d)
	}
	for _, a := range one(t, rs, string(after), nil).Actions {
		if a.Kind == ActAdd {
			t.Errorf("after the apply: %+v", a)
		}
	}
	// cri-tools-1.37 was written, its set was not extended.
	stale := strings.Replace(string(after), "{kubernetes: recipe:kubernetes-1.37, cri-tools: recipe:cri-tools-1.37}", "{kubernetes: recipe:kubernetes-1.37, cri-tools: recipe:cri-tools-1.36}", 1)
	var adds []string
	for _, a := range one(t, rs, stale, nil).Actions {
		if a.Kind == ActAdd {
			adds = append(adds, a.Recipe+" "+a.NewRecipe+" "+a.Reason)
		}
	}
	if len(adds) != 1 || !strings.HasPrefix(adds[0], "cri-tools-1.36 cri-tools-1.37 cri-tools-1.37 is in no release set of sets.yaml, so compat checks nothing for it: release set k137 now names recipe:cri-tools-1.37") {
		t.Errorf("a series' recipe its Kubernetes minor's set does not name: %q", adds)
	}
}
