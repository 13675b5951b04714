package deb

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"testing"

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
	for _, run := range []struct{ workers, procs int }{{1, 0}, {2, 0}, {3, 0}, {8, 0}, {2, 1}, {1, 4}} {
		p := samplePackage()
		p.Compression, p.XZMode = c, mode
		p.Entries = append(p.Entries, Entry{Path: "/usr/lib/sample/big", Type: TypeFile, Mode: 0o644, Size: int64(len(big)),
			Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(big)), nil }})
		p.XZWorkers = run.workers
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
			t.Fatalf("%d workers, GOMAXPROCS %d: %d bytes, differ from 1 worker's %d", run.workers, run.procs, len(out), len(first))
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
