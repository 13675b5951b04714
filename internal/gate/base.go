package gate

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/updeb/updeb/internal/childproc"
	"github.com/updeb/updeb/internal/confined"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/pkg/debversion"
	"github.com/updeb/updeb/pkg/digest"
)

// ErrBase is wrapped when the base revision cannot be read (not a git
// repository, unknown revision): invalid input.
var ErrBase = errors.New("gate: cannot read the base revision")

// ErrBaseRecipe is wrapped, with ErrBase, when the base revision was read
// but the recipe as it was there does not load (with this updeb's rules).
var ErrBaseRecipe = errors.New("gate: the recipe does not load at the base revision")

// Base is the git revision recipes are compared with.
type Base struct {
	Git string // the git executable
	Rev string // any revision git understands: main, origin/main, HEAD~1, a hash

	shipped map[string]map[string][]shipper // per recipes folder: package name -> the base's recipes that ship it (shippers)
}

// git runs git in dir and returns its standard output.
func (b *Base) git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	var out bytes.Buffer
	if err := b.gitTo(ctx, dir, nil, &out, args...); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// gitTo runs git in dir, reading in (nil: nothing), its standard output
// going to w.
func (b *Base) gitTo(ctx context.Context, dir string, in io.Reader, w io.Writer, args ...string) error {
	cmd := exec.CommandContext(ctx, b.Git, append([]string{"-C", dir}, args...)...)
	// git's words in the C locale: the errors quote them, and a few of them
	// (an ambiguous short hash, a partial clone's failed fetch) are read.
	// Never a prompt for a partial clone's credentials: git runs in a
	// session of its own without a terminal (childproc.RunGroup), and neither git
	// nor ssh can ask; it fails instead, and the error says so.
	cmd.Env = append(os.Environ(), "LC_ALL=C", "GIT_TERMINAL_PROMPT=0")
	var stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = in, w, &stderr
	if err := childproc.RunGroup(cmd, cmd.Run); err != nil {
		return gitError("git "+strings.Join(args, " "), err, stderr.String())
	}
	return nil
}

// gitError describes a git command that failed with err, quoting what it
// wrote on its standard error; a partial clone that could not fetch what the
// base revision needs gets a hint (git says only that the fetch failed).
func gitError(what string, err error, stderr string) error {
	stderr = strings.TrimSpace(stderr)
	if strings.Contains(stderr, "promisor remote") {
		stderr += " (a partial clone (--filter) lacks objects of the base revision and could not fetch them: let the step reach the remote, or clone without --filter)"
	}
	return fmt.Errorf("%s: %w: %s", what, err, stderr)
}

// load returns the recipe r as it was at the base revision, checked out with
// its recipe folder and keyrings under dir, or nil when the recipe is new.
func (b *Base) load(ctx context.Context, r *recipe.Recipe, dir string) (*recipe.Recipe, error) {
	file, top, err := b.recipeTop(ctx, r)
	if err != nil {
		return nil, err
	}
	relRoot, err := relTo(top, r.Root)
	if err != nil {
		return nil, err
	}
	// The recipe is what the base reaches at the path the working tree
	// reads it from, through the base's own links: a recipe file replaced by
	// a link to another file of the repository is compared with the recipe
	// that was there, not with the other file's past.
	relFile := inTree(top, file)
	oid, known, err := b.reach(ctx, top, relFile)
	if err != nil || !known {
		return nil, err
	}
	if oid == "" {
		return nil, fmt.Errorf("%w: %s at %s is a link that reaches no file of the revision", ErrBase, filepath.ToSlash(relFile), b.Rev)
	}
	text, err := b.git(ctx, top, "cat-file", "--filters", "--path="+filepath.ToSlash(relFile), oid)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBase, err)
	}
	// The old recipe, its folder and keyrings, as they were at the
	// revision, with the links the working tree reaches them through.
	paths := append([]string{relFile}, linked(top, file)...)
	wanted := []string{relFile} // what the recipe reads, as it names it
	keyring := func(name string) {
		paths = append(paths, filepath.Join(relRoot, name))
		wanted = append(wanted, filepath.Join(relRoot, name))
		paths = append(paths, linked(top, filepath.Join(r.Root, filepath.FromSlash(name)))...)
	}
	// Its findings, if any, name the file as it is in the repository, and
	// none is about a keyring or folder left out for want of the recipe.
	old, err := recipe.Parse(relFile, text)
	if err != nil {
		return nil, err
	}
	filesDir := filepath.Join(filepath.Dir(relFile), filepath.FromSlash(old.FilesRel()))
	for _, s := range old.Sources {
		if s.Signature.Keyring != "" {
			keyring(s.Signature.Keyring)
		}
		if s.Checksums != nil && s.Checksums.Clearsigned != nil {
			keyring(s.Checksums.Clearsigned.Keyring)
		}
	}
	paths = append(paths, filesDir)
	wanted = append(wanted, filesDir)
	paths = append(paths, linked(top, filepath.Join(top, filesDir))...)
	// A keyring or folder in a submodule (or one itself) has no files in
	// the base's tree: say so, not that they do not exist.
	if sub, p, err := b.submodule(ctx, top, paths); err != nil || sub != "" {
		if err == nil {
			where := "inside the submodule " + sub
			if p == sub {
				where = "a submodule"
			}
			err = fmt.Errorf("%w: %s at %s is %s: verify --base reads the base from this repository's history, never a submodule's, so it cannot compare the recipe %s with it; keep its keyrings and folder in this repository (a copy, or a link to a folder of it), or verify it without --base and review its version and trust changes by hand",
				ErrBase, p, b.Rev, where, filepath.ToSlash(relFile))
		}
		return nil, err
	}
	var present []string
	for _, p := range sortedUnique(paths) {
		ok, err := b.has(ctx, top, p)
		if err != nil {
			return nil, err
		}
		if ok {
			present = append(present, filepath.ToSlash(p))
		}
	}
	if err := b.extract(ctx, top, dir, present); err != nil {
		return nil, err
	}
	for _, w := range wanted {
		if err := b.follow(ctx, top, dir, filepath.ToSlash(w)); err != nil {
			return nil, err
		}
	}
	old, err = recipe.Load(filepath.Join(dir, relFile), recipe.LoadOptions{Root: filepath.Join(dir, relRoot)})
	if re, ok := errors.AsType[*recipe.Error](err); ok {
		// Name the files as the repository has them, not their copy in dir.
		copied := dir + string(filepath.Separator)
		for i := range re.Findings {
			f := &re.Findings[i]
			f.File, f.Message = strings.TrimPrefix(f.File, copied), strings.ReplaceAll(f.Message, copied, "")
		}
	}
	return old, err
}

