package source

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"

	"github.com/updeb/updeb/internal/fetch"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/trust"
	"github.com/updeb/updeb/pkg/digest"
	"github.com/updeb/updeb/pkg/verify/openpgp"
	"github.com/updeb/updeb/pkg/verify/sigstore"
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
	Source   string
	Files    []string // "the signature file fetched from URL (mirror MIRROR-URL)", ...
	Err      error    // the second verification's error
	Mirrored bool     // a mirrors: entry served one of them: the next run reads the same copy
}

func (e *AuxError) Error() string {
	msg := fmt.Sprintf("source %s: %s did not verify (fetched twice): %v; discarded, so the next run fetches it again; if it fails again, upstream may be compromised or the proxy is serving something else",
		e.Source, strings.Join(e.Files, " and "), e.Err)
	if e.Mirrored {
		msg += ", or the mirror serves a copy that is not upstream's (stale, an HTML page): it serves the same one again"
	}
	return msg
}

func (e *AuxError) Unwrap() error { return e.Err }

// refusedByFile reports whether err is a verdict on what an unpinned file
// says (a refused signature or Sigstore material, a checksum file that
// disagrees or does not parse), which a fresh copy may change; not a
// failure to get the file, nor the recipe's own mistake (a bad keyring).
func refusedByFile(err error) bool {
	return errors.Is(err, openpgp.ErrSignature) || errors.Is(err, sigstore.ErrRefused) ||
		errors.Is(err, trust.ErrCrossCheck) || errors.Is(err, digest.ErrChecksums)
}

// verifySource checks what vouches for vs (see trust.Source), with the
// signature and checksum files in byURL, handling a failure as above. A file
// trust.Source asks for that byURL lacks (a Rekor entry, whose URL the
// signature decides) is fetched, and dropped like the others on a refusal.
func verifySource(ctx context.Context, vs *Verified, byURL map[string]*fetch.Result, key string, opts Options, log *slog.Logger) ([]string, error) {
	s := vs.Source
	used := map[string]bool{} // the unpinned files the last check read
	check := func() ([]string, error) {
		vs.Aux = nil
		clear(used)
		get := func(u string) (*fetch.Result, error) {
			r, ok := byURL[u]
			if !ok {
				var err error
				if r, err = opts.Fetcher.Fetch(ctx, fetch.Request{URL: u, AllowUnpinned: true, Key: key}); err != nil {
					return nil, err
				}
				byURL[u] = r
			}
			used[u] = true
			vs.Aux = append(vs.Aux, r)
			return r, nil
		}
		return trust.Source(ctx, &s, s.Pinned, vs.Artifact, trust.Verifiers{Get: get, Now: opts.Now(), Sigstore: opts.Sigstore})
	}
	by, err := check()
	if err == nil || len(used) == 0 || !refusedByFile(err) {
		return by, err
	}
	// forget drops the files the check read from the cache's index (and
	// byURL), so that nothing serves them again.
	forget := func() ([]string, error) {
		names := make([]string, 0, len(used))
		for u := range used {
			names = append(names, u)
		}
		sort.Strings(names)
		for _, u := range names {
			delete(byURL, u)
			if ferr := opts.Fetcher.Forget(ctx, u, key); ferr != nil {
				return nil, ferr
			}
		}
		return names, nil
	}
	if _, ferr := forget(); ferr != nil {
		return nil, errors.Join(err, ferr)
	}
	log.Warn("verification failed; fetching the signature and checksum files again", "source", s.Name, "err", err)
	if by, err = check(); err == nil {
		log.Warn("verified with freshly fetched files: the earlier copies were damaged", "source", s.Name)
		return by, nil
	}
	if !refusedByFile(err) {
		return nil, err
	}
	// Where each copy came from, before forget drops them: a mirror's
	// copy was named by its upstream URL alone, and the error sent the
	// operator to upstream and the proxy, which the build never asked.
	via := map[string]string{}
	for u := range used {
		if r := byURL[u]; r != nil && strings.HasPrefix(r.Via, "mirror ") {
			via[u] = r.Via
		}
	}
	names, ferr := forget()
	if ferr != nil {
		return nil, errors.Join(err, ferr)
	}
	files := make([]string, len(names))
	for i, u := range names {
		files[i] = "the " + auxFileName(s, u) + " fetched from " + u
		if v := via[u]; v != "" {
			files[i] += " (" + v + ")"
		}
	}
	return nil, &AuxError{Source: s.Name, Files: files, Err: err, Mirrored: len(via) > 0}
}

// auxFileName names what the unpinned file at u is to s, in messages.
func auxFileName(s recipe.ResolvedSource, u string) string {
	switch {
	case s.Signature != nil && u == s.Signature.URL:
		return "signature file"
	case s.Checksums != nil && u == s.Checksums.URL:
		return "checksum file"
	case s.Sigstore != nil && u == s.Sigstore.SigURL:
		return "Sigstore signature file"
	case s.Sigstore != nil && u == s.Sigstore.CertURL:
		return "Sigstore certificate file"
	case s.Sigstore != nil && u == s.Sigstore.BundleURL:
		return "Sigstore bundle"
	}
	return "transparency log entry"
}
