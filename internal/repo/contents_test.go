package repo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/testkit/testenv"
	"github.com/updeb/updeb/pkg/deb"
)

// namesDeb builds with dpkg-deb a package that installs each of paths
// (files holding their own name) under the given section.
func namesDeb(t *testing.T, dir, name, version, arch, section string, paths ...string) string {
	t.Helper()
	tree := filepath.Join(dir, "tree-"+name+"-"+version+"-"+arch)
	must(t, os.MkdirAll(filepath.Join(tree, "DEBIAN"), 0o755))
	for _, p := range paths {
		must(t, os.MkdirAll(filepath.Join(tree, filepath.Dir(p)), 0o755))
		must(t, os.WriteFile(filepath.Join(tree, p), []byte(p+"\n"), 0o644))
	}
	ctl := "Package: " + name + "\nVersion: " + version + "\nArchitecture: " + arch + "\nMaintainer: Test <test@example.com>\nSection: " + section + "\nPriority: optional\nDescription: " + name + "\n"
	must(t, os.WriteFile(filepath.Join(tree, "DEBIAN/control"), []byte(ctl), 0o644))
	out := filepath.Join(dir, name+"_"+version+"_"+arch+".deb")
	testenv.Run(t, "dpkg-deb", "--root-owner-group", "-Zgzip", "--build", tree, out)
	return out
}

