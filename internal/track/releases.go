package track

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/updeb/updeb/internal/fetch"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/pkg/strictjson"
	"github.com/updeb/updeb/pkg/utf8cut"
	"github.com/updeb/updeb/pkg/weblink"
)

const (
	perPage = 100
	// maxReleases bounds the GitHub listing: GitHub serves the newest 1000
	// releases and no more (a page past them is 422, "Only the first 1000
	// results are available"); newest first, they reach back years even for
	// Kubernetes (which publishes several lines at once).
	maxReleases = 1000
	// maxPages bounds the pages read: 1000 releases at GitHub's default of
	// 30 a page (a server that ignores per_page), however few a page holds.
	maxPages = 34
	// maxDocument is the size cap of one API page or listing.
	maxDocument = 16 << 20
)

// Releases lists the versions w names, newest first: drafts never, and
// pre-releases (flagged by GitHub, or with a semver pre-release part such as
// -rc.1) only with w.Prereleases. Tags without w.TagPrefix are not this
// component's (kustomize's repository also tags kyaml/v0.17.0) and are skipped,
// and so are versions that are not valid upstream versions; a GitHub list
// that leaves no version at all is ErrUpstream, as a listing the pattern
// matches nothing in. The track is not applied here.
func Releases(ctx context.Context, w *recipe.Watch, o Options) ([]Release, error) {
	return releases(ctx, w, o, w != nil && w.Prereleases)
}

// releases is Releases, with pre-releases when prereleases is set.
func releases(ctx context.Context, w *recipe.Watch, o Options, prereleases bool) ([]Release, error) {
	var all []Release
	switch {
	case w == nil:
		return nil, ErrNoWatch
	case w.GitHub != "":
		entries, err := o.githubReleases(ctx, w.GitHub)
		if err != nil {
			return nil, err
		}
		u := fmt.Sprintf("%s/repos/%s/releases", o.api(), w.GitHub)
		if all, err = fromGitHub(entries, w.TagPrefix); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrUpstream, u, err)
		}
		// As a listing where the pattern matches nothing: a watch that
		// finds no version would call the recipe up to date forever.
		if len(all) == 0 {
			if len(entries) == 0 {
				return nil, fmt.Errorf("%w: %s: the repository has no release (tags alone are not GitHub releases): watch it with url: and pattern: instead", ErrUpstream, u)
			}
			return nil, fmt.Errorf("%w: %s: none of its %d release(s) has a tag of the form %q (drafts left out): check watch: tag-prefix: and github: in the recipe", ErrUpstream, u, len(entries), w.TagPrefix+"VERSION")
		}
	default:
		body, err := o.Client.Get(ctx, w.URL, nil, maxDocument)
		if err != nil {
			return nil, tooLarge(w.URL, err)
		}
		rs, err := ParseListing(body, w.Pattern, w.TagPrefix)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrUpstream, w.URL, err)
		}
		all = rs
	}
	var pre *Release
	out := all[:0]
	for _, r := range all {
		r.Prerelease = r.Prerelease || IsPrerelease(r.Version)
		if r.Prerelease && !prereleases {
			pre = &r
			continue
		}
		out = append(out, r)
	}
	// As a listing with no version at all: a watch whose every version is
	// a pre-release it does not follow (date tags such as 2024-05-01,
	// whose hyphen starts a pre-release part: 2024~05.01 to dpkg) would
	// call the recipe up to date forever.
	if len(out) == 0 && pre != nil {
		src := w.URL
		if w.GitHub != "" {
			src = fmt.Sprintf("%s/repos/%s/releases", o.api(), w.GitHub)
		}
		return nil, fmt.Errorf("%w: %s: every version it lists is a pre-release (GitHub's flag, or a pre-release part after a hyphen: %s is %s to dpkg), which the watch does not follow: set watch: prereleases: true in the recipe to follow them",
			ErrUpstream, src, pre.Version, debianOf(pre.Version))
	}
	slices.SortStableFunc(out, func(a, b Release) int { return compareVersions(b.Version, a.Version) })
	return slices.CompactFunc(out, func(a, b Release) bool { return a.Version == b.Version }), nil
}

