package repo

import (
	"bufio"
	"compress/gzip"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/updeb/updeb/internal/confined"
	"github.com/updeb/updeb/pkg/ctxio"
	"github.com/updeb/updeb/pkg/digest"
	vopenpgp "github.com/updeb/updeb/pkg/verify/openpgp"
	"github.com/updeb/updeb/pkg/xzpar"
)

// Finding is one thing wrong with a published suite, as an apt client, aptly
// or reprepro would meet it.
type Finding struct {
	Path    string `json:"path"`    // the file, relative to the repository's root
	Problem string `json:"problem"` // what is wrong, and what to do
}

// SuiteCheck is what Verify checked of one suite's live generation.
type SuiteCheck struct {
	Suite      string    `json:"suite"`
	Generation int       `json:"generation"`
	Signer     string    `json:"signer,omitempty"` // the primary key that signed InRelease
	ValidUntil time.Time `json:"valid_until,omitzero"`
	Indexes    int       `json:"indexes"`    // index files the Release lists
	Packages   int       `json:"packages"`   // packages listed (by component, name, version and architecture)
	PoolFiles  int       `json:"pool_files"` // distinct pool files checked
	PoolBytes  int64     `json:"pool_bytes"`
	Findings   []Finding `json:"findings"`
}

// maxFutureDate is how far ahead of now a Release's Date may be: apt's
// Acquire::Max-FutureTime default.
const maxFutureDate = 10 * time.Second

