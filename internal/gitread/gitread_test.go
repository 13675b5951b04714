package gitread

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/testkit/testenv"
)

// git runs the real git (the referee) in dir with a fixed identity and no
// user or system config.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME="+dir,
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.org", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.org",
		"GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// check asks FileAtHead about path (with its bytes on disk) and compares
// with what the test expects.
func check(t *testing.T, path string, want State, commit string) *Result {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	res, err := FileAtHead(path, data)
	if err != nil {
		t.Fatalf("FileAtHead(%s): %v", path, err)
	}
	if res == nil || res.State != want || res.Commit != commit {
		t.Fatalf("FileAtHead(%s) = %+v, want %s at %q", path, res, want, commit)
	}
	return res
}

const commits = 12

// newRepo makes a repository with a recipe in a subfolder and many commits,
// so that trees are stored as deltas once packed.
func newRepo(t *testing.T, initArgs ...string) string {
	testenv.RequireTool(t, "git")
	dir := t.TempDir()
	git(t, dir, append([]string{"init", "-q", "-b", "main"}, initArgs...)...)
	for i := range commits {
		write(t, filepath.Join(dir, "recipes", fmt.Sprintf("r%02d.yaml", i)), strings.Repeat(fmt.Sprintf("line %d\n", i), 50))
		write(t, filepath.Join(dir, "recipes", "hello.yaml"), fmt.Sprintf("name: hello\nversion: 1.%d.0\n", i))
		git(t, dir, "add", "-A")
		git(t, dir, "commit", "-q", "-m", fmt.Sprint(i))
	}
	return dir
}

func TestFileAtHeadAgainstGit(t *testing.T) {
	dir := newRepo(t)
	recipe := filepath.Join(dir, "recipes", "hello.yaml")
	head := git(t, dir, "rev-parse", "HEAD")
	res := check(t, recipe, Clean, head)
	if res.Path != "recipes/hello.yaml" || res.Top != dir {
		t.Fatalf("path %q top %q", res.Path, res.Top)
	}

	// Packed: every object in one pack, trees and blobs as offset deltas,
	// refs in packed-refs.
	git(t, dir, "repack", "-a", "-d", "-f", "--depth=50", "--window=50")
	git(t, dir, "pack-refs", "--all")
	git(t, dir, "prune-packed")
	if loose := git(t, dir, "count-objects"); !strings.HasPrefix(loose, "0 objects") {
		t.Fatalf("objects left loose: %s", loose)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "refs", "heads", "main")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("refs/heads/main still loose")
	}
	if vp := git(t, dir, "verify-pack", "-v", packIndex(t, dir)); !strings.Contains(vp, "chain length = ") {
		t.Fatalf("the pack has no deltas:\n%s", vp)
	}
	check(t, recipe, Clean, head)

	// Reference deltas (what a pack without offset deltas holds).
	git(t, dir, "-c", "repack.useDeltaBaseOffset=false", "repack", "-a", "-d", "-f", "--depth=50")
	check(t, recipe, Clean, head)

	// Modified, staged but not committed, untracked, executable, detached.
	write(t, recipe, "name: hello\nversion: 2.0.0\n")
	check(t, recipe, Modified, head)
	git(t, dir, "add", recipe)
	check(t, recipe, Modified, head)
	git(t, dir, "commit", "-q", "-m", "two")
	head2 := git(t, dir, "rev-parse", "HEAD")
	check(t, recipe, Clean, head2)
	write(t, filepath.Join(dir, "recipes", "new.yaml"), "name: new\n")
	check(t, filepath.Join(dir, "recipes", "new.yaml"), Untracked, head2)
	write(t, filepath.Join(dir, "recipes", "deep", "x", "y.yaml"), "y\n")
	check(t, filepath.Join(dir, "recipes", "deep", "x", "y.yaml"), Untracked, head2)
	os.Chmod(recipe, 0o755)
	git(t, dir, "commit", "-q", "-am", "exec")
	check(t, recipe, Clean, git(t, dir, "rev-parse", "HEAD"))
	git(t, dir, "checkout", "-q", "--detach", head)
	check(t, recipe, Clean, head)
	write(t, recipe, "name: hello\nversion: 1.11.0\n\n")
	check(t, recipe, Modified, head)

	// A file that is a folder's name in HEAD, a folder that is a file.
	write(t, filepath.Join(dir, "recipes", "r00.yaml.d", "x"), "x")
	check(t, filepath.Join(dir, "recipes", "r00.yaml.d", "x"), Untracked, head)
}

