package recipe

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/updeb/updeb/pkg/verify/sigstore"
)

// onlyValues ends the finding for a template action that is not a value.
const onlyValues = "only a value such as {{.Version}} may appear between {{ and }} (known: .Arch .DebArch .DebianVersion .Major .Minor .Name .Patch .Version), or {{\"{{\"}} for a literal {{; functions, pipelines, range, if and template calls are not part of recipe templates"

const (
	hexA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	hexB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

// testPublicKey is a PEM public key (npm's registry key, as
// pkg/verify/sigstore's testdata holds it) for the pinned-key form.
const testPublicKey = "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE1Olb3zMAFFxXKHiIkQO5cJ3Yhl5i6UPp+IhuteBJbuHcA5UogKo0EWtlWwW6KSaKoTNEYL7JlCQiVnkhBktUgg==\n-----END PUBLIC KEY-----\n"

// sigKey is the pinned-key Sigstore form, valid with writeProject's files.
const sigKey = "{bundle-url: \"https://example.org/x-{{.Arch}}.sigstore.json\", public-key: tool.pub}"

// sigOpenPGP is baseRecipe's signature, which the Sigstore cases replace.
// sigReusable names slsa-github-generator's reusable workflow as the signer
// of o/x's attestations.
const sigReusable = "{github-attestations: o/x, identity: \"https://github.com/slsa-framework/slsa-github-generator/.github/workflows/generator_generic_slsa3.yml@refs/tags/v2.1.0\", issuer: https://token.actions.githubusercontent.com}"

const sigOpenPGP = "{url: \"https://example.org/x-{{.Arch}}.tar.gz.asc\", keyring: keys/k.asc}"

// baseRecipe is valid; each case edits it. Line numbers in the expected
// messages refer to this text (line 1 is "name: x").
const baseRecipe = `name: xx
version: 1.0.0
release-date: 2025-01-02
license: Apache-2.0
copyright: X Authors
architectures: [amd64, arm64]
sources:
  - name: bin
    url: https://example.org/x-{{.Arch}}.tar.gz
    sha256: {amd64: ` + hexA + `, arm64: ` + hexB + `}
    signature: {url: "https://example.org/x-{{.Arch}}.tar.gz.asc", keyring: keys/k.asc}
packages:
  - name: xx
    summary: X tool
    description: The X tool.
    section: admin
    files:
      - {source: bin, path: x, dest: /usr/bin/x}
      - {file: x.service, dest: /lib/systemd/system/x.service}
    systemd-units: [x.service]
`

// writeProject writes a project root with recipes/x.yaml, its keyring and its
// unit file, and returns the recipe path.
func writeProject(t *testing.T, text string) (dir, file string) {
	t.Helper()
	dir = t.TempDir()
	for name, content := range map[string]string{
		"recipes/x.yaml":           text,
		"recipes/x/x.service":      "[Service]\nExecStart=/usr/bin/x\n\n[Install]\nWantedBy=multi-user.target\n",
		"recipes/x/x.default":      "DAEMON_ARGS=\n",
		"recipes/x/x.timer":        "[Timer]\nOnCalendar=daily\n\n[Install]\nWantedBy=timers.target\n",
		"keys/k.asc":               "placeholder\n",
		"recipes/x/sub/x.default":  "DAEMON_ARGS=\n",
		"recipes/x/tool.pub":       testPublicKey,
		"recipes/x/whole.postinst": "#!/bin/sh\nset -e\necho\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, filepath.Join(dir, "recipes", "x.yaml")
}

// loadFindings loads text as recipes/x.yaml and returns its findings with
// the temporary folder removed from the file names.
func loadFindings(t *testing.T, text string) []string {
	t.Helper()
	dir, file := writeProject(t, text)
	_, err := Load(file, LoadOptions{})
	if err == nil {
		return nil
	}
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrInvalid) {
		t.Fatalf("Load error is not a *recipe.Error wrapping ErrInvalid: %v", err)
	}
	var out []string
	for _, f := range e.Findings {
		s := strings.ReplaceAll(f.String(), dir, "$DIR")
		out = append(out, strings.TrimPrefix(s, "$DIR/"))
	}
	return out
}

func TestLoadValid(t *testing.T) {
	if got := loadFindings(t, baseRecipe); got != nil {
		t.Fatalf("base recipe has findings:\n%s", strings.Join(got, "\n"))
	}
	if got := loadFindings(t, strings.Replace(baseRecipe, sigOpenPGP, sigKey, 1)); got != nil {
		t.Fatalf("pinned-key recipe has findings:\n%s", strings.Join(got, "\n"))
	}
	// A reusable workflow of another repository signs, for the run of the
	// repository named.
	if got := loadFindings(t, strings.Replace(baseRecipe, sigOpenPGP, strings.Replace(sigReusable, "}", ", source-repository: https://github.com/o/x}", 1), 1)); got != nil {
		t.Fatalf("reusable-workflow recipe has findings:\n%s", strings.Join(got, "\n"))
	}
	// With a revision, a "-" in build metadata stays in the upstream version.
	if got := loadFindings(t, strings.Replace(baseRecipe, "version: 1.0.0", "version: 1.0.0+exp-sha", 1)); got != nil {
		t.Fatalf("recipe with build metadata has findings:\n%s", strings.Join(got, "\n"))
	}
}

// TestKindFromURL: a source without kind: reads its URL's suffix as
// pkg/archive reads a file name's, so a .txz or .TGZ upstream is the archive
// it is, not a raw file packaged as it was downloaded.
func TestKindFromURL(t *testing.T) {
	urls := []string{"x.tar.gz", "x.tgz", "x.TGZ", "x.txz", "x.Tar.Xz?dl=1", "x.zip", "x"}
	kinds := []string{"tar.gz", "tar.gz", "tar.gz", "tar.xz", "tar.xz", "zip", "raw"}
	for i, u := range urls {
		text := strings.Replace(baseRecipe, "url: https://example.org/x-{{.Arch}}.tar.gz\n", "url: https://example.org/"+u+"\n", 1)
		if kinds[i] == "raw" {
			text = strings.Replace(text, "path: x, ", "", 1)
		}
		_, p := writeProject(t, text)
		r, err := Load(p, LoadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		if r.Sources[0].Kind != kinds[i] {
			t.Errorf("%s: kind %q, want %q", u, r.Sources[0].Kind, kinds[i])
		}
	}
}

// TestLoadEndOfLife: the end-of-life mark is a day, kept as UTC midnight.
func TestLoadEndOfLife(t *testing.T) {
	_, p := writeProject(t, strings.Replace(baseRecipe, "release-date: 2025-01-02\n", "release-date: 2025-01-02\nend-of-life: 2026-10-27\n", 1))
	r, err := Load(p, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 10, 27, 0, 0, 0, 0, time.UTC); !r.EndOfLife.Equal(want) {
		t.Errorf("end-of-life %v, want %v", r.EndOfLife, want)
	}
}

func TestLoadErrors(t *testing.T) {
	type edit struct{ old, new string }
	tests := []struct {
		name  string
		edits []edit
		want  []string
	}{
		{"unknown top-level field", []edit{{"copyright: X Authors\n", "copyright: X Authors\ncolour: blue\n"}},
			[]string{"recipes/x.yaml:6:1: recipe: unknown field \"colour\" (known: architectures, copyright, end-of-life, epoch, files-dir, homepage, license, license-text, maintainer, name, packages, release-date, repo, requires, revision, sources, version, watch)"}},
		{"unknown nested field", []edit{{"    section: admin\n", "    section: admin\n    sektion: admin\n"}},
			[]string{"recipes/x.yaml:17:5: package: unknown field \"sektion\" (known: alternatives, architecture, breaks, conflicts, depends, description, directories, dynamic, files, hardlinks, lintian-overrides, name, pre-depends, priority, provides, recommends, replaces, scripts, section, suggests, summary, symlinks, system-user, systemd-units, triggers)"}},
		{"duplicate field", []edit{{"license: Apache-2.0\n", "license: Apache-2.0\nlicense: MIT\n"}},
			[]string{"recipes/x.yaml:5:1: recipe: field \"license\" given twice"}},
		{"missing required fields", []edit{{"name: xx\n", ""}, {"    section: admin\n", ""}},
			[]string{
				"recipes/x.yaml:1:1: recipe: missing required field \"name\"",
				"recipes/x.yaml:12:5: package: missing required field \"section\"",
			}},
		{"wrong types", []edit{{"name: xx\n", "name: [x]\n"}, {"architectures: [amd64, arm64]", "architectures: amd64"}, {"summary: X tool", "summary: {a: b}"}},
			[]string{
				"recipes/x.yaml:1:7: name: expected a string, found a list",
				"recipes/x.yaml:6:16: architectures: expected a list [amd64, arm64] or a mapping {amd64: x86_64}, found \"amd64\"",
				"recipes/x.yaml:14:14: summary: expected a string, found a mapping",
			}},
		{"epoch and bool types", []edit{{"version: 1.0.0\n", "version: 1.0.0\nepoch: one\n"}, {"    section: admin\n", "    section: admin\n    dynamic: yes\n"}},
			[]string{
				"recipes/x.yaml:3:8: epoch: expected an integer, found \"one\"",
				"recipes/x.yaml:18:14: dynamic: expected true or false, found \"yes\"",
			}},
		// An epoch past dpkg's limit is refused at the epoch, not at the version.
		{"epoch too big", []edit{{"version: 1.0.0\n", "version: 1.0.0\nepoch: 2147483648\n"}},
			[]string{"recipes/x.yaml:3:8: epoch: must be 0 to 2147483647 (dpkg's limit), found 2147483648"}},
		// yaml.v3 reads 010 as octal 8 and 08 as a float; YAML 1.2 and the
		// JSON schema read both as decimal: refused, whichever was meant.
		{"integers with a leading zero", []edit{{"version: 1.0.0\n", "version: 1.0.0\nepoch: 010\n"}, {"    section: admin\n", "    section: admin\n    alternatives: [{name: x, link: /usr/bin/xx, path: /usr/bin/x, priority: 08}]\n"}},
			[]string{
				"recipes/x.yaml:3:8: epoch: 010 has a leading zero, which YAML reads as octal (8): write it without the leading zero (10)",
				"recipes/x.yaml:18:77: alternative priority: 08 has a leading zero, which YAML reads as a float, not an integer: write it without the leading zero (8)",
			}},
		{"integers not in decimal", []edit{{"version: 1.0.0\n", "version: 1.0.0\nepoch: 0x10\n"}, {"    section: admin\n", "    section: admin\n    alternatives: [{name: x, link: /usr/bin/xx, path: /usr/bin/x, priority: 1_000}]\n"}},
			[]string{
				"recipes/x.yaml:3:8: epoch: 0x10 is written in another base than decimal, or with _: write it as 16",
				"recipes/x.yaml:18:77: alternative priority: 1_000 is written in another base than decimal, or with _: write it as 1000",
			}},
		{"bad version and release date", []edit{{"version: 1.0.0", "version: release-1"}, {"release-date: 2025-01-02", "release-date: 2025-13-02"}},
			[]string{
				"recipes/x.yaml:2:10: version: invalid Debian version: upstream version \"release-1\" must start with a digit (after an optional v)",
				"recipes/x.yaml:3:15: release-date: \"2025-13-02\" is neither YYYY-MM-DD nor RFC 3339 (2006-01-02T15:04:05Z)",
			}},
		// The build dates every file and the provenance signature by the
		// release date: pkg/deb refuses one at or before the Unix epoch, and an
		// OpenPGP creation time past 2106 wrapped around to 2063.
		{"release date at the Unix epoch", []edit{{"release-date: 2025-01-02", "release-date: 1970-01-01"}},
			[]string{"recipes/x.yaml:3:15: release-date: \"1970-01-01\" is before 1976: every file of the package is dated by it, and lintian reports a file dated 1975 or before as ancient (package-contains-ancient-file, an error)"}},
		{"release date in 1975", []edit{{"release-date: 2025-01-02", "release-date: 1975-12-31T23:59:59Z"}},
			[]string{"recipes/x.yaml:3:15: release-date: \"1975-12-31T23:59:59Z\" is before 1976: every file of the package is dated by it, and lintian reports a file dated 1975 or before as ancient (package-contains-ancient-file, an error)"}},
		{"release date before the Unix epoch", []edit{{"release-date: 2025-01-02", "release-date: 1969-12-31T23:00:00Z"}},
			[]string{"recipes/x.yaml:3:15: release-date: \"1969-12-31T23:00:00Z\" is before 1976: every file of the package is dated by it, and lintian reports a file dated 1975 or before as ancient (package-contains-ancient-file, an error)"}},
		{"release date past OpenPGP's clock", []edit{{"release-date: 2025-01-02", "release-date: 2200-01-01"}},
			[]string{"recipes/x.yaml:3:15: release-date: \"2200-01-01\" is after 2106-02-07T06:28:15Z, the last second an OpenPGP signature (the provenance record's) can be dated by"}},
		// White space around a version is no part of it: trimmed, it passed
		// the check while {{.Version}} rendered with it (a dest, a package
		// name, a URL) and the release set compared it as written.
		{"version with white space", []edit{{"version: 1.0.0", "version: \"1.0.0 \""}},
			[]string{"recipes/x.yaml:2:10: version: invalid Debian version: upstream version \"1.0.0 \" has white space around it"}},
		// Build metadata may hold a "-": with a revision it stays in the
		// upstream version (1.0.0+exp-sha-1), without one dpkg splits there.
		{"hyphen in build metadata without a revision", []edit{{"version: 1.0.0", "version: 1.0.0+exp-sha\nrevision: \"\""}},
			[]string{"recipes/x.yaml:2:10: version: Debian version \"1.0.0+exp-sha\": with revision \"\" dpkg reads \"sha\" as its revision and \"1.0.0+exp\" as the upstream version: give a revision"}},
		{"bad end-of-life", []edit{{"release-date: 2025-01-02\n", "release-date: 2025-01-02\nend-of-life: soon\n"}},
			[]string{"recipes/x.yaml:4:14: end-of-life: \"soon\" is not a day as YYYY-MM-DD (the day the version line lost upstream support)"}},
		// Go's zero time: the recipe read as not marked at all.
		{"end-of-life of the year 1", []edit{{"release-date: 2025-01-02\n", "release-date: 2025-01-02\nend-of-life: 0001-01-01\n"}},
			[]string{"recipes/x.yaml:4:14: end-of-life: \"0001-01-01\" is before 1970: write the day the version line lost upstream support, or no end-of-life"}},
		{"bad package and source names", []edit{{"  - name: xx\n", "  - name: X_tool\n"}, {"  - name: bin\n", "  - name: Bin!\n"}, {"source: bin,", "source: Bin!,"}},
			[]string{
				"recipes/x.yaml:8:11: source name: \"Bin!\" is not [a-z0-9][a-z0-9._-]*",
				"recipes/x.yaml:13:11: package name: \"X_tool\" is not a valid Debian package name (want [a-z0-9][a-z0-9+.-]+, lower case)",
			}},
		{"bad template", []edit{{"x-{{.Arch}}.tar.gz\n", "x-{{.Arch}.tar.gz\n"}, {"path: x,", "path: \"{{.Os}}/x\","}},
			[]string{
				"recipes/x.yaml:9:10: url: template \"https://example.org/x-{{.Arch}.tar.gz\": \"{{\" at byte 22 has no closing \"}}\"",
				"recipes/x.yaml:18:29: path: template \"{{.Os}}/x\": {{.Os}} at byte 0: no value named .Os (known: .Arch .DebArch .DebianVersion .Major .Minor .Name .Patch .Version)",
			}},
		{"template functions refused", []edit{{"dest: /usr/bin/x}", "dest: \"/usr/bin/{{printf \\\"%s\\\" .Name}}\"}"}},
			[]string{"recipes/x.yaml:18:38: dest: template \"/usr/bin/{{printf \\\"%s\\\" .Name}}\": {{printf \"%s\" .Name}} at byte 9: " + onlyValues}},
		{"URL with CR after rendering", []edit{{"    url: https://example.org/x-{{.Arch}}.tar.gz\n", "    url: \"https://example.org/x\\r-{{.Arch}}.tar.gz\"\n"}},
			[]string{
				"recipes/x.yaml:9:10: url: \"https://example.org/x\\r-amd64.tar.gz\" is not an acceptable download URL: byte 21 is CR; percent-encode it or remove it",
				"recipes/x.yaml:9:10: url: \"https://example.org/x\\r-arm64.tar.gz\" is not an acceptable download URL: byte 21 is CR; percent-encode it or remove it",
			}},
		{"URL climbing with dots", []edit{{"x-{{.Arch}}.tar.gz.asc", "%2e%2e/x-{{.Arch}}.tar.gz.asc"}},
			[]string{
				"recipes/x.yaml:11:22: signature.url: \"https://example.org/%2e%2e/x-amd64.tar.gz.asc\" is not an acceptable download URL: path segment \"%2e%2e\" holds a dot segment (\"..\"); write the path without \".\" and \"..\"",
				"recipes/x.yaml:11:22: signature.url: \"https://example.org/%2e%2e/x-arm64.tar.gz.asc\" is not an acceptable download URL: path segment \"%2e%2e\" holds a dot segment (\"..\"); write the path without \".\" and \"..\"",
			}},
		{"static URL with NUL", []edit{{"    systemd-units: [x.service]\n", "    systemd-units: [x.service]\nwatch: {url: \"https://example.org/\\0\", pattern: \"x-(.*)\"}\n"}},
			[]string{"recipes/x.yaml:21:14: watch.url: \"https://example.org/\\x00\" is not an acceptable download URL: byte 20 is NUL; percent-encode it or remove it"}},
		{"malformed digests", []edit{{"amd64: " + hexA, "amd64: " + hexA[:10]}, {"arm64: " + hexB, "arm64: " + strings.Repeat("z", 64)}},
			[]string{
				"recipes/x.yaml:10:21: sha256.amd64: malformed digest: sha256 digest must be 64 hex characters, found 10 in \"aaaaaaaaaa\"",
				"recipes/x.yaml:10:40: sha256.arm64: malformed digest: sha256 digest \"" + strings.Repeat("z", 64) + "\" is not hexadecimal",
			}},
		{"digest missing for an architecture", []edit{{", arm64: " + hexB, ""}},
			[]string{"recipes/x.yaml:8:5: source bin: no sha256 or sha512 digest pinned for arm64 (every listed architecture needs one)"}},
		{"digest for an unknown architecture", []edit{{"arm64: " + hexB, "arm64: " + hexB + ", riscv64: " + hexB}},
			[]string{"recipes/x.yaml:10:160: sha256: architecture \"riscv64\" is not in architectures (amd64, arm64)"}},
		// An empty mapping pins nothing (its schema asks for one entry).
		{"empty digest mapping", []edit{{"arm64: " + hexB + "}", "arm64: " + hexB + "}\n    sha512: {}"}},
			[]string{"recipes/x.yaml:11:13: sha512: an empty mapping pins nothing: give ARCH: HEX for each architecture, or leave sha512 out"}},
		{"unknown architecture", []edit{{"[amd64, arm64]", "[amd64, arm46]"}},
			[]string{
				"recipes/x.yaml:6:24: architectures: \"arm46\" is not a Debian architecture (e.g. amd64, arm64)",
				"recipes/x.yaml:10:87: sha256: architecture \"arm64\" is not in architectures (amd64)",
			}},
		{"file mapping names no source", []edit{{"source: bin, path: x,", "path: x,"}},
			[]string{"recipes/x.yaml:18:9: file mapping: names no source: give source (+ path) or file"}},
		{"file mapping names an undefined source", []edit{{"source: bin,", "source: bim,"}},
			[]string{"recipes/x.yaml:18:18: file mapping: source \"bim\" is not defined (sources: bin)"}},
		{"path on a raw source", []edit{{"x-{{.Arch}}.tar.gz\n", "x-{{.Arch}}\n"}},
			[]string{"recipes/x.yaml:18:23: file mapping: source \"bin\" is a raw file: leave out path"}},
		{"missing path on an archive source", []edit{{"source: bin, path: x,", "source: bin,"}},
			[]string{"recipes/x.yaml:18:9: file mapping: source \"bin\" is a tar.gz archive: path (the file inside it) is required"}},
		{"dest not absolute or not clean", []edit{{"dest: /usr/bin/x}", "dest: usr/bin/x}"}, {"dest: /lib/systemd/system/x.service}", "dest: /lib/systemd/../x.service}"}},
			[]string{
				"recipes/x.yaml:18:38: dest: \"usr/bin/x\" must be an absolute path",
				"recipes/x.yaml:19:33: dest: \"/lib/systemd/../x.service\" has a \"..\" component: name the path itself",
				"recipes/x.yaml:20:21: systemd-units: x.service is not installed by package xx (add a file with dest /lib/systemd/system/x.service)",
			}},
		{"control character in dest", []edit{{"dest: /usr/bin/x}", "dest: \"/usr/bin/x\\ny\"}"}},
			[]string{"recipes/x.yaml:18:38: dest: \"/usr/bin/x\\ny\" contains a newline or NUL, which dpkg refuses in a file name"}},
		{"tab in dest", []edit{{"dest: /usr/bin/x}", "dest: \"/usr/bin/x\\ty\"}"}},
			[]string{"recipes/x.yaml:18:38: dest: \"/usr/bin/x\\ty\" contains a control character (U+0009): dpkg would take it, but updeb refuses it in recipes, where it is invisible in review"}},
		{"C1 control and bidirectional override in dest", []edit{{"dest: /usr/bin/x}", "dest: \"/usr/bin/x\\u0085\"}"}, {"dest: /lib/systemd/system/x.service}", "dest: \"/lib/systemd/system/x\\u202e.service\"}"}},
			[]string{
				"recipes/x.yaml:18:38: dest: \"/usr/bin/x\\u0085\" contains a control character (U+0085): dpkg would take it, but updeb refuses it in recipes, where it is invisible in review",
				"recipes/x.yaml:19:33: dest: \"/lib/systemd/system/x\\u202e.service\" contains an invisible format character (U+202E: a zero-width or bidirectional control): dpkg would take it, but updeb refuses it in recipes, where review would not see it or would see the name in another order",
				"recipes/x.yaml:20:21: systemd-units: x.service is not installed by package xx (add a file with dest /lib/systemd/system/x.service)",
			}},
		{"zero-width space in a symlink target", []edit{{"    systemd-units: [x.service]\n", "    systemd-units: [x.service]\n    symlinks: [{dest: /usr/bin/y, target: \"x\\u200b\"}]\n"}},
			[]string{"recipes/x.yaml:21:43: symlink target: \"x\\u200b\" contains an invisible format character (U+200B: a zero-width or bidirectional control): dpkg would take it, but updeb refuses it in recipes, where review would not see it or would see the name in another order"}},
		{"dest not clean", []edit{{"dest: /usr/bin/x}", "dest: /usr//bin/./x/}"}},
			[]string{"recipes/x.yaml:18:38: dest: \"/usr//bin/./x/\" is not a clean path (an empty or \".\" component, or a trailing \"/\"): write \"/usr/bin/x\""}},
		{"source path escapes", []edit{{"path: x,", "path: ../x,"}},
			[]string{"recipes/x.yaml:18:29: path: \"../x\" has a \"..\" component, which would leave the folder it is relative to"}},
		{"recipe-local file missing or escaping", []edit{{"{file: x.service,", "{file: y.service,"}},
			[]string{"recipes/x.yaml:19:16: file: $DIR/recipes/x/y.service does not exist"}},
		{"recipe-local file escapes its folder", []edit{{"{file: x.service,", "{file: ../x.yaml,"}},
			[]string{"recipes/x.yaml:19:16: file: \"../x.yaml\" has a \"..\" component, which would leave the folder it is relative to"}},
		{"keyring missing", []edit{{"keyring: keys/k.asc", "keyring: keys/helm.asc"}},
			[]string{"recipes/x.yaml:11:77: signature.keyring: $DIR/keys/helm.asc does not exist"}},
		{"conffile outside /etc", []edit{{"dest: /usr/bin/x}", "dest: /usr/bin/x, conffile: true}"}},
			[]string{"recipes/x.yaml:18:60: conffile: /usr/bin/x is outside /etc; only files under /etc/ may be conffiles (lintian non-etc-file-marked-as-conffile)"}},
		{"duplicate dests", []edit{{"      - {file: x.service,", "      - {file: x.default, dest: /usr/bin/x}\n      - {file: x.service,"}},
			[]string{"recipes/x.yaml:19:33: dest: /usr/bin/x is installed twice in package xx"}},
		// dpkg writes both to one file on merged-/usr systems, and the
		// removal of either package deletes it.
		{"dests that merged /usr makes one", []edit{{"      - {file: x.service,", "      - {file: x.default, dest: /bin/x}\n      - {file: x.service,"}, {"    systemd-units: [x.service]\n", "    systemd-units: [x.service]\n    symlinks: [{dest: /usr/lib/systemd/system/x.service, target: /dev/null}]\n"}},
			[]string{"recipes/x.yaml:19:33: dest: /bin/x is installed twice in package xx as /usr/bin/x (on a merged-/usr system, as every Debian since 12 is, /bin is a symlink to usr/bin)",
				"recipes/x.yaml:22:23: symlink dest: /usr/lib/systemd/system/x.service is installed twice in package xx as /lib/systemd/system/x.service (on a merged-/usr system, as every Debian since 12 is, /lib is a symlink to usr/lib)"}},
		{"dest of a generated file", []edit{{"dest: /usr/bin/x}", "dest: /usr/share/doc/xx/copyright}"}},
			[]string{"recipes/x.yaml:18:38: dest: /usr/share/doc/xx/copyright is generated by updeb (copyright, changelog, lintian overrides); leave it out"}},
		{"a file inside a file", []edit{{"      - {file: x.service,", "      - {file: x.default, dest: /usr/bin/x/y}\n      - {file: x.service,"}},
			[]string{"recipes/x.yaml:19:33: dest: /usr/bin/x/y would be inside /usr/bin/x, which package xx installs as a file: dpkg can put nothing inside it"}},
		{"a symlink where a folder is", []edit{{"    systemd-units: [x.service]\n", "    systemd-units: [x.service]\n    symlinks: [{dest: /usr/bin, target: /bin}]\n"}},
			[]string{"recipes/x.yaml:21:23: symlink dest: /usr/bin is installed as a symlink, but /usr/bin/x (package xx) goes inside it: it must be a directory"}},
		{"a file where updeb writes a folder", []edit{{"dest: /usr/bin/x}", "dest: /usr/share/doc/xx}"}},
			[]string{"recipes/x.yaml:18:38: dest: /usr/share/doc/xx is installed as a file, but /usr/share/doc/xx/copyright (written by updeb for package xx) goes inside it: it must be a directory"}},
		// merged-/usr: /bin, /sbin and /lib* are symlinks into /usr on every
		// Debian since 12, so /bin/x is /usr/bin/x to dpkg's file system (not
		// to its database: the second package overwrites the first's file,
		// and removing it removes the first's).
		{"a file under merged-/usr's other name", []edit{{"      - {file: x.service,", "      - {file: x.default, dest: /bin/x}\n      - {file: x.service,"}},
			[]string{"recipes/x.yaml:19:33: dest: /bin/x is installed twice in package xx as /usr/bin/x (on a merged-/usr system, as every Debian since 12 is, /bin is a symlink to usr/bin)"}},
		{"a file another package installs under merged-/usr's other name", []edit{{"    systemd-units: [x.service]\n", "    systemd-units: [x.service]\n  - name: xy\n    summary: Y tool\n    description: The Y tool.\n    section: admin\n    files: [{file: x.service, dest: /usr/lib/systemd/system/x.service}]\n"}},
			[]string{"recipes/x.yaml:25:37: dest: /usr/lib/systemd/system/x.service is already installed by package xx as /lib/systemd/system/x.service (on a merged-/usr system, as every Debian since 12 is, /lib is a symlink to usr/lib)"}},
		{"a symlink where merged-/usr has a folder", []edit{{"    systemd-units: [x.service]\n", "    systemd-units: [x.service]\n    symlinks: [{dest: /usr/lib/systemd, target: /opt/systemd}]\n"}},
			[]string{"recipes/x.yaml:21:23: symlink dest: /usr/lib/systemd is installed as a symlink, but /lib/systemd/system/x.service (package xx) goes inside it: it must be a directory (on a merged-/usr system, as every Debian since 12 is, /lib is a symlink to usr/lib)"}},
		{"a file inside a symlink under merged-/usr's other name", []edit{{"    systemd-units: [x.service]\n", "    systemd-units: [x.service]\n    symlinks: [{dest: /lib/x, target: /opt/x}]\n  - name: xy\n    summary: Y tool\n    description: The Y tool.\n    section: admin\n    files: [{file: x.default, dest: /usr/lib/x/y}]\n"}},
			[]string{"recipes/x.yaml:26:37: dest: /usr/lib/x/y would be inside /lib/x, which package xx installs as a symlink: dpkg can put nothing inside it (on a merged-/usr system, as every Debian since 12 is, /lib is a symlink to usr/lib)"}},
		// Folders are one on merged-/usr too: a unit in each is fine.
		{"units in /lib and /usr/lib", []edit{{"      - {file: x.service,", "      - {file: x.service, dest: /usr/lib/systemd/system/y.service}\n      - {file: x.service,"}}, nil},
		// dpkg replaced the /lib64 symlink of a merged-/usr root (the way to
		// the dynamic loader) with the package's, and refuses /opt nowhere.
		{"a symlink and a hardlink where every Debian system has a folder", []edit{{"    systemd-units: [x.service]\n", "    systemd-units: [x.service]\n    symlinks: [{dest: /lib64, target: /opt/x}]\n    hardlinks: [{dest: /opt, target: /usr/bin/x}]\n"}},
			[]string{
				"recipes/x.yaml:21:23: symlink dest: /lib64 is a folder of every Debian system (made by base-files, or one of merged-/usr's symlinks into /usr): a package may put files into it, but not install it as a symlink (dpkg refuses the package where base-files owns the path, and replaces the folder where nobody does)",
				"recipes/x.yaml:22:24: hardlink dest: /opt is a folder of every Debian system (made by base-files, or one of merged-/usr's symlinks into /usr): a package may put files into it, but not install it as a file (dpkg refuses the package where base-files owns the path, and replaces the folder where nobody does)",
			}},
		{"a folder of every Debian system stated", []edit{{"    systemd-units: [x.service]\n", "    systemd-units: [x.service]\n    directories: [/opt, /usr/local/bin]\n"}}, nil},
		// useradd: invalid home directory '/var/lib/x:y', and the postinst fails.
		{"a system user's home with a colon", []edit{{"    systemd-units: [x.service]\n", "    systemd-units: [x.service]\n    system-user: {name: x, home: \"/var/lib/x:y\"}\n"}},
			[]string{`recipes/x.yaml:21:34: system-user.home: "/var/lib/x:y" holds a ":", which separates the fields of /etc/passwd: useradd (which adduser runs) refuses such a home, and the postinst would fail`}},
		// adduser found nobody and added nothing, and chown nobody:nobody
		// failed (Debian has no group nobody); a new account named shadow
		// would read /etc/shadow through the group of its name.
		{"a system user of base-passwd's", []edit{{"    systemd-units: [x.service]\n", "    systemd-units: [x.service]\n    system-user: {name: nobody}\n  - name: xy\n    summary: Y tool\n    description: The Y tool.\n    section: admin\n    system-user: {name: shadow}\n"}},
			[]string{
				`recipes/x.yaml:21:25: system-user.name: "nobody" is an account of Debian's base-passwd, which every system has: a system user is the package's own (the postinst makes it, with a group of its name); give files owner: or group: nobody directly instead`,
				`recipes/x.yaml:26:25: system-user.name: "shadow" is an account of Debian's base-passwd, which every system has: a system user is the package's own (the postinst makes it, with a group of its name); give files owner: or group: shadow directly instead`,
			}},
		{"a system user's home with a space", []edit{{"    systemd-units: [x.service]\n", "    systemd-units: [x.service]\n    system-user: {name: x, home: \"/var/lib/x y\"}\n"}}, nil},
		// dpkg let the file replace another package's maintainer script:
		// removing that package ran it.
		{"a file, a symlink and a folder in dpkg's own state", []edit{{"    systemd-units: [x.service]\n", "    systemd-units: [x.service]\n    hardlinks: [{dest: /var/lib/dpkg/info/base-files.prerm, target: /usr/bin/x}]\n    symlinks: [{dest: /etc/alternatives/editor, target: /usr/bin/x}]\n    directories: [/var/lib/dpkg/updates/x]\n"}},
			[]string{
				"recipes/x.yaml:21:24: hardlink dest: /var/lib/dpkg/info/base-files.prerm is inside /var/lib/dpkg: a package may install nothing there: a file there would replace what dpkg keeps of other packages (their maintainer scripts, file lists, alternatives), unseen by review",
				"recipes/x.yaml:22:23: symlink dest: /etc/alternatives/editor is inside /etc/alternatives: a package may install nothing there: a file there would replace what dpkg keeps of other packages (their maintainer scripts, file lists, alternatives), unseen by review",
				"recipes/x.yaml:23:19: directories: /var/lib/dpkg/updates/x is inside /var/lib/dpkg: a package may install nothing there: a file there would replace what dpkg keeps of other packages (their maintainer scripts, file lists, alternatives), unseen by review",
			}},
		// touch /proc/x: No such file or directory; /dev is a devtmpfs.
		{"a file in the kernel's file systems", []edit{{"    systemd-units: [x.service]\n", "    systemd-units: [x.service]\n    directories: [/proc/x, /sys/x]\n    symlinks: [{dest: /dev/x, target: /usr/bin/x}]\n"}},
			[]string{
				"recipes/x.yaml:21:19: directories: /proc/x is inside /proc: a package may install nothing there: it is the kernel's procfs, where dpkg can create nothing, and the installation would fail",
				"recipes/x.yaml:21:28: directories: /sys/x is inside /sys: a package may install nothing there: it is the kernel's sysfs, where dpkg can create nothing, and the installation would fail",
				"recipes/x.yaml:22:23: symlink dest: /dev/x is inside /dev: a package may install nothing there: it is the kernel's devtmpfs, made anew at every boot: what dpkg puts there is gone after the next one, while dpkg counts it installed",
			}},
		// The postinst ran chown "$updeb_user:root" /usr/bin: the daemon
		// account could replace every command.
		{"a folder of every Debian system given away", []edit{{"    systemd-units: [x.service]\n", "    systemd-units: [x.service]\n    system-user: {name: x}\n    directories: [{path: /usr/bin, owner: x}, {path: /lib, mode: \"0700\"}, {path: /etc, group: adm}, /var/log]\n"}},
			[]string{
				"recipes/x.yaml:22:26: directories: /usr/bin is a folder of every Debian system: the postinst would hand it over to the system user x; leave owner and group root",
			}},
		// apt-get upgrade replaced the real libc6 and dpkg with the recipe's
		// packages of a higher version, and Conflicts: bash had it removed.
		{"a package named after one every Debian system has", []edit{{"  - name: xx\n", "  - name: libc6\n"}, {"    section: admin\n", "    section: admin\n    provides: [dpkg]\n    replaces: [\"coreutils (<< 99)\"]\n    conflicts: [\"bash (<< 9)\"]\n    breaks: [login]\n    depends: [bash]\n  - name: systemd\n    summary: Y tool\n    description: The Y tool.\n    section: admin\n"}},
			[]string{
				`recipes/x.yaml:13:11: package name: "libc6" is a package every Debian system has (needed by the essential packages or to boot and update a node): with a higher version, apt would replace the real one with this package on every node at the next upgrade; give the package a name of its own`,
				`recipes/x.yaml:17:16: provides: "dpkg" names dpkg, a package every Debian system has (Essential: yes): Provides: dpkg would stand in for it, satisfying what depends on it on every node; leave it out`,
				`recipes/x.yaml:18:16: replaces: "coreutils (<< 99)" names coreutils, a package every Debian system has (Essential: yes): Replaces: coreutils would let the package overwrite its files on every node; leave it out`,
				`recipes/x.yaml:19:17: conflicts: "bash (<< 9)" names bash, a package every Debian system has (Essential: yes): Conflicts: bash would have apt remove it on every node; leave it out`,
				`recipes/x.yaml:20:14: breaks: "login" names login, a package every Debian system has (Essential: yes): Breaks: login would have apt remove it on every node; leave it out`,
				`recipes/x.yaml:22:11: package name: "systemd" is a package every Debian system has (needed by the essential packages or to boot and update a node): with a higher version, apt would replace the real one with this package on every node at the next upgrade; give the package a name of its own`,
			}},
		{"a conffile whose name ends in a space", []edit{{"dest: /usr/bin/x}", "dest: \"/etc/x \"}"}},
			[]string{"recipes/x.yaml:18:38: dest: \"/etc/x \" is a conffile whose name ends in white space, which dpkg's record of conffiles loses (it would never find the file again): rename it, or say conffile: false"}},
		{"a conffile too long for its .dpkg-dist", []edit{{"dest: /usr/bin/x}", "dest: /etc/" + strings.Repeat("c", 246) + "}"}},
			[]string{fmt.Sprintf("recipes/x.yaml:18:38: dest: %q is a conffile and has a name of 246 bytes: dpkg keeps the package's version of a changed conffile as NAME.dpkg-dist, which must fit in a file name (255 bytes), so at most 245: rename it, or say conffile: false", clip("/etc/"+strings.Repeat("c", 246)))}},
		{"hardlink to what the package does not install", []edit{{"    systemd-units: [x.service]\n", "    systemd-units: [x.service]\n    hardlinks: [{dest: /usr/bin/y, target: /usr/bin/z}]\n"}},
			[]string{"recipes/x.yaml:21:44: hardlink target: /usr/bin/z is not a file of package xx (a hardlink is another name of a file the package installs)"}},
		{"hardlink under /etc", []edit{{"    systemd-units: [x.service]\n", "    systemd-units: [x.service]\n    hardlinks: [{dest: /etc/y, target: /usr/bin/x}]\n"}},
			[]string{"recipes/x.yaml:21:24: hardlink dest: /etc/y is under /etc/, where it would be a conffile: install a copy instead (a second file mapping)"}},
		{"hardlink where a file is", []edit{{"    systemd-units: [x.service]\n", "    systemd-units: [x.service]\n    hardlinks: [{dest: /lib/systemd/system/x.service, target: /usr/bin/x}]\n"}},
			[]string{"recipes/x.yaml:21:24: hardlink dest: /lib/systemd/system/x.service is installed twice in package xx"}},
		{"systemd unit not installed", []edit{{"[x.service]", "[x.service, y.service]"}},
			[]string{"recipes/x.yaml:20:32: systemd-units: y.service is not installed by package xx (add a file with dest /lib/systemd/system/y.service)"}},
		{"signature neither url+keyring nor none", []edit{{"{url: \"https://example.org/x-{{.Arch}}.tar.gz.asc\", keyring: keys/k.asc}", "{url: https://example.org/x.asc}"}},
			[]string{"recipes/x.yaml:11:16: signature: url given without keyring"}},
		{"signature none without a reason", []edit{{"{url: \"https://example.org/x-{{.Arch}}.tar.gz.asc\", keyring: keys/k.asc}", "none"}},
			[]string{"recipes/x.yaml:11:16: signature: \"none\" needs a reason: signature: {none: \"upstream publishes no signature; trust = pinned digest\"}"}},
		{"signature both", []edit{{"keyring: keys/k.asc}", "keyring: keys/k.asc, none: unsigned}"}},
			[]string{"recipes/x.yaml:11:16: signature: give one form, not several: " + signatureForms}},
		{"sigstore without identity", []edit{{sigOpenPGP, "{sig-url: https://example.org/x.sig, cert-url: https://example.org/x.cert, issuer: https://accounts.google.com}"}},
			[]string{"recipes/x.yaml:11:16: signature: a Sigstore signature needs identity: (the certificate's exact identity) or identity-regexp: (an anchored regexp); there is no \"any identity\" form"}},
		{"sigstore without issuer", []edit{{sigOpenPGP, "{bundle-url: https://example.org/x.json, identity: a@example.org}"}},
			[]string{"recipes/x.yaml:11:16: signature: a Sigstore signature needs issuer: the OIDC issuer URL (e.g. https://accounts.google.com, https://token.actions.githubusercontent.com)"}},
		{"sigstore both identity forms", []edit{{sigOpenPGP, "{bundle-url: https://example.org/x.json, identity: a@example.org, identity-regexp: '^a@example\\.org$', issuer: https://accounts.google.com}"}},
			[]string{"recipes/x.yaml:11:16: signature: give identity or identity-regexp, not both"}},
		{"sigstore regexp not anchored", []edit{{sigOpenPGP, "{bundle-url: https://example.org/x.json, identity-regexp: 'a@example\\.org', issuer: https://accounts.google.com}"}},
			[]string{"recipes/x.yaml:11:74: signature.identity-regexp: \"a@example\\\\.org\" must be anchored: start with ^ and end with $ (the whole identity must match)"}},
		{"sigstore regexp does not compile", []edit{{sigOpenPGP, "{bundle-url: https://example.org/x.json, identity-regexp: '^(a$', issuer: https://accounts.google.com}"}},
			[]string{"recipes/x.yaml:11:74: signature.identity-regexp: error parsing regexp: missing closing ): `^(a$`"}},
		{"sigstore regexp matches anybody", []edit{{sigOpenPGP, "{bundle-url: https://example.org/x.json, identity-regexp: '^.+@.+$', issuer: https://accounts.google.com}"}},
			[]string{"recipes/x.yaml:11:74: signature.identity-regexp: IdentityRegexp \"^.+@.+$\" matches the identity of anyone (it matches \"attacker@example.com\"): name the signer; there is no \"any identity\" policy"}},
		{"sigstore regexp matches anybody's repository", []edit{{sigOpenPGP, "{github-attestations: a/b, identity-regexp: '^https://github\\.com/[^/]+/b/\\.github/workflows/release\\.yml@refs/tags/v.*$', issuer: https://token.actions.githubusercontent.com}"}},
			[]string{"recipes/x.yaml:11:60: signature.identity-regexp: IdentityRegexp \"^https://github\\\\.com/[^/]+/b/\\\\.github/workflows/release\\\\.yml@refs/tags/v.*$\" matches workflows of anyone's repositories (the repository's owner goes on as anybody chooses after \"https://github.com/\"): name the repository's owner literally; there is no \"any identity\" policy"}},
		// The identity names the workflow that signed: a reusable one
		// (slsa-github-generator's) signs for every repository that calls it.
		{"sigstore reusable workflow of another repository", []edit{{sigOpenPGP, sigReusable}},
			[]string{"recipes/x.yaml:11:53: signature.identity: the workflow is in slsa-framework/slsa-github-generator, not in o/x, where the source comes from: a reusable workflow signs for every repository that calls it, so this identity accepts anybody's builds made with it; add source-repository: https://github.com/o/x (the repository whose run must have signed: the certificate's Source Repository URI)"}},
		{"sigstore workflow of another repository than watch.github", []edit{{sigOpenPGP, "{bundle-url: https://example.org/x.json, identity-regexp: '^https://github\\.com/o/shared/\\.github/workflows/release\\.yml@refs/tags/v.*$', issuer: https://token.actions.githubusercontent.com}"}, {"packages:\n", "watch: {github: o/x}\npackages:\n"}},
			[]string{"recipes/x.yaml:11:74: signature.identity-regexp: the workflow is in o/shared, not in o/x, where the source comes from: a reusable workflow signs for every repository that calls it, so this identity accepts anybody's builds made with it; add source-repository: https://github.com/o/x (the repository whose run must have signed: the certificate's Source Repository URI)"}},
		{"sigstore regexp leaves the workflow's repository open", []edit{{sigOpenPGP, "{github-attestations: o/x, identity-regexp: '^https://github\\.com/o/(x|shared)/\\.github/workflows/release\\.yml@refs/tags/v.*$', issuer: https://token.actions.githubusercontent.com}"}},
			[]string{"recipes/x.yaml:11:60: signature.identity-regexp: \"^https://github\\\\.com/o/(x|shared)/\\\\.github/workflows/release\\\\.yml@refs/tags/v.*$\" does not name the workflow's repository (https://github.com/OWNER/REPO/...): a GitHub Actions workflow signs for every repository that calls it; add source-repository: the URL of the repository whose run must have signed (the certificate's Source Repository URI)"}},
		// The ref after the workflow's "@": a pull request's run, or a run
		// on any branch, signs with the workflow and code of whoever opened
		// the pull request or pushed the branch
		// (pkg/verify/sigstore's TestIdentityRefs verifies such runs'
		// certificates under these pins).
		{"sigstore regexp accepts a pull request's run", []edit{{sigOpenPGP, "{github-attestations: o/x, identity-regexp: '^https://github\\.com/o/x/\\.github/workflows/release\\.yml@.*$', issuer: https://token.actions.githubusercontent.com}"}},
			[]string{"recipes/x.yaml:11:60: signature.identity-regexp: IdentityRegexp \"^https://github\\\\.com/o/x/\\\\.github/workflows/release\\\\.yml@.*$\" matches a pull request's run of the workflow (@refs/pull/7/merge): " + sigstore.PullRequestRisk}},
		{"sigstore identity of a pull request's run", []edit{{sigOpenPGP, "{github-attestations: o/x, identity: https://github.com/o/x/.github/workflows/release.yml@refs/pull/7/merge, issuer: https://token.actions.githubusercontent.com}"}},
			[]string{"recipes/x.yaml:11:53: signature.identity: \"https://github.com/o/x/.github/workflows/release.yml@refs/pull/7/merge\" accepts a pull request's run of the workflow (@refs/pull/7/merge): " + sigstore.PullRequestRisk}},
		{"sigstore regexp accepts any branch", []edit{{sigOpenPGP, "{github-attestations: o/x, identity-regexp: '^https://github\\.com/o/x/\\.github/workflows/release\\.yml@refs/heads/.*$', issuer: https://token.actions.githubusercontent.com}"}},
			[]string{"recipes/x.yaml:11:60: signature.identity-regexp: \"^https://github\\\\.com/o/x/\\\\.github/workflows/release\\\\.yml@refs/heads/.*$\" accepts a run of the workflow on any branch (@refs/heads/...): whoever may push a branch (a bot's update branch too) runs the workflow as that branch has it, and it signs what it builds; name the ref releases are signed at (refs/tags/v..., as the release's certificate shows it), or the one branch"}},
		{"sigstore regexp with the host's dots unescaped", []edit{{sigOpenPGP, "{github-attestations: o/x, identity-regexp: '^https://github.com/o/x/\\.github/workflows/release\\.yml@refs/tags/v.*$', issuer: https://token.actions.githubusercontent.com}"}},
			[]string{"recipes/x.yaml:11:60: signature.identity-regexp: \"^https://github.com/o/x/\\\\.github/workflows/release\\\\.yml@refs/tags/v.*$\" does not name the workflow's repository (https://github.com/OWNER/REPO/...): a GitHub Actions workflow signs for every repository that calls it; write the host's dots as \\. (github\\.com): a \".\" matches any character, so the regexp names no host; or add source-repository: the URL of the repository whose run must have signed (the certificate's Source Repository URI)"}},
		{"sigstore source-repository not a repository", []edit{{sigOpenPGP, strings.Replace(sigReusable, "}", ", source-repository: https://github.com/o}", 1)}},
			[]string{"recipes/x.yaml:11:247: signature.source-repository: \"https://github.com/o\" is not a GitHub repository's or GitLab project's URL (https://github.com/OWNER/REPO, https://gitlab.com/GROUP/PROJECT), as the certificate's Source Repository URI names it"}},
		{"sigstore source-repository elsewhere", []edit{{sigOpenPGP, strings.Replace(sigReusable, "}", ", source-repository: https://example.org/o/x}", 1)}},
			[]string{"recipes/x.yaml:11:247: signature.source-repository: \"https://example.org/o/x\" is not a GitHub repository's or GitLab project's URL (https://github.com/OWNER/REPO, https://gitlab.com/GROUP/PROJECT), as the certificate's Source Repository URI names it"}},
		{"sigstore key and source-repository", []edit{{sigOpenPGP, strings.Replace(sigKey, "tool.pub}", "tool.pub, source-repository: https://github.com/o/x}", 1)}},
			[]string{"recipes/x.yaml:11:78: signature: public-key pins the signer's key; identity, identity-regexp, issuer and source-repository name a certificate's signer: give one or the other"}},
		// Which attestations count: a signature has no predicate type, and
		// an empty list would count none.
		{"sigstore predicate-types on cosign's signature", []edit{{sigOpenPGP, "{sig-url: https://example.org/x.sig, cert-url: https://example.org/x.cert, identity: a@example.org, issuer: https://accounts.google.com, predicate-types: [https://slsa.dev/provenance/v1]}"}},
			[]string{"recipes/x.yaml:11:153: signature: predicate-types says which attestations count; it goes with bundle-url or github-attestations, whose in-toto statements have a predicate type (a signature has none)"}},
		{"sigstore predicate-types empty", []edit{{sigOpenPGP, "{github-attestations: a/b, identity: a@example.org, issuer: https://accounts.google.com, predicate-types: []}"}},
			[]string{"recipes/x.yaml:11:122: signature.predicate-types: an empty list counts no attestation; leave it out to count SLSA provenance (https://slsa.dev/provenance/v1, https://slsa.dev/provenance/v0.2)"}},
		{"sigstore predicate type not a URI", []edit{{sigOpenPGP, "{github-attestations: a/b, identity: a@example.org, issuer: https://accounts.google.com, predicate-types: [sbom, https://slsa.dev/provenance/v1, https://slsa.dev/provenance/v1]}"}},
			[]string{"recipes/x.yaml:11:123: signature.predicate-types: \"sbom\" is not a predicate type (a URI, as the statement's predicateType gives it: https://slsa.dev/provenance/v1)",
				"recipes/x.yaml:11:161: signature.predicate-types: \"https://slsa.dev/provenance/v1\" is listed twice"}},
		{"sigstore issuer not a URL", []edit{{sigOpenPGP, "{github-attestations: a/b, identity: a@example.org, issuer: accounts.google.com}"}},
			[]string{"recipes/x.yaml:11:76: signature.issuer: \"accounts.google.com\" is not an OIDC issuer URL (e.g. https://accounts.google.com)"}},
		// A certificate's issuer is compared with this one exactly, and
		// certificates say https://: another spelling never verifies.
		{"sigstore issuer scheme not lower case", []edit{{sigOpenPGP, "{github-attestations: a/b, identity: a@example.org, issuer: HTTPS://accounts.google.com}"}},
			[]string{"recipes/x.yaml:11:76: signature.issuer: \"HTTPS://accounts.google.com\" is not an OIDC issuer URL (e.g. https://accounts.google.com): write the scheme in lower case, as the certificate has it"}},
		{"sigstore cert without sig", []edit{{sigOpenPGP, "{cert-url: https://example.org/x.cert, identity: a@example.org, issuer: https://accounts.google.com}"}},
			[]string{"recipes/x.yaml:11:16: signature: cert-url given without sig-url (cosign publishes FILE.sig beside FILE.cert)"}},
		{"sigstore two forms", []edit{{sigOpenPGP, "{bundle-url: https://example.org/x.json, github-attestations: a/b, identity: a@example.org, issuer: https://accounts.google.com}"}},
			[]string{"recipes/x.yaml:11:16: signature: give one form, not several: " + signatureForms}},
		{"sigstore identity on an OpenPGP signature", []edit{{"keyring: keys/k.asc}", "keyring: keys/k.asc, identity: a@example.org}"}},
			[]string{"recipes/x.yaml:11:16: signature: identity, identity-regexp, issuer and source-repository belong to the Sigstore forms (sig-url + cert-url, bundle-url, github-attestations)"}},
		{"sigstore identity alone", []edit{{sigOpenPGP, "{identity: a@example.org, issuer: https://accounts.google.com}"}},
			[]string{"recipes/x.yaml:11:16: signature: identity and issuer say who must have signed Sigstore material: add sig-url + cert-url, bundle-url or github-attestations"}},
		{"sigstore bad repository and URL", []edit{{sigOpenPGP, "{github-attestations: a, identity: a@example.org, issuer: https://accounts.google.com}"}},
			[]string{"recipes/x.yaml:11:38: signature.github-attestations: \"a\" is not OWNER/REPO"}},
		{"sigstore template that does not render", []edit{{sigOpenPGP, "{sig-url: \"https://example.org/{{.Os}}.sig\", cert-url: https://example.org/x.cert, identity: a@example.org, issuer: https://accounts.google.com}"}},
			[]string{"recipes/x.yaml:11:26: signature.sig-url: template \"https://example.org/{{.Os}}.sig\": {{.Os}} at byte 20: no value named .Os (known: .Arch .DebArch .DebianVersion .Major .Minor .Name .Patch .Version)"}},
		{"sigstore key and identity", []edit{{sigOpenPGP, "{bundle-url: https://example.org/x.json, public-key: tool.pub, identity: a@example.org, issuer: https://accounts.google.com}"}},
			[]string{"recipes/x.yaml:11:57: signature: public-key pins the signer's key; identity, identity-regexp, issuer and source-repository name a certificate's signer: give one or the other"}},
		{"sigstore key and issuer alone", []edit{{sigOpenPGP, "{bundle-url: https://example.org/x.json, issuer: https://accounts.google.com, public-key: tool.pub}"}},
			[]string{"recipes/x.yaml:11:94: signature: public-key pins the signer's key; identity, identity-regexp, issuer and source-repository name a certificate's signer: give one or the other"}},
		{"sigstore key with cosign", []edit{{sigOpenPGP, "{sig-url: https://example.org/x.sig, cert-url: https://example.org/x.cert, public-key: tool.pub}"}},
			[]string{"recipes/x.yaml:11:91: signature: public-key pins the key of a key-signed Sigstore bundle: it goes with bundle-url only"}},
		{"sigstore key with attestations", []edit{{sigOpenPGP, "{github-attestations: a/b, public-key: tool.pub}"}},
			[]string{"recipes/x.yaml:11:43: signature: public-key pins the key of a key-signed Sigstore bundle: it goes with bundle-url only"}},
		{"sigstore key with OpenPGP", []edit{{"keyring: keys/k.asc}", "keyring: keys/k.asc, public-key: tool.pub}"}},
			[]string{"recipes/x.yaml:11:89: signature: public-key pins the key of a key-signed Sigstore bundle: it goes with bundle-url only"}},
		{"sigstore key alone", []edit{{sigOpenPGP, "{public-key: tool.pub}"}},
			[]string{"recipes/x.yaml:11:16: signature: public-key pins the key of a key-signed Sigstore bundle: add bundle-url"}},
		{"sigstore key file missing", []edit{{sigOpenPGP, strings.Replace(sigKey, "tool.pub", "other.pub", 1)}},
			[]string{"recipes/x.yaml:11:90: signature.public-key: $DIR/recipes/x/other.pub does not exist"}},
		{"sigstore key file escapes", []edit{{sigOpenPGP, strings.Replace(sigKey, "tool.pub", "../../keys/k.asc", 1)}},
			[]string{"recipes/x.yaml:11:90: signature.public-key: \"../../keys/k.asc\" has a \"..\" component, which would leave the folder it is relative to"}},
		{"sigstore key file not a key", []edit{{sigOpenPGP, strings.Replace(sigKey, "tool.pub", "x.service", 1)}},
			[]string{"recipes/x.yaml:11:90: signature.public-key: $DIR/recipes/x/x.service is not a PEM public key: PEM decoding failed"}},
		{"sigstore key empty", []edit{{sigOpenPGP, strings.Replace(sigKey, "tool.pub", "\"\"", 1)}},
			[]string{"recipes/x.yaml:11:90: signature.public-key: must not be empty"}},
		{"signature missing", []edit{{"    signature: {url: \"https://example.org/x-{{.Arch}}.tar.gz.asc\", keyring: keys/k.asc}\n", ""}},
			[]string{"recipes/x.yaml:8:5: source: missing required field \"signature\""}},
		{"bad signer fingerprint", []edit{{"keyring: keys/k.asc}", "keyring: keys/k.asc, signers: [ABCD]}"}},
			[]string{"recipes/x.yaml:11:99: signature.signers: \"ABCD\" is not a primary-key fingerprint (40 hex digits, no spaces)"}},
		{"YAML syntax", []edit{{"summary: X tool", "summary: [X tool"}},
			[]string{"recipes/x.yaml:13:1: YAML syntax: did not find expected ',' or ']'"}},
		{"anchors refused", []edit{{"    section: admin\n", "    section: &s admin\n"}},
			[]string{"recipes/x.yaml:16:14: section: YAML anchors and aliases are not supported"}},
		{"empty recipe", []edit{{baseRecipe, "# nothing\n"}},
			[]string{"recipes/x.yaml:1:1: recipe is empty"}},
		{"bad relation and priority", []edit{{"    section: admin\n", "    section: admin\n    priority: extra\n    depends: [\"libc6 (> 2)\"]\n"}},
			[]string{
				"recipes/x.yaml:17:15: priority: \"extra\" is not one of required, important, standard, optional",
				"recipes/x.yaml:18:15: depends: \"libc6 (> 2)\": not NAME [(OP VERSION)] [| ...] (e.g. \"libc6 (>= 2.34)\")",
			}},
		{"license without common-licenses file", []edit{{"license: Apache-2.0", "license: MIT"}},
			[]string{"recipes/x.yaml:4:10: license: MIT has no file in /usr/share/common-licenses: add license-text with the full text"}},
		{"alternative path not shipped", []edit{{"    systemd-units: [x.service]\n", "    systemd-units: [x.service]\n    alternatives: [{name: x, link: /usr/bin/xx, path: /usr/bin/x2, priority: 10}]\n"}},
			[]string{"recipes/x.yaml:21:55: alternative path: /usr/bin/x2 is not installed by package xx"}},
		// update-alternatives: error creating symbolic link '/opt/x/bin/x.dpkg-tmp': No such file or directory.
		{"alternative link in a folder nobody makes", []edit{{"    systemd-units: [x.service]\n", "    systemd-units: [x.service]\n    alternatives: [{name: x, link: /opt/x/bin/x, path: /usr/bin/x, priority: 10}]\n"}},
			[]string{"recipes/x.yaml:21:36: alternative link: /opt/x/bin is the folder of /opt/x/bin/x, which neither every Debian system has nor package xx installs: update-alternatives makes no folder, and the postinst would fail (error creating symbolic link): add /opt/x/bin to directories"}},
		{"alternative link in a folder the package makes", []edit{{"    systemd-units: [x.service]\n", "    systemd-units: [x.service]\n    directories: [/opt/x/bin]\n    alternatives: [{name: x, link: /opt/x/bin/x, path: /usr/bin/x, priority: 10}, {name: y, link: /lib/systemd/y, path: /usr/bin/x, priority: 10}, {name: z, link: /sbin/z, path: /usr/bin/x, priority: 10}]\n"}}, nil},
		// update-alternatives: warning: not replacing /usr/bin/y with a link; the alternative is never used.
		{"alternative link another package installs", []edit{{"    systemd-units: [x.service]\n", "    systemd-units: [x.service]\n    alternatives: [{name: y, link: /usr/bin/y, path: /usr/bin/x, priority: 10}]\n  - name: xy\n    summary: Y tool\n    description: The Y tool.\n    section: admin\n    files: [{file: x.default, dest: /usr/bin/y}]\n"}},
			[]string{"recipes/x.yaml:21:36: alternative link: /usr/bin/y is also a file of package xy; update-alternatives manages the link, and would leave the file as it is (not replacing it with a link)"}},
		{"alternative link that merged-/usr makes the package's file", []edit{{"    systemd-units: [x.service]\n", "    systemd-units: [x.service]\n    alternatives: [{name: x, link: /bin/x, path: /usr/bin/x, priority: 10}]\n"}},
			[]string{"recipes/x.yaml:21:36: alternative link: /bin/x is also a file of package xx as /usr/bin/x (on a merged-/usr system, as every Debian since 12 is, /bin is a symlink to usr/bin); update-alternatives manages the link, and would leave the file as it is (not replacing it with a link)"}},
		{"alternative link where every Debian system has a folder", []edit{{"    systemd-units: [x.service]\n", "    systemd-units: [x.service]\n    alternatives: [{name: x, link: /usr/sbin, path: /usr/bin/x, priority: 10}]\n"}},
			[]string{"recipes/x.yaml:21:36: alternative link: /usr/sbin is a folder of every Debian system; update-alternatives would leave it as it is (not replacing it with a link): name the link itself, such as /usr/sbin/x"}},
		{"alternative priority beyond a C int", []edit{{"    systemd-units: [x.service]\n", "    systemd-units: [x.service]\n    alternatives: [{name: x, link: /usr/bin/xx, path: /usr/bin/x, priority: 2147483648}, {name: y, link: /usr/bin/y, path: /usr/bin/x, priority: -2147483649}]\n"}},
			[]string{
				"recipes/x.yaml:21:77: alternative priority: 2147483648 is out of update-alternatives' range (-2147483648 to 2147483647)",
				"recipes/x.yaml:21:146: alternative priority: -2147483649 is out of update-alternatives' range (-2147483648 to 2147483647)",
			}},
		{"one link, two alternative names", []edit{{"    systemd-units: [x.service]\n", "    systemd-units: [x.service]\n    alternatives: [{name: x, link: /usr/bin/xx, path: /usr/bin/x, priority: 1}, {name: y, link: /usr/bin/xx, path: /usr/bin/x, priority: 2}]\n"}},
			[]string{"recipes/x.yaml:21:97: alternative link: /usr/bin/xx is already the link of alternative x (package xx); update-alternatives lets one name manage a link: give both the name x"}},
		{"one alternative name, two links", []edit{{"    systemd-units: [x.service]\n", "    systemd-units: [x.service]\n    alternatives: [{name: x, link: /usr/bin/xx, path: /usr/bin/x, priority: 1}, {name: x, link: /usr/bin/xy, path: /usr/bin/x, priority: 2}]\n"}},
			[]string{"recipes/x.yaml:21:97: alternative link: alternative x already has the link /usr/bin/xx (package xx); update-alternatives would move it to /usr/bin/xy: one name has one link"}},
		{"watch and requires", []edit{{"    systemd-units: [x.service]\n", "    systemd-units: [x.service]\nwatch: {url: https://example.org/}\nrequires: {kubernetes: \"~>1.30\"}\n"}},
			[]string{
				"recipes/x.yaml:21:8: watch: url and pattern go together",
				"recipes/x.yaml:22:24: requires.kubernetes: invalid constraint \"~>1.30\": unexpected operator inside \"~>1.30\"",
			}},
		{"watch track", []edit{{"    systemd-units: [x.service]\n", "    systemd-units: [x.service]\nwatch: {github: a/b, track: \"1.30 || 1.31\"}\n"}},
			[]string{
				"recipes/x.yaml:21:29: watch.track: invalid constraint \"1.30 || 1.31\": version \"||\": invalid Debian version: upstream version \"||\" must start with a digit (after an optional v)",
			}},
		{"setuid without a reason", []edit{{"dest: /usr/bin/x}", "dest: /usr/bin/x, mode: \"4755\"}"}},
			[]string{"recipes/x.yaml:18:56: mode: 4755 sets setuid: say why with special-bits: \"REASON\" (a setuid or setgid file runs with its owner's or group's rights; updeb sets these bits only when the recipe says why)"}},
		{"setgid and sticky directory without a reason", []edit{{"    systemd-units: [x.service]\n", "    systemd-units: [x.service]\n    directories: [{path: /var/lib/x, mode: \"3775\"}]\n"}},
			[]string{"recipes/x.yaml:21:44: mode: 3775 sets setgid and sticky: say why with special-bits: \"REASON\" (a setuid or setgid file runs with its owner's or group's rights; updeb sets these bits only when the recipe says why)"}},
		{"special-bits without a special bit", []edit{{"dest: /usr/bin/x}", "dest: /usr/bin/x, mode: \"0755\", special-bits: because}"}},
			[]string{"recipes/x.yaml:18:64: special-bits: the mode sets no setuid, setgid or sticky bit (mode 0755)"}},
		{"bad mode", []edit{{"dest: /usr/bin/x}", "dest: /usr/bin/x, mode: \"755\"}"}, {"{file: x.service,", "{file: x.service, mode: \"10755\","}},
			[]string{
				"recipes/x.yaml:19:33: mode: \"10755\" is not an octal mode such as \"0755\", \"0640\" or \"4755\" (quoted, 3 or 4 digits)",
			}},
		{"mode the owner cannot read", []edit{{"dest: /usr/bin/x}", "dest: /usr/bin/x, mode: \"0040\"}"}},
			[]string{"recipes/x.yaml:18:56: mode: \"0040\": the owner cannot read it; updeb refuses such a mode (give at least 0400)"}},
		{"owner not a name", []edit{{"dest: /usr/bin/x}", "dest: /usr/bin/x, owner: \"a:b\", group: 42}"}},
			[]string{
				"recipes/x.yaml:18:57: owner: name \"a:b\" is not a user or group name a tar member can carry (at most 31 bytes of letters, digits, _ - . and a final $, not starting with - or a digit)",
				"recipes/x.yaml:18:71: group: name \"42\" is not a user or group name a tar member can carry (at most 31 bytes of letters, digits, _ - . and a final $, not starting with - or a digit)",
			}},
		{"directory mapping", []edit{{"    systemd-units: [x.service]\n", "    systemd-units: [x.service]\n    directories: [{path: var/x}, [a], {dir: /x}]\n"}},
			[]string{
				"recipes/x.yaml:21:26: directories: \"var/x\" must be an absolute path",
				"recipes/x.yaml:21:34: directories: expected a path or a mapping {path: ..., mode: ..., owner: ..., group: ...}, found a list",
				"recipes/x.yaml:21:39: directory: missing required field \"path\"",
				"recipes/x.yaml:21:40: directory: unknown field \"dir\" (known: group, mode, owner, path, special-bits)",
			}},
		{"fragment that is a whole script", []edit{{"    systemd-units: [x.service]\n", "    systemd-units: [x.service]\n    scripts: {postinst: whole.postinst}\n"}},
			[]string{"recipes/x.yaml:21:25: scripts.postinst: $DIR/recipes/x/whole.postinst: starts with a #! line: updeb writes the script's #!/bin/sh and set -e; give only the commands"}},
		{"scripts and triggers", []edit{{"    systemd-units: [x.service]\n", "    systemd-units: [x.service]\n    scripts: {postinst: ../x.postinst, config: x.config, prerm: missing.prerm}\n    triggers: [\"interest\", \"activate-soon x\", \"interest /usr//lib\"]\n"}},
			[]string{
				"recipes/x.yaml:21:25: scripts.postinst: \"../x.postinst\" has a \"..\" component, which would leave the folder it is relative to",
				"recipes/x.yaml:21:40: scripts: unknown field \"config\" (known: postinst, postrm, preinst, prerm)",
				"recipes/x.yaml:21:65: scripts.prerm: $DIR/recipes/x/missing.prerm does not exist",
				"recipes/x.yaml:22:16: triggers: \"interest\": expected DIRECTIVE NAME (one of interest, interest-await, interest-noawait, activate, activate-await, activate-noawait, then one trigger name)",
				"recipes/x.yaml:22:28: triggers: \"activate-soon x\": unknown directive \"activate-soon\": expected one of interest, interest-await, interest-noawait, activate, activate-await, activate-noawait",
				"recipes/x.yaml:22:47: triggers: \"interest /usr//lib\": file trigger \"/usr//lib\" is not a clean absolute path (write \"/usr/lib\")",
			}},
		// dpkg reads 254 bytes of a triggers line and refuses the package
		// otherwise: lint passed it, and the build failed after the
		// downloads, naming no recipe line.
		{"trigger longer than dpkg reads", []edit{{"    systemd-units: [x.service]\n", "    systemd-units: [x.service]\n    triggers: [activate-noawait /usr/lib/x/" + strings.Repeat("p", 227) + ", activate-noawait /usr/lib/x/" + strings.Repeat("p", 226) + "]\n"}},
			[]string{"recipes/x.yaml:21:16: triggers: activate-noawait /usr/lib/x/" + strings.Repeat("p", 49) + "...(238 bytes): 255 bytes, more than the 254 dpkg reads in a line of triggers (it refuses the package)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := baseRecipe
			for _, e := range tt.edits {
				if !strings.Contains(text, e.old) {
					t.Fatalf("edit %q does not apply", e.old)
				}
				text = strings.Replace(text, e.old, e.new, 1)
			}
			got := loadFindings(t, text)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestPathsLinuxCannotHold: a path longer than Linux takes (4095 bytes, 255
// a name) is refused at its field, quoted short, and so is a path in the
// package that dpkg cannot unpack as PATH.dpkg-new (a name of 247 to 255
// bytes, a path of 4087 to 4095). An 800 KB dest of 400,000 components
// once took lint past 10 GB and minutes: every parent folder kept its own
// copy of the whole path.
func TestPathsLinuxCannotHold(t *testing.T) {
	long := "/usr/lib/x/" + strings.Repeat("a/", 2100) + "x"
	name := "/usr/lib/x/" + strings.Repeat("n", 256)
	name250 := "/usr/lib/x/" + strings.Repeat("m", 250)
	text := strings.Replace(baseRecipe, "dest: /usr/bin/x}", "dest: "+long+"}", 1)
	text = strings.Replace(text, "    systemd-units: [x.service]\n", "    systemd-units: [x.service]\n    symlinks: [{dest: "+name+", target: "+long+"}, {dest: "+name250+", target: /usr/bin/x}]\n", 1)
	got := strings.Join(loadFindings(t, text), "\n")
	for _, want := range []string{
		fmt.Sprintf("recipes/x.yaml:18:38: dest: %q is 4212 bytes long: dpkg unpacks it as PATH.dpkg-new, which must fit in a Linux path (4095 bytes), so at most 4086", clip(long)),
		fmt.Sprintf("recipes/x.yaml:21:23: symlink dest: %q has a name of 256 bytes: dpkg unpacks it as NAME.dpkg-new, which must fit in a file name (255 bytes), so at most 246", clip(name)),
		fmt.Sprintf("recipes/x.yaml:21:300: symlink target: %q is 4212 bytes long, longer than any path Linux takes (4095): dpkg could not unpack it", clip(long)),
		fmt.Sprintf("symlink dest: %q has a name of 250 bytes: dpkg unpacks it as NAME.dpkg-new", clip(name250)),
	} {
		if !strings.Contains(got, want) {
			t.Errorf("findings:\n%s\nwant one with:\n%s", got, want)
		}
	}
}

// TestDeepPathsBounded: deep paths cost their length, not their length
// times their depth: a 60 KB dest of 30,000 folders is refused, and 200
// dests of 2,000 folders each (each a path Linux takes) load, both within
// a few MB of allocations (a copy of the whole path for each parent folder
// was a GB).
func TestDeepPathsBounded(t *testing.T) {
	var many strings.Builder
	for i := range 200 {
		fmt.Fprintf(&many, "      - {file: x.default, dest: /d%d/%sx}\n", i, strings.Repeat("a/", 2000))
	}
	for _, tt := range []struct {
		name, old, new string
		refused        bool
	}{
		{"one very deep dest", "dest: /usr/bin/x}", "dest: /" + strings.Repeat("a/", 30000) + "x}", true},
		{"many deep dests", "      - {file: x.service,", many.String() + "      - {file: x.service,", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, file := writeProject(t, strings.Replace(baseRecipe, tt.old, tt.new, 1))
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := Load(file, LoadOptions{})
			runtime.ReadMemStats(&after)
			if (err != nil) != tt.refused {
				t.Fatalf("Load: %v (refusal expected: %v)", err, tt.refused)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 200<<20 {
				t.Errorf("Load allocated %d MB", alloc>>20)
			}
		})
	}
}

// TestChangelogsBounded: each package's changelog.Debian.gz is compressed
// with one of a few writers kept for it, not a new one (800 KB of flate's
// tables each): a recipe of 300 packages allocated 486 MB to load, 3,000
// 4.8 GB. The bytes are a new writer's.
func TestChangelogsBounded(t *testing.T) {
	r := loadManyPackages(t, 300, 64<<20)
	p, err := r.Resolve("arm64", fixtureOpts)
	if err != nil {
		t.Fatal(err)
	}
	for _, pp := range p.Packages[:3] {
		i := slices.IndexFunc(pp.GeneratedFiles, func(g GeneratedFile) bool { return strings.HasSuffix(g.Dest, ".gz") })
		zr, err := gzip.NewReader(bytes.NewReader(pp.GeneratedFiles[i].Content))
		if err != nil {
			t.Fatal(err)
		}
		text, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&want, gzip.BestCompression)
		zw.Write(text) //nolint:errcheck // bytes.Buffer does not fail
		zw.Close()     //nolint:errcheck // bytes.Buffer does not fail
		if !bytes.Equal(pp.GeneratedFiles[i].Content, want.Bytes()) {
			t.Errorf("%s: %s is not what a new gzip writer makes of its text", pp.Name, pp.GeneratedFiles[i].Dest)
		}
	}
}

// TestManyPackagesBounded: a recipe of many packages, within the size
// limit, loads in memory and time that grow with its size: each package
// was given its own sorted list of every package name, and 6,000 packages
// in 845 KB made lint take 1.9 GB and 278 s. 3,000 here allocated 1 GB;
// now some 130 MB.
func TestManyPackagesBounded(t *testing.T) {
	loadManyPackages(t, 3000, 300<<20)
}

// loadManyPackages loads baseRecipe with n packages more, each of one
// file, and fails t when Load allocates more than limit bytes.
func loadManyPackages(t *testing.T, n int, limit uint64) *Recipe {
	t.Helper()
	var many strings.Builder
	for i := range n {
		fmt.Fprintf(&many, "  - {name: xx%d, summary: X tool, description: The X tool., section: admin, files: [{source: bin, path: x, dest: /usr/bin/x%d}]}\n", i, i)
	}
	_, file := writeProject(t, strings.Replace(baseRecipe, "packages:\n", "packages:\n"+many.String(), 1))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r, err := Load(file, LoadOptions{})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > limit*allocFactor {
		t.Errorf("Load of %d packages allocated %d MB", n, alloc>>20)
	}
	return r
}

// TestArchitectureAllSameForEveryArchitecture: every architecture's build
// writes an Architecture: all package under one file name, so it must come
// out the same for each: from the recipe's folder or from a source that is
// one file for every architecture, and not from a per-architecture source
// or with the architecture rendered into it.
func TestArchitectureAllSameForEveryArchitecture(t *testing.T) {
	const doc = "  - name: xx-doc\n    architecture: all\n    summary: X documentation\n    description: The X documentation.\n    section: doc\n    files:\n"
	docs := "  - name: docs\n    url: https://example.org/x-docs.tar.gz\n    sha256: " + hexA + "\n    signature: {none: the docs are unsigned}\n"
	for _, tt := range []struct {
		name, sources, files, want string
	}{
		{"a file of the recipe's folder", "", "      - {file: x.default, dest: /usr/share/xx-doc/x.default}\n", ""},
		{"a source of every architecture", docs, "      - {source: docs, path: README, dest: /usr/share/xx-doc/README}\n", ""},
		{"a per-architecture source", "", "      - {source: bin, path: README, dest: /usr/share/xx-doc/README}\n",
			"recipes/x.yaml:22:19: architecture: all: package xx-doc comes out differently for amd64 and arm64 (its files come from source bin, https://example.org/x-amd64.tar.gz for amd64 and https://example.org/x-arm64.tar.gz for arm64), but each architecture's build writes it as the same xx-doc_1.0.0-1_all.deb: make it the same for every architecture, or make it architecture: any"},
		{"one URL pinned to other bytes per architecture", strings.Replace(docs, "sha256: "+hexA, "sha256: {amd64: "+hexA+", arm64: "+hexB+"}", 1), "      - {source: docs, path: README, dest: /usr/share/xx-doc/README}\n",
			"recipes/x.yaml:26:19: architecture: all: package xx-doc comes out differently for amd64 and arm64 (its files come from source docs, whose pins, signature or checksum file differ), but each architecture's build writes it as the same xx-doc_1.0.0-1_all.deb: make it the same for every architecture, or make it architecture: any"},
		{"the architecture in a path", "", "      - {file: x.default, dest: \"/usr/share/xx-doc/{{.Arch}}.default\"}\n",
			"recipes/x.yaml:22:19: architecture: all: package xx-doc comes out differently for amd64 and arm64 (its fields or files render differently), but each architecture's build writes it as the same xx-doc_1.0.0-1_all.deb: make it the same for every architecture, or make it architecture: any"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			text := strings.Replace(baseRecipe, "packages:\n", tt.sources+"packages:\n", 1)
			got := strings.Join(loadFindings(t, text+doc+tt.files), "\n")
			if got != tt.want {
				t.Errorf("findings:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

// An identity pinned at a branch where upstream releases at tags (a GitHub
// release download, a watch of GitHub releases) is a warning: every run on
// the branch signs too. Pinned at the tag, or where nothing says upstream
// releases at tags, it is none.
func TestLintWorkflowBranchRef(t *testing.T) {
	const main = "https://github.com/o/x/.github/workflows/release.yml@refs/heads/main"
	sig := func(identity string) string {
		return "{github-attestations: o/x, identity: \"" + identity + "\", issuer: https://token.actions.githubusercontent.com}"
	}
	watched := func(text string) string {
		return strings.Replace(text, "packages:\n", "watch: {github: o/x}\npackages:\n", 1)
	}
	for _, c := range []struct {
		name, text string
		warn       bool
	}{
		{"branch, watched releases", watched(strings.Replace(baseRecipe, sigOpenPGP, sig(main), 1)), true},
		{"branch, release download", strings.Replace(strings.Replace(baseRecipe, sigOpenPGP, sig(main), 1),
			"https://example.org/x-{{.Arch}}.tar.gz", "https://github.com/o/x/releases/download/v{{.Version}}/x-{{.Arch}}.tar.gz", 1), true},
		{"branch, no release", strings.Replace(baseRecipe, sigOpenPGP, sig(main), 1), false},
		{"tag, watched releases", watched(strings.Replace(baseRecipe, sigOpenPGP, sig("https://github.com/o/x/.github/workflows/release.yml@refs/tags/v{{.Version}}"), 1)), false},
	} {
		var got []string
		for _, w := range loadWarnings(t, c.text, nil) {
			if strings.Contains(w, "signature.identity") {
				got = append(got, w)
			}
		}
		want := `signature.identity: "` + main + `" accepts runs of the workflow on a branch, and the source is a GitHub release, made at a tag`
		if c.warn != (len(got) == 1 && strings.Contains(got[0], want)) || len(got) > 1 {
			t.Errorf("%s: warnings %q, want one: %v", c.name, got, c.warn)
		}
	}
}
