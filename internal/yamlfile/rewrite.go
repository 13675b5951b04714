package yamlfile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/updeb/updeb/internal/confined"
	"github.com/updeb/updeb/pkg/atomicfile"
	"github.com/updeb/updeb/pkg/lockfile"
	"github.com/updeb/updeb/pkg/termtext"
)

// ErrNotRewritten is wrapped when a rewrite is refused: what the new text
// reads as is not exactly the old file with the intended values. The file
// is left as it was.
var ErrNotRewritten = errors.New("not rewritten")

// ErrChanged is wrapped, with ErrNotRewritten, when another process changed
// the file (or made it) while it was being written: it holds that change.
var ErrChanged = errors.New("another process changed it")

// Change is one scalar a rewrite sets: the value at Path (mapping keys, and
// sequence indexes in decimal, from the document's top) becomes Value. A
// path the old file lacks is added (a new key, or a new mapping holding
// only changes).
type Change struct {
	Path  []string
	Value string
}

func (c Change) String() string { return strings.Join(c.Path, ".") }

// ChangesOf returns the Change of each edit, its path found in the document
// top (which the edits' nodes belong to).
func ChangesOf(top *yaml.Node, edits []Edit) ([]Change, error) {
	paths := map[*yaml.Node][]string{}
	for _, e := range edits {
		paths[e.Node] = nil
	}
	found := map[*yaml.Node]bool{}
	pathsOf(top, nil, paths, found) // one walk for every edit, not one each
	out := make([]Change, 0, len(edits))
	for _, e := range edits {
		if !found[e.Node] {
			return nil, fmt.Errorf("yamlfile: line %d:%d is not a value of the document", e.Node.Line, e.Node.Column)
		}
		out = append(out, Change{Path: paths[e.Node], Value: e.Value})
	}
	return out, nil
}

// pathsOf records the path (from n, at at) of each node of paths under n.
func pathsOf(n *yaml.Node, at []string, paths map[*yaml.Node][]string, found map[*yaml.Node]bool) {
	if _, ok := paths[n]; ok && !found[n] {
		paths[n], found[n] = slices.Clone(at), true
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 1 {
			pathsOf(n.Content[0], at, paths, found)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			pathsOf(n.Content[i+1], append(at, n.Content[i].Value), paths, found)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			pathsOf(c, append(at, strconv.Itoa(i)), paths, found)
		}
	}
}

