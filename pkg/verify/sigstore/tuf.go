package sigstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/sigstore/sigstore-go/pkg/tuf"
	"github.com/theupdateframework/go-tuf/v2/metadata"

	"github.com/updeb/updeb/pkg/lockfile"
)

// DefaultTUFURL is Sigstore's public-good TUF repository.
const DefaultTUFURL = tuf.DefaultMirror

// trustedRootTarget is the TUF target that holds the trusted root.
const trustedRootTarget = "trusted_root.json"

// RefreshOptions say where and how Refresh fetches.
type RefreshOptions struct {
	// HTTPClient makes every request; required (http.DefaultClient is never
	// used).
	HTTPClient *http.Client
	// RepositoryURL is the TUF repository; default DefaultTUFURL.
	RepositoryURL string
	// Root is the TUF root.json to start from: the trust anchor every newer
	// root must chain to. Default: the public-good TUF root sigstore-go
	// embeds. Each refresh walks the root versions up from it again.
	Root []byte
	// Dir is where the TUF metadata (for rollback protection between
	// refreshes) and targets are kept; required. It is created if missing,
	// and changed only by a refresh that verified (nothing is stored
	// otherwise). Beside it, in its parent folder, a refresh keeps its
	// working copy (.DIR.refresh-*) and a lock file (DIR.lock): refreshes of
	// one Dir run one at a time, in any number of processes, and one
	// finishes or removes what a killed one left.
	Dir string
	// Timeout bounds each request, its body included; default DefaultTimeout.
	Timeout time.Duration
	// UserAgent is sent with every request when set.
	UserAgent string
	// Store, when set, is given the verified trusted root once Dir holds
	// the metadata that vouches for it: where it fails (a full disk), Dir
	// is put back as it was too, so that the metadata and the stored root
	// agree; a refresh killed while it runs leaves the metadata the newer,
	// never the stored root (the next refresh stores its root again).
	Store func(*TrustedRoot) error
}

