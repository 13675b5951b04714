package deb

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/updeb/updeb/pkg/ctxio"
)

// item is an entry as it goes into data.tar: normalised, with implicit parents
// added and hardlinks resolved.
type item struct {
	path string // "/" for the root, else absolute
	typ  EntryType
	mode int64 // the tar member's mode: permission bits and 04000, 02000, 01000
	own  Owner // names filled in ("root" for an empty one)
	size int64 // learnt when the content is opened if openSized is set
	open func() (io.ReadCloser, error)
	// openSized is Entry.OpenSized: the size comes with the content.
	openSized func() (io.ReadCloser, int64, error)
	linkname  string // symlink target; for a hardlink, the absolute path of the file carrying the data
	noSHA256  bool
	mtime     time.Time
	children  []*item
	// group links a regular file and the hardlinks to it.
	group *[]*item
}

// tarName is the name dpkg-deb gives an entry: "./", "./usr/", "./usr/bin/x".
func (it *item) tarName() string {
	if it.path == "/" {
		return "./"
	}
	if it.typ == TypeDir {
		return "." + it.path + "/"
	}
	return "." + it.path
}

// plan validates entries and returns them in dpkg-deb's order (see
// tree.dpkgOrder), with implicit parents added and hardlink groups resolved,
// and every item by path. It reports every problem it finds.
func plan(p *Package) (ordered []*item, byPath map[string]*item, errs []error) {
	t := newTree(p.SourceDateEpoch)
	var hardlinks []*item
	for i := range p.Entries {
		e := &p.Entries[i]
		if err := checkPath("entry", e.Path); err != nil {
			errs = append(errs, err)
			continue
		}
		if t.explicit[e.Path] {
			errs = append(errs, invalidf("entry %q: duplicate path", e.Path))
			continue
		}
		t.explicit[e.Path] = true
		it, ierrs := t.item(e)
		errs = append(errs, ierrs...)
		if it == nil {
			continue
		}
		if it.typ == TypeHardlink {
			hardlinks = append(hardlinks, it)
		}
		if err := t.add(it); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, t.linkHardlinks(hardlinks)...)
	errs = append(errs, t.dpkgBackupNames()...)
	if len(errs) > 0 {
		return nil, nil, errs
	}
	ordered = t.dpkgOrder()
	shareHardlinkData(ordered)
	return ordered, t.byPath, nil
}

// tree is data.tar's entries as a directory tree, from "/".
type tree struct {
	root     *item
	byPath   map[string]*item
	explicit map[string]bool // paths given as entries (not implicit parents)
	sde      time.Time
}

func newTree(sde time.Time) *tree {
	root := &item{path: "/", typ: TypeDir, mode: 0o755, own: rootOwner, mtime: sde}
	return &tree{root: root, byPath: map[string]*item{"/": root}, explicit: map[string]bool{}, sde: sde}
}

