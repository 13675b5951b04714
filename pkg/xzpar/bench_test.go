package xzpar

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ulikunitz/xz"

	"github.com/updeb/updeb/internal/testkit/testenv"
)

// goBinaries returns the Go toolchain's own binaries concatenated (about 85 MB
// with Go 1.26): real amd64 code, the kind of payload updeb packages.
func goBinaries(b *testing.B) []byte {
	b.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skipf("go env GOROOT: %v", err)
	}
	root := strings.TrimSpace(string(out))
	var payload bytes.Buffer
	for _, dir := range []string{filepath.Join(root, "bin"), filepath.Join(root, "pkg", "tool", runtime.GOOS+"_"+runtime.GOARCH)} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			b.Fatal(err)
		}
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				b.Fatal(err)
			}
			payload.Write(data)
		}
	}
	return payload.Bytes()
}

// BenchmarkGoBinaries compares this writer's modes, at the default layout
// and at a few others, with ulikunitz's single-threaded writer and with xz
// itself on the Go toolchain's binaries; "ratio" is output/input. It is long:
// run one case at a time, e.g.
//
//	go test ./pkg/xzpar -run '^$' -bench 'GoBinaries/fast-default' -benchtime 1x
//
// cmd/updeb-bench's xz section measures the same against dpkg-deb, with CPU
// time and peak RSS, on one package and on the whole bench payload.
func BenchmarkGoBinaries(b *testing.B) {
	payload := goBinaries(b)
	run := func(b *testing.B, compress func(io.Writer) error) {
		b.SetBytes(int64(len(payload)))
		var out countingWriter
		for b.Loop() {
			out = 0
			if err := compress(&out); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(out)/float64(len(payload)), "ratio")
		b.ReportMetric(float64(out), "bytes")
	}
	for _, cfg := range []Config{
		{X86: true},
		{X86: true, Mode: ModeBest},
		{X86: true, BlockSize: 16 << 20, DictCap: 16 << 20},
		{X86: true, BlockSize: 16 << 20, DictCap: 8 << 20, Mode: ModeBest},
		{X86: true, BlockSize: 32 << 20, DictCap: 32 << 20},
		{BlockSize: DefaultBlockSize, DictCap: DefaultDictCap},
	} {
		name := fmt.Sprintf("%v-bs%dM-dict%dM-x86=%v", cfg.Mode, cfg.BlockSize>>20, cfg.DictCap>>20, cfg.X86)
		if cfg.BlockSize == 0 {
			name = cfg.Mode.String() + "-default"
		}
		b.Run(name, func(b *testing.B) {
			run(b, func(w io.Writer) error {
				zw, err := NewWriter(w, cfg)
				if err != nil {
					return err
				}
				if _, err := zw.Write(payload); err != nil {
					return err
				}
				return zw.Close()
			})
		})
	}
	b.Run("ulikunitz-xz-default", func(b *testing.B) {
		run(b, func(w io.Writer) error {
			zw, err := xz.NewWriter(w)
			if err != nil {
				return err
			}
			if _, err := zw.Write(payload); err != nil {
				return err
			}
			return zw.Close()
		})
	})
	for _, threads := range []string{"-T1", "-T2"} {
		b.Run("xz-6"+threads, func(b *testing.B) {
			testenv.RequireTool(b, "xz")
			run(b, func(w io.Writer) error {
				cmd := exec.Command("xz", "-6", threads, "-c")
				cmd.Stdin, cmd.Stdout = bytes.NewReader(payload), w
				return cmd.Run()
			})
		})
	}
}

