package archive

import (
	"fmt"
	"hash/maphash"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
)

// A path Linux takes is at most MaxPath bytes (PATH_MAX less its NUL), and
// a name in a folder at most MaxComponent bytes (NAME_MAX). A tar name or
// symlink target may be up to a MiB (PAX, GNU long names): refusing longer
// ones keeps what a scan holds, and every message, to a few KiB a name.
// Recipes hold their paths to the same limits, and the paths of a package
// to dpkg's, 9 bytes less (deb.MaxPath, deb.MaxName).
const (
	MaxPath      = 4095
	MaxComponent = 255
)

// cleanName checks an entry or wanted name and returns it cleaned ("./a//b/" ->
// "a/b", "./" -> "."), or the reason it is refused. What dpkg takes in a
// file name is taken (spaces, backslashes such as systemd's "\x2d", UTF-8
// and other bytes); what it refuses is refused (NUL, a newline), and so is
// what could place a file outside the archive's root: an absolute name, a
// Windows drive letter, and any ".." component, even one that stays inside
// after cleaning ("a/../b"): release archives never need one, and refusing
// them leaves nothing to reason about.
func cleanName(raw string) (string, string) {
	switch {
	case raw == "":
		return "", "empty name"
	case strings.IndexByte(raw, 0) >= 0:
		return "", "name contains a NUL byte, which no file name can hold"
	case strings.IndexByte(raw, '\n') >= 0:
		return "", "name contains a newline, which dpkg refuses in a file name"
	case len(raw) > MaxPath:
		return "", fmt.Sprintf("name is %d bytes long, longer than any path Linux takes (%d)", len(raw), MaxPath)
	case raw[0] == '/':
		return "", "absolute name (it would extract outside the archive's folder)"
	case hasDriveLetter(raw):
		return "", "name starts with a drive letter (a Windows absolute path, outside the archive's folder)"
	}
	for _, c := range strings.Split(raw, "/") {
		if c == ".." {
			return "", `name contains a ".." component (path traversal)`
		}
		if len(c) > MaxComponent {
			return "", fmt.Sprintf("name has a component of %d bytes, longer than any file name a file system holds (%d)", len(c), MaxComponent)
		}
	}
	return path.Clean(raw), ""
}

func hasDriveLetter(s string) bool {
	return len(s) >= 2 && s[1] == ':' && ('a' <= s[0] && s[0] <= 'z' || 'A' <= s[0] && s[0] <= 'Z')
}

// symlinkEscapes checks a symlink at the cleaned path name with the given target,
// lexically: the target is resolved against the link's directory. Chains of links
// are checked once the whole archive is known (checkLinkChains).
func symlinkEscapes(name, target string) string {
	switch {
	case target == "":
		return "has an empty target"
	case strings.IndexByte(target, 0) >= 0:
		return "has a target with a NUL byte"
	case strings.IndexByte(target, '\n') >= 0:
		return "has a target with a newline, which no release needs"
	case len(target) > MaxPath:
		return fmt.Sprintf("has a target of %d bytes, longer than any symlink Linux takes (%d)", len(target), MaxPath)
	case target[0] == '/' || hasDriveLetter(target):
		return "is absolute: it leaves the archive root"
	}
	if j := path.Join(path.Dir(name), target); j == ".." || strings.HasPrefix(j, "../") {
		return "leaves the archive root"
	}
	return ""
}

