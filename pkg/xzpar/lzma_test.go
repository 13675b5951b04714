package xzpar

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ulikunitz/xz/lzma"

	"github.com/updeb/updeb/internal/testkit/testenv"
)

var modes = []Mode{ModeFast, ModeBest}

// variant is a parser and match finder combination the encoder uses.
type variant struct {
	name string
	mode Mode
	f    finder
	// text: the writer gives it only blocks textLike calls text.
	text bool
}

var variants = []variant{
	{"fast", ModeFast, chainFinder, false}, {"best-chains", ModeBest, bestChainFinder, false}, {"best-trees", ModeBest, treeFinder, false},
	{"fast-text", ModeFast, textChainFinder, true}, {"best-chains-text", ModeBest, textBestChainFinder, true}, {"best-trees-text", ModeBest, textTreeFinder, true},
}

// encodeRaw returns the LZMA2 data of in, encoded with matches at most dict
// bytes back.
func encodeRaw(in []byte, v variant, dict int) []byte {
	return newLZMAEncoder(v.mode).encode(nil, in, uint32(dict), v.f, nil)
}

// decodeRaw decodes LZMA2 data with ulikunitz's reader and a dictionary of
// exactly dict bytes, so a longer distance is an error.
func decodeRaw(t testing.TB, data []byte, dict int) []byte {
	t.Helper()
	r, err := lzma.Reader2Config{DictCap: dict}.NewReader2(bytes.NewReader(data))
	return readAll(t, "lzma.Reader2", r, err)
}

// chunk is one LZMA2 chunk as the framing states it.
type chunk struct {
	control            byte
	unpacked, packed   int // packed is 0 for a stored chunk
	stored, properties bool
}

// parseChunks checks the LZMA2 framing of data: the limits of every chunk,
// the reset rules liblzma's and ulikunitz's decoders enforce, and the end
// marker as the last byte.
func parseChunks(t testing.TB, data []byte) []chunk {
	t.Helper()
	var chunks []chunk
	needProps, needState := true, false
	for i := 0; ; {
		if i >= len(data) {
			t.Fatalf("LZMA2 data of %d bytes has no end marker", len(data))
		}
		c := chunk{control: data[i]}
		switch {
		case c.control == controlEnd:
			if i != len(data)-1 {
				t.Fatalf("end marker at %d of %d bytes", i, len(data))
			}
			return chunks
		case c.control == controlStoredNew || c.control == controlStored:
			if (c.control == controlStoredNew) != (len(chunks) == 0) {
				t.Fatalf("chunk %d: control %#x: only the first chunk resets the dictionary", len(chunks), c.control)
			}
			c.stored = true
			c.unpacked = int(data[i+1])<<8 | int(data[i+2]) + 1
			i += 3 + c.unpacked
			needState = true
		case c.control >= controlLZMA:
			level := int(c.control>>5) & 3
			if (level == resetDictionary) != (len(chunks) == 0) {
				t.Fatalf("chunk %d: control %#x: only the first chunk resets the dictionary", len(chunks), c.control)
			}
			if needProps && level < resetStateProps || needState && level < resetState {
				t.Fatalf("chunk %d: control %#x lacks a reset it needs", len(chunks), c.control)
			}
			c.unpacked = int(c.control&0x1f)<<16 | int(data[i+1])<<8 | int(data[i+2]) + 1
			c.packed = int(data[i+3])<<8 | int(data[i+4]) + 1
			i += 5
			if level >= resetStateProps {
				c.properties = true
				if data[i] != propsByte {
					t.Fatalf("chunk %d: properties %#x, want %#x", len(chunks), data[i], propsByte)
				}
				i++
			}
			if data[i] != 0 {
				t.Fatalf("chunk %d: range coder data starts with %#x, want 0", len(chunks), data[i])
			}
			i += c.packed
			needProps, needState = false, false
			if c.unpacked > chunkMaxUnpacked || c.packed > chunkMaxPacked {
				t.Fatalf("chunk %d: %d bytes unpacked, %d packed: over the limits", len(chunks), c.unpacked, c.packed)
			}
		default:
			t.Fatalf("chunk %d: invalid control byte %#x", len(chunks), c.control)
		}
		chunks = append(chunks, c)
	}
}

func zeros(n int) []byte { return make([]byte, n) }

// repeated is n bytes of a short random pattern, repeated: every match is as
// long as the format allows.
func repeated(n int) []byte {
	pat := randomData(1000, 9)
	b := make([]byte, 0, n)
	for len(b) < n {
		b = append(b, pat[:min(len(pat), n-len(b))]...)
	}
	return b
}