// BenchmarkEncode measures the LZMA2 encoder alone, one block in one
// goroutine, per mode, on the Go toolchain's binaries (MB/s of input): the
// first 8 MiB with an 8 MiB dictionary, and one 32 MiB block after the x86
// filter with a 16 MiB dictionary, as pkg/deb encodes it. The match finder's
// tables are allocated before the payload is read, so that they get fresh
// memory and huge pages as in a build rather than the heap's reused pages
// (about 10% slower). The 32 MiB block is long (5 to 17 s on 2 shared cores):
//
//	go test ./pkg/xzpar -run '^$' -bench 'Encode/32MiB' -benchtime 2x
func BenchmarkEncode(b *testing.B) {
	const maxDict = 16 << 20
	encoders := map[Mode]*lzmaEncoder{}
	for _, mode := range modes {
		encoders[mode] = newLZMAEncoder(mode)
		encoders[mode].mf.reset(nil, maxDict, finderFor(mode, maxDict, maxDict, false))
	}
	payload := goBinaries(b)
	for _, layout := range []struct {
		name       string
		size, dict int
		x86        bool
	}{
		{"8MiB", 8 << 20, 8 << 20, false},
		{"32MiB-dict16MiB-x86", 32 << 20, maxDict, true},
	} {
		if len(payload) < layout.size {
			b.Fatalf("the toolchain's binaries are %d bytes, under %d", len(payload), layout.size)
		}
		block := make([]byte, layout.size)
		adviseHugePages(block)
		copy(block, payload)
		if layout.x86 {
			x86Convert(block, true)
		}
		for _, mode := range modes {
			b.Run(layout.name+"/"+mode.String(), func(b *testing.B) {
				enc := encoders[mode]
				var out []byte
				b.SetBytes(int64(len(block)))
				for b.Loop() {
					out = enc.encode(out[:0], block, uint32(layout.dict), finderFor(mode, layout.dict, layout.dict, false), nil)
				}
				b.ReportMetric(float64(len(out))/float64(len(block)), "ratio")
			})
		}
	}
}

type countingWriter int64

func (c *countingWriter) Write(p []byte) (int, error) {
	*c += countingWriter(len(p))
	return len(p), nil
}

// BenchmarkReadGoBinaries compares NewReader with ulikunitz's reader on the
// Go toolchain's binaries compressed as pkg/deb does (8 MiB blocks, 4 MiB
// dictionary), without and with the x86 filter (which only NewReader reads),
// and on xz -6 output (one block). MB/s is of uncompressed data. Compressing
// the inputs first takes a minute or two:
//
//	go test ./pkg/xzpar -run '^$' -bench ReadGoBinaries -benchtime 2x
func BenchmarkReadGoBinaries(b *testing.B) {
	payload := goBinaries(b)
	inputs := map[string][]byte{}
	for _, x86 := range []bool{false, true} {
		inputs[fmt.Sprintf("xzpar-x86=%v", x86)] = compress(b, payload, Config{BlockSize: 8 << 20, DictCap: 4 << 20, Workers: 2, X86: x86})
	}
	testenv.RequireTool(b, "xz")
	cmd := exec.Command("xz", "-6", "-T1", "-c")
	cmd.Stdin = bytes.NewReader(payload)
	xz6, err := cmd.Output()
	if err != nil {
		b.Fatal(err)
	}
	inputs["xz-6"] = xz6
	read := func(b *testing.B, in []byte, newReader func(io.Reader) (io.Reader, error)) {
		b.SetBytes(int64(len(payload)))
		for b.Loop() {
			r, err := newReader(bytes.NewReader(in))
			if err != nil {
				b.Fatal(err)
			}
			if n, err := io.Copy(io.Discard, r); err != nil || n != int64(len(payload)) {
				b.Fatalf("read %d bytes, %v; want %d", n, err, len(payload))
			}
		}
		b.ReportMetric(float64(len(in)), "compressed-bytes")
	}
	for _, name := range []string{"xzpar-x86=false", "xzpar-x86=true", "xz-6"} {
		b.Run("NewReader/"+name, func(b *testing.B) { read(b, inputs[name], NewReader) })
		if name == "xzpar-x86=true" {
			continue
		}
		// As pkg/deb used it: DictCap is a minimum there, so every block got 64 MiB.
		b.Run("ulikunitz-dict64M/"+name, func(b *testing.B) {
			read(b, inputs[name], func(r io.Reader) (io.Reader, error) { return xz.ReaderConfig{DictCap: 64 << 20}.NewReader(r) })
		})
		b.Run("ulikunitz-default/"+name, func(b *testing.B) {
			read(b, inputs[name], func(r io.Reader) (io.Reader, error) { return xz.NewReader(r) })
		})
	}
}
