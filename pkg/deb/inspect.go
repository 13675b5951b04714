package deb

import (
	"bufio"
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"
	"time"

	"github.com/updeb/updeb/pkg/archive"
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
	// Problems are what the package says of itself that its files
	// contradict (checkMD5Sums). Inspect reports them rather than refusing
	// the package, which dpkg installs, so that one already published is
	// still read; publish refuses them (ProblemsError), inspect exits 1.
	Problems []Problem `json:"problems"`
	// Warnings are claims that are wrong or missing but mislead no tool
	// into a wrong verdict (checkInstalledSize, a file md5sums leaves out):
	// shown, never refused.
	Warnings []Problem `json:"warnings"`
}

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrMalformed}, args...)...)
}

// InspectFile reads the .deb at path (see Inspect). Errors about its content
// wrap ErrMalformed and name the file; a stopped context's error is returned
// as it is; others are I/O errors.
func InspectFile(ctx context.Context, path string, lim archive.Limits) (*Info, error) {
	f, size, err := OpenPackage(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := Inspect(ctx, f, size, lim)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return info, nil
}

// OpenPackage opens the .deb at path for reading and returns its size; a
// path that is not a regular file is refused with ErrMalformed.
func OpenPackage(path string) (*os.File, int64, error) {
	// O_NONBLOCK: a FIFO must not block the open; it is refused below.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, 0, malformed("%s: not a regular file (%s)", path, st.Mode().Type())
	}
	return f, st.Size(), nil
}

// maxControlMember bounds each file other than control read from
// control.tar into memory (md5sums of 100,000 files is about 7 MB).
const maxControlMember = 16 << 20

