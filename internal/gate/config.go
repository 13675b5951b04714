package gate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/updeb/updeb/internal/config"
	"github.com/updeb/updeb/internal/confined"
	"github.com/updeb/updeb/internal/srcurl"
	"github.com/updeb/updeb/internal/yamlfile"
)

// TrustedRootReview compares the Sigstore trusted root in effect (file: the
// config's sigstore.trusted-root or the state folder's refreshed root; ""
// for the bundled one) with the base revision, when the file lies inside the
// git repository of dir (the recipes folder: the repository the change under
// review is in): a change can name other certificate authorities and logs,
// so that signatures nobody trusted pass every Sigstore check. A file that
// is new or changed since the base is one review item (no recipe's: Recipe
// is ""); a file outside that repository (in /etc, another repository such
// as etckeeper's) cannot be changed by the change, and gives none, unless
// the change put a link there in place of the base's file (repoFile).
func (b *Base) TrustedRootReview(ctx context.Context, dir, file string) ([]ReviewItem, error) {
	if file == "" {
		return nil, nil
	}
	f, what, err := b.changedFile(ctx, dir, file)
	if what == "" || err != nil {
		return nil, err
	}
	return []ReviewItem{{
		Kind: KindTrustedRoot, Subject: f.rel,
		Old: nonEmpty(f.known, b.Rev), New: []string{"working tree"},
		Message: fmt.Sprintf("the Sigstore trusted root %s is %s since %s: it names the certificate authorities and logs every Sigstore signature is checked against; review it (updeb trust show --trusted-root FILE) before merging",
			f.rel, what, b.Rev),
	}}, nil
}

