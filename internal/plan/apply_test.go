package plan

import (
	"context"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/track"
	"github.com/updeb/updeb/pkg/digest"
)

// Apply decides before it downloads anything: the actions on other recipes
// than --only, a compat action (for a person), a bump or add that breaks a
// set that exists (held back), a bump in the track when the recipe moves
// to a newer minor (superseded). A dry run says what it would do.
func TestApplyDecisions(t *testing.T) {
	rs := []*recipe.Recipe{
		{Path: "r/etcd.yaml", Name: "etcd", Version: "3.6.14"},
		{Path: "r/helm.yaml", Name: "helm", Version: "3.21.4"},
		{Path: "r/kubernetes-1.34.yaml", Name: "kubernetes-1.34", Version: "1.34.7"},
		{Path: "r/kubernetes-1.36.yaml", Name: "kubernetes-1.36", Version: "1.36.5"},
	}
	p := &Plan{Actions: []Action{
		{Kind: ActAdd, Component: "kubernetes", Recipe: "kubernetes-1.36", NewRecipe: "kubernetes-1.37", Minor: "1.37", Version: "1.37.1",
			Sets: []SetEffect{{Set: "k137", New: true, Breaks: []string{"helm: too old"}}}},
		{Kind: ActBump, Component: "etcd", Recipe: "etcd", From: "3.6.14", Version: "3.6.15"},
		{Kind: ActBump, Component: "etcd", Recipe: "etcd", From: "3.6.15", Version: "3.7.2", Minor: "3.7", Track: "3.7.x"},
		{Kind: ActBump, Component: "helm", Recipe: "helm", From: "3.21.4", Version: "4.0.0", Sets: []SetEffect{{Set: "k136", Breaks: []string{"helm: helm 4.0.0 supports 1.31 to 1.34"}}}},
		{Kind: ActRetire, Component: "kubernetes", Recipe: "kubernetes-1.34", EndOfLife: "2026-10-27"},
		{Kind: ActCompat, Component: "helm", Reason: "release set k137: helm: too old"},
	}}
	res, err := Apply(context.Background(), p, rs, ApplyOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range res.Changes {
		got = append(got, c.Kind+" "+c.Recipe+" "+c.From+" "+c.To+" "+c.Track+" "+c.EndOfLife+" "+c.File)
	}
	want := []string{
		"add kubernetes-1.37  1.37.1   r/kubernetes-1.37.yaml",
		"bump etcd 3.6.14 3.7.2 3.7.x  r/etcd.yaml",
		"retire kubernetes-1.34    2026-10-27 r/kubernetes-1.34.yaml",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(res.Skipped) != 2 || !strings.HasPrefix(res.Skipped[0].Why, "superseded: etcd moved to a newer minor") ||
		res.Skipped[1].Why != "held back: it would break release set k136 (k136: helm: helm 4.0.0 supports 1.31 to 1.34)" {
		t.Errorf("skipped %+v", res.Skipped)
	}
	if len(res.Open) != 1 || len(res.Failures) != 0 || !res.DryRun {
		t.Errorf("open %v failures %v", res.Open, res.Failures)
	}
	if s := res.Summary(&Plan{Now: "2026-12-01"}); s != "Tracking 2026-12-01: 1 new minor, 1 bump, 1 end-of-life mark" {
		t.Errorf("summary %q", s)
	}

	only, err := Apply(context.Background(), p, rs, ApplyOptions{DryRun: true, Only: "kubernetes-1.34"})
	if err != nil || len(only.Changes) != 1 || only.Changes[0].Recipe != "kubernetes-1.34" || len(only.Skipped)+len(only.Open) != 0 {
		t.Errorf("--only: %v %+v", err, only)
	}
	// A recipe the plan names that is not there (an add before it failed)
	// fails that action only.
	missing, err := Apply(context.Background(), &Plan{Actions: []Action{{Kind: ActRetire, Recipe: "gone", EndOfLife: "2026-10-27"}, p.Actions[4]}}, rs, ApplyOptions{DryRun: true})
	if err != nil || len(missing.Failures) != 1 || !strings.Contains(missing.Failures[0].Error, "no recipe gone") || len(missing.Changes) != 1 {
		t.Errorf("a missing recipe: %v %+v", err, missing)
	}
	// Nothing nothing vouches for: no operator digests, no trust on first use.
	for _, bo := range []track.BumpOptions{{TrustOnFirstUse: true}, {Operator: map[string]map[string]digest.Set{}}} {
		if _, err := Apply(context.Background(), p, rs, ApplyOptions{Bump: bo}); err == nil {
			t.Errorf("Apply accepted %+v", bo)
		}
	}
}
