package repo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/updeb/updeb/internal/confined"

	"github.com/updeb/updeb/pkg/archive"
	"github.com/updeb/updeb/pkg/atomicfile"
	"github.com/updeb/updeb/pkg/deb"
)

// Contents indices (docs/repository-contents.md). Each component of a suite
// has COMPONENT/Contents-ARCH.gz for every architecture the suite lists,
// and COMPONENT/Contents-all.gz once the suite has an Architecture: all
// package (then the Release lists "all" among its Architectures, with
// No-Support-for-Architecture-all: Packages, as Debian's does): one line a
// path the packages install (files, symlinks, hardlinks; no directories),
// "PATH LOCATIONS" with LOCATIONS the comma-separated SECTION/NAME of every
// package that installs it, sorted by path, gzip-compressed. The Release
// lists each with the digests of its compressed and uncompressed bytes, as
// Debian's does; by-hash serves the compressed file.
//
// A publish must not read every .deb of a component of thousands of
// versions: the file list of each pool file is stored once, when the file
// is added, under .updeb/contents/POOLPATH.list (its first lines name the
// .deb's SHA-256, so a list always matches the bytes it describes), and a
// component's Contents are rendered from those lists. A pool file without
// a list (published before Contents existed) gets one read from the .deb
// the first time it is needed. Garbage collection removes the list with
// its pool file.

// contentsHeader starts every stored file list.
const contentsHeader = "updeb-contents 1\n"

// maxContentsList bounds a stored file list (100,000 paths of 100 bytes).
const maxContentsList = 16 << 20

// checkContentsList refuses a package whose file list would be stored
// larger than maxContentsList: read back, such a list is taken for a
// damaged one, and every later publish would read the whole .deb again to
// list its files anew (seconds each time, for ever).
func checkContentsList(deb string, paths []string) error {
	n := len(contentsHeader) + len("sha256 \n") + 64
	for _, p := range paths {
		n += len(p) + 1
	}
	if n > maxContentsList {
		return fmt.Errorf("%w: %s: its list of files for the Contents index (%d paths) takes %d bytes, more than the %d bytes updeb stores for one package", ErrInvalid, deb, len(paths), n, maxContentsList)
	}
	return nil
}

// contentsFile is where the file list of the pool file at filename is kept.
func contentsFile(root, filename string) string {
	return filepath.Join(root, ".updeb", "contents", filepath.FromSlash(filename)+".list")
}

// ContentsOf returns the paths a .deb installs as Contents lists them: every
// entry of data.tar but the directories, as dpkg installs it, without the
// leading "/" ("./usr/bin/x", "usr/bin/x" and "./usr//bin/x" are
// "usr/bin/x"; "./.config/x" and ".config/x" are ".config/x"), sorted.
func ContentsOf(info *deb.Info) []string {
	var out []string
	for _, f := range info.Files {
		if f.Type == "dir" {
			continue
		}
		out = append(out, strings.TrimPrefix(path.Clean("/"+f.Path), "/"))
	}
	sort.Strings(out)
	return out
}

// contentsStore reads and writes the stored file lists of a repository.
type contentsStore struct {
	root string
	ctx  context.Context
}

// store writes the list of e's pool file (a no-op when it is there already
// for the same bytes).
func (s *contentsStore) store(e Entry, paths []string) error {
	name := contentsFile(s.root, e.Filename)
	if have, err := s.read(e); err == nil && have != nil {
		return nil
	}
	var b bytes.Buffer
	b.WriteString(contentsHeader)
	fmt.Fprintf(&b, "sha256 %s\n", e.SHA256)
	for _, p := range paths {
		if p == "" || strings.ContainsAny(p, "\n\x00") {
			return fmt.Errorf("%w: %s: path %q cannot be listed in a Contents index", ErrInvalid, e.Filename, p)
		}
		b.WriteString(p)
		b.WriteByte('\n')
	}
	if err := atomicfile.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteFile(name, b.Bytes(), 0o644)
}

