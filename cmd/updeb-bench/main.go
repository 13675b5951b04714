// Command bench measures updeb against its references and prints one table per
// section (`make bench`). Each measured run is a child process, so that wall
// time, CPU time and peak RSS (rusage of the child and the children it waited
// for) are its own. Add a section by appending to sections; a child mode by
// appending to children. Inputs that are slow to make (the Go binaries
// payload, its tarball, nfpm) are cached in .bench/ at the repository root, so
// reruns start measuring at once; -only runs some sections.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/updeb/updeb/cmd/updeb-bench/fetchbench"
	"github.com/updeb/updeb/internal/testkit/diskwatch"
)

// row is one measured run.
type row struct {
	name     string
	pkg      string // the input, when a section measures several ("" for none)
	mode     string // the writer's setting, when a section compares several
	wall     time.Duration
	cpu      time.Duration // user + system
	maxRSS   int64         // KiB
	outSize  int64         // bytes, 0 if none
	peakDisk int64         // bytes in the run's watched folder at most, 0 if not watched
	// ref names the row this one is compared with ("" for none): the row of
	// that name with the same pkg.
	ref string
}

// section produces rows; workDir is a scratch folder removed afterwards.
type section struct {
	id, name string
	run      func(workDir string) ([]row, error)
}

var sections = []section{
	{"deb", "deb: one amd64 package (~30 MiB), the whole payload (GOROOT amd64, arm64 cmd/..., ppc64le compile/go/pprof/trace) and many small files (GOROOT/src .go, 25 MiB): pkg/deb's xz modes vs dpkg-deb -Zxz, nfpm and xz -6; its zstd vs dpkg-deb -Zzstd and zstd -3 (medians of 5 interleaved rounds)", benchDeb},
	{"pipeline", "end to end: fetch through squid, verify (sha512 + OpenPGP), extract, build one package from a tarball of the same binaries", benchPipeline},
	{"fetch", "fetch: updeb vs curl through squid", benchFetch},
	{"repo", "repository: publish into a suite of N package versions, publish 1 more, refresh; vs apt-ftparchive + gzip + xz + gpg on the same pool", benchRepo},
	{"cores", "cores: the whole payload by CPU count (taskset): pkg/deb's xz modes at the default settings (the pool sized from the CPUs) vs dpkg-deb -Zxz and vs xz -6 -T N on the same data.tar", benchCores},
	{"scaling", "scaling: `updeb build` of every recipe of a stand-in mirror (small and large packages of the payload's binaries) at build.parallel 1 and 2 and with a 300 MiB budget (publishing into suites of 10 to 10000 versions: the repo section)", benchScaling},
}

// children are the modes the program runs in when re-executed as a child.
var children = map[string]func(args []string) error{
	"deb-write":    childDebWrite,
	"repo-publish": childRepoPublish,
	"repo-refresh": childRepoRefresh,
}