// item turns one entry into what goes into data.tar (the mode as given,
// or the type's default; the mtime clamped to SourceDateEpoch, which also
// replaces one lintian calls ancient) and validates it. It returns a nil
// item for an entry that cannot be placed at all.
func (t *tree) item(e *Entry) (*item, []error) {
	mtime := e.ModTime
	if mtime.Before(AncientBefore) || mtime.After(t.sde) {
		mtime = t.sde
	}
	it := &item{path: e.Path, typ: e.Type, mtime: mtime, linkname: e.Linkname}
	var errs []error
	if other := e.Mode &^ (fs.ModePerm | specialBits); other != 0 {
		// fs.FileMode's String leaves a chmod-style 04000 out: the bits are shown in octal.
		errs = append(errs, invalidf("entry %q: mode %v has bits other than the permission bits, setuid, setgid and sticky (%#o: a type bit from os.Stat, or chmod's 04000, 02000, 01000, which are fs.ModeSetuid, fs.ModeSetgid, fs.ModeSticky here, as FileMode converts them): give those only", e.Path, e.Mode, uint32(other)))
	}
	own, oerrs := checkOwner(e.Path, e.Owner)
	it.own = own
	errs = append(errs, oerrs...)
	switch e.Type {
	case TypeFile:
		it.mode = tarMode(e.Mode, 0o644)
		it.size, it.open, it.openSized, it.noSHA256 = e.Size, e.Open, e.OpenSized, e.NoSHA256
		if e.Size < 0 {
			errs = append(errs, invalidf("entry %q: negative size %d", e.Path, e.Size))
		}
		switch {
		case e.Open == nil && e.OpenSized == nil:
			errs = append(errs, invalidf("entry %q: regular file without an Open function", e.Path))
		case e.OpenSized != nil && (e.Open != nil || e.Size != 0):
			errs = append(errs, invalidf("entry %q: OpenSized set together with Open or Size %d (it replaces both)", e.Path, e.Size))
		}
	case TypeDir:
		it.mode = tarMode(e.Mode, 0o755)
	case TypeSymlink:
		it.mode = 0o777
		if e.Mode != 0 && e.Mode != 0o777 {
			errs = append(errs, invalidf("entry %q: a symlink has mode 0777, found %v", e.Path, e.Mode))
		}
		if e.Linkname == "" || strings.ContainsAny(e.Linkname, "\n\x00") {
			errs = append(errs, invalidf("entry %q: symlink target %q must be non-empty, without newline or NUL", e.Path, e.Linkname))
		}
		if len(e.Linkname) > maxSymlinkTarget {
			errs = append(errs, invalidf("entry %q: symlink target %q is %d bytes long: Linux takes at most %d (dpkg's symlink fails with \"File name too long\")", e.Path, shorten(e.Linkname), len(e.Linkname), maxSymlinkTarget))
		}
	case TypeHardlink:
		if e.Mode != 0 || e.Owner != (Owner{}) {
			errs = append(errs, invalidf("entry %q: a hardlink has its target's mode and owner: leave Mode (%v) and Owner (%+v) zero", e.Path, e.Mode, e.Owner))
		}
	default:
		return nil, append(errs, invalidf("entry %q: unknown type %d", e.Path, e.Type))
	}
	if e.Type != TypeSymlink && e.Type != TypeHardlink && e.Linkname != "" {
		errs = append(errs, invalidf("entry %q: a %s with Linkname %q", e.Path, e.Type, e.Linkname))
	}
	return it, errs
}

// maxSymlinkTarget is the longest target symlink(2) takes: PATH_MAX (4096)
// less its NUL.
const maxSymlinkTarget = 4095

// specialBits are the mode bits beside the permission bits a data.tar
// member may carry.
const specialBits = fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky

// tarMode is m as a tar member's mode, or def when m is zero.
func tarMode(m fs.FileMode, def int64) int64 {
	if m == 0 {
		return def
	}
	return int64(UnixMode(m))
}

// UnixMode is m as chmod and a tar member write it: the permission bits
// and 04000 setuid, 02000 setgid, 01000 sticky (other bits are dropped).
func UnixMode(m fs.FileMode) uint32 {
	out := uint32(m.Perm())
	for _, b := range specialModes {
		if m&b.mode != 0 {
			out |= b.unix
		}
	}
	return out
}

// FileMode is the reverse of UnixMode: the low 12 bits of a Unix mode as
// an fs.FileMode.
func FileMode(unix uint32) fs.FileMode {
	out := fs.FileMode(unix) & fs.ModePerm
	for _, b := range specialModes {
		if unix&b.unix != 0 {
			out |= b.mode
		}
	}
	return out
}

var specialModes = []struct {
	mode fs.FileMode
	unix uint32
}{{fs.ModeSetuid, 0o4000}, {fs.ModeSetgid, 0o2000}, {fs.ModeSticky, 0o1000}}

// rootOwner is root:root, as data.tar carries it.
var rootOwner = Owner{User: "root", Group: "root"}

// maxOwnerID is the largest uid or gid: (uid_t)-1 means "no change" to chown.
const maxOwnerID = 1<<32 - 2

