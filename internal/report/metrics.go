package report

import (
	"bufio"
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/updeb/updeb/internal/compat"
	"github.com/updeb/updeb/internal/plan"
)

// Run is what the metrics say of the tracking run the report closes.
type Run struct {
	// OK says whether every step of the run succeeded (the job says so).
	OK bool
	// LastSuccess is the previous successful run's time, from the previous
	// metrics file (zero for none): it is kept when this run did not succeed.
	LastSuccess time.Time
	// Tracking names the tracking instance ("" for none): every sample
	// carries it as the label tracking, so that two instances writing
	// their files into one textfile folder (two suites, two recipe
	// repositories) give two series, not one that node_exporter keeps of
	// either (it drops a series another file gave already, and the alert
	// on the other instance's failed run never fires).
	Tracking string
}

// lastSuccessMetric is the metric that carries the last success from one
// file to the next.
const lastSuccessMetric = "updeb_tracking_last_success_timestamp_seconds"

// PreviousSuccess reads the last successful run's time from a metrics file
// Metrics wrote, its sample labelled or not (zero when it has none).
func PreviousSuccess(previous []byte) time.Time {
	sc := bufio.NewScanner(bytes.NewReader(previous))
	for sc.Scan() {
		line := sc.Text()
		end := strings.IndexAny(line, "{ ")
		if end < 0 || line[:end] != lastSuccessMetric {
			continue
		}
		value := line[strings.LastIndexByte(line, ' ')+1:]
		if f, err := strconv.ParseFloat(value, 64); err == nil && f > 0 {
			return time.Unix(int64(f), 0).UTC()
		}
	}
	return time.Time{}
}

// family is one metric family of the text format.
type family struct {
	name, help string
	samples    []sample
}

type sample struct {
	labels [][2]string
	value  float64
}

func (f *family) add(v float64, labels ...string) {
	s := sample{value: v}
	for i := 0; i+1 < len(labels); i += 2 {
		s.labels = append(s.labels, [2]string{labels[i], labels[i+1]})
	}
	f.samples = append(f.samples, s)
}

// Metrics returns the report as the Prometheus text exposition format, for
// node_exporter's textfile collector: gauges named by Prometheus' naming
// conventions (updeb_ prefix, base units, _seconds and _timestamp_seconds).
// Every family is present even with no sample to give, so that an alert
// can tell "none" from "not collected".
func Metrics(r *Report, run Run) []byte { return metrics(r, r.Generated, run) }

// FailedMetrics is the metrics file of a run whose report could not be
// made (a recipe or the release set file does not load, upstream could not
// be read): every family, and no sample but the run's own, which say it
// failed (updeb_tracking_last_run_success 0) and carry the last success
// over, so that an alert fires and stale numbers are not left standing.
func FailedMetrics(now time.Time, run Run) []byte {
	run.OK = false
	return metrics(nil, now.UTC(), run)
}

// metrics writes the families; r nil leaves all but the run's empty.
func metrics(r *Report, now time.Time, run Run) []byte {
	fams := []*family{
		{name: "updeb_release_valid_until_timestamp_seconds", help: "Valid-Until of each suite's live Release, as a Unix time (alert on this minus time())."},
		{name: "updeb_release_valid_remaining_seconds", help: "Seconds from the run to each suite's Valid-Until; negative once expired."},
		{name: "updeb_release_signing_key_expiry_timestamp_seconds", help: "Expiry of each key that signs each suite's live Release (of its signing subkey when that ends first), as a Unix time (alert on this minus time())."},
		{name: "updeb_release_signing_key_remaining_seconds", help: "Seconds from the run to the expiry of each key that signs each suite's live Release; negative once expired: apt refuses the suite."},
		{name: "updeb_recipes_behind_upstream", help: "Recipes with a newer complete release in their watch track."},
		{name: "updeb_recipe_behind_upstream", help: "1 when the recipe has a newer complete release in its watch track, else 0; recipes whose upstream could not be listed are left out."},
		{name: "updeb_recipes_upstream_unknown", help: "Recipes whose upstream releases could not be listed (no watch, an API failure, offline)."},
		{name: "updeb_release_sets_violating", help: "Release sets with at least one compatibility violation (no sample without a release set file)."},
		{name: "updeb_release_set_violations", help: "Compatibility violations of each release set."},
		{name: "updeb_components_end_of_life", help: "Components a release set deploys at an end-of-life version (no sample without a release set file)."},
		{name: "updeb_recipes_end_of_life", help: "Recipes whose version line is end-of-life (support data, or the recipe's end-of-life mark)."},
		{name: "updeb_plan_actions", help: "Actions of the plan, by kind (add, bump, retire, compat)."},
		{name: "updeb_data_table_age_seconds", help: "Age of each data table the verdicts rest on, from its as-of time (a refresh's fetch time, a snapshot's day) to the run."},
		{name: "updeb_data_table_as_of_timestamp_seconds", help: "As-of time of each data table (a refresh's fetch time, a snapshot's day), as a Unix time."},
		{name: "updeb_tracking_last_run_timestamp_seconds", help: "When the tracking run that wrote this file ended, as a Unix time."},
		{name: "updeb_tracking_last_run_success", help: "1 when every step of the last tracking run succeeded, else 0."},
		{name: lastSuccessMetric, help: "When the last tracking run that succeeded ended, as a Unix time (0: none yet)."},
	}
	by := map[string]*family{}
	for _, f := range fams {
		by[f.name] = f
	}
	if r != nil {
		collect(r, by)
	}
	by["updeb_tracking_last_run_timestamp_seconds"].add(float64(now.Unix()))
	last, ok := run.LastSuccess, 0.0
	if run.OK {
		last, ok = now, 1
	}
	by["updeb_tracking_last_run_success"].add(ok)
	if last.IsZero() {
		by[lastSuccessMetric].add(0)
	} else {
		by[lastSuccessMetric].add(float64(last.Unix()))
	}
	var b bytes.Buffer
	for _, f := range fams {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s gauge\n", f.name, f.help, f.name)
		sort.SliceStable(f.samples, func(i, j int) bool { return labelText(f.samples[i].labels) < labelText(f.samples[j].labels) })
		for _, s := range f.samples {
			if run.Tracking != "" {
				s.labels = append([][2]string{{"tracking", run.Tracking}}, s.labels...)
			}
			fmt.Fprintf(&b, "%s%s %s\n", f.name, labelText(s.labels), strconv.FormatFloat(s.value, 'f', -1, 64))
		}
	}
	return b.Bytes()
}

