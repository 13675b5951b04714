package srcurl

import (
	"errors"
	"net/http"
	"net/url"
	"path"
	"strings"
	"testing"
)

func TestAccepted(t *testing.T) {
	for _, s := range []string{
		"https://get.helm.sh/helm-v3.15.4-linux-amd64.tar.gz",
		"https://github.com/k3s-io/k3s/releases/download/v1.30.2%2Bk3s1/k3s",
		"http://127.0.0.1:8080/a/b.tar.xz?raw=true",
		"https://[::1]:65535/a",
		"https://dl.k8s.io/v1.31.4/bin/linux/amd64/kubectl",
		"https://example.org/",
		"https://example.org",
		"https://example.org/dir/",
		"https://example.org/a..b/.hidden/x...y",
		"https://example.org/%2e%2ex", // a name that starts with two dots
		"https://example.org/a;b/c",
		"https://github.com/kubernetes-sigs/kustomize/releases/download/kustomize%2Fv5.8.1/checksums.txt",
	} {
		if _, err := Check(s); err != nil {
			t.Errorf("Check(%q) = %v, want accepted", s, err)
		}
	}
}

// Hostile spellings of a path that climbs out, and bytes that do not belong
// in a URL: every one is refused, wrapping ErrInvalid.
func TestRefused(t *testing.T) {
	for _, s := range []string{
		"https://h/a/../../etc/passwd",
		"https://h/..",
		"https://h/a/..",
		"https://h/./a",
		"https://h/a/./b",
		"https://h/%2e%2e/%2e%2e/etc/passwd",
		"https://h/%2E%2E/etc/passwd",
		"https://h/.%2e/etc/passwd",
		"https://h/%2e./etc/passwd",
		"https://h/..%2fetc%2fpasswd",
		"https://h/..%2Fetc",
		"https://h/a%2f..%2fb",               // an encoded separator around dots
		"https://h/a%2f%2fb",                 // an encoded empty segment
		"https://h/a%2f",                     // an encoded separator at the end
		"https://h/%252e%252e/etc/passwd",    // double encoding
		"https://h/%25252e%25252e/etc",       // triple
		"https://h/..%5c..%5cetc",            // backslash
		"https://h/..\\..\\etc",              // raw backslash
		"https://h/a%5cb",                    // backslash in a name
		"https://h/..;/etc/passwd",           // Tomcat-style parameters
		"https://h/..;jsessionid=1/etc",      // parameters after dots
		"https://h/.;x/a",                    // dot with a parameter
		"https://h/a//b",                     // empty segment
		"https://h//etc/passwd",              // leading empty segment
		"https://h/%2e",                      // encoded single dot
		"https://h/...",                      // only dots
		"https://h/.. /x",                    // dots and a space (raw)
		"https://h/..%20/x",                  // dots and an encoded space
		"https://h/a%00b",                    // encoded NUL
		"https://h/a\x00b",                   // raw NUL
		"https://h/a\rb",                     // CR
		"https://h/a\nb",                     // LF
		"https://h/a\tb",                     // tab
		"https://h/a b",                      // space
		"https://h/a\x7fb",                   // DEL
		"https://h/caf\xc3\xa9",              // raw non-ASCII
		"https://h/%c0%ae%c0%ae/etc",         // overlong UTF-8 dots
		"https://h/%ef%bc%8e%ef%bc%8e/etc",   // fullwidth dots
		"https://h/a%0d%0aX-Injected:%20yes", // header injection
		"https://h/a%zz",                     // bad escape
		"https://h:0/a",                      // a port no dial can use (every download
		"https://h:65536/a",                  // of the URL would be retried until its
		"https://h:99999/a",                  // budget is spent)
		"https://user:pw@h/a",
		"https://h/a#frag",
		"ftp://h/a",
		"file:///etc/passwd",
		"https:///a",
		"//h/a",
		"h/a",
		"",
		"HTTPS://h/a",
		"https://h/" + strings.Repeat("a", MaxLen),
	} {
		_, err := Check(s)
		if err == nil {
			t.Errorf("Check(%q) accepted", s)
			continue
		}
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("Check(%q) = %v, does not wrap ErrInvalid", s, err)
		}
	}
}

