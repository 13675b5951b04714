package deb

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzTarReader: no panic, no more data than the input holds, and every
// entry the reader returns has a name and a type dpkg unpacks.
func FuzzTarReader(f *testing.F) {
	f.Add(buildTar(false, dataEntries(tent{name: "./usr/share/hostile/" + string(bytes.Repeat([]byte("n"), 150)), data: []byte("x")},
		tent{name: "./l", typ: tarSymlink, link: "/etc/passwd"})...))
	f.Add(buildTar(true, tent{name: "./f", size: 1 << 40}))
	f.Add(make([]byte, 1024))
	f.Add(buildTar(false, tent{name: "pax_global_header", typ: tarPAXGlobal, data: paxRecords("comment", "c", "mtime", "1.5")},
		paxExt("path", "./control", "size", "3"), tent{name: "./x", data: []byte("abc")}))
	f.Fuzz(func(t *testing.T, in []byte) {
		// As dpkg reads data.tar, and as GNU tar control.tar.
		for _, gnuTar := range []bool{false, true} {
			readTarFuzzed(t, in, gnuTar)
		}
	})
}

// readTarFuzzed reads in as FuzzTarReader checks it, with gnuTar set so.
func readTarFuzzed(t *testing.T, in []byte, gnuTar bool) {
	tr := newTarReader(bytes.NewReader(in))
	tr.gnuTar = gnuTar
	var read int64
	for range 10000 {
		h, err := tr.Next()
		if err == errTarEnd || err != nil {
			return
		}
		if h.Name == "" || tarTypeName(h.Type) == "" {
			t.Fatalf("entry %+v", h)
		}
		n, err := io.Copy(io.Discard, tr)
		read += n
		if read > int64(len(in)) {
			t.Fatalf("read %d data bytes from %d input bytes", read, len(in))
		}
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("data: %v", err)
		}
	}
}

// FuzzCheckRelations (ParseRelations): no panic; an accepted value is ASCII
// (dpkg's grammar of names, versions and white space has no other byte);
// with spaces around it, it is accepted again.
func FuzzCheckRelations(f *testing.F) {
	f.Add("Depends", "libc6 (>= 2.36), adduser | passwd, foo:any (<< 2:1.0~rc1-1)")
	f.Add("Provides", "virtual (= 1.0)")
	f.Add("Conflicts", "a | b")
	f.Fuzz(func(t *testing.T, field, value string) {
		if _, err := ParseRelations(field, value); err != nil {
			return
		}
		if i := strings.IndexFunc(value, func(r rune) bool { return r >= utf8.RuneSelf }); i >= 0 {
			t.Fatalf("%q accepted, with a byte dpkg refuses at %d", value, i)
		}
		if _, err := ParseRelations(field, " "+value+" "); err != nil {
			t.Fatalf("%q accepted, with spaces around refused: %v", value, err)
		}
	})
}