// checkParents refuses an entry inside a path that the archive holds as
// anything but a directory, whichever comes first: no file system holds
// such a tree, so only a crafted archive does, and extracting it would
// write through the symlink ("d -> sub", then "d/f" lands in "sub/f",
// replacing the "sub/f" updeb would package) or fail on the file.
//
// The error names the first such entry in byte order (deterministic when
// several are bad) and the deepest non-directory above it. The entries
// inside a path are those that sort right after "PATH/", so each
// non-directory costs one binary search: walking up every entry's parents
// cost 100,000 entries of 2,000 components each some 10^11 steps.
func (s *scan) checkParents() error {
	names := slices.Sorted(maps.Keys(s.seen))
	first := ""
	for leaf := range s.leaves {
		prefix := leaf + "/"
		if i, _ := slices.BinarySearch(names, prefix); i < len(names) && strings.HasPrefix(names[i], prefix) && (first == "" || names[i] < first) {
			first = names[i]
		}
	}
	if first == "" {
		return nil
	}
	for dir := parentOf(first); dir != "."; dir = parentOf(dir) {
		p, ok := s.leaves[dir]
		if !ok {
			continue
		}
		what, then := p.typ.String(), "no file system holds that: extracting it fails"
		if p.typ == typeSymlink {
			then = "extracting it would write through the link, into " + strconv.Quote(path.Join(path.Dir(dir), p.link))
		}
		if p.typ == typeSymlink || p.typ == typeHardlink {
			what += " to " + strconv.Quote(p.link)
		}
		return s.errorf(ErrUnsafe, first, nil, "is inside %q, which the archive holds as %s: %s", dir, what, then)
	}
	return nil
}

// parentOf is path.Dir; a variable so that tests can count the steps up.
var parentOf = path.Dir

// maxLinkHops bounds symlink expansions while resolving one path (Linux: 40).
const maxLinkHops = 40

// checkLinkChains resolves every symlink through the others, as a kernel would
// if the archive were extracted, and refuses one that ends outside the root
// ("a/l -> ..", then "a/m -> l/.." is lexically inside but really escapes) or
// loops.
func (s *scan) checkLinkChains() error {
	x := newLinkIndex(s.links)
	names := slices.Sorted(maps.Keys(s.links)) // a deterministic error when several links are bad
	for _, n := range names {
		if problem := x.resolve(n); problem != "" {
			return s.errorf(ErrUnsafe, n, nil, "symlink to %q %s", s.links[n], problem)
		}
	}
	return nil
}

// linkIndex finds the symlinks among the paths that resolving a path goes
// through, one component at a time: each path is known by a hash made
// from its parent's hash and its last component, so a step costs its
// component, not the whole path so far (joining the path at every step
// cost a link 2,000 components deep some 4 MB of copies). A hash that
// matches a link's is checked against the link's whole path.
type linkIndex struct {
	links  map[string]string
	hashes map[uint64]bool // the hash of every link's path
	seed   maphash.Seed
}

func newLinkIndex(links map[string]string) *linkIndex {
	x := &linkIndex{links: links, hashes: make(map[uint64]bool, len(links)), seed: maphash.MakeSeed()}
	for name := range links {
		h := uint64(0)
		for c := range strings.SplitSeq(name, "/") {
			if c != "" && c != "." {
				h = x.step(h, c)
			}
		}
		x.hashes[h] = true
	}
	return x
}

// step is the hash of the path PARENT/c, given PARENT's hash (0: the root).
func (x *linkIndex) step(parent uint64, c string) uint64 {
	return maphash.Comparable(x.seed, [2]uint64{parent, maphash.String(x.seed, c)})
}

// resolve walks p component by component, replacing symlinks by their
// targets, and reports an escape from the root or a loop.
func (x *linkIndex) resolve(p string) string {
	todo := strings.Split(p, "/")
	var cur []string      // the components resolved so far
	hashes := []uint64{0} // hashes[i]: the hash of cur[:i]
	hops := 0
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(cur) == 0 {
				return "leaves the archive root through other symlinks"
			}
			cur, hashes = cur[:len(cur)-1], hashes[:len(hashes)-1]
			continue
		}
		h := x.step(hashes[len(hashes)-1], c)
		if x.hashes[h] {
			if t, ok := x.links[strings.Join(append(cur[:len(cur):len(cur)], c), "/")]; ok {
				hops++
				if hops > maxLinkHops {
					return "is part of a symlink loop"
				}
				todo = append(strings.Split(t, "/"), todo...)
				continue
			}
		}
		cur, hashes = append(cur, c), append(hashes, h)
	}
	return ""
}
