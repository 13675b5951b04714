// Package report is the tracking loop's status page and metrics (updeb
// report): one Report gathers the plan, the compatibility matrix of every
// release set, each recipe against upstream, the age of each data table and,
// given a repository, what each suite and component lists, the versions in
// staging not yet in production and when each suite's Release expires. It is
// written as one self-contained HTML page (verdict first), as JSON and CSV,
// and as a Prometheus text file for node_exporter's textfile collector.
package report

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/updeb/updeb/internal/compat"
	"github.com/updeb/updeb/internal/plan"
	"github.com/updeb/updeb/internal/repo"
	"github.com/updeb/updeb/internal/signkey"
	"github.com/updeb/updeb/internal/supportdata"
	"github.com/updeb/updeb/pkg/debversion"
	"github.com/updeb/updeb/pkg/plural"
)

// Schema names the JSON form.
const Schema = "updeb/report/v1"

// Verdict levels, worst first.
const (
	LevelViolation = "violation" // a release set violates a rule, or a Release or every key that signs it has expired
	LevelAction    = "action"    // the plan has actions, or a Release or its signing key expires soon
	LevelOK        = "ok"
)

// Report is everything the page, the JSON, the CSV files and the metrics
// show. Its JSON keys are snake_case.
type Report struct {
	Schema    string         `json:"schema"`
	Generated time.Time      `json:"generated"`
	Verdict   Verdict        `json:"verdict"`
	Plan      *plan.Plan     `json:"plan"`
	Compat    *compat.Report `json:"compat"`
	Recipes   []Recipe       `json:"recipes"`
	Data      []DataTable    `json:"data"`
	// Repository is nil without --repo.
	Repository *Repository `json:"repository,omitempty"`
}

// Verdict is the page's first line: a level (colour) and words.
type Verdict struct {
	Level   string   `json:"level"`
	Text    string   `json:"text"`
	Reasons []string `json:"reasons"`
}

// More are the reasons after the first (the headline's).
func (v Verdict) More() []string {
	if len(v.Reasons) < 2 {
		return nil
	}
	return v.Reasons[1:]
}

// Recipe is a recipe against upstream.
type Recipe struct {
	Name      string `json:"name"`
	Component string `json:"component"`
	Version   string `json:"version"`
	Newest    string `json:"newest,omitempty"` // in its watch track
	Latest    string `json:"latest,omitempty"` // in any track
	Behind    bool   `json:"behind"`
	Unknown   string `json:"unknown,omitempty"`   // why upstream is unknown
	Withdrawn string `json:"withdrawn,omitempty"` // its own release is gone upstream (the plan's)
	NoWatch   bool   `json:"no_watch,omitempty"`  // no watch: nothing upstream to check
	State     string `json:"state"`               // supported, security-only, eol, unknown
	Support   string `json:"support"`
	Action    string `json:"action,omitempty"`
}

// DataTable is one data table the verdicts rest on, and its age.
type DataTable struct {
	Name    string `json:"name"`
	Copy    string `json:"copy"`
	AsOf    string `json:"as_of,omitempty"`
	AgeDays int    `json:"age_days"`
	// AgeSeconds is the age at Generated (0 when the date is unknown).
	AgeSeconds int64 `json:"age_seconds"`
	// Stale: older than data: max-age-days: allows, or dated after today
	// (the verdict asks for a refresh).
	Stale bool `json:"stale"`
}

// Repository is the apt repository's state.
type Repository struct {
	Path       string  `json:"path"`
	Staging    string  `json:"staging"`
	Production string  `json:"production"`
	Suites     []Suite `json:"suites"`
	// Pending are the packages whose version in staging is not in
	// production (newer, or not there at all).
	Pending []Pending `json:"pending"`
}

// Suite is one suite's live Release and what it lists.
type Suite struct {
	Name       string    `json:"name"`
	Generation int       `json:"generation"`
	Date       time.Time `json:"date"`
	ValidUntil time.Time `json:"valid_until,omitzero"`
	ExpiresIn  int64     `json:"expires_in_seconds"` // seconds from Generated to ValidUntil (0 without one)
	// SigningKeys are the keys that signed the live Release: a client
	// refuses the suite (EXPKEYSIG) once every key of them it trusts has
	// expired.
	SigningKeys []SigningKey `json:"signing_keys"`
	Components  []Component  `json:"components"`
}

