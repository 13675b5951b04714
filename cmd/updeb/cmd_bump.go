package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/updeb/updeb/internal/compat"
	"github.com/updeb/updeb/internal/eol"
	"github.com/updeb/updeb/internal/track"
	"github.com/updeb/updeb/internal/yamlfile"
	"github.com/updeb/updeb/pkg/atomicfile"
)

type bumpOptions struct {
	trackFlags
	to       string
	date     string
	newMinor string
	setFile  string
}

func newBumpCmd(g *globalOptions) *cobra.Command {
	o := &bumpOptions{}
	cmd := &cobra.Command{
		Use:   "bump RECIPE",
		Short: "Move a recipe to a new upstream version with freshly verified digests",
		Long: `bump moves a recipe to the newest complete release in its track (or --to VERSION):
it checks that every artifact exists for every architecture, downloads the sources
through the proxy, verifies their OpenPGP signatures and the upstream checksum files,
and rewrites version, release-date, revision and the pinned digests in place, keeping
every other line (comments included). The new recipe must pass lint before it replaces
the old one. --to the current version re-checks the pins against upstream: different
bytes are an alarm (exit 1), never an update. Versions written out in the release set
file (--set) equal to the old version follow, rewritten in place.

--new-minor MINOR writes the recipe of the next minor of a versioned series instead
(kubernetes-1.36 -> recipes/kubernetes-1.37.yaml): the recipe's text with its minor
moved everywhere it names it (name, watch track, versioned package and component
names, ranges, comments), its files-dir shared, then bumped as above to the newest
complete release of that minor (or --to) and linted. The old recipe is untouched; an
existing target is refused.`,
		Example: `  updeb bump helm
  updeb bump runc --to 1.4.4 --date 2026-09-01
  updeb bump helm --to 3.18.4      # re-check the current pins against upstream
  updeb bump kubernetes-1.36 --new-minor 1.37`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runBump(cmd, g, o, args[0]) },
	}
	o.trackFlags.add(cmd)
	cmd.Flags().StringVar(&o.to, "to", "", "target upstream version (default: the newest complete release in the recipe's track)")
	cmd.Flags().StringVar(&o.date, "date", "", "release-date to write, YYYY-MM-DD (default: the GitHub release's publication day)")
	cmd.Flags().StringVar(&o.newMinor, "new-minor", "", "write the recipe of this next minor (MAJOR.MINOR) of the recipe's series instead")
	cmd.Flags().StringVar(&o.setFile, "set", "release-sets.yaml", "release set file whose written-out versions follow the bump (skipped when the default is absent)")
	return cmd
}

func runBump(cmd *cobra.Command, g *globalOptions, o *bumpOptions, name string) error {
	s, err := g.openSession([]string{name}, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	r := s.recipes[0]
	opts, err := o.options(g, s.cfg, s.fetcher)
	if err != nil {
		return err
	}
	bo := track.BumpOptions{Options: opts, To: o.to}
	if o.date != "" {
		if bo.Date, err = time.Parse(time.DateOnly, o.date); err != nil {
			return usageErrorf("--date %q: want a day as YYYY-MM-DD", o.date)
		}
	}
	var res *track.BumpResult
	if o.newMinor != "" {
		res, err = track.NewMinor(cmd.Context(), r, o.newMinor, bo)
	} else {
		res, err = track.Bump(cmd.Context(), r, bo)
	}
	if err != nil {
		return err
	}
	var synced int
	if res.Changed && o.newMinor == "" {
		if synced, err = syncReleaseSets(cmd, o.setFile, track.Component(r), res.From, res.To); err != nil {
			return err
		}
	}
	out := cmd.OutOrStdout()
	if g.json {
		return writeJSON(out, struct {
			*track.BumpResult
			ReleaseSetValues int `json:"release_set_values"`
		}{res, synced})
	}
	switch {
	case !res.Changed:
		fmt.Fprintf(out, "%s: already at %s; upstream's bytes match the pins\n", res.Recipe, res.To)
		return nil
	case o.newMinor != "":
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
	return nil
}

// syncReleaseSets rewrites, in the release set file, the versions written
// out for component (and, for kubernetes, for its binaries) equal to from
// into to (compat.SyncVersions). The default file may be absent.
func syncReleaseSets(cmd *cobra.Command, file, component, from, to string) (int, error) {
	data, err := yamlfile.ReadFile(file, 0)
	if errors.Is(err, fs.ErrNotExist) && !cmd.Flags().Changed("set") {
		return 0, nil
	}
	if err != nil {
		return 0, invalidInput(err, "name the release set file with --set")
	}
	match := func(c string) bool {
		return c == component || component == "kubernetes" && eol.ProductOf(c) == "kubernetes"
	}
	updated, n, err := compat.SyncVersions(file, data, match, from, to)
	if err != nil {
		return 0, invalidInput(fmt.Errorf("the recipe was bumped, but %s was not updated: %w", file, err), "fix the release set file, then set its versions by hand")
	}
	if n == 0 {
		return 0, nil
	}
	fi, err := os.Stat(file)
	if err != nil {
		return 0, err
	}
	return n, atomicfile.WriteFile(file, updated, fi.Mode().Perm())
}