// TestContentsWithAptFile: apt-file, configured as it installs itself,
// finds every file of every package of the repository served on
// 127.0.0.1, names with backslashes, spaces and UTF-8 included; and keeps
// finding what is published, and only that, after a remove, a promotion,
// a rollback, a refresh and garbage collection.
func TestContentsWithAptFile(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb", "apt-file", "apt-ftparchive")
	dir := t.TempDir()
	root := filepath.Join(dir, "repo")
	r := testRepo(t, root)
	ctx := context.Background()
	hello := namesDeb(t, dir, "hello", "1.0-1", "amd64", "utils", "usr/bin/hello", `lib/systemd/system/hello\x2dworld.service`, "usr/share/hello/read me.txt", "usr/share/hello/ünïcödé")
	hello2 := namesDeb(t, dir, "hello", "2.0-1", "amd64", "utils", "usr/bin/hello", "usr/share/hello/new in 2")
	docs := namesDeb(t, dir, "hello-doc", "1.0-1", "all", "doc", "usr/share/doc/hello-doc/guide.txt", "usr/bin/hello-doc")
	tool := namesDeb(t, dir, "tool", "1.0-1", "arm64", "admin", "usr/bin/tool")
	_, err := r.Publish(ctx, "s", "main", []Package{pkgOf(t, hello), pkgOf(t, docs), pkgOf(t, tool)})
	must(t, err)

	release, err := os.ReadFile(filepath.Join(root, "dists/s/Release"))
	must(t, err)
	for _, want := range []string{"Architectures: all amd64 arm64\n", "No-Support-for-Architecture-all: Packages\n",
		" main/Contents-amd64\n", " main/Contents-amd64.gz\n", " main/Contents-arm64.gz\n", " main/Contents-all.gz\n"} {
		if !strings.Contains(string(release), want) {
			t.Errorf("Release lacks %q:\n%s", want, release)
		}
	}
	contents := string(testenv.Run(t, "sh", "-c", `gzip -dc "$1"`, "sh", filepath.Join(root, "dists/s/main/Contents-amd64.gz")))
	wantContents := `lib/systemd/system/hello\x2dworld.service               utils/hello
usr/bin/hello                                           utils/hello
usr/share/hello/read me.txt                             utils/hello
usr/share/hello/ünïcödé                                 utils/hello
`
	if contents != wantContents {
		t.Errorf("Contents-amd64:\n%s\nwant:\n%s", contents, wantContents)
	}

	// The same paths and packages as apt-ftparchive's Contents of the pool
	// (which names packages without their section, every architecture in one).
	{
		parse := func(text string) map[string]string {
			m := map[string]string{}
			for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
				i := strings.LastIndexAny(line, " \t")
				var names []string
				for _, loc := range strings.Split(line[i+1:], ",") {
					names = append(names, loc[strings.LastIndex(loc, "/")+1:])
				}
				slices.Sort(names)
				m[strings.TrimRight(line[:i], " \t")] = strings.Join(names, ",")
			}
			return m
		}
		var ours strings.Builder
		for _, arch := range []string{"amd64", "arm64", "all"} {
			ours.Write(testenv.Run(t, "sh", "-c", `gzip -dc "$1"`, "sh", filepath.Join(root, "dists/s/main/Contents-"+arch+".gz")))
		}
		cmd := exec.Command("apt-ftparchive", "contents", "pool")
		cmd.Dir = root
		ref, err := cmd.Output()
		must(t, err)
		if got, want := parse(ours.String()), parse(string(ref)); !maps.Equal(got, want) {
			t.Errorf("Contents: %v\napt-ftparchive: %v", got, want)
		}
	}

	a := newAptClient(t, root, "s", "main").withAptFile()
	a.update()
	expect := func(pattern string, want ...string) {
		t.Helper()
		if got := a.search(pattern); !slices.Equal(got, want) {
			t.Errorf("apt-file search %q:\n  %s\nwant:\n  %s", pattern, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		}
	}
	expect("/usr/bin/hello", "hello: /usr/bin/hello", "hello-doc: /usr/bin/hello-doc")
	expect(`hello\x2dworld`, `hello: /lib/systemd/system/hello\x2dworld.service`)
	expect("read me", "hello: /usr/share/hello/read me.txt")
	expect("ünïcödé", "hello: /usr/share/hello/ünïcödé")
	expect("guide.txt", "hello-doc: /usr/share/doc/hello-doc/guide.txt")
	expect("/usr/bin/tool") // arm64: not this amd64 client's
	// apt installs them under the same names.
	if out, err := a.run("apt-get", "install", "-y", "-q", "--no-install-recommends", "hello=1.0-1"); err != nil {
		t.Fatalf("apt-get install: %v\n%s", err, out)
	}
	for _, p := range []string{`lib/systemd/system/hello\x2dworld.service`, "usr/share/hello/read me.txt", "usr/share/hello/ünïcödé"} {
		if got, err := os.ReadFile(filepath.Join(a.root, p)); err != nil || string(got) != p+"\n" {
			t.Errorf("installed %s: %q, %v", p, got, err)
		}
	}

	// A second version adds its paths; the first keeps its own.
	_, err = r.Publish(ctx, "s", "main", []Package{pkgOf(t, hello2)})
	must(t, err)
	a.update()
	expect("new in 2", "hello: /usr/share/hello/new in 2")
	expect("read me", "hello: /usr/share/hello/read me.txt")

	// Remove version 1: its own paths go, the shared ones stay.
	_, err = r.Remove(ctx, "s", "main", "hello", "1.0-1", "")
	must(t, err)
	a.update()
	expect("read me")
	expect("/usr/bin/hello", "hello: /usr/bin/hello", "hello-doc: /usr/bin/hello-doc")

	// Promote hello-doc to a new suite: apt-file finds it there.
	_, err = r.Promote(ctx, Place{Suite: "s"}, Place{Suite: "t"}, []Selector{{Name: "hello-doc"}})
	must(t, err)
	b := newAptClient(t, root, "t", "main").withAptFile()
	b.update()
	if got := b.search("guide.txt"); !slices.Equal(got, []string{"hello-doc: /usr/share/doc/hello-doc/guide.txt"}) {
		t.Errorf("apt-file search in the promoted suite: %q", got)
	}
	if got := b.search("/usr/bin/hello"); !slices.Equal(got, []string{"hello-doc: /usr/bin/hello-doc"}) {
		t.Errorf("apt-file search in the promoted suite: %q", got)
	}

	// Roll back to before the remove: version 1's paths are found again.
	_, err = r.Rollback(ctx, "s", 2)
	must(t, err)
	a.update()
	expect("read me", "hello: /usr/share/hello/read me.txt")
	expect("new in 2", "hello: /usr/share/hello/new in 2")

	// A refresh and a garbage collection change nothing apt-file sees.
	_, err = r.Refresh(ctx, nil)
	must(t, err)
	_, err = r.GC(ctx, false)
	must(t, err)
	a.update()
	expect(`hello\x2dworld`, `hello: /lib/systemd/system/hello\x2dworld.service`)
}

