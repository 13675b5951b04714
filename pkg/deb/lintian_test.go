package deb

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/testkit/testenv"
)

// A package of a static Go binary, with copyright, changelog.Debian.gz and the
// overrides for what is true by design of repacked upstream binaries, passes
// lintian at every level (-I -E --pedantic).
func TestLintian(t *testing.T) {
	t.Logf("lintian:\n%s", testenv.Lintian(t, nil, lintianHello(t, CompressionXZ)))
}

// Debian 12's lintian (2.116) reads no zstd member (malformed-deb-archive:
// internal/gate's TestLintianZstd); the xz copy of a zstd package
// (Recompress) holds the same tar bytes, and passes lintian at every level
// as the xz package does.
func TestLintianRecompressedZstd(t *testing.T) {
	path := lintianHello(t, CompressionZstd)
	cp := filepath.Join(t.TempDir(), filepath.Base(path))
	if err := Recompress(context.Background(), cp, path, CompressionXZ); err != nil {
		t.Fatal(err)
	}
	t.Logf("lintian:\n%s", testenv.Lintian(t, nil, cp))
}

// Lintian reports a file dated 1975 or before (package-contains-ancient-file,
// an error), not only one of 1970: an entry's time that old (Nix's mtime 1,
// an archive that kept none) takes SourceDateEpoch, and a SourceDateEpoch
// in 1975 is refused.
func TestLintianAncientTimes(t *testing.T) {
	path := lintianHello(t, CompressionXZ, func(p *Package) {
		p.Entries[0].ModTime = time.Unix(1, 0)
		p.Entries[1].ModTime = AncientBefore.Add(-time.Second)
	})
	t.Logf("lintian:\n%s", testenv.Lintian(t, nil, path))
	if contents := testenv.Run(t, "dpkg-deb", "--contents", path); bytes.Contains(contents, []byte(" 197")) {
		t.Errorf("dpkg-deb --contents shows a time of the 1970s:\n%s", contents)
	}

	p := samplePackage()
	p.SourceDateEpoch = AncientBefore.Add(-time.Second)
	out := t.TempDir()
	if _, err := Write(context.Background(), filepath.Join(out, "old.deb"), p); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "SourceDateEpoch 1975-12-31 23:59:59 +0000 UTC: required, and in 1976 or later") {
		t.Errorf("Write with SourceDateEpoch in 1975: %v, want ErrInvalid", err)
	}
	if left := dirEntries(t, out); len(left) != 0 {
		t.Errorf("files left behind: %v", left)
	}
}

// lintianHello writes a package of a static Go binary with copyright,
// changelog.Debian.gz and overrides, compressed with c and changed by
// tweaks, and returns its path.
func lintianHello(t *testing.T, c Compression, tweaks ...func(*Package)) string {
	t.Helper()
	testenv.RequireTool(t, "go")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "main.go"), "package main\n\nfunc main() { println(\"hello\") }\n")
	writeFile(t, filepath.Join(dir, "go.mod"), "module hello\n\ngo 1.21\n")
	bin := filepath.Join(dir, "hello")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	st, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	var changelog bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&changelog, gzip.BestCompression) // no name, mtime 0
	io.WriteString(zw, "updeb-hello (1.0.0-1) unstable; urgency=medium\n\n  * Repackaged upstream release 1.0.0.\n\n -- updeb tests <tests@updeb.invalid>  Wed, 14 Aug 2024 12:00:00 +0000\n")
	zw.Close()
	p := &Package{
		Control: Control{Package: "updeb-hello", Version: "1.0.0-1", Architecture: "amd64",
			Maintainer: "updeb tests <tests@updeb.invalid>", Section: "utils", Priority: "optional",
			Homepage: "https://updeb.invalid/", Summary: "greets the world",
			Description: "A static Go binary that prints hello, packaged by updeb's tests.\nIt is built from a one-line main package and written by pkg/deb's\nwriter, then judged by lintian at every level."},
		Entries: []Entry{
			{Path: "/usr/bin/hello", Type: TypeFile, Mode: 0o755, Size: st.Size(),
				Open: func() (io.ReadCloser, error) { return os.Open(bin) }},
			fileEntry("/usr/share/doc/updeb-hello/copyright", 0o644, "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\nUpstream-Name: hello\n\nFiles: *\nCopyright: 2024 updeb tests\nLicense: Apache-2.0\n On Debian systems, the full text of the Apache License 2.0 can be found in\n /usr/share/common-licenses/Apache-2.0.\n"),
			fileEntry("/usr/share/doc/updeb-hello/changelog.Debian.gz", 0o644, changelog.String()),
			fileEntry("/usr/share/lintian/overrides/updeb-hello", 0o644, "updeb-hello: statically-linked-binary [usr/bin/hello]\nupdeb-hello: unstripped-binary-or-object [usr/bin/hello]\nupdeb-hello: no-manual-page [usr/bin/hello]\n"+
				"updeb-hello: initial-upload-closes-no-bugs [usr/share/doc/updeb-hello/changelog.Debian.gz:1]\n"),
		},
		SourceDateEpoch: testEpoch,
		Compression:     c,
	}
	for _, tweak := range tweaks {
		tweak(p)
	}
	path := filepath.Join(dir, "updeb-hello_1.0.0-1_amd64.deb")
	if _, err := Write(context.Background(), path, p); err != nil {
		t.Fatal(err)
	}
	return path
}
