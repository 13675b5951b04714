package deb

import (
	"errors"
	"fmt"
	"strings"

	"github.com/updeb/updeb/pkg/control"
	"github.com/updeb/updeb/pkg/utf8cut"
)

// The checks a control file read from a .deb must pass: what dpkg's field
// parsers refuse (lib/dpkg/fields.c: names, versions, architectures,
// relationship fields, booleans, Multi-Arch), with dpkg's warnings treated as
// errors, plus what a repository index needs (the fields Write requires, no
// field the index or dpkg's status database owns). One package must never
// be able to make apt refuse the index it is published in.

// reservedFields belong to the repository index (apt-ftparchive adds them)
// or to dpkg's status database; a package's control file must not carry them.
var reservedFields = []string{"Filename", "Size", "MD5sum", "SHA1", "SHA256", "SHA512", "MSDOS-Filename",
	"Status", "Config-Version", "Conffiles", "Triggers-Pending", "Triggers-Awaited"}

// revisionFields are obsolete fields dpkg still reads (with a warning) as the
// package's Debian revision, appended to its Version.
var revisionFields = []string{"Revision", "Package-Revision", "Package_Revision"}

// singleLineFields are "simple" fields (policy 5.1): one line only.
var singleLineFields = []string{"Package", "Version", "Architecture", "Maintainer", "Section", "Priority",
	"Essential", "Protected", "Multi-Arch", "Installed-Size", "Homepage", "Source"}

// dpkgPriorities are the priorities dpkg knows (lib/dpkg/parsehelp.c). It
// takes a Priority that starts with one, in any case, for it, and refuses
// the package when more follows; another word it keeps as it is.
var dpkgPriorities = []string{"required", "important", "standard", "optional", "extra"}

// MaxFileName is the longest file name Linux file systems take: the
// repository stores name_version_arch.deb in a folder named after the
// source package.
const MaxFileName = 255

// shorten keeps messages about huge values readable.
func shorten(s string) string { return utf8cut.Shorten(s, 80, 60) }

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
	for _, name := range revisionFields {
		if v, ok := p.Get(name); ok && v != "" {
			add(name, "obsolete, and dpkg still reads it: it installs version %s as %s-%s while the index lists %s; write the revision in Version", shorten(p.Value("Version")), shorten(p.Value("Version")), shorten(v), shorten(p.Value("Version")))
		}
	}
	for _, name := range singleLineFields {
		if v, ok := p.Get(name); ok && strings.Contains(v, "\n") {
			add(name, "must be a single line, found %q", shorten(v))
		}
	}
	addErr := func(field string, err error) {
		if err != nil {
			add(field, "%v", err)
		}
	}
	if v, ok := p.Get("Package"); ok && v != "" {
		addErr("Package", checkPackageField(v))
	}
	if v, ok := p.Get("Version"); ok && v != "" {
		addErr("Version", checkVersionField(v))
	}
	addErr("Package", CheckFileNameLength(p.Value("Package"), p.Value("Version"), p.Value("Architecture")))
	if v, ok := p.Get("Source"); ok {
		src, rest, _ := strings.Cut(strings.TrimSpace(v), " ")
		if !ValidPackageName(src) || len(src) > MaxFileName {
			add("Source", "%q is not a source package name", shorten(v))
		} else if rest = strings.TrimSpace(rest); rest != "" && (rest[0] != '(' || rest[len(rest)-1] != ')' || checkVersionSyntax(strings.TrimSpace(rest[1:len(rest)-1])) != nil) {
			add("Source", "%q: expected \"name\" or \"name (version)\"", shorten(v))
		}
	}
	arch, _ := p.Get("Architecture")
	if arch != "" {
		addErr("Architecture", checkArchitectureField(arch))
	}
	multiArch, _ := p.Get("Multi-Arch")
	addErr("Multi-Arch", checkMultiArchField(multiArch, arch))
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
	if v, ok := p.Get("Priority"); ok {
		for _, known := range dpkgPriorities {
			if len(v) > len(known) && strings.EqualFold(v[:len(known)], known) {
				add("Priority", "%q: dpkg reads the priority %s and refuses what follows it (\"has trailing junk\")", shorten(v), known)
			}
		}
	}
	for _, name := range RelationFields {
		if v, ok := p.Get(name); ok {
			_, err := ParseRelations(name, v)
			addErr(name, err)
		}
	}
	return errs
}

// CheckFileNameLength returns an error when a package's name, version and
// architecture make a pool file name (name_version_arch.deb) longer than a
// file name may be: the epoch is counted too, to stay simple. Write and
// Inspect refuse such a package, and the recipe loader such a recipe.
func CheckFileNameLength(name, version, arch string) error {
	if len(name)+len(version)+len(arch)+len("__.deb") > MaxFileName {
		return fmt.Errorf("%q, version %q and architecture %q make a file name longer than %d bytes", shorten(name), shorten(version), shorten(arch), MaxFileName)
	}
	return nil
}

// The rules of single fields, shared by Write's validation of a Control and
// checkControl's of a control file read from a .deb.

func checkPackageField(v string) error {
	if !ValidPackageName(v) {
		return fmt.Errorf("%q is not a package name: expected %s (lowercase, at least 2 characters)", shorten(v), PackageNamePattern)
	}
	return nil
}

func checkVersionField(v string) error {
	if err := checkVersionSyntax(v); err != nil {
		return fmt.Errorf("%q is not a Debian version: %v", shorten(v), err)
	}
	return nil
}

func checkArchitectureField(v string) error {
	if !ValidArchitecture(v) {
		return fmt.Errorf("%q is not a Debian architecture: expected all or a name like amd64, arm64 ([a-z0-9-])", shorten(v))
	}
	return nil
}

// checkMultiArchField checks Multi-Arch's value ("" for none) on a package
// of architecture arch.
func checkMultiArchField(v, arch string) error {
	switch v {
	case "", "foreign", "allowed", "no":
	case "same":
		if arch == "all" {
			return errors.New("same is not allowed with Architecture: all (dpkg refuses it)")
		}
	default:
		return fmt.Errorf("%q: expected same, foreign, allowed or no", shorten(v))
	}
	return nil
}
