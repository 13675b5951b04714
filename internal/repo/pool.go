package repo

import (
	"context"
	"crypto/md5" //nolint:gosec // MD5sum is a Packages field for old tools, never a trust anchor
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/updeb/updeb/internal/aptname"
	"github.com/updeb/updeb/internal/confined"
	"github.com/updeb/updeb/internal/dirglob"
	"github.com/updeb/updeb/pkg/atomicfile"
	"github.com/updeb/updeb/pkg/control"
	"github.com/updeb/updeb/pkg/ctxio"
	"github.com/updeb/updeb/pkg/deb"
	"github.com/updeb/updeb/pkg/debversion"
)

// Package is one .deb to publish: where it is, its control paragraph (read by
// the caller, for example with deb.InspectFile) and, once copied into the pool,
// its size, digests and pool path. Publish fills Size, the digests and Filename.
type Package struct {
	Path    string            // the .deb file to publish
	Control control.Paragraph // its DEBIAN/control paragraph
	// Contents are the paths it installs, as ContentsOf gives them from
	// the same reading of the .deb as Control (for the Contents indices);
	// nil: Publish reads them from the .deb.
	Contents []string

	Filename string // path in the repository, "pool/<component>/<prefix>/<source>/<file>.deb"
	Size     int64
	MD5      string // for the Packages MD5sum field only; apt verifies SHA256/SHA512
	// SHA256, when the caller sets it, is the digest of the bytes Control
	// was read from: the copy into the pool must have it, or Publish
	// refuses the package (the file changed between the two readings, and
	// the index would list one package's control with another's bytes).
	SHA256 string
	SHA512 string
}

// ErrInvalid is wrapped by every error about a malformed package, suite,
// component or architecture (the caller's input, not the repository's state).
var ErrInvalid = errors.New("repo: invalid input")

// key identifies a published binary package within a component.
type key struct{ name, version, arch string }

func (k key) String() string { return k.name + "=" + k.version + " (" + k.arch + ")" }

// identity checks the fields a Packages stanza and the pool path need.
func identity(p control.Paragraph, subject string) (key, error) {
	k := key{p.Value("Package"), p.Value("Version"), p.Value("Architecture")}
	switch {
	case !deb.ValidPackageName(k.name):
		return k, fmt.Errorf("%w: %s: Package %q is not a valid package name (%s)", ErrInvalid, subject, k.name, deb.PackageNamePattern)
	case !validVersion(k.version):
		return k, fmt.Errorf("%w: %s: Version %q is not a valid Debian version", ErrInvalid, subject, k.version)
	case aptname.Architecture(k.arch) != nil:
		return k, fmt.Errorf("%w: %s: Architecture %q is not a valid architecture", ErrInvalid, subject, k.arch)
	}
	return k, nil
}

// sourceName returns the Source field's package name (without a version in
// parentheses), or the binary package name when there is no Source field.
func sourceName(p control.Paragraph) string {
	src := strings.TrimSpace(p.Value("Source"))
	if i := strings.IndexByte(src, ' '); i >= 0 {
		src = src[:i]
	}
	if !deb.ValidPackageName(src) {
		return p.Value("Package")
	}
	return src
}

// PoolPath returns where a package lives in the repository, the Debian way:
// pool/<component>/<prefix>/<source>/<name>_<version without epoch>_<arch>.deb,
// where prefix is the source's first letter, or "libX" for lib* sources.
func PoolPath(component string, p control.Paragraph) (string, error) {
	if err := validComponent(component); err != nil {
		return "", err
	}
	k, err := identity(p, "control")
	if err != nil {
		return "", err
	}
	src := sourceName(p)
	prefix := src[:1]
	if strings.HasPrefix(src, "lib") && len(src) > 3 {
		prefix = src[:4]
	}
	version := k.version
	if _, after, ok := strings.Cut(version, ":"); ok {
		version = after
	}
	return path.Join("pool", component, prefix, src, k.name+"_"+version+"_"+k.arch+".deb"), nil
}

