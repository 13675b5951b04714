package recipe

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"maps"
	"math"
	"net/url"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/updeb/updeb/internal/aptname"
	"github.com/updeb/updeb/pkg/control"
	"github.com/updeb/updeb/pkg/deb"
	"github.com/updeb/updeb/pkg/debversion"
	"github.com/updeb/updeb/pkg/digest"
	"go.yaml.in/yaml/v3"
)

// ProvenanceSuffix is appended to a package's file name for the provenance
// record the build writes beside it (NAME_VERSION_ARCH.deb.intoto.json).
const ProvenanceSuffix = ".intoto.json"

// ResolveOptions are the site settings resolving a recipe depends on (from the config).
type ResolveOptions struct {
	LocalSuffix       string // appended to the Debian version, e.g. "~wmf1": 3.18.4-1~wmf1
	DefaultMaintainer string // "Name <email>", used when the recipe names no maintainer
	// SourcesOnly resolves for fetching and verifying the sources, not for
	// building: no maintainer is asked for (the packages' may be empty).
	SourcesOnly bool
}

// Resolved is everything needed to build one recipe for one Debian architecture,
// fully rendered: no templates, no defaults left to apply.
type Resolved struct {
	Recipe          string    // source name
	Arch            string    // Debian architecture
	UpstreamArch    string    // the upstream's name for it
	UpstreamVersion string    // as in the recipe (and in URLs)
	DebianVersion   string    // [epoch:]upstream[-revision]local-suffix
	SourceDateEpoch time.Time // UTC; the release date
	Component       string    // apt component to publish to
	Suite           string    `json:",omitempty"` // "" means the repository's default suite
	Sources         []ResolvedSource
	Packages        []ResolvedPackage
}

// ResolvedSource is one artifact to fetch and how to trust it.
type ResolvedSource struct {
	Name              string
	URL               string
	Kind              string             // tar.gz, tgz, tar.xz, tar, zip or raw
	KindFromURL       bool               `json:"-"` // the recipe wrote no kind (Source.KindFromURL)
	Pinned            digest.Set         // at least one of sha256, sha512
	Signature         *ResolvedSignature `json:",omitempty"` // an OpenPGP signature
	Sigstore          *ResolvedSigstore  `json:",omitempty"` // Sigstore material
	NoSignatureReason string             `json:",omitempty"` // set when Signature and Sigstore are nil
	Checksums         *ResolvedChecksums `json:",omitempty"`
}

// AuxURLs are the URLs of the files that vouch for the source, in the order
// they are checked: its OpenPGP signature, its Sigstore files, its checksum
// file. (GitHub attestations come from an API, not a file.)
func (s *ResolvedSource) AuxURLs() []string {
	var out []string
	if s.Signature != nil {
		out = append(out, s.Signature.URL)
	}
	if s.Sigstore != nil {
		for _, u := range []string{s.Sigstore.SigURL, s.Sigstore.CertURL, s.Sigstore.BundleURL} {
			if u != "" {
				out = append(out, u)
			}
		}
	}
	if s.Checksums != nil {
		out = append(out, s.Checksums.URL)
	}
	return out
}

// ResolvedSigstore is Sigstore material that must vouch for the artifact, and
// who must have signed it: one of cosign's detached signature (SigURL and
// CertURL), a bundle (BundleURL) or GitHub attestations (GitHubAttestations,
// OWNER/REPO); Identity (exact) or IdentityRegexp (anchored); Issuer;
// SourceRepository, the repository whose CI run must have signed; or,
// for a key-signed bundle, PublicKeyPath, the pinned key.
type ResolvedSigstore struct {
	SigURL             string `json:",omitempty"`
	CertURL            string `json:",omitempty"`
	BundleURL          string `json:",omitempty"`
	GitHubAttestations string `json:",omitempty"`
	Identity           string `json:",omitempty"`
	IdentityRegexp     string `json:",omitempty"`
	Issuer             string `json:",omitempty"`
	SourceRepository   string `json:",omitempty"` // the certificate's Source Repository URI, exactly
	PublicKeyPath      string `json:",omitempty"` // absolute: a PEM public key in the recipe's folder
	PublicKey          string `json:",omitempty"` // the key file as the recipe names it (for people)
	// PredicateTypes are the predicate types an attestation counts by;
	// none: SLSA provenance (sigstore.DefaultPredicateTypes).
	PredicateTypes []string `json:",omitempty"`
}

// Form names the shape of the material: "cosign" (sig + cert), "bundle" or
// "github-attestations".
func (p *ResolvedSigstore) Form() string {
	switch {
	case p.SigURL != "":
		return "cosign"
	case p.BundleURL != "":
		return "bundle"
	}
	return "github-attestations"
}

// Signer says who must have signed, for people: "identity X, issuer Y",
// "identity matching RE, issuer Y" (either followed by ", source repository
// URL" when it requires one) or "public key FILE".
func (p *ResolvedSigstore) Signer() string {
	if p.PublicKeyPath != "" {
		return "public key " + p.PublicKey
	}
	who := fmt.Sprintf("identity %s, issuer %s", p.Identity, p.Issuer)
	if p.IdentityRegexp != "" {
		who = fmt.Sprintf("identity matching %s, issuer %s", p.IdentityRegexp, p.Issuer)
	}
	if p.SourceRepository != "" {
		who += ", source repository " + p.SourceRepository
	}
	return who
}

// ResolvedSignature is a detached OpenPGP signature over the artifact.
type ResolvedSignature struct {
	URL         string
	KeyringPath string   // absolute
	Signers     []string `json:",omitempty"` // allowed primary fingerprints; empty means any key in the keyring
}

// ResolvedChecksums is an upstream checksum file to cross-check the pins with.
type ResolvedChecksums struct {
	URL         string
	Name        string           // the entry to look up
	Clearsigned *ResolvedKeyring `json:",omitempty"` // the file is a clearsigned OpenPGP message
}

// ResolvedKeyring is a keyring and an optional signer allow-list.
type ResolvedKeyring struct {
	KeyringPath string   // absolute
	Signers     []string `json:",omitempty"`
}

// ResolvedPackage is one .deb to write.
type ResolvedPackage struct {
	Name         string
	Version      string // the Debian version (same as Resolved.DebianVersion)
	Architecture string // a concrete Debian architecture, or "all"
	Maintainer   string
	Section      string
	Priority     string
	Homepage     string `json:",omitempty"`
	Summary      string
	Description  string // extended description, plain text lines (empty lines allowed)

	PreDepends, Depends, Recommends, Suggests []string `json:",omitempty"`
	Conflicts, Breaks, Replaces, Provides     []string `json:",omitempty"`

	Files       []ResolvedFile
	Directories []ResolvedDir `json:",omitempty"` // parents are implied (root:root 0755)
	Symlinks    []Link        `json:",omitempty"`
	// Hardlinks are further names of files of the package (Target is the
	// Dest of one of its Files): the same inode, mode and owner.
	Hardlinks      []Link `json:",omitempty"`
	GeneratedFiles []GeneratedFile
	// LintianOverrides are the recipe's own (lintian-overrides), which
	// Overrides adds to the ones updeb knows to write.
	LintianOverrides []string `json:",omitempty"`
	dynamic          bool     // the recipe says its binaries are dynamically linked
	libc6Added       bool     // Depends holds the libc6 that dynamic adds (the recipe names none)
	alternatives     []Alternative
	unitFiles        []unitFile // the files it installs where systemd looks for units (checkUnits)
	recipePackages   []string   // the names of the recipe's packages, which may carry the folders this one states too
	// Scripts are the parts of the maintainer scripts updeb generates
	// (postinst, prerm, postrm, in that order, only those needed); the
	// scripts the package carries are these merged with Fragments
	// (Recipe.MaintainerScripts).
	Scripts []Script `json:",omitempty"`
	// Fragments are the recipe's own maintainer-script fragments.
	Fragments []Fragment `json:",omitempty"`
	// Triggers are the lines of DEBIAN/triggers.
	Triggers   []string `json:",omitempty"`
	Conffiles  []string `json:",omitempty"` // absolute, sorted
	OutputFile string   // <name>_<version without epoch>_<arch>.deb
}

// Alternatives are the update-alternatives entries the package's scripts
// register (rendered).
func (pp *ResolvedPackage) Alternatives() []Alternative {
	return slices.Clone(pp.alternatives)
}

// InstalledPaths are the paths of the package that dpkg records as its own
// and refuses to let another package overwrite: files, symlinks,
// hardlinks, generated files (not directories, which packages share).
func (pp *ResolvedPackage) InstalledPaths() []string {
	var out []string
	for _, f := range pp.Files {
		out = append(out, f.Dest)
	}
	for _, l := range pp.Symlinks {
		out = append(out, l.Dest)
	}
	for _, l := range pp.Hardlinks {
		out = append(out, l.Dest)
	}
	for _, g := range pp.GeneratedFiles {
		out = append(out, g.Dest)
	}
	return out
}

// MatchedIn reports whether one of the relations rels (of field:
// "Replaces", "Breaks", ...) names the package at its version (a relation
// without a version names every version), or a name it provides, as a
// virtual package (which only a relation without a version names, unless
// it is provided with one).
func (pp *ResolvedPackage) MatchedIn(rels []string, field string) bool {
	if namedIn(rels, field, pp.Name, pp.Version) {
		return true
	}
	for _, rel := range pp.Provides {
		groups, err := deb.ParseRelations("Provides", rel)
		if err != nil {
			continue
		}
		for _, g := range groups {
			for _, x := range g {
				if namedIn(rels, field, x.Name, x.Version) {
					return true
				}
			}
		}
	}
	return false
}

// namedIn reports whether one of the relations rels (of field) names the
// package name at version ("": a virtual package provided without one,
// which only a relation without a version names).
func namedIn(rels []string, field, name, version string) bool {
	for _, r := range rels {
		groups, err := deb.ParseRelations(field, r)
		if err != nil {
			continue
		}
		for _, g := range groups {
			for _, x := range g {
				if x.Name != name {
					continue
				}
				if ok, err := x.SatisfiedBy(version); err == nil && ok {
					return true
				}
			}
		}
	}
	return false
}

// Fragment is a maintainer-script fragment from the recipe's folder.
type Fragment struct {
	Script    string // preinst, postinst, prerm or postrm
	File      string // as the recipe names it, relative to the recipe's folder
	LocalPath string // absolute
}

// ResolvedDir is a directory of the package with its mode and owner.
type ResolvedDir struct {
	Path        string      // absolute
	Mode        fs.FileMode // permission and special bits
	Owner       deb.Owner   `json:",omitzero"`  // zero: root:root
	SpecialBits string      `json:",omitempty"` // the recipe's reason for a setuid, setgid or sticky bit
}

// ResolvedFile is one file of the package: from a source (Source, and Path
// inside it unless the source is raw) or from the recipe's folder (LocalPath).
type ResolvedFile struct {
	Source    string      `json:",omitempty"`
	Path      string      `json:",omitempty"`
	LocalPath string      `json:",omitempty"` // absolute
	Dest      string      // absolute
	Mode      fs.FileMode // permission bits, and the special bits the recipe gives a reason for
	Owner     deb.Owner   `json:",omitzero"` // zero: root:root
	// SpecialBits is the recipe's reason for a setuid, setgid or sticky bit.
	SpecialBits string `json:",omitempty"`
	Conffile    bool   `json:",omitempty"`
	// SetIDByPostinst says that the postinst sets the setuid and setgid
	// bits of Mode, after it gives the file to the package's system user
	// (or group): the package carries the file without them (PackedMode).
	// dpkg unpacks a first installation's file as root, the user not
	// existing yet, and a file setuid or setgid root would stay so until
	// the postinst, or for good where it fails.
	SetIDByPostinst bool `json:",omitempty"`
}

// PackedMode is the file's mode in the package: Mode, less the setuid and
// setgid bits that the postinst sets (SetIDByPostinst).
func (f ResolvedFile) PackedMode() fs.FileMode {
	if f.SetIDByPostinst {
		return f.Mode &^ (fs.ModeSetuid | fs.ModeSetgid)
	}
	return f.Mode
}

// Link is a symbolic link Dest -> Target.
type Link struct {
	Dest   string
	Target string
}

// GeneratedFile is a file updeb writes itself (copyright, changelog, overrides).
type GeneratedFile struct {
	Dest    string
	Content []byte
	Mode    fs.FileMode
}

// Script is a maintainer script (mode 0755 in control.tar).
type Script struct {
	Name    string // postinst, prerm or postrm
	Content string
}

// Resolve renders the recipe for one Debian architecture. It does no I/O. It
// fails (wrapping ErrInvalid) when arch is not one of the recipe's, when the
// options make an invalid version, or when neither the recipe nor opts name
// a maintainer (then it wraps ErrNoMaintainer too).
func (r *Recipe) Resolve(arch string, opts ResolveOptions) (*Resolved, error) {
	if !r.hasArch(arch) {
		return nil, fmt.Errorf("%w: %s: architecture %q is not one of the recipe's (%s)", ErrInvalid, r.Path, arch, strings.Join(r.ArchNames(), ", "))
	}
	fs := &findings{file: r.Path}
	p := r.resolve(arch, resolveOptions{ResolveOptions: opts}, fs)
	if err := fs.err(); err != nil {
		return nil, err
	}
	return p, nil
}

// resolveOptions adds what only Load uses: lint mode (no maintainer needed)
// and a file-existence check.
type resolveOptions struct {
	ResolveOptions
	lint bool
	stat func(path string) error
}

