package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/updeb/updeb/pkg/deb"
)

const benchEpoch = 1723636800 // 2024-08-14T12:00:00Z

// benchDeb stages the Go toolchain's binaries (bin/ and pkg/tool/*/) as one
// package tree and builds it with pkg/deb and dpkg-deb in each compression.
func benchDeb(work string) ([]row, error) {
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return nil, fmt.Errorf("go env GOROOT: %v", err)
	}
	root := strings.TrimSpace(string(goroot))
	tree := filepath.Join(work, "tree")
	srcs, _ := filepath.Glob(filepath.Join(root, "pkg/tool/*"))
	srcs = append([]string{filepath.Join(root, "bin")}, srcs...)
	var total int64
	for _, src := range srcs {
		ents, err := os.ReadDir(src)
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			if !e.Type().IsRegular() {
				continue
			}
			dst := filepath.Join(tree, "usr/lib/go-bench", filepath.Base(src), e.Name())
			n, err := copyFile(filepath.Join(src, e.Name()), dst)
			if err != nil {
				return nil, err
			}
			total += n
		}
	}
	if total < 80<<20 {
		return nil, fmt.Errorf("staged only %d MiB of Go binaries, want >= 80", total>>20)
	}
	ctl := "Package: go-bench\nVersion: 1.0-1\nArchitecture: amd64\nMaintainer: bench <bench@updeb.invalid>\nDescription: bench\n bench\n"
	if err := os.MkdirAll(filepath.Join(tree, "DEBIAN"), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(tree, "DEBIAN/control"), []byte(ctl), 0o644); err != nil {
		return nil, err
	}
	fmt.Printf("staged %.1f MiB of Go binaries from %s\n", float64(total)/(1<<20), root)
	var rows []row
	for _, c := range []struct{ ours, dpkg string }{{"xz", "xz"}, {"gzip", "gzip"}, {"zstd", "zstd"}} {
		ref := fmt.Sprintf("dpkg-deb -Z%s", c.dpkg)
		out := filepath.Join(work, "dpkg-"+c.dpkg+".deb")
		cmd := exec.Command("dpkg-deb", "--root-owner-group", "-Z"+c.dpkg, "--build", tree, out)
		cmd.Env = append(os.Environ(), fmt.Sprintf("SOURCE_DATE_EPOCH=%d", benchEpoch))
		cmd.Stdout = io.Discard
		r, err := measure(ref, cmd)
		if err != nil {
			return nil, err
		}
		if r.outSize, err = fileSize(out); err != nil {
			return nil, err
		}
		rows = append(rows, r)
		out = filepath.Join(work, "updeb-"+c.ours+".deb")
		cmd, err = self("deb-write", tree, out, c.ours)
		if err != nil {
			return nil, err
		}
		r, err = measure("pkg/deb "+c.ours, cmd)
		if err != nil {
			return nil, err
		}
		if r.outSize, err = fileSize(out); err != nil {
			return nil, err
		}
		r.ref = ref
		rows = append(rows, r)
		os.Remove(out)
	}
	return rows, nil
}

// childDebWrite packs TREE (without DEBIAN/) into OUT with COMPRESSION.
func childDebWrite(args []string) error {
	if len(args) != 3 {
		return fmt.Errorf("usage: -child deb-write TREE OUT COMPRESSION")
	}
	tree, out, comp := args[0], args[1], args[2]
	var entries []deb.Entry
	err := filepath.WalkDir(tree, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == tree {
			return err
		}
		rel := "/" + filepath.ToSlash(strings.TrimPrefix(p, tree+"/"))
		if rel == "/DEBIAN" {
			return filepath.SkipDir
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			entries = append(entries, deb.Entry{Path: rel, Type: deb.TypeDir})
			return nil
		}
		entries = append(entries, deb.Entry{Path: rel, Type: deb.TypeFile, Mode: info.Mode(), Size: info.Size(),
			Open: func() (io.ReadCloser, error) { return os.Open(p) }})
		return nil
	})
	if err != nil {
		return err
	}
	_, err = deb.Write(context.Background(), out, &deb.Package{
		Control: deb.Control{Package: "go-bench", Version: "1.0-1", Architecture: "amd64",
			Maintainer: "bench <bench@updeb.invalid>", Summary: "bench", Description: "bench"},
		Entries: entries, SourceDateEpoch: time.Unix(benchEpoch, 0), Compression: deb.Compression(comp),
	})
	return err
}

func copyFile(src, dst string) (int64, error) {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return 0, err
	}
	in, err := os.Open(src)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return n, err
}

func fileSize(p string) (int64, error) {
	st, err := os.Stat(p)
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}
