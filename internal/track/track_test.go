package track

import (
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/updeb/updeb/internal/fetch"
	"github.com/updeb/updeb/internal/pipeline"
	"github.com/updeb/updeb/internal/source"
	"github.com/updeb/updeb/internal/supportdata"
	"github.com/updeb/updeb/internal/trust"
	"github.com/updeb/updeb/internal/yamlfile"
	"github.com/updeb/updeb/pkg/verify/openpgp"
)

// scenario: 1.2.0 current; 1.3.0 complete; 1.3.1 released but arm64 not
// uploaded; 1.4.0-rc.1 a pre-release; 1.5.0 a draft; 2.0.0 complete but out of
// the 1.x track; kyaml/v9.0.0 another component's tag.
func scenario(t *testing.T) (*upstream, string) {
	u := newUpstream(t)
	pins := u.publish("1.2.0")
	u.release("v1.2.0", false, false, "2026-03-14T10:00:00Z")
	u.publish("1.3.0")
	u.release("v1.3.0", false, false, "2026-05-02T23:30:00Z")
	u.publish("1.3.1")
	u.set(artifactPath("1.3.1", "arm64"), nil)
	u.release("v1.3.1", false, false, "2026-06-01T00:00:00Z")
	u.publish("1.4.0-rc.1")
	u.release("v1.4.0-rc.1", true, false, "2026-06-10T00:00:00Z")
	u.publish("1.5.0")
	u.release("v1.5.0", false, true, "")
	u.publish("2.0.0")
	u.release("v2.0.0", false, false, "2026-07-01T00:00:00Z")
	u.release("kyaml/v9.0.0", false, false, "2026-07-02T00:00:00Z")
	return u, project(t, u, pins)
}

func TestNewest(t *testing.T) {
	u, file := scenario(t)
	r := load(t, file)
	o := testOptions(t, u, fetch.Options{})
	for _, tc := range []struct {
		track       string
		prereleases bool
		inTrack     string
		latest      string
		incomplete  string
		inMajor     string // the newest of 1.x, where plan moves a recipe tracking 1.2.x
	}{
		{"1.x", false, "1.3.0", "2.0.0", "1.3.1", "1.3.0"},
		{"1.2.x", false, "1.2.0", "2.0.0", "1.3.1", "1.3.0"},
		{"", false, "2.0.0", "2.0.0", "1.3.1", "1.3.0"},
		{"1.x", true, "1.4.0-rc.1", "2.0.0", "", "1.4.0-rc.1"},
	} {
		t.Run(fmt.Sprintf("%s/%v", tc.track, tc.prereleases), func(t *testing.T) {
			w := *r.Watch
			w.Track, w.Prereleases = tc.track, tc.prereleases
			rr := *r
			rr.Watch = &w
			c, err := Newest(context.Background(), &rr, o)
			if err != nil {
				t.Fatal(err)
			}
			var inc []string
			for _, i := range c.Incomplete {
				inc = append(inc, i.Version)
			}
			if c.InTrack.Version != tc.inTrack || c.Latest.Version != tc.latest || strings.Join(inc, ",") != tc.incomplete || c.InMajor.Version != tc.inMajor {
				t.Errorf("got in track %s, latest %s, incomplete %v, in major %s; want %s, %s, %s, %s", c.InTrack.Version, c.Latest.Version, inc, c.InMajor.Version, tc.inTrack, tc.latest, tc.incomplete, tc.inMajor)
			}
		})
	}
	c, err := Newest(context.Background(), r, o)
	if err != nil {
		t.Fatal(err)
	}
	want := u.srv.URL + artifactPath("1.3.1", "arm64")
	if len(c.Incomplete) != 1 || len(c.Incomplete[0].Missing) != 1 || c.Incomplete[0].Missing[0] != want {
		t.Errorf("incomplete = %+v, want 1.3.1 missing only %s", c.Incomplete, want)
	}
	if !c.InTrack.Published.Equal(time.Date(2026, 5, 2, 23, 30, 0, 0, time.UTC)) {
		t.Errorf("published = %v", c.InTrack.Published)
	}
}

// TestReleaseDay: the day of a named version comes from its release, a
// pre-release's too (bump --to 1.4.0-rc.1 where the watch does not follow
// pre-releases); a draft has none.
func TestReleaseDay(t *testing.T) {
	u, file := scenario(t)
	r := load(t, file)
	o := testOptions(t, u, fetch.Options{})
	for v, want := range map[string]string{"1.3.0": "2026-05-02", "1.4.0-rc.1": "2026-06-10", "1.5.0": "", "1.9.9": ""} {
		day, err := ReleaseDay(context.Background(), r, v, o)
		if want == "" {
			// Not "gives none": it lists no such release.
			if !errors.Is(err, ErrNoDate) || !strings.Contains(err.Error(), "GitHub's release list (demo/hello) has no release v"+v+": a typo, a draft") {
				t.Errorf("%s: day %v, err %v; want ErrNoDate", v, day, err)
			}
			continue
		}
		if err != nil || day.Format(time.DateOnly) != want {
			t.Errorf("%s: day %v, err %v; want %s", v, day, err, want)
		}
	}
}