// staysInside is the property every accepted URL has: its path, mapped below
// a folder or below an HTTP prefix, stays there however it is decoded.
func staysInside(t *testing.T, s string) {
	u, err := Check(s)
	if err != nil {
		return
	}
	if _, err := http.NewRequest(http.MethodGet, s, nil); err != nil {
		t.Fatalf("Check accepted %q, which net/http refuses: %v", s, err)
	}
	p := u.EscapedPath()
	if p == "" {
		return
	}
	segs, err := Segments(p[1:])
	if err != nil {
		t.Fatalf("Check accepted %q, Segments refuses it: %v", s, err)
	}
	const root = "/srv/mirror"
	joined := root + "/" + strings.Join(segs, "/")
	if c := path.Clean(joined); c != root && !strings.HasPrefix(c, root+"/") {
		t.Fatalf("%q maps to %s, outside %s", s, c, root)
	}
	// Decoding once more (a lenient server) keeps it inside too.
	if d, err := url.PathUnescape(joined); err == nil {
		if c := path.Clean(strings.ReplaceAll(d, "\\", "/")); c != root && !strings.HasPrefix(c, root+"/") {
			t.Fatalf("%q decoded twice maps to %s, outside %s", s, c, root)
		}
	}
	// An HTTP mirror: the prefix, then the rest of the URL as it is.
	mapped := "http://mirror.internal/pre/" + strings.TrimPrefix(s[len(u.Scheme)+3+len(u.Host):], "/")
	m, err := Check(mapped)
	if err != nil {
		t.Fatalf("%q accepted, mapped below an HTTP mirror %q refused: %v", s, mapped, err)
	}
	if !strings.HasPrefix(m.EscapedPath(), "/pre/") || m.Host != "mirror.internal" {
		t.Fatalf("%q under http://mirror.internal/pre/ is %s", s, m)
	}
}

func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		"https://h/a/b.tar.gz", "https://h/%2e%2e/x", "https://h/..;/x", "https://h/%252e%252e/x",
		"https://h/a%2fb", "https://h/a?b=../c", "https://h/a%5c..", "http://h:1/a/./b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { staysInside(t, s) })
}

// A URL refused for its user name and password is named without the
// password, and Redact hides a credential in a query: the error goes to
// the terminal and CI logs.
func TestRefusalHidesPassword(t *testing.T) {
	_, err := Check("https://alice:s3cret@example.org/a.tgz")
	want := `"https://alice:xxxxx@example.org/a.tgz" is not an acceptable download URL: a user name or password does not belong in a download URL`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
	for in, want := range map[string]string{
		"socks5://alice:s3cret@proxy:1080":    "socks5://alice:xxxxx@proxy:1080",
		"http://al@ice:s3/cr@et@proxy:3128/p": "http://al@ice:xxxxx@proxy:3128/p", // "/" unencoded in the password
		"alice:s3c ret@proxy:3128":            "alice:xxxxx@proxy:3128",
		"https://bob@h/a":                     "https://bob@h/a",          // a user alone is no secret
		"http://APIKEY:@proxy:3128":           "http://xxxxx:@proxy:3128", // but one with an empty password is the secret (curl -u TOKEN:)
		"https://h/a":                         "https://h/a",
		// a pre-signed URL's signature, and any token or key in a query
		"https://s3.example/b/a.tgz?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAEX%2F20260101&X-Amz-Signature=d34db33f&response-content-type=application%2Foctet-stream": "https://s3.example/b/a.tgz?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=xxxxx&X-Amz-Signature=xxxxx&response-content-type=application%2Foctet-stream",
		"https://ra.example/a?sp=r&se=2026-01-01&sig=c2Vj&jwt=eyJh.eyJi.c2ln&filename=a.tgz":                                                                                       "https://ra.example/a?sp=r&se=2026-01-01&sig=xxxxx&jwt=xxxxx&filename=a.tgz",
		"https://h/a?token=t0k&access_token=t0k&api%5Fkey=k3y&v=1#x":                                                                                                               "https://h/a?token=xxxxx&access_token=xxxxx&api%5Fkey=xxxxx&v=1#x",
		"https://h/a?Signature=s&Key-Pair-Id=k&x-goog-signature=s&flag":                                                                                                            "https://h/a?Signature=xxxxx&Key-Pair-Id=xxxxx&x-goog-signature=xxxxx&flag",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSegments(t *testing.T) {
	got, err := Segments("v1.30.2%2Bk3s1/k3s%20x/")
	if err != nil || strings.Join(got, "|") != "v1.30.2+k3s1|k3s x|" {
		t.Fatalf("Segments = %q, %v", got, err)
	}
}
