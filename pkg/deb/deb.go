// Package deb writes Debian binary packages (.deb) the way dpkg-deb --build does,
// from entries whose content is streamed, and reads them back for inspection.
//
// The contract of Write:
//   - It validates the whole Package before a byte is written and reports every
//     problem in one error wrapping ErrInvalid.
//   - The output path is then either the complete package or untouched: the
//     package is written to a temporary file in the same folder, fsynced and
//     renamed, and every temporary file is removed on every path.
//   - The same Package gives byte-identical output on every machine: entry
//     order is dpkg-deb's, modes and owners are the Package's (written as
//     given, never from the host), mtimes are clamped, every compressor
//     setting is pinned, and nothing is read from the host (no umask,
//     clock, user names or locale).
//   - Content is streamed: each entry is opened once, in output order, and
//     data.tar is compressed into a temporary file next to the output, so
//     memory stays flat however large the payload is.
//
// Inspect and InspectFile read any .deb (dpkg-deb's too); damage is an error
// wrapping ErrMalformed, an I/O error is returned as it is. Recompress
// copies a .deb with its control.tar and data.tar in another compression
// (for a tool that reads fewer than dpkg: Debian 12's lintian, no zstd).
//
// xz members are written by pkg/xzpar's LZMA2 encoder in one of two modes
// (Package.XZMode): fast, the default (lazy matching, 32 MiB blocks, 16 MiB
// dictionary), or best (optimal parsing, the same blocks and dictionary, 2
// to 3 times the CPU for 5 to 10% less on binaries and 14% on text; a block
// over 8 MiB is coded in 4 MiB segments that idle workers share). A package
// smaller than a block is one block whose dictionary is the package's size;
// larger ones are cut into blocks compressed by Package.Pool, the workers
// and memory every package of a process shares (PoolMemory: 344 MiB for two
// workers by default; NewPoolBlocks for more room), or Package.XZWorkers
// workers of the package's own (two hold about 230 MiB, pkg/xzpar's
// formula), with the same bytes for any count. data.tar of amd64 and i386
// packages gets the x86 BCJ filter (5% smaller on Go binaries); dpkg's
// liblzma decodes it, and so does pkg/xzpar's NewReader, which InspectFile
// uses. zstd members are level 3 in 16 MiB jobs compressed Package.XZWorkers
// (at least two) at once, again the same bytes for any count. Measured on Go
// binaries (29 and 335 MiB, 2 cores, dpkg-deb running xz's two threads) on
// a CPU with SHA-NI: fast takes 0.24-0.40x dpkg-deb -Zxz's wall time at
// 1.00-1.03x its size, best 0.40-0.75x at 0.90-0.98x; zstd 1.26-1.32x
// dpkg-deb -Zzstd's wall (medians of 5 rounds) at 1.005-1.017x its size. On
// a CPU without SHA-NI, where liblzma was relatively faster, best took
// 0.63-0.83x (up to 1.02x in single rounds) and zstd 1.55-1.68x; on Go
// source, with dpkg-deb given the same md5sums, fast is 1.15x dpkg-deb's
// size and best 0.998x (1.017x on Python source). Without SHA-NI sha256
// runs at about 200 MB/s, so the files' digests are taken by two
// goroutines beside data.tar's writer and Entry.NoSHA256 skips the sha256
// of a file whose digest the caller does not use.
// Tables: cmd/updeb-bench/README.md.
package deb

import (
	"errors"
	"io"
	"io/fs"
	"time"

	"github.com/updeb/updeb/pkg/control"
)

// ErrInvalid is wrapped by every validation error of Write: the Package cannot
// become a correct .deb. The message names the field and its value.
var ErrInvalid = errors.New("deb: invalid package")

// AncientBefore is the first time lintian does not call ancient: it reports
// a file dated 1975 or before (package-contains-ancient-file, an error; dak's
// Dinstall::PastCutOffYear). An entry's time before it takes
// SourceDateEpoch, which must not be before it.
var AncientBefore = time.Date(1976, 1, 1, 0, 0, 0, 0, time.UTC)

// ErrMalformed is wrapped by every error of the reader about the archive's bytes
// (as opposed to an I/O error reading them).
var ErrMalformed = errors.New("deb: malformed package")

// Control is the metadata of DEBIAN/control. Installed-Size is computed by Write.
type Control struct {
	Package, Version, Architecture, Maintainer string
	// Relations, one per element (each may hold alternatives "a | b"); joined ", ".
	PreDepends, Depends, Recommends, Suggests, Enhances, Conflicts, Breaks, Replaces, Provides []string
	Section, Priority, MultiArch, Homepage                                                     string
	// Summary is the Description's synopsis line.
	Summary string
	// Description is the extended description: lines are kept (a line starting
	// with a space is shown verbatim by apt), blank lines become " .".
	Description string
	// Extra holds further fields (Source, Built-Using, Essential, ...). They are
	// placed in dpkg's field order; fields dpkg does not know go last, in order.
	Extra []control.Field
}

// EntryType is the kind of a data entry.
type EntryType int

const (
	TypeFile EntryType = iota
	TypeDir
	TypeSymlink
	TypeHardlink
)

func (t EntryType) String() string {
	switch t {
	case TypeFile:
		return "file"
	case TypeDir:
		return "dir"
	case TypeSymlink:
		return "symlink"
	case TypeHardlink:
		return "hardlink"
	}
	return "unknown"
}