var versionPartsRE = regexp.MustCompile(`^[vV]?(\d+)(?:\.(\d+))?(?:\.(\d+))?`)

// templateData is what templates see: .Name .Version .Major .Minor .Patch .Arch
// .DebArch (and, where a recipe resolves, .DebianVersion).
func (r *Recipe) templateData(a Arch) map[string]string {
	m := versionPartsRE.FindStringSubmatch(r.Version)
	if m == nil {
		m = make([]string, 4)
	}
	return map[string]string{
		"Name": r.Name, "Version": r.Version, "Major": m[1], "Minor": m[2], "Patch": m[3],
		"Arch": a.Upstream, "DebArch": a.Debian,
	}
}

var (
	localSuffixRE = regexp.MustCompile(`^[A-Za-z0-9.+~]*$`)
	alternativeRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]*$`)
	binDirs       = []string{"/usr/bin/", "/usr/sbin/", "/bin/", "/sbin/", "/usr/libexec/", "/usr/games/"}
)

// SystemdUnitDirs are the folders a package installs systemd units into
// (each ends in "/"); a unit's drop-ins are in NAME.d below them.
var SystemdUnitDirs = []string{"/lib/systemd/system/", "/usr/lib/systemd/system/"}

// UsrMerged is the path p names on a merged-/usr system (Debian 12 and
// later: /bin, /sbin and /lib* are links to their /usr folders), where
// dpkg still takes /lib/x and /usr/lib/x for two paths.
func UsrMerged(p string) string { return usrMerged(p) }

func inBinDir(p string) bool {
	for _, d := range binDirs {
		if strings.HasPrefix(p, d) && !strings.Contains(p[len(d):], "/") {
			return true
		}
	}
	return false
}

// resolve renders the recipe for arch, recording every problem in fs: the
// version, the maintainer, where to publish, the sources, then each package.
func (r *Recipe) resolve(arch string, opts resolveOptions, fs *findings) *Resolved {
	var a Arch
	for _, x := range r.Architectures {
		if x.Debian == arch {
			a = x
		}
	}
	p := &Resolved{
		Recipe: r.Name, Arch: a.Debian, UpstreamArch: a.Upstream, UpstreamVersion: r.Version,
		SourceDateEpoch: r.ReleaseDate,
	}
	p.DebianVersion = r.debianVersion(opts.LocalSuffix, fs)
	dv, _ := debversion.Parse(p.DebianVersion)
	data := r.templateData(a)
	data["DebianVersion"] = p.DebianVersion // as debhelper's ${binary:Version}, for relations between the recipe's packages
	rd := &renderer{fs: fs, data: data}
	maintainer := r.maintainer(opts, fs)
	p.Component, p.Suite = r.repoTarget(rd)

	checkFile := func(n *yaml.Node, what, abs string) {
		if opts.stat != nil {
			if err := opts.stat(abs); err != nil {
				fs.at(n, "%s: %v", what, err)
			}
		}
	}
	// A pinned Sigstore key must also be one: lint reads it as the build will.
	checkKey := func(n *yaml.Node, what, abs string) {
		if opts.stat != nil {
			if err := opts.stat(abs); err != nil {
				fs.at(n, "%s: %v", what, err)
			} else if err := r.checkPublicKey(abs); err != nil {
				fs.at(n, "%s: %v", what, err)
			}
		}
	}
	for _, s := range r.Sources {
		p.Sources = append(p.Sources, r.resolveSource(s, arch, rd, checkFile, checkKey))
	}

	names := map[string]bool{}
	dests := newPlacements()
	for _, rp := range r.Packages {
		pp := r.resolvePackage(rp, rd, dests, checkFile, dv)
		pp.Maintainer = maintainer
		if pp.Name != "" {
			if names[pp.Name] {
				fs.at(valueOf(rp.node, "name"), "package name: %q is built twice", pp.Name)
			}
			names[pp.Name] = true
		}
		p.Packages = append(p.Packages, *pp)
	}
	checkAlternatives(p.Packages, dests, fs)
	// One list, which every package shares (read only): a list of its own
	// for each made a recipe of 6,000 packages hold 36 million names.
	recipePackages := slices.Sorted(maps.Keys(names))
	if opts.stat != nil {
		r.checkUnits(p.Packages, fs) // it reads the recipe's unit files, as stat says Load does
	}
	for i := range p.Packages {
		pp := &p.Packages[i]
		pp.recipePackages = recipePackages
		pp.Scripts = maintainerScripts(pp, r.Packages[i], pp.alternatives)
	}
	inheritDirectories(p.Packages, r.Packages)
	for i := range p.Packages {
		pp := &p.Packages[i]
		pp.GeneratedFiles = generatedFiles(r, p, pp, r.Packages[i])
	}
	return p
}

// inheritDirectories gives each package the directories it puts something
// into that another package of the recipe states with a mode or owner other
// than an implied parent's (root:root 0755). dpkg leaves a directory that
// exists as it is, so whichever package is installed first decides: an
// implied parent would make a stated 0700 folder world-readable; on a
// merged-/usr system /usr/lib/x is the /lib/x another package states. The
// system user's paths are handed over by the postinst of each package that
// has that user.
func inheritDirectories(pps []ResolvedPackage, rps []Package) {
	stated := map[string]ResolvedDir{}
	for _, pp := range pps {
		for _, d := range pp.Directories {
			if d.Mode != 0o755 || ownerNames(d.Owner) != ownerNames(deb.Owner{}) {
				stated[usrMerged(d.Path)] = d // an implied parent is root:root 0755 already
			}
		}
	}
	for i := range pps {
		pp := &pps[i]
		paths := []string{docDir(pp.Name) + "copyright"}
		for _, f := range pp.Files {
			paths = append(paths, f.Dest)
		}
		for _, l := range slices.Concat(pp.Symlinks, pp.Hardlinks) {
			paths = append(paths, l.Dest)
		}
		have := map[string]bool{}
		for _, d := range pp.Directories {
			paths = append(paths, d.Path)
			have[usrMerged(d.Path)] = true
		}
		var inherited []ResolvedDir
		for _, p := range paths {
			for dir := range parents(p) {
				// merged-/usr: /usr/lib/x is the /lib/x another package states.
				if d, ok := stated[usrMerged(dir)]; ok && !have[usrMerged(dir)] {
					have[usrMerged(dir)] = true
					d.Path = dir
					inherited = append(inherited, d)
				}
			}
		}
		if len(inherited) == 0 {
			continue
		}
		sort.Slice(inherited, func(a, b int) bool { return inherited[a].Path < inherited[b].Path })
		pp.Directories = append(pp.Directories, inherited...)
		pp.Scripts = maintainerScripts(pp, rps[i], pp.alternatives)
	}
}

// debianVersion is [epoch:]upstream[-revision] with the site's local suffix.
func (r *Recipe) debianVersion(localSuffix string, fs *findings) string {
	up, _ := debversion.FromUpstream(r.Version)
	v := up
	if r.Epoch > 0 {
		v = strconv.Itoa(r.Epoch) + ":" + v
	}
	if r.Revision != "" {
		v += "-" + r.Revision
	}
	if err := CheckLocalSuffix(localSuffix); err != nil {
		fs.at(nil, "%v", err)
	}
	v += localSuffix
	dv, err := debversion.Parse(v)
	switch {
	case err != nil && up != "":
		fs.at(valueOf(r.node, "version"), "version: Debian version %q: %v", v, err)
	case err == nil && r.Revision == "" && dv.Revision != "":
		// The upstream version keeps a "-" (in build metadata, 1.2.3+b-5):
		// without a revision, dpkg reads what follows the last one as one.
		fs.at(valueOf(r.node, "version"), "version: Debian version %q: with revision \"\" dpkg reads %q as its revision and %q as the upstream version: give a revision", v, dv.Revision, dv.Upstream)
	case err == nil && strings.HasSuffix(v, "-0") && !r.overriddenEverywhere(revisionZeroTag):
		fs.warn(valueOf(r.node, "revision"), "revision: %q makes version %s, and lintian reports a Debian revision of 0 (%s, an error that updeb verify fails on): start at revision 1", r.Revision, v, revisionZeroTag)
	}
	return v
}

// revisionZeroTag is lintian's error for a version that ends in "-0".
const revisionZeroTag = "debian-revision-is-zero"

// overriddenEverywhere reports whether every package of the recipe
// overrides lintian's tag (lintian-overrides: "TAG" or "TAG CONTEXT").
func (r *Recipe) overriddenEverywhere(tag string) bool {
	return !slices.ContainsFunc(r.Packages, func(p Package) bool {
		return !slices.ContainsFunc(p.Lintian, func(o string) bool { return strings.Fields(o)[0] == tag })
	})
}

// CheckLocalSuffix checks the site's version suffix (build: version-suffix:
// in the config, ResolveOptions.LocalSuffix); "" is none.
func CheckLocalSuffix(suffix string) error {
	switch {
	case !localSuffixRE.MatchString(suffix):
		return fmt.Errorf("local suffix %q: only letters, digits and . + ~ are allowed", suffix)
	case suffix != "" && suffix[0] >= '0' && suffix[0] <= '9':
		// dpkg compares runs of digits as numbers: revision 1 with suffix 5
		// is revision 15, later than revision 2, and 1.2.0 (revision "")
		// becomes 1.2.05, which dpkg holds equal to 1.2.5.
		return fmt.Errorf("local suffix %q starts with a digit, which dpkg reads as one number with the version's last digits (1.2.0-1 becomes 1.2.0-1%s, a later revision than 1.2.0-2): start it with ~, + or a letter (~site1)", suffix, suffix)
	}
	return nil
}

// CheckDefaultMaintainer checks the site's default maintainer (build:
// maintainer: in the config, ResolveOptions.DefaultMaintainer); "" is none.
func CheckDefaultMaintainer(m string) error {
	if m != "" && !validMaintainer(m) {
		return fmt.Errorf("default maintainer %q is not \"Full Name <email@address>\"", m)
	}
	return nil
}

// validMaintainer reports whether m is "Full Name <email>", in text the
// control file takes.
func validMaintainer(m string) bool {
	return maintainerRE.MatchString(m) && deb.CheckFieldText(m, false) == nil
}

var (
	// mailAtomRE is a local part as lintian's parser (Email::Address::XS)
	// takes it unquoted: RFC 5322's dot-atom.
	mailAtomRE = regexp.MustCompile("^[A-Za-z0-9!#$%&'*+/=?^_`{|}~\\x{80}-\\x{10FFFF}-]+(\\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~\\x{80}-\\x{10FFFF}-]+)*$")
	// mailLabelRE is a label of a mail host as lintian takes it
	// (Data::Validate::Domain).
	mailLabelRE = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?$`)
	// mailQuotedRE is a quoted string of a name ("Foo \"Bar\" Baz"), where
	// any character may stand.
	mailQuotedRE = regexp.MustCompile(`"([^"\\]|\\.)*"`)
)

// maintainerLintian returns why lintian 2.116 (Lintian::Check::Fields::
// MailAddress) reports an error about maintainer m, one maintainerRE
// takes, or "": updeb verify fails on it. lintian also wants the host's last
// label to be a top-level domain it knows; that list is not checked here.
func maintainerLintian(m string) string {
	if !validMaintainer(m) {
		return ""
	}
	i := strings.LastIndex(m, " <")
	name, addr := m[:i], strings.TrimSuffix(m[i+2:], ">")
	user, host, _ := strings.Cut(addr, "@")
	labels := strings.Split(host, ".")
	switch {
	case strings.ContainsAny(mailQuotedRE.ReplaceAllString(name, ""), `@;[]\"`):
		return "malformed-contact: the name holds one of @ ; [ ] \\ \" (quote the name to keep it)"
	case !mailAtomRE.MatchString(user) || slices.Contains(labels, ""):
		return "malformed-contact: the address is not letters, digits and !#$%&'*+/=?^_`{|}~- in dot-separated parts"
	case len(labels) < 2 || slices.ContainsFunc(labels, func(l string) bool { return !mailLabelRE.MatchString(l) }):
		return "bogus-mail-host: the mail host is not a domain name of two or more labels of letters, digits and inner hyphens"
	case user == "root" || name == "root":
		return "root-in-contact: write the address of a person or a team"
	}
	return ""
}

// maintainer is the recipe's, else the site's default; only lint may do
// without one.
func (r *Recipe) maintainer(opts resolveOptions, fs *findings) string {
	if r.Maintainer != "" {
		return r.Maintainer
	}
	m := opts.DefaultMaintainer
	if m == "" && !opts.lint && !opts.SourcesOnly {
		fs.because(ErrNoMaintainer, r.node, "maintainer: the recipe names none and no default maintainer is configured")
	} else if err := CheckDefaultMaintainer(m); err != nil {
		fs.at(nil, "%v", err)
	}
	return m
}

// repoTarget renders the apt component and suite the packages go to.
func (r *Recipe) repoTarget(rd *renderer) (component, suite string) {
	at := valueOf(r.node, "repo")
	component = rd.render(at, "repo.component", r.Repo.Component)
	if component != "" {
		if err := aptname.Component(component); err != nil {
			rd.fs.at(at, "repo.component: %v", err)
		}
	}
	if r.Repo.Suite != "" {
		suite = rd.render(at, "repo.suite", r.Repo.Suite)
		if suite != "" {
			if err := aptname.Suite(suite); err != nil {
				rd.fs.at(at, "repo.suite: %v", err)
			}
		}
	}
	return component, suite
}

