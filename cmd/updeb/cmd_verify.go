package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/updeb/updeb/internal/gate"
	"github.com/updeb/updeb/internal/pipeline"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/pkg/deb"
	"github.com/updeb/updeb/pkg/lockfile"
	"github.com/updeb/updeb/pkg/termtext"
)

type verifyOptions struct {
	base    string
	changed bool
	arches  []string
}

func newVerifyCmd(g *globalOptions) *cobra.Command {
	o := &verifyOptions{}
	cmd := &cobra.Command{
		Use:   "verify [RECIPE...]",
		Short: "CI gate for recipes: verify, build twice, lintian, and compare with a base git revision",
		Long: `verify checks recipes (typically a version bump) before they are merged:
lint; fetch every source and verify its pinned digest and its signature
(OpenPGP, or Sigstore: the identity and issuer the recipe names);
cross-check the pins against the upstream checksum file (or say that none is
available); build into a temporary folder; lintian --fail-on error on every
package (when lintian is installed); build again into a fresh folder and
compare the bytes. With --base REV it also compares each recipe with its
version at that git revision: the Debian version must increase when the
packages change; a path that moves to another package of the recipe must
come with replaces and breaks of the old package, which dpkg needs to
upgrade; every trust change is a REVIEW line naming exactly what
changed (a new recipe and the anchors it brings, keys added to or removed
from a keyring by fingerprint, signers, signature form, signature: none,
Sigstore identity, issuer or pinned key, cross-check, new bytes
downloaded from another URL); a trust-only change
leaves the packages as they were and needs no new version; the packages'
file lists and changed control fields are diffed (a Description as a diff
of its lines). The diff is computed from the resolved recipes, which fix
every package's files and control fields, so the old release is never
downloaded. See docs/ci-gate.md.

The builds go to a folder updeb-verify-* in TMPDIR (/tmp when unset),
removed when verify ends, on a signal too. A verify killed with kill -9 (or
by the OOM killer) cannot remove it: the next verify by the same user removes
every such folder whose verify no longer runs.

Exit codes: 0 every check passed (REVIEW lines allowed: a human reviews
them; --json lists them under "review"), 1 a check failed, 2 invalid input
(recipe, config, --base), 3 a download or a local I/O step failed (a
TMPDIR that does not exist, a full disk).`,
		Example: `  updeb verify helm --base origin/main
  updeb verify --arch amd64 --json kubernetes-1.36
  updeb verify --base origin/main --changed   # in CI: every recipe the change touches`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runVerify(cmd, g, o, args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.base, "base", "", "git revision to compare each recipe with (e.g. origin/main)")
	f.BoolVar(&o.changed, "changed", false, "with --base, instead of RECIPE arguments: every recipe the working tree changes since --base (its file, its folder, a keyring it names)")
	f.StringSliceVar(&o.arches, "arch", nil, "architectures to build (default: every architecture of each recipe)")
	return jsonOutput(cmd, 1)
}

func runVerify(cmd *cobra.Command, g *globalOptions, o *verifyOptions, args []string) error {
	if o.changed && (o.base == "" || len(args) > 0) {
		return usageErrorf("--changed goes with --base REV and no RECIPE arguments: it picks the recipes the change touches")
	}
	s, err := g.openSession(cmd.Context(), args, o.arches)
	if err != nil {
		return err
	}
	defer s.Close()
	recipes := s.recipes
	if o.changed {
		git, err := exec.LookPath("git")
		if err != nil {
			return usageErrorf("--changed needs git: %v", err)
		}
		if recipes, err = (&gate.Base{Git: git, Rev: o.base}).Changed(cmd.Context(), g.recipesDir, s.recipes); err != nil {
			return err
		}
		g.note("%d recipe(s) changed since %s (their file, folder or keyrings)", len(recipes), o.base)
	}
	rep := &gate.Report{Recipes: []gate.RecipeReport{}, Review: []gate.ReviewItem{}}
	if len(recipes) > 0 || !o.changed {
		if rep, err = runGate(cmd, s, recipes, o.arches, o.base); err != nil {
			return err
		}
	}
	if o.base != "" {
		if err := reviewConfiguration(cmd, g, s, o.base, rep); err != nil {
			return err
		}
	}
	if g.json {
		if err := printJSON(cmd.OutOrStdout(), cmd, rep); err != nil {
			return err
		}
	} else {
		printVerifyReport(cmd.OutOrStdout(), rep)
	}
	if err := rep.Err(); err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	return nil
}

// reviewConfiguration adds to rep a review item when the Sigstore trusted
// root in effect is a file of the repository that is new or changed since
// base (gate.Base.TrustedRootReview), and one per setting of the config file,
// when it is a file of the repository, that decides where sources come from
// or what Sigstore signatures are checked against and changed since base
// (gate.Base.ConfigReview): the config is read from the working tree, so a
// change could otherwise swap the root, or send an upstream host to a
// mirror, without a REVIEW line; and each mirror folder, the cache and the
// output folder in effect, when a folder of the repository, with files the
// change put there (gate.Base.FoldersReview). So is each .gitattributes file of the
// repository added, changed or removed since base
// (gate.Base.AttributesReview): git checks every file out through them; and
// each recipe file gone from the recipes folder (gate.Base.RecipesGoneReview).
func reviewConfiguration(cmd *cobra.Command, g *globalOptions, s *session, base string, rep *gate.Report) error {
	_, root, _ := g.trustedRootFile(s.cfg)
	git, err := exec.LookPath("git")
	if err != nil {
		return usageErrorf("--base needs git: %v", err)
	}
	b := &gate.Base{Git: git, Rev: base}
	items, err := b.AttributesReview(cmd.Context(), g.recipesDir)
	if err != nil {
		return err
	}
	more, err := b.TrustedRootReview(cmd.Context(), g.recipesDir, root)
	if err != nil {
		return err
	}
	items = append(items, more...)
	if more, err = b.RecipesGoneReview(cmd.Context(), g.recipesDir); err != nil {
		return err
	}
	items = append(items, more...)
	// A default config new since base stands in for the next default
	// found, which the base read: compared with that one.
	var fallback []string
	if i := slices.Index(defaultConfigFiles, s.cfg.File); g.configFile == "" && i >= 0 {
		fallback = defaultConfigFiles[i+1:]
	}
	if more, err = b.ConfigReview(cmd.Context(), g.recipesDir, s.cfg.File, fallback...); err != nil {
		return err
	}
	items = append(items, more...)
	// The mirror folders, the cache and the output folder in effect, where
	// they are folders of the repository: files the change put there.
	cache, err := g.cacheDirFor(s.cfg)
	if err != nil {
		return err
	}
	if more, err = b.FoldersReview(cmd.Context(), g.recipesDir, gate.DataFolders(s.cfg, cache, g.outFolder(s.cfg))); err != nil {
		return err
	}
	items = append(items, more...)
	// A default config that would be read before the one in effect, had
	// the change not removed it.
	for _, d := range defaultConfigFiles {
		if g.configFile != "" || d == s.cfg.File {
			break
		}
		if more, err = b.ConfigGoneReview(cmd.Context(), g.recipesDir, d, s.cfg.File); err != nil {
			return err
		}
		items = append(items, more...)
	}
	rep.Review = append(rep.Review, items...)
	rep.Warnings += len(items)
	return nil
}

// runGate runs the gate (internal/gate) on recipes with the session's
// settings: builds in a temporary folder, lintian when installed, and the
// comparison with the git revision base ("" for none).
func runGate(cmd *cobra.Command, s *session, recipes []*recipe.Recipe, arches []string, base string) (*gate.Report, error) {
	g := s.g
	g.warnSourceDateEpoch()
	// Locked while verify runs: a verify killed with kill -9 leaves its
	// folder (two builds of the recipes), and the next one removes it.
	tmp, err := lockfile.TempDir("", "updeb-verify-", nil)
	if err != nil {
		return nil, fmt.Errorf("verify: a folder for its builds in %s (TMPDIR): %w; point TMPDIR at a folder with room for two builds of the recipes", os.TempDir(), err)
	}
	defer tmp.Remove()
	for _, p := range tmp.Swept {
		g.logger().Info("removed the temporary folder of a killed updeb verify", "path", p)
	}
	so, err := s.sourceOptions()
	if err != nil {
		return nil, err
	}
	res, err := g.runResources(s.cfg.Build, 0)
	if err != nil {
		return nil, err
	}
	opts := gate.Options{
		Build: pipeline.Options{
			Source: so, UpdebVersion: version,
			// The packages updeb build makes with this config, not others:
			// lintian and the reproducibility check look at their bytes.
			Compression: deb.Compression(s.cfg.Build.Compression), XZMode: deb.XZMode(s.cfg.Build.XZMode),
			Parallel: res.Parallel, Pool: res.Pool, ResolveOptions: resolveOptions(s.cfg), Progress: g.buildProgress(),
		},
		Arches:  arches,
		TempDir: tmp.Path,
	}
	if p, err := exec.LookPath("lintian"); err == nil {
		opts.Lintian = p
	}
	if base != "" {
		git, err := exec.LookPath("git")
		if err != nil {
			return nil, usageErrorf("--base needs git: %v", err)
		}
		opts.Base = &gate.Base{Git: git, Rev: base}
	}
	return gate.Run(cmd.Context(), recipes, opts)
}

func printVerifyReport(w io.Writer, rep *gate.Report) {
	for _, r := range rep.Recipes {
		v := r.Version
		if r.Base != "" && r.Base != r.Version {
			v = r.Base + " -> " + r.Version
		}
		// The file is named as the change named it: a name that sets the
		// terminal (ESC [8m hides every line after it) is shown escaped.
		fmt.Fprintf(w, "== %s %s (%s)\n", termtext.Escape(r.Recipe), termtext.Escape(v), termtext.Escape(r.File))
		for _, x := range r.Results {
			label := strings.ToUpper(string(x.Status))
			if x.Status == gate.Warn {
				label = "REVIEW"
			}
			detail := strings.ReplaceAll(termtext.EscapeLines(x.Detail), "\n", "\n        ")
			fmt.Fprintf(w, "  %-6s %-12s %s\n", label, x.Check, detail)
		}
		if len(r.Changes) > 0 {
			fmt.Fprintln(w, "  changes:")
			for _, c := range r.Changes {
				fmt.Fprintf(w, "    %s\n", strings.ReplaceAll(termtext.EscapeLines(c), "\n", "\n      "))
			}
		}
	}
	header := "== configuration\n"
	for _, it := range rep.Review {
		if it.Recipe == "" {
			fmt.Fprintf(w, "%s  %-6s %-12s %s\n", header, "REVIEW", "trust", termtext.EscapeLines(it.Message))
			header = ""
		}
	}
	status := "PASS"
	if rep.Failed > 0 {
		status = "FAIL"
	}
	fmt.Fprintf(w, "%s: %d recipe(s), %d failed check(s), %d flagged for review\n", status, len(rep.Recipes), rep.Failed, rep.Warnings)
	if rep.Warnings > 0 {
		fmt.Fprintf(w, "!! %d change(s) flagged REVIEW above: a human must review them (keys, signers, identities) before merging\n", rep.Warnings)
	}
}
