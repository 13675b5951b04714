package gate

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/testkit/testenv"
	"github.com/updeb/updeb/pkg/deb"
)

// TestLintianZstd: Debian 12's lintian reports a zstd package as
// malformed-deb-archive, an error that is not the package's; the gate
// lints xz copies of zstd packages (the same tar bytes), says so, and
// still fails on the packages' own errors.
func TestLintianZstd(t *testing.T) {
	exe := testenv.RequireTool(t, "lintian")[0]
	dir := t.TempDir()
	good := zstdPackage(t, dir, "/usr/share/hello/greeting")
	cmd := exec.Command(exe, "--fail-on", "error", good)
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "malformed-deb-archive") {
		t.Fatalf("lintian on a zstd package: %v\n%s\nwant malformed-deb-archive (a lintian that reads zstd needs no xz copies)", err, out)
	}
	const note = " (xz copies of the zstd packages: Debian 12's lintian reads no zstd)"
	gateDir := t.TempDir()
	var c checks
	lintian(context.Background(), exe, gateDir, []string{good}, deb.CompressionZstd, &c)
	if len(c) != 1 || c[0].Status != Pass || c[0].Detail != "no error-level tag in 1 package(s)"+note {
		t.Errorf("%+v, want one passed check that names the xz copies", c)
	}

	bad := zstdPackage(t, t.TempDir(), "/usr/local/share/hello/greeting")
	c = nil
	lintian(context.Background(), exe, gateDir, []string{bad}, deb.CompressionZstd, &c)
	if len(c) != 1 || c[0].Status != Fail || !strings.HasPrefix(c[0].Detail, "lintian --fail-on error"+note) ||
		!strings.Contains(c[0].Detail, "file-in-usr-local") || strings.Contains(c[0].Detail, "malformed-deb-archive") {
		t.Errorf("%+v, want one failed check on the copy's file-in-usr-local", c)
	}
	if left, _ := os.ReadDir(gateDir); len(left) > 0 {
		t.Errorf("left in the gate's folder: %v", left)
	}
}

// zstdPackage writes a small zstd package with a copyright file, a
// changelog and a text file at file, into dir, and returns its path.
func zstdPackage(t *testing.T, dir, file string) string {
	t.Helper()
	var changelog bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&changelog, gzip.BestCompression) // no name, mtime 0
	io.WriteString(zw, "hello (1.0.0-1) unstable; urgency=medium\n\n  * Repackaged upstream release 1.0.0.\n\n -- updeb tests <tests@updeb.invalid>  Wed, 14 Aug 2024 12:00:00 +0000\n")
	zw.Close()
	entry := func(path, content string) deb.Entry {
		return deb.Entry{Path: path, Type: deb.TypeFile, Mode: 0o644, Size: int64(len(content)),
			Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(content)), nil }}
	}
	p := &deb.Package{
		Control: deb.Control{Package: "hello", Version: "1.0.0-1", Architecture: "all",
			Maintainer: "updeb tests <tests@updeb.invalid>", Section: "utils", Priority: "optional",
			Summary: "friendly greeting", Description: "A greeting in a text file, packaged by the gate's tests."},
		Entries: []deb.Entry{
			entry(file, "hello\n"),
			entry("/usr/share/doc/hello/copyright", "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\nUpstream-Name: hello\n\nFiles: *\nCopyright: 2024 updeb tests\nLicense: Apache-2.0\n On Debian systems, the full text of the Apache License 2.0 can be found in\n /usr/share/common-licenses/Apache-2.0.\n"),
			entry("/usr/share/doc/hello/changelog.Debian.gz", changelog.String()),
		},
		SourceDateEpoch: time.Date(2024, 8, 14, 12, 0, 0, 0, time.UTC),
		Compression:     deb.CompressionZstd,
	}
	path := filepath.Join(dir, "hello_1.0.0-1_all.deb")
	if _, err := deb.Write(context.Background(), path, p); err != nil {
		t.Fatal(err)
	}
	return path
}