// ConflictError reports a package that is already published (or already in the
// pool) with other bytes, in the same component or, when Component and Into
// differ, in another component of the same suite. Publishing or promoting it
// is refused and the repository is left unchanged: clients that cached the
// old bytes would fail with hash mismatches, and a client of both components
// would see two builds of one version.
type ConflictError struct {
	Package  string // name=version (arch)
	Filename string // pool path
	Have     string // SHA256 of the published bytes
	New      string // SHA256 of the refused file
	Path     string // the refused file
	// Suite, Component and Into are set for a conflict across components:
	// the suite, the component that lists Have, the one New was going to;
	// and for Collected and Pooled (then Component is Into).
	Suite, Component, Into string
	// Held names the package the pool file holds when it is another
	// version than Package (another epoch: pool file names leave the
	// epoch out); empty when it is Package or could not be read.
	Held string
	// Collected says Have is the digest of a pool file gc collected in
	// Component (kept under .updeb/removed/), no longer listed.
	Collected bool
	// Pooled says Have is the digest of the pool file Filename, which Suite
	// does not list in Component: another suite lists it (the pool is the
	// repository's), or an earlier generation did.
	Pooled bool
	// Same names the published package (name=version (arch)) when its
	// version is spelled otherwise than Package's but dpkg and apt compare
	// them equal ("1.0" and "1.00"), or when one of the two is for
	// architecture all and the other for another (OtherArch); Filename is
	// then its pool file.
	Same      string
	OtherArch bool
	// Earlier is the generation of Suite that listed Have in Component (a
	// kept one, or one its history records) when Suite lists it no longer:
	// a version never comes back to a suite with other bytes.
	Earlier int
	// Given is the other .deb of the same publish when the conflict is
	// between two of its files: Package (from Path) and Same, else
	// Package, from Given. Filename is then in no pool yet.
	Given string
}

// sameVersionConflict sets ce.Filename to the pool file of old, the entry
// ce (for k) conflicts with (not k's own pool path: another Source field
// puts a build of one version in another source's folder), and ce.Same when
// old has another spelling of k's version or another architecture.
func sameVersionConflict(ce *ConflictError, old Entry, k key) *ConflictError {
	ce.Filename = old.Filename
	if s := old.key().String(); s != ce.Package {
		ce.Same, ce.OtherArch = s, old.Architecture != k.arch
	}
	return ce
}

