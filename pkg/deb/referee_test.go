package deb

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/testkit/testenv"
	"github.com/updeb/updeb/pkg/archive"
)

// Every compression: dpkg-deb reads what Write wrote, and sees the entries in
// the order, with the owners, modes and mtimes, the writer promises.
func TestDpkgDebAccepts(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	for _, c := range []Compression{CompressionXZ, CompressionGzip, CompressionZstd, CompressionNone} {
		t.Run(string(c), func(t *testing.T) {
			p := samplePackage()
			p.Compression = c
			path, res := writeTemp(t, p)
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if st.Size() != res.Size {
				t.Errorf("Result.Size %d, file has %d bytes", res.Size, st.Size())
			}
			info := testenv.Run(t, "dpkg-deb", "--info", path)
			for _, want := range []string{"Package: updeb-sample", "Installed-Size: 21", " postinst", " triggers", " .\n  Second paragraph:\n    verbatim line\n"} {
				if !strings.Contains(string(info), want) {
					t.Errorf("dpkg-deb --info lacks %q:\n%s", want, info)
				}
			}
			contents := string(testenv.Run(t, "dpkg-deb", "--contents", path))
			wantOrder := []string{"./", "./etc/", "./etc/sample/", "./etc/sample/sample.conf", "./usr/", "./usr/bin/",
				"./usr/bin/sample", "./usr/lib/", "./usr/lib/sample/", "./usr/lib/sample/a/", "./usr/lib/sample/a/data",
				"./usr/lib/sample/a-b", "./usr/lib/sample/a.b", "./usr/share/", "./usr/share/doc/",
				"./usr/share/doc/updeb-sample/", "./usr/share/doc/updeb-sample/copyright", "./var/", "./var/lib/",
				"./var/lib/sample/", "./usr/bin/sample-link"}
			var got []string
			for _, l := range strings.Split(strings.TrimSpace(contents), "\n") {
				f := strings.Fields(l)
				if f[1] != "root/root" || f[3] != "2024-08-14" || f[4] != "12:00" {
					t.Errorf("owner or mtime: %s", l)
				}
				got = append(got, f[5])
			}
			if strings.Join(got, " ") != strings.Join(wantOrder, " ") {
				t.Errorf("entry order:\n got %v\nwant %v", got, wantOrder)
			}
			for _, want := range []string{"-rwx------ root/root        22 2024-08-14 12:00 ./usr/bin/sample\n",
				"-rw------- root/root        12 2024-08-14 12:00 ./etc/sample/sample.conf\n",
				"drwx------ root/root         0 2024-08-14 12:00 ./usr/share/doc/updeb-sample/\n",
				"hrw-r--r-- root/root         0 2024-08-14 12:00 ./usr/lib/sample/a-b link to ./usr/lib/sample/a/data\n",
				"lrwxrwxrwx root/root         0 2024-08-14 12:00 ./usr/bin/sample-link -> sample\n"} {
				if !strings.Contains(contents, want) {
					t.Errorf("dpkg-deb --contents lacks %q:\n%s", want, contents)
				}
			}
			tr := tar.NewReader(bytes.NewReader(testenv.Run(t, "dpkg-deb", "--fsys-tarfile", path)))
			n := 0
			for {
				h, err := tr.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				n++
				if h.Format != tar.FormatGNU && h.Format != tar.FormatUnknown|tar.FormatGNU {
					t.Errorf("%s: tar format %v, want GNU", h.Name, h.Format)
				}
			}
			if n != len(wantOrder) {
				t.Errorf("--fsys-tarfile has %d entries, want %d", n, len(wantOrder))
			}
			ctl := string(testenv.Run(t, "dpkg-deb", "--field", path, "Installed-Size"))
			if strings.TrimSpace(ctl) != "21" {
				t.Errorf("Installed-Size %q", ctl)
			}
		})
	}
}

