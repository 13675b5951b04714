// Command mkfixtures writes the archives of the hostile "streams" class
// (files/mirror/streams/*), defects of the compression layer under the
// tar: run it from the repository root with
// go run ./testdata/hostile/streams/mkfixtures, then update the digests in
// the cases (sha256sum testdata/hostile/streams/files/mirror/streams/*).
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"hash/crc32"
	"log"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/ulikunitz/xz"
)

// tarOf is a tar archive of bin/tool holding body.
func tarOf(body string) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	h := &tar.Header{Name: "bin/tool", Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(body)),
		ModTime: time.Unix(1767225600, 0), Format: tar.FormatGNU}
	if err := tw.WriteHeader(h); err != nil {
		log.Fatal(err)
	}
	if _, err := tw.Write([]byte(body)); err != nil {
		log.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		log.Fatal(err)
	}
	return buf.Bytes()
}

// gz is one gzip member of data, with a file name in its header if name
// is not empty (gzip FILE stores one).
func gz(data []byte, name string) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Name = name
	if _, err := zw.Write(data); err != nil {
		log.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		log.Fatal(err)
	}
	return buf.Bytes()
}

func xzOf(data []byte, check bool) []byte {
	var buf bytes.Buffer
	w, err := xz.WriterConfig{NoCheckSum: !check}.NewWriter(&buf)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	return buf.Bytes()
}

func main() {
	good := tarOf("#!/bin/sh\necho tool\n")
	ok := gz(good, "")
	// The tar delta-encoded (distance 1), compressed with no check, and the
	// xz block header at byte 12 (LZMA2 alone) rewritten to the same size
	// with a delta filter before LZMA2: valid xz, which xz -d reads.
	deltaEncoded := make([]byte, len(good))
	for i := range good {
		deltaEncoded[i] = good[i]
		if i > 0 {
			deltaEncoded[i] -= good[i-1]
		}
	}
	delta := xzOf(deltaEncoded, false)
	copy(delta[12:], []byte{0x02, 0x01, 0x03, 0x01, 0x00, 0x21, 0x01, delta[16]})
	binary.LittleEndian.PutUint32(delta[20:], crc32.ChecksumIEEE(delta[12:20]))
	files := map[string][]byte{
		"ok.tar.gz": ok,
		// bsdtar -czf - > x.tar.gz: zeros to a whole 10 KiB block.
		"padded.tar.gz": slices.Concat(ok, make([]byte, 10240-len(ok))),
		// gzip -d stops at the zeros; Python reads the member after them.
		"member-after-padding.tar.gz": slices.Concat(ok, make([]byte, 512), gz(tarOf("evil\n"), "")),
		// A second member cut in the file name of its header.
		"cut-in-name.tar.gz": slices.Concat(ok, gz(good, "tool.tar")[:15]),
		"xz-named.tar.gz":    xzOf(good, true),
		"delta.tar.xz":       delta,
	}
	dir := "testdata/hostile/streams/files/mirror/streams"
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			log.Fatal(err)
		}
	}
}
