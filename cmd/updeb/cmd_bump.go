package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/updeb/updeb/internal/compat"
	"github.com/updeb/updeb/internal/recipe"
	"github.com/updeb/updeb/internal/track"
	"github.com/updeb/updeb/pkg/digest"
)

type bumpOptions struct {
	trackFlags
	to              string
	date            string
	newMinor        string
	setFile         string
	sha256, sha512  []string // [SOURCE:][ARCH=]HEX
	trustOnFirstUse bool
}

func newBumpCmd(g *globalOptions) *cobra.Command {
	o := &bumpOptions{}
	cmd := &cobra.Command{
		Use:   "bump RECIPE",
		Short: "Move a recipe to a new upstream version with freshly verified digests",
		Long: `bump moves a recipe to the newest complete release in its track (or --to VERSION):
it checks that every artifact exists for every architecture, downloads the sources
through the proxy, verifies their signatures (OpenPGP, or Sigstore: the identity and
issuer the recipe names) and the upstream checksum files, and rewrites version,
release-date, revision and the pinned digests in place, keeping every other line
(comments included). The new recipe must pass lint before it replaces the old one.
--to the current version re-checks the pins against upstream: different bytes are
an alarm (exit 1), never an update. --to takes the version as recipes write it or
as upstream's tag (v3.21.4: the watch's tag-prefix is stripped, as outdated does); the
current version written otherwise (3.21.04 for 3.21.4) is refused (exit 2). Versions
written out in the release set file (--set) equal to the old version follow,
rewritten in place.

bump pins nothing that nothing vouches for. A source without a verified signature or
an upstream checksum file that lists it (fetched over https: over plain http it vouches
for nothing) is refused (exit 1, with the digests upstream
serves now), unless you give its digests from elsewhere (--sha256/--sha512
[SOURCE:][ARCH=]HEX; SOURCE may be left out when the recipe has one source, ARCH when
the file is the same for every architecture) or say --trust-on-first-use. Either way a
warning names the source and a comment above its pins records it in the recipe. Digests
you give are checked for every source they name, vouched for or not.

A new recipe may come without pins: bump pins its sources (sha256, or sha512 when you
give --sha512 for it) after their url lines, at the recipe's version or --to.

--new-minor MINOR writes the recipe of the next minor of a versioned series instead
(kubernetes-1.36 -> recipes/kubernetes-1.37.yaml): the recipe's text with its minor
moved everywhere it names it (name, watch track, versioned package and component
names, ranges, comments), its files-dir shared, then bumped as above to the newest
complete release of that minor (or --to) and linted. The old recipe is untouched; an
existing target is refused. The release set file (--set) learns of the new minor in
place, comments kept: a new Kubernetes minor gets a set of its own, copied from the old
minor's with the recipes of the series that follow Kubernetes minors moved
(recipe:kubernetes-1.36 -> recipe:kubernetes-1.37), and a new minor of such a series
(cri-tools-1.37) is named in the set of that Kubernetes minor; 'updeb compat' checks it
at once. A recipe not of a series (calicoctl, etcd) moves to the new minor in place
instead: its watch track moves (3.31.x -> 3.32.x) and it is bumped as above to the
newest complete release of the minor; the versions written out in the release set file
follow.`,
		Example: `  updeb bump helm
  updeb bump runc --to 1.4.4 --date 2026-09-01
  updeb bump helm --to 3.18.4      # re-check the current pins against upstream
  updeb bump kubernetes-1.36 --new-minor 1.37
  updeb bump calicoctl --new-minor 3.32   # a single recipe: its watch track moves
  updeb bump mytool --sha256 amd64=3f5a... --sha256 arm64=9c1e...
  updeb bump kubernetes-1.36 --sha512 server:amd64=1c64... --sha512 node:amd64=8bba... --sha512 server:arm64=...   # one per source and architecture
  updeb bump newtool --trust-on-first-use`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runBump(cmd, g, o, args[0]) },
	}
	o.trackFlags.add(cmd)
	cmd.Flags().StringVar(&o.to, "to", "", "target upstream version, or its tag (default: the newest complete release in the recipe's track)")
	cmd.Flags().StringVar(&o.date, "date", "", "release-date to write, YYYY-MM-DD (default: the GitHub release's publication day)")
	cmd.Flags().StringVar(&o.newMinor, "new-minor", "", "write the recipe of this next minor (MAJOR.MINOR) of the recipe's series instead")
	cmd.Flags().StringVar(&o.setFile, "set", "release-sets.yaml", "release set file whose written-out versions follow the bump (skipped when the default is absent)")
	cmd.Flags().StringArrayVar(&o.sha256, "sha256", nil, "a source's sha256 from elsewhere, [SOURCE:][ARCH=]HEX (repeatable): checked, and vouches for a source nothing else does")
	cmd.Flags().StringArrayVar(&o.sha512, "sha512", nil, "a source's sha512 from elsewhere, [SOURCE:][ARCH=]HEX (repeatable)")
	cmd.Flags().BoolVar(&o.trustOnFirstUse, "trust-on-first-use", false, "pin sources nothing vouches for anyway (recorded in the recipe)")
	return jsonOutput(cmd, 1)
}