func (e *ConflictError) Error() string {
	if e.Given != "" {
		return e.givenTwice()
	}
	if e.Earlier > 0 {
		what := e.Package
		if e.Same != "" {
			what = fmt.Sprintf("%s (the same version as %s for dpkg and apt)", e.Package, e.Same)
		}
		return fmt.Sprintf("repo: %s was published in suite %s (generation %d, component %s) as %s with sha256 %s, then removed; %s, for suite %s component %s, has sha256 %s: a version never comes back to a suite with other bytes, or apt installs the new build over the old one under one version on every client that has it, and a rollback swaps them back (publish a new version or revision, or the same bytes)",
			what, e.Suite, e.Earlier, e.Component, e.Filename, e.Have, e.Path, e.Suite, e.Into, e.New)
	}
	if e.Same != "" {
		where := ""
		if e.Component != e.Into {
			where = fmt.Sprintf(" in suite %s component %s", e.Suite, e.Component)
		}
		if e.OtherArch {
			return fmt.Sprintf("repo: %s is one version with %s, which is already published%s as %s with sha256 %s: apt lists an Architecture: all package among each architecture's, so apt-cache policy shows the version twice and apt installs either build (apt-get install --reinstall swaps one for the other); %s has sha256 %s (publish a new version or revision)",
				e.Package, e.Same, where, e.Filename, e.Have, e.Path, e.New)
		}
		return fmt.Sprintf("repo: %s is the same version as %s for dpkg and apt (they compare equal), which is already published%s as %s with sha256 %s; %s has sha256 %s: apt would list one version and install one of the two builds (publish a new version or revision)",
			e.Package, e.Same, where, e.Filename, e.Have, e.Path, e.New)
	}
	if e.Collected {
		return fmt.Sprintf("repo: %s was published in component %s as %s with sha256 %s, then removed and collected (its digest is kept under .updeb/removed/); %s, for suite %s component %s, has sha256 %s: a version never comes back with other bytes, whichever suite or component it comes back to, or a client that installed it before sees two builds of one version (publish a new version or revision, or the same bytes)",
			e.Package, e.Component, e.Filename, e.Have, e.Path, e.Suite, e.Into, e.New)
	}
	if e.Pooled {
		into := ""
		if e.Component != e.Into {
			into = ", for component " + e.Into + ","
		}
		return fmt.Sprintf("repo: %s is not in suite %s component %s, but the pool, which every suite of the repository shares, holds it as %s with sha256 %s (another suite lists it, or an earlier generation did); %s%s has sha256 %s: a version never changes its bytes, whichever suite or component it is published in (publish a new version or revision, or the same bytes)",
			e.Package, e.Suite, e.Component, e.Filename, e.Have, e.Path, into, e.New)
	}
	if e.Component != e.Into {
		return fmt.Sprintf("repo: %s is already published in suite %s component %s as %s with sha256 %s; %s, for component %s, has sha256 %s: a version has one build in a suite, whichever component lists it, or a client of both components sees two builds of one version (publish a new version or revision, or the same bytes)",
			e.Package, e.Suite, e.Component, e.Filename, e.Have, e.Path, e.Into, e.New)
	}
	if e.Held != "" {
		return fmt.Sprintf("repo: %s would be the pool file %s, which holds %s with sha256 %s; %s has sha256 %s: pool file names leave the epoch out, as Debian's do, so versions that differ only in their epoch cannot both be published (publish a new version or revision)",
			e.Package, e.Filename, e.Held, e.Have, e.Path, e.New)
	}
	return fmt.Sprintf("repo: %s is already published as %s with sha256 %s; %s has sha256 %s: a published version never changes its bytes (publish a new version or revision)",
		e.Package, e.Filename, e.Have, e.Path, e.New)
}

// givenTwice is Error for two .deb files of one publish that are two
// builds of one version.
func (e *ConflictError) givenTwice() string {
	first, why := e.Package, "a version has one build"
	if e.Same != "" {
		first, why = e.Same, "dpkg and apt compare the two versions equal"
		if e.OtherArch {
			why = "apt lists an Architecture: all package among each architecture's"
		}
	}
	where, into := "", ""
	if e.Component != e.Into {
		where, into = fmt.Sprintf(" (for suite %s component %s)", e.Suite, e.Component), fmt.Sprintf(" (for component %s)", e.Into)
	}
	return fmt.Sprintf("repo: %s%s is %s with sha256 %s and %s%s is %s with sha256 %s: two builds of one version given to one publish (%s); publish one of them, or give the other a new version or revision",
		e.Given, where, first, e.Have, e.Path, into, e.Package, e.New, why)
}

// stagedFile is a .deb copied next to its pool path, hashed, not yet linked.
type stagedFile struct {
	tmp   string // temporary file in the final directory
	final string // absolute final path
}