// Verify re-reads original and updated as YAML (one document, as Document
// reads them) and checks that updated holds exactly the changes and is
// otherwise original: every other key, value, tag, style and comment the
// same. Comments may differ only on the nodes of a change's path (a mark
// above a rewritten pin, say). A new key, or a new entry at the end of a
// list, may hold only changes. A refusal wraps ErrNotRewritten and names
// the first difference.
//
// Both are read with "\r\n" as "\n": the same line break to YAML, but
// yaml.v3 counts it as two when it places comments (a blank line between):
// a comment line added above a key of a CRLF file would read as the foot
// of the key before it, not the head of its own.
func Verify(file string, original, updated []byte, changes []Change) error {
	parse := func(data []byte) (*yaml.Node, error) {
		d := &Decoder{File: file}
		top := d.Document(bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n")), Options{})
		if err := d.Err(); err != nil {
			return nil, err
		}
		return top, nil
	}
	a, err := parse(original)
	if err != nil {
		return err
	}
	b, err := parse(updated)
	if err != nil {
		return fmt.Errorf("%s: %w: the new text does not parse: %v", file, ErrNotRewritten, err)
	}
	want, leads := map[string]Change{}, map[string]bool{}
	for _, c := range changes {
		want[pathKey(c.Path)] = c
		for i := range len(c.Path) + 1 {
			leads[pathKey(c.Path[:i])] = true
		}
	}
	v := &verifier{file: file, want: want, leads: leads, seen: map[string]bool{}}
	v.compare(a, b, nil)
	for k, c := range want {
		if v.err == nil && !v.seen[k] {
			v.fail(nil, "%s was not written", c)
		}
	}
	return v.err
}

// pathKey joins a path unambiguously.
func pathKey(p []string) string {
	var b strings.Builder
	for _, s := range p {
		b.WriteString(strconv.Quote(s))
	}
	return b.String()
}

type verifier struct {
	file  string
	want  map[string]Change
	leads map[string]bool // the changes' paths and every path leading to one
	seen  map[string]bool
	err   error
}

func (v *verifier) fail(n *yaml.Node, format string, args ...any) {
	if v.err != nil {
		return
	}
	where := v.file
	if n != nil {
		where = fmt.Sprintf("%s:%d:%d", v.file, n.Line, n.Column)
	}
	// Clipped as a finding is: the values quoted may be most of the file.
	v.err = fmt.Errorf("%s: %w: the file would read differently from what was meant: %s", where, ErrNotRewritten, ClipMessage(termtext.Escape(fmt.Sprintf(format, args...))))
}

// onPath reports whether p is a change's path or leads to one.
func (v *verifier) onPath(p []string) bool { return v.leads[pathKey(p)] }

// compare walks a (the old tree, nil where the path is new) and b together.
func (v *verifier) compare(a, b *yaml.Node, path []string) {
	if v.err != nil {
		return
	}
	if c, ok := v.want[pathKey(path)]; ok {
		v.seen[pathKey(path)] = true
		if b.Kind != yaml.ScalarNode || b.Value != c.Value {
			v.fail(b, "%s reads %q, not %q", c, b.Value, c.Value)
		}
		return
	}
	if a == nil { // a new mapping or sequence: it may hold only changes
		switch b.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(b.Content); i += 2 {
				p := append(slices.Clone(path), b.Content[i].Value)
				if !v.onPath(p) {
					v.fail(b.Content[i], "an unexpected new key %q", b.Content[i].Value)
					return
				}
				v.compare(nil, b.Content[i+1], p)
			}
		default:
			v.fail(b, "an unexpected new value at %s", strings.Join(path, "."))
		}
		return
	}
	if a.Kind != b.Kind || a.Tag != b.Tag || a.Style != b.Style || a.Value != b.Value {
		v.fail(b, "the value at %q changed (%q became %q)", strings.Join(path, "."), a.Value, b.Value)
		return
	}
	if !v.onPath(path) && (a.HeadComment != b.HeadComment || a.LineComment != b.LineComment || a.FootComment != b.FootComment) {
		v.fail(b, "a comment changed at %q", strings.Join(path, "."))
		return
	}
	switch a.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		// A list may gain entries at its end, each holding only changes (a
		// release set added by bump --new-minor); none may go.
		extra := len(b.Content) - len(a.Content)
		if extra < 0 || extra > 0 && (a.Kind != yaml.SequenceNode || !v.onPath(append(slices.Clone(path), strconv.Itoa(len(a.Content))))) {
			v.fail(b, "a list at %q has %d entries, not %d", strings.Join(path, "."), len(b.Content), len(a.Content))
			return
		}
		for i := range b.Content {
			p := path
			if a.Kind == yaml.SequenceNode {
				p = append(slices.Clone(path), strconv.Itoa(i))
			}
			if i >= len(a.Content) {
				v.compare(nil, b.Content[i], p)
				continue
			}
			v.compare(a.Content[i], b.Content[i], p)
		}
	case yaml.MappingNode:
		j := 0
		for i := 0; i+1 < len(b.Content); i += 2 {
			k := b.Content[i]
			p := append(slices.Clone(path), k.Value)
			if j+1 < len(a.Content) && a.Content[j].Value == k.Value {
				ka := a.Content[j]
				if ka.Tag != k.Tag || ka.Style != k.Style {
					v.fail(k, "the key %q changed", k.Value)
					return
				}
				if !v.onPath(p) && (ka.HeadComment != k.HeadComment || ka.LineComment != k.LineComment || ka.FootComment != k.FootComment) {
					v.fail(k, "a comment changed at %q", strings.Join(p, "."))
					return
				}
				v.compare(a.Content[j+1], b.Content[i+1], p)
				j += 2
				continue
			}
			if !v.onPath(p) {
				v.fail(k, "an unexpected new key %q", k.Value)
				return
			}
			v.compare(nil, b.Content[i+1], p)
		}
		if j < len(a.Content) {
			v.fail(b, "the key %q is gone", a.Content[j].Value)
		}
	}
}

// Rewrite is the one way updeb changes in place a YAML file it did not
// create (a recipe by bump, a release set, a data file): it replaces path,
// whose content the caller read as original, with updated. The new text goes
// to a temporary file beside path and is read back from disk; it is renamed
// into place only when what was read back is updated, check (when not nil)
// accepts it, and path still holds original. Otherwise nothing is changed and
// the error wraps ErrNotRewritten (or is the I/O error).
//
// check is usually Verify(path, original, written, changes): the re-read text
// holds exactly the new values and is otherwise the old file. perm 0 keeps
// path's permission bits.
//
// A symlink at path is refused (ErrNotRewritten): the rename would replace
// the link by a file and leave the file it points to as it was, a change
// reported but not made where it counts.
func Rewrite(ctx context.Context, path string, original, updated []byte, check func(written []byte) error, perm fs.FileMode) error {
	fi, err := notLink(path)
	if err != nil {
		return err
	}
	if perm == 0 {
		perm = fi.Mode().Perm()
	}
	return replace(ctx, path, updated, check, perm, func(f *atomicfile.File) error {
		// The check and the rename hold a lock on the file they replace:
		// a second rewrite of the same original (a bump and a plan --apply
		// of one recipe) waits, then finds the file changed, rather than
		// replacing a change both were told was made.
		if _, err := notLink(path); err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(ctx, lockWait)
		defer cancel()
		lock, err := lockfile.AcquireFile(ctx, path, 10*time.Millisecond)
		if err != nil {
			return fmt.Errorf("%s: %w: %w", path, ErrNotRewritten, err)
		}
		defer lock.Unlock()
		now, err := confined.ReadFile(path, int64(len(original)))
		if err != nil && !errors.Is(err, confined.ErrRefused) {
			return err
		}
		if err != nil || !bytes.Equal(now, original) {
			return fmt.Errorf("%s: %w: %w while it was being rewritten; run the command again", path, ErrNotRewritten, ErrChanged)
		}
		keepOwner(f, fi)
		return f.Commit()
	})
}