// Verify checks, read-only, what clients get from suite (every suite when
// empty): InRelease and Release.gpg signed by a key of kr, InRelease's text
// the Release, the Release's dates, every index file it lists (size, SHA256
// and SHA512, by its by-hash names too, a compressed index against the
// uncompressed one listed), the earlier generations' indexes it serves by
// hash (byHashKeptFile) against their names, and every pool file the Packages indexes name
// (size, MD5sum, SHA256, SHA512). What it finds wrong is in each
// SuiteCheck's Findings; an error is a failure to check at all (no such
// suite, an interrupt).
func (r *Repo) Verify(ctx context.Context, suite string, kr *vopenpgp.Keyring, now time.Time) ([]SuiteCheck, error) {
	suites := []string{suite}
	if suite == "" {
		managed, err := r.managedSuites()
		if err != nil {
			return nil, err
		}
		// A suite whose link is lost is none of the managed ones, and
		// every client gets 404 for it: checked, it is a finding.
		lost, err := r.lostSuites(managed)
		if err != nil {
			return nil, err
		}
		managed = append(managed, lost...)
		if suites = slices.Sorted(slices.Values(managed)); len(suites) == 0 {
			return nil, fmt.Errorf("%w: %s holds no suite (dists/<suite>)", ErrNotFound, r.root)
		}
	} else if err := validSuite(suite); err != nil {
		return nil, err
	}
	var out []SuiteCheck
	read := &poolReads{sums: map[string]*fileSums{}}
	for _, s := range suites {
		n, err := r.liveGeneration(s)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			lost, err := r.lostLinkTo(s)
			if err != nil {
				return nil, err
			}
			if lost > 0 {
				out = append(out, r.lostLinkCheck(s, lost))
				continue
			}
			if suite == "" {
				continue // a first write killed before its switch: never live
			}
			return nil, fmt.Errorf("%w: no suite %s in %s", ErrNotFound, s, r.root)
		}
		c, err := r.verifyLive(ctx, s, n, kr, now, read)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// lostLinkCheck is the check of suite, whose link dists/SUITE is lost and
// whose newest generation is n: one finding, the link.
func (r *Repo) lostLinkCheck(suite string, n int) SuiteCheck {
	return SuiteCheck{Suite: suite, Generation: n, Findings: []Finding{{Path: path.Join("dists", suite), Problem: r.lostLinkProblem(suite, n)}}}
}

// lostLinkProblem says what is wrong with suite, whose link dists/SUITE is
// lost and whose newest generation is n, and what restores it.
func (r *Repo) lostLinkProblem(suite string, n int) string {
	return fmt.Sprintf("missing, though %s holds the suite's generations up to %d: every client gets 404 for the suite (apt: no Release file); the link was lost (a copy or backup that leaves symbolic links out) or removed by hand: restore it, %s, or remove %s to drop the suite",
		r.suiteGenDir(suite), n, r.restoreLink(suite, n), r.suiteGenDir(suite))
}

// lostSuites returns the suites, none of managed, that have a folder of
// generations and nothing at dists/SUITE: their link is lost (or a first
// write was killed before it made it: lostLinkTo tells). One whose
// dists/SUITE is something else than a link, a copy that followed the
// links, is no suite of updeb's.
func (r *Repo) lostSuites(managed []string) ([]string, error) {
	linkless, err := r.linklessSuites(managed)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range linkless {
		if _, err := os.Lstat(filepath.Join(r.distsDir(), s)); errors.Is(err, fs.ErrNotExist) {
			out = append(out, s)
		}
	}
	return out, nil
}

// warnLostLinks warns of each suite whose link is lost, which what reads
// every suite's live generation (repo list, repo history, a status page)
// leaves out, as it has none, with what restores it: repo verify's
// finding.
func (r *Repo) warnLostLinks() error {
	managed, err := r.managedSuites()
	if err != nil {
		return err
	}
	lost, err := r.lostSuites(managed)
	if err != nil {
		return err
	}
	for _, s := range lost {
		n, err := r.lostLinkTo(s)
		if err != nil {
			return err
		}
		if n > 0 {
			r.opts.Logger.Warn(fmt.Sprintf("suite %s is left out: %s is %s", s, filepath.Join(r.distsDir(), s), r.lostLinkProblem(s, n)), "suite", s)
		}
	}
	return nil
}

// switchRetries is how many times verifyLive checks a suite again when a
// write switched it while it was checked.
const switchRetries = 3

// verifyLive checks suite's live generation n. A write (publish, refresh,
// gc) that switches the suite meanwhile may remove the files of the
// generation being checked, no longer live (an old generation pruned, the
// by-hash files it kept), which would be findings about a state no client
// gets: when there are findings and the suite was switched, the new live
// generation is checked instead.
func (r *Repo) verifyLive(ctx context.Context, suite string, n int, kr *vopenpgp.Keyring, now time.Time, read *poolReads) (SuiteCheck, error) {
	for try := 0; ; try++ {
		c := SuiteCheck{Suite: suite, Generation: n, Findings: []Finding{}}
		if err := r.verifySuite(ctx, &c, kr, now, read); err != nil {
			return c, err
		}
		if len(c.Findings) == 0 || try == switchRetries {
			return c, nil
		}
		m, err := r.liveGeneration(suite)
		if err != nil || m == n || m == 0 {
			return c, nil
		}
		n = m
	}
}

// verifySuite fills c for the live generation c.Generation of c.Suite.
func (r *Repo) verifySuite(ctx context.Context, c *SuiteCheck, kr *vopenpgp.Keyring, now time.Time, read *poolReads) error {
	dir := r.genDir(c.Suite, c.Generation)
	found := func(name, format string, args ...any) {
		rel, err := filepath.Rel(r.root, name)
		if err != nil {
			rel = name
		}
		c.Findings = append(c.Findings, Finding{Path: filepath.ToSlash(rel), Problem: fmt.Sprintf(format, args...)})
	}
	suiteDir := filepath.Join(r.distsDir(), c.Suite)
	g, err := r.readGeneration(c.Suite, c.Generation)
	r.hook("verify")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			err = r.missingLive(c.Suite, c.Generation)
		}
		found(suiteDir, "%v", err)
		return nil
	}
	c.ValidUntil = g.release.validUntil
	pol := vopenpgp.Policy{Now: now}
	if f, _, err := confined.OpenFile(filepath.Join(dir, "InRelease")); err != nil {
		found(filepath.Join(suiteDir, "InRelease"), "%v", err)
	} else {
		_, res, err := vopenpgp.VerifyClearsigned(kr, pol, f)
		f.Close()
		if err != nil {
			found(filepath.Join(suiteDir, "InRelease"), "apt refuses the suite: %v; sign it anew with 'updeb repo refresh %s' (with the key clients trust)", err, c.Suite)
		} else {
			c.Signer = res.PrimaryFingerprint
		}
	}
	sig, _, serr := confined.OpenFile(filepath.Join(dir, "Release.gpg"))
	rel, _, rerr := confined.OpenFile(filepath.Join(dir, "Release"))
	switch {
	case serr != nil:
		found(filepath.Join(suiteDir, "Release.gpg"), "%v", serr)
	case rerr != nil:
		found(filepath.Join(suiteDir, "Release"), "%v", rerr)
	default:
		if _, err := vopenpgp.VerifyDetached(kr, pol, sig, rel); err != nil {
			found(filepath.Join(suiteDir, "Release.gpg"), "clients that fetch Release and Release.gpg refuse the suite: %v; sign it anew with 'updeb repo refresh %s'", err, c.Suite)
		}
	}
	for _, f := range []*os.File{sig, rel} {
		if f != nil {
			f.Close()
		}
	}
	release := filepath.Join(suiteDir, "Release")
	switch d := g.release.date; {
	case d.IsZero():
		found(release, "no readable Date field: apt refuses the suite; sign it anew with 'updeb repo refresh %s'", c.Suite)
	case d.After(now.Add(maxFutureDate)):
		found(release, "dated %s, ahead of this machine's clock (%s): apt refuses it as not valid yet; check the clocks", d.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	if u := g.release.validUntil; !u.IsZero() && !now.Before(u) {
		found(release, "expired: Valid-Until %s has passed, and apt refuses the suite; renew it with 'updeb repo refresh %s'", u.UTC().Format(time.RFC3339), c.Suite)
	}
	if err := r.verifyIndexes(ctx, c, g, suiteDir, found); err != nil {
		return err
	}
	return r.verifyPool(ctx, c, g, found, read)
}

// listing is what a Release lists of one file: its size and a digest per
// hash field.
type listing struct {
	size int64
	sums map[string]string
}

// verifyIndexes checks every file g's Release lists, its by-hash names, and
// each compressed index against the uncompressed one.
func (r *Repo) verifyIndexes(ctx context.Context, c *SuiteCheck, g *generation, suiteDir string, found func(string, string, ...any)) error {
	listed := map[string]*listing{}
	for _, e := range g.release.files {
		l := listed[e.path]
		if l == nil {
			l = &listing{size: e.size, sums: map[string]string{}}
			listed[e.path] = l
		}
		if l.size != e.size {
			found(filepath.Join(suiteDir, "Release"), "%s is listed with %d and %d bytes: apt refuses it; sign the suite anew with 'updeb repo refresh %s'", e.path, l.size, e.size, c.Suite)
		}
		l.sums[e.algorithm] = e.hex
	}
	paths := make([]string, 0, len(listed))
	for p := range listed {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	c.Indexes = len(paths)
	checked := map[string]bool{}
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return err
		}
		l := listed[p]
		name := filepath.Join(suiteDir, filepath.FromSlash(p))
		f, fi, err := confined.Open(g.dir, p)
		if errors.Is(err, fs.ErrNotExist) {
			if listed[p+".gz"] == nil && listed[p+".xz"] == nil {
				found(name, "missing: the Release lists it, and apt fails to fetch it (404); restore it from a backup, or roll the suite back")
			}
			continue // apt fetches a compressed form, checked against this listing below
		}
		if err != nil {
			found(name, "%v", err)
			continue
		}
		got, err := hashStream(ctx, f, fi.Size())
		f.Close()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			found(name, "%v", err)
			continue
		}
		if msg := l.mismatch(got); msg != "" {
			found(name, "%s: changed after it was signed, and apt refuses it (Hash Sum mismatch); restore it (by-hash/SHA256/%s beside it holds the listed bytes unless it was changed in place) or roll the suite back", msg, l.sums["SHA256"])
			continue
		}
		for _, h := range hashAlgorithms {
			if sum := l.sums[h.field]; sum != "" {
				bh := path.Join(path.Dir(p), "by-hash", h.field, sum)
				checked[bh] = true
				if err := sameBytes(ctx, g.dir, bh, fi, l); err != nil {
					found(filepath.Join(suiteDir, filepath.FromSlash(bh)), "%v: apt fetches the index by this name (Acquire-By-Hash), then by its plain name, which fails a client in the middle of an update once the next generation is live (Hash Sum mismatch); restore it as a link to %s", err, p)
				}
			}
		}
		base, ext := strings.TrimSuffix(p, path.Ext(p)), path.Ext(p)
		if plain := listed[base]; plain != nil && (ext == ".gz" || ext == ".xz") {
			if err := decompressedMatches(ctx, g.dir, p, plain); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				found(name, "%v: clients that fetch it get other indexes than those that fetch %s; sign the suite anew with 'updeb repo refresh %s'", err, path.Base(base), c.Suite)
			}
		}
	}
	// The earlier generations' indexes g serves by hash (carryByHash) are
	// named by their digest.
	for _, rel := range slices.Sorted(maps.Keys(readByHashKept(g.dir))) {
		if err := ctx.Err(); err != nil {
			return err
		}
		if checked[rel] {
			continue
		}
		parts := strings.Split(rel, "/")
		l := &listing{size: -1, sums: map[string]string{parts[len(parts)-2]: parts[len(parts)-1]}}
		if err := sameBytes(ctx, g.dir, rel, nil, l); err != nil {
			found(filepath.Join(suiteDir, filepath.FromSlash(rel)), "%v (an earlier generation's Release): %s lists it for clients that read that InRelease, which fetch it in the middle of an update and fail (Hash Sum mismatch); restore it from that generation (dists/.gen/%s/N), if kept", err, byHashKeptFile, c.Suite)
		}
	}
	return nil
}

