// Package hostres reads what of the host the process may use: CPUs and
// memory, with the limits of its control groups (cgroup v2 or v1) applied,
// so that a build sized from them fits a container or a systemd slice as
// well as a whole machine.
//
// It reads the files below a root it is given (os.DirFS("/") in the CLI,
// fixtures in tests): /proc/self/cgroup, /proc/self/mountinfo, /proc/meminfo
// and each control group's cpu.max and memory.max (v2) or cpu.cfs_quota_us,
// cpu.cfs_period_us and memory.limit_in_bytes (v1), from the process's own
// group up to the root of its hierarchy (a parent's limit binds its
// children). The CPUs the scheduler lets the process run on (its affinity)
// come from the caller: runtime.NumCPU reads them when the process starts.
// A file that is missing or unreadable means no limit from it; the host's
// memory (MemTotal) must be readable.
package hostres

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"math"
	"path"
	"strconv"
	"strings"
)

// Host is what the process may use.
type Host struct {
	// CPUs is the affinity's CPU count, lowered to the cgroup CPU quota
	// (quota / period, rounded up) where there is one; at least 1.
	CPUs int
	// Memory is the host's memory (MemTotal), lowered to the cgroup memory
	// limit where there is one, in bytes.
	Memory int64
}

// Read returns what the process may use: affinityCPUs (runtime.NumCPU())
// and the host's memory, both lowered to the limits of the process's
// control groups, read below root.
func Read(root fs.FS, affinityCPUs int) (Host, error) {
	mem, err := memTotal(root)
	if err != nil {
		return Host{}, err
	}
	h := Host{CPUs: max(affinityCPUs, 1), Memory: mem}
	for _, dir := range cgroupDirs(root) {
		// Compared before it is made an int: a quota of more CPUs than
		// an int holds would wrap.
		if q, ok := dir.cpuQuota(root); ok && q < float64(h.CPUs) {
			h.CPUs = max(1, int(math.Ceil(q)))
		}
		if m, ok := dir.memoryLimit(root); ok {
			h.Memory = min(h.Memory, m)
		}
	}
	return h, nil
}

// memTotal reads MemTotal from /proc/meminfo, in bytes.
func memTotal(root fs.FS) (int64, error) {
	b, err := fs.ReadFile(root, "proc/meminfo")
	if err != nil {
		return 0, fmt.Errorf("hostres: the host's memory: %w", err)
	}
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) == 3 && f[0] == "MemTotal:" && f[2] == "kB" {
			if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil && kb > 0 && kb < math.MaxInt64/1024 {
				return kb * 1024, nil
			}
		}
	}
	return 0, fmt.Errorf("hostres: /proc/meminfo has no MemTotal line in kB")
}

// cgroupDir is one control group folder whose limits apply to the process,
// below root, with the version of its hierarchy.
type cgroupDir struct {
	path string // relative to root, without a leading slash
	v1   bool
	// controllers of a v1 hierarchy: its limits are read for these only.
	cpu, memory bool
}

// cgroupDirs returns the folders of the process's control groups and of
// their ancestors up to each hierarchy's mount point.
func cgroupDirs(root fs.FS) []cgroupDir {
	groups, err := fs.ReadFile(root, "proc/self/cgroup")
	if err != nil {
		return nil
	}
	mountinfo, err := fs.ReadFile(root, "proc/self/mountinfo")
	if err != nil {
		return nil
	}
	mounts := cgroupMounts(mountinfo)
	var dirs []cgroupDir
	for line := range strings.Lines(string(groups)) {
		// hierarchy-ID:controller-list:cgroup-path
		f := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(f) != 3 || !strings.HasPrefix(f[2], "/") {
			continue
		}
		v2 := f[0] == "0" && f[1] == ""
		ctrl := map[string]bool{}
		for c := range strings.SplitSeq(f[1], ",") {
			ctrl[c] = true
		}
		if !v2 && !ctrl["cpu"] && !ctrl["memory"] {
			continue
		}
		for _, m := range mounts {
			if m.v2 != v2 || (!v2 && !(ctrl["cpu"] && m.controllers["cpu"] || ctrl["memory"] && m.controllers["memory"])) {
				continue
			}
			base := cgroupDir{v1: !v2, cpu: v2 || ctrl["cpu"], memory: v2 || ctrl["memory"]}
			dirs = append(dirs, m.ancestry(f[2], base)...)
		}
	}
	return dirs
}