// read returns the stored list of e's pool file, nil when there is none
// or it describes other bytes.
func (s *contentsStore) read(e Entry) ([]string, error) {
	f, _, err := confined.OpenFile(contentsFile(s.root, e.Filename))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxContentsList+1))
	if err != nil {
		return nil, err
	}
	rest, ok := bytes.CutPrefix(data, []byte(contentsHeader+"sha256 "+e.SHA256+"\n"))
	if !ok || len(data) > maxContentsList {
		return nil, nil // another version's list, or damaged: listed again from the .deb
	}
	// Lines end at "\n" only: a carriage return is part of a path (dpkg
	// takes it in a file name; bufio.ScanLines would drop one at the end).
	paths := []string{}
	for line := range bytes.Lines(rest) {
		p := string(bytes.TrimSuffix(line, []byte("\n")))
		if p == "" {
			return nil, nil
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// list returns the file list of e's pool file: the stored one, or one read
// from the .deb (and stored) when there is none. A pool file that is not
// the bytes the index lists is refused: its paths would be signed into the
// Contents index, and stored as the list of the listed bytes.
func (s *contentsStore) list(e Entry) ([]string, error) {
	paths, err := s.read(e)
	if err != nil || paths != nil {
		return paths, err
	}
	pool := filepath.Join(s.root, filepath.FromSlash(e.Filename))
	if have, err := existingDigest(s.ctx, s.root, e.Filename); err != nil {
		return nil, err
	} else if have != e.SHA256 {
		if have == "" {
			have = "none: missing"
		}
		return nil, fmt.Errorf("%w: %s: sha256 %s, the index lists %s for %s: the pool file was changed or removed outside updeb, and a Contents index never lists its files; restore it",
			ErrInvalid, pool, have, e.SHA256, e.key())
	}
	info, err := deb.InspectFile(s.ctx, pool, archive.Limits{})
	if err != nil {
		return nil, fmt.Errorf("listing the files of %s for the Contents index: %w", pool, err)
	}
	paths = ContentsOf(info)
	return paths, s.store(e, paths)
}

// contentsForms are the Contents files of one component and architecture:
// the uncompressed one is listed in the Release only (as Debian's is).
func contentsPaths(comp, arch string) (plain, gz string) {
	plain = comp + "/Contents-" + arch
	return plain, plain + ".gz"
}

// contentsIndex renders the Contents of the entries of c built for arch
// ("all": the Architecture: all ones).
func (s *contentsStore) contentsIndex(c component, arch string) ([]byte, error) {
	where := map[string][]string{} // path -> SECTION/NAME, sorted, unique
	for _, e := range c.sortedEntries() {
		if e.Architecture != arch {
			continue
		}
		if err := s.ctx.Err(); err != nil {
			return nil, err
		}
		paths, err := s.list(e)
		if err != nil {
			return nil, err
		}
		loc := e.Package
		if sec := stanzaValue(e.raw, "Section"); sec != "" {
			loc = sec + "/" + e.Package
		}
		for _, p := range paths {
			if l := where[p]; !slices.Contains(l, loc) {
				where[p] = append(l, loc)
			}
		}
	}
	paths := slices.Sorted(maps.Keys(where))
	var b bytes.Buffer
	for _, p := range paths {
		locs := where[p]
		sort.Strings(locs)
		// dak's layout: the path left-aligned in 55 columns, then a space.
		fmt.Fprintf(&b, "%-55s %s\n", p, strings.Join(locs, ","))
	}
	return b.Bytes(), nil
}

// contentsFiles returns the Contents index of c for arch: the
// uncompressed form (listed in the Release, not served) and the gzip one.
func (s *contentsStore) contentsFiles(comp string, c component, arch string) ([]indexFile, error) {
	data, err := s.contentsIndex(c, arch)
	if err != nil {
		return nil, err
	}
	gz, err := gzipped(data)
	if err != nil {
		return nil, err
	}
	plain, packed := contentsPaths(comp, arch)
	listed := newIndexFile(plain, data)
	listed.data, listed.listedOnly = nil, true
	return []indexFile{listed, newIndexFile(packed, gz)}, nil
}

// stanzaValue returns a field of a Packages stanza, "" when absent.
func stanzaValue(raw []byte, field string) string {
	for line := range bytes.Lines(raw) {
		name, value, ok := bytes.Cut(line, []byte(":"))
		if ok && strings.EqualFold(string(name), field) {
			return string(bytes.TrimSpace(value))
		}
	}
	return ""
}

// removeContents removes the stored list of the pool file at rel.
func removeContents(root, rel string) error {
	err := os.Remove(contentsFile(root, rel))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}
