// Package archive reads the few files a recipe names out of an upstream release
// artifact (tar.gz, tar.xz, plain tar, zip, or a raw binary) in one pass, and
// streams each to a callback. It never extracts a tree to disk, and it refuses
// hostile archives: path traversal, absolute names, links that escape, special
// files, duplicate entries, and decompression past a size limit.
//
// Strictness, on purpose: an upstream release archive is a handful of regular
// files and directories. Anything unusual in ANY entry, wanted or not (a ".."
// component, an absolute or drive-letter name, a NUL or newline in a name, a
// name or link target longer than Linux takes (4095 bytes, 255 a component), a
// symlink whose target leaves the archive root, a hardlink to anything but an
// earlier regular file of the archive, a device node or fifo, the same path
// twice, an entry inside a path that is a symlink or file of the archive, a
// name ending in "/" on anything but a directory, a tar directory, link,
// device or fifo whose header declares data, a pax global header that sets a
// name, link target, size or sparse map for the entries after it, or that
// follows a local pax or GNU long name header (archive/tar drops it, other
// readers apply it to the entry after the global header), two local pax
// headers, or two GNU long name or long link headers, before one tar entry
// (Python's tarfile takes the first, other readers the last), a tar entry whose
// pax header gives its name or link target otherwise than the GNU long name or
// link header or ustar field archive/tar takes, or whose name prefix
// archive/tar reads otherwise than GNU tar (from a GNU header's time fields,
// or star's shorter prefix field) or Python's tarfile (from a V7 header,
// which has no prefix field), or whose size field bsdtar and Python read
// otherwise (digits after a NUL, which they take for 0), a Solaris extended header (tar type X,
// which other readers apply to the next entry), a zip entry whose Unicode path
// field names it otherwise, or whose name Python's zipfile reads as another
// entry's (a name without the UTF-8 flag is code page 437 to it), whose local header, data descriptor or xl field
// (libarchive's copy of its mode) says otherwise than its central directory
// record (name, flags, method, CRC-32, sizes, mode) or lies inside another
// entry's, a zip directory with data or whose name does not end in "/", bytes
// before a zip's central directory that no entry it lists holds (but a data
// descriptor, or a self-extracting stub that does not start as a zip record),
// a stored zip entry whose data holds its own data descriptor, a deflated one
// whose stream ends before its data does: streaming readers take a local
// header there, or after such a descriptor or stream, for an entry), refuses
// the whole archive with ErrUnsafe. updeb never extracts, so an unwanted
// escaping link could not hurt it; but an archive that carries one is not a
// clean release and a human should look before it is packaged. Names dpkg
// takes are taken: spaces, backslashes (systemd's "\x2d"; in a zip, only in a
// name with a "/": bsdtar and unzip read those of a name without one as folder
// separators), UTF-8.
//
// A hardlink to an earlier regular file of the same tar archive is that
// file, as tar and dpkg read it: wanted, it is handed out with the file's
// content, size and mode under its own name (the archive is read again for
// it, from the same open file, up to once per hardlink to one file; every
// byte counts against the same Limits). Zip archives have no hardlinks.
//
// The contract of Select: every refusal is an *Error whose Kind is one of the
// Err* sentinels (errors.Is works on both); what the callback produced must be
// discarded unless Select returns nil, since a tar archive's verdict may come
// at its end; reads are bounded by Limits (decompressed bytes, file size,
// entries) whatever the archive claims.
package archive

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/text/unicode/norm"

	"github.com/updeb/updeb/pkg/ctxio"
	"github.com/updeb/updeb/pkg/digest"
	"github.com/updeb/updeb/pkg/utf8cut"
)

// Kind is an artifact's container format.
type Kind string

const (
	TarGz Kind = "tar.gz"
	Tgz   Kind = "tgz" // alias of TarGz
	TarXz Kind = "tar.xz"
	Tar   Kind = "tar"
	Zip   Kind = "zip"
	// Raw is an artifact that is itself the one file (a bare binary).
	Raw Kind = "raw"
)

// kindSuffixes maps file-name suffixes to kinds, longest first so ".tar.gz"
// wins over ".gz"-less ".tar".
var kindSuffixes = []struct {
	suffix string
	kind   Kind
}{
	{".tar.gz", TarGz}, {".tgz", TarGz}, {".tar.xz", TarXz}, {".txz", TarXz}, {".tar", Tar}, {".zip", Zip},
}

