package deb

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/testkit/testenv"
)

// TestProgress: the reports grow and the last one counts every byte of
// data.tar in and every compressed byte out (dpkg-deb and ar's view of the
// member are the referees); the package is the same with or without them.
func TestProgress(t *testing.T) {
	testenv.RequireTool(t, "dpkg-deb", "ar")
	p := samplePackage()
	p.Compression = "gzip" // streams its output: the bytes out grow while data.tar is written
	// 4 MiB that gzip cannot shrink: several flushes of the 1 MiB buffer.
	big := make([]byte, 4<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range big {
		big[i] = byte(rng.Uint32())
	}
	p.Entries = append(p.Entries, fileEntry("/usr/lib/sample/big", 0o644, string(big)))
	plain, _ := writeTemp(t, p)
	var ins, outs []int64
	p.Progress = func(in, out int64) { ins, outs = append(ins, in), append(outs, out) }
	path, _ := writeTemp(t, p)
	a, _ := os.ReadFile(plain)
	b, _ := os.ReadFile(path)
	if !bytes.Equal(a, b) {
		t.Fatal("a package written with Progress differs from one without")
	}
	if len(ins) < 3 {
		t.Fatalf("%d reports", len(ins))
	}
	for i := 1; i < len(ins); i++ {
		if ins[i] < ins[i-1] || outs[i] < outs[i-1] {
			t.Fatalf("report %d went back: in %d -> %d, out %d -> %d", i, ins[i-1], ins[i], outs[i-1], outs[i])
		}
	}
	// Halfway through data.tar's bytes (the big file is most of them, read
	// in 1 MiB chunks), compressed bytes have come out.
	half := 0
	for half < len(ins)-1 && ins[half] < ins[len(ins)-1]/2 {
		half++
	}
	if outs[half] == 0 {
		t.Errorf("no byte out halfway through data.tar (report %d of %d): in %v, out %v", half, len(outs), ins, outs)
	}
	tarSize := int64(len(testenv.Run(t, "dpkg-deb", "--fsys-tarfile", path)))
	if last := ins[len(ins)-1]; last != tarSize {
		t.Errorf("last report: %d bytes in, data.tar has %d", last, tarSize)
	}
	dir := t.TempDir()
	cmd := testenv.Run(t, "sh", "-c", "cd "+dir+" && ar x "+path+" data.tar.gz && stat -c %s data.tar.gz")
	if last, want := outs[len(outs)-1], strings.TrimSpace(string(cmd)); want != itoa(last) {
		t.Errorf("last report: %d bytes out, data.tar.gz has %s", last, want)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestWriteStoppedAfterData: a context cancelled once the last byte of
// data.tar went into the compressor (a signal while the compressor's
// workers finish) stops Write before the package is copied and synced:
// the context's error, no package, nothing left in the folder.
func TestWriteStoppedAfterData(t *testing.T) {
	for _, c := range []Compression{CompressionXZ, CompressionZstd, CompressionGzip} {
		p := samplePackage()
		p.Compression = c
		var last int64
		p.Progress = func(in, _ int64) { last = in }
		writeTemp(t, p)
		total := last
		ctx, cancel := context.WithCancel(context.Background())
		p.Progress = func(in, _ int64) {
			if in == total {
				cancel()
			}
		}
		dir := t.TempDir()
		path := filepath.Join(dir, "sample.deb")
		if _, err := Write(ctx, path, p); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: cancelled after data.tar's last byte: %v", c, err)
		}
		if left, _ := os.ReadDir(dir); len(left) != 0 {
			t.Errorf("%s: left in the folder: %v", c, left)
		}
	}
}