// stageIntoPool copies p.Path into a temporary file in its pool directory,
// computing size and digests in the same pass, and fills p's Filename, Size and
// digests. The temporary file is fsynced; link moves it to its final name.
// cleaned records the directories whose leftovers were already removed in
// this publish (so that this publish's own temporary files stay).
func stageIntoPool(ctx context.Context, root, component string, p *Package, cleaned map[string]bool) (*stagedFile, error) {
	rel, err := PoolPath(component, p.Control)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.Path, err)
	}
	final := filepath.Join(root, filepath.FromSlash(rel))
	if err := atomicfile.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return nil, err
	}
	// Temporary files of publishes killed earlier: nobody else writes here
	// while we hold the lock.
	if dir := filepath.Dir(final); !cleaned[dir] {
		cleaned[dir] = true
		old, _ := dirglob.Glob(dir, ".tmp-*.deb")
		for _, o := range old {
			os.Remove(o)
		}
	}
	in, _, err := confined.OpenFile(p.Path)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(final), ".tmp-*.deb")
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	m5, s256, s512 := md5.New(), sha256.New(), sha512.New() //nolint:gosec // see Package.MD5
	n, err := io.Copy(io.MultiWriter(tmp, m5, s256, s512), ctxio.Reader(ctx, in))
	if err != nil {
		return nil, fmt.Errorf("copy %s into the pool: %w", p.Path, err)
	}
	if copied := hex.EncodeToString(s256.Sum(nil)); p.SHA256 != "" && copied != p.SHA256 {
		return nil, fmt.Errorf("%w: %s changed while it was published: its control paragraph was read from bytes with sha256 %s, the pool copy has sha256 %s (another process wrote or replaced the file): publish it again once nothing writes it", ErrInvalid, p.Path, p.SHA256, copied)
	}
	if err := tmp.Chmod(0o644); err != nil {
		return nil, err
	}
	if err := tmp.Sync(); err != nil {
		return nil, err
	}
	if err := tmp.Close(); err != nil {
		return nil, err
	}
	p.Filename, p.Size = rel, n
	p.MD5, p.SHA256, p.SHA512 = hex.EncodeToString(m5.Sum(nil)), hex.EncodeToString(s256.Sum(nil)), hex.EncodeToString(s512.Sum(nil))
	ok = true
	return &stagedFile{tmp: tmp.Name(), final: final}, nil
}

