// Package gitread answers one question without running git: does the
// checkout a file lies in hold exactly these bytes for it in its HEAD commit?
// A provenance record may then name the commit a recipe came from.
//
// It reads the repository's files directly, read-only: .git as a folder or a
// "gitdir:" file (worktrees, submodules), HEAD, loose and packed refs, loose
// objects and pack files (index v2, offset and reference deltas), alternates,
// SHA-1 and SHA-256 object formats. It never runs git, so nothing in a
// repository's config (hooks, filters, fsmonitor) runs, it works where git is
// not installed, and a hostile repository costs a bounded amount:
//
//   - Every file is opened through internal/confined, relative to the git
//     folder it belongs in: never a FIFO or device (the open does not block),
//     never a symlink that leaves that folder, regular files only, each read
//     bounded. The folders themselves are found as git finds them (".git",
//     "gitdir:", "commondir", "objects/info/alternates"), and may lie
//     elsewhere, as a worktree's or a shared clone's do; .git itself may not
//     be a symlink.
//   - Objects are checked against their ids; every byte inflated or rebuilt
//     from deltas is charged to one budget per call (MaxWork), one object is
//     at most MaxObjectSize, a delta chain at most MaxDeltaChain long, and a
//     reference delta whose base is still being rebuilt (a cycle) is refused.
//   - The context is checked between objects: a cancelled build stops it.
//   - Errors name the role of a file (HEAD, a ref, packed-refs, a pack) and
//     never quote its content: a file planted to be echoed stays unread.
//
// A repository it cannot read (the reftable ref format, a damaged pack, a
// partial clone without the trees, a planted FIFO) is an error; callers
// treat that as "not known", never as a failure of their own work.
package gitread

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/updeb/updeb/internal/confined"
)

// State says how a file compares with the HEAD commit of its checkout.
type State string

const (
	Clean     State = "clean"     // HEAD holds the file at this path with exactly these bytes
	Modified  State = "modified"  // HEAD holds something else at this path
	Untracked State = "untracked" // HEAD has no file at this path (or there is no commit yet)
)

// Limits of what a read may cost.
const (
	// MaxObjectSize bounds one commit or tree (and each delta and base on
	// the way to it): real ones are kilobytes, a huge tree a few MiB.
	MaxObjectSize = 16 << 20
	// MaxWork bounds the bytes one FileAtHead call inflates or rebuilds from
	// deltas, all objects together: memory and time stay bounded whatever
	// the packs say.
	MaxWork = 128 << 20
	// MaxDeltaChain bounds a delta chain (git pack-objects caps --depth at
	// 4095; its default is 50).
	MaxDeltaChain = 4096

	maxRefDepth   = 10 // symbolic refs followed
	maxRefLine    = 4096
	maxAlternates = 5       // nesting of objects/info/alternates
	maxStores     = 64      // objects folders, alternates included (each object is looked for in each)
	maxPacks      = 1000    // pack files per objects folder (git gc repacks at 50)
	maxTextFile   = 1 << 20 // config, alternates
	maxPackedRefs = 256 << 20
)

// ErrUnsupported is wrapped when a repository uses a format this package
// does not read.
var ErrUnsupported = errors.New("gitread: unsupported repository format")

// ErrCorrupt is wrapped when a repository's files do not parse or an object
// does not match its id.
var ErrCorrupt = errors.New("gitread: damaged repository data")

// ErrRefused is wrapped when a repository's file is refused unread: a FIFO,
// device or folder where a file belongs, a symlink out of its folder, a file
// over its size limit, or more work than MaxWork.
var ErrRefused = errors.New("gitread: refused")

// Result is the answer for one file.
type Result struct {
	Top    string // the checkout's top folder
	Path   string // the file's path in the repository, slash-separated
	Commit string // HEAD's commit id in hex; "" when the branch has no commit yet
	State  State
}

