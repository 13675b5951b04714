// Package mirror carries recipes' downloads to a host without a way out: Export
// writes every artifact, signature and checksum file of the recipes into a
// folder at their upstream URL paths (HOST/PATH, the layout a mirrors: entry
// with a folder reads), with a manifest of digests; Verify re-checks the folder
// against its manifest on the far side. Only files verified as a build
// verifies them (pins, signatures, checksum files) are exported.
package mirror

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/updeb/updeb/internal/confined"
	"github.com/updeb/updeb/internal/fetch"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/source"
	"github.com/updeb/updeb/pkg/atomicfile"
	"github.com/updeb/updeb/pkg/digest"
	"github.com/updeb/updeb/pkg/lockfile"
	"github.com/updeb/updeb/pkg/strictjson"
	"github.com/updeb/updeb/pkg/weblink"
)

// ManifestName is the manifest's file name in the folder.
const ManifestName = "updeb-mirror.json"

// maxManifest bounds the manifest read back (about 40000 entries).
const maxManifest = 16 << 20

// Manifest lists what a mirror folder holds.
type Manifest struct {
	Schema string  `json:"schema"` // "updeb/mirror/v1"
	Files  []Entry `json:"files"`  // sorted by Path
}

const schema = "updeb/mirror/v1"

// Entry is one file of the folder.
type Entry struct {
	URL    string `json:"url"`  // the upstream URL it stands in for
	Path   string `json:"path"` // slash-separated, below the folder: HOST/PATH
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	SHA512 string `json:"sha512,omitempty"`
}

// Mirror is a mirrors: entry that reads the folder for one host.
type Mirror struct {
	Prefix string `json:"prefix"` // https://HOST/
	To     string `json:"to"`     // file:///ABSOLUTE/DIR/HOST/ (where it was exported: adjust to where it lies)
}

// ExportResult says what Export wrote.
type ExportResult struct {
	Dir     string   `json:"dir"`
	Files   []Entry  `json:"files"`   // the recipes' files, now in the folder
	Mirrors []Mirror `json:"mirrors"` // what to put in the far side's config: every host the folder holds, earlier exports' too
}

