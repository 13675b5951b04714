package repo

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/updeb/updeb/internal/confined"
	"github.com/updeb/updeb/internal/testkit/testenv"
	"github.com/updeb/updeb/pkg/control"
)

func TestPublishTwoVersionsInstallWithApt(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	dir := t.TempDir()
	root := filepath.Join(dir, "repo")
	r := testRepo(t, root)
	ctx := context.Background()
	v1 := testDeb(t, dir, "hello", "1.0-1", "amd64", "one")
	v2 := testDeb(t, dir, "hello", "1:2.0~rc.1-1", "amd64", "two")
	doc := testDeb(t, dir, "hello-doc", "1.0-1", "all", "doc")
	res, err := r.Publish(ctx, "bookworm-test", "component/k8s131", []Package{pkgOf(t, v1), pkgOf(t, doc)})
	must(t, err)
	if len(res.Added) != 2 || res.Generation != 1 {
		t.Fatalf("first publish: %+v", res)
	}
	res, err = r.Publish(ctx, "bookworm-test", "component/k8s131", []Package{pkgOf(t, v2)})
	must(t, err)
	if len(res.Added) != 1 || res.Generation != 2 {
		t.Fatalf("second publish: %+v", res)
	}
	a := newAptClient(t, root, "bookworm-test", "component/k8s131")
	a.update()
	a.install("hello", "1.0-1", "one")
	a.install("hello", "1:2.0~rc.1-1", "two")
	a.install("hello", "1.0-1", "one")
	a.install("hello-doc", "1.0-1", "doc")
}

// TestPublishBzip2LZMAAndPAXInstallWithApt: dpkg reads a data.tar
// compressed with bzip2 or lzma (dpkg-deb(1)), which dpkg-deb --build no
// longer writes and older packages carry, and a control.tar in PAX format
// (tar --format=pax), which dpkg-deb extracts with GNU tar; publish takes
// them, and apt installs them from the repository.
func TestPublishBzip2LZMAAndPAXInstallWithApt(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb", "ar", "tar", "gzip", "bzip2", "xz")
	dir := t.TempDir()
	root := filepath.Join(dir, "repo")
	r := testRepo(t, root)
	var pkgs []Package
	for _, c := range []struct{ name, data, script string }{
		{"old-bzip2", "data.tar.bz2", "gzip -d data.tar.gz && bzip2 -9 data.tar"},
		{"old-lzma", "data.tar.lzma", "gzip -d data.tar.gz && xz --format=lzma data.tar"},
		{"pax-control", "data.tar.gz", "mkdir c && tar -xzf control.tar.gz -C c && rm control.tar.gz && tar --format=pax -czf control.tar.gz -C c ."},
	} {
		deb := repacked(t, testDeb(t, dir, c.name, "1.0-1", "amd64", c.name+" payload"), c.script, c.data)
		if members := testenv.Run(t, "ar", "t", deb); string(members) != "debian-binary\ncontrol.tar.gz\n"+c.data+"\n" {
			t.Fatalf("%s: ar members:\n%s", deb, members)
		}
		testenv.Run(t, "dpkg-deb", "--info", deb)
		if contents := testenv.Run(t, "dpkg-deb", "--contents", deb); !strings.Contains(string(contents), "./usr/share/"+c.name+"/payload") {
			t.Fatalf("dpkg-deb --contents %s:\n%s", deb, contents)
		}
		pkgs = append(pkgs, pkgOf(t, deb))
	}
	if _, err := r.Publish(context.Background(), "s", "main", pkgs); err != nil {
		t.Fatal(err)
	}
	a := newAptClient(t, root, "s", "main")
	a.update()
	for _, p := range []string{"old-bzip2", "old-lzma", "pax-control"} {
		a.install(p, "1.0-1", p+" payload")
	}
}

// repacked rebuilds the .deb deb (control.tar.gz, data.tar.gz) after the
// shell script ran on its members, as the real tools made such packages,
// with control.tar.gz and the data member data the script leaves, and
// returns its path.
func repacked(t *testing.T, deb, script, data string) string {
	t.Helper()
	work := t.TempDir()
	testenv.Run(t, "sh", "-c", `cd "$1" && ar x "$2" && `+script, "sh", work, deb)
	out := filepath.Join(work, filepath.Base(deb))
	testenv.Run(t, "sh", "-c", `cd "$1" && ar rc "$2" debian-binary control.tar.gz "$3"`, "sh", work, out, data)
	return out
}

// TestListInAptOrder: List gives a package's versions in dpkg's order,
// oldest first, as apt orders them (apt-cache madison, newest first), so the
// last one listed is the candidate apt installs; not in byte order, which
// puts 1.10 before 1.9 and a pre-release after its release.
func TestListInAptOrder(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	dir := t.TempDir()
	root := filepath.Join(dir, "repo")
	r := testRepo(t, root)
	var pkgs []Package
	for _, v := range []string{"1.10+k3s1-1", "1.10-1", "1.10~rc.1-1", "1.9-1", "1:0.1-1", "1.9-1.1"} {
		pkgs = append(pkgs, pkgOf(t, testDeb(t, dir, "hello", v, "amd64", v)))
	}
	_, err := r.Publish(context.Background(), "s", "main", pkgs)
	must(t, err)
	list, err := r.List("s")
	must(t, err)
	var got []string
	for _, e := range list {
		got = append(got, e.Version)
	}
	a := newAptClient(t, root, "s", "main")
	a.update()
	want := a.madison("hello")
	slices.Reverse(want)
	if !slices.Equal(got, want) {
		t.Errorf("List gives %v, apt orders them %v", got, want)
	}
}

// snapshot returns every file under dir/dists and dir/pool with its content,
// following the suite links, to prove a refused publish changed nothing.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, sub := range []string{"dists", "pool"} {
		err := filepath.WalkDir(filepath.Join(dir, sub), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.Type()&fs.ModeSymlink != 0 {
				target, err := os.Readlink(p)
				out[p] = "-> " + target
				return err
			}
			if d.Type().IsRegular() {
				data, err := os.ReadFile(p)
				out[p] = string(data)
				return err
			}
			return nil
		})
		must(t, err)
	}
	return out
}