type encodeCase struct {
	name string
	in   []byte
	dict int
	// random is set for incompressible input, compressible for input that
	// must shrink to less than half.
	random, compressible bool
	// heavy cases run in ModeFast only under the race detector.
	heavy bool
}

// encodeCases are the inputs every encoder test runs: edge sizes, the chunk
// limits (64 KiB packed: random data; 2 MiB unpacked: repeats), stored
// chunks, long matches, a small dictionary, machine code.
func encodeCases(t testing.TB) []encodeCase {
	const kib, mib = 1 << 10, 1 << 20
	cases := []encodeCase{
		{name: "empty", dict: 4 * kib},
		{name: "one byte", in: []byte{0x5a}, dict: 4 * kib},
		{name: "two bytes", in: []byte("ab"), dict: 4 * kib},
		{name: "three equal bytes", in: []byte("aaa"), dict: 4 * kib},
		{name: "zeros across the 2 MiB chunk limit", in: zeros(2*mib + 7), dict: 8 * mib, compressible: true, heavy: true},
		{name: "repeated pattern, longest matches", in: repeated(300 * kib), dict: 1 * mib, compressible: true},
		{name: "random: stored chunks", in: randomData(300*kib+3, 11), dict: 1 * mib, random: true},
		{name: "text", in: textData(1 * mib), dict: 4 * mib, compressible: true, heavy: true},
		{name: "Go binary", in: machineCode(t, 1*mib), dict: 4 * mib, compressible: true, heavy: true},
		{name: "small dictionary", in: textData(150 * kib), dict: 4 * kib, compressible: true},
		{name: "random, text, random", in: append(append(randomData(100*kib, 12), textData(200*kib)...), randomData(70*kib, 13)...), dict: 1 * mib},
	}
	for _, n := range []int{chunkMaxPacked - 1, chunkMaxPacked, chunkMaxPacked + 1} {
		cases = append(cases,
			encodeCase{name: fmt.Sprintf("text of %d bytes", n), in: textData(n), dict: 4 * mib, compressible: true},
			encodeCase{name: fmt.Sprintf("random of %d bytes", n), in: randomData(n, uint64(n)), dict: 4 * mib, random: true},
		)
	}
	for _, n := range []int{chunkMaxUnpacked - 1, chunkMaxUnpacked, chunkMaxUnpacked + 1} {
		cases = append(cases, encodeCase{name: fmt.Sprintf("repeats of %d bytes", n), in: repeated(n), dict: 4 * mib, compressible: true, heavy: true})
	}
	return cases
}

// skipHeavy reports whether tc is left out in mode: under the race detector,
// the heavy cases run in fast mode only.
func skipHeavy(tc encodeCase, mode Mode) bool {
	return raceEnabled && tc.heavy && mode != ModeFast
}

// skipVariant is skipHeavy for the encoder tests that run every variant:
// under the race detector, the heavy cases run with the first (fast, binary
// finder) only; and a text variant codes only what the writer would give
// it, text (FuzzEncode gives it anything).
func skipVariant(tc encodeCase, v variant) bool {
	return (raceEnabled && tc.heavy && v != variants[0]) || (v.text && !textLike(tc.in))
}

// TestEncodeRaw round-trips LZMA2 data through ulikunitz's decoder with the
// stated dictionary and checks the framing.
func TestEncodeRaw(t *testing.T) {
	for _, v := range variants {
		for _, tc := range encodeCases(t) {
			if skipVariant(tc, v) {
				continue
			}
			t.Run(v.name+"/"+tc.name, func(t *testing.T) {
				out := encodeRaw(tc.in, v, tc.dict)
				chunks := parseChunks(t, out)
				if got := decodeRaw(t, out, tc.dict); !bytes.Equal(got, tc.in) {
					t.Fatalf("decoded %d bytes, want the %d-byte input", len(got), len(tc.in))
				}
				// Stored chunks bound the output: 3 bytes per 64 KiB, per
				// attempted chunk, and the end marker.
				if limit := len(tc.in) + 6*(len(tc.in)/(chunkMaxPacked-1024)+1) + 1; len(out) > limit {
					t.Fatalf("%d bytes in, %d out: more than %d", len(tc.in), len(out), limit)
				}
				if again := encodeRaw(tc.in, v, tc.dict); !bytes.Equal(again, out) {
					t.Fatal("a second encoding differs")
				}
				stored := 0
				for _, c := range chunks {
					if c.stored {
						stored += c.unpacked
					}
				}
				if tc.random && stored < len(tc.in)*9/10 {
					t.Fatalf("random data: %d of %d bytes in stored chunks, want nearly all", stored, len(tc.in))
				}
				if tc.compressible && len(out) > len(tc.in)/2 {
					t.Fatalf("%d bytes compress to %d", len(tc.in), len(out))
				}
			})
		}
	}
}

