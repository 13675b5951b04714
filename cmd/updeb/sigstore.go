package main

import (
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/updeb/updeb/internal/config"
	"github.com/updeb/updeb/internal/fetch"
	"github.com/updeb/updeb/pkg/verify/sigstore"
)

// refreshedRootFile is where updeb trust refresh stores the trusted root,
// under the state folder.
const refreshedRootFile = "sigstore/trusted_root.json"

// trustedRoot is the Sigstore trusted root in use and where it came from.
type trustedRoot struct {
	root *sigstore.TrustedRoot
	// Source is "config" (sigstore.trusted-root), "refreshed" (updeb trust
	// refresh, in the state folder), "flag" (--trusted-root) or "bundled".
	Source string
	File   string    // the file read; "" for the bundled snapshot
	Since  time.Time // the file's modification time (when it was refreshed or copied); the snapshot's date for the bundled one
}

// trustedRootFor applies the precedence (trustedRootFile) and reads the
// root. Roots are never downloaded here. A file that is named but unusable
// is invalid input (exit 2).
func (g *globalOptions) trustedRootFor(c *config.Config) (*trustedRoot, error) {
	if source, file, hint := g.trustedRootFile(c); file != "" {
		return loadTrustedRoot(source, file, hint)
	}
	r, err := sigstore.PublicGood()
	if err != nil {
		return nil, err
	}
	return &trustedRoot{root: r, Source: "bundled", Since: sigstore.PublicGoodDate()}, nil
}

// trustedRootFile is which trusted root is in effect, without reading it:
// the config's sigstore.trusted-root, else the root updeb trust refresh
// stored in the state folder, else the bundled public-good snapshot (file
// ""); hint says what to do when the file is unusable.
func (g *globalOptions) trustedRootFile(c *config.Config) (source, file, hint string) {
	if c.Sigstore.TrustedRoot != "" {
		return "config", c.Sigstore.TrustedRoot, "fix sigstore: trusted-root: in " + c.File + " (a trusted_root.json)"
	}
	if dir, err := g.stateDirFor(c); err == nil {
		p := filepath.Join(dir, refreshedRootFile)
		// Only a root that is not there gives way to the bundled one. One
		// updeb cannot look for (a state folder this user may not read, a
		// symlink loop, a file where its folder goes) may be there: the
		// bundled snapshot in its place is another trust anchor, without a
		// word (one that still trusts a key the refreshed root dropped, or
		// the public-good instance where a site refreshed its own).
		if _, err := os.Stat(p); err == nil || !errors.Is(err, fs.ErrNotExist) {
			return "refreshed", p, "run 'updeb trust refresh' again, or remove " + p + " to use the bundled root (a state folder this user cannot read: let it read it, or name another with --state or state: in the config)"
		}
	}
	return "bundled", "", ""
}

// loadTrustedRoot reads a trusted_root.json the user (or updeb trust
// refresh) put somewhere.
// trustedRootFlag is the root a --trusted-root flag names (file), else the
// one in use (trustedRootFor).
func (g *globalOptions) trustedRootFlag(c *config.Config, file string) (*trustedRoot, error) {
	if file != "" {
		return loadTrustedRoot("flag", file, "--trusted-root names a Sigstore trusted_root.json")
	}
	return g.trustedRootFor(c)
}

func loadTrustedRoot(source, path, hint string) (*trustedRoot, error) {
	r, err := sigstore.LoadTrustedRoot(path)
	if err != nil {
		return nil, invalidInput(err, hint)
	}
	tr := &trustedRoot{root: r, Source: source, File: path}
	if fi, err := os.Stat(path); err == nil {
		tr.Since = fi.ModTime().UTC()
	}
	return tr, nil
}

// sigstoreOptions are the verifier's settings from the config: Rekor and
// GitHub API bases, the GitHub token, and every request through the fetcher
// (proxy, mirrors, retries, offline mode).
func sigstoreOptions(c *config.Config, f *fetch.Fetcher) sigstore.Options {
	api := first(c.Sigstore.GitHubAPI, c.GitHubAPI)
	return sigstore.Options{
		HTTPClient:   &http.Client{Transport: f.Transport()},
		RekorURL:     c.Sigstore.RekorURL,
		GitHubAPIURL: api,
		GitHubToken:  githubToken(first(api, sigstore.DefaultGitHubAPIURL), f),
		UserAgent:    "updeb/" + version,
		Timeout:      sigstoreTimeout(c),
	}
}

// sigstoreTimeout bounds each request to Rekor, GitHub's API or a TUF
// repository, its body included: the config's fetch: retry-time when it is
// shorter than the Sigstore default, so that a proxy that answers and then
// trickles is cut off as a download is.
func sigstoreTimeout(c *config.Config) time.Duration {
	if rt := time.Duration(c.Fetch.RetryTime); rt > 0 && rt < sigstore.DefaultTimeout {
		return rt
	}
	return sigstore.DefaultTimeout
}

// newSigstoreVerifier is the verifier builds, bump and verify use.
func (g *globalOptions) newSigstoreVerifier(c *config.Config, f *fetch.Fetcher) (*sigstore.Verifier, error) {
	return g.sigstoreVerifier(c, sigstoreOptions(c, f))
}

// sigstoreVerifier is newSigstoreVerifier with its options given. The
// trusted root is read when a source signed with Sigstore is first verified
// (once for the run, whatever runs in parallel), not before: a root this
// user cannot read or that is corrupt (a state folder under another HOME)
// fails those sources, with its hint, and no build or bump of a recipe
// signed otherwise.
func (g *globalOptions) sigstoreVerifier(c *config.Config, o sigstore.Options) (*sigstore.Verifier, error) {
	v, err := sigstore.NewDeferred(func() (*sigstore.TrustedRoot, error) {
		tr, err := g.trustedRootFor(c)
		if err != nil {
			return nil, err
		}
		return tr.root, nil
	}, o)
	if err != nil {
		return nil, invalidInput(err, "check sigstore: in the config")
	}
	return v, nil
}
