package deb_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/updeb/updeb/pkg/archive"
	"github.com/updeb/updeb/pkg/deb"
)

// Write a package from streamed entries, then read it back. The same Package
// gives the same bytes on any machine: owners, modes and mtimes are
// normalised, parents are added, and Installed-Size is computed.
func ExampleWrite() {
	dir, err := os.MkdirTemp("", "deb")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	content := func(s string) func() (io.ReadCloser, error) {
		return func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(s)), nil }
	}
	p := &deb.Package{
		Control: deb.Control{
			Package: "hello", Version: "1.2.0-1", Architecture: "amd64",
			Maintainer: "Hello Packager <hello@example.org>", Section: "utils", Priority: "optional",
			Depends: []string{"libc6 (>= 2.34)"},
			Summary: "friendly greeting", Description: "hello says hello.\n\nIt is small.",
		},
		Entries: []deb.Entry{
			{Path: "/usr/bin/hello", Type: deb.TypeFile, Mode: 0o755, Size: 21, Open: content("#!/bin/sh\necho hello\n")},
			// Modes and owners are written as given: a 0640 file of group shadow (42 in base-passwd).
			{Path: "/etc/hello.conf", Type: deb.TypeFile, Mode: 0o640, Owner: deb.Owner{Group: "shadow", GID: 42}, Size: 9, Open: content("greeting\n")},
			{Path: "/usr/bin/hi", Type: deb.TypeSymlink, Linkname: "hello"},
		},
		Conffiles:       []string{"/etc/hello.conf"},
		SourceDateEpoch: time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC),
	}
	res, err := deb.Write(context.Background(), filepath.Join(dir, "hello_1.2.0-1_amd64.deb"), p)
	if err != nil {
		panic(err)
	}
	info, err := deb.InspectFile(context.Background(), res.Path, archive.Limits{})
	if err != nil {
		panic(err)
	}
	for _, m := range info.Members {
		fmt.Println(m.Name)
	}
	os.Stdout.Write(info.Control.Bytes())
	fmt.Println(info.Conffiles)
	for _, f := range info.Files {
		name := f.Path
		if f.Linkname != "" {
			name += " -> " + f.Linkname
		}
		fmt.Println(f.Type, f.Mode, f.Uname+"/"+f.Gname, f.MTime.Format(time.DateOnly), name)
	}
	// Output:
	// debian-binary
	// control.tar.xz
	// data.tar.xz
	// Package: hello
	// Version: 1.2.0-1
	// Architecture: amd64
	// Maintainer: Hello Packager <hello@example.org>
	// Installed-Size: 7
	// Depends: libc6 (>= 2.34)
	// Section: utils
	// Priority: optional
	// Description: friendly greeting
	//  hello says hello.
	//  .
	//  It is small.
	// [/etc/hello.conf]
	// dir -rwxr-xr-x root/root 2026-03-14 ./
	// dir -rwxr-xr-x root/root 2026-03-14 ./etc/
	// file -rw-r----- root/shadow 2026-03-14 ./etc/hello.conf
	// dir -rwxr-xr-x root/root 2026-03-14 ./usr/
	// dir -rwxr-xr-x root/root 2026-03-14 ./usr/bin/
	// file -rwxr-xr-x root/root 2026-03-14 ./usr/bin/hello
	// symlink -rwxrwxrwx root/root 2026-03-14 ./usr/bin/hi -> hello
}

// Every problem of a Package is reported at once, before a byte is written.
func ExampleWrite_invalid() {
	_, err := deb.Write(context.Background(), filepath.Join(os.TempDir(), "never-written.deb"), &deb.Package{
		Control: deb.Control{Package: "Hello", Version: "v1", Architecture: "amd64", Maintainer: "m <m@example.org>", Summary: "s"},
		Entries: []deb.Entry{{Path: "usr/bin/hello", Type: deb.TypeFile}},
	})
	fmt.Println(err)
	// Output:
	// deb: invalid package: SourceDateEpoch 0001-01-01 00:00:00 +0000 UTC: required, and in 1976 or later (lintian reports a file dated 1975 or before: package-contains-ancient-file, an error)
	// deb: invalid package: control field Package: "Hello" is not a package name: expected [a-z0-9][a-z0-9+.-]+ (lowercase, at least 2 characters)
	// deb: invalid package: control field Version: "v1" is not a Debian version: upstream version "v1" must start with a digit
	// deb: invalid package: entry "usr/bin/hello": expected an absolute, clean path below / (no ., .., // or trailing /)
}

// Copy a zstd package with xz members, for a tool that reads no zstd (Debian
// 12's lintian): control.tar and data.tar keep their bytes, only the
// compression and the members' names change.
func ExampleRecompress() {
	dir, err := os.MkdirTemp("", "deb")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	p := &deb.Package{
		Control: deb.Control{Package: "hello", Version: "1.2.0-1", Architecture: "all",
			Maintainer: "Hello Packager <hello@example.org>", Summary: "friendly greeting"},
		Entries: []deb.Entry{{Path: "/usr/share/hello/greeting", Type: deb.TypeFile, Mode: 0o644, Size: 6,
			Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("hello\n")), nil }}},
		SourceDateEpoch: time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC),
		Compression:     deb.CompressionZstd,
	}
	zstd, xz := filepath.Join(dir, "hello.deb"), filepath.Join(dir, "xz", "hello.deb")
	if _, err := deb.Write(context.Background(), zstd, p); err != nil {
		panic(err)
	}
	if err := os.Mkdir(filepath.Dir(xz), 0o755); err != nil {
		panic(err)
	}
	if err := deb.Recompress(context.Background(), xz, zstd, deb.CompressionXZ); err != nil {
		panic(err)
	}
	for _, path := range []string{zstd, xz} {
		info, err := deb.InspectFile(context.Background(), path, archive.Limits{})
		if err != nil {
			panic(err)
		}
		fmt.Println(info.Members[1].Name, info.Members[2].Name, info.Files[len(info.Files)-1].MD5)
	}
	// Output:
	// control.tar.zst data.tar.zst b1946ac92492d2347c6235b4d2611184
	// control.tar.xz data.tar.xz b1946ac92492d2347c6235b4d2611184
}
