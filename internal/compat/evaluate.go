// Package compat checks that the versions deployed together work together:
// Kubernetes' version-skew policy (built in), upstream's compatibility
// tables (internal/compatdata: Helm's version skew, containerd's recommended
// versions, Istio's, Calico's and Cilium's supported Kubernetes versions,
// kubeadm's etcd, cri-tools' matrix; bundled, refreshed or a repository's
// data file, overrides included), the constraints recipes declare on other
// components (`requires`, in the grammar of debversion.ParseConstraint), and
// end-of-life dates (internal/supportdata). It renders the result as a
// terminal table, Markdown, CSV or one self-contained HTML page.
//
// Severity, decided here:
//   - Violation: a Kubernetes skew rule, Helm's n-3 table, Istio's supported
//     Kubernetes versions, an etcd older than kubeadm accepts, a recipe's
//     requires, or a component whose release cycle is end-of-life. The
//     command exits 1.
//   - Warning: what upstream calls a recommendation or what it tests, not an
//     exclusive support list (containerd's recommended versions, Calico's and
//     Cilium's tested Kubernetes versions, cri-tools of the Kubernetes minor,
//     the etcd minor kubeadm deploys), a version or Kubernetes minor the
//     tables lack, a cycle missing from the end-of-life data. Reported, exit 0.
//
// A finding that rests on an operator's override says so, with its reason.
package compat

import (
	"fmt"
	"html/template"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/updeb/updeb/internal/compatdata"
	"github.com/updeb/updeb/internal/supportdata"
	"github.com/updeb/updeb/pkg/debversion"
	"github.com/updeb/updeb/pkg/plural"
)

// Severity of a finding.
type Severity string

const (
	Violation Severity = "violation"
	Warning   Severity = "warning"
)

// Rule names, as they appear in reports.
const (
	RuleKubeletSkew           = "kubelet-skew"
	RuleKubeProxySkew         = "kube-proxy-skew"
	RuleKubectlSkew           = "kubectl-skew"
	RuleControllerManagerSkew = "kube-controller-manager-skew"
	RuleSchedulerSkew         = "kube-scheduler-skew"
	// RuleCloudControllerManagerSkew: a cloud-controller-manager the set
	// names (none is defaulted) against kube-apiserver, as kube-scheduler.
	RuleCloudControllerManagerSkew = "cloud-controller-manager-skew"
	// RuleAPIServerSkew: a rolling upgrade of kube-apiserver over more than
	// one minor (HA instances more than one minor apart, a minor skipped).
	RuleAPIServerSkew = "kube-apiserver-skew"
	// RuleKubeadmSkew: kubeadm's own skew policy, against kube-apiserver,
	// the kubelet, and the kubeadm it upgrades from.
	RuleKubeadmSkew = "kubeadm-skew"
	RuleHelmSkew    = "helm-skew"
	RuleContainerd  = "containerd-recommended"
	RuleRequires    = "requires"
	RuleEOL         = "eol"
	RuleEOLUnknown  = "eol-unknown"
	RuleIstio       = "istio-kubernetes"
	RuleKubeadmEtcd = "kubeadm-etcd"
	RuleCalico      = "calico-kubernetes"
	RuleCilium      = "cilium-kubernetes"
	RuleCRITools    = "cri-tools-kubernetes"
	RuleShipped     = "shipped"
)

// Finding is one rule's verdict on one component of one set.
type Finding struct {
	Set          string   `json:"set"`
	Rule         string   `json:"rule"`
	Severity     Severity `json:"severity"`
	Component    string   `json:"component"`
	Version      string   `json:"version"`
	Other        string   `json:"other,omitempty"` // the component it was checked against, if any
	OtherVersion string   `json:"other_version,omitempty"`
	Message      string   `json:"message"`
}

// Cell is one component's version in one set.
type Cell struct {
	Version string `json:"version"`
	// To is the version a range (a rolling upgrade) moves to, "" for none.
	To string `json:"to,omitempty"`
	// Recipe and ToRecipe name the recipes the set took Version and To from
	// ("recipe:NAME" in the set file), "" for a version written out.
	Recipe    string `json:"recipe,omitempty"`
	ToRecipe  string `json:"to_recipe,omitempty"`
	Defaulted bool   `json:"defaulted,omitempty"` // taken from "kubernetes"
	// Cycle and Support are set when the end-of-life data covers the component.
	Cycle   string `json:"cycle,omitempty"`
	Support string `json:"support,omitempty"` // supportdata.Status.String()
	State   string `json:"state,omitempty"`   // supportdata.State.String()
}

// SetResult is one column of the matrix.
type SetResult struct {
	Name       string          `json:"name"`
	Kubernetes string          `json:"kubernetes"`
	Cells      map[string]Cell `json:"cells"`
}

