// Package gate is what `updeb verify` runs in CI on recipes (typically a
// bump): fetch and verify every source (pins, OpenPGP or Sigstore signatures, the
// cross-check against upstream checksum files), build, lintian, build again
// into a fresh folder and compare bytes, and, against a base git revision,
// check that the Debian version increases when the packages change, flag
// every trust change for review (a ReviewItem each: review.go), and diff the
// packages' file lists and control fields.
//
// The base comparison diffs resolved recipes, not built packages: updeb
// takes only the files a recipe names (never globs), so a resolved recipe
// fixes every package's file list and control fields (all but
// Installed-Size). Diffing them needs neither the old release's artifacts
// nor the network, and says exactly what the bump changes. What only
// decides trust (signatures, Sigstore policies, keyrings, checksum files)
// is compared apart (trustdiff.go): it never changes the package bytes, so
// it needs a reviewer, not a new version.
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

	"github.com/updeb/updeb/internal/childproc"
	"github.com/updeb/updeb/internal/confined"
	"github.com/updeb/updeb/internal/diskfull"
	"github.com/updeb/updeb/internal/fetch"
	"github.com/updeb/updeb/internal/pipeline"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/trust"
	"github.com/updeb/updeb/pkg/deb"
	"github.com/updeb/updeb/pkg/digest"
	"github.com/updeb/updeb/pkg/verify/openpgp"
	"github.com/updeb/updeb/pkg/verify/sigstore"
)

// Status is the outcome of one check.
type Status string

// The outcomes. Only Fail makes the report fail; Warn asks a human to review
// (a REVIEW line: a trust change, see ReviewItem), Skip says the check could
// not apply (no lintian, no upstream checksum file).
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

	cause error // why a Fail failed, when it is not the check itself: ErrBase, a download error
}

// RecipeReport is everything verify found about one recipe.
type RecipeReport struct {
	Recipe  string   `json:"recipe"`
	File    string   `json:"file"`
	Version string   `json:"version"`           // Debian version at HEAD
	Base    string   `json:"base,omitempty"`    // Debian version at the base revision; "" when new or no base
	Results []Result `json:"results"`           // in the order they ran
	Changes []string `json:"changes,omitempty"` // package differences from the base

	review []ReviewItem // moved to Report.Review by Report.add
}

// Report is the whole run.
type Report struct {
	Recipes  []RecipeReport `json:"recipes"`
	Failed   int            `json:"failed"`   // failed checks
	Warnings int            `json:"warnings"` // checks flagged for review: one per element of Review
	// Review is every change a human must review (a REVIEW line each), of
	// every recipe, in report order; empty without --base.
	Review []ReviewItem `json:"review"`
	// Network is set when a source could not be fetched (network or I/O), as
	// opposed to a failed check.
	Network bool `json:"network"`
}

// ErrFailed is wrapped by Report.Err when a check failed.
var ErrFailed = errors.New("gate: a check failed")

// FailedError is a report's failure: how many checks failed, and which.
type FailedError struct {
	Failed int      // failed checks
	Checks []string // "RECIPE: CHECK" for each, in report order
	cause  error
}

func (e *FailedError) Error() string {
	return fmt.Sprintf("%d check(s) failed: %s", e.Failed, strings.Join(e.Checks, ", "))
}

// Unwrap returns what the failures have in common (see Report.Err).
func (e *FailedError) Unwrap() error { return e.cause }

// Err is nil when no check failed, else a *FailedError that wraps what the
// failures have in common, for the caller to tell them apart: ErrBase when
// only the base revision could not be read or loaded (invalid input; with
// ErrBaseRecipe when it was read and only recipes failed to load there), the
// download errors when only downloads failed (a *fetch.NetworkError or
// *fetch.OfflineError: nothing was verified) or a disk was full (a
// *diskfull.Error), and ErrFailed otherwise.
func (rep *Report) Err() error {
	if rep.Failed == 0 {
		return nil
	}
	e := &FailedError{Failed: rep.Failed}
	var downloads []error
	baseOnly, recipeOnly, downloadOnly := true, true, true
	for _, r := range rep.Recipes {
		for _, x := range r.Results {
			if x.Status != Fail {
				continue
			}
			e.Checks = append(e.Checks, r.Recipe+": "+x.Check)
			baseOnly = baseOnly && errors.Is(x.cause, ErrBase)
			downloadOnly = downloadOnly && isNetwork(x.cause)
			recipeOnly = recipeOnly && errors.Is(x.cause, ErrBaseRecipe)
			downloads = append(downloads, x.cause)
		}
	}
	switch {
	case recipeOnly:
		e.cause = fmt.Errorf("%w: %w", ErrBase, ErrBaseRecipe)
	case baseOnly:
		e.cause = ErrBase
	case downloadOnly:
		e.cause = errors.Join(downloads...)
	default:
		e.cause = ErrFailed
	}
	return e
}