// The file lists are stored when a package is added and Contents are made
// from them: a publish reads no other .deb (a pool file damaged since it
// was added does not matter to the next publish); a list that is missing
// or describes other bytes is read again from the pool file; garbage
// collection removes the list with its pool file, and lists whose pool
// file is gone.
func TestContentsLists(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	dir := t.TempDir()
	root := filepath.Join(dir, "repo")
	ctx := context.Background()
	now, jump := jumpingClock()
	r := Open(root, Options{Settings: SettingsChange{Origin: ptr("t"), Architectures: []string{"amd64"}, Keep: ptr(1)},
		Signer: testSigner(t), Now: now, Logger: slog.New(slog.DiscardHandler)})
	contentsOf := func() string {
		return string(testenv.Run(t, "sh", "-c", `gzip -dc "$1"`, "sh", filepath.Join(root, "dists/s/main/Contents-amd64.gz")))
	}
	a := namesDeb(t, dir, "aa", "1", "amd64", "utils", "usr/bin/aa")
	res, err := r.Publish(ctx, "s", "main", []Package{pkgOf(t, a)})
	must(t, err)
	poolA := filepath.Join(root, res.Added[0].Filename)
	listA := contentsFile(root, res.Added[0].Filename)
	if got, err := os.ReadFile(listA); err != nil || string(got) != contentsHeader+"sha256 "+res.Added[0].SHA256+"\nusr/bin/aa\n" {
		t.Fatalf("stored list %q (%v)", got, err)
	}

	// Damage aa's pool file: the next publish does not read it.
	size, _ := os.Stat(poolA)
	must(t, os.WriteFile(poolA, make([]byte, size.Size()), 0o644))
	b := namesDeb(t, dir, "bb", "1", "amd64", "utils", "usr/bin/bb")
	_, err = r.Publish(ctx, "s", "main", []Package{pkgOf(t, b)})
	must(t, err)
	if got := contentsOf(); !strings.Contains(got, "usr/bin/aa ") || !strings.Contains(got, "usr/bin/bb ") {
		t.Fatalf("Contents after the second publish:\n%s", got)
	}
	must(t, os.Remove(poolA))
	testenv.Run(t, "cp", a, poolA)

	// Missing and stale lists are read again from the pool file.
	must(t, os.Remove(listA))
	must(t, os.WriteFile(contentsFile(root, "pool/main/b/bb/bb_1_amd64.deb"), []byte(contentsHeader+"sha256 0000\nusr/bin/stale\n"), 0o644))
	c := namesDeb(t, dir, "cc", "1", "amd64", "utils", "usr/bin/cc")
	_, err = r.Publish(ctx, "s", "main", []Package{pkgOf(t, c)})
	must(t, err)
	if got := contentsOf(); !strings.Contains(got, "usr/bin/aa ") || !strings.Contains(got, "usr/bin/bb ") || strings.Contains(got, "stale") {
		t.Fatalf("Contents with lists read again:\n%s", got)
	}
	if _, err := os.Stat(listA); err != nil {
		t.Errorf("aa's list was not stored again: %v", err)
	}

	// Garbage collection: aa removed and collected with its list; a list
	// without a pool file goes too.
	_, err = r.Remove(ctx, "s", "main", "aa", "", "")
	must(t, err)
	stray := contentsFile(root, "pool/main/z/zz/zz_1_amd64.deb")
	must(t, os.MkdirAll(filepath.Dir(stray), 0o755))
	must(t, os.WriteFile(stray, []byte(contentsHeader), 0o644))
	jump(byHashGrace)
	_, err = r.Refresh(ctx, nil) // the generations before, served by hash until their grace passed, listed aa
	must(t, err)
	gc, err := r.GC(ctx, false)
	must(t, err)
	if !slices.Contains(gc.PoolFiles, "pool/main/a/aa/aa_1_amd64.deb") {
		t.Fatalf("gc removed %v", gc.PoolFiles)
	}
	for _, p := range []string{listA, stray, filepath.Dir(stray)} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s left after gc: %v", p, err)
		}
	}
	if got := contentsOf(); strings.Contains(got, "usr/bin/aa") {
		t.Errorf("Contents still lists aa:\n%s", got)
	}
}