// follow extracts under dir what the base's own links lead to on the way
// to want (slash-separated, relative to top), where the working tree's
// links lead elsewhere: a link retargeted since (keys/current.asc to
// another key file, keys to another folder) or a chain of links the working
// tree no longer has. Each part of the way that dir lacks is asked of the
// base: a folder is made, a link or file extracted, and want itself, a
// folder, extracted whole. It stops where the base has nothing, or at a link
// out of the repository.
func (b *Base) follow(ctx context.Context, top, dir, want string) error {
	parts := strings.Split(want, "/")
	cur := ""
	for i, hops := 0, 0; i < len(parts); i++ {
		next := path.Join(cur, parts[i])
		if !filepath.IsLocal(filepath.FromSlash(next)) {
			return nil
		}
		abs := filepath.Join(dir, filepath.FromSlash(next))
		fi, err := os.Lstat(abs)
		if errors.Is(err, fs.ErrNotExist) {
			if err := b.extractPart(ctx, top, dir, next, i == len(parts)-1); err != nil {
				return err
			}
			if fi, err = os.Lstat(abs); errors.Is(err, fs.ErrNotExist) {
				return nil // the base has nothing there, or a link out of the repository
			}
		}
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		target, err := os.Readlink(abs)
		if hops++; err != nil || path.IsAbs(target) || hops > 40 {
			return err
		}
		parts = append(strings.Split(path.Join(cur, target), "/"), parts[i+1:]...)
		cur, i = "", -1
	}
	return nil
}

// extractPart extracts under dir the path p of the base (slash-separated,
// relative to top) for follow: nothing where the base has nothing, a folder
// made empty unless last (what follow wants, extracted whole), else what the
// base has there.
func (b *Base) extractPart(ctx context.Context, top, dir, p string, last bool) error {
	list, err := b.git(ctx, top, "--literal-pathspecs", "ls-tree", "-z", "--full-tree", b.Rev, "--", p)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBase, err)
	}
	switch meta, _, _ := strings.Cut(string(list), "\t"); {
	case meta == "":
		return nil
	case strings.HasPrefix(meta, "040000 ") && !last:
		return os.MkdirAll(filepath.Join(dir, filepath.FromSlash(p)), 0o755)
	}
	return b.extract(ctx, top, dir, []string{p})
}

// recipeTop returns r's file (absolute) and the top folder of the git
// repository that holds it (see top).
func (b *Base) recipeTop(ctx context.Context, r *recipe.Recipe) (file, top string, err error) {
	if file, err = filepath.Abs(r.Path); err != nil {
		return "", "", err
	}
	top, err = b.top(ctx, filepath.Dir(file))
	return file, top, err
}

// has reports whether the base revision has the path p (relative to the
// top folder top). It asks for the path only, not its content: "git
// cat-file -e" fails alike for a path the revision lacks and for a blob a
// partial clone cannot fetch, and the recipe would then pass for a new one,
// with no version rule. Any other failure is an error.
func (b *Base) has(ctx context.Context, top, p string) (bool, error) {
	_, err := b.git(ctx, top, "rev-parse", "--verify", "--quiet", b.Rev+":"+filepath.ToSlash(p))
	var exit *exec.ExitError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		return false, nil
	}
	return false, fmt.Errorf("%w: %v", ErrBase, err)
}

// submodule returns the first submodule (a gitlink of the base revision)
// that one of paths (relative to top), or a folder above it, is, and that
// path (with slashes); "" when there is none.
func (b *Base) submodule(ctx context.Context, top string, paths []string) (sub, path string, err error) {
	var above []string
	for _, p := range paths {
		for a := p; a != "." && filepath.IsLocal(a); a = filepath.Dir(a) {
			above = append(above, filepath.ToSlash(a))
		}
	}
	list, err := b.git(ctx, top, append([]string{"--literal-pathspecs", "ls-tree", "-z", "--full-tree", b.Rev, "--"}, sortedUnique(above)...)...)
	if err != nil {
		return "", "", fmt.Errorf("%w: %v", ErrBase, err)
	}
	links := map[string]bool{}
	for _, line := range strings.Split(string(list), "\x00") {
		if meta, p, ok := strings.Cut(line, "\t"); ok && strings.HasPrefix(meta, "160000 ") {
			links[p] = true
		}
	}
	for _, p := range sortedUnique(paths) {
		for a := p; a != "." && filepath.IsLocal(a); a = filepath.Dir(a) {
			if links[filepath.ToSlash(a)] {
				return filepath.ToSlash(a), filepath.ToSlash(p), nil
			}
		}
	}
	return "", "", nil
}

