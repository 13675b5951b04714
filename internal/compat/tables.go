package compat

import (
	_ "embed"
	"fmt"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/updeb/updeb/internal/supportdata"
	"github.com/updeb/updeb/internal/yamlfile"
	"github.com/updeb/updeb/pkg/debversion"
)

// data/compat.yaml is a copy of upstream compatibility tables (Helm's version
// skew policy, containerd's Kubernetes support matrix) with their sources and
// snapshot dates in its header comment. Refresh it by copying the new snapshot
// over it, header included.
//
//go:embed data/compat.yaml
var embeddedTables []byte

// Tables are the upstream compatibility tables bundled with updeb.
type Tables struct {
	// Source is the header comment of data/compat.yaml: sources and snapshot dates.
	Source string
	// AsOf is the header's "As of:" day: the oldest snapshot the tables hold.
	AsOf       time.Time
	Helm       []HelmRow
	Containerd []ContainerdRow
	Istio      []IstioRow
	Kubeadm    KubeadmEtcd
}

// IstioRow is one row of Istio's support table: Istio minor Istio supports
// Kubernetes minors KubernetesMin..KubernetesMax (inclusive).
type IstioRow struct {
	Istio         string
	KubernetesMin string
	KubernetesMax string
}

// KubeadmEtcd is what kubeadm expects of etcd: per Kubernetes minor the etcd
// version it deploys (SupportedEtcdVersion), and the oldest external etcd it
// accepts (MinExternalEtcdVersion).
type KubeadmEtcd struct {
	MinExternal string
	Supported   []KubeadmEtcdRow
}

// KubeadmEtcdRow is one entry of kubeadm's SupportedEtcdVersion map.
type KubeadmEtcdRow struct {
	Kubernetes string
	Etcd       string
}

// HelmRow is one row of Helm's version skew table: Helm minor Helm is
// supported against Kubernetes minors KubernetesMin..KubernetesMax (inclusive).
type HelmRow struct {
	Helm          string
	KubernetesMax string
	KubernetesMin string
	// kubernetes is the row's range as a constraint: ">=MIN <=MAX".
	kubernetes debversion.Constraint
}

// ContainerdRow is one row of containerd's recommended table: for a Kubernetes
// minor, containerd versions "X.Y.Z+" (that patch or later of minor X.Y).
type ContainerdRow struct {
	Kubernetes string
	Containerd []string
	CRI        string
	// containerd holds each "X.Y.Z+" as the constraint "~X.Y.Z".
	containerd []debversion.Constraint
}

// LoadTables parses the embedded tables strictly (internal/yamlfile).
func LoadTables() (*Tables, error) { return parseTables("compat.yaml", embeddedTables) }

func parseTables(name string, b []byte) (*Tables, error) {
	d := &yamlfile.Decoder{File: name}
	t := &Tables{Source: supportdata.Header(b)}
	if asOf, _, err := supportdata.AsOf(t.Source); err != nil {
		d.At(&yaml.Node{Line: 1, Column: 1}, "%v", err)
	} else {
		t.AsOf = asOf
	}
	if top := d.Document(b, yamlfile.Options{What: "table file", Empty: "no tables"}); top != nil {
		d.Mapping(top, "", map[string]yamlfile.Field{
			"helm_kubernetes_skew": {Required: true, Decode: func(v *yaml.Node) {
				d.List(v, "helm_kubernetes_skew", func(_ int, v *yaml.Node) { t.Helm = append(t.Helm, helmRow(d, v)) })
			}},
			"containerd_kubernetes": {Required: true, Decode: func(v *yaml.Node) {
				d.Mapping(v, "containerd_kubernetes", map[string]yamlfile.Field{
					"recommended": {Required: true, Decode: func(v *yaml.Node) {
						d.List(v, "recommended", func(_ int, v *yaml.Node) { t.Containerd = append(t.Containerd, containerdRow(d, v)) })
					}},
					// Kept in the file for people; not checked.
					"deprecated":      {Decode: func(*yaml.Node) {}},
					"deprecated_note": {Decode: func(v *yaml.Node) { d.Str(v, "deprecated_note", new(string)) }},
				})
			}},
			"istio_kubernetes": {Required: true, Decode: func(v *yaml.Node) {
				d.List(v, "istio_kubernetes", func(_ int, v *yaml.Node) { t.Istio = append(t.Istio, istioRow(d, v)) })
			}},
			"kubeadm_etcd": {Required: true, Decode: func(v *yaml.Node) { t.Kubeadm = kubeadmEtcd(d, v) }},
		})
	}
	if err := d.Err(); err != nil {
		return nil, fmt.Errorf("compat: tables: %w", err)
	}
	return t, nil
}

