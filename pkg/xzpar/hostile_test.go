package xzpar

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"hash/crc64"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ulikunitz/xz/lzma"

	"github.com/updeb/updeb/internal/testkit/testenv"
)

// xzReferee runs `xz -dc` on data: the decoded bytes, or ok false when xz
// refuses the file. xz's exit status 2 with output is a warning (an
// unsupported check it cannot verify); that counts as accepted.
func xzReferee(t *testing.T, data []byte) (out []byte, ok bool, stderr string) {
	t.Helper()
	cmd := exec.Command("xz", "-dc", "--no-warn")
	cmd.Stdin = bytes.NewReader(data)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("xz -dc: %v", err)
	}
	return o.Bytes(), err == nil, e.String()
}

// unsupportedFilters names, for each xz-utils test file that uses a filter
// this reader does not decode, the filter the error must name.
var unsupportedFilters = map[string]string{
	"good-1-3delta-lzma2.xz":     "delta",
	"good-1-delta-lzma2.tiff.xz": "delta",
	"good-1-arm64-lzma2-1.xz":    "ARM64 BCJ",
	"good-1-arm64-lzma2-2.xz":    "ARM64 BCJ",
	"good-1-sparc-lzma2.xz":      "SPARC BCJ",
	"good-1-empty-bcj-lzma2.xz":  "PowerPC BCJ",
}

// TestXZUtilsFiles runs xz-utils' own decoder test files
// (testdata/xz-utils, see its README) with xz as the referee: every good
// .xz file decodes to exactly what `xz -dc` gives, or is refused as
// unsupported naming its filter; every bad and unsupported .xz file is
// refused; the .lzma and .lz files are other formats, refused as not xz.
func TestXZUtilsFiles(t *testing.T) {
	testenv.RequireTool(t, "xz")
	files, err := filepath.Glob("testdata/xz-utils/*.*z*")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 97 {
		t.Fatalf("found %d xz-utils test files, expected 97 (testdata/xz-utils)", len(files))
	}
	for _, file := range files {
		name := filepath.Base(file)
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			want, refOK, refErr := xzReferee(t, data)
			got, err := decode(data)
			switch {
			case !strings.HasSuffix(name, ".xz"):
				if err == nil || !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "stream header magic") {
					t.Fatalf("a .lzma or .lz file: got %v, want ErrFormat about the stream header magic", err)
				}
			case strings.HasPrefix(name, "good-"):
				if !refOK {
					t.Fatalf("referee: xz -dc refuses a good file: %s", refErr)
				}
				if filter, ok := unsupportedFilters[name]; ok {
					if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), filter) {
						t.Fatalf("got %v, want ErrUnsupported naming %s", err, filter)
					}
					return
				}
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("got %d bytes, %v; xz -dc gives %d bytes", len(got), err, len(want))
				}
			case strings.HasPrefix(name, "bad-"):
				if refOK {
					t.Fatalf("referee: xz -dc accepts a bad file")
				}
				if err == nil || !errors.Is(err, ErrFormat) {
					t.Fatalf("got %d bytes, %v; want ErrFormat (xz -dc: %s)", len(got), err, strings.TrimSpace(refErr))
				}
			case strings.HasPrefix(name, "unsupported-"):
				if err == nil || !errors.Is(err, ErrUnsupported) && !errors.Is(err, ErrFormat) {
					t.Fatalf("got %d bytes, %v; want a refusal", len(got), err)
				}
			default:
				t.Fatalf("unknown test file kind")
			}
		})
	}
}

// xzWrapper builds an .xz file around raw LZMA2 data, with correct headers,
// check and index, so that the only possible fault is in the LZMA2 data.
type xzWrapper struct {
	check byte // checkNone, checkCRC32, checkCRC64 or checkSHA256
	sizes bool // record both sizes in the block header
}

