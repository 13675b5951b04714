package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/updeb/updeb/internal/track"
)

type outdatedOptions struct {
	trackFlags
	exitCode bool
}

func newOutdatedCmd(g *globalOptions) *cobra.Command {
	o := &outdatedOptions{}
	cmd := &cobra.Command{
		Use:   "outdated [RECIPE...]",
		Short: "Show which recipes have newer upstream releases or are out of support",
		Long: `outdated asks each recipe's watch (GitHub releases, or a URL listing) for newer
versions, through the configured proxy. A version counts only once every artifact the
recipe would fetch for it (sources, signatures, checksum files, every architecture)
exists; newer incomplete releases are listed as such, and after 20 of them the search
stops with a warning (a listing naming versions that do not exist costs no more). It shows the current version,
the newest in the recipe's track, the newest overall, and the support status of the
current version: from the support data in use (see 'updeb data'), or, from its day on,
the recipe's own end-of-life: mark (out of support, as plan and compat take it).
A recipe without a watch has nothing upstream to check: listed with the others, it
says so (and only its support status counts for --exit-code); named, it is an error.

GITHUB_TOKEN, when set, is sent to the GitHub API (higher rate limit), over https only
(or http to this machine).`,
		Example: `  updeb outdated
  updeb outdated helm runc --json
  updeb outdated --exit-code      # exit 1 when a recipe is behind its track or end-of-life`,
		RunE: func(cmd *cobra.Command, args []string) error { return runOutdated(cmd, g, o, args) },
	}
	o.trackFlags.add(cmd)
	cmd.Flags().BoolVar(&o.exitCode, "exit-code", false, "exit 1 when a recipe is outdated (newer in its track) or its version is end-of-life")
	return jsonOutput(cmd, 1)
}

func runOutdated(cmd *cobra.Command, g *globalOptions, o *outdatedOptions, args []string) error {
	s, err := g.openSession(cmd.Context(), args, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	rs := s.recipes
	opts, err := o.options(g, s.cfg, s.fetcher)
	if err != nil {
		return err
	}
	data, err := g.supportData(s.cfg, opts.Now())
	if err != nil {
		return err
	}
	var (
		rows   []*track.Status
		errs   []error
		failed []outdatedFailure
	)
	for _, r := range rs {
		// A signal ends the run between recipes, before a partial table.
		if err := cmd.Context().Err(); err != nil {
			return err
		}
		if r.Watch == nil && len(args) == 0 {
			// Watch is optional: listing every recipe, one without it
			// has nothing upstream to check (as in plan), and is not an
			// error; named, it is (it has no answer to give).
			rows = append(rows, track.Unwatched(r, data.Data, opts.Now()))
			continue
		}
		s, err := track.Outdated(cmd.Context(), r, data.Data, opts)
		if err != nil {
			errs = append(errs, err)
			failed = append(failed, outdatedFailure{r.Name, r.Path, err.Error()})
			continue
		}
		if s.Stopped != "" {
			g.warnf("%s: %s", r.Name, s.Stopped)
		}
		if s.Withdrawn != "" {
			g.warnf("%s", s.Withdrawn)
		}
		rows = append(rows, s)
	}
	out := cmd.OutOrStdout()
	if g.json {
		if rows == nil {
			rows = []*track.Status{}
		}
		if err := printJSON(out, cmd, struct {
			Recipes []*track.Status   `json:"recipes"`
			Failed  []outdatedFailure `json:"failed"`
		}{rows, failed}); err != nil {
			return err
		}
	} else if len(rows) > 0 {
		printOutdated(out, rows)
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if o.exitCode {
		var behind []string
		for _, s := range rows {
			if s.Outdated || s.OutOfSupport {
				behind = append(behind, s.Recipe)
			}
		}
		if len(behind) > 0 {
			return checkFailed(fmt.Errorf("%d recipe(s) outdated or out of support: %s", len(behind), strings.Join(behind, ", ")), "updeb bump RECIPE moves a recipe to the newest complete release in its track")
		}
	}
	return nil
}

// outdatedFailure is a recipe outdated could not check, in --json's
// "failed" (its error is on stderr too, and sets the exit code).
type outdatedFailure struct {
	Recipe string `json:"recipe"`
	File   string `json:"file"`
	Error  string `json:"error"`
}

func printOutdated(w io.Writer, rows []*track.Status) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RECIPE\tCURRENT\tTRACK\tNEWEST IN TRACK\tNEWEST\tSUPPORT\tNOTE")
	for _, s := range rows {
		tr, inTrack, latest := s.Track, s.InTrack.Version, s.Latest.Version
		if tr == "" {
			tr = "-"
		}
		var notes []string
		if s.NoWatch {
			inTrack, latest = "-", "-"
			notes = append(notes, "no watch: nothing upstream to check")
		}
		if s.Outdated {
			notes = append(notes, "outdated")
		}
		if s.OutOfSupport {
			notes = append(notes, "out of support")
		}
		for _, inc := range s.Incomplete {
			notes = append(notes, fmt.Sprintf("%s incomplete (%d missing)", inc.Version, len(inc.Missing)))
		}
		if s.Stopped != "" {
			notes = append(notes, "search stopped (see the warning)")
		}
		if s.Withdrawn != "" {
			notes = append(notes, "current release withdrawn upstream (see the warning)")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Recipe, s.Current, tr, inTrack, latest, s.Support.Text, strings.Join(notes, "; "))
	}
	tw.Flush()
}
