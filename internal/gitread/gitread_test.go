package gitread

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

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
	res, err := FileAtHead(context.Background(), path, data)
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
	dir, err := filepath.EvalSymlinks(t.TempDir()) // the checkout's real path, which git and FileAtHead name
	if err != nil {
		t.Fatal(err)
	}
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

// TestOldTreeModes: a tree written by an old or foreign tool, with a folder
// as 040000 and a file as 100664, is read as git reads it (40000, 100644):
// git status finds the file clean, so does FileAtHead.
func TestOldTreeModes(t *testing.T) {
	testenv.RequireTool(t, "git")
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	recipe := filepath.Join(dir, "recipes", "x.yaml")
	write(t, recipe, "name: x\n")
	object := func(typ, file string, data []byte) []byte {
		p := filepath.Join(t.TempDir(), "object")
		if data != nil {
			write(t, p, string(data))
			file = p
		}
		id, err := hex.DecodeString(git(t, dir, "hash-object", "-t", typ, "-w", "--literally", file))
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	sub := object("tree", "", append([]byte("100664 x.yaml\x00"), object("blob", recipe, nil)...))
	root := object("tree", "", append([]byte("040000 recipes\x00"), sub...))
	commit := git(t, dir, "commit-tree", "-m", "old modes", hex.EncodeToString(root))
	git(t, dir, "update-ref", "refs/heads/main", commit)
	git(t, dir, "reset", "-q")
	if st := git(t, dir, "status", "--porcelain"); st != "" {
		t.Fatalf("git status: %q, want clean", st)
	}
	check(t, recipe, Clean, commit)
}

// TestSymlinkedFolders: a checkout is found as git finds it, from the folder
// a file really lies in. A project reached through a symlink (a link to the
// checkout, or to a folder of it) gives the answer its real path gives, so a
// provenance record does not depend on the path the build was started from;
// a folder linked into a checkout from outside is in no checkout.
func TestSymlinkedFolders(t *testing.T) {
	dir := newRepo(t)
	head := git(t, dir, "rev-parse", "HEAD")
	links := t.TempDir()
	for _, l := range []struct{ name, to string }{{"checkout", dir}, {"recipes", filepath.Join(dir, "recipes")}} {
		if err := os.Symlink(l.to, filepath.Join(links, l.name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{filepath.Join(links, "checkout", "recipes", "hello.yaml"), filepath.Join(links, "recipes", "hello.yaml")} {
		if res := check(t, p, Clean, head); res.Path != "recipes/hello.yaml" || res.Top != dir {
			t.Errorf("%s: path %q top %q, want recipes/hello.yaml in %s", p, res.Path, res.Top, dir)
		}
		if top := git(t, filepath.Dir(p), "rev-parse", "--show-toplevel"); top != dir {
			t.Fatalf("git finds %s for %s, the test expects %s", top, p, dir)
		}
	}

	outside := t.TempDir()
	write(t, filepath.Join(outside, "a.yaml"), "a")
	if err := os.Symlink(outside, filepath.Join(dir, "linked")); err != nil {
		t.Fatal(err)
	}
	if res, err := FileAtHead(context.Background(), filepath.Join(dir, "linked", "a.yaml"), []byte("a")); res != nil || err != nil {
		t.Fatalf("a folder linked into a checkout: %+v %v, want no checkout", res, err)
	}
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
	// an alternate that does not exist (any more) is passed over, as git
	// does, with the others still read
	alternates := filepath.Join(shared, ".git", "objects", "info", "alternates")
	borrowed, _ := os.ReadFile(alternates)
	write(t, alternates, filepath.Join(t.TempDir(), "gone")+"\n"+string(borrowed))
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
	if res, err := FileAtHead(context.Background(), plain, []byte("a")); res != nil || err != nil {
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
		}, "points at no valid ref name"},
		{"symbolic ref loop", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, ".git", "HEAD"), []byte("ref: refs/heads/a\n"), 0o644)
			os.WriteFile(filepath.Join(dir, ".git", "refs", "heads", "a"), []byte("ref: refs/heads/b\n"), 0o644)
			os.WriteFile(filepath.Join(dir, ".git", "refs", "heads", "b"), []byte("ref: refs/heads/a\n"), 0o644)
		}, "nested deeper than"},
		{"garbage ref", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, ".git", "refs", "heads", "main"), []byte("not an id\n"), 0o644)
		}, "does not hold an object id"},
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
			_, err := FileAtHead(context.Background(), recipe, data)
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
		if _, size, err := entryHeader(bytes.NewReader(hdr)); err == nil && (size < 0 || size > MaxObjectSize) {
			t.Fatalf("size %d accepted", size)
		}
		if d, err := ofsDeltaDistance(bytes.NewReader(hdr)); err == nil && d < 0 {
			t.Fatalf("negative distance %d", d)
		}
		if _, _, err := readLoose(&repo{ctx: context.Background(), top: "t"}, bytes.NewReader(hdr)); err == nil {
			return
		}
		for _, n := range []int{20, 32} {
			if id, _, err := findEntry(tree, "a.yaml", n); err == nil && id != nil && len(id) != n {
				t.Fatalf("id of %d bytes", len(id))
			}
		}
	})
}