// ConfigReview compares the config file (file: the one in effect; "" for
// none) with the same file at the base revision, when it lies inside the git
// repository of dir, as TrustedRootReview does the trusted root: on the
// settings that decide where sources are downloaded from (mirrors, the
// cache, proxy, CA bundle) and what Sigstore signatures are checked against
// (the trusted root, the state folder its refreshed copy is read from, the
// services asked), or where updeb publish puts the packages and what signs
// the suites (repo.dir, suite, component, key, keys), and what every
// Release says that apt checks (repo.valid-for, origin, label, codename).
// A mirror can send an upstream host to a folder of the change, whose bytes
// a bump then pins (FoldersReview looks at its files); another trusted root
// already in the repository is no file changed. Each setting changed is one
// review item (no recipe's); a config new since the base is compared with
// the one updeb read at the base in its place, the first of fallback that
// is there (/etc/updeb/config.yaml for a new ./updeb.yaml; none: no
// config): what that one set and the new one does not is a change too.
func (b *Base) ConfigReview(ctx context.Context, dir, file string, fallback ...string) ([]ReviewItem, error) {
	if file == "" {
		return nil, nil
	}
	// A config the base lacks that links out of the repository is read in
	// place of the fallback, which the base read: as a new file.
	f, err := b.repoFile(ctx, dir, file, true)
	if f == nil || err != nil {
		return nil, err
	}
	// At most yamlfile's bound, past which Parse refuses a config.
	data, err := yamlfile.ReadFile(f.path, 0)
	if err != nil {
		return nil, err
	}
	now, err := config.Parse(f.abs, data)
	if err != nil {
		return nil, err
	}
	var old *config.Config
	if f.known {
		var was []byte
		if f.oid != "" {
			if was, err = b.git(ctx, f.top, "cat-file", "blob", f.oid); err != nil {
				return nil, fmt.Errorf("%w: %v", ErrBase, err)
			}
		}
		// Read under the same name, so that relative paths resolve alike.
		if old, err = config.Parse(f.abs, was); err != nil {
			return nil, fmt.Errorf("%w: %s at %s: %v", ErrBase, f.rel, b.Rev, err)
		}
	} else if old, err = config.Load("", fallback...); err != nil {
		return nil, fmt.Errorf("the config %s is new since %s, and the one read in its place there does not load: %w", f.rel, b.Rev, err)
	}
	// Where the old values were set: named when not the same file.
	in := ""
	if !f.known && old.File != "" {
		in = " in " + old.File
	}
	top := strings.TrimSuffix(f.abs, f.rel)
	var items []ReviewItem
	for _, group := range []struct {
		now, old []setting
		why      string
	}{
		{configTrust(now, top), configTrust(old, top), "it decides where sources are downloaded from and what Sigstore signatures are checked against"},
		{configPackages(now), configPackages(old), "it goes into every package built (its Version, its Maintainer where the recipe names none, or its bytes) though no recipe changed, which the version rule does not see"},
		{configPublish(now, top), configPublish(old, top), "updeb publish puts every package there (a recipe's repo: comes first): nodes whose apt sources name the old one get no newer version, and those of the new one get these packages"},
		{configSigning(now, top), configSigning(old, top), "updeb publish signs every suite with it and puts its public key in archive-keyring.gpg, which clients are given to trust"},
		{configRelease(now), configRelease(old), "updeb publish writes it into every suite's Release, which apt checks on the nodes: Valid-Until (repo.valid-for) bounds how long an old Release is taken, so that whoever serves one cannot hold the nodes at old versions unseen, and apt preferences and unattended-upgrades' Origins-Pattern select packages by origin, label and codename"},
		{configProvenance(now, top), configProvenance(old, top), "updeb build signs every package's provenance record with it, and a record it signs is what updeb verify-provenance --signer takes as the builder's word"},
	} {
		for i, s := range group.now {
			if slices.Equal(s.values, group.old[i].values) {
				continue
			}
			items = append(items, ReviewItem{
				Kind: KindConfig, Subject: f.rel, Old: group.old[i].values, New: s.values,
				Message: fmt.Sprintf("the config %s changes %s since %s: %s, was %s%s: %s; review it before merging",
					f.rel, s.name, b.Rev, joinOr(s.values, "none"), joinOr(group.old[i].values, "none"), in, group.why),
			})
		}
	}
	// A file the config names, the same file as at the base, with other
	// content: the CA bundle (the TLS servers every download trusts are
	// others), the TUF root (updeb trust refresh takes the trusted root
	// from the repository it vouches for).
	for _, named := range []struct{ now, old, what, setting, why string }{
		{now.CABundle, old.CABundle, "CA bundle", "ca-bundle", "it names the certificate authorities every download over https trusts"},
		{now.Sigstore.TUFRoot, old.Sigstore.TUFRoot, "TUF root", "sigstore.tuf-root", "updeb trust refresh takes the Sigstore trusted root from the TUF repository it vouches for"},
	} {
		if named.now == "" || named.now != named.old {
			continue // none, or another file: a line of the setting
		}
		file, what, err := b.changedFile(ctx, dir, named.now)
		if err != nil {
			return nil, err
		}
		if what != "" {
			items = append(items, ReviewItem{
				Kind: KindConfig, Subject: file.rel, Old: nonEmpty(file.known, b.Rev), New: []string{"working tree"},
				Message: fmt.Sprintf("the %s %s (%s of the config %s) is %s since %s: %s; review it before merging",
					named.what, file.rel, named.setting, f.rel, what, b.Rev, named.why),
			})
		}
	}
	return items, nil
}

// Folder is a folder whose files decide what is built or published beside
// the recipes: a mirror folder, the cache, the output folder (DataFolders).
type Folder struct {
	Path string // as in effect: absolute, or relative to the working folder
	Name string // how a review line names it ("mirror folder")
	Of   string // what it is ("mirror of https://example.org/"), or ""
	Why  string // what its files do, for people
	// RunWrites says that updeb writes files there as it runs (the cache,
	// the output folder): only files git tracks are the change's.
	RunWrites bool
}

