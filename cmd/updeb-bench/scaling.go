package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

const standinHost = "https://standin.updeb.invalid/"

// scalingRuns are the settings the scaling section compares, each a row;
// the first is the reference. The last sets a memory budget that holds one
// xz worker and one build (pipeline.SizeRun): its peak RSS must stay within it.
var scalingRuns = []struct {
	name   string
	jobs   int    // --jobs, 0 for none
	memory string // build.memory, "" for the default
}{
	{"updeb build, build.parallel 1", 1, ""},
	{"updeb build, build.parallel 2", 2, ""},
	{"updeb build, build.memory 300MiB", 0, "300MiB"},
}

// standinRecipe is one recipe of a stand-in mirror: a tarball (or, when
// raw, a single binary) of payload files, and the packages made of them.
type standinRecipe struct {
	name     string
	raw      bool
	packages [][]string // per package, payload files (relative to the payload folder)
}

// scalingMixes are the stand-in mirrors of the scaling section: many small
// packages, where a build leaves CPUs idle (a package of one xz block
// compresses on one CPU), and a few large ones, where a build's xz workers
// fill the CPUs.
var scalingMixes = []struct {
	name    string
	recipes func(files []string, size func(string) int64) []standinRecipe
}{
	{"7 packages of 2-25 MiB", smallRecipes},
	{"2 packages of 85 and 168 MiB", largeRecipes},
}

// smallRecipes shapes the payload's amd64 binaries (82 MiB) like a small
// site's recipes: the largest file is a raw binary (runc), the others are
// dealt in name order into four tarballs, the first of which becomes three
// packages (Kubernetes' server tarball: master, node, client).
func smallRecipes(files []string, size func(string) int64) []standinRecipe {
	files = slices.DeleteFunc(slices.Clone(files), func(f string) bool { return !strings.HasPrefix(f, "amd64/") })
	largest := slices.MaxFunc(files, func(a, b string) int { return int(size(a) - size(b)) })
	files = slices.DeleteFunc(files, func(f string) bool { return f == largest })
	slices.Sort(files)
	rs := []standinRecipe{{name: "standin-raw", raw: true, packages: [][]string{{largest}}}}
	tarballs := make([][]string, 4)
	for i, f := range files {
		tarballs[i%len(tarballs)] = append(tarballs[i%len(tarballs)], f)
	}
	for i, t := range tarballs {
		r := standinRecipe{name: fmt.Sprintf("standin-%d", i+1)}
		n := 1
		if i == 0 {
			n = 3
		}
		r.packages = make([][]string, n)
		for j, f := range t {
			r.packages[j%n] = append(r.packages[j%n], f)
		}
		rs = append(rs, r)
	}
	return rs
}

// largeRecipes makes one recipe and package of the arm64 binaries (168 MiB)
// and one of the ppc64le ones (85 MiB).
func largeRecipes(files []string, _ func(string) int64) []standinRecipe {
	var rs []standinRecipe
	for _, arch := range []string{"arm64", "ppc64le"} {
		r := standinRecipe{name: "standin-" + arch, packages: [][]string{nil}}
		for _, f := range files {
			if strings.HasPrefix(f, arch+"/") {
				r.packages[0] = append(r.packages[0], f)
			}
		}
		rs = append(rs, r)
	}
	return rs
}

// benchScaling writes each of scalingMixes as a stand-in mirror with its
// recipes, fills a cache from it once, then runs `updeb build` of every
// recipe with each of scalingRuns into an empty output folder (twice each,
// interleaved; the faster run is reported).
func benchScaling(work string) ([]row, error) {
	pdir, _, err := payload()
	if err != nil {
		return nil, err
	}
	files, err := payloadFiles(pdir)
	if err != nil {
		return nil, err
	}
	size := func(f string) int64 { n, _ := fileSize(filepath.Join(pdir, f)); return n }
	updeb, err := buildUpdeb(work)
	if err != nil {
		return nil, err
	}
	var rows []row
	for i, mix := range scalingMixes {
		mixRows, err := scaleMix(filepath.Join(work, fmt.Sprint("mix-", i)), updeb, pdir, mix.name, mix.recipes(files, size), size)
		if err != nil {
			return nil, err
		}
		rows = append(rows, mixRows...)
	}
	return rows, nil
}