// reach returns the object of the file the base revision reaches at rel
// (relative to top), through the links of the base's tree as a checkout
// would: known is false where the base has nothing there, and oid is ""
// where a link there reaches no file of the tree (dangling, a loop, out of
// the tree).
func (b *Base) reach(ctx context.Context, top, rel string) (oid string, known bool, err error) {
	return b.reachObject(ctx, top, rel, "blob")
}

// reachObject is reach for an object of the type given: "blob" for a
// file, "tree" for a folder.
func (b *Base) reachObject(ctx context.Context, top, rel, typ string) (oid string, known bool, err error) {
	// "OID TYPE SIZE" and the object, "REV:PATH missing" where the base
	// has nothing there, a word (dangling, loop, notdir, symlink) for a
	// link that reaches nothing of the tree. The name is read up to a NUL
	// (-z): a path with a newline would be read as its first line, another
	// file or none. The answer is still a line, its name as given.
	p := filepath.ToSlash(rel)
	if p == "." {
		p = "" // the top folder: REV: ("REV:." is missing)
	}
	query := b.Rev + ":" + p
	var out bytes.Buffer
	if err := b.gitTo(ctx, top, strings.NewReader(query+"\x00"), &out, "cat-file", "--batch-check", "--follow-symlinks", "-z"); err != nil {
		return "", false, fmt.Errorf("%w: %v", ErrBase, err)
	}
	if out.String() == query+" missing\n" {
		return "", false, nil
	}
	head, _, _ := bytes.Cut(out.Bytes(), []byte("\n"))
	if fields := strings.Fields(string(head)); len(fields) == 3 && fields[1] == typ {
		return fields[0], true, nil
	}
	// "dangling" is also git's word for a path whose folder is reached
	// through a link and lacks the name (a new recipe of recipes, a link
	// to shared/recipes): the base has nothing there unless the folder the
	// links lead to holds the name, a link that leads nowhere.
	if dir, name := path.Split(p); strings.HasPrefix(string(head), "dangling ") && dir != "" {
		tree, _, err := b.reachObject(ctx, top, strings.TrimSuffix(dir, "/"), "tree")
		if err != nil || tree == "" {
			return "", true, err
		}
		list, err := b.git(ctx, top, "--literal-pathspecs", "ls-tree", "-z", tree, "--", name)
		if err != nil {
			return "", false, fmt.Errorf("%w: %v", ErrBase, err)
		}
		return "", len(list) > 0, nil
	}
	return "", true, nil
}

// inTree is p relative to top, the links inside the repository kept as
// they are (the links above it resolved); p with every link resolved when
// no folder above it is top.
func inTree(top, p string) string {
	for a := p; filepath.Dir(a) != a; a = filepath.Dir(a) {
		if real, err := filepath.EvalSymlinks(a); err == nil && real == top {
			if rel, err := filepath.Rel(a, p); err == nil {
				return rel
			}
		}
	}
	rel, _ := relTo(top, p)
	return rel
}

// top returns the top folder of the git repository that holds dir, once
// it made sure the base revision is a commit there. A CI checkout is often
// shallow (one commit, no other branch): the error then says to fetch the
// base, not only that it is unknown; a short hash of several commits is
// named so. A folder of a submodule is refused (ErrBase): its history is
// not the checkout's.
func (b *Base) top(ctx context.Context, dir string) (string, error) {
	// A folder of a submodule (the recipes folder made one, or a link into
	// one) has the submodule's history, not the checkout's: its REV is
	// whatever the submodule's remote holds, so a change that brings its
	// recipes in a submodule of its own would be compared with itself. Asked
	// in the same git run: a line of the superproject follows the top's.
	out, err := b.git(ctx, dir, "rev-parse", "--show-toplevel", "--show-superproject-working-tree")
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrBase, err)
	}
	top, super, _ := strings.Cut(strings.TrimSuffix(string(out), "\n"), "\n")
	if super != "" {
		sub, err := filepath.Rel(super, top)
		if err != nil {
			sub = top
		}
		return "", fmt.Errorf("%w: %s is in the submodule %s of %s: verify --base reads the base from the repository's own history, never a submodule's (there %s is whatever the submodule's remote holds, and the change would be compared with itself); keep the recipes in the repository itself, or verify without --base and review its version and trust changes by hand",
			ErrBase, dir, filepath.ToSlash(sub), super, b.Rev)
	}
	if _, err := b.git(ctx, top, "rev-parse", "--verify", b.Rev+"^{commit}"); err != nil {
		if strings.Contains(err.Error(), "is ambiguous") {
			return "", fmt.Errorf("%w: %s is a short hash of more than one commit in %s: give more of its digits", ErrBase, b.Rev, top)
		}
		if shallow, _ := b.git(ctx, top, "rev-parse", "--is-shallow-repository"); strings.TrimSpace(string(shallow)) == "true" {
			return "", fmt.Errorf("%w: %s is not a commit in %s, a shallow clone: fetch the base revision first (git fetch origin main, or check out with the full history: fetch-depth: 0)", ErrBase, b.Rev, top)
		}
		return "", fmt.Errorf("%w: %s is not a commit in %s", ErrBase, b.Rev, top)
	}
	return top, nil
}