// checkOwner validates an owner and returns it with an empty name as
// "root" (which must then have id 0).
func checkOwner(p string, o Owner) (Owner, []error) {
	var errs []error
	check := func(what, name string, id int) string {
		if id < 0 || int64(id) > maxOwnerID {
			errs = append(errs, invalidf("entry %q: %s id %d is out of range (0 to %d)", p, what, id, int64(maxOwnerID)))
		}
		if name == "" {
			if id != 0 {
				errs = append(errs, invalidf("entry %q: %s id %d without a name: give the name too (dpkg installs by name; an empty one is root, id 0)", p, what, id))
			}
			return "root"
		}
		if err := CheckOwnerName(name); err != nil {
			errs = append(errs, invalidf("entry %q: %s %v", p, what, err))
		}
		return name
	}
	out := Owner{UID: o.UID, GID: o.GID}
	out.User = check("user", o.User, o.UID)
	out.Group = check("group", o.Group, o.GID)
	return out, errs
}

// CheckOwnerName accepts the user and group names of useradd's and
// adduser's rules (NAME_REGEX, with the upper case --allow-bad-names
// permits, as Debian-exim), short enough for a tar member's 32-byte field:
// at most 31 bytes of letters, digits, "_", "-", "." and a final "$", not
// starting with "-" or a digit.
func CheckOwnerName(s string) error {
	ok := s != "" && len(s) <= 31 && s[0] != '-' && (s[0] < '0' || s[0] > '9')
	for i := 0; ok && i < len(s); i++ {
		c := s[i]
		ok = isAlnum(c) || c == '_' || c == '-' || c == '.' || c == '$' && i == len(s)-1
	}
	if !ok {
		return fmt.Errorf("name %q is not a user or group name a tar member can carry (at most 31 bytes of letters, digits, _ - . and a final $, not starting with - or a digit)", s)
	}
	return nil
}

// add places it in the tree with every missing parent directory. A
// directory entry for a path already there as an implicit parent gives it
// its mode and mtime.
func (t *tree) add(it *item) error {
	if old, ok := t.byPath[it.path]; ok {
		// Only an implicit parent can be here already.
		if it.typ != TypeDir {
			return invalidf("entry %q: is a %s, but other entries are inside it", it.path, it.typ)
		}
		old.mode, old.own, old.mtime = it.mode, it.own, it.mtime
		return nil
	}
	child := it
	t.byPath[it.path] = it
	for dir := path.Dir(it.path); ; dir = path.Dir(dir) {
		parent, ok := t.byPath[dir]
		if ok {
			if parent.typ != TypeDir {
				return invalidf("entry %q: parent %q is a %s, not a directory", it.path, dir, parent.typ)
			}
			parent.children = append(parent.children, child)
			return nil
		}
		parent = &item{path: dir, typ: TypeDir, mode: 0o755, own: rootOwner, mtime: t.sde, children: []*item{child}}
		t.byPath[dir] = parent
		child = parent
	}
}

// dpkgBackupNames refuses a path PATH.dpkg-tmp (a file or a folder) where
// the package has PATH too: dpkg moves what PATH replaces aside under that
// name while it unpacks, and once the package is unpacked deletes it, and
// all inside it, for every path of the package: the entry would be gone.
// PATH.dpkg-new beside PATH it refuses as Inspect does (dpkgNames), so that
// what Write writes can be published.
func (t *tree) dpkgBackupNames() []error {
	var errs []error
	for _, p := range slices.Sorted(maps.Keys(t.byPath)) {
		if base, ok := strings.CutSuffix(p, ".dpkg-tmp"); ok && base != "/" && t.byPath[base] != nil {
			errs = append(errs, invalidf("entry %q: dpkg deletes PATH.dpkg-tmp, and all inside it, for each PATH of a package it unpacked (its backup of what PATH replaced), and the package has %q: rename it", p, base))
		}
		if base, ok := strings.CutSuffix(p, ".dpkg-new"); ok && base != "/" && t.byPath[base] != nil {
			errs = append(errs, invalidf("entry %q: the package has %q too: dpkg unpacks PATH as PATH.dpkg-new, and from a data.tar that holds PATH.dpkg-new first PATH gets its content and PATH.dpkg-new is gone, so Inspect, and updeb publish with it, refuses a package with both: rename it", p, base))
		}
	}
	return errs
}

