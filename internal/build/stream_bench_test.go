package build

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// BenchmarkStreamVsSpool builds one package from a tar.gz of Go binaries
// (GOROOT's bin/ and pkg/tool/, four copies: about 330 MiB) by streaming and
// by spooling every member first (Options.SpoolAll), and reports the wall
// time and the peak disk use of the output folder (spool, data.tar temp file,
// package). Run: go test ./internal/build -run '^$' -bench StreamVsSpool -benchtime 1x
//
// The numbers measured are in internal/bench/README.md ("Streaming vs spooling").
func BenchmarkStreamVsSpool(b *testing.B) {
	root, mirror := project(b)
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Fatal(err)
	}
	payload := filepath.Join(strings.TrimSpace(string(goroot)), "pkg", "tool")
	bin := filepath.Join(strings.TrimSpace(string(goroot)), "bin")
	tgz := filepath.Join(b.TempDir(), "gobench.tar.gz")
	names, size := writeBenchTarball(b, tgz, []string{bin, payload}, 4)
	data, err := os.ReadFile(tgz)
	if err != nil {
		b.Fatal(err)
	}
	var r strings.Builder
	r.WriteString("  - name: gobench\n    summary: Go binaries\n    description: |\n      Benchmark payload.\n    section: devel\n    files:\n")
	for _, n := range names {
		fmt.Fprintf(&r, "      - {source: gobench, path: %q, dest: %q, mode: \"0755\"}\n", n, "/usr/lib/gobench/"+n)
	}
	tarballRecipe(b, root, mirror, "gobench", data, r.String())
	b.Logf("payload %d MiB in %d files, tar.gz %d MiB", size>>20, len(names), len(data)>>20)
	data = nil
	opts := options(b, mirror, "")
	opts.Force, opts.XZWorkers = true, 2
	for _, mode := range []struct {
		name     string
		spoolAll bool
	}{{"stream", false}, {"spool", true}} {
		b.Run(mode.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				opts.OutDir, opts.SpoolAll = b.TempDir(), mode.spoolAll
				peak := watchDisk(opts.OutDir)
				start := time.Now()
				if _, err := Run(context.Background(), jobs(b, root, "amd64", "gobench"), opts); err != nil {
					b.Fatal(err)
				}
				wall := time.Since(start)
				b.ReportMetric(float64(peak())/(1<<20), "peak-disk-MiB")
				b.ReportMetric(wall.Seconds(), "wall-s")
			}
		})
	}
}

// writeBenchTarball writes copies times the regular files under dirs into a
// tar.gz, in dpkg's order (WalkDir's lexical order), and returns the names.
func writeBenchTarball(b *testing.B, out string, dirs []string, copies int) ([]string, int64) {
	f, err := os.Create(out)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	zw, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
	tw := tar.NewWriter(zw)
	var names []string
	var size int64
	for c := 0; c < copies; c++ {
		for _, d := range dirs {
			err := filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
				if err != nil || !e.Type().IsRegular() {
					return err
				}
				rel, _ := filepath.Rel(filepath.Dir(d), p)
				name := fmt.Sprintf("copy%d/%s", c, filepath.ToSlash(rel))
				info, err := e.Info()
				if err != nil {
					return err
				}
				if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: info.Size(), Typeflag: tar.TypeReg, Format: tar.FormatGNU}); err != nil {
					return err
				}
				src, err := os.Open(p)
				if err != nil {
					return err
				}
				defer src.Close()
				n, err := io.Copy(tw, src)
				names, size = append(names, name), size+n
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		b.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		b.Fatal(err)
	}
	return names, size
}

// watchDisk samples the bytes under dir every 20 ms until the returned
// function is called, which reports the largest sum seen.
func watchDisk(dir string) func() int64 {
	var (
		mu   sync.Mutex
		peak int64
	)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			var n int64
			filepath.WalkDir(dir, func(_ string, e fs.DirEntry, err error) error {
				if err == nil && e.Type().IsRegular() {
					if info, err := e.Info(); err == nil {
						n += info.Size()
					}
				}
				return nil
			})
			mu.Lock()
			peak = max(peak, n)
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return func() int64 {
		close(stop)
		<-done
		mu.Lock()
		defer mu.Unlock()
		return peak
	}
}