// relTo is p relative to the repository's top folder, links resolved.
func relTo(top, p string) (string, error) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		real = p
	}
	return filepath.Rel(top, real)
}

// linked returns what the base revision must hold for the working tree's
// path p to read there as it does here: p with its links resolved, and each
// link on the way, those the links lead through included (a keyring in
// keys/ where keys is a link to shared/keys is the link keys and the file
// shared/keys/NAME; keys/a.asc, a link to ring/hop.asc, itself a link to
// real.asc, is all three), relative to top.
func linked(top, p string) []string {
	var out []string
	if rel, err := relTo(top, p); err == nil && filepath.IsLocal(rel) {
		out = append(out, rel)
	}
	seen := map[string]bool{}
	var walk func(p string)
	walk = func(p string) {
		for a := p; filepath.Dir(a) != a; a = filepath.Dir(a) {
			if fi, err := os.Lstat(a); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
				continue
			}
			parent, err := filepath.EvalSymlinks(filepath.Dir(a))
			if err != nil {
				parent = filepath.Dir(a)
			}
			link := filepath.Join(parent, filepath.Base(a))
			if seen[link] { // a loop
				continue
			}
			seen[link] = true
			if rel, err := filepath.Rel(top, link); err == nil && filepath.IsLocal(rel) {
				out = append(out, rel)
			}
			// What the rest of p reads through the link's target.
			target, err := os.Readlink(a)
			if err != nil {
				continue
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(parent, target)
			}
			if rest, err := filepath.Rel(a, p); err == nil {
				walk(filepath.Join(target, rest))
			}
		}
	}
	walk(p)
	return out
}

// Changed returns the recipes of rs that the working tree changes since
// the base revision: a recipe whose file, or a file of its own folder (local
// files, fragments, a pinned public key), or a keyring it names (a keyring
// several recipes share makes them all changed) differs from the revision,
// or is new or gone. That is what the gate must see of a change: a key
// added to a shared keyring changes the trust of every recipe that names
// it, though no recipe file changed.
func (b *Base) Changed(ctx context.Context, dir string, rs []*recipe.Recipe) ([]*recipe.Recipe, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	top, err := b.top(ctx, abs)
	if err != nil {
		return nil, err
	}
	changed, err := b.changedPaths(ctx, top, true)
	if err != nil {
		return nil, err
	}
	// A path is touched when it changed where its links lead, or when it,
	// or a folder above it, is itself a link (or file) that changed: git
	// lists a keyring replaced by a link to another keyring as the link,
	// not as the keyring it now reads. The changed paths and the folders
	// above them are sets: a change of 100,000 files (a mirror folder) is
	// looked up, not scanned, for each path of each of thousands of recipes.
	paths, folders := map[string]bool{}, map[string]bool{}
	for _, c := range changed {
		paths[c] = true
		for d := filepath.Dir(c); d != "." && d != string(filepath.Separator) && !folders[d]; d = filepath.Dir(d) {
			folders[d] = true
		}
	}
	touches := func(p string, folder bool) bool {
		is := func(rel string, under bool) bool { return paths[rel] || under && folders[rel] }
		// Where its links lead, and each link on the way (a link a link
		// leads to, retargeted, included).
		for _, rel := range linked(top, p) {
			if is(rel, folder) {
				return true
			}
		}
		for a := p; ; a = filepath.Dir(a) {
			if parent, err := filepath.EvalSymlinks(filepath.Dir(a)); err == nil {
				if rel, err := filepath.Rel(top, filepath.Join(parent, filepath.Base(a))); err == nil && filepath.IsLocal(rel) && is(rel, folder && a == p) {
					return true
				}
			}
			if filepath.Dir(a) == a {
				return false
			}
		}
	}
	var out []*recipe.Recipe
	for _, r := range rs {
		file, err := filepath.Abs(r.Path)
		if err != nil {
			return nil, err
		}
		hit := touches(file, false) || touches(r.FilesDir, true)
		for _, s := range r.Sources {
			if s.Signature.Keyring != "" {
				hit = hit || touches(filepath.Join(r.Root, filepath.FromSlash(s.Signature.Keyring)), false)
			}
			if s.Checksums != nil && s.Checksums.Clearsigned != nil {
				hit = hit || touches(filepath.Join(r.Root, filepath.FromSlash(s.Checksums.Clearsigned.Keyring)), false)
			}
		}
		if hit {
			out = append(out, r)
		}
	}
	return out, nil
}

// changedPaths lists the paths (relative to top) that the working tree
// changes since the base revision, new files that git does not ignore
// included when untracked is set, below the paths given (none: the whole
// tree). A submodule at another commit is a changed path whatever the
// change's .gitmodules says (ignore = all there hides it from git diff).
func (b *Base) changedPaths(ctx context.Context, top string, untracked bool, under ...string) ([]string, error) {
	diff, err := b.git(ctx, top, append([]string{"diff", "--name-only", "--no-renames", "--ignore-submodules=none", "-z", b.Rev, "--"}, under...)...)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBase, err)
	}
	var others []byte
	if untracked {
		if others, err = b.git(ctx, top, append([]string{"ls-files", "--others", "--exclude-standard", "-z", "--"}, under...)...); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBase, err)
		}
	}
	var changed []string
	for _, p := range strings.Split(string(diff)+string(others), "\x00") {
		if p != "" {
			changed = append(changed, filepath.FromSlash(p))
		}
	}
	return changed, nil
}

