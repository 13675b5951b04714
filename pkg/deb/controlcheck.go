package deb

import (
	"errors"
	"fmt"
	"strings"

	"github.com/updeb/updeb/pkg/control"
)

// The checks a control file read from a .deb must pass: what dpkg's field
// parsers refuse (lib/dpkg/fields.c: names, versions, architectures,
// relationship fields, booleans, Multi-Arch), with dpkg's warnings treated as
// errors, plus what a repository index needs (the fields Write requires, no
// field the index or dpkg's status database owns). One package must never
// be able to make apt refuse the index it is published in.

// relationFields are parsed by dpkg's f_dependency; noAlternatives may not
// use "|", and Provides may only name exact versions.
var (
	relationFields = []string{"Pre-Depends", "Depends", "Recommends", "Suggests", "Enhances", "Breaks",
		"Conflicts", "Replaces", "Provides"}
	noAlternatives = map[string]bool{"Breaks": true, "Conflicts": true, "Provides": true, "Replaces": true}
)

// reservedFields belong to the repository index (apt-ftparchive adds them)
// or to dpkg's status database; a package's control file must not carry them.
var reservedFields = []string{"Filename", "Size", "MD5sum", "SHA1", "SHA256", "SHA512", "MSDOS-Filename",
	"Status", "Config-Version", "Conffiles", "Triggers-Pending", "Triggers-Awaited"}

// singleLineFields are "simple" fields (policy 5.1): one line only.
var singleLineFields = []string{"Package", "Version", "Architecture", "Maintainer", "Section", "Priority",
	"Essential", "Protected", "Multi-Arch", "Installed-Size", "Homepage", "Source"}

// maxFileName is the longest file name Linux file systems take: the
// repository stores name_version_arch.deb in a folder named after the
// source package.
const maxFileName = 255

// shorten keeps messages about huge values readable.
func shorten(s string) string {
	if len(s) > 80 {
		return s[:60] + fmt.Sprintf("...(%d bytes)", len(s))
	}
	return s
}

// checkControl returns every problem of a control paragraph read from a
// .deb, each naming its field.
func checkControl(p control.Paragraph) []error {
	var errs []error
	add := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("control field %s: %s", field, fmt.Sprintf(format, args...)))
	}
	for _, name := range []string{"Package", "Version", "Architecture", "Maintainer", "Description"} {
		if v, ok := p.Get(name); !ok || strings.TrimSpace(strings.SplitN(v, "\n", 2)[0]) == "" {
			add(name, "required (Debian policy 5.3), found %q", shorten(v))
		}
	}
	for _, name := range reservedFields {
		if _, ok := p.Get(name); ok {
			add(name, "belongs to the repository index or dpkg's status database, not to a package")
		}
	}
	for _, name := range singleLineFields {
		if v, ok := p.Get(name); ok && strings.Contains(v, "\n") {
			add(name, "must be a single line, found %q", shorten(v))
		}
	}
	if v, ok := p.Get("Package"); ok && v != "" && !validPackageName(v) {
		add("Package", "%q is not a package name: expected [a-z0-9][a-z0-9+.-]+ (lowercase, at least 2 characters)", shorten(v))
	}
	if v, ok := p.Get("Version"); ok && v != "" {
		if err := checkVersionSyntax(v); err != nil {
			add("Version", "%q is not a Debian version: %v", shorten(v), err)
		}
	}
	if name, version, arch := p.Value("Package"), p.Value("Version"), p.Value("Architecture"); len(name)+len(version)+len(arch)+len("__.deb") > maxFileName {
		// The pool file is name_version_arch.deb (without the epoch, but
		// counted here to stay simple).
		add("Package", "%q, version %q and architecture %q make a file name longer than %d bytes", shorten(name), shorten(version), shorten(arch), maxFileName)
	}
	if v, ok := p.Get("Source"); ok {
		src, rest, _ := strings.Cut(strings.TrimSpace(v), " ")
		if !validPackageName(src) || len(src) > maxFileName {
			add("Source", "%q is not a source package name", shorten(v))
		} else if rest = strings.TrimSpace(rest); rest != "" && (rest[0] != '(' || rest[len(rest)-1] != ')' || checkVersionSyntax(strings.TrimSpace(rest[1:len(rest)-1])) != nil) {
			add("Source", "%q: expected \"name\" or \"name (version)\"", shorten(v))
		}
	}
	arch, _ := p.Get("Architecture")
	if arch != "" && !validArchitecture(arch) {
		add("Architecture", "%q is not a Debian architecture: expected all or a name like amd64, arm64 ([a-z0-9-])", shorten(arch))
	}
	switch v, _ := p.Get("Multi-Arch"); v {
	case "", "foreign", "allowed", "no":
	case "same":
		if arch == "all" {
			add("Multi-Arch", "same is not allowed with Architecture: all (dpkg refuses it)")
		}
	default:
		add("Multi-Arch", "%q: expected same, foreign, allowed or no", shorten(v))
	}
	for _, name := range []string{"Essential", "Protected"} {
		if v, ok := p.Get(name); ok && v != "yes" && v != "no" {
			add(name, "%q: expected yes or no", shorten(v))
		}
	}
	if v, ok := p.Get("Installed-Size"); ok && (v == "" || strings.Trim(v, "0123456789") != "" || len(v) > 15) {
		add("Installed-Size", "%q: expected a number of KiB", shorten(v))
	}
	for _, name := range []string{"Priority", "Section"} {
		if v, ok := p.Get(name); ok && (v == "" || strings.ContainsAny(v, " \t")) {
			add(name, "%q: expected one word", shorten(v))
		}
	}
	for _, name := range relationFields {
		if v, ok := p.Get(name); ok {
			if err := checkRelations(name, v); err != nil {
				add(name, "%v", err)
			}
		}
	}
	return errs
}