func TestRepublish(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	dir := t.TempDir()
	root := filepath.Join(dir, "repo")
	r := testRepo(t, root)
	ctx := context.Background()
	first := testDeb(t, dir, "tool", "1.0-1", "amd64", "original")
	_, err := r.Publish(ctx, "stable", "main", []Package{pkgOf(t, first)})
	must(t, err)
	before := snapshot(t, root)

	// Same bytes: a no-op, no new generation.
	res, err := r.Publish(ctx, "stable", "main", []Package{pkgOf(t, first)})
	must(t, err)
	if len(res.Added) != 0 || len(res.Unchanged) != 1 || res.Generation != 1 {
		t.Fatalf("republishing the same bytes: %+v, want one unchanged and generation 1", res)
	}

	// Other bytes, same name+version+arch: refused, nothing changed, even when
	// it comes with a new package that would be fine on its own.
	otherDir := t.TempDir()
	other := testDeb(t, otherDir, "tool", "1.0-1", "amd64", "tampered")
	fine := testDeb(t, otherDir, "tool", "1.1-1", "amd64", "fine")
	_, err = r.Publish(ctx, "stable", "main", []Package{pkgOf(t, fine), pkgOf(t, other)})
	var ce *ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("publishing other bytes: got %v, want *ConflictError", err)
	}
	if ce.Package != "tool=1.0-1 (amd64)" || ce.Filename != "pool/main/t/tool/tool_1.0-1_amd64.deb" || ce.Have == ce.New {
		t.Fatalf("conflict error fields: %+v", ce)
	}
	if after := snapshot(t, root); !reflect.DeepEqual(before, after) {
		t.Fatalf("a refused publish changed the repository:\nbefore %d files, after %d", len(before), len(after))
	}

	// Removed, the version still cannot come back with other bytes: its pool
	// file stays and is never overwritten.
	removed, err := r.Remove(ctx, "stable", "main", "tool", "1.0-1", "")
	must(t, err)
	if len(removed) != 1 {
		t.Fatalf("removed %v", removed)
	}
	// The message names the pool file the suite no longer lists, not a
	// published version; so it does for a suite that never listed it.
	for _, suite := range []string{"stable", "testing"} {
		_, err := r.Publish(ctx, suite, "main", []Package{pkgOf(t, other)})
		if !errors.As(err, &ce) || !ce.Pooled || !strings.Contains(err.Error(), "tool=1.0-1 (amd64) is not in suite "+suite+" component main, but the pool, which every suite of the repository shares, holds it as pool/main/t/tool/tool_1.0-1_amd64.deb") {
			t.Fatalf("republishing a removed version with other bytes into %s: got %v, want *ConflictError", suite, err)
		}
	}
	if _, err := r.Remove(ctx, "stable", "main", "tool", "1.0-1", ""); !errors.Is(err, ErrNotFound) {
		t.Fatalf("removing it twice: got %v, want ErrNotFound", err)
	}
	if list, err := r.List(""); err != nil || len(list) != 0 {
		t.Fatalf("List after remove: %v, %v", list, err)
	}
}

// Other bytes of a listed version whose build has another Source field (so
// another pool folder) are refused naming the pool file the suite lists,
// which holds the sha256 the message gives; it named the new build's pool
// path, a file that does not exist (or, where another suite's build is
// there, holds other bytes than the message said).
func TestConflictNamesTheListedPoolFile(t *testing.T) {
	dir, root := testDirs(t)
	r := testRepo(t, root)
	ctx := context.Background()
	listed := testDeb(t, filepath.Join(dir, "a"), "tool", "1.0-1", "amd64", "listed")
	_, err := r.Publish(ctx, "stable", "main", []Package{pkgOf(t, listed)})
	must(t, err)
	other := testDebWith(t, filepath.Join(dir, "b"), "tool", "1.0-1", "amd64", "other source", "Source: tool-suite\n")
	_, err = r.Publish(ctx, "stable", "main", []Package{pkgOf(t, other)})
	var ce *ConflictError
	const want = "pool/main/t/tool/tool_1.0-1_amd64.deb"
	if !errors.As(err, &ce) || ce.Filename != want || ce.Have != sha256File(t, filepath.Join(root, want)) || !strings.Contains(err.Error(), "already published as "+want+" with sha256 "+ce.Have) {
		t.Fatalf("other bytes of a listed version under another source: %v, want a conflict naming %s", err, want)
	}
}

// An index file removed from the live generation stops every refresh of
// the suite (its Valid-Until then runs out) and every write that carries
// it over: the error names it and says how to restore it from its by-hash
// name, which it did not; done as it says, the suite refreshes again.
func TestRemovedIndexSaysHowToRestore(t *testing.T) {
	dir, root := testDirs(t)
	r := testRepo(t, root)
	ctx := context.Background()
	_, err := r.Publish(ctx, "s", "main", []Package{pkgOf(t, testDeb(t, dir, "app", "1", "amd64", "v1"))})
	must(t, err)
	gz := filepath.Join(root, "dists/.gen/s/1/main/binary-amd64/Packages.gz")
	must(t, os.Remove(gz))
	_, err = r.Refresh(ctx, []string{"s"})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), gz) {
		t.Fatalf("refresh with %s removed: %v, want ErrInvalid naming it", gz, err)
	}
	_, advice, ok := strings.Cut(err.Error(), "('cp -p ")
	from, to, _ := strings.Cut(strings.TrimSuffix(strings.Split(advice, "';")[0], "'"), " ")
	if !ok || to != gz {
		t.Fatalf("refresh with %s removed: %v, want the cp -p that restores it", gz, err)
	}
	testenv.Run(t, "cp", "-p", from, to)
	_, err = r.Refresh(ctx, []string{"s"})
	must(t, err)
	checks, err := r.Verify(ctx, "s", clientKeyring(t, root), verifyNow)
	must(t, err)
	if len(checks) != 1 || len(checks[0].Findings) != 0 {
		t.Fatalf("verify after the restore: %+v", checks)
	}
}