// Export fetches and verifies every source, signature and checksum file of
// jobs (source.Fetch: the cache, the proxy, pins, signatures, checksum
// cross-checks), copies each into dir at HOST/PATH, and merges them into the
// folder's manifest. A file already there with the same digest is left as
// it is; another is replaced, once the manifest no longer lists it
// (unlistChanged). Everything is checked before anything is written. The copy is hashed as it is written and must
// equal what was verified. The answers rec recorded while the sources were
// verified (rec is the transport of opts.Sigstore's HTTP client, or nil) are
// written too: GitHub's attestations travel with the artifacts they vouch
// for. Every write stays inside dir (writeIn).
func Export(ctx context.Context, jobs []source.Job, ro recipe.ResolveOptions, opts source.Options, dir string, rec *Recorder) (*ExportResult, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	// A DIR that is no mirror folder (a file, a FIFO, a manifest updeb did
	// not write) is refused before anything is fetched or written: not
	// after every artifact was downloaded.
	if _, err := readManifest(abs, true); err != nil {
		return nil, err
	}
	// So is a DIR that is a symlink to nothing (the stick it points at not
	// mounted): making the folder fails, and makes nothing, now as after
	// the downloads.
	if _, err := os.Stat(abs); errors.Is(err, fs.ErrNotExist) {
		if _, err := os.Lstat(abs); err == nil {
			if err := atomicfile.MkdirAll(abs, 0o755); err != nil {
				return nil, err
			}
		}
	}
	got, err := source.Fetch(ctx, jobs, ro, opts)
	if err != nil {
		return nil, err
	}
	if err := atomicfile.MkdirAll(abs, 0o755); err != nil {
		return nil, err
	}
	root, err := confined.OpenRoot(abs)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	// One export writes into the folder at a time (a lock on the folder
	// itself, so that no lock file travels with it): each merges its files
	// into the manifest it read, so two at once would lose the entries of
	// the one that wrote first. Under the lock, the manifest is read again
	// (another export may have written it meanwhile), and what a killed
	// export left (temporary copies, up to a whole artifact each) is removed.
	lock, err := lockfile.AcquireDir(ctx, abs, 0)
	if err != nil {
		return nil, fmt.Errorf("mirror export into %s: %w", dir, err)
	}
	defer lock.Unlock()
	m, err := readManifest(abs, true)
	if err != nil {
		return nil, err
	}
	sweepTemps(root, abs, m, opts.Logger)
	byPath := map[string]Entry{}
	for _, e := range m.Files {
		byPath[e.Path] = e
	}
	res := &ExportResult{Dir: dir}
	hosts := map[string]Mirror{}
	host := func(mi Mirror) {
		// The folder's path escaped as a URL's (a space, "%", "#" in
		// it), which the far side's config reads back as that path; a
		// "," too, which a URL's path may hold as it is: the entry goes
		// into the config as a YAML flow mapping, where it ends the value.
		to := url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Join(abs, mi.To)) + "/"}
		hosts[mi.Prefix] = Mirror{Prefix: mi.Prefix, To: strings.ReplaceAll(to.String(), ",", "%2C")}
	}
	add := func(e Entry, mi Mirror) error {
		host(mi)
		// Two URLs filed at one path (one origin spelled two ways, a
		// "/" escaped or not) are one file when their bytes are: the
		// far side reads it for either.
		if prev, ok := byPath[e.Path]; ok && prev.URL != e.URL && (prev.SHA256 != e.SHA256 || prev.Size != e.Size) {
			return fmt.Errorf("%s and %s both map to %s, with other bytes: a mirror folder serves one file there; export their recipes into two folders", prev.URL, e.URL, e.Path)
		}
		byPath[e.Path] = e
		if !slices.ContainsFunc(res.Files, func(x Entry) bool { return x.Path == e.Path }) {
			res.Files = append(res.Files, e)
		}
		return nil
	}
	// Every file's place and entry are known, and checked, before any is
	// written: an export refused (two URLs at one path) or stopped half
	// way (a full disk, kill -9) must not leave a listed file with bytes
	// its entry does not list, which verify calls corrupt and a build
	// reading it for the listed URL refuses.
	var writes []func() error
	var paths []string // writes[i] places paths[i]
	for _, r := range got {
		rel, mi, err := pathOf(r.URL)
		if err != nil {
			return nil, err
		}
		e := Entry{URL: r.URL, Path: rel, Size: r.Size, SHA256: r.Digests[digest.SHA256], SHA512: r.Digests[digest.SHA512]}
		if err := add(e, mi); err != nil {
			return nil, err
		}
		writes = append(writes, func() error { return place(ctx, root, abs, e, r) })
		paths = append(paths, e.Path)
	}
	for _, a := range rec.answers() {
		rel, mi, err := pathOf(a.url)
		if err != nil {
			return nil, err
		}
		e := a.entry(rel)
		if err := add(e, mi); err != nil {
			return nil, err
		}
		writes = append(writes, func() error { return placeAnswer(root, abs, e, a) })
		paths = append(paths, e.Path)
	}
	if err := fileAndFolder(byPath); err != nil {
		return nil, err
	}
	listed, unlisted, err := unlistChanged(root, abs, m, byPath)
	if err != nil {
		return nil, err
	}
	placedNew := 0 // placed, and not listed yet
	for i, write := range writes {
		// Stopped between two files (Ctrl-C, SIGTERM) as within one.
		err := ctx.Err()
		if err == nil {
			err = write()
		}
		if err != nil {
			if placedNew == 0 && !unlisted {
				return nil, err
			}
			return nil, &HalfExportedError{Dir: dir, Placed: placedNew, Of: len(writes), Unlisted: unlisted, Err: err}
		}
		if !listed[paths[i]] {
			placedNew++
		}
		Placed(i + 1)
	}
	m.Files = m.Files[:0]
	for _, e := range byPath {
		m.Files = append(m.Files, e)
	}
	sort.Slice(m.Files, func(i, j int) bool { return m.Files[i].Path < m.Files[j].Path })
	if err := writeManifest(root, abs, m); err != nil {
		return nil, err
	}
	// The far side's config reads the whole folder: the hosts of earlier
	// exports into it too. Printed for this export's alone, they were left
	// out of the config, and their recipes went to upstream. A file filed
	// as updeb before 2026-12 filed it (asWritten) is read through the
	// entry of its origin's folder, which it is not in: no entry for it.
	for _, e := range m.Files {
		if rel, mi, err := pathOf(e.URL); err == nil && rel == e.Path {
			host(mi)
		}
	}
	sort.Slice(res.Files, func(i, j int) bool { return res.Files[i].Path < res.Files[j].Path })
	for _, h := range hosts {
		res.Mirrors = append(res.Mirrors, h)
	}
	sort.Slice(res.Mirrors, func(i, j int) bool { return res.Mirrors[i].Prefix < res.Mirrors[j].Prefix })
	return res, nil
}