// resolveSource renders one source for arch: its URL and pins, and what vouches
// for it (signature, checksum file) with keyrings made absolute.
func (r *Recipe) resolveSource(s Source, arch string, rd *renderer, checkFile, checkKey func(*yaml.Node, string, string)) ResolvedSource {
	keyringPath := func(n *yaml.Node, what, rel string) string {
		if rel == "" {
			return "" // already reported by the decoder
		}
		abs := filepath.Join(r.Root, filepath.FromSlash(rel))
		checkFile(n, what, abs)
		return abs
	}
	ps := ResolvedSource{Name: s.Name, Kind: s.Kind, KindFromURL: s.KindFromURL, Pinned: digest.Set{}}
	ps.URL = rd.url(valueOf(s.node, "url"), "url", s.URL)
	for alg, hex := range s.Digests[arch] {
		ps.Pinned[alg] = hex
	}
	sn := valueOf(s.node, "signature")
	if s.Signature.URL != "" {
		ps.Signature = &ResolvedSignature{
			URL:         rd.url(valueOf(sn, "url"), "signature.url", s.Signature.URL),
			KeyringPath: keyringPath(valueOf(sn, "keyring"), "signature.keyring", s.Signature.Keyring),
			Signers:     s.Signature.Signers,
		}
	} else if ss := s.Signature.Sigstore; ss != nil {
		ps.Sigstore = &ResolvedSigstore{
			SigURL:             rd.render(valueOf(sn, "sig-url"), "signature.sig-url", ss.SigURL),
			CertURL:            rd.render(valueOf(sn, "cert-url"), "signature.cert-url", ss.CertURL),
			BundleURL:          rd.render(valueOf(sn, "bundle-url"), "signature.bundle-url", ss.BundleURL),
			GitHubAttestations: ss.GitHubAttestations,
			Identity:           rd.render(valueOf(sn, "identity"), "signature.identity", ss.Identity),
			IdentityRegexp:     ss.IdentityRegexp,
			Issuer:             ss.Issuer,
			SourceRepository:   ss.SourceRepository,
			PublicKey:          ss.PublicKey,
			PredicateTypes:     slices.Clone(ss.PredicateTypes),
		}
		if ss.PublicKey != "" {
			ps.Sigstore.PublicKeyPath = filepath.Join(r.FilesDir, filepath.FromSlash(ss.PublicKey))
			checkKey(valueOf(sn, "public-key"), "signature.public-key", ps.Sigstore.PublicKeyPath)
		}
		if ss.Identity != "" && (ps.Sigstore.Identity == "" || strings.ContainsAny(ps.Sigstore.Identity, "\n\r")) {
			rd.fs.at(valueOf(sn, "identity"), "signature.identity: renders to %q, not one line", ps.Sigstore.Identity)
		}
	} else {
		ps.NoSignatureReason = s.Signature.None
	}
	if c := s.Checksums; c != nil {
		cn := valueOf(s.node, "checksums")
		pc := &ResolvedChecksums{URL: rd.url(valueOf(cn, "url"), "checksums.url", c.URL)}
		if c.Name != "" {
			pc.Name = rd.render(valueOf(cn, "name"), "checksums.name", c.Name)
		} else {
			// The file's name, as a checksum file lists it: a URL
			// percent-encodes what a path may not hold (srcurl.Check
			// refuses a bad escape), sha256sum writes the name itself.
			u, _, _ := strings.Cut(ps.URL, "?")
			pc.Name = path.Base(u)
			if name, err := url.PathUnescape(pc.Name); err == nil {
				pc.Name = name
			}
		}
		if k := c.Clearsigned; k != nil {
			kn := valueOf(cn, "clearsigned")
			pc.Clearsigned = &ResolvedKeyring{KeyringPath: keyringPath(valueOf(kn, "keyring"), "checksums.clearsigned.keyring", k.Keyring), Signers: k.Signers}
		}
		ps.Checksums = pc
	}
	return ps
}

// packageResolver renders one package of the recipe, recording findings.
type packageResolver struct {
	r         *Recipe
	rd        *renderer
	fs        *findings
	rp        Package
	pp        *ResolvedPackage
	dests     *placements     // what the recipe's packages install
	generated map[string]bool // what updeb writes into the package itself
	checkFile func(*yaml.Node, string, string)
	// checkFragment checks a fragment's file and its content (Load only).
	checkFragment func(*yaml.Node, Fragment)
	helperWarned  bool // the package's fragments were warned about for dpkg-maintscript-helper
	// cronJobs are the files the package puts in a folder of cron's
	// (/etc/cron.d, /etc/cron.daily, ...), with their dest's node.
	cronJobs []cronJob
}

// cronJob is a file of the package in a folder of cron's.
type cronJob struct {
	at   *yaml.Node
	dest string
}

// helperTag is lintian's warning for a maintainer script that calls
// dpkg-maintscript-helper.
const helperTag = "maintainer-script-should-not-use-dpkg-maintscript-helper"

// resolvePackage renders rp in named steps: its identity, relations, contents
// (files, directories, symlinks, each claimed once across the recipe), the
// systemd units it must ship, and its alternatives and maintainer scripts.
func (r *Recipe) resolvePackage(rp Package, rd *renderer, dests *placements, checkFile func(*yaml.Node, string, string), dv debversion.Version) *ResolvedPackage {
	pl := &packageResolver{r: r, rd: rd, fs: rd.fs, rp: rp, dests: dests, checkFile: checkFile, checkFragment: func(n *yaml.Node, f Fragment) {
		checkFile(n, "scripts."+f.Script, f.LocalPath)
	}}
	if r.dir != "" && rd.fs.lintFragments {
		pl.checkFragment = func(n *yaml.Node, f Fragment) {
			data, err := r.ReadFragment(f)
			var text string
			if err == nil {
				text, err = checkFragment(f, data)
			}
			if err == nil && !hasCommands(text) {
				rd.fs.warn(n, "scripts.%s: %s holds no commands, only comments and blank lines: leave the fragment out (without a part of updeb's own, the package then has no %s, as lintian's maintainer-script-empty asks)", f.Script, f.File, f.Script)
			}
			if err == nil && !pl.helperWarned && callsMaintscriptHelper(text) && !slices.ContainsFunc(rp.Lintian, func(t string) bool { tag, _, _ := strings.Cut(t, " "); return tag == helperTag }) {
				pl.helperWarned = true // once for the package
				rd.fs.warn(n, "scripts.%s: %s calls dpkg-maintscript-helper (the lines updeb verify --base names for conffiles and symlinked folders), and lintian warns %s in each script that does (it wants debhelper's maintscript file, which a package updeb builds has none of): add lintian-overrides: [%s] to package %s", f.Script, f.File, helperTag, helperTag, pl.pp.Name)
			}
			if line := callsSystemctl(text); err == nil && line > 0 {
				rd.fs.warn(n, "scripts.%s: %s line %d calls systemctl (lintian's maintainer-script-calls-systemctl): where systemd is not running (a chroot, an image build, a container) systemctl fails, and the %s with it (set -e); start or restart a unit with deb-systemd-invoke (init-system-helpers, essential), which does nothing there, or guard the call with [ -d /run/systemd/system ]", f.Script, f.File, line, f.Script)
			}
			if line := exitBeforePart(f.Script, text); err == nil && line > 0 && slices.ContainsFunc(pl.pp.Scripts, func(s Script) bool { return s.Name == f.Script }) {
				rd.fs.warn(n, "scripts.%s: %s line %d: exit ends the %s before updeb's part of it (system user, stated folder modes, alternatives, daemon-reload), which then never runs: leave the exit out (updeb ends the script with exit 0)", f.Script, f.File, line, f.Script)
			}
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					err = fmt.Errorf("scripts.%s: %s does not exist", f.Script, f.LocalPath)
				}
				rd.fs.at(n, "%v", err)
			}
		}
	}
	pl.identity(dv)
	pl.relations()
	pl.controlSize()
	pl.files()
	pl.directories()
	pl.symlinks()
	pl.hardlinks()
	pl.systemdUnits()
	pl.cronWithoutTimer()
	pl.pp.alternatives = pl.alternatives()
	pl.pp.Scripts = maintainerScripts(pl.pp, rp, pl.pp.alternatives)
	pl.fragments()
	pl.pp.Triggers = rp.Triggers
	if len(rp.Triggers) > 0 && slices.ContainsFunc(rp.Triggers, func(t string) bool { return strings.HasPrefix(t, "interest") }) &&
		!slices.ContainsFunc(pl.pp.Fragments, func(f Fragment) bool { return f.Script == "postinst" }) {
		pl.fs.warn(valueOf(rp.node, "triggers"), "triggers: package %s is interested in triggers but has no postinst fragment: dpkg runs \"postinst triggered NAME\" for them, and updeb's own postinst does nothing then", pl.pp.Name)
	}
	if i := slices.Index(rp.Triggers, "activate-noawait ldconfig"); i >= 0 && !pl.shipsLibraries() {
		pl.fs.warn(elementAt(valueOf(rp.node, "triggers"), i), "triggers: %q: package %s installs nothing in a folder ldconfig reads (/usr/lib, /usr/lib/TRIPLET, /lib, /lib64, ...), so ldconfig has nothing to learn (lintian's package-has-unnecessary-activation-of-ldconfig-trigger): leave the trigger out", rp.Triggers[i], pl.pp.Name)
	}
	return pl.pp
}

// fragments resolves the recipe's maintainer-script fragments to files of
// its folder (checked, confined, by Load).
func (pl *packageResolver) fragments() {
	sn := valueOf(pl.rp.node, "scripts")
	for _, name := range scriptNames {
		rel, ok := pl.rp.Scripts[name]
		if !ok {
			continue
		}
		f := Fragment{Script: name, File: rel, LocalPath: filepath.Join(pl.r.FilesDir, filepath.FromSlash(rel))}
		pl.checkFragment(valueOf(sn, name), f)
		pl.pp.Fragments = append(pl.pp.Fragments, f)
	}
}

// identity: name, version, architecture, section, texts and the output file.
func (pl *packageResolver) identity(dv debversion.Version) {
	rp, n, rd := pl.rp, pl.rp.node, pl.rd
	pp := &ResolvedPackage{
		Architecture: rp.Architecture, Section: rp.Section, Priority: rp.Priority, Homepage: pl.r.Homepage,
		Version: dv.String(),
	}
	if pp.Architecture == "any" {
		pp.Architecture = rd.data["DebArch"]
	}
	pp.Name = rd.render(valueOf(n, "name"), "package name", rp.Name)
	if pp.Name != "" && !deb.ValidPackageName(pp.Name) {
		pl.fs.at(valueOf(n, "name"), "package name: %q is not a valid Debian package name (want %s, lower case)", pp.Name, deb.PackageNamePattern)
	} else if why, ok := basePackages[pp.Name]; ok {
		pl.fs.at(valueOf(n, "name"), "package name: %q is a package every Debian system has (%s): with a higher version, apt would replace the real one with this package on every node at the next upgrade; give the package a name of its own", pp.Name, why)
	}
	pp.Summary = rd.render(valueOf(n, "summary"), "summary", rp.Summary)
	if c := utf8.RuneCountInString(pp.Summary); c > 80 {
		pl.fs.at(valueOf(n, "summary"), "summary: %d characters; at most 80 (lintian synopsis-too-long)", c)
	}
	if err := deb.CheckFieldText(pp.Summary, false); err != nil {
		pl.fs.at(valueOf(n, "summary"), "summary: %q %v", pp.Summary, err)
	}
	pp.Description = strings.TrimRight(rd.render(valueOf(n, "description"), "description", rp.Description), "\n")
	if err := deb.CheckFieldText(pp.Description, true); err != nil {
		pl.fs.at(valueOf(n, "description"), "description: %v", err)
	}
	pl.synopsis(valueOf(n, "summary"), pp.Name, pp.Summary, pp.Description)
	pl.descriptionLines(valueOf(n, "description"), pp.Description)
	pp.OutputFile = fmt.Sprintf("%s_%s_%s.deb", pp.Name, dv.WithoutEpoch(), pp.Architecture)
	if err := deb.CheckFileNameLength(pp.Name, pp.Version, pp.Architecture); err != nil && deb.ValidPackageName(pp.Name) {
		pl.fs.at(valueOf(n, "name"), "package name: %v: shorten the name", err)
	} else if size := len(pp.OutputFile) + len(ProvenanceSuffix); size > deb.MaxFileName && deb.ValidPackageName(pp.Name) {
		// The build writes the record beside the package, under a name
		// 12 bytes longer: the package's own name fitting is not enough.
		pl.fs.at(valueOf(n, "name"), "package name: the provenance record the build writes beside the package, %s, is a file name of %d bytes, more than the %d a file system takes: shorten the name", pp.OutputFile+ProvenanceSuffix, size, deb.MaxFileName)
	}
	pl.pp = pp
	generated := []string{docDir(pp.Name) + "copyright", docDir(pp.Name) + changelogName(pp), OverridesPath(pp.Name)}
	pl.generated = map[string]bool{}
	for _, g := range generated {
		pl.generated[g] = true
		if deb.ValidPackageName(pp.Name) {
			pl.place(valueOf(n, "name"), "package name", g, "file", "written by updeb for package "+pp.Name)
		}
	}
}

// articleRE is an English article at the start of a summary.
var articleRE = regexp.MustCompile(`(?i)^(an?|the)\s`)