// Inspect reads a .deb of the given size and refuses, with ErrMalformed and
// a message naming the member, entry or field, every package that dpkg-deb
// (--info, --contents, --fsys-tarfile) or dpkg -i would refuse, and a few
// that they accept but that have no place in a repository (each marked
// "stricter than dpkg" below):
//
//   - the ar container as dpkg-deb reads it: debian-binary 2.x first, then
//     control.tar, then data.tar, each once, members named "_..." skipped
//     anywhere, sizes with spaces before or after the digits; stricter:
//     no other member after data.tar, no space among a size's digits
//     (dpkg ignores what follows one), only the compressions dpkg reads
//     (none, gzip, xz, zstd; for data.tar also bzip2 and lzma, which
//     dpkg-deb no longer writes);
//   - an xz member is one stream (and stream padding), a zstd member one
//     frame, a bzip2 member one stream, as dpkg decompresses only the
//     first (onestream.go); a gzip member is one or more streams, as zlib
//     reads them; stricter: nothing after the last gzip or the lzma stream
//     (zlib and liblzma ignore it), no name or comment in a gzip header
//     over 511 bytes (zlib skips them; Go's reader cannot), no lzma
//     dictionary over 64 MiB unless the stream is smaller (liblzma has
//     no bound; xz -9 uses 64 MiB);
//   - control.tar and data.tar as dpkg's own tar reader sees them
//     (tarread.go): header checksums, entry types, no PAX headers in
//     data.tar (in control.tar, which dpkg-deb extracts with GNU tar,
//     PAX headers as GNU tar reads them: tarpax.go);
//     stricter: nothing but zeros after the end-of-archive block, no
//     regular file in data.tar whose name ends in "/" (GNU tar lists a
//     directory);
//   - control.tar holds only regular files with plain names (no "/", no
//     "..", nothing absolute), hardlinks to earlier ones (a maintainer
//     script linked to another, as dpkg-deb --build writes it, read as a
//     copy of it) and its root directory, each once, control among them
//     (stricter: GNU tar, which dpkg-deb runs on it, would also create
//     symlinks, devices and sub-directories, and a script may link only to
//     a file inspect reads); conffiles and triggers as dpkg parses them
//     when it unpacks;
//   - data.tar entry names without a ".." component or a newline, each
//     once, none below a path data.tar holds as a file or link (dpkg
//     cannot unpack below a file; below a symlink it fails on a fresh
//     install, and on an upgrade writes where the link points), names
//     dpkg can create (short enough for NAME.dpkg-new, no final "/." nor,
//     but for a folder's one, "/"), the root a directory, a hardlink's
//     target and a conffile named as their entry is (dpkg matches names
//     as written), uids and gids of 32 bits; stricter: not absolute, no
//     device nodes, a hardlink only to a regular file earlier in data.tar
//     (dpkg links to whatever the target path is on the installing
//     system), no PATH beside PATH.dpkg-tmp or PATH.dpkg-new (dpkg's names
//     for it while it unpacks), mtimes in the years 0 to 9999;
//   - the control file as dpkg parses it, plus what apt needs to keep the
//     repository's index readable (control.ParseStrict, checkControl);
//   - lim's bounds (archive.Budget): decompressed bytes in total and as a
//     ratio of the file's size (DefaultMaxRatio unless lim says), entries
//     (DefaultMaxEntries unless lim says), the size of one file; and ctx,
//     checked between reads, so a long read stops promptly.
func Inspect(ctx context.Context, r io.ReaderAt, size int64, lim archive.Limits) (*Info, error) {
	members, err := readAr(r, size)
	if err != nil {
		return nil, err
	}
	lim = withDefaults(lim)
	in := &inspector{ctx: ctx, lim: lim, bud: archive.NewBudget(ctx, lim, size),
		info:    &Info{MD5Sums: map[string]string{}, Conffiles: []string{}, Scripts: []ScriptInfo{}, Files: []FileInfo{}, Problems: []Problem{}, Warnings: []Problem{}},
		control: map[string]bool{}, controlRead: map[string]controlFile{}, data: map[string]byte{}, below: map[string]bool{}, spelled: map[string]string{}}
	var sawControl, sawData bool
	for i, m := range members {
		mem := Member{Name: m.name, Size: m.size}
		sec := io.NewSectionReader(r, m.offset, m.size)
		switch {
		case i == 0:
			if m.name != "debian-binary" {
				return nil, malformed("first ar member is %q, expected debian-binary", m.name)
			}
			if err := checkDebianBinary(sec, m.size); err != nil {
				return nil, err
			}
		case strings.HasPrefix(m.name, "_"):
			// dpkg-deb skips these (debsigs appends _gpgorigin after data.tar).
		case strings.HasPrefix(m.name, "control.tar") && !sawControl && !sawData:
			cdc, err := memberCodec(m.name, "control.tar")
			if err != nil {
				return nil, err
			}
			mem.Compression = cdc.compression
			if err := in.readTar(sec, cdc, m.name, in.addControl); err != nil {
				return nil, err
			}
			sawControl = true
		case strings.HasPrefix(m.name, "data.tar") && sawControl && !sawData:
			cdc, err := memberCodec(m.name, "data.tar")
			if err != nil {
				return nil, err
			}
			mem.Compression = cdc.compression
			if err := in.readTar(sec, cdc, m.name, in.addData); err != nil {
				return nil, err
			}
			sawData = true
		default:
			return nil, malformed("unexpected ar member %q at position %d: expected debian-binary, control.tar[.gz|.xz|.zst], data.tar[.gz|.xz|.zst|.bz2|.lzma] once each in that order (and members named _*)", m.name, i+1)
		}
		in.info.Members = append(in.info.Members, mem)
	}
	switch {
	case len(members) == 0:
		return nil, malformed("empty ar archive")
	case !sawControl:
		return nil, malformed("no control.tar member")
	case !sawData:
		return nil, malformed("no data.tar member")
	case in.info.Control.Fields == nil:
		return nil, malformed("control.tar has no control file")
	}
	if err := in.checkConffiles(); err != nil {
		return nil, err
	}
	problems, unlisted := in.checkMD5Sums()
	in.info.Problems = append(in.info.Problems, problems...)
	in.info.Warnings = append(in.info.Warnings, unlisted...)
	in.info.Warnings = append(in.info.Warnings, in.checkInstalledSize()...)
	return in.info, nil
}

// DefaultMaxEntries is Inspect's bound on a package's entries (and on the
// folders they lie below) where Limits.MaxEntries is 0. The 100,000 of
// archive.DefaultLimits, for upstream release archives, is below real
// packages: Debian bookworm's papirus-icon-theme holds 116,148 entries,
// fonts-cns11643-pixmaps 111,023. Inspect keeps about 700 bytes an entry
// (measured: 685 MB for a million), some 350 MB at this bound.
const DefaultMaxEntries = 500_000

