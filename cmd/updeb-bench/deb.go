package main

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/updeb/updeb/internal/hostres"
	"github.com/updeb/updeb/internal/pipeline"
	"github.com/updeb/updeb/pkg/deb"
)

const benchEpoch = 1723636800 // 2024-08-14T12:00:00Z

// nfpmVersion is installed with go install into .bench/bin (the newest
// release needs modules the Go module proxy refuses to serve here).
const nfpmVersion = "v2.43.0"

// onePackageSize is the size of the "one amd64 package" input: most of
// updeb's packages are one or a few Go binaries of about this size.
const onePackageSize = 30 << 20

// smallFilesSize is the size of the "many small files" input.
const smallFilesSize = 25 << 20

// debInputs are the packages the deb section writes, each one table group:
// the largest amd64 binaries of the payload up to about 30 MiB (one
// package: one or two xz blocks), the whole payload (many blocks), and
// GOROOT's Go sources up to 25 MiB (about 1,700 files of 15 KiB on average:
// what a package's per-file costs come to, which the payload's 35 files
// hide; and text, which compresses unlike binaries).
// files returns the folder the files are in and their paths relative to it;
// an empty folder leaves the input out.
var debInputs = []struct {
	name  string
	files func(payloadDir string) (string, []string, error)
}{
	{"one amd64 package", func(dir string) (string, []string, error) {
		files, err := largestBinaries(dir, "amd64", onePackageSize)
		return dir, files, err
	}},
	{"whole payload", func(dir string) (string, []string, error) {
		files, err := payloadFiles(dir)
		return dir, files, err
	}},
	{"many small files", goSources},
}

// goSources returns GOROOT/src and its .go files in name order up to
// smallFilesSize, or no folder where go is not installed (a payload carried
// to another machine).
func goSources(string) (string, []string, error) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		fmt.Printf("many small files: left out (go env GOROOT: %v)\n", err)
		return "", nil, nil
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "src")
	all, err := payloadFiles(dir)
	if err != nil {
		return "", nil, err
	}
	sort.Strings(all)
	var files []string
	var total int64
	for _, f := range all {
		if !strings.HasSuffix(f, ".go") {
			continue
		}
		size, err := fileSize(filepath.Join(dir, f))
		if err != nil {
			return "", nil, err
		}
		if total+size > smallFilesSize {
			break
		}
		files, total = append(files, f), total+size
	}
	return dir, files, nil
}

// debWriters are updeb's rows of the deb section, each compared with
// dpkg-deb in the same compression; mode is pkg/deb's xz mode ("" for
// none), passed on by childDebWrite.
var debWriters = []struct{ comp, mode string }{
	{"xz", "fast"},
	{"xz", "best"},
	{"zstd", ""},
}

// roundsOf is how many interleaved rounds each compression's rows run, of
// which each row keeps the one with its median wall (medianRows). A zstd row
// takes a second or less, and one round's ratio moved by 20-50% between runs
// on a shared machine (1.22x, then 0.97x, with the same code); an xz round
// takes minutes.
var roundsOf = map[string]int{"xz": 1, "zstd": 5}

// medianRows keeps, of rows measured in interleaved rounds, one row of each
// name and mode, in the order of the first round: the round with the median
// wall (the upper one of an even count), whole, so that its CPU, memory and
// size are that round's.
func medianRows(rows []row) []row {
	type key struct{ name, mode string }
	var order []key
	runs := map[key][]row{}
	for _, r := range rows {
		k := key{r.name, r.mode}
		if runs[k] == nil {
			order = append(order, k)
		}
		runs[k] = append(runs[k], r)
	}
	out := make([]row, 0, len(order))
	for _, k := range order {
		rs := runs[k]
		sort.SliceStable(rs, func(i, j int) bool { return rs[i].wall < rs[j].wall })
		out = append(out, rs[len(rs)/2])
	}
	return out
}

