package repo

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/updeb/updeb/internal/confined"
	"github.com/updeb/updeb/internal/diskfull"
	"github.com/updeb/updeb/pkg/atomicfile"
	"github.com/updeb/updeb/pkg/xzpar"
)

// GCResult says what garbage collection removed (or, dry, would remove).
type GCResult struct {
	DryRun      bool     `json:"dry_run"`
	Generations []string `json:"generations"` // SUITE/N
	PoolFiles   []string `json:"pool_files"`  // paths relative to the repository
	Bytes       int64    `json:"bytes"`       // size of the pool files
}

// GC removes what nothing may still fetch: every generation a suite does not
// keep (see Settings.Keep), leftovers of killed writes, and every pool file
// that no kept generation lists, neither in its own indexes nor in the
// earlier generations' indexes it serves by hash to clients mid-update, and
// no record of a publish interrupted before it went live names (its record
// removes it once its suite says it never went live: pendingPoolFiles). A
// removed pool file's digest is kept under .updeb/removed/, so its version can
// never come back with other bytes. With dryRun, nothing is removed. A
// repository with a suite updeb does not manage is refused: what it refers to
// is unknown.
func (r *Repo) GC(ctx context.Context, dryRun bool) (*GCResult, error) {
	if _, err := os.Lstat(r.root); errors.Is(err, fs.ErrNotExist) {
		// No repository (not published yet, or a mistyped folder): nothing
		// to collect, and nothing to create (r.lock would make the folder).
		return &GCResult{DryRun: dryRun, Generations: []string{}, PoolFiles: []string{}}, nil
	}
	lock := r.lock
	if dryRun {
		lock = r.lockToRead
	}
	unlock, err := lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if !dryRun {
		r.recoverPublish(ctx)
	}
	if err := r.checkAllManaged(); err != nil {
		return nil, err
	}
	suites, err := r.managedSuites()
	if err != nil {
		return nil, err
	}
	res := &GCResult{DryRun: dryRun, Generations: []string{}, PoolFiles: []string{}}
	var keptDirs []string
	kept := map[string]map[int]bool{}
	for _, s := range suites {
		if err := r.checkGenerationDirs(s); err != nil {
			return nil, err
		}
		g, err := r.live(s)
		if err != nil {
			return nil, err
		}
		if kept[s], err = r.generationsToKeep(s, g.n, g.settings.Keep); err != nil {
			return nil, err
		}
		for n := range kept[s] {
			keptDirs = append(keptDirs, r.genDir(s, n))
		}
		names, err := r.prunable(s, kept[s])
		if err != nil {
			return nil, err
		}
		for _, name := range names {
			res.Generations = append(res.Generations, s+"/"+name)
		}
	}
	unlinked, err := r.unlinkedGenerations(suites)
	if err != nil {
		return nil, err
	}
	referenced, err := referencedPoolFiles(ctx, append(keptDirs, unlinked...))
	if err != nil {
		return nil, err
	}
	maps.Copy(referenced, r.pendingPoolFiles())
	if err := r.unreferencedPoolFiles(referenced, res); err != nil {
		return nil, err
	}
	if dryRun {
		return res, nil
	}
	r.hook("gc")
	for _, s := range suites {
		live, _ := r.liveGeneration(s)
		r.prune(s, live, r.keepOf(s, live))
	}
	return res, r.removePoolFiles(ctx, res.PoolFiles)
}

// checkGenerationDirs refuses a numbered entry of suite's generations
// folder that is no folder (a generation moved to another disk and linked
// back, a planted link), which updeb never writes there: gc left it out of
// the generations to keep, the live one included, so it removed the live
// generation's link (every client then got 404 for the suite) and the pool
// files it lists.
func (r *Repo) checkGenerationDirs(suite string) error {
	des, err := os.ReadDir(r.suiteGenDir(suite))
	if err != nil {
		return err
	}
	for _, de := range des {
		if _, err := strconv.Atoi(de.Name()); err == nil && !de.IsDir() {
			name := filepath.Join(r.suiteGenDir(suite), de.Name())
			return fmt.Errorf("%w: %s is %s, which updeb never writes among a suite's generations: garbage collection cannot know whether it is the live generation or which pool files it lists, so it removes nothing; move the generation back into %s (keep the repository on another disk by mounting that disk, not by a symlink)",
				ErrInvalid, name, confined.Kind(de.Type()), r.suiteGenDir(suite))
		}
	}
	return nil
}