// DefaultMaxRatio is Inspect's decompression-bomb ratio (Limits.MaxRatio)
// where lim gives none. The 100 of archive.DefaultLimits, for upstream
// release archives, is below real packages: Debian bookworm's
// atlc-examples decompresses to 228 times its size (132 MB),
// libjs-moment-timezone to 178. A bomb of zeros reaches 1,000 (gzip) to
// 7,000 (xz), and Limits.MaxTotal (8 GiB) bounds every package.
const DefaultMaxRatio = 1000

// withDefaults fills lim's zero fields: DefaultMaxEntries,
// DefaultMaxRatio, and for one file of data.tar the whole of
// archive.DefaultLimits' MaxTotal (8 GiB). Its MaxFileSize, 2 GiB, bounds a
// file of an upstream archive handed to a caller; Inspect only hashes a
// file as it streams, and real packages have larger ones: Debian
// bookworm's unidic-mecab installs a matrix.def of 3.7 GB.
func withDefaults(lim archive.Limits) archive.Limits {
	if lim.MaxFileSize <= 0 {
		lim.MaxFileSize = archive.DefaultLimits().MaxTotal
	}
	if lim.MaxEntries <= 0 {
		lim.MaxEntries = DefaultMaxEntries
	}
	if lim.MaxRatio <= 0 {
		lim.MaxRatio = DefaultMaxRatio
	}
	return lim
}

// checkDebianBinary checks the format version as dpkg-deb does: "X.Y" and
// a newline, major 2 (stricter: at most 64 bytes).
func checkDebianBinary(r io.ReaderAt, size int64) error {
	if size > 64 {
		return malformed("debian-binary has %d bytes, expected \"2.0\\n\"", size)
	}
	b := make([]byte, size)
	if _, err := r.ReadAt(b, 0); err != nil && err != io.EOF {
		return err
	}
	line, _, ok := bytes.Cut(b, []byte("\n"))
	major, minor, dot := bytes.Cut(line, []byte("."))
	if !ok || !dot || !allDigits(major) || !allDigits(minor) || len(major) > 9 || len(minor) > 9 || strings.TrimLeft(string(major), "0") != "2" {
		return malformed("debian-binary is %q, expected \"2.0\\n\" (format version 2.x and a newline)", b)
	}
	return nil
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}

// inspector is the state of one Inspect.
type inspector struct {
	ctx     context.Context
	lim     archive.Limits
	bud     *archive.Budget
	info    *Info
	entries int
	control map[string]bool // control.tar file names
	// the control.tar files read (controlNames), for hardlinks to them
	controlRead map[string]controlFile
	data        map[string]byte   // data.tar paths (cleaned) -> type, for duplicates, hardlinks and conffiles
	below       map[string]bool   // the folders data.tar entries lie below (cleaned), which must be directories
	spelled     map[string]string // regular files and hardlinks (cleaned) -> dpkgName, where the two differ
	conf        []conffile        // control.tar's conffiles, checked against data.tar at the end
	md5         []md5Line         // control.tar's md5sums, checked against data.tar at the end
}

