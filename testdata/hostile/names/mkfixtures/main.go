// Command mkfixtures writes the archives of the hostile "names" class
// (files/mirror/names/*.tar.gz): run it from the repository root with
// go run ./testdata/hostile/names/mkfixtures, then update the digests in
// the cases (sha256sum testdata/hostile/names/files/mirror/names/*).
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"log"
	"os"
	"path/filepath"
	"time"
)

type ent struct {
	name, body, link string
	typ              byte
	mode             int64
}

var (
	tool    = ent{name: "bin/tool", body: "#!/bin/sh\necho tool\n", typ: tar.TypeReg, mode: 0o755}
	alias   = ent{name: "bin/tool-alias", link: "bin/tool", typ: tar.TypeLink}
	unit    = ent{name: `units/x\x2dy.service`, body: "[Unit]\n", typ: tar.TypeReg, mode: 0o644}
	spaced  = ent{name: "docs/read me ünï.txt", body: "docs\n", typ: tar.TypeReg, mode: 0o644}
	archive = map[string][]ent{
		"ok":                  {tool, alias, unit, spaced},
		"newline":             {tool, unit, spaced, {name: "docs/evil\nname", body: "x\n", typ: tar.TypeReg, mode: 0o644}},
		"forward-hardlink":    {alias, tool, unit, spaced},
		"hardlink-escape":     {tool, unit, spaced, {name: "bin/tool-alias", link: "../../etc/shadow", typ: tar.TypeLink}},
		"hardlink-chain":      {tool, {name: "bin/a", link: "bin/tool", typ: tar.TypeLink}, {name: "bin/tool-alias", link: "bin/a", typ: tar.TypeLink}, unit, spaced},
		"hardlink-to-symlink": {tool, {name: "bin/l", link: "tool", typ: tar.TypeSymlink, mode: 0o777}, {name: "bin/tool-alias", link: "bin/l", typ: tar.TypeLink}, unit, spaced},
	}
)

func main() {
	dir := "testdata/hostile/names/files/mirror/names"
	for name, ents := range archive {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		tw := tar.NewWriter(zw)
		for _, e := range ents {
			h := &tar.Header{Name: e.name, Linkname: e.link, Typeflag: e.typ, Mode: e.mode, Size: int64(len(e.body)),
				ModTime: time.Unix(1767225600, 0), Format: tar.FormatGNU}
			if err := tw.WriteHeader(h); err != nil {
				log.Fatal(err)
			}
			if _, err := tw.Write([]byte(e.body)); err != nil {
				log.Fatal(err)
			}
		}
		if err := tw.Close(); err != nil {
			log.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			log.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".tar.gz"), buf.Bytes(), 0o644); err != nil {
			log.Fatal(err)
		}
	}
}