func (w xzWrapper) wrap(lzma2 []byte, plain []byte) []byte {
	flags := []byte{0, w.check}
	out := append(append([]byte(nil), headerMagic...), flags...)
	out = appendCRC32(out, flags)
	bflags := byte(0)
	if w.sizes {
		bflags = 0x40 | 0x80
	}
	h := []byte{0, bflags}
	if w.sizes {
		h = appendVLI(h, uint64(len(lzma2)))
		h = appendVLI(h, uint64(len(plain)))
	}
	h = append(h, filterLZMA2, 1, 22) // 8 MiB dictionary
	h = padTo4(h, 4)
	h[0] = byte((len(h)+4)/4 - 1)
	h = appendCRC32(h, h)
	out = append(out, h...)
	out = append(out, lzma2...)
	out = append(out, blockPadding(len(lzma2))...)
	var sum []byte
	switch w.check {
	case checkCRC32:
		sum = binary.LittleEndian.AppendUint32(nil, crc32.ChecksumIEEE(plain))
	case checkCRC64:
		sum = binary.LittleEndian.AppendUint64(nil, crc64.Checksum(plain, crc64Table))
	case checkSHA256:
		s := sha256.Sum256(plain)
		sum = s[:]
	}
	out = append(out, sum...)
	idx := index([]indexRecord{{unpadded: uint64(len(h) + len(lzma2) + len(sum)), uncompressed: uint64(len(plain))}})
	out = append(out, idx...)
	body := binary.LittleEndian.AppendUint32(nil, uint32(len(idx)/4-1))
	body = append(body, flags...)
	out = appendCRC32(out, body)
	out = append(out, body...)
	return append(out, footerMagic...)
}

// rawLZMA compresses plain as raw LZMA (no .lzma header) with ulikunitz's
// encoder, with or without an end-of-payload marker.
func rawLZMA(t *testing.T, plain []byte, props lzma.Properties, eos bool) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := lzma.WriterConfig{Properties: &props, DictCap: 1 << 20, SizeInHeader: true, Size: int64(len(plain)), EOSMarker: eos}.NewWriter(&b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(plain); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()[13:] // properties, dictionary size, uncompressed size
}

// lzmaChunk is an LZMA2 chunk header with the given control bits (0x80 plus
// the reset bits) and sizes, then props (when control >= 0xc0) and data.
func lzmaChunk(control byte, uncompressed, compressed int, props byte, data []byte) []byte {
	u, c := uncompressed-1, compressed-1
	b := []byte{control | byte(u>>16), byte(u >> 8), byte(u), byte(c >> 8), byte(c)}
	if control >= 0xc0 {
		b = append(b, props)
	}
	return append(b, data...)
}

// storedChunk is an uncompressed LZMA2 chunk (control 1 resets the dictionary, 2 does not).
func storedChunk(control byte, data []byte) []byte {
	n := len(data) - 1
	return append([]byte{control, byte(n >> 8), byte(n)}, data...)
}

// hostileText is compressible text of n bytes.
func hostileText(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	words := []string{"package ", "updeb ", "deb ", "xz ", "chunk ", "lzma ", "\n", "marker ", "dictionary "}
	var b bytes.Buffer
	for b.Len() < n {
		b.WriteString(words[r.IntN(len(words))])
	}
	return b.Bytes()[:n]
}