// maxBaseArchive bounds what is extracted of the base revision: the old
// recipe, its keyrings and its folder of local files.
const maxBaseArchive = 1 << 30

// extract writes the paths of the base revision under dir as git checks
// them out: folders, regular files and links that stay inside dir, nothing
// else. Each file is read with git cat-file --filters, so the end-of-line
// conversion and filters that made the working tree apply to the base too;
// git archive would also apply the base's export-ignore and export-subst
// attributes, leaving out a keyring or rewriting a file of the recipe's
// folder: not what the revision holds.
func (b *Base) extract(ctx context.Context, top, dir string, paths []string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	list, err := b.git(ctx, top, append([]string{"--literal-pathspecs", "ls-tree", "-r", "-z", "--full-tree", b.Rev, "--"}, paths...)...)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBase, err)
	}
	var total int64
	for _, line := range strings.Split(string(list), "\x00") {
		meta, path, ok := strings.Cut(line, "\t")
		fields := strings.Fields(meta)
		if !ok || len(fields) != 3 {
			continue
		}
		mode, id := fields[0], fields[2]
		name := filepath.FromSlash(path)
		if !filepath.IsLocal(name) {
			return fmt.Errorf("extracting the base revision %s: %s: a path outside the repository", b.Rev, path)
		}
		dst := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		switch mode {
		case "100644", "100755":
			perm := fs.FileMode(0o644)
			if mode == "100755" {
				perm = 0o755
			}
			f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
			if err != nil {
				return err
			}
			w := &limitWriter{w: f, left: maxBaseArchive - total}
			err = b.gitTo(ctx, top, nil, w, "cat-file", "--filters", "--path="+path, id)
			total += w.n
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			switch {
			case w.left < 0:
				return fmt.Errorf("extracting the base revision %s: more than %d bytes", b.Rev, int64(maxBaseArchive))
			case err != nil:
				return fmt.Errorf("%w: %v", ErrBase, err)
			}
		case "120000":
			target, err := b.git(ctx, top, "cat-file", "blob", id)
			if err != nil {
				return fmt.Errorf("%w: %v", ErrBase, err)
			}
			link := string(target)
			if !filepath.IsLocal(filepath.Join(filepath.Dir(name), link)) || filepath.IsAbs(link) {
				continue // the recipe's checks refuse a link out of its folder
			}
			if err := os.Symlink(link, dst); err != nil {
				return err
			}
		}
	}
	return nil
}

// limitWriter writes to w until left bytes are written, then fails (left
// goes below 0).
type limitWriter struct {
	w    io.Writer
	left int64
	n    int64 // bytes written
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > l.left {
		l.left = -1
		return 0, errors.New("too large")
	}
	n, err := l.w.Write(p)
	l.n += int64(n)
	l.left -= int64(n)
	return n, err
}

// compareBase adds the checks against the base revision to c: the version
// rule, a REVIEW line per trust change, and the package changes.
func compareBase(ctx context.Context, r *recipe.Recipe, opts Options, rr *RecipeReport, c *checks) {
	base := opts.Base
	old, err := base.load(ctx, r, filepath.Join(opts.TempDir, "base", r.Name))
	switch {
	case errors.Is(err, ErrBase):
		c.fail("base", err, "%v", err)
		return
	case err != nil:
		c.fail("base", fmt.Errorf("%w: %w: %w", ErrBase, ErrBaseRecipe, err), "the recipe at %s does not load: %v", base.Rev, err)
		return
	}
	rv := &reviews{recipe: r.Name}
	from := old // what nodes upgrade from: the base's recipe, or a new minor's predecessor
	if old == nil {
		c.add("version", Pass, "new recipe (not at %s)", base.Rev)
		if from = previousMinor(r); from != nil {
			// Nodes move to the new minor from the previous one's
			// packages: the same upgrade checks, without a version rule.
			d, err := diffRecipes(r, from, opts.Build.ResolveOptions)
			if err != nil {
				c.fail("base", fmt.Errorf("%w: %w", ErrBase, err), "%v", err)
				return
			}
			for _, u := range d.upgrade {
				c.add("upgrade", Fail, "%s (from %s, the minor before)", u, from.Ref())
			}
			if len(d.upgrade) == 0 {
				c.add("upgrade", Pass, "no path moves to another package of the recipe without replacing and breaking it since %s, the minor before", from.Ref())
			}
		}
	} else {
		d, err := diffRecipes(r, old, opts.Build.ResolveOptions)
		if err != nil {
			c.fail("base", fmt.Errorf("%w: %w", ErrBase, err), "%v", err)
			return
		}
		rr.Base = d.oldVersion
		st, detail := versionCheck(d, base.Rev)
		c.add("version", st, "%s", detail)
		for _, u := range d.upgrade {
			c.add("upgrade", Fail, "%s", u)
		}
		if len(d.upgrade) == 0 {
			c.add("upgrade", Pass, "no path moves to another package of the recipe without replacing and breaking it since %s", base.Rev)
		}
		rr.Changes = d.changes
	}
	diffTrust(r, old, base.Rev, rv)
	// A new minor's privileges are compared with its predecessor's, as
	// nodes have them: the units, scripts and users it keeps are no news.
	diffPrivileges(r, from, opts.Build.ResolveOptions, rv)
	diffLeftBehind(r, from, opts.Build.ResolveOptions, rv)
	owners, self, err := base.shippers(ctx, r, opts.Build.ResolveOptions)
	if err != nil {
		c.fail("base", fmt.Errorf("%w: %w", ErrBase, err), "%v", err)
		return
	}
	// A new minor's relations are compared with its predecessor's: those
	// it keeps are no news.
	diffTakeover(r, from, owners, self, opts.Build.ResolveOptions, base.Rev, rv)
	flagged := map[string]bool{}
	for _, it := range rv.items {
		check := reviewKinds[it.Kind]
		flagged[check] = true
		c.add(check, Warn, "%s", it.Message)
	}
	if !flagged["trust"] {
		c.add("trust", Pass, "no trust change since %s (%s)", base.Rev, recipeTrustChecked())
	}
	if !flagged["privileges"] {
		since := base.Rev
		if old == nil && from != nil {
			since = from.Ref() + ", the minor before"
		}
		c.add("privileges", Pass, "no special bit, owner, mode, maintainer-script fragment, trigger or alternative added or changed since %s", since)
	}
	rr.review = rv.items
}