// SigningKey is a key that signed a suite's live Release.
type SigningKey struct {
	Fingerprint string    `json:"fingerprint"`        // the primary key's
	Signer      string    `json:"signer"`             // the key that signed: the signing subkey's, or the primary's
	Expires     time.Time `json:"expires,omitzero"`   // when its signature stops verifying (omitted: never)
	ExpiresIn   int64     `json:"expires_in_seconds"` // seconds from Generated to Expires (0 without one)
}

// Component is what one component of a suite lists.
type Component struct {
	Name     string    `json:"name"`
	Packages []Package `json:"packages"`
}

// Package is one package version of a component.
type Package struct {
	Name          string   `json:"name"`
	Version       string   `json:"version"`
	Architectures []string `json:"architectures"`
}

// Pending is a package version in staging and not in production.
type Pending struct {
	Package    string `json:"package"`
	Component  string `json:"component"`
	Staging    string `json:"staging"`
	Production string `json:"production,omitempty"` // its newest version in production, "" for none
}

// Inputs are what Build gathers.
type Inputs struct {
	Now    time.Time
	Plan   *plan.Plan
	Compat *compat.Report
	// MaxAge is how old a data table may be before the verdict asks for a
	// refresh (data: max-age-days:; 0: any age).
	MaxAge time.Duration
	// RunFailed says a step of the tracking run before the report failed
	// (report --run-ok=false): the verdict says so.
	RunFailed bool
	// Suites and Packages are the repository's (nil without one).
	Repository *RepositoryInputs
}

// RepositoryInputs are the repository's suites and packages, and which
// suites are staging and production.
type RepositoryInputs struct {
	Path                string
	Suites              []repo.Suite
	Packages            []repo.Entry
	Staging, Production string
}

// noSetFile is what the verdict and the page say of a run without a
// release set file.
const noSetFile = "no release set file: no release set was checked"

// expiresSoon is how close a Release's Valid-Until makes the verdict "action".
const expiresSoon = 3 * 24 * time.Hour

// Build gathers the report.
func Build(in Inputs) *Report {
	// The report's time is whole seconds, as every time in updeb's JSON
	// (2026-11-24T05:52:26Z, which jq's fromdate reads), and the ages and
	// expiries are counted from it.
	in.Now = in.Now.UTC().Truncate(time.Second)
	r := &Report{Schema: Schema, Generated: in.Now, Plan: in.Plan, Compat: in.Compat, Recipes: []Recipe{}, Data: []DataTable{}}
	for _, c := range in.Plan.Components {
		for _, x := range c.Recipes {
			r.Recipes = append(r.Recipes, Recipe{Name: x.Name, Component: c.Name, Version: x.Version, Newest: x.Newest, Latest: x.Latest,
				Behind: x.Behind, Unknown: x.NewestError, Withdrawn: x.Withdrawn, NoWatch: x.NoWatch, State: x.State, Support: x.Support, Action: x.Action})
		}
	}
	for _, s := range in.Compat.Sources {
		t := DataTable{Name: s.Name, Copy: s.Copy, AsOf: s.AsOf}
		at := s.At // a refresh's time: the day alone would age it by up to a day
		if at.IsZero() {
			at, _ = time.Parse(time.DateOnly, s.AsOf)
		}
		if !at.IsZero() {
			age := in.Now.Sub(at)
			t.AgeSeconds, t.AgeDays = int64(age/time.Second), int(age.Hours()/24)
			t.Stale = in.MaxAge > 0 && (age > in.MaxAge || supportdata.AfterToday(at, time.Now()))
		}
		r.Data = append(r.Data, t)
	}
	if in.Repository != nil {
		r.Repository = repository(in.Repository, in.Now)
	}
	r.Verdict = verdict(r, in.MaxAge, in.RunFailed)
	return r
}