// minorField decodes a required MAJOR.MINOR field of a row named what.
func minorField(d *yamlfile.Decoder, what, name string, dst *string) yamlfile.Field {
	return versionField(d, what, name, dst, func(s string) bool { _, _, ok := minorOf(s); return ok }, "MAJOR.MINOR")
}

// versionField decodes a required field whose value must pass valid (want
// says what valid is, for the message).
func versionField(d *yamlfile.Decoder, what, name string, dst *string, valid func(string) bool, want string) yamlfile.Field {
	return yamlfile.Field{Required: true, Decode: func(v *yaml.Node) {
		if d.Str(v, name, dst) && !valid(*dst) {
			d.At(v, "%s: %s %q is not %s", what, name, *dst, want)
		}
	}}
}

// istioRow decodes {istio: MINOR, kubernetes_min: MINOR, kubernetes_max: MINOR}.
func istioRow(d *yamlfile.Decoder, n *yaml.Node) IstioRow {
	var r IstioRow
	d.Mapping(n, "istio row", map[string]yamlfile.Field{
		"istio":          minorField(d, "istio row", "istio", &r.Istio),
		"kubernetes_min": minorField(d, "istio row", "kubernetes_min", &r.KubernetesMin),
		"kubernetes_max": minorField(d, "istio row", "kubernetes_max", &r.KubernetesMax),
	})
	return r
}

// kubeadmEtcd decodes {min_external: X.Y.Z, supported: [{kubernetes: MINOR, etcd: X.Y.Z}, ...]}.
func kubeadmEtcd(d *yamlfile.Decoder, n *yaml.Node) KubeadmEtcd {
	var k KubeadmEtcd
	patch := func(s string) bool { return len(leadingNumbers(s)) >= 3 }
	d.Mapping(n, "kubeadm_etcd", map[string]yamlfile.Field{
		"min_external": versionField(d, "kubeadm_etcd", "min_external", &k.MinExternal, patch, "X.Y.Z"),
		"supported": {Required: true, Decode: func(v *yaml.Node) {
			d.List(v, "supported", func(_ int, v *yaml.Node) {
				var r KubeadmEtcdRow
				d.Mapping(v, "kubeadm_etcd row", map[string]yamlfile.Field{
					"kubernetes": minorField(d, "kubeadm_etcd row", "kubernetes", &r.Kubernetes),
					"etcd":       versionField(d, "kubeadm_etcd row", "etcd", &r.Etcd, patch, "X.Y.Z"),
				})
				k.Supported = append(k.Supported, r)
			})
		}},
	})
	return k
}

// helmRow decodes {helm: MINOR, kubernetes_max: MINOR, kubernetes_min: MINOR}.
func helmRow(d *yamlfile.Decoder, n *yaml.Node) HelmRow {
	var r HelmRow
	minor := func(name string, dst *string) yamlfile.Field { return minorField(d, "helm row", name, dst) }
	d.Mapping(n, "helm row", map[string]yamlfile.Field{
		"helm":           minor("helm", &r.Helm),
		"kubernetes_min": minor("kubernetes_min", &r.KubernetesMin),
		"kubernetes_max": minor("kubernetes_max", &r.KubernetesMax),
	})
	var err error
	if r.kubernetes, err = debversion.ParseConstraint(">=" + r.KubernetesMin + " <=" + r.KubernetesMax); err != nil {
		d.At(n, "helm row %q: %v", r.Helm, err)
	}
	return r
}

// containerdRow decodes {kubernetes: MINOR, containerd: [X.Y.Z+, ...], cri: V}.
func containerdRow(d *yamlfile.Decoder, n *yaml.Node) ContainerdRow {
	var r ContainerdRow
	d.Mapping(n, "containerd row", map[string]yamlfile.Field{
		"kubernetes": {Required: true, Decode: func(v *yaml.Node) {
			if d.Str(v, "kubernetes", &r.Kubernetes) {
				if _, _, ok := minorOf(r.Kubernetes); !ok {
					d.At(v, "containerd row: kubernetes %q is not MAJOR.MINOR", r.Kubernetes)
				}
			}
		}},
		"containerd": {Required: true, Decode: func(v *yaml.Node) {
			d.List(v, "containerd", func(_ int, v *yaml.Node) {
				var c string
				if !d.Str(v, "containerd", &c) {
					return
				}
				base, plus := strings.CutSuffix(c, "+")
				con, err := debversion.ParseConstraint("~" + base)
				if _, _, ok := minorOf(base); !ok || !plus || err != nil {
					d.At(v, "containerd row: %q is not X.Y.Z+", c)
					return
				}
				r.Containerd = append(r.Containerd, c)
				r.containerd = append(r.containerd, con)
			})
		}},
		"cri": {Decode: func(v *yaml.Node) { d.Str(v, "cri", &r.CRI) }},
	})
	return r
}
