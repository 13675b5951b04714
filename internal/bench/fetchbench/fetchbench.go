// Package fetchbench measures `updeb fetch` against curl: one artifact served on
// 127.0.0.1 and downloaded through the same squid by both, wall time, CPU time
// and peak RSS of each process, and updeb's throughput as a ratio of curl's.
// updeb computes sha256 and sha512 in the same pass and fsyncs into its cache;
// curl only writes the file.
package fetchbench

import (
	"context"
	"crypto/sha256"
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
	"slices"
	"syscall"
	"time"

	"github.com/updeb/updeb/internal/squid"
)

// Config says what to measure.
type Config struct {
	Updeb string // path of the updeb binary (make build gives bin/updeb)
	Size  int64  // artifact size in bytes (the benchmark uses 200 MB)
	Runs  int    // runs per tool; the median is reported
}

// Measure is one process run.
type Measure struct {
	Wall, CPU time.Duration
	PeakRSS   int64 // bytes
}

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
	sha, err := art.sha256()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "updeb-fetchbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	var curlRuns, updebRuns []Measure
	for i := range c.Runs {
		out := filepath.Join(tmp, fmt.Sprintf("curl-%d", i))
		m, err := measure(ctx, curl, "-sS", "--fail", "-x", sq.URL, "-o", out, srv.URL+"/curl.tgz")
		if err != nil {
			return fmt.Errorf("curl: %w", err)
		}
		curlRuns = append(curlRuns, m)
		os.Remove(out)
		cache := filepath.Join(tmp, fmt.Sprintf("cache-%d", i))
		m, err = measure(ctx, c.Updeb, "-q", "--config", os.DevNull, "--proxy", sq.URL, "--cache", cache,
			"fetch", fmt.Sprintf("%s/updeb-%d.tgz#sha256=%s", srv.URL, i, sha))
		if err != nil {
			return fmt.Errorf("updeb: %w", err)
		}
		updebRuns = append(updebRuns, m)
		os.RemoveAll(cache)
	}
	cm, um := median(curlRuns), median(updebRuns)
	mbps := func(m Measure) float64 { return float64(c.Size) / 1e6 / m.Wall.Seconds() }
	fmt.Fprintf(w, "fetch: %d MB through squid 5 on 127.0.0.1, median of %d runs\n", c.Size/1e6, c.Runs)
	fmt.Fprintf(w, "%-28s %10s %10s %10s %10s\n", "tool", "wall", "MB/s", "CPU", "peak RSS")
	for _, row := range []struct {
		name string
		m    Measure
	}{{"curl -x squid -o FILE", cm}, {"updeb fetch (sha256+sha512)", um}} {
		fmt.Fprintf(w, "%-28s %9.2fs %10.0f %9.2fs %8d MB\n", row.name, row.m.Wall.Seconds(), mbps(row.m), row.m.CPU.Seconds(), row.m.PeakRSS>>20)
	}
	fmt.Fprintf(w, "updeb/curl throughput ratio: %.2fx (target >= 0.90x)\n", mbps(um)/mbps(cm))
	return nil
}

// measure runs a process and reads its rusage.
func measure(ctx context.Context, name string, args ...string) (Measure, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var stderr []byte
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	go func() { stderr, _ = io.ReadAll(pr) }()
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	pw.Close()
	if err != nil {
		return Measure{}, fmt.Errorf("%w: %s", err, stderr)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return Measure{}, errors.New("no rusage")
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return Measure{Wall: wall, CPU: cpu, PeakRSS: ru.Maxrss << 10}, nil
}

func median(ms []Measure) Measure {
	s := slices.Clone(ms)
	slices.SortFunc(s, func(a, b Measure) int { return int(a.Wall - b.Wall) })
	return s[len(s)/2]
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

func (a *artifact) sha256() (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, a.reader()); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
