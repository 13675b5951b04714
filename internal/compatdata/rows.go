package compatdata

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/updeb/updeb/pkg/debversion"
)

// Row is one row of a table. Its fields are exported by each row type; Key
// identifies it within its table (a data file holds each key once, and an
// override replaces the row of the same key).
type Row interface {
	// Key is the row's key: the component's MAJOR.MINOR for helm, istio,
	// calico and cilium, the Kubernetes MAJOR.MINOR for containerd and
	// kubeadm-etcd, the lower Kubernetes bound for cri-tools.
	Key() string
	// String is the row's content in one line, for reports and diffs.
	String() string
	// kubernetes lists every Kubernetes minor the row names.
	kubernetes() []minor
	// check reports a row that does not hold together (bounds out of order,
	// a list with a gap).
	check() error
	// fields are the row's fields in the data file's order.
	fields() []field
}

// field is one field of a row in the data file: a string or a list of them.
type field struct {
	name  string
	value any // string or []string
}

// KubernetesRange is a range of Kubernetes minors, both ends included.
type KubernetesRange struct {
	KubernetesMin string
	KubernetesMax string
}

// Allows reports whether the range holds the MAJOR.MINOR of kubernetes (any
// upstream version: "1.36.4", "v1.36", "1.36").
func (r KubernetesRange) Allows(kubernetes string) bool {
	k, ok := minorOfVersion(kubernetes)
	lo, _ := parseMinor(r.KubernetesMin)
	hi, _ := parseMinor(r.KubernetesMax)
	return ok && !k.less(lo) && !hi.less(k)
}

// String is "1.33-1.36".
func (r KubernetesRange) String() string { return r.KubernetesMin + "-" + r.KubernetesMax }

func (r KubernetesRange) minors() []minor {
	lo, _ := parseMinor(r.KubernetesMin)
	hi, _ := parseMinor(r.KubernetesMax)
	return []minor{lo, hi}
}

func (r KubernetesRange) check() error {
	lo, _ := parseMinor(r.KubernetesMin)
	hi, _ := parseMinor(r.KubernetesMax)
	if hi.less(lo) {
		return fmt.Errorf("the Kubernetes range %s: the bounds are out of order", r)
	}
	return nil
}

func (r KubernetesRange) fields() []field {
	return []field{{"kubernetes_min", r.KubernetesMin}, {"kubernetes_max", r.KubernetesMax}}
}

// KubernetesList is a list of Kubernetes minors, ascending without a gap.
type KubernetesList []string

// Allows reports whether the list holds the MAJOR.MINOR of kubernetes.
func (l KubernetesList) Allows(kubernetes string) bool {
	k, ok := minorOfVersion(kubernetes)
	for _, s := range l {
		if m, _ := parseMinor(s); ok && m == k {
			return true
		}
	}
	return false
}

// String is "1.34, 1.35, 1.36".
func (l KubernetesList) String() string { return strings.Join(l, ", ") }

func (l KubernetesList) minors() []minor {
	out := make([]minor, 0, len(l))
	for _, s := range l {
		m, _ := parseMinor(s)
		out = append(out, m)
	}
	return out
}

func (l KubernetesList) check() error {
	if len(l) == 0 {
		return fmt.Errorf("no Kubernetes versions")
	}
	ms := l.minors()
	for i := 1; i < len(ms); i++ {
		if ms[i].major != ms[i-1].major || ms[i].minor != ms[i-1].minor+1 {
			return fmt.Errorf("the Kubernetes versions %s: not ascending one minor at a time (%s after %s)", l, ms[i], ms[i-1])
		}
	}
	return nil
}

// HelmRow is one row of Helm's version skew table: Helm MAJOR.MINOR Helm is
// supported against the Kubernetes minors of the range.
type HelmRow struct {
	Helm string
	KubernetesRange
}

func (r HelmRow) Key() string { return r.Helm }
func (r HelmRow) String() string {
	return "helm " + r.Helm + ": Kubernetes " + r.KubernetesRange.String()
}
func (r HelmRow) kubernetes() []minor { return r.minors() }
func (r HelmRow) check() error        { return r.KubernetesRange.check() }
func (r HelmRow) fields() []field {
	return append([]field{{"helm", r.Helm}}, r.KubernetesRange.fields()...)
}

// IstioRow is one row of Istio's support table: Istio MAJOR.MINOR supports the
// Kubernetes minors of the range.
type IstioRow struct {
	Istio string
	KubernetesRange
}

func (r IstioRow) Key() string { return r.Istio }
func (r IstioRow) String() string {
	return "istio " + r.Istio + ": Kubernetes " + r.KubernetesRange.String()
}
func (r IstioRow) kubernetes() []minor { return r.minors() }
func (r IstioRow) check() error        { return r.KubernetesRange.check() }
func (r IstioRow) fields() []field {
	return append([]field{{"istio", r.Istio}}, r.KubernetesRange.fields()...)
}