func runBump(cmd *cobra.Command, g *globalOptions, o *bumpOptions, name string) error {
	s, err := g.openSessionWith(cmd.Context(), []string{name}, nil, recipe.LoadOptions{AllowUnpinned: true})
	if err != nil {
		return err
	}
	defer s.Close()
	r := s.recipes[0]
	opts, err := o.options(g, s.cfg, s.fetcher)
	if err != nil {
		return err
	}
	if opts.Sigstore, err = s.sigstore(); err != nil {
		return err
	}
	bo := track.BumpOptions{Options: opts, To: o.to, TrustOnFirstUse: o.trustOnFirstUse, Operator: map[string]map[string]digest.Set{}}
	for alg, specs := range map[digest.Algorithm][]string{digest.SHA256: o.sha256, digest.SHA512: o.sha512} {
		if err := operatorDigests(r, alg, specs, bo.Operator); err != nil {
			return err
		}
	}
	if o.date != "" {
		if bo.Date, err = time.Parse(time.DateOnly, o.date); err != nil {
			return usageErrorf("--date %q: want a day as YYYY-MM-DD", o.date)
		}
	} else if o.to != "" {
		// The day is all the release source is asked for: once, without
		// retries, so that an unreachable API fails in seconds naming --date.
		noRetries, none := *s.cfg, 0
		noRetries.Fetch.Retries = &none
		once, err := g.newFetcher(&noRetries)
		if err != nil {
			return err
		}
		defer once.Close()
		bo.DayClient = once
	}
	var (
		synced   int
		setNote  string
		followed string
	)
	// A recipe bumped in place: the release set file follows first, so
	// that a run killed between the two writes bumps it when run again.
	bo.BeforeWrite = func(res *track.BumpResult) (err error) {
		if res.File != r.Path {
			return nil // a new recipe: its release set is added once it is there
		}
		synced, setNote, err = followReleaseSets(cmd, g, o.setFile, r, res)
		followed = res.To
		return err
	}
	var res *track.BumpResult
	if o.newMinor != "" {
		res, err = track.NewMinor(cmd.Context(), r, o.newMinor, bo)
	} else {
		res, err = track.Bump(cmd.Context(), r, bo)
	}
	if err != nil {
		if synced > 0 {
			return &halfDoneError{fmt.Errorf("%s follows %s, but the recipe was not written: %w; run the command again", o.setFile, r.Name, err),
				fmt.Sprintf("%s was written (%s at %s there), the recipe was not: run the same command again to finish", o.setFile, r.Name, followed)}
		}
		return err
	}
	if res.Changed && res.File != r.Path {
		if synced, setNote, err = followReleaseSets(cmd, g, o.setFile, r, res); err != nil {
			return err
		}
	}
	for _, u := range res.Unvouched {
		what, how, _ := strings.Cut(u, ": ")
		g.warnf("%s %s pinned on your word alone (%s): no signature or upstream checksum file vouched for it; the recipe records it", r.Name, what, how)
	}
	out := cmd.OutOrStdout()
	if g.json {
		return printJSON(out, cmd, struct {
			*track.BumpResult
			ReleaseSetValues int    `json:"release_set_values"`
			ReleaseSet       string `json:"release_set,omitempty"`
		}{res, synced, setNote})
	}
	switch {
	case !res.Changed:
		fmt.Fprintf(out, "%s: already at %s; upstream's bytes match the pins\n", res.Recipe, res.To)
		return nil
	case o.newMinor != "" && res.File != r.Path:
		fmt.Fprintf(out, "%s: new recipe %s at %s (release-date %s), from %s %s\n", res.Recipe, res.File, res.To, res.ReleaseDate, r.Name, r.Version)
	default:
		fmt.Fprintf(out, "%s: %s -> %s (release-date %s), %s rewritten\n", res.Recipe, res.From, res.To, res.ReleaseDate, res.File)
	}
	for _, v := range res.VerifiedBy {
		fmt.Fprintf(out, "  verified: %s\n", v)
	}
	if synced > 0 {
		fmt.Fprintf(out, "  %s: %d version(s) %s -> %s\n", o.setFile, synced, res.From, res.To)
	}
	if setNote != "" {
		fmt.Fprintf(out, "  %s: %s\n", o.setFile, setNote)
	}
	return nil
}

