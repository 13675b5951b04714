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
const updebMemLimit = "GOMEMLIMIT=256MiB"

// nfpmVersion is installed with go install into .bench/bin (the newest
// release needs modules the Go module proxy refuses to serve here).
const nfpmVersion = "v2.43.0"

// stageTree hardlinks the payload into TREE/usr/lib/go-bench and writes
// DEBIAN/control, as a dpkg-deb --build input.
func stageTree(work, payloadDir string) (string, error) {
	tree := filepath.Join(work, "tree")
	if err := os.MkdirAll(filepath.Join(tree, "usr/lib"), 0o755); err != nil {
		return "", err
	}
	if out, err := exec.Command("cp", "-al", payloadDir, filepath.Join(tree, "usr/lib/go-bench")).CombinedOutput(); err != nil {
		return "", fmt.Errorf("cp -al: %v\n%s", err, out)
	}
	os.Remove(filepath.Join(tree, "usr/lib/go-bench/.complete"))
	ctl := "Package: go-bench\nVersion: 1.0-1\nArchitecture: amd64\nMaintainer: bench <bench@updeb.invalid>\nDescription: bench\n bench\n"
	if err := os.MkdirAll(filepath.Join(tree, "DEBIAN"), 0o755); err != nil {
		return "", err
	}
	return tree, os.WriteFile(filepath.Join(tree, "DEBIAN/control"), []byte(ctl), 0o644)
}

// benchDeb builds one package of the payload with dpkg-deb, pkg/deb and nfpm
// in xz, and with dpkg-deb and pkg/deb in zstd.
func benchDeb(work string) ([]row, error) {
	dir, total, err := payload()
	if err != nil {
		return nil, err
	}
	tree, err := stageTree(work, dir)
	if err != nil {
		return nil, err
	}
	fmt.Printf("payload: %.1f MiB of Go binaries in %s\n", float64(total)/(1<<20), dir)
	nfpm, nfpmErr := installNfpm()
	if nfpmErr != nil {
		fmt.Printf("nfpm: %v (row left out)\n", nfpmErr)
	}
	var rows []row
	run := func(name, ref, out string, cmd *exec.Cmd) error {
		cmd.Stdout = io.Discard
		r, err := measure(name, cmd)
		if err != nil {
			return err
		}
		if r.outSize, err = fileSize(out); err != nil {
			return err
		}
		r.ref = ref
		rows = append(rows, r)
		return nil
	}
	for _, c := range []string{"xz", "zstd"} {
		ref := "dpkg-deb -Z" + c
		out := filepath.Join(work, "dpkg-"+c+".deb")
		cmd := exec.Command("dpkg-deb", "--root-owner-group", "-Z"+c, "--build", tree, out)
		cmd.Env = append(os.Environ(), fmt.Sprintf("SOURCE_DATE_EPOCH=%d", benchEpoch))
		if err := run(ref, "", out, cmd); err != nil {
			return nil, err
		}
		out = filepath.Join(work, "updeb-"+c+".deb")
		cmd, err = self("deb-write", tree, out, c)
		if err != nil {
			return nil, err
		}
		cmd.Env = append(os.Environ(), updebMemLimit)
		if err := run("updeb (pkg/deb) "+c, ref, out, cmd); err != nil {
			return nil, err
		}
		if c == "xz" && nfpm != "" {
			out = filepath.Join(work, "nfpm-xz.deb")
			cfg, err := nfpmConfig(work, tree)
			if err != nil {
				return nil, err
			}
			cmd := exec.Command(nfpm, "package", "-f", cfg, "-p", "deb", "-t", out)
			cmd.Env = append(os.Environ(), fmt.Sprintf("SOURCE_DATE_EPOCH=%d", benchEpoch))
			if err := run("nfpm "+nfpmVersion+" xz", ref, out, cmd); err != nil {
				return nil, err
			}
		}
	}
	// nfpm against updeb, the other Go .deb writer.
	for _, r := range rows {
		if strings.HasPrefix(r.name, "nfpm") {
			u := rowNamed(rows, "updeb (pkg/deb) xz")
			u.name, u.ref = "updeb (pkg/deb) xz, vs nfpm", r.name
			rows = append(rows, u)
		}
	}
	return rows, nil
}

func rowNamed(rows []row, name string) row {
	for _, r := range rows {
		if r.name == name {
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

// childDebWrite packs TREE (without DEBIAN/) into OUT with COMPRESSION (and
// the xz mode XZMODE, default fast).
func childDebWrite(args []string) error {
	if len(args) != 3 && len(args) != 4 {
		return fmt.Errorf("usage: -child deb-write TREE OUT COMPRESSION [XZMODE]")
	}
	tree, out, comp := args[0], args[1], args[2]
	var mode deb.XZMode
	if len(args) == 4 {
		mode = deb.XZMode(args[3])
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
		Entries: entries, SourceDateEpoch: time.Unix(benchEpoch, 0), Compression: deb.Compression(comp), XZMode: mode,
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
