package repo

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"hash/fnv"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/updeb/updeb/pkg/control"
	"github.com/updeb/updeb/pkg/debversion"
	"github.com/updeb/updeb/pkg/xzpar"
)

// controlFirst are the control fields apt-ftparchive writes before the pool
// fields (Filename, Size, digests), in its order; every other control field
// follows them, in the .deb's own order.
var controlFirst = []string{
	"Package", "Package-Type", "Architecture", "Subarchitecture", "Version", "Essential", "Priority",
	"Section", "Maintainer", "Original-Maintainer", "Installed-Size", "Built-Using", "Provides",
	"Pre-Depends", "Depends", "Recommends", "Suggests", "Enhances", "Conflicts", "Breaks", "Replaces",
}

// poolFields are the fields the repository adds; a .deb's control file must not carry them.
var poolFields = []string{"Filename", "Size", "MD5sum", "SHA1", "SHA256", "SHA512"}

// stanza builds the Packages paragraph for a package in the pool, with the
// fields apt-ftparchive writes (without SHA1, which apt no longer uses).
func stanza(p *Package) control.Paragraph {
	var out control.Paragraph
	used := map[string]bool{}
	for _, name := range controlFirst {
		if v, ok := p.Control.Get(name); ok {
			out.Fields = append(out.Fields, control.Field{Name: name, Value: v})
			used[strings.ToLower(name)] = true
		}
	}
	out.Fields = append(out.Fields,
		control.Field{Name: "Filename", Value: p.Filename},
		control.Field{Name: "Size", Value: strconv.FormatInt(p.Size, 10)},
		control.Field{Name: "MD5sum", Value: p.MD5},
		control.Field{Name: "SHA256", Value: p.SHA256},
		control.Field{Name: "SHA512", Value: p.SHA512},
	)
	for _, name := range poolFields {
		used[strings.ToLower(name)] = true
	}
	for _, f := range p.Control.Fields {
		if !used[strings.ToLower(f.Name)] {
			out.Fields = append(out.Fields, f)
		}
	}
	return out
}

// Entry is one published package, as `repo list` shows it.
type Entry struct {
	Suite        string `json:"suite"`
	Component    string `json:"component"`
	Package      string `json:"package"`
	Version      string `json:"version"`
	Architecture string `json:"architecture"`
	Filename     string `json:"filename"`
	Size         int64  `json:"size"`
	SHA256       string `json:"sha256"`

	raw []byte // the Packages stanza, ending in a newline, no blank line
}

func (e *Entry) key() key { return key{e.Package, e.Version, e.Architecture} }

// entryFromStanza reads back a stanza this package (or another tool) wrote.
func entryFromStanza(suite, component string, p control.Paragraph, subject string) (Entry, error) {
	k, err := identity(p, subject)
	if err != nil {
		return Entry{}, err
	}
	size, err := strconv.ParseInt(p.Value("Size"), 10, 64)
	if err != nil || size < 0 {
		return Entry{}, fmt.Errorf("%w: %s: %s: Size %q is not a byte count", ErrInvalid, subject, k, p.Value("Size"))
	}
	e := Entry{Suite: suite, Component: component, Package: k.name, Version: k.version, Architecture: k.arch,
		Filename: p.Value("Filename"), Size: size, SHA256: p.Value("SHA256")}
	if e.Filename == "" || len(e.SHA256) != 64 {
		return Entry{}, fmt.Errorf("%w: %s: %s has no Filename or SHA256", ErrInvalid, subject, k)
	}
	return e, nil
}

// entryFields are the fields scanPackages reads from each stanza; the rest of
// the stanza is kept as bytes and written back unchanged.
var entryFields = []string{"package", "version", "architecture", "filename", "size", "sha256"}

// scanPackages reads a Packages file this package wrote: it splits the
// stanzas and reads only the fields an Entry needs, so that loading a suite
// of thousands of packages costs little more than reading the file.
func scanPackages(data []byte, file, suite, comp string) ([]Entry, error) {
	var out []Entry
	for n := 1; ; n++ {
		data = bytes.TrimLeft(data, "\n")
		if len(data) == 0 {
			return out, nil
		}
		raw := data
		if end := bytes.Index(data, []byte("\n\n")); end >= 0 {
			raw, data = data[:end+1], data[end+2:]
		} else {
			data = nil
			if raw[len(raw)-1] != '\n' {
				raw = append(raw[:len(raw):len(raw)], '\n')
			}
		}
		var p control.Paragraph
		for line := range bytes.Lines(raw) {
			if line[0] == ' ' || line[0] == '\t' {
				continue
			}
			name, value, ok := bytes.Cut(line, []byte(":"))
			if !ok {
				return nil, fmt.Errorf("%w: %s: stanza %d: expected \"Field: value\", found %q", ErrInvalid, file, n, bytes.TrimSpace(line))
			}
			if slices.Contains(entryFields, strings.ToLower(string(name))) {
				p.Fields = append(p.Fields, control.Field{Name: string(name), Value: string(bytes.TrimSpace(value))})
			}
		}
		e, err := entryFromStanza(suite, comp, p, fmt.Sprintf("%s: stanza %d", file, n))
		if err != nil {
			return nil, err
		}
		e.raw = raw
		out = append(out, e)
	}
}

