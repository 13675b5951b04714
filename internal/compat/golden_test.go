package compat

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/compatdata"
	"github.com/updeb/updeb/internal/supportdata"
)

// Regenerate the golden files after an intended change with:
//
//	go test ./internal/compat -run TestGolden -update
//
// and review the diff (git diff internal/compat/testdata/golden) before committing.
var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// checkDay is the fixed "now" of the golden reports (the data snapshot date).
var checkDay = time.Date(2026, 8, 22, 0, 0, 0, 0, time.UTC)

// goldenCases: release set file in testdata/cases, the requires passed to
// Evaluate, and the findings expected (severity rule component), independently of
// the golden text.
var goldenCases = []struct {
	name     string
	requires map[string]map[string]string
	recipes  map[string]string   // recipe name -> version, for recipe:NAME (Resolve)
	shipped  map[string][]string // component -> versions the recipes ship
	data     string              // a repository's data file in testdata/data ("": the bundled tables)
	want     []string
}{
	{name: "good", requires: map[string]map[string]string{"calicoctl": {"kubernetes": ">=1.29 <1.37"}}},
	// kubeadm (1.35.8, defaulted) is then older than the kubelet beside it.
	{name: "kubelet-newer", want: []string{"violation kubelet-skew kubelet", "violation kubeadm-skew kubeadm"}},
	// kube-proxy and kubeadm (1.35.8, defaulted) are then 4 minors newer than the kubelet beside them.
	{name: "kubelet-4-older", want: []string{"violation eol kubelet", "violation kubelet-skew kubelet", "violation kube-proxy-skew kube-proxy", "violation kubeadm-skew kubeadm"}},
	{name: "kubectl-2-off", want: []string{"violation eol kubectl", "violation kubectl-skew kubectl"}},
	{name: "scheduler-newer", want: []string{"violation kube-scheduler-skew kube-scheduler"}},
	{name: "controller-manager-2-older", want: []string{"violation eol kube-controller-manager", "violation kube-controller-manager-skew kube-controller-manager"}},
	{name: "helm-outside", want: []string{"violation helm-skew helm"}},
	{name: "requires-violated", requires: map[string]map[string]string{
		"calicoctl": {"kubernetes": ">=1.29, <1.35"}, "helm": {"kubernetes": ">=1.0"}},
		want: []string{"violation requires calicoctl"}},
	{name: "eol-kubernetes", want: []string{
		"violation eol kubernetes", "violation eol kube-controller-manager", "violation eol kube-scheduler",
		"violation eol kubelet", "violation eol kube-proxy", "violation eol kubeadm", "violation eol kubectl"}},
	{name: "containerd-not-recommended", want: []string{"warning containerd-recommended containerd"}},
	// istio 1.29 supports 1.31-1.35 (end-of-life data); 1.31 is only in the bundled table (1.32-1.37) and not in the eol data.
	{name: "istio-outside", want: []string{"violation istio-kubernetes istioctl", "warning eol-unknown istioctl"}},
	{name: "etcd-kubeadm", want: []string{"violation kubeadm-etcd etcd", "warning kubeadm-etcd etcd"}},
	{name: "rolling-upgrade"},
	// kubelet 1.32 is fine beside kube-apiserver 1.35 but 4 minors behind once the control plane is at 1.36
	// (kube-proxy, defaulted, moves with the nodes: 3 minors from that kubelet, allowed; kubeadm, defaulted,
	// moves with the control plane: 4 minors from it, not); helm 3.20 (1.32-1.35) breaks at the end.
	{name: "rolling-upgrade-skew", want: []string{"violation eol kubelet", "violation kubelet-skew kubelet", "violation kubeadm-skew kubeadm", "violation helm-skew helm"}},
	{name: "recipe-refs",
		recipes: map[string]string{"kubernetes-1.35": "1.35.4", "kubernetes-1.36": "1.36.0"},
		shipped: map[string][]string{"kubernetes": {"1.35.4", "1.36.0"}, "helm": {"3.21.4"}, "cri-tools": {"1.35.0", "1.36.0"}},
		want:    []string{"warning shipped flannel", "violation helm-skew helm", "violation shipped helm"}},
	// calicoctl 3.31 is tested against 1.32-1.35; the bundled Cilium table has no rows; cri-tools 1.35 beside 1.36.
	{name: "cni-cri-tools", want: []string{"warning calico-kubernetes calicoctl", "warning cilium-kubernetes cilium", "warning cri-tools-kubernetes cri-tools"}},
	{name: "override", data: "override.yaml", want: []string{"violation helm-skew helm"}},
}

func loadCase(t *testing.T, name string) []ReleaseSet {
	t.Helper()
	sets, err := LoadReleaseSets(filepath.Join("testdata", "cases", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return sets
}

func TestGolden(t *testing.T) {
	data, err := supportdata.Bundled()
	if err != nil {
		t.Fatal(err)
	}
	ext := map[Format]string{FormatTable: ".txt", FormatMarkdown: ".md", FormatCSV: ".csv", FormatHTML: ".html"}
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			sets := loadCase(t, tc.name)
			if err := Resolve(sets, tc.recipes, "recipes"); err != nil {
				t.Fatal(err)
			}
			in := Inputs{Requires: Requirements(tc.requires), EOL: data, Now: checkDay, Shipped: tc.shipped}
			if tc.data != "" {
				set, _, err := compatdata.Load("", filepath.Join("testdata", "data", tc.data))
				if err != nil {
					t.Fatal(err)
				}
				in.Tables = set.Tables
			}
			r := Evaluate(sets, in)
			var got []string
			for _, f := range r.Findings {
				got = append(got, string(f.Severity)+" "+f.Rule+" "+f.Component)
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			for _, f := range Formats() {
				var b bytes.Buffer
				if err := Render(&b, r, f); err != nil {
					t.Fatal(err)
				}
				path := filepath.Join("testdata", "golden", tc.name+ext[f])
				if *update {
					if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run with -update to create it)", err)
				}
				if !bytes.Equal(b.Bytes(), want) {
					t.Errorf("%s differs from the golden file; got:\n%s", path, b.String())
				}
			}
		})
	}
}