// FileAtHead compares content, the bytes of the file at path, with what the
// HEAD commit of the checkout holding path has at that path. It returns nil
// and no error when path is in no git checkout. It stops with ctx's error
// when ctx is done. The checkout is looked for, as git looks for it, from
// the folder path really lies in: reached through a symlink, a file of a
// checkout is in it, and a folder linked into a checkout from outside is not.
func FileAtHead(ctx context.Context, path string, content []byte) (*Result, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(abs))
	if err != nil {
		return nil, err
	}
	abs = filepath.Join(dir, filepath.Base(abs))
	r, err := open(ctx, dir)
	if err != nil || r == nil {
		return nil, err
	}
	defer r.close()
	rel, err := filepath.Rel(r.top, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("gitread: %s is outside %s", abs, r.top)
	}
	res := &Result{Top: r.top, Path: filepath.ToSlash(rel), State: Untracked}
	commit, err := r.head()
	if err != nil || commit == "" {
		return res, err
	}
	res.Commit = commit
	id, mode, err := r.lookup(commit, res.Path)
	if err != nil || id == nil {
		return res, err
	}
	res.State = Modified
	if (mode == "100644" || mode == "100755") && bytes.Equal(id, r.hashObject("blob", content)) {
		res.State = Clean
	}
	return res, nil
}

// repo is an opened repository.
type repo struct {
	ctx     context.Context
	top     string // worktree top folder
	gitDir  string // this worktree's git folder (HEAD, per-worktree refs)
	common  string // the shared git folder (objects, refs, packed-refs, config)
	newHash func() hash.Hash
	hexLen  int
	stores  []*store // objects folder and its alternates
	work    int64    // bytes inflated or rebuilt so far (MaxWork)
	reading map[string]bool
	z       io.ReadCloser // the zlib reader, reused
}

// errorf returns an error about the repository at r.top wrapping kind.
func (r *repo) errorf(kind error, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", kind, r.top, fmt.Sprintf(format, args...))
}

// charge counts n more bytes of work, refusing past MaxWork; it also stops
// when the context is done.
func (r *repo) charge(n int64) error {
	if err := r.ctx.Err(); err != nil {
		return err
	}
	r.work += n
	if n < 0 || r.work > MaxWork {
		return r.errorf(ErrRefused, "reading HEAD's tree takes more than %d MiB of objects", MaxWork>>20)
	}
	return nil
}

// open finds the checkout holding dir, walking up; nil when there is none.
func open(ctx context.Context, dir string) (*repo, error) {
	for d := dir; ; {
		dotgit := filepath.Join(d, ".git")
		fi, err := os.Lstat(dotgit)
		switch {
		case err == nil && fi.IsDir():
			return openAt(ctx, d, dotgit)
		case err == nil && fi.Mode().IsRegular():
			gd, err := readGitFile(d)
			if err != nil {
				return nil, err
			}
			return openAt(ctx, d, gd)
		case err == nil:
			return nil, fmt.Errorf("%w: %s is %s, not a folder or a \"gitdir:\" file", ErrRefused, dotgit, confined.Kind(fi.Mode()))
		case !errors.Is(err, fs.ErrNotExist):
			return nil, err
		}
		parent := filepath.Dir(d)
		if parent == d {
			return nil, nil
		}
		d = parent
	}
}

// readGitFile reads top's ".git" file: "gitdir: PATH", relative to top.
func readGitFile(top string) (string, error) {
	line, err := firstLine(top, ".git")
	if err != nil {
		return "", fmt.Errorf("%s: .git: %w", top, err)
	}
	gd, ok := strings.CutPrefix(line, "gitdir: ")
	if !ok || gd == "" || strings.ContainsRune(gd, 0) {
		return "", fmt.Errorf("%w: %s: .git: want \"gitdir: PATH\"", ErrCorrupt, top)
	}
	if !filepath.IsAbs(gd) {
		gd = filepath.Join(top, gd)
	}
	return filepath.Clean(gd), nil
}

