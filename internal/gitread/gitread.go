// Package gitread answers one question without running git: does the
// checkout a file lies in hold exactly these bytes for it in its HEAD commit?
// A provenance record may then name the commit a recipe came from.
//
// It reads the repository's files directly, read-only: .git as a folder or a
// "gitdir:" file (worktrees, submodules), HEAD, loose and packed refs, loose
// objects and pack files (index v2, offset and reference deltas), alternates,
// SHA-1 and SHA-256 object formats. It never runs git, so nothing in a
// repository's config (hooks, filters, fsmonitor) runs, and it works where git
// is not installed. Every object it uses is checked against its id, and reads
// are bounded (object size, delta chain length, ref nesting).
//
// A repository it cannot read (the reftable ref format, a damaged pack, a
// partial clone without the trees) is an error; callers treat that as "not
// known", never as a failure of their own work.
package gitread

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"strings"
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
	maxObjectSize = 64 << 20 // a commit or tree; real ones are kilobytes
	maxDeltaChain = 4096     // git pack-objects caps --depth at 4095
	maxRefDepth   = 10       // symbolic refs followed
	maxRefLine    = 4096
	maxAlternates = 5 // nesting of objects/info/alternates
)

// ErrUnsupported is wrapped when a repository uses a format this package
// does not read.
var ErrUnsupported = errors.New("gitread: unsupported repository format")

// ErrCorrupt is wrapped when a repository's files do not parse or an object
// does not match its id.
var ErrCorrupt = errors.New("gitread: damaged repository data")

// Result is the answer for one file.
type Result struct {
	Top    string // the checkout's top folder
	Path   string // the file's path in the repository, slash-separated
	Commit string // HEAD's commit id in hex; "" when the branch has no commit yet
	State  State
}

// FileAtHead compares content, the bytes of the file at path, with what the
// HEAD commit of the checkout holding path has at that path. It returns nil
// and no error when path is in no git checkout.
func FileAtHead(path string, content []byte) (*Result, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	r, err := open(filepath.Dir(abs))
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
	top     string // worktree top folder
	gitDir  string // this worktree's git folder (HEAD, per-worktree refs)
	common  string // the shared git folder (objects, refs, packed-refs, config)
	newHash func() hash.Hash
	hexLen  int
	stores  []*store // objects folder and its alternates
}

// open finds the checkout holding dir, walking up; nil when there is none.
func open(dir string) (*repo, error) {
	for d := dir; ; {
		dotgit := filepath.Join(d, ".git")
		fi, err := os.Stat(dotgit)
		switch {
		case err == nil && fi.IsDir():
			return openAt(d, dotgit)
		case err == nil && fi.Mode().IsRegular():
			gd, err := readGitFile(dotgit)
			if err != nil {
				return nil, err
			}
			return openAt(d, gd)
		case err != nil && !errors.Is(err, os.ErrNotExist):
			return nil, err
		}
		parent := filepath.Dir(d)
		if parent == d {
			return nil, nil
		}
		d = parent
	}
}

// readGitFile reads a ".git" file: "gitdir: PATH", relative to its folder.
func readGitFile(path string) (string, error) {
	line, err := firstLine(path)
	if err != nil {
		return "", err
	}
	gd, ok := strings.CutPrefix(line, "gitdir: ")
	if !ok || gd == "" {
		return "", fmt.Errorf("%w: %s: want \"gitdir: PATH\"", ErrCorrupt, path)
	}
	if !filepath.IsAbs(gd) {
		gd = filepath.Join(filepath.Dir(path), gd)
	}
	return gd, nil
}