// synopsis warns about the summaries lintian reports as errors, which
// verify's lintian run then fails on (warnings: the package builds, as it
// did; verify is where lintian's verdict counts): one word, the package's name at its
// start or as the whole of it, a tab, or the description's first line
// saying it again (lintian's fields/description check); an article at its
// start is lintian's warning, and lint's.
func (pl *packageResolver) synopsis(n *yaml.Node, pkg, summary, description string) {
	if summary == "" || !deb.ValidPackageName(pkg) {
		return
	}
	fuzzy := func(s string, seps string) string {
		s = strings.ToLower(s)
		for _, c := range seps {
			s = strings.ReplaceAll(s, string(c), " ")
		}
		return strings.Join(strings.Fields(s), " ")
	}
	alnum := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
				return unicode.ToLower(r)
			}
			return -1
		}, s)
	}
	var first string
	for _, l := range strings.Split(description, "\n") {
		if strings.TrimSpace(l) != "" && strings.TrimSpace(l) != "." {
			first = l
			break
		}
	}
	switch {
	case strings.ContainsRune(summary, '\t'):
		pl.fs.warn(n, "summary: %q holds a tab (lintian's description-contains-tabs, an error): use spaces", summary)
	case !strings.ContainsAny(summary, " \t"):
		pl.fs.warn(n, "summary: %q is one word (lintian's description-too-short, an error): say in a few words what the package is", summary)
	case fuzzy(pkg, "-_") == fuzzy(summary, "-_/\\"):
		pl.fs.warn(n, "summary: %q is the package's name (lintian's description-is-pkg-name, an error): say what the package is", summary)
	case regexp.MustCompile(`(?i)^` + regexp.QuoteMeta(pkg) + `\b`).MatchString(summary):
		pl.fs.warn(n, "summary: %q starts with the package's name (lintian's description-starts-with-package-name, an error): say what it is, without the name (%q)", summary, strings.TrimSpace(summary[len(pkg):]))
	case first != "" && (strings.EqualFold(strings.TrimSpace(first), summary) || alnum(first) == alnum(summary)):
		pl.fs.warn(n, "summary: the description's first line says it again (lintian's description-synopsis-is-duplicated, an error): start the description with what the summary does not say")
	case articleRE.MatchString(summary):
		pl.fs.warn(n, "summary: %q starts with an article (lintian's description-synopsis-starts-with-article): leave it out", summary)
	}
}

// descriptionWidth is the longest line of an extended description that
// lintian lets pass: the control file indents each line by a space, and
// extended-description-line-too-long counts it in its 80 characters.
const descriptionWidth = 79

// descriptionLines warns for each line of the extended description text
// that lintian will find too long, at the line itself where the recipe
// writes the description as a literal block (description: |).
func (pl *packageResolver) descriptionLines(n *yaml.Node, text string) {
	for i, l := range strings.Split(text, "\n") {
		// The control file writes each line after a space: ".x" and
		// " ." there read as control statements, which lintian refuses
		// (description-contains-invalid-control-statement), as it does
		// tabs (description-contains-tabs).
		switch t := strings.TrimLeft(l, " \t"); {
		case strings.ContainsRune(l, '\t'):
			pl.fs.warn(pl.fs.blockLine(n, i), "description: line %d holds a tab (lintian's description-contains-tabs, an error): use spaces", i+1)
		case strings.HasPrefix(l, ".") && strings.TrimSpace(l[1:]) != "",
			strings.HasPrefix(l, " ") && strings.TrimSpace(t) == ".":
			pl.fs.warn(pl.fs.blockLine(n, i), "description: line %d, %q, reads as a control statement in the package (lintian's description-contains-invalid-control-statement, an error): start it with another character, or leave the line empty for a paragraph break", i+1, l)
		}
		// Trailing white space is dropped in the control file (pkg/deb).
		if c := utf8.RuneCountInString(strings.TrimRight(l, " \t")); c > descriptionWidth {
			pl.fs.warn(pl.fs.blockLine(n, i), "description: line %d has %d characters; lintian flags a line over %d (extended-description-line-too-long: the control file indents it by a space, and 80 is the limit): break it into shorter lines", i+1, c, descriptionWidth)
		}
	}
	// The description as the control file has it (pkg/deb drops the blank
	// lines around it and writes inner ones as "."), line k of it being
	// line lead+k of text.
	lines := strings.Split(text, "\n")
	lead := 0
	for lead < len(lines) && strings.TrimRight(lines[lead], " \t") == "" {
		lead++
	}
	written := (&deb.Control{Summary: "-", Description: text}).Paragraph(0)
	ext := strings.Split(written.Value("Description"), "\n")[1:]
	for k, l := range ext {
		i := lead + k
		switch {
		case k == 0 && (strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t")):
			pl.fs.warn(pl.fs.blockLine(n, i), "description: line %d, the first, starts with white space, which shows it verbatim (lintian's description-starts-with-leading-spaces): start it at the margin", i+1)
		case l == "." && len(ext) > 1 && (k == 0 || k == len(ext)-1 || ext[k-1] == "."):
			// One line alone is lintian's extended-description-is-probably-too-short
			// instead, an information.
			pl.fs.warn(pl.fs.blockLine(n, i), "description: line %d makes an empty paragraph (lintian's extended-description-contains-empty-paragraph): one empty line between paragraphs, none before the first or after the last", i+1)
			return
		}
	}
}

// controlSize refuses a package whose control file would be larger than
// Write takes (control.MaxStanzaSize, a quarter of what apt takes in a
// Packages index), at the field that is most of it (a long description,
// mostly) where the package writes it, else at the package. Installed-Size
// is learnt at build time; it is counted here with the most digits it can
// have.
func (pl *packageResolver) controlSize() {
	c := pl.pp.DebControl()
	written := c.Paragraph(math.MaxInt64)
	if len(written.Bytes()) <= control.MaxStanzaSize {
		return
	}
	var big control.Field
	bigSize := 0
	for _, f := range written.Fields {
		one := control.Paragraph{Fields: []control.Field{f}}
		if n := len(one.Bytes()); n > bigSize {
			big, bigSize = f, n
		}
	}
	// The total differs by architecture (its name is a field): the field
	// alone names the problem once for them all.
	pl.fs.at(valueOf(pl.rp.node, strings.ToLower(big.Name)), "package %s: its control file would be larger than the %d bytes a control file may have (apt refuses a whole Packages index with a stanza near 1 MiB); its %s field alone has %d: shorten it",
		pl.pp.Name, control.MaxStanzaSize, big.Name, bigSize)
}

// relations renders the recipe's relation fields and adds the ones updeb's
// own choices require (adduser for a system user, libc6 for a dynamic binary).
func (pl *packageResolver) relations() {
	rp, pp := pl.rp, pl.pp
	rels := map[string][]string{}
	for _, rf := range relationFields {
		rn := valueOf(rp.node, rf.key)
		for i, t := range rp.Relations[rf.field] {
			at := elementAt(rn, i)
			s := pl.rd.render(at, rf.key, t)
			if s == "" {
				continue
			}
			if err := checkRelation(rf.field, s); err != nil {
				pl.fs.at(at, "%s: %q: %v", rf.key, s, err)
			} else if base := baseRelation(rf.field, s); base != "" {
				pl.fs.at(at, "%s: %q names %s, a package every Debian system has (%s): %s: %s would %s on every node; leave it out", rf.key, s, base, basePackages[base], rf.field, base, baseRelationHarm[rf.field])
			} else if ess := unversionedEssential(rf.field, s); ess != "" && !pl.overrides(essentialTag) {
				pl.fs.warn(at, "%s: %q names %s, an essential package every Debian system has, without a version (lintian's %s, an error that updeb verify fails on): leave it out, or give the version the package needs (%s (>= VERSION))", rf.key, s, ess, essentialTag, ess)
			}
			rels[rf.field] = append(rels[rf.field], s)
		}
	}
	pl.conflictsWithDependency(rels)
	if rp.SystemUser != nil {
		rels["Depends"] = addRelation(rels["Depends"], "adduser")
	}
	if rp.Dynamic {
		n := len(rels["Depends"])
		rels["Depends"] = addRelation(rels["Depends"], "libc6")
		pp.libc6Added = len(rels["Depends"]) > n
	}
	pp.PreDepends, pp.Depends, pp.Recommends, pp.Suggests = rels["Pre-Depends"], rels["Depends"], rels["Recommends"], rels["Suggests"]
	pp.Conflicts, pp.Breaks, pp.Replaces, pp.Provides = rels["Conflicts"], rels["Breaks"], rels["Replaces"], rels["Provides"]
}

// essentialTag is lintian's error for a dependency on an essential
// package without a version (unversionedEssential).
const essentialTag = "depends-on-essential-package-without-using-version"

// unversionedEssential returns the first essential package that s, a
// checked relation of field, names without a version where lintian
// raises essentialTag: in Pre-Depends, Depends, Recommends and Suggests,
// for any package of Essential: yes but diffutils and dash ("": none).
func unversionedEssential(field, s string) string {
	switch field {
	case "Pre-Depends", "Depends", "Recommends", "Suggests":
	default:
		return ""
	}
	groups, _ := deb.ParseRelations(field, s)
	for _, g := range groups {
		for _, r := range g {
			if r.Op == "" && basePackages[r.Name] == "Essential: yes" && r.Name != "diffutils" && r.Name != "dash" {
				return r.Name
			}
		}
	}
	return ""
}

// baseRelationHarm says what a relation of each field that names one of
// basePackages does to the nodes; the fields not here may name them.
var baseRelationHarm = map[string]string{
	"Provides":  "stand in for it, satisfying what depends on it",
	"Replaces":  "let the package overwrite its files",
	"Conflicts": "have apt remove it",
	"Breaks":    "have apt remove it",
}

// baseRelation returns the first of basePackages that s, a checked
// relation of field, names, where baseRelationHarm has field ("": none).
func baseRelation(field, s string) string {
	if baseRelationHarm[field] == "" {
		return ""
	}
	groups, _ := deb.ParseRelations(field, s)
	for _, g := range groups {
		for _, r := range g {
			if _, ok := basePackages[r.Name]; ok {
				return r.Name
			}
		}
	}
	return ""
}

// conflictsWithDependency warns about a Conflicts or Breaks relation that
// a Depends, Pre-Depends, Recommends or Suggests of the package satisfies:
// lintian's conflicts-with-dependency, an error, which updeb verify fails
// on. rels are the rendered relations, field -> elements, as the recipe
// writes them (checked).
func (pl *packageResolver) conflictsWithDependency(rels map[string][]string) {
	for _, cf := range []struct{ key, field string }{{"conflicts", "Conflicts"}, {"breaks", "Breaks"}} {
		for i, ce := range rels[cf.field] {
			conflicts, err := deb.ParseRelations(cf.field, ce)
			if err != nil {
				continue
			}
			for _, c := range conflicts {
				for _, df := range []struct{ key, field string }{{"pre-depends", "Pre-Depends"}, {"depends", "Depends"}, {"recommends", "Recommends"}, {"suggests", "Suggests"}} {
					for _, de := range rels[df.field] {
						groups, _ := deb.ParseRelations(df.field, de)
						if slices.ContainsFunc(groups, func(g []deb.Relation) bool {
							return !slices.ContainsFunc(g, func(d deb.Relation) bool { return !implies(d, c[0]) })
						}) {
							pl.fs.warn(elementAt(valueOf(pl.rp.node, cf.key), i), "%s: %q: package %s also %s %q, which satisfies it (lintian's conflicts-with-dependency, an error, which updeb verify fails on): drop one of them", cf.key, ce, pl.pp.Name, df.key, de)
						}
					}
				}
			}
		}
	}
}

// implies reports whether every package that satisfies dep satisfies c, as
// lintian decides it (Lintian::Relation::Predicate's satisfies): the same
// name and architecture qualifier (c's :any takes an unqualified dep), and
// dep's versions all inside c's.
func implies(dep, c deb.Relation) bool {
	if dep.Name != c.Name || dep.Arch != c.Arch && !(dep.Arch == "" && c.Arch == "any") {
		return false
	}
	if c.Op == "" {
		return true
	}
	if dep.Op == "" {
		return false
	}
	n, err := debversion.CompareStrings(dep.Version, c.Version)
	if err != nil {
		return false
	}
	switch c.Op {
	case "=":
		return dep.Op == "=" && n == 0
	case "<=":
		return (dep.Op == "=" || dep.Op == "<=" || dep.Op == "<<") && n <= 0
	case "<<":
		return dep.Op == "<<" && n <= 0 || (dep.Op == "=" || dep.Op == "<=") && n < 0
	case ">=":
		return (dep.Op == "=" || dep.Op == ">=" || dep.Op == ">>") && n >= 0
	case ">>":
		return dep.Op == ">>" && n >= 0 || (dep.Op == "=" || dep.Op == ">=") && n > 0
	}
	return false
}

// elementAt is the i-th element of sequence n, for positions; n itself when it is
// not a sequence that long.
func elementAt(n *yaml.Node, i int) *yaml.Node {
	if n != nil && n.Kind == yaml.SequenceNode && i < len(n.Content) {
		return n.Content[i]
	}
	return n
}

// placements are the paths the packages of a recipe install, over all of
// them: which package installs each, what the files and symlinks are, and
// a path inside each folder that holds one. Each is keyed by the path it
// is on a merged-/usr system (usrMerged): /bin/x and /usr/bin/x are one.
type placements struct {
	owner     map[string]placed // path -> who installs it, as written
	leaf      map[string]string // path of a file or symlink -> "file", "symlink"
	inside    map[string]within // folder -> a path inside it
	conffiles map[string]placed // the conffiles among owner
	// dpkgTmps counts the paths of owner with ".dpkg-tmp" in them: where
	// there is none, no path's PATH.dpkg-tmp is looked for (a copy of
	// each folder of every deep path was gigabytes).
	dpkgTmps int
}

// placed is the package that installs a path, and the path as it wrote it.
type placed struct{ pkg, path string }

// within is a path inside a folder and who installs it ("package P"): kept
// apart, not joined, so that every parent of a deep path shares its bytes.
type within struct{ path, who string }

func (w within) String() string { return w.path + " (" + w.who + ")" }

func newPlacements() *placements {
	return &placements{owner: map[string]placed{}, leaf: map[string]string{}, inside: map[string]within{}, conffiles: map[string]placed{}}
}

// usrMergedAliases are the top-level folders that are symbolic links into
// /usr on a merged-/usr system (/bin -> usr/bin), as every Debian system
// is since Debian 12 (DEP 17's aliased folders).
var usrMergedAliases = []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libo32", "/libx32"}

// usrMergedAlias is the aliased folder that the clean absolute path p is
// in (or is), or "".
func usrMergedAlias(p string) string {
	for _, a := range usrMergedAliases {
		if p == a || strings.HasPrefix(p, a+"/") {
			return a
		}
	}
	return ""
}

// usrMerged is the path the clean absolute path p is on a merged-/usr
// system: /bin/x is /usr/bin/x, /lib/systemd/system is
// /usr/lib/systemd/system. Any other path is itself.
func usrMerged(p string) string {
	if usrMergedAlias(p) != "" {
		return "/usr" + p
	}
	return p
}

// aliasNote explains, after a finding about the paths p and other (as the
// recipe writes them), that merged-/usr makes them meet; "" when they meet
// as written.
func aliasNote(p, other string) string {
	ap, ao := usrMergedAlias(p), usrMergedAlias(other)
	if ap == ao {
		return ""
	}
	a := cmp.Or(ap, ao)
	return fmt.Sprintf(" (on a merged-/usr system, as every Debian since 12 is, %s is a symlink to usr%s)", a, a)
}

// baseFolders are the folders of every Debian system: base-files' own
// (dpkg -L base-files, Debian 12), those its postinst makes (/opt, /srv,
// /usr/local/bin, ...), and merged-/usr's symlinks and the folders they
// lead to. A package may put things into them, but never install one as a
// file or symlink: dpkg refuses that package where base-files owns the
// path ("trying to overwrite '/bin', which is also in package
// base-files"), and where nobody does, it replaces an empty folder, or the
// symlink itself (/lib64 -> usr/lib64, the way to the dynamic loader).
var baseFolders = func() map[string]bool {
	m := map[string]bool{}
	for _, f := range strings.Fields(`/bin /boot /dev /etc /etc/default /etc/dpkg /etc/dpkg/origins /etc/profile.d
		/etc/skel /etc/update-motd.d /home /lib /proc /root /run /sbin /sys /tmp /usr /usr/bin /usr/games
		/usr/include /usr/lib /usr/sbin /usr/share /usr/share/base-files /usr/share/common-licenses
		/usr/share/dict /usr/share/doc /usr/share/info /usr/share/lintian /usr/share/lintian/overrides
		/usr/share/man /usr/share/misc /usr/src /var /var/backups /var/cache /var/lib /var/lib/dpkg
		/var/lib/misc /var/local /var/lock /var/log /var/run /var/spool /var/tmp
		/mnt /srv /opt /etc/opt /var/opt /media /var/mail /run/lock /usr/local /usr/local/share
		/usr/local/share/man /usr/local/bin /usr/local/games /usr/local/lib /usr/local/include
		/usr/local/sbin /usr/local/src /usr/local/etc`) {
		m[f] = true
	}
	for _, a := range usrMergedAliases {
		m[a], m["/usr"+a] = true, true
	}
	return m
}()

// noPlace are the folders a package may install nothing inside, and why:
// dpkg's own state, its database (/var/lib/dpkg: every package's
// maintainer scripts, file lists, status, and update-alternatives'
// records) and the links update-alternatives manages (/etc/alternatives),
// where no package owns what is there, so dpkg lets a package's file
// replace it (a file /var/lib/dpkg/info/openssh-server.prerm would be that
// package's prerm); and the kernel's file systems.
var noPlace = []struct{ folder, why string }{
	{"/var/lib/dpkg", "a file there would replace what dpkg keeps of other packages (their maintainer scripts, file lists, alternatives), unseen by review"},
	{"/etc/alternatives", "a file there would replace what dpkg keeps of other packages (their maintainer scripts, file lists, alternatives), unseen by review"},
	{"/proc", "it is the kernel's procfs, where dpkg can create nothing, and the installation would fail"},
	{"/sys", "it is the kernel's sysfs, where dpkg can create nothing, and the installation would fail"},
	{"/dev", "it is the kernel's devtmpfs, made anew at every boot: what dpkg puts there is gone after the next one, while dpkg counts it installed"},
}

// noPlaceFor is the folder of noPlace that p is inside, and why nothing
// goes there; "" when p may be installed.
func noPlaceFor(p string) (folder, why string) {
	for _, n := range noPlace {
		if strings.HasPrefix(p, n.folder+"/") {
			return n.folder, n.why
		}
	}
	return "", ""
}

// selfAndParents yields p, then its folders as parents does.
func selfAndParents(p string) iter.Seq[string] {
	return func(yield func(string) bool) {
		if yield(p) {
			parents(p)(yield)
		}
	}
}

// parents yields the folders above the clean absolute path p, nearest
// first, without "/": each a prefix of p, found by looking back to the
// previous "/" (path.Dir at every step rescans the whole path, which cost a
// path of 2,000 folders 4 MB of reading).
func parents(p string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for i := strings.LastIndexByte(p, '/'); i > 0; i = strings.LastIndexByte(p[:i], '/') {
			if !yield(p[:i]) {
				return
			}
		}
	}
}

