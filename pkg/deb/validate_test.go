package deb

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/updeb/updeb/pkg/archive"
	"github.com/updeb/updeb/pkg/control"
)

// hugeID is the first id past uid_t: a variable, so that the file compiles
// where int has 32 bits (no int is past uid_t there, and this test is run on
// 64-bit machines).
var hugeID int64 = 1 << 32

// Every validation error: the message names the field and the value, wraps
// ErrInvalid, and nothing is left in the output directory.
func TestValidation(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(p *Package)
		want   string
	}{
		{"uppercase package", func(p *Package) { p.Control.Package = "Helm" }, `control field Package: "Helm" is not a package name`},
		{"one-letter package", func(p *Package) { p.Control.Package = "h" }, `control field Package: "h" is not a package name`},
		{"package with underscore", func(p *Package) { p.Control.Package = "kube_ctl" }, `control field Package: "kube_ctl"`},
		{"empty version", func(p *Package) { p.Control.Version = "" }, `control field Version: "" is not a Debian version: empty`},
		{"version with v", func(p *Package) { p.Control.Version = "v1.2" }, `control field Version: "v1.2" is not a Debian version: upstream version "v1.2" must start with a digit`},
		{"version with space", func(p *Package) { p.Control.Version = "1.2 3" }, `control field Version: "1.2 3" is not a Debian version: contains ' '`},
		{"version bad epoch", func(p *Package) { p.Control.Version = "a:1.2" }, `epoch "a" is not a number`},
		{"version colon without epoch", func(p *Package) { p.Control.Version = "1.2:3" }, `epoch "1.2" is not a number`},
		{"version empty revision", func(p *Package) { p.Control.Version = "1.2-" }, `empty revision after '-'`},
		{"version bad revision", func(p *Package) { p.Control.Version = "1.2-1_a" }, `revision "1_a" contains '_'`},
		{"architecture any", func(p *Package) { p.Control.Architecture = "any" }, `control field Architecture: "any" is not a Debian architecture`},
		{"architecture upper", func(p *Package) { p.Control.Architecture = "AMD64" }, `control field Architecture: "AMD64"`},
		{"no maintainer", func(p *Package) { p.Control.Maintainer = "" }, `control field Maintainer: required, found ""`},
		{"newline in maintainer", func(p *Package) { p.Control.Maintainer = "a\nb" }, `control field Maintainer: value "a\nb" must be a single line`},
		{"no summary", func(p *Package) { p.Control.Summary = " " }, `control field Description: required, found " "`},
		{"newline in summary", func(p *Package) { p.Control.Summary = "a\nb" }, `control field Description (Summary): value "a\nb" must be a single line`},
		{"newline in section", func(p *Package) { p.Control.Section = "admin\nx" }, `control field Section: value "admin\nx"`},
		{"newline in homepage", func(p *Package) { p.Control.Homepage = "https://x/\n" }, `control field Homepage: value "https://x/\n"`},
		{"bad multi-arch", func(p *Package) { p.Control.MultiArch = "any" }, `control field Multi-Arch: "any": expected same, foreign, allowed or no`},
		{"newline in relation", func(p *Package) { p.Control.Depends = []string{"libc6\nEvil: yes"} }, `control field Depends: value "libc6\nEvil: yes"`},
		{"empty relation", func(p *Package) { p.Control.Breaks = []string{""} }, `control field Breaks: empty relation in [""]`},
		{"CR in description", func(p *Package) { p.Control.Description = "a\r\nb" }, `control field Description: extended description "a\r\nb" contains a carriage return`},
		{"extra sets own field", func(p *Package) { p.Control.Extra = []control.Field{{Name: "Version", Value: "2"}} }, `control field Version in Extra: set by Control or computed by the writer, found "2"`},
		{"extra installed-size", func(p *Package) { p.Control.Extra = []control.Field{{Name: "installed-size", Value: "2"}} }, `control field installed-size in Extra`},
		{"extra bad name", func(p *Package) { p.Control.Extra = []control.Field{{Name: "Bad Name", Value: "2"}} }, `control field "Bad Name" in Extra`},
		{"extra duplicate", func(p *Package) {
			p.Control.Extra = []control.Field{{Name: "Built-Using", Value: "a (= 1)"}, {Name: "built-using", Value: "b (= 1)"}}
		}, `control field built-using in Extra: duplicate, found again with "b (= 1)"`},
		{"extra empty", func(p *Package) { p.Control.Extra = []control.Field{{Name: "Source", Value: ""}} }, `control field Source in Extra: empty value`},
		{"relative path", func(p *Package) { p.Entries[0].Path = "usr/bin/x" }, `entry "usr/bin/x": expected an absolute, clean path`},
		{"dotdot path", func(p *Package) { p.Entries[0].Path = "/usr/../etc/x" }, `entry "/usr/../etc/x": expected an absolute, clean path`},
		{"trailing slash", func(p *Package) { p.Entries[0].Path = "/usr/bin/" }, `entry "/usr/bin/": expected an absolute, clean path`},
		{"root path", func(p *Package) { p.Entries[0].Path = "/" }, `entry "/": expected an absolute, clean path`},
		{"newline in path", func(p *Package) { p.Entries[0].Path = "/usr/bin/a\nb" }, `entry "/usr/bin/a\nb": contains a newline or NUL, which dpkg refuses in a file name`},
		{"huge path with newline", func(p *Package) { p.Entries[0].Path = "/usr/" + strings.Repeat("x", 10000) + "\n" }, `...(10006 bytes)": contains a newline or NUL`},
		{"huge unclean path", func(p *Package) { p.Entries[0].Path = "/usr/" + strings.Repeat("x/", 5000) }, `...(10005 bytes)": expected an absolute, clean path`},
		{"NUL in path", func(p *Package) { p.Entries[0].Path = "/usr/bin/a\x00b" }, `entry "/usr/bin/a\x00b": contains a newline or NUL, which dpkg refuses`},
		{"name too long for dpkg", func(p *Package) { p.Entries[0].Path = "/usr/bin/" + strings.Repeat("n", MaxName+1) }, `has a name of 247 bytes: dpkg unpacks it as NAME.dpkg-new, which must fit in a file name (255 bytes), so at most 246`},
		{"dir name too long for dpkg", func(p *Package) { p.Entries[2].Path = "/usr/share/doc/" + strings.Repeat("d", 255) }, `has a name of 255 bytes`},
		{"path too long for dpkg", func(p *Package) {
			p.Entries[0].Path = strings.Repeat("/"+strings.Repeat("p", 99), 40) + "/" + strings.Repeat("f", MaxPath-4000)
		}, `is 4087 bytes long: dpkg unpacks it as PATH.dpkg-new, which must fit in a Linux path (4095 bytes), so at most 4086`},
		{"dot component", func(p *Package) { p.Entries[0].Path = "/usr/./bin/x" }, `entry "/usr/./bin/x": expected an absolute, clean path`},
		{"double slash", func(p *Package) { p.Entries[0].Path = "/usr//bin/x" }, `entry "/usr//bin/x": expected an absolute, clean path`},
		{"conffile trailing space", func(p *Package) {
			p.Entries[1].Path = "/etc/sample/sample.conf "
			p.Conffiles = []string{"/etc/sample/sample.conf "}
		}, `conffile "/etc/sample/sample.conf ": a carriage return or trailing white space, which dpkg's record of conffiles loses`},
		{"conffile too long for its .dpkg-dist", func(p *Package) {
			p.Entries[1].Path = "/etc/sample/" + strings.Repeat("c", MaxName)
			p.Conffiles = []string{p.Entries[1].Path}
		}, `has a name of 246 bytes: dpkg keeps the package's version of a changed conffile as NAME.dpkg-dist, which must fit in a file name (255 bytes), so at most 245`},
		{"conffile line too long for dpkg -i", func(p *Package) {
			p.Entries[1].Path = strings.Repeat("/"+strings.Repeat("e", 199), 4) + "/" + strings.Repeat("c", MaxConffileLine-800)
			p.Conffiles = []string{p.Entries[1].Path}
		}, `is 997 bytes long: dpkg -i reads a line of DEBIAN/conffiles into 997 bytes, its newline included, and refuses a longer one ("conffile name ... is too long"), so at most 996`},
		{"dpkg's backup name", func(p *Package) { p.Entries = append(p.Entries, fileEntry("/usr/bin/sample.dpkg-tmp", 0, "")) }, `entry "/usr/bin/sample.dpkg-tmp": dpkg deletes PATH.dpkg-tmp, and all inside it, for each PATH of a package it unpacked (its backup of what PATH replaced), and the package has "/usr/bin/sample": rename it`},
		{"dpkg's backup name of a folder", func(p *Package) { p.Entries = append(p.Entries, fileEntry("/usr/lib.dpkg-tmp/x", 0, "")) }, `entry "/usr/lib.dpkg-tmp": dpkg deletes PATH.dpkg-tmp`},
		{"conffile CR", func(p *Package) {
			p.Entries[1].Path = "/etc/sample/a\rb"
			p.Conffiles = []string{"/etc/sample/a\rb"}
		}, `conffile "/etc/sample/a\rb": a carriage return`},
		{"duplicate path", func(p *Package) { p.Entries[1].Path = p.Entries[0].Path }, `entry "/usr/bin/sample": duplicate path`},
		{"file with children", func(p *Package) { p.Entries = append(p.Entries, fileEntry("/usr/bin/sample/x", 0, "")) }, `entry "/usr/bin/sample/x": parent "/usr/bin/sample" is a file, not a directory`},
		{"file over implicit dir", func(p *Package) { p.Entries = append(p.Entries, fileEntry("/usr/lib/sample", 0, "")) }, `entry "/usr/lib/sample": is a file, but other entries are inside it`},
		{"type bit in mode", func(p *Package) { p.Entries[2].Mode |= fs.ModeDir }, `entry "/usr/share/doc/updeb-sample": mode drwx------ has bits other than the permission bits, setuid, setgid and sticky`},
		{"device bit in mode", func(p *Package) { p.Entries[0].Mode |= fs.ModeDevice }, `entry "/usr/bin/sample": mode Drwx------ has bits other than`},
		{"chmod setuid bit in mode", func(p *Package) { p.Entries[0].Mode = 0o4755 }, `entry "/usr/bin/sample": mode -rwxr-xr-x has bits other than the permission bits, setuid, setgid and sticky (04000: a type bit from os.Stat, or chmod's 04000`},
		{"symlink mode", func(p *Package) { p.Entries[4].Mode = 0o755 }, `entry "/usr/bin/sample-link": a symlink has mode 0777, found -rwxr-xr-x`},
		{"setuid symlink", func(p *Package) { p.Entries[4].Mode = 0o777 | fs.ModeSetuid }, `entry "/usr/bin/sample-link": a symlink has mode 0777`},
		{"hardlink mode", func(p *Package) { p.Entries[5].Mode = 0o600 }, `entry "/usr/lib/sample/a-b": a hardlink has its target's mode and owner`},
		{"hardlink owner", func(p *Package) { p.Entries[5].Owner.Group, p.Entries[5].Owner.GID = "staff", 50 }, `entry "/usr/lib/sample/a-b": a hardlink has its target's mode and owner`},
		{"uid without name", func(p *Package) { p.Entries[0].Owner.UID = 7 }, `entry "/usr/bin/sample": user id 7 without a name`},
		{"gid without name", func(p *Package) { p.Entries[0].Owner.GID = 42 }, `entry "/usr/bin/sample": group id 42 without a name`},
		{"negative uid", func(p *Package) { p.Entries[0].Owner = Owner{User: "x", UID: -1} }, `entry "/usr/bin/sample": user id -1 is out of range`},
		{"huge gid", func(p *Package) { p.Entries[0].Owner = Owner{Group: "x", GID: int(hugeID)} }, `entry "/usr/bin/sample": group id 4294967296 is out of range`},
		{"user name with colon", func(p *Package) { p.Entries[0].Owner.User = "a:b" }, `entry "/usr/bin/sample": user name "a:b" is not a user or group name`},
		{"user name too long", func(p *Package) { p.Entries[0].Owner.User = strings.Repeat("u", 32) }, `user name "uuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuu" is not`},
		{"group name with space", func(p *Package) { p.Entries[0].Owner.Group = "a b" }, `group name "a b" is not`},
		{"numeric user name", func(p *Package) { p.Entries[0].Owner.User = "42" }, `user name "42" is not`},
		{"negative size", func(p *Package) { p.Entries[0].Size = -1 }, `entry "/usr/bin/sample": negative size -1`},
		{"no open", func(p *Package) { p.Entries[0].Open = nil }, `entry "/usr/bin/sample": regular file without an Open function`},
		{"open and open sized", func(p *Package) { p.Entries[0].OpenSized = sized("x", 1) }, `entry "/usr/bin/sample": OpenSized set together with Open or Size 22 (it replaces both)`},
		{"empty symlink", func(p *Package) { p.Entries[4].Linkname = "" }, `entry "/usr/bin/sample-link": symlink target "" must be non-empty`},
		{"symlink target too long", func(p *Package) { p.Entries[4].Linkname = strings.Repeat("t/", 2048) }, `entry "/usr/bin/sample-link": symlink target "t/t/t/`},
		{"symlink target too long says why", func(p *Package) { p.Entries[4].Linkname = strings.Repeat("t/", 2048) }, `is 4096 bytes long: Linux takes at most 4095 (dpkg's symlink fails with "File name too long")`},
		{"linkname on file", func(p *Package) { p.Entries[0].Linkname = "x" }, `entry "/usr/bin/sample": a file with Linkname "x"`},
		{"hardlink to missing", func(p *Package) { p.Entries[5].Linkname = "/nope" }, `entry "/usr/lib/sample/a-b": hardlink target "/nope" must be a regular file entry, found missing`},
		{"hardlink to dir", func(p *Package) { p.Entries[5].Linkname = "/var/lib/sample" }, `hardlink target "/var/lib/sample" must be a regular file entry, found a dir`},
		{"unknown type", func(p *Package) { p.Entries[0].Type = 9 }, `entry "/usr/bin/sample": unknown type 9`},
		{"conffile missing", func(p *Package) { p.Conffiles = []string{"/etc/other.conf"} }, `conffile "/etc/other.conf": not in the package's data`},
		{"conffile is dir", func(p *Package) { p.Conffiles = []string{"/var/lib/sample"} }, `conffile "/var/lib/sample": is a dir in the package's data, expected a regular file`},
		{"conffile relative", func(p *Package) { p.Conffiles = []string{"etc/sample/sample.conf"} }, `conffile "etc/sample/sample.conf": expected an absolute, clean path`},
		{"conffile twice", func(p *Package) { p.Conffiles = append(p.Conffiles, p.Conffiles[0]) }, `conffile "/etc/sample/sample.conf": listed twice`},
		{"bad script name", func(p *Package) { p.Scripts[0].Name = "postinstall" }, `script "postinstall": expected one of preinst, postinst, prerm, postrm, config`},
		{"script twice", func(p *Package) { p.Scripts[1].Name = "postinst" }, `script "postinst": given twice`},
		{"script world-writable", func(p *Package) { p.Scripts[0].Mode = 0o777 }, `script postinst: mode 0777: expected >= 0555 and <= 0775`},
		{"script not executable", func(p *Package) { p.Scripts[0].Mode = 0o644 }, `script postinst: mode 0644: expected >= 0555 and <= 0775`},
		{"script setuid", func(p *Package) { p.Scripts[0].Mode = 0o755 | fs.ModeSetuid }, `script postinst: mode`},
		{"script chmod setuid", func(p *Package) { p.Scripts[0].Mode = 0o4755 }, `script postinst: mode 04755: expected >= 0555 and <= 0775`},
		{"unknown trigger directive", func(p *Package) { p.Triggers = "interest /usr/lib/x\nactivate-later x" }, `triggers line 2: "activate-later x": unknown directive "activate-later"`},
		{"trigger without name", func(p *Package) { p.Triggers = "interest" }, `triggers line 1: "interest": expected DIRECTIVE NAME`},
		{"trigger with two names", func(p *Package) { p.Triggers = "activate a b" }, `triggers line 1: "activate a b": expected DIRECTIVE NAME`},
		{"interest dpkg cannot classify", func(p *Package) { p.Triggers = "interest-noawait /usr/lib/x\ninterest-noawait x_y" }, `triggers line 2: "interest-noawait x_y": dpkg refuses an interest in "x_y"`},
		{"trigger non-ASCII", func(p *Package) { p.Triggers = "activate-noawait ünï" }, `trigger name "ünï": printable ASCII only`},
		{"file trigger not clean", func(p *Package) { p.Triggers = "interest /usr/lib//x/" }, `file trigger "/usr/lib//x/" is not a clean absolute path (write "/usr/lib/x")`},
		{"trigger line too long", func(p *Package) { p.Triggers = "interest /usr/lib/" + strings.Repeat("x", 300) }, "triggers line 1: 318 bytes, more than the 254 dpkg reads in a line"},
		{"NUL in triggers", func(p *Package) { p.Triggers = "interest x\x00" }, `triggers "interest x\x00": contains a carriage return or NUL`},
		{"no epoch", func(p *Package) { p.SourceDateEpoch = time.Time{} }, `SourceDateEpoch 0001-01-01 00:00:00 +0000 UTC: required`},
		{"epoch zero", func(p *Package) { p.SourceDateEpoch = time.Unix(0, 0) }, `SourceDateEpoch 1970-01-01`},
		{"compression", func(p *Package) { p.Compression = "bzip2" }, `compression "bzip2": expected one of xz, gzip, zstd, none`},
		{"xz mode", func(p *Package) { p.XZMode = "fastest" }, `xz mode "fastest": expected fast or best`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := samplePackage()
			tt.mutate(p)
			dir := t.TempDir()
			_, err := Write(context.Background(), filepath.Join(dir, "out.deb"), p)
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v, want ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error:\n%v\nwant it to contain:\n%s", err, tt.want)
			}
			if left := dirEntries(t, dir); len(left) != 0 {
				t.Errorf("files left behind: %v", left)
			}
		})
	}
}

