// Package compat checks that the versions deployed together work together:
// Kubernetes' version-skew policy (built in), Helm's and containerd's upstream
// tables (bundled in data/compat.yaml with their sources), the constraints
// recipes declare on other components (`requires`, in the grammar of
// debversion.ParseConstraint, which the tables' ranges use too), and end-of-life dates
// (internal/eol). It renders the result as a terminal table, Markdown, CSV or one
// self-contained HTML page.
//
// Severity, decided here:
//   - Violation: a Kubernetes skew rule, Helm's n-3 table, a recipe's
//     requires, or a component whose release cycle is end-of-life. The command
//     exits 1.
//   - Warning: containerd outside containerd's recommended list (upstream calls
//     it "recommended", not an exclusive support list), a Helm minor or a
//     Kubernetes minor missing from the bundled tables, a cycle missing from the
//     end-of-life snapshot. Reported, exit 0.
package compat

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/updeb/updeb/internal/eol"
	"github.com/updeb/updeb/pkg/debversion"
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
	RuleHelmSkew              = "helm-skew"
	RuleContainerd            = "containerd-recommended"
	RuleRequires              = "requires"
	RuleEOL                   = "eol"
	RuleEOLUnknown            = "eol-unknown"
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
	Version   string `json:"version"`
	Defaulted bool   `json:"defaulted,omitempty"` // taken from "kubernetes"
	// Cycle and Support are set when the end-of-life data covers the component.
	Cycle   string `json:"cycle,omitempty"`
	Support string `json:"support,omitempty"` // eol.Status.String()
	State   string `json:"state,omitempty"`   // eol.State.String()
}

// SetResult is one column of the matrix.
type SetResult struct {
	Name       string          `json:"name"`
	Kubernetes string          `json:"kubernetes"`
	Cells      map[string]Cell `json:"cells"`
}

// Source names a bundled data file and its provenance (its header comment).
type Source struct {
	Name string `json:"name"`
	Text string `json:"text"`
}

// Report is the outcome of Evaluate. Sets are sorted by Kubernetes version, then
// name; Components is the row order; Findings are sorted by set, component, rule.
type Report struct {
	Now        time.Time   `json:"now"`
	Sets       []SetResult `json:"sets"`
	Components []string    `json:"components"`
	Findings   []Finding   `json:"findings"`
	Sources    []Source    `json:"sources"`
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

// FindingsFor returns the findings about one component of one set.
func (r *Report) FindingsFor(set, component string) []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Set == set && f.Component == component {
			out = append(out, f)
		}
	}
	return out
}

// ValidateRequires parses every constraint of requires (component -> other
// component -> constraint) and returns the first error, naming the component.
func ValidateRequires(requires map[string]map[string]string) error {
	for _, c := range sortedKeys(requires) {
		for _, o := range sortedKeys(requires[c]) {
			if _, err := debversion.ParseConstraint(requires[c][o]); err != nil {
				return fmt.Errorf("%s requires %s: %w", c, o, err)
			}
		}
	}
	return nil
}