// repository groups the packages by suite and component and finds what
// staging has that production lacks.
func repository(in *RepositoryInputs, now time.Time) *Repository {
	out := &Repository{Path: in.Path, Staging: in.Staging, Production: in.Production, Suites: []Suite{}, Pending: []Pending{}}
	type key struct{ suite, comp, name, version string }
	arches := map[key][]string{}
	var keys []key
	for _, e := range in.Packages {
		k := key{e.Suite, e.Component, e.Package, e.Version}
		if _, ok := arches[k]; !ok {
			keys = append(keys, k)
		}
		arches[k] = append(arches[k], e.Architecture)
	}
	for _, s := range in.Suites {
		su := Suite{Name: s.Name, Generation: s.Generation, Date: s.Date.UTC(), ValidUntil: s.ValidUntil.UTC(), SigningKeys: []SigningKey{}, Components: []Component{}}
		if !s.ValidUntil.IsZero() {
			su.ExpiresIn = int64(s.ValidUntil.Sub(now) / time.Second)
		} else {
			su.ValidUntil = time.Time{}
		}
		for _, k := range s.SigningKeys {
			key := SigningKey{Fingerprint: k.Fingerprint, Signer: k.Signer}
			if !k.Expires.IsZero() {
				key.Expires, key.ExpiresIn = k.Expires.UTC(), int64(k.Expires.Sub(now)/time.Second)
			}
			su.SigningKeys = append(su.SigningKeys, key)
		}
		for _, c := range s.Components {
			comp := Component{Name: c, Packages: []Package{}}
			for _, k := range keys {
				if k.suite == s.Name && k.comp == c {
					a := arches[k]
					sort.Strings(a)
					comp.Packages = append(comp.Packages, Package{Name: k.name, Version: k.version, Architectures: a})
				}
			}
			su.Components = append(su.Components, comp)
		}
		out.Suites = append(out.Suites, su)
	}
	// Staging's versions that production lacks, per package and component.
	newest := map[[2]string]string{} // production: component, package -> newest version
	inProd := map[key]bool{}
	for _, k := range keys {
		if k.suite != in.Production {
			continue
		}
		inProd[key{"", k.comp, k.name, k.version}] = true
		if v := newest[[2]string{k.comp, k.name}]; v == "" || compareDebian(k.version, v) > 0 {
			newest[[2]string{k.comp, k.name}] = k.version
		}
	}
	for _, k := range keys {
		prod := newest[[2]string{k.comp, k.name}]
		// An older version production lacks (one a newer promotion
		// superseded) is not pending: promoting it would change nothing apt
		// installs.
		if k.suite == in.Staging && !inProd[key{"", k.comp, k.name, k.version}] && (prod == "" || compareDebian(k.version, prod) > 0) {
			out.Pending = append(out.Pending, Pending{Package: k.name, Component: k.comp, Staging: k.version, Production: prod})
		}
	}
	return out
}

