package deb

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/updeb/updeb/internal/testenv"
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

// data.tar.xz is a stream of several independent blocks; the bytes must not
// depend on the number of workers (which the configuration sets, not the CPU
// count), and dpkg-deb and our reader must read every block.
func TestXZWorkersSameBytes(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb")
	big := wordsPayload(xzBlockSize + 12345) // two blocks
	var outs [][]byte
	var path string
	for _, workers := range []int{1, 4} {
		p := samplePackage()
		p.Entries = append(p.Entries, Entry{Path: "/usr/lib/sample/big", Type: TypeFile, Mode: 0o644, Size: int64(len(big)),
			Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(big)), nil }})
		p.XZWorkers = workers
		path, _ = writeTemp(t, p)
		outs = append(outs, mustRead(t, path))
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Fatalf("XZWorkers 1 and 4 give different packages: %d and %d bytes", len(outs[0]), len(outs[1]))
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
