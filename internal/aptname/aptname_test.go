package aptname

import (
	"strings"
	"testing"
)

func TestNames(t *testing.T) {
	for _, c := range []struct {
		check func(string) error
		what  string
		good  []string
		bad   []string
	}{
		{Suite, "suite", []string{"stable", "demo", "k8s-1.36", "a+b_c.d"},
			[]string{"", ".hidden", "-x", "a b", "a/b", "a\nb", "ü", strings.Repeat("a", MaxName+1), "a\x00"}},
		{Codename, "codename", []string{"bookworm", "k8s_1.36"}, []string{"", "a b", "a\tb", "../x"}},
		{Component, "component", []string{"main", "updates/main", "non-free", "release", "by-hash", "binary-tools", "main/Release", "x/contents-a"},
			[]string{"", "/main", "main/", "a//b", "a b", "../main", strings.Repeat("m", MaxName+1),
				"Release", "InRelease/x", "Release.gpg", "updeb-suite.json", "updeb-keys.gpg", "updeb-by-hash-kept",
				"main/Contents-amd64.gz", "main/binary-amd64", "main/by-hash", "main/x/binary-all"}},
		{Architecture, "architecture", []string{"amd64", "arm64", "all", "x32"}, []string{"", "AMD64", "amd 64", "-amd64", "amd64\n", "any"}},
		{IndexArchitecture, "architecture", []string{"amd64", "ppc64el"}, []string{"all", "", "Arm64"}},
	} {
		for _, s := range c.good {
			if err := c.check(s); err != nil {
				t.Errorf("%s %q refused: %v", c.what, s, err)
			}
		}
		for _, s := range c.bad {
			err := c.check(s)
			if err == nil {
				t.Errorf("%s %q accepted", c.what, s)
			} else if !strings.HasPrefix(err.Error(), c.what) {
				t.Errorf("%s %q: message %q does not name what it checks", c.what, s, err)
			}
		}
	}
}

func TestField(t *testing.T) {
	for _, v := range []string{"", "updeb demo", "Example Corp. — Kubernetes packages", "a:b"} {
		if err := Field("Origin", v); err != nil {
			t.Errorf("Origin %q refused: %v", v, err)
		}
	}
	for _, v := range []string{"a\nSuite: evil", "a\rb", "tab\there", " lead", "trail ", "\x7f", "bad \xff utf8", "zero\u200bwidth",
		strings.Repeat("x", MaxField+1)} {
		err := Field("Label", v)
		if err == nil {
			t.Errorf("Label %q accepted", v)
		} else if !strings.HasPrefix(err.Error(), "Label") {
			t.Errorf("Label %q: message %q does not name the field", v, err)
		}
	}
}
