package deb

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/testkit/testenv"
)

// modeCase is one entry of TestModesOwnersNames: what a recipe may ask for,
// as real Debian packages have it (sudo's 0440 sudoers.d and setuid sudo,
// passwd's setgid shadow tools, a setgid staff folder, a sticky one, a 0700
// state folder), under names dpkg takes (systemd's \x2d, spaces, UTF-8,
// bytes that are not UTF-8, a tab and a carriage return).
type modeCase struct {
	path  string
	typ   EntryType
	mode  fs.FileMode
	owner Owner
	link  string // symlink or hardlink target
}

var modeCases = []modeCase{
	{path: "/etc/sudoers.d", typ: TypeDir, mode: 0o750},
	{path: "/etc/sudoers.d/README", typ: TypeFile, mode: 0o440},
	{path: "/usr/bin/sudo", typ: TypeFile, mode: 0o755 | fs.ModeSetuid},
	{path: "/usr/bin/chage", typ: TypeFile, mode: 0o755 | fs.ModeSetgid, owner: Owner{Group: "shadow", GID: 42}},
	{path: "/usr/bin/expiry", typ: TypeHardlink, link: "/usr/bin/chage"},
	{path: "/usr/bin/aa-chage", typ: TypeHardlink, link: "/usr/bin/chage"}, // before its target: it carries the data
	{path: "/etc/app/token", typ: TypeFile, mode: 0o640, owner: Owner{Group: "shadow", GID: 42}},
	{path: "/etc/app/secret", typ: TypeFile, mode: 0o600},
	{path: "/var/lib/app", typ: TypeDir, mode: 0o700},
	{path: "/var/local", typ: TypeDir, mode: 0o775 | fs.ModeSetgid, owner: Owner{Group: "staff", GID: 50}},
	{path: "/var/tmp/drop", typ: TypeDir, mode: 0o777 | fs.ModeSticky},
	{path: "/usr/games/app", typ: TypeFile, mode: 0o750, owner: Owner{Group: "games", GID: 60}},
	{path: "/var/spool/lpd/queue", typ: TypeFile, mode: 0o644, owner: Owner{User: "lp", UID: 7, Group: "lp", GID: 7}},
	{path: "/var/mail/box", typ: TypeFile, mode: 0o660 | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky, owner: Owner{User: "mail", UID: 8, Group: "mail", GID: 8}},
	{path: `/lib/systemd/system/system-systemd\x2dcryptsetup.slice`, typ: TypeFile, mode: 0o644},
	{path: "/usr/share/doc/app/read me.txt", typ: TypeFile, mode: 0o644},
	{path: "/usr/share/app/ünïcödé ☃", typ: TypeFile, mode: 0o644},
	{path: "/usr/share/app/latin1-\xe9\xff", typ: TypeFile, mode: 0o644},
	{path: "/usr/share/app/tab\tand\rcr", typ: TypeFile, mode: 0o644},
	{path: `/usr/share/app/link\x2d to ünï`, typ: TypeSymlink, link: "ünïcödé ☃"},
}