func main() {
	child := flag.String("child", "", "internal: run as a measured child process")
	only := flag.String("only", "", "comma-separated sections to run (deb or its old name xz, cores, pipeline, fetch, repo, scaling); default all")
	flag.IntVar(&fetchRuns, "fetch-runs", fetchRuns, "rounds of the fetch section (the median is reported)")
	flag.Func("fetch-also", "NAME=PATH: another updeb binary the fetch section measures in the same rounds (repeatable)", func(v string) error {
		name, path, ok := strings.Cut(v, "=")
		if !ok || name == "" || path == "" {
			return fmt.Errorf("want NAME=PATH, have %q", v)
		}
		fetchAlso = append(fetchAlso, fetchbench.Binary{Name: name, Path: path})
		return nil
	})
	flag.Parse()
	if *child != "" {
		// BENCH_CPUPROFILE=FILE writes the child's CPU profile, to see what a
		// row's time goes to (go tool pprof).
		if pf := os.Getenv("BENCH_CPUPROFILE"); pf != "" {
			out, err := os.Create(pf)
			if err == nil {
				err = pprof.StartCPUProfile(out)
			}
			if err != nil {
				fmt.Fprintf(os.Stderr, "bench: BENCH_CPUPROFILE: %v\n", err)
				os.Exit(1)
			}
		}
		f, ok := children[*child]
		if !ok {
			fmt.Fprintf(os.Stderr, "bench: unknown child mode %q\n", *child)
			os.Exit(2)
		}
		if err := f(flag.Args()); err != nil {
			fmt.Fprintf(os.Stderr, "bench: %s: %v\n", *child, err)
			pprof.StopCPUProfile()
			os.Exit(1)
		}
		pprof.StopCPUProfile()
		return
	}
	if err := os.MkdirAll(benchCache, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("bench on %d CPUs, load average at start: %s", runtime.NumCPU(), load)
	failed := false
	for _, s := range sections {
		if *only != "" && !slices.Contains(strings.Split(strings.ReplaceAll(*only, "xz", "deb"), ","), s.id) {
			continue
		}
		dir, err := os.MkdirTemp(benchCache, "work-") // beside the payload: hardlinks work
		if err == nil {
			dir, err = filepath.Abs(dir)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		rows, err := s.run(dir)
		os.RemoveAll(dir)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: %s: %v\n", s.name, err)
			failed = true
			continue
		}
		if rows != nil {
			printTable(s.name, rows)
		}
	}
	load, _ = os.ReadFile("/proc/loadavg")
	fmt.Printf("\nload average at the end: %s", load)
	if failed {
		os.Exit(1)
	}
}

// measure runs a command as a child and returns its wall time and peak RSS.
func measure(name string, cmd *exec.Cmd) (row, error) {
	return measureDisk(name, cmd, "")
}

// measureDisk is measure that also records the peak disk use of dir while
// the command runs, above what dir held at the start ("" for none).
func measureDisk(name string, cmd *exec.Cmd, dir string) (row, error) {
	cmd.Stderr = os.Stderr
	stop := func() int64 { return 0 }
	var base int64
	if dir != "" {
		base = diskwatch.Usage(dir)
		stop = diskwatch.Start(dir)
	}
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	peak := max(stop()-base, 0)
	if err != nil {
		return row{}, fmt.Errorf("%s: %v", name, err)
	}
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	r := row{name: name, wall: wall, peakDisk: peak}
	if ru != nil {
		r.maxRSS = int64(ru.Maxrss)
		r.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return r, nil
}

// self re-executes this program in a child mode.
func self(mode string, args ...string) (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return exec.Command(exe, append([]string{"-child", mode}, args...)...), nil
}

func printTable(title string, rows []row) {
	fmt.Printf("\n## %s\n\n", title)
	type key struct{ pkg, name string }
	byName := map[key]row{}
	var pkgs, modes, disk bool
	for _, r := range rows {
		byName[key{r.pkg, r.name}] = r
		pkgs, modes, disk = pkgs || r.pkg != "", modes || r.mode != "", disk || r.peakDisk > 0
	}
	// Optional columns appear when a row of the table fills them.
	opt := func(on bool, v string) string {
		if !on {
			return ""
		}
		return v + "\t"
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, opt(pkgs, "package")+"run\t"+opt(modes, "mode")+"wall\tCPU\tpeak RSS\t"+opt(disk, "peak disk")+"output\tvs\twall ratio\tCPU ratio\tRSS ratio\tsize ratio\t")
	for _, r := range rows {
		ratios := "\t\t\t\t\t"
		if ref, ok := byName[key{r.pkg, r.ref}]; ok && r.ref != "" {
			size := ""
			if ref.outSize > 0 {
				size = fmt.Sprintf("%.3f", float64(r.outSize)/float64(ref.outSize))
			}
			ratios = fmt.Sprintf("%s\t%.2f\t%.2f\t%.2f\t%s\t", ref.name, r.wall.Seconds()/ref.wall.Seconds(),
				r.cpu.Seconds()/ref.cpu.Seconds(), float64(r.maxRSS)/float64(ref.maxRSS), size)
		}
		fmt.Fprintf(w, "%s%s\t%s%.2fs\t%.2fs\t%.1f MiB\t%s%.2f MiB\t%s\n", opt(pkgs, r.pkg), r.name, opt(modes, r.mode),
			r.wall.Seconds(), r.cpu.Seconds(), float64(r.maxRSS)/1024, opt(disk, mib(r.peakDisk)), float64(r.outSize)/(1<<20), ratios)
	}
	w.Flush()
}

func mib(n int64) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
