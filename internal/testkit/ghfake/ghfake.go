// Package ghfake is a stand-in for github.com for tests: an HTTP server on
// 127.0.0.1 that answers the REST API's "list releases"
// (GET /api/repos/OWNER/REPO/releases, paginated, newest first, with tag,
// publication time and html_url) and serves each release's files at their
// real paths (/OWNER/REPO/releases/download/TAG/FILE, HEAD too), with a
// SHA256SUMS file per release. Tests reach it through squid, with the
// config's mirrors: mapping https://github.com/ to URL()+"/gh/" and
// github-api: URL()+"/api".
//
// Artifact makes the deterministic file a fake release serves, so that a
// fixture can pin its digest.
package ghfake

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Server is a running fake GitHub.
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	releases map[string][]release // repo -> newest first
	files    map[string][]byte    // path -> content
	requests []string
	onePage  bool // every page= answered with the first page
}

type release struct {
	Tag       string
	Published time.Time
}

// New starts a server and stops it with cleanup.
func New(cleanup func(func())) *Server {
	s := &Server{releases: map[string][]release{}, files: map[string][]byte{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	cleanup(s.Close)
	return s
}

// Mirror is the prefix the config's mirrors: maps https://github.com/ to.
func (s *Server) Mirror() string { return s.URL + "/gh/" }

// API is the config's github-api:.
func (s *Server) API() string { return s.URL + "/api" }

// Publish adds a release of repo ("owner/name") with tag, published at
// published, serving files (name -> content) and a SHA256SUMS listing them.
// A release published again replaces the old one (its files are kept unless
// given again).
func (s *Server) Publish(repo, tag string, published time.Time, files map[string][]byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := slices.Sorted(maps.Keys(files))
	var sums bytes.Buffer
	for _, n := range names {
		sum := sha256.Sum256(files[n])
		fmt.Fprintf(&sums, "%s  %s\n", hex.EncodeToString(sum[:]), n)
		s.files[downloadPath(repo, tag, n)] = files[n]
	}
	s.files[downloadPath(repo, tag, "SHA256SUMS")] = sums.Bytes()
	rs := s.releases[repo][:0:0]
	for _, r := range s.releases[repo] {
		if r.Tag != tag {
			rs = append(rs, r)
		}
	}
	rs = append(rs, release{Tag: tag, Published: published.UTC()})
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].Published.After(rs[j].Published) })
	s.releases[repo] = rs
}

// Set replaces (or, with nil, removes) one file of a release.
func (s *Server) Set(repo, tag, name string, content []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := downloadPath(repo, tag, name)
	if content == nil {
		delete(s.files, p)
		return
	}
	s.files[p] = content
}

// Requests lists the requests served, "METHOD PATH", in order.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// IgnorePages makes the API answer the first page of a listing whatever
// page= asks for, as a caching proxy or mirror that ignores the query
// string does; false answers each page again.
func (s *Server) IgnorePages(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onePage = on
}

func downloadPath(repo, tag, name string) string {
	return "/" + repo + "/releases/download/" + tag + "/" + name
}

const perPage = 100

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r.Method+" "+r.URL.Path)
	if rest, ok := strings.CutPrefix(r.URL.Path, "/api/repos/"); ok {
		repo, ok := strings.CutSuffix(rest, "/releases")
		rs, known := s.releases[repo]
		if !ok || !known {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"message":"Not Found"}`)
			return
		}
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		page = max(page, 1)
		if s.onePage {
			page = 1
		}
		list := []map[string]any{}
		for i := (page - 1) * perPage; i < len(rs) && i < page*perPage; i++ {
			list = append(list, map[string]any{"tag_name": rs[i].Tag, "draft": false, "prerelease": false,
				"published_at": rs[i].Published.Format(time.RFC3339), "html_url": "https://github.com/" + repo + "/releases/tag/" + rs[i].Tag})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(list)
		return
	}
	b, ok := s.files[strings.TrimPrefix(r.URL.Path, "/gh")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	if r.Method != http.MethodHead {
		w.Write(b)
	}
}

// Artifact is the raw executable a fake release of name at version serves
// for arch: a script that prints its name, version and architecture. The
// same arguments give the same bytes, on any machine, so that a fixture can
// pin its digest.
func Artifact(name, version, arch string) []byte {
	return []byte(fmt.Sprintf("#!/bin/sh\necho %s %s %s\n", name, version, arch))
}

// SHA256 is the hex sha256 of b.
func SHA256(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