// TestEncoderReuse: one encoder used for several blocks, with either finder,
// gives what fresh encoders give, whatever it encoded before (tables are
// reused, not cleared, and grow when a block needs more), also when the
// finder's stored values would wrap and it must clear its tables.
func TestEncoderReuse(t *testing.T) {
	for _, mode := range modes {
		e := newLZMAEncoder(mode)
		for i, tc := range []struct {
			in   []byte
			dict int
			f    finder
		}{
			{textData(400 << 10), 1 << 20, chainFinder},
			{machineCode(t, 300<<10), 64 << 10, treeFinder},
			{textData(100 << 10), 1 << 20, treeFinder},
			{append(textData(50<<10), machineCode(t, 200<<10)...), 1 << 20, chainFinder},
			{machineCode(t, 500<<10), 1 << 20, treeFinder},
		} {
			if mode == ModeFast && tc.f.kind == bt4 {
				continue
			}
			if i == 3 {
				e.mf.next = 1<<32 - 1<<20 // this block's values would wrap
			}
			got := e.encode(nil, tc.in, uint32(tc.dict), tc.f, nil)
			if want := encodeRaw(tc.in, variant{mode: mode, f: tc.f}, tc.dict); !bytes.Equal(got, want) {
				t.Fatalf("%v block %d: reused encoder gives %d bytes, a fresh one %d", mode, i, len(got), len(want))
			}
		}
	}
}

// TestDictionaryLimit: a repeat exactly dict bytes back is found and used; one
// byte further it must not be (the decoders refuse it).
func TestDictionaryLimit(t *testing.T) {
	const dict = 64 << 10
	seg := randomData(3000, 21)
	for _, v := range variants {
		for _, tc := range []struct {
			distance int
			match    bool
		}{{dict, true}, {dict - 1, true}, {dict + 1, false}} {
			in := append(append(append([]byte(nil), seg...), randomData(tc.distance-len(seg), 22)...), seg...)
			out := encodeRaw(in, v, dict)
			if got := decodeRaw(t, out, dict); !bytes.Equal(got, in) {
				t.Fatalf("%s distance %d: round trip fails", v.name, tc.distance)
			}
			matched := len(out) < len(in)-len(seg)/2
			if matched != tc.match {
				t.Fatalf("%s distance %d, dictionary %d: %d bytes in, %d out; want the repeat matched=%v", v.name, tc.distance, dict, len(in), len(out), tc.match)
			}
		}
	}
}

// TestEncodeReferees: liblzma (xz -t, xz -dc) and this package's reader read
// every case in an .xz stream, and the bytes do not depend on the worker count.
func TestEncodeReferees(t *testing.T) {
	testenv.RequireTool(t, "xz")
	dir := t.TempDir()
	var paths []string
	var want []byte
	for _, mode := range modes {
		for i, tc := range encodeCases(t) {
			if skipHeavy(tc, mode) {
				continue
			}
			cfg := Config{BlockSize: 1 << 20, DictCap: tc.dict, Mode: mode, Workers: 1}
			out := compress(t, tc.in, cfg)
			for _, w := range []int{2, 4} {
				if len(tc.in) <= cfg.BlockSize {
					break // one block: nothing to schedule
				}
				cfg.Workers = w
				if again := compress(t, tc.in, cfg); !bytes.Equal(again, out) {
					t.Fatalf("%v %s: Workers=%d output differs from Workers=1", mode, tc.name, w)
				}
			}
			if got, err := decode(out); err != nil || !bytes.Equal(got, tc.in) {
				t.Fatalf("%v %s: NewReader: %d bytes, %v", mode, tc.name, len(got), err)
			}
			if got := decodeGo(t, out); !bytes.Equal(got, tc.in) {
				t.Fatalf("%v %s: ulikunitz xz.Reader: %d bytes, want %d", mode, tc.name, len(got), len(tc.in))
			}
			p := filepath.Join(dir, fmt.Sprintf("%v-%02d.xz", mode, i))
			if err := os.WriteFile(p, out, 0o644); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, p)
			want = append(want, tc.in...)
		}
	}
	testenv.Run(t, "xz", append([]string{"-t"}, paths...)...)
	if got := testenv.Run(t, "xz", append([]string{"-dc"}, paths...)...); !bytes.Equal(got, want) {
		t.Fatalf("xz -dc of all cases: %d bytes, want %d", len(got), len(want))
	}
}