func packIndex(t *testing.T, dir string) string {
	idx, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.idx"))
	if len(idx) != 1 {
		t.Fatalf("packs: %v", idx)
	}
	return idx[0]
}

func TestWorktreesClonesAndFormats(t *testing.T) {
	dir := newRepo(t)
	head := git(t, dir, "rev-parse", "HEAD")

	// A linked worktree on its own branch: .git is a file, HEAD is the
	// worktree's own, objects and refs are the main repository's.
	wt := filepath.Join(t.TempDir(), "wt")
	git(t, dir, "worktree", "add", "-q", "-b", "other", wt, "HEAD~3")
	write(t, filepath.Join(wt, "recipes", "hello.yaml"), "name: hello\nversion: 9\n")
	git(t, wt, "commit", "-q", "-am", "other")
	wtHead := git(t, wt, "rev-parse", "HEAD")
	check(t, filepath.Join(wt, "recipes", "hello.yaml"), Clean, wtHead)
	check(t, filepath.Join(dir, "recipes", "hello.yaml"), Clean, head)

	// A clone that borrows its objects through alternates.
	shared := filepath.Join(t.TempDir(), "shared")
	git(t, dir, "clone", "-q", "--shared", dir, shared)
	if _, err := os.Stat(filepath.Join(shared, ".git", "objects", "info", "alternates")); err != nil {
		t.Fatal(err)
	}
	check(t, filepath.Join(shared, "recipes", "hello.yaml"), Clean, head)

	// SHA-256 object format.
	d256 := newRepo(t, "--object-format=sha256")
	h256 := git(t, d256, "rev-parse", "HEAD")
	if len(h256) != 64 {
		t.Fatalf("sha256 repository has commit %s", h256)
	}
	check(t, filepath.Join(d256, "recipes", "hello.yaml"), Clean, h256)
	git(t, d256, "repack", "-a", "-d", "-f")
	check(t, filepath.Join(d256, "recipes", "hello.yaml"), Clean, h256)

	// No commit yet.
	empty := t.TempDir()
	git(t, empty, "init", "-q")
	write(t, filepath.Join(empty, "a.yaml"), "a")
	check(t, filepath.Join(empty, "a.yaml"), Untracked, "")

	// Not in a checkout at all.
	plain := filepath.Join(t.TempDir(), "a.yaml")
	write(t, plain, "a")
	if res, err := FileAtHead(plain, []byte("a")); res != nil || err != nil {
		t.Fatalf("outside git: %+v %v", res, err)
	}
}