// fileAndFolder refuses files (path -> entry: this export's and those the
// folder lists) one of which lies below the other (https://h/x.tar.gz and
// https://h/x.tar.gz/y, which a web server may serve both): a folder holds
// one path as a file or as a folder, not both. Refused before anything is
// written, as two URLs at one path are: the export wrote the one, stopped
// at the other, and advised removing the file (listed) and exporting again,
// which stopped there again.
func fileAndFolder(files map[string]Entry) error {
	paths := slices.Sorted(maps.Keys(files))
	for _, p := range paths {
		for a := path.Dir(p); a != "."; a = path.Dir(a) {
			if f, ok := files[a]; ok {
				return fmt.Errorf("%s and %s: a mirror folder cannot hold %s as a file and as a folder; export their recipes into two folders", f.URL, files[p].URL, a)
			}
		}
	}
	return nil
}

// sweepTemps removes the temporary copies (writeIn's .NAME.tmp-PID-N) that
// an export killed while copying left in the folder dir (root); the caller
// holds the folder's lock, so no export into this folder is writing one.
// One an export into another mirror folder is writing, nested in this one
// or this one in it (another lock), is passed over: that export holds the
// lock of a folder on the copy's path (inFlight), and would find its copy
// gone when it renames it. A killed export holds none. A file the manifest
// lists is never one of them. It is a clean-up: what it cannot read or
// remove (a folder of someone else's in there) is passed over, and the
// export goes on.
func sweepTemps(root *os.Root, dir string, m *Manifest, log *slog.Logger) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	listed := map[string]bool{}
	for _, e := range m.Files {
		listed[e.Path] = true
	}
	held := map[string]bool{}
	fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || listed[p] || !tempName.MatchString(d.Name()) || inFlight(dir, p, held) {
			return nil
		}
		if err := root.Remove(p); err != nil {
			log.Warn("cannot remove a leftover of a killed mirror export", "file", p, "err", err)
		} else {
			log.Info("removed a leftover of a killed mirror export", "file", p)
		}
		return nil
	})
}

// tempName is writeIn's temporary file name: atomicfile's prefix, then the
// pid and a counter.
var tempName = regexp.MustCompile(`^\..+\.tmp-[0-9]+-[0-9]+$`)

// Leftover reports whether the file rel (slash-separated, as Report's
// Unlisted names it) is named as an export's temporary copy: one an export
// that was stopped while copying left, which the next export removes.
func Leftover(rel string) bool {
	return tempName.MatchString(path.Base(rel))
}

// inFlight reports whether a folder on the path of the file rel inside dir,
// below dir or above it, is locked (an export into it runs: Export's lock);
// dir itself is the caller's. held keeps each folder's answer.
func inFlight(dir, rel string, held map[string]bool) bool {
	var folders []string
	for q := path.Dir(rel); q != "."; q = path.Dir(q) {
		folders = append(folders, filepath.Join(dir, filepath.FromSlash(q)))
	}
	for a := filepath.Dir(dir); ; a = filepath.Dir(a) {
		folders = append(folders, a)
		if a == filepath.Dir(a) {
			break
		}
	}
	for _, f := range folders {
		locked, ok := held[f]
		if !ok {
			locked = isLocked(f)
			held[f] = locked
		}
		if locked {
			return true
		}
	}
	return false
}

// isLocked reports whether another process holds the lock of the folder
// dir (lockfile.AcquireDir), asking once, without waiting.
func isLocked(dir string) bool {
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // one try: a held lock is ErrHeld at once
	l, err := lockfile.AcquireDir(ctx, dir, 0)
	if err != nil {
		return errors.Is(err, lockfile.ErrHeld)
	}
	l.Unlock()
	return false
}