// stageTree hardlinks files (relative to payloadDir) into TREE/usr/lib/go-bench
// (or copies them where payloadDir is on another file system) and writes
// DEBIAN/control and DEBIAN/md5sums, as a dpkg-deb --build input, and
// returns the size of the files.
//
// md5sums is there so that dpkg-deb's package has the members updeb's has:
// pkg/deb always writes md5sums (as dh_md5sums would before dpkg-deb), and
// without it dpkg-deb's control.tar is a few hundred bytes where updeb's
// holds a line per file (1% of the package on 1,700 small files). It is
// written here, untimed: the peer's rows do not count the hashing that
// updeb's rows do.
func stageTree(tree, payloadDir string, files []string) (int64, error) {
	var total int64
	sums := make(map[string]string, len(files))
	for _, rel := range files {
		inPkg := path.Join("usr/lib/go-bench", filepath.ToSlash(rel)) // as md5sums names it
		dst := filepath.Join(tree, filepath.FromSlash(inPkg))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return 0, err
		}
		if err := linkOrCopy(filepath.Join(payloadDir, rel), dst); err != nil {
			return 0, err
		}
		size, err := fileSize(dst)
		if err != nil {
			return 0, err
		}
		total += size
		if sums[inPkg], err = hashFile(dst, md5.New()); err != nil {
			return 0, err
		}
	}
	ctl := "Package: go-bench\nVersion: 1.0-1\nArchitecture: amd64\nMaintainer: bench <bench@updeb.invalid>\nDescription: bench\n bench\n"
	if err := os.MkdirAll(filepath.Join(tree, "DEBIAN"), 0o755); err != nil {
		return 0, err
	}
	if err := os.WriteFile(filepath.Join(tree, "DEBIAN/md5sums"), md5sumsFile(sums), 0o644); err != nil {
		return 0, err
	}
	return total, os.WriteFile(filepath.Join(tree, "DEBIAN/control"), []byte(ctl), 0o644)
}

