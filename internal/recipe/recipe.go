// Package recipe loads updeb recipes (recipes/<name>.yaml) strictly and turns
// one recipe and one Debian architecture into a Resolved recipe: fully rendered, concrete
// build instructions (URLs, pinned digests, trust anchors, package contents,
// generated copyright, changelog, lintian overrides and maintainer scripts).
//
// Loading reports every problem it finds, each as "FILE:LINE:COL: message",
// sorted by position, in an *Error that wraps ErrInvalid. Resolve does no I/O;
// Load does the file-existence checks (recipe-local files, keyrings).
// The format is documented field by field in recipes/README.md.
package recipe

import (
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/updeb/updeb/internal/yamlfile"
	"github.com/updeb/updeb/pkg/digest"
)

// ErrInvalid is wrapped by every error that says a recipe (or the options a
// recipe is resolved with) is invalid. The CLI maps it to exit code 2.
var ErrInvalid = errors.New("recipe: invalid recipe")

// ErrNoMaintainer is wrapped (besides ErrInvalid) when resolving needs a
// maintainer and neither the recipe nor ResolveOptions.DefaultMaintainer names
// one: the site's configuration lacks it, not the recipe.
var ErrNoMaintainer = errors.New("recipe: no maintainer")

// Finding is one problem in a recipe file, with the position it was found at.
type Finding = yamlfile.Finding

// Error lists every finding of one load (or resolve), sorted by position.
type Error struct {
	Findings []Finding
}

func (e *Error) Error() string { return (&yamlfile.Error{Findings: e.Findings}).Error() }

// Unwrap makes errors.Is(err, ErrInvalid) true, and errors.Is(err,
// ErrNoMaintainer) when a finding is that.
func (e *Error) Unwrap() []error {
	out := []error{ErrInvalid}
	for _, f := range e.Findings {
		if f.Cause != nil {
			out = append(out, f.Cause)
		}
	}
	return out
}

// Recipe is a loaded, validated recipe. Strings that are templates (URLs,
// package names, relations, paths) are kept unrendered; Resolved renders them.
type Recipe struct {
	Path        string    // the recipe file, as given to Load
	Content     []byte    // the recipe file's bytes as Load read them (its provenance record names their digest)
	Root        string    // absolute project root (the folder that holds recipes/): keyrings are relative to it
	FilesDir    string    // absolute folder of the recipe's own files (recipes/<file base name>/ unless files-dir says otherwise)
	Name        string    // source name
	Version     string    // upstream version as used in URLs ({{.Version}})
	Revision    string    // Debian revision; "" means none (then changelog.gz instead of changelog.Debian.gz)
	Epoch       int       // Debian epoch, 0 for none
	ReleaseDate time.Time // SOURCE_DATE_EPOCH of every build of this version (UTC)
	// EndOfLife, when set, marks the recipe's version line as past upstream
	// support since that day (updeb plan --apply writes it): the recipe still
	// builds, but updeb plan lists it as end-of-life and updeb compat refuses
	// a release set that deploys its version.
	EndOfLife   time.Time
	Homepage    string
	License     string // SPDX identifier
	LicenseText string // full license text, required when License has no file in /usr/share/common-licenses
	Copyright   string // copyright holder(s)
	Maintainer  string // "Name <email>", or "" for the site default (ResolveOptions)

	Architectures []Arch // in recipe order
	Repo          Repo
	Sources       []Source
	Packages      []Package
	Watch         *Watch            // validated only; used by updeb outdated/bump
	Requires      map[string]string // component -> version range, validated only; used by updeb compat
	// Warnings are what Load found worth a look without refusing the recipe
	// (a world-writable file, an owner dpkg may not know at unpack time),
	// sorted by position; updeb lint prints them.
	Warnings []Finding

	node     *yaml.Node // the document's top mapping, for positions
	dir      string     // absolute folder of the recipe file (Load only)
	filesRel string     // FilesDir relative to dir, slash-separated (see FilesRel)
}

// FilesRel is the folder of the recipe's own files relative to the recipe
// file's folder, slash-separated: files-dir, or else the file's name without
// its extension. Parse sets it too (it needs no file system).
func (r *Recipe) FilesRel() string { return r.filesRel }

// Arch maps a Debian architecture to the upstream's name for it ({{.Arch}}).
type Arch struct {
	Debian   string
	Upstream string
}

// Repo says where the packages are published; both fields are templates.
type Repo struct {
	Component string // default "main"
	Suite     string // "" means the repository's default suite
}

// Source is one upstream artifact per architecture.
type Source struct {
	Name string
	URL  string // template
	Kind string // tar.gz, tgz, tar.xz, tar, zip or raw
	// KindFromURL says the recipe wrote no kind: Kind is the URL's
	// suffix's, or raw when no suffix names an archive updeb reads.
	KindFromURL bool
	Digests     map[string]map[digest.Algorithm]string // Debian arch -> algorithm -> hex (lower case)
	Signature   Signature
	Checksums   *Checksums

	node        *yaml.Node
	digestNodes map[digest.Algorithm]*yaml.Node
}

// Signature says what vouches for a source besides its pin: an OpenPGP
// detached signature (URL + keyring), Sigstore material (Sigstore), or an
// explicit statement that there is none, with the reason.
type Signature struct {
	URL      string    // template
	Keyring  string    // relative to Root
	Signers  []string  // allowed primary-key fingerprints (40 upper-case hex); empty means any key in the keyring
	Sigstore *Sigstore // set for the Sigstore forms
	None     string    // the reason there is no signature, when URL is "" and Sigstore nil
}