func TestPackagesAgreeWithAptFtparchive(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb", "apt-ftparchive")
	dir := t.TempDir()
	root := filepath.Join(dir, "repo")
	r := testRepo(t, root)
	var pkgs []Package
	for _, v := range []struct{ name, version, arch string }{
		{"alpha", "1.0-1", "amd64"}, {"alpha", "1.1-1", "amd64"}, {"libbeta1", "2:0.3-2", "arm64"}, {"gamma-doc", "5", "all"},
	} {
		pkgs = append(pkgs, pkgOf(t, testDeb(t, dir, v.name, v.version, v.arch, v.name+v.version)))
	}
	_, err := r.Publish(context.Background(), "s", "main", pkgs)
	must(t, err)

	cmd := exec.Command("apt-ftparchive", "packages", "pool")
	cmd.Dir = root
	ref, err := cmd.Output()
	must(t, err)
	want, err := control.Parse(bytes.NewReader(ref), "apt-ftparchive packages")
	must(t, err)
	var got []control.Paragraph
	for _, arch := range []string{"amd64", "arm64"} {
		data, err := os.ReadFile(filepath.Join(root, "dists/s/main/binary-"+arch+"/Packages"))
		must(t, err)
		ps, err := control.Parse(bytes.NewReader(data), arch)
		must(t, err)
		for _, p := range ps {
			if p.Value("Architecture") == "all" && arch != "amd64" {
				continue // the same stanza in every binary-<arch>
			}
			got = append(got, p)
		}
	}
	if len(got) != len(want) || len(got) != 4 {
		t.Fatalf("%d stanzas, apt-ftparchive has %d", len(got), len(want))
	}
	byFile := map[string]control.Paragraph{}
	for _, p := range want {
		p.Delete("SHA1") // apt no longer uses SHA1; we leave it out
		byFile[p.Value("Filename")] = p
	}
	for _, p := range got {
		w, ok := byFile[p.Value("Filename")]
		if !ok {
			t.Fatalf("apt-ftparchive has no stanza for %s", p.Value("Filename"))
		}
		if !reflect.DeepEqual(fieldMap(p), fieldMap(w)) {
			t.Errorf("%s:\nours:\n%s\napt-ftparchive:\n%s", p.Value("Filename"), p.Bytes(), w.Bytes())
		}
	}
	if _, ok := byFile["pool/main/libb/libbeta1/libbeta1_0.3-2_arm64.deb"]; !ok {
		t.Errorf("lib* packages must go under pool/main/libb/: %v", byFile)
	}
}

func fieldMap(p control.Paragraph) map[string]string {
	m := map[string]string{}
	for _, f := range p.Fields {
		m[strings.ToLower(f.Name)] = f.Value
	}
	return m
}

func TestTamperedRepositoryRefusedByApt(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	tests := []struct {
		name   string
		tamper func(t *testing.T, live string)
		want   string
	}{
		{"Packages", func(t *testing.T, live string) {
			// Rewrite every form of the index in place (by-hash names are links to the same bytes).
			for _, f := range []string{"Packages", "Packages.gz", "Packages.xz"} {
				name := filepath.Join(live, "main/binary-amd64", f)
				data, err := os.ReadFile(name)
				must(t, err)
				data[len(data)/2] ^= 1
				must(t, os.WriteFile(name, data, 0o644))
			}
		}, "Hash Sum mismatch"},
		{"Release", func(t *testing.T, live string) {
			for _, f := range []string{"InRelease", "Release"} {
				name := filepath.Join(live, f)
				data, err := os.ReadFile(name)
				must(t, err)
				must(t, os.WriteFile(name, bytes.Replace(data, []byte("Label: updeb test"), []byte("Label: evil test"), 1), 0o644))
			}
		}, "BADSIG"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			root := filepath.Join(dir, "repo")
			_, err := testRepo(t, root).Publish(context.Background(), "s", "main", []Package{pkgOf(t, testDeb(t, dir, "xx", "1", "amd64", "x"))})
			must(t, err)
			live, err := filepath.EvalSymlinks(filepath.Join(root, "dists/s"))
			must(t, err)
			tt.tamper(t, live)
			a := newAptClient(t, root, "s", "main")
			out, err := a.run("apt-get", "update", "-q")
			if err == nil || !strings.Contains(out, tt.want) {
				t.Fatalf("apt-get update on a tampered %s: err %v, want failure mentioning %q\n%s", tt.name, err, tt.want, out)
			}
		})
	}
}

// A Packages file changed by hand after signing (an edit in place, which
// its by-hash links share, or a truncation) must never be signed into a new
// generation: a publish, a remove or a list of its component is refused,
// naming the file, and the suite stays as it was. Publish read the edited
// stanzas back and signed them (a Pre-Depends added by hand, served with a
// good signature), and after a truncation signed an index that had lost every
// version published before.
func TestTamperedIndexNeverSigned(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	for name, tamper := range map[string]func([]byte) []byte{
		"edited": func(data []byte) []byte {
			return bytes.Replace(data, []byte("Version: 1\n"), []byte("Version: 1\nPre-Depends: evil\n"), 1)
		},
		"same size": func(data []byte) []byte {
			return bytes.Replace(data, []byte("Version: 1\n"), []byte("Version: 2\n"), 1)
		},
		"truncated": func([]byte) []byte { return nil },
	} {
		t.Run(name, func(t *testing.T) {
			dir, root, r := repoWithOne(t, "main")
			ctx := context.Background()
			index := filepath.Join(root, "dists/s/main/binary-amd64/Packages")
			data, err := os.ReadFile(index)
			must(t, err)
			f, err := os.OpenFile(index, os.O_WRONLY|os.O_TRUNC, 0) // in place: the by-hash links change too
			must(t, err)
			_, err = f.Write(tamper(data))
			must(t, err)
			must(t, f.Close())
			check := func(what string, err error) {
				t.Helper()
				if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "changed outside updeb") || !strings.Contains(err.Error(), "main/binary-amd64/Packages") {
					t.Errorf("%s of a suite whose Packages was %s: %v, want ErrInvalid naming the file", what, name, err)
				}
			}
			_, err = r.Publish(ctx, "s", "main", []Package{pkgOf(t, testDeb(t, dir, "yy", "1", "amd64", "y"))})
			check("publish", err)
			_, err = r.Remove(ctx, "s", "main", "oo", "", "")
			check("remove", err)
			_, err = r.List("s")
			check("list", err)
			if n, err := r.liveGeneration("s"); err != nil || n != 1 {
				t.Errorf("the live generation is %d (%v), want 1: nothing written", n, err)
			}
		})
	}
}