// A suite written before updeb published Contents indices gets them from
// its next generation of any kind: a refresh reads every pool file once
// (storing its list), a rollback to a generation without them renders them.
func TestContentsAddedToOlderSuites(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	dir := t.TempDir()
	root := filepath.Join(dir, "repo")
	ctx := context.Background()
	r := testRepo(t, root)
	_, err := r.Publish(ctx, "s", "main", []Package{pkgOf(t, namesDeb(t, dir, "aa", "1", "amd64", "utils", "usr/bin/aa"))})
	must(t, err)
	_, err = r.Publish(ctx, "s", "main", []Package{pkgOf(t, namesDeb(t, dir, "bb", "1", "all", "doc", "usr/share/doc/bb/x"))})
	must(t, err)
	// Make generations 1 and 2 what updeb wrote before: no Contents, no
	// "all", no stored lists.
	for n := 1; n <= 2; n++ {
		stripContents(t, r, filepath.Join(root, "dists/.gen/s", strconv.Itoa(n)))
	}
	must(t, os.RemoveAll(filepath.Join(root, ".updeb/contents")))

	_, err = r.Refresh(ctx, nil)
	must(t, err)
	release, err := os.ReadFile(filepath.Join(root, "dists/s/Release"))
	must(t, err)
	for _, want := range []string{"Architectures: all amd64 arm64\n", " main/Contents-amd64.gz\n", " main/Contents-all.gz\n", " main/binary-all/Packages\n"} {
		if !strings.Contains(string(release), want) {
			t.Errorf("refreshed Release lacks %q:\n%s", want, release)
		}
	}
	got := string(testenv.Run(t, "sh", "-c", `gzip -dc "$1"`, "sh", filepath.Join(root, "dists/s/main/Contents-all.gz")))
	if got != "usr/share/doc/bb/x                                      doc/bb\n" {
		t.Errorf("Contents-all:\n%s", got)
	}
	// Rolling back to generation 1 (no Contents, aa only) renders them.
	_, err = r.Rollback(ctx, "s", 1)
	must(t, err)
	got = string(testenv.Run(t, "sh", "-c", `gzip -dc "$1"`, "sh", filepath.Join(root, "dists/s/main/Contents-amd64.gz")))
	if got != "usr/bin/aa                                              utils/aa\n" {
		t.Errorf("Contents-amd64 after the rollback:\n%s", got)
	}
	if got := string(testenv.Run(t, "sh", "-c", `gzip -dc "$1"`, "sh", filepath.Join(root, "dists/s/main/Contents-all.gz"))); got != "" {
		t.Errorf("Contents-all after the rollback to a generation without bb:\n%s", got)
	}
}

