package track

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/updeb/updeb/internal/fetch"
	"github.com/updeb/updeb/internal/recipe"
)

// TestReleasesFollowLink: GitHub's listing pages as its Link header says
// (rel="next", to /repositories/ID/... and never computed by the client):
// a server that ignores per_page (30 a page) still gives every release; a
// next page on another host is refused before anything (the token least of
// all) is sent there; a Link loop is an error, not an endless listing; and a
// listing whose pages never end is read to GitHub's 1000 releases at most.
func TestReleasesFollowLink(t *testing.T) {
	other := atomic.Int64{}
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		other.Add(1)
		fmt.Fprint(w, `[]`)
	}))
	t.Cleanup(elsewhere.Close)
	const total = 75 // v1.0.74 down to v1.0.0
	for _, tc := range []struct {
		name  string
		next  func(base string, page int) string // "" for none
		total int                                // pages run on forever when 0
		want  string                             // error, or "" for every release
	}{
		{"per_page ignored", func(base string, page int) string {
			if page == 2 { // relative, as RFC 8288 allows
				return "/api/repositories/42/releases?page=3"
			}
			return fmt.Sprintf("%s/api/repositories/42/releases?page=%d", base, page+1)
		}, total, ""},
		// A mirror of the API that passes GitHub's Link headers on: the
		// page they name is read from the API, the token never elsewhere.
		{"next page on another host", func(_ string, page int) string {
			return fmt.Sprintf("%s/api/repositories/42/releases?page=%d", elsewhere.URL, page+1)
		}, total, ""},
		{"next page outside the API", func(base string, page int) string { return fmt.Sprintf("%s/elsewhere/releases?page=%d", base, page+1) }, total, ""},
		{"next page on another host without a page number", func(string, int) string { return elsewhere.URL + "/api/repositories/42/releases?cursor=2" }, total,
			"next page " + elsewhere.URL + "/api/repositories/42/releases?cursor=2 is not on the GitHub API"},
		{"next page outside the API, the same page", func(base string, _ int) string { return base + "/elsewhere/releases?page=1" }, total, "is not on the GitHub API"},
		{"a loop", func(base string, page int) string { return base + "/api/repos/demo/hello/releases?per_page=100&page=1" }, total, "was read already: a loop"},
		{"pages without end", func(base string, page int) string {
			return fmt.Sprintf("%s/api/repositories/42/releases?page=%d", base, page+1)
		}, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, _ := scenario(t)
			var asked atomic.Int64
			u.api = func(w http.ResponseWriter, r *http.Request) bool {
				asked.Add(1)
				page, _ := strconv.Atoi(r.URL.Query().Get("page"))
				var list []map[string]any
				for i := (page - 1) * 30; i < page*30 && (tc.total == 0 || i < tc.total); i++ {
					list = append(list, map[string]any{"tag_name": fmt.Sprintf("v1.0.%d", 100000-i)})
				}
				if tc.total == 0 || page*30 < tc.total {
					w.Header().Set("Link", fmt.Sprintf(`<%s>; rel="next", <%s/api/repositories/42/releases?page=3>; rel="last"`, tc.next(u.srv.URL, page), u.srv.URL))
				}
				b, _ := json.Marshal(list)
				w.Write(b)
				return true
			}
			o := testOptions(t, u, fetch.Options{})
			o.GitHubToken = "ghp_s3cret"
			rs, err := Releases(context.Background(), &recipe.Watch{GitHub: "demo/hello", TagPrefix: "v"}, o)
			switch {
			case tc.want != "":
				if !errors.Is(err, ErrUpstream) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err = %v, want ErrUpstream saying %q", err, tc.want)
				}
			case err != nil:
				t.Fatal(err)
			case tc.total != 0 && len(rs) != tc.total:
				t.Errorf("%d releases, want all %d", len(rs), tc.total)
			case tc.total == 0 && (len(rs) < 1000 || asked.Load() > maxPages):
				t.Errorf("%d releases in %d requests, want GitHub's 1000 in at most %d", len(rs), asked.Load(), maxPages)
			}
			if n := other.Load(); n != 0 {
				t.Errorf("%d request(s) went to another host", n)
			}
		})
	}
}

