// Command bench measures updeb against its references and prints one table per
// section (`make bench`). Each measured run is a child process, so that wall
// time and peak RSS (rusage Maxrss) are its own. Add a section by appending to
// sections; a child mode by appending to children.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"text/tabwriter"
	"time"
)

// row is one measured run.
type row struct {
	name    string
	wall    time.Duration
	maxRSS  int64 // KiB
	outSize int64 // bytes, 0 if none
	// ref names the row this one is compared with ("" for none).
	ref string
}

// section produces rows; workDir is a scratch folder removed afterwards.
type section struct {
	name string
	run  func(workDir string) ([]row, error)
}

var sections = []section{
	{"deb: one package from the Go toolchain's binaries", benchDeb},
}

// children are the modes the program runs in when re-executed as a child.
var children = map[string]func(args []string) error{
	"deb-write": childDebWrite,
}

func main() {
	child := flag.String("child", "", "internal: run as a measured child process")
	flag.Parse()
	if *child != "" {
		f, ok := children[*child]
		if !ok {
			fmt.Fprintf(os.Stderr, "bench: unknown child mode %q\n", *child)
			os.Exit(2)
		}
		if err := f(flag.Args()); err != nil {
			fmt.Fprintf(os.Stderr, "bench: %s: %v\n", *child, err)
			os.Exit(1)
		}
		return
	}
	failed := false
	for _, s := range sections {
		dir, err := os.MkdirTemp("", "updeb-bench-")
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
		printTable(s.name, rows)
	}
	if failed {
		os.Exit(1)
	}
}

// measure runs a command as a child and returns its wall time and peak RSS.
func measure(name string, cmd *exec.Cmd) (row, error) {
	cmd.Stderr = os.Stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return row{}, fmt.Errorf("%s: %v", name, err)
	}
	wall := time.Since(start)
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	r := row{name: name, wall: wall}
	if ru != nil {
		r.maxRSS = ru.Maxrss
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
	byName := map[string]row{}
	for _, r := range rows {
		byName[r.name] = r
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "run\twall\tpeak RSS\toutput\twall ratio\tRSS ratio\tsize ratio\t")
	for _, r := range rows {
		ratios := "\t\t\t"
		if ref, ok := byName[r.ref]; ok && r.ref != "" {
			ratios = fmt.Sprintf("%.2f\t%.2f\t%.3f\t", r.wall.Seconds()/ref.wall.Seconds(),
				float64(r.maxRSS)/float64(ref.maxRSS), float64(r.outSize)/float64(ref.outSize))
		}
		fmt.Fprintf(w, "%s\t%.2fs\t%.1f MiB\t%.2f MiB\t%s\n", r.name, r.wall.Seconds(), float64(r.maxRSS)/1024,
			float64(r.outSize)/(1<<20), ratios)
	}
	w.Flush()
}
