package plan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/supportdata"
	"github.com/updeb/updeb/internal/testkit/eoltest"
	"github.com/updeb/updeb/internal/testkit/trackingfixture"
	"github.com/updeb/updeb/internal/track"
)

// manyActions is a plan of n single recipes, each behind its watch, in two
// release sets beside Kubernetes 1.35 and 1.36 (whose bumps come between
// the aa* and the zz* ones): values written out (some as v1.2.0), named as
// recipe:NAME, ranges (one from the version bumped), recipes that require
// the one before them, versions a set file cannot take as written, a
// product at its end of life (a retire), violations that stay (their words
// changed with the version bumped) and one a bump fixes; with
// odd, bumps to versions that are none, which only the set file itself (read
// again for each) can refuse.
func manyActions(t *testing.T, n int, odd bool) ([]*recipe.Recipe, *supportdata.Copy, Options) {
	t.Helper()
	rs := []*recipe.Recipe{
		{Name: "kubernetes-1.35", Path: "r/kubernetes-1.35.yaml", Version: "1.35.1", Watch: &recipe.Watch{GitHub: "k/k"}},
		{Name: "kubernetes-1.36", Path: "r/kubernetes-1.36.yaml", Version: "1.36.1", Watch: &recipe.Watch{GitHub: "k/k"}},
	}
	newest := map[string]string{"kubernetes-1.35": "1.35.2", "kubernetes-1.36": "1.36.2"}
	var sets strings.Builder
	sets.WriteString("sets:\n")
	for _, k := range []string{"1.35", "1.36"} {
		fmt.Fprintf(&sets, "  - name: kubernetes%s\n    components:\n      kubernetes: recipe:kubernetes-%s\n      kubelet: %s.1\n", strings.ReplaceAll(k, ".", ""), k, k)
		for i := range n {
			name, v := comp(i, n), fmt.Sprintf("1.%d.0", i)
			switch i % 6 {
			case 0:
				fmt.Fprintf(&sets, "      %s: v%s\n", name, v)
			case 1:
				fmt.Fprintf(&sets, "      %s: recipe:%s\n", name, name)
			case 2:
				fmt.Fprintf(&sets, "      %s: {from: %s, to: 9.0.0}\n", name, v)
			case 3:
				fmt.Fprintf(&sets, "      %s: {from: 0.1.0, to: 9.0.0}\n", name)
			default:
				fmt.Fprintf(&sets, "      %s: %s\n", name, v)
			}
		}
	}
	for i := range n {
		name, v := comp(i, n), fmt.Sprintf("1.%d.0", i)
		r := &recipe.Recipe{Name: name, Path: "r/" + name + ".yaml", Version: v, Watch: &recipe.Watch{GitHub: "o/" + name}}
		switch {
		case i%5 == 1:
			r.Requires = map[string]string{comp(i-1, n): ">= 1.0"}
		case i%7 == 2:
			r.Requires = map[string]string{"kubernetes": ">= 1.36"}
		case i%11 == 3:
			r.Requires = map[string]string{comp(i+1, n): "<< 1.0"}
		}
		newest[name] = fmt.Sprintf("1.%d.1", i)
		if i == 3 {
			newest[name] = "9.0.0" // ships its range's end: a violation fixed
		}
		if odd && i%13 == 4 {
			newest[name] = fmt.Sprintf("1.%d.1_x", i) // no upstream version
		}
		rs = append(rs, r)
	}
	eolProduct := comp(5, n)
	data, err := supportdata.New("Source: t\nAs of: 2026-11-20", map[string][]supportdata.Cycle{
		"kubernetes": {eoltest.Cycle("kubernetes", "1.36", "2026-04-22", "2027-04-28", "2027-06-28", "1.36.5"),
			eoltest.Cycle("kubernetes", "1.35", "2025-12-17", "2026-12-28", "2027-02-28", "1.35.9")},
		eolProduct: {eoltest.Cycle(eolProduct, "1.5", "2025-01-01", "2025-06-01", "2025-07-01", "1.5.0")},
	})
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Now: today, Sets: []byte(sets.String()), SetsFile: "sets.yaml", Newest: func(r *recipe.Recipe) (*track.Candidates, error) {
		v := newest[r.Ref()]
		if r.Ref() == eolProduct {
			v = r.Version
		}
		return &track.Candidates{InTrack: track.Release{Version: v}, Latest: track.Release{Version: v}}, nil
	}}
	return rs, &supportdata.Copy{Data: data}, o
}

// comp names the i-th of n components: the first half before kubernetes,
// the rest after it.
func comp(i, n int) string {
	if i < n/2 {
		return fmt.Sprintf("aa%05d", i)
	}
	return fmt.Sprintf("zz%05d", i)
}

// TestEffectsPlayedInPlace: the actions played on the components they move
// only give the plan, byte for byte, that playing each on the whole world
// gives, with every kind of value, action and fallback of manyActions.
func TestEffectsPlayedInPlace(t *testing.T) {
	rs, data, o := manyActions(t, 120, true)
	plan := func(full bool) string {
		t.Helper()
		fullWay = full
		defer func() { fullWay = false }()
		p, err := Make(t.Context(), rs, data, o)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.MarshalIndent(p, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	got, want := plan(false), plan(true)
	for _, s := range []string{`"kind": "retire"`, `"breaks"`, `"fixes"`, `"kind": "compat"`, "unknown", `"recipe": "kubernetes-1.35"`} {
		if !strings.Contains(want, s) {
			t.Errorf("the plan has no %s: the case does not test it", s)
		}
	}
	if got != want {
		gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("played in place, line %d:\n%s\nplayed the full way:\n%s", i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("played in place: %d lines, the full way: %d", len(gl), len(wl))
	}
}

// TestEffectsManyActions: a plan of hundreds of actions on as many recipes in
// release sets that name them all is made whole: each action evaluates what
// it changes, not every set and recipe again (which took 4 s for 400 actions
// and grew with their square; speed is a benchmark's to show, not a timed
// test's).
func TestEffectsManyActions(t *testing.T) {
	rs, data, o := manyActions(t, 300, false)
	p, err := Make(t.Context(), rs, data, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Actions) < 300 {
		t.Fatalf("%d actions", len(p.Actions))
	}
}

// TestMakeStops: Make stops on its context's end (a signal) between the
// evaluations of the release sets, each of which takes a second for a file
// of thousands of sets: plan ran every action's to the end, and a SIGTERM
// to plan of a 600 KB release-sets.yaml (6,000 sets) took 7 s to end it.
func TestMakeStops(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	p, err := Make(ctx, trackingfixture.Recipes(t), fixtureData(t), fixtureOptions(t, today, watch))
	if !errors.Is(err, context.Canceled) || p != nil {
		t.Errorf("Make under a context that is done: a plan (%t), %v", p != nil, err)
	}
}
