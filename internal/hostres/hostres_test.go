package hostres

import (
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
)

// The fixtures in testdata are the files a process reads below / (see the
// package doc), as each kind of host has them; v1-nolimit is copied from
// the 2-core test machine.
func TestRead(t *testing.T) {
	const gib = 1 << 30
	machine := int64(24684092) * 1024
	for _, tc := range []struct {
		fixture  string
		affinity int
		want     Host
	}{
		{"v1-nolimit", 2, Host{CPUs: 2, Memory: machine}},
		{"v1-docker", 16, Host{CPUs: 3, Memory: 3 * gib}}, // 2.5 CPUs of quota rounded up
		{"v1-docker", 2, Host{CPUs: 2, Memory: 3 * gib}},  // the affinity is lower
		{"v2-nested", 16, Host{CPUs: 2, Memory: 2 * gib}}, // the slice's 2 GiB binds the service's 4 GiB
		{"v2-container-nolimit", 8, Host{CPUs: 8, Memory: 4000000 * 1024}},
		{"v2-outside-mount", 64, Host{CPUs: 4, Memory: gib}},
		{"malformed", 4, Host{CPUs: 4, Memory: machine}},
		{"v1-nolimit", 0, Host{CPUs: 1, Memory: machine}}, // at least one CPU
	} {
		got, err := Read(os.DirFS(filepath.Join("testdata", tc.fixture)), tc.affinity)
		if err != nil {
			t.Errorf("%s: %v", tc.fixture, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%s, affinity %d CPUs: %+v, want %+v", tc.fixture, tc.affinity, got, tc.want)
		}
	}
}

func TestReadNeedsMeminfo(t *testing.T) {
	if _, err := Read(os.DirFS(filepath.Join("testdata", "no-meminfo")), 2); err == nil {
		t.Fatal("Read without /proc/meminfo: nil error")
	}
	for _, meminfo := range []string{"", "MemTotal: lots kB\n", "MemTotal: 100 MB\n", "MemTotal: -5 kB\n", "MemTotal: 99999999999999999999 kB\n"} {
		if h, err := Read(fstest.MapFS{"proc/meminfo": {Data: []byte(meminfo)}}, 2); err == nil {
			t.Errorf("meminfo %q: %+v, nil error", meminfo, h)
		}
	}
}

// TestReadThisHost reads the real files: whatever the limits, the result is
// within what the affinity and the machine allow.
func TestReadThisHost(t *testing.T) {
	h, err := Read(os.DirFS("/"), 2)
	if err != nil {
		t.Fatal(err)
	}
	if h.CPUs < 1 || h.CPUs > 2 || h.Memory < 64<<20 {
		t.Fatalf("%+v: want 1 or 2 CPUs and at least 64 MiB", h)
	}
}

// TestReadCPUQuota: cpu.max as the kernel writes it and as it should not
// be (a hostile or broken cgroup file system): a quota lowers the affinity's
// CPUs, rounded up, and one larger than the affinity, however large, leaves
// it as it is.
func TestReadCPUQuota(t *testing.T) {
	for cpuMax, want := range map[string]int{
		"max 100000":                  8,
		"250000 100000\n":             3,
		"50000 100000":                1, // less than one CPU: one
		"1 1000000":                   1,
		"0 100000":                    8, // no quota
		"-1 100000":                   8,
		"100000":                      8,
		"lots 100000":                 8,
		"100000 0":                    8,
		"9223372036854775807 1":       8, // more CPUs than an int holds
		"9223372036854775807 100000":  8,
		"18446744073709551615 100000": 8, // not an int64
	} {
		root := fstest.MapFS{
			"proc/meminfo":          {Data: []byte("MemTotal: 1000 kB\n")},
			"proc/self/cgroup":      {Data: []byte("0::/\n")},
			"proc/self/mountinfo":   {Data: []byte("30 22 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n")},
			"sys/fs/cgroup/cpu.max": {Data: []byte(cpuMax)},
		}
		if h, err := Read(root, 8); err != nil || h.CPUs != want {
			t.Errorf("cpu.max %q, affinity 8: %+v, %v; want %d CPUs", cpuMax, h, err, want)
		}
	}
}

func TestUnescapeMount(t *testing.T) {
	for in, want := range map[string]string{`/a\040b`: "/a b", `/plain`: "/plain", `/x\134y`: `/x\y`, `/bad\9`: `/bad\9`} {
		if got := unescapeMount(in); got != want {
			t.Errorf("unescapeMount(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzRead: any content of the files gives a host of at least one CPU and
// some memory, or an error, never a panic.
func FuzzRead(f *testing.F) {
	f.Add("0::/a\n", "30 22 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", "150000 100000\n", "1073741824\n")
	f.Add("4:memory:/x\n1:cpu:/\n", "32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n35 31 0:32 /x /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n", "-1\n", "9223372036854771712\n")
	f.Fuzz(func(t *testing.T, cgroup, mountinfo, cpuMax, memMax string) {
		root := fstest.MapFS{
			"proc/meminfo":                                 {Data: []byte("MemTotal: 1000 kB\n")},
			"proc/self/cgroup":                             {Data: []byte(cgroup)},
			"proc/self/mountinfo":                          {Data: []byte(mountinfo)},
			"sys/fs/cgroup/cpu.max":                        {Data: []byte(cpuMax)},
			"sys/fs/cgroup/a/memory.max":                   {Data: []byte(memMax)},
			"sys/fs/cgroup/cpu/cpu.cfs_quota_us":           {Data: []byte(cpuMax)},
			"sys/fs/cgroup/memory/x/memory.limit_in_bytes": {Data: []byte(memMax)},
		}
		h, err := Read(root, 3)
		if err != nil {
			t.Fatal(err) // meminfo is valid: nothing else is an error
		}
		if h.CPUs < 1 || h.CPUs > 3 || h.Memory < 1 || h.Memory > 1000*1024 {
			t.Fatalf("%+v: want 1 to 3 CPUs and 1 to 1000 KiB", h)
		}
	})
}
