package recipe

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/updeb/updeb/pkg/deb"
)

// docDir is where a package's copyright and changelog go.
func docDir(pkg string) string { return "/usr/share/doc/" + pkg + "/" }

// changelogName is changelog.Debian.gz for versions with a Debian revision,
// changelog.gz otherwise (lintian's rule).
func changelogName(p *ResolvedPackage) string {
	if strings.Contains(p.Version, "-") {
		return "changelog.Debian.gz"
	}
	return "changelog.gz"
}

// generatedFiles returns copyright, changelog and (when there are any tags)
// lintian overrides for one package.
func generatedFiles(r *Recipe, p *Resolved, pp *ResolvedPackage, rp Package) []GeneratedFile {
	out := []GeneratedFile{
		{Dest: docDir(pp.Name) + "copyright", Content: copyrightFile(r), Mode: 0o644},
		{Dest: docDir(pp.Name) + changelogName(pp), Content: changelogFile(r, p, pp), Mode: 0o644},
	}
	pp.LintianOverrides, pp.dynamic = rp.Lintian, rp.Dynamic
	if o := pp.Overrides(nil); o != nil {
		out = append(out, GeneratedFile{Dest: OverridesPath(pp.Name), Content: o, Mode: 0o644})
	}
	return out
}

// OverridesPath is where a package's lintian overrides file goes.
func OverridesPath(pkg string) string { return "/usr/share/lintian/overrides/" + pkg }

// copyrightFile is a machine-readable (DEP-5) copyright file. It names no
// URL or architecture, so it is the same in every architecture's package.
func copyrightFile(r *Recipe) []byte {
	var b bytes.Buffer
	b.WriteString("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n")
	fmt.Fprintf(&b, "Upstream-Name: %s\n", r.Name)
	if r.Homepage != "" {
		fmt.Fprintf(&b, "Source: %s\n", r.Homepage)
	}
	b.WriteString("Comment: Upstream release binaries, verified and repackaged by updeb.\n\n")
	fmt.Fprintf(&b, "Files: *\nCopyright: %s\nLicense: %s\n", copyrightNotice(r), r.License)
	if r.LicenseText != "" {
		for _, l := range strings.Split(strings.TrimRight(r.LicenseText, "\n"), "\n") {
			l = strings.TrimRight(l, " \t")
			if l == "" {
				l = "."
			}
			b.WriteString(" " + l + "\n")
		}
	} else {
		fmt.Fprintf(&b, " On Debian systems, the full text of the %s license can be found in\n /usr/share/common-licenses/%s.\n", r.License, commonLicenses[r.License])
	}
	return b.Bytes()
}

// copyrightNotice is the Copyright field: the recipe's holder line, with the
// release year in front when it names no year (the release is a work published
// that year; lintian's copyright-without-copyright-notice asks for a year).
func copyrightNotice(r *Recipe) string {
	if yearPattern.MatchString(r.Copyright) {
		return r.Copyright
	}
	return fmt.Sprintf("%d %s", r.ReleaseDate.UTC().Year(), r.Copyright)
}

var yearPattern = regexp.MustCompile(`\b\d{4}\b`)

// changelogFile is a one-entry Debian changelog dated the release date,
// compressed with gzip -9, with no file name and mtime 0 in the header.
func changelogFile(r *Recipe, p *Resolved, pp *ResolvedPackage) []byte {
	text := fmt.Sprintf("%s (%s) unstable; urgency=medium\n\n  * Repackaged upstream release %s by updeb.\n\n -- %s  %s\n",
		r.Name, p.DebianVersion, r.Version, pp.Maintainer, p.SourceDateEpoch.UTC().Format("Mon, 02 Jan 2006 15:04:05 -0700"))
	var b bytes.Buffer
	zw := changelogGzip.get()
	defer changelogGzip.put(zw)
	zw.Reset(&b)
	zw.Write([]byte(text)) //nolint:errcheck // bytes.Buffer does not fail
	zw.Close()             //nolint:errcheck // bytes.Buffer does not fail
	return b.Bytes()
}

// changelogGzip keeps the writers changelogFile compresses with: each
// holds some 800 KB of tables (flate's at its best compression), and a new
// one for every package made a recipe of 3,000 packages allocate 4.8 GB
// to load. Reset gives the bytes of a new writer. A free list of its own,
// not a sync.Pool, which under the race detector drops a quarter of what
// it is given (and any time the collector runs).
var changelogGzip gzipWriters

// gzipWriters is a bounded free list of gzip writers at best compression.
type gzipWriters struct {
	mu   sync.Mutex
	free []*gzip.Writer
}

func (g *gzipWriters) get() *gzip.Writer {
	g.mu.Lock()
	defer g.mu.Unlock()
	if n := len(g.free); n > 0 {
		zw := g.free[n-1]
		g.free = g.free[:n-1]
		return zw
	}
	zw, _ := gzip.NewWriterLevel(nil, gzip.BestCompression) // the level is valid
	return zw
}

// put keeps zw for the next get, up to one per build running at once.
func (g *gzipWriters) put(zw *gzip.Writer) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.free) < 16 {
		g.free = append(g.free, zw)
	}
}

// BinaryFacts are what lintian's binary checks see in one installed file,
// learnt from its bytes at build time (internal/elfinfo).
type BinaryFacts struct {
	ELF        bool
	Unstripped bool // a symbol table (file(1): "not stripped"): unstripped-binary-or-object
	Static     bool // an executable that needs no shared library: statically-linked-binary
	// StaticPIE: a position-independent executable that needs no shared
	// library, which lintian takes for a shared object that lacks its
	// prerequisites: shared-library-lacks-prerequisites.
	StaticPIE bool
	// Unhardened are the hardening-no-* tags lintian raises on it
	// (elfinfo.Info's Unhardened).
	Unhardened []string
	// OtherLibc is lintian's library- or program-not-linked-against-libc
	// for a binary linked with musl (elfinfo.Info's NotLinkedAgainstLibc).
	OtherLibc string
}

