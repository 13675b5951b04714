package deb

import (
	"errors"
	"fmt"
	"strings"

	"github.com/updeb/updeb/pkg/debversion"
)

// RelationFields are the relationship fields of a binary package, parsed by
// dpkg's f_dependency (lib/dpkg/fields.c) and by ParseRelations.
var RelationFields = []string{"Pre-Depends", "Depends", "Recommends", "Suggests", "Enhances", "Breaks",
	"Conflicts", "Replaces", "Provides"}

// noAlternatives may not use "|"; Provides may also only name exact versions.
var noAlternatives = map[string]bool{"Breaks": true, "Conflicts": true, "Provides": true, "Replaces": true}

// Relation is one alternative of a relationship field: a package name, an
// optional architecture qualifier (libc6:any) and an optional version
// relation (Op one of << <= = >= >>, with Version).
type Relation struct {
	Name, Arch, Op, Version string
}

// ErrRelationSyntax is wrapped by ParseRelations' errors about an
// alternative that is not NAME[:ARCH] [(OP VERSION)] at all, as opposed to one
// that breaks a rule of its field or of Debian versions.
var ErrRelationSyntax = errors.New("not NAME[:ARCH] [(OP VERSION)]")

// relationError is a ParseRelations error; syntax marks ErrRelationSyntax.
type relationError struct {
	msg    string
	syntax bool
}

func (e *relationError) Error() string        { return e.msg }
func (e *relationError) Is(target error) bool { return e.syntax && target == ErrRelationSyntax }

func syntaxErrorf(format string, args ...any) error {
	return &relationError{msg: fmt.Sprintf(format, args...), syntax: true}
}

// ParseRelations parses the value of relationship field (Depends, Provides,
// ...; see RelationFields) as dpkg's f_dependency parses it, treating its
// warnings as errors: comma-separated groups of "|"-separated alternatives,
// each a package name (PackageNamePattern), an optional ":architecture" (any
// or an architecture name; not native, which only Build-Depends know) and an
// optional "(op version)" with op one of << <= = >= >>. Breaks, Conflicts,
// Provides and Replaces take no alternatives, and Provides only exact (=)
// versions. An empty value is no relation (dpkg ignores it); an empty element
// is an error. Architecture restriction lists ("[amd64]") belong to source
// packages and are refused. This is the one grammar of relations in updeb:
// Write and Inspect check control files with it, and the recipe loader the
// relations a recipe writes.
func ParseRelations(field, value string) ([][]Relation, error) {
	value = trimSpace(value)
	if value == "" {
		return nil, nil
	}
	var groups [][]Relation
	for _, group := range strings.Split(value, ",") {
		alts := strings.Split(group, "|")
		if len(alts) > 1 && noAlternatives[field] {
			return nil, fmt.Errorf("alternatives (|) are not allowed, found %q", shorten(trimSpace(group)))
		}
		var rels []Relation
		for _, alt := range alts {
			r, err := parseRelation(field, trimSpace(alt))
			if err != nil {
				return nil, fmt.Errorf("%q: %w", shorten(trimSpace(alt)), err)
			}
			rels = append(rels, r)
		}
		groups = append(groups, rels)
	}
	return groups, nil
}

// trimSpace trims the white space dpkg skips around the parts of a relation
// (C isspace: ASCII only). strings.TrimSpace also trims Unicode spaces such
// as U+00A0, which dpkg reads as part of the name or version and refuses.
func trimSpace(s string) string { return strings.Trim(s, " \t\n\v\f\r") }

func parseRelation(field, rel string) (Relation, error) {
	if rel == "" {
		return Relation{}, syntaxErrorf("empty relation: expected a package name")
	}
	name, rest := rel, ""
	if i := strings.IndexAny(rel, " \t\n("); i >= 0 {
		name, rest = rel[:i], trimSpace(rel[i:])
	}
	name, arch, qualified := strings.Cut(name, ":")
	r := Relation{Name: name, Arch: arch}
	if !ValidPackageName(name) {
		return r, syntaxErrorf("%q is not a package name: expected %s", shorten(name), PackageNamePattern)
	}
	if qualified && !ValidArchitecture(arch) && arch != "any" {
		return r, syntaxErrorf("architecture qualifier %q: expected any or an architecture name", shorten(arch))
	}
	if arch == "native" {
		// dpkg-gencontrol's parser (Dpkg::Deps) refuses it outside
		// Build-Depends; dpkg reads it as an architecture of that name,
		// which no package has, and never configures the package.
		return r, fmt.Errorf("architecture qualifier native: belongs to a source package's Build-Depends; in a binary package dpkg reads it as an architecture called \"native\", which no package has, so the relation is never satisfied: write :any or no qualifier")
	}
	if rest == "" {
		return r, nil
	}
	if rest[0] != '(' || rest[len(rest)-1] != ')' {
		return r, syntaxErrorf("expected \"name (op version)\" after %q, found %q", shorten(name), shorten(rest))
	}
	inner := trimSpace(rest[1 : len(rest)-1])
	for _, o := range []string{"<<", "<=", ">=", ">>", "="} {
		if strings.HasPrefix(inner, o) {
			r.Op = o
			break
		}
	}
	if r.Op == "" {
		return r, syntaxErrorf("version relation %q: expected one of << <= = >= >> before the version", shorten(inner))
	}
	if field == "Provides" && r.Op != "=" {
		return r, fmt.Errorf("only an exact version (=) may be provided, found %s", r.Op)
	}
	r.Version = trimSpace(inner[len(r.Op):])
	if r.Version == "" || strings.ContainsAny(r.Version, " \t\n()") {
		return r, syntaxErrorf("version %q: expected one version after %s", shorten(r.Version), r.Op)
	}
	if err := checkVersionSyntax(r.Version); err != nil {
		return r, fmt.Errorf("version %q: %w", shorten(r.Version), err)
	}
	return r, nil
}

// SatisfiedBy reports whether version satisfies r's version relation, as
// dpkg reads it (no relation: every version). r.Name is not compared.
func (r Relation) SatisfiedBy(version string) (bool, error) {
	if r.Op == "" {
		return true, nil
	}
	c, err := debversion.CompareStrings(version, r.Version)
	if err != nil {
		return false, err
	}
	switch r.Op {
	case "<<":
		return c < 0, nil
	case "<=":
		return c <= 0, nil
	case "=":
		return c == 0, nil
	case ">=":
		return c >= 0, nil
	case ">>":
		return c > 0, nil
	}
	return false, fmt.Errorf("version relation %q: expected one of << <= = >= >>", r.Op)
}