func TestCheckSupport(t *testing.T) {
	u, file := scenario(t)
	o := testOptions(t, u, fetch.Options{})
	data, err := supportdata.Bundled()
	if err != nil {
		t.Fatal(err)
	}
	s, err := Outdated(context.Background(), load(t, file), data, o)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Outdated || s.OutOfSupport || s.Support.State != "unknown" || s.Support.Product != "hello" {
		t.Errorf("status = %+v", s)
	}
	// A product in the data: kubernetes-1.35 is component kubernetes.
	r := load(t, file)
	r.Name, r.Version = "kubernetes-1.31", "1.31.4"
	sup := SupportOf(r, data, o.now())
	if sup.Product != "kubernetes" || sup.State != "eol" || sup.Cycle != "1.31" || !strings.HasPrefix(sup.Text, "eol since ") {
		t.Errorf("support = %+v", sup)
	}
	// A mark the data contradicts (its cycle supported on the day) says so.
	r.Name, r.Version, r.EndOfLife = "kubernetes-1.34", "1.34.2", time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	sup = SupportOf(r, data, time.Date(2026, 8, 22, 0, 0, 0, 0, time.UTC))
	if want := "eol since 2026-08-01 (marked in the recipe, but the support data says supported until 2026-08-27: remove the mark to track it again)"; sup.State != "eol" || sup.Text != want {
		t.Errorf("a contradicted mark: support = %+v, want %q", sup, want)
	}
}

// forbidden answers 403 with body and the headers (name, value, ...).
func forbidden(body string, header ...string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, body)
	}
}

