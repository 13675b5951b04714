package compat

import "testing"

func TestLoadTables(t *testing.T) {
	tb, err := LoadTables()
	if err != nil {
		t.Fatal(err)
	}
	if len(tb.Helm) == 0 || len(tb.Containerd) == 0 || len(tb.Istio) == 0 || len(tb.Kubeadm.Supported) == 0 || tb.Source == "" || tb.AsOf.IsZero() {
		t.Fatalf("tables: %d helm rows, %d containerd rows, %d istio rows, %d kubeadm rows, source %q, as of %s",
			len(tb.Helm), len(tb.Containerd), len(tb.Istio), len(tb.Kubeadm.Supported), tb.Source, tb.AsOf)
	}
	// A row's range is a constraint of the one grammar: patch-agnostic bounds.
	for _, r := range tb.Helm {
		if r.Helm != "3.18" {
			continue
		}
		for v, want := range map[string]bool{"1.30.0": true, "1.33.9": true, "1.29.14": false, "1.34.0": false} {
			if ok, err := r.kubernetes.Allows(v); ok != want || err != nil {
				t.Errorf("helm 3.18 row allows kubernetes %s: %v, %v; want %v", v, ok, err, want)
			}
		}
	}
}

func TestParseTablesErrors(t *testing.T) {
	const rest = "istio_kubernetes: []\nkubeadm_etcd: {min_external: \"3.5.24\", supported: []}\n"
	for in, want := range map[string]string{
		"helm_kubernetes_skew: []\n": `compat: tables: t.yaml:1:1: missing required field "containerd_kubernetes", "istio_kubernetes", "kubeadm_etcd"`,
		"helm_kubernetes_skew:\n  - {helm: \"3.x\", kubernetes_min: \"1.30\", kubernetes_max: \"1.33\", kube: 1}\ncontainerd_kubernetes: {recommended: []}\n" + rest: `compat: tables: t.yaml:2:12: helm row: helm "3.x" is not MAJOR.MINOR
t.yaml:2:67: helm row: unknown field "kube" (known: helm, kubernetes_max, kubernetes_min)`,
		"helm_kubernetes_skew: []\ncontainerd_kubernetes:\n  recommended:\n    - {kubernetes: \"1.32\", containerd: [\"2.1.0\", \"2.0.1+\"]}\n" + rest: `compat: tables: t.yaml:4:41: containerd row: "2.1.0" is not X.Y.Z+`,
		"helm_kubernetes_skew: []\ncontainerd_kubernetes: {recommended: []}\nistio_kubernetes:\n  - {istio: \"1.30\", kubernetes_min: \"1.32\"}\nkubeadm_etcd: {min_external: \"3.5\", supported: [{kubernetes: \"1.36\", etcd: \"3.6.9\", x: 1}]}\n": `compat: tables: t.yaml:4:5: istio row: missing required field "kubernetes_max"
t.yaml:5:30: kubeadm_etcd: min_external "3.5" is not X.Y.Z
t.yaml:5:85: kubeadm_etcd row: unknown field "x" (known: etcd, kubernetes)`,
		"# As of: soon\nhelm_kubernetes_skew: []\ncontainerd_kubernetes: {recommended: []}\n" + rest: `compat: tables: t.yaml:1:1: header line "As of: soon": want As of: YYYY-MM-DD or an RFC 3339 time`,
	} {
		_, err := parseTables("t.yaml", []byte(in))
		if err == nil || err.Error() != want {
			t.Errorf("parseTables(%q):\n got %v\nwant %s", in, err, want)
		}
	}
}