// hostile runs FileAtHead on the recipe of a repository made from template
// and changed by plant, in a goroutine, and fails when it blocks, panics or
// lets secret (bytes planted outside the repository) into its error.
func hostile(t *testing.T, template string, plant func(t *testing.T, dir string)) error {
	_, err := hostileAlloc(t, template, plant)
	return err
}

// hostileAlloc is hostile, also returning the bytes FileAtHead allocated.
func hostileAlloc(t *testing.T, template string, plant func(t *testing.T, dir string)) (uint64, error) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	testenv.Run(t, "cp", "-a", template, dir)
	plant(t, dir)
	recipe := filepath.Join(dir, "recipes", "hello.yaml")
	data, _ := os.ReadFile(recipe)
	done := make(chan error, 1)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	go func() {
		res, err := FileAtHead(context.Background(), recipe, data)
		if err == nil && res != nil && res.State == Clean {
			err = fmt.Errorf("accepted as clean at %s", res.Commit)
		}
		runtime.ReadMemStats(&after)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Fatalf("the error quotes a file from outside: %v", err)
		}
		return after.TotalAlloc - before.TotalAlloc, err
	case <-time.After(20 * time.Second):
		t.Fatal("FileAtHead blocked")
	}
	return 0, nil
}

const secret = "SECRET-OUTSIDE-THE-REPOSITORY"

