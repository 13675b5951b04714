package deb

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz/lzma"

	"github.com/updeb/updeb/internal/testkit/testenv"
	"github.com/updeb/updeb/pkg/xzpar"
)

// Builders for hand-made .debs: every byte of the ar container and of the
// tar members is written here, so that a test can get any field wrong.

// arMem is one ar member. header, when set, replaces the generated header.
type arMem struct {
	name   string
	data   []byte
	header []byte
	noPad  bool // leave out the padding byte after odd-sized data
}

func buildAr(members ...arMem) []byte {
	b := []byte("!<arch>\n")
	for _, m := range members {
		h := m.header
		if h == nil {
			h = []byte(fmt.Sprintf("%-16s%-12d%-6d%-6d%-8s%-10d`\n", m.name, 0, 0, 0, "100644", len(m.data)))
		}
		b = append(b, h...)
		b = append(b, m.data...)
		if len(m.data)%2 == 1 && !m.noPad {
			b = append(b, '\n')
		}
	}
	return b
}

// tent is one tar entry. Zero fields get sensible values: mode 0644 (0755
// for directories), type '0', size len(data).
type tent struct {
	name, link string
	typ        byte
	mode       int64
	data       []byte
	size       int64 // when non-zero, the header's size instead of len(data)
	magic      string
	tweak      func(h *[512]byte) // after the checksum unless reChecksum
	reChecksum bool
}

// octal writes v as octal digits and a NUL, or base-256 when it does not fit.
func octal(b []byte, v int64) {
	s := fmt.Sprintf("%0*o", len(b)-1, v)
	if len(s) > len(b)-1 {
		clear(b)
		b[0] = 0x80
		for i := len(b) - 1; i > 0 && v > 0; i-- {
			b[i] = byte(v)
			v >>= 8
		}
		return
	}
	copy(b, s)
	b[len(b)-1] = 0
}

func tarHeaderBlock(e tent) [512]byte {
	var h [512]byte
	copy(h[0:100], e.name)
	mode := e.mode
	if mode == 0 {
		mode = 0o644
		if e.typ == tarDir {
			mode = 0o755
		}
	}
	octal(h[100:108], mode)
	octal(h[108:116], 0)
	octal(h[116:124], 0)
	size := e.size
	if size == 0 {
		size = int64(len(e.data))
	}
	octal(h[124:136], size)
	octal(h[136:148], 1723636800)
	typ := e.typ
	if typ == 0 {
		typ = tarReg
	}
	h[156] = typ
	copy(h[157:257], e.link)
	magic := e.magic
	if magic == "" {
		magic = "ustar  \x00" // GNU, as dpkg-deb writes
	}
	copy(h[257:265], magic)
	copy(h[265:297], "root")
	copy(h[297:329], "root")
	setChecksum(&h)
	if e.tweak != nil {
		e.tweak(&h)
		if e.reChecksum {
			setChecksum(&h)
		}
	}
	return h
}

func setChecksum(h *[512]byte) {
	copy(h[148:156], "        ")
	var sum int64
	for _, c := range h {
		sum += int64(c)
	}
	copy(h[148:156], fmt.Sprintf("%06o\x00 ", sum))
}

// buildTar writes entries and, unless noEnd, two zero blocks.
func buildTar(noEnd bool, entries ...tent) []byte {
	var b []byte
	for _, e := range entries {
		if len(e.name) > 100 && e.typ != tarLongNm {
			long := tent{name: "././@LongLink", typ: tarLongNm, data: append([]byte(e.name), 0)}
			h := tarHeaderBlock(long)
			b = append(b, h[:]...)
			b = append(b, padBlock(long.data)...)
			e.name = e.name[:100]
		}
		h := tarHeaderBlock(e)
		b = append(b, h[:]...)
		b = append(b, padBlock(e.data)...)
	}
	if !noEnd {
		b = append(b, make([]byte, 1024)...)
	}
	return b
}

func padBlock(d []byte) []byte {
	out := append([]byte(nil), d...)
	if r := len(d) % 512; r != 0 {
		out = append(out, make([]byte, 512-r)...)
	}
	return out
}