// Source names a data file, which copy of it was used (bundled, or refreshed
// by updeb data refresh), the day it is true of, and its provenance (its
// header comment).
type Source struct {
	Name string `json:"name"`
	Copy string `json:"copy"`
	AsOf string `json:"as_of,omitempty"`
	Text string `json:"text"`
	// At is the time AsOf is the day of (a refresh's fetch time, a
	// snapshot's midnight; zero for none): the data's age, as updeb data
	// status counts it.
	At time.Time `json:"-"`
}

// Report is the outcome of Evaluate. Sets are sorted by Kubernetes version, then
// name; Components is the row order; Findings are sorted by set, component, rule.
type Report struct {
	Now        time.Time   `json:"now"`
	Sets       []SetResult `json:"sets"`
	Components []string    `json:"components"`
	Findings   []Finding   `json:"findings"`
	Sources    []Source    `json:"sources"`
	// Extra, when set, is an HTML section shown in the HTML page (updeb
	// compat puts the plan of supported minors there, rendered by package
	// plan); other formats leave it out.
	Extra template.HTML `json:"-"`
}

// Count returns how many findings have the given severity.
func (r *Report) Count(s Severity) int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity == s {
			n++
		}
	}
	return n
}

// scanned counts the findings a scan looks at (FindingsFor, the renderers'
// index): a test checks that rendering looks at each about once.
var scanned = func(n int) {}

// FindingsFor returns the findings about one component of one set.
func (r *Report) FindingsFor(set, component string) []Finding {
	scanned(len(r.Findings))
	var out []Finding
	for _, f := range r.Findings {
		if f.Set == set && f.Component == component {
			out = append(out, f)
		}
	}
	return out
}

// Requirement is one recipe's requires: what version Version of Component
// works with (other component -> constraint).
type Requirement struct {
	Component string
	// Version is the version the recipe ships; "" applies to every version.
	Version  string
	Requires map[string]string
}

// Requirements turns component -> other component -> constraint (one set of
// requires per component, whatever its version) into Requirements.
func Requirements(byComponent map[string]map[string]string) []Requirement {
	var out []Requirement
	for _, c := range sortedKeys(byComponent) {
		out = append(out, Requirement{Component: c, Requires: byComponent[c]})
	}
	return out
}

// ValidateRequires parses every constraint and returns the first error,
// naming the component.
func ValidateRequires(reqs []Requirement) error {
	for _, r := range reqs {
		for _, o := range sortedKeys(r.Requires) {
			if _, err := debversion.ParseConstraint(r.Requires[o]); err != nil {
				return fmt.Errorf("%s requires %s: %w", r.Component, o, err)
			}
		}
	}
	return nil
}

// requirementFor picks the requires that apply to version of comp: those of
// the recipe that ships that version, else of one that ships its
// MAJOR.MINOR, else those declared for every version, else those of the
// component's only recipe; nil when none applies (several recipes of the
// component, none of that version: the shipped rule reports the version).
// cands are the component's requires (Inputs.requiresOf), in their order.
func requirementFor(cands []Requirement, version string) map[string]string {
	vm, vn, vok := minorOf(version)
	for _, match := range []func(r Requirement) bool{
		func(r Requirement) bool { return r.Version != "" && shipsVersion([]string{r.Version}, version) },
		func(r Requirement) bool { m, n, ok := minorOf(r.Version); return ok && vok && m == vm && n == vn },
		func(r Requirement) bool { return r.Version == "" },
		func(Requirement) bool { return len(cands) == 1 },
	} {
		for _, r := range cands {
			if match(r) {
				return r.Requires
			}
		}
	}
	return nil
}

// Inputs are what Evaluate checks release sets against besides Kubernetes'
// skew policy.
type Inputs struct {
	// Tables are the compatibility tables (compatdata.Load); nil: the
	// bundled copy.
	Tables *compatdata.Tables
	// Requires are the recipes' requires (nil for none).
	Requires []Requirement
	// EOL is the end-of-life data (nil: no end-of-life check); EOLCopy says
	// which copy it is, for the report ("bundled" when empty).
	EOL     *supportdata.Data
	EOLCopy string
	Now     time.Time
	// Shipped is component -> the upstream versions the recipes ship (nil:
	// not checked). A set version no recipe of its component ships is a
	// violation; a component no recipe ships is a warning.
	Shipped map[string][]string
	// Retired are the recipes marked end-of-life: a set that deploys one of
	// their versions violates rule eol, with or without support data.
	Retired []Retired

	// requiresOf and retiredOf are Requires and the positions in Retired by
	// component, which Evaluate fills in: a set's every cell looks up its
	// own, not every recipe's.
	requiresOf map[string][]Requirement
	retiredOf  map[string][]int
}

