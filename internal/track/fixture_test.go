package track

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"

	"github.com/updeb/updeb/internal/fetch"
	"github.com/updeb/updeb/internal/recipe"
)

// upstream is a fake GitHub API plus release server on 127.0.0.1: files by
// path, and the API's release list for demo/hello.
type upstream struct {
	t        *testing.T
	srv      *httptest.Server
	mu       sync.Mutex
	files    map[string][]byte
	releases []map[string]any
	api      func(w http.ResponseWriter, r *http.Request) bool // overrides the API answer when it returns true
	auth     []string                                          // Authorization headers the API saw
}

func newUpstream(t *testing.T) *upstream {
	u := &upstream{t: t, files: map[string][]byte{}}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		defer u.mu.Unlock()
		if strings.HasPrefix(r.URL.Path, "/api/") {
			u.auth = append(u.auth, r.Header.Get("Authorization"))
			if u.api != nil && u.api(w, r) {
				return
			}
			if r.URL.Path != "/api/repos/demo/hello/releases" {
				w.WriteHeader(http.StatusNotFound)
				fmt.Fprint(w, `{"message":"Not Found"}`)
				return
			}
			page := u.releases
			if r.URL.Query().Get("page") != "1" {
				page = nil
			}
			b, _ := json.Marshal(page)
			w.Write(b)
			return
		}
		b, ok := u.files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if r.Method == http.MethodHead {
			w.Header().Set("Content-Length", fmt.Sprint(len(b)))
			return
		}
		w.Write(b)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *upstream) release(tag string, prerelease, draft bool, published string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.releases = append([]map[string]any{{"tag_name": tag, "prerelease": prerelease, "draft": draft, "published_at": published}}, u.releases...)
}

func (u *upstream) set(path string, b []byte) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if b == nil {
		delete(u.files, path)
	} else {
		u.files[path] = b
	}
}

func (u *upstream) get(path string) []byte {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.files[path]
}

var arches = []string{"amd64", "arm64"}

// artifactPath is the release server path of hello's tarball.
func artifactPath(version, arch string) string {
	return fmt.Sprintf("/hello/v%s/hello-v%s-linux-%s.tar.gz", version, version, arch)
}

// publish uploads hello VERSION for every architecture: a tarball, its
// detached signature by the demo upstream key, and its .sha256sum.
func (u *upstream) publish(version string) map[string]string {
	sums := map[string]string{}
	for _, arch := range arches {
		sums[arch] = u.upload(version, arch, "#!/bin/sh\necho hello "+version+"\n")
	}
	return sums
}

// upload puts one architecture's tarball, signature and .sha256sum online.
func (u *upstream) upload(version, arch, script string) string {
	tgz := tarball(u.t, arch, script)
	p := artifactPath(version, arch)
	u.set(p, tgz)
	u.set(p+".asc", sign(u.t, tgz))
	sum := sha256.Sum256(tgz)
	u.set(p+".sha256sum", []byte(hex.EncodeToString(sum[:])+"  "+filepath.Base(p)+"\n"))
	return hex.EncodeToString(sum[:])
}

func tarball(t *testing.T, arch, script string) []byte {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	mt := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, f := range []struct{ name, body string }{
		{"linux-" + arch + "/hello", script},
		{"linux-" + arch + "/LICENSE", "Apache-2.0 test fixture\n"},
	} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o755, Size: int64(len(f.body)), ModTime: mt, Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(f.body))
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

var (
	signerOnce sync.Once
	signer     *openpgp.Entity
)

// sign makes an armored detached signature with the demo's fixture upstream
// key (testdata/demo/keys/demo-upstream-secret.asc, test only).
func sign(t *testing.T, data []byte) []byte {
	signerOnce.Do(func() {
		f, err := os.Open("../../testdata/demo/keys/demo-upstream-secret.asc")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		ks, err := openpgp.ReadArmoredKeyRing(f)
		if err != nil {
			t.Fatal(err)
		}
		signer = ks[0]
	})
	var out bytes.Buffer
	if err := openpgp.ArmoredDetachSign(&out, signer, bytes.NewReader(data), nil); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

const recipeTemplate = `# Test recipe, like the demo's hello: a tarball with a detached signature.
# Comments and layout must survive a bump.
name: hello
version: 1.2.0   # the version in use
revision: "3"
release-date: 2026-03-14
homepage: https://releases.example.org/hello
license: Apache-2.0
copyright: The updeb demo authors
architectures: {amd64: amd64, arm64: arm64}
sources:
  - name: hello
    url: BASE/hello/v{{.Version}}/hello-v{{.Version}}-linux-{{.Arch}}.tar.gz
    sha256:
      amd64: AMD64SUM  # pinned at the last bump
      arm64: ARM64SUM
    signature:
      url: BASE/hello/v{{.Version}}/hello-v{{.Version}}-linux-{{.Arch}}.tar.gz.asc
      keyring: keys/demo-upstream.asc
      signers: [BF6DE05C1AE1CEB285DE5044F3CB238093D0BB4B]
    checksums:
      url: BASE/hello/v{{.Version}}/hello-v{{.Version}}-linux-{{.Arch}}.tar.gz.sha256sum
packages:
  - name: hello
    summary: friendly greeting from the updeb tests
    description: |
      hello is a test fixture.
    section: utils
    files:
      - {source: hello, path: "linux-{{.Arch}}/hello", dest: /usr/bin/hello, mode: "0755"}
      - {source: hello, path: "linux-{{.Arch}}/LICENSE", dest: /usr/share/doc/hello/LICENSE}
watch: {github: demo/hello, tag-prefix: v, track: "1.x"}
`

// project writes a project (recipes/hello.yaml at 1.2.0 pinned to pins, and
// the demo keyring) and returns the recipe file.
func project(t *testing.T, u *upstream, pins map[string]string) string {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "recipes"), 0o755)
	os.MkdirAll(filepath.Join(root, "keys"), 0o755)
	key, err := os.ReadFile("../../testdata/demo/keys/demo-upstream.asc")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, "keys", "demo-upstream.asc"), key, 0o644)
	text := strings.NewReplacer("BASE", u.srv.URL, "AMD64SUM", pins["amd64"], "ARM64SUM", pins["arm64"]).Replace(recipeTemplate)
	file := filepath.Join(root, "recipes", "hello.yaml")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

func load(t *testing.T, file string) *recipe.Recipe {
	t.Helper()
	r, err := recipe.Load(file, recipe.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func testOptions(t *testing.T, u *upstream, fo fetch.Options) Options {
	return testOptionsIn(t, t.TempDir(), u, fo)
}

// testOptionsIn is testOptions with its fetcher's cache in dir.
func testOptionsIn(t *testing.T, dir string, u *upstream, fo fetch.Options) Options {
	fo.Retries = -1
	f, err := fetch.New(dir, fo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return Options{Client: f, GitHubAPI: u.srv.URL + "/api", Now: time.Now}
}