// linkHardlinks joins each hardlink to the group of its target, which must
// be a regular file given as an entry.
func (t *tree) linkHardlinks(hardlinks []*item) []error {
	var errs []error
	for _, h := range hardlinks {
		target, ok := t.byPath[h.linkname]
		if !ok || target.typ != TypeFile || !t.explicit[h.linkname] {
			kind := "missing"
			if ok {
				kind = "a " + target.typ.String()
			}
			errs = append(errs, invalidf("entry %q: hardlink target %q must be a regular file entry, found %s", h.path, h.linkname, kind))
			continue
		}
		if target.group == nil {
			target.group = &[]*item{target}
		}
		*target.group = append(*target.group, h)
		h.group = target.group
	}
	return errs
}

// dpkgOrder returns the items in dpkg-deb's order: "./" first, then
// depth-first with each directory's children sorted by byte order, symlinks
// after all other entries (in the same walk order). Checked against dpkg-deb
// 1.21 on nested trees: a directory's whole subtree comes before a sibling
// whose name sorts after it ("./a/", "./a/z/f", "./a-b", "./a.b/").
func (t *tree) dpkgOrder() []*item {
	var ordered, symlinks []*item
	var walk func(*item)
	walk = func(it *item) {
		if it.typ == TypeSymlink {
			symlinks = append(symlinks, it)
		} else {
			ordered = append(ordered, it)
		}
		sort.Slice(it.children, func(i, j int) bool { return it.children[i].path < it.children[j].path })
		for _, c := range it.children {
			walk(c)
		}
	}
	walk(t.root)
	return append(ordered, symlinks...)
}

// shareHardlinkData does what GNU tar does: the first member of a hardlink
// group in output order carries the data, the others link to it.
func shareHardlinkData(ordered []*item) {
	done := map[*[]*item]bool{}
	for _, it := range ordered {
		if it.group == nil || done[it.group] {
			continue
		}
		done[it.group] = true
		// A copy: the loop below turns the file entry into a hardlink
		// when another member of the group comes first.
		var carrier item
		for _, m := range *it.group {
			if m.typ == TypeFile {
				carrier = *m
			}
		}
		for _, m := range *it.group {
			if m == it {
				m.typ, m.mode, m.own, m.size, m.open, m.openSized, m.linkname = TypeFile, carrier.mode, carrier.own, carrier.size, carrier.open, carrier.openSized, ""
				continue
			}
			m.typ, m.mode, m.own, m.size, m.open, m.openSized, m.linkname = TypeHardlink, carrier.mode, carrier.own, carrier.size, nil, nil, it.path
		}
	}
}

// installedSize is dpkg-gencontrol's; call it after writeData, which learns
// the sizes of OpenSized entries: each regular file rounded up to whole KiB
// (hardlinked data once), symlinks by the length of their target, +1 for each
// directory (the root too) or other object.
func installedSize(items []*item) int64 {
	var kib int64
	for _, it := range items {
		switch it.typ {
		case TypeFile:
			kib += (it.size + 1023) / 1024
		case TypeSymlink:
			kib += (int64(len(it.linkname)) + 1023) / 1024
		case TypeHardlink:
		default:
			kib++
		}
	}
	return kib
}

func tarHeader(it *item) *tar.Header {
	h := &tar.Header{
		Name: it.tarName(), Mode: it.mode, Uid: it.own.UID, Gid: it.own.GID, Uname: it.own.User, Gname: it.own.Group,
		ModTime: it.mtime, Format: tar.FormatGNU,
	}
	switch it.typ {
	case TypeFile:
		h.Typeflag, h.Size = tar.TypeReg, it.size
	case TypeDir:
		h.Typeflag = tar.TypeDir
	case TypeSymlink:
		h.Typeflag, h.Linkname = tar.TypeSymlink, it.linkname
	case TypeHardlink:
		h.Typeflag, h.Linkname = tar.TypeLink, "."+it.linkname
	}
	return h
}