// eolCopy names the copy of the end-of-life data in use ("bundled" when
// EOLCopy is empty).
func (in *Inputs) eolCopy() string {
	if in.EOLCopy == "" {
		return "bundled"
	}
	return in.EOLCopy
}

// Evaluate checks every release set against the built-in rules, the tables
// and in. A set with ranges (rolling upgrades) is checked in four states: at
// the start (every range at its first version), with kube-apiserver upgraded
// (kubernetes, kubeadm and etcd at their last version), with the control plane
// upgraded (kubernetes, kubeadm, kube-controller-manager, kube-scheduler,
// cloud-controller-manager and etcd at their last version, everything else
// still at its first: nodes at n-1), and at the end (every range at its last
// version); a kubernetes or kubeadm range over more than one minor is a
// violation of its own. Without in.Tables it reads
// the bundled tables, and panics only if those do not parse, which
// compatdata's tests rule out.
func Evaluate(sets []ReleaseSet, in Inputs) *Report {
	tables := in.Tables
	if tables == nil {
		var err error
		if tables, err = compatdata.Bundled(); err != nil {
			panic(err)
		}
	}
	in.requiresOf, in.retiredOf = map[string][]Requirement{}, map[string][]int{}
	for _, q := range in.Requires {
		in.requiresOf[q.Component] = append(in.requiresOf[q.Component], q)
	}
	for i, q := range in.Retired {
		in.retiredOf[q.Component] = append(in.retiredOf[q.Component], i)
	}
	r := &Report{Now: in.Now.UTC().Truncate(time.Second), Sets: []SetResult{}, Findings: []Finding{}, Sources: tableSources(tables)}
	if in.EOL != nil {
		r.Sources = append(r.Sources, Source{Name: compatdata.EndOfLife, Copy: in.eolCopy(), AsOf: day(in.EOL.AsOf), Text: in.EOL.Source, At: in.EOL.AsOf})
	}
	rows := map[string]bool{}
	for _, s := range sets {
		res := SetResult{Name: s.Name, Kubernetes: s.Components["kubernetes"], Cells: map[string]Cell{}}
		for c, v := range s.Components {
			res.Cells[c] = Cell{Version: v, To: s.Upgrades[c], Recipe: s.Recipes[c].From, ToRecipe: s.Recipes[c].To}
		}
		if k := res.Cells["kubernetes"]; res.Kubernetes != "" {
			for _, c := range defaulted() {
				if _, ok := res.Cells[c]; !ok {
					res.Cells[c] = Cell{Version: k.Version, To: k.To, Defaulted: true}
				}
			}
		}
		for c := range res.Cells {
			rows[c] = true
		}
		r.Findings = append(r.Findings, evaluateStates(&res, tables, in)...)
		r.Findings = append(r.Findings, shipped(&res, in.Shipped)...)
		r.Sets = append(r.Sets, res)
	}
	sort.SliceStable(r.Sets, func(i, j int) bool {
		a, b := r.Sets[i], r.Sets[j]
		if c, err := debversion.CompareStrings(debianOf(a.Kubernetes)+"-0", debianOf(b.Kubernetes)+"-0"); err == nil && c != 0 {
			return c < 0
		}
		return a.Name < b.Name
	})
	r.Components = rowOrder(rows)
	order := map[string]int{}
	for i, s := range r.Sets {
		order[s.Name] = i
	}
	rowIdx := map[string]int{}
	for i, c := range r.Components {
		rowIdx[c] = i
	}
	sort.SliceStable(r.Findings, func(i, j int) bool {
		a, b := r.Findings[i], r.Findings[j]
		if order[a.Set] != order[b.Set] {
			return order[a.Set] < order[b.Set]
		}
		if rowIdx[a.Component] != rowIdx[b.Component] {
			return rowIdx[a.Component] < rowIdx[b.Component]
		}
		if a.Rule != b.Rule {
			return a.Rule < b.Rule
		}
		return a.Other < b.Other
	})
	return r
}

// rowOrder puts the Kubernetes rows first in a fixed order, then the other
// components alphabetically.
func rowOrder(rows map[string]bool) []string {
	out := []string{}
	for _, c := range append([]string{"kubernetes"}, defaulted()...) {
		if rows[c] {
			out = append(out, c)
			delete(rows, c)
		}
	}
	return append(out, sortedKeys(rows)...)
}

func sortedKeys[V any](m map[string]V) []string {
	out := slices.Sorted(maps.Keys(m))
	return out
}