func openAt(ctx context.Context, top, gitDir string) (*repo, error) {
	r := &repo{ctx: ctx, top: top, gitDir: gitDir, common: gitDir, newHash: sha1.New, hexLen: 40, reading: map[string]bool{}}
	if err := r.checkFolder("the git folder", gitDir); err != nil {
		return nil, err
	}
	if c, err := firstLine(gitDir, "commondir"); err == nil {
		if c == "" || strings.ContainsRune(c, 0) {
			return nil, r.errorf(ErrCorrupt, "commondir names no folder")
		}
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		r.common = filepath.Clean(c)
		if err := r.checkFolder("the folder commondir names", r.common); err != nil {
			return nil, err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, r.fileError("commondir", err)
	}
	ext, err := r.readExtensions()
	if err != nil {
		return nil, err
	}
	switch ext["objectformat"] {
	case "", "sha1":
	case "sha256":
		r.newHash, r.hexLen = sha256.New, 64
	default:
		return nil, r.errorf(ErrUnsupported, "an object format other than sha1 and sha256")
	}
	if rs := ext["refstorage"]; rs != "" && rs != "files" {
		return nil, r.errorf(ErrUnsupported, "a ref storage other than files (reftable?)")
	}
	if err := r.addStore(filepath.Join(r.common, "objects"), 0); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

// checkFolder checks that dir, a folder the repository's files point at
// ("gitdir:", "commondir", an alternate), is one: a FIFO or device there is
// refused without blocking, and the error names the folder's role.
func (r *repo) checkFolder(role, dir string) error {
	root, err := confined.OpenRoot(dir)
	if err != nil {
		return r.fileError(role, err)
	}
	return root.Close()
}

// fileError describes an error reading the repository file name (its role,
// never its content); a missing file stays fs.ErrNotExist.
func (r *repo) fileError(name string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: %s: %w", r.top, name, fs.ErrNotExist)
	case errors.Is(err, confined.ErrRefused):
		return r.errorf(ErrRefused, "%s: %v", name, refusalReason(err))
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	return r.errorf(ErrCorrupt, "%s: cannot be read (%v)", name, errors.Unwrap(err))
}

// refusalReason is what confined says about a refused file, without the
// path (which may come from the repository's own files).
func refusalReason(err error) string {
	msg := err.Error()
	if _, after, ok := strings.Cut(msg, confined.ErrRefused.Error()+": "); ok {
		return after
	}
	return "refused"
}

func (r *repo) close() {
	if r.z != nil {
		r.z.Close()
	}
	for _, s := range r.stores {
		s.close()
	}
}

// readExtensions returns the keys of the [extensions] section of the git
// config file, lower-cased. Only that section matters here.
func (r *repo) readExtensions() (map[string]string, error) {
	out := map[string]string{}
	data, err := confined.ReadIn(r.common, maxTextFile, "config")
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, r.fileError("config", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, maxRefLine)
	in := false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			in = strings.EqualFold(strings.TrimSpace(strings.Trim(line, "[]")), "extensions")
			continue
		}
		if k, v, ok := strings.Cut(line, "="); in && ok {
			out[strings.ToLower(strings.TrimSpace(k))] = strings.ToLower(strings.TrimSpace(v))
		}
	}
	if sc.Err() != nil {
		return nil, r.errorf(ErrCorrupt, "config: a line longer than %d bytes", maxRefLine)
	}
	return out, nil
}