// mismatch says how got differs from l, "" when it does not. A size of -1
// is not known, and not compared.
func (l *listing) mismatch(got *fileSums) string {
	if l.size >= 0 && got.size != l.size {
		return fmt.Sprintf("%d bytes, the Release lists %d", got.size, l.size)
	}
	for _, h := range hashAlgorithms {
		if want := l.sums[h.field]; want != "" && got.sums[h.field] != want {
			return fmt.Sprintf("%s %s, the Release lists %s", h.field, got.sums[h.field], want)
		}
	}
	return ""
}

// fileSums are a file's size and digests by hash field (MD5sum, SHA256,
// SHA512).
type fileSums struct {
	size int64
	sums map[string]string
}

// hashStream reads r to its end (at most limit bytes when limit >= 0 and
// one more, to see it grew) and returns its size and digests.
func hashStream(ctx context.Context, r io.Reader, limit int64) (*fileSums, error) {
	h := digest.NewHasher(digest.SHA256, digest.SHA512)
	m := md5.New()
	src := ctxio.Reader(ctx, r)
	if limit >= 0 {
		src = io.LimitReader(src, limit+1)
	}
	if _, err := io.CopyBuffer(io.MultiWriter(h, m), src, make([]byte, 1<<20)); err != nil {
		return nil, err
	}
	set := h.Sum()
	return &fileSums{size: h.Size(), sums: map[string]string{
		"SHA256": set[digest.SHA256], "SHA512": set[digest.SHA512], "MD5sum": hex.EncodeToString(m.Sum(nil)),
	}}, nil
}