// Content that does not match Size is found while streaming: the error names
// the entry, and neither the output nor a temporary file is left.
func TestContentSizeMismatch(t *testing.T) {
	for _, tt := range []struct {
		name    string
		size    int64
		content string
		want    string
	}{
		{"short", 10, "abc", `entry "/usr/bin/sample": Size is 10 but its content has 3 bytes`},
		{"long", 2, "abc", `entry "/usr/bin/sample": Size is 2 but its content has more bytes`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := samplePackage()
			p.Entries[0].Size, p.Entries[0].Open = tt.size, content(tt.content)
			dir := t.TempDir()
			_, err := Write(context.Background(), filepath.Join(dir, "out.deb"), p)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
			if left := dirEntries(t, dir); len(left) != 0 {
				t.Errorf("files left behind: %v", left)
			}
		})
	}
	t.Run("open fails", func(t *testing.T) {
		p := samplePackage()
		p.Entries[0].Open = func() (io.ReadCloser, error) { return nil, fs.ErrPermission }
		dir := t.TempDir()
		_, err := Write(context.Background(), filepath.Join(dir, "out.deb"), p)
		if !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), `entry "/usr/bin/sample": open`) {
			t.Fatalf("error %v", err)
		}
		if left := dirEntries(t, dir); len(left) != 0 {
			t.Errorf("files left behind: %v", left)
		}
	})
}