// verdict is the worst of: release set violations, expired Releases and
// expired signing keys (violation); a failed step of the tracking run, plan
// actions, Releases expiring within three days, signing keys expiring
// within signkey.ExpiresSoon, recipes whose upstream could not be checked
// (a watch that failed, offline data that does not cover them) and data
// tables older than maxAge (action: an "OK" would claim what was not
// checked); else ok.
func verdict(r *Report, maxAge time.Duration, runFailed bool) Verdict {
	var bad, todo []string
	if runFailed {
		todo = append(todo, "a step of the tracking run failed (report --run-ok=false): see the job's log")
	}
	if n := r.Compat.Count(compat.Violation); n > 0 {
		var sets []string
		for _, s := range r.Compat.Sets {
			for _, f := range r.Compat.Findings {
				if f.Set == s.Name && f.Severity == compat.Violation {
					sets = append(sets, s.Name)
					break
				}
			}
		}
		bad = append(bad, fmt.Sprintf("%d compatibility violation(s) in release set(s) %s", n, strings.Join(sets, ", ")))
	}
	if r.Repository != nil {
		for _, s := range r.Repository.Suites {
			switch {
			case s.ValidUntil.IsZero():
			case s.ExpiresIn <= 0:
				bad = append(bad, fmt.Sprintf("suite %s's Release expired on %s: apt refuses it (updeb repo refresh)", s.Name, s.ValidUntil.Format(time.RFC3339)))
			case time.Duration(s.ExpiresIn)*time.Second < expiresSoon:
				todo = append(todo, fmt.Sprintf("suite %s's Release expires on %s (updeb repo refresh)", s.Name, s.ValidUntil.Format(time.RFC3339)))
			}
			// A suite signed by several keys (a rotation) stays valid to a
			// client as long as one key it trusts has not expired: an
			// expired one is a violation only when it was the last.
			valid := 0
			for _, k := range s.SigningKeys {
				if k.Expires.IsZero() || k.ExpiresIn > 0 {
					valid++
				}
			}
			for _, k := range s.SigningKeys {
				switch {
				case k.Expires.IsZero():
				case k.ExpiresIn <= 0 && valid == 0:
					bad = append(bad, fmt.Sprintf("suite %s's signing key %s expired on %s: apt refuses the suite (EXPKEYSIG); %s", s.Name, k.Fingerprint, k.Expires.Format(time.RFC3339), signkey.Renew))
				case k.ExpiresIn <= 0:
					todo = append(todo, fmt.Sprintf("suite %s's signing key %s expired on %s: clients that trust only it refuse the suite (EXPKEYSIG), those that trust another key that signs it do not; give every client the new archive-keyring.gpg, and drop the expired key (docs/operations.md, Key rotation)", s.Name, k.Fingerprint, k.Expires.Format(time.RFC3339)))
				case time.Duration(k.ExpiresIn)*time.Second < signkey.ExpiresSoon:
					todo = append(todo, fmt.Sprintf("suite %s's signing key %s expires on %s, and apt refuses the suite from then on (EXPKEYSIG): %s", s.Name, k.Fingerprint, k.Expires.Format(time.RFC3339), signkey.Renew))
				}
			}
		}
	}
	if n := len(r.Plan.Actions); n > 0 {
		todo = append(todo, r.Plan.Verdict())
	}
	var unchecked, withdrawn []string
	for _, x := range r.Recipes {
		if x.Unknown != "" && !x.NoWatch {
			unchecked = append(unchecked, x.Name)
		}
		if x.Withdrawn != "" {
			withdrawn = append(withdrawn, x.Name+" "+x.Version)
		}
	}
	if len(withdrawn) > 0 {
		todo = append(todo, fmt.Sprintf("%d recipe(s) at a release upstream no longer lists (deleted, or made a draft again: withdrawn?): %s; check upstream's notice before building them again", len(withdrawn), strings.Join(withdrawn, ", ")))
	}
	if marked := r.Plan.MarkedButSupported(); len(marked) > 0 {
		// The mark stops the line's bumps: its patches ship only once a
		// person removes it, which nothing else on the page asks for.
		todo = append(todo, fmt.Sprintf("%d recipe(s) marked end-of-life while the support data calls their cycle supported: %s", len(marked), strings.Join(marked, ", ")))
	}
	if len(unchecked) > 0 {
		todo = append(todo, fmt.Sprintf("%d recipe(s) not checked against upstream, their newest release unknown: %s (see the recipes)", len(unchecked), strings.Join(unchecked, ", ")))
	}
	var stale []string
	refresh := "updeb data refresh"
	for _, t := range r.Data {
		if t.Stale {
			what := fmt.Sprintf("%s (%s)", t.Name, plural.Days(t.AgeDays))
			if t.AgeSeconds < 0 {
				what = t.Name + " (as of " + t.AsOf + ", after today: written with a wrong clock)"
			}
			stale = append(stale, what)
			// A plain refresh writes the state folder, which commands do
			// not read while the repository's data file is there.
			if file, ok := strings.CutPrefix(t.Copy, "repository "); ok {
				refresh = "updeb data refresh --write " + file
			}
		}
	}
	if len(stale) > 0 {
		todo = append(todo, fmt.Sprintf("data older than %s: %s: run '%s'", plural.Days(int(maxAge.Hours()/24)), strings.Join(stale, ", "), refresh))
	}
	switch {
	case len(bad) > 0:
		return Verdict{Level: LevelViolation, Text: "VIOLATION: " + bad[0], Reasons: append(bad, todo...)}
	case len(todo) > 0:
		return Verdict{Level: LevelAction, Text: "ACTION NEEDED: " + todo[0], Reasons: todo}
	}
	text := "OK: every recipe is at the newest release of its track, every release set passes"
	if r.Plan.SetsFile == "" {
		// release-sets.yaml absent (report skips it): nothing passed.
		text = "OK: every recipe is at the newest release of its track; " + noSetFile
	}
	return Verdict{Level: LevelOK, Text: text, Reasons: []string{}}
}

// compareDebian orders Debian versions, by string when one does not parse.
func compareDebian(a, b string) int {
	c, err := debversion.CompareStrings(a, b)
	if err != nil {
		return strings.Compare(a, b)
	}
	return c
}