// unlinkedGenerations returns the numbered generation folders of every
// suite under dists/.gen/ that suites (the managed ones) lacks: its link
// dists/SUITE is gone, lost by a copy or backup that leaves symbolic links
// out (rsync without -l), removed by hand, or never made (a new suite's
// first write killed before its switch). gc cannot tell which, so it keeps
// the pool files they list and leaves them be, saying so (as a refresh of
// every suite says it, which cannot refresh such a suite): it took them for
// unreferenced and removed every pool file of such a suite, which its
// link, restored, then listed as 404s.
func (r *Repo) unlinkedGenerations(suites []string) ([]string, error) {
	unlinked, err := r.linklessSuites(suites)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range unlinked {
		gens, err := r.keptGenerations(s, math.MaxInt)
		if err != nil {
			return nil, err
		}
		if len(gens) == 0 {
			continue
		}
		for _, n := range gens {
			out = append(out, r.genDir(s, n))
		}
		r.opts.Logger.Warn(fmt.Sprintf("%s holds generations of suite %s, but %s, its link to the live one, is missing (left out by a copy that skips symbolic links, removed by hand, or never made by a first publish killed before it went live): the pool files they list are kept; restore the link if the suite was live (%s, the newest), or remove %s to drop the suite",
			r.suiteGenDir(s), s, filepath.Join(r.distsDir(), s), r.restoreLink(s, gens[0]), r.suiteGenDir(s)), "suite", s)
	}
	return out, nil
}

// linklessSuites returns the suites that have a folder of generations
// (dists/.gen/SUITE) and are not among suites, the managed ones (whose link
// dists/SUITE is there): their link is lost, or never made.
func (r *Repo) linklessSuites(suites []string) ([]string, error) {
	return suiteNames(filepath.Join(r.distsDir(), ".gen"), func(de os.DirEntry) bool {
		return de.IsDir() && !slices.Contains(suites, de.Name())
	})
}

// keepOf returns the live generation's keep setting.
func (r *Repo) keepOf(suite string, live int) int {
	if g, err := r.readGeneration(suite, live); err == nil {
		return g.settings.Keep
	}
	return DefaultKeep
}

// checkAllManaged refuses a dists/ holding anything but updeb's suites.
func (r *Repo) checkAllManaged() error {
	des, err := os.ReadDir(r.distsDir())
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, de := range des {
		name := de.Name()
		if name == ".gen" || (strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".link")) {
			continue
		}
		if _, err := r.liveGeneration(name); err != nil || validSuite(name) != nil {
			return fmt.Errorf("%w: %s is not a suite updeb manages: garbage collection cannot know which pool files it refers to, so it removes nothing", ErrNotManaged, filepath.Join(r.distsDir(), name))
		}
	}
	return nil
}

// referencedPoolFiles returns every pool path listed by an index file in
// dirs: each Packages form and every file under by-hash/, decompressed by its
// magic bytes. Hard links (by-hash names, carried-over files) are read once.
func referencedPoolFiles(ctx context.Context, dirs []string) (map[string]bool, error) {
	type inode struct{ dev, ino uint64 }
	seen := map[inode]bool{}
	out := map[string]bool{}
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return err
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			base := d.Name()
			// Packages files, and by-hash names of Packages files (under
			// binary-ARCH/by-hash/); a Contents index names no pool file.
			inByHash := strings.HasPrefix(filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(p)))), "binary-") &&
				filepath.Base(filepath.Dir(filepath.Dir(p))) == "by-hash"
			if !inByHash && !strings.HasPrefix(base, "Packages") {
				return nil
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				id := inode{uint64(st.Dev), st.Ino} //nolint:unconvert // Dev is not uint64 on every platform
				if seen[id] {
					return nil
				}
				seen[id] = true
			}
			if err := indexFilenames(p, out); err != nil {
				return fmt.Errorf("%s: %w (garbage collection removes nothing while an index is unreadable)", p, err)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// indexFilenames adds to out the pool path of every Filename: line of the
// index file at name, gzip and xz decompressed by their magic bytes. It
// reads the file as a stream: reading it whole, decompressed, held an
// index's size in memory, with no bound at all on what a .gz or .xz (a
// damaged or planted file under by-hash/) decompresses to. What it holds
// decompressed is bounded by maxRepoFile, as every index read whole is.
func indexFilenames(name string, out map[string]bool) error {
	f, _, err := confined.OpenFile(name)
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	magic, _ := br.Peek(6)
	var r io.Reader = br
	switch {
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		r, err = gzip.NewReader(br)
	case bytes.HasPrefix(magic, []byte{0xfd, '7', 'z', 'X', 'Z', 0}):
		r, err = xzpar.NewReader(br)
	}
	if err != nil {
		return err
	}
	limited := &io.LimitedReader{R: r, N: maxRepoFile + 1}
	lines := bufio.NewReaderSize(limited, 64<<10)
	const field = "Filename:"
	for {
		line, err := lines.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) { // a line longer than the buffer: a Description, say
			if bytes.HasPrefix(line, []byte(field)) {
				return fmt.Errorf("a %s line longer than %d bytes", field, lines.Size())
			}
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = lines.ReadSlice('\n')
			}
			line = nil
		}
		if p, ok := bytes.CutPrefix(line, []byte(field)); ok {
			out[path.Clean(strings.TrimSpace(string(p)))] = true
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	if limited.N <= 0 {
		return fmt.Errorf("it decompresses to more than %d bytes, more than any index updeb writes or reads", maxRepoFile)
	}
	return nil
}

// unreferencedPoolFiles adds to res every file under pool/ that referenced
// lacks (leftover temporary files of killed publishes included). Anything
// else there that referenced lacks (a symlink, a FIFO), which updeb never
// writes, is refused: a symlink to a folder (a pool kept on another disk)
// holds pool files that are listed, which removing the link would take
// away from every client.
func (r *Repo) unreferencedPoolFiles(referenced map[string]bool, res *GCResult) error {
	pool := filepath.Join(r.root, "pool")
	err := filepath.WalkDir(pool, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(r.root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if referenced[rel] {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%w: %s is %s, which updeb never writes in the pool: garbage collection cannot know what it holds or whether a client needs it, so it removes nothing; move it away (keep the pool on another disk by mounting it at %s, not by a symlink)",
				ErrInvalid, p, confined.Kind(d.Type()), pool)
		}
		if fi, err := d.Info(); err == nil {
			res.Bytes += fi.Size()
		}
		res.PoolFiles = append(res.PoolFiles, rel)
		return nil
	})
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	sort.Strings(res.PoolFiles)
	return err
}