// ContainerdRow is one row of containerd's "Kubernetes Support" table: the
// containerd versions recommended for a Kubernetes minor, each "X.Y.Z+"
// (that patch or a later one of minor X.Y) or "X.Y" (any patch of X.Y).
type ContainerdRow struct {
	Kubernetes string
	Containerd []string
	CRI        string // the CRI version, as upstream writes it ("v1")
}

func (r ContainerdRow) Key() string { return r.Kubernetes }
func (r ContainerdRow) String() string {
	s := "kubernetes " + r.Kubernetes + ": containerd " + strings.Join(r.Containerd, ", ")
	if r.CRI != "" {
		s += " (CRI " + r.CRI + ")"
	}
	return s
}
func (r ContainerdRow) kubernetes() []minor { k, _ := parseMinor(r.Kubernetes); return []minor{k} }
func (r ContainerdRow) check() error {
	if len(r.Containerd) == 0 {
		return fmt.Errorf("kubernetes %s: no containerd version", r.Kubernetes)
	}
	return nil
}
func (r ContainerdRow) fields() []field {
	f := []field{{"kubernetes", r.Kubernetes}, {"containerd", r.Containerd}}
	if r.CRI != "" {
		f = append(f, field{"cri", r.CRI})
	}
	return f
}

// Recommends reports whether containerd (an upstream version) is one of the
// row's recommended versions.
func (r ContainerdRow) Recommends(containerd string) bool {
	for _, c := range r.Containerd {
		con, err := debversion.ParseConstraint(containerdConstraint(c))
		if err != nil {
			continue
		}
		if ok, err := con.Allows(containerd); ok && err == nil {
			return true
		}
	}
	return false
}

// containerdConstraint turns "X.Y.Z+" into "~X.Y.Z" (that patch or later of
// X.Y) and "X.Y" into "~X.Y.0".
func containerdConstraint(c string) string {
	if base, plus := strings.CutSuffix(c, "+"); plus {
		return "~" + base
	}
	return "~" + c + ".0"
}

var containerdVersionRE = regexp.MustCompile(`^(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})(\.(0|[1-9][0-9]{0,4})\+)?$`)

// KubeadmEtcdRow is what kubeadm of a Kubernetes minor expects of etcd: the
// version it deploys (SupportedEtcdVersion) and the oldest external etcd it
// accepts (MinExternalEtcdVersion), both X.Y.Z (the image revision "-0" dropped).
type KubeadmEtcdRow struct {
	Kubernetes  string
	Etcd        string
	MinExternal string
}

func (r KubeadmEtcdRow) Key() string { return r.Kubernetes }
func (r KubeadmEtcdRow) String() string {
	return "kubernetes " + r.Kubernetes + ": etcd " + r.Etcd + " (external at least " + r.MinExternal + ")"
}
func (r KubeadmEtcdRow) kubernetes() []minor { k, _ := parseMinor(r.Kubernetes); return []minor{k} }
func (r KubeadmEtcdRow) check() error        { return nil }
func (r KubeadmEtcdRow) fields() []field {
	return []field{{"kubernetes", r.Kubernetes}, {"etcd", r.Etcd}, {"min_external", r.MinExternal}}
}

// CalicoRow is Calico's list of the Kubernetes minors one Calico minor is
// tested against ("Supported versions" in its system requirements).
type CalicoRow struct {
	Calico     string
	Kubernetes KubernetesList
}

func (r CalicoRow) Key() string { return r.Calico }
func (r CalicoRow) String() string {
	return "calico " + r.Calico + ": Kubernetes " + r.Kubernetes.String()
}
func (r CalicoRow) kubernetes() []minor { return r.Kubernetes.minors() }
func (r CalicoRow) check() error        { return r.Kubernetes.check() }
func (r CalicoRow) fields() []field {
	return []field{{"calico", r.Calico}, {"kubernetes", []string(r.Kubernetes)}}
}

// CiliumRow is Cilium's list of the Kubernetes minors one Cilium minor is
// end-to-end tested against (its "Kubernetes Version" requirements).
type CiliumRow struct {
	Cilium     string
	Kubernetes KubernetesList
}

func (r CiliumRow) Key() string { return r.Cilium }
func (r CiliumRow) String() string {
	return "cilium " + r.Cilium + ": Kubernetes " + r.Kubernetes.String()
}
func (r CiliumRow) kubernetes() []minor { return r.Kubernetes.minors() }
func (r CiliumRow) check() error        { return r.Kubernetes.check() }
func (r CiliumRow) fields() []field {
	return []field{{"cilium", r.Cilium}, {"kubernetes", []string(r.Kubernetes)}}
}