// readTar decompresses a member and calls add for each entry. Decoder, tar
// and limit errors are the archive's fault (ErrMalformed); errors reading
// the file and a stopped context are not.
func (in *inspector) readTar(r *io.SectionReader, cdc codec, member string, add func(*tarEntry, io.Reader) error) error {
	bad := func(err error) error {
		var pe *fs.PathError
		switch {
		case in.ctx.Err() != nil && errors.Is(err, in.ctx.Err()):
			return err
		case errors.As(err, &pe):
			return fmt.Errorf("%s: %w", member, err)
		case errors.Is(err, ErrMalformed):
			return fmt.Errorf("%s: %w", member, err)
		case errors.Is(err, archive.ErrLimit):
			return fmt.Errorf("%w: %s: %w", ErrMalformed, member, err)
		case errors.Is(err, io.ErrUnexpectedEOF) && cdc.compression != CompressionNone:
			return malformed("%s: truncated, or followed by bytes that are not %s: %v", member, cdc.compression, err)
		case errors.Is(err, io.ErrUnexpectedEOF):
			return malformed("%s: truncated: %v", member, err)
		}
		return malformed("%s: %v", member, err)
	}
	if err := checkOneStream(r, r.Size(), cdc.compression); err != nil {
		return bad(err)
	}
	zr, err := cdc.newReader(bufio.NewReaderSize(r, 256<<10))
	if err != nil {
		return bad(err)
	}
	defer zr.Close()
	tr := newTarReader(in.bud.Reader(zr))
	tr.gnuTar = strings.HasPrefix(member, "control.tar")
	n := 0
	for {
		h, err := tr.Next()
		if err == errTarEnd {
			break
		}
		if err != nil {
			return bad(err)
		}
		n++
		if in.entries++; in.entries > in.lim.MaxEntries {
			return bad(fmt.Errorf("%w: more than %d entries (Limits.MaxEntries)", archive.ErrLimit, in.lim.MaxEntries))
		}
		if err := add(h, tr); err != nil {
			return bad(err)
		}
	}
	// dpkg takes a data.tar of no entries, only the end-of-archive blocks: a
	// metapackage of a builder that writes no "./" entry (nfpm; Go's
	// archive/tar). Of no bytes at all, GNU tar (dpkg-deb --contents) says
	// it is no tar archive.
	switch {
	case n == 0 && strings.HasPrefix(member, "control.tar"):
		return malformed("%s: empty tar archive", member)
	case n == 0 && tr.off == 0:
		return malformed("%s: no bytes, not even the end-of-archive blocks, which GNU tar (dpkg-deb --contents) refuses", member)
	}
	// Reading to the end also makes the decompressor check the whole stream.
	if err := tr.drain(); err != nil {
		return bad(err)
	}
	return nil
}

func readSmall(name string, r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, malformed("%s is larger than %d bytes", name, limit)
	}
	return b, nil
}

// controlName returns a control.tar entry's file name ("" for the root
// directory), or an error for anything dpkg-deb --build does not write.
func controlName(h *tarEntry) (string, error) {
	name := strings.TrimPrefix(h.Name, "./")
	if name == "" || name == "." || name == "./" {
		if h.Type != tarDir {
			return "", malformed("control.tar entry %q is a %s; the root must be a directory", h.Name, tarTypeName(h.Type))
		}
		return "", nil
	}
	if strings.Contains(name, "/") || name == ".." || strings.ContainsAny(name, "\x00\n") {
		return "", malformed("control.tar entry %q: expected a plain file name such as ./control (no directories, \"..\" or absolute names)", h.Name)
	}
	if h.Type != tarReg && h.Type != tarLink {
		return "", malformed("control.tar entry %q is a %s; control.tar holds only regular files (and hardlinks to them)", h.Name, tarTypeName(h.Type))
	}
	return name, nil
}

// controlFile is a control.tar file updeb reads (control, conffiles,
// md5sums, triggers, a maintainer script), kept for the hardlinks to it.
type controlFile struct {
	content []byte
	mode    int64
}

// controlLink returns the file a control.tar hardlink h links to, false
// when that is a file updeb does not read. dpkg-deb --build writes such a
// link for a maintainer script hardlinked to another in DEBIAN/: GNU tar,
// which dpkg-deb runs on control.tar, links it to that earlier entry, and
// dpkg installs and runs it as a copy of it.
func (in *inspector) controlLink(h *tarEntry) (controlFile, bool, error) {
	target := strings.TrimPrefix(h.Linkname, "./")
	f, read := in.controlRead[target]
	if !read && !in.control[target] {
		return f, false, malformed("control.tar entry %q is a hardlink to %q, which is not a regular file earlier in control.tar (GNU tar, which dpkg-deb runs on it, fails to make the link)", h.Name, h.Linkname)
	}
	return f, read, nil
}