// Placed is called with the count of the files an export has placed in its
// folder, after each. It is a seam for tests (cmd/updeb's stop an export
// there, as a signal would); nothing else sets it.
var Placed = func(n int) {}

// HalfExportedError is the error of an export that stopped (a signal, a
// full disk) after it changed its folder: files placed there that the
// manifest does not list yet, or entries of files it was replacing
// dropped from the manifest (unlistChanged). Nothing listed has bytes its
// entry does not list, and the same export again finishes it.
type HalfExportedError struct {
	Dir    string // the folder, as the user named it
	Placed int    // files placed before it stopped that the manifest does not list
	Of     int    // files it was to place (listed ones too)
	// Unlisted: the manifest no longer lists files the export was
	// replacing (new bytes upstream).
	Unlisted bool
	Err      error
}

func (e *HalfExportedError) Error() string { return e.Err.Error() }
func (e *HalfExportedError) Unwrap() error { return e.Err }

// Done says what the stopped export left and how to finish it.
func (e *HalfExportedError) Done() string {
	what := fmt.Sprintf("the export placed %d new file(s) of its %d in %s before it stopped; %s does not list them yet", e.Placed, e.Of, e.Dir, ManifestName)
	if e.Placed == 0 {
		what = fmt.Sprintf("the export stopped in %s after it dropped from %s the entries of files it was replacing (new bytes upstream)", e.Dir, ManifestName)
	}
	return what + " ('updeb mirror verify' names such files unlisted, not corrupt): run the same export again to finish it"
}

// unlistChanged writes the manifest m without the entries of the files
// whose bytes the export is about to replace (next: path -> the new entry),
// if there are any: a checksum file, signature or answer upstream has
// changed since the last export. Stopped after it replaced one, the export
// leaves that file unlisted (verify names it, the next export lists it),
// never listed with the old bytes' digests. It returns the paths the
// manifest lists now, and whether it wrote the manifest.
func unlistChanged(root *os.Root, dir string, m *Manifest, next map[string]Entry) (map[string]bool, bool, error) {
	kept := &Manifest{Files: []Entry{}}
	listed := map[string]bool{}
	for _, e := range m.Files {
		if n := next[e.Path]; n.SHA256 == e.SHA256 && n.Size == e.Size {
			kept.Files = append(kept.Files, e)
			listed[e.Path] = true
		}
	}
	if len(kept.Files) == len(m.Files) {
		return listed, false, nil
	}
	return listed, true, writeManifest(root, dir, kept)
}

// place copies the verified file r, whose manifest entry is e, into the
// folder root (at dir) at its mirror path.
func place(ctx context.Context, root *os.Root, dir string, e Entry, r *fetch.Result) error {
	if sums, size, err := hashIn(ctx, root, e.Path, e.algorithms()); err == nil && size == e.Size && e.matches(sums) {
		// Already there, but perhaps readable by its owner alone (copied
		// under umask 077): made 0644, as a file export writes, so that
		// another user on the far side reads it. A file system whose
		// modes its mount options decide (FAT) refuses (EPERM): its
		// files are as readable as they can be made.
		if fi, err := root.Lstat(e.Path); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o444 != 0o444 {
			if err := root.Chmod(e.Path, 0o644); err != nil && !errors.Is(err, fs.ErrPermission) {
				return named(err, dir, e.Path)
			}
		}
		return nil
	}
	src, _, err := confined.OpenFile(r.Path)
	if err != nil {
		return err
	}
	defer src.Close()
	h := digest.NewHasher(e.algorithms()...)
	return writeIn(root, dir, e.Path, func(w io.Writer) error {
		if _, err := copyCtx(ctx, io.MultiWriter(w, h), src); err != nil {
			return err
		}
		if h.Size() != e.Size || !e.matches(h.Sum()) {
			return fmt.Errorf("%s changed in the cache while it was copied to %s", r.URL, filepath.Join(dir, filepath.FromSlash(e.Path)))
		}
		return nil
	})
}

// placeAnswer writes a recorded answer, whose manifest entry is e, into the
// folder at its mirror path.
func placeAnswer(root *os.Root, dir string, e Entry, a answer) error {
	return writeIn(root, dir, e.Path, func(w io.Writer) error {
		_, err := w.Write(a.body)
		return err
	})
}