// DataFolders are the folders whose files decide what is built or
// published beside the recipes: each mirror folder of c (to: a folder), and
// cache and out, the cache and output folders in effect (from a flag, the
// config or the default). A bump pins what a mirror serves, as it would a
// new URL's bytes; the cache serves a source by its pinned digest, and a
// checksum file or signature by its URL, without a download, so the pins
// and the cross-check agree with what it holds; a package in the output
// folder is published with the ones built there.
func DataFolders(c *config.Config, cache, out string) []Folder {
	var folders []Folder
	for _, m := range c.Mirrors {
		if u, err := url.Parse(m.To); err == nil && u.Scheme == "file" {
			folders = append(folders, Folder{u.Path, "mirror folder", "mirror of " + m.Prefix,
				"downloads of that prefix come from there, and a bump pins what they serve; review them (updeb mirror verify) before merging", false})
		}
	}
	return append(folders,
		Folder{cache, "cache folder", "", "sources, checksum files and signatures are read from there without a download, so the pins and the cross-check agree with what it holds; review them before merging (a cache has no place in the repository)", true},
		Folder{out, "output folder", "", "updeb build writes the packages there, and updeb publish is given them by a glob (out/NAME_*.deb) that takes a package the change put there as well; review them before merging (built packages have no place in the repository)", true})
}

// FoldersReview is one review item (no recipe's) per folder of folders
// that lies inside the git repository of dir and holds files the working
// tree adds or changes since the base revision, or is reached through a
// link the working tree adds or points elsewhere (to another folder of the
// repository, whose files are as the base has them), or lies in a
// submodule at another commit, naming their count and the first: the
// change put them there, whatever config or flag names the folder. A file a run left in a folder git ignores is none of the
// change's, nor, in a folder updeb writes to (RunWrites), one git does not
// track: a change brings only tracked files to a checkout.
func (b *Base) FoldersReview(ctx context.Context, dir string, folders []Folder) ([]ReviewItem, error) {
	top, err := b.top(ctx, dir)
	if err != nil {
		return nil, err
	}
	var items []ReviewItem
	for _, d := range folders {
		abs, err := filepath.Abs(d.Path)
		if d.Path == "" || err != nil {
			continue
		}
		rel, err := relTo(top, abs)
		if err != nil || !filepath.IsLocal(rel) && rel != "." {
			continue
		}
		// And each link on the way there: a folder replaced by a link, or
		// a link pointed elsewhere, leads to files the base may have as
		// they are, and git lists the link, not them. And each folder
		// above them, for itself alone: git lists a submodule there moved
		// to another commit, not the files of the folder inside it.
		ways, above := sortedUnique(append(linked(top, abs), rel)), map[string]bool{}
		var specs []string
		for _, p := range ways {
			specs = append(specs, ":(literal)"+filepath.ToSlash(p))
			for a := filepath.Dir(p); a != "." && filepath.IsLocal(a) && !above[a]; a = filepath.Dir(a) {
				above[a] = true
				specs = append(specs, ":(literal)"+filepath.ToSlash(a))
			}
		}
		listed, err := b.changedPaths(ctx, top, !d.RunWrites, specs...)
		if err != nil {
			return nil, err
		}
		var changed []string
		for _, c := range listed {
			if above[c] || slices.ContainsFunc(ways, func(w string) bool {
				return w == "." || c == w || strings.HasPrefix(c, w+string(filepath.Separator))
			}) {
				changed = append(changed, c)
			}
		}
		if len(changed) == 0 {
			continue
		}
		slices.Sort(changed)
		name := d.Name + " " + filepath.ToSlash(rel)
		if d.Of != "" {
			name += " (" + d.Of + ")"
		}
		items = append(items, ReviewItem{
			Kind: KindConfig, Subject: filepath.ToSlash(rel), Old: []string{b.Rev}, New: []string{"working tree"},
			Message: fmt.Sprintf("the %s has %d file(s) new or changed since %s (first %s): %s",
				name, len(changed), b.Rev, filepath.ToSlash(changed[0]), d.Why),
		})
	}
	return items, nil
}