// SameMinor is CRIToolsRow.CRITools for "the cri-tools minor of the
// Kubernetes minor" (cri-tools follows Kubernetes' minors from 1.16 on).
const SameMinor = "same-minor"

// CRIToolsRow is one row of cri-tools' compatibility matrix: for Kubernetes
// KubernetesMin..KubernetesMax ("" for no upper bound), the cri-tools release
// to use: SameMinor, or one version ("1.15.0", "1.0.0-beta.2").
type CRIToolsRow struct {
	KubernetesMin string
	KubernetesMax string
	CRITools      string
}

func (r CRIToolsRow) Key() string         { return r.KubernetesMin }
func (r CRIToolsRow) kubernetes() []minor { return r.minors() }

// String is "kubernetes 1.16-1.26: cri-tools same-minor".
func (r CRIToolsRow) String() string {
	k := r.KubernetesMin + " and newer"
	if r.KubernetesMax == r.KubernetesMin {
		k = r.KubernetesMin
	} else if r.KubernetesMax != "" {
		k = r.KubernetesMin + "-" + r.KubernetesMax
	}
	return "kubernetes " + k + ": cri-tools " + r.CRITools
}

// Covers reports whether the row's range holds the MAJOR.MINOR of kubernetes.
func (r CRIToolsRow) Covers(kubernetes string) bool {
	k, ok := minorOfVersion(kubernetes)
	lo, _ := parseMinor(r.KubernetesMin)
	if !ok || k.less(lo) {
		return false
	}
	hi, bounded := parseMinor(r.KubernetesMax)
	return !bounded || !hi.less(k)
}

// Allows reports whether cri-tools (an upstream version) is the one the row
// names for kubernetes: the same MAJOR.MINOR, or the row's version.
func (r CRIToolsRow) Allows(criTools, kubernetes string) bool {
	if r.CRITools == SameMinor {
		c, ok1 := minorOfVersion(criTools)
		k, ok2 := minorOfVersion(kubernetes)
		return ok1 && ok2 && c == k
	}
	return strings.TrimPrefix(criTools, "v") == r.CRITools
}

func (r CRIToolsRow) minors() []minor {
	lo, _ := parseMinor(r.KubernetesMin)
	if hi, ok := parseMinor(r.KubernetesMax); ok {
		return []minor{lo, hi}
	}
	return []minor{lo}
}

func (r CRIToolsRow) check() error {
	ms := r.minors()
	if len(ms) == 2 && ms[1].less(ms[0]) {
		return fmt.Errorf("the Kubernetes range %s-%s: the bounds are out of order", r.KubernetesMin, r.KubernetesMax)
	}
	if r.CRITools != SameMinor && !criToolsVersionRE.MatchString(r.CRITools) {
		return fmt.Errorf("cri-tools %q: expected %s or a version", r.CRITools, SameMinor)
	}
	return nil
}

func (r CRIToolsRow) fields() []field {
	return []field{{"kubernetes_min", r.KubernetesMin}, {"kubernetes_max", r.KubernetesMax}, {"cri_tools", r.CRITools}}
}

var criToolsVersionRE = regexp.MustCompile(`^(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})(\.(0|[1-9][0-9]{0,4}))?(-[a-z]+(\.[0-9]{1,4})?)?$`)

// minor is a MAJOR.MINOR.
type minor struct{ major, minor int }

func (m minor) String() string { return strconv.Itoa(m.major) + "." + strconv.Itoa(m.minor) }

func (m minor) less(o minor) bool {
	return m.major < o.major || m.major == o.major && m.minor < o.minor
}

var minorRE = regexp.MustCompile(`^(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})$`)

// parseMinor reads exactly "MAJOR.MINOR" (no leading zeros, no "v").
func parseMinor(s string) (minor, bool) {
	m := minorRE.FindStringSubmatch(s)
	if m == nil {
		return minor{}, false
	}
	a, _ := strconv.Atoi(m[1])
	b, _ := strconv.Atoi(m[2])
	return minor{a, b}, true
}

// MinorOf returns the major and minor numbers of an upstream version
// ("v1.36.4", "1.36", "1.35.0-rc.1"); ok is false when it has fewer than two
// numeric components or is not a version.
func MinorOf(version string) (major, minorNumber int, ok bool) {
	m, ok := minorOfVersion(version)
	return m.major, m.minor, ok
}

func minorOfVersion(version string) (minor, bool) {
	norm, err := debversion.FromUpstream(version)
	if err != nil {
		return minor{}, false
	}
	n := debversion.LeadingNumbers(norm)
	if len(n) < 2 {
		return minor{}, false
	}
	return minor{n[0], n[1]}, true
}