// TestHostileFiles: a FIFO, a device, a folder or a symlink out where git
// keeps a file is refused at once, unread; nothing of a file outside appears
// in the error.
func TestHostileFiles(t *testing.T) {
	loose := newRepo(t)
	packed := filepath.Join(t.TempDir(), "packed")
	testenv.Run(t, "cp", "-a", loose, packed)
	git(t, packed, "repack", "-a", "-d")
	git(t, packed, "pack-refs", "--all")
	git(t, packed, "prune-packed")
	outside := filepath.Join(t.TempDir(), "secret")
	write(t, outside, secret+"\n")
	head := git(t, loose, "rev-parse", "HEAD")
	write(t, filepath.Join(filepath.Dir(outside), "ref"), head+"\n")
	tree := git(t, loose, "rev-parse", "HEAD^{tree}")
	looseTree := ".git/objects/" + tree[:2] + "/" + tree[2:]

	fifo := func(rel string) func(*testing.T, string) {
		return func(t *testing.T, dir string) {
			p := filepath.Join(dir, rel)
			os.RemoveAll(p)
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	link := func(rel, to string) func(*testing.T, string) {
		return func(t *testing.T, dir string) {
			p := filepath.Join(dir, rel)
			os.RemoveAll(p)
			if err := os.Symlink(to, p); err != nil {
				t.Fatal(err)
			}
		}
	}
	packFile := func(ext string) string {
		m, _ := filepath.Glob(filepath.Join(packed, ".git", "objects", "pack", "*"+ext))
		rel, _ := filepath.Rel(packed, m[0])
		return rel
	}
	worktree := func(plantIn string) func(*testing.T, string) {
		return func(t *testing.T, dir string) {
			// the recipe's checkout becomes a worktree whose git folder
			// has a FIFO for plantIn
			gd := filepath.Join(dir, ".git", "worktrees", "w")
			os.MkdirAll(gd, 0o755)
			write(t, filepath.Join(gd, "HEAD"), "ref: refs/heads/main\n")
			write(t, filepath.Join(gd, "commondir"), "../..\n")
			p := filepath.Join(gd, plantIn)
			os.Remove(p)
			syscall.Mkfifo(p, 0o644)
			sub := filepath.Join(dir, "recipes")
			write(t, filepath.Join(sub, ".git"), "gitdir: "+gd+"\n")
		}
	}
	cases := []struct {
		name     string
		template string
		plant    func(*testing.T, string)
	}{
		{"FIFO HEAD", loose, fifo(".git/HEAD")},
		{"FIFO loose ref", loose, fifo(".git/refs/heads/main")},
		{"FIFO packed-refs", packed, fifo(".git/packed-refs")},
		{"FIFO config", loose, fifo(".git/config")},
		{"FIFO loose object", loose, fifo(looseTree)},
		{"FIFO pack", packed, fifo(packFile(".pack"))},
		{"FIFO pack index", packed, fifo(packFile(".idx"))},
		{"FIFO alternates", loose, fifo(".git/objects/info/alternates")},
		{"FIFO .git", loose, fifo(".git")},
		{"FIFO .git file of a worktree", loose, func(t *testing.T, dir string) {
			syscall.Mkfifo(filepath.Join(dir, "recipes", ".git"), 0o644)
		}},
		// folders the repository's files point at, that are FIFOs: the
		// folder's open must not block either (os.OpenRoot's would)
		{"gitdir: naming a FIFO", loose, func(t *testing.T, dir string) {
			fifo(".fifo")(t, dir)
			write(t, filepath.Join(dir, "recipes", ".git"), "gitdir: "+filepath.Join(dir, ".fifo")+"\n")
		}},
		{"gitdir: naming a character device", loose, func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "recipes", ".git"), "gitdir: /dev/null\n")
		}},
		{"commondir naming a FIFO", loose, func(t *testing.T, dir string) {
			worktree("unused")(t, dir)
			gd := filepath.Join(dir, ".git", "worktrees", "w")
			fifo(".fifo")(t, dir)
			write(t, filepath.Join(gd, "commondir"), "../../../.fifo\n")
		}},
		{"alternates naming a FIFO", loose, func(t *testing.T, dir string) {
			fifo(".fifo")(t, dir)
			write(t, filepath.Join(dir, ".git", "objects", "info", "alternates"), filepath.Join(dir, ".fifo")+"\n")
		}},
		{"objects folder a FIFO", loose, fifo(".git/objects")},

		{"objects folder a symlink to a FIFO", loose, func(t *testing.T, dir string) {
			fifo(".fifo")(t, dir)
			link(".git/objects", filepath.Join(dir, ".fifo"))(t, dir)
		}},
		{"FIFO worktree HEAD", loose, worktree("HEAD")},
		{"FIFO commondir", loose, worktree("commondir")},
		{"folder HEAD", loose, func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, ".git", "HEAD"))
			os.Mkdir(filepath.Join(dir, ".git", "HEAD"), 0o755)
		}},
		{"HEAD symlink to a file outside", loose, link(".git/HEAD", outside)},
		{"HEAD symlink to a ref outside", loose, link(".git/HEAD", filepath.Join(filepath.Dir(outside), "ref"))},
		{"ref symlink to a file outside", loose, link(".git/refs/heads/main", outside)},
		{"ref symlink climbing out", loose, link(".git/refs/heads/main", "../../../../"+filepath.Base(filepath.Dir(outside))+"/secret")},
		{"packed-refs symlink outside", packed, link(".git/packed-refs", outside)},
		{"config symlink outside", loose, link(".git/config", outside)},
		{"HEAD symlink to /dev/zero", loose, link(".git/HEAD", "/dev/zero")},
		{".git symlink", loose, func(t *testing.T, dir string) {
			os.Rename(filepath.Join(dir, ".git"), filepath.Join(dir, "real-git"))
			os.Symlink("real-git", filepath.Join(dir, ".git"))
		}},
		{"refs folder symlink outside", loose, link(".git/refs/heads", filepath.Dir(outside))},
		{"objects folder entry symlink outside", loose, link(looseTree, outside)},
		{"HEAD naming a file outside through its ref", loose, func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, ".git", "HEAD"), "ref: refs/../../../"+outside+"\n")
		}},
	}
	if os.Getuid() == 0 {
		cases = append(cases, struct {
			name     string
			template string
			plant    func(*testing.T, string)
		}{"char device HEAD", loose, func(t *testing.T, dir string) {
			p := filepath.Join(dir, ".git", "HEAD")
			os.Remove(p)
			if err := syscall.Mknod(p, syscall.S_IFCHR|0o644, 1<<8|5); err != nil {
				t.Fatal(err)
			}
		}})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := hostile(t, tc.template, tc.plant)
			if err == nil {
				t.Fatal("no error")
			}
			t.Log(err)
		})
	}
}

