package mirror

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"sort"
	"sync"
)

// maxAnswer bounds one recorded answer (an attestation page or bundle is at
// most a few MiB).
const maxAnswer = 32 << 20

// Recorder is an http.RoundTripper that passes requests to Next and keeps
// every complete 200 answer to a GET: export hands it to the Sigstore
// verifier, so that the answers the build's verification asked for (GitHub's
// attestations of an artifact, the bundles they point at) travel in the
// mirror with the artifacts, and the far side verifies them offline. A page
// of a paginated answer beyond the first (a "page" parameter) is not kept: a
// file mirror serves a URL without its query.
type Recorder struct {
	Next http.RoundTripper
	mu   sync.Mutex
	got  map[string][]byte // URL without its query -> body
}

// RoundTrip implements http.RoundTripper.
func (r *Recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.Next.RoundTrip(req)
	if err != nil || req.Method != http.MethodGet || resp.StatusCode != http.StatusOK || req.URL.Query().Has("page") {
		return resp, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if len(body) <= maxAnswer {
		u := *req.URL
		u.RawQuery, u.Fragment = "", ""
		r.mu.Lock()
		if r.got == nil {
			r.got = map[string][]byte{}
		}
		r.got[u.String()] = body
		r.mu.Unlock()
	}
	return resp, nil
}

// answer is one recorded answer.
type answer struct {
	url  string
	body []byte
}

// answers returns what was recorded, sorted by URL.
func (r *Recorder) answers() []answer {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]answer, 0, len(r.got))
	for u, b := range r.got {
		out = append(out, answer{u, b})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].url < out[j].url })
	return out
}

// entry is the manifest entry of an answer filed at rel.
func (a answer) entry(rel string) Entry {
	sum := sha256.Sum256(a.body)
	return Entry{URL: a.url, Path: rel, Size: int64(len(a.body)), SHA256: hex.EncodeToString(sum[:])}
}
