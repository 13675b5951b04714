package repo

import (
	"bytes"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/updeb/updeb/pkg/control"
)

// dateFormat is RFC 2822 in UTC, the way apt-ftparchive writes Date.
const dateFormat = "Mon, 02 Jan 2006 15:04:05 UTC"

// hashAlgorithms are the digests a Release lists and by-hash serves, strongest
// last as apt-ftparchive orders them. apt fetches by the strongest it knows.
var hashAlgorithms = []struct {
	field string
	sum   func([]byte) string
}{
	{"SHA256", func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }},
	{"SHA512", func(b []byte) string { s := sha512.Sum512(b); return hex.EncodeToString(s[:]) }},
}

// releaseFile renders dists/<suite>/Release of a generation: the suite's
// settings (whose Architectures and Components it lists), its Date and the
// index files with their sizes and digests.
func releaseFile(set Settings, all bool, date time.Time, files []indexFile) []byte {
	var p control.Paragraph
	add := func(name, value string) {
		if value != "" {
			p.Fields = append(p.Fields, control.Field{Name: name, Value: value})
		}
	}
	add("Origin", set.Origin)
	add("Label", set.Label)
	add("Suite", set.Suite)
	add("Codename", set.Codename)
	add("Date", date.UTC().Format(dateFormat))
	if set.ValidFor > 0 {
		add("Valid-Until", date.Add(time.Duration(set.ValidFor)).UTC().Format(dateFormat))
	}
	archs := set.Architectures
	if all {
		// As Debian's: Contents-all holds the Architecture: all packages,
		// and every binary-ARCH/Packages lists them too, so apt need not
		// fetch binary-all/Packages.
		archs = append([]string{"all"}, archs...)
	}
	add("Architectures", strings.Join(archs, " "))
	add("Components", strings.Join(set.Components, " "))
	add("Description", set.Description)
	add("Acquire-By-Hash", "yes")
	if all {
		add("No-Support-for-Architecture-all", "Packages")
	}
	sorted := append([]indexFile(nil), files...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].path < sorted[j].path })
	for _, h := range hashAlgorithms {
		if len(sorted) == 0 {
			break // an empty list would be a blank line, which ends the paragraph
		}
		var lines []string
		for _, f := range sorted {
			lines = append(lines, fmt.Sprintf("%s %16d %s", f.sums[h.field], f.size, f.path))
		}
		p.Fields = append(p.Fields, control.Field{Name: h.field, Value: "\n" + strings.Join(lines, "\n")})
	}
	return p.Bytes()
}

// releaseEntry is one line of a Release checksum list.
type releaseEntry struct {
	algorithm, hex, path string
	size                 int64
}

// parsedRelease is what a publish needs back from the live Release.
type parsedRelease struct {
	origin, label, codename, description string
	archs, comps                         []string
	files                                []releaseEntry
	date                                 time.Time // zero when the Date field is missing or unreadable
	validUntil                           time.Time // zero when there is none
}

// file returns the entry of path for algorithm, if listed.
func (p *parsedRelease) file(algorithm, path string) (releaseEntry, bool) {
	for _, e := range p.files {
		if e.algorithm == algorithm && e.path == path {
			return e, true
		}
	}
	return releaseEntry{}, false
}

// contentID identifies what a generation serves (its index files by
// digest), whatever its Date and signatures: two generations with the same
// contentID list the same packages.
func (p *parsedRelease) contentID() string {
	var lines []string
	for _, e := range p.files {
		if e.algorithm == "SHA256" {
			lines = append(lines, e.path+" "+e.hex)
		}
	}
	sort.Strings(lines)
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return hex.EncodeToString(sum[:])
}

// fileList names the index files a generation lists (SHA256), digests
// aside: generations with the same list and other contentIDs list other
// packages.
func (p *parsedRelease) fileList() string {
	var names []string
	for _, e := range p.files {
		if e.algorithm == "SHA256" {
			names = append(names, e.path)
		}
	}
	sort.Strings(names)
	return strings.Join(names, "\n")
}

func parseRelease(data []byte, name string) (*parsedRelease, error) {
	p, err := control.ParseOne(bytes.NewReader(data), name)
	if err != nil {
		return nil, err
	}
	out := &parsedRelease{
		origin: p.Value("Origin"), label: p.Value("Label"), codename: p.Value("Codename"), description: p.Value("Description"),
		archs: strings.Fields(p.Value("Architectures")), comps: strings.Fields(p.Value("Components")),
	}
	if d, err := time.Parse(dateFormat, p.Value("Date")); err == nil {
		out.date = d
	}
	if d, err := time.Parse(dateFormat, p.Value("Valid-Until")); err == nil {
		out.validUntil = d
	}
	for _, h := range hashAlgorithms {
		for i, line := range strings.Split(p.Value(h.field), "\n") {
			if strings.TrimSpace(line) == "" {
				continue
			}
			f := strings.Fields(line)
			if len(f) != 3 {
				return nil, fmt.Errorf("%w: %s: %s line %d: expected \"hash size path\", found %q", ErrInvalid, name, h.field, i, line)
			}
			size, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil || size < 0 || f[1][0] == '+' {
				return nil, fmt.Errorf("%w: %s: %s line %d: size %q", ErrInvalid, name, h.field, i, f[1])
			}
			out.files = append(out.files, releaseEntry{algorithm: h.field, hex: f[0], path: f[2], size: size})
		}
	}
	return out, nil
}