// controlPlane are the components a rolling upgrade moves first;
// apiServerFirst those that move before kube-controller-manager,
// kube-scheduler and cloud-controller-manager follow kube-apiserver (the
// version skew policy's upgrade order; kubeadm upgrade apply moves etcd, then
// kube-apiserver).
var apiServerFirst = map[string]bool{"kubernetes": true, "kubeadm": true, "etcd": true}
var controlPlane = map[string]bool{"kubernetes": true, "kubeadm": true, "kube-controller-manager": true, "kube-scheduler": true, "cloud-controller-manager": true, "etcd": true}

// evaluateStates checks a set in each state of its upgrade (one state when
// it has no range) and returns the findings, each once. The cells keep the
// support status of the first state (what runs today).
func evaluateStates(res *SetResult, t *compatdata.Tables, in Inputs) []Finding {
	type state struct {
		label string
		last  func(comp string) bool // whether comp is at its last version
	}
	states := []state{{"", func(string) bool { return false }}}
	ranged := false
	for _, c := range res.Cells {
		ranged = ranged || c.To != ""
	}
	if ranged {
		states = []state{
			{"upgrade start", func(string) bool { return false }},
			{"kube-apiserver upgraded", func(comp string) bool { return apiServerFirst[comp] }},
			{"control plane upgraded", func(comp string) bool { return controlPlane[comp] }},
			{"upgrade end", func(string) bool { return true }},
		}
	}
	out := upgradeSkew(res)
	seen := map[string]bool{}
	for i, st := range states {
		cur := SetResult{Name: res.Name, Cells: map[string]Cell{}}
		for comp, c := range res.Cells {
			v := c.Version
			if c.To != "" && st.last(comp) {
				v = c.To
			}
			cur.Cells[comp] = Cell{Version: v, Defaulted: c.Defaulted}
		}
		cur.Kubernetes = cur.Cells["kubernetes"].Version
		for _, f := range evaluateSet(&cur, t, in) {
			key := f.Rule + "\x00" + f.Component + "\x00" + f.Version + "\x00" + f.Other + "\x00" + f.OtherVersion
			if seen[key] {
				continue
			}
			seen[key] = true
			if st.label != "" {
				f.Message = st.label + ": " + f.Message
			}
			out = append(out, f)
		}
		if i == 0 {
			for comp, c := range cur.Cells {
				rc := res.Cells[comp]
				rc.Cycle, rc.Support, rc.State = c.Cycle, c.Support, c.State
				res.Cells[comp] = rc
			}
		}
	}
	return out
}

// upgradeSkew checks the ranges that may not span more than one minor: the
// version skew policy's "the newest and oldest kube-apiserver instances must
// be within one minor version" (and kube-apiserver must "not skip minor
// versions when upgrading"), and kubeadm's "Nodes that are being upgraded must
// use a version of kubeadm that is the same MINOR version or one MINOR version
// newer than the version of kubeadm used for managing the node".
func upgradeSkew(res *SetResult) []Finding {
	var out []Finding
	for _, r := range []struct{ comp, rule, policy string }{
		{"kubernetes", RuleAPIServerSkew, "kube-apiserver must not skip a minor, and the kube-apiserver instances of an HA cluster must be within 1 minor of each other"},
		{"kubeadm", RuleKubeadmSkew, "a node must be upgraded with a kubeadm of its kubeadm's minor or 1 newer"},
	} {
		c, ok := res.Cells[r.comp]
		if !ok || c.To == "" {
			continue
		}
		fm, fn, ok1 := minorOf(c.Version)
		tm, tn, ok2 := minorOf(c.To)
		if !ok1 || !ok2 || (fm == tm && tn-fn <= 1) {
			continue
		}
		step := "another major"
		if fm == tm {
			step = minors(tn-fn) + " in one upgrade"
		}
		out = append(out, Finding{Set: res.Name, Rule: r.rule, Severity: Violation, Component: r.comp, Version: c.Version,
			Message: fmt.Sprintf("%s moves from %s to %s, %s; %s", r.comp, c.Version, c.To, step, r.policy)})
	}
	return out
}

// shipped checks every version a set names (not those taken from kubernetes)
// against the versions the recipes ship (nil: no check). The Kubernetes
// binaries (kubelet, kubectl, ...) are shipped by the kubernetes recipes.
func shipped(res *SetResult, ship map[string][]string) []Finding {
	if ship == nil {
		return nil
	}
	var out []Finding
	for _, comp := range sortedKeys(res.Cells) {
		c := res.Cells[comp]
		if c.Defaulted {
			continue
		}
		key := comp
		if _, ok := ship[key]; !ok && supportdata.ProductOf(comp) == "kubernetes" {
			key = "kubernetes"
		}
		versions, ok := ship[key]
		f := Finding{Set: res.Name, Rule: RuleShipped, Component: comp, Version: c.Version}
		if !ok {
			f.Severity, f.Message = Warning, fmt.Sprintf("no recipe ships %s: the set's version is not checked against a recipe", comp)
			out = append(out, f)
			continue
		}
		for _, v := range []string{c.Version, c.To} {
			if v == "" || shipsVersion(versions, v) {
				continue
			}
			f.Version = v
			f.Severity, f.Message = Violation, fmt.Sprintf("%s %s: no recipe ships it (recipes ship %s); bump the recipe or fix the set", comp, v, strings.Join(versions, ", "))
			out = append(out, f)
		}
	}
	return out
}