// keepOwner gives f the owner and group of the file it replaces, fi: a
// rewrite run as root (a bump in a user's checkout) must not hand the
// user's recipe to root, who alone could then write it, nor, at mode 0640,
// read it. Without root, only a group the process belongs to can be given;
// the rest stays as it is (the mode is kept either way).
func keepOwner(f *atomicfile.File, fi fs.FileInfo) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) == os.Geteuid() && int(st.Gid) == os.Getegid() {
		return
	}
	if f.Chown(int(st.Uid), int(st.Gid)) != nil {
		f.Chown(-1, int(st.Gid)) //nolint:errcheck // best effort: a group we are not in stays ours
	}
}

// lockWait bounds how long a write waits for another process's lock on the
// file or its folder (an updeb holds them for a rename, and for a write);
// the caller's context (a signal) ends the wait sooner, and nothing is
// written then.
const lockWait = time.Minute

// CheckRewritable refuses, as Rewrite would, a path Rewrite cannot replace
// (a symlink): for a caller that does work or writes other files before
// it rewrites path (bump: downloads, then the release set file), so that
// the refusal comes first, with nothing done that a run again could not
// complete.
func CheckRewritable(path string) error {
	_, err := notLink(path)
	return err
}

// notLink returns path's Lstat, refusing a symlink.
func notLink(path string) (fs.FileInfo, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, _ := os.Readlink(path)
		return nil, fmt.Errorf("%s: %w: it is a symlink (to %s), and rewriting would replace the link, not the file it points to; run the command on that file, or replace the link by the file", path, ErrNotRewritten, termtext.Escape(target))
	}
	return fi, nil
}

// Create is Rewrite for a file that must not exist yet (bump --new-minor's
// new recipe): written, read back and checked the same way, and renamed
// into place only when path still does not exist. like, when not nil, is
// the file the new one is made from (the old minor's recipe): the new file
// gets its owner and group (keepOwner), as a file Rewrite replaces keeps
// them, so that a bump run as root in a user's checkout does not leave the
// user a recipe of root's.
func Create(ctx context.Context, path string, updated []byte, check func(written []byte) error, perm fs.FileMode, like fs.FileInfo) error {
	return replace(ctx, path, updated, check, perm, func(f *atomicfile.File) error {
		if like != nil {
			keepOwner(f, like)
		}
		err := f.CommitNew()
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s: %w: %w (it appeared) while it was being written; run the command again", path, ErrNotRewritten, ErrChanged)
		}
		return err
	})
}

// replace writes updated to a temporary file beside path, reads it back,
// runs check, and leaves the rest to commit.
//
// Every write here holds the lock of path's folder while its temporary file
// exists, so that with the lock held a temporary file of path is a killed
// run's (kill -9 between its creation and the rename), and goes: left in the
// recipes repository, a `git add -A` would commit it.
func replace(ctx context.Context, path string, updated []byte, check func([]byte) error, perm fs.FileMode, commit func(*atomicfile.File) error) error {
	ctx, cancel := context.WithTimeout(ctx, lockWait)
	defer cancel()
	dir := filepath.Dir(path)
	lock, err := lockfile.AcquireDir(ctx, dir, 10*time.Millisecond)
	if err != nil {
		return fmt.Errorf("%s: %w: %w", path, ErrNotRewritten, err)
	}
	defer lock.Unlock()
	atomicfile.RemoveLeftovers(dir, filepath.Base(path))
	f, err := atomicfile.Create(path, perm)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(updated); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	back, err := io.ReadAll(io.LimitReader(f, int64(len(updated))+1))
	if err != nil {
		return err
	}
	if !bytes.Equal(back, updated) {
		return fmt.Errorf("%s: %w: the text read back from disk differs from what was written", path, ErrNotRewritten)
	}
	if check != nil {
		if err := check(back); err != nil {
			return err
		}
	}
	return commit(f)
}
