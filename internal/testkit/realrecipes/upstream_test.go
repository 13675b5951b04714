package realrecipes

import (
	"bufio"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// upstreamDir is the copy of ../shared/upstream the recipes were written from.
const upstreamDir = "../../../testdata/upstream"

// pin is one digest value the upstream data vouches for, and what for.
type pin struct {
	algorithm string // sha256, sha512
	hex       string
	url       string // the exact artifact URL, when the data gives it
	file      string // the artifact's file name, when only that is given
	version   string // the release it belongs to ("" when unknown)
	arch      string // Debian architecture ("" when unknown)
	date      string // release date YYYY-MM-DD ("" when unknown)
	from      string // file:line of the value
}

// upstreamPins parses every file of testdata/upstream that carries digests.
func upstreamPins(t *testing.T) []pin {
	t.Helper()
	var pins []pin
	pins = append(pins, parseVersionsMD(t, filepath.Join(upstreamDir, "versions.md"))...)
	pins = append(pins, parseChangelogSHA512(t, filepath.Join(upstreamDir, "kubernetes-changelog-sha512.txt"))...)
	pins = append(pins, parseKubespray(t, filepath.Join(upstreamDir, "kubespray-checksums.yml"))...)
	pins = append(pins, parseSumsFile(t, filepath.Join(upstreamDir, "real-checksums-crosschecked.txt"))...)
	if len(pins) < 100 {
		t.Fatalf("only %d digests parsed from %s: has the data's format changed?", len(pins), upstreamDir)
	}
	return pins
}

var (
	hex64  = regexp.MustCompile("^`?([0-9a-f]{64})`?$")
	dateRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
)

// parseVersionsMD reads the component tables of versions.md: | component |
// version | release date | amd64 sha256 | arm64 sha256 | sources | URLs |.
func parseVersionsMD(t *testing.T, file string) []pin {
	var pins []pin
	forLines(t, file, func(n int, line string) {
		cells := strings.Split(strings.Trim(line, "| "), "|")
		if len(cells) != 7 {
			return
		}
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		amd, arm := hex64.FindStringSubmatch(cells[3]), hex64.FindStringSubmatch(cells[4])
		if amd == nil || arm == nil || !dateRE.MatchString(cells[2]) {
			return
		}
		urls := strings.Split(cells[6], "<br>")
		if len(urls) != 2 {
			t.Fatalf("%s:%d: want two URLs (amd64, arm64), got %q", file, n, cells[6])
		}
		for i, m := range [][]string{amd, arm} {
			pins = append(pins, pin{algorithm: "sha256", hex: m[1], url: urls[i], version: cells[1], arch: []string{"amd64", "arm64"}[i],
				date: cells[2], from: fmt.Sprintf("%s:%d", file, n)})
		}
	})
	return pins
}

var (
	changelogGroupRE = regexp.MustCompile(`^# v(\S+) \(released (\d{4}-\d{2}-\d{2})\) (https://\S+)/<filename>$`)
	sumLineRE        = regexp.MustCompile(`^([0-9a-f]{64}|[0-9a-f]{128})  (\S+)$`)
	archInNameRE     = regexp.MustCompile(`-(amd64|arm64)[.-]`)
)

// parseChangelogSHA512 reads groups of "# vX.Y.Z (released DATE) URL/<filename>"
// followed by sha512sum lines.
func parseChangelogSHA512(t *testing.T, file string) []pin {
	var (
		pins                   []pin
		version, date, urlBase string
	)
	forLines(t, file, func(n int, line string) {
		if m := changelogGroupRE.FindStringSubmatch(line); m != nil {
			version, date, urlBase = m[1], m[2], m[3]
			return
		}
		m := sumLineRE.FindStringSubmatch(line)
		if m == nil {
			return
		}
		if version == "" {
			t.Fatalf("%s:%d: digest before any version header", file, n)
		}
		p := pin{algorithm: "sha512", hex: m[1], url: urlBase + "/" + m[2], file: m[2], version: version, date: date, from: fmt.Sprintf("%s:%d", file, n)}
		if a := archInNameRE.FindStringSubmatch(m[2]); a != nil {
			p.arch = a[1]
		}
		pins = append(pins, p)
	})
	return pins
}

// parseKubespray reads COMPONENT_checksums: {ARCH: {VERSION: sha256:HEX}}.
// Kubespray names a component differently from its file, so a value vouches
// for an architecture and version only.
func parseKubespray(t *testing.T, file string) []pin {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]map[string]map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	var pins []pin
	for comp, arches := range doc {
		for arch, versions := range arches {
			for v, val := range versions {
				s, ok := val.(string)
				if !ok || !strings.HasPrefix(s, "sha256:") {
					continue // 0 for "not published"
				}
				pins = append(pins, pin{algorithm: "sha256", hex: strings.TrimPrefix(s, "sha256:"), version: v, arch: arch,
					from: fmt.Sprintf("%s: %s.%s.%s", file, comp, arch, v)})
			}
		}
	}
	return pins
}

// parseSumsFile reads "HEX  FILE" lines; the file name is all that is known.
func parseSumsFile(t *testing.T, file string) []pin {
	var pins []pin
	forLines(t, file, func(n int, line string) {
		if m := sumLineRE.FindStringSubmatch(line); m != nil {
			pins = append(pins, pin{algorithm: "sha256", hex: m[1], file: m[2], from: fmt.Sprintf("%s:%d", file, n)})
		}
	})
	return pins
}

func forLines(t *testing.T, file string, each func(n int, line string)) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		each(n, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

// vouch returns the upstream values that vouch for hex as the digest of url
// (Debian architecture arch, upstream version version): the same value given
// for this exact URL, or for this file name, or (kubespray) for this
// architecture and version.
func vouch(pins []pin, algorithm, hex, url, arch, version string) []pin {
	var out []pin
	for _, p := range pins {
		if p.algorithm != algorithm || p.hex != hex {
			continue
		}
		switch {
		case p.url != "":
			if p.url != url {
				continue
			}
		case p.file != "":
			if p.file != path.Base(url) {
				continue
			}
		default:
			if p.arch != arch || strings.TrimPrefix(p.version, "v") != strings.TrimPrefix(version, "v") {
				continue
			}
		}
		out = append(out, p)
	}
	return out
}
