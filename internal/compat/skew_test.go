package compat

import (
	"strings"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/supportdata"
)

// The Kubernetes version skew policy (kubernetes/website
// content/en/releases/version-skew-policy.md, https://kubernetes.io/releases/version-skew-policy/)
// and kubeadm's own (content/en/docs/setup/production-environment/tools/kubeadm/create-cluster-kubeadm.md,
// "Version skew policy"), case by case, at the limits and one past them. Each
// group quotes the sentence it encodes. A case checks the findings of one
// component only (the others' are their own cases).
func TestKubernetesSkewPolicy(t *testing.T) {
	type tc struct {
		name  string
		set   string // the components of one release set, YAML flow mapping
		check string // the component whose findings are compared
		want  string // "RULE OTHER" per finding, sorted, joined by "; " ("" for none)
	}
	cases := []tc{
		// kube-apiserver: "In highly-available (HA) clusters, the newest and oldest `kube-apiserver`
		// instances must be within one minor version." and "require `kube-apiserver` to not skip minor
		// versions when upgrading, even in single-instance clusters."
		{"apiserver one minor", "{kubernetes: {from: 1.35.2, to: 1.36.1}}", "kubernetes", ""},
		{"apiserver patch", "{kubernetes: {from: 1.36.0, to: 1.36.4}}", "kubernetes", ""},
		{"apiserver to a pre-release", "{kubernetes: {from: 1.35.9, to: 1.36.0-rc.1}}", "kubernetes", ""},
		{"apiserver two minors", "{kubernetes: {from: 1.34.2, to: 1.36.1}, kubectl: 1.35.0}", "kubernetes", "kube-apiserver-skew "},
		{"apiserver two minors, build suffix", "{kubernetes: {from: v1.34.2+k3s1, to: v1.36.1+k3s1}, kubectl: 1.35.0}", "kubernetes", "kube-apiserver-skew "},

		// kubelet: "`kubelet` must not be newer than `kube-apiserver`."
		{"kubelet same", "{kubernetes: 1.36.0, kubelet: 1.36.9}", "kubelet", ""},
		{"kubelet newer", "{kubernetes: 1.36.4, kubelet: 1.37.0}", "kubelet", "kubelet-skew kubernetes"},
		{"kubelet newer pre-release", "{kubernetes: 1.36.4, kubelet: 1.37.0-rc.1}", "kubelet", "kubelet-skew kubernetes"},
		// "`kubelet` may be up to three minor versions older than `kube-apiserver` (`kubelet` < 1.25 may
		// only be up to two minor versions older than `kube-apiserver`)."
		{"kubelet 3 older", "{kubernetes: 1.36.4, kubelet: 1.33.0}", "kubelet", ""},
		{"kubelet 3 older, build suffix", "{kubernetes: 1.36.4, kubelet: 1.33.2+k3s1}", "kubelet", ""},
		{"kubelet 4 older", "{kubernetes: 1.36.4, kubelet: 1.32.9}", "kubelet", "kubelet-skew kubernetes"},
		{"kubelet 1.25, 3 older", "{kubernetes: 1.28.0, kubelet: 1.25.0}", "kubelet", ""},
		{"kubelet 1.24, 3 older", "{kubernetes: 1.27.5, kubelet: 1.24.17}", "kubelet", "kubelet-skew kubernetes"},
		{"kubelet 1.24, 2 older", "{kubernetes: 1.26.15, kubelet: 1.24.17}", "kubelet", ""},

		// kube-proxy: "`kube-proxy` must not be newer than `kube-apiserver`." "`kube-proxy` may be up to
		// three minor versions older than `kube-apiserver` (`kube-proxy` < 1.25 may only be up to two
		// minor versions older than `kube-apiserver`)." "`kube-proxy` may be up to three minor versions
		// older or newer than the `kubelet` instance it runs alongside (`kube-proxy` < 1.25 may only be up
		// to two minor versions older or newer than the `kubelet` instance it runs alongside)."
		{"kube-proxy newer", "{kubernetes: 1.36.4, kube-proxy: 1.37.0}", "kube-proxy", "kube-proxy-skew kubernetes"},
		{"kube-proxy 3 older", "{kubernetes: 1.36.4, kube-proxy: 1.33.0}", "kube-proxy", ""},
		{"kube-proxy 4 older", "{kubernetes: 1.36.4, kube-proxy: 1.32.0}", "kube-proxy", "kube-proxy-skew kubelet; kube-proxy-skew kubernetes"},
		{"kube-proxy 3 newer than kubelet", "{kubernetes: 1.36.4, kubelet: 1.33.1, kube-proxy: 1.36.4}", "kube-proxy", ""},
		{"kube-proxy 1.24, 3 older", "{kubernetes: 1.27.5, kube-proxy: 1.24.17}", "kube-proxy", "kube-proxy-skew kubelet; kube-proxy-skew kubernetes"},
		{"kube-proxy 1.24, 2 older", "{kubernetes: 1.26.15, kube-proxy: 1.24.17}", "kube-proxy", ""},
		{"kube-proxy 1.27 3 newer than kubelet 1.24", "{kubernetes: 1.27.5, kubelet: 1.24.17, kube-proxy: 1.27.5}", "kube-proxy", ""},

		// "`kube-controller-manager`, `kube-scheduler`, and `cloud-controller-manager` must not be newer
		// than the `kube-apiserver` instances they communicate with. They are expected to match the
		// `kube-apiserver` minor version, but may be up to one minor version older (to allow live upgrades)."
		{"controller-manager 1 older", "{kubernetes: 1.36.4, kube-controller-manager: 1.35.2}", "kube-controller-manager", ""},
		{"controller-manager 2 older", "{kubernetes: 1.36.4, kube-controller-manager: 1.34.2}", "kube-controller-manager", "kube-controller-manager-skew kubernetes"},
		{"scheduler newer", "{kubernetes: 1.36.4, kube-scheduler: 1.37.0-alpha.1}", "kube-scheduler", "kube-scheduler-skew kubernetes"},
		{"cloud-controller-manager same", "{kubernetes: 1.36.4, cloud-controller-manager: 1.36.0}", "cloud-controller-manager", ""},
		{"cloud-controller-manager 1 older", "{kubernetes: 1.36.4, cloud-controller-manager: 1.35.1}", "cloud-controller-manager", ""},
		{"cloud-controller-manager 2 older", "{kubernetes: 1.36.4, cloud-controller-manager: 1.34.1}", "cloud-controller-manager", "cloud-controller-manager-skew kubernetes"},
		{"cloud-controller-manager newer", "{kubernetes: 1.36.4, cloud-controller-manager: 1.37.0}", "cloud-controller-manager", "cloud-controller-manager-skew kubernetes"},
		// The upgrade order: "Upgrade `kube-controller-manager`, `kube-scheduler`, and
		// `cloud-controller-manager`" once kube-apiserver is at the new minor, before the nodes.
		{"cloud-controller-manager in an upgrade", "{kubernetes: {from: 1.35.2, to: 1.36.1}, cloud-controller-manager: {from: 1.35.0, to: 1.36.0}}", "cloud-controller-manager", ""},
		// Upgrading kube-apiserver, "Pre-requisites: ... The `kube-controller-manager`, `kube-scheduler`,
		// and `cloud-controller-manager` instances that communicate with this server are at version
		// {{< skew currentVersionAddMinor -1 >}} (this ensures they are not newer than the existing API server version, and are within 1
		// minor version of the new API server version)": one minor behind before the upgrade is two
		// behind once kube-apiserver moved, before they follow.
		{"controller-manager behind at an upgrade", "{kubernetes: {from: 1.35.2, to: 1.36.1}, kube-controller-manager: {from: 1.34.0, to: 1.36.0}}", "kube-controller-manager", "kube-controller-manager-skew kubernetes"},
		{"cloud-controller-manager behind at an upgrade", "{kubernetes: {from: 1.35.2, to: 1.36.1}, cloud-controller-manager: {from: 1.34.0, to: 1.36.0}}", "cloud-controller-manager", "cloud-controller-manager-skew kubernetes"},

		// "`kubectl` is supported within one minor version (older or newer) of `kube-apiserver`."
		{"kubectl 1 newer", "{kubernetes: 1.36.4, kubectl: 1.37.0}", "kubectl", ""},
		{"kubectl 1 older", "{kubernetes: 1.36.4, kubectl: 1.35.0}", "kubectl", ""},
		{"kubectl 2 newer", "{kubernetes: 1.36.4, kubectl: 1.38.0}", "kubectl", "kubectl-skew kubernetes"},
		{"kubectl 2 older", "{kubernetes: 1.36.4, kubectl: 1.34.0}", "kubectl", "kubectl-skew kubernetes"},
		// kubeadm: "kubeadm can be used with Kubernetes components that are the same version as kubeadm
		// or one version older." ("kubeadm is at 1.29; `kubernetesVersion` must be at 1.29 or 1.28")
		{"kubeadm same", "{kubernetes: 1.36.4, kubeadm: 1.36.0}", "kubeadm", ""},
		{"kubeadm 1 newer", "{kubernetes: 1.36.4, kubeadm: 1.37.0}", "kubeadm", ""},
		{"kubeadm 2 newer", "{kubernetes: 1.36.4, kubelet: 1.36.4, kubeadm: 1.38.0}", "kubeadm", "kubeadm-skew kubernetes"},
		{"kubeadm older", "{kubernetes: 1.36.4, kubeadm: 1.35.3}", "kubeadm", "kubeadm-skew kubelet; kubeadm-skew kubernetes"},
		// "kubeadm can be used with a kubelet version that is the same version as kubeadm or three
		// versions older."
		{"kubeadm, kubelet 3 older", "{kubernetes: 1.36.4, kubelet: 1.33.0, kubeadm: 1.36.4}", "kubeadm", ""},
		{"kubeadm, kubelet 4 older", "{kubernetes: 1.36.4, kubelet: 1.33.0, kubeadm: 1.37.0}", "kubeadm", "kubeadm-skew kubelet"},
		// "Nodes that are being upgraded must use a version of kubeadm that is the same MINOR version or
		// one MINOR version newer than the version of kubeadm used for managing the node."
		{"kubeadm upgrade one minor", "{kubernetes: {from: 1.35.2, to: 1.36.1}}", "kubeadm", ""},
		{"kubeadm upgrade two minors", "{kubernetes: {from: 1.35.1, to: 1.36.1}, kubelet: 1.35.0, kubeadm: {from: 1.35.0, to: 1.37.0}}", "kubeadm", "kubeadm-skew "},
		// The upgrade order: kubeadm first ("kubeadm upgrade apply" is the new kubeadm), then the control
		// plane; the nodes follow.
		{"defaulted upgrade", "{kubernetes: {from: 1.35.2, to: 1.36.1}}", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sets, err := ParseReleaseSets("r.yaml", []byte("sets:\n  - name: s\n    components: "+c.set+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range Evaluate(sets, Inputs{}).Findings {
				if f.Severity == Violation && (c.check == "" || f.Component == c.check) {
					got = append(got, f.Rule+" "+f.Other)
					t.Logf("%s: %s", f.Component, f.Message)
				}
			}
			if g := strings.Join(got, "; "); g != c.want {
				t.Errorf("%s: violations of %s:\n got %q\nwant %q", c.set, c.check, g, c.want)
			}
		})
	}
}

// TestKubeNamedComponentsAreTheirOwn: a component whose name starts with
// "kube-" but is not a Kubernetes release binary (kube-vip,
// kube-state-metrics) is its own product, not Kubernetes: no skew rule, no
// Kubernetes release cycle.
func TestKubeNamedComponentsAreTheirOwn(t *testing.T) {
	sets, err := ParseReleaseSets("r.yaml", []byte("sets:\n  - name: s\n    components: {kubernetes: 1.36.4, kube-vip: 0.8.9, kube-state-metrics: 2.13.0}\n"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := supportdata.Bundled()
	if err != nil {
		t.Fatal(err)
	}
	in := Inputs{EOL: data, Now: time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC), Shipped: map[string][]string{"kubernetes": {"1.36.4"}}}
	for _, f := range Evaluate(sets, in).Findings {
		if (f.Component == "kube-vip" || f.Component == "kube-state-metrics") && (f.Severity == Violation || strings.Contains(f.Message, "kubernetes")) {
			t.Errorf("%s %s (%s): %s", f.Severity, f.Component, f.Rule, f.Message)
		}
	}
}

// TestEOLUnknownNamesTheCopy: a version the end-of-life data in use has no
// cycle for is reported against that copy (a repository data file that
// predates the minor), not "the bundled end-of-life data": the operator
// refreshes the copy the finding names.
func TestEOLUnknownNamesTheCopy(t *testing.T) {
	sets, err := ParseReleaseSets("r.yaml", []byte("sets:\n  - name: s\n    components: {kubernetes: 1.37.1}\n"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := supportdata.Bundled()
	if err != nil {
		t.Fatal(err)
	}
	in := Inputs{EOL: data, EOLCopy: "repository /srv/k8s/compat-data.yaml", Now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	var got []string
	for _, f := range Evaluate(sets, in).Findings {
		if f.Rule == RuleEOLUnknown && f.Component == "kubernetes" {
			got = append(got, f.Message)
		}
	}
	want := "kubernetes 1.37.1: no kubernetes release cycle for it in the end-of-life data (repository /srv/k8s/compat-data.yaml, as of 2026-08-22)"
	if len(got) != 1 || got[0] != want {
		t.Errorf("eol-unknown findings: %q, want %q", got, want)
	}
}
