package deb

import (
	"archive/tar"
	"bufio"
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/updeb/updeb/pkg/control"
)

// Member is one ar member of a .deb.
type Member struct {
	Name        string      `json:"name"`
	Size        int64       `json:"size"`
	Compression Compression `json:"compression,omitempty"` // for control.tar and data.tar
}

// ScriptInfo is a maintainer script found in control.tar.
type ScriptInfo struct {
	Name    string      `json:"name"`
	Mode    fs.FileMode `json:"mode"`
	Size    int64       `json:"size"`
	Content string      `json:"content"`
}

// FileInfo is one data.tar entry, as stored.
type FileInfo struct {
	Path     string      `json:"path"` // the tar name: "./usr/bin/helm", "./usr/"
	Type     string      `json:"type"` // file, dir, symlink, hardlink, char, block, fifo
	Mode     fs.FileMode `json:"mode"` // permission bits (and setuid/setgid/sticky)
	UID      int         `json:"uid"`
	GID      int         `json:"gid"`
	Uname    string      `json:"uname"`
	Gname    string      `json:"gname"`
	Size     int64       `json:"size"`
	MTime    time.Time   `json:"mtime"`
	Linkname string      `json:"linkname,omitempty"`
	MD5      string      `json:"md5,omitempty"` // regular files
}

// Info is what InspectFile finds in a .deb.
type Info struct {
	Members   []Member          `json:"members"`
	Control   control.Paragraph `json:"control"`
	Conffiles []string          `json:"conffiles"`
	Scripts   []ScriptInfo      `json:"scripts"`
	Triggers  string            `json:"triggers,omitempty"`
	MD5Sums   map[string]string `json:"md5sums"` // path as listed (no "./") -> md5
	Files     []FileInfo        `json:"files"`
}

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrMalformed}, args...)...)
}

// InspectFile reads the .deb at path. Errors about its content wrap ErrMalformed;
// others are I/O errors.
func InspectFile(path string) (*Info, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	info, err := Inspect(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return info, nil
}

// maxControlFile bounds each file read from control.tar into memory.
const maxControlFile = 64 << 20

// Inspect reads a .deb of the given size. It accepts what dpkg-deb accepts:
// debian-binary 2.x first, members named "_..." skipped, control.tar and
// data.tar in xz, gzip, zstd or no compression.
func Inspect(r io.ReaderAt, size int64) (*Info, error) {
	members, err := readAr(r, size)
	if err != nil {
		return nil, err
	}
	info := &Info{MD5Sums: map[string]string{}, Conffiles: []string{}, Scripts: []ScriptInfo{}}
	var sawControl, sawData bool
	for i, m := range members {
		mem := Member{Name: m.name, Size: m.size}
		sec := io.NewSectionReader(r, m.offset, m.size)
		switch {
		case i == 0:
			if m.name != "debian-binary" {
				return nil, malformed("first ar member is %q, expected debian-binary", m.name)
			}
			b := make([]byte, min(m.size, 64))
			if _, err := sec.ReadAt(b, 0); err != nil {
				return nil, err
			}
			if !bytes.HasPrefix(b, []byte("2.")) || !bytes.HasSuffix(b, []byte("\n")) || m.size > 64 {
				return nil, malformed("debian-binary is %q, expected \"2.0\\n\"", b)
			}
		case strings.HasPrefix(m.name, "_") && !sawControl:
			// dpkg-deb ignores these.
		case !sawControl && strings.HasPrefix(m.name, "control.tar"):
			cdc, ok := codecForMember(m.name, "control.tar")
			if !ok {
				return nil, malformed("ar member %q: unsupported compression", m.name)
			}
			mem.Compression = cdc.compression
			if err := readTar(sec, cdc, m.name, info.addControl); err != nil {
				return nil, err
			}
			sawControl = true
		case sawControl && !sawData && strings.HasPrefix(m.name, "data.tar"):
			cdc, ok := codecForMember(m.name, "data.tar")
			if !ok {
				return nil, malformed("ar member %q: unsupported compression", m.name)
			}
			mem.Compression = cdc.compression
			if err := readTar(sec, cdc, m.name, info.addData); err != nil {
				return nil, err
			}
			sawData = true
		default:
			return nil, malformed("unexpected ar member %q at position %d: expected debian-binary, control.tar[.gz|.xz|.zst], data.tar[.gz|.xz|.zst]", m.name, i+1)
		}
		info.Members = append(info.Members, mem)
	}
	switch {
	case len(members) == 0:
		return nil, malformed("empty ar archive")
	case !sawControl:
		return nil, malformed("no control.tar member")
	case !sawData:
		return nil, malformed("no data.tar member")
	case info.Control.Fields == nil:
		return nil, malformed("control.tar has no control file")
	}
	return info, nil
}

// readTar decompresses a member and calls add for each entry. Decoder and tar
// errors are the archive's fault (ErrMalformed); errors reading the file are not.
func readTar(r io.Reader, cdc codec, member string, add func(*tar.Header, io.Reader) error) error {
	bad := func(err error) error {
		var pe *fs.PathError
		if errors.As(err, &pe) || errors.Is(err, ErrMalformed) {
			return fmt.Errorf("%s: %w", member, err)
		}
		return malformed("%s: %v", member, err)
	}
	zr, err := cdc.newReader(bufio.NewReader(r))
	if err != nil {
		return bad(err)
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	n := 0
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return bad(err)
		}
		n++
		if err := add(h, tr); err != nil {
			return bad(err)
		}
	}
	if n == 0 {
		return malformed("%s: empty tar archive", member)
	}
	// Trailing bytes after the end-of-archive blocks are fine for tar, but the
	// compressed stream must still be complete and intact.
	if _, err := io.Copy(io.Discard, zr); err != nil {
		return bad(err)
	}
	return nil
}