// previousMinor is the recipe of the minor before r's in r's versioned
// series (kubelet-1.31.yaml beside a new kubelet-1.32.yaml, as bump
// --new-minor writes it), loaded from r's folder as it is: the packages
// nodes upgrade from when they move to r's. nil when r is not of a series,
// or no earlier minor's recipe is there or loads (lint reports that one).
func previousMinor(r *recipe.Recipe) *recipe.Recipe {
	ref, ext := r.Ref(), filepath.Ext(r.Path)
	series := recipe.Component(ref)
	if series == ref {
		return nil
	}
	minor := strings.TrimPrefix(ref, series+"-")
	entries, err := os.ReadDir(filepath.Dir(r.Path))
	if err != nil {
		return nil
	}
	best := ""
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ext)
		if !ok || recipe.Component(name) != series || name == ref {
			continue
		}
		m := strings.TrimPrefix(name, series+"-")
		if c, err := debversion.CompareStrings(m, minor); err != nil || c >= 0 {
			continue
		}
		if c, err := debversion.CompareStrings(m, best); best == "" || err == nil && c > 0 {
			best = m
		}
	}
	if best == "" {
		return nil
	}
	prev, err := recipe.Load(filepath.Join(filepath.Dir(r.Path), series+"-"+best+ext), recipe.LoadOptions{Root: r.Root})
	if err != nil {
		return nil
	}
	return prev
}

// recipeDiff is what changed between a recipe and its base version, from
// their resolved recipes for every architecture either has.
type recipeDiff struct {
	newVersion, oldVersion string   // Debian versions ("" when no architecture resolves)
	changed                bool     // the packages change: what their bytes depend on differs
	changes                []string // per package: added, removed, files and control fields (sorted)
	why                    []string // what else changed the packages (sameContent), sorted
	upgrade                []string // what makes dpkg refuse the upgrade from the base's packages (movedPaths)
}

// diffRecipes compares the resolved recipes of r and old, architecture by
// architecture. An architecture only one of them has is added or removed.
// Trust is compared apart (diffTrust): it never changes the packages.
func diffRecipes(r, old *recipe.Recipe, po recipe.ResolveOptions) (recipeDiff, error) {
	var d recipeDiff
	var changes, upgrade byArch
	for _, a := range sortedUnique(append(r.ArchNames(), old.ArchNames()...)) {
		np, nerr := resolveFor(r, a, po)
		op, oerr := resolveFor(old, a, po)
		switch {
		case nerr != nil && oerr != nil:
			continue
		case oerr != nil:
			d.changes = append(d.changes, "architecture "+a+" added")
			d.changed, d.newVersion = true, np.DebianVersion
			continue
		case nerr != nil:
			d.changes = append(d.changes, "architecture "+a+" removed")
			d.changed, d.oldVersion = true, op.DebianVersion
			continue
		}
		d.newVersion, d.oldVersion = np.DebianVersion, op.DebianVersion
		same, why, notes, err := sameContent(np, op, r.Root, old.Root)
		if err != nil {
			return d, err
		}
		d.changed = d.changed || !same
		d.why = append(d.why, why...)
		changes.add(a, append(notes, diffPackages(np, op)...))
		upgrade.add(a, movedPaths(np, op))
		upgrade.add(a, aliasedMoves(np, op))
	}
	d.changes = sortedUnique(append(d.changes, changes.lines()...))
	d.why = sortedUnique(d.why)
	d.upgrade = sortedUnique(upgrade.lines())
	return d, nil
}

// byArch gathers changes found architecture by architecture, so that a
// change every architecture shares is shown once, naming them all.
type byArch struct {
	keys  []string
	archs map[string][]string // subject NUL what -> the architectures it is seen in
}

func (b *byArch) add(arch string, cs []change) {
	if b.archs == nil {
		b.archs = map[string][]string{}
	}
	for _, c := range cs {
		key := c.subject + "\x00" + c.what
		if b.archs[key] == nil {
			b.keys = append(b.keys, key)
		}
		b.archs[key] = append(b.archs[key], arch)
	}
}

