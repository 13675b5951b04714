package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/updeb/updeb/internal/cache"
	"github.com/updeb/updeb/internal/fetch"
	"github.com/updeb/updeb/pkg/plural"
)

func newCacheCmd(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cache",
		Short: "Maintain the download cache",
		Example: `  updeb cache gc --dry-run
  updeb cache gc --max-age 60`,
	}
	cmd.AddCommand(newCacheGCCmd(g))
	return cmd
}

// defaultCacheMaxAge is cache gc's --max-age, in days: a month of daily or
// weekly builds keeps every source they use, and a release no recipe names
// any more is gone a month later.
const defaultCacheMaxAge = 30

// maxCacheMaxAge bounds --max-age (a century): days as a time.Duration
// overflow past 106751, and a negative age would remove everything.
const maxCacheMaxAge = 36500

// cacheGCJSON is `updeb cache gc --json`.
type cacheGCJSON struct {
	Cache      string `json:"cache"`
	MaxAgeDays int    `json:"max_age_days"`
	*cache.GCResult
}

func newCacheGCCmd(g *globalOptions) *cobra.Command {
	var dryRun bool
	var maxAge int
	cmd := &cobra.Command{
		Use:   "gc [--max-age DAYS] [--dry-run]",
		Short: "Remove the downloads no run has used for a while",
		Long: `gc removes from the download cache (--cache) what no run wrote or read for --max-age
days: the index entries, then the downloads themselves (a download a kept index entry
names stays), and what interrupted runs left in its tmp folder (a partial download a day
old, for a resume until then). A build that finds a download in the cache marks it as
used, so a source built every day stays however old it is; the next run that needs a
removed one downloads it again. It is safe beside other updeb processes: a fetch running
meanwhile either finds its file or downloads it again, and a gc killed at any moment leaves
a cache every later run can use. Lock files stay. --dry-run lists what would go and
removes nothing. A folder that is no updeb cache (no sha256 and index folders in it) is
refused (exit 2): nothing is removed; one that does not exist holds nothing to remove.`,
		Example: `  updeb cache gc --dry-run
  updeb cache gc --config /etc/updeb/config.yaml --max-age 60 --quiet`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if maxAge < 1 || maxAge > maxCacheMaxAge {
				return usageErrorf("--max-age %d: want a whole number of days from 1 to %d (0 would remove what a running build has just fetched; to empty the cache, remove its folder while no updeb runs)", maxAge, maxCacheMaxAge)
			}
			cfg, err := g.loadConfig()
			if err != nil {
				return err
			}
			dir, err := g.cacheDirFor(cfg)
			if err != nil {
				return err
			}
			res, err := cache.GC(cmd.Context(), dir, cache.GCOptions{
				MaxAge: time.Duration(maxAge) * 24 * time.Hour, PartialAge: fetch.PartialMaxAge, DryRun: dryRun})
			switch {
			case errors.Is(err, cache.ErrNoCache):
				g.note("no cache at %s: nothing to remove", dir)
				res = &cache.GCResult{DryRun: dryRun, Files: []string{}}
			case errors.Is(err, cache.ErrNotCache):
				return invalidInput(err, "name the cache folder itself with --cache or cache: in the config")
			case err != nil:
				return err
			}
			out := cmd.OutOrStdout()
			if g.json {
				return printJSON(out, cmd, cacheGCJSON{Cache: dir, MaxAgeDays: maxAge, GCResult: res})
			}
			verb := "removed"
			if dryRun {
				verb = "would remove"
			}
			for _, f := range res.Files {
				fmt.Fprintf(out, "%s %s\n", verb, filepath.Join(dir, f))
			}
			_, err = fmt.Fprintf(out, "%s %s (%s) from %s\n", verb, plural.Count(len(res.Files), "file", "files"),
				plural.Count(res.Bytes, "byte", "bytes"), dir)
			return err
		},
	}
	cmd.Flags().IntVar(&maxAge, "max-age", defaultCacheMaxAge, "remove what no run wrote or read for this many days (1 to 36500)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "list what would be removed; remove nothing")
	return jsonOutput(cmd, 1)
}
