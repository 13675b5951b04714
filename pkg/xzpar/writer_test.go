package xzpar

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/ulikunitz/xz"

	"github.com/updeb/updeb/internal/testkit/testenv"
)

var update = flag.Bool("update", false, "rewrite testdata/golden.xz")

// compress runs the writer over in, written in uneven pieces so block
// boundaries fall inside Write calls.
func compress(t testing.TB, in []byte, cfg Config) []byte {
	t.Helper()
	var out bytes.Buffer
	w, err := NewWriter(&out, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for p, step := in, 1; len(p) > 0; step = step*3 + 1 {
		k := min(step, len(p))
		if n, err := w.Write(p[:k]); err != nil || n != k {
			t.Fatalf("Write(%d bytes) = %d, %v", k, n, err)
		}
		p = p[k:]
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// decodeGo decodes with ulikunitz's reader, in single-stream mode.
func decodeGo(t testing.TB, xzData []byte) []byte {
	t.Helper()
	r, err := xz.ReaderConfig{SingleStream: true}.NewReader(bytes.NewReader(xzData))
	return readAll(t, "xz.Reader", r, err)
}

// readAll reads r to the end, failing t on err (from creating the reader
// named name) or on a read error.
func readAll(t testing.TB, name string, r io.Reader, err error) []byte {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return got
}

func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// xzList returns xz --robot -lvv's "block" lines, split into fields.
func xzList(t *testing.T, path string) [][]string {
	t.Helper()
	var blocks [][]string
	for _, line := range strings.Split(string(testenv.Run(t, "xz", "--robot", "-lvv", path)), "\n") {
		if f := strings.Split(line, "\t"); f[0] == "block" {
			blocks = append(blocks, f)
		}
	}
	return blocks
}

func textData(n int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "line %d of some fairly repetitive text, value %x\n", i, i*i%977)
	}
	return b.Bytes()[:n]
}

func randomData(n int, seed uint64) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, 1))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// machineCode returns n bytes of x86-64 code: the text of the test binary.
func machineCode(t testing.TB, n int) []byte {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	const textStart = 0x1000 // ELF text follows the first page
	if len(b) < textStart+n {
		t.Fatalf("%s: %d bytes, want at least %d", exe, len(b), textStart+n)
	}
	return b[textStart : textStart+n]
}

func TestRoundTrip(t *testing.T) {
	testenv.RequireTool(t, "xz")
	const bs = 64 << 10
	for _, tc := range []struct {
		name string
		in   []byte
		cfg  Config
	}{
		{"empty", nil, Config{BlockSize: bs}},
		{"one byte", []byte{'x'}, Config{BlockSize: bs}},
		{"exact multiple of the block size", textData(3 * bs), Config{BlockSize: bs}},
		{"one past a block", textData(bs + 1), Config{BlockSize: bs}},
		// Random data makes the encoder emit LZMA2 uncompressed chunks.
		{"incompressible", randomData(2*bs+100, 1), Config{BlockSize: bs}},
		{"mixed random and text", append(randomData(bs/2, 2), textData(2*bs)...), Config{BlockSize: bs}},
		{"best mode", append(textData(9000), randomData(3000, 6)...), Config{BlockSize: 5000, Mode: ModeBest}},
		{"dictionary smaller than a block", textData(2 * bs), Config{BlockSize: bs, DictCap: MinDictCap}},
		{"tiny blocks", textData(5000), Config{BlockSize: 1000}},
		{"x86 filter on machine code", machineCode(t, 3*bs+10), Config{BlockSize: bs, X86: true}},
		{"x86 filter on random data", randomData(bs+5, 7), Config{BlockSize: bs, X86: true}},
		{"x86 filter, blocks shorter than an instruction", machineCode(t, 23), Config{BlockSize: 4, X86: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg1, cfg4 := tc.cfg, tc.cfg
			cfg1.Workers, cfg4.Workers = 1, 4
			out := compress(t, tc.in, cfg1)
			if again := compress(t, tc.in, cfg4); !bytes.Equal(again, out) {
				t.Fatalf("Workers=4 output (%d bytes) differs from Workers=1 output (%d bytes)", len(again), len(out))
			}
			if again := compress(t, tc.in, cfg4); !bytes.Equal(again, out) {
				t.Fatalf("second Workers=4 run differs from the first")
			}
			if !tc.cfg.X86 { // ulikunitz's reader knows no BCJ filter; xz does
				if got := decodeGo(t, out); !bytes.Equal(got, tc.in) {
					t.Fatalf("ulikunitz xz.Reader: got %d bytes, want %d", len(got), len(tc.in))
				}
			}
			path := writeTemp(t, "in.xz", out)
			testenv.Run(t, "xz", "-t", path)
			if got := testenv.Run(t, "xz", "-dc", path); !bytes.Equal(got, tc.in) {
				t.Fatalf("xz -d: got %d bytes, want %d", len(got), len(tc.in))
			}
			blocks := xzList(t, path)
			if want := (len(tc.in) + tc.cfg.BlockSize - 1) / tc.cfg.BlockSize; len(blocks) != want {
				t.Fatalf("xz -l lists %d blocks, want %d", len(blocks), want)
			}
			for i, b := range blocks {
				// Field 7 is the uncompressed size, field 12 says which sizes the block header records: both.
				if len(b) < 13 || b[12] != "cu" {
					t.Fatalf("block %d: xz -lvv fields %q, want sizes present \"cu\"", i+1, b)
				}
				wantFilters := "--lzma2=dict="
				if tc.cfg.X86 {
					wantFilters = "--x86 --lzma2=dict="
				}
				if !strings.HasPrefix(b[len(b)-1], wantFilters) {
					t.Fatalf("block %d: filter chain %q, want %q...", i+1, b[len(b)-1], wantFilters)
				}
				wantU := min(tc.cfg.BlockSize, len(tc.in)-i*tc.cfg.BlockSize)
				if b[7] != strconv.Itoa(wantU) {
					t.Fatalf("block %d: uncompressed size %s, want %d", i+1, b[7], wantU)
				}
			}
		})
	}
}