// A publish refused after its packages were linked into the pool (here: a
// carried component's index changed by hand) leaves no pool file: one left
// behind passed for published bytes, so a rebuild of its version, never
// listed anywhere, was refused as "already published" (and gc would have
// recorded its digest as a collected version's).
func TestRefusedPublishLeavesNoPoolFile(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	dir, root, r := repoWithOne(t, "other")
	ctx := context.Background()
	gz := filepath.Join(root, "dists/s/other/binary-amd64/Packages.gz")
	st, err := os.Stat(gz)
	must(t, err)
	must(t, os.Truncate(gz, st.Size()+1)) // in place: its by-hash links change too
	if _, err := r.Publish(ctx, "s", "main", []Package{pkgOf(t, testDeb(t, dir, "xx", "1", "amd64", "first build"))}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("publish beside a changed index: %v, want ErrInvalid", err)
	}
	if _, err := os.Lstat(filepath.Join(root, "pool/main")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the refused publish left its pool file: %v", err)
	}
	// Restored, another build of the version is published.
	must(t, os.Truncate(gz, st.Size()))
	_, err = r.Publish(ctx, "s", "main", []Package{pkgOf(t, testDeb(t, dir, "xx", "1", "amd64", "second build"))})
	must(t, err)
}

// A refused publish leaves the repository's folders as they were too: into
// a new repository it leaves nothing but the lock (.updeb-lock, which a
// publish waiting for it may hold open), into an existing one no empty pool
// folder of the refused package.
func TestRefusedPublishLeavesNoFolder(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	root := filepath.Join(t.TempDir(), "repo")
	r, ctx := testRepo(t, root), context.Background()
	tree := func() []string {
		var out []string
		must(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if rel, _ := filepath.Rel(root, p); err == nil && rel != "." {
				out = append(out, rel)
			}
			return err
		}))
		return out
	}
	refused := func(name string) {
		t.Helper()
		two := []Package{pkgOf(t, testDeb(t, t.TempDir(), name, "1", "amd64", "one")), pkgOf(t, testDeb(t, t.TempDir(), name, "1", "amd64", "two"))}
		if _, err := r.Publish(ctx, "s", "main", two); !errors.As(err, new(*ConflictError)) {
			t.Fatalf("publishing two builds of %s=1: %v, want *ConflictError", name, err)
		}
	}
	refused("xx")
	if got := tree(); !reflect.DeepEqual(got, []string{".updeb-lock"}) {
		t.Errorf("a refused publish into a new repository left %q, want only .updeb-lock", got)
	}
	_, err := r.Publish(ctx, "s", "main", []Package{pkgOf(t, testDeb(t, t.TempDir(), "oo", "1", "amd64", "o"))})
	must(t, err)
	before := tree()
	refused("zz")
	if after := tree(); !reflect.DeepEqual(after, before) {
		t.Errorf("a refused publish changed the repository's folders: %q, was %q", after, before)
	}
}

// Two builds of one version given to one publish (two out/ folders of one
// recipe) are refused naming both .deb files, not a pool file that does not
// exist: nothing of that version is published yet. So are two spellings of
// one version, and one build for all beside one for an architecture.
func TestTwoBuildsInOnePublishNamed(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	_, root, r := repoWithOne(t, "main") // oo=1 (amd64)
	ctx := context.Background()
	before := snapshot(t, root)
	for _, tc := range []struct{ what, v1, a1, v2, a2, why string }{
		{"two builds", "2-1", "amd64", "2-1", "amd64", "a version has one build"},
		{"two spellings", "2.0-1", "amd64", "2.00-1", "amd64", "compare the two versions equal"},
		{"all and amd64", "2", "all", "2", "amd64", "Architecture: all"},
	} {
		one, two := testDeb(t, t.TempDir(), "nn", tc.v1, tc.a1, "one"), testDeb(t, t.TempDir(), "nn", tc.v2, tc.a2, "two")
		_, err := r.Publish(ctx, "s", "main", []Package{pkgOf(t, one), pkgOf(t, two)})
		var ce *ConflictError
		if !errors.As(err, &ce) || ce.Given != one || ce.Path != two {
			t.Fatalf("%s: %v, want a *ConflictError between %s and %s", tc.what, err, one, two)
		}
		msg := err.Error()
		for _, s := range []string{one, two, sha256File(t, one), sha256File(t, two), "given to one publish", tc.why} {
			if !strings.Contains(msg, s) {
				t.Errorf("%s: the message does not say %q: %s", tc.what, s, msg)
			}
		}
		if strings.Contains(msg, "pool/") || strings.Contains(msg, "already published") {
			t.Errorf("%s: the message names a pool file or says published: %s", tc.what, msg)
		}
	}
	if !reflect.DeepEqual(before, snapshot(t, root)) {
		t.Fatalf("a refused publish changed the repository")
	}
}

// A Release cut short by hand (a full disk, a partial copy) lists fewer
// index files, or none: the next publish or refresh signed a generation
// without the packages it no longer listed. A Release that is not the text
// its InRelease signs is refused, and the command the error gives restores
// it from an intact InRelease.
func TestTruncatedReleaseRefused(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb", "gpgv")
	dir, root, r := repoWithOne(t, "main")
	ctx := context.Background()
	release := filepath.Join(root, "dists/s/Release")
	data, err := os.ReadFile(release)
	must(t, err)
	must(t, os.WriteFile(release, data[:bytes.Index(data, []byte("SHA256:"))], 0o644))
	_, err = r.Publish(ctx, "s", "main", []Package{pkgOf(t, testDeb(t, dir, "yy", "1", "amd64", "y"))})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "not the text") {
		t.Fatalf("publish with a truncated Release: %v, want ErrInvalid", err)
	}
	if _, err := r.Refresh(ctx, nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("refresh with a truncated Release: %v, want ErrInvalid", err)
	}
	if n, err := r.liveGeneration("s"); err != nil || n != 1 {
		t.Fatalf("the live generation is %d (%v), want 1: nothing written", n, err)
	}
	_, restore, _ := strings.Cut(strings.TrimSuffix(err.Error(), "')"), "signs: '")
	testenv.Run(t, "sh", "-c", restore)
	if got, err := os.ReadFile(release); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("the error's command (%s) restored %q (%v), want the Release as written", restore, got, err)
	}
	_, err = r.Publish(ctx, "s", "main", []Package{pkgOf(t, testDeb(t, dir, "yy", "1", "amd64", "y"))})
	must(t, err)
	if got, err := r.List("s"); err != nil || len(got) != 2 {
		t.Fatalf("after the restore the suite lists %v (%v), want oo and yy", got, err)
	}
}