// AttributesReview lists the .gitattributes files of the git repository
// of dir (anywhere in its tree) that the working tree adds, changes or
// removes since the base revision, one review item each (no recipe's).
// Git checks every file out through them (eol, working-tree-encoding, ident,
// filter): a change can rewrite the bytes of a recipe, a keyring or a file a
// package installs without touching the file, and the gate, which reads the
// base's files through the working tree's attributes too (cat-file
// --filters; git 2.39 has no --attr-source), sees the same bytes on both
// sides.
func (b *Base) AttributesReview(ctx context.Context, dir string) ([]ReviewItem, error) {
	top, err := b.top(ctx, dir)
	if err != nil {
		return nil, err
	}
	// Each with what it is since the base (A new, D removed, else changed),
	// in one call: a change may add thousands. Untracked ones are new.
	const attributes = ":(glob)**/.gitattributes"
	diff, err := b.git(ctx, top, "diff", "--name-status", "--no-renames", "-z", b.Rev, "--", attributes)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBase, err)
	}
	untracked, err := b.git(ctx, top, "ls-files", "--others", "--exclude-standard", "-z", "--", attributes)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBase, err)
	}
	what := map[string]string{}
	fields := strings.Split(string(diff), "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		what[fields[i+1]] = map[string]string{"A": "new", "D": "removed"}[fields[i]]
	}
	for _, p := range strings.Split(string(untracked), "\x00") {
		if p != "" {
			what[p] = "new"
		}
	}
	var items []ReviewItem
	for _, rel := range slices.Sorted(maps.Keys(what)) {
		st := cmp.Or(what[rel], "changed")
		items = append(items, ReviewItem{
			Kind: KindGitAttributes, Subject: rel, Old: nonEmpty(st != "new", b.Rev), New: nonEmpty(st != "removed", "working tree"),
			Message: fmt.Sprintf("the git attributes file %s is %s since %s: git checks files out through it (eol, working-tree-encoding, ident, filter), which can change the bytes of recipes, keyrings and the files packages install while the gate, reading the base through the same attributes, sees none; review it before merging",
				rel, st, b.Rev),
		})
	}
	return items, nil
}

// RecipesGoneReview is one review item (no recipe's) per recipe file of the
// recipes folder dir (*.yaml, as updeb lists the recipes) that the base
// revision has and the working tree does not: updeb no longer builds,
// plans or bumps its packages, which verify, checking the recipes there
// are, never sees. A recipe renamed to NAME.yml, which updeb does not list,
// vanishes so from the build though the change looks like a rename; the
// line names such a file.
func (b *Base) RecipesGoneReview(ctx context.Context, dir string) ([]ReviewItem, error) {
	top, err := b.top(ctx, dir)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	// The base's folder at the path the working tree reads it from,
	// through the base's links: a recipes folder replaced by a link to
	// another folder drops what that one lacks, though git lists no file
	// of the link's target gone.
	tree, _, err := b.reachObject(ctx, top, inTree(top, abs), "tree")
	if tree == "" || err != nil {
		return nil, err
	}
	list, err := b.git(ctx, top, "ls-tree", "-z", tree)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBase, err)
	}
	var items []ReviewItem
	for _, entry := range strings.Split(string(list), "\x00") {
		meta, p, _ := strings.Cut(entry, "\t")
		if !strings.HasSuffix(p, ".yaml") || strings.HasPrefix(meta, "040000 ") {
			continue
		}
		if _, err := os.Lstat(filepath.Join(dir, p)); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		file, instead := filepath.ToSlash(filepath.Join(dir, p)), ""
		yml := strings.TrimSuffix(file, ".yaml") + ".yml"
		if _, err := os.Lstat(filepath.FromSlash(yml)); err == nil {
			instead = fmt.Sprintf("; %s is there now, which updeb does not read (it reads the recipes *.yaml): name it %s to keep the recipe", yml, p)
		}
		items = append(items, ReviewItem{
			Kind: KindRecipeGone, Subject: file, Old: []string{b.Rev}, New: []string{},
			Message: fmt.Sprintf("the recipe %s is gone since %s: updeb no longer builds, plans or bumps its packages (the repository keeps what it published, and nodes what they installed)%s; review it before merging",
				file, b.Rev, instead),
		})
	}
	return items, nil
}