// followReleaseSets keeps the release set file in step with a bump (the
// default file may be absent): a recipe moved in place has its versions
// written out there follow (compat.FollowBump), before the recipe is
// written (BumpOptions.BeforeWrite); a new recipe of a series
// adds or extends the set of its minor (compat.FollowNewMinor), which needs
// every recipe's version. It returns how many values followed, or what was
// done for the new minor.
func followReleaseSets(cmd *cobra.Command, g *globalOptions, file string, r *recipe.Recipe, res *track.BumpResult) (int, string, error) {
	var (
		n    int
		note string
		err  error
	)
	// The new recipe is written when its release set follows: stopped
	// then, plan --apply completes the set (track.NewMinor's ErrExists).
	name := strings.TrimSuffix(filepath.Base(res.File), filepath.Ext(res.File))
	halfDone := func(err error) error {
		return &halfDoneError{err, fmt.Sprintf("the new recipe %s was written, %s was not updated: updeb plan --apply --only %s finishes it", res.File, file, name)}
	}
	if res.File == r.Path {
		n, err = compat.FollowBump(cmd.Context(), file, track.Component(r), res.From, res.To)
	} else {
		var all []*recipe.Recipe
		if all, err = loadRecipesWith(cmd.Context(), g, nil, recipe.LoadOptions{AllowUnpinned: true}); err != nil {
			return 0, "", halfDone(fmt.Errorf("the new recipe was written, but %s was not updated: %w", file, err))
		}
		nm := compat.NewMinor{Component: track.Component(r), From: r.Ref(), To: name,
			Versions: compat.RecipeVersions(all)}
		nm.Minor = strings.TrimPrefix(nm.To, nm.Component+"-")
		note, err = compat.FollowNewMinor(cmd.Context(), file, nm)
	}
	switch {
	case compat.IsNotExist(err) && !cmd.Flags().Changed("set"):
		return 0, "", nil
	case err != nil && res.File == r.Path:
		return 0, "", invalidInput(fmt.Errorf("%s could not follow the bump (the recipe was not written): %w", file, err), "fix the release set file, then run the command again")
	case err != nil:
		return 0, "", invalidInput(halfDone(fmt.Errorf("the recipe was bumped, but %s was not updated: %w", file, err)), "fix the release set file, then set its versions by hand")
	}
	return n, note, nil
}

// operatorDigests adds the --sha256/--sha512 values ([SOURCE:][ARCH=]HEX) to
// into (source -> architecture -> digests), checking names against r. No
// SOURCE means the recipe's only source; no ARCH, every architecture.
func operatorDigests(r *recipe.Recipe, alg digest.Algorithm, specs []string, into map[string]map[string]digest.Set) error {
	var sources []string
	for _, s := range r.Sources {
		sources = append(sources, s.Name)
	}
	for _, spec := range specs {
		rest, src := spec, ""
		if i := strings.IndexByte(rest, ':'); i >= 0 {
			src, rest = rest[:i], rest[i+1:]
		}
		arches := r.ArchNames()
		if i := strings.IndexByte(rest, '='); i >= 0 {
			arches, rest = []string{rest[:i]}, rest[i+1:]
		}
		switch {
		case src == "" && len(sources) == 1:
			src = sources[0]
		case src == "":
			return usageErrorf("--%s %s: %s has sources %s: say which, as SOURCE:ARCH=HEX", alg, spec, r.Name, strings.Join(sources, ", "))
		case !slices.Contains(sources, src):
			return usageErrorf("--%s %s: %s has no source %q (sources: %s)", alg, spec, r.Name, src, strings.Join(sources, ", "))
		case !slices.Contains(r.ArchNames(), arches[0]):
			return usageErrorf("--%s %s: %s has no architecture %q (architectures: %s)", alg, spec, r.Name, arches[0], strings.Join(r.ArchNames(), ", "))
		}
		d, err := digest.New(alg, rest)
		if err != nil {
			return usageErrorf("--%s %s: %v", alg, spec, err)
		}
		if into[src] == nil {
			into[src] = map[string]digest.Set{}
		}
		for _, a := range arches {
			if into[src][a] == nil {
				into[src][a] = digest.Set{}
			}
			if _, twice := into[src][a][alg]; twice {
				return usageErrorf("--%s given twice for %s %s", alg, src, a)
			}
			into[src][a][alg] = d.Hex
		}
	}
	return nil
}
