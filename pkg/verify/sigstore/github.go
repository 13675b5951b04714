package sigstore

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/klauspost/compress/snappy"

	"github.com/updeb/updeb/pkg/digest"

	"github.com/updeb/updeb/pkg/strictjson"
	"github.com/updeb/updeb/pkg/weblink"
)

// Bounds of the GitHub attestations API walk.
const (
	maxAttestationPage  = 32 << 20 // one page of up to 100 inline bundles
	maxAttestationPages = 10
	attestationsPerPage = 100
)

var repoPattern = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$`)

// attestationPage is one page of GET /repos/OWNER/REPO/attestations/DIGEST.
type attestationPage struct {
	Attestations []struct {
		Bundle    json.RawMessage `json:"bundle"`
		BundleURL string          `json:"bundle_url"`
	} `json:"attestations"`
}

// VerifyGitHubAttestations fetches the artifact attestations GitHub holds for
// the artifact's sha256 in repository repo ("OWNER/REPO"), through
// Options.HTTPClient from Options.GitHubAPIURL, following pagination, and
// verifies each bundle as VerifyBundle does: the in-toto statement's subjects
// must include the artifact's digest. One bundle that verifies under the
// Policy suffices; of several, the Result is the one made first
// (earlierEntry), whatever order GitHub lists them in, so that
// the same inputs give the same provenance record after upstream attests the
// artifact again. The refusals of the others are Result.Warnings. Bundles
// GitHub serves by reference (bundle_url, snappy-compressed) are fetched
// without the token.
func (v *Verifier) VerifyGitHubAttestations(ctx context.Context, pol Policy, artifact digest.Set, repo string) (*Result, error) {
	if err := v.trusted(); err != nil {
		return nil, err
	}
	id, err := pol.compile()
	if err != nil {
		return nil, err
	}
	if err := id.keyless("GitHub's artifact attestations"); err != nil {
		return nil, err
	}
	if !repoPattern.MatchString(repo) || strings.Contains(repo, "..") {
		return nil, fmt.Errorf("%w: repository %q is not OWNER/REPO", ErrPolicy, repo)
	}
	if _, err := artifactSHA256(artifact); err != nil {
		return nil, err
	}
	subject := fmt.Sprintf("GitHub attestations of %s for sha256:%s", repo, artifact[digest.SHA256])
	next := v.github.JoinPath("repos", repo, "attestations", "sha256:"+strings.ToLower(artifact[digest.SHA256])).String() +
		fmt.Sprintf("?per_page=%d", attestationsPerPage)
	var refusals []Refusal
	var best *Result
	read := map[string]bool{} // the pages read: a Link that leads back to one is a loop
	for page := 0; next != ""; page++ {
		if read[next] {
			refusals = append(refusals, Refusal{Reason: ReasonMalformed, Source: next,
				Detail: "the next page (Link rel=\"next\") leads back to a page already read: a loop, not an answer of GitHub's attestations API"})
			break
		}
		read[next] = true
		if page == maxAttestationPages {
			refusals = append(refusals, Refusal{Reason: ReasonNoAttestation, Source: next,
				Detail: fmt.Sprintf("stopped after %d pages of attestations", maxAttestationPages)})
			break
		}
		pageURL := next
		body, links, err := v.getAttestationPage(ctx, subject, pageURL)
		if err != nil {
			return nil, err
		}
		if body == nil { // 404: GitHub holds none
			break
		}
		var p attestationPage
		if err := strictjson.Unmarshal(body, &p); err != nil {
			return nil, refuse(subject, ReasonMalformed, pageURL, "malformed attestations response: %v", err)
		}
		// GitHub never sends more than per_page asks; a page that does would
		// have every one of its bundles fetched and verified, and refused
		// in one message without end.
		if len(p.Attestations) > attestationsPerPage {
			return nil, refuse(subject, ReasonMalformed, pageURL, "%d attestations in one page, more than the %d asked for (per_page): not an answer of GitHub's attestations API", len(p.Attestations), attestationsPerPage)
		}
		for i, a := range p.Attestations {
			source := fmt.Sprintf("%s (attestation %d)", pageURL, i+1)
			raw := []byte(a.Bundle)
			if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
				if a.BundleURL == "" {
					refusals = append(refusals, Refusal{Reason: ReasonMalformed, Source: source, Detail: "neither a bundle nor a bundle_url"})
					continue
				}
				source = weblink.RedactQuery(a.BundleURL) // pre-signed: the Result and refusals name it without its signature
				if raw, err = v.fetchBundle(ctx, subject, a.BundleURL); err != nil {
					var re *RefusedError
					if errors.As(err, &re) {
						refusals = append(refusals, re.Refusals...)
						continue
					}
					return nil, err
				}
			}
			// Every one is verified, not only the first: which is first
			// is GitHub's to say, which one vouches must not be. (GitHub
			// serves a hundred a page; verifying one takes no network.)
			res, r := v.verifyAttestation(raw, source, id, artifact)
			if r != nil {
				refusals = append(refusals, *r)
				continue
			}
			if best == nil || earlierEntry(res, best) {
				best = res
			}
		}
		if next, err = v.nextPage(links); err != nil {
			return nil, refuse(subject, ReasonMalformed, pageURL, "%v", err)
		}
	}
	if best != nil {
		for _, r := range refusals {
			best.Warnings = append(best.Warnings, "another attestation does not count: "+r.String())
		}
		slices.Sort(best.Warnings) // in no order GitHub chose
		return best, nil
	}
	if len(refusals) == 0 {
		return nil, refuse(subject, ReasonNoAttestation, v.github.JoinPath("repos", repo, "attestations").String(),
			"GitHub holds no attestation of %s for sha256:%s", repo, artifact[digest.SHA256])
	}
	return nil, &RefusedError{Subject: subject, Refusals: refusals}
}

// earlierEntry reports whether the verified attestation a was made before
// b: by the time a log or timestamp authority vouches it was signed (the
// entry's integrated time, else its earliest RFC 3161 timestamp; one with
// neither comes last), which holds across logs (a re-attestation may be
// in a newer log, whose indexes start again); then by the log's ID and the
// entry's index there (one log's entries in the same second); at last by
// the bundle's bytes, so that the choice is one whatever the order.
func earlierEntry(a, b *Result) bool {
	at, bt := signedAt(a), signedAt(b)
	if !at.Equal(bt) {
		return bt.IsZero() || !at.IsZero() && at.Before(bt)
	}
	if c := cmp.Or(cmp.Compare(a.LogID, b.LogID), cmp.Compare(a.LogIndex, b.LogIndex)); c != 0 {
		return c < 0
	}
	return bytes.Compare(a.Bundle, b.Bundle) < 0
}

// signedAt is when r was signed, as its log entry or timestamps vouch;
// zero when neither does.
func signedAt(r *Result) time.Time {
	if !r.IntegratedTime.IsZero() || len(r.Timestamps) == 0 {
		return r.IntegratedTime
	}
	return slices.MinFunc(r.Timestamps, time.Time.Compare)
}

func (v *Verifier) verifyAttestation(raw []byte, source string, id *identity, artifact digest.Set) (*Result, *Refusal) {
	b, r := parseBundle(raw)
	if r != nil {
		r.Source = source
		return nil, r
	}
	res, r := v.verifyEntity(source, b, id, artifact, false)
	if r != nil {
		return nil, r
	}
	res.Shape = ShapeGitHubAttestation
	res.Bundle = bytes.Clone(raw)
	return res, nil
}

// getAttestationPage fetches one page with the API's headers (and the token,
// only to the API's own origin). A 404 gives a nil body.
func (v *Verifier) getAttestationPage(ctx context.Context, subject, u string) ([]byte, string, error) {
	h := http.Header{"Accept": {"application/vnd.github+json"}, "X-Github-Api-Version": {"2022-11-28"}}
	if v.o.GitHubToken != "" {
		h.Set("Authorization", "Bearer "+v.o.GitHubToken)
	}
	var links string
	body, status, err := v.getWith(ctx, subject, u, h, maxAttestationPage, func(r *http.Response) { links = r.Header.Get("Link") })
	if err != nil || status == http.StatusNotFound {
		return nil, "", err
	}
	return body, links, nil
}

// nextPage returns the rel="next" URL of a Link header, which must stay on the
// API's origin (the token goes there), or "".
func (v *Verifier) nextPage(link string) (string, error) {
	next := weblink.Next(link)
	if next == "" {
		return "", nil
	}
	u, err := url.Parse(next)
	if err != nil || !weblink.SameOrigin(u, v.github) {
		return "", fmt.Errorf("the next page %q is not on %s://%s", next, v.github.Scheme, v.github.Host)
	}
	return next, nil
}

// fetchBundle fetches a bundle GitHub serves by reference (a pre-signed
// storage URL: no token) and decodes it: snappy block (what GitHub serves),
// snappy stream, or plain JSON. A refusal names the URL without its
// signature (weblink.RedactQuery).
func (v *Verifier) fetchBundle(ctx context.Context, subject, u string) ([]byte, error) {
	shown := weblink.RedactQuery(u) // its signature downloads the bundle until it expires
	pu, err := url.Parse(u)
	if err != nil || (pu.Scheme != "https" && pu.Scheme != "http") || pu.Host == "" {
		return nil, refuse(subject, ReasonMalformed, shown, "bundle_url is not an http(s) URL")
	}
	b, status, err := v.get(ctx, subject, u, nil, maxBundleSize)
	if err != nil {
		return nil, err
	}
	if status == http.StatusNotFound {
		return nil, refuse(subject, ReasonNoAttestation, shown, "the attestation's bundle is gone (HTTP 404)")
	}
	out, err := decodeBundleBlob(b)
	if err != nil {
		return nil, refuse(subject, ReasonMalformed, shown, "%v", err)
	}
	return out, nil
}

var snappyStreamMagic = []byte("\xff\x06\x00\x00sNaPpY")

// decodeBundleBlob undoes the compression of a bundle served by reference,
// refusing anything that would decode to more than maxBundleSize.
func decodeBundleBlob(b []byte) ([]byte, error) {
	t := bytes.TrimSpace(b)
	switch {
	case len(t) > 0 && t[0] == '{':
		return b, nil
	case bytes.HasPrefix(b, snappyStreamMagic):
		out, err := io.ReadAll(io.LimitReader(snappy.NewReader(bytes.NewReader(b)), maxBundleSize+1))
		if err != nil {
			return nil, fmt.Errorf("damaged snappy stream: %v", err)
		}
		if len(out) > maxBundleSize {
			return nil, fmt.Errorf("decompresses to more than %d bytes", maxBundleSize)
		}
		return out, nil
	}
	n, err := snappy.DecodedLen(b)
	if err != nil {
		return nil, fmt.Errorf("neither JSON nor snappy-compressed JSON: %v", err)
	}
	if n > maxBundleSize {
		return nil, fmt.Errorf("decompresses to %d bytes, more than %d", n, maxBundleSize)
	}
	out, err := snappy.Decode(nil, b)
	if err != nil {
		return nil, fmt.Errorf("damaged snappy block: %v", err)
	}
	return out, nil
}