func readSmall(name string, r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxControlFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxControlFile {
		return nil, malformed("%s is larger than %d bytes", name, maxControlFile)
	}
	return b, nil
}

func (info *Info) addControl(h *tar.Header, r io.Reader) error {
	name := strings.TrimPrefix(h.Name, "./")
	if h.Typeflag != tar.TypeReg || name == "" {
		return nil
	}
	var content []byte
	read := func() error {
		var err error
		content, err = readSmall(name, r)
		return err
	}
	switch name {
	case "control":
		if err := read(); err != nil {
			return err
		}
		p, err := control.ParseOne(bytes.NewReader(content), "control")
		if err != nil {
			return malformed("%v", err)
		}
		info.Control = p
	case "conffiles":
		if err := read(); err != nil {
			return err
		}
		for _, l := range strings.Split(string(content), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				info.Conffiles = append(info.Conffiles, l)
			}
		}
	case "md5sums":
		if err := read(); err != nil {
			return err
		}
		for i, l := range strings.Split(strings.TrimSuffix(string(content), "\n"), "\n") {
			sum, p, ok := strings.Cut(l, "  ")
			if !ok || len(sum) != 32 {
				return malformed("md5sums line %d: expected \"<md5>  <path>\", found %q", i+1, l)
			}
			info.MD5Sums[p] = sum
		}
	case "triggers":
		if err := read(); err != nil {
			return err
		}
		info.Triggers = string(content)
	case "preinst", "postinst", "prerm", "postrm", "config":
		if err := read(); err != nil {
			return err
		}
		info.Scripts = append(info.Scripts, ScriptInfo{Name: name, Mode: fs.FileMode(h.Mode) & fs.ModePerm,
			Size: int64(len(content)), Content: string(content)})
	}
	return nil
}

var tarTypes = map[byte]string{tar.TypeReg: "file", tar.TypeDir: "dir", tar.TypeSymlink: "symlink",
	tar.TypeLink: "hardlink", tar.TypeChar: "char", tar.TypeBlock: "block", tar.TypeFifo: "fifo"}

func (info *Info) addData(h *tar.Header, r io.Reader) error {
	typ, ok := tarTypes[h.Typeflag]
	if !ok {
		return malformed("data.tar entry %q has unsupported type %q", h.Name, h.Typeflag)
	}
	mode := fs.FileMode(h.Mode) & fs.ModePerm
	if h.Mode&0o4000 != 0 {
		mode |= fs.ModeSetuid
	}
	if h.Mode&0o2000 != 0 {
		mode |= fs.ModeSetgid
	}
	if h.Mode&0o1000 != 0 {
		mode |= fs.ModeSticky
	}
	fi := FileInfo{Path: h.Name, Type: typ, Mode: mode, UID: h.Uid, GID: h.Gid, Uname: h.Uname, Gname: h.Gname,
		Size: h.Size, MTime: h.ModTime.UTC(), Linkname: h.Linkname}
	if h.Typeflag == tar.TypeReg {
		m := md5.New()
		if _, err := io.Copy(m, r); err != nil {
			return err
		}
		fi.MD5 = hex.EncodeToString(m.Sum(nil))
	}
	info.Files = append(info.Files, fi)
	return nil
}
