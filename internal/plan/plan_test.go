package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/supportdata"
	"github.com/updeb/updeb/internal/testkit/eoltest"
	"github.com/updeb/updeb/internal/testkit/trackingfixture"
	"github.com/updeb/updeb/internal/track"
)

// Regenerate the golden files after an intended change with:
//
//	go test ./internal/plan -run TestGolden -update
//
// and review the diff (git diff internal/plan/testdata) before committing.
var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// today is the fixture's day: a month after the recipes were last moved.
var today = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// fixtureData is the support data of the fixture's day: Kubernetes 1.37 out,
// 1.34 end-of-life since 2026-10-27; etcd 3.7 and Calico 3.32 out; Istio 1.30
// end-of-life since 2026-11-30 and 1.31 out.
func fixtureData(t *testing.T) *supportdata.Copy {
	t.Helper()
	c := eoltest.Cycle
	istio131 := c("istio", "1.31", "2026-11-05", "", "2027-05-30", "1.31.1")
	istio131.SupportedKubernetes = "1.32 - 1.37"
	istio130 := c("istio", "1.30", "2026-05-18", "", "2026-11-30", "1.30.3")
	istio130.SupportedKubernetes = "1.32 - 1.36"
	data, err := supportdata.New("Source: test\nAs of: 2026-11-28T08:00:00Z", map[string][]supportdata.Cycle{
		"kubernetes": {
			c("kubernetes", "1.37", "2026-11-18", "2027-10-28", "2027-12-28", "1.37.1"),
			c("kubernetes", "1.36", "2026-04-22", "2027-04-28", "2027-06-28", "1.36.5"),
			c("kubernetes", "1.35", "2025-12-17", "2026-12-28", "2027-02-28", "1.35.9"),
			c("kubernetes", "1.34", "2025-08-27", "2026-08-27", "2026-10-27", "1.34.7"),
		},
		"etcd":       {c("etcd", "3.7", "2026-07-08", "", "", "3.7.2"), c("etcd", "3.6", "2025-05-15", "", "", "3.6.15")},
		"calico":     {c("calico", "3.32", "2026-11-10", "", "", "3.32.0"), c("calico", "3.31", "2025-11-10", "", "", "3.31.7")},
		"istio":      {istio131, istio130},
		"containerd": {c("containerd", "2.3", "2026-04-30", "2028-04-30", "2028-04-30", "2.3.4")},
	})
	if err != nil {
		t.Fatal(err)
	}
	return &supportdata.Copy{Data: data, Path: "/var/lib/updeb/support/eol.yaml"}
}

// watch stands for the recipes' watch on the fixture's day: what GitHub
// lists, newest in track and newest overall; a failure for containerd and
// no watch for cfssl.
func watch(r *recipe.Recipe) (*track.Candidates, error) {
	newest := map[string][2]string{
		"kubernetes-1.34": {"1.34.7", "1.37.1"}, "kubernetes-1.35": {"1.35.9", "1.37.1"}, "kubernetes-1.36": {"1.36.5", "1.37.1"},
		"cri-tools-1.35": {"1.35.0", "1.37.0"}, "cri-tools-1.36": {"1.36.0", "1.37.0"},
		"etcd": {"3.6.15", "3.7.2"}, "calicoctl": {"3.31.7", "3.32.0"}, "istioctl": {"1.30.3", "1.31.1"},
		"helm": {"3.21.4", "4.0.0"}, "kustomize": {"5.8.1", "5.8.1"}, "runc": {"1.3.5", "1.4.3"},
	}
	switch r.Ref() {
	case "containerd":
		return nil, errors.New("containerd: GitHub API rate limit exceeded")
	case "cfssl":
		return nil, fmt.Errorf("cfssl: %w", track.ErrNoWatch)
	}
	n := newest[r.Ref()]
	published := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	return &track.Candidates{Current: r.Version, InTrack: track.Release{Version: n[0], Published: published}, Latest: track.Release{Version: n[1], Published: published}}, nil
}