// TestOnlyPreReleases: a repository whose every tag is a date (2024-05-01:
// the hyphen starts a pre-release part, 2024~05.01 to dpkg, as semver and
// the recipe format say) has no version a watch without prereleases
// follows: an error that says so, not a recipe up to date forever; with
// prereleases: true the dates are followed, in dpkg's order.
func TestOnlyPreReleases(t *testing.T) {
	u, _ := scenario(t)
	u.api = func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Query().Get("page") == "1" {
			fmt.Fprint(w, `[{"tag_name":"2024-12-31"},{"tag_name":"2025-01-01"},{"tag_name":"2024-05-01"}]`)
		} else {
			fmt.Fprint(w, `[]`)
		}
		return true
	}
	o := testOptions(t, u, fetch.Options{})
	w := &recipe.Watch{GitHub: "demo/hello"}
	_, err := Releases(context.Background(), w, o)
	if !errors.Is(err, ErrUpstream) || !strings.Contains(err.Error(), "every version it lists is a pre-release") || !strings.Contains(err.Error(), "prereleases: true") {
		t.Errorf("err = %v, want ErrUpstream naming prereleases: true", err)
	}
	w.Prereleases = true
	rs, err := Releases(context.Background(), w, o)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rs {
		got = append(got, r.Version)
	}
	if strings.Join(got, " ") != "2025-01-01 2024-12-31 2024-05-01" {
		t.Errorf("releases %v, want the dates newest first", got)
	}
}

// TestNewestWithdrawn: the recipe's release gone from GitHub's listing
// (deleted, or made a draft again) while the listing reaches back to its
// release date is said (Candidates.Withdrawn); listed, a pre-release the
// watch does not follow, or older than the listing reaches (the newest
// 1000 only), it is not.
func TestNewestWithdrawn(t *testing.T) {
	for _, tc := range []struct {
		name    string
		edit    func(rs []map[string]any) []map[string]any
		version string
		want    string
	}{
		{"listed", func(rs []map[string]any) []map[string]any { return rs }, "1.2.0", ""},
		{"deleted", func(rs []map[string]any) []map[string]any {
			return slices.DeleteFunc(rs, func(r map[string]any) bool { return r["tag_name"] == "v1.2.0" })
		}, "1.2.0", "hello 1.2.0 (tag v1.2.0): no such release of demo/hello any more, though its listing reaches back to the release date 2026-03-14"},
		{"a draft again", func(rs []map[string]any) []map[string]any {
			for _, r := range rs {
				if r["tag_name"] == "v1.2.0" {
					r["draft"], r["published_at"] = true, nil
				}
			}
			return rs
		}, "1.2.0", "upstream deleted it or made it a draft again"},
		{"older than the listing reaches", func(rs []map[string]any) []map[string]any {
			return slices.DeleteFunc(rs, func(r map[string]any) bool { return r["tag_name"] == "v1.2.0" })
		}, "1.0.0", ""},
		{"listed, written otherwise", func(rs []map[string]any) []map[string]any { return rs }, "v1.2.0", ""},
		{"a pre-release not followed", func(rs []map[string]any) []map[string]any { return rs }, "1.4.0-rc.1", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, file := scenario(t)
			u.release("v1.1.0", false, false, "2026-01-10T00:00:00Z")
			u.releases = tc.edit(u.releases)
			r := load(t, file)
			r.Version = tc.version
			if tc.version == "1.0.0" { // released before anything listed
				r.ReleaseDate = time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
			}
			c, err := Newest(context.Background(), r, testOptions(t, u, fetch.Options{}))
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" && c.Withdrawn != "" || !strings.Contains(c.Withdrawn, tc.want) {
				t.Errorf("withdrawn %q, want %q", c.Withdrawn, tc.want)
			}
		})
	}
}