// dpkg installs the package into a throwaway root, runs its scripts, and
// removes it again, keeping the conffile as dpkg does.
func TestDpkgInstallRemove(t *testing.T) {
	testenv.RequireTool(t, "dpkg")
	p := samplePackage()
	p.Control.Depends = nil
	p.Scripts[0].Content = []byte("#!/bin/sh\nset -e\necho installed > \"$DPKG_ROOT/var/lib/sample/marker\"\n")
	path, _ := writeTemp(t, p)
	root, base := dpkgRoot(t)
	dpkg := dpkgRunner(t, base)
	dpkg("-i", path)
	if b := mustRead(t, filepath.Join(root, "usr/bin/sample")); string(b) != "#!/bin/sh\necho sample\n" {
		t.Errorf("installed /usr/bin/sample: %q", b)
	}
	if b := mustRead(t, filepath.Join(root, "var/lib/sample/marker")); string(b) != "installed\n" {
		t.Errorf("postinst did not run: %q", b)
	}
	if st, err := os.Lstat(filepath.Join(root, "usr/bin/sample-link")); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("symlink: %v %v", st, err)
	}
	if out := dpkg("-s", "updeb-sample"); !strings.Contains(out, "Status: install ok installed") {
		t.Errorf("dpkg -s:\n%s", out)
	}
	dpkg("-r", "updeb-sample")
	if _, err := os.Stat(filepath.Join(root, "usr/bin/sample")); !os.IsNotExist(err) {
		t.Errorf("/usr/bin/sample still there after dpkg -r: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "etc/sample/sample.conf")); err != nil {
		t.Errorf("conffile must stay after dpkg -r (not purge): %v", err)
	}
}

