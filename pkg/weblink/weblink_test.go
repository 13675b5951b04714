package weblink

import (
	"net/url"
	"testing"
)

func TestNext(t *testing.T) {
	for in, want := range map[string]string{
		`<https://api.github.com/x?page=2>; rel="next", <https://api.github.com/x?page=5>; rel="last"`: "https://api.github.com/x?page=2",
		`<https://a/1>; rel="prev", <https://a/3>; rel="next"`:                                         "https://a/3",
		`<https://a/3>; rel="next prefetch"`:                                                           "https://a/3",
		`<https://a/3>; REL=next`:                                                                      "https://a/3",
		`</x?page=3>; rel="next"`:                                                                      "/x?page=3",
		`<https://a/3>; rel="last"`:                                                                    "",
		`https://a/3; rel="next"`:                                                                      "",
		``:                                                                                             "",
	} {
		if got := Next(in); got != want {
			t.Errorf("Next(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzNext(f *testing.F) {
	f.Add(`<https://api.github.com/x?page=2>; rel="next", <https://api.github.com/x?page=5>; rel="last"`)
	f.Fuzz(func(t *testing.T, s string) { _ = Next(s) })
}

// TestSameOrigin: scheme and host compare whatever their case, a default
// port named or not; another port, scheme or host is another origin.
func TestSameOrigin(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"https://ghe.example:443/api/v3", "https://GHE.example/api/v3/x?page=2", true},
		{"HTTP://a.example/", "http://a.example:80/y", true},
		{"https://a.example/", "https://a.example:8443/", false},
		{"https://a.example/", "http://a.example/", false},
		{"http://a.example:443/", "https://a.example/", false},
		{"https://a.example/", "https://a.example.evil/", false},
	} {
		a, _ := url.Parse(tc.a)
		b, _ := url.Parse(tc.b)
		if got := SameOrigin(a, b); got != tc.same || SameOrigin(b, a) != tc.same {
			t.Errorf("SameOrigin(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.same)
		}
	}
}

// TestHost: one origin's host written one way, whatever its case, a final
// dot or its scheme's default port; another port is kept.
func TestHost(t *testing.T) {
	for u, want := range map[string]string{
		"https://Releases.Example.org.:443/x": "releases.example.org",
		"http://a.example:80/":                "a.example",
		"http://a.example:443/":               "a.example:443",
		"https://a.example:8443/":             "a.example:8443",
		"https://[2001:DB8::1]:443/":          "[2001:db8::1]",
		"https://[2001:db8::1]:8443/":         "[2001:db8::1]:8443",
	} {
		pu, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		if got := Host(pu); got != want {
			t.Errorf("Host(%s) = %q, want %q", u, got, want)
		}
	}
}
