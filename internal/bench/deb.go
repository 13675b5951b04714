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

// updebMemLimit is what cmd/updeb sets for one build (debug.SetMemoryLimit
// when GOMEMLIMIT is unset); the pkg/deb child gets it through GOMEMLIMIT.
const updebMemLimit = "GOMEMLIMIT=96MiB"

// nfpmVersion is installed with go install into .bench/bin (the newest
// release needs modules the Go module proxy refuses to serve here).
const nfpmVersion = "v2.43.0"

// debInputs are the packages the deb section writes: one of the size most
// of our packages have (a single amd64 program of about 30 MiB) and the
// whole payload; each is one table group.
var debInputs = []struct {
	name string
	pick func(rel string) bool // which payload files (relative paths) it holds
}{
	{"30 MiB", func(rel string) bool { return rel == "amd64/linux_amd64/compile" || rel == "amd64/linux_amd64/link" }},
	{"335 MiB", func(string) bool { return true }},
}

// debWriters are updeb's rows of the deb section, each compared with
// dpkg-deb in the same compression. mode is pkg/deb's xz mode ("" for the
// default): a mode is one line here, and childDebWrite passes it on.
var debWriters = []struct{ comp, mode string }{
	{"xz", ""},
	{"zstd", ""},
}

// stageTree hardlinks the payload files that pick selects into
// TREE/usr/lib/go-bench and writes DEBIAN/control, as a dpkg-deb --build
// input, and returns TREE and the size of the files.
func stageTree(tree, payloadDir string, pick func(string) bool) (int64, error) {
	files, err := payloadFiles(payloadDir)
	if err != nil {
		return 0, err
	}
	var total int64
	for _, rel := range files {
		if !pick(filepath.ToSlash(rel)) {
			continue
		}
		dst := filepath.Join(tree, "usr/lib/go-bench", rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return 0, err
		}
		if err := os.Link(filepath.Join(payloadDir, rel), dst); err != nil {
			return 0, err
		}
		size, err := fileSize(dst)
		if err != nil {
			return 0, err
		}
		total += size
	}
	ctl := "Package: go-bench\nVersion: 1.0-1\nArchitecture: amd64\nMaintainer: bench <bench@updeb.invalid>\nDescription: bench\n bench\n"
	if err := os.MkdirAll(filepath.Join(tree, "DEBIAN"), 0o755); err != nil {
		return 0, err
	}
	return total, os.WriteFile(filepath.Join(tree, "DEBIAN/control"), []byte(ctl), 0o644)
}

