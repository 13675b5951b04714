package realrecipes

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/testkit/testenv"
)

const recipesDir = "../../../recipes"

// loadAll loads every real recipe; a finding fails the test (updeb lint's check).
func loadAll(t *testing.T) []*recipe.Recipe {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(recipesDir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recipes in %s: %v", recipesDir, err)
	}
	sort.Strings(files)
	var out []*recipe.Recipe
	for _, f := range files {
		r, err := recipe.Load(f, recipe.LoadOptions{})
		if err != nil {
			t.Errorf("%s does not lint clean:\n%v", f, err)
			continue
		}
		out = append(out, r)
	}
	return out
}

// TestRealRecipesPinsFromUpstream: every source names a digest for every
// architecture of its recipe, and every pinned digest is one the upstream data
// in testdata/upstream gives for that URL (or file, or architecture and
// version). A release date found in the data must equal the recipe's.
func TestRealRecipesPinsFromUpstream(t *testing.T) {
	pins := upstreamPins(t)
	recipes := loadAll(t)
	if len(recipes) < 14 {
		t.Errorf("%d recipes in %s, want the 14 of issue 7", len(recipes), recipesDir)
	}
	for _, r := range recipes {
		for _, a := range r.ArchNames() {
			plan, err := r.Resolve(a, recipe.ResolveOptions{DefaultMaintainer: "t <t@example.org>"})
			if err != nil {
				t.Fatalf("%s: %v", r.Path, err)
			}
			for _, s := range plan.Sources {
				if len(s.Pinned) == 0 {
					t.Errorf("%s: source %s, arch %s: no pinned digest", r.Path, s.Name, a)
				}
				for _, alg := range s.Pinned.Algorithms() {
					hex := s.Pinned[alg]
					got := vouch(pins, string(alg), hex, s.URL, a, r.Version)
					if len(got) == 0 {
						t.Errorf("%s: source %s, arch %s: %s %s for %s is not in the upstream data (%s)", r.Path, s.Name, a, alg, hex, s.URL, upstreamDir)
						continue
					}
					for _, p := range got {
						if p.date != "" && p.date != r.ReleaseDate.Format("2006-01-02") {
							t.Errorf("%s: release-date %s, but %s says %s was released %s", r.Path, r.ReleaseDate.Format("2006-01-02"), p.from, p.version, p.date)
						}
					}
				}
			}
		}
	}
}

// TestRealRecipesSayWhereTrustComesFrom: every source either has an OpenPGP
// signature or says why not, and the recipe's header comment says "Trust:".
func TestRealRecipesSayWhereTrustComesFrom(t *testing.T) {
	for _, r := range loadAll(t) {
		data, err := os.ReadFile(r.Path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), "# Trust: ") {
			t.Errorf("%s: the header comment does not say where trust comes from (# Trust: ...)", r.Path)
		}
		for _, s := range r.Sources {
			if s.Signature.URL == "" && s.Signature.Sigstore == nil && s.Signature.None == "" {
				t.Errorf("%s: source %s: neither a signature nor a reason for none", r.Path, s.Name)
			}
		}
	}
}

var execRE = regexp.MustCompile(`(?m)^Exec[A-Za-z]*=[-@:+!]*(/\S+)`)

// TestRealRecipesUnits runs systemd-analyze verify on every unit file the
// recipes install, in a temporary root holding the host's own units (for
// sysinit.target and friends), the recipe's units, and stub executables for
// the commands the units run that the recipe installs. A command that is
// neither installed by the recipe nor present on the host stays missing, and
// so fails, as does any warning (unknown key, bad value).
func TestRealRecipesUnits(t *testing.T) {
	testenv.RequireTool(t, "systemd-analyze")
	root := t.TempDir()
	units := filepath.Join(root, "etc/systemd/system")
	if err := os.MkdirAll(filepath.Join(root, "usr/lib/systemd"), 0o755); err != nil {
		t.Fatal(err)
	}
	testenv.Run(t, "cp", "-a", "/usr/lib/systemd/system", filepath.Join(root, "usr/lib/systemd/"))
	if err := os.MkdirAll(units, 0o755); err != nil {
		t.Fatal(err)
	}
	stub := func(p string) {
		dst := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	seen := map[string]bool{}
	for _, r := range loadAll(t) {
		plan, err := r.Resolve(r.ArchNames()[0], recipe.ResolveOptions{DefaultMaintainer: "t <t@example.org>"})
		if err != nil {
			t.Fatal(err)
		}
		for _, pp := range plan.Packages {
			installed := map[string]bool{}
			for _, f := range pp.Files {
				installed[f.Dest] = true
			}
			for _, u := range pp.Files {
				if !strings.HasPrefix(u.Dest, "/lib/systemd/system/") || seen[u.Dest] {
					continue
				}
				seen[u.Dest] = true
				data, err := os.ReadFile(u.LocalPath)
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range execRE.FindAllStringSubmatch(string(data), -1) {
					if installed[m[1]] {
						stub(m[1])
					} else if _, err := os.Stat(m[1]); err == nil {
						stub(m[1]) // a system command (modprobe): the host has it
					}
				}
				if err := os.WriteFile(filepath.Join(units, filepath.Base(u.Dest)), data, 0o644); err != nil {
					t.Fatal(err)
				}
				names = append(names, filepath.Base(u.Dest))
			}
		}
	}
	if len(names) < 7 {
		t.Fatalf("found %d units (%v), want at least the 7 of kubernetes, etcd and containerd", len(names), names)
	}
	out, err := exec.Command("systemd-analyze", append([]string{"verify", "--man=no", "--root=" + root}, names...)...).CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify %v: %v\n%s", names, err, out)
	}
}
