package xzpar

import (
	"bytes"
	"errors"
	"testing"

	"github.com/updeb/updeb/internal/testkit/testenv"
)

// Blocks and WriteStream take a stream apart and put it together again,
// byte for byte; blocks of several streams make one stream xz decodes to
// their contents in order.
func TestBlocksReassemble(t *testing.T) {
	testenv.RequireTool(t, "xz")
	text := textData(300_000)
	whole := compress(t, text, Config{BlockSize: 64 << 10})
	blocks, err := Blocks(whole)
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 5 || blocks[4].UncompressedSize != 300_000-4*(64<<10) {
		t.Fatalf("%d blocks, last of %d bytes", len(blocks), blocks[len(blocks)-1].UncompressedSize)
	}
	var again bytes.Buffer
	if err := WriteStream(&again, blocks); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Bytes(), whole) {
		t.Fatal("WriteStream(Blocks(s)) differs from s")
	}

	// EncodeBlock gives NewWriter's block for the same bytes.
	first, err := EncodeBlock(text[:64<<10], Config{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.Raw, blocks[0].Raw) {
		t.Fatal("EncodeBlock differs from NewWriter's first block")
	}

	// Mixed: a new block between blocks of the old stream.
	extra := []byte("a block of its own\n")
	mid, err := EncodeBlock(extra, Config{})
	if err != nil {
		t.Fatal(err)
	}
	var mixed bytes.Buffer
	if err := WriteStream(&mixed, []Block{blocks[0], mid, blocks[1]}); err != nil {
		t.Fatal(err)
	}
	want := append(append(append([]byte(nil), text[:64<<10]...), extra...), text[64<<10:128<<10]...)
	if got := testenv.Run(t, "xz", "-dc", writeTemp(t, "mixed.xz", mixed.Bytes())); !bytes.Equal(got, want) {
		t.Fatalf("xz -dc of the mixed stream: %d bytes, want %d", len(got), len(want))
	}
	if got := decodeGo(t, mixed.Bytes()); !bytes.Equal(got, want) {
		t.Fatal("decoding the mixed stream")
	}
	var none bytes.Buffer
	if err := WriteStream(&none, nil); err != nil || len(testenv.Run(t, "xz", "-dc", writeTemp(t, "empty.xz", none.Bytes()))) != 0 {
		t.Fatalf("a stream of no blocks: %v", err)
	}
	if _, err := EncodeBlock(nil, Config{}); err == nil {
		t.Fatal("EncodeBlock of nothing: no error")
	}
}

// Streams that are damaged, or not as NewWriter writes them, are refused.
func TestBlocksRefuses(t *testing.T) {
	testenv.RequireTool(t, "xz")
	text := textData(100_000)
	good := compress(t, text, Config{BlockSize: 32 << 10})
	crc32Stream := testenv.Run(t, "xz", "-C", "crc32", "-c", writeTemp(t, "t", text))
	cases := map[string][]byte{
		"empty":          nil,
		"truncated":      good[:len(good)-1],
		"trailing byte":  append(append([]byte(nil), good...), 0),
		"CRC32 check":    crc32Stream,
		"header flipped": flip(good, 20),
		"index flipped":  flip(good, len(good)-20),
		"footer flipped": flip(good, len(good)-6),
		"two streams":    append(append([]byte(nil), good...), good...),
		// An index record near 2^63 bytes: rounded up to four, the size
		// overflows int64 (this panicked).
		"record of 2^63-1 bytes": hugeRecordStream(),
	}
	for name, data := range cases {
		if _, err := Blocks(data); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: %v, want ErrFormat", name, err)
		}
	}
}

// WriteStream refuses, before writing a byte, a Block that Blocks or
// EncodeBlock did not return as it is: its index record would not describe
// it, and the stream would be one that xz refuses.
func TestWriteStreamRefusesForeignBlocks(t *testing.T) {
	good, err := EncodeBlock([]byte("some data to compress\n"), Config{})
	if err != nil {
		t.Fatal(err)
	}
	cut := good
	cut.Raw = cut.Raw[:len(cut.Raw)-4]
	for name, b := range map[string]Block{
		"zero":          {},
		"made by hand":  {Raw: good.Raw, UncompressedSize: good.UncompressedSize},
		"Raw cut":       cut,
		"negative size": {Raw: good.Raw, UncompressedSize: -1, unpadded: good.unpadded},
	} {
		var out bytes.Buffer
		if err := WriteStream(&out, []Block{good, b}); err == nil {
			t.Errorf("%s: WriteStream accepted it (%d bytes written)", name, out.Len())
		} else if out.Len() != 0 {
			t.Errorf("%s: %v, after writing %d bytes", name, err, out.Len())
		}
	}
}

// hugeRecordStream is a stream whose index (valid, CRC32 and all) lists one
// block of the largest unpadded size the format allows.
func hugeRecordStream() []byte {
	idx := index([]indexRecord{{unpadded: maxVLI, uncompressed: 5}})
	return concat(streamHeader(), make([]byte, 16), idx, streamFooter(len(idx)))
}

func flip(b []byte, i int) []byte {
	out := append([]byte(nil), b...)
	out[i] ^= 0x40
	return out
}

// FuzzBlocks: Blocks never panics, and what it accepts WriteStream rebuilds
// byte for byte.
func FuzzBlocks(f *testing.F) {
	f.Add(compress(f, textData(5000), Config{BlockSize: 1000}))
	f.Add(compress(f, nil, Config{}))
	f.Fuzz(func(t *testing.T, data []byte) {
		blocks, err := Blocks(data)
		if err != nil {
			return
		}
		var b bytes.Buffer
		if err := WriteStream(&b, blocks); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b.Bytes(), data) {
			t.Fatalf("accepted a stream WriteStream does not rebuild: % x", data)
		}
	})
}