// claim records that this package installs dest as kind ("file",
// "symlink" or "directory"); a path updeb generates, one installed twice
// (here or by another package of the recipe, under its own name or under
// the other name merged-/usr gives it), and one that dpkg could not place
// because a file or symlink of the recipe is where a folder of it must be
// are refused.
func (pl *packageResolver) claim(at *yaml.Node, what, dest, kind string) {
	name := pl.pp.Name
	if pl.generated[dest] {
		pl.fs.at(at, "%s: %s is generated by updeb (copyright, changelog, lintian overrides); leave it out", what, dest)
		return
	}
	if other, ok := pl.dests.owner[usrMerged(dest)]; ok {
		if kind == "directory" && other.path != dest && pl.dests.leaf[usrMerged(dest)] == "" {
			// Two folders merged-/usr makes one (/bin and /usr/bin, as
			// Debian 12's base-files states both): dpkg keeps the link
			// and fills the folder it points to.
			return
		}
		as := ""
		if other.path != dest {
			as = " as " + other.path + aliasNote(dest, other.path)
		}
		if other.pkg == name {
			pl.fs.at(at, "%s: %s is installed twice in package %s%s", what, dest, name, as)
		} else {
			pl.fs.at(at, "%s: %s is already installed by package %s%s", what, dest, other.pkg, as)
		}
		return
	}
	if pl.place(at, what, dest, kind, "package "+name) {
		pl.hierarchy(at, what, dest, kind)
		pl.contentErrors(at, what, dest, kind)
	}
}

// place records dest as claim does (who: "package P", or who writes it)
// and refuses a path inside a file or symlink of the recipe, and a file or
// symlink where the recipe puts something inside, on a merged-/usr system
// as well. It reports whether it recorded dest.
func (pl *packageResolver) place(at *yaml.Node, what, dest, kind, who string) bool {
	ds := pl.dests
	subject := dest
	if who != "package "+pl.pp.Name {
		subject += " (" + who + ")"
	}
	key := usrMerged(dest)
	for parent := range parents(key) {
		if k, ok := ds.leaf[parent]; ok {
			o := ds.owner[parent]
			pl.fs.at(at, "%s: %s would be inside %s, which package %s installs as a %s: dpkg can put nothing inside it%s", what, subject, o.path, o.pkg, k, aliasNote(dest, o.path))
			return false
		}
	}
	if inside, ok := ds.inside[key]; ok && kind != "directory" {
		pl.fs.at(at, "%s: %s is installed as a %s, but %s goes inside it: it must be a directory%s", what, subject, kind, inside, aliasNote(dest, inside.path))
		return false
	}
	if folder, why := noPlaceFor(dest); folder != "" {
		pl.fs.at(at, "%s: %s is inside %s: a package may install nothing there: %s", what, dest, folder, why)
		return false
	}
	if baseFolders[dest] && kind != "directory" {
		pl.fs.at(at, "%s: %s is a folder of every Debian system (made by base-files, or one of merged-/usr's symlinks into /usr): a package may put files into it, but not install it as a %s (dpkg refuses the package where base-files owns the path, and replaces the folder where nobody does)", what, dest, kind)
		return false
	}
	if tmp, base := ds.dpkgTmp(key, subject, who); tmp != "" {
		pl.fs.at(at, "%s: %s and %s: dpkg removes PATH.dpkg-tmp, and all inside it, for each PATH of a package it unpacks (its backup of what PATH replaced), so unpacking the second deletes the first: rename one", what, tmp, base)
		return false
	}
	if version, conffile := ds.conffileVersionOf(key, subject, who); version != "" {
		pl.fs.at(at, "%s: %s and %s, a conffile: %s", what, version, conffile, conffileVersionWhy)
		return false
	}
	ds.owner[key] = placed{pl.pp.Name, dest}
	if strings.Contains(key, ".dpkg-tmp") {
		ds.dpkgTmps++
	}
	if kind != "directory" {
		ds.leaf[key] = kind
	}
	for parent := range parents(key) {
		if _, ok := ds.inside[parent]; !ok {
			ds.inside[parent] = within{dest, who}
		}
	}
	return true
}

// dpkgTmp finds a pair of paths of the recipe, with key (subject,
// installed by who) and its folders, where one is the other's
// PATH.dpkg-tmp, the name dpkg backs PATH up under while it unpacks: it
// returns both ("" when there is none), the .dpkg-tmp one first. A folder
// dpkg makes for what is in it is a PATH too.
func (ds *placements) dpkgTmp(key, subject, who string) (tmp, base string) {
	for p := range selfAndParents(key) {
		if b, ok := strings.CutSuffix(p, ".dpkg-tmp"); ok && b != "/" {
			if d := ds.describe(b, key, subject, who); d != "" {
				return ds.describe(p, key, subject, who), d
			}
		}
		if ds.dpkgTmps == 0 {
			continue
		}
		if d := ds.describe(p+".dpkg-tmp", key, subject, who); d != "" {
			return d, ds.describe(p, key, subject, who)
		}
	}
	return "", ""
}

// conffileSuffixes are the names dpkg gives a conffile's other versions
// beside it: the new one while the package is unpacked and not yet
// configured, and the one it does not keep where the administrator
// changed the file (the prompt's answer, --force-confold or
// --force-confnew).
var conffileSuffixes = []string{".dpkg-new", ".dpkg-dist", ".dpkg-old"}

// conffileVersionOf reports the recipe's conffile that key (subject,
// installed by who) or one of its folders would be a version of: dpkg
// writes those over what is there.
func (ds *placements) conffileVersionOf(key, subject, who string) (version, conffile string) {
	for p := range selfAndParents(key) {
		for _, suffix := range conffileSuffixes {
			if b, ok := strings.CutSuffix(p, suffix); ok {
				if c, ok := ds.conffiles[b]; ok {
					return ds.describe(p, key, subject, who), c.path + " (package " + c.pkg + ")"
				}
			}
		}
	}
	return "", ""
}

// conffile records the conffile key (subject), unless the recipe has a
// path where dpkg writes one of its versions (conffileSuffixes), which it
// refuses.
func (pl *packageResolver) conffile(at *yaml.Node, key, subject string) {
	for _, suffix := range conffileSuffixes {
		if d := pl.dests.describe(key+suffix, key, subject, ""); d != "" {
			pl.fs.at(at, "dest: %s and %s, a conffile: %s", d, subject, conffileVersionWhy)
			return
		}
	}
	pl.dests.conffiles[key] = placed{pl.pp.Name, subject}
}

const conffileVersionWhy = "dpkg unpacks a new conffile as PATH.dpkg-new, and writes the version it does not keep where the file was changed to PATH.dpkg-dist or PATH.dpkg-old, over what is there (a fresh installation configured the conffile with the bytes of the .dpkg-new entry): rename one"

// describe names p, a path of the recipe or one of the folders of key
// (subject, installed by who), or returns "" where the recipe has no p.
func (ds *placements) describe(p, key, subject, who string) string {
	if o, ok := ds.owner[p]; ok {
		return o.path + " (package " + o.pkg + ")"
	}
	if p == key {
		return subject
	}
	if w, ok := ds.inside[p]; ok {
		return "the folder " + p + " of " + w.String()
	}
	if len(key) > len(p) && key[len(p)] == '/' && strings.HasPrefix(key, p) {
		return "the folder " + p + " of " + within{key, who}.String()
	}
	return ""
}

// absDest reports whether p is a usable absolute path in the package.
func (pl *packageResolver) absDest(at *yaml.Node, what, p string) bool {
	d := &decoder{pl.fs}
	return p != "" && d.absPath(at, what, p)
}

