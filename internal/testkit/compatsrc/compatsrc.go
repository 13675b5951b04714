// Package compatsrc is a fake upstream for the compatibility tables: an HTTP
// server on 127.0.0.1 that serves documents at the paths upstream publishes
// them under on raw.githubusercontent.com (so that data: sources: pointing
// at it is a site mirror), from the real copies in testdata/compat-sources,
// or whatever hostile answer a test wants: a status, an HTML page, a body
// of any size, a body dripped a byte at a time.
package compatsrc

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/updeb/updeb/internal/compatdata"
)

// Server is a running fake upstream.
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	answers  map[string]Answer
	requests []string
}

// Answer is what the server sends for one path.
type Answer struct {
	Status int // 0 means 200
	Body   []byte
	// Size, when set, sends that many bytes of filler instead of Body.
	Size int64
	// Drip, when set, sends the body one byte at a time, Drip apart.
	Drip time.Duration
}

// New starts an empty server and stops it with cleanup.
func New(cleanup func(func())) *Server {
	s := &Server{answers: map[string]Answer{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	cleanup(s.Close)
	return s
}

// Put makes the server answer path ("/helm/helm-www/main/...") with a.
func (s *Server) Put(path string, a Answer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answers[path] = a
}

// Get returns the body the server sends for path.
func (s *Server) Get(path string) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]byte(nil), s.answers[path].Body...)
}

// Requests returns the paths asked for so far.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

const upstream = "https://raw.githubusercontent.com"

// Path is the server's path for a table's default URL, {minor} replaced by minor.
func Path(table, minor string, i int) string {
	u := compatdata.DefaultSources(table)[i]
	return strings.ReplaceAll(strings.TrimPrefix(u, upstream), compatdata.MinorPlaceholder, minor)
}

// Sources are data: sources: that send every table to the server.
func (s *Server) Sources() map[string][]string {
	out := map[string][]string{}
	for _, t := range compatdata.Names() {
		for _, u := range compatdata.DefaultSources(t) {
			out[t] = append(out[t], s.URL+strings.TrimPrefix(u, upstream))
		}
	}
	return out
}

// Copies are the real upstream copies (testdata/compat-sources) the server
// serves by default, by table: the file for each default URL.
var Copies = map[string][]string{
	compatdata.Helm:        {"helm/version_skew.mdx", "helm/version_skew.md"},
	compatdata.Containerd:  {"containerd/RELEASES.md"},
	compatdata.KubeadmEtcd: {"kubeadm/constants.go"},
	compatdata.CRITools:    {"cri-tools/README.md"},
}

// ServeCopies puts the real copies in dir (testdata/compat-sources) at
// their default paths: Copies, kubeadm's constants.go on the release
// branch of kubernetesMinor, each Calico minor's own system requirements,
// and for each Cilium minor the one requirements.rst copy there is (which
// Cilium branch it came from is not known). Istio's newest copy is from
// 2024, older than the bundled rows: its status file holds the bundled rows
// instead (IstioStatus).
func (s *Server) ServeCopies(dir, kubernetesMinor string, calico, cilium []string) error {
	bundled, err := compatdata.Bundled()
	if err != nil {
		return err
	}
	var istio [][3]string
	for _, r := range bundled.Table(compatdata.Istio).Rows {
		ir := r.(compatdata.IstioRow)
		istio = append(istio, [3]string{ir.Istio, ir.KubernetesMin, ir.KubernetesMax})
	}
	s.Put(Path(compatdata.Istio, "", 0), Answer{Body: IstioStatus(istio)})
	read := func(f string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, f)) }
	for table, files := range Copies {
		for i, f := range files {
			b, err := read(f)
			if err != nil {
				return err
			}
			s.Put(Path(table, kubernetesMinor, i), Answer{Body: b})
		}
	}
	for _, m := range calico {
		b, err := read("calico/version-" + m + "-_system-requirements.mdx")
		if err != nil {
			return err
		}
		s.Put(Path(compatdata.Calico, m, 0), Answer{Body: b})
	}
	b, err := read("cilium/requirements.rst")
	if err != nil {
		return err
	}
	for _, m := range cilium {
		s.Put(Path(compatdata.Cilium, m, 0), Answer{Body: b})
	}
	return nil
}

// IstioStatus writes rows (version, lowest and highest Kubernetes minor,
// newest first) in the format of istio.io's data/compatibility/supportStatus.yml.
func IstioStatus(rows [][3]string) []byte {
	var b bytes.Buffer
	b.WriteString("# Please keep entries ordered descending by version.\n- version: \"master\"\n  supported: \"No, development only\"\n  releaseDate:\n  eolDate:\n")
	if len(rows) > 0 {
		fmt.Fprintf(&b, "  k8sVersions: [%s]\n", quoteRange(rows[0][1], rows[0][2]))
	}
	for _, r := range rows {
		fmt.Fprintf(&b, "- version: %q\n  supported: \"Yes\"\n  releaseDate: \"Jan 1, 2026\"\n  eolDate: \"~Jan 2027 (Expected)\"\n  k8sVersions: [%s]\n  testedK8sVersions: []\n", r[0], quoteRange(r[1], r[2]))
	}
	return b.Bytes()
}

// quoteRange lists the minors lo..hi (same major) as "1.32", "1.33", ...
func quoteRange(lo, hi string) string {
	var major, a, z int
	fmt.Sscanf(lo, "%d.%d", &major, &a)
	fmt.Sscanf(hi, "%d.%d", &major, &z)
	var parts []string
	for m := a; m <= z; m++ {
		parts = append(parts, fmt.Sprintf("%q", fmt.Sprintf("%d.%d", major, m)))
	}
	return strings.Join(parts, ", ")
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r.URL.Path)
	a, ok := s.answers[r.URL.Path]
	s.mu.Unlock()
	if !ok {
		http.Error(w, "404: Not Found", http.StatusNotFound)
		return
	}
	if a.Status != 0 {
		w.WriteHeader(a.Status)
	}
	switch {
	case a.Size > 0:
		chunk := bytes.Repeat([]byte("| 1.36 | 2.3.0+ | v1 |\n"), 4096)
		for n := int64(0); n < a.Size; n += int64(len(chunk)) {
			if _, err := w.Write(chunk[:min(int64(len(chunk)), a.Size-n)]); err != nil {
				return
			}
		}
	case a.Drip > 0:
		for i := range a.Body {
			if _, err := w.Write(a.Body[i : i+1]); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(a.Drip):
			}
		}
	default:
		w.Write(a.Body)
	}
}
