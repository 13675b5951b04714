// Package gate is what `updeb verify` runs in CI on recipes (typically a
// bump): fetch and verify every source (pins, OpenPGP signatures, the
// cross-check against upstream checksum files), build, lintian, build again
// into a fresh folder and compare bytes, and, against a base git revision,
// check that the Debian version increases, flag keyring and signer changes
// for review, and diff the packages' file lists and control fields.
//
// The base comparison diffs Plans, not built packages: updeb takes only the
// files a recipe names (never globs), so a plan fixes every package's file
// list and control fields (all but Installed-Size). Diffing plans needs
// neither the old release's artifacts nor the network, and says exactly what
// the bump changes.
package gate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/updeb/updeb/internal/build"
	"github.com/updeb/updeb/internal/fetch"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/trust"
	"github.com/updeb/updeb/pkg/digest"
	"github.com/updeb/updeb/pkg/verify"
)

// Status is the outcome of one check.
type Status string

// The outcomes. Only Fail makes the report fail; Warn asks a human to review
// (a keyring change), Skip says the check could not apply (no lintian, no
// upstream checksum file).
const (
	Pass Status = "pass"
	Fail Status = "fail"
	Warn Status = "warn"
	Skip Status = "skip"
)

// Result is one check of one recipe.
type Result struct {
	Check  string `json:"check"`
	Status Status `json:"status"`
	Detail string `json:"detail,omitempty"`
}

// RecipeReport is everything verify found about one recipe.
type RecipeReport struct {
	Recipe  string   `json:"recipe"`
	File    string   `json:"file"`
	Version string   `json:"version"`           // Debian version at HEAD
	Base    string   `json:"base,omitempty"`    // Debian version at the base revision; "" when new or no base
	Results []Result `json:"results"`           // in the order they ran
	Changes []string `json:"changes,omitempty"` // package differences from the base
}

// Report is the whole run.
type Report struct {
	Recipes  []RecipeReport `json:"recipes"`
	Failed   int            `json:"failed"`   // failed checks
	Warnings int            `json:"warnings"` // checks flagged for review
	// Network is set when a source could not be fetched (network or I/O), as
	// opposed to a failed check.
	Network bool `json:"network"`
}

// Options configure Run. Build's OutDir and Force are set by Run.
type Options struct {
	Build   build.Options
	Arches  []string // architectures to build; nil means every one of each recipe
	TempDir string   // parent of the two build folders (and the base checkout)
	Lintian string   // the lintian executable; "" when not installed (the check is skipped)
	Base    *Base    // nil: no base comparison
}

// Run verifies the recipes. It returns an error only when it could not run at
// all; failed checks are in the report.
func Run(ctx context.Context, recipes []*recipe.Recipe, opts Options) (*Report, error) {
	var jobs []build.Job
	for _, r := range recipes {
		for _, a := range r.ArchNames() {
			if len(opts.Arches) == 0 || slices.Contains(opts.Arches, a) {
				jobs = append(jobs, build.Job{Recipe: r, Arch: a})
			}
		}
	}
	if len(jobs) == 0 {
		return nil, fmt.Errorf("check: no recipe has the architecture(s) %s", strings.Join(opts.Arches, ", "))
	}
	first, second := filepath.Join(opts.TempDir, "build-1"), filepath.Join(opts.TempDir, "build-2")
	bo := opts.Build
	bo.Force, bo.OutDir = true, first
	res1, _ := build.Run(ctx, jobs, bo)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var again []build.Job
	for i, r := range res1 {
		if r.Err == nil {
			again = append(again, jobs[i])
		}
	}
	var res2 []build.Result
	if len(again) > 0 {
		bo.OutDir = second
		res2, _ = build.Run(ctx, again, bo)
	}

	rep := &Report{}
	for _, r := range recipes {
		rr := RecipeReport{Recipe: r.Name, File: r.Path}
		add := func(check string, st Status, format string, args ...any) {
			rr.Results = append(rr.Results, Result{Check: check, Status: st, Detail: fmt.Sprintf(format, args...)})
		}
		add("lint", Pass, "the recipe loads clean")
		var mine, mine2 []build.Result
		for _, x := range res1 {
			if x.Recipe == r.Name {
				mine = append(mine, x)
			}
		}
		for _, x := range res2 {
			if x.Recipe == r.Name {
				mine2 = append(mine2, x)
			}
		}
		if len(mine) > 0 {
			rr.Version = mine[0].Version
		}
		ok := verifyResults(r, mine, opts, add, &rep.Network)
		if ok {
			var debs []string
			for _, x := range mine {
				for _, o := range x.Outputs {
					debs = append(debs, filepath.Join(first, o.File))
				}
			}
			lintian(ctx, opts.Lintian, debs, add)
			reproducible(mine, mine2, first, second, add)
		}
		if opts.Base != nil {
			compareBase(ctx, r, opts, &rr, add)
		}
		for _, x := range rr.Results {
			switch x.Status {
			case Fail:
				rep.Failed++
			case Warn:
				rep.Warnings++
			}
		}
		rep.Recipes = append(rep.Recipes, rr)
	}
	return rep, nil
}

type addFunc func(check string, st Status, format string, args ...any)

