// Package eoltest is a fake endoflife.date API for tests: an HTTP server on
// 127.0.0.1 that answers GET /api/PRODUCT.json (API v0) from cycles the test
// sets, or with whatever raw answer the test wants (an HTML error page, a
// truncated or huge body, a status code).
package eoltest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/updeb/updeb/internal/supportdata"
)

// Server is a running fake endoflife.date.
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	products map[string][]supportdata.Cycle
	raw      map[string]Answer
	requests []string
}

// Answer is a raw answer for one product.
type Answer struct {
	Status int // 0 means 200
	Body   []byte
}

// New starts a server that knows the products of data, and stops it with cleanup.
func New(data *supportdata.Data, cleanup func(func())) *Server {
	s := &Server{products: map[string][]supportdata.Cycle{}, raw: map[string]Answer{}}
	for _, p := range data.Products() {
		s.products[p] = data.Cycles(p)
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	cleanup(s.Close)
	return s
}

// URL template of the server for data: endoflife-url:.
func (s *Server) Template() string { return s.URL + "/api/{product}.json" }

// Set replaces a product's cycles (nil removes the product: 404).
func (s *Server) Set(product string, cycles []supportdata.Cycle) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.raw, product)
	if cycles == nil {
		delete(s.products, product)
		return
	}
	s.products[product] = cycles
}

// Cycles returns a product's cycles as served.
func (s *Server) Cycles(product string) []supportdata.Cycle {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]supportdata.Cycle(nil), s.products[product]...)
}

// Raw makes the server answer a product with a, until Set.
func (s *Server) Raw(product string, a Answer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.raw[product] = a
}

// Requests returns the paths asked for so far.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r.URL.Path)
	product, ok := strings.CutSuffix(strings.TrimPrefix(r.URL.Path, "/api/"), ".json")
	if !ok {
		http.NotFound(w, r)
		return
	}
	if a, ok := s.raw[product]; ok {
		if a.Status != 0 {
			w.WriteHeader(a.Status)
		}
		w.Write(a.Body)
		return
	}
	cycles, ok := s.products[product]
	if !ok {
		http.Error(w, `{"message": "Product not found"}`, http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(V0(cycles))
}

// V0 encodes cycles as the v0 API does: a list of {"cycle", "releaseDate",
// "support", "eol", "latest", "latestReleaseDate", "lts", ...}.
func V0(cycles []supportdata.Cycle) []byte {
	list := make([]map[string]any, 0, len(cycles))
	for _, c := range cycles {
		m := map[string]any{
			"cycle": c.Name, "releaseDate": day(c.ReleaseDate), "eol": dateOrBool(c.EOL, c.EOLPassed),
			"latest": c.Latest, "lts": c.LTS, "link": nil,
		}
		// v0's support is whether active support goes on: !eoas.
		switch {
		case !c.EOAS.IsZero():
			m["support"] = day(c.EOAS)
		case c.EOASPassed:
			m["support"] = false
		}
		if !c.LatestReleaseDate.IsZero() {
			m["latestReleaseDate"] = day(c.LatestReleaseDate)
		}
		if c.SupportedKubernetes != "" {
			m["supportedKubernetesVersions"] = c.SupportedKubernetes
		}
		list = append(list, m)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	_ = enc.Encode(list)
	return b.Bytes()
}

func day(t time.Time) string { return t.Format(time.DateOnly) }

func dateOrBool(t time.Time, passed bool) any {
	if t.IsZero() {
		return passed
	}
	return day(t)
}

// Cycle is a cycle for tests: released on released, end of active support
// eoas and end of life eol (YYYY-MM-DD, "" for none), latest patch latest.
func Cycle(product, name, released, eoas, eolDay, latest string) supportdata.Cycle {
	parse := func(s string) time.Time {
		if s == "" {
			return time.Time{}
		}
		t, err := time.Parse(time.DateOnly, s)
		if err != nil {
			panic(err)
		}
		return t
	}
	return supportdata.Cycle{Product: product, Name: name, ReleaseDate: parse(released), EOAS: parse(eoas), EOL: parse(eolDay), Latest: latest}
}
