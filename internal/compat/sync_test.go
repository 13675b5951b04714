package compat

import (
	"strings"
	"testing"
)

// TestSyncVersions: bump's rewrite of a release set file keeps every other
// byte (comments, quoting, recipe references) and only touches the versions
// of the matched components equal to the old version, range ends included.
func TestSyncVersions(t *testing.T) {
	src := `# clusters
sets:
  - name: a   # production
    components:
      kubernetes: 1.36.0     # the control plane
      kubelet: {from: 1.35.4, to: "1.36.0"}
      kubectl: 'v1.36.0'
      helm: 1.36.0
  - name: b
    components:
      kubernetes: recipe:kubernetes-1.36
      kube-proxy: 1.36.1
`
	isKube := func(c string) bool { return c == "kubernetes" || strings.HasPrefix(c, "kube") }
	out, n, err := SyncVersions("s.yaml", []byte(src), isKube, "1.36.0", "1.36.4")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.NewReplacer(
		"kubernetes: 1.36.0 ", "kubernetes: 1.36.4 ",
		`to: "1.36.0"`, `to: "1.36.4"`,
		`'v1.36.0'`, `'1.36.4'`,
	).Replace(src)
	if n != 3 || string(out) != want {
		t.Errorf("%d values changed:\n%s\nwant:\n%s", n, out, want)
	}
	if same, n, err := SyncVersions("s.yaml", []byte(src), isKube, "1.30.0", "1.30.1"); err != nil || n != 0 || string(same) != src {
		t.Errorf("no match: %d, %v", n, err)
	}
	if _, _, err := SyncVersions("s.yaml", []byte("sets: []\n"), isKube, "1", "2"); err == nil {
		t.Error("an invalid file was accepted")
	}
	if _, _, err := SyncVersions("s.yaml", []byte(src), isKube, "1.36.0", "not a version"); err == nil || !strings.Contains(err.Error(), "not written") {
		t.Errorf("a rewrite that breaks the file: %v", err)
	}
}

// FuzzSyncVersions: no input panics, and whatever SyncVersions returns is a
// release set file.
func FuzzSyncVersions(f *testing.F) {
	f.Add([]byte("sets:\n  - name: a\n    components: {kubernetes: 1.36.0, kubelet: {from: 1.35.4, to: '1.36.0'}}\n"), "1.36.0", "1.36.4")
	f.Add([]byte("sets:\n  - name: a\n    components:\n      kubernetes: \"1.36.0\" # x\n"), "1.36.0", "v1.36.1")
	f.Fuzz(func(t *testing.T, data []byte, from, to string) {
		out, _, err := SyncVersions("f.yaml", data, func(string) bool { return true }, from, to)
		if err != nil {
			return
		}
		if _, err := ParseReleaseSets("f.yaml", out); err != nil {
			t.Fatalf("the result does not parse: %v\n%s", err, out)
		}
	})
}

// TestFollowsBump: a bump's values follow from the old version and from a
// version between the two, which a bump interrupted between its writes
// leaves; nothing else does, a bump to a lower version included.
func TestFollowsBump(t *testing.T) {
	for _, c := range []struct {
		v, from, to string
		want        bool
	}{
		{"3.21.4", "3.21.4", "3.21.6", true},
		{"v3.21.4", "3.21.4", "3.21.6", true},
		{"3.21.5", "3.21.4", "3.21.6", true},     // left by an interrupted bump
		{"3.21.5~rc1", "3.21.4", "3.21.5", true}, // sorts before 3.21.5
		{"3.21.6", "3.21.4", "3.21.6", false},    // already there
		{"3.21.3", "3.21.4", "3.21.6", false},    // an older release
		{"3.21.7", "3.21.4", "3.21.6", false},    // a newer one
		{"3.21.5", "3.21.6", "3.21.4", false},    // a bump back: nothing between
		{"not a version", "3.21.4", "3.21.6", false},
	} {
		if got := FollowsBump(c.v, c.from, c.to); got != c.want {
			t.Errorf("FollowsBump(%q, %q, %q) = %v, want %v", c.v, c.from, c.to, got, c.want)
		}
	}
}

// TestSyncBumpBlockScalar: a version written as a block scalar (etcd: >-)
// is refused naming its line and how to write it. The message said
// "cannot rewrite a scalar in style 16 in place".
func TestSyncBumpBlockScalar(t *testing.T) {
	src := "sets:\n  - name: a\n    components:\n      kubernetes: 1.36.1\n      etcd: >-\n        3.6.14\n"
	_, _, err := SyncBump("s.yaml", []byte(src), "etcd", "3.6.14", "3.6.15")
	if err == nil || !strings.Contains(err.Error(), "s.yaml:5:13: ") || !strings.Contains(err.Error(), "write it on one line, plain or quoted") || strings.Contains(err.Error(), "style") {
		t.Errorf("a block scalar: %v", err)
	}
}
