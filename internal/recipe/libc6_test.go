package recipe

import (
	"slices"
	"testing"
)

// TestDependsOnLibc6: where the libc6 the binaries need goes among the
// recipe's relations.
func TestDependsOnLibc6(t *testing.T) {
	for _, c := range []struct {
		name  string
		deps  []string
		added bool // dynamic: true added the plain libc6
		rel   string
		want  []string
	}{
		{"dynamic's libc6 versioned", []string{"adduser", "libc6"}, true, "libc6 (>= 2.34)", []string{"adduser", "libc6 (>= 2.34)"}},
		{"dynamic's libc6 dropped", []string{"libc6", "adduser"}, true, "", []string{"adduser"}},
		{"not dynamic", []string{"adduser"}, false, "libc6 (>= 2.34)", []string{"adduser", "libc6 (>= 2.34)"}},
		{"no glibc", []string{"adduser"}, false, "", []string{"adduser"}},
		{"older floor", []string{"libc6 (>= 2.17)", "adduser"}, false, "libc6 (>= 2.34)", []string{"libc6 (>= 2.34)", "adduser"}},
		{"newer floor", []string{"libc6 (>= 2.36)"}, false, "libc6 (>= 2.34)", []string{"libc6 (>= 2.36)"}},
		{"plain need", []string{"libc6 (>= 2.17)"}, false, "libc6", []string{"libc6 (>= 2.17)"}},
		{"upper bound", []string{"libc6 (<< 2.40)", "adduser"}, false, "libc6 (>= 2.34)", []string{"libc6 (<< 2.40)", "libc6 (>= 2.34)", "adduser"}},
		{"alternatives", []string{"libc6 (>= 2.17) | libc6.1"}, false, "libc6 (>= 2.34)", []string{"libc6 (>= 2.17) | libc6.1"}},
	} {
		pp := &ResolvedPackage{Depends: slices.Clone(c.deps), libc6Added: c.added}
		if got := pp.DependsOnLibc6(c.rel); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
		if !slices.Equal(pp.Depends, c.deps) {
			t.Errorf("%s: the plan's Depends changed to %q", c.name, pp.Depends)
		}
	}
}
