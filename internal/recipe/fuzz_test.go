package recipe

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// FuzzParse: the loader never panics, and every failure is an *Error wrapping
// ErrInvalid whose findings all carry a position in the file.
func FuzzParse(f *testing.F) {
	f.Add([]byte(baseRecipe))
	for _, sig := range append(sigstoreForms, sigKey) {
		f.Add([]byte(strings.Replace(baseRecipe, sigOpenPGP, sig, 1)))
	}
	if b, err := os.ReadFile("testdata/recipes/hello.yaml"); err == nil {
		f.Add(b)
	}
	f.Add([]byte("name: [a, {b: c}]\narchitectures: {amd64: x86_64}\npackages: []\n"))
	f.Add([]byte("a: &x [*x]\n"))
	f.Add([]byte("---\n---\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Parse("recipes/f.yaml", data)
		if err == nil {
			// A recipe that parses must also plan (lint mode) without panicking.
			fs := &findings{file: "recipes/f.yaml"}
			for _, a := range r.Architectures {
				r.resolve(a.Debian, resolveOptions{lint: true}, fs)
			}
			for _, x := range fs.Findings() {
				if x.Line < 1 || x.Col < 1 {
					t.Fatalf("plan finding without a position: %+v", x)
				}
			}
			return
		}
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, ErrInvalid) || len(e.Findings) == 0 {
			t.Fatalf("error %v is not a non-empty *Error wrapping ErrInvalid", err)
		}
		for _, x := range e.Findings {
			if x.Line < 1 || x.Col < 1 || x.File != "recipes/f.yaml" || x.Message == "" {
				t.Fatalf("finding without a position or message: %+v", x)
			}
		}
	})
}