// Refresh updates the trusted root through TUF, the way Sigstore clients do:
// it verifies the TUF metadata chain from the root anchor (signatures,
// thresholds, expiry, rollback) and returns the trusted_root.json target it
// vouches for. A repository that cannot be asked is a *FetchError
// (ErrUnavailable); one whose answer does not verify wraps ErrTUF. It never runs on its own: verification uses whatever root the
// caller loaded; the caller stores TrustedRoot.JSON() where it keeps its root (RefreshOptions.Store,
// so that the root and the metadata are replaced together).
func Refresh(ctx context.Context, o RefreshOptions) (*TrustedRoot, error) {
	if o.HTTPClient == nil {
		return nil, fmt.Errorf("%w: RefreshOptions.HTTPClient is required", ErrPolicy)
	}
	if o.Dir == "" {
		return nil, fmt.Errorf("%w: RefreshOptions.Dir is required", ErrPolicy)
	}
	if o.RepositoryURL == "" {
		o.RepositoryURL = DefaultTUFURL
	}
	// One repository, one folder of metadata (go-tuf names it after the
	// URL): with a trailing slash or without, a refresh finds what the last
	// one kept, the rollback protection of this one.
	o.RepositoryURL = strings.TrimRight(o.RepositoryURL, "/")
	if _, err := baseURL("RepositoryURL", o.RepositoryURL); err != nil {
		return nil, err
	}
	if len(o.Root) == 0 {
		o.Root = tuf.DefaultRoot()
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	// One refresh of Dir at a time, in any process: two at once would each
	// swap in their copy, and Store's root could end up beside the other's
	// metadata. The lock also makes what a killed refresh left behind safe
	// to finish or remove.
	if err := os.MkdirAll(filepath.Dir(o.Dir), 0o755); err != nil {
		return nil, err
	}
	lock, err := lockfile.Acquire(ctx, o.Dir+".lock", 0)
	if err != nil {
		return nil, fmt.Errorf("sigstore: TUF refresh of %s: %w", o.Dir, err)
	}
	defer lock.Unlock()
	if err := recoverSwap(o.Dir); err != nil {
		return nil, fmt.Errorf("sigstore: TUF refresh: finishing a killed refresh of %s: %w", o.Dir, err)
	}
	// go-tuf writes the metadata it accepts as it goes: it works in a copy
	// of Dir, which replaces Dir only when the whole refresh verified, so
	// that a refused or failed refresh leaves Dir (the rollback protection
	// of the next refresh) as it was.
	work, err := stage(o.Dir)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	rootFile := filepath.Join(work, tuf.URLToPath(o.RepositoryURL), "root.json")
	kept, err := keptRoot(rootFile, filepath.Join(o.Dir, tuf.URLToPath(o.RepositoryURL), "root.json"))
	if err != nil {
		return nil, err
	}
	fetcher := &tufFetcher{ctx: ctx, o: o, roots: map[string][]byte{}}
	opts := &tuf.Options{
		Root:              o.Root,
		CachePath:         work,
		RepositoryBaseURL: o.RepositoryURL,
		Fetcher:           fetcher,
		Context:           ctx,
	}
	c, err := tuf.New(opts) // with no cache validity, New refreshes from the repository
	if err != nil {
		return nil, tufError(o.RepositoryURL, err)
	}
	if err := kept.check(o.Root, rootFile, fetcher.roots); err != nil {
		return nil, fmt.Errorf("%w: refresh from %s: %w", ErrTUF, o.RepositoryURL, err)
	}
	b, err := c.GetTarget(trustedRootTarget)
	if err != nil {
		return nil, tufError(o.RepositoryURL, err)
	}
	tr, err := ParseTrustedRoot(fmt.Sprintf("%s from TUF repository %s", trustedRootTarget, o.RepositoryURL), b)
	if err != nil {
		return nil, tufError(o.RepositoryURL, err)
	}
	// The verified metadata takes Dir's place before Store takes its root:
	// a refresh killed while Store writes leaves metadata newer than the
	// root stored, which the next refresh mends, never the root newer than
	// the metadata, which would let it take the older version again and
	// store its root over the newer one.
	old, err := swap(work, o.Dir)
	if err != nil {
		return nil, err
	}
	if o.Store != nil {
		if err := o.Store(tr); err != nil {
			if uerr := unswap(work, o.Dir, old); uerr != nil {
				return nil, fmt.Errorf("%w (and putting the TUF metadata of %s back: %v)", err, o.Dir, uerr)
			}
			return nil, err
		}
	}
	if err := os.RemoveAll(old); err != nil {
		return nil, err
	}
	return tr, nil
}

// kept is the TUF root an earlier refresh verified and kept in Dir: the
// newest root version of the repository this Dir has trusted.
type kept struct {
	path string
	root *metadata.Metadata[metadata.RootType]
}

// keptRoot reads the root an earlier refresh kept (its copy at staged, at
// path in Dir); nil where there is none. One that does not read is an
// error naming it: Dir is written only by a refresh that verified.
func keptRoot(staged, path string) (*kept, error) {
	b, err := os.ReadFile(staged)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	r, err := metadata.Root().FromBytes(b)
	if err != nil {
		return nil, fmt.Errorf("sigstore: TUF refresh: %s, the root an earlier refresh verified, does not read: %v; remove %s to start again from the TUF root anchor", path, err, filepath.Dir(path))
	}
	return &kept{path: path, root: r}, nil
}

// check refuses a refresh that walked the root versions up from the anchor
// (every refresh does) to an older version than the one an earlier refresh
// kept, or through another root at that version: a root version that
// revoked keys (after their compromise) binds every refresh after the one
// that took it, and a mirror that answers 404 for it (or serves a root of
// its own making there) would have metadata signed with the revoked keys
// accepted. final is the root the walk ended with; walked, the root
// versions it fetched by name (N.root.json). The anchor stays the trust the
// walk starts from, so that one of another repository is refused as
// before.
func (k *kept) check(anchor []byte, final string, walked map[string][]byte) error {
	if k == nil {
		return nil
	}
	b, err := os.ReadFile(final)
	if err != nil {
		return err
	}
	f, err := metadata.Root().FromBytes(b)
	if err != nil {
		return err
	}
	a, err := metadata.Root().FromBytes(anchor)
	if err != nil {
		return err
	}
	want := k.root.Signed.Version
	remove := fmt.Sprintf("if the repository was made anew with other keys, remove %s to start again from the anchor", filepath.Dir(k.path))
	if f.Signed.Version < want {
		return fmt.Errorf("the repository serves root versions up to %d only, and an earlier refresh verified and kept version %d (%s): a rolled-back repository, whose older keys may have been revoked, is refused; %s",
			f.Signed.Version, want, k.path, remove)
	}
	at := walked[fmt.Sprintf("%d.root.json", want)]
	if want == a.Signed.Version {
		at = anchor
	}
	if want < a.Signed.Version {
		return nil // the anchor is newer: the trust the caller gives, out of band
	}
	r, err := metadata.Root().FromBytes(at)
	if err == nil && !sameRoot(r, k.root) {
		err = errors.New("another root")
	}
	if err != nil {
		return fmt.Errorf("the repository's root version %d is not the one an earlier refresh verified and kept (%s): %v; a forked repository is refused; %s", want, k.path, err, remove)
	}
	return nil
}

// sameRoot reports whether two root.json files sign the same content (the
// same bytes may be formatted otherwise, or carry more signatures).
func sameRoot(a, b *metadata.Metadata[metadata.RootType]) bool {
	x, errX := json.Marshal(a.Signed)
	y, errY := json.Marshal(b.Signed)
	return errX == nil && errY == nil && bytes.Equal(x, y)
}

// maxTUFFile bounds a file copied from the TUF metadata folder (metadata
// and the trusted root are kilobytes).
const maxTUFFile = 32 << 20

// stage copies the regular files of dir (created if missing) into a new
// folder beside it and returns that folder. Symlinks, FIFOs and devices are
// not copied (nothing in a TUF cache is one).
func stage(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	work, err := os.MkdirTemp(filepath.Dir(dir), workPrefix(dir)+"*")
	if err != nil {
		return "", err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		os.RemoveAll(work)
		return "", err
	}
	defer root.Close()
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return err
		}
		dst := filepath.Join(work, filepath.FromSlash(p))
		switch {
		case d.IsDir():
			return os.Mkdir(dst, 0o755)
		case !d.Type().IsRegular():
			return nil
		}
		f, err := root.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, maxTUFFile+1))
		if err != nil {
			return err
		}
		if len(b) > maxTUFFile {
			return fmt.Errorf("%s: larger than %d bytes", filepath.Join(dir, p), maxTUFFile)
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		os.RemoveAll(work)
		return "", err
	}
	return work, nil
}