// lines are the changes as "SUBJECT [ARCH, ...]: WHAT".
func (b *byArch) lines() []string {
	var out []string
	for _, key := range b.keys {
		subject, what, _ := strings.Cut(key, "\x00")
		out = append(out, fmt.Sprintf("%s [%s]: %s", subject, strings.Join(b.archs[key], ", "), what))
	}
	return out
}

// change is one difference of a package or source: its subject ("hello",
// "source hello") and what changed, for one architecture.
type change struct{ subject, what string }

// versionCheck is the version rule: when the packages change, the Debian
// version must increase (dpkg's ordering); unchanged packages may keep it.
func versionCheck(d recipeDiff, rev string) (Status, string) {
	switch c, err := debversion.CompareStrings(d.newVersion, d.oldVersion); {
	case err != nil:
		return Fail, err.Error()
	case !d.changed:
		return Pass, fmt.Sprintf("the packages are unchanged since %s (%s)", rev, d.newVersion)
	case c <= 0:
		why := d.why
		if len(d.changes) > 0 {
			why = append(why, "the changes listed")
		}
		what := ""
		if len(why) > 0 {
			what = " (" + strings.Join(why, ", ") + ")"
		}
		return Fail, fmt.Sprintf("the packages change%s but the Debian version %s does not increase over %s at %s: raise version, revision or epoch", what, d.newVersion, d.oldVersion, rev)
	default:
		return Pass, fmt.Sprintf("%s -> %s", d.oldVersion, d.newVersion)
	}
}

func resolveFor(r *recipe.Recipe, arch string, po recipe.ResolveOptions) (*recipe.Resolved, error) {
	if !slices.Contains(r.ArchNames(), arch) {
		return nil, fmt.Errorf("no architecture %s", arch)
	}
	return r.Resolve(arch, po)
}

// contentView is what of a resolved recipe the package bytes depend on:
// all of it but, per source, what only decides whether it is trusted (its
// signature, Sigstore material, checksum file: diffTrust reviews them),
// where it is downloaded from (its URL, and the upstream's name of the
// architecture, which only URLs and what they render into say), its pins
// (compared apart: the same bytes may gain a pin of another algorithm) and
// its name, which only the recipe uses (a source is its place in the
// list: renaming it changes no byte). Anything else, including fields
// added later, counts as content.
func contentView(p *recipe.Resolved) recipe.Resolved {
	v := *p
	v.UpstreamArch = ""
	place := map[string]string{}
	v.Sources = make([]recipe.ResolvedSource, len(p.Sources))
	for i, s := range p.Sources {
		place[s.Name] = fmt.Sprintf("#%d", i)
		s.Name, s.URL, s.Pinned = place[s.Name], "", nil
		s.Signature, s.Sigstore, s.NoSignatureReason, s.Checksums = nil, nil, "", nil
		v.Sources[i] = s
	}
	v.Packages = make([]recipe.ResolvedPackage, len(p.Packages))
	for i, pkg := range p.Packages {
		pkg.Files = slices.Clone(pkg.Files)
		for j, f := range pkg.Files {
			if f.Source != "" {
				pkg.Files[j].Source = place[f.Source]
			}
		}
		v.Packages[i] = pkg
	}
	return v
}

// trustFiles are the local files p reads only to decide trust: keyrings
// and pinned public keys, but for one a package also installs (a -keyring
// package shipping the key its source is verified with), which goes into
// that package's bytes.
func trustFiles(p *recipe.Resolved) map[string]bool {
	m := map[string]bool{}
	for _, s := range p.Sources {
		if s.Signature != nil {
			m[s.Signature.KeyringPath] = true
		}
		if s.Sigstore != nil && s.Sigstore.PublicKeyPath != "" {
			m[s.Sigstore.PublicKeyPath] = true
		}
		if s.Checksums != nil && s.Checksums.Clearsigned != nil {
			m[s.Checksums.Clearsigned.KeyringPath] = true
		}
	}
	for _, pp := range p.Packages {
		for _, f := range pp.Files {
			delete(m, f.LocalPath)
		}
		for _, f := range pp.Fragments {
			delete(m, f.LocalPath)
		}
	}
	return m
}