// Listings keeps the GitHub release listings of a run, one per repository
// and API: the recipes that watch one repository (kubernetes-1.35,
// kubernetes-1.36, kubeadm, ... all watch kubernetes/kubernetes) read it
// once, each with its own tag prefix and track, not once each (ten pages
// a listing for Kubernetes, against 60 requests an hour without a token).
// A listing that failed fails for each of them, without asking again.
// The zero value is ready to use; nil in Options lists anew every time.
type Listings struct {
	mu sync.Mutex
	m  map[string]*listing
}

// listing is one repository's releases, every page read, or the error
// that ended the reading.
type listing struct {
	once    sync.Once
	entries []githubRelease
	err     error
}

// githubReleases lists repo's releases, or gives the run's listing of it.
func (o Options) githubReleases(ctx context.Context, repo string) ([]githubRelease, error) {
	if o.Listings == nil {
		return listGitHub(ctx, repo, o)
	}
	key := o.api() + "/repos/" + strings.ToLower(repo) // GitHub's names ignore case
	o.Listings.mu.Lock()
	if o.Listings.m == nil {
		o.Listings.m = map[string]*listing{}
	}
	l := o.Listings.m[key]
	if l == nil {
		l = &listing{}
		o.Listings.m[key] = l
	}
	o.Listings.mu.Unlock()
	l.once.Do(func() { l.entries, l.err = listGitHub(ctx, repo, o) })
	return l.entries, l.err
}

// listGitHub reads every page of repo's release listing (the newest
// maxReleases), drafts and every tag included.
func listGitHub(ctx context.Context, repo string, o Options) ([]githubRelease, error) {
	var all []githubRelease
	first := fmt.Sprintf("%s/repos/%s/releases?per_page=%d", o.api(), repo, perPage)
	read := map[string]bool{}
	seen := map[[sha256.Size]byte]string{} // a page's releases -> the URL that gave them
	for u, page := first+"&page=1", 1; u != ""; page++ {
		read[pageKey(u)] = true
		body, h, err := o.Client.GetHeader(ctx, u, githubHeader(o.GitHubToken), maxDocument)
		if err != nil {
			return nil, apiError(u, tooLarge(u, err), o.GitHubToken)
		}
		entries, err := parseGitHubPage(body)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrUpstream, u, err)
		}
		n := len(entries)
		// GitHub never sends more than per_page asks; a page that does
		// would be asked for again and again, each up to maxDocument
		// of entries to read and sort.
		if n > perPage {
			return nil, fmt.Errorf("%w: %s: %d releases in one page, more than the %d asked for (per_page): not an answer of GitHub's releases API", ErrUpstream, u, n, perPage)
		}
		// A page that repeats one read before (a proxy or a mirror of the
		// API that ignores the query string answers page 1 for every
		// page=) would be read again and again, to maxPages, and its
		// releases counted many times: no listing, rather than a wrong one.
		if n > 0 {
			b, _ := json.Marshal(entries)
			sum := sha256.Sum256(b)
			if before, ok := seen[sum]; ok {
				return nil, fmt.Errorf("%w: %s: the same %d release(s) as %s, read before: the listing repeats a page instead of going on; a proxy or mirror of the API that ignores the query string (page=) serves one page for every page: check that it passes the query on and does not cache the API by path alone", ErrUpstream, u, n, before)
			}
			seen[sum] = u
		}
		all = append(all, entries...)
		if len(all) >= maxReleases || page >= maxPages {
			break
		}
		if u, err = nextPage(u, h, o.api(), first, read); err != nil {
			return nil, err
		}
		if len(h.Values("Link")) == 0 && n == perPage {
			// No Link header (a mirror folder's copy of the API, a
			// server that sends none): a full page may have a next one.
			u = fmt.Sprintf("%s&page=%d", first, page+1)
		}
	}
	return all, nil
}