// TestPackedRefsBound: a packed-refs file larger than the bound is refused
// as a whole, by its size: read only in part, a ref past the bound would
// read as missing, a branch without a commit (a false "untracked").
func TestPackedRefsBound(t *testing.T) {
	repo := newRepo(t)
	git(t, repo, "pack-refs", "--all")
	plant := func(t *testing.T, dir string) {
		if err := os.Truncate(filepath.Join(dir, ".git", "packed-refs"), maxPackedRefs+1); err != nil { // sparse
			t.Fatal(err)
		}
	}
	if err := hostile(t, repo, plant); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "packed-refs: larger than 256 MiB") {
		t.Fatalf("a packed-refs of %d bytes: %v", maxPackedRefs+1, err)
	}
}

// TestAlternatesBound: every object is looked for in every objects folder,
// so alternates naming more than maxStores-1 folders are refused rather
// than searched (a 1 MiB alternates file names tens of thousands).
func TestAlternatesBound(t *testing.T) {
	repo := newRepo(t)
	var names strings.Builder
	for i := range maxStores {
		d := filepath.Join(t.TempDir(), strconv.Itoa(i))
		names.WriteString(d + "\n")
	}
	plant := func(t *testing.T, dir string) {
		for line := range strings.Lines(names.String()) {
			os.MkdirAll(strings.TrimSpace(line), 0o755)
		}
		write(t, filepath.Join(dir, ".git", "objects", "info", "alternates"), names.String())
	}
	if err := hostile(t, repo, plant); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "more than 63 objects folders") {
		t.Fatalf("%d alternates: %v", maxStores, err)
	}
}

// packEntry is one object of a crafted pack: its id in the index and its
// bytes in the pack (header, delta base, zlib data), given its offset.
type packEntry struct {
	id  []byte
	raw func(off int64, offsets map[string]int64) []byte
}

// entryBytes encodes a pack entry: type, inflated size, base, zlib(data).
func entryBytes(typ int, size int64, base []byte, data []byte) []byte {
	var b bytes.Buffer
	c := byte(typ<<4) | byte(size&15)
	size >>= 4
	for size > 0 {
		b.WriteByte(c | 0x80)
		c, size = byte(size&0x7f), size>>7
	}
	b.WriteByte(c)
	b.Write(base)
	z := zlib.NewWriter(&b)
	z.Write(data)
	z.Close()
	return b.Bytes()
}

// ofsBase encodes an offset delta's backwards distance.
func ofsBase(d int64) []byte {
	out := []byte{byte(d & 0x7f)}
	for d >>= 7; d > 0; d >>= 7 {
		d--
		out = append([]byte{0x80 | byte(d&0x7f)}, out...)
	}
	return out
}

// varint is a delta header size.
func varint(n int64) []byte {
	var out []byte
	for {
		c := byte(n & 0x7f)
		n >>= 7
		if n == 0 {
			return append(out, c)
		}
		out = append(out, c|0x80)
	}
}

// writePack writes pack/pack-x.{pack,idx} (version 2) holding entries into
// the objects folder of dir's repository, replacing every other pack.
func writePack(t *testing.T, dir string, entries []packEntry) {
	t.Helper()
	packDir := filepath.Join(dir, ".git", "objects", "pack")
	os.RemoveAll(packDir)
	os.MkdirAll(packDir, 0o755)
	var pack bytes.Buffer
	pack.WriteString("PACK")
	binary.Write(&pack, binary.BigEndian, uint32(2))
	binary.Write(&pack, binary.BigEndian, uint32(len(entries)))
	offsets := map[string]int64{}
	for _, e := range entries {
		offsets[string(e.id)] = int64(pack.Len())
		pack.Write(e.raw(int64(pack.Len()), offsets))
	}
	pack.Write(make([]byte, 20))
	sorted := slices.Clone(entries)
	slices.SortFunc(sorted, func(a, b packEntry) int { return bytes.Compare(a.id, b.id) })
	var idx bytes.Buffer
	idx.WriteString("\xfftOc")
	binary.Write(&idx, binary.BigEndian, uint32(2))
	for i := range 256 {
		n := 0
		for _, e := range sorted {
			if int(e.id[0]) <= i {
				n++
			}
		}
		binary.Write(&idx, binary.BigEndian, uint32(n))
	}
	for _, e := range sorted {
		idx.Write(e.id)
	}
	idx.Write(make([]byte, 4*len(sorted)))
	for _, e := range sorted {
		binary.Write(&idx, binary.BigEndian, uint32(offsets[string(e.id)]))
	}
	idx.Write(make([]byte, 40))
	write(t, filepath.Join(packDir, "pack-x.pack"), pack.String())
	write(t, filepath.Join(packDir, "pack-x.idx"), idx.String())
}