// shipsVersion reports whether v is one of versions, compared as Debian
// upstream versions (v1.36.4 and 1.36.4 are the same).
func shipsVersion(versions []string, v string) bool {
	dv := debianOf(v)
	for _, s := range versions {
		if s == v || (dv != "" && debianOf(s) == dv) {
			return true
		}
	}
	return false
}

// day formats a date as YYYY-MM-DD, "" for the zero time.
func day(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.DateOnly)
}

func evaluateSet(s *SetResult, t *compatdata.Tables, in Inputs) []Finding {
	eolData, now := in.EOL, in.Now
	var out []Finding
	add := func(rule string, sev Severity, comp, other, format string, args ...any) {
		f := Finding{Set: s.Name, Rule: rule, Severity: sev, Component: comp, Version: s.Cells[comp].Version, Message: fmt.Sprintf(format, args...)}
		if other != "" {
			f.Other, f.OtherVersion = other, s.Cells[other].Version
		}
		out = append(out, f)
	}
	out = append(out, kubeSkew(s)...)
	if h, ok := s.Cells["helm"]; ok && s.Kubernetes != "" {
		evaluateHelm(s, h.Version, t, add)
	}
	if c, ok := s.Cells["containerd"]; ok && s.Kubernetes != "" {
		evaluateContainerd(s, c.Version, t, add)
	}
	for _, comp := range sortedKeys(s.Cells) {
		if supportdata.ProductOf(comp) == "istio" && s.Kubernetes != "" {
			evaluateIstio(s, comp, t, eolData, add)
		}
	}
	if c, ok := s.Cells["etcd"]; ok && s.Kubernetes != "" {
		evaluateEtcd(s, c.Version, t, add)
	}
	if s.Kubernetes != "" {
		for _, comp := range sortedKeys(s.Cells) {
			switch supportdata.ProductOf(comp) {
			case "calico":
				evaluateCNI(s, comp, RuleCalico, "Calico's", t.CalicoFor, add)
			case "cilium":
				evaluateCNI(s, comp, RuleCilium, "Cilium's", t.CiliumFor, add)
			case "cri-tools":
				evaluateCRITools(s, comp, t, add)
			}
		}
	}
	for _, comp := range sortedKeys(s.Cells) {
		reqs := requirementFor(in.requiresOf[comp], s.Cells[comp].Version)
		for _, other := range sortedKeys(reqs) {
			text := reqs[other]
			con, err := debversion.ParseConstraint(text)
			if err != nil {
				add(RuleRequires, Violation, comp, "", "%s declares an invalid requirement on %s: %v", comp, other, err)
				continue
			}
			ov, ok := s.Cells[other]
			if !ok {
				add(RuleRequires, Violation, comp, "", "%s requires %s %s, but the set has no %s", comp, other, text, other)
				continue
			}
			allowed, err := con.Allows(ov.Version)
			if err != nil {
				add(RuleRequires, Violation, comp, other, "%s requires %s %s; %s %q is not a valid version: %v", comp, other, text, other, ov.Version, err)
			} else if !allowed {
				add(RuleRequires, Violation, comp, other, "%s %s requires %s %s, the set has %s %s", comp, s.Cells[comp].Version, other, text, other, ov.Version)
			}
		}
	}
	eol := map[string]bool{} // components the support data finds end-of-life
	if eolData != nil {
		for _, comp := range sortedKeys(s.Cells) {
			product := supportdata.ProductOf(comp)
			if len(eolData.Cycles(product)) == 0 {
				continue
			}
			cell := s.Cells[comp]
			cyc, ok := eolData.Cycle(product, cell.Version)
			if !ok {
				add(RuleEOLUnknown, Warning, comp, "", "%s %s: no %s release cycle for it in the end-of-life data (%s, as of %s)", comp, cell.Version, product, in.eolCopy(), day(eolData.AsOf))
				continue
			}
			st := cyc.Status(now)
			cell.Cycle, cell.Support, cell.State = cyc.Name, st.String(), st.State.String()
			s.Cells[comp] = cell
			if st.State == supportdata.EndOfLife {
				eol[comp] = true
				add(RuleEOL, Violation, comp, "", "%s %s: %s cycle %s is end-of-life (%s)", comp, cell.Version, product, cyc.Name, st)
			}
		}
	}
	for _, comp := range sortedKeys(s.Cells) {
		if r, ok := retiredAt(in, comp, s.Cells[comp].Version, now); ok && !eol[comp] {
			cell := s.Cells[comp]
			cell.State, cell.Support = supportdata.EndOfLife.String(), fmt.Sprintf("eol since %s (marked in recipes/%s.yaml)", day(r.Since), r.Recipe)
			s.Cells[comp] = cell
			add(RuleEOL, Violation, comp, "", "%s %s: recipes/%s.yaml marks it end-of-life since %s", comp, s.Cells[comp].Version, r.Recipe, day(r.Since))
		}
	}
	return out
}