// An InRelease removed by hand is a generation changed outside updeb, as
// is a Release it does not sign: refused as invalid (exit 2), naming the
// file, not a bare "no such file" that reads as an I/O failure (exit 3).
func TestMissingInReleaseRefused(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	_, root, r := repoWithOne(t, "main")
	inRelease := filepath.Join(root, "dists/.gen/s/1/InRelease")
	must(t, os.Remove(inRelease))
	if _, err := r.List("s"); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), inRelease+" is missing") {
		t.Fatalf("list with InRelease removed: %v, want ErrInvalid naming %s", err, inRelease)
	}
}

// repoWithOne returns a repository whose suite s lists one package, oo=1 in
// comp, with the folder it is in.
func repoWithOne(t *testing.T, comp string) (dir, root string, r *Repo) {
	t.Helper()
	dir = t.TempDir()
	root = filepath.Join(dir, "repo")
	r = testRepo(t, root)
	_, err := r.Publish(context.Background(), "s", comp, []Package{pkgOf(t, testDeb(t, dir, "oo", "1", "amd64", "o"))})
	must(t, err)
	return dir, root, r
}

// A client that read generation n's InRelease just before the switch to n+1
// must still find every index it lists, by hash.
func TestByHashKeepsPreviousGeneration(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	dir := t.TempDir()
	root := filepath.Join(dir, "repo")
	r := testRepo(t, root)
	_, err := r.Publish(context.Background(), "s", "main", []Package{pkgOf(t, testDeb(t, dir, "aa", "1", "amd64", "1"))})
	must(t, err)
	old, err := os.ReadFile(filepath.Join(root, "dists/s/Release"))
	must(t, err)
	prev, err := parseRelease(old, "gen 1")
	must(t, err)
	_, err = r.Publish(context.Background(), "s", "main", []Package{pkgOf(t, testDeb(t, dir, "aa", "2", "amd64", "2"))})
	must(t, err)
	if len(prev.files) != 20 { // 2 algorithms x 2 architectures x (3 Packages forms, Contents and Contents.gz)
		t.Fatalf("generation 1 lists %d files", len(prev.files))
	}
	for _, e := range prev.files {
		if strings.Contains(e.path, "/Contents-") && !strings.HasSuffix(e.path, ".gz") {
			continue // listed for its digests, served only compressed (as Debian's)
		}
		name := filepath.Join(root, "dists/s", filepath.Dir(e.path), "by-hash", e.algorithm, e.hex)
		st, err := os.Stat(name)
		if err != nil || st.Size() != e.size {
			t.Errorf("generation 2 does not serve generation 1's %s by hash: %v", e.path, err)
		}
	}
}

// A client that read InRelease before two writes (a publish and its
// follow-up, a refresh, a remove) asks for the Packages that InRelease lists
// by hash after both: generation n+2 must still serve generation n's indexes
// by hash, or apt fails the update with "File has unexpected size ...
// Mirror sync in progress?". Once byHashGrace has passed since a generation
// stopped being live, its indexes are no longer carried.
func TestByHashServesClientsThroughSeveralWrites(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	dir := t.TempDir()
	root := filepath.Join(dir, "repo")
	now, jump := jumpingClock()
	r := Open(root, Options{Settings: testSettings("amd64"), Signer: testSigner(t), Now: now, Logger: slog.New(slog.DiscardHandler)})
	ctx := context.Background()
	_, err := r.Publish(ctx, "s", "main", []Package{pkgOf(t, testDeb(t, dir, "aa", "1", "amd64", "1"))})
	must(t, err)
	a := newAptClient(t, root, "s", "main")
	a.update()
	a.install("aa", "1", "1")
	// The client fetches InRelease of generation 1; two writes happen before it fetches Packages.
	var once sync.Once
	files := http.FileServer(http.Dir(root))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if !strings.HasSuffix(req.URL.Path, "Release") {
			once.Do(func() {
				_, err := r.Publish(ctx, "s", "main", []Package{pkgOf(t, testDeb(t, dir, "aa", "2", "amd64", "2"))})
				must(t, err)
				_, err = r.Publish(ctx, "s", "main", []Package{pkgOf(t, testDeb(t, dir, "bb", "1", "amd64", "b"))})
				must(t, err)
			})
		}
		files.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	a.serveFrom(srv.URL)
	a.update() // generation 1's Packages, by hash from generation 3
	a.install("aa", "1", "1")
	a.update() // generation 3
	a.install("aa", "2", "2")

	gen1, err := r.readGeneration("s", 1)
	must(t, err)
	servedByHash := func(g *generation) int {
		n := 0
		for _, e := range g.release.files {
			if _, err := os.Stat(filepath.Join(root, "dists/s", path.Dir(e.path), "by-hash", e.algorithm, e.hex)); err == nil {
				n++
			}
		}
		return n
	}
	if n := servedByHash(gen1); n == 0 {
		t.Fatalf("generation 3 serves none of generation 1's indexes by hash")
	}
	// Within the grace, a refresh keeps them; after it, the next one drops them.
	jump(byHashGrace / 2)
	_, err = r.Refresh(ctx, []string{"s"})
	must(t, err)
	if n := servedByHash(gen1); n == 0 {
		t.Fatalf("a refresh %s after generation 1 stopped being live dropped its indexes from by-hash", byHashGrace/2)
	}
	jump(byHashGrace)
	_, err = r.Refresh(ctx, []string{"s"})
	must(t, err)
	// Generation 1's Packages of aa=1 alone is listed by no later generation.
	p, ok := gen1.release.file("SHA256", "main/binary-amd64/Packages")
	if !ok {
		t.Fatal("generation 1 lists no main/binary-amd64/Packages")
	}
	if _, err := os.Stat(filepath.Join(root, "dists/s/main/binary-amd64/by-hash/SHA256", p.hex)); err == nil {
		t.Errorf("generation 1's Packages is still served by hash %s after it stopped being live", byHashGrace*3/2)
	}
}