// checkRelations checks a relationship field's value as dpkg's f_dependency
// parses it, treating its warnings as errors: comma-separated groups of
// "|"-separated alternatives, each a package name, an optional
// ":architecture" and an optional "(op version)" with op one of << <= = >=
// >>. An empty value is allowed (dpkg ignores it); an empty element is not.
func checkRelations(field, value string) error {
	value = strings.TrimSpace(value)
	if value == "" {
		return nil
	}
	for _, group := range strings.Split(value, ",") {
		alts := strings.Split(group, "|")
		if len(alts) > 1 && noAlternatives[field] {
			return fmt.Errorf("alternatives (|) are not allowed, found %q", shorten(strings.TrimSpace(group)))
		}
		for _, rel := range alts {
			if err := checkRelation(field, strings.TrimSpace(rel)); err != nil {
				return fmt.Errorf("%q: %w", shorten(strings.TrimSpace(rel)), err)
			}
		}
	}
	return nil
}

func checkRelation(field, rel string) error {
	if rel == "" {
		return errors.New("empty relation: expected a package name")
	}
	name, rest := rel, ""
	if i := strings.IndexAny(rel, " \t\n("); i >= 0 {
		name, rest = rel[:i], strings.TrimSpace(rel[i:])
	}
	name, arch, qualified := strings.Cut(name, ":")
	if !validPackageName(name) {
		return fmt.Errorf("%q is not a package name: expected [a-z0-9][a-z0-9+.-]+", shorten(name))
	}
	if qualified && !validArchitecture(arch) && arch != "any" {
		return fmt.Errorf("architecture qualifier %q: expected any, native or an architecture name", shorten(arch))
	}
	if rest == "" {
		return nil
	}
	if rest[0] != '(' || rest[len(rest)-1] != ')' {
		return fmt.Errorf("expected \"name (op version)\" after %q, found %q", shorten(name), shorten(rest))
	}
	inner := strings.TrimSpace(rest[1 : len(rest)-1])
	op := ""
	for _, o := range []string{"<<", "<=", ">=", ">>", "="} {
		if strings.HasPrefix(inner, o) {
			op = o
			break
		}
	}
	if op == "" {
		return fmt.Errorf("version relation %q: expected one of << <= = >= >> before the version", shorten(inner))
	}
	if field == "Provides" && op != "=" {
		return fmt.Errorf("only an exact version (=) may be provided, found %s", op)
	}
	version := strings.TrimSpace(inner[len(op):])
	if version == "" || strings.ContainsAny(version, " \t\n()") {
		return fmt.Errorf("version %q: expected one version after %s", shorten(version), op)
	}
	if err := checkVersionSyntax(version); err != nil {
		return fmt.Errorf("version %q: %w", shorten(version), err)
	}
	return nil
}