// verifyResults reports fetch, digest, signature, cross-check and build from
// the first build's results; it returns whether every job built.
func verifyResults(r *recipe.Recipe, results []build.Result, opts Options, add addFunc, network *bool) bool {
	var failed bool
	for _, x := range results {
		if x.Err == nil {
			continue
		}
		failed = true
		var mismatch *digest.MismatchError
		switch {
		case errors.As(x.Err, &mismatch):
			add("digest", Fail, "%v", x.Err)
		case errors.Is(x.Err, verify.ErrSignature):
			add("signature", Fail, "%v", x.Err)
		case errors.Is(x.Err, trust.ErrCrossCheck):
			add("cross-check", Fail, "%v", x.Err)
		case errors.Is(x.Err, recipe.ErrInvalid), errors.Is(x.Err, verify.ErrKeyring):
			add("build", Fail, "%v", x.Err)
		case isNetwork(x.Err):
			*network = true
			add("fetch", Fail, "%v", x.Err)
		default:
			add("build", Fail, "%v", x.Err)
		}
	}
	if failed {
		return false
	}
	// Everything verified: say how, per source.
	var signed, unsigned, crossed, uncrossed []string
	for _, s := range r.Sources {
		if s.Signature.URL != "" {
			signed = append(signed, s.Name)
		} else {
			unsigned = append(unsigned, s.Name+" ("+s.Signature.None+")")
		}
		if s.Checksums != nil {
			crossed = append(crossed, s.Name)
		} else {
			uncrossed = append(uncrossed, s.Name)
		}
	}
	add("digest", Pass, "every source matches its pinned digest")
	if len(signed) > 0 {
		add("signature", Pass, "OpenPGP signature verified: %s", strings.Join(signed, ", "))
	}
	if len(unsigned) > 0 {
		add("signature", Skip, "no OpenPGP signature: %s", strings.Join(unsigned, "; "))
	}
	if len(crossed) > 0 {
		add("cross-check", Pass, "pins agree with the upstream checksum file: %s", strings.Join(crossed, ", "))
	}
	if len(uncrossed) > 0 {
		add("cross-check", Skip, "no cross-check available (the recipe names no upstream checksum file): %s", strings.Join(uncrossed, ", "))
	}
	var files []string
	for _, x := range results {
		for _, o := range x.Outputs {
			files = append(files, o.File)
		}
	}
	add("build", Pass, "%s", strings.Join(files, " "))
	return true
}

// isNetwork reports a download that failed (network, offline miss), as
// opposed to a check that failed.
func isNetwork(err error) bool {
	var (
		netErr  *fetch.NetworkError
		offline *fetch.OfflineError
	)
	return errors.As(err, &netErr) || errors.As(err, &offline)
}

// lintian runs lintian --fail-on error over every package at once.
func lintian(ctx context.Context, exe string, debs []string, add addFunc) {
	if exe == "" {
		add("lintian", Skip, "lintian is not installed")
		return
	}
	args := append([]string{"--fail-on", "error", "--tag-display-limit", "0"}, debs...)
	out, err := exec.CommandContext(ctx, exe, args...).CombinedOutput()
	if err != nil {
		add("lintian", Fail, "lintian --fail-on error: %v\n%s", err, strings.TrimSpace(string(out)))
		return
	}
	add("lintian", Pass, "no error-level tag in %d package(s)", len(debs))
}

// reproducible compares the two builds byte for byte.
func reproducible(a, b []build.Result, dirA, dirB string, add addFunc) {
	second := map[string]build.Output{}
	for _, x := range b {
		for _, o := range x.Outputs {
			second[o.File] = o
		}
	}
	var diffs []string
	n := 0
	for _, x := range a {
		for _, o := range x.Outputs {
			n++
			o2, ok := second[o.File]
			if !ok {
				diffs = append(diffs, o.File+": missing from the second build")
				continue
			}
			same, err := sameBytes(filepath.Join(dirA, o.File), filepath.Join(dirB, o2.File))
			if err != nil {
				diffs = append(diffs, fmt.Sprintf("%s: %v", o.File, err))
			} else if !same {
				diffs = append(diffs, fmt.Sprintf("%s: sha256 %s, then %s", o.File, o.SHA256, o2.SHA256))
			}
		}
	}
	if len(diffs) > 0 {
		add("reproducible", Fail, "a second build into a fresh folder differs: %s", strings.Join(diffs, "; "))
		return
	}
	add("reproducible", Pass, "%d package(s) byte-identical on a second build", n)
}

func sameBytes(a, b string) (bool, error) {
	fa, err := os.Open(a)
	if err != nil {
		return false, err
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if err != nil {
		return false, err
	}
	defer fb.Close()
	bufA, bufB := make([]byte, 64<<10), make([]byte, 64<<10)
	for {
		na, errA := io.ReadFull(fa, bufA)
		nb, errB := io.ReadFull(fb, bufB)
		if na != nb || !bytes.Equal(bufA[:na], bufB[:nb]) {
			return false, nil
		}
		if errA == io.EOF || errA == io.ErrUnexpectedEOF {
			return errB == io.EOF || errB == io.ErrUnexpectedEOF, nil
		}
		if errA != nil {
			return false, errA
		}
		if errB != nil {
			return false, errB
		}
	}
}

func sortedUnique(list []string) []string {
	sort.Strings(list)
	out := list[:0]
	for i, s := range list {
		if i == 0 || s != list[i-1] {
			out = append(out, s)
		}
	}
	return out
}
