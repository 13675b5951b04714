package compatdata

import (
	"fmt"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/updeb/updeb/internal/srcurl"
	"github.com/updeb/updeb/internal/yamlfile"
)

// spec is what updeb knows of one table: how the data file writes its rows,
// where upstream publishes it and how to read that.
type spec struct {
	name string
	// what names the table in messages.
	what string
	// product is the end-of-life product the row keys are cycles of
	// (istio, calico, cilium), "" when the keys are Kubernetes minors or
	// the product has no end-of-life data (helm).
	product string
	// sources are the default URLs. "{minor}" in one stands for the minors
	// of perMinor: each is fetched once per minor.
	sources []string
	// perMinor says what {minor} is: "kubernetes" for the newest Kubernetes
	// minor released, or a product whose supported cycles are each fetched.
	perMinor string
	// decode reads one row of the data file (extra: an override's reason).
	decode func(rd rowDecoder, n *yaml.Node, extra map[string]yamlfile.Field) Row
	// parse reads upstream's document (doc.minor: the minor {minor} stood for).
	parse func(doc document) ([]Row, error)
}

// MinorPlaceholder in a source URL stands for a minor (see DefaultSources).
const MinorPlaceholder = "{minor}"

// raw is where GitHub serves a repository's files.
const raw = "https://raw.githubusercontent.com/"

// specs are the tables, in the data file's order.
var specs = []*spec{
	{
		name: Helm, what: "Helm's version skew table",
		sources: []string{
			raw + "helm/helm-www/main/docs/topics/version_skew.mdx",
			raw + "helm/helm-www/main/versioned_docs/version-3/topics/version_skew.md",
		},
		decode: func(rd rowDecoder, n *yaml.Node, extra map[string]yamlfile.Field) Row {
			var r HelmRow
			rd.mapping(n, rd.keyAndRange("helm", &r.Helm, &r.KubernetesRange), extra)
			return r
		},
		parse: parseHelm,
	},
	{
		name: Containerd, what: `containerd's "Kubernetes Support" table`,
		sources: []string{raw + "containerd/containerd/main/RELEASES.md"},
		decode: func(rd rowDecoder, n *yaml.Node, extra map[string]yamlfile.Field) Row {
			var r ContainerdRow
			rd.mapping(n, map[string]yamlfile.Field{"kubernetes": rd.minor("kubernetes", &r.Kubernetes, false),
				"containerd": {Required: true, Decode: func(v *yaml.Node) {
					rd.d.List(v, "containerd", func(_ int, v *yaml.Node) {
						var c string
						if rd.d.Str(v, "containerd", &c) {
							if !containerdVersionRE.MatchString(c) {
								rd.d.At(v, "%s: containerd %q is not X.Y.Z+ or X.Y", rd.what, c)
							}
							r.Containerd = append(r.Containerd, c)
						}
					})
				}},
				"cri": rd.text("cri", &r.CRI, false)}, extra)
			return r
		},
		parse: parseContainerd,
	},
	{
		name: Istio, what: "Istio's supported Kubernetes versions", product: "istio",
		sources: []string{raw + "istio/istio.io/master/data/compatibility/supportStatus.yml"},
		decode: func(rd rowDecoder, n *yaml.Node, extra map[string]yamlfile.Field) Row {
			var r IstioRow
			rd.mapping(n, rd.keyAndRange("istio", &r.Istio, &r.KubernetesRange), extra)
			return r
		},
		parse: parseIstio,
	},
	{
		name: KubeadmEtcd, what: "kubeadm's etcd versions",
		sources:  []string{raw + "kubernetes/kubernetes/release-{minor}/cmd/kubeadm/app/constants/constants.go"},
		perMinor: "kubernetes",
		decode: func(rd rowDecoder, n *yaml.Node, extra map[string]yamlfile.Field) Row {
			var r KubeadmEtcdRow
			rd.mapping(n, map[string]yamlfile.Field{"kubernetes": rd.minor("kubernetes", &r.Kubernetes, false),
				"etcd":         rd.version("etcd", &r.Etcd, isPatchVersion, "X.Y.Z"),
				"min_external": rd.version("min_external", &r.MinExternal, isPatchVersion, "X.Y.Z")}, extra)
			return r
		},
		parse: parseKubeadm,
	},
	{
		name: Calico, what: "Calico's supported Kubernetes versions", product: "calico",
		sources:  []string{raw + "tigera/docs/main/calico_versioned_docs/version-{minor}/_includes/partials/_system-requirements.mdx"},
		perMinor: "calico",
		decode: func(rd rowDecoder, n *yaml.Node, extra map[string]yamlfile.Field) Row {
			var r CalicoRow
			rd.mapping(n, map[string]yamlfile.Field{"calico": rd.minor("calico", &r.Calico, false), "kubernetes": rd.minors("kubernetes", &r.Kubernetes)}, extra)
			return r
		},
		parse: parseCalico,
	},
	{
		name: Cilium, what: "Cilium's supported Kubernetes versions", product: "cilium",
		sources:  []string{raw + "cilium/cilium/v{minor}/Documentation/network/kubernetes/requirements.rst"},
		perMinor: "cilium",
		decode: func(rd rowDecoder, n *yaml.Node, extra map[string]yamlfile.Field) Row {
			var r CiliumRow
			rd.mapping(n, map[string]yamlfile.Field{"cilium": rd.minor("cilium", &r.Cilium, false), "kubernetes": rd.minors("kubernetes", &r.Kubernetes)}, extra)
			return r
		},
		parse: parseCilium,
	},
	{
		name: CRITools, what: "cri-tools' compatibility matrix",
		sources: []string{raw + "kubernetes-sigs/cri-tools/master/README.md"},
		decode: func(rd rowDecoder, n *yaml.Node, extra map[string]yamlfile.Field) Row {
			var r CRIToolsRow
			rd.mapping(n, map[string]yamlfile.Field{"kubernetes_min": rd.minor("kubernetes_min", &r.KubernetesMin, false),
				"kubernetes_max": rd.minor("kubernetes_max", &r.KubernetesMax, true),
				"cri_tools":      rd.text("cri_tools", &r.CRITools, true)}, extra)
			return r
		},
		parse: parseCRITools,
	},
}