// Justifications of the overrides updeb writes; lintian shows each with the
// tag it overrides (--show-overrides).
const (
	whyUnstripped = "Upstream's release binary, packaged byte for byte as published and verified: updeb never rebuilds or strips it."
	whyStatic     = "Upstream builds it statically (Go programs are, by design); lintian exempts Go programs it sees built from source, this one was built upstream."
	whyStaticPIE  = "Upstream builds it as a position-independent executable that needs no shared library (Go's -buildmode=pie without cgo, gcc -static-pie); lintian reads any PIE as a shared library, which should need some."
	whyMusl       = "Linked with musl's C library (libc.so, loaded by /lib/ld-musl-ARCH.so.1), not glibc's: lintian counts only glibc's libc.so.N as a C library."
	whyHardening  = "Upstream's release binary, built and linked by upstream with its own flags: updeb never rebuilds it, so Debian's hardening build flags cannot apply; lintian exempts Go programs it sees built from source, this one was built upstream."
	whyNoManual   = "Upstream publishes no manual page; the program documents itself (--help)."
	whyLicense    = "Upstream's own license file, installed as upstream ships it; the copyright file names the license too."
	whySystemd    = "A systemd service for systemd hosts (Debian's default init); no System V init script is provided."
	whyEmptyDir   = "The recipe states this directory: the package creates it empty, for what is put into it later (at run time, by the administrator or by other packages)."
	whyInitial    = "Not an upload to Debian: a repackaged upstream release for a local apt repository, so there is no ITP bug to close."
	whyRecipe     = "From the recipe's lintian-overrides (its comments say why)."
	whyPlainEtc   = "The recipe says conffile: false: the package's own file, replaced on every upgrade, not one for the administrator to change."
)

// override is one line of an overrides file: a tag, optionally limited to a
// file (lintian's pointer, without the leading /) and to the hint's text
// before the pointer (context).
type override struct{ tag, pointer, why, context string }

// permissionHints are the hints lintian's files/permissions check gives the
// package's files and directories (Lintian::Check::Files::Permissions,
// lintian 2.116, rule for rule), as overrides: every such mode is the
// recipe's own statement (updeb's defaults raise none), a setuid or setgid
// bit with the recipe's special-bits reason as the justification.
func (pp *ResolvedPackage) permissionHints() []override {
	var out []override
	files, _ := pp.installedFiles()
	for _, f := range files {
		out = append(out, fileHints(pp.Name, f)...)
	}
	for _, d := range pp.Directories {
		if h, ok := dirHint(d); ok {
			out = append(out, h)
		}
	}
	return out
}

// whyMode justifies a mode the recipe states.
func whyMode(m fs.FileMode, special string) string {
	if special != "" {
		return fmt.Sprintf("The recipe sets mode %04o on purpose (special-bits): %s", deb.UnixMode(m), special)
	}
	return fmt.Sprintf("The recipe states mode %04o for it: the file is meant to be so.", deb.UnixMode(m))
}

func fileHints(pkg string, f ResolvedFile) []override {
	m, o := deb.UnixMode(f.PackedMode()), ownerNames(f.Owner)
	identity := o.User + "/" + o.Group
	exec, setid := m&0o111 != 0, m&0o6000 != 0
	hint := func(tag, context string) override {
		return override{tag: tag, pointer: strings.TrimPrefix(f.Dest, "/"), why: whyMode(f.Mode, f.SpecialBits), context: context}
	}
	perm := fmt.Sprintf("%04o", m)
	if exec && identity == "root/games" && (m&0o2000 == 0 || m&0o755 != 0o755) {
		return []override{hint("non-standard-game-executable-perm", perm+" != 2755")}
	}
	var out []override
	if exec && m&0o444 != 0o444 {
		out = append(out, hint("executable-is-not-world-readable", perm))
	}
	if setid && m&^0o6000 != 0o755 && m != 0o4754 {
		out = append(out, hint("non-standard-setuid-executable-perm", perm))
	}
	switch {
	case setid && strings.Contains(pkg, "-suid"):
	case m&0o2000 != 0 && m&0o4000 == 0 && o.Group == "games" && gameBinRE.MatchString(f.Dest):
	case setid:
		out = append(out, hint("elevated-privileges", perm+" "+identity))
	case exec && m != 0o755:
		out = append(out, hint("non-standard-executable-perm", perm+" != 0755"))
	case exec:
	case m == 0o664 && identity == "root/games" && gameDataRE.MatchString(f.Dest):
	case strings.HasPrefix(f.Dest, "/usr/lib/") && strings.HasSuffix(f.Dest, ".ali") && m != 0o444:
		out = append(out, hint("bad-permissions-for-ali-file", ""))
	case m == 0o600 && strings.HasPrefix(f.Dest, "/etc/backup.d/"):
	case strings.HasPrefix(f.Dest, "/etc/sudoers.d/"):
		if m != 0o440 {
			out = append(out, hint("bad-perm-for-file-in-etc-sudoers.d", perm+" != 0440"))
		}
	case m != 0o644:
		out = append(out, hint("non-standard-file-perm", perm+" != 0644"))
	}
	return out
}

// Lintian's exceptions for games and temporary folders.
var (
	gameBinRE  = regexp.MustCompile(`^/usr/(lib/)?games/\S+`)
	gameDataRE = regexp.MustCompile(`^/var/(lib/)?games/\S+`)
	tmpDirRE   = regexp.MustCompile(`^(var/)?tmp/`)
)

func dirHint(d ResolvedDir) (override, bool) {
	m, o := deb.UnixMode(d.Mode), ownerNames(d.Owner)
	identity, name := o.User+"/"+o.Group, strings.TrimPrefix(d.Path, "/")+"/"
	switch {
	case m == 0o2775 && identity == "root/games" && gameDataRE.MatchString("/"+name):
	case m == 0o1777 && identity == "root/root" && (tmpDirRE.MatchString(name) || name == "var/lock/"):
	case m == 0o2775 && identity == "root/staff" && name == "var/local/":
	case m == 0o2775 && identity == "root/src" && name == "usr/src/":
	case m != 0o755:
		return override{tag: "non-standard-dir-perm", pointer: name, why: whyMode(d.Mode, d.SpecialBits), context: fmt.Sprintf("%04o != 0755", m)}, true
	}
	return override{}, false
}