func openAt(top, gitDir string) (*repo, error) {
	r := &repo{top: top, gitDir: gitDir, common: gitDir, newHash: sha1.New, hexLen: 40}
	if c, err := firstLine(filepath.Join(gitDir, "commondir")); err == nil {
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		r.common = c
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	ext, err := readExtensions(filepath.Join(r.common, "config"))
	if err != nil {
		return nil, err
	}
	switch ext["objectformat"] {
	case "", "sha1":
	case "sha256":
		r.newHash, r.hexLen = sha256.New, 64
	default:
		return nil, fmt.Errorf("%w: %s: object format %q", ErrUnsupported, r.common, ext["objectformat"])
	}
	if rs := ext["refstorage"]; rs != "" && rs != "files" {
		return nil, fmt.Errorf("%w: %s: ref storage %q", ErrUnsupported, r.common, rs)
	}
	if err := r.addStore(filepath.Join(r.common, "objects"), 0); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

func (r *repo) close() {
	for _, s := range r.stores {
		s.close()
	}
}

// readExtensions returns the keys of the [extensions] section of a git config
// file, lower-cased. Only that section matters here.
func readExtensions(path string) (map[string]string, error) {
	out := map[string]string{}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 1<<20))
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
	return out, sc.Err()
}

// firstLine returns the first line of a small file, without its newline.
func firstLine(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxRefLine))
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
				return "", fmt.Errorf("%w: ref %s is %q, not an object id", ErrCorrupt, name, v)
			}
			return v, nil
		}
		if !validRefName(target) {
			return "", fmt.Errorf("%w: ref %s points at %q", ErrCorrupt, name, target)
		}
		name = target
	}
	return "", fmt.Errorf("%w: symbolic refs nested deeper than %d", ErrCorrupt, maxRefDepth)
}

func validRefName(name string) bool {
	if !strings.HasPrefix(name, "refs/") || strings.ContainsAny(name, "\\\x00") {
		return false
	}
	for _, part := range strings.Split(name, "/") {
		if part == "" || part == "." || part == ".." {
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
	v, err := firstLine(filepath.Join(dir, filepath.FromSlash(name)))
	switch {
	case err == nil:
		return v, true, nil
	case !errors.Is(err, os.ErrNotExist) && !isDirError(err):
		return "", false, err
	case name == "HEAD":
		return "", false, fmt.Errorf("%w: %s has no HEAD", ErrCorrupt, dir)
	}
	return r.packedRef(name)
}

// isDirError is the error of reading a folder as a file (refs/heads/a when
// refs/heads/a/b exists is a folder, and a is then in packed-refs only).
func isDirError(err error) bool {
	var pe *os.PathError
	return errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "is a directory")
}

func (r *repo) packedRef(name string) (string, bool, error) {
	f, err := os.Open(filepath.Join(r.common, "packed-refs"))
	if errors.Is(err, os.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, maxRefLine)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' || line[0] == '^' {
			continue
		}
		if id, ref, ok := strings.Cut(line, " "); ok && ref == name {
			return id, true, nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", false, fmt.Errorf("%w: packed-refs: %v", ErrCorrupt, err)
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
		return nil, "", fmt.Errorf("%w: commit %s has no tree line", ErrCorrupt, commit)
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
			return nil, "", fmt.Errorf("%w: truncated tree entry", ErrCorrupt)
		}
		mode, entry := string(tree[:sp]), string(tree[sp+1:nul])
		id := tree[nul+1 : nul+1+idLen]
		tree = tree[nul+1+idLen:]
		if entry == name {
			return id, mode, nil
		}
	}
	return nil, "", nil
}

// object returns the content of the object id, which must be of type want.
func (r *repo) object(id []byte, want string) ([]byte, error) {
	typ, data, err := r.read(id, 0)
	if err != nil {
		return nil, err
	}
	if typ != want {
		return nil, fmt.Errorf("%w: object %x is a %s, not a %s", ErrCorrupt, id, typ, want)
	}
	return data, nil
}

// read finds an object in the stores and checks it against its id. depth
// counts the reference deltas followed to get here.
func (r *repo) read(id []byte, depth int) (string, []byte, error) {
	if depth > maxDeltaChain {
		return "", nil, fmt.Errorf("%w: delta chain longer than %d", ErrCorrupt, maxDeltaChain)
	}
	for _, s := range r.stores {
		typ, data, found, err := s.read(r, id, depth)
		if err != nil {
			return "", nil, err
		}
		if !found {
			continue
		}
		if !bytes.Equal(r.hashObject(typ, data), id) {
			return "", nil, fmt.Errorf("%w: object %x does not match its id", ErrCorrupt, id)
		}
		return typ, data, nil
	}
	return "", nil, fmt.Errorf("%w: object %x not found (a partial or shallow clone?)", ErrCorrupt, id)
}