// component is the state of one component of a suite: its packages by key.
type component map[key]Entry

// finder is a component with its keys by package name, so that find looks
// at the packages of one name, not at every package of the component:
// looking up each of n packages in a component of n costs n steps, not n².
// add keeps the two in step.
type finder struct {
	c      component
	byName map[string][]key
}

// finder indexes c for find.
func (c component) finder() *finder {
	f := &finder{c: c, byName: map[string][]key{}}
	for k := range c {
		f.byName[k.name] = append(f.byName[k.name], k)
	}
	return f
}

// add puts e in the component.
func (f *finder) add(e Entry) {
	k := e.key()
	if _, ok := f.c[k]; !ok {
		f.byName[k.name] = append(f.byName[k.name], k)
	}
	f.c[k] = e
}

// find returns the entry of the component for k: k itself or, failing that,
// one with k's name and architecture whose version is spelled otherwise but
// compares equal to k's for dpkg and apt ("1.0" and "1.00", "1.0-0" or
// "0:1.0"): apt lists such versions as one and installs one build of it, so
// the repository must not list two. An Architecture: all package is listed
// among each architecture's, so k's architecture or all matches one of all,
// and all matches any (of several, the first by name=version (arch)).
func (f *finder) find(k key) (found Entry, ok bool) {
	if e, ok := f.c[k]; ok {
		return e, true
	}
	for _, o := range f.byName[k.name] {
		if (o.arch == k.arch || o.arch == "all" || k.arch == "all") && (!ok || o.String() < found.key().String()) {
			if n, err := debversion.CompareStrings(o.version, k.version); err == nil && n == 0 {
				found, ok = f.c[o], true
			}
		}
	}
	return found, ok
}

// sortedEntries returns the entries by name, version and architecture (byte
// order: apt does not care about the order, only stable output does).
func (c component) sortedEntries() []Entry {
	out := make([]Entry, 0, len(c))
	for _, e := range c {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Package != b.Package {
			return a.Package < b.Package
		}
		if a.Version != b.Version {
			return a.Version < b.Version
		}
		return a.Architecture < b.Architecture
	})
	return out
}

// listedEntries returns the entries as people read them (List): by name,
// then by version in dpkg's order, oldest first, so that the last version
// of a package is the candidate apt installs (1.9-1 before 1.10~rc1-1
// before 1.10-1), then by architecture. The Packages files keep
// sortedEntries' byte order: a generation's indexes stay the bytes they were.
func (c component) listedEntries() []Entry {
	out := c.sortedEntries()
	slices.SortStableFunc(out, func(a, b Entry) int {
		if a.Package != b.Package {
			return strings.Compare(a.Package, b.Package)
		}
		n, _ := debversion.CompareStrings(a.Version, b.Version) // published versions parse
		return n
	})
	return out
}

// packagesFor renders the Packages file of one architecture: the packages
// built for it and every Architecture: all package, a blank line between.
func (c component) packagesFor(arch string) []byte {
	var b bytes.Buffer
	for _, e := range c.sortedEntries() {
		if e.Architecture != arch && e.Architecture != "all" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.Write(e.raw)
	}
	return b.Bytes()
}

// indexFile is one file of dists/<suite>/, relative to it: either new bytes
// (data) or an unchanged file of an earlier generation (src), with the size
// and digests the Release lists.
type indexFile struct {
	path string
	data []byte // nil when src is set
	src  string // an earlier generation's file with these exact bytes
	size int64
	sums map[string]string // hash field (SHA256, SHA512) -> hex digest
	// listedOnly: the Release lists it, nothing serves it (an uncompressed
	// Contents index, whose digests apt checks after decompressing).
	listedOnly bool
}

// newIndexFile returns an index file of new bytes, with its digests.
func newIndexFile(path string, data []byte) indexFile {
	sums := map[string]string{}
	for _, h := range hashAlgorithms {
		sums[h.field] = h.sum(data)
	}
	return indexFile{path: path, data: data, size: int64(len(data)), sums: sums}
}

