// Package fetchbench measures `updeb fetch` against curl: one artifact served on
// 127.0.0.1 and downloaded through the same squid by both, wall time, CPU time
// and peak RSS of each process, and updeb's throughput as a ratio of curl's.
// updeb is measured twice: pinned by sha256 (it computes sha256 only) and pinned
// by sha512 only (it computes sha256, which names the cache entry, and sha512),
// each in the same pass as the download, and renames the file into its cache
// (not fsynced: internal/cache's doc says why); curl only writes the file.
// The CPU squid and the server use during each run is measured too: when the
// machine's cores are busy through a download, the wall time follows the CPU
// the client, the proxy and the server need together, and the ratio of those
// sums bounds the throughput ratio.
package fetchbench

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"syscall"
	"time"

	"github.com/updeb/updeb/internal/testkit/squid"
)

// Config says what to measure.
type Config struct {
	Updeb string // path of the updeb binary (make build gives bin/updeb)
	Size  int64  // artifact size in bytes (the benchmark uses 200 MB)
	Runs  int    // runs per tool; the median is reported
	// Others are more updeb binaries measured in the same rounds, each
	// round running every binary once per pin: a change to the download
	// loop compared with the loop before it under the same load.
	Others []Binary
}

// Binary is an updeb binary and the name its rows carry.
type Binary struct{ Name, Path string }

// Measure is one process run.
type Measure struct {
	Wall, CPU time.Duration
	PeakRSS   int64 // bytes
	// CPU the proxy and the server (this process) used meanwhile: with the
	// client's, what the download cost the machine.
	Squid, Server time.Duration
}

// All is the CPU time of the client, the proxy and the server.
func (m Measure) All() time.Duration { return m.CPU + m.Squid + m.Server }

// Run measures and prints a table to w. It needs squid and curl.
func Run(ctx context.Context, w io.Writer, c Config) error {
	if c.Runs <= 0 {
		c.Runs = 3
	}
	curl, err := exec.LookPath("curl")
	if err != nil {
		return err
	}
	sq, err := squid.Start()
	if err != nil {
		return err
	}
	defer sq.Stop()
	art := newArtifact(c.Size)
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		http.ServeContent(rw, r, "artifact", time.Unix(0, 0), art.reader())
	}))
	defer srv.Close()
	sha, sha5, err := art.digests()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "updeb-fetchbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	// An empty config: every setting at its default.
	cfg := filepath.Join(tmp, "updeb.yaml")
	if err := os.WriteFile(cfg, nil, 0o644); err != nil {
		return err
	}

	// The runs of each tool are interleaved, so that a burst of load on the
	// machine hits them alike.
	// withServers adds the CPU squid and this process used during a run.
	withServers := func(name string, args ...string) (Measure, error) {
		s0, err := sq.CPU()
		if err != nil {
			return Measure{}, err
		}
		p0 := selfCPU()
		m, err := measure(ctx, name, args...)
		m.Server = selfCPU() - p0
		s1, serr := sq.CPU()
		m.Squid = s1 - s0
		return m, errors.Join(err, serr)
	}
	updebRun := func(bin string, i int, pin string) (Measure, error) {
		cache := filepath.Join(tmp, fmt.Sprintf("cache-%d", i))
		defer os.RemoveAll(cache)
		m, err := withServers(bin, "-q", "--config", cfg, "--proxy", sq.URL, "--cache", cache,
			"fetch", fmt.Sprintf("%s/updeb-%d.tgz#%s", srv.URL, i, pin))
		if err != nil {
			return m, fmt.Errorf("updeb (%s): %w", pin[:6], err)
		}
		return m, nil
	}
	bins := append([]Binary{{Path: c.Updeb}}, c.Others...)
	runs256, runs512 := make([][]Measure, len(bins)), make([][]Measure, len(bins))
	var curlRuns []Measure
	for i := range c.Runs {
		out := filepath.Join(tmp, fmt.Sprintf("curl-%d", i))
		m, err := withServers(curl, "-sS", "--fail", "-x", sq.URL, "-o", out, srv.URL+"/curl.tgz")
		if err != nil {
			return fmt.Errorf("curl: %w", err)
		}
		curlRuns = append(curlRuns, m)
		os.Remove(out)
		for b, bin := range bins {
			if m, err = updebRun(bin.Path, i, "sha256="+sha); err != nil {
				return err
			}
			runs256[b] = append(runs256[b], m)
			if m, err = updebRun(bin.Path, i, "sha512="+sha5); err != nil {
				return err
			}
			runs512[b] = append(runs512[b], m)
		}
	}
	cm := median(curlRuns)
	mbps := func(m Measure) float64 { return float64(c.Size) / 1e6 / m.Wall.Seconds() }
	fmt.Fprintf(w, "fetch: %d MB through squid on 127.0.0.1, median of %d runs (each column its own median); CPU of the client, squid and the server (this process) during the run\n", c.Size/1e6, c.Runs)
	fmt.Fprintf(w, "%-40s %8s %8s %8s %10s %7s %9s %9s %9s\n", "tool", "wall", "MB/s", "CPU", "peak RSS", "ratio", "squid", "server", "all CPU")
	type line struct {
		name string
		m    Measure
	}
	rows := []line{{"curl -x squid -o FILE", cm}}
	for b, bin := range bins {
		name := "updeb"
		if bin.Name != "" {
			name = bin.Name
		}
		rows = append(rows, line{name + " fetch, sha256 pin", median(runs256[b])}, line{name + " fetch, sha512 pin", median(runs512[b])})
	}
	for _, row := range rows {
		fmt.Fprintf(w, "%-40s %7.2fs %8.0f %7.2fs %7d MB %6.2fx %8.2fs %8.2fs %8.2fs\n", row.name, row.m.Wall.Seconds(), mbps(row.m), row.m.CPU.Seconds(),
			row.m.PeakRSS>>20, mbps(row.m)/mbps(cm), row.m.Squid.Seconds(), row.m.Server.Seconds(), row.m.All().Seconds())
	}
	fmt.Fprintf(w, "updeb/curl throughput ratio: %.2fx sha256-pinned, %.2fx sha512-pinned (target >= 0.90x)\n",
		mbps(median(runs256[0]))/mbps(cm), mbps(median(runs512[0]))/mbps(cm))
	// When the cores are busy for the whole download, the wall time follows
	// the CPU all three processes need: the ratio of those is the ceiling.
	fmt.Fprintf(w, "ratio of all CPU (curl's run / updeb's): %.2fx sha256-pinned, %.2fx sha512-pinned; %d CPUs, all CPU of curl's run / its wall: %.2f\n",
		cm.All().Seconds()/median(runs256[0]).All().Seconds(), cm.All().Seconds()/median(runs512[0]).All().Seconds(), runtime.NumCPU(), cm.All().Seconds()/cm.Wall.Seconds())
	return nil
}

