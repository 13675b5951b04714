package compat

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/updeb/updeb/pkg/debversion"
)

// ErrReleaseSet is wrapped by every release set file error.
var ErrReleaseSet = errors.New("compat: invalid release set file")

// ReleaseSet names the versions deployed together (one cluster, or one
// Kubernetes minor line). Components maps a component name to its upstream
// version as the recipe writes it ("1.35.4", not the Debian "1.35.4-1").
//
// "kubernetes" is the control plane's version (kube-apiserver) and is required.
// kubelet, kube-proxy, kubectl, kubeadm, kube-controller-manager and
// kube-scheduler default to it when not given (Check fills them in).
type ReleaseSet struct {
	Name       string
	Components map[string]string
}

// defaulted lists the components that take the "kubernetes" version when a
// set does not name them, in matrix row order.
func defaulted() []string {
	return []string{"kube-controller-manager", "kube-scheduler", "kubelet", "kube-proxy", "kubeadm", "kubectl"}
}

var (
	setNameRE   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	componentRE = regexp.MustCompile(`^[a-z0-9][a-z0-9.+-]*$`)
)

// LoadReleaseSets reads a release set file. Its format:
//
//	sets:
//	  - name: kubernetes135          # unique; letters, digits, . _ -
//	    components:                  # component -> upstream version
//	      kubernetes: 1.35.8         # required: the kube-apiserver version
//	      kubelet: 1.35.8            # optional, defaults to kubernetes
//	      helm: 3.20.2
//
// Decoding is strict: unknown keys, duplicate keys, missing names, empty sets
// and invalid versions are errors, reported as "FILE:LINE: message".
func LoadReleaseSets(path string) ([]ReleaseSet, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseReleaseSets(path, b)
}

// ParseReleaseSets parses release set file content; name prefixes messages.
func ParseReleaseSets(name string, b []byte) ([]ReleaseSet, error) {
	fail := func(line int, format string, args ...any) ([]ReleaseSet, error) {
		return nil, fmt.Errorf("%w: %s:%d: %s", ErrReleaseSet, name, line, fmt.Sprintf(format, args...))
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		var te *yaml.TypeError
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		if errors.As(err, &te) && len(te.Errors) > 0 {
			msg = te.Errors[0]
		}
		line := 0
		if rest, ok := strings.CutPrefix(msg, "line "); ok {
			if n, after, ok := strings.Cut(rest, ": "); ok {
				if _, err := fmt.Sscanf(n, "%d", &line); err == nil {
					msg = after
				}
			}
		}
		return fail(line, "%s", msg)
	}
	if len(doc.Content) == 0 {
		return fail(1, "empty file: expected \"sets:\" with a list of release sets")
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return fail(top.Line, "expected a mapping with key \"sets\"")
	}
	var setsNode *yaml.Node
	for i := 0; i+1 < len(top.Content); i += 2 {
		k := top.Content[i]
		if k.Value != "sets" {
			return fail(k.Line, "unknown key %q (expected \"sets\")", k.Value)
		}
		if setsNode != nil {
			return fail(k.Line, "key \"sets\" given twice")
		}
		setsNode = top.Content[i+1]
	}
	if setsNode == nil {
		return fail(top.Line, "missing key \"sets\"")
	}
	if setsNode.Kind != yaml.SequenceNode || len(setsNode.Content) == 0 {
		return fail(setsNode.Line, "\"sets\" must be a non-empty list of release sets")
	}
	var out []ReleaseSet
	names := map[string]int{}
	for _, sn := range setsNode.Content {
		if sn.Kind != yaml.MappingNode {
			return fail(sn.Line, "a release set must be a mapping with \"name\" and \"components\"")
		}
		rs := ReleaseSet{Components: map[string]string{}}
		var compNode *yaml.Node
		compLine, kubeLine := sn.Line, 0
		seen := map[string]bool{}
		for i := 0; i+1 < len(sn.Content); i += 2 {
			k, v := sn.Content[i], sn.Content[i+1]
			if seen[k.Value] {
				return fail(k.Line, "key %q given twice", k.Value)
			}
			seen[k.Value] = true
			switch k.Value {
			case "name":
				if v.Kind != yaml.ScalarNode || !setNameRE.MatchString(v.Value) {
					return fail(v.Line, "set name %q: expected letters, digits, '.', '_' or '-'", v.Value)
				}
				if prev, dup := names[v.Value]; dup {
					return fail(v.Line, "set name %q already used at line %d", v.Value, prev)
				}
				names[v.Value] = v.Line
				rs.Name = v.Value
			case "components":
				compNode, compLine = v, k.Line
			default:
				return fail(k.Line, "unknown key %q in a release set (expected name, components)", k.Value)
			}
		}
		if rs.Name == "" {
			return fail(sn.Line, "release set has no name")
		}
		if compNode == nil || compNode.Kind != yaml.MappingNode || len(compNode.Content) == 0 {
			return fail(sn.Line, "set %q: \"components\" must be a non-empty mapping of component: version", rs.Name)
		}
		for i := 0; i+1 < len(compNode.Content); i += 2 {
			k, v := compNode.Content[i], compNode.Content[i+1]
			if !componentRE.MatchString(k.Value) {
				return fail(k.Line, "set %q: component name %q: expected lower-case letters, digits, '.', '+', '-'", rs.Name, k.Value)
			}
			if _, dup := rs.Components[k.Value]; dup {
				return fail(k.Line, "set %q: component %q given twice", rs.Name, k.Value)
			}
			if k.Value == "kube-apiserver" {
				return fail(k.Line, "set %q: give the kube-apiserver version as \"kubernetes\"", rs.Name)
			}
			if v.Kind != yaml.ScalarNode || v.Value == "" {
				return fail(v.Line, "set %q: component %q: expected a version", rs.Name, k.Value)
			}
			if _, err := debversion.FromUpstream(v.Value); err != nil {
				return fail(v.Line, "set %q: component %q: %v", rs.Name, k.Value, err)
			}
			rs.Components[k.Value] = v.Value
			if k.Value == "kubernetes" {
				kubeLine = v.Line
			}
		}
		if _, ok := rs.Components["kubernetes"]; !ok {
			return fail(compLine, "set %q: component \"kubernetes\" (the kube-apiserver version) is required", rs.Name)
		}
		if _, _, ok := minorOf(rs.Components["kubernetes"]); !ok {
			return fail(kubeLine, "set %q: kubernetes version %q: expected MAJOR.MINOR[.PATCH]", rs.Name, rs.Components["kubernetes"])
		}
		out = append(out, rs)
	}
	return out, nil
}
