package yamlfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// lineBreaks are every line break yaml.v3 counts.
var lineBreaks = []string{"\n", "\r\n", "\r", "\u0085", "\u2028", "\u2029"}

// checkPositions finds every plain scalar of data by its node's line and
// column (LineStarts) and fails unless its text is there.
func checkPositions(t *testing.T, data []byte) {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil {
		return
	}
	starts := LineStarts(data)
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.ScalarNode && n.Style == 0 && n.Value != "" && !strings.ContainsAny(n.Value, " \t") && utf8.ValidString(n.Value) {
			if n.Line > len(starts) {
				t.Fatalf("%q: node %q at line %d, only %d lines", data, n.Value, n.Line, len(starts))
			}
			off := starts[n.Line-1]
			for col := 1; col < n.Column && off < len(data); col++ {
				_, size := utf8.DecodeRune(data[off:])
				off += size
			}
			if !strings.HasPrefix(string(data[off:]), n.Value) && !strings.HasPrefix(string(data[off:]), "!") { // a node with a tag starts at it
				t.Fatalf("%q: node %q (%d:%d) is not at offset %d", data, n.Value, n.Line, n.Column, off)
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(&doc)
}

func TestLineStartsAsYAMLCounts(t *testing.T) {
	for _, lb := range lineBreaks {
		for _, doc := range []string{
			"# comment" + lb + "version: 1.2.0" + lb + "date: x" + lb,
			"\ufeffa: 1" + lb + "b: 2" + lb,
			"a: 1 # c" + lb + "b: [x, y]" + lb + "c:" + lb + "  - d" + lb,
			"a: \"q\"" + lb + lb + "b: 'é'" + lb + "c: é" + lb,
		} {
			checkPositions(t, []byte(doc))
		}
	}
}

func FuzzLineStarts(f *testing.F) {
	for _, lb := range lineBreaks {
		f.Add("# c" + lb + "a: 1" + lb + "b: x")
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 4096 {
			return
		}
		checkPositions(t, []byte(s))
	})
}

func TestVerify(t *testing.T) {
	orig := "# head\nversion: 1.0 # in use\ndate: 2020-01-01\nsources:\n  - name: a # first\n    sha256: {amd64: aa}\n"
	ok := []Change{{[]string{"version"}, "2.0"}, {[]string{"date"}, "2021-01-01"}}
	good := strings.NewReplacer("1.0", "2.0", "2020-01-01", "2021-01-01").Replace(orig)
	if err := Verify("f", []byte(orig), []byte(good), ok); err != nil {
		t.Fatalf("a faithful rewrite refused: %v", err)
	}
	added := strings.Replace(orig, "    sha256: {amd64: aa}\n", "    sha256: {amd64: aa}\n    sha512:\n      amd64: bb\n", 1)
	if err := Verify("f", []byte(orig), []byte(added), []Change{{[]string{"sources", "0", "sha512", "amd64"}, "bb"}}); err != nil {
		t.Fatalf("added pins refused: %v", err)
	}
	for name, tc := range map[string]struct {
		updated string
		want    string
	}{
		"value landed in a comment": {strings.Replace(orig, "# head", "# head 2.0 2021-01-01", 1), "reads \"1.0\", not \"2.0\""},
		"another value changed":     {strings.NewReplacer("1.0", "2.0", "2020-01-01", "2021-01-01", "name: a", "name: b").Replace(orig), "changed"},
		"a comment changed":         {strings.NewReplacer("1.0", "2.0", "2020-01-01", "2021-01-01", "# first", "# second").Replace(orig), "comment changed"},
		"a key added":               {good + "extra: 1\n", "unexpected new key \"extra\""},
		"a key gone":                {strings.Replace(good, "sources:\n  - name: a # first\n    sha256: {amd64: aa}\n", "", 1), "\"sources\" is gone"},
		"a value only one of two":   {strings.Replace(orig, "1.0", "2.0", 1), "reads \"2020-01-01\", not \"2021-01-01\""},
		"a new line break":          {strings.Replace(good, "# in use\n", "# in use\u2028x: 1\n", 1), "unexpected new key \"x\""},
		"not YAML any more":         {good + "\t- [\n", "does not parse"},
	} {
		err := Verify("f", []byte(orig), []byte(tc.updated), ok)
		if !errors.Is(err, ErrNotRewritten) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrNotRewritten with %q", name, err, tc.want)
		}
	}
}

// TestRewrite: written only when the check accepts the text read back and
// the file still holds what was read; else untouched, nothing left beside it.
func TestRewrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.yaml")
	orig := []byte("version: 1.0\n")
	os.WriteFile(p, orig, 0o640)
	updated := []byte("version: 2.0\n")
	check := func(b []byte) error { return Verify(p, orig, b, []Change{{[]string{"version"}, "2.0"}}) }
	if err := Rewrite(p, []byte("version: 0.9\n"), updated, check, 0); !errors.Is(err, ErrNotRewritten) {
		t.Errorf("a file changed since it was read: %v", err)
	}
	if err := Rewrite(p, orig, []byte("version: 3.0\n"), check, 0); !errors.Is(err, ErrNotRewritten) {
		t.Errorf("a text the check refuses: %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != string(orig) {
		t.Fatalf("the file changed: %q", b)
	}
	if err := Rewrite(p, orig, updated, check, 0); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(p)
	if b, _ := os.ReadFile(p); string(b) != string(updated) || fi.Mode().Perm() != 0o640 {
		t.Errorf("rewritten to %q, mode %v", b, fi.Mode())
	}
	if err := Create(p, updated, nil, 0o644); !errors.Is(err, ErrNotRewritten) {
		t.Errorf("Create over an existing file: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

// A list may gain an entry at its end that holds only changes (a release
// set added by bump --new-minor), and nothing else: not in the middle, not
// with a value that is no change, and none may go.
func TestVerifyNewListEntry(t *testing.T) {
	orig := "sets:\n  - name: a\n    components: {k: 1}\n"
	added := orig + "  - name: b # new\n    components: {k: 2, r: {from: 1, to: 2}}\n"
	changes := []Change{{[]string{"sets", "1", "name"}, "b"}, {[]string{"sets", "1", "components", "k"}, "2"},
		{[]string{"sets", "1", "components", "r", "from"}, "1"}, {[]string{"sets", "1", "components", "r", "to"}, "2"}}
	if err := Verify("f", []byte(orig), []byte(added), changes); err != nil {
		t.Fatalf("an appended entry refused: %v", err)
	}
	for name, tc := range map[string]struct {
		updated string
		changes []Change
		want    string
	}{
		"a value that is no change": {added, changes[:3], `an unexpected new key "to"`},
		"an entry nobody asked for": {added, nil, "a list at \"sets\" has 2 entries, not 1"},
		"an entry in the middle": {"sets:\n  - name: b\n    components: {k: 2}\n  - name: a\n    components: {k: 1}\n",
			[]Change{{[]string{"sets", "1", "name"}, "a"}, {[]string{"sets", "1", "components", "k"}, "1"}}, `"sets.0.name" changed`},
		"an entry gone": {"sets:\n  - name: a\n    components: {k: 1}\n", nil, ""},
	} {
		from := orig
		if name == "an entry gone" {
			from, tc.want = added, "a list at \"sets\" has 1 entries, not 2"
		}
		err := Verify("f", []byte(from), []byte(tc.updated), tc.changes)
		if !errors.Is(err, ErrNotRewritten) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrNotRewritten with %q", name, err, tc.want)
		}
	}
}