// files renders the file mappings and lists the conffiles among them.
func (pl *packageResolver) files() {
	pp := pl.pp
	for _, f := range pl.rp.Files {
		pf, ok := pl.file(f)
		if !ok {
			continue
		}
		if pf.Conffile {
			pp.Conffiles = append(pp.Conffiles, pf.Dest)
		}
		if cronDirRE.MatchString(path.Dir(pf.Dest)) {
			pl.cronJobs = append(pl.cronJobs, cronJob{valueOf(f.node, "dest"), pf.Dest})
		}
		if _, _, _, ok := unitPlace(pf.Dest); ok {
			pp.unitFiles = append(pp.unitFiles, unitFile{valueOf(f.node, "file"), valueOf(f.node, "dest"), "dest", pf.Dest, pf.LocalPath})
		}
		pp.Files = append(pp.Files, pf)
	}
	sort.Strings(pp.Conffiles)
}

// file renders one mapping: its destination (claimed for this package), its
// origin (a source's member or a recipe-folder file), mode and conffile
// status. It reports false when there is no usable destination.
func (pl *packageResolver) file(f File) (ResolvedFile, bool) {
	fn, rd := f.node, pl.rd
	pf := ResolvedFile{Source: f.Source}
	pf.Dest = rd.render(valueOf(fn, "dest"), "dest", f.Dest)
	if !pl.absDest(valueOf(fn, "dest"), "dest", pf.Dest) {
		return pf, false
	}
	pl.claim(valueOf(fn, "dest"), "dest", pf.Dest, "file")
	if f.Path != "" {
		pf.Path = rd.render(valueOf(fn, "path"), "path", f.Path)
		if pf.Path != "" {
			(&decoder{pl.fs}).relPath(valueOf(fn, "path"), "path", strings.TrimPrefix(pf.Path, "./"))
		}
	}
	if f.Local != "" {
		local := rd.render(valueOf(fn, "file"), "file", f.Local)
		if local != "" && (&decoder{pl.fs}).relPath(valueOf(fn, "file"), "file", local) {
			pf.LocalPath = filepath.Join(pl.r.FilesDir, filepath.FromSlash(local))
			pl.checkFile(valueOf(fn, "file"), "file", pf.LocalPath)
		}
	}
	pf.Mode = 0o644
	if inBinDir(pf.Dest) {
		pf.Mode = 0o755
	}
	if f.Mode != 0 {
		pf.Mode = deb.FileMode(f.Mode)
	}
	pf.Owner, pf.SpecialBits = pl.owner(fn, f.Access), f.SpecialBits
	pf.SetIDByPostinst = pf.Mode&(fs.ModeSetuid|fs.ModeSetgid) != 0 && pl.rp.SystemUser.owns(pf.Owner)
	pl.setIDOfUnknown(fn, pf)
	if pf.Mode&0o002 != 0 {
		pl.fs.warn(valueOf(fn, "mode"), "mode: %s is world-writable (%04o): any local user can change it", pf.Dest, f.Mode)
	}
	if inBinDir(pf.Dest) && pf.Mode&0o111 == 0 {
		// lintian says nothing: 0644 is a standard mode for a file.
		pl.fs.warn(valueOf(fn, "mode"), "mode: %s is %04o: a command that nobody may execute cannot be run: leave mode out (commands get 0755) or write one with x bits", pf.Dest, deb.UnixMode(pf.Mode))
	}
	if pf.Mode&fs.ModeSticky != 0 {
		pl.fs.warn(valueOf(fn, "mode"), "mode: the sticky bit (%04o) does nothing on a file under Linux: leave it out", f.Mode)
	}
	if strings.HasPrefix(pf.Dest, "/etc/sudoers.d/") && deb.UnixMode(pf.Mode) != 0o440 {
		pl.fs.warn(valueOf(fn, "dest"), "mode: %s is %04o; sudo wants its files in /etc/sudoers.d at 0440 (lintian's bad-perm-for-file-in-etc-sudoers.d, an error): write mode: \"0440\"", pf.Dest, deb.UnixMode(pf.Mode))
	}
	pl.skippedConfig(valueOf(fn, "dest"), pf)
	inEtc := strings.HasPrefix(pf.Dest, "/etc/")
	pf.Conffile = inEtc
	if f.Conffile != nil {
		pf.Conffile = *f.Conffile
		if pf.Conffile && !inEtc {
			pl.fs.at(valueOf(fn, "conffile"), "conffile: %s is outside /etc; only files under /etc/ may be conffiles (lintian non-etc-file-marked-as-conffile)", pf.Dest)
		}
	}
	if pf.Conffile && strings.TrimRight(pf.Dest, " \t") != pf.Dest {
		pl.fs.at(valueOf(fn, "dest"), "dest: %q is a conffile whose name ends in white space, which dpkg's record of conffiles loses (it would never find the file again): rename it, or say conffile: false", pf.Dest)
	} else if pf.Conffile && strings.Contains(pf.Dest, " ") {
		// dpkg reads a conffiles line that starts with "/" as one name;
		// lintian 2.116 splits it at spaces into flags and a name.
		pl.fs.warn(valueOf(fn, "dest"), "dest: %q is a conffile with a space in its name: dpkg takes it, but lintian reads the part before the last space as a conffile flag and reports errors (unknown-conffile-instruction, relative-conffile, missing-conffile, ...), which updeb verify fails on: rename it, or say conffile: false", pf.Dest)
	} else if pf.Conffile && nonASCII.MatchString(pf.Dest) {
		// lintian 2.116 reads the package's file names as Latin-1 and
		// DEBIAN/conffiles as UTF-8: the two never meet.
		pl.fs.warn(valueOf(fn, "dest"), "dest: %q is a conffile with characters outside ASCII in its name: dpkg takes it, but lintian reads the package's file names as Latin-1 and its conffiles as UTF-8, finds neither in the other and reports errors (missing-conffile, file-in-etc-not-marked-as-conffile), which updeb verify fails on: rename it, or say conffile: false", pf.Dest)
	}
	if problem := deb.ConffileLengthProblem(pf.Dest); pf.Conffile && problem != "" {
		pl.fs.at(valueOf(fn, "dest"), "dest: %q is a conffile and %s: rename it, or say conffile: false", clip(pf.Dest), problem)
	}
	if pf.Conffile {
		pl.conffile(valueOf(fn, "dest"), usrMerged(pf.Dest), pf.Dest)
	}
	return pf, true
}

// directories renders the directories the package creates, with their
// modes (default 0755) and owners.
// cronFolderRE is a file in a folder cron reads (run-parts for the
// periodic ones), its name not starting with a "." (cron's .placeholder):
// folder (group 1) and name (group 2), as lintian's cron check finds it.
var cronFolderRE = regexp.MustCompile(`^/etc/cron\.(daily|hourly|monthly|weekly|d)/([^./][^/]*)$`)

// skippedConfig warns about a file of pf that sudo, cron or modprobe
// reads at its place but skips, or that lintian refuses there: the rules or
// the job of a name with a "." (sudo, cron and run-parts skip it, sudo one
// ending in "~" too), of a periodic job that is not executable (run-parts
// skips it) or of a modprobe.d file not named .conf never apply, and a
// cron table that is executable or an init script other than 0755 is
// lintian's error.
func (pl *packageResolver) skippedConfig(at *yaml.Node, pf ResolvedFile) {
	if name, ok := strings.CutPrefix(pf.Dest, "/etc/sudoers.d/"); ok && !strings.Contains(name, "/") && (strings.Contains(name, ".") || strings.HasSuffix(name, "~")) {
		pl.fs.warn(at, "dest: sudo skips a file in /etc/sudoers.d whose name holds a \".\" or ends in \"~\" (sudoers(5), @includedir), so the rules of %s never apply: name it without them", pf.Dest)
	}
	if strings.HasPrefix(pf.Dest, "/etc/modprobe.d/") && !strings.HasSuffix(pf.Dest, ".conf") {
		pl.fs.warn(at, "dest: modprobe reads only the files of /etc/modprobe.d whose name ends in .conf (modprobe.d(5)), so %s never applies (lintian's non-conf-file-in-modprobe.d, an error): name it so", pf.Dest)
	}
	if name, ok := strings.CutPrefix(pf.Dest, "/etc/init.d/"); ok && !strings.Contains(name, "/") && plainEtcFires(pf.Dest) && deb.UnixMode(pf.Mode) != 0o755 {
		// The default mode of a file in /etc is 0644.
		cannot := ""
		if pf.Mode&0o100 == 0 {
			cannot = "; not executable, it cannot run at all"
		}
		pl.fs.warn(at, "mode: %s is %04o; an init script is 0755 (lintian's non-standard-file-permissions-for-etc-init.d-script, an error, which updeb verify fails on%s): write mode: \"0755\"", pf.Dest, deb.UnixMode(pf.Mode), cannot)
	}
	m := cronFolderRE.FindStringSubmatch(pf.Dest)
	if m == nil {
		return
	}
	if strings.ContainsAny(m[2], ".+") {
		pl.fs.warn(at, "dest: cron skips a file in /etc/cron.%s whose name holds a \".\" or \"+\" (run-parts' names: letters, digits, \"_\" and \"-\"), so %s never runs (lintian's run-parts-cron-filename-contains-illegal-chars): use \"_\" instead", m[1], pf.Dest)
	}
	if m[1] == "d" && deb.UnixMode(pf.Mode) != 0o644 {
		pl.fs.warn(at, "mode: %s is %04o; a file in /etc/cron.d is a cron table, not a script (lintian's bad-permissions-for-etc-cron.d-script, an error, wants 0644): write mode: \"0644\"", pf.Dest, deb.UnixMode(pf.Mode))
	}
	if m[1] != "d" && pf.Mode&0o100 == 0 {
		// The default mode of a file in /etc is 0644.
		pl.fs.warn(at, "mode: %s is %04o: run-parts runs only the executable files of /etc/cron.%s, so the job never runs (lintian's script-not-executable): write mode: \"0755\"", pf.Dest, deb.UnixMode(pf.Mode), m[1])
	}
}

func (pl *packageResolver) directories() {
	var nodes []*yaml.Node
	for _, d := range pl.rp.Directories {
		at := d.node
		if at.Kind == yaml.MappingNode {
			at = valueOf(at, "path")
		}
		s := pl.rd.render(at, "directories", d.Path)
		if !pl.absDest(at, "directories", s) {
			continue
		}
		pl.claim(at, "directories", s, "directory")
		rd := ResolvedDir{Path: s, Mode: 0o755, Owner: pl.owner(d.node, d.Access), SpecialBits: d.SpecialBits}
		if baseFolders[usrMerged(s)] && pl.rp.SystemUser.owns(rd.Owner) {
			// dpkg leaves it as it is; the postinst's chown for the system user would not.
			pl.fs.at(at, "directories: %s is a folder of every Debian system: the postinst would hand it over to the system user %s; leave owner and group root", s, pl.rp.SystemUser.Name)
			continue
		}
		if baseFolders[usrMerged(s)] && d.Access != (Access{}) {
			pl.fs.warn(at, "directories: %s is a folder of every Debian system, which keeps its own mode and owner: dpkg leaves a folder that exists as it is, so the mode and owner stated here apply only where the package makes it (an empty root)", s)
		}
		if d.Mode != 0 {
			rd.Mode = deb.FileMode(d.Mode)
		}
		if rd.Mode&0o002 != 0 && rd.Mode&fs.ModeSticky == 0 {
			pl.fs.warn(valueOf(d.node, "mode"), "mode: directory %s is world-writable (%04o) without the sticky bit: any local user can remove or replace what is in it", s, d.Mode)
		}
		if rd.Mode&fs.ModeSetuid != 0 {
			pl.fs.warn(valueOf(d.node, "mode"), "mode: the setuid bit (%04o) does nothing on a directory under Linux (setgid does: what is made in it takes its group): leave it out", d.Mode)
		}
		if noSearch := (rd.Mode & 0o444) >> 2 &^ rd.Mode; noSearch != 0 {
			// lintian's non-standard-dir-perm would say so, but updeb
			// overrides it for every mode the recipe states.
			pl.fs.warn(valueOf(d.node, "mode"), "mode: directory %s is %04o: who may read it (%s) may list its names but reach nothing in it, a folder's x bit being the right to enter it: write %04o", s, d.Mode, accessClasses(noSearch), deb.UnixMode(rd.Mode|noSearch))
		}
		pl.pp.Directories = append(pl.pp.Directories, rd)
		nodes = append(nodes, at)
	}
	for i, d := range pl.pp.Directories {
		pl.homeOwner(nodes[i], d)
		pl.shutOut(nodes[i], d)
	}
}

// shutOut warns at a folder d the package states that its system user
// cannot enter (its x bit for the user: as owner, through the user's
// group, or as any account) while d holds a path the package gives the
// user: the kernel refuses the user everything under d, so the daemon
// could not reach its own folder or file, and neither dpkg nor lintian
// says so.
func (pl *packageResolver) shutOut(at *yaml.Node, d ResolvedDir) {
	u := pl.rp.SystemUser
	if u == nil {
		return
	}
	var theirs []string
	for _, x := range pl.pp.Directories {
		if u.owns(x.Owner) {
			theirs = append(theirs, x.Path)
		}
	}
	for _, f := range pl.pp.Files {
		if u.owns(f.Owner) {
			theirs = append(theirs, f.Dest)
		}
	}
	i := slices.IndexFunc(theirs, func(p string) bool { return strings.HasPrefix(p, d.Path+"/") })
	if i < 0 {
		return
	}
	o, m, group := ownerNames(d.Owner), deb.UnixMode(d.Mode), "nogroup"
	if u.Group {
		group = u.Name
	}
	switch {
	case o.User == u.Name && m&0o100 != 0, o.User != u.Name && o.Group == group && m&0o010 != 0, o.User != u.Name && o.Group != group && m&0o001 != 0:
		return
	}
	pl.fs.warn(at, "directories: %s is %s:%s %04o, which system-user %s cannot enter, so it cannot reach %s, which the package gives it: give %s a way in (owner: %s or group: %s, with that x bit: 0750)", d.Path, o.User, o.Group, m, u.Name, theirs[i], u.Name, u.Name, group)
}