// measure runs a process and reads its rusage.
func measure(ctx context.Context, name string, args ...string) (Measure, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return Measure{}, fmt.Errorf("%w: %s", err, stderr.Bytes())
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return Measure{}, errors.New("no rusage")
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return Measure{Wall: wall, CPU: cpu, PeakRSS: int64(ru.Maxrss) << 10}, nil
}

// selfCPU is the CPU time this process has used so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// median is each column's median over ms (wall, CPU, peak RSS and the
// servers' CPU apart, so a run with a long wall does not pick the CPU).
func median(ms []Measure) Measure {
	mid := func(f func(Measure) int64) int64 {
		v := make([]int64, len(ms))
		for i, m := range ms {
			v[i] = f(m)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	return Measure{
		Wall:    time.Duration(mid(func(m Measure) int64 { return int64(m.Wall) })),
		CPU:     time.Duration(mid(func(m Measure) int64 { return int64(m.CPU) })),
		PeakRSS: mid(func(m Measure) int64 { return m.PeakRSS }),
		Squid:   time.Duration(mid(func(m Measure) int64 { return int64(m.Squid) })),
		Server:  time.Duration(mid(func(m Measure) int64 { return int64(m.Server) })),
	}
}

// artifact is size bytes made of a 1 MiB pseudo-random block repeated: served
// without touching the disk, and not compressible by anyone in the path.
type artifact struct {
	block []byte
	size  int64
}

func newArtifact(size int64) *artifact {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, 1<<20)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return &artifact{block: b, size: size}
}

func (a *artifact) reader() io.ReadSeeker { return io.NewSectionReader(a, 0, a.size) }

func (a *artifact) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) && off < a.size {
		k := copy(p[n:], a.block[off%int64(len(a.block)):])
		k = int(min(int64(k), a.size-off))
		n += k
		off += int64(k)
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// digests returns the artifact's sha256 and sha512.
func (a *artifact) digests() (string, string, error) {
	h, h5 := sha256.New(), sha512.New()
	if _, err := io.Copy(io.MultiWriter(h, h5), a.reader()); err != nil {
		return "", "", err
	}
	return hex.EncodeToString(h.Sum(nil)), hex.EncodeToString(h5.Sum(nil)), nil
}