// nextPage is the next page of a GitHub listing, from the Link header of
// the page u read (rel="next"), as GitHub's clients page: "" when there is
// none. The next page must be on the API (the token is sent to it), not
// read already (a loop). A next page elsewhere that names its page number
// (a mirror or proxy of the API that passes GitHub's own Link headers on,
// naming api.github.com) is that page of first, the listing on the API.
func nextPage(u string, h http.Header, api, first string, read map[string]bool) (string, error) {
	next := weblink.Next(strings.Join(h.Values("Link"), ","))
	if next == "" {
		return "", nil
	}
	base, err := url.Parse(u)
	if err != nil {
		return "", err
	}
	ref, err := url.Parse(next)
	if err != nil {
		return "", fmt.Errorf("%w: %s: its Link header's next page %q is not a URL: %v", ErrUpstream, u, next, err)
	}
	au, err := url.Parse(api)
	if err != nil {
		return "", err
	}
	nu := base.ResolveReference(ref)
	if !weblink.SameOrigin(nu, au) ||
		!strings.HasPrefix(nu.EscapedPath(), strings.TrimRight(au.EscapedPath(), "/")+"/") || nu.User != nil {
		if p, err := strconv.Atoi(nu.Query().Get("page")); err == nil && p > 1 {
			nu, _ = url.Parse(fmt.Sprintf("%s&page=%d", first, p))
		} else {
			return "", fmt.Errorf("%w: %s: its Link header's next page %s is not on the GitHub API %s: refused (the token goes to the API alone)", ErrUpstream, u, nu.Redacted(), api)
		}
	}
	if read[pageKey(nu.String())] {
		return "", fmt.Errorf("%w: %s: its Link header's next page %s was read already: a loop; a proxy or mirror of the API that ignores the query string (page=) or rewrites Link headers sends it: check that it passes both on unchanged", ErrUpstream, u, nu)
	}
	return nu.String(), nil
}

// pageKey is a page's URL with its query's parameters in one order, so
// that a Link next back to a page read ("?page=1&per_page=100" for
// "?per_page=100&page=1") is known as that page.
func pageKey(u string) string {
	pu, err := url.Parse(u)
	if err != nil {
		return u
	}
	pu.RawQuery = pu.Query().Encode()
	return pu.String()
}

func githubHeader(token string) http.Header {
	h := http.Header{
		"Accept":               {"application/vnd.github+json"},
		"X-Github-Api-Version": {"2022-11-28"},
	}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	return h
}

// githubRelease is the part of GitHub's release object updeb reads.
type githubRelease struct {
	TagName     string `json:"tag_name"`
	Draft       bool   `json:"draft"`
	Prerelease  bool   `json:"prerelease"`
	PublishedAt string `json:"published_at"`
}

// ParseGitHubReleases reads one page of GitHub's "list releases" answer. It
// returns the usable releases (drafts, tags without prefix and invalid versions
// left out) and how many entries the page had (for pagination).
func ParseGitHubReleases(body []byte, prefix string) ([]Release, int, error) {
	page, err := parseGitHubPage(body)
	if err != nil {
		return nil, 0, err
	}
	out, err := fromGitHub(page, prefix)
	if err != nil {
		return nil, 0, err
	}
	return out, len(page), nil
}

// parseGitHubPage reads one page of GitHub's "list releases" answer, every
// entry of it.
func parseGitHubPage(body []byte) ([]githubRelease, error) {
	// One reading for every reader (strictjson): a tag or flag given twice,
	// keys differing only in case, a stray bracket after the list are refused.
	var page []githubRelease
	if err := strictjson.Unmarshal(body, &page); err != nil {
		return nil, fmt.Errorf("malformed JSON release list: %v", err)
	}
	return page, nil
}

// fromGitHub is the usable releases of a listing's entries: drafts, tags
// without prefix and invalid versions left out.
func fromGitHub(entries []githubRelease, prefix string) ([]Release, error) {
	var out []Release
	for _, g := range entries {
		v, ok := strings.CutPrefix(g.TagName, prefix)
		if g.Draft || !ok || debianOf(v) == "" {
			continue
		}
		r := Release{Version: v, Tag: g.TagName, Prerelease: g.Prerelease}
		if g.PublishedAt != "" {
			t, err := time.Parse(time.RFC3339, g.PublishedAt)
			if err != nil {
				return nil, fmt.Errorf("release %q: published_at %q is not an RFC 3339 time", g.TagName, g.PublishedAt)
			}
			r.Published = t.UTC()
		}
		out = append(out, r)
	}
	return out, nil
}

