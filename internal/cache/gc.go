package cache

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// GCOptions says what GC removes.
type GCOptions struct {
	// MaxAge: index entries and blobs that no run wrote or read for longer
	// go (a cache hit marks what it reads: see markUsed).
	MaxAge time.Duration
	// PartialAge: partial downloads untouched for longer go (Sweep's
	// partialAge; the fetcher's PartialMaxAge).
	PartialAge time.Duration
	DryRun     bool // list what would go; remove nothing
}

// GCResult is what GC removed or, with DryRun, would remove.
type GCResult struct {
	DryRun bool     `json:"dry_run"`
	Files  []string `json:"files"` // relative to the cache folder: sha256/ab/ab..., index/cd/cd....json, tmp/part-...
	Bytes  int64    `json:"bytes"` // their sizes, together
}

func (r *GCResult) add(rel string, size int64) {
	r.Files = append(r.Files, rel)
	r.Bytes += size
}

// ErrNoCache is wrapped when GC is given a folder that does not exist, and
// ErrNotCache when it is given one that is no updeb cache (or a file).
var (
	ErrNoCache  = errors.New("no cache there")
	ErrNotCache = errors.New("no updeb cache")
)

// GC removes from the cache in dir what no run used within o.MaxAge: index
// entries, then the blobs that no index entry left names, then what
// interrupted runs left in tmp (Sweep). It is safe beside every other
// updeb process using the cache, and a gc killed at any moment leaves a
// cache they can use: every removal is one unlink of a file a reader
// finds missing (a miss: downloaded again), an index entry is removed
// holding its download's lock (a fetch holds it while it reads the entry),
// and a blob holding gcLock, which a hit marking a blob as used and a
// commit putting one in place hold shared (markUsed, Commit): a blob gc
// found old goes before either, or stays. Lock files stay: a process may
// be waiting on one that an unlink would leave it holding alone.
//
// GC makes nothing: a dir that does not exist is an error wrapping
// ErrNoCache, and a folder without the cache's sha256 and index folders (a
// mistyped --cache) is refused. It never follows a symlink: one in place
// of either folder is refused, and one inside is left alone.
func GC(ctx context.Context, dir string, o GCOptions) (*GCResult, error) {
	root, err := openCacheRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	c := &Cache{dir: dir}
	res := &GCResult{DryRun: o.DryRun, Files: []string{}}
	cutoff := time.Now().Add(-o.MaxAge)
	named, err := c.gcIndex(ctx, root, cutoff, o.DryRun, res)
	if err != nil {
		return nil, err
	}
	if err := c.gcBlobs(ctx, root, cutoff, named, o.DryRun, res); err != nil {
		return nil, err
	}
	if fi, err := root.Lstat("tmp"); err == nil && fi.IsDir() {
		c.sweep(o.PartialAge, o.DryRun, func(name string, size int64) { res.add(path.Join("tmp", name), size) })
	}
	return res, nil
}

// openCacheRoot opens dir, which must hold the cache's sha256 and index
// folders (real folders, no symlinks), as an os.Root: nothing GC opens or
// removes through it can be out of dir.
func openCacheRoot(dir string) (*os.Root, error) {
	if dir == "" {
		return nil, errors.New("cache: no cache folder given")
	}
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("cache: %s is %w: a file, not a folder", dir, ErrNotCache)
	}
	root, err := os.OpenRoot(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("cache: %s: %w", dir, ErrNoCache)
	}
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	for _, sub := range []string{"sha256", "index"} {
		fi, err := root.Lstat(sub)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			err = fmt.Errorf("cache: %s is %w: it has no %s folder (updeb keeps sha256, index, tmp and locks in its cache folder)", dir, ErrNotCache, sub)
		case err != nil:
			err = fmt.Errorf("cache: %w", err)
		case !fi.IsDir():
			err = fmt.Errorf("cache: %s is %w: %s is no folder (%s), and gc removes nothing through it", dir, ErrNotCache, filepath.Join(dir, sub), fi.Mode().Type())
		}
		if err != nil {
			root.Close()
			return nil, err
		}
	}
	return root, nil
}

