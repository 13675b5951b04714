package xzpar

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/testkit/testenv"
)

// decode reads all of xzData with NewReader, in uneven reads.
func decode(xzData []byte) ([]byte, error) {
	r, err := NewReader(bytes.NewReader(xzData))
	if err != nil {
		return nil, err
	}
	var out []byte
	buf := make([]byte, 70000)
	for step := 1; ; step = step*7%69997 + 1 {
		n, err := r.Read(buf[:step])
		out = append(out, buf[:n]...)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

// xzCompress runs xz with args on in.
func xzCompress(t *testing.T, in []byte, args ...string) []byte {
	t.Helper()
	path := writeTemp(t, "in", in)
	return testenv.Run(t, "xz", append(append([]string{"-c", "-k"}, args...), path)...)
}

// readerPayload is machine code followed by text, so that both the x86
// filter and LZMA2 matches have work.
func readerPayload(t *testing.T) []byte {
	return append(machineCode(t, 200<<10), textData(100<<10)...)
}

// TestReaderXZ reads what liblzma writes: presets, several blocks from
// threaded xz, the x86 filter (with a start offset, twice), every check, and
// concatenated streams with padding between them.
func TestReaderXZ(t *testing.T) {
	testenv.RequireTool(t, "xz")
	in := readerPayload(t)
	for _, tc := range []struct {
		name    string
		args    []string
		filters string // xz -lvv's filter chain of the first block
		blocks  int
	}{
		{"xz -6", []string{"-6"}, "--lzma2=dict=8MiB", 1},
		{"xz -0", []string{"-0"}, "--lzma2=dict=256KiB", 1},
		{"xz -T2 several blocks", []string{"-6", "-T2", "--block-size=65536"}, "--lzma2=dict=8MiB", 5},
		{"xz --x86 -6", []string{"--x86", "--lzma2=preset=6"}, "--x86 --lzma2=dict=8MiB", 1},
		{"xz --x86 -T2 several blocks", []string{"--x86", "--lzma2=preset=6", "-T2", "--block-size=100000"}, "--x86 --lzma2=dict=8MiB", 4},
		{"x86 start offset", []string{"--x86=start=1000", "--lzma2=preset=1"}, "--x86=start=1000 --lzma2=dict=1MiB", 1},
		{"x86 twice", []string{"--x86", "--x86", "--lzma2=preset=1"}, "--x86 --x86 --lzma2=dict=1MiB", 1},
		{"CRC32 check", []string{"-1", "--check=crc32"}, "--lzma2=dict=1MiB", 1},
		{"SHA-256 check", []string{"-1", "--check=sha256"}, "--lzma2=dict=1MiB", 1},
		{"no check", []string{"-1", "--check=none"}, "--lzma2=dict=1MiB", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := xzCompress(t, in, tc.args...)
			blocks := xzList(t, writeTemp(t, "in.xz", out))
			if len(blocks) != tc.blocks || blocks[0][len(blocks[0])-1] != tc.filters {
				t.Fatalf("xz %s: %d blocks, filters %q; want %d blocks, %q", strings.Join(tc.args, " "),
					len(blocks), blocks[0][len(blocks[0])-1], tc.blocks, tc.filters)
			}
			got, err := decode(out)
			if err != nil {
				t.Fatalf("NewReader: %v", err)
			}
			if !bytes.Equal(got, in) {
				t.Fatalf("NewReader: got %d bytes, want the %d input bytes", len(got), len(in))
			}
		})
	}
	t.Run("concatenated streams with padding", func(t *testing.T) {
		a, b := in[:1000], in[1000:]
		var cat []byte
		cat = append(cat, xzCompress(t, a, "-1")...)
		cat = append(cat, 0, 0, 0, 0, 0, 0, 0, 0)
		cat = append(cat, xzCompress(t, b, "--x86", "--lzma2=preset=1", "--check=crc32")...)
		cat = append(cat, 0, 0, 0, 0)
		got, err := decode(cat)
		if err != nil || !bytes.Equal(got, in) {
			t.Fatalf("NewReader: %d bytes, %v; want %d bytes", len(got), err, len(in))
		}
		if got := testenv.Run(t, "xz", "-dc", writeTemp(t, "cat.xz", cat)); !bytes.Equal(got, in) {
			t.Fatalf("xz -dc disagrees")
		}
	})
}

// TestReaderOwnOutput reads this package's writer, with and without the x86
// filter, and agrees with ulikunitz's reader where that one can read.
func TestReaderOwnOutput(t *testing.T) {
	in := readerPayload(t)
	for _, tc := range []struct {
		name string
		in   []byte
		cfg  Config
	}{
		{"empty", nil, Config{}},
		{"one byte x86", []byte{0xe8}, Config{X86: true}},
		{"LZMA2", in, Config{BlockSize: 64 << 10, Workers: 2}},
		{"x86", in, Config{BlockSize: 64 << 10, Workers: 2, X86: true}},
		{"x86, one block", in, Config{X86: true}},
		{"x86, tiny blocks", in[:5000], Config{BlockSize: 7, X86: true}},
		{"incompressible x86", randomData(100000, 3), Config{BlockSize: 30000, X86: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := compress(t, tc.in, tc.cfg)
			got, err := decode(out)
			if err != nil || !bytes.Equal(got, tc.in) {
				t.Fatalf("NewReader: %d bytes, %v; want %d bytes", len(got), err, len(tc.in))
			}
			if !tc.cfg.X86 {
				if old := decodeGo(t, out); !bytes.Equal(old, got) {
					t.Fatalf("ulikunitz's reader disagrees")
				}
			}
		})
	}
}

// reCRC recomputes the CRC32 of b[from:to] into b[to:to+4].
func reCRC(b []byte, from, to int) {
	binary.LittleEndian.PutUint32(b[to:], crc32.ChecksumIEEE(b[from:to]))
}

// TestReaderErrors: corrupt, truncated and unsupported data fail with
// messages that say what and where.
func TestReaderErrors(t *testing.T) {
	testenv.RequireTool(t, "xz")
	in := textData(3000)
	// One block of our writer: header 12..24 (both sizes, LZMA2), data, padding, check, index, footer.
	good := compress(t, in, Config{})
	n := len(good)
	mod := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	withFilters := func(args ...string) []byte { return xzCompress(t, in[:100], args...) }
	for _, tc := range []struct {
		name        string
		data        []byte
		kind        error
		want        string
		unexpectEOF bool
	}{
		{"empty", nil, ErrFormat,
			"xzpar: corrupt xz data at byte 0: truncated in the stream header: unexpected EOF", true},
		{"not xz", []byte("hello, this is not xz"), ErrFormat,
			"xzpar: corrupt xz data at byte 0: stream header magic 68 65 6c 6c 6f 2c, expected fd 37 7a 58 5a 00", false},
		{"stream header CRC", mod(func(b []byte) []byte { b[8]++; return b }), ErrFormat,
			"xzpar: corrupt xz data at byte 0: stream header CRC32 0x46b4d6e7, computed 0x46b4d6e6", false},
		{"unknown check", mod(func(b []byte) []byte { b[7] = 0x02; reCRC(b, 6, 8); return b }), ErrUnsupported,
			"xzpar: unsupported xz data at byte 0: check type 0x02: this reader verifies none (0x00), CRC32 (0x01), CRC64 (0x04) and SHA-256 (0x0a)", false},
		{"block header CRC", mod(func(b []byte) []byte { b[14]++; return b }), ErrFormat,
			"xzpar: corrupt xz data at byte 12: block 1 header: CRC32 0xb76d6e37, computed 0x58af0509", false},
		{"reserved block flags", mod(func(b []byte) []byte { b[13] |= 0x04; reCRC(b, 12, 24); return b }), ErrUnsupported,
			"xzpar: unsupported xz data at byte 12: block 1 header: reserved block flags 0xc4", false},
		{"uncompressed size in header too small", mod(func(b []byte) []byte { b[16]--; reCRC(b, 12, 24); return b }), ErrFormat,
			"xzpar: corrupt xz data at byte 359: block 1: more than the 2999 uncompressed bytes its header records", false},
		{"compressed data flipped", mod(func(b []byte) []byte { b[200] ^= 0x10; return b }), ErrFormat,
			"xzpar: corrupt xz data at byte 28: block 1: LZMA2 chunk 1: match distance 39053 reaches before the 1580 bytes decoded since the dictionary reset", false},
		{"check flipped", mod(func(b []byte) []byte { b[n-12-12-3] ^= 1; return b }), ErrFormat,
			"xzpar: corrupt xz data at byte 368: block 1: check 4e 73 ff cd f2 b3 8c 76, computed 4e 73 ff cd f2 b2 8c 76 from the uncompressed data", false},
		{"index record", mod(func(b []byte) []byte { b[n-20]++; reCRC(b, n-24, n-16); return b }), ErrFormat,
			"xzpar: corrupt xz data at byte 368: index record 1: unpadded size 356 and uncompressed size 3001, block 1 has 356 and 3000", false},
		{"footer flags", mod(func(b []byte) []byte {
			b[n-3] = 0x01
			binary.LittleEndian.PutUint32(b[n-12:], crc32.ChecksumIEEE(b[n-8:n-2]))
			return b
		}), ErrFormat,
			"xzpar: corrupt xz data at byte 380: stream footer flags 00 01 differ from the header's 00 04", false},
		{"truncated in the data", good[:100], ErrFormat,
			"xzpar: corrupt xz data at byte 100: truncated in block 1: unexpected EOF", true},
		{"truncated in the index", good[:n-14], ErrFormat,
			"xzpar: corrupt xz data at byte 378: truncated in the index: unexpected EOF", true},
		{"truncated footer", good[:n-1], ErrFormat,
			"xzpar: corrupt xz data at byte 391: truncated in the stream footer: unexpected EOF", true},
		{"data after the stream", append(append([]byte(nil), good...), "junk"...), ErrFormat,
			"xzpar: corrupt xz data at byte " + strconv.Itoa(n) + ": data after the stream (6a 75 6e 6b), expected stream padding or another stream", false},
		{"padding not a multiple of four", append(append([]byte(nil), good...), 0, 0), ErrFormat,
			"xzpar: corrupt xz data at byte " + strconv.Itoa(n) + ": 2 bytes after the stream, expected stream padding (groups of four zero bytes) or another stream", false},
		{"delta filter", withFilters("--delta=dist=4", "--lzma2=preset=1"), ErrUnsupported,
			"xzpar: unsupported xz data at byte 12: block 1 header: filter 0x03 (delta): this reader decodes only x86 BCJ (0x04) and LZMA2 (0x21)", false},
		{"ARM filter", withFilters("--arm", "--lzma2=preset=1"), ErrUnsupported,
			"xzpar: unsupported xz data at byte 12: block 1 header: filter 0x07 (ARM BCJ): this reader decodes only x86 BCJ (0x04) and LZMA2 (0x21)", false},
		{"ARM64 filter", withFilters("--arm64", "--lzma2=preset=1"), ErrUnsupported,
			"xzpar: unsupported xz data at byte 12: block 1 header: filter 0x0a (ARM64 BCJ): this reader decodes only x86 BCJ (0x04) and LZMA2 (0x21)", false},
		{"x86 last", mod(func(b []byte) []byte { b[18] = filterX86; b[19] = 0; b[20] = 0; reCRC(b, 12, 24); return b }), ErrFormat,
			"xzpar: corrupt xz data at byte 12: block 1 header: filter 1 of 1 is 0x04 (x86 BCJ): LZMA2 must be the last filter, and only it", false},
		{"unknown filter before LZMA2", withFilters("--sparc", "--lzma2=preset=1"), ErrUnsupported,
			"xzpar: unsupported xz data at byte 12: block 1 header: filter 0x09 (SPARC BCJ): this reader decodes only x86 BCJ (0x04) and LZMA2 (0x21)", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decode(tc.data)
			if err == nil {
				t.Fatalf("no error; read %d bytes", len(got))
			}
			if !errors.Is(err, tc.kind) || err.Error() != tc.want || errors.Is(err, io.ErrUnexpectedEOF) != tc.unexpectEOF {
				t.Fatalf("error %q (io.ErrUnexpectedEOF: %v)\nwant %v, %q (io.ErrUnexpectedEOF: %v)",
					err, errors.Is(err, io.ErrUnexpectedEOF), tc.kind, tc.want, tc.unexpectEOF)
			}
		})
	}
}