// writeData writes data.tar (uncompressed) to w and returns the regular files
// with their digests, in output order.
func writeData(ctx context.Context, w io.Writer, items []*item) ([]FileResult, error) {
	tw := tar.NewWriter(w)
	nfiles, total := 0, int64(0)
	for _, it := range items {
		if it.typ == TypeFile {
			nfiles++
			if it.openSized != nil {
				total = -1 // learnt at open
			} else if total >= 0 {
				total += it.size
			}
		}
	}
	fh := newFileHasher(nfiles, total)
	hashed := false
	defer func() {
		if !hashed {
			fh.close()
		}
	}()
	var files []FileResult
	var hashOf []int           // each of files' number in fh: a hardlink's is its file's
	var sizes []int64          // by number in fh
	number := map[string]int{} // a regular file's number in fh, for its hardlinks
	for _, it := range items {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var rc io.ReadCloser
		if it.typ == TypeFile {
			// Opened before the header, which needs an OpenSized entry's size.
			var err error
			if rc, err = openContent(it); err != nil {
				return nil, err
			}
		}
		if err := tw.WriteHeader(tarHeader(it)); err != nil {
			if rc != nil {
				rc.Close()
			}
			return nil, fmt.Errorf("data.tar: %s: %w", it.tarName(), err)
		}
		switch it.typ {
		case TypeFile:
			n := len(sizes)
			if err := copyContent(ctx, fh, n, tw, it, rc); err != nil {
				return nil, err
			}
			number[it.path] = n
			sizes = append(sizes, it.size)
			files, hashOf = append(files, FileResult{Path: it.path}), append(hashOf, n)
		case TypeHardlink:
			files, hashOf = append(files, FileResult{Path: it.path}), append(hashOf, number[it.linkname])
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("data.tar: %w", err)
	}
	fh.close()
	hashed = true
	for i, n := range hashOf {
		files[i].Size = sizes[n]
		files[i].MD5, files[i].SHA256 = fh.result(n)
	}
	return files, nil
}

// openContent opens a regular file's content; for an OpenSized entry it sets
// the item's size.
func openContent(it *item) (io.ReadCloser, error) {
	if it.openSized == nil {
		rc, err := it.open()
		if err != nil {
			return nil, fmt.Errorf("entry %q: open: %w", it.path, err)
		}
		return rc, nil
	}
	rc, size, err := it.openSized()
	if err != nil {
		return nil, fmt.Errorf("entry %q: open: %w", it.path, err)
	}
	if size < 0 {
		rc.Close()
		return nil, invalidf("entry %q: OpenSized returned a negative size %d", it.path, size)
	}
	it.size = size
	return rc, nil
}

// copyContent streams a file's content from rc (which it closes) into the
// tar, to be hashed by fh as file number file, and checks that rc yields
// exactly the promised size.
func copyContent(ctx context.Context, fh *fileHasher, file int, w io.Writer, it *item, rc io.ReadCloser) error {
	defer rc.Close()
	n, err := fh.copy(w, file, !it.noSHA256, io.LimitReader(ctxio.Reader(ctx, rc), it.size))
	if err != nil {
		return fmt.Errorf("entry %q: read: %w", it.path, err)
	}
	if n < it.size {
		return invalidf("entry %q: Size is %d but its content has %d bytes", it.path, it.size, n)
	}
	var one [1]byte
	if k, _ := io.ReadFull(rc, one[:]); k > 0 {
		return invalidf("entry %q: Size is %d but its content has more bytes", it.path, it.size)
	}
	if err := rc.Close(); err != nil {
		return fmt.Errorf("entry %q: close: %w", it.path, err)
	}
	return nil
}

// fill reads into b until it is full or r returns an error (io.EOF at the
// end), which it returns as it is.
func fill(r io.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		k, err := r.Read(b[n:])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