// firstLine returns the first line of the small file name in dir, without
// its newline; the file is opened confined to dir.
func firstLine(dir, name string) (string, error) {
	b, err := confined.ReadIn(dir, maxRefLine, name)
	if err != nil {
		return "", err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimSpace(line), nil
}

// head resolves HEAD to a commit id (hex); "" for a branch with no commit.
func (r *repo) head() (string, error) {
	name := "HEAD"
	for range maxRefDepth {
		v, ok, err := r.readRef(name)
		if err != nil {
			return "", err
		}
		if !ok {
			return "", nil // an unborn branch
		}
		target, symbolic := strings.CutPrefix(v, "ref: ")
		if !symbolic {
			if !r.isID(v) {
				return "", r.errorf(ErrCorrupt, "ref %s does not hold an object id", name)
			}
			return v, nil
		}
		if !validRefName(target) {
			return "", r.errorf(ErrCorrupt, "ref %s points at no valid ref name under refs/", name)
		}
		name = target
	}
	return "", r.errorf(ErrCorrupt, "symbolic refs nested deeper than %d", maxRefDepth)
}

// validRefName accepts the ref names git's check-ref-format accepts under
// refs/ (printable ASCII only, so that a name is safe to print).
func validRefName(name string) bool {
	if !strings.HasPrefix(name, "refs/") || len(name) > 1024 || strings.Contains(name, "..") || strings.Contains(name, "@{") ||
		strings.HasSuffix(name, ".") || strings.HasSuffix(name, ".lock") {
		return false
	}
	for _, c := range []byte(name) {
		if c <= ' ' || c >= 0x7f || strings.IndexByte("~^:?*[\\", c) >= 0 {
			return false
		}
	}
	for _, part := range strings.Split(name, "/") {
		if part == "" || strings.HasPrefix(part, ".") {
			return false
		}
	}
	return true
}

func (r *repo) isID(s string) bool {
	if len(s) != r.hexLen {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}

// perWorktree reports whether a ref lives in the worktree's own git folder.
func perWorktree(name string) bool {
	return name == "HEAD" || strings.HasPrefix(name, "refs/bisect/") || strings.HasPrefix(name, "refs/worktree/") || strings.HasPrefix(name, "refs/rewritten/")
}

// readRef returns a ref's value (an id or "ref: NAME"), from its loose file
// or from packed-refs; ok is false when the ref does not exist.
func (r *repo) readRef(name string) (string, bool, error) {
	dir := r.common
	if perWorktree(name) {
		dir = r.gitDir
	}
	v, err := firstLine(dir, name)
	switch {
	case err == nil:
		return v, true, nil
	case errors.Is(err, confined.ErrFolder) && name != "HEAD":
		// refs/heads/a when refs/heads/a/b exists is a folder, and a is
		// then in packed-refs only
	case !errors.Is(err, fs.ErrNotExist):
		return "", false, r.fileError(name, err)
	case name == "HEAD":
		return "", false, r.errorf(ErrCorrupt, "the git folder has no HEAD")
	}
	return r.packedRef(name)
}

func (r *repo) packedRef(name string) (string, bool, error) {
	f, fi, err := confined.Open(r.common, "packed-refs")
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, r.fileError("packed-refs", err)
	}
	defer f.Close()
	if fi.Size() > maxPackedRefs {
		// read only in part, a ref past the bound would read as missing:
		// a branch with no commit, a false "untracked"
		return "", false, r.errorf(ErrRefused, "packed-refs: larger than %d MiB", maxPackedRefs>>20)
	}
	sc := bufio.NewScanner(io.LimitReader(f, maxPackedRefs))
	sc.Buffer(nil, maxRefLine)
	for lines := 0; sc.Scan(); lines++ {
		if lines%4096 == 0 {
			if err := r.ctx.Err(); err != nil {
				return "", false, err
			}
		}
		line := sc.Text()
		if line == "" || line[0] == '#' || line[0] == '^' {
			continue
		}
		if id, ref, ok := strings.Cut(line, " "); ok && ref == name {
			return id, true, nil
		}
	}
	if sc.Err() != nil {
		return "", false, r.errorf(ErrCorrupt, "packed-refs: a line longer than %d bytes, or unreadable", maxRefLine)
	}
	return "", false, nil
}

// hashObject returns the id of an object of type typ with data.
func (r *repo) hashObject(typ string, data []byte) []byte {
	h := r.newHash()
	fmt.Fprintf(h, "%s %d\x00", typ, len(data))
	h.Write(data)
	return h.Sum(nil)
}

// lookup returns the id and mode of the tree entry at path in commit; a nil
// id when there is none.
func (r *repo) lookup(commit, path string) ([]byte, string, error) {
	id, _ := hex.DecodeString(commit)
	data, err := r.object(id, "commit")
	if err != nil {
		return nil, "", err
	}
	line, _, _ := bytes.Cut(data, []byte("\n"))
	treeHex, ok := bytes.CutPrefix(line, []byte("tree "))
	if !ok || !r.isID(string(treeHex)) {
		return nil, "", r.errorf(ErrCorrupt, "commit %s has no tree line", commit)
	}
	id, _ = hex.DecodeString(string(treeHex))
	mode := "40000"
	for _, name := range strings.Split(path, "/") {
		if mode != "40000" {
			return nil, "", nil // a file or link where the path wants a folder
		}
		tree, err := r.object(id, "tree")
		if err != nil {
			return nil, "", err
		}
		if id, mode, err = findEntry(tree, name, r.newHash().Size()); err != nil || id == nil {
			if err != nil {
				err = r.errorf(ErrCorrupt, "tree %x: %v", id, err)
			}
			return nil, "", err
		}
	}
	return id, mode, nil
}

// findEntry finds name in a tree object: entries "MODE NAME\0ID".
func findEntry(tree []byte, name string, idLen int) ([]byte, string, error) {
	for len(tree) > 0 {
		sp := bytes.IndexByte(tree, ' ')
		nul := bytes.IndexByte(tree, 0)
		if sp <= 0 || nul < sp || len(tree) < nul+1+idLen {
			return nil, "", errors.New("truncated tree entry")
		}
		mode, entry := string(tree[:sp]), string(tree[sp+1:nul])
		id := tree[nul+1 : nul+1+idLen]
		tree = tree[nul+1+idLen:]
		if entry == name {
			return id, canonMode(mode), nil
		}
	}
	return nil, "", nil
}

// canonMode is a tree entry's mode as git reads it (its canon_mode): old or
// foreign tools wrote a folder as 040000 and a file as 100664, which git
// takes for 40000 and 100644.
func canonMode(mode string) string {
	m, err := strconv.ParseUint(mode, 8, 32)
	switch {
	case err != nil:
		return mode
	case m&0o170000 == 0o100000 && m&0o100 != 0:
		return "100755"
	case m&0o170000 == 0o100000:
		return "100644"
	case m&0o170000 == 0o120000:
		return "120000"
	case m&0o170000 == 0o040000:
		return "40000"
	}
	return "160000"
}

// object returns the content of the object id, which must be of type want.
func (r *repo) object(id []byte, want string) ([]byte, error) {
	typ, data, err := r.read(id, 0)
	if err != nil {
		return nil, err
	}
	if typ != want {
		return nil, r.errorf(ErrCorrupt, "object %x is a %s, not a %s", id, typ, want)
	}
	return data, nil
}

// read finds an object in the stores and checks it against its id. depth
// counts the deltas followed to get here; an object whose rebuilding is
// under way (a reference delta that is, through its bases, its own base) is
// a cycle.
func (r *repo) read(id []byte, depth int) (string, []byte, error) {
	if depth > MaxDeltaChain {
		return "", nil, r.errorf(ErrCorrupt, "delta chain longer than %d", MaxDeltaChain)
	}
	if err := r.charge(0); err != nil {
		return "", nil, err
	}
	key := string(id)
	if r.reading[key] {
		return "", nil, r.errorf(ErrCorrupt, "object %x is a delta whose chain of bases leads back to itself", id)
	}
	r.reading[key] = true
	defer delete(r.reading, key)
	for _, s := range r.stores {
		typ, data, found, err := s.read(r, id, depth)
		if err != nil {
			return "", nil, err
		}
		if !found {
			continue
		}
		if !bytes.Equal(r.hashObject(typ, data), id) {
			return "", nil, r.errorf(ErrCorrupt, "object %x does not match its id", id)
		}
		return typ, data, nil
	}
	return "", nil, r.errorf(ErrCorrupt, "object %x not found (a partial or shallow clone?)", id)
}