// KindFromName guesses the kind from a file name's suffix (.tar.gz .tgz .tar.xz
// .txz .tar .zip, case-insensitive). It returns false for anything else; whether
// such a file is Raw is the caller's (the recipe's) decision, not a guess.
// .tgz gives TarGz and .txz gives TarXz.
func KindFromName(name string) (Kind, bool) {
	lower := strings.ToLower(name)
	for _, s := range kindSuffixes {
		if strings.HasSuffix(lower, s.suffix) {
			return s.kind, true
		}
	}
	return "", false
}

// contentFormats are the first bytes by which tar, bsdtar and file(1) tell
// the formats of release artifacts apart whatever the file's name, and the
// kind that reads each ("" for those updeb does not unpack).
var contentFormats = []struct {
	magic string
	at    int
	name  string
	kind  Kind
}{
	{"\x1f\x8b", 0, "gzip data", TarGz},
	{"\xfd7zXZ\x00", 0, "xz data", TarXz},
	{"ustar", 257, "a plain tar archive", Tar},
	{"PK\x03\x04", 0, "a zip archive", Zip},
	{"\x7fELF", 0, "an ELF executable", Raw},
	{"\x28\xb5\x2f\xfd", 0, "zstd data", ""},
	{"BZh", 0, "bzip2 data", ""},
	{"7z\xbc\xaf\x27\x1c", 0, "a 7-Zip archive", ""},
}

// ContentFormat names the format of the data that starts with head (the
// first 512 bytes of a file, or all of a shorter one) by its first bytes,
// as tar, bsdtar and file(1) tell it, and the kind that reads it: Raw for
// an ELF executable, "" for an archive or compression updeb does not
// unpack (zstd, bzip2, 7-Zip); ok is false for anything else.
func ContentFormat(head []byte) (name string, kind Kind, ok bool) {
	for _, f := range contentFormats {
		if strings.HasPrefix(string(head[min(f.at, len(head)):]), f.magic) {
			return f.name, f.kind, true
		}
	}
	return "", "", false
}

// formatMismatch says what the data that starts with head is, when its
// first bytes name another format than kind: for a refusal of an artifact
// whose name or recipe says one format and whose bytes are another (tar
// and bsdtar go by the bytes); "" otherwise.
func formatMismatch(head []byte, kind Kind) string {
	if kind == Tgz {
		kind = TarGz
	}
	name, found, ok := ContentFormat(head)
	switch {
	case !ok || found == kind:
		return ""
	case found == "":
		return fmt.Sprintf("the file is %s, not %s, the kind it is read as (tar and bsdtar tell the format by the bytes): updeb does not unpack %s", name, kind, name)
	}
	return fmt.Sprintf("the file is %s, not %s, the kind it is read as (tar and bsdtar tell the format by the bytes): write kind: %s", name, kind, found)
}

// withFormat returns err, a refusal of the archive as corrupt before any
// entry was read, as formatMismatch's when the file, which starts with
// head, is of another format than kind.
func (s *scan) withFormat(err error, kind Kind, head []byte) error {
	var own *Error
	if s.entries > 0 || !errors.As(err, &own) || own.Kind != ErrCorrupt {
		return err
	}
	if msg := formatMismatch(head, kind); msg != "" {
		return s.errorf(ErrCorrupt, "", nil, "%s", msg)
	}
	return err
}

// ParseKind checks a kind written in a recipe. It accepts the Kind constants.
func ParseKind(s string) (Kind, error) {
	switch k := Kind(s); k {
	case TarGz, Tgz, TarXz, Tar, Zip, Raw:
		return k, nil
	}
	return "", fmt.Errorf("archive: unknown kind %q (want one of tar.gz, tgz, tar.xz, tar, zip, raw)", s)
}

