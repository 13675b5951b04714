package compat

import (
	"bytes"
	_ "embed"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/updeb/updeb/internal/datafile"
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
	Source     string
	Helm       []HelmRow
	Containerd []ContainerdRow
}

// HelmRow is one row of Helm's version skew table: Helm minor Helm is
// supported against Kubernetes minors KubernetesMin..KubernetesMax (inclusive).
type HelmRow struct {
	Helm          string `yaml:"helm"`
	KubernetesMax string `yaml:"kubernetes_max"`
	KubernetesMin string `yaml:"kubernetes_min"`
	// kubernetes is the row's range as a constraint: ">=MIN <=MAX".
	kubernetes debversion.Constraint
}

// ContainerdRow is one row of containerd's recommended table: for a Kubernetes
// minor, containerd versions "X.Y.Z+" (that patch or later of minor X.Y).
type ContainerdRow struct {
	Kubernetes string   `yaml:"kubernetes"`
	Containerd []string `yaml:"containerd"`
	CRI        string   `yaml:"cri"`
	// containerd holds each "X.Y.Z+" as the constraint "~X.Y.Z".
	containerd []debversion.Constraint
}

type tablesFile struct {
	Helm       []HelmRow `yaml:"helm_kubernetes_skew"`
	Containerd struct {
		Recommended    []ContainerdRow `yaml:"recommended"`
		Deprecated     []yaml.Node     `yaml:"deprecated"` // kept in the file for people; not checked
		DeprecatedNote string          `yaml:"deprecated_note"`
	} `yaml:"containerd_kubernetes"`
}

// LoadTables parses the embedded tables strictly.
func LoadTables() (*Tables, error) { return parseTables(embeddedTables) }

func parseTables(b []byte) (*Tables, error) {
	var f tablesFile
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("compat: tables compat.yaml: %w", err)
	}
	for i := range f.Helm {
		r := &f.Helm[i]
		for _, v := range []string{r.Helm, r.KubernetesMin, r.KubernetesMax} {
			if _, _, ok := minorOf(v); !ok {
				return nil, fmt.Errorf("compat: tables compat.yaml: helm row %q: %q is not MAJOR.MINOR", r.Helm, v)
			}
		}
		var err error
		if r.kubernetes, err = debversion.ParseConstraint(">=" + r.KubernetesMin + " <=" + r.KubernetesMax); err != nil {
			return nil, fmt.Errorf("compat: tables compat.yaml: helm row %q: %w", r.Helm, err)
		}
	}
	for i := range f.Containerd.Recommended {
		r := &f.Containerd.Recommended[i]
		if _, _, ok := minorOf(r.Kubernetes); !ok {
			return nil, fmt.Errorf("compat: tables compat.yaml: containerd row %q: not MAJOR.MINOR", r.Kubernetes)
		}
		for _, c := range r.Containerd {
			base, plus := strings.CutSuffix(c, "+")
			con, err := debversion.ParseConstraint("~" + base)
			if _, _, ok := minorOf(base); !ok || !plus || err != nil {
				return nil, fmt.Errorf("compat: tables compat.yaml: containerd row %q: %q is not X.Y.Z+", r.Kubernetes, c)
			}
			r.containerd = append(r.containerd, con)
		}
	}
	return &Tables{Source: datafile.Header(b), Helm: f.Helm, Containerd: f.Containerd.Recommended}, nil
}
