package compat

import "testing"

func TestLoadTables(t *testing.T) {
	tb, err := LoadTables()
	if err != nil {
		t.Fatal(err)
	}
	if len(tb.Helm) == 0 || len(tb.Containerd) == 0 || tb.Source == "" {
		t.Fatalf("tables: %d helm rows, %d containerd rows, source %q", len(tb.Helm), len(tb.Containerd), tb.Source)
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
	for in, want := range map[string]string{
		"helm_kubernetes_skew: []\n": `compat: tables: t.yaml:1:1: missing required field "containerd_kubernetes"`,
		"helm_kubernetes_skew:\n  - {helm: \"3.x\", kubernetes_min: \"1.30\", kubernetes_max: \"1.33\", kube: 1}\ncontainerd_kubernetes: {recommended: []}\n": `compat: tables: t.yaml:2:12: helm row: helm "3.x" is not MAJOR.MINOR
t.yaml:2:67: helm row: unknown field "kube" (known: helm, kubernetes_max, kubernetes_min)`,
		"helm_kubernetes_skew: []\ncontainerd_kubernetes:\n  recommended:\n    - {kubernetes: \"1.32\", containerd: [\"2.1.0\", \"2.0.1+\"]}\n": `compat: tables: t.yaml:4:41: containerd row: "2.1.0" is not X.Y.Z+`,
	} {
		_, err := parseTables("t.yaml", []byte(in))
		if err == nil || err.Error() != want {
			t.Errorf("parseTables(%q):\n got %v\nwant %s", in, err, want)
		}
	}
}