// accessClasses names the classes of a mode's x bits: "owner",
// "group", "others", joined by commas.
func accessClasses(x fs.FileMode) string {
	var names []string
	for _, c := range []struct {
		bit  fs.FileMode
		name string
	}{{0o100, "owner"}, {0o010, "group"}, {0o001, "others"}} {
		if x&c.bit != 0 {
			names = append(names, c.name)
		}
	}
	return strings.Join(names, ", ")
}

// homeOwner warns when d, a directory the package states, is its system
// user's home but not the user's, and nothing the package ships below it
// is: dpkg creates the directory before the postinst runs adduser, which
// leaves an existing home as it is (a warning, no chown), so the user could
// write nowhere in its home (etcd in /var/lib/etcd). A home owned by root
// with a folder of the user's inside it is a choice, and quiet.
func (pl *packageResolver) homeOwner(at *yaml.Node, d ResolvedDir) {
	u := pl.rp.SystemUser
	if u == nil || u.Home == "" || d.Path != path.Clean(u.Home) || d.Owner.User == u.Name {
		return
	}
	for _, o := range pl.pp.ownedBy(u) {
		if strings.HasPrefix(o.path, d.Path+"/") {
			return
		}
	}
	o := ownerNames(d.Owner)
	group := u.Name
	if !u.Group {
		group = o.Group
	}
	pl.fs.warn(at, "directories: %s is the home of system-user %s but belongs to %s:%s, and nothing the package puts in it is %s's: adduser leaves an existing home as it is, so %s could not write there; give it owner: %s, group: %s and a mode (e.g. 0750)", d.Path, u.Name, o.User, o.Group, u.Name, u.Name, u.Name, group)
}

// owner resolves a mapping's owner and group: a base-passwd account by
// its name and id, the package's own system user (and its group) by name
// with id 0 (it does not exist when dpkg unpacks a first installation: the
// postinst gives it the path after creating the account), any other name
// with id 0 and a warning.
func (pl *packageResolver) owner(n *yaml.Node, a Access) deb.Owner {
	own := deb.Owner{User: a.Owner, Group: a.Group}
	u := pl.rp.SystemUser
	resolve := func(key, name string, table map[string]int, own bool) int {
		if id, ok := table[name]; ok || name == "" {
			return id
		}
		if !own {
			pl.fs.warn(valueOf(n, key), "%s: %q is neither a Debian base-passwd account nor this package's system-user: dpkg gives the path %s id 0 (root) unless %q exists when the package is unpacked (created by a package this one pre-depends on)", key, name, key, name)
		}
		return 0
	}
	own.UID = resolve("owner", a.Owner, baseUsers, u != nil && a.Owner == u.Name)
	own.GID = resolve("group", a.Group, baseGroups, u != nil && u.Group && a.Group == u.Name)
	return own
}

// setIDOfUnknown refuses a setuid file whose owner (a setgid file whose
// group) is neither a base-passwd account nor the package's system user:
// its tar member carries id 0 for the name, which dpkg uses where the name
// does not exist at unpack, so the file would be setuid (setgid) root on such
// a system, while the recipe, the package listing and the gate's review show
// the other account.
func (pl *packageResolver) setIDOfUnknown(fn *yaml.Node, f ResolvedFile) {
	u := pl.rp.SystemUser
	for _, c := range []struct {
		bit             fs.FileMode
		bitName, key    string
		name            string
		table           map[string]int
		systemUsersName bool
	}{
		{fs.ModeSetuid, "setuid", "owner", f.Owner.User, baseUsers, u != nil && f.Owner.User == u.Name},
		{fs.ModeSetgid, "setgid", "group", f.Owner.Group, baseGroups, u != nil && u.Group && f.Owner.Group == u.Name},
	} {
		if _, known := c.table[c.name]; f.Mode&c.bit == 0 || c.name == "" || known || c.systemUsersName {
			continue
		}
		pl.fs.at(valueOf(fn, "mode"), "mode: %04o makes %s %s %s %q, which is neither a Debian base-passwd account nor this package's system-user: where %q does not exist when dpkg unpacks the package, dpkg gives the file id 0, and it is %s root: make %q the package's system-user (the postinst then sets the bit once the account exists), use a base-passwd account, or leave the bit out",
			deb.UnixMode(f.Mode), f.Dest, c.bitName, c.key, c.name, c.name, c.bitName, c.name)
	}
}

// symlinks renders the package's symbolic links.
func (pl *packageResolver) symlinks() {
	for _, l := range pl.rp.Symlinks {
		dest := pl.rd.render(valueOf(l.node, "dest"), "symlink dest", l.Dest)
		target := pl.rd.render(valueOf(l.node, "target"), "symlink target", l.Target)
		if problem := pathProblem(target); problem != "" {
			pl.fs.at(valueOf(l.node, "target"), "symlink target: %q %s", clip(target), problem)
		}
		if pl.absDest(valueOf(l.node, "dest"), "symlink dest", dest) {
			pl.claim(valueOf(l.node, "dest"), "symlink dest", dest, "symlink")
			link := Link{Dest: dest, Target: PolicyTarget(dest, target)}
			if tag, problem := relativeSymlinkTag(link.Dest, link.Target); tag != "" && !pl.overrides(tag) {
				pl.fs.warn(valueOf(l.node, "target"), "symlink target: %s -> %s %s, which lintian flags as an error (%s): write the target absolute, %s, or add %q to lintian-overrides with a comment saying why it must be so", link.Dest, link.Target, problem, tag, path.Join(path.Dir(link.Dest), link.Target), tag)
			}
			pl.pp.Symlinks = append(pl.pp.Symlinks, link)
			if _, _, _, ok := unitPlace(dest); ok {
				pl.pp.unitFiles = append(pl.pp.unitFiles, unitFile{dest: valueOf(l.node, "dest"), field: "symlink dest", path: dest}) // its place only: what it points to is checked where it is
			}
		}
	}
}

// relativeSymlinkTag is the error lintian's files/symbolic-links check
// raises for the relative symlink dest -> target as the package ships it
// (after PolicyTarget), and why; "" when it raises none. It walks the
// target's leading ".." from the link's folder as lintian does.
func relativeSymlinkTag(dest, target string) (tag, problem string) {
	if target == "" || path.IsAbs(target) || target == "." {
		return "", ""
	}
	dirs := strings.Split(strings.TrimPrefix(dest, "/"), "/")
	top := dirs[0]
	dirs = dirs[:len(dirs)-1]
	parts := strings.Split(target, "/")
	popped, lastPop := false, ""
	i := 0
	for ; i < len(parts); i++ {
		switch parts[i] {
		case ".":
			return "symlink-contains-spurious-segments", "holds a \".\" segment"
		case "..":
			if len(dirs) == 0 {
				return "symlink-has-too-many-up-segments", "climbs above the root"
			}
			popped, lastPop, dirs = true, dirs[len(dirs)-1], dirs[:len(dirs)-1]
			continue
		}
		break
	}
	if i == len(parts) {
		return "", "" // only "..": lintian's symlink-is-self-recursive, a warning
	}
	switch {
	case popped && parts[i] == lastPop:
		return "lengthy-symlink", "climbs out of " + lastPop + " and back into it"
	case len(dirs) == 0 && parts[i] != top:
		return "relative-symlink", "leads from the top-level folder /" + top + " into another one by a relative path"
	case slices.ContainsFunc(parts[i+1:], func(c string) bool { return c == "." || c == ".." }):
		return "symlink-contains-spurious-segments", "holds a \".\" or \"..\" segment after its start"
	}
	return "", ""
}

// PolicyTarget is the target of the symbolic link dest -> target as dh_link
// writes it: an absolute target in the link's own top-level folder
// (/usr/bin/x -> /usr/bin/y) is made relative (y), which Debian policy
// 10.5 asks for and lintian's absolute-symlink-in-top-level-folder flags;
// it names the same path. A relative target is kept as written: one into
// another top-level folder is lintian's relative-symlink, but some are
// meant so (base-files' /etc/os-release -> ../usr/lib/os-release, which
// must resolve inside a root looked at from outside). A target that names
// a folder the link is in (/usr for a link in /usr/bin), which lintian
// flags in every form, is kept too.
func PolicyTarget(dest, target string) string {
	dir := path.Dir(dest)
	top := func(p string) string { t, _, _ := strings.Cut(strings.TrimPrefix(p, "/"), "/"); return t }
	if !path.IsAbs(target) || dir == "/" || path.Clean(target) == dest || top(target) != top(dest) {
		return target
	}
	rel, err := filepath.Rel(dir, path.Clean(target))
	if err != nil || rel == "." || !slices.ContainsFunc(strings.Split(rel, "/"), func(s string) bool { return s != ".." }) {
		return target
	}
	return rel
}

// hardlinks renders the package's hardlinks: a further name of one of its
// files, which is not a conffile (dpkg replaces a conffile by a copy, and
// every path under /etc/ would be one).
func (pl *packageResolver) hardlinks() {
	for _, l := range pl.rp.Hardlinks {
		dn, tn := valueOf(l.node, "dest"), valueOf(l.node, "target")
		dest := pl.rd.render(dn, "hardlink dest", l.Dest)
		target := pl.rd.render(tn, "hardlink target", l.Target)
		if !pl.absDest(dn, "hardlink dest", dest) || !pl.absDest(tn, "hardlink target", target) {
			continue
		}
		i := slices.IndexFunc(pl.pp.Files, func(f ResolvedFile) bool { return f.Dest == target })
		switch {
		case i < 0:
			pl.fs.at(tn, "hardlink target: %s is not a file of package %s (a hardlink is another name of a file the package installs)", target, pl.pp.Name)
			continue
		case pl.pp.Files[i].Conffile:
			pl.fs.at(tn, "hardlink target: %s is a conffile, which dpkg replaces by a new file on upgrade: install a copy instead (a second file mapping)", target)
			continue
		case strings.HasPrefix(dest, "/etc/"):
			pl.fs.at(dn, "hardlink dest: %s is under /etc/, where it would be a conffile: install a copy instead (a second file mapping)", dest)
			continue
		}
		pl.claim(dn, "hardlink dest", dest, "file")
		pl.pp.Hardlinks = append(pl.pp.Hardlinks, Link{Dest: dest, Target: target})
	}
}

// ships reports whether the package installs dest as a file, a hardlink
// or a symlink.
func (pl *packageResolver) ships(dest string) bool {
	return slices.ContainsFunc(pl.pp.Files, func(f ResolvedFile) bool { return f.Dest == dest }) ||
		slices.ContainsFunc(pl.pp.Symlinks, func(l Link) bool { return l.Dest == dest }) ||
		slices.ContainsFunc(pl.pp.Hardlinks, func(l Link) bool { return l.Dest == dest })
}

// makesFolder reports whether the package installs the folder dir: a
// directory it states, or a folder above a path it installs (on a
// merged-/usr system too).
func (pl *packageResolver) makesFolder(dir string) bool {
	dir = usrMerged(dir) + "/"
	holds := func(p string) bool { return strings.HasPrefix(usrMerged(p)+"/", dir) }
	return slices.ContainsFunc(pl.pp.Directories, func(d ResolvedDir) bool { return holds(d.Path) }) ||
		slices.ContainsFunc(pl.pp.Files, func(f ResolvedFile) bool { return holds(f.Dest) }) ||
		slices.ContainsFunc(slices.Concat(pl.pp.Symlinks, pl.pp.Hardlinks), func(l Link) bool { return holds(l.Dest) })
}

// ldconfigDirs are the folders ldconfig reads shared libraries from
// besides the multiarch ones below /lib and /usr/lib, as lintian lists
// them (Lintian::Data::Architectures' ldconfig_folders).
var ldconfigDirs = []string{"/lib", "/lib32", "/lib64", "/libx32", "/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/libx32", "/usr/local/lib"}

// shipsLibraries reports whether the package installs a file, hardlink or
// symlink where ldconfig looks for shared libraries: in one of
// ldconfigDirs, or below a multiarch folder of /lib or /usr/lib
// (/usr/lib/x86_64-linux-gnu, with its hardware-capability subfolders).
// Lint cannot read a library's SONAME, so any name there counts.
func (pl *packageResolver) shipsLibraries() bool {
	inLdconfigDir := func(dest string) bool {
		dir := path.Dir(dest)
		if slices.Contains(ldconfigDirs, dir) {
			return true
		}
		for _, root := range []string{"/lib/", "/usr/lib/"} {
			if triplet, _, _ := strings.Cut(strings.TrimPrefix(dir, root), "/"); strings.HasPrefix(dir, root) && strings.Contains(triplet, "-linux-") {
				return true
			}
		}
		return false
	}
	return slices.ContainsFunc(pl.pp.Files, func(f ResolvedFile) bool { return inLdconfigDir(f.Dest) }) ||
		slices.ContainsFunc(slices.Concat(pl.pp.Symlinks, pl.pp.Hardlinks), func(l Link) bool { return inLdconfigDir(l.Dest) })
}