// TestGolden pins the exact bytes, so a change of encoder (a new ulikunitz/xz
// version, a container change) that would break reproducible packages shows.
// Regenerate with: go test ./pkg/xzpar -run TestGolden -update
func TestGolden(t *testing.T) {
	in := append(textData(40000), randomData(5000, 3)...)
	got := compress(t, in, Config{BlockSize: 16 << 10, Workers: 3})
	path := filepath.Join("testdata", "golden.xz")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("output (%d bytes) differs from %s (%d bytes)", len(got), path, len(want))
	}
	if !bytes.Equal(decodeGo(t, want), in) {
		t.Fatalf("%s does not decode to the input", path)
	}
}

// TestEmptyMatchesXZ: with no blocks the stream is fully determined by the
// format, so it must equal what xz itself writes.
func TestEmptyMatchesXZ(t *testing.T) {
	testenv.RequireTool(t, "xz")
	cmd := exec.Command("xz", "-c", "--check=crc64")
	cmd.Stdin = bytes.NewReader(nil)
	want, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := compress(t, nil, Config{}); !bytes.Equal(got, want) {
		t.Fatalf("empty stream\n got % x\nwant % x", got, want)
	}
}

// TestTarAndDeb checks the consumers: tar reads the decompressed data, and
// dpkg-deb reads a .deb whose data.tar.xz this package wrote.
func TestTarAndDeb(t *testing.T) {
	testenv.RequireTool(t, "xz", "tar", "dpkg-deb")
	var tarBuf bytes.Buffer
	tw := tar.NewWriter(&tarBuf)
	files := map[string][]byte{"./usr/bin/tool": randomData(70000, 4), "./usr/share/doc/tool/README": textData(90000)}
	for _, name := range []string{"./usr/bin/tool", "./usr/share/doc/tool/README"} {
		hdr := &tar.Header{Name: name, Mode: 0o755, Size: int64(len(files[name])), ModTime: time.Unix(0, 0), Format: tar.FormatGNU}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(files[name]); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	dataXZ := compress(t, tarBuf.Bytes(), Config{BlockSize: 32 << 10, Workers: 2})
	if n := len(xzList(t, writeTemp(t, "data.tar.xz", dataXZ))); n < 2 {
		t.Fatalf("want several blocks, got %d", n)
	}

	dir := t.TempDir()
	dataPath := filepath.Join(dir, "data.tar.xz")
	if err := os.WriteFile(dataPath, dataXZ, 0o644); err != nil {
		t.Fatal(err)
	}
	list := testenv.Run(t, "tar", "-tJf", dataPath)
	if want := "./usr/bin/tool\n./usr/share/doc/tool/README\n"; string(list) != want {
		t.Fatalf("tar -tJf lists %q, want %q", list, want)
	}

	control := "Package: tool\nVersion: 1.0\nArchitecture: amd64\nMaintainer: T <t@example.org>\nDescription: test\n"
	var ctlTar bytes.Buffer
	gz := gzip.NewWriter(&ctlTar)
	ctw := tar.NewWriter(gz)
	if err := ctw.WriteHeader(&tar.Header{Name: "./control", Mode: 0o644, Size: int64(len(control)), ModTime: time.Unix(0, 0)}); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(ctw, control); err != nil {
		t.Fatal(err)
	}
	if err := ctw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	deb := arArchive([]arMember{
		{"debian-binary", []byte("2.0\n")},
		{"control.tar.gz", ctlTar.Bytes()},
		{"data.tar.xz", dataXZ},
	})
	debPath := filepath.Join(dir, "tool.deb")
	if err := os.WriteFile(debPath, deb, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := testenv.Run(t, "dpkg-deb", "--fsys-tarfile", debPath); !bytes.Equal(got, tarBuf.Bytes()) {
		t.Fatalf("dpkg-deb --fsys-tarfile: got %d bytes, want the %d-byte tar", len(got), tarBuf.Len())
	}
}

type arMember struct {
	name string
	data []byte
}

// arArchive writes the common ar format as dpkg expects it (deb(5)): a test
// fixture only; the deb package owns the real writer.
func arArchive(members []arMember) []byte {
	b := []byte("!<arch>\n")
	for _, m := range members {
		b = fmt.Appendf(b, "%-16s%-12d%-6d%-6d%-8s%-10d`\n", m.name, 0, 0, 0, "100644", len(m.data))
		b = append(b, m.data...)
		if len(m.data)%2 == 1 {
			b = append(b, '\n')
		}
	}
	return b
}

// failingWriter accepts n bytes, then fails every write.
type failingWriter struct{ n int }

var errDiskFull = errors.New("disk full")

func (f *failingWriter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		k := f.n
		f.n = 0
		return k, errDiskFull
	}
	f.n -= len(p)
	return len(p), nil
}

func TestWriteErrorIsStickyAndLeaksNothing(t *testing.T) {
	before := runtime.NumGoroutine()
	w, err := NewWriter(&failingWriter{n: 3000}, Config{BlockSize: 4096, Workers: 4})
	if err != nil {
		t.Fatal(err)
	}
	in := textData(200 << 10)
	var werr error
	for p := in; len(p) > 0 && werr == nil; p = p[min(len(p), 5000):] {
		_, werr = w.Write(p[:min(len(p), 5000)])
	}
	const want = "xzpar: writing the xz stream: disk full"
	if werr == nil || !errors.Is(werr, errDiskFull) || werr.Error() != want {
		t.Fatalf("Write error = %v, want %q", werr, want)
	}
	if _, err := w.Write([]byte("more")); !errors.Is(err, errDiskFull) {
		t.Fatalf("Write after an error = %v, want the same error", err)
	}
	if err := w.Close(); !errors.Is(err, errDiskFull) {
		t.Fatalf("Close = %v, want the write error", err)
	}
	// Close waited for every worker: the goroutine count is back, once the
	// workers, which signal done just before they return, have returned.
	after := runtime.NumGoroutine()
	for deadline := time.Now().Add(2 * time.Second); after > before && time.Now().Before(deadline); after = runtime.NumGoroutine() {
		time.Sleep(time.Millisecond)
	}
	if after > before {
		t.Fatalf("%d goroutines before, %d 2 s after Close", before, after)
	}
}

func TestFailingCloseWrite(t *testing.T) {
	// The stream header and block fit; the index and footer do not.
	in := textData(100)
	full := compress(t, in, Config{})
	w, err := NewWriter(&failingWriter{n: len(full) - 20}, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(in); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); !errors.Is(err, errDiskFull) {
		t.Fatalf("Close = %v, want %v", err, errDiskFull)
	}
}

func TestUseAfterClose(t *testing.T) {
	w, err := NewWriter(io.Discard, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("x")); err != ErrClosed {
		t.Fatalf("Write after Close = %v, want %v", err, ErrClosed)
	}
	if err := w.Close(); err != ErrClosed {
		t.Fatalf("second Close = %v, want %v", err, ErrClosed)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{BlockSize: -1}, "xzpar: block size -1 out of range: want 1 to 1073741824 bytes"},
		{Config{BlockSize: MaxBlockSize + 1}, "xzpar: block size 1073741825 out of range: want 1 to 1073741824 bytes"},
		{Config{Workers: -2}, "xzpar: -2 workers out of range: want 1 to 256"},
		{Config{DictCap: 100}, "xzpar: dictionary capacity 100 out of range: want 4096 to 1073741824 bytes"},
		{Config{Mode: 7}, "xzpar: unknown mode 7: want ModeFast or ModeBest"},
	} {
		if _, err := NewWriter(io.Discard, tc.cfg); err == nil || err.Error() != tc.want {
			t.Errorf("NewWriter(%+v) = %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

func TestVLI(t *testing.T) {
	for _, tc := range []struct {
		x    uint64
		want []byte
	}{
		{0, []byte{0}}, {0x7f, []byte{0x7f}}, {0x80, []byte{0x80, 0x01}}, {300, []byte{0xac, 0x02}},
		{1<<63 - 1, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}},
	} {
		if got := appendVLI(nil, tc.x); !bytes.Equal(got, tc.want) {
			t.Errorf("appendVLI(%d) = % x, want % x", tc.x, got, tc.want)
		}
	}
}

func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte("hello, hello, hello"), uint16(3))
	f.Add(randomData(3000, 5), uint16(1000))
	f.Add([]byte{}, uint16(1))
	f.Fuzz(func(t *testing.T, in []byte, bs uint16) {
		cfg := Config{BlockSize: int(bs%4096) + 1, Workers: 3}
		out := compress(t, in, cfg)
		if got := decodeGo(t, out); !bytes.Equal(got, in) {
			t.Fatalf("round trip with block size %d: got %d bytes, want %d", cfg.BlockSize, len(got), len(in))
		}
	})
}

// TestX86Gain checks that the x86 filter does its job on machine code: it
// must convert calls and make the output smaller.
func TestX86Gain(t *testing.T) {
	code := machineCode(t, 256<<10)
	plain := compress(t, code, Config{})
	filtered := compress(t, code, Config{X86: true})
	if len(filtered) >= len(plain)*98/100 {
		t.Fatalf("x86 filter: %d bytes, without it %d: want at least 2%% smaller", len(filtered), len(plain))
	}
}

func FuzzX86Inverse(f *testing.F) {
	f.Add([]byte{0xe8, 0, 0, 0, 0, 0xe8, 1, 2, 3, 0xff, 0xe9, 0xe8, 0x10, 0, 0, 0})
	f.Add(randomData(100, 8))
	f.Fuzz(func(t *testing.T, in []byte) {
		buf := append([]byte(nil), in...)
		x86Convert(buf, true)
		// The reader decodes piece by piece: one byte at a time must give
		// the same result as the whole block at once.
		r := &x86Reader{r: iotest.OneByteReader(bytes.NewReader(buf)), f: newX86Filter(0), buf: make([]byte, 7)}
		streamed, err := io.ReadAll(r)
		if err != nil || !bytes.Equal(streamed, in) {
			t.Fatalf("x86Reader(encode(% x)) = % x, %v", in, streamed, err)
		}
		x86Convert(buf, false)
		if !bytes.Equal(buf, in) {
			t.Fatalf("x86 decode(encode(% x)) = % x", in, buf)
		}
	})
}

// TestCancelStopsWithinAChunk: a cancelled writer's encoders give up within
// the chunk they are in (TestStopChecks: every stopCheck bytes), Write and
// Close return the context's error, nothing more reaches the output, and no
// worker outlives Close.
func TestCancelStopsWithinAChunk(t *testing.T) {
	// The encoder asks every stopCheck bytes: with the answer yes it stops
	// at the first question, having coded stopCheck bytes of a 4 MiB block.
	block := randomData(4<<20, 9)
	for _, v := range variants {
		e := newLZMAEncoder(v.mode)
		asked := 0
		e.stopped = func() bool { asked++; return true }
		if out := e.encode(nil, block, 4<<20, v.f, nil); out != nil || asked != 1 {
			t.Errorf("%s: encode after stop = %d bytes, asked %d times; want nil after one question", v.name, len(out), asked)
		}
	}

	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	w, err := NewWriterContext(ctx, &out, Config{BlockSize: 8 << 20, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(textData(16 << 20)); err != nil { // two blocks in flight
		t.Fatal(err)
	}
	cancel()
	written := out.Len()
	if _, err := w.Write([]byte("more")); !errors.Is(err, context.Canceled) {
		t.Errorf("Write after cancel = %v, want %v", err, context.Canceled)
	}
	if err := w.Close(); !errors.Is(err, context.Canceled) {
		t.Errorf("Close after cancel = %v, want %v", err, context.Canceled)
	}
	if out.Len() != written {
		t.Errorf("%d bytes written after the cancel", out.Len()-written)
	}
	after := runtime.NumGoroutine()
	for deadline := time.Now().Add(2 * time.Second); after > before && time.Now().Before(deadline); after = runtime.NumGoroutine() {
		time.Sleep(time.Millisecond)
	}
	if after > before {
		t.Fatalf("%d goroutines before, %d 2 s after Close", before, after)
	}
}