// collect adds the report's samples to the families.
func collect(r *Report, by map[string]*family) {
	if r.Repository != nil {
		for _, s := range r.Repository.Suites {
			for _, k := range s.SigningKeys {
				if !k.Expires.IsZero() {
					by["updeb_release_signing_key_expiry_timestamp_seconds"].add(float64(k.Expires.Unix()), "suite", s.Name, "fingerprint", k.Fingerprint)
					by["updeb_release_signing_key_remaining_seconds"].add(float64(k.ExpiresIn), "suite", s.Name, "fingerprint", k.Fingerprint)
				}
			}
			if s.ValidUntil.IsZero() {
				continue
			}
			by["updeb_release_valid_until_timestamp_seconds"].add(float64(s.ValidUntil.Unix()), "suite", s.Name)
			by["updeb_release_valid_remaining_seconds"].add(float64(s.ExpiresIn), "suite", s.Name)
		}
	}
	behind, unknown, eol := 0, 0, 0
	for _, x := range r.Recipes {
		b := 0.0
		if x.Behind {
			behind, b = behind+1, 1
		}
		if x.Unknown != "" {
			unknown++
		}
		if x.State == "eol" {
			eol++
		}
		// A recipe whose upstream was not listed has no sample: a 0 would
		// say it is at the newest release, which nobody checked.
		if x.Unknown == "" || x.Behind {
			by["updeb_recipe_behind_upstream"].add(b, "recipe", x.Name)
		}
	}
	by["updeb_recipes_behind_upstream"].add(float64(behind))
	by["updeb_recipes_upstream_unknown"].add(float64(unknown))
	by["updeb_recipes_end_of_life"].add(float64(eol))
	violating := 0
	eolComponents := map[string]bool{}
	for _, s := range r.Compat.Sets {
		n := 0
		for _, f := range r.Compat.Findings {
			if f.Set == s.Name && f.Severity == compat.Violation {
				n++
			}
		}
		if n > 0 {
			violating++
		}
		by["updeb_release_set_violations"].add(float64(n), "set", s.Name)
		for c, cell := range s.Cells {
			if cell.State == "eol" && !cell.Defaulted {
				eolComponents[c] = true
			}
		}
	}
	// Without a release set file no set was checked: no sample (not
	// collected), where a 0 would tell an alert that all is well.
	if r.Plan.SetsFile != "" {
		by["updeb_release_sets_violating"].add(float64(violating))
		by["updeb_components_end_of_life"].add(float64(len(eolComponents)))
	}
	kinds := map[string]int{plan.ActAdd: 0, plan.ActBump: 0, plan.ActRetire: 0, plan.ActCompat: 0}
	for _, a := range r.Plan.Actions {
		kinds[a.Kind]++
	}
	for _, k := range []string{plan.ActAdd, plan.ActBump, plan.ActRetire, plan.ActCompat} {
		by["updeb_plan_actions"].add(float64(kinds[k]), "kind", k)
	}
	for _, t := range r.Data {
		if t.AsOf == "" {
			continue
		}
		by["updeb_data_table_age_seconds"].add(float64(t.AgeSeconds), "table", t.Name, "copy", t.Copy)
		by["updeb_data_table_as_of_timestamp_seconds"].add(float64(r.Generated.Unix()-t.AgeSeconds), "table", t.Name, "copy", t.Copy)
	}
}

// labelText is {name="value",...}, values escaped as the text format says
// and made valid UTF-8 (bad bytes U+FFFD, as in report.json): a
// value that is not UTF-8 (a --state path in Latin-1) would make promtool,
// and node_exporter's textfile collector, refuse the whole file.
func labelText(labels [][2]string) string {
	if len(labels) == 0 {
		return ""
	}
	esc := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	var parts []string
	for _, l := range labels {
		parts = append(parts, l[0]+`="`+esc.Replace(strings.ToValidUTF8(l[1], "\uFFFD"))+`"`)
	}
	return "{" + strings.Join(parts, ",") + "}"
}