func gz(t testing.TB, data []byte) []byte {
	var b bytes.Buffer
	w, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	w.Write(data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// gzNamed is gzip with a file name and a comment in its header.
func gzNamed(t testing.TB, data []byte, name, comment string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Name, w.Comment = name, comment
	w.Write(data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func xzData(t testing.TB, data []byte) []byte {
	return encoded(t, data, func(w io.Writer) (io.WriteCloser, error) {
		return xzpar.NewWriter(w, xzpar.Config{BlockSize: 1 << 20, DictCap: 1 << 20, Workers: 1})
	})
}

// encoded is data written through the writer open makes.
func encoded[W io.WriteCloser](t testing.TB, data []byte, open func(io.Writer) (W, error)) []byte {
	var b bytes.Buffer
	w, err := open(&b)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func zst(t testing.TB, data []byte) []byte {
	w, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	return w.EncodeAll(data, nil)
}

// compressWith is in compressed by the real tool name (args make it write
// to stdout): what dpkg-deb no longer writes (bzip2, lzma) comes from the
// compressors that made such packages.
func compressWith(t testing.TB, in io.Reader, name string, args ...string) []byte {
	testenv.RequireTool(t, name)
	cmd := exec.Command(name, args...)
	cmd.Stdin = in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v: %s", name, args, err, stderr.Bytes())
	}
	return out
}

// bz2 is data compressed by bzip2 -9 (dpkg-deb -Zbzip2 wrote it so).
func bz2(t testing.TB, data []byte) []byte {
	return compressWith(t, bytes.NewReader(data), "bzip2", "-9c")
}

// lzmaAlone is data in the lzma format, as xz --format=lzma writes it
// (dpkg-deb -Zlzma ran liblzma's lzma_alone_encoder): no size in the
// header, an end marker.
func lzmaAlone(t testing.TB, data []byte) []byte {
	return compressWith(t, bytes.NewReader(data), "xz", "--format=lzma", "-c")
}

// lzmaSized is data in the lzma format with its size in the header and no
// end marker, as the old lzma-utils wrote a file.
func lzmaSized(t testing.TB, data []byte) []byte {
	return encoded(t, data, lzma.WriterConfig{DictCap: 1 << 20, SizeInHeader: true, Size: int64(len(data))}.NewWriter)
}

// zerosTar streams a tar of one file of size zeros, for bombs.
func zerosTar(size int64) io.Reader {
	hdr := tarHeaderBlock(tent{name: "./zeros", size: size})
	return io.MultiReader(bytes.NewReader(hdr[:]), io.LimitReader(zeros{}, (size+tarBlock-1)/tarBlock*tarBlock+2*tarBlock))
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// paxRecords are PAX header records of the keys and values kv.
func paxRecords(kv ...string) []byte {
	var b []byte
	for i := 0; i < len(kv); i += 2 {
		rec := " " + kv[i] + "=" + kv[i+1] + "\n"
		n := len(rec) + 1
		for len(fmt.Sprint(n))+len(rec) != n {
			n++
		}
		b = fmt.Appendf(b, "%d%s", n, rec)
	}
	return b
}

// paxExt is a PAX extended header for the entry after it.
func paxExt(kv ...string) tent {
	return tent{name: "./PaxHeaders/next", typ: tarPAX, data: paxRecords(kv...)}
}

// paxTar is a tar of the files (path: content), in a folder tree
// under ".", written by GNU tar --format=pax: an extended header with
// atime and ctime before each entry (pinned, as the mtimes, so that the
// corpus is the same bytes each time it is written).
func paxTar(t testing.TB, files map[string]string) []byte {
	dir := t.TempDir()
	testenv.WriteFiles(t, dir, files)
	return compressWith(t, nil, "tar", "--format=pax", "--owner=0", "--group=0", "--sort=name", "--mtime=@1723636800",
		"--pax-option=atime:=1723636800.5,ctime:=1723636800.5", "-C", dir, "-cf", "-", ".")
}

// paxControlTar is control.tar of the control file ctl, written by GNU tar
// --format=pax.
func paxControlTar(t testing.TB, ctl string) []byte {
	return paxTar(t, map[string]string{"control": ctl})
}

const hostileControl = "Package: hostile\nVersion: 1.0-1\nArchitecture: all\nMaintainer: updeb tests <tests@updeb.invalid>\n" +
	"Description: a package for the hostile .deb corpus\n It installs one file.\n"

// hCtlTar is control.tar with the root directory and a control file.
func hCtlTar(ctl string, more ...tent) []byte {
	return buildTar(false, append(ctlEntries(ctl), more...)...)
}

// ctlEntries are control.tar's root directory and the control file ctl.
func ctlEntries(ctl string) []tent {
	return []tent{{name: "./", typ: tarDir}, {name: "./control", data: []byte(ctl)}}
}

// dataEntries are a small, valid data.tar's entries.
func dataEntries(more ...tent) []tent {
	return append([]tent{{name: "./", typ: tarDir}, {name: "./usr/", typ: tarDir}, {name: "./usr/share/", typ: tarDir},
		{name: "./usr/share/hostile/", typ: tarDir}, {name: "./usr/share/hostile/file", data: []byte("payload\n")}}, more...)
}

// deb assembles debian-binary, control.tar.gz and data.tar.gz.
func hdeb(t testing.TB, control, data []byte) []byte {
	return buildAr(arMem{name: "debian-binary", data: []byte("2.0\n")},
		arMem{name: "control.tar.gz", data: gz(t, control)}, arMem{name: "data.tar.gz", data: gz(t, data)})
}

// withControl is a valid .deb whose control file is ctl.
func withControl(t testing.TB, ctl string) []byte {
	return hdeb(t, hCtlTar(ctl), buildTar(false, dataEntries()...))
}

// withData is a valid .deb whose data.tar holds entries.
func withData(t testing.TB, noEnd bool, entries ...tent) []byte {
	return hdeb(t, hCtlTar(hostileControl), buildTar(noEnd, entries...))
}

// setField replaces (or with value "" removes, or appends) a field of the
// valid control file.
func setField(name, value string) string {
	var lines []string
	found := false
	for _, l := range strings.SplitAfter(hostileControl, "\n") {
		if strings.HasPrefix(l, name+":") {
			found = true
			if value != "" {
				lines = append(lines, name+": "+value+"\n")
			}
			continue
		}
		if l != "" {
			lines = append(lines, l)
		}
	}
	if !found {
		lines = append(lines, name+": "+value+"\n")
	}
	return strings.Join(lines, "")
}

// bombZstd is a data.tar.zst of one frame (dpkg reads one) holding a tar
// header for a file of size zeros, the zeros and the end-of-archive
// blocks: a raw block for the header, then RLE blocks of 128 KiB of zeros,
// four bytes each.
func bombZstd(t testing.TB, size int64) []byte {
	hdr := tarHeaderBlock(tent{name: "./zeros", size: size})
	// Magic; no checksum or content size; a 128 KiB window.
	out := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 7 << 3}
	block := func(typ byte, n int64, last bool) {
		h := uint32(n)<<3 | uint32(typ)<<1
		if last {
			h |= 1
		}
		out = append(out, byte(h), byte(h>>8), byte(h>>16))
	}
	block(0, tarBlock, false)
	out = append(out, hdr[:]...)
	for zeros := (size+tarBlock-1)/tarBlock*tarBlock + 2*tarBlock; zeros > 0; {
		n := min(zeros, 128<<10)
		zeros -= n
		block(1, n, zeros == 0)
		out = append(out, 0)
	}
	return out
}

// xzWithEndMarker is an .xz file of data (at most 2 MiB, compressing to at
// most 64 KiB) whose one LZMA2 chunk ends with an LZMA end-of-payload
// marker, which LZMA2 forbids (xz-utils' bad-1-lzma2-7.xz): no check and no
// sizes in the block header, so only the LZMA2 layer can notice.
func xzWithEndMarker(t testing.TB, data []byte) []byte {
	var raw bytes.Buffer
	props := lzma.Properties{LC: 3, LP: 0, PB: 2}
	w, err := lzma.WriterConfig{Properties: &props, DictCap: 1 << 20, SizeInHeader: true, Size: int64(len(data)), EOSMarker: true}.NewWriter(&raw)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	lz := raw.Bytes()[13:] // after the .lzma header
	u, c := len(data)-1, len(lz)-1
	chunk := append([]byte{0xe0 | byte(u>>16), byte(u >> 8), byte(u), byte(c >> 8), byte(c), props.Code()}, lz...)
	chunk = append(chunk, 0) // end of LZMA2 data
	crc := func(b []byte) []byte { return binary.LittleEndian.AppendUint32(nil, crc32.ChecksumIEEE(b)) }
	flags := []byte{0, 0} // check: none
	out := append([]byte{0xfd, '7', 'z', 'X', 'Z', 0}, flags...)
	out = append(out, crc(flags)...)
	bh := []byte{2, 0, 0x21, 1, 22, 0, 0, 0} // size byte, flags, LZMA2, props size, 8 MiB, padding
	bh = append(bh, crc(bh)...)
	out = append(out, bh...)
	out = append(out, chunk...)
	unpadded := uint64(len(bh) + len(chunk)) // block header and compressed data; no check
	for n := len(chunk); n%4 != 0; n++ {
		out = append(out, 0)
	}
	idx := []byte{0, 1}
	idx = binary.AppendUvarint(idx, unpadded)
	idx = binary.AppendUvarint(idx, uint64(len(data)))
	for len(idx)%4 != 0 {
		idx = append(idx, 0)
	}
	idx = append(idx, crc(idx)...)
	out = append(out, idx...)
	footer := append(binary.LittleEndian.AppendUint32(nil, uint32(len(idx)/4-1)), flags...)
	out = append(out, crc(footer)...)
	out = append(out, footer...)
	return append(out, 'Y', 'Z')
}
