package repo

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/ulikunitz/xz"

	"github.com/updeb/updeb/pkg/control"
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

	stanza control.Paragraph
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
		Filename: p.Value("Filename"), Size: size, SHA256: p.Value("SHA256"), stanza: p}
	if e.Filename == "" || len(e.SHA256) != 64 {
		return Entry{}, fmt.Errorf("%w: %s: %s has no Filename or SHA256", ErrInvalid, subject, k)
	}
	return e, nil
}

// component is the state of one component of a suite: its packages by key.
type component map[key]Entry

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

// packagesFor renders the Packages file of one architecture: the packages
// built for it and every Architecture: all package.
func (c component) packagesFor(arch string) []byte {
	var b bytes.Buffer
	for _, e := range c.sortedEntries() {
		if e.Architecture != arch && e.Architecture != "all" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		e.stanza.WriteTo(&b) //nolint:errcheck // bytes.Buffer does not fail
	}
	return b.Bytes()
}

// indexFile is one file of dists/<suite>/, relative to it.
type indexFile struct {
	path string
	data []byte
}

// compressed returns Packages, Packages.gz and Packages.xz for data. Both
// compressors are pinned (gzip: default level, no name, mtime 0; xz: this
// library's defaults) so that the same state gives the same bytes.
func compressed(dir string, data []byte) ([]indexFile, error) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(data); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	var x bytes.Buffer
	xw, err := xz.WriterConfig{CheckSum: xz.CRC64}.NewWriter(&x)
	if err != nil {
		return nil, err
	}
	if _, err := xw.Write(data); err != nil {
		return nil, err
	}
	if err := xw.Close(); err != nil {
		return nil, err
	}
	return []indexFile{
		{dir + "/Packages", data},
		{dir + "/Packages.gz", gz.Bytes()},
		{dir + "/Packages.xz", x.Bytes()},
	}, nil
}

// readPackages parses one uncompressed Packages file of the live generation.
func readPackages(file, suite, comp string) ([]Entry, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	paras, err := control.Parse(bytes.NewReader(data), file)
	if err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(paras))
	for i, p := range paras {
		e, err := entryFromStanza(suite, comp, p, fmt.Sprintf("%s: stanza %d", filepath.ToSlash(file), i+1))
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}