// gcIndex removes the index entries last used before cutoff and returns the
// sha256 of the blobs those kept name. An entry whose download's lock is
// held is in use: kept.
func (c *Cache) gcIndex(ctx context.Context, root *os.Root, cutoff time.Time, dryRun bool, res *GCResult) (map[string]bool, error) {
	named := map[string]bool{}
	err := c.eachFile(ctx, root, "index", func(rel, name string, fi fs.FileInfo) error {
		id, ok := strings.CutSuffix(name, ".json")
		if !ok || !isSHA256(id) || !strings.HasPrefix(id, path.Base(path.Dir(rel))) {
			return nil // none of the cache's
		}
		if fi.ModTime().Before(cutoff) {
			l, busy, err := c.tryLock(id, dryRun)
			switch {
			case busy: // a fetch is reading it: kept
			case dryRun:
				l.Unlock()
				res.add(rel, fi.Size())
				return nil
			case err != nil:
				// A lock that cannot be opened (a read-only cache) is
				// none a fetch holds: kept as in use, every entry was,
				// and their blobs, and gc said it removed nothing.
				return err
			default:
				gone, err := c.removeOld(root, rel, cutoff)
				l.Unlock()
				if err != nil || gone {
					return c.removed(rel, fi.Size(), err, res)
				}
			}
		}
		if e, err := readEntry(filepath.Join(c.dir, rel)); err == nil {
			named[e.SHA256] = true
		}
		return nil
	})
	return named, err
}

// gcBlobs removes the blobs last used before cutoff that no kept index entry
// names, each holding gcLock (see markUsed).
func (c *Cache) gcBlobs(ctx context.Context, root *os.Root, cutoff time.Time, named map[string]bool, dryRun bool, res *GCResult) error {
	return c.eachFile(ctx, root, "sha256", func(rel, name string, fi fs.FileInfo) error {
		if !isSHA256(name) || !strings.HasPrefix(name, path.Base(path.Dir(rel))) || named[name] || !fi.ModTime().Before(cutoff) {
			return nil
		}
		if dryRun {
			res.add(rel, fi.Size())
			return nil
		}
		l, err := c.lockGC(ctx, false)
		if err != nil {
			return err
		}
		gone, err := c.removeOld(root, rel, cutoff)
		l.Unlock()
		if err != nil || gone {
			return c.removed(rel, fi.Size(), err, res)
		}
		return nil
	})
}

// removed records the removal of rel, or returns its error.
func (c *Cache) removed(rel string, size int64, err error, res *GCResult) error {
	if err != nil {
		return c.rootError(err)
	}
	res.add(rel, size)
	return nil
}

// rootError is err of an operation through the os.Root of the cache, its
// path made the whole path (the root's are relative to the cache folder),
// so that the message and the hint name the file.
func (c *Cache) rootError(err error) error {
	if pe, ok := errors.AsType[*fs.PathError](err); ok && !filepath.IsAbs(pe.Path) {
		pe.Path = filepath.Join(c.dir, pe.Path)
	}
	return fmt.Errorf("cache: %w", err)
}

// removeOld removes the regular file rel if it was still last used before
// cutoff (a hit may have marked it since it was listed); gone is false when
// it is kept or another process removed it first.
func (c *Cache) removeOld(root *os.Root, rel string, cutoff time.Time) (gone bool, err error) {
	fi, err := root.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil || !fi.Mode().IsRegular() || !fi.ModTime().Before(cutoff) {
		return false, err
	}
	removing(filepath.Join(c.dir, rel))
	err = root.Remove(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// eachFile calls f on every regular file in the two-level folder top
// (top/ab/NAME), with its path relative to the root. Anything else (a
// symlink, a FIFO, a folder where a file goes) is left alone: a hit on it
// evicts it (Verify), and none of it is followed.
func (c *Cache) eachFile(ctx context.Context, root *os.Root, top string, f func(rel, name string, fi fs.FileInfo) error) error {
	fans, err := c.readDir(root, top)
	if err != nil {
		return err
	}
	for _, fan := range fans {
		if !fan.IsDir() {
			continue
		}
		sub := path.Join(top, fan.Name())
		ents, err := c.readDir(root, sub)
		if err != nil {
			return err
		}
		for _, e := range ents {
			if err := ctx.Err(); err != nil {
				return err
			}
			if !e.Type().IsRegular() {
				continue
			}
			fi, err := e.Info()
			if errors.Is(err, fs.ErrNotExist) {
				continue // removed meanwhile (evicted, or another gc)
			}
			if err != nil {
				return c.rootError(err)
			}
			if err := f(path.Join(sub, e.Name()), e.Name(), fi); err != nil {
				return err
			}
		}
	}
	return nil
}

// readDir lists the folder rel of root, in name order; one that is gone is
// empty.
func (c *Cache) readDir(root *os.Root, rel string) ([]fs.DirEntry, error) {
	d, err := root.Open(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, c.rootError(err)
	}
	defer d.Close()
	ents, err := d.ReadDir(-1)
	if err != nil {
		return nil, c.rootError(err)
	}
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return ents, nil
}