// A damaged repository is an error, never a panic or a wrong answer.
func TestDamagedRepositories(t *testing.T) {
	template := newRepo(t)
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, dir string)
		want   string
	}{
		{"truncated pack", func(t *testing.T, dir string) {
			git(t, dir, "repack", "-a", "-d")
			p := strings.TrimSuffix(packIndex(t, dir), ".idx") + ".pack"
			fi, _ := os.Stat(p)
			os.Chmod(p, 0o644)
			os.Truncate(p, fi.Size()/2)
		}, "gitread: damaged repository data"},
		{"flipped byte in a pack", func(t *testing.T, dir string) {
			git(t, dir, "repack", "-a", "-d")
			p := strings.TrimSuffix(packIndex(t, dir), ".idx") + ".pack"
			data, _ := os.ReadFile(p)
			for i := 12; i < len(data)-20; i += 97 {
				data[i] ^= 0x40
			}
			os.Chmod(p, 0o644)
			os.WriteFile(p, data, 0o644)
		}, "gitread: damaged repository data"},
		{"truncated index", func(t *testing.T, dir string) {
			git(t, dir, "repack", "-a", "-d")
			idx := packIndex(t, dir)
			os.Chmod(idx, 0o644)
			os.Truncate(idx, 600)
		}, "gitread: damaged repository data"},
		{"missing object", func(t *testing.T, dir string) {
			tree := git(t, dir, "rev-parse", "HEAD^{tree}")
			os.Remove(filepath.Join(dir, ".git", "objects", tree[:2], tree[2:]))
		}, "not found"},
		{"loose object with other content", func(t *testing.T, dir string) {
			tree := git(t, dir, "rev-parse", "HEAD^{tree}")
			blob := git(t, dir, "rev-parse", "HEAD:recipes/hello.yaml")
			src := filepath.Join(dir, ".git", "objects", blob[:2], blob[2:])
			dst := filepath.Join(dir, ".git", "objects", tree[:2], tree[2:])
			data, _ := os.ReadFile(src)
			os.Chmod(dst, 0o644)
			os.WriteFile(dst, data, 0o644)
		}, "does not match its id"},
		{"HEAD pointing outside refs", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, ".git", "HEAD"), []byte("ref: ../../../etc/passwd\n"), 0o644)
		}, `points at "../../../etc/passwd"`},
		{"symbolic ref loop", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, ".git", "HEAD"), []byte("ref: refs/heads/a\n"), 0o644)
			os.WriteFile(filepath.Join(dir, ".git", "refs", "heads", "a"), []byte("ref: refs/heads/b\n"), 0o644)
			os.WriteFile(filepath.Join(dir, ".git", "refs", "heads", "b"), []byte("ref: refs/heads/a\n"), 0o644)
		}, "nested deeper than"},
		{"garbage ref", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, ".git", "refs", "heads", "main"), []byte("not an id\n"), 0o644)
		}, "not an object id"},
		{"reftable", func(t *testing.T, dir string) {
			f, _ := os.OpenFile(filepath.Join(dir, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString("[extensions]\n\trefStorage = reftable\n")
			f.Close()
		}, "unsupported repository format"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "repo")
			testenv.Run(t, "cp", "-a", template, dir)
			tc.damage(t, dir)
			recipe := filepath.Join(dir, "recipes", "hello.yaml")
			data, _ := os.ReadFile(recipe)
			_, err := FileAtHead(recipe, data)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one with %q", err, tc.want)
			}
		})
	}
}

// FuzzApplyDelta: any base and delta give a result of the announced size or
// an error, never a panic or an oversized allocation.
func FuzzApplyDelta(f *testing.F) {
	f.Add([]byte("hello world"), []byte{11, 5, 0x91, 6, 5})                      // copy "world"
	f.Add([]byte("abc"), []byte{3, 6, 0x90, 3, 3, 'x', 'y', 'z'})                // copy, insert
	f.Add([]byte(""), []byte{0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f}) // huge size
	f.Fuzz(func(t *testing.T, base, delta []byte) {
		out, err := applyDelta(base, delta)
		if err != nil {
			return
		}
		_, n := deltaSize(delta)
		want, _ := deltaSize(delta[n:])
		if int64(len(out)) != want {
			t.Fatalf("result of %d bytes, delta announced %d", len(out), want)
		}
	})
}

// FuzzPackEntry: an entry header, delta base distance and tree of any bytes
// parse or fail cleanly.
func FuzzPackEntry(f *testing.F) {
	f.Add([]byte{0x95, 0x0a, 0x78, 0x9c}, []byte("100644 a.yaml\x00"+strings.Repeat("\x01", 20)))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, []byte("40000 d\x00"))
	f.Fuzz(func(t *testing.T, hdr, tree []byte) {
		if _, size, err := entryHeader(bytes.NewReader(hdr)); err == nil && (size < 0 || size > maxObjectSize) {
			t.Fatalf("size %d accepted", size)
		}
		if d, err := ofsDeltaDistance(bytes.NewReader(hdr)); err == nil && d < 0 {
			t.Fatalf("negative distance %d", d)
		}
		if _, _, err := readLoose(bytes.NewReader(hdr)); err == nil {
			return
		}
		for _, n := range []int{20, 32} {
			if id, _, err := findEntry(tree, "a.yaml", n); err == nil && id != nil && len(id) != n {
				t.Fatalf("id of %d bytes", len(id))
			}
		}
	})
}
