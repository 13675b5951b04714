package sigstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/sigstore/sigstore-go/pkg/tuf"
	"github.com/theupdateframework/go-tuf/v2/metadata"
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
	// otherwise).
	Dir string
	// Timeout bounds each request, its body included; default DefaultTimeout.
	Timeout time.Duration
	// UserAgent is sent with every request when set.
	UserAgent string
}

// Refresh updates the trusted root through TUF, the way Sigstore clients do:
// it verifies the TUF metadata chain from the root anchor (signatures,
// thresholds, expiry, rollback) and returns the trusted_root.json target it
// vouches for. A repository that cannot be asked is a *FetchError
// (ErrUnavailable); one whose answer does not verify wraps ErrTUF. It never runs on its own: verification uses whatever root the
// caller loaded; the caller stores TrustedRoot.JSON() where it keeps its root.
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
	if _, err := baseURL("RepositoryURL", o.RepositoryURL); err != nil {
		return nil, err
	}
	if len(o.Root) == 0 {
		o.Root = tuf.DefaultRoot()
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
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
	opts := &tuf.Options{
		Root:              o.Root,
		CachePath:         work,
		RepositoryBaseURL: o.RepositoryURL,
		Fetcher:           &tufFetcher{ctx: ctx, o: o},
		Context:           ctx,
	}
	c, err := tuf.New(opts) // with no cache validity, New refreshes from the repository
	if err != nil {
		return nil, tufError(o.RepositoryURL, err)
	}
	b, err := c.GetTarget(trustedRootTarget)
	if err != nil {
		return nil, tufError(o.RepositoryURL, err)
	}
	tr, err := ParseTrustedRoot(fmt.Sprintf("%s from TUF repository %s", trustedRootTarget, o.RepositoryURL), b)
	if err != nil {
		return nil, tufError(o.RepositoryURL, err)
	}
	if err := swap(work, o.Dir); err != nil {
		return nil, err
	}
	return tr, nil
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
	work, err := os.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+".refresh-*")
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

// swap puts work in dir's place: dir moves aside, work takes its name, the
// old copy goes. A crash between the renames leaves dir missing (the next
// refresh starts from the root anchor again) or both, never a mix.
func swap(work, dir string) error {
	old := work + ".old"
	if err := os.Rename(dir, old); err != nil {
		return err
	}
	if err := os.Rename(work, dir); err != nil {
		os.Rename(old, dir)
		return err
	}
	return os.RemoveAll(old)
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
	return b, nil
}