func fixtureOptions(t *testing.T, now time.Time, newest func(*recipe.Recipe) (*track.Candidates, error)) Options {
	return Options{Now: now, Newest: newest, Sets: trackingfixture.Sets(t), SetsFile: "release-sets.yaml", Derive: track.Derive}
}

func TestGolden(t *testing.T) {
	rs, data := trackingfixture.Recipes(t), fixtureData(t)
	for _, tc := range []struct {
		name string
		o    Options
		want []string // "kind recipe -> new recipe version: command"
	}{
		{"watch", fixtureOptions(t, today, watch), []string{
			"add kubernetes-1.36 -> kubernetes-1.37 1.37.1: updeb bump kubernetes-1.36 --new-minor 1.37",
			"add cri-tools-1.36 -> cri-tools-1.37 1.37.0: updeb bump cri-tools-1.36 --new-minor 1.37",
			"bump calicoctl 3.32.0: updeb bump calicoctl --new-minor 3.32 --to 3.32.0",
			"bump etcd 3.6.15: updeb bump etcd --to 3.6.15",
			"bump etcd 3.7.2: updeb bump etcd --new-minor 3.7 --to 3.7.2",
			"bump istioctl 1.31.1: updeb bump istioctl --new-minor 1.31 --to 1.31.1",
			"bump kubernetes-1.36 1.36.5: updeb bump kubernetes-1.36 --to 1.36.5",
			"retire kubernetes-1.34 : updeb plan --apply --only kubernetes-1.34",
			"compat  : ",
		}},
		{"offline", fixtureOptions(t, today, nil), []string{
			"add kubernetes-1.36 -> kubernetes-1.37 1.37.1: updeb bump kubernetes-1.36 --new-minor 1.37",
			"bump calicoctl 3.32.0: updeb bump calicoctl --new-minor 3.32 --to 3.32.0",
			"bump etcd 3.6.15: updeb bump etcd --to 3.6.15",
			"bump etcd 3.7.2: updeb bump etcd --new-minor 3.7 --to 3.7.2",
			"bump istioctl 1.31.1: updeb bump istioctl --new-minor 1.31 --to 1.31.1",
			"bump kubernetes-1.36 1.36.5: updeb bump kubernetes-1.36 --to 1.36.5",
			"retire kubernetes-1.34 : updeb plan --apply --only kubernetes-1.34",
			"compat  : ",
			"compat  : ",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Make(t.Context(), rs, data, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range p.Actions {
				rec := a.Recipe
				if a.NewRecipe != "" {
					rec += " -> " + a.NewRecipe
				}
				got = append(got, fmt.Sprintf("%s %s %s: %s", a.Kind, rec, a.Version, a.Command))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("actions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			var names []string
			for _, c := range p.Components {
				for _, r := range c.Recipes {
					names = append(names, r.Name)
				}
			}
			if len(names) != len(rs) {
				t.Errorf("the plan names %d recipes of %d: %v", len(names), len(rs), names)
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

// A server's words in the text plan (why upstream's releases are unknown)
// reach the terminal escaped: OSC 52 (writes the clipboard), CSI 2J (clears
// the screen), a carriage return, a bidi override and a line break (which
// would make a row of its own: a forged recipe line) come out as text.
func TestRenderEscapesUpstreamText(t *testing.T) {
	p := &Plan{Components: []Component{{Name: "etcd", Recipes: []Recipe{{Name: "etcd", Version: "3.6.14", Support: "unknown",
		NewestError: "github.com: 403 \x1b]52;c;ZWNobyBwd25lZA==\x07\x1b[2J\rrate limit\u202e\n  etcd  3.6.14  3.6.x  supported  3.6.14  -"}}}}}
	var b bytes.Buffer
	if err := Render(&b, p); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.ContainsAny(out, "\x1b\x07\r\u202e") {
		t.Fatalf("the plan's text holds control characters:\n%q", out)
	}
	if strings.Contains(out, "\n  etcd  3.6.14  3.6.x") {
		t.Fatalf("the server's line break made a row of the plan:\n%s", out)
	}
	if !strings.Contains(out, `unknown (github.com: 403 \x1b]52;c;ZWNobyBwd25lZA==\a\x1b[2J\rrate limit\u202e\n  etcd  3.6.14  3.6.x  supported  3.6.14  -)`) {
		t.Errorf("the cell does not show the escaped message:\n%s", out)
	}
}

// A server's words in the change description (a failed action's error)
// reach git log, which prints a commit message as it is, escaped: an OSC
// sequence, a carriage return, a bidi override come out as text; the
// description's own line breaks stay.
func TestDescribeEscapesUpstreamText(t *testing.T) {
	p := &Plan{Now: "2026-12-01"}
	res := &ApplyResult{Failures: []Failure{{Action: Action{Kind: ActBump, Recipe: "etcd", Version: "3.6.15"},
		Error: "GitHub API https://api.github.com/repos/etcd-io/etcd/releases: HTTP 500: \x1b]52;c;ZWNobyBwd25lZA==\x07\rok\u202e"}}}
	d := string(Describe(p, res, &Verification{Base: "HEAD", Text: "PASS etcd\n"}))
	if strings.ContainsAny(d, "\x1b\x07\r\u202e") {
		t.Fatalf("the description holds control characters:\n%q", d)
	}
	if !strings.Contains(d, `HTTP 500: \x1b]52;c;ZWNobyBwd25lZA==\a\rok\u202e`+"\n") || !strings.Contains(d, "\n  PASS etcd\n") {
		t.Errorf("the description:\n%s", d)
	}
}

// A server's words in the change description cannot skip the CI of the
// tracking commit: GitLab runs no pipeline for a commit whose message holds
// [skip ci] or [ci skip] (its regexp below), GitHub none for those and
// [no ci], [skip actions], [actions skip]. A download answered "404 [skip
// ci]" by one upstream's server made the job's push, every other recipe's
// bump in it, go unchecked by the merge request's pipeline.
func TestDescribeCannotSkipCI(t *testing.T) {
	p := &Plan{Now: "2026-12-01"}
	res := &ApplyResult{Failures: []Failure{{Action: Action{Kind: ActBump, Recipe: "etcd", Version: "3.6.15"},
		Error: `https://dl.example.com/etcd.tar.gz answered "404 [skip ci]" [CI-Skip] [no ci] [Skip_Actions] [actions skip]`}}}
	d := string(Describe(p, res, &Verification{Base: "HEAD", Text: "REVIEW etcd: asset [ci skip].tar.gz\n"}))
	gitlab := regexp.MustCompile(`(?i)\[(ci[ _-]skip|skip[ _-]ci)\]`)
	if m := gitlab.FindAllString(d, -1); m != nil {
		t.Errorf("GitLab skips the pipeline of this description (%q):\n%s", m, d)
	}
	for _, marker := range []string{"[skip ci]", "[ci skip]", "[no ci]", "[skip actions]", "[actions skip]"} {
		if strings.Contains(strings.ToLower(d), marker) {
			t.Errorf("GitHub skips the workflows of this description (%s):\n%s", marker, d)
		}
	}
	if !strings.Contains(d, `answered "404 [skip ci\]" [CI-Skip\] [no ci\] [Skip_Actions\] [actions skip\]`+"\n") || !strings.Contains(d, "\n  REVIEW etcd: asset [ci skip\\].tar.gz\n") {
		t.Errorf("the description does not read as the server's words:\n%s", d)
	}
}

// A server's words in the change description mention nobody in the merge
// request GitLab makes of the tracking commit (contrib/gitlab pushes with
// merge_request.create): "@all" notified every member of the project. An
// address (etcd@example.com) is no mention and stays as it is.
func TestDescribeMentionsNobody(t *testing.T) {
	p := &Plan{Now: "2026-12-01"}
	res := &ApplyResult{Failures: []Failure{{Action: Action{Kind: ActBump, Recipe: "etcd", Version: "3.6.15"},
		Error: "403 @all: ask @ops-team/oncall (or(@here) mail release@example.com)\n@root"}}}
	d := string(Describe(p, res, nil))
	if m := regexp.MustCompile(`(^|[^\w\\])@\w`).FindAllString(d, -1); m != nil {
		t.Errorf("GitLab mentions %q in this description:\n%s", m, d)
	}
	if !strings.Contains(d, `403 \@all: ask \@ops-team/oncall (or(\@here) mail release@example.com)`+"\n    \\@root\n") {
		t.Errorf("the description does not read as the server's words:\n%s", d)
	}
}

// The description names the recipes the plan could not check against
// upstream (their releases could not be listed: the GitHub API's rate
// limit) and those at a release upstream no longer lists: it read as the
// month's whole change while helm, say, was never looked at.
func TestDescribeNamesUnchecked(t *testing.T) {
	p := &Plan{Now: "2026-12-01", Components: []Component{{Name: "helm", Recipes: []Recipe{{Name: "helm", Version: "3.21.4", NewestError: "helm: GitHub API rate limit exceeded"}}},
		{Name: "etcd", Recipes: []Recipe{{Name: "etcd", Version: "3.6.14", Withdrawn: "etcd 3.6.14 (tag v3.6.14): no such release"}}},
		{Name: "cfssl", Recipes: []Recipe{{Name: "cfssl", Version: "1.6.5", NewestError: "cfssl: track: the recipe has no watch", NoWatch: true}}}}}
	d := string(Describe(p, &ApplyResult{}, nil))
	for _, want := range []string{"\nNot checked against upstream (their newest release unknown; updeb plan says why): helm\n",
		"\nAt a release upstream no longer lists (deleted, or made a draft again: withdrawn?): etcd 3.6.14\n"} {
		if !strings.Contains(d, want) {
			t.Errorf("the description lacks %q:\n%s", want, d)
		}
	}
}

// A cycle upstream records as ended without a day (endoflife.date's `eol:
// true`) is retired with the day of its last release, the same on every
// day the plan runs, so that a tracking branch not yet merged is not
// rewritten each morning; with no release day either, the run's day.
// TestOfflineCyclesOldestFirst: support data that lists each product's
// cycles oldest first (an endoflife.date mirror or an old copy that does)
// plans the same: the newest supported cycle is the newest, not the first.
func TestOfflineCyclesOldestFirst(t *testing.T) {
	rs, data := trackingfixture.Recipes(t), fixtureData(t)
	oldestFirst := map[string][]supportdata.Cycle{}
	for _, p := range data.Data.Products() {
		cs := data.Data.Cycles(p)
		slices.Reverse(cs)
		oldestFirst[p] = cs
	}
	reversed, err := supportdata.New(data.Data.Source, oldestFirst)
	if err != nil {
		t.Fatal(err)
	}
	actions := func(d *supportdata.Data) string {
		t.Helper()
		p, err := Make(t.Context(), rs, &supportdata.Copy{Data: d}, fixtureOptions(t, today, nil))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, a := range p.Actions {
			out = append(out, a.Kind+" "+a.Recipe+" "+a.Version)
		}
		return strings.Join(out, "\n")
	}
	if got, want := actions(reversed), actions(data.Data); got != want {
		t.Errorf("cycles oldest first, actions:\n%s\nwant:\n%s", got, want)
	}
}

func TestRetireDayWithoutEOLDate(t *testing.T) {
	rs := trackingfixture.Recipes(t)
	k134 := eoltest.Cycle("kubernetes", "1.34", "2025-08-27", "2026-08-27", "", "1.34.7")
	k134.EOLPassed = true
	retire := func(c supportdata.Cycle, now time.Time) string {
		t.Helper()
		data, err := supportdata.New("Source: test\nAs of: 2026-11-28T08:00:00Z", map[string][]supportdata.Cycle{
			"kubernetes": {
				eoltest.Cycle("kubernetes", "1.36", "2026-04-22", "2027-04-28", "2027-06-28", "1.36.5"),
				eoltest.Cycle("kubernetes", "1.35", "2025-12-17", "2026-12-28", "2027-02-28", "1.35.9"),
				c,
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		p, err := Make(t.Context(), rs, &supportdata.Copy{Data: data}, fixtureOptions(t, now, nil))
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range p.Actions {
			if a.Kind == ActRetire && a.Recipe == "kubernetes-1.34" {
				return a.EndOfLife
			}
		}
		t.Fatalf("no retire of kubernetes-1.34 on %s: %+v", now.Format(time.DateOnly), p.Actions)
		return ""
	}
	k134.LatestReleaseDate = time.Date(2026, 10, 14, 0, 0, 0, 0, time.UTC)
	for _, now := range []time.Time{today, today.AddDate(0, 0, 1), today.AddDate(0, 1, 0)} {
		if got := retire(k134, now); got != "2026-10-14" {
			t.Errorf("on %s: end-of-life %s, want the last release's day 2026-10-14", now.Format(time.DateOnly), got)
		}
	}
	k134.LatestReleaseDate = time.Time{}
	if got := retire(k134, today); got != "2026-12-01" {
		t.Errorf("with no release day: end-of-life %s, want the run's day 2026-12-01", got)
	}
}

// A recipe marked end-of-life from a day upstream has since moved (the
// support data now says its cycle is supported) gets no action, as every
// mark, but its support says what the data says and how to track it again:
// a supported line's patches do not stop without a word.
func TestMarkTheDataContradicts(t *testing.T) {
	rs := trackingfixture.Recipes(t)
	for _, r := range rs {
		switch r.Name {
		case "kubernetes-1.36":
			r.EndOfLife = time.Date(2026, 11, 15, 0, 0, 0, 0, time.UTC)
		case "kubernetes-1.34":
			r.EndOfLife = time.Date(2026, 10, 27, 0, 0, 0, 0, time.UTC)
		}
	}
	data, err := supportdata.New("Source: test\nAs of: 2026-11-28T08:00:00Z", map[string][]supportdata.Cycle{
		"kubernetes": {
			eoltest.Cycle("kubernetes", "1.36", "2026-04-22", "2027-04-28", "2027-06-28", "1.36.5"),
			eoltest.Cycle("kubernetes", "1.35", "2025-12-17", "2026-12-28", "2027-02-28", "1.35.9"),
			eoltest.Cycle("kubernetes", "1.34", "2025-08-27", "2026-08-27", "2026-10-27", "1.34.7"),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Make(t.Context(), rs, &supportdata.Copy{Data: data}, fixtureOptions(t, today, nil))
	if err != nil {
		t.Fatal(err)
	}
	support := map[string]string{}
	for _, c := range p.Components {
		for _, r := range c.Recipes {
			support[r.Name] = r.Support
		}
	}
	for name, want := range map[string]string{
		"kubernetes-1.36": "eol since 2026-11-15 (marked in the recipe, but the support data says supported until 2027-04-28: remove the mark to track it again)",
		"kubernetes-1.34": "eol since 2026-10-27 (marked in the recipe)", // the data agrees
	} {
		if support[name] != want {
			t.Errorf("%s: support %q, want %q", name, support[name], want)
		}
	}
	for _, a := range p.Actions {
		if a.Recipe == "kubernetes-1.36" {
			t.Errorf("an action on a marked recipe: %+v", a)
		}
	}
}

// A cycle that endoflife.date names otherwise than MAJOR.MINOR ("1.37.0",
// "v1.37", "01.37": lookups read each as cycle 1.37) is added as the minor
// 1.37, once, offline or beside the watch's 1.37.1: never "bump
// kubernetes-1.36 --new-minor 1.37.0", which bump refuses, nor a second add
// from the new recipe.
func TestAddCycleNamedOtherwise(t *testing.T) {
	for _, name := range []string{"1.37.0", "v1.37", "01.37"} {
		for _, newest := range []func(*recipe.Recipe) (*track.Candidates, error){nil, watch} {
			rs, data := trackingfixture.Recipes(t), fixtureData(t)
			m := map[string][]supportdata.Cycle{}
			for _, p := range data.Data.Products() {
				m[p] = data.Data.Cycles(p)
			}
			m["kubernetes"][0] = eoltest.Cycle("kubernetes", name, "2026-11-18", "2027-10-28", "2027-12-28", "1.37.1")
			m["kubernetes"][0].Latest = name + ".1" // a release of the cycle as named
			if name == "1.37.0" {
				m["kubernetes"][0].Latest = name
			}
			d, err := supportdata.New(data.Data.Source, m)
			if err != nil {
				t.Fatal(err)
			}
			p, err := Make(t.Context(), rs, &supportdata.Copy{Data: d}, fixtureOptions(t, today, newest))
			if err != nil {
				t.Fatal(err)
			}
			var adds []string
			for _, a := range p.Actions {
				if a.Kind == ActAdd && a.Component == "kubernetes" {
					adds = append(adds, a.Command)
				}
			}
			if want := []string{"updeb bump kubernetes-1.36 --new-minor 1.37"}; !slices.Equal(adds, want) {
				t.Errorf("cycle %q (watch: %t): adds %q, want %q", name, newest != nil, adds, want)
			}
			for _, c := range p.Components {
				for _, s := range c.Supported {
					if c.Name == "kubernetes" && s.Cycle == name && !s.Add {
						t.Errorf("cycle %q (watch: %t): supported minor not marked to add: %+v", name, newest != nil, s)
					}
				}
			}
		}
	}
}

// TestOfflinePrereleaseLatest: support data whose latest release of a cycle
// is a pre-release (an endoflife.date mirror that lists release candidates:
// Kubernetes 1.36.6-rc.0, a first 1.37.0-rc.1, Calico's 3.32.0-0.dev tag)
// planned, offline, a bump of kubernetes-1.36 to the release candidate, an
// add of kubernetes-1.37 at it and a move of calicoctl to the dev build,
// though none of the recipes follows pre-releases (the watch would leave
// them out online). A recipe whose watch follows them still gets the bump.
func TestOfflinePrereleaseLatest(t *testing.T) {
	rs, data := trackingfixture.Recipes(t), fixtureData(t)
	m := map[string][]supportdata.Cycle{}
	for _, p := range data.Data.Products() {
		m[p] = data.Data.Cycles(p)
	}
	m["kubernetes"][0].Latest = "1.37.0-rc.1"
	m["kubernetes"][1].Latest = "1.36.6-rc.0"
	m["calico"][0].Latest = "3.32.0-0.dev"
	d, err := supportdata.New(data.Data.Source, m)
	if err != nil {
		t.Fatal(err)
	}
	for _, followed := range []bool{false, true} {
		for _, r := range rs {
			if r.Ref() == "kubernetes-1.36" {
				r.Watch.Prereleases = followed
			}
		}
		p, err := Make(t.Context(), rs, &supportdata.Copy{Data: d}, fixtureOptions(t, today, nil))
		if err != nil {
			t.Fatal(err)
		}
		bumped := false
		for _, a := range p.Actions {
			bumped = bumped || a.Recipe == "kubernetes-1.36" && a.Version == "1.36.6-rc.0"
			if !followed && a.Version != "" && track.IsPrerelease(a.Version) {
				t.Errorf("offline: %s %s %s (%s), a pre-release the recipe does not follow", a.Kind, a.Recipe, a.Version, a.Command)
			}
		}
		if followed && !bumped {
			t.Errorf("offline, kubernetes-1.36 following pre-releases: no bump to 1.36.6-rc.0: %+v", p.Actions)
		}
	}
}

// A server's words in the change description close no issue of the
// recipes' project: GitLab (its default closing pattern below) and GitHub
// close the issues a commit message or merge request description says it
// fixes once it lands on the default branch. A download answered "404:
// fixes #1" closed issue 1 at the merge of the tracking branch. Words
// without a reference stay as they are, a set name included.
func TestDescribeClosesNoIssue(t *testing.T) {
	p := &Plan{Now: "2026-12-01"}
	res := &ApplyResult{Failures: []Failure{{Action: Action{Kind: ActBump, Recipe: "etcd", Version: "3.6.15"},
		Error: "404: Fixes #1, #2 and #3; closes: group/project#4\nresolving issue #5, implements https://gitlab.example.com/g/p/-/issues/6 (FIXED OPS-7)\nfixes k8s-1.36 and the closing bracket"}}}
	d := string(Describe(p, res, nil))
	ref := `(?:[\w./-]*#\d+|https?://\S+/issues/\d+)`
	gitlab := regexp.MustCompile(`\b(?:[Cc]los(?:e[sd]?|ing)|\b[Ff]ix(?:e[sd]|ing)?|\b[Rr]esolv(?:e[sd]?|ing)|\b[Ii]mplement(?:s|ed|ing)?)(:?) +(?:(?:issues? +)?` + ref + `(?:(?: *,? +and +| *,? *)?)|([A-Z][A-Z0-9_]+-\d+))+`)
	github := regexp.MustCompile(`(?i)\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?):? +` + ref)
	for _, re := range []*regexp.Regexp{gitlab, github} {
		if m := re.FindAllString(d, -1); m != nil {
			t.Errorf("the description closes %q:\n%s", m, d)
		}
	}
	if !strings.Contains(d, `404: Fixes \#1, #2 and #3; closes: \group/project#4`) || !strings.Contains(d, `resolving issue \#5, implements \https://gitlab.example.com/g/p/-/issues/6 (FIXED \OPS-7)`) ||
		!strings.Contains(d, "fixes k8s-1.36 and the closing bracket") {
		t.Errorf("the description does not read as the server's words:\n%s", d)
	}
}

// A series the release sets name by Kubernetes minor (cri-tools) has no
// end-of-life data of its own: its minor ends with Kubernetes' (1.35 on
// 2027-02-28), retired with the same day and no longer bumped. Before, it
// stayed supported for good.
func TestFollowerRetiresWithKubernetes(t *testing.T) {
	now := time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)
	newest := func(r *recipe.Recipe) (*track.Candidates, error) {
		c, err := watch(r)
		if err == nil && r.Ref() == "cri-tools-1.35" {
			c.InTrack.Version = "1.35.1" // a patch after the end of life
		}
		return c, err
	}
	p, err := Make(t.Context(), trackingfixture.Recipes(t), fixtureData(t), fixtureOptions(t, now, newest))
	if err != nil {
		t.Fatal(err)
	}
	var retired bool
	for _, a := range p.Actions {
		switch {
		case a.Recipe == "cri-tools-1.36" && a.Kind == ActRetire:
			t.Errorf("cri-tools-1.36 retired, its Kubernetes minor being supported: %s", a.Reason)
		case a.Recipe != "cri-tools-1.35":
		case a.Kind == ActRetire:
			retired = true
			if a.EndOfLife != "2027-02-28" || !strings.Contains(a.Reason, "follows kubernetes 1.35, end of life since 2027-02-28") || a.Command != "updeb plan --apply --only cri-tools-1.35" {
				t.Errorf("retire of cri-tools-1.35: end of life %q, %q, %q", a.EndOfLife, a.Reason, a.Command)
			}
		default:
			t.Errorf("%s of cri-tools-1.35, end-of-life with kubernetes 1.35: %s", a.Kind, a.Reason)
		}
	}
	if !retired {
		t.Errorf("no retire of cri-tools-1.35 once kubernetes 1.35 is end-of-life: %+v", p.Actions)
	}
	for _, c := range p.Components {
		for _, r := range c.Recipes {
			if r.Name == "cri-tools-1.35" && (r.State != "eol" || r.Action != ActRetire) {
				t.Errorf("cri-tools-1.35: state %q, action %q", r.State, r.Action)
			}
		}
	}
}
