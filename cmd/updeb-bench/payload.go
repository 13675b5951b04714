package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// benchCache holds the inputs that are slow to make, reused by every run.
const benchCache = ".bench"

// payloadBuilds are cross-compiled in addition to the toolchain's own amd64
// binaries: distinct machine code, like a release of several architectures
// (about 86 + 169 + 82 MiB with Go 1.26).
var payloadBuilds = []struct {
	arch string
	pkgs []string
}{
	{"arm64", []string{"cmd/..."}},
	{"ppc64le", []string{"cmd/compile", "cmd/go", "cmd/pprof", "cmd/trace"}},
}

// payloadFlag names a tree to measure instead of the Go binaries payload
// (on a machine without Go: a tree of real ELF libraries, say).
var payloadFlag = flag.String("payload", "", "a folder of files to use as the payload instead of making one with Go (the deb, cores and scaling sections)")

// elfPayloadFlag makes the payload of the system's ELF shared libraries
// instead (elfPayload).
var elfPayloadFlag = flag.Int("elf-payload", 0, "make the payload of this many MiB of the system's ELF shared libraries instead of Go binaries")

// minPayload is the size the deb and pipeline sections want at least.
const minPayload = 300 << 20

// payload returns a tree of Go binaries (>= minPayload bytes): GOROOT's bin/
// and pkg/tool/*/ as amd64, and `go build cmd/...` for payloadArches, made
// once into .bench/payload-GOVERSION and reused.
func payload() (dir string, size int64, err error) {
	if *elfPayloadFlag > 0 {
		return elfPayload(*elfPayloadFlag)
	}
	if *payloadFlag != "" {
		if dir, err = filepath.Abs(*payloadFlag); err != nil {
			return "", 0, err
		}
		size, err = treeSize(dir)
		return dir, size, err
	}
	v, err := exec.Command("go", "env", "GOVERSION", "GOROOT").Output()
	if err != nil {
		return "", 0, fmt.Errorf("go env: %v", err)
	}
	f := strings.Fields(string(v))
	goversion, goroot := f[0], f[1]
	dir, err = filepath.Abs(filepath.Join(benchCache, "payload-"+goversion))
	if err != nil {
		return "", 0, err
	}
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err != nil {
		fmt.Printf("making the payload in %s (once; takes minutes)\n", dir)
		tmp := dir + ".tmp"
		os.RemoveAll(tmp)
		if err := os.MkdirAll(filepath.Join(tmp, "amd64"), 0o755); err != nil {
			return "", 0, err
		}
		srcs, _ := filepath.Glob(filepath.Join(goroot, "pkg/tool/*"))
		for _, src := range append([]string{filepath.Join(goroot, "bin")}, srcs...) {
			if out, err := exec.Command("cp", "-a", src, filepath.Join(tmp, "amd64")+"/").CombinedOutput(); err != nil {
				return "", 0, fmt.Errorf("cp %s: %v\n%s", src, err, out)
			}
		}
		for _, b := range payloadBuilds {
			cmd := exec.Command("go", append([]string{"build", "-trimpath", "-o", filepath.Join(tmp, b.arch) + "/"}, b.pkgs...)...)
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+b.arch)
			if out, err := cmd.CombinedOutput(); err != nil {
				return "", 0, fmt.Errorf("go build %s for %s: %v\n%s", b.pkgs, b.arch, err, out)
			}
		}
		if err := os.WriteFile(filepath.Join(tmp, ".complete"), nil, 0o644); err != nil {
			return "", 0, err
		}
		os.RemoveAll(dir)
		if err := os.Rename(tmp, dir); err != nil {
			return "", 0, err
		}
	}
	size, err = treeSize(dir)
	if err == nil && size < minPayload {
		err = fmt.Errorf("payload %s has %d MiB, want >= %d", dir, size>>20, minPayload>>20)
	}
	return dir, size, err
}

// treeSize is the size of the regular files under dir.
func treeSize(dir string) (size int64, err error) {
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		size += info.Size()
		return err
	})
	return size, err
}

// payloadFiles lists the payload's regular files relative to dir, sorted.
func payloadFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || d.Name() == ".complete" {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		files = append(files, rel)
		return err
	})
	return files, err
}

// elfPayload copies ELF shared libraries of this system (files of 1 to 64
// MiB whose names hold ".so" and that start with an ELF header, one of each
// name, in path order under /usr/lib, /usr/local and /opt) into
// .bench/elf-MIB until they hold mib MiB: the kind of tree the issue's
// measurements used, on a machine without Go.
func elfPayload(mib int) (dir string, size int64, err error) {
	if dir, err = filepath.Abs(filepath.Join(benchCache, fmt.Sprintf("elf-%d", mib))); err != nil {
		return "", 0, err
	}
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
		size, err = treeSize(dir)
		return dir, size, err
	}
	tmp := dir + ".tmp"
	os.RemoveAll(tmp)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return "", 0, err
	}
	seen := map[string]bool{}
	errFull := errors.New("full")
	n := 0
	for _, root := range []string{"/usr/lib", "/usr/local", "/opt"} {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() || !strings.Contains(d.Name(), ".so") || seen[d.Name()] {
				return nil // unreadable folders are skipped
			}
			info, err := d.Info()
			if err != nil || info.Size() < 1<<20 || info.Size() > 64<<20 {
				return nil
			}
			copied, err := copyELF(p, filepath.Join(tmp, fmt.Sprintf("%04d-%s", n, d.Name())))
			if !copied {
				return err // nil for a file that is not ELF or cannot be read
			}
			seen[d.Name()] = true
			n++
			if size += info.Size(); size >= int64(mib)<<20 {
				return errFull
			}
			return nil
		})
		if err == errFull {
			break
		}
		if err != nil {
			return "", 0, err
		}
	}
	fmt.Printf("payload: %d ELF libraries, %d MiB, in %s\n", n, size>>20, dir)
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), nil, 0o644); err != nil {
		return "", 0, err
	}
	os.RemoveAll(dir)
	return dir, size, os.Rename(tmp, dir)
}

// copyELF copies src to dst if src starts with an ELF header; it reports
// whether it did, and only dst's errors.
func copyELF(src, dst string) (bool, error) {
	in, err := os.Open(src)
	if err != nil {
		return false, nil
	}
	defer in.Close()
	magic := make([]byte, 4)
	if _, err := io.ReadFull(in, magic); err != nil || string(magic) != "\x7fELF" {
		return false, nil
	}
	out, err := os.Create(dst)
	if err != nil {
		return false, err
	}
	_, err = io.Copy(out, io.MultiReader(bytes.NewReader(magic), in))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err == nil, err
}