// ConfigGoneReview is one review item (no recipe's) when file, a config
// updeb reads in preference to inUse (updeb.yaml in the working folder
// before /etc/updeb/config.yaml), is not there now but the base revision
// has it in the git repository of dir: the change removed or moved the
// config that was in effect, and updeb reads inUse ("" for none) in its
// place, with whatever it sets. ConfigReview compares a config in effect;
// this is the one that no longer is.
func (b *Base) ConfigGoneReview(ctx context.Context, dir, file, inUse string) ([]ReviewItem, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, err
	}
	if _, err := os.Lstat(abs); !errors.Is(err, fs.ErrNotExist) {
		return nil, err // there: it is the config in effect, or it is not read
	}
	top, err := b.top(ctx, dir)
	if err != nil {
		return nil, err
	}
	// The file is gone: its folder's links are resolved, not its own.
	parent, err := filepath.EvalSymlinks(filepath.Dir(abs))
	if err != nil {
		return nil, nil // no folder, no config
	}
	rel, err := filepath.Rel(top, filepath.Join(parent, filepath.Base(abs)))
	if err != nil || !filepath.IsLocal(rel) {
		return nil, nil
	}
	if _, known, err := b.reach(ctx, top, rel); err != nil || !known {
		return nil, err
	}
	rel = filepath.ToSlash(rel)
	return []ReviewItem{{
		Kind: KindConfig, Subject: rel, Old: []string{b.Rev}, New: one(inUse),
		Message: fmt.Sprintf("the config %s is gone since %s: updeb reads %s in its place, so every setting it made (mirrors, proxy, Sigstore, build.version-suffix, build.maintainer) is another or none; review it before merging",
			rel, b.Rev, joinOr(one(inUse), "no config")),
	}}, nil
}

// changedFile is file, when it lies inside the git repository of dir, and
// whether it is "new" or "changed" since the base revision ("" when it is
// the same, or lies outside).
func (b *Base) changedFile(ctx context.Context, dir, file string) (*repoFile, string, error) {
	f, err := b.repoFile(ctx, dir, file, false)
	switch {
	case f == nil || err != nil:
		return nil, "", err
	case !f.known:
		return f, "new", nil
	}
	same, err := b.sameAsBase(ctx, f)
	switch {
	case err != nil:
		return nil, "", err
	case !same:
		return f, "changed", nil
	}
	return f, "", nil
}

// sameAsBase reports whether the working tree's file f holds the bytes of
// the base's, read side by side as streams: neither is held whole (a TUF
// root of 3 GB in the change made verify --base hold 3 GB), and one of
// another size is not read at all.
func (b *Base) sameAsBase(ctx context.Context, f *repoFile) (bool, error) {
	file, fi, err := confined.OpenFile(f.path)
	if err != nil {
		return false, err
	}
	defer file.Close()
	if f.oid == "" {
		return fi.Size() == 0, nil // a link of the base that reaches nothing: no bytes
	}
	size, err := b.git(ctx, f.top, "cat-file", "-s", f.oid)
	if err != nil {
		return false, fmt.Errorf("%w: %v", ErrBase, err)
	}
	if strings.TrimSpace(string(size)) != strconv.FormatInt(fi.Size(), 10) {
		return false, nil
	}
	// At the first byte that differs the pipe is closed, and git stops on
	// it: its error then says nothing of the base.
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := b.gitTo(ctx, f.top, nil, pw, "cat-file", "blob", f.oid)
		pw.CloseWithError(err)
		done <- err
	}()
	same, err := sameStreams(file, pr)
	pr.Close()
	gitErr := <-done
	switch {
	case err == nil && !same:
		return false, nil
	case gitErr != nil:
		return false, fmt.Errorf("%w: %v", ErrBase, gitErr)
	}
	return same, err
}

