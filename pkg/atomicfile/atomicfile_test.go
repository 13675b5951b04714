package atomicfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"
)

func TestWriteReplacesAndLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.txt")
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	if err := WriteFile(p, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	st, _ := os.Stat(p)
	if string(b) != "two" || st.Mode().Perm() != 0o644 {
		t.Fatalf("content %q mode %v", b, st.Mode())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("left behind: %v", entries)
	}
}

// MkdirAll gives the folders it makes the mode asked whatever the umask,
// leaves an existing folder's mode alone, and refuses a file on the way.
func TestMkdirAllModeWhateverTheUmask(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "kept"), 0o700); err != nil {
		t.Fatal(err)
	}
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	if err := MkdirAll(filepath.Join(dir, "kept", "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]os.FileMode{"kept": 0o700, "kept/a": 0o755, "kept/a/b": 0o755} {
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Mode().Perm() != want {
			t.Errorf("%s: %v (%v), want mode %v", name, st, err, want)
		}
	}
	if err := MkdirAll(filepath.Join(dir, "kept", "a", "b"), 0o755); err != nil {
		t.Errorf("again: %v", err)
	}
	// Under a setgid folder (a shared group's), the folders made keep the
	// bit they take from it.
	shared := filepath.Join(dir, "shared")
	if err := os.Mkdir(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o775|os.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	if err := MkdirAll(filepath.Join(shared, "repo", "pool"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"shared/repo", "shared/repo/pool"} {
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Mode().Perm() != 0o755 || st.Mode()&os.ModeSetgid == 0 {
			t.Errorf("%s: %v (%v), want mode 0755 and setgid", name, st, err)
		}
	}
	WriteFile(filepath.Join(dir, "f"), nil, 0o644)
	if err := MkdirAll(filepath.Join(dir, "f", "x"), 0o755); !errors.Is(err, syscall.ENOTDIR) {
		t.Errorf("through a file: %v, want ENOTDIR", err)
	}
}

// MkdirAll syncs the folder that holds each folder it makes, parents first,
// and none when every folder is there: keys generate --out keys/new/repo
// (and a publish's new pool folders) synced only the last folder, whose
// entry in the one above, and that one's, a power cut could lose with the
// files renamed into them.
func TestMkdirAllSyncsParents(t *testing.T) {
	synced := recordSyncs(t)
	dir := t.TempDir()
	if err := MkdirAll(filepath.Join(dir, "a", "b", "c"), 0o755); err != nil {
		t.Fatal(err)
	}
	want := []string{dir, filepath.Join(dir, "a"), filepath.Join(dir, "a", "b")}
	if strings.Join(*synced, "\n") != strings.Join(want, "\n") {
		t.Errorf("synced %q, want %q", *synced, want)
	}
	*synced = nil
	if err := MkdirAll(filepath.Join(dir, "a", "b", "c"), 0o755); err != nil || len(*synced) != 0 {
		t.Errorf("again: %v, synced %q, want none", err, *synced)
	}
}

// MkdirAllUmask leaves the umask's mark on the folders it makes (a state
// folder under umask 077 stays private) and syncs each into its parent, as
// MkdirAll does: data refresh made its state folder with os.MkdirAll, which
// syncs none, so a power cut after a refresh it reported could lose the
// folder with the copies renamed into it.
func TestMkdirAllUmask(t *testing.T) {
	synced := recordSyncs(t)
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	dir := t.TempDir()
	if err := MkdirAllUmask(filepath.Join(dir, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "a/b"} {
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v (%v), want mode 0700 (0755 under umask 077)", name, st, err)
		}
	}
	if want := []string{dir, filepath.Join(dir, "a")}; strings.Join(*synced, "\n") != strings.Join(want, "\n") {
		t.Errorf("synced %q, want %q", *synced, want)
	}
}

// recordSyncs lists the folders syncDir syncs until the test ends.
func recordSyncs(t *testing.T) *[]string {
	var synced []string
	old := syncDir
	t.Cleanup(func() { syncDir = old })
	syncDir = func(dir string) error {
		synced = append(synced, dir)
		return SyncDir(dir)
	}
	return &synced
}

func TestFailedFillKeepsOldContent(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.txt")
	WriteFile(p, []byte("old"), 0o600)
	boom := errors.New("boom")
	err := WriteFrom(p, 0o600, func(w io.Writer) error {
		w.Write([]byte("partial"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	b, _ := os.ReadFile(p)
	entries, _ := os.ReadDir(dir)
	if string(b) != "old" || len(entries) != 1 {
		t.Fatalf("content %q, entries %v", b, entries)
	}
}

// TestLongName: a file whose name is near the file system's limit (255
// bytes) is written: the temporary name beside it is cut, not the target's.
func TestLongName(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{strings.Repeat("a", 255), strings.Repeat("é", 127)} {
		p := filepath.Join(dir, name)
		if err := WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatalf("%d bytes: %v", len(name), err)
		}
		if b, _ := os.ReadFile(p); string(b) != "x" {
			t.Errorf("%d bytes: read %q", len(name), b)
		}
	}
	if !utf8.ValidString(TempPrefix(strings.Repeat("é", 127))) {
		t.Error("the cut name is not valid UTF-8")
	}
}

// CommitNew puts a new file in place, and refuses (fs.ErrExist) when
// something is there, leaving it and no temporary file.
func TestCommitNew(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "new.yaml")
	for i, want := range []error{nil, fs.ErrExist} {
		f, err := Create(p, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(strings.Repeat("x", i+1))
		if err := f.CommitNew(); !errors.Is(err, want) {
			t.Fatalf("CommitNew %d: %v, want %v", i, err, want)
		}
	}
	if b, _ := os.ReadFile(p); string(b) != "x" {
		t.Errorf("the file holds %q, want the first one's x", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
}

// CommitAll replaces every target, or, when one cannot be replaced (a
// folder there), none, and leaves no temporary file either way.
func TestCommitAll(t *testing.T) {
	dir := t.TempDir()
	names := []string{"a", "b", "c"}
	create := func(data string) []*File {
		var fs []*File
		for _, n := range names {
			f, err := Create(filepath.Join(dir, n), 0o644)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString(data)
			fs = append(fs, f)
		}
		return fs
	}
	if err := CommitAll(create("old")); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "c"))
	os.MkdirAll(filepath.Join(dir, "c", "in-the-way"), 0o755)
	if err := CommitAll(create("new")); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "c")) {
		t.Fatalf("a folder where c goes: %v", err)
	}
	for _, n := range names[:2] {
		if b, _ := os.ReadFile(filepath.Join(dir, n)); string(b) != "old" {
			t.Errorf("%s holds %q after a CommitAll that failed, want old", n, b)
		}
	}
	os.RemoveAll(filepath.Join(dir, "c"))
	if err := CommitAll(create("new")); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if b, _ := os.ReadFile(filepath.Join(dir, n)); string(b) != "new" {
			t.Errorf("%s holds %q, want new", n, b)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp-*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// A file that cannot be made (its folder missing, or not writable) is an
// error naming it, not the temporary file's random name: "open
// /srv/.report.html.tmp-184163308: no such file or directory" told the user
// of a file they never named.
func TestCreateErrorNamesTarget(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "report.html")
	_, err := Create(path, 0o644)
	pe, ok := errors.AsType[*fs.PathError](err)
	if !ok || pe.Path != path || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Create in a missing folder: %v, want a *fs.PathError for %s (ENOENT)", err, path)
	}
	if err := WriteFile(path, nil, 0o644); err == nil || err.Error() != "create "+path+": no such file or directory" {
		t.Errorf("WriteFile in a missing folder: %v", err)
	}
}

// A target that is a folder is refused naming it (EISDIR), the temporary
// file removed: os.Rename's error, "rename /srv/.out.tmp-2381367744
// /srv/out: file exists", named the temporary.
func TestWriteOverFolder(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out")
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	err := WriteFile(path, []byte("x"), 0o644)
	pe, ok := errors.AsType[*fs.PathError](err)
	if !ok || pe.Path != path || !errors.Is(err, syscall.EISDIR) {
		t.Errorf("WriteFile over a folder: %v, want a *fs.PathError for %s (EISDIR)", err, path)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp-*")); len(left) > 0 {
		t.Errorf("left %v", left)
	}
}