// cgroupMount is a mounted cgroup hierarchy.
type cgroupMount struct {
	root, point string // the hierarchy's folder mounted, and where
	v2          bool
	controllers map[string]bool // of a v1 hierarchy
}

// cgroupMounts returns the cgroup and cgroup2 mounts of a mountinfo file.
func cgroupMounts(mountinfo []byte) []cgroupMount {
	var out []cgroupMount
	sc := bufio.NewScanner(bytes.NewReader(mountinfo))
	for sc.Scan() {
		// ID parent major:minor root mount-point options [optional...] - fstype source super-options
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 3 || (g[0] != "cgroup" && g[0] != "cgroup2") {
			continue
		}
		m := cgroupMount{root: unescapeMount(f[3]), point: unescapeMount(f[4]), v2: g[0] == "cgroup2", controllers: map[string]bool{}}
		for o := range strings.SplitSeq(g[2], ",") {
			m.controllers[o] = true
		}
		out = append(out, m)
	}
	return out
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ancestry returns the folders of group (a path in the hierarchy) and of its
// ancestors up to the mount point. A group outside the mounted part of the
// hierarchy (a container that sees only its own part, mounted at its
// root) is the mount point itself.
func (m cgroupMount) ancestry(group string, base cgroupDir) []cgroupDir {
	rel, mroot := path.Clean(group), path.Clean(m.root)
	if mroot != "/" {
		var ok bool
		if rel, ok = strings.CutPrefix(rel, mroot); !ok || (rel != "" && !strings.HasPrefix(rel, "/")) {
			rel = ""
		}
	}
	point := strings.TrimPrefix(path.Clean(m.point), "/")
	var dirs []cgroupDir
	for rel = path.Clean("/" + rel); ; rel = path.Dir(rel) {
		d := base
		d.path = path.Join(point, rel)
		dirs = append(dirs, d)
		if rel == "/" {
			return dirs
		}
	}
}

// cpuQuota returns the group's CPU quota in CPUs, if it has one.
func (d cgroupDir) cpuQuota(root fs.FS) (float64, bool) {
	if !d.cpu {
		return 0, false
	}
	var quota, period string
	if d.v1 {
		quota, period = readTrimmed(root, path.Join(d.path, "cpu.cfs_quota_us")), readTrimmed(root, path.Join(d.path, "cpu.cfs_period_us"))
	} else {
		f := strings.Fields(readTrimmed(root, path.Join(d.path, "cpu.max")))
		if len(f) != 2 {
			return 0, false
		}
		quota, period = f[0], f[1]
	}
	q, err1 := strconv.ParseInt(quota, 10, 64)
	p, err2 := strconv.ParseInt(period, 10, 64)
	if err1 != nil || err2 != nil || q <= 0 || p <= 0 { // "max", -1: none
		return 0, false
	}
	return float64(q) / float64(p), true
}

// memoryLimit returns the group's memory limit in bytes, if it has one.
func (d cgroupDir) memoryLimit(root fs.FS) (int64, bool) {
	if !d.memory {
		return 0, false
	}
	name := "memory.max"
	if d.v1 {
		name = "memory.limit_in_bytes"
	}
	n, err := strconv.ParseInt(readTrimmed(root, path.Join(d.path, name)), 10, 64)
	// v1 writes "no limit" as the largest page-aligned int64; v2 as "max".
	if err != nil || n <= 0 || n >= math.MaxInt64-1<<20 {
		return 0, false
	}
	return n, true
}

func readTrimmed(root fs.FS, name string) string {
	b, err := fs.ReadFile(root, name)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
