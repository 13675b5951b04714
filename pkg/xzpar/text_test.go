package xzpar

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// goSource returns n bytes of the Go source files of this module's
// libraries (pkg/, over 700 KB), concatenated and repeated as often as n
// needs: real text, like a package of scripts, manifests or sources.
func goSource(t testing.TB, n int) []byte {
	t.Helper()
	paths, err := filepath.Glob("../*/*.go")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no Go source here: %v", err)
	}
	var b []byte
	for len(b) < n {
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			b = append(b, data...)
		}
	}
	return b[:n]
}

// TestTextLike: source code, UTF-8 prose and a tar's NUL padding are text;
// machine code, random data and text with a binary part of 30% are not.
func TestTextLike(t *testing.T) {
	utf8 := []byte(strings.Repeat("Größenänderung der Blöcke: 日本語のテキスト、そしてもう一行。\n", 3000))
	mixed := append(goSource(t, 700<<10), machineCode(t, 300<<10)...)
	for _, tc := range []struct {
		name string
		in   []byte
		want bool
	}{
		{"Go source", goSource(t, 1<<20), true},
		{"generated lines", textData(100 << 10), true},
		{"UTF-8 prose", utf8, true},
		{"text padded with NULs", append(textData(1000), make([]byte, 200<<10)...), true},
		{"text with an escape sequence per line", bytes.ReplaceAll(textData(50<<10), []byte("\n"), []byte("\x1b[0m\n")), true},
		{"machine code", machineCode(t, 1<<20), false},
		{"random", randomData(1<<20, 1), false},
		{"text with 30% machine code", mixed, false},
		{"NULs only", make([]byte, 100<<10), false},
		{"empty", nil, false},
	} {
		if got := textLike(tc.in); got != tc.want {
			t.Errorf("%s: textLike = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestTextFinders: on text, the finders a text block gets write smaller
// output than the binary ones would (the reason they cost more CPU), in
// both modes, with chains and with trees; the writer picks them for a text
// block; the output decodes.
func TestTextFinders(t *testing.T) {
	size := 600 << 10
	if raceEnabled {
		size = 128 << 10 // the race detector slows the encoder twentyfold
	}
	in := goSource(t, size)
	n := len(in)
	for _, tc := range []struct {
		name      string
		mode      Mode
		dictCap   int // the writer's: trees where a block's dictionary is at most half of it
		text, bin finder
	}{
		{"fast", ModeFast, n, textChainFinder, chainFinder},
		{"best-chains", ModeBest, n, textBestChainFinder, bestChainFinder}, // pieces would be under bestSegment
		{"best-trees", ModeBest, 2 * n, textTreeFinder, treeFinder},
	} {
		if got := finderFor(tc.mode, n, tc.dictCap, true); got != tc.text {
			t.Fatalf("%s: finderFor(text) = %+v, want %+v", tc.name, got, tc.text)
		}
		text := encodeRaw(in, variant{tc.name, tc.mode, tc.text, true}, n)
		bin := encodeRaw(in, variant{tc.name, tc.mode, tc.bin, false}, n)
		if len(text) >= len(bin) {
			t.Errorf("%s: %d bytes with the text finder, %d with the binary one", tc.name, len(text), len(bin))
		}
		if got := decodeRaw(t, text, n); !bytes.Equal(got, in) {
			t.Fatalf("%s: the text finder's output decodes to %d bytes, want %d", tc.name, len(got), n)
		}
		t.Logf("%s: %d bytes with the text finder, %d with the binary one (%.1f%% smaller)", tc.name, len(text), len(bin), 100-100*float64(len(text))/float64(len(bin)))
		// The writer codes a text block (one block, the input's size) with
		// the text finder: its block holds the same LZMA2 data.
		cfg := Config{BlockSize: n, DictCap: tc.dictCap, Mode: tc.mode, Workers: 1}
		if out := compress(t, in, cfg); !bytes.Contains(out, text) {
			t.Errorf("%s: the writer's block does not hold the text finder's data", tc.name)
		}
	}
}

// TestTextPieces: a ModeBest text block too large for trees, whose pieces
// are long enough, is coded in pieces: each piece's LZMA2 data is what a
// fresh encoder writes for it given only the pieceWarm bytes before it (the
// same from the block or from the window alone), its matches reach into
// that window (the block is smaller than the pieces coded apart), the
// block header states a piece's dictionary, the bytes do not depend on the
// workers, and xz, this package's reader and ulikunitz's read the stream.
// Not in pieces: text blocks that trees fit whole, and those whose pieces
// would be short.
func TestTextPieces(t *testing.T) {
	withSegment(t, 64<<10)
	saved := pieceWarm
	pieceWarm = 16 << 10 // less than a piece's dictionary: only the window counts
	t.Cleanup(func() { pieceWarm = saved })
	in := goSource(t, 300<<10+3)
	n := len(in)
	if inPieces(n, 2*n) || inPieces(n, 96<<10) || !inPieces(n, 128<<10) {
		t.Fatalf("inPieces(%d, ...): trees where they fit, no pieces under %d bytes", n, bestSegment)
	}
	cuts, dict := textPieces(n, 128<<10)
	if len(cuts) != 6 || dict != (n+4)/5 {
		t.Fatalf("textPieces(%d, 128 KiB) = %v, %d: want 5 pieces", n, cuts, dict)
	}
	cfg := Config{BlockSize: n, DictCap: 128 << 10, Mode: ModeBest, Workers: 1}
	want := compress(t, in, cfg)
	apart := 0
	for i := range len(cuts) - 1 {
		from := cuts[i]
		piece := newLZMAEncoder(ModeBest).encodePiece(nil, in[:cuts[i+1]], from, uint32(dict), textTreeFinder)
		w := min(from, pieceWarm)
		alone := newLZMAEncoder(ModeBest).encodePiece(nil, in[from-w:cuts[i+1]], w, uint32(dict), textTreeFinder)
		if !bytes.Equal(piece, alone) {
			t.Fatalf("piece %d: %d bytes coded in the block, %d from its window alone", i, len(piece), len(alone))
		}
		if !bytes.Contains(want, piece) {
			t.Fatalf("piece %d: its LZMA2 data is not in the block", i)
		}
		apart += len(encodeRaw(in[from:cuts[i+1]], variant{"best-trees-text", ModeBest, textTreeFinder, true}, dict)) - 1
	}
	if data := len(want); data >= apart {
		t.Fatalf("the pieces' windows found nothing: the stream is %d bytes, the pieces coded apart %d", data, apart)
	}
	if got, ok, stderr := xzReferee(t, want); !ok || !bytes.Equal(got, in) {
		t.Fatalf("xz -dc refuses or changes the pieces: %s", stderr)
	}
	if got, err := decode(want); err != nil || !bytes.Equal(got, in) {
		t.Fatalf("NewReader: %d bytes, %v", len(got), err)
	}
	if got := decodeGo(t, want); !bytes.Equal(got, in) {
		t.Fatalf("ulikunitz xz.Reader: %d bytes, want %d", len(got), len(in))
	}
	blocks := xzList(t, writeTemp(t, "pieces.xz", want))
	wantFilter := fmt.Sprintf("--lzma2=dict=%dKiB", dictSizeOf(dictSizeByte(dict))>>10)
	if len(blocks) != 1 || blocks[0][len(blocks[0])-1] != wantFilter {
		t.Fatalf("xz --list: blocks %q, want one with %s", blocks, wantFilter)
	}
	for _, workers := range []int{2, 8} {
		p, err := NewPool(workers, cfg.DictCap, 4*BlockMemory(n))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Pool = p
		if got := compress(t, in, cfg); !bytes.Equal(got, want) {
			t.Fatalf("%d workers: %d bytes, %d coded alone", workers, len(got), len(want))
		}
		if p.lent.Load() == 0 {
			t.Fatalf("%d workers: no helper coded a piece", workers)
		}
	}

}
