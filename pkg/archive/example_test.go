package archive_test

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/updeb/updeb/pkg/archive"
)

// writeRelease writes a tar.gz like an upstream release: a folder with a
// binary, its license and a README.
func writeRelease(path string, extra ...*tar.Header) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	zw := gzip.NewWriter(f)
	tw := tar.NewWriter(zw)
	for _, m := range []struct {
		name, body string
		mode       int64
	}{
		{"./linux-amd64/hello", "#!/bin/sh\necho hello\n", 0o755},
		{"./linux-amd64/LICENSE", "Apache-2.0\n", 0o644},
		{"./linux-amd64/README.md", "# hello\n", 0o644},
	} {
		if err := tw.WriteHeader(&tar.Header{Name: m.name, Mode: m.mode, Size: int64(len(m.body)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		if _, err := io.WriteString(tw, m.body); err != nil {
			return err
		}
	}
	for _, h := range extra {
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// Take only the named files out of a release tarball, in one pass, without
// extracting anything to disk.
func ExampleSelect() {
	dir, err := os.MkdirTemp("", "archive")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	release := filepath.Join(dir, "hello-linux-amd64.tar.gz")
	if err := writeRelease(release); err != nil {
		panic(err)
	}
	want := []string{"linux-amd64/hello", "linux-amd64/LICENSE"}
	err = archive.Select(context.Background(), release, archive.TarGz, want, archive.Limits{}, func(m archive.Member, r io.Reader) error {
		body, err := io.ReadAll(r)
		fmt.Printf("%s %v %d bytes: %q\n", m.Name, m.Mode, m.Size, body)
		return err
	})
	fmt.Println(err)

	// A name the archive lacks is an error that says so.
	err = archive.Select(context.Background(), release, archive.TarGz, []string{"hello"}, archive.Limits{}, func(archive.Member, io.Reader) error { return nil })
	fmt.Println(errors.Is(err, archive.ErrMissing))
	// Output:
	// linux-amd64/hello -rwxr-xr-x 21 bytes: "#!/bin/sh\necho hello\n"
	// linux-amd64/LICENSE -rw-r--r-- 11 bytes: "Apache-2.0\n"
	// <nil>
	// true
}

// An archive with an entry that escapes its root is refused as a whole, even
// when the entry is not wanted.
func ExampleSelect_hostile() {
	dir, err := os.MkdirTemp("", "archive")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	release := filepath.Join(dir, "hostile.tar.gz")
	if err := writeRelease(release, &tar.Header{Name: "linux-amd64/evil", Typeflag: tar.TypeSymlink, Linkname: "../../etc/passwd"}); err != nil {
		panic(err)
	}
	err = archive.Select(context.Background(), release, archive.TarGz, []string{"linux-amd64/hello"}, archive.Limits{}, func(archive.Member, io.Reader) error { return nil })
	var e *archive.Error
	fmt.Println(errors.Is(err, archive.ErrUnsafe), errors.As(err, &e) && e.Entry == "linux-amd64/evil")
	// Output:
	// true true
}