// Pool file names leave the epoch out (as Debian's): 1.0 and 1:1.0 of a
// package are one pool file. One publish of both must be refused before
// anything changes; it used to list both, with one Filename and two SHA256s,
// and apt failed to install the second with a hash mismatch.
func TestVersionsDifferingInEpochOnlyRefusedInOnePublish(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	dir := t.TempDir()
	root := filepath.Join(dir, "repo")
	r := testRepo(t, root)
	plain, epoch := testDeb(t, dir, "ep", "1.0", "amd64", "plain"), testDeb(t, dir, "ep", "1:1.0", "amd64", "epoch")
	_, err := r.Publish(context.Background(), "s", "main", []Package{pkgOf(t, plain), pkgOf(t, epoch)})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "pool/main/e/ep/ep_1.0_amd64.deb") || !strings.Contains(err.Error(), "epoch") {
		t.Fatalf("publishing 1.0 and 1:1.0 at once: %v", err)
	}
	for _, p := range []string{"dists/s", "pool/main/e/ep/ep_1.0_amd64.deb"} {
		if _, err := os.Lstat(filepath.Join(root, p)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s exists after the refused publish (%v)", p, err)
		}
	}
	// One at a time: the second is refused as other bytes for that pool
	// file, saying which version the pool file holds (1.0), not that 1:1.0
	// is published.
	_, err = r.Publish(context.Background(), "s", "main", []Package{pkgOf(t, plain)})
	must(t, err)
	_, err = r.Publish(context.Background(), "s", "main", []Package{pkgOf(t, epoch)})
	var conflict *ConflictError
	if !errors.As(err, &conflict) {
		t.Fatalf("publishing 1:1.0 after 1.0: %v", err)
	}
	msg := err.Error()
	if conflict.Held != "ep=1.0 (amd64)" || strings.Contains(msg, "ep=1:1.0 (amd64) is already published") ||
		!strings.Contains(msg, "ep=1:1.0 (amd64) would be the pool file pool/main/e/ep/ep_1.0_amd64.deb, which holds ep=1.0 (amd64)") ||
		!strings.Contains(msg, "epoch") {
		t.Errorf("publishing 1:1.0 after 1.0: %v (holder %q)", err, conflict.Held)
	}
}

// Versions spelled otherwise that dpkg and apt compare equal (1, 01, 1-0,
// 0:1; 1.0-1 and 1.00-1) are one version: apt lists one and installs one
// build of it (apt-get install oo=01 says the version was not found). A
// second build under another spelling is refused, in the component, in the
// same publish, in another component of the suite, or in another suite (the
// pool, which every suite shares, holds the first build).
func TestVersionsSpelledOtherwiseRefused(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	_, root, r := repoWithOne(t, "main")
	ctx := context.Background()
	before := snapshot(t, root)
	refused := func(what string, err error, same string) {
		t.Helper()
		wantSameConflict(t, what, err, same, "is the same version as "+same)
	}
	for _, v := range []string{"01", "1-0", "0:1"} {
		other := pkgOf(t, testDeb(t, t.TempDir(), "oo", v, "amd64", "other"))
		for _, comp := range []string{"main", "extra"} {
			_, err := r.Publish(ctx, "s", comp, []Package{other})
			refused("publishing "+v+" into "+comp+" after 1", err, "oo=1 (amd64)")
		}
	}
	_, err := r.Publish(ctx, "s", "main", []Package{pkgOf(t, testDeb(t, t.TempDir(), "oo", "2.0-1", "amd64", "x")),
		pkgOf(t, testDeb(t, t.TempDir(), "oo", "2.00-1", "amd64", "y"))})
	wantSameConflict(t, "publishing 2.0-1 and 2.00-1 at once", err, "oo=2.0-1 (amd64)", "dpkg and apt compare the two versions equal")
	if after := snapshot(t, root); !reflect.DeepEqual(before, after) {
		t.Fatalf("a refused publish changed the repository")
	}
	// Nor does another suite take it: the pool holds 1 for s.
	_, err = r.Publish(ctx, "t", "main", []Package{pkgOf(t, testDeb(t, t.TempDir(), "oo", "01", "amd64", "other"))})
	wantPooledConflict(t, "publishing 01 into another suite than 1's", err, "pool/main/o/oo/oo_1_amd64.deb")
}

// wantPooledConflict checks that err is a *ConflictError with the pool file
// rel, which another suite lists.
func wantPooledConflict(t *testing.T, what string, err error, rel string) {
	t.Helper()
	var ce *ConflictError
	if !errors.As(err, &ce) || !ce.Pooled || ce.Filename != rel {
		t.Errorf("%s: %v; want a conflict with the pool file %s", what, err, rel)
	}
}

// wantSameConflict checks that err is a *ConflictError with the published
// package same, whose message says says.
func wantSameConflict(t *testing.T, what string, err error, same, says string) {
	t.Helper()
	var ce *ConflictError
	if !errors.As(err, &ce) || ce.Same != same || !strings.Contains(err.Error(), says) {
		t.Errorf("%s: %v; want a conflict with %s", what, err, same)
	}
}

// apt puts an Architecture: all package among each architecture's: with
// xx=1.0 (all) and xx=1.0 (amd64) both listed, apt-cache policy shows 1.0
// twice and apt-get install --reinstall xx swaps the installed amd64 build
// for the all one. A build of a version for all and one for an
// architecture are refused in the suite, like other bytes for a version;
// builds for two architectures are not.
func TestSameVersionForAllAndAnArchitectureRefused(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	_, root, r := repoWithOne(t, "main") // oo=1 (amd64)
	ctx := context.Background()
	before := snapshot(t, root)
	all := pkgOf(t, testDeb(t, t.TempDir(), "oo", "1", "all", "all"))
	two := []Package{pkgOf(t, testDeb(t, t.TempDir(), "oo", "2", "arm64", "x")), pkgOf(t, testDeb(t, t.TempDir(), "oo", "2", "all", "y"))}
	for _, tc := range []struct {
		what, comp string
		pkgs       []Package
		same       string
	}{
		{"oo=1 (all) beside oo=1 (amd64)", "main", []Package{all}, "oo=1 (amd64)"},
		{"oo=1 (all) into another component", "extra", []Package{all}, "oo=1 (amd64)"},
		{"oo=2 for arm64 and all at once", "main", two, "oo=2 (arm64)"},
	} {
		says := "is one version with " + tc.same
		if len(tc.pkgs) > 1 {
			says = "apt lists an Architecture: all package among each architecture's"
		}
		_, err := r.Publish(ctx, "s", tc.comp, tc.pkgs)
		wantSameConflict(t, "publishing "+tc.what, err, tc.same, says)
	}
	if !reflect.DeepEqual(before, snapshot(t, root)) {
		t.Fatalf("a refused publish changed the repository")
	}
	_, err := r.Publish(ctx, "s", "main", []Package{pkgOf(t, testDeb(t, t.TempDir(), "oo", "1", "arm64", "arm"))})
	must(t, err)
	_, err = r.Publish(ctx, "t", "main", []Package{all})
	wantPooledConflict(t, "publishing oo=1 (all) into another suite than oo=1 (amd64)'s", err, "pool/main/o/oo/oo_1_amd64.deb")
}