// sameBytes checks that the file at rel in dir (a by-hash name) has l's
// bytes: it is the file fi (a hard link) or has its size and digests.
func sameBytes(ctx context.Context, dir, rel string, fi fs.FileInfo, l *listing) error {
	f, bfi, err := confined.Open(dir, rel)
	if errors.Is(err, fs.ErrNotExist) {
		return errors.New("missing")
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if os.SameFile(fi, bfi) {
		return nil
	}
	got, err := hashStream(ctx, f, bfi.Size())
	if err != nil {
		return err
	}
	if msg := l.mismatch(got); msg != "" {
		return errors.New(msg)
	}
	return nil
}

// decompressedMatches checks that the .gz or .xz index at rel in dir
// decompresses to the bytes plain lists.
func decompressedMatches(ctx context.Context, dir, rel string, plain *listing) error {
	f, _, err := confined.Open(dir, rel)
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	var d io.Reader
	if strings.HasSuffix(rel, ".gz") {
		d, err = gzip.NewReader(br)
	} else {
		d, err = xzpar.NewReader(br)
	}
	if err != nil {
		return fmt.Errorf("does not decompress: %w", err)
	}
	got, err := hashStream(ctx, d, plain.size)
	if err != nil {
		return fmt.Errorf("does not decompress: %w", err)
	}
	if msg := plain.mismatch(got); msg != "" {
		return fmt.Errorf("decompresses to %s", msg)
	}
	return nil
}

// poolFile is what the Packages indexes say of one pool file, and where.
type poolFile struct {
	size  int64
	sums  map[string]string // MD5sum, SHA256, SHA512 as the stanza gives them
	index string            // the first index that names it
}

// poolReads are the size and digests of each pool file a Verify read, by
// its path: suites that list the same pool files (a staging suite and
// those promoted from it) had each file read and hashed again for each,
// and verify of 30 suites sharing a pool read it 30 times. A file whose
// bytes read differ from what a suite lists is read again for it, so that
// each finding comes from the file as it is.
type poolReads struct {
	mu   sync.Mutex
	sums map[string]*fileSums
}

func (p *poolReads) get(rel string) *fileSums {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sums[rel]
}

func (p *poolReads) put(rel string, got *fileSums) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sums[rel] = got
}