// FuzzReader writes in with this package's writer, then corrupts one byte
// (xor at pos) and cuts the stream at cut. The reader must never panic, must
// read the intact stream exactly, must fail on any truncation, and must
// never succeed with bytes other than the input: a corruption is either
// caught (by a CRC32, a check, a size) or harmless.
func FuzzReader(f *testing.F) {
	f.Add([]byte("hello, hello, hello"), uint16(7), true, uint16(30), byte(1), uint16(0))
	f.Add(textData(3000), uint16(1000), false, uint16(200), byte(0x80), uint16(0))
	f.Add([]byte{0xe8, 0, 0, 0, 0, 0xe8, 1, 2, 3, 0xff, 0xe9, 0xe8, 0x10, 0, 0, 0}, uint16(500), true, uint16(0), byte(0), uint16(3))
	f.Fuzz(func(t *testing.T, in []byte, bs uint16, x86 bool, pos uint16, xor byte, cut uint16) {
		good := compress(t, in, Config{BlockSize: int(bs%4096) + 1, Workers: 2, X86: x86})
		data := append([]byte(nil), good...)
		if len(data) > 0 {
			data[int(pos)%len(data)] ^= xor
		}
		cut = cut % uint16(min(len(data), 1<<16-1))
		data = data[:len(data)-int(cut)]
		got, err := decode(data)
		switch {
		case xor == 0 && cut == 0 && (err != nil || !bytes.Equal(got, in)):
			t.Fatalf("intact stream: %d bytes, %v; want the %d input bytes", len(got), err, len(in))
		case cut > 0 && err == nil:
			t.Fatalf("stream cut short by %d bytes: read %d bytes without error", cut, len(got))
		case err == nil && !bytes.Equal(got, in):
			t.Fatalf("byte %d xor %#02x: read %d bytes without error, not the input", int(pos)%len(good), xor, len(got))
		}
	})
}

// TestReaderX86BlocksShareBuffer: the x86 filter's buffer serves every block
// of a stream. Thousands of tiny x86 blocks (a hostile stream has hundreds of
// thousands) must not each allocate one.
func TestReaderX86BlocksShareBuffer(t *testing.T) {
	in := readerPayload(t)[:64<<10]
	out := compress(t, in, Config{BlockSize: 64, X86: true}) // 1024 blocks
	var got []byte
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r, err := NewReader(bytes.NewReader(out))
	if err == nil {
		got, err = io.ReadAll(r)
	}
	runtime.ReadMemStats(&after)
	if err != nil || !bytes.Equal(got, in) {
		t.Fatalf("NewReader: %d bytes, %v; want %d bytes", len(got), err, len(in))
	}
	// One 64 KiB buffer per block would be 64 MiB; the LZMA2 decoder's own
	// buffers and the output are a few MiB at most.
	if n := after.TotalAlloc - before.TotalAlloc; n > 16<<20 {
		t.Fatalf("decoding 1024 x86 blocks allocated %d MiB", n>>20)
	}
}