// benchDeb builds each of debInputs with dpkg-deb (xz and zstd), updeb's
// pkg/deb (debWriters) and nfpm (xz). Every run writes into a folder of its
// own, its TMPDIR too, whose peak size is the run's peak disk.
func benchDeb(work string) ([]row, error) {
	dir, total, err := payload()
	if err != nil {
		return nil, err
	}
	fmt.Printf("payload: %.1f MiB of Go binaries in %s\n", float64(total)/(1<<20), dir)
	nfpm, nfpmErr := installNfpm()
	if nfpmErr != nil {
		fmt.Printf("nfpm: %v (rows left out)\n", nfpmErr)
	}
	var rows []row
	for i, in := range debInputs {
		tree := filepath.Join(work, fmt.Sprintf("tree-%d", i))
		size, err := stageTree(tree, dir, in.pick)
		if err != nil {
			return nil, err
		}
		fmt.Printf("%s: %.1f MiB of files\n", in.name, float64(size)/(1<<20))
		n := 0
		// run measures cmd writing OUT.deb in a folder of its own (made by
		// args); the row is compared with ref.
		run := func(name, mode, ref string, args func(out string) (*exec.Cmd, error)) error {
			n++
			runDir := filepath.Join(work, fmt.Sprintf("run-%d-%d", i, n))
			if err := os.MkdirAll(runDir, 0o755); err != nil {
				return err
			}
			out := filepath.Join(runDir, "out.deb")
			cmd, err := args(out)
			if err != nil {
				return err
			}
			cmd.Stdout = io.Discard
			cmd.Env = append(cmd.Environ(), "TMPDIR="+runDir, fmt.Sprintf("SOURCE_DATE_EPOCH=%d", benchEpoch))
			r, err := measureDisk(name, cmd, runDir)
			if err != nil {
				return err
			}
			if r.outSize, err = fileSize(out); err != nil {
				return err
			}
			r.pkg, r.mode, r.ref = in.name, mode, ref
			rows = append(rows, r)
			return os.RemoveAll(runDir)
		}
		for _, c := range []string{"xz", "zstd"} {
			ref := "dpkg-deb -Z" + c
			err := run(ref, "dpkg-deb's", "", func(out string) (*exec.Cmd, error) {
				return exec.Command("dpkg-deb", "--root-owner-group", "-Z"+c, "--build", tree, out), nil
			})
			if err != nil {
				return nil, err
			}
			for _, wr := range debWriters {
				if wr.comp != c {
					continue
				}
				mode := wr.mode
				if mode == "" {
					mode = "default"
				}
				err := run("updeb (pkg/deb) "+c, mode, ref, func(out string) (*exec.Cmd, error) {
					cmd, err := self("deb-write", tree, out, c, wr.mode)
					if err == nil {
						cmd.Env = append(os.Environ(), updebMemLimit)
					}
					return cmd, err
				})
				if err != nil {
					return nil, err
				}
			}
			if c == "xz" && nfpm != "" {
				err := run("nfpm "+nfpmVersion+" xz", "nfpm's", ref, func(out string) (*exec.Cmd, error) {
					cfg, err := nfpmConfig(filepath.Dir(out), tree)
					return exec.Command(nfpm, "package", "-f", cfg, "-p", "deb", "-t", out), err
				})
				if err != nil {
					return nil, err
				}
			}
		}
		// nfpm against updeb, the other Go .deb writer.
		if r := rowNamed(rows, in.name, "nfpm "+nfpmVersion+" xz"); r.name != "" {
			u := rowNamed(rows, in.name, "updeb (pkg/deb) xz")
			u.name, u.ref = "updeb (pkg/deb) xz, vs nfpm", r.name
			rows = append(rows, u)
		}
		if err := os.RemoveAll(tree); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// rowNamed is the first row of pkg named name.
func rowNamed(rows []row, pkg, name string) row {
	for _, r := range rows {
		if r.pkg == pkg && r.name == name {
			return r
		}
	}
	return row{}
}

// installNfpm installs nfpm into .bench/bin once.
func installNfpm() (string, error) {
	bin, err := filepath.Abs(filepath.Join(benchCache, "bin"))
	if err != nil {
		return "", err
	}
	exe := filepath.Join(bin, "nfpm")
	if _, err := os.Stat(exe); err == nil {
		return exe, nil
	}
	cmd := exec.Command("go", "install", "github.com/goreleaser/nfpm/v2/cmd/nfpm@"+nfpmVersion)
	cmd.Env = append(os.Environ(), "GOBIN="+bin)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go install nfpm@%s: %v\n%s", nfpmVersion, err, out)
	}
	return exe, nil
}

// nfpmConfig writes an nfpm.yaml packaging every file of TREE (without
// DEBIAN/) at the same paths, modes from the files, xz compressed.
func nfpmConfig(work, tree string) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "name: go-bench\narch: amd64\nplatform: linux\nversion: \"1.0\"\nrelease: \"1\"\n")
	fmt.Fprintf(&b, "maintainer: bench <bench@updeb.invalid>\ndescription: bench\nmtime: \"%s\"\n", time.Unix(benchEpoch, 0).UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "deb:\n  compression: xz\ncontents:\n")
	err := filepath.WalkDir(tree, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == tree {
			return err
		}
		rel := "/" + filepath.ToSlash(strings.TrimPrefix(p, tree+"/"))
		if rel == "/DEBIAN" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, "  - {src: %q, dst: %q, file_info: {mode: 0%o}}\n", p, rel, info.Mode().Perm())
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	cfg := filepath.Join(work, "nfpm.yaml")
	return cfg, os.WriteFile(cfg, []byte(b.String()), 0o644)
}

// childDebWrite packs TREE (without DEBIAN/) into OUT with COMPRESSION and
// xz MODE ("" for the default).
func childDebWrite(args []string) error {
	if len(args) != 4 {
		return fmt.Errorf("usage: -child deb-write TREE OUT COMPRESSION MODE")
	}
	tree, out, comp, mode := args[0], args[1], args[2], args[3]
	if mode != "" {
		// pkg/deb has one xz mode so far: set Package's mode field from it here.
		return fmt.Errorf("xz mode %q: pkg/deb has no xz mode setting", mode)
	}
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

func fileSize(p string) (int64, error) {
	st, err := os.Stat(p)
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}