// kubeSkew applies the Kubernetes version-skew policy
// (https://kubernetes.io/releases/version-skew-policy/), with "kubernetes" as
// the kube-apiserver version.
func kubeSkew(s *SetResult) []Finding {
	api, ok := s.Cells["kubernetes"]
	if !ok {
		return nil
	}
	am, an, ok := minorOf(api.Version)
	if !ok {
		return nil
	}
	var out []Finding
	rule := func(rule, comp, against string, minOlder, maxNewer int, policy string) {
		c, ok := s.Cells[comp]
		if !ok {
			return
		}
		ref := s.Cells[against]
		rm, rn := am, an
		if against != "kubernetes" {
			if rm, rn, ok = minorOf(ref.Version); !ok {
				return
			}
		}
		refName := against
		if against == "kubernetes" {
			refName = "kube-apiserver (kubernetes)"
		}
		f := Finding{Set: s.Name, Rule: rule, Severity: Violation, Component: comp, Version: c.Version, Other: against, OtherVersion: ref.Version}
		cm, cn, ok := minorOf(c.Version)
		switch {
		case !ok:
			f.Message = fmt.Sprintf("%s %q has no MAJOR.MINOR to compare with %s %s", comp, c.Version, refName, ref.Version)
		case cm != rm:
			f.Message = fmt.Sprintf("%s %s and %s %s differ in major version; %s", comp, c.Version, refName, ref.Version, policy)
		case cn-rn > maxNewer:
			f.Message = fmt.Sprintf("%s %s is %s newer than %s %s; %s", comp, c.Version, minors(cn-rn), refName, ref.Version, policy)
		case rn-cn > minOlder:
			f.Message = fmt.Sprintf("%s %s is %s older than %s %s; %s", comp, c.Version, minors(rn-cn), refName, ref.Version, policy)
		default:
			return
		}
		out = append(out, f)
	}
	// "`kubelet` < 1.25 may only be up to two minor versions older than
	// `kube-apiserver`", and kube-proxy < 1.25 only two from the kubelet.
	for _, comp := range []string{"kubelet", "kube-proxy"} {
		skew, of := 3, comp
		if m, n, ok := minorOf(s.Cells[comp].Version); ok && m == 1 && n < 25 {
			skew, of = 2, comp+" older than 1.25"
		}
		rule(ruleOf[comp], comp, "kubernetes", skew, 0, fmt.Sprintf("%s must not be newer than kube-apiserver and at most %s older", of, minors(skew)))
		if comp == "kube-proxy" {
			rule(RuleKubeProxySkew, comp, "kubelet", skew, skew, fmt.Sprintf("%s must be within %s of the kubelet beside it", of, minors(skew)))
		}
	}
	rule(RuleKubectlSkew, "kubectl", "kubernetes", 1, 1, "kubectl must be within 1 minor (older or newer) of kube-apiserver")
	// kubeadm's skew policy: "kubeadm can be used with Kubernetes components
	// that are the same version as kubeadm or one version older", "with a
	// kubelet version that is the same version as kubeadm or three versions older".
	rule(RuleKubeadmSkew, "kubeadm", "kubernetes", 0, 1, "kubeadm must not be older than kube-apiserver and at most 1 minor newer")
	rule(RuleKubeadmSkew, "kubeadm", "kubelet", 0, 3, "kubeadm must not be older than the kubelet beside it and at most 3 minors newer")
	for _, comp := range []string{"kube-controller-manager", "kube-scheduler", "cloud-controller-manager"} {
		rule(ruleOf[comp], comp, "kubernetes", 1, 0, comp+" must be the same minor as kube-apiserver or 1 older")
	}
	return out
}

// ruleOf names the skew rule of each component kubeSkew checks against
// kube-apiserver.
var ruleOf = map[string]string{
	"kubelet":                  RuleKubeletSkew,
	"kube-proxy":               RuleKubeProxySkew,
	"kube-controller-manager":  RuleControllerManagerSkew,
	"kube-scheduler":           RuleSchedulerSkew,
	"cloud-controller-manager": RuleCloudControllerManagerSkew,
}