// indexForms are the forms of a Packages index every binary-<arch> holds.
var indexForms = []string{"Packages", "Packages.gz", "Packages.xz"}

// compressed returns Packages, Packages.gz and Packages.xz for data. Both
// compressors are pinned (gzip: default level, no name, mtime 0; xz: see
// xzIndex) so that the same state gives the same bytes. prev, when not nil,
// is the same index in the generation before; its xz blocks are reused
// where the bytes they hold reappear.
func compressed(dir string, data []byte, prev *prevIndex) ([]indexFile, error) {
	gz, err := gzipped(data)
	if err != nil {
		return nil, err
	}
	x, _, err := xzIndex(data, prev)
	if err != nil {
		return nil, err
	}
	return []indexFile{
		newIndexFile(dir+"/"+indexForms[0], data),
		newIndexFile(dir+"/"+indexForms[1], gz),
		newIndexFile(dir+"/"+indexForms[2], x),
	}, nil
}

// gzipped is data gzip-compressed as every index is: the default level, no
// name, mtime 0, so the same bytes give the same file. The writer stores
// ModTime.Unix() as it is, so a ModTime left zero (year 1) would be written
// as 2042-07-14: the Unix epoch is what gives 0.
func gzipped(data []byte) ([]byte, error) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.ModTime = time.Unix(0, 0)
	if _, err := zw.Write(data); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return gz.Bytes(), nil
}

// chunkMask sets how many stanzas one xz block of a Packages.xz holds, on
// average chunkMask+1 (about 100 KB): a block ends after a stanza whose hash
// has these bits zero, so where blocks end depends on the stanzas around, not
// on what comes before, and adding a package changes one block. 128 stanzas
// compress as small as the whole file in one block; 32 cost 20% more.
const (
	chunkMask = 127
	maxChunk  = 1 << 20
)

// stanzaChunks splits a Packages file into the pieces xzIndex compresses
// each into one block: whole stanzas, each with the blank line after it.
func stanzaChunks(data []byte) [][]byte {
	var out [][]byte
	start := 0
	for i := 0; i < len(data); {
		end := bytes.Index(data[i:], []byte("\n\n"))
		if end < 0 {
			break
		}
		next := i + end + 2
		h := fnv.New32a()
		h.Write(data[i:next]) //nolint:errcheck // hashes do not fail
		if h.Sum32()&chunkMask == 0 || next-start >= maxChunk {
			out = append(out, data[start:next])
			start = next
		}
		i = next
	}
	if start < len(data) {
		out = append(out, data[start:])
	}
	return out
}

// xzIndex compresses data as one xz stream of one block per stanza chunk
// (pkg/xzpar, its default settings), taking the block of an unchanged chunk
// from prev instead of compressing it again: a publish recompresses the
// chunks it changed, not the index. The bytes are the same either way;
// encoded says how many blocks were compressed.
func xzIndex(data []byte, prev *prevIndex) (xz []byte, encoded int, err error) {
	reuse := prev.blocks()
	var blocks []xzpar.Block
	for _, c := range stanzaChunks(data) {
		if b, ok := reuse[sha256.Sum256(c)]; ok {
			blocks = append(blocks, b)
			continue
		}
		b, err := xzpar.EncodeBlock(c, xzpar.Config{})
		if err != nil {
			return nil, 0, err
		}
		blocks = append(blocks, b)
		encoded++
	}
	var out bytes.Buffer
	if err := xzpar.WriteStream(&out, blocks); err != nil {
		return nil, 0, err
	}
	return out.Bytes(), encoded, nil
}

// prevIndex is an index of the generation before: its Packages and
// Packages.xz, both checked against that generation's Release.
type prevIndex struct {
	plain, xz []byte
}

// blocks maps the SHA-256 of each block's bytes to the block; nil when the
// .xz does not split into blocks of the plain file.
func (p *prevIndex) blocks() map[[32]byte]xzpar.Block {
	if p == nil {
		return nil
	}
	blocks, err := xzpar.Blocks(p.xz)
	if err != nil {
		return nil
	}
	out := make(map[[32]byte]xzpar.Block, len(blocks))
	off := int64(0)
	for _, b := range blocks {
		if b.UncompressedSize > int64(len(p.plain))-off {
			return nil
		}
		out[sha256.Sum256(p.plain[off:off+b.UncompressedSize])] = b
		off += b.UncompressedSize
	}
	if off != int64(len(p.plain)) {
		return nil
	}
	return out
}