// Options configure Run. Build's OutDir and Force are set by Run.
type Options struct {
	Build   pipeline.Options
	Arches  []string // architectures to build; nil means every one of each recipe
	TempDir string   // parent of the two build folders, lintian's scratch folder and the base checkout
	Lintian string   // the lintian executable; "" when not installed (the check is skipped)
	Base    *Base    // nil: no base comparison
}

// Run verifies the recipes. It returns an error only when it could not run at
// all; failed checks are in the report.
func Run(ctx context.Context, recipes []*recipe.Recipe, opts Options) (*Report, error) {
	var jobs []pipeline.Job
	for _, r := range recipes {
		for _, a := range r.ArchNames() {
			if len(opts.Arches) == 0 || slices.Contains(opts.Arches, a) {
				jobs = append(jobs, pipeline.Job{Recipe: r, Arch: a})
			}
		}
	}
	if len(jobs) == 0 {
		return nil, fmt.Errorf("gate: no recipe has the architecture(s) %s", strings.Join(opts.Arches, ", "))
	}
	first, second := filepath.Join(opts.TempDir, "build-1"), filepath.Join(opts.TempDir, "build-2")
	bo := opts.Build
	bo.Force, bo.OutDir = true, first
	// A full disk is the one holding TempDir (TMPDIR): the build folders
	// are gone when the report is read.
	bo.DiskDir = filepath.Dir(opts.TempDir)
	res1, err := pipeline.Run(ctx, jobs, bo)
	if res1 == nil && err != nil {
		return nil, err // the build could not start (output folder, lock): nothing was checked
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var again []pipeline.Job
	for i, r := range res1 {
		if r.Err == nil {
			again = append(again, jobs[i])
		}
	}
	var res2 []pipeline.Result
	if len(again) > 0 {
		bo.OutDir = second
		var err error
		if res2, err = pipeline.Run(ctx, again, bo); res2 == nil && err != nil {
			// Not started (a full disk): each job's second build failed,
			// which is no difference (reproducible).
			for _, j := range again {
				res2 = append(res2, pipeline.Result{Recipe: j.Recipe.Name, Arch: j.Arch, Err: err})
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	rep := &Report{Review: []ReviewItem{}}
	for _, r := range recipes {
		rr := RecipeReport{Recipe: r.Name, File: r.Path}
		var c checks
		c.add("lint", Pass, "the recipe loads clean")
		mine, mine2 := resultsOf(r.Name, res1), resultsOf(r.Name, res2)
		if len(mine) > 0 {
			rr.Version = mine[0].Version
		}
		if sourceChecks(r, mine, &c) {
			var debs []string
			for _, x := range mine {
				for _, o := range x.Outputs {
					debs = append(debs, filepath.Join(first, o.File))
				}
			}
			lintian(ctx, opts.Lintian, opts.TempDir, debs, opts.Build.Compression, &c)
			reproducible(mine, mine2, first, second, &c)
		}
		if opts.Base != nil {
			compareBase(ctx, r, opts, &rr, &c)
		}
		rr.Results = c
		rep.add(rr)
		// Stopped while a check ran (lintian, the base's build): the checks
		// it cut short did not fail, they were not done.
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// resultsOf returns the build results of the recipe named name.
func resultsOf(name string, results []pipeline.Result) []pipeline.Result {
	var out []pipeline.Result
	for _, x := range results {
		if x.Recipe == name {
			out = append(out, x)
		}
	}
	return out
}

// add appends a recipe's report and counts its failures and warnings.
func (rep *Report) add(rr RecipeReport) {
	for _, x := range rr.Results {
		switch x.Status {
		case Fail:
			rep.Failed++
			rep.Network = rep.Network || isNetwork(x.cause)
		case Warn:
			rep.Warnings++
		}
	}
	rep.Review = append(rep.Review, rr.review...)
	rr.review = nil
	rep.Recipes = append(rep.Recipes, rr)
}

// checks collects one recipe's results in the order the checks ran.
type checks []Result

func (c *checks) add(check string, st Status, format string, args ...any) {
	*c = append(*c, Result{Check: check, Status: st, Detail: fmt.Sprintf(format, args...)})
}

// fail adds a failed check whose cause is not the check itself: the base
// revision could not be read, a download failed (see Report.Err).
func (c *checks) fail(check string, cause error, format string, args ...any) {
	c.add(check, Fail, format, args...)
	(*c)[len(*c)-1].cause = cause
}

// sourceChecks reports fetch, digest, signature, cross-check and build from
// the first build's results; it returns whether every job built.
func sourceChecks(r *recipe.Recipe, results []pipeline.Result, c *checks) bool {
	var failed bool
	for _, x := range results {
		if x.Err == nil {
			continue
		}
		failed = true
		var mismatch *digest.MismatchError
		switch {
		case errors.As(x.Err, &mismatch):
			c.add("digest", Fail, "%v", x.Err)
		case errors.Is(x.Err, openpgp.ErrSignature), errors.Is(x.Err, sigstore.ErrRefused):
			c.add("signature", Fail, "%v", x.Err)
		case errors.Is(x.Err, trust.ErrCrossCheck):
			c.add("cross-check", Fail, "%v", x.Err)
		case errors.Is(x.Err, recipe.ErrInvalid), errors.Is(x.Err, openpgp.ErrKeyring):
			c.add("build", Fail, "%v", x.Err)
		case diskfull.Is(x.Err):
			c.fail("build", x.Err, "%v", x.Err)
		case isNetwork(x.Err):
			c.fail("fetch", x.Err, "%v", x.Err)
		default:
			c.add("build", Fail, "%v", x.Err)
		}
	}
	if failed {
		return false
	}
	// Everything verified: say how, per source, and who signed.
	var signed, sigstored, unsigned, crossed, uncrossed []string
	for _, s := range r.Sources {
		switch {
		case s.Signature.Sigstore != nil:
			sigstored = append(sigstored, named(s.Name, evidence(results, s.Name, "sigstore:", "")))
		case s.Signature.URL != "":
			signed = append(signed, named(s.Name, evidence(results, s.Name, "openpgp:", "key ")))
		default:
			unsigned = append(unsigned, s.Name+" ("+s.Signature.None+")")
		}
		switch {
		case s.Checksums != nil && s.Checksums.Clearsigned != nil:
			crossed = append(crossed, named(s.Name, evidence(results, s.Name, "openpgp-clearsigned-checksums:", "clearsigned by key ")))
		case s.Checksums != nil:
			crossed = append(crossed, s.Name)
		default:
			uncrossed = append(uncrossed, s.Name)
		}
	}
	c.add("digest", Pass, "every source matches its pinned digest")
	if len(signed) > 0 {
		c.add("signature", Pass, "OpenPGP signature verified: %s", strings.Join(signed, "; "))
	}
	if len(sigstored) > 0 {
		c.add("signature", Pass, "Sigstore signature verified: %s", strings.Join(sigstored, "; "))
	}
	if len(unsigned) > 0 {
		c.add("signature", Skip, "no signature: %s", strings.Join(unsigned, "; "))
	}
	if len(crossed) > 0 {
		c.add("cross-check", Pass, "pins agree with the upstream checksum file: %s", strings.Join(crossed, "; "))
	}
	if len(uncrossed) > 0 {
		c.add("cross-check", Skip, "no cross-check available (the recipe names no upstream checksum file): %s", strings.Join(uncrossed, ", "))
	}
	var files []string
	for _, x := range results {
		for _, o := range x.Outputs {
			files = append(files, o.File)
		}
	}
	c.add("build", Pass, "%s", strings.Join(files, " "))
	return true
}

// evidence names who vouched for the source: the words of trust.Source
// that begin with prefix ("openpgp:FPR", "sigstore:IDENTITY issuer=URL
// rekor=N"), after label, per architecture ("amd64: key FPR"), or once when
// several architectures agree. "" when the results say nothing.
func evidence(results []pipeline.Result, source, prefix, label string) string {
	var per, distinct []string
	for _, x := range results {
		for _, by := range x.VerifiedBy[source] {
			if ev, ok := strings.CutPrefix(by, prefix); ok {
				per = append(per, x.Arch+": "+label+ev)
				if !slices.Contains(distinct, ev) {
					distinct = append(distinct, ev)
				}
			}
		}
	}
	if len(per) > 1 && len(distinct) == 1 {
		return label + distinct[0]
	}
	return strings.Join(per, ", ")
}

// named is a source's name with who vouched for it, when that is known.
func named(source, by string) string {
	if by == "" {
		return source
	}
	return source + " (" + by + ")"
}

// isNetwork reports a download that failed (network, offline miss, a
// Sigstore service that could not be asked), or a full disk, as opposed to
// a check that failed: nothing was checked.
func isNetwork(err error) bool {
	var (
		netErr  *fetch.NetworkError
		offline *fetch.OfflineError
	)
	return errors.As(err, &netErr) || errors.As(err, &offline) || errors.Is(err, sigstore.ErrUnavailable) || diskfull.Is(err)
}

// lintian runs lintian --fail-on error over every package at once, with a
// TMPDIR of its own in tempDir that it removes afterwards: lintian 2.116
// (Debian 12) leaves an mldbm-elf-* file in TMPDIR on every run, which a CI
// host running the gate on every recipe bump would otherwise collect. Inside
// tempDir, what a kill -9 leaves goes with the rest of the gate's folder.
//
// Packages built with zstd (compression) are given to lintian as xz copies
// made in that folder (deb.Recompress: the same control.tar and data.tar,
// byte for byte): lintian 2.116 reads no zstd member and reports every
// such package as malformed-deb-archive, an error that is not the
// package's. Uncompressed packages are given as they are: lintian's error
// for an uncompressed control.tar is the package's.
func lintian(ctx context.Context, exe, tempDir string, debs []string, compression deb.Compression, c *checks) {
	if exe == "" {
		c.add("lintian", Skip, "lintian is not installed")
		return
	}
	tmp, err := os.MkdirTemp(tempDir, "updeb-lintian-")
	if err != nil {
		c.add("lintian", Fail, "lintian: a temporary folder for it: %v", err)
		return
	}
	defer os.RemoveAll(tmp)
	var copies string
	if compression == deb.CompressionZstd {
		copies = " (xz copies of the zstd packages: Debian 12's lintian reads no zstd)"
		debs = slices.Clone(debs)
		for i, d := range debs {
			xz := filepath.Join(tmp, filepath.Base(d))
			if err := deb.Recompress(ctx, xz, d, deb.CompressionXZ); err != nil {
				c.add("lintian", Fail, "lintian%s: %v", copies, err)
				return
			}
			debs[i] = xz
		}
	}
	args := append([]string{"--fail-on", "error", "--tag-display-limit", "0"}, debs...)
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Env = append(lintianEnv(os.Environ()), "TMPDIR="+tmp)
	var out []byte
	err = childproc.RunGroup(cmd, func() (err error) {
		out, err = cmd.CombinedOutput()
		return err
	})
	if err != nil {
		c.add("lintian", Fail, "lintian --fail-on error%s: %v\n%s", copies, err, strings.TrimSpace(string(out)))
		return
	}
	c.add("lintian", Pass, "no error-level tag in %d package(s)%s", len(debs), copies)
}

// notForLintian are the variables lintian is not given, in any case: it
// reads the packages and never the network, and the upstream bytes in them
// go through its helpers' parsers (objdump, readelf, file), so updeb's
// GitHub token and the proxy settings (which may hold a password) stay
// with updeb.
var notForLintian = []string{"GITHUB_TOKEN", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"}

// lintianEnv is env without the variables of notForLintian.
func lintianEnv(env []string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.ContainsFunc(notForLintian, func(n string) bool { return strings.EqualFold(n, name) })
	})
}

// reproducible compares the two builds byte for byte.
func reproducible(a, b []pipeline.Result, dirA, dirB string, c *checks) {
	for _, x := range b {
		if x.Err != nil {
			// Nothing was compared: a second build that could not be
			// made (a full disk) is no difference, and a full disk is
			// exit 3, not a failed check (Report.Err).
			c.fail("reproducible", x.Err, "the second build could not be made, nothing was compared: %v", x.Err)
			return
		}
	}
	second := map[string]pipeline.Output{}
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
		c.add("reproducible", Fail, "a second build into a fresh folder differs: %s", strings.Join(diffs, "; "))
		return
	}
	c.add("reproducible", Pass, "%d package(s) byte-identical on a second build", n)
}

func sameBytes(a, b string) (bool, error) {
	fa, _, err := confined.OpenFile(a)
	if err != nil {
		return false, err
	}
	defer fa.Close()
	fb, _, err := confined.OpenFile(b)
	if err != nil {
		return false, err
	}
	defer fb.Close()
	return sameStreams(fa, fb)
}

// sameStreams reports whether fa and fb hold the same bytes, reading both
// to the first that differs.
func sameStreams(fa, fb io.Reader) (bool, error) {
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