// scaleMix measures the builds of one stand-in mirror.
func scaleMix(work, updeb, pdir, mix string, recipes []standinRecipe, size func(string) int64) ([]row, error) {
	proj := filepath.Join(work, "project")
	mirror := filepath.Join(work, "mirror")
	for _, d := range []string{filepath.Join(proj, "recipes"), mirror} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	var total int64
	packages := 0
	for _, r := range recipes {
		if err := writeStandin(proj, mirror, pdir, r); err != nil {
			return nil, err
		}
		for _, p := range r.packages {
			packages++
			for _, f := range p {
				total += size(f)
			}
		}
	}
	fmt.Printf("stand-in mirror %q: %d recipes, %d packages, %.1f MiB of binaries\n", mix, len(recipes), packages, float64(total)/(1<<20))
	// One config per run: the cache is shared.
	cfgs := make([]string, len(scalingRuns))
	for i, sr := range scalingRuns {
		cfgs[i] = filepath.Join(proj, fmt.Sprintf("updeb-%d.yaml", i))
		memory := ""
		if sr.memory != "" {
			memory = "  memory: " + sr.memory + "\n"
		}
		if err := os.WriteFile(cfgs[i], fmt.Appendf(nil, "mirrors:\n  - {prefix: %q, to: %q}\ncache: cache\nbuild:\n  maintainer: bench <bench@updeb.invalid>\n%s",
			standinHost, mirror+"/", memory), 0o644); err != nil {
			return nil, err
		}
	}
	updebCmd := func(cfg string, args ...string) *exec.Cmd {
		return exec.Command(updeb, append([]string{"-q", "--config", cfg, "--recipes", filepath.Join(proj, "recipes")}, args...)...)
	}
	if out, err := updebCmd(cfgs[0], "fetch").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("updeb fetch: %v\n%s", err, out)
	}
	best := map[int]row{}
	for round := range 2 {
		for i, sr := range scalingRuns {
			out := filepath.Join(work, fmt.Sprintf("out-%d-%d", i, round))
			if err := os.MkdirAll(out, 0o755); err != nil {
				return nil, err
			}
			args := []string{"--out", out, "build"}
			if sr.jobs > 0 {
				args = append(args, "--jobs", fmt.Sprint(sr.jobs))
			}
			cmd := updebCmd(cfgs[i], args...)
			cmd.Stdout = io.Discard
			r, err := measureDisk(sr.name, cmd, out)
			if err != nil {
				return nil, err
			}
			debs, _ := filepath.Glob(filepath.Join(out, "*.deb"))
			for _, d := range debs {
				n, _ := fileSize(d)
				r.outSize += n
			}
			if b, ok := best[i]; !ok || r.wall < b.wall {
				best[i] = r
			}
			if err := os.RemoveAll(out); err != nil {
				return nil, err
			}
		}
	}
	var rows []row
	for i := range scalingRuns {
		r := best[i]
		r.pkg = mix
		if i > 0 {
			r.ref = best[0].name
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// writeStandin writes r's artifact into the mirror and its recipe.
func writeStandin(proj, mirror, pdir string, r standinRecipe) error {
	var artifact string
	if r.raw {
		artifact = r.name + ".amd64"
		if err := os.Link(filepath.Join(pdir, r.packages[0][0]), filepath.Join(mirror, artifact)); err != nil {
			return err
		}
	} else {
		artifact = r.name + "-1.0-linux-amd64.tar.gz"
		var list strings.Builder
		for _, p := range r.packages {
			for _, f := range p {
				list.WriteString("./" + filepath.ToSlash(f) + "\n")
			}
		}
		cmd := exec.Command("tar", "--owner=0", "--group=0", "--sort=name", "--transform", "s,^\\.,"+r.name+"-1.0,", "-czf",
			filepath.Join(mirror, artifact), "-C", pdir, "--no-recursion", "-T", "-")
		cmd.Stdin = strings.NewReader(list.String())
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("tar: %v\n%s", err, out)
		}
	}
	data, err := os.ReadFile(filepath.Join(mirror, artifact))
	if err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	var b strings.Builder
	fmt.Fprintf(&b, `name: %[1]s
version: 1.0.0
revision: "1"
release-date: 2024-08-14
homepage: %[2]s
license: Apache-2.0
copyright: The updeb benchmark
architectures: {amd64: amd64}
repo: {component: main}
sources:
  - name: src
    url: %[2]s%[3]s
    sha256: %[4]s
    signature: {none: "a stand-in artifact of the benchmark"}
packages:
`, r.name, standinHost, artifact, hex.EncodeToString(sum[:]))
	for i, files := range r.packages {
		name := r.name
		if i > 0 {
			name = fmt.Sprintf("%s-part%d", r.name, i+1)
		}
		fmt.Fprintf(&b, "  - name: %s\n    summary: stand-in package of the updeb benchmark\n    description: |\n      Go binaries standing in for an upstream release.\n    section: devel\n    files:\n", name)
		for _, f := range files {
			if r.raw {
				fmt.Fprintf(&b, "      - {source: src, dest: /usr/bin/%s, mode: \"0755\"}\n", r.name)
				continue
			}
			fmt.Fprintf(&b, "      - {source: src, path: %q, dest: %q, mode: \"0755\"}\n", r.name+"-1.0/"+filepath.ToSlash(f), "/usr/lib/"+name+"/"+filepath.ToSlash(f))
		}
	}
	return os.WriteFile(filepath.Join(proj, "recipes", r.name+".yaml"), []byte(b.String()), 0o644)
}