// removePoolFiles removes each pool file after recording its digest under
// .updeb/removed/, then the directories left empty.
func (r *Repo) removePoolFiles(ctx context.Context, files []string) error {
	dirs := map[string]bool{}
	for _, rel := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		name := filepath.Join(r.root, filepath.FromSlash(rel))
		if strings.HasSuffix(rel, ".deb") && !strings.HasPrefix(path.Base(rel), ".") {
			if err := r.recordCollected(ctx, rel); err != nil {
				return err
			}
		}
		if err := os.Remove(name); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		if err := removeContents(r.root, rel); err != nil {
			return err
		}
		dirs[filepath.Dir(name)] = true
	}
	for d := range dirs {
		if err := atomicfile.SyncDir(d); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	removeEmptyDirs(filepath.Join(r.root, "pool"), dirs)
	return r.removeOrphanContents(ctx)
}

// removeOrphanContents removes the stored file lists whose pool file is
// gone (a publish killed between the two, a pool file removed by hand).
func (r *Repo) removeOrphanContents(ctx context.Context) error {
	top := filepath.Join(r.root, ".updeb", "contents")
	dirs := map[string]bool{}
	err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(top, p)
		if err != nil {
			return err
		}
		pool, ok := strings.CutSuffix(filepath.Join(r.root, rel), ".list")
		if _, serr := os.Lstat(pool); ok && errors.Is(serr, os.ErrNotExist) || !ok {
			dirs[filepath.Dir(p)] = true
			return os.Remove(p)
		}
		return nil
	})
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	removeEmptyDirs(top, dirs)
	return err
}

// removeEmptyDirs removes the empty ones of dirs and their empty parents,
// up to (not including) top.
func removeEmptyDirs(top string, dirs map[string]bool) {
	list := make([]string, 0, len(dirs))
	for d := range dirs {
		list = append(list, d)
	}
	sort.Sort(sort.Reverse(sort.StringSlice(list))) // children before parents
	for _, d := range list {
		for d != top && strings.HasPrefix(d, top+string(filepath.Separator)) {
			if os.Remove(d) != nil {
				break
			}
			d = filepath.Dir(d)
		}
	}
}

func (r *Repo) collectedFile(rel string) string {
	return filepath.Join(r.root, ".updeb", "removed", filepath.FromSlash(rel)+".sha256")
}

// recordCollected writes the SHA256 of the pool file at rel under
// .updeb/removed/ before it is removed. On a full disk, where gc is how an
// operator makes room, the pool file is removed first, making room for its
// record: a record that still cannot be written is an error naming the
// digest to write. The temporary file of the record that a gc killed while
// writing it left (under the lock, as every gc writes) goes first.
func (r *Repo) recordCollected(ctx context.Context, rel string) error {
	sum, err := existingDigest(ctx, r.root, rel)
	if err != nil || sum == "" {
		return err
	}
	dst := r.collectedFile(rel)
	atomicfile.RemoveLeftovers(filepath.Dir(dst), filepath.Base(dst))
	record := func() error {
		if err := atomicfile.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return atomicfile.WriteFile(dst, []byte(sum+"\n"), 0o644)
	}
	if err := record(); !diskfull.Is(err) {
		return err
	}
	if err := os.Remove(filepath.Join(r.root, filepath.FromSlash(rel))); err != nil {
		return err
	}
	if err := record(); err != nil {
		return fmt.Errorf("%w; %s was removed to make room for the record of its sha256 %s, which is not written: write it into %s before anything is published",
			err, rel, sum, dst)
	}
	return nil
}

// collectedDigest returns the SHA256 a collected pool file had, or "" when
// the pool file at rel was never collected.
func (r *Repo) collectedDigest(rel string) (string, error) {
	if strings.Contains(rel, "..") {
		return "", fmt.Errorf("%w: pool path %q", ErrInvalid, rel)
	}
	data, err := readFile(r.collectedFile(rel))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	sum := strings.TrimSpace(string(data))
	if _, err := hex.DecodeString(sum); err != nil || len(sum) != 2*sha256.Size {
		return "", fmt.Errorf("%w: %s: not a SHA256 digest; it records the bytes a collected pool file had: restore it or delete it to allow any bytes for %s", ErrInvalid, r.collectedFile(rel), rel)
	}
	return sum, nil
}