// Overrides renders the package's lintian overrides file: for each tag
// lintian raises on what updeb makes of repackaged upstream binaries, an
// override limited to the files it concerns, under its justification, and
// the recipe's lintian-overrides. A tag is overridden only where it fires:
// the binary tags where facts say a file is an unstripped or a static ELF
// binary, one built without a hardening feature, or one linked with musl;
// facts nil, or not knowing a file (before its bytes are seen), means the
// worst for each executable from an upstream source (static unless the
// recipe says dynamic: true, and then without any hardening). It returns
// nil when there is nothing to override.
func (pp *ResolvedPackage) Overrides(facts func(dest string) (BinaryFacts, bool)) []byte {
	var ovs []override
	add := func(tag, dest, why string) {
		ovs = append(ovs, override{tag: tag, pointer: strings.TrimPrefix(dest, "/"), why: why})
	}
	files, bytesOf := pp.installedFiles()
	for i, f := range files {
		bf, ok := BinaryFacts{}, false
		if facts != nil {
			bf, ok = facts(bytesOf[i])
		}
		if !ok && f.Source != "" && f.Mode&0o111 != 0 {
			bf, ok = BinaryFacts{ELF: true, Unstripped: true, Static: !pp.dynamic}, true
			if pp.dynamic {
				bf.Unhardened = []string{"hardening-no-fortify-functions", "hardening-no-relro", "hardening-no-bindnow", "hardening-no-pie"}
			}
		}
		if ok && bf.ELF && bf.Unstripped && unstrippedFires(pp.Name, f.Dest) {
			add("unstripped-binary-or-object", f.Dest, whyUnstripped)
		}
		if ok && bf.ELF && bf.Static && staticFires(pp.Name, f.Dest) {
			add("statically-linked-binary", f.Dest, whyStatic)
		}
		if bf.StaticPIE && prerequisitesFire(f.Dest) {
			add("shared-library-lacks-prerequisites", f.Dest, whyStaticPIE)
		}
		for _, tag := range bf.Unhardened {
			add(tag, f.Dest, whyHardening)
		}
		if bf.OtherLibc != "" {
			add(bf.OtherLibc, f.Dest, whyMusl)
		}
		if f.Mode&0o111 == 0 && licenseFileRE.MatchString(path.Base(f.Dest)) && strings.HasPrefix(f.Dest, "/usr/share/doc/") && !bf.ELF {
			add("extra-license-file", f.Dest, whyLicense)
		}
		if !f.Conffile && plainEtcFires(f.Dest) {
			add("file-in-etc-not-marked-as-conffile", f.Dest, whyPlainEtc)
		}
	}
	ovs = append(ovs, pp.permissionHints()...)
	for _, d := range pp.emptyDirectories() {
		add("package-contains-empty-directory", d+"/", whyEmptyDir)
	}
	for _, c := range pp.commands() {
		add("no-manual-page", c, whyNoManual)
	}
	for _, u := range pp.servicesWithoutInitScript() {
		add("package-supports-alternative-init-but-no-init.d-script", u, whySystemd)
	}
	if strings.HasSuffix(pp.Version, "-1") {
		// One changelog entry, for a Debian revision 1, closing no bug.
		add("initial-upload-closes-no-bugs", docDir(pp.Name)+changelogName(pp)+":1", whyInitial)
	}
	var b bytes.Buffer
	last := ""
	for _, o := range ovs {
		if o.why != last {
			fmt.Fprintf(&b, "# %s\n", o.why)
			last = o.why
		}
		if o.context != "" {
			fmt.Fprintf(&b, "%s: %s %s [%s]\n", pp.Name, o.tag, o.context, overridePointer(o.pointer))
		} else {
			fmt.Fprintf(&b, "%s: %s [%s]\n", pp.Name, o.tag, overridePointer(o.pointer))
		}
	}
	first := true
	for _, t := range pp.LintianOverrides {
		tag, _, _ := strings.Cut(t, " ")
		if slices.ContainsFunc(ovs, func(o override) bool { return o.tag == tag }) {
			continue // updeb writes it, for exactly the files it concerns
		}
		if first {
			fmt.Fprintf(&b, "# %s\n", whyRecipe)
			first = false
		}
		fmt.Fprintf(&b, "%s: %s\n", pp.Name, t)
	}
	if b.Len() == 0 {
		return nil
	}
	return b.Bytes()
}

// nonASCII is a run of characters outside ASCII.
var nonASCII = regexp.MustCompile(`[^\x00-\x7f]+`)

