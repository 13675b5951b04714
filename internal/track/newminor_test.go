package track

import (
	"context"
	"errors"

	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/updeb/updeb/internal/fetch"

	"github.com/updeb/updeb/internal/recipe"
)

// kubeSrc is a recipe whose names are written out (not templated).
const kubeSrc = `# kube 1.36: from v1.36.0 (see CHANGELOG-1.36.md); works with kubectl 1.35 to 1.37.
name: kube-1.36
version: 1.36.0
release-date: 2026-04-22
license: Apache-2.0
copyright: test
maintainer: Test <test@example.org>
architectures: [amd64]
repo: {component: kubernetes136, suite: stable}
sources:
  - name: bin
    url: https://dl.example.org/v{{.Version}}/kube-{{.Arch}}
    sha256: 1360000000000000000000000000000000000000000000000000000000001136
    signature: {none: "fixture; pinned from the v1.36.0 notes"}
packages:
  - name: kubernetes-client136
    summary: client 1.36 (iptables 1.8, libc 2.36)
    description: test
    section: admin
    depends: [iptables (>= 1.8.7)]
    files:
      - {source: bin, dest: /usr/bin/kubectl-1.36}
      - {file: kube.conf, dest: /etc/kube-1.36.conf}
watch: {github: demo/kube, tag-prefix: v, track: "1.36.x"}
requires: {etcd: ">=3.5", kubernetes: ">=1.33 <1.37"}
`