// systemdUnits checks that every unit the maintainer scripts enable is
// installed by the package.
func (pl *packageResolver) systemdUnits() {
	un := valueOf(pl.rp.node, "systemd-units")
	for i, u := range pl.rp.SystemdUnits {
		installed := false
		for _, d := range SystemdUnitDirs {
			installed = installed || pl.ships(d+u)
		}
		if !installed {
			pl.fs.at(elementAt(un, i), "systemd-units: %s is not installed by package %s (add a file with dest /lib/systemd/system/%s)", u, pl.rp.Name, u)
		}
	}
}

// cronDirRE is a folder of cron's as lintian's systemd check finds one
// (/etc/cron.d, /etc/cron.daily, ...), and timerRE a systemd timer unit.
var (
	cronDirRE = regexp.MustCompile(`^/etc/cron\.[^/]+$`)
	timerRE   = regexp.MustCompile(`^/(?:usr/)?lib/systemd/system/[^/]+\.timer$`)
)

// cronWithoutTimer warns at each cron job of a package that installs no
// systemd timer unit (lintian's missing-systemd-timer-for-cron-script, a
// warning): a systemd system without cron (minimal images, containers)
// never runs the job, and lint said nothing.
func (pl *packageResolver) cronWithoutTimer() {
	if len(pl.cronJobs) == 0 || pl.overrides("missing-systemd-timer-for-cron-script") {
		return
	}
	var dests []string
	for _, f := range pl.pp.Files {
		dests = append(dests, f.Dest)
	}
	for _, l := range slices.Concat(pl.pp.Symlinks, pl.pp.Hardlinks) {
		dests = append(dests, l.Dest)
	}
	if slices.ContainsFunc(dests, timerRE.MatchString) {
		return
	}
	for _, c := range pl.cronJobs {
		pl.fs.warn(c.at, "dest: %s is a cron job, and package %s installs no systemd timer unit (lintian's missing-systemd-timer-for-cron-script): a systemd system without cron (minimal images and containers have none) never runs it; install a NAME.timer (with its NAME.service) in /lib/systemd/system too, or add \"missing-systemd-timer-for-cron-script\" to lintian-overrides with a comment saying why cron is enough", c.dest, pl.pp.Name)
	}
}

// alternatives renders the update-alternatives entries: the path must be a
// file of the package, the link must not be.
func (pl *packageResolver) alternatives() []Alternative {
	var alts []Alternative
	rd, name := pl.rd, pl.rp.Name
	for _, al := range pl.rp.Alternatives {
		x := Alternative{Priority: al.Priority, node: al.node}
		x.Name = rd.render(valueOf(al.node, "name"), "alternative name", al.Name)
		x.Link = rd.render(valueOf(al.node, "link"), "alternative link", al.Link)
		x.Path = rd.render(valueOf(al.node, "path"), "alternative path", al.Path)
		if x.Name != "" && !alternativeRE.MatchString(x.Name) {
			pl.fs.at(valueOf(al.node, "name"), "alternative name: %q is not [A-Za-z0-9][A-Za-z0-9._+-]*", x.Name)
		}
		if pl.absDest(valueOf(al.node, "link"), "alternative link", x.Link) {
			if dir := path.Dir(x.Link); !baseFolders[usrMerged(dir)] && !pl.makesFolder(dir) {
				pl.fs.at(valueOf(al.node, "link"), "alternative link: %s is the folder of %s, which neither every Debian system has nor package %s installs: update-alternatives makes no folder, and the postinst would fail (error creating symbolic link): add %s to directories", dir, x.Link, name, dir)
			}
		}
		if pl.absDest(valueOf(al.node, "path"), "alternative path", x.Path) && !pl.ships(x.Path) {
			pl.fs.at(valueOf(al.node, "path"), "alternative path: %s is not installed by package %s", x.Path, name)
		}
		alts = append(alts, x)
	}
	return alts
}

// checkAlternatives refuses alternatives of the recipe's packages that
// update-alternatives cannot hold together: a link that two names manage
// (the second --install fails, "alternative link ... is already managed
// by ...", and with it the postinst), and a name given two links (the
// second --install renames the first's link away), merged-/usr's two
// names of a path counting as one; and a link where a package of the
// recipe (dests) installs something, or every Debian system has a folder:
// update-alternatives leaves a file or folder there as it is ("not
// replacing ... with a link"), and the alternative is never used.
func checkAlternatives(pps []ResolvedPackage, dests *placements, fs *findings) {
	type first struct{ other, pkg string }
	byLink, byName := map[string]first{}, map[string]first{}
	for _, pp := range pps {
		for _, a := range pp.alternatives {
			if a.Link == "" || a.Name == "" {
				continue // already refused
			}
			key := usrMerged(a.Link)
			if o, ok := dests.owner[key]; ok {
				kind, as := cmp.Or(dests.leaf[key], "directory"), ""
				if o.path != a.Link {
					as = " as " + o.path + aliasNote(a.Link, o.path)
				}
				fs.at(valueOf(a.node, "link"), "alternative link: %s is also a %s of package %s%s; update-alternatives manages the link, and would leave the %s as it is (not replacing it with a link)", a.Link, kind, o.pkg, as, kind)
			} else if baseFolders[key] {
				fs.at(valueOf(a.node, "link"), "alternative link: %s is a folder of every Debian system; update-alternatives would leave it as it is (not replacing it with a link): name the link itself, such as %s/%s", a.Link, a.Link, a.Name)
			}
			if f, ok := byLink[key]; ok && f.other != a.Name {
				fs.at(valueOf(a.node, "link"), "alternative link: %s is already the link of alternative %s (package %s); update-alternatives lets one name manage a link: give both the name %s", a.Link, f.other, f.pkg, f.other)
			} else if !ok {
				byLink[key] = first{a.Name, pp.Name}
			}
			if f, ok := byName[a.Name]; ok && f.other != a.Link {
				fs.at(valueOf(a.node, "link"), "alternative link: alternative %s already has the link %s (package %s); update-alternatives would move it to %s: one name has one link", a.Name, f.other, f.pkg, a.Link)
			} else if !ok {
				byName[a.Name] = first{a.Link, pp.Name}
			}
		}
	}
}

// checkArchIndependent refuses an Architecture: all package that resolves
// differently for some architecture of the recipe (plans, one per
// architecture, in the recipe's order): the build of every architecture
// writes it, under the one file name NAME_VERSION_all.deb, so a build of
// amd64 and a build of arm64 would give two packages, and two provenance
// records, of one name, version and architecture, and a repository takes
// only the first of them.
func (r *Recipe) checkArchIndependent(plans []*Resolved, fs *findings) {
	if len(plans) < 2 {
		return
	}
	for i, rp := range r.Packages {
		if rp.Architecture != "all" {
			continue
		}
		for _, p := range plans[1:] {
			if why := archDifference(plans[0], p, i); why != "" {
				fs.at(valueOf(rp.node, "architecture"), "architecture: all: package %s comes out differently for %s and %s (%s), but each architecture's build writes it as the same %s: make it the same for every architecture, or make it architecture: any",
					plans[0].Packages[i].Name, plans[0].Arch, p.Arch, why, plans[0].Packages[i].OutputFile)
				break
			}
		}
	}
}

// archDifference says how package i of plan b differs from that of plan a
// ("" when it does not): a source its files come from, or its own fields.
func archDifference(a, b *Resolved, i int) string {
	pa, pb := &a.Packages[i], &b.Packages[i]
	source := func(p *Resolved, name string) *ResolvedSource {
		if j := slices.IndexFunc(p.Sources, func(s ResolvedSource) bool { return s.Name == name }); j >= 0 {
			return &p.Sources[j]
		}
		return nil
	}
	seen := map[string]bool{}
	for _, f := range pa.Files {
		if f.Source == "" || seen[f.Source] {
			continue
		}
		seen[f.Source] = true
		sa, sb := source(a, f.Source), source(b, f.Source)
		switch {
		case sa == nil || sb == nil:
			continue // an unknown source, already refused
		case sa.URL != sb.URL:
			return fmt.Sprintf("its files come from source %s, %s for %s and %s for %s", f.Source, sa.URL, a.Arch, sb.URL, b.Arch)
		case !reflect.DeepEqual(sa, sb):
			return fmt.Sprintf("its files come from source %s, whose pins, signature or checksum file differ", f.Source)
		}
	}
	if !reflect.DeepEqual(pa, pb) {
		return "its fields or files render differently"
	}
	return ""
}

// addRelation adds a dependency on name unless an element of list (a
// relation a recipe wrote, already checked) names it among its alternatives.
func addRelation(list []string, name string) []string {
	for _, r := range list {
		groups, _ := deb.ParseRelations("Depends", r)
		for _, g := range groups {
			for _, alt := range g {
				if alt.Name == name {
					return list
				}
			}
		}
	}
	return append(list, name)
}

// checkRelation checks one element of a recipe's relation field (control
// field name field: "a (>= 1) | b") by pkg/deb's grammar, the one Write
// checks the package with.
func checkRelation(field, s string) error {
	if err := deb.CheckFieldText(s, false); err != nil {
		return err
	}
	_, err := deb.ParseRelations(field, s)
	if errors.Is(err, deb.ErrRelationSyntax) {
		return fmt.Errorf("not NAME [(OP VERSION)] [| ...] (e.g. \"libc6 (>= 2.34)\")")
	}
	return err
}

// DebControl returns the package's control fields as pkg/deb writes them.
func (pp *ResolvedPackage) DebControl() deb.Control {
	return deb.Control{
		Package: pp.Name, Version: pp.Version, Architecture: pp.Architecture, Maintainer: pp.Maintainer,
		PreDepends: pp.PreDepends, Depends: pp.Depends, Recommends: pp.Recommends, Suggests: pp.Suggests,
		Conflicts: pp.Conflicts, Breaks: pp.Breaks, Replaces: pp.Replaces, Provides: pp.Provides,
		Section: pp.Section, Priority: pp.Priority, Homepage: pp.Homepage,
		Summary: pp.Summary, Description: pp.Description,
	}
}

// DependsOnLibc6 is Depends with libc6 as the package's binaries need it,
// learnt from their bytes at build time (elfinfo.SharedLibraries): rel is
// "libc6 (>= 2.34)", "libc6", or "" when they need no glibc. It takes the
// place of the plain libc6 that dynamic: true adds, or is added when the
// recipe does not say dynamic. A libc6 relation the recipe writes itself
// is kept when it implies rel; an older floor (libc6 (>= 2.17) for
// binaries that need 2.34) gives way to rel, as dpkg-gencontrol keeps the
// stronger of two; an upper bound (libc6 (<< 2.40)) gets rel after it; one
// among alternatives is kept as written.
func (pp *ResolvedPackage) DependsOnLibc6(rel string) []string {
	deps := slices.Clone(pp.Depends)
	if !pp.libc6Added {
		if rel == "" {
			return deps
		}
		need, _ := deb.ParseRelations("Depends", rel)
		for i, d := range deps {
			if g, _ := deb.ParseRelations("Depends", d); len(g) == 1 && len(g[0]) == 1 && g[0][0].Name == "libc6" && g[0][0].Arch == "" {
				switch own := g[0][0]; {
				case implies(own, need[0][0]):
				case own.Op == ">=" || own.Op == ">>":
					deps[i] = rel
				default: // an upper bound: both hold
					deps = slices.Insert(deps, i+1, rel)
				}
				return deps
			}
		}
		if len(addRelation(deps, "libc6")) > len(deps) {
			deps = append(deps, rel)
		}
		return deps
	}
	i := slices.Index(deps, "libc6")
	if rel == "" {
		return slices.Delete(deps, i, i+1)
	}
	deps[i] = rel
	return deps
}

// DependsOnLibraries is deps (DependsOnLibc6's) with a relation on each
// of packages, the packages of other shared libraries the binaries need
// (elfinfo.Shlibs' Packages: libstdc++6), unless deps names it already
// (a recipe's own "libssl3 (>= 3.0.9)" is kept as written).
func DependsOnLibraries(deps, packages []string) []string {
	for _, p := range packages {
		deps = addRelation(deps, p)
	}
	return deps
}

// Control returns the package's DEBIAN/control paragraph with the given
// Installed-Size (KiB, which the .deb writer computes from the data it
// writes): the same renderer, deb.Control.Paragraph, that writes the shipped
// package, so that what `updeb verify --base` diffs is what ships.
func (pp *ResolvedPackage) Control(installedSizeKiB int64) control.Paragraph {
	c := pp.DebControl()
	return c.Paragraph(installedSizeKiB)
}

// LocalFiles returns the files on disk the resolved recipe reads besides the sources:
// keyrings, Sigstore public keys and recipe-folder files, sorted and without duplicates. A build's
// output depends on their content, so incremental builds and `updeb verify
// --base` hash them.
func (p *Resolved) LocalFiles() []string {
	var out []string
	for _, s := range p.Sources {
		if s.Signature != nil {
			out = append(out, s.Signature.KeyringPath)
		}
		if s.Sigstore != nil && s.Sigstore.PublicKeyPath != "" {
			out = append(out, s.Sigstore.PublicKeyPath)
		}
		if s.Checksums != nil && s.Checksums.Clearsigned != nil {
			out = append(out, s.Checksums.Clearsigned.KeyringPath)
		}
	}
	for _, pp := range p.Packages {
		for _, f := range pp.Files {
			if f.LocalPath != "" {
				out = append(out, f.LocalPath)
			}
		}
		for _, f := range pp.Fragments {
			out = append(out, f.LocalPath)
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}