// setting is one setting of the config as a review names it.
type setting struct {
	name   string
	values []string // never nil
}

// configTrust lists the settings of c that decide where sources are
// downloaded from and what Sigstore signatures are checked against, always
// the same names in the same order; paths inside top (the repository's top
// folder, ending in a separator) are shown relative to it.
func configTrust(c *config.Config, top string) []setting {
	mirrors := []string{}
	for _, m := range c.Mirrors {
		mirrors = append(mirrors, m.Prefix+" -> "+m.To)
	}
	slices.Sort(mirrors)
	return []setting{
		{"mirrors", mirrors},
		{"cache", repoPath(top, c.Cache)},
		{"proxy", one(srcurl.Redact(string(c.Proxy)))}, // its password never printed: a CI log is read by many
		{"no-proxy", append([]string{}, c.NoProxy...)},
		{"ca-bundle", repoPath(top, c.CABundle)},
		{"state", repoPath(top, c.State)},
		{"github-api", one(c.GitHubAPI)},
		{"sigstore.trusted-root", repoPath(top, c.Sigstore.TrustedRoot)},
		{"sigstore.rekor-url", one(c.Sigstore.RekorURL)},
		{"sigstore.github-api", one(c.Sigstore.GitHubAPI)},
		{"sigstore.tuf-url", one(c.Sigstore.TUFURL)},
		{"sigstore.tuf-root", repoPath(top, c.Sigstore.TUFRoot)},
	}
}

// configPackages lists the settings of c that go into every package built,
// whatever the recipe says (always the same names in the same order): the
// local version suffix, the default maintainer, and the compression and xz
// encoder, which change the packages' bytes.
func configPackages(c *config.Config) []setting {
	return []setting{
		{"build.version-suffix", one(c.Build.VersionSuffix)},
		{"build.maintainer", one(c.Build.Maintainer)},
		{"build.compression", one(c.Build.Compression)},
		{"build.xz-mode", one(c.Build.XZMode)},
	}
}

// configPublish lists the settings of c that decide where updeb publish
// puts the packages: the repository folder, and the suite and component
// of a package whose recipe names none (always the same names in the same
// order; a path inside top shown relative to it).
func configPublish(c *config.Config, top string) []setting {
	return []setting{
		{"repo.dir", repoPath(top, c.Repo.Dir)},
		{"repo.suite", one(c.Repo.Suite)},
		{"repo.component", one(c.Repo.Component)},
	}
}

// configSigning lists the keys that updeb publish signs the suites with,
// as configPublish does its settings.
func configSigning(c *config.Config, top string) []setting {
	keys := []string{}
	for _, k := range c.Repo.Keys {
		keys = append(keys, repoPath(top, k)...)
	}
	return []setting{
		{"repo.key", repoPath(top, c.Repo.Key)},
		{"repo.keys", keys},
	}
}

// configRelease lists the settings of c that go into every suite's Release
// and that apt checks or selects by on the nodes, as configPublish does its
// settings.
func configRelease(c *config.Config) []setting {
	validFor := ""
	if c.Repo.ValidFor != 0 {
		validFor = time.Duration(c.Repo.ValidFor).String()
	}
	return []setting{
		{"repo.origin", one(c.Repo.Origin)},
		{"repo.label", one(c.Repo.Label)},
		{"repo.codename", one(c.Repo.Codename)},
		{"repo.valid-for", one(validFor)},
	}
}