// kubeProject writes text as recipes/kube-1.36.yaml, with its own folder
// (kube.conf), in a new project, and loads it.
func kubeProject(t *testing.T, text string) *recipe.Recipe {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "recipes", "kube-1.36"), 0o755)
	os.WriteFile(filepath.Join(dir, "recipes", "kube-1.36", "kube.conf"), []byte("x\n"), 0o644)
	path := filepath.Join(dir, "recipes", "kube-1.36.yaml")
	os.WriteFile(path, []byte(text), 0o644)
	r, err := recipe.Load(path, recipe.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestDeriveMinor: the text of a recipe whose names are written out (not
// templated): every name, range and comment that names the minor moves, the
// values bump sets and the digests (whatever digits they hold) stay, numbers
// of other things stay, and the recipe's own folder becomes a shared files-dir.
func TestDeriveMinor(t *testing.T) {
	src := kubeSrc
	r := kubeProject(t, src)
	got, err := deriveMinor(r, []byte(src), "1.37", "1.37.2")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.NewReplacer(
		"# kube 1.36: from v1.36.0 (see CHANGELOG-1.36.md); works with kubectl 1.35 to 1.37.",
		"# kube 1.37: from v1.37.2 (see CHANGELOG-1.37.md); works with kubectl 1.36 to 1.38.",
		"name: kube-1.36\n", "name: kube-1.37\nfiles-dir: kube-1.36\n",
		"component: kubernetes136", "component: kubernetes137",
		"from the v1.36.0 notes", "from the v1.37.2 notes",
		"name: kubernetes-client136", "name: kubernetes-client137",
		"client 1.36 (iptables 1.8, libc 2.36)", "client 1.37 (iptables 1.8, libc 2.36)",
		"kubectl-1.36}", "kubectl-1.37}", "/etc/kube-1.36.conf", "/etc/kube-1.37.conf",
		`track: "1.36.x"`, `track: "1.37.x"`, `">=1.33 <1.37"`, `">=1.34 <1.38"`,
	).Replace(src)
	if string(got) != want {
		t.Errorf("derived:\n%s\nwant:\n%s", got, want)
	}
	// Without the new version yet, the old one moves by the minor only.
	first, _ := deriveMinor(r, []byte(src), "1.37", "")
	if !strings.Contains(string(first), "from v1.37.0 (see") || !strings.Contains(string(first), "version: 1.36.0\n") {
		t.Errorf("first pass:\n%s", first)
	}
	// The derived recipe loads with the old recipe's folder.
	next, err := loadBytes(filepath.Join(filepath.Dir(r.Path), "kube-1.37.yaml"), r.Root, got)
	if err != nil {
		t.Fatal(err)
	}
	if next.FilesDir != r.FilesDir || next.Name != "kube-1.37" || next.Watch.Track != "1.37.x" {
		t.Errorf("loaded: files-dir %s (want %s), name %s, track %s", next.FilesDir, r.FilesDir, next.Name, next.Watch.Track)
	}
	for _, tc := range []struct{ minor, want string }{
		{"2.0", "changes the major version"},
	} {
		if _, err := deriveMinor(r, []byte(src), tc.minor, ""); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("deriveMinor %s: %v", tc.minor, err)
		}
	}
	// 1.037 is no file name for the recipe of 1.37 (it would hold kube-1.37).
	if p, err := NewMinorPath(r, "1.037"); !errors.Is(err, recipe.ErrInvalid) {
		t.Errorf("NewMinorPath 1.037: %s, %v; want it refused", p, err)
	}
}

// A recipe not of a series moves to a new minor in place: its watch track
// moves, the Bump flow writes the minor's newest complete release into its
// own file, and every other byte stays.
func TestNewMinorInPlace(t *testing.T) {
	u, file := scenario(t)
	before := strings.Replace(readString(t, file), `track: "1.x"`, `track: "1.2.x"`, 1)
	os.WriteFile(file, []byte(before), 0o644)
	o := testOptions(t, u, fetch.Options{})
	res, err := NewMinor(context.Background(), load(t, file), "1.3", BumpOptions{Options: o})
	if err != nil {
		t.Fatal(err)
	}
	if res.From != "1.2.0" || res.To != "1.3.0" || res.File != file || res.ReleaseDate != "2026-05-02" {
		t.Errorf("result %+v", res)
	}
	after := readString(t, file)
	r := load(t, file)
	if r.Version != "1.3.0" || r.Watch.Track != "1.3.x" || !strings.Contains(after, "# Comments and layout must survive a bump.\n") ||
		!strings.Contains(after, `watch: {github: demo/hello, tag-prefix: v, track: "1.3.x"}`) {
		t.Errorf("after:\n%s", after)
	}
	for _, tc := range []struct {
		minor, want string
	}{
		{"1.3", "is not newer than hello 1.3.0"},
		{"2.0", "changes the major version"},
		{"1.9", "no complete 1.9.x release"},
		{"1.04", `--new-minor "1.04": want MAJOR.MINOR, as 1.37 (no leading zeros)`},
		{"1.99999999999", `--new-minor "1.99999999999": want MAJOR.MINOR`},
	} {
		if _, err := NewMinor(context.Background(), load(t, file), tc.minor, BumpOptions{Options: o}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--new-minor %s: %v, want %q", tc.minor, err, tc.want)
		}
	}
	if readString(t, file) != after {
		t.Error("a refused move changed the recipe")
	}
}

func TestMovedTrack(t *testing.T) {
	for _, tc := range []struct{ version, track, minor, want, err string }{
		{"3.31.7", "3.31.x", "3.32", "3.32.x", ""},
		{"3.31.7", ">=3.30 <3.32", "3.33", ">=3.32 <3.34", ""},
		{"3.21.4", "3.x", "3.22", "3.x", ""},
		{"3.21.4", "", "3.22", "", ""},
		{"1.29.6", "1.29.x", "1.31", "1.31.x", ""},
		{"3.6.14", "1.2.x", "3.8", "", `does not allow 3.8.x even moved ("1.2.x")`},
	} {
		r := &recipe.Recipe{Name: "x", Version: tc.version, Watch: &recipe.Watch{GitHub: "o/x", Track: tc.track}}
		got, err := MovedTrack(r, tc.minor)
		if got != tc.want || (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s %q -> %s: %q %v, want %q %q", tc.version, tc.track, tc.minor, got, err, tc.want, tc.err)
		}
	}
}

// A new minor's recipe that is there already (a bump --new-minor killed
// before its release set followed, run again) is refused, saying how to
// complete the cut-short run.
func TestNewMinorRecipeExists(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubernetes-1.37.yaml")
	if err := os.WriteFile(path, []byte("name: kubernetes-1.37\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := absent(path)
	if !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), "updeb plan --apply --only kubernetes-1.37") {
		t.Errorf("an existing recipe: %v", err)
	}
	if err := absent(filepath.Join(filepath.Dir(path), "kubernetes-1.38.yaml")); err != nil {
		t.Errorf("an absent recipe: %v", err)
	}
}

// TestDeriveMinorLineBreaks: a recipe with line breaks YAML counts and
// "\n" does not (a lone CR, NEL, LS in a comment) derives as its "\n" twin
// does: the version stays for bump to set, and files-dir goes right after
// name. A CRLF recipe's files-dir line ends in CRLF.
func TestDeriveMinorLineBreaks(t *testing.T) {
	derive := func(text string) string {
		t.Helper()
		got, err := deriveMinor(kubeProject(t, text), []byte(text), "1.37", "")
		if err != nil {
			t.Fatal(err)
		}
		return string(got)
	}
	lf := derive(kubeSrc)
	if !strings.Contains(lf, "name: kube-1.37\nfiles-dir: kube-1.36\nversion: 1.36.0\n") {
		t.Fatalf("derived:\n%s", lf)
	}
	for name, lb := range map[string]string{"CR": "\r", "NEL": "\u0085", "LS": "\u2028"} {
		in := strings.Replace(kubeSrc, "; works", lb+"# works", 1)
		if got, want := derive(in), strings.Replace(lf, "; works", lb+"# works", 1); got != want {
			t.Errorf("%s: derived:\n%s\nwant:\n%s", name, got, want)
		}
	}
	if got, want := derive(strings.ReplaceAll(kubeSrc, "\n", "\r\n")), strings.ReplaceAll(lf, "\n", "\r\n"); got != want {
		t.Errorf("CRLF: derived:\n%q\nwant:\n%q", got, want)
	}
}

// TestDeriveMinorDropsEndOfLife: the new minor of a recipe marked
// end-of-life (plan --apply retired the old minor while the add waited for
// upstream) is not born end-of-life: the mark, in any of its forms, stays
// with the old minor, and every other line derives as before.
func TestDeriveMinorDropsEndOfLife(t *testing.T) {
	want, err := deriveMinor(kubeProject(t, kubeSrc), []byte(kubeSrc), "1.37", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, mark := range []string{"end-of-life: 2026-11-20\n", "end-of-life: 2026-11-20   # retired by updeb plan --apply\n", "end-of-life:\n  2026-11-20\n", "# retired by updeb plan --apply\nend-of-life: 2026-11-20\n"} {
		for _, brk := range []string{"\n", "\r\n"} {
			src := strings.ReplaceAll(strings.Replace(kubeSrc, "release-date: 2026-04-22\n", "release-date: 2026-04-22\n"+mark, 1), "\n", brk)
			got, err := deriveMinor(kubeProject(t, src), []byte(src), "1.37", "")
			if err != nil {
				t.Fatal(err)
			}
			if w := strings.ReplaceAll(string(want), "\n", brk); string(got) != w {
				t.Errorf("marked %q (%q): derived:\n%s\nwant:\n%s", mark, brk, got, w)
			}
		}
	}
	// A recipe written as one flow mapping keeps its lines: the mark's is
	// every key's.
	flow := "{name: kube-1.36, version: 1.36.0, end-of-life: 2026-11-20}\n"
	if got := dropKeyLines("kube-1.36.yaml", []byte(flow), "end-of-life"); string(got) != flow {
		t.Errorf("a flow mapping: %q", got)
	}
}

// TestNewMinorInPlaceDropsEndOfLife: a recipe not of a series, marked
// end-of-life ("no newer supported release to move it to"), that moves to a
// newer minor once one is out loses the old minor's mark (with its comment):
// else the supported release would read as end-of-life, and every release
// set that deploys it as a violation. Every other byte stays.
func TestNewMinorInPlaceDropsEndOfLife(t *testing.T) {
	u, file := scenario(t)
	plain := strings.Replace(readString(t, file), `track: "1.x"`, `track: "1.2.x"`, 1)
	marked := strings.Replace(plain, "release-date: 2026-03-14\n", "release-date: 2026-03-14\n# retired by updeb plan --apply\nend-of-life: 2026-10-27\n", 1)
	o := testOptions(t, u, fetch.Options{})
	move := func(text string) string {
		t.Helper()
		os.WriteFile(file, []byte(text), 0o644)
		if _, err := NewMinor(context.Background(), load(t, file), "1.3", BumpOptions{Options: o}); err != nil {
			t.Fatal(err)
		}
		return readString(t, file)
	}
	for _, brk := range []string{"\n", "\r\n"} {
		want := move(strings.ReplaceAll(plain, "\n", brk))
		if got := move(strings.ReplaceAll(marked, "\n", brk)); got != want {
			t.Errorf("moved from a marked recipe (%q):\n%s\nwant:\n%s", brk, got, want)
		}
		if r := load(t, file); !r.EndOfLife.IsZero() {
			t.Errorf("end-of-life %v after the move", r.EndOfLife)
		}
	}
}

// TestNewMinorKeepsOwner: the new minor's recipe, written by a bump run as
// root in a user's checkout, belongs to the user who owns the old one, with
// its mode, as a recipe rewritten in place does; it used to be root's, which
// the user could not edit (nor, at 0640, read).
func TestNewMinorKeepsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving a file to another user needs root")
	}
	u, file := scenario(t)
	text := strings.Replace(strings.Replace(readString(t, file), "name: hello\n", "name: hello-1.2\n", 1), `track: "1.x"`, `track: "1.2.x"`, 1)
	old := filepath.Join(filepath.Dir(file), "hello-1.2.yaml")
	os.Remove(file)
	if err := os.WriteFile(old, []byte(text), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(old, 1000, 1001); err != nil {
		t.Fatal(err)
	}
	o := testOptions(t, u, fetch.Options{})
	res, err := NewMinor(context.Background(), load(t, old), "1.3", BumpOptions{Options: o})
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(res.File)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if res.File != filepath.Join(filepath.Dir(old), "hello-1.3.yaml") || st.Uid != 1000 || st.Gid != 1001 || fi.Mode().Perm() != 0o640 {
		t.Errorf("%s: owner %d:%d mode %v, want 1000:1001 -rw-r-----", res.File, st.Uid, st.Gid, fi.Mode().Perm())
	}
}