// Evaluate checks every release set against the built-in rules, the bundled
// tables, requires (component -> other component -> constraint, as recipes
// declare them; nil for none) and eolData at now (nil eolData: no end-of-life
// check). It panics only if the tables embedded in the binary do not parse,
// which the package's tests rule out.
func Evaluate(sets []ReleaseSet, requires map[string]map[string]string, eolData *eol.Data, now time.Time) *Report {
	tables, err := LoadTables()
	if err != nil {
		panic(err)
	}
	r := &Report{Now: now, Findings: []Finding{}, Sources: []Source{{Name: "compat.yaml", Text: tables.Source}}}
	if eolData != nil {
		r.Sources = append(r.Sources, Source{Name: "eol.yaml", Text: eolData.Source})
	}
	rows := map[string]bool{}
	for _, s := range sets {
		res := SetResult{Name: s.Name, Kubernetes: s.Components["kubernetes"], Cells: map[string]Cell{}}
		for c, v := range s.Components {
			res.Cells[c] = Cell{Version: v}
		}
		if res.Kubernetes != "" {
			for _, c := range defaulted() {
				if _, ok := res.Cells[c]; !ok {
					res.Cells[c] = Cell{Version: res.Kubernetes, Defaulted: true}
				}
			}
		}
		for c := range res.Cells {
			rows[c] = true
		}
		r.Findings = append(r.Findings, evaluateSet(&res, tables, requires, eolData, now)...)
		r.Sets = append(r.Sets, res)
	}
	sort.SliceStable(r.Sets, func(i, j int) bool {
		a, b := r.Sets[i], r.Sets[j]
		if c, err := debversion.CompareStrings(a.Kubernetes+"-0", b.Kubernetes+"-0"); err == nil && c != 0 {
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
	var out []string
	for _, c := range append([]string{"kubernetes"}, defaulted()...) {
		if rows[c] {
			out = append(out, c)
			delete(rows, c)
		}
	}
	return append(out, sortedKeys(rows)...)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func evaluateSet(s *SetResult, t *Tables, requires map[string]map[string]string, eolData *eol.Data, now time.Time) []Finding {
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
	for _, comp := range sortedKeys(requires) {
		if _, deployed := s.Cells[comp]; !deployed {
			continue
		}
		for _, other := range sortedKeys(requires[comp]) {
			text := requires[comp][other]
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
	if eolData != nil {
		for _, comp := range sortedKeys(s.Cells) {
			product := eol.ProductOf(comp)
			if len(eolData.Cycles(product)) == 0 {
				continue
			}
			cell := s.Cells[comp]
			cyc, ok := eolData.Cycle(product, cell.Version)
			if !ok {
				add(RuleEOLUnknown, Warning, comp, "", "%s %s: no %s release cycle for it in the bundled end-of-life data", comp, cell.Version, product)
				continue
			}
			st := cyc.Status(now)
			cell.Cycle, cell.Support, cell.State = cyc.Name, st.String(), st.State.String()
			s.Cells[comp] = cell
			if st.State == eol.EndOfLife {
				add(RuleEOL, Violation, comp, "", "%s %s: %s cycle %s is end-of-life (%s)", comp, cell.Version, product, cyc.Name, st)
			}
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
	const nodePolicy = "must not be newer than kube-apiserver and at most 3 minors older"
	rule(RuleKubeletSkew, "kubelet", "kubernetes", 3, 0, "kubelet "+nodePolicy)
	rule(RuleKubeProxySkew, "kube-proxy", "kubernetes", 3, 0, "kube-proxy "+nodePolicy)
	rule(RuleKubeProxySkew, "kube-proxy", "kubelet", 3, 3, "kube-proxy must be within 3 minors of the kubelet beside it")
	rule(RuleKubectlSkew, "kubectl", "kubernetes", 1, 1, "kubectl must be within 1 minor (older or newer) of kube-apiserver")
	rule(RuleControllerManagerSkew, "kube-controller-manager", "kubernetes", 1, 0, "kube-controller-manager must be the same minor as kube-apiserver or 1 older")
	rule(RuleSchedulerSkew, "kube-scheduler", "kubernetes", 1, 0, "kube-scheduler must be the same minor as kube-apiserver or 1 older")
	return out
}

func minors(n int) string {
	if n == 1 {
		return "1 minor"
	}
	return fmt.Sprintf("%d minors", n)
}

type addFunc func(rule string, sev Severity, comp, other, format string, args ...any)

func evaluateHelm(s *SetResult, helm string, t *Tables, add addFunc) {
	hm, hn, ok := minorOf(helm)
	if _, _, kok := minorOf(s.Kubernetes); !ok || !kok {
		add(RuleHelmSkew, Violation, "helm", "kubernetes", "helm %q or kubernetes %q has no MAJOR.MINOR", helm, s.Kubernetes)
		return
	}
	for _, row := range t.Helm {
		if rm, rn, _ := minorOf(row.Helm); rm != hm || rn != hn {
			continue
		}
		if ok, err := row.kubernetes.Allows(s.Kubernetes); ok && err == nil {
			return
		}
		add(RuleHelmSkew, Violation, "helm", "kubernetes",
			"helm %s supports Kubernetes %s.x to %s.x (Helm's n-3 table), the set has kubernetes %s",
			helm, row.KubernetesMin, row.KubernetesMax, s.Kubernetes)
		return
	}
	add(RuleHelmSkew, Warning, "helm", "kubernetes", "helm %d.%d is not in the bundled Helm version-skew table; its Kubernetes range is unknown", hm, hn)
}

func evaluateContainerd(s *SetResult, containerd string, t *Tables, add addFunc) {
	km, kn, ok := minorOf(s.Kubernetes)
	if !ok {
		return
	}
	for _, row := range t.Containerd {
		if rm, rn, _ := minorOf(row.Kubernetes); rm != km || rn != kn {
			continue
		}
		for _, rec := range row.containerd {
			if ok, err := rec.Allows(containerd); ok && err == nil {
				return
			}
		}
		add(RuleContainerd, Warning, "containerd", "kubernetes",
			"containerd %s is not in containerd's recommended list for Kubernetes %d.%d (%s); the list is recommended, not exclusive",
			containerd, km, kn, strings.Join(row.Containerd, ", "))
		return
	}
	add(RuleContainerd, Warning, "containerd", "kubernetes", "containerd's recommended table has no row for Kubernetes %d.%d", km, kn)
}

// minorOf returns the major and minor numbers of an upstream version; ok is
// false when it has fewer than two numeric components.
func minorOf(version string) (major, minor int, ok bool) {
	norm, err := debversion.FromUpstream(version)
	if err != nil {
		return 0, 0, false
	}
	n := debversion.LeadingNumbers(norm)
	if len(n) < 2 {
		return 0, 0, false
	}
	return n[0], n[1], true
}