// configProvenance lists the key that signs the provenance records, as
// configPublish does its settings.
func configProvenance(c *config.Config, top string) []setting {
	return []setting{{"build.provenance-key", repoPath(top, c.Build.ProvenanceKey)}}
}

// repoPath is the value of a setting that names the path p (none: ""),
// relative to top when inside it.
func repoPath(top, p string) []string {
	return one(strings.TrimPrefix(p, top))
}

// repoFile is a file of the working tree and what the base revision holds
// at its place.
type repoFile struct {
	abs, rel string // rel: relative to the repository's top folder, with slashes
	path     string // the file as the working tree reads it, through its links
	top      string // the repository's top folder
	oid      string // the base's blob ("" when it has none)
	known    bool   // the base revision has the file
}

// repoFile finds file, and the same path at the base revision, when file
// lies inside the git repository of dir; nil when it lies outside (a link
// out of it too, unless the link replaces what the base has there, or,
// with newLinks, is new: linkedOut): the change under review cannot have
// made it. The base's file is the one its tree reaches at the path the
// working tree reads, through the links the base had there: a file
// replaced by a link to another file of the repository, unchanged itself,
// is a changed file.
func (b *Base) repoFile(ctx context.Context, dir, file string, newLinks bool) (*repoFile, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, err
	}
	top, err := b.top(ctx, dir)
	if err != nil {
		return nil, err
	}
	rel := inTree(top, abs)
	if real, err := relTo(top, abs); err != nil || !filepath.IsLocal(real) {
		// Outside, its links resolved. A name of the repository that the
		// change made a link out of it (to a file of the CI runner: an
		// empty one drops every setting) is the change's, though what it
		// leads to is not: compared with what the base had there.
		if out, err := b.linkedOut(ctx, top, abs, rel, newLinks); !out || err != nil {
			return nil, err
		}
	}
	f := &repoFile{abs: filepath.Join(top, rel), rel: filepath.ToSlash(rel), path: abs, top: top}
	if f.oid, f.known, err = b.reach(ctx, top, f.rel); err != nil {
		return nil, err
	}
	return f, nil
}

// linkedOut reports whether abs, which leads out of the repository at top
// and is named rel there (the links above it inside the repository kept),
// does so through a link of the repository that replaces what the base
// revision has at its place: a file, a folder, or a link to another
// target (the file itself, a folder above it, or a link on the way). A
// link the base has as it is is not the change's doing, nor, unless
// newLinks is set, one where the base has nothing.
func (b *Base) linkedOut(ctx context.Context, top, abs, rel string, newLinks bool) (bool, error) {
	if !filepath.IsLocal(rel) {
		return false, nil
	}
	for _, l := range linked(top, abs) {
		target, err := os.Readlink(filepath.Join(top, l))
		if err != nil {
			continue // not a link: a folder or file on the way
		}
		entry, err := b.git(ctx, top, "--literal-pathspecs", "ls-tree", "-z", b.Rev, "--", filepath.ToSlash(l))
		if err != nil {
			return false, fmt.Errorf("%w: %v", ErrBase, err)
		}
		meta, _, ok := strings.Cut(string(entry), "\t")
		fields := strings.Fields(meta)
		switch {
		case !ok || len(fields) != 3:
			if newLinks {
				return true, nil
			}
			continue // the base has nothing there
		case fields[0] != "120000":
			return true, nil
		}
		was, err := b.git(ctx, top, "cat-file", "blob", fields[2])
		if err != nil {
			return false, fmt.Errorf("%w: %v", ErrBase, err)
		}
		if string(was) != target {
			return true, nil
		}
	}
	return false, nil
}

// one is the values of a setting of one value: none when s is "".
func one(s string) []string {
	return nonEmpty(s != "", s)
}

func nonEmpty(ok bool, s string) []string {
	if !ok {
		return []string{}
	}
	return []string{s}
}