// overridePointer is the path an override names, as the glob lintian
// matches it with (Regexp::Wildcards' jokers: * and ?, and a backslash
// escaping the next character): a backslash (systemd's "\x2d") is written
// "\\", and each run of characters outside ASCII as the wildcard *:
// lintian 2.116 reads the UTF-8 bytes of an installed path as Latin-1 when
// it names the path in a hint (usr/share/doc/x/Ã¼), so neither that form
// nor the true name would match in every lintian. A mismatched override is
// lintian's warning mismatched-override, with the hint shown anyway.
func overridePointer(p string) string {
	return nonASCII.ReplaceAllLiteralString(strings.ReplaceAll(p, `\`, `\\`), "*")
}

// emptyDirectories are the directories the recipe states that hold nothing
// of the package and where lintian's files/empty-directories check flags
// that (package-contains-empty-directory: not under /var or /etc, where a
// package may leave folders for dynamic data or generated configuration;
// not Perl's folders, nor in base-files).
func (pp *ResolvedPackage) emptyDirectories() []string {
	if pp.Name == "base-files" {
		return nil
	}
	var paths []string
	for _, f := range pp.Files {
		paths = append(paths, f.Dest)
	}
	for _, l := range slices.Concat(pp.Symlinks, pp.Hardlinks) {
		paths = append(paths, l.Dest)
	}
	for _, d := range pp.Directories {
		paths = append(paths, d.Path)
	}
	for _, g := range pp.GeneratedFiles {
		paths = append(paths, g.Dest)
	}
	paths = append(paths, OverridesPath(pp.Name))
	var out []string
	for _, d := range pp.Directories {
		if strings.HasPrefix(d.Path, "/var/") || strings.HasPrefix(d.Path, "/etc/") || perlDirRE.MatchString(d.Path) ||
			slices.ContainsFunc(paths, func(p string) bool { return strings.HasPrefix(p, d.Path+"/") }) {
			continue
		}
		out = append(out, d.Path)
	}
	return out
}

// perlDirRE are the Perl folders lintian's files/empty-directories check
// lets be empty.
var perlDirRE = regexp.MustCompile(`^/usr/(?:lib/(?:[^/]+/)?|share/)perl5$`)

// installedFiles are the package's files and, for each hardlink, its
// target's file under the hardlink's name (lintian sees every name of a
// file, with its bytes and mode), with the path that carries the bytes of
// each (the file itself, or the hardlink's target).
func (pp *ResolvedPackage) installedFiles() (files []ResolvedFile, bytesOf []string) {
	for _, f := range pp.Files {
		files, bytesOf = append(files, f), append(bytesOf, f.Dest)
	}
	for _, l := range pp.Hardlinks {
		if i := slices.IndexFunc(pp.Files, func(f ResolvedFile) bool { return f.Dest == l.Target }); i >= 0 {
			f := pp.Files[i]
			f.Dest = l.Dest
			files, bytesOf = append(files, f), append(bytesOf, l.Target)
		}
	}
	return files, bytesOf
}

// licenseFileRE is lintian's name of a license file (Files/Licenses.pm).
var licenseFileRE = regexp.MustCompile(`(?i)^(?:copying|licen[cs]e|l?gpl|bsd|artistic)[v0-9._-]*(?:\..*)?$`)

// plainEtcFires follows lintian's exceptions to file-in-etc-not-marked-as-conffile
// (Lintian::Check::Conffiles): a file under /etc that is no conffile, unless
// a README or System V's init.d skeleton, rc or rcS.
func plainEtcFires(dest string) bool {
	return strings.HasPrefix(dest, "/etc/") && !strings.HasSuffix(dest, "/README") &&
		dest != "/etc/init.d/skeleton" && dest != "/etc/init.d/rc" && dest != "/etc/init.d/rcS"
}

// unstrippedFires follows lintian's exceptions to unstripped-binary-or-object.
func unstrippedFires(pkg, dest string) bool {
	return !strings.HasSuffix(dest, ".o") && !strings.HasSuffix(dest, ".ko") && !strings.HasSuffix(pkg, "-dbg") &&
		!strings.HasPrefix(dest, "/usr/lib/debug/") && !strings.HasPrefix(dest, "/lib/debug/")
}

// staticFires follows lintian's exceptions to statically-linked-binary.
func staticFires(pkg, dest string) bool {
	return !strings.HasPrefix(dest, "/boot/") && !strings.HasSuffix(dest, "-static") && !strings.HasSuffix(dest, ".static") &&
		!strings.HasSuffix(pkg, "-static") && !strings.HasPrefix(dest, "/usr/lib/debug/") && dest != "/sbin/ldconfig"
}

// prerequisitesFire follows lintian's exceptions to
// shared-library-lacks-prerequisites (lintian 2.116, binaries/prerequisites):
// kernel and syslinux modules, detached debugging information, Guile's
// compiled files and the dynamic loader.
func prerequisitesFire(dest string) bool {
	name := strings.TrimPrefix(dest, "/")
	for _, p := range []string{"boot/modules/", "lib/modules/", "usr/lib/debug/"} {
		if strings.HasPrefix(name, p) {
			return false
		}
	}
	return !noPrerequisitesRE.MatchString(name)
}

// noPrerequisitesRE are the other names lintian exempts from
// shared-library-lacks-prerequisites.
var noPrerequisitesRE = regexp.MustCompile(`\.(?:[ce]32|e64)$|^usr/lib/jvm/.*\.debuginfo$|^usr/lib(?:/[^/]+)+/guile/[^/]+/.+\.go$|^lib(?:|32|x32|64)/(?:[-\w/]+/)?ld-[\d.]+\.so$`)

// commandDirs are where lintian looks for commands that need a manual page.
var commandDirs = []string{"/bin/", "/usr/bin/", "/usr/bin/X11/", "/usr/bin/mh/", "/usr/games/", "/sbin/", "/usr/sbin/", "/usr/libexec/"}

// commands are the files and links the package puts directly in a command
// folder without a manual page of the same name in the package.
func (pp *ResolvedPackage) commands() []string {
	dests := pp.InstalledPaths()
	manuals := map[string]bool{}
	for _, d := range dests {
		if strings.HasPrefix(d, "/usr/share/man/") {
			name := path.Base(d)
			name = strings.TrimSuffix(name, ".gz")
			manuals[strings.TrimSuffix(name, path.Ext(name))] = true
		}
	}
	var out []string
	for _, d := range dests {
		if slices.Contains(commandDirs, path.Dir(d)+"/") && !manuals[path.Base(d)] {
			out = append(out, d)
		}
	}
	sort.Strings(out)
	return out
}

// servicesWithoutInitScript are the package's systemd service units with no
// /etc/init.d script (nor a .path or .timer unit) of the same name.
func (pp *ResolvedPackage) servicesWithoutInitScript() []string {
	have := map[string]bool{}
	for _, f := range pp.Files {
		have[f.Dest] = true
	}
	var out []string
	for _, f := range pp.Files {
		dir, base := path.Dir(f.Dest)+"/", path.Base(f.Dest)
		svc, ok := strings.CutSuffix(base, ".service")
		if !ok || strings.Contains(svc, "@") || !slices.Contains(SystemdUnitDirs, dir) {
			continue
		}
		if !have["/etc/init.d/"+svc] && !have[dir+svc+".path"] && !have[dir+svc+".timer"] {
			out = append(out, f.Dest)
		}
	}
	return out
}

var shellSafeRE = regexp.MustCompile(`^[A-Za-z0-9_./+:@=,-]+$`)

// ShellQuote quotes s for sh when it needs it.
func ShellQuote(s string) string {
	if shellSafeRE.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// daemonReload is the units' part of postinst and postrm, as debhelper's:
// systemd reloads its units when it runs the system, and not when dpkg runs
// the script chrootless for another root ($DPKG_ROOT), whose units are not
// the running system's.
const daemonReload = "\t\tif [ -z \"${DPKG_ROOT:-}\" ] && [ -d /run/systemd/system ]; then\n\t\t\tsystemctl --system daemon-reload >/dev/null || true\n\t\tfi\n"

// part is updeb's generated part of a maintainer script: one case per
// argument group; the action runs for the first group, the others are
// accepted and do nothing, anything else is an error (Debian policy 6.5).
func part(name, actionCase, action, quietCases string) Script {
	var b strings.Builder
	b.WriteString("case \"$1\" in\n")
	fmt.Fprintf(&b, "\t%s)\n%s\t\t;;\n", actionCase, action)
	fmt.Fprintf(&b, "\t%s)\n\t\t;;\n", quietCases)
	fmt.Fprintf(&b, "\t*)\n\t\techo \"%s called with unknown argument '$1'\" >&2\n\t\texit 1\n\t\t;;\nesac\n", name)
	return Script{Name: name, Content: b.String()}
}

// postinstActs are the postinst arguments its actions run for: configure,
// and the error unwinds after which dpkg counts the package configured
// again although its prerm ran (remove or deconfigure in favour of a
// package whose installation failed, an upgrade that failed): the
// alternatives the prerm removed must come back (debhelper's snippets act on
// the same four).
const postinstActs = "configure|abort-upgrade|abort-remove|abort-deconfigure"

// maintainerScripts generates the parts of postinst, prerm and postrm for
// the common cases: a system user (and the paths the package gives it,
// unless dpkg-statoverride says otherwise), the stated mode and owner of
// the package's other folders (dpkg leaves a folder that exists as it is),
// systemd units (installed, never started or enabled: only daemon-reload),
// and update-alternatives. Every action is idempotent.
func maintainerScripts(pp *ResolvedPackage, rp Package, alts []Alternative) []Script {
	var postinst, prerm, postrm strings.Builder
	if u := rp.SystemUser; u != nil {
		systemUser(&postinst, pp, u)
	}
	statedFolders(&postinst, pp, rp.SystemUser)
	for _, a := range alts {
		fmt.Fprintf(&postinst, "\t\tupdate-alternatives --install %s %s %s %d\n", ShellQuote(a.Link), ShellQuote(a.Name), ShellQuote(a.Path), a.Priority)
		fmt.Fprintf(&prerm, "\t\tupdate-alternatives --remove %s %s\n", ShellQuote(a.Name), ShellQuote(a.Path))
	}
	if len(rp.SystemdUnits) > 0 {
		postinst.WriteString(daemonReload)
		postrm.WriteString(daemonReload)
	}
	var out []Script
	if postinst.Len() > 0 {
		out = append(out, part("postinst", postinstActs, postinst.String(), "triggered"))
	}
	if prerm.Len() > 0 {
		out = append(out, part("prerm", "remove|deconfigure", prerm.String(), "upgrade|failed-upgrade"))
	}
	if postrm.Len() > 0 {
		out = append(out, part("postrm", "remove|purge", postrm.String(), "upgrade|failed-upgrade|abort-install|abort-upgrade|disappear"))
	}
	return out
}

// systemUser writes the postinst's part for the system user u: the account
// (adduser on the running system; useradd --prefix in $DPKG_ROOT when dpkg
// runs the script chrootless for another root, so that the account lands in
// that root and the running system is left alone), then the paths the
// package gives it: by name, or in $DPKG_ROOT by the ids the root's own
// files give the account.
func systemUser(b *strings.Builder, pp *ResolvedPackage, u *SystemUser) {
	args, home, group := "--system --quiet", "/nonexistent", "nogroup"
	if u.Group {
		args += " --group"
		group = u.Name
	}
	switch {
	case u.Home == "":
		args += " --no-create-home --home /nonexistent"
	case pp.holds(u.Home):
		// dpkg made the home, root's, before the postinst runs: adduser
		// would leave it as it is all the same, warning on every first
		// installation that it "does not belong to the user you are
		// currently creating". The lines below give it to the user where
		// the package says it is the user's.
		args += " --no-create-home --home " + ShellQuote(u.Home)
		home = u.Home
	default:
		args += " --home " + ShellQuote(u.Home)
		home = u.Home
	}
	line := scriptLines(b)
	id := func(file string) string {
		return fmt.Sprintf(`$(sed -n 's/^%s:[^:]*:\([0-9]*\):.*/\1/p' "$DPKG_ROOT/etc/%s")`, u.Name, file)
	}
	line(2, `if [ -z "${DPKG_ROOT:-}" ]; then`)
	line(3, "if ! getent passwd %s >/dev/null; then", u.Name)
	line(4, "adduser %s %s", args, u.Name)
	line(3, "fi")
	if u.Group {
		// An account that was there before the package (made by hand,
		// by configuration management, from a directory service) may
		// have no group of its name, and adduser leaves an existing
		// account as it is: chown to that group would fail, and the
		// postinst with it. As groupadd --force below.
		line(3, "if ! getent group %s >/dev/null; then", u.Name)
		line(4, "addgroup --system --quiet %s", u.Name)
		line(3, "fi")
	}
	line(3, "updeb_user=%s updeb_group=%s", u.Name, group)
	line(2, "else")
	line(3, "# dpkg --root with --force-script-chrootless: the account goes into $DPKG_ROOT.")
	line(3, `if [ ! -f "$DPKG_ROOT/etc/passwd" ] || [ ! -f "$DPKG_ROOT/etc/group" ]; then`)
	line(4, `echo "%s: $DPKG_ROOT has no etc/passwd or etc/group (base-passwd) to add the system user %s to" >&2`, pp.Name, u.Name)
	line(4, "exit 1")
	line(3, "fi")
	if u.Group {
		line(3, `groupadd --prefix "$DPKG_ROOT" --system --force %s`, u.Name)
	}
	line(3, "updeb_user=%s", id("passwd"))
	line(3, `if [ -z "$updeb_user" ]; then`)
	line(4, `useradd --prefix "$DPKG_ROOT" --system --gid %s --home-dir %s --shell /usr/sbin/nologin %s`, group, ShellQuote(home), u.Name)
	line(4, "updeb_user=%s", id("passwd"))
	line(3, "fi")
	if u.Group {
		line(3, "updeb_group=%s", id("group"))
	} else {
		line(3, "updeb_group=nogroup")
	}
	if u.Home != "" {
		// As adduser: a missing home is made, the user's; one that exists is left as it is.
		line(3, `if [ ! -e "$DPKG_ROOT"%s ]; then`, ShellQuote(home))
		line(4, `mkdir -p "$DPKG_ROOT"%s`, ShellQuote(home))
		line(4, `chown "$updeb_user:$updeb_group" "$DPKG_ROOT"%s`, ShellQuote(home))
		line(3, "fi")
	}
	line(2, "fi")
	paths := pp.ownedBy(u)
	dirs := pp.writableFolders(u)
	for _, o := range paths {
		if o.dir {
			dirs = append(dirs, o.path)
		}
	}
	who := func(o deb.Owner) string {
		user, grp := o.User, o.Group
		if user == u.Name {
			user = "$updeb_user"
		}
		if u.Group && grp == u.Name {
			grp = "$updeb_group"
		}
		return user + ":" + grp
	}
	keepStated(line, pp, paths, who, dirs, func(owned) string { return "not given to " + u.Name }, "give it with chown")
}

// statedFolders writes the postinst's part that gives each folder the
// package states with a mode or owner other than an implied parent's
// (root:root 0755), other than the system user's (u, nil when none; those
// are systemUser's), that mode and owner, with keepStated's guards: dpkg
// leaves a folder that exists as it is, so a node upgraded from a version
// that made /etc/NAME/pki 0755, or one where the folder was there before
// the first installation, kept it open where the package now says 0700.
func statedFolders(b *strings.Builder, pp *ResolvedPackage, u *SystemUser) {
	var stated []owned
	for _, d := range pp.Directories {
		o, m := ownerNames(d.Owner), deb.UnixMode(d.Mode)
		_, knownUser := baseUsers[o.User]
		_, knownGroup := baseGroups[o.Group]
		switch {
		case u.owns(d.Owner), m == 0o755 && o.User == "root" && o.Group == "root":
		case baseFolders[usrMerged(d.Path)]:
			// Every system has it, another package's too: it keeps its
			// own mode and owner (lint says so).
		case !knownUser || !knownGroup:
			// An account of a package this one pre-depends on: its id is
			// not known here, and the mode alone (0700 root's) could shut
			// it out of its folder.
		default:
			stated = append(stated, owned{d.Path, o, d.Mode, true})
		}
	}
	if len(stated) == 0 {
		return
	}
	dirs := pp.writableFolders(u)
	// base-passwd's ids, the same on every Debian system (and in
	// $DPKG_ROOT): the ones the package's own data.tar carries.
	who := func(o deb.Owner) string { return fmt.Sprintf("%d:%d", o.UID, o.GID) }
	notDone := func(o owned) string {
		return fmt.Sprintf("not made %s:%s %04o", o.owner.User, o.owner.Group, deb.UnixMode(o.mode))
	}
	keepStated(scriptLines(b), pp, stated, who, dirs, notDone, "set them with chown and chmod")
}

// writableFolders are the folders the package states that an account other
// than root may write to (its owner's, a group's it may write to, or any
// account's): such an account may rename what is in one and put a link in
// its place, so the postinst's chown and chmod must follow no link on the
// way through them, whichever account the path they change is given to.
// The home of the system user u (nil: none) is one too.
func (pp *ResolvedPackage) writableFolders(u *SystemUser) []string {
	var dirs []string
	for _, d := range pp.Directories {
		o, m := ownerNames(d.Owner), deb.UnixMode(d.Mode)
		if o.User != "root" || o.Group != "root" && m&0o020 != 0 || m&0o002 != 0 {
			dirs = append(dirs, d.Path)
		}
	}
	if u != nil && u.Home != "" {
		dirs = append(dirs, path.Clean(u.Home))
	}
	return dirs
}

// scriptLines returns a function that writes one line of a maintainer
// script to b, indented depth tabs.
func scriptLines(b *strings.Builder) func(depth int, format string, a ...any) {
	return func(depth int, format string, a ...any) {
		b.WriteString(strings.Repeat("\t", depth))
		fmt.Fprintf(b, format, a...)
		b.WriteString("\n")
	}
}

// keepStated writes the postinst's lines that give each of paths its
// stated owner (who writes it as chown's argument) and, for a folder or a
// setuid or setgid file, its mode, unless dpkg-statoverride holds an
// override for it, a folder on the way (one of dirs, the folders another
// account may write to, or inside one) is a link, or the path is a folder
// dpkg-query -S names a package of another recipe for, or none: then it
// says so on stderr, notDone saying what is not done to the path and fix
// how to do it by hand.
func keepStated(line func(int, string, ...any), pp *ResolvedPackage, paths []owned, who func(deb.Owner) string, dirs []string, notDone func(owned) string, fix string) {
	for _, o := range paths {
		var noLinks string
		for _, a := range swappable(o.path, dirs) {
			noLinks += fmt.Sprintf(` && [ ! -L "$DPKG_ROOT"%s ]`, ShellQuote(a))
		}
		line(2, "if ! dpkg-statoverride --list %s >/dev/null 2>&1%s; then", ShellQuote(globLiteral(o.path)), noLinks)
		in := 3
		if o.dir {
			// dpkg leaves a folder that exists as it is: one a package of
			// another recipe has too (/etc/ssh, /var/log/apt) stays as that
			// package and the system made it. dpkg-query takes $DPKG_ROOT
			// and $DPKG_ADMINDIR from dpkg, and says "A, B: PATH", with a
			// package of a foreign architecture as NAME:ARCH (an i386
			// package on an amd64 node): the package is the recipe's all
			// the same.
			line(3, `updeb_pkgs=$(dpkg-query -S %s 2>/dev/null) || updeb_pkgs=`, ShellQuote(globLiteral(o.path)))
			line(3, `updeb_other=`)
			line(3, `for updeb_p in $(echo "${updeb_pkgs%%%%: /*}" | tr , ' '); do`)
			ours := pp.recipePackages
			if len(ours) == 0 {
				ours = []string{pp.Name}
			}
			line(4, `case ${updeb_p%%%%:*} in %s) ;; *) updeb_other="$updeb_other${updeb_other:+, }$updeb_p" ;; esac`, strings.Join(ours, "|"))
			line(3, "done")
			line(3, `if [ -n "$updeb_pkgs" ] && [ -z "$updeb_other" ]; then`)
			in = 4
		}
		// The user may have put a link where the path was (in a folder of
		// its own, and dpkg keeps a link to a folder where the package has
		// a folder): chown and chmod would give what it leads to (/etc,
		// /etc/shadow) to the user. chown -h changes only the link.
		line(in, `chown -h "%s" "$DPKG_ROOT"%s`, who(o.owner), ShellQuote(o.path))
		if o.dir || o.mode&(fs.ModeSetuid|fs.ModeSetgid) != 0 {
			// chown clears setuid and setgid: set the mode again. A
			// folder gets its mode too: dpkg leaves one that exists as it
			// is, so a system upgraded from a version that gave it another
			// mode (0750, now 0700) would keep that one.
			line(in, `[ -L "$DPKG_ROOT"%s ] || chmod %04o "$DPKG_ROOT"%s`, ShellQuote(o.path), deb.UnixMode(o.mode), ShellQuote(o.path))
		}
		if o.dir {
			line(3, "else")
			// Left as it is where dpkg-query names no package too: the
			// folder's owners are not known.
			line(4, `if [ -n "$updeb_other" ]; then`)
			line(5, `echo %s"$updeb_other"%s >&2`, ShellQuote(fmt.Sprintf("%s: %s is also a folder of ", pp.Name, o.path)), ShellQuote(": left as it is, "+notDone(o)))
			line(4, "else")
			line(5, `echo %s >&2`, ShellQuote(fmt.Sprintf("%s: %s: dpkg-query -S names no package that has it, so updeb cannot tell whether another package shares it: left as it is, %s; %s if no other package uses it", pp.Name, o.path, notDone(o), fix)))
			line(4, "fi")
			line(3, "fi")
		}
		line(2, "fi")
	}
}

// holds reports whether dpkg makes the folder dir when it unpacks the
// package: a stated directory, or the folder of something the package
// installs.
func (pp *ResolvedPackage) holds(dir string) bool {
	dir = path.Clean(dir)
	paths := pp.InstalledPaths()
	for _, d := range pp.Directories {
		paths = append(paths, d.Path)
	}
	return slices.ContainsFunc(paths, func(p string) bool { return p == dir || strings.HasPrefix(p, dir+"/") })
}

// swappable returns the folders on the way to p that an account other
// than root could have replaced with a link: those inside one of dirs (its
// folders, whose entries it may rename). chown -h follows a link on the
// way, and would give what it leads to (/etc/ssh for
// /var/lib/x/state/ssh where state is a link to /etc) to the account.
func swappable(p string, dirs []string) []string {
	var out []string
	for a := path.Dir(p); a != "/"; a = path.Dir(a) {
		if slices.ContainsFunc(dirs, func(d string) bool { return strings.HasPrefix(a, d+"/") }) {
			out = append(out, a)
		}
	}
	slices.Reverse(out)
	return out
}

// owns reports whether a path of owner o belongs to the system user u or
// its group (u nil: there is none).
func (u *SystemUser) owns(o deb.Owner) bool {
	return u != nil && (o.User == u.Name || u.Group && o.Group == u.Name)
}

// globLiteral escapes the glob characters of p: dpkg-statoverride --list
// takes a pattern, and "/usr/lib/x[1]/f" as one would miss that path's own
// override (and could match another's).
func globLiteral(p string) string {
	var b strings.Builder
	for _, r := range p {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// owned is a path of the package that its system user owns.
type owned struct {
	path  string
	owner deb.Owner
	mode  fs.FileMode
	dir   bool
}

// ownedBy lists the files and directories of the package owned by the
// system user u or its group, directories first (by path), then files.
func (pp *ResolvedPackage) ownedBy(u *SystemUser) []owned {
	var out []owned
	for _, d := range pp.Directories {
		if u.owns(d.Owner) {
			out = append(out, owned{d.Path, ownerNames(d.Owner), d.Mode, true})
		}
	}
	for _, f := range pp.Files {
		if u.owns(f.Owner) {
			out = append(out, owned{f.Dest, ownerNames(f.Owner), f.Mode, false})
		}
	}
	return out
}

// ownerNames fills empty names with root.
func ownerNames(o deb.Owner) deb.Owner {
	if o.User == "" {
		o.User = "root"
	}
	if o.Group == "" {
		o.Group = "root"
	}
	return o
}

// fragmentToken is the line of a fragment that updeb's generated part
// replaces, as debhelper's #DEBHELPER#.
const fragmentToken = "#UPDEB#"

// MaxFragment is the largest maintainer-script fragment a recipe may give.
const MaxFragment = 256 << 10

// MergeScripts returns the maintainer scripts the package carries: for each
// script, updeb's generated part (pp.Scripts) and the recipe's fragment
// (content: Fragment.Script -> its bytes) in one "#!/bin/sh", "set -e"
// script that ends with "exit 0". A fragment may place the generated part
// itself with a line "#UPDEB#"; otherwise preinst and postinst run the
// generated part first and the fragment after it (a user exists before the
// fragment runs), prerm and postrm the fragment first (it stops what it
// started before the alternatives go). It checks each fragment: text
// without NUL, no "#!" line of its own (updeb writes it), at most one
// "#UPDEB#" line.
func (pp *ResolvedPackage) MergeScripts(content map[string][]byte) ([]Script, error) {
	generated := map[string]string{}
	for _, s := range pp.Scripts {
		generated[s.Name] = s.Content
	}
	fragment := map[string]Fragment{}
	for _, f := range pp.Fragments {
		fragment[f.Script] = f
	}
	var out []Script
	for _, name := range scriptNames {
		gen, hasGen := generated[name]
		f, hasFrag := fragment[name]
		if !hasGen && !hasFrag {
			continue
		}
		var text string
		if hasFrag {
			var err error
			if text, err = checkFragment(f, content[name]); err != nil {
				return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
			}
			if !hasGen && !hasCommands(text) {
				continue // a script of comments only: lintian's maintainer-script-empty, and nothing to run
			}
		}
		var b strings.Builder
		b.WriteString("#!/bin/sh\n")
		if hasFrag {
			fmt.Fprintf(&b, "# %s for %s, generated by updeb with the recipe's fragment %s.\n", name, pp.Name, f.File)
		} else {
			fmt.Fprintf(&b, "# %s for %s, generated by updeb.\n", name, pp.Name)
		}
		b.WriteString("set -e\n\n")
		if hasFrag && hasGen {
			gen = "# updeb's part:\n" + gen + "# end of updeb's part\n"
		}
		switch lines := strings.SplitAfter(text, "\n"); {
		case !hasFrag:
			text = gen
		case tokenLine(text) > 0:
			lines[tokenLine(text)] = gen
			text = strings.Join(lines, "")
		case name == "preinst" || name == "postinst":
			text = gen + text
		default:
			text += gen
		}
		b.WriteString(text)
		b.WriteString("\nexit 0\n")
		out = append(out, Script{Name: name, Content: b.String()})
	}
	return out, nil
}

// checkFragment checks a fragment's bytes and returns them as text that
// starts and ends with a newline.
func checkFragment(f Fragment, data []byte) (string, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("scripts.%s: %s: %s", f.Script, f.LocalPath, fmt.Sprintf(format, args...))
	}
	text := string(data)
	switch {
	case len(data) > MaxFragment:
		return "", bad("%d bytes, more than the %d KiB a fragment may have", len(data), MaxFragment>>10)
	case strings.IndexByte(text, 0) >= 0:
		return "", bad("contains a NUL byte: a fragment is shell text")
	case !utf8.ValidString(text):
		return "", bad("is not UTF-8 text")
	case strings.HasPrefix(text, "#!"):
		return "", bad("starts with a #! line: updeb writes the script's #!/bin/sh and set -e; give only the commands")
	case strings.Contains(text, "\r"):
		return "", bad("has carriage returns (a file saved with DOS line ends): /bin/sh would read them as part of each command")
	case strings.ContainsRune(text, '\ufeff'):
		return "", bad("holds a byte order mark (U+FEFF, as some editors start a file): /bin/sh would read it as part of a command, and the script fails where the fragment runs")
	}
	text = "\n" + strings.TrimRight(text, "\n") + "\n"
	var at []string
	for i, line := range strings.Split(text, "\n") {
		switch {
		case isTokenLine(line):
			at = append(at, strconv.Itoa(i))
		case strings.Contains(line, fragmentToken):
			return "", bad("line %d: %s must stand alone on its line (blanks around it allowed), where updeb puts its part of the script; write it nowhere else, not even in a comment or a string", i, fragmentToken)
		}
	}
	if len(at) > 1 {
		return "", bad("has %d %s lines (lines %s); at most one says where updeb's part goes", len(at), fragmentToken, strings.Join(at, ", "))
	}
	return text, nil
}

// hasCommands reports whether a fragment holds a line other than blanks
// and comments (the #UPDEB# line is one).
func hasCommands(text string) bool {
	for line := range strings.Lines(text) {
		if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "#") {
			return true
		}
	}
	return false
}

// callsMaintscriptHelper reports whether a fragment's text names
// dpkg-maintscript-helper outside a comment line, as lintian's
// maintainer-script-should-not-use-dpkg-maintscript-helper finds it.
func callsMaintscriptHelper(text string) bool {
	for line := range strings.Lines(text) {
		if t := strings.TrimSpace(line); !strings.HasPrefix(t, "#") && strings.Contains(t, "dpkg-maintscript-helper") {
			return true
		}
	}
	return false
}

// isTokenLine reports whether a fragment's line is the #UPDEB# line: the
// token alone, with blanks (spaces, tabs) around it, so that it may be
// indented inside an if or case block.
func isTokenLine(line string) bool {
	return strings.Trim(line, " \t") == fragmentToken
}

// tokenLine returns the index of the #UPDEB# line among text's lines (0 when
// there is none; text starts with a newline, as checkFragment returns it).
func tokenLine(text string) int {
	for i, line := range strings.Split(text, "\n") {
		if isTokenLine(line) {
			return i
		}
	}
	return 0
}

// exitLineRE is an unindented exit command: one the shell runs at the top
// level of a fragment, whatever the script's argument.
var exitLineRE = regexp.MustCompile(`^exit([ \t;]|$)`)

// exitBeforePart returns the line (from 1) of an unindented exit in a
// fragment of script name (text as checkFragment returns it) that runs
// before updeb's part of the script: above the #UPDEB# line, or anywhere in
// a prerm or postrm fragment without one, which runs first; 0 when none.
// The script then ends there, and updeb's part (update-alternatives
// --remove, daemon-reload) never runs.
func exitBeforePart(name, text string) int {
	token := tokenLine(text)
	if token == 0 && (name == "preinst" || name == "postinst") {
		return 0
	}
	for i, line := range strings.Split(text, "\n") {
		if token > 0 && i >= token {
			break
		}
		if exitLineRE.MatchString(line) {
			return i
		}
	}
	return 0
}

// systemctlRE is a line that lintian's maintainer-script-calls-systemctl
// finds (Lintian::Check::MaintainerScripts::Systemctl): systemctl at its
// start or after a ";", other than daemon-reload, on a line that is not a
// comment.
var systemctlRE = regexp.MustCompile(`^(?:.+;)?\s*systemctl\b`)

// systemdGuardRE is the test for a running systemd that the warning at a
// systemctl call advises: [ -d /run/systemd/system ], or test -d.
var systemdGuardRE = regexp.MustCompile(`(?:\[|\btest)\s+-d\s+/run/systemd/system/?(?:\s|\]|;|$)`)

// systemctlWordRE is the word systemctl.
var systemctlWordRE = regexp.MustCompile(`\bsystemctl\b`)

// ifFiRE finds the words of an if where a command starts (the start of
// the line, or after ;, &, | or a space).
var ifFiRE = regexp.MustCompile(`(?:^|[;&|\s])(if|elif|then|else|fi)(?:$|[;\s])`)

// callsSystemctl returns the first line (from 1) of a fragment (text as
// checkFragment returns it) that calls systemctl as lintian finds it, where
// systemd may not be running; 0 when none. A call after the systemdGuardRE
// test on its line, or in the then of an if whose condition holds it, is
// guarded, as the warning advises (and as the gate's fragment that stops a
// unit gone is), and passes: it was warned at all the same.
func callsSystemctl(text string) int {
	var ifs []bool  // the open ifs, whether each is in a guarded then
	var cond string // the condition of an if read up to its then
	inCond := false
	for i, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		if systemctlRE.MatchString(line) && !strings.Contains(line, "daemon-reload") && !slices.Contains(ifs, true) {
			// guarded on its line: the test before the first call
			g, c := systemdGuardRE.FindStringIndex(line), systemctlWordRE.FindStringIndex(line)
			if g == nil || c == nil || g[0] > c[0] {
				return i
			}
		}
		from := 0
		for _, w := range ifFiRE.FindAllStringSubmatchIndex(line, -1) {
			if inCond {
				cond += line[from:w[2]]
			}
			switch line[w[2]:w[3]] {
			case "if":
				ifs = append(ifs, false)
				inCond, cond = true, ""
			case "elif":
				inCond, cond = len(ifs) > 0, ""
			case "then":
				if inCond {
					ifs[len(ifs)-1] = systemdGuardRE.MatchString(cond)
				}
				inCond = false
			case "else":
				if len(ifs) > 0 {
					ifs[len(ifs)-1] = false
				}
			case "fi":
				if len(ifs) > 0 {
					ifs = ifs[:len(ifs)-1]
				}
			}
			from = w[3]
		}
		if inCond {
			cond += line[from:] + "\n"
		}
	}
	return 0
}

// FragmentForLint returns a fragment's bytes as the shell checkers should
// read them: the #UPDEB# line replaced by ":" (a command that does nothing,
// as updeb's part is a complete command; a comment alone would leave an
// empty "then" or case arm, which the shell refuses), every line at its
// place; and the number of that line (from 1; 0 when there is none).
func FragmentForLint(data []byte) ([]byte, int) {
	lines := strings.SplitAfter(string(data), "\n")
	for i, line := range lines {
		if isTokenLine(strings.TrimSuffix(line, "\n")) {
			lines[i] = strings.Replace(line, fragmentToken, ":", 1)
			return []byte(strings.Join(lines, "")), i + 1
		}
	}
	return data, 0
}