// md5sumsFile is a DEBIAN/md5sums as dh_md5sums writes it: "<md5>  <path>"
// lines (paths without a leading slash), in path order.
func md5sumsFile(sums map[string]string) []byte {
	paths := make([]string, 0, len(sums))
	for p := range sums {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var b strings.Builder
	for _, p := range paths {
		fmt.Fprintf(&b, "%s  %s\n", sums[p], p)
	}
	return []byte(b.String())
}

// hashFile is the hex digest of a file's bytes in h.
func hashFile(p string, h hash.Hash) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// linkOrCopy hardlinks src to dst, or copies it (with its mode) where it
// cannot.
func linkOrCopy(src, dst string) error {
	if os.Link(src, dst) == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, st.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// largestBinaries returns the paths (relative to dir) of the largest files
// under dir/sub, largest first, while their total stays within limit (at
// least one).
func largestBinaries(dir, sub string, limit int64) ([]string, error) {
	files, err := payloadFiles(filepath.Join(dir, sub))
	if err != nil {
		return nil, err
	}
	sizes := map[string]int64{}
	for _, f := range files {
		if sizes[f], err = fileSize(filepath.Join(dir, sub, f)); err != nil {
			return nil, err
		}
	}
	sort.Slice(files, func(i, j int) bool {
		return sizes[files[i]] > sizes[files[j]] || sizes[files[i]] == sizes[files[j]] && files[i] < files[j]
	})
	var out []string
	var total int64
	for _, f := range files {
		if len(out) > 0 && total+sizes[f] > limit {
			continue
		}
		out = append(out, filepath.Join(sub, f))
		total += sizes[f]
	}
	return out, nil
}

// benchDeb builds each of debInputs with dpkg-deb (xz and zstd), updeb's
// pkg/deb (debWriters), nfpm (xz) and, on the same data.tar as GNU tar writes
// it, the peers alone (peerCommands). Every run writes into a folder
// of its own, its TMPDIR too, whose peak size is the run's peak disk.
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
		from, files, err := in.files(dir)
		if err != nil {
			return nil, err
		}
		if from == "" {
			continue
		}
		tree := filepath.Join(work, fmt.Sprintf("tree-%d", i))
		size, err := stageTree(tree, from, files)
		if err != nil {
			return nil, err
		}
		fmt.Printf("%s: %d files, %.1f MiB\n", in.name, len(files), float64(size)/(1<<20))
		n := 0
		// run measures cmd writing OUT in a folder of its own (made by
		// args); the row is compared with ref.
		run := func(name, mode, ref string, args func(out string) (*exec.Cmd, error)) error {
			n++
			runDir := filepath.Join(work, fmt.Sprintf("run-%d-%d", i, n))
			if err := os.MkdirAll(runDir, 0o755); err != nil {
				return err
			}
			out := filepath.Join(runDir, "out")
			cmd, err := args(out)
			if err != nil {
				return err
			}
			if cmd.Stdout == nil {
				cmd.Stdout = io.Discard
			}
			if cmd.Env == nil {
				cmd.Env = os.Environ()
			}
			cmd.Env = append(cmd.Env, "TMPDIR="+runDir, fmt.Sprintf("SOURCE_DATE_EPOCH=%d", benchEpoch))
			r, err := measureDisk(name, cmd, runDir)
			if f, ok := cmd.Stdout.(*os.File); ok {
				f.Close()
			}
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
		dataTar := filepath.Join(work, "data.tar")
		if err := writeDataTar(tree, dataTar); err != nil {
			return nil, err
		}
		for _, c := range []string{"xz", "zstd"} {
			first := len(rows)
			for range roundsOf[c] {
				ref := "dpkg-deb -Z" + c
				err := run(ref, "", "", func(out string) (*exec.Cmd, error) {
					return exec.Command("dpkg-deb", "--root-owner-group", "-Z"+c, "--build", tree, out), nil
				})
				if err != nil {
					return nil, err
				}
				for _, wr := range debWriters {
					if wr.comp != c {
						continue
					}
					err := run("updeb (pkg/deb) "+c, wr.mode, ref, func(out string) (*exec.Cmd, error) {
						return self("deb-write", tree, out, c, wr.mode)
					})
					if err != nil {
						return nil, err
					}
				}
				if nfpm != "" && c == "xz" {
					err := run("nfpm "+nfpmVersion+" xz", "", ref, func(out string) (*exec.Cmd, error) {
						cfg, err := nfpmConfig(filepath.Dir(out), tree)
						return exec.Command(nfpm, "package", "-f", cfg, "-p", "deb", "-t", out), err
					})
					if err != nil {
						return nil, err
					}
				}
				if err := peerRows(c, dataTar, ref, run); err != nil {
					return nil, err
				}
			}
			rows = append(rows[:first], medianRows(rows[first:])...)
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
		if err := os.Remove(dataTar); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// peerCommands are the compressors alone on data.tar, each compared with
// dpkg-deb in its compression: xz -6 -T1 (what dpkg-deb -Zxz runs) and -T2,
// and zstd -3 -T2 (the level dpkg-deb -Zzstd uses): what the compressor
// costs without a .deb writer around it (for zstd, libzstd against
// klauspost's encoder in the updeb row). Each writes to standard output.
var peerCommands = map[string][][]string{
	"xz":   {{"xz", "-6", "-T1"}, {"xz", "-6", "-T2"}},
	"zstd": {{"zstd", "-3", "-T2"}},
}

// peerRows runs comp's peerCommands on dataTar, as writeDataTar made it.
func peerRows(comp, dataTar, ref string, run func(name, mode, ref string, args func(out string) (*exec.Cmd, error)) error) error {
	for _, argv := range peerCommands[comp] {
		err := run(strings.Join(argv, " ")+" (data.tar)", "", ref, func(out string) (*exec.Cmd, error) {
			f, err := os.Create(out)
			if err != nil {
				return nil, err
			}
			cmd := exec.Command(argv[0], append(argv[1:len(argv):len(argv)], "-c", dataTar)...)
			cmd.Stdout = f
			return cmd, nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// writeDataTar writes TREE's data.tar (DEBIAN/ left out) as GNU tar writes
// it, sorted, owned by root: the peers' input, made beforehand and not
// measured.
func writeDataTar(tree, dataTar string) error {
	tarCmd := exec.Command("tar", "--sort=name", "--owner=0", "--group=0", "--numeric-owner", "--exclude=./DEBIAN", "-cf", dataTar, "-C", tree, ".")
	if b, err := tarCmd.CombinedOutput(); err != nil {
		return fmt.Errorf("tar: %v\n%s", err, b)
	}
	return nil
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

// childDebWrite packs TREE (without DEBIAN/) into OUT with COMPRESSION (and
// the xz mode XZMODE, default fast), with the compression pool and heap
// limit updeb build gives one build at the default settings on the CPUs
// this process may use (pipeline.SizeRun).
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
		// NoSHA256 as `updeb build` gives every file of an archive (only
		// raw sources and recipe-folder files get their sha256 taken).
		entries = append(entries, deb.Entry{Path: rel, Type: deb.TypeFile, Mode: info.Mode(), Size: info.Size(), NoSHA256: true,
			Open: func() (io.ReadCloser, error) { return os.Open(p) }})
		return nil
	})
	if err != nil {
		return err
	}
	host, err := hostres.Read(os.DirFS("/"), runtime.NumCPU())
	if err != nil {
		return err
	}
	res, err := pipeline.SizeRun(host, 0, 0, 1)
	if err != nil {
		return err
	}
	if b := os.Getenv("BENCH_POOL_BLOCKS"); b != "" { // an experiment: the pool's blocks
		n, err := strconv.Atoi(b)
		if err != nil {
			return fmt.Errorf("BENCH_POOL_BLOCKS: %v", err)
		}
		pool, err := deb.NewPoolBlocks(res.Pool.Workers(), n)
		if err != nil {
			return err
		}
		res.MemoryLimit += pool.Memory() - res.Pool.Memory() // the heap's limit in step with the room
		res.Pool = pool
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(res.MemoryLimit)
	}
	_, err = deb.Write(context.Background(), out, &deb.Package{
		Control: deb.Control{Package: "go-bench", Version: "1.0-1", Architecture: "amd64",
			Maintainer: "bench <bench@updeb.invalid>", Summary: "bench", Description: "bench"},
		Entries: entries, SourceDateEpoch: time.Unix(benchEpoch, 0), Compression: deb.Compression(comp), XZMode: mode, Pool: res.Pool,
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
