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

// ReleaseConfig is what the operator's configuration says about every suite's
// Release file. The suite itself is chosen per publish.
type ReleaseConfig struct {
	Origin      string
	Label       string
	Codename    string // default: the suite name
	Description string
	// Architectures always get a binary-<arch> index, even when empty; the
	// architectures of published packages are added to them.
	Architectures []string
	// ValidFor, when positive, adds Valid-Until: Date + ValidFor. Clients then
	// refuse the repository if it is not re-signed in time.
	ValidFor time.Duration
}

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

// releaseFile renders dists/<suite>/Release for the index files.
func releaseFile(cfg ReleaseConfig, suite string, date time.Time, archs, comps []string, files []indexFile) []byte {
	var p control.Paragraph
	add := func(name, value string) {
		if value != "" {
			p.Fields = append(p.Fields, control.Field{Name: name, Value: value})
		}
	}
	codename := cfg.Codename
	if codename == "" {
		codename = suite
	}
	add("Origin", cfg.Origin)
	add("Label", cfg.Label)
	add("Suite", suite)
	add("Codename", codename)
	add("Date", date.UTC().Format(dateFormat))
	if cfg.ValidFor > 0 {
		add("Valid-Until", date.Add(cfg.ValidFor).UTC().Format(dateFormat))
	}
	add("Architectures", strings.Join(archs, " "))
	add("Components", strings.Join(comps, " "))
	add("Description", cfg.Description)
	add("Acquire-By-Hash", "yes")
	sorted := append([]indexFile(nil), files...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].path < sorted[j].path })
	for _, h := range hashAlgorithms {
		if len(sorted) == 0 {
			break // an empty list would be a blank line, which ends the paragraph
		}
		var lines []string
		for _, f := range sorted {
			lines = append(lines, fmt.Sprintf("%s %16d %s", h.sum(f.data), len(f.data), f.path))
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
	archs, comps []string
	files        []releaseEntry
	date         time.Time // zero when the Date field is missing or unreadable
}

func parseRelease(data []byte, name string) (*parsedRelease, error) {
	p, err := control.ParseOne(bytes.NewReader(data), name)
	if err != nil {
		return nil, err
	}
	out := &parsedRelease{archs: strings.Fields(p.Value("Architectures")), comps: strings.Fields(p.Value("Components"))}
	if d, err := time.Parse(dateFormat, p.Value("Date")); err == nil {
		out.date = d
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
			if err != nil {
				return nil, fmt.Errorf("%w: %s: %s line %d: size %q", ErrInvalid, name, h.field, i, f[1])
			}
			out.files = append(out.files, releaseEntry{algorithm: h.field, hex: f[0], path: f[2], size: size})
		}
	}
	return out, nil
}
