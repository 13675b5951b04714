// Package track follows upstream releases for recipes: it lists the versions a
// recipe's `watch` names (GitHub releases through the API, or a URL listing
// with a version pattern), keeps those in the recipe's track, and counts a
// version only once every artifact the recipe would fetch for it (sources,
// signatures, checksum files, for every architecture) exists upstream. On top
// of that, Check says whether a recipe is outdated or out of support (updeb
// outdated) and Bump moves a recipe to a new version with freshly fetched,
// verified and cross-checked digests, rewriting only the lines that change
// (updeb bump).
//
// Every request goes through a Client (a *fetch.Fetcher: the configured proxy,
// mirrors and retry policy). The package reads no environment: the GitHub
// token and API base come in Options.
package track

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/updeb/updeb/internal/fetch"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/pkg/debversion"
	"github.com/updeb/updeb/pkg/verify/sigstore"
)

// DefaultGitHubAPI is the GitHub REST API base URL.
const DefaultGitHubAPI = "https://api.github.com"

// Client is what the package needs from a downloader; *fetch.Fetcher is one.
type Client interface {
	Get(ctx context.Context, url string, header http.Header, limit int64) ([]byte, error)
	GetHeader(ctx context.Context, url string, header http.Header, limit int64) ([]byte, http.Header, error)
	Exists(ctx context.Context, url string) (bool, error)
	Fetch(ctx context.Context, r fetch.Request) (*fetch.Result, error)
}

var _ Client = (*fetch.Fetcher)(nil)

// Options are shared by Releases, Check and Bump.
type Options struct {
	Client      Client
	GitHubAPI   string // "" means DefaultGitHubAPI
	GitHubToken string // sent as "Authorization: Bearer"; "" sends none
	Now         func() time.Time
	Parallel    int // existence probes at once; <= 0 means 4
	// Listings, when set, keeps each GitHub repository's release listing
	// for the run (see Listings); nil lists anew for every recipe.
	Listings *Listings
	// Sigstore verifies the Sigstore material of sources when Bump fetches
	// them (nil refuses sources that name some).
	Sigstore *sigstore.Verifier
}

func (o Options) api() string {
	if o.GitHubAPI == "" {
		return DefaultGitHubAPI
	}
	return strings.TrimRight(o.GitHubAPI, "/")
}

func (o Options) now() time.Time {
	if o.Now == nil {
		return time.Now()
	}
	return o.Now()
}

// Errors callers branch on.
var (
	// ErrNoWatch: the recipe has no watch section.
	ErrNoWatch = errors.New("track: the recipe has no watch")
	// ErrUpstream wraps answers from the release source that make no sense
	// (malformed JSON, a listing without versions). Exit 3 at the CLI.
	ErrUpstream = errors.New("track: unusable answer from upstream")
	// ErrAmbiguous: the newest release has a twin upstream, another tag of
	// the same version to dpkg (v1.3.0 and v1.03.0). Exit 1: give --to.
	ErrAmbiguous = errors.New("track: upstream tagged one version twice")
)

// APIError is a GitHub API answer other than 200, explained.
type APIError struct {
	URL       string
	Status    int
	Message   string // GitHub's "message", or the start of the body
	RateLimit bool   // a 403/429 with the rate limit exhausted
	// Token is set when the request carried a token (GITHUB_TOKEN): a rate
	// limit is then the token's own, which no setting raises.
	Token bool
	// Secondary is set for GitHub's secondary rate limit (too many requests
	// at once), which a token does not lift.
	Secondary bool
	Reset     time.Time // when to ask again: X-RateLimit-Reset, or Retry-After
	Err       error     // the underlying fetch error
}

func (e *APIError) Error() string {
	switch {
	case e.Secondary && !e.Reset.IsZero():
		return fmt.Sprintf("GitHub API secondary rate limit exceeded at %s (retry after %s): %s", e.URL, e.Reset.UTC().Format(time.RFC3339), e.Message)
	case e.Secondary:
		return fmt.Sprintf("GitHub API secondary rate limit exceeded at %s: %s", e.URL, e.Message)
	case e.RateLimit && !e.Reset.IsZero():
		return fmt.Sprintf("GitHub API rate limit exceeded at %s (resets %s): %s", e.URL, e.Reset.UTC().Format(time.RFC3339), e.Message)
	case e.RateLimit:
		return fmt.Sprintf("GitHub API rate limit exceeded at %s: %s", e.URL, e.Message)
	case e.Status == http.StatusNotFound:
		return fmt.Sprintf("GitHub API %s: 404 Not Found (no such repository, or it is private): %s", e.URL, e.Message)
	case e.Status == http.StatusUnauthorized && !e.Token:
		return fmt.Sprintf("GitHub API %s: 401 Unauthorized (no token was sent, and the API wants one): %s", e.URL, e.Message)
	case e.Status == http.StatusUnauthorized:
		return fmt.Sprintf("GitHub API %s: 401 Unauthorized (the token was refused): %s", e.URL, e.Message)
	case e.Status == http.StatusForbidden && e.Token:
		return fmt.Sprintf("GitHub API %s: 403 Forbidden (the token was sent, and may not read this repository): %s", e.URL, e.Message)
	}
	return fmt.Sprintf("GitHub API %s: HTTP %d: %s", e.URL, e.Status, e.Message)
}

func (e *APIError) Unwrap() error { return e.Err }

// Release is one upstream version.
type Release struct {
	Version    string    `json:"version"` // as recipes write it: the tag without the tag prefix
	Tag        string    `json:"tag,omitempty"`
	Published  time.Time `json:"published,omitzero"`   // zero when the source gives no date
	Prerelease bool      `json:"prerelease,omitempty"` // GitHub's flag, or a pre-release version (IsPrerelease)
}

// debianOf returns the version's Debian form for ordering, or "" when it is
// not a valid upstream version.
func debianOf(v string) string {
	d, err := debversion.FromUpstream(v)
	if err != nil {
		return ""
	}
	return d
}

// compareVersions orders upstream versions as Debian would order the packages.
func compareVersions(a, b string) int {
	c, err := debversion.CompareStrings(debianOf(a), debianOf(b))
	if err != nil {
		return strings.Compare(a, b)
	}
	return c
}

// IsPrerelease says whether a version has a semver pre-release part (1.30.0-rc.1).
func IsPrerelease(v string) bool { return strings.Contains(debianOf(v), "~") }

// inTrack reports whether version is in the track ("" means every version).
func inTrack(track, version string) (bool, error) {
	if track == "" {
		return true, nil
	}
	c, err := debversion.ParseConstraint(track)
	if err != nil {
		return false, err
	}
	return c.Allows(version)
}

// Component is the name updeb compat and the end-of-life data know a recipe
// by: its name, without a "-MAJOR.MINOR" suffix that versioned recipe series
// add (kubernetes-1.35 -> kubernetes).
func Component(r *recipe.Recipe) string { return recipe.Component(r.Name) }