// A pool file replaced by a symlink to a file outside the repository (by
// hand, or by whoever else writes there) is refused, not followed: a suite
// publishing that version would list bytes someone else may change. gc,
// which records a collected file's digest, refuses it too.
func TestPoolFileLinkedOutsideRefused(t *testing.T) {
	dir, root := testDirs(t)
	ctx := context.Background()
	r, jump := jumpingKeepRepo(t, root, 1)
	deb := testDeb(t, dir, "app", "1.0-1", "amd64", "app")
	_, err := r.Publish(ctx, "s", "main", []Package{pkgOf(t, deb)})
	must(t, err)
	pool := filepath.Join(root, "pool/main/a/app/app_1.0-1_amd64.deb")
	outside := filepath.Join(dir, "outside.deb")
	data, err := os.ReadFile(pool)
	must(t, err)
	must(t, os.WriteFile(outside, data, 0o644)) // the same bytes, for now
	must(t, os.Remove(pool))
	must(t, os.Symlink(outside, pool))
	before := snapshot(t, root)
	_, err = r.Publish(ctx, "t", "main", []Package{pkgOf(t, deb)})
	if !errors.Is(err, confined.ErrRefused) || !strings.Contains(err.Error(), "app_1.0-1_amd64.deb") {
		t.Fatalf("publishing into a pool file that links outside: %v, want a refusal naming it", err)
	}
	if after := snapshot(t, root); !reflect.DeepEqual(before, after) {
		t.Error("the refused publish changed the repository")
	}
	_, err = r.Remove(ctx, "s", "main", "app", "1.0-1", "")
	must(t, err)
	jump(byHashGrace)
	_, err = r.Refresh(ctx, []string{"s"})
	must(t, err)
	if _, err := r.GC(ctx, false); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "app_1.0-1_amd64.deb is a symlink") {
		t.Fatalf("gc of a pool file that links outside: %v, want a refusal naming the link", err)
	}
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("the file outside the repository: %v", err)
	}
}

// TestByHashKeptHostile: a generation's updeb-by-hash-kept is read back by
// the next write, so a damaged or planted one (traversal, absolute paths,
// other folders, short or non-hex digests, unknown algorithms, bad times,
// a line cut short, no newline at the end, a huge line) yields only its
// valid lines, never an error and never a path outside the generation.
func TestByHashKeptHostile(t *testing.T) {
	hex64 := strings.Repeat("ab", 32)
	good := "main/binary-amd64/by-hash/SHA256/" + hex64
	lines := []string{
		"2026-01-01T00:00:00Z " + good,
		"2026-01-01T00:00:00Z ../../../etc/by-hash/SHA256/" + hex64,
		"2026-01-01T00:00:00Z /etc/by-hash/SHA256/" + hex64,
		"2026-01-01T00:00:00Z main/binary-amd64/../by-hash/SHA256/" + hex64,
		"2026-01-01T00:00:00Z main/binary-amd64/not-by-hash/SHA256/" + hex64,
		"2026-01-01T00:00:00Z main/binary-amd64/by-hash/MD5Sum/" + hex64,
		"2026-01-01T00:00:00Z main/binary-amd64/by-hash/SHA256/abcd",
		"2026-01-01T00:00:00Z main/binary-amd64/by-hash/SHA256/" + strings.Repeat("zz", 32),
		"2026-01-01T00:00:00Z main/binary-amd64/by-hash/SHA256/" + strings.ToUpper(hex64),
		"yesterday main/binary-amd64/by-hash/SHA512/" + strings.Repeat("cd", 64),
		"2026-01-01T00:00:00Z",
		"",
		strings.Repeat("x", 1<<20),
		"2026-01-02T00:00:00Z main/binary-arm64/by-hash/SHA512/" + strings.Repeat("ef", 64), // no newline after it
	}
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, byHashKeptFile), []byte(strings.Join(lines, "\n")), 0o644))
	got := readByHashKept(dir)
	want := map[string]bool{good: true, "main/binary-arm64/by-hash/SHA512/" + strings.Repeat("ef", 64): true}
	if len(got) != len(want) {
		t.Errorf("read %d entries, want %d: %v", len(got), len(want), got)
	}
	for rel := range got {
		if !want[rel] {
			t.Errorf("took %q", rel)
		}
	}
	if len(readByHashKept(filepath.Join(dir, "missing"))) != 0 {
		t.Error("a generation without the file has entries")
	}
}

// TestHistoryNotAFileRefused: a suite's history (.updeb/history/SUITE.jsonl)
// is appended to where it is: a symlink there (to a 0600 file out of the
// repository) is never chmodded or appended to through, and a FIFO or
// folder there never blocks; the publish is refused naming the file and
// what it is, and the repository is unchanged.
func TestHistoryNotAFileRefused(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	for _, tc := range []struct {
		kind  string
		plant func(t *testing.T, p string) error
	}{
		{"a symlink", func(t *testing.T, p string) error { return os.Symlink(filepath.Join(t.TempDir(), "secret"), p) }},
		{"a FIFO", func(t *testing.T, p string) error { return syscall.Mkfifo(p, 0o644) }},
		{"a folder", func(t *testing.T, p string) error { return os.Mkdir(p, 0o755) }},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			dir, root, r := repoWithOne(t, "main")
			history := filepath.Join(root, ".updeb/history/s.jsonl")
			must(t, os.Remove(history))
			must(t, tc.plant(t, history))
			secret, _ := os.Readlink(history)
			if secret != "" {
				must(t, os.WriteFile(secret, []byte("secret\n"), 0o600))
			}
			before := snapshot(t, root)
			// Reading it (repo history) refuses it too: through a link it
			// read another file and quoted its first bytes.
			if _, err := r.History("s"); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), history+" is "+tc.kind) {
				t.Errorf("the history of s with %s as its file: %v, want ErrInvalid naming it", tc.kind, err)
			}
			_, err := r.Publish(context.Background(), "s", "main", []Package{pkgOf(t, testDeb(t, dir, "xx", "1", "amd64", "x"))})
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), history+" is "+tc.kind) {
				t.Fatalf("publishing with %s as the history: %v, want ErrInvalid naming it", tc.kind, err)
			}
			if after := snapshot(t, root); !reflect.DeepEqual(before, after) {
				t.Error("the refused publish changed the repository")
			}
			if secret != "" {
				b, err := os.ReadFile(secret)
				if fi, serr := os.Stat(secret); err != nil || serr != nil || string(b) != "secret\n" || fi.Mode().Perm() != 0o600 {
					t.Errorf("the file the history links to: %q, %v, %v; want it as it was, 0600", b, err, serr)
				}
			}
		})
	}
}