// pathOf returns where in the folder (HOST/PATH, slash-separated) export
// files the download URL u, the file a mirrors: entry for its host reads
// for it, and that host's mirror (To relative to the folder). HOST is the
// origin written one way (host in lower case without a final dot, the port
// only when not the scheme's default), as fetch matches a mirror's prefix:
// filed as written, https://Releases.Example.org:443/x and
// https://releases.example.org/y went to two folders with a mirrors: entry
// each, and the far side's fetch, taking them for one origin, read both
// from one folder, where the other's files were missing.
func pathOf(u string) (string, Mirror, error) {
	pu, err := url.Parse(u)
	if err != nil {
		return "", Mirror{}, err
	}
	host := weblink.Host(pu)
	if host == "" || strings.ContainsAny(host, "/\\") || host == "." || host == ".." {
		return "", Mirror{}, fmt.Errorf("%s: no host to file it under", u)
	}
	mi := Mirror{Prefix: strings.ToLower(pu.Scheme) + "://" + host + "/", To: host}
	name, err := fetch.MirrorFile(fetch.Mirror{Prefix: mi.Prefix, To: "file:///" + host + "/"}, u)
	if err != nil {
		return "", Mirror{}, err
	}
	return host + "/" + name, mi, nil
}

// ErrOutside is wrapped when export meets, inside its folder, a symlink or
// something else than a folder where it must make or enter a folder: it
// writes only inside the folder and follows no symlink there.
var ErrOutside = errors.New("mirror: refusing to write through a symlink")

// mkdirIn makes the folder rel (slash-separated) and its parents inside
// root; every one that exists must be a real folder, not a symlink.
func mkdirIn(root *os.Root, dir, rel string) error {
	cur := ""
	for part := range strings.SplitSeq(rel, "/") {
		cur = path.Join(cur, part)
		fi, err := root.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			// 0755 whatever the umask, like the files' 0644: readable by
			// another user on the far side.
			mkErr := root.Mkdir(cur, 0o755)
			if mkErr == nil {
				mkErr = root.Chmod(cur, 0o755)
			}
			if mkErr != nil && !errors.Is(mkErr, fs.ErrExist) {
				return named(mkErr, dir, cur)
			}
			fi, err = root.Lstat(cur)
		}
		if err != nil {
			return named(err, dir, cur)
		}
		if !fi.IsDir() {
			return fmt.Errorf("%w: %s is %s, not a folder; updeb writes only inside %s (remove it and export again)", ErrOutside, filepath.Join(dir, filepath.FromSlash(cur)), confined.Kind(fi.Mode()), dir)
		}
	}
	return nil
}