// Limits bound what one Select call may read. A zero field means its default
// (see DefaultLimits).
type Limits struct {
	// MaxFileSize is the largest wanted member, in bytes.
	MaxFileSize int64
	// MaxTotal bounds the decompressed bytes read across the whole archive,
	// including headers and skipped entries: the decompression-bomb guard.
	// A zip's deflated entries are inflated once to be checked, and the
	// wanted ones again as they are handed out: both reads count.
	MaxTotal int64
	// MaxEntries bounds the number of entries (of any type) in the archive.
	// A zip archive's central directory, which is read whole before its
	// entries are counted, may hold at most 512 bytes per entry (plus 1 MiB).
	MaxEntries int
	// MaxRatio bounds the decompressed bytes to MaxRatio times the
	// archive's compressed size, plus RatioFloor: a bomb is refused after
	// a few hundred MB instead of MaxTotal.
	MaxRatio int64
}

// DefaultLimits fit Kubernetes server tarballs (several hundred MB, with image
// tars inside) with a wide margin. The ratio, 100, is twenty times what xz
// reaches on Go binaries (about 4) and far below what a bomb of zeros
// reaches (gzip 1000, xz 7000).
func DefaultLimits() Limits {
	return Limits{MaxFileSize: 2 << 30, MaxTotal: 8 << 30, MaxEntries: 100000, MaxRatio: 100}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxFileSize <= 0 {
		l.MaxFileSize = d.MaxFileSize
	}
	if l.MaxTotal <= 0 {
		l.MaxTotal = d.MaxTotal
	}
	if l.MaxEntries <= 0 {
		l.MaxEntries = d.MaxEntries
	}
	if l.MaxRatio <= 0 {
		l.MaxRatio = d.MaxRatio
	}
	return l
}

// Member is one wanted file handed to Select's callback.
type Member struct {
	// Name is the cleaned path inside the archive, as requested ("bridge" for
	// an entry stored as "./bridge"); "" for a Raw artifact.
	Name string
	// Size is the exact number of bytes the callback's reader yields.
	Size int64
	// Mode is the stored permission bits (with setuid, setgid and sticky bits if
	// set); never a type bit, since only regular files are handed out. 0 for a
	// Raw artifact, which carries no mode: the recipe decides.
	Mode fs.FileMode
}

// Errors callers branch on; every error Select returns about the archive is an
// *Error whose Kind is one of these. ErrLimit, ErrNotRegular and ErrSparse
// also match ErrUnsafe with errors.Is, and ErrSparse matches ErrNotRegular.
var (
	// ErrUnsafe: the archive is hostile or unclean (see the package comment).
	ErrUnsafe = errors.New("archive: unsafe archive")
	// ErrLimit: a Limits bound was passed (decompression bomb, huge file, too many entries).
	ErrLimit = errors.New("archive: limit exceeded")
	// ErrNotRegular: a wanted path is a directory, link, device, fifo or sparse file.
	ErrNotRegular = errors.New("archive: wanted member is not a regular file")
	// ErrSparse: a wanted path is a sparse tar member (GNU tar -S, GNU's pax
	// sparse formats 0.0, 0.1 and 1.0, star's or Solaris's records): its
	// data is stored without its holes, and tar readers rebuild it otherwise
	// (or not at all), so its bytes are not one thing to package. It is
	// refused as the other non-regular members are, and told apart for the
	// user, for whom the way out differs: no other path in this archive is
	// the file.
	ErrSparse = errors.New("archive: wanted member is a sparse file")
	// ErrCorrupt: truncated data, a checksum mismatch, a malformed header, trailing garbage.
	ErrCorrupt = errors.New("archive: corrupt archive")
	// ErrMissing: a wanted member is not in the archive.
	ErrMissing = errors.New("archive: wanted member not found")
	// ErrWant: the want list itself is invalid (an unsafe or duplicate name); a recipe error.
	ErrWant = errors.New("archive: invalid wanted name")
)