// TestNextPageOnTheAPI: a GitHub Enterprise API named with its port
// (https://ghe.example:443/api/v3) is the API its Link headers name without
// it, and the other way round; another port, scheme, host or a path outside
// the API's is not: the page it names is read from the API, and a link
// there with no page number is refused.
func TestNextPageOnTheAPI(t *testing.T) {
	for _, tc := range []struct {
		api, next string
		ok        bool
	}{
		{"https://ghe.example:443/api/v3", "https://ghe.example/api/v3/repositories/7/releases?page=2", true},
		{"https://ghe.example/api/v3", "https://GHE.example:443/api/v3/repositories/7/releases?page=2", true},
		{"https://ghe.example/api/v3", "https://ghe.example:8443/api/v3/repositories/7/releases?page=2", false},
		{"https://ghe.example/api/v3", "http://ghe.example/api/v3/repositories/7/releases?page=2", false},
		{"https://ghe.example/api/v3", "https://ghe.example/api/v4/repositories/7/releases?page=2", false},
		{"https://ghe.example/api/v3", "https://user@ghe.example/api/v3/repositories/7/releases?page=2", false},
	} {
		first := tc.api + "/repos/o/r/releases?per_page=100"
		want := first + "&page=2" // the page read from the API
		if tc.ok {
			want = tc.next
		}
		h := http.Header{"Link": {"<" + tc.next + `>; rel="next"`}}
		if got, err := nextPage(first+"&page=1", h, tc.api, first, map[string]bool{}); err != nil || got != want {
			t.Errorf("API %s, next %s: %q, %v; want %q", tc.api, tc.next, got, err, want)
		}
		h = http.Header{"Link": {"<" + strings.Replace(tc.next, "page=2", "after=x", 1) + `>; rel="next"`}}
		if got, err := nextPage(first+"&page=1", h, tc.api, first, map[string]bool{}); tc.ok && err != nil || !tc.ok && !errors.Is(err, ErrUpstream) {
			t.Errorf("API %s, next %s without a page number: %q, %v; want it followed: %v", tc.api, tc.next, got, err, tc.ok)
		}
	}
}

// TestReleasesPageRepeated: a listing that answers the same page for every
// page (a proxy or mirror of the API that ignores the query string, with
// GitHub's Link headers passed on or none at all), or whose Link next names
// the first page with its parameters the other way round, is an error that
// names the page and says what to check, at the first repeat: not a listing
// read to maxPages with its releases counted many times.
func TestReleasesPageRepeated(t *testing.T) {
	for _, tc := range []struct {
		name    string
		perPage int
		link    func(base string, page int) string // "" for none
		want    string                             // in the error, after the server's URL
		asked   int64
	}{
		{"no Link header, full pages", 100, func(string, int) string { return "" },
			"/api/repos/demo/hello/releases?per_page=100&page=2: the same 100 release(s) as ", 2},
		{"Link headers passed on", 30, func(base string, page int) string {
			return fmt.Sprintf("%s/api/repositories/42/releases?page=%d", base, page+1)
		}, "/api/repositories/42/releases?page=2: the same 30 release(s) as ", 2},
		{"Link next to the first page, written otherwise", 30, func(base string, _ int) string {
			return base + "/api/repos/demo/hello/releases?page=1&per_page=100"
		}, "/api/repos/demo/hello/releases?page=1&per_page=100 was read already: a loop", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, _ := scenario(t)
			var asked atomic.Int64
			page := 0
			u.api = func(w http.ResponseWriter, r *http.Request) bool {
				asked.Add(1)
				page++ // what the query asked for, the proxy does not know
				var list []map[string]any
				for i := range tc.perPage {
					list = append(list, map[string]any{"tag_name": fmt.Sprintf("v1.0.%d", 1000-i)})
				}
				if l := tc.link(u.srv.URL, page); l != "" {
					w.Header().Set("Link", "<"+l+`>; rel="next"`)
				}
				b, _ := json.Marshal(list)
				w.Write(b)
				return true
			}
			_, err := Releases(context.Background(), &recipe.Watch{GitHub: "demo/hello", TagPrefix: "v"}, testOptions(t, u, fetch.Options{}))
			if !errors.Is(err, ErrUpstream) || !strings.Contains(err.Error(), u.srv.URL+tc.want) || !strings.Contains(err.Error(), "ignores the query string") {
				t.Fatalf("err = %v, want ErrUpstream saying %q and what to check", err, tc.want)
			}
			if n := asked.Load(); n != tc.asked {
				t.Errorf("%d pages read, want %d: up to the one that repeats the first", n, tc.asked)
			}
		})
	}
}