// dpkgRunner returns a function that runs dpkg with opts (dpkgRoot's)
// and the given arguments, returns its output and fails the test if dpkg
// fails.
func dpkgRunner(t *testing.T, opts []string) func(args ...string) string {
	return func(args ...string) string {
		t.Helper()
		cmd := exec.Command("dpkg", append(opts, args...)...)
		cmd.Env = append(os.Environ(), "PATH=/usr/sbin:/usr/bin:/sbin:/bin")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("dpkg %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
}

// dpkgRoot makes a throwaway root with an empty dpkg database and returns
// it with the dpkg options that install into it.
func dpkgRoot(t *testing.T) (root string, opts []string) {
	root = testenv.DpkgRoot(t)
	return root, []string{"--root=" + root, "--admindir=" + filepath.Join(root, "var/lib/dpkg"), "--force-script-chrootless", "--force-not-root",
		"--force-unsafe-io", "--log=/dev/null", "--no-triggers"}
}

// dpkg unpacks an entry as NAME.dpkg-new: a name of MaxName bytes (file,
// directory, symlink or hardlink) installs, one byte more fails in dpkg
// ("File name too long") even where dpkg-deb --build takes it, and Write
// refuses it before writing anything.
func TestDpkgNameLimit(t *testing.T) {
	testenv.RequireTool(t, "dpkg", "dpkg-deb")
	entries := func(n int) []Entry {
		name := strings.Repeat("n", n)
		return []Entry{
			fileEntry("/usr/share/f/"+name, 0, "x"),
			{Path: "/usr/share/d/" + name, Type: TypeDir},
			{Path: "/usr/share/l/" + name, Type: TypeSymlink, Linkname: "x"},
			{Path: "/usr/share/h/" + name, Type: TypeHardlink, Linkname: "/usr/share/f/" + name},
		}
	}
	install := func(deb string) (string, error) {
		_, base := dpkgRoot(t)
		cmd := exec.Command("dpkg", append(base, "--unpack", deb)...)
		cmd.Env = append(os.Environ(), "PATH=/usr/sbin:/usr/bin:/sbin:/bin")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	p := samplePackage()
	p.Control.Depends, p.Scripts, p.Conffiles, p.Triggers, p.Entries = nil, nil, nil, "", entries(MaxName)
	// The longest symlink target Write takes installs too.
	p.Entries = append(p.Entries, Entry{Path: "/usr/share/t", Type: TypeSymlink, Linkname: strings.Repeat("t/", maxSymlinkTarget/2) + "t"})
	path, _ := writeTemp(t, p)
	if out, err := install(path); err != nil {
		t.Fatalf("dpkg --unpack of names of %d bytes and a target of %d: %v\n%s", MaxName, maxSymlinkTarget, err, out)
	}

	// The same tree one byte longer, built by dpkg-deb: dpkg cannot unpack it.
	dir := t.TempDir()
	long := strings.Repeat("n", MaxName+1)
	for _, d := range []string{"DEBIAN", "usr/share/f", "usr/share/d/" + long, "usr/share/l"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(dir, "DEBIAN/control"), "Package: long\nVersion: 1\nArchitecture: all\nMaintainer: t <t@example.org>\nDescription: t\n")
	writeFile(t, filepath.Join(dir, "usr/share/f", long), "x")
	if err := os.Symlink("x", filepath.Join(dir, "usr/share/l", long)); err != nil {
		t.Fatal(err)
	}
	ref := filepath.Join(t.TempDir(), "long.deb")
	testenv.Run(t, "dpkg-deb", "--root-owner-group", "--build", dir, ref)
	if out, err := install(ref); err == nil || !strings.Contains(out, "File name too long") {
		t.Fatalf("dpkg --unpack of a name of %d bytes: %v\n%s, want File name too long", MaxName+1, err, out)
	}

	out := t.TempDir()
	p.Entries = entries(MaxName + 1)
	_, err := Write(context.Background(), filepath.Join(out, "long.deb"), p)
	if !errors.Is(err, ErrInvalid) || strings.Count(err.Error(), "has a name of 247 bytes: dpkg unpacks it as NAME.dpkg-new") != 4 {
		t.Errorf("Write of names of %d bytes: %v, want ErrInvalid naming each of the 4 entries", MaxName+1, err)
	}
	if left := dirEntries(t, out); len(left) != 0 {
		t.Errorf("files left behind: %v", left)
	}
}

// A changed conffile makes dpkg keep the package's new version beside it
// as NAME.dpkg-dist, one byte longer than NAME.dpkg-new: a conffile name
// of 245 bytes upgrades over a local change; one of 246 (which dpkg-deb
// --build takes) leaves NAME.dpkg-new behind with "File name too long",
// and Write refuses it.
func TestDpkgConffileNameLimit(t *testing.T) {
	testenv.RequireTool(t, "dpkg", "dpkg-deb")
	root, base := dpkgRoot(t)
	dpkg := dpkgRunner(t, base)
	upgrade := func(name string, build func(version string) string) string {
		dpkg("-i", build("1"))
		if err := os.WriteFile(filepath.Join(root, name), []byte("changed here\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return dpkg("--force-confold", "-i", build("2"))
	}

	conf := "/etc/t/" + strings.Repeat("c", MaxName-1)
	ours := func(version string) string {
		p := samplePackage()
		p.Control.Version, p.Control.Depends, p.Scripts, p.Triggers = version, nil, nil, ""
		p.Entries, p.Conffiles = []Entry{fileEntry(conf, 0, "version "+version+"\n")}, []string{conf}
		path, _ := writeTemp(t, p)
		return path
	}
	if out := upgrade(conf, ours); strings.Contains(out, "too long") {
		t.Errorf("upgrade over a changed conffile of %d bytes:\n%s", len(path.Base(conf)), out)
	}
	if b := mustRead(t, filepath.Join(root, conf+".dpkg-dist")); string(b) != "version 2\n" {
		t.Errorf("%s.dpkg-dist holds %q", conf, b)
	}

	long := "/etc/t/" + strings.Repeat("d", MaxName)
	ref := func(version string) string {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "DEBIAN/control"), "Package: long\nVersion: "+version+"\nArchitecture: all\nMaintainer: t <t@example.org>\nDescription: t\n")
		writeFile(t, filepath.Join(dir, "DEBIAN/conffiles"), long+"\n")
		writeFile(t, filepath.Join(dir, long), "version "+version+"\n")
		deb := filepath.Join(t.TempDir(), "long.deb")
		testenv.Run(t, "dpkg-deb", "--root-owner-group", "--build", dir, deb)
		return deb
	}
	if out := upgrade(long, ref); !strings.Contains(out, "File name too long") {
		t.Errorf("dpkg-deb's package with a conffile of %d bytes upgraded over a change without \"File name too long\":\n%s", MaxName, out)
	}

	p := samplePackage()
	p.Entries, p.Conffiles = []Entry{fileEntry(long, 0, "x")}, []string{long}
	if _, err := Write(context.Background(), filepath.Join(t.TempDir(), "long.deb"), p); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "NAME.dpkg-dist") {
		t.Errorf("Write of a conffile of %d bytes: %v, want ErrInvalid naming NAME.dpkg-dist", MaxName, err)
	}
}

// dpkg drops the white space C's isspace knows, form feed and vertical tab
// too, from the end of a conffiles line: a conffile so named was recorded
// as another path ("/etc/t/x newconffile"), the file itself no conffile (an
// upgrade replaces a local change without a word), and Inspect refused
// what Write wrote. Write refuses it; a name ending in U+00A0, no C space,
// installs as named.
func TestDpkgConffileTrailingSpace(t *testing.T) {
	testenv.RequireTool(t, "dpkg")
	for _, name := range []string{"/etc/t/x\f", "/etc/t/x\v", "/etc/t/x\u00a0"} {
		p := samplePackage()
		p.Control.Depends, p.Scripts, p.Triggers = nil, nil, ""
		p.Entries, p.Conffiles = []Entry{fileEntry(name, 0, "x\n")}, []string{name}
		path := filepath.Join(t.TempDir(), "x.deb")
		if _, err := Write(context.Background(), path, p); err != nil {
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "a carriage return or trailing white space, which dpkg's record of conffiles loses") {
				t.Errorf("Write of conffile %q: %v", name, err)
			}
			continue
		}
		if _, err := InspectFile(context.Background(), path, archive.Limits{}); err != nil {
			t.Errorf("Write of conffile %q wrote what Inspect refuses: %v", name, err)
		}
		root, base := dpkgRoot(t)
		dpkgRunner(t, base)("-i", path)
		if status := mustRead(t, filepath.Join(root, "var/lib/dpkg/status")); !bytes.Contains(status, []byte("\nConffiles:\n "+name+" ")) {
			t.Errorf("conffile %q: dpkg records:\n%q", name, status)
		}
	}
}

// Once it has unpacked a package, dpkg deletes PATH.dpkg-tmp (its backup of
// what PATH replaced), a whole folder too, for each PATH of the package:
// a package built by dpkg-deb with such names loses those files on
// install. Write refuses them, and PATH.dpkg-new beside PATH, which
// Inspect refuses.
func TestDpkgBackupNames(t *testing.T) {
	testenv.RequireTool(t, "dpkg", "dpkg-deb")
	dir := t.TempDir()
	files := []string{"usr/share/t/b", "usr/share/t/b.dpkg-tmp", "usr/share/t/x/f", "usr/share/t/x.dpkg-tmp/g"}
	for _, f := range files {
		writeFile(t, filepath.Join(dir, f), f+"\n")
	}
	writeFile(t, filepath.Join(dir, "DEBIAN/control"), "Package: tmp\nVersion: 1\nArchitecture: all\nMaintainer: t <t@example.org>\nDescription: t\n")
	ref := filepath.Join(t.TempDir(), "tmp.deb")
	testenv.Run(t, "dpkg-deb", "--root-owner-group", "--build", dir, ref)
	root, base := dpkgRoot(t)
	dpkgRunner(t, base)("-i", ref)
	for _, f := range files {
		_, err := os.Lstat(filepath.Join(root, f))
		if gone := strings.Contains(f, ".dpkg-tmp"); gone != os.IsNotExist(err) {
			t.Errorf("%s after dpkg -i: %v (want it gone: %v)", f, err, gone)
		}
	}

	p := samplePackage()
	p.Entries = nil
	for _, f := range append(files, "usr/share/t/n", "usr/share/t/n.dpkg-new") {
		p.Entries = append(p.Entries, fileEntry("/"+f, 0, f))
	}
	p.Conffiles = nil
	out := t.TempDir()
	_, err := Write(context.Background(), filepath.Join(out, "tmp.deb"), p)
	for _, want := range []string{`entry "/usr/share/t/b.dpkg-tmp": dpkg deletes`, `entry "/usr/share/t/x.dpkg-tmp": dpkg deletes`,
		`entry "/usr/share/t/n.dpkg-new": the package has "/usr/share/t/n" too: dpkg unpacks PATH as PATH.dpkg-new, and from a data.tar that holds PATH.dpkg-new first PATH gets its content and PATH.dpkg-new is gone, so Inspect, and updeb publish with it, refuses a package with both: rename it`} {
		if !errors.Is(err, ErrInvalid) || !strings.Contains(fmt.Sprint(err), want) {
			t.Errorf("Write: %v, want ErrInvalid with %q", err, want)
		}
	}
	if left := dirEntries(t, out); len(left) != 0 {
		t.Errorf("files left behind: %v", left)
	}
}
