package deb

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/testkit/testenv"
	"github.com/updeb/updeb/pkg/archive"
)

// wordsPayload is n bytes of pseudo-random words: compressible like text, and
// quick to compress.
func wordsPayload(n int) []byte {
	words := []string{"alpha ", "beta ", "gamma ", "delta\n", "kube-apiserver ", "0x7f ", "etcd ", "{\"k\": 1} "}
	r := rand.New(rand.NewPCG(9, 9))
	var b bytes.Buffer
	for b.Len() < n {
		b.WriteString(words[r.IntN(len(words))])
		if r.IntN(50) == 0 {
			fmt.Fprintf(&b, "%d ", r.Uint64())
		}
	}
	return b.Bytes()[:n]
}

// data.tar.xz is a stream of several independent blocks, data.tar.zst of
// several jobs; the bytes must not depend on the number of workers (which the
// configuration sets, not the CPU count) nor on GOMAXPROCS, and dpkg-deb and
// our reader must read every block. xz uses 128 KiB blocks here (the property
// does not depend on the size, and the real 16 MiB would take minutes under
// the race detector); zstd its real jobs (4 windows: 16 MiB).
func TestWorkersSameBytes(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	for _, mode := range []XZMode{XZFast, XZBest} {
		saved := xzLayouts[mode]
		xzLayouts[mode] = struct{ blockSize, dictCap int }{128 << 10, 128 << 10}
		t.Cleanup(func() { xzLayouts[mode] = saved })
	}
	for _, tc := range []struct {
		name        string
		compression Compression
		mode        XZMode
		size        int
	}{
		{"xz fast", CompressionXZ, XZFast, 2<<17 + 12345},
		{"xz best", CompressionXZ, XZBest, 2<<17 + 12345},
		{"zstd", CompressionZstd, "", 4*zstdWindow*2 + 12345},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkWorkersSameBytes(t, tc.compression, tc.mode, wordsPayload(tc.size))
		})
	}
}

func checkWorkersSameBytes(t *testing.T, c Compression, mode XZMode, big []byte) {
	var first []byte
	var path string
	procs := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(procs) })
	for _, run := range []struct {
		workers, procs int
		pool           bool // a Pool of workers workers instead of XZWorkers
	}{{1, 0, false}, {2, 0, false}, {3, 0, false}, {8, 0, false}, {2, 1, false}, {1, 4, false}, {1, 0, true}, {2, 0, true}, {16, 0, true}, {16, 1, true}} {
		p := samplePackage()
		p.Compression, p.XZMode = c, mode
		p.Entries = append(p.Entries, Entry{Path: "/usr/lib/sample/big", Type: TypeFile, Mode: 0o644, Size: int64(len(big)),
			Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(big)), nil }})
		p.XZWorkers = run.workers
		if run.pool {
			pool, err := NewPool(run.workers)
			if err != nil {
				t.Fatal(err)
			}
			p.Pool, p.XZWorkers = pool, 5 // XZWorkers does not apply with a pool
		}
		if run.procs > 0 {
			runtime.GOMAXPROCS(run.procs)
		} else {
			runtime.GOMAXPROCS(procs)
		}
		path, _ = writeTemp(t, p)
		out := mustRead(t, path)
		if first == nil {
			first = out
		} else if !bytes.Equal(out, first) {
			t.Fatalf("%d workers (pool: %v), GOMAXPROCS %d: %d bytes, differ from 1 worker's %d", run.workers, run.pool, run.procs, len(out), len(first))
		}
	}
	tr := tar.NewReader(bytes.NewReader(testenv.Run(t, "dpkg-deb", "--fsys-tarfile", path)))
	found := false
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Name == "./usr/lib/sample/big" {
			found = true
			got := sha256.New()
			if _, err := io.Copy(got, tr); err != nil {
				t.Fatal(err)
			}
			if want := sha256.Sum256(big); !bytes.Equal(got.Sum(nil), want[:]) {
				t.Errorf("dpkg-deb --fsys-tarfile: big file differs")
			}
		}
	}
	if !found {
		t.Fatal("dpkg-deb --fsys-tarfile: no ./usr/lib/sample/big")
	}
	info, err := InspectFile(context.Background(), path, archive.Limits{})
	if err != nil {
		t.Fatalf("InspectFile: %v", err)
	}
	sizes := map[string]int64{}
	for _, e := range info.Files {
		sizes[e.Path] = e.Size
	}
	if got := sizes["./usr/lib/sample/big"]; got != int64(len(big)) {
		t.Errorf("InspectFile: ./usr/lib/sample/big has size %d, want %d", got, len(big))
	}
}