// workPrefix starts the names of a refresh's copies of dir, beside it.
func workPrefix(dir string) string { return "." + filepath.Base(dir) + ".refresh-" }

// swap puts work in dir's place: dir moves aside (work + ".old", returned
// for the caller to remove), work takes its name. A refresh killed on the
// way leaves a state that recoverSwap finishes; never a mix of the two
// copies.
func swap(work, dir string) (string, error) {
	old := work + ".old"
	if err := os.Rename(dir, old); err != nil {
		return "", err
	}
	if err := os.Rename(work, dir); err != nil {
		os.Rename(old, dir)
		return "", err
	}
	return old, nil
}

// unswap undoes swap: dir goes back to work, old takes dir's place. Killed
// between the two, recoverSwap puts work (the newer metadata) in dir's place.
func unswap(work, dir, old string) error {
	if err := os.Rename(dir, work); err != nil {
		return err
	}
	return os.Rename(old, dir)
}

// recoverSwap finishes or undoes what a killed refresh of dir left beside
// it; the caller holds the lock. Killed while it staged or verified: a
// copy (removed). Between swap's renames (or unswap's): dir missing, a copy
// W and W.old, the dir it moved aside; W verified in full, so W takes dir's
// place, whether Store took its root or not (the next refresh stores it).
// After them (while Store ran, or before the old copy went): dir and W.old
// (removed).
func recoverSwap(dir string) error {
	parent, prefix := filepath.Dir(dir), workPrefix(dir)
	entries, err := os.ReadDir(parent)
	if err != nil {
		return err
	}
	var left []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			left = append(left, filepath.Join(parent, e.Name()))
		}
	}
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		for _, w := range left {
			if strings.HasSuffix(w, ".old") || !slices.Contains(left, w+".old") {
				continue
			}
			if err := os.Rename(w, dir); err != nil {
				return err
			}
			break
		}
	}
	for _, w := range left {
		if err := os.RemoveAll(w); err != nil {
			return err
		}
	}
	return nil
}

// ErrTUF is wrapped when a TUF repository answered and its metadata or
// target does not verify from the root anchor: expired, signed by the wrong
// keys, rolled back, altered, or a target that is no trusted root.
var ErrTUF = errors.New("sigstore: TUF repository refused")

// tufError tells a repository that could not be asked (ErrUnavailable) from
// one whose answer was refused (ErrTUF).
func tufError(repo string, err error) error {
	if errors.Is(err, ErrUnavailable) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("sigstore: TUF refresh from %s: %w", repo, err)
	}
	return fmt.Errorf("%w: refresh from %s: %w", ErrTUF, repo, err)
}

// tufFetcher downloads TUF files through the caller's client, bounded in size
// and time. Its errors carry go-tuf's *metadata.ErrDownloadHTTP (a 404 ends the
// walk over root versions) inside a *FetchError.
type tufFetcher struct {
	ctx context.Context
	o   RefreshOptions
	// roots are the root versions fetched (N.root.json), by file name.
	roots map[string][]byte
}

func (f *tufFetcher) DownloadFile(u string, maxLength int64, _ time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(f.ctx, f.o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, &FetchError{URL: u, Err: err}
	}
	if f.o.UserAgent != "" {
		req.Header.Set("User-Agent", f.o.UserAgent)
	}
	resp, err := f.o.HTTPClient.Do(req)
	if err != nil {
		return nil, &FetchError{URL: u, Err: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, &FetchError{URL: u, Status: resp.StatusCode, Err: &metadata.ErrDownloadHTTP{StatusCode: resp.StatusCode, URL: u}}
	}
	if resp.ContentLength > maxLength {
		return nil, &metadata.ErrDownloadLengthMismatch{Msg: fmt.Sprintf("%s: %d bytes, more than the %d the metadata allows", u, resp.ContentLength, maxLength)}
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxLength+1))
	if err != nil {
		return nil, &FetchError{URL: u, Status: resp.StatusCode, Err: fmt.Errorf("reading the response: %w", err)}
	}
	if int64(len(b)) > maxLength {
		return nil, &metadata.ErrDownloadLengthMismatch{Msg: fmt.Sprintf("%s: more than the %d bytes the metadata allows", u, maxLength)}
	}
	if name := path.Base(req.URL.Path); strings.HasSuffix(name, ".root.json") {
		f.roots[name] = b
	}
	return b, nil
}