func (in *inspector) addControl(h *tarEntry, r io.Reader) error {
	name, err := controlName(h)
	if err != nil || name == "" {
		return err
	}
	if in.control[name] {
		return malformed("control.tar entry %q appears twice", h.Name)
	}
	mode, readable := h.Mode, true
	if h.Type == tarLink {
		f, read, err := in.controlLink(h)
		if err != nil {
			return err
		}
		r, mode, readable = bytes.NewReader(f.content), f.mode, read
	}
	in.control[name] = true
	info := in.info
	var content []byte
	read := func(limit int64) error {
		if !readable {
			return malformed("control.tar entry %q is a hardlink to %q, which is not a control file or maintainer script: give %s its own content", h.Name, h.Linkname, name)
		}
		var err error
		content, err = readSmall(name, r, limit)
		if err == nil {
			in.controlRead[name] = controlFile{content: content, mode: mode}
		}
		return err
	}
	switch name {
	case "control":
		// Read past the limit, so that ParseStrict can name the field
		// that makes the file too large.
		if err := read(16 * control.MaxStanzaSize); err != nil {
			return err
		}
		p, err := control.ParseStrict(content, "control")
		if err != nil {
			return malformed("%v", err)
		}
		if errs := checkControl(p); len(errs) > 0 {
			return malformed("control: %w", errors.Join(errs...))
		}
		info.Control = p
	case "conffiles":
		if err := read(maxControlMember); err != nil {
			return err
		}
		if in.conf, err = parseConffiles(content); err != nil {
			return err
		}
		for _, c := range in.conf {
			info.Conffiles = append(info.Conffiles, c.line)
		}
	case "md5sums":
		if err := read(maxControlMember); err != nil {
			return err
		}
		// As dpkg --verify reads it (parse_filehash): empty (dpkg and
		// lintian accept it: no sums), or lines of "<md5>  <path>", each
		// with its newline.
		lines, err := controlLines("md5sums", "dpkg --verify", content)
		if err != nil {
			return err
		}
		for i, l := range lines {
			sum, p, ok := strings.Cut(l, "  ")
			if !ok || len(sum) != 32 {
				return malformed("md5sums line %d: expected \"<md5>  <path>\", found %q", i+1, l)
			}
			info.MD5Sums[p] = sum
			in.md5 = append(in.md5, md5Line{line: i + 1, sum: sum, name: p})
		}
	case "triggers":
		if err := read(maxControlMember); err != nil {
			return err
		}
		if err := checkTriggers(content); err != nil {
			return err
		}
		info.Triggers = string(content)
	case "preinst", "postinst", "prerm", "postrm", "config":
		if err := read(maxControlMember); err != nil {
			return err
		}
		info.Scripts = append(info.Scripts, ScriptInfo{Name: name, Mode: fs.FileMode(mode) & fs.ModePerm,
			Size: int64(len(content)), Content: string(content)})
	}
	return nil
}

// maxTriggerLine is the longest line of triggers dpkg reads (its buffer is
// 256 bytes, the newline and a NUL included).
const maxTriggerLine = 254

// checkTriggers checks control.tar's triggers as dpkg does when it unpacks
// the package (trig_parse_ci), which it refuses otherwise: lines of at most
// maxTriggerLine bytes, each with its newline; blank lines and comments
// skipped; else a directive and one trigger name (CheckTrigger), with no
// control character but tab (a carriage return included: dpkg reads it as
// part of the name).
func checkTriggers(content []byte) error {
	lines, err := controlLines("triggers", "dpkg", content)
	if err != nil {
		return err
	}
	for i, l := range lines {
		if len(l) > maxTriggerLine {
			return malformed("triggers line %d: %d bytes, more than the %d dpkg reads in a line", i+1, len(l), maxTriggerLine)
		}
		l = strings.Trim(l, " \t")
		if l == "" || l[0] == '#' {
			continue
		}
		if j := strings.IndexFunc(l, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }); j >= 0 {
			return malformed("triggers line %d: control character %q", i+1, l[j])
		}
		if err := CheckTrigger(l); err != nil {
			return malformed("triggers line %d: %v (dpkg refuses it)", i+1, err)
		}
	}
	return nil
}

// conffile is one line of control.tar's conffiles.
type conffile struct {
	line   string // as written, without trailing whitespace
	path   string // the absolute path
	remove bool   // flagged remove-on-upgrade: the package must not ship it
}

// conffileFlagRemove is the one flag dpkg (1.20.1 and later) knows.
const conffileFlagRemove = "remove-on-upgrade"