// TestHostilePacks: deltas that refer to themselves or each other, chains
// deeper than MaxDeltaChain, objects over MaxObjectSize and chains whose
// results add up past MaxWork are refused quickly, with memory bounded.
func TestHostilePacks(t *testing.T) {
	template := newRepo(t)
	head := git(t, template, "rev-parse", "HEAD")
	headID, _ := hex.DecodeString(head)
	other := bytes.Repeat([]byte{0xee}, 20)
	// HEAD's commit is the object under attack: every loose object goes, so
	// that the pack written is the only place to find it.
	plant := func(entries ...packEntry) func(*testing.T, string) {
		return func(t *testing.T, dir string) {
			objs := filepath.Join(dir, ".git", "objects")
			des, _ := os.ReadDir(objs)
			for _, d := range des {
				if len(d.Name()) == 2 {
					os.RemoveAll(filepath.Join(objs, d.Name()))
				}
			}
			writePack(t, dir, entries)
		}
	}
	refDelta := func(id, base []byte, delta []byte) packEntry {
		return packEntry{id, func(int64, map[string]int64) []byte { return entryBytes(objRefDelta, int64(len(delta)), base, delta) }}
	}
	tiny := append(varint(0), varint(1)...)
	tiny = append(tiny, 1, 'x')
	const big = MaxObjectSize // a result of MaxObjectSize bytes, copied from a base of as many
	copyAll := append(varint(big), varint(big)...)
	for done := int64(0); done < big; done += 0x10000 {
		// copy 64 KiB at offset done: offset bytes 0..3, size 0 means 0x10000
		copyAll = append(copyAll, 0x80|0x0f, byte(done), byte(done>>8), byte(done>>16), byte(done>>24))
	}
	chain := func(n int, baseData []byte, delta []byte) []packEntry {
		ids := make([]packEntry, 0, n+1)
		baseID := bytes.Repeat([]byte{0x01}, 20)
		ids = append(ids, packEntry{baseID, func(int64, map[string]int64) []byte {
			return entryBytes(objCommit, int64(len(baseData)), nil, baseData)
		}})
		for i := range n {
			id := bytes.Repeat([]byte{0x02}, 20)
			binary.BigEndian.PutUint32(id[16:], uint32(i))
			prev := ids[len(ids)-1].id
			if i == n-1 {
				id = headID
			}
			ids = append(ids, packEntry{id, func(off int64, offsets map[string]int64) []byte {
				return entryBytes(objOfsDelta, int64(len(delta)), ofsBase(off-offsets[string(prev)]), delta)
			}})
		}
		return ids
	}
	for _, tc := range []struct {
		name  string
		plant func(*testing.T, string)
		want  string
	}{
		{"reference delta whose base is itself", plant(refDelta(headID, headID, tiny)), "leads back to itself"},
		{"two reference deltas, each the other's base", plant(refDelta(headID, other, tiny), refDelta(other, headID, tiny)), "leads back to itself"},
		{"offset delta chain deeper than the limit", plant(chain(MaxDeltaChain+10, []byte(""), tiny)...), "delta chain longer than"},
		{"object announcing more than the limit", plant(packEntry{headID, func(int64, map[string]int64) []byte {
			return entryBytes(objCommit, 1<<40, nil, []byte("tree x"))
		}}), "more than"},
		{"object inflating to less than it announces", plant(packEntry{headID, func(int64, map[string]int64) []byte {
			return entryBytes(objCommit, MaxObjectSize, nil, []byte("tree x"))
		}}), "its header says"},
		{"delta chain whose results add up past the budget", plant(chain(MaxWork/big+2, make([]byte, big), copyAll)...), "more than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			grown, err := hostileAlloc(t, template, tc.plant)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one with %q", err, tc.want)
			}
			// the budget, and what the readers of each entry cost
			if grown > 2*MaxWork {
				t.Errorf("allocated %d MiB", grown>>20)
			}
			t.Logf("%v (%s, %d MiB allocated)", err, time.Since(start).Round(time.Millisecond), grown>>20)
		})
	}
}