// ParseListing finds versions in a listing (an HTML index, a text file) with
// pattern, whose first capture group is the version; a prefix is stripped when
// present. No version at all is an error: the pattern or the page changed.
func ParseListing(body []byte, pattern, prefix string) ([]Release, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("pattern %q: %v", pattern, err)
	}
	if re.NumSubexp() < 1 {
		return nil, fmt.Errorf("pattern %q has no capture group for the version", pattern)
	}
	var out []Release
	seen := map[string]bool{}
	for _, m := range re.FindAllSubmatch(body, -1) {
		v := strings.TrimPrefix(string(m[1]), prefix)
		if seen[v] || debianOf(v) == "" {
			continue
		}
		seen[v] = true
		out = append(out, Release{Version: v, Tag: string(m[1])})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("pattern %q matched no version", pattern)
	}
	return out, nil
}

// tooLarge makes an answer over maxDocument an unusable answer from
// upstream (not an artifact over fetch: max-size, which raising would not
// help); other errors pass through.
func tooLarge(u string, err error) error {
	if se, ok := errors.AsType[*fetch.SizeError](err); ok {
		return fmt.Errorf("%w: %s: the answer is larger than %d bytes: refused", ErrUpstream, u, se.Limit)
	}
	return err
}

// apiError explains a failed GitHub API request, sent with token ("" for
// none); other errors pass through. A server that quotes the token back
// (a gateway echoing the request's headers) does not get it printed.
func apiError(u string, err error, token string) error {
	var se *fetch.StatusError
	if !errors.As(err, &se) {
		return err
	}
	e := &APIError{URL: u, Status: se.StatusCode, Message: strings.TrimSpace(se.Body), Token: token != "", Err: err}
	var msg struct {
		Message string `json:"message"`
	}
	if json.Unmarshal([]byte(se.Body), &msg) == nil && msg.Message != "" {
		e.Message = msg.Message
	}
	if len(token) >= 8 { // not a typo ("x") whose every letter would go
		e.Message = strings.ReplaceAll(e.Message, token, "xxxxx")
	}
	if len(e.Message) > 200 {
		e.Message = utf8cut.Prefix(e.Message, 200) + "..."
	}
	if se.StatusCode == http.StatusForbidden || se.StatusCode == http.StatusTooManyRequests {
		e.RateLimit = se.Header.Get("X-Ratelimit-Remaining") == "0" || strings.Contains(strings.ToLower(e.Message), "rate limit")
		if s, err := strconv.ParseInt(se.Header.Get("X-Ratelimit-Reset"), 10, 64); err == nil && s > 0 {
			e.Reset = time.Unix(s, 0)
		}
		// A secondary limit (too many requests at once: a Retry-After, or
		// GitHub's message says so) is not lifted by a token.
		e.Secondary = e.RateLimit && se.Header.Get("X-Ratelimit-Remaining") != "0" &&
			(se.RetryAfter > 0 || strings.Contains(strings.ToLower(e.Message), "secondary rate limit"))
		if e.Secondary {
			// X-RateLimit-Reset, which GitHub sends with every answer, is
			// the end of the hourly window, not of a secondary limit
			// (without Retry-After: a minute or more, GitHub says).
			e.Reset = time.Time{}
		}
		// Retry-After's wait (not the one fetch reads from a spent
		// limit's X-RateLimit-Reset, which is the time itself), from
		// the clock fetch measured it by: not the day the command plans
		// for (--now), which may be any day.
		if se.RetryAfter > 0 && se.Header.Get("Retry-After") != "" {
			e.RateLimit, e.Reset = true, time.Now().Add(se.RetryAfter)
		}
	}
	return e
}
