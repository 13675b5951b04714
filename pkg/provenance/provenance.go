// Package provenance writes the record of where every byte of a package came
// from: an in-toto Statement (v1) with a SLSA provenance v1 predicate. The record
// is reproducible like the package itself: it holds no wall-clock time, only the
// build's SOURCE_DATE_EPOCH.
//
// The contract: New is a pure function of its Build, and Marshal gives the
// same bytes for the same Build (subjects sorted by name, local inputs by
// name before downloads by URI, each input's verifiedBy sorted, JSON map keys
// sorted); the reader of a record finds how each input was trusted in its
// "verifiedBy" annotation, and what a local input is in its "role".
//
// A record travels as the payload of a DSSE envelope (package dsse, payload
// type application/vnd.in-toto+json): Statement.Envelope signs it, Verify
// checks an envelope's OpenPGP signature (a binary detached signature over
// the PAE bytes, by a key of a keyring, under pkg/verify/openpgp's policy) and that
// the record is about the package at hand.
package provenance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
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

// Dependency is one input: an upstream artifact, a signature or checksum
// file (each with a URI), or a local file (with a Name): the recipe, a file
// from the recipe's folder, a keyring.
type Dependency struct {
	URI         string            `json:"uri,omitempty"`
	Name        string            `json:"name,omitempty"`
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

// Input describes one input for New: a download (URI) or a local file
// (Name, its slash-separated path relative to the project).
type Input struct {
	URI     string
	Name    string
	Digests digest.Set
	// VerifiedBy lists how the input was trusted, e.g. "pinned-digest",
	// "openpgp:<primary fingerprint>", "checksum-file:<url>".
	VerifiedBy []string
	// Annotations are other facts about the input, e.g. "role": "recipe".
	Annotations map[string]string
}

// Roles of local inputs (the "role" annotation), and the recipe's git facts.
const (
	AnnotationRole      = "role"
	RoleRecipe          = "recipe"          // the recipe file
	RoleRecipeFile      = "recipe-file"     // a file from the recipe's folder (files-dir)
	RoleScriptFragment  = "script-fragment" // a maintainer-script fragment from the recipe's folder
	RoleKeyring         = "keyring"         // a keyring a signature was verified with
	RoleSigstoreKey     = "sigstore-key"    // a pinned public key a Sigstore bundle was verified with
	AnnotationGitCommit = "gitCommit"       // the commit whose tree holds the recipe's exact bytes
	// AnnotationGitState is, for a recipe in a git checkout, how the file
	// compares with the checkout's HEAD commit: "clean" (then gitCommit names
	// the commit), "modified", "untracked" or "unreadable" (updeb could not
	// read the repository); absent outside a git checkout.
	AnnotationGitState = "gitState"
	// AnnotationGitPath is the recipe's path inside its git repository
	// (slash-separated), so that `git show COMMIT:PATH` gives its bytes.
	AnnotationGitPath = "gitPath"
)

// Build is what New needs to know about one build.
type Build struct {
	Recipe          string // recipe name
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
	names := slices.Sorted(maps.Keys(b.Outputs))
	for _, n := range names {
		st.Subject = append(st.Subject, Subject{Name: n, Digest: digestMap(b.Outputs[n])})
	}
	deps := make([]Dependency, 0, len(b.Inputs))
	for _, in := range b.Inputs {
		deps = append(deps, dependency(in))
	}
	sortDependencies(deps)
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
	return st
}

func dependency(in Input) Dependency {
	d := Dependency{URI: in.URI, Name: in.Name, Digest: digestMap(in.Digests)}
	if len(in.VerifiedBy) > 0 || len(in.Annotations) > 0 {
		d.Annotations = map[string]any{}
		for k, v := range in.Annotations {
			d.Annotations[k] = v
		}
		if len(in.VerifiedBy) > 0 {
			v := append([]string(nil), in.VerifiedBy...)
			sort.Strings(v)
			d.Annotations["verifiedBy"] = v
		}
	}
	return d
}

// sortDependencies orders downloads by URI after local files by name.
func sortDependencies(deps []Dependency) {
	sort.SliceStable(deps, func(i, j int) bool {
		if deps[i].URI != deps[j].URI {
			return deps[i].URI < deps[j].URI
		}
		return deps[i].Name < deps[j].Name
	})
}

// SetRecipe replaces the statement's recipe input (the dependency whose role
// is "recipe") with in: what a record written earlier needs when only the
// recipe's bytes outside the plan (comments) or its git commit changed.
func (s *Statement) SetRecipe(in Input) {
	bd := &s.Predicate.BuildDefinition
	deps := bd.ResolvedDependencies[:0]
	for _, d := range bd.ResolvedDependencies {
		if d.Annotations[AnnotationRole] != RoleRecipe {
			deps = append(deps, d)
		}
	}
	bd.ResolvedDependencies = append(deps, dependency(in))
	sortDependencies(bd.ResolvedDependencies)
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
