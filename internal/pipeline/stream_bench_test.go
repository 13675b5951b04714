package pipeline

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/testkit/diskwatch"
)

// BenchmarkStreamVsSpool builds one package from a tar.gz of Go binaries
// (GOROOT's bin/ and pkg/tool/, four copies: about 330 MiB) by streaming, by
// spooling every member first (Options.SpoolAll), and by streaming from a
// tarball of the same files in reverse order (the writer takes none of them
// as they stream: all are spooled), and reports the wall time and the peak
// disk use of the output folder (spool, data.tar temp file, package). Run:
// go test ./internal/pipeline -run '^$' -bench StreamVsSpool -benchtime 1x
//
// The numbers measured are in cmd/updeb-bench/README.md ("Streaming vs spooling").
func BenchmarkStreamVsSpool(b *testing.B) {
	root, mirror := project(b)
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Fatal(err)
	}
	payload := filepath.Join(strings.TrimSpace(string(goroot)), "pkg", "tool")
	bin := filepath.Join(strings.TrimSpace(string(goroot)), "bin")
	for _, rec := range []struct {
		name    string
		reverse bool
	}{{"gobench", false}, {"gobenchrev", true}} {
		tgz := filepath.Join(b.TempDir(), rec.name+".tar.gz")
		names, size := writeBenchTarball(b, tgz, []string{bin, payload}, 4, rec.reverse)
		data, err := os.ReadFile(tgz)
		if err != nil {
			b.Fatal(err)
		}
		var r strings.Builder
		r.WriteString("  - name: " + rec.name + "\n    summary: Go binaries\n    description: |\n      Benchmark payload.\n    section: devel\n    files:\n")
		for _, n := range names {
			fmt.Fprintf(&r, "      - {source: %s, path: %q, dest: %q, mode: \"0755\"}\n", rec.name, n, "/usr/lib/gobench/"+n)
		}
		tarballRecipe(b, root, mirror, rec.name, data, r.String())
		b.Logf("%s: payload %d MiB in %d files, tar.gz %d MiB", rec.name, size>>20, len(names), len(data)>>20)
	}
	opts := options(b, mirror, "")
	opts.Force, opts.XZWorkers = true, 2
	for _, mode := range []struct {
		name, recipe string
		spoolAll     bool
	}{{"stream", "gobench", false}, {"spool", "gobench", true}, {"reversed", "gobenchrev", false}} {
		b.Run(mode.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				opts.OutDir, opts.SpoolAll = b.TempDir(), mode.spoolAll
				peak := diskwatch.Start(opts.OutDir)
				start := time.Now()
				if _, err := Run(context.Background(), jobs(b, root, "amd64", mode.recipe), opts); err != nil {
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
// tar.gz, in dpkg's order (WalkDir's lexical order) or its reverse, and
// returns the names.
func writeBenchTarball(b *testing.B, out string, dirs []string, copies int, reverse bool) ([]string, int64) {
	type file struct{ name, path string }
	var files []file
	for c := 0; c < copies; c++ {
		for _, d := range dirs {
			err := filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
				if err != nil || !e.Type().IsRegular() {
					return err
				}
				rel, _ := filepath.Rel(filepath.Dir(d), p)
				files = append(files, file{fmt.Sprintf("copy%d/%s", c, filepath.ToSlash(rel)), p})
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	if reverse {
		slices.Reverse(files)
	}
	f, err := os.Create(out)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	zw, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
	tw := tar.NewWriter(zw)
	var names []string
	var size int64
	for _, fl := range files {
		data, err := os.ReadFile(fl.path)
		if err != nil {
			b.Fatal(err)
		}
		if err := tw.WriteHeader(&tar.Header{Name: fl.name, Mode: 0o755, Size: int64(len(data)), Typeflag: tar.TypeReg, Format: tar.FormatGNU}); err != nil {
			b.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			b.Fatal(err)
		}
		names, size = append(names, fl.name), size+int64(len(data))
	}
	if err := tw.Close(); err != nil {
		b.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		b.Fatal(err)
	}
	return names, size
}