func minors(n int) string { return plural.Count(n, "minor", "minors") }

type addFunc func(rule string, sev Severity, comp, other, format string, args ...any)

func evaluateHelm(s *SetResult, helm string, t *compatdata.Tables, add addFunc) {
	hm, hn, ok := minorOf(helm)
	if _, _, kok := minorOf(s.Kubernetes); !ok || !kok {
		add(RuleHelmSkew, Violation, "helm", "kubernetes", "helm %q or kubernetes %q has no MAJOR.MINOR", helm, s.Kubernetes)
		return
	}
	m, found := t.HelmFor(helm)
	switch {
	case !found:
		add(RuleHelmSkew, Warning, "helm", "kubernetes", "helm %d.%d is not in Helm's version skew table (%s); its Kubernetes range is unknown", hm, hn, tableCopy(m.Table))
	case !m.Row.Allows(s.Kubernetes):
		add(RuleHelmSkew, Violation, "helm", "kubernetes", "helm %s supports Kubernetes %s.x to %s.x (%s), the set has kubernetes %s",
			helm, m.Row.KubernetesMin, m.Row.KubernetesMax, rowSource(m.Override, "Helm's n-3 table"), s.Kubernetes)
	}
}

func evaluateContainerd(s *SetResult, containerd string, t *compatdata.Tables, add addFunc) {
	km, kn, ok := minorOf(s.Kubernetes)
	if !ok {
		return
	}
	m, found := t.ContainerdFor(s.Kubernetes)
	switch {
	case !found:
		add(RuleContainerd, Warning, "containerd", "kubernetes", "containerd's recommended table (%s) has no row for Kubernetes %d.%d", tableCopy(m.Table), km, kn)
	case !m.Row.Recommends(containerd):
		add(RuleContainerd, Warning, "containerd", "kubernetes",
			"containerd %s is not in containerd's recommended list for Kubernetes %d.%d (%s%s); the list is recommended, not exclusive",
			containerd, km, kn, strings.Join(m.Row.Containerd, ", "), overrideNote(m.Override))
	}
}

// tableCopy says which copy of a table was read and of when: "bundled,
// as of 2026-08-06".
func tableCopy(t *compatdata.Table) string {
	return t.Copy + ", as of " + day(t.AsOf)
}

// rowSource names where a row comes from: upstream's table, or an override.
func rowSource(o *compatdata.Override, table string) string {
	if o != nil {
		return "an override: " + o.Reason
	}
	return table
}

// overrideNote is "; an override: REASON" for a row that is one.
func overrideNote(o *compatdata.Override) string {
	if o == nil {
		return ""
	}
	return "; an override: " + o.Reason
}

// tableSources are the report's sources for the tables: each table's copy,
// date, URLs and overrides.
func tableSources(t *compatdata.Tables) []Source {
	var out []Source
	for _, name := range compatdata.Names() {
		tb := t.Table(name)
		lines := []string{"Source: " + strings.Join(tb.Sources, " ")}
		for _, o := range tb.Overrides {
			lines = append(lines, "Override: "+o.Row.String()+" ("+o.Reason+")")
		}
		out = append(out, Source{Name: name, Copy: tb.Copy, AsOf: day(tb.AsOf), Text: strings.Join(lines, "\n"), At: tb.AsOf})
	}
	return out
}

// minorOf returns the major and minor numbers of an upstream version; ok is
// false when it has fewer than two numeric components.
func minorOf(version string) (major, minor int, ok bool) { return compatdata.MinorOf(version) }

func evaluateIstio(s *SetResult, comp string, t *compatdata.Tables, eolData *supportdata.Data, add addFunc) {
	v := s.Cells[comp].Version
	im, in, ok := minorOf(v)
	if !ok {
		add(RuleIstio, Violation, comp, "kubernetes", "%s %q has no MAJOR.MINOR", comp, v)
		return
	}
	cycle := fmt.Sprintf("%d.%d", im, in)
	lo, hi, from := "", "", ""
	m, found := t.IstioFor(v)
	if found && m.Override != nil {
		lo, hi, from = m.Row.KubernetesMin, m.Row.KubernetesMax, rowSource(m.Override, "")
	}
	if lo == "" && eolData != nil {
		if c, ok := eolData.Cycle("istio", v); ok && c.SupportedKubernetes != "" {
			if l, h, cut := strings.Cut(c.SupportedKubernetes, "-"); cut {
				lo, hi, from = strings.TrimSpace(l), strings.TrimSpace(h), "the end-of-life data"
			}
		}
	}
	if lo == "" && found {
		lo, hi, from = m.Row.KubernetesMin, m.Row.KubernetesMax, "Istio's support table"
	}
	if lo == "" {
		add(RuleIstio, Warning, comp, "kubernetes", "istio %s is in neither the end-of-life data nor Istio's support table (%s); its Kubernetes range is unknown", cycle, tableCopy(m.Table))
		return
	}
	con, err := debversion.ParseConstraint(">=" + lo + " <=" + hi)
	if ok, _ := con.Allows(s.Kubernetes); err != nil || !ok {
		add(RuleIstio, Violation, comp, "kubernetes", "istio %s supports Kubernetes %s.x to %s.x (%s), the set has kubernetes %s", cycle, lo, hi, from, s.Kubernetes)
	}
}

