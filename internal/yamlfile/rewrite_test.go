package yamlfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
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

// TestVerifyCRLF: a file written with CRLF line endings is verified as
// its LF twin is: a comment line added above a changed key (bump's mark
// above a source's pins) is that key's, not a changed comment of the key
// before it; a changed comment elsewhere is still refused.
func TestVerifyCRLF(t *testing.T) {
	orig := strings.ReplaceAll("sources:\n  - name: a\n    url: u # where\n    sha256:\n      amd64: aa\n    sig: x\n", "\n", "\r\n")
	pin := []Change{{[]string{"sources", "0", "sha256", "amd64"}, "bb"}}
	marked := strings.NewReplacer("    sha256:", "    # mark\r\n    sha256:", "aa", "bb").Replace(orig)
	if err := Verify("f", []byte(orig), []byte(marked), pin); err != nil {
		t.Fatalf("a mark above the changed pins refused: %v", err)
	}
	other := strings.NewReplacer("# where", "# elsewhere", "aa", "bb").Replace(orig)
	if err := Verify("f", []byte(orig), []byte(other), pin); !errors.Is(err, ErrNotRewritten) || !strings.Contains(err.Error(), "comment changed") {
		t.Errorf("a changed comment: %v", err)
	}
	for data, want := range map[string]string{"a: 1\r\nb: 2\n": "\r\n", "a: 1\nb: 2\r\n": "\n", "a: 1": "\n", "a: 1\rb: 2\r\n": "\r\n"} {
		if got := LineBreak([]byte(data)); got != want {
			t.Errorf("LineBreak(%q) = %q, want %q", data, got, want)
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
	if err := Rewrite(t.Context(), p, []byte("version: 0.9\n"), updated, check, 0); !errors.Is(err, ErrNotRewritten) {
		t.Errorf("a file changed since it was read: %v", err)
	}
	if err := Rewrite(t.Context(), p, orig, []byte("version: 3.0\n"), check, 0); !errors.Is(err, ErrNotRewritten) {
		t.Errorf("a text the check refuses: %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != string(orig) {
		t.Fatalf("the file changed: %q", b)
	}
	if err := Rewrite(t.Context(), p, orig, updated, check, 0); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(p)
	if b, _ := os.ReadFile(p); string(b) != string(updated) || fi.Mode().Perm() != 0o640 {
		t.Errorf("rewritten to %q, mode %v", b, fi.Mode())
	}
	if err := Create(t.Context(), p, updated, nil, 0o644, nil); !errors.Is(err, ErrNotRewritten) {
		t.Errorf("Create over an existing file: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestRewriteSymlink: a file that is a symlink is refused, the link and the
// file it points to left as they were (the rename would have replaced the
// link by a file, leaving the file it points to unchanged), and so is a file
// swapped for a symlink while it was being rewritten.
func TestRewriteSymlink(t *testing.T) {
	dir := t.TempDir()
	real, link := filepath.Join(dir, "real.yaml"), filepath.Join(dir, "f.yaml")
	orig, updated := []byte("version: 1.0\n"), []byte("version: 2.0\n")
	os.WriteFile(real, orig, 0o644)
	os.Symlink("real.yaml", link)
	check := func(b []byte) error { return Verify(link, orig, b, []Change{{[]string{"version"}, "2.0"}}) }
	err := Rewrite(t.Context(), link, orig, updated, check, 0)
	if !errors.Is(err, ErrNotRewritten) || !strings.Contains(err.Error(), "is a symlink (to real.yaml)") {
		t.Errorf("a symlink: %v", err)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&fs.ModeSymlink == 0 {
		t.Error("the link was replaced")
	}
	if b, _ := os.ReadFile(real); string(b) != string(orig) {
		t.Errorf("the file it points to changed: %q", b)
	}
	// swapped while the text was checked
	os.Remove(link)
	os.WriteFile(link, orig, 0o644)
	swap := func(b []byte) error {
		os.Remove(link)
		os.Symlink("real.yaml", link)
		return check(b)
	}
	if err := Rewrite(t.Context(), link, orig, updated, swap, 0); !errors.Is(err, ErrNotRewritten) {
		t.Errorf("swapped for a symlink: %v", err)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&fs.ModeSymlink == 0 {
		t.Error("the link swapped in was replaced")
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

// TestRewriteTwoAtOnce: two rewrites of one file from the same original (a
// bump and a plan --apply of one recipe), or two creations of one file,
// start together; one wins, the other is refused (ErrNotRewritten).
// Neither may report a change that the other's rename then replaced. Each
// check waits a moment for the other to reach its own: the folder's lock
// keeps them apart (a write holds it while its temporary file exists).
func TestRewriteTwoAtOnce(t *testing.T) {
	dir := t.TempDir()
	orig := []byte("version: 1.0\n")
	for round := range 40 {
		p := filepath.Join(dir, fmt.Sprintf("%d.yaml", round))
		create := round%2 == 1
		if !create {
			os.WriteFile(p, orig, 0o644)
		}
		var arrived sync.WaitGroup
		arrived.Add(2)
		check := func([]byte) error {
			arrived.Done()
			both := make(chan struct{})
			go func() { arrived.Wait(); close(both) }()
			select {
			case <-both: // both texts written and read back
			case <-time.After(20 * time.Millisecond):
			}
			return nil
		}
		errs := make([]error, 2)
		var done sync.WaitGroup
		for i := range 2 {
			done.Go(func() {
				updated := fmt.Appendf(nil, "version: %d.0\n", i+2)
				if create {
					errs[i] = Create(t.Context(), p, updated, check, 0o644, nil)
				} else {
					errs[i] = Rewrite(t.Context(), p, orig, updated, check, 0)
				}
			})
		}
		done.Wait()
		won := slices.IndexFunc(errs, func(err error) bool { return err == nil })
		lost := 1 - won
		if won < 0 || !errors.Is(errs[lost], ErrNotRewritten) {
			t.Fatalf("round %d (create %v): %v", round, create, errs)
		}
		if b, _ := os.ReadFile(p); string(b) != fmt.Sprintf("version: %d.0\n", won+2) {
			t.Fatalf("round %d (create %v): the file holds %q, though writer %d was told it wrote its change and writer %d that it did not", round, create, b, won, lost)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestRewriteRemovesLeftovers: the temporary file a write killed before its
// rename left beside the file (kill -9 of a bump) is removed by the next
// write of that file; another file's stays.
func TestRewriteRemovesLeftovers(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.yaml")
	orig := []byte("version: 1.0\n")
	if err := os.WriteFile(p, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	killed := filepath.Join(dir, ".f.yaml.tmp-123456")
	other := filepath.Join(dir, ".g.yaml.tmp-123456")
	for _, f := range []string{killed, other} {
		if err := os.WriteFile(f, []byte("version: 9.0\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := Rewrite(t.Context(), p, orig, []byte("version: 2.0\n"), nil, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(killed); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the killed write's temporary file stays: %v", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("another file's temporary file: %v", err)
	}
	// Create (bump --new-minor's new recipe) too.
	n := filepath.Join(dir, "n.yaml")
	killed = filepath.Join(dir, ".n.yaml.tmp-77")
	if err := os.WriteFile(killed, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Create(t.Context(), n, orig, nil, 0o644, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(killed); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Create: the killed write's temporary file stays: %v", err)
	}
}

// TestRewriteKeepsOwner: a rewrite run as root (a bump in a user's
// checkout) keeps the file's owner, group and mode; it used to hand the
// file to root, which left a 0640 recipe unreadable to its user. Without
// root no other owner can be given, so the case needs root.
func TestRewriteKeepsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving a file to another user needs root")
	}
	path := filepath.Join(t.TempDir(), "r.yaml")
	original := []byte("version: 1.0.0\n")
	if err := os.WriteFile(path, original, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, 1000, 1001); err != nil {
		t.Fatal(err)
	}
	if err := Rewrite(t.Context(), path, original, []byte("version: 1.1.0\n"), nil, 0); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if st.Uid != 1000 || st.Gid != 1001 || fi.Mode().Perm() != 0o640 {
		t.Errorf("after the rewrite: owner %d:%d mode %v, want 1000:1001 -rw-r-----", st.Uid, st.Gid, fi.Mode().Perm())
	}
}

// TestSpliceHostileValues: a value from upstream (a tag name, a line of a
// checksum file) is written so that the file reads back as exactly that
// text, in any style the old value was in, block or flow, LF or CRLF: never
// as null, a boolean, a cut value or another key, and every other byte kept.
func TestSpliceHostileValues(t *testing.T) {
	values := []string{"", "null", "~", "true", "TRUE", "1.2.3", "a: b", "a #b", "#x", "-", "- x", "? x", ": x", "x:",
		"x\ny", "x\r\ny", "x\u2028y", "x\u0085y", "x\ty", "&a", "*a", "!x", "!!binary x", "|", ">", "'", `"`, `a\nb`, "{", "[", "x,y", "x]",
		"---", "...", "x\n---\nb: 1", " x", "x ", "%x", "@x", "`x", "\ufeffx", "\x00", strings.Repeat("9a: '\" ", 20000)}
	for _, layout := range []string{
		"# head\na: %s # line\nb: x # kept\n",
		"a: %s\r\nb: x\r\n",
		"b: x\na: {k: %s, z: 1} # flow\n",
		"a: %s", // no final line break
	} {
		for _, old := range []string{"1.0", "'1.0'", `"1.0"`} {
			orig := []byte(fmt.Sprintf(layout, old))
			d := &Decoder{}
			top := d.Document(orig, Options{})
			if err := d.Err(); err != nil {
				t.Fatal(err)
			}
			path, n := []string{"a"}, ValueOf(top, "a")
			if n.Kind == yaml.MappingNode {
				path, n = []string{"a", "k"}, ValueOf(n, "k")
			}
			for _, v := range values {
				out, err := Splice("f", orig, []Edit{{n, v}})
				if err == nil {
					err = Verify("f", orig, out, []Change{{path, v}})
				}
				if err != nil {
					t.Errorf("%q with %.30q: %v", orig, v, err)
					continue
				}
				var m map[string]any
				if err := yaml.Unmarshal(out, &m); err != nil {
					t.Errorf("%q with %.30q: %q: %v", orig, v, out, err)
					continue
				}
				got := m["a"]
				if len(path) == 2 {
					got = m["a"].(map[string]any)["k"]
				}
				if got != v {
					t.Errorf("%q with %.30q reads %#v: %.80q", orig, v, got, out)
				}
				// Lines inserted after a splice (pins, marks) are placed by
				// the old file's line numbers.
				if len(LineStarts(out)) != len(LineStarts(orig)) {
					t.Errorf("%q with %.30q: %.80q has %d lines, not %d", orig, v, out, len(LineStarts(out)), len(LineStarts(orig)))
				}
			}
		}
	}
}

// TestRefusalOfLongValueIsOneShortLine: a refusal quotes the value it is
// about, and a value may be most of a 1 MiB file (a description, or what a
// bad edit made of it): the message is clipped as findings are, still naming
// the file, the position and what to look at, not a line of megabytes.
func TestRefusalOfLongValueIsOneShortLine(t *testing.T) {
	long := strings.Repeat("x", 400<<10)
	orig := []byte("version: 1.0\ndescription: \"" + long + "\\t\"\n")
	d := &Decoder{}
	top := d.Document(orig, Options{})
	if err := d.Err(); err != nil {
		t.Fatal(err)
	}
	changed := []byte("version: 1.1\ndescription: \"" + long + "y\\t\"\n")
	_, spliceErr := Splice("r.yaml", orig, []Edit{{ValueOf(top, "description"), long}})
	for _, tc := range []struct {
		err  error
		want string
	}{
		{Verify("r.yaml", orig, changed, []Change{{[]string{"version"}, "1.1"}}), `r.yaml:2:14: not rewritten: the file would read differently from what was meant: the value at "description" changed`},
		{Verify("r.yaml", orig, orig, []Change{{[]string{"version"}, long}}), `r.yaml:1:10: not rewritten: the file would read differently from what was meant: version reads "1.0", not "xxx`},
		{spliceErr, `r.yaml:2:14: cannot rewrite "xxx`},
	} {
		if tc.err == nil || !strings.HasPrefix(tc.err.Error(), tc.want) || len(tc.err.Error()) > 4096 {
			t.Errorf("%d bytes: %.200s, want %s... in at most 4096 bytes", len(fmt.Sprint(tc.err)), tc.err, tc.want)
		}
	}
}