// TestModesOwnersNames: every mode, owner and special bit is written as
// given, and names dpkg takes are kept byte for byte. The same tree, made
// on disk with chmod and chown and built by dpkg-deb --build, has exactly
// the entries Write writes (names, types, modes, owners by name and id,
// sizes, digests, links); dpkg --unpack installs Write's package with them.
func TestModesOwnersNames(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb", "dpkg")
	dir := t.TempDir()
	tree := filepath.Join(dir, "tree")
	p := &Package{Control: Control{Package: "modes", Version: "1.0-1", Architecture: "all",
		Maintainer: "updeb tests <tests@updeb.invalid>", Summary: "modes and owners"}, SourceDateEpoch: testEpoch}
	// chown clears setuid and setgid: each group of paths gets its owner,
	// then its mode, in one script run as root (or under fakeroot).
	var script strings.Builder
	script.WriteString("cd \"$TREE\"\n")
	lists := 0
	for _, c := range modeCases {
		full := filepath.Join(tree, filepath.FromSlash(c.path[1:]))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		e := Entry{Path: c.path, Type: c.typ, Mode: c.mode, Owner: c.owner, Linkname: c.link}
		switch c.typ {
		case TypeDir:
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
		case TypeFile:
			body := "content of " + c.path + "\n"
			writeFile(t, full, body)
			e.Size, e.Open = int64(len(body)), content(body)
		case TypeSymlink:
			if err := os.Symlink(c.link, full); err != nil {
				t.Fatal(err)
			}
		case TypeHardlink:
			if err := os.Link(filepath.Join(tree, c.link[1:]), full); err != nil {
				t.Fatal(err)
			}
		}
		p.Entries = append(p.Entries, e)
		if c.typ == TypeSymlink || c.typ == TypeHardlink {
			continue
		}
		lists++
		list := filepath.Join(dir, fmt.Sprintf("list%d", lists))
		if err := os.WriteFile(list, []byte("./"+c.path[1:]+"\x00"), 0o644); err != nil {
			t.Fatal(err)
		}
		own := func(name string, id int) string {
			if name == "" {
				return "0"
			}
			return fmt.Sprint(id)
		}
		fmt.Fprintf(&script, "xargs -0 chown %s:%s < %s\nxargs -0 chmod %04o < %s\n",
			own(c.owner.User, c.owner.UID), own(c.owner.Group, c.owner.GID), list, tarMode(c.mode, 0), list)
	}
	ref := filepath.Join(dir, "ref.deb")
	writeFile(t, filepath.Join(tree, "DEBIAN/control"), "Package: modes\nVersion: 1.0-1\nArchitecture: all\nMaintainer: updeb tests <tests@updeb.invalid>\nInstalled-Size: 7\nDescription: modes and owners\n")
	script.WriteString("chown -R 0:0 DEBIAN\ndpkg-deb -Zxz --build \"$TREE\" \"$REF\" >/dev/null\n")
	testenv.AsRoot(t, script.String(), "TREE="+tree, "REF="+ref, "SOURCE_DATE_EPOCH=1723636800")

	ours := filepath.Join(dir, "ours.deb")
	if _, err := Write(context.Background(), ours, p); err != nil {
		t.Fatal(err)
	}
	got, want := inspectBoth(t, ours, ref)
	if !reflect.DeepEqual(got.Files, want.Files) {
		t.Errorf("entries differ from dpkg-deb's")
		for i := range max(len(got.Files), len(want.Files)) {
			var g, w FileInfo
			if i < len(got.Files) {
				g = got.Files[i]
			}
			if i < len(want.Files) {
				w = want.Files[i]
			}
			if g != w {
				t.Errorf("entry %d:\n got %+v\nwant %+v", i, g, w)
			}
		}
	}

	// dpkg-deb -c shows the bits and owners as ls -l would.
	listing := string(testenv.Run(t, "dpkg-deb", "-c", ours))
	for _, want := range []string{
		"-r--r----- root/root", "./etc/sudoers.d/README\n",
		"drwxr-x--- root/root         0 2024-08-14 12:00 ./etc/sudoers.d/\n",
		"-rwsr-xr-x root/root", "./usr/bin/sudo\n",
		"-rwxr-sr-x root/shadow      26 2024-08-14 12:00 ./usr/bin/aa-chage\n",
		"hrwxr-sr-x root/shadow       0 2024-08-14 12:00 ./usr/bin/chage link to ./usr/bin/aa-chage\n",
		"hrwxr-sr-x root/shadow       0 2024-08-14 12:00 ./usr/bin/expiry link to ./usr/bin/aa-chage\n",
		"-rw-r----- root/shadow", "-rw------- root/root",
		"drwx------ root/root         0 2024-08-14 12:00 ./var/lib/app/\n",
		"drwxrwsr-x root/staff        0 2024-08-14 12:00 ./var/local/\n",
		"drwxrwxrwt root/root         0 2024-08-14 12:00 ./var/tmp/drop/\n",
		"-rwxr-x--- root/games", "-rw-r--r-- lp/lp", "-rwSrwS--T mail/mail",
		`./lib/systemd/system/system-systemd\\x2dcryptsetup.slice`, "./usr/share/doc/app/read me.txt\n",
	} {
		if !strings.Contains(listing, want) {
			t.Errorf("dpkg-deb -c lacks %q:\n%s", want, listing)
		}
	}

	// dpkg --unpack installs every entry with its mode and owner.
	root := testenv.DpkgRoot(t)
	out := testenv.AsRoot(t, `dpkg --root="$ROOT" --admindir="$ROOT/var/lib/dpkg" --force-script-chrootless --force-not-root --log=/dev/null --unpack "$DEB" >/dev/null
cd "$ROOT" && find . -path ./var/lib/dpkg -prune -o -printf '%P\0%y %m %u %g %U %G %l\0'`, "ROOT="+root, "DEB="+ours)
	installed := map[string]string{}
	fields := bytes.Split(out, []byte{0})
	for i := 0; i+1 < len(fields); i += 2 {
		installed["/"+string(fields[i])] = string(fields[i+1])
	}
	for _, c := range modeCases {
		target := c
		if c.typ == TypeHardlink {
			for _, o := range modeCases {
				if o.path == c.link {
					target = o
				}
			}
		}
		name := func(n string, id int) (string, int) {
			if n == "" {
				return "root", 0
			}
			return n, id
		}
		u, uid := name(target.owner.User, target.owner.UID)
		g, gid := name(target.owner.Group, target.owner.GID)
		kind, mode := "f", fmt.Sprintf("%o", tarMode(target.mode, 0))
		switch c.typ {
		case TypeDir:
			kind = "d"
		case TypeSymlink:
			kind, mode = "l", "777"
		}
		want := fmt.Sprintf("%s %s %s %s %d %d %s", kind, mode, u, g, uid, gid, c.link)
		if c.typ != TypeSymlink {
			want = strings.TrimSuffix(want, " "+c.link)
		}
		if got := strings.TrimSuffix(installed[c.path], " "); got != strings.TrimSuffix(want, " ") {
			t.Errorf("installed %q: %q, want %q", c.path, got, want)
		}
	}
	var paths []string
	for p := range installed {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	if len(installed) < len(modeCases) {
		t.Errorf("dpkg installed %d paths: %q", len(installed), paths)
	}
}