// sameContent reports whether two resolved recipes, whose recipes live
// under different roots, make the same package bytes: their content views
// agree (paths relative to their roots), every source's pins agree on the
// algorithms both have (one at least), and the local files the packages
// read have the same bytes. notes say which sources moved to another URL
// with the same pins; why names what changed that the package changes
// (diffPackages) do not show: a source's pinned bytes, the release date, the
// repository target, a file of the recipe's folder.
func sameContent(a, b *recipe.Resolved, rootA, rootB string) (same bool, why []string, notes []change, err error) {
	ja, err := json.Marshal(contentView(a))
	if err != nil {
		return false, nil, nil, err
	}
	jb, err := json.Marshal(contentView(b))
	if err != nil {
		return false, nil, nil, err
	}
	same = bytes.Equal(bytes.ReplaceAll(ja, []byte(rootA), nil), bytes.ReplaceAll(jb, []byte(rootB), nil))
	if !a.SourceDateEpoch.Equal(b.SourceDateEpoch) {
		why = append(why, "the release date")
	}
	if a.Component != b.Component || a.Suite != b.Suite {
		// No byte of the packages, but counted as one: one version would
		// then name two publications. Listed too: nodes whose sources name
		// only the old suite or component get no more updates.
		why = append(why, "the repository component or suite: no byte of the packages, but the same version would name two publications")
		target := func(p *recipe.Resolved) string {
			return fmt.Sprintf("suite %s, component %s", cmp.Or(p.Suite, "(the repository's default)"), p.Component)
		}
		notes = append(notes, change{"repository", fmt.Sprintf("published to %s, was %s: nodes whose apt sources name only the old one get no newer version", target(a), target(b))})
	}
	for i, sa := range a.Sources { // by place, as contentView compares them
		if i >= len(b.Sources) {
			same = false
			why = append(why, "source "+sa.Name+" (new)")
			continue
		}
		sb := b.Sources[i]
		switch {
		case !samePins(sa.Pinned, sb.Pinned):
			same = false
			why = append(why, "the pinned bytes of source "+sa.Name)
		case sa.Name != sb.Name && sa.URL != sb.URL:
			notes = append(notes, change{"source " + sa.Name, fmt.Sprintf("was source %s, downloaded from %s, was %s (the same pinned bytes)", sb.Name, sa.URL, sb.URL)})
		case sa.Name != sb.Name:
			notes = append(notes, change{"source " + sa.Name, fmt.Sprintf("was source %s (the same pinned bytes)", sb.Name)})
		case sa.URL != sb.URL:
			notes = append(notes, change{"source " + sa.Name, fmt.Sprintf("downloaded from %s, was %s (the same pinned bytes)", sa.URL, sb.URL)})
		}
	}
	if !same {
		return false, why, notes, nil
	}
	skip := trustFiles(a)
	for _, f := range a.LocalFiles() {
		if skip[f] {
			continue
		}
		ca, errA := confined.ReadFile(f, maxCompared)
		cb, errB := confined.ReadFile(filepath.Join(rootB, strings.TrimPrefix(f, rootA)), maxCompared)
		if errA != nil || errB != nil || !bytes.Equal(ca, cb) {
			return false, append(why, "the file "+filepath.ToSlash(strings.TrimPrefix(f, rootA+string(filepath.Separator)))), notes, nil
		}
	}
	return true, nil, notes, nil
}

// samePins reports whether two pin sets name the same bytes: they share an
// algorithm, and agree on every algorithm they share.
func samePins(a, b digest.Set) bool {
	shared := 0
	for alg, v := range a {
		if w, ok := b[alg]; ok {
			if v != w {
				return false
			}
			shared++
		}
	}
	return shared > 0
}

// diffPackages lists packages added or removed and, per package, files added
// or removed and control fields changed (Version aside: the version check
// covers it); a field of several lines (Description) as a diff of its lines.
func diffPackages(np, op *recipe.Resolved) []change {
	index := func(p *recipe.Resolved) map[string]*recipe.ResolvedPackage {
		m := map[string]*recipe.ResolvedPackage{}
		for i := range p.Packages {
			m[p.Packages[i].Name] = &p.Packages[i]
		}
		return m
	}
	ni, oi := index(np), index(op)
	var out []change
	for name, n := range ni {
		o, ok := oi[name]
		if !ok {
			out = append(out, change{name, "new package"})
			continue
		}
		nf, of := fileList(n), fileList(o)
		for f := range nf {
			if !of[f] {
				out = append(out, change{name, "+ " + f})
			}
		}
		for f := range of {
			if !nf[f] {
				out = append(out, change{name, "- " + f})
			}
		}
		nc, oc := n.Control(0), o.Control(0)
		fields := map[string]bool{}
		for _, f := range append(nc.Fields, oc.Fields...) {
			fields[f.Name] = true
		}
		for f := range fields {
			if f == "Version" || f == "Installed-Size" {
				continue
			}
			nv, ov := nc.Value(f), oc.Value(f)
			switch {
			case nv == ov:
			case strings.Contains(nv, "\n") || strings.Contains(ov, "\n"):
				// A Description: its changed lines, not both texts in full.
				out = append(out, change{name, f + ":\n" + lineDiff(ov, nv)})
			default:
				out = append(out, change{name, fmt.Sprintf("%s: %q -> %q", f, ov, nv)})
			}
		}
	}
	for name := range oi {
		if _, ok := ni[name]; !ok {
			out = append(out, change{name, "package removed"})
		}
	}
	return out
}

// fileList is every path a package installs, with its mode (and owner
// when it is not root) or link target.
func fileList(p *recipe.ResolvedPackage) map[string]bool {
	m := map[string]bool{}
	for _, f := range p.Files {
		m[fmt.Sprintf("%s (%s)", f.Dest, access{mode: f.Mode, owner: f.Owner})] = true
	}
	for _, d := range p.Directories {
		m[fmt.Sprintf("%s/ (%s)", d.Path, access{mode: d.Mode, owner: d.Owner})] = true
	}
	for _, l := range p.Symlinks {
		m[l.Dest+" -> "+l.Target] = true
	}
	for _, l := range p.Hardlinks {
		m[l.Dest+" (hardlink to "+l.Target+")"] = true
	}
	for _, g := range p.GeneratedFiles {
		m[g.Dest] = true
	}
	return m
}

// maxCompared bounds a recipe-folder file or keyring the gate compares
// between two trees (read whole; packaged files are megabytes at most).
const maxCompared = 256 << 20
