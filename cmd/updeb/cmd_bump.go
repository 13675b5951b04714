package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/updeb/updeb/internal/track"
)

type bumpOptions struct {
	trackFlags
	to   string
	date string
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
bytes are an alarm (exit 1), never an update.`,
		Example: `  updeb bump helm
  updeb bump runc --to 1.4.4 --date 2026-09-01
  updeb bump helm --to 3.18.4      # re-check the current pins against upstream`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runBump(cmd, g, o, args[0]) },
	}
	o.trackFlags.add(cmd)
	cmd.Flags().StringVar(&o.to, "to", "", "target upstream version (default: the newest complete release in the recipe's track)")
	cmd.Flags().StringVar(&o.date, "date", "", "release-date to write, YYYY-MM-DD (default: the GitHub release's publication day)")
	return jsonOutput(cmd, 1)
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
	res, err := track.Bump(cmd.Context(), r, bo)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if g.json {
		return printJSON(out, cmd, res)
	}
	if !res.Changed {
		fmt.Fprintf(out, "%s: already at %s; upstream's bytes match the pins\n", res.Recipe, res.To)
		return nil
	}
	fmt.Fprintf(out, "%s: %s -> %s (release-date %s), %s rewritten\n", res.Recipe, res.From, res.To, res.ReleaseDate, res.File)
	for _, v := range res.VerifiedBy {
		fmt.Fprintf(out, "  verified: %s\n", v)
	}
	return nil
}
