package build

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/updeb/updeb/internal/fetch"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/trust"
	"github.com/updeb/updeb/pkg/verify"
)

// Signature and checksum files are not pinned: the cache keeps them per URL
// and recipe version and serves them again as long as their bytes are intact.
// A copy that does not verify (damaged in transit, an HTML error page served
// with 200, a proxy's substitute) must not be served again: when a source's
// verification fails, its signature and checksum files are dropped from the
// cache's index and fetched once more at once; if the fresh copies fail too,
// they are dropped again (the next run fetches them anew) and the error says
// what happened. A failure that is the recipe's own (a bad keyring) is
// returned as it is.

// AuxError is a source whose signature or checksum file did not verify, twice,
// and was discarded.
type AuxError struct {
	Source string
	Files  []string // "the signature file fetched from URL", ...
	Err    error    // the second verification's error
}

func (e *AuxError) Error() string {
	return fmt.Sprintf("source %s: %s did not verify (fetched twice): %v; discarded, so the next run fetches it again; if it fails again, upstream may be compromised or the proxy is serving something else",
		e.Source, strings.Join(e.Files, " and "), e.Err)
}

func (e *AuxError) Unwrap() error { return e.Err }

// auxFiles lists s's unpinned files: URL -> what it is, in messages.
func auxFiles(s recipe.PlannedSource) map[string]string {
	m := map[string]string{}
	if s.Signature != nil {
		m[s.Signature.URL] = "the signature file fetched from " + s.Signature.URL
	}
	if s.Checksums != nil {
		m[s.Checksums.URL] = "the checksum file fetched from " + s.Checksums.URL
	}
	return m
}

// verifySource checks what vouches for vs (see trust.Source), with the
// signature and checksum files in byURL, handling a failure as above.
func verifySource(ctx context.Context, vs *verifiedSource, byURL map[string]*fetch.Result, key string, opts Options, log *slog.Logger) ([]string, error) {
	s := vs.plan
	check := func() ([]string, error) {
		vs.aux = nil
		return trust.Source(&s, s.Pinned, vs.fetched, func(u string) (*fetch.Result, error) {
			vs.aux = append(vs.aux, byURL[u])
			return byURL[u], nil
		}, opts.Now())
	}
	by, err := check()
	aux := auxFiles(s)
	if err == nil || len(aux) == 0 || errors.Is(err, verify.ErrKeyring) {
		return by, err
	}
	var names []string
	for u, what := range aux {
		names = append(names, what)
		if ferr := opts.Fetcher.Forget(ctx, u, key); ferr != nil {
			return nil, errors.Join(err, ferr)
		}
	}
	log.Warn("verification failed; fetching the signature and checksum files again", "source", s.Name, "err", err)
	for u := range aux {
		r, ferr := opts.Fetcher.Fetch(ctx, fetch.Request{URL: u, AllowUnpinned: true, Key: key})
		if ferr != nil {
			return nil, fmt.Errorf("%w (fetching it again after: %v)", ferr, err)
		}
		byURL[u] = r
	}
	if by, err = check(); err == nil {
		log.Warn("verified with freshly fetched files: the earlier copies were damaged", "source", s.Name)
		return by, nil
	}
	for u := range aux {
		opts.Fetcher.Forget(ctx, u, key)
	}
	if errors.Is(err, verify.ErrKeyring) {
		return nil, err
	}
	return nil, &AuxError{Source: s.Name, Files: names, Err: err}
}
