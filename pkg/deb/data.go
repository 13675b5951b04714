package deb

import (
	"archive/tar"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"
)

// item is an entry as it goes into data.tar: normalised, with implicit parents
// added and hardlinks resolved.
type item struct {
	path string // "/" for the root, else absolute
	typ  EntryType
	mode int64
	size int64 // learnt when the content is opened if openSized is set
	open func() (io.ReadCloser, error)
	// openSized is Entry.OpenSized: the size comes with the content.
	openSized func() (io.ReadCloser, int64, error)
	linkname  string // symlink target; for a hardlink, the absolute path of the file carrying the data
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
	root := &item{path: "/", typ: TypeDir, mode: 0o755, mtime: sde}
	return &tree{root: root, byPath: map[string]*item{"/": root}, explicit: map[string]bool{}, sde: sde}
}

// item normalises one entry as dpkg-deb's packages have it (mode by type,
// mtime clamped to SourceDateEpoch) and validates it. It returns a nil item
// for an entry that cannot be placed at all.
func (t *tree) item(e *Entry) (*item, []error) {
	if e.Mode&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != 0 {
		return nil, []error{invalidf("entry %q: mode %v has setuid, setgid or sticky bits, which the writer refuses", e.Path, e.Mode)}
	}
	mtime := e.ModTime
	if mtime.IsZero() || mtime.Unix() <= 0 || mtime.After(t.sde) {
		mtime = t.sde
	}
	it := &item{path: e.Path, typ: e.Type, mtime: mtime, linkname: e.Linkname}
	var errs []error
	switch e.Type {
	case TypeFile:
		it.mode = 0o644
		if e.Mode&0o111 != 0 {
			it.mode = 0o755
		}
		it.size, it.open, it.openSized = e.Size, e.Open, e.OpenSized
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
		it.mode = 0o755
	case TypeSymlink:
		it.mode = 0o777
		if e.Linkname == "" || strings.ContainsAny(e.Linkname, "\n\r\x00") {
			errs = append(errs, invalidf("entry %q: symlink target %q must be non-empty, without newline or NUL", e.Path, e.Linkname))
		}
	case TypeHardlink:
	default:
		return nil, append(errs, invalidf("entry %q: unknown type %d", e.Path, e.Type))
	}
	if e.Type != TypeSymlink && e.Type != TypeHardlink && e.Linkname != "" {
		errs = append(errs, invalidf("entry %q: a %s with Linkname %q", e.Path, e.Type, e.Linkname))
	}
	return it, errs
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
		old.mode, old.mtime = it.mode, it.mtime
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
		parent = &item{path: dir, typ: TypeDir, mode: 0o755, mtime: t.sde, children: []*item{child}}
		t.byPath[dir] = parent
		child = parent
	}
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
		var carrier *item
		for _, m := range *it.group {
			if m.typ == TypeFile {
				carrier = m
			}
		}
		for _, m := range *it.group {
			if m == it {
				m.typ, m.mode, m.size, m.open, m.openSized, m.linkname = TypeFile, carrier.mode, carrier.size, carrier.open, carrier.openSized, ""
				continue
			}
			m.typ, m.mode, m.size, m.open, m.openSized, m.linkname = TypeHardlink, carrier.mode, carrier.size, nil, nil, it.path
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
		Name: it.tarName(), Mode: it.mode, Uid: 0, Gid: 0, Uname: "root", Gname: "root",
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
	var files []FileResult
	sums := map[string]FileResult{}
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
			fr, err := copyContent(ctx, tw, it, rc)
			if err != nil {
				return nil, err
			}
			files = append(files, fr)
			sums[it.path] = fr
		case TypeHardlink:
			fr := sums[it.linkname]
			fr.Path = it.path
			files = append(files, fr)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("data.tar: %w", err)
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
// tar, hashing it, and checks that rc yields exactly the promised size.
func copyContent(ctx context.Context, w io.Writer, it *item, rc io.ReadCloser) (FileResult, error) {
	defer rc.Close()
	m, s := md5.New(), sha256.New()
	n, err := copyHashing(w, m, s, io.LimitReader(ctxReader{ctx, rc}, it.size))
	if err != nil {
		return FileResult{}, fmt.Errorf("entry %q: read: %w", it.path, err)
	}
	if n < it.size {
		return FileResult{}, invalidf("entry %q: Size is %d but its content has %d bytes", it.path, it.size, n)
	}
	var one [1]byte
	if k, _ := io.ReadFull(rc, one[:]); k > 0 {
		return FileResult{}, invalidf("entry %q: Size is %d but its content has more bytes", it.path, it.size)
	}
	if err := rc.Close(); err != nil {
		return FileResult{}, fmt.Errorf("entry %q: close: %w", it.path, err)
	}
	return FileResult{Path: it.path, Size: n, MD5: hex.EncodeToString(m.Sum(nil)), SHA256: hex.EncodeToString(s.Sum(nil))}, nil
}

// copyChunk is copyHashing's read size.
const copyChunk = 1 << 20

// copyHashing copies r to w and into both hashes. md5, the slowest of the
// three (about 650 MB/s against sha256's 1.4 GB/s with SHA-NI), hashes each
// chunk on a goroutine of its own while this one hashes it with sha256,
// writes it (into the compressor's block) and reads the next: data.tar's
// producer, the one goroutine that feeds every compressor worker, so takes
// about the time of md5 per byte instead of the sum of all four, and keeps
// up with more workers (internal/bench/README.md, "xz by core count").
func copyHashing(w io.Writer, md5h, sha hash.Hash, r io.Reader) (int64, error) {
	bufs := [2][]byte{make([]byte, copyChunk), make([]byte, copyChunk)}
	var total int64
	cur, err := fill(r, bufs[0])
	for i := 0; cur > 0; i ^= 1 {
		chunk := bufs[i][:cur]
		done := make(chan struct{})
		go func() {
			md5h.Write(chunk)
			close(done)
		}()
		sha.Write(chunk)
		_, werr := w.Write(chunk)
		total += int64(cur)
		next := 0
		if werr == nil && err == nil {
			next, err = fill(r, bufs[i^1])
		}
		<-done
		if werr != nil {
			return total, werr
		}
		cur = next
	}
	if err == io.EOF {
		err = nil
	}
	return total, err
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

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