// TestLZMA2Hostile builds LZMA2 data with one defect each (an end marker
// inside a chunk, sizes off by one, bytes left over or missing, reserved
// control bytes, resets in the wrong order, invalid properties, a range
// coder that does not start with zero), wraps it in an otherwise valid .xz
// file (with no check and no sizes in the block header, so that only the
// LZMA2 layer can notice; and with them), and requires this reader to agree
// with `xz -dc`: both refuse, or both give the same bytes.
func TestLZMA2Hostile(t *testing.T) {
	testenv.RequireTool(t, "xz")
	plain := hostileText(20000, 1)
	props := lzma.Properties{LC: 3, LP: 0, PB: 2}
	pb := props.Code()
	raw := rawLZMA(t, plain, props, false)
	eos := rawLZMA(t, plain, props, true)
	n, c := len(plain), len(raw)
	wide := lzma.Properties{LC: 4, LP: 1, PB: 2}
	rawWide := rawLZMA(t, plain, wide, false)
	// A stored chunk whose length is a multiple of 2^pb and whose last byte
	// gives literal context 0 leaves the decoder where a fresh encoder
	// starts, so raw may follow it without a dictionary reset.
	prefix := append(hostileText(199, 9), '\n')
	// Literals only, from a fresh encoder: they decode the same after any
	// state reset, whatever the dictionary holds.
	narrow, wide4 := lzma.Properties{LC: 0, LP: 0, PB: 0}, lzma.Properties{LC: 4, LP: 0, PB: 0}
	a, ab, x := rawLZMA(t, []byte("a"), narrow, false), rawLZMA(t, []byte("ab"), wide4, false), rawLZMA(t, []byte("x"), narrow, false)
	oneByteResets := [][]byte{lzmaChunk(0xe0, 1, len(a), narrow.Code(), a)}
	for range 999 {
		oneByteResets = append(oneByteResets, lzmaChunk(0xa0, 1, len(a), 0, a))
	}
	cases := []struct {
		name   string
		data   []byte
		plain  []byte // what the wrapper records; nil: plain
		accept bool   // what xz does, checked against the referee as well
	}{
		{"valid LZMA chunk", concat(lzmaChunk(0xe0, n, c, pb, raw), []byte{0}), nil, true},
		{"valid stored chunks", concat(storedChunk(1, plain[:100]), storedChunk(2, plain[100:300]), []byte{0}), plain[:300], true},
		{"stored then LZMA keeping the dictionary", concat(storedChunk(1, prefix), lzmaChunk(0xc0, n, c, pb, raw), []byte{0}), concat(prefix, plain), true},
		{"empty", []byte{0}, []byte{}, true},
		{"one-byte chunks that each reset the state", concat(append(oneByteResets, []byte{0})...), bytes.Repeat([]byte("a"), 1000), true},
		// lc=4's literal probabilities for "b" after "a", then lc=0's,
		// then lc=4's again: the last reset sets those the first used.
		{"properties that narrow and widen again", concat(lzmaChunk(0xe0, 2, len(ab), wide4.Code(), ab), lzmaChunk(0xc0, 1, len(x), narrow.Code(), x),
			lzmaChunk(0xc0, 2, len(ab), wide4.Code(), ab), []byte{0}), []byte("abxab"), true},
		{"end marker inside the chunk", concat(lzmaChunk(0xe0, n, len(eos), pb, eos), []byte{0}), nil, false},
		{"end marker, sizes of the data before it", concat(lzmaChunk(0xe0, n, c, pb, eos[:c]), []byte{0}), nil, false},
		{"one uncompressed byte fewer", concat(lzmaChunk(0xe0, n-1, c, pb, raw), []byte{0}), nil, false},
		{"one uncompressed byte more", concat(lzmaChunk(0xe0, n+1, c, pb, raw), []byte{0}), nil, false},
		{"one compressed byte left over", concat(lzmaChunk(0xe0, n, c+1, pb, append(append([]byte(nil), raw...), 0)), []byte{0}), nil, false},
		{"one compressed byte missing", concat(lzmaChunk(0xe0, n, c-1, pb, raw[:c-1]), []byte{0}), nil, false},
		{"range coder starts with a non-zero byte", concat(lzmaChunk(0xe0, n, c, pb, concat([]byte{1}, raw[1:])), []byte{0}), nil, false},
		{"no end-of-data byte", lzmaChunk(0xe0, n, c, pb, raw), nil, false},
		{"data after the end-of-data byte", concat(lzmaChunk(0xe0, n, c, pb, raw), []byte{0, 0}), nil, false},
		{"first chunk keeps the dictionary", concat(lzmaChunk(0xc0, n, c, pb, raw), []byte{0}), nil, false},
		{"first chunk keeps the properties", concat(lzmaChunk(0x80, n, c, pb, raw), []byte{0}), nil, false},
		{"first stored chunk keeps the dictionary", concat(storedChunk(2, plain[:100]), []byte{0}), plain[:100], false},
		{"LZMA after a stored dictionary reset without properties", concat(storedChunk(1, plain[:100]), lzmaChunk(0xa0, n, c, pb, raw), []byte{0}), nil, false},
		{"reserved control byte", concat(storedChunk(1, plain[:100]), []byte{3, 0, 0, 'x'}, []byte{0}), nil, false},
		{"lc+lp above 4", concat(lzmaChunk(0xe0, n, len(rawWide), wide.Code(), rawWide), []byte{0}), nil, false},
		{"properties byte out of range", concat(lzmaChunk(0xe0, n, c, 225, raw), []byte{0}), nil, false},
		{"truncated inside the chunk", lzmaChunk(0xe0, n, c, pb, raw[:c/2]), nil, false},
	}
	for _, w := range []xzWrapper{{check: checkNone}, {check: checkCRC64, sizes: true}} {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				recorded := tc.plain
				if recorded == nil {
					recorded = plain
				}
				file := w.wrap(tc.data, recorded)
				want, refOK, refErr := xzReferee(t, file)
				if refOK != tc.accept {
					t.Fatalf("referee: xz -dc accepts: %v (%s), the case expects %v", refOK, strings.TrimSpace(refErr), tc.accept)
				}
				got, err := decode(file)
				switch {
				case refOK && (err != nil || !bytes.Equal(got, want)):
					t.Fatalf("xz -dc gives %d bytes; we give %d bytes, %v", len(want), len(got), err)
				case !refOK && err == nil:
					t.Fatalf("xz -dc refuses (%s); we accept %d bytes", strings.TrimSpace(refErr), len(got))
				case !refOK && !errors.Is(err, ErrFormat):
					t.Fatalf("error %v does not wrap ErrFormat", err)
				}
			})
		}
	}
}