// A pool file replaced by hand by other bytes, whose stored file list is
// missing (a suite published before updeb stored them), is refused when its
// Contents are rendered: the replacement's paths were signed into
// Contents-ARCH.gz and stored as the list of the bytes the index lists, so
// they stayed listed after the pool file was restored.
func TestContentsOfAChangedPoolFileRefused(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	dir := t.TempDir()
	good := namesDeb(t, dir, "aa", "1", "amd64", "utils", "usr/bin/aa")
	root, ctx := filepath.Join(dir, "repo"), context.Background()
	r := testRepo(t, root)
	_, err := r.Publish(ctx, "s", "main", []Package{pkgOf(t, good)})
	must(t, err)
	pool := filepath.Join(root, "pool/main/a/aa/aa_1_amd64.deb")
	data, err := os.ReadFile(namesDeb(t, filepath.Join(dir, "evil"), "aa", "1", "amd64", "utils", "usr/bin/evil"))
	must(t, err)
	must(t, os.WriteFile(pool, data, 0o644))
	must(t, os.RemoveAll(filepath.Join(root, ".updeb/contents")))
	_, err = r.Publish(ctx, "s", "main", []Package{pkgOf(t, namesDeb(t, dir, "bb", "1", "amd64", "utils", "usr/bin/bb"))})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), pool) {
		t.Fatalf("publish beside a pool file changed by hand: %v, want ErrInvalid naming %s", err, pool)
	}
	if n, err := r.liveGeneration("s"); err != nil || n != 1 {
		t.Fatalf("the live generation is %d (%v), want 1: nothing written", n, err)
	}
	// Restored, the same publish lists what the listed bytes install.
	data, err = os.ReadFile(good)
	must(t, err)
	must(t, os.WriteFile(pool, data, 0o644))
	_, err = r.Publish(ctx, "s", "main", []Package{pkgOf(t, namesDeb(t, dir, "bb", "1", "amd64", "utils", "usr/bin/bb"))})
	must(t, err)
	got := string(testenv.Run(t, "sh", "-c", `gzip -dc "$1"`, "sh", filepath.Join(root, "dists/s/main/Contents-amd64.gz")))
	if want := "usr/bin/aa                                              utils/aa\nusr/bin/bb                                              utils/bb\n"; got != want {
		t.Errorf("Contents-amd64:\n%s\nwant\n%s", got, want)
	}
}

// stripContents rewrites generation dir as updeb wrote generations before
// Contents indices: their files and Release entries gone, no "all", and
// the Release signed again.
func stripContents(t *testing.T, r *Repo, dir string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "Release"))
	must(t, err)
	rel, err := parseRelease(data, "Release")
	must(t, err)
	var files []indexFile
	for _, e := range rel.files {
		if e.algorithm != "SHA256" || strings.Contains(e.path, "Contents-") || strings.Contains(e.path, "binary-all/") {
			continue
		}
		f := indexFile{path: e.path, size: e.size, sums: map[string]string{}}
		for _, x := range rel.files {
			if x.path == e.path {
				f.sums[x.algorithm] = x.hex
			}
		}
		files = append(files, f)
	}
	must(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && (strings.Contains(d.Name(), "Contents-") || d.Name() == "binary-all") {
			if err := os.RemoveAll(p); err != nil || !d.IsDir() {
				return err
			}
			return filepath.SkipDir
		}
		return err
	}))
	set, err := readSettings(dir, "s", rel)
	must(t, err)
	meta, err := r.signRelease(set, false, rel.date, files)
	must(t, err)
	for _, m := range meta {
		must(t, os.WriteFile(filepath.Join(dir, m.path), m.data, 0o644))
	}
}