// parseConffiles reads conffiles as dpkg does (deb_parse_conffiles): one
// name a line, trailing whitespace ignored, blank lines skipped, a final
// newline, an optional flag before the name ("remove-on-upgrade /etc/x";
// any other flag, an empty one from a leading space included, is refused),
// and an absolute name, on a line of at most MaxConffileLine bytes.
// Stricter: the name is clean (no "." or ".." component, no "//" or
// trailing "/"), as dpkg's database and md5sums record it, and listed once.
func parseConffiles(content []byte) ([]conffile, error) {
	lines, err := controlLines("conffiles", "dpkg", content)
	if err != nil {
		return nil, err
	}
	var out []conffile
	seen := map[string]bool{}
	for i, l := range lines {
		if len(l) > MaxConffileLine {
			return nil, malformed("conffiles line %d: %q is %d bytes long, and dpkg -i refuses a line of more than %d (\"conffile name ... is too long\")", i+1, shorten(l), len(l), MaxConffileLine)
		}
		l = strings.TrimRight(l, ConffileSpace)
		if l == "" {
			continue
		}
		c := conffile{line: l, path: l}
		if !strings.HasPrefix(l, "/") {
			flag, name, ok := strings.Cut(l, " ")
			switch {
			case !ok || name == "" || name[0] != '/':
				return nil, malformed("conffiles line %d: %q is not an absolute path (dpkg refuses it)", i+1, l)
			case flag != conffileFlagRemove:
				return nil, malformed("conffiles line %d: unknown flag %q before %q: dpkg knows only %s", i+1, flag, name, conffileFlagRemove)
			}
			c.path, c.remove = name, true
		}
		if c.path == "/" || path.Clean(c.path) != c.path || strings.ContainsAny(c.path, "\x00") {
			return nil, malformed("conffiles line %d: %q: expected an absolute, clean path below / (no ., .., // or trailing /; stricter than dpkg, which would record a name no file has)", i+1, c.path)
		}
		if seen[c.path] {
			return nil, malformed("conffiles line %d: %q is listed twice (stricter than dpkg)", i+1, c.path)
		}
		seen[c.path] = true
		out = append(out, c)
	}
	return out, nil
}