// Sigstore is a Sigstore signature over the source: one form of material
// (SigURL + CertURL, BundleURL or GitHubAttestations), and who must have
// signed it: Identity or IdentityRegexp, under Issuer; or, for a bundle
// signed with a long-lived key, PublicKey, the key pinned. There is no "any
// identity" form.
type Sigstore struct {
	SigURL             string // template: cosign's detached FILE.sig
	CertURL            string // template: cosign's FILE.cert (the Fulcio leaf certificate)
	BundleURL          string // template: a Sigstore bundle (.sigstore.json, .bundle)
	GitHubAttestations string // OWNER/REPO whose GitHub artifact attestations vouch for the source
	Identity           string // template: the certificate's exact SAN
	IdentityRegexp     string // a Go regexp anchored with ^ and $ the SAN must match
	Issuer             string // the OIDC issuer URL
	SourceRepository   string // the repository URL the certificate's Source Repository URI must be (the caller of a reusable workflow)
	PublicKey          string // a PEM public key file in the recipe's folder (relative to FilesDir), for a key-signed bundle
	// PredicateTypes are the in-toto predicate types an attestation (a
	// bundle's or GitHub's DSSE statement) counts by; none: SLSA provenance.
	PredicateTypes []string
}

// Checksums is an upstream checksum file cross-checked against the pins.
type Checksums struct {
	URL         string // template
	Name        string // template: the name to look up; "" means the base name of the source URL, percent-decoded
	Clearsigned *Keyring
}

// Keyring is a keyring file plus an optional signer allow-list.
type Keyring struct {
	Keyring string
	Signers []string
}

// Package is one binary package the recipe builds.
type Package struct {
	Name         string // template
	Architecture string // "any" or "all"
	Summary      string // template
	Description  string // template
	Section      string
	Priority     string
	Relations    map[string][]string // control field name (Depends, ...) -> templates
	Files        []File
	Directories  []Directory
	Symlinks     []Symlink
	Hardlinks    []Symlink // Dest is a hardlink to Target, a file of the package
	SystemUser   *SystemUser
	SystemdUnits []string
	Alternatives []Alternative
	Lintian      []string // extra lintian override tags
	Dynamic      bool
	// Scripts are the package's own maintainer-script fragments: script
	// name (preinst, postinst, prerm, postrm) -> file in the recipe's
	// folder, merged with what updeb generates (MergeScripts).
	Scripts map[string]string
	// Triggers are the lines of DEBIAN/triggers: "interest NAME",
	// "activate-noawait NAME", ... (deb.CheckTrigger's grammar).
	Triggers []string

	node *yaml.Node
}

// Access is what a file or directory mapping says about its mode and owner.
type Access struct {
	Mode  uint32 // permission bits and 04000/02000/01000; 0 means the default for the path
	Owner string // user name; "" means root
	Group string // group name; "" means root
	// SpecialBits is the reason the recipe gives for a setuid, setgid or
	// sticky bit in Mode: required with one, refused without.
	SpecialBits string
}

// Directory is a directory the package creates (empty unless files go
// into it), with its own mode and owner.
type Directory struct {
	Path string // template
	Access
	node *yaml.Node
}

// File maps a file from a source (Source, Path) or from the recipe's own
// folder (Local) to a destination in the package.
type File struct {
	Source string
	Path   string // template; inside the archive; "" for raw sources
	Local  string // template; relative to the recipe's files folder
	Dest   string // template
	Access
	Conffile *bool // nil means: true under /etc/

	node *yaml.Node
}

// Symlink is a symbolic link Dest -> Target (or, in Package.Hardlinks, a
// hardlink); both are templates.
type Symlink struct {
	Dest, Target string
	node         *yaml.Node
}

// SystemUser is a system account the postinst creates with adduser --system.
type SystemUser struct {
	Name  string
	Home  string // "" means /nonexistent, not created
	Group bool   // also create a group of the same name (default true)
}

// Alternative is an update-alternatives link group member.
type Alternative struct {
	Name, Link, Path string // templates
	Priority         int
	node             *yaml.Node
}

// Watch says how to find new upstream releases.
type Watch struct {
	GitHub      string // owner/repo
	TagPrefix   string
	Track       string
	Prereleases bool
	URL         string
	Pattern     string
}

// relationFields are the relation fields a package may set, in dpkg's order.
var relationFields = []struct{ key, field string }{
	{"pre-depends", "Pre-Depends"},
	{"depends", "Depends"},
	{"recommends", "Recommends"},
	{"suggests", "Suggests"},
	{"conflicts", "Conflicts"},
	{"breaks", "Breaks"},
	{"replaces", "Replaces"},
	{"provides", "Provides"},
}

var seriesSuffixRE = regexp.MustCompile(`^(.+)-[0-9]+\.[0-9]+$`)

// Component is the name updeb compat, release sets and the end-of-life data
// know a recipe named name by: the name without the "-MAJOR.MINOR" suffix
// that versioned recipe series add (kubernetes-1.35 -> kubernetes).
func Component(name string) string {
	if m := seriesSuffixRE.FindStringSubmatch(name); m != nil {
		return m[1]
	}
	return name
}

// Ref is the name the recipe goes by on the command line and in release
// sets (recipe:NAME): its file's name without the extension
// (recipes/kubernetes-1.36.yaml -> kubernetes-1.36).
func (r *Recipe) Ref() string {
	return strings.TrimSuffix(filepath.Base(r.Path), filepath.Ext(r.Path))
}
