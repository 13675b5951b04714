// Package provenance writes the record of where every byte of a package came
// from: an in-toto Statement (v1) with a SLSA provenance v1 predicate. The record
// is reproducible like the package itself: it holds no wall-clock time, only the
// build's SOURCE_DATE_EPOCH.
//
// The contract: New is a pure function of its Build, and Marshal gives the
// same bytes for the same Build (subjects sorted by name, dependencies by URI,
// each input's verifiedBy sorted, JSON map keys sorted); the reader of a
// record finds how each input was trusted in its "verifiedBy" annotation.
package provenance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/updeb/updeb/pkg/digest"
)

const (
	StatementType = "https://in-toto.io/Statement/v1"
	PredicateType = "https://slsa.dev/provenance/v1"
	// BuildType names updeb's build process; its parameters are documented in
	// the README (recipe, architecture, Debian version).
	BuildType = "https://github.com/updeb/updeb/buildtypes/recipe/v1"
	BuilderID = "https://github.com/updeb/updeb"
)

// Subject is one output artifact.
type Subject struct {
	Name   string            `json:"name"`
	Digest map[string]string `json:"digest"`
}

// Dependency is one verified input: an upstream artifact, a signature or
// checksum file, a keyring, or the recipe itself.
type Dependency struct {
	URI         string            `json:"uri"`
	Digest      map[string]string `json:"digest"`
	Annotations map[string]any    `json:"annotations,omitempty"`
}

// Statement is the in-toto Statement with its SLSA provenance predicate.
type Statement struct {
	Type          string    `json:"_type"`
	Subject       []Subject `json:"subject"`
	PredicateType string    `json:"predicateType"`
	Predicate     Predicate `json:"predicate"`
}

type Predicate struct {
	BuildDefinition BuildDefinition `json:"buildDefinition"`
	RunDetails      RunDetails      `json:"runDetails"`
}

type BuildDefinition struct {
	BuildType            string         `json:"buildType"`
	ExternalParameters   map[string]any `json:"externalParameters"`
	InternalParameters   map[string]any `json:"internalParameters,omitempty"`
	ResolvedDependencies []Dependency   `json:"resolvedDependencies"`
}

type RunDetails struct {
	Builder  Builder  `json:"builder"`
	Metadata Metadata `json:"metadata"`
}

type Builder struct {
	ID      string            `json:"id"`
	Version map[string]string `json:"version,omitempty"`
}

// Metadata carries no start/finish time on purpose (reproducibility); the
// invocation id names the recipe, version and architecture.
type Metadata struct {
	InvocationID string `json:"invocationId"`
}

// Input describes one verified input for New.
type Input struct {
	URI     string
	Digests digest.Set
	// VerifiedBy lists how the input was trusted, e.g. "pinned-digest",
	// "openpgp:<primary fingerprint>", "checksum-file:<url>".
	VerifiedBy []string
}

// Build is what New needs to know about one build.
type Build struct {
	Recipe          string // recipe name
	RecipeDigest    digest.Set
	Architecture    string
	DebianVersion   string
	Component       string // apt component the recipe publishes to ("" = none given)
	Suite           string // apt suite the recipe publishes to ("" = the repository's)
	SourceDateEpoch time.Time
	UpdebVersion    string
	Outputs         map[string]digest.Set // output file name -> digests
	Inputs          []Input
}

func digestMap(s digest.Set) map[string]string {
	m := make(map[string]string, len(s))
	for a, v := range s {
		m[string(a)] = v
	}
	return m
}

// New returns the statement for b, with subjects and dependencies sorted.
func New(b Build) *Statement {
	st := &Statement{Type: StatementType, PredicateType: PredicateType}
	names := make([]string, 0, len(b.Outputs))
	for n := range b.Outputs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		st.Subject = append(st.Subject, Subject{Name: n, Digest: digestMap(b.Outputs[n])})
	}
	deps := make([]Dependency, 0, len(b.Inputs))
	for _, in := range b.Inputs {
		d := Dependency{URI: in.URI, Digest: digestMap(in.Digests)}
		if len(in.VerifiedBy) > 0 {
			v := append([]string(nil), in.VerifiedBy...)
			sort.Strings(v)
			d.Annotations = map[string]any{"verifiedBy": v}
		}
		deps = append(deps, d)
	}
	sort.SliceStable(deps, func(i, j int) bool { return deps[i].URI < deps[j].URI })
	st.Predicate = Predicate{
		BuildDefinition: BuildDefinition{
			BuildType: BuildType,
			ExternalParameters: map[string]any{
				"recipe":        b.Recipe,
				"architecture":  b.Architecture,
				"debianVersion": b.DebianVersion,
			},
			InternalParameters: map[string]any{
				"sourceDateEpoch": b.SourceDateEpoch.Unix(),
			},
			ResolvedDependencies: deps,
		},
		RunDetails: RunDetails{
			Builder:  Builder{ID: BuilderID, Version: map[string]string{"updeb": b.UpdebVersion}},
			Metadata: Metadata{InvocationID: fmt.Sprintf("%s/%s/%s", b.Recipe, b.DebianVersion, b.Architecture)},
		},
	}
	for k, v := range map[string]string{"component": b.Component, "suite": b.Suite} {
		if v != "" {
			st.Predicate.BuildDefinition.ExternalParameters[k] = v
		}
	}
	if len(b.RecipeDigest) > 0 {
		st.Predicate.BuildDefinition.ExternalParameters["recipeDigest"] = digestMap(b.RecipeDigest)
	}
	return st
}

// Marshal returns the statement as indented JSON with a final newline.
// encoding/json sorts map keys, so equal statements give equal bytes.
func (s *Statement) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