// FuzzEncode round-trips arbitrary input through the LZMA2 encoder (both
// modes, small dictionaries) and ulikunitz's decoder, and through the .xz
// writer and NewReader.
func FuzzEncode(f *testing.F) {
	f.Add([]byte("hello, hello, hello"), uint8(0), uint16(0))
	f.Add(randomData(3000, 5), uint8(1), uint16(7))
	f.Add(textData(20000), uint8(1), uint16(2))
	f.Add(textData(20000), uint8(2), uint16(20))
	f.Add(repeated(5000), uint8(0), uint16(300))
	f.Add([]byte{}, uint8(1), uint16(0))
	f.Fuzz(func(t *testing.T, in []byte, variantN uint8, dictK uint16) {
		v := variants[int(variantN)%len(variants)]
		dict := MinDictCap + int(dictK%64)*1024
		out := encodeRaw(in, v, dict)
		parseChunks(t, out)
		if got := decodeRaw(t, out, dict); !bytes.Equal(got, in) {
			t.Fatalf("%s dictionary %d: decoded %d bytes, want %d", v.name, dict, len(got), len(in))
		}
		// Blocks of 256 bytes or more: each block clears the finder's
		// 768 KiB of hash tables, which tiny blocks would make the cost.
		xzData := compress(t, in, Config{BlockSize: 256 + int(dictK)%5000, DictCap: dict, Mode: v.mode, Workers: 2})
		if got, err := decode(xzData); err != nil || !bytes.Equal(got, in) {
			t.Fatalf("%s: NewReader: %d bytes, %v; want %d", v.name, len(got), err, len(in))
		}
	})
}

// TestLiteralPrice checks literalPrice, in every state, for every byte and
// byte at rep0, against the sum of the bit prices along the path the LZMA
// specification gives (LitEnc_EncodeMatched), under uneven probabilities.
func TestLiteralPrice(t *testing.T) {
	var m model
	m.reset()
	for i := range m.literal {
		for j := range m.literal[i] {
			m.literal[i][j] = prob(1 + (i*7919+j*104729)%(probOne-2))
		}
	}
	for state := uint32(0); state < numStates; state++ {
		for b := range 256 {
			for matchByte := range 256 {
				probs := m.litProbs(byte(b))
				want := uint32(0)
				// The specification's loop: after a match, while the bits
				// agree, the probabilities at 0x100 + (matchBit << 8).
				sym, same := uint32(1), state >= litStates
				for i := 7; i >= 0; i-- {
					bit := uint32(b>>i) & 1
					k := sym
					if same {
						matchBit := uint32(matchByte>>i) & 1
						k += 0x100 + matchBit<<8
						same = matchBit == bit
					}
					want += bitPrice(probs[k], bit)
					sym = sym<<1 | bit
				}
				if got := m.literalPrice(state, byte(b), byte(b), byte(matchByte)); got != want {
					t.Fatalf("state %d, byte %#x, match byte %#x: price %d, want %d", state, b, matchByte, got, want)
				}
			}
		}
	}
}

// TestTreePrices checks treePrices against the sum of the bit prices along
// each symbol's path from the root (as encodeTree codes it), for the trees
// the encoder prices (3, 6 and 8 bits), whole and cut short, under uneven
// probabilities.
func TestTreePrices(t *testing.T) {
	for _, n := range []int{3, distSlotBits, 8} {
		probs := make([]prob, 1<<n)
		for i := range probs {
			probs[i] = prob(1 + (i*7919+n*104729)%(probOne-2))
		}
		for _, size := range []int{1 << n, 1<<n - 5} {
			out := make([]uint32, size)
			treePrices(probs, n, 1000, out)
			for v := range size {
				want := uint32(1000)
				for i, m := n-1, uint32(1); i >= 0; i-- {
					bit := uint32(v>>i) & 1
					want += bitPrice(probs[m], bit)
					m = m<<1 | bit
				}
				if out[v] != want {
					t.Fatalf("%d bits, %d symbols: symbol %d priced %d, want %d", n, size, v, out[v], want)
				}
			}
		}
	}
}
