package digest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/updeb/updeb/pkg/plural"
	"github.com/updeb/updeb/pkg/utf8cut"
)

// ErrChecksums is wrapped by every checksum-file parse error and failed lookup.
var ErrChecksums = errors.New("verify: bad checksum file")

// maxChecksumsSize caps a checksum file: real ones are a few kilobytes.
const maxChecksumsSize = 4 << 20

// ChecksumEntry is one line of a checksum file.
type ChecksumEntry struct {
	Name   string // as written ("" for a bare digest file)
	Digest Digest
	Line   int
}

// Checksums is a parsed checksum file.
type Checksums struct {
	Source  string // file name or URL, for messages
	Entries []ChecksumEntry
}

// ParseChecksums reads a checksum file; source names it (a path or URL) in
// errors, which say "source:line: ...". Accepted line shapes, mixed freely:
//
//	HEX                      a bare digest: only as the file's single entry
//	HEX  NAME, HEX NAME      sha256sum text mode, or one space (istioctl)
//	HEX *NAME                sha256sum binary mode
//	SHA256 (NAME) = HEX      BSD style (also SHA512)
//
// Blank lines and lines starting with # are skipped. The algorithm follows from
// the digest's length (64 hex digits: sha256, 128: sha512). A clearsigned file
// must be verified first (VerifyClearsigned) and its content parsed.
func ParseChecksums(r io.Reader, source string) (*Checksums, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxChecksumsSize+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrChecksums, source, err)
	}
	if len(data) > maxChecksumsSize {
		return nil, fmt.Errorf("%w: %s: larger than %d bytes", ErrChecksums, source, maxChecksumsSize)
	}
	if bytes.Contains(data, []byte("-----BEGIN PGP SIGNED MESSAGE-----")) {
		return nil, fmt.Errorf("%w: %s: a clearsigned message: verify it first (VerifyClearsigned) and parse the content it returns", ErrChecksums, source)
	}
	cs := &Checksums{Source: source}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), maxChecksumsSize)
	n, bare := 0, 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		e, err := parseChecksumLine(line)
		if err != nil {
			return nil, fmt.Errorf("%w: %s:%d: %w", ErrChecksums, source, n, err)
		}
		e.Line = n
		if e.Name == "" {
			bare++
		}
		cs.Entries = append(cs.Entries, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %s:%d: %w", ErrChecksums, source, n+1, err)
	}
	if len(cs.Entries) == 0 {
		return nil, fmt.Errorf("%w: %s: no checksum in it", ErrChecksums, source)
	}
	if bare > 0 && len(cs.Entries) > 1 {
		return nil, fmt.Errorf("%w: %s:%d: a digest without a file name is only allowed as the file's single entry", ErrChecksums, source, firstBare(cs.Entries))
	}
	return cs, nil
}

func firstBare(es []ChecksumEntry) int {
	for _, e := range es {
		if e.Name == "" {
			return e.Line
		}
	}
	return 0
}

func parseChecksumLine(line string) (ChecksumEntry, error) {
	// BSD style: "SHA256 (name) = hex".
	// "HEX  name (1).tgz" is not one: the algorithm is a single word.
	if alg, rest, ok := strings.Cut(line, " ("); ok && !isHex(alg) && !strings.ContainsAny(alg, " \t") {
		i := strings.LastIndex(rest, ") = ")
		if i < 0 {
			return ChecksumEntry{}, fmt.Errorf("BSD-style line %q lacks \") = \"", clip(line))
		}
		name, hexValue := rest[:i], strings.TrimSpace(rest[i+4:])
		a := Algorithm(strings.ToLower(alg))
		if a.Size() == 0 {
			return ChecksumEntry{}, fmt.Errorf("algorithm %q is not accepted (want SHA256 or SHA512)", alg)
		}
		d, err := New(a, hexValue)
		if err != nil {
			return ChecksumEntry{}, err
		}
		if name == "" {
			return ChecksumEntry{}, errors.New("empty file name")
		}
		return ChecksumEntry{Name: name, Digest: d}, nil
	}
	hexValue, name := line, ""
	if i := strings.IndexAny(line, " \t"); i >= 0 {
		hexValue, name = line[:i], line[i+1:]
	}
	d, err := digestFromHex(hexValue)
	if err != nil {
		return ChecksumEntry{}, err
	}
	// "hex  name" (text mode) or "hex name"; "hex *name" (binary mode).
	name = strings.TrimPrefix(strings.TrimLeft(name, " \t"), "*")
	if strings.ContainsAny(name, "\x00") {
		return ChecksumEntry{}, errors.New("file name contains a NUL byte")
	}
	return ChecksumEntry{Name: name, Digest: d}, nil
}

// digestFromHex infers the algorithm from the length.
func digestFromHex(h string) (Digest, error) {
	switch len(h) {
	case 64:
		return New(SHA256, h)
	case 128:
		return New(SHA512, h)
	case 32, 40:
		return Digest{}, fmt.Errorf("%d hex digits is an MD5 or SHA-1 digest, which is not accepted (want sha256: 64 or sha512: 128)", len(h))
	}
	return Digest{}, fmt.Errorf("%q is not a sha256 (64 hex digits) or sha512 (128 hex digits) digest", clip(h))
}

func isHex(s string) bool {
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
			return false
		}
	}
	return s != ""
}

func clip(s string) string {
	if len(s) > 80 {
		return utf8cut.Prefix(s, 80) + "..."
	}
	return s
}

// Lookup returns the digest for file name (a base name such as
// "helm-v3.15.4-linux-amd64.tar.gz"). A bare-digest file answers for any name.
// Otherwise the entries whose name equals name ("./name" is the same name)
// win; failing that, entries whose
// base name (after "./" or "dir/") equals name match when there is exactly one
// per algorithm. Both a sha256 and a sha512 entry may match: they come back as
// a Set.
func (c *Checksums) Lookup(name string) (Set, error) {
	if len(c.Entries) == 1 && c.Entries[0].Name == "" {
		return Set{c.Entries[0].Digest.Algorithm: c.Entries[0].Digest.Hex}, nil
	}
	if set, err := c.collect(name, func(e ChecksumEntry) bool { return path.Clean(e.Name) == path.Clean(name) }); err != nil || len(set) > 0 {
		return set, err
	}
	set, err := c.collect(name, func(e ChecksumEntry) bool { return path.Base(e.Name) == name })
	if err != nil {
		return nil, err
	}
	if len(set) == 0 {
		return nil, fmt.Errorf("%w: %s has no entry for %q (%s)", ErrChecksums, c.Source, name, plural.Count(len(c.Entries), "entry", "entries"))
	}
	return set, nil
}

func (c *Checksums) collect(name string, match func(ChecksumEntry) bool) (Set, error) {
	set := Set{}
	lines := map[Algorithm]int{}
	for _, e := range c.Entries {
		if !match(e) {
			continue
		}
		if prev, ok := lines[e.Digest.Algorithm]; ok {
			if set[e.Digest.Algorithm] != e.Digest.Hex {
				return nil, fmt.Errorf("%w: %s: lines %d and %d give different %s digests for %q", ErrChecksums, c.Source, prev, e.Line, e.Digest.Algorithm, name)
			}
			continue
		}
		lines[e.Digest.Algorithm] = e.Line
		set[e.Digest.Algorithm] = e.Digest.Hex
	}
	return set, nil
}