// ContentsOf names each path as dpkg installs it, whatever form data.tar's
// member names take (dpkg-deb's "./usr/...", other tools' "usr/..."), a
// name that starts with a dot included.
func TestContentsOfMemberNames(t *testing.T) {
	info := &deb.Info{Files: []deb.FileInfo{
		{Path: "./", Type: "dir"}, {Path: "./usr/bin/x", Type: "file"}, {Path: "usr/bin/y", Type: "symlink"},
		{Path: "./usr//share/./z", Type: "file"}, {Path: "./.config/a", Type: "file"}, {Path: ".hidden/b", Type: "hardlink"},
		{Path: "./usr/share/", Type: "dir"},
	}}
	want := []string{".config/a", ".hidden/b", "usr/bin/x", "usr/bin/y", "usr/share/z"}
	if got := ContentsOf(info); !slices.Equal(got, want) {
		t.Errorf("ContentsOf: %q, want %q", got, want)
	}
}

// A stored file list gives back the paths as stored: a carriage return
// (which dpkg takes in a file name), at the end of a path too, a tab, a
// trailing space and bytes that are not UTF-8 are kept, so that the
// Contents index lists the files the package installs.
func TestContentsListKeepsOddNames(t *testing.T) {
	s := &contentsStore{root: t.TempDir(), ctx: context.Background()}
	e := Entry{Filename: "pool/main/o/odd/odd_1_all.deb", SHA256: strings.Repeat("ab", 32)}
	paths := []string{"usr/share/odd/cr\r", "usr/share/odd/mid\rcr", "usr/share/odd/tab\t", "usr/share/odd/space ", "usr/share/odd/\xff\xfe"}
	must(t, s.store(e, paths))
	got, err := s.read(e)
	if err != nil || !slices.Equal(got, paths) {
		t.Errorf("stored list read back as %q (%v), want %q", got, err, paths)
	}
}

// TestContentsListOverTheBoundRefused: a package's file list is stored once
// and read back at every later publish; one larger than a stored list may
// be (maxContentsList) would be read back as damaged and the whole .deb
// listed again by every publish, for ever. It is refused, naming the file
// and the bound, with nothing written; a list of exactly the bound is
// stored and read back.
func TestContentsListOverTheBoundRefused(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	dir := t.TempDir()
	root, ctx := filepath.Join(dir, "repo"), context.Background()
	r := testRepo(t, root)
	// paths of 255 bytes and their line feed: the header and digest line
	// take 17+72 bytes, so n paths and a last one of the rest fill the list
	long := func(i int) string { return fmt.Sprintf("usr/share/big/%0241d", i) }
	n := (maxContentsList - len(contentsHeader) - 72) / 256
	paths := make([]string, 0, n+1)
	for i := range n {
		paths = append(paths, long(i))
	}
	rest := maxContentsList - len(contentsHeader) - 72 - n*256
	paths = append(paths, "usr/share/last/"+strings.Repeat("x", rest-len("usr/share/last/")-1))
	over := pkgOf(t, namesDeb(t, dir, "big", "1", "amd64", "utils", "usr/bin/big"))
	over.Contents = append(slices.Clone(paths), "usr/share/one-more")
	_, err := r.Publish(ctx, "s", "main", []Package{over})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), over.Path) || !strings.Contains(err.Error(), strconv.Itoa(maxContentsList)) {
		t.Fatalf("publish of a package with a list over the bound: %v, want ErrInvalid naming %s and %d", err, over.Path, maxContentsList)
	}
	if _, err := os.Stat(filepath.Join(root, "pool")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused publish left the pool: %v", err)
	}
	at := pkgOf(t, namesDeb(t, dir, "big", "2", "amd64", "utils", "usr/bin/big"))
	at.Contents = paths
	res, err := r.Publish(ctx, "s", "main", []Package{at})
	must(t, err)
	list := contentsFile(root, res.Added[0].Filename)
	if fi, err := os.Stat(list); err != nil || fi.Size() != maxContentsList {
		t.Fatalf("stored list: %v, %v; want %d bytes", fi, err, maxContentsList)
	}
	s := &contentsStore{root: root, ctx: ctx}
	if got, err := s.read(res.Added[0]); err != nil || len(got) != len(paths) {
		t.Fatalf("the list of the bound read back: %d paths, %v; want %d", len(got), err, len(paths))
	}
}