// specOf returns the spec of a table, nil for an unknown name.
func specOf(name string) *spec {
	for _, s := range specs {
		if s.name == name {
			return s
		}
	}
	return nil
}

// isPatchVersion accepts X.Y.Z.
func isPatchVersion(s string) bool { return patchVersionRE.MatchString(s) }

var patchVersionRE = regexp.MustCompile(`^(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,4})$`)

// DefaultSources returns the URLs updeb fetches a table from unless the
// config names others (data: sources:): upstream's own files on
// raw.githubusercontent.com. "{minor}" stands for each supported cycle of
// Calico and Cilium (their versioned docs) and for the newest Kubernetes
// minor released (kubeadm's release branch).
func DefaultSources(table string) []string {
	if s := specOf(table); s != nil {
		return append([]string(nil), s.sources...)
	}
	return nil
}

// CheckSource reports what is wrong with a URL the config names for a table:
// an unknown table, not an http(s) URL of updeb's grammar, "{minor}"
// missing where the table needs it (Calico's and Cilium's are per minor),
// or there where it stands for nothing (a table published as one file).
func CheckSource(table, url string) error {
	s := specOf(table)
	if s == nil {
		return fmt.Errorf("unknown table %q (known: %s)", table, strings.Join(Names(), ", "))
	}
	if _, err := srcurl.Check(strings.ReplaceAll(url, MinorPlaceholder, "1.0")); err != nil {
		return err
	}
	switch {
	case s.perMinor != "" && s.perMinor != "kubernetes" && !strings.Contains(url, MinorPlaceholder):
		return fmt.Errorf("%q: %s is published per %s minor: the URL needs %s where the minor goes", url, s.what, s.perMinor, MinorPlaceholder)
	case s.perMinor == "" && strings.Contains(url, MinorPlaceholder):
		// The refresh would look for cycles of no product to fill it in.
		return fmt.Errorf("%q: %s is one file, not one per minor: %s stands for nothing there", url, s.what, MinorPlaceholder)
	}
	return nil
}
