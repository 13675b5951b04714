package compat

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// repoSets is the shape of the repository's release-sets.yaml: a comment
// header, one set per Kubernetes minor naming the versioned series by
// recipe and the others by version.
const repoSets = `# What ships together.
sets:
  - name: kubernetes135
    components:
      kubernetes: recipe:kubernetes-1.35
      cri-tools: recipe:cri-tools-1.35
      etcd: 3.6.14
      helm: 3.21.4
  # the newest minor
  - name: kubernetes136
    components:
      kubernetes: recipe:kubernetes-1.36
      # crictl follows the minor
      cri-tools: recipe:cri-tools-1.36
      etcd: 3.6.14
      helm: "3.21.4"
# trailing comment
`

func versions(extra ...string) map[string]string {
	v := map[string]string{"kubernetes-1.35": "1.35.9", "kubernetes-1.36": "1.36.5", "cri-tools-1.35": "1.35.0", "cri-tools-1.36": "1.36.0", "etcd": "3.6.14", "helm": "3.21.4"}
	for i := 0; i+1 < len(extra); i += 2 {
		v[extra[i]] = extra[i+1]
	}
	return v
}

func TestAddMinorKubernetes(t *testing.T) {
	nm := NewMinor{Component: "kubernetes", From: "kubernetes-1.36", To: "kubernetes-1.37", Minor: "1.37", Versions: versions("kubernetes-1.37", "1.37.1")}
	out, note, err := AddMinor("release-sets.yaml", []byte(repoSets), nm)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(repoSets, "# trailing comment\n", `  - name: kubernetes137
    components:
      kubernetes: recipe:kubernetes-1.37
      # crictl follows the minor
      cri-tools: recipe:cri-tools-1.36
      etcd: 3.6.14
      helm: "3.21.4"
# trailing comment
`, 1)
	if string(out) != want {
		t.Errorf("got:\n%s\nwant:\n%s", out, want)
	}
	if note != "release set kubernetes137 added for Kubernetes 1.37, copied from kubernetes136" {
		t.Errorf("note %q", note)
	}
	// Again: nothing to do.
	again, note, err := AddMinor("release-sets.yaml", out, nm)
	if err != nil || string(again) != string(out) || note != "release set kubernetes137 already covers Kubernetes 1.37" {
		t.Errorf("second run: %v %q\n%s", err, note, again)
	}
	// cri-tools 1.37 then extends the new set, and only it.
	cri := NewMinor{Component: "cri-tools", From: "cri-tools-1.36", To: "cri-tools-1.37", Minor: "1.37", Versions: versions("kubernetes-1.37", "1.37.1", "cri-tools-1.37", "1.37.0")}
	ext, note, err := AddMinor("release-sets.yaml", out, cri)
	if err != nil {
		t.Fatal(err)
	}
	if string(ext) != strings.Replace(string(out), "      cri-tools: recipe:cri-tools-1.36\n      etcd: 3.6.14\n      helm: \"3.21.4\"\n# trailing", "      cri-tools: recipe:cri-tools-1.37\n      etcd: 3.6.14\n      helm: \"3.21.4\"\n# trailing", 1) ||
		note != "release set kubernetes137 now names recipe:cri-tools-1.37" {
		t.Errorf("extended (%q):\n%s", note, ext)
	}
	if _, err := ParseReleaseSets("x", ext); err != nil {
		t.Error(err)
	}
	if same, note, _ := AddMinor("release-sets.yaml", ext, cri); string(same) != string(ext) || note != "release set kubernetes137 already names recipe:cri-tools-1.37" {
		t.Errorf("second cri-tools run: %q", note)
	}
}

// cri-tools' new minor before Kubernetes': no set yet; the Kubernetes
// minor's copy then names it at once.
func TestAddMinorSeriesFirst(t *testing.T) {
	v := versions("cri-tools-1.37", "1.37.0")
	out, note, err := AddMinor("s.yaml", []byte(repoSets), NewMinor{Component: "cri-tools", From: "cri-tools-1.36", To: "cri-tools-1.37", Minor: "1.37", Versions: v})
	if err != nil || string(out) != repoSets || !strings.Contains(note, "no release set for Kubernetes 1.37 yet") {
		t.Fatalf("%v %q", err, note)
	}
	v["kubernetes-1.37"] = "1.37.1"
	out, _, err = AddMinor("s.yaml", []byte(repoSets), NewMinor{Component: "kubernetes", From: "kubernetes-1.36", To: "kubernetes-1.37", Minor: "1.37", Versions: v})
	if err != nil || !strings.Contains(string(out), "kubernetes: recipe:kubernetes-1.37\n      # crictl follows the minor\n      cri-tools: recipe:cri-tools-1.37\n") {
		t.Errorf("%v\n%s", err, out)
	}
}

