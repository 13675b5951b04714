package xzpar

import (
	"bytes"
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
// both modes, with trees and with chains; the writer picks them for a text
// block; the output decodes.
func TestTextFinders(t *testing.T) {
	in := goSource(t, 600<<10)
	n := len(in)
	for _, tc := range []struct {
		name      string
		mode      Mode
		dictCap   int // the writer's: trees where a block's dictionary is at most half of it
		text, bin finder
	}{
		{"fast", ModeFast, n, textChainFinder, chainFinder},
		{"best-chains", ModeBest, n, textBestChainFinder, bestChainFinder},
		{"best-trees", ModeBest, 2 * n, textTreeFinder, treeFinder},
	} {
		if got := finderFor(tc.mode, n, tc.dictCap, true); got != tc.text {
			t.Fatalf("%s: finderFor(text) = %+v, want %+v", tc.name, got, tc.text)
		}
		text := encodeRaw(in, variant{tc.name, tc.mode, tc.text}, n)
		bin := encodeRaw(in, variant{tc.name, tc.mode, tc.bin}, n)
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