// checkHardlinkPair writes p and checks that the data.tar entry carrier
// (a tar name, "./usr/...") holds the data, size bytes, and link is a
// hardlink to it, both listed in md5sums with its digest. It returns the
// carrier, the package's Info and Write's Result.
func checkHardlinkPair(t *testing.T, p *Package, carrier, link string, size int64) (FileInfo, *Info, *Result) {
	t.Helper()
	path, res := writeTemp(t, p)
	info, err := InspectFile(context.Background(), path, archive.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var data, hard FileInfo
	for _, f := range info.Files {
		switch f.Path {
		case carrier:
			data = f
		case link:
			hard = f
		}
	}
	if data.Type != "file" || data.Size != size || hard.Type != "hardlink" || hard.Linkname != carrier {
		t.Errorf("data %+v\nlink %+v", data, hard)
	}
	if info.MD5Sums[link[2:]] != data.MD5 || info.MD5Sums[carrier[2:]] != data.MD5 {
		t.Errorf("md5sums %v, data md5 %s", info.MD5Sums, data.MD5)
	}
	return data, info, res
}

// Hardlinks: whichever of the group sorts first carries the data (as GNU tar
// does), and Installed-Size counts the data once.
func TestHardlinkCarrierAndInstalledSize(t *testing.T) {
	_, info, res := checkHardlinkPair(t, samplePackage(), "./usr/lib/sample/a/data", "./usr/lib/sample/a-b", 3000)
	if _, ok := info.MD5Sums["etc/sample/sample.conf"]; ok {
		t.Error("md5sums lists a conffile (dh_md5sums leaves them out)")
	}
	// 14 directories, 1 symlink, files 1+1+3+0+1 KiB, the hardlink 0.
	if res.InstalledSize != 21 || info.Control.Value("Installed-Size") != "21" {
		t.Errorf("Installed-Size %d / %q, want 21", res.InstalledSize, info.Control.Value("Installed-Size"))
	}
	if len(res.Files) != 6 {
		t.Errorf("Result.Files has %d files, want 6: %+v", len(res.Files), res.Files)
	}
}

// A hardlink that sorts before its target carries the data, whether the
// target's content comes from Open or OpenSized; the target becomes the
// hardlink. (Write dereferenced the target's Open after making it a
// hardlink, and panicked.)
func TestHardlinkBeforeItsTarget(t *testing.T) {
	for _, sizedOpen := range []bool{false, true} {
		p := samplePackage()
		target := fileEntry("/usr/lib/x/zz", 0o640, strings.Repeat("z", 3000))
		if sizedOpen {
			target.Size, target.Open, target.OpenSized = 0, nil, sized(strings.Repeat("z", 3000), 3000)
		}
		p.Entries = append(p.Entries, target, Entry{Path: "/usr/lib/x/aa", Type: TypeHardlink, Linkname: "/usr/lib/x/zz"})
		data, _, res := checkHardlinkPair(t, p, "./usr/lib/x/aa", "./usr/lib/x/zz", 3000)
		if data.Mode != 0o640 {
			t.Errorf("OpenSized %v: the carrier has mode %v, want the target's 0640", sizedOpen, data.Mode)
		}
		if res.InstalledSize != 21+3+1 { // the sample, 3 KiB once, /usr/lib/x
			t.Errorf("OpenSized %v: Installed-Size %d, want 25", sizedOpen, res.InstalledSize)
		}
	}
}

func sized(s string, size int64) func() (io.ReadCloser, int64, error) {
	return func() (io.ReadCloser, int64, error) { return io.NopCloser(strings.NewReader(s)), size, nil }
}

// Entries whose size is learnt on opening (OpenSized) give the same bytes as
// Size and Open, hardlinked ones too; a wrong or negative size is refused.
func TestOpenSized(t *testing.T) {
	want, wantRes := writeTemp(t, samplePackage())
	p := samplePackage()
	opened := 0
	for i := range p.Entries {
		e := &p.Entries[i]
		if e.Type != TypeFile {
			continue
		}
		open, size := e.Open, e.Size
		e.Open, e.Size = nil, 0
		e.OpenSized = func() (io.ReadCloser, int64, error) {
			opened++
			rc, err := open()
			return rc, size, err
		}
	}
	got, gotRes := writeTemp(t, p)
	if !bytes.Equal(mustRead(t, got), mustRead(t, want)) {
		t.Fatal("OpenSized entries give other bytes than Size and Open")
	}
	if opened != 5 || gotRes.InstalledSize != wantRes.InstalledSize || fmt.Sprint(gotRes.Files) != fmt.Sprint(wantRes.Files) {
		t.Errorf("opened %d times (want 5), result %+v, want %+v", opened, gotRes, wantRes)
	}
	for _, tt := range []struct {
		name string
		size int64
		want string
	}{
		{"short", 10, `entry "/usr/bin/sample": Size is 10 but its content has 3 bytes`},
		{"long", 2, `entry "/usr/bin/sample": Size is 2 but its content has more bytes`},
		{"negative", -1, `entry "/usr/bin/sample": OpenSized returned a negative size -1`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := samplePackage()
			p.Entries[0].Open, p.Entries[0].Size, p.Entries[0].OpenSized = nil, 0, sized("abc", tt.size)
			dir := t.TempDir()
			_, err := Write(context.Background(), filepath.Join(dir, "out.deb"), p)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
			if left := dirEntries(t, dir); len(left) != 0 {
				t.Errorf("files left behind: %v", left)
			}
		})
	}
}

// What Write refuses through the reader's checks: relationship syntax,
// control characters, a control file too large for apt.
func TestValidationSharedWithInspect(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*Package)
		want   string
	}{
		{"unterminated relation", func(p *Package) { p.Control.Depends = []string{"libc6 (>= 2.36"} }, `control field Depends: "libc6 (>= 2.36"`},
		{"arch list in relation", func(p *Package) { p.Control.Depends = []string{"libc6 [amd64]"} }, "control field Depends"},
		{"alternatives in Conflicts", func(p *Package) { p.Control.Conflicts = []string{"a | b"} }, "alternatives (|) are not allowed"},
		{"control character", func(p *Package) { p.Control.Summary = "bell\x07" }, "control character"},
		{"too large", func(p *Package) { p.Control.Description = strings.Repeat("long line of text\n", 20000) }, "more than the 262144"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := samplePackage()
			tc.mutate(p)
			_, err := Write(context.Background(), filepath.Join(t.TempDir(), "x.deb"), p)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want ErrInvalid containing %q", err, tc.want)
			}
		})
	}
}