// PublishSuites checks every suite's packages before it writes any: two
// builds of one pool file given for two suites are refused, and so is the
// whole publish when one suite refuses its package; the same bytes for two
// suites are one pool file both list.
func TestPublishSuitesAllOrNothing(t *testing.T) {
	dir, root := testDirs(t)
	ctx := context.Background()
	r := testRepo(t, root)
	first := testDeb(t, filepath.Join(dir, "a"), "app", "1.0-1", "amd64", "first build")
	other := testDeb(t, filepath.Join(dir, "b"), "app", "1.0-1", "amd64", "another build")
	tool := testDeb(t, dir, "tool", "1", "amd64", "tool")
	_, err := r.Publish(ctx, "two", "main", []Package{pkgOf(t, first)})
	must(t, err)
	before := snapshot(t, root)
	_, err = r.PublishSuites(ctx, map[string]map[string][]Package{"one": {"main": {pkgOf(t, tool)}}, "two": {"main": {pkgOf(t, other)}}})
	var ce *ConflictError
	if !errors.As(err, &ce) || ce.Path != other {
		t.Fatalf("other bytes for suite two: %v", err)
	}
	build := func(sub, version, payload string) Package {
		return pkgOf(t, testDeb(t, filepath.Join(dir, sub), "new", version, "amd64", payload))
	}
	_, err = r.PublishSuites(ctx, map[string]map[string][]Package{"one": {"main": {build("d", "1.0-1", "one")}}, "three": {"main": {build("e", "1.0-1", "three")}}})
	if !errors.As(err, &ce) || ce.Given == "" || !strings.Contains(err.Error(), "two builds of one version given to one publish") {
		t.Fatalf("two builds of one version for two suites: %v", err)
	}
	_, err = r.PublishSuites(ctx, map[string]map[string][]Package{"one": {"main": {build("f", "1.0-1", "one")}}, "three": {"main": {build("g", "1:1.0-1", "epoch")}}})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "would both be the pool file pool/main/n/new/new_1.0-1_amd64.deb") {
		t.Fatalf("two versions of one pool file for two suites: %v", err)
	}
	if after := snapshot(t, root); !reflect.DeepEqual(before, after) {
		t.Fatal("a refused publish changed the repository")
	}
	res, err := r.PublishSuites(ctx, map[string]map[string][]Package{"one": {"main": {pkgOf(t, first)}}, "three": {"main": {pkgOf(t, first)}}, "two": {"main": {pkgOf(t, first)}}})
	must(t, err)
	if len(res["one"].Added) != 1 || len(res["three"].Added) != 1 || len(res["two"].Unchanged) != 1 || res["two"].Generation != 1 {
		t.Fatalf("the same bytes for three suites: %+v %+v %+v", res["one"], res["two"], res["three"])
	}
	// A write that fails after the first suite went live (here: suite
	// zed's folder of generations is a file) returns what was published.
	r.opts.Hook = func(step string) {
		if step == "switched" {
			must(t, os.WriteFile(filepath.Join(root, "dists/.gen/zed"), nil, 0o644))
		}
	}
	res, err = r.PublishSuites(ctx, map[string]map[string][]Package{"zed": {"main": {pkgOf(t, tool)}}, "one": {"main": {pkgOf(t, tool)}}})
	if err == nil || len(res) != 1 || res["one"] == nil || len(res["one"].Added) != 1 {
		t.Fatalf("a publish that failed for suite zed after suite one: %+v, %v", res, err)
	}
}

// A package whose file changes between the caller's reading (its control
// paragraph, and the SHA256 of the bytes it was read from) and the copy into
// the pool is refused, and the repository is unchanged: the index would
// list one package's control paragraph with another's bytes.
func TestPublishRefusesAFileChangedSinceRead(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	dir := t.TempDir()
	root := filepath.Join(dir, "repo")
	r := testRepo(t, root)
	ctx := context.Background()
	_, err := r.Publish(ctx, "stable", "main", []Package{pkgOf(t, testDeb(t, dir, "base", "1.0-1", "amd64", "base"))})
	must(t, err)
	before := snapshot(t, root)

	read := testDeb(t, dir, "tool", "1.0-1", "amd64", "read")
	p := pkgOf(t, read)
	data, err := os.ReadFile(read)
	must(t, err)
	sum := sha256.Sum256(data)
	p.SHA256 = hex.EncodeToString(sum[:])
	// Another build of another package takes the file's place.
	must(t, os.Rename(testDeb(t, t.TempDir(), "evil", "9.9-1", "amd64", "swapped"), read))
	_, err = r.Publish(ctx, "stable", "main", []Package{p})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "changed while it was published") {
		t.Fatalf("publish of a file swapped after it was read: %v, want ErrInvalid saying it changed", err)
	}
	if after := snapshot(t, root); !maps.Equal(before, after) {
		t.Errorf("a refused publish changed the repository")
	}
	// Read again, it publishes as what it is now.
	p = pkgOf(t, read)
	data, err = os.ReadFile(read)
	must(t, err)
	sum = sha256.Sum256(data)
	p.SHA256 = hex.EncodeToString(sum[:])
	res, err := r.Publish(ctx, "stable", "main", []Package{p})
	must(t, err)
	if len(res.Added) != 1 || res.Added[0].Package != "evil" {
		t.Errorf("publish after reading again: %+v", res.Added)
	}
}