// controlLines splits the control.tar file name into its lines: none when
// it is empty; each must end in a newline, which who requires.
func controlLines(name, who string, content []byte) ([]string, error) {
	s := string(content)
	if s == "" {
		return nil, nil
	}
	if !strings.HasSuffix(s, "\n") {
		return nil, malformed("%s: no newline at the end (%s refuses it)", name, who)
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n"), nil
}

// checkConffiles checks the conffiles against data.tar: dpkg refuses a
// remove-on-upgrade conffile the package ships, and fails to unpack one that
// is a folder; stricter, a conffile must be a regular file (or a hardlink to
// one) of data.tar: one the package does not ship is a package built wrong
// (lintian: conffile-is-not-in-package).
func (in *inspector) checkConffiles() error {
	for _, c := range in.conf {
		name := strings.TrimPrefix(c.path, "/")
		typ, shipped := in.data[name]
		spelled, otherwise := in.spelled[name]
		switch {
		case c.remove && shipped:
			return malformed("conffiles: %q is marked %s but data.tar ships it (dpkg refuses it)", c.path, conffileFlagRemove)
		case c.remove:
		case !shipped:
			return malformed("conffiles: %q is not in data.tar (stricter than dpkg: a conffile the package does not ship is a package built wrong)", c.path)
		case typ != tarReg && typ != tarLink:
			return malformed("conffiles: %q is a %s in data.tar; a conffile is a regular file", c.path, tarTypeName(typ))
		case otherwise:
			// dpkg matches conffiles to data.tar's names as written.
			return malformed("conffiles: %q is named %q in data.tar, which dpkg does not take for it: it would install the file as no conffile, replaced without a word on upgrade; name it %q", c.path, "./"+spelled, "./"+name)
		}
	}
	return nil
}

// dataPath checks a data.tar entry name and returns it cleaned ("." for
// the root).
func dataPath(name string) (string, error) {
	switch {
	case strings.ContainsAny(name, "\n\x00"):
		return "", malformed("data.tar entry %q: a newline in a name, which dpkg refuses", name)
	case strings.HasPrefix(name, "/"):
		return "", malformed("data.tar entry %q: an absolute name; dpkg-deb writes ./path (stricter than dpkg)", name)
	}
	for _, c := range strings.Split(name, "/") {
		if c == ".." {
			return "", malformed("data.tar entry %q: a \"..\" component, which could write outside the installation root", name)
		}
	}
	clean := path.Clean(name)
	// dpkg unpacks "usr/f/." as a file named "." in usr/f, and fails; a
	// folder so named it makes only where usr/f is one already, and
	// records as another path than usr/f (stricter: refused too).
	if clean != "." && strings.HasSuffix(strings.TrimRight(name, "/"), "/.") {
		return "", malformed("data.tar entry %q: a name ending in \".\", which dpkg cannot unpack; name it %q", name, "./"+clean)
	}
	return clean, nil
}

// dpkgNames are the names dpkg gives PATH while it unpacks it: data.tar
// must not have both PATH and one of them (stricter than dpkg, which
// takes it).
var dpkgNames = []struct{ suffix, why string }{
	{".dpkg-tmp", "dpkg deletes PATH.dpkg-tmp, its backup of what PATH replaced, once it has unpacked the package: the one would be listed and gone"},
	{".dpkg-new", "dpkg unpacks PATH as PATH.dpkg-new and then renames it into place: PATH.dpkg-new first, PATH gets its content and it is gone"},
}

// checkBackupName refuses an entry at PATH.dpkg-tmp or PATH.dpkg-new
// where data.tar has PATH, or at PATH where it has either (dpkgNames; Write
// refuses PATH.dpkg-tmp too).
func (in *inspector) checkBackupName(h *tarEntry, clean string) error {
	for _, n := range dpkgNames {
		// {PATH, its name}: with this entry as the one, then as the other.
		for _, pair := range [][2]string{{clean, clean + n.suffix}, {strings.TrimSuffix(clean, n.suffix), clean}} {
			other := pair[1]
			if other == clean {
				other = pair[0]
			}
			if _, ok := in.data[other]; ok && pair[0] != pair[1] {
				return malformed("data.tar entry %q: data.tar has %q and %q, and %s", h.Name, "./"+pair[0], "./"+pair[1], n.why)
			}
		}
	}
	return nil
}

// dpkgName is a data.tar name as dpkg looks it up: without its leading
// "/" and "./" (path_skip_slash_dotslash), nothing else cleaned.
func dpkgName(name string) string {
	for name != "" && (name[0] == '/' || strings.HasPrefix(name, "./")) {
		name = name[1:]
	}
	return name
}

// checkParents refuses an entry below a path that data.tar holds as
// something other than a directory, and an entry other than a directory
// at a path earlier entries lie below. dpkg cannot unpack below a file;
// below a symlink of the package it fails on a fresh install, and on an
// upgrade (the link already on the system) it writes where the link points,
// outside the installation root too, while the package lists the path
// below the link.
func (in *inspector) checkParents(h *tarEntry, clean string) error {
	if h.Type != tarDir && in.below[clean] {
		return malformed("data.tar entry %q is a %s, but earlier entries lie below it; dpkg cannot unpack them", h.Name, tarTypeName(h.Type))
	}
	// clean is clean and relative: each folder above it is the text before
	// one of its slashes (path.Dir would clean each again, which for a
	// name of 2,000 components is quadratic).
	for dir := clean; ; {
		i := strings.LastIndexByte(dir, '/')
		if i < 0 {
			break
		}
		dir = dir[:i]
		if typ, ok := in.data[dir]; ok && typ != tarDir {
			return malformed("data.tar entry %q lies below %q, which is a %s in data.tar, not a directory: dpkg cannot unpack below a file, and below a symlink it writes where the link points", h.Name, dir, tarTypeName(typ))
		}
		if in.below[dir] {
			break // its parents were checked and recorded with it
		}
		// Bounded as entries are: without a bound, 13,000 entries of 2,000
		// folders each, 64 MiB of tar from a file of 100 KB, would record
		// 26 million folders (over 1 GB). A real package lists its
		// folders as entries, so it has fewer folders than entries.
		if len(in.below) >= in.lim.MaxEntries {
			return fmt.Errorf("%w: data.tar entry %q: its entries lie below more than %d folders (Limits.MaxEntries)", archive.ErrLimit, shorten(h.Name), in.lim.MaxEntries)
		}
		in.below[dir] = true
	}
	return nil
}

// The mtimes FileInfo holds: the years 0 to 9999, all that RFC 3339 and so
// encoding/json write (a tar header's base-256 mtime goes far beyond).
var (
	minMTime = time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	maxMTime = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC).Unix()
)