// writeIn atomically replaces the file rel inside root with what fill
// writes: a temporary file beside it, synced, renamed over it (a symlink
// planted there is replaced, never written through), the folder synced.
// Every folder on the way is a real folder inside root (mkdirIn).
func writeIn(root *os.Root, dir, rel string, fill func(io.Writer) error) error {
	parent := path.Dir(rel)
	if parent != "." {
		if err := mkdirIn(root, dir, parent); err != nil {
			return err
		}
	}
	var (
		f   *os.File
		tmp string
		err error
	)
	for i := 0; ; i++ {
		tmp = path.Join(parent, fmt.Sprintf("%s%d-%d", atomicfile.TempPrefix(path.Base(rel)), os.Getpid(), i))
		f, err = root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if !errors.Is(err, fs.ErrExist) || i > 100 {
			break
		}
	}
	if err != nil {
		return named(err, dir, tmp)
	}
	done := false
	defer func() {
		if !done {
			f.Close()
			root.Remove(tmp)
		}
	}()
	if err := fill(namedWriter{f, dir, tmp}); err != nil {
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		return named(err, dir, tmp)
	}
	if err := f.Sync(); err != nil {
		return named(err, dir, tmp)
	}
	if err := f.Close(); err != nil {
		return named(err, dir, tmp)
	}
	if err := root.Rename(tmp, rel); err != nil {
		root.Remove(tmp)
		done = true
		return named(err, dir, rel)
	}
	done = true
	if d, err := root.Open(parent); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// named gives err, the error of an operation on the file rel inside the
// folder dir, that file's path as the user knows it, dir/rel. os.Root names
// it relative to the folder ("mkdirat releases.example.org") or through
// the /proc/self/fd/N that confined.OpenRoot opened the folder by
// ("/proc/self/fd/5/releases.example.org/..."), which means nothing once
// updeb has exited, and which a full disk's hint sent the operator to free.
func named(err error, dir, rel string) error {
	at := filepath.Join(dir, filepath.FromSlash(rel))
	switch e := err.(type) {
	case *fs.PathError:
		return &fs.PathError{Op: e.Op, Path: at, Err: e.Err}
	case *os.LinkError:
		return &os.LinkError{Op: e.Op, Old: filepath.Join(dir, filepath.FromSlash(e.Old)), New: at, Err: e.Err}
	}
	return err
}

// namedWriter writes to f, the file rel inside dir, its errors named
// (named).
type namedWriter struct {
	f        *os.File
	dir, rel string
}

func (w namedWriter) Write(b []byte) (int, error) {
	n, err := w.f.Write(b)
	return n, named(err, w.dir, w.rel)
}

func (e Entry) algorithms() []digest.Algorithm {
	if e.SHA512 != "" {
		return []digest.Algorithm{digest.SHA256, digest.SHA512}
	}
	return []digest.Algorithm{digest.SHA256}
}

func (e Entry) matches(s digest.Set) bool {
	return s[digest.SHA256] == e.SHA256 && (e.SHA512 == "" || s[digest.SHA512] == e.SHA512)
}

// hashIn hashes the file rel inside root: a regular file that is no
// symlink (what export would otherwise replace).
func hashIn(ctx context.Context, root *os.Root, rel string, algs []digest.Algorithm) (digest.Set, int64, error) {
	if fi, err := root.Lstat(rel); err != nil || !fi.Mode().IsRegular() {
		return nil, 0, fs.ErrNotExist
	}
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	h := digest.NewHasher(algs...)
	if _, err := copyCtx(ctx, h, f); err != nil {
		return nil, 0, err
	}
	return h.Sum(), h.Size(), nil
}

// copyCtx is io.Copy that stops with ctx's error once ctx is done, checked
// every MiB: a mirror's files run to gigabytes, and a signal must stop a
// copy or a hash within a moment, not at the file's end.
func copyCtx(ctx context.Context, dst io.Writer, src io.Reader) (int64, error) {
	buf := make([]byte, 1<<20)
	var n int64
	for {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		k, err := io.ReadFull(src, buf)
		if k > 0 {
			w, werr := dst.Write(buf[:k])
			n += int64(w)
			if werr != nil {
				return n, werr
			}
		}
		switch {
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			return n, nil
		case err != nil:
			return n, err
		}
	}
}

// Status of one file on the far side.
const (
	OK      = "ok"
	Missing = "missing" // listed, not in the folder
	Corrupt = "corrupt" // in the folder, but its size or digest is not the manifest's
	Refused = "refused" // not a regular file inside the folder (a symlink out of it, a device)
)

// Check is what Verify found for one file.
type Check struct {
	Entry
	Status    string `json:"status"`
	GotSize   int64  `json:"got_size,omitempty"`
	GotSHA256 string `json:"got_sha256,omitempty"`
	GotSHA512 string `json:"got_sha512,omitempty"` // of a corrupt file whose entry lists a sha512
	Detail    string `json:"detail,omitempty"`
}

// Report is Verify's result.
type Report struct {
	Dir      string   `json:"dir"`
	Files    []Check  `json:"files"`
	Unlisted []string `json:"unlisted"` // files in the folder the manifest does not name (not checked; a build whose recipe maps a URL to one reads it, and checks it against its pins), and "FOLDER/" for a folder that may not be read
	// Exporting: an export into the folder was running (it held the
	// folder's lock): its copies in progress and the files it had not
	// listed yet are no leftovers, and the verdict is of a folder half
	// written.
	Exporting bool `json:"exporting"`
}

// Count returns how many files have status s.
func (r *Report) Count(s string) int {
	n := 0
	for _, c := range r.Files {
		if c.Status == s {
			n++
		}
	}
	return n
}

// ErrFailed is wrapped by Verify's error when a file is missing, corrupt or
// refused (the report says which).
var ErrFailed = errors.New("mirror: the folder does not hold what its manifest lists")

// Verify re-checks every file of dir's manifest: present, a regular file
// inside its host's folder dir/HOST (never followed out of it; check), of the listed size and digests. It
// returns the report and, when a file failed, an error wrapping ErrFailed.
// A folder without a manifest, or with a manifest it cannot read, is an
// error wrapping ErrManifest.
func Verify(ctx context.Context, dir string) (*Report, error) {
	m, err := readManifest(dir, false)
	if err != nil {
		return nil, err
	}
	rep := &Report{Dir: dir, Unlisted: []string{}, Exporting: isLocked(dir)}
	listed := map[string]bool{ManifestName: true}
	for _, e := range m.Files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		listed[e.Path] = true
		c, err := check(ctx, dir, e)
		if err != nil {
			return nil, err
		}
		rep.Files = append(rep.Files, c)
	}
	// The folder is walked through a root opened on it, as its manifest
	// was read (the path the user gave is followed): walked by its path, a
	// DIR that is a symlink to the folder was the one entry seen, listed as
	// the unlisted file ".", and the files added to the folder went unsaid.
	root, err := confined.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		// A folder below DIR that may not be read (a stick's lost+found,
		// root's, mode 0700) is not walked: it is unlisted, "FOLDER/",
		// unless it holds a listed file, which check has reported. It
		// stopped the walk, and verify said nothing of the listed files.
		if err != nil && p != "." && d != nil && d.IsDir() && errors.Is(err, fs.ErrPermission) {
			if !slices.ContainsFunc(m.Files, func(e Entry) bool { return strings.HasPrefix(e.Path, p+"/") }) {
				rep.Unlisted = append(rep.Unlisted, p+"/")
			}
			return nil
		}
		if err != nil {
			return named(err, dir, p)
		}
		if !d.IsDir() && !listed[p] {
			rep.Unlisted = append(rep.Unlisted, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if n := len(rep.Files) - rep.Count(OK); n > 0 {
		return rep, fmt.Errorf("%w: %d missing, %d corrupt, %d refused of %d", ErrFailed, rep.Count(Missing), rep.Count(Corrupt), rep.Count(Refused), len(rep.Files))
	}
	return rep, nil
}

// check hashes one listed file; the error is only ctx's. The file is
// opened as a build reads it through the mirrors: entry of its host (a
// folder mirror at DIR/HOST): inside DIR/HOST, not only inside DIR, so that
// a file verify passes is one the build reads.
func check(ctx context.Context, dir string, e Entry) (Check, error) {
	c := Check{Entry: e, Status: OK}
	host, rest, _ := strings.Cut(e.Path, "/")
	f, _, err := confined.Open(dir, host, rest)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		c.Status = Missing
		return c, nil
	case errors.Is(err, confined.ErrRefused):
		c.Status, c.Detail = Refused, err.Error()
		return c, nil
	case err != nil:
		c.Status, c.Detail = Missing, err.Error()
		return c, nil
	}
	defer f.Close()
	h := digest.NewHasher(e.algorithms()...)
	if _, err := copyCtx(ctx, h, f); err != nil {
		if ctx.Err() != nil {
			return c, ctx.Err()
		}
		c.Status, c.Detail = Corrupt, err.Error()
		return c, nil
	}
	sums := h.Sum()
	if h.Size() != e.Size || !e.matches(sums) {
		c.Status, c.GotSize, c.GotSHA256, c.GotSHA512 = Corrupt, h.Size(), sums[digest.SHA256], sums[digest.SHA512]
	}
	return c, nil
}

// ErrManifest is wrapped when the manifest is absent or not one updeb wrote.
var ErrManifest = errors.New("mirror: unusable manifest")

// readManifest reads dir's manifest; with missingOK, an absent one is empty.
func readManifest(dir string, missingOK bool) (*Manifest, error) {
	name := filepath.Join(dir, ManifestName)
	f, _, err := confined.Open(dir, ManifestName)
	if errors.Is(err, fs.ErrNotExist) && missingOK {
		return &Manifest{Schema: schema}, nil
	}
	// The manifest named by its path: os.Root names it "updeb-mirror.json"
	// alone. A folder whose first export stopped half way (kill -9, a full
	// disk) holds files and no manifest: export writes it last.
	var pe *fs.PathError
	switch {
	case errors.Is(err, fs.ErrNotExist) && errors.As(err, &pe) && pe.Path == ManifestName:
		return nil, fmt.Errorf("%w: %s: no such file: not a mirror folder, or one whose first export stopped before its end (killed, a full disk), which writes none; export into %s again", ErrManifest, name, dir)
	case errors.As(err, &pe) && pe.Path == ManifestName && !errors.Is(err, confined.ErrRefused):
		// One that may not be read (a stick copied with its owner's
		// modes) or an I/O error: the manifest is there, and the error
		// is the file system's (exit 3, what to do about it), not
		// that of a folder export did not write.
		return nil, named(err, dir, ManifestName)
	case err != nil:
		return nil, fmt.Errorf("%w: %v", ErrManifest, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxManifest+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(data) > maxManifest {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrManifest, name, maxManifest)
	}
	m, err := ParseManifest(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return m, nil
}

// ParseManifest reads a manifest strictly: known keys only, the schema
// updeb writes, every path relative, clean and unique (HOST/...), the one
// a mirror folder serves its URL from, digests of the right length.
func ParseManifest(data []byte) (*Manifest, error) {
	var m Manifest
	if err := strictjson.UnmarshalKnown(data, &m); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrManifest, err)
	}
	if m.Schema != schema {
		return nil, fmt.Errorf("%w: schema %q, want %q", ErrManifest, m.Schema, schema)
	}
	seen := map[string]bool{}
	for i, e := range m.Files {
		bad := func(why string) error { return fmt.Errorf("%w: files[%d] (%q): %s", ErrManifest, i, e.Path, why) }
		switch {
		case e.Path == "" || path.Clean(e.Path) != e.Path || strings.HasPrefix(e.Path, "/") || e.Path == ".." || strings.HasPrefix(e.Path, "../") ||
			strings.ContainsAny(e.Path, "\\\x00") || !strings.Contains(e.Path, "/") || e.Path == ManifestName:
			return nil, bad("want a clean relative path HOST/PATH")
		case seen[e.Path]:
			return nil, bad("listed twice")
		case e.Size < 0:
			return nil, bad("negative size")
		case !isHex(e.SHA256, 64) || (e.SHA512 != "" && !isHex(e.SHA512, 128)):
			return nil, bad("want a sha256 of 64 and a sha512 of 128 lower-case hex digits")
		}
		// The file checked for a URL is the one a build reads for it.
		if want, _, err := pathOf(e.URL); err != nil {
			return nil, bad(fmt.Sprintf("url %q: %v", e.URL, err))
		} else if want != e.Path && !asWritten(e.URL, e.Path, want) {
			return nil, bad(fmt.Sprintf("a mirror folder serves url %q from %s, not from this path", e.URL, want))
		}
		seen[e.Path] = true
	}
	return &m, nil
}

// asWritten reports whether rel is where updeb before 2026-12 filed u, at
// its host as u writes it (Releases.Example.org:443/...) rather than at
// want, the origin's folder: its mirrors: entry reads that folder, and its
// folder stays one verify and export read.
func asWritten(u, rel, want string) bool {
	pu, err := url.Parse(u)
	host, rest, _ := strings.Cut(rel, "/")
	_, wantRest, _ := strings.Cut(want, "/")
	return err == nil && host == pu.Host && rest == wantRest
}

func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func writeManifest(root *os.Root, dir string, m *Manifest) error {
	m.Schema = schema
	if m.Files == nil {
		m.Files = []Entry{}
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	// What readManifest would refuse is not written: the export would say
	// it succeeded, and leave a folder neither verify nor the next export
	// reads. The manifest the folder had stays (its files are still there).
	if len(data)+1 > maxManifest {
		return fmt.Errorf("%w: %s would list %d files in %d bytes, more than the %d updeb reads; export the other recipes into another folder", ErrManifest, filepath.Join(dir, ManifestName), len(m.Files), len(data)+1, maxManifest)
	}
	return writeIn(root, dir, ManifestName, func(w io.Writer) error {
		_, err := w.Write(append(data, '\n'))
		return err
	})
}