// Entry is one filesystem object of the package.
//
// Mode is written exactly as given: the permission bits (0640 stays 0640,
// 0750 stays 0750) and fs.ModeSetuid, fs.ModeSetgid and fs.ModeSticky as
// the tar member's 04000, 02000 and 01000 bits. A zero Mode means the type's
// default, as dpkg-deb's packages have it: 0644 for a file, 0755 for a
// directory. Symlinks are 0777 (Mode must be zero or 0777, without special
// bits); a hardlink has its target's mode and owner (leave Mode and Owner
// zero). Any other bit (a type bit from os.Stat, fs.ModeDevice, chmod's
// 04000 given as fs.FileMode(0o4755), ...) is refused, the error naming
// it in octal: the writer never guesses what a mode was meant to be
// (FileMode converts a chmod mode).
//
// Parent directories that are not listed are added (root:root, 0755).
type Entry struct {
	// Path is absolute and clean: "/usr/bin/helm"; any bytes but NUL and
	// newline (dpkg's rule), short enough for dpkg to unpack (MaxPath,
	// MaxName), and not P.dpkg-tmp for a path P of the package (dpkg
	// deletes that name once it has unpacked P).
	Path string
	Type EntryType
	Mode fs.FileMode
	// Owner is who owns the entry; the zero value is root:root.
	Owner Owner
	// Size and Open are for TypeFile only: Open is called once, in output order,
	// and must yield exactly Size bytes.
	Size int64
	Open func() (io.ReadCloser, error)
	// OpenSized replaces Size and Open (leave both unset) for content whose
	// size is known only once it is at hand, such as a member of an archive
	// being streamed: called once, in output order, it returns the content
	// and its exact size, before the entry's tar header is written.
	// Installed-Size is computed from the sizes learnt this way (control.tar
	// is written after data.tar), so the bytes are those of Size and Open.
	OpenSized func() (io.ReadCloser, int64, error)
	// Linkname is a symlink's target (as written, relative or absolute) or a
	// hardlink's target: the absolute Path of a TypeFile entry.
	Linkname string
	// ModTime is clamped to Package.SourceDateEpoch; zero, or a time
	// before AncientBefore (Nix's mtime 1, the time of an archive that kept
	// none), means SourceDateEpoch.
	ModTime time.Time
	// NoSHA256 leaves a TypeFile entry's FileResult.SHA256 empty: its sha256
	// is not computed. Where the CPU has no SHA-NI, sha256 runs at about
	// 200 MB/s, half of what zstd costs; a caller that needs the digests of
	// a few files only asks for those. md5 (for md5sums) is always taken.
	NoSHA256 bool
}

// Owner is who owns an entry of data.tar, by name and by number, as
// dpkg-deb writes its members. dpkg gives the installed file the id the
// installing system has for the name, and the number only where that
// system has no such name. The zero value is root:root (0:0). A name is
// what a tar member can carry (at most 31 bytes, letters, digits, "_", "-",
// "." and a final "$", not starting with "-"); an empty name requires id 0.
type Owner struct {
	User  string // "" means root
	UID   int
	Group string // "" means root
	GID   int
}

// Script is a maintainer script in control.tar.
type Script struct {
	Name    string // preinst, postinst, prerm, postrm or config
	Content []byte
	Mode    fs.FileMode // 0 means 0755; else must be >= 0555 and <= 0775, as dpkg-deb requires
}

// Package is everything Write needs.
type Package struct {
	Control   Control
	Entries   []Entry
	Scripts   []Script
	Conffiles []string // absolute paths of TypeFile entries
	Triggers  string   // content of DEBIAN/triggers; empty means none
	// SourceDateEpoch is the mtime of every entry and ar member (later mtimes are
	// clamped to it). Required, and not before AncientBefore (1976).
	SourceDateEpoch time.Time
	Compression     Compression // "" means xz
	// XZWorkers is how many xz blocks (or zstd jobs) of data.tar are
	// compressed at once (0: DefaultXZWorkers). It changes speed and memory,
	// never the bytes: set it from configuration, not from the CPU count, to
	// keep memory predictable.
	XZWorkers int
	// Pool, when set, compresses data.tar instead of XZWorkers workers of
	// the package's own: the workers and memory it shares with every
	// other package written with it at the same time (see Pool). It
	// changes speed and memory, never the bytes.
	Pool *Pool
	// XZMode is the xz encoder's mode ("" means XZFast). It changes the bytes.
	XZMode XZMode
	// Amend, when set, is called once data.tar is written and before the
	// control file is: a caller that learns a control field from the
	// files' bytes (the shared libraries its binaries need, as
	// dpkg-shlibdeps does) sets it on c then. The control is checked again
	// after it; an error it returns fails the write.
	Amend func(c *Control) error
	// Progress, when set, is called as data.tar is written, with the bytes of
	// data.tar so far (in) and the compressed bytes written so far (out): a
	// caller can show a long compression moving. It is called on the writing
	// goroutine, often: keep it cheap.
	Progress func(in, out int64)
}

// XZMode selects the xz encoder: XZFast (lazy matching) or XZBest (optimal
// parsing: smaller, about twice the CPU).
type XZMode string

const (
	XZFast XZMode = "fast"
	XZBest XZMode = "best"
)

// FileResult describes one regular file of the written package (hardlinks too).
type FileResult struct {
	Path   string // absolute: "/usr/bin/helm"
	Size   int64
	MD5    string
	SHA256 string // "" for an Entry with NoSHA256 (a hardlink: its target's)
}

// Result describes a written package.
type Result struct {
	Path          string
	Size          int64
	SHA256        string
	InstalledSize int64 // KiB, as in the control file
	Files         []FileResult
}