func (in *inspector) addData(h *tarEntry, r io.Reader) error {
	clean, err := dataPath(h.Name)
	if err != nil {
		return err
	}
	if _, dup := in.data[clean]; dup {
		return malformed("data.tar entry %q: %q appears twice (which one dpkg installs is not what a reviewer sees)", h.Name, clean)
	}
	// dpkg fails to unpack a file at the root ("unable to move aside '.'");
	// a symlink there it skips, keeping the root a folder and unpacking
	// what follows into it (stricter: the listing would show a link that
	// is never installed).
	if clean == "." && h.Type != tarDir {
		return malformed("data.tar entry %q is a %s; the root must be a directory", h.Name, tarTypeName(h.Type))
	}
	// dpkg makes an entry at its name less a folder's final "/": a link or
	// a fifo named with one, or a folder with two, it makes in a folder of
	// that name, where nothing is ("error creating symbolic link './l/'").
	name := h.Name
	if h.Type == tarDir {
		name = strings.TrimSuffix(name, "/")
	}
	if clean != "." && strings.HasSuffix(name, "/") {
		want := "./" + clean
		if h.Type == tarDir {
			want += "/"
		}
		return malformed("data.tar entry %q: a %s whose name ends in \"/\" (a folder's in \"//\"), which dpkg cannot create; name it %q", h.Name, tarTypeName(h.Type), want)
	}
	if problem := PathLengthProblem("/" + strings.TrimSuffix(dpkgName(h.Name), "/")); problem != "" {
		return malformed("data.tar entry %q %s (it fails with \"File name too long\")", shorten(h.Name), problem)
	}
	if err := in.checkParents(h, clean); err != nil {
		return err
	}
	switch h.Type {
	case tarChar, tarBlockDv:
		return malformed("data.tar entry %q is a device node; packages in a repository carry none (stricter than dpkg)", h.Name)
	case tarLink:
		target, err := dataPath(h.Linkname)
		if err != nil {
			return malformed("data.tar hardlink %q to %q: %v", h.Name, h.Linkname, err)
		}
		if in.data[target] != tarReg {
			return malformed("data.tar hardlink %q to %q: the target must be a regular file earlier in data.tar (dpkg would link to whatever is at that path on the system)", h.Name, h.Linkname)
		}
		// dpkg finds the file it unpacked by the target's name as
		// written (./usr//f is not ./usr/f to it), and else links to
		// the path, where nothing is yet ("error creating hard link").
		want, ok := in.spelled[target]
		if !ok {
			want = target
		}
		if dpkgName(h.Linkname) != want {
			return malformed("data.tar hardlink %q to %q: dpkg finds its target only by the name data.tar gives it, %q", h.Name, h.Linkname, "./"+want)
		}
	case tarSymlink:
		if h.Linkname == "" {
			return malformed("data.tar symlink %q has an empty target", h.Name)
		}
		if len(h.Linkname) > maxSymlinkTarget {
			return malformed("data.tar symlink %q: its target is %d bytes long: Linux takes at most %d (dpkg's symlink fails with \"File name too long\")", shorten(h.Name), len(h.Linkname), maxSymlinkTarget)
		}
	case tarReg:
		if h.Size > in.lim.MaxFileSize {
			return fmt.Errorf("%w: data.tar entry %q: %d bytes, more than the %d-byte limit for one file (Limits.MaxFileSize)", archive.ErrLimit, h.Name, h.Size, in.lim.MaxFileSize)
		}
	}
	if h.MTime < minMTime || h.MTime > maxMTime {
		return malformed("data.tar entry %q: mtime %d seconds is outside the years 0 to 9999, which RFC 3339 (inspect --json) can write (stricter than dpkg)", h.Name, h.MTime)
	}
	if err := in.checkBackupName(h, clean); err != nil {
		return err
	}
	in.data[clean] = h.Type
	if n := dpkgName(h.Name); (h.Type == tarReg || h.Type == tarLink) && n != clean {
		in.spelled[clean] = n
	}
	fi := FileInfo{Path: h.Name, Type: tarTypeName(h.Type), Mode: FileMode(uint32(h.Mode & 0o7777)), UID: int(h.UID), GID: int(h.GID), Uname: h.Uname,
		Gname: h.Gname, Size: h.Size, MTime: time.Unix(h.MTime, 0).UTC(), Linkname: h.Linkname}
	if h.Type == tarReg {
		m := md5.New()
		if _, err := io.Copy(m, r); err != nil {
			return err
		}
		fi.MD5 = hex.EncodeToString(m.Sum(nil))
	}
	in.info.Files = append(in.info.Files, fi)
	return nil
}