func TestAPIErrors(t *testing.T) {
	u, file := scenario(t)
	r := load(t, file)
	start := time.Now()
	resetAt := start.Add(time.Hour).Unix() // a spent limit's reset, by the clock
	for _, tc := range []struct {
		name   string
		answer func(w http.ResponseWriter)
		want   string
		check  func(error) bool
	}{
		{"rate limit", forbidden(`{"message":"API rate limit exceeded for 127.0.0.1."}`, "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "1787400000"),
			"GitHub API rate limit exceeded at " + u.srv.URL + "/api/repos/demo/hello/releases?per_page=100&page=1 (resets 2026-08-22T12:00:00Z): API rate limit exceeded for 127.0.0.1.",
			func(err error) bool {
				var a *APIError
				return errors.As(err, &a) && a.RateLimit && !a.Secondary && a.Token
			}},
		// 429 (retried by fetch): its reset is X-RateLimit-Reset, not a
		// wait added to the day the command plans for (--now).
		{"rate limit at 429", func(w http.ResponseWriter) {
			w.Header().Set("X-RateLimit-Remaining", "0")
			w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(resetAt, 10))
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"message":"API rate limit exceeded for 127.0.0.1."}`)
		}, "(resets " + time.Unix(resetAt, 0).UTC().Format(time.RFC3339) + ")",
			func(err error) bool { var a *APIError; return errors.As(err, &a) && a.RateLimit && !a.Secondary }},
		{"secondary rate limit", forbidden(`{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again."}`, "X-RateLimit-Remaining", "4990", "Retry-After", "60"),
			"GitHub API secondary rate limit exceeded at " + u.srv.URL + "/api/repos/demo/hello/releases?per_page=100&page=1 (retry after ",
			// a minute from now by the clock, not from the day o.Now
			// gives (--now): the wait is real time
			func(err error) bool {
				var a *APIError
				return errors.As(err, &a) && a.RateLimit && a.Secondary &&
					!a.Reset.Before(start.Add(time.Minute).Truncate(time.Second)) && !a.Reset.After(time.Now().Add(time.Minute)) &&
					strings.Contains(err.Error(), "(retry after "+a.Reset.UTC().Format(time.RFC3339)+"): You have exceeded")
			}},
		// Without Retry-After, X-RateLimit-Reset (the hourly window's end,
		// sent with every answer) is not when a secondary limit lifts.
		{"secondary rate limit without Retry-After", forbidden(`{"message":"You have exceeded a secondary rate limit."}`, "X-RateLimit-Remaining", "4990", "X-RateLimit-Reset", "1787403000"),
			"GitHub API secondary rate limit exceeded at " + u.srv.URL + "/api/repos/demo/hello/releases?per_page=100&page=1: You have exceeded",
			func(err error) bool { var a *APIError; return errors.As(err, &a) && a.Secondary && a.Reset.IsZero() }},
		{"not found", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"message":"Not Found"}`)
		}, "(no such repository, or it is private): Not Found",
			func(err error) bool { var a *APIError; return errors.As(err, &a) && a.Status == 404 }},
		{"a token refused", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"message":"Bad credentials","documentation_url":"https://docs.github.com/rest"}`)
		}, "GitHub API " + u.srv.URL + "/api/repos/demo/hello/releases?per_page=100&page=1: 401 Unauthorized (the token was refused): Bad credentials",
			func(err error) bool { var a *APIError; return errors.As(err, &a) && a.Status == 401 && !a.RateLimit }},
		{"a token without access", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"message":"Resource protected by organization SAML enforcement. You must grant your Personal Access token access to this organization."}`)
		}, "GitHub API " + u.srv.URL + "/api/repos/demo/hello/releases?per_page=100&page=1: 403 Forbidden (the token was sent, and may not read this repository): Resource protected by organization SAML enforcement.",
			func(err error) bool { var a *APIError; return errors.As(err, &a) && a.Status == 403 && !a.RateLimit }},
		// A gateway that quotes the request's headers back: the token the
		// loop below sends is not printed (the loop checks).
		{"the token quoted back", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"message":"bad request; Authorization: Bearer ghp_s3cret"}`)
		}, "HTTP 400: bad request; Authorization: Bearer xxxxx",
			func(err error) bool { var a *APIError; return errors.As(err, &a) && a.Status == 400 }},
		{"a long message cut at a character", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"message":"`+strings.Repeat("x", 199)+strings.Repeat("é", 50)+`"}`)
		}, ": " + strings.Repeat("x", 199) + "...",
			func(err error) bool { return utf8.ValidString(err.Error()) }},
		{"malformed", func(w http.ResponseWriter) { fmt.Fprint(w, `[{"tag_name": "v1.3.0"`) },
			"track: unusable answer from upstream: " + u.srv.URL + "/api/repos/demo/hello/releases?per_page=100&page=1: malformed JSON release list: strictjson: invalid JSON: cut short (unexpected end of data)",
			func(err error) bool { return errors.Is(err, ErrUpstream) }},
		{"a tag twice", func(w http.ResponseWriter) {
			fmt.Fprint(w, `[{"tag_name": "v9.9.9", "tag_name": "v1.3.0", "published_at": "2026-05-02T23:30:00Z"}]`)
		}, `malformed JSON release list: strictjson: invalid JSON: key "tag_name" given twice in the object at /0`,
			func(err error) bool { return errors.Is(err, ErrUpstream) }},
		{"a stray bracket", func(w http.ResponseWriter) { fmt.Fprint(w, `[]]`) },
			"malformed JSON release list: strictjson: invalid JSON: data after the JSON value",
			func(err error) bool { return errors.Is(err, ErrUpstream) }},
		{"a page over 16 MiB", func(w http.ResponseWriter) { fmt.Fprint(w, "["+strings.Repeat(" ", maxDocument)+"]") },
			"track: unusable answer from upstream: " + u.srv.URL + "/api/repos/demo/hello/releases?per_page=100&page=1: the answer is larger than 16777216 bytes: refused",
			func(err error) bool { return errors.Is(err, ErrUpstream) && !errors.As(err, new(*fetch.SizeError)) }},
		// Not "up to date" forever: the recipe's tag prefix is not upstream's.
		{"no tag with the prefix", func(w http.ResponseWriter) {
			fmt.Fprint(w, `[{"tag_name": "release-1.3.0"}, {"tag_name": "v-next"}, {"tag_name": "v1.4.0", "draft": true}]`)
		}, "track: unusable answer from upstream: " + u.srv.URL + `/api/repos/demo/hello/releases: none of its 3 release(s) has a tag of the form "vVERSION" (drafts left out): check watch: tag-prefix: and github: in the recipe`,
			func(err error) bool { return errors.Is(err, ErrUpstream) }},
		// GitHub sends at most per_page entries: a page of more (a broken
		// mirror of the API) is refused at once, not asked for ten times.
		{"more than per_page", func(w http.ResponseWriter) { fmt.Fprint(w, "["+strings.Repeat(`{},`, 100)+"{}]") },
			"track: unusable answer from upstream: " + u.srv.URL + "/api/repos/demo/hello/releases?per_page=100&page=1: 101 releases in one page, more than the 100 asked for (per_page)",
			func(err error) bool { return errors.Is(err, ErrUpstream) }},
		// No version found is an error, as for a url: listing: the recipe
		// would otherwise be up to date forever.
		{"no release", func(w http.ResponseWriter) { fmt.Fprint(w, `[]`) },
			"track: unusable answer from upstream: " + u.srv.URL + "/api/repos/demo/hello/releases: the repository has no release (tags alone are not GitHub releases)",
			func(err error) bool { return errors.Is(err, ErrUpstream) }},
		{"no tag with the prefix", func(w http.ResponseWriter) {
			fmt.Fprint(w, `[{"tag_name":"release-1.3.0"},{"tag_name":"v1.4.0","draft":true},{"tag_name":"vnext"}]`)
		}, `none of its 3 release(s) has a tag of the form "vVERSION" (drafts left out): check watch: tag-prefix: and github: in the recipe`,
			func(err error) bool { return errors.Is(err, ErrUpstream) }},
		{"not a list", func(w http.ResponseWriter) { fmt.Fprint(w, `{"message":"hi"}`) },
			"malformed JSON release list: strictjson: invalid JSON: cannot read JSON object into Go []track.githubRelease at the top",
			func(err error) bool { return errors.Is(err, ErrUpstream) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u.mu.Lock()
			u.api = func(w http.ResponseWriter, _ *http.Request) bool { tc.answer(w); return true }
			u.mu.Unlock()
			o := testOptions(t, u, fetch.Options{})
			o.GitHubToken = "ghp_s3cret"
			o.Now = func() time.Time { return time.Unix(1787400000, 0) } // 2026-08-22T12:00:00Z
			_, err := Newest(context.Background(), r, o)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !tc.check(err) {
				t.Errorf("err = %v\nwant %q", err, tc.want)
			}
			if strings.Contains(fmt.Sprint(err), "ghp_s3cret") {
				t.Errorf("the token leaked into the error: %v", err)
			}
		})
	}
	if last := u.auth[len(u.auth)-1]; last != "Bearer ghp_s3cret" {
		t.Errorf("Authorization = %q, want the token as Bearer", last)
	}
}

// TestAPIErrorNoToken: a 401 to a request without a token (a GitHub
// Enterprise server that wants one) does not say a token was refused.
func TestAPIErrorNoToken(t *testing.T) {
	se := &fetch.StatusError{StatusCode: http.StatusUnauthorized, Status: "401 Unauthorized", Body: `{"message":"Requires authentication"}`}
	err := apiError("https://ghe.example.org/api/v3/repos/o/r/releases", se, "")
	if want := "401 Unauthorized (no token was sent, and the API wants one): Requires authentication"; !strings.HasSuffix(err.Error(), want) {
		t.Errorf("err = %v\nwant %q", err, want)
	}
}

// TestAPIErrorShortToken: a GITHUB_TOKEN mistyped as one letter is no
// secret to hide, and hiding it would garble GitHub's message ("API rate
// limit exxxxxceeded").
func TestAPIErrorShortToken(t *testing.T) {
	se := &fetch.StatusError{StatusCode: http.StatusForbidden, Status: "403 Forbidden", Body: `{"message":"API rate limit exceeded"}`,
		Header: http.Header{"X-Ratelimit-Remaining": {"0"}}}
	err := apiError("https://api.github.com/repos/o/r/releases", se, "x")
	if !strings.HasSuffix(err.Error(), ": API rate limit exceeded") {
		t.Errorf("err = %v", err)
	}
}

// TestBumpFutureDate: a release day after today (--date mistyped, or the
// release source's) is refused, before the sources are fetched: every
// build would refuse the recipe.
func TestBumpFutureDate(t *testing.T) {
	u, file := scenario(t)
	before, _ := os.ReadFile(file)
	o := testOptions(t, u, fetch.Options{})
	o.Now = func() time.Time { return time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC) }
	// 1.3.0 was published on 2026-05-02, the day after o.Now.
	for _, bo := range []BumpOptions{{Options: o, To: "1.3.0"}, {Options: o, To: "1.3.0", Date: time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)}} {
		_, err := Bump(context.Background(), load(t, file), bo)
		if !errors.Is(err, ErrNoDate) || !strings.Contains(err.Error(), "is after today (2026-05-01): a build refuses a release-date in the future") {
			t.Errorf("--date %v: err = %v", bo.Date, err)
		}
	}
	if after, _ := os.ReadFile(file); string(after) != string(before) {
		t.Error("the recipe was rewritten")
	}
}

func TestBump(t *testing.T) {
	u, file := scenario(t)
	before, _ := os.ReadFile(file)
	o := testOptions(t, u, fetch.Options{})
	res, err := Bump(context.Background(), load(t, file), BumpOptions{Options: o})
	if err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(file)
	if res.To != "1.3.0" || res.ReleaseDate != "2026-05-02" || !res.Changed || len(res.VerifiedBy) != 4 {
		t.Errorf("result = %+v", res)
	}
	// Exactly the intended lines changed, comments and layout kept.
	bl, al := strings.Split(string(before), "\n"), strings.Split(string(after), "\n")
	if len(bl) != len(al) {
		t.Fatalf("line count changed: %d -> %d", len(bl), len(al))
	}
	var changed []string
	for i := range bl {
		if bl[i] != al[i] {
			changed = append(changed, al[i])
		}
	}
	r := load(t, file)
	for _, arch := range arches {
		sum := sha256.Sum256(u.get(artifactPath("1.3.0", arch)))
		if got := r.Sources[0].Digests[arch]["sha256"]; got != hex.EncodeToString(sum[:]) {
			t.Errorf("%s pinned %s, upstream has %x", arch, got, sum)
		}
	}
	want := []string{
		"version: 1.3.0   # the version in use",
		`revision: "1"`,
		"release-date: 2026-05-02",
		"      amd64: " + r.Sources[0].Digests["amd64"]["sha256"] + "  # pinned at the last bump",
		"      arm64: " + r.Sources[0].Digests["arm64"]["sha256"],
	}
	if strings.Join(changed, "\n") != strings.Join(want, "\n") {
		t.Errorf("changed lines:\n%s\nwant:\n%s", strings.Join(changed, "\n"), strings.Join(want, "\n"))
	}
	// The bumped recipe builds: fetch with the new pins, verify, package.
	out := t.TempDir()
	results, err := pipeline.Run(context.Background(), []pipeline.Job{{Recipe: r, Arch: "amd64"}, {Recipe: r, Arch: "arm64"}},
		pipeline.Options{Source: source.Options{Fetcher: o.Client.(*fetch.Fetcher), Now: o.Now}, OutDir: out, ResolveOptions: urlPlan})
	if err != nil {
		t.Fatal(err)
	}
	for _, br := range results {
		if br.Version != "1.3.0-1" || len(br.Outputs) != 1 {
			t.Errorf("build result %+v", br)
		}
	}
	// Again: already at the newest; the pins match upstream.
	res, err = Bump(context.Background(), r, BumpOptions{Options: o})
	if err != nil || res.Changed {
		t.Errorf("second bump: %+v, %v", res, err)
	}
}

func TestBumpRefuses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		to     string
		breakf func(u *upstream)
		is     error
		want   string
	}{
		{"re-upload of the pinned version", "1.2.0", func(u *upstream) {
			u.upload("1.2.0", "arm64", "re-uploaded, validly signed")
		}, ErrReupload, "hello 1.2.0 was already pinned and its bytes changed upstream"},
		{"missing architecture", "1.3.1", nil, ErrIncomplete, "version 1.3.1 is not complete upstream: 1 artifact(s) missing"},
		{"bad signature", "1.3.0", func(u *upstream) {
			u.set(artifactPath("1.3.0", "arm64")+".asc", sign(t, []byte("other bytes")))
		}, openpgp.ErrSignature, "signature " + "BASE" + artifactPath("1.3.0", "arm64") + ".asc"},
		{"checksum file mismatch", "1.3.0", func(u *upstream) {
			p := artifactPath("1.3.0", "amd64")
			u.set(p+".sha256sum", []byte(strings.Repeat("ab", 32)+"  "+filepath.Base(p)+"\n"))
		}, trust.ErrCrossCheck, "lists sha256 " + strings.Repeat("ab", 32) + " for hello-v1.3.0-linux-amd64.tar.gz, the file downloaded has "},
		{"older version", "1.1.0", nil, ErrDowngrade, "hello is at 1.2.0, asked for 1.1.0"},
		{"one version tagged twice", "", func(u *upstream) {
			// Complete and newer in the listing: the API's order must
			// not pick between two tags dpkg cannot tell apart.
			u.publish("1.03.0")
			u.release("v1.03.0", false, false, "2026-05-03T00:00:00Z")
		}, ErrAmbiguous, "v1.03.0 and v1.3.0 (1.03.0 = 1.3.0 to dpkg)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, file := scenario(t)
			if tc.breakf != nil {
				tc.breakf(u)
			}
			before, _ := os.ReadFile(file)
			o := testOptions(t, u, fetch.Options{})
			_, err := Bump(context.Background(), load(t, file), BumpOptions{Options: o, To: tc.to})
			want := strings.ReplaceAll(tc.want, "BASE", u.srv.URL)
			if !errors.Is(err, tc.is) || !strings.Contains(fmt.Sprint(err), want) {
				t.Errorf("err = %v\nwant %v containing %q", err, tc.is, want)
			}
			if after, _ := os.ReadFile(file); string(after) != string(before) {
				t.Errorf("the recipe changed:\n%s", after)
			}
			if left, _ := filepath.Glob(filepath.Join(filepath.Dir(file), ".*")); len(left) != 0 {
				t.Errorf("files left behind: %v", left)
			}
		})
	}
}

// TestBumpRechecksWithFixedDay: bump --to the version in use downloads
// upstream's bytes anew on every run, also with --now (a fixed day, Now):
// a second run the same day whose cache still held the first run's copy
// missed a re-upload in between.
func TestBumpRechecksWithFixedDay(t *testing.T) {
	u, file := scenario(t)
	o := testOptions(t, u, fetch.Options{})
	day := time.Now().UTC().Truncate(24 * time.Hour).Add(24 * time.Hour) // --now tomorrow: after the test keys' creation
	o.Now = func() time.Time { return day }
	if res, err := Bump(context.Background(), load(t, file), BumpOptions{Options: o, To: "1.2.0"}); err != nil || res.Changed {
		t.Fatalf("first re-check: %+v, %v", res, err)
	}
	u.upload("1.2.0", "arm64", "re-uploaded, validly signed")
	if _, err := Bump(context.Background(), load(t, file), BumpOptions{Options: o, To: "1.2.0"}); !errors.Is(err, ErrReupload) {
		t.Errorf("second re-check the same --now day after a re-upload: %v; want %v", err, ErrReupload)
	}
}

// TestBumpCacheBounded: each bump downloads upstream's files anew, and a
// daily bump leaves no more in the cache than the first did: no index entry
// or lock file per run for every URL it fetched.
func TestBumpCacheBounded(t *testing.T) {
	u, file := scenario(t)
	dir := t.TempDir()
	o := testOptionsIn(t, dir, u, fetch.Options{})
	count := func() (n int) {
		for _, sub := range []string{"index", "locks", "sha256"} {
			filepath.WalkDir(filepath.Join(dir, sub), func(_ string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					n++
				}
				return nil
			})
		}
		return n
	}
	var after []int
	for range 3 {
		if res, err := Bump(context.Background(), load(t, file), BumpOptions{Options: o, To: "1.2.0"}); err != nil || res.Changed {
			t.Fatalf("re-check: %+v, %v", res, err)
		}
		after = append(after, count())
	}
	if after[0] == 0 || after[1] != after[0] || after[2] != after[0] {
		t.Errorf("files in the cache after each bump: %v; want as many after every run", after)
	}
	u.upload("1.2.0", "arm64", "re-uploaded, validly signed")
	if _, err := Bump(context.Background(), load(t, file), BumpOptions{Options: o, To: "1.2.0"}); !errors.Is(err, ErrReupload) {
		t.Errorf("a re-check after a re-upload: %v; want %v", err, ErrReupload)
	}
}

// TestBumpTo: bump --to takes exactly the version named. Upstream tagged
// 1.3.0 twice (v1.3.0, v1.03.0): the operator names the one meant. A
// pre-release the watch leaves out (prereleases unset) takes its day from
// the GitHub release like any other, not "the release source gives none".
func TestBumpTo(t *testing.T) {
	for _, tc := range []struct{ name, to, day string }{
		{"twin tags", "1.3.0", "2026-05-02"},
		{"pre-release", "1.4.0-rc.1", "2026-06-10"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, file := scenario(t)
			u.publish("1.03.0")
			u.release("v1.03.0", false, false, "2026-05-03T00:00:00Z")
			o := testOptions(t, u, fetch.Options{})
			res, err := Bump(context.Background(), load(t, file), BumpOptions{Options: o, To: tc.to})
			if err != nil {
				t.Fatal(err)
			}
			if r := load(t, file); res.To != tc.to || r.Version != tc.to || res.ReleaseDate != tc.day {
				t.Errorf("bumped to %s (%s), recipe at %s; want %s of %s", res.To, res.ReleaseDate, r.Version, tc.to, tc.day)
			}
		})
	}
}

// TestBumpSHA512 pins sha512 only (as Kubernetes recipes do): the fetcher
// computes sha512 for bump because the recipe pins it, and the new pins are
// upstream's sha512, cross-checked against a .sha512sum file and built.
func TestBumpSHA512(t *testing.T) {
	u, file := scenario(t)
	sha512sum := func(version, arch string) string {
		sum := sha512.Sum512(u.get(artifactPath(version, arch)))
		return hex.EncodeToString(sum[:])
	}
	text, _ := os.ReadFile(file)
	rep := []string{"sha256:", "sha512:", ".sha256sum", ".sha512sum"}
	for _, v := range []string{"1.2.0", "1.3.0"} {
		for _, arch := range arches {
			p := artifactPath(v, arch)
			u.set(p+".sha512sum", []byte(sha512sum(v, arch)+"  "+filepath.Base(p)+"\n"))
			if v == "1.2.0" {
				sum := sha256.Sum256(u.get(p))
				rep = append(rep, hex.EncodeToString(sum[:]), sha512sum(v, arch))
			}
		}
	}
	if err := os.WriteFile(file, []byte(strings.NewReplacer(rep...).Replace(string(text))), 0o644); err != nil {
		t.Fatal(err)
	}
	o := testOptions(t, u, fetch.Options{})
	if _, err := Bump(context.Background(), load(t, file), BumpOptions{Options: o}); err != nil {
		t.Fatal(err)
	}
	r := load(t, file)
	for _, arch := range arches {
		if got, want := r.Sources[0].Digests[arch]["sha512"], sha512sum("1.3.0", arch); got != want {
			t.Errorf("%s pinned sha512 %q, upstream has %s", arch, got, want)
		}
		if _, ok := r.Sources[0].Digests[arch]["sha256"]; ok {
			t.Errorf("%s: bump added a sha256 pin the recipe did not have", arch)
		}
	}
	if _, err := pipeline.Run(context.Background(), []pipeline.Job{{Recipe: r, Arch: "amd64"}},
		pipeline.Options{Source: source.Options{Fetcher: o.Client.(*fetch.Fetcher), Now: o.Now}, OutDir: t.TempDir(), ResolveOptions: urlPlan}); err != nil {
		t.Fatal(err)
	}
}

// TestBumpYAMLLineBreaks: a recipe with line breaks YAML counts and a
// "\n" splice does not (LS, PS, NEL, a lone CR) is bumped with the values
// where YAML reads them: the new version, date, revision and pins are what
// the recipe now loads, and every other byte is as it was.
func TestBumpYAMLLineBreaks(t *testing.T) {
	for name, lb := range map[string]string{"LS": "\u2028", "PS": "\u2029", "NEL": "\u0085", "CR": "\r"} {
		t.Run(name, func(t *testing.T) {
			u, file := scenario(t)
			before, _ := os.ReadFile(file)
			// the two comment lines, and the line before revision, end in lb
			text := strings.Replace(string(before), "bump.\n", "bump."+lb, 1)
			text = strings.Replace(text, "Test recipe, like the demo's hello: a tarball with a detached signature.\n", "Test recipe."+lb, 1)
			text = strings.Replace(text, "# the version in use\n", "# the version in use"+lb, 1)
			os.WriteFile(file, []byte(text), 0o644)
			old := load(t, file)
			o := testOptions(t, u, fetch.Options{})
			res, err := Bump(context.Background(), old, BumpOptions{Options: o})
			if err != nil {
				t.Fatal(err)
			}
			r := load(t, file)
			if !res.Changed || r.Version != "1.3.0" || r.Revision != "1" || r.ReleaseDate.Format(time.DateOnly) != "2026-05-02" {
				t.Fatalf("loads as %s-%s of %s", r.Version, r.Revision, r.ReleaseDate)
			}
			after, _ := os.ReadFile(file)
			want := strings.NewReplacer("version: 1.2.0", "version: 1.3.0", `revision: "3"`, `revision: "1"`, "release-date: 2026-03-14", "release-date: 2026-05-02",
				old.Sources[0].Digests["amd64"]["sha256"], r.Sources[0].Digests["amd64"]["sha256"],
				old.Sources[0].Digests["arm64"]["sha256"], r.Sources[0].Digests["arm64"]["sha256"]).Replace(text)
			if string(after) != want {
				t.Errorf("bytes other than the values changed:\n%q\nwant\n%q", after, want)
			}
			for _, arch := range arches {
				sum := sha256.Sum256(u.get(artifactPath("1.3.0", arch)))
				if got := r.Sources[0].Digests[arch]["sha256"]; got != hex.EncodeToString(sum[:]) {
					t.Errorf("%s pinned %s, upstream has %x", arch, got, sum)
				}
			}
		})
	}
}

// TestBumpSymlinkedRecipe: a recipe that is a symlink is not rewritten
// (the rename would replace the link by a file and leave the recipe it
// points to at the old version, reported as bumped): refused, both left
// as they were, and before what follows the recipe is written
// (BeforeWrite: the release set file), which running the command again
// could not complete.
func TestBumpSymlinkedRecipe(t *testing.T) {
	u, file := scenario(t)
	real := filepath.Join(filepath.Dir(file), "hello-real.yml")
	if err := os.Rename(file, real); err != nil {
		t.Fatal(err)
	}
	os.Symlink("hello-real.yml", file)
	before, _ := os.ReadFile(real)
	followed := false
	res, err := Bump(context.Background(), load(t, file), BumpOptions{Options: testOptions(t, u, fetch.Options{}),
		BeforeWrite: func(*BumpResult) error { followed = true; return nil }})
	if !errors.Is(err, yamlfile.ErrNotRewritten) || !strings.Contains(err.Error(), "is a symlink") {
		t.Fatalf("bump through a symlink: %+v, %v", res, err)
	}
	if followed {
		t.Error("the release set file followed a bump refused")
	}
	if fi, _ := os.Lstat(file); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the link was replaced by a file")
	}
	if after, _ := os.ReadFile(real); string(after) != string(before) {
		t.Error("the recipe changed")
	}
}

// countingClient counts the existence probes that reach upstream.
type countingClient struct {
	Client
	exists atomic.Int64
}

func (c *countingClient) Exists(ctx context.Context, url string) (bool, error) {
	c.exists.Add(1)
	return c.Client.Exists(ctx, url)
}

// TestNewestStopsAfterIncomplete: a URL listing that names a thousand newer
// versions none of which has its files (a hostile or broken listing) costs
// MaxIncomplete releases' probes, not a thousand's, and the candidates say
// that the search stopped and why; bump then refuses rather than saying the
// recipe is up to date.
func TestNewestStopsAfterIncomplete(t *testing.T) {
	u, file := scenario(t)
	var listing strings.Builder
	for i := 1000; i >= 1; i-- {
		fmt.Fprintf(&listing, "<a href=\"v1.2.%d/\">v1.2.%d/</a>\n", i, i)
	}
	u.set("/hello/", []byte(listing.String()))
	r := load(t, file)
	r.Watch.GitHub, r.Watch.URL, r.Watch.Pattern = "", u.srv.URL+"/hello/", `href="(v[0-9.]+)/"`
	o := testOptions(t, u, fetch.Options{})
	cc := &countingClient{Client: o.Client}
	o.Client = cc
	c, err := Newest(context.Background(), r, o)
	if err != nil {
		t.Fatal(err)
	}
	artifacts, err := Artifacts(r, "1.2.1000")
	if err != nil {
		t.Fatal(err)
	}
	if n, most := cc.exists.Load(), int64(MaxIncomplete*len(artifacts)); n > most {
		t.Errorf("%d existence probes, want at most %d (%d releases of %d artifacts)", n, most, MaxIncomplete, len(artifacts))
	}
	if len(c.Incomplete) != MaxIncomplete || c.InTrack.Version != "1.2.0" || c.Latest.Version != "1.2.0" {
		t.Errorf("in track %s, latest %s, %d incomplete; want 1.2.0, 1.2.0, %d", c.InTrack.Version, c.Latest.Version, len(c.Incomplete), MaxIncomplete)
	}
	if want := fmt.Sprintf("stopped after %d newer releases found incomplete (1.2.1000 down to 1.2.%d)", MaxIncomplete, 1001-MaxIncomplete); !strings.Contains(c.Stopped, want) {
		t.Errorf("stopped %q, want it to say %q", c.Stopped, want)
	}
	_, err = Bump(context.Background(), r, BumpOptions{Options: o})
	if !errors.Is(err, ErrIncomplete) || !strings.Contains(fmt.Sprint(err), "stopped after") {
		t.Errorf("bump: %v, want ErrIncomplete saying the search stopped", err)
	}
}

// TestNewestGluedPreRelease: a URL listing (no GitHub pre-release flag) that
// names a pre-release glued to its version (v1.3.0rc1, PEP 440's spelling)
// beside the release: the pre-release is left out without prereleases, and
// with them it sorts before 1.3.0, so 1.3.0 is the newest either way, not the
// release candidate (which dpkg would rank above 1.3.0 left as 1.3.0rc1).
func TestNewestGluedPreRelease(t *testing.T) {
	u, file := scenario(t)
	u.publish("1.3.0rc1")
	u.publish("1.4.0rc1")
	u.set("/hello/", []byte(`<a href="v1.3.0rc1/">`+"\n"+`<a href="v1.3.0/">`+"\n"+`<a href="v1.4.0rc1/">`+"\n"))
	r := load(t, file)
	r.Watch.GitHub, r.Watch.URL, r.Watch.Pattern = "", u.srv.URL+"/hello/", `href="(v[0-9.]+(?:rc[0-9]+)?)/"`
	o := testOptions(t, u, fetch.Options{})
	for _, tc := range []struct {
		prereleases bool
		want        string
	}{{false, "1.3.0"}, {true, "1.4.0rc1"}} {
		r.Watch.Prereleases = tc.prereleases
		c, err := Newest(context.Background(), r, o)
		if err != nil {
			t.Fatal(err)
		}
		if c.Latest.Version != tc.want || c.Latest.Prerelease != tc.prereleases {
			t.Errorf("prereleases %v: newest %s (prerelease %v), want %s (prerelease %v)", tc.prereleases, c.Latest.Version, c.Latest.Prerelease, tc.want, tc.prereleases)
		}
	}
}
