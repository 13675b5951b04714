package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// coresFlag lists the CPU counts of the cores section (default: 1, 2, 4,
// ... up to the CPUs this process may use, that count included).
var coresFlag = flag.String("cores", "", "comma-separated CPU counts of the cores section (default 1, 2, 4, ... up to the CPUs available)")

// coreCounts returns the CPU counts the cores section measures.
func coreCounts(available int) ([]int, error) {
	if *coresFlag == "" {
		var ns []int
		for n := 1; n < available; n *= 2 {
			ns = append(ns, n)
		}
		return append(ns, available), nil
	}
	var ns []int
	for f := range strings.SplitSeq(*coresFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > available {
			return nil, fmt.Errorf("-cores: %q is not a count of 1 to %d CPUs", f, available)
		}
		ns = append(ns, n)
	}
	return ns, nil
}

// allowedCPUs returns the CPUs this process may run on, from
// /proc/self/status (Cpus_allowed_list: "0-3,8").
func allowedCPUs() ([]int, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return nil, err
	}
	for line := range strings.Lines(string(b)) {
		list, ok := strings.CutPrefix(line, "Cpus_allowed_list:")
		if !ok {
			continue
		}
		var cpus []int
		for r := range strings.SplitSeq(strings.TrimSpace(list), ",") {
			lo, hi, isRange := strings.Cut(r, "-")
			a, err1 := strconv.Atoi(lo)
			b := a
			var err2 error
			if isRange {
				b, err2 = strconv.Atoi(hi)
			}
			if err1 != nil || err2 != nil || b < a {
				return nil, fmt.Errorf("/proc/self/status: cannot read Cpus_allowed_list %q", list)
			}
			for c := a; c <= b; c++ {
				cpus = append(cpus, c)
			}
		}
		return cpus, nil
	}
	return nil, fmt.Errorf("/proc/self/status has no Cpus_allowed_list")
}

// benchCores writes the whole payload's tree, with 1, 2, 4, ... CPUs
// (taskset), with updeb's pkg/deb in both xz modes at the default settings
// (the pool sized from the CPUs the process may use, as updeb build sizes
// it), dpkg-deb -Zxz, and xz -6 -T N on the same data.tar as GNU tar writes
// it: the scaling curve of each. updeb's rows are compared with dpkg-deb's
// and again with xz's of the same CPU count.
func benchCores(work string) ([]row, error) {
	dir, _, err := payload()
	if err != nil {
		return nil, err
	}
	cpus, err := allowedCPUs()
	if err != nil {
		return nil, err
	}
	counts, err := coreCounts(len(cpus))
	if err != nil {
		return nil, err
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		return nil, fmt.Errorf("taskset (util-linux) is needed: %v", err)
	}
	files, err := payloadFiles(dir)
	if err != nil {
		return nil, err
	}
	tree := filepath.Join(work, "tree")
	if _, err := stageTree(tree, dir, files); err != nil {
		return nil, err
	}
	dataTar := filepath.Join(work, "data.tar")
	if err := writeDataTar(tree, dataTar); err != nil {
		return nil, err
	}
	fmt.Printf("cores: %d CPU counts %v of %d available (load average %s)\n", len(counts), counts, len(cpus), loadAverage())
	var rows []row
	for _, n := range counts {
		list := make([]string, n)
		for i := range list {
			list[i] = strconv.Itoa(cpus[i])
		}
		pkg := fmt.Sprintf("%d CPU(s)", n)
		// run measures args (on the first n CPUs) writing out; the row is
		// compared with ref.
		run := func(name, mode, ref string, args ...string) (row, error) {
			out := filepath.Join(work, "out")
			cmd := exec.Command("taskset", append([]string{"-c", strings.Join(list, ",")}, args...)...)
			cmd.Env = append(os.Environ(), fmt.Sprintf("SOURCE_DATE_EPOCH=%d", benchEpoch))
			cmd.Stdout = io.Discard
			if args[0] == "xz" {
				f, err := os.Create(out)
				if err != nil {
					return row{}, err
				}
				defer f.Close()
				cmd.Stdout = f
			}
			r, err := measure(name, cmd)
			if err != nil {
				return row{}, err
			}
			if r.outSize, err = fileSize(out); err != nil {
				return row{}, err
			}
			r.pkg, r.mode, r.ref = pkg, mode, ref
			rows = append(rows, r)
			// Each run as it ends, so that a run cut short still shows some.
			fmt.Printf("  %s: %s %s: %.2fs wall, %.2fs CPU, %.1f MiB peak RSS, %d bytes\n",
				pkg, name, mode, r.wall.Seconds(), r.cpu.Seconds(), float64(r.maxRSS)/1024, r.outSize)
			return r, os.Remove(out)
		}
		exe, err := os.Executable()
		if err != nil {
			return nil, err
		}
		const dpkg = "dpkg-deb -Zxz"
		xzName := fmt.Sprintf("xz -6 -T%d (data.tar)", n)
		if _, err := run(dpkg, "", "", "dpkg-deb", "--root-owner-group", "-Zxz", "--build", tree, filepath.Join(work, "out")); err != nil {
			return nil, err
		}
		if _, err := run(xzName, "", dpkg, "xz", "-6", fmt.Sprintf("-T%d", n), "-c", dataTar); err != nil {
			return nil, err
		}
		for _, mode := range []string{"fast", "best"} {
			r, err := run("updeb (pkg/deb) xz", mode, dpkg, exe, "-child", "deb-write", tree, filepath.Join(work, "out"), "xz", mode)
			if err != nil {
				return nil, err
			}
			r.name, r.ref = "updeb (pkg/deb) xz, vs xz -T N", xzName
			rows = append(rows, r)
		}
	}
	return rows, nil
}

// loadAverage is the first field of /proc/loadavg, or "?".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "?"
}