// existingDigest returns the SHA256 of the file already at the pool path
// rel of the repository at root, or "" when there is none. It must be a
// regular file inside the repository: a pool file replaced by a symlink to
// a file elsewhere is refused (confined.ErrRefused), since the repository
// would list bytes that someone else may change.
func existingDigest(ctx context.Context, root, rel string) (string, error) {
	f, _, err := confined.Open(root, rel)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, ctxio.Reader(ctx, f)); err != nil {
		return "", fmt.Errorf("read %s: %w", f.Name(), err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// linkAll moves each staged file to its final name without ever replacing an
// existing file (link(2) fails if the name exists), then syncs each
// directory once. It returns the final names it created (not those that
// were there already), also when it fails.
func linkAll(staged []*stagedFile) (created []string, err error) {
	dirs := map[string]bool{}
	for _, s := range staged {
		err := os.Link(s.tmp, s.final)
		os.Remove(s.tmp)
		if err == nil {
			created = append(created, s.final)
		} else if !errors.Is(err, os.ErrExist) { // existing: same bytes, checked under the lock
			return created, err
		}
		dirs[filepath.Dir(s.final)] = true
	}
	return created, syncDirs(dirs)
}

// unlinkUnpublished removes the pool files a publish created (linkAll) when
// it failed before its generation went live (suite's live generation is
// still before): no index lists them, and left in the pool they passed for
// published bytes (a rebuild of their version was refused as "already
// published", and gc recorded their digest as a collected version's).
func (r *Repo) unlinkUnpublished(suite string, before int, created []string) {
	if n, err := r.liveGeneration(suite); err != nil || n != before {
		return // it went live (a sync failed after the switch): it lists them
	}
	dirs := map[string]bool{}
	for _, name := range created {
		os.Remove(name)
		dirs[filepath.Dir(name)] = true
		if rel, err := filepath.Rel(r.root, name); err == nil {
			removeContents(r.root, filepath.ToSlash(rel)) //nolint:errcheck // a stale list names its bytes; gc removes it
		}
	}
	removeEmptyDirs(filepath.Join(r.root, "pool"), dirs)
}

// pendingPoolDir holds a record per suite (SUITE.json) of the pool files a
// publish into it is about to create, from before it links them until its
// generation is live (or they are unlinked): a publish killed in between
// (kill -9, a power cut) cannot unlink them itself, and the next write
// (recoverPublish, under the lock) does it for it. A record that write
// cannot finish (dists/SUITE not updeb's link, or missing) stays for a
// later one, whatever other suites are written meanwhile: with one
// record for every suite, a publish into another suite replaced it, and the
// killed publish's pool files, listed nowhere, passed for published bytes
// for good.
const pendingPoolDir = ".updeb/publishing"

// legacyPendingPoolFile is the one record of an updeb that kept one for
// every suite: read and finished where it is, as a suite's record, and
// never written.
const legacyPendingPoolFile = ".updeb/publishing.json"

// pendingPublish is a pending publish record's content.
type pendingPublish struct {
	Suite  string   `json:"suite"`
	Before int      `json:"before"` // the live generation the publish replaces
	Files  []string `json:"files"`  // the pool files it creates, relative to the root
}

// notePublish writes suite's record in pendingPoolDir for a publish of
// staged into it, whose live generation is before: the final names not
// there yet. It returns the record's name, "" when there is nothing to
// record (and suite's record, one a killed publish left that could not be
// finished, stays as it is).
func (r *Repo) notePublish(suite string, before int, staged []*stagedFile) (string, error) {
	p := pendingPublish{Suite: suite, Before: before}
	for _, s := range staged {
		if _, err := os.Lstat(s.final); errors.Is(err, os.ErrNotExist) {
			rel, err := filepath.Rel(r.root, s.final)
			if err != nil {
				return "", err
			}
			p.Files = append(p.Files, filepath.ToSlash(rel))
		}
	}
	if len(p.Files) == 0 {
		return "", nil
	}
	data, err := json.Marshal(p)
	if err != nil {
		return "", err
	}
	name := filepath.Join(r.root, filepath.FromSlash(pendingPoolDir), suite+".json")
	if err := atomicfile.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return "", err
	}
	return name, atomicfile.WriteFile(name, append(data, '\n'), 0o644)
}

// recoverPublish finishes what publishes killed before their generation
// went live left in the pool: every suite's record in pendingPoolDir, and
// the legacy one (recoverRecord). So does it with the temporary files of
// records that publishes killed while writing them left. Called under the
// lock, before anything reads the pool.
func (r *Repo) recoverPublish(ctx context.Context) {
	legacy := filepath.Join(r.root, filepath.FromSlash(legacyPendingPoolFile))
	atomicfile.RemoveLeftovers(filepath.Dir(legacy), filepath.Base(legacy))
	dir := filepath.Join(r.root, filepath.FromSlash(pendingPoolDir))
	des, _ := os.ReadDir(dir)
	for _, de := range des {
		// .SUITE.json.tmp-*, atomicfile's temporary name (a suite's
		// starts with a letter or digit)
		if tmp, ok := strings.CutPrefix(de.Name(), "."); ok {
			if i := strings.LastIndex(tmp, ".tmp-"); i > 0 {
				atomicfile.RemoveLeftovers(dir, tmp[:i])
			}
		}
	}
	names, suites := r.pendingRecords()
	for i, name := range names {
		r.recoverRecord(ctx, name, suites[i])
	}
}

// pendingRecords returns the names of the records of pending publishes,
// the legacy one first, and the suite each is of by its name ("" for the
// legacy one, of the suite it names).
func (r *Repo) pendingRecords() (names, suites []string) {
	names, suites = []string{filepath.Join(r.root, filepath.FromSlash(legacyPendingPoolFile))}, []string{""}
	dir := filepath.Join(r.root, filepath.FromSlash(pendingPoolDir))
	des, _ := os.ReadDir(dir)
	for _, de := range des {
		if suite, ok := strings.CutSuffix(de.Name(), ".json"); ok && !strings.HasPrefix(suite, ".") {
			names, suites = append(names, filepath.Join(dir, de.Name())), append(suites, suite)
		}
	}
	return names, suites
}

// readRecord reads the record name of a pending publish into suite (""
// for any suite: the legacy record).
func readRecord(name, suite string) (pendingPublish, error) {
	var p pendingPublish
	data, err := readFile(name)
	if err == nil {
		err = json.Unmarshal(data, &p)
	}
	if err == nil {
		err = validSuite(p.Suite)
	}
	if err == nil && suite != "" && p.Suite != suite {
		err = fmt.Errorf("it names suite %q, not %q", p.Suite, suite)
	}
	return p, err
}

// poolFiles returns the pool paths p names as notePublish writes them:
// pool/../x is local to the root, and no pool file.
func (p pendingPublish) poolFiles() []string {
	var out []string
	for _, f := range p.Files {
		if strings.HasPrefix(f, "pool/") && path.Clean(f) == f && filepath.IsLocal(f) {
			out = append(out, f)
		}
	}
	return out
}

// pendingPoolFiles returns the pool paths that the records of pending
// publishes name: after recoverPublish, those of publishes whose suite
// cannot tell yet whether they went live (recoverRecord), which gc leaves
// for their record to remove. Collected, their digest was kept as a
// published version's, refusing another build of a version never published.
func (r *Repo) pendingPoolFiles() map[string]bool {
	out := map[string]bool{}
	names, suites := r.pendingRecords()
	for i, name := range names {
		if p, err := readRecord(name, suites[i]); err == nil {
			for _, f := range p.poolFiles() {
				out[f] = true
			}
		}
	}
	return out
}

// recoverRecord finishes what the publish that wrote the record name (of
// suite, or of the suite it names when suite is "") left when killed before
// its generation went live: its pool files, listed nowhere, go, as those of
// a publish that fails do, and so does its generation if it was written.
// A record whose suite cannot be read stays for a later write.
func (r *Repo) recoverRecord(ctx context.Context, name, suite string) {
	p, err := readRecord(name, suite)
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	if err != nil {
		r.opts.Logger.Warn("removing an unreadable record of an interrupted publish", "path", name, "err", err)
		os.Remove(name)
		return
	}
	live, err := r.liveGeneration(p.Suite)
	if err != nil {
		return // the record stays for a write that can read the suite
	}
	unpublished := live == p.Before
	if live == 0 && p.Before > 0 {
		// dists/SUITE is missing. Its link lost (a copy that leaves
		// symbolic links out), the record stays: restored, it says
		// whether the publish went live, which a live 0 was taken for,
		// dropping the record and leaving the pool files. The suite
		// dropped (its generations removed), nothing of it lists them.
		if r.lostLink(p.Suite) != nil {
			return
		}
		unpublished = true
	}
	if unpublished {
		// A record kept through other writes may name a pool file another
		// suite came to list meanwhile (the same build published there):
		// that file stays.
		listed, err := r.listedOutside(ctx, p.Suite)
		if err != nil {
			r.opts.Logger.Warn("keeping the record of an interrupted publish for the next write: the indexes of the other suites, which may list its pool files, do not read", "path", name, "err", err)
			return
		}
		var files []string
		for _, f := range p.poolFiles() {
			if !listed[f] {
				files = append(files, filepath.Join(r.root, filepath.FromSlash(f)))
			}
		}
		r.opts.Logger.Info("removing the pool files of a publish interrupted before its generation went live", "suite", p.Suite, "files", len(files))
		r.unlinkUnpublished(p.Suite, live, files)
		// So does its generation, if it was written: it lists them, and,
		// a new suite's first, it would pass for the generation of a
		// suite whose link was lost (lostLink), which no write replaces.
		if err := r.removeAside(r.genDir(p.Suite, p.Before+1)); err != nil {
			return // the record stays for the next write
		}
	}
	if err := os.Remove(name); err == nil {
		atomicfile.SyncDir(filepath.Dir(name)) //nolint:errcheck // a record left is finished again
	}
}

// listedOutside returns every pool path an index of a generation of
// another suite than suite lists (referencedPoolFiles).
func (r *Repo) listedOutside(ctx context.Context, suite string) (map[string]bool, error) {
	des, err := os.ReadDir(filepath.Join(r.distsDir(), ".gen"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	var dirs []string
	for _, de := range des {
		if de.IsDir() && de.Name() != suite {
			dirs = append(dirs, filepath.Join(r.distsDir(), ".gen", de.Name()))
		}
	}
	return referencedPoolFiles(ctx, dirs)
}

func (s *stagedFile) discard() { os.Remove(s.tmp) }

// writeFileSync writes data to name (mode 0644 whatever the umask: the
// repository is served by a web server) and fsyncs it.
func writeFileSync(name string, data []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// validVersion accepts a Debian version (pkg/debversion's rule) that can be
// part of a pool file name: no "..".
func validVersion(v string) bool {
	_, err := debversion.Parse(v)
	return err == nil && !strings.Contains(v, "..")
}