func TestAddMinorShapes(t *testing.T) {
	for _, tc := range []struct {
		name, sets, want, note string
		nm                     NewMinor
	}{
		{"written-out versions and a rolling upgrade",
			"sets:\n  - name: k8s-1.36\n    components:\n      kubernetes: 1.36.5\n      kubelet: {from: 1.35.9, to: 1.36.5}\n      kubectl: '1.36.5'\n      etcd: 3.6.14\n",
			"  - name: k8s-1.37\n    components:\n      kubernetes: 1.37.1\n      kubelet: {from: 1.35.9, to: 1.37.1}\n      kubectl: '1.37.1'\n      etcd: 3.6.14\n",
			"release set k8s-1.37 added for Kubernetes 1.37, copied from k8s-1.36",
			NewMinor{Component: "kubernetes", From: "kubernetes-1.36", To: "kubernetes-1.37", Minor: "1.37", Versions: versions("kubernetes-1.37", "1.37.1")}},
		{"recipe ranges move by the minor",
			"sets:\n  - name: prod\n    components:\n      kubernetes: {from: recipe:kubernetes-1.35, to: recipe:kubernetes-1.36}\n",
			"  - name: prod-1.37\n    components:\n      kubernetes: {from: recipe:kubernetes-1.36, to: recipe:kubernetes-1.37}\n",
			"release set prod-1.37 added for Kubernetes 1.37, copied from prod",
			NewMinor{Component: "kubernetes", From: "kubernetes-1.36", To: "kubernetes-1.37", Minor: "1.37", Versions: versions("kubernetes-1.37", "1.37.1")}},
		{"a flow set on one line, no newline at the end",
			"sets:\n  - {name: kubernetes136, components: {kubernetes: recipe:kubernetes-1.36}}",
			"\n  - {name: kubernetes137, components: {kubernetes: recipe:kubernetes-1.37}}\n",
			"release set kubernetes137 added for Kubernetes 1.37, copied from kubernetes136",
			NewMinor{Component: "kubernetes", From: "kubernetes-1.36", To: "kubernetes-1.37", Minor: "1.37", Versions: versions("kubernetes-1.37", "1.37.1")}},
		{"the derived name is taken",
			"sets:\n  - name: kubernetes137\n    components: {kubernetes: 1.36.5}\n  - name: kubernetes136\n    components: {kubernetes: recipe:kubernetes-1.36}\n",
			"  - name: kubernetes137-2\n    components: {kubernetes: recipe:kubernetes-1.37}\n",
			"release set kubernetes137-2 added for Kubernetes 1.37, copied from kubernetes136",
			NewMinor{Component: "kubernetes", From: "kubernetes-1.36", To: "kubernetes-1.37", Minor: "1.37", Versions: versions("kubernetes-1.37", "1.37.1")}},
		{"the copy goes after the last set",
			"sets:\n  - name: k136\n    components: {kubernetes: recipe:kubernetes-1.36}\n  - name: legacy\n    components: {kubernetes: 1.34.7}\n",
			"  - name: k137\n    components: {kubernetes: recipe:kubernetes-1.37}\n",
			"release set k137 added for Kubernetes 1.37, copied from k136",
			NewMinor{Component: "kubernetes", From: "kubernetes-1.36", To: "kubernetes-1.37", Minor: "1.37", Versions: versions("kubernetes-1.37", "1.37.1")}},
		{"no set of the old minor",
			"sets:\n  - name: old\n    components: {kubernetes: 1.34.2}\n",
			"",
			"no release set of kubernetes-1.36 (Kubernetes 1.36) to copy for Kubernetes 1.37: add one by hand",
			NewMinor{Component: "kubernetes", From: "kubernetes-1.36", To: "kubernetes-1.37", Minor: "1.37", Versions: versions("kubernetes-1.37", "1.37.1")}},
		{"a series the sets do not name by minor",
			"sets:\n  - name: k136\n    components: {kubernetes: 1.36.5, containerd: recipe:containerd-2.3}\n",
			"",
			"the release sets do not name containerd recipes by Kubernetes minor: name recipe:containerd-2.4 in the sets that deploy it",
			NewMinor{Component: "containerd", From: "containerd-2.3", To: "containerd-2.4", Minor: "2.4", Versions: versions("containerd-2.3", "2.3.4", "containerd-2.4", "2.4.0")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, note, err := AddMinor("s.yaml", []byte(tc.sets), tc.nm)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.sets
			if tc.want != "" {
				want = tc.sets + tc.want
				if !strings.HasSuffix(tc.sets, "\n") {
					want = tc.sets + tc.want
				}
			}
			if string(out) != want || note != tc.note {
				t.Errorf("got (%q):\n%s\nwant (%q):\n%s", note, out, tc.note, want)
			}
			if _, err := ParseReleaseSets("s.yaml", out); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestAddMinorRefused(t *testing.T) {
	nm := NewMinor{Component: "kubernetes", From: "kubernetes-1.36", To: "kubernetes-1.37", Minor: "1.37", Versions: versions("kubernetes-1.37", "1.37.1")}
	for _, tc := range []struct{ name, sets, want string }{
		{"a flow set over lines", "sets:\n  - {name: k136,\n     components: {kubernetes: recipe:kubernetes-1.36}}\n", "s.yaml:2:5: write this release set in block style"},
		{"not a release set file", "sets: 3\n", `"sets" must be a non-empty list`},
		{"a bad minor", "sets:\n  - name: k136\n    components: {kubernetes: recipe:kubernetes-1.36}\n", `new minor "1" is not MAJOR.MINOR`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := nm
			if tc.name == "a bad minor" {
				n.Minor = "1"
			}
			_, _, err := AddMinor("s.yaml", []byte(tc.sets), n)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// UpdateFile writes only a change that parses, atomically, with the file's
// permissions; FollowBump and FollowNewMinor go through it.
func TestUpdateFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "release-sets.yaml")
	if err := os.WriteFile(path, []byte(repoSets), 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := FollowBump(t.Context(), filepath.Join(t.TempDir(), "absent.yaml"), "etcd", "3.6.14", "3.6.15"); !IsNotExist(err) {
		t.Errorf("absent file: %v", err)
	}
	n, err := FollowBump(t.Context(), path, "etcd", "3.6.14", "3.6.15")
	if err != nil || n != 2 {
		t.Fatalf("follow bump: %d %v", n, err)
	}
	got, _ := os.ReadFile(path)
	if string(got) != strings.ReplaceAll(repoSets, "etcd: 3.6.14", "etcd: 3.6.15") {
		t.Errorf("after the bump:\n%s", got)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
	if n, err := FollowBump(t.Context(), path, "etcd", "3.6.14", "3.6.15"); err != nil || n != 0 {
		t.Errorf("second bump: %d %v", n, err)
	}
	note, err := FollowNewMinor(t.Context(), path, NewMinor{Component: "kubernetes", From: "kubernetes-1.36", To: "kubernetes-1.37", Minor: "1.37", Versions: versions("kubernetes-1.37", "1.37.1")})
	if err != nil || !strings.Contains(note, "kubernetes137 added") {
		t.Errorf("new minor: %q %v", note, err)
	}
	before, _ := os.ReadFile(path)
	changed, err := UpdateFile(t.Context(), path, func(b []byte) ([]byte, error) { return append(b, "  - name: broken\n"...), nil })
	if changed || err == nil || !strings.Contains(err.Error(), "after the change (not written)") {
		t.Errorf("a broken change: %v %v", changed, err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("a refused change was written")
	}
}

// TestUpdateFileTwoAtOnce: two bumps at once (of etcd and of helm, a bump
// and a plan --apply) both have the release set file follow: when the other
// one's change lands between this one's read and its rewrite, this one's
// change is made again on the file as it is now, and both stay, rather
// than this bump failing after all its downloads.
func TestUpdateFileTwoAtOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "release-sets.yaml")
	if err := os.WriteFile(path, []byte(repoSets), 0o644); err != nil {
		t.Fatal(err)
	}
	calls := 0
	changed, err := UpdateFile(t.Context(), path, func(data []byte) ([]byte, error) {
		if calls++; calls == 1 { // the other bump writes its change now
			other, _, err := SyncBump(path, data, "helm", "3.21.4", "3.21.5")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, other, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		out, _, err := SyncBump(path, data, "etcd", "3.6.14", "3.6.15")
		return out, err
	})
	if !changed || err != nil || calls != 2 {
		t.Fatalf("changed %v, %d edits: %v", changed, calls, err)
	}
	want := strings.NewReplacer("etcd: 3.6.14", "etcd: 3.6.15", "helm: 3.21.4", "helm: 3.21.5", `helm: "3.21.4"`, `helm: "3.21.5"`).Replace(repoSets)
	if got, _ := os.ReadFile(path); string(got) != want {
		t.Errorf("after both bumps:\n%s\nwant:\n%s", got, want)
	}
}

// FuzzAddMinor: whatever the release set file holds, AddMinor does not
// panic, and what it returns parses as a release set file and keeps every
// set the input had.
func FuzzAddMinor(f *testing.F) {
	f.Add([]byte(repoSets), "kubernetes", "1.37")
	f.Add([]byte("sets:\n  - {name: kubernetes136, components: {kubernetes: recipe:kubernetes-1.36}}"), "kubernetes", "1.37")
	f.Add([]byte("sets:\n  - name: k\n    components: {kubernetes: {from: recipe:kubernetes-1.35, to: recipe:kubernetes-1.36}, cri-tools: recipe:cri-tools-1.36}\n"), "cri-tools", "1.37")
	f.Fuzz(func(t *testing.T, data []byte, component, minor string) {
		if len(data) > 1<<16 {
			return
		}
		nm := NewMinor{Component: component, From: component + "-1.36", To: component + "-" + minor, Minor: minor,
			Versions: versions(component+"-1.36", "1.36.5", component+"-"+minor, minor+".1")}
		out, _, err := AddMinor("f.yaml", data, nm)
		if err != nil {
			return
		}
		after, err := ParseReleaseSets("f.yaml", out)
		if err != nil {
			t.Fatalf("AddMinor wrote a file that does not parse: %v\n%s", err, out)
		}
		before, _ := ParseReleaseSets("f.yaml", data)
		if len(after) < len(before) {
			t.Fatalf("AddMinor lost sets:\n%s", out)
		}
	})
}

// A release set file with line breaks YAML counts and "\n" does not (a
// lone CR, LS, NEL in a comment), or written with CRLF and no final line
// break, gets its new set copied line for line as YAML reads the lines,
// ending as the file's lines do.
func TestAddMinorLineBreaks(t *testing.T) {
	nm := NewMinor{Component: "kubernetes", From: "kubernetes-1.36", To: "kubernetes-1.37", Minor: "1.37", Versions: versions("kubernetes-1.37", "1.37.1")}
	newSet := "  - name: kubernetes137\n    components:\n      kubernetes: recipe:kubernetes-1.37\n      # crictl follows the minor\n      cri-tools: recipe:cri-tools-1.36\n      etcd: 3.6.14\n      helm: \"3.21.4\"\n"
	for name, lb := range map[string]string{"CR": "\r", "LS": "\u2028", "NEL": "\u0085"} {
		in := strings.Replace(repoSets, "# What ships together.\n", "# What"+lb+"# ships together.\n", 1)
		out, _, err := AddMinor("s.yaml", []byte(in), nm)
		if want := strings.Replace(in, "# trailing comment\n", newSet+"# trailing comment\n", 1); err != nil || string(out) != want {
			t.Errorf("%s: %v\n%q\nwant\n%q", name, err, out, want)
		}
	}
	crlf := strings.ReplaceAll(strings.TrimSuffix(strings.Replace(repoSets, "# trailing comment\n", "", 1), "\n"), "\n", "\r\n")
	out, _, err := AddMinor("s.yaml", []byte(crlf), nm)
	if want := crlf + "\r\n" + strings.ReplaceAll(newSet, "\n", "\r\n"); err != nil || string(out) != want {
		t.Errorf("CRLF: %v\n%q\nwant\n%q", err, out, want)
	}
}

// TestAddMinorCommentEndingLastSet: a component commented out at the end of
// the last set (the comment indented into it) is refused naming its line
// and what to do: YAML reads that comment as another node's once a set
// follows it. It was refused as "a comment changed at
// sets.0.components", which said neither.
func TestAddMinorCommentEndingLastSet(t *testing.T) {
	src := "sets:\n  - name: k136\n    components:\n      kubernetes: recipe:kubernetes-1.36\n      etcd: 3.6.14\n      # istioctl: 1.31.0 once it supports 1.36\n"
	nm := NewMinor{Component: "kubernetes", From: "kubernetes-1.36", To: "kubernetes-1.37", Minor: "1.37", Versions: versions("kubernetes-1.37", "1.37.1")}
	_, _, err := AddMinor("s.yaml", []byte(src), nm)
	if err == nil || !strings.HasPrefix(err.Error(), "s.yaml:6: ") || !strings.Contains(err.Error(), "move it above a value of the set") {
		t.Errorf("a comment ending the last set: %v", err)
	}
	// Above a value, the same comment stays with its set, and the copy
	// keeps it.
	above := strings.Replace(src, "      etcd: 3.6.14\n      # istioctl: 1.31.0 once it supports 1.36\n", "      # istioctl: 1.31.0 once it supports 1.36\n      etcd: 3.6.14\n", 1)
	out, _, err := AddMinor("s.yaml", []byte(above), nm)
	if err != nil || strings.Count(string(out), "# istioctl") != 2 {
		t.Errorf("the comment above a value: %v\n%s", err, out)
	}
}