// TestPoolSharedPackages writes packages of both xz modes and zstd at once
// through one Pool of 1, 2 and 5 workers: each has the bytes it has when
// written alone with one worker of its own.
func TestPoolSharedPackages(t *testing.T) {
	for _, mode := range []XZMode{XZFast, XZBest} {
		saved := xzLayouts[mode]
		xzLayouts[mode] = struct{ blockSize, dictCap int }{64 << 10, 64 << 10}
		t.Cleanup(func() { xzLayouts[mode] = saved })
	}
	kinds := []struct {
		compression Compression
		mode        XZMode
		size        int
	}{
		{CompressionXZ, XZFast, 5<<16 + 99}, {CompressionXZ, XZBest, 3<<16 + 7}, {CompressionXZ, XZFast, 1000},
		{CompressionZstd, "", 2*4*zstdWindow + 5}, {CompressionXZ, XZFast, 9 << 16},
	}
	pkg := func(i int) *Package {
		k := kinds[i]
		big := wordsPayload(k.size)
		p := samplePackage()
		p.Control.Package = fmt.Sprintf("sample%d", i)
		p.Compression, p.XZMode = k.compression, k.mode
		p.Entries = append(p.Entries, Entry{Path: "/usr/lib/sample/big", Type: TypeFile, Mode: 0o644, Size: int64(len(big)),
			Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(big)), nil }})
		return p
	}
	want := make([][]byte, len(kinds))
	for i := range kinds {
		p := pkg(i)
		p.XZWorkers = 1
		path, _ := writeTemp(t, p)
		want[i] = mustRead(t, path)
	}
	for _, size := range []struct{ workers, blocks int }{{1, 0}, {2, 0}, {5, 0}, {2, 3}, {5, MaxPoolBlocks(5)}} {
		workers := size.workers
		pool, err := NewPoolBlocks(workers, size.blocks)
		if err != nil {
			t.Fatal(err)
		}
		got := make([][]byte, len(kinds))
		var wg sync.WaitGroup
		for i := range kinds {
			p := pkg(i)
			p.Pool = pool
			wg.Go(func() {
				path := filepath.Join(t.TempDir(), "out.deb")
				if _, err := Write(context.Background(), path, p); err != nil {
					t.Error(err)
					return
				}
				b, err := os.ReadFile(path)
				if err != nil {
					t.Error(err)
				}
				got[i] = b
			})
		}
		wg.Wait()
		for i := range kinds {
			if !bytes.Equal(got[i], want[i]) {
				t.Errorf("pool of %d workers: package %d (%s %s) has %d bytes, %d when written alone", workers, i, kinds[i].compression, kinds[i].mode, len(got[i]), len(want[i]))
			}
		}
		// Every writer, xz or zstd, gave its memory back.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		release, err := pool.xz.Reserve(ctx, 1<<62)
		cancel()
		if err != nil {
			t.Fatalf("pool of %d workers: its memory is not all back after the packages were written: %v", workers, err)
		}
		release()
	}
}

func TestPoolSizing(t *testing.T) {
	const mib = 1 << 20
	for workers, want := range map[int]int64{1: 205 * mib, 2: 344 * mib, 4: 688 * mib} {
		if got := PoolMemory(workers); got/mib != want/mib {
			t.Errorf("PoolMemory(%d) = %d MiB, want %d MiB", workers, got/mib, want/mib)
		}
	}
	for _, tc := range []struct {
		cpus   int
		memory int64
		want   int
	}{
		{2, 6 << 30, 2}, {16, 32 << 30, 16}, {16, PoolMemory(5), 5}, {16, PoolMemory(5) - 1, 4},
		{16, 10 * mib, 1}, {0, 1 << 40, 1}, {1000, 1 << 50, 256},
	} {
		if got := PoolWorkers(tc.cpus, tc.memory); got != tc.want {
			t.Errorf("PoolWorkers(%d CPUs, %d MiB) = %d, want %d", tc.cpus, tc.memory/mib, got, tc.want)
		}
	}
	for _, n := range []int{0, -1, 257} {
		if _, err := NewPool(n); !errors.Is(err, ErrInvalid) {
			t.Errorf("NewPool(%d) = %v, want ErrInvalid", n, err)
		}
	}
	p, err := NewPool(3)
	if err != nil {
		t.Fatal(err)
	}
	if p.Workers() != 3 || p.Memory() != PoolMemory(3) || p.Blocks() != DefaultPoolBlocks(3) {
		t.Errorf("NewPool(3): %d workers, %d blocks, %d bytes; want 3, %d, %d", p.Workers(), p.Blocks(), p.Memory(), DefaultPoolBlocks(3), PoolMemory(3))
	}
	if p, err = NewPoolBlocks(3, MaxPoolBlocks(3)); err != nil || p.Blocks() != 16 || p.Memory() != PoolMemoryBlocks(3, 16) || PoolMemoryBlocks(3, 16)/mib != 3*73+16*66 {
		t.Errorf("NewPoolBlocks(3, %d): %v, %d blocks, %d MiB; want 16 blocks, %d MiB", MaxPoolBlocks(3), err, p.Blocks(), p.Memory()/mib, 3*73+16*66)
	}
	for _, tc := range []struct{ workers, blocks int }{{3, 3}, {1, 1}, {0, 5}} {
		if _, err := NewPoolBlocks(tc.workers, tc.blocks); !errors.Is(err, ErrInvalid) {
			t.Errorf("NewPoolBlocks(%d, %d) = %v, want ErrInvalid", tc.workers, tc.blocks, err)
		}
	}
}