// verifyPool checks every pool file g's Packages indexes name, each once,
// several at a time; one that read has already read with the bytes listed
// is not read again.
func (r *Repo) verifyPool(ctx context.Context, c *SuiteCheck, g *generation, found func(string, string, ...any), read *poolReads) error {
	files := map[string]*poolFile{}
	type listed struct {
		comp string
		key  key
	}
	packages := map[listed]bool{} // an Architecture: all package is in each architecture's index
	for _, e := range g.release.files {
		if e.algorithm != "SHA256" || path.Base(e.path) != indexForms[0] || !strings.Contains(e.path, "/binary-") {
			continue
		}
		data, err := g.listedFile(e.path)
		if err != nil {
			continue // named by verifyIndexes
		}
		comp := strings.SplitN(e.path, "/binary-", 2)[0]
		index := path.Join("dists", c.Suite, e.path)
		entries, err := scanPackages(data, index, c.Suite, comp)
		if err != nil {
			found(filepath.Join(r.root, filepath.FromSlash(index)), "%v", err)
			continue
		}
		for _, en := range entries {
			packages[listed{comp, en.key()}] = true
			want := &poolFile{size: en.Size, index: index, sums: map[string]string{"SHA256": en.SHA256}}
			for _, field := range []string{"MD5sum", "SHA512"} {
				if v := stanzaValue(en.raw, field); v != "" {
					want.sums[field] = v
				}
			}
			name := path.Clean(en.Filename)
			if prev := files[name]; prev != nil {
				if prev.size != want.size || !maps.Equal(prev.sums, want.sums) {
					found(filepath.Join(r.root, filepath.FromSlash(index)), "%s is listed with other size or digests than %s lists: apt refuses one of them; publish anew", name, prev.index)
				}
				continue
			}
			files[name] = want
		}
	}
	c.Packages = len(packages)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	c.PoolFiles = len(names)
	msgs := make([]string, len(names)) // by name, so that the findings come in order
	var mu sync.Mutex
	eg, ectx := errgroup.WithContext(ctx)
	eg.SetLimit(runtime.GOMAXPROCS(0))
	for i, n := range names {
		// Once interrupted (or a read failed), no more files are opened:
		// each would only fail on the done context, and a suite of
		// 200,000 packages took seconds to get through them.
		if ectx.Err() != nil {
			break
		}
		if got := read.get(n); got != nil && files[n].mismatch(got) == "" {
			mu.Lock()
			c.PoolBytes += got.size
			mu.Unlock()
			continue
		}
		r.hook("pool")
		eg.Go(func() error {
			got, msg, err := r.checkPoolFile(ectx, n, files[n])
			if got != nil {
				read.put(n, got)
				mu.Lock()
				c.PoolBytes += got.size
				mu.Unlock()
			}
			msgs[i] = msg
			return err
		})
	}
	if err := eg.Wait(); err != nil {
		return err
	}
	for i, msg := range msgs {
		if msg != "" {
			found(filepath.Join(r.root, filepath.FromSlash(names[i])), "%s", msg)
		}
	}
	return nil
}

// checkPoolFile reads the pool file at rel and compares it with want. It
// returns the size and digests of what it read (nil when it read none to
// its end) and a finding's text ("" when it matches); the error is an
// interrupt.
func (r *Repo) checkPoolFile(ctx context.Context, rel string, want *poolFile) (*fileSums, string, error) {
	f, fi, err := confined.Open(r.root, rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Sprintf("missing: %s lists it, and apt fails to fetch it (404); publish the same .deb again to restore it, or roll the suite back", want.index), nil
	}
	if err != nil {
		return nil, err.Error(), nil
	}
	defer f.Close()
	got, err := hashStream(ctx, f, fi.Size())
	if err != nil {
		if ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
		return nil, err.Error(), nil
	}
	return got, want.mismatch(got), nil
}

// mismatch says how got differs from want, "" when it does not.
func (want *poolFile) mismatch(got *fileSums) string {
	if got.size != want.size {
		return fmt.Sprintf("%d bytes, %s lists %d: apt refuses it (File has unexpected size); publish the same .deb again to restore it, or roll the suite back", got.size, want.index, want.size)
	}
	for _, field := range []string{"SHA512", "SHA256", "MD5sum"} {
		if w := want.sums[field]; w != "" && got.sums[field] != w {
			return fmt.Sprintf("%s %s, %s lists %s: changed after it was published, and apt refuses it (Hash Sum mismatch); publish the same .deb again to restore it, or roll the suite back", field, got.sums[field], want.index, w)
		}
	}
	return ""
}