// TestLZMAStateResetLiterals: a state reset sets only the literal
// probabilities its properties use, 0x300 << (lc+lp), as liblzma does. A
// chunk may reset the state for one byte of output: setting all 12,288
// for each made 22 MB of such chunks take 30 s to decode (xz -d: 0.4 s).
func TestLZMAStateResetLiterals(t *testing.T) {
	for _, p := range []lzmaProps{{lc: 0, lp: 0}, {lc: 3, lp: 0, pb: 2}, {lc: 1, lp: 2}, {lc: 0, lp: 4}} {
		s := new(lzmaState)
		s.reset(p)
		n := 0x300 << (p.lc + p.lp)
		if s.literal[n-1] != lzmaProbInit || s.isMatch[0] != lzmaProbInit || s.repLen.high[255] != lzmaProbInit {
			t.Errorf("%+v: a probability it uses is not reset", p)
		}
		if n < len(s.literal) && s.literal[n] != 0 {
			t.Errorf("%+v: literal probability %d, which lc=%d lp=%d do not use, was set", p, n, p.lc, p.lp)
		}
	}
}

func concat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

// TestLZMA2Corruption flips bytes of valid LZMA2 data at random, wraps it
// without check or sizes (the LZMA2 layer is the only defence) and requires
// the same verdict and bytes as `xz -dc` for each.
func TestLZMA2Corruption(t *testing.T) {
	testenv.RequireTool(t, "xz")
	plain := hostileText(6000, 2)
	props := lzma.Properties{LC: 3, LP: 0, PB: 2}
	prefix := append(hostileText(199, 9), '\n') // see TestLZMA2Hostile
	raw := rawLZMA(t, plain, props, false)
	good := concat(storedChunk(1, prefix), lzmaChunk(0xc0, len(plain), len(raw), props.Code(), raw), []byte{0})
	plain = concat(prefix, plain)
	r := rand.New(rand.NewPCG(3, 4))
	w := xzWrapper{check: checkNone}
	agreeAccept, agreeRefuse := 0, 0
	for i := range 150 {
		data := append([]byte(nil), good...)
		pos := r.IntN(len(data))
		data[pos] ^= byte(1 + r.IntN(255))
		file := w.wrap(data, plain)
		want, refOK, _ := xzReferee(t, file)
		got, err := decode(file)
		switch {
		case refOK && (err != nil || !bytes.Equal(got, want)):
			t.Errorf("case %d (byte %d): xz -dc gives %d bytes; we give %d bytes, %v", i, pos, len(want), len(got), err)
		case !refOK && err == nil:
			t.Errorf("case %d (byte %d): xz -dc refuses; we accept %d bytes", i, pos, len(got))
		case refOK:
			agreeAccept++
		default:
			agreeRefuse++
		}
	}
	t.Logf("agreed with xz -dc: %d accepted, %d refused", agreeAccept, agreeRefuse)
	if agreeRefuse == 0 {
		t.Fatal("no corruption was refused: the test does not test anything")
	}
}

// FuzzLZMA2 feeds arbitrary bytes to the LZMA2 decoder. It must never
// panic nor produce more than the chunk headers allow, and what it accepts
// ulikunitz's more lenient decoder must decode to the same bytes.
func FuzzLZMA2(f *testing.F) {
	plain := hostileText(3000, 5)
	props := lzma.Properties{LC: 3, LP: 0, PB: 2}
	for _, eos := range []bool{false, true} {
		var b bytes.Buffer
		w, _ := lzma.WriterConfig{Properties: &props, DictCap: 1 << 16, SizeInHeader: true, Size: int64(len(plain)), EOSMarker: eos}.NewWriter(&b)
		w.Write(plain)
		w.Close()
		raw := b.Bytes()[13:]
		f.Add(concat(lzmaChunk(0xe0, len(plain), len(raw), props.Code(), raw), []byte{0}))
	}
	f.Add(concat(storedChunk(1, plain[:10]), storedChunk(2, plain[10:40]), []byte{0}))
	f.Fuzz(func(t *testing.T, data []byte) {
		var z lzma2Reader
		z.reset(bytes.NewReader(data), 1<<16)
		got, err := io.ReadAll(io.LimitReader(&z, 64<<20))
		if len(got) >= 64<<20 {
			t.Fatalf("%d input bytes gave %d bytes", len(data), len(got))
		}
		if err != nil {
			return
		}
		ur, err := lzma.Reader2Config{DictCap: 1 << 16}.NewReader2(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("we accept; ulikunitz refuses: %v", err)
		}
		want, err := io.ReadAll(ur)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("we accept %d bytes; ulikunitz gives %d bytes, %v", len(got), len(want), err)
		}
	})
}