func evaluateEtcd(s *SetResult, etcd string, t *compatdata.Tables, add addFunc) {
	km, kn, ok := minorOf(s.Kubernetes)
	em, en, eok := minorOf(etcd)
	if !ok || !eok {
		add(RuleKubeadmEtcd, Violation, "etcd", "kubernetes", "etcd %q or kubernetes %q has no MAJOR.MINOR", etcd, s.Kubernetes)
		return
	}
	m, found := t.KubeadmEtcdFor(s.Kubernetes)
	if !found {
		add(RuleKubeadmEtcd, Warning, "etcd", "kubernetes", "kubeadm's etcd table (%s) has no etcd version for Kubernetes %d.%d", tableCopy(m.Table), km, kn)
		return
	}
	if c, err := debversion.CompareStrings(debianOf(etcd), debianOf(m.Row.MinExternal)); err == nil && c < 0 {
		add(RuleKubeadmEtcd, Violation, "etcd", "kubernetes", "etcd %s is older than %s, the oldest external etcd kubeadm %d.%d accepts (MinExternalEtcdVersion%s)", etcd, m.Row.MinExternal, km, kn, overrideNote(m.Override))
		return
	}
	if wm, wn, _ := minorOf(m.Row.Etcd); wm != em || wn != en {
		add(RuleKubeadmEtcd, Warning, "etcd", "kubernetes", "kubeadm %d.%d deploys etcd %s (SupportedEtcdVersion%s); the set has etcd %s, another minor", km, kn, m.Row.Etcd, overrideNote(m.Override), etcd)
	}
}

// evaluateCNI checks a Calico or Cilium component against its table: the
// Kubernetes versions upstream tests that minor against (a warning outside).
func evaluateCNI[R interface {
	compatdata.CalicoRow | compatdata.CiliumRow
	compatdata.Row
}](s *SetResult, comp, rule, owner string, lookup func(string) (compatdata.Match[R], bool), add addFunc) {
	v := s.Cells[comp].Version
	cm, cn, ok := minorOf(v)
	if !ok {
		add(rule, Warning, comp, "kubernetes", "%s %q has no MAJOR.MINOR", comp, v)
		return
	}
	m, found := lookup(v)
	if !found {
		add(rule, Warning, comp, "kubernetes", "%s %d.%d is not in %s supported Kubernetes versions (%s); not checked", comp, cm, cn, owner, tableCopy(m.Table))
		return
	}
	var list compatdata.KubernetesList
	switch row := any(m.Row).(type) {
	case compatdata.CalicoRow:
		list = row.Kubernetes
	case compatdata.CiliumRow:
		list = row.Kubernetes
	}
	if !list.Allows(s.Kubernetes) {
		add(rule, Warning, comp, "kubernetes", "%s %d.%d is tested against Kubernetes %s (%s), the set has kubernetes %s",
			comp, cm, cn, list, rowSource(m.Override, owner+" system requirements"), s.Kubernetes)
	}
}

// evaluateCRITools checks cri-tools against cri-tools' matrix: from
// Kubernetes 1.16 on, the cri-tools of the same minor (recommended: a warning).
func evaluateCRITools(s *SetResult, comp string, t *compatdata.Tables, add addFunc) {
	v := s.Cells[comp].Version
	km, kn, ok := minorOf(s.Kubernetes)
	if !ok {
		return
	}
	m, found := t.CRIToolsFor(s.Kubernetes)
	from := rowSource(m.Override, "cri-tools' compatibility matrix")
	switch {
	case !found:
		add(RuleCRITools, Warning, comp, "kubernetes", "cri-tools' compatibility matrix (%s) has no row for Kubernetes %d.%d", tableCopy(m.Table), km, kn)
	case m.Row.Allows(v, s.Kubernetes):
	case m.Row.CRITools == compatdata.SameMinor:
		add(RuleCRITools, Warning, comp, "kubernetes", "%s %s with Kubernetes %d.%d: the cri-tools of the same minor is recommended (%s)", comp, v, km, kn, from)
	default:
		add(RuleCRITools, Warning, comp, "kubernetes", "%s %s with Kubernetes %d.%d: %s names cri-tools %s", comp, v, km, kn, from, m.Row.CRITools)
	}
}
