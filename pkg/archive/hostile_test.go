package archive

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"os/exec"
	"path"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/updeb/updeb/internal/testkit/testenv"
)

// TestHostile builds hostile archives in the test and checks each is refused
// with its sentinel and its exact message.
func TestHostile(t *testing.T) {
	okFile := file("ok", "fine")
	twoZeroBlocks := make([]byte, 1024)
	helmTar := tarBytes(t, tent{name: "linux-amd64/", typ: tar.TypeDir, mode: 0o755}, file("linux-amd64/helm", strings.Repeat("h", 2000)), file("linux-amd64/LICENSE", "Apache"))
	helmGz := gzBytes(t, helmTar)
	helmXz := xzBytes(t, helmTar)
	badCRC := bytes.Clone(helmGz)
	badCRC[len(badCRC)-8] ^= 0xff // the gzip trailer's CRC-32
	badXz := bytes.Clone(helmXz)
	badXz[len(badXz)/2] ^= 0xff
	// Headers of valid xz that xz -d reads and xzpar does not: a delta
	// filter before LZMA2 (the block header at byte 12, rewritten to the
	// same size), and the reserved check type 0x02 (xz -d warns and
	// decodes). xzpar refuses at the header; the data after it is not made
	// to match (testdata/hostile/streams has a whole delta .tar.xz).
	deltaXz := bytes.Clone(helmXz)
	copy(deltaXz[12:], []byte{0x02, 0x01, 0x03, 0x01, 0x00, 0x21, 0x01, helmXz[16]})
	binary.LittleEndian.PutUint32(deltaXz[20:], crc32.ChecksumIEEE(deltaXz[12:20]))
	// A gzip member with a file name (gzip FILE stores one), cut inside it.
	var named bytes.Buffer
	zw := gzip.NewWriter(&named)
	zw.Name = "linux-amd64.tar"
	if _, err := zw.Write(helmTar); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	cutInName := named.Bytes()[:15]
	named.Reset()
	zw.Reset(&named)
	zw.Name = strings.Repeat("n", 600) + ".tar"
	if _, err := zw.Write(helmTar); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	longName := named.Bytes()
	reservedFlag := gzBytes(t, helmTar)
	reservedFlag[3] |= 0x20
	check2Xz := bytes.Clone(helmXz)
	check2Xz[7] = 0x02
	binary.LittleEndian.PutUint32(check2Xz[8:], crc32.ChecksumIEEE(check2Xz[6:8]))
	stored := "hello world"
	zipLie := func(declared uint64) zent {
		return zent{raw: &zip.FileHeader{Name: "bin/tool", Method: zip.Store, CRC32: crc32.ChecksumIEEE([]byte(stored)),
			CompressedSize64: uint64(len(stored)), UncompressedSize64: declared}, body: stored}
	}
	zipBadCRC := zent{raw: zipBadHeader("bin/tool", stored), body: stored}
	// A zip whose local header of bin/tool (stored, sizes in the header;
	// or deflated, with a data descriptor) says otherwise than its central
	// directory record.
	u16, u32 := binary.LittleEndian.PutUint16, binary.LittleEndian.PutUint32
	zipStored := zipBytes(t, zent{name: "README", body: "readme"}, storedEnt("bin/tool", stored, nil))
	zipDeflated := zipBytes(t, zent{name: "README", body: "readme"}, zent{name: "bin/tool", body: stored})
	localLie := func(zipData []byte, patch func(h []byte)) []byte {
		return patchZip(t, zipData, "PK\x03\x04", "bin/tool", patch)
	}
	endLie := func(zipData []byte, by int) []byte { // the end record's directory size, changed by by
		zipData = bytes.Clone(zipData)
		e := zipData[len(zipData)-22:]
		u32(e[12:], uint32(int(binary.LittleEndian.Uint32(e[12:]))+by))
		return zipData
	}
	// archive/zip writes no data for a name ending in "/": d_ is renamed.
	zipDirData := patchZip(t, zipBytes(t, zent{name: "bin/tool", body: "x"}, zipDir("d_", "hidden")), "PK\x03\x04", "d_", func(h []byte) { h[31] = '/' })
	zipDirData = patchZip(t, zipDirData, "PK\x01\x02", "d_", func(c []byte) { c[47] = '/' })
	zip64Stored := zipBytes(t, storedEnt("bin/tool", stored, zip64SizesField(uint64(len(stored)), uint64(len(stored)))))
	zip64Local := func(usize uint64) []byte { // local sizes in the zip64 field, as zip -fz writes them
		return localLie(zip64Stored, func(h []byte) {
			u32(h[18:], 0xffffffff)
			u32(h[22:], 0xffffffff)
			binary.LittleEndian.PutUint64(h[30+8+4:], usize)
		})
	}

	tests := []struct {
		name     string
		kind     Kind
		data     []byte
		want     []string
		lim      Limits
		sentinel error
		msg      string
	}{
		{"dotdot unwanted", Tar, tarBytes(t, okFile, file("../evil", "x")), []string{"ok"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "../evil": name contains a ".." component (path traversal)`},
		{"dotdot inside a longer name", TarGz, gzBytes(t, tarBytes(t, file("a/../../etc/passwd", "x"))), []string{"etc/passwd"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "a/../../etc/passwd": name contains a ".." component (path traversal)`},
		{"absolute name", Tar, tarBytes(t, file("/etc/passwd", "x")), []string{"etc/passwd"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "/etc/passwd": absolute name (it would extract outside the archive's folder)`},
		{"symlink escape", Tar, tarBytes(t, okFile, tent{name: "bin/link", typ: tar.TypeSymlink, link: "../../etc/shadow"}), []string{"ok"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "bin/link": symlink to "../../etc/shadow" leaves the archive root`},
		{"absolute symlink", Tar, tarBytes(t, okFile, tent{name: "bin/sh", typ: tar.TypeSymlink, link: "/bin/sh"}), []string{"ok"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "bin/sh": symlink to "/bin/sh" is absolute: it leaves the archive root`},
		{"symlink chain escape", Tar, tarBytes(t, okFile, tent{name: "a/l", typ: tar.TypeSymlink, link: ".."}, tent{name: "a/m", typ: tar.TypeSymlink, link: "l/.."}), []string{"ok"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "a/m": symlink to "l/.." leaves the archive root through other symlinks`},
		{"symlink loop", Tar, tarBytes(t, okFile, tent{name: "x", typ: tar.TypeSymlink, link: "y"}, tent{name: "y", typ: tar.TypeSymlink, link: "x"}), []string{"ok"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "x": symlink to "y" is part of a symlink loop`},
		{"file through a symlinked folder", Tar, tarBytes(t, file("sub/f", "good"), tent{name: "d", typ: tar.TypeSymlink, link: "sub"}, file("d/f", "evil")), []string{"sub/f"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "d/f": is inside "d", which the archive holds as a symlink to "sub": extracting it would write through the link, into "sub"`},
		{"file through a symlink that comes after it", Tar, tarBytes(t, file("a/d/f", "evil"), tent{name: "a/d", typ: tar.TypeSymlink, link: "../sub"}, file("sub/f", "good")), []string{"sub/f"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "a/d/f": is inside "a/d", which the archive holds as a symlink to "../sub": extracting it would write through the link, into "sub"`},
		{"file inside a file", Tar, tarBytes(t, file("a", "x"), file("a/b", "y")), []string{"a/b"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "a/b": is inside "a", which the archive holds as a regular file: no file system holds that: extracting it fails`},
		{"name longer than a path", Tar, tarBytes(t, okFile, file(strings.Repeat("a/", 2100)+"b", "x")), []string{"ok"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "` + strings.Repeat("a/", 128) + `"... (4201 bytes): name is 4201 bytes long, longer than any path Linux takes (4095)`},
		{"name with a component longer than a file name", Tar, tarBytes(t, okFile, file("d/"+strings.Repeat("é", 150), "x")), []string{"ok"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "d/` + strings.Repeat("é", 127) + `"... (302 bytes): name has a component of 300 bytes, longer than any file name a file system holds (255)`},
		{"symlink target longer than a path", Tar, tarBytes(t, okFile, tent{name: "l", typ: tar.TypeSymlink, link: strings.Repeat("x/", 2100)}), []string{"ok"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "l": symlink to "` + strings.Repeat("x/", 128) + `"... (4200 bytes) has a target of 4200 bytes, longer than any symlink Linux takes (4095)`},
		{"hardlink target longer than a path", Tar, tarBytes(t, okFile, tent{name: "h", typ: tar.TypeLink, link: strings.Repeat("x/", 2100)}), []string{"ok"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "h": hardlink to "` + strings.Repeat("x/", 128) + `"... (4200 bytes): target name is 4200 bytes long, longer than any path Linux takes (4095)`},
		{"hardlink escape", Tar, tarBytes(t, okFile, tent{name: "h", typ: tar.TypeLink, link: "../../etc/shadow"}), []string{"ok"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "h": hardlink to "../../etc/shadow": target name contains a ".." component (path traversal)`},
		{"device node unwanted", Tar, tarBytes(t, okFile, tent{name: "dev/sda", typ: tar.TypeBlock}), []string{"ok"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "dev/sda": is a device, fifo or socket; release archives hold none`},
		{"device node wanted", Tar, tarBytes(t, tent{name: "kubelet", typ: tar.TypeChar}), []string{"kubelet"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "kubelet": is a device, fifo or socket; release archives hold none`},
		{"fifo", Tar, tarBytes(t, tent{name: "pipe", typ: tar.TypeFifo}), []string{"ok"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "pipe": is a device, fifo or socket; release archives hold none`},
		{"duplicate wanted", Tar, tarBytes(t, file("bin/x", "good"), file("./bin/x", "evil")), []string{"bin/x"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "./bin/x": duplicate entry: "bin/x" appears more than once`},
		{"duplicate unwanted", Tar, tarBytes(t, okFile, file("y", "1"), file("y", "2")), []string{"ok"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "y": duplicate entry: "y" appears more than once`},
		{"wanted symlink", Tar, tarBytes(t, file("bin/x-1.0", "x"), tent{name: "bin/x", typ: tar.TypeSymlink, link: "x-1.0"}), []string{"bin/x"}, Limits{}, ErrNotRegular,
			`archive ARCHIVE: entry "bin/x": wanted as a regular file, but it is a symlink to "x-1.0"`},
		{"forward hardlink", Tar, tarBytes(t, tent{name: "bin/x", typ: tar.TypeLink, link: "bin/x-1.0"}, file("bin/x-1.0", "x")), []string{"bin/x"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "bin/x": hardlink to "bin/x-1.0", which is not an earlier regular file of the archive: no entry before it has that name (a hardlink to a later entry or to a file outside the archive)`},
		{"unwanted forward hardlink", Tar, tarBytes(t, okFile, tent{name: "h", typ: tar.TypeLink, link: "later"}, file("later", "x")), []string{"ok"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "h": hardlink to "later", which is not an earlier regular file of the archive: no entry before it has that name (a hardlink to a later entry or to a file outside the archive)`},
		{"hardlink to itself", Tar, tarBytes(t, tent{name: "bin/x", typ: tar.TypeLink, link: "./bin/x"}), []string{"bin/x"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "bin/x": hardlink to "./bin/x", which is not an earlier regular file: it is the hardlink itself`},
		{"hardlink to a symlink", Tar, tarBytes(t, file("x-1.0", "x"), tent{name: "x", typ: tar.TypeSymlink, link: "x-1.0"}, tent{name: "h", typ: tar.TypeLink, link: "x"}), []string{"h"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "h": hardlink to "x", which is not a regular file but a symlink`},
		{"hardlink to a directory", Tar, tarBytes(t, tent{name: "d/", typ: tar.TypeDir}, tent{name: "h", typ: tar.TypeLink, link: "d"}), []string{"h"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "h": hardlink to "d", which is not a regular file but a directory or another hardlink (a chain: tar links every name to the one that holds the data)`},
		{"hardlink chain", Tar, tarBytes(t, file("a", "x"), tent{name: "b", typ: tar.TypeLink, link: "a"}, tent{name: "c", typ: tar.TypeLink, link: "b"}), []string{"c"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "c": hardlink to "b", which is not a regular file but a directory or another hardlink (a chain: tar links every name to the one that holds the data)`},
		{"hardlink absolute", Tar, tarBytes(t, file("a", "x"), tent{name: "h", typ: tar.TypeLink, link: "/etc/shadow"}), []string{"a"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "h": hardlink to "/etc/shadow": target absolute name (it would extract outside the archive's folder)`},
		{"hardlink to a file too big", TarGz, gzBytes(t, tarBytes(t, file("big", strings.Repeat("b", 2000)), tent{name: "h", typ: tar.TypeLink, link: "big"})), []string{"h"}, Limits{MaxFileSize: 1000}, ErrLimit,
			`archive ARCHIVE: entry "h": hardlink to "big": size 2000 bytes is above the 1000-byte limit for one file (Limits.MaxFileSize)`},
		{"file named as a folder", Tar, slashName(t, file("x", "data")), []string{"x"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "x/": is a regular file, but its name ends in "/", which names a directory (GNU tar extracts a directory, and reads its data as the next entries)`},
		{"symlink with data: GNU tar skips it, archive/tar reads it as entries", Tar, withData(t, tent{name: "l", typ: tar.TypeSymlink, link: "x"}, tarBytes(t, file("bin/tool", "evil"))[:1024]), []string{"bin/tool"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "l": is a symlink with a size of 1024 bytes: tar readers disagree on whether data follows it, and would read different entries after it`},
		{"wanted hardlink with data", Tar, append(tarBytes(t, okFile)[:1024], withData(t, tent{name: "bin/tool", typ: tar.TypeLink, link: "ok"}, tarBytes(t, file("evil", "x"))[:1024])...), []string{"bin/tool"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "bin/tool": is a hardlink with a size of 1024 bytes: tar readers disagree on whether data follows it, and would read different entries after it`},
		{"directory with data", TarGz, gzBytes(t, withData(t, tent{name: "d/", typ: tar.TypeDir}, tarBytes(t, file("bin/tool", "evil"))[:1024])), []string{"bin/tool"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "d/": is a directory with a size of 1024 bytes: tar readers disagree on whether data follows it, and would read different entries after it`},
		{"pax global header naming every entry", Tar, append(paxGlobal(t, map[string]string{"comment": "v1", "path": "../evil"}), tarBytes(t, file("bin/tool", "x"))...), []string{"bin/tool"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: a pax global header sets path to "../evil", which GNU tar applies to every later entry and updeb's reader ignores`},
		{"pax global header sizing every entry", TarGz, gzBytes(t, append(paxGlobal(t, map[string]string{"size": "0"}), tarBytes(t, file("bin/tool", "x"))...)), []string{"bin/tool"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: a pax global header sets size to "0", which GNU tar applies to every later entry and updeb's reader ignores`},
		{"wanted dir", Tar, tarBytes(t, tent{name: "linux-amd64/", typ: tar.TypeDir}), []string{"linux-amd64"}, Limits{}, ErrNotRegular,
			`archive ARCHIVE: entry "linux-amd64/": wanted as a regular file, but it is a directory`},
		{"wanted file too big", TarGz, helmGz, []string{"linux-amd64/helm"}, Limits{MaxFileSize: 1000}, ErrLimit,
			`archive ARCHIVE: entry "linux-amd64/helm": size 2000 bytes is above the 1000-byte limit for one file (Limits.MaxFileSize)`},
		{"too many entries", TarGz, helmGz, []string{"linux-amd64/helm"}, Limits{MaxEntries: 2}, ErrLimit,
			`archive ARCHIVE: entry "linux-amd64/LICENSE": more than 2 entries (Limits.MaxEntries)`},
		{"total limit", TarGz, helmGz, []string{"linux-amd64/LICENSE"}, Limits{MaxTotal: 2048}, ErrLimit,
			`archive ARCHIVE: entry "linux-amd64/helm": decompressed data exceeds 2048 bytes (Limits.MaxTotal): refusing a possible decompression bomb`},
		{"truncated tar.gz", TarGz, helmGz[:len(helmGz)/2], []string{"linux-amd64/LICENSE"}, Limits{}, ErrCorrupt, // cut in the zero padding after the last entry
			`archive ARCHIVE: truncated: the data ends early: unexpected EOF`},
		{"truncated tar.xz", TarXz, helmXz[:len(helmXz)-30], []string{"linux-amd64/LICENSE"}, Limits{}, ErrCorrupt,
			`archive ARCHIVE: truncated: the data ends early: xzpar: corrupt xz data at byte 194: truncated in block 1 padding and check: unexpected EOF`},
		{"tar data shorter than its header says", Tar, helmTar[:512*3+1000], []string{"linux-amd64/helm"}, Limits{}, ErrCorrupt,
			`archive ARCHIVE: entry "linux-amd64/helm": truncated: the data ends early: unexpected EOF`},
		{"gzip CRC", TarGz, badCRC, []string{"linux-amd64/helm"}, Limits{}, ErrCorrupt,
			`archive ARCHIVE: corrupt data: gzip: invalid checksum`},
		{"xz corrupt", TarXz, badXz, []string{"linux-amd64/helm"}, Limits{}, ErrCorrupt, ""},
		{"xz with a delta filter", TarXz, deltaXz, []string{"linux-amd64/helm"}, Limits{}, ErrCorrupt,
			`archive ARCHIVE: valid xz data that updeb's reader does not decode (xz -d does), not a corrupt download: xzpar: unsupported xz data at byte 12: block 1 header: filter 0x03 (delta): this reader decodes only x86 BCJ (0x04) and LZMA2 (0x21)`},
		{"xz with a reserved check type", TarXz, check2Xz, []string{"linux-amd64/helm"}, Limits{}, ErrCorrupt,
			`archive ARCHIVE: valid xz data that updeb's reader does not decode (xz -d does), not a corrupt download: xzpar: unsupported xz data at byte 0: check type 0x02: this reader verifies none (0x00), CRC32 (0x01), CRC64 (0x04) and SHA-256 (0x0a)`},
		{"gzip cut in the file name of its header", TarGz, cutInName, []string{"linux-amd64/helm"}, Limits{}, ErrCorrupt,
			`archive ARCHIVE: truncated: the file ends inside the gzip header: gzip: member 1 ends inside its header: unexpected EOF`},
		{"gzip cut in the file name of its second member", TarGz, slices.Concat(helmGz, cutInName), []string{"linux-amd64/helm"}, Limits{}, ErrCorrupt,
			`archive ARCHIVE: truncated: the data ends early: gzip: member 2 ends inside its header: unexpected EOF`},
		{"gzip file name longer than 511 bytes", TarGz, longName, []string{"linux-amd64/helm"}, Limits{}, ErrCorrupt,
			`archive ARCHIVE: a gzip header updeb's reader does not take: gzip: the header of member 1: its file name is longer than 511 bytes, which Go's gzip reader refuses (gzip -d and zlib skip it; neither gzip nor dpkg-deb writes one that long)`},
		{"second gzip member with a reserved flag", TarGz, slices.Concat(helmGz, reservedFlag), []string{"linux-amd64/helm"}, Limits{}, ErrCorrupt,
			`archive ARCHIVE: corrupt data: gzip: the header of member 2: reserved header flags 0x20 are set (gzip -d refuses them too)`},
		{"garbage after gzip", TarGz, append(bytes.Clone(helmGz), "this is not a gzip member"...), []string{"linux-amd64/helm"}, Limits{}, ErrCorrupt,
			`archive ARCHIVE: corrupt data: gzip: data after the last member that is neither another member nor zero padding (gzip -d ignores it: content a reviewer would not see)`},
		// gzip -d stops at the zeros ("trailing garbage ignored"), Python reads the member after them.
		{"gzip member after zero padding", TarGz, slices.Concat(helmGz, make([]byte, 512), gzBytes(t, tarBytes(t, file("linux-amd64/helm", "evil")))), []string{"linux-amd64/helm"}, Limits{}, ErrCorrupt,
			`archive ARCHIVE: corrupt data: gzip: data after the last member that is neither another member nor zero padding (gzip -d ignores it: content a reviewer would not see)`},
		{"garbage after gzip zero padding", TarGz, slices.Concat(helmGz, make([]byte, 40000), []byte("hidden")), []string{"linux-amd64/helm"}, Limits{}, ErrCorrupt,
			`archive ARCHIVE: corrupt data: gzip: data after the last member that is neither another member nor zero padding (gzip -d ignores it: content a reviewer would not see)`},
		{"data after the tar end marker", Tar, append(append(bytes.Clone(helmTar), twoZeroBlocks...), "hidden"...), []string{"linux-amd64/helm"}, Limits{}, ErrCorrupt,
			`archive ARCHIVE: non-zero data after the tar end-of-archive marker`},
		// The name (and so the kind) says one format, the bytes another: tar and bsdtar go by the bytes.
		{"plain tar read as tar.gz", TarGz, helmTar, []string{"linux-amd64/helm"}, Limits{}, ErrCorrupt,
			`archive ARCHIVE: the file is a plain tar archive, not tar.gz, the kind it is read as (tar and bsdtar tell the format by the bytes): write kind: tar`},
		{"xz read as tar.gz", Tgz, helmXz, []string{"linux-amd64/helm"}, Limits{}, ErrCorrupt,
			`archive ARCHIVE: the file is xz data, not tar.gz, the kind it is read as (tar and bsdtar tell the format by the bytes): write kind: tar.xz`},
		{"gzip read as tar.xz", TarXz, helmGz, []string{"linux-amd64/helm"}, Limits{}, ErrCorrupt,
			`archive ARCHIVE: the file is gzip data, not tar.xz, the kind it is read as (tar and bsdtar tell the format by the bytes): write kind: tar.gz`},
		{"small gzip read as tar", Tar, helmGz, []string{"linux-amd64/helm"}, Limits{}, ErrCorrupt, // not "truncated"
			`archive ARCHIVE: the file is gzip data, not tar, the kind it is read as (tar and bsdtar tell the format by the bytes): write kind: tar.gz`},
		{"xz read as tar", Tar, xzBytes(t, bytes.Repeat(helmTar, 4)), []string{"linux-amd64/helm"}, Limits{}, ErrCorrupt,
			`archive ARCHIVE: the file is xz data, not tar, the kind it is read as (tar and bsdtar tell the format by the bytes): write kind: tar.xz`},
		{"zstd read as tar.gz", TarGz, append([]byte{0x28, 0xb5, 0x2f, 0xfd}, helmTar...), []string{"linux-amd64/helm"}, Limits{}, ErrCorrupt,
			`archive ARCHIVE: the file is zstd data, not tar.gz, the kind it is read as (tar and bsdtar tell the format by the bytes): updeb does not unpack zstd data`},
		{"bzip2 read as tar.xz", TarXz, append([]byte("BZh91AY&SY"), helmTar...), []string{"linux-amd64/helm"}, Limits{}, ErrCorrupt,
			`archive ARCHIVE: the file is bzip2 data, not tar.xz, the kind it is read as (tar and bsdtar tell the format by the bytes): updeb does not unpack bzip2 data`},
		{"a bare binary read as tar.gz", TarGz, append([]byte("\x7fELF\x02\x01\x01"), make([]byte, 100)...), []string{"linux-amd64/helm"}, Limits{}, ErrCorrupt,
			`archive ARCHIVE: the file is an ELF executable, not tar.gz, the kind it is read as (tar and bsdtar tell the format by the bytes): write kind: raw`},
		{"not gzip, nor any format known", TarGz, []byte("<html>404</html>"), []string{"linux-amd64/helm"}, Limits{}, ErrCorrupt,
			`archive ARCHIVE: not gzip data: gzip: the header of member 1: not gzip (it starts with "<htm")`},
		{"empty tar.xz", TarXz, nil, []string{"x"}, Limits{}, ErrCorrupt,
			`archive ARCHIVE: truncated: the file ends inside the xz header: xzpar: corrupt xz data at byte 0: truncated in the stream header: unexpected EOF`},
		{"missing member", TarGz, helmGz, []string{"helm", "linux-amd64/LICENSE", "README.md"}, Limits{}, ErrMissing,
			`archive ARCHIVE: not found: "helm", "README.md"; the archive holds "linux-amd64/helm", "linux-amd64/LICENSE"`},
		{"zip dotdot", Zip, zipBytes(t, zent{name: "ok", body: "x"}, zent{name: "../evil", body: "x"}), []string{"ok"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "../evil": name contains a ".." component (path traversal)`},
		{"zip newline", Zip, zipBytes(t, zent{name: "ok", body: "x"}, zent{name: "a\nb", body: "x"}), []string{"ok"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "a\nb": name contains a newline, which dpkg refuses in a file name`},
		{"zip drive letter", Zip, zipBytes(t, zent{name: "C:/Windows/evil", body: "x"}), []string{"ok"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "C:/Windows/evil": name starts with a drive letter (a Windows absolute path, outside the archive's folder)`},
		{"zip absolute", Zip, zipBytes(t, zent{name: "/etc/cron.d/x", body: "x"}), []string{"ok"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "/etc/cron.d/x": absolute name (it would extract outside the archive's folder)`},
		{"zip symlink escape", Zip, zipBytes(t, zent{name: "ok", body: "x"}, zent{name: "l", body: "../../../root/.ssh", mode: os.ModeSymlink | 0o777}), []string{"ok"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "l": symlink to "../../../root/.ssh" leaves the archive root`},
		{"zip file through a symlinked folder", Zip, zipBytes(t, zent{name: "sub/f", body: "good"}, zent{name: "d", body: "sub", mode: os.ModeSymlink | 0o777}, zent{name: "d/f", body: "evil"}), []string{"sub/f"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "d/f": is inside "d", which the archive holds as a symlink to "sub": extracting it would write through the link, into "sub"`},
		{"zip Unicode path field naming the entry otherwise", Zip, zipBytes(t, zent{name: "bin/tool", body: "x", extra: unicodePathField("bin/tool", "../../evil")}), []string{"bin/tool"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "bin/tool": its Info-ZIP Unicode path field names it "../../evil": unzip extracts it under that name, updeb reads the entry's own`},
		{"zip wanted symlink", Zip, zipBytes(t, zent{name: "bin/tool", body: "tool-1", mode: os.ModeSymlink | 0o777}), []string{"bin/tool"}, Limits{}, ErrNotRegular,
			`archive ARCHIVE: entry "bin/tool": wanted as a regular file, but it is a symlink to "tool-1"`},
		{"zip fifo", Zip, zipBytes(t, zent{name: "p", mode: os.ModeNamedPipe | 0o644}), []string{"ok"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "p": is a device, fifo or socket; release archives hold none`},
		{"zip duplicate", Zip, zipBytes(t, zent{name: "bin/tool", body: "a"}, zent{name: "bin/tool", body: "b"}), []string{"bin/tool"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "bin/tool": duplicate entry: "bin/tool" appears more than once`},
		{"zip size smaller than data", Zip, zipBytes(t, zipLie(5)), []string{"bin/tool"}, Limits{}, ErrCorrupt,
			`archive ARCHIVE: entry "bin/tool": corrupt data: zip: not a valid zip file`},
		{"zip size larger than data", Zip, zipBytes(t, zipLie(50)), []string{"bin/tool"}, Limits{}, ErrCorrupt,
			`archive ARCHIVE: entry "bin/tool": truncated: the data ends early: unexpected EOF`},
		{"zip CRC", Zip, zipBytes(t, zipBadCRC), []string{"bin/tool"}, Limits{}, ErrCorrupt,
			`archive ARCHIVE: entry "bin/tool": corrupt data: zip: checksum error`},
		{"zip local header naming the entry otherwise", Zip, localLie(zipStored, func(h []byte) { copy(h[30:], "../tool2") }), []string{"bin/tool"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "bin/tool": its local header and its central directory entry disagree on the name ("../tool2" and "bin/tool"): zip tools differ on which one they trust, so they would not all read what updeb packages`},
		{"zip local header of an unwanted entry naming it otherwise", Zip, patchZip(t, zipStored, "PK\x03\x04", "README", func(h []byte) { copy(h[30:], "../x") }), []string{"bin/tool"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "README": its local header and its central directory entry disagree on the name ("../xME" and "README"): zip tools differ on which one they trust, so they would not all read what updeb packages`},
		{"zip local header with another method", Zip, localLie(zipStored, func(h []byte) { u16(h[8:], zip.Deflate) }), []string{"bin/tool"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "bin/tool": its local header and its central directory entry disagree on the compression method (8 and 0): zip tools differ on which one they trust, so they would not all read what updeb packages`},
		{"zip local header with another CRC-32", Zip, localLie(zipStored, func(h []byte) { u32(h[14:], 0x1234) }), []string{"bin/tool"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "bin/tool": its local header and its central directory entry disagree on the CRC-32 (00001234 and 0d4a1185): zip tools differ on which one they trust, so they would not all read what updeb packages`},
		{"zip local header with another compressed size", Zip, localLie(zipStored, func(h []byte) { u32(h[18:], 5) }), []string{"bin/tool"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "bin/tool": its local header and its central directory entry disagree on the compressed size (5 and 11): zip tools differ on which one they trust, so they would not all read what updeb packages`},
		{"zip local header with another size", Zip, localLie(zipStored, func(h []byte) { u32(h[22:], 5) }), []string{"bin/tool"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "bin/tool": its local header and its central directory entry disagree on the size (5 and 11): zip tools differ on which one they trust, so they would not all read what updeb packages`},
		{"zip local header with another zip64 size", Zip, zip64Local(5), []string{"bin/tool"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "bin/tool": its local header and its central directory entry disagree on the size (5 and 11): zip tools differ on which one they trust, so they would not all read what updeb packages`},
		{"zip local header encrypted", Zip, localLie(zipStored, func(h []byte) { h[6] |= 1 }), []string{"bin/tool"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "bin/tool": its local header and its central directory entry disagree on the flags (0x0001 and 0x0000): zip tools differ on which one they trust, so they would not all read what updeb packages`},
		{"zip local header without the data descriptor", Zip, localLie(zipDeflated, func(h []byte) { h[6] &^= 8 }), []string{"bin/tool"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "bin/tool": its local header and its central directory entry disagree on the flags (0x0000 and 0x0008): zip tools differ on which one they trust, so they would not all read what updeb packages`},
		{"zip local Unicode path field naming the entry otherwise", Zip, localLie(zipBytes(t, storedEnt("bin/tool", stored, unicodePathField("bin/tool", "bin/tool"))), func(h []byte) { copy(h[30+8+9:], "../tool2") }), []string{"bin/tool"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "bin/tool": the Info-ZIP Unicode path field of its local header names it "../tool2": readers that go by local headers (bsdtar) extract it under that name, updeb reads the entry's own`},
		{"zip entries sharing a local header", Zip, patchZip(t, zipStored, "PK\x01\x02", "bin/tool", func(c []byte) { u32(c[42:], 0) }), []string{"README"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "bin/tool": its local header, at byte 0, lies inside the local header or data of entry "README" (bytes 0 to 48): unzip refuses overlapping entries`},
		{"zip end record off by a byte: archive/zip reads the directory where Python does not", Zip, endLie(zipStored, -1), []string{"bin/tool"}, Limits{}, ErrCorrupt,
			`archive ARCHIVE: its end record places the central directory at byte 114 (the zip starting at byte 1), but a central directory record is at byte 113, where archive/zip reads it: zip readers would read different directories`},
		{"zip data running into the central directory", Zip, patchZip(t, zipStored, "PK\x01\x02", "README", func(c []byte) { u32(c[20:], 500) }), []string{"bin/tool"}, Limits{}, ErrCorrupt,
			`archive ARCHIVE: entry "README": its 500 bytes of data, at byte 36, run past the start of the central directory (byte 113)`},
		{"zip without the local header", Zip, patchZip(t, zipStored, "PK\x01\x02", "bin/tool", func(c []byte) { u32(c[42:], 10) }), []string{"README"}, Limits{}, ErrCorrupt,
			`archive ARCHIVE: entry "bin/tool": no local header at byte 10, where the central directory places it`},
		{"zip directory with data", Zip, zipDirData, []string{"bin/tool"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "d/": is a directory with 6 bytes of data: unzip extracts the directory without them, Python reads them`},
		{"zip directory by its mode only, with data", Zip, zipBytes(t, zent{name: "bin/tool", body: "x"}, zipDir("extra", "hidden")), []string{"bin/tool"}, Limits{}, ErrUnsafe,
			`archive ARCHIVE: entry "extra": is a directory by its mode, but its name does not end in "/": unzip and Python extract it as a regular file`},
		{"zip missing member", Zip, zipBytes(t, zent{name: "linux-amd64/helm", body: "x"}), []string{"helm"}, Limits{}, ErrMissing,
			`archive ARCHIVE: not found: "helm"; the archive holds "linux-amd64/helm"`},
		{"zip data after the end record", Zip, append(zipBytes(t, zent{name: "bin/tool", body: "x"}), "hidden"...), []string{"bin/tool"}, Limits{}, ErrCorrupt,
			`archive ARCHIVE: non-zero data after the zip end-of-central-directory record and its comment, where zip tools do not look`},
		{"not a zip", Zip, []byte("<html>404</html>"), []string{"x"}, Limits{}, ErrCorrupt,
			`archive ARCHIVE: not a readable zip archive: zip: not a valid zip file`},
		{"gzip read as zip", Zip, helmGz, []string{"x"}, Limits{}, ErrCorrupt,
			`archive ARCHIVE: the file is gzip data, not zip, the kind it is read as (tar and bsdtar tell the format by the bytes): write kind: tar.gz`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := writeTemp(t, "a."+string(tc.kind), tc.data)
			_, err := collect(t, p, tc.kind, tc.want, tc.lim)
			if !errors.Is(err, tc.sentinel) {
				t.Fatalf("error %v, want one matching %v", err, tc.sentinel)
			}
			var e *Error
			if !errors.As(err, &e) || e.Archive != p {
				t.Errorf("error %#v is not an *Error naming the archive %s", err, p)
			}
			if got := msg(err, p); tc.msg != "" && got != tc.msg {
				t.Errorf("message\n got %s\nwant %s", got, tc.msg)
			}
		})
	}
}

// TestTarPAXNameOverridden: a pax record that archive/tar sets aside for a
// GNU long name or link header, or for the ustar field (an empty record),
// gives GNU tar (the referee) another entry than updeb checks: refused.
func TestTarPAXNameOverridden(t *testing.T) {
	testenv.RequireTool(t, "tar")
	data := rawTarHeader("C", tar.TypeReg, "data", "", true)
	for _, tc := range []struct {
		name  string
		tar   []byte
		shows string // in GNU tar's listing
		msg   string
	}{
		{"a pax path before a GNU long name", slices.Concat(paxLocal("path", "../evil"), rawTarHeader("././@LongLink", tar.TypeGNULongName, "bin/tool\x00", "", true), data), "../evil",
			`archive ARCHIVE: entry "bin/tool": its pax header gives its path as "../evil", its GNU long name or ustar header as "bin/tool": tar readers differ on which they take (GNU tar the pax one, updeb's reader the other), so they would not all read the entry updeb checks`},
		{"a pax path after a GNU long name", slices.Concat(rawTarHeader("././@LongLink", tar.TypeGNULongName, "bin/tool\x00", "", true), paxLocal("path", "bin/evil"), data), "bin/evil",
			`archive ARCHIVE: entry "bin/tool": its pax header gives its path as "bin/evil", its GNU long name or ustar header as "bin/tool": tar readers differ on which they take (GNU tar the pax one, updeb's reader the other), so they would not all read the entry updeb checks`},
		{"a pax link target before a GNU long link", slices.Concat(paxLocal("linkpath", "../../etc/shadow"), rawTarHeader("././@LongLink", tar.TypeGNULongLink, "x\x00", "", true), rawTarHeader("l", tar.TypeSymlink, "", "y", true)), "l -> ../../etc/shadow",
			`archive ARCHIVE: entry "l": its pax header gives its link target as "../../etc/shadow", its GNU long link or ustar header as "x": tar readers differ on which they take (GNU tar the pax one, updeb's reader the other), so they would not all read the entry updeb checks`},
		{"an empty pax path", slices.Concat(paxLocal("path", ""), data), "Substituting `.' for empty member name",
			`archive ARCHIVE: entry "C": its pax header gives its path as "", its GNU long name or ustar header as "C": tar readers differ on which they take (GNU tar the pax one, updeb's reader the other), so they would not all read the entry updeb checks`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := writeTemp(t, "a.tar", append(tc.tar, make([]byte, 1024)...))
			if out := testenv.Run(t, "tar", "-tvf", p); !strings.Contains(string(out), tc.shows) {
				t.Fatalf("GNU tar lists\n%s\nwithout %q", out, tc.shows)
			}
			_, err := collect(t, p, Tar, []string{"bin/tool"}, Limits{})
			if !errors.Is(err, ErrUnsafe) || msg(err, p) != tc.msg {
				t.Fatalf("error\n got %s\nwant %s", msg(err, p), tc.msg)
			}
		})
	}
}

// TestTarGNUTimesAsPrefix: archive/tar reads a GNU header whose time
// fields do not parse as a name prefix there; GNU tar (the referee) reads
// the name field alone, so a second "bin/tool", "x/bin/tool" to updeb,
// replaces the first when GNU tar extracts them: refused.
func TestTarGNUTimesAsPrefix(t *testing.T) {
	testenv.RequireTool(t, "tar")
	good := tarBytes(t, file("bin/tool", "good"))
	evil := rawTarHeader("bin/tool", tar.TypeReg, "evil", "", true)
	copy(evil[345:], "x")
	resum(evil[:512])
	data := slices.Concat(good[:len(good)-1024], evil, make([]byte, 1024))
	want := `archive ARCHIVE: entry "x/bin/tool": its GNU header names it "bin/tool", and holds "x" where GNU headers hold its access and change times: updeb's reader (archive/tar) takes that for a prefix of the name (as Go's writer before 1.8 wrote one), GNU tar and bsdtar do not, so they would not read the entry updeb checks`
	for _, tc := range []struct {
		kind Kind
		data []byte
	}{
		{Tar, data},
		// Two gzip members that end inside the header: it is read in two parts.
		{TarGz, append(gzBytes(t, data[:1100]), gzBytes(t, data[1100:])...)},
	} {
		p := writeTemp(t, "a."+string(tc.kind), tc.data)
		dir := t.TempDir()
		testenv.Run(t, "tar", "-xf", p, "-C", dir)
		if b, err := os.ReadFile(dir + "/bin/tool"); err != nil || string(b) != "evil" {
			t.Fatalf("%s: GNU tar extracted bin/tool as %q, %v; want the second entry's", tc.kind, b, err)
		}
		_, err := collect(t, p, tc.kind, []string{"bin/tool"}, Limits{})
		if !errors.Is(err, ErrUnsafe) || msg(err, p) != want {
			t.Fatalf("%s: error\n got %s\nwant %s", tc.kind, msg(err, p), want)
		}
	}
}

// TestTarStarPrefix: a header with star's trailer has, to archive/tar,
// star's 131-byte prefix field, then times; GNU tar (the referee) reads
// the 155-byte ustar prefix: a prefix longer than 131 bytes names the
// entry otherwise to each. Refused.
func TestTarStarPrefix(t *testing.T) {
	testenv.RequireTool(t, "tar")
	dir := strings.Repeat("d", 131)
	h := rawTarHeader("tool", tar.TypeReg, "data", "", false)
	copy(h[345:], dir+"0000000") // the 7 digits are star's access time to archive/tar
	copy(h[508:], "tar\x00")
	resum(h[:512])
	p := writeTemp(t, "a.tar", append(h, make([]byte, 1024)...))
	if out := testenv.Run(t, "tar", "-tf", p); string(out) != dir+"0000000/tool\n" {
		t.Fatalf("GNU tar lists %q", out)
	}
	_, err := collect(t, p, Tar, []string{dir + "0000000/tool"}, Limits{})
	want := `archive ARCHIVE: entry "` + dir + `/tool": its header, with star's trailer, has the name prefix "` + dir + `0000000": updeb's reader (archive/tar) takes only its first 131 bytes, as star's prefix field, GNU tar and bsdtar take it whole, so they would not read the entry updeb checks`
	if !errors.Is(err, ErrUnsafe) || msg(err, p) != want {
		t.Fatalf("error\n got %s\nwant %s", msg(err, p), want)
	}
}

// TestTarSolarisExtendedHeader: GNU tar (the referee) applies a Solaris
// extended header (type X) to the next entry, as a pax header: its path
// "bin/tool" makes the entry "junk" after it a second "bin/tool", which
// replaces the first when extracted. archive/tar reads the header as an
// entry of its own: refused.
func TestTarSolarisExtendedHeader(t *testing.T) {
	testenv.RequireTool(t, "tar")
	good := tarBytes(t, file("bin/tool", "good"))
	solaris := paxLocal("path", "bin/tool")
	solaris[156] = 'X'
	resum(solaris[:512])
	p := writeTemp(t, "a.tar", slices.Concat(good[:len(good)-1024], solaris, tarBytes(t, file("junk", "evil"))))
	dir := t.TempDir()
	testenv.Run(t, "tar", "-xf", p, "-C", dir)
	if b, err := os.ReadFile(dir + "/bin/tool"); err != nil || string(b) != "evil" {
		t.Fatalf("GNU tar extracted bin/tool as %q, %v; want the entry after the X header", b, err)
	}
	_, err := collect(t, p, Tar, []string{"bin/tool"}, Limits{})
	want := `archive ARCHIVE: entry "PaxHeader": is a Solaris extended header (type X), whose records GNU tar, bsdtar and Python apply to the entry after it, as a pax header's, and updeb's reader (archive/tar) does not: they would not read the entry updeb checks`
	if !errors.Is(err, ErrUnsafe) || msg(err, p) != want {
		t.Fatalf("error\n got %s\nwant %s", msg(err, p), want)
	}
}

// TestTarStarRealsize: bsdtar (the referee) takes a SCHILY.realsize pax
// record, star's sparse files' size, for the file's size, and pads its
// data with zeros to it, where archive/tar ignores it: such an entry is a
// sparse file, not handed out as a regular one.
func TestTarStarRealsize(t *testing.T) {
	testenv.RequireTool(t, "bsdtar")
	p := writeTemp(t, "a.tar", slices.Concat(paxLocal("SCHILY.realsize", "100"), tarBytes(t, file("bin/tool", "good tool\n"))))
	if out := testenv.Run(t, "bsdtar", "-xOf", p, "bin/tool"); len(out) != 100 {
		t.Fatalf("bsdtar extracted bin/tool as %d bytes, not the 100 of its realsize", len(out))
	}
	_, err := collect(t, p, Tar, []string{"bin/tool"}, Limits{})
	if want := `archive ARCHIVE: entry "bin/tool": wanted as a regular file, but it is a sparse file`; !errors.Is(err, ErrNotRegular) || msg(err, p) != want {
		t.Fatalf("error\n got %s\nwant %s", msg(err, p), want)
	}
}

// TestTarLocalHeaderBeforeGlobal: a local pax header or a GNU long name
// header before a pax global header names, to GNU tar (the referee), the
// entry after the global one: "junk" there is a second "bin/tool", which
// replaces the first when extracted. archive/tar returns the global
// header and drops the local one: refused.
func TestTarLocalHeaderBeforeGlobal(t *testing.T) {
	testenv.RequireTool(t, "tar")
	good := tarBytes(t, file("bin/tool", "good"))
	global := paxLocal("comment", "v1")
	global[156] = tar.TypeXGlobalHeader
	resum(global[:512])
	for name, local := range map[string][]byte{
		"a GNU long name": rawTarHeader("././@LongLink", tar.TypeGNULongName, "bin/tool\x00", "", true),
		"a pax header":    paxLocal("path", "bin/tool"),
	} {
		t.Run(name, func(t *testing.T) {
			p := writeTemp(t, "a.tar", slices.Concat(good[:len(good)-1024], local, global, tarBytes(t, file("junk", "evil"))))
			dir := t.TempDir()
			testenv.Run(t, "tar", "-xf", p, "-C", dir)
			if b, err := os.ReadFile(dir + "/bin/tool"); err != nil || string(b) != "evil" {
				t.Fatalf("GNU tar extracted bin/tool as %q, %v; want the entry after the global header", b, err)
			}
			_, err := collect(t, p, Tar, []string{"bin/tool"}, Limits{})
			want := `archive ARCHIVE: entry "PaxHeader": a pax global header follows the local pax or GNU long name or link header at byte 1024: GNU tar, bsdtar and Python apply that header to the entry after the global one, updeb's reader (archive/tar) drops it, so they would not read the entry updeb checks`
			if !errors.Is(err, ErrUnsafe) || msg(err, p) != want {
				t.Fatalf("error\n got %s\nwant %s", msg(err, p), want)
			}
		})
	}
}

// rawTarHeader is a tar header (ustar, or GNU's magic) with body as its
// data: a header of any type, which archive/tar's writer makes only of some.
func rawTarHeader(name string, typ byte, body, link string, gnu bool) []byte {
	h := make([]byte, 512)
	copy(h, name)
	copy(h[100:], "0000644\x00")
	copy(h[124:], fmt.Sprintf("%011o\x00", len(body)))
	copy(h[136:], "00000000000\x00")
	h[156] = typ
	copy(h[157:], link)
	copy(h[257:], "ustar\x0000")
	if gnu {
		copy(h[257:], "ustar  \x00")
	}
	resum(h)
	return append(h, append([]byte(body), make([]byte, -len(body)&511)...)...)
}

// paxLocal is a pax extended header with the one record key=value, for
// the entry after it.
func paxLocal(key, value string) []byte {
	rec := " " + key + "=" + value + "\n"
	n := len(rec) + 1
	for len(fmt.Sprint(n))+len(rec) != n {
		n++
	}
	return rawTarHeader("PaxHeader", tar.TypeXHeader, fmt.Sprint(n)+rec, "", false)
}

// TestPAXGlobalComment: the global header git archive writes (a comment)
// is metadata, not an entry.
func TestPAXGlobalComment(t *testing.T) {
	p := writeTemp(t, "a.tar", append(paxGlobal(t, map[string]string{"comment": "cafe0123"}), tarBytes(t, file("bin/tool", "x"))...))
	got, err := collect(t, p, Tar, []string{"bin/tool"}, Limits{})
	if err != nil || len(got) != 1 || got[0].body != "x" {
		t.Fatalf("got %v, %v; want bin/tool", got, err)
	}
}

// TestZipUnicodePathSame: a Unicode path field that repeats the entry's
// name (what Info-ZIP zip writes for non-ASCII names) is taken.
func TestZipUnicodePathSame(t *testing.T) {
	p := writeTemp(t, "a.zip", zipBytes(t, zent{name: "doc/read me ünï.txt", body: "x", extra: unicodePathField("doc/read me ünï.txt", "doc/read me ünï.txt")}))
	got, err := collect(t, p, Zip, []string{"doc/read me ünï.txt"}, Limits{})
	if err != nil || len(got) != 1 || got[0].body != "x" {
		t.Fatalf("got %v, %v; want the entry", got, err)
	}
}

// TestZipComment: an archive comment (git archive writes the commit's id)
// is taken, and zeros after it; other data after it is refused.
func TestZipComment(t *testing.T) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	if w, err := zw.Create("bin/tool"); err != nil {
		t.Fatal(err)
	} else if _, err := w.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := zw.SetComment("cafe0123"); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	p := writeTemp(t, "a.zip", buf.Bytes())
	if got, err := collect(t, p, Zip, []string{"bin/tool"}, Limits{}); err != nil || len(got) != 1 || got[0].body != "x" {
		t.Fatalf("got %v, %v; want bin/tool", got, err)
	}
	p = writeTemp(t, "b.zip", append(buf.Bytes(), make([]byte, 10000)...)) // bsdtar -cf - pads to blocks
	if got, err := collect(t, p, Zip, []string{"bin/tool"}, Limits{}); err != nil || len(got) != 1 || got[0].body != "x" {
		t.Fatalf("zeros after the comment: got %v, %v; want bin/tool", got, err)
	}
	p = writeTemp(t, "c.zip", append(buf.Bytes(), "\x00hidden"...))
	if _, err := collect(t, p, Zip, []string{"bin/tool"}, Limits{}); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "non-zero data after the zip end-of-central-directory record") {
		t.Fatalf("data after the comment: %v, want it refused", err)
	}
}

// TestZipUnlistedLocalHeader: a local header its central directory does
// not list, after the last entry or at the start of the file, is an entry
// bsdtar extracts from a pipe (bsdtar, the referee, shows it does) and
// updeb, unzip and Python do not list: refused.
func TestZipUnlistedLocalHeader(t *testing.T) {
	testenv.RequireTool(t, "bsdtar")
	stored := zipBytes(t, storedEnt("README", "readme", nil), storedEnt("bin/tool", "good", nil))
	descriptors := zipBytes(t, zent{name: "README", body: "readme"}, zent{name: "bin/tool", body: "good"})
	for _, tc := range []struct {
		name string
		data []byte
		msg  string
	}{
		{"after the last entry", hideBeforeDirectory(t, stored, localOf(t, "bin/tool", "evil")),
			`archive ARCHIVE: entry "bin/tool": the 42 bytes after its data (bytes 84 to 126, before the central directory) belong to no entry: streaming zip readers (bsdtar reading a pipe) read entries there that unzip, Python and updeb do not list`},
		{"after the last entry's data descriptor", hideBeforeDirectory(t, descriptors, localOf(t, "bin/tool", "evil")),
			`archive ARCHIVE: entry "bin/tool": the 58 bytes after its data (bytes 112 to 170, before the central directory) are not the data descriptor its flags announce (12 to 24 bytes: an optional signature, the CRC-32 and the sizes): streaming zip readers (bsdtar reading a pipe) read entries there that unzip, Python and updeb do not list`},
		{"before the first entry", append(localOf(t, "bin/tool", "evil"), stored...),
			`archive ARCHIVE: its first 42 bytes, before the first entry its central directory lists, start as a zip record ("PK"): streaming zip readers (bsdtar reading a pipe) read entries there that unzip, Python and updeb do not list`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := writeTemp(t, "a.zip", tc.data)
			if out := testenv.Run(t, "sh", "-c", `cat "$1" | bsdtar -xOf - bin/tool`, "sh", p); !strings.Contains(string(out), "evil") {
				t.Fatalf("bsdtar reading a pipe gave bin/tool as %q, not the hidden entry's", out)
			}
			_, err := collect(t, p, Zip, []string{"bin/tool"}, Limits{})
			if !errors.Is(err, ErrUnsafe) || msg(err, p) != tc.msg {
				t.Fatalf("error\n got %s\nwant %s", msg(err, p), tc.msg)
			}
		})
	}
}

// TestZipStoredDataHoldingItsDescriptor: a stored entry with a data
// descriptor has no end but that descriptor, which bsdtar reading a pipe
// (the referee) finds by its signature and the CRC-32 of the data before
// it: data that holds them, then a local header, gives bsdtar another
// entry. Refused; the signature alone, with another CRC-32, is data
// bsdtar reads whole, and taken.
func TestZipStoredDataHoldingItsDescriptor(t *testing.T) {
	testenv.RequireTool(t, "bsdtar")
	storedWithDescriptor := func(body string) []byte {
		return zipBytes(t, zent{raw: &zip.FileHeader{Name: "bin/tool", Method: zip.Store, Flags: 0x8, CRC32: crc32.ChecksumIEEE([]byte(body)),
			CompressedSize64: uint64(len(body)), UncompressedSize64: uint64(len(body))}, body: body})
	}
	descriptorOf := func(data string, crcDelta uint32) string {
		d := binary.LittleEndian.AppendUint32(nil, 0x08074b50)
		d = binary.LittleEndian.AppendUint32(d, crc32.ChecksumIEEE([]byte(data))+crcDelta)
		d = binary.LittleEndian.AppendUint32(d, uint32(len(data)))
		return string(binary.LittleEndian.AppendUint32(d, uint32(len(data))))
	}
	evil := string(localOf(t, "bin/tool", "evil"))
	for _, tc := range []struct {
		name, prefix string
		at           int
	}{
		{"at its start", "good", 4},
		{"across two reads of it", strings.Repeat("g", 64<<10-3), 64<<10 - 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := writeTemp(t, "a.zip", storedWithDescriptor(tc.prefix+descriptorOf(tc.prefix, 0)+evil))
			if out := testenv.Run(t, "sh", "-c", `cat "$1" | bsdtar -xOf - bin/tool`, "sh", p); !strings.HasSuffix(string(out), "evil") {
				t.Fatalf("bsdtar reading a pipe gave bin/tool as %.40q..., not the hidden entry's", out)
			}
			_, err := collect(t, p, Zip, []string{"bin/tool"}, Limits{})
			want := fmt.Sprintf(`archive ARCHIVE: entry "bin/tool": is stored with a data descriptor, and its data holds one at byte %d of it (the signature and the CRC-32 of the data before it): streaming zip readers (bsdtar reading a pipe) end its data there, and read what follows as entries that unzip, Python and updeb do not list`, tc.at)
			if !errors.Is(err, ErrUnsafe) || msg(err, p) != want {
				t.Fatalf("error\n got %s\nwant %s", msg(err, p), want)
			}
		})
	}
	body := "good" + descriptorOf("good", 1) + evil
	p := writeTemp(t, "a.zip", storedWithDescriptor(body))
	if out := testenv.Run(t, "sh", "-c", `cat "$1" | bsdtar -xOf - bin/tool`, "sh", p); string(out) != body {
		t.Fatalf("bsdtar reading a pipe gave bin/tool as %q, not its whole data", out)
	}
	if got, err := collect(t, p, Zip, []string{"bin/tool"}, Limits{}); err != nil || len(got) != 1 || got[0].body != body {
		t.Fatalf("the signature with another CRC-32: got %v, %v; want bin/tool whole", got, err)
	}
}

// TestZipDescriptorDisagrees: a data descriptor that says otherwise than
// its central directory entry fails the entry in bsdtar reading a pipe
// (the referee), where archive/zip checks only a wanted entry's CRC-32:
// refused, as a local header that disagrees is.
func TestZipDescriptorDisagrees(t *testing.T) {
	testenv.RequireTool(t, "bsdtar")
	descriptors := zipBytes(t, zent{name: "README", body: "readme"}, zent{name: "bin/tool", body: "good"})
	patch := func(nth, at int) []byte { // flips a bit of the nth descriptor's field at byte at
		d := bytes.Clone(descriptors)
		i := -1
		for range nth + 1 {
			i += 1 + bytes.Index(d[i+1:], []byte("PK\x07\x08"))
		}
		d[i+at] ^= 1
		return d
	}
	for _, tc := range []struct {
		name string
		data []byte
		msg  string
	}{
		{"the size of the wanted entry", patch(1, 12),
			`archive ARCHIVE: entry "bin/tool": its data descriptor and its central directory entry disagree on the size (5 and 4): zip tools differ on which one they trust, so they would not all read what updeb packages`},
		{"the compressed size", patch(1, 8),
			`archive ARCHIVE: entry "bin/tool": its data descriptor and its central directory entry disagree on the compressed size (11 and 10): zip tools differ on which one they trust, so they would not all read what updeb packages`},
		{"the CRC-32 of an entry not wanted", patch(0, 4),
			`archive ARCHIVE: entry "README": its data descriptor and its central directory entry disagree on the CRC-32 (873586f2 and 873586f3): zip tools differ on which one they trust, so they would not all read what updeb packages`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := writeTemp(t, "a.zip", tc.data)
			if out, err := exec.Command("sh", "-c", `cat "$1" | bsdtar -xOf - >/dev/null`, "sh", p).CombinedOutput(); err == nil {
				t.Fatalf("bsdtar reading a pipe read it without an error: %s", out)
			}
			_, err := collect(t, p, Zip, []string{"bin/tool"}, Limits{})
			if !errors.Is(err, ErrUnsafe) || msg(err, p) != tc.msg {
				t.Fatalf("error\n got %s\nwant %s", msg(err, p), tc.msg)
			}
		})
	}
}

// TestZipBackslashNames: a zip entry named with backslashes and no "/" is
// a path of folders to bsdtar (the referee), whatever system made the zip,
// and to unzip for one made on MS-DOS or Windows: "bin\\tool" replaces the
// "bin/tool" before it, and "..\\evil" leaves the folder. Refused; a
// backslash in a name with a "/", which they keep, is taken.
func TestZipBackslashNames(t *testing.T) {
	testenv.RequireTool(t, "bsdtar")
	p := writeTemp(t, "a.zip", zipBytes(t, zent{name: "bin/tool", body: "good"}, zent{name: `bin\tool`, body: "evil"}))
	dir := t.TempDir()
	testenv.Run(t, "bsdtar", "-xf", p, "-C", dir)
	if b, err := os.ReadFile(dir + "/bin/tool"); err != nil || string(b) != "evil" {
		t.Fatalf("bsdtar extracted bin/tool as %q, %v; want the second entry's", b, err)
	}
	_, err := collect(t, p, Zip, []string{"bin/tool"}, Limits{})
	want := `archive ARCHIVE: entry "bin\\tool": its name holds a backslash and no "/": bsdtar, and unzip for a zip made on MS-DOS or Windows, take its backslashes for folder separators ("bin/tool"), updeb for part of the name`
	if !errors.Is(err, ErrUnsafe) || msg(err, p) != want {
		t.Fatalf("error\n got %s\nwant %s", msg(err, p), want)
	}
	p = writeTemp(t, "b.zip", zipBytes(t, zent{name: "bin/tool", body: "good"}, zent{name: `units/dev-disk-by\x2dlabel.mount`, body: "unit"}))
	if got, err := collect(t, p, Zip, []string{`units/dev-disk-by\x2dlabel.mount`}, Limits{}); err != nil || len(got) != 1 || got[0].body != "unit" {
		t.Fatalf("a backslash in a name with a \"/\": got %v, %v; want the entry", got, err)
	}
}

// TestZipSymlinkFromOtherSystems: unzip (the referee) extracts an entry
// whose Unix mode says symlink as one from a zip made on BeOS, Atari,
// AtheOS or VMS too, where archive/zip reads a regular file of mode 0: it
// is a symlink, and one that leaves the archive is refused.
func TestZipSymlinkFromOtherSystems(t *testing.T) {
	testenv.RequireTool(t, "unzip")
	link := func(name, target string, host uint16) zent {
		e := storedEnt(name, target, nil)
		e.raw.CreatorVersion = host<<8 | 20
		e.raw.ExternalAttrs = 0o120777 << 16
		return e
	}
	for _, host := range []uint16{2, 5, 16, 30} {
		p := writeTemp(t, "a.zip", zipBytes(t, zent{name: "bin/tool", body: "x"}, link("lib", "../../etc", host)))
		dir := t.TempDir()
		testenv.Run(t, "unzip", "-q", p, "-d", dir)
		if target, err := os.Readlink(dir + "/lib"); err != nil || target != "../../etc" {
			t.Fatalf("host %d: unzip extracted lib as %q, %v; want a symlink to ../../etc", host, target, err)
		}
		_, err := collect(t, p, Zip, []string{"bin/tool"}, Limits{})
		if want := `archive ARCHIVE: entry "lib": symlink to "../../etc" leaves the archive root`; !errors.Is(err, ErrUnsafe) || msg(err, p) != want {
			t.Fatalf("host %d: error\n got %s\nwant %s", host, msg(err, p), want)
		}
	}
	p := writeTemp(t, "a.zip", zipBytes(t, link("bin/tool", "tool-1.0", 16)))
	_, err := collect(t, p, Zip, []string{"bin/tool"}, Limits{})
	if want := `archive ARCHIVE: entry "bin/tool": wanted as a regular file, but it is a symlink to "tool-1.0"`; !errors.Is(err, ErrNotRegular) || msg(err, p) != want {
		t.Fatalf("a wanted BeOS symlink: error\n got %s\nwant %s", msg(err, p), want)
	}
}

// TestZipDeflateEndsEarly: bsdtar reading a pipe (the referee) reads an
// entry's data descriptor right after its deflate stream ends, and the
// next local header after that: data descriptor and local header hidden
// after the stream, within its compressed size, are an entry it extracts,
// that archive/zip never reads. Refused.
func TestZipDeflateEndsEarly(t *testing.T) {
	testenv.RequireTool(t, "bsdtar")
	good := strings.Repeat("good tool\n", 10)
	var stream bytes.Buffer
	fw, _ := flate.NewWriter(&stream, flate.BestCompression)
	if _, err := fw.Write([]byte(good)); err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	descriptor := binary.LittleEndian.AppendUint32(nil, 0x08074b50)
	descriptor = binary.LittleEndian.AppendUint32(descriptor, crc32.ChecksumIEEE([]byte(good)))
	descriptor = binary.LittleEndian.AppendUint32(descriptor, uint32(stream.Len()))
	descriptor = binary.LittleEndian.AppendUint32(descriptor, uint32(len(good)))
	data := slices.Concat(stream.Bytes(), descriptor, localOf(t, "bin/tool", "evil"))
	p := writeTemp(t, "a.zip", zipBytes(t, zent{raw: &zip.FileHeader{Name: "bin/tool", Method: zip.Deflate, Flags: 0x8, CRC32: crc32.ChecksumIEEE([]byte(good)),
		CompressedSize64: uint64(len(data)), UncompressedSize64: uint64(len(good))}, body: string(data)}))
	if out := testenv.Run(t, "sh", "-c", `cat "$1" | bsdtar -xOf - bin/tool`, "sh", p); !strings.HasSuffix(string(out), "evil") {
		t.Fatalf("bsdtar reading a pipe gave bin/tool as %.40q..., not the hidden entry's", out)
	}
	_, err := collect(t, p, Zip, []string{"bin/tool"}, Limits{})
	want := fmt.Sprintf(`archive ARCHIVE: entry "bin/tool": its deflate stream ends after %d of its %d compressed bytes: streaming zip readers (bsdtar reading a pipe) read what follows it as the next records, entries that unzip, Python and updeb do not list`, stream.Len(), len(data))
	if !errors.Is(err, ErrUnsafe) || msg(err, p) != want {
		t.Fatalf("error\n got %s\nwant %s", msg(err, p), want)
	}
}

// TestZipSymlinkByASiField: unzip (the referee) takes the mode of an entry
// from a Unix system whose external attributes hold none from the ASi Unix
// extra field of its central directory entry, where archive/zip reads a
// regular file of mode 0: a symlink there is one, and one that leaves the
// archive is refused.
func TestZipSymlinkByASiField(t *testing.T) {
	testenv.RequireTool(t, "unzip")
	asi := binary.LittleEndian.AppendUint16(nil, 0o120777) // mode, then size of a device, uid, gid
	asi = append(asi, make([]byte, 8)...)
	field := binary.LittleEndian.AppendUint16(nil, 0x756e)
	field = binary.LittleEndian.AppendUint16(field, uint16(4+len(asi)))
	field = binary.LittleEndian.AppendUint32(field, crc32.ChecksumIEEE(asi))
	e := storedEnt("lib", "../../etc", append(field, asi...))
	e.raw.CreatorVersion = 3<<8 | 20
	e.raw.ExternalAttrs = 0
	p := writeTemp(t, "a.zip", zipBytes(t, zent{name: "bin/tool", body: "x"}, e))
	dir := t.TempDir()
	testenv.Run(t, "unzip", "-q", p, "-d", dir)
	if target, err := os.Readlink(dir + "/lib"); err != nil || target != "../../etc" {
		t.Fatalf("unzip extracted lib as %q, %v; want a symlink to ../../etc", target, err)
	}
	_, err := collect(t, p, Zip, []string{"bin/tool"}, Limits{})
	if want := `archive ARCHIVE: entry "lib": symlink to "../../etc" leaves the archive root`; !errors.Is(err, ErrUnsafe) || msg(err, p) != want {
		t.Fatalf("error\n got %s\nwant %s", msg(err, p), want)
	}
}

// TestZipXLFieldMode: bsdtar (the referee) takes an entry's Unix mode from
// libarchive's xl extra field, in its local header or its central
// directory entry, over the central directory's attributes, which
// archive/zip and unzip read: "lib", a regular file to updeb, is a symlink
// out of the archive to bsdtar. Refused.
func TestZipXLFieldMode(t *testing.T) {
	testenv.RequireTool(t, "bsdtar")
	xl := binary.LittleEndian.AppendUint16(nil, 0x6c78)
	xl = binary.LittleEndian.AppendUint16(xl, 7)
	xl = append(xl, 0x05) // version made by, and external attributes
	xl = binary.LittleEndian.AppendUint16(xl, 3<<8|20)
	xl = binary.LittleEndian.AppendUint32(xl, 0o120777<<16)
	e := storedEnt("lib", "../../etc", xl)
	e.raw.CreatorVersion = 3<<8 | 20
	e.raw.ExternalAttrs = 0o100644 << 16
	both := zipBytes(t, zent{name: "bin/tool", body: "x"}, e)
	for _, tc := range []struct {
		name string
		data []byte
		msg  string
	}{
		{"in both headers", both,
			`archive ARCHIVE: entry "lib": the xl field of its local header and its central directory entry disagree on the external attributes (a Unix mode in the high half) (0xa1ff0000 and 0x81a40000): zip tools differ on which one they trust, so they would not all read what updeb packages`},
		{"in the central directory entry alone", patchZip(t, both, "PK\x03\x04", "lib", func(h []byte) { h[30+3] = 0x79 }),
			`archive ARCHIVE: entry "lib": the xl field of its central directory entry and its central directory entry disagree on the external attributes (a Unix mode in the high half) (0xa1ff0000 and 0x81a40000): zip tools differ on which one they trust, so they would not all read what updeb packages`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := writeTemp(t, "a.zip", tc.data)
			dir := t.TempDir()
			testenv.Run(t, "bsdtar", "-xf", p, "-C", dir)
			if target, err := os.Readlink(dir + "/lib"); err != nil || target != "../../etc" {
				t.Fatalf("bsdtar extracted lib as %q, %v; want a symlink to ../../etc", target, err)
			}
			_, err := collect(t, p, Zip, []string{"bin/tool"}, Limits{})
			if !errors.Is(err, ErrUnsafe) || msg(err, p) != tc.msg {
				t.Fatalf("error\n got %s\nwant %s", msg(err, p), tc.msg)
			}
		})
	}
}

// localOf is the local header and data of a stored entry, as a zip holds
// them before its central directory.
func localOf(t testing.TB, name, body string) []byte {
	z := zipBytes(t, storedEnt(name, body, nil))
	return z[:bytes.Index(z, []byte("PK\x01\x02"))]
}

// hideBeforeDirectory returns a copy of a zip (one without a comment) with
// hidden inserted before its central directory, which its end record
// places after it.
func hideBeforeDirectory(t testing.TB, data, hidden []byte) []byte {
	at := bytes.Index(data, []byte("PK\x01\x02"))
	out := slices.Concat(data[:at], hidden, data[at:])
	end := out[len(out)-zipEndLen:]
	binary.LittleEndian.PutUint32(end[16:], binary.LittleEndian.Uint32(end[16:])+uint32(len(hidden)))
	return out
}

// TestZipRefusedBeforeDelivery: zip archives are checked whole before fn runs,
// so a hostile entry after a wanted one means fn is never called.
func TestZipRefusedBeforeDelivery(t *testing.T) {
	p := writeTemp(t, "a.zip", zipBytes(t, zent{name: "bin/tool", body: "x"}, zent{name: "../evil", body: "x"}))
	got, err := collect(t, p, Zip, []string{"bin/tool"}, Limits{})
	if !errors.Is(err, ErrUnsafe) || len(got) != 0 {
		t.Fatalf("got %d members and %v; want none and ErrUnsafe", len(got), err)
	}
}

func TestBadWant(t *testing.T) {
	p := writeTemp(t, "a.tar", tarBytes(t, okFileFor("x")))
	for _, tc := range []struct {
		kind Kind
		want []string
		msg  string
	}{
		{Tar, []string{"../x"}, `archive: invalid wanted name "../x": name contains a ".." component (path traversal)`},
		{Tar, []string{"./"}, `archive: invalid wanted name "./": names the archive root, not a file`},
		{Tar, []string{""}, `archive: invalid wanted name "": empty name`},
		{Tar, []string{"x", "./x"}, `archive: invalid wanted name "./x": listed twice (as "x" after cleaning)`},
		{Raw, []string{"x"}, `archive: invalid wanted name ["x"]: a raw artifact is itself the one file; want must be exactly [""]`},
		{"rar", []string{"x"}, `archive: unknown kind "rar" (want one of tar.gz, tgz, tar.xz, tar, zip, raw)`},
	} {
		_, err := collect(t, p, tc.kind, tc.want, Limits{})
		if tc.kind != "rar" && !errors.Is(err, ErrWant) {
			t.Errorf("%q: error %v, want ErrWant", tc.want, err)
		}
		if msg(err, p) != tc.msg {
			t.Errorf("%q: message\n got %s\nwant %s", tc.want, msg(err, p), tc.msg)
		}
	}
}

func okFileFor(name string) tent { return file(name, "content of "+name) }

// countingReader counts the compressed bytes the decompressor pulled.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// bombGz makes a tar.gz whose one entry claims 1 GiB of zeros: a gzip member
// with the tar header, then 1024 concatenated gzip members of 1 MiB of zeros
// each (a multistream gzip, read as one stream). About 1 MB on disk, built
// without compressing 1 GiB.
func bombGz(t testing.TB) []byte {
	var hdr bytes.Buffer
	tw := tar.NewWriter(&hdr)
	if err := tw.WriteHeader(&tar.Header{Name: "zeros", Typeflag: tar.TypeReg, Size: 1 << 30, Mode: 0o644}); err != nil {
		t.Fatal(err)
	}
	out := gzBytes(t, hdr.Bytes())
	mib := gzBytes(t, make([]byte, 1<<20))
	for range 1024 {
		out = append(out, mib...)
	}
	return out
}

// TestDecompressionBomb checks the bomb is refused after MaxTotal bytes,
// reading only a small part of the compressed file, both when the bomb is
// skipped and when it is wanted.
func TestDecompressionBomb(t *testing.T) {
	bomb := bombGz(t)
	const maxTotal = 4 << 20
	for _, want := range [][]string{{"other"}, {"zeros"}} {
		cr := &countingReader{r: bytes.NewReader(bomb)}
		s, err := newScan(context.Background(), "bomb.tar.gz", want, Limits{MaxTotal: maxTotal}.withDefaults(), func(m Member, r io.Reader) error {
			_, err := io.Copy(io.Discard, r)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		err = s.selectTar(TarGz, cr)
		if !errors.Is(err, ErrLimit) {
			t.Fatalf("want %v: error %v, want ErrLimit", want, err)
		}
		wantMsg := `archive bomb.tar.gz: entry "zeros": decompressed data exceeds 4194304 bytes (Limits.MaxTotal): refusing a possible decompression bomb`
		if err.Error() != wantMsg {
			t.Errorf("message\n got %s\nwant %s", err, wantMsg)
		}
		// 4 MiB of zeros is about 4 KiB compressed; allow for buffering, but
		// far less than the ~1 MB file (which would expand to 1 GiB).
		if cr.n > 64<<10 || cr.n >= int64(len(bomb))/8 {
			t.Errorf("read %d compressed bytes of %d before refusing; want under 64 KiB", cr.n, len(bomb))
		}
		t.Logf("want %v: refused after %d of %d compressed bytes in %v", want, cr.n, len(bomb), time.Since(start))
	}
}

func TestContextCanceled(t *testing.T) {
	p := writeTemp(t, "b.tar.gz", bombGz(t))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := Select(ctx, p, TarGz, []string{"zeros"}, Limits{}, func(Member, io.Reader) error { return nil })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
}

// zipBadHeader is a stored zip entry whose CRC-32 does not match body.
func zipBadHeader(name, body string) *zip.FileHeader {
	return &zip.FileHeader{Name: name, Method: zip.Store, CRC32: crc32.ChecksumIEEE([]byte(body)) ^ 1,
		CompressedSize64: uint64(len(body)), UncompressedSize64: uint64(len(body))}
}

// cdOnlyZip is a zip archive of n central-directory records naming "a",
// with no data: 47 bytes each in the file.
func cdOnlyZip(n int) []byte {
	var b bytes.Buffer
	for range n {
		var h [46]byte
		binary.LittleEndian.PutUint32(h[0:], 0x02014b50)
		binary.LittleEndian.PutUint16(h[28:], 1) // name length
		b.Write(h[:])
		b.WriteString("a")
	}
	var e [22]byte
	binary.LittleEndian.PutUint32(e[0:], 0x06054b50)
	binary.LittleEndian.PutUint16(e[8:], uint16(n))
	binary.LittleEndian.PutUint16(e[10:], uint16(n))
	binary.LittleEndian.PutUint32(e[12:], uint32(b.Len()))
	b.Write(e[:])
	return b.Bytes()
}

// TestZipDirectoryBound: a zip whose central directory holds far more
// records than MaxEntries is refused before archive/zip reads them into
// memory (some 250 bytes each: a 4 GiB archive of them would take 20 GiB).
func TestZipDirectoryBound(t *testing.T) {
	p := writeTemp(t, "a.zip", cdOnlyZip(200_000)) // 9.4 MB
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := collect(t, p, Zip, []string{"x"}, Limits{MaxEntries: 1000})
	runtime.ReadMemStats(&after)
	want := "archive ARCHIVE: the central directory is larger than 1560576 bytes, more than 1000 entries need (Limits.MaxEntries, 512 bytes each, plus 1024 KiB): refusing it before it is read into memory"
	if !errors.Is(err, ErrLimit) || msg(err, p) != want {
		t.Errorf("error %s\nwant %s", msg(err, p), want)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 { // the bound lets in some 33,000 records: 8 MiB
		t.Errorf("Select allocated %d MiB for a 9.4 MB archive it refuses", alloc>>20)
	}
	// Within the bound, the records are read and counted as before.
	p = writeTemp(t, "b.zip", cdOnlyZip(3000))
	if _, err := collect(t, p, Zip, []string{"x"}, Limits{MaxEntries: 1000}); !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), "duplicate entry") {
		t.Errorf("3000 records within the bound: %v, want the duplicate refused", err)
	}
}

// TestDeepNamesCostTheirSize: the whole-archive checks cost about what the
// names hold, however deep they are. Names 2,000 components deep (4 KB,
// well inside PATH_MAX) used to cost each entry a walk up all its parents
// and each symlink a join of the whole path so far at every component:
// 100,000 such entries, which the default Limits let through, took the
// better part of an hour.
func TestDeepNamesCostTheirSize(t *testing.T) {
	deep := strings.Repeat("a/", 2000)
	var ents []tent
	for i := range 50 {
		top := strings.Repeat("b", i+1) + "/"
		ents = append(ents, file(top+deep+"f", "x"), tent{name: top + deep + "l", typ: tar.TypeSymlink, link: "f"})
	}
	data := tarBytes(t, ents...)
	p := writeTemp(t, "deep.tar", data)
	steps := 0
	parentOf = func(p string) string { steps++; return path.Dir(p) }
	defer func() { parentOf = path.Dir }()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err := collect(t, p, Tar, []string{"b/" + deep + "f"}, Limits{})
	runtime.ReadMemStats(&after)
	if err != nil || len(got) != 1 {
		t.Fatalf("got %v, %v; want the one file", got, err)
	}
	if steps > 0 {
		t.Errorf("the check for entries inside files and links took %d steps up from %d entries", steps, len(ents))
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(80*len(data)) {
		t.Errorf("Select allocated %d bytes on a tar of %d bytes: the symlink check copies each link's path once a component", alloc, len(data))
	}

	// The walk up, once, names the deepest file above the first entry inside one.
	bad := writeTemp(t, "bad.tar", tarBytes(t, append(ents, file("b/"+deep+"f/g", ""), file("bb/"+deep+"f/g", ""))...))
	want := fmt.Sprintf(`is inside %q, which the archive holds as a regular file`, "b/"+deep+"f")
	if _, err := collect(t, bad, Tar, nil, Limits{}); !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want %s", err, want)
	}
}

// TestTarRepeatedMetaHeader: two local pax headers, or two GNU long name
// or long link headers, before one entry. GNU tar and updeb's reader
// (archive/tar) take the last, Python's tarfile the first: "junk" to
// them, a second "bin/tool" to Python, whose extraction replaces the one
// updeb packaged. Refused; a tar that holds such a tar as a member's
// data (Go's own testdata) is not.
func TestTarRepeatedMetaHeader(t *testing.T) {
	python := testenv.RequireTool(t, "tar", "python3")[1]
	good := tarBytes(t, file("bin/tool", "good"))
	junk := tarBytes(t, file("junk", "evil"))
	longName := func(name string) []byte {
		return rawTarHeader("././@LongLink", tar.TypeGNULongName, name+"\x00", "", true)
	}
	for _, tc := range []struct {
		name  string
		metas []byte
		msg   string
	}{
		{"two pax headers", slices.Concat(paxLocal("path", "bin/tool"), paxLocal("path", "junk")),
			`archive ARCHIVE: entry "junk": a second local pax header, at byte 2048, follows the one at byte 1024 before this entry: GNU tar and updeb's reader (archive/tar) take the last, Python's tarfile the first, so they would not all read the entry updeb checks`},
		{"a pax header and one without a path", slices.Concat(paxLocal("path", "bin/tool"), paxLocal("comment", "x")),
			`archive ARCHIVE: entry "junk": a second local pax header, at byte 2048, follows the one at byte 1024 before this entry: GNU tar and updeb's reader (archive/tar) take the last, Python's tarfile the first, so they would not all read the entry updeb checks`},
		{"two GNU long names", slices.Concat(longName("bin/tool"), longName("junk")),
			`archive ARCHIVE: entry "junk": a second GNU long name header, at byte 2048, follows the one at byte 1024 before this entry: GNU tar and updeb's reader (archive/tar) take the last, Python's tarfile the first, so they would not all read the entry updeb checks`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := writeTemp(t, "a.tar", slices.Concat(good[:len(good)-1024], tc.metas, junk))
			tarAndPythonList(t, python, p, "bin/tool junk", "bin/tool bin/tool")
			_, err := collect(t, p, Tar, []string{"bin/tool"}, Limits{})
			if !errors.Is(err, ErrUnsafe) || msg(err, p) != tc.msg {
				t.Fatalf("error\n got %s\nwant %s", msg(err, p), tc.msg)
			}
		})
	}
	t.Run("in a member's data", func(t *testing.T) {
		inner := slices.Concat(paxLocal("path", "a"), paxLocal("path", "b"), tarBytes(t, file("c", "x")))
		for _, kind := range []Kind{Tar, TarGz} {
			data := tarBytes(t, file("testdata/pax-multi-hdrs.tar", string(inner)), file("bin/tool", "good"))
			if kind == TarGz {
				data = gzBytes(t, data)
			}
			p := writeTemp(t, "a."+string(kind), data)
			if got, err := collect(t, p, kind, []string{"bin/tool"}, Limits{}); err != nil || len(got) != 1 || got[0].body != "good" {
				t.Fatalf("%s: got %v, %v", kind, got, err)
			}
		}
	})
}

// TestTarGlobalHeaderAfterATarMember: a pax global header after a member
// whose data is a tar with local headers of its own (Go's testdata) is
// read as GNU tar reads it; only the archive's own local headers before
// a global one are refused (TestTarLocalHeaderBeforeGlobal).
func TestTarGlobalHeaderAfterATarMember(t *testing.T) {
	testenv.RequireTool(t, "tar")
	inner := slices.Concat(paxLocal("path", "a"), tarBytes(t, file("c", "x")))
	global := paxLocal("comment", "v1")
	global[156] = tar.TypeXGlobalHeader
	resum(global[:512])
	first := tarBytes(t, file("testdata/pax.tar", string(inner)))
	p := writeTemp(t, "a.tar", slices.Concat(first[:len(first)-1024], global, tarBytes(t, file("bin/tool", "good"))))
	if out := testenv.Run(t, "tar", "-tf", p); string(out) != "testdata/pax.tar\nbin/tool\n" {
		t.Fatalf("GNU tar lists\n%s", out)
	}
	if got, err := collect(t, p, Tar, []string{"bin/tool"}, Limits{}); err != nil || len(got) != 1 || got[0].body != "good" {
		t.Fatalf("got %v, %v", got, err)
	}
}

// TestTarV7Prefix: a header without the ustar magic (V7 tar's) has no
// name prefix to GNU tar and updeb's reader (archive/tar), but Python's
// tarfile prepends bytes 345 to 500 to its name all the same, and so does
// bsdtar when the magic starts with "ustar": "tool" with "bin" there is a
// second "bin/tool" to them, which replaces the one updeb packaged when
// extracted. Refused.
func TestTarV7Prefix(t *testing.T) {
	python := testenv.RequireTool(t, "tar", "python3")[1]
	good := tarBytes(t, file("bin/tool", "good"))
	for magic, bsdtar := range map[string]string{
		"\x00\x00\x00\x00\x00\x00\x00\x00": "GNU tar, bsdtar and updeb's reader (archive/tar) read no prefix there, Python's tarfile reads",
		// bsdtar compares the first five bytes of the magic alone.
		"ustar\x01\x00\x00": "GNU tar and updeb's reader (archive/tar) read no prefix there, bsdtar and Python's tarfile read",
	} {
		v7 := rawTarHeader("tool", tar.TypeReg, "evil", "", false)
		copy(v7[257:265], magic)
		copy(v7[345:], "bin")
		resum(v7[:512])
		p := writeTemp(t, "a.tar", slices.Concat(good[:len(good)-1024], v7, make([]byte, 1024)))
		tarAndPythonList(t, python, p, "bin/tool tool", "bin/tool bin/tool")
		_, err := collect(t, p, Tar, []string{"bin/tool"}, Limits{})
		want := `archive ARCHIVE: entry "tool": its header has no ustar or GNU magic (a V7 tar header to updeb's reader) and holds "bin" where a ustar header's name prefix is: ` + bsdtar + ` the name as "bin/tool", so they would not all read the entry updeb checks`
		if !errors.Is(err, ErrUnsafe) || msg(err, p) != want {
			t.Errorf("magic %q: error\n got %s\nwant %s", magic, msg(err, p), want)
		}
	}
}

// tarAndPythonList checks the names GNU tar and Python's tarfile list in
// the tar at p, in order and separated by spaces: the referees of a tar
// they read otherwise.
func tarAndPythonList(t *testing.T, python, p, gnu, py string) {
	t.Helper()
	if out := strings.Join(strings.Fields(string(testenv.Run(t, "tar", "-tf", p))), " "); out != gnu {
		t.Fatalf("GNU tar lists %q, want %q", out, gnu)
	}
	script := `import sys, tarfile; print(" ".join(m.name for m in tarfile.open(sys.argv[1])))`
	if out := strings.TrimSpace(string(testenv.Run(t, python, "-c", script, p))); out != py {
		t.Fatalf("Python's tarfile lists %q, want %q", out, py)
	}
}

// TestTarSizeFieldLeadingNUL: a size field that starts with a NUL and
// holds a number after it is that number to updeb's reader (archive/tar)
// and GNU tar, and 0 to bsdtar and Python's tarfile, which then read the
// entry's data as the next headers: a "bin/tool" hidden in the data of
// "junk" replaces the one updeb packaged when they extract. Refused.
func TestTarSizeFieldLeadingNUL(t *testing.T) {
	python := testenv.RequireTool(t, "tar", "python3")[1]
	good := tarBytes(t, file("bin/tool", "good"))
	evil := tarBytes(t, file("bin/tool", "evil"))[:1024]
	junk := rawTarHeader("junk", tar.TypeReg, string(evil), "", false)
	copy(junk[124:136], fmt.Sprintf("\x00%010o\x00", len(evil)))
	resum(junk[:512])
	p := writeTemp(t, "a.tar", slices.Concat(good[:len(good)-1024], junk, make([]byte, 1024)))
	tarAndPythonList(t, python, p, "bin/tool junk", "bin/tool junk bin/tool")
	_, err := collect(t, p, Tar, []string{"bin/tool"}, Limits{})
	want := `archive ARCHIVE: entry "junk": the size field of its header, "\x000000002000\x00", is 1024 bytes to updeb's reader (archive/tar) and 0 to bsdtar and Python's tarfile, which stop at a NUL before its digits: tar readers would not agree on where its data ends, and would read different entries after it`
	if !errors.Is(err, ErrUnsafe) || msg(err, p) != want {
		t.Fatalf("error\n got %s\nwant %s", msg(err, p), want)
	}
}

// TestZipNamesPythonReadsAlike: a zip entry's name without the UTF-8 flag
// (bit 11) is code page 437 to Python's zipfile: "doc/caf\x82.txt" is
// "doc/café.txt" to it, the name of the flagged UTF-8 entry updeb
// packaged, which its extraction replaces. Refused.
func TestZipNamesPythonReadsAlike(t *testing.T) {
	python := testenv.RequireTool(t, "python3")[0]
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range []struct {
		name, body string
		flags      uint16
	}{{"doc/caf\u00e9.txt", "good", 0x800}, {"doc/caf\x82.txt", "evil", 0}} {
		w, err := zw.CreateRaw(&zip.FileHeader{Name: e.name, Flags: e.flags, Method: zip.Store, CRC32: crc32.ChecksumIEEE([]byte(e.body)),
			CompressedSize64: uint64(len(e.body)), UncompressedSize64: uint64(len(e.body)), NonUTF8: e.flags == 0})
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(e.body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	p := writeTemp(t, "a.zip", buf.Bytes())
	script := `import sys, zipfile; print(" ".join(ascii(i.filename) for i in zipfile.ZipFile(sys.argv[1]).infolist()))`
	if out := strings.TrimSpace(string(testenv.Run(t, python, "-c", script, p))); out != `'doc/caf\xe9.txt' 'doc/caf\xe9.txt'` {
		t.Fatalf("Python's zipfile lists %s", out)
	}
	_, err := collect(t, p, Zip, []string{"doc/caf\u00e9.txt"}, Limits{})
	want := `archive ARCHIVE: entry "doc/caf\x82.txt": Python's zipfile reads its name and that of entry "doc/café.txt" alike, as "doc/café.txt" (a name without the UTF-8 flag is code page 437 to it): its extraction would write one over the other`
	if !errors.Is(err, ErrUnsafe) || msg(err, p) != want {
		t.Fatalf("error\n got %s\nwant %s", msg(err, p), want)
	}
}

// TestTarSolarisHolesdata: bsdtar (the referee) takes a SUN.holesdata pax
// record, Solaris tar's map of a sparse file, and extracts the entry with
// zeros where the map says holes are, where GNU tar and archive/tar
// ignore the record: such an entry is a sparse file, not handed out as a
// regular one.
func TestTarSolarisHolesdata(t *testing.T) {
	testenv.RequireTool(t, "bsdtar")
	p := writeTemp(t, "a.tar", slices.Concat(paxLocal("SUN.holesdata", " 0 3"), tarBytes(t, file("bin/tool", "good tool\n"))))
	if out := testenv.Run(t, "bsdtar", "-xOf", p, "bin/tool"); string(out) != "goo\x00\x00\x00\x00\x00\x00\x00" {
		t.Fatalf("bsdtar extracted bin/tool as %q, not its first 3 bytes and a hole", out)
	}
	_, err := collect(t, p, Tar, []string{"bin/tool"}, Limits{})
	if want := `archive ARCHIVE: entry "bin/tool": wanted as a regular file, but it is a sparse file`; !errors.Is(err, ErrNotRegular) || msg(err, p) != want {
		t.Fatalf("error\n got %s\nwant %s", msg(err, p), want)
	}
}
