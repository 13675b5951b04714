package compatdata

import (
	"cmp"
	"slices"
	"time"

	"github.com/updeb/updeb/internal/supportdata"
)

// Table names, as the data file, the config (data: sources:), `updeb data
// refresh --table` and the reports write them.
const (
	Helm        = "helm"
	Containerd  = "containerd"
	Istio       = "istio"
	KubeadmEtcd = "kubeadm-etcd"
	Calico      = "calico"
	Cilium      = "cilium"
	CRITools    = "cri-tools"
	// EndOfLife names the end-of-life data (internal/supportdata) where a
	// table name is expected: `data refresh --table endoflife`, data status.
	EndOfLife = "endoflife"
)

// Names returns the table names in the data file's order (EndOfLife not
// included).
func Names() []string {
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = s.name
	}
	return out
}

// Tables are the compatibility tables, each with where it came from, and
// the end-of-life data a repository's data file holds.
type Tables struct {
	// Source is the file's header comment (without the "# "), AsOf its "As
	// of:" line: when the file was written (a bundled copy: the day of its
	// oldest snapshot).
	Source string
	AsOf   time.Time
	// EOL is the end-of-life data the file holds (a repository's data file
	// does), nil when it holds none.
	EOL    *supportdata.Data
	tables map[string]*Table
}

// Table is one table: upstream's rows, the operator's overrides, where the
// rows come from and of when.
type Table struct {
	Name string
	// Sources are the URLs the rows were fetched from ({minor} templates
	// expanded), or where a bundled snapshot was copied from.
	Sources []string
	// AsOf is when the rows were true of upstream: the fetch time of a
	// refresh, a bundled snapshot's day.
	AsOf time.Time
	// Rows are upstream's rows, newest first.
	Rows []Row
	// Overrides replace or add rows; each says why. Only updeb data refresh
	// --write keeps them (a repository's data file is where they belong).
	Overrides []Override
	// Copy says where the table was read from: "bundled", "refreshed PATH"
	// or "repository PATH".
	Copy string
	// effective is Effective's rows, made once by seal when the table is
	// read or refreshed (Rows and Overrides do not change after): every
	// lookup reads them, from as many goroutines as check release sets,
	// and none writes them. sealed is false for a Table made elsewhere.
	effective []Row
	sealed    bool
}

// Override is an operator's row that replaces upstream's row of the same key
// (or adds one), with the reason.
type Override struct {
	Row    Row
	Reason string
}

// Table returns the table of that name (nil for an unknown name).
func (t *Tables) Table(name string) *Table { return t.tables[name] }

// Effective returns the rows with the overrides applied, newest first: a
// copy, the caller's to change.
func (t *Table) Effective() []Row {
	return slices.Clone(t.rows())
}

// rows are the effective rows, not to be changed: sorted once (seal), or
// anew for a Table made outside this package.
func (t *Table) rows() []Row {
	if t.sealed {
		return t.effective
	}
	return t.applyOverrides()
}

// seal sorts the rows and makes the effective rows, once Rows and
// Overrides are complete.
func (t *Table) seal() {
	sortRows(t.Rows)
	t.effective, t.sealed = t.applyOverrides(), true
}

// applyOverrides returns the rows with the overrides applied, newest first.
func (t *Table) applyOverrides() []Row {
	out := make([]Row, 0, len(t.Rows)+len(t.Overrides))
	for _, r := range t.Rows {
		if t.override(r.Key()) == nil {
			out = append(out, r)
		}
	}
	for _, o := range t.Overrides {
		out = append(out, o.Row)
	}
	sortRows(out)
	return out
}

// override returns the override of key, nil when none.
func (t *Table) override(key string) *Override {
	for i := range t.Overrides {
		if t.Overrides[i].Row.Key() == key {
			return &t.Overrides[i]
		}
	}
	return nil
}

// Match is the row a lookup found: upstream's, or the override that
// replaced it (Override set).
type Match[R Row] struct {
	Row      R
	Override *Override
	Table    *Table
}

// lookup finds the effective row for which match holds. An override that
// matches comes first: one of cri-tools' ranges wins over an upstream row
// of another key that covers the same minor (an override 1.25-1.28 beside
// upstream's "1.27 and newer").
func lookup[R Row](t *Table, match func(R) bool) (Match[R], bool) {
	for i := range t.Overrides {
		if row, ok := t.Overrides[i].Row.(R); ok && match(row) {
			return Match[R]{Row: row, Override: &t.Overrides[i], Table: t}, true
		}
	}
	for _, r := range t.rows() {
		if row, ok := r.(R); ok && match(row) {
			return Match[R]{Row: row, Override: t.override(r.Key()), Table: t}, true
		}
	}
	return Match[R]{Table: t}, false
}

// byMinor matches rows whose key is the MAJOR.MINOR of version.
func byMinor[R Row](version string) func(R) bool {
	m, ok := minorOfVersion(version)
	return func(r R) bool { k, _ := parseMinor(r.Key()); return ok && k == m }
}

// HelmFor returns the row of Helm's table for the MAJOR.MINOR of helm.
func (t *Tables) HelmFor(helm string) (Match[HelmRow], bool) {
	return lookup(t.Table(Helm), byMinor[HelmRow](helm))
}

// ContainerdFor returns the row of containerd's table for the Kubernetes
// minor of kubernetes.
func (t *Tables) ContainerdFor(kubernetes string) (Match[ContainerdRow], bool) {
	return lookup(t.Table(Containerd), byMinor[ContainerdRow](kubernetes))
}

// IstioFor returns the row of Istio's table for the MAJOR.MINOR of istio.
func (t *Tables) IstioFor(istio string) (Match[IstioRow], bool) {
	return lookup(t.Table(Istio), byMinor[IstioRow](istio))
}

// KubeadmEtcdFor returns what kubeadm of the Kubernetes minor of kubernetes
// expects of etcd.
func (t *Tables) KubeadmEtcdFor(kubernetes string) (Match[KubeadmEtcdRow], bool) {
	return lookup(t.Table(KubeadmEtcd), byMinor[KubeadmEtcdRow](kubernetes))
}

// CalicoFor returns the row of Calico's table for the MAJOR.MINOR of calico.
func (t *Tables) CalicoFor(calico string) (Match[CalicoRow], bool) {
	return lookup(t.Table(Calico), byMinor[CalicoRow](calico))
}

// CiliumFor returns the row of Cilium's table for the MAJOR.MINOR of cilium.
func (t *Tables) CiliumFor(cilium string) (Match[CiliumRow], bool) {
	return lookup(t.Table(Cilium), byMinor[CiliumRow](cilium))
}

// CRIToolsFor returns the row of cri-tools' matrix that covers the
// Kubernetes minor of kubernetes.
func (t *Tables) CRIToolsFor(kubernetes string) (Match[CRIToolsRow], bool) {
	return lookup(t.Table(CRITools), func(r CRIToolsRow) bool { return r.Covers(kubernetes) })
}

// sortRows orders rows newest first by their key (a minor), the order of
// the data file.
func sortRows(rows []Row) {
	slices.SortStableFunc(rows, func(a, b Row) int {
		ka, _ := parseMinor(a.Key())
		kb, _ := parseMinor(b.Key())
		return cmp.Or(cmp.Compare(kb.major, ka.major), cmp.Compare(kb.minor, ka.minor))
	})
}