// Error describes what was refused: which archive, which entry, and why.
type Error struct {
	Archive string // the path given to Select
	Entry   string // the entry's name as stored in the archive; "" when about the whole archive
	Kind    error  // one of the Err* sentinels
	Msg     string // what was expected and what was found
	Err     error  // the underlying cause, if any
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("archive ")
	b.WriteString(e.Archive)
	if e.Entry != "" {
		b.WriteString(": entry ")
		b.WriteString(quoteEntry(e.Entry))
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// maxQuoted is how much of an entry's name an error quotes: a hostile name
// can be a MiB long.
const maxQuoted = 256

// quoteEntry quotes name, or its first maxQuoted bytes (cut at a character)
// and its length: for an entry's name or link target that may not have
// passed cleanName's length checks yet.
func quoteEntry(name string) string {
	if len(name) <= maxQuoted {
		return strconv.Quote(name)
	}
	return fmt.Sprintf("%s... (%d bytes)", strconv.Quote(utf8cut.Prefix(name, maxQuoted)), len(name))
}

// Is makes errors.Is(err, e.Kind) true, ErrUnsafe match ErrLimit,
// ErrNotRegular and ErrSparse, and ErrNotRegular match ErrSparse.
func (e *Error) Is(target error) bool {
	if target == e.Kind {
		return true
	}
	switch target {
	case ErrUnsafe:
		return e.Kind == ErrLimit || e.Kind == ErrNotRegular || e.Kind == ErrSparse
	case ErrNotRegular:
		return e.Kind == ErrSparse
	}
	return false
}

func (e *Error) Unwrap() error { return e.Err }

// Select reads the archive at path once and calls fn for every wanted member, in
// archive order (zip: central-directory order), with a reader that yields exactly
// Size bytes and is valid only during the call. A wanted hardlink (tar) is
// handed out after the others, once the whole archive passed every check,
// from a further read of the same open file (see the package comment). want holds member paths, cleaned
// before matching ("./bridge" and "bridge" are the same); each must be found
// exactly once as a regular file, else an ErrMissing error names the missing
// ones and a few names that are in the archive.
//
// For Raw, want must be exactly [""]: the artifact's own name is the recipe's
// business (the cached file is named by its digest), and fn gets the whole file.
//
// Tar archives are checked as they stream, so fn may already have been called
// for earlier members when Select returns an error (a later hostile entry, a
// checksum at the end): callers must discard everything fn produced unless
// Select returns nil. Zip archives are checked entirely before fn is called.
// If fn returns an error, Select stops and returns that error unchanged. If fn
// does not read its reader to the end, Select reads the rest, so a checksum at
// the end of the data is always checked.
func Select(ctx context.Context, path string, kind Kind, want []string, lim Limits, fn func(Member, io.Reader) error) error {
	return SelectPinned(ctx, path, "", kind, want, lim, fn)
}

// SelectPinned is Select on an archive whose bytes were verified to hash to
// sha256Hex (lowercase hex; "" checks nothing, as Select): the file at path
// may have changed since (a cache file replaced by other bytes, or rewritten
// in place), so the bytes Select reads are hashed as they are read, from the
// one open file: a tar archive's and a raw artifact's in each pass, read to
// the end of the file; a zip archive's whole file before its directory is
// read. Bytes that hash otherwise are refused with an *Error of kind
// ErrCorrupt wrapping a *digest.MismatchError; as with every error, callers
// discard what fn produced from them.
func SelectPinned(ctx context.Context, path, sha256Hex string, kind Kind, want []string, lim Limits, fn func(Member, io.Reader) error) error {
	lim = lim.withDefaults()
	if kind == Raw {
		return selectRaw(ctx, path, sha256Hex, want, lim, fn)
	}
	s, err := newScan(ctx, path, want, lim, fn)
	if err != nil {
		return err
	}
	s.pin = sha256Hex
	switch kind {
	case TarGz, Tgz, TarXz, Tar:
		return s.selectTarFile(kind) // finishes, then hands out the hardlinks
	case Zip:
		err = s.selectZip()
	default:
		_, err = ParseKind(string(kind))
	}
	if err != nil {
		return err
	}
	return s.finish()
}

func newScan(ctx context.Context, path string, want []string, lim Limits, fn func(Member, io.Reader) error) (*scan, error) {
	w, err := newWantSet(want)
	if err != nil {
		return nil, err
	}
	return &scan{ctx: ctx, archive: path, lim: lim, bud: NewBudget(ctx, lim, -1), want: w, fn: fn, seen: map[string]bool{},
		leaves: map[string]entry{}, links: map[string]string{}, regular: map[string]entry{}}, nil
}

// wantSet holds the cleaned wanted names and which were found.
type wantSet struct {
	names map[string]bool // cleaned name -> found
	order []string        // cleaned names, as given
}

func newWantSet(want []string) (*wantSet, error) {
	w := &wantSet{names: make(map[string]bool, len(want))}
	for _, raw := range want {
		name, problem := cleanName(raw)
		if problem == "" && name == "." {
			problem = "names the archive root, not a file"
		}
		if problem != "" {
			return nil, fmt.Errorf("%w %q: %s", ErrWant, raw, problem)
		}
		if _, dup := w.names[name]; dup {
			return nil, fmt.Errorf("%w %q: listed twice (as %q after cleaning)", ErrWant, raw, name)
		}
		w.names[name] = false
		w.order = append(w.order, name)
	}
	return w, nil
}

func (w *wantSet) missing() []string {
	var out []string
	for _, n := range w.order {
		if !w.names[n] {
			out = append(out, n)
		}
	}
	return out
}

// scan is the state of one Select over a tar or zip archive.
type scan struct {
	ctx     context.Context
	archive string
	lim     Limits
	bud     *Budget // every decompressed byte of the archive counts against it
	want    *wantSet
	fn      func(Member, io.Reader) error
	entries int
	seen    map[string]bool   // every cleaned entry path
	leaves  map[string]entry  // every entry but a directory, by cleaned path: nothing may be inside one
	files   []string          // regular files in archive order, for the missing-member hint
	links   map[string]string // symlink path -> target, for the chained-escape check
	regular map[string]entry  // regular files seen so far, for hardlinks to them
	// hardlinks are the wanted hardlinks, in archive order: each is handed
	// out with its target's content by a later pass (tar.go).
	hardlinks []hardlink
	tap       *headerTap // what archive/tar read of the tar stream's headers
	pin       string     // the sha256 the archive's bytes must have (SelectPinned), or ""
	hash      hash.Hash  // of the bytes read in this pass, when pin is set
}

// open opens the file at the scan's path for reading, what (the archive, a
// raw artifact) being only a regular file: with O_NONBLOCK, so that a FIFO
// put in its place (after a check of the file by its path) never blocks
// the open, beyond the reach of the context.
func (s *scan) open(what string) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(s.archive, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("archive: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("archive: %w", err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, s.errorf(ErrNotRegular, "", nil, "%s must be a regular file, found %s", what, fi.Mode().Type())
	}
	return f, fi, nil
}

// pinned returns r (the archive file), hashed as it is read when the scan
// checks a pin: call it at the start of every pass over the file.
func (s *scan) pinned(r io.Reader) io.Reader {
	if s.pin == "" {
		return r
	}
	s.hash = sha256.New()
	return io.TeeReader(r, s.hash)
}

// checkPin reads what the pass left of r (pinned's reader, or a buffer on
// it) to the end of the file, and refuses bytes that hash otherwise than the pin.
func (s *scan) checkPin(r io.Reader) error {
	if s.pin == "" {
		return nil
	}
	if _, err := io.Copy(io.Discard, ctxio.Reader(s.ctx, r)); err != nil {
		return s.wrapRead("", err)
	}
	if got := hex.EncodeToString(s.hash.Sum(nil)); got != s.pin {
		return s.errorf(ErrCorrupt, "", &digest.MismatchError{Subject: s.archive, Algorithm: digest.SHA256, Want: s.pin, Got: got},
			"the file changed after it was verified")
	}
	return nil
}

// hardlink is a wanted hardlink entry and the earlier regular file it is.
type hardlink struct {
	name   string // cleaned
	raw    string // as stored
	target entry  // the regular file's entry, cleaned name in raw
}

func (s *scan) errorf(kind error, entry string, cause error, format string, args ...any) *Error {
	return &Error{Archive: s.archive, Entry: entry, Kind: kind, Msg: fmt.Sprintf(format, args...), Err: cause}
}

// entryType is what an entry is, independent of the container format.
type entryType int

const (
	typeFile entryType = iota
	typeDir
	typeSymlink
	typeHardlink
	typeSpecial // device, fifo, socket
	typeSparse
	typeOther // a type this package does not know
)

func (t entryType) String() string {
	return [...]string{"a regular file", "a directory", "a symlink", "a hardlink", "a device, fifo or socket", "a sparse file", "an entry of unknown type"}[t]
}

// entry is one archive entry as the container format describes it.
type entry struct {
	raw    string // the name as stored
	typ    entryType
	link   string // symlink or hardlink target
	size   int64
	mode   fs.FileMode
	detail string // for typeOther: the format's type code
}

// check applies every per-entry rule and returns the cleaned name and whether
// the entry is wanted (a wanted entry passed every check, including its type
// and size).
func (s *scan) check(e entry) (string, bool, error) {
	s.entries++
	if s.entries > s.lim.MaxEntries {
		return "", false, s.errorf(ErrLimit, e.raw, nil, "more than %d entries (Limits.MaxEntries)", s.lim.MaxEntries)
	}
	name, problem := cleanName(e.raw)
	if problem != "" {
		return "", false, s.errorf(ErrUnsafe, e.raw, nil, "%s", problem)
	}
	if e.typ != typeDir && strings.HasSuffix(e.raw, "/") {
		// GNU tar takes such a name for a directory, and the data after
		// the header for the next headers: it would read another archive.
		return "", false, s.errorf(ErrUnsafe, e.raw, nil, "is %s, but its name ends in \"/\", which names a directory (GNU tar extracts a directory, and reads its data as the next entries)", e.typ)
	}
	if s.seen[name] {
		return "", false, s.errorf(ErrUnsafe, e.raw, nil, "duplicate entry: %q appears more than once", name)
	}
	s.seen[name] = true
	if e.typ != typeDir {
		s.leaves[name] = e
	}
	switch e.typ {
	case typeSymlink:
		if problem := symlinkEscapes(name, e.link); problem != "" {
			return "", false, s.errorf(ErrUnsafe, e.raw, nil, "symlink to %s %s", quoteEntry(e.link), problem)
		}
		s.links[name] = e.link
	case typeHardlink:
		target, problem := cleanName(e.link)
		if problem != "" {
			return "", false, s.errorf(ErrUnsafe, e.raw, nil, "hardlink to %s: target %s", quoteEntry(e.link), problem)
		}
		if _, ok := s.regular[target]; !ok {
			return "", false, s.errorf(ErrUnsafe, e.raw, nil, "hardlink to %q, which is not %s", e.link, s.hardlinkTarget(target, name))
		}
		s.files = append(s.files, name)
	case typeSpecial:
		return "", false, s.errorf(ErrUnsafe, e.raw, nil, "is %s; release archives hold none", e.typ)
	case typeFile:
		s.files = append(s.files, name)
		s.regular[name] = entry{raw: name, size: e.size, mode: e.mode}
	}
	found, wanted := s.want.names[name]
	if !wanted {
		return name, false, nil
	}
	if found { // unreachable while duplicates are refused above; kept as the contract's guard
		return "", false, s.errorf(ErrUnsafe, e.raw, nil, "wanted member %q found twice", name)
	}
	if e.typ == typeHardlink {
		target := s.regular[path.Clean(e.link)]
		if target.size > s.lim.MaxFileSize {
			return "", false, s.errorf(ErrLimit, e.raw, nil, "hardlink to %q: size %d bytes is above the %d-byte limit for one file (Limits.MaxFileSize)", e.link, target.size, s.lim.MaxFileSize)
		}
		s.want.names[name] = true
		s.hardlinks = append(s.hardlinks, hardlink{name: name, raw: e.raw, target: target})
		return name, false, nil // handed out by a later pass
	}
	if e.typ != typeFile {
		what := e.typ.String()
		if e.typ == typeSymlink || e.typ == typeHardlink {
			what += " to " + strconv.Quote(e.link)
		}
		if e.detail != "" {
			what += " (" + e.detail + ")"
		}
		kind := ErrNotRegular
		if e.typ == typeSparse {
			kind = ErrSparse
		}
		return "", false, s.errorf(kind, e.raw, nil, "wanted as a regular file, but it is %s", what)
	}
	if e.size > s.lim.MaxFileSize {
		return "", false, s.errorf(ErrLimit, e.raw, nil, "size %d bytes is above the %d-byte limit for one file (Limits.MaxFileSize)", e.size, s.lim.MaxFileSize)
	}
	if e.size < 0 {
		return "", false, s.errorf(ErrCorrupt, e.raw, nil, "negative size %d", e.size)
	}
	s.want.names[name] = true
	return name, true, nil
}

// hardlinkTarget says what a hardlink's target (cleaned) is instead of an
// earlier regular file of the archive.
func (s *scan) hardlinkTarget(target, name string) string {
	switch {
	case target == name:
		return "an earlier regular file: it is the hardlink itself"
	case !s.seen[target]:
		return "an earlier regular file of the archive: no entry before it has that name (a hardlink to a later entry or to a file outside the archive)"
	case s.links[target] != "":
		return "a regular file but a symlink"
	}
	return "a regular file but a directory or another hardlink (a chain: tar links every name to the one that holds the data)"
}

// deliver hands one wanted member to fn, then drains what fn left unread so the
// format's own end-of-data checks (zip CRC, tar truncation) always run.
func (s *scan) deliver(m Member, raw string, src io.Reader) error {
	er := &entryReader{s: s, entry: raw, src: src, remaining: m.Size}
	if err := s.fn(m, er); err != nil {
		return err
	}
	// io.Copy stops at the sticky io.EOF of a fully read member, and returns
	// the sticky error of a failed one.
	_, err := io.Copy(io.Discard, er)
	return err
}

// finish runs the whole-archive checks: entries inside a symlink or file,
// chained symlink escapes and missing members.
func (s *scan) finish() error {
	if err := s.checkParents(); err != nil {
		return err
	}
	if err := s.checkLinkChains(); err != nil {
		return err
	}
	missing := s.want.missing()
	if len(missing) == 0 {
		return nil
	}
	quoted := make([]string, len(missing))
	for i, m := range missing {
		quoted[i] = strconv.Quote(m)
	}
	msg := "not found: " + strings.Join(quoted, ", ")
	if hint := s.hint(missing); hint != "" {
		msg += "; the archive holds " + hint
	} else {
		msg += "; the archive holds no regular files"
	}
	// A folder the archive holds only through its files' paths has no
	// entry to be refused as a directory (ErrNotRegular): say what it is.
	for _, m := range missing {
		if i := slices.IndexFunc(s.files, func(f string) bool { return strings.HasPrefix(f, m+"/") }); i >= 0 {
			msg += fmt.Sprintf("; %q is a folder in the archive, not a file (it holds %q): write the path of the file inside it", m, s.files[i])
		}
	}
	// A recipe path is a name: one written as a glob says what it
	// would have matched.
	for _, m := range missing {
		if !strings.ContainsAny(m, "*?[") {
			continue
		}
		var matched []string
		for _, f := range s.files {
			if ok, _ := path.Match(m, f); ok {
				matched = append(matched, f)
			}
		}
		if len(matched) > 0 {
			more := ""
			if len(matched) > 1 {
				more = fmt.Sprintf(" and %d more", len(matched)-1)
			}
			msg += fmt.Sprintf("; %q is a name, not a pattern (as a glob, it matches %q%s): write the one file's path", m, matched[0], more)
		}
	}
	// A name that prints as a missing one but has other bytes (é as one
	// code point or as e and a combining accent) would read as a
	// contradiction: its bytes are shown.
	for _, m := range missing {
		for _, f := range s.files {
			if f != m && norm.NFC.String(f) == norm.NFC.String(m) {
				msg += fmt.Sprintf("; %+q is written %+q in the archive (another Unicode normalization): write the recipe's path so", m, f)
				break
			}
		}
	}
	return s.errorf(ErrMissing, "", nil, "%s", msg)
}

// similar is the form of a name that hint matches missing names by: its
// base name, in NFC and lower case.
func similar(p string) string { return strings.ToLower(norm.NFC.String(baseName(p))) }

// hint lists a few regular files in the archive: first those whose base name
// matches a missing one, whatever its case and Unicode normalization (the
// usual mistake is a forgotten top directory, such as "helm" for
// "linux-amd64/helm"), then the first ones in archive order.
func (s *scan) hint(missing []string) string {
	const max = 5
	var pick []string
	picked := map[string]bool{}
	add := func(n string) {
		if len(pick) < max && !picked[n] {
			picked[n] = true
			pick = append(pick, strconv.Quote(n))
		}
	}
	bases := map[string]bool{}
	for _, m := range missing {
		bases[similar(m)] = true
	}
	for _, f := range s.files {
		if bases[similar(f)] {
			add(f)
		}
	}
	for _, f := range s.files {
		add(f)
	}
	if len(pick) == 0 {
		return ""
	}
	more := ""
	if len(s.files) > len(pick) {
		more = fmt.Sprintf(" and %d more", len(s.files)-len(pick))
	}
	return strings.Join(pick, ", ") + more
}

func baseName(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}
