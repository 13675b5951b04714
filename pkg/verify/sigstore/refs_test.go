package sigstore

import (
	"errors"
	"regexp"
	"testing"
)

// An identity pin names the workflow and the ref its run must be at: a pin
// that leaves the ref open accepts a pull request's run, or a run on any
// branch, of the right workflow, and so anything whoever opens the pull
// request or pushes the branch builds. Each certificate below is one such
// run's, made by the test CA: the loose pin verifies it (a recipe's lint
// refuses the pin; a pull request's run is refused by the policy itself).
func TestIdentityRefs(t *testing.T) {
	v, art, subjects, ver := attestSetup(t)
	const repo = `https://github\.com/cilium/cilium-cli/\.github/workflows/release\.yaml@`
	const run = "https://github.com/cilium/cilium-cli/.github/workflows/release.yaml@"
	for _, c := range []struct {
		re   string
		run  string // a run the pin accepts; "" for none to show
		want WorkflowRefs
	}{
		{repo + `.*`, "refs/pull/7/merge", WorkflowRefs{PullRequests: true, Branches: true, AnyBranch: true}},
		{repo + `refs/.*`, "refs/pull/7/head", WorkflowRefs{PullRequests: true, Branches: true, AnyBranch: true}},
		{repo + `refs/(tags/v.*|pull/[0-9]+/merge)`, "refs/pull/12/merge", WorkflowRefs{PullRequests: true}},
		{repo + `refs/heads/.*`, "refs/heads/dependabot/go_modules/x", WorkflowRefs{Branches: true, AnyBranch: true}},
		{repo + `refs/heads/(main|release-.+)`, "refs/heads/release-evil", WorkflowRefs{Branches: true, AnyBranch: true}},
		{`https://github\.com/cilium/cilium-cli/\.github/workflows/.*`, "refs/heads/evil", WorkflowRefs{PullRequests: true, Branches: true, AnyBranch: true}},
		{repo + `refs/heads/main`, "refs/heads/main", WorkflowRefs{Branches: true}},
		{repo + `refs/heads/(main|stable)`, "refs/heads/stable", WorkflowRefs{Branches: true}},
		{regexp.QuoteMeta(run + "refs/heads/main"), "refs/heads/main", WorkflowRefs{Branches: true}},
		{repo + `refs/tags/v.*`, "", WorkflowRefs{}},
		{`^https://github\.com/containerd/containerd/\.github/workflows/release\.yml@refs/tags/v[0-9]+\.[0-9]+\.[0-9]+.*$`, "", WorkflowRefs{}},
		{regexp.QuoteMeta(run + "refs/tags/v{{.Version}}"), "", WorkflowRefs{}},
		{`krel-staging@k8s-releng-prod\.iam\.gserviceaccount\.com`, "", WorkflowRefs{}},
	} {
		if got := IdentityRefs(c.re); got != c.want {
			t.Errorf("IdentityRefs(%q) = %+v, want %+v", c.re, got, c.want)
		}
		if c.run == "" {
			continue
		}
		pol := Policy{IdentityRegexp: c.re, Issuer: actionsIssuer}
		_, err := ver.VerifyBundle(ctx(t), pol, art, v.attest(run+c.run, actionsIssuer, subjects), "x.sigstore.json")
		if c.want.PullRequests {
			if !errors.Is(err, ErrPolicy) {
				t.Errorf("%q accepts a pull request's run (%s): %v", c.re, c.run, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: the run at %s shows no loose pin: %v", c.re, c.run, err)
		}
	}
}
