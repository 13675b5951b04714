package weblink

import "testing"

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
